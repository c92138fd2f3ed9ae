#!/usr/bin/env bash
# Issue 37's guard until the default engine flips: Trellis's core tests on the TrellisStorage
# build (TRELLIS_STORAGE_ENGINE=trellis, docs/ARCHITECTURE.md "Two engines under one storage
# layer"), in its own build folder (.build-ts) so the default LMDB build in .build is untouched.
#
# A representative subset, not the whole TrellisTests suite: the whole suite does not pass on
# TrellisStorage yet (tests that hold an old snapshot across thousands of commits never finish:
# the engine rewrites its whole free list at every commit, /work/notes/port37b.md). These suites
# passed on it: crashes and kills, damaged files, full disk, concurrency, the CLI, collections,
# links, imports, fuzz findings, the LMDB-format upgrade on open, file growth and size limit.
# About 5 minutes of tests after a second debug build of the package.
set -euo pipefail
cd "$(dirname "$0")/.."
export TRELLIS_STORAGE_ENGINE=trellis
suites=(
    CollectionAssignmentTests CollectionDiffTests CollectionMisuseTests ColumnQueryDifferentialTests
    ColumnStoreTests CommandLineTests CompactOnLaunchRaceTests ConcurrencyTests
    CountQueryTests CrashScenarioTests CrashTests CreateFromManagedObjectTests CustomPersistableObjectTests
    CustomPersistableTests DamagedCollectionCountTests DamagedFileFlipTests FreezeAndActorTests FullDiskTests
    FuzzRegressionTests GenericModelTests GeospatialTests GraphTests ImportDifferentialTests
    ImportSchemaEnforcementTests InitializerUnknownKeyTests KeyValueCodingSelfKeyTests LegacyDeclarationTests
    LegacyLinkingObjectsKeyPathTests LinkTargetReuseTests LinkTests LinkingObjectsTests
    ListRangeAssignmentTests ListTests FormatUpgradeTests MapGrowthTests
)
# ConcurrentEdgeTests is out until a race on this build is fixed: threads or processes creating
# one new file at once sometimes read it before it is whole ('is truncated: its last commit needs
# 12288 bytes but the file has 8192', 'it has no Trellis schema catalog'; 1 of 2 runs on e0cb6cb).
# The LMDB build runs it in Scripts/test.sh.
filter="TrellisTests\.($(IFS='|'; echo "${suites[*]}"))/"
swift build --build-tests --scratch-path .build-ts
swift test --skip-build --scratch-path .build-ts --filter "$filter"
# The engine's own tests of what the TrellisStorage build relies on (open, read-only, growth).
swift test --skip-build --scratch-path .build-ts --filter EnvironmentOpenTests
