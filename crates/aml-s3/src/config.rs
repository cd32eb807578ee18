//! The configuration of the native client: the part of the AWS SDK's `S3ClientConfig` that
//! `s3Workspace({ config })` maps (region, endpoint, static credentials, forcePathStyle).

/// Static credentials (`config.credentials`).
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for S3Credentials {
    // Never print secrets, not even in a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Credentials")
            .field("access_key_id", &self.access_key_id)
            .finish()
    }
}

/// The region an internal client uses when the config names none (BW-3).
pub const DEFAULT_REGION: &str = "us-east-1";

/// How to reach one bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Config {
    pub bucket: String,
    /// Defaults to [`DEFAULT_REGION`].
    pub region: Option<String>,
    /// `http://127.0.0.1:9000`, `https://<account>.r2.cloudflarestorage.com`, …
    pub endpoint: Option<String>,
    /// Without them the environment (`AWS_ACCESS_KEY_ID`, …) and instance metadata apply.
    pub credentials: Option<S3Credentials>,
    /// Path-style URLs (`<endpoint>/<bucket>/<key>`) instead of virtual-hosted ones.
    pub force_path_style: bool,
}

impl S3Config {
    /// The region requests are signed for.
    pub fn region(&self) -> &str {
        self.region.as_deref().unwrap_or(DEFAULT_REGION)
    }

    /// Whether requests address the bucket in the host name. Like the AWS SDK, a bucket
    /// that is not a DNS label, or an endpoint that is an IP address or `localhost`, falls
    /// back to path style.
    pub fn virtual_hosted(&self) -> bool {
        if self.force_path_style || !dns_compatible(&self.bucket) {
            return false;
        }
        match &self.endpoint {
            None => true,
            Some(endpoint) => match host_of(endpoint) {
                Some(host) => {
                    host != "localhost"
                        && host.parse::<std::net::IpAddr>().is_err()
                        && !host.starts_with('[')
                }
                None => false,
            },
        }
    }

    /// The endpoint handed to `object_store`, which expects the bucket in the host name
    /// when it is told to use virtual-hosted requests.
    pub fn effective_endpoint(&self) -> Option<String> {
        let endpoint = self.endpoint.as_deref()?.trim_end_matches('/');
        if !self.virtual_hosted() {
            return Some(endpoint.to_string());
        }
        let (scheme, rest) = endpoint.split_once("://")?;
        Some(format!("{scheme}://{}.{rest}", self.bucket))
    }
}

fn host_of(endpoint: &str) -> Option<&str> {
    let rest = endpoint.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if authority.starts_with('[') {
        return Some(authority);
    }
    Some(authority.split(':').next().unwrap_or(authority))
}

fn dns_compatible(bucket: &str) -> bool {
    (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !bucket.starts_with('-')
        && !bucket.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(bucket: &str, endpoint: Option<&str>, force: bool) -> S3Config {
        S3Config {
            bucket: bucket.into(),
            endpoint: endpoint.map(Into::into),
            force_path_style: force,
            ..S3Config::default()
        }
    }

    #[test]
    fn region_defaults_to_us_east_1() {
        assert_eq!(S3Config::default().region(), "us-east-1");
        let eu = S3Config {
            region: Some("eu-west-1".into()),
            ..S3Config::default()
        };
        assert_eq!(eu.region(), "eu-west-1");
    }

    #[test]
    fn addressing_style() {
        assert!(config("bucket", None, false).virtual_hosted());
        assert!(!config("bucket", None, true).virtual_hosted());
        assert!(!config("My_Bucket", None, false).virtual_hosted());
        assert!(!config("bucket", Some("http://127.0.0.1:9000"), false).virtual_hosted());
        assert!(!config("bucket", Some("http://localhost:9000"), false).virtual_hosted());
        assert_eq!(
            config(
                "bucket",
                Some("https://acct.r2.cloudflarestorage.com/"),
                false
            )
            .effective_endpoint()
            .as_deref(),
            Some("https://bucket.acct.r2.cloudflarestorage.com")
        );
        assert_eq!(
            config("bucket", Some("http://127.0.0.1:9000"), false)
                .effective_endpoint()
                .as_deref(),
            Some("http://127.0.0.1:9000")
        );
    }

    #[test]
    fn credentials_debug_hides_the_secret() {
        let credentials = S3Credentials {
            access_key_id: "AKIA".into(),
            secret_access_key: "very-secret".into(),
            session_token: Some("token".into()),
        };
        let text = format!("{credentials:?}");
        assert!(
            text.contains("AKIA") && !text.contains("very-secret") && !text.contains("token\"")
        );
    }
}
