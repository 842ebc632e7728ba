//! `fs.s3a.native.audit.referrer`: the `Referer` header (S3A's audit context, which the
//! JVM layer reads from S3A's auditor for each file) on every request a writer sends for
//! its file, seen on the wire through the fault proxy: CreateMultipartUpload, UploadPart,
//! CompleteMultipartUpload, a single PutObject, AbortMultipartUpload, the HEAD that settles
//! a retried create-if-absent PUT, and a magic file's upload, marker and `.pending`. moto
//! accepts the header (it is not signed, which S3 allows for standard HTTP headers).

mod common;

use common::{data, FaultProxy, ProxyLogEntry, TestBucket, PART};
use s3native::{ErrorKind, MagicFile, MagicLayout, Mode, PendingEtags, Settings, Writer};
use serde_json::json;

const KEY: &str = "fs.s3a.native.audit.referrer";

/// A referrer in S3A's format (Hadoop's "S3A Auditing" document).
fn referrer(op: &str) -> String {
    format!(
        "https://audit.example.org/hadoop/1/{op}/a1b2c3d4-0001/?op={op}&p1=table/part-0000&pr=alice&ps=e5f6&id=a1b2c3d4-0001&t0=1&fs=e5f6&ts=1764590000000"
    )
}

fn write(tb: &TestBucket, key: &str, mode: Mode, settings: &Settings, len: usize) -> s3native::Result<s3native::UploadResult> {
    let mut w = Writer::open(&tb.bucket, key, mode, settings)?;
    for piece in data(7, len).chunks(PART / 2) {
        w.write(piece)?;
    }
    w.close()
}

/// Every logged request carries `expected` as its Referer; answers the operations seen.
#[track_caller]
fn assert_all_carry(entries: &[ProxyLogEntry], expected: Option<&str>) -> Vec<&'static str> {
    assert!(!entries.is_empty(), "the proxy saw the writer's requests");
    for e in entries {
        assert_eq!(e.header("Referer"), expected, "{} {}?{}", e.method, e.path, e.query);
        assert!(e.status.is_some_and(|s| s < 300) || e.fault.is_some(), "moto accepted it: {e:?}");
    }
    let mut ops: Vec<_> = entries.iter().map(ProxyLogEntry::operation).collect();
    ops.dedup();
    ops
}

#[test]
fn a_multipart_upload_carries_the_referrer_on_every_request() {
    require_server!();
    let tb = TestBucket::new("audit_multipart");
    let proxy = FaultProxy::take();
    let key = tb.key("multi");
    let r = referrer("op_create");
    write(&tb, &key, Mode::Publish, &tb.proxied_settings().with(KEY, &r), 2 * PART + 100).expect("written");
    let ops = assert_all_carry(&proxy.log_for(&key), Some(&r));
    assert_eq!(ops, ["CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"]);
}

#[test]
fn a_single_put_and_its_settling_head_carry_the_referrer() {
    require_server!();
    let tb = TestBucket::new("audit_single");
    let proxy = FaultProxy::take();
    let key = tb.key("single");
    let r = referrer("op_create_non_recursive");
    // A retried create-if-absent PUT answered 412 is settled by a HEAD (see create_if_absent.rs).
    proxy.add_rule(json!({"match": {"method": "PUT", "query_lacks": "partNumber", "path_contains": key},
        "action": "status_after_forward", "status": 503, "code": "SlowDown", "count": 1}));
    write(&tb, &key, Mode::CreateIfAbsent, &tb.proxied_settings().with(KEY, &r), 1000).expect("written");
    let entries = proxy.log_for(&key);
    for e in &entries {
        assert_eq!(e.header("Referer"), Some(r.as_str()), "{} {}?{}", e.method, e.path, e.query);
    }
    let ops: Vec<_> = entries.iter().map(ProxyLogEntry::operation).collect();
    assert_eq!(ops, ["PutObject", "PutObject", "HeadObject"]);
}

#[test]
fn an_abort_carries_the_referrer() {
    require_server!();
    let tb = TestBucket::new("audit_abort");
    let proxy = FaultProxy::take();
    let key = tb.key("aborted");
    let r = referrer("op_create");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings().with(KEY, &r)).expect("open");
    w.write(&data(8, PART + 10)).expect("write");
    // The first part is on its way once the upload exists; the abort then has one to abort.
    tb.wait_for_upload(&key, std::time::Duration::from_secs(10));
    w.abort().expect("abort");
    tb.assert_nothing_left(&key);
    let ops = assert_all_carry(&proxy.log_for(&key), Some(&r));
    assert_eq!(ops, ["CreateMultipartUpload", "UploadPart", "AbortMultipartUpload"]);
}

#[test]
fn a_magic_file_carries_the_referrer_on_its_upload_marker_and_pending() {
    require_server!();
    let tb = TestBucket::new("audit_magic");
    let proxy = FaultProxy::take();
    let magic_key = tb.key("table/__magic_job-7f3a/job-7f3a/00/tasks/attempt_202411300000_0001_m_000003_0/__base/part-0000");
    let file = MagicFile::for_key(&magic_key, MagicLayout::MagicJob, PendingEtags::Quoted).unwrap().expect("magic");
    let r = referrer("op_create");
    let uri = format!("s3a://{}/{}", tb.bucket, file.magic_key);
    let mut w = Writer::open_magic(&tb.bucket, &file, &uri, &tb.proxied_settings().with(KEY, &r)).expect("open");
    w.write(&data(9, PART + 10)).expect("write");
    w.close().expect("close");
    // The upload goes to the final key, the marker and .pending under the magic path.
    let upload = proxy.log_for(&file.final_key);
    let upload: Vec<_> = upload.into_iter().filter(|e| !e.path.contains("__magic")).collect();
    assert_eq!(assert_all_carry(&upload, Some(&r)), ["CreateMultipartUpload", "UploadPart"]);
    let magic = proxy.log_for("__magic_job-7f3a");
    assert_eq!(magic.len(), 2, "marker and .pending: {magic:?}");
    assert_eq!(assert_all_carry(&magic, Some(&r)), ["PutObject"]);
    assert!(magic.iter().any(|e| e.path.ends_with(".pending")), "{magic:?}");
}

#[test]
fn without_the_setting_no_request_carries_a_referer() {
    require_server!();
    let tb = TestBucket::new("audit_none");
    let proxy = FaultProxy::take();
    let (multi, single) = (tb.key("multi"), tb.key("single"));
    write(&tb, &multi, Mode::Publish, &tb.proxied_settings(), PART + 100).expect("written");
    write(&tb, &single, Mode::Publish, &tb.proxied_settings().with(KEY, ""), 100).expect("written");
    assert_all_carry(&proxy.log_for(&multi), None);
    assert_all_carry(&proxy.log_for(&single), None);
}

#[test]
fn a_value_that_is_no_header_value_is_refused_naming_the_key() {
    let e = Writer::open("bucket", "k", Mode::Publish, &common::settings_for("http://127.0.0.1:1").with(KEY, "a\nb"))
        .err()
        .expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.setting(), Some(KEY), "{e}");
}
