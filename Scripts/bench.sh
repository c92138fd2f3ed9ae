#!/usr/bin/env bash
# Runs the Trellis vs GRDB benchmarks (Benchmarks/, TrellisBench). Installs SQLite's headers (GRDB)
# if missing, and LMDB for --storage or the LMDB build. Arguments go to TrellisBench (--help lists them); with --smoke the
# benchmarks run in a debug build with tiny counts, as CI does, so they never rot. With
# --instructions it prints instructions per operation under callgrind instead (installing
# valgrind if missing); --instructions --json prints them as one JSON object.
# With --storage it runs StorageBench instead: TrellisStorage vs LMDB on the same operations and
# durable commits vs GRDB (SQLite WAL, synchronous = FULL), peers interleaved, medians of rounds,
# then instructions per get under callgrind (docs/BENCHMARKS.md "Storage engine"); --storage
# --json prints one JSON object. Other arguments go to StorageBench (--help lists them).
# Trellis is built on TrellisStorage (the default, Benchmarks/.build); TRELLIS_STORAGE_ENGINE=lmdb runs
# them on the old LMDB engine (Benchmarks/.build-lmdb), for side-by-side figures.
# With --encrypted it runs W1, W2, W5 and W7 on a plain and on an encrypted file (issue 38) and prints
# both with the ratio (--json: one object; --instructions: instructions per operation of both).
# Only the TrellisStorage build encrypts, so --encrypted always builds and runs that one.
set -euo pipefail
cd "$(dirname "$0")/.."
# LMDB: StorageBench's peer (--storage) and the LMDB build of Trellis; Trellis itself needs none.
for argument in "$@"; do
    [ "$argument" = "--storage" ] && bash Scripts/install-deps.sh --tests
done
[ "${TRELLIS_STORAGE_ENGINE:-trellis}" = "lmdb" ] && bash Scripts/install-deps.sh --tests
if ! pkg-config --exists sqlite3 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev pkg-config >/dev/null
fi
cd Benchmarks
configuration=release
product=TrellisBench
arguments=()
for argument in "$@"; do
    [ "$argument" = "--smoke" ] && configuration=debug
    if [ "$argument" = "--storage" ]; then product=StorageBench; else arguments+=("$argument"); fi
    if [ "$argument" = "--encrypted" ] && [ "${TRELLIS_STORAGE_ENGINE:-trellis}" = "lmdb" ]; then
        echo "bench.sh: --encrypted runs on Trellis built on TrellisStorage (the default build, in" \
            "Benchmarks/.build): the LMDB build cannot encrypt files." >&2
        export TRELLIS_STORAGE_ENGINE=trellis
    fi
done
# --instructions (and --storage, for its instructions per get) count instructions with
# valgrind's callgrind (issue 18).
for argument in "$@"; do
    if { [ "$argument" = "--instructions" ] || [ "$argument" = "--storage" ]; } && ! command -v valgrind >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -qq
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
    fi
done
# TRELLIS_STORAGE_ENGINE=lmdb builds Trellis on LMDB (the root manifest reads it) in its own folder,
# Benchmarks/.build-lmdb, so that the default TrellisStorage build (Benchmarks/.build) stays built
# and the two compare side by side without rebuilding either.
scratch=()
[ "${TRELLIS_STORAGE_ENGINE:-trellis}" = "lmdb" ] && scratch=(--scratch-path .build-lmdb)
# C code (swift-crypto's BoringSSL, linked since TrellisStorage encrypts) gets DWARF 4 debug
# information: clang's default, DWARF 5, stops valgrind 3.19's debuginfo reader ("unhandled dwarf2
# abbrev form code 0x25 ... I can't recover"), so callgrind could not run the benchmarks at all.
c_flags=(-Xcc -gdwarf-4)
# Build output goes to stderr, so that --json prints nothing but the JSON.
swift build -c "$configuration" ${scratch[@]+"${scratch[@]}"} "${c_flags[@]}" --product "$product" >&2
"$(swift build -c "$configuration" ${scratch[@]+"${scratch[@]}"} "${c_flags[@]}" --show-bin-path)/$product" ${arguments[@]+"${arguments[@]}"}
