"""Fixtures of the Spark end-to-end tests: one spark-submit per Spark line runs every
scenario (spark/job.py e2e), then each test checks one scenario's report and what it left
on S3. Settings:
  S3NATIVE_SPARK_LINES       Spark lines to test (default: every line of sparkconf.LINES,
                             "3.5 4.0 4.1 4.2 4.3"; `make test` runs "4.3")
  S3NATIVE_SPARK_SCALE       TPC-H scale factor of the input (default 0.01 = 60,175 rows)
  S3NATIVE_SPARK_SCENARIOS   the scenarios of spark/job.py to run (default all; the tests of
                             the others are skipped)
  S3NATIVE_FS_IMPL           fs.s3a.impl under test (default: io.s3native.hadoop.NativeS3AFileSystem);
                             S3NATIVE_AFS_IMPL likewise
  S3NATIVE_TEST_ENDPOINT...  as for the other suites (README); the repository's shared moto
                             server is not used: an embedded one of its own keeps runs apart
"""
import json
import os
import sys

import pytest

SPARK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SPARK_DIR)
import make_data  # noqa: E402
import sparkconf as sc  # noqa: E402
from s3server import Endpoint, empty_bucket  # noqa: E402

LINES = os.environ.get("S3NATIVE_SPARK_LINES", " ".join(sc.LINES)).split()
SCENARIOS = os.environ.get("S3NATIVE_SPARK_SCENARIOS", "").split() or None
RUN_DIR = os.path.join(sc.SPARK, "test")


def impl():
    return sc.native_fs_impl()


@pytest.fixture(scope="session")
def lineitem():
    scale = float(os.environ.get("S3NATIVE_SPARK_SCALE", "0.01"))
    return make_data.lineitem(os.path.join(sc.SPARK, "data"), scale, 1)


@pytest.fixture(scope="session")
def endpoint():
    shared = os.path.join(sc.ROOT, "target", "s3-server", "endpoint")
    shared = open(shared).read().strip() if os.path.exists(shared) else None
    with Endpoint("S3NATIVE_TEST", "s3native-spark", RUN_DIR, ignore_endpoint=shared) as ep:
        yield ep


@pytest.fixture(scope="session")
def stock_bucket(endpoint):
    """A second bucket for the stock-S3A twin writes (its FileSystem is stock S3A), or None
    when the endpoint does not let this run create one."""
    name = endpoint.bucket[:50] + "-stock"
    try:
        kwargs = {}
        if endpoint.region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": endpoint.region}
        endpoint.s3.create_bucket(Bucket=name, **kwargs)
    except Exception:
        yield None
        return
    yield name
    if not endpoint.embedded:
        empty_bucket(endpoint.s3, name)
        endpoint.s3.delete_bucket(Bucket=name)


@pytest.fixture(scope="session", params=LINES, ids=[f"spark{l}" for l in LINES])
def run(request, endpoint, lineitem, stock_bucket):
    """Run every scenario on one Spark line; returns (line, fs class, afs class, report)."""
    line = request.param
    fs, afs = impl()
    d = os.path.join(RUN_DIR, line)
    os.makedirs(d, exist_ok=True)
    props = os.path.join(d, "spark-defaults.conf")
    sc.write_properties(props, sc.defaults(fs, afs, endpoint.conf(), {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        # 5 MiB parts (S3's minimum), so the failure scenarios upload parts before failing.
        "spark.hadoop.fs.s3a.multipart.size": "5M",
        # A file that s3native would hand to stock S3A fails instead, so nothing passes by
        # falling back silently.
        **({"spark.hadoop.fs.s3a.native.fallback": "fail"} if fs == sc.NATIVE_FS else {}),
    }))
    base = f"s3a://{endpoint.bucket}/spark-e2e/{line}"
    report = os.path.join(d, "report.json")
    if os.path.exists(report):
        os.remove(report)
    log = os.path.join(d, "spark.log")
    # local[2,2]: two task threads, and a failed task is retried once.
    args = ["e2e", "--lineitem", lineitem, "--base", base, "--report", report]
    if stock_bucket:
        args += ["--stock-base", f"s3a://{stock_bucket}/spark-e2e/{line}"]
    if SCENARIOS:
        args += ["--only"] + SCENARIOS
    rc = sc.spark_submit(line, props, args, log, master="local[2,2]", timeout=900)
    assert rc == 0 and os.path.exists(report), f"spark-submit exited {rc}; see {log}"
    return line, fs, afs, json.load(open(report))
