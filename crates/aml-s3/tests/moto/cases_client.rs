//! The native client's four operations and their conditions.

use std::sync::Arc;

use aml_s3::{NativeS3Client, ObjectClient, PutCondition, S3Config, S3Error};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};

use crate::{Case, Env};

pub const CASES: &[(&str, Case)] = &[
    ("client_get_put_delete", |env| Box::pin(get_put_delete(env))),
    ("client_list_paginates", |env| Box::pin(list_paginates(env))),
    ("client_conditional_create_and_update", |env| {
        Box::pin(conditions(env))
    }),
    ("client_32_concurrent_creates_one_winner", |env| {
        Box::pin(one_winner(env))
    }),
    ("client_missing_bucket_fails", |env| {
        Box::pin(missing_bucket(env))
    }),
    ("client_virtual_hosted_default_for_ip_endpoint", |env| {
        Box::pin(ip_endpoint_path_style(env))
    }),
];

async fn text(client: &NativeS3Client, key: &str) -> Option<(String, String)> {
    let fetched = client.get(key).await.unwrap()?;
    let bytes: Vec<Bytes> = fetched.body.unwrap().try_collect().await.unwrap();
    Some((
        String::from_utf8(bytes.concat()).unwrap(),
        fetched.etag.unwrap(),
    ))
}

async fn get_put_delete(env: Env) {
    let client = env.client();
    assert!(client.get("a/missing").await.unwrap().is_none());
    let etag = client
        .put(
            "a/b.txt",
            Bytes::from("hello"),
            &PutCondition::None,
            Some("text/plain"),
        )
        .await
        .unwrap();
    let etag = etag.expect("moto returns ETags");
    let (body, read_etag) = text(&client, "a/b.txt").await.unwrap();
    assert_eq!(
        (body.as_str(), read_etag.as_str()),
        ("hello", etag.as_str())
    );
    // A large body arrives as a stream of several chunks.
    let big = Bytes::from(vec![7u8; 5 * 1024 * 1024]);
    client
        .put("big", big.clone(), &PutCondition::None, None)
        .await
        .unwrap();
    let mut stream = client.get("big").await.unwrap().unwrap().body.unwrap();
    let (mut chunks, mut total) = (0, 0);
    while let Some(chunk) = stream.next().await {
        chunks += 1;
        total += chunk.unwrap().len();
    }
    assert_eq!(total, big.len());
    assert!(chunks > 1, "streamed in {chunks} chunk(s)");
    client.delete("a/b.txt").await.unwrap();
    client.delete("a/b.txt").await.unwrap();
    assert!(client.get("a/b.txt").await.unwrap().is_none());
}

async fn list_paginates(env: Env) {
    let client = env.client();
    let keys: Vec<String> = (0..1005)
        .map(|i| format!("p/revisions/r1/files/{i:04}"))
        .collect();
    futures_util::stream::iter(keys.clone())
        .map(|key| {
            let client = client.clone();
            async move {
                client
                    .put(&key, Bytes::from("x"), &PutCondition::None, None)
                    .await
                    .unwrap()
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    client
        .put(
            "p/revisions/r10/x",
            Bytes::from("x"),
            &PutCondition::None,
            None,
        )
        .await
        .unwrap();
    client
        .put(
            "p/revisions/r1.tar.gz",
            Bytes::from("x"),
            &PutCondition::None,
            None,
        )
        .await
        .unwrap();
    // More than one ListObjectsV2 page (1000 keys).
    assert_eq!(client.list("p/revisions/r1/").await.unwrap(), keys);
    // A plain string prefix, as S3 means it.
    let r1 = client.list("p/revisions/r1").await.unwrap();
    assert_eq!(r1.len(), 1007);
    assert!(
        r1.contains(&"p/revisions/r1.tar.gz".to_string())
            && r1.contains(&"p/revisions/r10/x".to_string())
    );
    assert!(client.list("q/").await.unwrap().is_empty());
}

async fn conditions(env: Env) {
    let client = env.client();
    let first = client
        .put("k", Bytes::from("1"), &PutCondition::Absent, None)
        .await
        .unwrap()
        .unwrap();
    let again = client
        .put("k", Bytes::from("2"), &PutCondition::Absent, None)
        .await;
    assert!(
        matches!(again, Err(S3Error::PreconditionFailed(_))),
        "{again:?}"
    );
    let second = client
        .put(
            "k",
            Bytes::from("2"),
            &PutCondition::Matches(first.clone()),
            None,
        )
        .await
        .unwrap()
        .unwrap();
    assert_ne!(first, second);
    let stale = client
        .put("k", Bytes::from("3"), &PutCondition::Matches(first), None)
        .await;
    assert!(
        matches!(stale, Err(S3Error::PreconditionFailed(_))),
        "{stale:?}"
    );
    let missing = client
        .put(
            "nothing",
            Bytes::from("3"),
            &PutCondition::Matches(second.clone()),
            None,
        )
        .await;
    assert!(
        matches!(missing, Err(S3Error::PreconditionFailed(_))),
        "{missing:?}"
    );
    assert_eq!(text(&client, "k").await.unwrap(), ("2".to_string(), second));
}

async fn one_winner(env: Env) {
    let client = env.client();
    let attempts = (0..32).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            (
                i,
                client
                    .put(
                        "race/lock.json",
                        Bytes::from(format!("writer-{i}")),
                        &PutCondition::Absent,
                        None,
                    )
                    .await,
            )
        })
    });
    let results = futures_util::future::join_all(attempts).await;
    let mut winners = Vec::new();
    for result in results {
        match result.unwrap() {
            (i, Ok(Some(_))) => winners.push(i),
            (_, Err(S3Error::PreconditionFailed(_))) => {}
            (i, other) => panic!("writer {i}: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    assert_eq!(
        text(&client, "race/lock.json").await.unwrap().0,
        format!("writer-{}", winners[0])
    );
}

async fn missing_bucket(env: Env) {
    let client = NativeS3Client::new(&S3Config {
        bucket: "no-such-bucket".into(),
        ..env.config()
    })
    .unwrap();
    let error = client
        .put("k", Bytes::from("1"), &PutCondition::None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, S3Error::Failed(message) if message.starts_with("S3 PutObject \"k\" failed")),
        "{error:?}"
    );
}

async fn ip_endpoint_path_style(env: Env) {
    // Without forcePathStyle an IP endpoint still works: like the AWS SDK, path style.
    let client = Arc::new(
        NativeS3Client::new(&S3Config {
            force_path_style: false,
            ..env.config()
        })
        .unwrap(),
    );
    client
        .put("k", Bytes::from("v"), &PutCondition::None, None)
        .await
        .unwrap();
    assert_eq!(text(&client, "k").await.unwrap().0, "v");
}
