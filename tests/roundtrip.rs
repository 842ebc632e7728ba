//! Round trips: what a writer uploads reads back byte for byte, with the requests S3's
//! rules call for (one PUT up to one part, else one multipart upload), in both modes.

mod common;

use common::{data, FaultProxy, ProxyLogEntry, TestBucket, PART};
use s3native::{ErrorKind, Mode, UploadResult, Writer};
use serde_json::json;

/// Write `content` to a fresh object in Publish mode, in writes of `chunk` bytes; check it
/// reads back identical and return the result.
fn publish(tb: &TestBucket, name: &str, content: &[u8], chunk: usize) -> (String, UploadResult) {
    publish_with(tb, &tb.settings(), name, content, chunk)
}

fn publish_with(
    tb: &TestBucket,
    settings: &s3native::Settings,
    name: &str,
    content: &[u8],
    chunk: usize,
) -> (String, UploadResult) {
    let key = tb.key(name);
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, settings).expect("open");
    for piece in content.chunks(chunk.max(1)) {
        w.write(piece).expect("write");
    }
    let result = w.close().expect("close");
    assert!(result.completed, "a Publish close completes the object");
    assert_eq!(result.length, content.len() as u64);
    assert_eq!(result.statistics.bytes_written, content.len() as u64);
    tb.assert_object(&key, content);
    (key, result)
}

/// Data of at most one part is one PutObject and no multipart upload.
#[track_caller]
fn assert_single_put(tb: &TestBucket, key: &str, r: &UploadResult) {
    let q = &r.statistics.requests;
    assert_eq!(q.put_object, 1, "{q:?}");
    assert_eq!((q.create_multipart_upload, q.upload_part, q.complete_multipart_upload), (0, 0, 0), "{q:?}");
    assert_eq!(r.upload_id, None);
    assert_eq!(r.etags.len(), 1, "a single PUT reports the object's ETag");
    assert_eq!(r.statistics.single_puts, 1);
    assert!(tb.uploads(key).is_empty());
}

/// Data of more than one part is one multipart upload of `parts` parts, completed once,
/// and the object's ETag is the multipart form `"...-N"`.
#[track_caller]
fn assert_multipart(tb: &TestBucket, key: &str, r: &UploadResult, parts: usize) {
    let q = &r.statistics.requests;
    assert_eq!(
        (q.create_multipart_upload, q.upload_part as usize, q.complete_multipart_upload, q.put_object),
        (1, parts, 1, 0),
        "{q:?}"
    );
    assert!(r.upload_id.is_some());
    assert_eq!(r.etags.len(), parts);
    assert_eq!(r.statistics.parts_uploaded as usize, parts);
    assert_eq!(r.statistics.retries, 0);
    let etag = tb.meta(key).expect("object exists").e_tag.expect("object has an ETag");
    assert!(etag.ends_with(&format!("-{parts}\"")), "ETag {etag} of a {parts}-part upload");
    assert!(tb.uploads(key).is_empty(), "the completed upload is no longer listed");
}

#[test]
fn empty_object_is_one_put() {
    require_server!();
    let tb = TestBucket::new("empty_object_is_one_put");
    let key = tb.key("empty");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    let result = w.close().expect("close without any write");
    assert_eq!(result.length, 0);
    tb.assert_object(&key, b"");
    assert_single_put(&tb, &key, &result);
}

#[test]
fn one_byte_is_one_put() {
    require_server!();
    let tb = TestBucket::new("one_byte_is_one_put");
    let (key, r) = publish(&tb, "one", &data(1, 1), 1);
    assert_single_put(&tb, &key, &r);
}

#[test]
fn just_under_one_part_is_one_put() {
    require_server!();
    let tb = TestBucket::new("just_under_one_part_is_one_put");
    let (key, r) = publish(&tb, "under", &data(2, PART - 1), PART);
    assert_single_put(&tb, &key, &r);
}

#[test]
fn exactly_one_part_is_one_put() {
    require_server!();
    let tb = TestBucket::new("exactly_one_part_is_one_put");
    let (key, r) = publish(&tb, "exact", &data(3, PART), PART);
    assert_single_put(&tb, &key, &r);
}

#[test]
fn one_byte_over_a_part_is_two_parts() {
    require_server!();
    let tb = TestBucket::new("one_byte_over_a_part_is_two_parts");
    let (key, r) = publish(&tb, "over", &data(4, PART + 1), PART + 1);
    assert_multipart(&tb, &key, &r, 2);
}

#[test]
fn exactly_two_parts_has_no_empty_third_part() {
    require_server!();
    let tb = TestBucket::new("exactly_two_parts");
    let (key, r) = publish(&tb, "two", &data(9, 2 * PART), PART);
    assert_multipart(&tb, &key, &r, 2);
}

#[test]
fn three_parts_and_a_tail() {
    require_server!();
    let tb = TestBucket::new("three_parts_and_a_tail");
    let content = data(5, 3 * PART + 12_345);
    let (key, r) = publish(&tb, "three", &content, content.len());
    assert_multipart(&tb, &key, &r, 4);
    tb.delete(&key);
}

/// The parts went out as full parts of exactly `PART` bytes and a shorter last one
/// (Content-Length of each logged UploadPart).
#[track_caller]
fn assert_cut_at_part_boundaries(proxy: &FaultProxy, key: &str, len: usize) {
    let parts = len.div_ceil(PART);
    let sizes: Vec<Option<usize>> = logged_parts(proxy, key, parts)
        .iter()
        .map(|e| e.header("content-length").and_then(|v| v.parse().ok()))
        .collect();
    let expected: Vec<Option<usize>> = (1..=parts as u32).map(|n| Some(PART.min(len - (n as usize - 1) * PART))).collect();
    assert_eq!(sizes, expected, "part sizes on the wire");
}

#[test]
fn many_small_writes_across_parts() {
    require_server!();
    let tb = TestBucket::new("many_small_writes_across_parts");
    let proxy = FaultProxy::take();
    // 3.5 parts in 1 KiB writes: parts are cut at exact part boundaries inside the stream.
    let content = data(6, 3 * PART + PART / 2);
    let (key, r) = publish_with(&tb, &tb.proxied_settings(), "small-writes", &content, 1024);
    assert_multipart(&tb, &key, &r, 4);
    assert_cut_at_part_boundaries(&proxy, &key, content.len());
    tb.delete(&key);
}

#[test]
fn ragged_writes_across_parts() {
    require_server!();
    let tb = TestBucket::new("ragged_writes_across_parts");
    let proxy = FaultProxy::take();
    // Writes of varying sizes (1 B .. 4 MB), some straddling part boundaries.
    let content = data(7, 2 * PART + 777);
    let key = tb.key("ragged");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings()).expect("open");
    let sizes = [1usize, 1_500_000, 3, 65_536, 1_000_000, 7, 4_000_000];
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at == content.len() {
            break;
        }
        let end = (at + size).min(content.len());
        w.write(&content[at..end]).expect("write");
        at = end;
    }
    let r = w.close().expect("close");
    tb.assert_object(&key, &content);
    assert_multipart(&tb, &key, &r, 3);
    assert_cut_at_part_boundaries(&proxy, &key, content.len());
}

#[test]
fn content_encoding_and_storage_class_reach_the_object() {
    require_server!();
    let tb = TestBucket::new("content_encoding_and_storage_class");
    let settings = tb
        .settings()
        .with("fs.s3a.object.content.encoding", "gzip")
        .with("fs.s3a.create.storage.class", "reduced_redundancy");
    for (name, len) in [("small", 10), ("multipart", PART + 10)] {
        let key = tb.key(name);
        let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
        w.write(&data(8, len)).expect("write");
        w.close().expect("close");
        let head = tb.head(&key).expect("object exists");
        assert_eq!(head.content_length, len as u64, "{name}");
        assert_eq!(head.content_encoding.as_deref(), Some("gzip"), "{name}: {head:?}");
        assert_eq!(head.storage_class.as_deref(), Some("REDUCED_REDUNDANCY"), "{name}: {head:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Deferred mode

/// Write `content` in Deferred mode; check nothing is visible yet and return the result.
fn deferred(tb: &TestBucket, key: &str, content: &[u8]) -> UploadResult {
    let mut w = Writer::open(&tb.bucket, key, Mode::Deferred, &tb.settings()).expect("open");
    w.write(content).expect("write");
    let r = w.close().expect("close");
    assert!(!r.completed, "a Deferred close does not complete");
    assert_eq!(r.length, content.len() as u64);
    let id = r.upload_id.clone().expect("a deferred upload is always multipart");
    assert!(tb.meta(key).is_none(), "a deferred object is not visible before complete()");
    let listed = tb.uploads(key);
    assert_eq!(listed.iter().map(|u| u.upload_id.as_str()).collect::<Vec<_>>(), [id.as_str()], "{listed:?}");
    let q = &r.statistics.requests;
    assert_eq!((q.create_multipart_upload, q.complete_multipart_upload, q.put_object), (1, 0, 0), "{q:?}");
    r
}

#[test]
fn deferred_then_complete_from_json() {
    require_server!();
    let tb = TestBucket::new("deferred_then_complete_from_json");
    let key = tb.key("deferred");
    let content = data(10, 2 * PART + 100);
    let r = deferred(&tb, &key, &content);
    assert_eq!(r.etags.len(), 3);

    // As another process would: from the JSON form of the result.
    let parsed = UploadResult::from_json(&r.to_json()).expect("from_json");
    assert_eq!(parsed, r);
    s3native::complete(&parsed, &tb.settings()).expect("complete");
    tb.assert_object(&key, &content);
    assert!(tb.uploads(&key).is_empty());
    let etag = tb.meta(&key).unwrap().e_tag.unwrap();
    assert!(etag.ends_with("-3\""), "{etag}");

    // Completing again finds the upload gone but the object right: still a success.
    s3native::complete(&parsed, &tb.settings()).expect("a second complete of the same result");
    tb.assert_object(&key, &content);
}

#[test]
fn deferred_small_data_is_one_part() {
    require_server!();
    let tb = TestBucket::new("deferred_small_data_is_one_part");
    let key = tb.key("small");
    let content = data(11, 1000);
    let r = deferred(&tb, &key, &content);
    assert_eq!(r.etags.len(), 1);
    assert_eq!(r.statistics.requests.upload_part, 1);
    s3native::complete(&r, &tb.settings()).expect("complete");
    tb.assert_object(&key, &content);
}

#[test]
fn deferred_empty_is_one_empty_part() {
    require_server!();
    let tb = TestBucket::new("deferred_empty_is_one_empty_part");
    let key = tb.key("empty");
    let r = deferred(&tb, &key, b"");
    assert_eq!(r.etags.len(), 1, "an empty deferred upload still has one part");
    s3native::complete(&UploadResult::from_json(&r.to_json()).unwrap(), &tb.settings()).expect("complete");
    tb.assert_object(&key, b"");
    assert_eq!(tb.meta(&key).unwrap().size, 0);
}

#[test]
fn deferred_then_abort() {
    require_server!();
    let tb = TestBucket::new("deferred_then_abort");
    let key = tb.key("aborted");
    let r = deferred(&tb, &key, &data(12, PART + 1));
    let parsed = UploadResult::from_json(&r.to_json()).unwrap();
    s3native::abort(&parsed, &tb.settings()).expect("abort");
    tb.assert_nothing_left(&key);

    // An upload already gone counts as aborted; it can no longer be completed. (S3 answers
    // NoSuchUpload; moto 5.2 answers 500 for an unknown upload id, hence Io there.)
    s3native::abort(&parsed, &tb.settings()).expect("a second abort");
    let no_retries = tb.settings().with("fs.s3a.retry.limit", "0");
    let e = s3native::complete(&parsed, &no_retries).expect_err("complete after abort");
    assert!(matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Io), "{e:?}");
    tb.assert_nothing_left(&key);
}

// ---------------------------------------------------------------------------------------
// Per-part checksums and unsigned payloads, checked on the wire (the fault proxy's log)

/// The bytes of part `n` (1-based) of `content`.
fn part_bytes(content: &[u8], n: u32) -> &[u8] {
    let start = (n as usize - 1) * PART;
    &content[start..(start + PART).min(content.len())]
}

/// S3's checksum of `bytes` for `algorithm` (`SHA256` or `CRC64NVME`): base64 of the
/// digest, the CRC big-endian.
fn s3_checksum(algorithm: &str, bytes: &[u8]) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = match algorithm {
        "SHA256" => sha2::Sha256::digest(bytes).to_vec(),
        "CRC64NVME" => crc::Crc::<u64>::new(&crc::CRC_64_NVME).checksum(bytes).to_be_bytes().to_vec(),
        _ => panic!("no checksum {algorithm}"),
    };
    base64::engine::general_purpose::STANDARD.encode(digest)
}

/// The logged UploadParts of `key`, one per part, in part order (no retries expected).
fn logged_parts(proxy: &FaultProxy, key: &str, parts: usize) -> Vec<ProxyLogEntry> {
    let mut logged = proxy.requests(key, "UploadPart");
    logged.sort_by_key(|e| e.part_number());
    let numbers: Vec<_> = logged.iter().map(|e| (e.part_number(), e.status)).collect();
    let expected: Vec<_> = (1..=parts as u32).map(|n| (Some(n), Some(200))).collect();
    assert_eq!(numbers, expected, "one successful UploadPart per part");
    logged
}

/// The writer sent each part of `content` with S3's `x-amz-checksum-<algorithm>` header
/// and the right value (and no other algorithm's), announced the algorithm when it created
/// the upload, and reports those checksums in `r`; returns them.
#[track_caller]
fn assert_checksums_sent(proxy: &FaultProxy, key: &str, content: &[u8], algorithm: &str, r: &UploadResult) -> Vec<String> {
    let parts = content.len().div_ceil(PART);
    let header = format!("x-amz-checksum-{}", algorithm.to_ascii_lowercase());
    let other = if algorithm == "SHA256" { "x-amz-checksum-crc64nvme" } else { "x-amz-checksum-sha256" };
    let mut expected = Vec::new();
    for e in logged_parts(proxy, key, parts) {
        let n = e.part_number().unwrap();
        let want = s3_checksum(algorithm, part_bytes(content, n));
        assert_eq!(e.header(&header), Some(want.as_str()), "part {n}: {header}");
        assert_eq!(e.header(other), None, "part {n}: only the {algorithm} checksum");
        expected.push(want);
    }
    let creates = proxy.requests(key, "CreateMultipartUpload");
    assert_eq!(creates.len(), 1);
    assert_eq!(creates[0].header("x-amz-checksum-algorithm"), Some(algorithm), "CreateMultipartUpload names the algorithm");
    assert_eq!(r.checksums, expected, "the result carries the parts' checksums");
    assert_eq!(r.checksum_algorithm.as_deref(), Some(algorithm));
    expected
}

/// The key's CompleteMultipartUpload carried each part's checksum in S3's
/// `<Checksum{ALGORITHM}>` element.
#[track_caller]
fn assert_complete_carries(proxy: &FaultProxy, key: &str, algorithm: &str, checksums: &[String]) {
    let completes = proxy.requests(key, "CompleteMultipartUpload");
    assert_eq!(completes.len(), 1, "one Complete");
    let body = completes[0].body.as_deref().expect("the Complete body is logged");
    for (i, sum) in checksums.iter().enumerate() {
        let element = format!("<Checksum{algorithm}>{sum}</Checksum{algorithm}>");
        assert!(body.contains(&element), "part {}: {element} in the Complete body: {body}", i + 1);
    }
}

/// With `fs.s3a.native.checksum`, every part goes out with S3's checksum header of its
/// bytes, the result carries the checksums (also through its JSON form), and Complete
/// sends them back, in Publish and in Deferred mode. S3 echoes a part's checksum in the
/// UploadPart answer; moto 5.2 does so only when the request also carries the AWS SDKs'
/// `x-amz-sdk-checksum-algorithm`, which object_store does not send, so the proxy's
/// `echo_checksum` gives the answer S3 would (it adds nothing when the server echoes).
#[test]
fn checksummed_parts_round_trip_in_both_modes() {
    require_server!();
    let tb = TestBucket::new("checksummed_parts_round_trip");
    let proxy = FaultProxy::take();
    for (mode_setting, algorithm) in [("sha256", "SHA256"), ("crc64nvme", "CRC64NVME")] {
        let settings = tb.proxied_settings().with("fs.s3a.native.checksum", mode_setting);
        let content = data(13, PART + 10);

        let key = tb.key(&format!("{mode_setting}-publish"));
        proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                              "action": "echo_checksum", "count": -1}));
        let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
        w.write(&content).expect("write");
        let r = w.close().expect("close");
        let sums = assert_checksums_sent(&proxy, &key, &content, algorithm, &r);
        assert_complete_carries(&proxy, &key, algorithm, &sums);
        tb.assert_object(&key, &content);

        let key = tb.key(&format!("{mode_setting}-deferred"));
        proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                              "action": "echo_checksum", "count": -1}));
        let mut w = Writer::open(&tb.bucket, &key, Mode::Deferred, &settings).expect("open");
        w.write(&content).expect("write");
        let closed = w.close().expect("close");
        let r = UploadResult::from_json(&closed.to_json()).expect("from_json");
        assert_eq!(r, closed, "the checksums survive the JSON form");
        let sums = assert_checksums_sent(&proxy, &key, &content, algorithm, &r);
        assert!(proxy.requests(&key, "CompleteMultipartUpload").is_empty(), "deferred: no Complete at close");
        s3native::complete(&r, &settings).expect("complete");
        assert_complete_carries(&proxy, &key, algorithm, &sums);
        tb.assert_object(&key, &content);
    }
}

/// Without `fs.s3a.native.checksum` no part carries a checksum and the result has none.
#[test]
fn no_checksum_by_default() {
    require_server!();
    let tb = TestBucket::new("no_checksum_by_default");
    let proxy = FaultProxy::take();
    let key = tb.key("plain");
    let content = data(15, PART + 10);
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings()).expect("open");
    w.write(&content).expect("write");
    let r = w.close().expect("close");
    for e in logged_parts(&proxy, &key, 2) {
        let sums: Vec<_> = e.headers.keys().filter(|h| h.starts_with("x-amz-checksum-")).collect();
        assert!(sums.is_empty(), "part {:?} carries {sums:?}", e.part_number());
    }
    assert_eq!((r.checksums.len(), r.checksum_algorithm.as_deref()), (0, None), "{r:?}");
    tb.assert_object(&key, &content);
}

/// `fs.s3a.native.payload.signing`: false sends every part as `UNSIGNED-PAYLOAD`, true
/// signs it with the hex SHA-256 of its bytes (`x-amz-content-sha256`); both round trip.
#[test]
fn unsigned_payload_round_trip() {
    require_server!();
    let tb = TestBucket::new("unsigned_payload_round_trip");
    let proxy = FaultProxy::take();
    let content = data(14, PART + 10);
    for signing in ["false", "true"] {
        let settings = tb.proxied_settings().with("fs.s3a.native.payload.signing", signing);
        let key = tb.key(&format!("signing-{signing}"));
        let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
        w.write(&content).expect("write");
        w.close().expect("close");
        tb.assert_object(&key, &content);
        for e in logged_parts(&proxy, &key, 2) {
            let n = e.part_number().unwrap();
            let want = match signing {
                "false" => "UNSIGNED-PAYLOAD".to_string(),
                _ => {
                    use sha2::Digest as _;
                    sha2::Sha256::digest(part_bytes(&content, n)).iter().map(|b| format!("{b:02x}")).collect()
                }
            };
            assert_eq!(e.header("x-amz-content-sha256"), Some(want.as_str()), "signing={signing}, part {n}");
        }
    }
}
