//! Replies a conforming S3 server never gives (no ETag, no body, failing requests), from a
//! scripted client, so each documented message is provoked. The S3 semantics themselves are
//! proven against moto in `tests/moto`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use aml_s3::{
    ErrorClass, Fetched, ObjectClient, PutCondition, S3Error, S3WorkspaceStorage, StorageError,
    DEFAULT_PREFIX,
};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;

enum Get {
    Missing,
    Object {
        etag: Option<&'static str>,
        body: Option<&'static str>,
    },
    Fail,
}

enum Put {
    Etag(Option<&'static str>),
    Precondition,
    Fail,
}

#[derive(Default)]
struct Scripted {
    gets: Mutex<VecDeque<Get>>,
    puts: Mutex<VecDeque<Put>>,
    deletes: Mutex<Vec<String>>,
}

#[async_trait]
impl ObjectClient for Scripted {
    async fn get(&self, _key: &str) -> Result<Option<Fetched>, S3Error> {
        match self.gets.lock().unwrap().pop_front().expect("scripted GET") {
            Get::Missing => Ok(None),
            Get::Fail => Err(S3Error::Failed("S3 GetObject failed: access denied".into())),
            Get::Object { etag, body } => Ok(Some(Fetched {
                etag: etag.map(Into::into),
                body: body.map(|text| {
                    futures_util::stream::once(async move { Ok(Bytes::from(text)) }).boxed()
                }),
            })),
        }
    }

    async fn put(
        &self,
        _: &str,
        _: Bytes,
        _: &PutCondition,
        _: Option<&str>,
    ) -> Result<Option<String>, S3Error> {
        match self.puts.lock().unwrap().pop_front().expect("scripted PUT") {
            Put::Etag(etag) => Ok(etag.map(Into::into)),
            Put::Precondition => Err(S3Error::PreconditionFailed("precondition".into())),
            Put::Fail => Err(S3Error::Failed("S3 PutObject failed: throttled".into())),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), S3Error> {
        self.deletes.lock().unwrap().push(key.into());
        Ok(())
    }

    async fn list(&self, _: &str) -> Result<Vec<String>, S3Error> {
        Ok(Vec::new())
    }
}

fn scripted(gets: Vec<Get>, puts: Vec<Put>) -> (Arc<Scripted>, S3WorkspaceStorage) {
    let client = Arc::new(Scripted {
        gets: Mutex::new(gets.into()),
        puts: Mutex::new(puts.into()),
        ..Scripted::default()
    });
    (
        client.clone(),
        S3WorkspaceStorage::new(client, "bucket", DEFAULT_PREFIX),
    )
}

fn error(message: &str) -> StorageError {
    StorageError::Failed {
        class: ErrorClass::Error,
        message: message.into(),
        cause: None,
    }
}

const OLD_LOCK: &str = r#"{"token":"old","updatedAt":"2020-01-01T00:00:00.000Z"}"#;

#[tokio::test]
async fn lock_create_without_etag_is_given_back() {
    let (client, storage) = scripted(vec![], vec![Put::Etag(None)]);
    let failure = storage.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        failure,
        error("S3 Workspace lock operation did not return an ETag")
    );
    assert_eq!(
        *client.deletes.lock().unwrap(),
        ["aml/workspaces/ws/lock.json"]
    );
}

#[tokio::test]
async fn inspected_lock_without_body_or_etag() {
    let (_, storage) = scripted(
        vec![Get::Object {
            etag: Some("e"),
            body: None,
        }],
        vec![Put::Precondition],
    );
    let failure = storage.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        failure,
        error("S3 Workspace lock did not contain a streaming body")
    );
    let (_, storage) = scripted(
        vec![Get::Object {
            etag: None,
            body: Some(OLD_LOCK),
        }],
        vec![Put::Precondition],
    );
    let failure = storage.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        failure,
        error("S3 Workspace lock operation did not return an ETag")
    );
}

#[tokio::test]
async fn inspection_failure_keeps_its_cause() {
    let (_, storage) = scripted(vec![Get::Fail], vec![Put::Precondition]);
    let failure = storage.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        failure,
        StorageError::Failed {
            class: ErrorClass::Error,
            message: "S3 Workspace \"ws\" could not inspect its lock".into(),
            cause: Some(S3Error::Failed("S3 GetObject failed: access denied".into())),
        }
    );
}

#[tokio::test]
async fn stale_replacement_failure_and_race() {
    let (_, storage) = scripted(
        vec![Get::Object {
            etag: Some("e"),
            body: Some(OLD_LOCK),
        }],
        vec![Put::Precondition, Put::Fail],
    );
    let failure = storage.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        failure,
        StorageError::Failed {
            class: ErrorClass::Error,
            message: "S3 Workspace \"ws\" could not replace its stale lock".into(),
            cause: Some(S3Error::Failed("S3 PutObject failed: throttled".into())),
        }
    );
    // Another process replaced the stale lock first: a conflict, not a failure.
    let (_, storage) = scripted(
        vec![Get::Object {
            etag: Some("e"),
            body: Some(OLD_LOCK),
        }],
        vec![Put::Precondition, Put::Precondition],
    );
    assert_eq!(
        storage.acquire("ws", true).await.err().unwrap(),
        StorageError::Conflict {
            workspace_id: "ws".into()
        }
    );
}

#[tokio::test]
async fn a_lock_that_keeps_vanishing_is_a_conflict() {
    let (_, storage) = scripted(
        vec![Get::Missing, Get::Missing, Get::Missing],
        vec![Put::Precondition, Put::Precondition, Put::Precondition],
    );
    assert_eq!(
        storage.acquire("ws", true).await.err().unwrap(),
        StorageError::Conflict {
            workspace_id: "ws".into()
        }
    );
}

#[tokio::test]
async fn objects_without_body_or_etag() {
    let (_, storage) = scripted(
        vec![
            Get::Object {
                etag: Some("e"),
                body: None,
            },
            Get::Object {
                etag: None,
                body: Some("x"),
            },
        ],
        vec![Put::Etag(None)],
    );
    let lease = storage.acquire("ws", false).await.unwrap();
    let read = lease.read("workspace.json").await.err().unwrap();
    assert_eq!(
        read,
        error("S3 Workspace \"ws\" object \"workspace.json\" did not return a streaming body")
    );
    let read = lease.read("revisions/r.tar.gz").await.err().unwrap();
    assert_eq!(
        read,
        error("S3 Workspace \"ws\" object \"revisions/r.tar.gz\" did not return an ETag")
    );
    let write = lease
        .write("workspace.json", Bytes::from("{}"), None, None)
        .await
        .unwrap_err();
    assert_eq!(
        write,
        error("S3 Workspace \"ws\" object \"workspace.json\" did not return an ETag")
    );
}

#[tokio::test]
async fn release_surfaces_an_inspection_failure() {
    let (_, storage) = scripted(vec![Get::Fail], vec![Put::Etag(Some("e1"))]);
    let lease = storage.acquire("ws", true).await.unwrap();
    let failure = lease.release().await.unwrap_err();
    assert_eq!(
        failure.message(),
        "S3 Workspace \"ws\" could not inspect its lock"
    );
    // Memoised: the second call reports the same outcome without another request.
    assert_eq!(lease.release().await.unwrap_err(), failure);
}
