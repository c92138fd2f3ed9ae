#!/usr/bin/env bash
# Trellis Sync benchmark (docs/BENCHMARKS.md, "Sync"): starts a throwaway PostgreSQL on
# 127.0.0.1 (Scripts/postgres.sh: installed with apt-get if missing, run as an unprivileged
# user), builds trellis-sync and SyncBench in release, and runs SyncBench, which starts the
# server on loopback and measures upload and download throughput and commit -> notification
# latency. Arguments go to SyncBench (--help lists them). With --smoke: tiny sizes and the
# debug build (what CI runs, so the benchmark never rots).
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=release
for argument in "$@"; do [ "$argument" = "--smoke" ] && configuration=debug; done
for product in trellis-sync SyncBench; do
    swift build -c "$configuration" --product "$product" >&2
done
bin="$(swift build -c "$configuration" --show-bin-path)"

work="$(mktemp -d /tmp/trellis-bench-sync.XXXXXX)"
trap 'bash Scripts/postgres.sh stop "$work/pg" || true; rm -rf "$work"' EXIT
url="$(bash Scripts/postgres.sh start "$work/pg" | tail -1)"
"$bin/SyncBench" --postgres "$url" --server "$bin/trellis-sync" "$@"
