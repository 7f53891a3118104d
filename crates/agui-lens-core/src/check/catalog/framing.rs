//! Framing rules: can the input be cut into JSON events at all. Reported by the readers in
//! `source/` and by the parse step in `check`.

use super::{Level, Rule, Tier};

pub const INVALID_JSON: Rule = Rule {
    name: "framing/invalid-json",
    default: Level::Deny,
    versions: "every version",
    summary: "a line (JSONL), an SSE event's data, or an array element is not valid JSON",
    why: "A client parses each event with JSON.parse; one unparseable event ends the whole \
          stream for it (the official client errors the run). NaN, which some encoders emit, \
          is not JSON either (a lone surrogate escape is: framing/lone-surrogate).",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"
"#,
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
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
    tier: Tier::Must,
    spec: "https://www.rfc-editor.org/rfc/rfc8259#section-8.1",
    capability: None,
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
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#events"),
    capability: None,
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
    tier: Tier::Should,
    spec: "https://www.rfc-editor.org/rfc/rfc8259#section-4",
    capability: None,
};

pub const LONE_SURROGATE: Rule = Rule {
    name: "framing/lone-surrogate",
    default: Level::Warn,
    versions: "every version",
    summary: "a string holds half of a UTF-16 surrogate pair (`\\ud83d` with no low half after it)",
    why: "RFC 8259 lets a JSON string hold one (\"the behavior of software that receives JSON \
          texts containing such values is unpredictable\"): JSON.parse and Python read it, and \
          a text split in the middle of an emoji joins up again when the client appends the \
          next delta; parsers of strict Unicode (Rust, Go, Java's replace it) refuse or mend \
          it, and protobuf cannot carry it. The event is checked with U+FFFD in its place; \
          fold and diff join the halves as the client does (half a pair nothing joins is \
          printed as its escape), and compact refuses the stream (its halves would be lost). \
          Split text at character boundaries.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Done \ud83d"}
"#,
    tier: Tier::Advice,
    spec: "https://www.rfc-editor.org/rfc/rfc8259#section-8.2",
    capability: None,
};

pub const LINE_TOO_LONG: Rule = Rule {
    name: "framing/line-too-long",
    default: Level::Deny,
    versions: "every version",
    summary: "a line or SSE frame is larger than the cap (64 MiB unless --max-line raises it)",
    why: "A single event that large is almost always a runaway snapshot or a capture that lost \
          its line breaks; holding it would exhaust memory. It is skipped, not read.",
    example: "{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":\"… 70 MB …\"}",
    // Not a requirement of the protocol, but an event skipped unread: whatever it breaks goes
    // unseen, so no tier leaves it out (an input not read whole is never clean).
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
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
    tier: Tier::Must,
    spec: "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation",
    capability: None,
};

pub const SSE_FRAMES_MERGED: Rule = Rule {
    name: "framing/sse-frames-merged",
    default: Level::Deny,
    versions: "every version",
    summary: "two SSE frames are not parted by two LFs (lines end with CR LF or CR), so the \
              official client reads them as one",
    why: "The SSE grammar ends a line at CR, LF or CR LF, but `@ag-ui/client` splits the body \
          only at two LFs: frames parted by `\\r\\n\\r\\n` reach it as one, their data \
          joined, and the stream ends there with a JSON error. The 1.1 HTTP binding has a \
          producer end every line with LF. Line ends the client still reads (a keep-alive \
          comment ended by CR LF before a frame, one frame alone) are not reported.",
    example: "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\\r\\n\\r\\n\
              data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\\r\\n\\r\\n",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
};

pub const SSE_OVER_CLIENT_LIMIT: Rule = Rule {
    name: "framing/sse-over-client-limit",
    default: Level::Warn,
    versions: "every version",
    summary: "an SSE frame's text is over the 10 MiB that the official TypeScript client buffers",
    why: "`@ag-ui/client` holds the text after the last two LFs while a frame arrives and ends \
          the whole stream with an error (\"SSE buffer size exceeded maximum limit of 10 MB\") \
          once it is over 10 MiB, counted in UTF-16 units: a frame that long is lost, with the \
          rest of the run, unless it arrives in one read. The protocol sets no limit, so the \
          event is still read and checked.",
    example: "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"(10.5 \
              million characters)\"}\n\n",
    tier: Tier::Advice,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
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
    tier: Tier::Must,
    spec: spec!("events/lifecycle.mdx#the-run"),
    capability: None,
};

pub const PROTO_TRUNCATED: Rule = Rule {
    name: "framing/proto-truncated",
    default: Level::Deny,
    versions: "every version",
    summary: "a protobuf body ends inside a frame (its 4-byte length, or the message after it)",
    why: "The official client reads a frame only once all the bytes its length names have \
          arrived; a body cut inside one ends the stream with an error, and the event is lost.",
    example: "(binary) a frame whose length says 40 bytes, followed by 12",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-protobuf.mdx#framing"),
    capability: None,
};

pub const PROTO_TOO_LONG: Rule = Rule {
    name: "framing/proto-too-long",
    default: Level::Deny,
    versions: "every version",
    summary: "a protobuf frame's length is over the cap (64 MiB unless --max-line raises it)",
    why: "A length that large is almost always a body that is not protobuf frames at all, or \
          frames out of step; holding it would exhaust memory. It is skipped, not read.",
    example: "(binary) a frame whose 4-byte length is 0x7FFFFFFF",
    // As `framing/line-too-long`: a frame skipped unread.
    tier: Tier::Must,
    spec: spec!("basic/transports/http-protobuf.mdx#framing"),
    capability: None,
};

pub const PROTO_UNDECODABLE: Rule = Rule {
    name: "framing/proto-undecodable",
    default: Level::Deny,
    versions: "every version",
    summary: "a protobuf frame's message is not an AG-UI `Event`",
    why: "The official decoder throws on a message that does not parse, names no event, \
          carries two, or whose base event names another type than its envelope; the client \
          ends the stream there.",
    example: "(binary) a frame of 1 byte, 0x0B: a group (wire type 3) that never ends",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-protobuf.mdx#the-wire-schema"),
    capability: None,
};

pub const PROTO_UNKNOWN_ARM: Rule = Rule {
    name: "framing/proto-unknown-arm",
    default: Level::Warn,
    versions: "every version",
    summary: "a protobuf frame holds only an event this build has no message for",
    why: "An event of a later protocol version arrives as an envelope field the 1.0 \
          definitions do not have. Clients drop it with a warning, as they drop an unknown \
          event type over SSE; what it carried is lost to them.",
    example: "(binary) a frame whose envelope holds only field 99",
    tier: Tier::Must,
    spec: spec!("basic/processing.mdx#every-transport-answers-the-same-way"),
    capability: None,
};

pub const PROTO_UNKNOWN_FIELD: Rule = Rule {
    name: "framing/proto-unknown-field",
    default: Level::Warn,
    versions: "every version",
    summary: "a protobuf frame carries a field this build's definitions do not have",
    why: "Protobuf decoding passes over a field whose number the message does not define (or a \
          known one sent in a wire type its type does not have) without a word: the official \
          decoder drops it, so no client reads what it held, and agui-lens cannot check it \
          (over SSE the same member is read, and checked: schema/unknown-field). Usually the \
          producer was built from newer definitions, or adds fields of its own.",
    example: "(binary) a TEXT_MESSAGE_CONTENT frame whose message also carries field 99",
    // The binding lets a decoder skip such a field; saying it is ours, as for a field over SSE.
    tier: Tier::Advice,
    spec: spec!("basic/transports/http-protobuf.mdx#the-wire-schema"),
    capability: None,
};

pub const PROTO_OVER_CLIENT_LIMIT: Rule = Rule {
    name: "framing/proto-over-client-limit",
    default: Level::Warn,
    versions: "every version",
    summary: "a protobuf frame is over the 10 MiB that the official TypeScript client reads",
    why: "`@ag-ui/client` ends the whole stream with an error (\"Protobuf message size exceeded \
          maximum limit of 10 MB\") at a frame of more than 10 MiB, its 4-byte length \
          included: the events before it arrive, the run is lost from there. The protocol \
          sets no limit, so the event is still read and checked; the same event sent over SSE \
          reaches that client whole.",
    example: "(binary) a TEXT_MESSAGE_CONTENT frame whose delta is 10.5 MB of text",
    tier: Tier::Advice,
    spec: spec!("basic/transports/http-protobuf.mdx#framing"),
    capability: None,
};
