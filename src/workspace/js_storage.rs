//! Storage adapters written in JavaScript (WP-2), driven from the Rust persistence engine:
//! one weak threadsafe function per Node environment over the facade's
//! `dispatch(op, lease, path, body, extra)` (lib/workspace/storage-dispatch.js), called with
//! `call_async_catch`, like the Tool dispatcher (src/tools/dispatch.rs).
//!
//! Why Rust drives JS adapters rather than JS driving Rust helpers: the lifecycle (restore,
//! snapshot, publication, orphan cleanup, pruning, the AggregateErrors) then exists once, in
//! `aml_workspace::persistence`, for the filesystem store, S3 and every JS adapter alike. A
//! JS adapter pays one thread hop per storage call (tens of µs), which is nothing next to its
//! own I/O. Bodies cross as Buffers (reads collected in JS up to the engine's bound).
//!
//! `dispatch` never throws: a value the adapter throws is kept by the facade under a number
//! and comes back as `WorkspaceError::host(n)`, so the application sees its own error.

use std::cell::RefCell;
use std::sync::Arc;

use aml_workspace::{
    ReadBody, Result as WsResult, StorageLease, StorageObject, Version, WorkspaceError, WriteBody,
    WriteCondition, WriteOptions,
};
use async_trait::async_trait;
use napi::bindgen_prelude::{Buffer, FnArgs, Function, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{Error, Result, Status};
use napi_derive::napi;
use serde_json::json;

use crate::boundary::guard::guard;

const OP_READ: u32 = 0;
const OP_WRITE: u32 = 1;
const OP_LIST: u32 = 2;
const OP_DELETE: u32 = 3;
const OP_RELEASE: u32 = 4;

/// What `dispatch` resolves with. `error` is the facade's reference to a thrown value.
#[napi(object)]
pub struct StorageCallOutcome {
    pub ok: bool,
    pub error: Option<u32>,
    pub found: Option<bool>,
    pub body: Option<Buffer>,
    pub version: Option<String>,
    pub paths: Option<Vec<String>>,
}

type Args = FnArgs<(u32, u32, String, Option<Buffer>, String)>;
type DispatchFn = ThreadsafeFunction<Args, Promise<StorageCallOutcome>, Args, Status, false, true>;

thread_local! {
    static CURRENT: RefCell<Option<Arc<DispatchFn>>> = const { RefCell::new(None) };
}

#[napi(
    ts_args_type = "dispatch: (op: number, lease: number, path: string, body: Buffer | null, extra: string) => Promise<StorageCallOutcome>"
)]
pub fn workspace_storage_dispatcher_install(
    dispatch: Function<Args, Promise<StorageCallOutcome>>,
) -> Result<()> {
    guard(|| {
        let dispatch = dispatch
            .build_threadsafe_function::<Args>()
            .weak::<true>()
            .build()?;
        CURRENT.with(|current| current.replace(Some(Arc::new(dispatch))));
        Ok(())
    })
}

#[napi]
pub fn workspace_storage_dispatcher_installed() -> Result<bool> {
    guard(|| Ok(CURRENT.with(|current| current.borrow().is_some())))
}

/// A JS adapter's lease, known to the facade as `reference`.
pub struct JsLease {
    reference: u32,
    dispatch: Arc<DispatchFn>,
}

impl JsLease {
    /// For a lease the facade registered; fails if the dispatcher is not installed.
    pub fn new(reference: u32) -> Result<JsLease> {
        let dispatch = CURRENT
            .with(|current| current.borrow().clone())
            .ok_or_else(|| {
                Error::from_reason("AML workspace storage dispatcher is not installed")
            })?;
        Ok(JsLease {
            reference,
            dispatch,
        })
    }

    async fn call(
        &self,
        op: u32,
        path: &str,
        body: Option<Buffer>,
        extra: String,
    ) -> WsResult<StorageCallOutcome> {
        let args = FnArgs::from((op, self.reference, path.to_string(), body, extra));
        let answer = async {
            let promise = self.dispatch.call_async_catch(args).await?;
            promise.await
        }
        .await
        .map_err(|error| {
            WorkspaceError::error(format!(
                "AML workspace storage dispatcher failed: {}",
                error.reason
            ))
        })?;
        if answer.ok {
            Ok(answer)
        } else {
            Err(match answer.error {
                Some(reference) => WorkspaceError::host(reference),
                None => WorkspaceError::error("AML workspace storage dispatcher failed"),
            })
        }
    }
}

#[async_trait]
impl StorageLease for JsLease {
    async fn read(&self, path: &str, max_bytes: u64) -> WsResult<Option<StorageObject>> {
        let outcome = self
            .call(OP_READ, path, None, max_bytes.to_string())
            .await?;
        if outcome.found != Some(true) {
            return Ok(None);
        }
        // The facade stops collecting one byte past the bound; the engine reports the limit.
        let body = outcome.body.map(|b| b.to_vec()).unwrap_or_default();
        Ok(Some(StorageObject {
            body: ReadBody::Bytes(body),
            version: Version(outcome.version.unwrap_or_default()),
        }))
    }

    async fn write(&self, path: &str, body: WriteBody, options: WriteOptions) -> WsResult<Version> {
        let bytes = match body {
            WriteBody::Bytes(bytes) => bytes,
            WriteBody::File(file) => tokio::fs::read(&file)
                .await
                .map_err(|e| WorkspaceError::io(&e, "open", &file))?,
        };
        let condition = match options.condition {
            WriteCondition::None => serde_json::Value::Null,
            WriteCondition::Absent => json!({ "kind": "absent" }),
            WriteCondition::Version(Version(version)) => {
                json!({ "kind": "version", "version": { "value": version } })
            }
        };
        let extra = json!({
            "condition": condition,
            "contentLength": options.content_length.unwrap_or(bytes.len() as u64),
            "contentType": options.content_type,
        });
        let outcome = self
            .call(OP_WRITE, path, Some(bytes.into()), extra.to_string())
            .await?;
        Ok(Version(outcome.version.unwrap_or_default()))
    }

    async fn list(&self, prefix: &str) -> WsResult<Vec<String>> {
        Ok(self
            .call(OP_LIST, prefix, None, String::new())
            .await?
            .paths
            .unwrap_or_default())
    }

    async fn delete(&self, paths: &[String]) -> WsResult<()> {
        self.call(
            OP_DELETE,
            "",
            None,
            serde_json::to_string(paths).unwrap_or_default(),
        )
        .await
        .map(|_| ())
    }

    async fn release(&self) -> WsResult<()> {
        self.call(OP_RELEASE, "", None, String::new())
            .await
            .map(|_| ())
    }
}
