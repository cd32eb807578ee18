//! Helpers shared by the integration tests: argument lists, reading pid lines a script prints,
//! and checking that processes are really gone (no process and no zombie).

#![allow(dead_code)]

use std::time::{Duration, Instant};

use aml_process::{process_exists, OutputStream, ProcessError};

pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|arg| (*arg).to_owned()).collect()
}

/// `sh -c <script>` as (command, args).
pub fn sh(script: &str) -> (&'static str, Vec<String>) {
    ("sh", args(&["-c", script]))
}

/// Reads until `count` complete lines arrived and parses each as a pid.
pub async fn read_pids(stream: &mut OutputStream, count: usize) -> Vec<u32> {
    let mut text = Vec::new();
    while text.iter().filter(|&&byte| byte == b'\n').count() < count {
        match stream.read_chunk().await {
            Ok(Some(chunk)) => text.extend_from_slice(&chunk),
            other => panic!("stream ended before {count} pid lines: {other:?}"),
        }
    }
    String::from_utf8(text)
        .expect("pid lines are ASCII")
        .lines()
        .take(count)
        .map(|line| line.trim().parse().expect("a pid per line"))
        .collect()
}

/// One row of /proc: a process (zombies included) and the stat fields the tests read.
pub struct ProcRow {
    pub pid: u32,
    pub state: String,
    pub ppid: u32,
    pub pgrp: u32,
}

/// Every process, from /proc/<pid>/stat (one that ends while it is read is left out).
pub fn process_table() -> Vec<ProcRow> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .expect("/proc is mounted")
        .flatten()
    {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command (which may hold spaces): state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|end| &stat[end + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().take(3).collect();
        let [state, ppid, pgrp] = fields[..] else {
            continue;
        };
        let (Ok(ppid), Ok(pgrp)) = (ppid.parse(), pgrp.parse()) else {
            continue;
        };
        rows.push(ProcRow {
            pid,
            state: state.to_owned(),
            ppid,
            pgrp,
        });
    }
    rows
}

/// Pids of every process (zombies included) whose process group is `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    process_table()
        .into_iter()
        .filter(|row| row.pgrp == pgid)
        .map(|row| row.pid)
        .collect()
}

/// Asserts that `kill(pid, 0)` fails with ESRCH for every pid within `within`.
pub fn assert_all_gone(pids: &[u32], within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let alive: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|&pid| process_exists(pid))
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still present (alive or zombie) after {within:?}: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn is_limit(error: &ProcessError, expected: usize) -> bool {
    matches!(error, ProcessError::OutputLimitExceeded { limit } if *limit == expected)
}

/// The set-up of a test file that runs its cases through a supervisor process: the test
/// binary re-executed with `variable` set. In that child, `prepare` runs, then it serves
/// until the host leaves, and this returns `None`; in the host, the supervisor is installed
/// and this returns the runtime to run the cases on.
pub fn supervised_host(variable: &str, prepare: impl FnOnce()) -> Option<tokio::runtime::Runtime> {
    if std::env::var_os(variable).is_some() {
        prepare();
        aml_process::serve_supervisor().expect("the supervisor serves until the host leaves");
        return None;
    }
    assert!(aml_process::use_supervisor(
        aml_process::SupervisorCommand {
            program: std::env::current_exe().unwrap(),
            args: Vec::new(),
            env: vec![(variable.to_owned(), "1".to_owned())],
        }
    ));
    Some(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
    )
}
