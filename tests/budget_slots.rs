//! Two writers under a budget of exactly two parts keep both connections busy: a writer at
//! its maximum of parts in flight does not fill its next part while the budget is short (it
//! would hold those bytes only to wait for its own slot, while the other writer, which could
//! send at once, waits for them).
//!
//! The budget (10 MiB) and the connections (2: one per 5 MiB of budget) are process-wide, so
//! this file is its own test binary. 5 MiB parts (the tests' `fs.s3a.multipart.size`): one
//! part in flight per file (the budget's two parts less the one being filled).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{data, within, FaultProxy, TestBucket, PART};
use s3native::{config, pool, Mode, Settings, Writer};
use serde_json::json;

const BUDGET: &str = "10M";
const HOLD_MS: u64 = 400;
const PARTS: usize = 4;
const ATTEMPTS: usize = 3;

fn settings(s: Settings) -> Settings {
    s.with(config::TARGET_THROUGHPUT_KEY, "4").with("fs.s3a.native.memory.budget", BUDGET)
}

#[test]
fn two_writers_under_a_budget_of_two_parts_send_two_parts_at_a_time() {
    require_server!();
    let tb = TestBucket::new("budget_slots");
    let proxy = FaultProxy::take();
    let prefix = tb.key("two");
    proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": prefix},
                          "action": "delay", "delay_ms": HOLD_MS, "count": -1}));
    let s = settings(tb.proxied_settings());
    let v = s3native::validate(&tb.bucket, &s).expect("validate");
    assert_eq!((v.effective.connections, v.effective.parts_in_flight), (2, 1), "{:?}", v.effective);
    let content = Arc::new(data(141, PARTS * PART));

    // The fraction is a timing figure: on a loaded machine (CI runs these tests beside a
    // release build on 2 cores) a writer thread can be descheduled between parts. Each
    // attempt checks every other assertion in full; the fraction has to reach 0.8 in one of
    // up to ATTEMPTS attempts (without the rule it was about half, and under 0.8 in 2 of 3 runs).
    let mut best = 0.0f64;
    for attempt in 0..ATTEMPTS {
        best = best.max(one_run(&tb, &s, &content, &format!("{prefix}-{attempt}")));
        if best >= 0.8 {
            break;
        }
    }
    assert!(best >= 0.8, "two parts were sending at once only {:.0}% of the time at best", best * 100.0);
}

/// One run of the two writers under `keys_prefix`; returns the fraction of the sampled time
/// both had a part sending.
fn one_run(tb: &TestBucket, s: &Settings, content: &Arc<Vec<u8>>, keys_prefix: &str) -> f64 {
    // Sample the parts sending every millisecond while the two writers run.
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !done.load(Ordering::Relaxed) {
                samples.push(pool::connection_use().sending);
                std::thread::sleep(Duration::from_millis(1));
            }
            samples
        })
    };
    let overcommits_before = s3native::global_statistics().budget_overcommits;
    let keys: Vec<String> = (0..2).map(|i| format!("{keys_prefix}-{i}")).collect();
    let results = {
        let (bucket, keys, content, s) = (tb.bucket.clone(), keys.clone(), content.clone(), s.clone());
        within(Duration::from_secs(120), "two writers", move || {
            let start = Arc::new(Barrier::new(keys.len()));
            let threads: Vec<_> = keys
                .iter()
                .map(|key| {
                    let (bucket, key, content, s, start) = (bucket.clone(), key.clone(), content.clone(), s.clone(), start.clone());
                    std::thread::spawn(move || {
                        // Both hold their first chunk before either goes on: a writer that
                        // starts while the other is not yet writing may rightly take the
                        // whole budget (nobody asks for it), which would say nothing here.
                        let mut w = Writer::open(&bucket, &key, Mode::Publish, &s).expect("open");
                        let mut pieces = content.chunks(1 << 20);
                        w.write(pieces.next().expect("data")).expect("write");
                        start.wait();
                        for piece in pieces {
                            w.write(piece).expect("write");
                        }
                        w.close().expect("close")
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().expect("writer")).collect::<Vec<_>>()
        })
    };
    done.store(true, Ordering::Relaxed);
    let samples = sampler.join().expect("sampler");

    for (key, r) in keys.iter().zip(&results) {
        assert_eq!(r.etags.len(), PARTS, "{key}");
        tb.assert_object(key, &content);
    }
    assert_eq!(s3native::global_statistics().budget_overcommits, overcommits_before, "nothing overcommitted");
    // From the first part sending to the last: with the rule, both writers have a part
    // sending nearly all the time (each fills its next part in a few milliseconds once its
    // slot is free, against 400 ms per part); without it, a full part waiting for its own
    // writer's slot held the other writer's bytes, and one part sent alone about half the
    // time.
    let first = samples.iter().position(|&n| n > 0).expect("parts were sent");
    let last = samples.iter().rposition(|&n| n > 0).expect("parts were sent");
    let window = &samples[first..=last];
    let both = window.iter().filter(|&&n| n >= 2).count() as f64 / window.len() as f64;
    eprintln!("two parts sending in {:.0}% of {} samples", both * 100.0, window.len());
    assert!(window.iter().all(|&n| n <= 2), "never more than the 2 connections");
    both
}
