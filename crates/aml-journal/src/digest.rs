//! Request digests: SHA-256 of a canonical request text, as lowercase hex. Every part is
//! length-prefixed, so distinct requests never share a text. An Agent's text is hashed here
//! from the engine's plan ([`agent_digest`]); a callable Tool's is built by the facade
//! (lib/journal-digest.js) and hashed by [`digest`].

use sha2::{Digest, Sha256};

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex(hash: &[u8]) -> String {
    let mut out = String::with_capacity(hash.len() * 2);
    for &byte in hash {
        out.push(HEX[(byte >> 4) as usize] as char);
        out.push(HEX[(byte & 15) as usize] as char);
    }
    out
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

/// Streams the canonical text into the hash without building it.
struct Canonical(Sha256);

impl Canonical {
    fn raw(&mut self, text: &str) {
        self.0.update(text.as_bytes());
    }

    /// `<byte length>:<text>;`
    fn part(&mut self, text: &str) {
        let mut length = itoa(text.len());
        length.push(':');
        self.raw(&length);
        self.raw(text);
        self.raw(";");
    }

    /// `<tag><count>;`, then each item as a part.
    fn list(&mut self, tag: char, items: impl ExactSizeIterator<Item = impl AsRef<str>>) {
        let mut head = String::new();
        head.push(tag);
        head.push_str(&itoa(items.len()));
        head.push(';');
        self.raw(&head);
        for item in items {
            self.part(item.as_ref());
        }
    }
}

fn itoa(n: usize) -> String {
    n.to_string()
}

/// The SHA-256 hex digest of an Agent request (the journal's `digest` of an Agent entry).
pub fn agent_digest(request: &AgentRequest<'_>) -> String {
    let mut text = Canonical(Sha256::new());
    text.raw("agent2;");
    text.part(request.provider);
    match request.model {
        Some(model) => text.part(model),
        None => text.raw("-;"),
    }
    text.part(request.prompt);
    text.part(request.system);
    text.list('f', request.follow_ups.iter());
    text.list('t', request.tools.iter());
    text.list('m', request.mcp_servers.iter());
    text.list('s', request.skills.iter());
    text.part(request.extra);
    hex(&text.0.finalize())
}

#[cfg(test)]
mod tests {
    use super::{agent_digest, digest, AgentRequest};

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
