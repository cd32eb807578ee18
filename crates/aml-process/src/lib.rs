//! Process supervision for AML: every spawned command runs as its own process group, is killed
//! as a whole tree, and is reaped by us, leaving no orphans and no zombies.
//!
//! This backs `spawnLocalProcess` (PA-8) and `<Script>` host execution (SC-1). It has no napi
//! dependency; the binding maps these types onto the JavaScript contract.
//!
//! # Design
//!
//! * **Groups.** The child calls `setsid` before `exec` (like Node's `detached: true`), so its pid
//!   `G` is also its session and process-group id, and descendants inherit `G`.
//! * **Parent death.** On Linux the child arms `PR_SET_PDEATHSIG(SIGKILL)` and checks it was not
//!   already orphaned. The signal is tied to the creating *thread*, so every child is created on
//!   one dedicated, never-exiting thread (`spawner.rs` in the host, the supervisor's only
//!   working thread there).
//! * **Child creation.** On Linux (glibc) `clone(CLONE_VM | CLONE_VFORK)` on a pre-allocated
//!   stack (`vfork/`): no page-table copy, so a spawn costs the same from a 150 MB host as from a
//!   small one. Everything the child needs (argv, envp, the PATH candidates) is built before,
//!   and the child only makes system calls until `execve`; an exec error comes back as the
//!   child's errno. Other targets `fork()` through `std` (`fork.rs`), and so does glibc Linux
//!   where a vfork child turns out not to share our memory (qemu-user; probed once by the
//!   first spawn, `vfork/probe.rs`): its exec errors come back through std's CLOEXEC pipe.
//! * **Kill.** SIGTERM (+SIGCONT) to the group, reap while waiting up to `grace`, then SIGKILL to
//!   the group and reap until it is empty. `kill()` resolves only then.
//! * **Reaping.** Orphans inside our trees must be reparented to a process that reaps them
//!   (PID 1 does not on these machines), so someone above the leaders is a child subreaper.
//!   When the host calls [`use_supervisor`], that is a supervisor process it starts on the first
//!   spawn (`supervisor/`): the leaders' parent, which runs the group logic below on every tree
//!   and reports exits over a socket, so the host itself is no subreaper and the orphans of its
//!   OTHER children (Node's `child_process`) go to PID 1 as they would without us. Without a
//!   supervisor (or if it cannot start), the host makes itself the subreaper on the first spawn.
//!   Whoever is the parent waits only with `waitpid(-G)` for our own groups, or on an exact pid
//!   it just saw exit in one of them, never `waitpid(-1)`: the host's other children (libuv's,
//!   in Node) are never touched. No signal handler is installed; leader exits are seen through
//!   a pidfd. (A child that fails before `exec` ran nothing; it is reaped by pid where it was
//!   created.)
//! * **Invariant.** We signal `G` only while we can prove it is still ours: the leader is not
//!   reaped yet (its zombie keeps the number allocated), or the last `waitpid(-G)` found a live
//!   member that only we can reap. See `group.rs`, which is the only code that signals or reaps.
//!   The leader is read with `WNOWAIT` when it exits and reaped only at teardown, so the group
//!   stays pinned for as long as its handle is alive.
//! * **Cancellation** is a [`tokio_util::sync::CancellationToken`] rather than an arbitrary
//!   future: it is cloneable and hierarchical (one child token per Script from the run's token,
//!   as an `AbortSignal` maps onto it), can be checked synchronously ("throws if aborted" before
//!   spawning), and its `cancelled()` is cancel-safe inside a `select!` loop. A future would make
//!   the options generic or boxed and could only be polled once.
//!
//! # Limitations
//!
//! * A descendant that leaves the group (`setsid`, `setpgid`, job-control shells with `set -m`,
//!   daemons) is neither killed nor reaped by us; `exec` stops reading output once the group is
//!   gone, so such a process cannot hang it by holding a pipe open.
//! * Only the leader gets the parent-death signal (Linux clears it on fork). If the host is
//!   SIGKILLed, the leader dies but its descendants survive, reparented to PID 1.
//! * Without a supervisor process the subreaper flag is process-wide: orphans of trees spawned
//!   by others in the host (e.g. Node's `child_process`) are reparented to the host too. We
//!   never reap them (that could steal a child libuv waits for by pid), so such orphans stay
//!   zombies until the host exits. That is why hosts with other children should call
//!   [`use_supervisor`] (the addon does).
//! * With a supervisor, the leaders die when it dies (their death signal is tied to it), and it
//!   dies when the host dies; its start (~50 ms for the addon's re-executed Node) is paid by
//!   the first spawn, which blocks the calling thread until the supervisor is ready.
//! * After the leader exits, its zombie is kept (pinning the group for a later `kill()`) until
//!   teardown: `kill()`, `exec`'s completion, or dropping the handle.
//! * A member stuck in uninterruptible sleep delays `kill()` until the kernel lets it die.
//! * Non-Linux Unix: `fork()`, no subreaper, no death signal; leader exits through a kqueue
//!   `EVFILT_PROC` filter on Darwin and FreeBSD, polling elsewhere. Linux without glibc (musl)
//!   keeps everything but spawns with `fork()`, whose cost grows with the host's memory.
//! * Where the kernel refuses `PR_SET_CHILD_SUBREAPER` (qemu-user, some seccomp policies), the
//!   supervisor still serves, like a non-Linux host: orphans inside a tree go to PID 1 (or
//!   another subreaper) and are neither reaped nor waited for by us, so `kill()` resolves once
//!   our own children in the group are reaped; the group is signalled only while its leader
//!   pins it. docs/SANDBOX.md lists the guarantees per platform.

mod control;
mod error;
mod exec;
mod exit_watch;
mod fork;
mod group;
mod handle;
mod janitor;
mod launch;
mod local_tree;
mod monitor;
mod options;
mod output;
mod pipes;
mod poll;
mod session;
mod spawner;
mod starter;
mod status;
mod stdin;
mod supervisor;
mod sys;
mod tree;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod vfork;

pub use error::ProcessError;
pub use exec::{exec, Output};
pub use handle::{spawn, ProcessHandle};
pub use options::{SpawnOptions, DEFAULT_GRACE};
pub use output::OutputStream;
pub use spawner::stop_supervisor;
pub use status::ExitStatus;
pub use stdin::ProcessStdin;
pub use supervisor::{serve_supervisor, use_supervisor, SupervisorCommand};
#[cfg(target_os = "linux")]
pub use sys::is_subreaper;
pub use sys::process_exists;
