//! Server-Sent Events as captured from the wire, framed the way the WHATWG HTML standard says
//! an EventSource does: CR, LF and CRLF all end a line; `data:` fields are joined with LF; a
//! blank line dispatches; comments and the `event`, `id` and `retry` fields do not carry events.
//!
//! Beside it, the reader follows what the official client makes of the same bytes: it splits
//! the body only at `\n\n` and fails when that leaves two frames together, or more than
//! [`CLIENT_FRAME_LIMIT`] UTF-16 units waiting; a frame it would fail at carries a [`Caveat`].

use std::io;

use memchr::memchr2;

use super::lines::{Capped, Input};
use super::{Batch, CLIENT_FRAME_LIMIT, Caveat, FrameKind, FrameReader};

const DATA: &[u8] = b"data";
const DATA_COLON: &[u8] = b"data:";

/// The line being read. Only a line that may still be a `data` field is kept.
#[derive(Default)]
struct Line {
    bytes: Capped,
    /// Length of the line, kept or not.
    len: u64,
    /// The first bytes of the line, enough to tell the field and the space after its colon.
    head: [u8; 6],
    head_len: usize,
}

impl Line {
    fn maybe_data(&self) -> bool {
        let head = &self.head[..self.head_len.min(DATA_COLON.len())];
        DATA_COLON.starts_with(head)
    }

    fn is_data(&self) -> bool {
        let head = &self.head[..self.head_len];
        head.starts_with(DATA_COLON) || head == DATA
    }

    fn take(&mut self, chunk: &[u8], cap: usize) {
        let room = self.head.len() - self.head_len;
        let n = room.min(chunk.len());
        self.head[self.head_len..self.head_len + n].copy_from_slice(&chunk[..n]);
        self.head_len += n;
        self.len += chunk.len() as u64;
        if self.maybe_data() {
            self.bytes.push(chunk, cap);
        } else if !self.bytes.is_empty() {
            self.bytes.clear();
        }
    }

    /// The field value of a data line: after `data:` and one optional space.
    fn value_len(&self) -> u64 {
        let skip = if self.head.get(5) == Some(&b' ') && self.head_len > 5 {
            6
        } else {
            5
        };
        self.len.saturating_sub(skip)
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.len = 0;
        self.head_len = 0;
    }
}

pub struct SseReader {
    input: Input,
    max: usize,
    line: Line,
    line_no: u64,
    line_offset: u64,
    /// The last line ended with CR: a LF right after it belongs to the same line end.
    after_cr: bool,
    /// The frame being built.
    data: Capped,
    has_data: bool,
    frame_line: u64,
    frame_offset: u64,
    index: u64,
    client: ClientView,
}

/// The body as `@ag-ui/client` splits it: at `\n\n` only.
#[derive(Default)]
struct ClientView {
    /// The last line ended with LF (alone or after CR): a blank line ended by LF makes `\n\n`.
    ended_lf: bool,
    /// The line of the last frame with data since the last `\n\n`, if one was.
    frame_line: Option<u64>,
    /// Bytes since the last `\n\n`: the text the client holds is as many UTF-16 units or
    /// fewer (see [`ClientView::frame`]).
    bytes: u64,
    /// Frames said to be read as one (once a stream: the client stops at the first).
    merged_said: bool,
    /// The text since the last `\n\n` was said to be over the client's limit.
    over_said: bool,
}

impl ClientView {
    /// The caveat of a frame with data ending at `line`, whose data is `data` (when held),
    /// from what the client sees of it.
    fn frame(&mut self, line: u64, data: &[u8]) -> Option<Caveat> {
        let before = self.frame_line.replace(line);
        if let Some(with_line) = before
            && !self.merged_said
        {
            self.merged_said = true;
            return Some(Caveat::SseMerged { with_line });
        }
        // A UTF-16 unit is one byte of UTF-8 or more, so only text over the limit in bytes
        // is counted, and then the frame's data, which is all but its field names: the rest
        // is taken as one unit a byte.
        if self.bytes > CLIENT_FRAME_LIMIT && !self.over_said {
            let units = self.bytes - (data.len() as u64 - utf16_len(data));
            if units > CLIENT_FRAME_LIMIT {
                self.over_said = true;
                return Some(Caveat::SseOverClientLimit { len: units });
            }
        }
        None
    }

    /// Two LFs in a row: the client hands on what it held.
    fn split(&mut self) {
        self.frame_line = None;
        self.bytes = 0;
        self.over_said = false;
    }
}

/// The length of UTF-8 text in UTF-16 units, as a JavaScript string holds it: one per
/// character, two for one outside the Basic Multilingual Plane.
pub(crate) fn utf16_len(bytes: &[u8]) -> u64 {
    // Most text is ASCII, one unit a byte: that is checked a word at a time.
    if bytes.is_ascii() {
        return bytes.len() as u64;
    }
    bytes
        .iter()
        .map(|&b| u64::from(b & 0xC0 != 0x80) + u64::from(b >= 0xF0))
        .sum()
}

impl SseReader {
    pub fn new(input: Input, max: usize) -> Self {
        let line_offset = input.offset();
        SseReader {
            input,
            max,
            line: Line::default(),
            line_no: 1,
            line_offset,
            after_cr: false,
            data: Capped::default(),
            has_data: false,
            frame_line: 0,
            frame_offset: 0,
            index: 0,
            client: ClientView::default(),
        }
    }

    /// A line may hold the field name, a colon, a space and `max` bytes of value.
    fn line_cap(&self) -> usize {
        self.max.saturating_add(DATA_COLON.len() + 1)
    }

    /// Handles a complete line.
    fn end_line(&mut self, batch: &mut Batch) {
        let len = self.line.len;
        if len == 0 {
            self.dispatch(batch, false);
        } else if self.line.is_data() {
            if !self.has_data {
                self.has_data = true;
                self.frame_line = self.line_no;
                self.frame_offset = self.line_offset;
            }
            if self.line.bytes.over(self.line_cap()) {
                // Count the bytes; the frame is reported as too long when it ends.
                let value_len = self.line.value_len();
                self.data.push(&[], self.max);
                self.data.len += value_len;
                self.data.push(b"\n", self.max);
            } else {
                let line = &self.line.bytes.bytes;
                let value = line.get(DATA_COLON.len()..).unwrap_or(&[]);
                let value = value.strip_prefix(b" ").unwrap_or(value);
                self.data.push(value, self.max);
                self.data.push(b"\n", self.max);
            }
        } else if len > self.max as u64 {
            batch.push_note(
                FrameKind::TooLong { len },
                self.line_no,
                self.line_offset,
                self.index,
            );
            self.index += 1;
        }
        self.line.clear();
        self.line_no += 1;
    }

    fn dispatch(&mut self, batch: &mut Batch, unterminated: bool) {
        if !self.has_data {
            return;
        }
        // Data of nothing but white space joins another frame's without harm.
        let blank =
            !self.data.over(self.max) && self.data.bytes.iter().all(u8::is_ascii_whitespace);
        let client = if blank {
            None
        } else {
            self.client.frame(self.frame_line, &self.data.bytes)
        };
        let caveat = match client {
            Some(merged @ Caveat::SseMerged { .. }) => merged,
            _ if unterminated => Caveat::Unterminated,
            Some(caveat) => caveat,
            None => Caveat::None,
        };
        let (line, offset) = (self.frame_line, self.frame_offset);
        if self.data.over(self.max) {
            // The data buffer's length includes the line feed that ends the last field.
            let len = self.data.len.saturating_sub(1);
            batch.push_note(FrameKind::TooLong { len }, line, offset, self.index);
        } else {
            let bytes = &self.data.bytes;
            let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            batch.push_data(bytes, line, offset, self.index, caveat);
        }
        self.index += 1;
        self.data.clear();
        self.has_data = false;
    }
}

impl FrameReader for SseReader {
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
        batch.clear();
        let cap = self.line_cap();
        loop {
            if self.input.available().is_empty() {
                if !batch.frames.is_empty() {
                    return Ok(true);
                }
                if !self.input.fill()? {
                    if self.line.len > 0 {
                        self.end_line(batch);
                    }
                    self.dispatch(batch, true);
                    return Ok(!batch.frames.is_empty());
                }
            }
            if self.after_cr {
                self.after_cr = false;
                if self.input.available()[0] == b'\n' {
                    self.input.consume(1);
                    self.line_offset = self.input.offset();
                    self.client.bytes += 1;
                    self.client.ended_lf = true;
                    continue;
                }
            }
            let avail = self.input.available();
            match memchr2(b'\n', b'\r', avail) {
                Some(i) => {
                    let lf = avail[i] == b'\n';
                    // A blank line ended by LF right after a LF: the client splits here.
                    let split = lf && self.line.len == 0 && i == 0 && self.client.ended_lf;
                    self.after_cr = !lf;
                    self.client.bytes += i as u64 + 1;
                    self.line.take(&avail[..i], cap);
                    self.input.consume(i + 1);
                    self.end_line(batch);
                    self.line_offset = self.input.offset();
                    self.client.ended_lf = lf;
                    if split {
                        self.client.split();
                    }
                }
                None => {
                    let n = avail.len();
                    self.client.bytes += n as u64;
                    self.line.take(avail, cap);
                    self.input.consume(n);
                }
            }
        }
    }

    fn bytes_read(&self) -> u64 {
        self.input.offset()
    }
}

#[cfg(test)]
mod tests {
    use crate::read::testing::frames;
    use crate::read::{Caveat, FrameKind, InputFormat};

    fn data(bytes: &[u8], chunk: usize) -> Vec<(u64, String, bool)> {
        frames(InputFormat::Sse, bytes, chunk, 1 << 20)
            .into_iter()
            .map(|(f, t)| {
                let unterminated = matches!(
                    f.kind,
                    FrameKind::Data {
                        caveat: Caveat::Unterminated,
                        ..
                    }
                );
                (f.line, t, unterminated)
            })
            .collect()
    }

    #[test]
    fn line_endings_and_fields() {
        let lf = b": hello\nretry: 10\n\nid: 1\nevent: x\ndata: {\"a\":\ndata:1}\n\ndata:{}\n\n";
        let crlf = String::from_utf8_lossy(lf).replace('\n', "\r\n");
        let cr = String::from_utf8_lossy(lf).replace('\n', "\r");
        for input in [lf.to_vec(), crlf.into_bytes(), cr.into_bytes()] {
            for chunk in [1, 2, 5, 1000] {
                assert_eq!(
                    data(&input, chunk),
                    vec![
                        (6, "{\"a\":\n1}".to_string(), false),
                        (9, "{}".to_string(), false)
                    ],
                    "chunk {chunk} input {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
        }
    }

    #[test]
    fn data_without_colon_and_space_rules() {
        // `data` alone adds an empty line; only one leading space is removed.
        let got = data(b"data\ndata:  x\n\n", 3);
        assert_eq!(got, vec![(1, "\n x".to_string(), false)]);
        // `data :` is a different field name and is ignored.
        assert!(data(b"data : x\n\n", 1).is_empty());
        assert!(data(b"dat\n\n", 1).is_empty());
    }

    #[test]
    fn unterminated_last_frame() {
        assert_eq!(
            data(b"data: {}\n\ndata: {\"b\":1}", 4),
            vec![
                (1, "{}".to_string(), false),
                (3, "{\"b\":1}".to_string(), true)
            ]
        );
        assert_eq!(data(b"data: {}\n", 4), vec![(1, "{}".to_string(), true)]);
    }

    #[test]
    fn leading_bom_then_crlf() {
        let got = data(b"\xEF\xBB\xBFdata: {}\r\n\r\n", 1);
        assert_eq!(got, vec![(1, "{}".to_string(), false)]);
    }

    #[test]
    fn oversized_frames_and_lines() {
        let mut input = b"data: ".to_vec();
        input.extend(std::iter::repeat_n(b'x', 200));
        input.extend(b"\n\n: ");
        input.extend(std::iter::repeat_n(b'y', 200));
        input.extend(b"\ndata: {}\n\n");
        for chunk in [1, 7, 4096] {
            let got = frames(InputFormat::Sse, &input, chunk, 100);
            let kinds: Vec<_> = got
                .iter()
                .map(|(f, t)| (f.line, f.kind.clone(), t.clone()))
                .collect();
            assert_eq!(kinds.len(), 3, "chunk {chunk}: {kinds:?}");
            assert_eq!(kinds[0].1, FrameKind::TooLong { len: 200 });
            assert_eq!(kinds[1].0, 3);
            assert!(matches!(kinds[1].1, FrameKind::TooLong { len: 202 }));
            assert_eq!(kinds[2].2, "{}");
        }
    }

    #[test]
    fn multiline_frames_across_many_small_fields() {
        let got = data(b"data: a\ndata: b\ndata: c\n\n", 2);
        assert_eq!(got, vec![(1, "a\nb\nc".to_string(), false)]);
    }
}
