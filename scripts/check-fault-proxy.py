#!/usr/bin/env python3
"""End-to-end check of tests/support/fault_proxy.py against the local S3.

Run with the venv's Python while the servers run:

    eval "$(scripts/s3-server.sh start)"
    .venv/bin/python scripts/check-fault-proxy.py
    scripts/s3-server.sh stop

Through the proxy (S3NATIVE_TEST_FAULT_PROXY), with boto3: bucket, put/get,
a 2 x 5 MiB multipart upload, ListMultipartUploads, a chunked request body,
client keep-alive, and each fault action; side effects are checked directly
on S3NATIVE_TEST_ENDPOINT. Prints one line per check; exits 1 on failure.
"""

import http.client
import json
import os
import sys
import time
import urllib.parse
import uuid

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.config
import botocore.exceptions

PART = 5 * 1024 * 1024  # S3's minimum size for every part but the last
REGION = os.environ.get("AWS_REGION", "us-east-1")


def s3_client(endpoint):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        config=botocore.config.Config(
            s3={"addressing_style": "path"},
            retries={"total_max_attempts": 1},  # faults must reach us, not be retried
            connect_timeout=5,
            read_timeout=60,
        ),
    )


class Control:
    """Client of the proxy's /__fault/ control API."""

    def __init__(self, proxy_url):
        url = urllib.parse.urlsplit(proxy_url)
        self.host, self.port = url.hostname, url.port

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, "/__fault/" + path, body=data)
            resp = conn.getresponse()
            payload = json.loads(resp.read() or b"null")
            if resp.status != 200:
                raise AssertionError(f"{method} /__fault/{path}: {resp.status} {payload}")
            return payload
        finally:
            conn.close()

    def rule(self, **rule):
        return self.call("POST", "rules", rule)

    def reset(self):
        self.call("DELETE", "rules")
        self.call("DELETE", "log")

    def faults(self):
        return [e for e in self.call("GET", "log") if e["fault"]]


def client_error_code(exc):
    return exc.response.get("Error", {}).get("Code"), exc.response.get(
        "ResponseMetadata", {}).get("HTTPStatusCode")


def expect_client_error(fn, code, status):
    try:
        fn()
    except botocore.exceptions.ClientError as exc:
        got = client_error_code(exc)
        assert got == (code, status), f"expected {(code, status)}, got {got}"
        return
    raise AssertionError(f"expected ClientError {code}/{status}, call succeeded")


def part_numbers(direct, bucket, key, upload_id):
    resp = direct.list_parts(Bucket=bucket, Key=key, UploadId=upload_id)
    return [p["PartNumber"] for p in resp.get("Parts", [])]


def check_basics(s3, direct, bucket):
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="hello.txt", Body=b"hello world")
    body = s3.get_object(Bucket=bucket, Key="hello.txt")["Body"].read()
    assert body == b"hello world", body
    head = s3.head_object(Bucket=bucket, Key="hello.txt")
    assert head["ContentLength"] == 11, head
    assert direct.get_object(Bucket=bucket, Key="hello.txt")["Body"].read() == body


def check_multipart(s3, direct, bucket):
    key = "mpu/object.bin"
    data = [os.urandom(PART), os.urandom(PART)]
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    listed = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert [(u["Key"], u["UploadId"]) for u in listed] == [(key, upload_id)], listed
    etags = [
        s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=n,
                       Body=data[n - 1])["ETag"]
        for n in (1, 2)
    ]
    s3.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=upload_id,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": etags[n - 1]}
                                   for n in (1, 2)]})
    got = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    assert got == b"".join(data), "multipart object differs"
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), "upload left open"


def check_status_500_on_part_2(s3, direct, control, bucket):
    key = "fault/status.bin"
    control.rule(match={"method": "PUT", "query_has": "partNumber", "part_number": 2},
                 action="status", status=500, code="InternalError", count=1)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=1,
                   Body=b"a" * PART)
    expect_client_error(
        lambda: s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id,
                               PartNumber=2, Body=b"b" * 10),
        "InternalError", 500)
    # Not forwarded: the server never saw part 2.
    assert part_numbers(direct, bucket, key, upload_id) == [1]
    # count=1: the retry goes through.
    s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=2,
                   Body=b"b" * 10)
    assert part_numbers(direct, bucket, key, upload_id) == [1, 2]
    s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    faults = control.faults()
    assert [(f["method"], f["status"], f["fault"]) for f in faults] == [
        ("PUT", 500, "status")], faults
    assert "partNumber=2" in faults[0]["query"], faults


def check_error_body_200_on_complete(s3, direct, control, bucket):
    key = "fault/complete.bin"
    control.rule(match={"method": "POST", "query_has": "uploadId"},
                 action="error_body_200", code="InternalError")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=1,
                          Body=b"only part")["ETag"]
    # botocore turns a 200 with an <Error> body on CompleteMultipartUpload into
    # an error (and would retry it; retries are off here).
    expect_client_error(
        lambda: s3.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=upload_id,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]}),
        "InternalError", 500)
    # Forwarded: the upload really was completed.
    assert direct.get_object(Bucket=bucket, Key=key)["Body"].read() == b"only part"
    faults = control.faults()
    assert [(f["method"], f["status"], f["upstream_status"], f["fault"])
            for f in faults] == [("POST", 200, 200, "error_body_200")], faults


def check_drop_on_part(s3, direct, control, bucket):
    key = "fault/drop.bin"
    control.rule(match={"method": "PUT", "query_has": "partNumber",
                        "path_contains": "drop.bin"}, action="drop")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    try:
        s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=1,
                       Body=b"c" * 1000)
    except (botocore.exceptions.ConnectionClosedError,
            botocore.exceptions.EndpointConnectionError) as exc:
        print(f"    (client saw: {type(exc).__name__})")
    else:
        raise AssertionError("dropped upload_part returned a response")
    # Forwarded before the drop: the server has the part.
    assert part_numbers(direct, bucket, key, upload_id) == [1]
    s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    faults = control.faults()
    assert [(f["status"], f["upstream_status"], f["fault"]) for f in faults] == [
        (None, 200, "drop")], faults


def check_status_after_forward(s3, direct, control, bucket):
    key = "fault/after-forward.txt"
    control.rule(match={"method": "PUT", "query_lacks": "partNumber",
                        "path_contains": "after-forward"},
                 action="status_after_forward", status=503, code="SlowDown")
    expect_client_error(
        lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"stored anyway"),
        "SlowDown", 503)
    assert direct.get_object(Bucket=bucket, Key=key)["Body"].read() == b"stored anyway"


def check_delay(s3, control, bucket):
    control.rule(match={"method": "GET", "path_contains": "hello.txt"},
                 action="delay", delay_ms=400)
    start = time.monotonic()
    assert s3.get_object(Bucket=bucket, Key="hello.txt")["Body"].read() == b"hello world"
    elapsed = time.monotonic() - start
    assert elapsed >= 0.4, f"delay not applied ({elapsed:.3f}s)"
    # count=1: the next one is not delayed (generous bound for a slow machine).
    start = time.monotonic()
    s3.get_object(Bucket=bucket, Key="hello.txt")["Body"].read()
    assert time.monotonic() - start < 0.4, "delay applied twice"


def check_chunked_and_keepalive(proxy, direct, bucket):
    """A signed PUT with a `Transfer-Encoding: chunked` body, then a GET, on
    one persistent connection to the proxy."""
    url = urllib.parse.urlsplit(proxy)
    key = "chunked.bin"
    data = os.urandom(300_000)
    creds = boto3.Session(
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
    ).get_credentials()

    def signed(method, headers):
        req = botocore.awsrequest.AWSRequest(
            method=method, url=f"{proxy}/{bucket}/{key}", headers=headers)
        botocore.auth.S3SigV4Auth(creds, "s3", REGION).add_auth(req)
        return dict(req.headers.items())

    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        headers = signed("PUT", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                                 "Transfer-Encoding": "chunked"})
        chunks = (data[i:i + 65536] for i in range(0, len(data), 65536))
        conn.request("PUT", f"/{bucket}/{key}", body=chunks, headers=headers,
                     encode_chunked=True)
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
        sock = conn.sock
        conn.request("GET", f"/{bucket}/{key}",
                     headers=signed("GET", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}))
        resp = conn.getresponse()
        got = resp.read()
        assert resp.status == 200 and got == data, resp.status
        assert conn.sock is sock and sock is not None, "connection was not kept alive"
    finally:
        conn.close()
    assert direct.get_object(Bucket=bucket, Key=key)["Body"].read() == data


def check_log_and_control(s3, control, bucket):
    s3.head_bucket(Bucket=bucket)
    log = control.call("GET", "log")
    assert log and all(set(e) >= {"method", "path", "query", "status", "fault"}
                       for e in log), log
    control.call("DELETE", "log")
    assert control.call("GET", "log") == []
    control.rule(match={"method": "GET"}, action="delay", count=-1)
    assert len(control.call("GET", "rules")) == 1
    control.call("DELETE", "rules")
    assert control.call("GET", "rules") == []
    try:
        control.rule(action="explode")
    except AssertionError as exc:
        assert "400" in str(exc), exc
    else:
        raise AssertionError("bad rule accepted")


def main():
    endpoint = os.environ.get("S3NATIVE_TEST_ENDPOINT")
    proxy = os.environ.get("S3NATIVE_TEST_FAULT_PROXY")
    if not endpoint or not proxy:
        sys.exit("set S3NATIVE_TEST_ENDPOINT and S3NATIVE_TEST_FAULT_PROXY: "
                 'eval "$(scripts/s3-server.sh start)"')
    s3, direct, control = s3_client(proxy), s3_client(endpoint), Control(proxy)
    bucket = f"fault-proxy-check-{uuid.uuid4().hex[:12]}"
    control.reset()

    checks = [
        ("bucket, put/get/head object", lambda: check_basics(s3, direct, bucket)),
        ("multipart 2 x 5 MiB + ListMultipartUploads",
         lambda: check_multipart(s3, direct, bucket)),
        ("status 500 on part 2 (not forwarded)",
         lambda: check_status_500_on_part_2(s3, direct, control, bucket)),
        ("error_body_200 on CompleteMultipartUpload (forwarded)",
         lambda: check_error_body_200_on_complete(s3, direct, control, bucket)),
        ("drop on UploadPart (forwarded, no response)",
         lambda: check_drop_on_part(s3, direct, control, bucket)),
        ("status_after_forward 503 on PutObject",
         lambda: check_status_after_forward(s3, direct, control, bucket)),
        ("delay 400 ms on GetObject", lambda: check_delay(s3, control, bucket)),
        ("chunked request body + keep-alive",
         lambda: check_chunked_and_keepalive(proxy, direct, bucket)),
        ("control API: log, rules, validation", lambda: check_log_and_control(s3, control, bucket)),
    ]
    passed = failed = 0
    for name, check in checks:
        control.reset()
        try:
            check()
        except Exception as exc:  # report every check, then fail at the end
            failed += 1
            print(f"FAIL {name}: {type(exc).__name__}: {exc}")
        else:
            passed += 1
            print(f"ok   {name}")
    control.reset()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
