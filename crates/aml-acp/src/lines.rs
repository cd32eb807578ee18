//! Newline-delimited framing with a hard line limit, sans-IO.
//!
//! ACP over stdio is one JSON-RPC message per line. A line that grows past the limit is a
//! fatal protocol error rather than something to skip: skipping could silently drop the very
//! response a turn waits for, and buffering it would let one agent grow our memory without
//! bound. Bytes are kept only for the current partial line, so memory is at most
//! `limit + one read chunk`.

/// The partial-line buffer of one stream.
pub struct LineSplitter {
    limit: usize,
    /// Bytes of a line whose newline has not arrived yet.
    partial: Vec<u8>,
    /// The chunk being split, and how far into it we are.
    chunk: Vec<u8>,
    pos: usize,
    /// `partial` was handed out as a complete line and must be cleared on the next call.
    consumed: bool,
}

/// A line longer than the limit arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversize {
    pub limit: usize,
}

impl LineSplitter {
    pub fn new(limit: usize) -> Self {
        LineSplitter {
            limit,
            partial: Vec::new(),
            chunk: Vec::new(),
            pos: 0,
            consumed: false,
        }
    }

    /// Hands the splitter the next chunk. Call only after [`next_line`](Self::next_line)
    /// returned `Ok(None)`.
    pub fn feed(&mut self, chunk: Vec<u8>) {
        debug_assert!(self.pos >= self.chunk.len());
        self.chunk = chunk;
        self.pos = 0;
    }

    /// The next complete, non-empty line (without `\n` or a trailing `\r`), `Ok(None)` when
    /// the current chunk is used up, or `Err` once a line exceeds the limit.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, Oversize> {
        if self.consumed {
            self.partial.clear();
            self.consumed = false;
        }
        loop {
            let rest = &self.chunk[self.pos..];
            let Some(newline) = memchr::memchr(b'\n', rest) else {
                if self.partial.len() + rest.len() > self.limit {
                    return Err(Oversize { limit: self.limit });
                }
                self.partial.extend_from_slice(rest);
                self.pos = self.chunk.len();
                return Ok(None);
            };
            let start = self.pos;
            self.pos += newline + 1;
            if self.partial.len() + newline > self.limit {
                return Err(Oversize { limit: self.limit });
            }
            if self.partial.is_empty() {
                if trim_cr(&self.chunk[start..start + newline]).is_empty() {
                    continue;
                }
                return Ok(Some(trim_cr(&self.chunk[start..start + newline])));
            }
            self.partial
                .extend_from_slice(&self.chunk[start..start + newline]);
            if trim_cr(&self.partial).is_empty() {
                self.partial.clear();
                continue;
            }
            self.consumed = true;
            return Ok(Some(trim_cr(&self.partial)));
        }
    }

    /// Bytes of an unterminated last line.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        if self.consumed {
            0
        } else {
            self.partial.len()
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(splitter: &mut LineSplitter, chunk: &[u8]) -> Result<Vec<String>, Oversize> {
        splitter.feed(chunk.to_vec());
        let mut out = Vec::new();
        while let Some(line) = splitter.next_line()? {
            out.push(String::from_utf8_lossy(line).into_owned());
        }
        Ok(out)
    }

    #[test]
    fn splits_across_chunks_and_skips_blank_lines() {
        let mut s = LineSplitter::new(16);
        assert_eq!(lines(&mut s, b"ab").unwrap(), Vec::<String>::new());
        assert_eq!(lines(&mut s, b"c\n\r\n\nde\r\nf").unwrap(), ["abc", "de"]);
        assert_eq!(s.pending(), 1);
        assert_eq!(lines(&mut s, b"g\n").unwrap(), ["fg"]);
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn a_line_over_the_limit_fails_without_buffering_it() {
        let mut s = LineSplitter::new(4);
        assert_eq!(lines(&mut s, b"abcd\n").unwrap(), ["abcd"]);
        assert_eq!(lines(&mut s, b"abc").unwrap(), Vec::<String>::new());
        assert_eq!(lines(&mut s, b"de"), Err(Oversize { limit: 4 }));
        let mut s = LineSplitter::new(4);
        assert_eq!(lines(&mut s, b"abcde\n"), Err(Oversize { limit: 4 }));
    }

    #[test]
    fn a_long_line_across_many_chunks_keeps_the_lines_after_it() {
        for split in [1usize, 7, 100, 65536] {
            let mut data = vec![b'y'; 300_000];
            data.extend_from_slice(b"\nabc\ndef\n");
            let mut s = LineSplitter::new(1 << 20);
            let mut got = Vec::new();
            for piece in data.chunks(split) {
                s.feed(piece.to_vec());
                while let Some(line) = s.next_line().unwrap() {
                    got.push(line.len());
                }
            }
            assert_eq!(got, [300_000, 3, 3], "split {split}");
        }
    }
}
