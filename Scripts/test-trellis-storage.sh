#!/usr/bin/env bash
# Issue 37's guard until the default engine flips: Trellis's core tests on the TrellisStorage
# build (TRELLIS_STORAGE_ENGINE=trellis, docs/ARCHITECTURE.md "Two engines under one storage
# layer"), in its own build folder (.build-ts) so the default LMDB build in .build is untouched.
#
# The whole TrellisTests suite but ConcurrentEdgeTests (below): since the free list became a tree
# edited per commit (format 3, docs/STORAGE.md 2.9), the tests that hold an old snapshot across
# thousands of commits finish on TrellisStorage too. Measured: 927 s of tests at load ~25 (next to a release
# build), after a second debug build of the package in .build-ts (~10 minutes on a loaded machine).
set -euo pipefail
cd "$(dirname "$0")/.."
export TRELLIS_STORAGE_ENGINE=trellis
# ConcurrentEdgeTests is out until a race on this build is fixed: threads or processes creating
# one new file at once sometimes read it before it is whole ('is truncated: its last commit needs
# 12288 bytes but the file has 8192', 'it has no Trellis schema catalog'; 1 of 2 runs on e0cb6cb).
# The LMDB build runs it in Scripts/test.sh.
swift build --build-tests --scratch-path .build-ts
swift test --skip-build --scratch-path .build-ts --filter 'TrellisTests\.' --skip 'TrellisTests\.ConcurrentEdgeTests'
# The engine's own tests of what the TrellisStorage build relies on (open, read-only, growth).
swift test --skip-build --scratch-path .build-ts --filter EnvironmentOpenTests
