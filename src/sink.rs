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

impl<W: Write> Output for EventWriter<W> {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_event(bytes)
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        let text = serde_json::to_vec(value).map_err(io::Error::other)?;
        self.write_event(&text)
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
