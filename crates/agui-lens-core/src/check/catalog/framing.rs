//! Framing rules: can the input be cut into JSON events at all. Reported by the readers in
//! `source/` and by the parse step in `check`.

use super::{Level, Rule};

pub const INVALID_JSON: Rule = Rule {
    name: "framing/invalid-json",
    default: Level::Deny,
    versions: "every version",
    summary: "a line (JSONL), an SSE event's data, or an array element is not valid JSON",
    why: "A client parses each event with JSON.parse; one unparseable event ends the whole \
          stream for it (the official client errors the run). Lone surrogates and NaN, which \
          some encoders emit, are not JSON either.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"
"#,
};

pub const INVALID_UTF8: Rule = Rule {
    name: "framing/invalid-utf8",
    default: Level::Deny,
    versions: "every version",
    summary: "an event's bytes are not valid UTF-8",
    why: "AG-UI events are JSON text, which is UTF-8 on the wire. Clients decode invalid bytes \
          to U+FFFD, silently changing the text the agent sent.",
    example: "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"caf\\xe9\"}\n\
              (with a raw 0xE9 byte where \\xe9 is written)",
};

pub const NOT_AN_OBJECT: Rule = Rule {
    name: "framing/not-an-object",
    default: Level::Deny,
    versions: "every version",
    summary: "an event is valid JSON but not an object (an array, string, number, or null)",
    why: "Every AG-UI event is a JSON object with a `type` field; anything else cannot be \
          dispatched.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
["TEXT_MESSAGE_START","m1"]
"#,
};

pub const DUPLICATE_KEY: Rule = Rule {
    name: "framing/duplicate-key",
    default: Level::Warn,
    versions: "every version",
    summary: "a key appears twice in one JSON object of an event",
    why: "JSON leaves repeated keys undefined: JSON.parse (and agui-lens) keep the last value, \
          other parsers the first or reject the event, so clients in different languages see \
          different events. Only the first repeat in an event is reported.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","messageId":"m2","role":"assistant"}
"#,
};

pub const LINE_TOO_LONG: Rule = Rule {
    name: "framing/line-too-long",
    default: Level::Deny,
    versions: "every version",
    summary: "a line or SSE frame is larger than the cap (64 MiB unless --max-line raises it)",
    why: "A single event that large is almost always a runaway snapshot or a capture that lost \
          its line breaks; holding it would exhaust memory. It is skipped, not read.",
    example: "{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":\"… 70 MB …\"}",
};

pub const SSE_UNTERMINATED_FRAME: Rule = Rule {
    name: "framing/sse-unterminated-frame",
    default: Level::Warn,
    versions: "every version",
    summary: "an SSE capture ends with a frame that has no closing blank line",
    why: "A browser's EventSource discards an event that is not followed by a blank line, so \
          the last event may never reach the client. The frame is still checked.",
    example: "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n\
              data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n",
};

pub const NO_EVENTS: Rule = Rule {
    name: "framing/no-events",
    default: Level::Deny,
    versions: "every version",
    summary: "the input holds no AG-UI event at all",
    why: "An empty capture, an HTTP error body, or an HTML login page saved instead of the \
          stream would otherwise pass a check with nothing to complain about.",
    example: r#"{"error":"invalid RunAgentInput","detail":[{"loc":["threadId"],"msg":"Field required"}]}
"#,
};
