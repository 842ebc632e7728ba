//! Readers and writers share one process-wide memory budget: under a budget of a few
//! blocks, 12 sequential readers and 4 writers at once (16 threads) all finish with the
//! right bytes (no deadlock), the bound holds (beyond it only by counted overcommits of one
//! block or chunk each), and read-ahead is what gives way (skipped or dropped).
//!
//! The budget is process-wide (fixed by the first reader or writer), so this test has its
//! own binary.

mod common;

use std::time::Duration;

use common::{assert_same_bytes, data, within, TestBucket};
use s3native::{Mode, ReadOptions, ReadPolicy, Reader, Writer};

const MIB: usize = 1 << 20;
const BUDGET: u64 = 16 << 20;

#[test]
fn readers_and_writers_share_a_small_budget_without_deadlock() {
    require_server!();
    let tb = TestBucket::new("reader-budget");
    let settings = tb
        .settings()
        .with("fs.s3a.native.memory.budget", "16M")
        .with("fs.s3a.native.read.small.object.size", "0")
        .with("fs.s3a.native.read.block.size", "1M")
        .with("fs.s3a.native.read.ahead.max.size", "4M");
    // The objects to read, written before the budget is in use.
    let sources: Vec<(String, Vec<u8>)> = (0..12).map(|i| (tb.key(&format!("r{i}")), data(100 + i, 6 * MIB + 3 * i as usize))).collect();
    for (k, bytes) in &sources {
        let mut w = Writer::open(&tb.bucket, k, Mode::Publish, &settings).unwrap();
        w.write(bytes).unwrap();
        w.close().unwrap();
    }
    let before = s3native::global_statistics();
    s3native_reset_peak();
    let bucket = tb.bucket.clone();
    let outputs: Vec<(String, Vec<u8>)> = (0..4).map(|i| (tb.key(&format!("w{i}")), data(200 + i, 12 * MIB + i as usize))).collect();
    let (srcs, outs, s) = (sources.clone(), outputs.clone(), settings.clone());
    let skipped = within(Duration::from_secs(180), "12 readers and 4 writers under a 16 MiB budget", move || {
        std::thread::scope(|scope| {
            let readers: Vec<_> = srcs
                .iter()
                .map(|(k, bytes)| {
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
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        assert_same_bytes(&got, bytes, k);
                        let st = r.statistics();
                        st.read_ahead_skipped + st.read_ahead_dropped
                    })
                })
                .collect();
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
            readers.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
        })
    });
    for (k, bytes) in &outputs {
        tb.assert_object(k, bytes);
    }
    let after = s3native::global_statistics();
    let overcommits = after.budget_overcommits - before.budget_overcommits;
    assert!(
        after.buffer_peak_bytes <= BUDGET + overcommits * MIB as u64,
        "peak {} B over the {BUDGET} B budget with {overcommits} overcommits",
        after.buffer_peak_bytes
    );
    assert!(after.buffer_peak_bytes > 8 << 20, "readers and writers used the budget together: peak {} B", after.buffer_peak_bytes);
    assert!(skipped > 0, "12 readers with 4 MiB windows cannot all read ahead in 16 MiB: read-ahead gives way (skipped or dropped)");
    assert_eq!(after.buffer_bytes, 0, "every read buffer went back to the budget");
}

/// The buffer peak from now on (the hook of feature `test-hooks`, when built with it).
fn s3native_reset_peak() {
    #[cfg(feature = "test-hooks")]
    s3native::pool::budget().reset_peak();
}
