//! Request rules: what a client sent to ask for a stream, where agui-lens sees the request
//! (a browser capture's entry).

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
