//! Faults injected by the proxy (tests/support/fault_proxy.py) between the writer and the
//! server: retried failures leave a byte-identical object; failures beyond the retries
//! leave nothing behind; a lost Complete answer is settled by checking the object
//! (s3-rules.md, failure kinds 4, 5 and 6).
//!
//! Each test takes the proxy for itself ([`FaultProxy::take`]) and matches its rules on
//! its own unique key.

mod common;

use std::time::{Duration, Instant};

use common::{data, FaultProxy, ProxyLogEntry, TestBucket, PART};
use s3native::{complete, ErrorKind, Mode, UploadResult, Writer};
use serde_json::json;

/// Write `content` through the proxy to `key` and close.
fn write_through_proxy(
    tb: &TestBucket,
    key: &str,
    settings: &s3native::Settings,
    content: &[u8],
) -> s3native::Result<UploadResult> {
    let mut w = Writer::open(&tb.bucket, key, Mode::Publish, settings).expect("open");
    for piece in content.chunks(PART / 2) {
        if let Err(e) = w.write(piece) {
            // A failure surfaced early; close must report the same one.
            assert_eq!(w.close().expect_err("close after a failed write"), e);
            return Err(e);
        }
    }
    w.close()
}

/// (fault, status) of each logged request.
fn outcomes(entries: &[ProxyLogEntry]) -> Vec<(Option<&str>, Option<u16>)> {
    entries.iter().map(|e| (e.fault.as_deref(), e.status)).collect()
}

fn part(entries: Vec<ProxyLogEntry>, n: u32) -> Vec<ProxyLogEntry> {
    entries.into_iter().filter(|e| e.part_number() == Some(n)).collect()
}

#[test]
fn part_failing_once_is_retried() {
    require_server!();
    let tb = TestBucket::new("part_failing_once_is_retried");
    let proxy = FaultProxy::take();
    let key = tb.key("retried");
    proxy.add_rule(json!({"match": {"method": "PUT", "part_number": 2, "path_contains": key},
                          "action": "status", "status": 500, "count": 1}));
    let content = data(40, 2 * PART + 100);
    let r = write_through_proxy(&tb, &key, &tb.proxied_settings(), &content).expect("a retried part succeeds");
    tb.assert_object(&key, &content);
    assert_eq!(r.statistics.retries, 1, "{:?}", r.statistics);
    assert_eq!(r.statistics.requests.upload_part, 4, "3 parts + 1 retry");
    assert_eq!(r.etags.len(), 3);
    let part2 = part(proxy.requests(&key, "UploadPart"), 2);
    assert_eq!(outcomes(&part2), [(Some("status"), Some(500)), (None, Some(200))]);
}

#[test]
fn part_answer_lost_after_the_server_stored_it_is_retried() {
    require_server!();
    let tb = TestBucket::new("part_answer_lost_after_store");
    let proxy = FaultProxy::take();
    let key = tb.key("resent");
    // The server stores part 1, the client hears 503 SlowDown and sends it again.
    proxy.add_rule(json!({"match": {"method": "PUT", "part_number": 1, "path_contains": key},
                          "action": "status_after_forward", "status": 503, "code": "SlowDown", "count": 1}));
    let content = data(41, PART + 100);
    let r = write_through_proxy(&tb, &key, &tb.proxied_settings(), &content).expect("close");
    tb.assert_object(&key, &content);
    assert_eq!(r.statistics.retries, 1, "{:?}", r.statistics);
    let part1 = part(proxy.requests(&key, "UploadPart"), 1);
    assert_eq!(outcomes(&part1), [(Some("status_after_forward"), Some(503)), (None, Some(200))]);
}

#[test]
fn dropped_connection_on_a_part_is_retried() {
    require_server!();
    let tb = TestBucket::new("dropped_connection_on_a_part");
    let proxy = FaultProxy::take();
    let key = tb.key("dropped");
    // The server stores part 1; the connection closes before any answer.
    proxy.add_rule(json!({"match": {"method": "PUT", "part_number": 1, "path_contains": key},
                          "action": "drop", "count": 1}));
    let content = data(42, 2 * PART + 1);
    let r = write_through_proxy(&tb, &key, &tb.proxied_settings(), &content).expect("close");
    tb.assert_object(&key, &content);
    assert_eq!(r.statistics.retries, 1, "{:?}", r.statistics);
    let part1 = part(proxy.requests(&key, "UploadPart"), 1);
    assert_eq!(outcomes(&part1), [(Some("drop"), None), (None, Some(200))]);
}

#[test]
fn single_put_failing_once_is_retried() {
    require_server!();
    let tb = TestBucket::new("single_put_failing_once");
    let proxy = FaultProxy::take();
    let key = tb.key("small");
    proxy.add_rule(json!({"match": {"method": "PUT", "query_lacks": "partNumber", "path_contains": key},
                          "action": "status", "status": 500, "count": 1}));
    let content = data(43, 1000);
    let r = write_through_proxy(&tb, &key, &tb.proxied_settings(), &content).expect("close");
    tb.assert_object(&key, &content);
    assert_eq!(r.statistics.requests.put_object, 2, "{:?}", r.statistics.requests);
    assert_eq!(r.statistics.retries, 1);
}

#[test]
fn part_failing_beyond_the_retry_limit_fails_and_aborts() {
    require_server!();
    let tb = TestBucket::new("part_failing_beyond_retry_limit");
    let proxy = FaultProxy::take();
    let key = tb.key("failed");
    proxy.add_rule(json!({"match": {"method": "PUT", "part_number": 2, "path_contains": key},
                          "action": "status", "status": 500, "count": -1}));
    let settings = tb.proxied_settings().with("fs.s3a.retry.limit", "1");
    let e = write_through_proxy(&tb, &key, &settings, &data(44, 3 * PART + 1)).expect_err("part 2 never succeeds");
    assert_eq!(e.kind(), ErrorKind::Io, "{e:?}");
    assert_eq!(e.s3_code(), Some("InternalError"), "{e:?}");
    assert!(e.message().contains("UploadPart 2"), "{e}");

    // Once close has returned the error, the upload is aborted.
    tb.assert_nothing_left(&key);
    let part2 = part(proxy.requests(&key, "UploadPart"), 2);
    assert_eq!(part2.len(), 2, "one attempt + fs.s3a.retry.limit=1 retry: {part2:?}");
    assert!(proxy.requests(&key, "CompleteMultipartUpload").is_empty());
    assert_eq!(proxy.requests(&key, "AbortMultipartUpload").len(), 1);
}

#[test]
fn create_failing_persistently_fails_with_nothing_left() {
    require_server!();
    let tb = TestBucket::new("create_failing_persistently");
    let proxy = FaultProxy::take();
    let key = tb.key("never-created");
    proxy.add_rule(json!({"match": {"method": "POST", "query_has": "uploads", "path_contains": key},
                          "action": "status", "status": 500, "count": -1}));
    let settings = tb.proxied_settings().with("fs.s3a.retry.limit", "2");
    let e = write_through_proxy(&tb, &key, &settings, &data(45, 2 * PART + 1)).expect_err("no upload, no object");
    assert_eq!(e.kind(), ErrorKind::Io, "{e:?}");
    assert_eq!(e.s3_code(), Some("InternalError"), "{e:?}");
    assert!(e.message().contains("CreateMultipartUpload"), "{e}");
    assert_eq!(proxy.requests(&key, "CreateMultipartUpload").len(), 3, "one attempt + 2 retries");
    assert!(proxy.requests(&key, "UploadPart").is_empty());
    tb.assert_nothing_left(&key);
}

/// S3 can answer Complete with 200 and an `<Error>` body although it completed the upload;
/// the retry then finds the upload gone (`NoSuchUpload`). The writer must check the object
/// (HEAD: length and `-N` ETag) and report success. moto answers a repeated Complete of a
/// completed upload 200, so the proxy gives the retry S3's `NoSuchUpload` itself.
#[test]
fn complete_answered_with_an_error_body_is_settled_by_head() {
    require_server!();
    let tb = TestBucket::new("complete_error_body_settled_by_head");
    let proxy = FaultProxy::take();
    let key = tb.key("completed");
    let complete = json!({"method": "POST", "query_has": "uploadId", "path_contains": key});
    proxy.add_rule(json!({"match": complete, "action": "error_body_200", "code": "InternalError", "count": 1}));
    proxy.add_rule(json!({"match": complete, "action": "status", "status": 404, "code": "NoSuchUpload", "count": 1}));
    let content = data(46, 2 * PART + 5);
    let r = write_through_proxy(&tb, &key, &tb.proxied_settings(), &content).expect("the upload did complete");
    assert!(r.completed);
    tb.assert_object(&key, &content);
    let q = &r.statistics.requests;
    assert_eq!((q.complete_multipart_upload, q.head_object), (2, 1), "{q:?}");
    let completes = proxy.requests(&key, "CompleteMultipartUpload");
    assert_eq!(outcomes(&completes), [(Some("error_body_200"), Some(200)), (Some("status"), Some(404))]);
    assert_eq!(completes[0].upstream_status, Some(200), "the first Complete reached the server");
}

/// Same as above with the server's own answer to the retried Complete.
#[test]
fn complete_answered_with_an_error_body_succeeds() {
    require_server!();
    let tb = TestBucket::new("complete_error_body_succeeds");
    let proxy = FaultProxy::take();
    let key = tb.key("completed");
    proxy.add_rule(json!({"match": {"method": "POST", "query_has": "uploadId", "path_contains": key},
                          "action": "error_body_200", "code": "InternalError", "count": 1}));
    let content = data(47, PART + 5);
    let r = write_through_proxy(&tb, &key, &tb.proxied_settings(), &content).expect("close");
    assert!(r.completed);
    tb.assert_object(&key, &content);
    assert_eq!(r.statistics.requests.complete_multipart_upload, 2, "{:?}", r.statistics.requests);
    let completes = proxy.requests(&key, "CompleteMultipartUpload");
    assert_eq!(outcomes(&completes), [(Some("error_body_200"), Some(200)), (None, Some(200))], "retried once, answered by the server");
    assert!(tb.uploads(&key).is_empty());
}

/// A Complete answered `NoSuchUpload` on its first attempt is a failure: the upload is
/// gone (aborted or completed by someone else), whatever is at the key.
#[test]
fn complete_answered_no_such_upload_without_the_object_fails() {
    require_server!();
    let tb = TestBucket::new("complete_no_such_upload_fails");
    let proxy = FaultProxy::take();
    let key = tb.key("lost");
    proxy.add_rule(json!({"match": {"method": "POST", "query_has": "uploadId", "path_contains": key},
                          "action": "status", "status": 404, "code": "NoSuchUpload", "count": 1}));
    let e = write_through_proxy(&tb, &key, &tb.proxied_settings(), &data(48, PART + 5)).expect_err("no object");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    assert_eq!(e.s3_code(), Some("NoSuchUpload"), "{e:?}");
    assert!(proxy.requests(&key, "HeadObject").is_empty(), "no retry, so nothing to settle by HEAD");
    tb.assert_nothing_left(&key);
}

/// Completing an upload that was aborted fails even when an object of the same length and
/// part count is already at the key (a job commit must not report old data as its own).
#[test]
fn completing_an_aborted_upload_fails_even_with_a_lookalike_object() {
    require_server!();
    let tb = TestBucket::new("complete_aborted_lookalike");
    let key = tb.key("same-size");
    let first = data(60, PART + 7);
    let mut w = Writer::open(&tb.bucket, &key, Mode::Deferred, &tb.settings()).expect("open");
    w.write(&first).expect("write");
    complete(&w.close().expect("close"), &tb.settings()).expect("complete the first upload");

    let mut w = Writer::open(&tb.bucket, &key, Mode::Deferred, &tb.settings()).expect("open");
    w.write(&data(61, PART + 7)).expect("write");
    let second = w.close().expect("close");
    s3native::abort(&second, &tb.settings()).expect("abort the second upload");

    // S3 answers a Complete of an aborted upload 404 NoSuchUpload (moto 500s): inject S3's answer.
    let proxy = FaultProxy::take();
    proxy.add_rule(json!({"match": {"method": "POST", "query_has": "uploadId", "path_contains": key},
                          "action": "status", "status": 404, "code": "NoSuchUpload", "count": -1}));
    let e = complete(&second, &tb.proxied_settings()).expect_err("the second upload is gone");
    proxy.clear_rules();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    tb.assert_object(&key, &first);
}

/// An abort that keeps failing is retried with backoff, then reported with the bucket, key
/// and upload id so an operator can clean up.
#[test]
fn failing_abort_is_retried_and_names_the_upload() {
    require_server!();
    let tb = TestBucket::new("failing_abort_names_the_upload");
    let proxy = FaultProxy::take();
    let key = tb.key("stuck");
    proxy.add_rule(json!({"match": {"method": "DELETE", "query_has": "uploadId", "path_contains": key},
                          "action": "status", "status": 500, "count": -1}));
    let settings = tb.proxied_settings().with("fs.s3a.retry.limit", "0");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
    w.write(&data(49, PART + 1)).expect("write");
    let upload = tb.wait_for_upload(&key, Duration::from_secs(10));

    let started = Instant::now();
    let e = w.abort().expect_err("every abort attempt fails");
    for needed in [&tb.bucket, &key, &upload.upload_id] {
        assert!(e.message().contains(needed.as_str()), "the error names {needed}: {e}");
    }
    // Documented: 4 attempts, 0.2 + 1 + 3 s apart (no retries inside the client here).
    assert_eq!(proxy.requests(&key, "AbortMultipartUpload").len(), 4, "the abort was retried");
    assert!(started.elapsed() >= Duration::from_secs(4), "with backoff: {:?}", started.elapsed());
    assert_eq!(tb.uploads(&key), std::slice::from_ref(&upload), "the upload is still there");

    // With the fault gone, the operator's abort by upload id cleans up.
    proxy.clear_rules();
    let result = UploadResult {
        bucket: tb.bucket.clone(),
        key: key.clone(),
        upload_id: Some(upload.upload_id),
        etags: vec![],
        checksums: vec![],
        checksum_algorithm: None,
        length: 0,
        completed: false,
        statistics: Default::default(),
    };
    s3native::abort(&result, &tb.settings()).expect("abort by upload id");
    tb.assert_nothing_left(&key);
}
