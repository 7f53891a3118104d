//! Writing events back out: JSONL, a JSON array or SSE, plain, gzip or zstd. Events kept as
//! read are written byte for byte; new ones are serialised compactly.

use std::io::{self, Write};
use std::sync::mpsc;
use std::thread;

use serde_json::Value;

use crate::protocol::proto;
use crate::read::delta::special as special_byte;
use crate::read::{Compression, InputFormat};
use crate::text::plural;

/// Where events go that are written back out: as read, or made (by compaction).
pub trait Output {
    /// An event kept as it was read.
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// An event made by compaction.
    fn event(&mut self, value: &Value) -> io::Result<()>;
}

/// A compressing writer, finished explicitly so errors are not lost in a drop.
enum Encoder<W: Write> {
    Plain(W),
    Gzip(flate2::write::GzEncoder<W>),
    #[cfg(feature = "zstd")]
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Gzip(w) => w.write(buf),
            #[cfg(feature = "zstd")]
            Encoder::Zstd(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(w) => w.flush(),
            #[cfg(feature = "zstd")]
            Encoder::Zstd(w) => w.flush(),
        }
    }
}

impl<W: Write> Encoder<io::BufWriter<W>> {
    /// Compression of `inner`, buffered.
    fn new(inner: W, compression: Compression) -> io::Result<Self> {
        let buffered = io::BufWriter::with_capacity(CHUNK, inner);
        Ok(match compression {
            Compression::None => Encoder::Plain(buffered),
            Compression::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                buffered,
                flate2::Compression::default(),
            )),
            #[cfg(feature = "zstd")]
            Compression::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(buffered, 3)?),
            #[cfg(not(feature = "zstd"))]
            Compression::Zstd => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "this build writes no zstd (the `zstd` feature)",
                ));
            }
        })
    }

    /// Finishes compression and returns the writer, everything flushed into it.
    fn finish(self) -> io::Result<W> {
        let buffered = match self {
            Encoder::Plain(w) => w,
            Encoder::Gzip(w) => w.finish()?,
            #[cfg(feature = "zstd")]
            Encoder::Zstd(w) => w.finish()?,
        };
        buffered.into_inner().map_err(|e| e.into_error())
    }
}

/// How much is written at a time.
const CHUNK: usize = 256 * 1024;

/// What the writing thread is sent.
enum ToWriter {
    Bytes(Vec<u8>),
    /// All was sent: finish compression and hand the writer back.
    Finish,
}

/// Bytes handed, a chunk at a time, to a thread of their own that compresses and writes them,
/// so the thread producing events does neither. A failed write stops that thread; the next
/// hand-over (or `finish`) returns its error.
struct Background<W> {
    filling: Vec<u8>,
    to_writer: Option<mpsc::SyncSender<ToWriter>>,
    /// Chunks written, sent back to be filled again.
    spare: mpsc::Receiver<Vec<u8>>,
    thread: Option<thread::JoinHandle<io::Result<Option<W>>>>,
}

impl<W: Write + Send + 'static> Background<W> {
    fn new(inner: W, compression: Compression) -> io::Result<Self> {
        let mut encoder = Encoder::new(inner, compression)?;
        // Two chunks queued, one being written, one filling: 1 MiB at most.
        let (to_writer, chunks) = mpsc::sync_channel::<ToWriter>(2);
        let (give_back, spare) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("agui-lens writer".into())
            .spawn(move || {
                for message in chunks {
                    match message {
                        ToWriter::Bytes(chunk) => {
                            encoder.write_all(&chunk)?;
                            let _ = give_back.send(chunk);
                        }
                        ToWriter::Finish => return encoder.finish().map(Some),
                    }
                }
                // Abandoned (the output is being thrown away): nothing more to write.
                Ok(None)
            })?;
        Ok(Background {
            filling: Vec::with_capacity(CHUNK),
            to_writer: Some(to_writer),
            spare,
            thread: Some(thread),
        })
    }
}

impl<W> Background<W> {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.filling.extend_from_slice(bytes);
        if self.filling.len() >= CHUNK {
            let next = match self.spare.try_recv() {
                Ok(mut spare) => {
                    spare.clear();
                    spare
                }
                Err(_) => Vec::with_capacity(CHUNK),
            };
            let full = std::mem::replace(&mut self.filling, next);
            self.send(ToWriter::Bytes(full))?;
        }
        Ok(())
    }

    fn send(&mut self, message: ToWriter) -> io::Result<()> {
        let sent = match &self.to_writer {
            Some(to_writer) => to_writer.send(message).is_ok(),
            None => false,
        };
        if sent { Ok(()) } else { Err(self.stopped()) }
    }

    /// Why the writing thread stopped early.
    fn stopped(&mut self) -> io::Error {
        self.to_writer = None;
        match self.thread.take().map(thread::JoinHandle::join) {
            Some(Ok(Err(err))) => err,
            Some(Err(_)) => io::Error::other("the writing thread panicked"),
            _ => io::Error::other("the writing thread stopped"),
        }
    }

    fn finish(mut self) -> io::Result<W> {
        if !self.filling.is_empty() {
            let last = std::mem::take(&mut self.filling);
            self.send(ToWriter::Bytes(last))?;
        }
        self.send(ToWriter::Finish)?;
        self.to_writer = None;
        match self.thread.take().map(thread::JoinHandle::join) {
            Some(Ok(Ok(Some(inner)))) => Ok(inner),
            Some(Ok(Err(err))) => Err(err),
            Some(Err(_)) => Err(io::Error::other("the writing thread panicked")),
            _ => Err(io::Error::other("the writing thread stopped")),
        }
    }
}

impl<W> Drop for Background<W> {
    /// Thrown away unfinished: the thread is told so (the channel closes) and waited for, so
    /// nothing is written once the caller has moved on (to removing a temp file, say).
    fn drop(&mut self) {
        self.to_writer = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where an [`EventWriter`]'s bytes go.
enum Sink<W: Write> {
    /// Compressed and written on the caller's thread.
    Inline(Encoder<io::BufWriter<W>>),
    /// Compressed and written on a thread of their own.
    Background(Background<W>),
}

/// Writes events in one format and compression.
pub struct EventWriter<W: Write> {
    out: Sink<W>,
    format: InputFormat,
    events: u64,
    bytes: u64,
    /// Where events made by compaction are serialised, kept between them.
    scratch: Vec<u8>,
    /// What the output format could not carry, event by event (protobuf only).
    notes: Vec<WriteNote>,
    /// Events handed to the writer, written or not.
    seen: u64,
    /// The first frame written over the official client's limit, and how many were.
    over_limit: Option<(OverLimit, u64)>,
}

/// A frame written whole, but over [`crate::read::CLIENT_FRAME_LIMIT`]: the official client
/// ends the stream at it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverLimit {
    /// 0-based index of the event among those handed to the writer.
    pub index: u64,
    pub event_type: Option<String>,
    /// A protobuf frame's bytes, its 4-byte length included; an SSE frame's UTF-16 units.
    pub len: u64,
    /// The frame is SSE (else protobuf).
    pub sse: bool,
}

impl OverLimit {
    /// What a user is told of the first such frame of `count`.
    pub fn warning(&self, count: u64) -> String {
        let ty = self
            .event_type
            .as_deref()
            .unwrap_or("an event with no type");
        let more = match count {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", plural(n - 1, "frame")),
        };
        if self.sse {
            return format!(
                "event {} ({ty}) is an SSE frame of {} UTF-16 units{more}, over the 10 MiB \
                 that the official client buffers: @ag-ui/client ends the stream there when a \
                 read leaves more than that waiting (nothing is lost)",
                self.index, self.len
            );
        }
        format!(
            "event {} ({ty}) is a protobuf frame of {} bytes{more}, over the 10 MiB that the \
             official client reads: @ag-ui/client ends the stream there (nothing is lost; \
             an SSE copy reaches it whole)",
            self.index, self.len
        )
    }
}

/// Something of an event the output format cannot carry: said, never dropped in silence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteNote {
    /// 0-based index of the event among those handed to the writer.
    pub index: u64,
    /// Its `type`, if it has one.
    pub event_type: Option<String>,
    /// What was left out: the whole event (`written` false) or these JSON Pointers.
    pub lost: Vec<String>,
    pub written: bool,
    pub message: String,
}

/// Why a compaction written with these notes is refused, if any: what the output format could
/// not carry would be lost, where a compaction keeps everything the stream holds.
pub fn refusal_for_losses(notes: &[WriteNote], format: InputFormat) -> Option<String> {
    let first = notes.first()?;
    let ty = first
        .event_type
        .as_deref()
        .unwrap_or("an event with no type");
    let more = match notes.len() - 1 {
        0 => String::new(),
        1 => "; and 1 more event".to_owned(),
        n => format!("; and {n} more events"),
    };
    Some(format!(
        "the {format} output cannot carry all of it (event {} ({ty}): {}{more}), which would \
         be lost (write it in another format, or see each loss with `agui-lens cat FILE -o \
         x.pb`)",
        first.index, first.message
    ))
}

impl<W: Write> EventWriter<W> {
    /// A writer that compresses and writes on the caller's thread.
    pub fn new(inner: W, format: InputFormat, compression: Compression) -> io::Result<Self> {
        Ok(Self::with(
            Sink::Inline(Encoder::new(inner, compression)?),
            format,
        ))
    }

    fn with(out: Sink<W>, format: InputFormat) -> Self {
        EventWriter {
            out,
            format,
            events: 0,
            bytes: 0,
            scratch: Vec::new(),
            notes: Vec::new(),
            seen: 0,
            over_limit: None,
        }
    }

    /// What the output format could not carry so far, event by event; taken, so each note
    /// is reported once.
    pub fn take_notes(&mut self) -> Vec<WriteNote> {
        std::mem::take(&mut self.notes)
    }

    /// The first protobuf frame written over the official client's limit, with how many
    /// were, if any.
    pub fn over_limit(&self) -> Option<(&OverLimit, u64)> {
        self.over_limit
            .as_ref()
            .map(|(first, count)| (first, *count))
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
        match &mut self.out {
            Sink::Inline(out) => out.write_all(bytes),
            Sink::Background(out) => out.write_all(bytes),
        }
    }

    fn write_event(&mut self, text: &[u8]) -> io::Result<()> {
        self.seen += 1;
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
                let mut lines = 0;
                for line in text.split(|&b| b == b'\n') {
                    self.put(b"data: ")?;
                    self.put(line)?;
                    self.put(b"\n")?;
                    lines += 1;
                }
                self.put(b"\n")?;
                // What the client holds before the frame's last LF: a UTF-16 unit is one byte
                // or more, so only a frame that long in bytes is counted.
                let bytes = text.len() as u64 + 6 * lines;
                if bytes > crate::read::CLIENT_FRAME_LIMIT {
                    let len = crate::read::utf16_len(text) + 6 * lines;
                    if len > crate::read::CLIENT_FRAME_LIMIT {
                        // Only the type is read: the event is large.
                        #[derive(serde::Deserialize)]
                        struct Typed<'a> {
                            #[serde(borrow, rename = "type")]
                            ty: Option<std::borrow::Cow<'a, str>>,
                        }
                        let ty = || {
                            let typed = serde_json::from_slice::<Typed<'_>>(text).ok()?;
                            Some(typed.ty?.into_owned())
                        };
                        self.note_over_limit(ty, len, true);
                    }
                }
            }
            InputFormat::Proto => return self.write_proto(text),
        }
        self.events += 1;
        Ok(())
    }

    /// Counts a frame over the official client's limit, and keeps the first.
    /// `event_type` is asked only of the first.
    fn note_over_limit(
        &mut self,
        event_type: impl FnOnce() -> Option<String>,
        len: u64,
        sse: bool,
    ) {
        match &mut self.over_limit {
            Some((_, count)) => *count += 1,
            None => {
                let first = OverLimit {
                    index: self.seen - 1,
                    event_type: event_type(),
                    len,
                    sse,
                };
                self.over_limit = Some((first, 1));
            }
        }
    }

    /// One event as a protobuf frame, with a note of anything the message cannot carry; an
    /// event with no protobuf form is not written, and noted.
    fn write_proto(&mut self, text: &[u8]) -> io::Result<()> {
        let index = self.seen - 1;
        let value: Result<Value, _> = serde_json::from_slice(text);
        let type_of = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_owned);
        let event_type = match &value {
            Ok(v) => type_of(v),
            // One holding half a UTF-16 pair is named too.
            Err(_) => crate::check::parse::value_keeping_halves(text)
                .ok()
                .and_then(|v| type_of(&v)),
        };
        let encoded = match value {
            Ok(value) => proto::encode_event(&value),
            // Half a UTF-16 pair is JSON, but no protobuf string (UTF-8) holds it.
            Err(_)
                if let Some((_, half)) = std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| crate::read::halves::replace_lone(t, |_| String::new())) =>
            {
                Err(format!(
                    "it holds {half}, half a UTF-16 surrogate pair, which a protobuf string \
                     (UTF-8) cannot carry"
                ))
            }
            Err(err) => Err(format!("it is not JSON ({err})")),
        };
        match encoded {
            Ok(encoded) => {
                let mut frame = std::mem::take(&mut self.scratch);
                frame.clear();
                proto::push_frame(&encoded.bytes, &mut frame);
                let len = frame.len() as u64;
                if len > crate::read::CLIENT_FRAME_LIMIT {
                    self.note_over_limit(|| event_type.clone(), len, false);
                }
                let put = self.put(&frame);
                self.scratch = frame;
                put?;
                self.events += 1;
                // A key written twice: JSON readers keep the last, and so does the message,
                // which has one field for it.
                let repeated = crate::read::dupkeys::first_repeated(text);
                if !encoded.lost.is_empty() || repeated.is_some() {
                    #[derive(PartialEq)]
                    enum Loss {
                        LeftOut,
                        Rounded,
                        Null,
                        Added,
                    }
                    let loss = |p: &String| {
                        if encoded.rounded.contains(p) {
                            Loss::Rounded
                        } else if encoded.nulls.contains(p) {
                            Loss::Null
                        } else if encoded.added.iter().any(|(added, _)| added == p) {
                            Loss::Added
                        } else {
                            Loss::LeftOut
                        }
                    };
                    let named = |kind: Loss| {
                        encoded
                            .lost
                            .iter()
                            .filter(|p| loss(p) == kind)
                            .map(|p| {
                                if p.is_empty() {
                                    "the event"
                                } else {
                                    p.as_str()
                                }
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let mut said = Vec::new();
                    let (left_out, rounded, nulls) = (
                        named(Loss::LeftOut),
                        named(Loss::Rounded),
                        named(Loss::Null),
                    );
                    if !left_out.is_empty() {
                        said.push(format!(
                            "the protobuf form has no place for {left_out}: left out"
                        ));
                    }
                    if !nulls.is_empty() {
                        said.push(format!(
                            "the protobuf form has no null for {nulls}: left out, which some \
                             readers do not take as the same"
                        ));
                    }
                    let added = encoded
                        .added
                        .iter()
                        .map(|(path, value)| format!("{path}: it reads back as {value}"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    if !added.is_empty() {
                        said.push(format!("the protobuf form cannot leave out {added}"));
                    }
                    if !rounded.is_empty() {
                        said.push(format!(
                            "the protobuf form carries numbers as doubles, which do not hold \
                             {rounded}: written rounded"
                        ));
                    }
                    let mut lost = encoded.lost;
                    if let Some(repeated) = repeated {
                        let object = match repeated.pointer.as_str() {
                            "" => "the event",
                            pointer => pointer,
                        };
                        said.push(format!(
                            "the protobuf form holds one value of a key: an earlier `{}` in \
                             {object} is left out",
                            crate::report::human::visible(&repeated.key)
                        ));
                        let mut pointer = repeated.pointer;
                        crate::protocol::patch::push_token(&mut pointer, &repeated.key);
                        lost.push(pointer);
                    }
                    let message = said.join("; ");
                    self.notes.push(WriteNote {
                        index,
                        event_type,
                        lost,
                        written: true,
                        message,
                    });
                }
            }
            Err(why) => {
                let message = format!("not written: {why}");
                self.notes.push(WriteNote {
                    index,
                    event_type,
                    lost: Vec::new(),
                    written: false,
                    message,
                });
            }
        }
        Ok(())
    }

    /// Ends the output (closing a JSON array, finishing compression) and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        if self.format == InputFormat::Json {
            let close: &[u8] = if self.events == 0 { b"[]\n" } else { b"\n]\n" };
            self.put(close)?;
        }
        match self.out {
            Sink::Inline(out) => out.finish(),
            Sink::Background(out) => out.finish(),
        }
    }
}

impl<W: Write + Send + 'static> EventWriter<W> {
    /// A writer whose compressing and writing happen on a thread of its own, beside the
    /// caller's (which then only frames events).
    pub fn background(inner: W, format: InputFormat, compression: Compression) -> io::Result<Self> {
        Ok(Self::with(
            Sink::Background(Background::new(inner, compression)?),
            format,
        ))
    }
}

/// Appends `text` as a JSON string, escaped exactly as `serde_json` escapes it (`\"`, `\\`,
/// the short forms of \b \f \n \r \t, `\u00XX` for other control characters, nothing else),
/// so what it writes is byte for byte what serialising a `Value` writes. The bytes to escape
/// are the ones a JSON string cannot hold raw, found a vector at a time (as the delta scanner
/// finds them), and the runs between them, nearly all of a merged message's text, are copied
/// whole.
pub fn write_json_str(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut clean = 0; // bytes[clean..] are still to copy
    while let Some(at) = special_byte(bytes, clean) {
        let i = clean + at;
        out.extend_from_slice(&bytes[clean..i]);
        let b = bytes[i];
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
    out.extend_from_slice(&bytes[clean..]);
    out.push(b'"');
}

/// The JSON text `raw` on one line: the whitespace between its tokens taken out, nothing
/// else changed (a string cannot hold a raw line break, so every one is between tokens).
pub fn on_one_line(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in raw {
        if in_string {
            out.push(b);
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            in_string = b == b'"';
            out.push(b);
        }
    }
    out
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

    #[test]
    fn one_line_takes_out_only_the_space_between_tokens() {
        let text = b"{\n  \"a\": 1E2,\r\n  \"a\" : \"x \\\" y\\\\\",\n\t\"b\": [1, 2]\n}";
        assert_eq!(
            String::from_utf8(on_one_line(text)).unwrap(),
            r#"{"a":1E2,"a":"x \" y\\","b":[1,2]}"#
        );
    }

    /// Strings are written byte for byte as serde_json writes them: every character that
    /// needs escaping, at every position relative to the 16-byte runs checked at once.
    #[test]
    fn json_strings_are_escaped_as_serde_escapes_them() {
        let specials = [
            "\"", "\\", "\u{8}", "\u{c}", "\n", "\r", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é", "🦀",
            "/",
        ];
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

    /// Events of every size, small ones to several times the hand-over chunk.
    fn events() -> Vec<Vec<u8>> {
        (0..300)
            .map(|i: usize| {
                let text = "x".repeat(if i % 50 == 7 {
                    3 * CHUNK + i
                } else {
                    i * 37 % 2000
                });
                serde_json::to_vec(&serde_json::json!({"type": "CUSTOM", "i": i, "v": text}))
                    .unwrap()
            })
            .collect()
    }

    fn decompressed(bytes: &[u8], compression: Compression) -> Vec<u8> {
        let mut out = Vec::new();
        match compression {
            Compression::None => out.extend_from_slice(bytes),
            Compression::Gzip => {
                io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out).unwrap();
            }
            #[cfg(feature = "zstd")]
            Compression::Zstd => out = zstd::decode_all(bytes).unwrap(),
            #[cfg(not(feature = "zstd"))]
            Compression::Zstd => unreachable!("no zstd in this build"),
        }
        out
    }

    /// The compressions this build writes.
    const COMPRESSIONS: &[Compression] = &[
        Compression::None,
        Compression::Gzip,
        #[cfg(feature = "zstd")]
        Compression::Zstd,
    ];

    /// Handed to a thread of its own, the output is what writing it in place gives, in
    /// every format and compression.
    #[test]
    fn background_writing_writes_what_inline_writing_writes() {
        for format in [InputFormat::Jsonl, InputFormat::Json, InputFormat::Sse] {
            for &compression in COMPRESSIONS {
                let mut inline = EventWriter::new(Vec::new(), format, compression).unwrap();
                let mut background =
                    EventWriter::background(Vec::new(), format, compression).unwrap();
                for event in events() {
                    inline.raw(&event).unwrap();
                    background.raw(&event).unwrap();
                }
                background
                    .event(&serde_json::json!({"type": "RUN_FINISHED"}))
                    .unwrap();
                inline
                    .event(&serde_json::json!({"type": "RUN_FINISHED"}))
                    .unwrap();
                assert_eq!(background.bytes(), inline.bytes());
                let (inline, background) = (inline.finish().unwrap(), background.finish().unwrap());
                let expected = decompressed(&inline, compression);
                assert!(expected.len() > 6 * CHUNK);
                assert!(
                    decompressed(&background, compression) == expected,
                    "{format:?} {compression:?}"
                );
            }
        }
    }

    /// Writes that fail after a while, as on a full disk.
    struct FullAfter(usize);

    impl Write for FullAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    "the disk is full",
                ));
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The writing thread's failure reaches the caller, as the error it was, by the time the
    /// output is finished; writing more after it neither hangs nor succeeds.
    #[test]
    fn a_failed_background_write_is_returned() {
        for limit in [0, 100, CHUNK + 5, 4 * CHUNK] {
            let mut writer =
                EventWriter::background(FullAfter(limit), InputFormat::Jsonl, Compression::None)
                    .unwrap();
            let mut failed = None;
            for event in events() {
                if let Err(err) = writer.raw(&event) {
                    failed = Some(err);
                    break;
                }
            }
            let err = match failed {
                Some(err) => err,
                None => writer.finish().err().expect("the output cannot fit"),
            };
            assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{limit}: {err}");
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
