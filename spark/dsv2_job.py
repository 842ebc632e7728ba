"""The scenarios of the s3native.parquet DataSource V2 write (spark/tests/test_dsv2.py). They
run inside spark/job.py's e2e run (E2E: one spark-submit per Spark line, no start-up of their
own), with s3native's jar and arrow-c-data at the line's arrow-vector version on the
classpath (sparkconf.jars). Each writes under <base>/dsv2 and records what Spark saw; the
test checks S3 itself. Alone, for a manual run:

    spark-submit --properties-file F --jars J spark/dsv2_job.py --base s3a://bucket/prefix --report out.json
"""
import argparse
import datetime as dt
import decimal
import json
import traceback

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

FORMAT = "s3native.parquet"

SCHEMA = T.StructType([
    T.StructField("id", T.LongType(), False),
    T.StructField("k", T.StringType()),
    T.StructField("p", T.IntegerType()),
    T.StructField("b", T.ByteType()),
    T.StructField("s", T.ShortType()),
    T.StructField("i", T.IntegerType()),
    T.StructField("f", T.FloatType()),
    T.StructField("d", T.DoubleType()),
    T.StructField("dec", T.DecimalType(10, 2)),
    T.StructField("bigdec", T.DecimalType(38, 6)),
    T.StructField("str", T.StringType()),
    T.StructField("bin", T.BinaryType()),
    T.StructField("flag", T.BooleanType()),
    T.StructField("day", T.DateType()),
    T.StructField("ts", T.TimestampType()),
    T.StructField("ntz", T.TimestampNTZType()),
    T.StructField("arr", T.ArrayType(T.IntegerType())),
    T.StructField("st", T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())])),
    T.StructField("m", T.MapType(T.StringType(), T.LongType())),
])


def row(n):
    """Row n of the typed table; every 7th value of a nullable column is null."""
    null = n % 7 == 3
    base = dt.datetime(2024, 2, 29, 23, 59, 58, 123456)
    return (
        n, ["AIR", "RAIL", "SHIP", None][n % 4], n % 3,
        None if null else (n % 256) - 128, None if null else (n % 65536) - 32768, None if null else n * 7 - 100000,
        None if null else n / 3.0, None if null else n * 1.0e10 / 7.0,
        None if null else decimal.Decimal(n * 13 - 5000).scaleb(-2),
        None if null else decimal.Decimal(n * 1234567891).scaleb(-6),
        None if null else f"row {n} \u00e9\u4e2d" * (n % 5),
        None if null else bytes([n % 256, (n * 7) % 256]) * (n % 4),
        None if null else n % 2 == 0,
        None if null else dt.date(1969, 12, 1) + dt.timedelta(days=n),
        None if null else base + dt.timedelta(seconds=n * 37, microseconds=n),
        None if null else dt.datetime(1900, 1, 1) + dt.timedelta(minutes=n, microseconds=n * 3),
        None if null else [n, None, -n][: n % 4],
        None if null else (n, None if n % 2 else f"s{n}"),
        None if null else {f"k{n % 3}": n, "z": None},
    )


def typed(spark, rows):
    return spark.createDataFrame([row(n) for n in range(rows)], SCHEMA)


def canon(rows, columns):
    """Rows as comparable, sorted tuples (maps as sorted items)."""
    out = []
    for r in rows:
        t = []
        for c in columns:
            v = r[c]
            if isinstance(v, dict):
                v = sorted(v.items())
            elif isinstance(v, T.Row):
                v = tuple(v)
            elif isinstance(v, (bytes, bytearray)):
                v = bytes(v)
            t.append(v)
        out.append(tuple(t))
    return sorted(out, key=lambda t: t[0])


def scenario_types(spark, base):
    """Every common Spark type, partitioned by a string and an int column (nulls among the
    string values), several batches per file; read back by Spark's own parquet reader."""
    src = typed(spark, 2000).repartition(3)
    path = f"{base}/types"
    src.write.format(FORMAT).mode("overwrite").option("batchRows", "300").partitionBy("k", "p").save(path)
    back = spark.read.parquet(path)
    cols = [f.name for f in SCHEMA.fields]
    same = canon(back.select(*cols).collect(), cols) == canon(src.collect(), cols)
    # The schema Spark reads from our files against the one it reads from its own (INT64 micros).
    ref = f"{base}/types-spark"
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    src.write.mode("overwrite").partitionBy("k", "p").parquet(ref)
    ref_schema = spark.read.parquet(ref).schema
    jvm = spark._jvm
    jpath = jvm.org.apache.hadoop.fs.Path(f"{path}/_SUCCESS")
    fs = jpath.getFileSystem(spark._jsc.hadoopConfiguration())
    success = jvm.org.apache.hadoop.fs.s3a.commit.files.SuccessData.load(fs, jpath)
    return {"path": path, "rows": back.count(), "same_rows": same,
            "schema": back.schema.jsonValue(), "spark_schema": ref_schema.jsonValue(),
            "success_filenames": len(list(success.getFilenames())), "success_committer": success.getCommitter(),
            "partitions": sorted({(r["k"], r["p"]) for r in back.select("k", "p").distinct().collect()}, key=str)}


def scenario_modes(spark, base):
    """errorIfExists on a new path writes, on an existing one fails; ignore leaves it;
    append adds; overwrite replaces."""
    path = f"{base}/modes"
    one = spark.range(100).selectExpr("id", "id % 2 AS k")
    out = {}
    one.write.format(FORMAT).save(path)  # the default mode: errorIfExists
    out["after_create"] = spark.read.parquet(path).count()
    try:
        one.write.format(FORMAT).mode("errorifexists").save(path)
        out["error_if_exists"] = None
    except Exception as e:
        msg = str(e)
        out["error_if_exists"] = "already exists" if "already exists" in msg else msg[-500:]
    spark.range(5).selectExpr("id", "0 AS k").write.format(FORMAT).mode("ignore").save(path)
    out["after_ignore"] = spark.read.parquet(path).count()
    ignored = f"{base}/modes-ignore-new"
    spark.range(5).selectExpr("id", "0 AS k").write.format(FORMAT).mode("ignore").save(ignored)
    out["ignore_new"] = spark.read.parquet(ignored).count()
    one.write.format(FORMAT).mode("append").save(path)
    out["after_append"] = spark.read.parquet(path).count()
    spark.range(7).selectExpr("id + 1000 AS id", "1 AS k").write.format(FORMAT).mode("overwrite").partitionBy("k").save(path)
    back = spark.read.parquet(path)
    out["after_overwrite"] = back.count()
    out["overwrite_ids"] = sorted(r["id"] for r in back.select("id").collect())
    out["path"] = path
    return out


def scenario_batch_bytes(spark, base):
    """One file of 5,000 rows whose batches end at batchBytes (checked every 1,024 rows), not at
    batchRows; and batchBytes=0 refused before any task runs."""
    path = f"{base}/batch-bytes"
    src = spark.range(5000).selectExpr("id", "repeat(cast(id AS string), 20) AS s").coalesce(1)
    src.write.format(FORMAT).mode("overwrite").option("batchRows", "1000000").option("batchBytes", "1").save(path)
    back = spark.read.parquet(path)
    out = {"path": path, "rows": back.count(),
           "same_rows": canon(back.select("id", "s").collect(), ["id", "s"]) == canon(src.collect(), ["id", "s"])}
    try:
        src.write.format(FORMAT).mode("overwrite").option("batchBytes", "0").save(f"{base}/batch-bytes-0")
        out["zero"] = None
    except Exception as e:
        out["zero"] = str(e)[-500:]
    return out


def scenario_failing(spark, base, marker):
    """One task throws after several 5 MiB parts went up; the job fails and every upload, of
    the failed attempts and of the tasks that committed, is aborted."""
    path = f"{base}/failing"

    def boom(i):
        if i == 70_000:
            raise RuntimeError("s3native test: the task fails mid-write")
        return i

    fail = F.udf(boom, T.LongType())
    big = spark.range(0, 80_000, numPartitions=2).select(
        fail("id").alias("id"),
        F.concat(*[F.sha2(F.concat(F.col("id").cast("string"), F.lit(str(j))), 256) for j in range(4)]).alias("pad"))
    jstats = spark._jvm.io.s3native.S3NativeOutputStream.globalStatistics
    before = {str(k): int(v) for k, v in dict(jstats().asMap()).items()}
    try:
        # 1 MiB row groups and batches of 8,192 rows (2 MiB here; the default 65,536 would
        # hold the failing task's 30,000 rows in one unfinished batch): the encoder hands its
        # bytes to the writer as it goes, so parts of the failing file are uploaded before the
        # task fails.
        (big.write.format(FORMAT).mode("overwrite").option("compression", "none")
         .option("parquet.block.size", str(1 << 20)).option("batchRows", "8192").save(path))
        out = {"failed": False}
    except Exception as e:
        out = {"failed": True, "cause_seen": "the task fails mid-write" in str(e)}
    after = {str(k): int(v) for k, v in dict(jstats().asMap()).items()}
    out.update(path=path, **{k: after.get(k, 0) - before.get(k, 0) for k in
                             ("parts_uploaded", "requests.create_multipart_upload", "requests.abort_multipart_upload",
                              "requests.complete_multipart_upload")})
    return out


def scenario_complete_fails(spark, base):
    """The complete of one file fails at job commit (test hook): the job fails, the files
    already completed are deleted and every other upload is aborted."""
    path = f"{base}/complete-fails"
    df = spark.range(0, 4000, numPartitions=4).selectExpr("id", "id % 3 AS v")
    try:
        (df.write.format(FORMAT).mode("overwrite")
         .option("s3native.parquet.test.fail.complete", "part-00002-").save(path))
        out = {"failed": False}
    except Exception as e:
        out = {"failed": True, "cause_seen": "test fault" in str(e)}
    out["path"] = path
    return out


def start_upload(spark, uri):
    """Initiate a multipart upload of uri (Hadoop's MultipartUploader) and leave it pending."""
    jvm = spark._jvm
    p = jvm.org.apache.hadoop.fs.Path(uri)
    fs = p.getFileSystem(spark._jsc.hadoopConfiguration())
    uploader = fs.createMultipartUploader(p.getParent()).build()
    uploader.startUpload(p).get()
    uploader.close()


def scenario_lost_task(spark, base, sweep):
    """Uploads a lost task of this job left (initiated under the output before the job commit,
    named as the job's files) are aborted by the job commit's sweep, unless
    fs.s3a.committer.abort.pending.uploads is false; another job's are never touched."""
    import uuid
    path = f"{base}/lost-{'sweep' if sweep else 'nosweep'}"
    job, other = str(uuid.uuid4()), str(uuid.uuid4())
    lost = [f"{path}/part-00042-{job}-7.c000.snappy.parquet", f"{path}/k=1/part-00043-{job}-8.c000.snappy.parquet"]
    foreign = [f"{path}/part-00042-{other}-7.c000.snappy.parquet"]
    for u in lost + foreign:
        start_upload(spark, u)
    (spark.range(0, 100, numPartitions=2).selectExpr("id", "id % 2 AS v").write.format(FORMAT).mode("overwrite")
     .option("spark.sql.sources.writeJobUUID", job)
     .option("fs.s3a.committer.abort.pending.uploads", str(sweep).lower()).save(path))
    return {"path": path, "rows": spark.read.parquet(path).count(), "job": job,
            "lost": [u.split("/", 3)[3] for u in lost], "foreign": [u.split("/", 3)[3] for u in foreign]}


def supported(spark):
    """The Spark lines the format is built for (sparkconf.DSV2_LINES)."""
    import sparkconf
    return any(spark.version.startswith(l + ".") for l in sparkconf.DSV2_LINES)


def e2e_scenario(fn):
    """A scenario of spark/job.py's e2e run (the Spark test run of each line), under <base>/dsv2."""
    def run(spark, args):
        if not supported(spark):
            return {"skipped": f"s3native.parquet is not built for Spark {spark.version}"}
        return fn(spark, args.base + "/dsv2")
    return run


def scenario_types_in_zone(spark, base):
    """scenario_types in a session time zone other than the JVM's (UTC here)."""
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        return scenario_types(spark, base)
    finally:
        spark.conf.set("spark.sql.session.timeZone", old)
        spark.conf.unset("spark.sql.parquet.outputTimestampType")


E2E = {"dsv2_types": e2e_scenario(scenario_types_in_zone),
       "dsv2_modes": e2e_scenario(scenario_modes),
       "dsv2_batch_bytes": e2e_scenario(scenario_batch_bytes),
       "dsv2_failing": e2e_scenario(lambda spark, base: scenario_failing(spark, base, None)),
       "dsv2_complete_fails": e2e_scenario(scenario_complete_fails),
       "dsv2_lost_task": e2e_scenario(lambda spark, base: scenario_lost_task(spark, base, True)),
       "dsv2_lost_task_nosweep": e2e_scenario(lambda spark, base: scenario_lost_task(spark, base, False))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    spark = SparkSession.builder.appName("s3native-dsv2").getOrCreate()
    report = {"spark": spark.version, "scenarios": {}}
    scenarios = {"types": lambda: scenario_types(spark, args.base),
                 "modes": lambda: scenario_modes(spark, args.base),
                 "failing": lambda: scenario_failing(spark, args.base, None)}
    for name, fn in scenarios.items():
        if args.only and name not in args.only:
            continue
        try:
            report["scenarios"][name] = fn()
        except Exception:
            report["scenarios"][name] = {"exception": traceback.format_exc()[-4000:]}
    stats = spark._jvm.io.s3native.S3NativeOutputStream.globalStatistics()
    report["native"] = {str(k): int(v) for k, v in dict(stats.asMap()).items()}
    with open(args.report, "w") as f:
        json.dump(report, f, indent=1, default=str)
    spark.stop()


if __name__ == "__main__":
    main()
