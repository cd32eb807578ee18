//! Local launch preparation (INVENTORY PA-7, BA-0): the private state directory, launch
//! files with safe permissions, and the spawn error a missing executable becomes.

use std::ffi::{CString, OsString};
use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use aml_process::ProcessError;

use crate::error::{AcpError, ErrorKind};

/// The process to start.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// `true` locally (`{...process.env, ...env}`), `false` for an isolated environment.
    pub inherit_env: bool,
    pub cwd: PathBuf,
}

impl Launch {
    /// The command line for the sensitive `command` attribute of `sandbox.process`.
    pub fn command_line(&self) -> String {
        let mut line = self.command.clone();
        for arg in &self.args {
            line.push(' ');
            line.push_str(arg);
        }
        line
    }
}

/// A spawn failure, naming the command; `code` carries the errno name for the facade (which
/// adds a profile's install hint to `ENOENT`).
pub fn spawn_error(command: &str, error: &ProcessError) -> AcpError {
    let os = error.io_error();
    let code = os.and_then(io::Error::raw_os_error).map(errno_name);
    let message = match (code.as_deref(), os) {
        (Some("ENOENT"), _) => format!("ACP Agent command \"{command}\" was not found"),
        (_, Some(os)) => format!("ACP Agent command \"{command}\" could not be started: {os}"),
        _ => format!("ACP Agent command \"{command}\" could not be started: {error}"),
    };
    AcpError {
        kind: ErrorKind::Spawn,
        message,
        code,
    }
}

fn errno_name(errno: i32) -> String {
    match errno {
        libc::ENOENT => "ENOENT".into(),
        libc::EACCES => "EACCES".into(),
        libc::ENOTDIR => "ENOTDIR".into(),
        libc::ENOEXEC => "ENOEXEC".into(),
        libc::E2BIG => "E2BIG".into(),
        libc::EINVAL => "EINVAL".into(),
        other => format!("E{other}"),
    }
}

/// Creates `parent/aml-acp-XXXXXX` with mode 0700 (`mkdtemp`).
pub fn create_state_directory(parent: &Path) -> io::Result<PathBuf> {
    let mut template = parent.join("aml-acp-XXXXXX").into_os_string().into_vec();
    template.push(0);
    let template = CString::from_vec_with_nul(template)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a null byte"))?;
    let raw = template.into_raw();
    // SAFETY: `raw` is a NUL-terminated, writable buffer we own; mkdtemp rewrites the
    // trailing XXXXXX in place and does not keep the pointer.
    let made = unsafe { libc::mkdtemp(raw) };
    // SAFETY: `raw` came from `CString::into_raw` above and is reclaimed exactly once.
    let path = unsafe { CString::from_raw(raw) };
    if made.is_null() {
        return Err(io::Error::last_os_error());
    }
    Ok(PathBuf::from(OsString::from_vec(path.into_bytes())))
}

/// A launch file (`AcpAgentLaunchFile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchFile {
    pub path: String,
    pub content: String,
    pub executable: bool,
}

/// Why a launch file was refused or could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchFileError {
    /// The documented TypeErrors.
    Path(&'static str),
    Io(String),
}

pub const PATH_NOT_NORMALIZED: &str =
    "ACP Agent launch file path must be a normalized relative path";
pub const PATH_OUTSIDE: &str = "ACP Agent launch file path must remain inside its state directory";

/// Why a launch file path is refused. One rule for the files written on the host (here) and
/// in a Sandbox guest (`lib/agents/acp/sandbox-launch.js`, through `acpLaunchPathProblem`);
/// each side words the refusal for its own root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathProblem {
    /// Not relative, forward-slash and already normalised.
    NotNormalized,
    /// Normalised, but a `..` segment leaves the root.
    Outside,
}

/// The launch file path rule: relative, forward-slash, already normalised, not escaping.
pub fn path_problem(path: &str) -> Option<PathProblem> {
    let normalized = !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && !path.ends_with('/')
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && segment != ".");
    if !normalized {
        return Some(PathProblem::NotNormalized);
    }
    // A normalised path keeps only leading `..` segments; any of them escapes.
    if path.split('/').any(|segment| segment == "..") {
        return Some(PathProblem::Outside);
    }
    None
}

/// Checks a launch file path for the host state directory (the documented TypeErrors).
pub fn check_path(path: &str) -> Result<(), LaunchFileError> {
    match path_problem(path) {
        None => Ok(()),
        Some(PathProblem::NotNormalized) => Err(LaunchFileError::Path(PATH_NOT_NORMALIZED)),
        Some(PathProblem::Outside) => Err(LaunchFileError::Path(PATH_OUTSIDE)),
    }
}

/// Writes `files` under `state` (directories 0700, files 0600 or 0700 when executable),
/// refusing to follow a symlink or overwrite an existing entry. Every path is checked before
/// anything is written.
pub fn write_launch_files(state: &Path, files: &[LaunchFile]) -> Result<(), LaunchFileError> {
    for file in files {
        check_path(&file.path)?;
    }
    let io = |error: io::Error| {
        LaunchFileError::Io(format!("Could not write ACP Agent launch file: {error}"))
    };
    for file in files {
        let target = state.join(&file.path);
        if target
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return Err(LaunchFileError::Path(PATH_OUTSIDE));
        }
        if let Some(parent) = target.parent() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(io)?;
        }
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if file.executable { 0o700 } else { 0o600 })
            .custom_flags(libc::O_NOFOLLOW)
            .open(&target)
            .map_err(io)?;
        out.write_all(file.content.as_bytes()).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn path_rules() {
        for good in ["a", "agent/settings.json", "x/y/z.sh", "..a", "a..b/c"] {
            assert_eq!(check_path(good), Ok(()), "{good}");
        }
        for bad in ["", "/abs", "a//b", "./a", "a/./b", "a/", "a\\b", "nul\0"] {
            assert_eq!(
                check_path(bad),
                Err(LaunchFileError::Path(PATH_NOT_NORMALIZED)),
                "{bad:?}"
            );
        }
        for out in ["..", "../a", "a/../../b", "a/.."] {
            assert_eq!(
                check_path(out),
                Err(LaunchFileError::Path(PATH_OUTSIDE)),
                "{out}"
            );
        }
    }

    #[test]
    fn state_directory_and_files_are_private() {
        let state = create_state_directory(&std::env::temp_dir()).unwrap();
        let name = state.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("aml-acp-") && name.len() == "aml-acp-".len() + 6);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        let files = [
            LaunchFile {
                path: "agent/settings.json".into(),
                content: "{}".into(),
                executable: false,
            },
            LaunchFile {
                path: "bin/run".into(),
                content: "#!/bin/sh\n".into(),
                executable: true,
            },
        ];
        write_launch_files(&state, &files).unwrap();
        assert_eq!(mode(&state.join("agent")), 0o700);
        assert_eq!(mode(&state.join("agent/settings.json")), 0o600);
        assert_eq!(mode(&state.join("bin/run")), 0o700);
        assert_eq!(
            std::fs::read_to_string(state.join("agent/settings.json")).unwrap(),
            "{}"
        );
        // An existing entry (or a symlink planted there) is never written through.
        let again = write_launch_files(&state, &files[..1]);
        assert!(matches!(again, Err(LaunchFileError::Io(_))));
        std::fs::remove_dir_all(&state).unwrap();
    }
}
