//! Native Parquet: Arrow batches encoded by the parquet crate straight into the writer, in
//! every mode, read back from the server with the parquet crate's own reader.
//!
//! The memory budget is process-wide (the first writer fixes it), so every test of this
//! binary uses the same one, [`BUDGET`]: the bounded-memory test then holds for all of them.

mod common;

use std::sync::Arc;
use std::time::Duration;

use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
use arrow_array::ffi::{to_ffi, FFI_ArrowArray};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::Int64Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, Int8Array, ListArray, RecordBatch, RecordBatchIterator, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};
use bytes::Bytes;
use common::{within, TestBucket};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use s3native::{complete, ErrorKind, MagicFile, MagicLayout, Mode, ParquetCompression, ParquetOptions, ParquetResult, ParquetWriter, PendingEtags, Writer};

/// The process-wide part-buffer budget of this binary.
const BUDGET: u64 = 16 << 20;

fn settings() -> s3native::Settings {
    common::settings().with("fs.s3a.native.memory.budget", "16M")
}

/// Tests share the budget: the bounded-memory test runs alone (write), the others together
/// (read), so that no other writer's admission beyond the budget shows in its peak.
static BUDGET_USERS: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn shared_budget() -> std::sync::RwLockReadGuard<'static, ()> {
    BUDGET_USERS.read().unwrap_or_else(|p| p.into_inner())
}

/// Rows `from..from + rows` of a table with every Arrow type Spark's ArrowWriter emits
/// (byte, short, int, long, float, double, boolean, decimal(10,2) and (38,18), string,
/// binary, date, timestamp with and without a time zone, struct, array, map), each
/// column with nulls.
fn some(i: usize, every: usize) -> bool {
    i % every != 0
}

/// `v`, or null every `every`th row.
fn opt<T>(i: usize, every: usize, v: T) -> Option<T> {
    some(i, every).then_some(v)
}

fn spark_batch(from: usize, rows: usize) -> RecordBatch {
    let ids: Vec<usize> = (from..from + rows).collect();
    let strings: Vec<Option<String>> = ids.iter().map(|&i| some(i, 5).then(|| format!("row {i} ü{}", "x".repeat(i % 13)))).collect();
    let binaries: Vec<Option<Vec<u8>>> = ids.iter().map(|&i| some(i, 6).then(|| (0..(i % 17)).map(|b| (b * i) as u8).collect())).collect();
    let inner = Fields::from(vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, true)]);
    let structs = StructArray::try_new(
        inner.clone(),
        vec![
            Arc::new(Int32Array::from(ids.iter().map(|&i| opt(i, 4, i as i32 * 3)).collect::<Vec<_>>())) as ArrayRef,
            Arc::new(StringArray::from(ids.iter().map(|&i| opt(i, 3, format!("s{i}"))).collect::<Vec<_>>())),
        ],
        Some(ids.iter().map(|&i| some(i, 9)).collect::<Vec<bool>>().into()),
    )
    .unwrap();
    let lists = ListArray::from_iter_primitive::<Int64Type, _, _>(
        ids.iter().map(|&i| some(i, 8).then(|| (0..(i % 4)).map(|k| if k == 1 { None } else { Some((i * 10 + k) as i64) }).collect::<Vec<_>>())),
    );
    let mut maps = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for &i in &ids {
        for k in 0..(i % 3) {
            maps.keys().append_value(format!("k{k}"));
            if k == 1 {
                maps.values().append_null();
            } else {
                maps.values().append_value((i + k) as i32);
            }
        }
        maps.append(some(i, 10)).unwrap();
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from(ids.iter().map(|&i| i as i64).collect::<Vec<_>>()))),
        ("byte", Arc::new(Int8Array::from(ids.iter().map(|&i| opt(i, 7, (i % 120) as i8 - 60)).collect::<Vec<_>>()))),
        ("short", Arc::new(Int16Array::from(ids.iter().map(|&i| opt(i, 7, (i % 30000) as i16)).collect::<Vec<_>>()))),
        ("int", Arc::new(Int32Array::from(ids.iter().map(|&i| opt(i, 3, i as i32 - 500)).collect::<Vec<_>>()))),
        ("float", Arc::new(Float32Array::from(ids.iter().map(|&i| opt(i, 4, i as f32 / 3.0)).collect::<Vec<_>>()))),
        ("double", Arc::new(Float64Array::from(ids.iter().map(|&i| opt(i, 5, i as f64 * 1.5e10)).collect::<Vec<_>>()))),
        ("bool", Arc::new(BooleanArray::from(ids.iter().map(|&i| opt(i, 6, i % 2 == 0)).collect::<Vec<_>>()))),
        (
            "dec10",
            Arc::new(Decimal128Array::from(ids.iter().map(|&i| opt(i, 7, i as i128 * 101 - 7)).collect::<Vec<_>>()).with_precision_and_scale(10, 2).unwrap()),
        ),
        (
            "dec38",
            Arc::new(
                Decimal128Array::from(ids.iter().map(|&i| opt(i, 8, (i as i128) * 10i128.pow(30) + 123_456_789)).collect::<Vec<_>>())
                    .with_precision_and_scale(38, 18)
                    .unwrap(),
            ),
        ),
        ("string", Arc::new(StringArray::from(strings))),
        ("binary", Arc::new(BinaryArray::from_iter(binaries))),
        ("date", Arc::new(Date32Array::from(ids.iter().map(|&i| opt(i, 9, 19_000 + i as i32)).collect::<Vec<_>>()))),
        (
            "ts",
            Arc::new(
                TimestampMicrosecondArray::from(ids.iter().map(|&i| opt(i, 4, 1_700_000_000_000_000 + i as i64 * 1_000_003)).collect::<Vec<_>>())
                    .with_timezone("UTC"),
            ),
        ),
        ("ts_ntz", Arc::new(TimestampMicrosecondArray::from(ids.iter().map(|&i| opt(i, 5, -86_400_000_000 + i as i64)).collect::<Vec<_>>()))),
        ("struct", Arc::new(structs)),
        ("list", Arc::new(lists)),
        ("map", Arc::new(maps.finish())),
    ];
    // `id` is the only column without nulls: declared so, as Spark does for a non-null column.
    let fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), *n != "id")).collect();
    let arrays: Vec<ArrayRef> = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

/// The batches of the Parquet object at `key`, read with the parquet crate's reader in
/// batches of `batch_rows`, and the file's metadata.
fn read_back(tb: &TestBucket, key: &str, batch_rows: usize) -> (Vec<RecordBatch>, Arc<parquet::file::metadata::ParquetMetaData>) {
    let bytes = tb.get(key).unwrap_or_else(|| panic!("s3://{}/{key} does not exist", tb.bucket));
    let builder = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(bytes)).expect("a Parquet file");
    let metadata = builder.metadata().clone();
    let batches = builder.with_batch_size(batch_rows).build().unwrap().collect::<Result<Vec<_>, _>>().expect("readable batches");
    (batches, metadata)
}

/// The two lists of batches hold the same rows in the same columns (types, values, nulls).
#[track_caller]
fn assert_same_rows(read: &[RecordBatch], written: &[RecordBatch]) {
    assert_eq!(read.len(), written.len(), "batch count");
    for (i, (r, w)) in read.iter().zip(written).enumerate() {
        assert_eq!(r.num_rows(), w.num_rows(), "rows of batch {i}");
        for (c, field) in w.schema().fields().iter().enumerate() {
            let got = r.column_by_name(field.name()).unwrap_or_else(|| panic!("column {} read back", field.name()));
            assert_eq!(got.data_type(), field.data_type(), "type of {}", field.name());
            assert_eq!(got.to_data(), w.column(c).to_data(), "batch {i}, column {}", field.name());
        }
    }
}

#[test]
fn every_spark_type_round_trips_in_publish_mode() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_types");
    let key = tb.key("types.parquet");
    let batches: Vec<RecordBatch> = (0..5).map(|b| spark_batch(b * 500, 500)).collect();
    let mut kv = std::collections::BTreeMap::new();
    kv.insert("org.apache.spark.version".to_string(), "3.5.8".to_string());
    let options = ParquetOptions { row_group_rows: Some(1000), created_by: Some("s3native test".into()), key_value_metadata: kv, ..Default::default() };
    let mut w = ParquetWriter::open(&tb.bucket, &key, Mode::Publish, batches[0].schema(), &options, &settings()).expect("open");
    for b in &batches {
        w.write(b).expect("write");
    }
    assert_eq!(w.rows(), 2500);
    let r = w.close().expect("close");
    assert_eq!((r.rows, r.row_groups), (2500, 3), "1000-row groups");
    assert!(r.upload.completed);
    assert_eq!(r.file_size, tb.meta(&key).unwrap().size, "file_size is the object's length");
    assert_eq!(w.close().expect("a second close"), r, "a second close returns the result again");
    assert_eq!(ParquetResult::from_json(&r.to_json()).unwrap(), r);

    let (read, meta) = read_back(&tb, &key, 500);
    assert_same_rows(&read, &batches);
    let file = meta.file_metadata();
    assert_eq!(file.num_rows(), 2500);
    assert_eq!(file.created_by(), Some("s3native test"));
    let kv = file.key_value_metadata().expect("key-value metadata");
    assert!(kv.iter().any(|e| e.key == "org.apache.spark.version" && e.value.as_deref() == Some("3.5.8")), "{kv:?}");
    assert_eq!(meta.num_row_groups(), 3);
    assert!(meta.row_group(0).columns().iter().all(|c| c.compression() == Compression::SNAPPY), "snappy by default");

    let e = w.write(&batches[0]).expect_err("a write after close");
    assert_eq!(e.kind(), ErrorKind::State, "{e}");
    w.abort().expect("abort after close does nothing");
    assert!(tb.meta(&key).is_some(), "the object stays");
}

#[test]
fn a_deferred_file_is_invisible_until_completed() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_deferred");
    let key = tb.key("deferred.parquet");
    // Incompressible enough for several 5 MiB parts.
    let batches: Vec<RecordBatch> = (0..6).map(|b| noise_batch(b, 20_000)).collect();
    let options = ParquetOptions { compression: ParquetCompression::Zstd, compression_level: Some(3), row_group_bytes: Some(4 << 20), ..Default::default() };
    let mut w = ParquetWriter::open(&tb.bucket, &key, Mode::Deferred, batches[0].schema(), &options, &settings()).expect("open");
    for b in &batches {
        w.write(b).expect("write");
    }
    let r = w.close().expect("close");
    assert!(!r.upload.completed);
    assert!(r.upload.etags.len() >= 2, "several parts: {} B in {} parts", r.file_size, r.upload.etags.len());
    assert!(tb.meta(&key).is_none(), "nothing visible before complete");
    assert_eq!(tb.uploads(&key).len(), 1);

    complete(&r.upload, &settings()).expect("complete");
    let (read, meta) = read_back(&tb, &key, 20_000);
    assert_eq!(meta.file_metadata().num_rows() as u64, r.rows);
    assert_eq!(meta.num_row_groups() as u64, r.row_groups);
    assert!(r.row_groups > 1, "4 MiB row groups");
    assert!(matches!(meta.row_group(0).column(0).compression(), Compression::ZSTD(_)));
    let total: usize = read.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(total, 120_000);
    assert!(tb.uploads(&key).is_empty());
}

/// `rows` rows of an id and 200 pseudo-random bytes: what compresses little.
fn noise_batch(seed: u64, rows: usize) -> RecordBatch {
    let bytes = common::data(seed, rows * 200);
    let ids = Int64Array::from_iter_values((0..rows).map(|i| (seed as usize * rows + i) as i64));
    let blobs = BinaryArray::from_iter_values(bytes.chunks(200));
    RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef), ("blob", Arc::new(blobs) as ArrayRef)]).unwrap()
}

#[test]
fn a_magic_file_leaves_the_committer_files_and_completes_from_them() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_magic");
    let magic_key = tb.key("table/__magic_job-42/job-42/00/tasks/attempt_202412010000_0001_m_000001_0/__base/k=1/part-00001.parquet");
    let file = MagicFile::for_key(&magic_key, MagicLayout::MagicJob, PendingEtags::Quoted).unwrap().expect("a magic path");
    let uri = format!("s3a://{}/{}", tb.bucket, file.magic_key);
    let batch = spark_batch(0, 3000);
    let mut w = ParquetWriter::open_magic(&tb.bucket, &file, &uri, batch.schema(), &ParquetOptions::default(), &settings()).expect("open");
    w.write(&batch).expect("write");
    let r = w.close().expect("close");
    assert_eq!(r.upload.key, file.final_key);
    assert!(!r.upload.completed);
    assert!(tb.meta(&file.final_key).is_none(), "nothing at the destination before job commit");

    let marker = tb.head(&file.magic_key).expect("the marker");
    assert_eq!(marker.content_length, 0);
    assert_eq!(marker.metadata.get("x-hadoop-s3a-magic-data-length"), Some(&r.file_size.to_string()));
    let pending: serde_json::Value = serde_json::from_slice(&tb.get(&file.pending_key()).expect(".pending")).unwrap();
    assert_eq!(pending["destinationKey"], file.final_key.as_str());
    assert_eq!(pending["uploadId"].as_str(), r.upload.upload_id.as_deref());
    assert_eq!(pending["length"], r.file_size);
    assert_eq!(pending["uri"], uri.as_str());

    // Job commit completes the upload from the .pending data.
    complete(&r.upload, &settings()).expect("complete");
    let (read, _) = read_back(&tb, &file.final_key, 3000);
    assert_same_rows(&read, &[batch]);
}

#[test]
fn a_batch_of_another_schema_fails_the_file_for_good_and_aborts_its_upload() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_schema_change");
    let key = tb.key("changed.parquet");
    let first = noise_batch(1, 40_000);
    let options = ParquetOptions { compression: ParquetCompression::None, row_group_bytes: Some(2 << 20), ..Default::default() };
    let mut w = ParquetWriter::open(&tb.bucket, &key, Mode::Publish, first.schema(), &options, &settings()).expect("open");
    w.write(&first).expect("write");
    // 8 MB written in 2 MiB row groups: at least one part is up, so an upload exists.
    let _ = tb.wait_for_upload(&key, Duration::from_secs(10));

    let renamed = RecordBatch::try_from_iter([("id", first.column(0).clone()), ("payload", first.column(1).clone())]).unwrap();
    let e = w.write(&renamed).expect_err("a column of another name");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("'payload'") && e.message().contains("'blob'") && e.message().contains(&key), "{e}");
    tb.assert_nothing_left(&key);

    let again = w.write(&first).expect_err("sticky");
    assert_eq!(again.message(), e.message(), "later writes report the first failure");
    assert_eq!(w.close().expect_err("close after the failure").message(), e.message());
    w.abort().expect("abort after a failure reports the abort's outcome");

    // A wrong type and a null in a non-null column fail the same way.
    for bad in [
        RecordBatch::try_from_iter([("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef), ("blob", Arc::new(BinaryArray::from_iter_values([b"x"])) as ArrayRef)]).unwrap(),
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("blob", DataType::Binary, true)])),
            vec![Arc::new(Int64Array::from(vec![None, Some(1)])), Arc::new(BinaryArray::from_iter_values([b"x", b"y"]))],
        )
        .unwrap(),
    ] {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("blob", DataType::Binary, true)]));
        let mut w = ParquetWriter::open(&tb.bucket, &tb.key("bad.parquet"), Mode::Publish, schema, &options, &settings()).expect("open");
        let e = w.write(&bad).expect_err("a bad batch");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains("'id'"), "{e}");
        assert_eq!(w.close().unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    tb.assert_nothing_left(&tb.key("bad.parquet"));
}

#[test]
fn abort_leaves_no_upload_and_later_calls_fail() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_abort");
    let key = tb.key("aborted.parquet");
    let batch = noise_batch(2, 40_000);
    let options = ParquetOptions { compression: ParquetCompression::None, row_group_bytes: Some(2 << 20), ..Default::default() };
    let mut w = ParquetWriter::open(&tb.bucket, &key, Mode::Publish, batch.schema(), &options, &settings()).expect("open");
    w.write(&batch).expect("write");
    let _ = tb.wait_for_upload(&key, Duration::from_secs(10));
    w.abort().expect("abort");
    tb.assert_nothing_left(&key);
    assert_eq!(w.write(&batch).unwrap_err().kind(), ErrorKind::State);
    assert_eq!(w.close().unwrap_err().kind(), ErrorKind::State);
    w.abort().expect("a second abort");

    // Dropped open: aborted too, never completed.
    let key2 = tb.key("dropped.parquet");
    let mut w = ParquetWriter::open(&tb.bucket, &key2, Mode::Publish, batch.schema(), &options, &settings()).expect("open");
    w.write(&batch).expect("write");
    let _ = tb.wait_for_upload(&key2, Duration::from_secs(10));
    drop(w);
    tb.assert_nothing_left(&key2);
}

#[test]
fn an_arrow_c_stream_is_pulled_batch_by_batch_and_released() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_c_stream");
    let key = tb.key("stream.parquet");
    let batches: Vec<RecordBatch> = (0..4).map(|b| spark_batch(b * 700, 700)).collect();
    let schema = batches[0].schema();
    let reader = RecordBatchIterator::new(batches.clone().into_iter().map(Ok), schema.clone());
    let mut stream = FFI_ArrowArrayStream::new(Box::new(reader));
    let writer = Writer::open(&tb.bucket, &key, Mode::Publish, &settings()).expect("open");
    let options = ParquetOptions { row_group_rows: Some(1400), ..Default::default() };
    // SAFETY: a live stream of this crate's arrow.
    let mut w = unsafe { ParquetWriter::open_c_stream(writer, &mut stream, &options) }.expect("open on the stream");
    drop(stream); // moved into the writer: what is left here is released, dropping it is harmless
    assert_eq!(w.schema(), &schema);
    let p = w.write_from_stream(Some(1)).expect("one batch");
    assert_eq!((p.batches, p.rows, p.ended), (1, 700, false));
    let p = w.write_from_stream(None).expect("the rest");
    assert_eq!((p.batches, p.rows, p.ended), (3, 2100, true));
    assert_eq!(w.write_from_stream(None).unwrap(), s3native::StreamProgress { batches: 0, rows: 0, ended: true });

    // One more batch through the C data interface, and one more stream of the same schema.
    let extra = spark_batch(2800, 700);
    let (mut array, ffi_schema) = to_ffi(&StructArray::from(extra.clone()).into_data()).unwrap();
    // SAFETY: live C data structs describing each other.
    unsafe { w.write_c_array(&mut array, &ffi_schema) }.expect("a C data array");
    assert!(array.is_released(), "the array was moved");
    let more = spark_batch(3500, 700);
    let mut stream2 = FFI_ArrowArrayStream::new(Box::new(RecordBatchIterator::new(vec![Ok(more.clone())], schema.clone())));
    assert_eq!(unsafe { w.write_c_stream(&mut stream2) }.expect("a second stream"), 700);
    let r = w.close().expect("close");
    assert_eq!((r.rows, r.row_groups), (4200, 3));

    let (read, _) = read_back(&tb, &key, 700);
    let mut all = batches;
    all.extend([extra, more]);
    assert_same_rows(&read, &all);
}

#[test]
fn bad_c_input_fails_with_errors_not_crashes() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_c_bad");
    let batch = spark_batch(0, 10);
    let open = |name: &str| ParquetWriter::open(&tb.bucket, &tb.key(name), Mode::Publish, batch.schema(), &ParquetOptions::default(), &settings()).expect("open");

    // NULL and released streams.
    let writer = Writer::open(&tb.bucket, &tb.key("null.parquet"), Mode::Publish, &settings()).unwrap();
    let e = unsafe { ParquetWriter::open_c_stream(writer, std::ptr::null_mut(), &ParquetOptions::default()) }.err().expect("NULL");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let mut released = FFI_ArrowArrayStream::empty();
    let mut w = open("released.parquet");
    let e = unsafe { w.write_c_stream(&mut released) }.unwrap_err();
    assert!(e.message().contains("released"), "{e}");
    assert_eq!(w.write(&batch).unwrap_err().message(), e.message(), "sticky");

    // A stream of another schema; a stream that fails midway.
    let mut w = open("other-schema.parquet");
    let other = noise_batch(3, 10);
    let mut s = FFI_ArrowArrayStream::new(Box::new(RecordBatchIterator::new(vec![Ok(other.clone())], other.schema())));
    let e = unsafe { w.write_c_stream(&mut s) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let failing = vec![Ok(batch.clone()), Err(ArrowError::ComputeError("the producer broke".into()))];
    let mut s = FFI_ArrowArrayStream::new(Box::new(RecordBatchIterator::new(failing, batch.schema())));
    let writer = Writer::open(&tb.bucket, &tb.key("failing.parquet"), Mode::Publish, &settings()).unwrap();
    let mut w = unsafe { ParquetWriter::open_c_stream(writer, &mut s, &ParquetOptions::default()) }.unwrap();
    let e = w.write_from_stream(None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "the producer's failure is an I/O error: {e}");
    assert!(e.message().contains("the producer broke") && e.message().contains("after 10 rows"), "{e}");
    assert_eq!(w.close().unwrap_err().message(), e.message());

    // A C array that is not a struct, and a NULL one.
    let mut w = open("not-struct.parquet");
    let (mut array, schema) = to_ffi(&Int64Array::from(vec![1, 2]).into_data()).unwrap();
    let e = unsafe { w.write_c_array(&mut array, &schema) }.unwrap_err();
    assert!(e.message().contains("not a struct"), "{e}");
    let mut w = open("null-array.parquet");
    let e = unsafe { w.write_c_array(std::ptr::null_mut::<FFI_ArrowArray>(), &schema) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    for name in ["released.parquet", "other-schema.parquet", "failing.parquet", "not-struct.parquet", "null-array.parquet"] {
        tb.assert_nothing_left(&tb.key(name));
    }
}

/// A file five times the budget: the part buffers stay within the budget and the encoder
/// holds about one row group.
#[test]
fn a_file_many_times_the_budget_is_written_in_bounded_memory() {
    require_server!();
    let _alone = BUDGET_USERS.write().unwrap_or_else(|p| p.into_inner());
    // The peak since this point only (a test hook; without it, the peak since the start).
    #[cfg(feature = "test-hooks")]
    s3native::pool::budget().reset_peak();
    let overcommitted_before = s3native::global_statistics().budget_overcommits > 0;
    let tb = TestBucket::new("pq_bounded");
    let key = tb.key("big.parquet");
    let row_group_bytes = 4 << 20;
    let options = ParquetOptions { compression: ParquetCompression::None, row_group_bytes: Some(row_group_bytes), ..Default::default() };
    let (bucket, k) = (tb.bucket.clone(), key.clone());
    let (r, encoder_peak) = within(Duration::from_secs(240), "a 96 MB Parquet file", move || {
        let schema = noise_batch(0, 1).schema();
        let mut w = ParquetWriter::open(&bucket, &k, Mode::Publish, schema, &options, &settings()).expect("open");
        let mut peak = 0;
        for b in 0..48 {
            w.write(&noise_batch(100 + b, 10_000)).expect("write");
            peak = peak.max(w.buffered_bytes());
        }
        (w.close().expect("close"), peak)
    });
    assert!(r.file_size > 5 * BUDGET, "{} B", r.file_size);
    assert_eq!(r.rows, 480_000);
    assert!(encoder_peak <= 2 * row_group_bytes, "the encoder held {encoder_peak} B");
    assert_eq!(s3native::pool::budget().snapshot().capacity, BUDGET, "this binary's budget");
    let peak = s3native::global_statistics().buffer_peak_bytes;
    if cfg!(feature = "test-hooks") || !overcommitted_before {
        assert!(peak <= BUDGET, "part buffers peaked at {peak} B over the {BUDGET} B budget");
    } else {
        eprintln!("the peak is not checked: other tests overcommitted the budget before (run with --features test-hooks)");
    }
    let meta = tb.meta(&key).expect("the object");
    assert_eq!(meta.size, r.file_size);
    tb.delete(&key);
}

#[test]
fn bad_options_fail_before_any_request() {
    require_server!();
    let _budget = shared_budget();
    let tb = TestBucket::new("pq_options");
    let schema: SchemaRef = noise_batch(0, 1).schema();
    let bad = ParquetOptions { row_group_rows: Some(0), ..Default::default() };
    let e = ParquetWriter::open(&tb.bucket, &tb.key("x"), Mode::Publish, schema, &bad, &settings()).err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("row_group_rows"), "{e}");
}
