//! A trace record in the run's events file: the compact array of the record-sink protocol
//! (fields and order: `aml_engine::TraceRecord::compact_fields`), which the studio page reads.
//! The sensitive attributes are written only for a run recorded with content (docs/STUDIO.md
//! "Content policy").
//!
//! Written by hand rather than through serde (the recorder's writer formats every record of
//! every recorded run, from the hand-over form of handover.rs; serde_json's generic path
//! cost about 300 ns a record). Times (`at`, `durationMs`) are written in milliseconds with
//! microsecond precision, which is what a timeline can show.

use std::io::Write;

use aml_engine::{AttrValue, SpanId};

/// Milliseconds to the microsecond (`at` and durations are never negative).
pub(crate) fn time(out: &mut Vec<u8>, ms: f64) {
    if !ms.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    // Times are far below 2^53 µs (285 years); the cast saturates beyond.
    #[allow(clippy::cast_possible_truncation)]
    let micros = (ms * 1000.0).round() as i64;
    if micros < 0 {
        out.push(b'-');
    }
    let micros = micros.unsigned_abs();
    digits(out, micros / 1000);
    let fraction = micros % 1000;
    if fraction != 0 {
        out.push(b'.');
        let three = [fraction / 100, fraction / 10 % 10, fraction % 10];
        let kept = if three[2] != 0 {
            3
        } else if three[1] != 0 {
            2
        } else {
            1
        };
        // Each is a single decimal digit.
        #[allow(clippy::cast_possible_truncation)]
        out.extend(three[..kept].iter().map(|d| b'0' + *d as u8));
    }
}

/// `n` in decimal (itoa: two digits a step, without the formatting machinery).
fn digits(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

pub(crate) fn span(out: &mut Vec<u8>, id: SpanId) {
    let (prefix, n): (&[u8], u64) = match id {
        SpanId::Trace(n) => (b"\"trace-", n),
        SpanId::Span(n) => (b"\"span-", n),
    };
    out.extend_from_slice(prefix);
    digits(out, n);
    out.push(b'"');
}

/// `text` as a JSON string, escaped as `JSON.stringify` escapes it.
pub(crate) fn string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    // Most texts (keys, names, ids) need no escape: one branch-free scan the compiler
    // vectorizes, then one copy, instead of a match per byte.
    let plain = !bytes.iter().fold(false, |any, &b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if plain {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..at]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.extend_from_slice(escape);
        }
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

pub(crate) fn number(out: &mut Vec<u8>, n: f64) {
    if !n.is_finite() {
        // JSON.stringify writes NaN and the infinities as null.
        out.extend_from_slice(b"null");
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        // An exact integer (counts, sizes): written without a fraction, as JS writes it.
        if n < 0.0 {
            out.push(b'-');
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        digits(out, n.abs() as u64);
    } else {
        // Rust's shortest round-trip form; never an exponent, which JSON allows either way.
        let _ = write!(out, "{n}");
    }
}

/// An attribute value as JSON.
pub(crate) fn value(out: &mut Vec<u8>, value: &AttrValue) {
    match value {
        AttrValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        AttrValue::Number(n) => number(out, *n),
        AttrValue::Text(text) => string(out, text),
        AttrValue::List(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                string(out, item);
            }
            out.push(b']');
        }
        // Rare (an Agent's reported tokens): serde's form of the public object.
        AttrValue::Usage(usage) => {
            let _ = serde_json::to_writer(&mut *out, usage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_json_whether_or_not_they_need_it() {
        let mut texts: Vec<String> = (0u8..0x80).map(|b| format!("a{}b", b as char)).collect();
        texts.extend(["plain key".into(), String::new(), "é ü \u{2028}".into()]);
        for text in texts {
            let mut out = Vec::new();
            string(&mut out, &text);
            let parsed: String = serde_json::from_slice(&out).unwrap();
            assert_eq!(parsed, text);
        }
    }

    #[test]
    fn times_keep_microseconds_and_drop_trailing_zeros() {
        let cases = [
            (437.316711, "437.317"),
            (12.5, "12.5"),
            (3.0, "3"),
            (0.0004, "0"),
        ];
        for (ms, text) in cases {
            let mut out = Vec::new();
            time(&mut out, ms);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }
}
