//! The lifecycle rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/lifecycle.rs`.

use super::{Level, Rule, Tier};

pub const FIRST_EVENT: Rule = Rule {
    name: "lifecycle/first-event",
    default: Level::Deny,
    versions: "every version",
    summary: "the first event is not RUN_STARTED (RUN_ERROR is also allowed first)",
    why: "A client opens its run state on RUN_STARTED; the official client rejects a stream \
          that begins with anything else. A capture that starts mid-run can be checked with \
          --attach.",
    example: r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
"#,
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#the-run"),
    capability: None,
};

pub const RUN_ALREADY_ACTIVE: Rule = Rule {
    name: "lifecycle/run-already-active",
    default: Level::Deny,
    versions: "every version",
    summary: "RUN_STARTED while a run is still active",
    why: "Runs do not nest: the previous run must end with RUN_FINISHED or RUN_ERROR first, \
          or its messages and tool calls are left dangling.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_STARTED","threadId":"t1","runId":"r2"}
"#,
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#several-runs-on-one-stream"),
    capability: None,
};

pub const EVENT_AFTER_FINISH: Rule = Rule {
    name: "lifecycle/event-after-finish",
    default: Level::Deny,
    versions: "every version",
    summary: "an event other than RUN_STARTED or RUN_ERROR after RUN_FINISHED",
    why: "RUN_FINISHED is terminal: the client stops applying events, so anything sent after \
          it is lost (start a new run for more).",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
"#,
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#after-a-run-closes"),
    capability: None,
};

pub const EVENT_AFTER_ERROR: Rule = Rule {
    name: "lifecycle/event-after-error",
    default: Level::Deny,
    versions: "every version",
    summary: "an event other than RUN_STARTED after RUN_ERROR (RUN_FINISHED included)",
    why: "RUN_ERROR ends the run for good; a client rejects anything but a new run after it.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_ERROR","message":"model failed"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
"#,
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#after-a-run-closes"),
    capability: None,
};

pub const OPEN_AT_FINISH: Rule = Rule {
    name: "lifecycle/open-at-finish",
    default: Level::Deny,
    versions: "every version",
    summary: "RUN_FINISHED while a message, tool call, step, reasoning span or subagent is open",
    why: "A run that finishes cleanly has closed everything it opened; the official client \
          rejects RUN_FINISHED otherwise, and a half-streamed message stays half-streamed.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/streaming.mdx#open-content-close"),
    capability: None,
};

pub const OPEN_AT_ERROR: Rule = Rule {
    name: "lifecycle/open-at-error",
    default: Level::Note,
    versions: "every version",
    summary: "RUN_ERROR while a message, tool call, step, reasoning span or subagent is open",
    why: "Allowed: RUN_ERROR ends whatever was still open along with the run, and from 1.0 a \
          client must not expect a closing event for any of it. A note, never failing a run \
          (--deny-warnings neither): the open items stay incomplete in the client's history, \
          which closing them first would spare users.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"STEP_STARTED","stepName":"plan"}
{"type":"RUN_ERROR","message":"model failed"}
"#,
    tier: Tier::Advice,
    spec: spec!("events/lifecycle.mdx#several-runs-on-one-stream"),
    capability: None,
};

pub const UNTERMINATED_RUN: Rule = Rule {
    name: "lifecycle/unterminated-run",
    default: Level::Deny,
    versions: "every version",
    summary: "the stream ends inside a run: no RUN_FINISHED or RUN_ERROR",
    why: "A truncated capture or a dropped connection; a client waiting for the terminal \
          event never learns whether the run succeeded.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/transports/index.mdx#the-binding-contract"),
    capability: None,
};

pub const RUN_ID_MISMATCH: Rule = Rule {
    name: "lifecycle/run-id-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "RUN_FINISHED or RUN_ERROR names another threadId or runId than the open run",
    why: "Clients match the terminal event to the run they started; a mismatch usually means \
          events of two runs got interleaved.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r2"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/run-input.mdx#identity"),
    capability: None,
};

pub const DUPLICATE_RUN_ID: Rule = Rule {
    name: "lifecycle/duplicate-run-id",
    default: Level::Deny,
    versions: "every version",
    summary: "a runId already used by an earlier run of the stream",
    why: "Run ids identify runs in stored histories and in parentRunId lineage; a reused id \
          makes both ambiguous.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#identifiers"),
    capability: None,
};

pub const UNKNOWN_PARENT_RUN: Rule = Rule {
    name: "lifecycle/unknown-parent-run",
    default: Level::Warn,
    versions: "every version",
    summary: "parentRunId names no earlier run of the stream",
    why: "Lineage should point at a run the history holds. A capture may start mid-thread, \
          so this is a warning.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r2","parentRunId":"r0"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r2"}
"#,
    tier: Tier::Advice,
    spec: spec!("events/lifecycle.mdx#run_started"),
    capability: None,
};

pub const THREAD_CHANGED: Rule = Rule {
    name: "lifecycle/thread-changed",
    default: Level::Warn,
    versions: "every version",
    summary: "a later run of the stream has another threadId",
    why: "One stored history is one thread; a change usually means two conversations were \
          concatenated (fold them separately with --thread).",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
{"type":"RUN_STARTED","threadId":"t2","runId":"r2"}
{"type":"RUN_FINISHED","threadId":"t2","runId":"r2"}
"#,
    tier: Tier::Advice,
    spec: spec!("basic/run-input.mdx#identity"),
    capability: None,
};

pub const PENDING_TOOL_CALLS: Rule = Rule {
    name: "lifecycle/pending-tool-calls",
    default: Level::Deny,
    versions: "1.0 and later",
    summary: "a success outcome's pendingToolCallIds is not exactly the tool calls the run started and did not answer with TOOL_CALL_RESULT",
    why: "The application answers the calls the list names before the thread goes on: a call \
          left out stays unanswered in a history many models reject, and a call named that \
          was answered, or never made, is answered twice or for nothing. An absent or empty \
          list says nothing (a client derives the calls from the stream), and is not judged.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.1"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"confirm"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"success","pendingToolCallIds":["c2"]}}
"#,
    tier: Tier::Must,
    spec: spec!("events/tool-calls.mdx#frontend-tools"),
    capability: None,
};

pub const DUPLICATE_INTERRUPT_ID: Rule = Rule {
    name: "lifecycle/duplicate-interrupt-id",
    default: Level::Deny,
    versions: "1.0 and later",
    summary: "an interrupt outcome names two interrupts with one id",
    why: "A resume entry answers an interrupt by its id: of two under one id, the consumer \
          cannot say which one its answer is for, so one of them is answered twice or never.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"approval"},{"id":"i1","reason":"confirmation"}]}}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/interrupt-resume.mdx#interrupting"),
    capability: None,
};

pub const USAGE_ACCOUNTING: Rule = Rule {
    name: "lifecycle/usage-accounting",
    default: Level::Deny,
    versions: "1.0 and later",
    summary: "a usage entry breaks the token accounting: totalTokens is not inputTokens plus outputTokens, or a part (cached, cache-write, reasoning tokens) is more than its total",
    why: "A consumer sums totalTokens across entries and runs, and prices cache reads, cache \
          writes and reasoning apart as parts of the totals: a provider's total copied as it \
          counts, or a part reported beside a total it was not added into, bills the run \
          wrong.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","usage":[{"inputTokens":5,"outputTokens":1,"totalTokens":60}]}
"#,
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#token-usage"),
    capability: None,
};
