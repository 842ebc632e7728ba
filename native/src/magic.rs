//! The S3A magic committer's file protocol: which paths are magic, their final key, the
//! marker and the `.pending` file (Hadoop's `SinglePendingCommit` JSON).
//!
//! Facts from Apache Hadoop's hadoop-aws, package `org.apache.hadoop.fs.s3a.commit`
//! (`CommitConstants`, `MagicCommitPaths`, `MagicCommitTracker`, `SinglePendingCommit`),
//! summarised in the project's reference/s3a-magic-protocol.md:
//! - Hadoop 3.3.x marks a magic path with an element `__magic`; 3.4.0 and later with an
//!   element starting `__magic_job-` (a plain `__magic` is then an ordinary directory).
//! - The final key drops everything from the magic element to the first `__base` after it
//!   (keeping what follows `__base`), or, without `__base`, keeps only the file name.
//! - A file under a magic path is a multipart upload on the final key, never completed;
//!   on close S3A PUTs a 0-byte marker at the magic path with user metadata
//!   `x-hadoop-s3a-magic-data-length`, then `<magic path>.pending` with the commit data.

use std::sync::Arc;

use bytes::Bytes;
use object_store::{Attribute, AttributeValue, Attributes};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::pool::Store;
use crate::result::UploadResult;
use crate::s3;
use crate::s3a_stats::{stream_iostatistics, IoStatistics, StreamFacts};
use crate::stats::Recorder;

/// `CommitConstants.MAGIC`: the magic directory of Hadoop 3.3.x.
pub const MAGIC: &str = "__magic";
/// `CommitConstants.MAGIC_PATH_PREFIX`: the magic directory prefix of Hadoop 3.4+.
pub const MAGIC_PATH_PREFIX: &str = "__magic_job-";
/// `CommitConstants.BASE`: the directory under which the destination's relative path starts.
pub const BASE: &str = "__base";
/// `CommitConstants.PENDING_SUFFIX`.
pub const PENDING_SUFFIX: &str = ".pending";
/// `CommitConstants.PENDINGSET_SUFFIX`.
pub const PENDINGSET_SUFFIX: &str = ".pendingset";
/// User metadata on the marker giving the data length (`X_HEADER_MAGIC_MARKER`); on the
/// wire `x-amz-meta-x-hadoop-s3a-magic-data-length`.
pub const MAGIC_MARKER_HEADER: &str = "x-hadoop-s3a-magic-data-length";

/// How the Hadoop line on the classpath marks magic paths. Its name at the boundaries (JNI)
/// is the serde name: `MAGIC`, `MAGIC_JOB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MagicLayout {
    /// Hadoop 3.3.x: an element exactly `__magic`.
    Magic,
    /// Hadoop 3.4.0 and later: the first element starting with `__magic_job-`.
    MagicJob,
}

/// How the `etags` of a `.pending` file are encoded: the form the Hadoop on the classpath
/// reads (found by reflection on its `SinglePendingCommit`; each reader rejects the others).
/// Its name at the boundaries is the serde name: `UNQUOTED`, `QUOTED`, `OBJECTS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PendingEtags {
    /// A list of strings without the quotes S3 sends (Hadoop 3.3, AWS SDK v1).
    Unquoted,
    /// A list of strings as S3 returns them, quotes included (Hadoop 3.4.0/3.4.1, SDK v2).
    Quoted,
    /// A list of `{"etag": "\"...\"", "checksumAlgorithm": null, "checksum": null}` objects
    /// (after HADOOP-15224: Hadoop 3.5.0).
    Objects,
}

/// What a magic file needs beyond a plain upload: where its marker and `.pending` go and
/// how to write them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MagicFile {
    /// Key of the file as the task wrote it (under the magic directory).
    pub magic_key: String,
    /// Key the data is uploaded to, where job commit makes it visible.
    pub final_key: String,
    /// Form of the `.pending` file's etags.
    pub etags: PendingEtags,
}

impl MagicFile {
    /// The magic file for `magic_key` (an object key, no leading `/`) under `layout`, or
    /// `Ok(None)` when the key is not a magic path (including `.pending` and
    /// `.pendingset` files, which are never redirected).
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::error::ErrorKind::InvalidArgument) for a
    /// magic path with nothing under the magic directory, or nothing after `__base`.
    pub fn for_key(magic_key: &str, layout: MagicLayout, etags: PendingEtags) -> Result<Option<MagicFile>> {
        Ok(final_key(magic_key, layout)?.map(|final_key| MagicFile {
            magic_key: magic_key.to_string(),
            final_key,
            etags,
        }))
    }

    /// Key of the `.pending` file.
    pub fn pending_key(&self) -> String {
        format!("{}{PENDING_SUFFIX}", self.magic_key)
    }
}

/// Close of a magic file, after its parts are uploaded: the marker, then the `.pending`
/// file, S3A's order and 2 PUTs and nothing else. The marker is 0 bytes at the magic key
/// with `Content-Type: application/octet-stream` and user metadata
/// [`MAGIC_MARKER_HEADER`] = the data length; both objects get the upload's storage class.
/// `now_millis` is the `.pending` file's creation time.
///
/// Errors: S3's answer to either PUT (the caller then aborts the upload).
pub(crate) async fn put_files(
    store: &Store,
    file: &MagicFile,
    uri: &str,
    result: &UploadResult,
    storage_class: Option<AttributeValue>,
    now_millis: i64,
    stats: &Arc<Recorder>,
) -> Result<()> {
    let mut pending_attrs = Attributes::new();
    if let Some(c) = storage_class {
        pending_attrs.insert(Attribute::StorageClass, c);
    }
    let mut marker_attrs = pending_attrs.clone();
    marker_attrs.insert(Attribute::ContentType, "application/octet-stream".into());
    marker_attrs.insert(Attribute::Metadata(MAGIC_MARKER_HEADER.into()), result.length.to_string().into());
    let marker = s3::object_path(&file.magic_key)?;
    s3::put_object(store, &marker, Bytes::new().into(), marker_attrs, "PutObject (magic marker)", stats).await?;
    // The stream's statistics as S3A's tracker records them: after the marker, before the .pending.
    let io = stream_iostatistics(&stats.snapshot(), StreamFacts { magic: true, ..Default::default() });
    let pending = pending_json(file, uri, result, now_millis, &io)?;
    let path = s3::object_path(&file.pending_key())?;
    s3::put_object(store, &path, Bytes::from(pending).into(), pending_attrs, "PutObject (.pending)", stats).await?;
    Ok(())
}

/// The final key of a magic path, or `None` when `key` is not magic under `layout`.
pub fn final_key(key: &str, layout: MagicLayout) -> Result<Option<String>> {
    let elements: Vec<&str> = key.split('/').filter(|e| !e.is_empty()).collect();
    let Some(last) = elements.last() else { return Ok(None) };
    if last.ends_with(PENDING_SUFFIX) || last.ends_with(PENDINGSET_SUFFIX) {
        return Ok(None);
    }
    let is_magic = |e: &&str| match layout {
        MagicLayout::Magic => *e == MAGIC,
        MagicLayout::MagicJob => e.starts_with(MAGIC_PATH_PREFIX),
    };
    let Some(m) = elements.iter().position(is_magic) else { return Ok(None) };
    let (parents, children) = (&elements[..m], &elements[m + 1..]);
    if children.is_empty() {
        return Err(Error::invalid_argument(format!("No path found under the prefix {}", elements[..=m].join("/"))));
    }
    let tail: &[&str] = match children.iter().position(|e| *e == BASE) {
        Some(b) if b + 1 == children.len() => {
            return Err(Error::invalid_argument(format!("No path found under {BASE} in {key}")))
        }
        Some(b) => &children[b + 1..],
        None => &children[children.len() - 1..],
    };
    Ok(Some(parents.iter().chain(tail).copied().collect::<Vec<_>>().join("/")))
}

#[derive(Serialize)]
#[serde(untagged)]
enum EtagList<'a> {
    Strings(Vec<&'a str>),
    Objects(Vec<EtagObject<'a>>),
}

/// One part's entry in the `Objects` form.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EtagObject<'a> {
    etag: &'a str,
    checksum_algorithm: Option<&'a str>,
    checksum: Option<&'a str>,
}

/// The `.pending` JSON (`SinglePendingCommit`, version 2) for a magic file's deferred upload,
/// in the compact one-line form Hadoop 3.3.5+ writes. `uri` is the magic path as a URI
/// (`s3a://bucket/...`); `now_millis` the creation time; `iostatistics` the stream's
/// statistics in S3A's names (never null: task commit calls `clear()` on them), which task and
/// job commit add up into the `.pendingset` files and `_SUCCESS`.
pub fn pending_json(file: &MagicFile, uri: &str, result: &UploadResult, now_millis: i64, iostatistics: &IoStatistics) -> Result<String> {
    let upload_id = result
        .upload_id
        .as_deref()
        .ok_or_else(|| Error::invalid_argument("a magic file needs a multipart upload id"))?;
    let etags = match file.etags {
        PendingEtags::Unquoted => EtagList::Strings(result.etags.iter().map(|e| e.trim_matches('"')).collect()),
        PendingEtags::Quoted => EtagList::Strings(result.etags.iter().map(String::as_str).collect()),
        PendingEtags::Objects => EtagList::Objects(
            result.etags.iter().map(|etag| EtagObject { etag, checksum_algorithm: None, checksum: None }).collect(),
        ),
    };
    let part_count = result.etags.len();
    // Fields in the order Hadoop writes them (a struct serialises in declaration order).
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Pending<'a> {
        version: i32,
        filename: Option<&'a str>,
        uri: &'a str,
        upload_id: &'a str,
        bucket: &'a str,
        destination_key: &'a str,
        created: i64,
        saved: i64,
        date: String,
        job_id: &'a str,
        task_id: &'a str,
        text: &'a str,
        etags: EtagList<'a>,
        extra_data: Map<String, Value>,
        length: u64,
        iostatistics: &'a IoStatistics,
        part_count: usize,
    }
    let pending = Pending {
        version: 2,
        filename: None,
        uri,
        upload_id,
        bucket: &result.bucket,
        destination_key: &file.final_key,
        created: now_millis,
        saved: now_millis,
        date: java_date(now_millis),
        job_id: "",
        task_id: "",
        text: "",
        part_count,
        etags,
        extra_data: Map::new(),
        length: result.length,
        iostatistics,
    };
    serde_json::to_string(&pending).map_err(|e| Error::new(ErrorKind::Internal, format!("pending JSON: {e}")))
}

/// `java.util.Date.toString()` in UTC, e.g. `Fri May 31 16:08:04 UTC 2024`.
fn java_date(millis: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(millis) {
        Some(t) => t.format("%a %b %d %H:%M:%S UTC %Y").to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Statistics;

    fn fk(key: &str, layout: MagicLayout) -> Option<String> {
        final_key(key, layout).unwrap()
    }

    #[test]
    fn final_keys_follow_hadoop() {
        use MagicLayout::*;
        let cases = [
            ("wh/t/__magic_job-2b1c/job-2b1c/00/tasks/attempt_20240531160804_0003_m_000007_12/__base/part-00007.parquet", "wh/t/part-00007.parquet"),
            ("wh/t/__magic_job-2b1c/job-2b1c/00/tasks/attempt_x_12/__base/year=2024/month=05/part-0.parquet", "wh/t/year=2024/month=05/part-0.parquet"),
            ("out/__magic_job-7/job-7/00/tasks/attempt_x/sub/dir/file.txt", "out/file.txt"),
            ("__magic_job-1/x/y.txt", "y.txt"),
            ("__base/home/__magic_job-2/x/3.txt", "__base/home/3.txt"),
            ("a/__magic_job-1/b/__base/c/__base/d.txt", "a/c/__base/d.txt"),
        ];
        for (key, want) in cases {
            assert_eq!(fk(key, MagicJob).as_deref(), Some(want), "{key}");
        }
        let v33 = "out/__magic/job-U/00/tasks/attempt_x/__base/a/b.csv";
        assert_eq!(fk(v33, Magic).as_deref(), Some("out/a/b.csv"));
        assert_eq!(fk(v33, MagicJob), None, "a plain __magic is not magic on 3.4+");
        assert_eq!(fk("out/__magic_job-1/a/__base/x.pending", MagicJob), None);
        assert_eq!(fk("out/__magic_job-1/a/t.pendingset", MagicJob), None);
        assert_eq!(fk("plain/key.txt", MagicJob), None);
        assert!(final_key("out/__magic_job-1", MagicJob).is_err());
        assert!(final_key("out/__magic_job-1/a/__base", MagicJob).is_err());
    }

    #[test]
    fn pending_json_has_every_field_in_hadoops_form() {
        let file = MagicFile::for_key("t/__magic_job-1/j/00/tasks/a/__base/p.parquet", MagicLayout::MagicJob, PendingEtags::Quoted)
            .unwrap()
            .unwrap();
        let result = UploadResult {
            bucket: "b".into(),
            key: "t/p.parquet".into(),
            upload_id: Some("UP".into()),
            etags: vec!["\"e1\"".into(), "\"e2\"".into()],
            checksums: vec![],
            checksum_algorithm: None,
            length: 7,
            completed: false,
            statistics: Statistics::default(),
        };
        let json = pending_json(&file, "s3a://b/t/__magic_job-1/j/00/tasks/a/__base/p.parquet", &result, 1717171684123, &IoStatistics::default()).unwrap();
        assert_eq!(
            json,
            r#"{"version":2,"filename":null,"uri":"s3a://b/t/__magic_job-1/j/00/tasks/a/__base/p.parquet","uploadId":"UP","bucket":"b","destinationKey":"t/p.parquet","created":1717171684123,"saved":1717171684123,"date":"Fri May 31 16:08:04 UTC 2024","jobId":"","taskId":"","text":"","etags":["\"e1\"","\"e2\""],"extraData":{},"length":7,"iostatistics":{"counters":{},"gauges":{},"minimums":{},"maximums":{},"meanstatistics":{}},"partCount":2}"#
        );
        let unquoted = MagicFile { etags: PendingEtags::Unquoted, ..file.clone() };
        assert!(pending_json(&unquoted, "u", &result, 0, &IoStatistics::default()).unwrap().contains(r#""etags":["e1","e2"]"#));
        let objects = MagicFile { etags: PendingEtags::Objects, ..file };
        assert!(pending_json(&objects, "u", &result, 0, &IoStatistics::default())
            .unwrap()
            .contains(r#""etags":[{"etag":"\"e1\"","checksumAlgorithm":null,"checksum":null},"#));
    }
}
