"""The Spark application of `make demo` and `make test-spark`, run by spark-submit.

It takes every S3/committer setting from the Spark configuration (the properties file the
caller passes, i.e. what a user puts in spark-defaults.conf) and writes a JSON report;
the caller checks the objects on S3 itself.

    spark-submit --properties-file F --jars J spark/job.py demo --table lineitem \
        --source DIR --dest s3a://bucket/prefix --partition-by l_shipmode --report out.json
    spark-submit --properties-file F --jars J spark/job.py e2e --lineitem DIR \
        --base s3a://bucket/prefix [--stock-base s3a://other-bucket/prefix] --report out.json
    spark-submit --properties-file F --jars J spark/job.py tpch --warmup s3a://b/w/f1.parquet,s3a://b/w/f2.parquet \
        --queries q1 q6 --tables s3a://b/q1/f1.parquet,... s3a://b/q6/f1.parquet,... --report out.json
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
import uuid

from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import dsv2_job  # the s3native.parquet DataSource V2 scenarios (spark/tests/test_dsv2.py)


def checksum(df):
    """Row count and, per column, the sum of 64-bit hashes of its values: equal for equal
    multisets of rows whatever their order or file layout (nulls hash to the seed)."""
    aggs = [F.count(F.lit(1)).alias("__rows")]
    for c in sorted(df.columns):
        aggs.append(F.coalesce(F.sum(F.xxhash64(F.col(c)).cast("decimal(38,0)")), F.lit(0))
                    .cast("string").alias(c))
    row = df.agg(*aggs).collect()[0].asDict()
    return {"rows": int(row.pop("__rows")), "columns": row}


def native_stats(spark):
    """s3native's process-wide statistics. In local mode the executors run in the driver's
    JVM, so these count every file the tasks wrote through s3native."""
    try:
        stats = spark._jvm.io.s3native.S3NativeOutputStream.globalStatistics()
        return {str(k): int(v) for k, v in dict(stats.asMap()).items()}
    except Exception as e:  # the jar is not on the classpath: report, the caller decides
        return {"error": str(e).splitlines()[0]}


def fs_statistics(spark, uri, impl=None):
    """The counters of the FileSystem behind `uri` (S3A's IOStatistics; on s3native's, with its
    s3native.* totals). In local mode the tasks use the driver's cached instance, so these
    include every write of the job to that bucket. `impl`: the fs.s3a.impl to create it with
    when it is not cached yet."""
    try:
        jvm = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(uri)
        conf = jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration())
        if impl:
            conf.set("fs.s3a.impl", impl)
        stats = path.getFileSystem(conf).getIOStatistics()
        return {str(k): int(v) for k, v in dict(stats.counters()).items()}
    except Exception as e:
        return {"error": str(e).splitlines()[0]}


READ_COUNTERS_PREFIXES = ("stream_read_", "action_http_get_request", "action_http_head_request",
                          "object_metadata_request", "s3native.gets_", "s3native.object_head")


def read_stats(spark, uri):
    """How the FileSystem behind `uri` read so far: on NativeS3AFileSystem, the files it opened
    natively and through stock S3A and the bytes its native streams handed over (each stream
    adds them at close: Spark closes a task's streams before the task ends); on any S3A, its
    read counters (IOStatistics; S3A's names, which the native streams add to at close)."""
    try:
        jvm = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
        out = {"filesystem": fs.getClass().getName()}
        counters = dict(fs.getIOStatistics().counters())
        out["counters"] = {str(k): int(v) for k, v in counters.items()
                           if str(k).startswith(READ_COUNTERS_PREFIXES)}
        if out["filesystem"] == "io.s3native.hadoop.NativeS3AFileSystem":
            out.update(native_opens=int(fs.getNativeOpenCount()), stock_opens=int(fs.getStockOpenCount()),
                       native_bytes_read=int(fs.getNativeBytesRead()))
        return out
    except Exception as e:
        return {"error": str(e).splitlines()[0]}


def read_delta(before, after):
    """after - before of read_stats (counters that changed only)."""
    if "error" in before or "error" in after:
        return {"error": after.get("error") or before.get("error")}
    out = {k: after[k] - before.get(k, 0) for k in ("native_opens", "stock_opens", "native_bytes_read") if k in after}
    out["filesystem"] = after["filesystem"]
    out["counters"] = {k: v - before["counters"].get(k, 0) for k, v in after["counters"].items()
                       if v != before["counters"].get(k, 0)}
    return out


def read_back(spark, uri):
    """checksum() of the Parquet table at `uri`, and how it was read (read_delta)."""
    before = read_stats(spark, uri)
    back = checksum(spark.read.parquet(uri))
    return back, read_delta(before, read_stats(spark, uri))


def fs_classes(spark, uri):
    """The FileSystem class behind `uri`, and the AbstractFileSystem behind FileContext."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fc = jvm.org.apache.hadoop.fs.FileContext.getFileContext(path.toUri(), conf)
    return {"filesystem": path.getFileSystem(conf).getClass().getName(),
            "filecontext": fc.getDefaultFileSystem().getClass().getName()}


def versions(spark):
    jvm = spark._jvm
    return {"spark": spark.version, "hadoop": jvm.org.apache.hadoop.util.VersionInfo.getVersion()}


# ---- demo -----------------------------------------------------------------------------

def demo(spark, args):
    src = spark.read.parquet(args.source)
    source_sum = checksum(src)
    before = native_stats(spark)
    start = time.monotonic()
    writer = src.write.mode("overwrite")
    if args.partition_by:
        writer = writer.partitionBy(args.partition_by)
    # parquet: Spark's own writer through the filesystem; s3native.parquet: the DataSource V2
    # write, rows to Arrow, encoded and uploaded natively, completed at job commit.
    writer.format(args.format).save(args.dest)
    wall = time.monotonic() - start
    after = native_stats(spark)
    back, reads = read_back(spark, args.dest)
    return {"table": args.table, "dest": args.dest, "partition_by": args.partition_by, "format": args.format,
            "wall_s": wall, "source": source_sum, "readback": back, "readback_reads": reads,
            "native_before": before, "native_after": after,
            "classes": fs_classes(spark, args.dest), "versions": versions(spark)}


# ---- end-to-end scenarios ---------------------------------------------------------------

# Rows of the synthetic table used by the failure scenarios: ~200 bytes a row of hex that
# Parquet cannot shrink much, so a task writes several 5 MiB parts before it fails.
FAIL_ROWS = 100_000


def wide(spark, rows):
    return (spark.range(0, rows, numPartitions=2)
            .select("id",
                    F.sha2(F.col("id").cast("string"), 256).alias("h256"),
                    F.sha2(F.col("id").cast("string"), 512).alias("h512")))


def failing_udf(marker_dir, partition, attempts):
    """A UDF that raises in `partition` on the task attempts in `attempts` (None = all),
    after 80% of that partition's rows went to the writer; each raise leaves a marker file."""
    fail_at = FAIL_ROWS // 2 * 4 // 5

    def fn(i):
        ctx = TaskContext.get()
        if (ctx.partitionId() == partition and i % (FAIL_ROWS // 2) >= fail_at
                and (attempts is None or ctx.attemptNumber() in attempts)):
            open(os.path.join(marker_dir, f"p{partition}-a{ctx.attemptNumber()}"), "w").close()
            raise RuntimeError(f"injected failure in partition {partition}, "
                               f"attempt {ctx.attemptNumber()}")
        return i
    return F.udf(fn, "long")


def small_row_groups(df, sweep=True):
    """A writer with 1 MiB row groups, so bytes reach the S3 stream long before the task
    ends. sweep=False leaves the clean-up of a failed task attempt to task abort alone
    (job commit does not abort the uploads still pending under the destination), so an
    upload the failed attempt leaked would show."""
    w = df.write.mode("overwrite").option("parquet.block.size", str(1 << 20))
    return w if sweep else w.option("fs.s3a.committer.abort.pending.uploads", "false")


def scenario_unpartitioned(spark, args):
    src = spark.read.parquet(args.lineitem)
    dest = f"{args.base}/unpartitioned"
    src.write.mode("overwrite").parquet(dest)
    back, reads = read_back(spark, dest)
    return {"dest": dest, "source": checksum(src), "readback": back, "readback_reads": reads}


def scenario_partitioned(spark, args):
    src = spark.read.parquet(args.lineitem)
    dest = f"{args.base}/partitioned"
    src.write.mode("overwrite").partitionBy("l_returnflag").parquet(dest)
    back, reads = read_back(spark, dest)
    return {"dest": dest, "source": checksum(src), "readback": back, "readback_reads": reads}


def scenario_empty(spark, args):
    dest = f"{args.base}/empty"
    df = spark.createDataFrame([], "id long, name string")
    df.write.mode("overwrite").parquet(dest)
    back = spark.read.parquet(dest)
    return {"dest": dest, "source": checksum(df), "readback": checksum(back),
            "schema": back.schema.simpleString()}


def scenario_retry(spark, args):
    dest = f"{args.base}/retry"
    markers = tempfile.mkdtemp(prefix="s3native-retry-")
    try:
        df = wide(spark, FAIL_ROWS)
        fail = failing_udf(markers, 0, {0})
        small_row_groups(df.withColumn("id", fail("id")), sweep=False).parquet(dest)
        return {"dest": dest, "source": checksum(df), "readback": checksum(spark.read.parquet(dest)),
                "injected_failures": sorted(os.listdir(markers))}
    finally:
        shutil.rmtree(markers, ignore_errors=True)


def scenario_failed_job(spark, args):
    dest = f"{args.base}/failed"
    markers = tempfile.mkdtemp(prefix="s3native-fail-")
    try:
        fail = failing_udf(markers, 1, None)
        try:
            # A failed job may leave uploads of killed tasks that never closed their
            # stream: job abort sweeps them (fs.s3a.committer.abort.pending.uploads,
            # default true), as on a real cluster.
            small_row_groups(wide(spark, FAIL_ROWS).withColumn("id", fail("id"))).parquet(dest)
            error = None
        except Exception as e:
            error = f"{type(e).__name__}: {str(e).strip()[:300]}"
        return {"dest": dest, "job_error": error, "injected_failures": sorted(os.listdir(markers))}
    finally:
        shutil.rmtree(markers, ignore_errors=True)


def scenario_streaming(spark, args):
    """A file-source to file-sink stream whose checkpoint lives on s3a://: Spark's
    checkpoint manager goes through FileContext, i.e. fs.AbstractFileSystem.s3a.impl.
    Two runs with availableNow; the second must resume from the checkpoint."""
    src_dir = tempfile.mkdtemp(prefix="s3native-stream-")
    checkpoint, out = f"{args.base}/stream/checkpoint", f"{args.base}/stream/out"
    try:
        lineitem = spark.read.parquet(args.lineitem)
        halves = lineitem.randomSplit([0.5, 0.5], seed=7)
        batches = []
        for n, half in enumerate(halves):
            half.write.parquet(os.path.join(src_dir, f"batch{n}"))
            query = (spark.readStream.schema(lineitem.schema)
                     .parquet(os.path.join(src_dir, "batch*"))
                     .writeStream.format("parquet")
                     .option("checkpointLocation", checkpoint).option("path", out)
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            progress = query.lastProgress or {}
            batches.append({"batch_id": progress.get("batchId"),
                            "rows": progress.get("numInputRows")})
        jvm = spark._jvm
        conf = spark._jsc.hadoopConfiguration()
        cp = jvm.org.apache.hadoop.fs.Path(checkpoint)
        fc = jvm.org.apache.hadoop.fs.FileContext.getFileContext(cp.toUri(), conf)
        listing = {}
        for sub in ("offsets", "commits"):
            it = fc.listStatus(jvm.org.apache.hadoop.fs.Path(f"{checkpoint}/{sub}"))
            names = []
            while it.hasNext():
                names.append(it.next().getPath().getName())
            listing[sub] = sorted(names)
        back, reads = read_back(spark, out)
        return {"checkpoint": checkpoint, "dest": out, "runs": batches, "checkpoint_files": listing,
                "source": checksum(lineitem), "readback": back, "readback_reads": reads,
                "classes": fs_classes(spark, checkpoint)}
    finally:
        shutil.rmtree(src_dir, ignore_errors=True)


def scenario_stock_twin(spark, args):
    """The unpartitioned and partitioned writes again, to another bucket through stock
    S3AFileSystem (fs.s3a.impl as a write option: the bucket's first FileSystem is created with
    it and cached), so the tests can compare _SUCCESS and the filesystem's IOStatistics with
    what stock S3A shows for the same job. Skipped without --stock-base."""
    if not args.stock_base:
        return {"skipped": "no --stock-base"}
    src = spark.read.parquet(args.lineitem)
    stock = "org.apache.hadoop.fs.s3a.S3AFileSystem"
    out = {}
    for name, partition_by in (("unpartitioned", None), ("partitioned", "l_returnflag")):
        dest = f"{args.stock_base}/{name}"
        before = fs_statistics(spark, dest, stock)
        w = src.write.mode("overwrite").option("fs.s3a.impl", stock)
        if partition_by:
            w = w.partitionBy(partition_by)
        w.parquet(dest)
        out[name] = {"dest": dest, "fs_before": before, "fs_after": fs_statistics(spark, dest, stock),
                     "classes": fs_classes(spark, dest)}
    return out


def task_output_bytes(spark, group):
    """outputMetrics.bytesWritten of every task of the jobs run under job group `group`, as
    Spark's status store has them (what its UI and REST API show): {"stages": [{"stage",
    "tasks": [{"index", "attempt", "status", "bytes"}]}]}, stages in id order. The store is
    fed by the listener bus, so this waits for the bus to be empty first."""
    jsc = spark.sparkContext._jsc.sc()
    jsc.listenerBus().waitUntilEmpty()
    tracker = spark.sparkContext.statusTracker()
    store = jsc.statusStore()
    stages = []
    for job in sorted(tracker.getJobIdsForGroup(group)):
        for stage in sorted(tracker.getJobInfo(job).stageIds):
            info = tracker.getStageInfo(stage)
            if info is None:  # a stage skipped (its shuffle output reused)
                continue
            seq = store.taskList(stage, info.currentAttemptId, 1 << 20)
            tasks = []
            for i in range(seq.size()):
                t = seq.apply(i)
                m = t.taskMetrics()
                tasks.append({"index": t.index(), "attempt": t.attempt(), "status": t.status(),
                              "bytes": m.get().outputMetrics().bytesWritten() if m.isDefined() else None})
            stages.append({"stage": stage, "tasks": sorted(tasks, key=lambda t: (t["index"], t["attempt"]))})
    return {"stages": stages}


# The task-metrics job: small, several tasks, each writing one file.
METRICS_TASKS = 4


def task_metrics_of(spark, write):
    """Runs write() in a job group of its own; returns task_output_bytes of its jobs."""
    sc = spark.sparkContext
    group = f"task-metrics-{uuid.uuid4().hex[:8]}"
    sc.setJobGroup(group, "task metrics")
    try:
        write()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return task_output_bytes(spark, group)


def metrics_writes(spark, base, impl=None):
    """The same two writes to `base`: a DataFrame written as Parquet (Spark SQL's file writer:
    outputMetrics from the files' lengths, or on a magic path from the marker's length header)
    and an RDD written with the new Hadoop API's TextOutputFormat (SparkHadoopWriter:
    outputMetrics from the task thread's FileSystem.Statistics). `impl`: the fs.s3a.impl the
    bucket's FileSystem is created with when it is not cached yet."""
    df_dest, rdd_dest = f"{base}/dataframe", f"{base}/rdd"
    if impl:
        fs_statistics(spark, df_dest, impl)  # creates the bucket's FileSystem with impl (cached)
    df = spark.range(0, 40_000, numPartitions=METRICS_TASKS).select(
        "id", F.sha2(F.col("id").cast("string"), 256).alias("h"))
    rdd = spark.sparkContext.parallelize(range(40_000), METRICS_TASKS).map(lambda i: (None, f"line {i:08d}"))
    w = df.write.mode("overwrite")
    if impl:
        w = w.option("fs.s3a.impl", impl)
    out = {"dataframe": {"dest": df_dest, **task_metrics_of(spark, lambda: w.parquet(df_dest))},
           "rdd": {"dest": rdd_dest, **task_metrics_of(spark, lambda: rdd.saveAsNewAPIHadoopFile(
               rdd_dest, "org.apache.hadoop.mapreduce.lib.output.TextOutputFormat",
               keyClass="org.apache.hadoop.io.NullWritable", valueClass="org.apache.hadoop.io.Text",
               conf={"fs.s3a.impl": impl} if impl else None))}}
    for o in out.values():
        o["classes"] = fs_classes(spark, o["dest"])
    return out


def scenario_task_metrics(spark, args):
    """Spark's task output metrics (bytesWritten) of the same small jobs through the filesystem
    under test and, with --stock-base, through stock S3AFileSystem."""
    out = {"ours": metrics_writes(spark, f"{args.base}/metrics")}
    if args.stock_base:
        out["stock"] = metrics_writes(spark, f"{args.stock_base}/metrics", "org.apache.hadoop.fs.s3a.S3AFileSystem")
    return out


SCENARIOS = {
    "unpartitioned": scenario_unpartitioned,
    "partitioned": scenario_partitioned,
    "empty": scenario_empty,
    "retry": scenario_retry,
    "failed_job": scenario_failed_job,
    "streaming": scenario_streaming,
    "stock_twin": scenario_stock_twin,
    "task_metrics": scenario_task_metrics,
    **dsv2_job.E2E,
}


def e2e(spark, args):
    report = {"versions": versions(spark), "classes": fs_classes(spark, args.base), "scenarios": {}}
    for name in args.only or SCENARIOS:
        before = native_stats(spark)
        fs_before = fs_statistics(spark, args.base)
        start = time.monotonic()
        try:
            result = SCENARIOS[name](spark, args)
        except Exception:
            result = {"error": traceback.format_exc()[-3000:]}
        result["wall_s"] = time.monotonic() - start
        result["native_before"], result["native_after"] = before, native_stats(spark)
        result["fs_before"], result["fs_after"] = fs_before, fs_statistics(spark, args.base)
        report["scenarios"][name] = result
        print(f"job.py: scenario {name}: {'error' if 'error' in result else 'done'} "
              f"in {result['wall_s']:.1f}s", file=sys.stderr, flush=True)
    return report


# ---- TPC-H Q1 and Q6 (the read benchmark's Spark cell, benches/harness/read_bench.py) ----------

TPCH = {
    "q1": """
        SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
               sum(l_extendedprice) AS sum_base_price,
               sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
               sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
               avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price,
               avg(l_discount) AS avg_disc, count(*) AS count_order
        FROM lineitem
        WHERE l_shipdate <= date '1998-12-01' - interval '90' day
        GROUP BY l_returnflag, l_linestatus
        ORDER BY l_returnflag, l_linestatus""",
    "q6": """
        SELECT sum(l_extendedprice * l_discount) AS revenue
        FROM lineitem
        WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1994-01-01' + interval '1' year
          AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24""",
}


def jvm_cpu_seconds():
    """CPU seconds of the driver JVM so far (user + system, every thread; in local mode the
    executors are its threads). spark-submit's JVM runs this Python driver as its child, so it
    is the parent process; None where /proc does not tell."""
    try:
        ppid = os.getppid()
        with open(f"/proc/{ppid}/cmdline", "rb") as f:
            if b"java" not in f.read().split(b"\0")[0]:
                return None
        with open(f"/proc/{ppid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def table_files(spark, uris):
    """(files, bytes) of the Parquet files `uris` (one HEAD each, before the timing)."""
    jvm = spark._jvm
    size = 0
    for uri in uris:
        path = jvm.org.apache.hadoop.fs.Path(uri)
        size += path.getFileSystem(spark._jsc.hadoopConfiguration()).getFileStatus(path).getLen()
    return len(uris), size


def run_query(spark, name, table):
    """TPC-H query `name` over the lineitem files `table` (comma-separated URIs: the files, not
    their directory, so no store is asked for a directory's status), timed from reading the
    table (its schema) to the last result row; the result rows as strings, wall and CPU
    seconds, read statistics."""
    uris = table.split(",")
    before, cpu0 = read_stats(spark, uris[0]), jvm_cpu_seconds()
    t0 = time.monotonic()
    spark.read.parquet(*uris).createOrReplaceTempView("lineitem")
    rows = [[str(v) for v in row] for row in spark.sql(TPCH[name]).collect()]
    wall = time.monotonic() - t0
    cpu1 = jvm_cpu_seconds()
    return {"query": name, "table": table, "wall_s": wall,
            "cpu_s": None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
            "result": rows, "reads": read_delta(before, read_stats(spark, uris[0]))}


def tpch(spark, args):
    """Each query once over the warm-up copy (JIT, connections, TLS sessions; not reported),
    then each over a copy of its own (S3A's analytics stream keeps what it fetched for later
    streams of the same object)."""
    warmup = [run_query(spark, q, args.warmup) for q in args.queries]
    measured = []
    for q, table in zip(args.queries, args.tables):
        files, size = table_files(spark, table.split(","))
        r = run_query(spark, q, table)
        r.update(files=files, file_bytes=size)
        measured.append(r)
        print(f"job.py: {q} over {files} files: {r['wall_s']:.2f} s", file=sys.stderr, flush=True)
    return {"versions": versions(spark), "classes": fs_classes(spark, args.warmup.split(",")[0]),
            "warmup": [{"query": w["query"], "wall_s": w["wall_s"], "result": w["result"]} for w in warmup],
            "queries": measured}


def jvm_status_bytes(field):
    """A /proc/<driver JVM>/status figure in bytes (VmRSS, VmHWM), as jvm_cpu_seconds finds the JVM."""
    with open(f"/proc/{os.getppid()}/status") as f:
        line = next(x for x in f if x.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def encode(spark, args):
    """The Parquet encoder bench's Spark route (benches/harness/parquet_bench.py): each table
    read from local Parquet and cached in memory, then written once as a warm-up sample and
    once measured by Spark's own Parquet writer to --dest through the configured s3a://
    FileSystem: wall and driver-JVM CPU seconds of the measured write, the JVM's peak RSS over
    its RSS at the start of it (VmHWM reset through clear_refs) and rows (the harness lists
    the output)."""
    out = []
    for name, source, dest in zip(args.tables, args.sources, args.dests):
        df = spark.read.parquet(source).cache()
        rows = df.count()
        df.limit(args.warmup_rows).write.parquet(dest + "-warmup")
        with open(f"/proc/{os.getppid()}/clear_refs", "w") as f:
            f.write("5")
        rss0, cpu0 = jvm_status_bytes("VmRSS"), jvm_cpu_seconds()
        t0 = time.monotonic()
        df.write.parquet(dest)
        wall = time.monotonic() - t0
        cpu = jvm_cpu_seconds() - cpu0
        peak = jvm_status_bytes("VmHWM") - rss0
        out.append({"table": name, "seconds": wall, "cpu_seconds": cpu, "peak_rss_over_start_bytes": max(0, peak),
                    "start_rss_bytes": rss0, "rows": rows, "dest": dest, "filesystem": fs_classes(spark, dest)["filesystem"]})
        df.unpersist()
        print(f"job.py: encode {name}: {wall:.2f} s", file=sys.stderr, flush=True)
    return {"versions": versions(spark), "tables": out}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("demo")
    d.add_argument("--table", required=True)
    d.add_argument("--source", required=True)
    d.add_argument("--dest", required=True)
    d.add_argument("--partition-by")
    d.add_argument("--format", default="parquet", choices=("parquet", "s3native.parquet"))
    d.add_argument("--report", required=True)
    e = sub.add_parser("e2e")
    e.add_argument("--lineitem", required=True)
    e.add_argument("--base", required=True)
    e.add_argument("--only", nargs="*", choices=sorted(SCENARIOS))
    e.add_argument("--stock-base", help="s3a:// prefix in another bucket for the stock-S3A twin writes")
    e.add_argument("--report", required=True)
    t = sub.add_parser("tpch")
    t.add_argument("--warmup", required=True, help="the lineitem copy for the warm-up queries: its files' s3a:// URIs, comma-separated")
    t.add_argument("--queries", nargs="+", choices=sorted(TPCH), required=True)
    t.add_argument("--tables", nargs="+", required=True, help="a lineitem copy per query, in order (as --warmup)")
    t.add_argument("--report", required=True)
    c = sub.add_parser("encode")
    c.add_argument("--tables", nargs="+", required=True, help="the tables' names")
    c.add_argument("--sources", nargs="+", required=True, help="each table's local Parquet directory, in order")
    c.add_argument("--dests", nargs="+", required=True, help="each table's s3a:// destination, in order")
    c.add_argument("--warmup-rows", type=int, default=262144)
    c.add_argument("--report", required=True)
    args = ap.parse_args()
    if args.mode == "encode" and not len(args.tables) == len(args.sources) == len(args.dests):
        ap.error("one --sources and one --dests entry per table")
    if args.mode == "tpch" and len(args.tables) != len(args.queries):
        ap.error("one --tables entry per query")

    spark = SparkSession.builder.appName(f"s3native-{args.mode}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        report = {"demo": demo, "e2e": e2e, "tpch": tpch, "encode": encode}[args.mode](spark, args)
    finally:
        spark.stop()
    with open(args.report, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
