//! Many writers on many threads under a memory budget of three parts.
//!
//! The memory budget and its peak are process-wide, so this file is its own test binary
//! with a single test: nothing else runs in this process.

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{data, within, TestBucket, PART};
use s3native::{pool, Mode, UploadResult, Writer};

const WRITERS: usize = 64;
const OBJECT: usize = 12 << 20; // 2 full parts + a 2 MiB tail
const WRITE: usize = 64 << 10;
const BUDGET: u64 = 3 * PART as u64; // fs.s3a.native.memory.budget=15M

/// Writer `i`'s content: its own window of a shared random pool (distinct per writer, so
/// bytes that reach the wrong object or the wrong place show up).
fn window(pool: &[u8], i: usize) -> &[u8] {
    let start = i * 48_611; // a prime number of bytes: no window aligns with another
    &pool[start..start + OBJECT]
}

#[test]
fn sixty_four_writers_stay_within_a_three_part_budget() {
    require_server!();
    let tb = TestBucket::new("sixty_four_writers");
    let settings = tb.settings().with("fs.s3a.native.memory.budget", "15M");
    let pool_bytes = Arc::new(data(60, OBJECT + WRITERS * 48_611));
    let keys: Vec<String> = (0..WRITERS).map(|i| tb.key(&format!("w{i:02}"))).collect();
    let overcommits_before = s3native::global_statistics().budget_overcommits;
    pool::budget().reset_peak();

    let results: Vec<UploadResult> = {
        let (bucket, keys, pool_bytes) = (tb.bucket.clone(), keys.clone(), pool_bytes.clone());
        within(Duration::from_secs(240), "64 writers", move || {
            let start = Arc::new(Barrier::new(WRITERS));
            let threads: Vec<_> = (0..WRITERS)
                .map(|i| {
                    let (bucket, key, settings) = (bucket.clone(), keys[i].clone(), settings.clone());
                    let (pool_bytes, start) = (pool_bytes.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        let mut w = Writer::open(&bucket, &key, Mode::Publish, &settings).expect("open");
                        for piece in window(&pool_bytes, i).chunks(WRITE) {
                            w.write(piece).expect("write");
                        }
                        w.close().expect("close")
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().expect("writer thread")).collect()
        })
    };

    let budget = pool::budget().snapshot();
    assert_eq!(budget.capacity, BUDGET);
    assert!(budget.peak <= budget.capacity, "the budget was exceeded: {budget:?}");
    assert_eq!(budget.used, 0, "every part buffer was given back: {budget:?}");
    let stats = s3native::global_statistics();
    assert_eq!((stats.buffer_bytes, stats.buffer_peak_bytes), (budget.used, budget.peak), "statistics report the budget");
    assert!(stats.buffer_peak_bytes >= PART as u64, "a full part buffer was held: {stats:?}");
    assert_eq!(s3native::global_statistics().budget_overcommits, overcommits_before, "no writer was admitted beyond the budget");
    let blocked: u64 = results.iter().map(|r| r.statistics.budget_blocked_us).sum();
    assert!(blocked > 0, "precondition: the writers did wait for the budget");

    for (i, (key, r)) in keys.iter().zip(&results).enumerate() {
        assert_eq!(r.length, OBJECT as u64, "{key}");
        assert_eq!(r.etags.len(), 3, "{key}");
        tb.assert_object(key, window(&pool_bytes, i));
        tb.delete(key); // keep the server's memory small
    }
}
