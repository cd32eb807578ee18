//! A command turned into exactly the C strings `execve` needs, built before any child exists.
//!
//! Why up front: the Linux child shares the host's memory until it execs (`vfork/`) and may
//! not allocate, take locks or read the host environment (another thread may be changing it).
//! So the environment merge, the `PATH` search list and every NUL check happen here, in the
//! host, and the child only walks ready-made arrays. (`fork.rs` turns the same strings back
//! into a `std::process::Command`.)

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::options::{absolute, SpawnOptions};

/// Everything needed to exec one command, with NUL bytes already rejected.
#[derive(Debug)]
pub(crate) struct Launch {
    /// `argv[0]` is the command exactly as given (as `execvp` passes it).
    pub(crate) argv: Vec<CString>,
    /// `KEY=VALUE` entries: the complete environment of the child.
    pub(crate) envp: Vec<CString>,
    /// Directory the child changes to before exec; the host's when `None`.
    pub(crate) cwd: Option<CString>,
}

impl Launch {
    /// Applies the environment merge documented on [`SpawnOptions`] and checks every string.
    pub(crate) fn new(program: &str, args: &[String], options: &SpawnOptions) -> io::Result<Self> {
        let mut env: BTreeMap<OsString, OsString> = if options.inherit_env {
            std::env::vars_os().collect()
        } else {
            BTreeMap::new()
        };
        for (key, value) in &options.env {
            env.insert(key.into(), value.into());
        }
        if let Some(cwd) = &options.cwd {
            env.insert("PWD".into(), absolute(cwd).into_os_string());
        }
        let argv = std::iter::once(program)
            .chain(args.iter().map(String::as_str))
            .map(|arg| c_string(arg.as_bytes().to_vec()))
            .collect::<io::Result<_>>()?;
        let envp = env
            .into_iter()
            .map(|(key, value)| {
                let mut entry = key.into_vec();
                entry.push(b'=');
                entry.extend_from_slice(value.as_bytes());
                c_string(entry)
            })
            .collect::<io::Result<_>>()?;
        let cwd = options
            .cwd
            .as_ref()
            .map(|cwd| c_string(cwd.as_os_str().as_bytes().to_vec()))
            .transpose()?;
        Ok(Launch { argv, envp, cwd })
    }

    /// The paths to try with `execve`, in order, reproducing glibc's `execvp`: a command with a
    /// slash is used as is; otherwise each `PATH` entry is tried, an empty entry meaning the
    /// current directory (the child's, after `chdir`). An empty command yields itself, so the
    /// exec fails with `ENOENT` as `execvp` does. The search uses the CHILD's `PATH`, or
    /// glibc's default (`_CS_PATH`) when it has none.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub(crate) fn candidates(&self) -> io::Result<Vec<CString>> {
        let program = self.argv.first().map_or(&b""[..], |arg| arg.as_bytes());
        if program.is_empty() || program.contains(&b'/') {
            return Ok(vec![c_string(program.to_vec())?]);
        }
        let path = self
            .envp
            .iter()
            .find_map(|entry| entry.as_bytes().strip_prefix(b"PATH="))
            .unwrap_or(b"/bin:/usr/bin");
        path.split(|&byte| byte == b':')
            .map(|dir| {
                let mut candidate = dir.to_vec();
                if !dir.is_empty() {
                    candidate.push(b'/');
                }
                candidate.extend_from_slice(program);
                c_string(candidate)
            })
            .collect()
    }

    /// The same command as a `std::process::Command` (stdio left to the caller), for `fork.rs`.
    pub(crate) fn command(&self) -> std::process::Command {
        use std::ffi::OsStr;
        let os = |arg: &CString| OsStr::from_bytes(arg.as_bytes()).to_owned();
        let mut argv = self.argv.iter().map(os);
        let mut command = std::process::Command::new(argv.next().unwrap_or_default());
        command.args(argv).env_clear();
        for entry in &self.envp {
            // Every entry was built as KEY=VALUE above; split at the first '='.
            let entry = entry.as_bytes();
            let split = entry
                .iter()
                .position(|&byte| byte == b'=')
                .unwrap_or(entry.len());
            let (key, value) = entry.split_at(split);
            let value = value.get(1..).unwrap_or_default();
            command.env(OsStr::from_bytes(key), OsStr::from_bytes(value));
        }
        if let Some(cwd) = &self.cwd {
            command.current_dir(OsStr::from_bytes(cwd.as_bytes()));
        }
        command
    }
}

/// The error (and message) `std::process::Command::spawn` gives for a NUL byte, kept so callers
/// and their tests see the same thing as before.
fn c_string(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )
    })
}
