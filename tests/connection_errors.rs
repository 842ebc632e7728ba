//! Connection failures are reported in S3A's words: the operation and object, what failed,
//! against which endpoint, after how many attempts over how long; no object_store wording.
//! No server needed: the endpoint is a closed port of 127.0.0.1.

use s3native::{ErrorKind, Mode, Settings, Writer};

#[test]
fn a_refused_connection_names_the_request_the_endpoint_and_the_attempts() {
    // Port 9 (discard) is closed on a test machine: every connection is refused at once.
    let endpoint = "http://127.0.0.1:9";
    let settings = Settings::new()
        .with("fs.s3a.endpoint", endpoint)
        .with("fs.s3a.path.style.access", "true")
        .with("fs.s3a.access.key", "test")
        .with("fs.s3a.secret.key", "test-secret-key")
        .with("fs.s3a.retry.limit", "2");
    let mut w = Writer::open("bucket-x", "dir/file", Mode::Publish, &settings).expect("open sends nothing");
    w.write(b"hello").expect("buffered");
    let e = w.close().expect_err("nothing listens");
    let m = e.message();
    eprintln!("{m}");
    assert_eq!(e.kind(), ErrorKind::Io, "{m}");
    assert!(m.starts_with("PutObject s3://bucket-x/dir/file"), "names the request: {m}");
    assert!(m.contains(&format!("connection refused to {endpoint}")), "names what failed and where: {m}");
    assert!(m.contains("after 3 attempts over"), "names the attempts: {m}");
    for internal in ["Generic", "max_retries", "retry_timeout", "source:", "os error"] {
        assert!(!m.contains(internal), "no object_store wording ({internal}): {m}");
    }
    assert!(!m.contains("test-secret-key"));
}
