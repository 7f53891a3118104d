//! Reference rules: ids that point at other things (a tool result at its call, a tool call at
//! its message, an encrypted value at its entity) point at something the stream knows.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::EventType;
use crate::protocol::ids::{Build, IdSet, declared_call_ids, id_hash};

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
    /// What each message of a thread is, by thread and id: a client finds messages by id
    /// alone, so an id given to a message of another kind merges, replaces or repeats one.
    kinds: HashMap<u64, Made, Build>,
    /// The current run's thread.
    thread: u64,
}

/// The kind of message an id was given to, and where.
#[derive(Clone, Copy)]
struct Made {
    role: Role,
    line: Option<u64>,
}

/// A message's role, as the client's reducer tells messages apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    System,
    Developer,
    Assistant,
    Tool,
    Reasoning,
    Activity,
    Other,
}

impl Role {
    fn of(role: &str) -> Role {
        match role {
            "user" => Role::User,
            "system" => Role::System,
            "developer" => Role::Developer,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            "reasoning" => Role::Reasoning,
            "activity" => Role::Activity,
            _ => Role::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::System => "system",
            Role::Developer => "developer",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Reasoning => "reasoning",
            Role::Activity => "activity",
            Role::Other => "other",
        }
    }
}

impl References {
    /// For a live call: the messages of the RunAgentInput it sent are the history.
    pub fn with_input(mut self, input: Option<&Value>) -> Self {
        if let Some(thread) = input
            .and_then(|i| i.get("threadId"))
            .and_then(Value::as_str)
        {
            self.thread = id_hash(thread);
        }
        if let Some(Value::Array(messages)) = input.and_then(|i| i.get("messages")) {
            self.history_known = true;
            for message in messages {
                if let Some(id) = message.get("id").and_then(Value::as_str) {
                    self.messages.insert(id);
                    if let Some(role) = message.get("role").and_then(Value::as_str) {
                        let made = Made {
                            role: Role::of(role),
                            line: None,
                        };
                        self.kinds.insert(self.key(id), made);
                    }
                }
                for id in declared_call_ids(message.get("toolCalls")) {
                    self.tool_calls.insert(id);
                }
            }
        }
        self
    }

    /// The key of a message id in the current thread.
    fn key(&self, id: &str) -> u64 {
        self.thread.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ id_hash(id)
    }

    /// A message of `role` made with `id` by the event: said when the thread has a message of
    /// another kind with that id (for a tool result, of any kind: the client adds a message
    /// whatever the id names).
    fn make(&mut self, ev: &Ev<'_>, id: &str, role: Role, adopting: bool, out: &mut Out<'_>) {
        let key = self.key(id);
        let made = Made {
            role,
            line: Some(ev.loc.line),
        };
        let Some(before) = self.kinds.insert(key, made) else {
            return;
        };
        let clash = role == Role::Tool || before.role != role;
        if !clash || adopting {
            return;
        }
        let what = match (role, before.role) {
            (Role::Tool, _) => "the client adds a second message with that id",
            (Role::Activity, _) => "the client replaces that message with the activity",
            (_, Role::Activity) => "the client drops this message",
            _ => "the client adds this one's content to that message",
        };
        let place = match before.line {
            Some(line) => format!(" (line {line})"),
            None => " (in the history the client holds)".to_owned(),
        };
        let this = match ev.ty {
            EventType::TextMessageStart => format!("TEXT_MESSAGE_START (role {})", role.name()),
            other => other.as_str().to_owned(),
        };
        out.report(
            RuleId::ReferenceMessageIdClash,
            ev.loc,
            format!(
                "{this} makes message \"{id}\", but the thread has a {} message with that id{place}: {what}",
                before.role.name()
            ),
            "give every message of a thread its own id (a messageId MUST be unique within its thread); a client finds messages by id alone",
        );
        if role == Role::Tool {
            // The message the id named first stays the one a later event finds.
            self.kinds.insert(key, before);
        }
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        use EventType::*;
        match ev.ty {
            TextMessageStart | ReasoningMessageStart | ActivitySnapshot => {
                if let Some(id) = ev.str("messageId") {
                    let role = match ev.ty {
                        TextMessageStart => Role::of(ev.str("role").unwrap_or("assistant")),
                        ReasoningMessageStart => Role::Reasoning,
                        _ => Role::Activity,
                    };
                    self.make(ev, id, role, adopting, out);
                    self.messages.insert(id);
                    if ev.ty == TextMessageStart && self.open_text.len() < 64 {
                        self.open_text.push(id.to_owned());
                    }
                }
            }
            ReasoningStart => {
                if let Some(id) = ev.str("messageId") {
                    self.messages.insert(id);
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
                    self.make(ev, id, Role::Tool, adopting, out);
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
                self.thread = id_hash(ev.str("threadId").unwrap_or_default());
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
            let role = message.get("role").and_then(Value::as_str);
            if let Some(role) = role {
                // A snapshot or input says what the message is now: no clash with before.
                let made = Made {
                    role: Role::of(role),
                    line: Some(ev.loc.line),
                };
                self.kinds.insert(self.key(id), made);
            }
            if !snapshot || role != Some("tool") {
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
