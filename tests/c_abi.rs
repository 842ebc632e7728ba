//! The C ABI as a C program sees it: tests/c/roundtrip.c compiled with the system C compiler
//! against the generated native/include/s3native.h and linked to the cdylib cargo built.
//! Each test runs one scenario of the program (see its header comment) and checks the
//! server's state around it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use common::{TestBucket, PART};
use s3native::UploadResult;

/// The bytes roundtrip.c writes: byte i is i * 31 mod 251.
fn data_pattern_c(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// The compiled program (compiled once per test run of this binary).
fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        // The cdylib lives next to the test binary's deps directory: target/<profile>/.
        let exe = std::env::current_exe().unwrap();
        let lib_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        assert!(lib_dir.join("libs3native.so").exists(), "no libs3native.so in {}", lib_dir.display());
        let out = lib_dir.join("c_roundtrip");
        let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-std=c11", "-Wall", "-Werror", "-o"])
            .arg(&out)
            .arg(root.join("tests/c/roundtrip.c"))
            .arg(format!("-I{}", root.join("native/include").display()))
            .arg(format!("-L{}", lib_dir.display()))
            .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
            .arg("-ls3native")
            .status()
            .expect("a C compiler (cc) on PATH");
        assert!(status.success(), "compiling tests/c/roundtrip.c failed");
        out
    })
}

/// The program running `args` with the test credentials, stdin and stdout piped.
fn command(args: &[&str]) -> Command {
    let e = common::env();
    let mut c = Command::new(program());
    c.args(args)
        .env("AWS_ACCESS_KEY_ID", &e.access_key)
        .env("AWS_SECRET_ACCESS_KEY", &e.secret_key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[track_caller]
fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: the C program failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
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
