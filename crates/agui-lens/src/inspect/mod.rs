//! Inspect: what happened in a stream, run by run and item by item (messages, tool calls,
//! steps, reasoning, subagents, state changes, activities), with `check`'s diagnostics attached
//! where they occur. Built in one pass; holds what it shows, never the raw events.

pub mod html;
pub mod human;
pub mod stats;

use std::collections::{BTreeMap, HashMap};

use serde::{Serialize, Serializer};
use serde_json::Value;

use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::compare::difference::all_differences;
use agui_lens_core::fold::{Folded, Folder};
use agui_lens_core::protocol::chunks::{ChunkExpander, Piece};
use agui_lens_core::protocol::event::{Event, EventType};
use agui_lens_core::protocol::ids::FastBuild;
use agui_lens_core::protocol::patch;
use agui_lens_core::read::halves;
use agui_lens_core::report::DiagnosticRecord;

/// Most changed paths kept for one state change; the rest are counted.
const MAX_CHANGES: usize = 1000;

/// Most changed paths kept for the state changes of one run: past them each change is only
/// counted (its `more`). A list every patch shifts whole (an insert at the front of a list
/// without ids changes every element after it) would otherwise keep a thousand paths per
/// event: 8,000 such patches, 0.7 MB, took 1 GB and printed as much.
const MAX_RUN_CHANGES: usize = 20_000;

/// A long stream is shown in detail for its first and last runs, and for the first runs with
/// findings in between; the others are summarised (their items counted, their findings kept)
/// so that what `inspect` holds and prints stays bounded however long the stream. `--full`
/// keeps every run in detail.
pub const DETAIL_FIRST: usize = 8;
pub const DETAIL_LAST: usize = 8;
pub const DETAIL_FLAGGED: usize = 32;

/// Everything `inspect` shows about one input.
#[derive(Debug, Serialize)]
pub struct Inspection {
    pub path: String,
    /// Why the input could not be read to its end (a truncated gzip), when it could not: what
    /// is shown is what was read before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub frames: u64,
    pub events: u64,
    pub errors: u64,
    pub warnings: u64,
    /// Whether every event carried a timestamp.
    pub timestamped: bool,
    pub runs: Vec<RunView>,
    /// Findings that belong to no event of any run (e.g. the input holds no events).
    pub diagnostics: Vec<DiagnosticView>,
    /// How many runs are summarised rather than shown item by item (see [`DETAIL_FIRST`]).
    pub runs_summarised: u64,
    /// The delta streams (messages, reasoning, tool calls) of the summarised runs, for the
    /// statistics, which count every stream.
    #[serde(skip)]
    pub summarised_streams: Vec<crate::inspect::stats::StreamStats>,
    /// What a client ends with, per thread (for the HTML report's conversation).
    #[serde(skip)]
    pub threads: Vec<(Option<String>, Folded)>,
    /// The first run's RUN_STARTED carried no `input.messages`: what the client held before
    /// the stream is not known.
    #[serde(skip)]
    pub history_unknown: bool,
    /// Events were read with stand-ins for halves of UTF-16 pairs: what shows text writes
    /// those nothing joined as the escapes they were read from (see
    /// [`agui_lens_core::read::halves`]).
    #[serde(skip)]
    pub halves: bool,
}

/// A diagnostic as shown: the check's finding, and the timestamp of its event if known.
#[derive(Clone, Debug)]
pub struct DiagnosticView {
    pub diagnostic: Diagnostic,
    pub timestamp: Option<i64>,
}

impl Serialize for DiagnosticView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        DiagnosticRecord::from(&self.diagnostic).serialize(serializer)
    }
}

/// One run: RUN_STARTED to RUN_FINISHED or RUN_ERROR. Events outside any run form a run of
/// status `none`.
#[derive(Debug, Serialize)]
pub struct RunView {
    pub thread_id: Option<String>,
    pub run_id: Option<String>,
    pub parent_run_id: Option<String>,
    /// `finished`, `error`, `open` (the stream ended inside it) or `none` (not a run).
    pub status: &'static str,
    pub outcome: Option<Value>,
    pub error: Option<Value>,
    pub usage: Option<Value>,
    pub first_event: u64,
    pub last_event: u64,
    pub events: u64,
    pub bytes: u64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// From RUN_STARTED to the run's last event, when both carry timestamps.
    pub duration_ms: Option<i64>,
    /// From RUN_STARTED to the event after it.
    pub first_event_after_ms: Option<i64>,
    /// Tools the run's input declares.
    pub tools: Vec<String>,
    pub items: Vec<Item>,
    /// The run is summarised: how many items it had (they are not kept; their findings are
    /// in `diagnostics`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items_left_out: Option<u64>,
    /// CUSTOM events by name.
    pub custom: BTreeMap<String, u64>,
    pub raw: u64,
    /// Findings on the run's own events, or on events no item holds, in stream order.
    pub diagnostics: Vec<DiagnosticView>,
}

/// One thing that happened in a run.
#[derive(Debug, Serialize)]
pub struct Item {
    pub first_event: u64,
    pub last_event: u64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// The subagent invocation that produced it, if not the agent itself.
    pub subagent: Option<String>,
    #[serde(flatten)]
    pub kind: ItemKind,
    pub diagnostics: Vec<DiagnosticView>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ItemKind {
    Message(MessageView),
    ToolCall(ToolCallView),
    Step(StepView),
    Reasoning(ReasoningView),
    Subagent(SubagentView),
    StateChange(StateChangeView),
    Activity(ActivityView),
    MessagesSnapshot(SnapshotView),
    Encrypted(EncryptedView),
}

impl ItemKind {
    /// Whether the item gets its own lane on the HTML timeline.
    pub fn has_lane(&self) -> bool {
        matches!(
            self,
            ItemKind::Message(_)
                | ItemKind::ToolCall(_)
                | ItemKind::Step(_)
                | ItemKind::Reasoning(_)
                | ItemKind::Subagent(_)
        )
    }
}

#[derive(Debug, Serialize)]
pub struct MessageView {
    pub id: Option<String>,
    pub role: String,
    pub name: Option<String>,
    pub text: String,
    pub deltas: u64,
    pub ended: bool,
    /// Taken from RUN_STARTED.input rather than streamed.
    pub from_input: bool,
    pub encrypted: bool,
}

#[derive(Debug, Serialize)]
pub struct ToolCallView {
    pub id: Option<String>,
    pub name: Option<String>,
    pub parent_message_id: Option<String>,
    /// The concatenated TOOL_CALL_ARGS, as sent.
    pub arguments: String,
    pub deltas: u64,
    pub ended: bool,
    pub result: Option<ToolResultView>,
    pub encrypted: bool,
}

#[derive(Debug, Serialize)]
pub struct ToolResultView {
    pub message_id: Option<String>,
    pub content: Value,
    pub event: u64,
}

#[derive(Debug, Serialize)]
pub struct StepView {
    pub name: String,
    pub finished: bool,
}

#[derive(Debug, Serialize)]
pub struct ReasoningView {
    pub id: Option<String>,
    /// The reasoning summary, as streamed in REASONING_MESSAGE_CONTENT.
    pub text: String,
    pub deltas: u64,
    /// Opened by REASONING_START (a span), not only by reasoning messages.
    pub span: bool,
    pub ended: bool,
    /// A REASONING_ENCRYPTED_VALUE names it; the value itself is never shown.
    pub encrypted: bool,
}

#[derive(Debug, Serialize)]
pub struct SubagentView {
    pub id: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
    pub parent: Option<String>,
    /// `running`, `finished` or `error`.
    pub status: &'static str,
    pub outcome: Option<Value>,
    pub result: Option<Value>,
    pub error: Option<Value>,
}

#[derive(Debug, Serialize)]
pub struct StateChangeView {
    /// `input` (RUN_STARTED.input.state), `snapshot` or `delta`.
    pub source: &'static str,
    /// Operations in a STATE_DELTA.
    pub operations: Option<usize>,
    /// False when a STATE_DELTA did not apply (the state is unchanged).
    pub applied: bool,
    pub changes: Vec<Change>,
    /// Changed paths beyond those listed.
    pub more: usize,
}

#[derive(Debug, Serialize)]
pub struct Change {
    pub path: String,
    /// Left out when the path did not exist before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// Left out when the path was removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

#[derive(Debug, Serialize)]
pub struct ActivityView {
    pub id: Option<String>,
    pub activity_type: Option<String>,
    /// The content after the last update, as fold leaves it.
    pub content: Value,
    pub updates: u64,
}

#[derive(Debug, Serialize)]
pub struct SnapshotView {
    pub messages: usize,
}

/// An encrypted value whose entity is not shown anywhere else.
#[derive(Debug, Serialize)]
pub struct EncryptedView {
    pub subtype: Option<String>,
    pub entity_id: Option<String>,
}

/// The state after an event, as the HTML report embeds it: whole, or as the changes since the
/// previous frame of its thread.
#[derive(Debug)]
pub struct StateFrame {
    pub event: u64,
    pub thread: usize,
    pub kind: FrameKind,
}

#[derive(Debug)]
pub enum FrameKind {
    Whole(Value),
    /// Pointer and new value; `None` removes.
    Changes(Vec<(String, Option<Value>)>),
}

/// Where an event's findings go.
#[derive(Clone, Copy, Debug)]
enum Target {
    Run(usize),
    Item(usize, usize),
}

type ItemRef = (usize, usize);

/// Builds an [`Inspection`] from events in stream order, then findings batch by batch.
pub struct Inspector {
    path: String,
    /// An event was read with a stand-in for half a UTF-16 pair.
    halves: bool,
    expander: ChunkExpander,
    pieces: Vec<Piece>,
    runs: Vec<RunView>,
    current: Option<usize>,
    /// The run whose RUN_FINISHED was the last event: a RUN_ERROR next fails it late (1.1).
    finished_last: Option<usize>,
    messages: HashMap<String, ItemRef, FastBuild>,
    tool_calls: HashMap<String, ItemRef, FastBuild>,
    reasoning: HashMap<String, ItemRef, FastBuild>,
    steps: HashMap<(Option<String>, String), ItemRef, FastBuild>,
    subagents: HashMap<String, ItemRef, FastBuild>,
    activities: HashMap<String, ItemRef, FastBuild>,
    thinking: Option<ItemRef>,
    threads: Vec<(Option<String>, Folder)>,
    thread: Option<usize>,
    /// What is known about the arrays of each thread's state (by the thread's index).
    known_ids: Vec<KnownIds>,
    /// How many changed paths each run's state changes keep so far (by the run's index).
    changes_kept: Vec<usize>,
    /// Activities updated since their view's content was last copied from fold, with the
    /// thread whose fold holds them: copied once they are about to change otherwise (a
    /// snapshot of the messages) and at the end, not at every update (quadratic in a long
    /// activity).
    activities_behind: HashMap<String, usize, FastBuild>,
    state_limit: usize,
    /// The state a client held before the stream (`--initial-state`), if given.
    initial_state: Option<Value>,
    /// The messages it held, when the request is known.
    initial_messages: Vec<Value>,
    /// The events of the batch being checked: where their findings go.
    touched: HashMap<u64, (Option<Target>, Option<i64>), FastBuild>,
    file_diagnostics: Vec<DiagnosticView>,
    frames: u64,
    events: u64,
    errors: u64,
    warnings: u64,
    timestamped: bool,
    /// Whether a RUN_STARTED was seen, and whether the first said what the client held.
    first_run: Option<bool>,
    /// Kept only for the HTML report.
    state_frames: Option<StateFrames>,
    /// Keep every run in detail (`--full`).
    keep_all: bool,
    /// The next run to consider summarising, and how many flagged runs kept their detail.
    next_summary: usize,
    flagged_in_detail: usize,
    runs_summarised: u64,
    summarised_streams: Vec<crate::inspect::stats::StreamStats>,
}

/// The state history the HTML report embeds, with a cap on its size.
#[derive(Debug, Default)]
pub struct StateFrames {
    pub frames: Vec<StateFrame>,
    /// Estimated bytes embedded so far.
    pub bytes: usize,
    /// The event after which no more states were kept, if the cap was reached.
    pub capped_at: Option<u64>,
    /// Per thread: frames and bytes of changes since its last whole state.
    since_whole: HashMap<usize, (usize, usize), FastBuild>,
}

/// Most bytes of state history embedded in a page.
const MAX_STATE_BYTES: usize = 48 * 1024 * 1024;

impl Inspector {
    /// Starts every thread from this state (`--initial-state`), when given.
    pub fn with_state(mut self, state: Option<Value>) -> Self {
        self.initial_state = state;
        self
    }

    /// Starts every thread from the messages the client sent (a browser capture's request):
    /// what it held before the stream is then known.
    pub fn with_history(mut self, messages: Vec<Value>) -> Self {
        self.initial_messages = messages;
        self.first_run = Some(true);
        self
    }

    pub fn new(path: &str, state_limit: usize, keep_states: bool) -> Self {
        Inspector {
            path: path.to_owned(),
            halves: false,
            expander: ChunkExpander::new(),
            pieces: Vec::new(),
            runs: Vec::new(),
            current: None,
            finished_last: None,
            messages: HashMap::default(),
            tool_calls: HashMap::default(),
            reasoning: HashMap::default(),
            steps: HashMap::default(),
            subagents: HashMap::default(),
            activities: HashMap::default(),
            thinking: None,
            threads: Vec::new(),
            thread: None,
            known_ids: Vec::new(),
            changes_kept: Vec::new(),
            activities_behind: HashMap::default(),
            state_limit,
            initial_state: None,
            initial_messages: Vec::new(),
            touched: HashMap::default(),
            file_diagnostics: Vec::new(),
            frames: 0,
            events: 0,
            errors: 0,
            warnings: 0,
            timestamped: true,
            first_run: None,
            state_frames: keep_states.then(StateFrames::default),
            keep_all: false,
            next_summary: 0,
            flagged_in_detail: 0,
            runs_summarised: 0,
            summarised_streams: Vec::new(),
        }
    }

    /// Keeps every run in detail, however many (`--full`).
    pub fn keeping_all(mut self, keep_all: bool) -> Self {
        self.keep_all = keep_all;
        self
    }

    /// Summarises the runs that have left the window of runs kept in detail (see
    /// [`DETAIL_FIRST`]). Called between batches, when no item is referred to from `touched`.
    fn summarise(&mut self) {
        if self.keep_all {
            return;
        }
        let end = self.runs.len().saturating_sub(DETAIL_LAST);
        while self.next_summary < end {
            let r = self.next_summary;
            self.next_summary += 1;
            if r < DETAIL_FIRST || Some(r) == self.current {
                continue;
            }
            let run = &self.runs[r];
            let flagged =
                !run.diagnostics.is_empty() || run.items.iter().any(|i| !i.diagnostics.is_empty());
            if flagged && self.flagged_in_detail < DETAIL_FLAGGED {
                self.flagged_in_detail += 1;
                continue;
            }
            self.summarise_run(r);
        }
    }

    /// Drops a run's items, keeping their count, their streams' statistics and their findings.
    fn summarise_run(&mut self, r: usize) {
        let run = &mut self.runs[r];
        let items = std::mem::take(&mut run.items);
        run.items_left_out = Some(items.len() as u64);
        let mut moved = false;
        for item in items {
            self.summarised_streams
                .extend(crate::inspect::stats::stream_of(&item));
            if !item.diagnostics.is_empty() {
                run.diagnostics.extend(item.diagnostics);
                moved = true;
            }
        }
        if moved {
            run.diagnostics
                .sort_by_key(|v| v.diagnostic.event_index.unwrap_or(u64::MAX));
        }
        self.runs_summarised += 1;
        // Later events that name one of its items start a new one where they are.
        let elsewhere = |at: &ItemRef| at.0 != r;
        self.messages.retain(|_, at| elsewhere(at));
        self.tool_calls.retain(|_, at| elsewhere(at));
        self.reasoning.retain(|_, at| elsewhere(at));
        self.steps.retain(|_, at| elsewhere(at));
        self.subagents.retain(|_, at| elsewhere(at));
        self.activities.retain(|_, at| elsewhere(at));
        if self.thinking.is_some_and(|at| at.0 == r) {
            self.thinking = None;
        }
    }

    /// Takes one event, in stream order, with its bytes as read.
    pub fn event(&mut self, event: &Event, raw: &[u8]) {
        self.halves |= event.halves;
        let index = event.loc.index;
        let ts = event.timestamp_millis();
        if event.kind == Some(EventType::RunStarted) {
            self.start_run(event, ts);
        }
        // A RUN_ERROR right after a run's RUN_FINISHED is that run's late failure.
        match self.finished_last.take() {
            Some(run) if event.kind == Some(EventType::RunError) && self.current.is_none() => {
                self.current = Some(run);
            }
            _ => {}
        }
        let run = self.count(index, ts, raw.len());
        let state_item = self.fold(event, run, ts);
        let mut target = state_item.map(|at| Target::Item(run, at));
        let Some(ty) = event.kind else {
            self.touched.insert(index, (None, ts));
            return;
        };
        let mut pieces = std::mem::take(&mut self.pieces);
        // A chunk that cannot be expanded is shown as its findings say.
        let _ = self.expander.expand(Some(ty), &event.value, &mut pieces);
        for piece in &pieces {
            let (ty, value, synthetic) = match piece {
                Piece::Original => (ty, &event.value, false),
                Piece::Synthetic(value) => {
                    let ty = EventType::of(value).unwrap_or(ty);
                    (ty, value, true)
                }
            };
            if let Some(t) = self.apply(ty, value, run, index, ts, synthetic) {
                if !synthetic || target.is_none() {
                    target = Some(t);
                }
            }
        }
        self.pieces = pieces;
        self.touched.insert(index, (target, ts));
    }

    /// Takes a plain content delta (TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT or
    /// TOOL_CALL_ARGS) read without building its event, exactly as [`Inspector::event`] would
    /// take the event. `false` when it cannot be taken that way (a chunk stream is open, which
    /// the event would close): then nothing was counted, and the event goes to `event`.
    pub fn delta(&mut self, delta: PlainDelta<'_>, raw: &[u8]) -> bool {
        use EventType::*;
        if !matches!(
            delta.kind,
            TextMessageContent | ReasoningMessageContent | ToolCallArgs
        ) || !self.expander.is_idle()
        {
            return false;
        }
        let thread = self.current_thread();
        if !self.threads[thread]
            .1
            .apply_delta(delta.kind, delta.id, delta.delta)
        {
            return false;
        }
        let (index, ts) = (delta.index, delta.timestamp);
        self.finished_last = None;
        let run = self.count(index, ts, raw.len());
        let owner = delta.owner.map(str::to_owned);
        let at = match delta.kind {
            TextMessageContent => {
                let at = self.message_for(Some(delta.id), run, index, ts, &owner);
                if let ItemKind::Message(m) = &mut self.item(at).kind {
                    m.text.push_str(delta.delta);
                    m.deltas += 1;
                }
                at
            }
            ReasoningMessageContent => {
                let at = self.reasoning_for(Some(delta.id), run, index, ts, &owner);
                if let ItemKind::Reasoning(r) = &mut self.item(at).kind {
                    r.text.push_str(delta.delta);
                    r.deltas += 1;
                }
                at
            }
            _ => {
                let at = self.tool_call_for(Some(delta.id), run, index, ts, &owner);
                if let ItemKind::ToolCall(c) = &mut self.item(at).kind {
                    c.arguments.push_str(delta.delta);
                    c.deltas += 1;
                }
                at
            }
        };
        let target = self.touch(at, index, ts);
        self.touched.insert(index, (Some(target), ts));
        true
    }

    /// Counts an event in its run (started first if it is a RUN_STARTED); returns the run.
    fn count(&mut self, index: u64, ts: Option<i64>, bytes: usize) -> usize {
        self.events += 1;
        if ts.is_none() {
            self.timestamped = false;
        }
        let run = self.current_run(index, ts);
        let r = &mut self.runs[run];
        r.last_event = index;
        r.events += 1;
        r.bytes += bytes as u64;
        if ts.is_some() {
            r.ended_at = ts;
        }
        if r.first_event_after_ms.is_none() && r.events == 2 {
            r.first_event_after_ms = match (r.started_at, ts) {
                (Some(a), Some(b)) if r.status != "none" => Some(b - a),
                _ => None,
            };
        }
        run
    }

    /// Takes the findings of the events given since the last call (and any held back).
    pub fn diagnostics(&mut self, found: &[Diagnostic]) {
        for d in found {
            match d.severity {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                Severity::Note => {}
            }
            let at = d.event_index.and_then(|i| self.touched.get(&i).copied());
            let view = DiagnosticView {
                diagnostic: d.clone(),
                timestamp: at.and_then(|(_, ts)| ts),
            };
            match (at.and_then(|(t, _)| t), d.event_index) {
                (Some(Target::Item(run, item)), _) => {
                    self.runs[run].items[item].diagnostics.push(view)
                }
                (Some(Target::Run(run)), _) => self.runs[run].diagnostics.push(view),
                (None, Some(index)) if !self.runs.is_empty() => {
                    let run = self
                        .runs
                        .partition_point(|r| r.first_event <= index)
                        .saturating_sub(1);
                    let list = &mut self.runs[run].diagnostics;
                    let key = |v: &DiagnosticView| v.diagnostic.event_index.unwrap_or(u64::MAX);
                    let at = list.partition_point(|v| key(v) <= index);
                    list.insert(at, view);
                }
                (None, _) => self.file_diagnostics.push(view),
            }
        }
        self.touched.clear();
        self.summarise();
    }

    /// Sets how many frames the input held, readable or not.
    pub fn set_frames(&mut self, frames: u64) {
        self.frames = frames;
    }

    /// The state history, when kept.
    pub fn take_state_frames(&mut self) -> Option<StateFrames> {
        self.state_frames.take()
    }

    pub fn finish(mut self) -> Inspection {
        self.catch_up_all(None);
        let mut runs = self.runs;
        for run in &mut runs {
            run.duration_ms = match (run.started_at, run.ended_at) {
                (Some(a), Some(b)) if run.status != "none" => Some(b - a),
                _ => None,
            };
        }
        Inspection {
            failure: None,
            path: self.path,
            frames: self.frames.max(self.events),
            events: self.events,
            errors: self.errors,
            warnings: self.warnings,
            timestamped: self.timestamped && self.events > 0,
            runs,
            diagnostics: self.file_diagnostics,
            runs_summarised: self.runs_summarised,
            summarised_streams: self.summarised_streams,
            threads: self
                .threads
                .into_iter()
                .map(|(thread, folder)| (thread, folder.finish()))
                .collect(),
            history_unknown: self.first_run == Some(false),
            halves: self.halves,
        }
    }

    fn start_run(&mut self, event: &Event, ts: Option<i64>) {
        let sent = event
            .field("input")
            .and_then(|i| i.get("messages"))
            .is_some();
        self.first_run.get_or_insert(sent);
        let s = |k: &str| event.str_field(k).map(str::to_owned);
        let tools = event
            .field("input")
            .and_then(|i| i.get("tools"))
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        self.runs.push(RunView {
            thread_id: s("threadId"),
            run_id: s("runId"),
            parent_run_id: s("parentRunId"),
            status: "open",
            outcome: None,
            error: None,
            usage: None,
            first_event: event.loc.index,
            last_event: event.loc.index,
            events: 0,
            bytes: 0,
            started_at: ts,
            ended_at: ts,
            duration_ms: None,
            first_event_after_ms: None,
            tools,
            items: Vec::new(),
            items_left_out: None,
            custom: BTreeMap::new(),
            raw: 0,
            diagnostics: Vec::new(),
        });
        self.current = Some(self.runs.len() - 1);
    }

    /// The run an event belongs to: the last one started, else a run of status `none`.
    fn current_run(&mut self, index: u64, ts: Option<i64>) -> usize {
        if let Some(run) = self.current {
            return run;
        }
        self.runs.push(RunView {
            thread_id: None,
            run_id: None,
            parent_run_id: None,
            status: "none",
            outcome: None,
            error: None,
            usage: None,
            first_event: index,
            last_event: index,
            events: 0,
            bytes: 0,
            started_at: ts,
            ended_at: ts,
            duration_ms: None,
            first_event_after_ms: None,
            tools: Vec::new(),
            items: Vec::new(),
            items_left_out: None,
            custom: BTreeMap::new(),
            raw: 0,
            diagnostics: Vec::new(),
        });
        self.current = Some(self.runs.len() - 1);
        self.runs.len() - 1
    }

    /// Applies the event to its thread's fold; records a state change as an item. Returns the
    /// item's index in the run, if one was made.
    fn fold(&mut self, event: &Event, run: usize, ts: Option<i64>) -> Option<usize> {
        let switched = self.pick_thread(event);
        let thread = self.thread.unwrap_or(0);
        if event.kind == Some(EventType::MessagesSnapshot) && !self.activities_behind.is_empty() {
            // It may change activities' content: their views take it as their updates left it.
            self.catch_up_all(Some(thread));
        }
        let index = event.loc.index;
        let capped = self
            .state_frames
            .as_ref()
            .is_none_or(|f| f.capped_at.is_some());
        if switched && !capped {
            let state = self.threads[thread].1.state().cloned();
            let state = state.unwrap_or(Value::Null);
            let size = patch::estimated_size(&state, usize::MAX);
            self.keep_frame(index, thread, FrameKind::Whole(state), size);
        }
        let folder = &mut self.threads[thread].1;
        if self.known_ids.len() <= thread {
            self.known_ids.resize_with(thread + 1, KnownIds::default);
        }
        if self.changes_kept.len() <= run {
            self.changes_kept.resize(run + 1, 0);
        }
        let known = &mut self.known_ids[thread];
        let kept = &mut self.changes_kept[run];
        let room = MAX_CHANGES.min(MAX_RUN_CHANGES.saturating_sub(*kept));
        let change = match event.kind {
            Some(EventType::RunStarted) => {
                let before = folder.state().is_some();
                folder.apply(event);
                match folder.state() {
                    Some(state) if !before => Some(StateChangeView {
                        source: "input",
                        operations: None,
                        applied: true,
                        ..changes_between(None, Some(state), "", room)
                    }),
                    _ => None,
                }
            }
            Some(EventType::StateSnapshot) => {
                known.arrays.clear();
                let old = folder.state().cloned();
                folder.apply(event);
                Some(StateChangeView {
                    source: "snapshot",
                    operations: None,
                    applied: true,
                    ..changes_between(old.as_ref(), folder.state(), "", room)
                })
            }
            Some(EventType::StateDelta) => {
                let mut watched = Watched::default();
                let operations = match (&event.patch, event.field("delta")) {
                    (Some(raw), _) => {
                        let mut count = 0;
                        raw.each(|_, op| {
                            watched.add(&op);
                            count += 1;
                            true
                        });
                        Some(count)
                    }
                    (None, Some(Value::Array(ops))) => {
                        ops.iter().for_each(|op| watched.add(op));
                        Some(ops.len())
                    }
                    (None, _) => None,
                };
                let places = watched.outermost(folder.state(), Some(known));
                let before = before_patch(&places.watches, folder.state());
                folder.apply(event);
                let applied = folder.last_delta_applied();
                let mut view = StateChangeView {
                    source: "delta",
                    operations,
                    applied,
                    changes: Vec::new(),
                    more: 0,
                };
                if applied {
                    known.update(&places, folder.state(), KNOWN_FROM);
                    changes_at(&places.watches, &before, folder.state(), room, &mut view);
                }
                Some(view)
            }
            _ => {
                folder.apply(event);
                None
            }
        }?;
        *kept += change.changes.len();
        if change.applied && (change.source != "input" || !change.changes.is_empty()) {
            self.keep_state_frame(index, thread, &change);
        }
        let at = self.push_item(run, index, ts, None, ItemKind::StateChange(change));
        Some(at)
    }

    /// Follows RUN_STARTED's thread, as fold does. Says whether the thread changed.
    fn pick_thread(&mut self, event: &Event) -> bool {
        let before = self.thread;
        if event.kind == Some(EventType::RunStarted) {
            let thread = event.str_field("threadId").map(str::to_owned);
            self.thread = match self.threads.iter().position(|(t, _)| *t == thread) {
                Some(i) => Some(i),
                // Events seen before the first run join the first thread.
                None if self.threads.len() == 1 && self.threads[0].0.is_none() => {
                    self.threads[0].0 = thread;
                    Some(0)
                }
                None => {
                    let folder = Folder::new(self.state_limit)
                        .with_state(self.initial_state.clone())
                        .with_messages(&self.initial_messages);
                    self.threads.push((thread, folder));
                    Some(self.threads.len() - 1)
                }
            };
        }
        let thread = self.current_thread();
        before.is_some() && before != Some(thread)
    }

    /// The thread events go to now; events before any run start one of their own.
    fn current_thread(&mut self) -> usize {
        if let Some(thread) = self.thread {
            return thread;
        }
        let folder = Folder::new(self.state_limit)
            .with_state(self.initial_state.clone())
            .with_messages(&self.initial_messages);
        self.threads.push((None, folder));
        self.thread = Some(self.threads.len() - 1);
        self.threads.len() - 1
    }

    fn keep_state_frame(&mut self, index: u64, thread: usize, change: &StateChangeView) {
        let Some(frames) = &self.state_frames else {
            return;
        };
        if frames.capped_at.is_some() {
            // Nothing more is kept (see `keep_frame`): copying the state, which the count
            // since the last whole one, no longer reset, asked for at every change, only to
            // drop it there, made a long history's growing state quadratic.
            return;
        }
        let state = self.threads[thread].1.state();
        let state_size = self.threads[thread].1.state_size();
        let changes: Vec<(String, Option<Value>)> = change
            .changes
            .iter()
            .map(|c| (c.path.clone(), c.new.clone()))
            .collect();
        let changes_size: usize = changes
            .iter()
            .map(|(p, v)| {
                p.len()
                    + v.as_ref()
                        .map_or(0, |v| patch::estimated_size(v, usize::MAX))
            })
            .sum();
        // A whole state now and then, so the page never replays more than about one state's
        // worth of changes to show any event.
        let whole = match frames.since_whole.get(&thread) {
            None => true,
            Some(&(count, bytes)) => {
                change.more > 0
                    || change.source != "delta"
                    || count >= 64
                    || bytes + changes_size > state_size.max(16 * 1024)
            }
        };
        let (kind, size) = match state {
            Some(state) if whole => (FrameKind::Whole(state.clone()), state_size),
            None if whole => (
                FrameKind::Whole(Value::Null),
                patch::estimated_size(&Value::Null, usize::MAX),
            ),
            _ => (FrameKind::Changes(changes), changes_size),
        };
        self.keep_frame(index, thread, kind, size);
    }

    /// Keeps a frame of `size` estimated bytes (a whole state's, or its changes' paths and
    /// values), unless the frames kept have reached their cap.
    fn keep_frame(&mut self, index: u64, thread: usize, kind: FrameKind, size: usize) {
        let Some(frames) = &mut self.state_frames else {
            return;
        };
        if frames.capped_at.is_some() {
            return;
        }
        if frames.bytes + size > MAX_STATE_BYTES {
            frames.capped_at = Some(index);
            return;
        }
        frames.bytes += size;
        let since = frames.since_whole.entry(thread).or_default();
        match kind {
            FrameKind::Whole(_) => *since = (0, 0),
            FrameKind::Changes(_) => *since = (since.0 + 1, since.1 + size),
        }
        frames.frames.push(StateFrame {
            event: index,
            thread,
            kind,
        });
    }

    fn push_item(
        &mut self,
        run: usize,
        index: u64,
        ts: Option<i64>,
        subagent: Option<String>,
        kind: ItemKind,
    ) -> usize {
        let items = &mut self.runs[run].items;
        items.push(Item {
            first_event: index,
            last_event: index,
            started_at: ts,
            ended_at: ts,
            subagent,
            kind,
            diagnostics: Vec::new(),
        });
        items.len() - 1
    }

    fn item(&mut self, at: ItemRef) -> &mut Item {
        &mut self.runs[at.0].items[at.1]
    }

    /// Marks an item as touched by an event (its lane grows to it).
    fn touch(&mut self, at: ItemRef, index: u64, ts: Option<i64>) -> Target {
        let item = self.item(at);
        item.last_event = item.last_event.max(index);
        if ts.is_some() {
            item.ended_at = ts;
            if item.started_at.is_none() {
                item.started_at = ts;
            }
        }
        Target::Item(at.0, at.1)
    }

    /// Applies one event (after chunk expansion) to the items of its run.
    fn apply(
        &mut self,
        ty: EventType,
        ev: &Value,
        run: usize,
        index: u64,
        ts: Option<i64>,
        synthetic: bool,
    ) -> Option<Target> {
        use EventType::*;
        let s = |k: &str| ev.get(k).and_then(Value::as_str).map(str::to_owned);
        let owner = s("subagentRunId");
        match ty {
            RunStarted => {
                self.input_messages(ev, run, index, ts);
                Some(Target::Run(run))
            }
            RunFinished | RunError => {
                let r = &mut self.runs[run];
                // A RUN_ERROR right after the run's RUN_FINISHED fails it late: a client
                // treats the run as failed (its usage, when the error gives none, stays).
                let late = ty == RunError && r.status == "finished";
                if r.status == "open" || late {
                    let before = r.usage.take().filter(|_| late);
                    if ty == RunFinished {
                        r.status = "finished";
                        r.outcome = ev.get("outcome").filter(|v| !v.is_null()).cloned();
                    } else {
                        r.status = "error";
                        r.outcome = None;
                        let mut error = serde_json::Map::new();
                        for key in ["message", "code"] {
                            if let Some(v) = ev.get(key) {
                                error.insert(key.into(), v.clone());
                            }
                        }
                        r.error = Some(Value::Object(error));
                    }
                    r.usage = ev.get("usage").cloned().or(before);
                }
                let finished = r.status == "finished";
                if r.status != "none" {
                    self.current = None;
                }
                if ty == RunFinished && finished {
                    self.finished_last = Some(run);
                }
                Some(Target::Run(run))
            }
            TextMessageStart => {
                let id = s("messageId");
                let role = ev
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("assistant")
                    .to_owned();
                let view = MessageView {
                    id: id.clone(),
                    role,
                    name: s("name"),
                    text: String::new(),
                    deltas: 0,
                    ended: false,
                    from_input: false,
                    encrypted: false,
                };
                let at = self.push_item(run, index, ts, owner, ItemKind::Message(view));
                if let Some(id) = id {
                    self.messages.insert(id, (run, at));
                }
                Some(Target::Item(run, at))
            }
            TextMessageContent => {
                let at = self.message_for(str_of(ev, "messageId"), run, index, ts, &owner);
                if let ItemKind::Message(m) = &mut self.item(at).kind {
                    halves::append(&mut m.text, &delta_text(ev.get("delta")));
                    m.deltas += 1;
                }
                Some(self.touch(at, index, ts))
            }
            TextMessageEnd => {
                let at = self.message_for(str_of(ev, "messageId"), run, index, ts, &owner);
                if let ItemKind::Message(m) = &mut self.item(at).kind {
                    m.ended = true;
                }
                if synthetic {
                    return Some(Target::Item(at.0, at.1));
                }
                Some(self.touch(at, index, ts))
            }
            ToolCallStart => {
                let id = s("toolCallId");
                let view = ToolCallView {
                    id: id.clone(),
                    name: s("toolCallName"),
                    parent_message_id: s("parentMessageId"),
                    arguments: String::new(),
                    deltas: 0,
                    ended: false,
                    result: None,
                    encrypted: false,
                };
                let at = self.push_item(run, index, ts, owner, ItemKind::ToolCall(view));
                if let Some(id) = id {
                    self.tool_calls.insert(id, (run, at));
                }
                Some(Target::Item(run, at))
            }
            ToolCallArgs => {
                let at = self.tool_call_for(str_of(ev, "toolCallId"), run, index, ts, &owner);
                if let ItemKind::ToolCall(c) = &mut self.item(at).kind {
                    halves::append(&mut c.arguments, &delta_text(ev.get("delta")));
                    c.deltas += 1;
                }
                Some(self.touch(at, index, ts))
            }
            ToolCallEnd => {
                let at = self.tool_call_for(str_of(ev, "toolCallId"), run, index, ts, &owner);
                if let ItemKind::ToolCall(c) = &mut self.item(at).kind {
                    c.ended = true;
                }
                if synthetic {
                    return Some(Target::Item(at.0, at.1));
                }
                Some(self.touch(at, index, ts))
            }
            ToolCallResult => {
                let at = self.tool_call_for(str_of(ev, "toolCallId"), run, index, ts, &owner);
                if let ItemKind::ToolCall(c) = &mut self.item(at).kind {
                    c.result = Some(ToolResultView {
                        message_id: s("messageId"),
                        content: ev.get("content").cloned().unwrap_or(Value::Null),
                        event: index,
                    });
                }
                Some(self.touch(at, index, ts))
            }
            ReasoningStart | ThinkingStart => {
                let view = ReasoningView {
                    id: s("messageId"),
                    text: String::new(),
                    deltas: 0,
                    span: true,
                    ended: false,
                    encrypted: false,
                };
                let at = self.push_item(run, index, ts, owner, ItemKind::Reasoning(view));
                match (ty, s("messageId")) {
                    (ThinkingStart, _) => self.thinking = Some((run, at)),
                    (_, Some(id)) => {
                        self.reasoning.insert(id, (run, at));
                    }
                    _ => {}
                }
                Some(Target::Item(run, at))
            }
            ReasoningMessageStart => {
                let at = self.reasoning_for(str_of(ev, "messageId"), run, index, ts, &owner);
                Some(self.touch(at, index, ts))
            }
            ReasoningMessageContent | ThinkingTextMessageContent => {
                let at = if ty == ThinkingTextMessageContent {
                    self.thinking_for(run, index, ts, &owner)
                } else {
                    self.reasoning_for(str_of(ev, "messageId"), run, index, ts, &owner)
                };
                if let ItemKind::Reasoning(r) = &mut self.item(at).kind {
                    halves::append(&mut r.text, &delta_text(ev.get("delta")));
                    r.deltas += 1;
                }
                Some(self.touch(at, index, ts))
            }
            ReasoningMessageEnd | ThinkingTextMessageStart | ThinkingTextMessageEnd => {
                let at = if ty == ReasoningMessageEnd {
                    self.reasoning_for(str_of(ev, "messageId"), run, index, ts, &owner)
                } else {
                    self.thinking_for(run, index, ts, &owner)
                };
                if synthetic {
                    return Some(Target::Item(at.0, at.1));
                }
                Some(self.touch(at, index, ts))
            }
            ReasoningEnd | ThinkingEnd => {
                let at = if ty == ThinkingEnd {
                    self.thinking_for(run, index, ts, &owner)
                } else {
                    self.reasoning_for(str_of(ev, "messageId"), run, index, ts, &owner)
                };
                if let ItemKind::Reasoning(r) = &mut self.item(at).kind {
                    r.ended = true;
                }
                if ty == ThinkingEnd {
                    self.thinking = None;
                }
                Some(self.touch(at, index, ts))
            }
            ReasoningEncryptedValue => Some(self.encrypted(ev, run, index, ts, owner)),
            StepStarted => {
                let name = s("stepName").unwrap_or_default();
                let view = StepView {
                    name: name.clone(),
                    finished: false,
                };
                let at = self.push_item(run, index, ts, owner.clone(), ItemKind::Step(view));
                self.steps.insert((owner, name), (run, at));
                Some(Target::Item(run, at))
            }
            StepFinished => {
                let name = s("stepName").unwrap_or_default();
                let at = match self.steps.remove(&(owner.clone(), name.clone())) {
                    Some(at) => at,
                    None => {
                        let view = StepView {
                            name,
                            finished: false,
                        };
                        (
                            run,
                            self.push_item(run, index, ts, owner, ItemKind::Step(view)),
                        )
                    }
                };
                if let ItemKind::Step(step) = &mut self.item(at).kind {
                    step.finished = true;
                }
                Some(self.touch(at, index, ts))
            }
            SubagentStarted => {
                let id = s("subagentRunId");
                let view = SubagentView {
                    id: id.clone(),
                    name: s("name"),
                    description: s("description"),
                    parent: s("parentSubagentRunId"),
                    status: "running",
                    outcome: None,
                    result: None,
                    error: None,
                };
                let at = self.push_item(run, index, ts, None, ItemKind::Subagent(view));
                if let Some(id) = id {
                    self.subagents.insert(id, (run, at));
                }
                Some(Target::Item(run, at))
            }
            SubagentFinished | SubagentError => {
                let at = match owner.as_ref().and_then(|id| self.subagents.get(id)) {
                    Some(&at) => at,
                    None => {
                        let view = SubagentView {
                            id: owner.clone(),
                            name: None,
                            description: None,
                            parent: None,
                            status: "running",
                            outcome: None,
                            result: None,
                            error: None,
                        };
                        (
                            run,
                            self.push_item(run, index, ts, None, ItemKind::Subagent(view)),
                        )
                    }
                };
                if let ItemKind::Subagent(sub) = &mut self.item(at).kind {
                    if ty == SubagentFinished {
                        sub.status = "finished";
                        sub.outcome = ev.get("outcome").cloned();
                        sub.result = ev.get("result").cloned();
                    } else {
                        sub.status = "error";
                        let mut error = serde_json::Map::new();
                        for key in ["message", "code"] {
                            if let Some(v) = ev.get(key) {
                                error.insert(key.into(), v.clone());
                            }
                        }
                        sub.error = Some(Value::Object(error));
                    }
                }
                Some(self.touch(at, index, ts))
            }
            ActivitySnapshot | ActivityDelta => {
                let id = s("messageId");
                let at = match id.as_ref().and_then(|id| self.activities.get(id)) {
                    Some(&at) => at,
                    None => {
                        let view = ActivityView {
                            id: id.clone(),
                            activity_type: None,
                            content: Value::Null,
                            updates: 0,
                        };
                        let at = self.push_item(run, index, ts, owner, ItemKind::Activity(view));
                        if let Some(id) = &id {
                            self.activities.insert(id.clone(), (run, at));
                        }
                        (run, at)
                    }
                };
                if let ItemKind::Activity(a) = &mut self.item(at).kind {
                    a.updates += 1;
                    if let Some(t) = ev.get("activityType").and_then(Value::as_str) {
                        a.activity_type = Some(t.to_owned());
                    }
                }
                if let (Some(id), Some(thread)) = (id, self.thread) {
                    // Its content is now what fold holds: copied later (see `catch_up`).
                    if self
                        .activities_behind
                        .get(&id)
                        .is_some_and(|&t| t != thread)
                    {
                        self.catch_up(&id);
                    }
                    self.activities_behind.insert(id, thread);
                }
                Some(self.touch(at, index, ts))
            }
            MessagesSnapshot => {
                let view = SnapshotView {
                    messages: ev
                        .get("messages")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len),
                };
                let at = self.push_item(run, index, ts, None, ItemKind::MessagesSnapshot(view));
                Some(Target::Item(run, at))
            }
            Custom => {
                let name = s("name").unwrap_or_default();
                *self.runs[run].custom.entry(name).or_default() += 1;
                None
            }
            Raw => {
                self.runs[run].raw += 1;
                None
            }
            // State changes are items made by the fold; chunks were expanded above.
            _ => None,
        }
    }

    /// The messages of RUN_STARTED.input the thread did not hold yet.
    fn input_messages(&mut self, ev: &Value, run: usize, index: u64, ts: Option<i64>) {
        let Some(messages) = ev
            .get("input")
            .and_then(|i| i.get("messages"))
            .and_then(Value::as_array)
        else {
            return;
        };
        for m in messages {
            let id = m.get("id").and_then(Value::as_str).map(str::to_owned);
            if id.as_ref().is_some_and(|id| self.messages.contains_key(id)) {
                continue;
            }
            let text = match m.get("content") {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            let view = MessageView {
                id: id.clone(),
                role: m
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned(),
                name: m.get("name").and_then(Value::as_str).map(str::to_owned),
                text,
                deltas: 0,
                ended: true,
                from_input: true,
                encrypted: m.get("encryptedValue").is_some(),
            };
            let at = self.push_item(run, index, ts, None, ItemKind::Message(view));
            if let Some(id) = id {
                self.messages.insert(id, (run, at));
            }
        }
    }

    /// The message an event names; one is made for an event whose message never started.
    fn message_for(
        &mut self,
        id: Option<&str>,
        run: usize,
        index: u64,
        ts: Option<i64>,
        owner: &Option<String>,
    ) -> ItemRef {
        if let Some(&at) = id.and_then(|id| self.messages.get(id)) {
            return at;
        }
        let view = MessageView {
            id: id.map(str::to_owned),
            role: "?".into(),
            name: None,
            text: String::new(),
            deltas: 0,
            ended: false,
            from_input: false,
            encrypted: false,
        };
        let at = self.push_item(run, index, ts, owner.clone(), ItemKind::Message(view));
        if let Some(id) = id {
            self.messages.insert(id.to_owned(), (run, at));
        }
        (run, at)
    }

    fn tool_call_for(
        &mut self,
        id: Option<&str>,
        run: usize,
        index: u64,
        ts: Option<i64>,
        owner: &Option<String>,
    ) -> ItemRef {
        if let Some(&at) = id.and_then(|id| self.tool_calls.get(id)) {
            return at;
        }
        let view = ToolCallView {
            id: id.map(str::to_owned),
            name: None,
            parent_message_id: None,
            arguments: String::new(),
            deltas: 0,
            ended: false,
            result: None,
            encrypted: false,
        };
        let at = self.push_item(run, index, ts, owner.clone(), ItemKind::ToolCall(view));
        if let Some(id) = id {
            self.tool_calls.insert(id.to_owned(), (run, at));
        }
        (run, at)
    }

    fn reasoning_for(
        &mut self,
        id: Option<&str>,
        run: usize,
        index: u64,
        ts: Option<i64>,
        owner: &Option<String>,
    ) -> ItemRef {
        if let Some(&at) = id.and_then(|id| self.reasoning.get(id)) {
            return at;
        }
        let view = ReasoningView {
            id: id.map(str::to_owned),
            text: String::new(),
            deltas: 0,
            span: false,
            ended: false,
            encrypted: false,
        };
        let at = self.push_item(run, index, ts, owner.clone(), ItemKind::Reasoning(view));
        if let Some(id) = id {
            self.reasoning.insert(id.to_owned(), (run, at));
        }
        (run, at)
    }

    /// The open THINKING_* span (removed in 1.0, still shown as reasoning).
    fn thinking_for(
        &mut self,
        run: usize,
        index: u64,
        ts: Option<i64>,
        owner: &Option<String>,
    ) -> ItemRef {
        if let Some(at) = self.thinking {
            return at;
        }
        let view = ReasoningView {
            id: None,
            text: String::new(),
            deltas: 0,
            span: true,
            ended: false,
            encrypted: false,
        };
        let at = self.push_item(run, index, ts, owner.clone(), ItemKind::Reasoning(view));
        self.thinking = Some((run, at));
        (run, at)
    }

    /// Marks what an encrypted value belongs to; the value is never kept.
    fn encrypted(
        &mut self,
        ev: &Value,
        run: usize,
        index: u64,
        ts: Option<i64>,
        owner: Option<String>,
    ) -> Target {
        let entity = ev.get("entityId").and_then(Value::as_str);
        let subtype = ev.get("subtype").and_then(Value::as_str);
        let found = entity.and_then(|id| match subtype {
            Some("tool-call") => self.tool_calls.get(id).copied(),
            _ => self
                .reasoning
                .get(id)
                .or_else(|| self.messages.get(id))
                .copied(),
        });
        match found {
            Some(at) => {
                match &mut self.item(at).kind {
                    ItemKind::Message(m) => m.encrypted = true,
                    ItemKind::ToolCall(c) => c.encrypted = true,
                    ItemKind::Reasoning(r) => r.encrypted = true,
                    _ => {}
                }
                Target::Item(at.0, at.1)
            }
            None => {
                let view = EncryptedView {
                    subtype: subtype.map(str::to_owned),
                    entity_id: entity.map(str::to_owned),
                };
                let at = self.push_item(run, index, ts, owner, ItemKind::Encrypted(view));
                Target::Item(run, at)
            }
        }
    }

    /// Copies an activity's content, as fold holds it, into its view: what it was after the
    /// activity's last update, which is the last change fold made to it (see
    /// `activities_behind`).
    fn catch_up(&mut self, id: &str) {
        let Some(thread) = self.activities_behind.remove(id) else {
            return;
        };
        let content = self.threads[thread].1.message(id).and_then(|message| {
            let activity = message.get("role").and_then(Value::as_str) == Some("activity");
            activity.then(|| message.get("content").cloned().unwrap_or(Value::Null))
        });
        let (Some(content), Some(&at)) = (content, self.activities.get(id)) else {
            return;
        };
        if let ItemKind::Activity(a) = &mut self.item(at).kind {
            a.content = content;
        }
    }

    /// [`Inspector::catch_up`] for every activity behind, or those of one thread.
    fn catch_up_all(&mut self, thread: Option<usize>) {
        let behind: Vec<String> = self
            .activities_behind
            .iter()
            .filter(|(_, t)| thread.is_none_or(|thread| **t == thread))
            .map(|(id, _)| id.clone())
            .collect();
        for id in behind {
            self.catch_up(&id);
        }
    }
}

/// The changes from one state (or part of it) to another. An absent or null state becoming
/// an object is shown as the object's members being added.
fn changes_between(
    old: Option<&Value>,
    new: Option<&Value>,
    base: &str,
    max: usize,
) -> StateChangeView {
    let empty = patch::empty_object();
    let old = match (old, new) {
        (None | Some(Value::Null), Some(Value::Object(_))) if base.is_empty() => Some(&empty),
        _ => old,
    };
    let found = all_differences(old, new, base, max);
    StateChangeView {
        source: "delta",
        operations: None,
        applied: true,
        more: found.total - found.found.len(),
        changes: found
            .found
            .into_iter()
            .map(|d| Change {
                path: d.pointer,
                old: d.left,
                new: d.right,
            })
            .collect(),
    }
}

/// The changes at each of the `watched` places, from what they held `before` to what they hold
/// in `state`, into `view` (the first `max` listed, the rest counted).
fn changes_at(
    watched: &[Watch],
    before: &[Option<Value>],
    state: Option<&Value>,
    max: usize,
    view: &mut StateChangeView,
) {
    for (Watch { pointer, .. }, old) in watched.iter().zip(before) {
        let room = max.saturating_sub(view.changes.len());
        let part = changes_between(old.as_ref(), pointed(state, pointer), pointer, room);
        view.more += part.more;
        view.changes.extend(part.changes);
    }
}

/// What each watched place held in `state`, the state before the patch.
fn before_patch(watched: &[Watch], state: Option<&Value>) -> Vec<Option<Value>> {
    let held = |watch: &Watch| match &watch.before {
        Before::Here => pointed(state, &watch.pointer).cloned(),
        Before::Nothing => None,
        Before::At(pointer) => pointed(state, pointer).cloned(),
    };
    watched.iter().map(held).collect()
}

/// The value at a pointer of a state that may be absent.
fn pointed<'a>(state: Option<&'a Value>, pointer: &str) -> Option<&'a Value> {
    state.and_then(|state| patch::get_pointer(state, pointer))
}

/// The parts of the state a patch can change, outermost only: each operation's path (and a
/// move's source), or its parent when the last segment may be an array index (an insertion or
/// removal shifts the elements after it). An array the patch only appends to (`add` at `-`) is
/// watched at the elements it gains, which is all comparing the whole array would find there
/// (the elements before them are left as they were), without copying and comparing the rest:
/// `state` is the state before the patch, for the array's length.
#[cfg(test)]
fn watched_pointers(ops: &[Value], state: Option<&Value>) -> Vec<String> {
    let mut watched = Watched::default();
    for op in ops {
        watched.add(op);
    }
    let places = watched.outermost(state, None);
    places
        .watches
        .into_iter()
        .map(|watch| watch.pointer)
        .collect()
}

/// The places a patch's operations change, gathered one operation at a time (each once,
/// however many operations touch it), in the order of the patch.
#[derive(Default)]
struct Watched {
    places: BTreeMap<String, Place>,
    ops: u32,
}

/// What a patch does at one place.
#[derive(Debug)]
struct Place {
    /// The elements added at an index or at its end, in order, while that is all it does
    /// there (nothing at all when only `test`s name it); `None` once it does anything else.
    added: Option<Vec<Added>>,
    /// The operations (by their place in the patch) that change something there.
    ops: Vec<u32>,
    /// Once it is outermost: the operations that change something inside one of its
    /// elements (other than its id), with the element's index.
    inner: Vec<(u32, usize)>,
}

/// An element an `add` puts into an array: by which operation, where (`None` at the end,
/// `-`), and the hash of its `id` if it is an object with a string id.
#[derive(Clone, Copy, Debug)]
struct Added {
    op: u32,
    at: Option<usize>,
    id: Option<u64>,
}

/// A place to compare before and after a patch: the pointer, and what it held before.
#[derive(Debug, PartialEq)]
struct Watch {
    pointer: String,
    before: Before,
}

/// Where the value a watched place held before the patch is.
#[derive(Debug, PartialEq)]
enum Before {
    /// At the same pointer.
    Here,
    /// Nowhere: an element the patch adds.
    Nothing,
    /// At this pointer: an element that the patch's inserts moved along.
    At(String),
}

/// The places a patch changes, as watched, and the outermost places with what the patch did
/// at each (for [`KnownIds::update`]).
struct Places {
    watches: Vec<Watch>,
    changed: Vec<Changed>,
}

/// An outermost place a patch changes: what it added there, whether it is compared whole,
/// and whether only `test`s name it (and what lies inside it), so nothing there changes.
struct Changed {
    place: String,
    added: Option<Vec<Added>>,
    whole: bool,
    tested: bool,
}

impl Watched {
    fn add(&mut self, op: &Value) {
        let name = op.get("op").and_then(Value::as_str);
        let (seq, tested) = (self.ops, name == Some("test"));
        self.ops += 1;
        let mut add = |pointer: &str, value: Option<&Value>| {
            let (parent, last) = match pointer.rfind('/') {
                Some(at) => (&pointer[..at], &pointer[at + 1..]),
                None => ("", ""),
            };
            // An empty last token is index 0 to an array (JavaScript's `Number("")`).
            let index_like =
                pointer.contains('/') && (last == "-" || last.bytes().all(|b| b.is_ascii_digit()));
            let watched = if index_like { parent } else { pointer };
            if !self.places.contains_key(watched) {
                let place = Place {
                    added: Some(Vec::new()),
                    ops: Vec::new(),
                    inner: Vec::new(),
                };
                self.places.insert(watched.to_owned(), place);
            }
            let Some(place) = self.places.get_mut(watched) else {
                return;
            };
            // A test changes nothing (a failing one fails the patch).
            if tested {
                return;
            }
            place.ops.push(seq);
            match (&mut place.added, value.filter(|_| index_like)) {
                (Some(added), Some(value)) => added.push(Added {
                    op: seq,
                    at: if last == "-" {
                        None
                    } else {
                        // A canonical index (the same number to every reader), or the end of
                        // any array, which keeps the place from being taken for an insertion.
                        canonical_index(last).or(Some(usize::MAX))
                    },
                    id: id_hash(value),
                }),
                (added, _) => *added = None,
            }
        };
        if let Some(path) = op.get("path").and_then(Value::as_str) {
            let value = if name == Some("add") {
                Some(op.get("value").unwrap_or(&Value::Null))
            } else {
                None
            };
            add(path, value);
        }
        if name == Some("move") {
            if let Some(from) = op.get("from").and_then(Value::as_str) {
                add(from, None);
            }
        }
    }

    /// The outermost of the places (a change inside one is a change of it), each compared
    /// whole unless less will do. A place only `test`s name changes nothing. An array that
    /// only has elements appended is watched at those elements: they are at its length in
    /// `state`, the state before the patch. So is one that only has elements inserted, and
    /// changes inside its elements other than of their ids, when `known` says its elements'
    /// ids are distinct and the inserted ones are new: matching by id, comparing the whole
    /// array finds only those elements (each changed one where it lands, against what it was).
    fn outermost(self, state: Option<&Value>, known: Option<&KnownIds>) -> Places {
        let mut outermost: Vec<(String, Place)> = Vec::new();
        for (p, place) in self.places {
            let covering = outermost
                .iter_mut()
                .find(|(o, _)| o.is_empty() || p.starts_with(&format!("{o}/")));
            match covering {
                Some(_) if place.ops.is_empty() => {}
                Some((o, covering)) => match (&covering.added, element_of(o, &p)) {
                    (Some(_), Some(k)) => {
                        let inside = place.ops.iter().map(|&op| (op, k));
                        covering.inner.extend(inside);
                    }
                    // What it covers changes more than its elements' insides.
                    _ => covering.added = None,
                },
                None => outermost.push((p, place)),
            }
        }
        let mut watches = Vec::with_capacity(outermost.len());
        let mut changed = Vec::with_capacity(outermost.len());
        for (p, place) in outermost {
            let inner = &place.inner;
            let tested = place.ops.is_empty() && inner.is_empty() && place.added.is_some();
            let items = match pointed(state, &p) {
                Some(Value::Array(items)) => Some(items.len()),
                _ => None,
            };
            let narrow = match (&place.added, items) {
                _ if tested => Some(Vec::new()),
                (Some(added), Some(len))
                    if inner.is_empty() && added.iter().all(|a| a.at.is_none()) =>
                {
                    let appended = (len..len + added.len()).map(|i| Watch {
                        pointer: format!("{p}/{i}"),
                        before: Before::Nothing,
                    });
                    Some(appended.collect())
                }
                (Some(added), Some(len)) => known.and_then(|k| k.landed(&p, len, added, inner)),
                _ => None,
            };
            let whole = narrow.is_none();
            match narrow {
                Some(narrow) => watches.extend(narrow),
                None => watches.push(Watch {
                    pointer: p.clone(),
                    before: Before::Here,
                }),
            }
            changed.push(Changed {
                place: p,
                added: place.added,
                whole,
                tested,
            });
        }
        Places { watches, changed }
    }
}

/// The element of the array at `array` that `pointer` names something inside, other than
/// its `id`: its index, when canonical.
fn element_of(array: &str, pointer: &str) -> Option<usize> {
    let inside = pointer.strip_prefix(array)?.strip_prefix('/')?;
    let mut tokens = inside.split('/');
    let index = canonical_index(tokens.next()?)?;
    match tokens.next() {
        Some(member) if member != "id" => Some(index),
        _ => None,
    }
}

/// An array index as a JSON Pointer writes it: `0`, or digits not starting with `0`.
fn canonical_index(token: &str) -> Option<usize> {
    let canonical = token == "0" || (!token.is_empty() && !token.starts_with('0'));
    (canonical && token.len() <= 15 && token.bytes().all(|b| b.is_ascii_digit()))
        .then(|| token.parse().ok())
        .flatten()
}

/// The hash of an element's `id`, when it is an object with a string id.
fn id_hash(item: &Value) -> Option<u64> {
    let id = item.as_object()?.get("id")?.as_str()?;
    Some(agui_lens_core::protocol::ids::id_hash(id))
}

/// What is known about a thread's state between patches: the arrays (by pointer) whose
/// elements are all objects with string ids, no two alike, with the hashes of those ids (as
/// many as the array has elements). An array in front of which a patch inserts is then
/// watched at what it gains, as an appended one is; without this, each insertion would
/// compare the whole array (quadratic in a list that grows at its front).
#[derive(Debug, Default)]
struct KnownIds {
    arrays: HashMap<String, IdSet>,
}

/// Hashes of ids (already hashed: [`agui_lens_core::protocol::ids::id_hash`]).
type IdSet = std::collections::HashSet<u64, FastBuild>;

/// Arrays shorter than this are compared whole: cheap enough, and nothing to keep.
const KNOWN_FROM: usize = 64;

impl KnownIds {
    /// The places to compare in the array at `pointer` of length `len` when a patch inserts
    /// the elements `added` into it and changes the insides of elements (`inner`, by operation
    /// and index as the operation found it): the inserted elements where they land, and each
    /// old element changed inside where it lands, against where it was. Only when the array's
    /// ids are known, each added element has an id no other has, and each index is within
    /// the array as it grows.
    fn landed(
        &self,
        pointer: &str,
        len: usize,
        added: &[Added],
        inner: &[(u32, usize)],
    ) -> Option<Vec<Watch>> {
        let ids = self.arrays.get(pointer)?;
        let mut steps: Vec<(u32, Result<&Added, usize>)> =
            added.iter().map(|a| (a.op, Ok(a))).collect();
        steps.extend(inner.iter().map(|&(op, index)| (op, Err(index))));
        steps.sort_by_key(|(op, _)| *op);
        let mut new = IdSet::with_capacity_and_hasher(added.len(), Default::default());
        // Where the inserted elements are as the patch goes, and the old elements changed.
        let (mut landed, mut changed): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for (_, step) in steps {
            let current = len + landed.len();
            match step {
                Ok(a) => {
                    let id = a.id?;
                    if ids.contains(&id) || !new.insert(id) {
                        return None;
                    }
                    let at = a.at.unwrap_or(current);
                    if at > current {
                        return None;
                    }
                    for l in &mut landed {
                        if *l >= at {
                            *l += 1;
                        }
                    }
                    landed.push(at);
                }

                // Inside an inserted element: it is compared whole.
                Err(index) if landed.contains(&index) => {}
                Err(index) => {
                    let old = index - landed.iter().filter(|&&l| l < index).count();
                    if !changed.contains(&old) {
                        changed.push(old);
                    }
                }
            }
        }
        landed.sort_unstable();
        let mut watched: Vec<(usize, Before)> =
            landed.iter().map(|&at| (at, Before::Nothing)).collect();
        for old in changed {
            // The old elements keep their order in the slots the inserted ones leave.
            let at = landed.iter().fold(old, |at, &l| at + usize::from(l <= at));
            let before = match at == old {
                true => Before::Here,
                false => Before::At(format!("{pointer}/{old}")),
            };
            watched.push((at, before));
        }
        watched.sort_by_key(|(at, _)| *at);
        let watched = watched.into_iter().map(|(at, before)| Watch {
            pointer: format!("{pointer}/{at}"),
            before,
        });
        Some(watched.collect())
    }

    /// Brings what is known up to date after a patch that applied: `places` as
    /// [`Watched::outermost`] found them before it, `state` the state after it. An array
    /// compared whole is looked at again (its length in time, as the comparison was), if it
    /// has at least `from` elements; one watched at what it gained only has those added.
    fn update(&mut self, places: &Places, state: Option<&Value>, from: usize) {
        for Changed {
            place,
            added,
            whole,
            tested,
        } in &places.changed
        {
            if *tested {
                continue;
            }
            self.arrays
                .retain(|known, _| known == place || !touches(place, known));
            let grown = match (added, self.arrays.get_mut(place)) {
                (Some(added), Some(ids)) => {
                    added.iter().all(|a| a.id.is_some_and(|id| ids.insert(id)))
                }
                _ => false,
            };
            if grown {
                continue;
            }
            self.arrays.remove(place);
            if let (true, Some(Value::Array(items))) = (*whole, pointed(state, place)) {
                if items.len() >= from {
                    let ids: Option<IdSet> = items.iter().map(id_hash).collect();
                    if let Some(ids) = ids.filter(|ids| ids.len() == items.len()) {
                        self.arrays.insert(place.clone(), ids);
                    }
                }
            }
        }
    }
}

/// Whether a change at `place` may change the ids of the array at `known`: a change of the
/// array or of what holds it, of a whole element, or of an element's `id`.
fn touches(place: &str, known: &str) -> bool {
    if place == known || place.is_empty() || known.starts_with(&format!("{place}/")) {
        return true;
    }
    let inside = if known.is_empty() {
        Some(place)
    } else {
        place.strip_prefix(known)
    };
    match inside.and_then(|rest| rest.strip_prefix('/')) {
        Some(rest) => {
            let mut tokens = rest.split('/').skip(1);
            matches!(tokens.next(), None | Some("id"))
        }
        None => false,
    }
}

/// A delta as text: strings as they are, anything else as JSON.
/// A string field of an event.
fn str_of<'v>(ev: &'v Value, key: &str) -> Option<&'v str> {
    ev.get(key).and_then(Value::as_str)
}

/// A plain content delta as the check hands it over (see [`Inspector::delta`]).
#[derive(Clone, Copy)]
pub struct PlainDelta<'a> {
    pub kind: EventType,
    pub id: &'a str,
    pub delta: &'a str,
    pub owner: Option<&'a str>,
    pub timestamp: Option<i64>,
    pub index: u64,
}

impl PlainDelta<'_> {
    /// The event this delta was read from.
    pub fn to_value(&self) -> Value {
        let mut event = serde_json::Map::new();
        event.insert("type".into(), self.kind.as_str().into());
        let id_key = match self.kind {
            EventType::ToolCallArgs => "toolCallId",
            _ => "messageId",
        };
        event.insert(id_key.into(), self.id.into());
        event.insert("delta".into(), self.delta.into());
        if let Some(ts) = self.timestamp {
            event.insert("timestamp".into(), ts.into());
        }
        if let Some(owner) = self.owner {
            event.insert("subagentRunId".into(), owner.into());
        }
        Value::Object(event)
    }
}

fn delta_text(delta: Option<&Value>) -> String {
    match delta {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn watched_pointers_are_outermost_and_cover_array_shifts() {
        let ops = json!([
            {"op": "add", "path": "/items/-", "value": 1},
            {"op": "replace", "path": "/items/0/name", "value": "x"},
            {"op": "replace", "path": "/counter", "value": 2},
            {"op": "move", "from": "/a/b", "path": "/c"},
            {"op": "remove", "path": "/list/3"},
        ]);
        assert_eq!(
            watched_pointers(ops.as_array().unwrap(), None),
            vec!["/a/b", "/c", "/counter", "/items", "/list"]
        );
        let root = json!([{"op": "replace", "path": "", "value": {}}, {"op": "add", "path": "/x", "value": 1}]);
        assert_eq!(watched_pointers(root.as_array().unwrap(), None), vec![""]);
    }

    /// An array that only has elements appended is watched at them; one with any other change
    /// (inside it too), or no array before the patch, as a whole.
    #[test]
    fn appended_elements_are_watched_where_they_land() {
        let state = json!({"items": [1, 2], "todos": [{"id": "a"}], "obj": {}, "a~b": [0]});
        let watched = |ops: Value| watched_pointers(ops.as_array().unwrap(), Some(&state));
        let add = |path: &str| json!({"op": "add", "path": path, "value": 9});
        assert_eq!(
            watched(json!([add("/items/-"), add("/items/-"), add("/a~0b/-")])),
            vec!["/a~0b/1", "/items/2", "/items/3"]
        );
        assert_eq!(
            watched(json!([add("/items/-"), add("/items/0")])),
            vec!["/items"]
        );
        assert_eq!(
            watched(
                json!([add("/todos/-"), {"op": "replace", "path": "/todos/0/id", "value": "b"}])
            ),
            vec!["/todos"]
        );
        assert_eq!(
            watched(json!([{"op": "move", "from": "/items/0", "path": "/x"}, add("/items/-")])),
            vec!["/items", "/x"]
        );
        assert_eq!(
            watched(json!([add("/obj/-"), add("/none/-")])),
            vec!["/none", "/obj"]
        );
        assert_eq!(watched(json!([add("/items/-"), add("")])), vec![""]);
    }

    /// What a patch that replaced these places leaves to [`KnownIds::update`].
    fn compared_whole(places: &[&str]) -> Places {
        let changed = places.iter().map(|place| Changed {
            place: place.to_string(),
            added: None,
            whole: true,
            tested: false,
        });
        Places {
            watches: Vec::new(),
            changed: changed.collect(),
        }
    }

    /// A state with arrays (some with ids), and a patch of a few operations on it: appends,
    /// inserts, removals, replacements, moves and tests, some of which fail.
    fn patched() -> impl proptest::strategy::Strategy<Value = (Value, Vec<Value>)> {
        use proptest::prelude::*;
        let element = prop_oneof![
            (0..4u8).prop_map(|n| json!(n)),
            (0..4u8).prop_map(|n| json!({"id": format!("t{n}"), "done": n % 2 == 0})),
        ];
        let list = proptest::collection::vec(element.clone(), 0..4);
        let path = prop_oneof![
            Just("/items/-"),
            Just("/todos/-"),
            Just("/items/0"),
            Just("/todos/1"),
            Just("/todos/0/done"),
            Just("/items"),
            Just("/obj/-"),
            Just("/obj/k"),
            Just("/gone/-"),
            Just(""),
        ];
        let op = (0..6u8, path.clone(), path, element);
        let op = op.prop_map(|(kind, path, from, value)| match kind {
            0..=2 => json!({"op": "add", "path": path, "value": value}),
            3 => json!({"op": "remove", "path": path}),
            4 => json!({"op": "move", "from": from, "path": path}),
            _ => json!({"op": "test", "path": path, "value": value}),
        });
        (list.clone(), list, proptest::collection::vec(op, 1..5)).prop_map(|(items, todos, ops)| {
            (json!({"items": items, "todos": todos, "obj": {}}), ops)
        })
    }

    /// What a patch's changes are listed as, its places watched as `watched` has them (each
    /// with whether it held nothing before), and the state after it; `None` if it fails.
    fn listed(state: &Value, ops: &[Value], watched: &[Watch]) -> Option<(Value, Value)> {
        let before = before_patch(watched, Some(state));
        let mut after = state.clone();
        let mut size = patch::estimated_size(&after, usize::MAX);
        patch::apply(
            &mut after,
            &Value::from(ops.to_vec()),
            &mut size,
            usize::MAX,
        )
        .ok()?;
        let mut view = StateChangeView {
            source: "delta",
            operations: None,
            applied: true,
            changes: Vec::new(),
            more: 0,
        };
        changes_at(watched, &before, Some(&after), MAX_CHANGES, &mut view);
        Some((serde_json::to_value(&view).unwrap(), after))
    }

    /// The same, every place watched whole (an array with any element added or removed too).
    fn listed_whole(state: &Value, ops: &[Value]) -> Option<(Value, Value)> {
        listed(state, ops, &here(watched_pointers(ops, None)))
    }

    /// Places watched where they were before the patch.
    fn here(pointers: Vec<String>) -> Vec<Watch> {
        let here = |pointer| Watch {
            pointer,
            before: Before::Here,
        };
        pointers.into_iter().map(here).collect()
    }

    /// The places a patch changes, as inspect watches them given what is `known`.
    fn places(ops: &[Value], state: &Value, known: &KnownIds) -> Places {
        let mut watched = Watched::default();
        ops.iter().for_each(|op| watched.add(op));
        watched.outermost(Some(state), Some(known))
    }

    /// A list of objects with ids (some alike, some not strings) and numbers, and patches of a
    /// few operations on it: inserts at indexes (canonical or not, in range or not), appends,
    /// removals, changes of elements and of their ids, moves, copies, tests, and changes of
    /// the whole list or state.
    fn history() -> impl proptest::strategy::Strategy<Value = (Value, Vec<Vec<Value>>)> {
        use proptest::prelude::*;
        let element = prop_oneof![
            12 => (0..14u8).prop_map(|n| json!({"id": format!("e{n}"), "n": n})),
            3 => (0..14u8).prop_map(|n| json!({"id": format!("e{n}"), "list": [{"id": "a"}]})),
            1 => (0..3u8).prop_map(|n| json!(n)),
            1 => Just(json!({"id": 7})),
            1 => Just(json!({"name": "no id"})),
        ];
        let path = prop_oneof![
            12 => Just("/log/0"),
            6 => Just("/log/1"),
            4 => Just("/log/-"),
            1 => Just("/log/3"),
            1 => Just("/log/"),
            1 => Just("/log/01"),
            1 => Just("/log/9"),
            1 => Just("/log/0/id"),
            1 => Just("/log/1/n"),
            1 => Just("/log/2/list/-"),
            2 => Just("/log/1/list/0"),
            1 => Just("/log"),
            1 => Just("/other/0"),
            1 => Just(""),
        ];
        let op = (0..14u8, path.clone(), path, element.clone());
        let op = op.prop_map(|(kind, path, from, value)| match kind {
            0..=8 => json!({"op": "add", "path": path, "value": value}),
            9 => json!({"op": "remove", "path": path}),
            10 => json!({"op": "replace", "path": path, "value": value}),
            11 => json!({"op": "move", "from": from, "path": path}),
            12 => json!({"op": "copy", "from": from, "path": path}),
            _ => json!({"op": "test", "path": path, "value": value}),
        });
        let patches = proptest::collection::vec(proptest::collection::vec(op, 1..4), 1..10);
        (proptest::collection::vec(element, 0..6), patches)
            .prop_map(|(log, patches)| (json!({"log": log, "other": []}), patches))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Watching appended elements finds what watching their whole array finds.
        #[test]
        fn appends_are_listed_as_the_whole_array_lists_them((state, ops) in patched()) {
            let narrow = here(watched_pointers(&ops, Some(&state)));
            proptest::prop_assert_eq!(
                listed(&state, &ops, &narrow),
                listed_whole(&state, &ops),
                "{:?} on {}", ops, state
            );
        }

        /// Along a history of patches, what is known about arrays' ids (kept from patch to
        /// patch) lets inspect watch inserted elements where they land, finding what watching
        /// the whole array finds.
        #[test]
        fn inserts_are_listed_as_the_whole_array_lists_them((mut state, patches) in history()) {
            // What a patch that replaced the lists whole would have left known.
            let mut known = KnownIds::default();
            let replaced = compared_whole(&["/log", "/other"]);
            known.update(&replaced, Some(&state), 0);
            for ops in &patches {
                let places = places(ops, &state, &known);
                let narrow = listed(&state, ops, &places.watches);
                proptest::prop_assert_eq!(
                    &narrow,
                    &listed_whole(&state, ops),
                    "{:?} on {} knowing {:?}", ops, state, known
                );
                if let Some((_, after)) = narrow {
                    known.update(&places, Some(&after), 0);
                    state = after;
                }
            }
        }
    }

    /// Once the ids of a list are known, an element inserted anywhere in it is watched alone;
    /// before that, and when its id is not new, the list is watched whole.
    #[test]
    fn inserted_elements_are_watched_once_ids_are_known() {
        let state = json!({"log": [{"id": "a"}, {"id": "b"}]});
        let insert = |at: &str, id: &str| json!({"op": "add", "path": at, "value": {"id": id}});
        let watched = |ops: Value, known: &KnownIds| -> Vec<(String, bool)> {
            let watches = places(ops.as_array().unwrap(), &state, known).watches;
            let fresh = |w: Watch| (w.pointer, w.before == Before::Nothing);
            watches.into_iter().map(fresh).collect()
        };
        let whole = vec![("/log".to_owned(), false)];
        let mut known = KnownIds::default();
        assert_eq!(watched(json!([insert("/log/0", "c")]), &known), whole);
        let compared = places(&[json!({"op": "remove", "path": "/log/9"})], &state, &known);
        known.update(&compared, Some(&state), 0);
        assert_eq!(known.arrays["/log"].len(), 2);
        assert_eq!(
            watched(
                json!([
                    insert("/log/0", "c"),
                    insert("/log/0", "d"),
                    insert("/log/3", "e")
                ]),
                &known
            ),
            vec![
                ("/log/0".to_owned(), true),
                ("/log/1".to_owned(), true),
                ("/log/3".to_owned(), true)
            ]
        );
        assert_eq!(watched(json!([insert("/log/1", "a")]), &known), whole);
        assert_eq!(
            watched(
                json!([insert("/log/0", "c"), insert("/log/0", "c")]),
                &known
            ),
            whole
        );
        assert_eq!(watched(json!([insert("/log/3", "c")]), &known), whole);
        assert_eq!(watched(json!([insert("/log/01", "c")]), &known), whole);
    }

    /// A change of an array, of what holds it, of a whole element or of an element's id
    /// forgets what was known about the array; other changes inside its elements do not.
    #[test]
    fn what_changes_ids_forgets_them() {
        let state = json!({"log": [{"id": "a", "list": [{"id": "x"}]}, {"id": "b"}]});
        let compared = compared_whole(&["/log", "/log/0/list"]);
        let cases: [(&str, &[&str]); 7] = [
            ("/log/0/id", &["/log/0/list"]),
            ("/log/0/text", &["/log", "/log/0/list"]),
            ("/log/0/list/0/id", &["/log"]),
            ("/log/0/list/0/n", &["/log", "/log/0/list"]),
            ("/log/1", &[]),
            ("/log", &[]),
            ("", &[]),
        ];
        for (path, left) in cases {
            let mut known = KnownIds::default();
            known.update(&compared, Some(&state), 0);
            assert_eq!(known.arrays.len(), 2);
            let ops = [json!({"op": "replace", "path": path, "value": {"id": "z"}})];
            let mut changed = places(&ops, &state, &known);
            // Not looked at again, as a place compared whole would be.
            changed.changed.iter_mut().for_each(|c| c.whole = false);
            known.update(&changed, Some(&state), 0);
            let mut kept: Vec<&str> = known.arrays.keys().map(String::as_str).collect();
            kept.sort_unstable();
            assert_eq!(kept, left, "{path}");
        }
        // A test changes nothing, whatever it names: nothing is watched or forgotten.
        let mut known = KnownIds::default();
        known.update(&compared, Some(&state), 0);
        let ops = [
            json!({"op": "test", "path": "/log/0/id", "value": "a"}),
            json!({"op": "test", "path": "/log/1", "value": {"id": "b"}}),
            json!({"op": "test", "path": "", "value": state}),
        ];
        let tested = places(&ops, &state, &known);
        assert!(tested.watches.is_empty());
        known.update(&tested, Some(&state), 0);
        assert_eq!(known.arrays.len(), 2);
    }

    /// The `i`th event of a stream, read whole.
    fn event_at(i: usize, value: &Value) -> Event {
        use agui_lens_core::protocol::event::Location;
        let loc = Location {
            path: "t".into(),
            line: i as u64 + 1,
            offset: 0,
            index: i as u64,
        };
        Event::from_value(loc, value.clone())
    }

    /// What inspect makes of a stream's events.
    fn inspected(events: &[Value]) -> Inspection {
        let mut inspector = Inspector::new("t", usize::MAX, false);
        for (i, value) in events.iter().enumerate() {
            inspector.event(&event_at(i, value), b"{}");
        }
        inspector.finish()
    }

    /// The state changes inspect lists for a stream's STATE_DELTAs, and those comparing each
    /// state with the one before it finds (`null` for a patch that fails). Also how many
    /// arrays' ids inspect knows at the end.
    fn listed_and_compared(events: &[Value]) -> (Vec<Value>, Vec<Value>, usize) {
        let mut inspector = Inspector::new("t", usize::MAX, false);
        let (mut state, mut compared) = (json!({}), Vec::new());
        for (i, value) in events.iter().enumerate() {
            let event = event_at(i, value);
            let kind = event.kind;
            inspector.event(&event, b"{}");
            let before = state.clone();
            match kind {
                Some(EventType::StateSnapshot) => state = value["snapshot"].clone(),
                Some(EventType::StateDelta) => {
                    let mut size = patch::estimated_size(&state, usize::MAX);
                    match patch::apply(&mut state, &value["delta"], &mut size, usize::MAX) {
                        Ok(_) => {
                            let changes =
                                changes_between(Some(&before), Some(&state), "", MAX_CHANGES);
                            compared.push(serde_json::to_value(changes.changes).unwrap());
                        }
                        Err(_) => {
                            state = before;
                            compared.push(Value::Null);
                        }
                    }
                }
                _ => {}
            }
        }
        let known = inspector.known_ids.iter().map(|k| k.arrays.len()).sum();
        let listed = inspector
            .finish()
            .runs
            .iter()
            .flat_map(|run| &run.items)
            .filter_map(|item| match &item.kind {
                ItemKind::StateChange(c) if c.source == "delta" => Some(match c.applied {
                    true => serde_json::to_value(&c.changes).unwrap(),
                    false => Value::Null,
                }),
                _ => None,
            })
            .collect();
        (listed, compared, known)
    }

    /// A state of lists (with ids and without), nested objects and odd keys, and patches of
    /// every kind of operation at paths that name members, indexes (canonical or not, empty,
    /// `-`), escaped keys and the whole state.
    fn stream_of_patches() -> impl proptest::strategy::Strategy<Value = Vec<Value>> {
        use proptest::prelude::*;
        let element = prop_oneof![
            4 => (0..8u8).prop_map(|n| json!({"id": format!("e{n}"), "n": n})),
            1 => (0..3u8).prop_map(|n| json!(n)),
            1 => (0..3u8).prop_map(|n| json!({"n": n, "list": [n]})),
        ];
        let path = prop_oneof![
            Just("/log/0"),
            Just("/log/1"),
            Just("/log/-"),
            Just("/log/"),
            Just("/log/01"),
            Just("/log/0/n"),
            Just("/log/1/id"),
            Just("/log/0/list/0"),
            Just("/obj/a"),
            Just("/obj/"),
            Just("/obj/-"),
            Just("/obj/0"),
            Just("/obj/b/c/0"),
            Just("/obj/b/c/-"),
            Just("/obj/b"),
            Just("/a~1b"),
            Just("/a~0b/x"),
            Just("/nums/2"),
            Just(""),
        ];
        let op = (0..9u8, path.clone(), path, element.clone());
        let op = op.prop_map(|(kind, path, from, value)| match kind {
            0..=3 => json!({"op": "add", "path": path, "value": value}),
            4 => json!({"op": "remove", "path": path}),
            5 => json!({"op": "replace", "path": path, "value": value}),
            6 => json!({"op": "move", "from": from, "path": path}),
            7 => json!({"op": "copy", "from": from, "path": path}),
            _ => json!({"op": "test", "path": path, "value": value}),
        });
        let patch = proptest::collection::vec(op, 1..4)
            .prop_map(|ops| json!({"type": "STATE_DELTA", "delta": ops}));
        let log = proptest::collection::vec(element, 0..5);
        (log, proptest::collection::vec(patch, 1..8)).prop_map(|(log, patches)| {
            let state = json!({
                "log": log,
                "obj": {"a": 1, "": 2, "b": {"c": [1, 2, 3]}},
                "a/b": true,
                "a~b": {"x": 1},
                "nums": [3, 1, 4, 1, 5],
            });
            let mut events = vec![
                json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
                json!({"type": "STATE_SNAPSHOT", "snapshot": state}),
            ];
            events.extend(patches);
            events
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// What inspect lists for each patch is what comparing the whole states before and
        /// after it finds (in its own order: place by place), and a patch that fails lists
        /// nothing.
        #[test]
        fn each_patch_is_listed_as_the_states_differ(events in stream_of_patches()) {
            let (listed, compared, _) = listed_and_compared(&events);
            let sorted = |changes: &Value| {
                let mut changes = changes.as_array().cloned();
                if let Some(changes) = &mut changes {
                    changes.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
                }
                changes
            };
            proptest::prop_assert_eq!(listed.len(), compared.len());
            for (n, (listed, compared)) in listed.iter().zip(&compared).enumerate() {
                proptest::prop_assert_eq!(
                    sorted(listed),
                    sorted(compared),
                    "patch {}: {}", n, events[n + 2]
                );
            }
        }
    }

    /// A long list that grows at its front, then is replaced by a snapshot holding the id
    /// the next insertion repeats: each insertion is listed as comparing the states finds
    /// it (one element added; then, ids no longer distinct, every element moved along).
    #[test]
    fn insertions_at_the_front_are_listed_as_the_states_differ() {
        let list = |first: &str, new: bool| {
            let mut list: Vec<Value> = (0..KNOWN_FROM + 5)
                .map(|i| json!({"id": format!("{first}{i}")}))
                .collect();
            if new {
                list[5] = json!({"id": "new"});
            }
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"log": list}})
        };
        let insert = |id: &str| json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/log/0", "value": {"id": id}}]});
        let mut events = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            list("a", false),
        ];
        events.extend((0..5).map(|i| insert(&format!("b{i}"))));
        let (listed, compared, known) = listed_and_compared(&events);
        assert_eq!((listed.len(), known), (5, 1));
        assert_eq!(listed, compared);
        assert_eq!(listed[4].as_array().map(Vec::len), Some(1), "{}", listed[4]);
        events.extend([list("c", true), insert("new"), insert("d")]);
        let (listed, compared, known) = listed_and_compared(&events);
        assert_eq!((listed.len(), known), (7, 0));
        assert_eq!(listed, compared);
        assert!(
            listed[5].as_array().map(Vec::len) > Some(KNOWN_FROM),
            "{}",
            listed[5]
        );
    }

    /// A run whose every patch shifts a long list without ids keeps at most
    /// [`MAX_RUN_CHANGES`] changed paths, counting the rest, and the next run starts afresh.
    #[test]
    fn a_run_keeps_a_bounded_number_of_changed_paths() {
        let run = json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"});
        let list: Vec<u32> = (0..1500).collect();
        let mut events = vec![
            run.clone(),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"log": list}}),
        ];
        let insert = |n: u32| json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/log/0", "value": 10_000 + n}]});
        events.extend((0..25).map(insert));
        events.extend([run, insert(25)]);
        let runs = inspected(&events).runs;
        let counted = |run: &RunView| -> Vec<(usize, usize)> {
            run.items
                .iter()
                .filter_map(|item| match &item.kind {
                    ItemKind::StateChange(c) => Some((c.changes.len(), c.more)),
                    _ => None,
                })
                .collect()
        };
        let first = counted(&runs[0]);
        // The snapshot: the list added whole, one change.
        assert_eq!((first.len(), first[0]), (26, (1, 0)));
        // Every element moves along one place, and one is added: 1,500 + 1 + n changes.
        for (n, (listed, more)) in first[1..].iter().enumerate() {
            assert_eq!(listed + more, 1501 + n, "patch {n}");
        }
        assert_eq!(
            first.iter().map(|(listed, _)| listed).sum::<usize>(),
            MAX_RUN_CHANGES
        );
        assert_eq!(first[20].0, MAX_CHANGES - 1);
        assert_eq!(first[21].0, 0);
        assert_eq!(counted(&runs[1]), [(MAX_CHANGES, 1526 - MAX_CHANGES)]);
    }

    /// An activity's view shows its content as its last update left it, though the content
    /// is copied from fold only later: a snapshot of the messages that changes it afterwards,
    /// or an update of the same id on another thread, does not show through.
    #[test]
    fn an_activity_shows_its_content_after_its_last_update() {
        let activity = |content: Value| {
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "PLAN",
                   "content": content})
        };
        let delta = |n: u32| {
            json!({"type": "ACTIVITY_DELTA", "messageId": "a1",
                   "patch": [{"op": "add", "path": "/steps/-", "value": n}]})
        };
        let run = |thread: &str| json!({"type": "RUN_STARTED", "threadId": thread, "runId": "r"});
        let snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "a1", "role": "activity", "activityType": "PLAN", "content": {"steps": ["other"]}}
        ]});
        let cases = [
            (
                vec![run("t"), activity(json!({"steps": []})), delta(1), delta(2)],
                json!({"steps": [1, 2]}),
            ),
            (
                vec![
                    run("t"),
                    activity(json!({"steps": []})),
                    delta(1),
                    snapshot.clone(),
                ],
                json!({"steps": [1]}),
            ),
            (
                vec![
                    run("t"),
                    activity(json!({"steps": [0]})),
                    run("u"),
                    snapshot,
                    run("t"),
                    delta(3),
                ],
                json!({"steps": [0, 3]}),
            ),
            (
                vec![
                    run("t"),
                    activity(json!({"steps": [7]})),
                    run("u"),
                    delta(8),
                ],
                json!({"steps": [7]}),
            ),
        ];
        for (n, (events, shown)) in cases.into_iter().enumerate() {
            let runs = inspected(&events).runs;
            let contents: Vec<&Value> = runs
                .iter()
                .flat_map(|run| &run.items)
                .filter_map(|item| match &item.kind {
                    ItemKind::Activity(a) => Some(&a.content),
                    _ => None,
                })
                .collect();
            assert_eq!(contents, [&shown], "case {n}");
        }
    }

    /// An `add` whose last token is empty inserts at the front of an array (JavaScript reads
    /// `""` as index 0): the array is watched, so the change is listed.
    #[test]
    fn an_empty_index_watches_the_array() {
        let state = json!({"log": [1, 2]});
        let ops = [json!({"op": "add", "path": "/log/", "value": 0})];
        assert_eq!(watched_pointers(&ops, Some(&state)), vec!["/log"]);
        let (view, after) = listed_whole(&state, &ops).unwrap();
        assert_eq!(after, json!({"log": [0, 1, 2]}));
        assert_eq!(view["changes"].as_array().map(Vec::len), Some(3), "{view}");
    }
}
