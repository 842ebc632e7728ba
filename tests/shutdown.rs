//! `abort_open_uploads` (the JVM shutdown hook's call) aborts every writer still open in the
//! process. It acts process-wide, so this is its own test binary with a single test.

mod common;

use std::time::Duration;

use common::{data, TestBucket, PART};
use s3native::{ErrorKind, Mode, Writer};

#[test]
fn abort_open_uploads_aborts_every_open_writer() {
    require_server!();
    let tb = TestBucket::new("abort_open_uploads");
    let (a, b, done) = (tb.key("open-a"), tb.key("open-b"), tb.key("closed"));

    let mut closed = Writer::open(&tb.bucket, &done, Mode::Publish, &tb.settings()).expect("open");
    closed.write(b"finished").expect("write");
    closed.close().expect("close");

    let mut wa = Writer::open(&tb.bucket, &a, Mode::Publish, &tb.settings()).expect("open");
    let mut wb = Writer::open(&tb.bucket, &b, Mode::Deferred, &tb.settings()).expect("open");
    wa.write(&data(90, PART + 1)).expect("write");
    wb.write(&data(91, PART + 1)).expect("write");
    tb.wait_for_upload(&a, Duration::from_secs(10));
    tb.wait_for_upload(&b, Duration::from_secs(10));

    assert_eq!(s3native::abort_open_uploads(), 2, "the two open writers, not the closed one");
    for (key, w) in [(&a, &mut wa), (&b, &mut wb)] {
        tb.assert_nothing_left(key);
        let e = w.close().expect_err("close after abort_open_uploads");
        assert_eq!(e.kind(), ErrorKind::State, "{key}: {e:?}");
    }
    tb.assert_object(&done, b"finished");
    assert_eq!(s3native::abort_open_uploads(), 0, "nothing is open any more");
}
