//! Reference rules: ids that point at other things (a tool result at its call, a tool call at
//! its message, an encrypted value at its entity) point at something the stream knows.

use std::collections::HashSet;

use serde_json::Value;

use super::protocol::{Ev, Out};
use super::{Level, Rule, RuleId};
use crate::event::EventType;
use crate::idset::IdSet;

pub const UNKNOWN_TOOL_CALL: Rule = Rule {
    name: "reference/unknown-tool-call",
    default: Level::Deny,
    summary: "a tool result for a toolCallId no tool call declares (TOOL_CALL_RESULT, or a tool message in MESSAGES_SNAPSHOT)",
    why: "Clients attach a result to its call; a result for an unknown call is shown detached \
          or dropped, and model providers reject a history whose tool message answers no call.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c9","content":"ok"}
"#,
};

pub const UNKNOWN_PARENT_MESSAGE: Rule = Rule {
    name: "reference/unknown-parent-message",
    default: Level::Warn,
    summary: "TOOL_CALL_START.parentMessageId names no known message",
    why: "Clients attach the call to its parent message, or open a new assistant message when \
          they cannot find it, splitting one turn in two.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m404"}
"#,
};

pub const UNKNOWN_ENTITY: Rule = Rule {
    name: "reference/unknown-entity",
    default: Level::Warn,
    summary: "REASONING_ENCRYPTED_VALUE names no known message or tool call",
    why: "The encrypted value is attached to its entity so it can be sent back on the next \
          turn; one that names nothing is lost.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"r404","encryptedValue":"gAAA"}
"#,
};

pub const DUPLICATE_MESSAGE_ID: Rule = Rule {
    name: "reference/duplicate-message-id",
    default: Level::Deny,
    summary: "a message id repeated inside one MESSAGES_SNAPSHOT (or RUN_STARTED.input)",
    why: "Clients merge snapshots by id; two messages with one id collapse into one, losing \
          the other.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","content":"a"},{"id":"m1","role":"user","content":"b"}]}
"#,
};

/// Every message and tool call id the stream has named, in any run.
#[derive(Default)]
pub struct References {
    messages: IdSet,
    tool_calls: IdSet,
}

impl References {
    pub fn on_event(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        use EventType::*;
        match ev.ty {
            TextMessageStart | ReasoningMessageStart | ReasoningStart | ActivitySnapshot => {
                if let Some(id) = ev.str("messageId") {
                    self.messages.insert(id);
                }
            }
            ToolCallStart => {
                if let Some(id) = ev.str("toolCallId") {
                    self.tool_calls.insert(id);
                }
                if let Some(parent) = ev.str("parentMessageId") {
                    if !self.messages.contains(parent) && !adopting {
                        out.report(
                            RuleId::ReferenceUnknownParentMessage,
                            ev.loc,
                            format!("TOOL_CALL_START names parentMessageId \"{parent}\", which no message in the stream has"),
                            "name the assistant message the call belongs to (started before the call), or leave parentMessageId out",
                        );
                        // Once is enough for one unknown parent.
                        self.messages.insert(parent);
                    }
                }
            }
            ToolCallResult => {
                if let Some(id) = ev.str("messageId") {
                    self.messages.insert(id);
                }
                if let Some(call) = ev.str("toolCallId") {
                    if !self.tool_calls.contains(call) && !adopting {
                        out.report(
                            RuleId::ReferenceUnknownToolCall,
                            ev.loc,
                            format!("TOOL_CALL_RESULT for toolCallId \"{call}\", which no tool call in the stream or the run's input declares"),
                            "send the result for a call started with TOOL_CALL_START (or present in RUN_STARTED.input)",
                        );
                    }
                    self.tool_calls.insert(call);
                }
            }
            ReasoningEncryptedValue => {
                if let Some(id) = ev.str("entityId") {
                    if !self.messages.contains(id) && !self.tool_calls.contains(id) && !adopting {
                        out.report(
                            RuleId::ReferenceUnknownEntity,
                            ev.loc,
                            format!("REASONING_ENCRYPTED_VALUE names entityId \"{id}\", which is no known message or tool call"),
                            "send it after the message or tool call it belongs to, with that id",
                        );
                        self.messages.insert(id);
                    }
                }
            }
            MessagesSnapshot => self.history(ev, "/messages", ev.get("messages"), true, out),
            RunStarted => {
                let messages = ev.get("input").and_then(|i| i.get("messages"));
                self.history(ev, "/input/messages", messages, false, out);
            }
            _ => {}
        }
    }

    /// Checks and learns a list of messages: a snapshot, or a run's input.
    fn history(
        &mut self,
        ev: &Ev<'_>,
        at: &str,
        messages: Option<&Value>,
        snapshot: bool,
        out: &mut Out<'_>,
    ) {
        let Some(Value::Array(messages)) = messages else {
            return;
        };
        let mut ids = HashSet::new();
        let mut declared = HashSet::new();
        for message in messages {
            for call in message
                .get("toolCalls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    declared.insert(id);
                    self.tool_calls.insert(id);
                }
            }
        }
        for (i, message) in messages.iter().enumerate() {
            let Some(id) = message.get("id").and_then(Value::as_str) else {
                continue;
            };
            if !ids.insert(id) {
                out.report_at(
                    RuleId::ReferenceDuplicateMessageId,
                    ev.loc,
                    format!("{at}/{i}/id"),
                    format!("message id \"{id}\" appears more than once in {}", ev.ty),
                    "give every message its own id; clients merge messages by id",
                );
            }
            self.messages.insert(id);
            if !snapshot || message.get("role").and_then(Value::as_str) != Some("tool") {
                continue;
            }
            if let Some(call) = message.get("toolCallId").and_then(Value::as_str) {
                if !declared.contains(call) {
                    out.report_at(
                        RuleId::ReferenceUnknownToolCall,
                        ev.loc,
                        format!("{at}/{i}/toolCallId"),
                        format!("tool message \"{id}\" answers toolCallId \"{call}\", which no assistant message in the snapshot declares"),
                        "a snapshot holds the whole conversation: keep the assistant message whose toolCalls declares the call",
                    );
                }
            }
        }
    }
}
