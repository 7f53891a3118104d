//! Writing events back out: JSONL, a JSON array or SSE, plain, gzip or zstd. Events kept as
//! read are written byte for byte; new ones are serialised compactly.

use std::io::{self, Write};

use serde_json::Value;

use crate::compact::Output;
use crate::source::{Compression, InputFormat};

/// A compressing writer, finished explicitly so errors are not lost in a drop.
enum Encoder<W: Write> {
    Plain(W),
    Gzip(flate2::write::GzEncoder<W>),
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Gzip(w) => w.write(buf),
            Encoder::Zstd(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(w) => w.flush(),
            Encoder::Zstd(w) => w.flush(),
        }
    }
}

/// Writes events in one format and compression.
pub struct EventWriter<W: Write> {
    out: Encoder<io::BufWriter<W>>,
    format: InputFormat,
    events: u64,
    bytes: u64,
    /// Where events made by compaction are serialised, kept between them.
    scratch: Vec<u8>,
}

impl<W: Write> EventWriter<W> {
    pub fn new(inner: W, format: InputFormat, compression: Compression) -> io::Result<Self> {
        let buffered = io::BufWriter::with_capacity(256 * 1024, inner);
        let out = match compression {
            Compression::None => Encoder::Plain(buffered),
            Compression::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                buffered,
                flate2::Compression::default(),
            )),
            Compression::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(buffered, 3)?),
        };
        Ok(EventWriter {
            out,
            format,
            events: 0,
            bytes: 0,
            scratch: Vec::new(),
        })
    }

    /// The format events are written in.
    pub fn format(&self) -> InputFormat {
        self.format
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Uncompressed bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    fn write_event(&mut self, text: &[u8]) -> io::Result<()> {
        match self.format {
            InputFormat::Jsonl => {
                self.put(text)?;
                self.put(b"\n")?;
            }
            InputFormat::Json => {
                self.put(if self.events == 0 { b"[\n" } else { b",\n" })?;
                self.put(text)?;
            }
            InputFormat::Sse => {
                for line in text.split(|&b| b == b'\n') {
                    self.put(b"data: ")?;
                    self.put(line)?;
                    self.put(b"\n")?;
                }
                self.put(b"\n")?;
            }
        }
        self.events += 1;
        Ok(())
    }

    /// Ends the output (closing a JSON array, finishing compression) and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        if self.format == InputFormat::Json {
            let close: &[u8] = if self.events == 0 { b"[]\n" } else { b"\n]\n" };
            self.put(close)?;
        }
        let buffered = match self.out {
            Encoder::Plain(w) => w,
            Encoder::Gzip(w) => w.finish()?,
            Encoder::Zstd(w) => w.finish()?,
        };
        buffered.into_inner().map_err(|e| e.into_error())
    }
}

/// Appends `text` as a JSON string, escaped exactly as `serde_json` escapes it (`\"`, `\\`,
/// the short forms of \b \f \n \r \t, `\u00XX` for other control characters, nothing else),
/// so what it writes is byte for byte what serialising a `Value` writes. Runs of 16 bytes with
/// nothing to escape, which is nearly all of a merged message's text, are checked in one
/// vectorisable pass and copied whole.
pub fn write_json_str(out: &mut Vec<u8>, text: &str) {
    fn needs_escape(b: u8) -> bool {
        b < 0x20 || b == b'"' || b == b'\\'
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut clean = 0; // bytes[clean..i] are still to copy
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 16) {
            if !chunk.iter().fold(false, |any, &b| any | needs_escape(b)) {
                i += 16;
                continue;
            }
        }
        let end = (i + 16).min(bytes.len());
        while i < end {
            let b = bytes[i];
            if needs_escape(b) {
                out.extend_from_slice(&bytes[clean..i]);
                match b {
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    0x08 => out.extend_from_slice(b"\\b"),
                    0x0C => out.extend_from_slice(b"\\f"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    _ => out.extend_from_slice(&[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[usize::from(b >> 4)],
                        HEX[usize::from(b & 0xF)],
                    ]),
                }
                clean = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[clean..]);
    out.push(b'"');
}

impl<W: Write> Output for EventWriter<W> {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_event(bytes)
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        let mut text = std::mem::take(&mut self.scratch);
        text.clear();
        serde_json::to_writer(&mut text, value).map_err(io::Error::other)?;
        let written = self.write_event(&text);
        self.scratch = text;
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(format: InputFormat) -> String {
        let mut writer = EventWriter::new(Vec::new(), format, Compression::None).unwrap();
        writer.raw(br#"{"type":"RUN_STARTED"}"#).unwrap();
        writer.event(&json!({"type": "RUN_FINISHED"})).unwrap();
        String::from_utf8(writer.finish().unwrap()).unwrap()
    }

    /// Strings are written byte for byte as serde_json writes them: every character that
    /// needs escaping, at every position relative to the 16-byte runs checked at once.
    #[test]
    fn json_strings_are_escaped_as_serde_escapes_them() {
        let specials = ["\"", "\\", "\u{8}", "\u{c}", "\n", "\r", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é", "🦀", "/"];
        let mut cases = vec![String::new()];
        for special in specials {
            for before in 0..34 {
                let text = format!("{}{special}{}", "a".repeat(before), "b".repeat(before % 7));
                cases.push(text.clone());
                cases.push(text.repeat(3));
            }
        }
        for text in cases {
            let mut ours = Vec::new();
            write_json_str(&mut ours, &text);
            assert_eq!(ours, serde_json::to_vec(&text).unwrap(), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_escapes_it(text in "(\\PC|[\\x00-\\x1f\"\\\\])*") {
            let mut ours = Vec::new();
            write_json_str(&mut ours, &text);
            proptest::prop_assert_eq!(ours, serde_json::to_vec(&text).unwrap());
        }
    }

    #[test]
    fn formats() {
        assert_eq!(
            written(InputFormat::Jsonl),
            "{\"type\":\"RUN_STARTED\"}\n{\"type\":\"RUN_FINISHED\"}\n"
        );
        assert_eq!(
            written(InputFormat::Json),
            "[\n{\"type\":\"RUN_STARTED\"},\n{\"type\":\"RUN_FINISHED\"}\n]\n"
        );
        assert_eq!(
            written(InputFormat::Sse),
            "data: {\"type\":\"RUN_STARTED\"}\n\ndata: {\"type\":\"RUN_FINISHED\"}\n\n"
        );
    }

    #[test]
    fn multi_line_frames_become_several_data_fields() {
        let mut writer = EventWriter::new(Vec::new(), InputFormat::Sse, Compression::None).unwrap();
        writer.raw(b"{\n\"a\": 1\n}").unwrap();
        let text = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert_eq!(text, "data: {\ndata: \"a\": 1\ndata: }\n\n");
    }
}
