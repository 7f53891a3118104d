//! Every fixture through the real binary: valid ones check clean, each invalid one trips the
//! rule it is named after, and what the user sees is snapshotted.

use std::collections::BTreeSet;
use std::path::Path;

use agui_lens_core::check::catalog::RuleId;

use crate::common::{fixture_args, fixture_files, run};

/// `fixtures/invalid/state/patch-failed-move.jsonl` pins `state/patch-failed`.
fn pinned_rule(fixture: &Path) -> RuleId {
    let family = fixture
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    let stem = fixture.file_stem().unwrap().to_str().unwrap();
    let stem = stem.split('.').next().unwrap();
    let wanted = format!("{family}/{stem}");
    RuleId::ALL
        .iter()
        .copied()
        .filter(|id| wanted == id.name() || wanted.starts_with(&format!("{}-", id.name())))
        .max_by_key(|id| id.name().len())
        .unwrap_or_else(|| panic!("{} names no rule", fixture.display()))
}

fn check_output(fixture: &Path) -> (i32, String) {
    let mut args = vec!["check".to_string(), "--color".into(), "never".into()];
    args.extend(fixture_args(fixture));
    args.push(fixture.to_string_lossy().into_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run(&args);
    assert!(stderr.is_empty(), "{}: stderr {stderr}", fixture.display());
    (code, stdout)
}

fn snapshot_name(fixture: &Path) -> String {
    fixture
        .strip_prefix("fixtures")
        .unwrap()
        .to_string_lossy()
        .replace(['/', '\\'], "__")
}

#[test]
fn valid_fixtures_check_clean() {
    let fixtures = fixture_files("fixtures/valid");
    assert!(fixtures.len() >= 5);
    for fixture in fixtures {
        let (code, stdout) = check_output(&fixture);
        assert_eq!(code, 0, "{}:\n{stdout}", fixture.display());
        assert!(
            !stdout.contains("error["),
            "{}:\n{stdout}",
            fixture.display()
        );
        insta::assert_snapshot!(snapshot_name(&fixture), stdout);
    }
}

#[test]
fn invalid_fixtures_trip_their_rule() {
    for fixture in fixture_files("fixtures/invalid") {
        let rule = pinned_rule(&fixture);
        let (code, stdout) = check_output(&fixture);
        assert!(
            stdout.contains(&format!("[{}]", rule.name())),
            "{} does not trip {}:\n{stdout}",
            fixture.display(),
            rule.name()
        );
        let is_error = stdout.contains(&format!("error[{}]", rule.name()));
        assert_eq!(
            code,
            i32::from(is_error || stdout.contains("error[")),
            "{}",
            fixture.display()
        );
        insta::assert_snapshot!(snapshot_name(&fixture), stdout);
    }
}

/// Rules that need a live connection (tests/live.rs trips each). Of them, a browser capture
/// can trip `transport/http-status` and `transport/content-type` (it holds each response's
/// status and type): fixtures/invalid/transport pins those too.
const LIVE_ONLY: &[&str] = &["transport/", "suite/"];

#[test]
fn every_rule_has_a_fixture() {
    let mut pinned: BTreeSet<RuleId> = fixture_files("fixtures/invalid")
        .iter()
        .map(|f| pinned_rule(f))
        .collect();
    // The rules of a thread's next request: a `serve` script and the requests a client sends,
    // one folder each (tests/serving.rs trips each).
    let served = crate::common::root().join("fixtures/serve/request");
    for dir in std::fs::read_dir(served).unwrap() {
        let dir = dir.unwrap().path();
        pinned.insert(pinned_rule(&dir));
    }
    let missing: Vec<&str> = RuleId::ALL
        .iter()
        .filter(|id| !pinned.contains(id))
        .map(|id| id.name())
        .filter(|name| !LIVE_ONLY.iter().any(|prefix| name.starts_with(prefix)))
        .collect();
    assert!(missing.is_empty(), "rules without a fixture: {missing:?}");
}
