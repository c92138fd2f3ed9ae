#!/usr/bin/env bash
# The old storage engine keeps working (issue 37): Trellis built on LMDB
# (TRELLIS_STORAGE_ENGINE=lmdb, docs/ARCHITECTURE.md "Two engines under one storage layer"), in its
# own build folder (.build-lmdb) so the default TrellisStorage build in .build is untouched.
#
# Runs the whole core suite (TrellisTests, the CLI's tests included) on that build: the Realm API's
# tests, and the LMDB build's own (in-place leaf-page reads, root indexes, write cursors, the
# database limit, files of every format converted tree for tree against liblmdb's view). Not run
# here: TrellisStorageTests (TrellisStorage is the same code in both builds; Scripts/test.sh runs
# them, the differential and power-loss tests against LMDB included) and the sync tests (run on the
# default build). Measured: 840 core tests in 73 s (cached CI run), after a second debug build of
# the package (~10 minutes on a loaded machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/install-deps.sh --tests
export TRELLIS_STORAGE_ENGINE=lmdb
swift build --build-tests --scratch-path .build-lmdb
swift test --skip-build --scratch-path .build-lmdb --filter 'TrellisTests\.'
