//! JSON input: one array of events (`[{…}, {…}]`), or JSON values one after another (a single
//! pretty-printed event, concatenated JSON). Elements are cut out by tracking strings and
//! brackets, so the array is never held whole.

use std::io;

use super::lines::{Capped, Input};
use super::{Batch, Caveat, FrameKind, FrameReader};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Nothing but whitespace seen yet.
    Start,
    /// Inside `[ … ]`.
    Array,
    /// Values one after another, not in an array.
    Sequence,
    /// After the array's closing `]`.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// An element, or `]` right after `[`.
    First,
    /// An element after a comma.
    Element,
    /// A comma or `]` after an element.
    Separator,
}

/// What kind of value is being scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    Container { depth: u32 },
    String,
    Bare,
}

pub struct JsonReader {
    input: Input,
    max: usize,
    mode: Mode,
    expect: Expect,
    /// The element being scanned, if inside one.
    scan: Option<Scan>,
    in_string: bool,
    escaped: bool,
    elem: Capped,
    elem_line: u64,
    elem_offset: u64,
    line: u64,
    index: u64,
    /// Text after the closing `]` was reported once.
    trailing_reported: bool,
}

impl JsonReader {
    pub fn new(input: Input, max: usize) -> Self {
        JsonReader {
            input,
            max,
            mode: Mode::Start,
            expect: Expect::First,
            scan: None,
            in_string: false,
            escaped: false,
            elem: Capped::default(),
            elem_line: 0,
            elem_offset: 0,
            line: 1,
            index: 0,
            trailing_reported: false,
        }
    }

    fn note(&mut self, batch: &mut Batch, message: String, offset: u64) {
        batch.push_note(
            FrameKind::Malformed { message },
            self.line,
            offset,
            self.index,
        );
        self.index += 1;
    }

    fn start_element(&mut self, byte: u8, offset: u64) {
        self.scan = Some(match byte {
            b'{' | b'[' => Scan::Container { depth: 0 },
            b'"' => Scan::String,
            _ => Scan::Bare,
        });
        self.in_string = false;
        self.escaped = false;
        self.elem_line = self.line;
        self.elem_offset = offset;
        self.elem.clear();
    }

    fn finish_element(&mut self, batch: &mut Batch) {
        if self.elem.over(self.max) {
            batch.push_note(
                FrameKind::TooLong { len: self.elem.len },
                self.elem_line,
                self.elem_offset,
                self.index,
            );
        } else {
            batch.push_data(
                &self.elem.bytes,
                self.elem_line,
                self.elem_offset,
                self.index,
                Caveat::None,
            );
        }
        self.index += 1;
        self.scan = None;
        self.elem.clear();
        if self.mode == Mode::Array {
            self.expect = Expect::Separator;
        }
    }

    /// Scans bytes of the current element; returns how many belong to it and whether it ended.
    fn scan_element(&mut self, bytes: &[u8]) -> (usize, bool) {
        let Some(scan) = self.scan else {
            return (0, false);
        };
        match scan {
            Scan::Bare => {
                // The first byte always belongs to the value, so a stray `}` still moves on.
                let from = usize::from(self.elem.is_empty());
                let end = bytes.iter().skip(from).position(|b| {
                    matches!(b, b',' | b']' | b'}' | b'[' | b'{' | b'"') || b.is_ascii_whitespace()
                });
                match end {
                    Some(i) => (i + from, true),
                    None => (bytes.len(), false),
                }
            }
            Scan::String | Scan::Container { .. } => {
                let mut depth = match scan {
                    Scan::Container { depth } => depth,
                    _ => 0,
                };
                for (i, &b) in bytes.iter().enumerate() {
                    if b == b'\n' {
                        self.line += 1;
                    }
                    if self.in_string {
                        if self.escaped {
                            self.escaped = false;
                        } else if b == b'\\' {
                            self.escaped = true;
                        } else if b == b'"' {
                            self.in_string = false;
                            if scan == Scan::String {
                                return (i + 1, true);
                            }
                        }
                        continue;
                    }
                    match b {
                        b'"' => self.in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                self.scan = Some(Scan::Container { depth });
                                return (i + 1, true);
                            }
                        }
                        _ => {}
                    }
                }
                if let Scan::Container { .. } = scan {
                    self.scan = Some(Scan::Container { depth });
                }
                (bytes.len(), false)
            }
        }
    }

    /// Handles one byte between elements.
    fn between(&mut self, batch: &mut Batch, byte: u8, offset: u64) -> bool {
        if byte.is_ascii_whitespace() {
            if byte == b'\n' {
                self.line += 1;
            }
            return true;
        }
        match self.mode {
            Mode::Start => {
                if byte == b'[' {
                    self.mode = Mode::Array;
                    self.expect = Expect::First;
                    return true;
                }
                self.mode = Mode::Sequence;
                false
            }
            Mode::Array => match (self.expect, byte) {
                (Expect::First | Expect::Separator, b']') => {
                    self.mode = Mode::Done;
                    true
                }
                (Expect::Element, b']') => {
                    self.note(
                        batch,
                        "a trailing comma before the closing `]`".into(),
                        offset,
                    );
                    self.mode = Mode::Done;
                    true
                }
                (Expect::Separator, b',') => {
                    self.expect = Expect::Element;
                    true
                }
                (_, b',') => {
                    self.note(
                        batch,
                        "a comma where an array element should be".into(),
                        offset,
                    );
                    true
                }
                (Expect::Separator, _) => {
                    self.note(
                        batch,
                        "a missing comma between array elements".into(),
                        offset,
                    );
                    self.expect = Expect::Element;
                    false
                }
                _ => false,
            },
            Mode::Sequence => false,
            Mode::Done => {
                if !self.trailing_reported {
                    self.trailing_reported = true;
                    self.note(
                        batch,
                        "text after the closing `]` of the JSON array; it is read as more events"
                            .into(),
                        offset,
                    );
                }
                self.mode = Mode::Sequence;
                false
            }
        }
    }
}

impl FrameReader for JsonReader {
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
        batch.clear();
        loop {
            if self.input.available().is_empty() {
                if !batch.frames.is_empty() {
                    return Ok(true);
                }
                if !self.input.fill()? {
                    if self.scan.is_some() {
                        self.finish_element(batch);
                    }
                    if self.mode == Mode::Array {
                        let offset = self.input.offset();
                        self.note(
                            batch,
                            "the JSON array is not closed: the input ends before its `]` (truncated?)"
                                .into(),
                            offset,
                        );
                        self.mode = Mode::Done;
                    }
                    return Ok(!batch.frames.is_empty());
                }
            }
            if self.scan.is_some() {
                let avail = self.input.available();
                let (used, ended) = self.scan_element_split(avail.len());
                self.input.consume(used);
                if ended {
                    self.finish_element(batch);
                }
                continue;
            }
            let byte = self.input.available()[0];
            let offset = self.input.offset();
            if self.between(batch, byte, offset) {
                self.input.consume(1);
            } else {
                self.start_element(byte, offset);
            }
        }
    }

    fn bytes_read(&self) -> u64 {
        self.input.offset()
    }
}

impl JsonReader {
    /// Scans the available bytes of the current element into `elem`.
    fn scan_element_split(&mut self, avail_len: usize) -> (usize, bool) {
        // Copy out the slice so `self` can be borrowed mutably while scanning.
        let chunk_len = avail_len.min(64 * 1024);
        let chunk: Vec<u8> = self.input.available()[..chunk_len].to_vec();
        let (used, ended) = self.scan_element(&chunk);
        self.elem.push(&chunk[..used], self.max);
        (used, ended)
    }
}

#[cfg(test)]
mod tests {
    use crate::read::testing::frames;
    use crate::read::{FrameKind, InputFormat};

    fn read(bytes: &[u8], chunk: usize) -> Vec<(u64, String)> {
        frames(InputFormat::Json, bytes, chunk, 1 << 20)
            .into_iter()
            .map(|(f, t)| match f.kind {
                FrameKind::Malformed { message } => (f.line, format!("!{message}")),
                FrameKind::TooLong { len } => (f.line, format!("!too long {len}")),
                FrameKind::Data { .. } => (f.line, t),
                FrameKind::Proto { .. } => unreachable!("JSON has no protobuf frames"),
            })
            .collect()
    }

    #[test]
    fn array_elements_with_lines() {
        let input = b"[\n  {\"a\": \"]}\\\"\"},\n  {\"b\": [1, {\"c\": 2}]}\n]\n";
        for chunk in [1, 3, 1000] {
            assert_eq!(
                read(input, chunk),
                vec![
                    (2, "{\"a\": \"]}\\\"\"}".to_string()),
                    (3, "{\"b\": [1, {\"c\": 2}]}".to_string())
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn scalars_and_sequences() {
        assert_eq!(
            read(b"[1, \"x\", null]", 2),
            vec![
                (1, "1".to_string()),
                (1, "\"x\"".to_string()),
                (1, "null".to_string())
            ]
        );
        assert_eq!(
            read(b"{\n \"a\": 1\n}\n{\"b\": 2}", 1),
            vec![
                (1, "{\n \"a\": 1\n}".to_string()),
                (4, "{\"b\": 2}".to_string())
            ]
        );
    }

    #[test]
    fn structural_problems_are_reported_and_reading_goes_on() {
        let got = read(b"[{\"a\":1},,{\"b\":2} {\"c\":3},]x", 1);
        let texts: Vec<&str> = got.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "{\"a\":1}",
                "!a comma where an array element should be",
                "{\"b\":2}",
                "!a missing comma between array elements",
                "{\"c\":3}",
                "!a trailing comma before the closing `]`",
                "!text after the closing `]` of the JSON array; it is read as more events",
                "x",
            ]
        );
    }

    #[test]
    fn truncated_array() {
        let got = read(b"[{\"a\":1},{\"b\":", 4);
        assert_eq!(got[1].1, "{\"b\":");
        assert!(got[2].1.starts_with("!the JSON array is not closed"));
    }
}
