//! The few bytes of HTTP/1.1 the MCP bridge needs: a request head (bounded), a body with
//! `Content-Length` (bounded), and a response with a length. Keep-alive is supported
//! because MCP clients (fetch) reuse connections. Nothing here is general-purpose.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest accepted request head.
const HEAD_LIMIT: usize = 64 * 1024;

pub struct Request {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub body: Vec<u8>,
    pub close: bool,
}

pub enum ReadError {
    /// The peer closed the connection between requests.
    Closed,
    /// The request is unusable; answer with this status and close.
    Bad(u16),
    Io,
}

/// Reads one request; `buffer` carries bytes read past the previous request.
pub async fn read_request<R: AsyncRead + Unpin>(
    stream: &mut R,
    buffer: &mut Vec<u8>,
    body_limit: usize,
) -> Result<Request, ReadError> {
    let head_end = loop {
        if let Some(end) = memchr::memmem::find(buffer, b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > HEAD_LIMIT {
            return Err(ReadError::Bad(431));
        }
        let mut chunk = [0u8; 8192];
        let read = stream.read(&mut chunk).await.map_err(|_| ReadError::Io)?;
        if read == 0 {
            return Err(if buffer.is_empty() {
                ReadError::Closed
            } else {
                ReadError::Bad(400)
            });
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = std::str::from_utf8(&buffer[..head_end]).map_err(|_| ReadError::Bad(400))?;
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target)) = (start.next(), start.next()) else {
        return Err(ReadError::Bad(400));
    };
    let path = target.split('?').next().unwrap_or_default().to_owned();
    let method = method.to_owned();
    let mut length = 0usize;
    let mut authorization = None;
    let mut close = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Bad(400));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().map_err(|_| ReadError::Bad(400))?;
        } else if name.eq_ignore_ascii_case("authorization") {
            authorization = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked bodies are not needed by MCP clients; refuse rather than misread.
            return Err(ReadError::Bad(411));
        } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close") {
            close = true;
        }
    }
    if length > body_limit {
        return Err(ReadError::Bad(413));
    }
    buffer.drain(..head_end + 4);
    while buffer.len() < length {
        let mut chunk = vec![0u8; (length - buffer.len()).min(64 * 1024)];
        let read = stream.read(&mut chunk).await.map_err(|_| ReadError::Io)?;
        if read == 0 {
            return Err(ReadError::Bad(400));
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = buffer.drain(..length).collect();
    Ok(Request {
        method,
        path,
        authorization,
        body,
        close,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    }
}

/// Writes a response; `body` is JSON when non-empty.
pub async fn respond<W: AsyncWrite + Unpin>(
    stream: &mut W,
    status: u16,
    body: &[u8],
    extra: &str,
) -> io::Result<()> {
    let kind = if body.is_empty() {
        ""
    } else {
        "Content-Type: application/json\r\n"
    };
    let head = format!(
        "HTTP/1.1 {status} {}\r\n{kind}{extra}Content-Length: {}\r\n\r\n",
        reason(status),
        body.len()
    );
    // One write: a head and body sent separately would meet Nagle and a delayed ACK (40 ms).
    let mut message = head.into_bytes();
    message.extend_from_slice(body);
    stream.write_all(&message).await?;
    stream.flush().await
}
