//! Part buffers are recycled: the 1 MiB chunks a part gives back after its upload are kept
//! in a pool within the budget and reused by the next parts and the next writers, and
//! freed once unused for `pool::POOL_IDLE_RELEASE`.
//!
//! The budget and its pool are process-wide, so this file is its own test binary with one
//! test.

mod common;

use std::time::{Duration, Instant};

use common::{data, TestBucket, PART};
use s3native::{pool, Mode, Writer};

#[test]
fn chunks_are_reused_across_parts_and_writers_and_freed_when_idle() {
    require_server!();
    let tb = TestBucket::new("buffer_pool");
    let settings = tb.settings().with("fs.s3a.native.memory.budget", "32M");
    // Five writers in turn, each of three parts and a tail: 16 chunks each.
    let content = data(95, 3 * PART + (512 << 10));
    let chunks_per_file = 16;
    let keys: Vec<String> = (0..5).map(|i| tb.key(&format!("f{i}"))).collect();
    for key in &keys {
        let mut w = Writer::open(&tb.bucket, key, Mode::Publish, &settings).expect("open");
        for piece in content.chunks(100_000) {
            w.write(piece).expect("write");
        }
        let r = w.close().expect("close");
        assert_eq!(r.etags.len(), 4, "{key}");
    }
    for key in &keys {
        tb.assert_object(key, &content);
    }

    let s = pool::budget().snapshot();
    assert_eq!(s.chunks_allocated + s.chunks_reused, 5 * chunks_per_file, "{s:?}");
    assert!(s.chunks_allocated <= 32, "no more chunks allocated than the budget holds: {s:?}");
    assert!(s.chunks_reused >= 4 * chunks_per_file - 32 + chunks_per_file, "later files reuse the chunks: {s:?}");
    assert_eq!(s.used, 0, "{s:?}");
    assert!(s.pooled > 0 && s.pooled <= s.capacity, "the pool keeps chunks within the budget: {s:?}");
    assert!(s.peak <= s.capacity, "{s:?}");

    // Idle: the pool is emptied once its chunks have been unused for the idle time.
    let deadline = Instant::now() + pool::POOL_IDLE_RELEASE + Duration::from_secs(10);
    while pool::budget().snapshot().pooled > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let idle = pool::budget().snapshot();
    assert_eq!(idle.pooled, 0, "the pool was freed when idle: {idle:?}");
    assert_eq!(idle.chunks_released, s.chunks_released + s.pooled / (1 << 20), "{idle:?}");
}
