//! Process-wide resources: the runtime, the memory budget, the client cache and the
//! process-wide statistics.
//!
//! # Process-wide settings
//! `fs.s3a.native.memory.budget`, `fs.s3a.native.runtime.threads` and
//! `fs.s3a.native.target.throughput` hold for the whole process: the first writer (or
//! `complete`/`abort` call) of the process fixes them, from its settings or the defaults. A
//! later caller naming another value keeps the fixed one and gets one WARN line on standard
//! error per key and value.
//!
//! # Connections
//! The target and the budget fix the process's upload connections
//! ([`config::connections_for`]): a fair (FIFO) semaphore whose permit every part upload,
//! of any writer and bucket, holds while it sends (single PUTs, Complete and the magic files
//! do not take one). Per file, the parts in flight default to the budget's share of those
//! connections ([`config::parts_in_flight_for`]), so one large file can keep every
//! connection busy while many writers share them in arrival order. A part waiting for a
//! permit is already *uploading* in the budget's terms (its bytes come back without any
//! caller): permits are held only by requests sending, which end (timeouts, bounded retries),
//! so the deadlock analysis below holds unchanged.
//!
//! # Memory budget
//! A part buffer is a list of [`BUDGET_STEP`] (1 MiB) chunks. It takes its chunks from one
//! process-wide [`MemoryBudget`] one at a time as it fills, on the caller's thread, and the
//! chunks go back when the part's last upload attempt ends. Runtime threads never wait for
//! the budget.
//!
//! ## Admission
//! A caller asking for a chunk is admitted when the chunk fits and the budget stays *safe*:
//! every part being filled could still be completed, in some order, from the bytes free now
//! plus the bytes uploading (the runtime gives those back without any caller), a completed
//! part's bytes counting as free once it uploads (the banker's test, `BudgetState::safe_with_one_more`).
//! Parts that hold nothing yet start first come first served (none passes an older start
//! that may not start yet); a part that already holds chunks may pass waiters ahead of it, since
//! letting the part nearest to full finish is what gives bytes back. Small files therefore
//! never wait while the budget has room for their one chunk and for the parts already
//! filling to finish.
//!
//! A caller is also admitted beyond the budget (a counted *overcommit*) when waiting could
//! never end: it is the oldest waiter, no waiter can be admitted, no part is uploading
//! anywhere, and every thread holding chunks of a part being filled is itself waiting in the
//! queue. Examples: one thread writing several files in turn (it holds a partial part of
//! each and waits for the next), or a part larger than the whole budget.
//!
//! ## Why nothing deadlocks
//! A waiter waits only for bytes to come back. Bytes come back from (a) parts uploading,
//! which the runtime finishes without callers (every request ends: timeouts and a bounded
//! number of retries), and (b) parts being filled, which need their holder thread to go on
//! writing or to close (which uploads the part) or abort (which drops it).
//! - Uploading > 0: the wait ends when an upload ends (a part queued for a connection
//!   permit gets one when a sending part ends, since every permit holder is a request that
//!   ends; the FIFO semaphore lets no part wait forever).
//! - Uploading = 0 and some holder thread is not waiting for the budget: that thread is
//!   copying bytes, waiting for its own parts in flight (then uploading > 0), or in the
//!   caller's code; it comes back to write, close or abort, which either joins the queue
//!   or gives bytes back.
//! - Uploading = 0 and every holder is waiting: if the budget is safe, the part needing
//!   least can take its next chunk (its need fits in the free bytes), unless its holder is
//!   waiting for a chunk of *another* part (one thread, several files); if no waiter can be
//!   admitted, the oldest is overcommitted. So some waiter always moves.
//!
//! ## Parts that could not be sent
//! A writer at its maximum of parts in flight does not start filling its next part while the
//! budget is short (someone waits, or the part's bytes are not free): it first waits for one
//! of its own parts to finish (`Writer::new_buffer`). Otherwise the full part would sit in
//! the budget waiting for the writer's own slot while other writers, which could send at
//! once, wait for those bytes: with two writers under a budget of two parts, uploads then
//! mostly went one at a time (Druid's bench on the network-bound profile: 10.3 against 14.1
//! MB/s for Druid 29's one chunk per writer). The wait is for the writer's own uploads, which
//! end without any caller, so it adds no case to the analysis below; the thread may hold
//! chunks of another file's part meanwhile, which is the case "some holder is not waiting
//! for the budget" below.
//!
//! The safety test keeps the budget from ever reaching the state where every holder waits
//! with no free bytes, as long as each part has its own thread: with 64 writers under a
//! budget of three parts, writers start only while the started parts can still all finish,
//! and nothing is overcommitted. Overcommit happens only where the rule above is forced
//! (one thread several files, a part larger than the budget), by one chunk at a time.

use std::collections::{HashMap, HashSet, VecDeque};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::{BackoffConfig, ClientOptions, HeaderValue, RetryConfig};
use lru::LruCache;
use tokio::runtime::Runtime;
use tokio::sync::Semaphore;

use crate::config::{self, ChecksumMode, Encryption, StoreConfig, WriterConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::stats::{Recorder, RequestKind};

static GLOBAL_STATS: LazyLock<Recorder> = LazyLock::new(Recorder::new);
static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static BUDGET: LazyLock<MemoryBudget> = LazyLock::new(|| MemoryBudget::new(config::DEFAULT_MEMORY_BUDGET));

/// The process-wide statistics.
pub fn global_stats() -> &'static Recorder {
    &GLOBAL_STATS
}

/// The process-wide memory budget.
pub fn budget() -> &'static MemoryBudget {
    &BUDGET
}

/// The process-wide runtime; the first caller's `threads` sizes it for the life of the
/// process.
fn runtime(threads: usize) -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("s3native-io")
            .enable_all()
            .build()
            .expect("failed to start the s3native runtime")
    })
}

/// Run `fut` to completion on the runtime from a caller's (non-runtime) thread, polling
/// `interrupted` every 50 ms; returns `Err(Interrupted)` as soon as it says true (the
/// future is dropped). Refuses to run on a runtime thread instead of panicking.
pub(crate) fn block_on<F: std::future::Future>(
    rt: &Runtime,
    what: &str,
    interrupted: &dyn Fn() -> bool,
    fut: F,
) -> Result<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::state(format!(
            "{what}: blocking s3native calls cannot run on an async runtime thread; call them from a plain thread (e.g. tokio::task::spawn_blocking)"
        )));
    }
    rt.block_on(async {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return Ok(out),
                _ = tokio::time::sleep(Duration::from_millis(50)) => {
                    if interrupted() {
                        return Err(Error::interrupted(what));
                    }
                }
            }
        }
    })
}

// ---------------------------------------------------------------------------------------
// Memory budget

/// The unit in which part buffers take bytes from the budget: 1 MiB. A part buffer is a
/// list of chunks of this size, each taken when the bytes before it are full, so a 100 KiB
/// file holds 1 MiB, not a whole part, and a budget of a few parts serves many small
/// writers at once. 1 MiB is the smallest budget allowed (every budget holds at least one
/// chunk), divides every part size S3A users set in MiB without waste, and is large enough
/// that taking the budget's lock once per MiB costs nothing next to copying that MiB.
pub const BUDGET_STEP: u64 = 1 << 20;

/// How long a chunk may lie unused in the pool before it is freed: 10 s. Long enough to
/// carry chunks from one file, task or batch to the next (a Spark task's files come
/// seconds apart at most), short enough that a process that stops writing gives its
/// buffers back soon: 10 s after the last part upload ends the pool is empty.
pub const POOL_IDLE_RELEASE: Duration = Duration::from_secs(10);

/// Process-wide budget of part buffer bytes; see the module docs for the admission rule.
pub struct MemoryBudget {
    state: Mutex<BudgetState>,
    changed: Condvar,
}

struct BudgetState {
    capacity: u64,
    /// Bytes of chunks held by parts being filled and parts uploading.
    used: u64,
    /// Of `used`, bytes of parts uploading (given back by the runtime, no caller needed).
    uploading: u64,
    peak: u64,
    next_ticket: u64,
    /// Waiters in arrival order.
    queue: VecDeque<Waiter>,
    /// Parts being filled, by id.
    filling: HashMap<u64, Filling>,
    next_id: u64,
    /// Chunks given back and kept for reuse, with the time each came back; the newest last
    /// (reused first, so the oldest age out when fewer are needed).
    free: Vec<(Vec<u8>, Instant)>,
    /// The thread freeing chunks unused for [`POOL_IDLE_RELEASE`] runs.
    releasing: bool,
    /// [`POOL_IDLE_RELEASE`], shorter in unit tests.
    idle: Duration,
    allocated: u64,
    reused: u64,
    released: u64,
    /// Readers' buffers (see [`ReadLease`]).
    reads: ReadHolds,
}

/// A caller waiting for one chunk of part `part`.
#[derive(Clone, Copy)]
struct Waiter {
    ticket: u64,
    thread: u64,
    part: u64,
}

/// A part being filled: who fills it, the bytes it holds and the bytes it holds when full.
struct Filling {
    holder: Arc<AtomicU64>,
    held: u64,
    need: u64,
}

/// Budget figures at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSnapshot {
    pub capacity: u64,
    /// Bytes of chunks held by parts (being filled or uploading).
    pub used: u64,
    /// Bytes of chunks in the pool, kept for reuse (within the budget with `used`).
    pub pooled: u64,
    /// The most bytes ever held at once, in parts and in the pool.
    pub peak: u64,
    /// Chunks allocated so far.
    pub chunks_allocated: u64,
    /// Chunks taken from the pool so far (each saved an allocation and its page faults).
    pub chunks_reused: u64,
    /// Chunks freed from the pool so far (unused for [`POOL_IDLE_RELEASE`], or the budget shrank).
    pub chunks_released: u64,
}

/// One part buffer's claim on the budget while it is being filled: chunks come from
/// `PartLease::next_chunk`; `PartLease::uploading` ends the filling.
pub struct PartLease {
    budget: &'static MemoryBudget,
    id: u64,
    /// Thread last writing into the buffer.
    holder: Arc<AtomicU64>,
}

/// [`BUDGET_STEP`] bytes of a part buffer, taken from the budget and given back on drop
/// (when the last [`Bytes`](bytes::Bytes) made of it is dropped, after the part's last
/// upload attempt). The bytes are `data()`'s: at most [`BUDGET_STEP`].
pub struct Chunk {
    budget: &'static MemoryBudget,
    data: Vec<u8>,
    part: u64,
    uploading: bool,
}

impl Chunk {
    /// The chunk's bytes, to append to (no more than [`BUDGET_STEP`] in all).
    pub(crate) fn data_mut(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// Room left in the chunk.
    pub(crate) fn room(&self) -> usize {
        BUDGET_STEP as usize - self.data.len()
    }
}

impl AsRef<[u8]> for Chunk {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        let b = self.budget;
        let mut data = std::mem::take(&mut self.data);
        let mut s = b.lock();
        s.used -= BUDGET_STEP;
        if self.uploading {
            s.uploading -= BUDGET_STEP;
        } else if let Some(f) = s.filling.get_mut(&self.part) {
            f.held -= BUDGET_STEP;
        }
        // Kept for reuse while it fits in the budget (not after an overcommit or when the
        // budget shrank); its pages stay faulted in.
        if s.used + s.pooled() + BUDGET_STEP <= s.capacity && data.capacity() >= BUDGET_STEP as usize {
            data.clear();
            s.free.push((data, Instant::now()));
            data = Vec::new();
            if !s.releasing {
                s.releasing = true;
                std::thread::Builder::new()
                    .name("s3native-pool".into())
                    .spawn(move || b.release_idle())
                    .map_err(|_| s.releasing = false)
                    .ok();
            }
        }
        drop(s);
        drop(data);
        b.changed.notify_all();
    }
}

impl PartLease {
    /// Note that the current thread is filling this buffer.
    pub(crate) fn touch(&self) {
        let me = thread_id();
        if self.holder.load(Ordering::Relaxed) != me {
            self.holder.store(me, Ordering::Relaxed);
        }
    }

    /// The buffer's next chunk, blocking until the admission rule (module docs) lets it in.
    /// `cancelled` is polled every 50 ms (interrupt or abort of the writer); when it returns
    /// an error, that error is returned and nothing is taken.
    pub(crate) fn next_chunk(&self, cancelled: &dyn Fn() -> Result<()>) -> Result<Chunk> {
        self.touch();
        self.budget.take_chunk(self.id, cancelled)
    }

    /// The buffer is full (or final) and `chunks`, all of it, go to upload: from now on the
    /// runtime gives them back, no caller needed.
    pub(crate) fn uploading(self, chunks: &mut [Chunk]) {
        let b = self.budget;
        let mut s = b.lock();
        s.filling.remove(&self.id);
        for c in chunks.iter_mut() {
            c.uploading = true;
        }
        s.uploading += BUDGET_STEP * chunks.len() as u64;
        drop(s);
        b.changed.notify_all();
    }
}

impl Drop for PartLease {
    fn drop(&mut self) {
        let b = self.budget;
        if b.lock().filling.remove(&self.id).is_some() {
            b.changed.notify_all();
        }
    }
}

fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    ID.with(|id| *id)
}

/// What the admission rule says to one waiter.
#[derive(PartialEq, Eq)]
enum Admit {
    Wait,
    Yes,
    /// Beyond the budget: waiting could never end.
    Overcommit,
}

impl BudgetState {
    fn pooled(&self) -> u64 {
        BUDGET_STEP * self.free.len() as u64
    }

    fn note_peak(&mut self) {
        self.peak = self.peak.max(self.used + self.pooled());
    }

    /// Take chunks out of the pool until it fits in the budget with what parts hold.
    fn trim_pool(&mut self) -> Vec<(Vec<u8>, Instant)> {
        let keep = (self.capacity.saturating_sub(self.used) / BUDGET_STEP) as usize;
        let n = self.free.len().saturating_sub(keep);
        self.released += n as u64;
        // The oldest go first.
        self.free.drain(..n).collect()
    }

    /// True when giving one more chunk to part `part` keeps the budget *safe*: the chunk
    /// fits, and the parts being filled can all be completed in some order from the free
    /// bytes and the bytes uploading, each part's bytes coming back (via its upload) once it
    /// is complete. The one-resource banker's test: parts sorted by what they still need,
    /// each must fit in what is free plus what the parts before it hold.
    fn safe_with_one_more(&self, part: u64) -> bool {
        let used = self.used + BUDGET_STEP;
        if used > self.capacity {
            return false;
        }
        let mut parts: Vec<(u64, u64)> = self
            .filling
            .iter()
            .filter_map(|(id, f)| {
                let held = f.held + if *id == part { BUDGET_STEP } else { 0 };
                // A part holding nothing blocks nobody: it only waits.
                (held > 0).then(|| (f.need.saturating_sub(held), held))
            })
            .collect();
        parts.sort_unstable();
        let mut available = self.capacity - used + self.uploading;
        for (still_needed, held) in parts {
            if still_needed > available {
                return false;
            }
            available += held;
        }
        true
    }

    /// The admission rule for waiter `me` (see the module docs).
    fn admit(&self, me: &Waiter) -> Admit {
        if self.admissible(me) {
            return Admit::Yes;
        }
        let head = self.queue.front().map(|w| w.ticket) == Some(me.ticket);
        let stuck = head
            && self.uploading == 0
            && self.filling.values().filter(|f| f.held > 0).all(|f| {
                let holder = f.holder.load(Ordering::Relaxed);
                self.queue.iter().any(|w| w.thread == holder)
            })
            && !self.queue.iter().any(|w| self.admissible(w));
        if stuck {
            Admit::Overcommit
        } else {
            Admit::Wait
        }
    }

    /// True when waiter `w` may take its chunk within the budget: it is safe, and, for a
    /// part starting, no older start is waiting that may not start yet (starts go first
    /// come first served).
    fn admissible(&self, w: &Waiter) -> bool {
        if self.used + BUDGET_STEP > self.capacity {
            return false;
        }
        let starting = |w: &Waiter| self.filling.get(&w.part).is_none_or(|f| f.held == 0);
        if starting(w) {
            for older in self.queue.iter().take_while(|o| o.ticket != w.ticket) {
                if starting(older) && !self.safe_with_one_more(older.part) {
                    return false;
                }
            }
        }
        self.safe_with_one_more(w.part)
    }
}

impl MemoryBudget {
    pub(crate) fn new(capacity: u64) -> Self {
        MemoryBudget {
            state: Mutex::new(BudgetState {
                capacity,
                used: 0,
                uploading: 0,
                peak: 0,
                next_ticket: 0,
                queue: VecDeque::new(),
                filling: HashMap::new(),
                next_id: 0,
                free: Vec::new(),
                releasing: false,
                idle: POOL_IDLE_RELEASE,
                allocated: 0,
                reused: 0,
                released: 0,
                reads: ReadHolds::default(),
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Set the capacity in bytes; a smaller one frees pooled chunks beyond it.
    fn set_capacity(&self, capacity: u64) {
        let mut s = self.lock();
        if s.capacity != capacity {
            s.capacity = capacity;
            let freed = s.trim_pool();
            drop(s);
            drop(freed);
            self.changed.notify_all();
        }
    }

    /// The pool's release thread: frees chunks unused for [`POOL_IDLE_RELEASE`], sleeping
    /// until the oldest one's time; ends when the pool is empty (the next chunk given back
    /// starts it again).
    fn release_idle(&self) {
        loop {
            let mut s = self.lock();
            let Some(oldest) = s.free.first().map(|(_, at)| *at) else {
                s.releasing = false;
                return;
            };
            let idle = s.idle;
            let now = Instant::now();
            if now < oldest + idle {
                drop(s);
                std::thread::sleep(oldest + idle - now);
                continue;
            }
            let n = s.free.iter().take_while(|(_, at)| now >= *at + idle).count();
            s.released += n as u64;
            let freed: Vec<_> = s.free.drain(..n).collect();
            drop(s);
            drop(freed);
        }
    }

    /// True when a part of `size` bytes could take all its chunks now without waiting or
    /// making anyone wait: nobody is waiting for the budget and the bytes are free. A writer
    /// at its maximum of parts in flight asks this before it starts filling its next part
    /// (see `Writer::new_buffer`); the answer is a hint (it may change at once), never a
    /// reservation.
    pub(crate) fn has_room_for(&self, size: u64) -> bool {
        let s = self.lock();
        let need = size.div_ceil(BUDGET_STEP).max(1) * BUDGET_STEP;
        s.queue.is_empty() && s.used + need <= s.capacity
    }

    /// Figures now; `peak` is the most ever held.
    pub fn snapshot(&self) -> BudgetSnapshot {
        let s = self.lock();
        BudgetSnapshot {
            capacity: s.capacity,
            used: s.used,
            pooled: s.pooled(),
            peak: s.peak,
            chunks_allocated: s.allocated,
            chunks_reused: s.reused,
            chunks_released: s.released,
        }
    }

    /// Reset the peak to the bytes held now (a test hook: feature `test-hooks`).
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn reset_peak(&self) {
        let mut s = self.lock();
        s.peak = s.used + s.pooled();
    }

    /// Open a part buffer of `size` bytes for the current thread to fill; it holds nothing
    /// until its first [`PartLease::next_chunk`].
    pub(crate) fn lease(&'static self, size: u64) -> PartLease {
        let holder = Arc::new(AtomicU64::new(thread_id()));
        let mut s = self.lock();
        let id = s.next_id;
        s.next_id += 1;
        let need = size.div_ceil(BUDGET_STEP).max(1) * BUDGET_STEP;
        s.filling.insert(id, Filling { holder: holder.clone(), held: 0, need });
        PartLease { budget: self, id, holder }
    }

    /// One chunk for part `part`, blocking as the admission rule says.
    fn take_chunk(&'static self, part: u64, cancelled: &dyn Fn() -> Result<()>) -> Result<Chunk> {
        let mut s = self.lock();
        let me = Waiter { ticket: s.next_ticket, thread: thread_id(), part };
        s.next_ticket += 1;
        s.queue.push_back(me);
        loop {
            let admit = s.admit(&me);
            if admit != Admit::Wait {
                if admit == Admit::Overcommit {
                    global_stats().budget_overcommit();
                }
                s.queue.retain(|w| w.ticket != me.ticket);
                s.used += BUDGET_STEP;
                if let Some(f) = s.filling.get_mut(&part) {
                    f.held += BUDGET_STEP;
                }
                let pooled = s.free.pop().map(|(data, _)| data);
                if pooled.is_some() {
                    s.reused += 1;
                } else {
                    s.allocated += 1;
                }
                s.note_peak();
                drop(s);
                self.changed.notify_all();
                // A fresh chunk is left to fault its pages in as it fills (touching them
                // here would cost the same faults, and a memset on top).
                let data = pooled.unwrap_or_else(|| Vec::with_capacity(BUDGET_STEP as usize));
                return Ok(Chunk { budget: self, data, part, uploading: false });
            }
            let (guard, timeout) = self
                .changed
                .wait_timeout(s, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner());
            s = guard;
            if timeout.timed_out() {
                // Ask the caller (maybe a JNI call into the JVM) without holding the lock
                // that runtime threads take to give bytes back.
                drop(s);
                let outcome = cancelled();
                s = self.lock();
                if let Err(e) = outcome {
                    s.queue.retain(|w| w.ticket != me.ticket);
                    drop(s);
                    self.changed.notify_all();
                    return Err(e);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Read buffers

/// Bytes readers hold (in `BudgetState::used`), by the thread that took them, and the
/// threads waiting for read bytes.
#[derive(Default)]
struct ReadHolds {
    by_thread: HashMap<u64, u64>,
    waiting: HashMap<u64, usize>,
}

/// A reader's claim on the budget for `bytes` of fetched data, given back on drop. Taken
/// with [`MemoryBudget::try_read`] (read-ahead: never waits) or [`MemoryBudget::read`]
/// (bytes a caller waits on).
pub struct ReadLease {
    budget: &'static MemoryBudget,
    bytes: u64,
    thread: u64,
}

impl ReadLease {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for ReadLease {
    fn drop(&mut self) {
        let b = self.budget;
        let mut s = b.lock();
        s.used -= self.bytes;
        if let Some(h) = s.reads.by_thread.get_mut(&self.thread) {
            *h -= self.bytes.min(*h);
            if *h == 0 {
                s.reads.by_thread.remove(&self.thread);
            }
        }
        drop(s);
        b.changed.notify_all();
    }
}

impl BudgetState {
    /// Take `bytes` for a reader on thread `thread` (no checks), freeing pooled chunks the
    /// budget no longer has room for; returns those to drop outside the lock.
    fn take_read(&mut self, bytes: u64, thread: u64) -> Vec<(Vec<u8>, Instant)> {
        self.used += bytes;
        *self.reads.by_thread.entry(thread).or_default() += bytes;
        // Trimmed first: the pooled chunks beyond the budget are dropped, not held beside
        // the read's bytes (the peak counts what is held).
        let freed = self.trim_pool();
        self.note_peak();
        freed
    }

    /// True when waiting for read bytes could never end: nothing is uploading, no writer
    /// could be admitted, and every thread holding bytes (parts being filled, read buffers)
    /// is itself waiting for the budget.
    fn read_stuck(&self) -> bool {
        let waiting = |t: u64| self.queue.iter().any(|w| w.thread == t) || self.reads.waiting.contains_key(&t);
        self.uploading == 0
            && self.filling.values().filter(|f| f.held > 0).all(|f| waiting(f.holder.load(Ordering::Relaxed)))
            && self.reads.by_thread.keys().all(|t| waiting(*t))
            && !self.queue.iter().any(|w| self.admissible(w))
    }
}

impl MemoryBudget {
    /// True while a writer or a reader waits for the budget: readers then let go of the
    /// read-ahead they hold beyond the block being read.
    pub(crate) fn short(&self) -> bool {
        let s = self.lock();
        !s.queue.is_empty() || !s.reads.waiting.is_empty()
    }

    /// `bytes` for read-ahead, only if they are free now: they fit with one chunk to spare,
    /// nobody is waiting for the budget, and every part being filled can still finish (the
    /// writers' safety test). Never waits: read-ahead is the first thing left out when the
    /// budget is short.
    pub(crate) fn try_read(&'static self, bytes: u64) -> Option<ReadLease> {
        let mut s = self.lock();
        if !s.queue.is_empty() || !s.reads.waiting.is_empty() || s.used + bytes > s.capacity {
            return None;
        }
        s.used += bytes;
        // With `bytes` taken, one more chunk for no part must still be safe.
        let ok = s.safe_with_one_more(u64::MAX);
        s.used -= bytes;
        if !ok {
            return None;
        }
        let thread = thread_id();
        let freed = s.take_read(bytes, thread);
        drop(s);
        drop(freed);
        Some(ReadLease { budget: self, bytes, thread })
    }

    /// `bytes` a reader's caller waits on, blocking until they fit (`cancelled` polled every
    /// 50 ms, as [`PartLease::next_chunk`]). The no-deadlock rule, as the writers': when
    /// waiting could never end (nothing uploading, no writer admissible, and every thread
    /// holding bytes, this one included, waiting for the budget) the reader is admitted
    /// beyond the budget (a counted overcommit). A reader drops its read-ahead before
    /// asking, so a reader waiting here holds nothing of its own. Returns the lease and
    /// whether the caller waited.
    pub(crate) fn read(&'static self, bytes: u64, cancelled: &dyn Fn() -> Result<()>) -> Result<(ReadLease, bool)> {
        let thread = thread_id();
        let mut s = self.lock();
        let mut waited = false;
        *s.reads.waiting.entry(thread).or_default() += 1;
        let outcome = loop {
            let fits = s.used + bytes <= s.capacity;
            if fits || s.read_stuck() {
                if !fits {
                    global_stats().budget_overcommit();
                }
                break Ok(());
            }
            waited = true;
            let (guard, timeout) = self.changed.wait_timeout(s, Duration::from_millis(50)).unwrap_or_else(|p| p.into_inner());
            s = guard;
            if timeout.timed_out() {
                drop(s);
                let c = cancelled();
                s = self.lock();
                if let Err(e) = c {
                    break Err(e);
                }
            }
        };
        if let Some(n) = s.reads.waiting.get_mut(&thread) {
            *n -= 1;
            if *n == 0 {
                s.reads.waiting.remove(&thread);
            }
        }
        if let Err(e) = outcome {
            drop(s);
            self.changed.notify_all();
            return Err(e);
        }
        let freed = s.take_read(bytes, thread);
        drop(s);
        drop(freed);
        self.changed.notify_all();
        Ok((ReadLease { budget: self, bytes, thread }, waited))
    }
}

// ---------------------------------------------------------------------------------------
// Clients

/// One S3 client: object_store's `AmazonS3` for a bucket and its settings, and the fair
/// (FIFO) limit on concurrent part uploads through it.
pub(crate) struct Store {
    pub s3: AmazonS3,
    pub upload_slots: Semaphore,
    pub config: StoreConfig,
}

/// Clients kept for reuse: the 64 used most recently (writers hold theirs as long as they
/// need it).
static STORES: LazyLock<Mutex<LruCache<StoreConfig, Arc<Store>>>> =
    LazyLock::new(|| Mutex::new(LruCache::new(NonZeroUsize::new(64).expect("64 is not zero"))));

/// The shared client for `config`, built on first use.
pub(crate) fn store(config: &StoreConfig) -> Result<Arc<Store>> {
    if let Some(s) = STORES.lock().unwrap_or_else(|p| p.into_inner()).get(config) {
        return Ok(s.clone());
    }
    // Outside the cache's lock: this may ask S3 for the bucket's region.
    let options = client_options(config)?;
    let region = signing_region(config, &options);
    let built = Arc::new(Store {
        s3: build_s3(config, options, &region)?,
        upload_slots: Semaphore::new(config.max_concurrent_uploads),
        config: config.clone(),
    });
    let mut stores = STORES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = stores.get(config) {
        return Ok(s.clone());
    }
    stores.put(config.clone(), built.clone());
    Ok(built)
}

/// Regions of buckets looked up so far (S3A's cross-region access), one HEAD per bucket per
/// process; a failed lookup keeps the rule's region.
static BUCKET_REGIONS: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(Default::default);

/// The region to sign with: the rule's, or the bucket's own when `config` asks for the lookup
/// (an unsigned HEAD of the bucket on `s3.amazonaws.com`, whose `x-amz-bucket-region` answer
/// names the region, as the AWS SDKs do for S3A). The lookup runs on a thread of its own,
/// so this is safe from any thread.
fn signing_region(config: &StoreConfig, options: &ClientOptions) -> String {
    if !config.lookup_bucket_region {
        return config.region.clone();
    }
    if let Some(r) = BUCKET_REGIONS.lock().unwrap_or_else(|p| p.into_inner()).get(&config.bucket) {
        return r.clone();
    }
    let found = std::thread::scope(|s| {
        s.spawn(|| -> std::result::Result<String, String> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            rt.block_on(object_store::aws::resolve_bucket_region(&config.bucket, options)).map_err(|e| e.to_string())
        })
        .join()
        .unwrap_or_else(|_| Err("the lookup failed".into()))
    });
    let region = match found {
        Ok(r) => r,
        Err(why) => {
            eprintln!(
                "WARN s3native: could not look up the region of bucket {} ({why}); signing with {}",
                config.bucket, config.region
            );
            config.region.clone()
        }
    };
    BUCKET_REGIONS.lock().unwrap_or_else(|p| p.into_inner()).entry(config.bucket.clone()).or_insert(region).clone()
}

/// HTTP client options of `c`: timeouts, plain HTTP, extra trusted roots.
fn client_options(c: &StoreConfig) -> Result<ClientOptions> {
    let mut options = ClientOptions::new()
        .with_timeout(c.request_timeout)
        .with_connect_timeout(Duration::from_secs(10))
        .with_allow_http(c.allow_http);
    if let Some(pem) = &c.trusted_certificates {
        let certs = object_store::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| {
            Error::invalid_setting(
                config::TRUSTED_CERTIFICATES_KEY,
                format!("not a PEM certificate bundle for bucket {}: {e}", c.bucket),
            )
        })?;
        for cert in certs {
            options = options.with_root_certificate(cert);
        }
    }
    Ok(options)
}

fn build_s3(c: &StoreConfig, options: ClientOptions, region: &str) -> Result<AmazonS3> {
    let mut b = AmazonS3Builder::new()
        .with_client_options(options)
        .with_bucket_name(&c.bucket)
        .with_region(region)
        .with_allow_http(c.allow_http)
        .with_virtual_hosted_style_request(!c.path_style)
        .with_unsigned_payload(!c.sign_payload)
        .with_request_payer(c.requester_pays)
        .with_http_connector(CountingConnector)
        .with_retry(RetryConfig {
            backoff: BackoffConfig::default(),
            max_retries: c.max_retries,
            retry_timeout: Duration::from_secs(180),
        });
    if let Some(e) = &c.endpoint {
        b = b.with_endpoint(e);
    }
    if let Some(source) = &c.credentials {
        b = b.with_credentials(source.provider());
    } else if let (Some(a), Some(s)) = (&c.access_key, &c.secret_key) {
        b = b.with_access_key_id(a).with_secret_access_key(s);
        if let Some(t) = &c.session_token {
            b = b.with_token(t);
        }
    } else if let Some(chain) = &c.default_chain {
        b = chain.configure(b);
    }
    b = match &c.encryption {
        None => b,
        Some(Encryption::SseS3) => {
            let key: AmazonS3ConfigKey = "aws_server_side_encryption".parse().expect("object_store knows this key");
            b.with_config(key, "AES256")
        }
        Some(Encryption::SseKms(k)) => b.with_sse_kms_encryption(k.clone().unwrap_or_default()),
        Some(Encryption::DsseKms(k)) => b.with_dsse_kms_encryption(k.clone().unwrap_or_default()),
        Some(Encryption::SseC(k)) => b.with_ssec_encryption(k),
    };
    b = match c.checksum {
        ChecksumMode::None => b,
        ChecksumMode::Sha256 => b.with_checksum_algorithm(object_store::aws::Checksum::SHA256),
        ChecksumMode::Crc64Nvme => b.with_checksum_algorithm(object_store::aws::Checksum::CRC64NVME),
    };
    b.build()
        .map_err(|e| Error::from_store(format_args!("configuring the S3 client for bucket {}", c.bucket), &e, &c.secrets()))
        .map_err(|e| Error::new(ErrorKind::InvalidArgument, e.message()))
}

tokio::task_local! {
    /// The recorder of the writer (or call) whose task sends the current request.
    pub(crate) static REQUEST_STATS: Arc<Recorder>;
    /// Set around a CompleteMultipartUpload that must not replace an existing object: the
    /// connector adds `If-None-Match: *` to it (every attempt, retries included).
    /// object_store 0.14.2's `MultipartStore::complete_multipart` has no create mode, so the
    /// header is added here, below object_store, for that one request kind.
    pub(crate) static COMPLETE_IF_ABSENT: ();
    /// The `Referer` header of every request sent in this scope: S3A's audit context of the
    /// span a native file was created in (`fs.s3a.native.audit.referrer`), set around all of
    /// that writer's requests ([`with_referer`]).
    static REQUEST_REFERER: HeaderValue;
}

/// Run `f` with every request it sends carrying `referer` as its `Referer` header (none when
/// `None`). The header is not covered by the SigV4 signature, which S3 allows for standard
/// HTTP headers.
pub(crate) async fn with_referer<F: std::future::Future>(referer: Option<HeaderValue>, f: F) -> F::Output {
    match referer {
        Some(r) => REQUEST_REFERER.scope(r, f).await,
        None => f.await,
    }
}

/// object_store's reqwest client, counting every request on the wire by kind, on the
/// recorder of the task that sends it ([`REQUEST_STATS`], which counts into the process-wide
/// one) or, outside such a task, process-wide.
#[derive(Debug)]
struct CountingConnector;

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        Ok(HttpClient::new(CountingService(ReqwestConnector::default().connect(options)?)))
    }
}

#[derive(Debug)]
struct CountingService(HttpClient);

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let mut req = req;
        let kind = RequestKind::classify(req.method().as_str(), req.uri().query().unwrap_or(""));
        if REQUEST_STATS.try_with(|r| r.wire_request(kind)).is_err() {
            global_stats().wire_request(kind);
        }
        // Not covered by the SigV4 signature, which S3 allows for standard HTTP headers.
        if kind == RequestKind::CompleteMultipartUpload && COMPLETE_IF_ABSENT.try_with(|_| ()).is_ok() {
            req.headers_mut().insert("if-none-match", HeaderValue::from_static("*"));
        }
        if let Ok(referer) = REQUEST_REFERER.try_with(HeaderValue::clone) {
            req.headers_mut().insert("referer", referer);
        }
        self.0.execute(req).await
    }
}

// ---------------------------------------------------------------------------------------
// Process-wide settings

/// The values the first caller of the process fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessSettings {
    pub memory_budget: u64,
    pub runtime_threads: usize,
    /// The throughput target, Mbps (`fs.s3a.native.target.throughput` is in Gbps).
    pub target_throughput_mbps: u64,
    /// Part uploads sending at once in the whole process: [`config::connections_for`] of the
    /// target and the budget.
    pub connections: usize,
}

impl ProcessSettings {
    /// What `config` would fix as the process's first caller.
    pub(crate) fn of(config: &WriterConfig) -> Self {
        let memory_budget = config.memory_budget_or_default();
        let target_throughput_mbps = config.target_throughput_or_default();
        ProcessSettings {
            memory_budget,
            runtime_threads: config.runtime_threads.unwrap_or_else(config::default_runtime_threads),
            target_throughput_mbps,
            connections: config::connections_for(target_throughput_mbps, memory_budget),
        }
    }
}

static PROCESS: OnceLock<ProcessSettings> = OnceLock::new();

/// The process's upload connections: part uploads of every writer and bucket take one
/// permit each while sending (tokio's semaphore is fair: first come, first served), on top of
/// each client's `fs.s3a.connection.maximum`. Sized when the process settings are fixed.
static CONNECTIONS: OnceLock<Semaphore> = OnceLock::new();

/// Part uploads sending now (holding a connection permit, request under way).
static SENDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The process's upload connections and their use at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionUse {
    /// Connections the process runs with (0 before the process settings are fixed).
    pub connections: usize,
    /// Part uploads sending now, of every writer.
    pub sending: usize,
}

/// The process's connections and how many part uploads are sending now.
pub fn connection_use() -> ConnectionUse {
    ConnectionUse {
        connections: PROCESS.get().map_or(0, |p| p.connections),
        sending: SENDING.load(std::sync::atomic::Ordering::Relaxed),
    }
}

/// Counts one part upload in [`ConnectionUse::sending`] while it lives.
pub(crate) struct Sending(());

impl Sending {
    pub(crate) fn start() -> Sending {
        SENDING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Sending(())
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        SENDING.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The process-wide settings, once fixed.
pub(crate) fn process_settings() -> Option<ProcessSettings> {
    PROCESS.get().copied()
}

/// The process-wide connection permits (see [`CONNECTIONS`]); fixed with the process settings.
pub(crate) fn connections() -> &'static Semaphore {
    CONNECTIONS.get_or_init(|| Semaphore::new(PROCESS.get().map_or(1, |p| p.connections)))
}

/// Fix the process-wide settings on first use (see the module docs) and return the runtime.
/// A later `config` naming other values keeps the fixed ones, with one WARN per key and value.
pub(crate) fn apply_process_settings(config: &WriterConfig) -> &'static Runtime {
    let fixed = PROCESS.get_or_init(|| {
        let fixed = ProcessSettings::of(config);
        budget().set_capacity(fixed.memory_budget);
        fixed
    });
    connections();
    if let Some(b) = config.memory_budget.filter(|b| *b != fixed.memory_budget) {
        warn_ignored("fs.s3a.native.memory.budget", b, fixed.memory_budget);
    }
    if let Some(t) = config.runtime_threads.filter(|t| *t != fixed.runtime_threads) {
        warn_ignored("fs.s3a.native.runtime.threads", t as u64, fixed.runtime_threads as u64);
    }
    if let Some(t) = config.target_throughput_mbps.filter(|t| *t != fixed.target_throughput_mbps) {
        warn_ignored("fs.s3a.native.target.throughput (Mbps)", t, fixed.target_throughput_mbps);
    }
    runtime(fixed.runtime_threads)
}

fn warn_ignored(key: &str, asked: u64, kept: u64) {
    static WARNED: LazyLock<Mutex<HashSet<(String, u64)>>> = LazyLock::new(Default::default);
    if WARNED.lock().unwrap_or_else(|p| p.into_inner()).insert((key.to_string(), asked)) {
        eprintln!("WARN s3native: {key}={asked} ignored: it is process-wide and this process already runs with {kept}");
    }
}

/// Time a blocking wait and record it with `record`.
pub(crate) fn timed<T>(record: impl FnOnce(Duration), f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    record(start.elapsed());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    const MIB: u64 = 1 << 20;

    fn leaked(capacity: u64) -> &'static MemoryBudget {
        Box::leak(Box::new(MemoryBudget::new(capacity)))
    }

    fn ok() -> Result<()> {
        Ok(())
    }

    #[test]
    fn a_part_larger_than_the_budget_is_admitted_when_nothing_else_holds_it() {
        let b = leaked(MIB);
        let lease = b.lease(5 * MIB);
        let chunks: Vec<Chunk> = (0..5).map(|_| lease.next_chunk(&ok).unwrap()).collect();
        assert_eq!(b.snapshot().used, 5 * MIB);
        drop(chunks);
        drop(lease);
        assert_eq!(b.snapshot().used, 0);
    }

    #[test]
    fn one_thread_filling_several_buffers_never_deadlocks() {
        let b = leaked(MIB);
        let leases: Vec<PartLease> = (0..3).map(|_| b.lease(5 * MIB)).collect();
        let held: Vec<Chunk> = leases.iter().flat_map(|l| [l.next_chunk(&ok).unwrap(), l.next_chunk(&ok).unwrap()]).collect();
        assert_eq!(b.snapshot().used, 6 * MIB);
        drop(held);
    }

    #[test]
    fn a_waiter_blocks_while_another_thread_fills_its_buffer() {
        let b = leaked(MIB);
        let lease = b.lease(MIB);
        let first = lease.next_chunk(&ok).unwrap();
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let l = b.lease(MIB);
            let c = l.next_chunk(&ok).unwrap();
            tx.send(()).unwrap();
            drop(c);
        });
        // The holder (this thread) is not waiting, so the waiter must wait for it.
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(first);
        rx.recv_timeout(Duration::from_secs(5)).expect("admitted once the bytes are back");
        waiter.join().unwrap();
        assert_eq!(b.snapshot().peak, MIB);
    }

    #[test]
    fn small_parts_share_the_budget_one_chunk_each() {
        // Four writers of one-chunk files under a budget of 4 MiB with 2 MiB parts: each
        // holds 1 MiB, and three start at once (the fourth would leave no room for a part
        // to grow to its 2 MiB).
        let b = leaked(4 * MIB);
        let leases: Vec<PartLease> = (0..3).map(|_| b.lease(2 * MIB)).collect();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|scope| {
            for l in &leases {
                let tx = tx.clone();
                scope.spawn(move || tx.send(l.next_chunk(&ok).unwrap()).unwrap());
            }
            let held: Vec<Chunk> = (0..3).map(|_| rx.recv_timeout(Duration::from_secs(5)).expect("admitted at once")).collect();
            assert_eq!(b.snapshot().used, 3 * MIB);
            drop(held);
        });
    }

    #[test]
    fn a_part_may_start_only_while_the_parts_filling_can_still_finish() {
        // 4 MiB budget, 4 MiB parts: A holds 1 MiB and needs 3 more, so B may not start
        // (it would leave 2 MiB free), though its first chunk fits; A goes on past B.
        let b = leaked(4 * MIB);
        let a = b.lease(4 * MIB);
        let mut a_chunks = vec![a.next_chunk(&ok).unwrap()];
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let l = b.lease(4 * MIB);
            let c = l.next_chunk(&ok).unwrap();
            tx.send(()).unwrap();
            drop(c);
        });
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "B waits though 3 MiB are free");
        for _ in 0..3 {
            a_chunks.push(a.next_chunk(&ok).unwrap());
        }
        assert_eq!(b.snapshot().used, 4 * MIB);
        a.uploading(&mut a_chunks);
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "nothing is free while A uploads");
        drop(a_chunks);
        rx.recv_timeout(Duration::from_secs(5)).expect("B starts once A's bytes are back");
        waiter.join().unwrap();
        assert_eq!(b.snapshot().peak, 4 * MIB);
        assert_eq!(b.snapshot().used, 0);
    }

    #[test]
    fn uploading_parts_make_waiters_wait_and_cancel_works() {
        let b = leaked(MIB);
        let lease = b.lease(MIB);
        let mut uploading = vec![lease.next_chunk(&ok).unwrap()];
        lease.uploading(&mut uploading);
        let cancelled = AtomicU64::new(0);
        let other = b.lease(MIB);
        let e = other
            .next_chunk(&|| {
                if cancelled.fetch_add(1, Ordering::Relaxed) > 2 {
                    Err(Error::interrupted("test"))
                } else {
                    Ok(())
                }
            })
            .err()
            .expect("cancelled while the part uploads");
        assert_eq!(e.kind(), crate::error::ErrorKind::Interrupted);
        drop(uploading);
        assert_eq!(b.snapshot().used, 0);
        drop(other.next_chunk(&ok).unwrap());
    }

    #[test]
    fn chunks_given_back_are_reused_then_freed_when_idle() {
        let b = leaked(4 * MIB);
        b.lock().idle = Duration::from_millis(300);
        for _ in 0..5 {
            let lease = b.lease(2 * MIB);
            let mut chunks = vec![lease.next_chunk(&ok).unwrap(), lease.next_chunk(&ok).unwrap()];
            chunks[0].data_mut().extend_from_slice(b"some bytes");
            lease.uploading(&mut chunks);
            drop(chunks);
        }
        let s = b.snapshot();
        assert_eq!((s.chunks_allocated, s.chunks_reused, s.pooled, s.used), (2, 8, 2 * MIB, 0), "{s:?}");
        let lease = b.lease(MIB);
        let c = lease.next_chunk(&ok).unwrap();
        assert!(c.as_ref().is_empty(), "a reused chunk starts empty");
        drop(c);
        let deadline = Instant::now() + Duration::from_secs(5);
        while b.snapshot().pooled > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let s = b.snapshot();
        assert_eq!((s.pooled, s.chunks_released), (0, 2), "freed once unused for the idle time: {s:?}");
        assert_eq!(s.peak, 2 * MIB);
    }

    #[test]
    fn a_smaller_budget_frees_pooled_chunks_beyond_it() {
        let b = leaked(4 * MIB);
        let lease = b.lease(4 * MIB);
        let chunks: Vec<Chunk> = (0..4).map(|_| lease.next_chunk(&ok).unwrap()).collect();
        drop(chunks);
        assert_eq!(b.snapshot().pooled, 4 * MIB);
        b.set_capacity(MIB);
        let s = b.snapshot();
        assert_eq!((s.pooled, s.chunks_released), (MIB, 3), "{s:?}");
    }

    #[test]
    fn read_ahead_takes_only_free_bytes_and_gives_them_back() {
        let b = leaked(4 * MIB);
        let ahead = b.try_read(3 * MIB).expect("free");
        assert!(b.try_read(MIB).is_none(), "one chunk stays free for the writers");
        let lease = b.lease(2 * MIB);
        let chunk = lease.next_chunk(&ok).unwrap();
        assert_eq!(b.snapshot().used, 4 * MIB);
        drop(ahead);
        assert_eq!(b.snapshot().used, MIB);
        assert!(b.try_read(2 * MIB).is_none(), "the part being filled must still be able to finish, with a chunk to spare");
        assert!(b.try_read(MIB).is_some());
        drop(chunk);
    }

    #[test]
    fn a_reader_waits_for_bytes_another_thread_holds_and_is_admitted_when_waiting_cannot_end() {
        let b = leaked(2 * MIB);
        let held = b.try_read(MIB).unwrap();
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let (l, waited) = b.read(2 * MIB, &ok).unwrap();
            tx.send(waited).unwrap();
            drop(l);
        });
        // This thread holds read bytes and is not waiting: the reader waits for them.
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(held);
        assert!(rx.recv_timeout(Duration::from_secs(5)).expect("admitted once the bytes are back"));
        waiter.join().unwrap();
        // One thread holding read bytes and asking for more than is free: admitted beyond.
        let mine = b.try_read(MIB).unwrap();
        let (more, _) = b.read(2 * MIB, &ok).unwrap();
        assert_eq!(b.snapshot().used, 3 * MIB);
        drop((mine, more));
        assert_eq!(b.snapshot().used, 0);
    }

    #[test]
    fn chunks_of_an_overcommit_are_not_pooled() {
        let b = leaked(MIB);
        let lease = b.lease(3 * MIB);
        let chunks: Vec<Chunk> = (0..3).map(|_| lease.next_chunk(&ok).unwrap()).collect();
        drop(chunks);
        assert_eq!(b.snapshot().pooled, MIB, "the pool stays within the budget");
    }
}
