//! agui-lens: read AG-UI event streams, check them against the protocol, fold them into what
//! a client ends with, compact and compare them.
//!
//! The stages, in the order data moves: [`read`] (bytes → located frames), [`check`] (frames
//! → events → [`check::diagnostic::Diagnostic`]s), [`report`] (diagnostics → output);
//! [`fold`], [`compact`] and [`compare`] read the same events; [`write`] writes events back
//! out. [`protocol`] is the model they share. [`commands`] wires them for the binary.

pub mod check;
pub mod compact;
pub mod compare;
pub mod fold;
pub mod protocol;
pub mod read;
pub mod report;
pub mod stop;
pub mod text;
pub mod write;

pub mod alloc;
pub mod cli;
pub mod commands;
pub mod config;
pub mod glob;
pub mod inspect;
pub mod live;
pub mod render;
pub mod signals;
pub mod suite;
