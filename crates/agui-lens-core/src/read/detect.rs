//! Telling inputs apart: compression by magic bytes, format by extension, then by content.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::InputFormat;

/// How many bytes the format sniffer looks at, at most.
pub const SNIFF_LEN: usize = 4096;

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The file extension this compression is written with, if any.
    pub fn extension(self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            Compression::Gzip => Some("gz"),
            Compression::Zstd => Some("zst"),
        }
    }
}

/// Wraps the input in a decoder when its first bytes are a gzip or zstd header.
pub fn decompress(
    mut raw: Box<dyn Read + Send>,
) -> io::Result<(Compression, Box<dyn Read + Send>)> {
    let mut magic = Vec::with_capacity(4);
    while magic.len() < 4 {
        let mut byte = [0u8; 4];
        let want = 4 - magic.len();
        match raw.read(&mut byte[..want]) {
            Ok(0) => break,
            Ok(n) => magic.extend_from_slice(&byte[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if !GZIP_MAGIC.starts_with(&magic[..magic.len().min(2)]) && !ZSTD_MAGIC.starts_with(&magic)
        {
            break;
        }
    }
    let whole: Box<dyn Read + Send> = Box::new(io::Cursor::new(magic.clone()).chain(raw));
    if magic.starts_with(GZIP_MAGIC) {
        Ok((
            Compression::Gzip,
            Box::new(Decoded {
                inner: GzipMembers::new(whole),
                format: "gzip",
            }),
        ))
    } else if magic.starts_with(ZSTD_MAGIC) {
        Ok((Compression::Zstd, zstd_decoder(whole)?))
    } else {
        Ok((Compression::None, whole))
    }
}

#[cfg(feature = "zstd")]
fn zstd_decoder(whole: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    Ok(Box::new(Decoded {
        inner: zstd::stream::read::Decoder::new(whole)?,
        format: "zstd",
    }))
}

/// Without the `zstd` feature a zstd stream is recognised, and refused for what it is.
#[cfg(not(feature = "zstd"))]
fn zstd_decoder(_: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the input is zstd-compressed, and this build reads no zstd (the `zstd` feature)",
    ))
}

/// Gzip data of one member or more (as `cat a.gz b.gz` makes), read one member after the
/// other. What follows the last member and is none (bytes appended to a whole file) is said
/// as that: read as a member cut short, it was called a truncated file.
struct GzipMembers<R: Read> {
    member: Option<flate2::bufread::GzDecoder<io::BufReader<R>>>,
    /// What follows the last member, once found: said at every read after it (a reader that
    /// looked ahead and went on must not take it for the end).
    appended: Option<String>,
}

impl<R: Read> GzipMembers<R> {
    fn new(raw: R) -> Self {
        GzipMembers {
            // (The buffer flate2's own reader of several members takes.)
            member: Some(flate2::bufread::GzDecoder::new(
                io::BufReader::with_capacity(32 * 1024, raw),
            )),
            appended: None,
        }
    }
}

impl<R: Read> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use io::BufRead;
        if let Some(said) = &self.appended {
            return Err(io::Error::new(io::ErrorKind::InvalidData, said.clone()));
        }
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member ended whole: another follows, or nothing.
            let mut rest = self.member.take().expect("a member").into_inner();
            let next = loop {
                match rest.fill_buf() {
                    Ok(next) => break next,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if next.is_empty() {
                return Ok(0);
            }
            if next[0] != GZIP_MAGIC[0] || next.get(1).is_some_and(|&b| b != GZIP_MAGIC[1]) {
                let mut after = 0u64;
                loop {
                    let len = rest.fill_buf()?.len();
                    if len == 0 {
                        break;
                    }
                    after += len as u64;
                    rest.consume(len);
                }
                let said = format!(
                    "{after} bytes after the end of the compressed data are none: something \
                     was appended to a whole file"
                );
                self.appended = Some(said.clone());
                return Err(io::Error::new(io::ErrorKind::InvalidData, said));
            }
            self.member = Some(flate2::bufread::GzDecoder::new(rest));
        }
    }
}

/// A decoder whose errors say that the compressed data is at fault, and how.
struct Decoded<R> {
    inner: R,
    format: &'static str,
}

impl<R: Read> Read for Decoded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|err| {
            let text = err.to_string();
            let cut_short = err.kind() == io::ErrorKind::UnexpectedEof
                || text.contains("incomplete")
                || text.contains("unexpected end");
            let what = if cut_short {
                format!(
                    "the {} data ends early ({text}): the file is truncated, or was still \
                     being written",
                    self.format
                )
            } else {
                format!("the {} data is corrupt ({text})", self.format)
            };
            io::Error::new(err.kind(), what)
        })
    }
}

/// Splits `.gz` / `.zst` off a path: `a.jsonl.gz` → (`a.jsonl`, Gzip).
pub fn strip_compression_ext(path: &Path) -> (PathBuf, Compression) {
    let compression = match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if ext.eq_ignore_ascii_case("gz") => Compression::Gzip,
        Some(ext) if ext.eq_ignore_ascii_case("zst") || ext.eq_ignore_ascii_case("zstd") => {
            Compression::Zstd
        }
        _ => return (path.to_path_buf(), Compression::None),
    };
    (path.with_extension(""), compression)
}

/// The format a file name promises, if it promises one.
pub fn format_from_extension(path: &Path) -> Option<InputFormat> {
    let (stem, _) = strip_compression_ext(path);
    let ext = stem.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "jsonl" | "ndjson" => Some(InputFormat::Jsonl),
        "sse" => Some(InputFormat::Sse),
        "json" => Some(InputFormat::Json),
        "pb" => Some(InputFormat::Proto),
        _ => None,
    }
}

/// Guesses the format from the first bytes: protobuf frames by their length prefix, `[` an
/// array, `{` JSONL when its first line is a whole value and pretty-printed JSON values
/// otherwise, an SSE field name SSE. Anything else is read as JSONL, which reports what it
/// finds line by line.
pub fn sniff_format(head: &[u8]) -> InputFormat {
    if crate::protocol::proto::looks_like_frames(head) {
        return InputFormat::Proto;
    }
    let text = trim_start(head);
    if text.starts_with(b"[") {
        InputFormat::Json
    } else if text.starts_with(b"{") {
        if first_line_is_whole_value(head) {
            InputFormat::Jsonl
        } else {
            InputFormat::Json
        }
    } else if [&b"data:"[..], b"data\n", b"event:", b"id:", b"retry:", b":"]
        .iter()
        .any(|field| text.starts_with(field))
    {
        InputFormat::Sse
    } else {
        InputFormat::Jsonl
    }
}

/// Whether the first non-blank bytes open a JSON object or array.
pub fn opens_json(head: &[u8]) -> bool {
    matches!(trim_start(head).first(), Some(b'{' | b'['))
}

/// Whether the first non-blank bytes open a JSON array.
pub fn opens_array(head: &[u8]) -> bool {
    trim_start(head).first() == Some(&b'[')
}

/// Whether the first non-blank line is a whole JSON array whose first element is an object
/// with a `type`: events written as one array on one line.
pub fn first_line_is_array_of_events(head: &[u8]) -> bool {
    let text = trim_start(head);
    let line = text.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Vec<serde_json::Value>>(line).is_ok_and(|items| {
        items
            .first()
            .is_some_and(|first| first.get("type").is_some())
    })
}

/// Whether the first non-blank line holds a complete JSON value (JSONL), as opposed to the
/// start of a pretty-printed one. A first line that runs past `head` (an event longer than
/// the bytes sniffed, such as a RUN_STARTED carrying a long conversation) counts as whole
/// when what there is of it reads as the start of one JSON value: a pretty-printed value
/// breaks its first line after its first member at the latest.
pub fn first_line_is_whole_value(head: &[u8]) -> bool {
    let text = trim_start(head);
    match text.iter().position(|&b| b == b'\n') {
        Some(end) => serde_json::from_slice::<serde::de::IgnoredAny>(&text[..end]).is_ok(),
        None => serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok_or_eof(),
    }
}

/// Whether the text is JSON values one after another (the last may be cut off where the
/// text ends) of which some span lines: a line of it that is no whole value, where JSON Lines
/// would have one on each.
pub fn values_span_lines(head: &[u8]) -> bool {
    let mut values =
        serde_json::Deserializer::from_slice(head).into_iter::<serde::de::IgnoredAny>();
    let all_values = loop {
        match values.next() {
            None => break true,
            Some(Ok(_)) => {}
            Some(Err(err)) => break err.is_eof(),
        }
    };
    // The lines before the last newline are whole; the one after it may be cut off.
    let whole = match head.iter().rposition(|&b| b == b'\n') {
        Some(end) => &head[..end],
        None => return false,
    };
    all_values
        && whole
            .split(|&b| b == b'\n')
            .map(trim_start)
            .filter(|line| !line.is_empty())
            .any(|line| serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err())
}

/// A parse that succeeded, or failed only because the text ended.
trait OkOrEof {
    fn is_ok_or_eof(&self) -> bool;
}

impl<T> OkOrEof for Result<T, serde_json::Error> {
    fn is_ok_or_eof(&self) -> bool {
        match self {
            Ok(_) => true,
            Err(err) => err.is_eof(),
        }
    }
}

/// The part of a head that is the same however the input's bytes arrived: through the end of
/// the first non-blank line when that line is whole in it, else all of it. Peeking stops once
/// a first line is whole (a live stream may send nothing more for a while), so how much
/// follows that line in the head depends on the pieces the bytes came in.
pub fn settled(head: &[u8]) -> &[u8] {
    let start = head.len() - trim_start(head).len();
    match head[start..].iter().position(|&b| b == b'\n') {
        Some(end) => &head[..start + end + 1],
        None => head,
    }
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// What bytes that hold no AG-UI event are, judged from their first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonStream {
    Empty,
    /// A second byte-order mark, which hides the text behind it.
    Bom,
    Binary,
    /// A web page: a login or error page saved in place of the stream.
    Html,
    /// The body of a refused request: a JSON error object or a list of validation errors.
    ErrorBody,
    /// A capture tool's note that the response was no event stream.
    CapturedBody,
    /// A raw HTTP response, headers and all.
    RawHttp,
    /// JSON that is no event: a sidecar, a configuration, a list of other things.
    OtherJson,
    /// AG-UI events none of which was read as one: each over the line cap, read in a format
    /// that does not fit, or carrying its type under another key than `type`.
    MisreadEvents,
    /// What agui-lens itself writes beside recordings: findings (`check --format jsonl`, a
    /// proxy's or a suite's `findings.jsonl`) or a report (`--format json`, `outcome.json`).
    Report,
    /// Any other text.
    Text,
}

impl NonStream {
    /// Whether such a file, met on a walk, is plainly no capture (a sidecar beside the
    /// captures) rather than a capture of something that went wrong. What agui-lens writes
    /// beside recordings is one under any name; other JSON only under a `.json` name: a file
    /// named as a stream (`.jsonl`, `.sse`, …) that holds a bare JSON body is the capture of
    /// an answer that was no stream.
    pub fn is_plainly_no_capture(self, name: &str) -> bool {
        match self {
            NonStream::Report => true,
            NonStream::OtherJson => named_as_json_document(name),
            _ => false,
        }
    }
}

/// Whether a file's name says it holds one JSON document (`x.json`, `x.json.gz`), as a
/// sidecar's does, rather than a stream.
fn named_as_json_document(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let name = [".gz", ".zst"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(&name);
    name.ends_with(".json")
}

/// Describes bytes that hold no AG-UI event, for `framing/no-events`.
pub fn describe_non_stream(head: &[u8]) -> String {
    classify_non_stream(head).1
}

/// What bytes that hold no AG-UI event are, and a sentence saying so.
pub fn classify_non_stream(head: &[u8]) -> (NonStream, String) {
    let text = trim_start(head);
    if text.is_empty() {
        return (NonStream::Empty, "the input is empty".into());
    }
    if text.starts_with(b"\xEF\xBB\xBF") {
        return (
            NonStream::Bom,
            "the input starts with a second byte-order mark (U+FEFF); only one is stripped".into(),
        );
    }
    if let Some(at) = text_not_utf8(text) {
        return (
            NonStream::Binary,
            format!(
                "it is text, but not UTF-8 (byte {at}, 0x{:02X}): saved in another encoding, \
                 such as Latin-1 or Windows-1252? AG-UI events are UTF-8",
                text[at]
            ),
        );
    }
    if looks_binary(text) {
        let bytes: Vec<String> = text.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return (
            NonStream::Binary,
            format!(
                "it looks like binary data, not text (it starts with the bytes {})",
                bytes.join(" ")
            ),
        );
    }
    let lower: Vec<u8> = text.iter().take(256).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<!doctype html")
        || lower.starts_with(b"<html")
        || lower.starts_with(b"<")
    {
        let title = html_title(text);
        let text = match title {
            Some(title) => format!(
                "it looks like an HTML page (title \"{title}\"), e.g. a login or error page saved instead of the stream"
            ),
            None => {
                "it looks like an HTML page, e.g. a login or error page saved instead of the stream"
                    .into()
            }
        };
        return (NonStream::Html, text);
    }
    let first_line = text.split(|&b| b == b'\n').next().unwrap_or_default();
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(first_line) {
        return describe_json(&value);
    }
    // A pretty-printed value spans lines: the first whole value of the head, if it holds one.
    let mut values = serde_json::Deserializer::from_slice(text).into_iter::<serde_json::Value>();
    match values.next() {
        Some(Ok(value)) => return describe_json(&value),
        Some(Err(err)) if err.is_eof() && matches!(text[0], b'{' | b'[') => {
            return (
                NonStream::OtherJson,
                "it looks like a long JSON document that holds no AG-UI events".into(),
            );
        }
        _ => {}
    }
    if text.starts_with(b"HTTP/") {
        return (
            NonStream::RawHttp,
            "it looks like a raw HTTP response with headers".into(),
        );
    }
    let printable = String::from_utf8_lossy(&first_line[..first_line.len().min(80)]).into_owned();
    (NonStream::Text, format!("it starts with {printable:?}"))
}

/// Whether an input is binary, decided once from its first bytes whatever its size: a known
/// binary header (an executable, an archive, an image, a database), or a head in which more
/// than one byte in ten is no text (NUL, control characters other than tab, line ends, form
/// feed and escape, bytes that are not UTF-8). A stream with a stray NUL or a broken character
/// is still text, and is read and reported line by line.
pub fn is_binary(head: &[u8]) -> bool {
    const MAGIC: &[&[u8]] = &[
        b"\x7fELF",            // ELF executables and libraries
        b"\xcf\xfa\xed\xfe",   // Mach-O, 64-bit
        b"\xce\xfa\xed\xfe",   // Mach-O, 32-bit
        b"\xca\xfe\xba\xbe",   // Mach-O universal, Java classes
        b"PK\x03\x04",         // zip, jar, docx
        b"\x89PNG",            // PNG
        b"\xff\xd8\xff",       // JPEG
        b"GIF8",               // GIF
        b"%PDF-",              // PDF
        b"SQLite format 3\0",  // SQLite
        b"\0asm",              // WebAssembly
        b"\xfd7zXZ\0",         // xz
        b"7z\xbc\xaf\x27\x1c", // 7-zip
    ];
    if head.is_empty() {
        return false;
    }
    if MAGIC.iter().any(|magic| head.starts_with(magic)) {
        return true;
    }
    let mut odd = 0usize;
    let mut rest = head;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                odd += text
                    .bytes()
                    .filter(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
                    .count();
                break;
            }
            Err(err) => {
                let (valid, after) = rest.split_at(err.valid_up_to());
                odd += valid
                    .iter()
                    .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
                    .count();
                match err.error_len() {
                    Some(len) => {
                        odd += len;
                        rest = &after[len..];
                    }
                    // A character cut at the end of the head is still text.
                    None => break,
                }
            }
        }
    }
    odd * 10 > head.len()
}

/// NUL bytes, or bytes that are not UTF-8 text, in the first bytes.
/// Where bytes that read as text (no NUL, nearly all printable ASCII) stop being UTF-8: a
/// stream saved in a one-byte encoding, whose letters beyond ASCII are no UTF-8.
fn text_not_utf8(head: &[u8]) -> Option<usize> {
    let sample = &head[..head.len().min(512)];
    let err = std::str::from_utf8(sample).err()?;
    err.error_len()?;
    let plain = sample
        .iter()
        .filter(|&&b| b.is_ascii_graphic() || b.is_ascii_whitespace())
        .count();
    (!sample.contains(&0) && plain * 10 >= sample.len() * 9).then(|| err.valid_up_to())
}

fn looks_binary(head: &[u8]) -> bool {
    let sample = &head[..head.len().min(512)];
    if sample.contains(&0) {
        return true;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => false,
        // A multi-byte character cut at the end of the sample is still text.
        Err(err) => err.error_len().is_some(),
    }
}

fn describe_json(value: &serde_json::Value) -> (NonStream, String) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(Value::String(body)) = map.get("_non_sse_body") {
                let inner = serde_json::from_str::<Value>(body)
                    .map(|v| describe_json(&v).1)
                    .unwrap_or_else(|_| "plain text".into());
                return (
                    NonStream::CapturedBody,
                    format!(
                        "it is a captured HTTP response body that was not an event stream ({inner})"
                    ),
                );
            }
            let mut keys: Vec<&str> = map.keys().map(String::as_str).take(6).collect();
            if map.len() > keys.len() {
                keys.push("…");
            }
            let text = |key: &str| map.get(key).is_some_and(Value::is_string);
            // A finding names one of agui-lens's rules: an error body of the same shape
            // (a policy's `rule`) is still an error body.
            let our_rule = map
                .get("rule")
                .and_then(Value::as_str)
                .is_some_and(|rule| crate::check::catalog::RuleId::from_name(rule).is_some());
            if our_rule && text("severity") && text("message") {
                return (
                    NonStream::Report,
                    "it holds agui-lens findings, one per line, not events".into(),
                );
            }
            if map.get("diagnostics").is_some_and(Value::is_array)
                && (map.get("summary").is_some_and(Value::is_object) || map.contains_key("passed"))
            {
                return (
                    NonStream::Report,
                    "it is an agui-lens report, not a stream".into(),
                );
            }
            // A `status` says an error only when it is one: a sidecar's `"status": 200` or
            // `"status": "ok"` is no error body.
            let error_status = |status: &Value| match status {
                Value::Number(n) => n.as_u64().is_some_and(|n| n >= 400),
                Value::String(s) => {
                    let s = s.trim().to_ascii_lowercase();
                    s.parse::<u64>().map_or_else(
                        |_| {
                            !matches!(
                                s.as_str(),
                                "ok" | "success"
                                    | "succeeded"
                                    | "done"
                                    | "complete"
                                    | "completed"
                                    | "finished"
                                    | "recorded"
                            )
                        },
                        |n| n >= 400,
                    )
                }
                _ => false,
            };
            let error_like = map.iter().any(|(k, v)| match k.as_str() {
                "error" | "errors" | "detail" | "details" | "message" => true,
                "status" => error_status(v),
                _ => false,
            });
            if error_like {
                (
                    NonStream::ErrorBody,
                    format!(
                        "it looks like an HTTP error body: a JSON object with keys {}",
                        keys.join(", ")
                    ),
                )
            } else if let Some(Value::String(ty)) = map.get("type").filter(|ty| {
                ty.as_str()
                    .and_then(crate::protocol::event::EventType::from_name)
                    .is_some()
            }) {
                // Events none of which was read: each line over the cap, or a framing other
                // than the one they were read as (a forced `--input-format` that does not fit).
                (
                    NonStream::MisreadEvents,
                    format!(
                        "its JSON lines are AG-UI events ({ty:?} first), but none was read as \
                         one: a line over --max-line is skipped, and a format that does not fit \
                         finds none (check --input-format, or leave it out to have the format \
                         found)"
                    ),
                )
            } else if let Some((key, ty)) = map.iter().find_map(|(key, value)| {
                value
                    .as_str()
                    .filter(|v| crate::protocol::event::EventType::from_name(v).is_some())
                    .map(|v| (key, v))
            }) {
                // An event type under another key: events a producer named wrongly, not a
                // sidecar (which names no event type).
                (
                    NonStream::MisreadEvents,
                    format!(
                        "it holds JSON objects that carry an AG-UI event type under `{key}` \
                         ({ty:?}), where an event carries it under `type`"
                    ),
                )
            } else if let Some(Value::String(ty)) = map.get("type") {
                (
                    NonStream::OtherJson,
                    format!(
                        "it holds JSON objects whose `type` ({ty:?}) is no AG-UI event type (keys {})",
                        keys.join(", ")
                    ),
                )
            } else if keys.is_empty() {
                (
                    NonStream::OtherJson,
                    "it holds an empty JSON object ({})".into(),
                )
            } else {
                (
                    NonStream::OtherJson,
                    format!(
                        "it holds JSON objects without a `type` (keys {})",
                        keys.join(", ")
                    ),
                )
            }
        }
        Value::Array(items) => {
            let error_like = items.first().and_then(Value::as_object).is_some_and(|o| {
                o.contains_key("loc") || o.contains_key("msg") || o.contains_key("message")
            });
            if error_like {
                (
                    NonStream::ErrorBody,
                    "it looks like an HTTP error body: a JSON array of validation errors".into(),
                )
            } else {
                (
                    NonStream::OtherJson,
                    format!("it is a JSON array of {} non-event values", items.len()),
                )
            }
        }
        other => (
            NonStream::OtherJson,
            format!("it holds a bare JSON value ({})", json_kind(other)),
        ),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn html_title(text: &[u8]) -> Option<String> {
    let lower: Vec<u8> = text.iter().map(u8::to_ascii_lowercase).collect();
    let start = memchr::memmem::find(&lower, b"<title>")? + "<title>".len();
    let end = start + memchr::memmem::find(&lower[start..], b"</title>")?;
    let title = String::from_utf8_lossy(&text[start..end]).trim().to_owned();
    (!title.is_empty()).then_some(title)
}

/// Whether `head` names an AG-UI event the way a stream in text does: `"type"`, a colon and
/// an event type's name in quotes (JSONL, SSE, JSON pretty-printed or not). A walk asks it of
/// a file it does not read by its name, to say that it holds a stream.
pub fn names_an_event(head: &[u8]) -> bool {
    const KEY: &[u8] = b"\"type\"";
    let skip_space = |at: usize| {
        at + head[at..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count()
    };
    let mut from = 0;
    while let Some(found) = head[from..].windows(KEY.len()).position(|w| w == KEY) {
        let after = from + found + KEY.len();
        from = after;
        let colon = skip_space(after);
        if head.get(colon) != Some(&b':') {
            continue;
        }
        let open = skip_space(colon + 1);
        if head.get(open) != Some(&b'"') {
            continue;
        }
        let name = &head[open + 1..];
        let Some(end) = name.iter().position(|&b| b == b'"') else {
            continue;
        };
        if std::str::from_utf8(&name[..end])
            .ok()
            .and_then(crate::protocol::event::EventType::from_name)
            .is_some()
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        // A first line longer than what is sniffed is one event, not a pretty-printed one.
        let mut long = br#"{"type":"RUN_STARTED","input":{"messages":[{"content":""#.to_vec();
        long.resize(SNIFF_LEN, b'x');
        assert_eq!(sniff_format(&long), InputFormat::Jsonl);
        assert_eq!(
            sniff_format(b"{\n  \"type\": \"RUN_STARTED\""),
            InputFormat::Json
        );
        assert_eq!(sniff_format(b"  [{}]"), InputFormat::Json);
        assert_eq!(sniff_format(b"{\"type\":1}\n"), InputFormat::Jsonl);
        assert_eq!(sniff_format(b": comment\n"), InputFormat::Sse);
        assert_eq!(sniff_format(b"data: {}\n"), InputFormat::Sse);
        assert_eq!(sniff_format(b"event: x\n"), InputFormat::Sse);
        assert_eq!(sniff_format(b"<html>"), InputFormat::Jsonl);
        assert!(first_line_is_whole_value(b"{\"a\":1}\n{"));
        assert!(!first_line_is_whole_value(b"{\n  \"a\": 1\n}"));
    }

    #[test]
    fn binary_is_judged_by_magic_numbers_and_the_share_of_non_text_bytes() {
        assert!(is_binary(
            b"\x7fELF\x02\x01\x01\0{\"type\":\"RUN_STARTED\"}\n"
        ));
        assert!(is_binary(b"PK\x03\x04 almost text after"));
        let noisy: Vec<u8> = (0..400u32).map(|i| (i * 97 % 256) as u8).collect();
        assert!(is_binary(&noisy));
        // A stream with a stray NUL or a broken character is text, read line by line.
        assert!(!is_binary(
            b"{\"type\":\"RUN_STARTED\"}\n{\"name\":\"a\0b\"}\n"
        ));
        assert!(!is_binary(b"{\"type\":\"CUSTOM\",\"name\":\"\xff\"}\n"));
        assert!(!is_binary(
            "data: {\"delta\":\"caf\u{e9} \u{1f600}\"}\r\n\r\n".as_bytes()
        ));
        // A character cut at the end of the head is not counted against it.
        assert!(!is_binary(&"\u{e9}".as_bytes()[..1]));
        assert!(!is_binary(b""));
    }

    #[test]
    fn descriptions() {
        assert_eq!(describe_non_stream(b""), "the input is empty");
        assert!(
            describe_non_stream(b"<!DOCTYPE html><html><head><title>Sign in</title>")
                .contains("title \"Sign in\"")
        );
        assert!(
            describe_non_stream(b"{\"error\":\"bad\",\"detail\":[]}").contains("HTTP error body")
        );
        // A status says an error only when it is one: a sidecar's success is no error body.
        for sidecar in [
            &br#"{"recordedAt":"2026-11-29","agent":"x","status":200}"#[..],
            br#"{"status":"ok","events":12}"#,
        ] {
            let said = describe_non_stream(sidecar);
            assert!(!said.contains("HTTP error body"), "{said}");
            assert!(
                classify_non_stream(sidecar)
                    .0
                    .is_plainly_no_capture("run.meta.json"),
                "{said}"
            );
            // Under a stream's name, the same JSON is an answer that was no stream.
            for name in ["run.jsonl", "run.sse", "run.ndjson.gz"] {
                assert!(!classify_non_stream(sidecar).0.is_plainly_no_capture(name));
            }
        }
        for error in [
            &br#"{"status":500}"#[..],
            br#"{"status":"error","id":1}"#,
            br#"{"status":"404"}"#,
        ] {
            assert!(describe_non_stream(error).contains("HTTP error body"));
        }
        let many = br#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"error":"x"}"#;
        assert!(
            describe_non_stream(many).contains("…"),
            "{}",
            describe_non_stream(many)
        );
        assert!(
            describe_non_stream(b"[{\"type\":\"missing\",\"loc\":[\"threadId\"]}]")
                .contains("validation errors")
        );
        let wrapped = br#"{"_non_sse_body": "{\"error\":\"x\"}"}"#;
        assert!(describe_non_stream(wrapped).contains("captured HTTP response body"));
        assert!(describe_non_stream(b"\x8f\x3a\x00\x01garbage").starts_with(
            "it looks like binary data, not text (it starts with the bytes 8f 3a 00 01"
        ));
        assert!(!describe_non_stream("caf\u{e9}".as_bytes()).contains("binary"));
    }

    /// What agui-lens writes beside recordings is plainly no capture; an error body that
    /// happens to have a `message` is still one.
    #[test]
    fn our_own_reports_are_no_capture() {
        let finding =
            br#"{"rule":"lifecycle/unterminated-run","severity":"error","path":"a","message":"m"}"#;
        let report = br#"{"diagnostics":[],"files":[],"summary":{"files":1}}"#;
        let outcome =
            br#"{"name":"case","passed":false,"status":500,"error":"x","diagnostics":[]}"#;
        for text in [&finding[..], report, outcome] {
            assert_eq!(classify_non_stream(text).0, NonStream::Report);
            for name in ["findings.jsonl", "outcome.json", "report.JSON.zst"] {
                assert!(classify_non_stream(text).0.is_plainly_no_capture(name));
            }
        }
        let refused = br#"{"message":"bad request","status":400}"#;
        assert_eq!(classify_non_stream(refused).0, NonStream::ErrorBody);
        let policy = br#"{"rule":"no-pii","severity":"error","message":"blocked"}"#;
        assert_ne!(classify_non_stream(policy).0, NonStream::Report);
        assert!(!NonStream::ErrorBody.is_plainly_no_capture("error.json"));
    }

    #[test]
    fn compression_by_magic() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"{\"a\":1}\n").unwrap();
        let bytes = gz.finish().unwrap();
        let (kind, mut reader) = decompress(Box::new(io::Cursor::new(bytes.clone()))).unwrap();
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert_eq!((kind, out.as_str()), (Compression::Gzip, "{\"a\":1}\n"));

        #[cfg(feature = "zstd")]
        {
            let bytes = zstd::encode_all(&b"{\"b\":2}\n"[..], 1).unwrap();
            let (kind, mut reader) = decompress(Box::new(io::Cursor::new(bytes))).unwrap();
            let mut out = String::new();
            reader.read_to_string(&mut out).unwrap();
            assert_eq!((kind, out.as_str()), (Compression::Zstd, "{\"b\":2}\n"));
        }

        let (kind, mut reader) = decompress(Box::new(io::Cursor::new(b"x".to_vec()))).unwrap();
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert_eq!((kind, out.as_str()), (Compression::None, "x"));

        // Members one after the other are one stream; what follows the last and is none is
        // said as that, and a member cut short as a truncated file.
        let read = |bytes: Vec<u8>| {
            let (_, mut reader) = decompress(Box::new(io::Cursor::new(bytes))).unwrap();
            let mut out = String::new();
            reader.read_to_string(&mut out).map(|_| out)
        };
        let two = [bytes.clone(), bytes.clone()].concat();
        assert_eq!(read(two).unwrap(), "{\"a\":1}\n{\"a\":1}\n");
        let appended = [bytes.clone(), b"garbage\n".to_vec()].concat();
        let said = read(appended).unwrap_err().to_string();
        assert!(
            said.contains("8 bytes after the end of the compressed data are none"),
            "{said}"
        );
        let cut = bytes[..bytes.len() - 3].to_vec();
        let said = read(cut).unwrap_err().to_string();
        assert!(said.contains("ends early"), "{said}");
    }

    #[test]
    fn an_event_is_named_in_any_text_layout() {
        assert!(names_an_event(br#"{"type":"RUN_STARTED","threadId":"t"}"#));
        assert!(names_an_event(
            b"data: {\"type\" : \"TEXT_MESSAGE_CONTENT\"}\n\n"
        ));
        assert!(names_an_event(
            b"[\n  {\n    \"runId\": \"r\",\n    \"type\":\n \"RUN_FINISHED\""
        ));
        assert!(!names_an_event(br#"{"type":"object","properties":{}}"#));
        assert!(!names_an_event(b"The \"type\" of each is told below."));
        assert!(!names_an_event(br#"{"type":"RUN_STA"#));
    }
}
