//! The schema rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/schema.rs`.

use super::{Level, Rule, Tier};

pub const MISSING_TYPE: Rule = Rule {
    name: "schema/missing-type",
    default: Level::Deny,
    versions: "every version",
    summary: "an event object has no `type` string",
    why: "The `type` field is how every client dispatches an event; without it the event is \
          dropped or rejected.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"messageId":"m1","delta":"hello"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#events"),
    capability: None,
};

pub const UNKNOWN_EVENT_TYPE: Rule = Rule {
    name: "schema/unknown-event-type",
    default: Level::Deny,
    versions: "every version",
    summary: "an event's `type` is not one AG-UI defines",
    why: "The 1.0 SDK's event schema is a closed union of types: a client either fails the run \
          or drops the event with a console warning, so nothing it carried reaches the user. \
          Application-specific events belong in CUSTOM.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_DELTA","messageId":"m1","delta":"hi"}
"#,
    tier: Tier::Must,
    spec: spec!("basic/processing.mdx#what-a-producer-must-not-do"),
    capability: None,
};

pub const VIOLATION: Rule = Rule {
    name: "schema/violation",
    default: Level::Deny,
    versions: "every version",
    summary: "an event does not match the JSON Schema of its type",
    why: "The 1.0 SDK's schema rejects the event: a missing required field, a wrong type, a bad \
          enum value. Depending on its pipeline a client fails the run or strips what it does not \
          recognise, so what the agent sent is not what the user sees.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":42}
"#,
    tier: Tier::Must,
    spec: spec!("basic/processing.mdx#the-rule"),
    capability: None,
};

pub const UNKNOWN_FIELD: Rule = Rule {
    name: "schema/unknown-field",
    default: Level::Warn,
    versions: "every version",
    summary: "an event carries a field its type does not define",
    why: "Unknown fields are allowed and passed through, but they are usually a typo or a \
          snake_case name where the protocol uses camelCase (`message_id` for `messageId`), \
          which leaves the real field missing.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant","message_id":"m1"}
"#,
    tier: Tier::Should,
    spec: spec!("basic/processing.mdx#what-a-consumer-does-with-unrecognised-material"),
    capability: None,
};

pub const NULL_FOR_OPTIONAL: Rule = Rule {
    name: "schema/null-for-optional",
    default: Level::Deny,
    versions: "every version",
    summary: "an optional field is present with the value null",
    why: "AG-UI 1.0 means \"absent\" by leaving a field out; the 1.0 client rejects null for \
          optional fields. Clients before 1.0 tolerated some of these (parentMessageId, \
          outcome), so a team still on an older client may downgrade this rule.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":null}
"#,
    tier: Tier::Must,
    spec: spec!("basic/index.mdx#absent-means-absent"),
    capability: None,
};

pub const DEPRECATED_EVENT: Rule = Rule {
    name: "schema/deprecated-event",
    default: Level::Warn,
    versions: "streams that declare no version, checked without --protocol (a run that declares 1.0 or later, or held to it by --protocol: version/removed-event; one judged by 0.x: allowed)",
    summary: "a THINKING_* event, removed in AG-UI 1.0",
    why: "1.0 replaced THINKING_* with REASONING_*. The official 1.0 client's schema does not \
          know them and fails the run at the first one; 1.1 calls them a retired shape, which a \
          consumer should translate into its replacement before enforcing the protocol. A \
          stream that declares no version is one from before versioning, so a warning here; \
          the same events in a run that declares 1.0 or later, or held to it by --protocol, \
          are version/removed-event errors.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"THINKING_START","title":"planning"}
"#,
    tier: Tier::Should,
    spec: spec!("basic/versioning.mdx#retired-shapes"),
    capability: None,
};
