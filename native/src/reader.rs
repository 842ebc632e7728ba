//! Reading one S3 object: [`Reader`], pinned to one version of the object.
//!
//! # What a reader fetches
//! - Open: the length and ETag come from the caller ([`ReadOptions`], e.g. a file status) or
//!   from one HEAD. A missing object fails open with [`ErrorKind::NotFound`] naming the key.
//! - Every GET carries `If-Match: <etag>`: an object overwritten while it is read fails the
//!   read with [`ErrorKind::Io`] naming the key and saying it changed since open (S3's 412
//!   `PreconditionFailed`, S3A's `RemoteFileChangedException`), never mixed bytes.
//! - An object of at most `fs.s3a.native.read.small.object.size` (8 MiB) is fetched whole by
//!   the first read of any kind.
//! - A columnar read ([`ReadPolicy::Columnar`], or [`ReadPolicy::Adaptive`] with a `.parquet`
//!   or `.orc` key) fetches the footer region (the last 1 MiB + 32 KiB) at open.
//! - Stream reads ([`Reader::read`]) that follow each other are served by parallel ranged
//!   read-ahead in blocks that double (8 MiB to 64 MiB by default) while the pattern holds;
//!   a jump ends the pattern and drops the blocks ahead.
//! - Positioned reads ([`Reader::read_at`]) fetch just what they ask (or serve it from
//!   buffers already held) and never move the read-ahead window.
//! - Vectored reads ([`Reader::read_ranges`]) are planned together: ranges closer than the
//!   hole size share one GET, GETs larger than the maximum request are split, up to
//!   `vectored.active.reads` are in flight, and each range is delivered as soon as its
//!   bytes are in ([`VectoredRead`]).
//!
//! # Memory
//! Every byte fetched is held against the process-wide budget the writers use
//! ([`crate::pool`]): read-ahead only takes what is free without waiting (it is the first
//! thing dropped when the budget is short); the bytes a caller waits on block like a
//! writer's part, with the same no-deadlock rule (a reader holding nothing is always
//! admitted).
//!
//! # Threads
//! `read` and `unbuffer` take `&mut self`; `read_at`, `read_ranges` and `statistics` take
//! `&self` and may run from several threads at once. Blocking calls must run on a plain
//! thread, not on an async runtime; the `*_with` forms poll `interrupted` every 50 ms and
//! return [`ErrorKind::Interrupted`] when it says true.

use std::ops::Range;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

pub use crate::config::read::{ReadConfig, ReadPolicy};
use crate::config::Settings;
use crate::error::{Error, ErrorKind, Result};

mod plan;

/// What the caller knows of the object and how it will read it. Serialised by name at the
/// JNI and C boundaries (`{"policy":"COLUMNAR","length":123,"etag":"\"abc\""}`; every
/// field optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    /// The read policy; `None`: the settings' (`fs.s3a.native.read.policy`, else
    /// `fs.s3a.experimental.input.fadvise`, else adaptive).
    pub policy: Option<ReadPolicy>,
    /// The object's length in bytes, from a file status or `fs.option.openfile.length`.
    /// With `etag` as well, open sends no HEAD.
    pub length: Option<u64>,
    /// The object's ETag (quotes included, as S3 sends it). Without it, open sends one HEAD
    /// (which also gives the length), and every GET is pinned to the ETag found.
    pub etag: Option<String>,
}

/// A reader's figures so far. Serialised by name (the JVM publishes them as IOStatistics
/// with S3A's `stream_read_*` names where one exists: see [`crate::s3a_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStatistics {
    /// Bytes handed to the caller (stream, positioned and vectored reads).
    pub bytes_read: u64,
    /// Stream read calls ([`Reader::read`]).
    pub read_operations: u64,
    /// Positioned read calls ([`Reader::read_at`]).
    pub pread_operations: u64,
    /// Vectored read calls and the ranges they asked for.
    pub vectored_operations: u64,
    pub vectored_ranges: u64,
    /// Stream reads at another position than the previous one ended at.
    pub seeks: u64,
    /// HEAD requests (0 when the caller gave length and ETag).
    pub head_requests: u64,
    /// GETs by kind: the whole object, the footer region at open, read-ahead blocks,
    /// stream reads outside read-ahead (random), positioned reads, vectored reads.
    pub gets_whole: u64,
    pub gets_footer: u64,
    pub gets_read_ahead: u64,
    pub gets_random: u64,
    pub gets_pread: u64,
    pub gets_vectored: u64,
    /// Bytes received from S3 in GET bodies.
    pub bytes_fetched: u64,
    /// Bytes fetched and dropped without being handed to the caller (read-ahead past a
    /// seek, unbuffer, close, holes of coalesced vectored GETs).
    pub bytes_discarded: u64,
    /// Reads served (at least partly) from bytes fetched ahead (whole object, footer,
    /// read-ahead), and reads that found nothing fetched ahead for them.
    pub prefetch_hits: u64,
    pub prefetch_misses: u64,
    /// Times a caller waited for a GET in flight, and for how long in all (microseconds).
    pub waits: u64,
    pub wait_us: u64,
    /// Times a caller waited for the memory budget, and for how long in all (microseconds).
    pub budget_waits: u64,
    pub budget_wait_us: u64,
    /// Read-ahead blocks not fetched because the budget was short.
    pub read_ahead_skipped: u64,
    /// Bytes held in buffers now.
    pub buffered_bytes: u64,
}

/// Reads one object, pinned to the version (ETag) found at open. See the module docs.
pub struct Reader {
    _private: (),
}

/// The ranges of one [`Reader::read_ranges`] call, delivered as each completes: iterate (or
/// call [`VectoredRead::next_with`]) until `None`. Each item is `(index, bytes)`, `index`
/// the range's position in the request. The bytes stay held against the memory budget
/// until dropped. Dropping a `VectoredRead` cancels the GETs not yet done.
pub struct VectoredRead {
    _private: (),
}

impl VectoredRead {
    /// Ranges asked for.
    pub fn len(&self) -> usize {
        0
    }

    /// True when no range was asked for.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next range to complete, blocking until one does; `None` once every range was
    /// delivered. An error (a GET that failed after retries, an object changed since open)
    /// is delivered once; the ranges after it are then not delivered.
    pub fn next_with(&mut self, interrupted: &dyn Fn() -> bool) -> Option<Result<(usize, Bytes)>> {
        let _ = interrupted;
        None
    }
}

impl Iterator for VectoredRead {
    type Item = Result<(usize, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(&|| false)
    }
}

impl Reader {
    /// Open `s3://bucket/key` for reading, with the endpoint, credentials and read settings of
    /// `settings` (the same keys as [`Writer::open`](crate::Writer::open), plus
    /// [`crate::config::read`]'s).
    ///
    /// Sends one HEAD unless `options` give both length and ETag, and a footer GET for a
    /// columnar read. Errors: [`ErrorKind::NotFound`] naming the key when there is no
    /// object; [`ErrorKind::InvalidArgument`] for a bad bucket, key or setting (naming the
    /// key); [`ErrorKind::Unsupported`] for settings the native reader cannot honour; S3's
    /// other answers.
    pub fn open(bucket: &str, key: &str, settings: &Settings, options: ReadOptions) -> Result<Reader> {
        Reader::open_with(bucket, key, settings, options, &|| false)
    }

    /// [`Reader::open`], polling `interrupted`.
    pub fn open_with(bucket: &str, key: &str, settings: &Settings, options: ReadOptions, interrupted: &dyn Fn() -> bool) -> Result<Reader> {
        let _ = (bucket, key, settings, options, interrupted);
        Err(Error::new(ErrorKind::Unsupported, "the native reader is not built yet"))
    }

    /// The bucket read from.
    pub fn bucket(&self) -> &str {
        ""
    }

    /// The object key read from.
    pub fn key(&self) -> &str {
        ""
    }

    /// The object's length in bytes.
    pub fn length(&self) -> u64 {
        0
    }

    /// The ETag every GET is pinned to.
    pub fn etag(&self) -> &str {
        ""
    }

    /// The read policy in force (the caller's, the settings', or `Columnar` for a
    /// `.parquet`/`.orc` key read adaptively).
    pub fn policy(&self) -> ReadPolicy {
        ReadPolicy::Adaptive
    }

    /// Stream read: up to `buf.len()` bytes at `position` into `buf`, filling it unless the
    /// object ends first; returns the bytes read, 0 at or past the end. Drives sequential
    /// detection and read-ahead (see the module docs).
    ///
    /// Errors: [`ErrorKind::Io`] naming the key when the object changed since open (S3's 412
    /// to `If-Match`), or a GET failed after retries; [`ErrorKind::NotFound`] when it was
    /// deleted.
    pub fn read(&mut self, position: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_with(position, buf, &|| false)
    }

    /// [`Reader::read`], polling `interrupted`.
    pub fn read_with(&mut self, position: u64, buf: &mut [u8], interrupted: &dyn Fn() -> bool) -> Result<usize> {
        let _ = (position, buf, interrupted);
        Err(Error::new(ErrorKind::Unsupported, "the native reader is not built yet"))
    }

    /// Positioned read (pread): as [`Reader::read`], but it never moves or starts the
    /// read-ahead window; served from bytes already held where it can, else by one GET of
    /// exactly what it asks.
    pub fn read_at(&self, position: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_at_with(position, buf, &|| false)
    }

    /// [`Reader::read_at`], polling `interrupted`.
    pub fn read_at_with(&self, position: u64, buf: &mut [u8], interrupted: &dyn Fn() -> bool) -> Result<usize> {
        let _ = (position, buf, interrupted);
        Err(Error::new(ErrorKind::Unsupported, "the native reader is not built yet"))
    }

    /// Vectored read of `ranges` (any order, may overlap; each must end within the object):
    /// planned and started at once, delivered as each completes (see [`VectoredRead`]).
    /// Errors: [`ErrorKind::InvalidArgument`] for a range past the end or reversed, naming it.
    pub fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<VectoredRead> {
        let _ = ranges;
        Err(Error::new(ErrorKind::Unsupported, "the native reader is not built yet"))
    }

    /// Drop every buffer (read-ahead, whole object, footer) and end the read-ahead pattern,
    /// keeping the open state (length, ETag): the next read fetches again.
    pub fn unbuffer(&mut self) {}

    /// The reader's figures so far.
    pub fn statistics(&self) -> ReadStatistics {
        ReadStatistics::default()
    }
}
