//! One upload's state machine: [`Writer`].
//!
//! Bytes are copied once into the current part buffer. A full buffer is *frozen* when the
//! next byte arrives (so data that exactly fills the first part is still one PUT): it gets
//! the next part number, becomes an immutable [`Bytes`], and an upload task on the shared
//! runtime sends it; the caller goes on at once unless the writer already has its maximum
//! of parts in flight. The multipart upload is created by the first part task; the other
//! part tasks wait for its upload id. The first failure is kept: the upload is aborted in
//! the background and every later call returns that failure.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{Attribute, Attributes, ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;
use tokio::sync::{watch, OnceCell};

use crate::config::{ChecksumMode, Settings, WriterConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::magic::{self, MagicFile, MAGIC_MARKER_HEADER};
use crate::pool::{self, Reservation, Store, REQUEST_STATS};
use crate::stats::{Recorder, RequestKind, Statistics};

/// What `close()` does with the upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mode {
    /// Close makes the object visible: it completes the multipart upload, or sends one
    /// PutObject when all data fit in the first part (0 bytes included).
    Publish,
    /// Close uploads every part (at least one, even for 0 bytes) and returns the
    /// [`UploadResult`] without completing; [`complete`] or [`abort`] finishes it later,
    /// from any process that has the result.
    Deferred,
}

/// What a closed writer produced. Serializable (serde_json via [`UploadResult::to_json`])
/// so another process can complete or abort a deferred upload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadResult {
    pub bucket: String,
    pub key: String,
    /// The multipart upload id; `None` for a single PUT.
    pub upload_id: Option<String>,
    /// ETags as S3 returned them (quotes included), entry i for part i+1; for a single PUT
    /// the object's ETag.
    pub etags: Vec<String>,
    /// Per-part checksums (base64) when a checksum mode was set, else empty.
    #[serde(default)]
    pub checksums: Vec<String>,
    /// `SHA256` or `CRC64NVME` when `checksums` is not empty.
    #[serde(default)]
    pub checksum_algorithm: Option<String>,
    /// Object length in bytes.
    pub length: u64,
    /// True when the object is visible (Publish mode), false for a deferred upload.
    pub completed: bool,
    /// The writer's statistics at close.
    pub statistics: Statistics,
}

impl UploadResult {
    /// The result as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("UploadResult serializes")
    }

    /// Parse a result written by [`UploadResult::to_json`].
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] when `json` is not such a result.
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::invalid_argument(format!("not an UploadResult: {e}")))
    }

    fn part_ids(&self) -> Result<Vec<PartId>> {
        if !self.checksums.is_empty() && self.checksums.len() != self.etags.len() {
            return Err(Error::invalid_argument("UploadResult has a different number of checksums and etags"));
        }
        let tag = match self.checksum_algorithm.as_deref() {
            None => None,
            Some("SHA256") => Some("checksum_sha256"),
            Some("CRC64NVME") => Some("checksum_crc64nvme"),
            Some(other) => return Err(Error::invalid_argument(format!("unknown checksum algorithm {other}"))),
        };
        Ok(self
            .etags
            .iter()
            .enumerate()
            .map(|(i, etag)| PartId {
                content_id: match (tag, self.checksums.get(i)) {
                    // object_store's opaque form of a part id that carries a checksum.
                    (Some(tag), Some(sum)) => format!(
                        "<PartMetadata><e_tag>{}</e_tag><{tag}>{}</{tag}></PartMetadata>",
                        xml_escape(etag),
                        xml_escape(sum)
                    ),
                    _ => etag.clone(),
                },
            })
            .collect())
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// Split object_store's part id into (ETag, checksum).
fn split_part_id(content_id: &str) -> (String, Option<String>) {
    if !content_id.starts_with('<') {
        return (content_id.to_string(), None);
    }
    let field = |tag: &str| {
        let open = format!("<{tag}>");
        let start = content_id.find(&open)? + open.len();
        let end = content_id[start..].find(&format!("</{tag}>"))?;
        Some(xml_unescape(&content_id[start..start + end]))
    };
    let etag = field("e_tag").unwrap_or_default();
    (etag, field("checksum_sha256").or_else(|| field("checksum_crc64nvme")))
}

const OPEN: u8 = 0;
const ABORTING: u8 = 1;
const COMPLETING: u8 = 2;
const DONE: u8 = 3;

/// State shared by a writer and its upload tasks.
pub(crate) struct Shared {
    bucket: String,
    key: String,
    path: Path,
    store: Arc<Store>,
    stats: Arc<Recorder>,
    upload_options: Attributes,
    /// OPEN, then ABORTING (abort or failure), COMPLETING (close sends Complete or the single
    /// PUT) or DONE (a deferred close returned its result).
    phase: AtomicU8,
    failure: Mutex<Option<Error>>,
    upload_id: OnceCell<Result<String>>,
    part_ids: Mutex<Vec<Option<String>>>,
    in_flight: watch::Sender<usize>,
    aborted: OnceCell<Result<()>>,
}

impl Shared {
    fn describe(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    fn store_error(&self, op: &str, e: &object_store::Error) -> Error {
        Error::from_store(format_args!("{op} {}", self.describe()), e, &self.store.config.secrets())
    }

    fn failure(&self) -> Option<Error> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Record the first failure and start aborting the upload in the background.
    fn fail(self: &Arc<Self>, e: Error) {
        {
            let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            if f.is_none() {
                // Only the interrupted call reports the interrupt; later calls, maybe from
                // other threads, report a failed writer.
                *f = Some(match e.kind() {
                    ErrorKind::Interrupted => Error::state(format!("failed earlier: {}", e.message())),
                    _ => e,
                });
            }
        }
        self.start_abort();
    }

    /// Move to ABORTING unless a close is already completing, and abort in the background.
    fn start_abort(self: &Arc<Self>) {
        let _ = self.phase.compare_exchange(OPEN, ABORTING, Ordering::SeqCst, Ordering::SeqCst);
        if self.phase.load(Ordering::SeqCst) == ABORTING {
            if let Some(rt) = pool::runtime_if_started() {
                let me = self.clone();
                rt.spawn(async move {
                    let _ = me.abort().await;
                });
            }
        }
    }

    async fn upload_id(&self) -> Result<String> {
        self.upload_id
            .get_or_init(|| async {
                // An abort that found no upload must never see one appear after it: the abort
                // sets ABORTING before it reads the parts in flight, and this task was counted
                // in flight before it got here, so one of the two sees the other.
                if self.phase.load(Ordering::SeqCst) == ABORTING {
                    return Err(Error::state(format!("{} was aborted", self.describe())));
                }
                self.stats.operation(RequestKind::CreateMultipartUpload);
                pool::global_stats().operation(RequestKind::CreateMultipartUpload);
                let opts = PutMultipartOptions { attributes: self.upload_options.clone(), ..Default::default() };
                REQUEST_STATS
                    .scope(self.stats.clone(), self.store.s3.create_multipart_opts(&self.path, opts))
                    .await
                    .map_err(|e| self.store_error("CreateMultipartUpload", &e))
            })
            .await
            .clone()
    }

    /// Upload part `idx` (0-based); runs on the runtime.
    async fn upload_part(self: Arc<Self>, idx: usize, data: Bytes, reservation: Reservation, handed_off: Instant) {
        let outcome = async {
            let _slot = self.store.upload_slots.acquire().await.map_err(|_| Error::state("client closed"))?;
            let id = self.upload_id().await?;
            if self.phase.load(Ordering::SeqCst) == ABORTING {
                return Ok(None);
            }
            let started = Instant::now();
            self.record(|r| r.queue_wait(started - handed_off));
            self.record(|r| r.operation(RequestKind::UploadPart));
            let sent = REQUEST_STATS
                .scope(self.stats.clone(), self.store.s3.put_part(&self.path, &id, idx, PutPayload::from(data)))
                .await;
            self.record(|r| r.upload_time(started.elapsed()));
            sent.map(Some).map_err(|e| self.store_error(&format!("UploadPart {}", idx + 1), &e))
        }
        .await;
        // The part's last attempt has ended: give its bytes back.
        drop(reservation);
        match outcome {
            Ok(Some(part)) => {
                self.record(Recorder::part_uploaded);
                let mut ids = self.part_ids.lock().unwrap_or_else(|p| p.into_inner());
                if ids.len() <= idx {
                    ids.resize(idx + 1, None);
                }
                ids[idx] = Some(part.content_id);
            }
            Ok(None) => {}
            Err(e) => self.fail(e),
        }
        self.in_flight.send_modify(|n| *n -= 1);
    }

    fn record(&self, f: impl Fn(&Recorder)) {
        f(&self.stats);
        f(pool::global_stats());
    }

    /// Abort the upload once: wait for parts in flight, then AbortMultipartUpload with
    /// retries. Every caller gets the one outcome.
    async fn abort(self: &Arc<Self>) -> Result<()> {
        self.aborted
            .get_or_init(|| async {
                let mut rx = self.in_flight.subscribe();
                let _ = rx.wait_for(|n| *n == 0).await;
                let Some(Ok(id)) = self.upload_id.get() else { return Ok(()) };
                pool::global_stats().writer_aborted();
                abort_upload(&self.store, &self.path, id, &self.stats).await.map_err(|e| e.context(self.describe()))
            })
            .await
            .clone()
    }
}

/// AbortMultipartUpload with up to 4 attempts (each with the client's own retries); an
/// upload already gone counts as aborted. A final failure names the upload id so an
/// operator can abort it by hand.
async fn abort_upload(store: &Store, path: &Path, id: &str, stats: &Arc<Recorder>) -> Result<()> {
    let mut last = None;
    for (attempt, backoff_ms) in [0u64, 200, 1000, 3000].into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(backoff_ms)).await;
        if attempt > 0 {
            stats.retry();
            pool::global_stats().retry();
        }
        stats.operation(RequestKind::AbortMultipartUpload);
        pool::global_stats().operation(RequestKind::AbortMultipartUpload);
        let id = id.to_string();
        match REQUEST_STATS.scope(stats.clone(), store.s3.abort_multipart(path, &id)).await {
            Ok(()) => return Ok(()),
            Err(object_store::Error::NotFound { .. }) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    let e = last.expect("an attempt failed");
    Err(Error::from_store(
        format_args!(
            "AbortMultipartUpload of upload id {id} for s3://{}/{path} (abort it by hand, or let a bucket lifecycle rule AbortIncompleteMultipartUpload do it)",
            store.config.bucket
        ),
        &e,
        &store.config.secrets(),
    ))
}

enum State {
    Open,
    Closed(UploadResult),
    Aborted,
    Failed(Error),
}

/// The part buffer being filled and its share of the budget.
struct PartBuffer {
    data: Vec<u8>,
    reservation: Reservation,
}

/// Streams bytes to one S3 object as a multipart upload (or one PUT).
///
/// Not for concurrent use: `write` and `close` take `&mut self`; [`Writer::abort_handle`]
/// aborts from another thread. Blocking calls (`write` when the budget or the parts in
/// flight are exhausted, `close`) must run on a plain thread, not on an async runtime.
/// Dropping an open writer aborts its upload; it never completes it.
pub struct Writer {
    shared: Arc<Shared>,
    config: WriterConfig,
    mode: Mode,
    rt: &'static Runtime,
    buffer: Option<PartBuffer>,
    /// Parts handed to the runtime so far.
    parts_sliced: u32,
    length: u64,
    state: State,
    registration: u64,
    /// For a magic file: its marker and `.pending` are written on close.
    magic: Option<(MagicFile, String)>,
}

/// Aborts a writer's upload from any thread; see [`Writer::abort_handle`].
#[derive(Clone)]
pub struct AbortHandle(Arc<Shared>);

impl AbortHandle {
    /// Abort the upload and wait for the abort. Later writes and closes of the writer fail.
    ///
    /// Errors: [`ErrorKind::State`] when the writer's close is already completing or has
    /// completed the upload (the abort did not take effect); the abort's final failure.
    pub fn abort(&self) -> Result<()> {
        abort_shared(&self.0, &|| false)
    }
}

fn abort_shared(shared: &Arc<Shared>, interrupted: &dyn Fn() -> bool) -> Result<()> {
    match shared.phase.compare_exchange(OPEN, ABORTING, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) | Err(ABORTING) => {}
        Err(_) => {
            return Err(Error::state(format!(
                "{}: too late to abort, close is completing or has completed the upload",
                shared.describe()
            )))
        }
    }
    let rt = pool::runtime_if_started().expect("a writer started the runtime");
    pool::block_on(rt, "aborting the upload", interrupted, shared.abort())?
}

impl Writer {
    /// Open a writer for `s3://bucket/key`.
    ///
    /// No request is sent until data needs one. Errors: [`ErrorKind::InvalidArgument`] for
    /// a bad bucket, empty key or bad setting (naming the key);
    /// [`ErrorKind::Unsupported`] for settings the native writer cannot reproduce.
    pub fn open(bucket: &str, key: &str, mode: Mode, settings: &Settings) -> Result<Writer> {
        Writer::open_inner(bucket, key, mode, settings, None)
    }

    /// Open a writer for a file under an S3A magic-committer path, as S3A's magic committer
    /// writes it: the multipart upload is initiated on `file.final_key` before this returns
    /// (as S3A does in `create`, so a missing bucket or denied access fails here) and is
    /// never completed (at least one part is uploaded, even for 0 bytes); close then PUTs a
    /// 0-byte marker
    /// at `file.magic_key` with user metadata `x-hadoop-s3a-magic-data-length: <length>`,
    /// and then `<magic_key>.pending`, the `SinglePendingCommit` JSON Hadoop's task commit
    /// loads. `uri` is the magic path as the filesystem names it (`s3a://bucket/...`),
    /// recorded in the `.pending` file. Close returns the deferred [`UploadResult`].
    ///
    /// Errors: as [`Writer::open`], plus S3's answer to CreateMultipartUpload; a failed
    /// marker or `.pending` PUT fails close and aborts the upload.
    pub fn open_magic(bucket: &str, file: &MagicFile, uri: &str, settings: &Settings) -> Result<Writer> {
        if file.final_key.is_empty() || file.final_key == file.magic_key {
            return Err(Error::invalid_argument(format!("'{}' has no distinct final key", file.magic_key)));
        }
        let w = Writer::open_inner(bucket, &file.final_key, Mode::Deferred, settings, Some((file.clone(), uri.to_string())))?;
        let shared = w.shared.clone();
        // On failure the writer is dropped, which aborts nothing: no upload exists.
        pool::block_on(w.rt, "initiating the upload", &|| false, async move { shared.upload_id().await })??;
        Ok(w)
    }

    fn open_inner(bucket: &str, key: &str, mode: Mode, settings: &Settings, magic: Option<(MagicFile, String)>) -> Result<Writer> {
        if key.is_empty() || key.starts_with('/') {
            return Err(Error::invalid_argument(format!("object key '{key}' must be non-empty without a leading '/'")));
        }
        let config = WriterConfig::resolve(settings, bucket)?;
        let path = object_path(key)?;
        let rt = pool::apply_process_settings(&config);
        let store = pool::store(&config.store)?;
        let mut upload_options = Attributes::new();
        if let Some(c) = &config.storage_class {
            upload_options.insert(Attribute::StorageClass, c.clone().into());
        }
        if let Some(e) = &config.content_encoding {
            upload_options.insert(Attribute::ContentEncoding, e.clone().into());
        }
        let shared = Arc::new(Shared {
            bucket: bucket.to_string(),
            key: key.to_string(),
            path,
            store,
            stats: Arc::new(Recorder::new()),
            upload_options,
            phase: AtomicU8::new(OPEN),
            failure: Mutex::new(None),
            upload_id: OnceCell::new(),
            part_ids: Mutex::new(Vec::new()),
            in_flight: watch::Sender::new(0),
            aborted: OnceCell::new(),
        });
        pool::global_stats().writer_opened();
        let registration = pool::register_open(&shared);
        Ok(Writer {
            shared,
            config,
            mode,
            rt,
            buffer: None,
            parts_sliced: 0,
            length: 0,
            state: State::Open,
            registration,
            magic,
        })
    }

    /// The bucket written to.
    pub fn bucket(&self) -> &str {
        &self.shared.bucket
    }

    /// The object key written to.
    pub fn key(&self) -> &str {
        &self.shared.key
    }

    /// The writer's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Bytes accepted so far.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// The writer's statistics now.
    pub fn statistics(&self) -> Statistics {
        self.shared.stats.snapshot()
    }

    /// A handle that aborts this writer's upload from another thread.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle(self.shared.clone())
    }

    /// Copy `data` into part buffers (one copy), handing full parts to the runtime.
    ///
    /// Blocks while the memory budget is spent or the writer has its maximum of parts in
    /// flight. Errors: the writer's first failure (a failed part, a missing bucket, ...),
    /// [`ErrorKind::TooLarge`] when the data would need more than the allowed parts,
    /// [`ErrorKind::State`] after close or abort.
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        self.write_with(data.len(), &|| false, &mut |from, dst| {
            copy_into(&data[from..from + dst.len()], dst);
            Ok(())
        })
    }

    /// [`Writer::write`] for callers that copy the bytes themselves (JNI, C): `fill(from,
    /// dst)` must initialise every byte of `dst` with source bytes `from..from + dst.len()`
    /// of the `len` bytes being written; an error from `fill` is returned, and fails the
    /// writer if bytes of this call were already taken. `interrupted` is polled every 50 ms
    /// while blocked; when it returns true the call fails with [`ErrorKind::Interrupted`]
    /// and the upload is aborted.
    pub fn write_with(
        &mut self,
        len: usize,
        interrupted: &dyn Fn() -> bool,
        fill: &mut dyn FnMut(usize, &mut [MaybeUninit<u8>]) -> Result<()>,
    ) -> Result<()> {
        self.check_open()?;
        let mut done = 0usize;
        while done < len {
            let full = self.buffer.as_ref().is_some_and(|b| b.data.len() == b.data.capacity());
            if full {
                let b = self.buffer.take().expect("a full buffer");
                self.hand_off(b, interrupted)?;
            }
            if self.buffer.is_none() {
                self.buffer = Some(self.new_buffer(interrupted)?);
            }
            let b = self.buffer.as_mut().expect("a buffer");
            b.reservation.touch();
            let n = (len - done).min(b.data.capacity() - b.data.len());
            let spare = &mut b.data.spare_capacity_mut()[..n];
            if let Err(e) = fill(done, spare) {
                // Part of this call's bytes are in: the stream is no longer what the caller
                // wrote, so the writer fails. A call that copied nothing changes nothing.
                return Err(if done > 0 { self.fail(e) } else { e });
            }
            // SAFETY: `fill` initialised all `n` bytes of the spare capacity.
            unsafe { b.data.set_len(b.data.len() + n) };
            done += n;
            self.length += n as u64;
            self.shared.stats.add_bytes(n as u64);
            pool::global_stats().add_bytes(n as u64);
        }
        Ok(())
    }

    fn check_open(&mut self) -> Result<()> {
        match &self.state {
            State::Open => {}
            State::Closed(_) => return Err(Error::state(format!("{} is closed", self.shared.describe()))),
            State::Aborted => return Err(Error::state(format!("{} was aborted", self.shared.describe()))),
            State::Failed(e) => return Err(e.clone()),
        }
        if let Some(e) = self.shared.failure() {
            self.buffer = None;
            self.state = State::Failed(e.clone());
            return Err(e);
        }
        if self.shared.phase.load(Ordering::SeqCst) == ABORTING {
            self.buffer = None;
            self.state = State::Aborted;
            return Err(Error::state(format!("{} was aborted", self.shared.describe())));
        }
        Ok(())
    }

    /// Fail the writer with `e`: keep it, abort the upload in the background.
    fn fail(&mut self, e: Error) -> Error {
        self.buffer = None;
        self.shared.fail(e.clone());
        self.state = State::Failed(self.shared.failure().unwrap_or(e.clone()));
        e
    }

    /// Fail during close: a close that was completing aborts too.
    fn fail_in_close(&mut self, e: Error) -> Error {
        let _ = self.shared.phase.compare_exchange(COMPLETING, ABORTING, Ordering::SeqCst, Ordering::SeqCst);
        self.fail(e)
    }

    fn new_buffer(&mut self, interrupted: &dyn Fn() -> bool) -> Result<PartBuffer> {
        let part_number = self.parts_sliced + 1;
        if part_number > self.config.max_parts {
            return Err(self.fail(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "{}: the object needs more than {} parts (part size {} B, {} B written); raise fs.s3a.native.part.size or allow growing parts",
                    self.shared.describe(),
                    self.config.max_parts,
                    self.config.part_size_for(self.parts_sliced.max(1)),
                    self.length
                ),
            )));
        }
        let size = self.config.part_size_for(part_number);
        let shared = self.shared.clone();
        let cancelled = || {
            if interrupted() {
                return Err(Error::interrupted("waiting for the memory budget"));
            }
            match shared.failure() {
                Some(e) => Err(e),
                None if shared.phase.load(Ordering::SeqCst) == ABORTING => Err(Error::state("aborted")),
                None => Ok(()),
            }
        };
        let stats = self.shared.stats.clone();
        let reservation = pool::timed(
            |d| {
                stats.budget_blocked(d);
                pool::global_stats().budget_blocked(d);
            },
            || pool::budget().acquire(size, &cancelled),
        );
        match reservation {
            Ok(reservation) => Ok(PartBuffer { data: Vec::with_capacity(size as usize), reservation }),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Number the buffer as the next part and hand it to an upload task, first waiting while
    /// the writer has its maximum of parts in flight.
    fn hand_off(&mut self, mut buffer: PartBuffer, interrupted: &dyn Fn() -> bool) -> Result<()> {
        let cap = self.config.parts_in_flight;
        if *self.shared.in_flight.borrow() >= cap {
            let mut rx = self.shared.in_flight.subscribe();
            let start = Instant::now();
            let waited = pool::block_on(self.rt, "waiting for parts in flight", interrupted, async move {
                let _ = rx.wait_for(|n| *n < cap).await;
            });
            self.record(|r| r.in_flight_blocked(start.elapsed()));
            if let Err(e) = waited {
                return Err(self.fail(e));
            }
        }
        if let Some(e) = self.shared.failure() {
            return Err(self.fail(e));
        }
        if self.shared.phase.load(Ordering::SeqCst) == ABORTING {
            self.state = State::Aborted;
            return Err(Error::state(format!("{} was aborted", self.shared.describe())));
        }
        let idx = self.parts_sliced as usize;
        self.parts_sliced += 1;
        buffer.reservation.uploading();
        self.shared.in_flight.send_modify(|n| *n += 1);
        let shared = self.shared.clone();
        let data = Bytes::from(buffer.data);
        self.rt.spawn(shared.upload_part(idx, data, buffer.reservation, Instant::now()));
        Ok(())
    }

    fn record(&self, f: impl Fn(&Recorder)) {
        f(&self.shared.stats);
        f(pool::global_stats());
    }

    /// Finish the upload and return its result; see [`Mode`]. A second call returns the
    /// first call's result.
    ///
    /// Errors: the writer's first failure (the upload is aborted before this returns),
    /// [`ErrorKind::State`] after abort, S3's answer to Complete or PutObject.
    pub fn close(&mut self) -> Result<UploadResult> {
        self.close_with(&|| false)
    }

    /// [`Writer::close`], polling `interrupted` every 50 ms while waiting for parts. An
    /// interrupted close fails with [`ErrorKind::Interrupted`] and aborts the upload in the
    /// background. The final request (Complete, the single PUT, the magic files) is not
    /// interrupted: S3 may act on it before answering, so close waits for the answer and
    /// reports what S3 said.
    pub fn close_with(&mut self, interrupted: &dyn Fn() -> bool) -> Result<UploadResult> {
        if let State::Closed(r) = &self.state {
            return Ok(r.clone());
        }
        let outcome = self.check_open().and_then(|()| self.finish(interrupted));
        match outcome {
            Ok(result) => {
                pool::deregister_open(self.registration);
                pool::global_stats().writer_closed();
                self.state = State::Closed(result.clone());
                Ok(result)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Err(self.fail_in_close(e)),
            Err(e) => {
                // Report the failure only once the upload is aborted.
                let e = self.fail_in_close(e);
                let _ = pool::block_on(self.rt, "aborting after a failure", interrupted, self.shared.abort());
                pool::deregister_open(self.registration);
                Err(e)
            }
        }
    }

    fn finish(&mut self, interrupted: &dyn Fn() -> bool) -> Result<UploadResult> {
        let shared = self.shared.clone();
        if self.mode == Mode::Publish && self.parts_sliced == 0 {
            return self.single_put();
        }
        let last = match self.buffer.take() {
            Some(b) => Some(b),
            None if self.parts_sliced == 0 => Some(self.new_buffer(interrupted)?),
            None => None,
        };
        if let Some(b) = last {
            self.hand_off(b, interrupted)?;
        }
        let mut rx = shared.in_flight.subscribe();
        pool::block_on(self.rt, "waiting for parts to upload", interrupted, async move {
            let _ = rx.wait_for(|n| *n == 0).await;
        })?;
        if let Some(e) = shared.failure() {
            return Err(e);
        }
        let upload_id = match shared.upload_id.get() {
            Some(Ok(id)) => id.clone(),
            Some(Err(e)) => return Err(e.clone()),
            None => return Err(Error::new(ErrorKind::Internal, "no upload id after uploading parts")),
        };
        let (etags, checksums) = self.collected_parts()?;
        let checksum_algorithm = match self.config.store.checksum {
            ChecksumMode::None => None,
            ChecksumMode::Sha256 => Some("SHA256".to_string()),
            ChecksumMode::Crc64Nvme => Some("CRC64NVME".to_string()),
        };
        let mut result = UploadResult {
            bucket: shared.bucket.clone(),
            key: shared.key.clone(),
            upload_id: Some(upload_id),
            etags,
            checksum_algorithm: checksum_algorithm.filter(|_| !checksums.is_empty()),
            checksums,
            length: self.length,
            completed: false,
            statistics: Statistics::default(),
        };
        // From here an abort from another thread no longer interrupts the close; a failure
        // of the close itself still aborts the upload (see close_with).
        if shared.phase.compare_exchange(OPEN, COMPLETING, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return Err(Error::state(format!("{} was aborted", shared.describe())));
        }
        if self.mode == Mode::Publish {
            let store = shared.store.clone();
            let stats = shared.stats.clone();
            let r = result.clone();
            pool::block_on(self.rt, "completing the upload", &|| false, async move {
                complete_upload(&store, &r, &stats).await
            })??;
            result.completed = true;
        }
        if let Some((file, uri)) = &self.magic {
            self.put_magic_files(file, uri, &result)?;
        }
        shared.phase.store(DONE, Ordering::SeqCst);
        result.statistics = shared.stats.snapshot();
        Ok(result)
    }

    /// The marker, then the `.pending` file: S3A's order, 2 PUTs and nothing else.
    fn put_magic_files(&self, file: &MagicFile, uri: &str, result: &UploadResult) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let pending = magic::pending_json(file, uri, result, now)?;
        let mut marker_attrs = Attributes::new();
        if let Some(c) = self.shared.upload_options.get(&Attribute::StorageClass) {
            marker_attrs.insert(Attribute::StorageClass, c.clone());
        }
        let mut pending_attrs = marker_attrs.clone();
        marker_attrs.insert(Attribute::ContentType, "application/octet-stream".into());
        marker_attrs.insert(Attribute::Metadata(MAGIC_MARKER_HEADER.into()), result.length.to_string().into());
        for (key, body, attributes, what) in [
            (file.magic_key.clone(), Bytes::new(), marker_attrs, "PutObject (magic marker)"),
            (file.pending_key(), Bytes::from(pending), std::mem::take(&mut pending_attrs), "PutObject (.pending)"),
        ] {
            let path = Path::parse(&key).map_err(|e| Error::invalid_argument(format!("key '{key}': {e}")))?;
            let shared = self.shared.clone();
            self.record(|r| r.operation(RequestKind::PutObject));
            let opts = PutOptions { attributes, ..Default::default() };
            pool::block_on(self.rt, "writing the magic committer files", &|| false, async move {
                REQUEST_STATS.scope(shared.stats.clone(), shared.store.s3.put_opts(&path, body.into(), opts)).await
            })?
            .map_err(|e| Error::from_store(format_args!("{what} s3://{}/{key}", self.shared.bucket), &e, &self.shared.store.config.secrets()))?;
        }
        Ok(())
    }

    fn collected_parts(&self) -> Result<(Vec<String>, Vec<String>)> {
        let ids = self.shared.part_ids.lock().unwrap_or_else(|p| p.into_inner());
        let mut etags = Vec::with_capacity(ids.len());
        let mut checksums = Vec::new();
        if ids.len() != self.parts_sliced as usize {
            return Err(Error::new(ErrorKind::Internal, "part ids missing after upload"));
        }
        for (i, id) in ids.iter().enumerate() {
            let id = id.as_deref().ok_or_else(|| Error::new(ErrorKind::Internal, format!("part {} has no ETag", i + 1)))?;
            let (etag, sum) = split_part_id(id);
            etags.push(etag);
            checksums.extend(sum);
        }
        if !checksums.is_empty() && checksums.len() != etags.len() {
            return Err(Error::new(ErrorKind::Internal, "some parts lack a checksum"));
        }
        Ok((etags, checksums))
    }

    fn single_put(&mut self) -> Result<UploadResult> {
        let shared = self.shared.clone();
        if shared.phase.compare_exchange(OPEN, COMPLETING, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return Err(Error::state(format!("{} was aborted", shared.describe())));
        }
        let (payload, reservation) = match self.buffer.take() {
            Some(b) => (PutPayload::from(Bytes::from(b.data)), Some(b.reservation)),
            None => (PutPayload::new(), None),
        };
        let opts = PutOptions { attributes: shared.upload_options.clone(), ..Default::default() };
        self.record(|r| r.operation(RequestKind::PutObject));
        let s = shared.clone();
        let put = pool::block_on(self.rt, "uploading the object", &|| false, async move {
            REQUEST_STATS.scope(s.stats.clone(), s.store.s3.put_opts(&s.path, payload, opts)).await
        });
        drop(reservation);
        let put = put?.map_err(|e| shared.store_error("PutObject", &e))?;
        self.record(Recorder::single_put);
        shared.phase.store(DONE, Ordering::SeqCst);
        Ok(UploadResult {
            bucket: shared.bucket.clone(),
            key: shared.key.clone(),
            upload_id: None,
            etags: put.e_tag.into_iter().collect(),
            checksums: Vec::new(),
            checksum_algorithm: None,
            length: self.length,
            completed: true,
            statistics: shared.stats.snapshot(),
        })
    }

    /// Discard the upload: stop, wait for parts in flight, abort the multipart upload (with
    /// retries). Terminal: a later `close()` fails and never completes. After a successful
    /// close this does nothing (use [`abort`] with the result to discard a deferred upload).
    ///
    /// Errors: the abort's final failure, naming the upload id.
    pub fn abort(&mut self) -> Result<()> {
        match self.state {
            State::Closed(_) | State::Aborted => return Ok(()),
            _ => {}
        }
        self.buffer = None;
        let out = abort_shared(&self.shared, &|| false);
        if !matches!(self.state, State::Failed(_)) {
            self.state = State::Aborted;
        }
        pool::deregister_open(self.registration);
        out
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if matches!(self.state, State::Closed(_)) {
            return;
        }
        self.buffer = None;
        if self.shared.phase.compare_exchange(OPEN, ABORTING, Ordering::SeqCst, Ordering::SeqCst).is_ok()
            || self.shared.phase.load(Ordering::SeqCst) == ABORTING
        {
            let shared = self.shared.clone();
            if tokio::runtime::Handle::try_current().is_ok() {
                self.rt.spawn(async move {
                    let _ = shared.abort().await;
                });
            } else {
                let _ = self.rt.block_on(shared.abort());
            }
        }
        pool::deregister_open(self.registration);
    }
}

/// The object_store path of `key`, which must stay exactly `key`: object_store normalises
/// keys (drops a trailing `/`, empty and `.` segments) and refuses control characters, so
/// such keys are reported as [`ErrorKind::Unsupported`] (the JVM layer then writes the file
/// through stock S3A) rather than written somewhere else.
fn object_path(key: &str) -> Result<Path> {
    let unsupported = || Error::new(
        ErrorKind::Unsupported,
        format!("object key '{}': keys with a trailing '/', empty or '.' segments or control characters are not supported by the native writer", key.escape_debug()),
    );
    match Path::parse(key) {
        Ok(p) if p.as_ref() == key => Ok(p),
        _ => Err(unsupported()),
    }
}

fn copy_into(src: &[u8], dst: &mut [MaybeUninit<u8>]) {
    // SAFETY: MaybeUninit<u8> has u8's layout; the lengths are equal.
    let dst = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, dst.len()) };
    dst.copy_from_slice(src);
}

/// CompleteMultipartUpload for `result`.
///
/// S3 answers a Complete of an upload that no longer exists with `NoSuchUpload`. That means
/// success only when an earlier attempt of this very call reached S3 and its answer was lost
/// (the client retried): then the object is HEADed and must have this result's length and
/// ETag, computed as S3 does for a multipart object (the MD5 of the parts' binary MD5s, then
/// `-N`; with SSE-KMS or SSE-C, where part ETags are not MD5s, the `-N` part count alone).
/// A first attempt answered `NoSuchUpload` is a failure: the upload was aborted or completed
/// by someone else.
async fn complete_upload(store: &Store, result: &UploadResult, stats: &Arc<Recorder>) -> Result<()> {
    let id = result.upload_id.clone().ok_or_else(|| Error::invalid_argument("the result has no upload id"))?;
    let path = Path::parse(&result.key).map_err(|e| Error::invalid_argument(format!("key: {e}")))?;
    let parts = result.part_ids()?;
    let n = parts.len();
    if n == 0 {
        return Err(Error::invalid_argument("the result lists no parts"));
    }
    let describe = format!("s3://{}/{}", result.bucket, result.key);
    let secrets = store.config.secrets();
    stats.operation(RequestKind::CompleteMultipartUpload);
    pool::global_stats().operation(RequestKind::CompleteMultipartUpload);
    // This call's own recorder tells whether the client retried.
    let attempts = Arc::new(Recorder::new());
    let sent = REQUEST_STATS.scope(attempts.clone(), store.s3.complete_multipart(&path, &id, parts)).await;
    let retried = attempts.snapshot().requests.complete_multipart_upload > 1;
    stats.add_requests(&attempts);
    let Err(e) = sent else { return Ok(()) };
    let err = Error::from_store(format_args!("CompleteMultipartUpload {describe}"), &e, &secrets);
    if !retried || err.kind() != ErrorKind::NotFound || err.s3_code() == Some("NoSuchBucket") {
        return Err(err);
    }
    stats.operation(RequestKind::HeadObject);
    pool::global_stats().operation(RequestKind::HeadObject);
    let head = REQUEST_STATS.scope(stats.clone(), store.s3.head(&path)).await;
    let expected = multipart_etag(&result.etags);
    let suffix = format!("-{n}");
    match head {
        Ok(meta) if meta.size == result.length => {
            let etag = meta.e_tag.as_deref().unwrap_or("").trim_matches('"').to_string();
            let matches = match &expected {
                Some(want) => &etag == want,
                None => etag.ends_with(&suffix),
            };
            if matches {
                Ok(())
            } else {
                Err(err.context(format!("the object at the key has ETag {etag}, not this upload's")))
            }
        }
        _ => Err(err),
    }
}

/// S3's ETag of a completed multipart upload, `md5(md5(part 1) .. md5(part N))-N` in hex,
/// when every part ETag is an MD5 (32 hex digits); `None` otherwise (SSE-KMS, SSE-C).
fn multipart_etag(etags: &[String]) -> Option<String> {
    use md5::{Digest, Md5};
    let mut md5 = Md5::new();
    for etag in etags {
        let hex = etag.trim_matches('"');
        if hex.len() != 32 {
            return None;
        }
        for i in (0..32).step_by(2) {
            md5.update([u8::from_str_radix(&hex[i..i + 2], 16).ok()?]);
        }
    }
    let digest = md5.finalize();
    Some(format!("{}-{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>(), etags.len()))
}

/// Complete a deferred upload from its result, in this or any other process.
///
/// `settings` give the endpoint and credentials (the same keys as [`Writer::open`]).
/// Completing an upload that is already complete with this result's length and part count
/// succeeds (Complete is idempotent here). Errors: [`ErrorKind::NotFound`] when the upload
/// is gone (aborted, or completed with other content), S3's other answers.
pub fn complete(result: &UploadResult, settings: &Settings) -> Result<()> {
    let (store, rt) = store_for(result, settings)?;
    let stats = Arc::new(Recorder::new());
    pool::block_on(rt, "completing the upload", &|| false, async { complete_upload(&store, result, &stats).await })?
}

/// Abort a deferred upload from its result, in this or any other process. An upload that is
/// already gone counts as aborted. Errors: the abort's final failure after retries.
pub fn abort(result: &UploadResult, settings: &Settings) -> Result<()> {
    let (store, rt) = store_for(result, settings)?;
    let id = result.upload_id.clone().ok_or_else(|| Error::invalid_argument("the result has no upload id (a single PUT cannot be aborted)"))?;
    let path = Path::parse(&result.key).map_err(|e| Error::invalid_argument(format!("key: {e}")))?;
    let stats = Arc::new(Recorder::new());
    pool::block_on(rt, "aborting the upload", &|| false, async { abort_upload(&store, &path, &id, &stats).await })?
}

fn store_for(result: &UploadResult, settings: &Settings) -> Result<(Arc<Store>, &'static Runtime)> {
    let config = WriterConfig::resolve(settings, &result.bucket)?;
    let rt = pool::runtime(config.runtime_threads);
    Ok((pool::store(&config.store)?, rt))
}

/// Abort every upload of writers still open in this process (for a JVM shutdown hook);
/// returns how many were aborted.
pub fn abort_open_uploads() -> usize {
    let open = pool::open_writers();
    let n = open.len();
    for shared in open {
        let _ = abort_shared(&shared, &|| false);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_etags_are_computed_as_s3_does() {
        // Two parts of "a" and "b": md5(md5("a") || md5("b")) with a -2 suffix.
        let parts = ["\"0cc175b9c0f1b6a831c399e269772661\"".to_string(), "92eb5ffee6ae2fec3ad71c777531578f".to_string()];
        assert_eq!(multipart_etag(&parts).as_deref(), Some("96e024ba2074fe77e8e965ba43a704be-2"));
        assert_eq!(multipart_etag(&["kms-etag".to_string()]), None);
    }

    #[test]
    fn part_ids_round_trip_with_checksums() {
        let id = "<PartMetadata><e_tag>&quot;abc&quot;</e_tag><checksum_sha256>q83v</checksum_sha256></PartMetadata>";
        assert_eq!(split_part_id(id), ("\"abc\"".to_string(), Some("q83v".to_string())));
        assert_eq!(split_part_id("\"abc\""), ("\"abc\"".to_string(), None));
        let r = UploadResult {
            bucket: "b".into(),
            key: "k".into(),
            upload_id: Some("u".into()),
            etags: vec!["\"abc\"".into()],
            checksums: vec!["q83v".into()],
            checksum_algorithm: Some("SHA256".into()),
            length: 1,
            completed: false,
            statistics: Statistics::default(),
        };
        assert_eq!(r.part_ids().unwrap()[0].content_id, id);
        assert_eq!(UploadResult::from_json(&r.to_json()).unwrap(), r);
    }
}
