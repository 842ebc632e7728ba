//! Errors of the native writer.
//!
//! Every failure is an [`Error`]: a stable [`ErrorKind`] that the C ABI and the JNI layer map
//! to their own codes and exception types, a message for people, and where S3 gave one the S3
//! error code (`NoSuchBucket`, `AccessDenied`, `EntityTooSmall`, ...). Messages never contain
//! credentials: errors built from object_store failures are scrubbed of every secret the
//! writer was configured with (see [`Error::scrub`]).

use std::fmt;

/// What kind of failure an [`Error`] is. The numeric values are the C ABI's error codes
/// (`S3N_ERR_*` in `s3native.h`) and never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorKind {
    /// A bad argument or setting: an invalid value, an unknown mode, a part size out of
    /// range. The message names the setting key when one is at fault.
    InvalidArgument = 1,
    /// A valid setting the native writer cannot reproduce (canned ACL, client-side
    /// encryption, ...). The JVM layer catches this and writes the file through stock S3A.
    Unsupported = 2,
    /// S3 answered 404: missing bucket (`NoSuchBucket`), or upload (`NoSuchUpload`).
    NotFound = 3,
    /// S3 answered 401 or 403 (`AccessDenied`, `InvalidAccessKeyId`,
    /// `SignatureDoesNotMatch`, ...).
    AccessDenied = 4,
    /// The caller asked a blocked call to stop (Java's `Thread.interrupt()`); the upload is
    /// aborted, never reported as complete.
    Interrupted = 5,
    /// The call does not fit the writer's state: write after close, close after abort.
    State = 6,
    /// The object would need more than the allowed number of parts (10,000 for S3).
    TooLarge = 7,
    /// Any other failure talking to S3: network, 5xx after retries, 400-class rejections
    /// such as `EntityTooSmall`.
    Io = 8,
    /// A bug: a panic caught at the C or JNI boundary.
    Internal = 9,
    /// A create-if-absent write ([`Mode::CreateIfAbsent`](crate::Mode::CreateIfAbsent))
    /// found an object at the key: S3 answered 412 `PreconditionFailed` to the PutObject
    /// or CompleteMultipartUpload sent with `If-None-Match: *`, and the object there is not
    /// this writer's own (see [`crate::s3`]). Nothing was written; the upload is aborted.
    AlreadyExists = 10,
    /// A read asked for bytes past the end of the object as the reader knows it (its length
    /// from open): a vectored read's range ending past the end, or, within a declared length
    /// longer than the object, a range past its real end (S3's 416: code `InvalidRange`).
    /// Java's `EOFException`.
    EndOfFile = 11,
    /// The reader stopped a vectored read in progress ([`Reader::stop_vectored`](crate::Reader::stop_vectored):
    /// the stream was closed or unbuffered) before this range was taken: the caller asked
    /// nothing to stop, so, unlike [`ErrorKind::Interrupted`], no thread's interrupt is
    /// implied. Java's `InterruptedIOException` without the thread's interrupt flag set (as
    /// S3A fails the ranges of a vectored read its stream's close or unbuffer cancelled).
    Stopped = 12,
}

/// A failure of the native writer. Cheap to clone: the first failure of a writer is kept and
/// reported again by every later call. `Display` is the message.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    s3_code: Option<String>,
    setting: Option<String>,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with a message for people.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), s3_code: None, setting: None }
    }

    /// A bad value for the setting `key`.
    pub fn invalid_setting(key: &str, reason: impl fmt::Display) -> Self {
        Error {
            kind: ErrorKind::InvalidArgument,
            message: format!("invalid value for {key}: {reason}"),
            s3_code: None,
            setting: Some(key.to_string()),
        }
    }

    /// A setting the native writer cannot honour; `key` is the setting to name in the
    /// fallback log line.
    pub fn unsupported(key: &str, reason: impl fmt::Display) -> Self {
        Error {
            kind: ErrorKind::Unsupported,
            message: format!("{key}: {reason}; the native writer cannot honour it"),
            s3_code: None,
            setting: Some(key.to_string()),
        }
    }

    /// A bad argument of a call.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// A read past the end of the object ([`ErrorKind::EndOfFile`]).
    pub fn end_of_file(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::EndOfFile, message)
    }

    /// A call that does not fit the writer's state.
    pub fn state(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::State, message)
    }

    /// The caller interrupted a blocked call.
    pub fn interrupted(what: &str) -> Self {
        Error::new(ErrorKind::Interrupted, format!("interrupted while {what}; the upload is aborted"))
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The S3 error code from the server's answer, when there was one.
    pub fn s3_code(&self) -> Option<&str> {
        self.s3_code.as_deref()
    }

    /// The setting key at fault, for [`ErrorKind::InvalidArgument`] and
    /// [`ErrorKind::Unsupported`] errors about a setting.
    pub fn setting(&self) -> Option<&str> {
        self.setting.as_deref()
    }

    /// An [`ErrorKind::Internal`] error for a panic caught at a boundary (C ABI, JNI), with
    /// the panic's message when it is a string.
    pub fn from_panic(payload: Box<dyn std::any::Any + Send + 'static>) -> Self {
        let what = match payload.downcast::<&'static str>() {
            Ok(s) => (*s).to_string(),
            Err(p) => match p.downcast::<String>() {
                Ok(s) => *s,
                Err(p) => {
                    // A payload of another type: dropping it could itself panic; leak it.
                    std::mem::forget(p);
                    "a panic with a non-string payload".to_string()
                }
            },
        };
        Error::new(ErrorKind::Internal, format!("panic (a bug in s3native): {what}"))
    }

    /// The same failure as another kind (when the request tells what S3's answer means).
    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same failure with S3's error code `code` (e.g. `PreconditionFailed` for a read
    /// of an object changed since open, which the JVM layer raises as its own exception).
    pub(crate) fn with_s3_code(mut self, code: &str) -> Self {
        self.s3_code = Some(code.to_string());
        self
    }

    /// Append `more` to the message (e.g. what a clean-up after this failure found).
    pub(crate) fn context_after(mut self, more: impl fmt::Display) -> Self {
        self.message = format!("{}; {more}", self.message);
        self
    }

    /// Prefix the message with what was being done, e.g. `"UploadPart 3 of s3://b/k"`.
    pub(crate) fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// Convert an object_store failure of operation `op` (e.g. "CreateMultipartUpload
    /// s3://bucket/key"), classifying it by HTTP status and S3 error code, and scrub every
    /// value of `secrets` (non-empty ones) out of the message.
    pub(crate) fn from_store(op: impl fmt::Display, e: &object_store::Error, secrets: &[&str]) -> Self {
        use object_store::Error as E;
        let text = error_chain(e);
        let s3_code = s3_error_code(&text);
        let kind = match e {
            E::NotFound { .. } => ErrorKind::NotFound,
            // object_store's PutMode::Create answered 412 (a bare 412 is `Precondition`, whose
            // meaning depends on the request: see `s3::complete`).
            E::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => ErrorKind::AccessDenied,
            _ => match s3_code.as_deref() {
                Some("NoSuchBucket" | "NoSuchUpload" | "NoSuchKey") => ErrorKind::NotFound,
                Some("AccessDenied" | "InvalidAccessKeyId" | "SignatureDoesNotMatch") => ErrorKind::AccessDenied,
                _ => ErrorKind::Io,
            },
        };
        // An S3 error body says it best; a failure to reach the endpoint is said in S3A's words;
        // otherwise keep object_store's whole chain.
        let detail = match (&s3_code, xml_field(&text, "Message")) {
            (Some(code), Some(msg)) => format!("{code}: {msg}"),
            _ => transport_failure(&text).unwrap_or(text),
        };
        let message = Error::scrub(&format!("{op} failed: {detail}"), secrets);
        Error { kind, message, s3_code, setting: None }
    }

    /// Replace every occurrence of each non-empty secret in `text` with `****`.
    pub fn scrub(text: &str, secrets: &[&str]) -> String {
        let mut out = text.to_string();
        for s in secrets.iter().filter(|s| s.len() >= 4) {
            out = out.replace(s, "****");
        }
        out
    }
}

/// The S3 error code in an object_store failure's text (`ExpiredToken`, ...), if any.
pub(crate) fn s3_code_of(e: &object_store::Error) -> Option<String> {
    s3_error_code(&error_chain(e))
}

/// A request that never got an HTTP answer, as S3A words it: "connection refused to
/// http://host:port after 3 attempts over 0.3 s", from object_store's retry error text
/// ("Error performing PUT <url> in <duration>, after <n> retries, ... Connection refused").
/// `None` when the text is not such a failure.
fn transport_failure(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let what = [
        ("connection refused", "connection refused"),
        ("dns error", "cannot resolve the host"),
        ("failed to lookup address", "cannot resolve the host"),
        ("connection reset", "connection reset"),
        ("timed out", "timed out"),
        ("invalid peer certificate", "the server's TLS certificate is not trusted"),
        ("certificate", "TLS certificate error"),
    ]
    .into_iter()
    .find(|(needle, _)| lower.contains(needle))?
    .1;
    let after_method = text.split_once("Error performing ")?.1;
    let url = after_method.split_once(' ')?.1.split_once(" in ")?.0;
    let endpoint = match url.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{}", rest.split('/').next().unwrap_or(rest)),
        None => url.to_string(),
    };
    let duration = after_method.split_once(" in ")?.1.split(',').next()?.trim();
    let retries: u64 = text.split_once("after ")?.1.split(' ').next()?.parse().ok()?;
    Some(format!("{what} to {endpoint} after {} attempts over {}", retries + 1, seconds(duration)?))
}

/// A Rust `Debug` duration (`280.8ms`, `1.5s`, `3µs`) as seconds with one decimal (`0.3 s`).
fn seconds(d: &str) -> Option<String> {
    let split = d.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (value, unit) = d.split_at(split);
    let value: f64 = value.parse().ok()?;
    let secs = match unit {
        "s" => value,
        "ms" => value / 1e3,
        "µs" | "us" => value / 1e6,
        "ns" => value / 1e9,
        _ => return None,
    };
    Some(format!("{secs:.1} s"))
}

/// The error and all its sources, joined with ": ", skipping a source whose text the
/// previous level already included.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}

/// The `<Code>...</Code>` of an S3 XML error body quoted in `text`, if any.
fn s3_error_code(text: &str) -> Option<String> {
    xml_field(text, "Code").filter(|c| c.len() < 64)
}

/// The text of the first `<tag>...</tag>` in `text`, if any and not empty.
fn xml_field(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find(&format!("</{tag}>"))?;
    let value = text[start..start + len].trim();
    let value = value.strip_prefix("<![CDATA[").and_then(|v| v.strip_suffix("]]>")).unwrap_or(value).trim();
    (!value.is_empty()).then(|| value.to_string())
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("s3_code", &self.s3_code)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_s3_code_in_an_error_body() {
        let text = "Server returned non-2xx status code: 404 Not Found: <?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>x</Message></Error>";
        assert_eq!(s3_error_code(text).as_deref(), Some("NoSuchBucket"));
        assert_eq!(s3_error_code("no xml here"), None);
    }

    #[test]
    fn scrub_removes_every_secret() {
        let s = Error::scrub("key AKIAEXAMPLE and secret wJalrXUtnFEMI there", &["AKIAEXAMPLE", "wJalrXUtnFEMI", ""]);
        assert_eq!(s, "key **** and secret **** there");
    }

    #[test]
    fn connection_failures_are_said_in_s3as_words() {
        let text = "Generic S3 error: Error performing PUT http://127.0.0.1:9/b/k in 280.844928ms, after 2 retries, max_retries: 2, retry_timeout: 180s  - HTTP error: error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)";
        assert_eq!(transport_failure(text).as_deref(), Some("connection refused to http://127.0.0.1:9 after 3 attempts over 0.3 s"));
        assert_eq!(transport_failure("Client error with status 403 Forbidden"), None);
        assert_eq!(seconds("1.25s").as_deref(), Some("1.2 s"));
    }

    #[test]
    fn panics_become_internal_errors() {
        assert_eq!(Error::from_panic(Box::new("static")).message(), "panic (a bug in s3native): static");
        assert_eq!(Error::from_panic(Box::new(format!("formatted {}", 1))).message(), "panic (a bug in s3native): formatted 1");
        let e = Error::from_panic(Box::new(42u8));
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert!(e.message().contains("non-string payload"));
    }
}
