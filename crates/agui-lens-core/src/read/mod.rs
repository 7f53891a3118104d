//! Sources: bytes in, located frames out. Files, directories, stdin; JSONL, JSON and SSE;
//! plain, gzip or zstd. Parsing a frame into an [`Event`](crate::protocol::event::Event) is `parse`.

pub mod delta;
pub(crate) mod detect;
pub mod dupkeys;
mod follow;
pub mod halves;
pub mod har;
mod items;
mod json;
mod jsonl;
mod lines;
pub mod pipeline;
pub mod plain;
pub mod progress;
mod proto;
mod sse;
pub(crate) use sse::utf16_len;
pub mod stoppable;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

pub use detect::{
    Compression, NonStream, classify_non_stream, describe_non_stream, format_from_extension,
    names_an_event, sniff_format, strip_compression_ext,
};
pub use follow::Follow;

/// The compression a file name asks for (`.gz`, `.zst`), if any.
pub fn detect_compression_ext(path: &Path) -> Compression {
    detect::strip_compression_ext(path).1
}

/// Default cap on one line or frame: larger ones are reported and skipped, never held.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// How the events are laid out in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// One JSON event per line.
    Jsonl,
    /// One JSON array of events, or JSON values one after another.
    Json,
    /// Server-Sent Events as captured from the wire.
    Sse,
    /// Protobuf frames (`application/vnd.ag-ui.event+proto`): a 4-byte length, a message.
    Proto,
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputFormat::Jsonl => "jsonl",
            InputFormat::Json => "json",
            InputFormat::Sse => "sse",
            InputFormat::Proto => "proto",
        })
    }
}

/// One frame: the bytes that should hold one event, or a note about bytes that could not be
/// framed. Data frames point into their batch's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameKind,
    /// 1-based line where the frame starts.
    pub line: u64,
    /// Byte offset of that line in the decompressed input.
    pub offset: u64,
    /// 0-based index among the frames of the input.
    pub index: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// The frame's text is `Batch::data[start..end]`.
    Data {
        start: usize,
        end: usize,
        /// What the reader noticed about a frame it still hands on.
        caveat: Caveat,
    },
    /// A line or frame over the cap, skipped without being held.
    TooLong { len: u64 },
    /// Bytes that do not fit the format's structure (e.g. text after a JSON array's `]`).
    Malformed { message: String },
    /// A protobuf frame that yields no event.
    Proto {
        problem: ProtoProblem,
        message: String,
    },
}

/// Something about a data frame's framing that a client may trip on, though the frame is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Caveat {
    #[default]
    None,
    /// SSE: the input ended before the frame's closing blank line.
    Unterminated,
    /// Protobuf: the frame, its 4-byte length included, is `len` bytes, over the
    /// [`CLIENT_FRAME_LIMIT`] of the official client.
    OverClientLimit { len: u64 },
    /// Protobuf: the frame's message carried fields this build's definitions do not have
    /// (or a known one in a wire type its type does not have), passed over as every protobuf
    /// decoder passes over them: the event read lacks them. `len` is the frame's size, its
    /// length included, which may be over the client's limit too.
    ProtoSkipped {
        len: u64,
        skips: crate::protocol::proto::Skips,
    },
    /// SSE: no two LFs part this frame from the one at `with_line` (their lines end with CR
    /// LF or CR), so the official client, which splits only at `\n\n`, reads both as one.
    SseMerged { with_line: u64 },
    /// SSE: the text the official client holds until this frame ends (all since the last
    /// `\n\n`) is `len` UTF-16 units, over its buffer's [`CLIENT_FRAME_LIMIT`].
    SseOverClientLimit { len: u64 },
}

impl Caveat {
    /// Whether the official client ends the stream at this frame for its size (SSE text or a
    /// protobuf frame over its buffer).
    pub fn over_client_limit(&self) -> bool {
        match *self {
            Caveat::OverClientLimit { .. } | Caveat::SseOverClientLimit { .. } => true,
            Caveat::ProtoSkipped { len, .. } => len > CLIENT_FRAME_LIMIT,
            Caveat::None | Caveat::Unterminated | Caveat::SseMerged { .. } => false,
        }
    }
}

/// The largest protobuf frame, its 4-byte length included, that `@ag-ui/client` reads: it ends
/// the whole stream with an error at a frame whose length names more (`parseProtoStream`).
pub const CLIENT_FRAME_LIMIT: u64 = 10 * 1024 * 1024;

/// What is wrong with a protobuf frame that yields no event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtoProblem {
    /// The body ends inside the frame.
    Truncated,
    /// Its length is over the cap: skipped unread.
    TooLong,
    /// Its message is not an `Event`.
    Undecodable,
    /// Its message holds only an event this build has no message for.
    UnknownArm,
}

/// A run of frames read together. Reused from one read to the next.
#[derive(Debug, Default)]
pub struct Batch {
    /// The frames' bytes, and possibly bytes around them (a reader may copy whole lines
    /// with their line ends, see [`Batch::push_block`]).
    data: Vec<u8>,
    /// The bytes of the data frames alone.
    frame_bytes: usize,
    pub frames: Vec<Frame>,
    /// `data` is UTF-8 as a whole: set only by [`Batch::check_utf8`], which checks it, and
    /// cleared by every change to `data`.
    utf8: bool,
}

impl Batch {
    pub fn clear(&mut self) {
        self.data.clear();
        self.frame_bytes = 0;
        self.frames.clear();
        self.utf8 = false;
    }

    /// The bytes of every data frame together.
    pub fn data_len(&self) -> usize {
        self.frame_bytes
    }

    /// Whether `data` was checked and found UTF-8 as a whole (see [`Batch::check_utf8`]).
    pub fn is_utf8(&self) -> bool {
        self.utf8
    }

    /// Checks once that the batch's bytes are UTF-8, so that [`Batch::text`] can hand out
    /// strings within them without checking each. Done on the pool, off the thread that
    /// follows the stream in order.
    pub fn check_utf8(&mut self) {
        self.utf8 = simdutf8::basic::from_utf8(&self.data).is_ok();
    }

    /// The text at `start..end` of a data frame's bytes, if it is UTF-8 (and the range lies
    /// in the frame).
    pub fn text(&self, frame: &Frame, start: usize, end: usize) -> Option<&str> {
        let FrameKind::Data {
            start: first,
            end: last,
            ..
        } = frame.kind
        else {
            return None;
        };
        let (start, end) = (first.checked_add(start)?, first.checked_add(end)?);
        if end > last {
            return None;
        }
        if self.utf8 {
            // SAFETY: `utf8` is only set right after the whole of `data` was found to be
            // UTF-8, and every change to `data` clears it. `str::get` refuses a range that
            // does not start and end on character boundaries.
            unsafe { std::str::from_utf8_unchecked(&self.data) }.get(start..end)
        } else {
            std::str::from_utf8(self.data.get(start..end)?).ok()
        }
    }

    /// The text of a data frame.
    pub fn bytes(&self, frame: &Frame) -> &[u8] {
        match frame.kind {
            FrameKind::Data { start, end, .. } => &self.data[start..end],
            _ => &[],
        }
    }

    /// Adds one whole data frame with these bytes, as a reader would hand over the frame
    /// with that index (for checking events that were written, not read). Call
    /// [`Batch::check_utf8`] once the batch is complete.
    pub fn push_frame(&mut self, bytes: &[u8], index: u64) {
        self.push_data(bytes, index + 1, 0, index, Caveat::None);
    }

    /// Adds one whole data frame with these bytes, read at `line` and `offset` as the frame
    /// numbered `index` (a reader's own frames; tests that need a frame from anywhere).
    pub fn push_data(&mut self, bytes: &[u8], line: u64, offset: u64, index: u64, caveat: Caveat) {
        let start = self.push_block(bytes);
        self.push_data_at(start, self.data.len(), line, offset, index, caveat);
    }

    /// Copies `bytes` into the batch in one piece, for frames to be cut from it with
    /// [`Batch::push_data_at`]; returns where it starts. (A reader copying line by line spent
    /// more on the many small copies than on reading the file.)
    fn push_block(&mut self, bytes: &[u8]) -> usize {
        self.utf8 = false;
        let start = self.data.len();
        self.data.extend_from_slice(bytes);
        start
    }

    /// Gives back the bytes of a block from `end` on, which no frame holds (the blank lines
    /// after its last frame): a run of them must not pile up in a batch that gets no frame.
    fn trim_block(&mut self, end: usize) {
        debug_assert!(self.frames.last().is_none_or(|f| match f.kind {
            FrameKind::Data { end: e, .. } => e <= end,
            _ => true,
        }));
        self.data.truncate(end);
    }

    /// Adds a data frame of bytes already in the batch, `data[start..end]`.
    fn push_data_at(
        &mut self,
        start: usize,
        end: usize,
        line: u64,
        offset: u64,
        index: u64,
        caveat: Caveat,
    ) {
        debug_assert!(start <= end && end <= self.data.len());
        self.frame_bytes += end - start;
        self.frames.push(Frame {
            kind: FrameKind::Data { start, end, caveat },
            line,
            offset,
            index,
        });
    }

    fn push_note(&mut self, kind: FrameKind, line: u64, offset: u64, index: u64) {
        self.frames.push(Frame {
            kind,
            line,
            offset,
            index,
        });
    }
}

/// Cuts an input into frames.
pub trait FrameReader: Send {
    /// Replaces the batch's contents with the next frames. Returns as soon as at least one
    /// frame is complete and the bytes read so far are used up, so a live input is reported
    /// as it arrives. `Ok(false)` at the end of the input.
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool>;

    /// The bytes taken from the input so far, framing, blank lines and a leading BOM included
    /// (decompressed, if it was compressed): all of it once `next_batch` has said it ended.
    fn bytes_read(&self) -> u64;
}

/// What the user asked to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    Stdin,
    File(PathBuf),
    /// One AG-UI stream of a browser capture (HAR): the entry at this index of its
    /// `log.entries`.
    HarEntry {
        path: PathBuf,
        entry: usize,
    },
}

impl InputSpec {
    /// What a path names: `-` stdin; a file; or, when no file has the name, a stream of a
    /// browser capture named as diagnostics name it (`capture.har#3`: the entry at index 3
    /// of `capture.har`, when that is a capture).
    pub fn named(path: &Path) -> InputSpec {
        if path.as_os_str() == "-" {
            return InputSpec::Stdin;
        }
        if std::fs::symlink_metadata(path).is_err()
            && let Some((file, entry)) = path.to_str().and_then(|text| text.rsplit_once('#'))
            && !entry.is_empty()
            && entry.bytes().all(|b| b.is_ascii_digit())
            && let Ok(entry) = entry.parse()
            && is_har_file(Path::new(file))
        {
            return InputSpec::HarEntry {
                path: PathBuf::from(file),
                entry,
            };
        }
        InputSpec::File(path.to_path_buf())
    }

    /// The name used in diagnostics (a HAR entry is named with its request once read, see
    /// [`Opened::name`]).
    pub fn display_name(&self) -> Arc<str> {
        match self {
            InputSpec::Stdin => Arc::from("-"),
            InputSpec::File(path) => Arc::from(path.to_string_lossy().as_ref()),
            InputSpec::HarEntry { path, entry } => {
                Arc::from(format!("{}#{entry}", path.to_string_lossy()).as_str())
            }
        }
    }

    /// The file read, if it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            InputSpec::Stdin => None,
            InputSpec::File(path) | InputSpec::HarEntry { path, .. } => Some(path),
        }
    }
}

/// Options that shape how inputs are read.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    pub format: Option<InputFormat>,
    pub max_line: usize,
    /// Which entry of a browser capture (HAR) to read; needed when it holds several
    /// AG-UI streams.
    pub entry: Option<usize>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            max_line: DEFAULT_MAX_LINE,
            entry: None,
        }
    }
}

/// Whether an opened input holds AG-UI events (one among its first 4 MiB is enough), or
/// else what it holds instead: a stream an output may replace, told from a file of the
/// user's (notes, a config) that it may not.
pub fn holds_events(mut opened: Opened) -> std::result::Result<(), String> {
    /// How far to look for an event: a stream's first frames hold one.
    const LOOK: u64 = 4 << 20;
    let mut batch = Batch::default();
    while let Ok(true) = opened.reader.next_batch(&mut batch) {
        for frame in &batch.frames {
            if let FrameKind::Data { .. } = frame.kind {
                let value = serde_json::from_slice::<serde_json::Value>(batch.bytes(frame));
                if value.is_ok_and(|v| crate::protocol::event::EventType::of(&v).is_some()) {
                    return Ok(());
                }
            }
        }
        if opened.reader.bytes_read() > LOOK {
            break;
        }
    }
    Err(format!(
        "no AG-UI events ({})",
        describe_no_events(opened.format, &opened.head)
    ))
}

/// What an input read as `format` that held no AG-UI event is, from its first bytes: as
/// [`describe_non_stream`] says, except that a protobuf body that ends before its first
/// frame's message (inside or right after its length) is said to be that
/// (`framing/proto-truncated`), not "binary data".
pub fn describe_no_events(format: InputFormat, head: &[u8]) -> String {
    // A frame of no bytes is whole: an empty message, which names no event.
    let prefix = crate::protocol::proto::PREFIX_LEN;
    if format == InputFormat::Proto
        && !head.is_empty()
        && head.len() % prefix == 0
        && head.iter().all(|&b| b == 0)
    {
        return format!(
            "a protobuf body of {} (each of length 0): an empty message names no event \
             (framing/proto-undecodable)",
            crate::report::plural((head.len() / prefix) as u64, "empty frame"),
        );
    }
    if format == InputFormat::Proto
        && !head.is_empty()
        && head.len() <= crate::protocol::proto::PREFIX_LEN
    {
        return format!(
            "a protobuf body of {} that ends before its first frame's message \
             (framing/proto-truncated)",
            crate::report::plural(head.len() as u64, "byte"),
        );
    }
    describe_non_stream(head)
}

/// An opened input: its frame reader and what was learnt while opening it.
pub struct Opened {
    pub name: Arc<str>,
    pub format: InputFormat,
    pub compression: Compression,
    /// The first bytes of the decompressed input, to describe it when it holds no events.
    pub head: Vec<u8>,
    pub reader: Box<dyn FrameReader>,
    /// Data arrives while it is read (stdin, a pipe, a socket): read no further ahead than
    /// what has arrived.
    pub live: bool,
    /// Set when the stream is an entry of a browser capture (HAR).
    pub capture: Option<CaptureEntry>,
    /// How to read the input again from its start, when that can be done (a file, not a pipe
    /// or stdin).
    pub reopen: Option<Reopen>,
    /// Stdin, a pipe or a FIFO: written by another process, which the Ctrl-C that stops this
    /// one may stop too (`producer | agui-lens check -`), so that the input ends with it.
    pub piped: bool,
    /// Read an event whose string holds half a UTF-16 surrogate pair with a stand-in for it
    /// (see [`halves`]), for what folds the stream as a client does; otherwise such an event
    /// is left unread.
    pub keep_halves: bool,
    /// How the side that records the input cut it, asked once it has been read to its end
    /// (a recording followed while its recorder writes it says at its end how it ended).
    pub late_cut: Option<Box<dyn Fn() -> Option<String> + Send>>,
}

/// An input that can be read again from its start: a file, or a stream of a browser capture.
#[derive(Clone, Debug)]
pub struct Reopen {
    input: InputSpec,
    options: ReadOptions,
}

impl Reopen {
    /// Opens the input again, as [`open`] first did.
    pub fn open(&self) -> Result<Opened> {
        open(&self.input, &self.options)
    }
}

/// Where in a browser capture (HAR) a stream was found.
#[derive(Clone, Debug)]
pub struct CaptureEntry {
    /// Its index in `log.entries`.
    pub entry: usize,
    /// The request that asked for the stream, when its body is a JSON object: what the
    /// client sent (its state and tools).
    pub request: Option<Arc<serde_json::Value>>,
    /// Why the request body the capture holds is no JSON object, when it is not.
    pub request_problem: Option<String>,
    /// What the capture's previous stream on the request's thread left the client holding
    /// (its request, folded with the events that came): what the request is held to, as
    /// `serve` holds a client's next request.
    pub previous: Option<Arc<crate::fold::Folded>>,
    /// The response's status, and its reason, as the capture holds them.
    pub status: Option<(u16, Option<String>)>,
    /// The response's Content-Type, when the capture holds one that names no event stream
    /// ([`har::HarStream::other_type`]).
    pub other_type: Option<String>,
    /// The transport the response's type names, and those the request asked for.
    pub declared: Option<InputFormat>,
    pub accepted: Vec<InputFormat>,
    /// Why the browser says the response ended early, when it says so (`_failureText`).
    pub failure: Option<String>,
}

impl CaptureEntry {
    /// The response's status when it is no success, with its reason: what the client met
    /// instead of the stream. Status 0, a response the browser did not see to its end (a stop,
    /// a closed tab), is none: what came is the stream.
    pub fn failed_status(&self) -> Option<(u16, Option<&str>)> {
        let (code, reason) = self.status.as_ref()?;
        let reason = reason.as_deref().filter(|r| !r.is_empty());
        (*code != 0 && !(200..300).contains(code)).then_some((*code, reason))
    }

    /// [`CaptureEntry::failed_status`] as said to people: `500 Internal Server Error`, or
    /// the code alone when the capture holds no reason.
    pub fn failed_answer(&self) -> Option<String> {
        self.failed_status()
            .map(|(code, reason)| answered(code, reason))
    }

    /// A member of the request (`state`, `messages`), when it was sent and is not null.
    pub fn sent(&self, key: &str) -> Option<&serde_json::Value> {
        member_sent(self.request.as_ref()?, key)
    }

    /// Gives the stream's first RUN_STARTED (`event`) the request that asked for it as its
    /// `input`, where a stream carries a run's RunAgentInput, when it has none: the stream
    /// alone then means what the capture does (a client folds it from the request's state
    /// and messages). Whether it did.
    fn carry_request(&self, event: &mut serde_json::Value) -> bool {
        let (Some(request), Some(map)) = (&self.request, event.as_object_mut()) else {
            return false;
        };
        if map.get("type").and_then(serde_json::Value::as_str) != Some("RUN_STARTED")
            || map.contains_key("input")
        {
            return false;
        }
        map.insert("input".into(), (**request).clone());
        true
    }
}

/// Carries a browser capture's request into its stream's first RUN_STARTED as the stream is
/// read, the way `cat` writes a capture's stream out and `diff` compares it: as its `input`,
/// when it has none. For an input that is no capture, it carries nothing.
pub struct RequestCarrier {
    capture: Option<CaptureEntry>,
    before_first_run: bool,
}

impl RequestCarrier {
    pub fn of(opened: &Opened) -> RequestCarrier {
        RequestCarrier {
            capture: opened.capture.clone(),
            before_first_run: true,
        }
    }

    /// The event with the request as its `input`, when it is the stream's first RUN_STARTED
    /// and has none; None for every other event, which stands as it was read.
    pub fn carried(&mut self, event: &crate::protocol::event::Event) -> Option<serde_json::Value> {
        let capture = self.capture.as_ref()?;
        if !self.before_first_run
            || event.kind != Some(crate::protocol::event::EventType::RunStarted)
        {
            return None;
        }
        self.before_first_run = false;
        let mut value = event.whole_value().into_owned();
        capture.carry_request(&mut value).then_some(value)
    }
}

/// A member of a RunAgentInput (`state`, `messages`) as its client held it: sent and not null
/// (a null state is no state).
pub fn member_sent<'a>(request: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    request.get(key).filter(|v| !v.is_null())
}

/// A response's status as said to people: `500 Internal Server Error`, or the code alone.
pub fn answered(code: u16, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("{code} {reason}"),
        None => code.to_string(),
    }
}

/// Extensions recognised when walking a directory.
const STREAM_EXTENSIONS: &[&str] = &["jsonl", "ndjson", "sse", "json", "pb", "har"];

/// Whether a file name looks like a stream capture: `*.jsonl`, `*.sse.gz`, `*.json.zst` …
pub fn is_stream_file(path: &Path) -> bool {
    let (stem, _) = detect::strip_compression_ext(path);
    stem.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|ext| STREAM_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Why a file could not be opened to read. A link that leads nowhere (its target moved, a
/// volume not mounted, a loop) is said to be one, with what it names: "No such file" of a
/// name that `ls` shows says nothing of why.
fn not_opened(path: &Path, err: io::Error) -> anyhow::Error {
    match leads_nowhere(path, &err) {
        Some(target) => anyhow::anyhow!(
            "{} is a link that leads nowhere ({}: {err})",
            path.display(),
            target.display()
        ),
        None => anyhow::Error::new(err).context(format!("opening {}", path.display())),
    }
}

/// Where `path` leads, when it is a link and `err` (from opening it) says that leads nowhere:
/// the target is missing, or the links loop.
fn leads_nowhere(path: &Path, err: &io::Error) -> Option<PathBuf> {
    // ELOOP: too many links followed (a loop).
    const ELOOP: i32 = if cfg!(target_os = "linux") { 40 } else { 62 };
    let nowhere = err.kind() == io::ErrorKind::NotFound || err.raw_os_error() == Some(ELOOP);
    nowhere.then(|| std::fs::read_link(path).ok()).flatten()
}

/// `err`, met opening `path` (a suite, a config, a stored snapshot: a file read beside a
/// stream), said plainly when `path` is a link that leads nowhere. Its kind becomes
/// [`io::ErrorKind::Other`]: such a file is not simply missing (a snapshot still to be
/// written), its link is broken.
pub fn plainly(path: &Path, err: io::Error) -> io::Error {
    match leads_nowhere(path, &err) {
        Some(target) => io::Error::other(format!(
            "it is a link that leads nowhere ({}: {err})",
            target.display()
        )),
        None => err,
    }
}

/// The text of a file read whole beside a stream (a suite, a config, a script), an error
/// naming it, and saying so of a link that leads nowhere.
pub fn read_text(path: &Path) -> Result<String> {
    read_whole_text(path)
        .map_err(|e| plainly(path, e))
        .with_context(|| format!("reading {}", path.display()))
}

/// The most a file read whole beside the streams may hold (a config, a suite, a snapshot, a
/// baseline, a request body, what a recorder wrote beside a recording): past it, it is no
/// file of its kind (`--config /dev/zero` was read until the machine's memory ran out).
pub const MAX_READ_WHOLE: u64 = 256 << 20;

/// Reads the file at `path` whole, as [`std::fs::read`] does, up to [`MAX_READ_WHOLE`]
/// bytes: more is an error (`InvalidData`), read no further.
pub fn read_whole(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_READ_WHOLE + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_READ_WHOLE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it holds more than {} MiB, which no file of its kind does (a device?)",
                MAX_READ_WHOLE >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// [`read_whole`] as text, as [`std::fs::read_to_string`] reads it.
pub fn read_whole_text(path: &Path) -> io::Result<String> {
    utf8(read_whole(path)?)
}

/// Bytes read whole as text, failing as [`std::fs::read_to_string`] does.
fn utf8(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// [`read_whole`] of a file a recorder writes beside a recording (its request, its cut, its
/// findings): a regular file only. A FIFO or a device there is none a recorder wrote, and
/// opening a FIFO waited for a writer through every signal.
pub fn read_beside(path: &Path) -> io::Result<Vec<u8>> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is no regular file",
        ));
    }
    read_whole(path)
}

/// [`read_beside`] as text.
pub fn read_beside_text(path: &Path) -> io::Result<String> {
    utf8(read_beside(path)?)
}

/// Opens an input: decompresses by magic bytes, picks the format (forced, else by extension,
/// else by content), and returns a frame reader over it.
pub fn open(input: &InputSpec, options: &ReadOptions) -> Result<Opened> {
    let name = input.display_name();
    let mut live = true;
    let raw: Box<dyn Read + Send> = match input {
        InputSpec::Stdin => Box::new(io::stdin()),
        InputSpec::File(path) => {
            let file = open_stoppable(path).map_err(|err| not_opened(path, err))?;
            let meta = file
                .metadata()
                .with_context(|| format!("reading {}", path.display()))?;
            if meta.is_dir() {
                bail!("{} is a directory", path.display());
            }
            live = !meta.is_file();
            Box::new(progress::Counted(file))
        }
        InputSpec::HarEntry { path, entry } => {
            if let Some(asked) = options.entry.filter(|asked| asked != entry) {
                bail!(
                    "{}#{entry} names entry {entry}, and --entry {asked} another",
                    path.display()
                );
            }
            // Each stream of a capture is an input of its own: the capture is read once for
            // them.
            let (capture, size) = har_capture(path)?;
            progress::count(size / capture.streams.len().max(1) as u64);
            let options = ReadOptions {
                entry: Some(*entry),
                ..options.clone()
            };
            let mut opened = open_har_stream(&path.to_string_lossy(), &capture, &options)?;
            opened.live = false;
            opened.reopen = Some(Reopen {
                input: input.clone(),
                options: options.clone(),
            });
            return Ok(opened);
        }
    };
    // What may block until its writer goes on (stdin, a pipe, a FIFO) is read so that Ctrl-C
    // or SIGTERM ends the reading instead of waiting for the writer.
    let raw: Box<dyn Read + Send> = if live {
        Box::new(stoppable::Stoppable::new(raw))
    } else {
        raw
    };
    let ext_hint = input.path().and_then(detect::format_from_extension);
    let mut opened = open_reader_of(name, raw, ext_hint, options, !live)?;
    opened.live = live;
    opened.piped = live;
    opened.reopen = (!live).then(|| Reopen {
        input: input.clone(),
        options: options.clone(),
    });
    Ok(opened)
}

/// Opens a file that is still being written, to read it as it grows (see [`Follow`]).
pub fn open_follow(
    path: &Path,
    options: &ReadOptions,
    idle: Option<std::time::Duration>,
    stop: fn() -> bool,
) -> Result<Opened> {
    let follow = Follow::open(path, idle, stop).map_err(|err| not_opened(path, err))?;
    let name = InputSpec::File(path.to_path_buf()).display_name();
    let hint = detect::format_from_extension(path);
    open_reader(name, Box::new(follow), hint, options)
}

/// Opens any byte stream (a socket body, a test buffer) the way [`open`] opens a file.
pub fn open_reader(
    name: Arc<str>,
    raw: Box<dyn Read + Send>,
    ext_hint: Option<InputFormat>,
    options: &ReadOptions,
) -> Result<Opened> {
    open_reader_of(name, raw, ext_hint, options, false)
}

/// [`open_reader`], of an input that is `whole` (a file, not a live stream that may pause):
/// more of its head may be waited for where its first line leaves its format open.
fn open_reader_of(
    name: Arc<str>,
    raw: Box<dyn Read + Send>,
    ext_hint: Option<InputFormat>,
    options: &ReadOptions,
    whole: bool,
) -> Result<Opened> {
    let reading = || format!("reading {name}");
    let (compression, decoded) = detect::decompress(raw).with_context(reading)?;
    let mut input = lines::Input::new(decoded);
    // A whole input's head is as long as it can be: the first read may bring a few bytes
    // only (those a compression check looked at), and a pretty-printed JSON document's first
    // line (`{`) says nothing of what it is.
    // (A read that fails on the way, as a gzip cut short does, fails when the input is read,
    // after what came before it: only what a plain peek needs is required here.)
    let whole_head = match whole {
        true => input.peek_whole(detect::SNIFF_LEN).map(<[u8]>::to_vec).ok(),
        false => None,
    };
    let mut head = match whole_head {
        Some(head) => head,
        None => input
            .peek(detect::SNIFF_LEN)
            .with_context(reading)?
            .to_vec(),
    };
    // A protobuf body opens with the NUL of its first frame's length and is told from text by
    // the key after that length (a varint of up to five bytes). A length holding a 0x0a byte
    // ended the peek at a "line" before the key, so the key is waited for.
    let key_end = crate::protocol::proto::PREFIX_LEN + 5;
    if head.first() == Some(&0) && head.len() < key_end {
        input.peek_whole(key_end).with_context(reading)?;
        head = input
            .peek(detect::SNIFF_LEN)
            .with_context(reading)?
            .to_vec();
    }
    // A browser capture (HAR) opens `{"log": {`, pretty-printed or on one line; a few more
    // bytes than its first non-blank ones are looked at.
    if options.format.is_none()
        && detect::opens_json(&head)
        && har::is_har(input.peek_whole(64).with_context(reading)?)
    {
        return open_har_entry(&name, input, options);
    }
    // A `.json` file whose first line is a whole value is JSON Lines, or JSON values one after
    // another of which the first fits on a line: the lines after it tell (of a file, which
    // does not pause; a live input is read as its first line says).
    if whole
        && options.format.is_none()
        && ext_hint == Some(InputFormat::Json)
        && detect::first_line_is_whole_value(&head)
    {
        head = input
            .peek_whole(detect::SNIFF_LEN)
            .with_context(reading)?
            .to_vec();
    }
    let format = options
        .format
        .or_else(|| refine_extension_hint(ext_hint, &head))
        .unwrap_or_else(|| sniff_format(&head));
    let max = options.max_line;
    // Binary is decided once, from the first bytes (the first line, when it is whole in the
    // head: what came with it depends on how the bytes arrived): an executable named
    // `.jsonl` is one finding, not one per "line" of it. Protobuf frames are binary and read
    // as such.
    let reader: Box<dyn FrameReader> = if format == InputFormat::Proto {
        Box::new(proto::ProtoReader::new(input, max))
    } else if detect::is_binary(detect::settled(&head)) {
        Box::new(NoFrames {
            bytes: head.len() as u64,
        })
    } else {
        match format {
            InputFormat::Jsonl => Box::new(jsonl::JsonlReader::new(input, max)),
            InputFormat::Json => Box::new(json::JsonReader::new(input, max)),
            InputFormat::Sse => Box::new(sse::SseReader::new(input, max)),
            InputFormat::Proto => unreachable!("read above"),
        }
    };
    Ok(Opened {
        name,
        format,
        compression,
        head,
        reader,
        live: true,
        capture: None,
        reopen: None,
        piped: false,
        keep_halves: false,
        late_cut: None,
    })
}

/// Events handed over one by one, each item one frame whatever it holds (an empty item, two
/// events in one), numbered as the lines of the items written one per line would be.
pub fn open_items(name: Arc<str>, items: Vec<Vec<u8>>, options: &ReadOptions) -> Opened {
    let head = items.first().map_or_else(Vec::new, |first| {
        first[..first.len().min(detect::SNIFF_LEN)].to_vec()
    });
    Opened {
        name,
        format: InputFormat::Jsonl,
        compression: Compression::None,
        head,
        reader: Box::new(items::ItemsReader::new(items, options.max_line)),
        live: false,
        capture: None,
        reopen: None,
        piped: false,
        keep_halves: false,
        late_cut: None,
    }
}

/// The AG-UI streams of a browser capture (HAR) file, plain or compressed.
pub fn har_streams(path: &Path) -> Result<Arc<har::HarCapture>> {
    har_capture(path).map(|(capture, _)| capture)
}

/// The captures read last, with what tells their files apart, so that the streams of one
/// capture (inputs of their own, checked a few at a time) read it once, not once each. Two
/// are kept: a run lists a folder's captures before it reads their streams.
static CAPTURES: std::sync::Mutex<Vec<(CaptureKey, Arc<har::HarCapture>)>> =
    std::sync::Mutex::new(Vec::new());

/// Opens a file to read. A FIFO blocks in `open` until a writer opens it too, where no stop
/// is seen (the call is restarted after a signal): it is opened on a thread of its own, and a
/// stop (Ctrl-C, SIGTERM) ends the wait, leaving that thread to its `open`.
fn open_stoppable(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        use std::sync::mpsc::{RecvTimeoutError, channel};
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            let (opened, waiting) = channel();
            let owned = path.to_path_buf();
            std::thread::spawn(move || {
                let _ = opened.send(File::open(owned));
            });
            loop {
                match waiting.recv_timeout(std::time::Duration::from_millis(50)) {
                    Ok(result) => return result,
                    Err(RecvTimeoutError::Timeout) if crate::stop::requested() => {
                        return Err(io::Error::new(
                            io::ErrorKind::Interrupted,
                            "stopped while waiting for a writer to open the FIFO",
                        ));
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(io::Error::other("the FIFO could not be opened"));
                    }
                }
            }
        }
    }
    File::open(path)
}

/// A capture file as it is now: a file changed in between is read again.
type CaptureKey = (PathBuf, u64, Option<std::time::SystemTime>);

/// A capture, from [`CAPTURES`] or read, and its file's size.
fn har_capture(path: &Path) -> Result<(Arc<har::HarCapture>, u64)> {
    let meta = std::fs::metadata(path).map_err(|err| not_opened(path, err))?;
    let key: CaptureKey = (path.to_path_buf(), meta.len(), meta.modified().ok());
    // Held while reading: the other streams of this capture wait for it, not read it too.
    let mut kept = CAPTURES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, capture)) = kept.iter().find(|(k, _)| *k == key) {
        return Ok((Arc::clone(capture), meta.len()));
    }
    let file = File::open(path).map_err(|err| not_opened(path, err))?;
    let (_, decoded) = detect::decompress(Box::new(file))
        .with_context(|| format!("reading {}", path.display()))?;
    let capture =
        Arc::new(har::read_har(decoded).with_context(|| format!("reading {}", path.display()))?);
    if kept.len() == 2 {
        kept.remove(0);
    }
    kept.push((key, Arc::clone(&capture)));
    Ok((capture, meta.len()))
}

/// Whether a file is a browser capture (HAR), judged by its first bytes. Only a regular file
/// is looked into: reading a FIFO or a device would take bytes no one else then reads.
pub fn is_har_file(path: &Path) -> bool {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    opens_a_har(Box::new(file))
}

/// Whether bytes (compressed or not) hold a browser capture (HAR), as [`is_har_file`] judges
/// a file.
pub fn is_har_bytes(bytes: &[u8]) -> bool {
    // The head is all that is looked at: a copy of the first 64 KiB, compressed or not, holds
    // it (not of a history of many MB).
    let head = &bytes[..bytes.len().min(64 * 1024)];
    opens_a_har(Box::new(std::io::Cursor::new(head.to_vec())))
}

fn opens_a_har(raw: Box<dyn Read + Send>) -> bool {
    let Ok((_, decoded)) = detect::decompress(raw) else {
        return false;
    };
    let mut head = Vec::new();
    let _ = decoded.take(64).read_to_end(&mut head);
    har::is_har(&head)
}

/// Opens the entry of a HAR capture `options.entry` names, or its only AG-UI stream.
fn open_har_entry(name: &str, input: lines::Input, options: &ReadOptions) -> Result<Opened> {
    let capture = har::read_har(input.into_reader()).with_context(|| format!("reading {name}"))?;
    open_har_stream(name, &capture, options)
}

/// What the client of `stream` held before it sent its request: the fold of the capture's
/// previous stream on the same thread (that stream's request, and the events it read; none
/// when its status was no success or the browser says it ended early). None when there is
/// no such stream, or a call that brought no stream came between the two (its thread is not
/// known).
fn previous_turn(
    capture: &har::HarCapture,
    stream: &har::HarStream,
    options: &ReadOptions,
) -> Option<crate::fold::Folded> {
    let thread_of = |s: &har::HarStream| {
        s.request
            .as_ref()
            .and_then(|r| r.get("threadId"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let thread = thread_of(stream)?;
    let before = capture
        .streams
        .iter()
        .filter(|s| s.entry < stream.entry && thread_of(s).as_deref() == Some(thread.as_str()))
        .max_by_key(|s| s.entry)?;
    if capture
        .failed
        .iter()
        .any(|f| f.entry > before.entry && f.entry < stream.entry)
    {
        return None;
    }
    let request = before.request.as_ref()?;
    let mut folder = crate::fold::Folder::new(crate::check::rules::protocol::DEFAULT_STATE_LIMIT)
        .with_input(request);
    // A call the page stopped, or whose read failed, never gave the client its end: as a
    // client `serve` cut off, it holds what it held before it, and its retry sends that.
    let read = before
        .status
        .is_none_or(|s| s == 0 || (200..300).contains(&s))
        && before.failure.is_none();
    if read {
        let options = ReadOptions {
            entry: None,
            format: options.format.or(before.declared),
            ..options.clone()
        };
        let name: Arc<str> = Arc::from("previous");
        let body = Box::new(io::Cursor::new(before.body.clone()));
        let mut opened = open_reader(name, body, None, &options).ok()?;
        crate::check::stream::for_each_fed(&mut opened, options.max_line, false, |fed, _, _| {
            if let crate::check::engine::Fed::Event(event) = fed {
                folder.apply(event);
            }
            Ok(())
        })
        .ok()?;
    }
    Some(folder.finish())
}

/// Opens the stream of a capture read from `name` that `options.entry` names, or its only
/// one.
fn open_har_stream(name: &str, capture: &har::HarCapture, options: &ReadOptions) -> Result<Opened> {
    let listed = || {
        let entries: Vec<String> = capture
            .streams
            .iter()
            .map(|s| s.entry.to_string())
            .collect();
        // A capture of hundreds of streams is named by its first entries and its last.
        if entries.len() > 12 {
            format!(
                "{}, …, {}",
                entries[..10].join(", "),
                entries[entries.len() - 1]
            )
        } else {
            entries.join(", ")
        }
    };
    if let Some(failed) = options
        .entry
        .and_then(|entry| capture.failed.iter().find(|f| f.entry == entry))
    {
        bail!("{}: {}", failed.name(name), failed.why);
    }
    let stream = match (options.entry, capture.streams.len()) {
        (Some(entry), _) => capture
            .streams
            .iter()
            .find(|s| s.entry == entry)
            .with_context(|| match capture.streams.len() {
                0 => format!("{name} holds no AG-UI stream"),
                _ => format!(
                    "entry {entry} of {name} is no AG-UI stream (the streams are entries {})",
                    listed()
                ),
            })?,
        // A call that brought no stream is no less part of the capture: the one stream that
        // came is not picked over it in silence.
        (None, 1) if !capture.failed.is_empty() => bail!(
            "{name} is a browser capture (HAR) holding 1 AG-UI stream (entry {entry}) and {}: \
             {}; pick one with --entry N, or name it {name}#N ({name}#{entry} is the stream)",
            match capture.failed.len() {
                1 => "1 call to an agent that brought none".to_owned(),
                n => format!("{n} calls to an agent that brought none"),
            },
            capture.failed_listed(),
            entry = capture.streams[0].entry,
        ),
        (None, 1) => &capture.streams[0],
        (None, 0) if !capture.failed.is_empty() => bail!(
            "{name} is a browser capture (HAR) that holds no AG-UI stream: {}",
            capture.failed_listed()
        ),
        (None, 0) => bail!("{}", capture.holds_no_stream(name)),
        (None, n) => bail!(
            "{name} is a browser capture (HAR) holding {n} AG-UI streams (entries {}): pick \
             one with --entry N, or name it {name}#N (`agui-lens cat {name}#N -o run.jsonl` \
             extracts one)",
            listed()
        ),
    };
    let entry_name: Arc<str> = Arc::from(stream.name(name).as_str());
    // Read in the transport the response's type names, as a client picks its parser by it
    // (and `run` reads a live body), unless the user asked for a format.
    let options = ReadOptions {
        entry: None,
        format: options.format.or(stream.declared),
        ..options.clone()
    };
    let body = Box::new(io::Cursor::new(stream.body.clone()));
    let mut opened = open_reader(entry_name, body, None, &options)?;
    opened.capture = Some(CaptureEntry {
        entry: stream.entry,
        request: stream.request.clone().map(Arc::new),
        request_problem: stream.request_problem.clone(),
        previous: previous_turn(capture, stream, &options).map(Arc::new),
        status: stream.status.map(|s| (s, stream.reason.clone())),
        other_type: stream.other_type.clone(),
        declared: stream.declared,
        accepted: stream.accepted.clone(),
        failure: stream.failure.clone(),
    });
    Ok(opened)
}

/// The reader of an input that is not read at all (a binary one): it has no frames.
struct NoFrames {
    bytes: u64,
}

impl FrameReader for NoFrames {
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
        batch.clear();
        Ok(false)
    }

    fn bytes_read(&self) -> u64 {
        self.bytes
    }
}

/// The transport a Content-Type names, as the format its body is read in
/// (`text/event-stream; charset=utf-8` is SSE; the protobuf type, protobuf), if it names one.
pub fn transport_format(content_type: &str) -> Option<InputFormat> {
    let essence = content_type.split(';').next()?.trim();
    if essence.eq_ignore_ascii_case("text/event-stream") {
        Some(InputFormat::Sse)
    } else if essence.eq_ignore_ascii_case(crate::protocol::proto::CONTENT_TYPE) {
        Some(InputFormat::Proto)
    } else {
        None
    }
}

/// The Content-Type of the transport a stream read in `format` travels in (SSE's for any
/// text format).
pub fn transport_content_type(format: InputFormat) -> &'static str {
    match format {
        InputFormat::Proto => crate::protocol::proto::CONTENT_TYPE,
        _ => "text/event-stream",
    }
}

/// The transports an Accept header takes, the preferred first: none when it names neither,
/// or takes anything (`*/*`, `text/*`). A type refused with `q=0` is not taken.
pub fn accepted_formats(accept: &str) -> Vec<InputFormat> {
    let refused = |params: &str| {
        params.split(';').any(|param| {
            let param = param.trim();
            let q = param
                .strip_prefix("q=")
                .or_else(|| param.strip_prefix("Q="));
            q.and_then(|q| q.trim().parse::<f32>().ok()) == Some(0.0)
        })
    };
    let kinds: Vec<&str> = accept
        .split(',')
        .filter_map(|kind| {
            let (essence, params) = kind.split_once(';').unwrap_or((kind, ""));
            (!refused(params)).then_some(essence.trim())
        })
        .collect();
    if kinds.iter().any(|kind| kind.ends_with("/*")) {
        return Vec::new();
    }
    kinds.into_iter().filter_map(transport_format).collect()
}

/// The format a stream read as `format` (its first bytes `head`) is written back in under the
/// name `path` (in place, or under its own name elsewhere): what it was, so that a `.jsonl`
/// that holds SSE stays SSE, and one that holds a JSON array stays an array (what reads it
/// reads it whole); but JSON values one after another (pretty-printed events) in a `.jsonl`
/// are written one per line, as its name says, not as the one array the JSON writer makes,
/// which no reader of either took them as.
pub fn rewritten_format(format: InputFormat, path: &Path, head: &[u8]) -> InputFormat {
    match (format, format_from_extension(path)) {
        (InputFormat::Json, Some(InputFormat::Jsonl)) if !detect::opens_array(head) => {
            InputFormat::Jsonl
        }
        _ => format,
    }
}

/// What a file name says, unless the content plainly says otherwise: a file need not be what
/// its name says. `.json` says little (an array, one pretty-printed event, or JSONL under
/// another name); SSE never starts with `{` or `[`; JSONL never starts with an SSE field, nor
/// with a `[` that opens an array of events.
fn refine_extension_hint(hint: Option<InputFormat>, head: &[u8]) -> Option<InputFormat> {
    let sniffed = sniff_format(head);
    // Too short to tell (a body cut inside its first frame's 4-byte length): what the name
    // says, when what there is can start a frame (the length of one under 16 MiB).
    if hint == Some(InputFormat::Proto)
        && head.len() <= crate::protocol::proto::PREFIX_LEN
        && head.first() == Some(&0)
    {
        return hint;
    }
    // Protobuf frames and text tell themselves apart by their first bytes, whatever the name.
    if sniffed == InputFormat::Proto || hint == Some(InputFormat::Proto) {
        return Some(sniffed);
    }
    let opens_json = detect::opens_json(head);
    match hint {
        Some(InputFormat::Json) => Some(match sniffed {
            InputFormat::Jsonl
                if !detect::first_line_is_whole_value(head) || detect::values_span_lines(head) =>
            {
                InputFormat::Json
            }
            sniffed => sniffed,
        }),
        Some(InputFormat::Sse) if opens_json => Some(match sniffed {
            InputFormat::Jsonl if !detect::first_line_is_whole_value(head) => InputFormat::Json,
            sniffed => sniffed,
        }),
        Some(InputFormat::Jsonl) => Some(match sniffed {
            // A `[` line in JSONL is an array of events written on one line, or a line that is
            // no event; a `[` line that does not end the value opens a pretty-printed array.
            InputFormat::Json
                if detect::first_line_is_whole_value(head)
                    && !detect::first_line_is_array_of_events(head) =>
            {
                InputFormat::Jsonl
            }
            sniffed => sniffed,
        }),
        other => other,
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Reads all frames of a byte string with the given format, delivering the bytes in
    /// chunks of `chunk` so buffer boundaries are exercised.
    pub fn frames(
        format: impl Into<Option<InputFormat>>,
        bytes: &[u8],
        chunk: usize,
        max: usize,
    ) -> Vec<(Frame, String)> {
        let reader = ChunkedReader {
            data: bytes.to_vec(),
            pos: 0,
            chunk,
        };
        let options = ReadOptions {
            format: format.into(),
            max_line: max,
            entry: None,
        };
        let mut opened = open_reader(Arc::from("t"), Box::new(reader), None, &options).unwrap();
        let mut out = Vec::new();
        let mut batch = Batch::default();
        while opened.reader.next_batch(&mut batch).unwrap() {
            let mut held = 0;
            let mut last_end = 0;
            for frame in &batch.frames {
                let text = String::from_utf8_lossy(batch.bytes(frame)).into_owned();
                if let FrameKind::Data { end, .. } = frame.kind {
                    held += batch.bytes(frame).len();
                    last_end = end;
                }
                out.push((frame.clone(), text));
            }
            // What a batch counts as read is its frames' bytes, and it holds nothing after
            // its last frame (a run of blank lines does not pile up).
            assert_eq!(batch.data_len(), held);
            assert_eq!(batch.data.len(), last_end);
        }
        out
    }

    struct ChunkedReader {
        data: Vec<u8>,
        pos: usize,
        chunk: usize,
    }

    impl Read for ChunkedReader {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.chunk.min(buf.len()).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }
}

#[cfg(test)]
mod capture_tests {
    use super::*;

    fn capture(runs: &[&str]) -> String {
        let entries: Vec<serde_json::Value> = runs
            .iter()
            .map(|run| {
                let sse = format!(
                    "data: {{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"{run}\"}}\n\n"
                );
                serde_json::json!({
                    "request": {"method": "POST", "url": "https://agent.example/run"},
                    "response": {"status": 200, "content": {"mimeType": "text/event-stream", "text": sse}}
                })
            })
            .collect();
        serde_json::json!({"log": {"version": "1.2", "entries": entries}}).to_string()
    }

    /// The streams of one capture are inputs of their own; the capture is read once for all
    /// of them (each read it whole again: a capture of 300 streams took minutes), and again
    /// when the file changed.
    #[test]
    fn the_streams_of_a_capture_share_one_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.har");
        std::fs::write(&path, capture(&["r1", "r2", "r3"])).unwrap();
        let first = har_streams(&path).unwrap();
        for entry in 0..3 {
            let opened = open(
                &InputSpec::HarEntry {
                    path: path.clone(),
                    entry,
                },
                &ReadOptions::default(),
            )
            .unwrap();
            assert_eq!(opened.capture.unwrap().entry, entry);
            assert!(!opened.live);
        }
        assert!(Arc::ptr_eq(&first, &har_streams(&path).unwrap()));
        std::fs::write(&path, capture(&["r1", "r2", "r3", "r4"])).unwrap();
        let changed = har_streams(&path).unwrap();
        assert_eq!(changed.streams.len(), 4);
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    fn batch(lines: &[&[u8]]) -> Batch {
        let mut batch = Batch::default();
        for (i, line) in lines.iter().enumerate() {
            batch.push_data(line, i as u64 + 1, 0, i as u64, Caveat::None);
        }
        batch
    }

    /// Text within a checked batch comes out without a second check, and only on character
    /// boundaries within its frame; an unchecked or changed batch checks each range.
    #[test]
    fn text_is_handed_out_only_where_it_is_utf8() {
        let mut b = batch(&["{\"d\":\"héllo\"}".as_bytes(), b"{\"d\":\"x\"}"]);
        for checked in [false, true] {
            if checked {
                b.check_utf8();
                assert!(b.utf8);
            }
            let (first, second) = (&b.frames[0], &b.frames[1]);
            assert_eq!(b.text(first, 6, 12), Some("héllo"));
            assert_eq!(b.text(first, 6, 8), None, "inside 'é'");
            assert_eq!(b.text(second, 6, 7), Some("x"));
            assert_eq!(b.text(second, 6, 20), None, "past its frame");
        }
        // A frame that is not UTF-8 leaves the batch unchecked; its neighbours still read.
        b.push_data(b"{\"d\":\"\xff\"}", 3, 0, 2, Caveat::None);
        assert!(!b.utf8, "a change clears the mark");
        b.check_utf8();
        assert!(!b.utf8);
        assert_eq!(b.text(&b.frames[2], 6, 7), None);
        assert_eq!(b.text(&b.frames[1], 6, 7), Some("x"));
        b.clear();
        assert!(!b.utf8);
    }
}

#[cfg(test)]
mod accept_tests {
    use super::*;

    /// Media types are case-insensitive, and a type with `q=0` is refused (RFC 9110 12.4.2),
    /// not asked for.
    #[test]
    fn an_accept_header_is_read_as_http_has_it() {
        let proto = "application/vnd.ag-ui.event+proto";
        assert_eq!(accepted_formats(proto), [InputFormat::Proto]);
        assert_eq!(
            accepted_formats(&proto.to_ascii_uppercase()),
            [InputFormat::Proto]
        );
        assert!(accepted_formats(&format!("{proto};q=0")).is_empty());
        assert!(accepted_formats(&format!("{proto}; q=0.000")).is_empty());
        assert_eq!(
            accepted_formats(&format!("text/event-stream, {proto};q=0")),
            [InputFormat::Sse]
        );
        assert_eq!(
            accepted_formats(&format!("text/event-stream, {proto};q=0.5")),
            [InputFormat::Sse, InputFormat::Proto]
        );
        assert!(accepted_formats("*/*").is_empty());
    }
}
