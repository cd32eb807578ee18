//! The storage lease: layout, paths, conditional writes, listing, deletion.

use aml_s3::{ObjectClient, S3WorkspaceStorage, StorageError, WriteCondition, DEFAULT_PREFIX};
use bytes::Bytes;
use futures_util::TryStreamExt;

use crate::{Case, Env};

pub const CASES: &[(&str, Case)] = &[
    ("storage_layout_and_round_trip", |env| {
        Box::pin(round_trip(env))
    }),
    ("storage_conditional_writes", |env| {
        Box::pin(conditional(env))
    }),
    ("storage_invalid_paths", |env| Box::pin(invalid_paths(env))),
    ("storage_list_and_delete", |env| Box::pin(list_delete(env))),
];

async fn round_trip(env: Env) {
    let s = S3WorkspaceStorage::new(env.client(), env.bucket.clone(), "team/ws");
    let lease = s.acquire("review 42/..", true).await.unwrap();
    assert!(lease.read("workspace.json").await.unwrap().is_none());
    let version = lease
        .write(
            "revisions/r1.tar.gz",
            Bytes::from("archive"),
            None,
            Some("application/gzip"),
        )
        .await
        .unwrap();
    let object = lease.read("revisions/r1.tar.gz").await.unwrap().unwrap();
    assert_eq!(object.version, version);
    let body: Vec<Bytes> = object.body.try_collect().await.unwrap();
    assert_eq!(body.concat(), b"archive");
    let keys = env.client().list("team/").await.unwrap();
    assert_eq!(
        keys,
        [
            "team/ws/review%2042%2F../lock.json",
            "team/ws/review%2042%2F../revisions/r1.tar.gz"
        ]
    );
    lease.release().await.unwrap();
    let error = lease.read("workspace.json").await.err().unwrap();
    assert_eq!(
        error.message(),
        "S3 Workspace \"review 42/..\" storage lease was released"
    );
}

async fn conditional(env: Env) {
    let s = S3WorkspaceStorage::new(env.client(), env.bucket.clone(), DEFAULT_PREFIX);
    let lease = s.acquire("ws", false).await.unwrap();
    let first = lease
        .write(
            "workspace.json",
            Bytes::from("1"),
            Some(&WriteCondition::Absent),
            None,
        )
        .await
        .unwrap();
    let absent = lease
        .write(
            "workspace.json",
            Bytes::from("2"),
            Some(&WriteCondition::Absent),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&absent, StorageError::ConditionFailed { path, .. } if path == "workspace.json"),
        "{absent:?}"
    );
    let second = lease
        .write(
            "workspace.json",
            Bytes::from("2"),
            Some(&WriteCondition::Version(first.clone())),
            None,
        )
        .await
        .unwrap();
    let stale = lease
        .write(
            "workspace.json",
            Bytes::from("3"),
            Some(&WriteCondition::Version(first)),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(stale, StorageError::ConditionFailed { .. }));
    assert_eq!(
        lease.read("workspace.json").await.unwrap().unwrap().version,
        second
    );
}

async fn invalid_paths(env: Env) {
    let s = S3WorkspaceStorage::new(env.client(), env.bucket.clone(), DEFAULT_PREFIX);
    let lease = s.acquire("ws", false).await.unwrap();
    for path in ["", "/abs", "a/../b", "a//b", "a\\b", "..", "a/"] {
        let expected = format!("S3 Workspace storage path \"{path}\" is invalid");
        assert_eq!(lease.read(path).await.err().unwrap().message(), expected);
        assert_eq!(
            lease
                .write(path, Bytes::new(), None, None)
                .await
                .unwrap_err()
                .message(),
            expected
        );
        assert_eq!(
            lease
                .delete(&[path.to_string()])
                .await
                .unwrap_err()
                .message(),
            expected
        );
    }
    assert_eq!(
        lease.list("../").await.unwrap_err().message(),
        "S3 Workspace storage path \"../\" is invalid"
    );
    let id = s.acquire(" ws", false).await.err().unwrap();
    assert_eq!(
        id.message(),
        "Workspace storage id must be a non-empty normalized string"
    );
}

async fn list_delete(env: Env) {
    let s = S3WorkspaceStorage::new(env.client(), env.bucket.clone(), DEFAULT_PREFIX);
    let lease = s.acquire("ws", false).await.unwrap();
    let other = s.acquire("ws2", false).await.unwrap();
    for path in [
        "revisions/a/files/x",
        "revisions/a/manifest.json",
        "revisions/ab.tar.gz",
        "workspace.json",
    ] {
        lease
            .write(path, Bytes::from(path), None, None)
            .await
            .unwrap();
    }
    other
        .write("revisions/a/files/x", Bytes::from("other"), None, None)
        .await
        .unwrap();
    assert_eq!(
        lease.list("revisions/a/").await.unwrap(),
        ["revisions/a/files/x", "revisions/a/manifest.json"]
    );
    assert_eq!(lease.list("revisions/a").await.unwrap().len(), 3);
    assert_eq!(lease.list("").await.unwrap().len(), 4);
    lease
        .delete(&[
            "revisions/a/files/x".into(),
            "revisions/a/manifest.json".into(),
            "never-there".into(),
        ])
        .await
        .unwrap();
    assert_eq!(
        lease.list("revisions/").await.unwrap(),
        ["revisions/ab.tar.gz"]
    );
    assert_eq!(other.list("").await.unwrap(), ["revisions/a/files/x"]);
}
