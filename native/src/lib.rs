//! # s3native: a native S3 multipart writer for JVM data engines
//!
//! A [`Writer`] streams bytes to one S3 object as a multipart upload on a shared native
//! runtime, with bounded memory and no local disk:
//!
//! ```no_run
//! use s3native::{Mode, Settings, Writer};
//! let settings = Settings::new()
//!     .with("fs.s3a.endpoint", "http://127.0.0.1:9000")
//!     .with("fs.s3a.path.style.access", "true")
//!     .with("fs.s3a.access.key", "AKIA...")
//!     .with("fs.s3a.secret.key", "...");
//! let mut w = Writer::open("bucket", "dir/file.parquet", Mode::Publish, &settings)?;
//! w.write(b"hello")?;
//! let result = w.close()?; // one PutObject: the data fit in the first part
//! assert_eq!(result.length, 5);
//! # Ok::<(), s3native::Error>(())
//! ```
//!
//! A file under an S3A magic-committer path is written with [`Writer::open_magic`]: the
//! upload goes to the final key and is never completed; close PUTs the marker and the
//! `.pending` file that Hadoop's own task and job commit read (see [`magic`]).
//!
//! Layers: [`config`] (S3A keys to a validated [`WriterConfig`]), [`pool`] (runtime, memory
//! budget, client cache, process-wide statistics), `writer` (one upload's state machine),
//! [`stats`], [`error`]; `ffi` is the C ABI over the same API (header:
//! `native/include/s3native.h`).
//!
//! S3 facts relied on (AWS S3 user guide, "Amazon S3 multipart upload limits"): parts are
//! numbered 1..=10,000; every part but the last is 5 MiB to 5 GiB; an object is at most
//! 5 TiB; a multipart upload neither completed nor aborted stays, billed and unlisted.

pub mod config;
pub mod error;
mod ffi;
mod jni;
pub mod magic;
pub mod pool;
pub mod stats;
mod writer;

pub use config::{Settings, WriterConfig};
pub use error::{Error, ErrorKind, Result};
pub use stats::{DurationSummary, RequestCounts, Statistics};
pub use magic::{MagicFile, MagicLayout, PendingEtags};
pub use writer::{abort, abort_open_uploads, complete, AbortHandle, Mode, UploadResult, Writer};

/// Process-wide statistics of every writer in this process so far, with the part-buffer
/// bytes held now and at most ([`Statistics::buffer_bytes`], [`Statistics::buffer_peak_bytes`]).
pub fn global_statistics() -> Statistics {
    let budget = pool::budget().snapshot();
    Statistics { buffer_bytes: budget.used, buffer_peak_bytes: budget.peak, ..pool::global_stats().snapshot() }
}
