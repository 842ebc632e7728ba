//! The signing region and endpoint as S3A resolves them, per Hadoop line.
//!
//! Facts from hadoop-aws's `DefaultS3ClientFactory` (3.3.4 on AWS SDK v1; 3.4.1, 3.4.2+ and
//! 3.5.0 on SDK v2) and the SDKs' `AwsHostNameUtils`:
//!
//! | `fs.s3a.endpoint` (region unset) | 3.3 (SDK v1) | 3.4.0-3.4.1 | 3.4.2+, 3.5 |
//! |---|---|---|---|
//! | unset | us-east-1, bucket region looked up | us-east-2, cross-region on | us-east-2, cross-region per key |
//! | ends with `s3.amazonaws.com` | us-east-1, bucket region looked up | us-east-2, no override, cross-region on | us-east-2, no override, cross-region per key |
//! | AWS regional (`s3.eu-west-1...`, `s3-eu-west-1...`, dualstack, FIPS, VPC endpoint) | parsed from the host | parsed from the endpoint | parsed from the endpoint |
//! | third party (MinIO, ...) | us-east-1 | us-east-2 | us-east-2 |
//!
//! `fs.s3a.endpoint.region` set wins everywhere. Cross-region access
//! (`fs.s3a.cross.region.access.enabled`, default true, read by 3.4.2 and later) makes the
//! SDK follow a 301 to the bucket's region (`x-amz-bucket-region`); SDK v1's "global bucket
//! access" asks for the bucket's region before its first request. The native client does
//! the same thing once per bucket per process (see `pool`), when it talks to AWS's own
//! endpoints and no region is configured: with a configured region, or an endpoint override
//! (a regional or third-party endpoint), it signs with the region above and does not follow
//! a redirect (S3's 301 error is the write's error).

use crate::error::{Error, Result};

/// `fs.s3a.native.region.rule`: which Hadoop line's rule to apply. The JVM side sets it from
/// the hadoop-aws on its classpath; without it the newest rule applies.
pub const RULE_KEY: &str = "fs.s3a.native.region.rule";

/// S3A's `AWS_S3_CENTRAL_REGION`.
pub const CENTRAL_REGION: &str = "us-east-1";
/// S3A's `AWS_S3_DEFAULT_REGION` (SDK v2 lines).
pub const DEFAULT_REGION: &str = "us-east-2";
const CENTRAL_ENDPOINT: &str = "s3.amazonaws.com";

/// The Hadoop line whose region rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// hadoop-aws 3.3.x (AWS SDK v1): `3.3`.
    V1,
    /// hadoop-aws 3.4.0 and 3.4.1 (SDK v2, no `fs.s3a.cross.region.access.enabled`): `3.4.1`.
    V2,
    /// hadoop-aws 3.4.2 and later, 3.5 (`fs.s3a.cross.region.access.enabled`): `3.4.2`.
    V2CrossRegionKey,
}

impl Rule {
    /// Parse the value of [`RULE_KEY`].
    pub fn parse(v: &str) -> std::result::Result<Rule, String> {
        match v {
            "3.3" => Ok(Rule::V1),
            "3.4.1" => Ok(Rule::V2),
            "3.4.2" => Ok(Rule::V2CrossRegionKey),
            _ => Err(format!("'{v}' is not one of 3.3, 3.4.1, 3.4.2")),
        }
    }
}

/// Where a client signs and sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The signing region (before any lookup of the bucket's region).
    pub region: String,
    /// Whether the configured endpoint is used; false: AWS's own endpoint for `region`.
    pub use_endpoint: bool,
    /// Ask S3 for the bucket's region (`x-amz-bucket-region`) and use it instead of `region`:
    /// where S3A's SDK would follow the bucket to its region, and no region is configured. A
    /// configured region is trusted without a request (the SDKs would follow a wrong one; the
    /// native client then fails with S3's redirect error, and private networks without a
    /// route to `s3.amazonaws.com` pay no lookup).
    pub lookup_bucket_region: bool,
}

/// The region for `endpoint` (the raw `fs.s3a.endpoint`, `None` when unset) and
/// `configured` (`fs.s3a.endpoint.region`: `None` unset, `Some("")` set but blank) under
/// `rule`; `cross_region` is `fs.s3a.cross.region.access.enabled` (read by
/// [`Rule::V2CrossRegionKey`] only).
///
/// Errors: a blank region that S3A would leave to the AWS SDK's region chain (environment,
/// profile, instance metadata), which the native client does not reproduce: `Unsupported`
/// naming `region_key`.
pub fn resolve(
    rule: Rule,
    endpoint: Option<&str>,
    configured: Option<&str>,
    cross_region: bool,
    region_key: &str,
) -> Result<Resolution> {
    let explicit = configured.filter(|r| !r.is_empty()).map(str::to_string);
    let sdk_chain = || Error::unsupported(region_key, "a blank region (the AWS SDK's region chain)");
    match rule {
        Rule::V1 => {
            let Some(endpoint) = endpoint else {
                // No endpoint: the SDK is told to find the bucket's region ("global bucket
                // access"), starting from the configured region or us-east-1.
                // A configured region is taken as the bucket's (see `Resolution`).
                let (region, lookup) = match configured {
                    None => (CENTRAL_REGION.to_string(), true),
                    Some("") => return Err(sdk_chain()),
                    Some(r) => (r.to_string(), false),
                };
                return Ok(Resolution { region, use_endpoint: false, lookup_bucket_region: lookup });
            };
            if let Some(region) = explicit {
                return Ok(Resolution { region, use_endpoint: true, lookup_bucket_region: false });
            }
            let host = host_of(endpoint);
            if is_v1_us_standard(endpoint) {
                // Region left to the SDK, which signs us-east-1 and, for hosts ending with
                // s3.amazonaws.com, looks the bucket's region up.
                let lookup = host.ends_with(CENTRAL_ENDPOINT);
                return Ok(Resolution {
                    region: CENTRAL_REGION.to_string(),
                    use_endpoint: !lookup,
                    lookup_bucket_region: lookup,
                });
            }
            let region = parse_region(host, "s3").unwrap_or_else(|| CENTRAL_REGION.to_string());
            Ok(Resolution { region, use_endpoint: true, lookup_bucket_region: false })
        }
        Rule::V2 | Rule::V2CrossRegionKey => {
            let key_cross = rule == Rule::V2CrossRegionKey && cross_region;
            let mut region = explicit;
            let mut use_endpoint = false;
            let mut cross = key_cross;
            if let Some(endpoint) = endpoint {
                let central = endpoint.ends_with(CENTRAL_ENDPOINT);
                if region.is_none() {
                    region = if central { Some(DEFAULT_REGION.to_string()) } else { region_of_v2_endpoint(endpoint) };
                }
                if central {
                    // 3.4.1 always enables cross-region access for the central endpoint.
                    cross |= rule == Rule::V2;
                } else {
                    use_endpoint = true;
                }
            }
            let configured_region = explicit_is_set(configured);
            let region = match (region, configured) {
                (Some(r), _) => r,
                (None, None) => {
                    cross |= rule == Rule::V2;
                    DEFAULT_REGION.to_string()
                }
                (None, Some(_)) => return Err(sdk_chain()),
            };
            Ok(Resolution { region, use_endpoint, lookup_bucket_region: cross && !use_endpoint && !configured_region })
        }
    }
}

fn explicit_is_set(configured: Option<&str>) -> bool {
    configured.is_some_and(|r| !r.is_empty())
}

/// The host of an endpoint given as a URL or host[:port] (as SDK v1's `toUri(...).getHost()`).
fn host_of(endpoint: &str) -> &str {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    let rest = rest.split(['/', '?']).next().unwrap_or(rest);
    match rest.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => rest,
    }
}

/// SDK v1's `ServiceUtils.isS3USStandardEndpoint` on the raw endpoint.
fn is_v1_us_standard(endpoint: &str) -> bool {
    endpoint.ends_with(CENTRAL_ENDPOINT) || endpoint.ends_with("s3-external-1.amazonaws.com")
}

/// hadoop-aws 3.4+'s `getS3RegionFromEndpoint` for a non-central endpoint: a VPC endpoint's
/// region, else the SDK's signing region parsed from the raw endpoint string.
fn region_of_v2_endpoint(endpoint: &str) -> Option<String> {
    for suffix in [".vpce.amazonaws.com", ".vpce.amazonaws.com.cn"] {
        if let Some(front) = endpoint.strip_suffix(suffix) {
            let label = front.rsplit('.').next().unwrap_or(front);
            if !label.is_empty() && label.bytes().all(is_region_byte) {
                return Some(label.to_string());
            }
        }
    }
    parse_region(endpoint, "s3")
}

fn is_region_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
}

/// The SDKs' `AwsHostNameUtils.parseRegion` / `parseSigningRegion` with a service hint.
fn parse_region(host: &str, service: &str) -> Option<String> {
    if let Some(front) = host.strip_suffix(".amazonaws.com") {
        return Some(standard_region_name(front));
    }
    if !host.is_ascii() {
        return None;
    }
    // `^(?:.+\.)?<service>[.-]([a-z0-9-]+)\.`, first (greedy: last-starting) match.
    let starts = (0..host.len()).rev().filter(|&i| i == 0 || host.as_bytes()[i - 1] == b'.');
    for i in starts {
        let Some(rest) = host[i..].strip_prefix(service) else { continue };
        let Some(rest) = rest.strip_prefix('.').or_else(|| rest.strip_prefix('-')) else { continue };
        let run = rest.bytes().take_while(|b| is_region_byte(*b)).count();
        if run > 0 && rest.as_bytes().get(run) == Some(&b'.') {
            return Some(rest[..run].to_string());
        }
    }
    None
}

/// `parseStandardRegionName`: the region in `<front>.amazonaws.com`.
fn standard_region_name(front: &str) -> String {
    // `^(?:.+\.)?s3[.-]([a-z0-9-]+)$`: the region is the last label after `s3-`, or the
    // last label when the one before it is `s3`.
    let (before, last) = match front.rsplit_once('.') {
        Some((b, l)) => (Some(b), l),
        None => (None, front),
    };
    let valid = |s: &str| !s.is_empty() && s.bytes().all(is_region_byte);
    if let Some(r) = last.strip_prefix("s3-").filter(|r| valid(r)) {
        return r.to_string();
    }
    if let Some(b) = before {
        if (b == "s3" || b.ends_with(".s3")) && valid(last) {
            return last.to_string();
        }
    }
    match before {
        None => CENTRAL_REGION.to_string(),
        Some(_) if last == "us-gov" => "us-gov-west-1".to_string(),
        Some(_) => last.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(rule: Rule, endpoint: Option<&str>, region: Option<&str>) -> (String, bool, bool) {
        let x = resolve(rule, endpoint, region, true, "fs.s3a.endpoint.region").unwrap();
        (x.region, x.use_endpoint, x.lookup_bucket_region)
    }

    fn s(region: &str, use_endpoint: bool, lookup: bool) -> (String, bool, bool) {
        (region.to_string(), use_endpoint, lookup)
    }

    #[test]
    fn aws_host_names_give_their_region() {
        let cases = [
            ("s3.eu-west-1.amazonaws.com", "eu-west-1"),
            ("s3-eu-west-1.amazonaws.com", "eu-west-1"),
            ("bucket.s3-eu-west-1.amazonaws.com", "eu-west-1"),
            ("s3.dualstack.eu-west-1.amazonaws.com", "eu-west-1"),
            ("s3-fips.us-east-2.amazonaws.com", "us-east-2"),
            ("s3-fips.dualstack.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
            ("s3.amazonaws.com", "us-east-1"),
            ("iam.us-gov.amazonaws.com", "us-gov-west-1"),
        ];
        for (host, region) in cases {
            assert_eq!(parse_region(host, "s3").as_deref(), Some(region), "{host}");
        }
        // Non-AWS hosts: only `s3.<region>.` / `s3-<region>.` in the name.
        assert_eq!(parse_region("s3.fr-par.scw.cloud", "s3").as_deref(), Some("fr-par"));
        assert_eq!(parse_region("minio.s3-local.example.com", "s3").as_deref(), Some("local"));
        assert_eq!(parse_region("127.0.0.1:9000", "s3"), None);
        assert_eq!(parse_region("minio.example.com", "s3"), None);
        assert_eq!(
            region_of_v2_endpoint("bucket.vpce-1a2b3c4d-5e6f.s3.us-west-2.vpce.amazonaws.com").as_deref(),
            Some("us-west-2")
        );
    }

    #[test]
    fn an_explicit_region_wins_on_every_line() {
        for rule in [Rule::V1, Rule::V2, Rule::V2CrossRegionKey] {
            assert_eq!(r(rule, Some("127.0.0.1:9000"), Some("eu-north-1")), s("eu-north-1", true, false), "{rule:?}");
            assert_eq!(r(rule, Some("s3.eu-west-1.amazonaws.com"), Some("ap-south-1")), s("ap-south-1", true, false));
        }
    }

    #[test]
    fn third_party_endpoints_sign_the_lines_default() {
        assert_eq!(r(Rule::V1, Some("http://127.0.0.1:9000"), None), s("us-east-1", true, false));
        assert_eq!(r(Rule::V2, Some("http://127.0.0.1:9000"), None), s("us-east-2", true, false));
        assert_eq!(r(Rule::V2CrossRegionKey, Some("127.0.0.1:9000"), None), s("us-east-2", true, false));
        // `s3.<region>.` in a third-party host names the region, but only at the start of the
        // raw string or after a dot: with a scheme SDK v2 finds none, SDK v1 parses the host.
        assert_eq!(r(Rule::V2CrossRegionKey, Some("s3.fr-par.scw.cloud"), None), s("fr-par", true, false));
        assert_eq!(r(Rule::V2CrossRegionKey, Some("https://s3.fr-par.scw.cloud"), None), s("us-east-2", true, false));
        assert_eq!(r(Rule::V1, Some("https://s3.fr-par.scw.cloud"), None), s("fr-par", true, false));
    }

    #[test]
    fn regional_aws_endpoints_sign_their_region() {
        for rule in [Rule::V1, Rule::V2, Rule::V2CrossRegionKey] {
            assert_eq!(r(rule, Some("s3.eu-west-1.amazonaws.com"), None), s("eu-west-1", true, false), "{rule:?}");
            assert_eq!(r(rule, Some("s3-eu-west-1.amazonaws.com"), None), s("eu-west-1", true, false), "{rule:?}");
            assert_eq!(r(rule, Some("s3.dualstack.ap-east-1.amazonaws.com"), None), s("ap-east-1", true, false));
        }
        // SDK v2 parses the raw string: with a scheme, the legacy dash form has no dot left.
        assert_eq!(r(Rule::V2, Some("https://s3-eu-west-1.amazonaws.com"), None), s("us-east-1", true, false));
        assert_eq!(r(Rule::V1, Some("https://s3-eu-west-1.amazonaws.com"), None), s("eu-west-1", true, false));
    }

    #[test]
    fn no_endpoint_or_the_central_one_looks_the_bucket_up() {
        assert_eq!(r(Rule::V1, None, None), s("us-east-1", false, true));
        assert_eq!(r(Rule::V1, None, Some("eu-west-1")), s("eu-west-1", false, false));
        assert_eq!(r(Rule::V1, Some("s3.amazonaws.com"), None), s("us-east-1", false, true));
        for rule in [Rule::V2, Rule::V2CrossRegionKey] {
            assert_eq!(r(rule, None, None), s("us-east-2", false, true), "{rule:?}");
            assert_eq!(r(rule, Some("s3.amazonaws.com"), None), s("us-east-2", false, true), "{rule:?}");
            assert_eq!(r(rule, Some("https://s3.amazonaws.com"), None), s("us-east-2", false, true), "{rule:?}");
        }
        // A configured region is trusted: no lookup, on any line.
        assert_eq!(r(Rule::V2, None, Some("eu-west-1")), s("eu-west-1", false, false));
        assert_eq!(r(Rule::V2CrossRegionKey, None, Some("eu-west-1")), s("eu-west-1", false, false));
        assert_eq!(r(Rule::V2, Some("s3.amazonaws.com"), Some("eu-west-1")), s("eu-west-1", false, false));
        // A blank one with the central endpoint is the central rule's.
        assert_eq!(r(Rule::V2, Some("s3.amazonaws.com"), Some("")), s("us-east-2", false, true));
    }

    #[test]
    fn the_cross_region_key_is_read_from_3_4_2_on() {
        let off = |rule, e| resolve(rule, e, None, false, "k").unwrap();
        assert!(!off(Rule::V2CrossRegionKey, None).lookup_bucket_region);
        assert!(!off(Rule::V2CrossRegionKey, Some("s3.amazonaws.com")).lookup_bucket_region);
        assert_eq!(off(Rule::V2CrossRegionKey, None).region, "us-east-2");
        assert!(off(Rule::V2, None).lookup_bucket_region);
        assert!(off(Rule::V1, None).lookup_bucket_region);
    }

    #[test]
    fn a_blank_region_is_left_to_the_sdk_chain_only_when_nothing_else_names_one() {
        for rule in [Rule::V1, Rule::V2, Rule::V2CrossRegionKey] {
            let e = resolve(rule, None, Some(""), true, "fs.s3a.endpoint.region").unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::Unsupported);
            assert_eq!(e.setting(), Some("fs.s3a.endpoint.region"));
            let ok = resolve(rule, Some("s3.eu-west-1.amazonaws.com"), Some(""), true, "k").unwrap();
            assert_eq!(ok.region, "eu-west-1");
        }
        assert!(resolve(Rule::V2, Some("127.0.0.1:9000"), Some(""), true, "k").is_err());
        assert_eq!(resolve(Rule::V1, Some("127.0.0.1:9000"), Some(""), true, "k").unwrap().region, "us-east-1");
    }

    #[test]
    fn rules_parse_by_name() {
        assert_eq!(Rule::parse("3.3"), Ok(Rule::V1));
        assert_eq!(Rule::parse("3.4.1"), Ok(Rule::V2));
        assert_eq!(Rule::parse("3.4.2"), Ok(Rule::V2CrossRegionKey));
        assert!(Rule::parse("3.9").is_err());
    }
}
