//! The protocol's model, shared by every stage: events and where they were read, chunk
//! expansion, JSON Patch as clients apply it, sets of ids, the protocol's versions.

pub mod chunks;
pub mod event;
pub mod ids;
pub mod patch;
pub mod proto;
pub mod version;

pub use event::{Event, EventType, Location, RawPatch};
