#!/usr/bin/env bash
# Runs docs/SYNC.md's "Running the server" block exactly as written (the sh block after the
# `<!-- sync-walkthrough` marker), from the repository's folder: build, `trellis schema export`,
# rules, PostgreSQL, `trellis-sync --schema atlas/ --rules rules.json --auth anonymous`, an
# anonymous login. Exits 0 only if every line succeeds; cleans up what the block started.
set -euo pipefail
cd "$(dirname "$0")/.."
block="$(awk '/<!-- sync-walkthrough/ { marked = 1; next }
              marked && /^```sh$/ { inside = 1; next }
              inside && /^```$/ { exit }
              inside { print }' docs/SYNC.md)"
[ -n "$block" ] || { echo "sync walkthrough: no marked sh block in docs/SYNC.md" >&2; exit 1; }
[ ! -e sync-app ] || { echo "sync walkthrough: ./sync-app exists; move it away first" >&2; exit 1; }
cleanup() {
    # The PostgreSQL the block started, if it failed before stopping it (its server is one of
    # the block's jobs, killed when the block's shell exits).
    if [ -d sync-app/pg ]; then bash Scripts/postgres.sh stop "$PWD/sync-app/pg" >/dev/null 2>&1 || true; fi
    rm -rf sync-app
}
trap cleanup EXIT
output="$(timeout 900 bash -euo pipefail -c "trap 'kill \$(jobs -p) 2>/dev/null || true' EXIT
$block" 2>&1)" || {
    echo "$output" >&2
    echo "sync walkthrough: the block in docs/SYNC.md failed" >&2
    exit 1
}
echo "$output" | grep -q "trellis-sync is serving; an anonymous user logged in" || {
    echo "$output" >&2
    echo "sync walkthrough: the server did not answer the login" >&2
    exit 1
}
echo "sync walkthrough: docs/SYNC.md's server setup ran as written ($(echo "$block" | grep -cv '^\s*#') lines)"
