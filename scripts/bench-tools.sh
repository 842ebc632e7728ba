#!/usr/bin/env bash
# Installs what the benchmark harness (benches/harness/run.py) runs besides this project:
#   stunnel      TLS terminator (Debian package stunnel4; apt-get, as root or through sudo)
#   openssl      makes the harness's private CA and server certificate (Debian package)
#   toxiproxy    S3-like latency and per-connection bandwidth (Go module, into target/tools/bin)
#   s3s-fs       the S3 server (crates.io, into target/tools/bin; `make` builds it)
#   matplotlib   charts (PyPI, into .venv with scripts/requirements-bench.txt)
# Each step is skipped when its tool is already there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/target/tools/bin"
TOXIPROXY_VERSION=v2.5.0
log() { echo "bench-tools: $*" >&2; }

apt_install() {
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || { log "need root or sudo to apt-get install $*"; exit 1; }
        sudo="sudo"
    fi
    log "apt-get install $*"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

missing=()
command -v stunnel4 >/dev/null || command -v stunnel >/dev/null || missing+=(stunnel4)
command -v openssl >/dev/null || missing+=(openssl)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

mkdir -p "$TOOLS"
if [ ! -x "$TOOLS/toxiproxy-server" ]; then
    log "go install toxiproxy $TOXIPROXY_VERSION"
    gobin="$ROOT/target/tools/go"
    GOBIN="$gobin" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
    mv "$gobin/server" "$TOOLS/toxiproxy-server"
fi

VENV="$ROOT/.venv"
STAMP="$VENV/requirements-bench.stamp"
if [ ! -f "$STAMP" ] || ! cmp -s "$STAMP" "$ROOT/scripts/requirements-bench.txt"; then
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    log "pip install -r scripts/requirements-bench.txt"
    "$VENV/bin/pip" install -q -r "$ROOT/scripts/requirements-bench.txt"
    cp "$ROOT/scripts/requirements-bench.txt" "$STAMP"
fi
