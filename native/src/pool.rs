//! Process-wide resources: the runtime, the memory budget, the client cache and the
//! process-wide statistics.
//!
//! # Process-wide settings
//! `fs.s3a.native.memory.budget` and `fs.s3a.native.runtime.threads` hold for the whole
//! process: the first writer (or `complete`/`abort` call) of the process fixes them, from
//! its settings or the defaults. A later caller naming another value keeps the fixed one
//! and gets one WARN line on standard error per key and value.
//!
//! # Memory budget
//! Part buffers take bytes from one process-wide [`MemoryBudget`] when a part's first byte
//! arrives, on the caller's thread, and give them back when the part's last upload attempt
//! ends. Callers queue first-come first-served, so a writer never waits behind another
//! writer's whole backlog. A caller is admitted when its bytes fit. It is also admitted
//! beyond the budget (a counted *overcommit*) when waiting could never end: no part is
//! uploading anywhere (so nothing will be given back by the runtime) and every thread that
//! holds a partly filled part buffer is itself waiting in the queue, for example one thread
//! writing several files in turn, or a part larger than the whole budget. Runtime threads
//! never wait for the budget.

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
use object_store::{BackoffConfig, ClientOptions, RetryConfig};
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

/// Process-wide budget of part buffer bytes; see the module docs for the admission rule.
pub struct MemoryBudget {
    state: Mutex<BudgetState>,
    changed: Condvar,
}

struct BudgetState {
    capacity: u64,
    /// Bytes held by part buffers being filled and parts uploading.
    used: u64,
    /// Of `used`, bytes of parts uploading (given back by the runtime, no caller needed).
    uploading: u64,
    peak: u64,
    next_ticket: u64,
    /// Waiters in arrival order: (ticket, thread).
    queue: VecDeque<(u64, u64)>,
    /// Buffers being filled: id -> thread that last wrote to it.
    filling: HashMap<u64, Arc<AtomicU64>>,
    next_id: u64,
}

/// Budget figures at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSnapshot {
    pub capacity: u64,
    pub used: u64,
    pub peak: u64,
}

/// Bytes taken from the budget for one part; given back on drop.
pub struct Reservation {
    budget: &'static MemoryBudget,
    bytes: u64,
    id: u64,
    /// Thread last writing into the buffer, while it is being filled.
    holder: Option<Arc<AtomicU64>>,
}

impl Reservation {
    /// Note that the current thread is filling this buffer.
    pub(crate) fn touch(&self) {
        if let Some(h) = &self.holder {
            let me = thread_id();
            if h.load(Ordering::Relaxed) != me {
                h.store(me, Ordering::Relaxed);
            }
        }
    }

    /// The buffer is full and handed to the runtime for upload.
    pub(crate) fn uploading(&mut self) {
        if self.holder.take().is_some() {
            let b = self.budget;
            let mut s = b.lock();
            s.filling.remove(&self.id);
            s.uploading += self.bytes;
            drop(s);
            b.changed.notify_all();
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let b = self.budget;
        let mut s = b.lock();
        s.used -= self.bytes;
        if self.holder.take().is_some() {
            s.filling.remove(&self.id);
        } else {
            s.uploading -= self.bytes;
        }
        drop(s);
        b.changed.notify_all();
    }
}

fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    ID.with(|id| *id)
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
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Set the capacity in bytes.
    fn set_capacity(&self, capacity: u64) {
        let mut s = self.lock();
        if s.capacity != capacity {
            s.capacity = capacity;
            drop(s);
            self.changed.notify_all();
        }
    }

    /// Figures now; `peak` is the most ever held.
    pub fn snapshot(&self) -> BudgetSnapshot {
        let s = self.lock();
        BudgetSnapshot { capacity: s.capacity, used: s.used, peak: s.peak }
    }

    /// Reset the peak to the bytes held now (a test hook: feature `test-hooks`).
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn reset_peak(&self) {
        let mut s = self.lock();
        s.peak = s.used;
    }

    /// Take `bytes` for a buffer the current thread will fill, blocking in FIFO order.
    /// `cancelled` is polled every 50 ms (interrupt or abort of the writer); when it
    /// returns an error, that error is returned and nothing is taken.
    pub(crate) fn acquire(&'static self, bytes: u64, cancelled: &dyn Fn() -> Result<()>) -> Result<Reservation> {
        let me = thread_id();
        let mut s = self.lock();
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        s.queue.push_back((ticket, me));
        loop {
            let head = s.queue.front().map(|(t, _)| *t) == Some(ticket);
            let fits = s.used + bytes <= s.capacity;
            let stuck = head
                && !fits
                && s.uploading == 0
                && s.filling.values().all(|h| {
                    let holder = h.load(Ordering::Relaxed);
                    s.queue.iter().any(|(_, t)| *t == holder)
                });
            if head && (fits || stuck) {
                if stuck {
                    global_stats().budget_overcommit();
                }
                s.queue.pop_front();
                s.used += bytes;
                s.peak = s.peak.max(s.used);
                let id = s.next_id;
                s.next_id += 1;
                let holder = Arc::new(AtomicU64::new(me));
                s.filling.insert(id, holder.clone());
                drop(s);
                self.changed.notify_all();
                return Ok(Reservation { budget: self, bytes, id, holder: Some(holder) });
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
                    s.queue.retain(|(t, _)| *t != ticket);
                    drop(s);
                    self.changed.notify_all();
                    return Err(e);
                }
            }
        }
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
            req.headers_mut().insert("if-none-match", object_store::HeaderValue::from_static("*"));
        }
        self.0.execute(req).await
    }
}

// ---------------------------------------------------------------------------------------
// Process-wide settings

/// The values the first caller of the process fixed.
struct ProcessSettings {
    memory_budget: u64,
    runtime_threads: usize,
}

static PROCESS: OnceLock<ProcessSettings> = OnceLock::new();

/// The memory budget and runtime threads this process runs with, once fixed.
pub(crate) fn process_settings() -> Option<(u64, usize)> {
    PROCESS.get().map(|p| (p.memory_budget, p.runtime_threads))
}

/// Fix the process-wide settings on first use (see the module docs) and return the runtime.
/// A later `config` naming other values keeps the fixed ones, with one WARN per key and value.
pub(crate) fn apply_process_settings(config: &WriterConfig) -> &'static Runtime {
    let fixed = PROCESS.get_or_init(|| {
        let fixed = ProcessSettings {
            memory_budget: config.memory_budget.unwrap_or(config::DEFAULT_MEMORY_BUDGET),
            runtime_threads: config.runtime_threads.unwrap_or_else(config::default_runtime_threads),
        };
        budget().set_capacity(fixed.memory_budget);
        fixed
    });
    if let Some(b) = config.memory_budget.filter(|b| *b != fixed.memory_budget) {
        warn_ignored("fs.s3a.native.memory.budget", b, fixed.memory_budget);
    }
    if let Some(t) = config.runtime_threads.filter(|t| *t != fixed.runtime_threads) {
        warn_ignored("fs.s3a.native.runtime.threads", t as u64, fixed.runtime_threads as u64);
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

    fn leaked(capacity: u64) -> &'static MemoryBudget {
        Box::leak(Box::new(MemoryBudget::new(capacity)))
    }

    #[test]
    fn a_part_larger_than_the_budget_is_admitted_when_nothing_else_holds_it() {
        let b = leaked(1 << 20);
        let r = b.acquire(5 << 20, &|| Ok(())).unwrap();
        assert_eq!(b.snapshot().used, 5 << 20);
        drop(r);
        assert_eq!(b.snapshot().used, 0);
    }

    #[test]
    fn one_thread_filling_several_buffers_never_deadlocks() {
        let b = leaked(1 << 20);
        let held: Vec<Reservation> = (0..3).map(|_| b.acquire(1 << 20, &|| Ok(())).unwrap()).collect();
        assert_eq!(b.snapshot().used, 3 << 20);
        drop(held);
    }

    #[test]
    fn a_waiter_blocks_while_another_thread_fills_its_buffer() {
        let b = leaked(1 << 20);
        let first = b.acquire(1 << 20, &|| Ok(())).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let r = b.acquire(1 << 20, &|| Ok(())).unwrap();
            tx.send(()).unwrap();
            drop(r);
        });
        // The holder (this thread) is not waiting, so the waiter must wait for it.
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        assert_eq!(b.snapshot().peak, 1 << 20);
        drop(first);
        rx.recv_timeout(Duration::from_secs(5)).expect("admitted once the bytes are back");
        waiter.join().unwrap();
        assert_eq!(b.snapshot().peak, 1 << 20);
    }

    #[test]
    fn uploading_parts_make_waiters_wait_and_cancel_works() {
        let b = leaked(1 << 20);
        let mut uploading = b.acquire(1 << 20, &|| Ok(())).unwrap();
        uploading.uploading();
        let cancelled = AtomicU64::new(0);
        let e = b
            .acquire(1 << 20, &|| {
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
        drop(b.acquire(1 << 20, &|| Ok(())).unwrap());
    }
}
