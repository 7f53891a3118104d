//! Reference rules: ids that point at other things (a tool result at its call, a tool call at
//! its message, an encrypted value at its entity) point at something the stream knows.

use std::collections::HashSet;

use serde_json::Value;

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::EventType;
use crate::protocol::ids::{IdSet, declared_call_ids};

/// Every message and tool call id the stream has named, in any run.
#[derive(Default)]
pub struct References {
    messages: IdSet,
    tool_calls: IdSet,
    /// The history the client sent is known (a run's input, a snapshot, or the request of a
    /// live call): only then can a result be said to answer no call.
    history_known: bool,
    /// Text messages open in the current run.
    open_text: Vec<String>,
}

impl References {
    /// For a live call: the messages of the RunAgentInput it sent are the history.
    pub fn with_input(mut self, input: Option<&Value>) -> Self {
        if let Some(Value::Array(messages)) = input.and_then(|i| i.get("messages")) {
            self.history_known = true;
            for message in messages {
                if let Some(id) = message.get("id").and_then(Value::as_str) {
                    self.messages.insert(id);
                }
                for id in declared_call_ids(message.get("toolCalls")) {
                    self.tool_calls.insert(id);
                }
            }
        }
        self
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        use EventType::*;
        match ev.ty {
            TextMessageStart | ReasoningMessageStart | ReasoningStart | ActivitySnapshot => {
                if let Some(id) = ev.str("messageId") {
                    self.messages.insert(id);
                    if ev.ty == TextMessageStart && self.open_text.len() < 64 {
                        self.open_text.push(id.to_owned());
                    }
                }
            }
            TextMessageEnd => {
                if let Some(id) = ev.str("messageId") {
                    self.open_text.retain(|open| open != id);
                }
            }
            RunFinished | RunError => self.open_text.clear(),
            ToolCallStart => {
                if let Some(id) = ev.str("toolCallId") {
                    self.tool_calls.insert(id);
                }
                if let Some(parent) = ev.str("parentMessageId") {
                    // A parent no message has is legal on its own: the client creates an
                    // assistant message with that id for the call. While another text message
                    // is open, though, that splits one turn in two.
                    if !self.messages.contains(parent) && !adopting {
                        if let Some(open) = self.open_text.last() {
                            out.report(
                                RuleId::ReferenceUnknownParentMessage,
                                ev.loc,
                                format!("TOOL_CALL_START names parentMessageId \"{parent}\", which no message in the stream has, while text message \"{open}\" is open"),
                                "a client attaches the call to a new message of that id, apart from the open one: name the open message as the parent (or leave parentMessageId out)",
                            );
                        }
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
                    if !self.tool_calls.contains(call) && !adopting && self.history_known {
                        out.report(
                            RuleId::ReferenceUnknownToolCall,
                            ev.loc,
                            format!("TOOL_CALL_RESULT for toolCallId \"{call}\", which no tool call in the stream or the history the client sent declares"),
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
            MessagesSnapshot => {
                self.history_known |= ev.get("messages").is_some_and(Value::is_array);
                self.history(ev, "/messages", ev.get("messages"), true, out)
            }
            RunStarted => {
                self.open_text.clear();
                let messages = ev.get("input").and_then(|i| i.get("messages"));
                self.history_known |= messages.is_some_and(Value::is_array);
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
            for id in declared_call_ids(message.get("toolCalls")) {
                declared.insert(id);
                self.tool_calls.insert(id);
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
