#!/usr/bin/env bash
# The Spark end-to-end tests (make test-spark): the Spark lines of S3NATIVE_SPARK_LINES
# (default every line: 3.5 4.0 4.1 4.2 4.3), small scale, against an embedded moto server
# (or S3NATIVE_TEST_ENDPOINT when it is not the repository's shared moto). Settings:
# spark/tests/conftest.py. The last line printed is pytest's summary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export S3NATIVE_SPARK_LINES="${S3NATIVE_SPARK_LINES:-3.5 4.0 4.1 4.2 4.3}"
"$ROOT/scripts/spark-setup.sh" tools $S3NATIVE_SPARK_LINES
cd "$ROOT"
exec target/spark/venv-tools/bin/python -m pytest -p no:cacheprovider -rfE spark/tests "$@"
