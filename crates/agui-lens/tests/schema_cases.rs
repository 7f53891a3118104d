//! The JSON Schemas give the same verdict as the 1.0 SDK's own zod validators on every case in
//! fixtures/schema-cases/cases.jsonl (verdicts stamped by reference/zod-validate.mjs).

use agui_lens_core::check::catalog::Levels;
use agui_lens_core::check::diagnostic::Severity;
use agui_lens_core::check::rules::schema;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::protocol::event::{Event, Location};
use serde_json::Value;

use crate::common::root;

#[test]
fn schemas_agree_with_the_sdk_on_every_case() {
    let set = SchemaSet::embedded().unwrap();
    let levels = Levels::default();
    let text = std::fs::read_to_string(root().join("fixtures/schema-cases/cases.jsonl")).unwrap();
    let mut disagreements = Vec::new();
    let mut compared = 0;
    let mut invalid = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let name = case["name"].as_str().unwrap();
        let expected = if case["skip_zod"] == Value::Bool(true) {
            case["expected_schema_valid"].as_bool().unwrap()
        } else {
            case["zod_valid"].as_bool().unwrap()
        };
        let value = case["event"].clone();
        let loc = Location {
            path: "cases".into(),
            line: 1,
            offset: 0,
            index: 0,
        };
        let event = Event::from_value(loc, value);
        let mut found = Vec::new();
        schema::check(&event, &set, &levels, &mut found);
        let valid = !found.iter().any(|d| d.severity == Severity::Error);
        compared += 1;
        invalid += usize::from(!valid);
        if valid != expected {
            let messages: Vec<String> = found
                .iter()
                .map(|d| format!("{}: {}", d.rule, d.message))
                .collect();
            disagreements.push(format!(
                "{name}: expected valid={expected}, got {messages:?}"
            ));
        }
    }
    assert!(compared > 800, "only {compared} cases");
    assert!(invalid > 500, "only {invalid} cases were found invalid");
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
