//! agui-lens's fold agrees with the official TypeScript reducer on every stream of
//! fixtures/fold-cases/cases.jsonl. The expected messages and state there come from running
//! @ag-ui/client 1.0.0 (`transformChunks`, then `defaultApplyEvents`, from the first
//! RUN_STARTED's input) through reference/fold.mjs; reference/make-fold-cases.mjs derives the
//! corpus (hand-built scenarios, random streams over small id pools, the patch corpus replayed
//! through STATE_DELTA / ACTIVITY_DELTA, events outside the schema, and the real recordings).
//! No node here.
//!
//! Agreement: `finish().meaning()` equals the reference's `{"messages", "state"}`, comparing
//! numbers by value (agui-lens keeps `1.0` as written, JavaScript prints `1`) and objects
//! regardless of key order.

use std::sync::Arc;

use agui_lens_core::fold::Folder;
use serde_json::Value;

use crate::common::{against_known, root};

const KNOWN: &str = "fixtures/fold-cases/known-differences.tsv";
use crate::patch_agreement::{first_difference, show};

/// Folds a stream of event values the way `agui-lens fold` does, through the library.
pub fn fold_values(events: &[Value]) -> Value {
    let path: Arc<str> = Arc::from("fold-case");
    let mut folder = Folder::new(1 << 30);
    for (i, value) in events.iter().enumerate() {
        folder.apply(&crate::common::event_at(&path, i, value.clone()));
    }
    folder.finish().meaning()
}

#[test]
fn fold_agrees_with_the_official_reducer() {
    // AGUI_FOLD_CASES=FILE replays another corpus of the same shape (e.g. a minimised repro);
    // AGUI_FOLD_SHOW=1 also prints agui-lens's whole result for each disagreement.
    let file = std::env::var_os("AGUI_FOLD_CASES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("fixtures/fold-cases/cases.jsonl"));
    let show_all = std::env::var_os("AGUI_FOLD_SHOW").is_some();
    let text = std::fs::read_to_string(&file).unwrap();
    let mut outcomes: Vec<(String, Option<String>)> = Vec::new();
    let mut total = 0;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        total += 1;
        let case: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("cases.jsonl line {}: {e}", n + 1));
        let name = case["name"].as_str().unwrap_or("?");
        let events = case["events"].as_array().expect("events");
        let got = std::panic::catch_unwind(|| fold_values(events));
        let got = match got {
            Ok(v) => v,
            Err(_) => {
                outcomes.push((
                    name.to_owned(),
                    Some(format!("line {} {name}: agui-lens panicked", n + 1)),
                ));
                continue;
            }
        };
        let mut difference = None;
        if let Some((at, ours, theirs)) = first_difference(&got, &case["expected"]) {
            let mut failure = format!(
                "line {} {name}: differs at {at:?}: agui-lens {} vs reference {}",
                n + 1,
                show(&ours),
                show(&theirs)
            );
            if show_all {
                failure.push_str(&format!(
                    "\n    agui-lens {got}\n    reference {}",
                    case["expected"]
                ));
            }
            difference = Some(failure);
        }
        outcomes.push((name.to_owned(), difference));
    }
    assert!(total > 0, "no fold cases");
    let (failures, known) = against_known(KNOWN, &outcomes);
    eprintln!("fold-cases: {total} cases, {known} known differences listed in {KNOWN}");
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("{f}");
        }
        panic!(
            "{} of {total} fold cases disagree with the official reducer",
            failures.len()
        );
    }
}
