//! The Engine API operations the Docker Sandbox needs, over one negotiated API version.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::DockerError;
use crate::http::{self, expect, Upgraded};

/// The newest API version this client speaks (Debian 12's daemon, Docker 20.10); older
/// daemons are spoken to in their own version, down to [`MIN_VERSION`].
pub const MAX_VERSION: (u32, u32) = (1, 41);
/// `exec` with a working directory needs 1.35.
pub const MIN_VERSION: (u32, u32) = (1, 35);
/// How often [`Docker::remove`] waits out another removal of the same container before
/// reporting the daemon's conflict (a removal that keeps failing and being retried).
const REMOVE_ATTEMPTS: u32 = 5;

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// A container to create (`docker run --detach --rm …` as API fields).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerSpec {
    pub name: String,
    pub image: String,
    pub user: Option<String>,
    /// `source:target[:ro]` bind mounts.
    pub binds: Vec<String>,
    pub working_dir: String,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub labels: Vec<(String, String)>,
}

/// A command to run in a container (`docker exec --workdir … --env …`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecSpec {
    pub cmd: Vec<String>,
    pub env: Vec<String>,
    pub working_dir: String,
    pub user: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Docker {
    socket: PathBuf,
    version: String,
}

#[derive(Deserialize)]
struct Created {
    #[serde(rename = "Id")]
    id: Option<String>,
}

#[derive(Deserialize)]
struct ExecState {
    #[serde(rename = "Running")]
    running: bool,
    #[serde(rename = "ExitCode")]
    exit_code: Option<i64>,
}

#[derive(Serialize)]
struct ExecStart {
    #[serde(rename = "Detach")]
    detach: bool,
    #[serde(rename = "Tty")]
    tty: bool,
}

impl Docker {
    /// A client for `socket` speaking `version` (as returned by [`Docker::negotiate`]).
    pub fn new(socket: impl Into<PathBuf>, version: impl Into<String>) -> Docker {
        Docker {
            socket: socket.into(),
            version: version.into(),
        }
    }

    /// Pings the daemon and picks `min(daemon, MAX_VERSION)`; a daemon older than
    /// [`MIN_VERSION`] is refused.
    pub async fn negotiate(socket: impl Into<PathBuf>) -> Result<Docker, DockerError> {
        let socket = socket.into();
        let response = expect(http::request(&socket, "GET", "/_ping", None).await?, &[200])?;
        let daemon = response
            .header("api-version")
            .and_then(parse_version)
            .unwrap_or(MAX_VERSION);
        if daemon < MIN_VERSION {
            return Err(DockerError::Protocol(format!(
                "the Docker daemon speaks API {}.{}; AML needs at least {}.{}",
                daemon.0, daemon.1, MIN_VERSION.0, MIN_VERSION.1
            )));
        }
        let (major, minor) = daemon.min(MAX_VERSION);
        Ok(Docker::new(socket, format!("{major}.{minor}")))
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    fn path(&self, rest: &str) -> String {
        format!("/v{}{}", self.version, rest)
    }

    /// Creates the container; returns the id the daemon answered (possibly empty).
    pub async fn create_container(&self, spec: &ContainerSpec) -> Result<String, DockerError> {
        let labels: serde_json::Map<String, serde_json::Value> = spec
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut body = json!({
            "Image": spec.image,
            "Entrypoint": spec.entrypoint,
            "Cmd": spec.cmd,
            "WorkingDir": spec.working_dir,
            "Labels": labels,
            "AttachStdin": false,
            "AttachStdout": false,
            "AttachStderr": false,
            "HostConfig": { "AutoRemove": true, "Binds": spec.binds },
        });
        if let Some(user) = &spec.user {
            body["User"] = json!(user);
        }
        let path = self.path(&format!("/containers/create?name={}", query(&spec.name)));
        // An empty id is returned as it is: the container may exist all the same, so the
        // Sandbox removes it by name and reports its own documented error.
        self.create(&path, &body, "create").await
    }

    /// `POST` of a create request (container or exec): 201 with the new object's id, `""`
    /// when the answer names none (each caller decides what that means).
    async fn create(&self, path: &str, body: &Value, what: &str) -> Result<String, DockerError> {
        let bytes = serde_json::to_vec(body).expect("a JSON value serializes");
        let response = expect(
            http::request(&self.socket, "POST", path, Some(&bytes)).await?,
            &[201],
        )?;
        let created: Created = serde_json::from_slice(&response.body)
            .map_err(|e| DockerError::Protocol(format!("invalid {what} answer: {e}")))?;
        Ok(created.id.unwrap_or_default())
    }

    /// `docker pull`: the daemon streams JSON progress lines; a failure is a line with
    /// `"error"` (or a non-200 status).
    pub async fn pull(&self, image: &str) -> Result<(), DockerError> {
        let path = self.path(&format!("/images/create?fromImage={}", query(image)));
        let response = expect(
            http::request(&self.socket, "POST", &path, None).await?,
            &[200],
        )?;
        #[derive(Deserialize)]
        struct Progress {
            error: Option<String>,
        }
        for line in response.body.split(|b| *b == b'\n') {
            if let Ok(Progress {
                error: Some(message),
            }) = serde_json::from_slice(line)
            {
                return Err(DockerError::Api {
                    status: 500,
                    message,
                });
            }
        }
        Ok(())
    }

    pub async fn start(&self, id: &str) -> Result<(), DockerError> {
        let path = self.path(&format!("/containers/{}/start", query(id)));
        expect(
            http::request(&self.socket, "POST", &path, None).await?,
            &[204, 304],
        )?;
        Ok(())
    }

    /// `docker rm --force`, resolved only once the container is gone: an absent container
    /// counts as removed. A removal already under way (`AutoRemove` after the main process
    /// exited, or a concurrent remove of the same lease) answers 409 while the container
    /// still exists; then this waits for the daemon to report it removed and asks again, so
    /// a release never settles while `docker ps -a` still lists the container.
    pub async fn remove(&self, id: &str) -> Result<(), DockerError> {
        let path = self.path(&format!("/containers/{}?force=true&v=true", query(id)));
        let mut attempt = 0;
        loop {
            let response = http::request(&self.socket, "DELETE", &path, None).await?;
            let in_progress = response.status == 409
                && http::error_message(&response.body).contains("in progress");
            if !in_progress || attempt == REMOVE_ATTEMPTS {
                expect(response, &[204, 404])?;
                return Ok(());
            }
            attempt += 1;
            self.wait_removed(id).await?;
        }
    }

    /// `POST /containers/{id}/wait?condition=removed`: returns once the daemon removed the
    /// container (404: it is already gone). A removal that failed ends the wait as well;
    /// the caller's next DELETE then reports or retries it.
    async fn wait_removed(&self, id: &str) -> Result<(), DockerError> {
        let path = self.path(&format!("/containers/{}/wait?condition=removed", query(id)));
        let response = http::request(&self.socket, "POST", &path, None).await?;
        expect(response, &[200, 404])?;
        Ok(())
    }

    pub async fn exec_create(
        &self,
        container: &str,
        spec: &ExecSpec,
        stdin: bool,
    ) -> Result<String, DockerError> {
        let mut body = json!({
            "AttachStdin": stdin,
            "AttachStdout": true,
            "AttachStderr": true,
            "Tty": false,
            "Cmd": spec.cmd,
            "Env": spec.env,
            "WorkingDir": spec.working_dir,
        });
        if let Some(user) = &spec.user {
            body["User"] = json!(user);
        }
        let path = self.path(&format!("/containers/{}/exec", query(container)));
        let id = self.create(&path, &body, "exec").await?;
        if id.is_empty() {
            return Err(DockerError::Protocol(
                "the daemon created an exec without an id".into(),
            ));
        }
        Ok(id)
    }

    /// Starts an exec attached: the connection becomes its stdin (write half) and its
    /// multiplexed stdout/stderr (read half).
    pub async fn exec_start(&self, exec: &str) -> Result<Upgraded, DockerError> {
        let path = self.path(&format!("/exec/{}/start", query(exec)));
        let body = serde_json::to_vec(&ExecStart {
            detach: false,
            tty: false,
        })
        .expect("a struct serializes");
        http::upgrade(&self.socket, &path, &body).await
    }

    /// The exit code of a finished exec. The attach stream can end a moment before the
    /// daemon records the exit, so a still-running answer is asked again briefly.
    pub async fn exec_exit_code(&self, exec: &str) -> Result<i64, DockerError> {
        let path = self.path(&format!("/exec/{}/json", query(exec)));
        for attempt in 0..200u64 {
            let response = expect(
                http::request(&self.socket, "GET", &path, None).await?,
                &[200],
            )?;
            let state: ExecState = serde_json::from_slice(&response.body)
                .map_err(|e| DockerError::Protocol(format!("invalid exec state: {e}")))?;
            if !state.running {
                if let Some(code) = state.exit_code {
                    return Ok(code);
                }
            }
            tokio::time::sleep(Duration::from_millis(1 + attempt.min(20))).await;
        }
        Err(DockerError::Protocol(
            "the exec did not report an exit code".into(),
        ))
    }
}

/// Percent-encodes a query or path component (names and ids are mostly `[A-Za-z0-9_.-]`).
fn query(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(parse_version("1.41"), Some((1, 41)));
        assert_eq!(parse_version("x"), None);
        assert!((1, 9) < (1, 35) && (1, 43).min(MAX_VERSION) == (1, 41));
    }

    #[test]
    fn components_are_encoded() {
        assert_eq!(query("aml-abc_1.2"), "aml-abc_1.2");
        assert_eq!(query("a b/c"), "a%20b%2Fc");
    }
}
