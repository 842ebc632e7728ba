#!/usr/bin/env python3
"""What the Rust tests cannot ask object_store: a tiny boto3 S3 command line.

    s3ctl.py create-bucket BUCKET        -> {"bucket": BUCKET}
    s3ctl.py list-uploads BUCKET [PREFIX] -> [{"Key": ..., "UploadId": ...}, ...]
    s3ctl.py head BUCKET KEY             -> {"ContentLength", "ETag", "StorageClass",
                                             "ContentEncoding", "Metadata"}, or null
                                             when absent

Prints one JSON value on stdout; exits 1 with the error on stderr on any other
failure. The endpoint and credentials come from the environment (never argv,
which other users can read): S3CTL_ENDPOINT, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION. Path-style addressing, no retries (the tests
want to see the server's state, not a retried guess of it).

Run by tests/common/mod.rs with the project's .venv/bin/python.
"""

import json
import os
import sys

import boto3
import botocore.config
import botocore.exceptions


def client():
    return boto3.client(
        "s3",
        endpoint_url=os.environ["S3CTL_ENDPOINT"],
        region_name=os.environ.get("AWS_REGION") or "us-east-1",
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        config=botocore.config.Config(
            s3={"addressing_style": "path"},
            retries={"total_max_attempts": 1},
            connect_timeout=5,
            read_timeout=60,
        ),
    )


def create_bucket(s3, bucket):
    region = s3.meta.region_name
    if region == "us-east-1":
        s3.create_bucket(Bucket=bucket)
    else:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})
    return {"bucket": bucket}


def list_uploads(s3, bucket, prefix=""):
    uploads = []
    for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
        for u in page.get("Uploads", []):
            uploads.append({"Key": u["Key"], "UploadId": u["UploadId"]})
    return uploads


def head(s3, bucket, key):
    try:
        r = s3.head_object(Bucket=bucket, Key=key)
    except botocore.exceptions.ClientError as e:
        if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise
    return {
        "ContentLength": r["ContentLength"],
        "ETag": r["ETag"],
        "StorageClass": r.get("StorageClass"),
        "ContentEncoding": r.get("ContentEncoding"),
        "Metadata": r.get("Metadata") or {},
    }


COMMANDS = {"create-bucket": create_bucket, "list-uploads": list_uploads, "head": head}


def main(argv):
    if len(argv) < 2 or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        out = COMMANDS[argv[0]](client(), *argv[1:])
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, TypeError) as e:
        print(f"s3ctl {' '.join(argv)}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
