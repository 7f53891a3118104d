//! Normalisation for comparing streams by meaning: generated identities become stable tokens
//! by order of first appearance (`msg-1`, `call-1`, `run-1` …, the same value always the same
//! token, so a reference that points elsewhere is still a difference), volatile fields are
//! dropped, and selected parts are redacted.
//!
//! Only the protocol's own structure is renamed: ids inside data the protocol carries without
//! interpreting (state, CUSTOM values, activity content, tool arguments) are left alone.

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
        Ok(Selector {
            text: text.to_owned(),
            segments,
        })
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
}

/// Renames identities consistently across everything it normalises.
#[derive(Debug)]
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

    /// Normalises one event.
    pub fn event(&mut self, event: &Value) -> Value {
        let mut event = event.clone();
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
        let mut folded = folded.clone();
        if let Some(Value::Array(messages)) = folded.get_mut("messages") {
            for message in messages {
                self.message(message);
            }
        }
        self.redact(&mut folded);
        folded
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
        };
        assert_eq!(
            normalize_all(&[event], settings)[0],
            json!({"type":"CUSTOM","name":"n","value":{"k":[{"v":3}]},"timestamp":7})
        );
        let s = Selector::parse("/messages/*/content").unwrap();
        assert!(s.matches(&["messages".into(), "3".into(), "content".into()]));
        assert!(!s.matches(&["messages".into(), "content".into()]));
        assert!(Selector::parse("metadata").is_err());
    }
}
