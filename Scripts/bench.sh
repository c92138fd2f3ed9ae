#!/usr/bin/env bash
# Runs the Trellis vs GRDB benchmarks (Benchmarks/, TrellisBench). Installs LMDB and SQLite's
# headers if missing. Arguments go to TrellisBench (--help lists them); with --smoke the
# benchmarks run in a debug build with tiny counts, as CI does, so they never rot. With
# --instructions it prints instructions per operation under callgrind instead (installing
# valgrind if missing); --instructions --json prints them as one JSON object.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/install-deps.sh
if ! pkg-config --exists sqlite3 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev >/dev/null
fi
cd Benchmarks
configuration=release
for argument in "$@"; do [ "$argument" = "--smoke" ] && configuration=debug; done
# --instructions counts instructions with valgrind's callgrind (issue 18).
for argument in "$@"; do
    if [ "$argument" = "--instructions" ] && ! command -v valgrind >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -qq
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
    fi
done
# Build output goes to stderr, so that --json prints nothing but the JSON.
swift build -c "$configuration" --product TrellisBench >&2
"$(swift build -c "$configuration" --show-bin-path)/TrellisBench" "$@"
