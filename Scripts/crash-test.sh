#!/usr/bin/env bash
# The crash test at scale (CI runs a small count of each):
#   ROUNDS writer rounds, each killing a writer and a reader with SIGKILL (default 400: 800 kills),
#   SCENARIO kills each during a migration, a writeCopy and an Extended JSON import (default 60),
#   READERS readers killed holding snapshots while the data is rewritten (default 100).
#   bash Scripts/crash-test.sh [ROUNDS] [SEED] [SCENARIO] [READERS]
# On the default build (Trellis on TrellisStorage) CrashTests also runs ROUNDS rounds on an encrypted
# file (encryptionKey, issue 38); TRELLIS_STORAGE_ENGINE=lmdb runs them on the old LMDB engine (in
# .build-lmdb).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/install-deps.sh --tests
export TRELLIS_CRASH_KILLS="${1:-400}"
[ -n "${2:-}" ] && export TRELLIS_CRASH_SEED="$2"
export TRELLIS_CRASH_SCENARIO_KILLS="${3:-60}"
export TRELLIS_CRASH_READER_KILLS="${4:-100}"
scratch=()
[ "${TRELLIS_STORAGE_ENGINE:-trellis}" = "lmdb" ] && scratch=(--scratch-path .build-lmdb)
swift build --build-tests ${scratch[@]+"${scratch[@]}"}
swift test --skip-build ${scratch[@]+"${scratch[@]}"} --filter "CrashTests|CrashScenarioTests|DeadReaderTests" 2>&1 \
    | grep -E "crash test:|passed|failed|error|Expectation"
