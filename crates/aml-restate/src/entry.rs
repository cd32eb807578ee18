//! The one shape of a stored journal entry and the journal's size bounds (docs/DURABLE.md).
//! The journal object (lib/durable/journal-object.js, through the binding) refuses a record
//! that breaks this rule, and the loader ignores a stored entry that breaks it: the same
//! function decides both, so nothing the object keeps can make a later load fail.

use serde::Deserialize;

/// The largest stored entry (its JSON), which is also the largest request a record sends.
/// An Agent answer of up to about 6 MiB fits: sealing adds a third for base64.
pub const MAX_ENTRY_BYTES: usize = 8 << 20;
/// The largest journal one run may record (the sum of its stored entries).
pub const MAX_JOURNAL_BYTES: u64 = 256 << 20;
/// About how much one page of a load carries: pages keep every answer small, whatever the
/// journal's size, and a load costs one request per page.
pub const PAGE_BYTES: usize = 4 << 20;
/// The longest step key and digest kept.
const MAX_KEY_BYTES: usize = 64 << 10;
const MAX_DIGEST_BYTES: usize = 1 << 10;

/// An entry as the journal object stores it: where it belongs, and its sealed content.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredEntry {
    pub key: String,
    pub digest: String,
    pub sealed: String,
}

/// Why `json` is not a storable entry, or `None` when it is.
pub fn entry_problem(json: &str) -> Option<String> {
    if json.len() > MAX_ENTRY_BYTES {
        return Some(format!(
            "AML Restate journal entries are at most {MAX_ENTRY_BYTES} bytes; this one is {}",
            json.len()
        ));
    }
    match serde_json::from_str::<StoredEntry>(json) {
        Err(_) => Some(
            "AML Restate journal entries must be { key, digest, sealed } records of strings"
                .to_owned(),
        ),
        Ok(entry) => shape_problem(&entry),
    }
}

fn shape_problem(entry: &StoredEntry) -> Option<String> {
    if entry.key.is_empty() || entry.key.len() > MAX_KEY_BYTES {
        return Some(format!(
            "AML Restate journal entry keys must have 1 to {MAX_KEY_BYTES} bytes"
        ));
    }
    if entry.digest.is_empty() || entry.digest.len() > MAX_DIGEST_BYTES {
        return Some(format!(
            "AML Restate journal entry digests must have 1 to {MAX_DIGEST_BYTES} bytes"
        ));
    }
    if entry.sealed.is_empty() {
        return Some("AML Restate journal entries must carry sealed content".to_owned());
    }
    None
}
