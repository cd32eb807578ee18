//! JavaScript's notion of whitespace (`String.prototype.trim`, `/\s/`) and length, shared by
//! every crate that must treat text exactly as the JS facade would. Rust's `str::trim`
//! differs: JS trims U+FEFF and does not trim U+0085.

/// Whether `c` is whitespace for JS `trim()` and `\s` (WhiteSpace and LineTerminator).
pub fn is_js_whitespace(c: char) -> bool {
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
    text.trim_matches(is_js_whitespace)
}

/// `text.trimEnd()`.
pub fn js_trim_end(text: &str) -> &str {
    text.trim_end_matches(is_js_whitespace)
}

/// `text.replace(/\s+/g, " ").trim()`.
pub fn collapse_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending = false;
    for c in text.chars() {
        if is_js_whitespace(c) {
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

/// `typeof v === "string" && v.length > 0 && v === v.trim()`.
pub fn is_normalized(value: &str) -> bool {
    !value.is_empty() && js_trim(value).len() == value.len()
}

/// A positive whole number of milliseconds written as text (surrounding white space
/// allowed), as the `AML_*_MS` environment settings are: `None` for anything else.
pub fn positive_millis(text: &str) -> Option<std::time::Duration> {
    js_trim(text)
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms > 0)
        .map(std::time::Duration::from_millis)
}

/// The environment setting `variable` read with [`positive_millis`]; `None` when it is unset
/// or not a positive integer (the caller's default applies).
pub fn env_millis(variable: &str) -> Option<std::time::Duration> {
    std::env::var(variable)
        .ok()
        .as_deref()
        .and_then(positive_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_millis_accepts_only_positive_integers() {
        use std::time::Duration;
        assert_eq!(positive_millis("250"), Some(Duration::from_millis(250)));
        assert_eq!(positive_millis(" 250\n"), Some(Duration::from_millis(250)));
        for bad in ["", "0", "-5", "1.5", "12ms", "abc", "18446744073709551616"] {
            assert_eq!(positive_millis(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn normalized_means_non_empty_and_trimmed() {
        assert!(is_normalized("a b"));
        assert!(!is_normalized(""));
        assert!(!is_normalized("\u{FEFF}a"));
        assert!(is_normalized("\u{85}a"));
    }

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
