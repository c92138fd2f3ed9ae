#!/usr/bin/env bash
# Trellis Sync end to end (docs/SYNC.md): starts PostgreSQL and the trellis-sync server, runs two
# clients of the seeds' Person/Dog models that edit offline and converge, stops everything.
# Ends with 'converged: N objects on both clients'; exits 0 only then.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d /tmp/trellis-sync-demo.XXXXXX)"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    bash Scripts/postgres.sh stop "$work/pg" || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "== building trellis-sync and the demo clients"
for product in trellis-sync TrellisSyncDemo; do
    swift build --product "$product" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
done
bin="$(swift build --show-bin-path)"

echo "== starting PostgreSQL (initdb as an unprivileged user, 127.0.0.1)"
url="$(bash Scripts/postgres.sh start "$work/pg" | tail -1)"
echo "   $url"

echo "== writing the App Services schema of Person and Dog"
"$bin/TrellisSyncDemo" schema "$work/schema.json"

echo "== starting trellis-sync"
"$bin/trellis-sync" --postgres "$url" --schema "$work/schema.json" --allow-all --auth anonymous --port 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 1 300); do
    if grep -q "listening on" "$work/server.out" 2>/dev/null; then break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.err"; exit 1; fi
    sleep 0.1
done
address="$(grep -o 'listening on .*' "$work/server.out" | awk '{print $3}')"
[[ -n "$address" ]] || { echo "trellis-sync did not start"; cat "$work/server.err"; exit 1; }
echo "   $address"

echo "== two clients"
"$bin/TrellisSyncDemo" run "http://$address" "$work/clients" | tee "$work/demo.out"
converged="$(tail -1 "$work/demo.out")"
[[ "$converged" =~ ^converged:\ [0-9]+\ objects\ on\ both\ clients$ ]] || exit 1
echo "== PostgreSQL holds the same documents (one table per class, jsonb)"
psql "$url" -At -c 'SELECT doc->>'"'"'name'"'"' FROM "Person" ORDER BY 1' | sed 's/^/   Person: /'
psql "$url" -At -c 'SELECT doc->>'"'"'name'"'"' FROM "Dog" ORDER BY 1' | sed 's/^/   Dog: /'
echo "== stopping the server and PostgreSQL"
trap - EXIT
cleanup
echo "$converged"
