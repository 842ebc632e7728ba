"""The replicated Iceberg single-reader benchmark (issue 14; shared/reference/read-path.md,
"Why"): one Iceberg reader reads one month (one uncompressed Parquet file of 180,000 rows:
a timestamp, a key and n doubles, n = 50, 100, 200, 300) of a monthly-partitioned table,
with Iceberg's row reader (IcebergGenerics) and its Arrow reader (VectorizedTableScanIterable),
through each variant side by side, interleaved round by round:

    S3A classic     stock S3A (Hadoop 3.4.3), fs.s3a.input.stream.type=classic (3.4.3's default is analytics)
    S3A analytics   stock S3A, fs.s3a.input.stream.type=analytics (AWS's AAL 1.3.1)
    s3native        NativeS3AFileSystem reading natively (fs.s3a.native.fallback=fail; the
                    worker fails unless its read statistics show the file was read natively)
    local disk      the same table written to file:// (the ceiling; the page cache holds it)

    python benches/harness/read_bench.py            # the full run (make bench-read)
    python benches/harness/read_bench.py --smoke    # n=50, 30,000 rows, one round (under 3 minutes)

The S3 variants go through servers.py's s3like profile (toxiproxy: +30 ms on every response,
85 MB/s per connection and direction), TLS (stunnel), in front of moto (the project's test
server; --server s3s-fs for the faster s3s-fs when installed). Each table is written once per
n, through stock S3A straight to the server (no toxiproxy), and once to local disk.

Every measured read is a fresh JVM (benches/iceberg, IcebergReadBench): it loads the table,
reads month 0 once with each reader (JIT, connections, TLS sessions), then month 1 with the row
reader and month 2 with the Arrow reader (a file of its own each: S3A's analytics stream keeps
what it fetched for later streams of the same object), timed from planning to the last row.
Figures per read: MiB/s of the data file, GETs per file (the larger of stream_read_opened and
action_http_get_request of the filesystem's IOStatistics, planning's own GETs taken out), bytes
fetched per byte of the file (stream_read_total_bytes; S3A's analytics stream counts only part
of what it fetches, so its figure is low), CPU s/GiB (the JVM's process CPU over the read).

Results: <out>/<date>-read.json (every read) and <date>-read.md: per reader and n, the
median over rounds of MiB/s (min..max) and the medians of per-round ratios to stock classic
and to local disk. The exit status is 1 when any read failed.

Full scale (4 n x 4 variants x 3 rounds, 3 months written per n, through moto) on this
2-core machine: about 80 minutes, as the smoke run estimates from its own speeds (the last
line of its report); moto's ~10 MiB/s per stream bounds the S3 variants there.
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
import servers  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIB = 1 << 20
GIB = 1 << 30
BUCKET = "bench"
MONTHS = 3  # month 0: the warm-up reads; month 1: the row reader's measured read; month 2: the Arrow reader's
READERS = ("rows", "arrow")
READER_NAMES = {"rows": "row reader (IcebergGenerics)", "arrow": "Arrow reader (VectorizedTableScanIterable)"}
NATIVE_FS = "io.s3native.hadoop.NativeS3AFileSystem"

# name, where (s3 | local), Hadoop settings
VARIANTS = [
    ("S3A classic", "s3", {"fs.s3a.input.stream.type": "classic"}),
    ("S3A analytics", "s3", {"fs.s3a.input.stream.type": "analytics"}),
    ("s3native", "s3", {"fs.s3a.impl": NATIVE_FS, "fs.s3a.native.fallback": "fail"}),
    ("local disk", "local", {}),
]
REFERENCE, CEILING = "S3A classic", "local disk"


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


def mibps(r):
    return r["file_bytes"] / MIB / r["seconds"]


def gets(r):
    """GETs on the data file: the larger of stream_read_opened (s3native counts each of its
    GETs there) and action_http_get_request (S3A's count of GET requests, which its analytics
    stream also keeps)."""
    s = r.get("statistics", {})
    counts = [s[k] for k in ("stream_read_opened", "action_http_get_request") if s.get(k)]
    return max(counts) if counts else None


def fetched_per_byte(r):
    """Bytes fetched per byte of the file: stream_read_total_bytes, or S3A's analytics stream's
    stream_read_prefetched_bytes where larger (its total_bytes counts only what it read past
    its own cache)."""
    s = r.get("statistics", {})
    fetched = max(s.get("stream_read_total_bytes", 0), s.get("stream_read_prefetched_bytes", 0))
    return fetched / r["file_bytes"] if fetched else None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def report(data, path_md):
    """Per reader and n: MiB/s (median, min..max over rounds), per-round ratios to stock
    classic and to local disk (median), GETs per file, bytes fetched per byte, CPU s/GiB."""
    ok = [r for r in data["reads"] if "error" not in r]
    failed = [r for r in data["reads"] if "error" in r]
    lines = [f"# Iceberg single-reader benchmark ({data['date']})", "",
             f"Iceberg 1.10.1, Hadoop 3.4.3; {data['rows']:,} rows per monthly file, uncompressed Parquet; "
             f"query: read one month (one file); {data['rounds']} round(s), variants interleaved per round. "
             f"S3 variants: {data['profile']} profile (+{servers.PROFILES[data['profile']][0]} ms per response, "
             f"{servers.PROFILES[data['profile']][1] // 1000} MB/s per connection), "
             f"{'TLS' if data['tls'] else 'HTTP'}, server {data['server']}. Machine: {data['machine']}.", "",
             "MiB/s = data file bytes / seconds from planning to the last row (median over rounds, min..max); "
             "ratios are medians of per-round ratios. GETs: on the data file (planning's own taken out); "
             "fetched/used: bytes fetched from the store per byte of the file.", ""]
    for reader in READERS:
        lines += [f"## {READER_NAMES[reader]}", "",
                  "| n | variant | MiB/s | x S3A classic | x local disk | GETs per file | fetched/used | CPU s/GiB |",
                  "|---|---|---|---|---|---|---|---|"]
        for n in data["columns"]:
            cell = [r for r in ok if r["reader"] == reader and r["columns"] == n]
            for variant, _, _ in VARIANTS:
                runs = [r for r in cell if r["variant"] == variant]
                if not runs:
                    lines.append(f"| {n} | {variant} | failed | | | | | |")
                    continue
                speeds = [mibps(r) for r in runs]
                ratios = {}
                for base in (REFERENCE, CEILING):
                    per_round = []
                    for r in runs:
                        b = [x for x in cell if x["variant"] == base and x["round"] == r["round"]]
                        if b:
                            per_round.append(mibps(r) / mibps(b[0]))
                    ratios[base] = med(per_round)
                cpu = med([r["cpu_seconds"] / (r["file_bytes"] / GIB) for r in runs])
                spread = f" ({min(speeds):.1f}..{max(speeds):.1f})" if len(runs) > 1 else ""
                lines.append(f"| {n} | {variant} | {med(speeds):.1f}{spread} | {fmt(ratios[REFERENCE], '.2f')} | "
                             f"{fmt(ratios[CEILING], '.2f')} | {fmt(med([gets(r) for r in runs]), '.0f')} | "
                             f"{fmt(med([fetched_per_byte(r) for r in runs]), '.2f')} | {fmt(cpu, '.1f')} |")
        lines.append("")
    if failed:
        lines += ["## Failed reads", ""]
        for r in failed:
            first = r["error"].strip().splitlines()[-1] if r["error"].strip() else ""
            lines.append(f"- {r['variant']}, n={r['columns']}, round {r['round']}: status {r['status']}: `{first[:300]}`")
        lines.append("")
    lines += [f"Run time: {data['seconds']:.0f} s (writes {data['write_seconds']:.0f} s). "
              f"Estimated full scale (n = 50, 100, 200, 300; 180,000 rows; 3 rounds): "
              f"about {data['estimate_minutes']:.0f} minutes on this machine.", ""]
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
                    help="n=50, 30,000 rows (12 MiB files: above the native reader's 8 MiB whole-object size), one round")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--columns", help="comma-separated n (default 50,100,200,300)")
    ap.add_argument("--rows", type=int, help="rows per monthly file (default 180,000)")
    ap.add_argument("--profile", default="s3like", choices=sorted(servers.PROFILES))
    ap.add_argument("--http", dest="tls", action="store_false", help="plain HTTP instead of TLS")
    ap.add_argument("--server", choices=("moto", "s3s-fs"), default="moto",
                    help="the S3 server (default moto, the one this was run against; s3s-fs is faster but "
                         "untested here with HadoopTables' commits)")
    ap.add_argument("--out", help="results directory (default benches/results; smoke: target/bench-read-smoke)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per JVM")
    args = ap.parse_args(argv)
    args.rounds = args.rounds or (1 if args.smoke else 3)
    args.rows = args.rows or (30_000 if args.smoke else 180_000)
    columns = [int(x) for x in (args.columns or ("50" if args.smoke else "50,100,200,300")).split(",")]
    out = args.out or os.path.join(ROOT, "target/bench-read-smoke" if args.smoke else "benches/results")
    os.makedirs(out, exist_ok=True)
    workdir = os.path.join(ROOT, "target/bench-read")
    shutil.rmtree(os.path.join(workdir, "local"), ignore_errors=True)
    data_root = os.environ.get("S3NATIVE_BENCH_DATA", "/dev/shm/s3native-bench-read")

    started = time.time()
    endpoints = servers.Endpoints(os.path.join(ROOT, "target/tools/bin"), workdir, data_root, BUCKET)
    data = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "rows": args.rows, "columns": columns, "rounds": args.rounds, "profile": args.profile, "tls": args.tls,
            "server": args.server, "machine": f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start",
            "writes": [], "reads": []}
    try:
        endpoints.start(moto=args.server == "moto", s3s=args.server == "s3s-fs")
        if args.server == "moto":
            make_bucket(endpoints.url("loopback", False, "moto"))
        bench = Bench(args, endpoints, workdir)
        print(f"read bench: n={columns}, {args.rows} rows, {args.rounds} round(s), {args.profile}, server {args.server}",
              flush=True)
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
    except Exception:
        traceback.print_exc()
        data.setdefault("write_seconds", time.time() - started)
        data["reads"].append({"variant": "harness", "columns": 0, "round": 0, "status": -1,
                              "error": traceback.format_exc()})
    finally:
        endpoints.stop()
    data["seconds"] = time.time() - started
    data["estimate_minutes"] = estimate(data)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    base = os.path.join(out, f"{stamp}-read")
    with open(base + ".json", "w") as f:
        json.dump(data, f, indent=1)
    print(report(data, base + ".md"))
    print(f"results: {base}.json, {base}.md")
    return 1 if any("error" in r for r in data["reads"]) else 0


def make_bucket(url):
    """moto needs the bucket made (s3s-fs gets it as a directory from servers.py)."""
    import boto3  # moto's venv has it
    boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id=servers.ACCESS_KEY,
                 aws_secret_access_key=servers.SECRET_KEY).create_bucket(Bucket=BUCKET)


if __name__ == "__main__":
    sys.exit(main())
