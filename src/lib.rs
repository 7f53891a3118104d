//! agui-lens: read AG-UI event streams, check them against the protocol, fold them into what
//! a client ends with, compact and compare them.
//!
//! The stages, in the order data moves: [`source`] (bytes → located frames and events),
//! [`rules`] (events → [`diagnostic::Diagnostic`]s), [`report`] (diagnostics → output).
//! [`commands`] wires them for the binary.

pub mod alloc;
pub mod chunks;
pub mod cli;
pub mod commands;
pub mod compact;
pub mod comparison;
pub mod config;
pub mod diagnostic;
pub mod difference;
pub mod event;
pub mod fold;
pub mod glob;
pub mod idset;
pub mod inspect;
pub mod interrupt;
pub mod normalize;
pub mod patch;
pub mod report;
pub mod request;
pub mod rules;
pub mod schema;
pub mod sink;
pub mod source;
pub mod suite;
