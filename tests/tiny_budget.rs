//! A memory budget smaller than one part never deadlocks: a writer with nothing in flight is
//! always admitted (s3-rules.md, failure kind 10).
//!
//! The budget's capacity is process-wide (the latest writer's setting), so these tests have
//! their own test binary; both use the same 1 MiB budget.

mod common;

use std::time::Duration;

use common::{data, within, TestBucket, PART};
use s3native::{Mode, Writer};

#[test]
fn one_thread_interleaving_three_writers_finishes() {
    require_server!();
    let tb = TestBucket::new("one_thread_three_writers");
    let settings = tb.settings().with("fs.s3a.native.memory.budget", "1M");
    let keys: Vec<String> = (0..3).map(|i| tb.key(&format!("w{i}"))).collect();
    let contents: Vec<Vec<u8>> = (0..3).map(|i| data(70 + i, 2 * PART + 1000 * (i as usize + 1))).collect();
    let overcommits_before = s3native::global_statistics().budget_overcommits;

    let (bucket, ks, cs) = (tb.bucket.clone(), keys.clone(), contents.clone());
    within(Duration::from_secs(60), "one thread writing to three writers", move || {
        let mut writers: Vec<Writer> =
            ks.iter().map(|k| Writer::open(&bucket, k, Mode::Publish, &settings).expect("open")).collect();
        // Round robin, 256 KiB at a time: every writer holds a part buffer while the
        // thread waits for another's.
        let chunk = 256 << 10;
        let mut at = 0;
        while cs.iter().any(|c| at < c.len()) {
            for (w, c) in writers.iter_mut().zip(&cs) {
                if at < c.len() {
                    w.write(&c[at..(at + chunk).min(c.len())]).expect("write");
                }
            }
            at += chunk;
        }
        for w in &mut writers {
            w.close().expect("close");
        }
    });

    for (key, content) in keys.iter().zip(&contents) {
        tb.assert_object(key, content);
    }
    assert!(
        s3native::global_statistics().budget_overcommits > overcommits_before,
        "the writers were admitted beyond the budget (counted as overcommits)"
    );
}

#[test]
fn one_writer_with_parts_larger_than_the_budget_finishes() {
    require_server!();
    let tb = TestBucket::new("parts_larger_than_budget");
    let settings =
        tb.settings().with("fs.s3a.native.memory.budget", "1M").with("fs.s3a.multipart.size", "8M");
    let key = tb.key("huge-parts");
    let content = data(80, 2 * (8 << 20) + (1 << 20));

    let (bucket, k, c) = (tb.bucket.clone(), key.clone(), content.clone());
    let result = within(Duration::from_secs(60), "a writer with 8 MiB parts and a 1 MiB budget", move || {
        let mut w = Writer::open(&bucket, &k, Mode::Publish, &settings).expect("open");
        for piece in c.chunks(1 << 20) {
            w.write(piece).expect("write");
        }
        w.close().expect("close")
    });
    assert_eq!(result.etags.len(), 3);
    tb.assert_object(&key, &content);
}
