use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{assert_all_gone, process_table, read_pids, sh, supervised_host};
use aml_process::{exec, is_subreaper, spawn, ExitStatus, SpawnOptions};

const SUPERVISOR: &str = "AML_PROCESS_TEST_SUPERVISOR";

pub fn main() {
    let Some(runtime) = supervised_host(SUPERVISOR, || {}) else {
        return;
    };
    runtime.block_on(async {
        exec_through_the_supervisor().await;
        the_host_is_no_subreaper_and_keeps_no_foreign_zombies().await;
        killed_trees_leave_nothing_behind().await;
        spawn_errors_come_back().await;
        // Last: nothing spawns after the supervisor is stopped.
        stopping_ends_live_trees_and_reaps_the_supervisor().await;
    });
    println!("supervised: 5 tests passed");
}

async fn exec_through_the_supervisor() {
    let (command, args) = sh("echo out; echo err >&2; exit 3");
    let output = exec(command, &args, SpawnOptions::default()).await.unwrap();
    assert_eq!(output.exit, ExitStatus::Exited(3));
    assert_eq!(output.stdout, b"out\n");
    assert_eq!(output.stderr, b"err\n");
}

/// The issue: after one supervised spawn, every orphan of the application's own process trees
/// stayed a zombie child of the host until it exited.
async fn the_host_is_no_subreaper_and_keeps_no_foreign_zombies() {
    exec("true", &[], SpawnOptions::default()).await.unwrap();
    assert!(!is_subreaper(), "the host made itself a subreaper");
    for _ in 0..20 {
        let status = Command::new("sh")
            .args(["-c", "sleep 0.1 & exit 0"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    // Generous: the orphaned sleeps end after 0.1 s; a loaded machine may take far longer.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !zombie_children().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

/// A leader whose children fork grandchildren that are orphaned while the tree runs: all of
/// them are gone, not even zombies, once `kill()` resolves.
async fn killed_trees_leave_nothing_behind() {
    let tree =
        "echo $$; sh -c 'sleep 1000 & echo $!; sleep 1000 & echo $!' ; sleep 1000 & echo $!; wait";
    for _ in 0..20 {
        let (command, args) = sh(tree);
        let mut process = spawn(command, &args, SpawnOptions::default())
            .await
            .unwrap();
        let pids = read_pids(&mut process.take_stdout().unwrap(), 4).await;
        assert_eq!(pids[0], process.pid());
        process.kill().await;
        assert_eq!(
            process.wait().await.unwrap(),
            ExitStatus::Signaled(libc::SIGTERM)
        );
        assert_all_gone(&pids, Duration::ZERO);
    }
}

async fn spawn_errors_come_back() {
    let error = exec("aml-no-such-command-xyz", &[], SpawnOptions::default())
        .await
        .err()
        .unwrap();
    let aml_process::ProcessError::Spawn { source, .. } = error else {
        panic!("not a spawn error: {error:?}");
    };
    assert_eq!(source.raw_os_error(), Some(libc::ENOENT));
}

/// The issue: a host that simply exited left its supervisor to PID 1 (SIGKILLed by its death
/// signal), which on some machines never reaps it; `aml run` left a zombie behind each time.
async fn stopping_ends_live_trees_and_reaps_the_supervisor() {
    let (command, args) = sh("sleep 1000 & echo $!; echo $$; wait");
    let mut process = spawn(command, &args, SpawnOptions::default())
        .await
        .unwrap();
    let mut pids = read_pids(&mut process.take_stdout().unwrap(), 2).await;
    let supervisors = children();
    assert_eq!(supervisors.len(), 1, "one child of ours: the supervisor");
    pids.extend(&supervisors);
    assert!(aml_process::stop_supervisor(Duration::from_secs(30)));
    // Gone now, not even a zombie: the supervisor is ours and reaped, its tree killed first.
    assert_all_gone(&pids, Duration::ZERO);
    assert!(
        aml_process::stop_supervisor(Duration::ZERO),
        "a second stop is harmless"
    );
    let error = exec("true", &[], SpawnOptions::default())
        .await
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("process supervisor stopped"),
        "{error}"
    );
    drop(process);
}

/// Live or zombie processes whose parent is this process.
fn children() -> Vec<u32> {
    parented_here().into_iter().map(|(pid, _)| pid).collect()
}

/// Zombies whose parent is this process.
fn zombie_children() -> Vec<u32> {
    parented_here()
        .into_iter()
        .filter(|(_, state)| state == "Z")
        .map(|(pid, _)| pid)
        .collect()
}

/// `(pid, state)` of every process whose parent is this process.
fn parented_here() -> Vec<(u32, String)> {
    let me = std::process::id();
    process_table()
        .into_iter()
        .filter(|row| row.ppid == me)
        .map(|row| (row.pid, row.state))
        .collect()
}
