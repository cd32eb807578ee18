//! Binding for remote Sandbox Workspace transfer (`aml_workspace::transfer`): pack a host
//! tree for hydration, mirror a downloaded archive back for reconciliation. Conversions
//! only; the work runs on the process runtime's blocking pool and resolves an outcome
//! (never rejects for a transfer error), which `lib/sandbox/remote/transfer.js` words.

use std::path::PathBuf;

use aml_workspace::archive::ExtractLimits;
use aml_workspace::select::SnapshotLimits;
use aml_workspace::WorkspaceError;
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Error, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;

/// The archive bytes, or the failure's message (and its cause's, when it has one).
#[napi(object)]
pub struct TransferOutcome {
    pub archive: Option<Buffer>,
    pub message: Option<String>,
    pub cause: Option<String>,
}

fn failed(error: WorkspaceError) -> TransferOutcome {
    TransferOutcome {
        archive: None,
        cause: error.cause.map(|cause| cause.message),
        message: Some(error.message),
    }
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::from_reason(format!("AML transfer worker failed: {e}")))
}

/// Packs every file and directory beneath `root`; the archive is at most `max_bytes` long.
#[napi(ts_return_type = "Promise<TransferOutcome>")]
pub fn sandbox_transfer_pack(
    env: &Env,
    root: String,
    max_bytes: f64,
    max_entries: f64,
) -> Result<Object<'_>> {
    let work = blocking(move || {
        let limits = SnapshotLimits {
            max_entries: max_entries as u64,
            max_bytes: u64::MAX,
            extra_entries: 0,
        };
        aml_workspace::transfer::pack_tree(&PathBuf::from(root), limits, max_bytes as u64)
    });
    spawn_promise(env, work, |_, result| {
        Ok(match result {
            Ok(bytes) => TransferOutcome {
                archive: Some(bytes.into()),
                message: None,
                cause: None,
            },
            Err(error) => failed(error),
        })
    })
}

/// Mirrors `archive` into `dest` (additions, changes, deletions), confined beneath it.
#[napi(ts_return_type = "Promise<TransferOutcome>")]
pub fn sandbox_transfer_mirror(
    env: &Env,
    archive: Buffer,
    dest: String,
    max_extracted_bytes: f64,
    max_entries: f64,
) -> Result<Object<'_>> {
    let bytes = guard(|| Ok(archive.to_vec()))?;
    let work = blocking(move || {
        let limits = ExtractLimits {
            max_entries: max_entries as u64,
            max_extracted_bytes: max_extracted_bytes as u64,
        };
        aml_workspace::transfer::mirror_archive(&bytes, &PathBuf::from(dest), limits)
    });
    spawn_promise(env, work, |_, result| {
        Ok(match result {
            Ok(()) => TransferOutcome {
                archive: None,
                message: None,
                cause: None,
            },
            Err(error) => failed(error),
        })
    })
}
