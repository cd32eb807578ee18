//! What the Linux child runs between `clone(CLONE_VM | CLONE_VFORK)` and `execve` (see
//! `mod.rs` for the parent side and the overall safety argument).
//!
//! The child shares the host's memory while the host's other threads keep running, and it runs
//! on the spawner thread's TLS (`errno` included). So this code must not allocate, take a lock,
//! panic (unwinding or a panic message would allocate and run hooks), or touch anything but:
//! its own stack, the read-only [`Plan`] and the arrays it points to, `Plan::error`, the script
//! argv slot, and `errno`. All of those belong to the spawner thread, which the kernel keeps
//! suspended until this child execs or exits, so nothing else reads or writes them meanwhile.
//! Each libc function called is a thin wrapper around one system call.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use libc::pid_t;

/// The interpreter for a file the kernel cannot execute (`ENOEXEC`), as `execvp` does.
pub(crate) const SHELL: &std::ffi::CStr = c"/bin/sh";

/// Everything the child needs, prepared by the host. Pointers are to NUL-terminated strings and
/// null-terminated arrays owned by the spawner thread's frame, which outlives the child's use.
pub(crate) struct Plan<'a> {
    /// Paths to try with `execve`, in order (`Launch::candidates`).
    pub(crate) candidates: &'a [*const c_char],
    pub(crate) argv: *const *const c_char,
    /// `[SHELL, <file>, argv[1..], null]`; the child fills slot 1 before using it.
    pub(crate) script_argv: &'a [AtomicPtr<c_char>],
    pub(crate) envp: *const *const c_char,
    /// Null to stay in the host's directory.
    pub(crate) cwd: *const c_char,
    /// Descriptors that become the child's 0, 1 and 2; all are above 2, so no dup2 clobbers
    /// one that a later dup2 still needs.
    pub(crate) stdio: [c_int; 3],
    /// The host's pid, to detect a host that died before the death signal was armed.
    pub(crate) parent: pid_t,
    /// Highest signal number whose handler must be reset.
    pub(crate) last_signal: c_int,
    /// The empty signal set, the mask the new program starts with.
    pub(crate) empty_mask: libc::sigset_t,
    /// 0 while nothing failed; the errno of the failed step otherwise. Only written by the child.
    pub(crate) error: AtomicI32,
}

/// The child's entry point, called by glibc's `clone` on the child stack. Never returns.
pub(crate) extern "C" fn child_main(plan: *mut c_void) -> c_int {
    // SAFETY: `plan` is the `&Plan` that `vfork::Starter::start` passed to clone. The spawner
    // thread owns it and stays suspended (CLONE_VFORK) until we exec or exit, so it is alive
    // and nobody else accesses it; we only read it, apart from its atomics.
    let plan = unsafe { &*plan.cast::<Plan<'_>>() };
    let error = prepare_and_exec(plan);
    // A failed step always sets errno; never report 0 ("exec succeeded") by mistake.
    let error = if error == 0 { libc::EINVAL } else { error };
    plan.error.store(error, Ordering::Relaxed);
    // SAFETY: _exit ends this child only (its own process, no CLONE_THREAD) without running
    // atexit handlers or flushing stdio buffers, which are the host's.
    unsafe { libc::_exit(127) }
}

/// Isolates the child, wires its stdio, enters its directory and execs. Returns only on failure,
/// with the errno to report.
fn prepare_and_exec(plan: &Plan<'_>) -> c_int {
    // SAFETY: setsid takes no arguments; the child is not a group leader, so it only fails if
    // the kernel refuses, which we report.
    if unsafe { libc::setsid() } == -1 {
        return errno();
    }
    // SAFETY: PR_SET_PDEATHSIG takes a signal number in arg2 and ignores the rest. The "parent"
    // is the spawner thread that called clone, which never exits while the host lives.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } == -1 {
        return errno();
    }
    // The host may have been killed between clone and prctl (the vfork wait is killable); then
    // the signal will never come because we were already reparented: refuse to run unowned.
    // SAFETY: getppid takes no arguments and cannot fail.
    if unsafe { libc::getppid() } != plan.parent {
        return libc::ESRCH;
    }
    for (&fd, target) in plan.stdio.iter().zip(0..) {
        // SAFETY: `fd` is an open descriptor of the host (CLOEXEC, so exec closes it) and
        // `target` is 0, 1 or 2; dup2 only changes this child's descriptor table.
        if unsafe { libc::dup2(fd, target) } == -1 {
            return errno();
        }
    }
    // SAFETY: a non-null `cwd` is a NUL-terminated string kept alive by the spawner's frame.
    if !plan.cwd.is_null() && unsafe { libc::chdir(plan.cwd) } == -1 {
        return errno();
    }
    reset_signals(plan);
    exec(plan)
}

/// Gives the new program default handlers and an empty mask, as `std::process` did, and makes
/// unblocking safe: every signal has been blocked since before clone, so no host handler could
/// run here on shared memory; after this only default actions remain. SIGPIPE is reset even
/// when ignored (Node ignores it; std reset it). Other ignored signals stay ignored, as with
/// fork+exec. glibc's two internal signals cannot be changed, but their handlers act only on
/// signals their own process sent itself, which never target this child.
fn reset_signals(plan: &Plan<'_>) {
    for signal in 1..=plan.last_signal {
        // SAFETY: sigaction is plain data; all-zero is SIG_DFL with no flags and an empty mask.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a query (null new action) into a valid out-pointer on our stack. It fails
        // only for SIGKILL, SIGSTOP and glibc's internal signals, which are left alone.
        if unsafe { libc::sigaction(signal, ptr::null(), &mut action) } == -1 {
            continue;
        }
        let caught = action.sa_sigaction != libc::SIG_DFL && action.sa_sigaction != libc::SIG_IGN;
        if caught || signal == libc::SIGPIPE {
            // SAFETY: as above; the zeroed value installs SIG_DFL in this child's own handler
            // table (no CLONE_SIGHAND, so the host's handlers are untouched).
            let default: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointer to a fully initialised sigaction on our stack.
            unsafe { libc::sigaction(signal, &default, ptr::null_mut()) };
        }
    }
    // SAFETY: `empty_mask` is an initialised sigset_t; this only changes this child's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &plan.empty_mask, ptr::null_mut()) };
}

/// `execvp`'s search as glibc does it, over pre-built candidates: `EACCES` is remembered and the
/// search goes on; "not there" errors go on; any other error stops it. `ENOEXEC` runs the file
/// with `/bin/sh`. Returns the errno to report.
fn exec(plan: &Plan<'_>) -> c_int {
    let mut denied = false;
    let mut last = libc::ENOENT;
    for &path in plan.candidates {
        // SAFETY: `path` is NUL-terminated, `argv` and `envp` are null-terminated arrays of
        // NUL-terminated strings, all owned by the spawner's frame. On success nothing returns.
        unsafe { libc::execve(path, plan.argv, plan.envp) };
        let mut error = errno();
        if error == libc::ENOEXEC {
            error = exec_script(plan, path);
        }
        match error {
            libc::EACCES => denied = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return error,
        }
        last = error;
    }
    if denied {
        libc::EACCES
    } else {
        last
    }
}

fn exec_script(plan: &Plan<'_>, path: *const c_char) -> c_int {
    if let Some(slot) = plan.script_argv.get(1) {
        slot.store(path.cast_mut(), Ordering::Relaxed);
    }
    // AtomicPtr<c_char> has the same in-memory representation as *mut c_char, so the slice is a
    // valid null-terminated argv array.
    let argv = plan.script_argv.as_ptr().cast::<*const c_char>();
    // SAFETY: SHELL is a static C string; `argv` and `envp` are as in `exec`.
    unsafe { libc::execve(SHELL.as_ptr(), argv, plan.envp) };
    errno()
}

fn errno() -> c_int {
    // SAFETY: __errno_location returns the calling thread's errno slot, here the suspended
    // spawner thread's (shared TLS), which only this child uses until it execs or exits.
    unsafe { *libc::__errno_location() }
}
