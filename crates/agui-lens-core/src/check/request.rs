//! Requests a client sent (a browser capture's entries, the requests `agui-lens serve`
//! answers): held to the RunAgentInput schema of the version they declare, and, on the next
//! turn of a thread, to what the previous stream left the client holding.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::check::catalog::RuleId;
use crate::check::diagnostic::{Diagnostic, Severity};
use crate::check::schema::{SchemaFinding, SchemaSet};
use crate::fold::Folded;
use crate::fold::next::pending_calls;
use crate::protocol::version::{Version, judged_by};

/// Whether `status` is one an agent refuses an input with (400, 422): what it may answer to
/// an input that breaks its schema.
pub fn refuses_an_input(status: u16) -> bool {
    matches!(status, 400 | 422)
}

/// What breaks a request's RunAgentInput: one `request/input-schema` finding per place (a
/// field the schema does not define is not one: agents ignore it). `asked` is `--protocol`.
pub fn input_findings(
    schemas: &SchemaSet,
    input: &Value,
    asked: Option<Version>,
    path: &Arc<str>,
) -> Vec<Diagnostic> {
    let declared = input.get("protocolVersion").and_then(Value::as_str);
    let version = judged_by(declared, asked);
    let findings = match schemas.for_version(version).validate_input(input) {
        Ok(findings) => findings,
        Err(err) => {
            let message = format!("the request's RunAgentInput could not be checked: {err:#}");
            return vec![whole(path, message)];
        }
    };
    let shown = |pointer: &str| {
        if pointer.is_empty() {
            "the input".to_owned()
        } else {
            pointer.to_owned()
        }
    };
    let mut found: Vec<Diagnostic> = findings
        .into_iter()
        .filter_map(|finding| match finding {
            SchemaFinding::Violation {
                pointer,
                message,
                help,
                ..
            } => {
                let d = whole(
                    path,
                    format!(
                        "the request's RunAgentInput breaks the protocol {version} schema at {}: {message}",
                        shown(&pointer)
                    ),
                );
                Some(match help {
                    Some(help) => d.with_help(help),
                    None => d,
                })
            }
            SchemaFinding::NullForOptional { pointer, .. } => Some(
                whole(
                    path,
                    format!(
                        "the request's RunAgentInput has null for the optional {}",
                        shown(&pointer)
                    ),
                )
                .with_help("leave an optional field out rather than sending null"),
            ),
            SchemaFinding::UnknownField { .. } => None,
        })
        .collect();
    // A messageId MUST be unique within its thread: the history a request sends is one.
    let mut ids = std::collections::HashSet::new();
    for message in messages_of(input) {
        let Some(id) = message.get("id").and_then(Value::as_str) else {
            continue;
        };
        if !ids.insert(id) {
            found.push(
                finding(
                    RuleId::ReferenceDuplicateMessageId,
                    path,
                    format!("the request's messages hold message id \"{id}\" more than once"),
                )
                .with_help(
                    "give every message its own id; clients and agents merge messages by id",
                ),
            );
        }
    }
    found
}

/// A request body read as a RunAgentInput: the JSON object it holds, or what it is instead,
/// as [`unreadable_body`] says it ("is not JSON: …", "is JSON, but no object: an array").
pub fn request_body(bytes: &[u8]) -> Result<Value, String> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(value) => Err(format!(
            "is JSON, but no object: {}",
            match value {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "an array",
            }
        )),
        Err(err) => Err(format!("is not JSON: {err}")),
    }
}

/// `request/input-schema` for a request body that is no JSON object (`problem`, as
/// [`request_body`] says it).
pub fn unreadable_body(path: &Arc<str>, problem: &str) -> Diagnostic {
    whole(
        path,
        format!("the request's body {problem}: it could not be held to the request rules"),
    )
}

fn whole(path: &Arc<str>, message: String) -> Diagnostic {
    let severity = RuleId::RequestInputSchema
        .rule()
        .default
        .severity()
        .unwrap_or(Severity::Error);
    Diagnostic::whole_input(RuleId::RequestInputSchema, severity, path.clone(), message)
}

/// What `request/protocol-version` says of a request that declares no version: a finding
/// only from 1.0 on (see [`sent_findings`]).
pub const NO_VERSION_DECLARED: &str = "the request's RunAgentInput declares no protocolVersion";

/// What any request a client sends is held to beyond its schema: a declared protocol version
/// (from 1.0 on: a client judged by the rules before 1.0, `asked` 0.x, had none to declare),
/// and no activity messages (they stay with the client).
pub fn sent_findings(input: &Value, asked: Option<Version>, path: &Arc<str>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let declared = input.get("protocolVersion");
    if let Some(text) = declared.and_then(Value::as_str).filter(|text| {
        crate::protocol::version::read_declared(text)
            == crate::protocol::version::Declared::Uninterpretable
    }) {
        found.push(
            finding(
                RuleId::RequestProtocolVersion,
                path,
                format!(
                    "the request's RunAgentInput declares protocolVersion {text:?}, which is not \
                     MAJOR.MINOR: it says nothing of which version the client speaks"
                ),
            )
            .with_help("send the protocol version the client implements as the spec names it: \"1.0\", \"1.1\""),
        );
    }
    if declared.is_none() && judged_by(None, asked) >= Version::V1_0 {
        found.push(
            finding(
                RuleId::RequestProtocolVersion,
                path,
                NO_VERSION_DECLARED.to_owned(),
            )
            .with_help("send the protocol version the client implements, e.g. \"protocolVersion\": \"1.1\" (MAJOR.MINOR, as the spec publishes versions)"),
        );
    }
    for message in messages_of(input) {
        if role_of(message) == Some("activity") {
            found.push(
                finding(
                    RuleId::RequestActivitySent,
                    path,
                    format!(
                        "the request sends the activity message {} back to the agent",
                        id_text(message)
                    ),
                )
                .with_help("strip activity messages from `messages` before sending"),
            );
        }
    }
    found
}

/// What the request on the next turn of a thread is held to, `previous` being what a client
/// that applied the previous stream holds ([`crate::fold::Folder`] seeded with the previous
/// request's messages and state): every message it holds, in its order and unchanged (new
/// ones may be added anywhere after the last), a tool message for each frontend tool call the
/// run left pending, a resume entry for each interrupt it ended with, and its state.
pub fn next_turn_findings(input: &Value, previous: &Folded, path: &Arc<str>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let sent = messages_of(input);
    let position = |id: &str| {
        sent.iter()
            .position(|m| m.get("id").and_then(Value::as_str) == Some(id))
    };
    let mut last_at: Option<usize> = None;
    for held in previous
        .messages
        .iter()
        .filter(|m| role_of_map(m) != Some("activity"))
    {
        let Some(id) = held.get("id").and_then(Value::as_str) else {
            continue;
        };
        let Some(at) = position(id) else {
            found.push(history(
                path,
                format!(
                    "the request leaves out the {} message {id} the previous stream left the client holding",
                    role_of_map(held).unwrap_or("untyped")
                ),
            ));
            continue;
        };
        if let Some(field) = first_difference(held, &sent[at]) {
            found.push(history(
                path,
                format!(
                    "the request's message {id} differs from what the previous stream left at {field}: sent {}, expected {}",
                    shown(sent[at].get(field.as_str())),
                    shown(held.get(field.as_str()))
                ),
            ));
        }
        if last_at.is_some_and(|last| at < last) {
            found.push(history(
                path,
                format!("the request's message {id} comes before a message that preceded it in the previous stream"),
            ));
        }
        last_at = Some(last_at.map_or(at, |last| last.max(at)));
    }

    let finished = previous
        .runs
        .last()
        .is_some_and(|run| run.status == "finished");
    let gated: Vec<&str> = previous
        .pending_interrupts
        .iter()
        .filter_map(|i| i.get("toolCallId").and_then(Value::as_str))
        .collect();
    if finished {
        let answered = |call: &str| {
            sent.iter().any(|m| {
                role_of(m) == Some("tool")
                    && m.get("toolCallId").and_then(Value::as_str) == Some(call)
            })
        };
        for call in pending_calls(&previous.messages) {
            if gated.contains(&call.id.as_str()) || answered(&call.id) {
                continue;
            }
            found.push(
                finding(
                    RuleId::RequestMissingToolResult,
                    path,
                    format!(
                        "the request does not answer the tool call {} ({}) the previous run left pending: no tool message has toolCallId \"{}\"",
                        call.id, call.name, call.id
                    ),
                )
                .with_help("send a tool message per pending call, keyed by toolCallId (a declined or failed call is answered by saying so)"),
            );
        }
    }

    let resumed: Vec<&str> = input
        .get("resume")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e.get("interruptId").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    for interrupt in &previous.pending_interrupts {
        let Some(id) = interrupt.get("id").and_then(Value::as_str) else {
            continue;
        };
        if !resumed.contains(&id) {
            found.push(
                finding(
                    RuleId::RequestMissingResume,
                    path,
                    format!("the request has no resume entry for the interrupt {id} the previous run ended with"),
                )
                .with_help("answer every interrupt of the interrupted run in `resume`, or abandon it with an entry that says so"),
            );
        }
    }

    let open: Vec<&str> = previous
        .pending_interrupts
        .iter()
        .filter_map(|i| i.get("id").and_then(Value::as_str))
        .collect();
    for id in resumed.iter().filter(|id| !open.contains(id)) {
        let message = if open.is_empty() {
            format!(
                "the request's resume entry answers interrupt {id:?}, but the previous run did \
                 not end with an interrupt: it answers nothing"
            )
        } else {
            format!(
                "the request's resume entry answers interrupt {id:?}, which is not one the \
                 previous run ended with ({})",
                open.iter()
                    .map(|id| format!("{id:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        found.push(
            finding(RuleId::RequestUnknownResume, path, message).with_help(
                "resume only the interrupts of the run being continued, the most recent \
                 interrupted run on the thread; once a run answers them they are closed",
            ),
        );
    }

    if let Some(run_id) = input.get("runId").and_then(Value::as_str)
        && previous
            .runs
            .iter()
            .any(|run| run.run_id.as_deref() == Some(run_id))
    {
        found.push(
            finding(
                RuleId::RequestRunIdReused,
                path,
                format!(
                    "the request asks for run {run_id:?} again: the previous stream on this \
                     thread carried that run"
                ),
            )
            .with_help("give each run the client asks for an id of its own (the official client mints a UUID per runAgent call)"),
        );
    }

    let empty = Value::Object(Map::new());
    let expected = previous.state.as_ref().unwrap_or(&empty);
    let state = input
        .get("state")
        .filter(|s| !s.is_null())
        .unwrap_or(&empty);
    if !same_json(expected, state) {
        found.push(
            finding(
                RuleId::RequestStateMismatch,
                path,
                format!(
                    "the request's state differs from the state the previous stream left: sent {}, expected {}",
                    shown(Some(state)),
                    shown(Some(expected))
                ),
            )
            .with_help("send the state as the last snapshot and deltas left it (unless the application changed it on purpose)"),
        );
    }
    found
}

/// The fields of a held message compared with the one sent, in this order; the first that
/// differs is reported.
const COMPARED: &[&str] = &[
    "role",
    "content",
    "toolCalls",
    "toolCallId",
    "name",
    "error",
];

fn first_difference(held: &Map<String, Value>, sent: &Value) -> Option<String> {
    COMPARED.iter().find_map(|field| {
        let a = held.get(*field).filter(|v| !v.is_null());
        let b = sent.get(*field).filter(|v| !v.is_null());
        let same = match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => same_json(a, b),
            // An assistant message with no text: absent or empty content is the same.
            (None, Some(Value::String(s))) | (Some(Value::String(s)), None) => {
                *field == "content" && s.is_empty()
            }
            (None, Some(Value::Array(a))) | (Some(Value::Array(a)), None) => {
                *field == "toolCalls" && a.is_empty()
            }
            _ => false,
        };
        (!same).then(|| (*field).to_owned())
    })
}

/// JSON equality with numbers compared by value (`1.0` is `1`), as a client that parsed and
/// re-serialised them sends them.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x == y)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn shown(value: Option<&Value>) -> String {
    /// Longest value shown whole.
    const SHOWN: usize = 80;
    let text = value.map_or_else(|| "nothing".to_owned(), Value::to_string);
    if text.chars().count() > SHOWN {
        let cut: String = text.chars().take(SHOWN).collect();
        format!("{cut}…")
    } else {
        text
    }
}

fn messages_of(input: &Value) -> &[Value] {
    input
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn role_of(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

fn role_of_map(message: &Map<String, Value>) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

fn id_text(message: &Value) -> String {
    message
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| "with no id".to_owned(), str::to_owned)
}

fn history(path: &Arc<str>, message: String) -> Diagnostic {
    finding(RuleId::RequestHistoryMismatch, path, message).with_help(
        "send every message the client holds after applying the stream, in order and unchanged, then what it adds",
    )
}

fn finding(rule: RuleId, path: &Arc<str>, message: String) -> Diagnostic {
    let severity = rule.rule().default.severity().unwrap_or(Severity::Error);
    Diagnostic::whole_input(rule, severity, path.clone(), message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::testing::fold_from_input as fold;
    use serde_json::json;

    fn rules(found: &[Diagnostic]) -> Vec<&'static str> {
        found.iter().map(|d| d.rule.name()).collect()
    }

    fn first_turn() -> (Value, Folded) {
        let input = json!({"threadId": "t", "runId": "r1", "protocolVersion": "1.1",
            "state": {"n": 0}, "messages": [{"id": "u1", "role": "user", "content": "hi"}]});
        let events = [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 1.0}]}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "on it"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "f1", "toolCallName": "paint", "parentMessageId": "m1"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "f1", "delta": "{}"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "f1"}),
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "plan", "content": {}}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
        ];
        let folded = fold(&input, &events);
        (input, folded)
    }

    /// A request's version is read as a run's: one that is no `MAJOR.MINOR` ("latest", a
    /// package release) says nothing of which version the client speaks, and is
    /// `request/protocol-version` as one declaring none is; a newer one is the client's to
    /// declare; one that is no string is the schema's to say (`request/input-schema`).
    #[test]
    fn a_client_before_versioning_is_asked_for_no_version() {
        // `--protocol 0.x`: a client from before 1.0 declares no version, as its release had
        // none to declare (the rule holds 1.0 and later).
        let path: Arc<str> = Arc::from("request.json");
        let input = json!({"threadId": "t", "runId": "r", "messages": []});
        assert!(rules(&sent_findings(&input, Some(Version::Pre1), &path)).is_empty());
        for asked in [None, Some(Version::V1_0), Some(Version::V1_1)] {
            assert_eq!(
                rules(&sent_findings(&input, asked, &path)),
                ["request/protocol-version"],
                "{asked:?}"
            );
        }
    }

    #[test]
    fn a_version_that_is_no_major_minor_is_said() {
        let path: Arc<str> = Arc::from("request 1");
        for (declared, said) in [
            (json!("latest"), true),
            (json!("1.0.0"), true),
            (json!(1.1), false),
            (json!("1.1"), false),
            (json!("1.0"), false),
            (json!("2.0"), false),
        ] {
            let input = json!({"threadId": "t", "runId": "r", "messages": [],
                "protocolVersion": declared});
            let found = sent_findings(&input, None, &path);
            assert_eq!(
                rules(&found) == ["request/protocol-version"],
                said,
                "{declared}: {:?}",
                found.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
            if said {
                assert!(
                    found[0].message.contains("MAJOR.MINOR"),
                    "{}",
                    found[0].message
                );
            }
        }
    }

    /// What the protocol allows is no finding: the held messages as JSON re-serialised them
    /// (`1.0` as `1`), the call answered, a new user message after, activity left out.
    #[test]
    fn a_client_that_answers_and_adds_a_message_passes() {
        let (_, folded) = first_turn();
        let next = json!({"threadId": "t", "runId": "r2", "protocolVersion": "1.1",
        "state": {"n": 1},
        "messages": [
            {"id": "u1", "role": "user", "content": "hi"},
            {"id": "m1", "role": "assistant", "content": "on it",
             "toolCalls": [{"id": "f1", "type": "function", "function": {"name": "paint", "arguments": "{}"}}]},
            {"id": "r1", "role": "tool", "toolCallId": "f1", "content": "painted"},
            {"id": "u2", "role": "user", "content": "thanks"}
        ]});
        let path: Arc<str> = "t".into();
        assert!(rules(&next_turn_findings(&next, &folded, &path)).is_empty());
        assert!(rules(&sent_findings(&next, None, &path)).is_empty());
    }

    #[test]
    fn a_dropped_reordered_or_changed_message_a_missing_answer_and_a_stale_state_are_found() {
        let (_, folded) = first_turn();
        let path: Arc<str> = "t".into();
        let m1 = json!({"id": "m1", "role": "assistant", "content": "on it",
            "toolCalls": [{"id": "f1", "type": "function", "function": {"name": "paint", "arguments": "{}"}}]});
        let dropped = json!({"state": {"n": 1}, "messages": [m1]});
        assert_eq!(
            rules(&next_turn_findings(&dropped, &folded, &path)),
            ["request/history-mismatch", "request/missing-tool-result"]
        );
        let reordered = json!({"state": {"n": 1}, "messages": [m1, {"id": "u1", "role": "user", "content": "hi"},
            {"id": "r1", "role": "tool", "toolCallId": "f1", "content": "x"}]});
        assert_eq!(
            rules(&next_turn_findings(&reordered, &folded, &path)),
            ["request/history-mismatch"]
        );
        let stale = json!({"messages": [{"id": "u1", "role": "user", "content": "hi"}, m1,
            {"id": "r1", "role": "tool", "toolCallId": "f1", "content": "x"},
            {"id": "a1", "role": "activity", "activityType": "plan", "content": {}}]});
        assert_eq!(
            rules(&next_turn_findings(&stale, &folded, &path)),
            ["request/state-mismatch"]
        );
        assert_eq!(
            rules(&sent_findings(&stale, None, &path)),
            ["request/protocol-version", "request/activity-sent"]
        );
    }

    /// A call an interrupt names is answered by the resume entry, not a tool message.
    #[test]
    fn an_interrupt_asks_for_a_resume_entry_and_covers_its_tool_call() {
        let input = json!({"threadId": "t", "runId": "r1", "messages": []});
        let events = [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "transfer"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1",
                "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval", "toolCallId": "c1"}]}}),
        ];
        let folded = fold(&input, &events);
        let messages = json!(folded.messages.clone());
        let path: Arc<str> = "t".into();
        let unanswered = json!({"messages": messages});
        assert_eq!(
            rules(&next_turn_findings(&unanswered, &folded, &path)),
            ["request/missing-resume"]
        );
        let resumed = json!({"messages": messages,
            "resume": [{"interruptId": "i1", "status": "resolved", "payload": true}]});
        assert!(rules(&next_turn_findings(&resumed, &folded, &path)).is_empty());
        // An entry for an interrupt this run did not end with names nothing to answer.
        let stray = json!({"messages": messages,
            "resume": [{"interruptId": "i1", "status": "resolved", "payload": true},
                {"interruptId": "i0", "status": "resolved", "payload": true}]});
        let found = next_turn_findings(&stray, &folded, &path);
        assert_eq!(rules(&found), ["request/unknown-resume"]);
        assert!(found[0].message.contains("\"i0\""), "{}", found[0].message);

        // Resumed, the interrupt is answered: the next request sending the entry again (or
        // any entry) after a run that ended without one answers nothing.
        let input = json!({"threadId": "t", "runId": "r2", "messages": messages,
            "resume": [{"interruptId": "i1", "status": "resolved", "payload": true}]});
        let events = [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
            json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "done"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}),
        ];
        let after = fold(&input, &events);
        let again = json!({"messages": json!(after.messages.clone()),
            "resume": [{"interruptId": "i1", "status": "resolved", "payload": true}]});
        let found = next_turn_findings(&again, &after, &path);
        assert_eq!(rules(&found), ["request/unknown-resume"]);
        assert!(
            found[0].message.contains("did not end with an interrupt"),
            "{}",
            found[0].message
        );
    }
}
