//! The request a client sends next on a thread: what it holds after applying the previous
//! stream (its fold), plus what the user or the application adds — a message, the results of
//! the frontend tool calls the agent left waiting, answers to the interrupts a run ended with.
//!
//! `agui-lens test` builds each later turn of a conversation with it, so an agent is called
//! the way a client that folded the stream correctly would call it.

use serde_json::{Map, Value};

use super::Folded;

/// A tool call the last run left waiting for its result: no tool message answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingCall {
    pub id: String,
    pub name: String,
    /// The arguments as the agent streamed them (a JSON text, not checked here).
    pub arguments: String,
}

/// The tool calls of the folded messages that no tool message answers, in the order they
/// were made. In a conversation, these are the frontend tools the agent asked the client to
/// run (the agent answers its own server tools with TOOL_CALL_RESULT).
pub fn pending_calls(messages: &[Map<String, Value>]) -> Vec<PendingCall> {
    let answered: std::collections::HashSet<&str> = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
        .filter_map(|m| m.get("toolCallId").and_then(Value::as_str))
        .collect();
    let mut pending = Vec::new();
    for message in messages {
        let Some(Value::Array(calls)) = message.get("toolCalls") else {
            continue;
        };
        for call in calls {
            let Some(id) = call.get("id").and_then(Value::as_str) else {
                continue;
            };
            if answered.contains(id) || pending.iter().any(|p: &PendingCall| p.id == id) {
                continue;
            }
            let function = call.get("function");
            let text = |key: &str| {
                function
                    .and_then(|f| f.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            pending.push(PendingCall {
                id: id.to_owned(),
                name: text("name"),
                arguments: text("arguments"),
            });
        }
    }
    pending
}

/// What the next request adds to what the client holds.
#[derive(Clone, Debug, Default)]
pub struct Additions {
    /// Messages appended after the folded history (tool results first, then a user message,
    /// as a client sends them).
    pub messages: Vec<Value>,
    /// Resume entries answering the interrupts the previous run ended with.
    pub resume: Vec<Value>,
}

/// The RunAgentInput that follows `previous` on the same thread once its stream folded into
/// `folded`: same threadId, tools, context and forwarded properties; `run_id` as the run's
/// id; the folded messages (activity messages stay with the client: they are never sent)
/// followed by the additions; the folded state (the previous state when the stream set none);
/// `resume` only when there is something to resume.
pub fn next_input(
    previous: &Map<String, Value>,
    folded: &Folded,
    run_id: &str,
    additions: Additions,
) -> Map<String, Value> {
    let mut next = previous.clone();
    next.insert("runId".into(), Value::String(run_id.to_owned()));
    let mut messages: Vec<Value> = folded
        .messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) != Some("activity"))
        .cloned()
        .map(Value::Object)
        .collect();
    messages.extend(additions.messages);
    next.insert("messages".into(), Value::Array(messages));
    if let Some(state) = &folded.state {
        next.insert("state".into(), state.clone());
    }
    if additions.resume.is_empty() {
        next.remove("resume");
    } else {
        next.insert("resume".into(), Value::Array(additions.resume));
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::testing::fold_from_input as fold;
    use serde_json::json;

    #[test]
    fn a_frontend_tool_call_is_pending_until_a_tool_message_answers_it() {
        let input = json!({"threadId": "t", "runId": "r1", "state": {"n": 0},
            "messages": [{"id": "u1", "role": "user", "content": "hi"}],
            "tools": [{"name": "paint", "description": "", "parameters": {}}],
            "context": [], "forwardedProps": {"x": 1}});
        let events = [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 1}]}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "s1", "toolCallName": "lookup"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "s1"}),
            json!({"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "s1", "content": "ok"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "f1", "toolCallName": "paint"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "f1", "delta": "{\"c\":1}"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "f1"}),
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "x", "content": {}}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
        ];
        let folded = fold(&input, &events);
        let pending = pending_calls(&folded.messages);
        assert_eq!(
            pending,
            vec![PendingCall {
                id: "f1".into(),
                name: "paint".into(),
                arguments: "{\"c\":1}".into()
            }]
        );
        let answer = json!({"id": "m3", "role": "tool", "toolCallId": "f1", "content": "done"});
        let next = next_input(
            input.as_object().unwrap(),
            &folded,
            "r2",
            Additions {
                messages: vec![answer.clone()],
                resume: Vec::new(),
            },
        );
        assert_eq!(next["runId"], "r2");
        assert_eq!(next["threadId"], "t");
        assert_eq!(next["state"], json!({"n": 1}));
        assert_eq!(next["tools"], input["tools"]);
        assert_eq!(next["forwardedProps"], json!({"x": 1}));
        let messages = next["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "tool", "assistant", "tool"]);
        assert_eq!(messages.last().unwrap(), &answer);
        let answered: Vec<Map<String, Value>> = messages
            .iter()
            .map(|m| m.as_object().unwrap().clone())
            .collect();
        assert!(pending_calls(&answered).is_empty());
        assert!(!next.contains_key("resume"));
    }

    #[test]
    fn resume_is_sent_only_with_entries() {
        let input = json!({"threadId": "t", "runId": "r1", "messages": [],
            "resume": [{"interruptId": "old", "status": "resolved"}]});
        let folded = fold(&input, &[]);
        let entry = json!({"interruptId": "i1", "status": "resolved", "payload": true});
        let next = next_input(
            input.as_object().unwrap(),
            &folded,
            "r2",
            Additions {
                messages: Vec::new(),
                resume: vec![entry.clone()],
            },
        );
        assert_eq!(next["resume"], json!([entry]));
        let after = next_input(&next, &folded, "r3", Additions::default());
        assert!(!after.contains_key("resume"));
    }
}
