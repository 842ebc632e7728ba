//! Lifecycle: close is idempotent, abort is terminal, a dropped writer aborts, an interrupted
//! call never reports success, and after a failure every call fails with the first failure
//! (s3-rules.md, failure kinds 1, 2, 5 and 6).

mod common;

use std::time::{Duration, Instant};

use common::{data, FaultProxy, TestBucket, PART};
use s3native::{ErrorKind, Mode, SharedWriter, Writer, WriterState};
use serde_json::json;

#[test]
fn close_twice_returns_the_same_result() {
    require_server!();
    let tb = TestBucket::new("close_twice_returns_the_same_result");
    for (name, len) in [("small", 100), ("multipart", PART + 100)] {
        let key = tb.key(name);
        let content = data(20, len);
        let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
        w.write(&content).expect("write");
        let first = w.close().expect("close");
        let second = w.close().expect("second close");
        assert_eq!(second, first, "{name}");
        // The second close sent nothing.
        assert_eq!(w.statistics().requests, first.statistics.requests, "{name}");
        tb.assert_object(&key, &content);
    }
}

#[test]
fn write_after_close_is_a_state_error() {
    require_server!();
    let tb = TestBucket::new("write_after_close_is_a_state_error");
    for (name, mode) in [("publish", Mode::Publish), ("deferred", Mode::Deferred)] {
        let key = tb.key(name);
        let mut w = Writer::open(&tb.bucket, &key, mode, &tb.settings()).expect("open");
        w.write(b"before").expect("write");
        let result = w.close().expect("close");
        let e = w.write(b"after").expect_err("write after close");
        assert_eq!(e.kind(), ErrorKind::State, "{name}: {e:?}");
        // The closed result is unchanged by the failed write.
        assert_eq!(w.close().expect("close again"), result, "{name}");
    }
    tb.assert_object(&tb.key("publish"), b"before");
}

#[test]
fn abort_then_close_fails_and_leaves_nothing() {
    require_server!();
    let tb = TestBucket::new("abort_then_close_fails");
    let key = tb.key("aborted");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    w.write(&data(21, 2 * PART + 1)).expect("write");
    tb.wait_for_upload(&key, Duration::from_secs(10)); // there is an upload to abort

    w.abort().expect("abort");
    tb.assert_nothing_left(&key);
    let e = w.close().expect_err("close after abort");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    let e = w.write(b"more").expect_err("write after abort");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    w.abort().expect("a second abort does nothing");
    assert_eq!(w.statistics().requests.complete_multipart_upload, 0);
    tb.assert_nothing_left(&key);
}

#[test]
fn abort_after_close_keeps_the_object() {
    require_server!();
    let tb = TestBucket::new("abort_after_close_keeps_the_object");
    let key = tb.key("kept");
    let content = data(28, PART + 1);
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    w.write(&content).expect("write");
    let handle = w.abort_handle();
    let result = w.close().expect("close");
    w.abort().expect("abort after close does nothing");
    handle.abort().expect("the abort handle after close does nothing too: one rule");
    assert_eq!(w.state(), WriterState::Closed);
    assert_eq!(w.close().expect("close after abort-after-close"), result);
    tb.assert_object(&key, &content);

    // The thread-safe writer the C ABI and JNI hold: the same rule.
    let key = tb.key("kept-shared");
    let shared = SharedWriter::new(Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open"));
    shared.write(&content).expect("write");
    let result = shared.close().expect("close");
    shared.abort().expect("abort after close does nothing");
    assert_eq!(shared.state(), WriterState::Closed);
    assert!(shared.check_open().is_err_and(|e| e.kind() == ErrorKind::State), "no writes after close");
    assert_eq!(shared.close().expect("close again"), result);
    tb.assert_object(&key, &content);
    assert_eq!(w.statistics().requests.abort_multipart_upload, 0);
    assert_eq!(shared.statistics().requests.abort_multipart_upload, 0);
}

#[test]
fn abort_before_any_request_sends_nothing() {
    require_server!();
    let tb = TestBucket::new("abort_before_any_request");
    let key = tb.key("small");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    w.write(b"never published").expect("write");
    w.abort().expect("abort");
    assert_eq!(w.close().expect_err("close after abort").kind(), ErrorKind::State);
    assert_eq!(w.statistics().requests.total(), 0, "{:?}", w.statistics().requests);
    tb.assert_nothing_left(&key);
}

#[test]
fn dropped_writer_aborts_its_upload() {
    require_server!();
    let tb = TestBucket::new("dropped_writer_aborts_its_upload");
    let key = tb.key("dropped");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    w.write(&data(22, 2 * PART + 1)).expect("write"); // two parts handed off, a third begun
    tb.wait_for_upload(&key, Duration::from_secs(10));
    drop(w);
    tb.assert_nothing_left(&key);

    // A dropped writer that never needed a request publishes nothing either.
    let small = tb.key("dropped-small");
    let mut w = Writer::open(&tb.bucket, &small, Mode::Publish, &tb.settings()).expect("open");
    w.write(b"unfinished").expect("write");
    drop(w);
    tb.assert_nothing_left(&small);
}

#[test]
fn writer_dropped_on_an_async_runtime_thread_aborts_its_upload() {
    require_server!();
    let tb = TestBucket::new("dropped_on_async_runtime");
    let key = tb.key("dropped");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    w.write(&data(29, PART + 1)).expect("write");
    tb.wait_for_upload(&key, Duration::from_secs(10));
    // Dropped inside async code (where it must not block): the abort runs in the background.
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    rt.block_on(async move { drop(w) });
    wait_until_nothing_left(&tb, &key);
}

#[test]
fn abort_handle_from_another_thread_while_parts_are_in_flight() {
    require_server!();
    let tb = TestBucket::new("abort_handle_while_in_flight");
    let proxy = FaultProxy::take();
    let key = tb.key("in-flight");
    // Every part takes 6 s on its way to the server: long enough that the upload listing
    // below answers before any part does, also on a loaded machine.
    proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                          "action": "delay", "delay_ms": 6000, "count": -1}));
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings()).expect("open");
    w.write(&data(23, 2 * PART + 1)).expect("write"); // parts 1 and 2 handed off
    // Once the upload exists, both part tasks are sending (and held up in the proxy).
    tb.wait_for_upload(&key, Duration::from_secs(10));
    assert!(proxy.requests(&key, "UploadPart").is_empty(), "precondition: no part has finished yet");

    let handle = w.abort_handle();
    std::thread::spawn(move || handle.abort()).join().expect("abort thread").expect("abort");

    let e = w.write(b"x").expect_err("write after abort");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    let e = w.close().expect_err("close after abort");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    tb.assert_nothing_left(&key);

    // The abort waited for the parts in flight (documented), then aborted once; nothing
    // completed. The proxy logs a request when its answer is sent.
    let ops: Vec<&str> = proxy.log_for(&key).iter().map(|e| e.operation()).collect();
    assert_eq!(
        ops,
        ["CreateMultipartUpload", "UploadPart", "UploadPart", "AbortMultipartUpload"],
        "requests for the key, in the order they were answered"
    );
}

/// An abort while close waits for the last parts wins: close fails and never completes.
#[test]
fn abort_during_close_means_close_never_completes() {
    require_server!();
    let tb = TestBucket::new("abort_during_close");
    let proxy = FaultProxy::take();
    let key = tb.key("raced");
    proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                          "action": "delay", "delay_ms": 2000, "count": -1}));
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings()).expect("open");
    w.write(&data(30, PART + 1)).expect("write");
    let handle = w.abort_handle();
    let aborter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500)); // close is waiting for the parts by now
        handle.abort()
    });
    let e = w.close().expect_err("close raced by an abort");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    aborter.join().expect("abort thread").expect("abort");
    tb.assert_nothing_left(&key);
    assert!(proxy.requests(&key, "CompleteMultipartUpload").is_empty());
}

/// 403 for the first attempt at part 1 of `key`.
fn fail_part_one(proxy: &FaultProxy, key: &str) {
    proxy.add_rule(json!({"match": {"method": "PUT", "part_number": 1, "path_contains": key},
                          "action": "status", "status": 403, "code": "AccessDenied", "count": 1}));
}

#[track_caller]
fn assert_part_one_denied(e: &s3native::Error) {
    assert_eq!(e.kind(), ErrorKind::AccessDenied, "{e:?}");
    assert_eq!(e.s3_code(), Some("AccessDenied"), "{e:?}");
    assert!(e.message().contains("UploadPart 1"), "the failure names the part: {e}");
}

#[test]
fn a_failed_part_fails_the_next_write() {
    require_server!();
    let tb = TestBucket::new("a_failed_part_fails_the_next_write");
    let proxy = FaultProxy::take();
    let key = tb.key("failed");
    fail_part_one(&proxy, &key);
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings()).expect("open");
    w.write(&data(24, PART + 1)).expect("write"); // part 1 handed off; it will fail
    // Small writes go on into part 2's buffer until the failure of part 1 is known.
    let deadline = Instant::now() + Duration::from_secs(20);
    let e = loop {
        match w.write(b"y") {
            Err(e) => break e,
            Ok(()) => {
                assert!(Instant::now() < deadline, "the failure of part 1 never reached write()");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    assert_part_one_denied(&e);
    let e = w.close().expect_err("close after a failure");
    assert_part_one_denied(&e);
    tb.assert_nothing_left(&key);
}

#[test]
fn after_a_failure_every_call_fails_with_the_first_failure() {
    require_server!();
    let tb = TestBucket::new("after_a_failure_every_call_fails");
    let proxy = FaultProxy::take();
    let key = tb.key("failed");
    fail_part_one(&proxy, &key);
    // One part in flight: handing off part 2 waits for part 1, and so sees its failure.
    let settings = tb.proxied_settings().with("fs.s3a.native.parts.in.flight", "1");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
    w.write(&data(25, 2 * PART)).expect("write: parts 1 (handed off) and 2 (full, kept)");
    let first = w.write(b"z").expect_err("the write that hands off part 2");
    assert_part_one_denied(&first);

    for call in ["write", "close", "close again"] {
        let e = match call {
            "write" => w.write(b"more").expect_err(call),
            _ => w.close().expect_err(call),
        };
        assert_eq!(e, first, "{call} reports the first failure");
    }
    w.abort().expect("abort after a failure");
    assert_eq!(w.close().expect_err("close after abort"), first);

    // No part after the failed one was sent, nothing was completed, nothing is left.
    let parts: Vec<_> = proxy.requests(&key, "UploadPart").iter().map(|e| (e.part_number(), e.status)).collect();
    assert_eq!(parts, [(Some(1), Some(403))]);
    assert!(proxy.requests(&key, "CompleteMultipartUpload").is_empty());
    tb.assert_nothing_left(&key);
}

/// Poll until the writer's background abort has removed the upload (for at most 20 s).
fn wait_until_nothing_left(tb: &TestBucket, key: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !tb.uploads(key).is_empty() {
        assert!(Instant::now() < deadline, "the upload of {key} was never aborted");
        std::thread::sleep(Duration::from_millis(100));
    }
    tb.assert_nothing_left(key);
}

/// An interrupted close (Java's Thread.interrupt) returns promptly, never reports success,
/// and the upload is aborted (s3-rules.md, failure kind 2).
#[test]
fn interrupted_close_never_reports_success() {
    require_server!();
    let tb = TestBucket::new("interrupted_close");
    let proxy = FaultProxy::take();
    let key = tb.key("interrupted");
    proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                          "action": "delay", "delay_ms": 3000, "count": -1}));
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.proxied_settings()).expect("open");
    w.write(&data(26, PART + 1)).expect("write");

    let started = Instant::now();
    let e = w.close_with(&|| started.elapsed() > Duration::from_millis(300)).expect_err("interrupted close");
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e:?}");
    assert!(started.elapsed() < Duration::from_millis(2500), "the close returned without waiting for the parts");
    // Only the interrupted call reports the interrupt; later calls report a failed writer.
    let again = w.close().expect_err("a close after an interrupted close");
    assert_eq!(again.kind(), ErrorKind::State, "{again:?}");
    assert!(again.message().contains("interrupted"), "{again:?}");

    wait_until_nothing_left(&tb, &key);
    assert!(proxy.requests(&key, "CompleteMultipartUpload").is_empty());
}

/// A write blocked on the writer's parts in flight can be interrupted too.
#[test]
fn interrupted_write_fails_and_aborts() {
    require_server!();
    let tb = TestBucket::new("interrupted_write");
    let proxy = FaultProxy::take();
    let key = tb.key("interrupted");
    proxy.add_rule(json!({"match": {"method": "PUT", "query_has": "partNumber", "path_contains": key},
                          "action": "delay", "delay_ms": 3000, "count": -1}));
    let settings = tb.proxied_settings().with("fs.s3a.native.parts.in.flight", "1");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &settings).expect("open");
    let content = data(27, 2 * PART + 1);
    w.write(&content[..2 * PART]).expect("write: part 1 handed off, part 2 full");

    // Handing off part 2 waits for part 1, which the proxy holds for 3 s.
    let started = Instant::now();
    let e = w
        .write_with(1, &|| started.elapsed() > Duration::from_millis(300), &mut |from, dst| {
            for (d, s) in dst.iter_mut().zip(&content[2 * PART + from..]) {
                d.write(*s);
            }
            Ok(())
        })
        .expect_err("interrupted write");
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e:?}");
    assert!(started.elapsed() < Duration::from_millis(2500), "the write returned without waiting for part 1");
    assert_eq!(w.write(b"more").expect_err("write after the interrupt").kind(), ErrorKind::State);
    let e = w.close().expect_err("a writer interrupted while writing never completes");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    assert!(e.message().contains("interrupted"), "close names the interrupt: {e:?}");

    wait_until_nothing_left(&tb, &key);
    assert_eq!(proxy.requests(&key, "UploadPart").len(), 1, "part 2 was never sent");
}

/// An abort that lands while a write is copying (before any upload exists) must not let
/// that write create an upload afterwards: the write fails and nothing is left.
#[test]
fn abort_during_a_write_leaves_no_upload() {
    require_server!();
    let tb = TestBucket::new("abort_during_write");
    let key = tb.key("raced");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &tb.settings()).expect("open");
    let handle = w.abort_handle();
    let content = data(62, 3 * PART);
    let mut aborted = false;
    let e = w
        .write_with(content.len(), &|| false, &mut |from, dst| {
            if !aborted {
                handle.abort().expect("abort before any upload exists");
                aborted = true;
            }
            for (d, s) in dst.iter_mut().zip(&content[from..]) {
                d.write(*s);
            }
            Ok(())
        })
        .expect_err("the write goes on into an aborted writer");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    let e = w.close().expect_err("close of an aborted writer");
    assert_eq!(e.kind(), ErrorKind::State, "{e:?}");
    assert_eq!(w.statistics().requests.complete_multipart_upload + w.statistics().requests.put_object, 0);
    drop(w);
    tb.assert_nothing_left(&key);
}
