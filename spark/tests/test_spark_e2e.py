"""Spark writes through s3native with the S3A magic committer, on each Spark line."""
import re

import pytest

import sparkconf as sc
from conftest import SCENARIOS


def scenario(run, name):
    line, fs, afs, report = run
    if SCENARIOS is not None and name not in SCENARIOS:
        pytest.skip(f"scenario {name} is not in S3NATIVE_SPARK_SCENARIOS")
    r = report["scenarios"][name]
    assert "error" not in r, f"Spark {line}, scenario {name} raised:\n{r['error']}"
    return r


def same_data(r):
    src, back = r["source"], r["readback"]
    assert back["rows"] == src["rows"]
    assert back["columns"] == src["columns"], "column checksums differ"


def written_by_s3native(run, r, out):
    """s3native's process-wide statistics account for the files (skipped on stock S3A)."""
    line, fs, afs, report = run
    if fs == sc.STOCK_FS:
        return
    before, after = r["native_before"], r["native_after"]
    assert "error" not in after, after
    assert sc.delta(before, after, "bytes_written") >= out["bytes"]
    assert sc.delta(before, after, "writers_closed") >= out["files"]


def test_versions(run):
    line, fs, afs, report = run
    hadoop, _ = sc.LINES[line]
    assert report["versions"]["spark"].startswith(line + ".")
    assert report["versions"]["hadoop"] == hadoop
    assert report["classes"] == {"filesystem": fs, "filecontext": afs}


def test_unpartitioned(run, endpoint):
    r = scenario(run, "unpartitioned")
    same_data(r)
    out = sc.committed_output(endpoint.s3, r["dest"])
    assert out["files"] >= 1
    written_by_s3native(run, r, out)


def test_partitioned(run, endpoint):
    r = scenario(run, "partitioned")
    same_data(r)
    out = sc.committed_output(endpoint.s3, r["dest"])
    dirs = {k.split("/")[-2] for k in out["keys"]}
    assert dirs == {"l_returnflag=A", "l_returnflag=N", "l_returnflag=R"}
    written_by_s3native(run, r, out)


def test_empty_dataframe(run, endpoint):
    r = scenario(run, "empty")
    assert r["readback"]["rows"] == 0
    assert r["schema"] == "struct<id:bigint,name:string>"
    out = sc.committed_output(endpoint.s3, r["dest"])
    written_by_s3native(run, r, out)


def test_task_retry_leaves_nothing_of_the_failed_attempt(run, endpoint):
    r = scenario(run, "retry")
    assert r["injected_failures"] == ["p0-a0"], "the first attempt of partition 0 did not fail"
    same_data(r)
    # Only the successful attempts' files; job commit did not sweep pending uploads
    # (fs.s3a.committer.abort.pending.uploads=false), so nothing pending means task abort
    # aborted the failed attempt's upload.
    out = sc.committed_output(endpoint.s3, r["dest"])
    assert out["files"] == 2
    assert out["parts"] > out["files"], "expected multipart files (5 MiB parts)"
    written_by_s3native(run, r, out)


def test_failed_job_leaves_nothing_visible(run, endpoint):
    r = scenario(run, "failed_job")
    assert r["job_error"], "the job did not fail"
    assert {"p1-a0", "p1-a1"} <= set(r["injected_failures"])
    left = [k for k in sc.listing(endpoint.s3, r["dest"]) if not k.endswith("/")]
    assert left == [], f"a failed job left objects: {left}"
    assert sc.pending_uploads(endpoint.s3, r["dest"]) == []


def test_streaming_checkpoint_through_filecontext(run, endpoint):
    line, fs, afs, report = run
    r = scenario(run, "streaming")
    assert r["classes"]["filecontext"] == afs, "the checkpoint did not go through fs.AbstractFileSystem.s3a.impl"
    assert r["checkpoint_files"] == {"offsets": ["0", "1"], "commits": ["0", "1"]}
    runs = r["runs"]
    assert [b["batch_id"] for b in runs] == [0, 1], "the second run did not resume from the checkpoint"
    assert sum(b["rows"] for b in runs) == r["source"]["rows"]
    same_data(r)
    objs = sc.listing(endpoint.s3, r["checkpoint"])
    assert any(k.endswith("/offsets/1") for k in objs), sorted(objs)
    assert sc.pending_uploads(endpoint.s3, r["checkpoint"]) == []
    assert sc.pending_uploads(endpoint.s3, r["dest"]) == []


# ---- reads: Spark reads what it wrote back through the native reader ---------------------

@pytest.mark.parametrize("name", ["unpartitioned", "partitioned", "streaming"])
def test_read_back_through_the_native_reader(run, endpoint, name):
    """Spark's Parquet reader read the job's output back (rows and checksums equal the source)
    through NativeS3AFileSystem's native reader: every data file opened natively, none through
    stock S3A (fs.s3a.native.fallback=fail would also have failed the read), the native streams
    handed over the bytes, and S3A's read counters (which the native streams add to at close)
    show GETs and bytes."""
    line, fs, afs, report = run
    if fs == sc.STOCK_FS:
        pytest.skip("the filesystem under test is stock S3A")
    r = scenario(run, name)
    same_data(r)
    reads = r["readback_reads"]
    assert "error" not in reads, reads
    assert reads["filesystem"] == sc.NATIVE_FS, reads
    out = sc.committed_output(endpoint.s3, r["dest"]) if name != "streaming" else None
    files = out["files"] if out else len([k for k in sc.listing(endpoint.s3, r["dest"])
                                          if k.endswith(".parquet")])
    assert files >= 1
    assert reads["stock_opens"] == 0, reads
    assert reads["native_opens"] >= files, f"{files} data files, {reads['native_opens']} native opens: {reads}"
    c = reads["counters"]
    assert reads["native_bytes_read"] > 0 and c.get("stream_read_bytes", 0) >= reads["native_bytes_read"], reads
    assert c.get("stream_read_opened", 0) >= 1, f"no GET counted: {reads}"
    # What Spark read is at most what was fetched (S3A's names: stream_read_total_bytes).
    assert 0 < c.get("stream_read_total_bytes", 0), reads


# ---- proof that the native path ran: IOStatistics, against stock S3A for the same job ------

# The filesystem counters S3A counts for the writes of a job (its stream's merge on close and
# its own requests). The native streams must count each of them where stock S3A did.
WRITE_COUNTERS = ("stream_write_bytes", "stream_write_total_data", "stream_write_block_uploads",
                  "files_created", "object_put_bytes", "object_put_request_completed",
                  "object_multipart_initiated", "committer_magic_files_created",
                  "committer_bytes_uploaded")


def stock_twin(run, name):
    r = scenario(run, "stock_twin")
    if "skipped" in r:
        pytest.skip(r["skipped"])
    t = r[name]
    assert t["classes"]["filesystem"] == sc.STOCK_FS, "the twin write did not go through stock S3A"
    return t


def fs_delta(before, after):
    assert "error" not in after, after
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


@pytest.mark.parametrize("name", ["unpartitioned", "partitioned"])
def test_filesystem_iostatistics_count_what_stock_counts(run, endpoint, name):
    """The filesystem's IOStatistics (the tasks share the driver's cached FileSystem in local
    mode): every write counter stock S3A counted for the same job is counted on the native
    path too, and stream_write_bytes covers the data files."""
    line, fs, afs, report = run
    if fs == sc.STOCK_FS:
        pytest.skip("the filesystem under test is stock S3A")
    r = scenario(run, name)
    ours = fs_delta(r["fs_before"], r["fs_after"])
    twin = stock_twin(run, name)
    stock = fs_delta(twin["fs_before"], twin["fs_after"])
    out = sc.committed_output(endpoint.s3, r["dest"])
    missing = [c for c in WRITE_COUNTERS if stock.get(c, 0) > 0 and ours.get(c, 0) <= 0]
    assert not missing, f"counted by stock S3A, not by ours: {missing}\nstock {stock}\nours {ours}"
    # Hadoop 3.3.4's committer writes .pendingset and _SUCCESS through create (natively too),
    # so the filesystem counts a little more than the data files.
    assert ours["stream_write_bytes"] >= out["bytes"], (ours, out["bytes"])
    assert ours["committer_bytes_uploaded"] == out["bytes"], (ours, out["bytes"])
    assert ours["committer_magic_files_created"] == out["files"], (ours, out["files"])
    assert ours.get("s3native.parts_uploaded", 0) >= out["parts"], ours


@pytest.mark.parametrize("name", ["unpartitioned", "partitioned"])
def test_success_iostatistics_show_what_stock_shows(run, endpoint, name):
    """_SUCCESS's iostatistics: on the native path stream_write_bytes equals the bytes of the
    data files, and every counter stock S3A's _SUCCESS shows for the same job is there."""
    line, fs, afs, report = run
    r = scenario(run, name)
    out = sc.committed_output(endpoint.s3, r["dest"])
    ours = out["success"]["iostatistics"]["counters"]
    twin = stock_twin(run, name)
    stock = sc.committed_output(endpoint.s3, twin["dest"])["success"]["iostatistics"]["counters"]
    missing = sorted(set(stock) - set(ours))
    assert not missing, f"in stock S3A's _SUCCESS, not in ours: {missing}"
    assert ours.get("stream_write_bytes") == out["bytes"], (ours.get("stream_write_bytes"), out["bytes"])



# ---- Spark's task output metrics (outputMetrics.bytesWritten), against stock S3A -----------

TASK_FILE = re.compile(r"/part-(?:r-)?(\d{5})")
METRICS_TASKS = 4  # spark/job.py's METRICS_TASKS: tasks of each write, one file each


def write_tasks(w):
    """{partition: bytesWritten} of the write stage (the job's last) of one write; each task
    succeeded at its first attempt."""
    stages = w["stages"]
    assert stages, f"no stage ran for {w['dest']}"
    tasks = stages[-1]["tasks"]
    assert [(t["status"], t["attempt"]) for t in tasks] == [("SUCCESS", 0)] * len(tasks), tasks
    return {t["index"]: t["bytes"] for t in tasks}


def task_files(endpoint, w):
    """{partition: bytes of the data file its task wrote}, from S3's listing (one file a task)."""
    keys = sc.committed_output(endpoint.s3, w["dest"])["keys"]
    objs = sc.listing(endpoint.s3, w["dest"])
    sizes = {}
    for key in keys:
        n = int(TASK_FILE.search("/" + key).group(1))
        assert n not in sizes, f"two files of task {n}: {keys}"
        sizes[n] = objs[key][0]
    return sizes


def task_metrics(run, endpoint, side, kind):
    r = scenario(run, "task_metrics")
    if side not in r:
        pytest.skip("no bucket for the stock-S3A twin writes")
    w = r[side][kind]
    want = sc.STOCK_FS if side == "stock" else run[1]
    assert w["classes"]["filesystem"] == want, w["classes"]
    tasks, files = write_tasks(w), task_files(endpoint, w)
    assert sorted(tasks) == sorted(files) == list(range(METRICS_TASKS)), (tasks, files)
    return tasks, files


def test_task_output_bytes_of_a_dataframe_write_are_its_files(run, endpoint):
    """Spark SQL's writer reports each task's bytesWritten from the length of the file it wrote
    (on a magic path: the marker's x-hadoop-s3a-magic-data-length header): per task, the bytes of
    its object on S3, on the native path as on stock S3A."""
    ours, ours_files = task_metrics(run, endpoint, "ours", "dataframe")
    assert all(b > 0 for b in ours.values()), ours
    assert ours == ours_files, f"task bytesWritten {ours}, objects {ours_files}"
    stock, stock_files = task_metrics(run, endpoint, "stock", "dataframe")
    assert stock == stock_files, f"stock S3A: task bytesWritten {stock}, objects {stock_files}"
    assert ours == stock, "the same job wrote other bytes through stock S3A"


# What a magic task commit writes besides its data file through FileSystem.create on the task
# thread: its .pendingset (one commit, with the stream's IOStatistics: ~3.6 KiB stock, ~6.3
# KiB native on Hadoop 3.3.4). Bounds the metric from above well below one data file.
TASK_COMMIT_BYTES_MAX = 32 * 1024


def test_task_output_bytes_of_an_rdd_write_count_its_file_once(run, endpoint):
    """SparkHadoopWriter (RDD.saveAsNewAPIHadoopFile) reports each task's bytesWritten from the
    task thread's FileSystem.Statistics, read after task commit: the bytes of the task's data
    file, counted once, plus what the task commit wrote through the filesystem (its .pendingset,
    deleted by job commit) where stock S3A's shows such bytes too."""
    extra = {}
    for side in ("ours", "stock"):
        tasks, files = task_metrics(run, endpoint, side, "rdd")
        assert all(files[n] > TASK_COMMIT_BYTES_MAX for n in files), files  # so the bound tells
        extra[side] = {n: tasks[n] - files[n] for n in files}
        assert all(0 <= x < TASK_COMMIT_BYTES_MAX for x in extra[side].values()), \
            f"{side}: task bytesWritten {tasks}, objects {files}"
    assert {n: x > 0 for n, x in extra["ours"].items()} == {n: x > 0 for n, x in extra["stock"].items()}, \
        f"bytes beyond the data files: ours {extra['ours']}, stock S3A {extra['stock']}"
