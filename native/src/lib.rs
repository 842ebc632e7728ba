//! # s3native: a native S3 multipart writer for JVM data engines
//!
//! A [`Writer`] streams bytes to one S3 object as a multipart upload on a shared native
//! runtime, with bounded memory and no local disk:
//!
//! ```no_run
//! use s3native::{Mode, Settings, Writer};
//! let settings = Settings::new()
//!     .with("fs.s3a.endpoint", "http://127.0.0.1:9000")
//!     .with("fs.s3a.path.style.access", "true")
//!     .with("fs.s3a.access.key", "AKIA...")
//!     .with("fs.s3a.secret.key", "...");
//! let mut w = Writer::open("bucket", "dir/file.parquet", Mode::Publish, &settings)?;
//! w.write(b"hello")?;
//! let result = w.close()?; // one PutObject: the data fit in the first part
//! assert_eq!(result.length, 5);
//! # Ok::<(), s3native::Error>(())
//! ```
//!
//! Credentials, first match wins (details, units and sources of the facts in [`credentials`]):
//! (c) a [`CredentialSource`] of your own, cached and refreshed by a [`SharedCredentials`]
//! (`fetch` may block; it is asked at most once a second without an expiry, 5 minutes
//! before one with an expiry, and again on S3's `ExpiredToken`); (a) static keys in the
//! settings (`fs.s3a.access.key`, `fs.s3a.secret.key`, optional `fs.s3a.session.token`); (b)
//! with neither, object_store's own chain ([`DefaultChain`]): `AWS_ACCESS_KEY_ID`/
//! `AWS_SECRET_ACCESS_KEY`, web identity (`AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`, STS at
//! `AWS_ENDPOINT_URL_STS`), container credentials, then instance metadata at
//! `fs.s3a.native.metadata.endpoint` (or `AWS_METADATA_ENDPOINT`). [`validate`] says which
//! one a writer would use (`effective.credentials`).
//!
//! ```no_run
//! use s3native::{CredentialSource, Credentials, Settings, SharedCredentials};
//! struct Vault;
//! impl CredentialSource for Vault {
//!     fn fetch(&self) -> s3native::Result<Credentials> {
//!         Ok(Credentials { access_key_id: "AKIA...".into(), secret_access_key: "...".into(), session_token: None, expiry: None })
//!     }
//!     fn describe(&self) -> String {
//!         "the site vault".into()
//!     }
//! }
//! let settings = Settings::new().with_credentials(SharedCredentials::new(Vault));
//! # let _ = settings;
//! ```
//!
//! A file under an S3A magic-committer path is written with [`Writer::open_magic`]: the
//! upload goes to the final key and is never completed; close PUTs the marker and the
//! `.pending` file that Hadoop's own task and job commit read (see [`magic`]). A
//! [`SharedWriter`] is the same writer for several threads (abort from any of them).
//!
//! A [`Reader`] reads one object pinned to its ETag (every GET carries `If-Match`, so an
//! object overwritten mid-read fails instead of mixing versions): small objects whole at the
//! first read, the footer of columnar files at open, sequential stream reads served by
//! parallel read-ahead, positioned reads that leave it alone, and vectored reads planned
//! together and delivered as each range completes ([`reader`] has the rules; its buffers
//! come from the same memory budget as the writers'):
//!
//! ```no_run
//! use s3native::{ReadOptions, ReadPolicy, Reader, Settings};
//! # let settings = Settings::new();
//! let mut r = Reader::open("bucket", "dir/file.parquet", &settings, ReadOptions { policy: Some(ReadPolicy::Columnar), ..Default::default() })?;
//! let mut tail = [0u8; 8];
//! r.read_at(r.length() - 8, &mut tail)?; // served from the footer fetched at open
//! for range in r.read_ranges(&[0..4, 1000..2000])? {
//!     let (index, bytes) = range?;
//!     # let _ = (index, bytes);
//! }
//! # Ok::<(), s3native::Error>(())
//! ```
//!
//! Modules, one concept each, dependencies pointing one way (checked by
//! tests/module_graph.rs): [`config`] (S3A keys to a validated [`WriterConfig`]), [`error`],
//! [`stats`], [`pool`] (runtime, memory budget, client cache, process-wide settings and
//! statistics), `result` (the [`UploadResult`] and its codec), `s3` (the S3 requests),
//! [`magic`] (magic paths, marker, `.pending`, their order), [`objects`] (exists, delete one,
//! many or a directory, lazy listing), `writer` (buffering and the
//! one state machine), [`reader`] (prefetch, read-ahead, vectored reads), [`parquet`] (Arrow
//! batches encoded as Parquet into a writer: [`ParquetWriter`]); `ffi` (the C ABI, header `native/include/s3native.h`) and `jni` (the
//! JVM boundary) translate and hold no rules of their own.
//!
//! S3 facts relied on (AWS S3 user guide, "Amazon S3 multipart upload limits"): parts are
//! numbered 1..=10,000; every part but the last is 5 MiB to 5 GiB; an object is at most
//! 5 TiB; a multipart upload neither completed nor aborted stays, billed and unlisted.

pub mod config;
pub mod credentials;
pub mod error;
mod ffi;
mod jni;
pub mod magic;
pub mod objects;
pub mod parquet;
pub mod pool;
pub mod reader;
mod result;
mod s3;
pub mod s3a_stats;
pub mod stats;
mod writer;

use std::sync::Arc;

pub use config::{Settings, WriterConfig};
pub use credentials::{CredentialSource, Credentials, DefaultChain, SharedCredentials};
pub use error::{Error, ErrorKind, Result};
pub use magic::{MagicFile, MagicLayout, PendingEtags};
pub use objects::{DeleteOutcome, KeyError, Listing, ObjectInfo, Objects};
pub use self::parquet::{ParquetCompression, ParquetOptions, ParquetResult, ParquetWriter, SharedParquetWriter, StreamProgress};
/// The arrow crates of the Parquet writer's API (`RecordBatch`, `SchemaRef`, the C data and
/// stream interface structs), re-exported so callers name the same versions.
pub use arrow_array;
pub use arrow_schema;
pub use reader::{global_read_statistics, read_iostatistics, ReadOptions, ReadPolicy, ReadStatistics, Reader, ReaderControls, StreamType, VectoredError, VectoredRead};
pub use result::UploadResult;
pub use stats::{DurationSummary, RequestCounts, RequestKind, Statistics};
pub use writer::{abort_open_uploads, AbortHandle, Mode, SharedWriter, Writer, WriterState};

/// Process-wide statistics of every writer in this process so far, with the part-buffer
/// bytes held now and at most ([`Statistics::buffer_bytes`], [`Statistics::buffer_peak_bytes`]).
pub fn global_statistics() -> Statistics {
    let budget = pool::budget().snapshot();
    Statistics { buffer_bytes: budget.used, buffer_peak_bytes: budget.peak, ..pool::global_stats().snapshot() }
}

/// What [`validate`] found: the adjustments to report and the values a writer would use.
/// Serialised by name for the C ABI (`s3n_validate`) and the JVM.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Validation {
    /// What the settings asked for that was adjusted (S3A's leniency), to report once
    /// (see [`WriterConfig::warnings`]).
    pub warnings: Vec<String>,
    /// The values a writer opened now with these settings uses.
    pub effective: EffectiveSettings,
}

/// The values a writer uses, defaults and S3A's leniency applied. Sizes in bytes, times in
/// milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EffectiveSettings {
    /// Process-wide part buffer bytes: what this process already runs with, else what these
    /// settings would fix (`fs.s3a.native.memory.budget`, default from the memory limit:
    /// [`config::default_memory_budget`]).
    pub memory_budget: u64,
    /// Worker threads of the process-wide runtime, fixed the same way.
    pub runtime_threads: usize,
    /// The first part's size (every part's when `fixed_part_size`).
    pub part_size: u64,
    pub fixed_part_size: bool,
    pub max_parts: u32,
    /// Parts one writer may have uploading at once: the user's `fs.s3a.fast.upload.active.blocks`
    /// (or `fs.s3a.native.parts.in.flight`), else the budget's share of `connections`
    /// ([`config::parts_in_flight_for`]).
    pub parts_in_flight: usize,
    /// The process-wide upload throughput target in Mbps (`fs.s3a.native.target.throughput`,
    /// set in Gbps; default [`config::default_target_throughput_mbps`]): what this process
    /// already runs with, else what these settings would fix.
    pub target_throughput_mbps: u64,
    /// Part uploads sending at once in the whole process, from the target and the budget
    /// ([`config::connections_for`]).
    pub connections: usize,
    /// Timeout of one HTTP request, body included.
    pub request_timeout_ms: u64,
    /// Retries of one request (`fs.s3a.retry.limit`).
    pub max_retries: usize,
    /// Concurrent part uploads through one client (`fs.s3a.connection.maximum`).
    pub max_concurrent_uploads: usize,
    /// The endpoint URL, or null for AWS.
    pub endpoint: Option<String>,
    pub region: String,
    /// Where the credentials come from (see [`credentials`]); never a secret.
    pub credentials: String,
}

impl EffectiveSettings {
    fn of(c: &WriterConfig) -> Self {
        let process = pool::process_settings().unwrap_or_else(|| pool::ProcessSettings::of(c));
        let s = &c.store;
        let credentials = match (&s.credentials, &s.default_chain) {
            (Some(source), _) => format!("source: {}", source.describe()),
            (None, Some(chain)) => format!("default chain: {}", chain.describe()),
            (None, None) => "static keys".to_string(),
        };
        EffectiveSettings {
            memory_budget: process.memory_budget,
            runtime_threads: process.runtime_threads,
            target_throughput_mbps: process.target_throughput_mbps,
            connections: process.connections,
            part_size: c.part_size,
            fixed_part_size: c.fixed_part_size,
            max_parts: c.max_parts,
            parts_in_flight: c.parts_in_flight_with(process.connections, process.memory_budget),
            request_timeout_ms: s.request_timeout.as_millis().min(u64::MAX as u128) as u64,
            max_retries: s.max_retries,
            max_concurrent_uploads: s.max_concurrent_uploads,
            endpoint: s.endpoint.clone(),
            region: s.region.clone(),
            credentials,
        }
    }
}

/// Check `settings` for writing to `bucket` as [`Writer::open`] does, without opening a
/// writer, sending a request or fixing the process-wide settings (e.g. when a filesystem
/// initialises, so that a bad value fails there). Returns the adjustments to report once
/// and the effective values.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the key of an invalid value;
/// [`ErrorKind::Unsupported`] naming a setting the native writer cannot honour.
pub fn validate(bucket: &str, settings: &Settings) -> Result<Validation> {
    let config = WriterConfig::resolve(settings, bucket)?;
    Ok(Validation { effective: EffectiveSettings::of(&config), warnings: config.warnings })
}

/// Complete a deferred upload from its result, in this or any other process.
///
/// `settings` give the endpoint and credentials (the same keys as [`Writer::open`]).
/// Completing an upload that is already complete with this result's length and part count
/// succeeds (Complete is idempotent here). Errors: [`ErrorKind::NotFound`] when the upload
/// is gone (aborted, or completed with other content), S3's other answers.
pub fn complete(result: &UploadResult, settings: &Settings) -> Result<()> {
    let (store, rt) = store_for(result, settings)?;
    let stats = Arc::new(stats::Recorder::child_of(pool::global_stats()));
    pool::block_on(rt, "completing the upload", &|| false, s3::complete_upload(&store, result, &stats))?
}

/// Abort a deferred upload from its result, in this or any other process. An upload that is
/// already gone counts as aborted. Errors: [`ErrorKind::InvalidArgument`] for a result
/// without an upload id (a single PUT); the abort's final failure after retries.
pub fn abort(result: &UploadResult, settings: &Settings) -> Result<()> {
    let (store, rt) = store_for(result, settings)?;
    let id = result.upload_id.clone().ok_or_else(|| Error::invalid_argument("the result has no upload id (a single PUT cannot be aborted)"))?;
    let path = s3::object_path(&result.key)?;
    let stats = Arc::new(stats::Recorder::child_of(pool::global_stats()));
    pool::block_on(rt, "aborting the upload", &|| false, s3::abort_upload(&store, &path, &id, &stats))?
}

fn store_for(result: &UploadResult, settings: &Settings) -> Result<(Arc<pool::Store>, &'static tokio::runtime::Runtime)> {
    let config = WriterConfig::resolve(settings, &result.bucket)?;
    let rt = pool::apply_process_settings(&config);
    Ok((pool::store(&config.store)?, rt))
}
