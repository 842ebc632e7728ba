//! Settings: S3A's `fs.s3a.*` keys, per-bucket overrides, and the native `fs.s3a.native.*`
//! keys, validated into a [`WriterConfig`].
//!
//! Keys and defaults follow Hadoop's S3A (hadoop-aws `Constants`): a value for bucket `b`
//! is looked up as `fs.s3a.bucket.b.<rest>` first, then `fs.s3a.<rest>`. Sizes accept
//! Hadoop's binary suffixes (`64M` = 64 MiB, `1g`, `512k`, plain bytes); durations accept
//! `ms`, `s`, `m`, `h`, `d` suffixes (a plain number is in the key's default unit);
//! booleans are `true`/`false` in any case. An invalid value is an error naming the key,
//! never a silent default.
//!
//! Native-only keys (all optional):
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `fs.s3a.native.memory.budget` | process-wide bytes of part buffers, at least 1 MiB (admission: see `pool`); fixed by the process's first writer, no per-bucket form | from the container's memory limit: see [`default_memory_budget`] |
//! | `fs.s3a.native.jvm.heap.max` | the JVM's maximum heap (`Runtime.maxMemory()`), bytes: the JVM side sets it, for the default budget | none (no JVM) |
//! | `fs.s3a.native.parts.in.flight` | parts one writer may have uploading at once | `fs.s3a.fast.upload.active.blocks`, else 4 |
//! | `fs.s3a.native.runtime.threads` | worker threads of the process-wide runtime; fixed by the process's first writer, no per-bucket form | CPUs, at least 2 |
//! | `fs.s3a.native.part.size` | first part size, 5 MiB..5 GiB | `fs.s3a.multipart.size`, else 64 MiB |
//! | `fs.s3a.native.part.size.fixed` | keep every part the same size (stores such as R2) | false |
//! | `fs.s3a.native.max.parts` | parts allowed per object, 1..10,000 | 10,000 |
//! | `fs.s3a.native.checksum` | `none`, `sha256` or `crc64nvme` checksum per part | none |
//! | `fs.s3a.native.payload.signing` | SigV4-sign the payload (SHA-256 of every byte) | true over http, false over https |
//! | `fs.s3a.native.request.timeout` | one HTTP request, body included (seconds if no unit) | 5 min |
//! | `fs.s3a.native.metadata.endpoint` | the EC2 instance metadata service of the default credential chain (see [`crate::credentials`]) | `AWS_METADATA_ENDPOINT`, else `http://169.254.169.254` |
//! | `fs.s3a.native.trusted.certificates` | PEM certificates trusted in addition to the built-in roots (the JVM side puts the certificates of `javax.net.ssl.trustStore` here) | none |
//! | `fs.s3a.native.region.rule` | the Hadoop line whose region rule applies: `3.3`, `3.4.1` or `3.4.2` (see [`region`]; the JVM side sets it) | `3.4.2` |
//!
//! S3A keys read: `fs.s3a.endpoint`, `fs.s3a.endpoint.region` (when unset, the region S3A
//! derives from the endpoint: see [`region`]), `fs.s3a.cross.region.access.enabled`,
//! `fs.s3a.path.style.access`,
//! `fs.s3a.connection.ssl.enabled`, `fs.s3a.access.key`, `fs.s3a.secret.key`,
//! `fs.s3a.session.token`, `fs.s3a.multipart.size`, `fs.s3a.fast.upload.active.blocks`,
//! `fs.s3a.connection.maximum`, `fs.s3a.retry.limit`, `fs.s3a.encryption.algorithm` /
//! `fs.s3a.encryption.key` (and the legacy `fs.s3a.server-side-encryption-algorithm` /
//! `fs.s3a.server-side-encryption.key`), `fs.s3a.create.storage.class`,
//! `fs.s3a.object.content.encoding`, `fs.s3a.requester.pays.enabled`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

use crate::credentials::{DefaultChain, SharedCredentials};
use crate::error::{Error, Result};

pub mod read;
pub mod region;

/// The native key of extra trusted root certificates (PEM).
pub const TRUSTED_CERTIFICATES_KEY: &str = "fs.s3a.native.trusted.certificates";

/// The per-file setting (after `fs.s3a.`) of the `Referer` header the writer sends on each
/// request: see [`WriterConfig::audit_referrer`].
const AUDIT_REFERRER: &str = "native.audit.referrer";

/// 5 MiB: S3's smallest allowed part other than the last.
pub const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;
/// 5 GiB: S3's largest allowed part, and largest single PUT.
pub const MAX_PART_SIZE: u64 = 5 * 1024 * 1024 * 1024;
/// S3's part number limit.
pub const MAX_PARTS: u32 = 10_000;
/// Default first part size: S3A's `fs.s3a.multipart.size` default, 64 MiB.
pub const DEFAULT_PART_SIZE: u64 = 64 * 1024 * 1024;
/// Default timeout of one HTTP request, body included: 5 minutes (a 64 MiB part at
/// 0.25 MiB/s).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// The process-wide memory budget without a memory limit on the process, and the most the
/// default ever is: 1 GiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 1024 * 1024 * 1024;
/// The least the default budget is under a memory limit: 64 MiB (one part of S3A's default
/// size).
pub const MIN_DEFAULT_MEMORY_BUDGET: u64 = 64 * 1024 * 1024;
/// The key the JVM side sets to the JVM's maximum heap (`Runtime.maxMemory()`, bytes).
pub const JVM_HEAP_MAX_KEY: &str = "fs.s3a.native.jvm.heap.max";

/// The budget when `fs.s3a.native.memory.budget` is not set, from what the process may use:
/// a quarter of the cgroup memory limit left after the JVM heap (`jvm_heap`, from
/// `fs.s3a.native.jvm.heap.max`; none without a JVM), rounded down to a MiB and clamped to
/// 64 MiB..1 GiB; without a cgroup limit, 1 GiB.
///
/// Why: a container is killed when the process passes its limit, and the JVM heap takes most
/// of it. Spark sizes an executor's container as its heap plus
/// `spark.executor.memoryOverhead` (default max(384 MiB, 10% of the heap)), which also holds
/// the JVM's own native memory (metaspace, threads, direct buffers, Netty), so the budget may
/// take only a share of what is left: a quarter, e.g. 102 MiB of a 4 GiB executor's 410 MiB
/// overhead. The limit is cgroup v2's `memory.max` or cgroup v1's
/// `memory.limit_in_bytes` of the process's cgroup (from `/proc/self/cgroup`, the smallest
/// along the path to the root of the hierarchy mounted at `/sys/fs/cgroup`), read once per
/// process.
pub fn default_memory_budget(jvm_heap: Option<u64>) -> u64 {
    static LIMIT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    budget_for_limit(*LIMIT.get_or_init(|| cgroup_memory_limit(std::path::Path::new("/"))), jvm_heap)
}

/// The rule of [`default_memory_budget`] for a memory limit of `limit` bytes (none: no limit).
pub fn budget_for_limit(limit: Option<u64>, jvm_heap: Option<u64>) -> u64 {
    let Some(limit) = limit else { return DEFAULT_MEMORY_BUDGET };
    let share = limit.saturating_sub(jvm_heap.unwrap_or(0)) / 4;
    (share & !((1 << 20) - 1)).clamp(MIN_DEFAULT_MEMORY_BUDGET, DEFAULT_MEMORY_BUDGET)
}

/// The memory limit of the process's cgroup, v2 or v1, in bytes, reading the files under
/// `root` (`/` in production; a directory of fake files in tests): none when no limit is
/// set or nothing can be read.
pub fn cgroup_memory_limit(root: &std::path::Path) -> Option<u64> {
    let cgroups = std::fs::read_to_string(root.join("proc/self/cgroup")).ok()?;
    let mut limit: Option<u64> = None;
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else { continue };
        let (mount, file) = if id == "0" && controllers.is_empty() {
            (root.join("sys/fs/cgroup"), "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (root.join("sys/fs/cgroup/memory"), "memory.limit_in_bytes")
        } else {
            continue;
        };
        // The process's own cgroup and every ancestor up to the mount's root: the smallest
        // limit holds. In a container the path may name the host's hierarchy, which is not
        // mounted: then only the mount's root (the container's own cgroup) is read.
        let mut dir = mount.join(path.trim_start_matches('/'));
        loop {
            if let Some(l) = read_limit(&dir.join(file)) {
                limit = Some(limit.map_or(l, |m| m.min(l)));
            }
            if dir == mount || !dir.pop() || !dir.starts_with(&mount) {
                break;
            }
        }
    }
    limit
}

/// A cgroup limit file's value: none for `max` (v2), for v1's "unlimited" (a number near
/// 2^63), or when unreadable.
fn read_limit(file: &std::path::Path) -> Option<u64> {
    let v = std::fs::read_to_string(file).ok()?;
    v.trim().parse::<u64>().ok().filter(|l| *l < 1 << 62)
}

/// Settings as a string map of Hadoop configuration keys to values.
///
/// `Debug` prints keys only for values that may be secret (access key, secret key, session
/// token, encryption key).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Settings {
    map: BTreeMap<String, String>,
    /// Where credentials come from; when set, the keys of the map and the environment are
    /// not used.
    credentials: Option<SharedCredentials>,
}

impl Settings {
    /// Empty settings: every value takes its default.
    pub fn new() -> Self {
        Settings::default()
    }

    /// These settings with credentials from `credentials` (see [`crate::credentials`]):
    /// the access, secret and session keys of the map and the `AWS_*` environment
    /// variables are then ignored.
    pub fn with_credentials(mut self, credentials: SharedCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The credentials source, if one was given.
    pub fn credentials(&self) -> Option<&SharedCredentials> {
        self.credentials.as_ref()
    }


    /// Set `key` to `value` (builder style).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.set(key, value);
        self
    }

    /// Set `key` to `value`.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.map.insert(key.into(), value.into());
    }

    /// The raw value of `key`, without per-bucket resolution.
    pub fn get_raw(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    /// All key/value pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `fs.s3a.<rest>` for `bucket`: `fs.s3a.bucket.<bucket>.<rest>` when set,
    /// else `fs.s3a.<rest>`. Blank values count as unset, as in Hadoop's `getTrimmed`.
    pub fn get(&self, bucket: &str, rest: &str) -> Option<&str> {
        let per_bucket = format!("fs.s3a.bucket.{bucket}.{rest}");
        self.map
            .get(&per_bucket)
            .or_else(|| self.map.get(&format!("fs.s3a.{rest}")))
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// Which key [`Settings::get`] read for `rest`, for error messages.
    fn key_for(&self, bucket: &str, rest: &str) -> String {
        let per_bucket = format!("fs.s3a.bucket.{bucket}.{rest}");
        if self.map.contains_key(&per_bucket) {
            per_bucket
        } else {
            format!("fs.s3a.{rest}")
        }
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Settings {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Settings { map: iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect(), credentials: None }
    }
}

impl From<HashMap<String, String>> for Settings {
    fn from(map: HashMap<String, String>) -> Self {
        map.into_iter().collect()
    }
}

fn is_secret_key(key: &str) -> bool {
    key.ends_with(".access.key")
        || key.ends_with(".secret.key")
        || key.ends_with(".session.token")
        || key.ends_with("encryption.key")
        || key.ends_with("server-side-encryption.key")
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (k, v) in &self.map {
            if is_secret_key(k) {
                m.entry(k, &"****");
            } else {
                m.entry(k, v);
            }
        }
        if let Some(c) = &self.credentials {
            m.entry(&"credentials", c);
        }
        m.finish()
    }
}

/// Server-side encryption of the objects written.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Encryption {
    /// SSE-S3 (`AES256`).
    SseS3,
    /// SSE-KMS with an optional key id (the bucket's default key when absent).
    SseKms(Option<String>),
    /// DSSE-KMS with an optional key id.
    DsseKms(Option<String>),
    /// SSE-C with the base64 customer key; sent with every create, part and PUT request.
    SseC(String),
}

impl fmt::Debug for Encryption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encryption::SseS3 => f.write_str("SSE-S3"),
            Encryption::SseKms(k) => write!(f, "SSE-KMS({})", k.as_deref().unwrap_or("default key")),
            Encryption::DsseKms(k) => write!(f, "DSSE-KMS({})", k.as_deref().unwrap_or("default key")),
            Encryption::SseC(_) => f.write_str("SSE-C(****)"),
        }
    }
}

/// Per-part checksum sent with each part (`x-amz-checksum-*`) and with Complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumMode {
    /// No checksum headers: for stores that reject them.
    None,
    /// SHA-256 of each part.
    Sha256,
    /// CRC64/NVME of each part.
    Crc64Nvme,
}

/// Everything that shapes the HTTP client: writers with equal `StoreConfig`s share one
/// client, connection pool and upload concurrency limit. `Debug` hides credentials.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct StoreConfig {
    pub bucket: String,
    /// Endpoint URL with scheme, bucket included for virtual-hosted style; `None` = AWS.
    pub endpoint: Option<String>,
    /// The signing region S3A's rule gives (see [`region`]).
    pub region: String,
    /// Look the bucket's region up (`x-amz-bucket-region`, once per bucket per process) and
    /// sign with it instead of `region`: S3A's cross-region access on AWS's own endpoints.
    pub lookup_bucket_region: bool,
    /// PEM certificates trusted in addition to the built-in roots.
    pub trusted_certificates: Option<String>,
    pub path_style: bool,
    pub allow_http: bool,
    pub access_key: Option<String>,
    pub secret_key: Option<String>,
    pub session_token: Option<String>,
    /// A credentials source (then the keys above are `None`).
    pub credentials: Option<SharedCredentials>,
    /// object_store's default chain, when there is neither a source nor keys.
    pub default_chain: Option<DefaultChain>,
    pub encryption: Option<Encryption>,
    pub checksum: ChecksumMode,
    pub sign_payload: bool,
    pub request_timeout: Duration,
    pub max_retries: usize,
    pub requester_pays: bool,
    /// Process-wide concurrent part uploads through this client (`fs.s3a.connection.maximum`).
    pub max_concurrent_uploads: usize,
}

impl StoreConfig {
    /// The configured secret values, to scrub from error messages.
    pub(crate) fn secrets(&self) -> Vec<&str> {
        let mut s: Vec<&str> = [&self.access_key, &self.secret_key, &self.session_token]
            .into_iter()
            .filter_map(|v| v.as_deref())
            .collect();
        if let Some(Encryption::SseC(k)) = &self.encryption {
            s.push(k);
        }
        s
    }
}

impl fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreConfig")
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("lookup_bucket_region", &self.lookup_bucket_region)
            .field(
                "trusted_certificates",
                &self.trusted_certificates.as_ref().map(|p| p.matches("-----BEGIN CERTIFICATE-----").count()),
            )
            .field("path_style", &self.path_style)
            .field("keys", &self.access_key.as_ref().map(|_| "****"))
            .field("credentials", &self.credentials)
            .field("default_chain", &self.default_chain)
            .field("encryption", &self.encryption)
            .field("checksum", &self.checksum)
            .field("sign_payload", &self.sign_payload)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

/// A writer's validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterConfig {
    pub store: StoreConfig,
    /// Size of the first part, and of every part in fixed mode (bytes).
    pub part_size: u64,
    /// All parts the same size; otherwise parts grow (see [`part_size_for`]).
    pub fixed_part_size: bool,
    /// Most parts one object may have.
    pub max_parts: u32,
    /// Parts one writer may have uploading at once (at least 1).
    pub parts_in_flight: usize,
    /// Process-wide part buffer bytes, when the settings name it (the process's first
    /// writer fixes it; the default is [`default_memory_budget`]).
    pub memory_budget: Option<u64>,
    /// The JVM's maximum heap, when the JVM side named it ([`JVM_HEAP_MAX_KEY`]).
    pub jvm_heap_max: Option<u64>,
    /// Worker threads of the process-wide runtime, when the settings name it (the process's
    /// first writer fixes it; the default is [`default_runtime_threads`]).
    pub runtime_threads: Option<usize>,
    /// `x-amz-storage-class`, upper-cased as S3A does.
    pub storage_class: Option<String>,
    /// `Content-Encoding` of the object.
    pub content_encoding: Option<String>,
    /// The `Referer` header every request of this writer carries
    /// (`fs.s3a.native.audit.referrer`): S3A's audit context of the span the file was
    /// created in, which the JVM layer reads from S3A's auditor for each file.
    pub audit_referrer: Option<String>,
    /// What the settings asked for that was adjusted (S3A's leniency), for the caller to
    /// report once (e.g. a `fs.s3a.multipart.size` below 5 MiB, used as 5 MiB).
    pub warnings: Vec<String>,
}

impl WriterConfig {
    /// Validate `settings` for writing to `bucket`.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::error::ErrorKind::InvalidArgument) naming the
    /// key of an invalid value; [`ErrorKind::Unsupported`](crate::error::ErrorKind::Unsupported)
    /// naming the key of a setting the native writer cannot reproduce (`fs.s3a.acl.default`,
    /// client-side encryption `CSE-KMS`/`CSE-CUSTOM`, `fs.s3a.encryption.context`,
    /// access points, FIPS endpoints, an HTTP proxy, a blank `fs.s3a.endpoint.region` that
    /// S3A would leave to the AWS SDK's region chain).
    pub fn resolve(settings: &Settings, bucket: &str) -> Result<WriterConfig> {
        validate_bucket(bucket)?;
        let r = Reader { settings, bucket };
        r.check_unsupported()?;

        let ssl = r.bool("connection.ssl.enabled", true)?;
        let path_style = r.bool("path.style.access", false)?;
        let rule = match r.str("native.region.rule") {
            None => region::Rule::V2CrossRegionKey,
            Some(v) => region::Rule::parse(v).map_err(|why| Error::invalid_setting(&r.key("native.region.rule"), why))?,
        };
        let raw_endpoint = r.str("endpoint");
        let where_to = region::resolve(
            rule,
            raw_endpoint,
            r.str_or_blank("endpoint.region"),
            r.bool("cross.region.access.enabled", true)?,
            &r.key("endpoint.region"),
        )?;
        let endpoint = match raw_endpoint {
            Some(e) if where_to.use_endpoint => Some(endpoint_url(e, ssl, path_style, bucket)?),
            _ => None,
        };
        let allow_http = endpoint.as_deref().is_some_and(|e| e.starts_with("http://"));
        let region = where_to.region;
        let trusted_certificates = match r.str("native.trusted.certificates") {
            None => None,
            Some(pem) if pem.contains("-----BEGIN CERTIFICATE-----") => Some(pem.to_string()),
            Some(_) => {
                return Err(Error::invalid_setting(
                    &r.key("native.trusted.certificates"),
                    "holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                ))
            }
        };

        let (access_key, secret_key, session_token) = r.credentials()?;
        let default_chain = (settings.credentials.is_none() && access_key.is_none())
            .then(|| DefaultChain::from_env(r.str("native.metadata.endpoint")));
        let encryption = r.encryption()?;
        let checksum = match r.str("native.checksum").map(str::to_ascii_lowercase).as_deref() {
            None | Some("none") => ChecksumMode::None,
            Some("sha256") => ChecksumMode::Sha256,
            Some("crc64nvme") => ChecksumMode::Crc64Nvme,
            Some(other) => {
                return Err(Error::invalid_setting(
                    &r.key("native.checksum"),
                    format!("'{other}' is not one of none, sha256, crc64nvme"),
                ))
            }
        };
        let sign_payload = r.bool("native.payload.signing", allow_http)?;
        let request_timeout = r.duration("native.request.timeout", DEFAULT_REQUEST_TIMEOUT, Unit::Seconds)?;
        let max_retries = r.int("retry.limit", 7, 0, 100)? as usize;
        let requester_pays = r.bool("requester.pays.enabled", false)?;
        let max_concurrent_uploads = r.int("connection.maximum", 96, 1, 100_000)? as usize;

        let mut warnings = Vec::new();
        let mut s3a_part = r.size("multipart.size", DEFAULT_PART_SIZE)?;
        if s3a_part < MIN_PART_SIZE {
            // S3A's leniency (S3AUtils.getMultipartSizeProperty): below the minimum it warns and
            // uses 5 MiB. The native key stays strict.
            warnings.push(format!(
                "{} must be at least 5 MiB (5,242,880 B); configured value is {s3a_part} B, so 5 MiB is used, as S3A does",
                r.key("multipart.size")
            ));
            s3a_part = MIN_PART_SIZE;
        }
        let part_size = match r.str("native.part.size") {
            Some(_) => r.size("native.part.size", DEFAULT_PART_SIZE)?,
            None => s3a_part,
        };
        let part_key = if r.str("native.part.size").is_some() { "native.part.size" } else { "multipart.size" };
        if !(MIN_PART_SIZE..=MAX_PART_SIZE).contains(&part_size) {
            return Err(Error::invalid_setting(
                &r.key(part_key),
                format!("part size {part_size} B is outside S3's limits of 5 MiB (5,242,880 B) to 5 GiB"),
            ));
        }
        let active_blocks = r.int("fast.upload.active.blocks", 4, 1, 1_000_000)?;
        let parts_in_flight = r.int("native.parts.in.flight", active_blocks, 1, 10_000)? as usize;
        r.process_wide_only()?;

        Ok(WriterConfig {
            store: StoreConfig {
                bucket: bucket.to_string(),
                endpoint,
                region,
                lookup_bucket_region: where_to.lookup_bucket_region,
                trusted_certificates,
                path_style,
                allow_http,
                access_key,
                secret_key,
                session_token,
                credentials: settings.credentials.clone(),
                default_chain,
                encryption,
                checksum,
                sign_payload,
                request_timeout,
                max_retries,
                requester_pays,
                max_concurrent_uploads,
            },
            part_size,
            fixed_part_size: r.bool("native.part.size.fixed", false)?,
            max_parts: r.int("native.max.parts", MAX_PARTS as i64, 1, MAX_PARTS as i64)? as u32,
            parts_in_flight,
            memory_budget: match r.str("native.memory.budget") {
                None => None,
                Some(_) => match r.size("native.memory.budget", DEFAULT_MEMORY_BUDGET)? {
                    b if b < 1 << 20 => {
                        return Err(Error::invalid_setting(&r.key("native.memory.budget"), format!("{b} B is below 1 MiB")))
                    }
                    b => Some(b),
                },
            },
            jvm_heap_max: match r.str("native.jvm.heap.max") {
                None => None,
                Some(_) => Some(r.size("native.jvm.heap.max", 0)?),
            },
            runtime_threads: match r.str("native.runtime.threads") {
                None => None,
                Some(_) => Some(r.int("native.runtime.threads", 0, 1, 1024)? as usize),
            },
            storage_class: r.str("create.storage.class").map(str::to_ascii_uppercase),
            content_encoding: r.str("object.content.encoding").map(str::to_string),
            audit_referrer: match r.str(AUDIT_REFERRER) {
                None | Some("") => None,
                // An HTTP header value: visible ASCII and spaces, as S3A's URL-encoded referrer is.
                Some(v) if v.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) => Some(v.to_string()),
                Some(_) => {
                    return Err(Error::invalid_setting(&r.key(AUDIT_REFERRER), "not an HTTP header value (visible ASCII only)"))
                }
            },
            warnings,
        })
    }

    /// Size of part `part_number` (1-based).
    pub fn part_size_for(&self, part_number: u32) -> u64 {
        part_size_for(self.part_size, self.fixed_part_size, part_number)
    }

    /// The memory budget these settings ask for: the named one, else the default
    /// ([`default_memory_budget`]).
    pub fn memory_budget_or_default(&self) -> u64 {
        self.memory_budget.unwrap_or_else(|| default_memory_budget(self.jvm_heap_max))
    }
}

/// Worker threads of the runtime when `fs.s3a.native.runtime.threads` is not set: the CPUs
/// available to the process, at least 2.
pub fn default_runtime_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).max(2)
}

/// Settings that hold for the whole process (see `pool`), so they have no per-bucket form.
const PROCESS_WIDE: [&str; 2] = ["native.memory.budget", "native.runtime.threads"];

/// Size of part `part_number` (1-based) for a first part size of `base` bytes.
///
/// In fixed mode every part is `base`. Otherwise parts 1..=2,000 are `base`, and the size
/// doubles every further 1,000 parts, capped at 5 GiB: with the 64 MiB default, objects up
/// to 125 GiB have equal parts and 10,000 parts hold over 5 TiB (S3's object limit); even
/// with 5 MiB parts 10,000 parts hold 2.5 TiB.
pub fn part_size_for(base: u64, fixed: bool, part_number: u32) -> u64 {
    if fixed || part_number <= 2000 {
        return base;
    }
    let doublings = (part_number - 1) / 1000 - 1;
    base.checked_shl(doublings).unwrap_or(MAX_PART_SIZE).min(MAX_PART_SIZE).max(base)
}

/// S3 bucket name rules, loosely: 3..63 characters of lower-case letters, digits, `.`, `-`
/// and `_` (the last for older buckets and local servers).
fn validate_bucket(bucket: &str) -> Result<()> {
    let ok = (3..=63).contains(&bucket.len())
        && bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!("'{bucket}' is not a valid S3 bucket name")))
    }
}

/// S3A's endpoint: a URL, or a host[:port] whose scheme comes from
/// `fs.s3a.connection.ssl.enabled`. Virtual-hosted style puts the bucket in the host.
fn endpoint_url(endpoint: &str, ssl: bool, path_style: bool, bucket: &str) -> Result<String> {
    let (scheme, rest) = match endpoint.split_once("://") {
        Some((s, rest)) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => {
            (s.to_ascii_lowercase(), rest)
        }
        Some((s, _)) => {
            return Err(Error::invalid_setting("fs.s3a.endpoint", format!("scheme '{s}' is not http or https")))
        }
        None => (if ssl { "https" } else { "http" }.to_string(), endpoint),
    };
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') && !path_style {
        return Err(Error::invalid_setting("fs.s3a.endpoint", format!("'{endpoint}' is not a host[:port] or URL")));
    }
    Ok(if path_style { format!("{scheme}://{rest}") } else { format!("{scheme}://{bucket}.{rest}") })
}

#[derive(Clone, Copy)]
enum Unit {
    Seconds,
}

struct Reader<'a> {
    settings: &'a Settings,
    bucket: &'a str,
}

impl Reader<'_> {
    fn str(&self, rest: &str) -> Option<&str> {
        self.settings.get(self.bucket, rest)
    }

    fn key(&self, rest: &str) -> String {
        self.settings.key_for(self.bucket, rest)
    }

    /// Like [`Reader::str`], but a key set to a blank value is `Some("")`.
    fn str_or_blank(&self, rest: &str) -> Option<&str> {
        let per_bucket = format!("fs.s3a.bucket.{}.{rest}", self.bucket);
        self.settings
            .get_raw(&per_bucket)
            .or_else(|| self.settings.get_raw(&format!("fs.s3a.{rest}")))
            .map(str::trim)
    }

    fn bool(&self, rest: &str, default: bool) -> Result<bool> {
        match self.str(rest) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(Error::invalid_setting(&self.key(rest), format!("'{v}' is not true or false"))),
        }
    }

    fn int(&self, rest: &str, default: i64, min: i64, max: i64) -> Result<i64> {
        let Some(v) = self.str(rest) else { return Ok(default) };
        let n: i64 = v
            .parse()
            .map_err(|_| Error::invalid_setting(&self.key(rest), format!("'{v}' is not a whole number")))?;
        if !(min..=max).contains(&n) {
            return Err(Error::invalid_setting(&self.key(rest), format!("{n} is outside {min}..={max}")));
        }
        Ok(n)
    }

    fn size(&self, rest: &str, default: u64) -> Result<u64> {
        match self.str(rest) {
            None => Ok(default),
            Some(v) => parse_size(v).map_err(|why| Error::invalid_setting(&self.key(rest), why)),
        }
    }

    fn duration(&self, rest: &str, default: Duration, unit: Unit) -> Result<Duration> {
        match self.str(rest) {
            None => Ok(default),
            Some(v) => parse_duration(v, unit).map_err(|why| Error::invalid_setting(&self.key(rest), why)),
        }
    }

    fn credentials(&self) -> Result<(Option<String>, Option<String>, Option<String>)> {
        if self.settings.credentials.is_some() {
            return Ok((None, None, None));
        }
        let access = self.str("access.key").map(str::to_string);
        let secret = self.str("secret.key").map(str::to_string);
        let token = self.str("session.token").map(str::to_string);
        match (&access, &secret) {
            (Some(_), Some(_)) => Ok((access, secret, token)),
            (Some(_), None) => Err(Error::invalid_setting(&self.key("secret.key"), "missing while an access key is set")),
            (None, Some(_)) => Err(Error::invalid_setting(&self.key("access.key"), "missing while a secret key is set")),
            // Like S3A's EnvironmentVariableCredentialsProvider.
            (None, None) => {
                let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
                match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
                    (Some(a), Some(s)) => Ok((Some(a), Some(s), env("AWS_SESSION_TOKEN"))),
                    _ => Ok((None, None, None)),
                }
            }
        }
    }

    fn encryption(&self) -> Result<Option<Encryption>> {
        let (alg_rest, key_rest) = if self.str("encryption.algorithm").is_some() {
            ("encryption.algorithm", "encryption.key")
        } else {
            ("server-side-encryption-algorithm", "server-side-encryption.key")
        };
        let Some(alg) = self.str(alg_rest) else { return Ok(None) };
        let key = self.str(key_rest).map(str::to_string);
        Ok(Some(match alg.to_ascii_uppercase().as_str() {
            "AES256" | "SSE-S3" => Encryption::SseS3,
            "SSE-KMS" | "AWS:KMS" => Encryption::SseKms(key),
            "DSSE-KMS" | "AWS:KMS:DSSE" => Encryption::DsseKms(key),
            "SSE-C" => match key {
                Some(k) => Encryption::SseC(k),
                None => return Err(Error::invalid_setting(&self.key(key_rest), "SSE-C needs a base64 encryption key")),
            },
            "CSE-KMS" | "CSE-CUSTOM" => {
                return Err(Error::unsupported(&self.key(alg_rest), format!("client-side encryption {alg}")))
            }
            _ => {
                return Err(Error::invalid_setting(
                    &self.key(alg_rest),
                    format!("'{alg}' is not one of AES256 (SSE-S3), SSE-KMS, DSSE-KMS, SSE-C, CSE-KMS, CSE-CUSTOM"),
                ))
            }
        }))
    }

    /// Settings S3A honours that the native writer does not reproduce.
    /// Process-wide settings set per bucket are an error: they cannot differ by bucket.
    fn process_wide_only(&self) -> Result<()> {
        for rest in PROCESS_WIDE {
            let per_bucket = format!("fs.s3a.bucket.{}.{rest}", self.bucket);
            if self.settings.get_raw(&per_bucket).is_some() {
                return Err(Error::invalid_setting(
                    &per_bucket,
                    format!("fs.s3a.{rest} is process-wide and has no per-bucket form; set fs.s3a.{rest}"),
                ));
            }
        }
        Ok(())
    }

    fn check_unsupported(&self) -> Result<()> {
        let unsupported: [(&str, &str); 6] = [
            ("acl.default", "canned ACL"),
            ("encryption.context", "SSE-KMS encryption context"),
            ("accesspoint.arn", "access point"),
            ("proxy.host", "HTTP proxy"),
            ("endpoint.fips", "FIPS endpoint"),
            ("cse.method", "client-side encryption"),
        ];
        for (rest, what) in unsupported {
            if let Some(v) = self.str(rest) {
                if rest == "endpoint.fips" && v.eq_ignore_ascii_case("false") {
                    continue;
                }
                return Err(Error::unsupported(&self.key(rest), what));
            }
        }
        Ok(())
    }
}

/// Hadoop's `getLongBytes`: a number with an optional binary suffix k, m, g, t, p.
pub fn parse_size(v: &str) -> std::result::Result<u64, String> {
    let v = v.trim();
    let (digits, shift) = match v.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => (&v[..v.len() - 1], 10),
        Some('m') => (&v[..v.len() - 1], 20),
        Some('g') => (&v[..v.len() - 1], 30),
        Some('t') => (&v[..v.len() - 1], 40),
        Some('p') => (&v[..v.len() - 1], 50),
        _ => (v, 0),
    };
    let digits = digits.trim();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.is_empty() {
        return Err(format!("'{v}' is not a size in bytes (a whole number, optionally with K, M, G, T or P)"));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{v}' is not a size in bytes (a whole number, optionally with K, M, G, T or P)"))?;
    n.checked_mul(1u64 << shift).ok_or_else(|| format!("'{v}' is too large"))
}

fn parse_duration(v: &str, unit: Unit) -> std::result::Result<Duration, String> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, suffix) = v.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("'{v}' is not a duration such as 30s or 500ms"))?;
    let secs = |factor: u64| n.checked_mul(factor).map(Duration::from_secs).ok_or_else(|| format!("'{v}' is too long"));
    let d = match (suffix.trim().to_ascii_lowercase().as_str(), unit) {
        ("", Unit::Seconds) | ("s", _) => Duration::from_secs(n),
        ("ms", _) => Duration::from_millis(n),
        ("m", _) => secs(60)?,
        ("h", _) => secs(3600)?,
        ("d", _) => secs(86400)?,
        _ => return Err(format!("'{v}' has an unknown unit (use ms, s, m, h or d)")),
    };
    if d.is_zero() {
        return Err("a duration must be positive".into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Settings {
        Settings::new().with("fs.s3a.access.key", "AKIATESTKEY").with("fs.s3a.secret.key", "s3cr3tvalue")
    }

    #[test]
    fn sizes_use_binary_suffixes() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("5242880"), Ok(MIN_PART_SIZE));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("12x").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert!(parse_size("+6M").is_err());
        assert!(parse_duration("99999999999999999d", Unit::Seconds).is_err());
    }

    #[test]
    fn s3as_part_size_is_rounded_up_like_s3a_but_the_native_one_is_strict() {
        let c = WriterConfig::resolve(&base().with("fs.s3a.multipart.size", "5000000"), "special").unwrap();
        assert_eq!(c.part_size, MIN_PART_SIZE);
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].contains("fs.s3a.multipart.size") && c.warnings[0].contains("5000000"), "{:?}", c.warnings);
        let e = WriterConfig::resolve(&base().with("fs.s3a.native.part.size", "5000000"), "special").unwrap_err();
        assert_eq!(e.setting(), Some("fs.s3a.native.part.size"));
        assert!(WriterConfig::resolve(&base(), "special").unwrap().warnings.is_empty());
    }

    #[test]
    fn process_wide_settings_have_no_per_bucket_form() {
        for rest in PROCESS_WIDE {
            let key = format!("fs.s3a.bucket.special.{rest}");
            let e = WriterConfig::resolve(&base().with(key.as_str(), "2"), "special").unwrap_err();
            assert_eq!(e.setting(), Some(key.as_str()), "{e}");
            assert!(e.message().contains("process-wide"), "{e}");
            // Another bucket's form does not concern this bucket.
            assert!(WriterConfig::resolve(&base().with(key.as_str(), "2"), "other").is_ok());
        }
        let c = WriterConfig::resolve(&base().with("fs.s3a.native.runtime.threads", "3"), "special").unwrap();
        assert_eq!((c.runtime_threads, c.memory_budget), (Some(3), None));
    }

    #[test]
    fn per_bucket_overrides_win() {
        let s = base().with("fs.s3a.multipart.size", "8M").with("fs.s3a.bucket.special.multipart.size", "16M");
        assert_eq!(WriterConfig::resolve(&s, "special").unwrap().part_size, 16 << 20);
        assert_eq!(WriterConfig::resolve(&s, "other").unwrap().part_size, 8 << 20);
    }

    #[test]
    fn part_size_limits_name_the_key() {
        // Above S3's limit is an error; below 5 MiB S3A's key is rounded up (see the test above).
        let e = WriterConfig::resolve(&base().with("fs.s3a.multipart.size", "6G"), "b1b").unwrap_err();
        assert_eq!(e.setting(), Some("fs.s3a.multipart.size"), "{e}");
        assert!(e.message().contains("5 MiB"), "{e}");
        let e = WriterConfig::resolve(&base().with("fs.s3a.native.part.size", "1M"), "b1b").unwrap_err();
        assert_eq!(e.setting(), Some("fs.s3a.native.part.size"));
        assert!(WriterConfig::resolve(&base().with("fs.s3a.multipart.size", "5242880"), "b1b").is_ok());
    }

    #[test]
    fn unsupported_settings_are_reported_by_key() {
        let e = WriterConfig::resolve(&base().with("fs.s3a.acl.default", "PublicRead"), "b1b").unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::Unsupported);
        assert_eq!(e.setting(), Some("fs.s3a.acl.default"));
        let e = WriterConfig::resolve(&base().with("fs.s3a.encryption.algorithm", "CSE-KMS"), "b1b").unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::Unsupported);
    }

    #[test]
    fn secrets_never_print() {
        let s = base().with("fs.s3a.session.token", "tok3nvalue").with("fs.s3a.encryption.key", "k3yvalue");
        let text = format!("{s:?} {:?}", WriterConfig::resolve(&s, "b1b"));
        for secret in ["AKIATESTKEY", "s3cr3tvalue", "tok3nvalue", "k3yvalue"] {
            assert!(!text.contains(secret), "{secret} leaked in {text}");
        }
    }

    #[test]
    fn endpoints_follow_s3a() {
        assert_eq!(endpoint_url("127.0.0.1:9000", false, true, "b").unwrap(), "http://127.0.0.1:9000");
        assert_eq!(endpoint_url("s3.eu-west-1.amazonaws.com", true, false, "b").unwrap(), "https://b.s3.eu-west-1.amazonaws.com");
        assert_eq!(endpoint_url("http://h:1/", true, true, "b").unwrap(), "http://h:1");
        assert!(endpoint_url("ftp://h", true, true, "b").is_err());
    }

    #[test]
    fn grown_parts_hold_a_terabyte_within_ten_thousand_parts() {
        for base in [MIN_PART_SIZE, DEFAULT_PART_SIZE] {
            let total: u64 = (1..=MAX_PARTS).map(|n| part_size_for(base, false, n)).sum();
            assert!(total >= 1 << 40, "base {base}: only {total} B in 10,000 parts");
            assert!((1..=MAX_PARTS).all(|n| part_size_for(base, false, n) <= MAX_PART_SIZE));
            // Sizes never shrink, so every non-final part is at least 5 MiB.
            assert!((2..=MAX_PARTS).all(|n| part_size_for(base, false, n) >= part_size_for(base, false, n - 1)));
        }
        let big: u64 = (1..=MAX_PARTS).map(|n| part_size_for(DEFAULT_PART_SIZE, false, n)).sum();
        assert!(big >= 5 << 40, "64 MiB parts reach S3's 5 TiB object limit");
        assert!((1..=MAX_PARTS).all(|n| part_size_for(DEFAULT_PART_SIZE, true, n) == DEFAULT_PART_SIZE));
    }

    #[test]
    fn bad_values_name_their_key() {
        let cases = [
            ("fs.s3a.path.style.access", "yes"),
            ("fs.s3a.native.parts.in.flight", "0"),
            ("fs.s3a.native.memory.budget", "lots"),
            ("fs.s3a.native.checksum", "md5"),
            ("fs.s3a.encryption.algorithm", "ROT13"),
            ("fs.s3a.native.request.timeout", "5 fortnights"),
            ("fs.s3a.native.max.parts", "10001"),
            ("fs.s3a.native.memory.budget", "1000"),
        ];
        for (k, v) in cases {
            let e = WriterConfig::resolve(&base().with(k, v), "b1b").unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::InvalidArgument, "{k}");
            assert_eq!(e.setting(), Some(k), "{e}");
        }
        let e = WriterConfig::resolve(&Settings::new().with("fs.s3a.access.key", "AKIATESTKEY"), "b1b").unwrap_err();
        assert_eq!(e.setting(), Some("fs.s3a.secret.key"));
        assert!(WriterConfig::resolve(&base(), "Bad_Bucket!").is_err());
    }

    /// A fake root with `/proc/self/cgroup` and the given files under it.
    fn fake_root(name: &str, cgroup: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("s3native-cgroup-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, content) in [("proc/self/cgroup", cgroup)].iter().chain(files) {
            let f = root.join(path);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, content).unwrap();
        }
        root
    }

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    #[test]
    fn cgroup_v2_limit_is_the_smallest_along_the_path() {
        let root = fake_root(
            "v2",
            "0::/kubepods/pod1/ctr\n",
            &[
                ("sys/fs/cgroup/memory.max", "max\n"),
                ("sys/fs/cgroup/kubepods/memory.max", "17179869184\n"),
                ("sys/fs/cgroup/kubepods/pod1/memory.max", "4831838208\n"),
                ("sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "max\n"),
            ],
        );
        assert_eq!(cgroup_memory_limit(&root), Some(4831838208));
        let unlimited = fake_root("v2max", "0::/\n", &[("sys/fs/cgroup/memory.max", "max\n")]);
        assert_eq!(cgroup_memory_limit(&unlimited), None);
    }

    #[test]
    fn cgroup_v1_limit_and_its_unlimited_value() {
        let cgroup = "12:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n";
        let root = fake_root(
            "v1",
            cgroup,
            &[
                ("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"),
                ("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "2147483648\n"),
            ],
        );
        assert_eq!(cgroup_memory_limit(&root), Some(2 * GIB));
        // In a container the host's path is not mounted: the mount's root is the container's.
        let ns = fake_root("v1ns", cgroup, &[("sys/fs/cgroup/memory/memory.limit_in_bytes", "1073741824\n")]);
        assert_eq!(cgroup_memory_limit(&ns), Some(GIB));
        let unlimited = fake_root("v1max", cgroup, &[("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")]);
        assert_eq!(cgroup_memory_limit(&unlimited), None);
        assert_eq!(cgroup_memory_limit(std::path::Path::new("/nonexistent-root")), None, "nothing readable: no limit");
    }

    #[test]
    fn default_budget_is_a_quarter_of_the_limit_left_after_the_heap() {
        // No limit: 1 GiB.
        assert_eq!(budget_for_limit(None, Some(4 * GIB)), GIB);
        // A Spark executor of 4 GiB heap with the default overhead (10%, at least 384 MiB):
        // a quarter of the 410 MiB left, rounded down to a MiB.
        let heap = 4 * GIB;
        let overhead = (heap / 10).max(384 * MIB);
        assert_eq!(budget_for_limit(Some(heap + overhead), Some(heap)), 102 * MIB);
        // A small executor: 64 MiB at least, even when the heap takes the whole limit.
        assert_eq!(budget_for_limit(Some(GIB + 384 * MIB), Some(GIB)), 96 * MIB);
        assert_eq!(budget_for_limit(Some(GIB), Some(2 * GIB)), 64 * MIB);
        // No JVM: a quarter of the whole limit, at most 1 GiB.
        assert_eq!(budget_for_limit(Some(2 * GIB), None), 512 * MIB);
        assert_eq!(budget_for_limit(Some(64 * GIB), None), GIB);
    }

    #[test]
    fn the_jvm_heap_key_feeds_the_default_budget() {
        let c = WriterConfig::resolve(&base().with(JVM_HEAP_MAX_KEY, "3g"), "b1b").unwrap();
        assert_eq!(c.jvm_heap_max, Some(3 * GIB));
        assert_eq!(c.memory_budget_or_default(), default_memory_budget(Some(3 * GIB)));
        let named = WriterConfig::resolve(&base().with(JVM_HEAP_MAX_KEY, "3g").with("fs.s3a.native.memory.budget", "200M"), "b1b").unwrap();
        assert_eq!(named.memory_budget_or_default(), 200 * MIB, "a named budget wins");
        let e = WriterConfig::resolve(&base().with(JVM_HEAP_MAX_KEY, "lots"), "b1b").unwrap_err();
        assert_eq!(e.setting(), Some(JVM_HEAP_MAX_KEY));
    }
}
