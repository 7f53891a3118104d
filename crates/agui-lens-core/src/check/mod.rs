//! Checking: frames parsed into events, each held to the JSON Schema of its type and to the
//! protocol's rules in stream order, every finding a [`diagnostic::Diagnostic`] of a rule in
//! the [`catalog`].

pub mod capabilities;
pub mod catalog;
pub mod checker;
pub mod diagnostic;
pub mod engine;
pub mod opened;
pub mod parse;
pub mod recorded;
pub mod request;
pub mod rules;
pub mod schema;
pub mod stream;
pub mod version;

pub use checker::Checker;
