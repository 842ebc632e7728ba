"""Spark writes through s3native with the S3A magic committer, on each Spark line."""
import pytest

import sparkconf as sc


def scenario(run, name):
    line, fs, afs, report = run
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
