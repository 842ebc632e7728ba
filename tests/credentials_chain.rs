//! object_store's default credential chain, natively, as a Rust user without a JVM gets it
//! (settings without keys, no credentials source): web identity against moto's STS, EKS Pod
//! Identity container credentials, and the EC2 instance metadata service through
//! `fs.s3a.native.metadata.endpoint`. The fault proxy's log shows which access key id signed
//! each request: it must be the one the chain's link handed out.
//!
//! The chain reads process-wide environment variables, so this binary holds one test, whose
//! phases set them in turn. `AWS_METADATA_ENDPOINT` points at a local server answering 404
//! throughout, so nothing reaches 169.254.169.254.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{FaultProxy, TestBucket, PART};
use s3native::{Mode, Settings, Writer};

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback HTTP server answering 404 to everything; its URL and how many requests it had.
fn not_found_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    (url, count)
}

/// tests/support/sts_front.py in front of moto (object_store sends STS calls over HTTPS
/// only); its URL, CA file and response log.
fn sts_front(dir: &Path) -> (Running, String, PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // .venv/'s Python (scripts/s3-server.sh install): the front's certificates need `cryptography`.
    let mut child = Command::new(root.join(".venv/bin/python"))
        .arg(root.join("tests/support/sts_front.py"))
        .args(["--upstream", &common::env().endpoint, "--dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect(".venv/bin/python (scripts/s3-server.sh install)");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let running = Running(child);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("sts_front.py printed {line:?}: {e}"));
    let s = |k: &str| v[k].as_str().unwrap().to_string();
    (running, s("url"), PathBuf::from(s("ca")), PathBuf::from(s("log")))
}

/// Settings for the fault proxy without any keys: the default chain decides.
fn keyless() -> Settings {
    Settings::new()
        .with("fs.s3a.endpoint", common::fault_proxy_url())
        .with("fs.s3a.path.style.access", "true")
        .with("fs.s3a.endpoint.region", common::env().region.as_str())
        .with("fs.s3a.multipart.size", "5M")
}

/// Publish a two-part object at `name` with `settings`; every request for it must have been
/// signed with `key_id`. `chain` must appear in the effective credentials.
fn write_signed_by(proxy: &FaultProxy, tb: &TestBucket, name: &str, settings: &Settings, chain: &str, key_id: &str) {
    let effective = s3native::validate(&tb.bucket, settings).unwrap().effective;
    assert!(effective.credentials.contains(chain), "{name}: effective credentials {:?}", effective.credentials);
    let key = tb.key(name);
    let data = common::data(name.len() as u64, PART + 4321);
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, settings).unwrap();
    w.write(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    let result = w.close().unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(result.etags.len(), 2, "{name}");
    tb.assert_object(&key, &data);
    let log = proxy.log_for(&key);
    assert!(log.len() >= 4, "{name}: create, 2 parts, complete: {log:?}");
    for e in &log {
        assert_eq!(e.access_key_id.as_deref(), Some(key_id), "{name}: {} {} signed by another key", e.method, e.query);
    }
}

#[test]
fn the_default_chain_signs_with_web_identity_container_and_instance_metadata_credentials() {
    require_server!();
    let proxy = FaultProxy::take();
    let tb = TestBucket::new("credentials_chain"); // created with the test keys, before they go
    let dir = std::env::temp_dir().join(common::unique_name("s3native-chain"));
    std::fs::create_dir_all(&dir).unwrap();
    let (imds_404, imds_404_requests) = not_found_server();
    for k in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_PROFILE"] {
        std::env::remove_var(k);
    }
    std::env::set_var("AWS_METADATA_ENDPOINT", &imds_404);
    std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");

    // 1. Web identity (EKS IRSA): a token file and a role; AssumeRoleWithWebIdentity at moto.
    let (_front, sts_url, ca, responses) = sts_front(&dir);
    let token_file = dir.join("web-identity-token");
    std::fs::write(&token_file, "eyJhbGciOiJSUzI1NiJ9.test-oidc-token.sig").unwrap();
    std::env::set_var("SSL_CERT_FILE", &ca);
    std::env::set_var("AWS_WEB_IDENTITY_TOKEN_FILE", &token_file);
    std::env::set_var("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/s3native-web-identity");
    std::env::set_var("AWS_ROLE_SESSION_NAME", "s3native-test");
    std::env::set_var("AWS_ENDPOINT_URL_STS", &sts_url);
    let sts_key = |responses: &Path| -> Option<String> {
        let text = std::fs::read_to_string(responses).ok()?;
        let start = text.rfind("<AccessKeyId>")? + "<AccessKeyId>".len();
        Some(text[start..start + text[start..].find('<')?].to_string())
    };
    // The key id is known once STS answered: validate sends nothing, the first write asks.
    let key = tb.key("web-identity");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &keyless()).unwrap();
    w.write(b"first").unwrap();
    w.close().unwrap_or_else(|e| panic!("web identity: {e}"));
    let web_key = sts_key(&responses).expect("moto's STS answered AssumeRoleWithWebIdentity");
    assert!(web_key.starts_with("ASIA"), "a temporary key id: {web_key}");
    assert_eq!(proxy.log_for(&key).iter().map(|e| e.access_key_id.clone()).collect::<Vec<_>>(), [Some(web_key.clone())]);
    write_signed_by(&proxy, &tb, "web-identity-multipart", &keyless(), "web identity (role arn:aws:iam::123456789012:role/s3native-web-identity", &web_key);

    // 2. EKS Pod Identity: the container endpoint's full URI and its token file.
    for k in ["AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_ENDPOINT_URL_STS"] {
        std::env::remove_var(k);
    }
    let container_uri = std::env::var("S3NATIVE_TEST_CONTAINER_CREDENTIALS_URI").expect("scripts/s3-server.sh starts the container-credentials endpoint");
    let container_key = std::env::var("S3NATIVE_TEST_CONTAINER_ACCESS_KEY").unwrap();
    let container_token = dir.join("container-token");
    std::fs::write(&container_token, "pod-identity-token").unwrap();
    std::env::set_var("AWS_CONTAINER_CREDENTIALS_FULL_URI", &container_uri);
    std::env::set_var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", &container_token);
    write_signed_by(&proxy, &tb, "container", &keyless(), "EKS Pod Identity", &container_key);

    // 3. The instance metadata service, named by the setting (the environment's endpoint
    //    answers 404): IMDSv2 token, role, credentials.
    for k in ["AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] {
        std::env::remove_var(k);
    }
    match (std::env::var("S3NATIVE_TEST_IMDS_ENDPOINT"), std::env::var("S3NATIVE_TEST_IMDS_ACCESS_KEY")) {
        (Ok(imds), Ok(imds_key)) => {
            let settings = keyless().with("fs.s3a.native.metadata.endpoint", imds.as_str());
            write_signed_by(&proxy, &tb, "imds", &settings, &format!("EC2 instance metadata ({imds})"), &imds_key);
        }
        _ => eprintln!("SKIPPED: the instance metadata phase (no ec2-metadata-mock: make test installs it)"),
    }
    assert_eq!(imds_404_requests.load(Ordering::SeqCst), 0, "no link before IMDS asked the metadata endpoint");

    // 4. Nothing but the environment's metadata endpoint, which answers 404: a clear failure,
    //    asked of the loopback server, never of 169.254.169.254.
    let key = tb.key("no-credentials");
    let mut w = Writer::open(&tb.bucket, &key, Mode::Publish, &keyless()).unwrap();
    w.write(b"x").unwrap();
    let err = w.close().expect_err("no credentials anywhere");
    assert!(err.message().contains(&key) && err.message().contains(&imds_404), "names the key and the metadata endpoint: {err}");
    assert!(imds_404_requests.load(Ordering::SeqCst) > 0, "the metadata endpoint of AWS_METADATA_ENDPOINT was asked: {err}");
    assert!(proxy.log_for(&key).is_empty(), "nothing was sent unsigned: {:?}", proxy.log_for(&key));
    let _ = std::fs::remove_dir_all(&dir);
}
