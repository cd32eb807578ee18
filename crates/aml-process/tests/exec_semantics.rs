//! What the started program observes is what `std::process` + `execvp` gave it: the same PATH
//! search (EACCES skipped, empty entry = the child's cwd), the `/bin/sh` fallback for a file
//! without a `#!` line, a fresh session, no blocked signals and SIGPIPE at its default.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use aml_process::{exec, ExitStatus, SpawnOptions};
use common::args;

#[tokio::test]
async fn path_search_skips_non_executables_and_uses_the_childs_path() {
    let dir = scratch_dir("path");
    let (first, second) = (dir.join("first"), dir.join("second"));
    fs::create_dir_all(&first).unwrap();
    fs::create_dir_all(&second).unwrap();
    write_file(&first.join("aml-tool"), "#!/bin/sh\necho first\n", 0o644);
    write_file(&second.join("aml-tool"), "#!/bin/sh\necho second\n", 0o755);
    let path = format!("{}:{}", first.display(), second.display());
    let output = exec("aml-tool", &[], with_path(&path, None)).await.unwrap();
    assert_eq!(output.stdout, b"second\n");
    // An empty PATH entry means the current directory: the child's, after it changed into cwd.
    let output = exec("aml-tool", &[], with_path("", Some(&second)))
        .await
        .unwrap();
    assert_eq!(output.stdout, b"second\n");
    fs::remove_dir_all(&dir).unwrap();
}

// musl's execvp has no such fallback, so neither had spawning on musl.
#[cfg(not(target_env = "musl"))]
#[tokio::test]
async fn a_file_without_interpreter_line_runs_with_sh() {
    let dir = scratch_dir("script");
    let script = dir.join("no-shebang");
    write_file(&script, "echo \"ran:$1:$2\"\nexit 4\n", 0o755);
    let argv = args(&["one", "two"]);
    let output = exec(script.to_str().unwrap(), &argv, SpawnOptions::default())
        .await
        .unwrap();
    assert_eq!(output.stdout, b"ran:one:two\n");
    assert_eq!(output.exit, ExitStatus::Exited(4));
    fs::remove_dir_all(&dir).unwrap();
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_program_starts_isolated_with_clean_signal_state() {
    // `cat` is exec'd directly, so /proc/self is the started program itself.
    let output = exec(
        "cat",
        &args(&["/proc/self/stat", "/proc/self/status"]),
        SpawnOptions::default(),
    )
    .await
    .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let stat = text.lines().next().unwrap();
    let pid = stat.split_whitespace().next().unwrap();
    // Fields after the parenthesised command: state ppid pgrp session ...
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    assert_eq!(
        fields[1],
        std::process::id().to_string(),
        "parent is the host"
    );
    assert_eq!(fields[2], pid, "leads its own process group");
    assert_eq!(fields[3], pid, "leads its own session");
    let mask = |name: &str| {
        let line = text.lines().find(|line| line.starts_with(name)).unwrap();
        u64::from_str_radix(line[name.len()..].trim(), 16).unwrap()
    };
    // Every signal is blocked in the host around child creation; none may stay blocked.
    assert_eq!(
        mask("SigBlk:"),
        0,
        "blocked signals leaked into the program"
    );
    // The Rust test harness ignores SIGPIPE (so does Node); the program must not inherit that.
    let sigpipe = 1u64 << (libc::SIGPIPE - 1);
    assert_eq!(mask("SigIgn:") & sigpipe, 0, "SIGPIPE is still ignored");
}

fn with_path(path: &str, cwd: Option<&Path>) -> SpawnOptions {
    SpawnOptions {
        env: vec![("PATH".into(), path.into())],
        cwd: cwd.map(Path::to_path_buf),
        ..SpawnOptions::default()
    }
}

fn write_file(path: &Path, contents: &str, mode: u32) {
    fs::write(path, contents).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A fresh directory under the system temp dir, unique to this process and `name`.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aml-process-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
