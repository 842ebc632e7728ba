//! A length declared by the caller without an ETag (openFile's `fs.option.openfile.length`
//! without a status) on S3A's classic stream type is trusted as that stream trusts it: no HEAD; reads stop at a shorter one; inside
//! a longer one, S3's answers say where the object really ends (a short 206: the end of that
//! read; a 416 for a GET starting past it: end of file), never an error, a retry loop or a
//! read-ahead that spins. On the analytics stream type (`fs.s3a.input.stream.type`, the
//! default of hadoop-aws 3.4.3 and 3.5) it is not used: open HEADs for the real length and
//! ETag, as that stream does. Against the local S3 server behind the counting proxy.

mod common;

use common::{assert_same_bytes, data, put, read_all, FaultProxy, TestBucket};
use s3native::{ErrorKind, ReadOptions, ReadPolicy, Reader, Settings};

const MIB: usize = 1 << 20;


const BUDGET: &str = "256M";

fn direct(b: &TestBucket) -> Settings {
    b.settings().with("fs.s3a.native.memory.budget", BUDGET)
}

fn proxied(b: &TestBucket) -> Settings {
    b.proxied_settings()
        .with("fs.s3a.native.memory.budget", BUDGET)
        .with("fs.s3a.native.read.small.object.size", "1M")
        .with("fs.s3a.native.read.block.size", "1M")
        .with("fs.s3a.native.read.ahead.max.size", "4M")
        .with("fs.s3a.native.read.footer.size", "256K")
        .with("fs.s3a.input.stream.type", "classic")
}

/// `proxied` on the analytics stream type, by the 3.4.3 rule's default.
fn analytics(b: &TestBucket) -> Settings {
    proxied(b).with("fs.s3a.input.stream.type", "default").with("fs.s3a.native.input.stream.rule", "3.4.3")
}

fn declared(length: usize, policy: ReadPolicy) -> ReadOptions {
    ReadOptions { declared_length: Some(length as u64), policy: Some(policy), ..Default::default() }
}

#[test]
fn on_the_analytics_stream_type_a_declared_length_without_an_etag_heads_for_the_real_one() {
    require_server!();
    let b = TestBucket::new("declen-aal");
    let key = b.key("aal.bin");
    let bytes = data(5, 1000);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    for declared_len in [1010, 990] {
        proxy.clear_log();
        let mut r = Reader::open(&b.bucket, &key, &analytics(&b), declared(declared_len, ReadPolicy::Random)).expect("open");
        assert_eq!(wire(&proxy, &key), (0, 0, 1), "one HEAD at open, declared {declared_len}");
        assert_eq!(r.length(), 1000, "the real length, not the declared {declared_len}");
        assert!(!r.etag().is_empty(), "the HEAD's ETag is pinned");
        // Past the real end: end of file without a GET; a vectored range fails at the call.
        let mut buf = [0u8; 1];
        assert_eq!(r.read(1005, &mut buf).unwrap(), 0);
        let e = r.read_ranges(&[0..1010]).err().expect("past the real length");
        assert_eq!(e.kind(), ErrorKind::EndOfFile, "{e}");
        assert_eq!(wire(&proxy, &key), (0, 0, 1), "no GET past the real end");
        assert_same_bytes(&read_all(&mut r, 300), &bytes, "the whole object");
        let s = r.statistics();
        assert_eq!((s.head_requests, s.stream_head_requests, s.stream_opened, s.open_us), (1, 1, 1, 0), "{s:?}");
        let io = s3native::read_iostatistics(&s);
        assert_eq!(io.counters["action_http_head_request"], 1, "the stream's HEAD, as S3A's analytics stream counts it");
        assert_eq!(io.counters["stream_read_opened"], 1, "once a stream");
        assert!(io.counters["action_http_get_request"] >= 1);
    }
    // With an ETag, or a status's length (Spark's, no ETag), or on the classic type, or on the
    // 3.4.1 rule (no type key): no HEAD.
    let etag = Reader::open(&b.bucket, &key, &direct(&b), ReadOptions::default()).unwrap().etag().to_string();
    proxy.clear_log();
    let with_etag = ReadOptions { etag: Some(etag), ..declared(1010, ReadPolicy::Random) };
    let cases = [
        ("ETag", analytics(&b), with_etag),
        ("status length", analytics(&b), ReadOptions { length: Some(1000), ..Default::default() }),
        ("classic", proxied(&b), declared(1010, ReadPolicy::Random)),
        ("3.4.1 rule", analytics(&b).with("fs.s3a.native.input.stream.rule", "3.4.1").with("fs.s3a.input.stream.type", "analytics"), declared(1010, ReadPolicy::Random)),
    ];
    for (what, settings, options) in cases {
        let r = Reader::open(&b.bucket, &key, &settings, options).expect(what);
        let s = r.statistics();
        assert_eq!((s.head_requests, s.stream_head_requests), (0, 0), "{what}: {s:?}");
    }
    assert_eq!(wire(&proxy, &key).2, 0, "no HEAD on the wire");
    // A missing object fails the open, naming the key.
    let missing = b.key("missing.bin");
    let e = Reader::open(&b.bucket, &missing, &analytics(&b), declared(10, ReadPolicy::Random)).err().expect("missing");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.message().contains(&missing), "{e}");
}

/// (GETs, of which answered 416, HEADs) the proxy forwarded for `key`.
fn wire(proxy: &FaultProxy, key: &str) -> (usize, usize, usize) {
    let log = proxy.log_for(key);
    let gets: Vec<_> = log.iter().filter(|e| e.method == "GET").collect();
    let past = gets.iter().filter(|e| e.status == Some(416)).count();
    (gets.len(), past, log.iter().filter(|e| e.method == "HEAD").count())
}


#[test]
fn a_declared_shorter_length_ends_the_reads_there_without_a_head() {
    require_server!();
    let b = TestBucket::new("declen-short");
    let key = b.key("short.bin");
    let bytes = data(1, 1000);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    for policy in [ReadPolicy::Sequential, ReadPolicy::Random, ReadPolicy::Adaptive] {
        let mut r = Reader::open(&b.bucket, &key, &proxied(&b), declared(990, policy)).expect("open");
        assert_eq!(r.length(), 990);
        assert_same_bytes(&read_all(&mut r, 300), &bytes[..990], "stream reads up to the declared length");
        let mut buf = [0u8; 20];
        assert_eq!(r.read_at(985, &mut buf).unwrap(), 5, "a pread stops at the declared length");
        let s = r.statistics();
        assert_eq!((s.head_requests, s.opens, s.errors), (0, 1, 0), "{policy:?}: {s:?}");
        assert!(!r.etag().is_empty(), "the first GET's ETag is pinned");
    }
    let (_, past, heads) = wire(&proxy, &key);
    assert_eq!((past, heads), (0, 0));
}

#[test]
fn inside_a_longer_declared_length_a_short_answer_ends_the_read_and_a_get_past_the_end_is_eof() {
    require_server!();
    let b = TestBucket::new("declen-long");
    let key = b.key("long.bin");
    let bytes = data(2, 1000);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();

    // As S3A's readFully and read() past the real end: one GET for the pread (a short 206),
    // none for the pread that goes on where it ended, a GET (416) for a read further on.
    let r = Reader::open(&b.bucket, &key, &proxied(&b), declared(1010, ReadPolicy::Sequential)).expect("open");
    let mut buf = vec![0u8; 1010];
    assert_eq!(r.read_at(0, &mut buf).unwrap(), 1000, "the bytes there are");
    assert_same_bytes(&buf[..1000], &bytes, "pread");
    assert_eq!(r.read_at(1000, &mut buf).unwrap(), 0, "end of file where the short answer ended");
    assert_eq!(wire(&proxy, &key), (1, 0, 0), "one GET, no HEAD");
    let mut r = r;
    assert_eq!(r.read(1005, &mut buf[..1]).unwrap(), 0, "past the real end: end of file");
    assert_eq!(wire(&proxy, &key), (2, 1, 0), "the read past the real end asked S3 (416)");
    assert_eq!(r.length(), 1010, "the declared length stays the stream's");
    let s = r.statistics();
    assert_eq!(s.errors, 0, "a 416 is end of file, not a failure: {s:?}");
    drop(r);

    // Reads past the real end of a fresh reader: each asks S3 and each gets end of file.
    proxy.clear_log();
    let mut r = Reader::open(&b.bucket, &key, &proxied(&b), declared(1010, ReadPolicy::Random)).expect("open");
    for p in 1000..1010u64 {
        assert_eq!(r.read(p, &mut buf[..1]).unwrap(), 0, "read at {p}");
    }
    assert_eq!(wire(&proxy, &key), (10, 10, 0));
    // Stream reads from the start end with the object, in any chunk size.
    assert_same_bytes(&read_all(&mut r, 64), &bytes, "stream reads to the real end");
    drop(r);
    let mut r = Reader::open(&b.bucket, &key, &proxied(&b), declared(1010, ReadPolicy::Adaptive)).expect("open");
    assert_same_bytes(&read_all(&mut r, 333), &bytes, "adaptive stream reads to the real end");
}

#[test]
fn read_ahead_and_the_footer_against_a_far_too_long_declared_length_end_with_the_object() {
    require_server!();
    let b = TestBucket::new("declen-ahead");
    let key = b.key("ahead.parquet");
    let bytes = data(3, 3 * MIB + 5);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let huge = 64 * MIB;
    // Sequential read-ahead of 1 MiB blocks, up to 4 MiB ahead: it stops where the object ends.
    let mut r = Reader::open(&b.bucket, &key, &proxied(&b), declared(huge, ReadPolicy::Sequential)).expect("open");
    let started = std::time::Instant::now();
    assert_same_bytes(&read_all(&mut r, 256 * 1024), &bytes, "sequential");
    assert_eq!(r.read(huge as u64 - 1, &mut [0u8; 1]).unwrap(), 0);
    let s = r.statistics();
    assert!(s.gets_read_ahead <= 8, "read-ahead stopped near the real end: {s:?}");
    assert_eq!(s.errors, 0, "{s:?}");
    drop(r);
    // A columnar read's footer GET lies past the object's end (416): its reads still get the
    // object's bytes, and end of file at the footer.
    let mut r = Reader::open(&b.bucket, &key, &proxied(&b), declared(huge, ReadPolicy::Columnar)).expect("open");
    let mut buf = vec![0u8; 8];
    assert_eq!(r.read(huge as u64 - 8, &mut buf).unwrap(), 0, "the footer is past the real end");
    assert_eq!(r.read_at(100, &mut buf).unwrap(), 8);
    assert_eq!(&buf[..], &bytes[100..108]);
    assert_same_bytes(&read_all(&mut r, MIB), &bytes, "columnar");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    drop(r);
    let (_, _, heads) = wire(&proxy, &key);
    assert_eq!(heads, 0);
}

#[test]
fn vectored_ranges_past_the_real_end_fail_and_past_the_declared_length_fail_at_the_call() {
    require_server!();
    let b = TestBucket::new("declen-vec");
    let key = b.key("vec.bin");
    let bytes = data(4, 1000);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let r = Reader::open(&b.bucket, &key, &proxied(&b), declared(1010, ReadPolicy::Random)).expect("open");

    let e = r.read_ranges(&[1010..1011]).err().expect("past the declared length");
    assert_eq!(e.kind(), ErrorKind::EndOfFile, "{e}");
    assert_eq!(wire(&proxy, &key).0, 0, "no GET for a range past the declared length");

    // Starting past the real end: S3's 416, end of file naming the key.
    let e = r.read_ranges(&[1000..1010]).unwrap().next().unwrap().expect_err("416");
    assert_eq!((e.kind(), e.s3_code()), (ErrorKind::EndOfFile, Some("InvalidRange")), "{e}");
    assert!(e.message().contains(&key) && e.message().contains("416"), "{e}");

    // Running past the real end: the short answer fails the range.
    let e = r.read_ranges(&[0..1010]).unwrap().next().unwrap().expect_err("short");
    assert_eq!(e.kind(), ErrorKind::EndOfFile, "{e}");
    assert!(e.message().contains(&key) && e.message().contains("past the end"), "{e}");

    // Ranges inside the real end still read.
    let got: Vec<_> = r.read_ranges(&[0..10, 990..1000]).unwrap().map(|x| x.unwrap()).collect();
    assert_eq!(got.len(), 2);
    for (i, b2) in got {
        let want = if i == 0 { &bytes[0..10] } else { &bytes[990..1000] };
        assert_eq!(&b2[..], want);
    }
    assert_eq!(wire(&proxy, &key), (3, 1, 0));

    // A small object fetched whole (the adaptive policy): a range starting past its real end is
    // the same end of file (InvalidRange) as S3's 416, one running past it as before.
    let r = Reader::open(&b.bucket, &key, &proxied(&b), declared(1010, ReadPolicy::Adaptive)).expect("open");
    let e = r.read_ranges(&[1000..1010]).unwrap().next().unwrap().expect_err("past the real end");
    assert_eq!((e.kind(), e.s3_code()), (ErrorKind::EndOfFile, Some("InvalidRange")), "{e}");
    assert!(e.message().contains(&key) && e.message().contains("416"), "{e}");
    let e = r.read_ranges(&[990..1010]).unwrap().next().unwrap().expect_err("across the real end");
    assert_eq!((e.kind(), e.s3_code()), (ErrorKind::EndOfFile, None), "{e}");
    assert_eq!(r.statistics().gets_whole, 1);
}

#[test]
fn a_vectored_range_past_the_real_end_fails_alone_and_the_other_ranges_complete() {
    require_server!();
    let b = TestBucket::new("declen-vec-alone");
    let key = b.key("alone.bin");
    let bytes = data(5, 1000);
    put(&direct(&b), &b, &key, &bytes);
    // Coalesced into one GET (answered short), and one GET per range (holes of 1 byte: the
    // ranges past the real end each get a 416).
    for hole in ["1M", "1"] {
        let settings = proxied(&b).with("fs.s3a.native.read.vectored.hole.size", hole);
        let r = Reader::open(&b.bucket, &key, &settings, declared(5000, ReadPolicy::Random)).expect("open");
        // Range 0 starts past the real end, range 2 runs across it; 1 and 3 are inside.
        let ranges = [2000..2100, 0..10, 990..1010, 500..600];
        let mut v = r.read_ranges(&ranges).unwrap();
        let (mut ok, mut failed) = (Vec::new(), Vec::new());
        while let Some(item) = v.next_range_with(&|| false) {
            match item {
                Ok((i, got)) => {
                    assert_eq!(&got[..], &bytes[ranges[i].start as usize..ranges[i].end as usize], "hole {hole}: range {i}");
                    ok.push(i);
                }
                Err(e) => {
                    assert_eq!(e.error.kind(), ErrorKind::EndOfFile, "hole {hole}: {e}");
                    failed.push(e.range.expect("the failed range is named"));
                }
            }
        }
        ok.sort();
        failed.sort();
        assert_eq!((ok, failed), (vec![1, 3], vec![0, 2]), "hole {hole}: only the ranges past the real end fail");
    }
}

#[test]
fn a_416_records_where_the_object_ends() {
    require_server!();
    let b = TestBucket::new("declen-416");
    let key = b.key("end.bin");
    let bytes = data(6, 1000);
    put(&direct(&b), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let mut r = Reader::open(&b.bucket, &key, &proxied(&b), declared(5000, ReadPolicy::Random)).expect("open");
    let mut buf = [0u8; 10];
    assert_eq!(r.read(3000, &mut buf).unwrap(), 0, "past the real end: 416, end of file");
    assert_eq!(wire(&proxy, &key), (1, 1, 0));
    // The 416 said the object ends at or before 3000: a read going on there (as after a short
    // answer) and a pread there are the end of file without another GET.
    assert_eq!(r.read(3000, &mut buf).unwrap(), 0);
    assert_eq!(r.read_at(3000, &mut buf).unwrap(), 0);
    assert_eq!(wire(&proxy, &key), (1, 1, 0), "no GET after the 416 for the same end");
    // A read inside the real end still gets its bytes, and one further on still asks S3 (as
    // S3A does: ITestS3AOpenCost counts a GET per read past the end).
    assert_eq!(r.read_at(990, &mut buf).unwrap(), 10);
    assert_eq!(&buf, &bytes[990..]);
    assert_eq!(r.read(3001, &mut buf).unwrap(), 0);
    assert_eq!(wire(&proxy, &key), (3, 2, 0));
}
