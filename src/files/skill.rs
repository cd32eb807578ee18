//! `<Skill>` package files and trusted source reads in the binding (conversions only; the
//! work is `crates/aml-files`): reading a package into a snapshot the facade holds as an
//! opaque object, staging it and removing it, and reading `<Skill|File|Include src>` files.
//! Each call runs on a blocking thread of the process runtime and resolves a Promise;
//! cancellation is a token from `src/evaluation/cancellation.rs` polled between entries.

use std::path::PathBuf;
use std::sync::Arc;

use aml_files::{PackageSnapshot, ReadError, SkillSource, StageError, StagedFile};
use napi::bindgen_prelude::{Buffer, Either, Either3, Object};
use napi::{Env, Error, Result};
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;

/// A package read completely (`crates/aml-files/src/skill_package.rs`). Its bytes stay in
/// Rust until the object is collected; JS only reads the two SKILL.md fields.
#[napi]
pub struct SkillSnapshot {
    inner: Arc<PackageSnapshot>,
}

#[napi]
impl SkillSnapshot {
    #[napi(getter)]
    pub fn name(&self) -> Result<String> {
        guard(|| Ok(self.inner.name.clone()))
    }

    #[napi(getter)]
    pub fn description(&self) -> Result<String> {
        guard(|| Ok(self.inner.description.clone()))
    }
}

/// A failure the facade maps onto the documented errors.
#[napi(object)]
pub struct SkillFault {
    /// "read" (an fs error, see `errno`/`syscall`/`real`), "utf8", "evaluation" (`message`
    /// is the complete EvaluationError text) or "cancelled".
    pub kind: String,
    pub message: String,
    /// The path as the application named it (for "read" and "utf8").
    pub path: Option<String>,
    /// The path the failing call used.
    pub real: Option<String>,
    pub syscall: Option<String>,
    pub errno: Option<i32>,
}

fn fault(kind: &str, message: String) -> SkillFault {
    SkillFault {
        kind: kind.into(),
        message,
        path: None,
        real: None,
        syscall: None,
        errno: None,
    }
}

impl From<ReadError> for SkillFault {
    fn from(error: ReadError) -> Self {
        let message = error.to_string();
        match error {
            ReadError::Io {
                display,
                real,
                syscall,
                error,
            } => SkillFault {
                kind: "read".into(),
                message,
                path: Some(display),
                real: Some(real.to_string_lossy().into_owned()),
                syscall: Some(syscall.into()),
                errno: error.raw_os_error(),
            },
            ReadError::Utf8 { display } => SkillFault {
                path: Some(display),
                ..fault("utf8", message)
            },
            ReadError::Evaluation(text) => fault("evaluation", text),
            ReadError::Cancelled => fault("cancelled", message),
        }
    }
}

impl From<StageError> for SkillFault {
    fn from(error: StageError) -> Self {
        let message = error.to_string();
        match error {
            StageError::Io {
                path,
                syscall,
                error,
            } => SkillFault {
                real: Some(path.to_string_lossy().into_owned()),
                syscall: Some(syscall.into()),
                errno: error.raw_os_error(),
                ..fault("read", message)
            },
            StageError::Cancelled => fault("cancelled", message),
        }
    }
}

fn cancel_token(cancellation: Option<u32>) -> Result<Option<CancellationToken>> {
    cancellation
        .map(crate::evaluation::cancellation::token)
        .transpose()
}

/// Runs blocking file-system work off the JS thread and off the async workers.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| Error::from_reason(format!("AML file work failed: {error}")))
}

/// Runs `read(absolute, cancelled)` on a blocking thread; `cancelled` polls the caller's
/// cancellation token, if any.
fn cancellable_read<T: Send + 'static>(
    cancellation: Option<u32>,
    absolute: String,
    read: fn(&str, &dyn Fn() -> bool) -> T,
) -> Result<impl std::future::Future<Output = Result<T>>> {
    let token = guard(|| cancel_token(cancellation))?;
    Ok(blocking(move || {
        let cancelled = || token.as_ref().is_some_and(CancellationToken::is_cancelled);
        read(&absolute, &cancelled)
    }))
}

/// Reads the package directory `absolute`; resolves a [`SkillSnapshot`] or a [`SkillFault`].
#[napi(ts_return_type = "Promise<SkillSnapshot | SkillFault>")]
pub fn skill_package_read(
    env: &Env,
    absolute: String,
    cancellation: Option<u32>,
) -> Result<Object<'_>> {
    let run = cancellable_read(cancellation, absolute, aml_files::read_package)?;
    spawn_promise(env, run, |_, result| {
        Ok(match result {
            Ok(snapshot) => Either::<SkillSnapshot, SkillFault>::A(SkillSnapshot {
                inner: Arc::new(snapshot),
            }),
            Err(error) => Either::B(error.into()),
        })
    })
}

/// Reads `<Skill src>` (`absolute`, resolved from the application's cwd): a package
/// directory resolves a [`SkillSnapshot`], any other file its strict UTF-8 text; a failure
/// resolves a [`SkillFault`].
#[napi(ts_return_type = "Promise<SkillSnapshot | string | SkillFault>")]
pub fn skill_source_read(
    env: &Env,
    absolute: String,
    cancellation: Option<u32>,
) -> Result<Object<'_>> {
    let run = cancellable_read(cancellation, absolute, aml_files::read_skill_source)?;
    spawn_promise(env, run, |_, result| {
        Ok(match result {
            Ok(SkillSource::Package(snapshot)) => {
                Either3::<SkillSnapshot, String, SkillFault>::A(SkillSnapshot {
                    inner: Arc::new(snapshot),
                })
            }
            Ok(SkillSource::Text(text)) => Either3::B(text),
            Err(error) => Either3::C(error.into()),
        })
    })
}

/// Reads the whole file `absolute` (`<File src>`, `<Include src>`); resolves its bytes or a
/// [`SkillFault`].
#[napi(ts_return_type = "Promise<Buffer | SkillFault>")]
pub fn source_file_read(
    env: &Env,
    absolute: String,
    cancellation: Option<u32>,
) -> Result<Object<'_>> {
    let run = cancellable_read(cancellation, absolute, aml_files::read_source_file)?;
    spawn_promise(env, run, |_, result| {
        Ok(match result {
            Ok(bytes) => Either::<Buffer, SkillFault>::A(Buffer::from(bytes)),
            Err(error) => Either::B(error.into()),
        })
    })
}

/// Writes `snapshot` to `root/<name>`; resolves `null` or a [`SkillFault`] (after removing
/// whatever it created).
#[napi(ts_return_type = "Promise<SkillFault | null>")]
pub fn skill_package_stage<'env>(
    env: &'env Env,
    snapshot: &SkillSnapshot,
    root: String,
    cancellation: Option<u32>,
) -> Result<Object<'env>> {
    let token = guard(|| cancel_token(cancellation))?;
    let inner = guard(|| Ok(snapshot.inner.clone()))?;
    let run = blocking(move || {
        let cancelled = || token.as_ref().is_some_and(CancellationToken::is_cancelled);
        aml_files::stage_package(&inner, &PathBuf::from(root), &cancelled)
    });
    spawn_promise(env, run, |_, result| Ok(result.err().map(SkillFault::from)))
}

/// Writes the one file of an oversized `<Include>` to `root/include/<name>` by the Skill
/// staging rules (a fresh 0700 `root`, files created exclusively with 0600, everything
/// removed again on failure or cancellation); resolves `null` or a [`SkillFault`].
#[napi(ts_return_type = "Promise<SkillFault | null>")]
pub fn include_stage(
    env: &Env,
    root: String,
    name: String,
    content: Buffer,
    cancellation: Option<u32>,
) -> Result<Object<'_>> {
    let token = guard(|| cancel_token(cancellation))?;
    let snapshot = guard(|| {
        Ok(PackageSnapshot {
            name: "include".into(),
            description: String::new(),
            dirs: Vec::new(),
            files: vec![StagedFile {
                rel: PathBuf::from(name),
                content: content.to_vec(),
                executable: false,
            }],
        })
    })?;
    let run = blocking(move || {
        let cancelled = || token.as_ref().is_some_and(CancellationToken::is_cancelled);
        aml_files::stage_package(&snapshot, &PathBuf::from(root), &cancelled)
    });
    spawn_promise(env, run, |_, result| Ok(result.err().map(SkillFault::from)))
}

/// Removes a staged root (a missing one is fine); resolves `null` or a [`SkillFault`].
#[napi(ts_return_type = "Promise<SkillFault | null>")]
pub fn skill_package_remove(env: &Env, root: String) -> Result<Object<'_>> {
    let run = blocking(move || {
        let path = PathBuf::from(root);
        aml_files::remove_staged(&path).map_err(|error| (path, error))
    });
    spawn_promise(env, run, |_, result| {
        Ok(result.err().map(|(path, error)| SkillFault {
            real: Some(path.to_string_lossy().into_owned()),
            syscall: Some("rm".into()),
            errno: error.raw_os_error(),
            ..fault("read", error.to_string())
        }))
    })
}

/// A portable logical path: `path` when valid, else the `problem` text after the label.
#[napi(object)]
pub struct PortablePath {
    pub path: Option<String>,
    pub problem: Option<String>,
}

/// `posix.join(base, value)` after the SB-1 checks (`crates/aml-files/src/portable_path.rs`).
#[napi]
pub fn portable_path_resolve(value: String, base: String) -> Result<PortablePath> {
    guard(|| {
        Ok(match aml_files::resolve_portable_path(&value, &base) {
            Ok(path) => PortablePath {
                path: Some(path),
                problem: None,
            },
            Err(problem) => PortablePath {
                path: None,
                problem: Some(problem.to_string()),
            },
        })
    })
}

/// The `SandboxCommand.from` cwd rule (`crates/aml-files/src/portable_path.rs`):
/// `"not-normalized"`, `"outside"` (not `root` or below it) or `null`.
#[napi]
pub fn sandbox_command_cwd_problem(cwd: String, root: String) -> Result<Option<String>> {
    guard(|| {
        use aml_files::portable_path::{command_cwd_problem, CwdProblem};
        Ok(command_cwd_problem(&cwd, &root).map(|problem| {
            match problem {
                CwdProblem::NotNormalized => "not-normalized",
                CwdProblem::Outside => "outside",
            }
            .to_string()
        }))
    })
}
