#!/usr/bin/env bash
# Runs the test suite (Swift Testing), installing LMDB first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --build-tests
swift test --skip-build
# The Swift 6 concurrency sample must build with complete checking and run.
bash Scripts/concurrency-sample.sh
