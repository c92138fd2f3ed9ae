#!/usr/bin/env bash
# Runs the test suite (Swift Testing) on the default build, Trellis on TrellisStorage: the core
# suite and the CLI's tests, TrellisStorage's own (differential and power-loss tests against LMDB
# included) and the sync tests (encrypted synced Realms included). Trellis needs no system library;
# the tests install LMDB (the differential tests' peer, files of earlier versions) if missing.
# The old LMDB engine's build is tested by Scripts/test-lmdb.sh (CI runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/install-deps.sh --tests
swift build --build-tests
# The sync integration tests (Tests/TrellisSyncTests) use a throwaway PostgreSQL on 127.0.0.1,
# installed with apt-get if missing and run as an unprivileged user (Scripts/postgres.sh).
pgdir="$(mktemp -d /tmp/trellis-test-pg.XXXXXX)"
trap 'bash Scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
TRELLIS_SYNC_POSTGRES_URL="$(bash Scripts/postgres.sh start "$pgdir" | tail -1)"
export TRELLIS_SYNC_POSTGRES_URL
# Swift Testing runs tests on the cooperative pool, one thread per core (two here): the storage
# engine's long CPU-bound tests (1,000,000 differential operations, power-loss images, kills)
# hold those threads, and the sync tests then miss their network timeouts. So the sync tests,
# the rest, and the storage engine's tests run one after another.
swift test --skip-build --filter TrellisSyncTests
# One user's worst uploads against another's latency: a measurement, so it runs alone (~40 s).
TRELLIS_ISOLATION_TEST=1 TRELLIS_ISOLATION_REPORT=1 swift test --skip-build --filter UploadIsolationTests
swift test --skip-build --skip TrellisSyncTests --skip TrellisStorageTests
swift test --skip-build --filter TrellisStorageTests
# The Swift 6 concurrency sample must build with complete checking and run.
bash Scripts/concurrency-sample.sh
