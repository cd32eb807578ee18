//! An application-supplied AWS SDK v3 `S3Client` as an [`aml_s3::ObjectClient`]: the thin
//! storage port of `s3Workspace({ client })`. The facade (lib/workspace/s3/client-storage.js)
//! turns five operations into SDK commands; the `lock.json` lease, the key layout, the path
//! checks and every message are `crates/aml-s3`'s, exactly as for the native client.
//!
//! Protocol (Rust → JS, one weak threadsafe function per storage):
//!   port(0 get,    key, null, "")                → { ok, found, etag?, body? }
//!   port(1 put,    key, body, conditionJson)     → { ok, etag? }
//!   port(2 delete, key, null, "")                → { ok }
//!   port(3 list,   prefix, null, "")             → { ok, keys }
//!   port(4 next,   "", null, bodyRef)            → { ok, chunk? }   (absent at the end)
//!   port(5 close,  "", null, bodyRef)            → { ok }
//! `port` never rejects: a failed condition is `{ok: false, precondition: true, message}`, any
//! other thrown value is kept by the facade under a number (`{ok: false, error, message}`) and
//! comes back to it as [`S3Error::Host`], so the application sees its own error.

use std::sync::Arc;

use aml_s3::{ByteStream, Fetched, ObjectClient, PutCondition, S3Error};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use napi::bindgen_prelude::{Buffer, FnArgs, Function, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Result, Status};
use napi_derive::napi;
use serde_json::json;

const OP_GET: u32 = 0;
const OP_PUT: u32 = 1;
const OP_DELETE: u32 = 2;
const OP_LIST: u32 = 3;
const OP_NEXT: u32 = 4;
const OP_CLOSE: u32 = 5;

/// What `port` resolves with.
#[napi(object)]
pub struct S3PortOutcome {
    pub ok: bool,
    /// The facade's reference to a value the client threw.
    pub error: Option<u32>,
    pub message: Option<String>,
    /// The failure was a failed `If-None-Match` / `If-Match` condition.
    pub precondition: Option<bool>,
    pub found: Option<bool>,
    pub etag: Option<String>,
    /// A body reference (read it with `next`), absent when the reply had no streaming body.
    pub body: Option<u32>,
    pub chunk: Option<Buffer>,
    pub keys: Option<Vec<String>>,
}

type Args = FnArgs<(u32, String, Option<Buffer>, String)>;
/// The facade's `port(op, key, body, extra)`.
pub type PortFunction<'scope> = Function<'scope, Args, Promise<S3PortOutcome>>;
type PortFn = ThreadsafeFunction<Args, Promise<S3PortOutcome>, Args, Status, false, true>;

/// The port of one `s3Workspace({ client })` storage.
pub struct JsS3Client {
    port: Arc<PortFn>,
}

impl JsS3Client {
    pub fn new(port: PortFunction<'_>) -> Result<JsS3Client> {
        let port = port
            .build_threadsafe_function::<Args>()
            .weak::<true>()
            .build()?;
        Ok(JsS3Client {
            port: Arc::new(port),
        })
    }
}

async fn call(
    port: &PortFn,
    op: u32,
    key: &str,
    body: Option<Buffer>,
    extra: String,
) -> std::result::Result<S3PortOutcome, S3Error> {
    let args = FnArgs::from((op, key.to_string(), body, extra));
    let answer = async {
        let promise = port.call_async_catch(args).await?;
        promise.await
    }
    .await
    .map_err(|error| S3Error::Failed(format!("AML S3 client port failed: {}", error.reason)))?;
    if answer.ok {
        return Ok(answer);
    }
    let message = answer.message.unwrap_or_default();
    Err(match (answer.precondition, answer.error) {
        (Some(true), _) => S3Error::PreconditionFailed(message),
        (_, Some(reference)) => S3Error::Host { reference, message },
        _ => S3Error::Failed(message),
    })
}

/// One body being read; closes it in the facade if dropped before its end.
struct BodyReader {
    port: Arc<PortFn>,
    reference: u32,
    open: bool,
}

impl BodyReader {
    /// The facade closed the body itself (at its end or failure).
    fn ended(mut self) {
        self.open = false;
    }
}

impl Drop for BodyReader {
    fn drop(&mut self) {
        if self.open {
            let args = FnArgs::from((OP_CLOSE, String::new(), None, self.reference.to_string()));
            let _ = self
                .port
                .call(args, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

fn body_stream(port: Arc<PortFn>, reference: u32) -> ByteStream {
    let reader = BodyReader {
        port,
        reference,
        open: true,
    };
    futures_util::stream::unfold(reader, |mut reader| async move {
        if !reader.open {
            return None;
        }
        let outcome = call(
            &reader.port,
            OP_NEXT,
            "",
            None,
            reader.reference.to_string(),
        )
        .await;
        match outcome {
            Ok(S3PortOutcome {
                chunk: Some(chunk), ..
            }) => Some((Ok(Bytes::from(chunk.to_vec())), reader)),
            Ok(_) => {
                reader.ended();
                None
            }
            Err(error) => {
                reader.open = false;
                Some((Err(error), reader))
            }
        }
    })
    .boxed()
}

#[async_trait]
impl ObjectClient for JsS3Client {
    async fn get(&self, key: &str) -> std::result::Result<Option<Fetched>, S3Error> {
        let outcome = call(&self.port, OP_GET, key, None, String::new()).await?;
        if outcome.found != Some(true) {
            return Ok(None);
        }
        Ok(Some(Fetched {
            etag: outcome.etag,
            body: outcome
                .body
                .map(|reference| body_stream(self.port.clone(), reference)),
        }))
    }

    async fn put(
        &self,
        key: &str,
        body: Bytes,
        condition: &PutCondition,
        content_type: Option<&str>,
    ) -> std::result::Result<Option<String>, S3Error> {
        let condition = match condition {
            PutCondition::None => json!(null),
            PutCondition::Absent => json!({ "ifNoneMatch": "*" }),
            PutCondition::Matches(etag) => json!({ "ifMatch": etag }),
        };
        let extra = json!({ "condition": condition, "contentType": content_type }).to_string();
        let outcome = call(&self.port, OP_PUT, key, Some(body.to_vec().into()), extra).await?;
        Ok(outcome.etag)
    }

    async fn delete(&self, key: &str) -> std::result::Result<(), S3Error> {
        call(&self.port, OP_DELETE, key, None, String::new())
            .await
            .map(|_| ())
    }

    async fn list(&self, prefix: &str) -> std::result::Result<Vec<String>, S3Error> {
        let mut keys = call(&self.port, OP_LIST, prefix, None, String::new())
            .await?
            .keys
            .unwrap_or_default();
        keys.retain(|key| key.starts_with(prefix));
        keys.sort();
        Ok(keys)
    }
}
