//! The default memory budget is derived from the process's memory limit and the JVM heap
//! the JVM side names (`fs.s3a.native.jvm.heap.max`), and `validate` reports it (the
//! filesystem's INFO line prints that value). Its own test binary: the first writer fixes
//! the process-wide budget. Opening a writer sends no request: no server needed.

use s3native::config::{self, budget_for_limit, cgroup_memory_limit};
use s3native::{pool, Mode, Settings, Writer};

fn settings() -> Settings {
    Settings::new()
        .with("fs.s3a.endpoint", "http://127.0.0.1:9")
        .with("fs.s3a.path.style.access", "true")
        .with("fs.s3a.access.key", "test")
        .with("fs.s3a.secret.key", "test-secret")
        .with(config::JVM_HEAP_MAX_KEY, "2g")
}

#[test]
fn the_default_budget_comes_from_the_memory_limit_and_the_heap() {
    let heap = 2u64 << 30;
    let limit = cgroup_memory_limit(std::path::Path::new("/"));
    let derived = budget_for_limit(limit, Some(heap));
    eprintln!("this process: memory limit {limit:?}, default budget {derived} B with a 2 GiB heap");
    assert_eq!(config::default_memory_budget(Some(heap)), derived);

    let v = s3native::validate("bucket-a", &settings()).expect("validate");
    assert_eq!(v.effective.memory_budget, derived, "validate reports the derived default");
    let named = s3native::validate("bucket-a", &settings().with("fs.s3a.native.memory.budget", "96M")).expect("validate");
    assert_eq!(named.effective.memory_budget, 96 << 20, "a named budget wins");

    let w = Writer::open("bucket-a", "k", Mode::Publish, &settings()).expect("open");
    assert_eq!(pool::budget().snapshot().capacity, derived, "the first writer fixes the derived default");
    drop(w);
    let v = s3native::validate("bucket-a", &settings().with("fs.s3a.native.memory.budget", "96M")).expect("validate");
    assert_eq!(v.effective.memory_budget, derived, "once fixed, validate reports what the process runs with");
}
