//! The reference rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/reference.rs`.

use super::{Level, Rule, Tier};

pub const UNKNOWN_TOOL_CALL: Rule = Rule {
    name: "reference/unknown-tool-call",
    default: Level::Deny,
    versions: "every version",
    summary: "a tool result for a toolCallId no tool call declares (TOOL_CALL_RESULT, or a tool message in MESSAGES_SNAPSHOT), where the history is known",
    why: "Clients attach a result to its call; a result for an unknown call is shown detached \
          or dropped, and model providers reject a history whose tool message answers no call. \
          A result may answer a call from the history the client sent, so a TOOL_CALL_RESULT is \
          only judged once that history is known: a RUN_STARTED.input with messages, a \
          MESSAGES_SNAPSHOT, or the request of a live call.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[]}}
{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c9","content":"ok"}
"#,
    tier: Tier::Advice,
    spec: spec!("basic/index.mdx#identifiers"),
    capability: None,
};

pub const UNKNOWN_PARENT_MESSAGE: Rule = Rule {
    name: "reference/unknown-parent-message",
    default: Level::Warn,
    versions: "every version",
    summary: "TOOL_CALL_START.parentMessageId names no known message while another text message is open",
    why: "A client that cannot find the parent creates an assistant message with that id for \
          the call, which is legal and what an agent that streams a call with no text relies \
          on. While another text message is open, though, the call lands in a message of its \
          own and one turn shows as two.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m404"}
"#,
    tier: Tier::Advice,
    spec: spec!("events/tool-calls.mdx#tool_call_start"),
    capability: None,
};

pub const UNKNOWN_ENTITY: Rule = Rule {
    name: "reference/unknown-entity",
    default: Level::Warn,
    versions: "every version",
    summary: "REASONING_ENCRYPTED_VALUE names no known message or tool call",
    why: "The encrypted value is attached to its entity so it can be sent back on the next \
          turn; one that names nothing is lost.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"r404","encryptedValue":"gAAA"}
"#,
    tier: Tier::Should,
    spec: spec!("events/reasoning.mdx#error-handling"),
    capability: None,
};

pub const MESSAGE_ID_CLASH: Rule = Rule {
    name: "reference/message-id-clash",
    default: Level::Deny,
    versions: "every version",
    summary: "a message id the thread already gives a message of another kind (a text message's \
              id reused for reasoning, an activity, a tool result or another role)",
    why: "A client finds messages by id alone: reasoning streamed under a text message's id is \
          added to that text, an activity replaces the message whose id it takes, a text \
          message under an activity's id is dropped, and a tool result adds a second message \
          with the id. verifyEvents keeps ids apart by kind, so the run passes it, and the \
          conversation the user sees is wrong.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TEXT_MESSAGE_END","messageId":"m1"}
{"type":"REASONING_MESSAGE_START","messageId":"m1","role":"reasoning"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#identifiers"),
    capability: None,
};

pub const DUPLICATE_MESSAGE_ID: Rule = Rule {
    name: "reference/duplicate-message-id",
    default: Level::Deny,
    versions: "every version",
    summary: "a message id repeated inside one MESSAGES_SNAPSHOT, RUN_STARTED.input or request",
    why: "A client finds a message by its id: of two under one id, what later events and \
          snapshots say of that id reaches one of them only, the other is left as it was, and \
          both go back to the agent in the next request's history.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","content":"a"},{"id":"m1","role":"user","content":"b"}]}
"#,
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#identifiers"),
    capability: None,
};
