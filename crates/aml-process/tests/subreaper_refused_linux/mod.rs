use std::time::Duration;

use crate::common::{process_table, read_pids, sh};
use aml_process::{exec, spawn, ExitStatus, SpawnOptions, SupervisorCommand};

const SUPERVISOR: &str = "AML_PROCESS_TEST_REFUSED_SUPERVISOR";

pub fn main() {
    if std::env::var_os(SUPERVISOR).is_some() {
        refuse_subreaper();
        aml_process::serve_supervisor().expect("the supervisor serves until the host leaves");
        return;
    }
    assert!(aml_process::use_supervisor(SupervisorCommand {
        program: std::env::current_exe().unwrap(),
        args: Vec::new(),
        env: vec![(SUPERVISOR.to_owned(), "1".to_owned())],
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        leaders_are_children_of_the_supervisor().await;
        exec_works_without_a_subreaper().await;
        kill_ends_the_whole_group().await;
        assert!(aml_process::stop_supervisor(Duration::from_secs(30)));
    });
    println!("subreaper_refused: 3 tests passed");
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

/// `kill()` still signals the whole group while the leader pins it, grandchildren included;
/// without the subreaper they are reaped by PID 1 (or another subreaper), not by us, so the
/// check is that none of them still runs.
async fn kill_ends_the_whole_group() {
    let tree = "echo $$; sh -c 'sleep 1000 & echo $!'; sleep 1000 & echo $!; wait";
    let (command, args) = sh(tree);
    let mut process = spawn(command, &args, SpawnOptions::default())
        .await
        .unwrap();
    let pids = read_pids(&mut process.take_stdout().unwrap(), 3).await;
    process.kill().await;
    assert_eq!(
        process.wait().await.unwrap(),
        ExitStatus::Signaled(libc::SIGTERM)
    );
    // The signal was sent before kill() resolved; an orphan may take a moment to die, and PID 1
    // may leave it a zombie (a dead process). No wall-clock margin decides the outcome: the
    // loop only ends when every pid is dead.
    let mut delay = Duration::from_millis(5);
    while let Some(pid) = running(&pids) {
        assert!(
            delay < Duration::from_secs(60),
            "pid {pid} of the killed tree still runs"
        );
        tokio::time::sleep(delay).await;
        delay *= 2;
    }
}

/// The first of `pids` that exists and is not a zombie.
fn running(pids: &[u32]) -> Option<u32> {
    let table = process_table();
    pids.iter().copied().find(|pid| {
        table
            .iter()
            .any(|row| row.pid == *pid && row.state != "Z" && row.state != "X")
    })
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
