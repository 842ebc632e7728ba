#!/usr/bin/env python3
"""The project's local S3 servers, started one way for every user (standard library only,
so any Python 3 runs it; the servers themselves come from the project: moto from .venv/,
s3s-fs from target/tools/bin/).

Kinds (KINDS), each on a free port of 127.0.0.1, plain HTTP:
  moto        .venv/bin/moto_server (scripts/s3-server.sh install); accepts any credentials
  s3s-fs      target/tools/bin/s3s-fs (the Makefile builds it), objects as files under
              `data_dir` (each top-level directory is a bucket); checks SigV4 signatures
              against `access_key` / `secret_key`
  fault-proxy tests/support/fault_proxy.py in front of `upstream` (an http:// URL)
  imds        target/tools/bin/ec2-metadata-mock (the Makefile installs it with go install):
              EC2 instance metadata (IMDSv1/v2) serving role credentials IMDS_ACCESS_KEY
  container-credentials  tests/support/container_credentials.py: the ECS / EKS Pod Identity
              credentials endpoint, serving CONTAINER_ACCESS_KEY
  tls-front   tests/support/tls_front.py (run by .venv/'s Python): TLS with a throw-away
              private CA at https://127.0.0.2:443 (TLS_FRONT_HOST, or $S3NATIVE_TLS_FRONT_HOST;
              port 443 needs root or a low ip_unprivileged_port_start), forwarding to
              `upstream`; its CA, truststore and jdk.net.hosts.file in `cert_dir` (for the STS
              and private-CA tests)

As a library (spark/s3server.py, benches/harness/servers.py):

    server = local_s3.start("moto", log_dir)        # waits until it answers HTTP
    proxy = local_s3.start("fault-proxy", log_dir, upstream=server.url)
    ... server.url, server.access_key, ...
    proxy.stop(); server.stop()

As a command (scripts/s3-server.sh, the Makefile's bench-jvm), with its state (one server
and optionally the fault proxy in front of it) in a directory, so that `stop` can be
another process than `start`:

    local_s3.py start [--state DIR] [--kind moto|s3s-fs] [--fault-proxy] [--honour-env]
                      [--imds-if-installed] [--tls-front] [--data DIR --access-key KEY --secret-key KEY]
    local_s3.py stop [--state DIR]

`start` prints only `export NAME=VALUE` lines on stdout (see `exports`), everything else
goes to stderr, so `env=$(local_s3.py start ...) && eval "$env"` works; the servers it
starts do not hold that stdout open. It reuses the servers of the state directory that
still run with the same settings. Exit status 1 (the cause on stderr) when a server cannot
be started (when the proxy cannot, the server is stopped too); 2 on a usage error.
"""

import argparse
import dataclasses
import http.client
import json
import os
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MOTO = os.path.join(ROOT, ".venv", "bin", "moto_server")
S3S_FS = os.path.join(ROOT, "target", "tools", "bin", "s3s-fs")
FAULT_PROXY = os.path.join(ROOT, "tests", "support", "fault_proxy.py")
DEFAULT_STATE = os.path.join(ROOT, "target", "s3-server")
HOST = "127.0.0.1"
REGION = "us-east-1"
MOTO_KEY = "testing"  # moto takes any credentials: the dummies the tests export
START_TIMEOUT_S = 60  # bound on waiting for a server to answer
STOP_TIMEOUT_S = 10   # bound on waiting for a server to exit after SIGTERM, then SIGKILL


class StartError(RuntimeError):
    """A server could not be started: its program is missing or cannot be run, it exited,
    or it did not answer in time. The message says which; for the last two it ends with the
    tail of the server's log."""


@dataclasses.dataclass
class Server:
    """One server process started by `start`.

    kind, options: what `start` was given (options: the kind's keyword arguments).
    url: http://127.0.0.1:PORT. pid, argv: the process and its command line (argv tells
    it apart from a later process that got the same pid). log: its stdout and stderr.
    access_key, secret_key, region: credentials it accepts (None for the fault proxy,
    which forwards the client's signature untouched).
    process: the subprocess.Popen when this process started it, None when loaded from a
    state file.
    """

    kind: str
    options: dict
    url: str
    pid: int
    argv: list
    log: str
    access_key: str = None
    secret_key: str = None
    region: str = REGION
    process: subprocess.Popen = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def port(self):
        """The port of `url`."""
        return urllib.parse.urlsplit(self.url).port

    def running(self):
        """True while the process runs (not a zombie) with `argv` as its command line."""
        if self.process is not None:
            return self.process.poll() is None
        running = command_line(self.pid)
        argv = self.argv
        if argv and argv[0] == "env":
            # `env NAME=VALUE... program args` replaces itself with the program.
            argv = argv[1:]
            while argv and "=" in argv[0]:
                argv = argv[1:]
        # A script started through its #! line runs as [interpreter, script, args...].
        return running is not None and running[-len(argv):] == argv

    def stop(self, timeout=STOP_TIMEOUT_S):
        """SIGTERM, then SIGKILL after `timeout` seconds; returns when it is gone. Quiet
        when it has already exited; never signals a process that is not this server."""
        if self.process is not None:
            terminate(self.process, timeout)
            return
        for sig, wait_s in ((signal.SIGTERM, timeout), (signal.SIGKILL, timeout)):
            if not self.running():
                return
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait_s
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.1)

    def save(self, path):
        """Write this server's description (everything but `process`) to `path` as JSON."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "process"}
        with open(path + ".tmp", "w") as f:
            json.dump(fields, f, indent=1)
        os.replace(path + ".tmp", path)

    @classmethod
    def load(cls, path):
        """The server described in `path` (by `save`), or None when there is no such file
        or it cannot be read."""
        try:
            with open(path) as f:
                return cls(**json.load(f))
        except (OSError, ValueError, TypeError):
            return None


# ---- processes ---------------------------------------------------------------------------

def free_port():
    """A TCP port of 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def answers(url, timeout=2, cafile=None):
    """True when `url` answers an HTTP GET, whatever the status (https: trusting `cafile`
    alone). Never goes through the http_proxy of the environment."""
    u = urllib.parse.urlsplit(url)
    if u.scheme == "https":
        try:
            context = ssl.create_default_context(cafile=cafile)
        except OSError:
            return False  # not written yet
        conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", u.path or "/")
        conn.getresponse().read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def command_line(pid):
    """The argv of process `pid` as /proc shows it, or None when there is no such process
    or it is a zombie."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if not raw:
        return None  # a zombie
    return [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]]


def terminate(process, timeout=STOP_TIMEOUT_S):
    """Stop a child `process` (subprocess.Popen): SIGTERM, SIGKILL after `timeout` seconds,
    and reap it. Quiet when it has already exited."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()


def log_tail(path, lines=30):
    """The last `lines` lines of the file at `path`, or '' when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# ---- kinds ---------------------------------------------------------------------------------

def moto_command(port):
    """How to run moto on `port`: (argv, the path it answers at, (access key, secret key))."""
    if not os.access(MOTO, os.X_OK):
        raise StartError(f"no {MOTO}: run scripts/s3-server.sh install (or make server-install)")
    return [MOTO, "-H", HOST, "-p", str(port)], "/", (MOTO_KEY, MOTO_KEY)


def s3s_fs_command(port, data_dir, access_key, secret_key):
    """How to run s3s-fs on `port`, storing under `data_dir` (created when missing) and
    accepting `access_key` / `secret_key`: like `moto_command`."""
    if not os.access(S3S_FS, os.X_OK):
        raise StartError(f"no {S3S_FS}: run make {os.path.relpath(S3S_FS, ROOT)}")
    os.makedirs(data_dir, exist_ok=True)
    argv = [S3S_FS, "--host", HOST, "--port", str(port), "--access-key", access_key,
            "--secret-key", secret_key, os.path.abspath(data_dir)]
    return argv, "/", (access_key, secret_key)


def fault_proxy_command(port, upstream):
    """How to run the fault proxy on `port` in front of `upstream`, with the Python that runs
    this module: like `moto_command`, credentials (None, None)."""
    if not upstream.startswith("http://"):
        raise StartError(f"the fault proxy forwards to http:// only, not to {upstream}")
    argv = [sys.executable, FAULT_PROXY, "--upstream", upstream, "--port", str(port), "--host", HOST]
    return argv, "/__fault/rules", (None, None)


IMDS = os.path.join(ROOT, "target", "tools", "bin", "ec2-metadata-mock")
# The instance-profile credentials the IMDS emulator hands out (moto accepts any key pair).
IMDS_ACCESS_KEY = "AKIDFROMIMDS"


def imds_command(port, config_dir):
    """How to run the EC2 instance metadata emulator (amazon-ec2-metadata-mock, IMDSv1 and
    v2) on `port`, serving role credentials with access key id IMDS_ACCESS_KEY that expire
    in 6 hours; its config and HOME go to `config_dir`. Like `moto_command`, with the keys
    it serves."""
    if not os.access(IMDS, os.X_OK):
        raise StartError(f"no {IMDS}: run make {os.path.relpath(IMDS, ROOT)}")
    os.makedirs(config_dir, exist_ok=True)
    expiry = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 6 * 3600))
    secret = "imds-secret-key"
    config = {"metadata": {"values": {"iam-security-credentials": {
        "Code": "Success", "LastUpdated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "Type": "AWS-HMAC",
        "AccessKeyId": IMDS_ACCESS_KEY, "SecretAccessKey": secret, "Token": "imds-session-token", "Expiration": expiry}}}}
    path = os.path.join(config_dir, "imds-config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    argv = ["env", f"HOME={config_dir}", IMDS, "-n", HOST, "-p", str(port), "-c", path]
    return argv, "/latest/meta-data/", (IMDS_ACCESS_KEY, secret)


CONTAINER_CREDENTIALS = os.path.join(ROOT, "tests", "support", "container_credentials.py")
# The container credentials the endpoint hands out.
CONTAINER_ACCESS_KEY = "AKIDFROMCONTAINER"


def container_credentials_command(port):
    """How to run the container-credentials endpoint (tests/support/container_credentials.py)
    on `port`, serving access key id CONTAINER_ACCESS_KEY: like `moto_command`."""
    argv = [sys.executable, CONTAINER_CREDENTIALS, "--host", HOST, "--port", str(port), "--access-key", CONTAINER_ACCESS_KEY]
    return argv, "/credentials", (CONTAINER_ACCESS_KEY, "container-secret-key")


TLS_FRONT = os.path.join(ROOT, "tests", "support", "tls_front.py")
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
# A loopback address of its own, so that port 443 is free for it (S3NATIVE_TLS_FRONT_HOST
# picks another one, e.g. for a second state directory on the same machine).
TLS_FRONT_HOST = os.environ.get("S3NATIVE_TLS_FRONT_HOST", "127.0.0.2")
TLS_FRONT_PORT = 443           # where the AWS SDKs send STS requests (by the hosts file)


def tls_front_command(port, upstream, cert_dir):
    """How to run the TLS front (tests/support/tls_front.py) in front of `upstream`, its CA
    and truststore in `cert_dir`: like `moto_command`, credentials (None, None). It listens
    at TLS_FRONT_HOST:TLS_FRONT_PORT, not on `port`."""
    if not os.access(VENV_PYTHON, os.X_OK):
        raise StartError(f"no {VENV_PYTHON}: run scripts/s3-server.sh install (or make server-install)")
    argv = [VENV_PYTHON, TLS_FRONT, "--upstream", upstream, "--dir", cert_dir,
            "--host", TLS_FRONT_HOST, "--port", str(TLS_FRONT_PORT)]
    return argv, "/", (None, None)


KINDS = {"moto": moto_command, "s3s-fs": s3s_fs_command, "fault-proxy": fault_proxy_command, "imds": imds_command,
         "container-credentials": container_credentials_command, "tls-front": tls_front_command}


def start(kind, log_dir, *, detach=False, timeout=START_TIMEOUT_S, **options):
    """Start a server of `kind` (a key of KINDS; `options` are its keyword arguments) on a
    free port of 127.0.0.1, logging to <log_dir>/<kind>.log, and wait until it answers HTTP.

    detach: run it in a session of its own, so that a Ctrl-C of the terminal does not reach
    it (whoever started it stops it) and it may outlive this process.
    Returns the Server. Raises StartError (after stopping it) when it exits or does not
    answer within `timeout` seconds, or when its program is missing.
    """
    port = free_port()
    argv, probe, (access_key, secret_key) = KINDS[kind](port, **options)
    os.makedirs(log_dir, exist_ok=True)
    log = os.path.join(log_dir, kind + ".log")
    with open(log, "w") as out:
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=detach)
        except OSError as e:
            raise StartError(f"{kind} could not be run ({argv[0]}): {e}") from e
    url, cafile = f"http://{HOST}:{port}", None
    if kind == "tls-front":
        url, cafile = f"https://{TLS_FRONT_HOST}:{TLS_FRONT_PORT}", os.path.join(options["cert_dir"], "ca.pem")
    server = Server(kind, options, url, process.pid, argv, log, access_key, secret_key, REGION, process)
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if answers(server.url + probe, cafile=cafile):
            return server
        time.sleep(0.25)
    if process.poll() is None:
        terminate(process)
        why = f"did not answer at {server.url} within {timeout} s"
    else:
        why = f"exited with status {process.returncode} before answering at {server.url}"
    raise StartError(f"{kind} {why}; the tail of {log}:\n{log_tail(log)}")


# ---- the command: servers kept in a state directory ---------------------------------------

def say(message):
    print(f"local-s3: {message}", file=sys.stderr)


def state_file(state, role):
    """Where the state directory `state` describes its `role` ("server" or "proxy")."""
    return os.path.join(state, role + ".json")


def ensure(state, role, kind, **options):
    """The `role` server of `state`: the one recorded there when it still runs as `kind`
    with `options`, else a new one (stopping the recorded one first). For the "server"
    role, <state>/endpoint holds its URL alone (spark/tests/conftest.py reads it).
    Raises StartError."""
    path = state_file(state, role)
    old = Server.load(path)
    if old is not None and old.running():
        if (old.kind, old.options) == (kind, options):
            say(f"{kind} already running at {old.url} (pid {old.pid})")
            return old
        old.stop()
        say(f"stopped {old.kind} (pid {old.pid}): started with other settings")
    server = start(kind, state, detach=True, **options)
    server.save(path)
    if role == "server":
        with open(os.path.join(state, "endpoint"), "w") as f:
            f.write(server.url + "\n")
    log = os.path.relpath(server.log, ROOT) if server.log.startswith(ROOT + os.sep) else server.log
    say(f"{kind} running at {server.url} (pid {server.pid}, log {log})")
    return server


def stop_state(state):
    """Stop the servers recorded in `state` (the proxy first) and forget them."""
    for role in ("tls", "container", "imds", "proxy", "server"):
        path = state_file(state, role)
        server = Server.load(path)
        if server is not None and server.running():
            server.stop()
            say(f"stopped {server.kind} (pid {server.pid})")
        if os.path.exists(path):
            os.remove(path)
    if os.path.exists(os.path.join(state, "endpoint")):
        os.remove(os.path.join(state, "endpoint"))


def exports(server=None, proxy=None):
    """The environment of the tests for `server` and the fault `proxy` in front of it:
    S3NATIVE_TEST_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (when
    `server` is given) and S3NATIVE_TEST_FAULT_PROXY (when `proxy` is), as a dict."""
    env = {}
    if server is not None:
        env.update(S3NATIVE_TEST_ENDPOINT=server.url, AWS_ACCESS_KEY_ID=server.access_key,
                   AWS_SECRET_ACCESS_KEY=server.secret_key, AWS_REGION=server.region)
    if proxy is not None:
        env["S3NATIVE_TEST_FAULT_PROXY"] = proxy.url
    return env


def cmd_start(a):
    """Start (or reuse) the server, and the fault proxy with --fault-proxy; print their
    exports. With --honour-env, an S3NATIVE_TEST_ENDPOINT already set stands for the server
    (none is started, nothing of it exported, the proxy goes in front of it when it is
    http://) and an S3NATIVE_TEST_FAULT_PROXY already set for the proxy."""
    given = os.environ.get("S3NATIVE_TEST_ENDPOINT") if a.honour_env else None
    given_proxy = os.environ.get("S3NATIVE_TEST_FAULT_PROXY") if a.honour_env else None
    options = {}
    if a.kind == "s3s-fs":
        if not (a.data and a.access_key and a.secret_key):
            say("error: --kind s3s-fs needs --data, --access-key and --secret-key")
            return 2
        options = {"data_dir": os.path.abspath(a.data), "access_key": a.access_key, "secret_key": a.secret_key}
    os.makedirs(a.state, exist_ok=True)
    server = proxy = None
    try:
        if given:
            say(f"S3NATIVE_TEST_ENDPOINT is set ({given}): not starting {a.kind}")
        else:
            server = ensure(a.state, "server", a.kind, **options)
        upstream = given or server.url
        if a.fault_proxy and given_proxy:
            say("S3NATIVE_TEST_FAULT_PROXY is set: not starting the fault proxy")
        elif a.fault_proxy and not upstream.startswith("http://"):
            say(f"{upstream} is not http://: not starting the fault proxy (it forwards to http only)")
        elif a.fault_proxy:
            try:
                proxy = ensure(a.state, "proxy", "fault-proxy", upstream=upstream)
            except StartError:
                stop_state(a.state)
                raise
    except StartError as e:
        say(f"error: {e}")
        return 1
    env = exports(server, proxy)
    if a.imds_if_installed and os.access(IMDS, os.X_OK):
        try:
            imds = ensure(a.state, "imds", "imds", config_dir=os.path.join(a.state, "imds"))
        except StartError as e:
            say(f"error: {e}")
            return 1
        env.update(S3NATIVE_TEST_IMDS_ENDPOINT=imds.url, S3NATIVE_TEST_IMDS_ACCESS_KEY=imds.access_key)
        try:
            creds = ensure(a.state, "container", "container-credentials")
        except StartError as e:
            say(f"error: {e}")
            return 1
        env.update(S3NATIVE_TEST_CONTAINER_CREDENTIALS_URI=creds.url + "/credentials",
                   S3NATIVE_TEST_CONTAINER_ACCESS_KEY=creds.access_key)
    if a.tls_front and server is not None:
        cert_dir = os.path.join(a.state, "tls")
        try:
            front = ensure(a.state, "tls", "tls-front", upstream=server.url, cert_dir=cert_dir)
        except StartError as e:
            # Optional: it needs port 443 (root); the tests that need it say they were skipped.
            say(f"no TLS front: {e}")
        else:
            env.update(S3NATIVE_TEST_TLS_ENDPOINT=front.url,
                       S3NATIVE_TEST_TLS_CA=os.path.join(cert_dir, "ca.pem"),
                       S3NATIVE_TEST_TLS_HOSTS_FILE=os.path.join(cert_dir, "hosts"))
            if os.path.exists(os.path.join(cert_dir, "truststore.p12")):
                env.update(S3NATIVE_TEST_TLS_TRUSTSTORE=os.path.join(cert_dir, "truststore.p12"),
                           S3NATIVE_TEST_TLS_TRUSTSTORE_PASSWORD="s3native-test")
    for name, value in env.items():
        print(f"export {shlex.quote(f'{name}={value}')}")
    return 0


def cmd_stop(a):
    """Stop the servers of the state directory; quiet when none runs."""
    stop_state(a.state)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Start or stop the project's local S3 server "
                                 "(and the fault proxy in front of it).")
    sub = ap.add_subparsers(dest="command", required=True)
    for name, summary in (("start", "start the server (or reuse it) and print its exports"),
                          ("stop", "stop the servers of the state directory")):
        p = sub.add_parser(name, help=summary, description=summary)
        p.add_argument("--state", default=DEFAULT_STATE,
                       help="directory of pids, endpoints and logs (default: target/s3-server)")
    p = sub.choices["start"]
    p.add_argument("--kind", choices=("moto", "s3s-fs"), default="moto")
    p.add_argument("--imds-if-installed", action="store_true",
                   help="also start the instance metadata emulator when it is installed, and the "
                        "container-credentials endpoint; exports S3NATIVE_TEST_IMDS_ENDPOINT, "
                        "S3NATIVE_TEST_IMDS_ACCESS_KEY, S3NATIVE_TEST_CONTAINER_CREDENTIALS_URI and "
                        "S3NATIVE_TEST_CONTAINER_ACCESS_KEY")
    p.add_argument("--fault-proxy", action="store_true", help="the fault proxy in front of the server")
    p.add_argument("--tls-front", action="store_true",
                   help="also the TLS front (https://127.0.0.2:443, a private CA) in front of the server "
                        "it starts; exports S3NATIVE_TEST_TLS_ENDPOINT, _CA, _HOSTS_FILE, _TRUSTSTORE and "
                        "_TRUSTSTORE_PASSWORD (not started, with a note, when port 443 cannot be had)")
    p.add_argument("--honour-env", action="store_true",
                   help="use S3NATIVE_TEST_ENDPOINT / S3NATIVE_TEST_FAULT_PROXY when set instead of "
                        "starting that server")
    p.add_argument("--data", help="s3s-fs: the directory of its objects")
    p.add_argument("--access-key", help="s3s-fs: the access key it accepts")
    p.add_argument("--secret-key", help="s3s-fs: the secret key it accepts")
    a = ap.parse_args(argv)
    a.state = os.path.abspath(a.state)
    return {"start": cmd_start, "stop": cmd_stop}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
