#!/usr/bin/env bash
# Runs the Trellis vs GRDB benchmarks (Benchmarks/, TrellisBench). Installs LMDB and SQLite's
# headers if missing. Arguments go to TrellisBench (--help lists them); with --smoke the
# benchmarks run in a debug build with tiny counts, as CI does, so they never rot.
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
swift build -c "$configuration" --product TrellisBench
"$(swift build -c "$configuration" --show-bin-path)/TrellisBench" "$@"
