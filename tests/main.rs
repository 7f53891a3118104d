//! Integration tests: one binary, one module per area.

mod cli;
mod common;
mod compaction;
mod fixtures;
mod hostile;
mod schema_cases;
