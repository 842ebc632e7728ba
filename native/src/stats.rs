//! Statistics, per writer and process-wide.
//!
//! A [`Recorder`] counts as the writer works; [`Recorder::snapshot`] gives a
//! [`Statistics`] value (serde-serializable, the form handed to C and Java callers).
//! Requests are counted on the wire by the HTTP layer (see `pool::CountingService`), so
//! retries show up as requests beyond the logical operations the writer asked for.
//! All durations are in microseconds.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Kinds of S3 request a writer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    CreateMultipartUpload,
    UploadPart,
    CompleteMultipartUpload,
    AbortMultipartUpload,
    PutObject,
    HeadObject,
    Other,
}

impl RequestKind {
    /// Classify an S3 request by its method and query string (without the `?`), as the
    /// statistics count it: the same rule for the library and for anyone reading a log
    /// of its requests.
    pub fn classify(method: &str, query: &str) -> RequestKind {
        let has = |name: &str| query.split('&').any(|p| p == name || p.starts_with(&format!("{name}=")));
        match method {
            "POST" if has("uploads") => RequestKind::CreateMultipartUpload,
            "POST" if has("uploadId") => RequestKind::CompleteMultipartUpload,
            "PUT" if has("partNumber") => RequestKind::UploadPart,
            "PUT" if query.is_empty() => RequestKind::PutObject,
            "DELETE" if has("uploadId") => RequestKind::AbortMultipartUpload,
            "HEAD" => RequestKind::HeadObject,
            _ => RequestKind::Other,
        }
    }

    /// S3's name of the operation ("UploadPart", ...), or "Other".
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::CreateMultipartUpload => "CreateMultipartUpload",
            RequestKind::UploadPart => "UploadPart",
            RequestKind::CompleteMultipartUpload => "CompleteMultipartUpload",
            RequestKind::AbortMultipartUpload => "AbortMultipartUpload",
            RequestKind::PutObject => "PutObject",
            RequestKind::HeadObject => "HeadObject",
            RequestKind::Other => "Other",
        }
    }
}

const KINDS: usize = 7;

/// Requests sent, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    pub create_multipart_upload: u64,
    pub upload_part: u64,
    pub complete_multipart_upload: u64,
    pub abort_multipart_upload: u64,
    pub put_object: u64,
    pub head_object: u64,
    pub other: u64,
}

impl RequestCounts {
    fn from_array(a: [u64; KINDS]) -> Self {
        RequestCounts {
            create_multipart_upload: a[0],
            upload_part: a[1],
            complete_multipart_upload: a[2],
            abort_multipart_upload: a[3],
            put_object: a[4],
            head_object: a[5],
            other: a[6],
        }
    }

    /// All requests.
    pub fn total(&self) -> u64 {
        self.create_multipart_upload
            + self.upload_part
            + self.complete_multipart_upload
            + self.abort_multipart_upload
            + self.put_object
            + self.head_object
            + self.other
    }
}

/// Summary of a set of durations, in microseconds. Percentiles come from a histogram with
/// two significant digits (within 1%).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DurationSummary {
    pub count: u64,
    pub min_us: u64,
    pub mean_us: u64,
    pub max_us: u64,
    pub p50_us: u64,
    pub p99_us: u64,
}

/// Counters of one writer, or of the whole process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Statistics {
    /// Bytes accepted by `write`.
    pub bytes_written: u64,
    /// Parts uploaded successfully.
    pub parts_uploaded: u64,
    /// Objects written with one PutObject instead of a multipart upload.
    pub single_puts: u64,
    /// Requests sent on the wire, retries included.
    pub requests: RequestCounts,
    /// Requests beyond the operations asked for: retries inside the HTTP client plus the
    /// writer's own abort retries.
    pub retries: u64,
    /// Time callers spent blocked waiting for the memory budget.
    pub budget_blocked_us: u64,
    /// Time callers spent blocked because the writer had its maximum of parts in flight.
    pub in_flight_blocked_us: u64,
    /// Per part: from being handed to the runtime until its first request started.
    pub part_queue_wait: DurationSummary,
    /// Per part: from its first request starting until its last attempt ended.
    pub part_upload_time: DurationSummary,
    /// Process-wide only: writers opened, closed successfully, aborted or failed.
    #[serde(default)]
    pub writers_opened: u64,
    #[serde(default)]
    pub writers_closed: u64,
    #[serde(default)]
    pub writers_aborted: u64,
    /// Process-wide only: times a writer with nothing in flight was admitted beyond the
    /// budget because every holder of the budget was itself waiting (deadlock avoidance).
    #[serde(default)]
    pub budget_overcommits: u64,
    /// Process-wide only: bytes of part buffers held now (being filled or uploading).
    #[serde(default)]
    pub buffer_bytes: u64,
    /// Process-wide only: the most bytes of part buffers held at once since the process
    /// started: the native memory s3native used for data.
    #[serde(default)]
    pub buffer_peak_bytes: u64,
}

/// Live counters behind a [`Statistics`] snapshot.
pub struct Recorder {
    bytes: AtomicU64,
    parts: AtomicU64,
    single_puts: AtomicU64,
    wire: [AtomicU64; KINDS],
    logical: [AtomicU64; KINDS],
    extra_retries: AtomicU64,
    budget_blocked_us: AtomicU64,
    in_flight_blocked_us: AtomicU64,
    queue_wait: Mutex<Histogram<u64>>,
    upload_time: Mutex<Histogram<u64>>,
    writers_opened: AtomicU64,
    writers_closed: AtomicU64,
    writers_aborted: AtomicU64,
    budget_overcommits: AtomicU64,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

fn histogram() -> Histogram<u64> {
    // 1 us .. 1 hour, 2 significant digits: a few KiB.
    Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("valid histogram bounds")
}

fn us(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

impl Recorder {
    /// A recorder with every counter at zero.
    pub fn new() -> Self {
        Recorder {
            bytes: AtomicU64::new(0),
            parts: AtomicU64::new(0),
            single_puts: AtomicU64::new(0),
            wire: Default::default(),
            logical: Default::default(),
            extra_retries: AtomicU64::new(0),
            budget_blocked_us: AtomicU64::new(0),
            in_flight_blocked_us: AtomicU64::new(0),
            queue_wait: Mutex::new(histogram()),
            upload_time: Mutex::new(histogram()),
            writers_opened: AtomicU64::new(0),
            writers_closed: AtomicU64::new(0),
            writers_aborted: AtomicU64::new(0),
            budget_overcommits: AtomicU64::new(0),
        }
    }

    pub(crate) fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Relaxed);
    }
    pub(crate) fn part_uploaded(&self) {
        self.parts.fetch_add(1, Relaxed);
    }
    pub(crate) fn single_put(&self) {
        self.single_puts.fetch_add(1, Relaxed);
    }
    /// One request seen on the wire.
    pub(crate) fn wire_request(&self, kind: RequestKind) {
        self.wire[kind as usize].fetch_add(1, Relaxed);
    }
    /// One operation the writer asked the client for (retries are the difference).
    pub(crate) fn operation(&self, kind: RequestKind) {
        self.logical[kind as usize].fetch_add(1, Relaxed);
    }
    /// Add `other`'s wire requests and operations to this recorder.
    pub(crate) fn add_requests(&self, other: &Recorder) {
        for i in 0..KINDS {
            self.wire[i].fetch_add(other.wire[i].load(Relaxed), Relaxed);
            self.logical[i].fetch_add(other.logical[i].load(Relaxed), Relaxed);
        }
    }
    /// A retry the writer made itself (beyond the HTTP client's own).
    pub(crate) fn retry(&self) {
        self.extra_retries.fetch_add(1, Relaxed);
    }
    pub(crate) fn budget_blocked(&self, d: Duration) {
        self.budget_blocked_us.fetch_add(us(d), Relaxed);
    }
    pub(crate) fn in_flight_blocked(&self, d: Duration) {
        self.in_flight_blocked_us.fetch_add(us(d), Relaxed);
    }
    pub(crate) fn queue_wait(&self, d: Duration) {
        let _ = self.queue_wait.lock().unwrap_or_else(|p| p.into_inner()).record(us(d).max(1));
    }
    pub(crate) fn upload_time(&self, d: Duration) {
        let _ = self.upload_time.lock().unwrap_or_else(|p| p.into_inner()).record(us(d).max(1));
    }
    pub(crate) fn writer_opened(&self) {
        self.writers_opened.fetch_add(1, Relaxed);
    }
    pub(crate) fn writer_closed(&self) {
        self.writers_closed.fetch_add(1, Relaxed);
    }
    pub(crate) fn writer_aborted(&self) {
        self.writers_aborted.fetch_add(1, Relaxed);
    }
    pub(crate) fn budget_overcommit(&self) {
        self.budget_overcommits.fetch_add(1, Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> Statistics {
        let load = |a: &[AtomicU64; KINDS]| {
            let mut out = [0u64; KINDS];
            for (o, v) in out.iter_mut().zip(a) {
                *o = v.load(Relaxed);
            }
            out
        };
        let wire = load(&self.wire);
        let logical = load(&self.logical);
        let retries: u64 = wire.iter().zip(&logical).map(|(w, l)| w.saturating_sub(*l)).sum();
        Statistics {
            bytes_written: self.bytes.load(Relaxed),
            parts_uploaded: self.parts.load(Relaxed),
            single_puts: self.single_puts.load(Relaxed),
            requests: RequestCounts::from_array(wire),
            retries: retries + self.extra_retries.load(Relaxed),
            budget_blocked_us: self.budget_blocked_us.load(Relaxed),
            in_flight_blocked_us: self.in_flight_blocked_us.load(Relaxed),
            part_queue_wait: summary(&self.queue_wait),
            part_upload_time: summary(&self.upload_time),
            writers_opened: self.writers_opened.load(Relaxed),
            writers_closed: self.writers_closed.load(Relaxed),
            writers_aborted: self.writers_aborted.load(Relaxed),
            budget_overcommits: self.budget_overcommits.load(Relaxed),
            buffer_bytes: 0,
            buffer_peak_bytes: 0,
        }
    }
}

fn summary(h: &Mutex<Histogram<u64>>) -> DurationSummary {
    let h = h.lock().unwrap_or_else(|p| p.into_inner());
    if h.is_empty() {
        return DurationSummary::default();
    }
    DurationSummary {
        count: h.len(),
        min_us: h.min(),
        mean_us: h.mean().round() as u64,
        max_us: h.max(),
        p50_us: h.value_at_quantile(0.5),
        p99_us: h.value_at_quantile(0.99),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_are_wire_requests_beyond_operations() {
        let r = Recorder::new();
        r.operation(RequestKind::UploadPart);
        r.wire_request(RequestKind::UploadPart);
        r.wire_request(RequestKind::UploadPart);
        r.operation(RequestKind::PutObject);
        r.wire_request(RequestKind::PutObject);
        let s = r.snapshot();
        assert_eq!(s.requests.upload_part, 2);
        assert_eq!(s.requests.total(), 3);
        assert_eq!(s.retries, 1);
    }

    #[test]
    fn summaries_give_percentiles() {
        let r = Recorder::new();
        for ms in 1..=100 {
            r.queue_wait(Duration::from_millis(ms));
        }
        let s = r.snapshot().part_queue_wait;
        assert_eq!(s.count, 100);
        assert!((990..=1010).contains(&s.min_us), "{s:?}");
        assert!((49_000..=51_000).contains(&s.p50_us), "{s:?}");
        assert!((98_000..=100_500).contains(&s.p99_us), "{s:?}");
        assert!((99_000..=100_500).contains(&s.max_us), "{s:?}");
    }

    #[test]
    fn classifies_requests() {
        assert_eq!(RequestKind::classify("POST", "uploads"), RequestKind::CreateMultipartUpload);
        assert_eq!(RequestKind::classify("POST", "uploads="), RequestKind::CreateMultipartUpload);
        assert_eq!(RequestKind::classify("PUT", "partNumber=3&uploadId=x"), RequestKind::UploadPart);
        assert_eq!(RequestKind::classify("POST", "uploadId=x"), RequestKind::CompleteMultipartUpload);
        assert_eq!(RequestKind::classify("DELETE", "uploadId=x"), RequestKind::AbortMultipartUpload);
        assert_eq!(RequestKind::classify("PUT", ""), RequestKind::PutObject);
        assert_eq!(RequestKind::classify("HEAD", ""), RequestKind::HeadObject);
        assert_eq!(RequestKind::classify("GET", "list-type=2"), RequestKind::Other);
        assert_eq!(RequestKind::classify("PUT", "tagging"), RequestKind::Other);
        assert_eq!(RequestKind::UploadPart.name(), "UploadPart");
        assert_eq!(RequestKind::CompleteMultipartUpload.name(), "CompleteMultipartUpload");
        assert_eq!(RequestKind::Other.name(), "Other");
    }
}
