//! Integration tests: one binary, one module per area.

mod baselines;
mod browser;
mod cat;
mod cli;
mod common;
mod compaction;
mod compaction_props;
mod compaction_trees;
mod comparing;
mod fast_path;
mod fixtures;
mod fold_agreement;
mod fold_props;
mod hostile;
mod inspect;
mod live;
mod patch_agreement;
mod patch_props;
mod peer;
mod properties;
mod schema_cases;
mod transports;
mod trust;
mod verdicts;
mod verify_agreement;
mod wiring;
