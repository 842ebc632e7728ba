"""The read benchmark (issue 14), two cells measured side by side in one run:

iceberg: the replicated Iceberg single-reader benchmark (shared/reference/read-path.md, "Why"):
one Iceberg reader reads one month (one uncompressed Parquet file of 180,000 rows: a timestamp,
a key and n doubles, n = 50, 100, 200, 300) of a monthly-partitioned table, with Iceberg's row
reader (IcebergGenerics) and its Arrow reader (VectorizedTableScanIterable), through each
variant, interleaved round by round:

    S3A classic     stock S3A (Hadoop 3.4.3), fs.s3a.input.stream.type=classic (3.4.3's default is analytics)
    S3A analytics   stock S3A, fs.s3a.input.stream.type=analytics (AWS's AAL 1.3.1)
    s3native        NativeS3AFileSystem reading natively (fs.s3a.native.fallback=fail; the
                    worker fails unless its read statistics show the file was read natively)
    ceiling         the seed's ceiling (its InMemoryLoadingFileSystem): the same reader over the
                    whole object fetched into memory with one GET at open (S3A classic;
                    benches/iceberg InMemoryLoadingFileSystem; the worker fails unless it loaded the file)
    local disk      the same table written to file:// (the page cache holds it)

spark: TPC-H Q1 and Q6 over lineitem (spark/make_data.py, the demo's input: tpchgen-cli Parquet,
SF1) on Spark 4.3 (Hadoop 3.5.0: the newest line, whose S3A has the analytics stream) through
stock S3A classic, S3A analytics and NativeS3AFileSystem (fallback=fail, its read statistics
checked), a fresh spark-submit per variant and round; results compared across variants (SparkCell).

    python benches/harness/read_bench.py                    # both cells, full scale (make bench-read)
    python benches/harness/read_bench.py --smoke            # Iceberg n=50, 30,000 rows; Spark SF0.1; one round
    python benches/harness/read_bench.py --spark [--smoke]  # the Spark cell only (smoke: under 2 minutes)

The S3 variants go through servers.py's s3like profile (toxiproxy: +30 ms on every response,
85 MB/s per connection and direction), TLS (stunnel), in front of s3s-fs (Rust, on tmpfs; it
lacks ListMultipartUploads, which reads do not need) or, with --server moto, moto (Python,
~10 MiB/s per stream: it bounds every S3 variant). Each Iceberg table is written once per n,
through stock S3A straight to the server (no toxiproxy), and once to local disk; the Spark
cell's lineitem is uploaded (one PUT a file, no toxiproxy) as one copy per measured query plus
one for the warm-up.

Every measured Iceberg read is a fresh JVM (benches/iceberg, IcebergReadBench): it loads the
table, reads month 0 once with each reader (JIT, connections, TLS sessions), then month 1 with
the row reader and month 2 with the Arrow reader (a file of its own each: S3A's analytics
stream keeps what it fetched for later streams of the same object), timed from planning to the
last row. Figures per read: MiB/s of the data file, GETs per file (the larger of
stream_read_opened and action_http_get_request of the filesystem's IOStatistics, planning's
own GETs taken out), bytes fetched per byte of the file (stream_read_total_bytes; S3A's
analytics stream counts only part of what it fetches, so its figure is low), CPU s/GiB (the
JVM's process CPU over the read).

Results: <out>/<date>-read[-<cells>].json (every read) and .md: per reader and n, the median
over rounds of MiB/s (min..max), the medians of per-round ratios to stock classic, the ceiling
and local disk, and the goals of issue 14; the Spark table (wall, CPU, GETs, bytes fetched and
their ratios). The exit status is 1 when any read failed.

Full scale on this 2-core machine: the Iceberg cell (4 n x 5 variants x 3 rounds) about 80
minutes through moto, as the smoke run estimates from its own speeds (the last line of its
report); the Spark cell (SF1, 3 variants x 3 rounds) about 10 minutes.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402
import servers  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIB = 1 << 20
GIB = 1 << 30
BUCKET = "bench"
MONTHS = 3  # month 0: the warm-up reads; month 1: the row reader's measured read; month 2: the Arrow reader's
READERS = ("rows", "arrow")
READER_NAMES = {"rows": "row reader (IcebergGenerics)", "arrow": "Arrow reader (VectorizedTableScanIterable)"}
NATIVE_FS = "io.s3native.hadoop.NativeS3AFileSystem"
STOCK_FS = "org.apache.hadoop.fs.s3a.S3AFileSystem"
CEILING_FS = "io.s3native.bench.iceberg.InMemoryLoadingFileSystem"

# name, where (s3 | local), Hadoop settings
VARIANTS = [
    ("S3A classic", "s3", {"fs.s3a.input.stream.type": "classic"}),
    ("S3A analytics", "s3", {"fs.s3a.input.stream.type": "analytics"}),
    ("s3native", "s3", {"fs.s3a.impl": NATIVE_FS, "fs.s3a.native.fallback": "fail"}),
    # The seed's ceiling (its InMemoryLoadingFileSystem): the same reader over the whole object,
    # fetched into memory with one GET (S3A classic, sequential) at open.
    ("ceiling (whole object, one GET)", "s3", {"fs.s3a.impl": CEILING_FS, "fs.s3a.input.stream.type": "classic"}),
    ("local disk", "local", {}),
]
REFERENCE, CEILING, LOCAL = "S3A classic", "ceiling (whole object, one GET)", "local disk"
ANALYTICS, NATIVE = "S3A analytics", "s3native"

# The Spark cell: TPC-H Q1 and Q6 over lineitem (tpchgen-cli, the demo's input: spark/make_data.py)
# on the newest Spark line, whose Hadoop (3.5.0) has S3A's analytics stream (AAL 1.3.1, its
# default stream type). name, fs.s3a.impl, Spark settings.
SPARK_LINE = "4.3"
SPARK_QUERIES = ("q1", "q6")
SPARK_VARIANTS = [
    ("S3A classic", STOCK_FS, {"spark.hadoop.fs.s3a.input.stream.type": "classic"}),
    ("S3A analytics", STOCK_FS, {"spark.hadoop.fs.s3a.input.stream.type": "analytics"}),
    ("s3native", NATIVE_FS, {"spark.hadoop.fs.s3a.native.fallback": "fail"}),
]
SPARK_COPIES = ("warmup",) + SPARK_QUERIES  # a lineitem copy for the warm-up and one per query
# The goals of issue 14 (gates): (what, variant, against, at least)
ICEBERG_GOALS = [("x ceiling", NATIVE, CEILING, 0.9), ("x S3A classic", NATIVE, REFERENCE, 3.0),
                 ("x S3A analytics", NATIVE, ANALYTICS, 1.3)]
SPARK_GOAL = 1.5  # s3native at least 1.5x stock classic on Q1 and Q6


class Bench:
    def __init__(self, args, endpoints, workdir):
        self.args, self.endpoints, self.workdir = args, endpoints, workdir
        jar = os.path.join(ROOT, "jvm/target/s3native-0.1.0.jar")
        classes = os.path.join(ROOT, "benches/iceberg/target/classes")
        cp_file = os.path.join(ROOT, "target/bench/classpath-iceberg")
        for f in (jar, classes, cp_file):
            if not os.path.exists(f):
                sys.exit(f"missing {f}: run make bench-read (it builds the jar and benches/iceberg)")
        with open(cp_file) as f:
            deps = f.read().strip()
        self.classpath = ":".join([os.path.join(ROOT, "benches/harness/log4j"), classes, jar, deps])

    def conf(self, url, tls):
        return {
            "fs.s3a.endpoint": url,
            "fs.s3a.endpoint.region": "us-east-1",
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": str(tls).lower(),
            "fs.s3a.access.key": servers.ACCESS_KEY,
            "fs.s3a.secret.key": servers.SECRET_KEY,
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "fs.s3a.buffer.dir": os.path.join(self.workdir, "s3a-buffer"),
        }

    def java(self, conf, args):
        cert = self.endpoints.cert
        return (["java", "-Xmx3g", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                 f"-Djavax.net.ssl.trustStore={cert['truststore']}",
                 f"-Djavax.net.ssl.trustStorePassword={cert['password']}"]
                + [f"-Dbench.conf.{k}={v}" for k, v in conf.items()]
                + ["-cp", self.classpath, "io.s3native.bench.iceberg.IcebergReadBench"] + args)

    def execute(self, cmd):
        env = dict(os.environ, SSL_CERT_FILE=self.endpoints.cert["ca"])
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=self.args.timeout)
        except subprocess.TimeoutExpired as e:
            return [], f"timed out after {self.args.timeout} s\n{e.stderr or ''}", -1
        results = [json.loads(line[len("RESULT "):]) for line in p.stdout.splitlines() if line.startswith("RESULT ")]
        return results, p.stderr, p.returncode

    def table(self, where, n):
        if where == "local":
            return "file://" + os.path.join(self.workdir, "local", f"n{n}")
        return f"s3a://{BUCKET}/iceberg/n{n}"

    def write(self, n):
        """The table for `n` columns, once on S3 (stock S3A, straight to the server, no
        toxiproxy) and once on local disk, in one JVM."""
        conf = self.conf(self.endpoints.url("loopback", self.args.tls, self.args.server), self.args.tls)
        t0 = time.time()
        results, err, rc = self.execute(self.java(conf, ["write", str(n), str(self.args.rows), str(MONTHS),
                                                         self.table("s3", n), self.table("local", n)]))
        if rc != 0 or len(results) != 2:
            raise RuntimeError(f"writing the tables n={n} failed (status {rc}):\n{err[-3000:]}")
        for r in results:
            r.update(columns=n, process_seconds=time.time() - t0)
            print(f"  wrote {r['table']}: {r['written_bytes'] / MIB:.1f} MiB in {r['write_seconds']:.1f} s", flush=True)
        return results

    def read(self, variant, where, extra, n, rnd):
        conf = dict(self.conf(self.endpoints.url(self.args.profile, self.args.tls, self.args.server), self.args.tls))
        conf.update(extra)
        t0 = time.time()
        results, err, rc = self.execute(self.java(conf, ["read", self.table(where, n), variant, "0"]
                                                  + [f"{x}:{i + 1}" for i, x in enumerate(READERS)]))
        wall = time.time() - t0
        if rc != 0 or len(results) != len(READERS):
            tail = "\n".join(err.strip().splitlines()[-25:])
            print(f"  FAILED {variant} n={n} (status {rc}):\n{tail}", flush=True)
            return [{"variant": variant, "columns": n, "round": rnd, "error": tail, "status": rc}]
        for r in results:
            r.update(round=rnd, process_seconds=wall, profile=self.args.profile if where == "s3" else "local",
                     tls=self.args.tls)
            print(f"  {variant:14s} n={n:3d} {r['reader']:5s}: {mibps(r):7.1f} MiB/s, {gets(r)} GETs", flush=True)
        return results


class SparkCell:
    """TPC-H Q1 and Q6 through each Spark variant (SPARK_VARIANTS): lineitem (spark/make_data.py,
    the demo's input, tpchgen-cli's Parquet) uploaded once per copy straight to the server (no
    toxiproxy): a copy for the warm-up and one per query, so that no measured query finds its
    data in a stream cache of an earlier one (S3A's analytics stream keeps what it fetched per
    object). Each variant and round is a fresh spark-submit (local[2]) that runs both queries
    once over the warm-up copy, then each over its own copy, timed from reading the table to
    the last result row (spark/job.py tpch); the S3 endpoint is the read bench's profile."""

    def __init__(self, args, endpoints, workdir):
        self.args, self.endpoints = args, endpoints
        self.dir = os.path.join(workdir, "spark")
        os.makedirs(self.dir, exist_ok=True)
        subprocess.run([os.path.join(ROOT, "scripts/spark-setup.sh"), "tools", SPARK_LINE], check=True)
        sys.path.insert(0, os.path.join(ROOT, "spark"))
        import sparkconf  # noqa: E402  (spark/: the Spark lines, spark-submit, spark-defaults)
        self.sc = sparkconf
        tools_python = os.path.join(sparkconf.SPARK, "venv-tools", "bin", "python")
        out = subprocess.run([tools_python, os.path.join(ROOT, "spark/make_data.py"), "--out",
                              os.path.join(sparkconf.SPARK, "data"), "--scale", f"{args.spark_scale:g}"],
                             check=True, capture_output=True, text=True).stdout
        self.source = out.splitlines()[0]
        self.files = sorted(f for f in os.listdir(self.source) if f.endswith(".parquet"))
        self.bytes = sum(os.path.getsize(os.path.join(self.source, f)) for f in self.files)
        self.prefix = f"spark/sf{args.spark_scale:g}"

    def uri(self, copy):
        """The copy's files (s3s-fs answers a HEAD of a directory's key with 500, so Spark gets
        the files, not their directory)."""
        return ",".join(f"s3a://{BUCKET}/{self.prefix}/{copy}/lineitem/{f}" for f in self.files)

    def upload(self):
        """Each copy of lineitem, one PUT a file, straight to the server."""
        import boto3  # moto's venv has it
        s3 = boto3.client("s3", endpoint_url=self.endpoints.url("loopback", False, self.args.server),
                          region_name="us-east-1", aws_access_key_id=servers.ACCESS_KEY,
                          aws_secret_access_key=servers.SECRET_KEY)
        t0 = time.time()
        for copy in SPARK_COPIES:
            for f in self.files:
                with open(os.path.join(self.source, f), "rb") as body:
                    s3.put_object(Bucket=BUCKET, Key=f"{self.prefix}/{copy}/lineitem/{f}", Body=body)
        print(f"  uploaded lineitem SF{self.args.spark_scale:g} ({len(self.files)} files, {self.bytes / MIB:.1f} MiB) "
              f"x {len(SPARK_COPIES)} copies in {time.time() - t0:.1f} s", flush=True)

    def run(self, variant, fs, extra, rnd):
        """One spark-submit of the variant: one record per query (or one error record)."""
        url = self.endpoints.url(self.args.profile, self.args.tls, self.args.server)
        s3 = {"endpoint": url, "access_key": servers.ACCESS_KEY, "secret_key": servers.SECRET_KEY,
              "region": "us-east-1"}
        afs = self.sc.NATIVE_AFS if fs == self.sc.NATIVE_FS else self.sc.STOCK_AFS
        conf = self.sc.defaults(fs, afs, s3, {"spark.ui.enabled": "false", "spark.driver.memory": "2g",
                                              "spark.sql.shuffle.partitions": "4", **extra})
        tag = variant.split()[-1]
        props = os.path.join(self.dir, f"{tag}.conf")
        self.sc.write_properties(props, conf)
        report = os.path.join(self.dir, f"{tag}-r{rnd}.json")
        log = os.path.join(self.dir, f"{tag}-r{rnd}.log")
        if os.path.exists(report):
            os.remove(report)
        cert = self.endpoints.cert
        env = {"SSL_CERT_FILE": cert["ca"], "AWS_CA_BUNDLE": cert["ca"],
               "JAVA_TOOL_OPTIONS": f"-Djavax.net.ssl.trustStore={cert['truststore']} "
                                    f"-Djavax.net.ssl.trustStorePassword={cert['password']}"}
        args = ["tpch", "--warmup", self.uri("warmup"), "--queries", *SPARK_QUERIES,
                "--tables", *[self.uri(q) for q in SPARK_QUERIES], "--report", report]
        t0 = time.time()
        try:
            rc = self.sc.spark_submit(SPARK_LINE, props, args, log, timeout=self.args.timeout, env=env)
        except subprocess.TimeoutExpired:
            rc = -1
        wall = time.time() - t0
        base = {"cell": "spark", "variant": variant, "round": rnd, "process_seconds": wall}
        if rc != 0 or not os.path.exists(report):
            tail = open(log).read().strip().splitlines()[-25:] if os.path.exists(log) else []
            print(f"  FAILED Spark {variant} (status {rc}; {os.path.relpath(log, ROOT)}):\n" + "\n".join(tail), flush=True)
            return [dict(base, query="-", status=rc, error="\n".join(tail))]
        with open(report) as f:
            rep = json.load(f)
        records = []
        for q in rep["queries"]:
            r = dict(base, query=q["query"], seconds=q["wall_s"], cpu_seconds=q["cpu_s"], result=q["result"],
                     files=q["files"], file_bytes=q["file_bytes"], reads=q["reads"],
                     statistics=q["reads"].get("counters", {}), versions=rep["versions"],
                     filesystem=rep["classes"]["filesystem"])
            problem = self.check(variant, fs, r)
            if problem:
                r.update(error=problem, status=0)
                print(f"  FAILED Spark {variant} {q['query']}: {problem}", flush=True)
            else:
                print(f"  Spark {variant:14s} {q['query']}: {r['seconds']:6.2f} s, CPU {fmt(r['cpu_seconds'], '.1f')} s, "
                      f"{gets(r)} GETs, {fmt(fetched(r) / MIB if fetched(r) else None, '.1f')} MiB fetched", flush=True)
            records.append(r)
        return records

    def check(self, variant, fs, r):
        """Why a record does not count (the wrong filesystem, a native variant that did not read
        natively, no rows), or None."""
        if r["filesystem"] != fs:
            return f"the job read through {r['filesystem']}, not {fs}"
        if not r["result"]:
            return "the query returned no rows"
        if fs == NATIVE_FS:
            rd = r["reads"]
            if "error" in rd:
                return f"no read statistics: {rd['error']}"
            if rd.get("stock_opens", 0) != 0 or rd.get("native_opens", 0) < r["files"] or rd.get("native_bytes_read", 0) <= 0:
                return (f"not read natively: {rd.get('native_opens')} native opens, {rd.get('stock_opens')} stock opens "
                        f"for {r['files']} files, {rd.get('native_bytes_read')} bytes read natively")
        return None


def same_results(records):
    """Every variant's result of each query is the first's (they read copies of one table):
    an error record per differing result."""
    bad = []
    for q in SPARK_QUERIES:
        rs = [r for r in records if r.get("query") == q and "error" not in r]
        for r in rs[1:]:
            if r["result"] != rs[0]["result"]:
                bad.append({"cell": "spark", "variant": r["variant"], "query": q, "round": r["round"], "status": 0,
                            "error": f"{q} result differs from {rs[0]['variant']}'s: {r['result'][:3]} vs {rs[0]['result'][:3]}"})
    return bad


def mibps(r):
    return r["file_bytes"] / MIB / r["seconds"]


def gets(r):
    """GETs on the data file: the larger of stream_read_opened (s3native counts each of its
    GETs there) and action_http_get_request (S3A's count of GET requests, which its analytics
    stream also keeps)."""
    s = r.get("statistics", {})
    counts = [s[k] for k in ("stream_read_opened", "action_http_get_request") if s.get(k)]
    return max(counts) if counts else None


def fetched(r):
    """Bytes fetched from the store: stream_read_total_bytes, or S3A's analytics stream's
    stream_read_prefetched_bytes where larger (its total_bytes counts only what it read past
    its own cache); None when neither is counted."""
    s = r.get("statistics", {})
    return max(s.get("stream_read_total_bytes", 0), s.get("stream_read_prefetched_bytes", 0)) or None


def fetched_per_byte(r):
    """Bytes fetched per byte of the file(s)."""
    f = fetched(r)
    return f / r["file_bytes"] if f else None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def per_round_ratio(runs, cell, base, metric, invert=False):
    """Median over rounds of metric(run) / metric(base's run of the same round) (inverted:
    base / run, for times), or None."""
    out = []
    for r in runs:
        b = [x for x in cell if x["variant"] == base and x["round"] == r["round"]]
        if b and metric(r) and metric(b[0]):
            out.append(metric(b[0]) / metric(r) if invert else metric(r) / metric(b[0]))
    return med(out)


def verdict(x, goal, higher=True):
    if x is None:
        return "-"
    ok = x >= goal if higher else x <= goal
    return f"{x:.2f} ({'met' if ok else 'NOT met'})"


def iceberg_report(data):
    ok = [r for r in data["reads"] if "error" not in r]
    lines = [f"Iceberg 1.10.1, Hadoop 3.4.3; {data['rows']:,} rows per monthly file, uncompressed Parquet; "
             f"query: read one month (one file); {data['rounds']} round(s), variants interleaved per round. "
             f"S3 variants: {data['profile']} profile (+{servers.PROFILES[data['profile']][0]} ms per response, "
             f"{servers.PROFILES[data['profile']][1] // 1000} MB/s per connection), "
             f"{'TLS' if data['tls'] else 'HTTP'}, server {data['server']}. Machine: {data['machine']}.", "",
             "MiB/s = data file bytes / seconds from planning to the last row (median over rounds, min..max); "
             "ratios are medians of per-round ratios. GETs: on the data file (planning's own taken out); "
             "fetched/used: bytes fetched from the store per byte of the file. The ceiling is the seed's: "
             "the same reader over the whole object fetched into memory with one GET at open "
             "(InMemoryLoadingFileSystem, through S3A classic).", ""]
    goals = []
    for reader in READERS:
        lines += [f"## {READER_NAMES[reader]}", "",
                  "| n | variant | MiB/s | x S3A classic | x ceiling | x local disk | GETs per file | fetched/used | CPU s/GiB |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for n in data["columns"]:
            cell = [r for r in ok if r["reader"] == reader and r["columns"] == n]
            for variant, _, _ in VARIANTS:
                runs = [r for r in cell if r["variant"] == variant]
                if not runs:
                    lines.append(f"| {n} | {variant} | failed | | | | | | |")
                    continue
                speeds = [mibps(r) for r in runs]
                ratios = {base: per_round_ratio(runs, cell, base, mibps) for base in (REFERENCE, CEILING, LOCAL)}
                cpu = med([r["cpu_seconds"] / (r["file_bytes"] / GIB) for r in runs])
                spread = f" ({min(speeds):.1f}..{max(speeds):.1f})" if len(runs) > 1 else ""
                lines.append(f"| {n} | {variant} | {med(speeds):.1f}{spread} | {fmt(ratios[REFERENCE], '.2f')} | "
                             f"{fmt(ratios[CEILING], '.2f')} | {fmt(ratios[LOCAL], '.2f')} | "
                             f"{fmt(med([gets(r) for r in runs]), '.0f')} | "
                             f"{fmt(med([fetched_per_byte(r) for r in runs]), '.2f')} | {fmt(cpu, '.1f')} |")
            runs = [r for r in cell if r["variant"] == NATIVE]
            g = [verdict(per_round_ratio(runs, cell, base, mibps), goal) for _, _, base, goal in ICEBERG_GOALS]
            native_gets = med([gets(r) for r in runs])
            classic_gets = med([gets(r) for r in cell if r["variant"] == REFERENCE])
            g.append("-" if not native_gets or not classic_gets else
                     f"{native_gets:.0f} vs {classic_gets:.0f} ({'met' if native_gets <= classic_gets / 10 else 'NOT met'})")
            goals.append(f"| {reader} | {n} | " + " | ".join(g) + " |")
        lines.append("")
    lines += ["## Goals (issue 14): s3native", "",
              "| reader | n | " + " | ".join(f"{w} (at least {goal:g})" for w, _, _, goal in ICEBERG_GOALS)
              + " | GETs per file vs classic's (at most a tenth) |",
              "|---|---|" + "---|" * (len(ICEBERG_GOALS) + 1)] + goals + [""]
    return lines


def spark_report(data):
    sp = data["spark"]
    runs = [r for r in data["spark_runs"] if "error" not in r]
    v = next((r["versions"] for r in runs), {"spark": SPARK_LINE, "hadoop": "?"})
    lines = [f"## Spark: TPC-H Q1 and Q6 (Spark {v['spark']} / Hadoop {v['hadoop']}, local[2])", "",
             f"lineitem SF{sp['scale']:g} (tpchgen-cli Parquet, the demo's input: {sp['files']} files, "
             f"{sp['bytes'] / MIB:.1f} MiB), a copy per query and one for the warm-up; {data['rounds']} round(s), each "
             f"variant a fresh spark-submit per round, the order rotating; {data['profile']} profile, "
             f"{'TLS' if data['tls'] else 'HTTP'}, server {data['server']}. Wall: from reading the table to the last "
             "result row (median over rounds, min..max); x: medians of per-round ratios of wall time (higher is "
             "faster); CPU: the Spark JVM's (driver and local executors) over the query, and its ratio to classic's "
             "(lower is cheaper); GETs and bytes fetched: the filesystem's read counters over the query "
             "(stream_read_opened or action_http_get_request; stream_read_total_bytes or AAL's prefetched bytes). "
             "Results are equal across variants (checked).", "",
             "| query | variant | wall s | x S3A classic | x S3A analytics | CPU s | CPU / classic's | GETs | MiB fetched | fetched / file bytes |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    goals = []
    for q in SPARK_QUERIES:
        cell = [r for r in runs if r["query"] == q]
        for variant, _, _ in SPARK_VARIANTS:
            vr = [r for r in cell if r["variant"] == variant]
            if not vr:
                lines.append(f"| {q.upper()} | {variant} | failed | | | | | | | |")
                continue
            walls = [r["seconds"] for r in vr]
            secs = lambda r: r["seconds"]  # noqa: E731
            cpu = lambda r: r["cpu_seconds"]  # noqa: E731
            spread = f" ({min(walls):.2f}..{max(walls):.2f})" if len(vr) > 1 else ""
            f = med([fetched(r) for r in vr])
            lines.append(f"| {q.upper()} | {variant} | {med(walls):.2f}{spread} | "
                         f"{fmt(per_round_ratio(vr, cell, REFERENCE, secs, invert=True), '.2f')} | "
                         f"{fmt(per_round_ratio(vr, cell, ANALYTICS, secs, invert=True), '.2f')} | "
                         f"{fmt(med([cpu(r) for r in vr]), '.1f')} | {fmt(per_round_ratio(vr, cell, REFERENCE, cpu), '.2f')} | "
                         f"{fmt(med([gets(r) for r in vr]), '.0f')} | {fmt(f / MIB if f else None, '.1f')} | "
                         f"{fmt(med([fetched_per_byte(r) for r in vr]), '.2f')} |")
        nat = [r for r in cell if r["variant"] == NATIVE]
        goals.append(f"{q.upper()} {verdict(per_round_ratio(nat, cell, REFERENCE, lambda r: r['seconds'], True), SPARK_GOAL)}")
    lines += ["", f"Goal (issue 14): s3native at least {SPARK_GOAL:g}x stock S3A classic: " + ", ".join(goals) + ".", ""]
    return lines


def report(data, path_md):
    """The Iceberg tables (per reader and n: MiB/s, ratios to classic, the ceiling and local
    disk, GETs, bytes fetched, CPU; the goals) and the Spark queries' table, whichever ran."""
    lines = [f"# Read benchmark ({data['date']})", ""]
    if "iceberg" in data["cells"]:
        lines += iceberg_report(data)
    if "spark" in data["cells"]:
        lines += spark_report(data)
    failed = [r for r in data["reads"] + data["spark_runs"] if "error" in r]
    if failed:
        lines += ["## Failed reads", ""]
        for r in failed:
            first = r["error"].strip().splitlines()[-1] if r["error"].strip() else ""
            what = f"Spark {r['variant']} {r.get('query', '')}" if r.get("cell") == "spark" else f"{r['variant']}, n={r['columns']}"
            lines.append(f"- {what}, round {r['round']}: status {r['status']}: `{first[:300]}`")
        lines.append("")
    est = (f" Estimated full scale (n = 50, 100, 200, 300; 180,000 rows; 3 rounds): about "
           f"{data['estimate_minutes']:.0f} minutes on this machine." if "iceberg" in data["cells"] else "")
    lines += [f"Run time: {data['seconds']:.0f} s (Iceberg writes {data.get('write_seconds', 0):.0f} s).{est}", ""]
    with open(path_md, "w") as f:
        f.write("\n".join(lines))
    return "\n".join(lines)


def estimate(data):
    """Full-scale minutes from this run: per variant, each JVM's fixed cost (its wall time less
    its four file reads, the warm-up ones taken as long as the measured ones) plus four reads of
    each full-size file at the speed measured here (small files read slower: a high bound),
    for n = 50..300 and 3 rounds; plus the writes at this run's write speed."""
    full_bytes = [180_000 * (8 * n + 16) for n in (50, 100, 200, 300)]
    ok = [r for r in data["reads"] if "error" not in r]
    total = 0.0
    for variant, _, _ in VARIANTS:
        runs = [r for r in ok if r["variant"] == variant]
        if not runs:
            continue
        per_process = {}
        for r in runs:
            per_process.setdefault((r["columns"], r["round"]), []).append(r)
        fixed = med([rs[0]["process_seconds"] - 2 * sum(r["seconds"] for r in rs) for rs in per_process.values()])
        per_byte = {reader: med([r["seconds"] / r["file_bytes"] for r in runs if r["reader"] == reader])
                    for reader in READERS}
        total += 3 * sum(max(fixed, 0) + 2 * sum(per_byte[x] * b for x in READERS if per_byte[x]) for b in full_bytes)
    w = data["writes"]
    if w:
        fixed = med([x["process_seconds"] - sum(y["write_seconds"] for y in w if y["columns"] == x["columns"])
                     for x in w])
        write_per_byte = med([x["write_seconds"] / x["written_bytes"] for x in w])
        total += sum(max(fixed, 0) + 2 * write_per_byte * MONTHS * b for b in full_bytes)
    return total / 60


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true",
                    help="Iceberg: n=50, 30,000 rows (12 MiB files: above the native reader's 8 MiB whole-object "
                         "size); Spark: lineitem SF0.1; one round")
    ap.add_argument("--cells", default="iceberg,spark",
                    help="comma-separated: iceberg (the replicated seed table), spark (TPC-H Q1 and Q6); default both")
    ap.add_argument("--spark", dest="cells", action="store_const", const="spark", help="the Spark cell only (--cells spark)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--columns", help="comma-separated n (default 50,100,200,300)")
    ap.add_argument("--rows", type=int, help="rows per monthly file (default 180,000)")
    ap.add_argument("--spark-scale", type=float, help="TPC-H scale factor of the Spark cell's lineitem (default 1; smoke 0.1)")
    ap.add_argument("--profile", default="s3like", choices=sorted(servers.PROFILES))
    ap.add_argument("--http", dest="tls", action="store_false", help="plain HTTP instead of TLS")
    ap.add_argument("--server", choices=("moto", "s3s-fs"), default="s3s-fs",
                    help="the S3 server (default s3s-fs, Rust, on tmpfs; moto, Python, bounds each stream at ~10 MiB/s)")
    ap.add_argument("--out", help="results directory (default benches/results; smoke: target/bench-read-smoke)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per JVM")
    args = ap.parse_args(argv)
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    if not cells or set(cells) - {"iceberg", "spark"}:
        ap.error(f"--cells: iceberg and/or spark, not {args.cells!r}")
    args.rounds = args.rounds or (1 if args.smoke else 3)
    args.rows = args.rows or (30_000 if args.smoke else 180_000)
    args.spark_scale = args.spark_scale or (0.1 if args.smoke else 1.0)
    columns = [int(x) for x in (args.columns or ("50" if args.smoke else "50,100,200,300")).split(",")]
    out = args.out or os.path.join(ROOT, "target/bench-read-smoke" if args.smoke else "benches/results")
    os.makedirs(out, exist_ok=True)
    workdir = os.path.join(ROOT, "target/bench-read")
    shutil.rmtree(os.path.join(workdir, "local"), ignore_errors=True)
    data_root = os.environ.get("S3NATIVE_BENCH_DATA", "/dev/shm/s3native-bench-read")

    started = time.time()
    endpoints = servers.Endpoints(os.path.join(ROOT, "target/tools/bin"), workdir, data_root, BUCKET)
    data = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cells": cells,
            "rows": args.rows, "columns": columns, "rounds": args.rounds, "profile": args.profile, "tls": args.tls,
            "server": args.server, "machine": f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start",
            "writes": [], "reads": [], "spark_runs": []}
    try:
        endpoints.start(moto=args.server == "moto", s3s=args.server == "s3s-fs")
        if args.server == "moto":
            make_bucket(endpoints.url("loopback", False, "moto"))
        if "iceberg" in cells:
            bench = Bench(args, endpoints, workdir)
            print(f"read bench: Iceberg n={columns}, {args.rows} rows, {args.rounds} round(s), {args.profile}, "
                  f"server {args.server}", flush=True)
            for n in columns:
                data["writes"] += bench.write(n)
            data["write_seconds"] = time.time() - started
            for rnd in range(args.rounds):
                print(f"round {rnd + 1}/{args.rounds}", flush=True)
                for n in columns:
                    # rotate the order each round so that no variant always runs first
                    order = VARIANTS[rnd % len(VARIANTS):] + VARIANTS[:rnd % len(VARIANTS)]
                    for variant, where, extra in order:
                        data["reads"] += bench.read(variant, where, extra, n, rnd)
        if "spark" in cells:
            spark = SparkCell(args, endpoints, workdir)
            data["spark"] = {"line": SPARK_LINE, "scale": args.spark_scale, "files": len(spark.files), "bytes": spark.bytes}
            print(f"read bench: Spark {SPARK_LINE}, TPC-H {', '.join(q.upper() for q in SPARK_QUERIES)}, "
                  f"SF{args.spark_scale:g}, {args.rounds} round(s), {args.profile}, server {args.server}", flush=True)
            spark.upload()
            for rnd in range(args.rounds):
                order = SPARK_VARIANTS[rnd % len(SPARK_VARIANTS):] + SPARK_VARIANTS[:rnd % len(SPARK_VARIANTS)]
                for variant, fs, extra in order:
                    data["spark_runs"] += spark.run(variant, fs, extra, rnd)
            data["spark_runs"] += same_results(data["spark_runs"])
    except Exception:
        traceback.print_exc()
        data.setdefault("write_seconds", time.time() - started)
        data["reads"].append({"variant": "harness", "columns": 0, "round": 0, "status": -1,
                              "error": traceback.format_exc()})
    finally:
        endpoints.stop()
    data.setdefault("spark", {"line": SPARK_LINE, "scale": args.spark_scale, "files": 0, "bytes": 0})
    data["seconds"] = time.time() - started
    data["estimate_minutes"] = estimate(data) if "iceberg" in cells else None
    base = results.stem(out, "read" + ("" if cells == ["iceberg", "spark"] else "-" + "-".join(cells)),
                        datetime.datetime.now(datetime.timezone.utc), fresh=not args.smoke)
    with open(base + ".json", "w") as f:
        json.dump(data, f, indent=1)
    print(report(data, base + ".md"))
    print(f"results: {base}.json, {base}.md")
    return 1 if any("error" in r for r in data["reads"] + data["spark_runs"]) else 0


def make_bucket(url):
    """moto needs the bucket made (s3s-fs gets it as a directory from servers.py)."""
    import boto3  # moto's venv has it
    boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id=servers.ACCESS_KEY,
                 aws_secret_access_key=servers.SECRET_KEY).create_bucket(Bucket=BUCKET)


if __name__ == "__main__":
    sys.exit(main())
