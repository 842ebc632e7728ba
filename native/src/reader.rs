//! Reading one S3 object: [`Reader`], pinned to one version of the object.
//!
//! # What a reader fetches
//! - Open: the length and ETag come from the caller ([`ReadOptions`], e.g. a file status) or
//!   from one HEAD. A missing object fails open with [`ErrorKind::NotFound`] naming the key.
//!   A length without an ETag (a file status that has none, as Spark's) sends no HEAD: the
//!   first GET to answer gives the ETag the later ones are pinned to (a missing object then
//!   fails the first read with [`ErrorKind::NotFound`]). (S3A's analytics stream HEADs for
//!   a status without an ETag too; the reader does not: a status's length is the object's, and
//!   the first GET gives the ETag, so the HEAD would add a round trip to every such open.)
//! - A length declared by the caller without an ETag ([`ReadOptions::declared_length`],
//!   openFile's `fs.option.openfile.length` without a status) is used as the S3A input
//!   stream of the settings ([`StreamType`], `fs.s3a.input.stream.type` by the line's rule)
//!   uses it: S3A's analytics stream (the default of hadoop-aws 3.4.3 and 3.5) does not, so
//!   open sends a HEAD for the real length and ETag, counted as that stream counts it
//!   ([`ReadStatistics::stream_head_requests`]); the classic and prefetching streams trust it,
//!   as the reader trusts a status's length ([`ReadOptions::length`]).
//! - A trusted length is trusted as S3A's classic stream trusts openFile's declared length: reads stop
//!   at a shorter one; inside a longer one, S3's answers say where the object really ends. A
//!   GET answered with fewer bytes than asked ends the read there (no error, no retry), and a
//!   read that goes on exactly there is at the end of file without a GET (as S3A's stream,
//!   whose connection stays at the end of its answer); a GET starting at or past the real end
//!   (S3's 416 `InvalidRange`) is the end of file: 0 bytes for a stream or positioned read, an
//!   [`ErrorKind::EndOfFile`] range of a vectored read (code `InvalidRange`), and so is a
//!   vectored range that runs past it: that range fails alone, the others are delivered.
//!   Read-ahead stops where an answer (a short one, a 416) showed the end.
//! - Every GET carries `If-Match: <etag>`: an object overwritten while it is read fails the
//!   read with [`ErrorKind::Io`] naming the key and saying it changed since open, with S3's
//!   code `PreconditionFailed` ([`Error::s3_code`]; S3A's `RemoteFileChangedException`), never
//!   mixed bytes. S3A's `fs.s3a.change.detection.mode` `warn` and `none` send GETs unpinned
//!   ([`ChangeDetection`]).
//! - An object of at most `fs.s3a.native.read.small.object.size` (8 MiB) is fetched whole by
//!   the first read of any kind when the policy reads whole objects (adaptive without a
//!   columnar key, sequential, whole-file) and no split end ends the read before the object
//!   does. Columnar and random reads never fetch it whole: they read parts of it (a footer
//!   and the column chunks of a query, records), each open of a file as often as an engine
//!   opens it (Spark: once to plan, once per split).
//! - A columnar read ([`ReadPolicy::Columnar`], or [`ReadPolicy::Adaptive`] with a `.parquet`
//!   or `.orc` key) fetches the tail (the last 64 KiB: Parquet's trailer and a footer of up
//!   to about that size) at open; a longer footer's start is fetched by the read that asks
//!   for it, up to the tail held.
//! - Stream reads ([`Reader::read`]) that follow each other are served by parallel ranged
//!   read-ahead (adaptive, sequential and whole-file policies; columnar and random reads
//!   fetch what each read asks, at least the minimum GET, which a columnar read going on
//!   where the last one ended doubles up to a block): a window of parallel 8 MiB GETs that
//!   doubles (8 MiB to 64 MiB by default) with every block read through while the pattern holds;
//!   a jump ends the pattern and drops the blocks ahead. Read-ahead stops at the caller's
//!   split end ([`ReadOptions::split_end`]).
//! - Positioned reads ([`Reader::read_at`]) fetch just what they ask (or serve it from
//!   buffers already held) and never move the read-ahead window.
//! - Vectored reads ([`Reader::read_ranges`]) are planned together: ranges closer than the
//!   hole size share one GET, GETs larger than the maximum request are split, up to
//!   `vectored.active.reads` are in flight, and each range is delivered as soon as its
//!   bytes are in ([`VectoredRead`]). A range whose bytes the reader holds or fetches already
//!   (whole object, footer, read-ahead window) is cut from those buffers, with no GET.
//! - Copies: [`Reader::read`] copies each byte once into the caller's slice;
//!   [`Reader::read_to`] and [`Reader::read_at_to`] hand the reader's own buffers to the
//!   caller's sink (the JNI layer copies them straight into a Java array: one copy).
//!
//! # Memory
//! Every byte fetched is held against the process-wide budget the writers use
//! ([`crate::pool`]): read-ahead only takes what is free without waiting, and while anyone
//! waits for the budget a reader lets go of the read-ahead beyond the block it reads (it is
//! the first thing dropped when the budget is short; an idle reader, between calls, lets go
//! of it too, through a watching thread that runs while readers are open); the bytes a caller waits on block like a
//! writer's part, with the same no-deadlock rule (a reader holding nothing is always
//! admitted).
//!
//! # Threads
//! `read` and `unbuffer` take `&mut self`; `read_at`, `read_ranges` and `statistics` take
//! `&self` and may run from several threads at once. [`Reader::controls`] gives another
//! thread the statistics and [`Reader::stop_vectored`] without the reader (a boundary that
//! locks the reader for a stream read uses it: they never wait for that read). Blocking calls must run on a plain
//! thread, not on an async runtime; the `*_with` forms poll `interrupted` every 50 ms and
//! return [`ErrorKind::Interrupted`] when it says true.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Instant;

use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt, Shared as SharedFuture};
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange};
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;

pub use crate::config::read::{ChangeDetection, ReadConfig, ReadPolicy, StreamType};
use crate::config::{Settings, WriterConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{self, ReadLease, Store};
use crate::s3;
use crate::stats::Recorder;

mod plan;
mod s3a;

pub use s3a::read_iostatistics;

/// What the caller knows of the object and how it will read it. Serialised by name at the
/// JNI and C boundaries (`{"policy":"COLUMNAR","length":123,"etag":"\"abc\""}`; every
/// field optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    /// The read policy; `None`: the settings' (`fs.s3a.native.read.policy`, else
    /// `fs.s3a.experimental.input.fadvise`, else adaptive). Deserialised from a serde name
    /// or a Hadoop read-policy list (see [`policy_by_name_or_list`]).
    #[serde(deserialize_with = "policy_by_name_or_list")]
    pub policy: Option<ReadPolicy>,
    /// The object's length in bytes, from a file status (with or without an ETag: Spark's
    /// statuses have none): open sends no HEAD (without `etag`, the first GET's answer gives
    /// the ETag). It is trusted: reads stop at a shorter one; inside a longer one, reads past
    /// the object's real end get end of file (see the module docs). A length the caller
    /// declares without a status goes in `declared_length`.
    pub length: Option<u64>,
    /// A length declared by the caller without a file status (openFile's
    /// `fs.option.openfile.length`), used when `length` is `None`: with an ETag, or with the
    /// classic or prefetch [`StreamType`], as `length` is (trusted, no HEAD); without an ETag
    /// on the analytics stream type, not used: open sends a HEAD for the real length and ETag,
    /// as S3A's analytics stream does (see the module docs).
    pub declared_length: Option<u64>,
    /// The object's ETag (with or without the double quotes S3 sends). With the length as
    /// well, open sends no HEAD and every GET is pinned to it; without the length, the HEAD
    /// must find this ETag (else open fails: the object changed since the caller's status).
    /// Without it, every GET is pinned to the ETag the HEAD found, or with a length and no HEAD
    /// to the first GET's. An empty ETag is none.
    pub etag: Option<String>,
    /// Where the caller's split of the object ends (`fs.option.openfile.split.end`): a hint,
    /// never a limit (Hadoop's openFile spec: record readers read past it to finish their
    /// last record). Read-ahead never goes past it (unless the policy is whole-file); reads
    /// past it fetch what they ask, as random reads do. What the policy fetches regardless
    /// (a small object whole, the footer of a columnar file) it still fetches.
    pub split_end: Option<u64>,
}

/// [`ReadOptions::policy`] from its serde name (`COLUMNAR`, ...) or a Hadoop read-policy list
/// (`"parquet, vector, random, adaptive"`: the first word [`ReadPolicy::parse_list`] knows);
/// a list without a known word is no policy (the settings' one applies), as S3A does.
fn policy_by_name_or_list<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<ReadPolicy>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    Ok(s.and_then(|s| serde_json::from_value::<ReadPolicy>(serde_json::Value::String(s.clone())).ok().or_else(|| ReadPolicy::parse_list(&s))))
}

/// A reader's figures so far. Serialised by name (the JVM publishes them as IOStatistics
/// with S3A's `stream_read_*` names where one exists: see [`crate::s3a_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
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
    /// HEAD requests (0 when the caller gave a length).
    pub head_requests: u64,
    /// Of `head_requests`, those S3A's input stream itself sends (the analytics stream's, for a
    /// declared length without an ETag): S3A counts them as the stream's
    /// `action_http_head_request`, while the HEAD of an open without a length is the
    /// filesystem's (its `getFileStatus`).
    pub stream_head_requests: u64,
    /// S3A's `stream_read_opened` as the stream of the settings' [`StreamType`] counts it: a
    /// GET each (classic, prefetch), or 1 a reader (analytics).
    pub stream_opened: u64,
    /// Readers opened (1 for one reader), and the time their opens waited on S3 in all
    /// (microseconds: the HEAD, if one was sent; 0 without one).
    pub opens: u64,
    pub open_us: u64,
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
    /// seek, unbuffer, close, holes of coalesced vectored GETs); each byte fetched counts
    /// at most once, however often it was read.
    pub bytes_discarded: u64,
    /// Reads served (at least partly) from bytes fetched ahead (whole object, footer,
    /// read-ahead) by a GET started before the read began (a GET a read starts for itself,
    /// the whole object or read-ahead blocks, is no hit), and reads that found nothing
    /// fetched ahead for them.
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
    /// Read-ahead blocks let go (cancelled, or dropped unread) because another reader or a
    /// writer waited for the budget.
    pub read_ahead_dropped: u64,
    /// Of `bytes_discarded`, the bytes of holes fetched by coalesced vectored GETs.
    pub vectored_bytes_discarded: u64,
    /// GETs that found the object changed since open (412 to `If-Match`).
    pub version_mismatches: u64,
    /// GETs that failed (after the client's retries), mismatches included.
    pub errors: u64,
    /// [`Reader::unbuffer`] calls.
    pub unbuffered: u64,
    /// Bytes held in buffers now.
    pub buffered_bytes: u64,
}

/// The kinds of GET, for the statistics.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GetKind {
    Whole,
    Footer,
    ReadAhead,
    Random,
    Pread,
}

impl GetKind {
    /// Fetched ahead of any caller asking for these bytes.
    fn prefetched(self) -> bool {
        matches!(self, GetKind::Whole | GetKind::Footer | GetKind::ReadAhead)
    }
}

/// The counters behind [`ReadStatistics`].
#[derive(Default)]
struct Counters {
    /// The reader answers as S3A's analytics stream: `stream_opened` counts the reader, not its GETs.
    analytics: bool,
    stream_head_requests: AtomicU64,
    stream_opened: AtomicU64,
    bytes_read: AtomicU64,
    read_operations: AtomicU64,
    pread_operations: AtomicU64,
    vectored_operations: AtomicU64,
    vectored_ranges: AtomicU64,
    seeks: AtomicU64,
    head_requests: AtomicU64,
    opens: AtomicU64,
    open_us: AtomicU64,
    gets_whole: AtomicU64,
    gets_footer: AtomicU64,
    gets_read_ahead: AtomicU64,
    gets_random: AtomicU64,
    gets_pread: AtomicU64,
    gets_vectored: AtomicU64,
    bytes_fetched: AtomicU64,
    bytes_discarded: AtomicU64,
    prefetch_hits: AtomicU64,
    prefetch_misses: AtomicU64,
    waits: AtomicU64,
    wait_us: AtomicU64,
    budget_waits: AtomicU64,
    budget_wait_us: AtomicU64,
    read_ahead_skipped: AtomicU64,
    read_ahead_dropped: AtomicU64,
    vectored_bytes_discarded: AtomicU64,
    version_mismatches: AtomicU64,
    errors: AtomicU64,
    unbuffered: AtomicU64,
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

impl Counters {
    fn get(&self, kind: GetKind) {
        self.gets_started(1);
        add(
            match kind {
                GetKind::Whole => &self.gets_whole,
                GetKind::Footer => &self.gets_footer,
                GetKind::ReadAhead => &self.gets_read_ahead,
                GetKind::Random => &self.gets_random,
                GetKind::Pread => &self.gets_pread,
            },
            1,
        );
    }

    /// `n` GETs started: S3A's classic stream counts each as an open of its stream.
    fn gets_started(&self, n: u64) {
        if !self.analytics {
            add(&self.stream_opened, n);
        }
    }

    fn snapshot(&self, buffered_bytes: u64) -> ReadStatistics {
        let l = |c: &AtomicU64| c.load(Relaxed);
        ReadStatistics {
            bytes_read: l(&self.bytes_read),
            read_operations: l(&self.read_operations),
            pread_operations: l(&self.pread_operations),
            vectored_operations: l(&self.vectored_operations),
            vectored_ranges: l(&self.vectored_ranges),
            seeks: l(&self.seeks),
            head_requests: l(&self.head_requests),
            stream_head_requests: l(&self.stream_head_requests),
            stream_opened: l(&self.stream_opened),
            opens: l(&self.opens),
            open_us: l(&self.open_us),
            gets_whole: l(&self.gets_whole),
            gets_footer: l(&self.gets_footer),
            gets_read_ahead: l(&self.gets_read_ahead),
            gets_random: l(&self.gets_random),
            gets_pread: l(&self.gets_pread),
            gets_vectored: l(&self.gets_vectored),
            bytes_fetched: l(&self.bytes_fetched),
            bytes_discarded: l(&self.bytes_discarded),
            prefetch_hits: l(&self.prefetch_hits),
            prefetch_misses: l(&self.prefetch_misses),
            waits: l(&self.waits),
            wait_us: l(&self.wait_us),
            budget_waits: l(&self.budget_waits),
            budget_wait_us: l(&self.budget_wait_us),
            read_ahead_skipped: l(&self.read_ahead_skipped),
            read_ahead_dropped: l(&self.read_ahead_dropped),
            vectored_bytes_discarded: l(&self.vectored_bytes_discarded),
            version_mismatches: l(&self.version_mismatches),
            errors: l(&self.errors),
            unbuffered: l(&self.unbuffered),
            buffered_bytes,
        }
    }
}

/// What every read of one reader shares: the object, its client and the counters.
struct Object {
    bucket: String,
    key: String,
    path: Path,
    store: Arc<Store>,
    rt: &'static Runtime,
    config: ReadConfig,
    length: u64,
    /// The ETag every GET is pinned to: the caller's or the HEAD's at open, or, opened with
    /// a length and no ETag (no HEAD), the one the first GET to answer carries.
    etag: std::sync::OnceLock<String>,
    /// Read-ahead stops here: the caller's split end, else the object's length.
    split_end: u64,
    /// Where a GET's answer showed the object to end, before `length` (a declared length longer
    /// than the object: S3 answered fewer bytes than asked, or 416 to a GET starting at or past
    /// its end: then at most there); `u64::MAX` until then.
    real_end: AtomicU64,
    referer: Option<object_store::HeaderValue>,
    counters: Arc<Counters>,
    /// The requests on the wire (counted into the process-wide figures).
    recorder: Arc<Recorder>,
    /// GETs started so far ([`FetchInner::born`]: a read counts as a prefetch hit only the
    /// bytes of a prefetch started before the read began).
    started: AtomicU64,
}

impl Object {
    fn describe(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    /// Where the object was seen to end before its length, if a GET's answer showed that.
    fn known_end(&self) -> Option<u64> {
        Some(self.real_end.load(Relaxed)).filter(|e| *e != u64::MAX)
    }

    /// How many of `len` bytes at `position` a read can hand over, as far as the reader knows
    /// (its length, and the end a short answer showed); 0 is the end of file. A read that goes
    /// on exactly where a short answer ended gets 0 without a GET (as S3A's stream, whose
    /// connection stays there); a read past that end still asks S3, whose answer (416) is the
    /// end of file again.
    fn readable(&self, position: u64, len: usize) -> usize {
        if position >= self.length {
            return 0;
        }
        let mut left = self.length - position;
        if let Some(e) = self.known_end() {
            if position == e {
                return 0;
            }
            if position < e {
                left = left.min(e - position);
            }
        }
        len.min(left.min(usize::MAX as u64) as usize)
    }

    /// The error of a GET starting at or past the object's real end (S3's 416 `InvalidRange`):
    /// end of file, naming the key and the range.
    fn past_end(&self, range: &Range<u64>) -> Error {
        Error::end_of_file(format!(
            "GetObject {} bytes {}-{}: the object ends before byte {} (416 InvalidRange: requested range not satisfiable; its length at open was {})",
            self.describe(),
            range.start,
            range.end - 1,
            range.start,
            self.length
        ))
        .with_s3_code("InvalidRange")
    }

    /// The ETag pinned, or "" before the first GET answered (opened with a length alone).
    fn etag(&self) -> &str {
        self.etag.get().map_or("", String::as_str)
    }

    /// The error of a GET that found the object changed since open (S3A's
    /// `RemoteFileChangedException`), counted as a version mismatch.
    fn changed(&self) -> Error {
        add(&self.counters.version_mismatches, 1);
        Error::new(
            ErrorKind::Io,
            format!("{} changed since it was opened (its ETag is no longer {}): reopen it to read the new version", self.describe(), self.etag()),
        )
        .with_s3_code("PreconditionFailed")
    }

    /// One GET of `range`, pinned to the ETag unless change detection is off
    /// ([`ChangeDetection`]). An object changed since open is S3's 412 to `If-Match`
    /// (object_store's `Precondition`): an [`ErrorKind::Io`] error naming the key, with S3's
    /// code `PreconditionFailed` (the JVM layer raises it as S3A's `RemoteFileChangedException`).
    /// Before the ETag is known (opened with a length and no ETag) GETs go unpinned: the
    /// first answer's ETag is pinned from then on, and an answer with another one is the
    /// same change (in S3A's client mode, the answer's ETag is compared in the same way).
    /// A range starting at or past the object's real end (S3's 416) is
    /// [`ErrorKind::EndOfFile`]; an answer shorter than the range (the object ends inside it)
    /// is the bytes there are, and the reader notes where the object ends.
    async fn get(&self, range: Range<u64>) -> Result<Bytes> {
        let mode = self.config.change_detection;
        let options = GetOptions {
            if_match: if mode == ChangeDetection::Pinned { self.etag.get().cloned() } else { None },
            range: Some(GetRange::Bounded(range.clone())),
            ..Default::default()
        };
        let fetched = pool::with_referer(self.referer.clone(), s3::get_object(&self.store, &self.path, options, &self.recorder)).await;
        if let Err(e) = &fetched {
            if invalid_range(e) {
                // The range starts at or past the object's end: end of file, not a failure; the
                // object ends at or before its start, as a short answer shows (a read going on
                // there gets the end of file without another GET, read-ahead stops there).
                self.real_end.fetch_min(range.start, Relaxed);
                return Err(self.past_end(&range));
            }
            add(&self.counters.errors, 1);
        }
        let bytes = fetched.map_err(|e| match e {
            object_store::Error::Precondition { .. } => self.changed(),
            object_store::Error::NotFound { .. } if self.etag.get().is_none() => {
                // Opened with a length alone (no HEAD): S3A, given a status, reports a missing
                // object at the first read too.
                Error::new(ErrorKind::NotFound, format!("{}: no such object", self.describe()))
            }
            object_store::Error::NotFound { .. } => {
                Error::new(ErrorKind::NotFound, format!("{} was deleted since it was opened", self.describe()))
            }
            e => Error::from_store(format_args!("GetObject {} bytes {}-{}", self.describe(), range.start, range.end - 1), &e, &self.store.config.secrets()),
        })
        .and_then(|(meta, bytes)| {
            let Some(theirs) = meta.e_tag.as_deref().map(quoted) else { return Ok(bytes) };
            let pinned = self.etag.get_or_init(|| theirs.clone());
            if *pinned != theirs {
                match mode {
                    ChangeDetection::Pinned => return Err(self.changed()),
                    // S3A's warn mode: counted (S3A also logs it), the bytes used.
                    ChangeDetection::Warn => add(&self.counters.version_mismatches, 1),
                    ChangeDetection::None => {}
                }
            }
            Ok(bytes)
        })?;
        add(&self.counters.bytes_fetched, bytes.len() as u64);
        if (bytes.len() as u64) < range.end - range.start {
            // S3 answers a range running past the object's end with the bytes up to it: the
            // object is shorter than its length at open (a declared length the reader trusted).
            // That is where it ends: the read that wanted more ends there.
            self.real_end.fetch_min(range.start + bytes.len() as u64, Relaxed);
        }
        Ok(bytes)
    }

    /// Start a GET of `range` on the runtime, its bytes held by `lease`.
    fn start(self: &Arc<Self>, range: Range<u64>, kind: GetKind, lease: ReadLease) -> Fetch {
        self.counters.get(kind);
        let born = self.started.fetch_add(1, Relaxed);
        let me = self.clone();
        let r = range.clone();
        let got = Arc::new(AtomicU64::new(0));
        let arrived = got.clone();
        let end = Arc::new(AtomicU64::new(range.end));
        let ends = end.clone();
        let task = self.rt.spawn(async move {
            let start = r.start;
            let out = me.get(r).await;
            match &out {
                Ok(b) => {
                    arrived.store(b.len() as u64, Relaxed);
                    ends.store(start + b.len() as u64, Relaxed);
                }
                Err(e) if e.kind() == ErrorKind::EndOfFile => ends.store(start, Relaxed),
                Err(_) => {}
            }
            out
        });
        let abort = task.abort_handle();
        let what = self.describe();
        let fut = async move {
            task.await.unwrap_or_else(|_| Err(Error::new(ErrorKind::Io, format!("a GET of {what} was cancelled"))))
        }
        .boxed()
        .shared();
        Fetch(Arc::new(FetchInner { range, kind, born, fut, abort, got, end, used: Mutex::new(Vec::new()), counters: self.counters.clone(), _lease: lease }))
    }

    /// Bytes for the caller to wait on, from the budget (see [`pool::MemoryBudget::read`]).
    fn lease(&self, bytes: u64, interrupted: &dyn Fn() -> bool) -> Result<ReadLease> {
        let started = Instant::now();
        let (lease, waited) = pool::budget().read(bytes, &|| {
            if interrupted() {
                Err(Error::interrupted("reading"))
            } else {
                Ok(())
            }
        })?;
        if waited {
            add(&self.counters.budget_waits, 1);
            add(&self.counters.budget_wait_us, started.elapsed().as_micros() as u64);
        }
        Ok(lease)
    }
}

/// A GET started on the runtime, shared by whoever reads its bytes. Dropping the last copy
/// cancels it if still running and counts its bytes never read as discarded.
#[derive(Clone)]
struct Fetch(Arc<FetchInner>);

struct FetchInner {
    range: Range<u64>,
    kind: GetKind,
    fut: SharedFuture<BoxFuture<'static, Result<Bytes>>>,
    abort: tokio::task::AbortHandle,
    /// Bytes its GET brought (0 until it answered), whether or not anyone waited for them.
    got: Arc<AtomicU64>,
    /// Where its bytes end: `range.end` until it answered, then the end of what came (a short
    /// answer: the object ends there; a 416: `range.start`).
    end: Arc<AtomicU64>,
    /// Which GET of the reader it is (0 for the first started): a read that began when
    /// [`Object::started`] was `n` counts hits only on prefetches born before `n`.
    born: u64,
    /// The bytes of it handed to callers, as sorted disjoint ranges of offsets from
    /// `range.start`: a byte handed over twice counts once.
    used: Mutex<Vec<Range<u64>>>,
    counters: Arc<Counters>,
    _lease: ReadLease,
}

impl Drop for FetchInner {
    fn drop(&mut self) {
        self.abort.abort();
        // Counted from what the GET brought, not from what a caller awaited: read-ahead that
        // arrived and was never read is discarded too.
        let len = self.got.load(Relaxed);
        let used: u64 = lock(&self.used).iter().map(|r| r.end.min(len).saturating_sub(r.start.min(len))).sum();
        add(&self.counters.bytes_discarded, len.saturating_sub(used));
    }
}

impl FetchInner {
    /// Note the `n` bytes at offset `from` of its range as handed to a caller.
    fn mark_used(&self, from: u64, n: u64) {
        if n == 0 {
            return;
        }
        let mut used = lock(&self.used);
        let (mut start, mut end) = (from, from + n);
        // Merge with every range it touches or overlaps.
        used.retain(|r| {
            if r.end < start || r.start > end {
                return true;
            }
            start = start.min(r.start);
            end = end.max(r.end);
            false
        });
        let at = used.partition_point(|r| r.start < start);
        used.insert(at, start..end);
    }

    /// True when a read that began at `since` ([`Object::started`] then) finds these bytes
    /// fetched ahead for it: a prefetch (whole object, footer, read-ahead) started before.
    fn hit_for(&self, since: u64) -> bool {
        self.kind.prefetched() && self.born < since
    }
}

impl Fetch {
    /// True when its bytes (those asked while in flight, those that came once answered)
    /// include `position`.
    fn covers(&self, position: u64) -> bool {
        self.0.range.start <= position && position < self.0.end.load(Relaxed)
    }

    fn held(&self) -> u64 {
        self.0._lease.bytes()
    }

    /// Hand up to `max` of its bytes from `position` to `dest` at offset `at`, waiting for
    /// the GET; returns how many (as many as it has: 0 when the object ended before `position`).
    fn copy(&self, object: &Object, position: u64, dest: &mut Dest<'_>, at: usize, max: usize, since: u64, interrupted: &dyn Fn() -> bool) -> Result<usize> {
        let bytes = match self.0.fut.peek() {
            Some(out) => out.clone()?,
            None => {
                let started = Instant::now();
                let out = pool::block_on(object.rt, &format!("reading {}", object.describe()), interrupted, self.0.fut.clone())??;
                add(&object.counters.waits, 1);
                add(&object.counters.wait_us, started.elapsed().as_micros() as u64);
                out
            }
        };
        let from = (position - self.0.range.start) as usize;
        if from >= bytes.len() {
            // A short answer: the object ends before `position`.
            return Ok(0);
        }
        let n = max.min(bytes.len() - from);
        dest.put(at, &bytes[from..from + n])?;
        self.0.mark_used(from as u64, n as u64);
        if self.0.hit_for(since) {
            add(&object.counters.prefetch_hits, 1);
        }
        Ok(n)
    }
}

/// Where a read's bytes go.
enum Dest<'a> {
    /// The caller's memory, from its start.
    Slice(&'a mut [u8]),
    /// The caller's function, handed `(offset, bytes)` straight from the reader's buffers.
    Sink(&'a mut dyn FnMut(usize, &[u8]) -> Result<()>),
}

impl Dest<'_> {
    fn put(&mut self, at: usize, bytes: &[u8]) -> Result<()> {
        match self {
            Dest::Slice(buf) => {
                buf[at..at + bytes.len()].copy_from_slice(bytes);
                #[cfg(feature = "test-hooks")]
                add(&COPIED_INTO_SLICES, bytes.len() as u64);
                Ok(())
            }
            Dest::Sink(f) => f(at, bytes),
        }
    }
}

/// Bytes this process's readers copied out of their buffers into callers' slices, and bytes
/// boundaries copied out of them straight into their callers' memory (the test hook
/// [`copied_bytes`]).
#[cfg(feature = "test-hooks")]
static COPIED_INTO_SLICES: AtomicU64 = AtomicU64::new(0);
#[cfg(feature = "test-hooks")]
static COPIED_BY_SINKS: AtomicU64 = AtomicU64::new(0);

/// Count `n` bytes a boundary copied from a reader's buffers straight into its caller's memory
/// (a sink's copy into a Java array, a vectored range into a buffer); nothing without feature
/// `test-hooks`.
#[inline]
pub(crate) fn count_copy(n: usize) {
    #[cfg(feature = "test-hooks")]
    add(&COPIED_BY_SINKS, n as u64);
    #[cfg(not(feature = "test-hooks"))]
    let _ = n;
}

/// Bytes copied out of readers' buffers by this process so far: `(into callers' slices by the
/// reader, straight into callers' memory by a boundary)`. A read of `n` bytes copied once adds
/// `n` to one of them: to the first for a slice (a direct buffer), to the second for a Java
/// array; a copy through a staging slice would add `n` to the first for an array read. A test
/// hook (feature `test-hooks`).
#[cfg(feature = "test-hooks")]
pub fn copied_bytes() -> (u64, u64) {
    (COPIED_INTO_SLICES.load(Relaxed), COPIED_BY_SINKS.load(Relaxed))
}

/// Buffers every read kind may use: the whole object, the footer region.
#[derive(Default)]
struct Held {
    fetches: Vec<Fetch>,
    whole_started: bool,
}

/// The stream's pattern and its read-ahead window.
struct Stream {
    /// The reader's counters (read-ahead dropped).
    counters: Arc<Counters>,
    /// Where the last stream read ended.
    expected: Option<u64>,
    sequential: bool,
    /// The current stream read starts where the last one ended.
    continued: bool,
    /// The smallest GET of a stream read outside read-ahead: the minimum GET size, doubled
    /// (up to a block) by each columnar read that goes on past the bytes held.
    min_get: u64,
    /// Bytes to keep fetched or fetching ahead of the position while the pattern holds:
    /// the block size at first, doubling with every block read through, up to the maximum.
    ahead: u64,
    /// Contiguous blocks from the current position on: read-ahead, or the last random GET.
    window: VecDeque<Fetch>,
}

impl Stream {
    /// Let go of the read-ahead beyond the block with the next stream read's byte (someone
    /// waits for the budget: read-ahead is the first thing given back).
    fn drop_ahead(&mut self) {
        let end = self.expected.unwrap_or(0);
        let keep = self.window.iter().take_while(|f| f.0.range.start <= end).count().max(1);
        let dropped = self.window.len().saturating_sub(keep);
        if dropped > 0 {
            self.window.truncate(keep);
            add(&self.counters.read_ahead_dropped, dropped as u64);
        }
    }
}

/// Streams of live readers, watched while anyone waits for the budget (see [`reap`]).
static WATCHED: std::sync::LazyLock<Mutex<Watched>> = std::sync::LazyLock::new(Default::default);

#[derive(Default)]
struct Watched {
    streams: Vec<std::sync::Weak<Mutex<Stream>>>,
    /// The watching thread runs (it ends when no reader is left).
    running: bool,
}

/// How often the watching thread looks at the budget.
const REAP_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// Watch `stream` until its reader is dropped: a reader that reads no more (idle, not closed)
/// still gives its read-ahead back when the budget is short.
fn watch(stream: &Arc<Mutex<Stream>>) {
    let mut w = lock(&WATCHED);
    w.streams.retain(|s| s.strong_count() > 0);
    w.streams.push(Arc::downgrade(stream));
    if !w.running {
        w.running = std::thread::Builder::new().name("s3native-read-ahead".into()).spawn(reap).is_ok();
    }
}

/// The watching thread: while anyone waits for the budget, every reader not in a call lets
/// go of its read-ahead as a reader does after each read ([`Stream::drop_ahead`]); a reader
/// in a call does that itself when the call ends. Ends when no reader is left.
fn reap() {
    loop {
        std::thread::sleep(REAP_EVERY);
        let streams: Vec<Arc<Mutex<Stream>>> = {
            let mut w = lock(&WATCHED);
            w.streams.retain(|s| s.strong_count() > 0);
            if w.streams.is_empty() {
                w.running = false;
                return;
            }
            if !pool::budget().short() {
                continue;
            }
            w.streams.iter().filter_map(std::sync::Weak::upgrade).collect()
        };
        for s in &streams {
            if let Ok(mut st) = s.try_lock() {
                if !st.window.is_empty() {
                    st.drop_ahead();
                }
            }
        }
    }
}

/// Readers of this process: the summed figures of those dropped, and the live ones.
static READERS: std::sync::LazyLock<Mutex<(ReadStatistics, Vec<std::sync::Weak<Counters>>)>> = std::sync::LazyLock::new(Default::default);

/// `a + b`, field by field (every field is a count or a sum), by name.
fn sum(a: &ReadStatistics, b: &ReadStatistics) -> ReadStatistics {
    let (Ok(serde_json::Value::Object(mut x)), Ok(serde_json::Value::Object(y))) = (serde_json::to_value(a), serde_json::to_value(b)) else {
        return a.clone();
    };
    for (k, v) in y {
        let total = x.get(&k).and_then(|t| t.as_u64()).unwrap_or(0).saturating_add(v.as_u64().unwrap_or(0));
        x.insert(k, total.into());
    }
    serde_json::from_value(serde_json::Value::Object(x)).unwrap_or_else(|_| a.clone())
}

/// Process-wide reader statistics: the sums over every reader of this process so far, open
/// or dropped (`buffered_bytes` is 0 here: the budget's figures are in
/// [`crate::global_statistics`]).
pub fn global_read_statistics() -> ReadStatistics {
    let g = lock(&READERS);
    g.1.iter().filter_map(std::sync::Weak::upgrade).fold(g.0.clone(), |acc, c| sum(&acc, &c.snapshot(0)))
}

/// Reads one object, pinned to the version (ETag) found at open. See the module docs.
pub struct Reader {
    object: Arc<Object>,
    policy: ReadPolicy,
    held: Arc<Mutex<Held>>,
    stream: Arc<Mutex<Stream>>,
    /// The stops of this reader's vectored reads still alive ([`Reader::stop_vectored`]).
    vectored: Arc<Mutex<Vec<Weak<VectoredStop>>>>,
}

/// What another thread may do to a [`Reader`] without the reader itself (while a stream read
/// holds it, as the JNI and C layers' lock does for [`Reader::read`]): stop its vectored reads
/// and take its statistics. From [`Reader::controls`]; clones share the reader's state. Its
/// calls never wait for a read in progress (only for the short locks a read takes between
/// its waits).
#[derive(Clone)]
pub struct ReaderControls {
    counters: Arc<Counters>,
    held: Arc<Mutex<Held>>,
    stream: Arc<Mutex<Stream>>,
    vectored: Arc<Mutex<Vec<Weak<VectoredStop>>>>,
}

impl ReaderControls {
    /// [`Reader::stop_vectored`].
    pub fn stop_vectored(&self, why: &str) -> usize {
        let live = std::mem::take(&mut *lock(&self.vectored));
        let mut stopped = 0;
        for stop in live.iter().filter_map(Weak::upgrade) {
            if stop.why.set(why.to_string()).is_ok() {
                stopped += 1;
            }
            if let Some(t) = stop.task.get() {
                t.abort();
            }
            // A permit when no one waits yet: the next wait returns at once.
            stop.wake.notify_one();
        }
        stopped
    }

    /// [`Reader::statistics`].
    pub fn statistics(&self) -> ReadStatistics {
        let held: u64 = lock(&self.held).fetches.iter().map(Fetch::held).sum();
        let window: u64 = lock(&self.stream).window.iter().map(Fetch::held).sum();
        self.counters.snapshot(held + window)
    }
}

/// How a reader stops one of its vectored reads (close, unbuffer): the reason, once; a wake-up
/// for the caller waiting in [`VectoredRead::next_with`]; the task running its GETs.
#[derive(Default)]
struct VectoredStop {
    why: OnceLock<String>,
    wake: tokio::sync::Notify,
    task: OnceLock<tokio::task::AbortHandle>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code panics while holding these locks.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The ranges of one [`Reader::read_ranges`] call, delivered as each completes: iterate (or
/// call [`VectoredRead::next_with`]) until `None`. Each item is `(index, bytes)`, `index`
/// the range's position in the request. The bytes stay held against the memory budget
/// until dropped. Dropping a `VectoredRead` cancels the GETs not yet done;
/// [`Reader::stop_vectored`] (and [`Reader::unbuffer`]) fails the ranges not yet taken.
pub struct VectoredRead {
    rx: tokio::sync::mpsc::UnboundedReceiver<(usize, Result<Bytes>)>,
    count: usize,
    remaining: usize,
    object: Arc<Object>,
    task: Option<tokio::task::AbortHandle>,
    lease: Arc<Option<ReadLease>>,
    stop: Arc<VectoredStop>,
}

/// Delivered bytes with the lease that holds them.
struct Leased(Bytes, #[allow(dead_code)] Arc<Option<ReadLease>>);

impl AsRef<[u8]> for Leased {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl VectoredRead {
    /// Ranges asked for.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no range was asked for.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The next range to complete, blocking until one does; `None` once every range was
    /// delivered. A failure is delivered once, as [`VectoredRead::next_range_with`] describes:
    /// after a range's own failure (past the object's real end) the other ranges are still
    /// delivered; after a failure of the whole read, none.
    pub fn next_with(&mut self, interrupted: &dyn Fn() -> bool) -> Option<Result<(usize, Bytes)>> {
        self.next_range_with(interrupted).map(|r| r.map_err(|e| e.error))
    }

    /// [`VectoredRead::next_with`], saying which range failed: `Err` with `range: Some(i)` is
    /// the failure of range `i` alone ([`ErrorKind::EndOfFile`]: it runs past the object's
    /// real end, inside a declared length longer than the object), and later calls deliver
    /// the other ranges; `range: None` ends the read (a GET that failed after retries, an
    /// object changed since open, `interrupted`: [`ErrorKind::Interrupted`]). Once the
    /// reader stopped it ([`Reader::stop_vectored`]), the next call fails the read with
    /// [`ErrorKind::Stopped`] naming the object and the reason, also when ranges were in
    /// already but not taken.
    pub fn next_range_with(&mut self, interrupted: &dyn Fn() -> bool) -> Option<std::result::Result<(usize, Bytes), VectoredError>> {
        if self.remaining == 0 {
            return None;
        }
        let what = format!("reading ranges of {}", self.object.describe());
        let whole = |error: Error| Some(Err(VectoredError { range: None, error }));
        let stopped = |this: &mut Self| {
            this.remaining = 0;
            let why = this.stop.why.get().map(String::as_str).unwrap_or("stopped");
            whole(Error::new(ErrorKind::Stopped, format!("{what}: {why} with ranges in flight")))
        };
        if self.stop.why.get().is_some() {
            return stopped(self);
        }
        let stop = self.stop.clone();
        let rx = &mut self.rx;
        let next = async move {
            tokio::select! {
                biased;
                _ = stop.wake.notified() => None,
                got = rx.recv() => Some(got),
            }
        };
        let got = match pool::block_on(self.object.rt, &what, interrupted, next) {
            Err(e) => return whole(e),
            Ok(None) => return stopped(self),
            Ok(Some(_)) if self.stop.why.get().is_some() => return stopped(self),
            Ok(Some(got)) => got,
        };
        match got {
            Some((i, Ok(b))) => {
                self.remaining -= 1;
                add(&self.object.counters.bytes_read, b.len() as u64);
                Some(Ok((i, Bytes::from_owner(Leased(b, self.lease.clone())))))
            }
            Some((i, Err(error))) if i < self.count => {
                self.remaining -= 1;
                Some(Err(VectoredError { range: Some(i), error }))
            }
            Some((_, Err(e))) => {
                self.remaining = 0;
                whole(e)
            }
            None => {
                self.remaining = 0;
                whole(Error::new(ErrorKind::Io, format!("{what}: the reads stopped")))
            }
        }
    }
}

/// A failure of a vectored read ([`VectoredRead::next_range_with`]): of the one range
/// `range` (an index into the request; the others go on), or of the whole read (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectoredError {
    /// The range that failed, alone; `None`: the read failed and delivers nothing more.
    pub range: Option<usize>,
    /// What failed.
    pub error: Error,
}

impl std::fmt::Display for VectoredError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.error, f)
    }
}

impl Iterator for VectoredRead {
    type Item = Result<(usize, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(&|| false)
    }
}

impl Drop for VectoredRead {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

/// Key endings (of `fs.s3a.*` and `fs.s3a.bucket.<b>.*` keys) that only shape written
/// objects: [`WriterConfig::resolve`] refuses them as unsupported for writing, but a read
/// is the same without them.
const WRITE_ONLY: [&str; 2] = [".acl.default", ".encryption.context"];

/// True for a key whose name says it is a columnar file.
fn columnar_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with(".parquet") || k.ends_with(".orc")
}

/// True for S3's answer to a GET whose range starts at or past the object's end: 416 with the
/// code `InvalidRange`.
fn invalid_range(e: &object_store::Error) -> bool {
    crate::error::s3_code_of(e).as_deref() == Some("InvalidRange") || e.to_string().contains("416 Range Not Satisfiable")
}

/// `etag` as S3 sends it, in double quotes (a weak `W/"..."` one as it is): the reader accepts
/// an ETag in either form and keeps this one.
fn quoted(etag: &str) -> String {
    if etag.starts_with('"') || etag.starts_with("W/") {
        etag.to_string()
    } else {
        format!("\"{etag}\"")
    }
}

impl Reader {
    /// Open `s3://bucket/key` for reading, with the endpoint, credentials and read settings of
    /// `settings` (the same keys as [`Writer::open`](crate::Writer::open), plus
    /// [`crate::config::read`]'s). Settings that only shape written objects
    /// (`fs.s3a.acl.default`, `fs.s3a.encryption.context`) are ignored here.
    ///
    /// Sends one HEAD unless `options` give a length (or a declared length the settings'
    /// [`StreamType`] uses: see [`ReadOptions::declared_length`]), and starts the footer GET of
    /// a columnar read. Errors: [`ErrorKind::NotFound`] naming the key when there is no
    /// object; [`ErrorKind::InvalidArgument`] for a bad bucket, key or setting (naming the
    /// key); [`ErrorKind::Unsupported`] for settings the native reader cannot honour; S3's
    /// other answers.
    pub fn open(bucket: &str, key: &str, settings: &Settings, options: ReadOptions) -> Result<Reader> {
        Reader::open_with(bucket, key, settings, options, &|| false)
    }

    /// [`Reader::open`], polling `interrupted`.
    pub fn open_with(bucket: &str, key: &str, settings: &Settings, options: ReadOptions, interrupted: &dyn Fn() -> bool) -> Result<Reader> {
        if key.is_empty() || key.starts_with('/') {
            return Err(Error::invalid_argument(format!("object key '{key}' must be non-empty without a leading '/'")));
        }
        // Settings that only shape what is written (a canned ACL, an SSE-KMS encryption
        // context) do not stop a native read.
        let mut read_settings: Settings = settings.iter().filter(|(k, _)| !WRITE_ONLY.iter().any(|w| k.ends_with(w))).collect();
        if let Some(c) = settings.credentials() {
            read_settings = read_settings.with_credentials(c.clone());
        }
        let settings = &read_settings;
        let config = WriterConfig::resolve(settings, bucket)?;
        let read = ReadConfig::resolve(settings, bucket)?;
        let path = s3::object_path(key)?;
        let rt = pool::apply_process_settings(&config);
        let store = pool::store(&config.store)?;
        let counters = Arc::new(Counters { analytics: read.stream_type == StreamType::Analytics, ..Default::default() });
        let recorder = Arc::new(Recorder::child_of(pool::global_stats()));
        let describe = format!("s3://{bucket}/{key}");
        let referer = config.audit_referrer.as_deref().and_then(|r| object_store::HeaderValue::from_str(r).ok());
        // The ETag in either form (S3A's status holds it unquoted on SDK v1, quoted on v2).
        let given_etag = options.etag.as_deref().map(str::trim).filter(|e| !e.is_empty()).map(quoted);
        // What open waits on the network for (as S3A times a file's open: its HEAD; none: 0).
        let mut open_us = 0;
        // A declared length is used as a status's length unless the stream type is analytics
        // and no ETag came with it: that stream HEADs for the real length and ETag instead.
        let declared = options.declared_length.filter(|_| given_etag.is_some() || read.stream_type != StreamType::Analytics);
        let stream_head = options.length.is_none() && options.declared_length.is_some() && declared.is_none();
        let (length, etag) = match (options.length.or(declared), &given_etag) {
            (Some(l), Some(e)) => (l, Some(e.clone())),
            // The length of a file status: the first GET's answer gives the ETag.
            (Some(l), None) => (l, None),
            (None, _) => {
                add(&counters.head_requests, 1);
                if stream_head {
                    add(&counters.stream_head_requests, 1);
                }
                let heading = Instant::now();
                let head = GetOptions { head: true, ..Default::default() };
                let found = pool::block_on(
                    rt,
                    &format!("opening {describe}"),
                    interrupted,
                    pool::with_referer(referer.clone(), s3::get_object(&store, &path, head, &recorder)),
                )?;
                // (S3A times its own status probe as the file's open, not the analytics
                // stream's HEAD.)
                if !stream_head {
                    open_us = heading.elapsed().as_micros() as u64;
                }
                let meta = match found {
                    Ok((meta, _)) => meta,
                    Err(object_store::Error::NotFound { .. }) => {
                        return Err(Error::new(ErrorKind::NotFound, format!("{describe}: no such object")))
                    }
                    Err(e) => return Err(Error::from_store(format_args!("HeadObject {describe}"), &e, &store.config.secrets())),
                };
                let etag = quoted(&meta.e_tag.ok_or_else(|| Error::new(ErrorKind::Io, format!("HeadObject {describe} returned no ETag")))?);
                if let Some(theirs) = given_etag.clone().filter(|e| *e != etag) {
                    add(&counters.version_mismatches, 1);
                    return Err(Error::new(
                        ErrorKind::Io,
                        format!("{describe} changed since its status was taken (its ETag is {etag}, not {theirs}): reopen it to read the new version"),
                    )
                    .with_s3_code("PreconditionFailed"));
                }
                (meta.size, Some(etag))
            }
        };
        let policy = match options.policy.unwrap_or(read.policy) {
            ReadPolicy::Adaptive if columnar_key(key) => ReadPolicy::Columnar,
            p => p,
        };
        let ahead = read.block_size;
        let object = Arc::new(Object {
            bucket: bucket.to_string(),
            key: key.to_string(),
            path,
            store,
            rt,
            config: read,
            length,
            etag: etag.map(std::sync::OnceLock::from).unwrap_or_default(),
            split_end: options.split_end.map_or(length, |e| e.min(length)),
            real_end: AtomicU64::new(u64::MAX),
            referer,
            counters,
            recorder,
            started: AtomicU64::new(0),
        });
        {
            let mut g = lock(&READERS);
            g.1.retain(|w| w.strong_count() > 0);
            g.1.push(Arc::downgrade(&object.counters));
        }
        let stream = Stream {
            counters: object.counters.clone(),
            expected: None,
            sequential: false,
            continued: false,
            min_get: object.config.min_read_size,
            ahead,
            window: VecDeque::new(),
        };
        let reader = Reader {
            object,
            policy,
            held: Arc::new(Mutex::new(Held::default())),
            stream: Arc::new(Mutex::new(stream)),
            vectored: Arc::new(Mutex::new(Vec::new())),
        };
        watch(&reader.stream);
        let c = &reader.object.config;
        // A columnar reader reads the footer first: its tail (the whole object when that is
        // smaller) is fetched now, whatever the object's size (columnar reads never fetch a
        // small object whole: they read its footer and the column chunks they need).
        if policy == ReadPolicy::Columnar && c.footer_size > 0 && length > 0 && length <= c.footer_max_object_size {
            let start = length - c.footer_size.min(length);
            let lease = reader.object.lease(length - start, interrupted)?;
            let f = reader.object.start(start..length, GetKind::Footer, lease);
            lock(&reader.held).fetches.push(f);
        }
        add(&reader.object.counters.opens, 1);
        if reader.object.counters.analytics {
            add(&reader.object.counters.stream_opened, 1);
        }
        add(&reader.object.counters.open_us, open_us);
        Ok(reader)
    }

    /// The bucket read from.
    pub fn bucket(&self) -> &str {
        &self.object.bucket
    }

    /// The object key read from.
    pub fn key(&self) -> &str {
        &self.object.key
    }

    /// The object's length in bytes.
    pub fn length(&self) -> u64 {
        self.object.length
    }

    /// The ETag every GET is pinned to, in double quotes as S3 sends it; empty until the first
    /// GET answered when the reader was opened with a length and no ETag (no HEAD).
    pub fn etag(&self) -> &str {
        self.object.etag()
    }

    /// The read policy in force (the caller's, the settings', or `Columnar` for a
    /// `.parquet`/`.orc` key read adaptively).
    pub fn policy(&self) -> ReadPolicy {
        self.policy
    }

    /// A held buffer (whole object, footer) with the byte at `position`.
    fn held_at(&self, position: u64) -> Option<Fetch> {
        lock(&self.held).fetches.iter().find(|f| f.covers(position)).cloned()
    }

    /// The whole object, fetched once, when it is small, the policy reads whole objects
    /// ([`ReadPolicy::reads_whole_objects`]) and no split end says the caller reads only
    /// part of it (a record reader's split: read-ahead then stops at the split end); else `None`.
    fn whole(&self, interrupted: &dyn Fn() -> bool) -> Result<Option<Fetch>> {
        let length = self.object.length;
        let split = self.object.split_end < length && self.policy != ReadPolicy::WholeFile;
        if length == 0 || length > self.object.config.small_object_size || !self.policy.reads_whole_objects() || split {
            return Ok(None);
        }
        {
            let mut held = lock(&self.held);
            if held.whole_started {
                return Ok(None);
            }
            held.whole_started = true;
        }
        let lease = self.object.lease(length, interrupted)?;
        let f = self.object.start(0..length, GetKind::Whole, lease);
        let mut held = lock(&self.held);
        // The whole object makes any footer buffer redundant.
        held.fetches = vec![f.clone()];
        Ok(Some(f))
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
        let len = buf.len();
        self.stream_read(position, &mut Dest::Slice(buf), len, interrupted)
    }

    /// [`Reader::read_with`] handing the bytes to `sink` instead of copying them into a slice:
    /// `sink(offset, bytes)` is called in order with the slices of the reader's own buffers
    /// that make up `len` bytes from `position` (`offset` counted from `position`), so a
    /// caller that copies them into its memory (the JNI layer into a Java `byte[]`) copies
    /// each byte once. A `sink` error ends the read with it. Returns the bytes handed over.
    pub fn read_to(&mut self, position: u64, len: usize, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>, interrupted: &dyn Fn() -> bool) -> Result<usize> {
        self.stream_read(position, &mut Dest::Sink(sink), len, interrupted)
    }

    /// Hand bytes of `f` from `at` to `dest` ([`Fetch::copy`]); 0 when the object ends before
    /// `at` (a short answer, or S3's 416: the end of file, and that buffer is let go). A failed
    /// GET's buffer is let go too ([`Reader::forget`]).
    /// `since`: [`Object::started`] when the read began (see [`FetchInner::hit_for`]).
    #[allow(clippy::too_many_arguments)]
    fn take(&self, f: &Fetch, at: u64, dest: &mut Dest<'_>, offset: usize, max: usize, since: u64, interrupted: &dyn Fn() -> bool) -> Result<usize> {
        match f.copy(&self.object, at, dest, offset, max, since, interrupted) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == ErrorKind::EndOfFile => {
                self.forget(f, &e);
                Ok(0)
            }
            Err(e) => {
                self.forget(f, &e);
                Err(e)
            }
        }
    }

    /// The stream read of [`Reader::read_with`] and [`Reader::read_to`].
    fn stream_read(&mut self, position: u64, dest: &mut Dest<'_>, len: usize, interrupted: &dyn Fn() -> bool) -> Result<usize> {
        let o = self.object.clone();
        add(&o.counters.read_operations, 1);
        let since = o.started.load(Relaxed);
        let want = o.readable(position, len);
        if want == 0 {
            return Ok(0);
        }
        let always = matches!(self.policy, ReadPolicy::Sequential | ReadPolicy::WholeFile);
        {
            let mut st = lock(&self.stream);
            // Columnar and random reads never read ahead: a columnar reader's consecutive reads
            // (a footer, an index, a column chunk read in pieces) end where it knows, not
            // where a window would.
            let ahead = matches!(self.policy, ReadPolicy::Adaptive | ReadPolicy::Sequential | ReadPolicy::WholeFile);
            match st.expected {
                Some(e) if e == position => {
                    st.sequential |= ahead;
                    st.continued = true;
                }
                Some(_) => {
                    add(&o.counters.seeks, 1);
                    st.sequential = always;
                    st.ahead = o.config.block_size;
                    st.continued = false;
                    st.min_get = o.config.min_read_size;
                }
                None => {
                    st.sequential = always || (self.policy == ReadPolicy::Adaptive && position == 0);
                    st.continued = false;
                }
            }
            if self.policy == ReadPolicy::WholeFile {
                st.ahead = o.config.ahead_max_size;
            }
        }
        let mut done = 0;
        while done < want {
            let at = position + done as u64;
            if done > 0 && o.known_end() == Some(at) {
                // An answer of this read showed the object ends here.
                break;
            }
            if let Some(f) = self.held_at(at) {
                match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                    0 => break,
                    n => done += n,
                }
                continue;
            }
            let in_window = {
                let mut st = lock(&self.stream);
                while st.window.front().is_some_and(|f| f.0.range.end <= at) {
                    st.window.pop_front();
                    if st.sequential {
                        st.ahead = st.ahead.saturating_mul(2).min(o.config.ahead_max_size);
                    }
                }
                match st.window.front() {
                    Some(f) if f.covers(at) => Some(f.clone()),
                    _ => {
                        st.window.clear();
                        None
                    }
                }
            };
            if let Some(f) = in_window {
                match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                    0 => break,
                    n => done += n,
                }
                continue;
            }
            add(&o.counters.prefetch_misses, 1);
            if let Some(f) = self.whole(interrupted)? {
                // From this buffer itself: a short answer may be in already, and a lookup by
                // position would then miss it and ask again.
                match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                    0 => break,
                    n => done += n,
                }
                continue;
            }
            let left = (want - done) as u64;
            let ahead_end = self.ahead_end();
            // Past the split end (a record reader finishing its last record) a read fetches
            // what it asks, as a random read does: read-ahead stops at the split end.
            let sequential = lock(&self.stream).sequential && at < ahead_end;
            let (size, kind) = if sequential {
                (o.config.block_size.min(ahead_end - at).max(left).min(self.fetch_end(at) - at), GetKind::ReadAhead)
            } else {
                let min = {
                    let mut st = lock(&self.stream);
                    if self.policy == ReadPolicy::Columnar && st.continued && done == 0 {
                        // A columnar stream read going on where the last one ended past the
                        // bytes held (a copy of the file, a reader without vectored reads):
                        // its minimum GET doubles, up to a block, instead of reading ahead.
                        st.min_get = st.min_get.saturating_mul(2).min(o.config.block_size.max(o.config.min_read_size));
                    }
                    st.min_get
                };
                (left.max(min).min(self.fetch_end(at) - at), GetKind::Random)
            };
            // What the caller waits on, in parallel GETs of at most a block each.
            let mut from = at;
            let mut first = None;
            while from < at + size {
                let to = (at + size).min(from + o.config.block_size);
                let f = o.start(from..to, kind, o.lease(to - from, interrupted)?);
                first.get_or_insert_with(|| f.clone());
                lock(&self.stream).window.push_back(f);
                from = to;
            }
            if sequential {
                self.top_up(&mut lock(&self.stream), at);
            }
            // From the first of them itself: a short answer or a 416 may be in already, and a
            // lookup by position would then miss it and ask again.
            if let Some(f) = first {
                match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                    0 => break,
                    n => done += n,
                }
            }
        }
        add(&o.counters.bytes_read, done as u64);
        let mut st = lock(&self.stream);
        let end = position + done as u64;
        st.expected = Some(end);
        if pool::budget().short() {
            // Someone waits for the budget: read-ahead is the first thing given back.
            st.drop_ahead();
        } else if st.sequential && !st.window.is_empty() {
            self.top_up(&mut st, end);
        }
        Ok(done)
    }

    /// Where read-ahead stops: the split end, or the object's end for a whole-file read.
    fn ahead_end(&self) -> u64 {
        if self.policy == ReadPolicy::WholeFile {
            self.object.length
        } else {
            self.object.split_end
        }
    }

    /// Where a GET from `position` should end at the latest: the object's end, or the start
    /// of the next buffer held (its bytes are fetched already).
    fn fetch_end(&self, position: u64) -> u64 {
        lock(&self.held).fetches.iter().map(|f| f.0.range.start).filter(|s| *s > position).fold(self.object.length, u64::min)
    }

    /// Let go of a buffer whose GET failed, so that a later read asks again (an interrupt
    /// leaves it: the GET goes on).
    fn forget(&self, f: &Fetch, e: &Error) {
        if e.kind() == ErrorKind::Interrupted {
            return;
        }
        lock(&self.held).fetches.retain(|h| !Arc::ptr_eq(&h.0, &f.0));
        lock(&self.stream).window.retain(|h| !Arc::ptr_eq(&h.0, &f.0));
    }

    /// Start read-ahead GETs of one block each after the window's last, in parallel, until
    /// the window reaches `ahead` bytes past `at` (never past [`Reader::ahead_end`]), while
    /// the budget has the bytes free.
    fn top_up(&self, st: &mut Stream, at: u64) {
        let o = &self.object;
        // Not past where an answer showed the object to end (a declared length too long).
        let limit = self.ahead_end().min(o.known_end().unwrap_or(u64::MAX));
        let Some(mut next) = st.window.back().map(|f| f.0.range.end) else { return };
        while next < limit && next.saturating_sub(at) < st.ahead {
            if let Some(h) = self.held_at(next) {
                // Held already (the footer): the window goes on after it.
                next = h.0.range.end;
                continue;
            }
            let size = o.config.block_size.min(self.fetch_end(next) - next).min(limit - next);
            let Some(lease) = pool::budget().try_read(size) else {
                add(&o.counters.read_ahead_skipped, 1);
                return;
            };
            st.window.push_back(o.start(next..next + size, GetKind::ReadAhead, lease));
            next += size;
        }
    }

    /// Positioned read (pread): as [`Reader::read`], but it never moves or starts the
    /// read-ahead window; served from bytes already held (whole object, footer, read-ahead
    /// blocks) where it can, else by one GET of exactly what it asks.
    pub fn read_at(&self, position: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_at_with(position, buf, &|| false)
    }

    /// [`Reader::read_at`], polling `interrupted`.
    pub fn read_at_with(&self, position: u64, buf: &mut [u8], interrupted: &dyn Fn() -> bool) -> Result<usize> {
        let len = buf.len();
        self.positioned_read(position, &mut Dest::Slice(buf), len, interrupted)
    }

    /// [`Reader::read_at_with`] handing the bytes to `sink`, as [`Reader::read_to`] does.
    pub fn read_at_to(&self, position: u64, len: usize, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>, interrupted: &dyn Fn() -> bool) -> Result<usize> {
        self.positioned_read(position, &mut Dest::Sink(sink), len, interrupted)
    }

    /// The positioned read of [`Reader::read_at_with`] and [`Reader::read_at_to`].
    fn positioned_read(&self, position: u64, dest: &mut Dest<'_>, len: usize, interrupted: &dyn Fn() -> bool) -> Result<usize> {
        let o = &self.object;
        add(&o.counters.pread_operations, 1);
        let since = o.started.load(Relaxed);
        let want = o.readable(position, len);
        if want == 0 {
            return Ok(0);
        }
        let mut done = 0;
        while done < want {
            let at = position + done as u64;
            if done > 0 && o.known_end() == Some(at) {
                break;
            }
            let found = self.held_at(at).or_else(|| lock(&self.stream).window.iter().find(|f| f.covers(at)).cloned());
            if let Some(f) = found {
                match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                    0 => break,
                    n => done += n,
                }
                continue;
            }
            add(&o.counters.prefetch_misses, 1);
            if let Some(f) = self.whole(interrupted)? {
                match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                    0 => break,
                    n => done += n,
                }
                continue;
            }
            let end = position + want as u64;
            let f = o.start(at..end, GetKind::Pread, o.lease(end - at, interrupted)?);
            match self.take(&f, at, dest, done, want - done, since, interrupted)? {
                0 => break,
                n => done += n,
            }
        }
        add(&o.counters.bytes_read, done as u64);
        Ok(done)
    }

    /// Vectored read of `ranges` (any order, may overlap; each must end within the object):
    /// planned and started at once, delivered as each completes (see [`VectoredRead`]).
    /// Errors, before any GET and naming the range and the object: [`ErrorKind::EndOfFile`]
    /// for a range ending past the object's length (as S3A's readVectored, which validates
    /// against the file's length and throws EOFException at the call);
    /// [`ErrorKind::InvalidArgument`] for a reversed one. Within a declared length longer than
    /// the object, a range past the real end fails alone, delivered as
    /// [`ErrorKind::EndOfFile`] (S3's 416 for one starting there, with the code
    /// `InvalidRange`; [`VectoredRead::next_range_with`] names it), and the other ranges are
    /// still delivered.
    pub fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<VectoredRead> {
        self.read_ranges_with(ranges, &|| false)
    }

    /// [`Reader::read_ranges`], polling `interrupted` while it waits for the budget (then
    /// [`ErrorKind::Interrupted`], and nothing of the read is left running).
    pub fn read_ranges_with(&self, ranges: &[Range<u64>], interrupted: &dyn Fn() -> bool) -> Result<VectoredRead> {
        let o = self.object.clone();
        for (i, r) in ranges.iter().enumerate() {
            let what = |why: String| format!("range {i} ({}..{}) of a vectored read of {} is {why}", r.start, r.end, o.describe());
            if r.start > r.end {
                return Err(Error::invalid_argument(what("reversed".to_string())));
            }
            if r.end > o.length {
                return Err(Error::end_of_file(what(format!("past the end ({} bytes)", o.length))));
            }
        }
        add(&o.counters.vectored_operations, 1);
        add(&o.counters.vectored_ranges, ranges.len() as u64);
        let since = o.started.load(Relaxed);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = Arc::new(VectoredStop::default());
        let mut vr = VectoredRead {
            rx,
            count: ranges.len(),
            remaining: ranges.len(),
            object: o.clone(),
            task: None,
            lease: Arc::new(None),
            stop: stop.clone(),
        };
        // Ranges whose bytes the reader holds or fetches already (the small object, fetched
        // whole now; the footer; the read-ahead window, a random read's GET) are cut from
        // those buffers without a GET; the rest are planned.
        if !ranges.iter().all(|r| r.is_empty()) {
            let _ = self.whole(interrupted)?;
        }
        let mut from_held = Vec::new();
        let mut rest = Vec::new();
        for (i, r) in ranges.iter().enumerate() {
            match self.buffers_of(r) {
                Some(fs) if !r.is_empty() => from_held.push((i, r.clone(), fs)),
                _ => rest.push((i, r.clone())),
            }
        }
        let wanted: Vec<Range<u64>> = rest.iter().map(|(_, r)| r.clone()).collect();
        let p = plan::plan(&wanted, o.config.vectored_hole_size, o.config.vectored_max_request_size);
        let total: u64 = p.gets.iter().map(|g| g.end - g.start).sum();
        if total > 0 {
            vr.lease = Arc::new(Some(o.lease(total, interrupted)?));
        }
        add(&o.counters.gets_vectored, p.gets.len() as u64);
        o.counters.gets_started(p.gets.len() as u64);
        let active = o.config.vectored_active_reads;
        let task = o.rt.spawn(vectored(o.clone(), p, rest, from_held, active, since, tx));
        vr.task = Some(task.abort_handle());
        let _ = stop.task.set(task.abort_handle());
        let mut live = lock(&self.vectored);
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&stop));
        Ok(vr)
    }

    /// Stop this reader's vectored reads in progress, as S3A's stream does at close and
    /// unbuffer: their GETs are cancelled and each fails its next
    /// [`VectoredRead::next_with`] with [`ErrorKind::Stopped`] ("`why` with ranges in
    /// flight"), so the ranges not yet taken are never delivered. Reads started later are
    /// not affected. Returns how many reads were stopped. Another thread does the same
    /// without the reader through [`Reader::controls`].
    pub fn stop_vectored(&self, why: &str) -> usize {
        self.controls().stop_vectored(why)
    }

    /// A handle that stops this reader's vectored reads and takes its statistics from another
    /// thread without the reader ([`ReaderControls`]).
    pub fn controls(&self) -> ReaderControls {
        ReaderControls { counters: self.object.counters.clone(), held: self.held.clone(), stream: self.stream.clone(), vectored: self.vectored.clone() }
    }

    /// The buffers held or in flight (whole object, footer, the stream's window) whose
    /// ranges, one after the other, cover `r`; `None` unless they cover all of it.
    fn buffers_of(&self, r: &Range<u64>) -> Option<Vec<Fetch>> {
        let window: Vec<Fetch> = lock(&self.stream).window.iter().cloned().collect();
        let mut out = Vec::new();
        let mut at = r.start;
        while at < r.end {
            let f = self.held_at(at).or_else(|| window.iter().find(|f| f.covers(at)).cloned())?;
            at = f.0.range.end;
            out.push(f);
        }
        Some(out)
    }

    /// Drop every buffer (read-ahead, whole object, footer) and end the read-ahead pattern,
    /// keeping the open state (length, ETag): the next read fetches again.
    /// Vectored reads in progress are stopped ([`Reader::stop_vectored`]), as S3A's unbuffer.
    pub fn unbuffer(&mut self) {
        self.stop_vectored("unbuffered");
        add(&self.object.counters.unbuffered, 1);
        *lock(&self.held) = Held::default();
        let mut st = lock(&self.stream);
        st.window.clear();
        st.expected = None;
        st.sequential = false;
        st.continued = false;
        st.min_get = self.object.config.min_read_size;
        st.ahead = self.object.config.block_size;
    }

    /// The reader's figures so far.
    pub fn statistics(&self) -> ReadStatistics {
        self.controls().statistics()
    }
}

/// Run the GETs of a vectored read, `active` at once, and send each range as soon as the
/// GETs covering it are in; ranges cut from held buffers go first. A range past the object's
/// real end (a short answer, a 416) fails alone, with [`ErrorKind::EndOfFile`]; any other
/// failure ends the whole read (sent with the index `usize::MAX`). `since`: [`Object::started`]
/// when the read began (a buffer it started itself is no prefetch hit).
async fn vectored(
    o: Arc<Object>,
    p: plan::Plan,
    ranges: Vec<(usize, Range<u64>)>,
    from_held: Vec<(usize, Range<u64>, Vec<Fetch>)>,
    active: usize,
    since: u64,
    tx: tokio::sync::mpsc::UnboundedSender<(usize, Result<Bytes>)>,
) {
    for (i, r, fs) in from_held {
        let mut pieces = Vec::with_capacity(fs.len());
        let mut failed = None;
        for f in &fs {
            match f.0.fut.clone().await {
                Ok(b) if r.end.min(f.0.range.end) - f.0.range.start > b.len() as u64 => {
                    failed = Some(short_range(&o, i, &r, f.0.range.start + b.len() as u64));
                    break;
                }
                Ok(b) => {
                    let from = r.start.max(f.0.range.start) - f.0.range.start;
                    let to = r.end.min(f.0.range.end) - f.0.range.start;
                    f.0.mark_used(from, to - from);
                    pieces.push(b.slice(from as usize..to as usize));
                    if f.0.hit_for(since) {
                        add(&o.counters.prefetch_hits, 1);
                    }
                }
                // The buffer's GET started at or past the real end (S3's 416): this range only.
                Err(e) if e.kind() == ErrorKind::EndOfFile => {
                    failed = Some(short_range(&o, i, &r, f.0.range.start.max(r.start)));
                    break;
                }
                Err(e) => {
                    let _ = tx.send((usize::MAX, Err(e)));
                    return;
                }
            }
        }
        let out = match failed {
            Some(e) => Err(e),
            None if pieces.len() == 1 => Ok(pieces.pop().expect("one piece")),
            None => Ok(Bytes::from(pieces.concat())),
        };
        let _ = tx.send((i, out));
    }
    // Empty ranges need no GET.
    let mut pending: Vec<(usize, Range<u64>, Range<usize>)> = Vec::new();
    for ((i, r), cover) in ranges.into_iter().zip(p.covers.iter().cloned()) {
        if cover.is_empty() {
            let _ = tx.send((i, Ok(Bytes::new())));
        } else {
            pending.push((i, r, cover));
        }
    }
    let mut got: Vec<Option<Bytes>> = vec![None; p.gets.len()];
    let mut gets = futures::stream::iter(p.gets.iter().cloned().enumerate())
        .map(|(gi, g)| {
            let o = o.clone();
            async move { (gi, o.get(g).await) }
        })
        .buffer_unordered(active.max(1));
    // Bytes the GETs brought, and of them the bytes handed over.
    let (mut fetched, mut used) = (0u64, 0u64);
    while let Some((gi, out)) = gets.next().await {
        match out {
            Ok(b) => {
                fetched += b.len() as u64;
                got[gi] = Some(b);
            }
            // A GET starting at or past the object's real end (S3's 416): no bytes, so the
            // ranges it covers fail as past the end, each alone, below.
            Err(e) if e.kind() == ErrorKind::EndOfFile => got[gi] = Some(Bytes::new()),
            Err(e) => {
                let _ = tx.send((usize::MAX, Err(e)));
                return;
            }
        }
        let mut k = 0;
        while k < pending.len() {
            let (i, r, cover) = pending[k].clone();
            if !cover.clone().all(|g| got[g].is_some()) {
                k += 1;
                continue;
            }
            pending.swap_remove(k);
            // A GET answered short (or 416): the object ends inside this range.
            let short = cover.clone().find_map(|g| {
                let (range, b) = (&p.gets[g], got[g].as_ref().expect("checked above"));
                let ends = range.start + b.len() as u64;
                (ends < r.end.min(range.end)).then_some(ends)
            });
            let out = match short {
                Some(end) => Err(short_range(&o, i, &r, end)),
                None => {
                    used += r.end - r.start;
                    let piece = |g: usize| -> Bytes {
                        let (range, b) = (&p.gets[g], got[g].as_ref().expect("checked above"));
                        let from = r.start.max(range.start) - range.start;
                        let to = r.end.min(range.end) - range.start;
                        b.slice(from as usize..to as usize)
                    };
                    Ok(if cover.len() == 1 {
                        piece(cover.start)
                    } else {
                        let mut all = Vec::with_capacity((r.end - r.start) as usize);
                        for g in cover {
                            all.extend_from_slice(&piece(g));
                        }
                        Bytes::from(all)
                    })
                }
            };
            if pending.is_empty() {
                // Counted before the last range goes out, so the caller sees it with it.
                add(&o.counters.bytes_discarded, fetched.saturating_sub(used));
                add(&o.counters.vectored_bytes_discarded, fetched.saturating_sub(used));
            }
            let _ = tx.send((i, out));
        }
        // A GET no range still waits on is let go.
        for (g, slot) in got.iter_mut().enumerate() {
            if slot.is_some() && !pending.iter().any(|(_, _, c)| c.contains(&g)) {
                *slot = None;
            }
        }
    }
}

/// The error of vectored range `i` (`r`) that runs past where the object ends (`end`, before the
/// length the reader was opened with): end of file, as S3A's readVectored fails such a range.
/// A range starting at or past that end is what S3 answers 416 to (code `InvalidRange`), also
/// when the bytes came from a buffer the reader held (the whole object, a coalesced GET).
fn short_range(o: &Object, i: usize, r: &Range<u64>, end: u64) -> Error {
    let what = format!("range {i} ({}..{}) of a vectored read of {}", r.start, r.end, o.describe());
    if r.start >= end {
        return Error::end_of_file(format!(
            "{what} starts past the end of the object at byte {end} (416 InvalidRange: requested range not satisfiable; its length at open was {})",
            o.length
        ))
        .with_s3_code("InvalidRange");
    }
    Error::end_of_file(format!("{what} runs past the end of the object: it ends at byte {end} (its length at open was {})", o.length))
}

impl Drop for Reader {
    fn drop(&mut self) {
        *lock(&self.held) = Held::default();
        lock(&self.stream).window.clear();
        let mine = self.object.counters.snapshot(0);
        let mut g = lock(&READERS);
        g.0 = sum(&g.0, &mine);
        let me = Arc::as_ptr(&self.object.counters);
        g.1.retain(|w| w.as_ptr() != me && w.strong_count() > 0);
    }
}

// The boundaries hold readers and vectored reads across threads.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<Reader>();
    shareable::<VectoredRead>();
};
