//! Reference rules: ids that point at other things (a tool result at its call, a tool call at
//! its message, an encrypted value at its entity) point at something the stream knows.

use std::collections::HashSet;

use serde_json::Value;

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::EventType;
use crate::protocol::ids::IdSet;

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
