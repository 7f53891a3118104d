//! The order rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/order.rs`.

use super::{Level, Rule, Tier};

pub const TIMESTAMP_DECREASING: Rule = Rule {
    name: "order/timestamp-decreasing",
    default: Level::Warn,
    versions: "every version",
    summary: "an event's timestamp is earlier than the previous event's",
    why: "Timelines and durations are computed from timestamps; going back in time usually \
          means events were reordered or two clocks were mixed.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","timestamp":1732000000500}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","timestamp":1732000000100}
"#,
    tier: Tier::Advice,
    spec: spec!("basic/index.mdx#events"),
    capability: None,
};

pub const TIMESTAMP_UNIT: Rule = Rule {
    name: "order/timestamp-unit",
    default: Level::Warn,
    versions: "every version",
    summary: "timestamps that read as seconds, not milliseconds since the epoch",
    why: "AG-UI timestamps are milliseconds; seconds (Python's int(time.time())) put every \
          event in January 1970 for a client.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","timestamp":1732000000}
"#,
    tier: Tier::Advice,
    spec: spec!("basic/index.mdx#events"),
    capability: None,
};
