//! JS text through the engine without loss. JS strings are UTF-16 and may hold lone
//! surrogates; the engine's text is Rust `String` (UTF-8), which cannot. A string appends its
//! exact characters (AML's text rules), so text entering the engine keeps every code unit:
//! a lone surrogate becomes [`ESC`] followed by a private-use character carrying the unit, and
//! a literal `ESC` is doubled. Text leaving for JS is decoded back.
//!
//! `ESC` is U+FDD0, a noncharacter, so real text almost never needs escaping, and both checks
//! are a byte scan of UTF-8 the binding already holds. Neither the escape nor the private-use
//! character is whitespace, so the engine's trimming and blank checks see the same text.

/// The escape character (a noncharacter, never assigned).
pub const ESC: char = '\u{FDD0}';
const ESC_UTF8: &[u8] = "\u{FDD0}".as_bytes();
// What V8 writes for a lone surrogate when it converts to UTF-8.
const REPLACEMENT_UTF8: &[u8] = "\u{FFFD}".as_bytes();
// Lone surrogate units 0xD800..=0xDFFF travel as U+E000..=U+E7FF after an ESC.
const CARRIER_BASE: u32 = 0xE000;
const SURROGATE_BASE: u32 = 0xD800;

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Whether UTF-8 read from a JS string may have lost a lone surrogate or holds an `ESC`: only
/// then must the string be read again as UTF-16 ([`encode_utf16`]).
pub fn needs_exact_read(utf8: &str) -> bool {
    let bytes = utf8.as_bytes();
    // Both sequences start with 0xEF: one cheap test rules out almost all text.
    bytes.contains(&0xEF) && (contains(bytes, REPLACEMENT_UTF8) || contains(bytes, ESC_UTF8))
}

/// Appends the JS string `units` to `out` in the engine's escaped form.
pub fn encode_utf16(units: &[u16], out: &mut String) {
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(ESC) => {
                out.push(ESC);
                out.push(ESC);
            }
            Ok(ch) => out.push(ch),
            Err(lone) => {
                let carrier =
                    CARRIER_BASE + (u32::from(lone.unpaired_surrogate()) - SURROGATE_BASE);
                out.push(ESC);
                out.push(char::from_u32(carrier).expect("the carrier range is private use"));
            }
        }
    }
}

/// Whether engine text holds escapes, i.e. must be decoded before it becomes a JS string.
pub fn needs_decode(text: &str) -> bool {
    contains(text.as_bytes(), ESC_UTF8)
}

/// Engine text as the exact JS string (UTF-16 code units).
pub fn decode_to_utf16(text: &str) -> Vec<u16> {
    let mut units = Vec::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch != ESC {
            let mut buffer = [0u16; 2];
            units.extend_from_slice(ch.encode_utf16(&mut buffer));
            continue;
        }
        match chars.next() {
            Some(ESC) | None => units.push(ESC as u16),
            Some(carrier) => {
                let code = u32::from(carrier);
                if (CARRIER_BASE..CARRIER_BASE + 0x800).contains(&code) {
                    units.push((code - CARRIER_BASE + SURROGATE_BASE) as u16);
                } else {
                    // Not produced by `encode_utf16`: keep both characters as they are.
                    units.push(ESC as u16);
                    let mut buffer = [0u16; 2];
                    units.extend_from_slice(carrier.encode_utf16(&mut buffer));
                }
            }
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(units: &[u16]) -> Vec<u16> {
        let mut engine = String::new();
        encode_utf16(units, &mut engine);
        decode_to_utf16(&engine)
    }

    #[test]
    fn lone_surrogates_and_the_escape_itself_survive_the_round_trip() {
        let samples: [&[u16]; 6] = [
            &[0xD800],
            &[0x61, 0xDC00, 0x62],
            &[0xDBFF, 0xDBFF, 0xDFFF],
            &[0xD83D, 0xDE00, 0xD800],
            &[0xFDD0, 0xE000, 0xFDD0, 0xFDD0],
            &[0xFFFD, 0x20, 0xDFFF],
        ];
        for units in samples {
            assert_eq!(round_trip(units), units, "{units:x?}");
        }
    }

    #[test]
    fn well_formed_text_is_unchanged_and_needs_no_second_read() {
        let text = "plain text, emoji 😀, CJK 漢字";
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut engine = String::new();
        encode_utf16(&units, &mut engine);
        assert_eq!(engine, text);
        assert!(!needs_exact_read(text));
        assert!(!needs_decode(text));
    }

    #[test]
    fn replacement_characters_and_escapes_trigger_the_exact_read() {
        assert!(needs_exact_read("a\u{FFFD}b"));
        assert!(needs_exact_read("\u{FDD0}"));
        assert!(!needs_exact_read("\u{FFFC}\u{FDD1}"));
    }

    #[test]
    fn escaped_text_is_not_whitespace_to_the_engine() {
        let mut engine = String::new();
        encode_utf16(&[0x20, 0xD800, 0x20], &mut engine);
        assert_eq!(aml_engine::js_trim(&engine).chars().count(), 2);
    }
}
