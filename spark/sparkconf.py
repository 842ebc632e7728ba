"""What `make demo` and `make test-spark` share: Spark lines, the spark-defaults.conf a user
would write, spark-submit, and the checks of what a job left on S3 (boto3, S3's own view)."""
import json
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPARK = os.path.join(ROOT, "target", "spark")
JOB = os.path.join(ROOT, "spark", "job.py")

# Spark line -> (Hadoop inside its pyspark, Scala); scripts/spark-setup.sh pins the versions.
LINES = {"3.5": ("3.3.4", "2.12"), "4.0": ("3.4.1", "2.13"), "4.1": ("3.4.2", "2.13"),
         "4.2": ("3.5.0", "2.13"), "4.3": ("3.5.0", "2.13")}

STOCK_FS = "org.apache.hadoop.fs.s3a.S3AFileSystem"
STOCK_AFS = "org.apache.hadoop.fs.s3a.S3A"
NATIVE_FS = "io.s3native.hadoop.NativeS3AFileSystem"
NATIVE_AFS = "io.s3native.hadoop.NativeS3A"


def s3native_jar():
    if os.environ.get("S3NATIVE_JAR"):
        return os.environ["S3NATIVE_JAR"]
    jars = sorted(f for f in os.listdir(os.path.join(ROOT, "jvm", "target"))
                  if f.startswith("s3native-") and f.endswith(".jar")
                  and not f.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar")))
    if not jars:
        sys.exit("no jvm/target/s3native-*.jar: run `make jar` first")
    return os.path.join(ROOT, "jvm", "target", jars[-1])


def native_fs_impl():
    """(fs.s3a.impl, fs.AbstractFileSystem.s3a.impl) for the s3native run: our classes, or
    S3NATIVE_FS_IMPL / S3NATIVE_AFS_IMPL. Exits when the jar lacks our FileSystem."""
    fs, afs = os.environ.get("S3NATIVE_FS_IMPL"), os.environ.get("S3NATIVE_AFS_IMPL")
    if fs:
        return fs, afs or (NATIVE_AFS if fs == NATIVE_FS else STOCK_AFS)
    names = zipfile.ZipFile(s3native_jar()).namelist()
    if NATIVE_FS.replace(".", "/") + ".class" not in names:
        sys.exit(f"{s3native_jar()} has no {NATIVE_FS}: run `make jar`")
    return NATIVE_FS, afs or NATIVE_AFS


# The Spark lines the s3native.parquet DataSource V2 write is built for: every line (`make jar`
# compiles it once, against Spark 4.3; io.s3native.spark.SparkArrow adapts to each line's
# internal Arrow API). Their runs also get arrow-c-data at the line's arrow-vector version
# (arrow_c_data: 12.0.1 on 3.5, 18.1.0 on 4.0, 18.3.0 on 4.1, 19.0.0 on 4.2 and 4.3).
DSV2_LINES = tuple(LINES)


def arrow_c_data(line):
    """arrow-c-data's jar at the version of the line's arrow-vector (Spark ships none), fetched
    by Maven into target/spark/jars-dsv2/ (where `make jar` compiles against it) when missing."""
    import glob
    vector = glob.glob(os.path.join(SPARK, f"venv-{line}", "lib", "python3*", "site-packages", "pyspark", "jars",
                                    "arrow-vector-*.jar"))
    if not vector:
        sys.exit(f"no arrow-vector jar in target/spark/venv-{line}: run scripts/spark-setup.sh {line}")
    version = os.path.basename(vector[0])[len("arrow-vector-"):-len(".jar")]
    d = os.path.join(SPARK, "jars-dsv2")
    jar = os.path.join(d, f"arrow-c-data-{version}.jar")
    if not os.path.exists(jar):
        subprocess.run(["mvn", "-B", "-ntp", "-q", "dependency:copy", f"-Dartifact=org.apache.arrow:arrow-c-data:{version}",
                        f"-DoutputDirectory={d}"], check=True, stdout=subprocess.DEVNULL)
    return jar


def jars(line):
    d = os.path.join(SPARK, f"jars-{line}")
    extra = [arrow_c_data(line)] if line in DSV2_LINES else []
    return [s3native_jar()] + sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jar")) + extra


def defaults(fs_impl, afs_impl, s3, extra=None):
    """The spark-defaults.conf lines (besides spark.jars) for s3native + the magic committer.
    `s3`: endpoint, access_key, secret_key, region (endpoint may be None for AWS)."""
    conf = {
        "spark.hadoop.fs.s3a.impl": fs_impl,
        "spark.hadoop.fs.AbstractFileSystem.s3a.impl": afs_impl,
        "spark.hadoop.fs.s3a.committer.name": "magic",
        "spark.hadoop.fs.s3a.committer.magic.enabled": "true",
        "spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a":
            "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory",
        "spark.sql.sources.commitProtocolClass":
            "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol",
        "spark.sql.parquet.output.committer.class":
            "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter",
    }
    if s3.get("endpoint"):
        conf.update({
            "spark.hadoop.fs.s3a.endpoint": s3["endpoint"],
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled":
                "true" if s3["endpoint"].startswith("https://") else "false",
        })
    if s3.get("region"):
        conf["spark.hadoop.fs.s3a.endpoint.region"] = s3["region"]
    if s3.get("access_key"):
        conf.update({
            "spark.hadoop.fs.s3a.access.key": s3["access_key"],
            "spark.hadoop.fs.s3a.secret.key": s3["secret_key"],
            "spark.hadoop.fs.s3a.aws.credentials.provider":
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        })
    conf.update(extra or {})
    return conf


def write_properties(path, conf):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it may hold a secret
    with os.fdopen(fd, "w") as f:
        for k, v in conf.items():
            f.write(f"{k} {v}\n")


def spark_submit(line, properties, args, log, master="local[2]", timeout=1800, env=None):
    """Run spark/job.py on Spark `line`; stdout+stderr to `log`. Returns the exit code.
    `env`: variables to set besides this process's environment."""
    venv = os.path.join(SPARK, f"venv-{line}")
    cmd = [os.path.join(venv, "bin", "spark-submit"), "--master", master,
           "--properties-file", properties, "--jars", ",".join(jars(line)), JOB] + args
    env = dict(os.environ, **(env or {}))
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = os.path.join(venv, "bin", "python")
    env.pop("SPARK_HOME", None)
    with open(log, "w") as out:
        return subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                              timeout=timeout).returncode


# ---- what is on S3 ----------------------------------------------------------------------

def split(uri):
    assert uri.startswith("s3a://"), uri
    bucket, _, key = uri[len("s3a://"):].partition("/")
    return bucket, key.rstrip("/") + "/"


def listing(s3, uri):
    """Every object under uri: {key: (size, etag)}."""
    bucket, prefix = split(uri)
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            out[o["Key"]] = (o["Size"], o["ETag"].strip('"'))
    return out


def pending_uploads(s3, uri):
    bucket, prefix = split(uri)
    keys = []
    for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
        keys += [u["Key"] for u in page.get("Uploads", []) if u["Key"].startswith(prefix)]
    return keys


def parts_of(etag):
    """Parts of an object, from its ETag: "<md5>-<n>" after CompleteMultipartUpload, else 1."""
    return int(etag.rsplit("-", 1)[1]) if "-" in etag else 1


def committed_output(s3, uri, committer="magic"):
    """The data files a magic-committer job (or the s3native.parquet write: committer
    "s3native.parquet", the same SuccessData) left under uri, checked against _SUCCESS.
    Returns a summary; raises AssertionError naming what is wrong."""
    bucket, prefix = split(uri)
    objs = listing(s3, uri)
    assert prefix + "_SUCCESS" in objs, f"no _SUCCESS under {uri}: {sorted(objs)[:10]}"
    body = s3.get_object(Bucket=bucket, Key=prefix + "_SUCCESS")["Body"].read()
    assert body, f"{uri}/_SUCCESS is empty: the classic FileOutputCommitter ran, not the magic one"
    success = json.loads(body)
    assert success.get("committer") == committer, f"_SUCCESS committer is {success.get('committer')!r}, not {committer!r}"
    assert success.get("name") == "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1", success.get("name")
    leftovers = [k for k in objs if "/__magic" in "/" + k]
    assert not leftovers, f"magic directory left behind: {leftovers[:5]}"
    data = {k: v for k, v in objs.items()
            if not k.endswith("/") and os.path.basename(k)[:1] not in "._"}
    listed = sorted(success.get("filenames", []))
    expected = sorted("/" + k for k in data)
    if len(expected) <= 100:
        assert listed == expected, f"_SUCCESS lists {listed[:5]}..., the bucket holds {expected[:5]}..."
    else:
        assert len(listed) == 100 and set(listed) <= set(expected), "_SUCCESS filenames are not data files"
    pending = pending_uploads(s3, uri)
    assert not pending, f"uploads left pending under {uri}: {pending[:5]}"
    return {"files": len(data), "bytes": sum(s for s, _ in data.values()),
            "parts": sum(parts_of(e) for _, e in data.values()), "keys": sorted(data),
            "success": success}


def delta(before, after, key):
    return after.get(key, 0) - before.get(key, 0)
