#!/usr/bin/env bash
# Runs the demo: the seeds' Person/Dog models written, reopened and printed.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift run -c release trellis demo "$@"
