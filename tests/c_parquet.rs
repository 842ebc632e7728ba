//! The Parquet C ABI as a C program sees it: tests/c/parquet.c, compiled with the system C
//! compiler against the generated native/include/s3native.h and linked to the cdylib,
//! hands Arrow C data and stream structs it built by hand; the objects it leaves are read
//! back with the parquet crate's reader.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use arrow_array::{Array, Int64Array, StringArray};
use bytes::Bytes;
use common::{TestBucket, PART};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use s3native::ParquetResult;

/// tests/c/parquet.c compiled and linked to the cdylib (once per run of this binary).
fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| common::compile_c("parquet"))
}

fn command(args: &[&str]) -> Command {
    common::c_command(program(), args)
}

fn assert_success(out: &Output, what: &str) {
    common::assert_c_success(out, what)
}

fn result_line(line: &str) -> ParquetResult {
    ParquetResult::from_json(line.trim()).unwrap_or_else(|e| panic!("the program printed no Parquet result ({e}): {line:?}"))
}

/// The object's rows as (id, name), and its metadata: the table parquet.c writes has id i
/// and name "name-i", null every 5th row.
fn rows(tb: &TestBucket, key: &str) -> (Vec<(i64, Option<String>)>, std::sync::Arc<parquet::file::metadata::ParquetMetaData>) {
    let bytes = tb.get(key).unwrap_or_else(|| panic!("s3://{}/{key} does not exist", tb.bucket));
    let builder = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(bytes)).expect("a Parquet file");
    let meta = builder.metadata().clone();
    let mut out = Vec::new();
    for batch in builder.build().unwrap() {
        let batch = batch.unwrap();
        let ids = batch.column_by_name("id").unwrap().as_any().downcast_ref::<Int64Array>().unwrap().clone();
        let names = batch.column_by_name("name").unwrap().as_any().downcast_ref::<StringArray>().unwrap().clone();
        for i in 0..batch.num_rows() {
            out.push((ids.value(i), names.is_valid(i).then(|| names.value(i).to_string())));
        }
    }
    (out, meta)
}

#[track_caller]
fn assert_table(rows: &[(i64, Option<String>)], n: i64) {
    assert_eq!(rows.len() as i64, n);
    for (i, (id, name)) in rows.iter().enumerate() {
        assert_eq!(*id, i as i64);
        assert_eq!(name.as_deref(), (i % 5 != 0).then(|| format!("name-{i}")).as_deref(), "row {i}");
    }
}

#[test]
fn a_c_program_writes_parquet_from_an_arrow_c_stream() {
    let e = require_server!();
    let tb = TestBucket::new("c_parquet_stream");
    let key = tb.key("stream.parquet");
    let out = command(&["stream", &e.endpoint, &tb.bucket, &key, "3", "1000", "publish"]).output().unwrap();
    assert_success(&out, "stream");
    let r = result_line(&String::from_utf8_lossy(&out.stdout));
    assert_eq!((r.rows, r.upload.completed, r.upload.key.as_str()), (3000, true, key.as_str()));
    let (rows, meta) = rows(&tb, &key);
    assert_table(&rows, 3000);
    assert_eq!(r.file_size, tb.meta(&key).unwrap().size);
    assert_eq!(meta.row_group(0).column(0).compression(), Compression::UNCOMPRESSED, "the options were applied");
}

#[test]
fn a_deferred_c_file_waits_for_s3n_complete() {
    let e = require_server!();
    let tb = TestBucket::new("c_parquet_deferred");
    let key = tb.key("deferred.parquet");
    // 1.2M rows, uncompressed: about 20 MB, several parts.
    let mut child = command(&["stream", &e.endpoint, &tb.bucket, &key, "12", "100000", "deferred"]).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    if line.is_empty() {
        assert_success(&child.wait_with_output().unwrap(), "deferred");
        panic!("the program printed nothing");
    }
    let r = result_line(&line);
    assert!(!r.upload.completed);
    assert!(r.file_size > PART as u64 && r.upload.etags.len() >= 2, "{} B in {} parts", r.file_size, r.upload.etags.len());
    assert!(tb.meta(&key).is_none(), "invisible before s3n_complete");
    assert_eq!(tb.uploads(&key).len(), 1);
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert_success(&child.wait_with_output().unwrap(), "deferred");
    let (rows, meta) = rows(&tb, &key);
    assert_table(&rows, 1_200_000);
    assert_eq!(meta.num_row_groups() as u64, r.row_groups);
    assert!(tb.uploads(&key).is_empty());
}

#[test]
fn a_c_program_writes_c_data_arrays() {
    let e = require_server!();
    let tb = TestBucket::new("c_parquet_array");
    let key = tb.key("arrays.parquet");
    let out = command(&["array", &e.endpoint, &tb.bucket, &key]).output().unwrap();
    assert_success(&out, "array");
    let r = result_line(&String::from_utf8_lossy(&out.stdout));
    assert_eq!((r.rows, r.row_groups), (2000, 2));
    let (rows, meta) = rows(&tb, &key);
    assert_table(&rows, 2000);
    assert!(matches!(meta.row_group(0).column(1).compression(), Compression::ZSTD(_)));
}

#[test]
fn bad_c_input_gives_codes_and_leaves_nothing() {
    let e = require_server!();
    let tb = TestBucket::new("c_parquet_bad");
    let key = tb.key("bad.parquet");
    let out = command(&["bad", &e.endpoint, &tb.bucket, &key]).output().unwrap();
    assert_success(&out, "bad");
    tb.assert_nothing_left(&key);
}
