//! Integration tests: one binary, one module per area.

mod cli;
mod common;
mod fixtures;
mod hostile;
mod schema_cases;
