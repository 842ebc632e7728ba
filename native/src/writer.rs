//! One upload: [`Writer`], its one state machine, and [`SharedWriter`], the writer the C and
//! JNI boundaries hold.
//!
//! Bytes are copied once into the current part buffer, a list of 1 MiB chunks taken from
//! the memory budget as it fills (see [`pool`] for the admission rule and the chunk pool).
//! A full buffer is *frozen* when the next byte arrives (so data that exactly fills the
//! first part is still one PUT): it gets the next part number, its chunks become one
//! immutable payload (each chunk a [`Bytes`] that gives its memory back when the last copy
//! is dropped), and an upload task on the shared runtime sends it once it holds one of the
//! process's connections (see [`pool`]); the caller goes on at once unless the writer already
//! has its maximum of parts in flight (the user's `fs.s3a.fast.upload.active.blocks`, else
//! the budget's share of the connections: [`crate::config`]). The multipart upload is created by the first part task; the other
//! part tasks wait for its upload id.
//!
//! # States
//! A writer is in exactly one [`WriterState`], kept in one place (`Shared::state`) and
//! changed only by the transitions below:
//! - `Open` -> `Completing`: close sends its final request (Complete, the single PUT or the
//!   magic files); from here an abort no longer stops it.
//! - `Completing` -> `Closed(result)`: close returned; a second close returns the result.
//! - `Open` -> `Aborted`: abort (any thread, [`AbortHandle`]) or drop; the upload is aborted.
//! - `Open` or `Completing` -> `Failed(first error)`: a failed part, fill, budget wait or final
//!   request; the upload is aborted and every later call reports the error (an interrupt is
//!   reported as such only by the interrupted call).
//!
//! Abort rules, the same from Rust, C and Java: abort of an `Open` writer aborts; of an
//! `Aborted` or `Failed` one waits for that abort and reports its outcome; of a `Closed` one
//! does nothing (use [`abort`](crate::abort) with the result to discard a deferred upload);
//! of a `Completing` one (another thread's close is completing) fails with
//! [`ErrorKind::State`] and the close goes on.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};
use std::time::Instant;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{Attribute, Attributes, PutPayload};
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;
use tokio::sync::{watch, OnceCell};

use crate::config::{ChecksumMode, Settings, WriterConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::magic::{self, MagicFile};
use crate::pool::{self, Chunk, PartLease, Store};
use crate::result::{split_part_id, UploadResult};
use crate::s3;
use crate::stats::{Recorder, Statistics};

/// What `close()` does with the upload. Its name at the JNI boundary is the serde name:
/// `PUBLISH`, `DEFERRED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mode {
    /// Close makes the object visible: it completes the multipart upload, or sends one
    /// PutObject when all data fit in the first part (0 bytes included).
    Publish,
    /// Close uploads every part (at least one, even for 0 bytes) and returns the
    /// [`UploadResult`] without completing; [`complete`](crate::complete) or
    /// [`abort`](crate::abort) finishes it later, from any process that has the result.
    Deferred,
    /// As `Publish`, but close never replaces an object: its PutObject or
    /// CompleteMultipartUpload carries `If-None-Match: *` (S3A's conditional create), and
    /// an object already at the key fails close with [`ErrorKind::AlreadyExists`] (the
    /// upload is aborted). See [`crate::s3`] for a retried request that S3 had already acted on.
    CreateIfAbsent,
}

impl Mode {
    /// True when close makes the object visible (`Publish`, `CreateIfAbsent`).
    fn publishes(self) -> bool {
        matches!(self, Mode::Publish | Mode::CreateIfAbsent)
    }
}

/// Where a writer is in its life; see the module docs for the transitions. Its name at the
/// boundaries is the serde name (`OPEN`, `COMPLETING`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WriterState {
    /// Accepting writes.
    Open,
    /// Close is sending its final request.
    Completing,
    /// Aborted by abort or drop.
    Aborted,
    /// Failed; every call reports the first error.
    Failed,
    /// Closed; close returns the result again.
    Closed,
}

/// The state with what it carries.
enum State {
    Open,
    Completing,
    Aborted,
    Failed(Error),
    Closed(UploadResult),
}

impl State {
    fn name(&self) -> WriterState {
        match self {
            State::Open => WriterState::Open,
            State::Completing => WriterState::Completing,
            State::Aborted => WriterState::Aborted,
            State::Failed(_) => WriterState::Failed,
            State::Closed(_) => WriterState::Closed,
        }
    }
}

/// What an abort request found.
enum AbortStart {
    /// Abort (or wait for the abort already under way).
    Abort,
    /// Closed: nothing to do.
    Nothing,
    /// A close is completing the upload: too late.
    TooLate,
}

/// State shared by a writer and its upload tasks.
struct Shared {
    bucket: String,
    key: String,
    path: Path,
    store: Arc<Store>,
    rt: &'static Runtime,
    stats: Arc<Recorder>,
    /// The `Referer` header of every request of this file (`fs.s3a.native.audit.referrer`).
    referer: Option<object_store::HeaderValue>,
    upload_options: Attributes,
    state: Mutex<State>,
    upload_id: OnceCell<Result<String>>,
    part_ids: Mutex<Vec<Option<String>>>,
    in_flight: watch::Sender<usize>,
    /// Set (true) when the upload is being discarded: parts waiting for an upload slot stop at
    /// once (an abort never waits behind other writers' uploads), and callers blocked on parts
    /// in flight wake; parts already sending finish first.
    discard: watch::Sender<bool>,
    aborted: OnceCell<Result<()>>,
}

impl Shared {
    fn describe(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    /// `f`, whose requests are this file's: they carry its `Referer` header, if any.
    fn requests<F: std::future::Future>(&self, f: F) -> impl std::future::Future<Output = F::Output> {
        pool::with_referer(self.referer.clone(), f)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // No code panics while holding this lock; a poisoned lock still holds a valid state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ok while open; else the error a call on this writer reports.
    fn check_open(&self) -> Result<()> {
        match &*self.state() {
            State::Open => Ok(()),
            State::Completing => Err(Error::state(format!("{} is closing", self.describe()))),
            State::Closed(_) => Err(Error::state(format!("{} is closed", self.describe()))),
            State::Aborted => Err(Error::state(format!("{} was aborted", self.describe()))),
            State::Failed(e) => Err(e.clone()),
        }
    }

    /// True once the upload is being discarded (aborted or failed): upload tasks stop.
    fn discarding(&self) -> bool {
        matches!(*self.state(), State::Aborted | State::Failed(_))
    }

    /// `Open` -> `Completing`, else the error a close reports.
    fn begin_completing(&self) -> Result<()> {
        let mut s = self.state();
        match &*s {
            State::Open => {
                *s = State::Completing;
                Ok(())
            }
            State::Failed(e) => Err(e.clone()),
            _ => Err(Error::state(format!("{} was aborted", self.describe()))),
        }
    }

    /// `Completing` -> `Closed(result)`.
    fn closed(&self, result: &UploadResult) {
        *self.state() = State::Closed(result.clone());
    }

    /// Record the first failure (`Open` or `Completing` -> `Failed`) and start aborting the
    /// upload in the background. Returns `e` for the caller to report.
    fn fail(self: &Arc<Self>, e: Error) -> Error {
        let newly = {
            let mut s = self.state();
            match &*s {
                State::Open | State::Completing => {
                    // Only the interrupted call reports the interrupt; later calls, maybe from
                    // other threads, report a failed writer.
                    *s = State::Failed(match e.kind() {
                        ErrorKind::Interrupted => Error::state(format!("failed earlier: {}", e.message())),
                        _ => e.clone(),
                    });
                    true
                }
                _ => false,
            }
        };
        if newly {
            self.discard.send_replace(true);
            let me = self.clone();
            self.rt.spawn(async move {
                let _ = me.abort_upload().await;
            });
        }
        e
    }

    /// An abort request: `Open` -> `Aborted`; see the module docs for the other states.
    fn start_abort(&self) -> AbortStart {
        let mut s = self.state();
        match &*s {
            State::Open => {
                *s = State::Aborted;
                self.discard.send_replace(true);
                AbortStart::Abort
            }
            State::Aborted | State::Failed(_) => AbortStart::Abort,
            State::Closed(_) => AbortStart::Nothing,
            State::Completing => AbortStart::TooLate,
        }
    }

    /// Abort as requested and wait for the outcome, polling `interrupted`.
    fn abort(&self, interrupted: &dyn Fn() -> bool) -> Result<()> {
        match self.start_abort() {
            AbortStart::Nothing => Ok(()),
            AbortStart::TooLate => Err(Error::state(format!(
                "{}: too late to abort, close is completing or has completed the upload",
                self.describe()
            ))),
            AbortStart::Abort => pool::block_on(self.rt, "aborting the upload", interrupted, self.abort_upload())?,
        }
    }

    async fn upload_id(&self) -> Result<String> {
        self.upload_id
            .get_or_init(|| async {
                // An abort that found no upload must never see one appear after it: the abort
                // changes the state before it reads the parts in flight, and this task was
                // counted in flight before it got here, so one of the two sees the other.
                if self.discarding() {
                    return Err(Error::state(format!("{} was aborted", self.describe())));
                }
                self.requests(s3::create_upload(&self.store, &self.path, self.upload_options.clone(), &self.stats)).await
            })
            .await
            .clone()
    }

    /// Upload part `idx` (0-based); runs on the runtime. Stops (dropping its request) as soon
    /// as the upload is discarded.
    async fn upload_part(self: Arc<Self>, idx: usize, data: PutPayload, handed_off: Instant) {
        let mut discard = self.discard.subscribe();
        // Waiting for an upload slot ends at once when the upload is discarded. Creating the
        // upload is never cut off (the abort must see the upload id of an upload S3 created),
        // and a part already sending is let finish, so the abort comes after it
        // (reference/s3-rules.md: a part still arriving after the abort could stay stored).
        // Two fair (FIFO) permits: the client's (`fs.s3a.connection.maximum`) and one of the
        // process's connections (the throughput target's, see `pool`).
        let slot = tokio::select! {
            slot = async {
                let client = self.store.upload_slots.acquire().await;
                let connection = pool::connections().acquire().await;
                (client, connection)
            } => Some(slot),
            _ = discard.wait_for(|d| *d) => None,
        };
        let outcome = async {
            let Some((slot, connection)) = slot else { return Ok(None) };
            let _slot = slot.map_err(|_| Error::state("client closed"))?;
            let _connection = connection.map_err(|_| Error::state("connections closed"))?;
            let id = self.upload_id().await?;
            if self.discarding() {
                return Ok(None);
            }
            let started = Instant::now();
            self.stats.queue_wait(started - handed_off);
            let _sending = pool::Sending::start();
            let sent = self.requests(s3::upload_part(&self.store, &self.path, &id, idx, data, &self.stats)).await;
            self.stats.upload_time(started.elapsed());
            sent.map(Some)
        }
        .await;
        // The part's last attempt has ended and its payload (the chunks) is dropped: its
        // bytes are back in the budget.
        match outcome {
            Ok(Some(part)) => {
                self.stats.part_uploaded();
                let mut ids = self.part_ids.lock().unwrap_or_else(|p| p.into_inner());
                if ids.len() <= idx {
                    ids.resize(idx + 1, None);
                }
                ids[idx] = Some(part.content_id);
            }
            Ok(None) => {}
            Err(e) => {
                self.fail(e);
            }
        }
        self.in_flight.send_modify(|n| *n -= 1);
    }

    /// Wait until the parts in flight satisfy `done`, or the upload is discarded (a caller
    /// blocked here then fails at once, while the abort waits for the parts still sending).
    async fn wait_in_flight(&self, done: impl Fn(usize) -> bool) {
        let mut in_flight = self.in_flight.subscribe();
        let mut discard = self.discard.subscribe();
        tokio::select! {
            _ = in_flight.wait_for(|n| done(*n)) => {}
            _ = discard.wait_for(|d| *d) => {}
        }
    }

    /// Abort the upload once: wait for parts in flight, then AbortMultipartUpload with
    /// retries. Every caller gets the one outcome.
    async fn abort_upload(&self) -> Result<()> {
        self.aborted
            .get_or_init(|| async {
                let mut rx = self.in_flight.subscribe();
                let _ = rx.wait_for(|n| *n == 0).await;
                let Some(Ok(id)) = self.upload_id.get() else { return Ok(()) };
                pool::global_stats().writer_aborted();
                self.requests(s3::abort_upload(&self.store, &self.path, id, &self.stats)).await
            })
            .await
            .clone()
    }
}

// ---------------------------------------------------------------------------------------
// Open writers, for aborting them all at exit

static OPEN_WRITERS: LazyLock<Mutex<HashMap<u64, Weak<Shared>>>> = LazyLock::new(Default::default);
static NEXT_REGISTRATION: AtomicU64 = AtomicU64::new(1);

fn open_writers() -> MutexGuard<'static, HashMap<u64, Weak<Shared>>> {
    OPEN_WRITERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Remember an open writer; returns the number to deregister it with.
fn register_open(shared: &Arc<Shared>) -> u64 {
    let n = NEXT_REGISTRATION.fetch_add(1, Ordering::Relaxed);
    open_writers().insert(n, Arc::downgrade(shared));
    n
}

/// Abort every upload of writers still open in this process (for a JVM shutdown hook);
/// returns how many were aborted.
pub fn abort_open_uploads() -> usize {
    let open: Vec<Arc<Shared>> = open_writers().values().filter_map(Weak::upgrade).collect();
    for shared in &open {
        let _ = shared.abort(&|| false);
    }
    open.len()
}

// ---------------------------------------------------------------------------------------
// Writer

/// The part buffer being filled: its chunks, taken from the budget as it fills.
struct PartBuffer {
    lease: PartLease,
    chunks: Vec<Chunk>,
    /// Bytes in the buffer.
    len: u64,
    /// The part's size: the buffer is full at this length.
    size: u64,
}

impl PartBuffer {
    fn full(&self) -> bool {
        self.len == self.size
    }

    /// The chunks as one payload, to upload: their bytes go back to the budget when the
    /// last copy of the payload is dropped.
    fn into_payload(mut self) -> PutPayload {
        self.lease.uploading(&mut self.chunks);
        self.chunks.into_iter().map(Bytes::from_owner).collect()
    }
}

/// Streams bytes to one S3 object as a multipart upload (or one PUT).
///
/// Not for concurrent use: `write` and `close` take `&mut self`; [`Writer::abort_handle`]
/// aborts from another thread, and [`SharedWriter`] is the same writer for several threads.
/// Blocking calls (`write` when the budget or the parts in flight are exhausted, `close`)
/// must run on a plain thread, not on an async runtime. Dropping an open writer aborts its
/// upload; it never completes it.
pub struct Writer {
    shared: Arc<Shared>,
    config: WriterConfig,
    mode: Mode,
    buffer: Option<PartBuffer>,
    /// Parts handed to the runtime so far.
    parts_sliced: u32,
    length: u64,
    registration: u64,
    /// For a magic file: its marker and `.pending` are written on close.
    magic: Option<(MagicFile, String)>,
    /// Parts this writer may have in flight: the user's value, else the budget's share of
    /// the process's connections ([`WriterConfig::parts_in_flight_with`]).
    parts_in_flight: usize,
}

/// Aborts a writer's upload from any thread; see [`Writer::abort_handle`].
#[derive(Clone)]
pub struct AbortHandle(Arc<Shared>);

impl AbortHandle {
    /// Abort the upload and wait for the abort, as [`Writer::abort`]. Later writes and
    /// closes of the writer fail.
    ///
    /// Errors: [`ErrorKind::State`] when the writer's close is completing the upload (the
    /// abort did not take effect); the abort's final failure.
    pub fn abort(&self) -> Result<()> {
        self.0.abort(&|| false)
    }
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
    /// never completed (at least one part is uploaded, even for 0 bytes); close then writes
    /// the marker and `<magic_key>.pending` ([`magic::put_files`]). `uri` is the magic path
    /// as the filesystem names it (`s3a://bucket/...`), recorded in the `.pending` file.
    /// Close returns the deferred [`UploadResult`].
    ///
    /// Errors: as [`Writer::open`], plus S3's answer to CreateMultipartUpload; a failed
    /// marker or `.pending` PUT fails close and aborts the upload.
    pub fn open_magic(bucket: &str, file: &MagicFile, uri: &str, settings: &Settings) -> Result<Writer> {
        if file.final_key.is_empty() || file.final_key == file.magic_key {
            return Err(Error::invalid_argument(format!("'{}' has no distinct final key", file.magic_key)));
        }
        s3::object_path(&file.magic_key)?;
        let w = Writer::open_inner(bucket, &file.final_key, Mode::Deferred, settings, Some((file.clone(), uri.to_string())))?;
        let shared = w.shared.clone();
        // Counted in flight like a part task, so that an abort arriving meanwhile (the
        // shutdown hook's) waits for the upload id and aborts the upload. On failure the
        // writer is dropped, which aborts nothing: no upload exists.
        shared.in_flight.send_modify(|n| *n += 1);
        let created = pool::block_on(shared.rt, "initiating the upload", &|| false, async { shared.upload_id().await });
        shared.in_flight.send_modify(|n| *n -= 1);
        created??;
        Ok(w)
    }

    fn open_inner(bucket: &str, key: &str, mode: Mode, settings: &Settings, magic: Option<(MagicFile, String)>) -> Result<Writer> {
        if key.is_empty() || key.starts_with('/') {
            return Err(Error::invalid_argument(format!("object key '{key}' must be non-empty without a leading '/'")));
        }
        let config = WriterConfig::resolve(settings, bucket)?;
        let path = s3::object_path(key)?;
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
            rt,
            stats: Arc::new(Recorder::child_of(pool::global_stats())),
            // The config checked it is visible ASCII, which is a valid header value.
            referer: config.audit_referrer.as_deref().and_then(|r| object_store::HeaderValue::from_str(r).ok()),
            upload_options,
            state: Mutex::new(State::Open),
            upload_id: OnceCell::new(),
            part_ids: Mutex::new(Vec::new()),
            in_flight: watch::Sender::new(0),
            discard: watch::Sender::new(false),
            aborted: OnceCell::new(),
        });
        pool::global_stats().writer_opened();
        let registration = register_open(&shared);
        let process = pool::process_settings().expect("fixed by apply_process_settings");
        let parts_in_flight = config.parts_in_flight_with(process.connections, process.memory_budget);
        Ok(Writer { shared, config, mode, buffer: None, parts_sliced: 0, length: 0, registration, magic, parts_in_flight })
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

    /// Where the writer is in its life.
    pub fn state(&self) -> WriterState {
        self.shared.state().name()
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
            // SAFETY: MaybeUninit<u8> has u8's layout; the lengths are equal.
            let dst = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, dst.len()) };
            dst.copy_from_slice(&data[from..from + dst.len()]);
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
            if self.buffer.as_ref().is_some_and(PartBuffer::full) {
                let b = self.buffer.take().expect("a full buffer");
                self.hand_off(b, interrupted)?;
            }
            if self.buffer.is_none() {
                self.buffer = Some(self.new_buffer(interrupted)?);
            }
            if self.buffer.as_ref().is_some_and(|b| b.chunks.last().is_none_or(|c| c.room() == 0)) {
                self.next_chunk(interrupted)?;
            }
            let b = self.buffer.as_mut().expect("a buffer");
            b.lease.touch();
            let chunk = b.chunks.last_mut().expect("a chunk with room").data_mut();
            let n = (len - done).min(pool::BUDGET_STEP as usize - chunk.len()).min((b.size - b.len) as usize);
            let spare = &mut chunk.spare_capacity_mut()[..n];
            if let Err(e) = fill(done, spare) {
                // Part of this call's bytes are in: the stream is no longer what the caller
                // wrote, so the writer fails. A call that copied nothing changes nothing.
                return Err(if done > 0 { self.fail(e) } else { e });
            }
            // SAFETY: `fill` initialised all `n` bytes of the spare capacity.
            unsafe { chunk.set_len(chunk.len() + n) };
            b.len += n as u64;
            done += n;
            self.length += n as u64;
            self.shared.stats.add_bytes(n as u64);
        }
        Ok(())
    }

    /// Ok while open; otherwise drops the buffer and returns the state's error.
    fn check_open(&mut self) -> Result<()> {
        let open = self.shared.check_open();
        if open.is_err() {
            self.buffer = None;
        }
        open
    }

    /// Fail the writer with `e`: drop the buffer, keep the failure, abort in the background.
    fn fail(&mut self, e: Error) -> Error {
        self.buffer = None;
        self.shared.fail(e)
    }

    /// The next part's buffer, holding nothing yet (chunks come as it fills). At the maximum
    /// of parts in flight and with the budget short, it first waits for a part in flight to
    /// finish, so that a full part never holds budget bytes only to wait for this writer's
    /// own slot while other writers wait for them (see the pool's module docs).
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
        if *self.shared.in_flight.borrow() >= self.parts_in_flight && !pool::budget().has_room_for(size) {
            self.wait_for_slot(interrupted)?;
            self.check_open()?;
        }
        Ok(PartBuffer { lease: pool::budget().lease(size), chunks: Vec::new(), len: 0, size })
    }

    /// Add a chunk to the current buffer, waiting for the budget as its admission rule says.
    fn next_chunk(&mut self, interrupted: &dyn Fn() -> bool) -> Result<()> {
        let shared = &self.shared;
        let b = self.buffer.as_mut().expect("a buffer");
        let cancelled = || {
            if interrupted() {
                return Err(Error::interrupted("waiting for the memory budget"));
            }
            shared.check_open()
        };
        match pool::timed(|d| shared.stats.budget_blocked(d), || b.lease.next_chunk(&cancelled)) {
            Ok(chunk) => {
                b.chunks.push(chunk);
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Number the buffer as the next part and hand it to an upload task, first waiting while
    /// the writer has its maximum of parts in flight.
    fn hand_off(&mut self, buffer: PartBuffer, interrupted: &dyn Fn() -> bool) -> Result<()> {
        self.wait_for_slot(interrupted)?;
        self.check_open()?;
        let idx = self.parts_sliced as usize;
        self.parts_sliced += 1;
        let data = buffer.into_payload();
        self.shared.in_flight.send_modify(|n| *n += 1);
        self.shared.rt.spawn(self.shared.clone().upload_part(idx, data, Instant::now()));
        Ok(())
    }

    /// Wait (counted as in-flight blocked time) while the writer has its maximum of parts in
    /// flight. Errors: interrupted (the writer fails and aborts), or the writer's failure.
    fn wait_for_slot(&mut self, interrupted: &dyn Fn() -> bool) -> Result<()> {
        let cap = self.parts_in_flight;
        if *self.shared.in_flight.borrow() < cap {
            return Ok(());
        }
        let start = Instant::now();
        let shared = self.shared.clone();
        let waited = pool::block_on(self.shared.rt, "waiting for parts in flight", interrupted, async move {
            shared.wait_in_flight(|n| n < cap).await
        });
        self.shared.stats.in_flight_blocked(start.elapsed());
        waited.map_err(|e| self.fail(e))
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
        if let State::Closed(r) = &*self.shared.state() {
            return Ok(r.clone());
        }
        let outcome = self.check_open().and_then(|()| self.finish(interrupted));
        match outcome {
            Ok(result) => {
                self.shared.closed(&result);
                self.deregister();
                pool::global_stats().writer_closed();
                Ok(result)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Err(self.fail(e)),
            Err(e) => {
                // Report the failure only once the upload is aborted, and say so when the
                // abort failed too (its message names the upload id for an operator).
                let e = self.fail(e);
                let aborted = pool::block_on(self.shared.rt, "aborting after a failure", interrupted, self.shared.abort_upload());
                self.deregister();
                Err(match aborted {
                    Ok(Ok(())) => e,
                    Ok(Err(a)) | Err(a) => e.context_after(format!("and then {a}")),
                })
            }
        }
    }

    fn finish(&mut self, interrupted: &dyn Fn() -> bool) -> Result<UploadResult> {
        if self.mode.publishes() && self.parts_sliced == 0 {
            return self.single_put();
        }
        let last = match self.buffer.take() {
            Some(b) => Some(b),
            // At least one part, even for 0 bytes (Deferred): an empty one, holding nothing.
            None if self.parts_sliced == 0 => Some(self.new_buffer(interrupted)?),
            None => None,
        };
        if let Some(b) = last {
            self.hand_off(b, interrupted)?;
        }
        let shared = self.shared.clone();
        pool::block_on(shared.rt, "waiting for parts to upload", interrupted, shared.wait_in_flight(|n| n == 0))?;
        shared.check_open()?;
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
        shared.begin_completing()?;
        if self.mode.publishes() {
            let r = result.clone();
            let if_absent = self.mode == Mode::CreateIfAbsent;
            pool::block_on(shared.rt, "completing the upload", &|| false, shared.requests(async {
                if if_absent {
                    s3::complete_new_upload(&shared.store, &r, &shared.stats).await
                } else {
                    s3::complete_upload(&shared.store, &r, &shared.stats).await
                }
            }))??;
            result.completed = true;
        }
        if let Some((file, uri)) = &self.magic {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            let storage_class = shared.upload_options.get(&Attribute::StorageClass).cloned();
            pool::block_on(shared.rt, "writing the magic committer files", &|| false, shared.requests(async {
                magic::put_files(&shared.store, file, uri, &result, storage_class, now, &shared.stats).await
            }))??;
        }
        result.statistics = shared.stats.snapshot();
        Ok(result)
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
        shared.begin_completing()?;
        let payload = self.buffer.take().map(PartBuffer::into_payload).unwrap_or_default();
        let if_absent = self.mode == Mode::CreateIfAbsent;
        // The payload (and with it the buffer's bytes) is dropped when the PUT ends.
        let put = pool::block_on(shared.rt, "uploading the object", &|| false, shared.requests(async {
            let attributes = shared.upload_options.clone();
            if if_absent {
                s3::put_new_object(&shared.store, &shared.path, payload, attributes, &shared.stats).await
            } else {
                s3::put_object(&shared.store, &shared.path, payload, attributes, "PutObject", &shared.stats).await
            }
        }))??;
        shared.stats.single_put();
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
    /// close this does nothing (use [`abort`](crate::abort) with the result to discard a
    /// deferred upload); see the module docs for the rules in every state.
    ///
    /// Errors: the abort's final failure, naming the upload id.
    pub fn abort(&mut self) -> Result<()> {
        self.buffer = None;
        let out = self.shared.abort(&|| false);
        if self.shared.discarding() {
            self.deregister();
        }
        out
    }

    fn deregister(&self) {
        open_writers().remove(&self.registration);
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.buffer = None;
        if let AbortStart::Abort = self.shared.start_abort() {
            let shared = self.shared.clone();
            if tokio::runtime::Handle::try_current().is_ok() {
                self.shared.rt.spawn(async move {
                    let _ = shared.abort_upload().await;
                });
            } else {
                let _ = self.shared.rt.block_on(shared.abort_upload());
            }
        }
        self.deregister();
    }
}

// ---------------------------------------------------------------------------------------
// SharedWriter

/// A [`Writer`] for several threads: what the C ABI and the JNI layer hold.
///
/// Writes and closes are serialised (a second thread waits); [`SharedWriter::abort`],
/// [`SharedWriter::state`] and [`SharedWriter::statistics`] never wait for them, so an abort
/// from another thread makes a blocked write or close fail at once. A panic inside a write
/// or close (a bug) leaves the writer unusable: later writes and closes fail with
/// [`ErrorKind::Internal`], abort still works, and dropping it aborts the upload.
pub struct SharedWriter {
    writer: Mutex<Writer>,
    abort: AbortHandle,
}

impl SharedWriter {
    /// Share `writer` between threads.
    pub fn new(writer: Writer) -> Self {
        let abort = writer.abort_handle();
        SharedWriter { writer: Mutex::new(writer), abort }
    }

    /// The writer, for one write or close. After a panic inside an earlier one (a bug) the
    /// writer has failed: its upload is aborted and every call reports that.
    fn lock(&self) -> Result<MutexGuard<'_, Writer>> {
        self.writer.lock().map_err(|_| {
            let e = Error::new(ErrorKind::Internal, "the writer is unusable after an internal error (a panic)");
            self.abort.0.fail(e.clone());
            e
        })
    }

    /// [`Writer::write`].
    pub fn write(&self, data: &[u8]) -> Result<()> {
        self.lock()?.write(data)
    }

    /// [`Writer::write_with`].
    pub fn write_with(
        &self,
        len: usize,
        interrupted: &dyn Fn() -> bool,
        fill: &mut dyn FnMut(usize, &mut [MaybeUninit<u8>]) -> Result<()>,
    ) -> Result<()> {
        self.lock()?.write_with(len, interrupted, fill)
    }

    /// [`Writer::close_with`]; a second close returns the first one's result.
    pub fn close_with(&self, interrupted: &dyn Fn() -> bool) -> Result<UploadResult> {
        self.lock()?.close_with(interrupted)
    }

    /// [`Writer::close`].
    pub fn close(&self) -> Result<UploadResult> {
        self.close_with(&|| false)
    }

    /// [`Writer::abort`], from any thread, without waiting for a write or close in progress
    /// (which then fails). The same rules in every state as [`Writer::abort`].
    pub fn abort(&self) -> Result<()> {
        let out = self.abort.abort();
        // Give the part buffer back now when no call holds the writer.
        if let Ok(mut w) = self.writer.try_lock() {
            if w.shared.discarding() {
                w.buffer = None;
                w.deregister();
            }
        }
        out
    }

    /// Where the writer is in its life.
    pub fn state(&self) -> WriterState {
        self.abort.0.state().name()
    }

    /// Ok while the writer is open; else the error a write would report ([`ErrorKind::State`]
    /// after close or abort, the first failure after one). Never waits for a write.
    pub fn check_open(&self) -> Result<()> {
        self.abort.0.check_open()
    }

    /// The writer's statistics now; `bytes_written` is the length written so far.
    pub fn statistics(&self) -> Statistics {
        self.abort.0.stats.snapshot()
    }
}
