//! Small files share a budget of a few parts: a part buffer takes the budget in 1 MiB steps
//! as it fills, so 8 writers of 100 KiB files under a budget of 4 parts each hold 1 MiB and
//! never wait (with whole parts reserved at the first byte only 4 of them could write).
//!
//! The budget is process-wide, so this file is its own test binary with one test.

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{data, within, TestBucket, PART};
use s3native::{pool, Mode, UploadResult, Writer};

const THREADS: usize = 8;
const FILES: usize = 40;
const FILE: usize = 100 << 10;

#[test]
fn eight_threads_of_small_files_never_wait_under_a_four_part_budget() {
    require_server!();
    let tb = TestBucket::new("small_files_budget");
    let settings = tb.settings().with("fs.s3a.native.memory.budget", "20M"); // 4 parts of 5 MiB
    let content = Arc::new(data(90, FILE));
    let overcommits_before = s3native::global_statistics().budget_overcommits;

    let results: Vec<Vec<(String, UploadResult)>> = {
        let (bucket, prefix, content) = (tb.bucket.clone(), tb.key("f"), content.clone());
        within(Duration::from_secs(120), "8 threads of small files", move || {
            let start = Arc::new(Barrier::new(THREADS));
            let threads: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (bucket, prefix, settings, content, start) =
                        (bucket.clone(), prefix.clone(), settings.clone(), content.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        (0..FILES)
                            .map(|i| {
                                let key = format!("{prefix}-{t}-{i}");
                                let mut w = Writer::open(&bucket, &key, Mode::Publish, &settings).expect("open");
                                for piece in content.chunks(16 << 10) {
                                    w.write(piece).expect("write");
                                }
                                (key, w.close().expect("close"))
                            })
                            .collect()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().expect("writer thread")).collect()
        })
    };

    let budget = pool::budget().snapshot();
    assert_eq!(budget.capacity, 4 * PART as u64);
    assert!(budget.peak <= THREADS as u64 * (1 << 20), "each writer held one 1 MiB step at most: {budget:?}");
    assert_eq!(budget.used, 0, "every buffer was given back: {budget:?}");
    assert_eq!(s3native::global_statistics().budget_overcommits, overcommits_before);
    let all: Vec<&(String, UploadResult)> = results.iter().flatten().collect();
    assert_eq!(all.len(), THREADS * FILES);
    // Taking a step that is free costs microseconds; waiting for another writer's part
    // (what whole-part reservation did here) costs the time of an upload.
    let blocked_us: u64 = all.iter().map(|(_, r)| r.statistics.budget_blocked_us).sum();
    eprintln!("budget-blocked time: {blocked_us} us over {} files", all.len());
    assert!(blocked_us < 100_000, "writers were blocked by the budget for {blocked_us} us in all");
    for (key, r) in all.iter().step_by(37) {
        assert_eq!(r.length, FILE as u64, "{key}");
        assert!(r.etags.len() == 1 && r.upload_id.is_none(), "{key}: one PUT");
        tb.assert_object(key, &content);
    }
}
