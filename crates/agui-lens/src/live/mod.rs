//! Live agents: the RunAgentInput sent, the one POST, and the response checked as it arrives.

pub mod call;
pub mod http;
pub mod request;
