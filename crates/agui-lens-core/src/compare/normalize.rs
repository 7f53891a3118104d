//! Normalisation for comparing streams by meaning: generated identities become stable tokens
//! by order of first appearance (`msg-1`, `call-1`, `run-1` …, the same value always the same
//! token, so a reference that points elsewhere is still a difference), volatile fields are
//! dropped, and selected parts are redacted.
//!
//! By default only the protocol's own structure is renamed. With `payload_ids` (what new
//! snapshots and `diff` use), the ids the stream minted in that structure are also renamed
//! wherever they appear whole as a string value: inside RAW and CUSTOM payloads, state,
//! activity content, outcomes. Ids inside longer text (tool arguments as JSON text, prose)
//! are left as written, and so are text the user reads and values that read as a word or a
//! number outside the protocol's id fields (see `learnt_id_may_stand_at`). Patterns and keys named in the settings add ids of their own (a
//! framework's `lc_run--…` run ids, a `checkpoint_ns`), tokenised as `id-N`.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

/// Fields of an event that hold one identity.
const ID_FIELDS: &[(&str, &str)] = &[
    ("threadId", "thread"),
    ("runId", "run"),
    ("parentRunId", "run"),
    ("messageId", "msg"),
    ("parentMessageId", "msg"),
    ("toolCallId", "call"),
    ("parentToolCallId", "call"),
    ("subagentRunId", "subagent"),
    ("parentSubagentRunId", "subagent"),
    ("interruptId", "interrupt"),
];

/// Fields that hold a list of identities.
const ID_LIST_FIELDS: &[(&str, &str)] = &[
    ("pendingToolCallIds", "call"),
    ("interruptIds", "interrupt"),
];

/// Volatile top-level fields dropped unless kept.
pub const VOLATILE: &[&str] = &["timestamp", "rawEvent"];

/// A JSON Pointer pattern: `*` matches one segment, `**` any number (none included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    text: String,
    segments: Vec<String>,
}

impl Selector {
    pub fn parse(text: &str) -> Result<Selector, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!(
                "`{text}` is not a JSON Pointer pattern: it must start with / (e.g. /**/metadata)"
            ));
        };
        let segments = rest
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        let selector = Selector {
            text: text.to_owned(),
            segments,
        };
        // What says what an event is, or what a fold holds, is never redacted: without it,
        // any two streams of as many events compare the same.
        let whole = |key: &str| selector.matches(&[key.to_owned()]);
        // Nothing but wildcards (`/*/*`) names no field: it takes what every item holds.
        let names_nothing = selector.segments.iter().all(|s| s == "*" || s == "**");
        if names_nothing || whole("type") || (whole("messages") && whole("state")) {
            return Err(format!(
                "`{text}` would redact each event's type (or the whole of a fold), and any two \
                 streams of as many events would compare the same: name what to redact more \
                 narrowly (e.g. /**/metadata)"
            ));
        }
        Ok(selector)
    }

    fn matches(&self, path: &[String]) -> bool {
        fn go(pattern: &[String], path: &[String]) -> bool {
            match pattern.split_first() {
                None => path.is_empty(),
                Some((first, rest)) if first == "**" => {
                    (0..=path.len()).any(|skip| go(rest, &path[skip..]))
                }
                Some((first, rest)) => match path.split_first() {
                    Some((segment, path_rest)) => {
                        (first == "*" || first == segment) && go(rest, path_rest)
                    }
                    None => false,
                },
            }
        }
        go(&self.segments, path)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What normalisation keeps and removes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Volatile fields to keep (`timestamp`, `rawEvent`).
    pub keep: Vec<String>,
    pub redact: Vec<Selector>,
    /// Rename minted ids wherever they appear whole as a string value, not only in the
    /// protocol's id fields.
    pub payload_ids: bool,
    /// String values that match one of these globs (`*`, `?`) are ids: `id-N`.
    pub id_patterns: Vec<String>,
    /// Every string value under one of these keys is an id: `id-N`.
    pub id_keys: Vec<String>,
    /// Event types whose neighbouring events compare in any order (parallel tool results).
    pub unordered: Vec<String>,
    /// At the fold level, how each run ended (its status, error, outcome and result) is compared
    /// too, not only the messages and the state.
    pub fold_runs: bool,
    /// A string value left as it is where a token may stand, but that has a token's form
    /// (`msg-1`) or begins with the escape, gets the escape (`~`) in front: a state's plain
    /// "msg-1" was the same as another stream's token for its first message.
    pub escape_tokens: bool,
}

impl Settings {
    /// What a new snapshot, or a comparison with no history to honour, uses.
    pub fn current() -> Settings {
        Settings {
            payload_ids: true,
            fold_runs: true,
            escape_tokens: true,
            ..Settings::default()
        }
    }

    /// Whether ids are found by walking every value (after learning them from the whole
    /// stream) rather than only in the protocol's fields.
    fn walks_values(&self) -> bool {
        self.payload_ids || !self.id_patterns.is_empty() || !self.id_keys.is_empty()
    }
}

/// Renames identities consistently across everything it normalises.
#[derive(Clone, Debug)]
pub struct Normalizer {
    settings: Settings,
    tokens: HashMap<String, String>,
    counters: HashMap<&'static str, usize>,
}

impl Normalizer {
    pub fn new(settings: Settings) -> Self {
        Normalizer {
            settings,
            tokens: HashMap::new(),
            counters: HashMap::new(),
        }
    }

    /// Normalises a whole stream. Runs of neighbouring events of an `unordered` type are put
    /// in one order first (by what they say, ids already seen named by their tokens and new
    /// ones alike), so ids they mint are numbered the same whatever order they came in. With
    /// ids found in values, the ids the stream mints are learnt from every event before any
    /// is normalised (numbered by first appearance in the protocol's fields, as without), so
    /// a payload that names an id before the protocol does still gets its token.
    pub fn events(settings: Settings, events: &[Value]) -> Vec<Value> {
        Normalizer::events_owned(settings, events.to_vec())
    }

    /// [`Normalizer::events`] of events it may take: each is let go once normalised, so a
    /// long stream is not held twice over (as read and normalised) at any time.
    pub fn events_owned(settings: Settings, mut events: Vec<Value>) -> Vec<Value> {
        let order = canonical_order(&settings, &events);
        let mut normalizer = Normalizer::new(settings);
        if normalizer.settings.walks_values() {
            for &i in &order {
                normalizer.protocol_event(&events[i]);
            }
        }
        let normalized = order
            .iter()
            .map(|&i| normalizer.event(&std::mem::take(&mut events[i])))
            .collect();
        drop(events);
        normalized
    }

    /// Normalises a fold's result the same way: ids learnt from its messages first.
    pub fn fold(settings: Settings, folded: &Value) -> Value {
        Normalizer::fold_threads(settings, std::slice::from_ref(folded))
            .pop()
            .unwrap_or_default()
    }

    /// [`Normalizer::fold`] of each thread's fold, in order, with tokens shared between them (an
    /// id that appears in two threads is one token).
    pub fn fold_threads(settings: Settings, threads: &[Value]) -> Vec<Value> {
        let reordered: Vec<Value>;
        let threads = if settings.unordered.iter().any(|u| u == "TOOL_CALL_RESULT") {
            reordered = threads.iter().map(canonical_messages).collect();
            &reordered[..]
        } else {
            threads
        };
        let mut normalizer = Normalizer::new(settings);
        if normalizer.settings.walks_values() {
            for folded in threads {
                normalizer.protocol_folded(folded);
            }
        }
        threads.iter().map(|f| normalizer.folded(f)).collect()
    }

    /// [`Normalizer::fold_threads`] in an order of the threads' own: each thread's fold
    /// normalised alone, the threads sorted by that. Which thread came first in the stream is
    /// no part of what the clients end with (each holds its own thread), so two streams whose
    /// threads ran in another order fold the same.
    pub fn fold_threads_in_any_order(settings: Settings, mut threads: Vec<Value>) -> Vec<Value> {
        threads.sort_by_cached_key(|folded| Normalizer::fold(settings.clone(), folded).to_string());
        Normalizer::fold_threads(settings, &threads)
    }

    fn token(&mut self, value: &str, kind: &'static str) -> String {
        if let Some(token) = self.tokens.get(value) {
            return token.clone();
        }
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        let token = format!("{kind}-{n}");
        self.tokens.insert(value.to_owned(), token.clone());
        token
    }

    fn rename(&mut self, value: &mut Value, kind: &'static str) {
        if let Value::String(s) = value {
            *s = self.token(s, kind);
        }
    }

    fn rename_list(&mut self, value: &mut Value, kind: &'static str) {
        if let Value::Array(items) = value {
            for item in items {
                self.rename(item, kind);
            }
        }
    }

    /// Normalises one event. With ids found in values, after [`Normalizer::events`]-style
    /// learning; otherwise by the protocol's fields alone.
    pub fn event(&mut self, event: &Value) -> Value {
        if !self.settings.walks_values() {
            return self.protocol_event(event);
        }
        let mut event = event.clone();
        drop_empty_input_lists(&mut event);
        if let Value::Object(map) = &mut event {
            for field in VOLATILE {
                if !self.settings.keep.iter().any(|k| k == field) {
                    map.remove(*field);
                }
            }
        }
        self.walk(&mut event, None);
        self.redact(&mut event);
        event
    }

    /// Renames what the protocol's fields hold (and learns those tokens).
    fn protocol_event(&mut self, event: &Value) -> Value {
        let mut event = event.clone();
        drop_empty_input_lists(&mut event);
        if let Value::Object(map) = &mut event {
            for field in VOLATILE {
                if !self.settings.keep.iter().any(|k| k == field) {
                    map.remove(*field);
                }
            }
            // Document order matters for token numbering; keys are sorted, the same on both sides.
            self.ids_in(map);
            let entity_kind = match map.get("subtype").and_then(Value::as_str) {
                Some("tool-call") => "call",
                _ => "msg",
            };
            if let Some(entity) = map.get_mut("entityId") {
                self.rename(entity, entity_kind);
            }
            if let Some(Value::Array(messages)) = map.get_mut("messages") {
                for message in messages {
                    self.message(message);
                }
            }
            if let Some(Value::Object(input)) = map.get_mut("input") {
                self.ids_in(input);
                if let Some(Value::Array(messages)) = input.get_mut("messages") {
                    for message in messages {
                        self.message(message);
                    }
                }
                if let Some(Value::Array(resume)) = input.get_mut("resume") {
                    for entry in resume.iter_mut().filter_map(Value::as_object_mut) {
                        self.ids_in(entry);
                    }
                }
            }
            if let Some(Value::Object(outcome)) = map.get_mut("outcome") {
                self.ids_in(outcome);
                if let Some(Value::Array(interrupts)) = outcome.get_mut("interrupts") {
                    for interrupt in interrupts.iter_mut().filter_map(Value::as_object_mut) {
                        if let Some(id) = interrupt.get_mut("id") {
                            self.rename(id, "interrupt");
                        }
                        self.ids_in(interrupt);
                    }
                }
            }
        }
        self.redact(&mut event);
        event
    }

    /// Normalises one message (a snapshot's, an input's, or a fold's).
    pub fn message(&mut self, message: &mut Value) {
        let Value::Object(map) = message else {
            return;
        };
        if let Some(id) = map.get_mut("id") {
            self.rename(id, "msg");
        }
        self.ids_in(map);
        if let Some(Value::Array(calls)) = map.get_mut("toolCalls") {
            for call in calls.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(id) = call.get_mut("id") {
                    self.rename(id, "call");
                }
            }
        }
    }

    /// Normalises a fold's result: messages and state.
    pub fn folded(&mut self, folded: &Value) -> Value {
        if !self.settings.walks_values() {
            return self.protocol_folded(folded);
        }
        let mut folded = folded.clone();
        self.walk(&mut folded, None);
        self.redact(&mut folded);
        folded
    }

    fn protocol_folded(&mut self, folded: &Value) -> Value {
        let mut folded = folded.clone();
        if let Some(Value::Array(messages)) = folded.get_mut("messages") {
            for message in messages {
                self.message(message);
            }
        }
        self.redact(&mut folded);
        folded
    }

    /// Replaces every string value that is a learnt id, matches an id pattern, or sits under
    /// an id key.
    fn walk(&mut self, value: &mut Value, key: Option<&str>) {
        match value {
            Value::String(s) => {
                if let Some(token) = self
                    .tokens
                    .get(s.as_str())
                    .filter(|_| learnt_id_may_stand_at(key, s))
                {
                    *s = token.clone();
                } else if !key.is_some_and(|k| NEVER_IDS.contains(&k))
                    && (key.is_some_and(|k| self.settings.id_keys.iter().any(|ik| ik == k))
                        || self
                            .settings
                            .id_patterns
                            .iter()
                            .any(|p| crate::text::glob_matches(p, s, false)))
                {
                    *s = self.token(s, "id");
                } else if self.settings.escape_tokens
                    && !key.is_some_and(|k| NEVER_IDS.contains(&k))
                    && (s.starts_with(TOKEN_ESCAPE) || has_token_form(s))
                {
                    s.insert(0, TOKEN_ESCAPE);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, key);
                }
            }
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    self.walk(v, Some(k));
                }
            }
            _ => {}
        }
    }

    fn ids_in(&mut self, map: &mut Map<String, Value>) {
        for (field, kind) in ID_FIELDS {
            if let Some(value) = map.get_mut(*field) {
                self.rename(value, kind);
            }
        }
        for (field, kind) in ID_LIST_FIELDS {
            if let Some(value) = map.get_mut(*field) {
                self.rename_list(value, kind);
            }
        }
    }

    fn redact(&self, value: &mut Value) {
        if self.settings.redact.is_empty() {
            return;
        }
        let mut path = Vec::new();
        redact_in(value, &self.settings.redact, &mut path);
    }
}

/// A run input's empty list of resume entries, of tools or of context is the same as none:
/// the binary transport cannot tell them apart (a decoder gives every run input the lists,
/// empty when nothing was sent), and what a client holds is the same either way. Dropped
/// from a RUN_STARTED's input: in what is compared, and in snapshots stored before it was.
/// So is a plain success outcome (one naming no pending calls) from a RUN_FINISHED and from a
/// folded run, and a role an event names that is what its absence means (`assistant` on a
/// text message's start or chunk, `tool` on a tool call's result).
pub fn drop_empty_input_lists(item: &mut Value) {
    drop_success_outcome(item);
    drop_default_role(item);
    // A folded stream's runs, as a snapshot of the fold level stores them.
    if let Some(Value::Array(runs)) = item.get_mut("runs") {
        for run in runs.iter_mut().filter_map(Value::as_object_mut) {
            drop_plain_run_outcome(run);
        }
    }
    if item.get("type").and_then(Value::as_str) != Some("RUN_STARTED") {
        return;
    }
    if let Some(Value::Object(input)) = item.get_mut("input") {
        for list in ["resume", "tools", "context"] {
            if input
                .get(list)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                input.remove(list);
            }
        }
    }
}

/// A role that says what its absence says: a text message's start (or chunk) is the
/// assistant's unless it names another role, and a tool call's result is the tool's (the
/// only role it may name). Encoders write them or leave them out: two streams that differ
/// only so were called different, though a client ends with the same messages.
fn drop_default_role(item: &mut Value) {
    let default = match item.get("type").and_then(Value::as_str) {
        Some("TEXT_MESSAGE_START" | "TEXT_MESSAGE_CHUNK") => "assistant",
        Some("TOOL_CALL_RESULT") => "tool",
        _ => return,
    };
    if let Some(map) = item.as_object_mut()
        && map.get("role").and_then(Value::as_str) == Some(default)
    {
        map.remove("role");
    }
}

/// A run's end whose outcome is a plain success says what one with none says ("absent means
/// success"): the outcome is dropped from what is compared, and from stored snapshots.
fn drop_success_outcome(item: &mut Value) {
    if item.get("type").and_then(Value::as_str) != Some("RUN_FINISHED") {
        return;
    }
    if let Some(map) = item.as_object_mut() {
        drop_plain_outcome(map);
    }
}

/// [`drop_plain_outcome`] of a folded run, whose outcome's `pendingToolCallIds` says nothing
/// more when it is the list the run derives (the calls it started and did not answer), as a
/// client derives it when the outcome names none.
pub fn drop_plain_run_outcome(run: &mut Map<String, Value>) {
    let derived = run.get("pendingToolCallIds").cloned();
    if let Some(outcome) = run.get_mut("outcome").and_then(Value::as_object_mut)
        && derived.is_some()
        && outcome.get("pendingToolCallIds") == derived.as_ref()
    {
        outcome.remove("pendingToolCallIds");
    }
    drop_plain_outcome(run);
}

/// Takes from a RUN_FINISHED (or a folded run) an outcome that says no more than its absence:
/// success, naming no pending calls. An empty `pendingToolCallIds` says nothing (a consumer
/// derives the calls from the stream either way), and is dropped from any outcome.
pub fn drop_plain_outcome(map: &mut Map<String, Value>) {
    let Some(outcome) = map.get_mut("outcome") else {
        return;
    };
    if let Some(outcome) = outcome.as_object_mut()
        && outcome
            .get("pendingToolCallIds")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
    {
        outcome.remove("pendingToolCallIds");
    }
    let plain = outcome
        .as_object()
        .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&Value::from("success")));
    if plain {
        map.remove("outcome");
    }
}

/// A fold as `--unordered TOOL_CALL_RESULT` compares it: each run of neighbouring tool
/// messages put in the order of the calls they answer, as the assistant messages before them
/// name the calls, so parallel results that came in another order fold the same (what
/// `canonical_order` does for the events).
fn canonical_messages(folded: &Value) -> Value {
    let mut folded = folded.clone();
    let Some(Value::Array(messages)) = folded.get_mut("messages") else {
        return folded;
    };
    let is_tool = |m: &Value| m.get("role").and_then(Value::as_str) == Some("tool");
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut i = 0;
    while i < messages.len() {
        if is_tool(&messages[i]) {
            let start = i;
            while i < messages.len() && is_tool(&messages[i]) {
                i += 1;
            }
            // Stable: results of calls no message named keep their order, after the others.
            messages[start..i].sort_by_key(|m| {
                m.get("toolCallId")
                    .and_then(Value::as_str)
                    .and_then(|id| calls.get(id).copied())
                    .unwrap_or(usize::MAX)
            });
            continue;
        }
        if let Some(Value::Array(named)) = messages[i].get("toolCalls") {
            for id in named
                .iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str))
            {
                let next = calls.len();
                calls.entry(id.to_owned()).or_insert(next);
            }
        }
        i += 1;
    }
    folded
}

/// The order events are normalised in: as they came, except that each run of neighbouring
/// events whose `type` is `unordered` is sorted by the event as the protocol's fields name it,
/// where every id the run mints reads the same.
/// Keys whose values an id pattern or id key never makes tokens: text the user reads, and
/// what says what an event or message is.
const NEVER_IDS: &[&str] = &[
    "type",
    "role",
    "delta",
    "content",
    "text",
    "message",
    "encryptedValue",
];

/// Refuses id patterns and id keys that could only take text or types for ids: a pattern of
/// nothing but wildcards (`*`) matches every string, and a key that holds text or a type (`content`, `delta`, `type`…) holds no id.
pub fn check_id_settings(patterns: &[String], keys: &[String]) -> Result<(), String> {
    if let Some(pattern) = patterns
        .iter()
        .find(|p| p.chars().all(|c| c == '*' || c == '?'))
    {
        return Err(format!(
            "--id-pattern `{pattern}` names nothing but wildcards: every string would be an id, \
             and streams that differ in what they say would compare the same; name what the ids \
             start or end with (e.g. 'lc_run--*')"
        ));
    }
    if let Some(key) = keys.iter().find(|k| NEVER_IDS.contains(&k.as_str())) {
        return Err(format!(
            "--id-key `{key}` holds text the user reads or what an event is, never an id: \
             name the key the ids sit under (e.g. checkpoint_ns)"
        ));
    }
    Ok(())
}

/// Event types whose order among their neighbours of the same type is what they mean:
/// deltas joined into one text, patches each applied to the state the one before left,
/// snapshots of which the last one wins, and the starts of messages and tool calls, whose
/// order is the order a client shows them in.
const ORDER_IS_MEANING: &[&str] = &[
    "TEXT_MESSAGE_START",
    "TOOL_CALL_START",
    "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_CHUNK",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_CHUNK",
    "THINKING_TEXT_MESSAGE_CONTENT",
    "STATE_DELTA",
    "STATE_SNAPSHOT",
    "MESSAGES_SNAPSHOT",
    "ACTIVITY_DELTA",
    "ACTIVITY_SNAPSHOT",
];

/// Refuses `--unordered` for what is no AG-UI event type, and for a type whose order is what
/// its events mean (deltas, patches, snapshots): two streams whose state or text differ would
/// compare the same.
pub fn check_unordered(types: &[String]) -> Result<(), String> {
    for ty in types {
        if crate::protocol::event::EventType::from_name(ty).is_none() {
            return Err(format!("--unordered {ty}: not an AG-UI event type"));
        }
        if ORDER_IS_MEANING.contains(&ty.as_str()) {
            return Err(format!(
                "--unordered {ty}: the order of {ty} events is what they mean (deltas are \
                 joined, patches applied, the last snapshot kept, messages and calls shown in \
                 the order they come), so streams that end with other text, state or order \
                 would compare the same; it is for events that may come in any order, such as \
                 parallel tool results (TOOL_CALL_RESULT)"
            ));
        }
    }
    Ok(())
}

/// Whether a string equal to an id the stream minted is that id where it stands (under
/// `key`): always in a field the protocol keeps ids in; never in text the user reads (a
/// delta, a message's or tool result's content); elsewhere (a payload, the state) only when
/// it cannot be a word or a number, as generated ids cannot (`m-0a1b`, `call_9f`, a UUID):
/// a message id "2" is not the answer "2", nor a tool call `yes` the result "yes".
fn learnt_id_may_stand_at(key: Option<&str>, value: &str) -> bool {
    let Some(key) = key else {
        return looks_minted(value);
    };
    if ID_FIELDS.iter().any(|(field, _)| *field == key)
        || ID_LIST_FIELDS.iter().any(|(field, _)| *field == key)
        || matches!(key, "id" | "entityId")
    {
        return true;
    }
    if matches!(key, "delta" | "content") {
        return false;
    }
    looks_minted(value)
}

/// What a value with a token's form is escaped with (see [`Settings::escape_tokens`]).
const TOKEN_ESCAPE: char = '~';

/// Whether `value` reads as a token ids are renamed to: a kind of id, `-`, a number (`msg-1`).
fn has_token_form(value: &str) -> bool {
    let Some((kind, n)) = value.rsplit_once('-') else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && (kind == "id" || ID_FIELDS.iter().any(|(_, k)| *k == kind))
}

/// Whether a string reads as a generated id rather than a word or a number: it holds a
/// character that is neither a letter nor a digit, or both letters and digits.
fn looks_minted(value: &str) -> bool {
    let letters = value.chars().any(char::is_alphabetic);
    let digits = value.chars().any(|c| c.is_ascii_digit());
    let other = value.chars().any(|c| !c.is_alphanumeric());
    other || (letters && digits)
}

fn canonical_order(settings: &Settings, events: &[Value]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    if settings.unordered.is_empty() {
        return order;
    }
    let loose = |event: &Value| {
        event
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| settings.unordered.iter().any(|u| u == t))
    };
    let mut probe = Normalizer::new(Settings::default());
    let mut i = 0;
    while i < events.len() {
        if !loose(&events[i]) {
            probe.protocol_event(&events[i]);
            i += 1;
            continue;
        }
        let mut end = i;
        while end < events.len() && loose(&events[end]) {
            end += 1;
        }
        // Each key from the same state: ids new to the run get the same next token in each.
        let mut keyed: Vec<(String, usize)> = (i..end)
            .map(|j| (probe.clone().protocol_event(&events[j]).to_string(), j))
            .collect();
        keyed.sort();
        for (at, (_, j)) in keyed.into_iter().enumerate() {
            probe.protocol_event(&events[j]);
            order[i + at] = j;
        }
        i = end;
    }
    order
}

fn redact_in(value: &mut Value, selectors: &[Selector], path: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                path.push(key.clone());
                if selectors.iter().any(|s| s.matches(path)) {
                    map.remove(&key);
                } else if let Some(child) = map.get_mut(&key) {
                    redact_in(child, selectors, path);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let mut index = 0;
            items.retain_mut(|item| {
                path.push(index.to_string());
                index += 1;
                let drop = selectors.iter().any(|s| s.matches(path));
                if !drop {
                    redact_in(item, selectors, path);
                }
                path.pop();
                !drop
            });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn normalize_all(events: &[Value], settings: Settings) -> Vec<Value> {
        let mut n = Normalizer::new(settings);
        events.iter().map(|e| n.event(e)).collect()
    }

    #[test]
    fn empty_input_lists_are_none() {
        let input = json!({"threadId": "t", "runId": "r", "messages": []});
        let mut listed = input.clone();
        listed["resume"] = json!([]);
        listed["tools"] = json!([]);
        listed["context"] = json!([]);
        let started = |input: &Value| {
            vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": input})]
        };
        for settings in [Settings::default(), Settings::current()] {
            let plain = normalize_all(&started(&input), settings.clone());
            assert_eq!(plain, normalize_all(&started(&listed), settings.clone()));
            // Something to resume is kept.
            let mut resumed = input.clone();
            resumed["resume"] = json!([{"interruptId": "i", "status": "resolved"}]);
            assert_ne!(plain, normalize_all(&started(&resumed), settings));
        }
        // Only a run input's list: elsewhere an empty list is what it says.
        let custom = json!({"type": "CUSTOM", "name": "x", "value": {"input": {"resume": []}}});
        let mut same = custom.clone();
        drop_empty_input_lists(&mut same);
        assert_eq!(same, custom);
    }

    /// `--unordered TOOL_CALL_RESULT` holds at the fold level too: neighbouring tool messages
    /// (parallel results) compare in any order, matched to their calls; their text still
    /// counts. It passed swapped results event by event and compacted, and failed folded.
    #[test]
    fn unordered_results_hold_at_the_fold_level() {
        let fold = |results: &[(&str, &str, &str)]| {
            let mut messages = vec![
                json!({"id": "u", "role": "user", "content": "go"}),
                json!({"id": "a", "role": "assistant", "toolCalls": [
                    {"id": "c-1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "c-2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}),
            ];
            for (id, call, content) in results {
                messages.push(
                    json!({"id": id, "role": "tool", "toolCallId": call, "content": content}),
                );
            }
            messages.push(json!({"id": "z", "role": "assistant", "content": "done"}));
            json!({"messages": messages, "state": null})
        };
        let a = fold(&[("r-1", "c-1", "one"), ("r-2", "c-2", "two")]);
        let b = fold(&[("r-9", "c-2", "two"), ("r-8", "c-1", "one")]);
        let wrong = fold(&[("r-9", "c-2", "one"), ("r-8", "c-1", "two")]);
        let unordered = Settings {
            unordered: vec!["TOOL_CALL_RESULT".into()],
            ..Settings::current()
        };
        assert_ne!(
            Normalizer::fold(Settings::current(), &a),
            Normalizer::fold(Settings::current(), &b)
        );
        assert_eq!(
            Normalizer::fold(unordered.clone(), &a),
            Normalizer::fold(unordered.clone(), &b)
        );
        assert_ne!(
            Normalizer::fold(unordered.clone(), &a),
            Normalizer::fold(unordered, &wrong)
        );
    }

    /// A run that finishes with `outcome: {"type": "success"}` says what one with no outcome
    /// says ("absent means success"): the two compare the same at every level; another
    /// outcome, or a success with more to it, does not.
    #[test]
    fn a_success_outcome_is_no_outcome() {
        let finished = |outcome: Option<Value>| {
            let mut event = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"});
            if let Some(outcome) = outcome {
                event["outcome"] = outcome;
            }
            vec![event]
        };
        for settings in [Settings::default(), Settings::current()] {
            let none = normalize_all(&finished(None), settings.clone());
            let success = normalize_all(
                &finished(Some(json!({"type": "success"}))),
                settings.clone(),
            );
            assert_eq!(none, success);
            for other in [
                json!({"type": "cancelled"}),
                json!({"type": "success", "note": 1}),
            ] {
                assert_ne!(
                    none,
                    normalize_all(&finished(Some(other)), settings.clone())
                );
            }
        }
    }

    /// A role that says what its absence says compares as its absence: an assistant's text
    /// message start or chunk, a tool call's result; another role does not.
    #[test]
    fn a_default_role_is_no_role() {
        for (event, default, other) in [
            (
                json!({"type": "TEXT_MESSAGE_START", "messageId": "m"}),
                "assistant",
                "user",
            ),
            (
                json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"}),
                "assistant",
                "user",
            ),
            (
                json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "x"}),
                "tool",
                "user",
            ),
        ] {
            for settings in [Settings::default(), Settings::current()] {
                let with = |role: &str| {
                    let mut event = event.clone();
                    event["role"] = json!(role);
                    normalize_all(&[event], settings.clone())
                };
                let none = normalize_all(std::slice::from_ref(&event), settings.clone());
                assert_eq!(none, with(default), "{event}");
                assert_ne!(none, with(other), "{event}");
            }
        }
    }

    #[test]
    fn ids_become_tokens_by_first_appearance() {
        let events = [
            json!({"type":"RUN_STARTED","threadId":"T9","runId":"R9","timestamp":5}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"uuid-a","role":"assistant"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c-x","toolCallName":"f","parentMessageId":"uuid-a"}),
            json!({"type":"TOOL_CALL_RESULT","messageId":"uuid-b","toolCallId":"c-x","content":"ok"}),
            json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"uuid-a","role":"assistant","toolCalls":[{"id":"c-x","type":"function","function":{"name":"f","arguments":"{\"id\":\"keep\"}"}}]}]}),
            json!({"type":"STATE_SNAPSHOT","snapshot":{"id":"keep-me"}}),
        ];
        let out = normalize_all(&events, Settings::default());
        assert_eq!(
            out[0],
            json!({"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"})
        );
        assert_eq!(out[2]["parentMessageId"], "msg-1");
        assert_eq!(out[2]["toolCallId"], "call-1");
        assert_eq!(out[3]["messageId"], "msg-2");
        assert_eq!(out[4]["messages"][0]["id"], "msg-1");
        assert_eq!(out[4]["messages"][0]["toolCalls"][0]["id"], "call-1");
        assert_eq!(out[5]["snapshot"]["id"], "keep-me", "state is data");
    }

    #[test]
    fn renamed_ids_compare_equal_and_moved_references_do_not() {
        let a = [
            json!({"type":"TEXT_MESSAGE_START","messageId":"a1"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"a2"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","parentMessageId":"a1"}),
        ];
        let renamed = [
            json!({"type":"TEXT_MESSAGE_START","messageId":"zz"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"yy"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"q","toolCallName":"f","parentMessageId":"zz"}),
        ];
        let moved = [
            json!({"type":"TEXT_MESSAGE_START","messageId":"a1"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"a2"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","parentMessageId":"a2"}),
        ];
        let n = |e: &[Value]| normalize_all(e, Settings::default());
        assert_eq!(n(&a), n(&renamed));
        assert_ne!(n(&a), n(&moved));
    }

    #[test]
    fn keep_and_redact() {
        let event = json!({"type":"CUSTOM","name":"n","value":{"metadata":{"x":1},"k":[{"metadata":2,"v":3}]},"timestamp":7,"metadata":{"y":1}});
        let settings = Settings {
            keep: vec!["timestamp".into()],
            redact: vec![Selector::parse("/**/metadata").unwrap()],
            ..Settings::default()
        };
        assert_eq!(
            normalize_all(&[event], settings)[0],
            json!({"type":"CUSTOM","name":"n","value":{"k":[{"v":3}]},"timestamp":7})
        );
        let s = Selector::parse("/messages/*/content").unwrap();
        assert!(s.matches(&["messages".into(), "3".into(), "content".into()]));
        assert!(!s.matches(&["messages".into(), "content".into()]));
        assert!(Selector::parse("metadata").is_err());
        // Redacting what says what an event is (or a whole fold) would make any two streams
        // of as many events compare the same.
        for everything in ["/*", "/**", "/type", "/**/*"] {
            assert!(Selector::parse(everything).is_err(), "{everything}");
        }
        assert!(Selector::parse("/state").is_ok());
        assert!(Selector::parse("/value/type").is_ok());
    }

    #[test]
    fn minted_ids_are_renamed_inside_payloads_too() {
        // Two runs of one agent: every id differs, and the ids reappear in RAW, CUSTOM and
        // state values, once before the protocol names them.
        let run = |t: &str, r: &str, m: &str, lc: &str| {
            vec![
                json!({"type":"RUN_STARTED","threadId":t,"runId":r}),
                json!({"type":"STATE_SNAPSHOT","snapshot":{"last_message":m,"run":r,"checkpoint_ns":format!("ns:{lc}")}}),
                json!({"type":"TEXT_MESSAGE_START","messageId":m,"role":"assistant"}),
                json!({"type":"RAW","event":{"run_id":lc,"thread":t,"note":"kept"}}),
                json!({"type":"CUSTOM","name":"seen","value":[m, "kept"]}),
                json!({"type":"RUN_FINISHED","threadId":t,"runId":r}),
            ]
        };
        let a = run("t-1", "r-1", "m-aaaa", "lc_run--1111");
        let b = run("t-2", "r-2", "m-bbbb", "lc_run--2222");
        let plain = |e: &[Value]| Normalizer::events(Settings::default(), e);
        assert_ne!(
            plain(&a),
            plain(&b),
            "only the protocol's fields: payloads differ"
        );
        let settings = Settings {
            id_patterns: vec!["lc_run--*".into()],
            id_keys: vec!["checkpoint_ns".into()],
            ..Settings::current()
        };
        let na = Normalizer::events(settings.clone(), &a);
        assert_eq!(na, Normalizer::events(settings, &b));
        assert_eq!(
            na[1]["snapshot"]["last_message"], "msg-1",
            "named before its start"
        );
        assert_eq!(na[1]["snapshot"]["run"], "run-1");
        assert_eq!(na[1]["snapshot"]["checkpoint_ns"], "id-1");
        assert_eq!(na[2]["messageId"], "msg-1");
        assert_eq!(
            na[3]["event"],
            json!({"run_id":"id-2","thread":"thread-1","note":"kept"})
        );
        assert_eq!(na[4]["value"], json!(["msg-1", "kept"]));
        // The protocol's fields get the tokens they get without payload ids.
        let protocol_only = plain(&a);
        for (with, without) in na.iter().zip(&protocol_only) {
            for field in ["threadId", "runId", "messageId"] {
                assert_eq!(with.get(field), without.get(field));
            }
        }
    }

    /// What an id pattern or id key names is never text the user reads (a delta, a message's
    /// or tool result's content, a content part's text, an error's message, an encrypted
    /// value) nor what says what an event or message is (`type`, `role`): `--id-pattern '*'`
    /// made any two streams of as many events compare the same, and `--id-key content` any
    /// two tool results. Patterns and keys that could only do that are refused.
    #[test]
    fn id_patterns_and_keys_leave_text_and_types_alone() {
        let stream = |text: &str| {
            vec![
                json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
                json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}),
                json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":text}),
                json!({"type":"TEXT_MESSAGE_END","messageId":"m"}),
                json!({"type":"TOOL_CALL_RESULT","messageId":"m2","toolCallId":"c","content":text}),
                json!({"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m","encryptedValue":text}),
                json!({"type":"RUN_ERROR","message":text}),
                json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u","role":"user","content":[{"type":"text","text":text}]}]}),
            ]
        };
        for (patterns, keys) in [(vec!["*-*"], vec![]), (vec!["a-*"], vec!["delta", "text"])] {
            let settings = Settings {
                id_patterns: patterns.iter().map(|p| p.to_string()).collect(),
                id_keys: keys.iter().map(|k| k.to_string()).collect(),
                ..Settings::current()
            };
            let a = Normalizer::events(settings.clone(), &stream("a-1"));
            let b = Normalizer::events(settings.clone(), &stream("a-2"));
            for i in [2, 4, 5, 6, 7] {
                assert_ne!(a[i], b[i], "{patterns:?} {keys:?}: event {i}: {}", a[i]);
            }
            assert_eq!(a[2]["type"], "TEXT_MESSAGE_CONTENT");
        }
        for bad in ["*", "**", "?*", "*?*"] {
            assert!(check_id_settings(&[bad.to_owned()], &[]).is_err(), "{bad}");
        }
        for bad in [
            "type",
            "delta",
            "content",
            "text",
            "role",
            "encryptedValue",
            "message",
        ] {
            assert!(check_id_settings(&[], &[bad.to_owned()]).is_err(), "{bad}");
        }
        assert!(check_id_settings(&["lc_run--*".into()], &["checkpoint_ns".into()]).is_ok());
        for bad in [
            "STATE_DELTA",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_START",
            "NOT_A_TYPE",
        ] {
            assert!(check_unordered(&[bad.to_owned()]).is_err(), "{bad}");
        }
        assert!(check_unordered(&["TOOL_CALL_RESULT".into(), "CUSTOM".into()]).is_ok());
    }

    /// Text the user reads, and values that read as words or numbers, are never taken for
    /// the ids they happen to equal: a message id "2" answering "2", against id "4"
    /// answering "4", compared as the same, and so did a tool call `yes` with the result
    /// "yes" against `no` with "no", and a state's quantity "1" against "7".
    #[test]
    fn text_and_plain_words_are_not_ids() {
        let stream = |id: &str, call: &str, quantity: &str| {
            vec![
                json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
                json!({"type":"STATE_SNAPSHOT","snapshot":{"quantity":quantity}}),
                json!({"type":"TEXT_MESSAGE_START","messageId":id,"role":"assistant"}),
                json!({"type":"TEXT_MESSAGE_CONTENT","messageId":id,"delta":id}),
                json!({"type":"TEXT_MESSAGE_END","messageId":id}),
                json!({"type":"TOOL_CALL_START","toolCallId":call,"toolCallName":"ask"}),
                json!({"type":"TOOL_CALL_END","toolCallId":call}),
                json!({"type":"TOOL_CALL_RESULT","messageId":"m-result","toolCallId":call,"content":call}),
                json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
            ]
        };
        let normal = |e: &[Value]| Normalizer::events(Settings::current(), e);
        let a = normal(&stream("2", "yes", "2"));
        let b = normal(&stream("4", "no", "4"));
        for i in [1, 3, 7] {
            assert_ne!(a[i], b[i], "event {i}: {} against {}", a[i], b[i]);
        }
        // The protocol's fields are still ids, whatever they read as.
        assert_eq!(a[2], b[2]);
        assert_eq!(a[5], b[5]);
        // And a minted id in a payload is one, as before.
        let minted = normal(&stream("m-0a1b", "call_9f", "m-0a1b"));
        assert_eq!(minted[1]["snapshot"]["quantity"], "msg-1");
    }

    /// A plain value with a token's form, where a token may stand, is no token: a state's
    /// "msg-1" that names nothing was the same as another stream's first message's id.
    #[test]
    fn a_plain_value_is_never_taken_for_a_token() {
        let stream = |id: &str, focus: &str| {
            vec![
                json!({"type":"TEXT_MESSAGE_START","messageId":id,"role":"assistant"}),
                json!({"type":"STATE_SNAPSHOT","snapshot":{"focus":focus,"note":"~x","text":"msg-2"}}),
            ]
        };
        let normal = |e: &[Value]| Normalizer::events(Settings::current(), e);
        let named = normal(&stream("msg-1", "msg-1"));
        let plain = normal(&stream("a7f3c9e1-0b2d", "msg-1"));
        assert_eq!(named[1]["snapshot"]["focus"], "msg-1");
        assert_eq!(plain[1]["snapshot"]["focus"], "~msg-1");
        assert_ne!(named[1], plain[1]);
        // The escape is escaped too, so no two values become one.
        assert_eq!(plain[1]["snapshot"]["note"], "~~x");
        // Written before escaping, a snapshot compares as it was written.
        let old = Normalizer::events(Settings::default(), &stream("a7f3c9e1-0b2d", "msg-1"));
        assert_eq!(old[0]["messageId"], "msg-1");
        assert_eq!(old[1]["snapshot"]["focus"], "msg-1");
    }

    #[test]
    fn unordered_runs_compare_in_any_order() {
        let result = |call: &str, content: &str| json!({"type":"TOOL_CALL_RESULT","messageId":format!("r-{call}"),"toolCallId":call,"content":content});
        let start =
            |call: &str| json!({"type":"TOOL_CALL_START","toolCallId":call,"toolCallName":"f"});
        let a = [start("a"), start("b"), result("a", "1"), result("b", "2")];
        let b = [start("a"), start("b"), result("b", "2"), result("a", "1")];
        let settings = |unordered: Vec<String>| Settings {
            unordered,
            ..Settings::current()
        };
        assert_ne!(
            Normalizer::events(settings(vec![]), &a),
            Normalizer::events(settings(vec![]), &b)
        );
        let loose = vec!["TOOL_CALL_RESULT".to_string()];
        let na = Normalizer::events(settings(loose.clone()), &a);
        assert_eq!(na, Normalizer::events(settings(loose.clone()), &b));
        assert_eq!(na[2]["toolCallId"], "call-1");
        assert_eq!(
            na[2]["messageId"], "msg-1",
            "the ids a result mints follow the order"
        );
        // A run is only the neighbouring events: one result moved past another event is not.
        let apart = [start("a"), result("a", "1"), start("b"), result("b", "2")];
        assert_ne!(na, Normalizer::events(settings(loose), &apart));
    }
}
