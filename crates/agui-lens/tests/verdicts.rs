//! Right verdicts for every producer: the state a client starts with, protocol versions, and
//! no finding on what the protocol allows.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{root, run};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn write(dir: &Path, name: &str, lines: &[Value]) -> std::path::PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn folded_state(args: &[&str]) -> Value {
    let mut full = vec!["fold", "--compact"];
    full.extend_from_slice(args);
    let (code, stdout, stderr) = run(&full);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str::<Value>(&stdout).unwrap()["state"].clone()
}

fn rules_found(args: &[&str]) -> (i32, Vec<String>, Value) {
    let mut full = vec!["check", "--format", "json"];
    full.extend_from_slice(args);
    let (code, stdout, _) = run(&full);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let rules = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_owned())
        .collect();
    (code, rules, doc)
}

/// A STATE_DELTA before any snapshot is applied, as the official client applies it, to the
/// `{}` its agent starts with: fold ends with the patched state, compaction keeps it, and
/// `check` warns that the baseline was assumed.
#[test]
fn a_delta_before_any_snapshot_applies_to_the_empty_state() {
    let fixture = root().join("fixtures/invalid/state/no-baseline.jsonl");
    assert_eq!(folded_state(&[s(&fixture)]), json!({"counter": 2}));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("compacted.jsonl");
    let (code, _, stderr) = run(&["compact", s(&fixture), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(folded_state(&[s(&out)]), json!({"counter": 2}));

    let (code, rules, doc) = rules_found(&[s(&fixture)]);
    assert_eq!(code, 0);
    assert_eq!(rules, ["state/no-baseline"]);
    let message = doc["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("applied to {}"), "{message}");
}

/// `--initial-state` (JSON or a file) gives the baseline a recording does not carry, to
/// check, fold, compact and inspect alike; without it, a delta that does not apply to `{}`
/// is a warning about the capture, not an error of the agent.
#[test]
fn initial_state_gives_the_baseline_a_recording_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let stream = write(
        dir.path(),
        "mid-thread.jsonl",
        &[
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
            json!({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/counter","value":2}]}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ],
    );
    let (code, rules, _) = rules_found(&[s(&stream)]);
    assert_eq!(code, 0, "an assumed baseline is no error of the agent");
    assert_eq!(rules, ["state/no-baseline", "state/no-baseline"]);
    assert_eq!(
        folded_state(&[s(&stream)]),
        Value::Null,
        "the patch did not apply"
    );

    let baseline = dir.path().join("baseline.json");
    std::fs::write(&baseline, r#"{"counter": 1, "name": "kept"}"#).unwrap();
    for given in [r#"{"counter": 1, "name": "kept"}"#, s(&baseline)] {
        let (code, rules, _) = rules_found(&["--initial-state", given, s(&stream)]);
        assert_eq!((code, rules), (0, Vec::<String>::new()), "{given}");
        assert_eq!(
            folded_state(&["--initial-state", given, s(&stream)]),
            json!({"counter": 2, "name": "kept"})
        );
        let (code, stdout, stderr) = run(&["inspect", "--initial-state", given, s(&stream)]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(stdout.contains("/counter: 1 → 2"), "{stdout}");
    }
    let out = dir.path().join("compacted.jsonl");
    let (code, _, stderr) = run(&[
        "compact",
        "--initial-state",
        s(&baseline),
        s(&stream),
        "-o",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        folded_state(&["--initial-state", s(&baseline), s(&out)]),
        json!({"counter": 2, "name": "kept"})
    );
    let (code, _, stderr) = run(&["fold", "--initial-state", "{not json", s(&stream)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--initial-state"), "{stderr}");
}
