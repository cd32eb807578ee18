//! How a process ended, decoded once from the kernel's two encodings (`waitpid` status words and
//! `waitid` siginfo) into one value that is cheap to copy into every memoised `wait()` result.

use std::fmt;

/// How the leader of a supervised process group ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// It called `exit(code)` (or returned from `main`).
    Exited(i32),
    /// It was terminated by this signal number.
    Signaled(i32),
}

impl ExitStatus {
    /// `true` for `Exited(0)`.
    pub fn success(self) -> bool {
        self == ExitStatus::Exited(0)
    }

    /// The exit code, if it exited normally.
    pub fn code(self) -> Option<i32> {
        match self {
            ExitStatus::Exited(code) => Some(code),
            ExitStatus::Signaled(_) => None,
        }
    }

    /// The terminating signal, if it was killed by one.
    pub fn signal(self) -> Option<i32> {
        match self {
            ExitStatus::Exited(_) => None,
            ExitStatus::Signaled(signal) => Some(signal),
        }
    }

    /// Decodes a `waitpid` status word. We never pass `WUNTRACED`/`WCONTINUED`, so a status is
    /// either an exit or a termination by signal.
    pub(crate) fn from_wait_status(raw: i32) -> Self {
        if libc::WIFSIGNALED(raw) {
            ExitStatus::Signaled(libc::WTERMSIG(raw))
        } else {
            ExitStatus::Exited(libc::WEXITSTATUS(raw))
        }
    }

    /// Decodes a `waitid(WEXITED)` report: `CLD_EXITED` carries the exit code, `CLD_KILLED` and
    /// `CLD_DUMPED` carry the signal.
    pub(crate) fn from_siginfo(code: i32, status: i32) -> Self {
        if code == libc::CLD_EXITED {
            ExitStatus::Exited(status)
        } else {
            ExitStatus::Signaled(status)
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitStatus::Exited(code) => write!(f, "exited with code {code}"),
            ExitStatus::Signaled(signal) => write!(f, "terminated by signal {signal}"),
        }
    }
}
