#!/usr/bin/env bash
# Local S3 for the tests: moto's server plus the fault-injecting proxy
# (tests/support/fault_proxy.py) in front of it, both on 127.0.0.1, started by
# tests/support/local_s3.py (the one starter of the project's local S3 servers).
#
#   scripts/s3-server.sh install   # .venv/ with scripts/requirements-test.txt
#   eval "$(scripts/s3-server.sh start)"
#   ... run the tests ...
#   scripts/s3-server.sh stop
#
# `start` prints only `export NAME=VALUE` lines on stdout (everything else goes
# to stderr), so its output can be eval'ed. `eval "$(...)"` hides a failed
# start; in a Makefile or script prefer
#   env=$(scripts/s3-server.sh start) && eval "$env"
# The exports:
#   S3NATIVE_TEST_ENDPOINT     moto's URL, http://127.0.0.1:PORT
#   S3NATIVE_TEST_FAULT_PROXY  the fault proxy's URL, forwarding to the endpoint
#   S3NATIVE_TEST_IMDS_ENDPOINT, S3NATIVE_TEST_IMDS_ACCESS_KEY  the EC2 instance metadata emulator
#                              and the key id it hands out, when target/tools/bin/ec2-metadata-mock
#                              is installed (make test installs it)
#   S3NATIVE_TEST_CONTAINER_CREDENTIALS_URI, S3NATIVE_TEST_CONTAINER_ACCESS_KEY  the container
#                              credentials endpoint (ECS, EKS Pod Identity) and its key id
#   S3NATIVE_TEST_TLS_ENDPOINT, _TLS_CA, _TLS_TRUSTSTORE, _TLS_TRUSTSTORE_PASSWORD, _TLS_HOSTS_FILE
#                              the TLS front (https://127.0.0.2:443, a throw-away private CA) in
#                              front of moto, for STS from the JVM and private-CA tests; only
#                              when port 443 can be had (root)
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION  (dummies moto accepts)
#
# With S3NATIVE_TEST_ENDPOINT already set (real S3, MinIO, ...), `start` leaves
# that endpoint and its credentials alone and starts only the fault proxy in
# front of it (when it is an http:// URL), printing only its export.
# With S3NATIVE_TEST_FAULT_PROXY already set, no proxy is started either.
# `start` reuses servers that are still running from an earlier `start`.
#
# State (pids, endpoints, logs) lives in target/s3-server/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
REQUIREMENTS="$ROOT/scripts/requirements-test.txt"
STAMP="$VENV/requirements-test.stamp"   # copy of the requirements last installed
STATE="$ROOT/target/s3-server"
LOCAL_S3="$ROOT/tests/support/local_s3.py"
PYTHON="${PYTHON:-python3}"             # any Python 3; local_s3.py and the proxy are stdlib only

log() { echo "s3-server: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- install: the venv that local_s3.py runs moto from ------------------

cmd_install() {
    if [[ ! -x $VENV/bin/python ]]; then
        log "creating $VENV"
        "$PYTHON" -m venv "$VENV" ||
            die "'$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)"
    fi
    if [[ -f $STAMP ]] && cmp -s "$REQUIREMENTS" "$STAMP"; then
        log "$VENV is up to date with ${REQUIREMENTS#"$ROOT"/}"
        return 0
    fi
    log "installing ${REQUIREMENTS#"$ROOT"/} into $VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q \
        -r "$REQUIREMENTS" >&2
    cp "$REQUIREMENTS" "$STAMP"
}

case "${1:-}" in
    install) cmd_install ;;
    start) exec "$PYTHON" "$LOCAL_S3" start --state "$STATE" --kind moto --fault-proxy --honour-env --imds-if-installed --tls-front ;;
    stop) exec "$PYTHON" "$LOCAL_S3" stop --state "$STATE" ;;
    *)
        echo "usage: $0 install|start|stop" >&2
        exit 2
        ;;
esac
