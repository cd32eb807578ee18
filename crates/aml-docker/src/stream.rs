//! The multiplexed attach stream of a non-TTY exec: frames of an 8-byte header
//! (`[stream, 0, 0, 0, size u32 BE]`, stream 1 = stdout, 2 = stderr) and `size` bytes.

use tokio::io::{AsyncRead, AsyncReadExt};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Stdout,
    Stderr,
}

/// Largest piece of a frame held at once. Why: the frame header's length is the daemon's
/// word (up to 4 GiB); allocating it up front let one hostile frame take hundreds of MiB
/// before any output budget was checked. Pieces keep the allocation bounded, and the budget
/// is checked after each piece.
pub const MAX_PIECE: usize = 64 * 1024;

/// The multiplexed attach stream, read in pieces of at most [`MAX_PIECE`] bytes.
pub struct Frames<R> {
    reader: R,
    /// Bytes of the current frame not read yet, and where they go (`None`: skipped).
    left: usize,
    channel: Option<Channel>,
}

impl<R: AsyncRead + Unpin> Frames<R> {
    pub fn new(reader: R) -> Self {
        Frames {
            reader,
            left: 0,
            channel: None,
        }
    }

    /// The next piece of output, or `None` at the end of the stream. A stream that ends
    /// inside a frame is an error (the daemon closed mid-write).
    pub async fn next(&mut self) -> std::io::Result<Option<(Channel, Vec<u8>)>> {
        loop {
            if self.left == 0 {
                let mut header = [0u8; 8];
                let mut filled = 0;
                while filled < header.len() {
                    let read = self.reader.read(&mut header[filled..]).await?;
                    if read == 0 {
                        if filled == 0 {
                            return Ok(None);
                        }
                        return Err(std::io::ErrorKind::UnexpectedEof.into());
                    }
                    filled += read;
                }
                self.left =
                    u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
                self.channel = match header[0] {
                    1 => Some(Channel::Stdout),
                    2 => Some(Channel::Stderr),
                    // Stream 0 (stdin echo) and unknown streams carry nothing for us.
                    _ => None,
                };
                continue;
            }
            let mut piece = vec![0u8; self.left.min(MAX_PIECE)];
            self.reader.read_exact(&mut piece).await?;
            self.left -= piece.len();
            if let Some(channel) = self.channel {
                return Ok(Some((channel, piece)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(stream: u8, payload: &[u8]) -> Vec<u8> {
        let mut bytes = vec![stream, 0, 0, 0];
        bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    #[tokio::test]
    async fn splits_frames_by_channel() {
        let mut bytes = frame(1, b"out");
        bytes.extend(frame(0, b"ignored"));
        bytes.extend(frame(2, b"err"));
        let mut frames = Frames::new(bytes.as_slice());
        assert_eq!(
            frames.next().await.unwrap(),
            Some((Channel::Stdout, b"out".to_vec()))
        );
        assert_eq!(
            frames.next().await.unwrap(),
            Some((Channel::Stderr, b"err".to_vec()))
        );
        assert_eq!(frames.next().await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_truncated_frame_is_an_error() {
        let bytes = frame(1, b"abcdef");
        let mut frames = Frames::new(&bytes[..10]);
        assert!(frames.next().await.is_err());
    }

    /// A header claiming 4 GiB allocates one piece, not the claim: the stream ends first.
    #[tokio::test]
    async fn a_huge_frame_is_read_in_bounded_pieces() {
        let mut bytes = vec![1, 0, 0, 0];
        bytes.extend_from_slice(&u32::MAX.to_be_bytes());
        bytes.extend(vec![7u8; MAX_PIECE + 10]);
        let mut frames = Frames::new(bytes.as_slice());
        let (channel, first) = frames.next().await.unwrap().unwrap();
        assert_eq!((channel, first.len()), (Channel::Stdout, MAX_PIECE));
        // The rest of the claimed frame never arrives.
        assert!(frames.next().await.is_err());
    }
}
