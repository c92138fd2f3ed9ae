#!/usr/bin/env bash
# Runs the demo: the seeds' Person/Dog models written, reopened and printed (in a new temporary
# folder; pass --dir FOLDER to keep the files somewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
# Nothing to install: Trellis needs no system library (Scripts/install-deps.sh).
if [[ " $* " == *" --dir "* ]]; then
    swift run -c release trellis demo "$@"
else
    swift run -c release trellis demo --dir "$(mktemp -d)" "$@"
fi
