"""The s3native.parquet DataSource V2 write (issue 16) on Spark's own classes. Its scenarios
(spark/dsv2_job.py) run inside the e2e spark-submit of each line (conftest's `run`), so they
add no Spark start-up; each test checks a scenario's report and what it left on S3 (boto3:
objects, ListMultipartUploads). The format is built for the lines of sparkconf.DSV2_LINES:
every Spark line (3.5, 4.0, 4.1, 4.2 and 4.3; `make test-spark` runs them all, CI's `make test`
4.3), so none of these tests is skipped for its line.
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


def test_batches_end_at_batch_bytes(run, endpoint):
    s = scenario(run, endpoint, "dsv2_batch_bytes")
    assert s["rows"] == 5000
    assert s["same_rows"], "Spark's parquet reader read other rows than the DataFrame written"
    assert len(data_files(endpoint, s["path"])) == 1
    assert s["zero"] is not None and "batchBytes must be at least 1, not 0" in s["zero"], s["zero"]
    assert not sc.pending_uploads(endpoint.s3, s["path"])


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


def test_a_failing_complete_leaves_no_object_and_no_upload(run, endpoint):
    s = scenario(run, endpoint, "dsv2_complete_fails")
    assert s["failed"] and s["cause_seen"], s
    # Every complete started was awaited before the cleanup: the completed files were deleted,
    # the other uploads aborted.
    # S3A's delete keeps the output directory (its marker): only files count.
    left = [k for k in sc.listing(endpoint.s3, s["path"]) if not k.endswith("/")]
    assert not left, f"a job whose complete failed left objects: {left}"
    assert not sc.pending_uploads(endpoint.s3, s["path"]), "a job whose complete failed left multipart uploads"


def abort_all(endpoint, uri):
    bucket, prefix = sc.split(uri)
    for page in endpoint.s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
        for u in page.get("Uploads", []):
            endpoint.s3.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])


@pytest.mark.parametrize("name, swept", [("dsv2_lost_task", True), ("dsv2_lost_task_nosweep", False)])
def test_a_lost_tasks_upload_is_swept_at_job_commit(run, endpoint, name, swept):
    s = scenario(run, endpoint, name)
    try:
        assert s["rows"] == 100
        pending = set(sc.pending_uploads(endpoint.s3, s["path"]))
        assert set(s["foreign"]) <= pending, "the sweep aborted another job's upload"
        if swept:
            assert not pending & set(s["lost"]), f"the job commit left its lost tasks' uploads: {s}, pending {pending}"
        else:
            assert set(s["lost"]) <= pending, "fs.s3a.committer.abort.pending.uploads=false still swept"
        files = data_files(endpoint, s["path"])
        assert not any(s["job"] not in k for k in files), f"job {s['job']}: {sorted(files)}"
    finally:
        abort_all(endpoint, s["path"])
