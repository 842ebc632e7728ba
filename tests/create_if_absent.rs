//! `Mode::CreateIfAbsent` (S3A's conditional create, Hadoop 3.5's
//! `fs.s3a.create.conditional.enabled`): `If-None-Match: *` on the single PUT and on
//! CompleteMultipartUpload, an object already at the key fails close with
//! `ErrorKind::AlreadyExists` and leaves that object alone, and a 412 to a retry of our own
//! request that S3 had already acted on is settled by HEAD (length and ETag) as success.
//!
//! moto 5.2.5 honours `If-None-Match: *` on PutObject and on CompleteMultipartUpload (412
//! `PreconditionFailed`), so the plain cases use the server's own answers. It answers a
//! repeated Complete of an upload it already completed 200, where S3 answers the retried
//! conditional Complete 412 (the object now exists): that one 412 is the fault proxy's.

mod common;

use common::{data, FaultProxy, ProxyLogEntry, TestBucket, PART};
use s3native::{ErrorKind, Mode, Settings, UploadResult, Writer};
use serde_json::json;

fn write(tb: &TestBucket, key: &str, mode: Mode, settings: &Settings, content: &[u8]) -> s3native::Result<UploadResult> {
    let mut w = Writer::open(&tb.bucket, key, mode, settings).expect("open");
    for piece in content.chunks(PART / 2) {
        w.write(piece)?;
    }
    w.close()
}

fn if_none_match(entries: &[ProxyLogEntry]) -> Vec<Option<&str>> {
    entries.iter().map(|e| e.header("If-None-Match")).collect()
}

fn put_rule(key: &str) -> serde_json::Value {
    json!({"method": "PUT", "query_lacks": "partNumber", "path_contains": key})
}

fn complete_rule(key: &str) -> serde_json::Value {
    json!({"method": "POST", "query_has": "uploadId", "path_contains": key})
}

#[track_caller]
fn assert_already_exists(e: &s3native::Error, key: &str) {
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e:?}");
    assert!(e.message().contains(key), "the message names the key: {e}");
    assert!(e.message().contains("already exists"), "{e}");
}

#[test]
fn single_put_creates_an_absent_object_with_if_none_match() {
    require_server!();
    let tb = TestBucket::new("cia_single_put_absent");
    let proxy = FaultProxy::take();
    let key = tb.key("new");
    let content = data(1, 1000);
    let r = write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings(), &content).expect("created");
    assert!(r.completed && r.upload_id.is_none(), "one PUT: {r:?}");
    tb.assert_object(&key, &content);
    assert_eq!(if_none_match(&proxy.requests(&key, "PutObject")), [Some("*")]);
}

#[test]
fn single_put_over_an_existing_object_fails_and_leaves_it() {
    require_server!();
    let tb = TestBucket::new("cia_single_put_present");
    let key = tb.key("taken");
    let old = data(2, 700);
    write(&tb, &key, Mode::Publish, &tb.settings(), &old).expect("the first object");
    let e = write(&tb, &key, Mode::CreateIfAbsent, &tb.settings(), &data(3, 900)).expect_err("an object is there");
    assert_already_exists(&e, &key);
    tb.assert_object(&key, &old);
    // 0 bytes too (S3A's testIfNoneMatchOverwriteWithEmptyFile).
    let e = write(&tb, &key, Mode::CreateIfAbsent, &tb.settings(), &[]).expect_err("an object is there");
    assert_already_exists(&e, &key);
    tb.assert_object(&key, &old);
}

#[test]
fn multipart_creates_an_absent_object_with_if_none_match_on_complete_only() {
    require_server!();
    let tb = TestBucket::new("cia_multipart_absent");
    let proxy = FaultProxy::take();
    let key = tb.key("new");
    let content = data(4, 2 * PART + 5);
    let r = write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings(), &content).expect("created");
    assert!(r.completed && r.upload_id.is_some(), "{r:?}");
    tb.assert_object(&key, &content);
    assert_eq!(if_none_match(&proxy.requests(&key, "CompleteMultipartUpload")), [Some("*")]);
    assert_eq!(if_none_match(&proxy.requests(&key, "UploadPart")), [None, None, None]);
    assert_eq!(if_none_match(&proxy.requests(&key, "CreateMultipartUpload")), [None]);
}

/// S3A's testIfNoneMatchMultipartUploadWithRaceCondition: another writer creates the object
/// while the upload is under way; close fails, the upload is aborted, the other object stays.
#[test]
fn multipart_losing_the_race_fails_aborts_and_leaves_the_winner() {
    require_server!();
    let tb = TestBucket::new("cia_multipart_race");
    let key = tb.key("raced");
    let mut w = Writer::open(&tb.bucket, &key, Mode::CreateIfAbsent, &tb.settings()).expect("open");
    w.write(&data(5, 2 * PART + 5)).expect("write");
    let winner = data(6, 300);
    write(&tb, &key, Mode::CreateIfAbsent, &tb.settings(), &winner).expect("the other writer creates it first");
    let e = w.close().expect_err("the key is taken");
    assert_already_exists(&e, &key);
    tb.assert_object(&key, &winner);
    assert!(tb.uploads(&key).is_empty(), "the upload is aborted: {:?}", tb.uploads(&key));
}

/// Publish mode still overwrites, and sends no If-None-Match anywhere.
#[test]
fn publish_mode_overwrites_without_the_header() {
    require_server!();
    let tb = TestBucket::new("cia_publish_overwrites");
    let proxy = FaultProxy::take();
    let key = tb.key("replaced");
    write(&tb, &key, Mode::Publish, &tb.proxied_settings(), &data(7, 100)).expect("first");
    let content = data(8, PART + 5);
    write(&tb, &key, Mode::Publish, &tb.proxied_settings(), &content).expect("overwrite");
    tb.assert_object(&key, &content);
    assert!(proxy.log_for(&key).iter().all(|e| e.header("If-None-Match").is_none()));
}

/// The Complete reached S3 and completed the upload, its answer was lost (503 after
/// forwarding), and S3 answers the client's retry 412 because the object (ours) now exists:
/// success, settled by one HEAD.
#[test]
fn our_own_retried_complete_answered_412_succeeds() {
    require_server!();
    let tb = TestBucket::new("cia_retried_complete_ours");
    let proxy = FaultProxy::take();
    let key = tb.key("ours");
    proxy.add_rule(json!({"match": complete_rule(&key), "action": "status_after_forward", "status": 503, "code": "SlowDown", "count": 1}));
    proxy.add_rule(json!({"match": complete_rule(&key), "action": "status", "status": 412, "code": "PreconditionFailed", "count": 1}));
    let content = data(9, 2 * PART + 5);
    let r = write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings(), &content).expect("our own object");
    assert!(r.completed);
    tb.assert_object(&key, &content);
    let q = &r.statistics.requests;
    assert_eq!((q.complete_multipart_upload, q.head_object), (2, 1), "{q:?}");
    let completes = proxy.requests(&key, "CompleteMultipartUpload");
    assert_eq!(if_none_match(&completes), [Some("*"), Some("*")], "the retry carries the header too");
    assert_eq!(completes[0].upstream_status, Some(200), "the first Complete reached the server");
}

/// The first Complete never reached S3 (503 not forwarded); the retry meets someone else's
/// object and gets the server's own 412: the HEAD shows another ETag, so it fails.
#[test]
fn retried_complete_over_another_object_fails() {
    require_server!();
    let tb = TestBucket::new("cia_retried_complete_theirs");
    let key = tb.key("theirs");
    let mut w = Writer::open(&tb.bucket, &key, Mode::CreateIfAbsent, &tb.proxied_settings()).expect("open");
    let content = data(10, 2 * PART + 5);
    w.write(&content).expect("write");
    // Same length: only the ETag tells them apart.
    let theirs = data(11, content.len());
    write(&tb, &key, Mode::Publish, &tb.settings(), &theirs).expect("someone else's object");
    let proxy = FaultProxy::take();
    proxy.add_rule(json!({"match": complete_rule(&key), "action": "status", "status": 503, "code": "SlowDown", "count": 1}));
    let e = w.close().expect_err("not ours");
    assert_already_exists(&e, &key);
    assert!(e.message().contains("is not this write's"), "{e}");
    tb.assert_object(&key, &theirs);
    let completes = proxy.requests(&key, "CompleteMultipartUpload");
    assert_eq!(completes.iter().map(|c| c.status).collect::<Vec<_>>(), [Some(503), Some(412)]);
    assert_eq!(proxy.requests(&key, "HeadObject").len(), 1);
    assert!(tb.uploads(&key).is_empty(), "the upload is aborted");
}

/// A first Complete answered 412 is not settled by HEAD, even when the object there is
/// identical: the request was not retried, so it cannot have been ours.
#[test]
fn first_complete_answered_412_fails_without_a_head() {
    require_server!();
    let tb = TestBucket::new("cia_first_complete_412");
    let proxy = FaultProxy::take();
    let key = tb.key("first");
    let content = data(12, PART + 5);
    write(&tb, &key, Mode::Publish, &tb.settings(), &content).expect("an identical object");
    let e = write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings(), &content).expect_err("an object is there");
    assert_already_exists(&e, &key);
    assert_eq!(e.s3_code(), Some("PreconditionFailed"), "{e:?}");
    assert!(proxy.requests(&key, "HeadObject").is_empty());
    assert!(tb.uploads(&key).is_empty(), "the upload is aborted");
}

/// The single PUT reached S3 and stored the object, its answer was lost; the retry gets the
/// server's own 412: success, the HEAD shows our MD5.
#[test]
fn our_own_retried_put_answered_412_succeeds() {
    require_server!();
    let tb = TestBucket::new("cia_retried_put_ours");
    let proxy = FaultProxy::take();
    let key = tb.key("ours");
    proxy.add_rule(json!({"match": put_rule(&key), "action": "status_after_forward", "status": 503, "code": "SlowDown", "count": 1}));
    let content = data(13, 4000);
    let r = write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings(), &content).expect("our own object");
    tb.assert_object(&key, &content);
    assert_eq!(r.etags.len(), 1, "the ETag comes from the HEAD: {r:?}");
    let puts = proxy.requests(&key, "PutObject");
    assert_eq!(puts.iter().map(|p| p.status).collect::<Vec<_>>(), [Some(503), Some(412)], "the server's own 412");
    assert_eq!(if_none_match(&puts), [Some("*"), Some("*")]);
    assert_eq!((r.statistics.requests.put_object, r.statistics.requests.head_object), (2, 1));
}

/// The single PUT never reached S3; the retry meets someone else's object of the same
/// length: the HEAD shows another ETag, so it fails and their object stays.
#[test]
fn retried_put_over_another_object_fails() {
    require_server!();
    let tb = TestBucket::new("cia_retried_put_theirs");
    let proxy = FaultProxy::take();
    let key = tb.key("theirs");
    let theirs = data(14, 4000);
    write(&tb, &key, Mode::Publish, &tb.settings(), &theirs).expect("someone else's object");
    proxy.add_rule(json!({"match": put_rule(&key), "action": "status", "status": 503, "code": "SlowDown", "count": 1}));
    let e = write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings(), &data(15, 4000)).expect_err("not ours");
    assert_already_exists(&e, &key);
    assert!(e.message().contains("is not this write's"), "{e}");
    tb.assert_object(&key, &theirs);
}
