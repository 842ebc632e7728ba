//! Limits and settings: what the writer refuses at open or while writing, and how S3's
//! refusals (missing bucket, bad credentials) are reported.

mod common;

use common::{data, FaultProxy, TestBucket, PART};
use s3native::{ErrorKind, Mode, Writer};
use serde_json::json;

#[test]
fn part_size_outside_s3_limits_fails_at_open_naming_the_key() {
    require_server!();
    // Open sends no request, so no bucket is needed.
    let (bucket, key) = (common::bucket_name("s3n-unused", "part_size"), "never");
    // (Below 5 MiB S3A's fs.s3a.multipart.size is rounded up, as S3A does: config's unit tests.)
    let cases = [("fs.s3a.multipart.size", "6G"), ("fs.s3a.native.part.size", "4M"), ("fs.s3a.native.part.size", "5000000")];
    for (setting, value) in cases {
        let e = Writer::open(&bucket, key, Mode::Publish, &common::settings().with(setting, value))
            .err()
            .unwrap_or_else(|| panic!("{setting}={value} must fail at open"));
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{setting}={value}: {e:?}");
        assert_eq!(e.setting(), Some(setting), "{e:?}");
        assert!(e.message().contains(setting), "the message names {setting}: {e}");
    }
    // The smallest legal part size opens.
    Writer::open(&bucket, key, Mode::Publish, &common::settings().with("fs.s3a.multipart.size", "5242880"))
        .expect("5,242,880 B parts are allowed");
}

#[test]
fn too_many_parts_fails_the_write_that_needs_one_more() {
    require_server!();
    let tb = TestBucket::new("too_many_parts");
    let key = tb.key("big");
    let settings =
        tb.settings().with("fs.s3a.native.max.parts", "3").with("fs.s3a.native.part.size.fixed", "true");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
    let content = data(30, 3 * PART + 1);
    w.write(&content[..3 * PART]).expect("three full parts fit");
    let e = w.write(&content[3 * PART..]).expect_err("the byte that needs part 4");
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e:?}");
    assert!(e.message().contains("3 parts"), "{e}");

    let closed = w.close().expect_err("close after TooLarge");
    assert_eq!(closed, e, "close reports the same failure");
    // The parts are uploaded in the background: when the failure comes before any of them
    // was sent, no upload was created and there is nothing to abort; otherwise the one
    // upload is aborted.
    let q = w.statistics().requests;
    assert!(q.create_multipart_upload <= 1, "{q:?}");
    assert_eq!(q.abort_multipart_upload, q.create_multipart_upload, "an upload created is aborted: {q:?}");
    assert_eq!((q.complete_multipart_upload, q.put_object), (0, 0), "{q:?}");
    assert!(q.upload_part <= 3, "never more than the allowed parts: {q:?}");
    tb.assert_nothing_left(&key);
}

#[test]
fn unsupported_settings_fail_at_open() {
    require_server!();
    let (bucket, key) = (common::bucket_name("s3n-unused", "unsupported"), "never");
    for (setting, value) in [("fs.s3a.acl.default", "PublicRead"), ("fs.s3a.encryption.algorithm", "CSE-KMS")] {
        let e = Writer::open(&bucket, key, Mode::Publish, &common::settings().with(setting, value))
            .err()
            .unwrap_or_else(|| panic!("{setting}={value} must fail at open"));
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e:?}");
        assert_eq!(e.setting(), Some(setting), "{e:?}");
    }
}

/// A bucket name no test creates.
fn missing_bucket(test: &str) -> String {
    common::bucket_name("s3n-missing", test)
}

#[test]
fn missing_bucket_single_put_is_not_found() {
    require_server!();
    let bucket = missing_bucket("missing_bucket_single_put");
    let mut w = Writer::open(&bucket, "small", Mode::Publish, &common::settings()).expect("open sends nothing");
    w.write(b"hello").expect("write buffers");
    let e = w.close().expect_err("close");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    assert_eq!(e.s3_code(), Some("NoSuchBucket"), "{e:?}");
    assert!(e.message().contains(&bucket), "the message names the bucket: {e}");
    assert_eq!(w.statistics().requests.put_object, 1, "a 404 is not retried");
}

#[test]
fn missing_bucket_multipart_is_not_found_and_sends_no_part() {
    require_server!();
    let bucket = missing_bucket("missing_bucket_multipart");
    let mut w = Writer::open(&bucket, "big", Mode::Publish, &common::settings()).expect("open sends nothing");
    // The writes may or may not see the failure already; close surely does.
    let content = data(31, 3 * PART + 1);
    let mut write_error = None;
    for piece in content.chunks(PART / 2) {
        if let Err(e) = w.write(piece) {
            write_error = Some(e);
            break;
        }
    }
    let e = w.close().expect_err("close");
    if let Some(first) = write_error {
        assert_eq!(e, first, "close reports the write's failure");
    }
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    assert_eq!(e.s3_code(), Some("NoSuchBucket"), "{e:?}");
    // The upload was never created, so no part was sent and there is nothing to abort.
    let q = w.statistics().requests;
    assert_eq!((q.create_multipart_upload, q.upload_part, q.complete_multipart_upload), (1, 0, 0), "{q:?}");
}

/// moto accepts any credentials, so the fault proxy answers for the server here: 403
/// `InvalidAccessKeyId` to every request for the key, with a message that quotes the
/// credentials (a server's error text is not trusted to be free of them; S3's own bodies
/// quote the access key).
#[test]
fn wrong_credentials_are_access_denied_without_leaking_them() {
    require_server!();
    let tb = TestBucket::new("wrong_credentials");
    let proxy = FaultProxy::take();
    let (access_key, secret_key) = ("AKIAWRONGKEY0EXAMPLE", "wR0ngS3cretK3y/ExampleOnly+123");
    let settings = tb
        .proxied_settings()
        .with("fs.s3a.access.key", access_key)
        .with("fs.s3a.secret.key", secret_key);
    for (name, len) in [("small", 10), ("multipart", PART + 10)] {
        let key = tb.key(name);
        proxy.add_rule(json!({"match": {"path_contains": key}, "action": "status", "status": 403,
                              "code": "InvalidAccessKeyId", "count": -1,
                              "message": format!("The AWS Access Key Id {access_key} (secret {secret_key}) does not exist in our records.")}));
        let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
        let e = w.write(&data(32, len)).and_then(|()| w.close().map(|_| ())).expect_err(name);
        assert_eq!(e.kind(), ErrorKind::AccessDenied, "{name}: {e:?}");
        assert_eq!(e.s3_code(), Some("InvalidAccessKeyId"), "{name}: {e:?}");
        assert!(e.message().contains("does not exist in our records"), "{name}: the server's message is kept: {e}");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(secret_key), "{name}: the secret key leaked: {shown}");
        assert!(!shown.contains(access_key), "{name}: the access key leaked: {shown}");
        assert!(proxy.requests(&key, "UploadPart").is_empty(), "{name}: no part after a refused create");
        tb.assert_nothing_left(&key);
    }
}
