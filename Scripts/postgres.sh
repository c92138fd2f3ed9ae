#!/usr/bin/env bash
# A throwaway PostgreSQL for the sync tests and demo (docs/SYNC.md, "Running the tests").
#
#   Scripts/postgres.sh start DIR   installs PostgreSQL with apt-get if missing, runs initdb in DIR/data
#                                   as an unprivileged user (PostgreSQL refuses to run as root: as root
#                                   it uses the user 'trellis', created if missing), starts the server on
#                                   127.0.0.1 on a free port, and prints its URL (also in DIR/url).
#   Scripts/postgres.sh start DIR --ssl   the same with TLS on (ssl=on): a self-signed certificate for
#                                   127.0.0.1 is made in DIR/server.crt (the CA to trust: DIR/server.crt)
#   Scripts/postgres.sh stop DIR    stops that server (DIR stays; remove it yourself).
set -euo pipefail

command="${1:-}"
dir="${2:-}"
ssl="${3:-}"
if [[ -z "$command" || -z "$dir" ]]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi

pg_bin() {
    local bin
    bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
    if [[ -z "$bin" ]] && command -v pg_config >/dev/null; then bin="$(pg_config --bindir)"; fi
    echo "$bin"
}

# Runs a command as the unprivileged owner of the cluster.
as_owner() {
    if [[ "$(id -u)" == "0" ]]; then
        runuser -u trellis -- "$@"
    else
        "$@"
    fi
}

case "$command" in
start)
    bin="$(pg_bin)"
    if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
        if [[ "$(id -u)" != "0" ]]; then
            echo "postgres.sh: PostgreSQL is not installed; run as root to install it with apt-get" >&2
            exit 1
        fi
        echo "postgres.sh: installing PostgreSQL with apt-get" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-client >&2
        bin="$(pg_bin)"
    fi
    if [[ "$(id -u)" == "0" ]] && ! id trellis >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin trellis
    fi
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    chmod 755 "$dir"
    # The path down to DIR must be traversable by the owner.
    if [[ "$(id -u)" == "0" ]]; then
        parent="$dir"
        while [[ "$parent" != "/" ]]; do
            parent="$(dirname "$parent")"
            chmod o+x "$parent" 2>/dev/null || true
        done
        chown trellis "$dir"
    fi
    ssl_options=""
    if [[ "$ssl" == "--ssl" ]]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
            -addext "subjectAltName=IP:127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1
        chmod 600 "$dir/server.key"
        chmod 644 "$dir/server.crt"
        if [[ "$(id -u)" == "0" ]]; then chown trellis "$dir/server.key" "$dir/server.crt"; fi
        ssl_options="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
    fi
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 $ssl_options" \
        start >"$dir/pg_ctl.log" 2>&1 </dev/null || {
        cat "$dir/pg_ctl.log" "$dir/server.log" >&2
        exit 1
    }
    url="postgres://postgres@127.0.0.1:$port/postgres"
    echo "$url" >"$dir/url"
    echo "$url"
    ;;
stop)
    bin="$(pg_bin)"
    if [[ -d "$dir/data" ]]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
