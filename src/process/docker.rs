//! Binding for the Docker Sandbox (`crates/aml-docker`, `lib/sandbox/docker/docker-sandbox.js`):
//! conversions only. Calls are stateless over `(socket, version)` — the facade negotiates
//! once per socket; streamed execs are in `src/process/docker_spawn.rs`. Daemon failures resolve
//! as data ([`DockerFault`]); only broken invariants (an unknown handle, a panic) reject.

use std::time::Duration;

use aml_docker::{ContainerSpec, Docker, DockerError, ExecFault, ExecLimits, ExecSpec, RunnerPool};
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Error, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;

/// A failure the facade words: `kind` is "connect" | "api" | "io" | "protocol" |
/// "cancelled" | "timeout" | "output-limit"; `status` is the HTTP status of "api".
#[napi(object)]
pub struct DockerFault {
    pub kind: String,
    pub message: String,
    pub status: Option<u32>,
}

impl From<&DockerError> for DockerFault {
    fn from(error: &DockerError) -> Self {
        DockerFault {
            kind: error.kind().into(),
            message: error.to_string(),
            status: error.status().map(u32::from),
        }
    }
}

impl From<&ExecFault> for DockerFault {
    fn from(fault: &ExecFault) -> Self {
        match fault {
            ExecFault::Docker(error) => error.into(),
            other => DockerFault {
                kind: other.kind().into(),
                message: other.to_string(),
                status: None,
            },
        }
    }
}

/// `value` (a negotiated version, a container id, a handle as text…) or the fault.
#[napi(object)]
pub struct DockerOutcome {
    pub value: Option<String>,
    pub fault: Option<DockerFault>,
}

pub(crate) fn outcome(result: std::result::Result<String, DockerError>) -> DockerOutcome {
    match result {
        Ok(value) => DockerOutcome {
            value: Some(value),
            fault: None,
        },
        Err(error) => DockerOutcome {
            value: None,
            fault: Some((&error).into()),
        },
    }
}

pub(crate) fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Result<T> {
    serde_json::from_str(json)
        .map_err(|e| Error::from_reason(format!("AML Docker request is malformed: {e}")))
}

/// Pings the daemon at `socket`; resolves the API version to speak.
#[napi(ts_return_type = "Promise<DockerOutcome>")]
pub fn docker_negotiate(env: &Env, socket: String) -> Result<Object<'_>> {
    let work = async move {
        Ok(outcome(
            Docker::negotiate(socket)
                .await
                .map(|d| d.version().to_string()),
        ))
    };
    spawn_promise(env, work, |_, value| Ok(value))
}

/// Creates and starts a container from `spec` (JSON `ContainerSpec`). Resolves the id;
/// a fault names the step: "create" failures are plain, a start failure has the id in
/// `value` so the facade can remove it. A missing image is pulled once, as `docker run`
/// does, and the create retried.
#[napi(ts_return_type = "Promise<DockerStarted>")]
pub fn docker_run(env: &Env, socket: String, version: String, spec: String) -> Result<Object<'_>> {
    let spec: ContainerSpec = guard(|| parse(&spec))?;
    let work = async move {
        let docker = Docker::new(socket, version);
        let created = match docker.create_container(&spec).await {
            Err(error) if error.status() == Some(404) => match docker.pull(&spec.image).await {
                Ok(()) => docker.create_container(&spec).await,
                Err(pull) => Err(pull),
            },
            other => other,
        };
        let id = match created {
            Ok(id) => id,
            Err(error) => {
                return Ok(DockerStarted {
                    id: None,
                    started: false,
                    fault: Some((&error).into()),
                })
            }
        };
        if id.is_empty() {
            return Ok(DockerStarted {
                id: Some(id),
                started: false,
                fault: None,
            });
        }
        Ok(match docker.start(&id).await {
            Ok(()) => DockerStarted {
                id: Some(id),
                started: true,
                fault: None,
            },
            Err(error) => DockerStarted {
                id: Some(id),
                started: false,
                fault: Some((&error).into()),
            },
        })
    };
    spawn_promise(env, work, |_, value| Ok(value))
}

/// What `dockerRun` did: `id` once created (empty when the daemon returned none).
#[napi(object)]
pub struct DockerStarted {
    pub id: Option<String>,
    pub started: bool,
    pub fault: Option<DockerFault>,
}

/// The in-container command runners of every live container (`aml_docker::runner`).
fn pool() -> &'static RunnerPool {
    static POOL: std::sync::OnceLock<RunnerPool> = std::sync::OnceLock::new();
    POOL.get_or_init(RunnerPool::default)
}

/// `docker rm --force`; an absent container is fine.
#[napi(ts_return_type = "Promise<DockerOutcome>")]
pub fn docker_remove(env: &Env, socket: String, version: String, id: String) -> Result<Object<'_>> {
    let work = async move {
        let docker = Docker::new(socket, version);
        pool().forget(&id);
        Ok(outcome(docker.remove(&id).await.map(|()| id)))
    };
    spawn_promise(env, work, |_, value| Ok(value))
}

/// A finished exec: the exit code and output, or the fault.
#[napi(object)]
pub struct DockerExecOutcome {
    pub exit_code: Option<i64>,
    pub stdout: Option<Buffer>,
    pub stderr: Option<Buffer>,
    pub fault: Option<DockerFault>,
}

/// Runs `spec` (JSON `ExecSpec`) in `container` with stdin closed, stdout+stderr bounded
/// by `max_output_bytes` together, through the container's command runners (a fork inside
/// the container, not a runtime exec, per command); `cancellation` is a token of
/// `src/evaluation/cancellation.rs`.
#[napi(ts_return_type = "Promise<DockerExecOutcome>")]
#[allow(clippy::too_many_arguments)]
pub fn docker_exec(
    env: &Env,
    socket: String,
    version: String,
    container: String,
    spec: String,
    timeout_ms: Option<f64>,
    max_output_bytes: f64,
    cancellation: Option<u32>,
) -> Result<Object<'_>> {
    let spec: ExecSpec = guard(|| parse(&spec))?;
    let cancel = cancellation.and_then(|id| crate::evaluation::cancellation::token(id).ok());
    let limits = ExecLimits {
        max_output_bytes: max_output_bytes as u64,
        timeout: timeout_ms.map(|ms| Duration::from_millis(ms as u64)),
        cancel,
    };
    let work = async move {
        let docker = Docker::new(socket, version);
        let result = pool().run(&docker, &container, &spec, limits).await;
        if let Some(id) = cancellation {
            crate::evaluation::cancellation::release(id);
        }
        Ok(result)
    };
    spawn_promise(env, work, |_, result| {
        Ok(match result {
            Ok(output) => DockerExecOutcome {
                exit_code: Some(output.exit_code),
                stdout: Some(output.stdout.into()),
                stderr: Some(output.stderr.into()),
                fault: None,
            },
            Err(fault) => DockerExecOutcome {
                exit_code: None,
                stdout: None,
                stderr: None,
                fault: Some((&fault).into()),
            },
        })
    })
}
