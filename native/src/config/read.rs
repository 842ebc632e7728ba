//! Read settings: the native `fs.s3a.native.read.*` keys and the S3A keys that mean the same
//! thing, validated into a [`ReadConfig`]. Per-bucket overrides (`fs.s3a.bucket.<b>.*`)
//! apply as for every other key; sizes take Hadoop's binary suffixes.
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `fs.s3a.native.read.policy` | the read policy when the caller names none: a Hadoop list (`fs.option.openfile.read.policy` words: `adaptive`, `sequential`, `random`, `parquet`, `whole-file`, ...; the first known one wins) | `fs.s3a.experimental.input.fadvise` (`normal` = adaptive), else adaptive |
//! | `fs.s3a.native.read.small.object.size` | an object of at most this size is fetched whole at the first read when the policy reads whole objects (adaptive without a columnar key, sequential, whole-file; never for columnar or random reads, which read parts of it) (0: never) | 8 MiB (AAL's default) |
//! | `fs.s3a.native.read.footer.size` | bytes at the end of a columnar file fetched at open (0: none): Parquet's 8-byte trailer and a footer up to about this size (a longer footer's start is fetched by the read that asks for it, up to this tail) | 64 KiB |
//! | `fs.s3a.native.read.footer.max.object.size` | objects larger than this get no footer prefetch | 1 GiB (AAL's) |
//! | `fs.s3a.native.read.block.size` | one read-ahead GET; also the read-ahead window when a sequential pattern starts | 8 MiB (AAL's) |
//! | `fs.s3a.native.read.ahead.max.size` | the read-ahead window doubles with every block read through while the pattern holds, up to this; its blocks are fetched in parallel | 64 MiB |
//! | `fs.s3a.native.read.min.size` | the smallest GET a random stream read sends | `fs.s3a.readahead.range`, else 64 KiB (S3A's) |
//! | `fs.s3a.native.read.vectored.hole.size` | vectored ranges closer than this are fetched by one GET | `fs.s3a.vectored.read.min.seek.size`, else 1 MiB (AAL's) |
//! | `fs.s3a.native.read.vectored.max.request.size` | a coalesced or single range larger than this is split into GETs of this size | `fs.s3a.vectored.read.max.merged.size`, else 16 MiB |
//! | `fs.s3a.native.read.vectored.active.reads` | GETs of one vectored read in flight at once | `fs.s3a.vectored.active.ranged.reads`, else 4 (S3A's) |
//! | `fs.s3a.change.detection.mode` | S3A's: `server` and `client` pin every GET to the ETag found at open (`If-Match`): an object changed since open fails the read (S3A's `RemoteFileChangedException`); `warn` and `none` send GETs unpinned, `warn` counting a changed ETag in the answer as a version mismatch and reading on (S3A also logs it); an unknown value is the default, as in S3A | `server` |
//! | `fs.s3a.change.detection.source` | S3A's: `etag`; `versionid` is [`Unsupported`](crate::error::ErrorKind::Unsupported) (the file is read through stock S3A) unless the mode is `none` | `etag` |
//! | `fs.s3a.input.stream.type` | S3A's (hadoop-aws 3.4.2+): the S3A input stream whose rules the native reader follows ([`StreamType`]): `classic`, `prefetch`, `analytics` or `default` (the line's default, by `fs.s3a.native.input.stream.rule`); trimmed, any case; `custom` is [`Unsupported`](crate::error::ErrorKind::Unsupported) (the file is read through stock S3A, which loads the custom factory); `fs.s3a.prefetch.enabled=true` selects `prefetch` whatever this says; on the 3.4.1 rule this key is not read | the line's default |
//! | `fs.s3a.native.input.stream.rule` | the Hadoop line whose stream-type rule applies ([`StreamRule`]): `3.4.1` (3.3.x to 3.4.1: no `fs.s3a.input.stream.type`; classic, or prefetch by `fs.s3a.prefetch.enabled`), `3.4.2` (the key, default classic) or `3.4.3` (the key, default analytics: 3.4.3 and 3.5.x); the JVM side sets it from the hadoop-aws on its classpath | `3.4.3` (the newest rule) |

use crate::config::{parse_size, Settings};
use crate::error::{Error, Result};

/// How a file is going to be read: what the reader fetches ahead. Its name at the JNI and C
/// boundaries is the serde name (`ADAPTIVE`, `SEQUENTIAL`, `RANDOM`, `COLUMNAR`,
/// `WHOLE_FILE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReadPolicy {
    /// Unknown pattern: a `.parquet`/`.orc` key is read as `Columnar`; otherwise read-ahead
    /// starts once stream reads are sequential.
    #[default]
    Adaptive,
    /// Sequential from the start: read-ahead from the first stream read.
    Sequential,
    /// Random: each stream read fetches what it needs (at least the minimum GET size), never
    /// ahead; never the whole object. Also Hadoop's `vector` (S3A's mapping too): the caller
    /// says only that it will ask for ranges, which are fetched as asked.
    Random,
    /// Columnar files (Parquet, ORC): the footer region is fetched at open;
    /// stream reads otherwise as `Random` (no read-ahead, never the whole object: a columnar
    /// reader reads the footer and the column chunks it needs), except that stream reads
    /// that go on where the last one ended double the minimum GET size, up to a block.
    Columnar,
    /// The whole object is read, start to end: sequential, with the read-ahead window at its
    /// maximum from the first read.
    WholeFile,
}

impl ReadPolicy {
    /// The policy of a Hadoop read-policy list (`fs.option.openfile.read.policy`,
    /// `fs.s3a.experimental.input.fadvise`): the first word this reader knows, as S3A maps
    /// them (adaptive/default/normal; random/vector/hbase; columnar/parquet/orc, which S3A
    /// reads as random and this reader also prefetches the footer of; sequential/avro/csv/
    /// json; whole-file). `None` when no word is known.
    pub fn parse_list(list: &str) -> Option<ReadPolicy> {
        list.split(',').map(|w| w.trim().to_ascii_lowercase()).find_map(|w| match w.as_str() {
            "adaptive" | "default" | "normal" => Some(ReadPolicy::Adaptive),
            "sequential" | "avro" | "csv" | "json" => Some(ReadPolicy::Sequential),
            "random" | "hbase" | "vector" => Some(ReadPolicy::Random),
            "columnar" | "parquet" | "orc" => Some(ReadPolicy::Columnar),
            "whole-file" | "whole_file" => Some(ReadPolicy::WholeFile),
            _ => None,
        })
    }

    /// True when this policy expects the whole object to be read, so that a small one is
    /// fetched whole by the first read (`fs.s3a.native.read.small.object.size`): not for
    /// columnar and random reads, which read parts of it (a footer, column chunks, records).
    pub fn reads_whole_objects(self) -> bool {
        matches!(self, ReadPolicy::Adaptive | ReadPolicy::Sequential | ReadPolicy::WholeFile)
    }
}

/// S3A's `fs.s3a.change.detection.mode`: what a GET does about an object changed since open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChangeDetection {
    /// `server` (S3A's default) and `client`: every GET is pinned with `If-Match`; a change
    /// fails the read. (S3A's client mode compares the answer's ETag instead of asking S3 to:
    /// the outcome, a failed read, is the same.)
    #[default]
    Pinned,
    /// `warn`: GETs unpinned; an answer with another ETag is counted as a version mismatch
    /// and its bytes are used.
    Warn,
    /// `none`: GETs unpinned, nothing checked.
    None,
}

impl ChangeDetection {
    /// `fs.s3a.change.detection.mode` as S3A reads it (trimmed, any case; unknown: the default).
    pub fn parse(mode: &str) -> ChangeDetection {
        match mode.trim().to_ascii_lowercase().as_str() {
            "warn" => ChangeDetection::Warn,
            "none" => ChangeDetection::None,
            _ => ChangeDetection::Pinned,
        }
    }
}

/// S3A's input stream types (`fs.s3a.input.stream.type`): the one whose rules the native
/// reader follows where S3A's streams differ. Only one rule differs today: what an open with
/// a declared length and no ETag ([`ReadOptions::declared_length`](crate::ReadOptions::declared_length))
/// does, and how S3A's `stream_read_opened` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamType {
    /// S3A's classic stream (`S3AInputStream`): a declared length is trusted (no HEAD; reads
    /// past the object's real end ask S3 and get end of file); `stream_read_opened` counts
    /// each GET.
    #[default]
    Classic,
    /// S3A's prefetching stream: as [`StreamType::Classic`] here (it also takes the declared
    /// length as the object's); the native reader fetches ahead by its own settings.
    Prefetch,
    /// S3A's analytics stream (analytics-accelerator-s3): a declared length without an ETag is
    /// not used; open sends a HEAD for the real length and ETag (counted as that stream counts
    /// it: the stream's `action_http_head_request`, not the filesystem's
    /// `object_metadata_request`), so reads and vectored ranges past the real end fail or end
    /// without a GET; `stream_read_opened` counts 1 a stream.
    Analytics,
}

/// `fs.s3a.native.input.stream.rule`: which Hadoop line's rule picks the stream type.
pub const STREAM_RULE_KEY: &str = "fs.s3a.native.input.stream.rule";

/// The Hadoop line whose rule picks the [`StreamType`] (hadoop-aws's `StreamIntegration`:
/// `fs.s3a.prefetch.enabled=true` selects prefetch on every line; then the type key, where
/// the line has it, with the line's default for an empty value or `default`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamRule {
    /// hadoop-aws 3.3.x to 3.4.1 (`3.4.1`): no `fs.s3a.input.stream.type`; classic, or
    /// prefetch by `fs.s3a.prefetch.enabled`.
    NoTypeKey,
    /// hadoop-aws 3.4.2 (`3.4.2`): the type key, default classic.
    ClassicDefault,
    /// hadoop-aws 3.4.3 and 3.5.x (`3.4.3`): the type key, default analytics.
    #[default]
    AnalyticsDefault,
}

impl StreamRule {
    /// Parse the value of [`STREAM_RULE_KEY`].
    pub fn parse(v: &str) -> std::result::Result<StreamRule, String> {
        match v.trim() {
            "3.4.1" => Ok(StreamRule::NoTypeKey),
            "3.4.2" => Ok(StreamRule::ClassicDefault),
            "3.4.3" => Ok(StreamRule::AnalyticsDefault),
            _ => Err(format!("'{v}' is not one of 3.4.1, 3.4.2, 3.4.3")),
        }
    }
}

/// Hadoop's `Configuration.getBoolean`: `true`/`false` trimmed, in any case; anything else is
/// the default.
fn hadoop_bool(v: Option<&str>, default: bool) -> bool {
    match v.map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if v == "true" => true,
        Some(v) if v == "false" => false,
        _ => default,
    }
}

/// 1 MiB.
const MIB: u64 = 1 << 20;

/// The validated read settings of one bucket; see the module docs for keys and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadConfig {
    pub policy: ReadPolicy,
    pub small_object_size: u64,
    pub footer_size: u64,
    pub footer_max_object_size: u64,
    pub block_size: u64,
    pub ahead_max_size: u64,
    pub min_read_size: u64,
    pub vectored_hole_size: u64,
    pub vectored_max_request_size: u64,
    pub vectored_active_reads: usize,
    pub change_detection: ChangeDetection,
    pub stream_type: StreamType,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig {
            policy: ReadPolicy::Adaptive,
            small_object_size: 8 * MIB,
            footer_size: 64 * 1024,
            footer_max_object_size: 1 << 30,
            block_size: 8 * MIB,
            ahead_max_size: 64 * MIB,
            min_read_size: 64 * 1024,
            vectored_hole_size: MIB,
            vectored_max_request_size: 16 * MIB,
            vectored_active_reads: 4,
            change_detection: ChangeDetection::Pinned,
            stream_type: StreamType::Classic,
        }
    }
}

impl ReadConfig {
    /// Validate the read settings for `bucket`. Errors: [`ErrorKind::InvalidArgument`](crate::error::ErrorKind::InvalidArgument)
    /// naming the key of an invalid value.
    pub fn resolve(settings: &Settings, bucket: &str) -> Result<ReadConfig> {
        let d = ReadConfig::default();
        let key = |rest: &str| {
            let per_bucket = format!("fs.s3a.bucket.{bucket}.{rest}");
            if settings.get_raw(&per_bucket).is_some() {
                per_bucket
            } else {
                format!("fs.s3a.{rest}")
            }
        };
        let size = |rest: &str| -> Result<Option<u64>> {
            match settings.get(bucket, rest) {
                None => Ok(None),
                Some(v) => parse_size(v).map(Some).map_err(|why| Error::invalid_setting(&key(rest), why)),
            }
        };
        // The native key, else the S3A key, else the default.
        let either = |native: &str, s3a: Option<&str>, default: u64| -> Result<u64> {
            if let Some(v) = size(native)? {
                return Ok(v);
            }
            match s3a {
                Some(s) => Ok(size(s)?.unwrap_or(default)),
                None => Ok(default),
            }
        };
        let count = |native: &str, s3a: Option<&str>, default: usize| -> Result<usize> {
            let rest = match (settings.get(bucket, native), s3a) {
                (Some(_), _) => native,
                (None, Some(s)) if settings.get(bucket, s).is_some() => s,
                _ => return Ok(default),
            };
            let v = settings.get(bucket, rest).unwrap_or_default();
            match v.trim().parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => Ok(n),
                _ => Err(Error::invalid_setting(&key(rest), format!("'{v}' is not a whole number in 1..=1024"))),
            }
        };
        let policy = match settings.get(bucket, "native.read.policy") {
            Some(v) => ReadPolicy::parse_list(v)
                .ok_or_else(|| Error::invalid_setting(&key("native.read.policy"), format!("'{v}' names no known read policy")))?,
            None => match settings.get(bucket, "experimental.input.fadvise") {
                Some(v) => ReadPolicy::parse_list(v).ok_or_else(|| {
                    Error::invalid_setting(&key("experimental.input.fadvise"), format!("'{v}' is not normal, sequential or random"))
                })?,
                None => d.policy,
            },
        };
        let c = ReadConfig {
            policy,
            small_object_size: either("native.read.small.object.size", None, d.small_object_size)?,
            footer_size: either("native.read.footer.size", None, d.footer_size)?,
            footer_max_object_size: either("native.read.footer.max.object.size", None, d.footer_max_object_size)?,
            block_size: either("native.read.block.size", None, d.block_size)?,
            ahead_max_size: either("native.read.ahead.max.size", None, d.ahead_max_size)?,
            min_read_size: either("native.read.min.size", Some("readahead.range"), d.min_read_size)?,
            vectored_hole_size: either("native.read.vectored.hole.size", Some("vectored.read.min.seek.size"), d.vectored_hole_size)?,
            vectored_max_request_size: either(
                "native.read.vectored.max.request.size",
                Some("vectored.read.max.merged.size"),
                d.vectored_max_request_size,
            )?,
            vectored_active_reads: count("native.read.vectored.active.reads", Some("vectored.active.ranged.reads"), d.vectored_active_reads)?,
            change_detection: settings.get(bucket, "change.detection.mode").map(ChangeDetection::parse).unwrap_or_default(),
            stream_type: stream_type(settings, bucket, &key)?,
        };
        if c.change_detection != ChangeDetection::None {
            match settings.get(bucket, "change.detection.source").map(|v| v.trim().to_ascii_lowercase()) {
                None => {}
                Some(v) if v == "etag" => {}
                Some(v) if v == "versionid" => {
                    return Err(Error::unsupported(
                        &key("change.detection.source"),
                        "the native reader pins reads to the ETag, not to a version id",
                    ))
                }
                Some(v) => return Err(Error::invalid_setting(&key("change.detection.source"), format!("'{v}' is not etag or versionid"))),
            }
        }
        if c.block_size == 0 {
            return Err(Error::invalid_setting(&key("native.read.block.size"), "must be at least 1 byte"));
        }
        if c.ahead_max_size < c.block_size {
            return Err(Error::invalid_setting(
                &key("native.read.ahead.max.size"),
                format!("{} B is below the block size {} B", c.ahead_max_size, c.block_size),
            ));
        }
        if c.vectored_max_request_size == 0 {
            return Err(Error::invalid_setting(&key("native.read.vectored.max.request.size"), "must be at least 1 byte"));
        }
        Ok(c)
    }
}

/// The stream type of `bucket`'s settings, by the rule of [`STREAM_RULE_KEY`] (see
/// [`StreamRule`]). Errors: [`ErrorKind::InvalidArgument`](crate::error::ErrorKind::InvalidArgument)
/// for an unknown rule or type (S3A fails the filesystem's initialisation on such a type);
/// [`ErrorKind::Unsupported`](crate::error::ErrorKind::Unsupported) for `custom`.
fn stream_type(settings: &Settings, bucket: &str, key: &dyn Fn(&str) -> String) -> Result<StreamType> {
    let rule = match settings.get(bucket, "native.input.stream.rule") {
        None => StreamRule::default(),
        Some(v) => StreamRule::parse(v).map_err(|why| Error::invalid_setting(&key("native.input.stream.rule"), why))?,
    };
    if hadoop_bool(settings.get(bucket, "prefetch.enabled"), false) {
        return Ok(StreamType::Prefetch);
    }
    let default = match rule {
        StreamRule::NoTypeKey => return Ok(StreamType::Classic),
        StreamRule::ClassicDefault => StreamType::Classic,
        StreamRule::AnalyticsDefault => StreamType::Analytics,
    };
    let v = settings.get(bucket, "input.stream.type").unwrap_or_default();
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "default" => Ok(default),
        "classic" => Ok(StreamType::Classic),
        "prefetch" => Ok(StreamType::Prefetch),
        "analytics" => Ok(StreamType::Analytics),
        "custom" => Err(Error::unsupported(
            &key("input.stream.type"),
            "a custom S3A input stream (fs.s3a.input.stream.custom.factory) is not one the native reader can stand in for",
        )),
        _ => Err(Error::invalid_setting(
            &key("input.stream.type"),
            format!("'{v}' is not classic, prefetch, analytics, custom or default"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_map_as_s3a_does() {
        assert_eq!(ReadPolicy::parse_list("parquet, vector, random, adaptive"), Some(ReadPolicy::Columnar));
        // `vector` says only that ranges will be asked for: S3A reads it as random, and so does
        // this reader (no footer prefetch for it).
        assert_eq!(ReadPolicy::parse_list("vector, adaptive"), Some(ReadPolicy::Random));
        assert_eq!(ReadPolicy::parse_list("unknown,normal"), Some(ReadPolicy::Adaptive));
        assert_eq!(ReadPolicy::parse_list("whole-file"), Some(ReadPolicy::WholeFile));
        assert_eq!(ReadPolicy::parse_list("csv"), Some(ReadPolicy::Sequential));
        assert_eq!(ReadPolicy::parse_list("nothing"), None);
    }

    #[test]
    fn s3a_keys_apply_and_native_keys_win() {
        let s = Settings::new()
            .with("fs.s3a.readahead.range", "128K")
            .with("fs.s3a.vectored.read.min.seek.size", "4K")
            .with("fs.s3a.native.read.vectored.hole.size", "2M")
            .with("fs.s3a.bucket.b.experimental.input.fadvise", "random");
        let c = ReadConfig::resolve(&s, "b").unwrap();
        assert_eq!((c.min_read_size, c.vectored_hole_size, c.policy), (128 << 10, 2 << 20, ReadPolicy::Random));
        assert_eq!(ReadConfig::resolve(&s, "other").unwrap().policy, ReadPolicy::Adaptive);
    }

    #[test]
    fn change_detection_follows_s3a() {
        let mode = |v: &str| ReadConfig::resolve(&Settings::new().with("fs.s3a.change.detection.mode", v), "b").unwrap().change_detection;
        assert_eq!(ReadConfig::default().change_detection, ChangeDetection::Pinned);
        assert_eq!((mode("server"), mode(" Client "), mode("WARN"), mode("none")), (ChangeDetection::Pinned, ChangeDetection::Pinned, ChangeDetection::Warn, ChangeDetection::None));
        assert_eq!(mode("sometimes"), ChangeDetection::Pinned, "unknown: S3A's default");
        let by_version = Settings::new().with("fs.s3a.bucket.b.change.detection.source", "versionId");
        let e = ReadConfig::resolve(&by_version, "b").unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::Unsupported);
        assert_eq!(e.setting(), Some("fs.s3a.bucket.b.change.detection.source"));
        assert!(ReadConfig::resolve(&by_version.with("fs.s3a.change.detection.mode", "none"), "b").is_ok(), "none checks nothing");
    }

    #[test]
    fn the_stream_type_follows_the_lines_rule() {
        let t = |pairs: &[(&str, &str)]| {
            let s = pairs.iter().fold(Settings::new(), |s, (k, v)| s.with(*k, *v));
            ReadConfig::resolve(&s, "b").map(|c| c.stream_type)
        };
        let rule = "fs.s3a.native.input.stream.rule";
        let key = "fs.s3a.input.stream.type";
        // 3.4.1: no type key; prefetch by the flag alone.
        assert_eq!(t(&[(rule, "3.4.1")]).unwrap(), StreamType::Classic);
        assert_eq!(t(&[(rule, "3.4.1"), (key, "analytics")]).unwrap(), StreamType::Classic, "3.4.1 has no such key");
        assert_eq!(t(&[(rule, "3.4.1"), ("fs.s3a.prefetch.enabled", " TRUE ")]).unwrap(), StreamType::Prefetch);
        // 3.4.2: classic by default; 3.4.3 and 3.5 (and no rule: the newest): analytics.
        assert_eq!(t(&[(rule, "3.4.2")]).unwrap(), StreamType::Classic);
        assert_eq!(t(&[(rule, "3.4.2"), (key, "Analytics")]).unwrap(), StreamType::Analytics);
        assert_eq!(t(&[(rule, "3.4.3")]).unwrap(), StreamType::Analytics);
        assert_eq!(t(&[]).unwrap(), StreamType::Analytics);
        assert_eq!(t(&[(rule, "3.4.3"), (key, " default ")]).unwrap(), StreamType::Analytics);
        assert_eq!(t(&[(rule, "3.4.3"), (key, "classic")]).unwrap(), StreamType::Classic);
        assert_eq!(t(&[(rule, "3.4.3"), ("fs.s3a.bucket.b.input.stream.type", "classic")]).unwrap(), StreamType::Classic);
        assert_eq!(t(&[(rule, "3.4.3"), (key, "analytics"), ("fs.s3a.prefetch.enabled", "true")]).unwrap(), StreamType::Prefetch);
        assert_eq!(t(&[(rule, "3.4.3"), ("fs.s3a.prefetch.enabled", "yes")]).unwrap(), StreamType::Analytics, "not a boolean: the default");
        // custom: read through stock S3A; an unknown type or rule names its key.
        let e = t(&[(key, "custom")]).unwrap_err();
        assert_eq!((e.kind(), e.setting()), (crate::error::ErrorKind::Unsupported, Some(key)));
        let e = t(&[(key, "zippy")]).unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::InvalidArgument);
        assert!(e.message().contains(key) && e.message().contains("zippy"), "{e}");
        assert!(t(&[(rule, "3.9")]).unwrap_err().message().contains(rule));
    }

    #[test]
    fn bad_values_name_their_key() {
        let s = Settings::new().with("fs.s3a.bucket.b.native.read.block.size", "lots");
        let e = ReadConfig::resolve(&s, "b").unwrap_err();
        assert!(e.message().contains("fs.s3a.bucket.b.native.read.block.size"), "{e}");
        let s = Settings::new().with("fs.s3a.native.read.policy", "zigzag");
        assert!(ReadConfig::resolve(&s, "b").unwrap_err().message().contains("fs.s3a.native.read.policy"));
    }
}
