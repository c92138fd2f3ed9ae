#!/usr/bin/env bash
# Trellis itself (the library, `trellis`, TrellisSync and `trellis-sync`) needs no system library:
# Swift 6.3 is all (its C code, BoringSSL, comes with swift-crypto). Nothing to install for it.
#
# With --tests: what the package's tests and benchmarks compare Trellis with, installed on a Debian
# machine if missing: LMDB and pkg-config (the differential and power-loss tests of TrellisStorage
# against LMDB, the LMDB-format files of earlier Trellis versions, the old LMDB engine's build with
# TRELLIS_STORAGE_ENGINE=lmdb, and StorageBench's peer). The sync tests' PostgreSQL is installed by
# Scripts/postgres.sh. And faketime (libfaketime): ClockSkewProcessTests run a sync client under a
# system clock an hour behind / ahead.
set -euo pipefail
[ "${1:-}" = "--tests" ] || exit 0
missing=()
pkg-config --exists lmdb 2>/dev/null || missing+=(liblmdb-dev pkg-config)
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
