//! [`ObjectClient`] over `object_store`'s S3 client: SigV4 signing, retries of idempotent
//! requests, `ListObjectsV2` pagination, and conditional PUTs (`PutMode::Create` sends
//! `If-None-Match: *`, `PutMode::Update` sends `If-Match: <etag>`).

use std::sync::Once;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutMode,
    PutOptions, PutPayload, RetryConfig, UpdateVersion,
};

use crate::client::{Fetched, ObjectClient, PutCondition, S3Error};
use crate::config::S3Config;

/// The native S3 client of `s3Workspace({ config })`.
#[derive(Debug)]
pub struct NativeS3Client {
    store: AmazonS3,
}

static TLS_PROVIDER: Once = Once::new();

impl NativeS3Client {
    /// Builds the client. No request is made here (the factory performs no network I/O).
    pub fn new(config: &S3Config) -> Result<Self, S3Error> {
        // reqwest is built without a bundled crypto provider; https uses rustls with ring.
        // Installing fails only when the process already chose one, which is as good.
        TLS_PROVIDER.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        // The environment supplies what the config leaves out (credentials, as the AWS SDK's
        // default chain does); the config's own members always win.
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(&config.bucket)
            .with_region(config.region())
            .with_virtual_hosted_style_request(config.virtual_hosted())
            // Like the AWS SDK's standard mode: three attempts in all.
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 2,
                retry_timeout: Duration::from_secs(60),
            })
            // No whole-request timeout (a 256 MiB archive may take long), but an idle one: a
            // server that stops answering fails the request instead of hanging a run that has
            // no AbortSignal deadline. Each retry waits again.
            .with_client_options(
                ClientOptions::new()
                    .with_connect_timeout(Duration::from_secs(10))
                    .with_timeout_disabled()
                    .with_read_timeout(read_timeout()),
            );
        if let Some(endpoint) = config.effective_endpoint() {
            builder = builder
                .with_allow_http(endpoint.starts_with("http://"))
                .with_endpoint(endpoint);
        }
        if let Some(credentials) = &config.credentials {
            builder = builder
                .with_access_key_id(&credentials.access_key_id)
                .with_secret_access_key(&credentials.secret_access_key);
            if let Some(token) = &credentials.session_token {
                builder = builder.with_token(token);
            }
        }
        let store = builder.build().map_err(|error| {
            S3Error::Failed(format!("S3 client configuration is invalid: {error}"))
        })?;
        Ok(Self { store })
    }
}

/// How long a request may wait without receiving a byte: 120 s unless the environment sets
/// `AML_S3_READ_TIMEOUT_MS` (a positive integer; anything else is ignored).
pub const READ_TIMEOUT_VARIABLE: &str = "AML_S3_READ_TIMEOUT_MS";
const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(120);

fn read_timeout() -> Duration {
    aml_text::env_millis(READ_TIMEOUT_VARIABLE).unwrap_or(DEFAULT_READ_TIMEOUT)
}

fn path(key: &str) -> Result<Path, S3Error> {
    Path::parse(key)
        .map_err(|error| S3Error::Failed(format!("S3 key \"{key}\" is invalid: {error}")))
}

fn failure(operation: &str, key: &str, error: object_store::Error) -> S3Error {
    match error {
        object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. } => {
            S3Error::PreconditionFailed(format!("S3 {operation} \"{key}\" precondition failed"))
        }
        other => S3Error::Failed(format!("S3 {operation} \"{key}\" failed: {other}")),
    }
}

#[async_trait]
impl ObjectClient for NativeS3Client {
    async fn get(&self, key: &str) -> Result<Option<Fetched>, S3Error> {
        match self.store.get(&path(key)?).await {
            Ok(result) => {
                let etag = result.meta.e_tag.clone();
                let owned = key.to_string();
                let body = result
                    .into_stream()
                    .map_err(move |error| failure("GetObject", &owned, error))
                    .boxed();
                Ok(Some(Fetched {
                    etag,
                    body: Some(body),
                }))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(failure("GetObject", key, error)),
        }
    }

    async fn put(
        &self,
        key: &str,
        body: Bytes,
        condition: &PutCondition,
        content_type: Option<&str>,
    ) -> Result<Option<String>, S3Error> {
        let mode = match condition {
            PutCondition::None => PutMode::Overwrite,
            PutCondition::Absent => PutMode::Create,
            PutCondition::Matches(etag) => PutMode::Update(UpdateVersion {
                e_tag: Some(etag.clone()),
                version: None,
            }),
        };
        let mut attributes = Attributes::new();
        if let Some(content_type) = content_type {
            attributes.insert(Attribute::ContentType, content_type.to_string().into());
        }
        let options = PutOptions {
            mode,
            attributes,
            ..PutOptions::default()
        };
        match self
            .store
            .put_opts(&path(key)?, PutPayload::from(body), options)
            .await
        {
            Ok(result) => Ok(result.e_tag),
            Err(error) => Err(failure("PutObject", key, error)),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), S3Error> {
        match self.store.delete(&path(key)?).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(failure("DeleteObject", key, error)),
        }
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, S3Error> {
        // object_store lists "directories" (`<dir>/`); a plain string prefix is the listing
        // of its parent directory, filtered.
        let directory = prefix.rsplit_once('/').map_or("", |(dir, _)| dir);
        let directory = if directory.is_empty() {
            None
        } else {
            Some(path(directory)?)
        };
        let mut keys = Vec::new();
        let mut listing = self.store.list(directory.as_ref());
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|error| failure("ListObjectsV2", prefix, error))?;
            let key = meta.location.as_ref();
            if key.starts_with(prefix) {
                keys.push(key.to_string());
            }
        }
        keys.sort();
        Ok(keys)
    }
}
