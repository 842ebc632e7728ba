//! Parquet files encoded straight into a [`Writer`]: Arrow record batches in, one Parquet
//! object on S3 out, with the upload id and ETags back (or the magic committer's files).
//!
//! The encoder is the parquet crate's `ArrowWriter`, whose output sink is the s3native
//! writer itself (a `std::io::Write`): encoded bytes go into part buffers as the encoder
//! emits them, full parts upload on the shared runtime, and no whole-file buffer exists.
//! Memory is what Parquet itself needs, the row group being built (encoded, at most about
//! [`ParquetOptions::row_group_bytes`]), plus the part buffers, which come from the
//! process-wide memory budget like every writer's.
//!
//! Entry points, all for one file of one schema:
//! - [`ParquetWriter::write`]: a `RecordBatch` of this crate's arrow version;
//! - [`ParquetWriter::open_c_stream`] / [`ParquetWriter::write_from_stream`]: an Arrow C
//!   Stream (`struct ArrowArrayStream`, the Arrow C stream interface), the schema taken from
//!   it once and batches pulled by reference: the route for engines on another arrow major
//!   version (their `FFI_ArrowArrayStream` has the same layout) and for the JVM;
//! - [`ParquetWriter::write_c_stream`] (a further stream of the same schema) and
//!   [`ParquetWriter::write_c_array`] (one Arrow C Data array of struct type, a batch).
//! Imported buffers that miss Rust's alignment (Java's may) are realigned (copied) first.
//!
//! Modes are the writer's: open the [`Writer`] as [`Mode::Publish`], [`Mode::Deferred`]
//! (complete or abort later from the result) or with [`Writer::open_magic`], and hand it to
//! [`ParquetWriter::new`]; [`ParquetWriter::open`] and [`ParquetWriter::open_magic`] do both.
//!
//! # Errors and states
//! A Parquet writer is open, closed, aborted or failed. The first failure is sticky: a
//! batch whose schema is not the file's (column count, names, types, nulls in a column the
//! schema says cannot have them), a stream that fails or hands over a bad array, an
//! encoding error or the writer's own failure (a part upload, the budget) aborts the
//! upload before the call returns, and every later call reports that error. Close returns
//! the [`ParquetResult`]; a second close returns it again. Abort after close does nothing
//! (use [`abort`](crate::abort) with the upload result to discard a deferred upload), as
//! the writer's own rules say ([`crate::writer`]); dropping an open Parquet writer aborts
//! its upload.
//!
//! Not INT96: parquet-rs writes Arrow timestamps as INT64 `TIMESTAMP(MICROS|NANOS|MILLIS)`
//! with `isAdjustedToUTC` set when the Arrow type has a time zone, never Spark's default
//! INT96; Spark reads both (compare with Spark's
//! `spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS`).

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use ::arrow_array::ffi::{from_ffi, FFI_ArrowArray};
use ::arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use ::arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use ::arrow_schema::ffi::FFI_ArrowSchema;
use ::arrow_schema::SchemaRef;
use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::{Compression, ZstdLevel};
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::KeyValue;
use ::parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};

use crate::config::Settings;
use crate::error::{Error, ErrorKind, Result};
use crate::magic::MagicFile;
use crate::result::UploadResult;
use crate::writer::{AbortHandle, Mode, Writer};

/// Rows of a row group at most, by default: parquet-rs's default (1,048,576).
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1024 * 1024;
/// Encoded bytes of a row group at most, by default: 128 MiB, parquet-java's
/// `parquet.block.size` default (what Spark writes).
pub const DEFAULT_ROW_GROUP_BYTES: usize = 128 * 1024 * 1024;

/// The column codec. Names at the boundaries (JSON): `SNAPPY`, `ZSTD`, `NONE` (also
/// `UNCOMPRESSED`, and the lower-case forms Spark's `compression` option uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ParquetCompression {
    /// Snappy (Spark's default codec).
    #[default]
    #[serde(alias = "snappy")]
    Snappy,
    /// Zstandard at [`ParquetOptions::compression_level`] (default 1, zstd's range 1..=22).
    #[serde(alias = "zstd")]
    Zstd,
    /// No compression.
    #[serde(alias = "none", alias = "UNCOMPRESSED", alias = "uncompressed")]
    None,
}

/// How a file is encoded, by name (the JSON form the C ABI and the JVM pass; unknown
/// fields are refused, naming the field). Every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParquetOptions {
    /// The codec of every column (default SNAPPY).
    pub compression: ParquetCompression,
    /// The zstd level (1..=22; default 1); only with `ZSTD`.
    pub compression_level: Option<i32>,
    /// Rows of a row group at most (default [`DEFAULT_ROW_GROUP_ROWS`]); at least 1.
    pub row_group_rows: Option<usize>,
    /// Encoded bytes of a row group at most, as the encoder estimates them while it builds
    /// the group (default [`DEFAULT_ROW_GROUP_BYTES`]); at least 1. The row group being
    /// built is what the encoder holds in memory.
    pub row_group_bytes: Option<usize>,
    /// The footer's `created_by` (default parquet-rs's `parquet-rs version <v>`, which
    /// parquet-java reads fine).
    pub created_by: Option<String>,
    /// Key-value metadata of the footer (e.g. Spark's `org.apache.spark.version` and
    /// `org.apache.spark.sql.parquet.row.metadata`). parquet-rs adds `ARROW:schema`.
    pub key_value_metadata: BTreeMap<String, String>,
}

impl ParquetOptions {
    /// Options from their JSON form (`{"compression": "ZSTD", "row_group_rows": 100000}`).
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming the field that is unknown or bad.
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::invalid_argument(format!("Parquet options: {e}")))
    }

    /// The parquet crate's properties for these options.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming the option of a value out of range.
    pub fn properties(&self) -> Result<WriterProperties> {
        let compression = match (self.compression, self.compression_level) {
            (ParquetCompression::Snappy, None) => Compression::SNAPPY,
            (ParquetCompression::None, None) => Compression::UNCOMPRESSED,
            (ParquetCompression::Zstd, level) => Compression::ZSTD(
                ZstdLevel::try_new(level.unwrap_or(1))
                    .map_err(|e| Error::invalid_argument(format!("Parquet option compression_level: {e}")))?,
            ),
            (c, Some(_)) => {
                return Err(Error::invalid_argument(format!("Parquet option compression_level: only ZSTD takes a level, not {c:?}")))
            }
        };
        let positive = |v: Option<usize>, default: usize, name: &str| match v {
            Some(0) => Err(Error::invalid_argument(format!("Parquet option {name}: must be at least 1"))),
            Some(v) => Ok(v),
            None => Ok(default),
        };
        let mut b = WriterProperties::builder()
            .set_compression(compression)
            .set_max_row_group_row_count(Some(positive(self.row_group_rows, DEFAULT_ROW_GROUP_ROWS, "row_group_rows")?))
            .set_max_row_group_bytes(Some(positive(self.row_group_bytes, DEFAULT_ROW_GROUP_BYTES, "row_group_bytes")?));
        if let Some(c) = &self.created_by {
            b = b.set_created_by(c.clone());
        }
        if !self.key_value_metadata.is_empty() {
            let kv = self.key_value_metadata.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect();
            b = b.set_key_value_metadata(Some(kv));
        }
        Ok(b.build())
    }
}

/// What a closed Parquet writer produced. Its JSON form (serde, field names as here) is
/// what the C ABI and the JVM hand out; `upload` is the writer's [`UploadResult`], to
/// [`complete`](crate::complete) or [`abort`](crate::abort) a deferred upload with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParquetResult {
    /// The upload (deferred: not completed; magic: the marker and `.pending` are written).
    pub upload: UploadResult,
    /// Rows in the file.
    pub rows: u64,
    /// Row groups in the file.
    pub row_groups: u64,
    /// The file's size in bytes (the object's length).
    pub file_size: u64,
}

impl ParquetResult {
    /// The result as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("ParquetResult serializes")
    }

    /// Parse a result written by [`ParquetResult::to_json`].
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] when `json` is not such a result.
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::invalid_argument(format!("not a ParquetResult: {e}")))
    }
}

/// What one [`ParquetWriter::write_from_stream`] call took from the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamProgress {
    /// Batches written by this call.
    pub batches: u64,
    /// Rows written by this call.
    pub rows: u64,
    /// True when the stream has ended (it is released; later calls take nothing).
    pub ended: bool,
}

/// The encoder's sink: the s3native writer as a `std::io::Write`. The writer's own error
/// is kept, so that a failure reaches the caller with its kind and message, not as the
/// encoder's wrapped I/O error.
struct Sink {
    writer: Writer,
    error: Arc<Mutex<Option<Error>>>,
}

impl io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.writer.write(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                lock(&self.error).get_or_insert_with(|| e.clone());
                Err(io::Error::other(e))
            }
        }
    }

    /// Parts upload when full and close uploads the rest: nothing to flush.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

enum State {
    Open,
    Failed(Error),
    Aborted,
    Closed(ParquetResult),
}

/// Writes one Parquet file of one schema to S3 through a [`Writer`]; see the module docs.
///
/// Not for concurrent use (`&mut self`); [`SharedParquetWriter`] is the same for several
/// threads. Blocking calls (writes while the budget or the parts in flight are spent,
/// close) must run on a plain thread, not on an async runtime.
pub struct ParquetWriter {
    state: State,
    /// The encoder, while open.
    encoder: Option<ArrowWriter<Sink>>,
    schema: SchemaRef,
    abort: AbortHandle,
    /// `s3://bucket/key`, for messages.
    name: String,
    /// The sink's first error.
    sink_error: Arc<Mutex<Option<Error>>>,
    rows: u64,
    /// The Arrow C Stream this file's batches come from ([`ParquetWriter::open_c_stream`]).
    source: Option<RecordBatchStreamReader>,
}

impl ParquetWriter {
    /// A Parquet writer of `schema` into `writer` (any mode; magic writers too).
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] for bad options or a schema Parquet cannot
    /// hold (e.g. a type parquet-rs does not write); the writer is then dropped, which aborts
    /// an upload it had started (magic writers start theirs at open).
    pub fn new(writer: Writer, schema: SchemaRef, options: &ParquetOptions) -> Result<Self> {
        let name = format!("s3://{}/{}", writer.bucket(), writer.key());
        let abort = writer.abort_handle();
        let properties = options.properties()?;
        let sink_error = Arc::new(Mutex::new(None));
        let sink = Sink { writer, error: sink_error.clone() };
        let encoder = ArrowWriter::try_new(sink, schema.clone(), Some(properties))
            .map_err(|e| Error::invalid_argument(format!("{name}: the schema cannot be written as Parquet: {e}")))?;
        Ok(ParquetWriter { state: State::Open, encoder: Some(encoder), schema, abort, name, sink_error, rows: 0, source: None })
    }

    /// [`Writer::open`] then [`ParquetWriter::new`]; the options are checked first.
    pub fn open(bucket: &str, key: &str, mode: Mode, schema: SchemaRef, options: &ParquetOptions, settings: &Settings) -> Result<Self> {
        options.properties()?;
        ParquetWriter::new(Writer::open(bucket, key, mode, settings)?, schema, options)
    }

    /// [`Writer::open_magic`] then [`ParquetWriter::new`]: close writes the magic
    /// committer's marker and `.pending` file and returns the deferred upload.
    pub fn open_magic(bucket: &str, file: &MagicFile, uri: &str, schema: SchemaRef, options: &ParquetOptions, settings: &Settings) -> Result<Self> {
        options.properties()?;
        ParquetWriter::new(Writer::open_magic(bucket, file, uri, settings)?, schema, options)
    }

    /// A Parquet writer whose batches come from the Arrow C Stream at `stream`: the stream
    /// is moved into the writer at once (the struct at `stream` is left released, as the C
    /// stream interface has a consumer do), its schema is the file's, and
    /// [`ParquetWriter::write_from_stream`] pulls its batches. The writer releases the
    /// stream when it ends, at close, abort or failure.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] for a NULL or released stream, or one whose
    /// schema cannot be imported; those of [`ParquetWriter::new`].
    ///
    /// # Safety
    /// `stream` is NULL or points to an initialised `struct ArrowArrayStream` (of any arrow
    /// implementation: the layout is the C stream interface's), whose callbacks may be
    /// called from this thread.
    pub unsafe fn open_c_stream(writer: Writer, stream: *mut FFI_ArrowArrayStream, options: &ParquetOptions) -> Result<Self> {
        let reader = import_stream(stream)?;
        let mut w = ParquetWriter::new(writer, reader.schema(), options)?;
        w.source = Some(reader);
        Ok(w)
    }

    /// The file's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes the encoder holds now (the row group being built), as the parquet crate
    /// estimates them; the part buffers are counted by the memory budget.
    pub fn buffered_bytes(&self) -> usize {
        self.encoder.as_ref().map_or(0, |e| e.memory_size())
    }

    /// Ok while open, else the error a call reports.
    fn check_open(&self) -> Result<()> {
        match &self.state {
            State::Open => Ok(()),
            State::Failed(e) => Err(e.clone()),
            State::Aborted => Err(Error::state(format!("{} was aborted", self.name))),
            State::Closed(_) => Err(Error::state(format!("{} is closed", self.name))),
        }
    }

    /// Fail with `e`: abort the upload (waiting for the abort), drop the encoder and the
    /// stream, keep `e` for every later call. Returns the error to report.
    fn fail(&mut self, e: Error) -> Error {
        self.source = None;
        let e = match self.abort.abort() {
            Ok(()) => e,
            Err(a) if a.message() == e.message() => e,
            Err(a) => e.context_after(format!("and then {a}")),
        };
        self.encoder = None;
        self.state = State::Failed(e.clone());
        e
    }

    /// The error for an encoder failure while `doing`: the writer's own when the sink
    /// failed, else the encoder's, naming the file.
    fn encoder_error(&self, e: ParquetError, doing: &str) -> Error {
        if let Some(sink) = lock(&self.sink_error).clone() {
            return sink;
        }
        let kind = match &e {
            ParquetError::NYI(_) => ErrorKind::Unsupported,
            ParquetError::External(_) | ParquetError::EOF(_) => ErrorKind::Io,
            _ => ErrorKind::InvalidArgument,
        };
        Error::new(kind, format!("{}: {doing}: {e}", self.name))
    }

    /// The batch fits the file's schema: the same column count, names and types (nested
    /// field names and metadata aside), and no nulls where the schema has none.
    fn check_batch(&self, batch: &RecordBatch) -> Result<()> {
        let want = self.schema.fields();
        let got = batch.schema_ref().fields();
        if want.len() != got.len() {
            return Err(Error::invalid_argument(format!(
                "{}: a batch with {} columns, but the file's schema has {}: {}",
                self.name,
                got.len(),
                want.len(),
                names(&self.schema)
            )));
        }
        for (i, (w, g)) in want.iter().zip(got.iter()).enumerate() {
            if w.name() != g.name() || !w.data_type().equals_datatype(g.data_type()) {
                return Err(Error::invalid_argument(format!(
                    "{}: column {i} of the batch is '{}' {}, but the file's schema has '{}' {}",
                    self.name,
                    g.name(),
                    g.data_type(),
                    w.name(),
                    w.data_type()
                )));
            }
            if !w.is_nullable() && batch.column(i).null_count() > 0 {
                return Err(Error::invalid_argument(format!(
                    "{}: column '{}' of the batch has {} nulls, but the file's schema says it has none",
                    self.name,
                    w.name(),
                    batch.column(i).null_count()
                )));
            }
        }
        Ok(())
    }

    /// Encode `batch` into the file. Blocks while the memory budget is spent or the writer
    /// has its maximum of parts in flight.
    ///
    /// Errors (each fails the writer: see the module docs): [`ErrorKind::InvalidArgument`]
    /// for a batch not of the file's schema; the writer's failure; [`ErrorKind::State`]
    /// after close or abort.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_open()?;
        if let Err(e) = self.check_batch(batch) {
            return Err(self.fail(e));
        }
        let encoder = self.encoder.as_mut().expect("an open writer has its encoder");
        match encoder.write(batch) {
            Ok(()) => {
                self.rows += batch.num_rows() as u64;
                Ok(())
            }
            Err(e) => {
                let e = self.encoder_error(e, "encoding a batch");
                Err(self.fail(e))
            }
        }
    }

    /// Pull batches from the stream of [`ParquetWriter::open_c_stream`] and write them: up
    /// to `max_batches` (all when `None`), stopping early when the stream ends (it is then
    /// released). A writer without a stream, or whose stream has ended, takes nothing.
    ///
    /// Errors (each fails the writer): [`ErrorKind::Io`] for the stream's own error (its
    /// `get_last_error`: the producer failed) or a batch it handed over that does not
    /// import; those of [`ParquetWriter::write`].
    pub fn write_from_stream(&mut self, max_batches: Option<u64>) -> Result<StreamProgress> {
        self.check_open()?;
        let mut progress = StreamProgress::default();
        while max_batches.is_none_or(|m| progress.batches < m) {
            let Some(source) = self.source.as_mut() else {
                progress.ended = true;
                break;
            };
            match source.next() {
                None => {
                    self.source = None;
                    progress.ended = true;
                    break;
                }
                Some(Err(e)) => {
                    let e = Error::new(ErrorKind::Io, format!("{}: the Arrow stream failed after {} rows: {e}", self.name, self.rows));
                    return Err(self.fail(e));
                }
                Some(Ok(batch)) => {
                    let batch = aligned(batch);
                    self.write(&batch)?;
                    progress.batches += 1;
                    progress.rows += batch.num_rows() as u64;
                }
            }
        }
        Ok(progress)
    }

    /// Write every batch of the Arrow C Stream at `stream`, which must have the file's
    /// schema, and release it; returns the rows written. The stream is moved out of
    /// `stream` at once (unless NULL or released already), so it is released even when this
    /// fails, after close or abort too.
    ///
    /// Errors (each fails the writer): [`ErrorKind::InvalidArgument`] for a NULL or
    /// released stream or a schema not the file's; [`ErrorKind::Io`] for the stream's own
    /// error; those of [`ParquetWriter::write`].
    ///
    /// # Safety
    /// As [`ParquetWriter::open_c_stream`].
    pub unsafe fn write_c_stream(&mut self, stream: *mut FFI_ArrowArrayStream) -> Result<u64> {
        // Taken first, so that every call releases the stream, refused or not.
        let imported = import_stream(stream);
        self.check_open()?;
        let reader = match imported {
            Ok(r) => r,
            Err(e) => return Err(self.fail(e.context(&self.name))),
        };
        let before = self.rows;
        for batch in reader {
            match batch {
                Ok(b) => self.write(&aligned(b))?,
                Err(e) => {
                    let e = Error::new(ErrorKind::Io, format!("{}: the Arrow stream failed after {} rows: {e}", self.name, self.rows));
                    return Err(self.fail(e));
                }
            }
        }
        Ok(self.rows - before)
    }

    /// Write one Arrow C Data array of struct type (a batch: its children are the columns,
    /// with no nulls of its own) described by `schema`. `array` is moved, even when the
    /// call fails (the struct at `array` is left released; the library releases the data),
    /// `schema` is only read (the caller still releases it).
    ///
    /// Errors (each fails the writer): [`ErrorKind::InvalidArgument`] for NULL pointers, a
    /// released array, an array that does not import, is not a struct or has top-level
    /// nulls; those of [`ParquetWriter::write`].
    ///
    /// # Safety
    /// `array` and `schema` are NULL or point to initialised `struct ArrowArray` and
    /// `struct ArrowSchema` of the C data interface, the schema describing the array.
    pub unsafe fn write_c_array(&mut self, array: *mut FFI_ArrowArray, schema: *const FFI_ArrowSchema) -> Result<()> {
        // Taken first, so that every call releases the array, refused or not.
        let imported = import_array(array, schema);
        self.check_open()?;
        match imported {
            Ok(batch) => self.write(&batch),
            Err(e) => Err(self.fail(e.context(&self.name))),
        }
    }

    /// Finish the file: flush the last row group, write the footer, close the writer (which
    /// completes, defers or writes the magic files as its mode says) and return the
    /// result. A second call returns the first one's result; the stream, if any, is
    /// released.
    ///
    /// Errors: the sticky failure; [`ErrorKind::State`] after abort; the writer's close
    /// (its upload is then aborted).
    pub fn close(&mut self) -> Result<ParquetResult> {
        if let State::Closed(r) = &self.state {
            return Ok(r.clone());
        }
        self.check_open()?;
        self.source = None;
        let mut encoder = self.encoder.take().expect("an open writer has its encoder");
        // finish writes the last row group and the footer and flushes them into the sink,
        // which stays inside the encoder: the writer is closed in place.
        let row_groups = match encoder.finish() {
            Ok(metadata) => metadata.num_row_groups() as u64,
            Err(e) => {
                let e = self.encoder_error(e, "writing the last row group and the footer");
                return Err(self.fail(e));
            }
        };
        let sink = encoder.inner_mut();
        match sink.writer.close() {
            Ok(upload) => {
                let r = ParquetResult { rows: self.rows, row_groups, file_size: upload.length, upload };
                self.state = State::Closed(r.clone());
                Ok(r)
            }
            Err(e) => {
                // The writer's close has aborted the upload already.
                self.state = State::Failed(e.clone());
                Err(e)
            }
        }
    }

    /// Discard the file: abort the upload (waiting for it), drop the encoder and release
    /// the stream. After a successful close this does nothing; after a failure it reports
    /// the outcome of the abort the failure started. See [`Writer::abort`].
    ///
    /// Errors: the abort's final failure, naming the upload id.
    pub fn abort(&mut self) -> Result<()> {
        if let State::Closed(_) = self.state {
            return Ok(());
        }
        self.source = None;
        let out = self.abort.abort();
        self.encoder = None;
        if let State::Open = self.state {
            self.state = State::Aborted;
        }
        out
    }
}

/// A [`ParquetWriter`] for several threads: what the C ABI and the JVM boundary hold.
/// Writes and closes are serialised; [`SharedParquetWriter::abort`] never waits for them,
/// so an abort from another thread makes a blocked write or close fail at once. A panic
/// inside a write or close (a bug) leaves the writer failed: its upload is aborted and
/// later calls fail with [`ErrorKind::Internal`].
pub struct SharedParquetWriter {
    writer: Mutex<ParquetWriter>,
    abort: AbortHandle,
    schema: SchemaRef,
}

impl SharedParquetWriter {
    /// Share `writer` between threads.
    pub fn new(writer: ParquetWriter) -> Self {
        SharedParquetWriter { abort: writer.abort.clone(), schema: writer.schema.clone(), writer: Mutex::new(writer) }
    }

    fn lock(&self) -> Result<MutexGuard<'_, ParquetWriter>> {
        self.writer.lock().map_err(|_| {
            let _ = self.abort.abort();
            Error::new(ErrorKind::Internal, "the Parquet writer is unusable after an internal error (a panic)")
        })
    }

    /// The file's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// [`ParquetWriter::write`].
    pub fn write(&self, batch: &RecordBatch) -> Result<()> {
        self.lock()?.write(batch)
    }

    /// [`ParquetWriter::write_from_stream`].
    pub fn write_from_stream(&self, max_batches: Option<u64>) -> Result<StreamProgress> {
        self.lock()?.write_from_stream(max_batches)
    }

    /// [`ParquetWriter::write_c_stream`].
    ///
    /// # Safety
    /// As [`ParquetWriter::write_c_stream`].
    pub unsafe fn write_c_stream(&self, stream: *mut FFI_ArrowArrayStream) -> Result<u64> {
        self.lock()?.write_c_stream(stream)
    }

    /// [`ParquetWriter::write_c_array`].
    ///
    /// # Safety
    /// As [`ParquetWriter::write_c_array`].
    pub unsafe fn write_c_array(&self, array: *mut FFI_ArrowArray, schema: *const FFI_ArrowSchema) -> Result<()> {
        self.lock()?.write_c_array(array, schema)
    }

    /// [`ParquetWriter::close`].
    pub fn close(&self) -> Result<ParquetResult> {
        self.lock()?.close()
    }

    /// [`ParquetWriter::abort`], from any thread, without waiting for a write or close in
    /// progress (which then fails).
    pub fn abort(&self) -> Result<()> {
        let out = self.abort.abort();
        if let Ok(mut w) = self.writer.try_lock() {
            let _ = w.abort();
        }
        out
    }

    /// Rows written so far (waits for a write in progress).
    pub fn rows(&self) -> Result<u64> {
        Ok(self.lock()?.rows())
    }
}

fn names(schema: &SchemaRef) -> String {
    schema.fields().iter().map(|f| format!("'{}' {}", f.name(), f.data_type())).collect::<Vec<_>>().join(", ")
}

/// Move the C stream at `stream` into a reader.
///
/// # Safety
/// As [`ParquetWriter::open_c_stream`].
unsafe fn import_stream(stream: *mut FFI_ArrowArrayStream) -> Result<RecordBatchStreamReader> {
    if stream.is_null() {
        return Err(Error::invalid_argument("the Arrow stream is NULL"));
    }
    // Moved out first (what a consumer does), so that a stream refused here is released too.
    RecordBatchStreamReader::from_raw(stream).map_err(|e| Error::invalid_argument(format!("the Arrow stream does not import (released, closed, or a schema that is not a struct): {e}")))
}

/// One C Data struct array as a batch; `array` is moved out.
///
/// # Safety
/// As [`ParquetWriter::write_c_array`].
unsafe fn import_array(array: *mut FFI_ArrowArray, schema: *const FFI_ArrowSchema) -> Result<RecordBatch> {
    if array.is_null() || schema.is_null() {
        return Err(Error::invalid_argument("the Arrow array or schema is NULL"));
    }
    if (*array).is_released() {
        return Err(Error::invalid_argument("the Arrow array is released"));
    }
    let array = std::ptr::replace(array, FFI_ArrowArray::empty());
    let mut data = from_ffi(array, &*schema).map_err(|e| Error::invalid_argument(format!("the Arrow array does not import: {e}")))?;
    data.align_buffers();
    if !matches!(data.data_type(), ::arrow_schema::DataType::Struct(_)) {
        return Err(Error::invalid_argument(format!("the Arrow array is {}, not a struct of columns", data.data_type())));
    }
    let columns = StructArray::from(data);
    if columns.null_count() > 0 {
        return Err(Error::invalid_argument("the Arrow struct array has top-level nulls: a batch's rows cannot be null"));
    }
    Ok(RecordBatch::from(columns))
}

/// `batch` with every buffer aligned as Rust's arrow needs (a copy only of those that are
/// not: Java's buffers may miss the alignment).
fn aligned(batch: RecordBatch) -> RecordBatch {
    let mut data = StructArray::from(batch.clone()).into_data();
    data.align_buffers();
    let realigned = RecordBatch::from(StructArray::from(data));
    // The schema's metadata stays the stream's.
    realigned.with_schema(batch.schema()).unwrap_or(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_by_name_and_their_errors() {
        let o = ParquetOptions::from_json(r#"{"compression":"zstd","compression_level":3,"row_group_rows":10,"key_value_metadata":{"a":"b"}}"#).unwrap();
        assert_eq!((o.compression, o.compression_level, o.row_group_rows), (ParquetCompression::Zstd, Some(3), Some(10)));
        let p = o.properties().unwrap();
        assert_eq!(p.max_row_group_row_count(), Some(10));
        assert_eq!(p.max_row_group_bytes(), Some(DEFAULT_ROW_GROUP_BYTES));
        let d = ParquetOptions::default().properties().unwrap();
        assert_eq!(d.compression(&"x".into()), Compression::SNAPPY);
        assert_eq!(ParquetOptions::from_json(r#"{"compression":"UNCOMPRESSED"}"#).unwrap().compression, ParquetCompression::None);

        let unknown = ParquetOptions::from_json(r#"{"row_group_size":1}"#).unwrap_err();
        assert!(unknown.message().contains("row_group_size"), "{unknown}");
        let codec = ParquetOptions::from_json(r#"{"compression":"LZO"}"#).unwrap_err();
        assert!(codec.message().contains("LZO"), "{codec}");
        let zero = ParquetOptions { row_group_bytes: Some(0), ..Default::default() }.properties().unwrap_err();
        assert!(zero.message().contains("row_group_bytes"), "{zero}");
        let level = ParquetOptions { compression_level: Some(99), compression: ParquetCompression::Zstd, ..Default::default() };
        assert!(level.properties().unwrap_err().message().contains("compression_level"));
        let snappy_level = ParquetOptions { compression_level: Some(3), ..Default::default() };
        assert!(snappy_level.properties().unwrap_err().message().contains("only ZSTD"));
    }
}
