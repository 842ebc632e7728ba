#!/usr/bin/env bash
# Local S3 for the tests: moto's server plus the fault-injecting proxy
# (tests/support/fault_proxy.py) in front of it, both on 127.0.0.1.
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
PROXY_PY="$ROOT/tests/support/fault_proxy.py"
PYTHON="${PYTHON:-python3}"             # any Python 3; the proxy is stdlib only
START_TIMEOUT_S=60                      # bound on waiting for a server to answer

log() { echo "s3-server: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- helpers ----------------------------------------------------------------

# Print a TCP port on 127.0.0.1 that is free right now.
free_port() {
    "$PYTHON" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# True when URL answers HTTP at all (any status counts). No proxy env vars.
http_answers() {
    "$PYTHON" - "$1" <<'EOF' 2>/dev/null
import http.client, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=2)
conn.request("GET", url.path or "/")
conn.getresponse().read()
EOF
}

# pid_alive PIDFILE PATTERN: true when PIDFILE names a live process whose
# command line contains PATTERN (so a recycled pid is never taken for ours).
pid_alive() {
    local pidfile=$1 pattern=$2 pid
    [[ -f $pidfile ]] || return 1
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"
}

# stop_one NAME PIDFILE PATTERN: TERM the process (KILL after 10 s), then
# forget it. Quiet success when it is not running.
stop_one() {
    local name=$1 pidfile=$2 pattern=$3 pid i
    if pid_alive "$pidfile" "$pattern"; then
        pid=$(<"$pidfile")
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
        fi
        log "stopped $name (pid $pid)"
    fi
    rm -f "$pidfile"
}

# launch NAME PIDFILE ENDPOINTFILE LOGFILE URL PROBE_URL -- COMMAND...
# Start COMMAND in the background (stdin/stdout/stderr detached from ours, so
# `$(...)` around this script does not wait for it), record its pid and URL,
# and wait until PROBE_URL answers. On failure: kill it, show the log tail, exit.
launch() {
    local name=$1 pidfile=$2 endpointfile=$3 logfile=$4 url=$5 probe=$6 pid i
    shift 7
    "$@" </dev/null >"$logfile" 2>&1 &
    pid=$!
    echo "$pid" >"$pidfile"
    echo "$url" >"$endpointfile"
    for ((i = 0; i < START_TIMEOUT_S * 4; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            break
        fi
        if http_answers "$probe"; then
            log "$name running at $url (pid $pid, log ${logfile#"$ROOT"/})"
            return 0
        fi
        sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        log "$name did not answer at $url within ${START_TIMEOUT_S}s; log tail:"
    else
        log "$name exited before answering at $url; log tail:"
    fi
    rm -f "$pidfile" "$endpointfile"
    tail -n 30 "$logfile" >&2 || true
    return 1
}

# ---- subcommands ------------------------------------------------------------

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

start_moto() {
    local port
    if pid_alive "$STATE/pid" moto_server; then
        log "moto already running at $(<"$STATE/endpoint") (pid $(<"$STATE/pid"))"
        return 0
    fi
    [[ -x $VENV/bin/moto_server ]] || die "no $VENV/bin/moto_server: run '$0 install' first"
    port=$(free_port)
    launch moto "$STATE/pid" "$STATE/endpoint" "$STATE/moto.log" \
        "http://127.0.0.1:$port" "http://127.0.0.1:$port/" -- \
        "$VENV/bin/moto_server" -H 127.0.0.1 -p "$port"
}

# start_proxy UPSTREAM: (re)start the fault proxy unless it already runs
# in front of UPSTREAM.
start_proxy() {
    local upstream=$1 port
    if pid_alive "$STATE/proxy.pid" fault_proxy.py; then
        if [[ $(cat "$STATE/proxy-upstream" 2>/dev/null) == "$upstream" ]]; then
            log "fault proxy already running at $(<"$STATE/proxy-endpoint")"
            return 0
        fi
        stop_one "fault proxy" "$STATE/proxy.pid" fault_proxy.py
    fi
    port=$(free_port)
    echo "$upstream" >"$STATE/proxy-upstream"
    launch "fault proxy" "$STATE/proxy.pid" "$STATE/proxy-endpoint" \
        "$STATE/proxy.log" "http://127.0.0.1:$port" \
        "http://127.0.0.1:$port/__fault/rules" -- \
        "$PYTHON" "$PROXY_PY" --upstream "$upstream" --port "$port" --host 127.0.0.1
}

cmd_start() {
    local upstream exports=()
    mkdir -p "$STATE"
    if [[ -n ${S3NATIVE_TEST_ENDPOINT:-} ]]; then
        upstream=$S3NATIVE_TEST_ENDPOINT
        log "S3NATIVE_TEST_ENDPOINT is set ($upstream): not starting moto"
    else
        start_moto || exit 1
        upstream=$(<"$STATE/endpoint")
        exports+=("S3NATIVE_TEST_ENDPOINT=$upstream"
            "AWS_ACCESS_KEY_ID=testing" "AWS_SECRET_ACCESS_KEY=testing"
            "AWS_REGION=us-east-1")
    fi
    if [[ -n ${S3NATIVE_TEST_FAULT_PROXY:-} ]]; then
        log "S3NATIVE_TEST_FAULT_PROXY is set: not starting the fault proxy"
    elif [[ $upstream != http://* ]]; then
        log "$upstream is not http://: not starting the fault proxy (it forwards to http only)"
    else
        if ! start_proxy "$upstream"; then
            cmd_stop
            exit 1
        fi
        exports+=("S3NATIVE_TEST_FAULT_PROXY=$(<"$STATE/proxy-endpoint")")
    fi
    if ((${#exports[@]})); then
        printf 'export %q\n' "${exports[@]}"
    fi
}

cmd_stop() {
    stop_one "fault proxy" "$STATE/proxy.pid" fault_proxy.py
    stop_one moto "$STATE/pid" moto_server
    rm -f "$STATE/endpoint" "$STATE/proxy-endpoint" "$STATE/proxy-upstream"
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    *)
        echo "usage: $0 install|start|stop" >&2
        exit 2
        ;;
esac
