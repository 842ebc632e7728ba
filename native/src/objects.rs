//! Operations on objects as names under a bucket: [`Objects`] tells whether an object
//! exists (HeadObject), deletes one (DeleteObject), many (DeleteObjects, batched), every
//! object under a directory, and lists a directory lazily, page by page, with names relative
//! to it. What an engine's storage layer (Druid's `StorageConnector`, a committer's cleanup)
//! needs next to the writer and the reader, on the same clients, runtime and statistics.
//!
//! # Facts relied on (Amazon S3 API reference)
//! - DeleteObjects takes at most 1,000 keys per request ([`DELETE_BATCH`]) and answers
//!   per key: a key that failed is listed with its error code (e.g. `AccessDenied`) while
//!   the others are deleted. Deleting a key that does not exist succeeds (204 for
//!   DeleteObject, a `Deleted` entry for DeleteObjects).
//! - ListObjectsV2 returns at most 1,000 keys a page, in UTF-8 binary order, with a
//!   continuation token for the next page; a prefix matches keys byte-wise.
//! - HeadObject answers 404 for a missing key (403 without `s3:ListBucket`).
//!
//! # Directories
//! S3 has no directories: a directory `d` here is every key under `d/` (object_store's
//! prefix rule, path segment by path segment, so `d` does not match `d2/x`); the empty
//! directory `""` is the whole bucket. Names are object_store paths: keys with empty or `.`
//! segments, a trailing `/` or control characters are refused as
//! [`ErrorKind::InvalidArgument`] naming the key, as the writer refuses them.
//!
//! # Threads and interrupts
//! Every method blocks its caller (never run it on an async runtime thread) and polls
//! `interrupted` every 50 ms: when it says true the call stops with
//! [`ErrorKind::Interrupted`] (a batch delete cut short may have deleted some keys).
//! [`Objects`] is `Send + Sync`; a [`Listing`] is used from one thread at a time.

use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;

use crate::config::{Settings, WriterConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{self, Store, REQUEST_STATS};
use crate::stats::{Recorder, RequestKind, Statistics};

/// Keys per DeleteObjects request: S3's maximum.
pub const DELETE_BATCH: usize = 1_000;

/// Names per [`Listing::next_page`]: S3's page size.
pub const LIST_PAGE: usize = 1_000;

/// Failed keys named in the message of [`DeleteOutcome::into_result`]; the rest are counted.
const NAMED_FAILURES: usize = 10;

/// One object: its key (or, from a [`Listing`], its name relative to the directory), its
/// size in bytes and its ETag as S3 sent it. Serialised by name at the boundaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectInfo {
    pub name: String,
    pub size: u64,
    pub etag: Option<String>,
}

/// A key that a delete could not remove, with S3's error code where S3 gave one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyError {
    pub key: String,
    pub code: Option<String>,
    pub message: String,
}

/// What a batch delete did: keys deleted (missing keys count as deleted, as S3 counts them),
/// keys that failed, and the DeleteObjects requests sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteOutcome {
    pub deleted: u64,
    pub failed: Vec<KeyError>,
    pub requests: u64,
}

impl DeleteOutcome {
    /// `Ok` when every key was deleted; else one error naming the first failed keys (and how
    /// many more), with the first failure's S3 code and kind.
    pub fn into_result(self) -> Result<DeleteOutcome> {
        let Some(first) = self.failed.first() else { return Ok(self) };
        let named: Vec<String> = self
            .failed
            .iter()
            .take(NAMED_FAILURES)
            .map(|f| format!("{} ({})", f.key, f.code.as_deref().unwrap_or("no S3 code")))
            .collect();
        let more = self.failed.len().saturating_sub(NAMED_FAILURES);
        let mut message = format!("{} of {} keys could not be deleted: {}", self.failed.len(), self.failed.len() as u64 + self.deleted, named.join(", "));
        if more > 0 {
            message.push_str(&format!(" and {more} more"));
        }
        message.push_str(&format!("; the first: {}", first.message));
        let kind = match first.code.as_deref() {
            Some("AccessDenied") => ErrorKind::AccessDenied,
            _ => ErrorKind::Io,
        };
        Err(Error::new(kind, message))
    }
}

/// The object operations on one bucket, with the endpoint and credentials of `settings` (the
/// keys of [`Writer::open`](crate::Writer::open)); see the module docs.
pub struct Objects {
    bucket: String,
    store: Arc<Store>,
    rt: &'static Runtime,
    recorder: Arc<Recorder>,
}

/// The object_store path of a directory: `None` for the whole bucket.
fn directory(dir: &str) -> Result<Option<Path>> {
    let dir = dir.trim_end_matches('/');
    if dir.is_empty() {
        return Ok(None);
    }
    crate::s3::object_path(dir).map(Some).map_err(|_| {
        Error::invalid_argument(format!("directory '{}': empty or '.' segments and control characters are not supported", dir.escape_debug()))
    })
}

fn key_path(key: &str) -> Result<Path> {
    if key.is_empty() || key.starts_with('/') {
        return Err(Error::invalid_argument(format!("object key '{}' must be non-empty without a leading '/'", key.escape_debug())));
    }
    crate::s3::object_path(key).map_err(|e| e.with_kind(ErrorKind::InvalidArgument))
}

impl Objects {
    /// Objects of `bucket`. Sends no request. Errors: [`ErrorKind::InvalidArgument`] for a bad
    /// bucket or setting (naming the key); [`ErrorKind::Unsupported`] for settings the native
    /// client cannot honour.
    pub fn open(bucket: &str, settings: &Settings) -> Result<Objects> {
        let config = WriterConfig::resolve(settings, bucket)?;
        let rt = pool::apply_process_settings(&config);
        let store = pool::store(&config.store)?;
        Ok(Objects { bucket: bucket.to_string(), store, rt, recorder: Arc::new(Recorder::child_of(pool::global_stats())) })
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The requests these operations sent so far (also counted process-wide).
    pub fn statistics(&self) -> Statistics {
        self.recorder.snapshot()
    }

    fn describe(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }

    fn block_on<F: std::future::Future>(&self, what: &str, interrupted: &dyn Fn() -> bool, fut: F) -> Result<F::Output> {
        pool::block_on(self.rt, what, interrupted, REQUEST_STATS.scope(self.recorder.clone(), fut))
    }

    fn store_error(&self, op: &str, key: &str, e: &object_store::Error) -> Error {
        Error::from_store(format_args!("{op} {}", self.describe(key)), e, &self.store.config.secrets())
    }

    /// The object at `key` (HeadObject), or `None` when there is none (S3 answers 404, also
    /// for a missing bucket).
    pub fn head(&self, key: &str, interrupted: &dyn Fn() -> bool) -> Result<Option<ObjectInfo>> {
        let path = key_path(key)?;
        self.recorder.operation(RequestKind::HeadObject);
        match self.block_on(&format!("HeadObject {}", self.describe(key)), interrupted, self.store.s3.head(&path))? {
            Ok(meta) => Ok(Some(ObjectInfo { name: key.to_string(), size: meta.size, etag: meta.e_tag })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.store_error("HeadObject", key, &e)),
        }
    }

    /// Whether an object is at `key` (one HeadObject).
    pub fn exists(&self, key: &str, interrupted: &dyn Fn() -> bool) -> Result<bool> {
        Ok(self.head(key, interrupted)?.is_some())
    }

    /// Delete the object at `key` (DeleteObject); a missing key is no error (S3 answers 204),
    /// a missing bucket is [`ErrorKind::NotFound`].
    pub fn delete(&self, key: &str, interrupted: &dyn Fn() -> bool) -> Result<()> {
        let path = key_path(key)?;
        self.recorder.operation(RequestKind::Other);
        self.block_on(&format!("DeleteObject {}", self.describe(key)), interrupted, self.store.s3.delete(&path))?
            .map_err(|e| self.store_error("DeleteObject", key, &e))
    }

    /// Delete the objects at `keys` in DeleteObjects requests of up to [`DELETE_BATCH`] keys.
    /// Returns what was deleted and which keys failed (S3's per-key errors); a request that
    /// failed as a whole fails the call. Use [`DeleteOutcome::into_result`] to turn failed
    /// keys into an error. Invalid keys fail the call before any request.
    pub fn delete_many(&self, keys: &[String], interrupted: &dyn Fn() -> bool) -> Result<DeleteOutcome> {
        let paths = keys.iter().map(|k| key_path(k)).collect::<Result<Vec<Path>>>()?;
        self.delete_paths(paths, &format!("DeleteObjects of {} keys in s3://{}", keys.len(), self.bucket), interrupted)
    }

    fn delete_paths(&self, paths: Vec<Path>, what: &str, interrupted: &dyn Fn() -> bool) -> Result<DeleteOutcome> {
        let mut outcome = DeleteOutcome::default();
        for batch in paths.chunks(DELETE_BATCH) {
            self.recorder.operation(RequestKind::Other);
            outcome.requests += 1;
            let input = futures::stream::iter(batch.to_vec().into_iter().map(Ok)).boxed();
            let results: Vec<object_store::Result<Path>> = self.block_on(what, interrupted, self.store.s3.delete_stream(input).collect())?;
            for (path, r) in batch.iter().zip(results) {
                match r {
                    Ok(_) => outcome.deleted += 1,
                    Err(e) => match per_key_failure(&e) {
                        Some((message, code)) => outcome.failed.push(KeyError {
                            key: path.to_string(),
                            code,
                            message: Error::scrub(&format!("DeleteObjects {}: {message}", self.describe(path.as_ref())), &self.store.config.secrets()),
                        }),
                        // The request as a whole failed (object_store names every key of it).
                        None => return Err(Error::from_store(format_args!("{what}"), &e, &self.store.config.secrets())),
                    },
                }
            }
        }
        Ok(outcome)
    }

    /// Delete every object under directory `dir` (see the module docs): list it page by
    /// page and delete each page in one DeleteObjects request. Returns the outcome as
    /// [`Objects::delete_many`] does.
    pub fn delete_recursively(&self, dir: &str, interrupted: &dyn Fn() -> bool) -> Result<DeleteOutcome> {
        let mut listing = self.list(dir)?;
        let mut outcome = DeleteOutcome::default();
        let what = format!("deleting s3://{}/{} recursively", self.bucket, dir.trim_end_matches('/'));
        while let Some(page) = listing.next_paths(interrupted)? {
            let done = self.delete_paths(page, &what, interrupted)?;
            outcome.deleted += done.deleted;
            outcome.requests += done.requests;
            outcome.failed.extend(done.failed);
        }
        Ok(outcome)
    }

    /// A lazy listing of every object under directory `dir` (recursively), names relative to
    /// it (`a/b/c` listed under `a` is `b/c`), in S3's order. Sends nothing until the first
    /// page is asked for.
    pub fn list(&self, dir: &str) -> Result<Listing> {
        let prefix = directory(dir)?;
        let strip = prefix.as_ref().map(|p| format!("{p}/")).unwrap_or_default();
        // Fused: the listing is asked again after its last page.
        let stream = self.store.s3.list(prefix.as_ref()).fuse().boxed();
        Ok(Listing {
            stream: Some(stream),
            strip,
            rt: self.rt,
            recorder: self.recorder.clone(),
            secrets: self.store.config.secrets().iter().map(|s| s.to_string()).collect(),
            describe: format!("s3://{}/{}", self.bucket, dir.trim_end_matches('/')),
        })
    }
}

/// The message and S3 code of one key's failure in a DeleteObjects answer (object_store's
/// `DeleteObjects request failed for key K: MESSAGE (code: CODE)`), or `None` for a failure
/// of the whole request.
fn per_key_failure(e: &object_store::Error) -> Option<(String, Option<String>)> {
    let text = match e {
        object_store::Error::Generic { source, .. } => source.to_string(),
        _ => return None,
    };
    let rest = text.strip_prefix("DeleteObjects request failed for key ")?;
    let (message, code) = match rest.rfind(" (code: ") {
        Some(i) => (&rest[..i], rest[i + " (code: ".len()..].strip_suffix(')').map(str::to_string)),
        None => (rest, None),
    };
    let message = message.split_once(": ").map(|(_, m)| m).unwrap_or(message);
    Some((message.to_string(), code.filter(|c| !c.is_empty())))
}

/// A listing in progress ([`Objects::list`]).
pub struct Listing {
    stream: Option<BoxStream<'static, object_store::Result<ObjectMeta>>>,
    strip: String,
    rt: &'static Runtime,
    recorder: Arc<Recorder>,
    secrets: Vec<String>,
    describe: String,
}

impl Listing {
    /// The next up to [`LIST_PAGE`] objects (what one ListObjectsV2 page holds), names
    /// relative to the directory; `None` when the listing is done. A failed page fails this
    /// call and ends the listing.
    pub fn next_page(&mut self, interrupted: &dyn Fn() -> bool) -> Result<Option<Vec<ObjectInfo>>> {
        let strip = self.strip.clone();
        Ok(self.next_metas(interrupted)?.map(|metas| {
            metas
                .into_iter()
                .map(|m| {
                    let full = m.location.to_string();
                    let name = full.strip_prefix(&strip).unwrap_or(&full).to_string();
                    ObjectInfo { name, size: m.size, etag: m.e_tag }
                })
                .collect()
        }))
    }

    fn next_paths(&mut self, interrupted: &dyn Fn() -> bool) -> Result<Option<Vec<Path>>> {
        Ok(self.next_metas(interrupted)?.map(|metas| metas.into_iter().map(|m| m.location).collect()))
    }

    fn next_metas(&mut self, interrupted: &dyn Fn() -> bool) -> Result<Option<Vec<ObjectMeta>>> {
        let Some(stream) = self.stream.as_mut() else { return Ok(None) };
        let what = format!("listing {}", self.describe);
        let recorder = self.recorder.clone();
        let got = pool::block_on(self.rt, &what, interrupted, REQUEST_STATS.scope(recorder, async {
            let mut page = Vec::new();
            while page.len() < LIST_PAGE {
                match stream.next().await {
                    Some(Ok(meta)) => page.push(meta),
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
            }
            Ok(page)
        }));
        let page = match got {
            Ok(Ok(page)) => page,
            Ok(Err(e)) => {
                self.stream = None;
                let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
                return Err(Error::from_store(format_args!("ListObjectsV2 {}", self.describe), &e, &secrets));
            }
            Err(e) => {
                self.stream = None;
                return Err(e);
            }
        };
        if page.is_empty() {
            self.stream = None;
            return Ok(None);
        }
        self.recorder.operation(RequestKind::Other);
        Ok(Some(page))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_map_to_prefixes() {
        assert_eq!(directory("").unwrap(), None);
        assert_eq!(directory("/").unwrap(), None);
        assert_eq!(directory("a/b/").unwrap().unwrap().as_ref(), "a/b");
        assert_eq!(directory("a//b").unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(key_path("").unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(key_path("a/").unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn failed_keys_are_named_in_the_error() {
        let failed = (0..12)
            .map(|i| KeyError { key: format!("k{i}"), code: Some("AccessDenied".into()), message: format!("DeleteObjects s3://b/k{i}: Access Denied") })
            .collect();
        let e = DeleteOutcome { deleted: 3, failed, requests: 1 }.into_result().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AccessDenied);
        assert!(e.message().starts_with("12 of 15 keys could not be deleted: k0 (AccessDenied), k1"), "{e}");
        assert!(e.message().contains("and 2 more"), "{e}");
        assert!(!e.message().contains("k10 ("), "{e}");
        assert!(DeleteOutcome { deleted: 2, failed: vec![], requests: 1 }.into_result().is_ok());
    }

    #[test]
    fn per_key_failures_are_told_from_request_failures() {
        let key_failed = object_store::Error::Generic {
            store: "S3",
            source: "DeleteObjects request failed for key a/b: Access Denied (code: AccessDenied)".into(),
        };
        assert_eq!(per_key_failure(&key_failed), Some(("Access Denied".to_string(), Some("AccessDenied".to_string()))));
        let request_failed = object_store::Error::Generic { store: "S3", source: "Error performing DeleteObjects request: 500".into() };
        assert_eq!(per_key_failure(&request_failed), None);
        let missing_bucket = object_store::Error::NotFound { path: "a/b".into(), source: "NoSuchBucket".into() };
        assert_eq!(per_key_failure(&missing_bucket), None);
    }
}
