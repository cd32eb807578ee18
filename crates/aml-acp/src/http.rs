//! The few bytes of HTTP/1.1 the MCP bridge needs: a request head (bounded), a body with
//! `Content-Length` (bounded), and a response with a length. Keep-alive is supported
//! because MCP clients (fetch) reuse connections. Nothing here is general-purpose.

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
    /// The request is unusable; answer with this status and close.
    Bad(u16),
}

/// Takes one whole request off the front of `buffer`, or `None` while more bytes are needed
/// (sans-IO: the JS-thread bridge, `bridge_loop.rs`, and the Sandbox MCP relay feed it).
pub fn parse_request(
    buffer: &mut Vec<u8>,
    body_limit: usize,
) -> Result<Option<Request>, ReadError> {
    let Some(head_end) = memchr::memmem::find(buffer, b"\r\n\r\n") else {
        if buffer.len() > HEAD_LIMIT {
            return Err(ReadError::Bad(431));
        }
        return Ok(None);
    };
    if head_end > HEAD_LIMIT {
        return Err(ReadError::Bad(431));
    }
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
    let body_start = head_end + 4;
    if buffer.len() < body_start + length {
        return Ok(None);
    }
    let body = buffer[body_start..body_start + length].to_vec();
    buffer.drain(..body_start + length);
    Ok(Some(Request {
        method,
        path,
        authorization,
        body,
        close,
    }))
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

/// A whole response, head and body in one buffer; `body` is JSON when non-empty.
pub fn response(status: u16, body: &[u8], extra: &str) -> Vec<u8> {
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
    let mut message = head.into_bytes();
    message.extend_from_slice(body);
    message
}
