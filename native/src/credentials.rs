//! Where a writer's credentials come from, first match wins:
//!
//! 1. **A source of the caller's** ([`Settings::with_credentials`](crate::Settings::with_credentials)
//!    with a [`SharedCredentials`] over any [`CredentialSource`]): the JVM's S3A provider
//!    chain (through `jni`), a C callback (`ffi`: `s3n_credentials_new`), or a Rust caller's
//!    own type. The keys of the settings and the environment are then not read.
//! 2. **Static keys** from the settings: `fs.s3a.access.key` + `fs.s3a.secret.key` (+
//!    `fs.s3a.session.token`), per-bucket forms first; one without the other is an
//!    [`ErrorKind::InvalidArgument`] naming the missing key.
//! 3. **object_store's default chain** ([`DefaultChain`]), read from the environment when the
//!    settings are resolved: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+
//!    `AWS_SESSION_TOKEN`), else web identity, else container credentials, else the EC2
//!    instance metadata service.
//!
//! A [`SharedCredentials`] asks its source only when the cached credentials are due for a
//! refresh, never on the path of every request (reference/credentials.md):
//! - credentials with an expiry are refreshed 5 minutes before it, or at half their
//!   remaining life when that is shorter;
//! - credentials without one (AWS SDK v1 types, many custom providers) are asked for again
//!   at most every second: S3A asks its chain on every request, so a rotating provider's new
//!   keys must be used within that second;
//! - S3's `ExpiredToken` or `InvalidToken` answer drops the cache once (see `s3`), and the
//!   request is sent again with fresh credentials.
//!
//! Concurrent requests that find the cache due wait for one fetch. The source is called on a
//! blocking thread of the runtime, holding only this cache's own lock; a fetch that gives no
//! answer within [`FETCH_TIMEOUT`] fails the request. A source's failure fails the request
//! that needed the credentials, with the source's [`describe`](CredentialSource::describe)
//! and its message (never a secret).
//!
//! object_store's default chain caches and refreshes on its own (its token cache renews
//! credentials 5 minutes before their expiry); it does not see `ExpiredToken` answers.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, AwsCredential};
use object_store::CredentialProvider;

use crate::error::{Error, ErrorKind, Result};

/// How long before their expiry credentials are refreshed, at most.
pub const REFRESH_AHEAD: Duration = Duration::from_secs(5 * 60);
/// How long credentials without an expiry are used before the source is asked again.
pub const NO_EXPIRY_REUSE: Duration = Duration::from_secs(1);
/// How long a request waits for the source (a hung provider fails the request, it does not
/// stall every writer that shares the source forever).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// Keys as a source hands them out. `Debug` never prints the secret or the token.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
    /// When they stop working, if the source knows.
    pub expiry: Option<SystemTime>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"****")
            .field("session_token", &self.session_token.as_ref().map(|_| "****"))
            .field("expiry", &self.expiry)
            .finish()
    }
}

/// Where credentials come from. `fetch` may block (it may call into the JVM); it runs on a
/// blocking thread of the runtime, never on a caller's thread holding a writer.
pub trait CredentialSource: Send + Sync {
    /// Credentials now. Errors: the source's failure (reported as the request's failure).
    fn fetch(&self) -> Result<Credentials>;

    /// What the source is, for messages (e.g. the provider chain's class names); no secrets.
    fn describe(&self) -> String;
}

/// A source with its cache, shared by every client that uses it. Equal (and hashed) by
/// identity: clients built for the same `SharedCredentials` are one client.
#[derive(Clone)]
pub struct SharedCredentials(Arc<Cache>);

struct Cache {
    source: Arc<dyn CredentialSource>,
    current: tokio::sync::Mutex<Option<Cached>>,
}

struct Cached {
    credential: Arc<AwsCredential>,
    refresh_at: Instant,
}

impl SharedCredentials {
    /// Credentials from `source`, cached as the module docs say.
    pub fn new(source: impl CredentialSource + 'static) -> Self {
        SharedCredentials(Arc::new(Cache { source: Arc::new(source), current: tokio::sync::Mutex::new(None) }))
    }

    /// What the source is.
    pub fn describe(&self) -> String {
        self.0.source.describe()
    }

    /// Drop the cached credentials (S3 said they expired); the next request fetches anew.
    pub(crate) async fn invalidate(&self) {
        *self.0.current.lock().await = None;
    }

    /// The object_store provider over this cache.
    pub(crate) fn provider(&self) -> Arc<dyn CredentialProvider<Credential = AwsCredential>> {
        Arc::new(Provider(self.clone()))
    }
}

impl PartialEq for SharedCredentials {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedCredentials {}

impl Hash for SharedCredentials {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as *const () as usize).hash(state);
    }
}

impl fmt::Debug for SharedCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedCredentials({})", self.describe())
    }
}

/// object_store's own credential chain (object_store 0.14, `aws::AmazonS3Builder::build`),
/// used when the settings give neither a source nor static keys. Its inputs are read from
/// the environment when the settings are resolved (so clients built for different inputs are
/// different clients), in object_store's order:
///
/// 1. Web identity (EKS IRSA): `AWS_WEB_IDENTITY_TOKEN_FILE` (a file holding the OIDC token)
///    and `AWS_ROLE_ARN`, with `AWS_ROLE_SESSION_NAME` (default `WebIdentitySession`);
///    `AssumeRoleWithWebIdentity` goes to `AWS_ENDPOINT_URL_STS`, default
///    `https://sts.<region>.amazonaws.com`. object_store sends it over HTTPS only (the token
///    must not travel in clear), so a local STS needs TLS trusted through `SSL_CERT_FILE`.
/// 2. ECS task credentials: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`, fetched from
///    `http://169.254.170.2<uri>`.
/// 3. EKS Pod Identity: `AWS_CONTAINER_CREDENTIALS_FULL_URI` together with
///    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (object_store reads only the token file, not
///    `AWS_CONTAINER_AUTHORIZATION_TOKEN`; a full URI alone is not used).
/// 4. The EC2 instance metadata service (IMDSv2; IMDSv1 only with `AWS_IMDSV1_FALLBACK=true`)
///    at the metadata endpoint: `fs.s3a.native.metadata.endpoint`, else
///    `AWS_METADATA_ENDPOINT` (object_store's variable, not the SDKs'
///    `AWS_EC2_METADATA_SERVICE_ENDPOINT`), else `http://169.254.169.254`.
///
/// `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` come before all of these; `config` reads
/// them as static keys. Errors of the chain (no token file, STS refusing, no instance
/// profile) fail the request that needed the credentials.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct DefaultChain {
    /// object_store configuration keys and their values.
    values: Vec<(AmazonS3ConfigKey, String)>,
}

/// The environment variables of the chain, by object_store's key names.
const CHAIN_VARIABLES: [&str; 9] = [
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL_STS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_METADATA_ENDPOINT",
    "AWS_IMDSV1_FALLBACK",
];

impl DefaultChain {
    /// The chain as the environment configures it now; `metadata_endpoint` (the setting
    /// `fs.s3a.native.metadata.endpoint`) wins over `AWS_METADATA_ENDPOINT`.
    pub fn from_env(metadata_endpoint: Option<&str>) -> Self {
        Self::from_vars(metadata_endpoint, |name| std::env::var(name).ok())
    }

    /// The chain from the variables `var` gives (blank counts as unset).
    fn from_vars(metadata_endpoint: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Self {
        let mut values = Vec::new();
        for name in CHAIN_VARIABLES {
            let value = match (name, metadata_endpoint) {
                ("AWS_METADATA_ENDPOINT", Some(e)) => Some(e.to_string()),
                _ => var(name).filter(|v| !v.trim().is_empty()),
            };
            if let Some(v) = value {
                let key = name.to_ascii_lowercase().parse().expect("object_store knows the chain's keys");
                values.push((key, v));
            }
        }
        DefaultChain { values }
    }

    /// `builder` with this chain's inputs; object_store picks the provider in `build`.
    pub(crate) fn configure(&self, mut builder: AmazonS3Builder) -> AmazonS3Builder {
        for (key, value) in &self.values {
            builder = builder.with_config(*key, value);
        }
        builder
    }

    fn value(&self, key: &str) -> Option<&str> {
        self.values.iter().find(|(k, _)| k.as_ref() == key).map(|(_, v)| v.as_str())
    }

    /// Which link of the chain object_store will use, for messages: e.g. `web identity
    /// (role arn:aws:iam::1:role/r, STS https://sts.us-east-1.amazonaws.com)`.
    pub fn describe(&self) -> String {
        if let (Some(_), Some(role)) = (self.value("aws_web_identity_token_file"), self.value("aws_role_arn")) {
            let sts = self.value("aws_endpoint_url_sts").unwrap_or("https://sts.<region>.amazonaws.com");
            format!("web identity (role {role}, STS {sts})")
        } else if let Some(uri) = self.value("aws_container_credentials_relative_uri") {
            format!("ECS container credentials (http://169.254.170.2{uri})")
        } else if let (Some(uri), Some(_)) =
            (self.value("aws_container_credentials_full_uri"), self.value("aws_container_authorization_token_file"))
        {
            format!("EKS Pod Identity container credentials ({uri})")
        } else {
            format!("EC2 instance metadata ({})", self.value("aws_metadata_endpoint").unwrap_or("http://169.254.169.254"))
        }
    }
}

impl fmt::Debug for DefaultChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DefaultChain({})", self.describe())
    }
}

/// When credentials fetched at `now` (the wall clock `wall`) with `expiry` are due again.
fn refresh_at(now: Instant, wall: SystemTime, expiry: Option<SystemTime>) -> Instant {
    match expiry {
        None => now + NO_EXPIRY_REUSE,
        Some(expiry) => {
            let remaining = expiry.duration_since(wall).unwrap_or(Duration::ZERO);
            now + remaining - REFRESH_AHEAD.min(remaining / 2)
        }
    }
}

#[derive(Debug)]
struct Provider(SharedCredentials);

#[async_trait]
impl CredentialProvider for Provider {
    type Credential = AwsCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        let cache = &self.0 .0;
        let mut current = cache.current.lock().await;
        if let Some(c) = current.as_ref().filter(|c| Instant::now() < c.refresh_at) {
            return Ok(c.credential.clone());
        }
        let source = cache.source.clone();
        let fetch = tokio::task::spawn_blocking(move || source.fetch());
        let fetched = match tokio::time::timeout(FETCH_TIMEOUT, fetch).await {
            Ok(joined) => joined.unwrap_or_else(|e| Err(Error::new(ErrorKind::Internal, format!("the credentials source panicked: {e}")))),
            Err(_) => Err(Error::new(ErrorKind::Io, format!("no answer within {} s", FETCH_TIMEOUT.as_secs()))),
        };
        let creds = fetched.map_err(|e| object_store::Error::Generic {
            store: "S3",
            source: Box::new(e.context(format!("getting credentials from {}", self.0.describe()))),
        })?;
        let credential = Arc::new(AwsCredential {
            key_id: creds.access_key_id,
            secret_key: creds.secret_access_key,
            token: creds.session_token,
        });
        *current = Some(Cached { credential: credential.clone(), refresh_at: refresh_at(Instant::now(), SystemTime::now(), creds.expiry) });
        Ok(credential)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn refresh_comes_five_minutes_early_or_at_half_life() {
        let now = Instant::now();
        let wall = SystemTime::now();
        let hour = Duration::from_secs(3600);
        assert_eq!(refresh_at(now, wall, Some(wall + hour)), now + hour - REFRESH_AHEAD);
        let four_min = Duration::from_secs(240);
        assert_eq!(refresh_at(now, wall, Some(wall + four_min)), now + four_min / 2);
        assert_eq!(refresh_at(now, wall, Some(wall - hour)), now, "expired: due at once");
        assert_eq!(refresh_at(now, wall, None), now + NO_EXPIRY_REUSE);
    }

    #[test]
    fn the_default_chain_names_the_link_object_store_will_use() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let web = DefaultChain::from_vars(None, vars(&[
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/c"),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/t"),
        ]));
        assert_eq!(web.describe(), "web identity (role arn:aws:iam::1:role/r, STS https://sts.<region>.amazonaws.com)");
        let pod = DefaultChain::from_vars(None, vars(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/c"), ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/t")]));
        assert_eq!(pod.describe(), "EKS Pod Identity container credentials (http://127.0.0.1:1/c)");
        // A full URI without its token file is not used by object_store: IMDS then.
        let imds = DefaultChain::from_vars(None, vars(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/c"), ("AWS_METADATA_ENDPOINT", "http://127.0.0.1:2")]));
        assert_eq!(imds.describe(), "EC2 instance metadata (http://127.0.0.1:2)");
        // The setting wins over the variable; blank variables count as unset.
        let set = DefaultChain::from_vars(Some("http://127.0.0.1:3"), vars(&[("AWS_METADATA_ENDPOINT", "http://127.0.0.1:2"), ("AWS_ROLE_ARN", " ")]));
        assert_eq!(set.describe(), "EC2 instance metadata (http://127.0.0.1:3)");
        assert_eq!(set.values.len(), 1);
        assert_eq!(DefaultChain::from_vars(None, |_| None).describe(), "EC2 instance metadata (http://169.254.169.254)");
        assert_ne!(web, pod, "different inputs, different clients");
    }

    struct Counting(AtomicU64);

    impl CredentialSource for Counting {
        fn fetch(&self) -> Result<Credentials> {
            let n = self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Credentials { access_key_id: format!("AKID{n}"), secret_access_key: "s".into(), session_token: None, expiry: None })
        }
        fn describe(&self) -> String {
            "counting".into()
        }
    }

    #[test]
    fn the_source_is_asked_once_per_second_and_again_after_invalidation() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let shared = SharedCredentials::new(Counting(AtomicU64::new(0)));
        let p = shared.provider();
        rt.block_on(async {
            assert_eq!(p.get_credential().await.unwrap().key_id, "AKID0");
            assert_eq!(p.get_credential().await.unwrap().key_id, "AKID0", "cached within the second");
            shared.invalidate().await;
            assert_eq!(p.get_credential().await.unwrap().key_id, "AKID1");
            tokio::time::sleep(NO_EXPIRY_REUSE + Duration::from_millis(50)).await;
            assert_eq!(p.get_credential().await.unwrap().key_id, "AKID2", "asked again after a second");
        });
        let shown = format!("{:?}", Credentials { access_key_id: "A".into(), secret_access_key: "SECRET".into(), session_token: Some("TOKEN".into()), expiry: None });
        assert!(!shown.contains("SECRET") && !shown.contains("TOKEN"), "{shown}");
        assert_eq!(shared, shared.clone());
        assert_ne!(shared, SharedCredentials::new(Counting(AtomicU64::new(0))));
    }
}
