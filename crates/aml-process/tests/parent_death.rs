//! PR_SET_PDEATHSIG: a leader does not outlive a SIGKILLed host. The host is this test binary
//! re-executed as a helper, so the real test can kill it. Linux only: elsewhere there is no
//! death signal to test.

#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aml_process::{exec, spawn, SpawnOptions};

const HELPER: &str = "AML_PROCESS_PDEATHSIG_HELPER";

#[test]
#[ignore = "helper process for leaders_die_with_a_killed_host; does nothing on its own"]
fn pdeathsig_helper() {
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let process = spawn("sleep", &["1000".into()], SpawnOptions::default())
            .await
            .unwrap();
        println!("LEADER {}", process.pid());
        std::mem::forget(process);
        std::future::pending::<()>().await;
    });
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn leaders_die_with_a_killed_host() {
    // Make this process a subreaper first, so the orphaned leader is reparented to us and its
    // zombie can be inspected and reaped here.
    exec("true", &[], SpawnOptions::default()).await.unwrap();
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pdeathsig_helper",
            "--include-ignored",
            "--nocapture",
        ])
        .env(HELPER, "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(helper.stdout.take().unwrap()).lines();
    let leader: i32 = loop {
        let line = lines.next().expect("helper printed its leader").unwrap();
        if let Some(pid) = line.strip_prefix("LEADER ") {
            break pid.parse().unwrap();
        }
    };
    let alive = state(leader).is_some_and(|state| state != 'Z');
    assert!(alive, "the leader runs while the host lives");
    helper.kill().unwrap();
    helper.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while state(leader).is_some_and(|state| state != 'Z') && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(state(leader), Some('Z'), "the leader outlived its host");
    let mut status = 0;
    // SAFETY: waitpid on our own (adopted) zombie child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(leader, &mut status, 0) }, leader);
    assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL);
}

/// The state letter from /proc/<pid>/stat, `None` once the pid is gone.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].chars().next()
}
