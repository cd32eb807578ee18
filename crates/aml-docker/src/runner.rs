//! A command runner inside the container: one long-lived exec (a POSIX `sh` loop reading
//! one command per line on stdin), so a command costs a fork inside the container instead
//! of a runtime exec (`runc exec`: tens of milliseconds per `docker exec`). Each command
//! runs in a subshell with stdin from /dev/null, stdout and stderr captured in files of a
//! private directory, then reported as `AML-RESULT <exit> <stdout bytes> <stderr bytes>`
//! followed by the bytes, so output is framed exactly whatever it contains.
//!
//! The semantics of a plain exec hold: argv is literal (every word single-quoted, newlines
//! spliced in from a variable so the request stays one line), the environment is the
//! container's plus the explicit values, the cwd is the command's. A runner serves one
//! command at a time; [`RunnerPool`] keeps idle runners per container and starts another
//! when all are busy. An image whose shell cannot start the runner (no writable `/tmp`)
//! falls back to plain execs for that container.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::client::{Docker, ExecSpec};
use crate::error::DockerError;
use crate::exec::{ExecFault, ExecLimits, ExecOutput};
use crate::spawn::SpawnedExec;

const SCRIPT: &str = r#"nl='
'
d="/tmp/aml-runner-$$"
mkdir -p "$d" || exit 1
echo AML-READY
while IFS= read -r line; do
  ( eval "$line" ) </dev/null >"$d/o" 2>"$d/e"
  rc=$?
  printf 'AML-RESULT %s %s %s\n' "$rc" "$(wc -c <"$d/o")" "$(wc -c <"$d/e")"
  cat "$d/o" "$d/e"
done
rm -rf "$d""#;

fn quote(word: &str) -> String {
    let escaped = word.replace('\'', r"'\''").replace('\n', r#"'"$nl"'"#);
    format!("'{escaped}'")
}

/// The request line: `cd <dir> && exec [env K=V…] <cmd> <args…>`.
pub fn command_line(spec: &ExecSpec) -> String {
    let mut line = format!("cd {} && exec", quote(&spec.working_dir));
    if !spec.env.is_empty() {
        line.push_str(" env");
        for pair in &spec.env {
            line.push(' ');
            line.push_str(&quote(pair));
        }
    }
    for word in &spec.cmd {
        line.push(' ');
        line.push_str(&quote(word));
    }
    line.push('\n');
    line
}

struct Runner {
    exec: Arc<SpawnedExec>,
    pending: Vec<u8>,
}

impl Runner {
    async fn start(docker: &Docker, container: &str) -> Result<Option<Runner>, DockerError> {
        let spec = ExecSpec {
            cmd: vec!["sh".into(), "-c".into(), SCRIPT.into()],
            working_dir: "/".into(),
            ..ExecSpec::default()
        };
        let exec = SpawnedExec::start(docker, container, &spec).await?;
        let mut runner = Runner {
            exec,
            pending: Vec::new(),
        };
        match runner.line().await {
            Some(line) if line == "AML-READY" => Ok(Some(runner)),
            _ => Ok(None),
        }
    }

    async fn fill(&mut self) -> bool {
        match self.exec.read(false).await {
            Some(chunk) => {
                self.pending.extend_from_slice(&chunk);
                true
            }
            None => false,
        }
    }

    async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return Some(String::from_utf8_lossy(&line[..end]).into_owned());
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    async fn bytes(&mut self, count: usize) -> Option<Vec<u8>> {
        while self.pending.len() < count {
            if !self.fill().await {
                return None;
            }
        }
        Some(self.pending.drain(..count).collect())
    }

    async fn run(&mut self, spec: &ExecSpec, max: u64) -> Result<ExecOutput, ExecFault> {
        let broken = || {
            ExecFault::Docker(DockerError::Protocol(
                "the container's command runner stopped".into(),
            ))
        };
        if !self.exec.write(command_line(spec).as_bytes()).await? {
            return Err(broken());
        }
        let header = self.line().await.ok_or_else(broken)?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        let parse = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
        let (Some(code), Some(out), Some(err)) = (parse(1), parse(2), parse(3)) else {
            return Err(broken());
        };
        if fields[0] != "AML-RESULT" {
            return Err(broken());
        }
        if out.saturating_add(err) > max {
            return Err(ExecFault::OutputLimit(max));
        }
        let stdout = self.bytes(out as usize).await.ok_or_else(broken)?;
        let stderr = self.bytes(err as usize).await.ok_or_else(broken)?;
        Ok(ExecOutput {
            exit_code: code as i64,
            stdout,
            stderr,
        })
    }
}

#[derive(Default)]
struct Slot {
    idle: Vec<Runner>,
    /// The image cannot host a runner: plain execs only.
    unsupported: bool,
}

/// Idle runners per container id.
#[derive(Default, Clone)]
pub struct RunnerPool {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

impl RunnerPool {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Slot>) -> R) -> R {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut slots)
    }

    /// Runs `spec` like [`crate::exec::run`], through an idle or new runner.
    pub async fn run(
        &self,
        docker: &Docker,
        container: &str,
        spec: &ExecSpec,
        limits: ExecLimits,
    ) -> Result<ExecOutput, ExecFault> {
        let (idle, unsupported) = self.with(|slots| {
            let slot = slots.entry(container.to_string()).or_default();
            (slot.idle.pop(), slot.unsupported)
        });
        if unsupported {
            return crate::exec::run(docker, container, spec, limits).await;
        }
        let cancel = limits.cancel.clone().unwrap_or_default();
        let work = async {
            let mut runner = match idle {
                Some(runner) => runner,
                None => match Runner::start(docker, container).await? {
                    Some(runner) => runner,
                    None => return Ok(None),
                },
            };
            let output = runner.run(spec, limits.max_output_bytes).await?;
            Ok::<_, ExecFault>(Some((runner, output)))
        };
        let timeout = async {
            match limits.timeout {
                Some(duration) => tokio::time::sleep(duration).await,
                None => std::future::pending().await,
            }
        };
        // A fault drops the runner with its connection; only a clean answer returns it.
        let outcome = tokio::select! {
            result = work => result,
            _ = cancel.cancelled() => Err(ExecFault::Cancelled),
            _ = timeout => Err(ExecFault::Timeout),
        };
        match outcome? {
            Some((runner, output)) => {
                self.with(|slots| {
                    slots
                        .entry(container.to_string())
                        .or_default()
                        .idle
                        .push(runner)
                });
                Ok(output)
            }
            None => {
                self.with(|slots| {
                    slots.entry(container.to_string()).or_default().unsupported = true
                });
                crate::exec::run(docker, container, spec, limits).await
            }
        }
    }

    /// Forgets a container's runners (it was removed).
    pub fn forget(&self, container: &str) {
        self.with(|slots| slots.remove(container));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_quote_every_word_and_keep_one_line() {
        let spec = ExecSpec {
            cmd: vec!["printf".into(), "%s".into(), "it's\ntwo lines".into()],
            env: vec!["A=b c".into()],
            working_dir: "/workspace/x y".into(),
            user: None,
        };
        assert_eq!(
            command_line(&spec),
            "cd '/workspace/x y' && exec env 'A=b c' 'printf' '%s' 'it'\\''s'\"$nl\"'two lines'\n"
        );
    }
}
