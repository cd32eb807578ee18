//! An in-memory bucket with S3's conditional-write semantics, shared by the tests that need
//! no real server (the same requests are proven against moto in `tests/moto`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use aml_s3::{Fetched, ObjectClient, PutCondition, S3Error};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;

/// Objects with ETags; conditions are checked and applied under one lock, as S3 does.
#[derive(Default)]
pub struct Bucket {
    pub objects: Mutex<HashMap<String, (String, Bytes)>>,
    versions: Mutex<u64>,
}

#[async_trait]
impl ObjectClient for Bucket {
    async fn get(&self, key: &str) -> Result<Option<Fetched>, S3Error> {
        // Every request yields once, so concurrent acquisitions interleave.
        tokio::task::yield_now().await;
        let object = self.objects.lock().unwrap().get(key).cloned();
        Ok(object.map(|(etag, body)| Fetched {
            etag: Some(etag),
            body: Some(futures_util::stream::once(async move { Ok(body) }).boxed()),
        }))
    }

    async fn put(
        &self,
        key: &str,
        body: Bytes,
        condition: &PutCondition,
        _: Option<&str>,
    ) -> Result<Option<String>, S3Error> {
        tokio::task::yield_now().await;
        let mut objects = self.objects.lock().unwrap();
        let current = objects.get(key).map(|(etag, _)| etag.as_str());
        let holds = match condition {
            PutCondition::None => true,
            PutCondition::Absent => current.is_none(),
            PutCondition::Matches(etag) => current == Some(etag.as_str()),
        };
        if !holds {
            return Err(S3Error::PreconditionFailed("precondition failed".into()));
        }
        let mut versions = self.versions.lock().unwrap();
        *versions += 1;
        let etag = format!("\"v{versions}\"");
        objects.insert(key.to_string(), (etag.clone(), body));
        Ok(Some(etag))
    }

    async fn delete(&self, key: &str) -> Result<(), S3Error> {
        self.objects.lock().unwrap().remove(key);
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, S3Error> {
        Ok(self.keys(prefix))
    }
}

impl Bucket {
    /// Every key beneath `prefix`, sorted.
    pub fn keys(&self, prefix: &str) -> Vec<String> {
        let mut keys: Vec<String> = self
            .objects
            .lock()
            .unwrap()
            .keys()
            .filter(|key| key.starts_with(prefix))
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    /// Stores `body` at `key` unconditionally (planting what another process left).
    pub fn plant(&self, key: &str, body: impl Into<Bytes>) {
        self.objects
            .lock()
            .unwrap()
            .insert(key.to_string(), ("\"planted\"".into(), body.into()));
    }
}
