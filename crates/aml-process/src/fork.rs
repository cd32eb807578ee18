//! Child creation with a plain `fork()` through `std::process::Command` and a `pre_exec` hook:
//! the path for targets where `vfork/` does not apply (other Unix systems, Linux without glibc).
//!
//! Its cost grows with the host's memory (the page tables are copied), which is why Linux with
//! glibc uses it only where a vfork child does not share our memory (qemu-user, see
//! `vfork/probe.rs`).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use libc::pid_t;

use crate::launch::Launch;

/// Starts children for the spawner thread with `fork`.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) struct Starter;

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
impl Starter {
    pub(crate) fn new() -> Self {
        Starter
    }

    pub(crate) fn start(&mut self, launch: &Launch, stdio: &[OwnedFd; 3]) -> io::Result<pid_t> {
        start(launch, stdio)
    }
}

/// Forks and execs `launch` as the leader of a new session, with `stdio` as its 0, 1 and 2.
pub(crate) fn start(launch: &Launch, stdio: &[OwnedFd; 3]) -> io::Result<pid_t> {
    let [child_stdin, child_stdout, child_stderr] = stdio.each_ref().map(OwnedFd::try_clone);
    let mut command = launch.command();
    command
        .stdin(Stdio::from(child_stdin?))
        .stdout(Stdio::from(child_stdout?))
        .stderr(Stdio::from(child_stderr?));
    // Captured before fork: the child compares it with getppid() to detect a parent that died
    // before the death signal was armed.
    // SAFETY: getpid cannot fail and touches no memory.
    let parent = unsafe { libc::getpid() };
    // SAFETY: `child_setup` only makes async-signal-safe calls and allocates nothing, which is
    // what running between fork and exec in a multi-threaded process requires.
    unsafe {
        command.pre_exec(move || child_setup(parent));
    }
    let child = command.spawn()?;
    // `command` still holds the child's pipe ends; close them in the host so EOF works.
    drop(command);
    // std's handle is dropped without waiting: reaping belongs to `Group`. Pids always fit in
    // pid_t; std merely widens them to u32.
    Ok(child.id() as pid_t)
}

/// Runs in the forked child before `execve`. Only async-signal-safe calls are allowed here
/// because the host is multi-threaded: `setsid`, `prctl`, `getppid` and building an `io::Error`
/// from errno (no allocation) qualify.
fn child_setup(parent: pid_t) -> io::Result<()> {
    // SAFETY: setsid has no memory-safety preconditions; a freshly forked child is never a group
    // leader, so it only fails if the kernel refuses, which we report as a spawn error.
    if unsafe { libc::setsid() } == -1 {
        return Err(io::Error::last_os_error());
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_PDEATHSIG takes a signal number in arg2 and ignores the rest.
        let armed = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        if armed == -1 {
            return Err(io::Error::last_os_error());
        }
        // The parent may have died between fork and prctl, in which case the signal will never
        // come: we were already reparented, so refuse to start instead of running unowned.
        // SAFETY: getppid cannot fail and touches no memory.
        if unsafe { libc::getppid() } != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SpawnOptions;

    /// The fallback still isolates the child: it leads its own session, and exec errors arrive.
    #[test]
    fn forked_child_leads_its_own_session() {
        let args = ["-c".to_owned(), "cat /proc/$$/stat".to_owned()];
        let launch = Launch::new("sh", &args, &SpawnOptions::default()).unwrap();
        let ([_stdin, stdout, _stderr], child_stdio) = crate::pipes::stdio_pipes().unwrap();
        let pid = start(&launch, &child_stdio).unwrap();
        drop(child_stdio);
        let mut printed = String::new();
        io::Read::read_to_string(&mut std::fs::File::from(stdout), &mut printed).unwrap();
        let mut group = crate::group::Group::new(pid);
        group.kill_and_reap_blocking();
        // Fields after the parenthesised command: state ppid pgrp session ...
        let after_comm = &printed[printed.rfind(')').unwrap() + 2..];
        let session = after_comm.split_whitespace().nth(3).unwrap();
        assert_eq!(session, pid.to_string());
        let missing = Launch::new("aml-no-such-command-xyz", &[], &SpawnOptions::default());
        let (_, child_stdio) = crate::pipes::stdio_pipes().unwrap();
        let error = start(&missing.unwrap(), &child_stdio).err().unwrap();
        assert_eq!(error.raw_os_error(), Some(libc::ENOENT));
    }
}
