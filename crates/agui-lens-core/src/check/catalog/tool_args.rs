//! The tool-args rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/tool_args.rs`.

use super::{Level, Rule};

pub const INVALID_JSON: Rule = Rule {
    name: "tool-args/invalid-json",
    default: Level::Deny,
    summary: "a tool call's concatenated TOOL_CALL_ARGS are not valid JSON at TOOL_CALL_END (empty included)",
    why: "Clients and frameworks JSON.parse the arguments to execute the tool; broken JSON \
          (often a model cut off mid-object) means the call cannot run.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\": \"Par"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
"#,
};

pub const SCHEMA_VIOLATION: Rule = Rule {
    name: "tool-args/schema-violation",
    default: Level::Deny,
    summary: "a tool call's arguments do not match the `parameters` schema of its tool in RUN_STARTED.input.tools",
    why: "The frontend executes the tool with these arguments; missing or mistyped ones break \
          the tool or make it do the wrong thing.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[{"name":"get_weather","description":"","parameters":{"type":"object","required":["city"]}}]}}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
"#,
};

pub const UNDECLARED_TOOL: Rule = Rule {
    name: "tool-args/undeclared-tool",
    default: Level::Warn,
    summary: "a tool call names a tool the run's input.tools does not declare",
    why: "A frontend can only execute the tools it sent; an undeclared name is a typo or a \
          backend tool the frontend will not recognise.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[]}}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"launch_rockets"}
"#,
};
