//! The messages between the host and its supervisor process, and their byte encoding.
//!
//! A frame is a little-endian `u32` length and that many bytes: a tag, then fixed-width
//! integers and length-prefixed byte strings. A spawn request's three stdio descriptors travel
//! as `SCM_RIGHTS` with the frame (`socket.rs`); nothing else carries descriptors. Both ends
//! are the same build of this crate, so there is no versioning.

use std::ffi::CString;
use std::io;
use std::time::Duration;

use libc::pid_t;

use crate::status::ExitStatus;

/// Host → supervisor.
#[derive(Debug)]
pub(crate) enum Request {
    /// Start a leader with the descriptors that came with the frame as its stdio.
    Spawn {
        id: u64,
        argv: Vec<CString>,
        envp: Vec<CString>,
        cwd: Option<CString>,
    },
    /// Tear the tree down (TERM, `grace`, KILL), reap it and answer `Gone`.
    Teardown { pid: pid_t, grace: Duration },
}

/// Supervisor → host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The first frame: the supervisor is serving (it is a subreaper by now).
    Ready,
    Spawned {
        id: u64,
        pid: pid_t,
    },
    SpawnFailed {
        id: u64,
        errno: i32,
    },
    /// The leader exited; it stays a zombie in the supervisor until the teardown.
    Exited {
        pid: pid_t,
        status: ExitStatus,
    },
    /// Every member is dead and reaped; the pid will not be mentioned again.
    Gone {
        pid: pid_t,
        status: Option<ExitStatus>,
    },
}

const SPAWN: u8 = 1;
const TEARDOWN: u8 = 2;
const SPAWNED: u8 = 3;
const SPAWN_FAILED: u8 = 4;
const EXITED: u8 = 5;
const GONE: u8 = 6;
const READY: u8 = 7;

impl Request {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Writer::frame();
        match self {
            Request::Spawn {
                id,
                argv,
                envp,
                cwd,
            } => {
                out.u8(SPAWN).u64(*id).strings(argv).strings(envp);
                match cwd {
                    Some(cwd) => out.u8(1).bytes(cwd.as_bytes()),
                    None => out.u8(0),
                };
            }
            Request::Teardown { pid, grace } => {
                let nanos = u64::try_from(grace.as_nanos()).unwrap_or(u64::MAX);
                out.u8(TEARDOWN).i32(*pid).u64(nanos);
            }
        }
        out.finish()
    }

    pub(crate) fn decode(payload: &[u8]) -> io::Result<Self> {
        let mut input = Reader(payload);
        let request = match input.u8()? {
            SPAWN => Request::Spawn {
                id: input.u64()?,
                argv: input.strings()?,
                envp: input.strings()?,
                cwd: match input.u8()? {
                    0 => None,
                    _ => Some(input.c_string()?),
                },
            },
            TEARDOWN => Request::Teardown {
                pid: input.i32()?,
                grace: Duration::from_nanos(input.u64()?),
            },
            _ => return Err(malformed()),
        };
        input.end()?;
        Ok(request)
    }
}

impl Event {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Writer::frame();
        match *self {
            Event::Ready => out.u8(READY),
            Event::Spawned { id, pid } => out.u8(SPAWNED).u64(id).i32(pid),
            Event::SpawnFailed { id, errno } => out.u8(SPAWN_FAILED).u64(id).i32(errno),
            Event::Exited { pid, status } => out.u8(EXITED).i32(pid).status(status),
            Event::Gone { pid, status } => match status {
                Some(status) => out.u8(GONE).i32(pid).u8(1).status(status),
                None => out.u8(GONE).i32(pid).u8(0),
            },
        };
        out.finish()
    }

    pub(crate) fn decode(payload: &[u8]) -> io::Result<Self> {
        let mut input = Reader(payload);
        let event = match input.u8()? {
            READY => Event::Ready,
            SPAWNED => Event::Spawned {
                id: input.u64()?,
                pid: input.i32()?,
            },
            SPAWN_FAILED => Event::SpawnFailed {
                id: input.u64()?,
                errno: input.i32()?,
            },
            EXITED => Event::Exited {
                pid: input.i32()?,
                status: input.status()?,
            },
            GONE => Event::Gone {
                pid: input.i32()?,
                status: match input.u8()? {
                    0 => None,
                    _ => Some(input.status()?),
                },
            },
            _ => return Err(malformed()),
        };
        input.end()?;
        Ok(event)
    }
}

fn malformed() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "malformed supervisor message")
}

/// Builds one frame; the length prefix is filled in by `finish`.
struct Writer(Vec<u8>);

impl Writer {
    fn frame() -> Self {
        Writer(vec![0; 4])
    }

    fn u8(&mut self, value: u8) -> &mut Self {
        self.0.push(value);
        self
    }

    fn i32(&mut self, value: i32) -> &mut Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    fn u64(&mut self, value: u64) -> &mut Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        // Strings come from a command line or an environment, far below 4 GiB.
        self.0
            .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.0.extend_from_slice(bytes);
        self
    }

    fn strings(&mut self, strings: &[CString]) -> &mut Self {
        self.0
            .extend_from_slice(&(strings.len() as u32).to_le_bytes());
        for string in strings {
            self.bytes(string.as_bytes());
        }
        self
    }

    fn status(&mut self, status: ExitStatus) -> &mut Self {
        match status {
            ExitStatus::Exited(code) => self.u8(0).i32(code),
            ExitStatus::Signaled(signal) => self.u8(1).i32(signal),
        }
    }

    fn finish(&mut self) -> Vec<u8> {
        let mut frame = std::mem::take(&mut self.0);
        let length = (frame.len() - 4) as u32;
        frame[..4].copy_from_slice(&length.to_le_bytes());
        frame
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, count: usize) -> io::Result<&[u8]> {
        if self.0.len() < count {
            return Err(malformed());
        }
        let (head, tail) = self.0.split_at(count);
        self.0 = tail;
        Ok(head)
    }

    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| malformed())?,
        ))
    }

    fn i32(&mut self) -> io::Result<i32> {
        Ok(i32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| malformed())?,
        ))
    }

    fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| malformed())?,
        ))
    }

    fn c_string(&mut self) -> io::Result<CString> {
        let length = self.u32()? as usize;
        CString::new(self.take(length)?.to_vec()).map_err(|_| malformed())
    }

    fn strings(&mut self) -> io::Result<Vec<CString>> {
        let count = self.u32()? as usize;
        (0..count).map(|_| self.c_string()).collect()
    }

    fn status(&mut self) -> io::Result<ExitStatus> {
        Ok(match self.u8()? {
            0 => ExitStatus::Exited(self.i32()?),
            _ => ExitStatus::Signaled(self.i32()?),
        })
    }

    fn end(&self) -> io::Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(malformed())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_their_encoding() {
        let spawn = Request::Spawn {
            id: 7,
            argv: vec![c"sh".into(), c"-c".into(), c"true".into()],
            envp: vec![c"A=1".into()],
            cwd: Some(c"/tmp".into()),
        };
        let frame = spawn.encode();
        assert_eq!(frame[..4], ((frame.len() - 4) as u32).to_le_bytes());
        let Request::Spawn {
            id,
            argv,
            envp,
            cwd,
        } = Request::decode(&frame[4..]).unwrap()
        else {
            panic!("not a spawn")
        };
        assert_eq!((id, argv.len(), envp.len()), (7, 3, 1));
        assert_eq!(cwd.as_deref(), Some(c"/tmp"));
        let events = [
            Event::Ready,
            Event::Spawned { id: 1, pid: 42 },
            Event::SpawnFailed {
                id: 2,
                errno: libc::ENOENT,
            },
            Event::Exited {
                pid: 42,
                status: ExitStatus::Signaled(15),
            },
            Event::Gone {
                pid: 42,
                status: None,
            },
            Event::Gone {
                pid: 42,
                status: Some(ExitStatus::Exited(3)),
            },
        ];
        for event in events {
            assert_eq!(Event::decode(&event.encode()[4..]).unwrap(), event);
        }
        assert!(Event::decode(&[GONE, 1]).is_err());
    }
}
