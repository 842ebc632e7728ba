//! Upload concurrency from the throughput target (`fs.s3a.native.target.throughput`), not
//! from the part size: the target and the budget fix the process's connections, and one
//! file may have as many parts in flight as the budget's share allows; S3A's keys win when
//! the user set them.
//!
//! The target, the budget and the connections are process-wide, so this file is its own
//! test binary and every test here uses the same values: a 4 Gbps target (10 connections at
//! 0.4 Gbps each) and a 128 MiB budget (room for 25 parts of 5 MiB). Parts through the fault
//! proxy are held for a while so that what is in flight at once shows in the writer's
//! statistics and in the time a batch takes.

mod common;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{data, within, FaultProxy, TestBucket, PART};
use s3native::{config, pool, Mode, Settings, Writer};
use serde_json::json;

const TARGET: &str = "4"; // Gbps: 10 connections
const CONNECTIONS: usize = 10;
const BUDGET: &str = "128M";

fn with_process_settings(s: Settings) -> Settings {
    s.with(config::TARGET_THROUGHPUT_KEY, TARGET).with("fs.s3a.native.memory.budget", BUDGET)
}

/// Hold every UploadPart of keys containing `key` for `ms` before forwarding it.
fn hold_parts(proxy: &FaultProxy, key: &str, ms: u64) {
    proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                          "action": "delay", "delay_ms": ms, "count": -1}));
}

/// The most part uploads sending at once while `f` runs (sampled every millisecond from
/// [`pool::connection_use`]), and `f`'s result.
fn most_sending<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut most = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(pool::connection_use().sending);
                std::thread::sleep(Duration::from_millis(1));
            }
            most
        })
    };
    let out = f();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    (sampler.join().expect("sampler"), out)
}

/// Write `content` to `key` in 1 MiB calls and close.
fn write_parts(bucket: &str, key: &str, settings: &Settings, content: &[u8]) -> s3native::UploadResult {
    let mut w = Writer::open(bucket, key, Mode::Publish, settings).expect("open");
    for piece in content.chunks(1 << 20) {
        w.write(piece).expect("write");
    }
    w.close().expect("close")
}

#[test]
fn the_effective_settings_show_the_target_connections_and_parts_in_flight() {
    require_server!();
    let tb = TestBucket::new("throughput_effective");
    let v = s3native::validate(&tb.bucket, &with_process_settings(tb.settings())).expect("validate");
    assert_eq!(v.effective.target_throughput_mbps, 4_000);
    assert_eq!(v.effective.connections, CONNECTIONS);
    assert_eq!(v.effective.memory_budget, 128 << 20);
    // 5 MiB parts (the tests' fs.s3a.multipart.size, the user's): every connection fits.
    assert_eq!((v.effective.part_size, v.effective.parts_in_flight), (PART as u64, CONNECTIONS));
    // S3A's keys from core-default.xml only: 8 MiB parts, still every connection.
    let defaults = with_process_settings(tb.settings())
        .with("fs.s3a.fast.upload.active.blocks", "4")
        .with(config::KEYS_FROM_DEFAULTS_KEY, "fs.s3a.multipart.size,fs.s3a.fast.upload.active.blocks");
    let v = s3native::validate(&tb.bucket, &defaults).expect("validate");
    assert_eq!((v.effective.part_size, v.effective.parts_in_flight), (config::NATIVE_PART_SIZE, CONNECTIONS));
    // The user's fs.s3a.fast.upload.active.blocks wins.
    let user = with_process_settings(tb.settings()).with("fs.s3a.fast.upload.active.blocks", "4");
    assert_eq!(s3native::validate(&tb.bucket, &user).expect("validate").effective.parts_in_flight, 4);
}

#[test]
fn an_invalid_target_fails_open_naming_the_key() {
    require_server!();
    let tb = TestBucket::new("throughput_invalid");
    for bad in ["fast", "0", "-1", "2.5Gbps", "100000"] {
        let s = tb.settings().with("fs.s3a.native.memory.budget", BUDGET).with(config::TARGET_THROUGHPUT_KEY, bad);
        let e = Writer::open(&tb.bucket, &tb.key("never"), Mode::Publish, &s).err().expect("an invalid target fails open");
        assert_eq!(e.kind(), s3native::ErrorKind::InvalidArgument, "{bad}: {e}");
        assert_eq!(e.setting(), Some(config::TARGET_THROUGHPUT_KEY), "{bad}: {e}");
        assert!(e.to_string().contains(bad) && e.to_string().contains("Gbps"), "{bad}: {e}");
        let e = s3native::validate(&tb.bucket, &s).unwrap_err();
        assert_eq!(e.setting(), Some(config::TARGET_THROUGHPUT_KEY), "{bad}: {e}");
    }
    assert!(tb.uploads(&tb.key("never")).is_empty(), "nothing was started");
}

#[test]
fn one_large_file_has_more_than_four_parts_in_flight_when_the_budget_allows() {
    require_server!();
    let tb = TestBucket::new("throughput_large");
    let proxy = FaultProxy::take();
    const HOLD_MS: u64 = 3000;
    let content = Arc::new(data(131, CONNECTIONS * PART));

    // Our default: 10 parts in flight. Nine parts are handed off while writing and the tenth
    // at close, so the writer never waits for its own parts, and no part waits for a
    // connection behind a held one: all ten are held by the proxy at once.
    let key = tb.key("large-default");
    hold_parts(&proxy, &key, HOLD_MS);
    let settings = with_process_settings(tb.proxied_settings());
    let (most, r) = most_sending(|| {
        let (bucket, key, settings, content) = (tb.bucket.clone(), key.clone(), settings.clone(), content.clone());
        within(Duration::from_secs(120), "one large file", move || write_parts(&bucket, &key, &settings, &content))
    });
    assert_eq!(pool::connection_use().connections, CONNECTIONS);
    assert_eq!(most, CONNECTIONS, "every part of the file was sending at once");
    tb.assert_object(&key, &content);
    let s = &r.statistics;
    eprintln!("default: in-flight blocked {} us, queue wait {:?}", s.in_flight_blocked_us, s.part_queue_wait);
    assert_eq!((r.etags.len(), s.parts_uploaded), (CONNECTIONS, CONNECTIONS as u64));
    assert_eq!(proxy.requests(&key, "UploadPart").len(), CONNECTIONS);
    assert_eq!(s.in_flight_blocked_us, 0, "the writer never had its maximum of parts in flight");
    assert!(
        s.part_queue_wait.max_us < HOLD_MS * 1000 / 2,
        "no part waited for a connection behind a held part: {:?}",
        s.part_queue_wait
    );

    // The same file with the user's fs.s3a.fast.upload.active.blocks=4 (S3A's meaning):
    // the fifth part waits for one of the first four, held for 3 s.
    let key = tb.key("large-four");
    hold_parts(&proxy, &key, HOLD_MS);
    let settings = settings.with("fs.s3a.fast.upload.active.blocks", "4");
    let (most, r) = most_sending(|| {
        let (bucket, key, content) = (tb.bucket.clone(), key.clone(), content.clone());
        within(Duration::from_secs(120), "one large file, 4 blocks", move || write_parts(&bucket, &key, &settings, &content))
    });
    assert_eq!(most, 4, "S3A's 4 blocks in flight");
    tb.assert_object(&key, &content);
    eprintln!("4 blocks: in-flight blocked {} us", r.statistics.in_flight_blocked_us);
    assert!(
        r.statistics.in_flight_blocked_us >= (HOLD_MS - 500) * 1000,
        "with 4 blocks the writer waits for its parts in flight: {:?}",
        r.statistics
    );
}

#[test]
fn the_user_s_part_size_wins_and_ours_is_8_mib_otherwise() {
    require_server!();
    let tb = TestBucket::new("throughput_part_size");
    let _turn = FaultProxy::take(); // the budget's figures and connections are the other tests' too
    let content = data(132, 17 << 20);
    // fs.s3a.multipart.size=5M from the tests' settings: the user's, 5 MiB parts.
    let key = tb.key("user");
    let r = write_parts(&tb.bucket, &key, &with_process_settings(tb.settings()), &content);
    assert_eq!(r.etags.len(), 4, "5 + 5 + 5 + 2 MiB");
    tb.assert_object(&key, &content);
    // The same value marked as core-default.xml's: our 8 MiB parts.
    let key = tb.key("default");
    let defaults = with_process_settings(tb.settings()).with(config::KEYS_FROM_DEFAULTS_KEY, "fs.s3a.multipart.size");
    let r = write_parts(&tb.bucket, &key, &defaults, &content);
    assert_eq!(r.etags.len(), 3, "8 + 8 + 1 MiB");
    tb.assert_object(&key, &content);
}

#[test]
fn sixty_four_small_writers_share_the_connections_and_the_budget() {
    require_server!();
    let tb = TestBucket::new("throughput_shared");
    let proxy = FaultProxy::take();
    const WRITERS: usize = 64;
    const HOLD_MS: u64 = 500;
    // Two parts each (5 MiB + 1 MiB), each part held 500 ms: far more parts want to send than
    // the target's 10 connections (the client alone would allow 96), so all 10 are busy and
    // never more; every writer finishes (the permits are first come, first served).
    let content = Arc::new(data(133, PART + (1 << 20)));
    let prefix = tb.key("small");
    hold_parts(&proxy, &prefix, HOLD_MS);
    let settings = with_process_settings(tb.proxied_settings());
    let overcommits_before = s3native::global_statistics().budget_overcommits;
    let started = Instant::now();
    let (most, results): (usize, Vec<(String, s3native::UploadResult)>) = most_sending(|| {
        let (bucket, prefix, content) = (tb.bucket.clone(), prefix.clone(), content.clone());
        within(Duration::from_secs(300), "64 small writers", move || {
            let start = Arc::new(Barrier::new(WRITERS));
            let threads: Vec<_> = (0..WRITERS)
                .map(|i| {
                    let (bucket, key, settings, content, start) =
                        (bucket.clone(), format!("{prefix}-{i}"), settings.clone(), content.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        let r = write_parts(&bucket, &key, &settings, &content);
                        (key, r)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().expect("writer thread")).collect()
        })
    });
    let wall = started.elapsed();
    eprintln!("64 writers: at most {most} parts sending");
    assert_eq!(most, CONNECTIONS, "the writers shared the process's connections, every one of them in use");
    let parts = proxy.log_for(&prefix).iter().filter(|e| e.operation() == "UploadPart").count();
    eprintln!("64 writers: {wall:?}, {parts} parts");
    assert_eq!(parts, 2 * WRITERS);
    let budget = pool::budget().snapshot();
    assert!(budget.peak <= budget.capacity, "within the budget: {budget:?}");
    assert_eq!(budget.used, 0, "every buffer was given back: {budget:?}");
    assert_eq!(s3native::global_statistics().budget_overcommits, overcommits_before, "nothing beyond the budget");
    for (key, r) in &results {
        assert_eq!((r.length, r.etags.len()), (content.len() as u64, 2), "{key}");
    }
    for (key, _) in results.iter().step_by(13) {
        tb.assert_object(key, &content);
    }
}
