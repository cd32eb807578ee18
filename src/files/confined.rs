//! Confined file access for `<File>` and `<Include path>` (crates/aml-files/src/confined), async through
//! the process runtime. Outcomes are data, not rejections: the facade maps each kind to the
//! documented `EvaluationError` with an Error cause carrying `code` and `message`.

use std::path::PathBuf;

use aml_files::confined::FsError;
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;

/// The result of one confined operation. `kind` is `"ok"`, `"path"`, `"parent"` (with the
/// portable `segment`), `"not-regular"` or `"io"` (with `code`, e.g. `"ENOENT"`, and
/// `message`). `content` is set for a successful read.
#[napi(object)]
pub struct FsOutcome {
    pub kind: String,
    pub segment: Option<String>,
    pub code: Option<String>,
    pub message: Option<String>,
    pub content: Option<Buffer>,
}

fn outcome(result: Operation) -> FsOutcome {
    let mut out = FsOutcome {
        kind: "ok".into(),
        segment: None,
        code: None,
        message: None,
        content: None,
    };
    match result {
        Ok(content) => out.content = content.map(Buffer::from),
        Err(FsError::Path(e)) => {
            out.kind = "path".into();
            out.message = Some(e.to_string());
        }
        Err(FsError::ParentNotDirectory(segment)) => {
            out.kind = "parent".into();
            out.segment = Some(segment);
        }
        Err(FsError::NotRegularFile) => out.kind = "not-regular".into(),
        Err(error @ (FsError::RootEscapes | FsError::TooLarge)) => {
            out.kind = "io".into();
            out.message = Some(error.to_string());
        }
        Err(FsError::Io(e)) => {
            out.kind = "io".into();
            out.code = aml_files::confined::errno_code(&e).map(str::to_string);
            out.message = Some(e.to_string());
        }
    }
    out
}

type Operation = std::result::Result<Option<Vec<u8>>, FsError>;

/// Runs a blocking file operation on tokio's blocking pool, so the two process-runtime
/// workers keep serving pipes and timers while a slow disk is written.
async fn blocking(op: impl FnOnce() -> Operation + Send + 'static) -> Result<Operation> {
    tokio::task::spawn_blocking(op)
        .await
        .map_err(|e| napi::Error::from_reason(format!("AML file operation failed: {e}")))
}

/// The largest file a read returns (`aml_files::confined::MAX_READ_BYTES`), for the guest
/// reads in `lib/files/guest-file.js`, which apply the same limit while streaming.
#[napi]
pub const FILE_READ_LIMIT_BYTES: u32 = aml_files::confined::MAX_READ_BYTES as u32;

/// Atomically replaces `path` beneath `root` with the UTF-8 `content`.
#[napi(ts_return_type = "Promise<FsOutcome>")]
pub fn fs_write_file(env: &Env, root: String, path: String, content: String) -> Result<Object<'_>> {
    let work = blocking(move || {
        aml_files::confined::write_file(&PathBuf::from(root), &path, content.as_bytes())
            .map(|()| None)
    });
    spawn_promise(env, work, |_, result| Ok(outcome(result)))
}

/// Reads the regular file `path` beneath `root`.
#[napi(ts_return_type = "Promise<FsOutcome>")]
pub fn fs_read_file(env: &Env, root: String, path: String) -> Result<Object<'_>> {
    let work =
        blocking(move || aml_files::confined::read_file(&PathBuf::from(root), &path).map(Some));
    spawn_promise(env, work, |_, result| Ok(outcome(result)))
}

/// Atomically replaces `path` beneath the Sandbox root `root` (logical, relative to the
/// lease's host directory `base`) with the UTF-8 `content`: the host-side file work of a
/// Sandbox whose guest files are host files.
#[napi(ts_return_type = "Promise<FsOutcome>")]
pub fn fs_write_file_beneath(
    env: &Env,
    base: String,
    root: String,
    path: String,
    content: String,
) -> Result<Object<'_>> {
    let work = blocking(move || {
        aml_files::confined::write_file_beneath(
            &PathBuf::from(base),
            &root,
            &path,
            content.as_bytes(),
        )
        .map(|()| None)
    });
    spawn_promise(env, work, |_, result| Ok(outcome(result)))
}

/// Reads the regular file `path` beneath the Sandbox root `root` of the host directory `base`.
#[napi(ts_return_type = "Promise<FsOutcome>")]
pub fn fs_read_file_beneath(
    env: &Env,
    base: String,
    root: String,
    path: String,
) -> Result<Object<'_>> {
    let work = blocking(move || {
        aml_files::confined::read_file_beneath(&PathBuf::from(base), &root, &path).map(Some)
    });
    spawn_promise(env, work, |_, result| Ok(outcome(result)))
}

/// A host directory judged by its real path (`crates/aml-files/src/host_path.rs`): `real`
/// (`null` when it cannot be resolved), whether it is a `directory`, and for each boundary
/// whether it stays `inside`.
#[napi(object)]
pub struct HostDirectory {
    pub real: Option<String>,
    pub directory: bool,
    pub inside: Vec<bool>,
}

/// Resolves `path` on the host and judges it against `boundaries` (real paths).
#[napi(ts_return_type = "Promise<HostDirectory>")]
pub fn host_directory_resolve(
    env: &Env,
    path: String,
    boundaries: Vec<String>,
) -> Result<Object<'_>> {
    let work = async move {
        tokio::task::spawn_blocking(move || {
            let boundaries: Vec<PathBuf> = boundaries.into_iter().map(PathBuf::from).collect();
            aml_files::host_path::resolve_host_directory(&PathBuf::from(path), &boundaries)
        })
        .await
        .map_err(|e| napi::Error::from_reason(format!("AML file operation failed: {e}")))
    };
    spawn_promise(env, work, |_, found| {
        Ok(HostDirectory {
            real: found.real.map(|real| real.to_string_lossy().into_owned()),
            directory: found.directory,
            inside: found.inside,
        })
    })
}
