//! What the native reader fetches for the read patterns of engines (issue 14's over-fetch
//! under Spark), counted against the local S3 server: bytes fetched and GETs per open for a
//! Parquet reader (the tail at open, then only the column chunks it reads), a small Parquet
//! file opened for planning and once per split (never fetched whole), a record reader's
//! split of a small file, and a status length without an ETag (no HEAD, the first GET's
//! ETag pinned).

mod common;

use std::ops::Range;

use common::{assert_same_bytes, data, put, FaultProxy, TestBucket};
use s3native::{ErrorKind, ReadOptions, ReadPolicy, Reader};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
/// The default tail a columnar open fetches (`fs.s3a.native.read.footer.size`).
const TAIL: u64 = 64 * KIB;

/// The budget is process-wide: large enough that no test here waits for it.
const BUDGET: &str = "256M";


/// What a Hadoop file status without an ETag (Spark's) gives the reader: the length, and
/// parquet-java's read policy list.
fn status(len: usize) -> ReadOptions {
    ReadOptions { length: Some(len as u64), policy: ReadPolicy::parse_list("parquet, vector, random, adaptive"), ..Default::default() }
}

/// A stream read of exactly `len` bytes at `at`, checked against `bytes`.
fn read(r: &mut Reader, bytes: &[u8], at: u64, len: usize) {
    let mut buf = vec![0u8; len];
    assert_eq!(r.read(at, &mut buf).expect("read"), len);
    assert_same_bytes(&buf, &bytes[at as usize..at as usize + len], &format!("read at {at}"));
}

fn vectored(r: &Reader, bytes: &[u8], ranges: &[Range<u64>]) {
    for item in r.read_ranges(ranges).expect("read_ranges") {
        let (i, got) = item.expect("range");
        assert_same_bytes(&got, &bytes[ranges[i].start as usize..ranges[i].end as usize], &format!("range {i}"));
    }
}

/// parquet-java's footer reads: the length's four bytes one at a time, the magic, then the
/// footer of `footer` bytes before them.
fn read_footer(r: &mut Reader, bytes: &[u8], footer: u64) {
    let len = bytes.len() as u64;
    for i in 0..4 {
        read(r, bytes, len - 8 + i, 1);
    }
    read(r, bytes, len - 4, 4);
    read(r, bytes, len - 8 - footer, footer as usize);
}

#[test]
fn a_parquet_read_fetches_the_tail_at_open_then_only_what_it_reads() {
    require_server!();
    let b = TestBucket::new("plan-parquet");
    let key = b.key("lineitem.parquet");
    let bytes = data(41, 20 * MIB as usize);
    let len = bytes.len();
    put(&b.settings(), &b, &key, &bytes);
    let proxy = FaultProxy::take();
    let settings = b.proxied_settings().with("fs.s3a.native.memory.budget", BUDGET);
    let mut r = Reader::open(&b.bucket, &key, &settings, status(len)).expect("open");
    assert_eq!(r.policy(), ReadPolicy::Columnar);
    read_footer(&mut r, &bytes, 30_000);
    let s = r.statistics();
    assert_eq!((s.head_requests, s.gets_footer, s.gets_whole, s.gets_random), (0, 1, 0, 0), "the tail serves the footer: {s:?}");
    assert_eq!(s.bytes_fetched, TAIL, "{s:?}");
    // The ETag of the first answer is pinned from then on.
    assert_eq!(r.etag(), b.meta(&key).unwrap().e_tag.unwrap());
    // Column and offset indexes: small reads one after the other (thrift) from one GET of
    // the minimum size, and no read-ahead after them.
    let index = 19 * MIB;
    for (i, n) in [(0u64, 100usize), (100, 200), (300, 50)] {
        read(&mut r, &bytes, index + i, n);
    }
    // Parquet 1.15+ reads the column chunks of a row group with one vectored read.
    vectored(&r, &bytes, &[MIB..3 * MIB, 5 * MIB..5 * MIB + 512 * KIB]);
    // Parquet 1.13 (and vectored reads off) reads a run of chunks in 8 MiB pieces: each piece
    // is fetched as asked, none ahead of it.
    read(&mut r, &bytes, 10 * MIB, 8 * MIB as usize);
    read(&mut r, &bytes, 18 * MIB, (MIB / 2) as usize);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let s = r.statistics();
    assert_eq!(s.gets_read_ahead, 0, "columnar reads never read ahead: {s:?}");
    assert_eq!((s.gets_random, s.gets_vectored), (3, 2), "{s:?}");
    let expected = TAIL + 64 * KIB + (2 * MIB + 512 * KIB) + (8 * MIB + MIB / 2);
    assert_eq!(s.bytes_fetched, expected, "the tail, the indexes' GET and exactly the chunks: {s:?}");
    let wire: Vec<_> = proxy.log_for(&key).into_iter().filter(|e| e.method == "GET" || e.method == "HEAD").collect();
    assert_eq!(wire.len(), 6, "no HEAD, six GETs on the wire: {wire:?}");
    assert!(wire.iter().all(|e| e.method == "GET"));
    let pinned = wire.iter().filter(|e| e.header("if-match").is_some()).count();
    assert_eq!(pinned, 5, "every GET after the tail's answer is pinned to its ETag: {wire:?}");
}

#[test]
fn a_small_parquet_file_opened_to_plan_and_once_per_split_is_never_fetched_whole() {
    require_server!();
    let b = TestBucket::new("plan-small");
    let key = b.key("part-00000.snappy.parquet");
    let bytes = data(42, 5 * MIB as usize);
    let len = bytes.len();
    put(&b.settings(), &b, &key, &bytes);
    let settings = b.settings().with("fs.s3a.native.memory.budget", BUDGET);
    let mut fetched = 0;
    let mut chunks = 0;
    // Spark opens the file to plan (the footer only), then once per split: the footer, then
    // the column chunks of its row groups (two runs in each quarter of the file).
    for open in 0..5u64 {
        let mut r = Reader::open(&b.bucket, &key, &settings, status(len)).expect("open");
        read_footer(&mut r, &bytes, 20_000);
        if open > 0 {
            let q = (open - 1) * (len as u64 / 4);
            let ranges = [q + 100 * KIB..q + 400 * KIB, q + 600 * KIB..q + 700 * KIB];
            vectored(&r, &bytes, &ranges);
            // One GET over the 200 KiB between them (under the 1 MiB hole size).
            chunks += 600 * KIB;
        }
        let s = r.statistics();
        assert_eq!((s.head_requests, s.gets_whole, s.gets_footer, s.gets_vectored), (0, 0, 1, u64::from(open > 0)), "open {open}: {s:?}");
        fetched += s.bytes_fetched;
    }
    assert_eq!(fetched, 5 * TAIL + chunks, "five tails and the chunks read, not five whole files");
    assert!(fetched < len as u64, "{fetched} bytes fetched for five opens of a {len}-byte file");
    // Read adaptively under a name that is no columnar file, the same object is fetched
    // whole by the first read (the pattern reads whole objects).
    let copy = b.key("part-00000.bin");
    put(&settings, &b, &copy, &bytes);
    let mut r = Reader::open(&b.bucket, &copy, &settings, ReadOptions { length: Some(len as u64), ..Default::default() }).unwrap();
    read(&mut r, &bytes, 0, 1000);
    let s = r.statistics();
    assert_eq!((s.gets_whole, s.bytes_fetched), (1, len as u64), "{s:?}");
}

#[test]
fn a_record_reader_split_of_a_small_file_fetches_its_split_not_the_whole_file() {
    require_server!();
    let b = TestBucket::new("plan-split");
    let key = b.key("events.csv");
    let bytes = data(43, 4 * MIB as usize);
    put(&b.settings(), &b, &key, &bytes);
    let settings = b.settings().with("fs.s3a.native.memory.budget", BUDGET);
    let opts = |split_end: Option<u64>| ReadOptions { split_end, ..Default::default() };
    // The split ends at 1 MiB; the record reader reads on a little to finish its last record.
    let mut r = Reader::open(&b.bucket, &key, &settings, opts(Some(MIB))).unwrap();
    let mut at = 0;
    while at < MIB + 1000 {
        let n = (64 * KIB).min(MIB + 1000 - at);
        read(&mut r, &bytes, at, n as usize);
        at += n;
    }
    let s = r.statistics();
    assert_eq!(s.gets_whole, 0, "{s:?}");
    assert_eq!(s.bytes_fetched, MIB + 64 * KIB, "the split by read-ahead, then one minimum GET past it: {s:?}");
    // Without a split end the same reads fetch the small file whole.
    let mut r = Reader::open(&b.bucket, &key, &settings, opts(None)).unwrap();
    read(&mut r, &bytes, 0, 64 * KIB as usize);
    assert_eq!(r.statistics().gets_whole, 1);
}

#[test]
fn opened_with_a_length_alone_a_change_after_the_first_get_fails_the_next_read() {
    require_server!();
    let b = TestBucket::new("plan-learned-etag");
    let key = b.key("changing.parquet");
    let bytes = data(44, 3 * MIB as usize);
    let len = bytes.len();
    let settings = b.settings().with("fs.s3a.native.memory.budget", BUDGET);
    put(&settings, &b, &key, &bytes);
    let mut r = Reader::open(&b.bucket, &key, &settings, status(len)).expect("open");
    read_footer(&mut r, &bytes, 1000);
    let etag = r.etag().to_string();
    assert_eq!(etag, b.meta(&key).unwrap().e_tag.unwrap(), "the tail's answer gave the ETag");
    put(&settings, &b, &key, &data(45, len));
    let e = r.read_ranges(&[0..1000]).unwrap().next().unwrap().expect_err("changed since open");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_eq!(e.s3_code(), Some("PreconditionFailed"), "{e}");
    assert!(e.message().contains(&key) && e.message().contains(&etag), "{e}");
    // A missing object opened with a length alone fails its first read, naming the key.
    let gone = b.key("gone.parquet");
    let mut r = Reader::open(&b.bucket, &gone, &settings, status(len)).expect("no HEAD at open");
    let e = r.read(len as u64 - 8, &mut [0u8; 8]).expect_err("missing");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.message().contains(&gone), "{e}");
}
