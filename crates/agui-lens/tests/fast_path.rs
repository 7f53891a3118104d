//! The fast paths for plain delta events (read without building a JSON value) and for the
//! small events and state patches of plain shape (read in one pass, their schema check
//! skipped) must report exactly what the full path reports: on every fixture, and on
//! generated delta-heavy streams full of the near-misses that must leave the fast paths
//! (unknown or null fields, odd timestamps, escapes, wrong types and roles, chunks,
//! out-of-order and unopened deltas, operations the schema refuses or the state fails).

use std::sync::OnceLock;

use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::read::InputFormat;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

use crate::common::{fixture_files, root};
use crate::verify_agreement::{check_in_full, check_with};

fn schemas() -> &'static SchemaSet {
    static SCHEMAS: OnceLock<SchemaSet> = OnceLock::new();
    SCHEMAS.get_or_init(|| SchemaSet::embedded().unwrap())
}

fn listing(found: &[Diagnostic]) -> String {
    found
        .iter()
        .map(|d| format!("{:?} {} {}", d.event_index, d.rule, d.message))
        .collect::<Vec<_>>()
        .join("\n  ")
}

fn assert_same(bytes: &[u8], format: Option<InputFormat>, what: &str) {
    let fast = check_with(schemas(), bytes, format);
    let full = check_in_full(schemas(), bytes, format);
    assert!(
        fast == full,
        "{what}: the fast path disagrees\nfast:\n  {}\nfull:\n  {}",
        listing(&fast),
        listing(&full)
    );
}

#[test]
fn every_fixture_is_checked_alike_on_both_paths() {
    let mut seen = 0;
    for dir in ["fixtures/valid", "fixtures/invalid", "fixtures/recordings"] {
        for file in fixture_files(dir) {
            let bytes = std::fs::read(root().join(&file)).unwrap();
            assert_same(&bytes, None, &file.display().to_string());
            seen += 1;
        }
    }
    assert!(seen > 100, "only {seen} fixtures found");
}

/// A fast-path-shaped delta event, or one of its near-misses.
fn delta_event(kind: u8, id: &str, delta: &str, twist: u8) -> Value {
    let (ty, id_field) = match kind % 3 {
        0 => ("TEXT_MESSAGE_CONTENT", "messageId"),
        1 => ("TOOL_CALL_ARGS", "toolCallId"),
        _ => ("REASONING_MESSAGE_CONTENT", "messageId"),
    };
    let mut event = json!({"type": ty, id_field: id, "delta": delta});
    match twist {
        0..=5 => {}
        6 => event["timestamp"] = json!(1_700_000_000_000u64),
        7 => event["timestamp"] = json!(1_600_000_000_000u64),
        8 => event["timestamp"] = json!(9_007_199_254_740_993u64),
        9 => event["timestamp"] = json!(-1),
        10 => event["timestamp"] = json!(1.5),
        11 => event["timestamp"] = Value::Null,
        12 => event["subagentRunId"] = json!("s1"),
        13 => event["subagentRunId"] = Value::Null,
        14 => event["rawEvent"] = json!({"x": 1}),
        15 => event["extra"] = json!(true),
        16 => event["delta"] = json!(7),
        17 => event[id_field] = json!(null),
        18 => event["delta"] = json!("\u{0}\u{1f600}\"\\"),
        19 => event["type"] = json!("TEXT_MESSAGE_CHUNK"),
        _ => event["subagentRunId"] = json!("s2"),
    }
    event
}

/// An opener or closer of plain shape (read on the small events' fast path), or one of its
/// near-misses.
fn lifecycle_event(mut event: Value, twist: u8) -> Value {
    match twist {
        0..=6 => {}
        7 => event["timestamp"] = json!(1_700_000_000_000u64),
        8 => event["timestamp"] = json!(-1),
        9 => event["timestamp"] = json!(2.5),
        10 => event["subagentRunId"] = json!("s1"),
        11 => event["subagentRunId"] = Value::Null,
        12 => event["rawEvent"] = json!({"x": 1}),
        13 => event["extra"] = json!(true),
        14 => event["role"] = json!("tool"),
        15 => event["role"] = json!("user"),
        16 => event["name"] = Value::Null,
        17 => event["parentMessageId"] = json!("m1"),
        18 => event["metadata"] = json!({}),
        19 => event["stepName"] = json!("\u{e9}\"\\"),
        _ => event["type"] = json!("TEXT_MESSAGE_CHUNK"),
    }
    event
}

/// A STATE_DELTA of plain shape (read on the small events' fast path), or one of its
/// near-misses: wrong or missing fields, pointers the schema refuses, operations that do not
/// apply to the state.
fn state_delta(text: &str, twist: u8) -> Value {
    let mut event = json!({"type": "STATE_DELTA", "delta": [
        {"op": "replace", "path": "/a/b", "value": text},
        {"op": "add", "path": "/list/-", "value": {"k": text, "n": [1, 2.5, null]}},
    ]});
    let ops = &mut event["delta"];
    match twist {
        0..=5 => {}
        6 => event["timestamp"] = json!(1_700_000_000_000u64),
        7 => ops[0] = json!({"op": "test", "path": "/a/b", "value": 1}),
        8 => ops[1] = json!({"op": "remove", "path": "/list/0"}),
        9 => ops[1] = json!({"op": "move", "from": "/a", "path": "/c"}),
        10 => ops[1] = json!({"op": "copy", "from": "/list", "path": "/a/~1x~0"}),
        11 => ops[0] = json!({"op": "add", "value": 1}),
        12 => ops[0]["from"] = json!("/list"),
        13 => ops[0]["op"] = json!("nope"),
        14 => ops[0]["path"] = json!("a/b"),
        15 => ops[0]["path"] = json!("/~2"),
        16 => event["delta"] = json!({}),
        17 => event["metadata"] = json!({}),
        18 => event["subagentRunId"] = json!("s1"),
        19 => event["delta"] = json!([]),
        20 => ops[1]["extra"] = json!(1),
        _ => event["timestamp"] = json!(-5),
    }
    event
}

/// An event as producers write it: `type` first, then the rest (in key order).
fn type_first(event: &Value) -> String {
    let Some(fields) = event.as_object() else {
        return event.to_string();
    };
    let mut text = String::from("{");
    let ty = fields.get("type").into_iter().map(|t| ("type", t));
    let rest = fields.iter().filter(|(k, _)| *k != "type");
    for (i, (key, value)) in ty.chain(rest.map(|(k, v)| (k.as_str(), v))).enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("{}:{value}", json!(key)));
    }
    text.push('}');
    text
}

/// A run of delta events around starts and ends, some missing or misplaced.
fn stream() -> impl Strategy<Value = Vec<Value>> {
    let step = (0u8..8, 0u8..3, 0u8..3, "[a-z\"\\\\\u{e9}]{0,4}", 0u8..22);
    prop::collection::vec(step, 1..40).prop_map(|steps| {
        let mut events = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": {"b": 1}, "list": [1, 2]}}),
        ];
        for (what, kind, id, text, twist) in steps {
            let id = ["m1", "m2", ""][id as usize];
            let opener = match kind {
                0 => json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}),
                1 => json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": "f"}),
                _ => {
                    json!({"type": "REASONING_MESSAGE_START", "messageId": id, "role": "reasoning"})
                }
            };
            let closer = match kind {
                0 => json!({"type": "TEXT_MESSAGE_END", "messageId": id}),
                1 => json!({"type": "TOOL_CALL_END", "toolCallId": id}),
                _ => json!({"type": "REASONING_MESSAGE_END", "messageId": id}),
            };
            match what {
                0 => events.push(lifecycle_event(opener, twist)),
                1 => events.push(lifecycle_event(closer, twist)),
                6 => events.push(state_delta(&text, twist)),
                _ => events.push(delta_event(kind, id, &text, twist)),
            }
        }
        events.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}));
        events
    })
}

proptest! {
    #![proptest_config(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn generated_delta_streams_are_checked_alike_on_both_paths(events in stream()) {
        let mut text = String::new();
        for event in &events {
            text.push_str(&type_first(event));
            text.push('\n');
        }
        assert_same(text.as_bytes(), Some(InputFormat::Jsonl), &text);
        let mut sse = String::new();
        for event in &events {
            sse.push_str("data: ");
            sse.push_str(&type_first(event));
            sse.push_str("\n\n");
        }
        assert_same(sse.as_bytes(), Some(InputFormat::Sse), &sse);
    }
}

/// Runs of deltas for one entity skip the lookups; whatever breaks the run is still caught.
#[test]
fn a_run_of_deltas_still_sees_what_breaks_it() {
    let events = [
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"}),
        // The same message, claimed by a subagent that did not open it.
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "c", "subagentRunId": "s1"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "d"}),
        // Same id, other kind: never started as a tool call.
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "m1", "delta": "{}"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "e"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    ];
    let bytes = crate::verify_agreement::jsonl(&events);
    let found = check_with(schemas(), &bytes, Some(InputFormat::Jsonl));
    let seen: Vec<(Option<u64>, String)> = found
        .iter()
        .map(|d| (d.event_index, d.rule.to_string()))
        .collect();
    assert_eq!(
        seen,
        [
            (Some(4), "pairing/attribution-mismatch".to_owned()),
            (Some(6), "pairing/tool-call".to_owned()),
            (Some(8), "pairing/text-message".to_owned()),
        ],
        "{}",
        listing(&found)
    );
    assert_same(&bytes, Some(InputFormat::Jsonl), "a run of deltas");
}

/// Tool schemas are compiled once per stream and shared by the runs that declare the same
/// schema; a run that declares another schema under the same tool name is held to its own.
#[test]
fn each_run_is_held_to_the_tool_schema_it_declares() {
    let run = |id: &str, required: &str, args: &str| {
        let input = json!({"threadId": "t", "runId": id, "messages": [], "tools": [{
            "name": "lookup", "description": "",
            "parameters": {"type": "object", "required": [required]}}]});
        [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": id, "input": input}),
            json!({"type": "TOOL_CALL_START", "toolCallId": format!("{id}-c"), "toolCallName": "lookup"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": format!("{id}-c"), "delta": args}),
            json!({"type": "TOOL_CALL_END", "toolCallId": format!("{id}-c")}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": id}),
        ]
        .map(|e| e.to_string() + "\n")
        .concat()
    };
    let stream = [
        run("r1", "a", "{}"),
        run("r2", "b", r#"{"a":1}"#),
        run("r3", "b", r#"{"b":1}"#),
        run("r4", "a", r#"{"b":1}"#),
    ]
    .concat();
    let found = check_with(schemas(), stream.as_bytes(), None);
    let violations: Vec<String> = found
        .iter()
        .filter(|d| d.rule.to_string() == "tool-args/schema-violation")
        .map(|d| format!("{}: {}", d.event_index.unwrap_or_default(), d.message))
        .collect();
    assert_eq!(violations.len(), 3, "{}", listing(&found));
    assert!(
        violations[0].starts_with("3: ") && violations[0].contains("\"a\""),
        "{violations:?}"
    );
    assert!(
        violations[1].starts_with("8: ") && violations[1].contains("\"b\""),
        "{violations:?}"
    );
    assert!(
        violations[2].starts_with("18: ") && violations[2].contains("\"a\""),
        "{violations:?}"
    );
}
