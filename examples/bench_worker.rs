//! One measured run of the benchmark harness (`benches/harness/run.py`) without a JVM:
//! writes `files` files of `size` bytes from `threads` threads one way, after a warm-up
//! file of `warmup` bytes (default 1 MiB), and prints one line `RESULT {json}` with what
//! it cost this process.
//!
//! Ways (`way=`):
//! - `s3native`: [`s3native::Writer`] in Publish mode, fed `chunk`-byte writes (default 1 MiB);
//!   every `conf.K=V` argument is a setting (`fs.s3a.*` keys).
//! - `writemultipart`: object_store's `WriteMultipart`, the uploader a Rust engine uses today,
//!   `wait_for_capacity(in_flight)` then `write` of the same chunks, parts of `part` bytes.
//! - `ceiling`: no buffering or copying: parallel `put_part` of slices of one prebuilt buffer,
//!   `in_flight` per file, then Complete; files that fit in one part are one PutObject each.
//!   What the server and network allow at this part size and concurrency.
//! - `ceiling-copy`: the ceiling plus the one copy any stream API makes: each part's bytes
//!   are copied from the prebuilt buffer into a part buffer on the calling thread (the one
//!   polling the parts) before its `put_part`; a buffer goes back to a pool of this file's
//!   when its request is done, so about `in_flight` of them are live (not capped) and each is
//!   faulted once per file. Files that fit one part are one PutObject with no copy, as in
//!   `ceiling`. What a writer that must copy the caller's bytes can reach.
//!
//! The object_store ways read the same `conf.fs.s3a.*` endpoint, credentials and region, and
//! `unsigned=true|false` (payload signing off/on, to match s3native's). Over https the CA is
//! whatever `SSL_CERT_FILE` names (rustls' native roots honour it), as for s3native.
//!
//! Figures, as in the Java worker (`jvm/src/test/java/io/s3native/bench/WriteWorkload.java`):
//! wall seconds, process CPU seconds (/proc/self/stat), local disk bytes written
//! (/proc/self/io `write_bytes`, `cancelled_write_bytes`), peak RSS (`VmHWM`, reset at the
//! start), s3native's peak part-buffer bytes and budget-blocked time, requests by kind, all
//! read when the clock stops. Then a listing checks every file has its size; a mismatch
//! exits with status 1. File `i`'s bytes start at `i * 4096` in the same 8 MiB pseudo-random
//! source as the Java worker's, so every way writes the same bytes.
//!
//! Extra shapes (issue 13's cells):
//! - `big=N`: one more writer thread writes one file of `N` bytes (`<prefix>/big`) at the
//!   same time as the `files` small ones (the fairness cell); the result then has
//!   `classes.small` and `classes.big` (way `s3native` without `big`: `classes.small`):
//!   bytes, seconds from the start until that class's last close, `file_p99_us` (the 99th
//!   percentile, nearest rank, of its files' open-to-close time) and (way `s3native`)
//!   `blocked_p99_us` (of each writer's time blocked by the budget) and the part queue wait:
//!   `queue_wait_p99_us` is the 99th percentile over the class's writers that uploaded parts
//!   of each writer's own p99 (null when none did: a file that fits one part is one PUT at
//!   close, which waits in no queue), `queue_wait_max_us` the largest wait.
//! - `pause=true`: after the warm-up the worker prints `READY` and waits for a line on
//!   stdin, and after the `RESULT` line waits for another before it exits, so the harness
//!   can read this process's RSS from /proc/<pid>/status with no writer open and its peak
//!   (`VmHWM`) after the writes, from outside (the memory cell).
//!
//! Build: `cargo build --release --example bench_worker`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use s3native::{Mode, Settings, Writer};

const SOURCE: usize = 8 << 20;

#[derive(Clone)]
struct Args {
    way: String,
    bucket: String,
    prefix: String,
    files: usize,
    size: usize,
    threads: usize,
    chunk: usize,
    part: usize,
    in_flight: usize,
    warmup: usize,
    unsigned: bool,
    big: usize,
    pause: bool,
    conf: BTreeMap<String, String>,
}

fn parse() -> Args {
    let mut a: HashMap<String, String> = HashMap::new();
    let mut conf = BTreeMap::new();
    for arg in std::env::args().skip(1) {
        let (k, v) = arg.split_once('=').unwrap_or_else(|| panic!("arguments are key=value, got '{arg}'"));
        match k.strip_prefix("conf.") {
            Some(c) => conf.insert(c.to_string(), v.to_string()),
            None => a.insert(k.to_string(), v.to_string()),
        };
    }
    let need = |k: &str| a.get(k).cloned().unwrap_or_else(|| panic!("missing argument {k}=..."));
    let num = |k: &str, d: usize| a.get(k).map(|v| v.parse().unwrap_or_else(|_| panic!("{k} is a number"))).unwrap_or(d);
    let size: usize = num("size", 0);
    Args {
        way: need("way"),
        bucket: need("bucket"),
        prefix: need("prefix"),
        files: num("files", 1),
        size,
        threads: num("threads", 1),
        chunk: num("chunk", 1 << 20).min(size.max(1)),
        part: num("part", 64 << 20),
        in_flight: num("in_flight", 4),
        warmup: num("warmup", 1 << 20),
        unsigned: a.get("unsigned").map(|v| v == "true").unwrap_or(false),
        big: num("big", 0),
        pause: a.get("pause").map(|v| v == "true").unwrap_or(false),
        conf,
    }
}

impl Args {
    fn settings(&self) -> Settings {
        self.conf.iter().fold(Settings::new(), |s, (k, v)| s.with(k, v))
    }

    fn store(&self) -> AmazonS3 {
        let c = |k: &str| self.conf.get(k).cloned().unwrap_or_default();
        AmazonS3Builder::new()
            .with_endpoint(c("fs.s3a.endpoint"))
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_region(self.conf.get("fs.s3a.endpoint.region").cloned().unwrap_or_else(|| "us-east-1".into()))
            .with_bucket_name(&self.bucket)
            .with_access_key_id(c("fs.s3a.access.key"))
            .with_secret_access_key(c("fs.s3a.secret.key"))
            .with_unsigned_payload(self.unsigned)
            .build()
            .expect("object_store client")
    }
}

/// Requests the object_store ways sent, counted where they are made.
#[derive(Default)]
struct Counts {
    create: AtomicU64,
    part: AtomicU64,
    complete: AtomicU64,
    put: AtomicU64,
}

/// Write file number `index` (its bytes start at `index * 4096` in the source, as in the
/// Java worker) under `key`; way `s3native` returns the writer's statistics at close.
fn upload(a: &Args, store: &Arc<AmazonS3>, rt: &tokio::runtime::Runtime, key: &str, index: usize, source: &Bytes, counts: &Counts) -> Option<s3native::Statistics> {
    let at0 = index * 4096 % SOURCE;
    let chunks = || {
        let mut at = at0;
        let mut left = a.size;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let n = a.chunk.min(left).min(SOURCE - at);
            let piece = source.slice(at..at + n);
            left -= n;
            at = (at + n) % SOURCE;
            Some(piece)
        })
    };
    match a.way.as_str() {
        "s3native" => {
            let mut w = Writer::open(&a.bucket, key, Mode::Publish, &a.settings()).expect("open");
            for piece in chunks() {
                w.write(&piece).expect("write");
            }
            return Some(w.close().expect("close").statistics);
        }
        "writemultipart" => rt.block_on(async {
            let upload = store.put_multipart(&Path::from(key)).await.expect("put_multipart");
            counts.create.fetch_add(1, Relaxed);
            let mut w = WriteMultipart::new_with_chunk_size(upload, a.part);
            for piece in chunks() {
                w.wait_for_capacity(a.in_flight).await.expect("capacity");
                w.write(&piece);
            }
            w.finish().await.expect("finish");
            counts.part.fetch_add(a.size.div_ceil(a.part).max(1) as u64, Relaxed);
            counts.complete.fetch_add(1, Relaxed);
        }),
        "ceiling" | "ceiling-copy" => rt.block_on(async {
            let path = Path::from(key);
            let pool = Recycled::default();
            // Prebuilt parts: slices of the source (one part plus SOURCE long for this way).
            let slice = |i: usize, len: usize| {
                let at = (at0 + i * a.part) % SOURCE;
                source.slice(at..at + len)
            };
            if a.size <= a.part {
                store.put(&path, slice(0, a.size).into()).await.expect("put");
                counts.put.fetch_add(1, Relaxed);
                return;
            }
            let id = store.create_multipart(&path).await.expect("create");
            counts.create.fetch_add(1, Relaxed);
            let parts = (0..a.size.div_ceil(a.part)).map(|i| (i, slice(i, a.part.min(a.size - i * a.part))));
            let mut ids: Vec<_> = stream::iter(parts)
                .map(|(i, data)| {
                    let (store, path, id) = (store.clone(), path.clone(), id.clone());
                    // Copied here, on the thread that polls the parts (this one), as a stream's
                    // write copies on the caller's thread.
                    let data = if a.way == "ceiling-copy" { pool.copy_of(&data) } else { data };
                    async move { store.put_part(&path, &id, i, data.into()).await.map(|p| (i, p)) }
                })
                .buffer_unordered(a.in_flight)
                .try_collect()
                .await
                .expect("put_part");
            counts.part.fetch_add(ids.len() as u64, Relaxed);
            ids.sort_by_key(|(i, _)| *i);
            store.complete_multipart(&path, &id, ids.into_iter().map(|(_, p)| p).collect()).await.expect("complete");
            counts.complete.fetch_add(1, Relaxed);
        }),
        other => panic!("way is s3native, writemultipart, ceiling or ceiling-copy, got '{other}'"),
    }
    None
}

/// Part buffers for `ceiling-copy`: a buffer goes back to the pool when the last `Bytes` of
/// its part is dropped (the request done), and the next part is copied into it.
#[derive(Clone, Default)]
struct Recycled(Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

/// One part's buffer, lent out as the owner of a `Bytes`.
struct Lent(Vec<u8>, Recycled);

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        self.1 .0.lock().unwrap().push(buf);
    }
}

impl Recycled {
    fn copy_of(&self, src: &[u8]) -> Bytes {
        let mut buf = self.0.lock().unwrap().pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(src);
        Bytes::from_owner(Lent(buf, self.clone()))
    }
}

/// What one class of writers (the small files, or the big file) did: bytes, the time from
/// the start until its last close, and each writer's part queue wait (p99, max).
#[derive(Default)]
struct Class {
    bytes: u64,
    end: f64,
    files: Vec<u64>,
    blocked_us: Vec<u64>,
    p99_us: Vec<u64>,
    max_us: u64,
}

/// Nearest rank: the smallest value with at least 99% of `xs` at or below it.
fn p99(xs: &mut [u64]) -> Option<u64> {
    xs.sort_unstable();
    (!xs.is_empty()).then(|| xs[(xs.len() * 99).div_ceil(100) - 1])
}

impl Class {
    fn record(&mut self, bytes: usize, began: f64, end: f64, stats: Option<s3native::Statistics>) {
        self.bytes += bytes as u64;
        self.end = self.end.max(end);
        self.files.push(((end - began) * 1e6) as u64);
        if let Some(s) = stats {
            self.blocked_us.push(s.budget_blocked_us);
            if s.part_queue_wait.count > 0 {
                self.p99_us.push(s.part_queue_wait.p99_us);
                self.max_us = self.max_us.max(s.part_queue_wait.max_us);
            }
        }
    }

    fn json(&mut self) -> serde_json::Value {
        let queue = p99(&mut self.p99_us);
        serde_json::json!({
            "bytes": self.bytes as f64,
            "seconds": self.end,
            "files": self.files.len(),
            "file_p99_us": p99(&mut self.files),
            "blocked_p99_us": p99(&mut self.blocked_us),
            "writers_with_parts": self.p99_us.len(),
            "queue_wait_p99_us": queue,
            "queue_wait_max_us": queue.map(|_| self.max_us),
        })
    }
}

fn wait_for_line(what: &str) {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap_or_else(|e| panic!("stdin ({what}): {e}"));
}

fn proc_field(file: &str, name: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{file} has no {name}"))
}

/// utime + stime of this process, seconds (USER_HZ is 100 on Linux).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let f: Vec<&str> = stat.rsplit_once(')').expect("stat format").1.split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}

fn main() {
    let a = Arc::new(parse());
    let store = Arc::new(a.store());
    let rt = Arc::new(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap());
    // SOURCE pseudo-random bytes (the Java worker's), which files repeat cyclically; the
    // ceiling's copy continues the cycle for one more part, so any part is one slice.
    let source = {
        let mut v = vec![0u8; SOURCE];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for c in v.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes());
        }
        if a.way.starts_with("ceiling") {
            let tail: Vec<u8> = v.iter().copied().cycle().take(a.part).collect();
            v.extend_from_slice(&tail);
        }
        Bytes::from(v)
    };
    let counts = Arc::new(Counts::default());

    // Warm-up: one file down the same path (client, connections, TLS); not measured.
    let warmup = a.warmup.max(1);
    upload(&Args { size: warmup, chunk: a.chunk.min(warmup), ..(*a).clone() }, &store, &rt, &format!("{}/warmup", a.prefix), 0, &source, &Counts::default());

    let before = s3native::global_statistics();
    if a.pause {
        println!("READY");
        wait_for_line("start");
    }
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let disk0 = proc_field("/proc/self/io", "write_bytes");
    let cancelled0 = proc_field("/proc/self/io", "cancelled_write_bytes");
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let small = std::sync::Mutex::new(Class::default());
    let big = std::sync::Mutex::new(Class::default());
    std::thread::scope(|s| {
        for t in 0..a.threads {
            let (a, store, rt, source, counts, small) = (a.clone(), store.clone(), rt.clone(), source.clone(), counts.clone(), &small);
            s.spawn(move || {
                for f in (t..a.files).step_by(a.threads) {
                    let began = start.elapsed().as_secs_f64();
                    let stats = upload(&a, &store, &rt, &format!("{}/f{f}", a.prefix), f, &source, &counts);
                    small.lock().unwrap().record(a.size, began, start.elapsed().as_secs_f64(), stats);
                }
            });
        }
        if a.big > 0 {
            let (a, store, rt, source, counts, big) = (a.clone(), store.clone(), rt.clone(), source.clone(), counts.clone(), &big);
            s.spawn(move || {
                let one = Args { size: a.big, chunk: a.chunk.min(a.big), ..(*a).clone() };
                let stats = upload(&one, &store, &rt, &format!("{}/big", a.prefix), a.files, &source, &counts);
                big.lock().unwrap().record(a.big, 0.0, start.elapsed().as_secs_f64(), stats);
            });
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let disk = proc_field("/proc/self/io", "write_bytes") - disk0;
    let cancelled = proc_field("/proc/self/io", "cancelled_write_bytes") - cancelled0;
    let peak_rss = proc_field("/proc/self/status", "VmHWM") * 1024;
    let after = s3native::global_statistics();

    let mut requests: BTreeMap<String, u64> = BTreeMap::new();
    if a.way == "s3native" {
        let (r0, r1) = (serde_json::to_value(&before.requests).unwrap(), serde_json::to_value(&after.requests).unwrap());
        for (k, v) in r1.as_object().unwrap() {
            let d = v.as_u64().unwrap() - r0[k].as_u64().unwrap();
            if d > 0 {
                requests.insert(format!("s3native.{k}"), d);
            }
        }
    } else {
        for (k, c) in [
            ("create_multipart_upload", &counts.create),
            ("upload_part", &counts.part),
            ("complete_multipart_upload", &counts.complete),
            ("put_object", &counts.put),
        ] {
            if c.load(Relaxed) > 0 {
                requests.insert(format!("object_store.{k}"), c.load(Relaxed));
            }
        }
    }

    // Every file is there with its size.
    let listed: Vec<_> = rt.block_on(store.list(Some(&Path::from(a.prefix.as_str()))).try_collect::<Vec<_>>()).expect("list");
    let files: Vec<_> = listed.iter().filter(|m| !matches!(m.location.filename(), Some("warmup" | "big"))).collect();
    let mut wrong: Vec<_> = files.iter().filter(|m| m.size != a.size as u64).map(|m| (m.location.to_string(), m.size)).collect();
    if a.big > 0 {
        let found = listed.iter().find(|m| m.location.filename() == Some("big")).map(|m| m.size);
        if found != Some(a.big as u64) {
            wrong.push((format!("{}/big", a.prefix), found.unwrap_or(0)));
        }
    }
    if files.len() != a.files || !wrong.is_empty() {
        eprintln!("bench_worker: verification failed: {} files under {}, expected {}; wrong sizes: {wrong:?}", files.len(), a.prefix, a.files);
        std::process::exit(1);
    }

    let result = serde_json::json!({
        "seconds": seconds,
        "bytes": (a.files * a.size + a.big) as f64,
        "cpu_seconds": cpu,
        "disk_write_bytes": disk,
        "disk_cancelled_write_bytes": cancelled,
        "peak_rss_bytes": peak_rss,
        "native_buffer_peak_bytes": after.buffer_peak_bytes,
        "budget_blocked_seconds": (after.budget_blocked_us - before.budget_blocked_us) as f64 / 1e6,
        "retries": after.retries - before.retries,
        "requests": requests,
        "budget_overcommits": after.budget_overcommits - before.budget_overcommits,
    });
    let mut result = result;
    if a.way == "s3native" {
        // The process's upload connections (the fairness cell's other process uploads at as many).
        result["connections"] = s3native::pool::connection_use().connections.into();
    }
    if a.big > 0 {
        result["classes"] = serde_json::json!({"small": small.lock().unwrap().json(), "big": big.lock().unwrap().json()});
    } else if a.way == "s3native" {
        result["classes"] = serde_json::json!({"small": small.lock().unwrap().json()});
    }
    println!("RESULT {result}");
    if a.pause {
        wait_for_line("exit");
    }
}
