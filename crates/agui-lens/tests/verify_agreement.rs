//! agui-lens agrees with the official TypeScript client on every stream of
//! fixtures/verify-cases/cases.jsonl. The verdicts there come from running @ag-ui/client 1.0.0
//! through reference/verify.mjs: event by event, the zod `EventSchemas`, then the client's
//! own `enforceEvents`, `transformChunks` and `verifyEvents`; reference/make-verify-cases.mjs
//! derives the corpus. No node here.
//!
//! Agreement: the reference passes a stream exactly when agui-lens reports no error from the
//! rules that correspond to the reference's checks (`V` below), and when the reference fails
//! at event `k`, the first such error agui-lens reports is at event `k`.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::sync::Arc;

use agui_lens_core::check::catalog::Levels;
use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::{Context, Engine};
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::read::{self, Batch, InputFormat, ReadOptions};
use serde_json::Value;

use crate::common::root;

/// The protocol rules that correspond to a check of verifyEvents or transformChunks.
const PROTOCOL_RULES: &[&str] = &[
    "lifecycle/first-event",
    "lifecycle/run-already-active",
    "lifecycle/event-after-finish",
    "lifecycle/event-after-error",
    "lifecycle/open-at-finish",
    "pairing/text-message",
    "pairing/tool-call",
    "pairing/reasoning",
    "pairing/reasoning-message",
    "pairing/step",
    "pairing/subagent",
    "pairing/chunk-missing-id",
    "pairing/attribution-mismatch",
];

/// Whether a diagnostic is one the reference would have failed the stream for.
fn in_v(d: &Diagnostic) -> bool {
    d.severity == Severity::Error
        && (d.rule.name().starts_with("schema/") || PROTOCOL_RULES.contains(&d.rule.name()))
}

/// Runs agui-lens's checker (default levels and options) over `bytes` read as `format`,
/// through the library the way `agui-lens check` wires it.
pub fn check_with(
    schemas: &SchemaSet,
    bytes: &[u8],
    format: Option<InputFormat>,
) -> Vec<Diagnostic> {
    run_checker(schemas, bytes, format, true)
}

/// Runs the checker with every event built in full, batch by batch: what the fast path of
/// `check_with` must agree with.
pub fn check_in_full(
    schemas: &SchemaSet,
    bytes: &[u8],
    format: Option<InputFormat>,
) -> Vec<Diagnostic> {
    run_checker(schemas, bytes, format, false)
}

fn run_checker(
    schemas: &SchemaSet,
    bytes: &[u8],
    format: Option<InputFormat>,
    fast: bool,
) -> Vec<Diagnostic> {
    let levels = Levels::default();
    let ctx = Context {
        schemas,
        levels: &levels,
        max_line: read::DEFAULT_MAX_LINE,
        protocol: ProtocolOptions::default(),
    };
    let name: Arc<str> = Arc::from("case");
    let mut opened = read::open_reader(
        name.clone(),
        Box::new(Cursor::new(bytes.to_vec())),
        format,
        &ReadOptions::default(),
    )
    .unwrap();
    let mut engine = Engine::new(&ctx, name, opened.head.clone());
    let mut diags = Vec::new();
    if fast {
        let failure = engine
            .check_reader(opened.reader.as_mut(), false, &mut diags, &mut |_| Ok(()))
            .unwrap();
        assert!(failure.is_none(), "reading from memory failed: {failure:?}");
    } else {
        engine = engine.without_fast_path();
        let mut batch = Batch::default();
        while opened.reader.next_batch(&mut batch).unwrap() {
            engine.check_batch(&batch, &mut diags);
        }
    }
    engine.finish(&mut diags);
    diags
}

/// One event per line.
pub fn jsonl(events: &[Value]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for event in events {
        bytes.extend_from_slice(serde_json::to_string(event).unwrap().as_bytes());
        bytes.push(b'\n');
    }
    bytes
}

/// The reference's verdict, as the event index it failed at (None: the stream passed).
fn expected_index(verdict: &Value) -> Option<u64> {
    if verdict["ok"] == Value::Bool(true) {
        None
    } else {
        Some(
            verdict["index"]
                .as_u64()
                .expect("a failed verdict has an index"),
        )
    }
}

#[test]
fn agui_lens_agrees_with_the_official_verifier() {
    // AGUI_VERIFY_CASES points at another corpus (e.g. a large exploratory one made with
    // `make-verify-cases.mjs --scale 20 --out ...`); the size checks below still apply.
    let path = std::env::var_os("AGUI_VERIFY_CASES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("fixtures/verify-cases/cases.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let schemas = SchemaSet::embedded().unwrap();
    let mut per_stage: BTreeMap<String, usize> = BTreeMap::new();
    let mut outcomes: Vec<(String, Option<String>)> = Vec::new();
    let mut cases = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let name = case["name"].as_str().unwrap();
        let events = case["events"].as_array().unwrap();
        let verdict = &case["verdict"];
        let stage = if verdict["ok"] == Value::Bool(true) {
            "ok"
        } else {
            verdict["stage"].as_str().unwrap()
        };
        *per_stage.entry(stage.to_owned()).or_default() += 1;
        cases += 1;

        let diags = check_with(&schemas, &jsonl(events), Some(InputFormat::Jsonl));
        let first = diags
            .iter()
            .filter(|d| in_v(d))
            .min_by_key(|d| d.event_index.unwrap_or(u64::MAX));
        let ours = first.map(|d| d.event_index.unwrap_or(u64::MAX));
        let theirs = expected_index(verdict);
        if ours != theirs {
            let said = match first {
                Some(d) => format!(
                    "event {}: {} {}",
                    d.event_index
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "-".into()),
                    d.rule,
                    d.message
                ),
                None => "nothing".into(),
            };
            let reference = match theirs {
                None => "ok".to_owned(),
                Some(i) => format!(
                    "{} at event {i} ({}): {}",
                    verdict["stage"].as_str().unwrap_or("?"),
                    events
                        .get(i as usize)
                        .and_then(|e| e.get("type"))
                        .and_then(Value::as_str)
                        .unwrap_or("?"),
                    verdict["message"].as_str().unwrap_or("")
                ),
            };
            outcomes.push((
                name.to_owned(),
                Some(format!(
                    "{name}\n    reference: {reference}\n    agui-lens: {said}"
                )),
            ));
        } else {
            outcomes.push((name.to_owned(), None));
        }
    }
    const KNOWN: &str = "fixtures/verify-cases/known-differences.tsv";
    let (disagreements, known) = crate::common::against_known(KNOWN, &outcomes);
    eprintln!("verify-cases: {known} known differences listed in {KNOWN}");
    eprintln!("verify-cases: {cases} cases {per_stage:?}");
    assert!(cases >= 1000, "only {cases} cases");
    for stage in ["ok", "schema", "chunks", "verify"] {
        assert!(
            per_stage.get(stage).copied().unwrap_or(0) >= 50,
            "too few `{stage}` verdicts: {per_stage:?}"
        );
    }
    assert!(
        disagreements.is_empty(),
        "{} of {cases} cases disagree with the official verifier:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
