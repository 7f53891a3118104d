//! Transport rules: what went wrong between agui-lens and a live agent (`agui-lens run` and
//! `agui-lens test`). Reported by `commands/live.rs`; of a capture on disk, only a browser
//! capture (HAR) can trip `transport/http-status` and `transport/content-type`: it holds each
//! response's status and type (`check::opened`).

use super::{Level, Rule, Tier};

pub const HTTP_STATUS: Rule = Rule {
    name: "transport/http-status",
    default: Level::Deny,
    versions: "every version",
    summary: "the agent answered with an error status (400 or above), or a redirect, which is not followed",
    why: "A client gets no events from an error response: the run fails before it starts. The \
          body (shown abbreviated) usually says why: a validation error in the RunAgentInput, \
          a missing token, a crashed handler. A POST is not re-sent to a redirect's target, so \
          a redirect (often to a login page) is reported too.",
    example: "HTTP/1.1 500 Internal Server Error\n\
              content-type: text/html\n\
              \n\
              <html><title>Internal Server Error</title>…</html>",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
};

pub const CONTENT_TYPE: Rule = Rule {
    name: "transport/content-type",
    default: Level::Deny,
    versions: "every version",
    summary: "a successful response whose Content-Type is no event stream (text/event-stream, or application/vnd.ag-ui.event+proto)",
    why: "Proxies and browsers buffer or transform what is not declared an event stream, and \
          a wrong type usually means the body is not one: an HTML login page from an \
          authenticating proxy, or a JSON error sent with status 200. When the body does look \
          like SSE or protobuf frames it is still checked.",
    example: "HTTP/1.1 200 OK\n\
              content-type: text/html; charset=utf-8\n\
              \n\
              <!doctype html><html><title>Sign in</title>…",
    tier: Tier::Must,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
};

pub const NOT_NEGOTIATED: Rule = Rule {
    name: "transport/not-negotiated",
    default: Level::Warn,
    versions: "every version",
    summary: "the agent answered in another transport than the request asked for (SSE to a protobuf request, or the reverse)",
    why: "A server picks the transport from the request's Accept header. The official client \
          reads a body by its Content-Type, so it copes, but a client that asked for protobuf \
          because it can only read protobuf (or a proxy that passes only one) gets a stream \
          it cannot use. The body is checked in the transport it came in.",
    example: "POST /agent  Accept: application/vnd.ag-ui.event+proto\n\
              HTTP/1.1 200 OK\n\
              content-type: text/event-stream",
    tier: Tier::Capability,
    spec: spec!("basic/transports/http-protobuf.mdx#negotiation"),
    capability: Some("transport.httpBinary"),
};

pub const CONNECTION_LOST: Rule = Rule {
    name: "transport/connection-lost",
    default: Level::Deny,
    versions: "every version",
    summary: "the connection closed or was reset before the response body ended",
    why: "The client sees a stream cut short: messages and tool calls stay open and the run \
          never finishes. Usually the agent process crashed, or a proxy or load balancer cut \
          a long response. What arrived before the cut is still checked; agui-lens never \
          reconnects, because a reconnect would run the agent again.",
    example: "HTTP/1.1 200 OK\n\
              content-type: text/event-stream\n\
              transfer-encoding: chunked\n\
              \n\
              data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\
              \n\
              data: {\"type\":\"TEXT_MESS   (connection reset)",
    tier: Tier::Must,
    spec: spec!("basic/transports/index.mdx#truncation"),
    capability: None,
};

pub const IDLE_TIMEOUT: Rule = Rule {
    name: "transport/idle-timeout",
    default: Level::Deny,
    versions: "every version",
    summary: "no bytes arrived for --idle-timeout seconds (60 unless set), waiting for the response or inside it",
    why: "Proxies and load balancers close connections that stay silent (often after 60 s), \
          and users give up. An agent doing long work should keep the stream alive, e.g. with \
          SSE comment lines (`: keep-alive`).",
    example: "HTTP/1.1 200 OK\n\
              content-type: text/event-stream\n\
              \n\
              data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\
              \n\
              (nothing more for 60 s)",
    tier: Tier::Advice,
    spec: spec!("basic/transports/http-sse.mdx#response"),
    capability: None,
};

pub const TIMEOUT: Rule = Rule {
    name: "transport/timeout",
    default: Level::Deny,
    versions: "every version",
    summary: "the response took longer in all than --timeout allows",
    why: "A run that goes on past the budget a CI gate or a user allows is a failure even if \
          every byte is valid, including a stream that trickles on forever.",
    example: "agui-lens run --timeout 30 URL   (the stream is still going after 30 s)",
    tier: Tier::Advice,
    spec: spec!("basic/transports/index.mdx#truncation"),
    capability: None,
};

pub const RUN_ID_MISMATCH: Rule = Rule {
    name: "transport/run-id-mismatch",
    default: Level::Deny,
    versions: "every version",
    summary: "RUN_STARTED names another threadId or runId than the RunAgentInput that was sent",
    why: "A client files the run's messages and state under the ids it sent; a server that \
          makes up its own ids leaves the client's thread without the answer.",
    example: "POST {\"threadId\":\"t1\",\"runId\":\"r1\",…}\n\
              data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"run-42\"}",
    tier: Tier::Must,
    spec: spec!("basic/run-input.mdx#identity"),
    capability: None,
};
