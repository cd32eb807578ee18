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

/// Pids of every process (zombies included) whose process group is `pgid`, from /proc.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
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
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|end| &stat[end + 2..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        if fields.nth(2).and_then(|pgrp| pgrp.parse::<u32>().ok()) == Some(pgid) {
            members.push(pid);
        }
    }
    members
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
