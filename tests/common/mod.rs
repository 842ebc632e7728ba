//! Shared helpers of the integration tests.
//!
//! The tests run against a real S3 endpoint, normally the local moto server and fault proxy
//! that `make test` starts (`scripts/s3-server.sh`). Environment:
//!
//! | variable | meaning |
//! |---|---|
//! | `S3NATIVE_TEST_ENDPOINT` | S3 endpoint URL (required) |
//! | `S3NATIVE_TEST_FAULT_PROXY` | the fault proxy in front of it (required by fault tests) |
//! | `S3NATIVE_TEST_ACCESS_KEY` / `S3NATIVE_TEST_SECRET_KEY` | credentials, else `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` |
//! | `AWS_REGION` | region, else `us-east-1` |
//! | `S3NATIVE_TEST_BUCKET` | an existing bucket to use (real S3, MinIO); else every test creates its own |
//! | `CI` / `S3NATIVE_TEST_REQUIRE_SERVER=1` | a missing `S3NATIVE_TEST_ENDPOINT` fails the tests instead of skipping them |
//!
//! Every test starts with [`require_server!`]: without `S3NATIVE_TEST_ENDPOINT` the test
//! returns at once (passing; each test binary says once on stderr that it skipped and how
//! to run it), unless `CI` is set (CI sets `CI=true`) or `S3NATIVE_TEST_REQUIRE_SERVER=1`,
//! where a missing server fails every test.
//!
//! Every test works under a unique [`TestBucket`]: its own bucket (or a unique prefix of
//! `S3NATIVE_TEST_BUCKET`), so tests of one binary can run in parallel and fault rules can
//! match one test's requests by key. Objects are read back with object_store's `AmazonS3`;
//! what object_store cannot ask (ListMultipartUploads, bucket creation, full HEAD metadata)
//! goes through `tests/support/s3ctl.py` (boto3) run with the project's `.venv/bin/python`,
//! and only through [`s3ctl`]: the tests' one call into Python. (aws-sdk-s3 would replace
//! it at the cost of minutes of compiling on every fresh build.)

#![allow(dead_code)] // every test binary uses a different subset

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStoreExt};
use rand::{RngCore, SeedableRng};
use s3native::stats::RequestKind;
use s3native::Settings;
use serde::Deserialize;

/// The part size every test uses (`fs.s3a.multipart.size=5M`): S3's minimum.
pub const PART: usize = 5 * 1024 * 1024;

const HOW_TO_RUN: &str = "the integration tests need an S3 server: run `make test`, or \
     `scripts/s3-server.sh install; env=$(scripts/s3-server.sh start) && eval \"$env\"; cargo test; scripts/s3-server.sh stop`";

// ---------------------------------------------------------------------------------------
// Environment

/// Endpoint and credentials of the server under test, from the environment.
pub struct TestEnv {
    pub endpoint: String,
    pub fault_proxy: Option<String>,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    pub shared_bucket: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// True when a missing server must fail the tests: `CI` is set (to anything but `false` or
/// `0`) or `S3NATIVE_TEST_REQUIRE_SERVER=1`.
pub fn server_required() -> bool {
    var("CI").is_some_and(|v| !matches!(v.trim(), "false" | "0")) || var("S3NATIVE_TEST_REQUIRE_SERVER").as_deref() == Some("1")
}

/// The test environment, or `None` when `S3NATIVE_TEST_ENDPOINT` is not set (the first
/// call then says on stderr that this binary's tests skip and how to run them). Panics,
/// failing the test, when the endpoint is missing but [`server_required`], or when it is set
/// without credentials. Tests call it through [`require_server!`].
pub fn server() -> Option<&'static TestEnv> {
    static ENV: OnceLock<Option<TestEnv>> = OnceLock::new();
    ENV.get_or_init(|| {
        let Some(endpoint) = var("S3NATIVE_TEST_ENDPOINT") else {
            if server_required() {
                panic!("S3NATIVE_TEST_ENDPOINT is not set, and CI or S3NATIVE_TEST_REQUIRE_SERVER=1 requires the S3 server: {HOW_TO_RUN}");
            }
            // The test binary's name, without cargo's `-<hash>`.
            let binary = std::env::current_exe().ok().and_then(|p| {
                let name = p.file_stem()?.to_string_lossy().into_owned();
                Some(name.rsplit_once('-').map_or(name.clone(), |(n, _)| n.to_string()))
            });
            // Straight to stderr: libtest shows what tests print only when they fail.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: the S3 tests of {} (S3NATIVE_TEST_ENDPOINT is not set): {HOW_TO_RUN}. \
                 With CI set or S3NATIVE_TEST_REQUIRE_SERVER=1 a missing server fails them.",
                binary.as_deref().unwrap_or("this test binary")
            );
            return None;
        };
        let access_key = var("S3NATIVE_TEST_ACCESS_KEY").or_else(|| var("AWS_ACCESS_KEY_ID"));
        let secret_key = var("S3NATIVE_TEST_SECRET_KEY").or_else(|| var("AWS_SECRET_ACCESS_KEY"));
        let (Some(access_key), Some(secret_key)) = (access_key, secret_key) else {
            panic!("no credentials: set S3NATIVE_TEST_ACCESS_KEY/S3NATIVE_TEST_SECRET_KEY or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; {HOW_TO_RUN}")
        };
        Some(TestEnv {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            fault_proxy: var("S3NATIVE_TEST_FAULT_PROXY").map(|p| p.trim_end_matches('/').to_string()),
            region: var("AWS_REGION").unwrap_or_else(|| "us-east-1".to_string()),
            access_key,
            secret_key,
            shared_bucket: var("S3NATIVE_TEST_BUCKET"),
        })
    })
    .as_ref()
}

/// The first statement of every integration test: evaluates to the [`TestEnv`], or returns
/// from the test (which passes) when no server is configured; see [`server`].
#[macro_export]
macro_rules! require_server {
    () => {
        match $crate::common::server() {
            Some(env) => env,
            None => return,
        }
    };
}

/// The test environment, for helpers running after [`require_server!`]; panics when there
/// is none.
pub fn env() -> &'static TestEnv {
    server().unwrap_or_else(|| panic!("no S3 server configured: the test must start with require_server!(); {HOW_TO_RUN}"))
}

/// The fault proxy's URL; panics (failing the test) with instructions when it is not set.
pub fn fault_proxy_url() -> &'static str {
    env().fault_proxy.as_deref().unwrap_or_else(|| {
        panic!("S3NATIVE_TEST_FAULT_PROXY is not set: this test injects faults through tests/support/fault_proxy.py; {HOW_TO_RUN}")
    })
}

/// Writer settings for `endpoint` with the test credentials and 5 MiB parts.
pub fn settings_for(endpoint: &str) -> Settings {
    let e = env();
    Settings::new()
        .with("fs.s3a.endpoint", endpoint)
        .with("fs.s3a.path.style.access", "true")
        .with("fs.s3a.endpoint.region", e.region.as_str())
        .with("fs.s3a.access.key", e.access_key.as_str())
        .with("fs.s3a.secret.key", e.secret_key.as_str())
        .with("fs.s3a.multipart.size", "5M")
}

/// Writer settings straight to the server under test.
pub fn settings() -> Settings {
    settings_for(&env().endpoint)
}

/// A process-wide tokio runtime for the verification client (never used by s3native).
fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("test runtime")
    })
}

// ---------------------------------------------------------------------------------------
// Test data

/// `len` pseudo-random bytes, the same for the same `seed`.
pub fn data(seed: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rand::rngs::SmallRng::seed_from_u64(seed).fill_bytes(&mut out);
    out
}

/// Assert two byte strings are equal, reporting the first difference instead of dumping
/// megabytes.
#[track_caller]
pub fn assert_same_bytes(actual: &[u8], expected: &[u8], what: &str) {
    if actual == expected {
        return;
    }
    let first = actual.iter().zip(expected).position(|(a, b)| a != b);
    match first {
        Some(i) => panic!(
            "{what}: content differs at byte {i} (actual {} B, expected {} B)",
            actual.len(),
            expected.len()
        ),
        None => panic!("{what}: length {} B, expected {} B (common prefix equal)", actual.len(), expected.len()),
    }
}

// ---------------------------------------------------------------------------------------
// Objects through the native writer and reader

/// Write `bytes` to `key` of `bucket` with the native writer in Publish mode (one object,
/// visible at close).
pub fn put(settings: &s3native::Settings, bucket: &TestBucket, key: &str, bytes: &[u8]) {
    let mut w = s3native::Writer::open(&bucket.bucket, key, s3native::Mode::Publish, settings).expect("open writer");
    w.write(bytes).expect("write");
    w.close().expect("close");
}

/// Stream-read `r` from offset 0 to its end in `chunk`-byte reads.
pub fn read_all(r: &mut s3native::Reader, chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; chunk];
    loop {
        let n = r.read(out.len() as u64, &mut buf).expect("read");
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Run `f` on its own thread and fail the test if it takes longer than `limit` (a deadlock
/// shows up as a failure instead of a hung test run).
pub fn within<T: Send + 'static>(limit: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what} did not finish within {limit:?} (deadlock?)"),
        // The closure panicked: re-raise its panic here.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("the worker sent nothing but did not panic"),
        },
    }
}

// ---------------------------------------------------------------------------------------
// A test's bucket and the verification client

/// One multipart upload in progress, as ListMultipartUploads reports it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Upload {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "UploadId")]
    pub upload_id: String,
}

/// HeadObject as boto3 reports it (what object_store's `ObjectMeta` lacks).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Head {
    #[serde(rename = "ContentLength")]
    pub content_length: u64,
    #[serde(rename = "ETag")]
    pub etag: String,
    #[serde(rename = "StorageClass")]
    pub storage_class: Option<String>,
    #[serde(rename = "ContentEncoding")]
    pub content_encoding: Option<String>,
    /// User metadata, names without the `x-amz-meta-` prefix.
    #[serde(rename = "Metadata", default)]
    pub metadata: std::collections::HashMap<String, String>,
}

/// A test's own place on the server: a fresh bucket (or a unique prefix of
/// `S3NATIVE_TEST_BUCKET`), with a client to check what the writer left there.
pub struct TestBucket {
    pub bucket: String,
    /// Unique per test; every key of the test starts with it.
    prefix: String,
    client: AmazonS3,
}

impl TestBucket {
    /// Set up a place for test `name` (letters, digits, `_`/`-`).
    pub fn new(name: &str) -> TestBucket {
        let e = env();
        let unique = unique_name(name);
        let (bucket, prefix) = match &e.shared_bucket {
            Some(b) => (b.clone(), format!("s3native-tests/{unique}/")),
            None => {
                let bucket = fit_bucket_name("s3n", &unique);
                s3ctl(&["create-bucket", &bucket]);
                (bucket, format!("{unique}/"))
            }
        };
        let client = AmazonS3Builder::new()
            .with_endpoint(&e.endpoint)
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_region(&e.region)
            .with_bucket_name(&bucket)
            .with_access_key_id(&e.access_key)
            .with_secret_access_key(&e.secret_key)
            .build()
            .expect("verification client");
        TestBucket { bucket, prefix, client }
    }

    /// A key unique to this test: the test's prefix + `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Writer settings straight to the server.
    pub fn settings(&self) -> Settings {
        settings()
    }

    /// Writer settings through the fault proxy.
    pub fn proxied_settings(&self) -> Settings {
        settings_for(fault_proxy_url())
    }

    /// The object's bytes, or `None` when it does not exist.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let path = Path::from(key);
        rt().block_on(async {
            match self.client.get(&path).await {
                Ok(r) => Some(r.bytes().await.expect("read the object body").to_vec()),
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => panic!("GET s3://{}/{key}: {e}", self.bucket),
            }
        })
    }

    /// The object's metadata as object_store sees it, or `None` when it does not exist.
    pub fn meta(&self, key: &str) -> Option<ObjectMeta> {
        let path = Path::from(key);
        rt().block_on(async {
            match self.client.head(&path).await {
                Ok(m) => Some(m),
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => panic!("HEAD s3://{}/{key}: {e}", self.bucket),
            }
        })
    }

    /// HeadObject with every field the tests check, or `None` when absent.
    pub fn head(&self, key: &str) -> Option<Head> {
        serde_json::from_str(&s3ctl(&["head", &self.bucket, key])).expect("s3ctl head prints a head or null")
    }

    /// Delete an object (to keep the server's memory small after big tests).
    pub fn delete(&self, key: &str) {
        let path = Path::from(key);
        rt().block_on(self.client.delete(&path)).unwrap_or_else(|e| panic!("DELETE s3://{}/{key}: {e}", self.bucket));
    }

    /// Multipart uploads in progress for keys starting with `key`.
    pub fn uploads(&self, key: &str) -> Vec<Upload> {
        serde_json::from_str(&s3ctl(&["list-uploads", &self.bucket, key])).expect("s3ctl list-uploads prints a list")
    }

    /// Assert the object is `expected`, byte for byte.
    #[track_caller]
    pub fn assert_object(&self, key: &str, expected: &[u8]) {
        let actual = self.get(key).unwrap_or_else(|| panic!("s3://{}/{key} does not exist", self.bucket));
        assert_same_bytes(&actual, expected, &format!("s3://{}/{key}", self.bucket));
    }

    /// Assert the writer left nothing for `key`: no object and no multipart upload.
    #[track_caller]
    pub fn assert_nothing_left(&self, key: &str) {
        assert!(self.meta(key).is_none(), "s3://{}/{key} exists but must not", self.bucket);
        let uploads = self.uploads(key);
        assert!(uploads.is_empty(), "multipart uploads left behind for s3://{}/{key}: {uploads:?}", self.bucket);
    }

    /// Poll until ListMultipartUploads shows an upload for `key` (for at most `limit`).
    pub fn wait_for_upload(&self, key: &str, limit: Duration) -> Upload {
        let start = Instant::now();
        loop {
            if let Some(u) = self.uploads(key).into_iter().find(|u| u.key == key) {
                return u;
            }
            assert!(start.elapsed() < limit, "no multipart upload for s3://{}/{key} appeared within {limit:?}", self.bucket);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `name` made unique in this run: lower-case, `-` for other characters, with the process
/// id, a time stamp and a counter.
pub fn unique_name(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let slug: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(30).collect();
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() % 1_000_000_000;
    format!("{}-{}-{stamp}-{}", slug.trim_matches('-'), std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A unique valid bucket name (at most 63 characters) starting with `prefix`, for test
/// `name`.
pub fn bucket_name(prefix: &str, name: &str) -> String {
    fit_bucket_name(prefix, &unique_name(name))
}

/// `prefix-unique`, cut from the front of `unique` to S3's 63 characters (the unique tail
/// stays).
fn fit_bucket_name(prefix: &str, unique: &str) -> String {
    let cut = (prefix.len() + 1 + unique.len()).saturating_sub(63);
    format!("{prefix}-{}", unique[cut..].trim_start_matches('-'))
}

/// Run `tests/support/s3ctl.py` with the venv's Python; its stdout (one JSON value). The
/// tests' only call into Python.
fn s3ctl(args: &[&str]) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run `scripts/s3-server.sh install` ({HOW_TO_RUN})", python.display());
    let e = env();
    let out = Command::new(&python)
        .arg(root.join("tests/support/s3ctl.py"))
        .args(args)
        // Credentials through the environment, never on the command line.
        .env("S3CTL_ENDPOINT", &e.endpoint)
        .env("AWS_ACCESS_KEY_ID", &e.access_key)
        .env("AWS_SECRET_ACCESS_KEY", &e.secret_key)
        .env("AWS_REGION", &e.region)
        .output()
        .unwrap_or_else(|err| panic!("running {}: {err}", python.display()));
    assert!(
        out.status.success(),
        "s3ctl {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("s3ctl prints UTF-8")
}

// ---------------------------------------------------------------------------------------
// The fault proxy

/// One request the fault proxy forwarded or answered (`GET /__fault/log`).
#[derive(Debug, Clone, Deserialize)]
pub struct ProxyLogEntry {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Status the client got; `None` when the connection was dropped.
    pub status: Option<u16>,
    /// The fault applied, if any.
    pub fault: Option<String>,
    pub upstream_status: Option<u16>,
    /// The request's headers, names lower-case (Authorization is not logged).
    pub headers: HashMap<String, String>,
    /// The request body as text, for bodies of at most 64 KiB of methods other than PUT.
    pub body: Option<String>,
    /// The access key id that signed the request (from its `Authorization` header).
    #[serde(default)]
    pub access_key_id: Option<String>,
}

impl ProxyLogEntry {
    /// The S3 operation, by the library's own rule (`RequestKind::classify`).
    pub fn operation(&self) -> &'static str {
        RequestKind::classify(&self.method, &self.query).name()
    }

    /// The `partNumber` of an UploadPart.
    pub fn part_number(&self) -> Option<u32> {
        self.query.split('&').find_map(|p| p.strip_prefix("partNumber=")).and_then(|n| n.parse().ok())
    }

    /// The request header `name` (any case), if it was sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

/// Exclusive use of the fault proxy for one test. Fault tests of one binary take turns
/// (the proxy's rules and log are global); rules are still scoped to the test's key with
/// `path_contains`. Rules and log are cleared when taken, rules again when dropped.
pub struct FaultProxy {
    url: &'static str,
    _turn: MutexGuard<'static, ()>,
}

impl FaultProxy {
    /// Wait for this binary's other fault tests, then clear the proxy's rules and log.
    pub fn take() -> FaultProxy {
        static TURN: Mutex<()> = Mutex::new(());
        let url = fault_proxy_url();
        // A failed test poisons the lock; the next test starts from cleared state anyway.
        let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        let proxy = FaultProxy { url, _turn: turn };
        proxy.control("DELETE", "/__fault/rules", &[], "");
        proxy.control("DELETE", "/__fault/log", &[], "");
        proxy
    }

    /// Arm a rule (the proxy's JSON rule format, see tests/support/fault_proxy.py).
    pub fn add_rule(&self, rule: serde_json::Value) {
        self.control("POST", "/__fault/rules", &[], &rule.to_string());
    }

    /// Forget the requests logged so far.
    pub fn clear_log(&self) {
        self.control("DELETE", "/__fault/log", &[], "");
    }

    /// Remove every rule.
    pub fn clear_rules(&self) {
        self.control("DELETE", "/__fault/rules", &[], "");
    }

    /// The requests logged for paths containing `key`, in order.
    pub fn log_for(&self, key: &str) -> Vec<ProxyLogEntry> {
        let log = self.control("GET", "/__fault/log", &[("path_contains", key), ("detail", "1")], "");
        let all: Vec<ProxyLogEntry> = serde_json::from_str(&log).expect("the proxy log is JSON");
        // The proxy filters by path already (also percent-decoded); keep the raw matches.
        all.into_iter().filter(|e| e.path.contains(key)).collect()
    }

    /// The logged requests for `key` that were operation `op` (e.g. "UploadPart").
    pub fn requests(&self, key: &str, op: &str) -> Vec<ProxyLogEntry> {
        self.log_for(key).into_iter().filter(|e| e.operation() == op).collect()
    }

    /// One request to the control API; the response body. Panics unless it answers 200.
    fn control(&self, method: &str, path: &str, query: &[(&str, &str)], body: &str) -> String {
        static AGENT: OnceLock<ureq::Agent> = OnceLock::new();
        let agent = AGENT.get_or_init(|| {
            ureq::Agent::config_builder()
                .http_status_as_error(false) // the status is checked below, with the body
                .proxy(None) // the proxy is on loopback: never through HTTP_PROXY
                .timeout_global(Some(Duration::from_secs(10)))
                .build()
                .new_agent()
        });
        let url = format!("{}{path}", self.url);
        let answer = match method {
            "GET" => agent.get(&url).query_pairs(query.iter().copied()).call(),
            "DELETE" => agent.delete(&url).query_pairs(query.iter().copied()).call(),
            "POST" => agent.post(&url).query_pairs(query.iter().copied()).content_type("application/json").send(body),
            _ => panic!("no control call {method}"),
        };
        let mut response = answer.unwrap_or_else(|e| panic!("fault proxy {method} {url}: {e}"));
        let status = response.status();
        let text = response
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_string()
            .unwrap_or_else(|e| panic!("reading the fault proxy's answer to {method} {url}: {e}"));
        assert_eq!(status, 200, "fault proxy {method} {url} {body}: {text}");
        text
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.clear_rules();
        }
    }
}

/// tests/c/`name`.c compiled with the system C compiler (`CC`, else `cc`) against the
/// generated native/include/s3native.h and linked to the cdylib cargo built, as
/// target/<profile>/c_`name`.
pub fn compile_c(name: &str) -> std::path::PathBuf {
    use std::path::PathBuf;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The cdylib lives next to the test binary's deps directory: target/<profile>/.
    let exe = std::env::current_exe().unwrap();
    let lib_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(lib_dir.join("libs3native.so").exists(), "no libs3native.so in {}", lib_dir.display());
    let out = lib_dir.join(format!("c_{name}"));
    let status = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg(root.join(format!("tests/c/{name}.c")))
        .arg(format!("-I{}", root.join("native/include").display()))
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-ls3native")
        .status()
        .expect("a C compiler (cc) on PATH");
    assert!(status.success(), "compiling tests/c/{name}.c failed");
    out
}

/// `program` running `args` with the test credentials in its environment, stdin, stdout and
/// stderr piped.
pub fn c_command(program: &std::path::Path, args: &[&str]) -> std::process::Command {
    use std::process::Stdio;
    let e = env();
    let mut c = std::process::Command::new(program);
    c.args(args)
        .env("AWS_ACCESS_KEY_ID", &e.access_key)
        .env("AWS_SECRET_ACCESS_KEY", &e.secret_key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Asserts the C program exited 0, with its stderr in the message otherwise.
#[track_caller]
pub fn assert_c_success(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: the C program failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
}
