//! JSONL: one event per line. Blank lines are skipped; CRLF is tolerated.

use std::io;

use memchr::memchr;

use super::lines::{Capped, Input};
use super::{Batch, FrameKind, FrameReader};

pub struct JsonlReader {
    input: Input,
    max: usize,
    /// The line being read when it spans reads.
    partial: Capped,
    /// Line number of the next line to start.
    line: u64,
    /// Offset where the current line started.
    line_offset: u64,
    index: u64,
}

impl JsonlReader {
    pub fn new(input: Input, max: usize) -> Self {
        let line_offset = input.offset();
        JsonlReader {
            input,
            max,
            partial: Capped::default(),
            line: 1,
            line_offset,
            index: 0,
        }
    }
}

/// Adds a complete line to the batch: a data frame, a too-long note, or nothing if blank.
fn push_line(
    batch: &mut Batch,
    text: &[u8],
    len: u64,
    line: u64,
    offset: u64,
    index: &mut u64,
    max: usize,
) {
    if len > max as u64 {
        batch.push_note(FrameKind::TooLong { len }, line, offset, *index);
        *index += 1;
        return;
    }
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if !text.iter().all(u8::is_ascii_whitespace) {
        batch.push_data(text, line, offset, *index, false);
        *index += 1;
    }
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
                        let len = self.partial.len;
                        push_line(
                            batch,
                            &self.partial.bytes,
                            len,
                            self.line,
                            self.line_offset,
                            &mut self.index,
                            self.max,
                        );
                        self.partial.clear();
                        self.line += 1;
                    }
                    return Ok(!batch.frames.is_empty());
                }
            }
            let avail = self.input.available();
            if avail[0] == b'\n' && self.partial.is_empty() {
                // A run of empty lines, skipped in one step.
                let run = avail.iter().take_while(|&&b| b == b'\n').count();
                self.input.consume(run);
                self.line += run as u64;
                self.line_offset = self.input.offset();
                continue;
            }
            let Some(i) = memchr(b'\n', avail) else {
                let n = avail.len();
                self.partial.push(avail, self.max);
                self.input.consume(n);
                continue;
            };
            if self.partial.is_empty() {
                // The whole line is in the buffer: copy it straight into the batch.
                push_line(
                    batch,
                    &avail[..i],
                    i as u64,
                    self.line,
                    self.line_offset,
                    &mut self.index,
                    self.max,
                );
            } else {
                self.partial.push(&avail[..i], self.max);
                let len = self.partial.len;
                push_line(
                    batch,
                    &self.partial.bytes,
                    len,
                    self.line,
                    self.line_offset,
                    &mut self.index,
                    self.max,
                );
                self.partial.clear();
            }
            self.input.consume(i + 1);
            self.line += 1;
            self.line_offset = self.input.offset();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::source::testing::frames;
    use crate::source::{FrameKind, InputFormat};

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
