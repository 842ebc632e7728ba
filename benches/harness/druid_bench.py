"""The Druid benchmark (issue 15): MSQ's output-heavy durable-storage workload through
druid-s3native's S3NativeStorageConnector (Druid 37.0.0) and through Druid's own
S3StorageConnector (druid-s3-extensions 29.0.0, the newest served on Maven Central: the seed's
"before", 5 MiB chunks staged on local disk and uploaded one after another by each writer),
measured side by side in one run, on servers.py's s3like and netbound profiles (TLS, toxiproxy
in front of stunnel in front of s3s-fs on tmpfs).

    python benches/harness/druid_bench.py             # full run (make bench-druid), about 10 minutes idle (estimated)
    python benches/harness/druid_bench.py --smoke     # scale 1/16, one round (make bench-druid BENCH_DRUID_ARGS=--smoke)

The workload (the seed's, user-asks.md): 454 MB and 56.8 MB of frame files written by 2 writer
threads (MSQ workers), each file rowsPerPage rows of LZ4-compressed frames of at most
1 MB written by Druid's FrameFileWriter over connector.write(path), chunkSize 5 MiB, then each
worker's __success file (a small output). A file holds rowsPerPage rows (--rows-per-page,
default 500,000: ~22 MB, about 4 chunks; see ROWS_PER_PAGE); each worker's last file only the
frames its share has left. The worker is benches/druid (DruidWriteBench), one
JVM per variant and run: Druid 29 and 37 classes never share a JVM (Maven profiles druid29 and
druid37 resolve their classpaths). Variants:

    Druid 29 S3StorageConnector         druid-s3-extensions 29.0.0, its tempDir on this machine's disk
    druid-s3native                      the extension at its defaults (druid.s3native.* unset)
    druid-s3native, Druid 29's memory   druid.s3native.memoryBudget = 2 x chunkSize (what Druid 29's two
                                        writers hold in chunks: one each, on disk, also while it uploads)

Per run (each a fresh JVM, after one warm-up file per worker): wall seconds, MB/s, process CPU
seconds, local disk bytes (/proc/self/io write_bytes; the tempDir's peak size sampled every
20 ms and the bytes staged in it), peak RSS (VmHWM), buffer memory (s3native's peak part-buffer
bytes; Druid 29's chunks on disk, i.e. the tempDir's peak), requests by kind counted at the
server (s3s-fs logs each request's route at debug level; the measured part's, on the run's keys,
warm-up left out) and as the client counted them (s3native's counters; Druid 29's AWS SDK v1
client through a request handler, each attempt), and the peak of TCP connections to the endpoint read from outside (run.established).
Each run ends by listing every worker's directory and reading each file's trailer back by
readRange at the length written; a mismatch fails the run.

Results: <out>/<date>-druid.json (every run) and .md: per profile and size, the medians over
rounds and the median of per-round throughput ratios to Druid 29, with the issue's goals
printed next to them. The exit status is 1 when a run failed.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (ConnectionWatch: connections read from /proc)
import results  # noqa: E402
import servers  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MB = 1000 * 1000
MIB = 1 << 20
BUCKET = "bench"
CHUNK = 5 * MIB
WORKERS = 2
# Rows per frame file. MSQ's default rowsPerPage is 100,000; with this table's rows (6 columns,
# ~44 compressed bytes a row) such a file is 4.4 MB, under one 5 MiB chunk, where no connector
# can overlap one writer's uploads (close waits for the object). The seed's gain came from 10
# chunks in flight for 2 workers, i.e. files of several chunks: 500,000 rows, ~22 MB, ~4 chunks.
ROWS_PER_PAGE = 500_000
SIZES = {"454 MB": 454 * MB, "56.8 MB": 56_800_000}
PROFILES = ["s3like", "netbound"]
SMOKE_SCALE = 1 / 16
SMOKE_JVM_OPTS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
NETBOUND_GOAL = 2.7  # netbound: at least 2.7x Druid 29 (the seed's 13:50 -> 5:08)
SEED_AFTER_CHUNKS = 10
# s3s's debug line for each request it routes (s3s 0.14.1, ops/mod.rs), with the object key or
# the bucket request's prefix.
ROUTE = re.compile(r'resolved route, op: (\w+), s3_path: (?:Object \{ bucket: "[^"]*", key: "([^"]*)" \}'
                   r'|Bucket \{ bucket: "[^"]*" \}(?:.*?prefix=([^&\s"]*))?)')  # the seed's "after": pool 10, 10 concurrent chunks of 5 MiB on disk

DRUID29 = "Druid 29 S3StorageConnector"
NATIVE = "druid-s3native"
NATIVE_EQUAL = "druid-s3native, Druid 29's memory"
# name, Maven profile (classpath), extra worker arguments
VARIANTS = [
    (DRUID29, "druid29", {}),
    (NATIVE, "druid37", {}),
    (NATIVE_EQUAL, "druid37", {"budget": f"{WORKERS * CHUNK // MIB}MiB"}),
]


def classpath(line):
    cp = os.path.join(ROOT, "target/bench", f"classpath-{line}")
    classes = os.path.join(ROOT, "target/bench", f"druid-{line}", "classes")
    for f in (cp, classes):
        if not os.path.exists(f):
            sys.exit(f"missing {f}: run make bench-druid (it builds benches/druid for druid29 and druid37)")
    with open(cp) as f:
        return ":".join([os.path.join(ROOT, "benches/harness/log4j"), classes, f.read().strip()])


class Bench:
    def __init__(self, a, endpoints):
        self.a, self.endpoints = a, endpoints
        self.cp = {line: classpath(line) for line in ("druid29", "druid37")}
        self.temp_root = os.path.join(ROOT, "target/bench/druid-temp")  # the machine's disk, not tmpfs
        self.serial = 0
        self.log = next(x.log for x in endpoints.servers if x.kind == "s3s-fs")

    def run(self, variant, profile, size_name, size):
        name, line, extra = variant
        self.serial += 1
        url = self.endpoints.url(profile, True)
        temp = os.path.join(self.temp_root, f"run{self.serial}")
        cert = self.endpoints.cert
        args = {"endpoint": url, "region": "us-east-1", "access_key": servers.ACCESS_KEY,
                "secret_key": servers.SECRET_KEY, "bucket": BUCKET, "prefix": f"run{self.serial}",
                "bytes": str(size), "workers": str(WORKERS), "rows_per_page": str(self.a.rows_per_page),
                "chunk": f"{CHUNK // MIB}MiB", "temp_dir": temp, "handshake": "true", **extra}
        cmd = ["java", "-Xmx1g", *(SMOKE_JVM_OPTS if self.a.smoke else []),
               f"-Djavax.net.ssl.trustStore={cert['truststore']}",
               f"-Djavax.net.ssl.trustStorePassword={cert['password']}",
               "-cp", self.cp[line], "io.s3native.bench.druid.DruidWriteBench"] + [f"{k}={v}" for k, v in args.items()]
        env = dict(os.environ, SSL_CERT_FILE=cert["ca"])
        record = {"profile": profile, "condition": servers.PROFILES[profile], "workload": size_name,
                  "target_bytes": size, "variant": name, "line": line, "settings": extra}
        port = urllib.parse.urlsplit(url).port
        started = time.time()
        try:
            out, err, rc, peak, marks = self.execute(cmd, env, port)
            if "MEASURE_START" in marks and "MEASURE_END" in marks:
                record["server_requests"] = self.server_requests(marks["MEASURE_START"], marks["MEASURE_END"],
                                                                 args["prefix"])
        finally:
            self.endpoints.clear()
            shutil.rmtree(temp, ignore_errors=True)
        result = next((json.loads(l[7:]) for l in out.splitlines() if l.startswith("RESULT ")), None)
        record["peak_connections"] = peak
        if rc != 0 or result is None:
            tail = "\n".join((err + out).strip().splitlines()[-15:])
            record["error"] = f"exit status {rc}: {tail}"
            print(f"  FAILED {name}: {record['error']}", flush=True)
            return record
        record.update(result)
        print(f"  {name:36s} {result['seconds']:7.2f} s {result['bytes'] / MB / result['seconds']:7.1f} MB/s "
              f"CPU {result['cpu_seconds']:6.2f} s  disk {result['disk_write_bytes'] / MIB:6.1f} MiB  "
              f"temp peak {result['temp_dir_peak_bytes'] / MIB:5.1f} MiB  buffers "
              f"{result['native_buffer_peak_bytes'] / MIB:5.1f} MiB  RSS {result['peak_rss_bytes'] / MIB:5.0f} MiB  "
              f"{peak:2d} conns  ({time.time() - started:.0f} s)", flush=True)
        return record

    def server_log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def server_requests(self, start, end, prefix):
        """The requests s3s-fs answered between log offsets `start` and `end` on keys under
        `prefix` (the run's), by S3 operation, warm-up keys left out: s3s logs each request's
        route at debug level (RUST_LOG=s3s::ops=debug, set before the server starts)."""
        with open(self.log, "rb") as f:
            f.seek(start)
            text = f.read(max(0, end - start)).decode("utf-8", "replace")
        out = {}
        for m in ROUTE.finditer(text):
            op, key = m.group(1), m.group(2)
            if key is not None and (not key.startswith(prefix + "/") or "/warmup/" in key):
                continue
            if key is None and m.group(3) != prefix + "/":
                continue
            out[op] = out.get(op, 0) + 1
        return out

    def execute(self, cmd, env, port):
        """(stdout, stderr, exit status, peak established connections to `port`, the server
        log's offsets at MEASURE_START and MEASURE_END)."""
        marks = {}
        with tempfile.TemporaryFile("w+") as errf:
            p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf, text=True)
            timer = threading.Timer(self.a.timeout, p.kill)
            timer.start()
            watch = run.ConnectionWatch(p, port)
            lines = []
            try:
                for line in p.stdout:
                    lines.append(line)
                    mark = line.strip()
                    if mark in ("MEASURE_START", "MEASURE_END"):
                        # The worker waits for `go` after each: nothing of the measured part
                        # reaches the server before the first offset is read, nothing of the
                        # verification before the second. At MEASURE_END every measured request
                        # was answered (s3s logs its route when it arrives).
                        time.sleep(0.1 if mark == "MEASURE_END" else 0)
                        marks[mark] = self.server_log_size()
                        try:
                            p.stdin.write("go\n")
                            p.stdin.flush()
                        except OSError:  # it exited: its status and stderr tell why
                            pass
                out = "".join(lines)
                p.wait()
            except BaseException:
                p.kill()
                p.wait()
                raise
            finally:
                timer.cancel()
                watch.join()
            errf.seek(0)
            return out, errf.read(), p.returncode, watch.peak, marks


def median(xs):
    return statistics.median(xs) if xs else None


SERVER_KINDS = {"CreateMultipartUpload": "create", "UploadPart": "part", "CompleteMultipartUpload": "complete",
                "PutObject": "PUT", "HeadObject": "HEAD", "AbortMultipartUpload": "abort", "GetObject": "GET",
                "ListObjectsV2": "LIST", "DeleteObjects": "DELETE", "DeleteObject": "DELETE"}


def kinds(r):
    """Requests by kind in one name set for both lines: counted at the server when its log
    gave them, else as the client counted them."""
    if "server_requests" in r:
        out = {}
        for op, n in r["server_requests"].items():
            k = SERVER_KINDS.get(op, op)
            out[k] = out.get(k, 0) + n
        return out
    names = {"create_multipart_upload": "create", "upload_part": "part", "complete_multipart_upload": "complete",
             "put_object": "PUT", "head_object": "HEAD", "abort_multipart_upload": "abort"}
    out = {}
    for k, v in r.get("requests", {}).items():
        kind = names.get(k.partition(".")[2], k.partition(".")[2])
        out[kind] = out.get(kind, 0) + v
    return out


def summarise(runs):
    """{(profile, workload): {variant: row}} with medians over rounds and per-round ratios."""
    groups = {}
    for r in runs:
        groups.setdefault((r["profile"], r["workload"]), {}).setdefault(r["variant"], []).append(r)
    out = {}
    for key, by in groups.items():
        rate = {v: {r["round"]: r["bytes"] / r["seconds"] for r in rs if "error" not in r} for v, rs in by.items()}
        rows = {}
        for v, rs in by.items():
            good = [r for r in rs if "error" not in r]
            row = {"failed": len(rs) - len(good), "rounds": len(good)}
            if good:
                ref = rate.get(DRUID29, {})
                ratios = [rate[v][n] / ref[n] for n in rate[v] if n in ref]
                row.update(
                    seconds=median([r["seconds"] for r in good]),
                    mb_s=median([r["bytes"] / MB / r["seconds"] for r in good]),
                    ratio=median(ratios), ratio_all=ratios,
                    cpu_s=median([r["cpu_seconds"] for r in good]),
                    disk=max(r["disk_write_bytes"] for r in good),
                    temp_peak=max(r["temp_dir_peak_bytes"] for r in good),
                    temp_written=max(r["temp_dir_written_bytes"] for r in good),
                    buffers=max(r["native_buffer_peak_bytes"] for r in good),
                    rss=max(r["peak_rss_bytes"] for r in good),
                    files=good[0]["files"], bytes=good[0]["bytes"], kinds=kinds(good[0]),
                    file_sizes=good[0].get("file_sizes", []),
                    connections=median([r["peak_connections"] for r in good]),
                )
            rows[v] = row
        out[key] = rows
    return out


def fmt_mib(b):
    return f"{b / MIB:.1f}"


def goals(summary):
    """(goal, figure, met) lines: each of the issue's goals next to what the run measured."""
    lines = []
    for (profile, workload), rows in summary.items():
        ref, nat, eq = rows.get(DRUID29, {}), rows.get(NATIVE, {}), rows.get(NATIVE_EQUAL, {})
        if "ratio" not in nat or "seconds" not in ref:
            continue
        where = f"{profile}, {workload}"
        if profile == "netbound":
            lines.append((f"{where}: druid-s3native >= {NETBOUND_GOAL}x Druid 29", f"{nat['ratio']:.2f}x",
                          nat["ratio"] >= NETBOUND_GOAL))
        else:
            lines.append((f"{where}: druid-s3native vs Druid 29 (report; this machine's TLS ceiling binds)",
                          f"{nat['ratio']:.2f}x", None))
        if "ratio" in eq:
            lines.append((f"{where}: druid-s3native at Druid 29's memory ({WORKERS} x 5 MiB budget) vs Druid 29",
                          f"{eq['ratio']:.2f}x", None))
        seed = SEED_AFTER_CHUNKS * CHUNK
        lines.append((f"{where}: druid-s3native buffers <= Druid 29's chunks on disk + in flight "
                      f"(its tempDir's peak: {fmt_mib(ref['temp_peak'])} MiB)",
                      f"{fmt_mib(nat['buffers'])} MiB", nat["buffers"] <= ref["temp_peak"]))
        lines.append((f"{where}: druid-s3native buffers <= the seed's after ({SEED_AFTER_CHUNKS} chunks of 5 MiB "
                      f"on disk + in flight)", f"{fmt_mib(nat['buffers'])} MiB", nat["buffers"] <= seed))
        if "buffers" in eq:
            lines.append((f"{where}: druid-s3native at Druid 29's memory: buffers <= Druid 29's chunks on disk + in "
                          f"flight", f"{fmt_mib(eq['buffers'])} MiB", eq["buffers"] <= ref["temp_peak"]))
        lines.append((f"{where}: druid-s3native zero local disk (write_bytes, tempDir peak)",
                      f"{nat['disk']} B, {nat['temp_peak']} B", nat["disk"] == 0 and nat["temp_peak"] == 0))
        # Files that fit one chunk (the __success files, a worker's short last file): one PUT each.
        small = sum(1 for n in nat["file_sizes"] if n <= CHUNK)
        k, kr = nat["kinds"], ref["kinds"]
        one = k.get("PUT", 0) == small and k.get("create", 0) == nat["files"] - small
        lines.append((f"{where}: small outputs in one request ({small} files of at most one chunk: a PUT each)",
                      f"{k.get('PUT', 0)} PUT + {k.get('create', 0)} multipart for {nat['files'] - small} larger; "
                      f"Druid 29: {sum(kr.values())} requests for {ref['files']} files", one))
    return lines


def write_report(stem, meta, runs):
    summary = summarise(runs)
    md = [f"# Druid benchmark ({meta['started']}{'' if meta['complete'] else ', INCOMPLETE'})", "",
          f"Command: `{meta['command']}`; scale {meta['scale']:g}, {meta['rounds']} round(s); {meta['machine']}; "
          f"load {meta['load']}.", "",
          f"{WORKERS} writer threads write frame files of {meta['rows_per_page']} rows (Druid's FrameFileWriter over "
          f"connector.write, 5 MiB chunks) and a __success file each; one JVM per variant and run; TLS through "
          f"toxiproxy (s3like: {servers.PROFILES['s3like'][0]} ms, {servers.PROFILES['s3like'][1] / 1000:g} MB/s per "
          f"connection and direction; netbound: {servers.PROFILES['netbound'][0]} ms, "
          f"{servers.PROFILES['netbound'][1] / 1000:g} MB/s) to s3s-fs on tmpfs. Medians over rounds; ratio: median "
          f"of per-round throughput ratios to Druid 29; disk: /proc/self/io write_bytes (largest); temp peak: the "
          f"connector tempDir's largest size (sampled every 20 ms); buffers: s3native's peak part-buffer bytes; "
          f"requests per run counted at the server (s3s-fs's log; the clients' own counts are in the JSON).", ""]
    md.append("| profile | size | variant | MB written | wall s | MB/s | ratio | CPU s | disk MiB | temp peak MiB "
              "| staged MiB | buffers MiB | peak RSS MiB | files | requests | conns |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (profile, workload), rows in summary.items():
        for v, r in rows.items():
            if "seconds" not in r:
                md.append(f"| {profile} | {workload} | {v} | failed ({r['failed']}) |" + " |" * 12)
                continue
            ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
            if len(r["ratio_all"]) > 1:
                ratio += f" ({min(r['ratio_all']):.2f}..{max(r['ratio_all']):.2f})"
            req = ", ".join(f"{k} {n}" for k, n in r["kinds"].items())
            md.append(f"| {profile} | {workload} | {v} | {r['bytes'] / MB:.1f} | {r['seconds']:.2f} | {r['mb_s']:.1f} | {ratio} | "
                      f"{r['cpu_s']:.2f} | {fmt_mib(r['disk'])} | {fmt_mib(r['temp_peak'])} | {fmt_mib(r['temp_written'])} | "
                      f"{fmt_mib(r['buffers'])} | {r['rss'] / MIB:.0f} | {r['files']} | {req} | {r['connections']:g} |"
                      + (f" {r['failed']} failed" if r["failed"] else ""))
    md += ["", "## Goals (issue 15)", "", "| goal | measured | met |", "|---|---|---|"]
    for goal, figure, met in goals(summary):
        md.append(f"| {goal} | {figure} | {'-' if met is None else ('yes' if met else 'NO')} |")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    return "\n".join(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help=f"scale {SMOKE_SCALE:g}, one round, C1 + serial GC JVMs")
    ap.add_argument("--scale", type=float, default=None, help="multiplies both sizes (default 1; --smoke 1/16)")
    ap.add_argument("--rounds", type=int, default=None, help="measured rounds (default 3; --smoke 1)")
    ap.add_argument("--profiles", default=",".join(PROFILES), help="comma list of s3like, netbound")
    ap.add_argument("--sizes", default="all", help="comma list of 454,56.8 (default all)")
    ap.add_argument("--rows-per-page", type=int, default=ROWS_PER_PAGE, help="rows per frame file (MSQ's rowsPerPage)")
    ap.add_argument("--out", help="results folder (default benches/results; --smoke target/bench-druid-smoke)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds one run may take")
    a = ap.parse_args()
    a.scale = a.scale if a.scale is not None else (SMOKE_SCALE if a.smoke else 1.0)
    a.rounds = a.rounds or (1 if a.smoke else 3)
    a.out = a.out or os.path.join(ROOT, "target/bench-druid-smoke" if a.smoke else "benches/results")
    profiles = [p for p in a.profiles.split(",") if p]
    if any(p not in PROFILES for p in profiles):
        ap.error(f"--profiles takes {', '.join(PROFILES)}")
    sizes = {n: round(s * a.scale) for n, s in SIZES.items()
             if a.sizes == "all" or n.split()[0] in a.sizes.split(",")}
    if not sizes:
        ap.error("--sizes selected nothing")

    endpoints = servers.Endpoints(os.path.join(ROOT, "target/tools/bin"), os.path.join(ROOT, "target/bench/servers"),
                                  os.environ.get("S3NATIVE_BENCH_DATA", "/dev/shm/s3native-bench-druid"), BUCKET)
    started = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(a.out, exist_ok=True)
    stem = results.stem(a.out, "druid" + ("-smoke" if a.smoke else ""), started, fresh=not a.smoke)
    runs = []
    meta = {"started": started.isoformat(timespec="seconds"), "command": " ".join(sys.argv[1:]) or "(full run)",
            "scale": a.scale, "rounds": a.rounds, "rows_per_page": a.rows_per_page, "workers": WORKERS,
            "chunk_bytes": CHUNK, "sizes": sizes, "profiles": {p: servers.PROFILES[p] for p in profiles},
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
            "load": f"{os.getloadavg()[0]:.1f} at start", "complete": False}

    def save():
        meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        with open(stem + ".json.tmp", "w") as f:
            json.dump({"meta": meta, "runs": runs}, f, indent=1)
        os.replace(stem + ".json.tmp", stem + ".json")

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    # s3s logs each request's route at debug level: the server's request counts (Bench.server_requests).
    os.environ["RUST_LOG"] = "s3s::ops=debug"
    try:
        endpoints.start()
        bench = Bench(a, endpoints)
        for profile in profiles:
            print(f"== {profile}, TLS: {endpoints.url(profile, True)}", flush=True)
            for name, size in sizes.items():
                for rnd in range(a.rounds):
                    print(f"-- {name} ({size} B, {WORKERS} writers), round {rnd + 1}/{a.rounds}", flush=True)
                    # Odd rounds in reverse order: no variant always runs first.
                    for v in (VARIANTS if rnd % 2 == 0 else VARIANTS[::-1]):
                        rec = bench.run(v, profile, name, size)
                        rec["round"] = rnd + 1
                        runs.append(rec)
                        save()
        meta["complete"] = True
    except KeyboardInterrupt:
        print("stopped: reporting the runs so far", flush=True)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        endpoints.stop()
    save()
    print(write_report(stem, meta, runs))
    print(f"results: {stem}.json, {stem}.md")
    if not meta["complete"]:
        sys.exit(130)
    failed = [r for r in runs if "error" in r]
    if failed:
        print(f"{len(failed)} run(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
