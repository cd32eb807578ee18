//! The multiplexed attach stream of a non-TTY exec: frames of an 8-byte header
//! (`[stream, 0, 0, 0, size u32 BE]`, stream 1 = stdout, 2 = stderr) and `size` bytes.

use tokio::io::{AsyncRead, AsyncReadExt};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Stdout,
    Stderr,
}

/// The next frame, or `None` at the end of the stream. A stream that ends inside a frame
/// is an error (the daemon closed mid-write).
pub async fn next_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<(Channel, Vec<u8>)>> {
    loop {
        let mut header = [0u8; 8];
        let mut filled = 0;
        while filled < header.len() {
            let read = reader.read(&mut header[filled..]).await?;
            if read == 0 {
                if filled == 0 {
                    return Ok(None);
                }
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            filled += read;
        }
        let size = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
        let mut payload = vec![0u8; size];
        reader.read_exact(&mut payload).await?;
        let channel = match header[0] {
            1 => Channel::Stdout,
            2 => Channel::Stderr,
            // Stream 0 (stdin echo) and unknown streams carry nothing for us.
            _ => continue,
        };
        if !payload.is_empty() {
            return Ok(Some((channel, payload)));
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
        let mut reader = bytes.as_slice();
        assert_eq!(
            next_frame(&mut reader).await.unwrap(),
            Some((Channel::Stdout, b"out".to_vec()))
        );
        assert_eq!(
            next_frame(&mut reader).await.unwrap(),
            Some((Channel::Stderr, b"err".to_vec()))
        );
        assert_eq!(next_frame(&mut reader).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_truncated_frame_is_an_error() {
        let bytes = frame(1, b"abcdef");
        let mut reader = &bytes[..10];
        assert!(next_frame(&mut reader).await.is_err());
    }
}
