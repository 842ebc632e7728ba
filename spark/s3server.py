"""The S3 endpoint of the demo and the Spark tests: a given one, or an embedded moto server
that this process starts and stops.

The embedded server is the project's test moto (.venv, scripts/s3-server.sh install), started
by tests/support/local_s3.py on a port of its own so that a run never shares state with
another.
"""
import os
import sys
import uuid

import boto3
from botocore.config import Config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import local_s3  # noqa: E402


class Endpoint:
    """endpoint, credentials, region, and a bucket that this run may use."""

    def __init__(self, prefix_env, bucket_hint, log_dir, ignore_endpoint=None):
        """Settings come from <prefix_env>_ENDPOINT, _ACCESS_KEY, _SECRET_KEY, _REGION,
        _BUCKET; an endpoint equal to `ignore_endpoint` counts as not set."""
        self.prefix_env, self.bucket_hint, self.log_dir = prefix_env, bucket_hint, log_dir
        self.ignore_endpoint = ignore_endpoint
        self.server = None
        self.created_bucket = None

    def env(self, name, *fallbacks, default=None):
        for n in (f"{self.prefix_env}_{name}",) + fallbacks:
            if os.environ.get(n):
                return os.environ[n]
        return default

    def __enter__(self):
        self.endpoint = self.env("ENDPOINT")
        if self.endpoint and self.endpoint.rstrip("/") != (self.ignore_endpoint or "").rstrip("/"):
            self.embedded = False
            self.access_key = self.env("ACCESS_KEY", "AWS_ACCESS_KEY_ID")
            self.secret_key = self.env("SECRET_KEY", "AWS_SECRET_ACCESS_KEY")
            self.region = self.env("REGION", "AWS_REGION", default="us-east-1")
        else:
            self.embedded = True
            try:
                self.server = local_s3.start("moto", self.log_dir)
            except local_s3.StartError as e:
                sys.exit(str(e))
            self.endpoint = self.server.url
            self.access_key, self.secret_key = self.server.access_key, self.server.secret_key
            self.region = self.server.region
        self.bucket = None if self.embedded else self.env("BUCKET")
        self.s3 = boto3.client(
            "s3", endpoint_url=self.endpoint, region_name=self.region,
            aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}))
        if not self.bucket:
            self.bucket = f"{self.bucket_hint}-{uuid.uuid4().hex[:8]}"
            kwargs = {}
            if self.region != "us-east-1":
                kwargs["CreateBucketConfiguration"] = {"LocationConstraint": self.region}
            try:
                self.s3.create_bucket(Bucket=self.bucket, **kwargs)
            except BaseException:
                if self.server is not None:  # __exit__ does not run when __enter__ fails
                    self.server.stop()
                raise
            self.created_bucket = self.bucket
        return self

    def conf(self):
        return {"endpoint": self.endpoint, "access_key": self.access_key, "secret_key": self.secret_key, "region": self.region}

    def __exit__(self, *exc):
        if self.server is not None:
            self.server.stop()
        elif self.created_bucket:
            empty_bucket(self.s3, self.created_bucket)
            self.s3.delete_bucket(Bucket=self.created_bucket)
        return False


def empty_bucket(s3, bucket):
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            s3.delete_objects(Bucket=bucket, Delete={"Objects": keys})
    for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
        s3.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])
