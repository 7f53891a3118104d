//! The version rules: what a stream declares of the protocol version it speaks
//! (docs/spec/1.1/basic/versioning in ag-ui-protocol/ag-ui), and what that version allows.

use super::{Level, Rule, Tier};

pub const UNDECLARED: Rule = Rule {
    name: "version/undeclared",
    default: Level::Note,
    versions: "every version",
    summary: "a run's RUN_STARTED declares no protocolVersion: the stream is judged by --protocol, else by the newest version agui-lens knows",
    why: "Since 1.0 a producer declares its own version on every RUN_STARTED (a MUST); a \
          missing one means a peer from before versioning. The spec has a peer of unknown \
          version treated as current, so the stream is held to the newest rules unless \
          --protocol names the era it comes from (0.x for the releases before 1.0).",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/versioning.mdx#version-negotiation"),
    capability: None,
};

pub const UNRECOGNISED: Rule = Rule {
    name: "version/unrecognised",
    default: Level::Warn,
    versions: "every version",
    summary: "in a run that declares a newer version than agui-lens knows, an event type or a \
              member of a closed set (a patch op, an outcome, a role) the newest known version \
              does not name",
    why: "The newer version may add it: the processing model says unrecognised material \
          \"MUST NOT abort the run\", and a client that does not know it drops the event, or \
          strips the member, with a warning. agui-lens cannot judge it, so it says what such a \
          client will do rather than calling it an error. Under a version agui-lens knows, the \
          same material is the producer's error; a known field with a value of the wrong type \
          is malformed under any version.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.7"}
{"type":"FUTURE_EVENT","detail":1}
"#,
    tier: Tier::Should,
    spec: spec!("basic/processing.mdx#the-rule"),
    capability: None,
};

pub const NEWER: Rule = Rule {
    name: "version/newer",
    default: Level::Warn,
    versions: "every version",
    summary: "a run declares a protocol version newer than agui-lens knows; it is checked by the newest it knows",
    why: "A consumer meets a newer minor version by going on and warning (a SHOULD): what the \
          newer version adds shows as unknown fields and events, which agui-lens reports but \
          cannot judge.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.7"}
"#,
    tier: Tier::Should,
    spec: spec!("basic/versioning.mdx#version-negotiation"),
    capability: None,
};

pub const UNINTERPRETABLE: Rule = Rule {
    name: "version/uninterpretable",
    default: Level::Warn,
    versions: "every version",
    summary: "a declared protocolVersion is not MAJOR.MINOR (\"1.0.0\", \"latest\"); the run is handled like one that declares a newer version than agui-lens knows, by the newest it knows",
    why: "A version is the MAJOR.MINOR a frozen spec lives under, compared number by number. \
          The spec has a declaration a party cannot interpret handled like a newer one: \
          proceed, and warn (a SHOULD); the official client does so. What the newest known \
          version does not name is then said as version/unrecognised, not judged an error.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0.0"}
"#,
    tier: Tier::Should,
    spec: spec!("basic/versioning.mdx#version-negotiation"),
    capability: None,
};

pub const REMOVED_EVENT: Rule = Rule {
    name: "version/removed-event",
    default: Level::Deny,
    versions: "1.0 and later",
    summary: "an event type the declared version does not have: THINKING_* in a run that declares 1.0 or later, or is held to it by --protocol",
    why: "1.0 removed the THINKING_* events (REASONING_* replace them). A producer that \
          declares 1.0 owes the shapes 1.0 describes; its clients may drop what it sends.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}
{"type":"THINKING_START","title":"planning"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/processing.mdx#what-a-producer-must-not-do"),
    capability: None,
};
