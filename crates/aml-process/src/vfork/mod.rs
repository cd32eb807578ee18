//! Linux child creation that does not copy the host's page tables.
//!
//! Why: `fork()` copies the page tables of the whole host, so a spawn from a 150 MB Node process
//! cost several milliseconds. `clone(CLONE_VM | CLONE_VFORK | SIGCHLD)` makes a child that
//! borrows the host's memory until it execs, as `posix_spawn` does, at a cost independent of
//! the host's size. `posix_spawn` itself cannot be used: it offers `POSIX_SPAWN_SETSID` but no
//! hook to run code in the child, and `PR_SET_PDEATHSIG` can only be armed by the child itself
//! before exec (nothing can arm it for another process), so the guarantee would be lost.
//!
//! Only built for glibc: the argument below relies on its `sigaction`, `pthread_sigmask`,
//! `dup2`, ... being lock-free system-call wrappers (musl's `sigaction(SIGABRT)` takes a lock),
//! and on its `clone` leaving the thread pointer alone. Other targets use `fork.rs`.
//!
//! Safety argument (the child's side is in `child.rs`):
//! * The child runs on its own stack ([`ChildStack`]), never on the spawner's, so nothing it
//!   does can clobber frames the spawner returns to.
//! * CLONE_VFORK suspends the calling (spawner) thread until the child execs or exits, so the
//!   [`Plan`] in this frame, its strings and the spawner's TLS (errno) stay alive and are used by
//!   the child alone. Every string is built here, before clone.
//! * The host's other threads keep running, so the child touches no shared state: no heap, no
//!   locks, no environment, no signal handler (all signals are blocked across clone, and the
//!   child resets handlers before it unblocks them).
//! * The child has its own descriptor table, signal handlers and session: no CLONE_FILES,
//!   CLONE_SIGHAND or CLONE_THREAD.

use std::ffi::{c_char, c_void, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use self::child::{child_main, Plan, SHELL};
use self::sys::ChildStack;
use crate::launch::Launch;

mod child;
mod probe;
mod sys;

/// Starts children for the spawner thread, reusing one child stack (spawns are serialised there,
/// and a child stops using the stack before clone returns).
pub(crate) struct Starter {
    stack: Option<ChildStack>,
    /// Whether a vfork child shares our memory (`probe.rs`), learnt by the first `start`.
    vfork_works: Option<bool>,
}

impl Starter {
    /// The stack is allocated by the first `start`, so an idle host never maps it.
    pub(crate) fn new() -> Self {
        Starter {
            stack: None,
            vfork_works: None,
        }
    }

    /// Starts `launch` as the leader of a new session with `stdio` (all above 2, see
    /// `pipes::stdio_pipes`) as its 0, 1 and 2 and the death signal armed, and returns its
    /// pid; exec errors (`ENOENT`, `EACCES`, a missing cwd, ...) come back as the OS error.
    pub(crate) fn start(
        &mut self,
        launch: &Launch,
        stdio: &[OwnedFd; 3],
    ) -> io::Result<libc::pid_t> {
        let stack = match &mut self.stack {
            Some(stack) => stack,
            empty => empty.insert(ChildStack::new()?),
        };
        let vfork_works = match self.vfork_works {
            Some(works) => works,
            None => *self.vfork_works.insert(probe::shares_memory(stack)?),
        };
        if !vfork_works {
            return crate::fork::start(launch, stdio);
        }
        let paths = launch.candidates()?;
        let candidates: Vec<*const c_char> = paths.iter().map(|path| path.as_ptr()).collect();
        let argv = null_terminated(&launch.argv);
        let envp = null_terminated(&launch.envp);
        let script_argv: Vec<AtomicPtr<c_char>> = [SHELL.as_ptr(), ptr::null()]
            .into_iter()
            .chain(argv.iter().skip(1).copied())
            .map(|arg| AtomicPtr::new(arg.cast_mut()))
            .collect();
        let plan = Plan {
            candidates: &candidates,
            argv: argv.as_ptr(),
            script_argv: &script_argv,
            envp: envp.as_ptr(),
            cwd: launch.cwd.as_ref().map_or(ptr::null(), |cwd| cwd.as_ptr()),
            stdio: stdio.each_ref().map(|fd| fd.as_raw_fd()),
            parent: std::process::id() as libc::pid_t,
            last_signal: libc::SIGRTMAX(),
            empty_mask: sys::empty_signal_set(),
            error: AtomicI32::new(0),
        };
        // SAFETY: see the module docs. `child_main` never returns into this frame; it runs on
        // `stack`; `plan` and everything it points to (`paths`, `argv`, `envp`, `script_argv`,
        // `launch`) live in this frame until after clone returns, which CLONE_VFORK delays
        // until the child no longer uses them (exec replaced its memory, or it exited).
        let pid = unsafe {
            sys::clone_vfork(
                child_main,
                stack,
                ptr::from_ref(&plan).cast_mut().cast::<c_void>(),
            )?
        };
        // Relaxed is enough: a failing child stores before it exits, and clone returns only
        // after that exit.
        match plan.error.load(Ordering::Relaxed) {
            0 => Ok(pid),
            error => {
                // It exited before exec: it never ran a program, so it has no tree; reap it
                // here (its zombie may take a moment to appear after the vfork wake-up).
                crate::sys::reap_blocking(pid);
                Err(io::Error::from_raw_os_error(error))
            }
        }
    }
}

/// The pointers of `strings` followed by the null terminator `execve` expects.
fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|string| string.as_ptr())
        .chain(std::iter::once(ptr::null()))
        .collect()
}
