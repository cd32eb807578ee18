//! HTTP/1.1 over the daemon's Unix socket, just enough of it: a request with an optional
//! JSON body, a response read to the end (`Connection: close`, so no keep-alive state), a
//! chunked body decoded, and the upgrade `exec start` answers with (101, or 200 on old
//! daemons) after which the connection is the raw attach stream.
//!
//! Bounded everywhere: a head line is capped before it grows, a declared `Content-Length`
//! is checked before anything is allocated, a body read to the end stops at [`MAX_BODY`],
//! and every connect, write and read of a request has an idle deadline ([`idle_timeout`]):
//! a daemon that goes silent fails the request instead of hanging it. A pull streams
//! progress for as long as the layers take, so the deadline is per read, not per request.

use std::future::Future;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

use crate::error::DockerError;

/// Heads longer than this are not a Docker daemon talking.
const MAX_HEAD: usize = 64 * 1024;
/// Largest response body read (inspect answers are KiB; a pull's progress stream of a large
/// image is a few MiB).
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// The default idle deadline of one request.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// How long the daemon may stay silent during one request: `AML_DOCKER_API_TIMEOUT_MS`
/// (a positive integer, read once), else [`DEFAULT_IDLE_TIMEOUT`].
pub fn idle_timeout() -> Duration {
    static IDLE: OnceLock<Duration> = OnceLock::new();
    *IDLE.get_or_init(|| {
        aml_text::env_millis("AML_DOCKER_API_TIMEOUT_MS").unwrap_or(DEFAULT_IDLE_TIMEOUT)
    })
}

/// `step` within the idle deadline, or [`DockerError::Timeout`] naming the request.
async fn within<T, E: Into<DockerError>>(
    what: &str,
    idle: Duration,
    step: impl Future<Output = Result<T, E>>,
) -> Result<T, DockerError> {
    match tokio::time::timeout(idle, step).await {
        Ok(result) => result.map_err(Into::into),
        Err(_) => Err(DockerError::Timeout {
            request: what.to_owned(),
            ms: idle.as_millis(),
        }),
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

async fn connect(socket: &Path) -> Result<UnixStream, DockerError> {
    UnixStream::connect(socket)
        .await
        .map_err(|source| DockerError::Connect {
            socket: socket.to_path_buf(),
            source,
        })
}

fn head(method: &str, path: &str, body: Option<&[u8]>, upgrade: bool) -> Vec<u8> {
    let mut text =
        format!("{method} {path} HTTP/1.1\r\nHost: docker\r\nUser-Agent: aml-jsx-sdk\r\n");
    if upgrade {
        text.push_str("Connection: Upgrade\r\nUpgrade: tcp\r\n");
    } else {
        text.push_str("Connection: close\r\n");
    }
    if let Some(body) = body {
        text.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    } else if method == "POST" {
        text.push_str("Content-Length: 0\r\n");
    }
    text.push_str("\r\n");
    let mut bytes = text.into_bytes();
    if let Some(body) = body {
        bytes.extend_from_slice(body);
    }
    bytes
}

/// One head line of at most `limit` bytes, read within the idle deadline.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut String,
    limit: usize,
    what: &str,
    idle: Duration,
) -> Result<usize, DockerError> {
    let mut limited = (&mut *reader).take(limit as u64 + 1);
    let read = within(what, idle, limited.read_line(line)).await?;
    if read > limit {
        return Err(DockerError::Protocol("truncated response head".into()));
    }
    Ok(read)
}

async fn read_head<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    what: &str,
    idle: Duration,
) -> Result<(u16, Vec<(String, String)>), DockerError> {
    let mut line = String::new();
    let mut total = read_line(reader, &mut line, MAX_HEAD, what, idle).await?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| DockerError::Protocol(format!("invalid status line {:?}", line.trim())))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        let read = read_line(
            reader,
            &mut line,
            MAX_HEAD - total.min(MAX_HEAD),
            what,
            idle,
        )
        .await?;
        total += read;
        if read == 0 || total > MAX_HEAD {
            return Err(DockerError::Protocol("truncated response head".into()));
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            return Ok((status, headers));
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            headers.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
}

/// Decodes a complete `Transfer-Encoding: chunked` body.
fn dechunk(raw: &[u8]) -> Result<Vec<u8>, DockerError> {
    let bad = || DockerError::Protocol("invalid chunked body".into());
    let mut out = Vec::new();
    let mut rest = raw;
    loop {
        let end = rest.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let size_text = std::str::from_utf8(&rest[..end]).map_err(|_| bad())?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad())?;
        rest = &rest[end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size + 2 {
            return Err(bad());
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// The daemon's `{"message": "…"}` of an error body, else the body text.
pub fn error_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
    }
    match serde_json::from_slice::<Message>(body) {
        Ok(parsed) => parsed.message,
        Err(_) => String::from_utf8_lossy(body).trim().to_string(),
    }
}

/// The rest of a response body: exactly `length` bytes when declared, else to the end; at
/// most [`MAX_BODY`], each read within the idle deadline.
async fn read_body<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    length: Option<usize>,
    what: &str,
    idle: Duration,
) -> Result<Vec<u8>, DockerError> {
    let too_large = || {
        DockerError::Protocol(format!(
            "the Docker daemon's answer to {what} exceeds {MAX_BODY} bytes"
        ))
    };
    if length.is_some_and(|length| length > MAX_BODY) {
        return Err(too_large());
    }
    let mut raw = Vec::with_capacity(length.unwrap_or(0));
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let want = match length {
            Some(length) if raw.len() >= length => return Ok(raw),
            Some(length) => (length - raw.len()).min(chunk.len()),
            None => chunk.len(),
        };
        let read = within(what, idle, reader.read(&mut chunk[..want])).await?;
        if read == 0 {
            return match length {
                Some(_) => Err(DockerError::Protocol("truncated response body".into())),
                None => Ok(raw),
            };
        }
        if raw.len() + read > MAX_BODY {
            return Err(too_large());
        }
        raw.extend_from_slice(&chunk[..read]);
    }
}

/// One request on a fresh connection, read to the end.
pub async fn request(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
) -> Result<Response, DockerError> {
    request_with(socket, method, path, body, idle_timeout()).await
}

/// [`request`] with an explicit idle deadline.
pub async fn request_with(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    idle: Duration,
) -> Result<Response, DockerError> {
    let what = format!("{method} {}", path.split('?').next().unwrap_or(path));
    let mut stream = within(&what, idle, connect(socket)).await?;
    within(
        &what,
        idle,
        stream.write_all(&head(method, path, body, false)),
    )
    .await?;
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader, &what, idle).await?;
    let length = match header(&headers, "content-length") {
        Some(value) => Some(
            value
                .parse::<usize>()
                .map_err(|_| DockerError::Protocol("invalid Content-Length".into()))?,
        ),
        None => None,
    };
    let raw = read_body(&mut reader, length, &what, idle).await?;
    let chunked =
        header(&headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(&raw)? } else { raw };
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// A success status, or the daemon's message as [`DockerError::Api`].
pub fn expect(response: Response, ok: &[u16]) -> Result<Response, DockerError> {
    if ok.contains(&response.status) {
        Ok(response)
    } else {
        Err(DockerError::Api {
            status: response.status,
            message: error_message(&response.body),
        })
    }
}

/// The attach stream of an upgraded connection: bytes already buffered after the head stay
/// in the reader.
pub struct Upgraded {
    pub reader: BufReader<OwnedReadHalf>,
    pub writer: OwnedWriteHalf,
}

/// A request whose success answer hands the connection over as a raw stream.
/// Only the way to the stream has the idle deadline: the stream itself is a process's output
/// and may be silent for as long as the process is.
pub async fn upgrade(socket: &Path, path: &str, body: &[u8]) -> Result<Upgraded, DockerError> {
    let idle = idle_timeout();
    let what = format!("POST {path}");
    let mut stream = within(&what, idle, connect(socket)).await?;
    within(
        &what,
        idle,
        stream.write_all(&head("POST", path, Some(body), true)),
    )
    .await?;
    let (read, writer) = stream.into_split();
    let mut reader = BufReader::new(read);
    let (status, headers) = read_head(&mut reader, &what, idle).await?;
    if status == 101 || status == 200 {
        return Ok(Upgraded { reader, writer });
    }
    let length = header(&headers, "content-length").and_then(|v| v.parse::<usize>().ok());
    let raw = read_body(&mut reader, length, &what, idle).await?;
    let chunked =
        header(&headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(&raw).unwrap_or(raw)
    } else {
        raw
    };
    Err(DockerError::Api {
        status,
        message: error_message(&body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dechunks_bodies() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert!(dechunk(b"5\r\nab").is_err());
    }

    #[test]
    fn error_messages_prefer_the_daemon_json() {
        assert_eq!(
            error_message(br#"{"message":"No such image: x"}"#),
            "No such image: x"
        );
        assert_eq!(error_message(b"page not found\n"), "page not found");
    }

    #[test]
    fn heads_name_the_body() {
        let text = String::from_utf8(head("POST", "/v1.41/x", Some(b"{}"), false)).unwrap();
        assert!(text.starts_with("POST /v1.41/x HTTP/1.1\r\n"));
        assert!(text.contains("Content-Length: 2\r\n"));
        assert!(text.ends_with("\r\n\r\n{}"));
    }
}
