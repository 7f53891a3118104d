//! Suite rules: a case of a conformance suite (`agui-lens test`) that does not meet what the
//! suite file expects of it. Reported by `commands/test.rs` at the case's line in the suite.

use super::{Level, Rule, Tier};

pub const STATUS_MISMATCH: Rule = Rule {
    name: "suite/status-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "a case's HTTP status is not its expect_status (any 2xx when none is given)",
    why: "A case states how the agent must answer: a stream (200), or a refusal such as 422 \
          for a case that sends a bad body. Any other answer fails the case.",
    example: "[[case]]\nname = \"bad body\"\nexpect_status = 422\n(the agent answers 200)",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#errors"),
    capability: None,
};

pub const MISSING_EVENT: Rule = Rule {
    name: "suite/missing-event",
    default: Level::Deny,
    versions: "every version",
    summary: "an event type in a case's require_events never appeared in its stream",
    why: "A stream can be valid and still not do what the case is for: a tool call that never \
          happens, a message that never starts.",
    example: "[[case]]\nrequire_events = [\"TOOL_CALL_START\"]\n(the agent answers with text only)",
    tier: Tier::Must,
    spec: spec!("events/index.mdx"),
    capability: None,
};

pub const SNAPSHOT_MISMATCH: Rule = Rule {
    name: "suite/snapshot-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "a case's stream differs from its snapshot (compared as `agui-lens snapshot` does), or the snapshot does not exist yet",
    why: "The snapshot holds what the stream meant when someone last accepted it; a change in \
          meaning is either a regression or needs accepting. The new result is written beside \
          the snapshot as FILE.new for `agui-lens snapshot review`.",
    example: "[[case]]\nsnapshot = \"snapshots/chat.snap\"\n(the agent now answers \"Hi\" where the snapshot says \"Hello\")",
    tier: Tier::Must,
    spec: "https://docs.ag-ui.com/concepts/serialization",
    capability: None,
};

pub const FIRST_EVENT_SLOW: Rule = Rule {
    name: "suite/first-event-slow",
    default: Level::Deny,
    versions: "every version",
    summary: "a case's first event came later than its max_first_event_ms (or never)",
    why: "Time to first event is what a user waits before anything moves on screen.",
    example: "[[case]]\nmax_first_event_ms = 3000\n(RUN_STARTED arrives after 4.2 s)",
    tier: Tier::Must,
    spec: spec!("events/text-messages.mdx"),
    capability: None,
};

pub const NO_STREAM: Rule = Rule {
    name: "suite/no-stream",
    default: Level::Deny,
    versions: "every version",
    summary: "a case answered with a 2xx status got a body with no AG-UI events",
    why: "A case that expects a stream and gets none (an empty body, an error object sent with \
          status 200) did not run the agent, whatever the rules say about the body: with no \
          events there is nothing the stream rules can fail on.",
    example: "[[case]]\nname = \"chat\"\n(the agent answers 200 with {\"error\": \"overloaded\"})",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
};

pub const TURN_MISMATCH: Rule = Rule {
    name: "suite/turn-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "a later turn of a conversation does not fit how the turn before ended: a frontend \
              tool call left waiting that the turn gives no result for, a result for a tool \
              nobody called, or interrupts with no resume (or a resume with none)",
    why: "A client cannot go on from a run that asks for a tool result or an answer it does \
          not give; when the agent ends a turn differently than the case expects, the next turn \
          would test a conversation no client would hold.",
    example: "[[case]]\nname = \"tools\"\n[[case.turn]]\ntool_results = { change_background = \"done\" }\n(turn 1 ended without calling change_background)",
    tier: Tier::Must,
    spec: spec!("events/tool-calls.mdx#frontend-tools"),
    capability: None,
};
