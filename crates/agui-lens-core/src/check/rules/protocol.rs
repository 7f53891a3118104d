//! The protocol state machine: follows every run, message, tool call, step, reasoning span,
//! subagent and the shared state through the stream, in order, after chunk expansion. Each
//! family of rules keeps its own state in its own file; this file feeds them events.

use serde_json::Value;

use super::lifecycle::{Lifecycle, Transition};
use super::order::Order;
use super::pairing::Pairing;
use super::reference::References;
use super::state::StateRules;
use super::tool_args::ToolArgs;
use crate::check::catalog::{Levels, RuleId};
use crate::check::diagnostic::Diagnostic;
use crate::check::parse::finding;
use crate::protocol::chunks::{ChunkExpander, ChunkKind, ChunkProblem, Piece};
use crate::protocol::event::{Event, EventType, Location, RawPatch};
use crate::protocol::patch;
use crate::protocol::version::Version;
use crate::read::delta::Text;

/// Default cap on the estimated size of the shared state (and of each activity's content).
pub const DEFAULT_STATE_LIMIT: usize = 256 * 1024 * 1024;

/// How the protocol rules read a stream.
#[derive(Clone, Debug)]
pub struct ProtocolOptions {
    /// The capture may begin mid-run: no first-event error, and ids first seen before the
    /// first RUN_STARTED are adopted instead of reported.
    pub attach: bool,
    pub state_limit: usize,
    /// Longest tool-call arguments kept for checking.
    pub max_args: usize,
    /// The state the client holds before the stream: for a live call, the state of the
    /// RunAgentInput it sent. A RUN_STARTED.input.state replaces it.
    pub state: Option<Value>,
    /// The protocol version runs that declare none are held to (`--protocol`); the newest
    /// agui-lens knows when none is given.
    pub version: Option<crate::protocol::version::Version>,
    /// The RunAgentInput a live call sent: its tools are what the client can execute, its
    /// messages the history results may answer. A RUN_STARTED.input replaces it. Shared, as
    /// the options are copied per stream and an input may be large.
    pub input: Option<std::sync::Arc<Value>>,
}

impl Default for ProtocolOptions {
    fn default() -> Self {
        ProtocolOptions {
            attach: false,
            state_limit: DEFAULT_STATE_LIMIT,
            max_args: crate::read::DEFAULT_MAX_LINE,
            state: None,
            version: None,
            input: None,
        }
    }
}

/// An event's fields: a parsed object, or a delta event read on the fast path.
#[derive(Clone, Copy)]
pub enum Fields<'a> {
    Json(&'a Value),
    Delta(&'a DeltaView<'a>),
}

/// A fast-path delta event's fields, resolved against its bytes.
pub struct DeltaView<'a> {
    pub kind: EventType,
    pub id: &'a str,
    /// Resolved only when a rule reads it: most rules never look at the text.
    pub delta: &'a Text,
    pub raw: &'a [u8],
    pub owner: Option<&'a str>,
    pub timestamp: Option<i64>,
}

impl<'a> Fields<'a> {
    pub fn str(self, key: &str) -> Option<&'a str> {
        match self {
            Fields::Json(value) => value.get(key).and_then(Value::as_str),
            Fields::Delta(delta) => match key {
                "messageId" if delta.kind != EventType::ToolCallArgs => Some(delta.id),
                "toolCallId" if delta.kind == EventType::ToolCallArgs => Some(delta.id),
                "delta" => Some(delta.delta.get(delta.raw)),
                "subagentRunId" => delta.owner,
                "type" => Some(delta.kind.as_str()),
                _ => None,
            },
        }
    }

    /// A field of any kind. A fast-path delta has nothing but strings and a timestamp, which
    /// the rules read through `str`.
    pub fn get(self, key: &str) -> Option<&'a Value> {
        match self {
            Fields::Json(value) => value.get(key),
            Fields::Delta(_) => None,
        }
    }
}

/// One event as the rules see it: after chunk expansion, with where it came from.
pub struct Ev<'a> {
    pub ty: EventType,
    pub value: Fields<'a>,
    /// The event as read (the chunk, for events expanded from one).
    pub origin: Fields<'a>,
    pub loc: &'a Location,
    /// Made up by chunk expansion rather than sent.
    pub synthetic: bool,
    /// The event as read matched its schema (state is not patched with a malformed delta,
    /// which the schema rules already report).
    pub conforms: bool,
    /// A large patch's operations, read as text (see [`Event::patch`]).
    pub patch: Option<&'a RawPatch>,
    /// The event's text as read (the chunk's, for events expanded from one): what a finding
    /// said later about it shows.
    pub raw: &'a [u8],
}

impl<'a> Ev<'a> {
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.value.str(key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.value.get(key)
    }

    /// The operations of the event's JSON Patch (STATE_DELTA's `delta`, ACTIVITY_DELTA's
    /// `patch`), however they were read.
    pub fn patch_ops(&self) -> Option<patch::Ops<'a>> {
        if let Some(raw) = self.patch {
            return Some(patch::Ops::Raw(raw));
        }
        self.get(self.ty.patch_field()?).map(patch::Ops::Value)
    }

    /// The subagent the event is attributed to.
    pub fn owner(&self) -> Option<&'a str> {
        self.str("subagentRunId")
    }
}

/// Where findings go, and which rules are on.
pub struct Out<'a> {
    pub levels: &'a Levels,
    pub found: &'a mut Vec<Diagnostic>,
}

impl Out<'_> {
    pub fn wants(&self, rule: RuleId) -> bool {
        self.levels.enabled(rule)
    }

    /// Reports a finding at `loc`, if the rule is on.
    pub fn report(&mut self, rule: RuleId, loc: &Location, message: String, help: &str) {
        if self.levels.enabled(rule) {
            let mut d = finding(rule, loc, message);
            if !help.is_empty() {
                d.help = Some(help.to_owned());
            }
            self.found.push(d);
        }
    }

    /// Reports a finding at `loc` whose cause can repeat it (see [`Diagnostic::subject`]).
    pub fn report_about(
        &mut self,
        rule: RuleId,
        loc: &Location,
        subject: &str,
        message: String,
        help: &str,
    ) {
        self.report(rule, loc, message, help);
        if let Some(d) = self.found.last_mut().filter(|d| d.rule == rule) {
            d.subject = Some(subject.to_owned());
        }
    }

    /// Reports a finding about a JSON Pointer inside the event.
    pub fn report_at(
        &mut self,
        rule: RuleId,
        loc: &Location,
        pointer: String,
        message: String,
        help: &str,
    ) {
        if self.levels.enabled(rule) {
            let mut d = finding(rule, loc, message);
            d.pointer = Some(pointer);
            if !help.is_empty() {
                d.help = Some(help.to_owned());
            }
            self.found.push(d);
        }
    }
}

/// The state machine for one stream.
pub struct Protocol {
    options: ProtocolOptions,
    expander: ChunkExpander,
    pieces: Vec<Piece>,
    lifecycle: Lifecycle,
    pairing: Pairing,
    state: StateRules,
    references: References,
    tool_args: ToolArgs,
    order: Order,
    /// The protocol version the current run is held to.
    version: Version,
}

impl Protocol {
    pub fn new(options: ProtocolOptions) -> Self {
        let mut protocol = Protocol {
            lifecycle: Lifecycle::new(options.attach),
            pairing: Pairing::default(),
            state: StateRules::new(options.state_limit, options.state.clone()),
            references: References::default().with_input(options.input.as_deref()),
            tool_args: ToolArgs::new(options.max_args).with_sent_tools(options.input.clone()),
            order: Order::default(),
            expander: ChunkExpander::new(),
            pieces: Vec::new(),
            version: Version::NEWEST,
            options,
        };
        protocol.set_version(protocol.options.version.unwrap_or(Version::NEWEST));
        protocol
    }

    /// The protocol version the current run is held to (its RUN_STARTED decides it).
    pub fn set_version(&mut self, version: Version) {
        self.version = version;
        self.pairing.set_version(version);
        self.tool_args.set_version(version);
    }

    /// Follows one event. Events of unknown types are not followed (the schema rules report
    /// them).
    pub fn on_event(
        &mut self,
        event: &Event,
        raw: &[u8],
        conforms: bool,
        levels: &Levels,
        found: &mut Vec<Diagnostic>,
    ) {
        let Some(ty) = event.kind else {
            return;
        };
        let mut out = Out { levels, found };
        let timestamp = event.value.get("timestamp").and_then(Value::as_i64);
        self.order.on_timestamp(timestamp, &event.loc, &mut out);
        let mut pieces = std::mem::take(&mut self.pieces);
        if let Err(problem) = self.expander.expand(Some(ty), &event.value, &mut pieces) {
            report_chunk_problem(&problem, &event.loc, &mut out);
        }
        for piece in &pieces {
            let ev = match piece {
                Piece::Original => Ev {
                    ty,
                    value: Fields::Json(&event.value),
                    origin: Fields::Json(&event.value),
                    loc: &event.loc,
                    synthetic: false,
                    conforms,
                    patch: event.patch.as_deref(),
                    raw,
                },
                Piece::Synthetic(value) => Ev {
                    ty: EventType::of(value).unwrap_or(ty),
                    value: Fields::Json(value),
                    origin: Fields::Json(&event.value),
                    loc: &event.loc,
                    synthetic: true,
                    conforms,
                    patch: None,
                    raw,
                },
            };
            self.handle(&ev, &mut out);
        }
        self.pieces = pieces;
    }

    /// Follows a delta event read on the fast path. Returns `false`, having done nothing, when
    /// a chunk stream is open (expansion then needs the whole event; use [`Protocol::on_event`]).
    pub fn on_delta(
        &mut self,
        delta: &DeltaView<'_>,
        loc: &Location,
        levels: &Levels,
        found: &mut Vec<Diagnostic>,
    ) -> bool {
        if !self.expander.is_idle() {
            return false;
        }
        let mut out = Out { levels, found };
        self.order.on_timestamp(delta.timestamp, loc, &mut out);
        let ev = Ev {
            ty: delta.kind,
            value: Fields::Delta(delta),
            origin: Fields::Delta(delta),
            loc,
            synthetic: false,
            conforms: true,
            patch: None,
            raw: delta.raw,
        };
        self.handle(&ev, &mut out);
        true
    }

    fn handle(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let adopting = self.options.attach && self.lifecycle.before_first_run();
        match self.lifecycle.on_event(ev, out) {
            Transition::NewRun => {
                self.pairing.new_run();
                // A run that never ended says what it left waiting.
                self.tool_args.say_deferred(out);
                self.tool_args.new_run(ev);
            }
            Transition::LateStart => self.tool_args.declare_tools(ev),
            Transition::Ends { error } => {
                let open = self.pairing.open_items();
                self.lifecycle.report_open(ev, error, &open, out);
                self.pairing.close_all();
                self.tool_args.close_all();
                self.tool_args.end_run(error, ev, out);
            }
            Transition::None => {}
        }
        // A run's usage, on the event that ends it or on a RUN_ERROR that fails it late.
        if matches!(ev.ty, EventType::RunFinished | EventType::RunError)
            && self.version >= Version::V1_0
        {
            super::lifecycle::judge_usage(ev, out);
            if ev.ty == EventType::RunFinished {
                super::lifecycle::judge_interrupts(ev, out);
            }
        }
        self.pairing.on_event(ev, adopting, out);
        self.references.on_event(ev, adopting, out);
        self.state.on_event(ev, adopting, out);
        self.tool_args.on_event(ev, out);
    }

    /// Whether the stream ending now would leave a run, a message or a tool call open.
    pub fn ends_inside_a_run(&self) -> bool {
        self.lifecycle.in_run()
            || !self.pairing.open_items().is_empty()
            || self.expander.open_streams().next().is_some()
    }

    /// The stream ended: reports what is still open.
    pub fn finish(&mut self, levels: &Levels, found: &mut Vec<Diagnostic>) {
        let mut out = Out { levels, found };
        self.tool_args.say_deferred(&mut out);
        let mut open = self.pairing.open_items();
        for (kind, id) in self.expander.open_streams() {
            let what = match kind {
                ChunkKind::Text => "text message",
                ChunkKind::Tool => "tool call",
                ChunkKind::Reasoning => "reasoning message",
            };
            // One the pairing rules name already (opened by the START a chunk made) is not
            // named twice.
            let named = format!("{what} \"{id}\"");
            let listed = open
                .iter()
                .any(|item| item == &named || item.starts_with(&format!("{named} ")));
            if !listed {
                open.push(format!("{named} (from chunks)"));
            }
        }
        self.lifecycle.finish(&open, &mut out);
    }
}

fn report_chunk_problem(problem: &ChunkProblem, loc: &Location, out: &mut Out<'_>) {
    let kind_rule = |kind: ChunkKind| match kind {
        ChunkKind::Text => RuleId::PairingTextMessage,
        ChunkKind::Tool => RuleId::PairingToolCall,
        ChunkKind::Reasoning => RuleId::PairingReasoningMessage,
    };
    match problem {
        ChunkProblem::MissingField { kind, field } => out.report(
            RuleId::PairingChunkMissingId,
            loc,
            format!(
                "the first {} of a stream has no {field}",
                kind.chunk_type()
            ),
            "the first chunk names the message or tool call (and a tool call's name); later chunks may leave them out",
        ),
        ChunkProblem::Ambiguous { kind, lanes } => out.report(
            RuleId::PairingChunkMissingId,
            loc,
            format!(
                "a {} names neither an id nor a subagentRunId while {lanes} subagents have one open",
                kind.chunk_type()
            ),
            "attribute the chunk with subagentRunId, or repeat the id",
        ),
        ChunkProblem::Conflict {
            kind,
            id,
            field,
            incoming,
            established,
        } => out.report(
            kind_rule(*kind),
            loc,
            format!(
                "a {} for \"{id}\" has {field} \"{incoming}\", but the stream opened with {}",
                kind.chunk_type(),
                established
                    .as_ref()
                    .map(|v| format!("\"{v}\""))
                    .unwrap_or_else(|| "none".into())
            ),
            "a continuation chunk may repeat its stream's fields, but only with the same values",
        ),
        ChunkProblem::WrongOwner {
            kind,
            id,
            tag,
            owner,
        } => out.report(
            RuleId::PairingAttributionMismatch,
            loc,
            format!(
                "a {} for \"{id}\" is attributed to subagent \"{tag}\", but the stream is open under {}",
                kind.chunk_type(),
                owner_name(owner.as_deref())
            ),
            "a stream's chunks must all carry its opener's subagentRunId (or none)",
        ),
    }
}

/// `subagent "s1"` or `the parent agent`.
pub fn owner_name(owner: Option<&str>) -> String {
    match owner {
        Some(id) => format!("subagent \"{id}\""),
        None => "the parent agent".into(),
    }
}
