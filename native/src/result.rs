//! What a closed writer produced: [`UploadResult`], its JSON form, and its translation to
//! and from object_store's part ids.
//!
//! The JSON form (serde, field names as below) is the one form of a result outside the
//! process: the C ABI hands it out (`s3n_result_to_json`), the JVM keeps it verbatim, and
//! [`complete`](crate::complete) / [`abort`](crate::abort) read it in another process.

use object_store::multipart::PartId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::stats::Statistics;

/// What a closed writer produced. Serializable (serde_json via [`UploadResult::to_json`])
/// so another process can complete or abort a deferred upload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadResult {
    pub bucket: String,
    pub key: String,
    /// The multipart upload id; `None` for a single PUT.
    pub upload_id: Option<String>,
    /// ETags as S3 returned them (quotes included), entry i for part i+1; for a single PUT
    /// the object's ETag.
    pub etags: Vec<String>,
    /// Per-part checksums (base64) when a checksum mode was set, else empty.
    #[serde(default)]
    pub checksums: Vec<String>,
    /// `SHA256` or `CRC64NVME` when `checksums` is not empty.
    #[serde(default)]
    pub checksum_algorithm: Option<String>,
    /// Object length in bytes.
    pub length: u64,
    /// True when the object is visible (Publish mode), false for a deferred upload.
    pub completed: bool,
    /// The writer's statistics at close; all zero when the JSON has none (a result built
    /// only to abort an upload: bucket, key, upload id).
    #[serde(default)]
    pub statistics: Statistics,
}

impl UploadResult {
    /// The result as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("UploadResult serializes")
    }

    /// Parse a result written by [`UploadResult::to_json`].
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::error::ErrorKind::InvalidArgument) when `json`
    /// is not such a result.
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::invalid_argument(format!("not an UploadResult: {e}")))
    }

    /// The parts as object_store's [`PartId`]s, for CompleteMultipartUpload.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::error::ErrorKind::InvalidArgument) when the
    /// checksums do not match the ETags or name an unknown algorithm.
    pub(crate) fn part_ids(&self) -> Result<Vec<PartId>> {
        if !self.checksums.is_empty() && self.checksums.len() != self.etags.len() {
            return Err(Error::invalid_argument("UploadResult has a different number of checksums and etags"));
        }
        let tag = match self.checksum_algorithm.as_deref() {
            None => None,
            Some("SHA256") => Some("checksum_sha256"),
            Some("CRC64NVME") => Some("checksum_crc64nvme"),
            Some(other) => return Err(Error::invalid_argument(format!("unknown checksum algorithm {other}"))),
        };
        Ok(self
            .etags
            .iter()
            .enumerate()
            .map(|(i, etag)| PartId {
                content_id: match (tag, self.checksums.get(i)) {
                    // object_store's opaque form of a part id that carries a checksum.
                    (Some(tag), Some(sum)) => format!(
                        "<PartMetadata><e_tag>{}</e_tag><{tag}>{}</{tag}></PartMetadata>",
                        xml_escape(etag),
                        xml_escape(sum)
                    ),
                    _ => etag.clone(),
                },
            })
            .collect())
    }

    /// S3's ETag of this result once completed as a multipart upload,
    /// `md5(md5(part 1) .. md5(part N))-N` in hex, when every part ETag is an MD5 (32 hex
    /// digits); `None` otherwise (SSE-KMS, SSE-C).
    pub(crate) fn multipart_etag(&self) -> Option<String> {
        use md5::{Digest, Md5};
        let mut md5 = Md5::new();
        for etag in &self.etags {
            let mut digest = [0u8; 16];
            hex::decode_to_slice(etag.trim_matches('"'), &mut digest).ok()?;
            md5.update(digest);
        }
        Some(format!("{}-{}", hex::encode(md5.finalize()), self.etags.len()))
    }
}

/// Split object_store's part id into (ETag, checksum).
pub(crate) fn split_part_id(content_id: &str) -> (String, Option<String>) {
    if !content_id.starts_with('<') {
        return (content_id.to_string(), None);
    }
    let field = |tag: &str| {
        let open = format!("<{tag}>");
        let start = content_id.find(&open)? + open.len();
        let end = content_id[start..].find(&format!("</{tag}>"))?;
        Some(xml_unescape(&content_id[start..start + end]))
    };
    let etag = field("e_tag").unwrap_or_default();
    (etag, field("checksum_sha256").or_else(|| field("checksum_crc64nvme")))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(etags: &[&str]) -> UploadResult {
        UploadResult {
            bucket: "b".into(),
            key: "k".into(),
            upload_id: Some("u".into()),
            etags: etags.iter().map(|e| e.to_string()).collect(),
            checksums: Vec::new(),
            checksum_algorithm: None,
            length: 1,
            completed: false,
            statistics: Statistics::default(),
        }
    }

    #[test]
    fn a_result_without_statistics_reads_with_zero_statistics() {
        let json = r#"{"bucket":"b","key":"k","upload_id":"u","etags":[],"length":0,"completed":false}"#;
        let r = UploadResult::from_json(json).expect("a result without statistics is readable");
        assert_eq!(r.statistics, Statistics::default());
        assert_eq!((r.bucket.as_str(), r.key.as_str(), r.upload_id.as_deref()), ("b", "k", Some("u")));
    }

    #[test]
    fn multipart_etags_are_computed_as_s3_does() {
        // Two parts of "a" and "b": md5(md5("a") || md5("b")) with a -2 suffix.
        let r = result(&["\"0cc175b9c0f1b6a831c399e269772661\"", "92eb5ffee6ae2fec3ad71c777531578f"]);
        assert_eq!(r.multipart_etag().as_deref(), Some("96e024ba2074fe77e8e965ba43a704be-2"));
        assert_eq!(result(&["kms-etag"]).multipart_etag(), None);
    }

    #[test]
    fn part_ids_round_trip_with_checksums() {
        let id = "<PartMetadata><e_tag>&quot;abc&quot;</e_tag><checksum_sha256>q83v</checksum_sha256></PartMetadata>";
        assert_eq!(split_part_id(id), ("\"abc\"".to_string(), Some("q83v".to_string())));
        assert_eq!(split_part_id("\"abc\""), ("\"abc\"".to_string(), None));
        let mut r = result(&["\"abc\""]);
        r.checksums = vec!["q83v".into()];
        r.checksum_algorithm = Some("SHA256".into());
        assert_eq!(r.part_ids().unwrap()[0].content_id, id);
        assert_eq!(UploadResult::from_json(&r.to_json()).unwrap(), r);
    }
}
