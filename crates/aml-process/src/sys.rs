//! Thin, audited wrappers over the libc calls the supervisor needs.
//!
//! Every `unsafe` block of the crate lives here, except child creation itself (`vfork/` with
//! glibc on Linux, `fork.rs` elsewhere), so the rest of the crate reasons about process groups
//! with safe functions whose preconditions are stated in their docs.

use std::io;

use libc::pid_t;

use crate::status::ExitStatus;

/// Outcome of a non-blocking wait over the children in one process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupWait {
    /// A child of ours in the group was reaped.
    Reaped(pid_t, ExitStatus),
    /// At least one child of ours is in the group and none has exited yet.
    Running,
    /// No child of ours is in the group (`ECHILD`).
    Empty,
}

/// Marks this process (the supervisor, or a host without one) as a child subreaper so orphans
/// of our trees are reparented to us (and can be reaped by us) instead of to PID 1, which does
/// not reap on these machines.
#[cfg(target_os = "linux")]
pub(crate) fn become_subreaper() -> io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes a flag in arg2 and ignores the rest.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `signal` to every member of process group `pgid`. A group with no member is not an
/// error: the caller's goal (nobody left to signal) already holds.
///
/// Precondition (see `group.rs`): the caller has proof that `pgid` still names OUR group.
pub(crate) fn signal_group(pgid: pid_t, signal: i32) -> io::Result<()> {
    // SAFETY: kill has no memory-safety preconditions; a negative pid addresses a group.
    if unsafe { libc::kill(-pgid, signal) } == -1 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::ESRCH) {
            return Err(error);
        }
    }
    Ok(())
}

/// Sends `signal` to process `pid` if `still_ours()` holds once `pid` is pinned, so a number the
/// kernel recycled in between is never signalled. Linux pins it with a pidfd (the check then
/// reads the same process the signal goes to); where pidfds are missing (other Unixes, old
/// kernels) the check runs right before a plain `kill`, leaving the window of one system call.
pub(crate) fn signal_process_if(
    pid: pid_t,
    signal: i32,
    still_ours: impl FnOnce() -> bool,
) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    match exit_notifier(pid) {
        Ok(pidfd) => {
            use std::os::fd::AsRawFd;
            if !still_ours() {
                return Ok(());
            }
            // SAFETY: pidfd_send_signal takes a pidfd we own, a signal number, a null siginfo
            // (the kernel fills one in as for kill) and no flags.
            let sent = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            };
            return match sent {
                -1 => match io::Error::last_os_error() {
                    error if error.raw_os_error() == Some(libc::ESRCH) => Ok(()),
                    error => Err(error),
                },
                _ => Ok(()),
            };
        }
        Err(error) if error.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
        Err(_) => {}
    }
    if !still_ours() {
        return Ok(());
    }
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(pid, signal) } == -1 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::ESRCH) {
            return Err(error);
        }
    }
    Ok(())
}

/// Reaps one exited child of ours whose process group is `pgid`, without blocking.
pub(crate) fn reap_group_member(pgid: pid_t) -> io::Result<GroupWait> {
    loop {
        let mut raw = 0;
        // SAFETY: `raw` is a valid out-pointer for the duration of the call.
        let pid = unsafe { libc::waitpid(-pgid, &mut raw, libc::WNOHANG) };
        match pid {
            0 => return Ok(GroupWait::Running),
            -1 => {
                let error = io::Error::last_os_error();
                match error.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::ECHILD) => return Ok(GroupWait::Empty),
                    _ => return Err(error),
                }
            }
            pid => return Ok(GroupWait::Reaped(pid, ExitStatus::from_wait_status(raw))),
        }
    }
}

/// Reaps the exited child `pid` if it has exited; `Ok(None)` if it is still running.
pub(crate) fn reap_pid(pid: pid_t) -> io::Result<Option<ExitStatus>> {
    loop {
        let mut raw = 0;
        // SAFETY: `raw` is a valid out-pointer for the duration of the call.
        match unsafe { libc::waitpid(pid, &mut raw, libc::WNOHANG) } {
            0 => return Ok(None),
            -1 if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => continue,
            -1 => return Err(io::Error::last_os_error()),
            _ => return Ok(Some(ExitStatus::from_wait_status(raw))),
        }
    }
}

/// Reaps `pid`, a child of ours that nobody else waits for, blocking until it has exited: a
/// child that failed before exec (it ran nothing), or the supervisor process once its socket
/// closed.
pub(crate) fn reap_blocking(pid: pid_t) {
    let mut raw = 0;
    // SAFETY: `raw` is a valid out-pointer for the duration of each call.
    while unsafe { libc::waitpid(pid, &mut raw, 0) } == -1
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// Which children [`peek_exited`] looks at.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Peek {
    /// Exactly this child.
    Pid(pid_t),
    /// Any child of ours in this process group.
    Group(pid_t),
}

/// Reports an exited child WITHOUT reaping it (`WNOWAIT`): the zombie keeps its pid, and with it
/// the group id, allocated. `Ok(None)` when no selected child has exited. For `Peek::Pid`,
/// `ECHILD` is an error: that child is no longer ours to wait for (someone else reaped it).
pub(crate) fn peek_exited(which: Peek) -> io::Result<Option<(pid_t, ExitStatus)>> {
    let (idtype, id) = match which {
        Peek::Pid(pid) => (libc::P_PID, pid),
        Peek::Group(pgid) => (libc::P_PGID, pgid),
    };
    loop {
        // SAFETY: siginfo_t is plain data; all-zero is a valid value and makes si_pid 0, which is
        // how POSIX tells "nothing exited" apart under WNOHANG.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        // SAFETY: `info` is a valid out-pointer; `id` is a pid/pgid, reinterpreted as id_t.
        if unsafe { libc::waitid(idtype, id as libc::id_t, &mut info, flags) } == -1 {
            let error = io::Error::last_os_error();
            match error.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ECHILD) if matches!(which, Peek::Group(_)) => return Ok(None),
                _ => return Err(error),
            }
        }
        // SAFETY: after a successful waitid with WEXITED, the SIGCHLD union member is the one
        // the kernel filled (or the zeroed value, when nothing exited).
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        if pid == 0 {
            return Ok(None);
        }
        return Ok(Some((pid, ExitStatus::from_siginfo(info.si_code, status))));
    }
}

/// Opens a pidfd, which becomes readable when `pid` exits. Only called for an unreaped child of
/// ours, so the pid cannot have been recycled underneath us.
#[cfg(target_os = "linux")]
pub(crate) fn exit_notifier(pid: pid_t) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd (or -1); no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the syscall returned a fresh descriptor that nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// A kqueue watching `pid` for `NOTE_EXIT`: the kqueue's own descriptor becomes readable once the
/// event is pending, so tokio's reactor (itself a kqueue there) can wait on it like on a pidfd.
/// The event is never consumed; the caller only needs the readiness, then peeks with `WNOWAIT`.
/// Only called for an unreaped child of ours, so the pid cannot have been recycled. A child that
/// already exited may be refused (`ESRCH`): the caller then polls, and its first peek finds it.
#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
pub(crate) fn exit_notifier(pid: pid_t) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: kqueue takes no arguments and returns a new descriptor (or -1). Kqueues are not
    // inherited across fork, so no child of ours keeps it.
    let queue = unsafe { libc::kqueue() };
    if queue < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: kqueue returned a fresh descriptor that nothing else owns.
    let queue = unsafe { std::os::fd::OwnedFd::from_raw_fd(queue) };
    // SAFETY: kevent is plain data; all-zero is a valid value that we then fill in.
    let mut change: libc::kevent = unsafe { std::mem::zeroed() };
    change.ident = pid as libc::uintptr_t;
    change.filter = libc::EVFILT_PROC;
    change.flags = libc::EV_ADD;
    change.fflags = libc::NOTE_EXIT;
    // SAFETY: one valid change in, no event list out, no timeout: registration only.
    let result = unsafe {
        libc::kevent(
            queue.as_raw_fd(),
            &change,
            1,
            std::ptr::null_mut(),
            0,
            std::ptr::null(),
        )
    };
    if result == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(queue)
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd"
)))]
pub(crate) fn exit_notifier(_pid: pid_t) -> io::Result<std::os::fd::OwnedFd> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Registers an exit notifier with the current tokio reactor; `None` if registration fails
/// (callers fall back to polling). Must be called inside a tokio runtime.
pub(crate) fn watch_exit(
    notifier: std::os::fd::OwnedFd,
) -> Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    use tokio::io::{unix::AsyncFd, Interest};
    // SAFETY: an OwnedFd is a valid open descriptor, always returns that same descriptor from
    // as_raw_fd, and moves into the AsyncFd, so it stays open for the AsyncFd's whole lifetime.
    unsafe { AsyncFd::register_with_interest(notifier, Interest::READABLE) }.ok()
}

/// Whether a process (including a zombie) with this pid exists, i.e. `kill(pid, 0)` succeeds.
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only performs the existence and permission checks.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// One `read(2)` on a non-blocking descriptor, ignoring any readiness cache: `WouldBlock` means
/// the pipe really is empty right now. Used to drain what a dead group left behind, because
/// tokio's `try_read` answers `WouldBlock` without reading until its reactor has observed the
/// readiness, which on a multi-thread runtime may still be in flight.
pub(crate) fn read_now(fd: std::os::fd::BorrowedFd<'_>, buffer: &mut [u8]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fd` is open for the duration of the borrow, and `buffer` is valid for writes of
    // `buffer.len()` bytes.
    let read = unsafe { libc::read(fd.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
    if read < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(read as usize)
    }
}

/// `fd` itself when it is above 2, otherwise a CLOEXEC duplicate that is (and `fd` is closed).
/// See `pipes::stdio_pipes` for why a child's ends must not be 0, 1 or 2.
pub(crate) fn above_stdio(fd: std::os::fd::OwnedFd) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: `fd` is open for the duration of the call; F_DUPFD_CLOEXEC takes a minimum fd.
    let duplicate = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if duplicate == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl returned a fresh descriptor that nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(duplicate) })
}

/// A CLOEXEC duplicate of `fd` above 2, leaving `fd` open (e.g. the host's stderr, lent to the
/// supervisor process).
pub(crate) fn duplicate_above_stdio(
    fd: std::os::fd::BorrowedFd<'_>,
) -> io::Result<std::os::fd::OwnedFd> {
    above_stdio(fd.try_clone_to_owned()?)
}

/// Moves descriptor 0 (the supervisor's socket, see `supervisor/server.rs`) above 2 with
/// CLOEXEC, so the supervisor's children never inherit it, and puts `/dev/null` in its place.
pub(crate) fn take_stdin() -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: F_DUPFD_CLOEXEC on fd 0 (open: it is our stdin) returns a fresh descriptor.
    let taken = unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) };
    if taken == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl returned a fresh descriptor that nothing else owns.
    let taken = unsafe { std::os::fd::OwnedFd::from_raw_fd(taken) };
    let null = std::fs::File::open("/dev/null")?;
    // SAFETY: both descriptors are open; dup2 replaces our fd 0, which `taken` now duplicates.
    if unsafe { libc::dup2(null.as_raw_fd(), 0) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(taken)
}

/// Whether orphans of our trees are reparented to this process: it is a child subreaper. Never
/// on platforms without the facility.
pub(crate) fn orphans_come_back() -> bool {
    #[cfg(target_os = "linux")]
    return is_subreaper();
    #[cfg(not(target_os = "linux"))]
    false
}

/// Whether this process is a child subreaper (`PR_GET_CHILD_SUBREAPER`).
#[cfg(target_os = "linux")]
pub fn is_subreaper() -> bool {
    let mut flag: libc::c_int = 0;
    // SAFETY: PR_GET_CHILD_SUBREAPER writes an int through the pointer in arg2.
    let result = unsafe {
        libc::prctl(
            libc::PR_GET_CHILD_SUBREAPER,
            &mut flag as *mut libc::c_int,
            0,
            0,
            0,
        )
    };
    result == 0 && flag != 0
}
