//! Credentials from a source the caller gives: the JVM's S3A provider chain (through
//! `jni`), or any [`CredentialSource`] of a Rust caller (the C ABI has none yet).
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
//! Concurrent requests that find the cache due wait for one fetch. The source is called on a
//! blocking thread of the runtime, holding only this cache's own lock.
//!
//! Without a source, the settings' keys (`fs.s3a.access.key`, ...) or the `AWS_*`
//! environment variables are used, else the instance metadata service (object_store's
//! fallback; web identity and container credentials are not read without a source).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use object_store::aws::AwsCredential;
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
