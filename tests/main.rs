//! Integration tests: one binary, one module per area.

mod cli;
mod common;
mod compaction;
mod comparing;
mod fixtures;
mod fold_agreement;
mod hostile;
mod live;
mod patch_agreement;
mod peer;
mod properties;
mod schema_cases;
mod verify_agreement;
