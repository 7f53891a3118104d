//! Two streams compared the way `agui-lens diff` compares them: read, normalised at a level
//! (events, compacted events, or what they fold to), compared item by item, and the result
//! rendered as the command prints it (human text, painted by the front end, or JSON).

use std::io;
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::check::catalog::RuleId;
use crate::check::diagnostic::Diagnostic;
use crate::check::engine::{Context, Engine};
use crate::check::rules::protocol::DEFAULT_STATE_LIMIT;
use crate::check::schema::SchemaSet;
use crate::check::stream::{
    ReadStats, for_each_event, for_each_frame, for_each_opened_frame, require_events,
    warn_failed_status, warn_unreadable,
};
use crate::compact::{Compactor, Level as CompactLevel};
use crate::compare::Level;
use crate::compare::comparison::{
    Comparison, DiffLine, compare, plain, render, summary, unified_diff,
};
use crate::compare::normalize::{Normalizer, Settings};
use crate::fold::threads::{ByThread, starting_folder};
use crate::protocol::chunks::{ChunkExpander, Piece};
use crate::protocol::event::{Event, EventType};
use crate::read::{self, Caveat, Frame, FrameKind, InputSpec, Opened, ReadOptions, RequestCarrier};
use crate::write::Output;

/// Two streams compared at a level, with where the first difference is in each file.
pub struct StreamDiff {
    pub level: Level,
    pub comparison: Comparison,
    pub left: Vec<Value>,
    pub right: Vec<Value>,
    /// The lines of the first differing item in each file, when the level has lines.
    pub lines: Option<(Option<u64>, Option<u64>)>,
    /// Volatile fields compared as written (`--keep`), not normalised away.
    pub kept: Vec<String>,
}

/// Reads, normalises and compares the streams at `a` and `b` (`-` for stdin).
pub fn diff_paths(
    a: &Path,
    b: &Path,
    read: &ReadOptions,
    level: Level,
    settings: &Settings,
) -> Result<StreamDiff> {
    warn_unused(level, settings);
    let mut seen = Seen::default();
    let left = normalized_noting(a, read, level, settings, &mut seen)?;
    let right = normalized_noting(b, read, level, settings, &mut seen)?;
    let comparison = compare(&left, &right);
    // Event by event, an item is an event of the file: where it is, in each file.
    let lines = match (&comparison.first, level) {
        (Some(_), Level::Fold) | (None, _) => None,
        (Some(first), level) => Some((
            line_of_item(a, read, level, first.index)?,
            line_of_item(b, read, level, first.index)?,
        )),
    };
    Ok(StreamDiff {
        level,
        comparison,
        left,
        right,
        lines,
        kept: settings.keep.clone(),
    })
}

impl StreamDiff {
    /// `agui-lens diff --format json`: the verdict, counts, first difference and the diff.
    pub fn document(&self, labels: (&str, &str), max_lines: usize) -> Value {
        let comparison = &self.comparison;
        let diff = if comparison.equal {
            String::new()
        } else {
            unified_diff(
                &render(&self.left),
                &render(&self.right),
                labels,
                &plain,
                max_lines,
            )
        };
        json!({
            "equal": comparison.equal,
            "level": self.level.name(),
            "left": {"path": labels.0, "counts": comparison.left_counts},
            "right": {"path": labels.1, "counts": comparison.right_counts},
            "first_difference": comparison.first,
            "first_difference_lines": self.lines.map(|(a, b)| json!([a, b])),
            "raw_only": comparison.raw_only,
            "diff": diff,
        })
    }

    /// What `agui-lens diff` prints for people: how the streams were compared, the summary,
    /// the first difference with its lines, and the unified diff, each line as `paint` makes
    /// it.
    pub fn human(
        &self,
        labels: (&str, &str),
        max_lines: usize,
        paint: &dyn Fn(DiffLine, &str) -> String,
    ) -> String {
        let comparison = &self.comparison;
        let level = match self.level {
            Level::Events if self.kept.iter().any(|k| k == "timestamp") => {
                "compared event by event, ids normalised, timestamps as written (--keep)".to_owned()
            }
            Level::Events => "compared event by event, ids and timestamps normalised".to_owned(),
            Level::Compact => "compared compacted (each message's deltas merged into \
                                   one): counts and item numbers are of the compacted \
                                   streams; --level events compares events as written"
                .to_owned(),
            Level::Fold => "compared by what a client ends with: items are messages, the \
                            state and how each run ended"
                .to_owned(),
        };
        let mut out = format!("{level}\n\n");
        let at = |line: Option<u64>| line.map_or("none".to_owned(), |l| format!("line {l}"));
        for line in summary(comparison, labels).split_inclusive('\n') {
            out.push_str(line);
            // The first difference, then where it stands in each file.
            if let (true, Some((a, b))) = (line.starts_with("first difference"), self.lines) {
                let (a, b) = (at(a), at(b));
                out.push_str(&format!("  {a} of {}, {b} of {}\n", labels.0, labels.1));
            }
        }
        if !comparison.equal {
            out.push('\n');
            out.push_str(&unified_diff(
                &render(&self.left),
                &render(&self.right),
                labels,
                paint,
                max_lines,
            ));
        }
        out
    }
}

/// The stream at `input` compacted, each item with the line of the event whose reading wrote
/// it; `warn`: say on stderr what could not be read (not again when it is read a second time,
/// for lines).
fn compacted(
    input: &InputSpec,
    read: &ReadOptions,
    warn: bool,
    seen: &mut Seen,
) -> Result<Collected> {
    // However long a message, how its text was split does not matter.
    let mut compactor = Compactor::new(CompactLevel::Deltas, DEFAULT_STATE_LIMIT).merging_whole();
    let mut collected = Collected::default();
    let mut opened = read::open(input, read)?;
    opened.keep_halves = true;
    // A capture's request is its stream's first RUN_STARTED's input, as `cat` writes it out
    // (and compaction then starts from the state it sent).
    let mut carrier = RequestCarrier::of(&opened);
    let mut failures = ClientFailures::default();
    let mut skipped = crate::compact::SkippedFields::default();
    let stats = for_each_opened_frame(&mut opened, read.max_line, |event, raw, frame| {
        skipped.note(frame);
        match event {
            Some(event) => {
                seen.run(event);
                collected.reading = event.loc.line;
                for failure in client_stops(frame).into_iter().chain(failures.of(event)) {
                    collected.items.push(failure);
                    collected.lines.push(frame.line);
                }
                let failed = compactor.failed_deltas();
                match carrier.carried(event) {
                    Some(value) => {
                        let raw = serde_json::to_vec(&value)?;
                        let carried = Event::from_value(event.loc.clone(), value);
                        compactor.push(&carried, &raw, &mut collected)?;
                    }
                    None => compactor.push(event, raw, &mut collected)?,
                }
                if compactor.failed_deltas() > failed {
                    // It changed nothing, but a client warned of it (compaction keeps it).
                    collected.items.push(failed_patch(event.kind));
                    collected.lines.push(frame.line);
                }
            }
            // Where the compacted stream stands when it comes: a client stops there, so two
            // streams broken at different places differ. (What compaction holds back, such as
            // a message's merged deltas, comes after it.)
            None => {
                collected.items.push(unreadable_item(raw, frame));
                collected.lines.push(frame.line);
            }
        }
        Ok(())
    })?;
    require_events(&opened, &stats)?;
    seen.note(&opened, &stats)?;
    if warn {
        warn_failed_status(&opened);
        warn_unreadable(&input.display_name(), &stats);
        warn_skipped(&input.display_name(), &skipped);
    }
    compactor.finish(&mut collected)?;
    // Last, with no line: how the stream was answered, when that failed it.
    collected.items.extend(failed_response(&opened));
    Ok(collected)
}

/// Says that protobuf frames of `name` carried fields passed over in reading them: the
/// events compared lack them (a client drops them too, so what it ends with is the same).
fn warn_skipped(name: &str, skipped: &crate::compact::SkippedFields) {
    if let Some(said) = skipped.said(name, "compared") {
        crate::check::stream::warn(said);
    }
}

/// Streams are compared only where what was read can be told apart: a half of a UTF-16 pair
/// beside a character of the range halves are read into cannot, in one stream or across the
/// two compared (one's half would be the same as the other's character).
#[derive(Default)]
struct Seen {
    /// The first stream read that held a half, and the first that held such a character.
    halves: Option<String>,
    range: Option<String>,
    /// Whether the last RUN_STARTED read so far has no RUN_FINISHED or RUN_ERROR after it.
    inside_run: bool,
}

impl Seen {
    /// Follows the runs' lifecycle, event by event, for [`ReadNotes::ends_inside_run`].
    fn run(&mut self, event: &Event) {
        match event.kind {
            Some(EventType::RunStarted) => self.inside_run = true,
            Some(EventType::RunFinished | EventType::RunError) => self.inside_run = false,
            _ => {}
        }
    }

    fn note(&mut self, opened: &Opened, stats: &ReadStats) -> Result<()> {
        if stats.halves {
            self.halves.get_or_insert_with(|| opened.name.to_string());
        }
        if stats.stand_in_range {
            self.range.get_or_insert_with(|| opened.name.to_string());
        }
        match (&self.halves, &self.range) {
            (Some(halves), Some(range)) if halves == range => bail!(
                "{}: not compared, as a character and a half could be taken for each other",
                crate::read::halves::ambiguity(halves)
            ),
            (Some(halves), Some(range)) => bail!(
                "{halves} holds half a UTF-16 pair, read as a character of \
                 U+10F800–U+10FFFF as it is joined the way a client joins halves, and {range} \
                 holds characters of that range written as text: they cannot be told apart, \
                 so the two are not compared"
            ),
            _ => Ok(()),
        }
    }
}

/// How a browser capture's stream was answered, when with a status that is no success, as an
/// item of the stream compared: a client reads none of its events (it fails on the status),
/// so the same events answered 200 are another stream. It comes last, after any frame that
/// could not be read.
fn failed_response(opened: &Opened) -> Option<Value> {
    let capture = opened.capture.as_ref()?;
    let (status, reason) = capture.failed_status()?;
    let mut response = json!({ "status": status });
    if let Some(reason) = reason {
        response["statusText"] = reason.into();
    }
    Some(json!({ "response": response }))
}

/// The chunk events of a stream that the official client fails on (it throws, and the run is
/// lost), each as an item of the stream compared: compaction and folding leave such a chunk
/// out (as a client that goes on would), so without it a stream that breaks every client
/// would compare the same as one without the chunk.
#[derive(Default)]
struct ClientFailures {
    expander: ChunkExpander,
    pieces: Vec<Piece>,
}

impl ClientFailures {
    fn of(&mut self, event: &Event) -> Option<Value> {
        let kind = event.kind?;
        let chunk = matches!(
            kind,
            EventType::TextMessageChunk
                | EventType::ToolCallChunk
                | EventType::ReasoningMessageChunk
        );
        if !chunk && self.expander.is_idle() {
            // No chunk stream open: nothing but a chunk can fail.
            return None;
        }
        let problem = self
            .expander
            .expand(Some(kind), &event.value, &mut self.pieces)
            .err()?;
        Some(json!({ "client_fails": problem.summary() }))
    }
}

/// The rules whose errors are what the official client's `verifyEvents` throws on (besides
/// the schema errors its zod schemas throw on): the run fails there, and what comes after is
/// never applied.
const CLIENT_REJECTS: &[RuleId] = &[
    RuleId::LifecycleFirstEvent,
    RuleId::LifecycleRunAlreadyActive,
    RuleId::LifecycleEventAfterFinish,
    RuleId::LifecycleEventAfterError,
    RuleId::LifecycleOpenAtFinish,
    RuleId::PairingTextMessage,
    RuleId::PairingToolCall,
    RuleId::PairingReasoning,
    RuleId::PairingReasoningMessage,
    RuleId::PairingStep,
    RuleId::PairingSubagent,
    RuleId::PairingAttributionMismatch,
];

/// The levels that leave on only what the official client rejects a stream for: the schema
/// errors its zod schemas throw on and [`CLIENT_REJECTS`].
fn client_levels() -> Result<crate::check::catalog::Levels> {
    use crate::check::catalog::{Level, Levels};
    let mut levels = Levels::default();
    for &id in RuleId::ALL {
        let schema = id.rule().family() == "schema" && levels.level(id) == Level::Deny;
        if !schema && !CLIENT_REJECTS.contains(&id) {
            levels.set(id.name(), Level::Allow)?;
        }
    }
    Ok(levels)
}

/// Of `found` (checked at [`client_levels`]), what would make the official client reject the
/// stream, if it comes before `first` (the earliest such finding so far): content after a
/// message's end, an event after RUN_FINISHED, a schema error. A reopening START that
/// disagrees with the first is `check`'s rule (from the spec), not the client's.
fn earlier_rejection(first: &mut Option<Diagnostic>, found: &mut Vec<Diagnostic>) {
    use crate::check::diagnostic::Severity;
    let rejecting = found
        .drain(..)
        .filter(|d| d.severity == Severity::Error && d.event_index.is_some())
        .filter(|d| !crate::check::rules::pairing::is_disagreeing_reopen(d));
    for d in rejecting {
        if first.as_ref().is_none_or(|f| d.event_index < f.event_index) {
            *first = Some(d);
        }
    }
}

/// The first event of a stream the official client rejects, as an item of the stream
/// compared at the fold level: the client fails the run there, so such a stream is not the
/// clean one, whatever its events fold to (a fold-level snapshot passed it). Said by the
/// event's type and the rule, which two streams broken alike share.
fn rejection_item(first: &Diagnostic) -> Value {
    let event = first.event_type.as_deref().unwrap_or("event");
    json!({ "client_fails": format!(
        "the official client rejects this {event} ({}) and fails the run there",
        first.rule.name()
    ) })
}

/// A frame the official client stops the stream at though it is read here, as an item of a
/// stream compared (as a chunk it fails on is): SSE frames it reads as one (parted by CR LF or
/// CR, not two LFs), and text over its buffer (SSE or protobuf). `check` fails such a stream
/// and `compact` refuses it; compared by its events alone, it meant the same as a clean copy.
fn client_stops(frame: &Frame) -> Option<Value> {
    let FrameKind::Data { caveat, .. } = &frame.kind else {
        return None;
    };
    let why = match caveat {
        Caveat::SseMerged { .. } => {
            "the official client reads this SSE frame and the one before as one (no two LFs part \
             them) and ends the stream"
        }
        caveat if caveat.over_client_limit() => {
            "a frame over the official client's 10 MiB buffer: it ends the stream there"
        }
        // Fields passed over are dropped by every client too: the events are what it reads.
        _ => return None,
    };
    Some(json!({ "client_fails": why }))
}

/// A STATE_DELTA that does not apply to the state (or an ACTIVITY_DELTA to its activity's
/// content), as an item of a stream compared: a client warns of it and ignores it, so what it
/// ends with is the same, but a stream that began to send patches that fail is not the stream
/// it was (a snapshot passed it).
fn failed_patch(kind: Option<EventType>) -> Value {
    let said = match kind {
        Some(EventType::ActivityDelta) => {
            "an ACTIVITY_DELTA does not apply to its activity's content; the client ignores it"
        }
        _ => "a STATE_DELTA does not apply to the state; the client ignores it",
    };
    json!({ "client_warns": said })
}

/// A frame that could not be read as an event, as an item of a stream compared: its text, or
/// what is wrong with it where it holds none (a frame over the cap is not held: its length).
fn unreadable_item(raw: &[u8], frame: &Frame) -> Value {
    match &frame.kind {
        FrameKind::Data { .. } => json!({"unreadable": String::from_utf8_lossy(raw).trim_end()}),
        FrameKind::TooLong { len } => {
            json!({"unreadable": format!("a frame of {len} bytes, over the cap on one frame")})
        }
        FrameKind::Malformed { message } | FrameKind::Proto { message, .. } => {
            json!({"unreadable": message})
        }
    }
}

/// Where item `index` of a stream at a level comes from in its file: the line of that event
/// (`events`), or of the first event of the file with the compacted item's type and ids
/// (`compact`: a merged message's first delta). None for `fold`, stdin, or past the end.
pub fn line_of_item(
    path: &Path,
    read: &ReadOptions,
    level: Level,
    index: usize,
) -> Result<Option<u64>> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let input = InputSpec::named(path);
    match level {
        Level::Events => {
            let mut seen = 0;
            let mut line = None;
            for_each_frame(&input, read, |_, _, frame| {
                if seen == index {
                    line = Some(frame.line);
                }
                seen += 1;
                Ok(())
            })?;
            Ok(line)
        }
        Level::Compact => {
            let collected = compacted(&input, read, false, &mut Seen::default())?;
            let Some(item) = collected.items.get(index) else {
                return Ok(None);
            };
            const IDS: &[&str] = &[
                "messageId",
                "toolCallId",
                "stepName",
                "runId",
                "subagentRunId",
            ];
            let mut line = None;
            let unreadable = item.get("unreadable").is_some();
            for_each_event(&input, read, |event, _| {
                let same = !unreadable
                    && event.field("type") == item.get("type")
                    && IDS.iter().all(|k| event.field(k) == item.get(*k));
                if line.is_none() && same {
                    line = Some(event.loc.line);
                }
                Ok(())
            })?;
            Ok(line.or(collected.lines.get(index).copied()))
        }
        Level::Fold => Ok(None),
    }
}

/// A stream as normalised items at a level: its events, its compacted events, or its folded
/// messages followed by `{"state": …}`.
/// Says (as a warning) which of the settings asked for have no effect at `level`: a fold holds
/// messages, in the order the client placed them, not events to take in any order.
pub fn warn_unused(level: Level, settings: &Settings) {
    if level == Level::Fold && !settings.unordered.is_empty() {
        crate::check::stream::warn(format!(
            "--unordered {} has no effect at the fold level: a fold holds messages, in the \
             order the client placed them, not events (compare at the events or compact level \
             to take them in any order)",
            settings.unordered.join(", ")
        ));
    }
}

pub fn normalized(
    path: &Path,
    read: &ReadOptions,
    level: Level,
    settings: &Settings,
) -> Result<Vec<Value>> {
    normalized_reading(path, read, level, settings).map(|(items, _)| items)
}

/// What a stream's reading held that items made of it cannot tell: half a UTF-16 pair, whose
/// stand-ins the items then hold, and characters of the range those are taken from (see
/// [`crate::read::halves`]; what holds such items beside others, a snapshot file, tells them
/// apart with it); and whether the stream ended inside a run, which no level's items say (a
/// fold's runs do, where they are kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadNotes {
    pub halves: bool,
    pub range: bool,
    /// Its last RUN_STARTED has no RUN_FINISHED or RUN_ERROR after it: half a stream, told
    /// by the reading that makes the items (a FIFO or stdin is read once).
    pub ends_inside_run: bool,
}

/// [`normalized`], with what its reading held (see [`ReadNotes`]).
pub fn normalized_reading(
    path: &Path,
    read: &ReadOptions,
    level: Level,
    settings: &Settings,
) -> Result<(Vec<Value>, ReadNotes)> {
    let mut seen = Seen::default();
    let items = normalized_noting(path, read, level, settings, &mut seen)?;
    let read = ReadNotes {
        halves: seen.halves.is_some(),
        range: seen.range.is_some(),
        ends_inside_run: seen.inside_run,
    };
    Ok((items, read))
}

/// [`normalized`], noting in `seen` what could be taken for another stream's.
fn normalized_noting(
    path: &Path,
    read: &ReadOptions,
    level: Level,
    settings: &Settings,
    seen: &mut Seen,
) -> Result<Vec<Value>> {
    let input = InputSpec::named(path);
    let name = input.display_name();
    match level {
        Level::Events => {
            let mut items = Vec::new();
            let mut opened = read::open(&input, read)?;
            // Halves of UTF-16 pairs are read, and joined as a client joins them.
            opened.keep_halves = true;
            // A capture's request is its stream's first RUN_STARTED's input, as `cat` writes
            // the stream out.
            let mut carrier = RequestCarrier::of(&opened);
            let mut skipped = crate::compact::SkippedFields::default();
            let stats = for_each_opened_frame(&mut opened, read.max_line, |event, raw, frame| {
                skipped.note(frame);
                items.extend(client_stops(frame));
                if let Some(event) = event {
                    seen.run(event);
                }
                items.push(match event {
                    Some(event) => carrier
                        .carried(event)
                        .unwrap_or_else(|| event.whole_value().into_owned()),
                    None => unreadable_item(raw, frame),
                });
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            seen.note(&opened, &stats)?;
            warn_failed_status(&opened);
            warn_unreadable(&name, &stats);
            warn_skipped(&name, &skipped);
            items.extend(failed_response(&opened));
            Ok(Normalizer::events_owned(settings.clone(), items))
        }
        Level::Compact => {
            let collected = compacted(&input, read, true, seen)?;
            Ok(Normalizer::events_owned(settings.clone(), collected.items))
        }
        Level::Fold => {
            // Each thread folds on its own, as a client holds one conversation per thread
            // (and `fold --thread` shows one): folded together, only the last thread's state
            // was compared. Events before the first run belong to the first thread.
            let mut opened = read::open(&input, read)?;
            // Halves of UTF-16 pairs are read, and joined as a client joins them.
            opened.keep_halves = true;
            // A browser capture's stream starts from what its request sent, as `fold` folds
            // it: its state and messages are part of what the client ends with.
            let capture = opened.capture.clone();
            let mut threads =
                ByThread::new(|| starting_folder(capture.as_ref(), None, DEFAULT_STATE_LIMIT));
            let mut unreadable = Vec::new();
            let mut failures = ClientFailures::default();
            // What the official client rejects the stream for, checked as it is read.
            let levels = client_levels()?;
            let ctx = Context::new(SchemaSet::for_process(None)?, &levels);
            let mut engine = Engine::new(&ctx, opened.name.clone(), opened.head.clone());
            let (mut rejected, mut found) = (None, Vec::new());
            let stats = for_each_opened_frame(&mut opened, read.max_line, |event, raw, frame| {
                match event {
                    Some(event) => {
                        seen.run(event);
                        unreadable.extend(client_stops(frame));
                        unreadable.extend(failures.of(event));
                        // (Repeated keys are not looked for: the event is checked as read.)
                        engine.feed_checked(event, None, raw, &mut found);
                        earlier_rejection(&mut rejected, &mut found);
                        let folder = threads.thread_of(Some(event)).1;
                        folder.apply(event);
                        let delta = matches!(
                            event.kind,
                            Some(EventType::StateDelta | EventType::ActivityDelta)
                        );
                        if delta && !folder.last_delta_applied() {
                            unreadable.push(failed_patch(event.kind));
                        }
                    }
                    None => unreadable.push(unreadable_item(raw, frame)),
                }
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            seen.note(&opened, &stats)?;
            warn_failed_status(&opened);
            warn_unreadable(&name, &stats);
            engine.finish(&mut found);
            earlier_rejection(&mut rejected, &mut found);
            unreadable.extend(rejected.as_ref().map(rejection_item));
            let response = failed_response(&opened);
            let meanings: Vec<Value> = threads
                .finish()
                .into_iter()
                .map(|(_, finished)| {
                    let mut meaning = finished.meaning();
                    if settings.fold_runs {
                        meaning["runs"] = Value::Array(runs_compared(&finished));
                    }
                    meaning
                })
                .collect();
            let mut items: Vec<Value> = Vec::new();
            for folded in Normalizer::fold_threads_in_any_order(settings.clone(), meanings) {
                items.extend(folded["messages"].as_array().cloned().unwrap_or_default());
                items.push(json!({"state": folded["state"]}));
                if settings.fold_runs {
                    items.push(json!({"runs": folded["runs"]}));
                }
            }
            // A client that meets a frame it cannot read, or a chunk it cannot expand, fails:
            // that is part of the meaning.
            items.extend(unreadable);
            items.extend(response);
            Ok(items)
        }
    }
}

/// How each run of a thread ended; not its token usage, which varies from run to run, nor its
/// ids: runs compare in order, and ids are minted anew.
fn runs_compared(folded: &crate::fold::Folded) -> Vec<Value> {
    folded
        .runs_json()
        .into_iter()
        .map(|mut run| {
            if let Some(run) = run.as_object_mut() {
                for key in ["usage", "threadId", "runId", "parentRunId"] {
                    run.remove(key);
                }
                crate::compare::normalize::drop_plain_run_outcome(run);
            }
            run
        })
        .collect()
}

/// Compacted events, collected as values.
#[derive(Default)]
struct Collected {
    items: Vec<Value>,
    /// For each item, the line of the event whose reading wrote it (when nothing in the
    /// file has the item's type and ids).
    lines: Vec<u64>,
    /// The line of the event being read.
    reading: u64,
}

impl Output for Collected {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        let value = crate::check::parse::value_keeping_halves(bytes).map_err(io::Error::other)?;
        self.event(&value)
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        self.items.push(value.clone());
        self.lines.push(self.reading);
        Ok(())
    }
}
