"""The s3native.parquet DataSource V2 write (issue 16) on Spark's own classes: one
spark-submit per Spark line runs spark/dsv2_job.py, then each test checks a scenario's
report and what it left on S3 (boto3: objects, ListMultipartUploads). The format runs on
the Spark 4 line it is compiled against (4.3; CI runs it there); other lines are skipped.
Besides s3native's jar the job gets arrow-c-data at the arrow-vector version the pyspark
ships (Spark has no arrow-c-data), fetched by Maven into target/spark/jars-dsv2/.
"""
import glob
import json
import os
import subprocess

import pytest

import sparkconf as sc
from conftest import LINES, RUN_DIR

DSV2_LINES = [l for l in LINES if l in ("4.3",)]
JOB = os.path.join(sc.ROOT, "spark", "dsv2_job.py")
pytestmark = pytest.mark.skipif(not DSV2_LINES, reason="s3native.parquet is built for Spark 4.3; no such line selected")


def arrow_c_data(line):
    """arrow-c-data's jar at the version of the line's arrow-vector."""
    venv = os.path.join(sc.SPARK, f"venv-{line}")
    vector = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "pyspark", "jars", "arrow-vector-*.jar"))
    assert vector, f"no arrow-vector jar in {venv}"
    version = os.path.basename(vector[0])[len("arrow-vector-"):-len(".jar")]
    d = os.path.join(sc.SPARK, "jars-dsv2")
    jar = os.path.join(d, f"arrow-c-data-{version}.jar")
    if not os.path.exists(jar):
        subprocess.run(["mvn", "-B", "-ntp", "-q", "dependency:copy", f"-Dartifact=org.apache.arrow:arrow-c-data:{version}",
                        f"-DoutputDirectory={d}"], check=True, stdout=subprocess.DEVNULL)
    return jar


@pytest.fixture(scope="module", params=DSV2_LINES, ids=[f"spark{l}" for l in DSV2_LINES])
def dsv2(request, endpoint):
    line = request.param
    fs, afs = sc.native_fs_impl()
    d = os.path.join(RUN_DIR, f"dsv2-{line}")
    os.makedirs(d, exist_ok=True)
    props = os.path.join(d, "spark-defaults.conf")
    sc.write_properties(props, sc.defaults(fs, afs, endpoint.conf(), {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "3",
        "spark.sql.session.timeZone": "America/Los_Angeles",
        "spark.hadoop.fs.s3a.multipart.size": "5M",
        "spark.hadoop.fs.s3a.native.fallback": "fail",
    }))
    base = f"s3a://{endpoint.bucket}/dsv2/{line}"
    report = os.path.join(d, "report.json")
    if os.path.exists(report):
        os.remove(report)
    log = os.path.join(d, "spark.log")
    venv = os.path.join(sc.SPARK, f"venv-{line}")
    cmd = [os.path.join(venv, "bin", "spark-submit"), "--master", "local[2,2]", "--properties-file", props,
           "--jars", ",".join(sc.jars(line) + [arrow_c_data(line)]), JOB, "--base", base, "--report", report]
    env = dict(os.environ, PYSPARK_PYTHON=os.path.join(venv, "bin", "python"),
               PYSPARK_DRIVER_PYTHON=os.path.join(venv, "bin", "python"))
    env.pop("SPARK_HOME", None)
    with open(log, "w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=600).returncode
    assert rc == 0 and os.path.exists(report), f"spark-submit exited {rc}; see {log}"
    return line, json.load(open(report)), endpoint


def scenario(run, name):
    line, report, endpoint = run
    s = report["scenarios"][name]
    assert "exception" not in s, f"Spark {line}, {name}: {s['exception']}"
    return s, endpoint


def data_files(endpoint, uri):
    return {k: v for k, v in sc.listing(endpoint.s3, uri).items() if k.endswith(".parquet")}


def test_every_common_type_round_trips_partitioned(dsv2):
    s, endpoint = scenario(dsv2, "types")
    assert s["rows"] == 4000
    assert s["same_rows"], "Spark's parquet reader read other rows than the DataFrame written"
    assert s["schema"] == s["spark_schema"], "Spark reads another schema from our files than from its own"
    keys = sorted(data_files(endpoint, s["path"]))
    assert keys, "no data files"
    assert all("/k=" in k and "/p=" in k for k in keys), keys[:3]
    assert any("/k=__HIVE_DEFAULT_PARTITION__/" in k for k in keys), "null partition values go to the default partition"
    assert all(k.endswith(".snappy.parquet") for k in keys), keys[:3]
    assert len(s["partitions"]) == 12
    # _SUCCESS is SuccessData JSON (Hadoop's own SuccessData.load read it in the job) naming the files.
    bucket, prefix = sc.split(s["path"])
    success = json.loads(endpoint.s3.get_object(Bucket=bucket, Key=prefix + "_SUCCESS")["Body"].read())
    assert success["name"] == "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1"
    assert s["success_committer"] == success["committer"] == "s3native.parquet"
    assert sorted(success["filenames"]) == sorted("/" + k for k in keys)
    assert success["metrics"]["rows"] == 4000
    assert not sc.pending_uploads(endpoint.s3, s["path"])
    assert dsv2[1]["native"].get("bytes_written", 1) > 0


def test_save_modes_are_spark_parquets(dsv2):
    s, endpoint = scenario(dsv2, "modes")
    assert s["after_create"] == 100
    assert s["error_if_exists"] and "already exists" in s["error_if_exists"], s["error_if_exists"]
    assert s["after_ignore"] == 100, "ignore wrote to an existing path"
    assert s["ignore_new"] == 5, "ignore on a new path writes"
    assert s["after_append"] == 200
    assert s["after_overwrite"] == 7 and s["overwrite_ids"] == list(range(1000, 1007))
    keys = data_files(endpoint, s["path"])
    assert keys and all("/k=1/" in k for k in keys), sorted(keys)[:5]
    assert not sc.pending_uploads(endpoint.s3, s["path"])


def test_a_task_failing_mid_write_leaves_no_upload(dsv2):
    s, endpoint = scenario(dsv2, "failing")
    assert s["failed"] and s["error"], s
    # Parts of both files went up (the committed task's and the failing attempts'), and no
    # upload was completed: the attempts aborted theirs, the job abort the committed one.
    assert s["parts_uploaded"] >= 3 and s["requests.create_multipart_upload"] >= 3, s
    assert s["requests.complete_multipart_upload"] == 0, s
    assert s["requests.abort_multipart_upload"] >= s["requests.create_multipart_upload"], s
    assert not sc.listing(endpoint.s3, s["path"]), "a failed job left objects"
    assert not sc.pending_uploads(endpoint.s3, s["path"]), "a failed job left multipart uploads"
