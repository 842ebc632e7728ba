//! The reader's C ABI as a C program sees it: tests/c/reader.c compiled with the system C
//! compiler against the generated native/include/s3native.h, linked to the cdylib, run
//! against the local server; its statistics JSON is checked here.

mod common;

use std::process::Command;

use common::TestBucket;
use s3native::{Mode, ReadStatistics, Writer};

#[test]
fn a_c_program_reads_every_way_and_sees_a_missing_key() {
    let e = require_server!();
    let b = TestBucket::new("c-reader");
    let key = b.key("c.bin");
    let len = 3 * 1024 * 1024 + 123;
    let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    let mut w = Writer::open(&b.bucket, &key, Mode::Publish, &b.settings()).unwrap();
    w.write(&bytes).unwrap();
    w.close().unwrap();
    let out = Command::new(common::compile_c("reader"))
        .args(["reader", &e.endpoint, &b.bucket, &key, &len.to_string()])
        .env("AWS_ACCESS_KEY_ID", &e.access_key)
        .env("AWS_SECRET_ACCESS_KEY", &e.secret_key)
        .env("AWS_REGION", &e.region)
        .output()
        .unwrap();
    assert!(out.status.success(), "the C program failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines();
    let stats: ReadStatistics = serde_json::from_str(lines.next().unwrap()).expect("statistics by name");
    assert_eq!(lines.next(), Some("ok"));
    assert_eq!(stats.head_requests, 1);
    assert_eq!(stats.gets_read_ahead, 4, "3 MiB + 123 B in 1 MiB blocks: {stats:?}");
    assert_eq!(stats.bytes_read, len as u64 + 1000 + 2000 + 5000);
    assert_eq!((stats.vectored_operations, stats.vectored_ranges), (1, 3));
}
