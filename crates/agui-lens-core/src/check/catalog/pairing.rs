//! The pairing rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/pairing.rs`.

use super::{Level, Rule, Tier};

pub const TEXT_MESSAGE: Rule = Rule {
    name: "pairing/text-message",
    default: Level::Deny,
    versions: "every version",
    summary: "TEXT_MESSAGE_CONTENT/END for a message never started or already ended, a second START while it is open, or (1.0 and later) a START reopening it with another name",
    why: "Clients assemble a message from START, CONTENT and END by messageId; content for an \
          unknown id is dropped or lands in the wrong message, and the official client \
          rejects the stream. A reopening START that names the message otherwise breaks a \
          producer's MUST no client has to check: the official client reads on and keeps the \
          first name, another may take the second.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m7","delta":"hi"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/streaming.mdx#open-content-close"),
    capability: None,
};

pub const TOOL_CALL: Rule = Rule {
    name: "pairing/tool-call",
    default: Level::Deny,
    versions: "every version",
    summary: "TOOL_CALL_ARGS/END for a tool call never started or already ended, a second START while it is open, or (1.0 and later) a START reopening it with another toolCallName or parentMessageId",
    why: "Clients build a tool call's arguments from its ARGS deltas by toolCallId; arguments \
          for an unknown call are lost and the call is never executed. A reopening START with \
          another toolCallName or parentMessageId breaks a producer's MUST no client has to \
          check: the official client renames the call, and which tool runs is not promised.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/streaming.mdx#open-content-close"),
    capability: None,
};

pub const REASONING: Rule = Rule {
    name: "pairing/reasoning",
    default: Level::Deny,
    versions: "every version",
    summary: "REASONING_END for a span never started or already ended, or a second REASONING_START while it is open",
    why: "A reasoning span brackets the reasoning messages inside it; an unbalanced span \
          leaves clients showing \"thinking…\" forever or closing the wrong span.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"REASONING_END","messageId":"r1"}
"#,
    tier: Tier::Must,
    spec: spec!("events/reasoning.mdx#spans-reasoning_start-and-reasoning_end"),
    capability: None,
};

pub const REASONING_MESSAGE: Rule = Rule {
    name: "pairing/reasoning-message",
    default: Level::Deny,
    versions: "every version",
    summary: "REASONING_MESSAGE_CONTENT/END for a reasoning message never started or already ended, or a second START while it is open",
    why: "Reasoning text is assembled like message text; fragments for an unknown id are \
          dropped.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"hmm"}
"#,
    tier: Tier::Must,
    spec: spec!("events/reasoning.mdx#reasoning-messages"),
    capability: None,
};

pub const STEP: Rule = Rule {
    name: "pairing/step",
    default: Level::Deny,
    versions: "every version",
    summary: "STEP_FINISHED that matches no open STEP_STARTED by name (per subagent), or a step started twice",
    why: "Progress UIs show steps by name; an unmatched finish leaves a step spinning or \
          closes someone else's.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"STEP_STARTED","stepName":"plan"}
{"type":"STEP_FINISHED","stepName":"act"}
"#,
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#steps"),
    capability: None,
};

pub const SUBAGENT: Rule = Rule {
    name: "pairing/subagent",
    default: Level::Deny,
    versions: "every version",
    summary: "SUBAGENT_FINISHED/ERROR for a subagent not active, a subagent started twice or announced after events attributed to it, or an unknown parentSubagentRunId",
    why: "A subagentRunId names one invocation: it starts once and ends once, before any event \
          attributed to it when it is announced at all, and its parent must have started \
          before it.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"SUBAGENT_FINISHED","subagentRunId":"s1"}
"#,
    tier: Tier::Must,
    spec: spec!("events/subagents.mdx#lifecycle"),
    capability: None,
};

pub const CHUNK_MISSING_ID: Rule = Rule {
    name: "pairing/chunk-missing-id",
    default: Level::Deny,
    versions: "every version",
    summary: "the first CHUNK of a message lacks messageId, or the first TOOL_CALL_CHUNK lacks toolCallId or toolCallName",
    why: "A chunk stream is opened by its first chunk, which must say what it opens; the \
          official client fails the run on an id-less first chunk.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_CHUNK","delta":"hi"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/streaming.mdx#the-first-chunk"),
    capability: None,
};

pub const EMPTY_DELTA: Rule = Rule {
    name: "pairing/empty-delta",
    default: Level::Allow,
    versions: "every version",
    summary: "TEXT_MESSAGE_CONTENT or REASONING_MESSAGE_CONTENT with an empty delta",
    why: "The docs say deltas are non-empty; 1.0 allows empty ones as keep-alives, so this is \
          off unless a team wants the stricter reading (--warn pairing/empty-delta).",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}
"#,
    tier: Tier::Advice,
    spec: "https://docs.ag-ui.com/concepts/events#textmessagecontent",
    capability: None,
};

pub const MESSAGE_ID_REUSED: Rule = Rule {
    name: "pairing/message-id-reused",
    default: Level::Warn,
    versions: "0.x (1.0 makes reopening legal)",
    summary: "a START reuses the id of a message that already ended, in a run held to a version before 1.0",
    why: "Clients look messages up by id, so the new message's content is appended to the \
          old one. From 1.0 the spec says so: a closed message is closed, not sealed, and a \
          second START continues it (the published 1.0 client folds and verifies it so); \
          before 1.0 that was only what the reference client happened to do.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"0.1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TEXT_MESSAGE_END","messageId":"m1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
"#,
    tier: Tier::Advice,
    spec: spec!("events/text-messages.mdx#text_message_end"),
    capability: None,
};

pub const ATTRIBUTION_MISMATCH: Rule = Rule {
    name: "pairing/attribution-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "an event's subagentRunId disagrees with the producer that opened its message, tool call, reasoning or activity",
    why: "Continuations belong to whoever opened the entity; the official client rejects a \
          disagreeing tag, since the content would land in another producer's message.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi","subagentRunId":"s1"}
"#,
    tier: Tier::Must,
    spec: spec!("events/subagents.mdx#ownership"),
    capability: None,
};
