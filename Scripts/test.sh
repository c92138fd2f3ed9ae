#!/usr/bin/env bash
# Runs the test suite (Swift Testing), installing LMDB first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --build-tests
# The sync integration tests (Tests/TrellisSyncTests) use a throwaway PostgreSQL on 127.0.0.1,
# installed with apt-get if missing and run as an unprivileged user (Scripts/postgres.sh).
pgdir="$(mktemp -d /tmp/trellis-test-pg.XXXXXX)"
trap 'bash Scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
TRELLIS_SYNC_POSTGRES_URL="$(bash Scripts/postgres.sh start "$pgdir" | tail -1)"
export TRELLIS_SYNC_POSTGRES_URL
swift test --skip-build
# The Swift 6 concurrency sample must build with complete checking and run.
bash Scripts/concurrency-sample.sh
