//! The C ABI as a C program sees it: tests/c/roundtrip.c and tests/c/credentials.c compiled
//! with the system C compiler against the generated native/include/s3native.h and linked to
//! the cdylib cargo built. Each test runs one scenario of a program (see its header comment)
//! and checks the server's state (and the fault proxy's log of signing keys) around it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use common::{FaultProxy, TestBucket, PART};
use s3native::UploadResult;

/// The bytes roundtrip.c writes: byte i is i * 31 mod 251.
fn data_pattern_c(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// The compiled roundtrip.c (compiled once per test run of this binary).
fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| common::compile_c("roundtrip"))
}

/// The compiled credentials.c.
fn credentials_program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| common::compile_c("credentials"))
}

/// The roundtrip program running `args` with the test credentials, stdin and stdout piped.
fn command(args: &[&str]) -> Command {
    common::c_command(program(), args)
}

fn assert_success(out: &Output, what: &str) {
    common::assert_c_success(out, what)
}

/// The result JSON the program printed as its first line.
fn result_line(line: &str) -> UploadResult {
    UploadResult::from_json(line.trim()).unwrap_or_else(|e| panic!("the program printed no result JSON ({e}): {line:?}"))
}

#[test]
fn a_c_program_writes_through_the_header() {
    let e = require_server!();
    let tb = TestBucket::new("c_abi");
    for (name, len) in [("small", 1000usize), ("multipart", PART + 12345)] {
        let key = tb.key(name);
        let out = command(&["write", &e.endpoint, &tb.bucket, &key, &len.to_string()]).output().unwrap();
        assert_success(&out, name);
        let result = result_line(&String::from_utf8_lossy(&out.stdout));
        assert_eq!((result.bucket.as_str(), result.key.as_str()), (tb.bucket.as_str(), key.as_str()), "{name}");
        assert_eq!(result.length, len as u64, "{name}");
        assert!(result.completed, "{name}");
        assert_eq!(result.etags.len(), if len > PART { 2 } else { 1 }, "{name}");
        tb.assert_object(&key, &data_pattern_c(len));
    }
}

/// S3N_MODE_CREATE_IF_ABSENT: created once, then S3N_ERR_ALREADY_EXISTS with the first
/// object kept (single PUT and multipart).
#[test]
fn a_c_program_creates_if_absent_and_gets_already_exists_after() {
    let e = require_server!();
    let tb = TestBucket::new("c_abi_create_if_absent");
    for (name, len) in [("small", 1000usize), ("multipart", PART + 12345)] {
        let key = tb.key(name);
        let out = command(&["create-if-absent", &e.endpoint, &tb.bucket, &key, &len.to_string()]).output().unwrap();
        assert_success(&out, name);
        tb.assert_object(&key, &data_pattern_c(len));
        assert!(tb.uploads(&key).is_empty(), "{name}: the refused upload is aborted");
    }
}

/// Run `deferred ... action`: check the upload is there and the object not yet when the
/// program has printed the result, then let it go on; the parsed result it printed.
fn deferred(tb: &TestBucket, key: &str, len: usize, action: &str) -> UploadResult {
    let e = common::env();
    let mut child = command(&["deferred", &e.endpoint, &tb.bucket, key, &len.to_string(), action]).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    if line.is_empty() {
        let out = child.wait_with_output().unwrap();
        assert_success(&out, action);
        panic!("the program printed nothing");
    }
    let result = result_line(&line);
    assert_eq!((result.bucket.as_str(), result.key.as_str(), result.length), (tb.bucket.as_str(), key, len as u64));
    assert!(!result.completed, "a deferred close does not complete");
    let upload_id = result.upload_id.clone().expect("a deferred result has an upload id");
    assert_eq!(result.etags.len(), len.div_ceil(PART).max(1));
    // Closed (and freed) but not completed: the upload waits, nothing is visible.
    let listed: Vec<String> = tb.uploads(key).into_iter().map(|u| u.upload_id).collect();
    assert_eq!(listed, [upload_id], "the deferred upload is listed, once");
    assert!(tb.meta(key).is_none(), "a deferred object is not visible before s3n_complete");

    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_success(&out, action);
    result
}

#[test]
fn a_deferred_result_from_json_completes_through_the_c_abi() {
    require_server!();
    let tb = TestBucket::new("c_abi_deferred_complete");
    let key = tb.key("deferred");
    let len = 2 * PART + 777;
    deferred(&tb, &key, len, "complete");
    tb.assert_object(&key, &data_pattern_c(len));
    assert!(tb.uploads(&key).is_empty(), "the completed upload is no longer listed");
    let etag = tb.meta(&key).unwrap().e_tag.unwrap();
    assert!(etag.ends_with("-3\""), "a 3-part object: {etag}");
}

#[test]
fn a_deferred_result_from_json_aborts_through_the_c_abi() {
    require_server!();
    let tb = TestBucket::new("c_abi_deferred_abort");
    let key = tb.key("aborted");
    deferred(&tb, &key, PART + 1, "abort");
    tb.assert_nothing_left(&key);
}

/// The rule "abort after a successful close does nothing": `s3n_writer_abort` returns
/// `S3N_OK` and the object stays.
#[test]
fn writer_abort_after_a_successful_close_keeps_the_object() {
    let e = require_server!();
    let tb = TestBucket::new("c_abi_abort_after_close");
    for (name, len) in [("small", 1000usize), ("multipart", PART + 1)] {
        let key = tb.key(name);
        let out = command(&["abort-after-close", &e.endpoint, &tb.bucket, &key, &len.to_string()]).output().unwrap();
        assert_success(&out, name);
        tb.assert_object(&key, &data_pattern_c(len));
        assert!(tb.uploads(&key).is_empty(), "{name}");
    }
}

/// Calls that fail before any request: no server needed.
#[test]
fn bad_settings_and_bad_result_json_are_invalid_arguments() {
    let out = Command::new(program()).arg("offline").output().unwrap();
    assert_success(&out, "offline");
}

/// The credentials program running `args` with no keys anywhere but its callback (and the
/// instance metadata endpoint pointed at a closed loopback port, so nothing could reach
/// 169.254.169.254 even if the callback were bypassed).
fn credentials_command(args: &[&str]) -> Command {
    let mut c = Command::new(credentials_program());
    c.args(args)
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[test]
fn a_c_callback_hands_out_rotating_keys_and_later_parts_are_signed_with_the_new_ones() {
    require_server!();
    let proxy = FaultProxy::take();
    let tb = TestBucket::new("c_abi_rotating_keys");
    let key = tb.key("rotating");
    let parts = 3;
    // S3 says the token of part 2's first attempt expired: the cache is dropped and the part
    // sent again at once, signed with a key fetched anew.
    proxy.add_rule(serde_json::json!({
        "match": {"path_contains": key, "part_number": 2},
        "action": "status", "status": 400, "code": "ExpiredToken", "message": "The provided token has expired.", "count": 1
    }));
    let out = credentials_command(&["rotate", common::fault_proxy_url(), &tb.bucket, &key, &parts.to_string()]).output().unwrap();
    assert_success(&out, "rotate");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let result = result_line(lines.next().unwrap_or(""));
    assert_eq!(result.etags.len(), parts);
    let calls: usize = lines.next().and_then(|l| l.strip_prefix("calls ")).and_then(|n| n.parse().ok()).expect("a `calls N` line");
    tb.assert_object(&key, &data_pattern_c(parts * PART));

    // Every request for the object was signed with a key the callback handed out, in the
    // order it handed them out, and each part (1.5 s after the previous one) with a newer key.
    let log = proxy.log_for(&key);
    let signed: Vec<(String, &'static str, Option<u32>)> = log
        .iter()
        .map(|e| (e.access_key_id.clone().unwrap_or_else(|| panic!("an unsigned request: {e:?}")), e.operation(), e.part_number()))
        .collect();
    let number = |id: &str| -> usize {
        id.strip_prefix("CROTATE").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{id} is not a key the callback handed out: {signed:?}"))
    };
    let numbers: Vec<usize> = signed.iter().map(|(id, _, _)| number(id)).collect();
    assert!(numbers.windows(2).all(|w| w[0] <= w[1]), "keys used out of order: {signed:?}");
    assert!(numbers.iter().all(|n| *n <= calls), "a key beyond the {calls} calls: {signed:?}");
    let attempts = |part: u32| -> Vec<(usize, Option<u16>)> {
        log.iter().filter(|e| e.operation() == "UploadPart" && e.part_number() == Some(part)).map(|e| (number(e.access_key_id.as_deref().unwrap()), e.status)).collect()
    };
    let expired = attempts(2);
    assert_eq!(expired.iter().map(|a| a.1).collect::<Vec<_>>(), [Some(400), Some(200)], "part 2: ExpiredToken, then sent again: {signed:?}");
    assert!(expired[0].0 < expired[1].0, "the retry after ExpiredToken is signed with a fresh key: {signed:?}");
    let part_keys: Vec<usize> = (1..=parts as u32).map(|p| attempts(p).last().expect("every part was sent").0).collect();
    assert!(part_keys.windows(2).all(|w| w[0] < w[1]), "each later part signed with a newer key: {signed:?}");
    assert!(calls > parts && calls <= parts + 3, "the callback is asked when the cache is due, not per request: {calls} calls for {} requests", signed.len());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("secret-") && !stdout.contains("secret-"), "a secret was printed: {stdout} {stderr}");
}

#[test]
fn a_failing_or_freed_c_callback_fails_the_close_with_a_clear_error_and_sends_nothing() {
    require_server!();
    let proxy = FaultProxy::take();
    let tb = TestBucket::new("c_abi_failing_callback");
    let key = tb.key("never");
    let out = credentials_command(&["failing", common::fault_proxy_url(), &tb.bucket, &key]).output().unwrap();
    assert_success(&out, "failing");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |label: &str| -> String {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{label} ")))
            .unwrap_or_else(|| panic!("no `{label}` line in {stdout}"))
            .to_string()
    };
    let failing = line("failing");
    for part in ["PutObject", &key, "the C credentials callback 'sealed vault'", "code 42", "the vault is sealed"] {
        assert!(failing.contains(part), "{part:?} missing from: {failing}");
    }
    let empty = line("empty");
    assert!(empty.contains("'empty answer'") && empty.contains("without calling s3n_credentials_out_set"), "{empty}");
    let freed = line("freed");
    assert!(freed.contains("'freed early'") && freed.contains("freed (s3n_credentials_free)"), "{freed}");
    for l in [&failing, &empty, &freed] {
        let code: i32 = l.split(' ').next().unwrap().parse().unwrap();
        assert_ne!(code, 0, "{l}");
        assert!(!l.contains("panic"), "{l}");
    }
    // No credentials, no request: nothing reached S3 for the key, nothing is left there.
    assert_eq!(proxy.log_for(&key).len(), 0, "{:?}", proxy.log_for(&key));
    tb.assert_nothing_left(&key);
}
