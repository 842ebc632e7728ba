//! The object operations ([`Objects`]) against the local S3 server: exists, delete one,
//! batched deletes of 1,000 keys a request (seen on the wire through the fault proxy),
//! recursive deletes, lazy listing with relative names, a retried and a failed
//! DeleteObjects, and secrets kept out of messages.

mod common;

use common::{FaultProxy, TestBucket};
use s3native::{ErrorKind, Mode, Objects, Settings, Writer};
use serde_json::json;

fn put(settings: &Settings, bucket: &str, key: &str, bytes: &[u8]) {
    let mut w = Writer::open(bucket, key, Mode::Publish, settings).expect("open writer");
    w.write(bytes).expect("write");
    w.close().expect("close");
}

/// Put `keys` (tiny objects) from 4 threads.
fn put_all(settings: &Settings, bucket: &str, keys: &[String]) {
    std::thread::scope(|s| {
        for chunk in keys.chunks(keys.len().div_ceil(4).max(1)) {
            s.spawn(move || {
                for k in chunk {
                    put(settings, bucket, k, k.as_bytes());
                }
            });
        }
    });
}

fn no() -> bool {
    false
}

/// Every name of a listing, page by page; also returns the page sizes.
fn list_all(objects: &Objects, dir: &str) -> (Vec<String>, Vec<usize>) {
    let mut listing = objects.list(dir).expect("list");
    let (mut names, mut pages) = (Vec::new(), Vec::new());
    while let Some(page) = listing.next_page(&no).expect("page") {
        pages.push(page.len());
        names.extend(page.into_iter().map(|o| o.name));
    }
    assert!(listing.next_page(&no).expect("done").is_none(), "a finished listing stays finished");
    (names, pages)
}

#[test]
fn exists_head_and_delete_one() {
    require_server!();
    let tb = TestBucket::new("objects_exists_delete");
    let objects = Objects::open(&tb.bucket, &tb.settings()).expect("open");
    let key = tb.key("dir/file");
    assert!(!objects.exists(&key, &no).expect("HEAD of a missing key"));
    assert_eq!(objects.head(&key, &no).expect("head"), None);
    put(&tb.settings(), &tb.bucket, &key, b"12345");
    let info = objects.head(&key, &no).expect("head").expect("found");
    assert_eq!((info.name.as_str(), info.size), (key.as_str(), 5));
    assert!(info.etag.is_some());
    // A directory is no object.
    assert!(!objects.exists(&tb.key("dir"), &no).expect("HEAD of a directory"));
    objects.delete(&key, &no).expect("delete");
    assert!(!objects.exists(&key, &no).expect("exists"));
    assert_eq!(tb.get(&key), None);
    objects.delete(&key, &no).expect("deleting a missing key succeeds, as S3 answers");
    let stats = objects.statistics();
    assert_eq!(stats.requests.head_object, 5, "{stats:?}");

    let e = objects.exists("", &no).expect_err("empty key");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = objects.delete(&format!("{key}/"), &no).expect_err("trailing slash");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains(&key), "{e}");
}

#[test]
fn listing_is_lazy_paged_and_relative_to_the_directory() {
    require_server!();
    let tb = TestBucket::new("objects_listing");
    let settings = tb.settings();
    let mut keys: Vec<String> = (0..1_203).map(|i| tb.key(&format!("d/sub{}/part_{i:05}", i % 3))).collect();
    keys.push(tb.key("d2/not-under-d"));
    keys.push(tb.key("d.txt"));
    put_all(&settings, &tb.bucket, &keys);

    let proxy = FaultProxy::take();
    let objects = Objects::open(&tb.bucket, &tb.proxied_settings()).expect("open");
    let mut listing = objects.list(&tb.key("d")).expect("list");
    assert!(proxy.log_for(&tb.bucket).is_empty(), "list sends nothing until a page is asked for");
    let first = listing.next_page(&no).expect("first page").expect("a page");
    assert_eq!(first.len(), 1_000);
    assert_eq!(proxy.log_for(&tb.bucket).len(), 1, "one ListObjectsV2 page");
    drop(listing);

    let (mut names, pages) = list_all(&objects, &tb.key("d/"));
    assert_eq!(pages, [1_000, 203]);
    names.sort();
    let mut want: Vec<String> = (0..1_203).map(|i| format!("sub{}/part_{i:05}", i % 3)).collect();
    want.sort();
    assert_eq!(names, want, "names relative to d, d2/ and d.txt not included");
    let (sub, _) = list_all(&objects, &tb.key("d/sub1"));
    assert_eq!(sub.len(), 401);
    assert!(sub.iter().all(|n| n.starts_with("part_")), "{:?}", &sub[..3]);
    let (none, pages) = list_all(&objects, &tb.key("nothing-here"));
    assert!(none.is_empty() && pages.is_empty());
}

#[test]
fn delete_many_sends_one_delete_objects_per_thousand_keys() {
    require_server!();
    let tb = TestBucket::new("objects_delete_many");
    let keys: Vec<String> = (0..2_001).map(|i| tb.key(&format!("many/k{i:05}"))).collect();
    put_all(&tb.settings(), &tb.bucket, &keys);
    let keep = tb.key("keep");
    put(&tb.settings(), &tb.bucket, &keep, b"kept");

    let proxy = FaultProxy::take();
    let objects = Objects::open(&tb.bucket, &tb.proxied_settings()).expect("open");
    let mut with_missing = keys.clone();
    with_missing.push(tb.key("never-written"));
    let outcome = objects.delete_many(&with_missing, &no).expect("delete").into_result().expect("every key deleted");
    assert_eq!((outcome.deleted, outcome.requests), (2_002, 3));
    let posts: Vec<_> = proxy.log_for(&tb.bucket).into_iter().filter(|e| e.method == "POST").collect();
    assert_eq!(posts.len(), 3, "DeleteObjects of 1,000 + 1,000 + 2 keys");
    assert!(posts.iter().all(|e| e.query.contains("delete")), "{posts:?}");
    let (left, _) = list_all(&objects, &tb.key(""));
    assert_eq!(left, ["keep"]);
    assert_eq!(objects.delete_many(&[], &no).expect("nothing to delete").requests, 0);
    let e = objects.delete_many(&[keep.clone(), String::new()], &no).expect_err("an empty key");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(tb.get(&keep).is_some(), "an invalid key fails the call before any request");
}

#[test]
fn delete_recursively_removes_the_directory_and_nothing_else() {
    require_server!();
    let tb = TestBucket::new("objects_delete_recursively");
    let mut keys: Vec<String> = (0..1_050).map(|i| tb.key(&format!("stage_0/worker_{}/part_{i}", i % 7))).collect();
    keys.push(tb.key("stage_0/__success"));
    let others = [tb.key("stage_01/part_0"), tb.key("stage_1/part_0")];
    keys.extend(others.iter().cloned());
    put_all(&tb.settings(), &tb.bucket, &keys);

    let objects = Objects::open(&tb.bucket, &tb.settings()).expect("open");
    let outcome = objects.delete_recursively(&tb.key("stage_0"), &no).expect("delete").into_result().expect("all deleted");
    assert_eq!((outcome.deleted, outcome.requests), (1_051, 2), "one DeleteObjects per listed page");
    let (left, _) = list_all(&objects, &tb.key(""));
    assert_eq!(left, ["stage_01/part_0", "stage_1/part_0"]);
    let again = objects.delete_recursively(&tb.key("stage_0"), &no).expect("an empty directory");
    assert_eq!((again.deleted, again.requests), (0, 0));
}

#[test]
fn a_failed_delete_objects_is_retried_then_surfaced_naming_the_bucket_without_secrets() {
    require_server!();
    let tb = TestBucket::new("objects_delete_faults");
    let keys: Vec<String> = (0..3).map(|i| tb.key(&format!("f{i}"))).collect();
    put_all(&tb.settings(), &tb.bucket, &keys);
    let proxy = FaultProxy::take();
    let objects = Objects::open(&tb.bucket, &tb.proxied_settings()).expect("open");

    proxy.add_rule(json!({"match": {"method": "POST", "query_has": "delete", "path_contains": tb.bucket},
                          "action": "status", "status": 503, "code": "SlowDown", "count": 1}));
    let outcome = objects.delete_many(&keys[..1], &no).expect("a retried DeleteObjects");
    assert_eq!(outcome.deleted, 1);
    assert_eq!(tb.get(&keys[0]), None);

    proxy.add_rule(json!({"match": {"method": "POST", "query_has": "delete", "path_contains": tb.bucket},
                          "action": "status", "status": 500, "code": "InternalError", "count": -1}));
    let settings = tb.proxied_settings().with("fs.s3a.retry.limit", "1");
    let objects = Objects::open(&tb.bucket, &settings).expect("open");
    let e = objects.delete_many(&keys[1..], &no).expect_err("DeleteObjects never succeeds");
    assert_eq!(e.kind(), ErrorKind::Io, "{e:?}");
    assert!(e.message().contains(&tb.bucket), "{e}");
    let secret = common::env().secret_key.as_str();
    assert!(!e.message().contains(secret), "{e}");
    assert!(tb.get(&keys[1]).is_some(), "nothing was deleted");
    let e = objects.delete_recursively(&tb.key(""), &no).expect_err("the recursive delete fails the same way");
    assert_eq!(e.kind(), ErrorKind::Io, "{e:?}");
}

#[test]
fn a_missing_bucket_is_not_found_and_never_counts_as_deleted() {
    require_server!();
    let tb = TestBucket::new("objects_missing_bucket");
    let missing = format!("{}-gone", tb.bucket.chars().take(50).collect::<String>());
    let objects = Objects::open(&missing, &tb.settings()).expect("open");
    let e = objects.delete_many(&["a".to_string()], &no).expect_err("no bucket");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    let e = objects.delete("a", &no).expect_err("no bucket");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    let mut listing = objects.list("").expect("list");
    let e = listing.next_page(&no).expect_err("no bucket");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e:?}");
    assert!(e.message().contains(&missing), "{e}");
}
