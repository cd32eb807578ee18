//! JavaScript's notion of whitespace (`String.prototype.trim`, `/\s/`), so texts the facade
//! used to check in JS keep exactly the same rules here.

/// Whether `c` is whitespace for JS `trim()` and `\s` (WhiteSpace and LineTerminator).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `text.trim()`.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_space)
}

/// `text.trimEnd()`.
pub fn js_trim_end(text: &str) -> &str {
    text.trim_end_matches(is_js_space)
}

/// `text.replace(/\s+/g, " ").trim()`.
pub fn collapse_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending = false;
    for c in text.chars() {
        if is_js_space(c) {
            pending = true;
        } else {
            if pending && !out.is_empty() {
                out.push(' ');
            }
            pending = false;
            out.push(c);
        }
    }
    out
}

/// `text.length`: UTF-16 code units.
pub fn js_length(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_collapses_like_js() {
        assert_eq!(js_trim("\u{FEFF}\u{A0} a b \u{3000}"), "a b");
        assert_eq!(js_trim("\u{85}x"), "\u{85}x");
        assert_eq!(js_trim_end("--- \r"), "---");
        assert_eq!(collapse_spaces("  a \n\t b\u{2028}c  "), "a b c");
        assert_eq!(collapse_spaces(" \n "), "");
        assert_eq!(js_length("a😀"), 3);
    }
}
