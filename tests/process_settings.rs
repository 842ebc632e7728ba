//! Process-wide settings: the first writer of the process fixes them; a later writer naming
//! other values keeps them (with a WARN on standard error). Its own test binary, so that it
//! is the first writer of its process. Opening a writer sends no request: no server needed.

use s3native::{pool, ErrorKind, Mode, Settings, Writer};

fn settings() -> Settings {
    Settings::new()
        .with("fs.s3a.endpoint", "http://127.0.0.1:9")
        .with("fs.s3a.path.style.access", "true")
        .with("fs.s3a.access.key", "test")
        .with("fs.s3a.secret.key", "test-secret")
}

#[test]
fn the_first_writer_fixes_the_memory_budget() {
    let first = Writer::open("bucket-a", "k", Mode::Publish, &settings().with("fs.s3a.native.memory.budget", "64M")).expect("open");
    assert_eq!(pool::budget().snapshot().capacity, 64 << 20);
    let other = settings().with("fs.s3a.native.memory.budget", "32M").with("fs.s3a.native.runtime.threads", "7");
    let second = Writer::open("bucket-b", "k", Mode::Publish, &other).expect("a different value is not an error");
    assert_eq!(pool::budget().snapshot().capacity, 64 << 20, "the first writer's budget holds");
    drop((first, second));
    assert_eq!(pool::budget().snapshot().capacity, 64 << 20, "and outlives the writers");

    let per_bucket = settings().with("fs.s3a.bucket.bucket-c.native.memory.budget", "32M");
    let e = Writer::open("bucket-c", "k", Mode::Publish, &per_bucket).err().expect("a per-bucket form is refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.setting(), Some("fs.s3a.bucket.bucket-c.native.memory.budget"));
}
