//! The `page` answer of the journal object: binary frames of the stored entries as they are,
//! so neither side parses or re-serializes a page of large answers, and a stored value that is
//! not even JSON is one more frame the loader ignores (never a page it cannot read).
//!
//! Format: the next position as a big-endian u64 (all ones: no next page), then for each
//! entry a big-endian u32 length and that many bytes. Written by lib/durable/journal-object.js.

/// One page: the entries' bytes and where the next page starts.
pub struct Page<'a> {
    pub entries: Vec<&'a [u8]>,
    pub next: Option<u64>,
}

/// The page in `bytes`, or `None` when it is not one.
pub fn read_page(bytes: &[u8]) -> Option<Page<'_>> {
    let (head, mut rest) = bytes.split_at_checked(8)?;
    let next = u64::from_be_bytes(head.try_into().ok()?);
    let mut entries = Vec::new();
    while !rest.is_empty() {
        let (length, tail) = rest.split_at_checked(4)?;
        let length = u32::from_be_bytes(length.try_into().ok()?) as usize;
        let (entry, tail) = tail.split_at_checked(length)?;
        entries.push(entry);
        rest = tail;
    }
    Some(Page {
        entries,
        next: (next != u64::MAX).then_some(next),
    })
}
