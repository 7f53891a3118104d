//! JSONL: one event per line. Blank lines are skipped; CRLF is tolerated.

use std::io;

use memchr::{memchr, memrchr};

use super::lines::{Capped, Input};
use super::{Batch, Caveat, FrameKind, FrameReader};

pub struct JsonlReader {
    input: Input,
    max: usize,
    /// The line being read when it spans reads.
    partial: Capped,
    at: Counters,
    /// Offset where the current line started.
    line_offset: u64,
}

impl JsonlReader {
    pub fn new(input: Input, max: usize) -> Self {
        let line_offset = input.offset();
        JsonlReader {
            input,
            max,
            partial: Capped::default(),
            at: Counters { line: 1, index: 0 },
            line_offset,
        }
    }
}

/// What a complete line holds: a data frame (without a CR before its LF), a line over the
/// cap, or nothing (a blank line).
enum Line<'a> {
    Data(&'a [u8]),
    TooLong(u64),
    Blank,
}

impl<'a> Line<'a> {
    fn of(text: &'a [u8], len: u64, max: usize) -> Self {
        if len > max as u64 {
            return Line::TooLong(len);
        }
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            Line::Blank
        } else {
            Line::Data(text)
        }
    }
}

impl JsonlReader {
    /// Adds a line that spanned reads, held in `partial`, and starts the next line.
    fn push_partial(&mut self, batch: &mut Batch) {
        let at = &mut self.at;
        match Line::of(&self.partial.bytes, self.partial.len, self.max) {
            Line::Data(text) => {
                batch.push_data(text, at.line, self.line_offset, at.index, Caveat::None);
                at.index += 1;
            }
            Line::TooLong(len) => at.too_long(batch, len, self.line_offset),
            Line::Blank => {}
        }
        self.partial.clear();
        at.line += 1;
    }
}

/// Where the next line stands: its number, and the index its frame will have.
struct Counters {
    line: u64,
    index: u64,
}

impl Counters {
    /// Notes a line over the cap, of `len` bytes, starting at `offset`.
    fn too_long(&mut self, batch: &mut Batch, len: u64, offset: u64) {
        batch.push_note(FrameKind::TooLong { len }, self.line, offset, self.index);
        self.index += 1;
    }
}

/// Adds every complete line of `block` (which ends with a line end, and starts at
/// `block_offset` in the input), copied into the batch in one piece.
fn push_lines(batch: &mut Batch, block: &[u8], block_offset: u64, at: &mut Counters, max: usize) {
    let base = batch.push_block(block);
    let mut kept = base;
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', block) {
        let offset = block_offset + start as u64;
        match Line::of(&block[start..end], (end - start) as u64, max) {
            Line::Data(text) => {
                let from = base + start;
                kept = from + text.len();
                batch.push_data_at(from, kept, at.line, offset, at.index, Caveat::None);
                at.index += 1;
            }
            Line::TooLong(len) => at.too_long(batch, len, offset),
            Line::Blank => {}
        }
        at.line += 1;
        start = end + 1;
    }
    batch.trim_block(kept);
}

impl FrameReader for JsonlReader {
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
        batch.clear();
        loop {
            if self.input.available().is_empty() {
                if !batch.frames.is_empty() {
                    return Ok(true);
                }
                if !self.input.fill()? {
                    if !self.partial.is_empty() {
                        self.push_partial(batch);
                    }
                    return Ok(!batch.frames.is_empty());
                }
            }
            let avail = self.input.available();
            if !self.partial.is_empty() {
                // A line that spans reads ends here, or goes on.
                let Some(i) = memchr(b'\n', avail) else {
                    let n = avail.len();
                    self.partial.push(avail, self.max);
                    self.input.consume(n);
                    continue;
                };
                self.partial.push(&avail[..i], self.max);
                self.push_partial(batch);
                self.input.consume(i + 1);
                self.line_offset = self.input.offset();
                continue;
            }
            // Every line the buffer holds whole, at once; the rest begins a partial line.
            let Some(last) = memrchr(b'\n', avail) else {
                let n = avail.len();
                self.partial.push(avail, self.max);
                self.input.consume(n);
                continue;
            };
            let offset = self.input.offset();
            push_lines(batch, &avail[..=last], offset, &mut self.at, self.max);
            self.input.consume(last + 1);
            self.line_offset = self.input.offset();
        }
    }

    fn bytes_read(&self) -> u64 {
        self.input.offset()
    }
}

#[cfg(test)]
mod tests {
    use crate::read::testing::frames;
    use crate::read::{FrameKind, InputFormat};

    fn texts(bytes: &[u8], chunk: usize) -> Vec<(u64, u64, String)> {
        frames(InputFormat::Jsonl, bytes, chunk, 1 << 20)
            .into_iter()
            .map(|(f, t)| (f.line, f.offset, t))
            .collect()
    }

    #[test]
    fn lines_blank_and_crlf() {
        let input = b"{\"a\":1}\r\n\r\n  \n{\"b\":2}\n{\"c\":3}";
        for chunk in [1, 2, 3, 7, 1000] {
            assert_eq!(
                texts(input, chunk),
                vec![
                    (1, 0, "{\"a\":1}".into()),
                    (4, 14, "{\"b\":2}".into()),
                    (5, 22, "{\"c\":3}".into()),
                ],
                "chunk {chunk}"
            );
        }
    }

    /// Whether a stream is binary does not depend on how its bytes arrive: a first line of
    /// text followed by a run of NULs read as nothing at all when the bytes came whole (the
    /// NULs were in the head looked at) and as two lines when they came in pieces (the head
    /// ended with the first line). Found by the `readers` fuzz target.
    #[test]
    fn a_text_first_line_decides_alike_however_the_bytes_arrive() {
        let mut input = b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n".to_vec();
        input.extend(b"{\"type\":\"RUN_FINISHED\",\"note\":\"");
        input.extend([0u8; 200]);
        input.extend(b"\"}\n");
        let whole = texts(&input, 1 << 20);
        assert_eq!(whole.len(), 2, "{whole:?}");
        for chunk in [1, 3, 11, 64] {
            assert_eq!(texts(&input, chunk), whole, "chunk {chunk}");
        }
    }

    #[test]
    fn runs_of_blank_lines_are_read_through() {
        let mut input = b"\n\r\n".repeat(5000);
        input.extend(b"{\"a\":1}\n");
        input.extend(b" \n".repeat(5000));
        for chunk in [3, 1000, 1 << 20] {
            assert_eq!(
                texts(&input, chunk),
                vec![(10_001, 15_000, "{\"a\":1}".into())],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn leading_bom_is_stripped_once() {
        let got = texts(b"\xEF\xBB\xBF{\"a\":1}\n", 1);
        assert_eq!(got, vec![(1, 3, "{\"a\":1}".into())]);
        let got = texts(b"\xEF\xBB\xBF\xEF\xBB\xBF{}\n", 2);
        assert_eq!(got[0].2, "\u{feff}{}");
    }

    #[test]
    fn long_lines_are_reported_not_held() {
        let mut input = b"{}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100));
        input.extend(b"\n{\"z\":1}\n");
        for chunk in [1, 9, 4096] {
            let got = frames(InputFormat::Jsonl, &input, chunk, 50);
            assert_eq!(got.len(), 3);
            assert_eq!(got[1].0.kind, FrameKind::TooLong { len: 100 });
            assert_eq!(got[1].0.line, 2);
            assert_eq!(got[2].1, "{\"z\":1}");
            assert_eq!(got[2].0.index, 2);
        }
    }
}
