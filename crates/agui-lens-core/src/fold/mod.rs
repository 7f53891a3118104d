//! Fold: what a client ends with after applying a stream — its messages and state — with the
//! semantics of the official reducer (chunk expansion, then `defaultApplyEvents`), in time
//! linear in the stream: messages are found through id indexes, never by scanning, and nothing
//! is copied per event.
//!
//! ```
//! use agui_lens_core::check::stream::for_each_event;
//! use agui_lens_core::fold::Folder;
//! use agui_lens_core::read::{InputSpec, ReadOptions};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/valid/agui-sdk-full.jsonl");
//! let mut folder = Folder::new(256 << 20);
//! for_each_event(&InputSpec::File(path.into()), &ReadOptions::default(), |event, _raw| {
//!     folder.apply(event);
//!     Ok(())
//! })?;
//! let folded = folder.finish();
//! assert_eq!(folded.messages.len(), 6);
//! assert_eq!(folded.state.unwrap()["weather"]["city"], "Paris");
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod next;
pub mod threads;

/// What the tests of the next turn share: the fold of a run's events from the messages and
/// state its input sent.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value;

    use super::{Folded, Folder};
    use crate::protocol::event::{Event, Location};

    pub fn fold_from_input(input: &Value, events: &[Value]) -> Folded {
        let history: Vec<Value> = input["messages"].as_array().cloned().unwrap_or_default();
        let mut folder = Folder::new(usize::MAX)
            .with_state(input.get("state").cloned())
            .with_messages(&history);
        for (i, value) in events.iter().enumerate() {
            folder.apply(&event_at(i, value));
        }
        folder.finish()
    }

    /// The `i`th event of a stream, read whole.
    pub fn event_at(i: usize, value: &Value) -> Event {
        let loc = Location {
            path: "t".into(),
            line: i as u64 + 1,
            offset: 0,
            index: i as u64,
        };
        Event::from_value(loc, value.clone())
    }
}

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::protocol::chunks::{ChunkExpander, Piece};
use crate::protocol::event::{Event, EventType, RawPatch};
use crate::protocol::ids::{FastBuild, declared_call_ids};
use crate::protocol::patch;

/// One run as the fold saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunRecord {
    pub thread_id: Option<String>,
    pub run_id: Option<String>,
    pub parent_run_id: Option<String>,
    /// `finished`, `error`, or `open` (the stream ended inside the run).
    pub status: &'static str,
    pub outcome: Option<Value>,
    /// What a finished run returned (`RUN_FINISHED.result`: what the official client's
    /// `runAgent()` resolves with).
    pub result: Option<Value>,
    pub error: Option<Value>,
    pub usage: Option<Value>,
    /// Tool calls a successful run left for the client to answer.
    pub pending_tool_calls: Vec<Value>,
}

/// Folds the events of one thread.
pub struct Folder {
    expander: ChunkExpander,
    pieces: Vec<Piece>,
    messages: Vec<Map<String, Value>>,
    /// Messages before this position are where they were at the last
    /// [`Folder::sync_outlines`]: an insertion or a snapshot's merge lowers it. Messages pushed
    /// at the end need not: the outlines are extended from their own end.
    moved_from: usize,
    /// Positions before `moved_from` of messages changed in place since then (each once, as
    /// `touched_mark` tells): every change goes through [`Folder::message_mut`].
    touched: Vec<usize>,
    touched_mark: Vec<bool>,
    /// The key of the message at each position: the indexes name messages by key, so that a
    /// message inserted in the middle moves the messages after it in [`Folder::pos`] alone,
    /// not in the indexes (a shift of plain numbers rather than a lookup per message).
    keys: Vec<u32>,
    /// Key → the position of its message (stale for a key no message has any more).
    pos: Vec<u32>,
    /// Message id → key of its first occurrence.
    index: HashMap<String, u32, FastBuild>,
    /// Tool call id → key of the first message whose `toolCalls` holds it, and where in that
    /// list the call was last found (see [`CallOwner`]).
    tool_owner: HashMap<String, CallOwner, FastBuild>,
    /// Whether two messages may share an id, or two messages hold one tool call: the indexes
    /// are then rebuilt after a snapshot instead of remapped (see [`Folder::messages_snapshot`]).
    shared_ids: bool,
    shared_calls: bool,
    /// For each kind of message ([`OTHER`], [`REASONING`], [`ACTIVITY`]), a position no
    /// message of that kind comes before ([`NONE`] if there is none).
    first: [usize; 3],
    /// Where the last tool result placed after its assistant went: `(owner, end)` says every
    /// message from `owner + 1` up to `end` is a tool message, so the next result for `owner`
    /// is placed from `end` on without walking the results before it (a thread whose runs
    /// answer the same tool call ids again piles them after one assistant). Forgotten at every
    /// change that may move or remove a message, or change its role.
    tool_run: Option<(usize, usize)>,
    /// Merge every snapshot over the whole history and rebuild the indexes, and walk every
    /// tool result to its place (for tests).
    no_shortcuts: bool,
    state: Option<Value>,
    /// The state was set by something that says what it is (a snapshot, the first run's
    /// input, the baseline given): not only by deltas patching the `{}` assumed before it.
    state_known: bool,
    state_size: usize,
    state_limit: usize,
    /// Activity message id → the estimated size of its content, as its last delta left it
    /// (forgotten when a snapshot sets the content): measuring it again at every delta made a
    /// long activity quadratic.
    activity_sizes: HashMap<String, usize, FastBuild>,
    /// Whether the last STATE_DELTA applied.
    delta_applied: bool,
    /// Whether any event was applied yet: the first event's RUN_STARTED.input.state is where
    /// the reducer starts.
    seen_event: bool,
    run_tool_calls: Vec<String>,
    run_tool_call_set: HashSet<String, FastBuild>,
    answered: HashSet<String, FastBuild>,
    runs: Vec<RunRecord>,
    pending_interrupts: Vec<Value>,
    /// An event read with a stand-in for half a UTF-16 pair was applied.
    halves: bool,
    /// The event being applied was read so: its text may finish a pair the text before it
    /// began. Text of any other event is appended as it is (a private-use character it
    /// holds as text is no half of anything).
    joining: bool,
}

/// The message that holds a tool call (by key), and the place in its `toolCalls` where the
/// call was last found ([`CallOwner::UNKNOWN`] until it is looked for).
#[derive(Clone, Copy, Debug)]
struct CallOwner {
    key: u32,
    slot: u32,
}

impl CallOwner {
    const UNKNOWN: u32 = u32::MAX;
}

impl Folder {
    pub fn new(state_limit: usize) -> Self {
        Folder {
            expander: ChunkExpander::new(),
            pieces: Vec::new(),
            messages: Vec::new(),
            moved_from: 0,
            touched: Vec::new(),
            touched_mark: Vec::new(),
            keys: Vec::new(),
            pos: Vec::new(),
            index: HashMap::default(),
            tool_owner: HashMap::default(),
            shared_ids: false,
            shared_calls: false,
            first: [NONE; 3],
            tool_run: None,
            no_shortcuts: false,
            state: None,
            state_known: false,
            state_size: 0,
            state_limit,
            activity_sizes: HashMap::default(),
            delta_applied: false,
            seen_event: false,
            run_tool_calls: Vec::new(),
            run_tool_call_set: HashSet::default(),
            answered: HashSet::default(),
            runs: Vec::new(),
            pending_interrupts: Vec::new(),
            halves: false,
            joining: false,
        }
    }

    /// A folder that merges every snapshot over the whole history and rebuilds its indexes,
    /// as a reference for the shortcut taken otherwise. For tests.
    #[doc(hidden)]
    pub fn without_shortcuts(mut self) -> Self {
        self.no_shortcuts = true;
        self
    }

    /// Whether the indexes hold what rebuilding them from the messages would give, and each
    /// kind's first position is a lower bound. For tests.
    #[doc(hidden)]
    pub fn indexes_hold(&self) -> bool {
        let mut fresh = Folder::new(0);
        for message in &self.messages {
            fresh.push(message.clone());
        }
        let bounds = (0..3).all(|kind| self.first[kind] <= fresh.first[kind]);
        // A shared id or call may be remembered after it went away; never forgotten.
        let flags =
            (fresh.shared_ids <= self.shared_ids) && (fresh.shared_calls <= self.shared_calls);
        let keys = self.keys.len() == self.messages.len()
            && self
                .keys
                .iter()
                .enumerate()
                .all(|(at, &k)| self.at(k) == at);
        let positions = |folder: &Folder, index: &mut dyn Iterator<Item = (&String, u32)>| {
            index
                .map(|(id, k)| (id.clone(), folder.at(k)))
                .collect::<HashMap<String, usize>>()
        };
        let messages =
            |folder: &Folder| positions(folder, &mut folder.index.iter().map(|(id, &k)| (id, k)));
        let calls = |folder: &Folder| {
            positions(
                folder,
                &mut folder.tool_owner.iter().map(|(id, o)| (id, o.key)),
            )
        };
        keys && messages(&fresh) == messages(self)
            && calls(&fresh) == calls(self)
            && bounds
            && flags
    }

    /// Applies one event as read (chunks are expanded here).
    pub fn apply(&mut self, event: &Event) {
        let Some(ty) = event.kind else {
            return;
        };
        self.halves |= event.halves;
        self.joining = event.halves;
        let mut pieces = std::mem::take(&mut self.pieces);
        // A chunk that cannot be expanded is dropped, as the official client stops there.
        let _ = self.expander.expand(Some(ty), &event.value, &mut pieces);
        for piece in &pieces {
            match piece {
                Piece::Original => {
                    self.apply_expanded_patched(ty, &event.value, event.patch.as_deref())
                }
                Piece::Synthetic(value) => {
                    let ty = EventType::of(value).unwrap_or(ty);
                    self.apply_expanded(ty, value);
                }
            }
        }
        self.pieces = pieces;
    }

    /// Applies one event after chunk expansion.
    pub fn apply_expanded(&mut self, ty: EventType, ev: &Value) {
        self.apply_expanded_patched(ty, ev, None);
    }

    /// Says whether the event given to [`Folder::apply_expanded`] next was read with
    /// stand-ins for halves of UTF-16 pairs ([`Event::halves`]), as [`Folder::apply`] learns
    /// it from the event.
    pub fn set_halves(&mut self, halves: bool) {
        self.halves |= halves;
        self.joining = halves;
    }

    /// [`Folder::apply_expanded`] for an event whose large patch was read as text
    /// (see [`crate::protocol::event::Event::patch`]).
    pub fn apply_expanded_patched(&mut self, ty: EventType, ev: &Value, raw: Option<&RawPatch>) {
        use EventType::*;
        let first = !self.seen_event;
        self.seen_event = true;
        if first && ty == RunStarted {
            // The client that sent this run's input started from its state.
            let state = ev
                .get("input")
                .and_then(|i| i.get("state"))
                .filter(|s| !s.is_null());
            if let Some(state) = state {
                self.state_size = patch::estimated_size(state, usize::MAX);
                self.state = Some(state.clone());
                self.state_known = true;
            }
        }
        match ty {
            TextMessageStart => self.message_start(ev, "assistant"),
            TextMessageContent | ReasoningMessageContent => self.message_content(ev),
            TextMessageEnd | ReasoningMessageEnd => self.message_end(ev),
            ReasoningMessageStart => self.message_start(ev, "reasoning"),
            ToolCallStart => self.tool_call_start(ev),
            ToolCallArgs => self.tool_call_args(ev),
            ToolCallEnd => {
                if let Some(call) = self.tool_call_mut(str_of(ev, "toolCallId")) {
                    merge_metadata(call, ev);
                }
            }
            ToolCallResult => self.tool_call_result(ev),
            StateSnapshot => {
                // An absent snapshot is `undefined`, which the reducer does not emit as state.
                if let Some(snapshot) = ev.get("snapshot") {
                    self.state_size = patch::estimated_size(snapshot, usize::MAX);
                    self.state = Some(snapshot.clone());
                    self.state_known = true;
                }
            }
            StateDelta => self.state_delta(ev, raw),
            MessagesSnapshot => self.messages_snapshot(ev),
            ActivitySnapshot => self.activity_snapshot(ev),
            ActivityDelta => self.activity_delta(ev, raw),
            RunStarted => self.run_started(ev),
            RunFinished => self.run_finished(ev),
            RunError => {
                // A RUN_ERROR after the run's RUN_FINISHED (and before another run) is a late
                // failure: a client treats the run as failed.
                let run = self
                    .runs
                    .last_mut()
                    .filter(|r| r.status == "open" || r.status == "finished");
                if let Some(run) = run {
                    let late = run.status == "finished";
                    run.status = "error";
                    let mut error = Map::new();
                    for key in ["message", "code"] {
                        if let Some(v) = ev.get(key) {
                            error.insert(key.into(), v.clone());
                        }
                    }
                    run.error = Some(Value::Object(error));
                    if late {
                        run.outcome = None;
                        run.pending_tool_calls.clear();
                        if let Some(usage) = ev.get("usage") {
                            run.usage = Some(usage.clone());
                        }
                    } else {
                        run.usage = ev.get("usage").cloned();
                    }
                }
            }
            ReasoningEncryptedValue => self.encrypted_value(ev),
            _ => {}
        }
    }

    fn find(&self, id: Option<&str>) -> Option<usize> {
        id.and_then(|id| self.index.get(id)).map(|&k| self.at(k))
    }

    /// The position of the message with a key.
    fn at(&self, key: u32) -> usize {
        self.pos[key as usize] as usize
    }

    /// A key for a message about to be placed at a position.
    fn new_key(&mut self, at: usize) -> u32 {
        let key = self.pos.len() as u32;
        self.pos.push(at as u32);
        key
    }

    /// Numbers the keys after the positions again, once most keys are of messages that went
    /// away: every snapshot merge gives the messages it places new keys.
    fn renumber_keys(&mut self) {
        let calls = self.tool_owner.values_mut().map(|owner| &mut owner.key);
        for key in self.index.values_mut().chain(calls) {
            *key = self.pos[*key as usize];
        }
        self.keys = (0..self.messages.len() as u32).collect();
        self.pos = self.keys.clone();
    }

    /// A message to change: every change to one goes through here.
    fn message_mut(&mut self, at: usize) -> &mut Map<String, Value> {
        if at < self.moved_from && !self.touched_mark[at] {
            self.touched_mark[at] = true;
            self.touched.push(at);
        }
        &mut self.messages[at]
    }

    fn push(&mut self, message: Map<String, Value>) -> usize {
        let at = self.messages.len();
        let key = self.new_key(at);
        self.keys.push(key);
        self.index_message(&message, at);
        self.messages.push(message);
        at
    }

    /// Records a message at a position (whose key is set): its id, its tool calls and its
    /// kind.
    fn index_message(&mut self, message: &Map<String, Value>, at: usize) {
        if let Some(id) = id_of(message) {
            self.index_id(id, at);
        }
        self.index_calls(message, at);
        let first = &mut self.first[kind_of(message)];
        *first = (*first).min(at);
    }

    /// Records a message id at a position (the first occurrence is the one found).
    fn index_id(&mut self, id: &str, at: usize) {
        let key = self.keys[at];
        match self.index.get_mut(id) {
            Some(slot) => {
                self.shared_ids = true;
                if self.pos[*slot as usize] as usize > at {
                    *slot = key;
                }
            }
            None => {
                self.index.insert(id.to_owned(), key);
            }
        }
    }

    /// Records the tool calls a message at a position holds.
    fn index_calls(&mut self, message: &Map<String, Value>, at: usize) {
        for call in calls_of(message) {
            self.index_call(call, at);
        }
    }

    fn index_call(&mut self, call: &str, at: usize) {
        let key = self.keys[at];
        match self.tool_owner.get_mut(call) {
            Some(owner) => {
                // Where the call stands in its list is looked for again.
                owner.slot = CallOwner::UNKNOWN;
                let first = self.pos[owner.key as usize] as usize;
                if first != at {
                    self.shared_calls = true;
                    if first > at {
                        owner.key = key;
                    }
                }
            }
            None => {
                self.tool_owner.insert(
                    call.to_owned(),
                    CallOwner {
                        key,
                        slot: CallOwner::UNKNOWN,
                    },
                );
            }
        }
    }

    fn is_activity(&self, at: usize) -> bool {
        role_of(&self.messages[at]) == Some("activity")
    }

    fn message_start(&mut self, ev: &Value, default_role: &str) {
        let id = str_of(ev, "messageId");
        let existing = self.find(id);
        if existing.is_some_and(|at| self.is_activity(at)) {
            return;
        }
        let at = match existing {
            Some(at) => at,
            None => {
                let mut message = Map::new();
                copy_field(&mut message, "id", ev, "messageId");
                let role = if default_role == "reasoning" {
                    Value::String("reasoning".into())
                } else {
                    ev.get("role")
                        .cloned()
                        .unwrap_or_else(|| default_role.into())
                };
                message.insert("role".into(), role);
                message.insert("content".into(), Value::String(String::new()));
                if default_role != "reasoning" {
                    if let Some(name) = ev.get("name") {
                        message.insert("name".into(), name.clone());
                    }
                }
                if let Some(owner) = ev.get("subagentRunId").filter(|v| !v.is_null()) {
                    message.insert("subagentRunId".into(), owner.clone());
                }
                self.push(message)
            }
        };
        merge_metadata(self.message_mut(at), ev);
    }

    fn message_content(&mut self, ev: &Value) {
        let delta = delta_text(ev);
        let join = self.joining;
        if let Some(message) = self.append_content(str_of(ev, "messageId"), &delta, join) {
            merge_metadata(message, ev);
        }
    }

    /// Appends to a message's text, joining halves of a UTF-16 pair when `join` (see
    /// [`Folder::joining`]); the message, if there is one to append to.
    fn append_content(
        &mut self,
        id: Option<&str>,
        delta: &str,
        join: bool,
    ) -> Option<&mut Map<String, Value>> {
        let at = self.find(id)?;
        if self.is_activity(at) {
            return None;
        }
        let message = self.message_mut(at);
        match message.get_mut("content") {
            Some(Value::String(content)) if join => crate::read::halves::append(content, delta),
            Some(Value::String(content)) => content.push_str(delta),
            _ => {
                message.insert("content".into(), Value::String(delta.to_owned()));
            }
        }
        Some(message)
    }

    /// Applies a plain content delta (TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT or
    /// TOOL_CALL_ARGS with a string delta and no metadata) read without building the event,
    /// exactly as [`Folder::apply`] would. Refused (`false`) while a chunk stream is open,
    /// which the event would close: then it must go through `apply`.
    pub fn apply_delta(&mut self, ty: EventType, id: &str, delta: &str) -> bool {
        if !self.take_delta() {
            return false;
        }
        self.append_taken(ty, id, delta);
        true
    }

    /// The first half of [`Folder::apply_delta`]: whether a plain content delta can be applied
    /// now (no chunk stream is open), marking the stream as begun if so. A caller may then
    /// hold the text of such deltas and apply it later with [`Folder::append_taken`].
    pub fn take_delta(&mut self) -> bool {
        if !self.expander.is_idle() {
            return false;
        }
        self.seen_event = true;
        true
    }

    /// The second half of [`Folder::apply_delta`]: appends the text of plain deltas taken
    /// with [`Folder::take_delta`] — several of them, concatenated, if nothing else was applied
    /// since the first of them: appending to a message's content or a call's arguments one
    /// delta at a time or all at once ends the same.
    pub fn append_taken(&mut self, ty: EventType, id: &str, text: &str) {
        match ty {
            EventType::ToolCallArgs => {
                self.append_args(Some(id), text, false);
            }
            _ => {
                self.append_content(Some(id), text, false);
            }
        }
    }

    fn message_end(&mut self, ev: &Value) {
        if let Some(at) = self.find(str_of(ev, "messageId")) {
            if !self.is_activity(at) {
                merge_metadata(self.message_mut(at), ev);
            }
        }
    }

    /// The first call of that id in its owner's `toolCalls`. Where it was found is kept, and
    /// looked at first the next time: a message that gathers calls run after run (one
    /// `parentMessageId` named by every run) made each of its calls' events a search of the
    /// whole list, and folding such a history quadratic.
    fn tool_call_mut(&mut self, id: Option<&str>) -> Option<&mut Map<String, Value>> {
        let id = id?;
        let owner = *self.tool_owner.get(id)?;
        let at = self.at(owner.key);
        let is_it = |call: &Value| call.get("id").and_then(Value::as_str) == Some(id);
        let calls = self.messages[at].get("toolCalls")?.as_array()?;
        let slot = match calls.get(owner.slot as usize) {
            Some(call) if is_it(call) => owner.slot as usize,
            _ => {
                let found = calls.iter().position(is_it)?;
                if let Some(owner) = self.tool_owner.get_mut(id) {
                    owner.slot = u32::try_from(found).unwrap_or(CallOwner::UNKNOWN);
                }
                found
            }
        };
        self.message_mut(at)
            .get_mut("toolCalls")?
            .as_array_mut()?
            .get_mut(slot)?
            .as_object_mut()
    }

    fn tool_call_start(&mut self, ev: &Value) {
        let Some(id) = str_of(ev, "toolCallId") else {
            return;
        };
        if self.run_tool_call_set.insert(id.to_owned()) {
            self.run_tool_calls.push(id.to_owned());
        }
        let name = ev.get("toolCallName").cloned();
        if let Some(call) = self.tool_call_mut(Some(id)) {
            if let Some(function) = call.get_mut("function").and_then(Value::as_object_mut) {
                if function.get("name") != name.as_ref() {
                    set_or_remove(function, "name", name.as_ref());
                }
            }
            merge_metadata(call, ev);
            return;
        }
        let parent = str_of(ev, "parentMessageId").filter(|p| !p.is_empty());
        let target = match parent {
            Some(parent) => match self.find(Some(parent)) {
                Some(at) if role_of(&self.messages[at]) == Some("assistant") => at,
                existing => {
                    let id = if existing.is_some() { id } else { parent };
                    self.new_assistant(id, ev)
                }
            },
            None => self.new_assistant(id, ev),
        };
        let mut function = Map::new();
        if let Some(name) = name {
            function.insert("name".into(), name);
        }
        function.insert("arguments".into(), Value::String(String::new()));
        let mut call = Map::new();
        call.insert("id".into(), Value::String(id.to_owned()));
        call.insert("type".into(), Value::String("function".into()));
        call.insert("function".into(), Value::Object(function));
        merge_metadata(&mut call, ev);
        // A call no message holds yet is the first of its id in the list it joins.
        let fresh = !self.tool_owner.contains_key(id);
        let message = self.message_mut(target);
        if !matches!(message.get("toolCalls"), Some(Value::Array(_))) {
            message.insert("toolCalls".into(), Value::Array(Vec::new()));
        }
        let mut slot = CallOwner::UNKNOWN;
        if let Some(Value::Array(calls)) = message.get_mut("toolCalls") {
            if fresh {
                slot = u32::try_from(calls.len()).unwrap_or(CallOwner::UNKNOWN);
            }
            calls.push(Value::Object(call));
        }
        self.index_call(id, target);
        if let Some(owner) = self.tool_owner.get_mut(id)
            && owner.key == self.keys[target]
        {
            owner.slot = slot;
        }
    }

    /// A new assistant message for a tool call, tagged with the call's subagent.
    fn new_assistant(&mut self, id: &str, ev: &Value) -> usize {
        let preexisting = self.index.contains_key(id);
        let mut message = Map::new();
        message.insert("id".into(), Value::String(id.to_owned()));
        message.insert("role".into(), Value::String("assistant".into()));
        message.insert("toolCalls".into(), Value::Array(Vec::new()));
        if !preexisting {
            if let Some(owner) = ev.get("subagentRunId").filter(|v| !v.is_null()) {
                message.insert("subagentRunId".into(), owner.clone());
            }
        }
        self.push(message)
    }

    fn tool_call_args(&mut self, ev: &Value) {
        let delta = delta_text(ev);
        let join = self.joining;
        if let Some(call) = self.append_args(str_of(ev, "toolCallId"), &delta, join) {
            merge_metadata(call, ev);
        }
    }

    /// Appends to a tool call's arguments; the tool call, if there is one.
    fn append_args(
        &mut self,
        id: Option<&str>,
        delta: &str,
        join: bool,
    ) -> Option<&mut Map<String, Value>> {
        let call = self.tool_call_mut(id)?;
        if let Some(Value::Object(function)) = call.get_mut("function") {
            match function.get_mut("arguments") {
                Some(Value::String(args)) if join => crate::read::halves::append(args, delta),
                Some(Value::String(args)) => args.push_str(delta),
                other => {
                    let before = js_string(other.as_deref());
                    function.insert("arguments".into(), Value::String(before + delta));
                }
            }
        }
        Some(call)
    }

    fn tool_call_result(&mut self, ev: &Value) {
        let call_id = str_of(ev, "toolCallId").unwrap_or_default().to_owned();
        self.answered.insert(call_id.clone());
        let mut message = Map::new();
        copy_field(&mut message, "id", ev, "messageId");
        copy_field(&mut message, "toolCallId", ev, "toolCallId");
        let role = ev
            .get("role")
            .filter(|r| js_truthy(r))
            .cloned()
            .unwrap_or_else(|| "tool".into());
        message.insert("role".into(), role);
        copy_field(&mut message, "content", ev, "content");
        if let Some(owner) = ev.get("subagentRunId").filter(|v| !v.is_null()) {
            message.insert("subagentRunId".into(), owner.clone());
        }
        merge_metadata(&mut message, ev);
        match self.assistant_owner(&call_id) {
            None => {
                self.push(message);
            }
            Some(owner) => {
                let mut at = match self.tool_run {
                    Some((o, end)) if o == owner && !self.no_shortcuts => end,
                    _ => owner + 1,
                };
                while at < self.messages.len() && role_of(&self.messages[at]) == Some("tool") {
                    at += 1;
                }
                self.insert_at(at, message);
                self.tool_run = Some((owner, at + 1));
            }
        }
    }

    /// The first assistant message holding a tool call.
    fn assistant_owner(&self, call_id: &str) -> Option<usize> {
        let first = self.at(self.tool_owner.get(call_id)?.key);
        if role_of(&self.messages[first]) == Some("assistant") {
            return Some(first);
        }
        (first..self.messages.len()).find(|&at| {
            role_of(&self.messages[at]) == Some("assistant")
                && holds_call(&self.messages[at], call_id)
        })
    }

    /// Inserts a message, moving the messages after it one place on.
    fn insert_at(&mut self, at: usize, message: Map<String, Value>) {
        self.moved_from = self.moved_from.min(at);
        let key = self.new_key(at);
        self.keys.insert(at, key);
        for (i, &k) in self.keys.iter().enumerate().skip(at + 1) {
            self.pos[k as usize] = i as u32;
        }
        self.index_message(&message, at);
        self.messages.insert(at, message);
    }

    fn rebuild_indexes(&mut self) {
        self.tool_run = None;
        self.index.clear();
        self.tool_owner.clear();
        self.shared_ids = false;
        self.shared_calls = false;
        self.first = [NONE; 3];
        self.keys = (0..self.messages.len() as u32).collect();
        self.pos = self.keys.clone();
        let messages = std::mem::take(&mut self.messages);
        for (at, message) in messages.iter().enumerate() {
            self.index_message(message, at);
        }
        self.messages = messages;
    }

    fn state_delta(&mut self, ev: &Value, raw: Option<&RawPatch>) {
        let delta = match (raw, ev.get("delta")) {
            (Some(raw), _) => patch::Ops::Raw(raw),
            (None, Some(delta)) => patch::Ops::Value(delta),
            (None, None) => return,
        };
        // Before any state is known the official client holds the `{}` its agent starts with,
        // and patches that; a patch that fails leaves the state (unset or not) as it was.
        let absent = self.state.is_none();
        let mut state = self.state.take().unwrap_or_else(patch::empty_object);
        let mut size = if absent {
            patch::estimated_size(&state, usize::MAX)
        } else {
            self.state_size
        };
        self.delta_applied =
            patch::apply_ops(&mut state, delta, &mut size, self.state_limit).is_ok();
        if self.delta_applied {
            self.state_size = size;
            self.state = Some(state);
        } else if !absent {
            self.state = Some(state);
        }
    }

    /// Starts from a state the stream does not carry (a recording's baseline): what a client
    /// that held it before the stream ends with. A RUN_STARTED whose input has a state still
    /// replaces it, as it does any state.
    pub fn with_state(mut self, state: Option<Value>) -> Self {
        if let Some(state) = state {
            self.state_size = patch::estimated_size(&state, usize::MAX);
            self.state = Some(state);
            self.state_known = true;
        }
        self
    }

    /// Whether the state is known: set by a snapshot, the first run's input or the baseline
    /// given. Before that, deltas patch the `{}` a client with no state starts from, which a
    /// client that held some state (the stream starts mid-thread) does not.
    pub fn state_known(&self) -> bool {
        self.state_known
    }

    /// Starts from the messages a client held before the stream (what it sent, when the
    /// request is known): streamed messages and snapshots then take their places among them
    /// as they would in that client.
    pub fn with_messages(mut self, messages: &[Value]) -> Self {
        for message in messages.iter().filter_map(Value::as_object) {
            if self.find(id_of(message)).is_none() {
                self.push(message.clone());
            }
        }
        self
    }

    /// Starts from what a client that sent `input` (a RunAgentInput) held: its state (unless
    /// null) and its messages.
    pub fn with_input(self, input: &Value) -> Self {
        let messages = input
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        self.with_state(input.get("state").filter(|s| !s.is_null()).cloned())
            .with_messages(messages)
    }

    /// Whether the last STATE_DELTA or ACTIVITY_DELTA applied (a failed one changed nothing).
    pub fn last_delta_applied(&self) -> bool {
        self.delta_applied
    }

    /// Merges a snapshot into the history. While no two messages share an id or a tool call,
    /// only the history from the first message the snapshot can replace or drop onwards is
    /// merged and re-indexed: messages before it (kept reasoning and activity messages) are
    /// left where they are, so a snapshot costs its own length plus what changed since the
    /// last one, not the whole history.
    fn messages_snapshot(&mut self, ev: &Value) {
        let Some(Value::Array(incoming)) = ev.get("messages") else {
            return;
        };
        // It may set any activity's content, and replace or drop any message.
        self.activity_sizes.clear();
        self.tool_run = None;
        let incoming: Vec<&Map<String, Value>> =
            incoming.iter().filter_map(Value::as_object).collect();
        let keep = Keep::new(&incoming, ev.get("metadata"));
        let by_id = last_of_each_id(&incoming);
        if self.shared_ids || self.shared_calls || self.no_shortcuts {
            self.moved_from = 0;
            let old = std::mem::take(&mut self.messages);
            let matched = match_by_id(&old, &by_id);
            self.messages = merge_matched(old, &incoming, &matched, &keep);
            self.rebuild_indexes();
            return;
        }
        let named: Vec<(usize, usize)> = by_id
            .iter()
            .filter_map(|(&id, &k)| self.index.get(id).map(|&key| (self.at(key), k)))
            .collect();
        let mut start = named.iter().map(|&(at, _)| at).min().unwrap_or(NONE);
        start = start.min(self.first[OTHER]);
        if keep.may_drop_reasoning() {
            start = start.min(self.first[REASONING]);
        }
        if keep.may_drop_activity() {
            start = start.min(self.first[ACTIVITY]);
        }
        let tail = self.messages.split_off(start.min(self.messages.len()));
        self.keys.truncate(self.messages.len());
        self.moved_from = self.moved_from.min(self.messages.len());
        let start = self.messages.len();
        for m in &tail {
            if let Some(id) = id_of(m) {
                self.index.remove(id);
            }
            for call in calls_of(m) {
                self.tool_owner.remove(call);
            }
        }
        let mut matched = vec![NONE; tail.len()];
        for (at, k) in named {
            matched[at - start] = k;
        }
        for first in &mut self.first {
            if *first >= start {
                *first = NONE;
            }
        }
        for message in merge_matched(tail, &incoming, &matched, &keep) {
            self.push(message);
        }
        if self.pos.len() > 2 * self.messages.len() + 8 {
            self.renumber_keys();
        }
    }

    /// The state as it stands.
    pub fn state(&self) -> Option<&Value> {
        self.state.as_ref()
    }

    /// The estimated size of the state as it stands ([`patch::estimated_size`], kept up to date
    /// as patches apply, so no walk of the state), 0 without one.
    pub fn state_size(&self) -> usize {
        if self.state.is_some() {
            self.state_size
        } else {
            0
        }
    }

    /// The messages as they stand.
    pub fn messages(&self) -> &[Map<String, Value>] {
        &self.messages
    }

    /// Makes `outlines` the outlines of the messages as they stand, outlining again only the
    /// messages changed, moved or added since the last call (`outlines` is what that call
    /// left, and this folder's only such list): a caller keeping the history at each run's
    /// start pays for what the runs changed, not for the whole history each time, and not
    /// for the bytes of a message that gathers calls run after run.
    pub fn sync_outlines(&mut self, outlines: &mut Vec<Outline>) {
        let from = self.moved_from.min(outlines.len()).min(self.messages.len());
        for at in self.touched.drain(..) {
            self.touched_mark[at] = false;
            if at < from {
                outlines[at] = Outline::of(&self.messages[at]);
            }
        }
        outlines.truncate(from);
        outlines.extend(self.messages[from..].iter().map(Outline::of));
        self.moved_from = self.messages.len();
        self.touched_mark.resize(self.moved_from, false);
    }

    /// The last run begun, as it stands.
    pub fn last_run(&self) -> Option<&RunRecord> {
        self.runs.last()
    }

    /// A message by id (its first occurrence).
    pub fn message(&self, id: &str) -> Option<&Map<String, Value>> {
        self.index.get(id).map(|&k| &self.messages[self.at(k)])
    }

    fn activity_snapshot(&mut self, ev: &Value) {
        if let Some(id) = str_of(ev, "messageId") {
            self.activity_sizes.remove(id);
        }
        let existing = self.find(str_of(ev, "messageId"));
        let replace = match ev.get("replace") {
            None | Some(Value::Null) => true,
            Some(v) => js_truthy(v),
        };
        let owner = ev.get("subagentRunId").filter(|v| !v.is_null());
        let fresh = || {
            let mut m = Map::new();
            copy_field(&mut m, "id", ev, "messageId");
            m.insert("role".into(), Value::String("activity".into()));
            copy_field(&mut m, "activityType", ev, "activityType");
            copy_field(&mut m, "content", ev, "content");
            if let Some(owner) = owner {
                m.insert("subagentRunId".into(), owner.clone());
            }
            m
        };
        let target = match existing {
            None => Some(self.push(fresh())),
            Some(at) if self.is_activity(at) => {
                if replace {
                    let message = self.message_mut(at);
                    set_or_remove(message, "activityType", ev.get("activityType"));
                    set_or_remove(message, "content", ev.get("content"));
                    match owner {
                        Some(owner) => {
                            message.insert("subagentRunId".into(), owner.clone());
                        }
                        None => {
                            message.remove("subagentRunId");
                        }
                    }
                }
                Some(at)
            }
            Some(at) if replace => {
                // A message of another kind becomes an activity.
                self.tool_run = None;
                let had_calls = self.messages[at].contains_key("toolCalls");
                *self.message_mut(at) = fresh();
                self.first[ACTIVITY] = self.first[ACTIVITY].min(at);
                if had_calls {
                    self.rebuild_indexes();
                }
                Some(at)
            }
            Some(_) => None,
        };
        if let Some(at) = target {
            merge_metadata(self.message_mut(at), ev);
        }
    }

    fn activity_delta(&mut self, ev: &Value, raw: Option<&RawPatch>) {
        self.delta_applied = true;
        let Some(at) = self.find(str_of(ev, "messageId")) else {
            return;
        };
        if !self.is_activity(at) {
            return;
        }
        let limit = self.state_limit;
        let id = str_of(ev, "messageId").unwrap_or_default();
        let cached = self.activity_sizes.get(id).copied();
        let message = self.message_mut(at);
        merge_metadata(message, ev);
        // Taken out and patched in place (a patch that fails leaves it as it was), not
        // copied: a copy at every delta made a long activity quadratic.
        let taken = message.get_mut("content").map(std::mem::take);
        let kept = matches!(taken, Some(ref v) if !v.is_null());
        let mut content = match taken {
            None | Some(Value::Null) => patch::empty_object(),
            Some(v) => v,
        };
        let empty = Value::Array(Vec::new());
        let ops = match raw {
            Some(raw) => patch::Ops::Raw(raw),
            None => patch::Ops::Value(ev.get("patch").filter(|p| !p.is_null()).unwrap_or(&empty)),
        };
        let mut size = match cached {
            Some(size) if kept => size,
            _ => patch::estimated_size(&content, usize::MAX),
        };
        let applied = patch::apply_ops(&mut content, ops, &mut size, limit).is_ok();
        self.delta_applied = applied;
        let message = self.message_mut(at);
        if applied {
            message.insert("content".into(), content);
            set_or_remove(message, "activityType", ev.get("activityType"));
            // The id is copied only the first time.
            match self.activity_sizes.get_mut(id) {
                Some(kept) => *kept = size,
                None => {
                    self.activity_sizes.insert(id.to_owned(), size);
                }
            }
        } else if kept {
            message.insert("content".into(), content);
        }
    }

    fn run_started(&mut self, ev: &Value) {
        let input = ev.get("input");
        self.run_tool_calls.clear();
        self.run_tool_call_set.clear();
        self.answered.clear();
        if let Some(Value::Array(messages)) = input.and_then(|i| i.get("messages")) {
            for message in messages.iter().filter_map(Value::as_object) {
                if self.find(id_of(message)).is_some() {
                    continue;
                }
                let mut message = message.clone();
                if message.get("subagentRunId") == Some(&Value::Null) {
                    message.remove("subagentRunId");
                }
                self.push(message);
            }
        }
        self.runs.push(RunRecord {
            thread_id: str_of(ev, "threadId").map(str::to_owned),
            run_id: str_of(ev, "runId").map(str::to_owned),
            parent_run_id: str_of(ev, "parentRunId").map(str::to_owned),
            status: "open",
            ..RunRecord::default()
        });
    }

    fn run_finished(&mut self, ev: &Value) {
        let outcome = ev.get("outcome").filter(|v| !v.is_null());
        self.pending_interrupts = match outcome {
            Some(o) if o.get("type").and_then(Value::as_str) == Some("interrupt") => o
                .get("interrupts")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let pending: Vec<Value> = match outcome
            .filter(|o| o.get("type").and_then(Value::as_str) == Some("success"))
            .and_then(|o| o.get("pendingToolCallIds"))
            .and_then(Value::as_array)
            .filter(|ids| !ids.is_empty())
        {
            Some(ids) => ids.clone(),
            None => self
                .run_tool_calls
                .iter()
                .filter(|id| !self.answered.contains(*id))
                .map(|id| Value::String(id.clone()))
                .collect(),
        };
        if let Some(run) = self.runs.last_mut().filter(|r| r.status == "open") {
            run.status = "finished";
            let outcome = outcome.cloned().unwrap_or_else(|| {
                let mut success = Map::new();
                success.insert("type".into(), "success".into());
                Value::Object(success)
            });
            if outcome.get("type").and_then(Value::as_str) == Some("success") {
                run.pending_tool_calls = pending;
            }
            run.outcome = Some(outcome);
            run.result = ev.get("result").filter(|v| !v.is_null()).cloned();
            run.usage = ev.get("usage").cloned();
        }
    }

    fn encrypted_value(&mut self, ev: &Value) {
        let Some(entity) = str_of(ev, "entityId") else {
            return;
        };
        let value = ev.get("encryptedValue");
        if str_of(ev, "subtype") == Some("tool-call") {
            let owner = (0..self.messages.len()).find(|&at| {
                role_of(&self.messages[at]) == Some("assistant")
                    && holds_call(&self.messages[at], entity)
            });
            if let Some(at) = owner {
                let calls = self
                    .message_mut(at)
                    .get_mut("toolCalls")
                    .and_then(Value::as_array_mut);
                if let Some(call) = calls
                    .into_iter()
                    .flatten()
                    .find(|c| c.get("id").and_then(Value::as_str) == Some(entity))
                    .and_then(Value::as_object_mut)
                {
                    set_or_remove(call, "encryptedValue", value);
                }
            }
        } else if let Some(at) = self.find(Some(entity)) {
            if !self.is_activity(at) {
                set_or_remove(self.message_mut(at), "encryptedValue", value);
            }
        }
    }

    /// Ends the fold: the messages, the state and what happened to each run.
    pub fn finish(self) -> Folded {
        Folded {
            messages: self.messages,
            state: self.state,
            runs: self.runs,
            pending_interrupts: self.pending_interrupts,
            halves: self.halves,
        }
    }
}

/// What a client ends with.
#[derive(Clone, Debug, PartialEq)]
pub struct Folded {
    pub messages: Vec<Map<String, Value>>,
    pub state: Option<Value>,
    pub runs: Vec<RunRecord>,
    pub pending_interrupts: Vec<Value>,
    /// Text may hold stand-ins for halves of UTF-16 pairs (see [`crate::read::halves`]),
    /// which [`Folded::json_text`] writes as the escapes they were read from.
    pub halves: bool,
}

impl Folded {
    /// [`Folded::into_json`] as JSON text, `pretty` or on one line: what `agui-lens fold`
    /// prints. Half a UTF-16 pair nothing joined is written as its escape (`\ud83d`), as
    /// the official reducer's JSON writes it.
    pub fn json_text(self, pretty: bool) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out, pretty)
            .expect("a JSON value serialises into memory");
        String::from_utf8(out).expect("JSON text is UTF-8")
    }

    /// [`Folded::json_text`], written to `out` as it is made (no copy of it is held, unless
    /// it has halves of UTF-16 pairs to write as escapes).
    pub fn write_json(self, mut out: impl std::io::Write, pretty: bool) -> std::io::Result<()> {
        let halves = self.halves;
        let json = self.into_json();
        if halves {
            let text = match pretty {
                true => serde_json::to_string_pretty(&json),
                false => serde_json::to_string(&json),
            }?;
            return out.write_all(crate::read::halves::escape_stand_ins(&text).as_bytes());
        }
        match pretty {
            true => serde_json::to_writer_pretty(out, &json),
            false => serde_json::to_writer(out, &json),
        }
        .map_err(std::io::Error::from)
    }

    /// Nothing a client holds: no message, no state, no run, no interrupt (a thread whose
    /// events all failed to apply is as good as none).
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
            && self.state.as_ref().is_none_or(Value::is_null)
            && self.runs.is_empty()
            && self.pending_interrupts.is_empty()
    }

    /// Each run as `into_json` lists it: ids, status, outcome, error, usage.
    pub fn runs_json(&self) -> Vec<Value> {
        self.runs.iter().map(run_json).collect()
    }

    /// `{"messages": […], "state": …, "runs": […], "activities": {…}}`.
    pub fn into_json(self) -> Value {
        let activities: Map<String, Value> = self
            .messages
            .iter()
            .filter(|m| role_of(m) == Some("activity"))
            .filter_map(|m| {
                let id = m.get("id")?.as_str()?.to_owned();
                let mut a = Map::new();
                a.insert(
                    "activityType".into(),
                    m.get("activityType").cloned().unwrap_or(Value::Null),
                );
                a.insert(
                    "content".into(),
                    m.get("content").cloned().unwrap_or(Value::Null),
                );
                Some((id, Value::Object(a)))
            })
            .collect();
        let mut out = Map::new();
        let runs = self.runs_json();
        out.insert(
            "messages".into(),
            Value::Array(self.messages.into_iter().map(Value::Object).collect()),
        );
        out.insert("state".into(), self.state.unwrap_or(Value::Null));
        out.insert("runs".into(), Value::Array(runs));
        if !self.pending_interrupts.is_empty() {
            out.insert(
                "pendingInterrupts".into(),
                Value::Array(self.pending_interrupts),
            );
        }
        if !activities.is_empty() {
            out.insert("activities".into(), Value::Object(activities));
        }
        Value::Object(out)
    }

    /// The part clients compare: messages and state.
    pub fn meaning(&self) -> Value {
        let mut out = Map::new();
        out.insert(
            "messages".into(),
            Value::Array(self.messages.iter().cloned().map(Value::Object).collect()),
        );
        out.insert("state".into(), self.state.clone().unwrap_or(Value::Null));
        Value::Object(out)
    }
}

/// What a MESSAGES_SNAPSHOT leaves: messages the snapshot names are replaced in place, others
/// dropped unless the client keeps them (activity and reasoning messages the snapshot does not
/// own), and the snapshot's new messages appended in its order.
pub fn merge_snapshot(
    old: Vec<Map<String, Value>>,
    incoming: &[Value],
    metadata: Option<&Value>,
) -> Vec<Map<String, Value>> {
    let incoming: Vec<&Map<String, Value>> = incoming.iter().filter_map(Value::as_object).collect();
    let matched = match_by_id(&old, &last_of_each_id(&incoming));
    merge_matched(old, &incoming, &matched, &Keep::new(&incoming, metadata))
}

/// What a snapshot's merge reads of a message it may replace: the id it is matched by, and
/// what decides whether it stays when the snapshot does not name it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    id: Option<String>,
    kind: usize,
    activity_type: Option<String>,
}

impl Outline {
    pub fn of(message: &Map<String, Value>) -> Self {
        Outline {
            id: id_of(message).map(str::to_owned),
            kind: kind_of(message),
            activity_type: activity_type_of(message).map(str::to_owned),
        }
    }

    /// The id a snapshot's merge matches the message by.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// Whether a client whose history is outlined by `old` ends with exactly `result` when it
/// receives a MESSAGES_SNAPSHOT of `result` (without metadata), as [`merge_snapshot`]
/// merges it. What the old messages hold does not matter: a message the snapshot names is
/// replaced by the snapshot's, and one it leaves out but keeps is one too many.
pub fn snapshot_restores(old: &[Outline], result: &[Map<String, Value>]) -> bool {
    let incoming: Vec<&Map<String, Value>> = result.iter().collect();
    // A snapshot's message with a null owner is kept without it: not as it was.
    if incoming
        .iter()
        .any(|m| m.get("subagentRunId") == Some(&Value::Null))
    {
        return false;
    }
    let by_id = last_of_each_id(&incoming);
    let keep = Keep::new(&incoming, None);
    let mut order = Vec::with_capacity(incoming.len());
    let mut placed = vec![false; incoming.len()];
    for o in old {
        match o.id().and_then(|id| by_id.get(id)) {
            Some(&k) => {
                placed[k] = true;
                order.push(k);
            }
            None if keep.keeps_kind(o.kind, o.activity_type.as_deref()) => return false,
            None => {}
        }
    }
    let placed_ids = ids_placed(&incoming, &placed);
    order.extend(
        (0..incoming.len())
            .filter(|&k| !id_of(incoming[k]).is_some_and(|id| placed_ids.contains(id))),
    );
    order.iter().copied().eq(0..incoming.len())
}

/// No position.
const NONE: usize = usize::MAX;

/// Kinds of message, as a snapshot treats those it does not name.
const OTHER: usize = 0;
const REASONING: usize = 1;
const ACTIVITY: usize = 2;

fn kind_of(message: &Map<String, Value>) -> usize {
    match role_of(message) {
        Some("reasoning") => REASONING,
        Some("activity") => ACTIVITY,
        _ => OTHER,
    }
}

/// Which messages a snapshot keeps although it does not name them.
struct Keep {
    owned: Scope,
    has_activity: bool,
    has_reasoning: bool,
}

impl Keep {
    fn new(incoming: &[&Map<String, Value>], metadata: Option<&Value>) -> Self {
        Keep {
            owned: authoritative_activity_types(metadata),
            has_activity: incoming.iter().any(|m| kind_of(m) == ACTIVITY),
            has_reasoning: incoming.iter().any(|m| kind_of(m) == REASONING),
        }
    }

    fn keeps(&self, message: &Map<String, Value>) -> bool {
        self.keeps_kind(kind_of(message), activity_type_of(message))
    }

    fn keeps_kind(&self, kind: usize, activity_type: Option<&str>) -> bool {
        match kind {
            ACTIVITY => match &self.owned {
                Scope::Types(types) => {
                    !activity_type.is_some_and(|t| types.iter().any(|owned| owned == t))
                }
                Scope::All => false,
                Scope::Unset => !self.has_activity,
            },
            REASONING => !self.has_reasoning,
            _ => false,
        }
    }

    fn may_drop_reasoning(&self) -> bool {
        self.has_reasoning
    }

    fn may_drop_activity(&self) -> bool {
        match &self.owned {
            Scope::Types(types) => !types.is_empty(),
            Scope::All => true,
            Scope::Unset => self.has_activity,
        }
    }
}

/// Each id of a snapshot and the position of its last message, as a JavaScript Map built
/// from the list keeps it.
fn last_of_each_id<'a>(incoming: &[&'a Map<String, Value>]) -> HashMap<&'a str, usize, FastBuild> {
    let mut by_id: HashMap<&str, usize, FastBuild> = HashMap::default();
    for (i, m) in incoming.iter().enumerate() {
        if let Some(id) = id_of(m) {
            by_id.insert(id, i);
        }
    }
    by_id
}

/// For each old message, the snapshot message replacing it ([`NONE`] if none does).
fn match_by_id(old: &[Map<String, Value>], by_id: &HashMap<&str, usize, FastBuild>) -> Vec<usize> {
    old.iter()
        .map(|m| {
            id_of(m)
                .and_then(|id| by_id.get(id))
                .copied()
                .unwrap_or(NONE)
        })
        .collect()
}

/// The ids of the snapshot's messages that replaced an old one in place: a later message of
/// the snapshot with one of them is not added again.
fn ids_placed<'a>(
    incoming: &[&'a Map<String, Value>],
    placed: &[bool],
) -> HashSet<&'a str, FastBuild> {
    incoming
        .iter()
        .zip(placed)
        .filter(|(_, placed)| **placed)
        .filter_map(|(m, _)| id_of(m))
        .collect()
}

/// [`merge_snapshot`] with the old messages already matched to the snapshot's.
fn merge_matched(
    old: Vec<Map<String, Value>>,
    incoming: &[&Map<String, Value>],
    matched: &[usize],
    keep: &Keep,
) -> Vec<Map<String, Value>> {
    let owned_copy = |m: &Map<String, Value>| {
        let mut m = m.clone();
        if m.get("subagentRunId") == Some(&Value::Null) {
            m.remove("subagentRunId");
        }
        m
    };
    let mut merged = Vec::with_capacity(old.len() + incoming.len());
    // Snapshot messages that replaced an old one in place (an old message kept without being
    // replaced has an id the snapshot does not name).
    let mut placed = vec![false; incoming.len()];
    for (m, &k) in old.into_iter().zip(matched) {
        match k {
            NONE if keep.keeps(&m) => merged.push(m),
            NONE => {}
            k => {
                placed[k] = true;
                // A message the snapshot repeats as it stands stays, rather than being freed
                // and copied back: snapshots mostly repeat the history they follow.
                let null_owner = incoming[k].get("subagentRunId") == Some(&Value::Null);
                if !null_owner && m == *incoming[k] {
                    merged.push(m);
                } else {
                    merged.push(owned_copy(incoming[k]));
                }
            }
        }
    }
    let placed_ids = ids_placed(incoming, &placed);
    for m in incoming {
        if !id_of(m).is_some_and(|id| placed_ids.contains(id)) {
            merged.push(owned_copy(m));
        }
    }
    merged
}

fn run_json(run: &RunRecord) -> Value {
    let mut out = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            out.insert(k.into(), v);
        }
    };
    put("threadId", run.thread_id.clone().map(Value::String));
    put("runId", run.run_id.clone().map(Value::String));
    put("parentRunId", run.parent_run_id.clone().map(Value::String));
    put("status", Some(Value::String(run.status.into())));
    put("outcome", run.outcome.clone());
    put("result", run.result.clone());
    if !run.pending_tool_calls.is_empty() {
        put(
            "pendingToolCallIds",
            Some(Value::Array(run.pending_tool_calls.clone())),
        );
    }
    put("error", run.error.clone());
    put("usage", run.usage.clone());
    Value::Object(out)
}

/// How a MESSAGES_SNAPSHOT scopes the activities it owns (its `@ag-ui/client` metadata).
enum Scope {
    /// No scope given: the snapshot owns activities if it holds any.
    Unset,
    /// It owns every activity.
    All,
    /// It owns these activity types.
    Types(Vec<String>),
}

fn authoritative_activity_types(metadata: Option<&Value>) -> Scope {
    let Some(Value::Object(metadata)) = metadata else {
        return Scope::Unset;
    };
    let Some(value) = metadata.get("@ag-ui/client") else {
        return Scope::Unset;
    };
    let Value::Object(value) = value else {
        return Scope::Types(Vec::new());
    };
    match value.get("authoritativeActivityTypes") {
        None => Scope::Unset,
        Some(Value::Null) => Scope::All,
        Some(Value::Array(types)) if types.iter().all(Value::is_string) => Scope::Types(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        Some(_) => Scope::Types(Vec::new()),
    }
}

/// Copies a field if the event has it: an absent field is absent in the message too (as
/// `undefined` is, once serialised).
fn copy_field(target: &mut Map<String, Value>, key: &str, ev: &Value, from: &str) {
    if let Some(v) = ev.get(from) {
        target.insert(key.into(), v.clone());
    }
}

fn set_or_remove(target: &mut Map<String, Value>, key: &str, value: Option<&Value>) {
    match value {
        Some(v) => {
            target.insert(key.into(), v.clone());
        }
        None => {
            target.remove(key);
        }
    }
}

fn str_of<'a>(ev: &'a Value, key: &str) -> Option<&'a str> {
    ev.get(key).and_then(Value::as_str)
}

fn role_of(message: &Map<String, Value>) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

fn activity_type_of(message: &Map<String, Value>) -> Option<&str> {
    message.get("activityType").and_then(Value::as_str)
}

/// The key a JavaScript Map would use for a message id (only strings are compared here).
fn id_of(message: &Map<String, Value>) -> Option<&str> {
    message.get("id").and_then(Value::as_str)
}

fn calls_of(message: &Map<String, Value>) -> impl Iterator<Item = &str> {
    declared_call_ids(message.get("toolCalls"))
}

fn holds_call(message: &Map<String, Value>, id: &str) -> bool {
    calls_of(message).any(|c| c == id)
}

/// Folds an event's metadata into a message or tool call, key by key, last write winning.
fn merge_metadata(target: &mut Map<String, Value>, ev: &Value) {
    let Some(incoming) = ev.get("metadata") else {
        return;
    };
    let incoming = match incoming {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    match target.get_mut("metadata") {
        Some(Value::Object(existing)) => {
            for (k, v) in incoming {
                existing.insert(k, v);
            }
        }
        _ => {
            target.insert("metadata".into(), Value::Object(incoming));
        }
    }
}

/// An event's `delta` as the reducer appends it: a string as it is, anything else as
/// JavaScript prints it.
fn delta_text(ev: &Value) -> std::borrow::Cow<'_, str> {
    match ev.get("delta") {
        Some(Value::String(delta)) => std::borrow::Cow::Borrowed(delta.as_str()),
        other => std::borrow::Cow::Owned(js_string(other)),
    }
}

/// A value as JavaScript's template strings print it.
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => js_number(n),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// A number as JavaScript prints it: `1.0` is `1`, `1e2` is `100`, large ones in exponent form.
fn js_number(n: &serde_json::Number) -> String {
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let magnitude = f.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        // Exponent form: shortest digits, with an explicit sign on the exponent.
        let text = format!("{f:e}");
        return match text.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            _ => text,
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    format!("{f}")
}

fn js_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fold(events: &[Value]) -> Value {
        let mut folder = Folder::new(1 << 30);
        for (i, value) in events.iter().enumerate() {
            folder.apply(&testing::event_at(i, value));
        }
        folder.finish().meaning()
    }

    #[test]
    fn text_and_tool_calls() {
        let folded = fold(&[
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}}),
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"Hel"}),
            json!({"type":"TEXT_MESSAGE_CHUNK","delta":"lo","metadata":{"k":1}}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}),
            json!({"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"x\":"}),
            json!({"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"1}"}),
            json!({"type":"TOOL_CALL_END","toolCallId":"c1"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"g"}),
            json!({"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"ok"}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ]);
        assert_eq!(
            folded["messages"],
            json!([
                {"id":"u1","role":"user","content":"hi"},
                {"id":"a1","role":"assistant","content":"Hello","metadata":{"k":1},
                 "toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
                {"id":"t1","toolCallId":"c1","role":"tool","content":"ok"},
                {"id":"c2","role":"assistant","toolCalls":[{"id":"c2","type":"function","function":{"name":"g","arguments":""}}]}
            ])
        );
    }

    #[test]
    fn snapshots_merge_by_id_and_keep_client_reasoning() {
        let folded = fold(&[
            json!({"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}),
            json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"think"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}),
            json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"q"},{"id":"a1","role":"assistant","content":"final"}]}),
        ]);
        assert_eq!(
            folded["messages"],
            json!([
                {"id":"r1","role":"reasoning","content":"think"},
                {"id":"a1","role":"assistant","content":"final"},
                {"id":"u1","role":"user","content":"q"}
            ])
        );
    }

    #[test]
    fn state_patches_apply_atomically() {
        let folded = fold(&[
            json!({"type":"STATE_SNAPSHOT","snapshot":{"n":1,"items":[]}}),
            json!({"type":"STATE_DELTA","delta":[{"op":"add","path":"/items/-","value":"a"},{"op":"replace","path":"/missing","value":1}]}),
            json!({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}]}),
        ]);
        assert_eq!(folded["state"], json!({"n":2,"items":[]}));
        // Without a state, a root operation still applies (the state starts as null).
        let folded =
            fold(&[json!({"type":"STATE_DELTA","delta":[{"op":"add","path":"","value":{"a":1}}]})]);
        assert_eq!(folded["state"], json!({"a":1}));
    }

    /// An activity's content is held to the state limit as it grows delta by delta, and as a
    /// snapshot sets it anew, exactly as measuring it at every delta would hold it.
    #[test]
    fn a_growing_activity_is_held_to_the_limit() {
        let step = |n: usize| json!({"id": format!("s{n}"), "text": "ten chars."});
        // Room for 30 steps.
        let full = json!({"steps": (0..30).map(step).collect::<Vec<_>>()});
        let limit = patch::estimated_size(&full, usize::MAX);
        let snapshot = |steps: Vec<Value>| {
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "PLAN",
                   "content": {"steps": steps}})
        };
        let delta = |n: usize| {
            json!({"type": "ACTIVITY_DELTA", "messageId": "a1", "activityType": "PLAN",
                   "patch": [{"op": "add", "path": "/steps/0", "value": step(n)}]})
        };
        let mut events = vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})];
        events.push(snapshot(Vec::new()));
        events.extend((0..20).map(delta));
        events.push(snapshot((100..125).map(step).collect()));
        events.extend((20..60).map(delta));
        // A snapshot of the messages sets the activity's content too.
        let steps: Vec<Value> = (200..210).map(step).collect();
        events.push(json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "a1", "role": "activity", "activityType": "PLAN", "content": {"steps": steps}}
        ]}));
        events.extend((60..63).map(delta));
        let mut folder = Folder::new(limit);
        let mut content = Value::Null;
        let (mut held, mut refused) = (0, 0);
        for (i, value) in events.iter().enumerate() {
            let event = testing::event_at(i, value);
            folder.apply(&event);
            match event.kind {
                Some(EventType::ActivitySnapshot) => content = value["content"].clone(),
                Some(EventType::MessagesSnapshot) => {
                    content = value["messages"][0]["content"].clone();
                }
                Some(EventType::ActivityDelta) => {
                    let mut size = patch::estimated_size(&content, usize::MAX);
                    match patch::apply(&mut content, &value["patch"], &mut size, limit) {
                        Ok(()) => held += 1,
                        Err(_) => refused += 1,
                    }
                }
                _ => {}
            }
            if i > 0 {
                let held_by_fold = folder.message("a1").map(|m| &m["content"]);
                assert_eq!(held_by_fold, Some(&content), "{i}");
            }
        }
        assert_eq!((held, refused), (28, 35));
    }

    #[test]
    fn activities_snapshot_and_delta() {
        let folded = fold(&[
            json!({"type":"ACTIVITY_SNAPSHOT","messageId":"p1","activityType":"PLAN","content":{"steps":[{"done":false}]}}),
            json!({"type":"ACTIVITY_DELTA","messageId":"p1","activityType":"PLAN","patch":[{"op":"replace","path":"/steps/0/done","value":true}]}),
            json!({"type":"ACTIVITY_SNAPSHOT","messageId":"p1","activityType":"PLAN","content":{"x":1},"replace":false}),
        ]);
        assert_eq!(
            folded["messages"],
            json!([{"id":"p1","role":"activity","activityType":"PLAN","content":{"steps":[{"done":true}]}}])
        );
    }
}
