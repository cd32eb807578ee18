//! Request digests: SHA-256 of a canonical request text, as lowercase hex. Every part is
//! prefixed with its UTF-8 byte length, so distinct requests never share a text. The framing
//! exists only here: an Agent's text is built from the engine's plan plus the parts only JS
//! holds ([`agent_digest`], [`AgentRequest::extra`]), a callable Tool's from its three parts
//! ([`tool_digest`]); the facade (lib/journal/digest.js) hands over plain parts, never
//! framed text.

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

/// What an Agent digest covers (docs/JOURNAL.md). `extra` is what only JS holds, as JSON
/// `{"tools":[<input schema JSON text> | null, …],"output":[<type>, <schema JSON text>] | null}`
/// (`null` for a Tool with the fixed Loop state schema), or empty for an Agent with neither
/// Tools nor structured output.
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

    /// The JS-held parts of an Agent request (see [`AgentRequest::extra`]): `0:;` when there
    /// are none (the plain Agent's text is unchanged), else `x<n>;` and each Tool schema as a
    /// part (`-;` for the Loop state Tool), then `o` with the output type and schema as parts.
    /// Text that is not the documented JSON is hashed as one part, so it still decides.
    fn extra(&mut self, extra: &str) {
        if extra.is_empty() {
            self.raw("0:;");
            return;
        }
        let Ok(parsed) = serde_json::from_str::<serde_json::Value>(extra) else {
            self.part(extra);
            return;
        };
        let tools = parsed["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        self.0.push(b'x');
        self.number(tools.len());
        self.0.push(b';');
        for tool in tools {
            match tool.as_str() {
                Some(schema) => self.part(schema),
                None => self.raw("-;"),
            }
        }
        if let Some([kind, schema]) = parsed["output"].as_array().map(Vec::as_slice) {
            self.0.push(b'o');
            self.part(kind.as_str().unwrap_or(""));
            self.part(schema.as_str().unwrap_or(""));
        }
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
        text.extra(request.extra);
        Sha256::digest(buffer.as_slice()).into()
    })
}

/// The SHA-256 hex digest of a callable Tool call from a component: the Tool's name, its
/// input schema's JSON text and the input snapshot's JSON text.
pub fn tool_digest(name: &str, input_schema: &str, input: &str) -> String {
    BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        buffer.clear();
        let mut text = Canonical(&mut buffer);
        text.raw("tool;");
        text.part(name);
        text.part(input_schema);
        text.part(input);
        hex(&Sha256::digest(buffer.as_slice()))
    })
}

/// The SHA-256 hex digest of an Agent request (the journal's `digest` of an Agent entry).
pub fn agent_digest(request: &AgentRequest<'_>) -> String {
    hex(&agent_digest_raw(request))
}

#[cfg(test)]
mod tests {
    use super::{
        agent_digest, agent_digest_raw, digest, hex, parse_hex, tool_digest, AgentRequest,
    };

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
            extra: r#"{"tools":["{}"],"output":null}"#,
            ..request("x", &none, &[])
        };
        assert_ne!(
            agent_digest(&extra),
            agent_digest(&request("x", &none, &[]))
        );
    }

    #[test]
    fn lengths_are_utf8_bytes() {
        // "é" is one UTF-16 unit and two UTF-8 bytes: the framing counts bytes.
        assert_eq!(
            tool_digest("t", "null", "\"é\""),
            digest("tool;1:t;4:null;4:\"é\";")
        );
    }

    #[test]
    fn js_held_parts_are_framed_here() {
        let none: Vec<String> = vec![];
        let with = |extra| AgentRequest {
            extra,
            ..request("x", &none, &[])
        };
        let plain = "agent2;1:p;-;1:x;0:;f0;t0;m0;s0;";
        assert_eq!(agent_digest(&with("")), digest(&format!("{plain}0:;")));
        assert_eq!(
            agent_digest(&with(
                r#"{"tools":["{}",null],"output":["object","{\"a\":1}"]}"#
            )),
            digest(&format!("{plain}x2;2:{{}};-;o6:object;7:{{\"a\":1}};"))
        );
        // A schema whose text looks like framing cannot collide with two schemas.
        assert_ne!(
            agent_digest(&with(r#"{"tools":["1:a;1:b"],"output":null}"#)),
            agent_digest(&with(r#"{"tools":["a","b"],"output":null}"#))
        );
    }
}
