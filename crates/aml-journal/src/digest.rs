//! Request digests: SHA-256 of a canonical request text, as lowercase hex. Every part is
//! length-prefixed, so distinct requests never share a text. An Agent's text is hashed here
//! from the engine's plan ([`agent_digest`]); a callable Tool's is built by the facade
//! (lib/journal/digest.js) and hashed by [`digest`].

use sha2::{Digest, Sha256};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A raw SHA-256 digest (the journal compares these; entries carry the hex form).
pub type Raw = [u8; 32];

/// The lowercase hex form of a raw digest.
pub fn hex(hash: &[u8]) -> String {
    let mut out = String::with_capacity(hash.len() * 2);
    for &byte in hash {
        out.push(HEX[(byte >> 4) as usize] as char);
        out.push(HEX[(byte & 15) as usize] as char);
    }
    out
}

/// The raw digest of a 64-character lowercase hex digest, else None (a digest written by
/// some other tool is then compared as text).
pub fn parse_hex(text: &str) -> Option<Raw> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

pub fn digest(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// What an Agent digest covers (docs/JOURNAL.md). `extra` is the facade's length-prefixed
/// text of what only JS holds: the granted Tools' input schemas and the output schema (empty
/// for a plain Agent without Tools).
pub struct AgentRequest<'a> {
    pub provider: &'a str,
    pub model: Option<&'a str>,
    pub prompt: &'a str,
    pub system: &'a str,
    pub follow_ups: &'a [String],
    pub tools: &'a [&'a str],
    pub mcp_servers: &'a [&'a str],
    pub skills: &'a [&'a str],
    pub extra: &'a str,
}

/// The canonical text, built in one buffer and hashed once: one hash update per part cost
/// more than the hashing itself for a short request (one or two SHA-256 blocks).
struct Canonical<'a>(&'a mut Vec<u8>);

impl Canonical<'_> {
    fn raw(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
    }

    fn number(&mut self, n: usize) {
        self.0
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// `<byte length>:<text>;`
    fn part(&mut self, text: &str) {
        self.number(text.len());
        self.0.push(b':');
        self.raw(text);
        self.0.push(b';');
    }

    /// `<tag><count>;`, then each item as a part.
    fn list(&mut self, tag: u8, items: impl ExactSizeIterator<Item = impl AsRef<str>>) {
        self.0.push(tag);
        self.number(items.len());
        self.0.push(b';');
        for item in items {
            self.part(item.as_ref());
        }
    }
}

thread_local! {
    /// The canonical text buffer, reused (digests are computed on the JS thread).
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The raw SHA-256 digest of an Agent request.
pub fn agent_digest_raw(request: &AgentRequest<'_>) -> Raw {
    BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        buffer.clear();
        let mut text = Canonical(&mut buffer);
        text.raw("agent2;");
        text.part(request.provider);
        match request.model {
            Some(model) => text.part(model),
            None => text.raw("-;"),
        }
        text.part(request.prompt);
        text.part(request.system);
        if request.follow_ups.is_empty()
            && request.tools.is_empty()
            && request.mcp_servers.is_empty()
            && request.skills.is_empty()
        {
            // The plain Agent's four empty lists, as `list` writes them.
            text.raw("f0;t0;m0;s0;");
        } else {
            text.list(b'f', request.follow_ups.iter());
            text.list(b't', request.tools.iter());
            text.list(b'm', request.mcp_servers.iter());
            text.list(b's', request.skills.iter());
        }
        text.part(request.extra);
        Sha256::digest(buffer.as_slice()).into()
    })
}

/// The SHA-256 hex digest of an Agent request (the journal's `digest` of an Agent entry).
pub fn agent_digest(request: &AgentRequest<'_>) -> String {
    hex(&agent_digest_raw(request))
}

#[cfg(test)]
mod tests {
    use super::{agent_digest, agent_digest_raw, digest, hex, parse_hex, AgentRequest};

    #[test]
    fn is_the_sha256_hex_of_the_text() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(digest("5:a\u{0}b"), digest("5:a\u{0}c"));
    }

    fn request<'a>(
        prompt: &'a str,
        follow_ups: &'a [String],
        tools: &'a [&'a str],
    ) -> AgentRequest<'a> {
        AgentRequest {
            provider: "p",
            model: None,
            prompt,
            system: "",
            follow_ups,
            tools,
            mcp_servers: &[],
            skills: &[],
            extra: "",
        }
    }

    #[test]
    fn an_agent_digest_is_the_hash_of_its_canonical_text() {
        let follow_ups = vec!["more".to_string()];
        let got = agent_digest(&request("hi", &follow_ups, &["t"]));
        assert_eq!(
            got,
            digest("agent2;1:p;-;2:hi;0:;f1;4:more;t1;1:t;m0;s0;0:;")
        );
    }

    #[test]
    fn hex_digests_parse_back_to_their_raw_form() {
        let raw = agent_digest_raw(&request("hi", &[], &[]));
        assert_eq!(parse_hex(&hex(&raw)), Some(raw));
        assert_eq!(parse_hex("abc"), None);
        assert_eq!(parse_hex(&"G".repeat(64)), None);
        assert_eq!(parse_hex(&"A".repeat(64)), None);
    }

    #[test]
    fn long_lengths_are_written_in_decimal() {
        let prompt = "x".repeat(1234);
        let got = agent_digest(&request(&prompt, &[], &[]));
        assert_eq!(
            got,
            digest(&format!("agent2;1:p;-;1234:{prompt};0:;f0;t0;m0;s0;0:;"))
        );
    }

    #[test]
    fn parts_cannot_run_into_each_other() {
        let none: Vec<String> = vec![];
        let a = agent_digest(&request("ab", &none, &[]));
        let b = agent_digest(&request("a", &["b".to_string()], &[]));
        assert_ne!(a, b);
        let with_model = AgentRequest {
            model: Some("-"),
            ..request("x", &none, &[])
        };
        assert_ne!(
            agent_digest(&with_model),
            agent_digest(&request("x", &none, &[]))
        );
        let extra = AgentRequest {
            extra: "1:x;",
            ..request("x", &none, &[])
        };
        assert_ne!(
            agent_digest(&extra),
            agent_digest(&request("x", &none, &[]))
        );
    }
}
