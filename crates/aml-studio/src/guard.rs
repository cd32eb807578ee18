//! The two checks every request passes before routing: Host (403) and token (401).

use hyper::header::HOST;
use hyper::Request;

/// Whether the `Host` header names this server: `127.0.0.1:<port>` or `localhost:<port>`.
/// A DNS-rebinding attack reaches 127.0.0.1 under the attacker's host name, so any other
/// name is refused even with a correct token.
pub(crate) fn host_allowed<B>(request: &Request<B>, port: u16) -> bool {
    let Some(host) = request.headers().get(HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let port = port.to_string();
    ["127.0.0.1", "localhost"].iter().any(|name| {
        host.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|p| p == port)
    })
}

/// The token a request carries: header `x-aml-token`, else query parameter `token`.
pub(crate) fn request_token<B>(request: &Request<B>) -> Option<String> {
    if let Some(value) = request
        .headers()
        .get("x-aml-token")
        .and_then(|h| h.to_str().ok())
    {
        return Some(value.to_string());
    }
    query_param(request.uri().query().unwrap_or(""), "token")
}

/// The first value of `name` in a query string (percent-decoding `%XX` and `+`).
pub(crate) fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then(|| percent_decode(value))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(text.get(i + 1..i + 3).unwrap_or(""), 16) {
                    Ok(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Compares in time independent of where the first difference is (the token is a secret).
pub(crate) fn token_matches(given: Option<&str>, expected: &str) -> bool {
    let Some(given) = given else { return false };
    if given.len() != expected.len() {
        return false;
    }
    given
        .bytes()
        .zip(expected.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_host(host: &str) -> Request<()> {
        Request::builder()
            .uri("/")
            .header(HOST, host)
            .body(())
            .unwrap()
    }

    #[test]
    fn only_loopback_names_with_our_port_pass() {
        assert!(host_allowed(&with_host("127.0.0.1:4000"), 4000));
        assert!(host_allowed(&with_host("localhost:4000"), 4000));
        for host in [
            "evil.example:4000",
            "127.0.0.1:4001",
            "127.0.0.1",
            "localhost.evil:4000",
            "127.0.0.1:4000.evil",
        ] {
            assert!(!host_allowed(&with_host(host), 4000), "{host}");
        }
        assert!(!host_allowed(
            &Request::builder().uri("/").body(()).unwrap(),
            4000
        ));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(token_matches(Some("abc"), "abc"));
        assert!(!token_matches(Some("abd"), "abc"));
        assert!(!token_matches(Some("ab"), "abc"));
        assert!(!token_matches(None, "abc"));
    }

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(
            query_param("a=1&step=agent%3A0%2F1+x", "step").as_deref(),
            Some("agent:0/1 x")
        );
        assert_eq!(query_param("a=1", "token"), None);
    }
}
