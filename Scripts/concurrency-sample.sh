#!/usr/bin/env bash
# Builds the Swift 6 concurrency sample (complete checking, warnings as errors) and runs it.
set -euo pipefail
cd "$(dirname "$0")/../Examples/ConcurrencySample"
swift build
swift run --skip-build ConcurrencySample
