//! The S3 requests a writer sends, one function per operation, each counted as an operation
//! on the caller's [`Recorder`] (the wire requests, retries included, are counted by the
//! HTTP layer: see [`pool::REQUEST_STATS`]). Facts from the S3 API reference and
//! reference/s3-rules.md: a multipart upload neither completed nor aborted stays, billed and
//! unlisted, so aborts are retried beyond the client's own retries; CompleteMultipartUpload
//! answers `NoSuchUpload` when the upload is gone, also when a lost earlier attempt of the
//! same call completed it.
//!
//! # Create if absent
//! A create-if-absent write (S3A's conditional create, Hadoop 3.5's
//! `fs.s3a.create.conditional.enabled`) sends `If-None-Match: *` on its PutObject
//! ([`put_new_object`], object_store's `PutMode::Create`) or its CompleteMultipartUpload
//! ([`complete_new_upload`], the header added by the HTTP connector: see
//! [`pool::COMPLETE_IF_ABSENT`]). S3 answers 412 `PreconditionFailed` when an object is at
//! the key; that is [`ErrorKind::AlreadyExists`]. A 412 to a request the client *retried*
//! may answer our own earlier attempt, which reached S3 while its answer was lost: then the
//! object is HEADed and counts as ours when its length and ETag are exactly what this write
//! produces (the MD5 of the body for a PutObject, [`UploadResult::multipart_etag`] for a
//! multipart upload). With SSE-KMS or SSE-C, whose ETags are not MD5s, such a 412 stays
//! `AlreadyExists`: it cannot be told from someone else's object, and a false failure is
//! safer than a false create.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{Attributes, GetOptions, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult};

use crate::error::{Error, ErrorKind, Result};
use crate::pool::{self, Store, REQUEST_STATS};
use crate::result::UploadResult;
use crate::stats::{Recorder, RequestKind};

/// Backoff between the attempts of an abort: 4 attempts, 0.2 s, 1 s and 3 s apart (each
/// attempt with the client's own retries).
const ABORT_BACKOFF: ExponentialBuilder = ExponentialBuilder::new()
    .with_min_delay(Duration::from_millis(200))
    .with_factor(5.0)
    .with_max_delay(Duration::from_secs(3))
    .with_max_times(3);

/// S3's answers that mean the credentials must be fetched again.
const EXPIRED_CREDENTIALS: [&str; 3] = ["ExpiredToken", "InvalidToken", "TokenRefreshRequired"];

/// Send one operation of `kind` (`request()` makes its request), counting it on `stats` and
/// its requests on the wire. When the store's credentials come from a source and S3 answers
/// that they expired, the cache is dropped and the request sent once more (counted as a
/// retry).
async fn send<T, Fut>(store: &Store, stats: &Arc<Recorder>, kind: RequestKind, request: impl Fn() -> Fut) -> object_store::Result<T>
where
    Fut: Future<Output = object_store::Result<T>>,
{
    stats.operation(kind);
    let out = REQUEST_STATS.scope(stats.clone(), request()).await;
    match (&out, &store.config.credentials) {
        (Err(e), Some(credentials)) if crate::error::s3_code_of(e).is_some_and(|c| EXPIRED_CREDENTIALS.contains(&c.as_str())) => {
            credentials.invalidate().await;
            REQUEST_STATS.scope(stats.clone(), request()).await
        }
        _ => out,
    }
}

/// The object_store path of `key`, which must stay exactly `key`: object_store normalises
/// keys (drops a trailing `/`, empty and `.` segments) and refuses control characters, so
/// such keys are reported as [`ErrorKind::Unsupported`] (the JVM layer then writes the file
/// through stock S3A) rather than written somewhere else.
pub(crate) fn object_path(key: &str) -> Result<Path> {
    match Path::parse(key) {
        Ok(p) if p.as_ref() == key => Ok(p),
        _ => Err(Error::new(
            ErrorKind::Unsupported,
            format!("object key '{}': keys with a trailing '/', empty or '.' segments or control characters are not supported by the native writer", key.escape_debug()),
        )),
    }
}

fn describe(store: &Store, path: &Path) -> String {
    format!("s3://{}/{path}", store.config.bucket)
}

fn store_error(store: &Store, op: &str, path: &Path, e: &object_store::Error) -> Error {
    Error::from_store(format_args!("{op} {}", describe(store, path)), e, &store.config.secrets())
}

/// GetObject of `path` with `options` (a range, `If-Match`; `head` for a HeadObject), the
/// body read whole: the object's metadata and bytes. For the reader, which maps the errors
/// (a 412 to `If-Match` means the object changed).
pub(crate) async fn get_object(store: &Store, path: &Path, options: GetOptions, stats: &Arc<Recorder>) -> object_store::Result<(ObjectMeta, bytes::Bytes)> {
    let kind = if options.head { RequestKind::HeadObject } else { RequestKind::Other };
    send(store, stats, kind, || async {
        let r = store.s3.get_opts(path, options.clone()).await?;
        let meta = r.meta.clone();
        Ok((meta, r.bytes().await?))
    })
    .await
}

/// CreateMultipartUpload; returns the upload id.
pub(crate) async fn create_upload(store: &Store, path: &Path, attributes: Attributes, stats: &Arc<Recorder>) -> Result<String> {
    let opts = || PutMultipartOptions { attributes: attributes.clone(), ..Default::default() };
    send(store, stats, RequestKind::CreateMultipartUpload, || store.s3.create_multipart_opts(path, opts()))
        .await
        .map_err(|e| store_error(store, "CreateMultipartUpload", path, &e))
}

/// UploadPart of part `idx` (0-based; S3's part number `idx + 1`).
pub(crate) async fn upload_part(store: &Store, path: &Path, id: &str, idx: usize, data: PutPayload, stats: &Arc<Recorder>) -> Result<PartId> {
    let id = id.to_string();
    send(store, stats, RequestKind::UploadPart, || store.s3.put_part(path, &id, idx, data.clone()))
        .await
        .map_err(|e| store_error(store, &format!("UploadPart {}", idx + 1), path, &e))
}

/// PutObject of a whole object; `what` names it in errors (e.g. "PutObject (.pending)").
pub(crate) async fn put_object(
    store: &Store,
    path: &Path,
    body: PutPayload,
    attributes: Attributes,
    what: &str,
    stats: &Arc<Recorder>,
) -> Result<PutResult> {
    let opts = || PutOptions { attributes: attributes.clone(), ..Default::default() };
    send(store, stats, RequestKind::PutObject, || store.s3.put_opts(path, body.clone(), opts()))
        .await
        .map_err(|e| store_error(store, what, path, &e))
}

/// PutObject of a whole object only when no object is at the key (`If-None-Match: *`); see
/// the module docs. Errors: [`ErrorKind::AlreadyExists`] when one is.
pub(crate) async fn put_new_object(store: &Store, path: &Path, body: PutPayload, attributes: Attributes, stats: &Arc<Recorder>) -> Result<PutResult> {
    let opts = || PutOptions { mode: PutMode::Create, attributes: attributes.clone(), ..Default::default() };
    // This call's own recorder tells whether the client retried.
    let attempts = Arc::new(Recorder::new());
    let sent = send(store, &attempts, RequestKind::PutObject, || store.s3.put_opts(path, body.clone(), opts())).await;
    let retried = attempts.snapshot().requests.put_object > 1;
    stats.add_requests(&attempts);
    let e = match sent {
        Ok(put) => return Ok(put),
        Err(e) => store_error(store, "PutObject (create if absent)", path, &e),
    };
    if e.kind() != ErrorKind::AlreadyExists {
        return Err(e);
    }
    let e = already_exists(store, path, e);
    if !retried {
        return Err(e);
    }
    // S3's ETag of a PUT is the body's MD5, except with SSE-KMS, DSSE-KMS and SSE-C.
    let md5_etag = matches!(store.config.encryption, None | Some(crate::config::Encryption::SseS3));
    let ours = md5_etag.then(|| {
        use md5::{Digest, Md5};
        let mut md5 = Md5::new();
        for chunk in &body {
            md5.update(chunk);
        }
        hex::encode(md5.finalize())
    });
    settle_by_head(store, path, body.content_length() as u64, ours, e, stats).await
}

/// The AlreadyExists error of a create-if-absent write to `path`, in words that name the key.
fn already_exists(store: &Store, path: &Path, e: Error) -> Error {
    e.context_after(format!("an object already exists at {} and the write asked not to replace one (If-None-Match: *)", describe(store, path)))
}

/// After a 412 to a retried create-if-absent request: HEAD the object and return success
/// when it is this write's own (length `length`, ETag `etag`), else `err`.
async fn settle_by_head(store: &Store, path: &Path, length: u64, etag: Option<String>, err: Error, stats: &Arc<Recorder>) -> Result<PutResult> {
    let Some(want) = etag else {
        return Err(err.context_after("the request was retried, but with this encryption the ETag cannot tell this write's own object from another"));
    };
    match send(store, stats, RequestKind::HeadObject, || store.s3.head(path)).await {
        Ok(meta) => {
            let found = meta.e_tag.as_deref().unwrap_or("").trim_matches('"').to_string();
            if meta.size == length && found == want {
                Ok(PutResult { e_tag: meta.e_tag, version: meta.version, extensions: Default::default() })
            } else {
                Err(err.context_after(format!("the object there (ETag {found}, {} bytes) is not this write's", meta.size)))
            }
        }
        Err(_) => Err(err),
    }
}

/// AbortMultipartUpload with up to 4 attempts ([`ABORT_BACKOFF`]); an upload already gone
/// counts as aborted. A final failure names the upload id so an operator can abort it by
/// hand.
pub(crate) async fn abort_upload(store: &Store, path: &Path, id: &str, stats: &Arc<Recorder>) -> Result<()> {
    let id = id.to_string();
    let attempt = || async { send(store, stats, RequestKind::AbortMultipartUpload, || store.s3.abort_multipart(path, &id)).await };
    match attempt
        .retry(ABORT_BACKOFF)
        .when(|e| !matches!(e, object_store::Error::NotFound { .. }))
        .notify(|_, _| stats.retry())
        .await
    {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(Error::from_store(
            format_args!(
                "AbortMultipartUpload of upload id {id} for {} (abort it by hand, or let a bucket lifecycle rule AbortIncompleteMultipartUpload do it)",
                describe(store, path)
            ),
            &e,
            &store.config.secrets(),
        )),
    }
}

/// CompleteMultipartUpload for `result`.
///
/// `NoSuchUpload` means success only when an earlier attempt of this very call reached S3
/// and its answer was lost (the client retried): then the object is HEADed and must have
/// this result's length and ETag ([`UploadResult::multipart_etag`]; with SSE-KMS or SSE-C,
/// where part ETags are not MD5s, the `-N` part count alone). A first attempt answered
/// `NoSuchUpload` is a failure: the upload was aborted or completed by someone else.
pub(crate) async fn complete_upload(store: &Store, result: &UploadResult, stats: &Arc<Recorder>) -> Result<()> {
    complete(store, result, false, stats).await
}

/// [`complete_upload`] only when no object is at the key (`If-None-Match: *`); see the
/// module docs. Errors: [`ErrorKind::AlreadyExists`] when one is.
pub(crate) async fn complete_new_upload(store: &Store, result: &UploadResult, stats: &Arc<Recorder>) -> Result<()> {
    complete(store, result, true, stats).await
}

async fn complete(store: &Store, result: &UploadResult, if_absent: bool, stats: &Arc<Recorder>) -> Result<()> {
    let id = result.upload_id.clone().ok_or_else(|| Error::invalid_argument("the result has no upload id"))?;
    let path = Path::parse(&result.key).map_err(|e| Error::invalid_argument(format!("key: {e}")))?;
    let parts = result.part_ids()?;
    let n = parts.len();
    if n == 0 {
        return Err(Error::invalid_argument("the result lists no parts"));
    }
    // This call's own recorder tells whether the client retried.
    let attempts = Arc::new(Recorder::new());
    let request = send(store, &attempts, RequestKind::CompleteMultipartUpload, || store.s3.complete_multipart(&path, &id, parts.clone()));
    let sent = if if_absent { pool::COMPLETE_IF_ABSENT.scope((), request).await } else { request.await };
    let retried = attempts.snapshot().requests.complete_multipart_upload > 1;
    stats.add_requests(&attempts);
    let Err(e) = sent else { return Ok(()) };
    let err = store_error(store, "CompleteMultipartUpload", &path, &e);
    // The condition failed: 412, or (S3 Express) 200 with a PreconditionFailed error body.
    let precondition_failed = matches!(e, object_store::Error::Precondition { .. }) || err.s3_code() == Some("PreconditionFailed");
    if if_absent && precondition_failed {
        let err = already_exists(store, &path, err.with_kind(ErrorKind::AlreadyExists));
        if !retried {
            return Err(err);
        }
        return settle_by_head(store, &path, result.length, result.multipart_etag(), err, stats).await.map(|_| ());
    }
    if !retried || err.kind() != ErrorKind::NotFound || err.s3_code() == Some("NoSuchBucket") {
        return Err(err);
    }
    let head = send(store, stats, RequestKind::HeadObject, || store.s3.head(&path)).await;
    match head {
        Ok(meta) if meta.size == result.length => {
            let etag = meta.e_tag.as_deref().unwrap_or("").trim_matches('"').to_string();
            let matches = match result.multipart_etag() {
                Some(want) => etag == want,
                None => etag.ends_with(&format!("-{n}")),
            };
            if matches {
                Ok(())
            } else {
                Err(err.context(format!("the object at the key has ETag {etag}, not this upload's")))
            }
        }
        _ => Err(err),
    }
}
