//! The native reader against the local S3 server (moto, and the fault proxy where requests
//! are counted): every read kind, EOF, the ETag pin after a real overwrite, vectored
//! coalescing seen as GETs on the wire, a missing key.

mod common;

use std::ops::Range;

use common::{assert_same_bytes, data, put, read_all, FaultProxy, TestBucket};
use s3native::{ErrorKind, ReadOptions, ReadPolicy, Reader, Settings};

const MIB: usize = 1 << 20;


/// The budget is process-wide: every test names the same one, large enough that no test
/// here waits for it (a wait would make readers drop read-ahead and change GET counts).
const BUDGET: &str = "256M";

fn direct(b: &TestBucket) -> Settings {
    b.settings().with("fs.s3a.native.memory.budget", BUDGET)
}

fn proxied(b: &TestBucket) -> Settings {
    b.proxied_settings().with("fs.s3a.native.memory.budget", BUDGET)
}

/// Small blocks so that modest objects exercise read-ahead, footer and splitting.
fn read_settings(base: Settings) -> Settings {
    base.with("fs.s3a.native.read.small.object.size", "1M")
        .with("fs.s3a.native.read.block.size", "1M")
        .with("fs.s3a.native.read.ahead.max.size", "4M")
        .with("fs.s3a.native.read.footer.size", "256K")
}


/// The GETs the proxy forwarded for `key`.
fn gets(proxy: &FaultProxy, key: &str) -> Vec<common::ProxyLogEntry> {
    proxy.log_for(key).into_iter().filter(|e| e.method == "GET").collect()
}

#[test]
fn a_small_object_is_fetched_whole_by_the_first_read_pinned_to_its_etag() {
    require_server!();
    let b = TestBucket::new("reader-small");
    let key = b.key("small.bin");
    let bytes = data(1, 3 * MIB + 17);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = proxied(&b);
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).expect("open");
    assert_eq!(r.length(), bytes.len() as u64);
    let etag = b.meta(&key).unwrap().e_tag.unwrap();
    assert_eq!(r.etag(), etag);
    assert_same_bytes(&read_all(&mut r, 64 * 1024), &bytes, "stream read");
    let mut one = [0u8; 10];
    assert_eq!(r.read_at(5, &mut one).unwrap(), 10);
    assert_eq!(&one, &bytes[5..15]);
    let s = r.statistics();
    assert_eq!((s.head_requests, s.gets_whole, s.gets_random, s.gets_read_ahead, s.gets_pread), (1, 1, 0, 0, 0), "{s:?}");
    assert_eq!(s.bytes_read, bytes.len() as u64 + 10);
    assert!(s.prefetch_hits > 0);
    let wire = gets(&proxy, &key);
    assert_eq!(wire.len(), 1, "one GET on the wire: {wire:?}");
    assert_eq!(wire[0].header("if-match"), Some(etag.as_str()), "pinned with If-Match");
    assert_eq!(proxy.log_for(&key).iter().filter(|e| e.method == "HEAD").count(), 1);
}

#[test]
fn length_and_etag_from_the_caller_send_no_head_and_eof_reads_nothing() {
    require_server!();
    let b = TestBucket::new("reader-eof");
    let settings = direct(&b);
    for len in [0usize, 1, 100] {
        let key = b.key(&format!("f{len}"));
        let bytes = data(len as u64, len);
        put(&settings, &b, &key, &bytes);
        let etag = b.meta(&key).unwrap().e_tag.unwrap();
        let opts = ReadOptions { length: Some(len as u64), etag: Some(etag.trim_matches('"').to_string()), ..Default::default() };
        let mut r = Reader::open(&b.bucket, &key, &settings, opts).expect("open");
        assert_eq!(r.etag(), etag, "the ETag is quoted as S3 sends it");
        let mut buf = [0u8; 300];
        assert_eq!(r.read(0, &mut buf).unwrap(), len);
        assert_eq!(&buf[..len], &bytes[..]);
        assert_eq!(r.read(len as u64, &mut buf).unwrap(), 0, "EOF");
        assert_eq!(r.read(len as u64 + 10, &mut buf).unwrap(), 0, "past EOF");
        assert_eq!(r.read_at(len as u64, &mut buf).unwrap(), 0, "pread at EOF");
        let s = r.statistics();
        assert_eq!(s.head_requests, 0);
        assert_eq!(s.gets_whole, u64::from(len > 0), "{s:?}");
    }
}

#[test]
fn sequential_reads_are_served_by_growing_parallel_read_ahead() {
    require_server!();
    let b = TestBucket::new("reader-seq");
    let key = b.key("big.csv");
    let bytes = data(2, 20 * MIB + 5);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = read_settings(proxied(&b));
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).expect("open");
    assert_eq!(r.policy(), ReadPolicy::Adaptive);
    assert_same_bytes(&read_all(&mut r, 128 * 1024), &bytes, "sequential read");
    let s = r.statistics();
    assert_eq!((s.gets_whole, s.gets_random, s.gets_pread), (0, 0, 0), "{s:?}");
    // 1 MiB blocks: 21 GETs, of which only the first was a miss.
    assert_eq!(s.gets_read_ahead, 21, "{s:?}");
    assert_eq!(s.prefetch_misses, 1, "{s:?}");
    assert_eq!(s.bytes_fetched, bytes.len() as u64);
    assert_eq!(s.bytes_discarded, 0);
    let global_before = s3native::global_read_statistics().gets_read_ahead;
    assert!(global_before >= 21, "the process-wide figures include an open reader's");
    drop(r);
    assert!(s3native::global_read_statistics().gets_read_ahead >= global_before, "a dropped reader's figures stay counted");
    let wire = gets(&proxy, &key);
    assert_eq!(wire.len(), 21);
    assert!(wire.iter().all(|e| e.header("range").is_some() && e.header("if-match").is_some()), "{wire:?}");
}

#[test]
fn a_pread_leaves_the_read_ahead_window_alone() {
    require_server!();
    let b = TestBucket::new("reader-pread");
    let key = b.key("data.bin");
    let bytes = data(3, 12 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = read_settings(proxied(&b));
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions { policy: Some(ReadPolicy::Sequential), ..Default::default() }).unwrap();
    let mut buf = vec![0u8; 512 * 1024];
    assert_eq!(r.read(0, &mut buf).unwrap(), buf.len());
    let before = r.statistics();
    // Far ahead of the window: one GET of exactly these bytes.
    let mut p = vec![0u8; 1000];
    assert_eq!(r.read_at(10 * MIB as u64, &mut p).unwrap(), 1000);
    assert_eq!(&p[..], &bytes[10 * MIB..10 * MIB + 1000]);
    let after = r.statistics();
    assert_eq!(after.gets_pread, 1);
    assert_eq!(after.gets_read_ahead, before.gets_read_ahead, "the pread started no read-ahead");
    let asked = format!("bytes={}-{}", 10 * MIB, 10 * MIB + 999);
    let exact = gets(&proxy, &key).iter().filter(|e| e.header("range") == Some(asked.as_str())).count();
    assert_eq!(exact, 1, "one GET of exactly the bytes asked ({asked})");
    // The stream goes on from where it was, in its window: no miss.
    let mut pos = buf.len();
    while pos < 3 * MIB {
        let n = r.read(pos as u64, &mut buf).unwrap();
        assert_same_bytes(&buf[..n], &bytes[pos..pos + n], "stream after pread");
        pos += n;
    }
    assert_eq!(r.statistics().prefetch_misses, before.prefetch_misses + 1, "only the pread missed");
}

#[test]
fn a_columnar_file_gets_its_footer_at_open() {
    require_server!();
    let b = TestBucket::new("reader-footer");
    let key = b.key("part-0.parquet");
    let bytes = data(4, 6 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let settings = read_settings(direct(&b));
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    assert_eq!(r.policy(), ReadPolicy::Columnar);
    assert_eq!(r.statistics().gets_footer, 1);
    // parquet-java's footer reads: the last 8 bytes, then the footer itself.
    let len = bytes.len();
    let mut tail = [0u8; 8];
    assert_eq!(r.read(len as u64 - 8, &mut tail).unwrap(), 8);
    assert_eq!(&tail, &bytes[len - 8..]);
    let mut footer = vec![0u8; 200 * 1024];
    assert_eq!(r.read_at((len - 8 - footer.len()) as u64, &mut footer).unwrap(), footer.len());
    assert_same_bytes(&footer, &bytes[len - 8 - footer.len()..len - 8], "footer");
    let s = r.statistics();
    assert_eq!((s.gets_footer, s.gets_pread, s.gets_random, s.gets_read_ahead), (1, 0, 0, 0), "{s:?}");
    assert_eq!(s.prefetch_hits, 2);
    // A sequential scan from the start reads up to the footer and takes the rest from it:
    // the read-ahead never fetches the footer's bytes again.
    let mut at = 0;
    let mut chunk = vec![0u8; 512 * 1024];
    while at < len {
        let n = r.read(at as u64, &mut chunk).unwrap();
        assert_same_bytes(&chunk[..n], &bytes[at..at + n], "scan");
        at += n;
    }
    let s = r.statistics();
    assert_eq!(s.bytes_fetched, len as u64, "every byte fetched once: {s:?}");
    r.unbuffer();
    assert_eq!(r.statistics().buffered_bytes, 0);
    assert_eq!(r.read(len as u64 - 8, &mut tail).unwrap(), 8, "reads go on after unbuffer");
    assert_eq!(r.statistics().gets_random, s.gets_random + 1, "the footer is gone: one GET");
}

#[test]
fn an_object_overwritten_after_open_fails_the_read_naming_the_key() {
    require_server!();
    let b = TestBucket::new("reader-overwrite");
    let key = b.key("changing.bin");
    let settings = read_settings(direct(&b));
    put(&settings, &b, &key, &data(5, 2 * MIB));
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    put(&settings, &b, &key, &data(6, 2 * MIB));
    let mut buf = vec![0u8; 1024];
    let e = r.read(0, &mut buf).expect_err("the object changed");
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains(&key) && e.message().contains("changed"), "{e}");
    let e = r.read_at(MIB as u64, &mut buf).expect_err("preads too");
    assert!(e.message().contains(&key), "{e}");
    let st = r.statistics();
    assert_eq!(st.version_mismatches, 2, "{st:?}");
    assert_eq!(s3native::read_iostatistics(&st).counters["stream_read_version_mismatches"], 2);
}

#[test]
fn a_missing_key_fails_open_with_not_found_naming_it() {
    require_server!();
    let b = TestBucket::new("reader-missing");
    let key = b.key("nothing-here");
    // A write-only setting (a canned ACL, which native writes refuse) does not stop a read.
    let settings = direct(&b).with("fs.s3a.acl.default", "BucketOwnerFullControl");
    let e = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).err().expect("no object");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.message().contains(&key), "{e}");
}

#[test]
fn vectored_ranges_are_coalesced_split_and_delivered_as_each_completes() {
    require_server!();
    let b = TestBucket::new("reader-vectored");
    let key = b.key("v.bin");
    let bytes = data(7, 30 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = read_settings(proxied(&b))
        .with("fs.s3a.native.read.vectored.hole.size", "64K")
        .with("fs.s3a.native.read.vectored.max.request.size", "8M");
    let r = Reader::open(&b.bucket, &key, &settings, ReadOptions { policy: Some(ReadPolicy::Random), ..Default::default() }).unwrap();
    let m = MIB as u64;
    let ranges: Vec<Range<u64>> = vec![
        5 * m..5 * m + 100,             // these three: one GET (holes under 64 KiB)
        0..1000,                        // alone
        5 * m + 1000..5 * m + 2000,
        5 * m + 40_000..5 * m + 50_000,
        10 * m..30 * m,                 // 20 MiB: three GETs of at most 8 MiB
        7 * m..7 * m,                   // empty: no GET
    ];
    let mut seen = vec![false; ranges.len()];
    for item in r.read_ranges(&ranges).unwrap() {
        let (i, got) = item.expect("range");
        let want = &ranges[i];
        assert!(!seen[i], "range {i} delivered once");
        seen[i] = true;
        assert_same_bytes(&got, &bytes[want.start as usize..want.end as usize], &format!("range {i}"));
    }
    assert!(seen.iter().all(|s| *s));
    let s = r.statistics();
    assert_eq!(s.gets_vectored, 5, "{s:?}");
    assert_eq!(gets(&proxy, &key).len(), 5, "five GETs on the wire");
    assert_eq!(s.bytes_discarded, 50_000 - 11_100, "the holes coalesced over: {s:?}");
    let past = 0..bytes.len() as u64 + 1;
    let e = r.read_ranges(std::slice::from_ref(&past)).err().expect("past the end");
    assert_eq!(e.kind(), ErrorKind::EndOfFile, "{e}");
    assert!(e.message().contains(&key) && e.message().contains("past the end"), "{e}");
    let reversed = std::ops::Range { start: 10, end: 5 };
    let e = r.read_ranges(std::slice::from_ref(&reversed)).err().expect("reversed");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// As S3A's stream at close and unbuffer: a vectored read the reader stops fails its ranges
/// not yet taken with Interrupted, naming the object and the reason (also when their bytes
/// were in already), delivers nothing after, and reads started later are whole.
#[test]
fn stopped_vectored_reads_fail_the_ranges_not_yet_taken() {
    require_server!();
    let b = TestBucket::new("reader-vectored-stop");
    let key = b.key("stop.bin");
    let bytes = data(9, 3 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let mut r = Reader::open(&b.bucket, &key, &read_settings(direct(&b)), ReadOptions { policy: Some(ReadPolicy::Random), ..Default::default() })
        .unwrap();
    let m = MIB as u64;
    let ranges: Vec<Range<u64>> = vec![0..1000, m..m + 5000, 2 * m..3 * m];
    let whole = |r: &Reader| {
        let mut seen = 0;
        for item in r.read_ranges(&ranges).unwrap() {
            let (i, got) = item.unwrap();
            let want = &ranges[i];
            assert_same_bytes(&got, &bytes[want.start as usize..want.end as usize], &format!("range {i}"));
            seen += 1;
        }
        assert_eq!(seen, ranges.len());
    };
    // Stopped before any range was taken (close).
    let mut v = r.read_ranges(&ranges).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300)); // let some bytes arrive
    assert_eq!(r.stop_vectored("closed"), 1);
    let e = v.next().expect("an error").expect_err("stopped");
    assert_eq!(e.kind(), ErrorKind::Stopped, "a stop is no interrupt of the caller: {e}");
    assert!(e.message().contains(&key) && e.message().contains("closed with ranges in flight"), "{e}");
    assert!(v.next().is_none(), "nothing after the stop");
    assert_eq!(r.stop_vectored("closed"), 0, "a stopped read is stopped once");
    whole(&r);
    // Stopped after one range was taken (unbuffer).
    let mut v = r.read_ranges(&ranges).unwrap();
    let (i, got) = v.next().unwrap().unwrap();
    assert_same_bytes(&got, &bytes[ranges[i].start as usize..ranges[i].end as usize], "the first range");
    r.unbuffer();
    let e = v.next().expect("an error").expect_err("stopped");
    assert_eq!(e.kind(), ErrorKind::Stopped, "{e}");
    assert!(e.message().contains("unbuffered with ranges in flight"), "{e}");
    assert!(v.next().is_none());
    drop(v);
    whole(&r);
}

#[test]
fn failed_gets_are_retried_to_the_right_bytes_or_fail_naming_the_key() {
    require_server!();
    let b = TestBucket::new("reader-faults");
    let key = b.key("faulty.bin");
    let bytes = data(8, 5 * MIB + 11);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = read_settings(proxied(&b)).with("fs.s3a.retry.limit", "3");
    proxy.add_rule(serde_json::json!({"match": {"method": "GET", "path_contains": key}, "action": "status", "status": 503, "code": "SlowDown", "count": 1}));
    proxy.add_rule(serde_json::json!({"match": {"method": "GET", "path_contains": key}, "action": "drop", "count": 1}));
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    assert_same_bytes(&read_all(&mut r, 256 * 1024), &bytes, "read through a 503 and a dropped connection");
    let faults: Vec<_> = gets(&proxy, &key).into_iter().filter(|e| e.fault.is_some()).collect();
    assert_eq!(faults.len(), 2, "both faults hit GETs: {faults:?}");

    proxy.add_rule(serde_json::json!({"match": {"method": "GET", "path_contains": key}, "action": "status", "status": 500, "code": "InternalError", "count": -1}));
    let settings = settings.with("fs.s3a.retry.limit", "1");
    let r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    let mut buf = vec![0u8; 100];
    let e = r.read_at(MIB as u64, &mut buf).expect_err("every GET fails");
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains(&key), "{e}");
    assert_eq!(r.statistics().errors, 1);
}

#[test]
fn an_interrupted_read_stops_waiting() {
    require_server!();
    let b = TestBucket::new("reader-interrupt");
    let key = b.key("slow.bin");
    let bytes = data(9, 2 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    proxy.add_rule(serde_json::json!({"match": {"method": "GET", "path_contains": key}, "action": "delay", "delay_ms": 5000, "count": 1}));
    let settings = read_settings(proxied(&b));
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    let started = std::time::Instant::now();
    let mut buf = vec![0u8; 1000];
    let e = r.read_with(0, &mut buf, &|| started.elapsed() > std::time::Duration::from_millis(300)).expect_err("interrupted");
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "stopped waiting at once");
    // The reader still works afterwards.
    assert_eq!(r.read_at(0, &mut buf).unwrap(), 1000);
    assert_eq!(&buf[..], &bytes[..1000]);
}

#[test]
fn random_patterns_of_stream_reads_preads_and_vectored_batches_return_the_bytes() {
    use rand::{Rng, SeedableRng};
    require_server!();
    let b = TestBucket::new("reader-random");
    let key = b.key("random.parquet");
    let bytes = data(10, 9 * MIB + 333);
    put(&direct(&b), &b, &key, &bytes);
    let len = bytes.len() as u64;
    for (seed, policy) in [(1u64, None), (2, Some(ReadPolicy::Sequential)), (3, Some(ReadPolicy::Random))] {
        let settings = read_settings(direct(&b)).with("fs.s3a.native.read.vectored.max.request.size", "1M");
        let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions { policy, ..Default::default() }).unwrap();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut pos = 0u64;
        for step in 0..150 {
            let what = format!("seed {seed} step {step}");
            match rng.random_range(0..10) {
                0..=4 => {
                    // A stream read, sometimes after a seek.
                    if rng.random_bool(0.2) {
                        pos = rng.random_range(0..=len);
                    }
                    let mut buf = vec![0u8; rng.random_range(1..300_000)];
                    let n = r.read(pos, &mut buf).unwrap();
                    assert_eq!(n as u64, (buf.len() as u64).min(len - pos), "{what}");
                    assert_same_bytes(&buf[..n], &bytes[pos as usize..pos as usize + n], &what);
                    pos += n as u64;
                }
                5..=7 => {
                    let at = rng.random_range(0..len + 10);
                    let mut buf = vec![0u8; rng.random_range(1..200_000)];
                    let n = r.read_at(at, &mut buf).unwrap();
                    let want = if at >= len { 0 } else { (buf.len() as u64).min(len - at) as usize };
                    assert_eq!(n, want, "{what}");
                    if n > 0 {
                        assert_same_bytes(&buf[..n], &bytes[at as usize..at as usize + n], &what);
                    }
                }
                8 => r.unbuffer(),
                _ => {
                    let ranges: Vec<Range<u64>> = (0..rng.random_range(1..12))
                        .map(|_| {
                            let s = rng.random_range(0..len);
                            s..(s + rng.random_range(0..1_500_000)).min(len)
                        })
                        .collect();
                    let mut n = 0;
                    for item in r.read_ranges(&ranges).unwrap() {
                        let (i, got) = item.unwrap();
                        assert_same_bytes(&got, &bytes[ranges[i].start as usize..ranges[i].end as usize], &what);
                        n += 1;
                    }
                    assert_eq!(n, ranges.len(), "{what}");
                }
            }
        }
        drop(r);
    }
}

#[test]
fn an_etag_from_the_caller_that_the_object_no_longer_has_fails_open() {
    require_server!();
    let b = TestBucket::new("reader-stale-status");
    let key = b.key("status.bin");
    put(&direct(&b), &b, &key, &data(11, 1000));
    let stale = ReadOptions { etag: Some("\"0123456789abcdef0123456789abcdef\"".into()), ..Default::default() };
    let e = Reader::open(&b.bucket, &key, &direct(&b), stale).err().expect("stale ETag");
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains(&key) && e.message().contains("changed"), "{e}");
}

#[test]
fn a_read_after_a_failed_get_asks_again_and_a_large_read_is_fetched_in_parallel_blocks() {
    require_server!();
    let b = TestBucket::new("reader-retry-read");
    let key = b.key("again.bin");
    let bytes = data(12, 6 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = read_settings(proxied(&b)).with("fs.s3a.retry.limit", "0");
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions { policy: Some(ReadPolicy::Random), ..Default::default() }).unwrap();
    proxy.add_rule(serde_json::json!({"match": {"method": "GET", "path_contains": key}, "action": "status", "status": 500, "code": "InternalError", "count": 1}));
    let mut buf = vec![0u8; 3 * MIB + 10];
    let e = r.read(MIB as u64, &mut buf).expect_err("the only attempt fails");
    assert!(e.message().contains(&key), "{e}");
    assert_eq!(r.read(MIB as u64, &mut buf).unwrap(), buf.len(), "the next read asks again");
    assert_same_bytes(&buf, &bytes[MIB..MIB + buf.len()], "after the failure");
    // 3 MiB + 10 B in 1 MiB blocks: the read's GETs are 4 ranges of at most a block (the
    // first attempt's blocks that did arrive are fetched again with the one that failed).
    let log = gets(&proxy, &key);
    assert_eq!(log.iter().filter(|e| e.fault.is_some()).count(), 1);
    let ranges: std::collections::BTreeSet<String> =
        log.iter().filter(|e| e.fault.is_none()).filter_map(|e| e.header("range").map(str::to_string)).collect();
    let m = MIB;
    let expect: std::collections::BTreeSet<String> = [(m, 2 * m - 1), (2 * m, 3 * m - 1), (3 * m, 4 * m - 1), (4 * m, 4 * m + 9)]
        .iter()
        .map(|(a, z)| format!("bytes={a}-{z}"))
        .collect();
    assert_eq!(ranges, expect);
}

#[test]
fn an_expired_token_on_a_get_fetches_the_credentials_again() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    struct Counting(Arc<AtomicUsize>);
    impl s3native::CredentialSource for Counting {
        fn fetch(&self) -> s3native::Result<s3native::Credentials> {
            self.0.fetch_add(1, Ordering::SeqCst);
            let e = common::env();
            Ok(s3native::Credentials { access_key_id: e.access_key.clone(), secret_access_key: e.secret_key.clone(), session_token: None, expiry: None })
        }
        fn describe(&self) -> String {
            "a counting test source".into()
        }
    }
    require_server!();
    let b = TestBucket::new("reader-expired");
    let key = b.key("token.bin");
    let bytes = data(13, 2 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut settings = Settings::new();
    for (k, v) in read_settings(proxied(&b)).iter() {
        if !k.ends_with("access.key") && !k.ends_with("secret.key") {
            settings.set(k, v);
        }
    }
    let settings = settings.with_credentials(s3native::SharedCredentials::new(Counting(calls.clone())));
    let r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    let before = calls.load(Ordering::SeqCst);
    proxy.add_rule(serde_json::json!({"match": {"method": "GET", "path_contains": key}, "action": "status", "status": 400, "code": "ExpiredToken", "message": "The provided token has expired.", "count": 1}));
    let mut buf = vec![0u8; 1000];
    assert_eq!(r.read_at(MIB as u64, &mut buf).unwrap(), 1000);
    assert_eq!(&buf[..], &bytes[MIB..MIB + 1000]);
    assert_eq!(calls.load(Ordering::SeqCst), before + 1, "the source was asked again after ExpiredToken");
}

#[test]
fn an_object_overwritten_after_open_is_a_precondition_failure_unless_change_detection_is_off() {
    require_server!();
    let b = TestBucket::new("reader-change-mode");
    let key = b.key("changing.bin");
    let settings = read_settings(direct(&b));
    let (first, second) = (data(20, 2 * MIB), data(21, 2 * MIB));
    put(&settings, &b, &key, &first);
    // S3A's default (server): the GET is pinned, S3 answers 412, the error says so by S3's code.
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    put(&settings, &b, &key, &second);
    let e = r.read(0, &mut vec![0u8; 1000]).expect_err("changed");
    assert_eq!(e.s3_code(), Some("PreconditionFailed"), "{e}");
    assert!(e.message().contains(&key), "{e}");
    // warn: unpinned, the new version's bytes, the change counted; none: nothing counted.
    for (mode, counted) in [("warn", true), ("none", false)] {
        put(&settings, &b, &key, &first);
        let proxy = FaultProxy::take();
        let s = read_settings(proxied(&b)).with("fs.s3a.change.detection.mode", mode);
        let mut r = Reader::open(&b.bucket, &key, &s, ReadOptions::default()).unwrap();
        put(&settings, &b, &key, &second);
        assert_same_bytes(&read_all(&mut r, 256 * 1024), &second, mode);
        // warn counts every GET that found another ETag (at least the first).
        assert_eq!(r.statistics().version_mismatches > 0, counted, "{mode}: {:?}", r.statistics());
        let wire = gets(&proxy, &key);
        assert!(!wire.is_empty() && wire.iter().all(|e| e.header("if-match").is_none()), "{mode}: unpinned GETs {wire:?}");
    }
    // A version id source cannot be honoured natively (the JVM layer reads through stock S3A).
    let e = Reader::open(&b.bucket, &key, &settings.clone().with("fs.s3a.change.detection.source", "versionid"), ReadOptions::default())
        .err()
        .expect("versionid");
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert_eq!(e.setting(), Some("fs.s3a.change.detection.source"));
}

#[test]
fn the_etag_is_taken_quoted_unquoted_or_empty_as_none() {
    require_server!();
    let b = TestBucket::new("reader-etag-forms");
    let key = b.key("e.bin");
    let bytes = data(22, 5000);
    let settings = direct(&b);
    put(&settings, &b, &key, &bytes);
    let etag = b.meta(&key).unwrap().e_tag.unwrap();
    for given in [etag.clone(), etag.trim_matches('"').to_string(), String::new()] {
        let opts = ReadOptions { length: Some(bytes.len() as u64), etag: Some(given.clone()), ..Default::default() };
        let mut r = Reader::open(&b.bucket, &key, &settings, opts).unwrap();
        assert_eq!(r.statistics().head_requests, 0, "a length: no HEAD");
        assert_same_bytes(&read_all(&mut r, 1000), &bytes, &given);
        // An empty ETag is none: the first GET's answer gives it.
        assert_eq!(r.etag(), etag, "given {given:?}");
    }
    // The options by name as the boundaries send them: a Hadoop read-policy list is a policy.
    let o: ReadOptions = serde_json::from_str(r#"{"policy":"parquet, vector, random, adaptive","etag":"abc","split_end":7}"#).unwrap();
    assert_eq!((o.policy, o.etag.as_deref(), o.split_end), (Some(ReadPolicy::Columnar), Some("abc"), Some(7)));
    let o: ReadOptions = serde_json::from_str(r#"{"policy":"WHOLE_FILE"}"#).unwrap();
    assert_eq!(o.policy, Some(ReadPolicy::WholeFile));
    let o: ReadOptions = serde_json::from_str(r#"{"policy":"nothing known"}"#).unwrap();
    assert_eq!(o.policy, None, "no known word: the settings' policy");
}

#[test]
fn read_ahead_stops_at_the_split_end_and_reads_past_it_still_work() {
    require_server!();
    let b = TestBucket::new("reader-split");
    let key = b.key("split.csv");
    let bytes = data(23, 12 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let m = MIB as u64;
    let scan = |split_end: Option<u64>| {
        let proxy = FaultProxy::take();
        let settings = read_settings(proxied(&b));
        let opts = ReadOptions { policy: Some(ReadPolicy::Sequential), split_end, ..Default::default() };
        let mut r = Reader::open(&b.bucket, &key, &settings, opts).unwrap();
        // The split [0, 5 MiB), read through in 256 KiB reads, then a record's tail past it.
        let mut buf = vec![0u8; 256 * 1024];
        let mut at = 0u64;
        while at < 5 * m {
            let n = r.read(at, &mut buf).unwrap();
            assert_same_bytes(&buf[..n], &bytes[at as usize..at as usize + n], "split");
            at += n as u64;
        }
        let before = r.statistics();
        let mut tail = vec![0u8; 1000];
        assert_eq!(r.read(at, &mut tail).unwrap(), 1000);
        assert_same_bytes(&tail, &bytes[at as usize..at as usize + 1000], "past the split end");
        // Let read-ahead GETs started by the last read land before counting the wire.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let ends: Vec<u64> = gets(&proxy, &key)
            .iter()
            .filter_map(|e| e.header("range").and_then(|r| r.rsplit('-').next()).and_then(|z| z.parse::<u64>().ok()))
            .collect();
        (before, r.statistics(), ends)
    };
    let (before, after, ends) = scan(Some(5 * m));
    assert_eq!(before.bytes_fetched, 5 * m, "no read-ahead past the split end: {before:?}");
    assert_eq!(after.gets_random, 1, "past it: one GET of what was asked (at least the minimum read size) {after:?}");
    assert_eq!(after.bytes_fetched, 5 * m + 64 * 1024, "{after:?}");
    assert!(ends.iter().all(|z| *z < 5 * m + 64 * 1024), "no GET beyond what was read: {ends:?}");
    // Without a split the same scan reads ahead past 5 MiB.
    let (_, _, ends) = scan(None);
    assert!(ends.iter().any(|z| *z >= 6 * m), "read-ahead runs on past 5 MiB without a split: {ends:?}");
}

#[test]
fn vectored_ranges_in_bytes_already_held_or_read_ahead_send_no_get() {
    require_server!();
    let b = TestBucket::new("reader-vectored-held");
    let key = b.key("held.parquet");
    let bytes = data(24, 10 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = read_settings(proxied(&b));
    // Sequential stream reads through 1.5 MiB: the window then holds 1 MiB blocks from
    // 1 MiB to 4 MiB (read-ahead doubled to 2 MiB ahead after the first block).
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions { policy: Some(ReadPolicy::Sequential), ..Default::default() }).unwrap();
    let mut buf = vec![0u8; 512 * 1024];
    for i in 0..3u64 {
        assert_eq!(r.read(i * buf.len() as u64, &mut buf).unwrap(), buf.len());
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let m = MIB as u64;
    let before = r.statistics();
    let wire_before = gets(&proxy, &key).len();
    assert_eq!(before.gets_read_ahead, 4, "the window holds blocks ahead: {before:?}");
    let ranges: Vec<Range<u64>> = vec![
        1_200_000..1_300_000,         // inside the block being read
        m + 600_000..2 * m + 500_000, // across two blocks
        3 * m - 100..3 * m + 100,     // across the last two
    ];
    for item in r.read_ranges(&ranges).unwrap() {
        let (i, got) = item.unwrap();
        assert_same_bytes(&got, &bytes[ranges[i].start as usize..ranges[i].end as usize], &format!("range {i}"));
    }
    let after = r.statistics();
    assert_eq!(after.gets_vectored, 0, "every range from the window: {after:?}");
    assert_eq!(gets(&proxy, &key).len(), wire_before, "no GET on the wire");
    assert!(after.prefetch_hits > before.prefetch_hits);
    // A range outside every buffer is one GET.
    let far = vec![7 * m..7 * m + 10];
    for item in r.read_ranges(&far).unwrap() {
        assert_same_bytes(&item.unwrap().1, &bytes[7 * MIB..7 * MIB + 10], "far");
    }
    assert_eq!(r.statistics().gets_vectored, 1);
}

#[test]
fn a_footer_buffer_serves_vectored_ranges_and_sinks_get_the_bytes_in_order() {
    require_server!();
    let b = TestBucket::new("reader-sink");
    let key = b.key("sink.parquet");
    let bytes = data(25, 6 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let settings = read_settings(direct(&b));
    let len = bytes.len() as u64;
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    assert_eq!(r.policy(), ReadPolicy::Columnar);
    let footer = vec![len - 200_000..len - 8, len - 8..len];
    for item in r.read_ranges(&footer).unwrap() {
        let (i, got) = item.unwrap();
        assert_same_bytes(&got, &bytes[footer[i].start as usize..footer[i].end as usize], "footer range");
    }
    assert_eq!(r.statistics().gets_vectored, 0, "the footer fetched at open serves them");
    // A sink sees the read's bytes in order, offsets from the read's start, across buffers
    // (a GET of its own, then the footer).
    let mut seen = Vec::new();
    let from = len - 300_000;
    let n = r
        .read_to(from, 300_000, &mut |at, piece| {
            assert_eq!(at, seen.len(), "in order");
            seen.extend_from_slice(piece);
            Ok(())
        }, &|| false)
        .unwrap();
    assert_eq!(n, 300_000);
    assert_same_bytes(&seen, &bytes[from as usize..], "stream read through a sink");
    let mut seen = Vec::new();
    let n = r
        .read_at_to(1000, 5000, &mut |at, piece| {
            assert_eq!(at, seen.len());
            seen.extend_from_slice(piece);
            Ok(())
        }, &|| false)
        .unwrap();
    assert_eq!(n, 5000);
    assert_same_bytes(&seen, &bytes[1000..6000], "pread through a sink");
    // A sink's error ends the read with it.
    let e = r.read_at_to(0, 10, &mut |_, _| Err(s3native::Error::invalid_argument("sink full")), &|| false).expect_err("sink error");
    assert_eq!(e.message(), "sink full");
}

/// `prefetch_hits` counts only bytes a prefetch fetched before the read asked: the whole
/// object or a read-ahead block a read starts for itself is a miss, not also a hit.
#[test]
fn a_get_a_read_starts_itself_is_no_prefetch_hit() {
    require_server!();
    let b = TestBucket::new("reader-hits");
    let key = b.key("hits.bin");
    let bytes = data(11, 3 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    // Adaptive: the first read fetches the small object whole for itself; the next read finds it.
    let settings = read_settings(direct(&b)).with("fs.s3a.native.read.small.object.size", "4M");
    let mut r = Reader::open(&b.bucket, &key, &settings, ReadOptions::default()).unwrap();
    let mut buf = vec![0u8; 1000];
    assert_eq!(r.read(0, &mut buf).unwrap(), 1000);
    let s = r.statistics();
    assert_eq!((s.gets_whole, s.prefetch_hits, s.prefetch_misses), (1, 0, 1), "the first read missed, no hit: {s:?}");
    assert_eq!(r.read(1000, &mut buf).unwrap(), 1000);
    assert_eq!(r.read_at(2 * MIB as u64, &mut buf).unwrap(), 1000);
    let s = r.statistics();
    assert_eq!((s.prefetch_hits, s.prefetch_misses), (2, 1), "the later reads hit: {s:?}");
    drop(r);
    // Sequential: a read spanning three 1 MiB read-ahead blocks that it starts itself hits none.
    let mut r = Reader::open(&b.bucket, &key, &read_settings(direct(&b)), ReadOptions { policy: Some(ReadPolicy::Sequential), ..Default::default() })
        .unwrap();
    let mut big = vec![0u8; 3 * MIB - 10];
    assert_eq!(r.read(0, &mut big).unwrap(), big.len());
    assert_same_bytes(&big, &bytes[..big.len()], "sequential");
    let s = r.statistics();
    assert_eq!(s.prefetch_hits, 0, "every block was the read's own: {s:?}");
}

/// `bytes_discarded` counts each fetched byte at most once: bytes handed over twice from one
/// buffer (a stream read, then a pread and a stream read of the same bytes) are read once,
/// and the rest is discarded when the buffer is dropped.
#[test]
fn bytes_read_twice_from_a_buffer_are_not_counted_twice() {
    require_server!();
    let b = TestBucket::new("reader-discard");
    let key = b.key("discard.bin");
    let bytes = data(12, MIB);
    put(&direct(&b), &b, &key, &bytes);
    let mut r = Reader::open(&b.bucket, &key, &direct(&b), ReadOptions { policy: Some(ReadPolicy::Random), ..Default::default() }).unwrap();
    let mut buf = vec![0u8; 100];
    assert_eq!(r.read(0, &mut buf).unwrap(), 100);
    assert_eq!(r.read_at(0, &mut buf).unwrap(), 100);
    assert_eq!(r.read(50, &mut buf).unwrap(), 100);
    assert_eq!(&buf[..], &bytes[50..150]);
    r.unbuffer();
    let s = r.statistics();
    assert_eq!(s.gets_random, 1, "one GET of the minimum size served all three: {s:?}");
    assert_eq!(s.bytes_discarded, s.bytes_fetched - 150, "bytes 0..150 were read, the rest discarded: {s:?}");
}

/// [`Reader::controls`] stops a reader's vectored reads from another thread while a stream
/// read holds the reader (the JNI layer's lock), and the stop always lands.
#[test]
fn controls_stop_vectored_reads_while_a_stream_read_holds_the_reader() {
    require_server!();
    let b = TestBucket::new("reader-controls");
    let key = b.key("controls.bin");
    let bytes = data(13, 2 * MIB);
    put(&direct(&b), &b, &key, &bytes);
    let r = Reader::open(&b.bucket, &key, &direct(&b), ReadOptions { policy: Some(ReadPolicy::Random), ..Default::default() }).unwrap();
    let controls = r.controls();
    let held = std::sync::Arc::new(std::sync::RwLock::new(r));
    let mut v = held.read().unwrap().read_ranges(&[0..1000, MIB as u64..MIB as u64 + 1000]).unwrap();
    let guard = held.write().unwrap(); // as a stream read holds it
    assert_eq!(controls.stop_vectored("closed"), 1);
    assert!(controls.statistics().vectored_operations == 1);
    let e = v.next_range_with(&|| false).expect("an error").expect_err("stopped");
    assert_eq!((e.range, e.error.kind()), (None, ErrorKind::Stopped), "{e}");
    drop(guard);
}
