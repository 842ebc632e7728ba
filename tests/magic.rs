//! Magic committer files: the upload on the final key, never completed; the marker with
//! the data length; the `.pending` file with what job commit needs. Hadoop's own classes
//! load these files in the JVM suites; here the server's state is checked directly.

mod common;

use common::{data, FaultProxy, TestBucket, PART};
use s3native::{complete, ErrorKind, MagicFile, MagicLayout, PendingEtags, UploadResult, Writer};
use serde_json::Value;

/// A magic path as Hadoop 3.4's committer lays it out, under the test's prefix.
fn magic_file(tb: &TestBucket, name: &str) -> MagicFile {
    let key = tb.key(&format!("table/__magic_job-7f3a/job-7f3a/00/tasks/attempt_202411300000_0001_m_000003_0/__base/year=2024/{name}"));
    MagicFile::for_key(&key, MagicLayout::MagicJob, PendingEtags::Quoted).expect("a valid magic path").expect("magic")
}

fn write_magic(tb: &TestBucket, file: &MagicFile, content: &[u8], settings: &s3native::Settings) -> s3native::Result<UploadResult> {
    let uri = format!("s3a://{}/{}", tb.bucket, file.magic_key);
    let mut w = Writer::open_magic(&tb.bucket, file, &uri, settings)?;
    for piece in content.chunks(256 * 1024) {
        w.write(piece)?;
    }
    w.close()
}

fn pending(tb: &TestBucket, file: &MagicFile) -> Value {
    let bytes = tb.get(&file.pending_key()).expect("the .pending file exists");
    assert!(!bytes.ends_with(b"\n"), "compact one-line JSON, as Hadoop 3.3.5+ writes it");
    serde_json::from_slice(&bytes).expect(".pending is JSON")
}

#[test]
fn a_magic_file_is_an_uncompleted_upload_on_the_final_key_plus_marker_and_pending() {
    require_server!();
    let tb = TestBucket::new("magic_multi");
    let file = magic_file(&tb, "part-00003.parquet");
    assert_eq!(file.final_key, tb.key("table/year=2024/part-00003.parquet"));
    let content = data(31, 2 * PART + 4321);

    let r = write_magic(&tb, &file, &content, &tb.settings()).expect("close");
    assert_eq!(r.key, file.final_key);
    assert!(!r.completed);
    assert_eq!(r.etags.len(), 3);
    let q = &r.statistics.requests;
    assert_eq!(
        (q.create_multipart_upload, q.upload_part, q.complete_multipart_upload, q.put_object, q.head_object, q.other),
        (1, 3, 0, 2, 0, 0),
        "S3A's cost: one initiate, the parts, then exactly the marker and .pending PUTs: {q:?}"
    );

    // Nothing visible at the destination until job commit; the upload waits there.
    assert!(tb.meta(&file.final_key).is_none());
    let uploads = tb.uploads(&file.final_key);
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    assert_eq!(Some(uploads[0].upload_id.as_str()), r.upload_id.as_deref());

    let marker = tb.head(&file.magic_key).expect("the marker exists");
    assert_eq!(marker.content_length, 0);
    assert_eq!(marker.metadata.get("x-hadoop-s3a-magic-data-length").map(String::as_str), Some(content.len().to_string().as_str()));

    let p = pending(&tb, &file);
    assert_eq!(p["version"], 2);
    assert_eq!(p["bucket"], tb.bucket.as_str());
    assert_eq!(p["destinationKey"], file.final_key.as_str());
    assert_eq!(p["uploadId"].as_str(), r.upload_id.as_deref());
    assert_eq!(p["uri"], format!("s3a://{}/{}", tb.bucket, file.magic_key).as_str());
    assert_eq!(p["length"], content.len() as u64);
    assert_eq!(p["partCount"], 3);
    let etags: Vec<&str> = p["etags"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    assert_eq!(etags, r.etags.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(p["iostatistics"].is_object(), "never null: task commit clears it");

    // Job commit completes the upload from the .pending data: do the same.
    complete(&r, &tb.settings()).expect("complete");
    tb.assert_object(&file.final_key, &content);
    assert!(tb.uploads(&file.final_key).is_empty());
}

#[test]
fn an_empty_magic_file_still_uploads_one_part() {
    require_server!();
    let tb = TestBucket::new("magic_empty");
    let file = magic_file(&tb, "empty.csv");
    let r = write_magic(&tb, &file, &[], &tb.settings()).expect("close");
    assert_eq!(r.etags.len(), 1, "S3A uploads one empty part");
    assert_eq!(r.statistics.requests.upload_part, 1);
    assert_eq!(tb.head(&file.magic_key).unwrap().metadata["x-hadoop-s3a-magic-data-length"], "0");
    assert_eq!(pending(&tb, &file)["length"], 0);
    complete(&r, &tb.settings()).expect("complete");
    tb.assert_object(&file.final_key, &[]);
}

#[test]
fn hadoop_33_files_have_unquoted_etags() {
    require_server!();
    let tb = TestBucket::new("magic_v33");
    let key = tb.key("out/__magic/job-1/00/tasks/attempt_1/__base/a/b.csv");
    let file = MagicFile::for_key(&key, MagicLayout::Magic, PendingEtags::Unquoted).unwrap().unwrap();
    assert_eq!(file.final_key, tb.key("out/a/b.csv"));
    assert_eq!(MagicFile::for_key(&key, MagicLayout::MagicJob, PendingEtags::Quoted).unwrap(), None, "3.4+ writes it verbatim");
    let r = write_magic(&tb, &file, b"a,b\n", &tb.settings()).expect("close");
    let p = pending(&tb, &file);
    assert_eq!(p["etags"][0].as_str().unwrap(), r.etags[0].trim_matches('"'));
    assert!(!p["etags"][0].as_str().unwrap().contains('"'));
}

#[test]
fn a_failed_marker_put_aborts_the_upload_and_writes_no_pending_file() {
    require_server!();
    let tb = TestBucket::new("magic_marker_fails");
    let file = magic_file(&tb, "part-0.parquet");
    let proxy = FaultProxy::take();
    // Only the marker: a PUT to the magic key itself (parts carry partNumber, .pending a suffix).
    let marker_path = file.magic_key.rsplit('/').next().unwrap().to_string();
    proxy.add_rule(serde_json::json!({"match": {"method": "PUT", "query_lacks": "partNumber", "path_contains": marker_path},
        "action": "status", "status": 403, "code": "AccessDenied", "count": -1}));
    let e = write_magic(&tb, &file, &data(5, PART + 10), &tb.proxied_settings()).expect_err("the marker PUT fails");
    proxy.clear_rules();
    assert_eq!(e.kind(), ErrorKind::AccessDenied, "{e}");
    assert!(e.message().contains("magic marker"), "{e}");
    assert!(tb.uploads(&file.final_key).is_empty(), "the upload on the final key is aborted");
    assert!(tb.meta(&file.pending_key()).is_none());
    assert!(tb.meta(&file.final_key).is_none());
}
