//! The pipes a supervised child gets as its stdio. Made by whoever asks for a child (the spawner
//! in the host, or the host on behalf of the supervisor process), never by the starters in
//! `vfork/` and `fork.rs`, which take ready descriptors and so depend on nothing above them.

use std::io;
use std::os::fd::OwnedFd;

use crate::sys;

/// Our ends of a child's stdin, stdout and stderr, and the child's ends (same order), all
/// CLOEXEC. The child's ends are above 2, so moving them onto 0, 1 and 2 never overwrites one
/// still to be moved: a host running with stdin closed gets fd 0 back from `pipe()`, and std's
/// own pipes then silently lost the child's stdin (dup2 onto itself keeps CLOEXEC).
pub(crate) fn stdio_pipes() -> io::Result<([OwnedFd; 3], [OwnedFd; 3])> {
    let (stdin_read, stdin_write) = io::pipe()?;
    let (stdout_read, stdout_write) = io::pipe()?;
    let (stderr_read, stderr_write) = io::pipe()?;
    let child = [
        sys::above_stdio(stdin_read.into())?,
        sys::above_stdio(stdout_write.into())?,
        sys::above_stdio(stderr_write.into())?,
    ];
    Ok((
        [stdin_write.into(), stdout_read.into(), stderr_read.into()],
        child,
    ))
}
