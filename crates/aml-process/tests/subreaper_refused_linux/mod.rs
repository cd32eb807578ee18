use std::time::Duration;

use crate::common::{process_table, read_pids, sh, supervised_host};
use aml_process::{exec, spawn, ExitStatus, SpawnOptions};

const SUPERVISOR: &str = "AML_PROCESS_TEST_REFUSED_SUPERVISOR";

pub fn main() {
    let Some(runtime) = supervised_host(SUPERVISOR, refuse_subreaper) else {
        return;
    };
    runtime.block_on(async {
        leaders_are_children_of_the_supervisor().await;
        exec_works_without_a_subreaper().await;
        kill_reaps_the_whole_tree().await;
        exec_kills_what_the_command_left_behind().await;
        a_member_in_another_group_is_killed().await;
        assert!(aml_process::stop_supervisor(Duration::from_secs(30)));
    });
    println!("subreaper_refused: 5 tests passed");
}

/// The defect: the supervisor exited at its first `prctl`, so the host supervised its own
/// trees (the leader's parent was the host).
async fn leaders_are_children_of_the_supervisor() {
    let (command, args) = sh("echo $PPID");
    let output = exec(command, &args, SpawnOptions::default()).await.unwrap();
    let parent: u32 = String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(
        parent,
        std::process::id(),
        "the host started the leader itself"
    );
    let supervisors: Vec<u32> = process_table()
        .into_iter()
        .filter(|row| row.ppid == std::process::id())
        .map(|row| row.pid)
        .collect();
    assert_eq!(
        supervisors,
        vec![parent],
        "the leader's parent is our supervisor"
    );
}

async fn exec_works_without_a_subreaper() {
    let (command, args) = sh("echo out; echo err >&2; exit 3");
    let output = exec(command, &args, SpawnOptions::default()).await.unwrap();
    assert_eq!(output.exit, ExitStatus::Exited(3));
    assert_eq!(output.stdout, b"out\n");
    assert_eq!(output.stderr, b"err\n");
}

/// `kill()` takes the whole tree down, grandchildren orphaned to PID 1 included, and resolves
/// only once none of them is left, not even as a zombie. (The old code signalled the group and
/// resolved once the leader was reaped: the orphans were still dying, or zombies of PID 1.)
async fn kill_reaps_the_whole_tree() {
    let tree = "sh -c 'sleep 1000 & echo $!; wait' & sleep 1000 & echo $!; wait";
    let (command, args) = sh(tree);
    let mut process = spawn(command, &args, SpawnOptions::default())
        .await
        .unwrap();
    let pids = read_pids(&mut process.take_stdout().unwrap(), 2).await;
    process.kill().await;
    assert_eq!(
        process.wait().await.unwrap(),
        ExitStatus::Signaled(libc::SIGTERM)
    );
    assert_none_left(&pids, &[process.pid()]);
}

/// Background jobs a finished command leaves behind are killed before `exec` returns, as with
/// a subreaper. (The old code reaped the leader, found no child of its own in the group and
/// returned with the job still running.)
async fn exec_kills_what_the_command_left_behind() {
    let (command, args) = sh("sleep 1000 & echo $!");
    let output = exec(command, &args, SpawnOptions::default()).await.unwrap();
    assert_eq!(output.exit, ExitStatus::Exited(0));
    let job: u32 = String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_none_left(&[job], &[]);
}

/// A member that moved to another process group of the session (`setpgid`, as job-control
/// shells do) is found through `/proc` and killed too; only `setsid` leaves the tree. (The old
/// code signalled the group only.)
async fn a_member_in_another_group_is_killed() {
    let moved = "perl -e '$| = 1; setpgrp(0, 0); print \"$$\\n\"; sleep 1000' & wait";
    let (command, args) = sh(moved);
    let mut process = spawn(command, &args, SpawnOptions::default())
        .await
        .unwrap();
    let pids = read_pids(&mut process.take_stdout().unwrap(), 1).await;
    assert_ne!(
        process_table()
            .iter()
            .find(|row| row.pid == pids[0])
            .map(|row| row.pgrp),
        Some(process.pid()),
        "perl left the leader's group"
    );
    process.kill().await;
    process.wait().await.unwrap();
    assert_none_left(&pids, &[process.pid()]);
}

/// Every pid in `pids` and `leaders` is gone right now: no process, no zombie.
fn assert_none_left(pids: &[u32], leaders: &[u32]) {
    let left: Vec<u32> = pids
        .iter()
        .chain(leaders)
        .copied()
        .filter(|&pid| aml_process::process_exists(pid))
        .collect();
    assert!(left.is_empty(), "still present (alive or zombie): {left:?}");
}

/// Makes `prctl(PR_SET_CHILD_SUBREAPER, ..)` fail with EINVAL in this process and its children,
/// and checks that it does: every other system call is allowed.
fn refuse_subreaper() {
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xc000_00b7;
    // Offsets in `struct seccomp_data`: nr, arch, then args[] at 16 (low word first, LE).
    let load = |offset: u32| libc::sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: offset,
    };
    let jump_eq = |value: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k: value,
    };
    let ret = |value: u32| libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: value,
    };
    let mut program = [
        load(4),
        jump_eq(AUDIT_ARCH, 0, 4),
        load(0),
        jump_eq(libc::SYS_prctl as u32, 0, 2),
        load(16),
        jump_eq(libc::PR_SET_CHILD_SUBREAPER as u32, 1, 0),
        ret(libc::SECCOMP_RET_ALLOW),
        ret(libc::SECCOMP_RET_ERRNO | libc::EINVAL as u32),
    ];
    let filter = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: plain prctl calls; `filter` points at `program`, alive for the call.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &filter as *const libc::sock_fprog
            ),
            0
        );
        assert_eq!(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), -1);
    }
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::EINVAL)
    );
}
