//! HTTP/1.1 over the daemon's Unix socket, just enough of it: a request with an optional
//! JSON body, a response read to the end (`Connection: close`, so no keep-alive state), a
//! chunked body decoded, and the upgrade `exec start` answers with (101, or 200 on old
//! daemons) after which the connection is the raw attach stream.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

use crate::error::DockerError;

/// Heads longer than this are not a Docker daemon talking.
const MAX_HEAD: usize = 64 * 1024;

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

async fn read_head<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
) -> Result<(u16, Vec<(String, String)>), DockerError> {
    let mut line = String::new();
    let mut total = reader.read_line(&mut line).await?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| DockerError::Protocol(format!("invalid status line {:?}", line.trim())))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        let read = reader.read_line(&mut line).await?;
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

/// One request on a fresh connection, read to the end.
pub async fn request(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
) -> Result<Response, DockerError> {
    let mut stream = connect(socket).await?;
    stream.write_all(&head(method, path, body, false)).await?;
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader).await?;
    let mut raw = Vec::new();
    match header(&headers, "content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(length) => {
            raw.resize(length, 0);
            reader.read_exact(&mut raw).await?;
        }
        None => {
            reader.read_to_end(&mut raw).await?;
        }
    }
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
pub async fn upgrade(socket: &Path, path: &str, body: &[u8]) -> Result<Upgraded, DockerError> {
    let mut stream = connect(socket).await?;
    stream
        .write_all(&head("POST", path, Some(body), true))
        .await?;
    let (read, writer) = stream.into_split();
    let mut reader = BufReader::new(read);
    let (status, headers) = read_head(&mut reader).await?;
    if status == 101 || status == 200 {
        return Ok(Upgraded { reader, writer });
    }
    let mut raw = Vec::new();
    reader.read_to_end(&mut raw).await?;
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
