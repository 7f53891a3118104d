//! Pairing rules: every message, tool call, reasoning span and message, step and subagent is
//! started once, continued and ended only while open, and by the producer that opened it.
//! Several may be open at once. After a finding the stream is read as if the producer had
//! meant the obvious thing (an unknown id is adopted), so one mistake is reported once.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::protocol::{Ev, Out, owner_name};
use crate::check::catalog::RuleId;
use crate::protocol::event::EventType;
use crate::protocol::ids::{FastBuild, IdMap, declared_call_ids, id_hash};
use crate::protocol::version::Version;

/// How many subagents attributed before being announced one run remembers.
const UNANNOUNCED_KEPT: usize = 1024;

/// Something open, and where it opened.
#[derive(Clone, Debug)]
struct Open {
    line: u64,
}

/// The producer an entity belongs to: a hash of its subagentRunId, 0 for the parent agent.
type OwnerKey = u64;

fn owner_key(owner: Option<&str>) -> OwnerKey {
    owner.map_or(0, |o| id_hash(o) | 1)
}

/// Who owns what, by kind: ids are only unique within a kind.
#[derive(Default)]
struct Owners {
    message: IdMap<(OwnerKey, Option<String>)>,
    tool: IdMap<(OwnerKey, Option<String>)>,
    activity: IdMap<(OwnerKey, Option<String>)>,
    reasoning: IdMap<(OwnerKey, Option<String>)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Tool,
    Span,
    Reasoning,
}

impl Kind {
    fn rule(self) -> RuleId {
        match self {
            Kind::Text => RuleId::PairingTextMessage,
            Kind::Tool => RuleId::PairingToolCall,
            Kind::Span => RuleId::PairingReasoning,
            Kind::Reasoning => RuleId::PairingReasoningMessage,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Text => "message",
            Kind::Tool => "tool call",
            Kind::Span => "reasoning span",
            Kind::Reasoning => "reasoning message",
        }
    }

    fn start(self) -> &'static str {
        match self {
            Kind::Text => "TEXT_MESSAGE_START",
            Kind::Tool => "TOOL_CALL_START",
            Kind::Span => "REASONING_START",
            Kind::Reasoning => "REASONING_MESSAGE_START",
        }
    }

    fn end(self) -> &'static str {
        match self {
            Kind::Text => "TEXT_MESSAGE_END",
            Kind::Tool => "TOOL_CALL_END",
            Kind::Span => "REASONING_END",
            Kind::Reasoning => "REASONING_MESSAGE_END",
        }
    }

    fn id_field(self) -> &'static str {
        match self {
            Kind::Tool => "toolCallId",
            _ => "messageId",
        }
    }
}

#[derive(Default)]
pub struct Pairing {
    text: HashMap<String, Open, FastBuild>,
    tools: HashMap<String, Open, FastBuild>,
    spans: HashMap<String, Open, FastBuild>,
    reasoning: HashMap<String, Open, FastBuild>,
    steps: HashMap<(Option<String>, String), Open, FastBuild>,
    subagents: HashMap<String, Open, FastBuild>,
    closed_subagents: HashSet<String, FastBuild>,
    /// Subagents events were attributed to before any SUBAGENT_STARTED for them in this run,
    /// with the line of the first: one announced later was announced too late.
    unannounced: HashMap<String, u64, FastBuild>,
    /// Ids continued without being open: reported once, then their further events are quiet
    /// (and they are not "still open" when the run ends).
    adopted: HashSet<(u8, String), FastBuild>,
    owners: Owners,
    /// Messages that ended anywhere in the stream, with the line of their END.
    ended_text: IdMap<u64>,
    ended_reasoning: IdMap<u64>,
    ended_tools: IdMap<u64>,
    /// What the first START of each message and tool call said that a reopening START (1.0
    /// and later) must agree with: a message's `name`, a call's `toolCallName` and
    /// `parentMessageId`.
    started_as: IdMap<StartedAs>,
    /// The open entity the last content event continued, with its owner: most content events
    /// continue the same one, which then needs no lookup. Forgotten on any other event.
    current: Option<Current>,
    /// Reopening an ended message is reported: the run is held to a version before 1.0 (from
    /// 1.0 a closed message is closed, not sealed).
    reopen_reported: bool,
}

/// What a START said, for a reopening START to agree with (its kind, and up to two fields).
#[derive(Clone, PartialEq, Eq)]
struct StartedAs {
    kind: Kind,
    fields: [Option<String>; 2],
}

impl StartedAs {
    /// The fields a reopening START of `kind` must repeat.
    fn names(kind: Kind) -> &'static [&'static str] {
        match kind {
            Kind::Text => &["name"],
            Kind::Tool => &["toolCallName", "parentMessageId"],
            Kind::Span | Kind::Reasoning => &[],
        }
    }

    /// What a reopening START says otherwise than this first one, field by field (its name,
    /// what the first said, what it says): a field it leaves out keeps the established value
    /// (a chunk that continues a message names less).
    fn changes<'s>(
        &'s self,
        now: &'s StartedAs,
    ) -> impl Iterator<Item = (&'static str, &'s Option<String>, &'s Option<String>)> {
        StartedAs::names(self.kind)
            .iter()
            .zip(self.fields.iter().zip(&now.fields))
            .filter(|(_, (was, is))| is.is_some() && was != is)
            .map(|(name, (was, is))| (*name, was, is))
    }

    fn of(kind: Kind, ev: &Ev<'_>) -> StartedAs {
        let mut fields = [None, None];
        for (slot, name) in fields.iter_mut().zip(StartedAs::names(kind)) {
            *slot = ev.str(name).map(str::to_owned);
        }
        StartedAs { kind, fields }
    }
}

struct Current {
    kind: Kind,
    id: String,
    owner: Option<OwnerKey>,
}

impl Pairing {
    /// The protocol version the run is held to.
    pub fn set_version(&mut self, version: Version) {
        self.reopen_reported = version < Version::V1_0;
    }

    /// A new run: per-run state starts afresh (ids ended in earlier runs are remembered).
    pub fn new_run(&mut self) {
        self.close_all();
        self.closed_subagents.clear();
        self.unannounced.clear();
        self.adopted.clear();
        self.owners = Owners::default();
    }

    /// The run ended: everything open is considered closed (already reported).
    pub fn close_all(&mut self) {
        self.text.clear();
        self.tools.clear();
        self.spans.clear();
        self.reasoning.clear();
        self.steps.clear();
        self.subagents.clear();
    }

    /// What is open, in the order it was opened, for "still open" reports.
    pub fn open_items(&self) -> Vec<String> {
        let mut items: Vec<(u64, String)> = Vec::new();
        let maps: [(&HashMap<String, Open, FastBuild>, &str); 5] = [
            (&self.text, "text message"),
            (&self.tools, "tool call"),
            (&self.spans, "reasoning span"),
            (&self.reasoning, "reasoning message"),
            (&self.subagents, "subagent"),
        ];
        for (map, noun) in maps {
            for (id, open) in map {
                items.push((open.line, format!("{noun} \"{id}\" (line {})", open.line)));
            }
        }
        for ((owner, name), open) in &self.steps {
            let whose = owner
                .as_ref()
                .map(|o| format!(" of subagent \"{o}\""))
                .unwrap_or_default();
            items.push((
                open.line,
                format!("step \"{name}\"{whose} (line {})", open.line),
            ));
        }
        items.sort();
        items.into_iter().map(|(_, item)| item).collect()
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        use EventType::*;
        if !matches!(
            ev.ty,
            TextMessageContent | ToolCallArgs | ReasoningMessageContent
        ) {
            self.current = None;
        }
        if let Some(owner) = ev.owner()
            && !matches!(ev.ty, SubagentStarted | SubagentFinished | SubagentError)
            && self.unannounced.len() < UNANNOUNCED_KEPT
            && !self.subagents.contains_key(owner)
            && !self.closed_subagents.contains(owner)
            && !self.unannounced.contains_key(owner)
        {
            self.unannounced.insert(owner.to_owned(), ev.loc.line);
        }
        match ev.ty {
            TextMessageStart => self.start(Kind::Text, ev, out),
            TextMessageContent => {
                self.empty_delta(ev, out);
                self.continue_or_end(Kind::Text, ev, false, adopting, out)
            }
            TextMessageEnd => self.continue_or_end(Kind::Text, ev, true, adopting, out),
            ToolCallStart => self.tool_call_start(ev, out),
            ToolCallArgs => self.continue_or_end(Kind::Tool, ev, false, adopting, out),
            ToolCallEnd => self.continue_or_end(Kind::Tool, ev, true, adopting, out),
            ReasoningStart => self.start(Kind::Span, ev, out),
            ReasoningEnd => self.continue_or_end(Kind::Span, ev, true, adopting, out),
            ReasoningMessageStart => self.start(Kind::Reasoning, ev, out),
            ReasoningMessageContent => {
                self.empty_delta(ev, out);
                self.continue_or_end(Kind::Reasoning, ev, false, adopting, out)
            }
            ReasoningMessageEnd => self.continue_or_end(Kind::Reasoning, ev, true, adopting, out),
            ReasoningEncryptedValue => self.encrypted_value(ev, out),
            StepStarted => self.step_started(ev, out),
            StepFinished => self.step_finished(ev, adopting, out),
            SubagentStarted => self.subagent_started(ev, out),
            SubagentFinished | SubagentError => self.subagent_ended(ev, adopting, out),
            ActivitySnapshot => {
                if let Some(id) = ev.str("messageId") {
                    let replaces = ev.get("replace") != Some(&Value::Bool(false));
                    if self.owners.activity.get(id).is_none() || replaces {
                        self.owners.activity.insert(id, owned(ev.owner()));
                    }
                }
            }
            ActivityDelta => {
                if let Some(id) = ev.str("messageId") {
                    let owner = self.owners.activity.get(id).cloned();
                    attribution(ev, owner.as_ref(), "activity", id, out);
                }
            }
            ToolCallResult => {
                if let Some(id) = ev.str("messageId") {
                    self.owners.message.insert(id, owned(ev.owner()));
                }
            }
            MessagesSnapshot => self.seed_owners(ev.get("messages"), true),
            RunStarted => self.seed_owners(ev.get("input").and_then(|i| i.get("messages")), false),
            _ => {}
        }
    }

    fn open_map(&mut self, kind: Kind) -> &mut HashMap<String, Open, FastBuild> {
        match kind {
            Kind::Text => &mut self.text,
            Kind::Tool => &mut self.tools,
            Kind::Span => &mut self.spans,
            Kind::Reasoning => &mut self.reasoning,
        }
    }

    fn owner_map(&mut self, kind: Kind) -> &mut IdMap<(OwnerKey, Option<String>)> {
        match kind {
            Kind::Text => &mut self.owners.message,
            Kind::Tool => &mut self.owners.tool,
            Kind::Span | Kind::Reasoning => &mut self.owners.reasoning,
        }
    }

    fn ended_map(&mut self, kind: Kind) -> Option<&mut IdMap<u64>> {
        match kind {
            Kind::Text => Some(&mut self.ended_text),
            Kind::Reasoning => Some(&mut self.ended_reasoning),
            Kind::Tool => Some(&mut self.ended_tools),
            Kind::Span => None,
        }
    }

    fn start(&mut self, kind: Kind, ev: &Ev<'_>, out: &mut Out<'_>) {
        let Some(id) = ev.str(kind.id_field()) else {
            return;
        };
        if let Some(open) = self.open_map(kind).get(id) {
            let line = open.line;
            out.report(
                kind.rule(),
                ev.loc,
                format!(
                    "second {} for {} \"{id}\", which is still open (started at line {line})",
                    kind.start(),
                    kind.noun()
                ),
                &format!(
                    "end it with {} first, or use a new {}",
                    kind.end(),
                    kind.id_field()
                ),
            );
            return;
        }
        let existing = self.owner_map(kind).get(id).cloned();
        if existing.is_some() {
            attribution(ev, existing.as_ref(), kind.noun(), id, out);
        }
        if matches!(kind, Kind::Text | Kind::Tool) {
            let now = StartedAs::of(kind, ev);
            match self.started_as.get(id) {
                Some(first)
                    if first.kind == kind
                        && first.changes(&now).next().is_some()
                        && !self.reopen_reported =>
                {
                    disagreeing_reopen(id, first, &now, ev, out);
                }
                Some(first) if first.kind == kind => {}
                _ => {
                    self.started_as.insert(id, now);
                }
            }
        }
        if kind != Kind::Tool && self.reopen_reported {
            if let Some(ended) = self.ended_map(kind).and_then(|m| m.get(id).copied()) {
                out.report(
                    RuleId::PairingMessageIdReused,
                    ev.loc,
                    format!(
                        "{} reuses the id of {} \"{id}\", which ended at line {ended}",
                        kind.start(),
                        kind.noun()
                    ),
                    "clients append the new content to the old message; use a new messageId",
                );
            }
        }
        self.open_map(kind)
            .insert(id.to_owned(), Open { line: ev.loc.line });
        if existing.is_none() {
            self.owner_map(kind).insert(id, owned(ev.owner()));
        }
    }

    fn continue_or_end(
        &mut self,
        kind: Kind,
        ev: &Ev<'_>,
        ends: bool,
        adopting: bool,
        out: &mut Out<'_>,
    ) {
        let Some(id) = ev.str(kind.id_field()) else {
            // The schema rules report the missing id. An END that lacks it most likely meant
            // the one entity of its kind that is open: close that, rather than report it
            // again as still open when the run ends.
            let map = self.open_map(kind);
            if ends && map.len() == 1 {
                map.clear();
            }
            return;
        };
        if !ends && self.continues_current(kind, id, ev.owner()) {
            return;
        }
        if self.open_map(kind).contains_key(id) {
            let owner = self.owner_map(kind).get(id).cloned();
            attribution(ev, owner.as_ref(), kind.noun(), id, out);
            if !ends {
                self.remember_current(kind, id, owner.map(|o| o.0));
            }
            if ends {
                self.open_map(kind).remove(id);
                if let Some(ended) = self.ended_map(kind) {
                    ended.insert(id, ev.loc.line);
                }
            }
            return;
        }
        let key = (kind as u8, id.to_owned());
        if self.adopted.contains(&key) {
            if ends {
                self.adopted.remove(&key);
                if let Some(ended) = self.ended_map(kind) {
                    ended.insert(id, ev.loc.line);
                }
            }
            return;
        }
        if !adopting {
            let ended = self.ended_map(kind).and_then(|m| m.get(id).copied());
            let why = match ended {
                Some(line) => format!("which already ended at line {line}"),
                None => "which was never started".to_owned(),
            };
            out.report(
                kind.rule(),
                ev.loc,
                format!("{} for {} \"{id}\", {why}", ev.ty, kind.noun()),
                &format!(
                    "send {} first, or check the {}",
                    kind.start(),
                    kind.id_field()
                ),
            );
        }
        if ends {
            if let Some(ended) = self.ended_map(kind) {
                ended.insert(id, ev.loc.line);
            }
        } else {
            self.adopted.insert(key);
        }
        if self.owner_map(kind).get(id).is_none() {
            self.owner_map(kind).insert(id, owned(ev.owner()));
        }
    }

    /// The event continues the entity the previous content event continued, and is attributed
    /// like it: nothing to look up or report.
    fn continues_current(&self, kind: Kind, id: &str, tag: Option<&str>) -> bool {
        let Some(current) = &self.current else {
            return false;
        };
        current.kind == kind
            && current.id == id
            && match (tag, current.owner) {
                (Some(tag), Some(owner)) => owner == owner_key(Some(tag)),
                _ => true,
            }
    }

    fn remember_current(&mut self, kind: Kind, id: &str, owner: Option<OwnerKey>) {
        let current = self.current.get_or_insert_with(|| Current {
            kind,
            id: String::new(),
            owner,
        });
        current.kind = kind;
        current.id.clear();
        current.id.push_str(id);
        current.owner = owner;
    }

    fn empty_delta(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        if !out.wants(RuleId::PairingEmptyDelta) {
            return;
        }
        // For an event expanded from a chunk, only a chunk that sent "" counts.
        let sent = if ev.synthetic {
            ev.origin.str("delta")
        } else {
            ev.str("delta")
        };
        if sent == Some("") {
            out.report_about(
                RuleId::PairingEmptyDelta,
                ev.loc,
                ev.ty.as_str(),
                format!("{} with an empty delta", ev.ty),
                "1.0 allows empty deltas as keep-alives; the docs ask for non-empty ones",
            );
        }
    }

    fn tool_call_start(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let Some(id) = ev.str("toolCallId") else {
            return;
        };
        // A tool call belongs to the message that carries it.
        let inherited = ev.str("parentMessageId").and_then(|parent| {
            self.owners
                .message
                .get(parent)
                .cloned()
                .map(|o| (parent, o))
        });
        if let (Some((parent, parent_owner)), Some(tag)) = (&inherited, ev.owner()) {
            if parent_owner.0 != owner_key(Some(tag)) && !self.tools.contains_key(id) {
                out.report(
                    RuleId::PairingAttributionMismatch,
                    ev.loc,
                    format!(
                        "TOOL_CALL_START is attributed to subagent \"{tag}\", but its parent message \"{parent}\" belongs to {}",
                        owner_name(parent_owner.1.as_deref())
                    ),
                    "a tool call belongs to the message that carries it; tag it like its message",
                );
                self.start(Kind::Tool, ev, out);
                return;
            }
        }
        let existing = self.owners.tool.get(id).cloned();
        if let (Some(existing), None, Some((parent, parent_owner))) =
            (&existing, ev.owner(), &inherited)
        {
            if existing.0 != parent_owner.0 && !self.tools.contains_key(id) {
                out.report(
                    RuleId::PairingAttributionMismatch,
                    ev.loc,
                    format!(
                        "tool call \"{id}\" belongs to {}, but its parent message \"{parent}\" belongs to {}",
                        owner_name(existing.1.as_deref()),
                        owner_name(parent_owner.1.as_deref())
                    ),
                    "a tool call belongs to the message that carries it",
                );
            }
        }
        let was_open = self.tools.contains_key(id);
        self.start(Kind::Tool, ev, out);
        if !was_open && existing.is_none() && ev.owner().is_none() {
            if let Some((_, parent_owner)) = inherited {
                self.owners.tool.insert(id, parent_owner);
            }
        }
    }

    fn encrypted_value(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let Some(id) = ev.str("entityId") else {
            return;
        };
        let (owner, noun) = match ev.str("subtype") {
            Some("tool-call") => (self.owners.tool.get(id).cloned(), "tool call"),
            Some("message") => (
                self.owners
                    .message
                    .get(id)
                    .or_else(|| self.owners.reasoning.get(id))
                    .cloned(),
                "message",
            ),
            _ => (self.owners.reasoning.get(id).cloned(), "reasoning message"),
        };
        attribution(ev, owner.as_ref(), noun, id, out);
    }

    fn step_started(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let Some(name) = ev.str("stepName") else {
            return;
        };
        let key = (ev.owner().map(str::to_owned), name.to_owned());
        if let Some(open) = self.steps.get(&key) {
            out.report(
                RuleId::PairingStep,
                ev.loc,
                format!(
                    "STEP_STARTED for step \"{name}\"{}, which is already active (started at line {})",
                    of_owner(ev.owner()),
                    open.line
                ),
                "finish the step before starting it again, or give the inner step its own name",
            );
            return;
        }
        self.steps.insert(key, Open { line: ev.loc.line });
    }

    fn step_finished(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        let Some(name) = ev.str("stepName") else {
            return;
        };
        let key = (ev.owner().map(str::to_owned), name.to_owned());
        if self.steps.remove(&key).is_some() || adopting {
            return;
        }
        let other = self
            .steps
            .keys()
            .find(|(owner, n)| n == name && owner.as_deref() != ev.owner())
            .map(|(owner, _)| owner.clone());
        match other {
            Some(other) => out.report(
                RuleId::PairingStep,
                ev.loc,
                format!(
                    "STEP_FINISHED for step \"{name}\" is attributed to {}, but that step is open under {}",
                    owner_name(ev.owner()),
                    owner_name(other.as_deref())
                ),
                "a step is finished by whoever started it: tag STEP_FINISHED like its STEP_STARTED",
            ),
            None => out.report(
                RuleId::PairingStep,
                ev.loc,
                format!("STEP_FINISHED for step \"{name}\"{}, which was not started", of_owner(ev.owner())),
                "send STEP_STARTED with the same stepName first",
            ),
        }
    }

    fn subagent_started(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let Some(id) = ev.str("subagentRunId") else {
            return;
        };
        if let Some(open) = self.subagents.get(id) {
            let line = open.line;
            out.report(
                RuleId::PairingSubagent,
                ev.loc,
                format!("SUBAGENT_STARTED for subagent \"{id}\", which is already active (started at line {line})"),
                "finish it with SUBAGENT_FINISHED or SUBAGENT_ERROR first",
            );
            return;
        }
        if let Some(line) = self.unannounced.remove(id) {
            out.report(
                RuleId::PairingSubagent,
                ev.loc,
                format!(
                    "SUBAGENT_STARTED for subagent \"{id}\" comes after events attributed to it \
                     (the first at line {line})"
                ),
                "announce an invocation before any event attributed to it (or not at all: \
                 attribution alone is allowed)",
            );
        }
        if self.closed_subagents.contains(id) {
            out.report(
                RuleId::PairingSubagent,
                ev.loc,
                format!(
                    "SUBAGENT_STARTED for subagent \"{id}\", which already finished in this run"
                ),
                "a subagentRunId names one invocation; a new delegation needs a new id",
            );
        }
        if let Some(parent) = ev.str("parentSubagentRunId") {
            if !self.subagents.contains_key(parent) && !self.closed_subagents.contains(parent) {
                out.report(
                    RuleId::PairingSubagent,
                    ev.loc,
                    format!(
                        "parentSubagentRunId \"{parent}\" names no subagent started in this run"
                    ),
                    "start the parent subagent first, or check the id",
                );
            }
        }
        self.subagents
            .insert(id.to_owned(), Open { line: ev.loc.line });
    }

    fn subagent_ended(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        let Some(id) = ev.str("subagentRunId") else {
            return;
        };
        if self.subagents.remove(id).is_none() && !adopting {
            let why = if self.closed_subagents.contains(id) {
                "which already ended"
            } else {
                "which was never started"
            };
            out.report(
                RuleId::PairingSubagent,
                ev.loc,
                format!("{} for subagent \"{id}\", {why}", ev.ty),
                "send SUBAGENT_STARTED first, or check the subagentRunId",
            );
        }
        self.closed_subagents.insert(id.to_owned());
    }

    /// Replayed history (MESSAGES_SNAPSHOT, RUN_STARTED.input) names owners too. A snapshot
    /// restates the conversation and replaces recorded owners; the input only fills gaps.
    fn seed_owners(&mut self, messages: Option<&Value>, authoritative: bool) {
        let Some(Value::Array(messages)) = messages else {
            return;
        };
        for message in messages {
            let Some(id) = message.get("id").and_then(Value::as_str) else {
                continue;
            };
            let owner = message.get("subagentRunId").and_then(Value::as_str);
            let bucket = match message.get("role").and_then(Value::as_str) {
                Some("reasoning") => &mut self.owners.reasoning,
                Some("activity") => &mut self.owners.activity,
                _ => &mut self.owners.message,
            };
            if authoritative || bucket.get(id).is_none() {
                bucket.insert(id, owned(owner));
            }
            for call_id in declared_call_ids(message.get("toolCalls")) {
                if authoritative || self.owners.tool.get(call_id).is_none() {
                    self.owners.tool.insert(call_id, owned(owner));
                }
            }
        }
    }
}

/// Whether a finding is of a reopening START that disagrees with the one that opened (see
/// `disagreeing_reopen`): the spec's rule, which the official client does not hold a stream
/// to (it reads on, and the reopened call or message keeps what the reopening says).
pub fn is_disagreeing_reopen(d: &crate::check::diagnostic::Diagnostic) -> bool {
    matches!(d.rule, RuleId::PairingTextMessage | RuleId::PairingToolCall)
        && d.message.contains(REOPENS)
}

/// What the finding of a disagreeing reopen says, and [`is_disagreeing_reopen`] knows it by.
const REOPENS: &str = " reopens ";

/// A START (1.0 and later) that reopens a message or tool call but disagrees with the one
/// that opened it (`first`): a call must keep its toolCallName and parentMessageId, a message
/// its name.
fn disagreeing_reopen(
    id: &str,
    first: &StartedAs,
    now: &StartedAs,
    ev: &Ev<'_>,
    out: &mut Out<'_>,
) {
    let kind = first.kind;
    let shown = |v: &Option<String>| match v {
        Some(v) => format!("\"{v}\""),
        None => "none".to_owned(),
    };
    let changed: Vec<String> = first
        .changes(now)
        .map(|(name, was, is)| format!("{name} {} where it opened with {}", shown(is), shown(was)))
        .collect();
    out.report(
        kind.rule(),
        ev.loc,
        format!(
            "{}{REOPENS}{} \"{id}\" with {}",
            kind.start(),
            kind.noun(),
            changed.join(", ")
        ),
        &format!(
            "a reopening {} repeats what the first said; another {} is another {}",
            kind.start(),
            kind.noun(),
            kind.id_field()
        ),
    );
}

fn owned(owner: Option<&str>) -> (OwnerKey, Option<String>) {
    (owner_key(owner), owner.map(str::to_owned))
}

fn of_owner(owner: Option<&str>) -> String {
    owner
        .map(|o| format!(" of subagent \"{o}\""))
        .unwrap_or_default()
}

/// A continuation's tag must agree with its opener's (an absent tag always agrees).
fn attribution(
    ev: &Ev<'_>,
    owner: Option<&(OwnerKey, Option<String>)>,
    noun: &str,
    id: &str,
    out: &mut Out<'_>,
) {
    let (Some(tag), Some(owner)) = (ev.owner(), owner) else {
        return;
    };
    if owner.0 != owner_key(Some(tag)) {
        out.report(
            RuleId::PairingAttributionMismatch,
            ev.loc,
            format!(
                "{} is attributed to subagent \"{tag}\", but {noun} \"{id}\" was opened by {}",
                ev.ty,
                owner_name(owner.1.as_deref())
            ),
            "continue an entity with its opener's subagentRunId, or leave the tag out",
        );
    }
}
