//! Compaction: a stored stream rewritten smaller without changing what a client ends with.
//!
//! `deltas`: chunk events are expanded; each message's, reasoning message's and tool call's
//! content deltas become one event, written where the stream ends them (or earlier, before
//! anything that could read or replace them); each run's state events become one
//! STATE_SNAPSHOT and each activity's later events one ACTIVITY_SNAPSHOT, written before the
//! run's terminal event. Every other event is kept, byte for byte, in order.
//! Chunk events are the exception: what a client sees in their place is written instead, so a
//! chunk a client drops (one that cannot be expanded, say because its role contradicts the
//! chunk stream it continues, and the rest of a stream whose first chunk lacked its id) is left
//! out, and counted. Kept, it would read differently once the chunks around it are expanded.
//!
//! Compacting a compacted stream at the same level changes nothing: what is held is always
//! written where a second pass would write it again (tests/compaction_props.rs).
//!
//! `snapshot`: each completed run becomes RUN_STARTED (its input holding only messages new to
//! the history), one MESSAGES_SNAPSHOT and one STATE_SNAPSHOT with the run's result, and its
//! terminal event. A run whose result a snapshot cannot reproduce (messages reordered, tool
//! calls left for the client that its terminal event does not list), or that is still open
//! at the end, is kept at the `deltas` level.
//!
//! Whether the result means the same is not assumed here: `agui-lens compact` folds both and
//! compares before it writes anything ([`verify`] does it as the events are written).
//!
//! ```
//! use agui_lens_core::check::stream::for_each_event;
//! use agui_lens_core::compact::{Compactor, Level};
//! use agui_lens_core::read::{Compression, InputFormat, InputSpec, ReadOptions};
//! use agui_lens_core::write::EventWriter;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/valid/agui-sdk-full.jsonl");
//! let mut compactor = Compactor::new(Level::Deltas, 256 << 20);
//! let mut out = EventWriter::new(Vec::new(), InputFormat::Jsonl, Compression::None)?;
//! for_each_event(&InputSpec::File(path.into()), &ReadOptions::default(), |event, raw| {
//!     Ok(compactor.push(event, raw, &mut out)?)
//! })?;
//! let threads = compactor.finish(&mut out)?;
//! let jsonl = out.finish()?;
//! assert_eq!(jsonl.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count(), 30);
//! assert_eq!(threads.len(), 1);
//! assert_eq!(threads[0].1.messages.len(), 6);
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod verify;

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::fold::{Folded, Folder, Outline, snapshot_restores};
use crate::protocol::chunks::{ChunkExpander, Piece};
use crate::protocol::event::{Event, EventType, RawPatch};
use crate::protocol::ids::{FastBuild, declared_call_ids};
use crate::write::{Output, write_json_str};

/// Why a stream holding `unreadable` frames that cannot be read as events is not compacted:
/// written back, they would be lost. `how_to_drop` names the option that drops them anyway
/// (`--drop-unreadable` for the command line). One sentence for every caller that refuses.
pub fn lost_frames(unreadable: u64, name: &str, how_to_drop: &str) -> String {
    format!(
        "{} could not be read as events and would be lost (`agui-lens check {name}` says \
         which; {how_to_drop} drops them)",
        crate::text::plural(unreadable, "frame")
    )
}

/// Why a stream holding `dropped` chunk events that the official client fails on (a first
/// chunk with no id, one that contradicts its stream, and the rest of such a stream) is not
/// compacted: they would be left out, and the compacted stream, which a client then reads
/// whole, would hide that the original breaks it. `how_to_drop` names the option that drops
/// them anyway.
pub fn failing_chunks(dropped: u64, name: &str, how_to_drop: &str) -> String {
    format!(
        "{} the official client fails on would be left out, and the compacted stream would \
         no longer fail (`agui-lens check {name}` says which; {how_to_drop} drops them)",
        crate::text::plural(dropped, "chunk event")
    )
}

/// Why a stream holding SSE frames the official client reads as one with the frame before,
/// and fails on (`framing/sse-frames-merged`), is not compacted: written back framed with
/// LF, the compacted stream would read whole and hide that the original breaks the client.
/// `how_to_force` names the option that compacts it anyway.
pub fn merged_frames(name: &str, how_to_force: &str) -> String {
    format!(
        "the official client reads SSE frames of it as one (framing/sse-frames-merged) and \
         fails; written back, the compacted stream would no longer fail (`agui-lens check \
         {name}` says where; {how_to_force} compacts it anyway)"
    )
}

/// What a compaction could not carry over of its input, counted as it was read: each a reason
/// not to write the compacted stream in its place unless told to drop it (one order of
/// reasons for the command and for Python's `compact`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unkept {
    /// Frames that could not be read as events.
    pub unreadable: u64,
    /// SSE frames the official client reads as one with the frame before.
    pub merged: u64,
    /// Protobuf frames whose fields were passed over in reading them.
    pub skipped: u64,
    /// Chunk events the official client fails on, left out.
    pub failing: u64,
    /// Events holding half of a UTF-16 pair: never left out (see [`Unkept::refusal_always`]).
    pub halves: u64,
}

impl Unkept {
    /// Whether anything would be left out.
    pub fn any(&self) -> bool {
        self.unreadable + self.merged + self.skipped + self.failing + self.halves > 0
    }

    /// Why `name` is not compacted whatever is asked: events that hold half of a UTF-16 pair
    /// (an emoji a delta cut in two, which a client joins as it appends) are JSON a client
    /// reads, which compaction can neither write back nor leave out (their text would go).
    pub fn refusal_always(&self, name: &str) -> Option<String> {
        (self.halves > 0).then(|| {
            format!(
                "{} {} half of a UTF-16 surrogate pair (framing/lone-surrogate; `agui-lens \
                 check {name}` says where): a client joins such halves as it appends text, \
                 a compacted stream cannot carry them, and leaving the events out would lose \
                 their text, so it is not compacted, whatever is asked",
                crate::text::plural(self.halves, "event"),
                if self.halves == 1 { "holds" } else { "hold" }
            )
        })
    }

    /// Why the compacted `name` may not replace it, the first reason there is; `how_to_drop`
    /// names the option that compacts it anyway.
    pub fn refusal(&self, name: &str, how_to_drop: &str) -> Option<String> {
        if self.unreadable > 0 {
            // What cannot be read as an event cannot be written back as one.
            Some(lost_frames(self.unreadable, name, how_to_drop))
        } else if self.merged > 0 {
            // The client fails on the original's framing; written back framed with LF, the
            // compacted stream would read whole, and the evidence would be gone.
            Some(merged_frames(name, how_to_drop))
        } else if self.skipped > 0 {
            // Read, the fields were passed over: written back, they would be gone.
            Some(skipped_fields(self.skipped, name, how_to_drop))
        } else if self.failing > 0 {
            // The original makes a client fail; left out, the evidence would be gone.
            Some(failing_chunks(self.failing, name, how_to_drop))
        } else {
            None
        }
    }
}

/// Why a stream whose protobuf frames carried fields passed over in reading them
/// (`framing/proto-unknown-field`) is not compacted: the events read lack them, so the
/// compacted stream would too. `how_to_force` names the option that compacts it anyway.
pub fn skipped_fields(frames: u64, name: &str, how_to_force: &str) -> String {
    format!(
        "{} carried fields this build's protobuf definitions do not have \
         (framing/proto-unknown-field): read, they are passed over, and written back they would \
         be lost (`agui-lens check {name}` says where; {how_to_force} compacts it anyway)",
        crate::text::plural(frames, "frame")
    )
}

/// Protobuf frames whose messages carried fields passed over in reading them: the first
/// such frame's number and what it carried, and how many, counted as an input is read.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkippedFields {
    pub first: Option<(u64, crate::protocol::proto::Skips)>,
    pub frames: u64,
}

impl SkippedFields {
    /// Counts `frame` if its reading passed over fields.
    pub fn note(&mut self, frame: &crate::read::Frame) {
        if let crate::read::FrameKind::Data {
            caveat: crate::read::Caveat::ProtoSkipped { skips, .. },
            ..
        } = frame.kind
        {
            self.first.get_or_insert((frame.line, skips));
            self.frames += 1;
        }
    }

    /// What reading `name` lost of them, when it lost anything: `done` says what was made
    /// of the events (“copied”, “returned”).
    pub fn said(&self, name: &str, done: &str) -> Option<String> {
        let (frame, skips) = self.first?;
        let first = skips.first.map_or_else(String::new, |f| format!(": {f}"));
        Some(format!(
            "{name}: {} carried fields this build's protobuf definitions do not have, the \
             first at frame {frame}{first} (framing/proto-unknown-field); they were passed \
             over in reading, and the events {done} lack them",
            crate::text::plural(self.frames, "frame"),
        ))
    }
}

/// SSE frames the official client reads as one with the frame before: the first such frame's
/// line and the line of the frame it is read with, and how many, counted as an input is read
/// ([`MergedFrames::note`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct MergedFrames {
    pub first: Option<(u64, u64)>,
    pub count: u64,
}

impl MergedFrames {
    pub fn note(&mut self, frame: &crate::read::Frame) {
        if let Some(with_line) = merged_with(frame) {
            self.first.get_or_insert((frame.line, with_line));
            self.count += 1;
        }
    }

    /// What reading `name` frame by frame made of them, when there were any: `done` says
    /// what was made of the events (“folded”, “copied”).
    pub fn said(&self, name: &str, done: &str) -> Option<String> {
        let (line, with_line) = self.first?;
        Some(format!(
            "{name}: the official client reads the SSE frame at line {line} as one with the \
             frame at line {with_line} (no two LFs part them: framing/sse-frames-merged) and \
             ends the stream there; here {} {done} as separate events, which a client never \
             gets (`agui-lens check {name}` says where)",
            match self.count {
                1 => "the two are".to_owned(),
                n => format!("{n} such frames are"),
            }
        ))
    }
}

/// Whether a frame is one the official client reads as one with the frame before
/// ([`merged_frames`]).
pub fn is_merged(frame: &crate::read::Frame) -> bool {
    merged_with(frame).is_some()
}

/// The line of the frame the official client reads `frame` as one with, when it does.
fn merged_with(frame: &crate::read::Frame) -> Option<u64> {
    match frame.kind {
        crate::read::FrameKind::Data {
            caveat: crate::read::Caveat::SseMerged { with_line },
            ..
        } => Some(with_line),
        _ => None,
    }
}

/// How far to compact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Merge deltas and collapse state and activity events; keep every run's events.
    Deltas,
    /// Replace each completed run by snapshots of its result.
    Snapshot,
}

/// An event held back (a run waiting for its terminal event at the `snapshot` level).
#[derive(Clone)]
enum Held {
    Raw(Vec<u8>),
    Event(Value),
}

impl Output for Vec<Held> {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.push(Held::Raw(bytes.to_vec()));
        Ok(())
    }
    fn event(&mut self, value: &Value) -> io::Result<()> {
        self.push(Held::Event(value.clone()));
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum ContentKind {
    Text,
    Reasoning,
    Tool,
}

impl ContentKind {
    fn of(ty: EventType) -> Option<ContentKind> {
        match ty {
            EventType::TextMessageContent => Some(ContentKind::Text),
            EventType::ReasoningMessageContent => Some(ContentKind::Reasoning),
            EventType::ToolCallArgs => Some(ContentKind::Tool),
            _ => None,
        }
    }

    fn starting(ty: EventType) -> Option<ContentKind> {
        match ty {
            EventType::TextMessageStart => Some(ContentKind::Text),
            EventType::ReasoningMessageStart => Some(ContentKind::Reasoning),
            EventType::ToolCallStart => Some(ContentKind::Tool),
            _ => None,
        }
    }

    fn ending(ty: EventType) -> Option<ContentKind> {
        match ty {
            EventType::TextMessageEnd => Some(ContentKind::Text),
            EventType::ReasoningMessageEnd => Some(ContentKind::Reasoning),
            EventType::ToolCallEnd => Some(ContentKind::Tool),
            _ => None,
        }
    }

    fn event_type(self) -> EventType {
        match self {
            ContentKind::Text => EventType::TextMessageContent,
            ContentKind::Reasoning => EventType::ReasoningMessageContent,
            ContentKind::Tool => EventType::ToolCallArgs,
        }
    }

    fn id_field(self) -> &'static str {
        match self {
            ContentKind::Tool => "toolCallId",
            _ => "messageId",
        }
    }

    /// Which of the merged-entry indexes holds this kind's ids.
    fn slot(self) -> usize {
        match self.target() {
            ContentKind::Tool => 1,
            _ => 0,
        }
    }

    /// Where the content lands, for holding it: text and reasoning content alike append to
    /// the message with their id, so they are merged together, in the order they came.
    fn target(self) -> ContentKind {
        match self {
            ContentKind::Reasoning => ContentKind::Text,
            kind => kind,
        }
    }
}

/// Whether two ids are the same, compared a word at a time in line: this runs for every delta
/// (~700k per 100 MB), and a call to `memcmp` for a 36-byte id cost more than the comparison.
#[inline]
fn same_id(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (Some(a_last), Some(b_last)) = (a.last_chunk::<8>(), b.last_chunk::<8>()) else {
        return a == b;
    };
    if a.len() != b.len() || a_last != b_last {
        return false;
    }
    // The last 8 bytes are equal: the words before them (the last may overlap) decide.
    let word = |s: &[u8], at: usize| s[at..].first_chunk::<8>().copied();
    (0..a.len() - 8)
        .step_by(8)
        .all(|at| word(a, at) == word(b, at))
}

/// Deltas of one message or tool call, merged so far.
struct Merged {
    /// The kind of the first content merged, which the written event takes.
    kind: ContentKind,
    id: String,
    delta: String,
    /// Where the text of plain deltas the folder has not been given starts in `delta`, if
    /// there are any (empty ones count: a first empty delta still gives a message content):
    /// they are handed to it together, before it is next used ([`Compactor::fold_held`]).
    unfolded: Option<usize>,
    metadata: Option<Map<String, Value>>,
    owner: Option<Value>,
}

impl Merged {
    /// Whether adding `more` bytes of text would take it past `limit`: then what it holds is
    /// written first (it holds something: a delta is never cut).
    fn would_pass(&self, more: usize, limit: usize) -> bool {
        !self.delta.is_empty() && self.delta.len() + more > limit
    }
}

/// What a run (or the stretch of stream between run boundaries) collapses.
#[derive(Default)]
struct Segment {
    state_changed: bool,
    /// A STATE_SNAPSHOT was among the state events.
    state_snapshot: bool,
    /// The operations of the deltas that applied, in order: the JSON text of each, between
    /// commas (held as values, a large patch's operations take twenty times their text).
    applied_ops: Vec<u8>,
    /// No state was set when the segment's first state event came: a delta that applies then
    /// sets one (on the `{}` a client starts with), even with no operation in it.
    state_was_unset: bool,
    state_metadata: Option<Map<String, Value>>,
    /// Activities whose later events collapse, in first-collapse order, with their metadata.
    activities_collapsed: Vec<(String, Option<Map<String, Value>>)>,
}

/// A run held back at the `snapshot` level until its terminal event.
struct OpenRun {
    started: Value,
    /// How many messages the history held before RUN_STARTED added its input's new ones (it
    /// only appends): the first so many of [`Compactor::at_start`].
    known_before: usize,
    /// The state then (absent is null: nothing a client does tells them apart).
    state_at_start: Value,
    held: Vec<Held>,
    /// A delta in it patched a state the stream never set, or did not apply (kept as it
    /// came), or the file holds another thread: no snapshot can stand for it.
    unknown_base: bool,
    /// Its CUSTOM and RAW events, which its snapshots keep, in order, after RUN_STARTED.
    payloads: Vec<Held>,
}

/// A thread of the stream other than the one being compacted, as it was left: its fold and
/// the outlines of its messages at its last run's start (see [`Compactor::at_start`]).
struct Parked {
    thread: Option<String>,
    folder: Folder,
    at_start: Vec<Outline>,
}

pub struct Compactor {
    level: Level,
    expander: ChunkExpander,
    pieces: Vec<Piece>,
    /// The fold of the thread being compacted: the thread of the last RUN_STARTED, as
    /// `agui-lens fold` routes events (those before any run belong to the first thread).
    folder: Folder,
    /// The current thread's name, and the names of all threads in the order they came (none
    /// before the first event).
    thread: Option<String>,
    threads: Vec<Option<String>>,
    /// The other threads, each folded on its own: a client of one thread never sees
    /// another's messages or state.
    parked: Vec<Parked>,
    /// What a thread's fold starts from: the state limit and `--initial-state`.
    state_limit: usize,
    initial_state: Option<Value>,
    merged: Vec<Merged>,
    /// Where each merged entry is in `merged`, by id: one map per target (text and reasoning
    /// content share the message's, tool arguments have their own).
    merged_index: [HashMap<String, usize, FastBuild>; 2],
    /// The messages and tool calls started and not yet ended, by target as `merged_index`:
    /// only their deltas are merged. A delta for one not open (after its end, before any
    /// start) is one the official client fails the run at: it is kept where it came, as
    /// merged and written later it would move that failure to another event.
    open: [HashSet<String, FastBuild>; 2],
    /// Text buffers of merged entries written out, kept for the next ones.
    spare_text: Vec<String>,
    /// Where merged events are serialised, kept between them.
    scratch: Vec<u8>,
    /// Where the last delta was merged (a hint: checked before it is used).
    last_merged: usize,
    segment: Segment,
    run: Option<OpenRun>,
    /// At the `snapshot` level, the outlines of the messages right after the open run's
    /// RUN_STARTED applied (kept up to date by [`Folder::sync_outlines`] from one run to the
    /// next): whether a snapshot of the run's result restores it depends on no more.
    at_start: Vec<Outline>,
    /// Chunks left out: the official client fails on them.
    dropped: u64,
    /// STATE_DELTA events kept as they were, as no state was known before them.
    unknown_base: u64,
    /// STATE_DELTA events that did not apply (a client warns, and ignores each; kept).
    failed_deltas: u64,
    /// The large patch of the event being compacted, read as text (see [`Event::patch`]).
    patch: Option<Arc<RawPatch>>,
    /// The event being compacted was read with stand-ins for halves of UTF-16 pairs (see
    /// [`Event::halves`]): its text may finish a pair the text merged before it began.
    joining: bool,
    /// The most text one merged event takes (see [`Compactor::with_max_line`]).
    merge_limit: usize,
}

/// How many bytes one character of a delta can take once written: a control character is
/// escaped as `\u00XX`.
const WORST_ESCAPE: usize = 6;

impl Compactor {
    pub fn new(level: Level, state_limit: usize) -> Self {
        Compactor {
            level,
            expander: ChunkExpander::new(),
            pieces: Vec::new(),
            folder: Folder::new(state_limit),
            thread: None,
            threads: Vec::new(),
            parked: Vec::new(),
            state_limit,
            initial_state: None,
            merged: Vec::new(),
            merged_index: Default::default(),
            open: Default::default(),
            spare_text: Vec::new(),
            scratch: Vec::new(),
            last_merged: 0,
            segment: Segment::default(),
            run: None,
            at_start: Vec::new(),
            dropped: 0,
            unknown_base: 0,
            failed_deltas: 0,
            patch: None,
            joining: false,
            merge_limit: merge_limit(crate::read::DEFAULT_MAX_LINE),
        }
    }

    /// The largest line the compacted stream is to be read with (`--max-line`): merged deltas
    /// are written in as many events as keep each well under it, whatever their characters
    /// escape to. A delta is never cut, and it came in a line no longer than that.
    pub fn with_max_line(mut self, max_line: usize) -> Self {
        self.merge_limit = merge_limit(max_line);
        self
    }

    /// Merges each message's (and call's) deltas into one event whatever their length: for a
    /// comparison held in memory, where how a long text was split must not matter either, not
    /// for a stream to be written and read again.
    pub fn merging_whole(mut self) -> Self {
        self.merge_limit = usize::MAX / 2;
        self
    }

    /// Starts from a state the stream does not carry (`--initial-state`): what the
    /// original and the compacted stream are both folded from.
    pub fn with_state(mut self, state: Option<Value>) -> Self {
        self.initial_state = state.clone();
        self.folder = std::mem::replace(&mut self.folder, Folder::new(0)).with_state(state);
        self
    }

    /// How many chunks were left out: the official client fails on them (`check` says why).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// How many STATE_DELTA events so far did not apply to the state: a client warns of each
    /// and ignores it, and compaction keeps each as written, where it came.
    pub fn failed_deltas(&self) -> u64 {
        self.failed_deltas
    }

    /// How many STATE_DELTA events were kept as they were: no state was known before them
    /// (no snapshot, no input state, no `--initial-state`), so what they patch is unknown.
    pub fn kept_deltas(&self) -> u64 {
        self.unknown_base
    }

    /// Compacts one event as read; `raw` is its text.
    pub fn push(&mut self, event: &Event, raw: &[u8], out: &mut dyn Output) -> io::Result<()> {
        self.first_thread();
        self.fold_held();
        let raw = &*minified(raw);
        let Some(ty) = event.kind else {
            // Not an AG-UI event: kept as it is.
            return self.sink(out).raw(raw);
        };
        self.joining = event.halves;
        let mut pieces = std::mem::take(&mut self.pieces);
        let expanded = self.expander.expand(Some(ty), &event.value, &mut pieces);
        let is_chunk = matches!(
            ty,
            EventType::TextMessageChunk
                | EventType::ToolCallChunk
                | EventType::ReasoningMessageChunk
        );
        if is_chunk && (expanded.is_err() || self.expander.swallowed()) {
            self.dropped += 1;
        }
        let result = if is_chunk && pieces.is_empty() {
            // A chunk a client drops (it cannot be expanded, or continues a stream that could
            // not), or one that adds nothing to its stream: a client sees nothing in its place.
            // Kept, it would read differently once the chunks around it are expanded.
            Ok(())
        } else {
            let mut result = Ok(());
            for piece in &pieces {
                result = match piece {
                    Piece::Original => {
                        self.patch = event.patch.clone();
                        let result = self.piece(ty, &event.value, Some(raw), out);
                        self.patch = None;
                        result
                    }
                    Piece::Synthetic(value) => {
                        let ty = EventType::of(value).unwrap_or(ty);
                        self.piece(ty, value, None, out)
                    }
                };
                if result.is_err() {
                    break;
                }
            }
            result
        };
        self.pieces = pieces;
        result
    }

    /// Writes what is still held: deltas of messages never ended, the last segment's state,
    /// a run still open.
    /// Returns what each thread of the input folds to, in the order threads came, for
    /// verification.
    pub fn finish(mut self, out: &mut dyn Output) -> io::Result<Vec<(Option<String>, Folded)>> {
        self.fold_held();
        self.flush_boundary(out)?;
        if let Some(run) = self.run.take() {
            write_held(run.held, out)?;
        }
        self.parked.push(Parked {
            thread: self.thread.take(),
            folder: self.folder,
            at_start: Vec::new(),
        });
        let mut parked = self.parked;
        Ok(self
            .threads
            .into_iter()
            .filter_map(|thread| {
                let at = parked.iter().position(|p| p.thread == thread)?;
                Some((thread, parked.swap_remove(at).folder.finish()))
            })
            .collect())
    }

    /// The first event starts the first thread, unnamed until a run names it.
    fn first_thread(&mut self) {
        if self.threads.is_empty() {
            self.threads.push(None);
        }
    }

    /// Makes the thread of a RUN_STARTED the one compacted, as `agui-lens fold` routes it: a
    /// thread seen before is taken up where it was left, a new one starts from the initial
    /// state, and the events before any run belong to the first thread. Called at a run
    /// boundary, with nothing held.
    fn enter_thread(&mut self, started: &Value) {
        let thread = started
            .get("threadId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if thread == self.thread {
            return;
        }
        if self.parked.is_empty() && self.threads.len() == 1 && self.thread.is_none() {
            // Events before any run belong to the first thread.
            self.threads[0] = thread.clone();
            self.thread = thread;
            return;
        }
        let left = Parked {
            thread: self.thread.take(),
            folder: std::mem::replace(&mut self.folder, Folder::new(0)),
            at_start: std::mem::take(&mut self.at_start),
        };
        self.parked.push(left);
        match self.parked.iter().position(|p| p.thread == thread) {
            Some(at) => {
                let back = self.parked.swap_remove(at);
                self.folder = back.folder;
                self.at_start = back.at_start;
            }
            None => {
                self.folder = Folder::new(self.state_limit).with_state(self.initial_state.clone());
                self.threads.push(thread.clone());
            }
        }
        self.thread = thread;
    }

    /// Hands the folder the text of the plain deltas merged since it was last used. Deltas
    /// held for different messages or calls append to different strings, so applying each
    /// one's text at once ends as applying the deltas in the order they came would.
    fn fold_held(&mut self) {
        for merged in &mut self.merged {
            if let Some(from) = merged.unfolded.take() {
                let text = &merged.delta[from..];
                self.folder
                    .append_taken(merged.kind.event_type(), &merged.id, text);
            }
        }
    }

    /// Where output goes now: held with the open run at the `snapshot` level, else out.
    fn sink<'a>(&'a mut self, out: &'a mut dyn Output) -> &'a mut dyn Output {
        match &mut self.run {
            Some(run) => &mut run.held,
            None => out,
        }
    }

    fn piece(
        &mut self,
        ty: EventType,
        value: &Value,
        raw: Option<&[u8]>,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        use EventType::*;
        if let Some(kind) = ContentKind::of(ty) {
            if !matches!(value.get("delta"), Some(Value::String(_))) {
                // Outside the schema (a client would append whatever JavaScript makes of the
                // field): kept as it is, after what was merged before it.
                if let Some(id) = value.get(kind.id_field()).and_then(Value::as_str) {
                    self.flush_merged(kind, id, out)?;
                }
                self.folder.apply_expanded(ty, value);
                return write_one(value, raw, self.sink(out));
            }
            let id = value.get(kind.id_field()).and_then(Value::as_str);
            if !id.is_some_and(|id| self.merges(kind, id)) {
                // No message or call of its id is open: kept where it came (see `open`), with
                // what was merged before it written first, so that the client fails there
                // holding what it held.
                self.flush_all_merged(out)?;
                self.folder.set_halves(self.joining);
                self.folder.apply_expanded(ty, value);
                return write_one(value, raw, self.sink(out));
            }
            if let (Some(id), Some(Value::String(delta))) = (id, value.get("delta")) {
                if self.past_limit(kind, id, delta.len()) {
                    // What is merged so far is written first: one event would be too long.
                    self.flush_merged(kind, id, out)?;
                }
            }
            self.folder.set_halves(self.joining);
            self.folder.apply_expanded(ty, value);
            self.merge(kind, value, self.joining);
            return Ok(());
        }
        match ty {
            StateDelta if !self.folder.state_known() => {
                // Against a state the stream never set: what it patches is whatever the client
                // held (the history may start mid-thread), and merged into one patch, or made a
                // snapshot of the `{}` assumed, it would patch that differently. Kept as it was.
                self.folder
                    .apply_expanded_patched(ty, value, self.patch.as_deref());
                self.failed_deltas += u64::from(!self.folder.last_delta_applied());
                self.unknown_base += 1;
                if let Some(run) = &mut self.run {
                    run.unknown_base = true;
                }
                write_one(value, raw, self.sink(out))
            }
            StateSnapshot | StateDelta => {
                let was_unset = self.folder.state().is_none();
                self.folder
                    .apply_expanded_patched(ty, value, self.patch.as_deref());
                if ty == StateDelta && !self.folder.last_delta_applied() {
                    return self.keep_failed_delta(value, raw, out);
                }
                if !self.segment.state_changed {
                    self.segment.state_was_unset = was_unset;
                }
                self.segment.state_changed = true;
                if ty == StateSnapshot {
                    self.segment.state_snapshot = true;
                } else {
                    let ops = &mut self.segment.applied_ops;
                    match (self.patch.as_deref(), value.get("delta")) {
                        (Some(raw), _) => raw.each(|_, op| append_op(ops, &op).is_ok()),
                        (None, Some(Value::Array(items))) => {
                            for op in items.iter() {
                                append_op(ops, op)?;
                            }
                        }
                        (None, _) => {}
                    }
                }
                merge_into(&mut self.segment.state_metadata, value.get("metadata"));
                Ok(())
            }
            ActivitySnapshot | ActivityDelta => self.activity(ty, value, raw, out),
            RunStarted => {
                self.flush_boundary(out)?;
                self.close_open();
                if let Some(run) = self.run.take() {
                    // A run that never ended: kept at the deltas level.
                    write_held(run.held, out)?;
                }
                self.enter_thread(value);
                if self.level == Level::Snapshot {
                    let known_before = self.folder.messages().len();
                    self.folder.apply_expanded(ty, value);
                    self.folder.sync_outlines(&mut self.at_start);
                    debug_assert!(
                        self.at_start.iter().eq(self
                            .folder
                            .messages()
                            .iter()
                            .map(Outline::of)
                            .collect::<Vec<_>>()
                            .iter())
                    );
                    // A file of two threads is one stream to the official client, whose
                    // reducer keeps one list of messages: a run's snapshot of its own thread
                    // would replace the other's. Once a second thread is seen, runs are kept.
                    let other_thread = self.threads.len() > 1;
                    self.run = Some(OpenRun {
                        started: value.clone(),
                        known_before,
                        state_at_start: self.folder.state().cloned().unwrap_or(Value::Null),
                        held: vec![raw_or_event(value, raw)],
                        unknown_base: other_thread,
                        payloads: Vec::new(),
                    });
                    Ok(())
                } else {
                    self.folder.apply_expanded(ty, value);
                    write_one(value, raw, out)
                }
            }
            RunFinished | RunError => {
                self.flush_boundary(out)?;
                self.close_open();
                self.folder.apply_expanded(ty, value);
                match self.run.take() {
                    Some(run) => self.end_run(run, value, raw, out),
                    None => write_one(value, raw, out),
                }
            }
            MessagesSnapshot => {
                self.flush_activities(out)?;
                self.flush_all_merged(out)?;
                self.folder.apply_expanded(ty, value);
                write_one(value, raw, self.sink(out))
            }
            _ => {
                if let Some(kind) = ContentKind::ending(ty) {
                    if let Some(id) = value.get(kind.id_field()).and_then(Value::as_str) {
                        self.flush_merged(kind, id, out)?;
                        self.open[kind.slot()].remove(id);
                    }
                }
                if let Some(kind) = ContentKind::starting(ty) {
                    if let Some(id) = value.get(kind.id_field()).and_then(Value::as_str) {
                        self.open[kind.slot()].insert(id.to_owned());
                    }
                }
                self.flush_referenced(value, out)?;
                self.folder.apply_expanded(ty, value);
                if let (Custom | Raw, Some(run)) = (ty, &mut self.run) {
                    // The application's own payload: no snapshot holds it, so the run's
                    // snapshots carry it too.
                    run.payloads.push(raw_or_event(value, raw));
                }
                write_one(value, raw, self.sink(out))
            }
        }
    }

    /// Merges a delta into what is held for its message or call, joining halves of a UTF-16
    /// pair when `joining` (the event was read with stand-ins for them).
    fn merge(&mut self, kind: ContentKind, value: &Value, joining: bool) {
        let Some(id) = value.get(kind.id_field()).and_then(Value::as_str) else {
            return;
        };
        let delta = match value.get("delta") {
            Some(Value::String(delta)) => delta.as_str(),
            _ => "",
        };
        let owner = value.get("subagentRunId").filter(|o| !o.is_null());
        let merged = self.merged_entry(kind, id);
        match joining {
            true => crate::read::halves::append(&mut merged.delta, delta),
            false => merged.delta.push_str(delta),
        }
        merge_into(&mut merged.metadata, value.get("metadata"));
        if let Some(owner) = owner {
            merged.owner.get_or_insert_with(|| owner.clone());
        }
    }

    /// Whether adding `more` bytes to what is merged for this message or call would pass the
    /// most one merged event takes.
    fn past_limit(&self, kind: ContentKind, id: &str, more: usize) -> bool {
        self.merged_index[kind.slot()]
            .get(id)
            .is_some_and(|&at| self.merged[at].would_pass(more, self.merge_limit))
    }

    /// At a run's boundary, no message or call counts as open any more: a run snapshotted
    /// leaves out the starts of those it left open, so that a second compaction, which does
    /// not see them, keeps their later deltas where they came, as the first did.
    fn close_open(&mut self) {
        self.open.iter_mut().for_each(HashSet::clear);
    }

    /// Whether a delta of this message or call is merged: deltas of it are held, or it is
    /// open (see `open`).
    fn merges(&self, kind: ContentKind, id: &str) -> bool {
        self.find_merged(kind, id).is_some() || self.open[kind.slot()].contains(id)
    }

    /// The deltas merged so far for one message or tool call, made empty when there are none.
    fn merged_entry(&mut self, kind: ContentKind, id: &str) -> &mut Merged {
        let at = match self.find_merged(kind, id) {
            Some(at) => at,
            None => self.new_merged(kind, id),
        };
        self.last_merged = at;
        &mut self.merged[at]
    }

    /// Where the deltas merged so far for one message or tool call are, if any are.
    fn find_merged(&self, kind: ContentKind, id: &str) -> Option<usize> {
        // Deltas of one message usually come in a row: the last one merged is tried first.
        let hinted = self
            .merged
            .get(self.last_merged)
            .is_some_and(|m| m.kind.target() == kind.target() && same_id(&m.id, id));
        // Few are open at once: a scan beats hashing the id.
        if hinted {
            Some(self.last_merged)
        } else if self.merged.len() <= 8 {
            self.merged
                .iter()
                .position(|m| m.kind.target() == kind.target() && same_id(&m.id, id))
        } else {
            self.merged_index[kind.slot()].get(id).copied()
        }
    }

    /// A new, empty entry of merged deltas for one message or tool call: where it is.
    fn new_merged(&mut self, kind: ContentKind, id: &str) -> usize {
        self.merged.push(Merged {
            kind,
            id: id.to_owned(),
            delta: self.spare_text.pop().unwrap_or_default(),
            unfolded: None,
            metadata: None,
            owner: None,
        });
        self.merged_index[kind.slot()].insert(id.to_owned(), self.merged.len() - 1);
        self.merged.len() - 1
    }

    /// Takes a plain content delta read without building the event (see
    /// [`crate::read::delta`]): `false` when it needs [`Compactor::push`] after all (a chunk
    /// stream is open, which the event would close, or no message or call of its id is open,
    /// so that it is kept where it came).
    pub fn push_delta(
        &mut self,
        ty: EventType,
        id: &str,
        delta: &str,
        owner: Option<&str>,
    ) -> bool {
        let Some(kind) = ContentKind::of(ty) else {
            return false;
        };
        self.first_thread();
        if !self.expander.is_idle() || !self.folder.take_delta() {
            return false;
        }
        // The folder gets the text when it is next used (`fold_held`), all of a run of deltas
        // at once: one lookup of the message rather than one per delta.
        let limit = self.merge_limit;
        let at = match self.find_merged(kind, id) {
            Some(at) => at,
            None if self.open[kind.slot()].contains(id) => self.new_merged(kind, id),
            // Of no open message or call: `push` keeps it where it came.
            None => return false,
        };
        self.last_merged = at;
        let merged = &mut self.merged[at];
        if merged.would_pass(delta.len(), limit) {
            // One event would be too long: `push` writes what is merged so far first.
            return false;
        }
        merged.unfolded.get_or_insert(merged.delta.len());
        merged.delta.push_str(delta);
        if let Some(owner) = owner {
            merged
                .owner
                .get_or_insert_with(|| Value::String(owner.to_owned()));
        }
        true
    }

    /// Writes the merged deltas of one message or tool call, if any are held.
    fn flush_merged(
        &mut self,
        kind: ContentKind,
        id: &str,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        let Some(at) = self.merged_index[kind.slot()].remove(id) else {
            return Ok(());
        };
        let merged = self.merged.remove(at);
        for slot in self
            .merged_index
            .iter_mut()
            .flat_map(|index| index.values_mut())
        {
            if *slot > at {
                *slot -= 1;
            }
        }
        self.write_merged(merged, out)
    }

    fn write_merged(&mut self, merged: Merged, out: &mut dyn Output) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.scratch);
        merged_json(&merged, &mut buf)?;
        self.sink(out).raw(&buf)?;
        self.scratch = buf;
        // Its buffer is kept for the next message, unless it grew large.
        let mut text = merged.delta;
        if self.spare_text.len() < 8 && text.capacity() <= 64 * 1024 {
            text.clear();
            self.spare_text.push(text);
        }
        Ok(())
    }

    fn flush_all_merged(&mut self, out: &mut dyn Output) -> io::Result<()> {
        self.merged_index.iter_mut().for_each(HashMap::clear);
        for merged in std::mem::take(&mut self.merged) {
            self.write_merged(merged, out)?;
        }
        Ok(())
    }

    /// Before an event that names a message or tool call, its merged deltas are written.
    fn flush_referenced(&mut self, value: &Value, out: &mut dyn Output) -> io::Result<()> {
        if self.merged.is_empty() {
            return Ok(());
        }
        for field in ["messageId", "toolCallId", "entityId", "parentMessageId"] {
            if let Some(id) = value.get(field).and_then(Value::as_str) {
                // Reasoning content is merged with the text of its message: two targets.
                for kind in [ContentKind::Text, ContentKind::Tool] {
                    self.flush_merged(kind, id, out)?;
                }
            }
        }
        Ok(())
    }

    fn activity(
        &mut self,
        ty: EventType,
        value: &Value,
        raw: Option<&[u8]>,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        let Some(id) = value
            .get("messageId")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            self.folder
                .apply_expanded_patched(ty, value, self.patch.as_deref());
            return write_one(value, raw, self.sink(out));
        };
        let collapsed = self
            .segment
            .activities_collapsed
            .iter()
            .position(|(a, _)| *a == id);
        let is_activity = self
            .folder
            .message(&id)
            .is_some_and(|m| m.get("role").and_then(Value::as_str) == Some("activity"));
        // Only an event that creates the activity's message is written in place (where the
        // message takes its place in the list); any later one only changes its content, and
        // is collapsed into one snapshot at the boundary.
        let collapse = collapsed.is_some() || is_activity;
        self.folder
            .apply_expanded_patched(ty, value, self.patch.as_deref());
        if ty == EventType::ActivityDelta && is_activity && !self.folder.last_delta_applied() {
            return self.keep_failed_delta(value, raw, out);
        }
        if !collapse {
            // Written here, after what it names. A collapsed one is written at the boundary,
            // without naming anything, and so is what it names.
            self.flush_referenced(value, out)?;
            return write_one(value, raw, self.sink(out));
        }
        let at = match collapsed {
            Some(at) => at,
            None => {
                self.segment.activities_collapsed.push((id, None));
                self.segment.activities_collapsed.len() - 1
            }
        };
        merge_into(
            &mut self.segment.activities_collapsed[at].1,
            value.get("metadata"),
        );
        Ok(())
    }

    /// Writes a STATE_DELTA or ACTIVITY_DELTA that did not apply: it changed nothing, but a
    /// client warns of it and `check` reports it, so it is kept as written, where it came,
    /// after what came before it is written out (so it meets the state or content it met), and
    /// its run is not made snapshots of.
    fn keep_failed_delta(
        &mut self,
        value: &Value,
        raw: Option<&[u8]>,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        self.failed_deltas += 1;
        self.flush_boundary(out)?;
        if let Some(run) = &mut self.run {
            run.unknown_base = true;
        }
        write_one(value, raw, self.sink(out))
    }

    /// Writes one ACTIVITY_SNAPSHOT per collapsed activity: its content as it now stands.
    fn flush_activities(&mut self, out: &mut dyn Output) -> io::Result<()> {
        for (id, metadata) in std::mem::take(&mut self.segment.activities_collapsed) {
            let Some(message) = self.folder.message(&id) else {
                continue;
            };
            if message.get("role").and_then(Value::as_str) != Some("activity") {
                continue;
            }
            let mut snapshot = Map::new();
            snapshot.insert("type".into(), EventType::ActivitySnapshot.as_str().into());
            snapshot.insert("messageId".into(), Value::String(id.clone()));
            for field in ["activityType", "content"] {
                if let Some(v) = message.get(field) {
                    snapshot.insert(field.into(), v.clone());
                }
            }
            snapshot.insert("replace".into(), Value::Bool(true));
            if let Some(owner) = message.get("subagentRunId") {
                snapshot.insert("subagentRunId".into(), owner.clone());
            }
            if let Some(metadata) = metadata {
                snapshot.insert("metadata".into(), Value::Object(metadata));
            }
            let snapshot = Value::Object(snapshot);
            self.sink(out).event(&snapshot)?;
        }
        Ok(())
    }

    /// Writes everything held at a run boundary, in the order a second compaction would
    /// write it again (so that compacting is idempotent): collapsed activities (which a
    /// second pass may write where it meets them), merged content, then the state.
    fn flush_boundary(&mut self, out: &mut dyn Output) -> io::Result<()> {
        self.flush_activities(out)?;
        self.flush_all_merged(out)?;
        self.flush_segment(out)
    }

    /// Writes what the segment collapsed: its state, then its activities. The state goes as
    /// one STATE_SNAPSHOT, or — when the segment had no snapshot and that is smaller — as one
    /// STATE_DELTA holding the operations that applied.
    fn flush_segment(&mut self, out: &mut dyn Output) -> io::Result<()> {
        let segment = std::mem::take(&mut self.segment);
        if segment.state_changed {
            // Serialised with the state borrowed: a state is often large, and copying it to
            // build the event would cost more than writing it.
            let metadata = segment.state_metadata.map(Value::Object);
            let snapshot = self.folder.state().map(|state| StateSnapshot {
                metadata: metadata.as_ref(),
                snapshot: state,
                ty: EventType::StateSnapshot.as_str(),
            });
            // Deltas that applied, or that set the state where none was, even as `[]`.
            let sets_state = segment.state_was_unset && self.folder.state().is_some();
            let delta = (!segment.state_snapshot
                && (!segment.applied_ops.is_empty() || sets_state))
                .then(|| state_delta(&segment.applied_ops, metadata.as_ref()))
                .transpose()?;
            let chosen = match (snapshot, delta) {
                // Without a snapshot in the segment, only deltas that applied changed anything.
                // The snapshot is counted only as far as the delta's length: usually the state
                // is the larger, and then it is not written out in full just to be measured.
                (Some(s), Some(d)) => Some(match serialized_len_within(&s, d.len()) {
                    Some(_) => serialized(&s)?,
                    None => d,
                }),
                (Some(s), None) if segment.state_snapshot => Some(serialized(&s)?),
                (_, d) => d,
            };
            if let Some(event) = chosen {
                self.sink(out).raw(&event)?;
            }
        }
        self.segment.activities_collapsed = segment.activities_collapsed;
        self.flush_activities(out)?;
        Ok(())
    }

    /// A run ended: at the `snapshot` level, replaced by snapshots of its result when they
    /// reproduce it, trip no reference rule, and are smaller; else written as held.
    fn end_run(
        &mut self,
        run: OpenRun,
        terminal: &Value,
        raw: Option<&[u8]>,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        if run.unknown_base {
            // Its state is what its deltas make of a state the stream does not hold.
            write_held(run.held, out)?;
            return write_one(terminal, raw, out);
        }
        let held = held_len(&run.held);
        let may_be_smaller = self.snapshot_may_be_smaller(held);
        // The bound is a bound (checked on every stream the tests compact).
        debug_assert!(
            may_be_smaller
                || self
                    .run_snapshots(&run, terminal)
                    .is_none_or(|s| held_len(&s) >= held)
        );
        let snapshots = if may_be_smaller {
            self.run_snapshots(&run, terminal)
        } else {
            None
        };
        let chosen = match snapshots {
            Some(snapshots) if held_len(&snapshots) < held => snapshots,
            _ => run.held,
        };
        write_held(chosen, out)?;
        write_one(terminal, raw, out)
    }

    /// Whether a MESSAGES_SNAPSHOT of the history could take fewer than `held` bytes: it holds
    /// every message serialised, so once they add up to `held` it cannot. Counting stops
    /// there, so a run costs what it holds, not what the whole history holds (building and
    /// checking the snapshot of a long thread's history at every run was quadratic).
    fn snapshot_may_be_smaller(&self, held: usize) -> bool {
        let mut total = 0usize;
        for message in self.folder.messages() {
            // A message is counted only as far as it could leave the snapshot smaller: one
            // that gathers calls run after run (one parentMessageId named by every run) was
            // written out whole at every run.
            match serialized_len_within(message, held - total) {
                Some(len) => total += len,
                None => return false,
            }
            if total >= held {
                return false;
            }
        }
        true
    }

    /// RUN_STARTED (its input holding only messages new to the history), MESSAGES_SNAPSHOT and
    /// STATE_SNAPSHOT of the run's result, if a snapshot reproduces it cleanly: not when the
    /// run leaves tool calls for the client to answer that its `terminal` event does not list
    /// (a client learns of those from the run's tool call events, which a snapshot replaces).
    fn run_snapshots(&self, run: &OpenRun, terminal: &Value) -> Option<Vec<Held>> {
        let left_pending = self
            .folder
            .last_run()
            .map_or(&[][..], |r| &r.pending_tool_calls[..]);
        if !left_pending.is_empty() && Some(left_pending) != listed_pending(terminal) {
            return None;
        }
        let result = self.folder.messages();
        let incoming: Vec<Value> = result.iter().cloned().map(Value::Object).collect();
        if !snapshot_restores(&self.at_start, result) || !references_hold(result) {
            return None;
        }
        let mut started = run.started.clone();
        if let Some(Value::Array(messages)) =
            started.get_mut("input").and_then(|i| i.get_mut("messages"))
        {
            let known: HashSet<&str> = self.at_start[..run.known_before]
                .iter()
                .filter_map(Outline::id)
                .collect();
            messages.retain(|m| {
                !m.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| known.contains(id))
            });
        }
        let mut held = vec![Held::Event(started)];
        held.extend(run.payloads.iter().cloned());
        let mut snapshot = Map::new();
        snapshot.insert("type".into(), EventType::MessagesSnapshot.as_str().into());
        snapshot.insert("messages".into(), Value::Array(incoming));
        held.push(Held::Event(Value::Object(snapshot)));
        // A state the run left as it found it needs no snapshot.
        if let Some(state) = self.folder.state().filter(|&s| *s != run.state_at_start) {
            let mut snapshot = Map::new();
            snapshot.insert("type".into(), EventType::StateSnapshot.as_str().into());
            snapshot.insert("snapshot".into(), state.clone());
            held.push(Held::Event(Value::Object(snapshot)));
        }
        Some(held)
    }
}

/// The tool calls a successful run's terminal event lists as left for the client, if it
/// lists any.
fn listed_pending(terminal: &Value) -> Option<&[Value]> {
    let outcome = terminal.get("outcome")?;
    if outcome.get("type").and_then(Value::as_str) != Some("success") {
        return None;
    }
    outcome
        .get("pendingToolCallIds")?
        .as_array()
        .map(Vec::as_slice)
        .filter(|ids| !ids.is_empty())
}

/// The most text one merged event takes when lines of up to `max_line` bytes are read: an
/// eighth of it, which its worst escape and the rest of the event fit in.
fn merge_limit(max_line: usize) -> usize {
    (max_line / (WORST_ESCAPE + 2)).max(1)
}

/// Whether a snapshot of these messages would pass the reference rules: unique ids, and every
/// tool message answering a call an assistant message in it declares.
fn references_hold(messages: &[Map<String, Value>]) -> bool {
    let mut ids = HashSet::new();
    let mut declared = HashSet::new();
    for m in messages {
        if let Some(id) = m.get("id").and_then(Value::as_str) {
            if !ids.insert(id) {
                return false;
            }
        }
        declared.extend(declared_call_ids(m.get("toolCalls")));
    }
    messages.iter().all(|m| {
        m.get("role").and_then(Value::as_str) != Some("tool")
            || m.get("toolCallId")
                .and_then(Value::as_str)
                .is_some_and(|call| declared.contains(call))
    })
}

fn held_len(held: &[Held]) -> usize {
    held.iter()
        .map(|h| match h {
            Held::Raw(bytes) => bytes.len() + 1,
            Held::Event(value) => serialized_len(value) + 1,
        })
        .sum()
}

/// An event's text without the whitespace between its tokens, which means nothing; kept
/// otherwise as written (key order, numbers, escapes). `raw` is valid JSON.
fn minified(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if is_minified(raw) {
        return std::borrow::Cow::Borrowed(raw);
    }
    let outside = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in raw.iter().enumerate() {
        let keep = if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            true
        } else {
            in_string = b == b'"';
            !outside(b)
        };
        match &mut out {
            Some(out) if keep => out.push(b),
            Some(_) => {}
            None if keep => {}
            None => out = Some(raw[..i].to_vec()),
        }
    }
    match out {
        Some(out) => std::borrow::Cow::Owned(out),
        None => std::borrow::Cow::Borrowed(raw),
    }
}

/// Whether valid JSON `raw` has no whitespace between its tokens: the usual case, settled
/// without looking at every byte of its strings one at a time (they are skipped to their
/// closing quote, and the short stretches between them are checked whole).
fn is_minified(raw: &[u8]) -> bool {
    let mut rest = raw;
    loop {
        let outside = match memchr::memchr(b'"', rest) {
            Some(at) => &rest[..at],
            None => rest,
        };
        if outside.iter().fold(false, |any, &b| {
            any | matches!(b, b' ' | b'\t' | b'\n' | b'\r')
        }) {
            return false;
        }
        if outside.len() == rest.len() {
            return true;
        }
        // Inside a string: on to its closing quote, past escapes.
        rest = &rest[outside.len() + 1..];
        loop {
            let Some(at) = memchr::memchr2(b'"', b'\\', rest) else {
                return true; // not valid JSON: nothing outside a string follows
            };
            if rest[at] == b'"' {
                rest = &rest[at + 1..];
                break;
            }
            rest = rest.get(at + 2..).unwrap_or_default();
        }
    }
}

fn raw_or_event(value: &Value, raw: Option<&[u8]>) -> Held {
    match raw {
        Some(raw) => Held::Raw(raw.to_vec()),
        None => Held::Event(value.clone()),
    }
}

fn write_one(value: &Value, raw: Option<&[u8]>, out: &mut dyn Output) -> io::Result<()> {
    match raw {
        Some(raw) => out.raw(raw),
        None => out.event(value),
    }
}

/// Writes a held run as it was compacted at the `deltas` level (its RUN_STARTED first).
fn write_held(held: Vec<Held>, out: &mut dyn Output) -> io::Result<()> {
    for item in held {
        match item {
            Held::Raw(bytes) => out.raw(&bytes)?,
            Held::Event(value) => out.event(&value)?,
        }
    }
    Ok(())
}

/// One content event holding the merged deltas. Like the official compaction, it carries no
/// timestamp or raw event of its own. Written straight into `buf` (cleared first) rather than
/// built as a `Value`: the merged text is most of what compaction writes. Its fields go in the
/// order producers write them, `type` first, which is the order the fast path reads (see
/// [`crate::read::delta`]), so reading a compacted stream back stays fast.
fn merged_json(merged: &Merged, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    buf.extend_from_slice(b"{\"type\":");
    write_json_str(buf, merged.kind.event_type().as_str());
    buf.extend_from_slice(b",\"");
    buf.extend_from_slice(merged.kind.id_field().as_bytes());
    buf.extend_from_slice(b"\":");
    write_json_str(buf, &merged.id);
    buf.extend_from_slice(b",\"delta\":");
    write_json_str(buf, &merged.delta);
    if let Some(owner) = &merged.owner {
        buf.extend_from_slice(b",\"subagentRunId\":");
        serde_json::to_writer(&mut *buf, owner).map_err(io::Error::other)?;
    }
    if let Some(metadata) = &merged.metadata {
        buf.extend_from_slice(b",\"metadata\":");
        serde_json::to_writer(&mut *buf, metadata).map_err(io::Error::other)?;
    }
    buf.push(b'}');
    Ok(())
}

/// A STATE_SNAPSHOT made by compaction, serialised as the event's `Value` would be (keys in
/// order) without building it.
#[derive(serde::Serialize)]
struct StateSnapshot<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<&'a Value>,
    snapshot: &'a Value,
    #[serde(rename = "type")]
    ty: &'static str,
}

/// A STATE_DELTA made by compaction from the text of its operations (see
/// [`Segment::applied_ops`], written by serde_json, so no second reading of it is needed),
/// serialised as the event's `Value` would be: keys in order, nothing between the tokens.
fn state_delta(ops: &[u8], metadata: Option<&Value>) -> io::Result<Vec<u8>> {
    let mut event = Vec::with_capacity(ops.len() + 64);
    event.extend_from_slice(b"{\"delta\":[");
    event.extend_from_slice(ops);
    event.push(b']');
    if let Some(metadata) = metadata {
        event.extend_from_slice(b",\"metadata\":");
        serde_json::to_writer(&mut event, metadata).map_err(io::Error::other)?;
    }
    event.extend_from_slice(b",\"type\":\"");
    event.extend_from_slice(EventType::StateDelta.as_str().as_bytes());
    event.extend_from_slice(b"\"}");
    Ok(event)
}

/// Adds one operation to the text of a list of them (see [`Segment::applied_ops`]).
fn append_op(ops: &mut Vec<u8>, op: &Value) -> io::Result<()> {
    if !ops.is_empty() {
        ops.push(b',');
    }
    serde_json::to_writer(&mut *ops, op).map_err(io::Error::other)
}

fn serialized(value: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(io::Error::other)
}

fn serialized_len(value: &impl serde::Serialize) -> usize {
    serialized_len_within(value, usize::MAX).unwrap_or(usize::MAX)
}

/// The length of `value` serialised, if it is at most `limit`; counting stops past it.
fn serialized_len_within(value: &impl serde::Serialize, limit: usize) -> Option<usize> {
    /// Counts what is written to it, refusing what would take it past the limit.
    struct Count {
        len: usize,
        limit: usize,
    }
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.len = self.len.saturating_add(buf.len());
            if self.len > self.limit {
                return Err(io::ErrorKind::FileTooLarge.into());
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { len: 0, limit };
    serde_json::to_writer(&mut count, value)
        .ok()
        .map(|()| count.len)
}

/// Merges an event's metadata into what was collected, key by key.
fn merge_into(target: &mut Option<Map<String, Value>>, incoming: Option<&Value>) {
    let Some(incoming) = incoming else {
        return;
    };
    let merged = target.get_or_insert_with(Map::new);
    if let Value::Object(map) = incoming {
        for (k, v) in map {
            merged.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The in-line comparison of ids answers as `==` does.
    #[test]
    fn same_id_is_string_equality() {
        let ids = [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefgh-bcdefgh",
            "abcdefgh-bcdefgh!",
            "d36d5b08-6425-41f3-b062-8e44431ceb38",
            "d36d5b08-6425-41f3-b062-8e44431ceb39",
            "e36d5b08-6425-41f3-b062-8e44431ceb38",
            "d36d5b08-6425-41f3-c062-8e44431ceb38",
            "d36d5b08-6425-41f3-b062-8e44431ceb3",
            "🦀🦀🦀",
            "🦀🦀🦀🦀",
        ];
        for a in ids {
            for b in ids {
                assert_eq!(same_id(a, b), a == b, "{a:?} {b:?}");
            }
            // Each byte changed alone is seen.
            for at in 0..a.len() {
                let mut changed = a.as_bytes().to_vec();
                changed[at] ^= 1;
                if let Ok(changed) = std::str::from_utf8(&changed) {
                    assert!(!same_id(a, changed), "{a:?} at {at}");
                }
            }
        }
    }

    /// A merged event holds exactly the fields its `Value` would, `type` first, and plain
    /// ones (no metadata) are read back on the fast path.
    #[test]
    fn merged_events_are_written_type_first_and_read_back_fast() {
        for kind in [ContentKind::Text, ContentKind::Reasoning, ContentKind::Tool] {
            for (metadata, owner) in [
                (None, None),
                (Some(json!({"b": 1, "a": "x\"y"})), None),
                (None, Some(json!("sub-1"))),
                (Some(json!({"k": [1, 2.5, null]})), Some(json!("sub\n2"))),
            ] {
                let merged = Merged {
                    kind,
                    id: "id \"1\"".into(),
                    delta: "Hello,\n\t\"world\" \\ é 🦀 \u{1}".repeat(5),
                    unfolded: None,
                    metadata: metadata.clone().map(|m| m.as_object().unwrap().clone()),
                    owner: owner.clone(),
                };
                let mut value = json!({
                    "type": kind.event_type().as_str(),
                    kind.id_field(): merged.id,
                    "delta": merged.delta,
                });
                if let Some(owner) = &owner {
                    value["subagentRunId"] = owner.clone();
                }
                if let Some(metadata) = &metadata {
                    value["metadata"] = metadata.clone();
                }
                let mut ours = Vec::new();
                merged_json(&merged, &mut ours).unwrap();
                let read: Value = serde_json::from_slice(&ours).unwrap();
                assert_eq!(read, value);
                assert!(ours.starts_with(b"{\"type\":"));
                let fast = crate::read::delta::parse(&ours);
                assert_eq!(
                    fast.is_some(),
                    metadata.is_none(),
                    "{}",
                    String::from_utf8_lossy(&ours)
                );
            }
        }
    }

    #[test]
    fn whitespace_between_tokens_goes_and_nothing_else_changes() {
        let raw = br#"{ "b" : [1 , 2.50],	"a":"x y \" z\\" }"#;
        assert_eq!(&*minified(raw), br#"{"b":[1,2.50],"a":"x y \" z\\"}"#);
        let tight = br#"{"a":"with spaces inside"}"#;
        assert!(matches!(minified(tight), std::borrow::Cow::Borrowed(_)));
    }

    /// What compacting a run at the `deltas` level writes for the state of its second run.
    fn second_run_state(state: Value, ops: Value) -> Vec<Value> {
        struct Collect(Vec<Value>);
        impl Output for Collect {
            fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
                self.0.push(serde_json::from_slice(bytes).unwrap());
                Ok(())
            }
            fn event(&mut self, value: &Value) -> io::Result<()> {
                self.0.push(value.clone());
                Ok(())
            }
        }
        let events = [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": state}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
            json!({"type": "STATE_DELTA", "delta": ops}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}),
        ];
        let mut compactor = Compactor::new(Level::Deltas, 1 << 20);
        let mut out = Collect(Vec::new());
        let path: std::sync::Arc<str> = std::sync::Arc::from("t");
        for (index, value) in (0u64..).zip(events) {
            let raw = serde_json::to_vec(&value).unwrap();
            let loc = crate::protocol::event::Location {
                path: path.clone(),
                line: index + 1,
                offset: 0,
                index,
            };
            compactor
                .push(&Event::from_value(loc, value), &raw, &mut out)
                .unwrap();
        }
        compactor.finish(&mut out).unwrap();
        let second = out.0.iter().position(|e| e["runId"] == "r2").unwrap();
        out.0[second..]
            .iter()
            .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("STATE_")))
            .cloned()
            .collect()
    }

    /// A run's state goes as the smaller of one STATE_DELTA of the operations that applied
    /// and one STATE_SNAPSHOT of the result (the snapshot when they are the same length).
    #[test]
    fn a_runs_state_goes_as_the_smaller_of_delta_and_snapshot() {
        let big = json!({"n": 1, "notes": "x".repeat(500)});
        let one_op = json!([{"op": "replace", "path": "/n", "value": 2}]);
        assert_eq!(
            second_run_state(big, one_op.clone()),
            [json!({"type": "STATE_DELTA", "delta": one_op})]
        );
        let small = json!({"n": 1});
        let many: Vec<Value> = (0..40)
            .map(|i| json!({"op": "replace", "path": "/n", "value": i}))
            .collect();
        assert_eq!(
            second_run_state(small, Value::Array(many)),
            [json!({"type": "STATE_SNAPSHOT", "snapshot": {"n": 39}})]
        );
        // {"type":"STATE_DELTA","delta":[…]} and {"snapshot":…,"type":"STATE_SNAPSHOT"} of
        // one length: the snapshot.
        let op = json!([{"op": "add", "path": "/k", "value": "v"}]);
        let delta_len = serialized_len(&json!({"type": "STATE_DELTA", "delta": op}));
        let pad = delta_len
            - serialized_len(&json!({"type": "STATE_SNAPSHOT", "snapshot": {"k": "v", "p": ""}}));
        let state = json!({"p": "y".repeat(pad)});
        let mut result = state.clone();
        result["k"] = json!("v");
        assert_eq!(
            serialized_len(&json!({"type": "STATE_SNAPSHOT", "snapshot": result})),
            delta_len
        );
        assert_eq!(
            second_run_state(state, op),
            [json!({"type": "STATE_SNAPSHOT", "snapshot": result})]
        );
    }

    proptest::proptest! {
        /// The quick test for "nothing to take out" agrees with taking it out, on JSON
        /// written compactly, pretty-printed and with stray whitespace around any token.
        #[test]
        fn is_minified_agrees_with_minifying(
            text in "(\\PC|[\"\\\\ \t\n])*",
            numbers in proptest::collection::vec(-1e6f64..1e6, 0..4),
            pretty in proptest::bool::ANY,
            pad in 0usize..40,
        ) {
            let value = json!({"type": "CUSTOM", "name": text, "value": {"n": numbers, "s": [text, "\\\""]}});
            let mut raw = if pretty {
                serde_json::to_vec_pretty(&value).unwrap()
            } else {
                serde_json::to_vec(&value).unwrap()
            };
            if pad > 0 {
                // A space after the pad-th structural comma or colon, if there is one.
                let mut in_string = false;
                let mut escaped = false;
                let mut seen = 0;
                let mut at = None;
                for (i, &b) in raw.iter().enumerate() {
                    if in_string {
                        if escaped { escaped = false } else if b == b'\\' { escaped = true } else if b == b'"' { in_string = false }
                    } else if b == b'"' {
                        in_string = true;
                    } else if b == b',' || b == b':' {
                        seen += 1;
                        if seen == pad { at = Some(i + 1); break; }
                    }
                }
                if let Some(at) = at { raw.insert(at, b' '); }
            }
            let slow_keeps_all = {
                // minified() without its quick test: the state machine alone.
                let outside = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
                let (mut in_string, mut escaped, mut all) = (false, false, true);
                for &b in &raw {
                    if in_string {
                        if escaped { escaped = false } else if b == b'\\' { escaped = true } else if b == b'"' { in_string = false }
                    } else {
                        in_string = b == b'"';
                        if outside(b) { all = false }
                    }
                }
                all
            };
            proptest::prop_assert_eq!(is_minified(&raw), slow_keeps_all);
            let out = minified(&raw);
            let read: Value = serde_json::from_slice(&out).unwrap();
            proptest::prop_assert_eq!(read, value);
        }
    }
}
