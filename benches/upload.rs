//! Upload throughput of s3native's Writer against the ceiling and object_store's
//! WriteMultipart, measured side by side in one run (variants interleaved each round).
//!
//! - `s3native`: `Writer` in Publish mode, fed 1 MiB `write` calls from the caller thread.
//! - `ceiling`: parallel `put_part` of prebuilt buffers (no copy, no buffering), then
//!   Complete: what the server and network allow at this part size and concurrency.
//! - `WriteMultipart`: object_store's own uploader, `wait_for_capacity` + `write`.
//!
//! All three use the same part size and the same parts in flight per object. Each writes
//! `S3NATIVE_BENCH_MIB` MiB (default 1024) per object, with 1 object and with 8 objects at
//! once (one thread each). Needs `S3NATIVE_TEST_ENDPOINT` (see `make bench`, which starts
//! a local s3s-fs server on tmpfs). Prints MiB/s (median of rounds, with min..max), CPU
//! seconds per GiB of this process, and ratios. No assertions: machines are noisy.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{ObjectStoreExt, WriteMultipart};
use s3native::{Mode, Settings, Writer};

const MIB: usize = 1 << 20;

#[derive(Clone)]
struct Env {
    endpoint: String,
    access: String,
    secret: String,
    region: String,
    bucket: String,
    object_mib: usize,
    part_mib: usize,
    in_flight: usize,
    rounds: usize,
}

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

impl Env {
    fn load() -> Env {
        let endpoint = std::env::var("S3NATIVE_TEST_ENDPOINT")
            .expect("S3NATIVE_TEST_ENDPOINT is not set: run `make bench`, which starts a local server");
        Env {
            endpoint,
            access: env("S3NATIVE_TEST_ACCESS_KEY", &env("AWS_ACCESS_KEY_ID", "testing")),
            secret: env("S3NATIVE_TEST_SECRET_KEY", &env("AWS_SECRET_ACCESS_KEY", "testing")),
            region: env("AWS_REGION", "us-east-1"),
            bucket: env("S3NATIVE_TEST_BUCKET", "s3native-bench"),
            object_mib: env("S3NATIVE_BENCH_MIB", "1024").parse().expect("S3NATIVE_BENCH_MIB is a number"),
            part_mib: env("S3NATIVE_BENCH_PART_MIB", "16").parse().expect("S3NATIVE_BENCH_PART_MIB is a number"),
            in_flight: env("S3NATIVE_BENCH_IN_FLIGHT", "8").parse().expect("S3NATIVE_BENCH_IN_FLIGHT is a number"),
            rounds: env("S3NATIVE_BENCH_ROUNDS", "3").parse().expect("S3NATIVE_BENCH_ROUNDS is a number"),
        }
    }

    fn settings(&self) -> Settings {
        Settings::new()
            .with("fs.s3a.endpoint", &self.endpoint)
            .with("fs.s3a.path.style.access", "true")
            .with("fs.s3a.endpoint.region", &self.region)
            .with("fs.s3a.access.key", &self.access)
            .with("fs.s3a.secret.key", &self.secret)
            .with("fs.s3a.native.part.size", format!("{}M", self.part_mib))
            .with("fs.s3a.native.parts.in.flight", self.in_flight.to_string())
            // Room for every writer's parts in flight plus the one being filled.
            .with("fs.s3a.native.memory.budget", format!("{}M", 8 * (self.in_flight + 1) * self.part_mib))
    }

    fn store(&self) -> AmazonS3 {
        AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_allow_http(true)
            .with_region(&self.region)
            .with_bucket_name(&self.bucket)
            .with_access_key_id(&self.access)
            .with_secret_access_key(&self.secret)
            .build()
            .expect("object_store client")
    }
}

/// CPU time (user + system) of this process so far, in seconds, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0 // utime, stime; USER_HZ is 100 on Linux
}

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    S3native,
    Ceiling,
    WriteMultipart,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::S3native => "s3native Writer",
            Variant::Ceiling => "ceiling (prebuilt put_part)",
            Variant::WriteMultipart => "object_store WriteMultipart",
        }
    }
}

/// Upload one object of `bytes` (a repeated source buffer) the given way.
fn upload_one(v: Variant, e: &Env, store: &Arc<AmazonS3>, rt: &tokio::runtime::Runtime, key: &str, source: &Bytes) {
    let total = e.object_mib * MIB;
    let part = e.part_mib * MIB;
    match v {
        Variant::S3native => {
            let mut w = Writer::open(&e.bucket, key, Mode::Publish, &e.settings()).expect("open");
            let mut done = 0;
            while done < total {
                let n = MIB.min(total - done);
                let at = done % source.len();
                w.write(&source[at..at + n]).expect("write");
                done += n;
            }
            w.close().expect("close");
        }
        Variant::Ceiling => rt.block_on(async {
            let path = Path::from(key);
            let id = store.create_multipart(&path).await.expect("create");
            let parts = (0..total.div_ceil(part)).map(|i| {
                let len = part.min(total - i * part);
                let at = (i * part) % source.len();
                (i, source.slice(at..at + len))
            });
            let mut ids: Vec<_> = stream::iter(parts)
                .map(|(i, data)| {
                    let (store, path, id) = (store.clone(), path.clone(), id.clone());
                    async move { store.put_part(&path, &id, i, data.into()).await.map(|p| (i, p)) }
                })
                .buffer_unordered(e.in_flight)
                .try_collect()
                .await
                .expect("put_part");
            ids.sort_by_key(|(i, _)| *i);
            store.complete_multipart(&path, &id, ids.into_iter().map(|(_, p)| p).collect()).await.expect("complete");
        }),
        Variant::WriteMultipart => rt.block_on(async {
            let upload = store.put_multipart(&Path::from(key)).await.expect("put_multipart");
            let mut w = WriteMultipart::new_with_chunk_size(upload, part);
            let mut done = 0;
            while done < total {
                let n = MIB.min(total - done);
                let at = done % source.len();
                w.wait_for_capacity(e.in_flight).await.expect("capacity");
                w.write(&source[at..at + n]);
                done += n;
            }
            w.finish().await.expect("finish");
        }),
    }
}

/// Run `writers` uploads at once; returns (seconds, CPU seconds).
fn run(v: Variant, writers: usize, e: &Arc<Env>, store: &Arc<AmazonS3>, source: &Bytes) -> (f64, f64) {
    let rt = Arc::new(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap());
    let cpu = cpu_seconds();
    let start = Instant::now();
    std::thread::scope(|s| {
        for i in 0..writers {
            let (e, store, rt, source) = (e.clone(), store.clone(), rt.clone(), source.clone());
            s.spawn(move || upload_one(v, &e, &store, &rt, &format!("bench/{i}"), &source));
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    rt.block_on(async {
        for i in 0..writers {
            let _ = store.delete(&Path::from(format!("bench/{i}"))).await;
        }
    });
    (secs, cpu)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // cargo bench --list
    }
    let e = Arc::new(Env::load());
    let store = Arc::new(e.store());
    let source = {
        let mut v = vec![0u8; 64 * MIB];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for chunk in v.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
        }
        Bytes::from(v)
    };
    let variants = [Variant::S3native, Variant::Ceiling, Variant::WriteMultipart];
    println!(
        "s3native upload benchmark: {} MiB per object, {} MiB parts, {} parts in flight per object, {} rounds, endpoint {}",
        e.object_mib, e.part_mib, e.in_flight, e.rounds, e.endpoint
    );
    for writers in [1usize, 8] {
        // Warm-up: connections, server caches.
        for v in variants {
            run(v, writers.min(2), &Arc::new(Env { object_mib: e.part_mib * 2, ..(*e).clone() }), &store, &source);
        }
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        let mut cpus: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        for _ in 0..e.rounds {
            for (i, v) in variants.iter().enumerate() {
                let (secs, cpu) = run(*v, writers, &e, &store, &source);
                let gib = (writers * e.object_mib) as f64 / 1024.0;
                rates[i].push(gib * 1024.0 / secs);
                cpus[i].push(cpu / gib);
            }
        }
        println!("\n{writers} writer(s) x {} MiB", e.object_mib);
        println!("| variant | MiB/s (median) | min..max | CPU s/GiB | vs ceiling |");
        println!("|---|---|---|---|---|");
        let ceiling = median(rates[1].clone());
        for (i, v) in variants.iter().enumerate() {
            let r = median(rates[i].clone());
            let lo = rates[i].iter().cloned().fold(f64::MAX, f64::min);
            let hi = rates[i].iter().cloned().fold(0.0, f64::max);
            println!("| {} | {r:.0} | {lo:.0}..{hi:.0} | {:.2} | {:.2} |", v.name(), median(cpus[i].clone()), r / ceiling);
        }
        // Ratio per round (same round, side by side), then the median of those.
        let per_round = |a: usize, b: usize| median(rates[a].iter().zip(&rates[b]).map(|(x, y)| x / y).collect());
        println!(
            "s3native / ceiling = {:.2}, s3native / WriteMultipart = {:.2} (median of per-round ratios)",
            per_round(0, 1),
            per_round(0, 2)
        );
    }
}
