//! A bounded tail of the agent's stderr: the last `limit` bytes, for error messages. A
//! stderr flood costs amortised O(bytes) copying and never more than `2 × limit` of memory.

use std::sync::Mutex;

use crate::transport::Output;

pub struct Tail {
    limit: usize,
    bytes: Vec<u8>,
}

impl Tail {
    pub fn new(limit: usize) -> Self {
        Tail {
            limit,
            bytes: Vec::new(),
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.len() >= self.limit {
            self.bytes.clear();
            self.bytes
                .extend_from_slice(&chunk[chunk.len() - self.limit..]);
            return;
        }
        self.bytes.extend_from_slice(chunk);
        // Compact only once the buffer is twice the limit, so each byte moves at most once.
        if self.bytes.len() > 2 * self.limit {
            let excess = self.bytes.len() - self.limit;
            self.bytes.drain(..excess);
        }
    }

    /// Reads `stderr` to its end (or first read error) into `tail`: the agent's and the
    /// relay's stderr alike.
    pub async fn collect(mut stderr: Output, tail: &Mutex<Tail>) {
        while let Ok(Some(chunk)) = stderr.read_chunk().await {
            tail.lock().unwrap_or_else(|p| p.into_inner()).push(&chunk);
        }
    }

    /// The tail as text: lossy UTF-8 (a cut may split a character), trimmed.
    pub fn text(&self) -> String {
        let start = self.bytes.len().saturating_sub(self.limit);
        String::from_utf8_lossy(&self.bytes[start..])
            .trim()
            .to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::Tail;

    #[test]
    fn keeps_only_the_last_bytes() {
        let mut tail = Tail::new(5);
        tail.push(b"  abc");
        tail.push(b"defgh");
        assert_eq!(tail.text(), "defgh");
        tail.push(b"0123456789");
        assert_eq!(tail.text(), "56789");
        tail.push(b"x ");
        assert_eq!(tail.text(), "789x");
        for _ in 0..100 {
            tail.push(b"ab");
        }
        assert!(tail.bytes.len() <= 10);
        assert_eq!(tail.text(), "babab");
    }
}
