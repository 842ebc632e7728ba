"""The benchmark's S3 endpoints on loopback: one s3s-fs server on tmpfs, a TLS terminator
(stunnel) in front of it, and toxiproxy in front of both for the S3-like network profile.

    loopback, http   client -> s3s-fs
    loopback, https  client -> stunnel -> s3s-fs
    s3like,   http   client -> toxiproxy -> s3s-fs
    s3like,   https  client -> toxiproxy -> stunnel -> s3s-fs
    netbound, http / https: the same chains through a second pair of toxiproxy proxies

and the same four chains in front of moto (the project's test server, .venv) for the Spark
job: S3A's magic committer lists multipart uploads, which s3s-fs does not implement.

s3s-fs and moto are started (and stopped) by tests/support/local_s3.py, like every local S3
server of the project; stunnel and toxiproxy here.

Why these:
- s3s-fs (crates.io, Rust, stores objects as files) keeps up with several writers on
  loopback where moto (Python) would be the bottleneck; on tmpfs the disk is not one either.
  It verifies SigV4 signatures, signed payloads included.
- stunnel (Debian) terminates TLS per TCP connection, so each client connection stays one
  connection to the server and toxiproxy's per-connection limits apply to the TLS stream.
- toxiproxy (Go module) adds, per connection, LATENCY_MS to every response (so every
  request pays it once, as it pays S3's request latency) and caps each direction at
  RATE_KB_S (AWS's S3 performance guidelines plan 85-90 MB/s per connection: "make one
  concurrent request for each 85-90 MB/s of desired network throughput").
  The `netbound` profile (issue 13) keeps the latency and caps each connection at 9 MB/s,
  so that the network, not this 2-core machine's CPU, binds: 4 connections give 36 MB/s,
  16 give 144. The cap is per connection and direction: toxiproxy runs each toxic's Pipe
  once per connection and direction (ToxicCollection.StartLink makes a link per client
  connection), and the bandwidth toxic's pacing state lives in that call
  (toxics/bandwidth.go, v2.5.0); its rate is in KB/s of 1000 bytes.
"""

import concurrent.futures
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
import local_s3  # noqa: E402

LATENCY_MS = 30
RATE_KB_S = 85_000  # toxiproxy's unit is KB/s: 85 MB/s per connection and direction
NETBOUND_RATE_KB_S = 9_000  # 9 MB/s per connection and direction
# profile: (ms added to each response, KB/s per connection and direction)
PROFILES = {"s3like": (LATENCY_MS, RATE_KB_S), "netbound": (LATENCY_MS, NETBOUND_RATE_KB_S)}
ACCESS_KEY = "bench"
SECRET_KEY = "benchsecret"


def wait_port(port, proc, what, timeout=30):
    """Wait until `proc` (stunnel, toxiproxy) listens on 127.0.0.1:`port`; RuntimeError when it
    exits or does not within `timeout` seconds."""
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")



def jdk_cacerts():
    """The JDK's default truststore: <java.home>/lib/security/cacerts (password changeit)."""
    out = subprocess.run(["java", "-XshowSettings:properties", "-version"], check=True, capture_output=True,
                         text=True).stderr
    home = next(line.split("=", 1)[1].strip() for line in out.splitlines() if line.strip().startswith("java.home ="))
    return os.path.join(home, "lib", "security", "cacerts")

class Endpoints:
    """Starts the servers; `url(profile, tls)` gives the endpoint of one chain."""

    def __init__(self, tools, workdir, data_root, bucket):
        """`tools`: where toxiproxy-server is; `workdir`: logs, stunnel's configuration and
        the certificates; `data_root`: s3s-fs's objects (tmpfs), with `bucket` made there."""
        self.tools, self.workdir, self.data_root, self.bucket = tools, workdir, data_root, bucket
        self.servers = []  # local_s3.Server: s3s-fs, moto
        self.procs = []    # stunnel, toxiproxy
        self.urls = {}
        os.makedirs(workdir, exist_ok=True)

    def _spawn(self, name, cmd):
        log = open(os.path.join(self.workdir, name + ".log"), "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p

    def start(self, moto=False, s3s=True):
        """Start the servers and the chains; `moto`: moto too, with its own chains (see
        `url(..., server="moto")`); `s3s`: s3s-fs (False: moto alone, for the read benchmark
        where s3s-fs is not installed). Raises RuntimeError (local_s3.StartError for s3s-fs
        and moto) when one does not start; `stop` stops what did."""
        self.cert = self._certificate()
        shutil.rmtree(self.data_root, ignore_errors=True)
        os.makedirs(os.path.join(self.data_root, self.bucket))
        # Both at once: each start waits until its server answers (moto's imports take seconds).
        starts = []
        if s3s:
            starts.append(("s3s-fs", dict(data_dir=self.data_root, access_key=ACCESS_KEY, secret_key=SECRET_KEY)))
        if moto:
            starts.append(("moto", {}))
        with concurrent.futures.ThreadPoolExecutor(len(starts)) as pool:
            futures = [pool.submit(local_s3.start, kind, self.workdir, detach=True, **options)
                       for kind, options in starts]
        for f in futures:  # every one that started is stopped by `stop`, then the first error raised
            if f.exception() is None:
                self.servers.append(f.result())
        for f in futures:
            f.result()
        upstreams = {s.kind: s.port for s in self.servers}

        tls = {name: local_s3.free_port() for name in upstreams}
        conf = os.path.join(self.workdir, "stunnel.conf")
        with open(conf, "w") as f:
            f.write("foreground = yes\npid =\nsocket = l:TCP_NODELAY=1\nsocket = r:TCP_NODELAY=1\n")
            for name, port in upstreams.items():
                f.write(f"[{name}]\naccept = 127.0.0.1:{tls[name]}\nconnect = 127.0.0.1:{port}\n"
                        f"cert = {self.cert['pem']}\nkey = {self.cert['key']}\n")
        p = self._spawn("stunnel", [shutil.which("stunnel4") or shutil.which("stunnel") or "stunnel", conf])
        for port in tls.values():
            wait_port(port, p, "stunnel")

        api = local_s3.free_port()
        p = self._spawn("toxiproxy", [os.path.join(self.tools, "toxiproxy-server"), "-host", "127.0.0.1", "-port", str(api)])
        wait_port(api, p, "toxiproxy")
        self.api = f"http://127.0.0.1:{api}"
        for name, port in upstreams.items():
            self.urls.update({
                (name, "loopback", False): f"http://127.0.0.1:{port}",
                (name, "loopback", True): f"https://localhost:{tls[name]}",
            })
            for profile, (latency, rate) in PROFILES.items():
                slow_http = self._proxy(f"{name}-{profile}-http", port, latency, rate)
                slow_tls = self._proxy(f"{name}-{profile}-https", tls[name], latency, rate)
                self.urls.update({
                    (name, profile, False): f"http://127.0.0.1:{slow_http}",
                    (name, profile, True): f"https://localhost:{slow_tls}",
                })
        return self

    def _api(self, path, body):
        req = urllib.request.Request(self.api + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def _proxy(self, name, upstream, latency, rate):
        port = local_s3.free_port()
        self._api("/proxies", {"name": name, "listen": f"127.0.0.1:{port}", "upstream": f"127.0.0.1:{upstream}"})
        self._api(f"/proxies/{name}/toxics", {"name": "latency", "type": "latency", "stream": "downstream",
                                              "attributes": {"latency": latency, "jitter": 0}})
        for stream in ("upstream", "downstream"):
            self._api(f"/proxies/{name}/toxics", {"name": "bandwidth-" + stream, "type": "bandwidth",
                                                  "stream": stream, "attributes": {"rate": rate}})
        return port

    def _certificate(self):
        """A private CA and a certificate it signed for localhost and 127.0.0.1 (rustls
        refuses a self-signed certificate used as the server's own); the CA as PEM (for
        SSL_CERT_FILE) and as a Java truststore. The truststore also holds the JDK's own CAs:
        the JVMs the bench starts with it (JAVA_TOOL_OPTIONS) include Maven, which fetches the
        Spark jars from Maven Central on a fresh machine."""
        d = os.path.join(self.workdir, "tls")
        ca, ca_key, pem, key, store = (os.path.join(d, n) for n in
                                       ("ca.pem", "ca.key", "cert.pem", "key.pem", "truststore-jdk.p12"))
        if not os.path.exists(store):
            os.makedirs(d, exist_ok=True)
            ext = os.path.join(d, "leaf.ext")
            with open(ext, "w") as f:
                f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                        "extendedKeyUsage=serverAuth\n")
            for cmd in (
                ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=s3native bench CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                 "-keyout", ca_key, "-out", ca],
                ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", key,
                 "-out", pem + ".csr"],
                ["openssl", "x509", "-req", "-in", pem + ".csr", "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                 "-days", "30", "-extfile", ext, "-out", pem],
                ["keytool", "-importkeystore", "-noprompt", "-srckeystore", jdk_cacerts(), "-srcstorepass", "changeit",
                 "-destkeystore", store, "-deststoretype", "PKCS12", "-deststorepass", "changeit"],
                ["keytool", "-importcert", "-noprompt", "-alias", "s3native-bench-ca", "-file", ca,
                 "-keystore", store, "-storetype", "PKCS12", "-storepass", "changeit"],
            ):
                subprocess.run(cmd, check=True, capture_output=True)
        return {"ca": ca, "pem": pem, "key": key, "truststore": store, "password": "changeit"}

    def url(self, profile, tls, server="s3s-fs"):
        return self.urls[(server, profile, tls)]

    def clear(self):
        """Drop every object and upload: s3s-fs keeps them as plain files under its root. The
        server may still be finishing a request of a killed client, so retry until empty."""
        def remove(p):
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    os.remove(p)
                except FileNotFoundError:
                    pass

        for _ in range(50):
            left = [os.path.join(self.data_root, n) for n in os.listdir(self.data_root) if n != self.bucket]
            bucket = os.path.join(self.data_root, self.bucket)
            left += [os.path.join(bucket, n) for n in os.listdir(bucket)]
            if not left:
                return
            for p in left:
                remove(p)
            time.sleep(0.1)
        raise RuntimeError(f"could not empty {self.data_root}: {left[:3]}")

    def stop(self):
        """Stop every process started (toxiproxy and stunnel first) and remove s3s-fs's data."""
        for p in reversed(self.procs):
            local_s3.terminate(p)
        for s in reversed(self.servers):
            s.stop()
        shutil.rmtree(self.data_root, ignore_errors=True)
