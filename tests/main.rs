//! Integration tests: one binary, one module per area.

mod common;
mod schema_cases;
