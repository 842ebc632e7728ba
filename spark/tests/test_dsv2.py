"""The s3native.parquet DataSource V2 write (issue 16) on Spark's own classes. Its scenarios
(spark/dsv2_job.py) run inside the e2e spark-submit of each line (conftest's `run`), so they
add no Spark start-up; each test checks a scenario's report and what it left on S3 (boto3:
objects, ListMultipartUploads). The format is built for the lines of sparkconf.DSV2_LINES
(4.3, which CI runs); on the others these tests are skipped.
"""
import json

import pytest

import sparkconf as sc
from conftest import SCENARIOS


def scenario(run, endpoint, name):
    line, fs, afs, report = run
    if line not in sc.DSV2_LINES:
        pytest.skip(f"s3native.parquet is not built for Spark {line}")
    if SCENARIOS is not None and name not in SCENARIOS:
        pytest.skip(f"scenario {name} is not in S3NATIVE_SPARK_SCENARIOS")
    s = report["scenarios"][name]
    assert "error" not in s, f"Spark {line}, scenario {name} raised:\n{s['error']}"
    return s


def data_files(endpoint, uri):
    return {k: v for k, v in sc.listing(endpoint.s3, uri).items() if k.endswith(".parquet")}


def test_every_common_type_round_trips_partitioned(run, endpoint):
    s = scenario(run, endpoint, "dsv2_types")
    assert s["rows"] == 2000
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
    assert s["success_filenames"] == len(keys)
    assert sorted(success["filenames"]) == sorted("/" + k for k in keys)
    assert success["metrics"]["rows"] == 2000
    assert not sc.pending_uploads(endpoint.s3, s["path"])
    assert sc.delta(s["native_before"], s["native_after"], "writers_closed") >= len(keys), "not written natively"


def test_save_modes_are_spark_parquets(run, endpoint):
    s = scenario(run, endpoint, "dsv2_modes")
    assert s["after_create"] == 100
    assert s["error_if_exists"] == "already exists", s["error_if_exists"]
    assert s["after_ignore"] == 100, "ignore wrote to an existing path"
    assert s["ignore_new"] == 5, "ignore on a new path writes"
    assert s["after_append"] == 200
    assert s["after_overwrite"] == 7 and s["overwrite_ids"] == list(range(1000, 1007))
    keys = data_files(endpoint, s["path"])
    assert keys and all("/k=1/" in k for k in keys), sorted(keys)[:5]
    assert not sc.pending_uploads(endpoint.s3, s["path"])


def test_a_task_failing_mid_write_leaves_no_upload(run, endpoint):
    s = scenario(run, endpoint, "dsv2_failing")
    assert s["failed"] and s["cause_seen"], s
    # Parts went up for both attempts of the failing task (each started its own upload), and no
    # upload was completed: the attempts aborted theirs, the job abort any the other task
    # committed. Whether the other task started an upload before the job failed depends on
    # timing (it is cancelled when the second attempt fails), so only the attempts' are counted.
    assert s["parts_uploaded"] >= 2 and s["requests.create_multipart_upload"] >= 2, s
    assert s["requests.complete_multipart_upload"] == 0, s
    assert s["requests.abort_multipart_upload"] >= s["requests.create_multipart_upload"], s
    assert not sc.listing(endpoint.s3, s["path"]), "a failed job left objects"
    assert not sc.pending_uploads(endpoint.s3, s["path"]), "a failed job left multipart uploads"
