//! The tool-args rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/tool_args.rs`.

use super::{Level, Rule, Tier};

pub const INVALID_JSON: Rule = Rule {
    name: "tool-args/invalid-json",
    default: Level::Deny,
    versions: "every version",
    summary: "a tool call's concatenated TOOL_CALL_ARGS are not valid JSON at TOOL_CALL_END (no arguments at all is tool-args/empty-arguments)",
    why: "Clients and frameworks JSON.parse the arguments to execute the tool; broken JSON \
          (often a model cut off mid-object) means the call cannot run. A run that is \
          cancelled or fails may close a call it cut off, which the spec allows: the finding \
          waits for the run's end, and is not said of such a run. From 1.0 a closed call may \
          be reopened by a TOOL_CALL_START with its id, and further arguments append: the \
          arguments are judged whole, at the run's end, at the call's last TOOL_CALL_END.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\": \"Par"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
"#,
    tier: Tier::Advice,
    spec: spec!("events/tool-calls.mdx#tool_call_end"),
    capability: None,
};

pub const SCHEMA_VIOLATION: Rule = Rule {
    name: "tool-args/schema-violation",
    default: Level::Deny,
    versions: "every version",
    summary: "a tool call's arguments do not match the `parameters` schema of its tool in RUN_STARTED.input.tools",
    why: "The frontend executes the tool with these arguments; missing or mistyped ones break \
          the tool or make it do the wrong thing. From 1.0, where a closed call may be \
          reopened and its arguments appended to, they are judged whole at the run's end.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[{"name":"get_weather","description":"","parameters":{"type":"object","required":["city"]}}]}}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
"#,
    tier: Tier::Must,
    spec: spec!("events/tool-calls.mdx#security-considerations"),
    capability: None,
};

pub const UNDECLARED_TOOL: Rule = Rule {
    name: "tool-args/undeclared-tool",
    default: Level::Warn,
    versions: "every version",
    summary: "a call to a tool the run's input.tools does not declare is left unanswered: the run finishes with no TOOL_CALL_RESULT for it",
    why: "The client can only execute the tools it declared. A call to another tool is fine when \
          the agent runs that tool itself (a backend tool) and streams its result; with no result \
          before RUN_FINISHED, it is a misspelt frontend tool or a backend tool that failed \
          silently, and the conversation holds a call nobody answers. A run that ends in \
          RUN_ERROR, an interrupt or a cancellation is not reported; nor is a run whose input \
          is not known to list its tools (no `tools` in RUN_STARTED.input; for a live call, \
          the tools sent count). An empty list declares none: every call left unanswered is \
          reported.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[]}}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"launch_rockets"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
"#,
    tier: Tier::Should,
    spec: spec!("events/tool-calls.mdx#frontend-tools"),
    capability: None,
};

pub const EMPTY_ARGUMENTS: Rule = Rule {
    name: "tool-args/empty-arguments",
    default: Level::Warn,
    versions: "every version",
    summary: "a tool call ends with no arguments at all (no TOOL_CALL_ARGS, or only empty deltas)",
    why: "The official client reads missing arguments as `{}` and runs the tool, so the call \
          works; but an empty string is not JSON, and a client or provider that parses it \
          strictly fails. The arguments are checked as `{}` against the tool's schema.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_time"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
"#,
    tier: Tier::Advice,
    spec: spec!("events/tool-calls.mdx#tool_call_args"),
    capability: None,
};

pub const FRONTEND_ANSWERED: Rule = Rule {
    name: "tool-args/frontend-answered",
    default: Level::Deny,
    versions: "1.0 and later",
    summary: "a TOOL_CALL_RESULT (or, in the run that made the call, a tool message in a MESSAGES_SNAPSHOT) answers a call to a tool the run's input.tools declares (a frontend tool, which the application answers)",
    why: "The tools a run's input lists are the application's: the agent proposes the call, \
          the application executes it and answers in the next run's messages. A result the \
          agent sends itself answers the call twice (the application's answer comes too), or \
          puts words in the application's mouth. A tool the agent runs itself needs no \
          declaring: give it a name the input does not list.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.1","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[{"name":"confirm","description":"ask the user","parameters":{"type":"object"}}]}}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"confirm"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"TOOL_CALL_RESULT","messageId":"m2","toolCallId":"c1","content":"yes"}
"#,
    tier: Tier::Must,
    spec: spec!("events/tool-calls.mdx#frontend-tools"),
    capability: None,
};
