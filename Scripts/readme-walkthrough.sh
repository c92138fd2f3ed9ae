#!/usr/bin/env bash
# Runs the README's command-line walkthrough exactly as written: every line starting with
# `$ swift run trellis`, in order, in a new empty folder, with the built `trellis`. A line that
# says `# exit code N` must exit with N; every other line with 0.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product trellis >/dev/null
bin="$(swift build --show-bin-path)/trellis"
folder="$(mktemp -d)"
trap 'rm -rf "$folder"' EXIT
count=0
while IFS= read -r line; do
    command="${line#\$ swift run trellis }"
    command="${command%%#*}"
    expected=0
    if [[ "$line" =~ \#\ exit\ code\ ([0-9]+) ]]; then expected="${BASH_REMATCH[1]}"; fi
    set +e
    (cd "$folder" && eval "\"$bin\" $command" >/dev/null 2>&1)
    status=$?
    set -e
    if [ "$status" -ne "$expected" ]; then
        echo "README walkthrough: 'trellis $command' exited $status, expected $expected" >&2
        exit 1
    fi
    count=$((count + 1))
done < <(grep -E '^\$ swift run trellis ' README.md)
echo "README walkthrough: $count commands ran as written"
