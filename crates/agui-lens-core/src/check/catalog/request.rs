//! Request rules: what a client sent to ask for a stream, where agui-lens sees the request
//! (a browser capture's entry, a request `agui-lens serve` answers or `agui-lens proxy`
//! forwards). The rules about the next turn of a thread hold it to what the previous stream
//! left the client holding.

use super::{Level, Rule, Tier};

pub const INPUT_SCHEMA: Rule = Rule {
    name: "request/input-schema",
    default: Level::Deny,
    versions: "every version",
    summary: "the RunAgentInput a client sent breaks the RunAgentInput schema of the protocol version it declares (else the newest)",
    why: "An agent validates the request before it runs: a bad one is refused (400 or 422) or, \
          worse, half understood. A browser capture shows the request the client really sent, \
          so a client-side bug shows here before it shows in the agent's logs.",
    example: "POST /agent\n\
              {\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n\
              (the message has no id; state, tools, context and forwardedProps are missing)",
    tier: Tier::Must,
    spec: spec!("basic/processing.mdx#outgoing-material"),
    capability: None,
};

pub const PROTOCOL_VERSION: Rule = Rule {
    name: "request/protocol-version",
    default: Level::Warn,
    versions: "1.0 and later",
    summary: "the RunAgentInput a client sent declares no protocolVersion, or one that is not MAJOR.MINOR",
    why: "The agent answers with its own declaration and picks what it may send by the \
          client's: a request with none reads as a client from before the protocol carried a \
          version, and may get the older shapes. A client that implements a version says so \
          unless it knows its peer predates the field.",
    example: "POST /agent\n\
              {\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":[],\"state\":{},\"tools\":[],\"context\":[],\"forwardedProps\":{}}",
    tier: Tier::Must,
    spec: spec!("basic/run-input.mdx#protocolversion"),
    capability: None,
};

pub const ACTIVITY_SENT: Rule = Rule {
    name: "request/activity-sent",
    default: Level::Deny,
    versions: "every version",
    summary: "the request's messages hold an activity message, which stays with the client",
    why: "Activity messages are the client's rendering material (checklists, progress), not \
          conversation: sent back, they reach the model as turns it never took, or make an \
          agent that does not know the role refuse the request.",
    example: "POST /agent\n\
              {\"messages\":[{\"id\":\"a1\",\"role\":\"activity\",\"activityType\":\"plan\",\"content\":{}}], …}",
    tier: Tier::Must,
    spec: spec!("basic/run-input.mdx#messages"),
    capability: None,
};

pub const MISSING_TOOL_RESULT: Rule = Rule {
    name: "request/missing-tool-result",
    default: Level::Deny,
    versions: "every version",
    summary: "the next request on a thread does not answer a frontend tool call the previous run left pending",
    why: "The agent stopped waiting for the client to run the tool: a history with a call and \
          no tool message leaves it mid-thought, and many models reject it outright. A \
          declined or failed call is still answered, with a tool message saying so.",
    example: "turn 1 ends with TOOL_CALL_START/END of call f1 (a frontend tool) and RUN_FINISHED;\n\
              turn 2's request holds the assistant message with call f1 but no \
              {\"role\":\"tool\",\"toolCallId\":\"f1\",…}",
    tier: Tier::Must,
    spec: spec!("events/tool-calls.mdx#frontend-tools"),
    capability: None,
};

pub const MISSING_RESUME: Rule = Rule {
    name: "request/missing-resume",
    default: Level::Deny,
    versions: "every version",
    summary: "the next request on a thread leaves an interrupt the previous run ended with without a resume entry",
    why: "An interrupted run waits for an answer to each interrupt, answered or explicitly \
          abandoned: omission is not abandonment, and the client is the one participant that \
          can tell the list is incomplete.",
    example: "turn 1 ends with RUN_FINISHED {\"outcome\":{\"type\":\"interrupt\",\"interrupts\":[{\"id\":\"i1\",…}]}};\n\
              turn 2's request has no \"resume\":[{\"interruptId\":\"i1\",…}]",
    tier: Tier::Must,
    spec: spec!("basic/patterns/interrupt-resume.mdx#resuming"),
    capability: None,
};

pub const UNKNOWN_RESUME: Rule = Rule {
    name: "request/unknown-resume",
    default: Level::Deny,
    versions: "every version",
    summary: "the next request on a thread sends a resume entry for no interrupt the previous run ended with",
    why: "\"Each entry's interruptId MUST name an interrupt from the run being continued\": an \
          entry for an interrupt already answered, or after a run that asked for nothing, \
          answers nothing. The agent drops it at best, and at worst acts twice on one \
          approval; a client that sends it has lost track of which question is open.",
    example: "turn 1 ends with an interrupt i1; turn 2's request resumes i1 and its run finishes;\n\
              turn 3's request sends \"resume\":[{\"interruptId\":\"i1\",…}] again",
    tier: Tier::Must,
    spec: spec!("basic/patterns/interrupt-resume.mdx#resuming"),
    capability: None,
};

pub const HISTORY_MISMATCH: Rule = Rule {
    name: "request/history-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "the next request on a thread does not carry the messages a client that applied the previous stream holds",
    why: "The agent treats the messages as the whole conversation: one the client dropped, \
          changed or reordered is a turn the model never sees, or sees wrong. This is how a \
          client's reducer bug shows (a lost tool call, a merged message, text cut short). \
          New messages the user or the application adds are not one; an application that edits \
          history on purpose can allow the rule.",
    example: "turn 1 streams an assistant message m1 \"Hello there\";\n\
              turn 2's request holds m1 with content \"Hello\"",
    tier: Tier::Advice,
    spec: spec!("basic/run-input.mdx#messages"),
    capability: None,
};

pub const STATE_MISMATCH: Rule = Rule {
    name: "request/state-mismatch",
    default: Level::Warn,
    versions: "every version",
    summary: "the next request on a thread starts from a state other than the one the previous stream left",
    why: "The state is the last value client and agent agreed on; an agent computes its deltas \
          against it. A client that applied a patch wrong, or dropped a snapshot, sends a \
          state the agent did not leave. An application may change the state on purpose \
          between runs, so this is a warning.",
    example: "turn 1 streams STATE_DELTA [{\"op\":\"replace\",\"path\":\"/n\",\"value\":1}];\n\
              turn 2's request sends \"state\":{\"n\":0}",
    tier: Tier::Advice,
    spec: spec!("basic/run-input.mdx#state"),
    capability: None,
};

pub const RUN_ID_REUSED: Rule = Rule {
    name: "request/run-id-reused",
    default: Level::Deny,
    versions: "every version",
    summary: "the next request on a thread sends the runId of the run the previous stream carried",
    why: "The client names each run it asks for; a runId \"MUST NOT be reused for another run \
          on the same thread\". An agent that keys its work, its history or its lineage \
          (parentRunId) by run answers a second run under the first one's id. A retry of a \
          call that never reached its end is no other run, and is not reported.",
    example: "turn 1's request sends \"runId\":\"r1\" and its stream finishes run r1;\n\
              turn 2's request sends \"runId\":\"r1\" again",
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#identifiers"),
    capability: None,
};
