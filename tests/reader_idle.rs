//! An idle reader (open, not closed, not reading) holding read-ahead does not stall the
//! others under the shared budget: while anyone waits for the budget it lets go of its
//! read-ahead (the reader's watching thread), so a budget of a few of the others' blocks, held
//! almost whole by the idle reader's window, still serves 11 readers and 4 writers at once.
//! Without that, the readers wait for bytes the idle reader never gives back (no deadlock
//! rule admits them: the idle reader's thread does not wait for the budget).
//!
//! The budget is process-wide (fixed by the first reader or writer): this test has its own
//! binary.

mod common;

use std::time::Duration;

use common::{assert_same_bytes, data, within, TestBucket};
use s3native::{Mode, ReadOptions, ReadPolicy, Reader, Writer};

const MIB: usize = 1 << 20;

#[test]
fn an_idle_reader_gives_its_read_ahead_back_when_others_wait() {
    require_server!();
    let tb = TestBucket::new("reader-idle");
    let base = tb.settings().with("fs.s3a.native.memory.budget", "16M").with("fs.s3a.native.read.small.object.size", "0");
    // The others read and write in 2 MiB blocks: 8 of them fill the budget.
    let others = base.clone().with("fs.s3a.native.read.block.size", "2M").with("fs.s3a.native.read.ahead.max.size", "4M");
    // The idle reader reads ahead the whole budget can give, in 256 KiB blocks.
    let idle_settings = base.clone().with("fs.s3a.native.read.block.size", "256K").with("fs.s3a.native.read.ahead.max.size", "16M");
    let idle_key = tb.key("idle");
    let idle_bytes = data(300, 20 * MIB);
    let sources: Vec<(String, Vec<u8>)> = (0..11).map(|i| (tb.key(&format!("r{i}")), data(310 + i, 4 * MIB + i as usize))).collect();
    for (k, bytes) in sources.iter().chain([(idle_key.clone(), idle_bytes.clone())].iter()) {
        let mut w = Writer::open(&tb.bucket, k, Mode::Publish, &base).unwrap();
        w.write(bytes).unwrap();
        w.close().unwrap();
    }
    let mut idle = Reader::open(&tb.bucket, &idle_key, &idle_settings, ReadOptions { policy: Some(ReadPolicy::WholeFile), ..Default::default() }).unwrap();
    let mut first = vec![0u8; 100_000];
    assert_eq!(idle.read(0, &mut first).unwrap(), first.len());
    let held = idle.statistics().buffered_bytes;
    assert!(held >= 12 * MIB as u64, "the idle reader holds most of the 16 MiB budget: {held} B");
    // Now it idles (this thread waits below) while 15 others read and write.
    let bucket = tb.bucket.clone();
    let outputs: Vec<(String, Vec<u8>)> = (0..4).map(|i| (tb.key(&format!("w{i}")), data(330 + i, 8 * MIB + i as usize))).collect();
    let (srcs, outs, s) = (sources.clone(), outputs.clone(), others.clone());
    within(Duration::from_secs(120), "11 readers and 4 writers beside an idle reader holding the budget", move || {
        std::thread::scope(|scope| {
            for (k, bytes) in &srcs {
                let (bucket, s) = (&bucket, &s);
                scope.spawn(move || {
                    let mut r = Reader::open(bucket, k, s, ReadOptions { policy: Some(ReadPolicy::Sequential), ..Default::default() }).unwrap();
                    let mut got = Vec::new();
                    let mut buf = vec![0u8; 256 * 1024];
                    loop {
                        let n = r.read(got.len() as u64, &mut buf).unwrap();
                        if n == 0 {
                            break;
                        }
                        got.extend_from_slice(&buf[..n]);
                    }
                    assert_same_bytes(&got, bytes, k);
                });
            }
            for (k, bytes) in &outs {
                let (bucket, s) = (&bucket, &s);
                scope.spawn(move || {
                    let mut w = Writer::open(bucket, k, Mode::Publish, s).unwrap();
                    for c in bytes.chunks(256 * 1024) {
                        w.write(c).unwrap();
                    }
                    w.close().unwrap();
                });
            }
        })
    });
    for (k, bytes) in &outputs {
        tb.assert_object(k, bytes);
    }
    let st = idle.statistics();
    assert!(st.read_ahead_dropped > 0, "the idle reader let go of read-ahead: {st:?}");
    assert!(st.buffered_bytes <= 256 * 1024, "it kept at most the block it reads: {st:?}");
    // And it reads on, right bytes, when it wakes up.
    let mut got = first;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = idle.read(got.len() as u64, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_same_bytes(&got, &idle_bytes, "the idle reader, read on");
    drop(idle);
    assert_eq!(s3native::global_statistics().buffer_bytes, 0, "every read buffer went back to the budget");
}
