//! The host ↔ supervisor socket: a `SOCK_STREAM` Unix socket pair carrying length-prefixed
//! frames (`wire.rs`), with descriptors passed as `SCM_RIGHTS`. Every `unsafe` of the
//! supervisor lives here.
//!
//! A stream rather than `SOCK_SEQPACKET`: a spawn request holds a whole command line and
//! environment, which may exceed a datagram's size limit. Each side has one reader, and every
//! writer sends a frame whole under a lock, so frames never interleave and descriptors arrive
//! with (before the end of) the frame they belong to.

use std::collections::VecDeque;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;

/// Descriptors one `recvmsg` accepts; a frame carries at most three.
const MAX_FDS: usize = 8;

/// A connected pair, both ends CLOEXEC.
pub(crate) fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid out-array of two ints.
    if unsafe { libc::socketpair(libc::AF_UNIX, cloexec::SOCKET_KIND, 0, fds.as_mut_ptr()) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair returned two fresh descriptors that nothing else owns.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    if !cloexec::ATOMIC {
        set_cloexec(pair.0.as_raw_fd())?;
        set_cloexec(pair.1.as_raw_fd())?;
    }
    Ok(pair)
}

/// Whether the kernel sets CLOEXEC in the same call that creates a descriptor (`SOCK_CLOEXEC`,
/// `MSG_CMSG_CLOEXEC`); every Unix we build for has both but Apple's. Darwin has neither: there the flag is set right after, and a child
/// started by another thread in between may inherit the descriptor. The only such children are
/// the ones the supervisor starts itself (its other thread just reads this socket), so the
/// window can only delay the EOF that tells a supervisor its host is gone, never leak data.
#[cfg(not(target_vendor = "apple"))]
mod cloexec {
    pub(super) const ATOMIC: bool = true;
    pub(super) const SOCKET_KIND: libc::c_int = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    pub(super) const RECEIVE_FLAGS: libc::c_int = libc::MSG_CMSG_CLOEXEC;
}

#[cfg(target_vendor = "apple")]
mod cloexec {
    pub(super) const ATOMIC: bool = false;
    pub(super) const SOCKET_KIND: libc::c_int = libc::SOCK_STREAM;
    pub(super) const RECEIVE_FLAGS: libc::c_int = 0;
}

fn set_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own; F_SETFD takes an int flag set.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Ends our direction of the stream: the peer reads EOF, while frames it still sends reach us.
pub(crate) fn shut_writes(socket: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: `socket` is a valid descriptor for the duration of the call.
    if unsafe { libc::shutdown(socket.as_raw_fd(), libc::SHUT_WR) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `frame` whole, with `fds` attached to its first byte. Blocking; `MSG_NOSIGNAL` turns a
/// vanished peer into `EPIPE` instead of a SIGPIPE for the host.
pub(crate) fn send_frame(socket: BorrowedFd<'_>, frame: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut sent = 0;
    let mut fds = fds;
    while sent < frame.len() {
        let rest = &frame[sent..];
        let mut iov = libc::iovec {
            iov_base: rest.as_ptr().cast_mut().cast(),
            iov_len: rest.len(),
        };
        let mut control = [0u8; control_len(MAX_FDS)];
        // SAFETY: msghdr is plain data; all-zero is "no name, no control".
        let mut message: libc::msghdr = unsafe { zeroed() };
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        if !fds.is_empty() {
            let fds_len = fds.len().min(MAX_FDS) * size_of::<RawFd>();
            message.msg_control = control.as_mut_ptr().cast();
            // SAFETY: CMSG_SPACE only computes a size.
            message.msg_controllen = unsafe { libc::CMSG_SPACE(fds_len as u32) } as _;
            // SAFETY: the control buffer is CMSG_SPACE(fds_len) long (checked by control_len),
            // so the first header and its data fit; CMSG_DATA points inside it.
            unsafe {
                let header = libc::CMSG_FIRSTHDR(&message);
                (*header).cmsg_level = libc::SOL_SOCKET;
                (*header).cmsg_type = libc::SCM_RIGHTS;
                (*header).cmsg_len = libc::CMSG_LEN(fds_len as u32) as _;
                ptr::copy_nonoverlapping(
                    fds.as_ptr().cast::<u8>(),
                    libc::CMSG_DATA(header),
                    fds_len,
                );
            }
        }
        // SAFETY: `message` points at `iov` and `control`, both alive for the call.
        let written = unsafe { libc::sendmsg(socket.as_raw_fd(), &message, libc::MSG_NOSIGNAL) };
        if written < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        fds = &[];
        sent += written as usize;
    }
    Ok(())
}

/// `CMSG_SPACE` for `count` descriptors, as a constant for the buffer's length. Checked against
/// libc's own macro in the tests.
const fn control_len(count: usize) -> usize {
    let align = size_of::<usize>();
    let header = size_of::<libc::cmsghdr>().div_ceil(align) * align;
    header + (count * size_of::<RawFd>()).div_ceil(align) * align
}

/// Blocking reader of frames and the descriptors that came with them.
pub(crate) struct FrameReader {
    socket: OwnedFd,
    buffer: Vec<u8>,
    fds: VecDeque<OwnedFd>,
}

impl FrameReader {
    pub(crate) fn new(socket: OwnedFd) -> Self {
        FrameReader {
            socket,
            buffer: Vec::new(),
            fds: VecDeque::new(),
        }
    }

    /// The next frame's payload; `None` once the peer closed its end.
    pub(crate) fn next(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(length) = self.buffer.get(..4) {
                let length = u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
                if self.buffer.len() >= 4 + length {
                    let payload = self.buffer[4..4 + length].to_vec();
                    self.buffer.drain(..4 + length);
                    return Ok(Some(payload));
                }
            }
            if self.receive()? == 0 {
                return Ok(None);
            }
        }
    }

    /// The oldest three descriptors received and not yet taken.
    pub(crate) fn take_fds(&mut self) -> Option<[OwnedFd; 3]> {
        if self.fds.len() < 3 {
            return None;
        }
        let mut next = || self.fds.pop_front().expect("three are queued");
        Some([next(), next(), next()])
    }

    fn receive(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 64 * 1024];
        let mut iov = libc::iovec {
            iov_base: chunk.as_mut_ptr().cast(),
            iov_len: chunk.len(),
        };
        let mut control = [0u8; control_len(MAX_FDS)];
        // SAFETY: msghdr is plain data; all-zero is "no name, no control".
        let mut message: libc::msghdr = unsafe { zeroed() };
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = control.len() as _;
        let read = loop {
            // SAFETY: `message` points at `iov` and `control`, both alive for the call. Received
            // descriptors are CLOEXEC at once where the kernel can (see `cloexec`), so no
            // concurrently started child inherits them.
            let read = unsafe {
                libc::recvmsg(
                    self.socket.as_raw_fd(),
                    &mut message,
                    cloexec::RECEIVE_FLAGS,
                )
            };
            if read >= 0 {
                break read as usize;
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        };
        // SAFETY: the kernel filled `control` with `msg_controllen` bytes of well-formed
        // headers; every SCM_RIGHTS payload is an array of fresh descriptors now ours.
        unsafe {
            let mut header = libc::CMSG_FIRSTHDR(&message);
            while !header.is_null() {
                if (*header).cmsg_level == libc::SOL_SOCKET
                    && (*header).cmsg_type == libc::SCM_RIGHTS
                {
                    let data = libc::CMSG_DATA(header);
                    let bytes = (*header).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                    for index in 0..bytes / size_of::<RawFd>() {
                        let fd = ptr::read_unaligned(data.cast::<RawFd>().add(index));
                        let fd = OwnedFd::from_raw_fd(fd);
                        if !cloexec::ATOMIC {
                            // Cannot fail on a descriptor we own; a failure would only widen
                            // the window described at `cloexec`, so it is not worth a lost fd.
                            let _ = set_cloexec(fd.as_raw_fd());
                        }
                        self.fds.push_back(fd);
                    }
                }
                header = libc::CMSG_NXTHDR(&message, header);
            }
        }
        self.buffer.extend_from_slice(&chunk[..read]);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn control_buffer_fits_the_descriptors() {
        let fds_len = (MAX_FDS * size_of::<RawFd>()) as u32;
        // SAFETY: CMSG_SPACE only computes a size.
        assert_eq!(control_len(MAX_FDS), unsafe { libc::CMSG_SPACE(fds_len) }
            as usize);
    }

    #[test]
    fn frames_and_descriptors_cross_in_order() {
        let (left, right) = socket_pair().unwrap();
        let (read, write) = io::pipe().unwrap();
        let fds = [read.as_raw_fd(), write.as_raw_fd(), read.as_raw_fd()];
        send_frame(left.as_fd(), &[2, 0, 0, 0, 7, 8], &fds).unwrap();
        let big = [vec![0u8; 4], vec![9u8; 300_000]].concat();
        let mut big_frame = big.clone();
        big_frame[..4].copy_from_slice(&300_000u32.to_le_bytes());
        let writer = std::thread::spawn(move || send_frame(left.as_fd(), &big_frame, &[]));
        let mut reader = FrameReader::new(right);
        assert_eq!(reader.next().unwrap().unwrap(), vec![7, 8]);
        assert!(reader.take_fds().is_some());
        assert_eq!(reader.next().unwrap().unwrap(), big[4..]);
        writer.join().unwrap().unwrap();
        assert_eq!(reader.next().unwrap(), None);
    }
}
