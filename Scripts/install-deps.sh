#!/usr/bin/env bash
# Installs what Trellis needs on a fresh Debian machine (LMDB and pkg-config), if missing.
set -euo pipefail
if ! pkg-config --exists lmdb 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblmdb-dev pkg-config >/dev/null
fi
