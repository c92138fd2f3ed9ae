#!/usr/bin/env bash
# The full crash test: a writer process killed with SIGKILL 250 times (CI runs 40).
#   bash Scripts/crash-test.sh [KILLS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/install-deps.sh
export TRELLIS_CRASH_KILLS="${1:-250}"
[ -n "${2:-}" ] && export TRELLIS_CRASH_SEED="$2"
swift build --build-tests
swift test --skip-build --filter CrashTests 2>&1 | grep -E "crash test:|passed|failed|error|Expectation" 
