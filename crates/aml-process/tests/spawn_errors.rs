//! Exec failures surface as `Spawn` errors carrying the OS error of the step that failed in the
//! child (`ENOENT`, `EACCES`, a missing cwd, ...), with the matching `io::ErrorKind`, and the
//! child that failed is reaped: no zombie is left behind.
//!
//! One test function on purpose: the zombie check at the end (Linux, from /proc) looks at every
//! child of this process, so no other test of this binary may be spawning meanwhile.

mod common;

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use aml_process::{exec, ProcessError, SpawnOptions};
use common::args;

#[tokio::test]
async fn exec_errors_carry_errno_and_leave_no_zombie() {
    let dir = scratch_dir("errors");
    let not_executable = dir.join("not-executable");
    fs::write(&not_executable, "#!/bin/sh\necho never\n").unwrap();
    fs::set_permissions(&not_executable, fs::Permissions::from_mode(0o644)).unwrap();
    let a_file = dir.join("a-file");
    fs::write(&a_file, "").unwrap();

    let missing = SpawnOptions::default();
    expect(
        "aml-no-such-command-xyz",
        missing,
        libc::ENOENT,
        ErrorKind::NotFound,
    )
    .await;
    let absolute = "/definitely/not/here/cmd";
    expect(
        absolute,
        SpawnOptions::default(),
        libc::ENOENT,
        ErrorKind::NotFound,
    )
    .await;
    // An empty command is "not found", as with execvp, not a search of every PATH directory.
    expect(
        "",
        SpawnOptions::default(),
        libc::ENOENT,
        ErrorKind::NotFound,
    )
    .await;

    let path = not_executable.to_str().unwrap();
    let denied = ErrorKind::PermissionDenied;
    expect(path, SpawnOptions::default(), libc::EACCES, denied).await;
    // Found by PATH search but not executable: execvp reports EACCES, not ENOENT.
    let searched = with_env(&[("PATH", dir.to_str().unwrap())]);
    expect("not-executable", searched, libc::EACCES, denied).await;
    // A directory cannot be executed either.
    let dir_path = dir.to_str().unwrap();
    expect(dir_path, SpawnOptions::default(), libc::EACCES, denied).await;

    let no_cwd = SpawnOptions {
        cwd: Some(dir.join("missing")),
        ..SpawnOptions::default()
    };
    expect("true", no_cwd, libc::ENOENT, ErrorKind::NotFound).await;
    let file_cwd = SpawnOptions {
        cwd: Some(a_file.clone()),
        ..SpawnOptions::default()
    };
    expect("true", file_cwd, libc::ENOTDIR, ErrorKind::NotADirectory).await;

    // Rejected before any child exists, with std's message (the JS layer matches on it).
    let error = exec("printf", &args(&["a\0b"]), SpawnOptions::default())
        .await
        .unwrap_err();
    let source = error
        .io_error()
        .expect("a Spawn error carries the io error");
    assert_eq!(source.kind(), ErrorKind::InvalidInput, "{error:?}");
    assert!(error.to_string().contains("nul byte"), "{error}");

    #[cfg(target_os = "linux")]
    assert_eq!(
        zombie_children(),
        Vec::<u32>::new(),
        "a failed child was not reaped"
    );
    fs::remove_dir_all(&dir).unwrap();
}

async fn expect(command: &str, options: SpawnOptions, errno: i32, kind: ErrorKind) {
    let error = exec(command, &[], options).await.unwrap_err();
    let ProcessError::Spawn {
        command: name,
        source,
    } = &error
    else {
        panic!("`{command}`: expected a Spawn error, got {error:?}");
    };
    assert_eq!(name, command);
    assert_eq!(source.raw_os_error(), Some(errno), "`{command}`: {error}");
    assert_eq!(source.kind(), kind, "`{command}`: {error}");
}

fn with_env(env: &[(&str, &str)]) -> SpawnOptions {
    SpawnOptions {
        env: env
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect(),
        ..SpawnOptions::default()
    }
}

/// A fresh directory under the system temp dir, unique to this process and `name`.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aml-process-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Pids of this process's children that are zombies, from /proc.
#[cfg(target_os = "linux")]
fn zombie_children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut zombies = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid ...
        let Some(rest) = stat.rfind(')').map(|end| &stat[end + 2..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        if fields.next() == Some("Z") && fields.next() == Some(me.as_str()) {
            zombies.push(pid);
        }
    }
    zombies
}
