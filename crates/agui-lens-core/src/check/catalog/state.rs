//! The state rules: what each checks, why, an example that trips it, its default level.
//! The checks themselves are in `check/rules/state.rs`.

use super::{Level, Rule, Tier};

pub const PATCH_FAILED: Rule = Rule {
    name: "state/patch-failed",
    default: Level::Deny,
    versions: "every version",
    summary: "a STATE_DELTA does not apply to the current state",
    why: "Clients apply each delta to the state they have; a patch that does not apply is \
          skipped (the official client only logs a warning), so the UI silently drifts from \
          the agent's state.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"STATE_SNAPSHOT","snapshot":{"count":1}}
{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/total","value":2}]}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/snapshots.mdx#when-a-patch-does-not-apply"),
    capability: None,
};

pub const NO_BASELINE: Rule = Rule {
    name: "state/no-baseline",
    default: Level::Warn,
    versions: "every version",
    summary: "a STATE_DELTA before any known state (no input.state, no STATE_SNAPSHOT): applied to the {} a client starts with, and a patch that fails there",
    why: "A delta only means something against the state it was computed from. A client that \
          has no state applies it to the {} its agent starts with, as agui-lens does; if the \
          agent meant another state (the capture starts mid-thread), the client's state \
          differs from the agent's. --initial-state gives the baseline a recording lacks.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"STATE_DELTA","delta":[{"op":"add","path":"/count","value":1}]}
"#,
    tier: Tier::Advice,
    spec: spec!("basic/run-input.mdx#state"),
    capability: None,
};

pub const TOO_LARGE: Rule = Rule {
    name: "state/too-large",
    default: Level::Deny,
    versions: "every version",
    summary: "a patch that would grow the state past the limit (256 MiB unless --max-state)",
    why: "Copying the root into itself doubles the state with each operation; a client \
          applying such a patch runs out of memory. The patch is refused instead.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"STATE_SNAPSHOT","snapshot":{"a":"x"}}
{"type":"STATE_DELTA","delta":[{"op":"copy","from":"","path":"/b"},{"op":"copy","from":"","path":"/c"},"… 40 times"]}
"#,
    tier: Tier::Advice,
    spec: spec!("basic/patterns/snapshots.mdx#deltas"),
    capability: None,
};

pub const ACTIVITY_PATCH_FAILED: Rule = Rule {
    name: "state/activity-patch-failed",
    default: Level::Deny,
    versions: "every version",
    summary: "an ACTIVITY_DELTA does not apply to its activity's content",
    why: "The activity widget keeps its previous content and stops following the agent.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"PLAN","content":{"steps":[]}}
{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"PLAN","patch":[{"op":"replace","path":"/steps/3/done","value":true}]}
"#,
    tier: Tier::Must,
    spec: spec!("basic/patterns/snapshots.mdx#when-a-patch-does-not-apply"),
    capability: None,
};

pub const ACTIVITY_UNKNOWN: Rule = Rule {
    name: "state/activity-unknown",
    default: Level::Warn,
    versions: "every version",
    summary: "an ACTIVITY_DELTA for an activity no snapshot has created",
    why: "Clients drop a delta for an activity they have not seen. The snapshot may be in an \
          earlier capture, so this is a warning.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"ACTIVITY_DELTA","messageId":"a9","activityType":"PLAN","patch":[]}
"#,
    tier: Tier::Must,
    spec: spec!("events/activity.mdx#activity_delta"),
    capability: None,
};

pub const ACTIVITY_TYPE_CHANGED: Rule = Rule {
    name: "state/activity-type-changed",
    default: Level::Warn,
    versions: "every version",
    summary: "an activity event names another activityType than the activity has",
    why: "Clients pick the widget by activityType; a change swaps the widget or drops the \
          event.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"PLAN","content":{}}
{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"SEARCH","patch":[]}
"#,
    tier: Tier::Advice,
    spec: spec!("events/activity.mdx#activity_delta"),
    capability: None,
};
