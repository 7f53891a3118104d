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

/// The rules of what `check` found, less the note every stream that declares no version
/// gets.
fn problems(args: &[&str]) -> (i32, Vec<String>) {
    let (code, rules, _) = rules_found(args);
    let rules = rules
        .into_iter()
        .filter(|r| r != "version/undeclared")
        .collect();
    (code, rules)
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

    let (code, rules) = problems(&[s(&fixture)]);
    assert_eq!(code, 0);
    assert_eq!(rules, ["state/no-baseline"]);
    let (_, _, doc) = rules_found(&["--allow", "version/undeclared", s(&fixture)]);
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
    let (code, rules) = problems(&[s(&stream)]);
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
        let (code, rules) = problems(&["--initial-state", given, s(&stream)]);
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

fn thinking(version: Option<&str>) -> Vec<Value> {
    let mut started = json!({"type":"RUN_STARTED","threadId":"t","runId":"r"});
    if let Some(version) = version {
        started["protocolVersion"] = json!(version);
    }
    vec![
        started,
        json!({"type":"THINKING_START","title":"planning"}),
        json!({"type":"THINKING_TEXT_MESSAGE_START"}),
        json!({"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hmm"}),
        json!({"type":"THINKING_TEXT_MESSAGE_END"}),
        json!({"type":"THINKING_END"}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
    ]
}

/// THINKING_* events belong to the releases before 1.0: allowed there, an error in a run that
/// declares 1.0 or later, a warning in a stream that declares nothing (judged by the newest
/// version, whose producers may still be old ones).
#[test]
fn thinking_events_are_judged_by_the_version_their_run_declares() {
    let dir = tempfile::tempdir().unwrap();
    let undeclared = write(dir.path(), "undeclared.jsonl", &thinking(None));
    let (code, rules, _) = rules_found(&[s(&undeclared)]);
    assert_eq!(code, 0);
    assert_eq!(
        rules
            .iter()
            .filter(|r| *r == "schema/deprecated-event")
            .count(),
        5
    );
    assert!(
        rules.contains(&"version/undeclared".to_owned()),
        "{rules:?}"
    );

    for declared in ["1.0", "1.1"] {
        let path = write(dir.path(), "declared.jsonl", &thinking(Some(declared)));
        let (code, rules, _) = rules_found(&[s(&path)]);
        assert_eq!(code, 1, "{declared}");
        assert_eq!(rules, vec!["version/removed-event"; 5], "{declared}");
    }

    let (code, rules, doc) = rules_found(&["--protocol", "0.0.48", s(&undeclared)]);
    assert_eq!(code, 0);
    assert_eq!(
        rules,
        ["version/undeclared"],
        "the pre-1.0 rules allow THINKING_*"
    );
    let used = &doc["files"][0]["protocol"][0];
    assert_eq!(used["version"], "0.x", "{doc}");
    assert_eq!(used["why"], "--protocol");
    assert!(
        doc["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("judged by 0.x (--protocol)")
    );
}

/// What the releases before 1.0 allowed (nulls in optional fields, fractional timestamps, a
/// null rawEvent) is allowed in a stream judged by them, and nowhere else.
#[test]
fn pre_1_0_shapes_are_allowed_only_under_the_pre_1_0_rules() {
    let dir = tempfile::tempdir().unwrap();
    let stream = write(
        dir.path(),
        "old.jsonl",
        &[
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":1732000000.5}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","rawEvent":null}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","parentMessageId":null}),
            json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{}"}),
            json!({"type":"TOOL_CALL_END","toolCallId":"c"}),
            json!({"type":"TEXT_MESSAGE_END","messageId":"m"}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"done":true},"outcome":null}),
        ],
    );
    let (code, rules, _) = rules_found(&[s(&stream)]);
    assert_eq!(code, 1);
    for rule in ["schema/null-for-optional", "schema/violation"] {
        assert!(rules.contains(&rule.to_owned()), "{rule}: {rules:?}");
    }
    let (code, rules, _) = rules_found(&["--protocol", "0.x", s(&stream)]);
    assert_eq!((code, rules), (0, vec!["version/undeclared".to_owned()]));
}

/// 1.1's `encryptedValueType` is valid in a 1.1 run (never without its value), unknown in a
/// 1.0 run.
#[test]
fn encrypted_value_type_is_1_1() {
    let dir = tempfile::tempdir().unwrap();
    let run = |version: &str, message: Value| {
        vec![
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":version}),
            json!({"type":"MESSAGES_SNAPSHOT","messages":[message]}),
            json!({"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"a1","encryptedValue":"e","encryptedValueType":"anthropic.redacted_thinking"}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ]
    };
    let with_value = json!({"id":"a1","role":"assistant","content":"hi","encryptedValue":"x","encryptedValueType":"openai.encrypted_content"});
    let without_value = json!({"id":"a1","role":"assistant","content":"hi","encryptedValueType":"openai.encrypted_content"});

    let path = write(dir.path(), "v11.jsonl", &run("1.1", with_value.clone()));
    assert_eq!(rules_found(&[s(&path)]).1, Vec::<String>::new());
    let path = write(dir.path(), "v11-bad.jsonl", &run("1.1", without_value));
    let (code, rules, _) = rules_found(&[s(&path)]);
    assert_eq!((code, rules), (1, vec!["schema/violation".to_owned()]));
    let path = write(dir.path(), "v10.jsonl", &run("1.0", with_value));
    let (code, rules, _) = rules_found(&[s(&path)]);
    assert_eq!(code, 0);
    assert_eq!(rules, vec!["schema/unknown-field"; 2]);
}

/// The real servers: pydantic-ai and the official SDK declare 1.0 and are held to it with
/// no version finding; the CopilotKit runtime and Microsoft's framework declare nothing and
/// get one note each.
#[test]
fn real_servers_are_judged_by_what_they_declare() {
    for (prefix, declared) in [
        ("pydantic-ai", true),
        ("agui-sdk", true),
        ("copilotkit", false),
        ("microsoft-agent-framework", false),
    ] {
        let path = root().join(format!("fixtures/recordings/{prefix}-full.jsonl"));
        let (_, rules, doc) = rules_found(&[s(&path)]);
        let notes = rules.iter().filter(|r| r.starts_with("version/")).count();
        let used = &doc["files"][0]["protocol"];
        if declared {
            assert_eq!(notes, 0, "{prefix}: {rules:?}");
            assert_eq!(used[0]["version"], "1.0", "{prefix}");
            assert_eq!(used[0]["why"], "declared", "{prefix}");
        } else {
            assert_eq!(
                rules.iter().filter(|r| *r == "version/undeclared").count(),
                1
            );
            assert_eq!(used[0]["version"], "1.1", "{prefix}");
            assert_eq!(used[0]["why"], "newest known", "{prefix}");
        }
    }
}

/// A run with tools declared in its input, then `events`, then RUN_FINISHED (or `end`).
fn tool_run(events: &[Value], end: Value) -> Vec<Value> {
    let mut lines = vec![json!({
        "type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1",
        "input": {"threadId": "t", "runId": "r", "messages": [], "context": [], "state": {},
                  "forwardedProps": {},
                  "tools": [{"name": "confirm", "description": "d", "parameters": {"type": "object"}}]}
    })];
    lines.extend_from_slice(events);
    lines.push(end);
    lines
}

fn call(id: &str, name: &str) -> Vec<Value> {
    vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": "{}"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": id}),
    ]
}

fn finished() -> Value {
    json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
}

/// A backend tool the agent runs itself (a call to a tool the input does not declare, with
/// its result) is what agents do: no finding. A call to an undeclared tool that the run
/// finishes without answering is (a misspelt frontend tool, a backend tool that failed
/// silently); a run that ends in an error or an interrupt already says why.
#[test]
fn undeclared_tools_are_reported_only_when_left_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let result =
        json!({"type": "TOOL_CALL_RESULT", "messageId": "tm", "toolCallId": "b1", "content": "ok"});
    let mut answered = call("b1", "search_docs");
    answered.push(result);
    let backend = write(
        dir.path(),
        "backend.jsonl",
        &tool_run(&answered, finished()),
    );
    assert_eq!(problems(&[s(&backend)]), (0, vec![]));

    let snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "a1", "role": "assistant", "toolCalls": [{"id": "b1", "type": "function", "function": {"name": "search_docs", "arguments": "{}"}}]},
        {"id": "tm", "role": "tool", "toolCallId": "b1", "content": "ok"}]});
    let mut in_snapshot = call("b1", "search_docs");
    in_snapshot.push(snapshot);
    let snapshotted = write(
        dir.path(),
        "snapshotted.jsonl",
        &tool_run(&in_snapshot, finished()),
    );
    assert_eq!(problems(&[s(&snapshotted)]), (0, vec![]));

    let swallowed = write(
        dir.path(),
        "swallowed.jsonl",
        &tool_run(&call("b1", "search_docs"), finished()),
    );
    let (code, rules, doc) = rules_found(&[s(&swallowed)]);
    assert_eq!(
        (code, rules),
        (0, vec!["tool-args/undeclared-tool".to_owned()])
    );
    let d = &doc["diagnostics"][0];
    assert_eq!(d["line"], 2, "at the call: {d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("finished without its result"),
        "{d}"
    );

    let declared = write(
        dir.path(),
        "declared.jsonl",
        &tool_run(&call("c1", "confirm"), finished()),
    );
    assert_eq!(
        problems(&[s(&declared)]),
        (0, vec![]),
        "a frontend tool waits for the client"
    );

    let error = json!({"type": "RUN_ERROR", "message": "tool failed"});
    let failed = write(
        dir.path(),
        "failed.jsonl",
        &tool_run(&call("b1", "search_docs"), error),
    );
    assert_eq!(problems(&[s(&failed)]), (0, vec![]));

    let interrupt = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
        "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "confirm"}]}});
    let waiting = write(
        dir.path(),
        "waiting.jsonl",
        &tool_run(&call("b1", "search_docs"), interrupt),
    );
    let (_, rules) = problems(&[s(&waiting)]);
    assert!(
        !rules.contains(&"tool-args/undeclared-tool".to_owned()),
        "{rules:?}"
    );

    // The CopilotKit runtime echoes its input, so every backend call used to warn; its
    // failing tool is swallowed (no result, no error), which is still found.
    let full = root().join("fixtures/recordings/copilotkit-full.jsonl");
    assert_eq!(problems(&[s(&full)]), (0, vec![]));
    let swallowing = root().join("fixtures/recordings/copilotkit-tool-error.jsonl");
    assert_eq!(
        problems(&[s(&swallowing)]),
        (0, vec!["tool-args/undeclared-tool".to_owned()])
    );
}

/// A parentMessageId that names no message is legal when no text is open (the client
/// creates that assistant message for the call); while another text message is open, the
/// call lands apart from it, as Microsoft's adapter does.
#[test]
fn an_unknown_parent_is_reported_only_beside_an_open_message() {
    let dir = tempfile::tempdir().unwrap();
    let start = json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "confirm", "parentMessageId": "m-new"});
    let rest = [
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
    ];
    let mut alone = vec![start.clone()];
    alone.extend_from_slice(&rest);
    let created = write(dir.path(), "created.jsonl", &tool_run(&alone, finished()));
    assert_eq!(problems(&[s(&created)]), (0, vec![]));

    let mut beside = vec![
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Let me check."}),
        start,
    ];
    beside.extend_from_slice(&rest);
    beside.push(json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}));
    let split = write(dir.path(), "split.jsonl", &tool_run(&beside, finished()));
    assert_eq!(
        problems(&[s(&split)]),
        (0, vec!["reference/unknown-parent-message".to_owned()])
    );
    let maf = root().join("fixtures/recordings/microsoft-agent-framework-full.jsonl");
    let (_, rules) = problems(&[s(&maf)]);
    assert_eq!(
        rules,
        vec!["reference/unknown-parent-message"; 2],
        "the known defect"
    );
}

/// A TOOL_CALL_RESULT may answer a call from the history the client sent: with no history
/// in the stream (the official .NET server's second turn) nothing can be said; with the
/// history known, a result that answers nothing in it is an error.
#[test]
fn an_unknown_tool_call_is_an_error_only_where_the_history_is_known() {
    let dir = tempfile::tempdir().unwrap();
    let result = json!({"type": "TOOL_CALL_RESULT", "messageId": "tm", "toolCallId": "from-turn-1", "content": "ok"});
    let bare = write(
        dir.path(),
        "second-turn.jsonl",
        &[
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2", "protocolVersion": "1.1"}),
            result.clone(),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}),
        ],
    );
    assert_eq!(problems(&[s(&bare)]), (0, vec![]));

    let known = write(
        dir.path(),
        "known.jsonl",
        &tool_run(std::slice::from_ref(&result), finished()),
    );
    assert_eq!(
        problems(&[s(&known)]),
        (1, vec!["reference/unknown-tool-call".to_owned()])
    );

    let mut lines = tool_run(&[result], finished());
    lines[0]["input"]["messages"] = json!([
        {"id": "a1", "role": "assistant", "toolCalls": [{"id": "from-turn-1", "type": "function", "function": {"name": "confirm", "arguments": "{}"}}]}
    ]);
    let answered = write(dir.path(), "answered.jsonl", &lines);
    assert_eq!(problems(&[s(&answered)]), (0, vec![]));
}

/// A closed message is closed, not sealed: a second START continues it, from 1.0 on (the 1.1
/// pages say 1.1 adds only `encryptedValueType`, and `@ag-ui/core@1.0.0` folds and verifies a
/// reopening as such). Runs held to 1.0 or 1.1 (declared, or by default) get no finding; runs
/// held to 0.x keep the warning.
#[test]
fn reopening_a_message_is_legal_from_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let reopen = |version: Option<&str>| {
        let mut started = json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"});
        if let Some(version) = version {
            started["protocolVersion"] = json!(version);
        }
        vec![
            started,
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "First."}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " Second."}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]
    };
    for (name, version, expected) in [
        ("v11.jsonl", Some("1.1"), vec![]),
        ("undeclared.jsonl", None, vec![]),
        ("v10.jsonl", Some("1.0"), vec![]),
        (
            "v0.jsonl",
            Some("0.1"),
            vec!["pairing/message-id-reused".to_owned()],
        ),
    ] {
        let path = write(dir.path(), name, &reopen(version));
        assert_eq!(problems(&[s(&path)]), (0, expected), "{name}");
        if version.is_some_and(|v| v.starts_with("1.")) {
            let (code, stdout, _) = run(&["fold", "--compact", s(&path)]);
            assert_eq!(code, 0);
            let folded: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(
                folded["messages"][0]["content"], "First. Second.",
                "{stdout}"
            );
        }
    }
    let (_, undeclared) = problems(&[
        "--protocol",
        "0.x",
        s(&write(dir.path(), "p.jsonl", &reopen(None))),
    ]);
    assert_eq!(undeclared, ["pairing/message-id-reused"], "--protocol 0.x");
    let (_, undeclared) = problems(&[
        "--protocol",
        "1.0",
        s(&write(dir.path(), "p.jsonl", &reopen(None))),
    ]);
    assert!(undeclared.is_empty(), "--protocol 1.0: {undeclared:?}");
}

/// From 1.0 a closed tool call may be reopened, its further arguments appended: the arguments
/// are judged whole, at the run's end (`{"x":` then `1}` was two findings of invalid JSON, and
/// an empty first part one of a schema's required member), as `fold` joins them. Under 0.x
/// each part is judged at its END, as before.
#[test]
fn a_tool_call_reopened_from_1_0_is_judged_on_all_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let reopen = |version: &str, first: &str, second: &str| {
        vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": version,
                "input": {"threadId": "t", "runId": "r", "messages": [], "state": {}, "context": [],
                    "forwardedProps": {}, "tools": [{"name": "f", "description": "d",
                    "parameters": {"type": "object", "required": ["x"],
                        "properties": {"x": {"type": "integer"}}}}]}}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "f"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": first}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "a"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "f"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": second}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "a"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]
    };
    let v11 = write(dir.path(), "v11.jsonl", &reopen("1.1", "{\"x\":", "1}"));
    assert_eq!(problems(&[s(&v11)]), (0, vec![]));
    let empty_first = write(dir.path(), "empty.jsonl", &reopen("1.1", "", "{\"x\":1}"));
    assert_eq!(problems(&[s(&empty_first)]), (0, vec![]));
    // Whole, the arguments are still judged: at the last END, when the run ends.
    let wrong = write(
        dir.path(),
        "wrong.jsonl",
        &reopen("1.1", "{\"x\":", "\"one\"}"),
    );
    let (code, stdout, _) = run(&["check", "--format", "json", s(&wrong)]);
    assert_eq!(code, 1, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let found = &doc["diagnostics"];
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["rule"], "tool-args/schema-violation", "{found}");
    assert_eq!(found[0]["line"], 7, "{found}");
    assert_eq!(found[0]["event_type"], "TOOL_CALL_END", "{found}");
    let broken = write(dir.path(), "broken.jsonl", &reopen("1.1", "{\"x\":", "1"));
    let (_, found) = problems(&[s(&broken)]);
    assert_eq!(found, ["tool-args/invalid-json"]);
    // Reopened in a later run, the rest goes on from what the first run ended with, which
    // was judged then (the client held `{"x":` when that run finished): the rest alone is no
    // call's arguments, and is not judged.
    let mut later = reopen("1.1", "{\"x\":", "1}");
    later.insert(
        4,
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    );
    later.insert(
        5,
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2", "protocolVersion": "1.1"}),
    );
    if let Some(last) = later.last_mut() {
        last["runId"] = json!("r2");
    }
    let later = write(dir.path(), "later.jsonl", &later);
    let (_, stdout, _) = run(&["check", "--format", "json", s(&later)]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let lines: Vec<(String, u64)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] != "version/undeclared")
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [("tool-args/invalid-json".to_owned(), 4)],
        "{stdout}"
    );
    // A reopening START that leaves the name out (a schema error) still reopens the call
    // its ARGS and END go on: the arguments are judged whole.
    let mut unnamed = reopen("1.1", "{\"x\":", "1}");
    unnamed[4] = json!({"type": "TOOL_CALL_START", "toolCallId": "a"});
    let unnamed = write(dir.path(), "unnamed.jsonl", &unnamed);
    let (_, found) = problems(&[s(&unnamed)]);
    assert_eq!(found, ["schema/violation"]);
    // 1.0 reopens as 1.1 does (the published 1.0 client joins the parts).
    let v10 = write(dir.path(), "v10.jsonl", &reopen("1.0", "{\"x\":", "1}"));
    assert_eq!(problems(&[s(&v10)]), (0, vec![]));
    let v10 = write(dir.path(), "v10e.jsonl", &reopen("1.0", "", "{\"x\":1}"));
    assert_eq!(problems(&[s(&v10)]), (0, vec![]));
    // 0.x has no reopening: each part is a call of its own, judged at its END.
    let v0 = write(dir.path(), "v0.jsonl", &reopen("0.1", "{\"x\":", "1}"));
    let (_, found) = problems(&[s(&v0)]);
    assert_eq!(found, ["tool-args/invalid-json", "tool-args/invalid-json"]);
    // A client holds the one call with all its arguments.
    let (code, stdout, stderr) = run(&["fold", "--compact", s(&v11)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    let calls = &folded["messages"][0]["toolCalls"];
    assert_eq!(calls.as_array().map(Vec::len), Some(1), "{stdout}");
    assert_eq!(calls[0]["function"]["arguments"], "{\"x\":1}", "{stdout}");
}

/// A call with no arguments at all is read as `{}` by the official client: a warning of its
/// own, checked against the tool's schema as `{}`; broken non-empty JSON stays an error.
#[test]
fn empty_arguments_are_a_warning_and_checked_as_an_empty_object() {
    let dir = tempfile::tempdir().unwrap();
    let empty = vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "confirm"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
    ];
    let path = write(dir.path(), "empty.jsonl", &tool_run(&empty, finished()));
    assert_eq!(
        problems(&[s(&path)]),
        (0, vec!["tool-args/empty-arguments".to_owned()])
    );
    let mut strict = tool_run(&empty, finished());
    strict[0]["input"]["tools"][0]["parameters"] =
        json!({"type": "object", "required": ["answer"]});
    let path = write(dir.path(), "strict.jsonl", &strict);
    assert_eq!(
        problems(&[s(&path)]),
        (
            1,
            vec![
                "tool-args/schema-violation".to_owned(),
                "tool-args/empty-arguments".to_owned()
            ]
        )
    );
    let broken = vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "confirm"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"a\":"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
    ];
    let path = write(dir.path(), "broken.jsonl", &tool_run(&broken, finished()));
    assert_eq!(
        problems(&[s(&path)]),
        (1, vec!["tool-args/invalid-json".to_owned()])
    );
}

/// `rules` and `explain` say which versions a rule applies to.
#[test]
fn rules_and_explain_show_the_versions() {
    let (code, stdout, _) = run(&["rules", "--format", "json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let reused = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pairing/message-id-reused")
        .unwrap();
    assert_eq!(reused["versions"], "0.x (1.0 makes reopening legal)");
    let (code, stdout, _) = run(&["explain", "version/removed-event"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Protocol versions: 1.0 and later"),
        "{stdout}"
    );
}

/// A removed event is judged by what the run declared: a newer version than agui-lens knows
/// is named as declared, and so is a declaration that reads as no version ("0.1.22", a package
/// release), which the spec has handled like a newer one.
#[test]
fn removed_events_are_judged_by_the_declaration_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let newer = write(dir.path(), "newer.jsonl", &thinking(Some("1.7")));
    let (code, rules, doc) = rules_found(&[s(&newer)]);
    assert_eq!(code, 1);
    assert!(
        rules.contains(&"version/removed-event".to_owned()),
        "{rules:?}"
    );
    let removed = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "version/removed-event")
        .unwrap();
    let message = removed["message"].as_str().unwrap();
    assert!(message.contains("declares protocol \"1.7\""), "{message}");

    let release = write(dir.path(), "release.jsonl", &thinking(Some("0.1.22")));
    let (code, rules, _) = rules_found(&[s(&release)]);
    assert_eq!(code, 1);
    assert!(
        rules.contains(&"version/uninterpretable".to_owned()),
        "{rules:?}"
    );
    assert!(
        rules.contains(&"version/removed-event".to_owned()),
        "{rules:?}"
    );
}

/// A history of two conversations (threads), their runs interleaved: each thread has its
/// state, as `fold`, `diff` and `compact` keep it. A delta is held to its own thread's state:
/// one that applies there is clean, though the other thread's state would refuse it, and one
/// that applies only to the other thread's state fails.
#[test]
fn state_is_followed_per_thread() {
    let run = |thread: &str, run: &str, body: Vec<Value>| {
        let mut events = vec![json!({"type":"RUN_STARTED","threadId":thread,"runId":run})];
        events.extend(body);
        events.push(json!({"type":"RUN_FINISHED","threadId":thread,"runId":run}));
        events
    };
    let snapshot = |state: Value| json!({"type":"STATE_SNAPSHOT","snapshot":state});
    let delta = |ops: Value| json!({"type":"STATE_DELTA","delta":ops});
    let replace_a = delta(json!([{"op":"replace","path":"/a","value":2}]));
    let mut events = Vec::new();
    events.extend(run("t1", "r1", vec![snapshot(json!({"a": 1}))]));
    events.extend(run("t2", "r2", vec![snapshot(json!({"b": 1}))]));
    events.extend(run("t1", "r3", vec![replace_a.clone()]));
    let dir = tempfile::tempdir().unwrap();
    let each_its_own = write(dir.path(), "each.jsonl", &events);
    // The advice that a history holds one thread is not wanted here.
    let problems = |path: &Path| problems(&["--allow", "lifecycle/thread-changed", s(path)]);
    let (code, rules) = problems(&each_its_own);
    assert_eq!((code, rules), (0, vec![]));
    // What fold says thread t1 ends with, check agrees with.
    assert_eq!(
        folded_state(&["--thread", "t1", s(&each_its_own)]),
        json!({"a": 2})
    );

    let mut events = Vec::new();
    events.extend(run("t1", "r1", vec![snapshot(json!({"a": 1}))]));
    events.extend(run("t2", "r2", vec![snapshot(json!({"b": 1}))]));
    events.extend(run("t2", "r3", vec![replace_a]));
    let crossed = write(dir.path(), "crossed.jsonl", &events);
    let (code, rules) = problems(&crossed);
    assert_eq!((code, rules), (1, vec!["state/patch-failed".to_owned()]));
}

/// `--protocol 1.0` holds a run that declares no version to 1.0, which has no THINKING_*
/// events, as a run that declares 1.0 is held: they passed with the deprecation warning
/// given when no version is known.
#[test]
fn an_asked_version_removes_what_it_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("thinking.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"THINKING_START"}"#,
            "\n",
            r#"{"type":"THINKING_END"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let (code, stdout, _) = crate::common::run(&["check", "--protocol", "1.0", file]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("error[version/removed-event]"), "{stdout}");
    assert!(stdout.contains("(--protocol)"), "{stdout}");
    let (code, stdout, _) = crate::common::run(&["check", file]);
    assert_eq!(
        code, 0,
        "no version asked or declared: the warning stands: {stdout}"
    );
    assert!(
        stdout.contains("warning[schema/deprecated-event]"),
        "{stdout}"
    );
}

/// An event over the line cap is skipped unread: whatever it breaks goes unseen, so no tier
/// leaves that out. Under `--tier must` it used to vanish, and a MUST broken inside it passed.
#[test]
fn no_tier_hides_an_event_skipped_for_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    let long = format!(
        r#"{{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","rawEvent":"{}"}}"#,
        "x".repeat(400)
    );
    let text = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}"#,
        &long,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ]
    .join("\n")
        + "\n";
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    for tier in ["must", "should", "capability"] {
        let (code, stdout, stderr) = run(&["check", p, "--max-line", "300", "--tier", tier]);
        assert_eq!(code, 1, "{tier}: {stdout}{stderr}");
        assert!(stdout.contains("framing/line-too-long"), "{tier}: {stdout}");
    }
}

/// A version that cannot be read (`"1.0.0"`, a package release) is handled like a newer one,
/// as the spec has it ("proceed, and SHOULD warn") and the official client does, whatever
/// `--protocol` says: judged by the newest version agui-lens knows, what that version does
/// not name (an event type, a patch op, a role, an outcome) a warning a newer version may
/// explain. It was judged as none declared: the same stream failed under "1.0.0" and passed
/// under "1.2".
#[test]
fn an_uninterpretable_version_is_handled_like_a_newer_one() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |version: &str| {
        [
            format!(r#"{{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"{version}"}}"#),
            r#"{"type":"FANCY_NEW_EVENT","x":1}"#.to_owned(),
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}"#.to_owned(),
            r#"{"type":"STATE_DELTA","delta":[{"op":"merge","path":"/a","value":2}]}"#.to_owned(),
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"tool"}"#.to_owned(),
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#.to_owned(),
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"paused"}}"#
                .to_owned(),
        ]
        .join("\n")
    };
    let newer = dir.path().join("newer.jsonl");
    std::fs::write(&newer, stream("1.2")).unwrap();
    let (code, newer_found, _) = rules_found(&[s(&newer)]);
    assert_eq!(code, 0, "{newer_found:?}");
    for asked in [None, Some("0.x"), Some("1.0")] {
        for version in ["1.0.0", "latest"] {
            let path = dir.path().join("odd.jsonl");
            std::fs::write(&path, stream(version)).unwrap();
            let mut args = vec![s(&path)];
            if let Some(asked) = asked {
                args.extend(["--protocol", asked]);
            }
            let (code, found, doc) = rules_found(&args);
            assert_eq!(code, 0, "{version} {asked:?}: {doc}");
            let said: Vec<String> = newer_found
                .iter()
                .map(|r| r.replace("version/newer", "version/uninterpretable"))
                .collect();
            assert_eq!(found, said, "{version} {asked:?}");
            let (_, stdout, _) = run(&["check", s(&path)]);
            assert!(stdout.contains("checked by 1.1"), "{stdout}");
        }
    }
}

/// A stream cut inside a tool call opened by a chunk names that call once among what it left
/// open: the pairing rules name it (at its line), and the chunks' own list no longer adds it
/// again.
#[test]
fn a_call_left_open_by_chunks_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}"#,
            "\n",
            r#"{"type":"TOOL_CALL_CHUNK","toolCallId":"call-1","toolCallName":"get_weather","delta":"{\"city\": "}"#,
            "\n",
            r#"{"type":"TOOL_CALL_CHUNK","toolCallId":"call-1","delta":"\"Paris\"}"}"#,
            "\n"
        ),
    )
    .unwrap();
    let (code, stdout, _) = crate::common::run(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    let said = stdout
        .lines()
        .find(|l| l.contains("lifecycle/unterminated-run"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(said.matches("\"call-1\"").count(), 1, "{said}");
}

/// A config level no one knows is refused with every word that names a level.
#[test]
fn a_config_level_error_lists_every_level_word() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agui-lens.toml"),
        "[rules]\n\"state/*\" = \"loud\"\n",
    )
    .unwrap();
    let stream = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let out = crate::common::agui_lens()
        .current_dir(dir.path())
        .args(["check", stream.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for word in ["deny", "error", "warn", "note", "allow", "off"] {
        assert!(stderr.contains(word), "{word}: {stderr}");
    }
}

/// The official reducer on a JSONL file: its messages as (id, role).
fn official_messages(path: &Path) -> Vec<(String, String)> {
    let reference = crate::common::reference_packages();
    let output = std::process::Command::new("node")
        .arg(reference.join("fold.mjs"))
        .arg(path)
        .output()
        .expect("running node reference/fold.mjs");
    let folded: Value = serde_json::from_slice(&output.stdout).unwrap();
    folded["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let id = m["id"].as_str().unwrap_or_default().to_owned();
            (id, m["role"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

/// A messageId MUST be unique within its thread, and a client finds messages by id alone:
/// an id given to a message of another kind (reasoning under a text message's id, an
/// activity over a text, a text over an activity or a user's message, a second tool result)
/// merges, replaces, drops or repeats messages in the official reducer. Each is an error
/// once; a message of the same kind reopened, a snapshot naming what was streamed, and the
/// same id in another thread are not.
#[test]
fn a_message_id_given_to_another_kind_of_message_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let start = |thread: &str, run: &str| json!({"type":"RUN_STARTED","threadId":thread,"runId":run,"protocolVersion":"1.1"});
    let finish =
        |thread: &str, run: &str| json!({"type":"RUN_FINISHED","threadId":thread,"runId":run});
    let text = |id: &str, role: &str, delta: &str| {
        vec![
            json!({"type":"TEXT_MESSAGE_START","messageId":id,"role":role}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":id,"delta":delta}),
            json!({"type":"TEXT_MESSAGE_END","messageId":id}),
        ]
    };
    let reasoning = |id: &str| {
        vec![
            json!({"type":"REASONING_START","messageId":id}),
            json!({"type":"REASONING_MESSAGE_START","messageId":id,"role":"reasoning"}),
            json!({"type":"REASONING_MESSAGE_CONTENT","messageId":id,"delta":"th"}),
            json!({"type":"REASONING_MESSAGE_END","messageId":id}),
            json!({"type":"REASONING_END","messageId":id}),
        ]
    };
    let activity = |id: &str| json!({"type":"ACTIVITY_SNAPSHOT","messageId":id,"activityType":"plan","content":{"a":1}});
    let call = |id: &str| {
        vec![
            json!({"type":"TOOL_CALL_START","toolCallId":id,"toolCallName":"f","parentMessageId":"x"}),
            json!({"type":"TOOL_CALL_ARGS","toolCallId":id,"delta":"{}"}),
            json!({"type":"TOOL_CALL_END","toolCallId":id}),
        ]
    };
    let result = |message: &str, call: &str| json!({"type":"TOOL_CALL_RESULT","messageId":message,"toolCallId":call,"content":"r"});
    let stream = |parts: Vec<Vec<Value>>| -> Vec<Value> { parts.into_iter().flatten().collect() };
    let mut user_input = start("t", "r");
    user_input["input"] =
        json!({"threadId":"t","runId":"r","messages":[{"id":"x","role":"user","content":"q"}]});

    let clashes = [
        (
            "reasoning-over-text",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                reasoning("x"),
                vec![finish("t", "r")],
            ]),
        ),
        (
            "activity-over-text",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                vec![activity("x"), finish("t", "r")],
            ]),
        ),
        (
            "text-over-activity",
            stream(vec![
                vec![start("t", "r"), activity("x")],
                text("x", "assistant", "hi"),
                vec![finish("t", "r")],
            ]),
        ),
        (
            "text-over-input",
            stream(vec![
                vec![user_input.clone()],
                text("x", "assistant", "a"),
                vec![finish("t", "r")],
            ]),
        ),
        (
            "result-over-text",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                call("c1"),
                vec![result("x", "c1"), finish("t", "r")],
            ]),
        ),
        (
            "two-results",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                call("c1"),
                call("c2"),
                vec![result("m", "c1"), result("m", "c2"), finish("t", "r")],
            ]),
        ),
    ];
    for (name, events) in &clashes {
        let path = write(dir.path(), &format!("{name}.jsonl"), events);
        let (code, rules) = problems(&[s(&path)]);
        assert_eq!(code, 1, "{name}: {rules:?}");
        assert_eq!(rules, ["reference/message-id-clash"], "{name}");
        // What the official client ends with: two messages made, one (or a repeated) id.
        let messages = official_messages(&path);
        let ids: std::collections::HashSet<&String> = messages.iter().map(|(id, _)| id).collect();
        let made = events
            .iter()
            .filter(|e| {
                [
                    "TEXT_MESSAGE_START",
                    "REASONING_MESSAGE_START",
                    "ACTIVITY_SNAPSHOT",
                    "TOOL_CALL_RESULT",
                ]
                .contains(&e["type"].as_str().unwrap())
            })
            .count()
            + usize::from(name == &"text-over-input");
        assert!(ids.len() < made, "{name}: {messages:?}");
    }

    let mut snapshot = stream(vec![
        vec![start("t", "r")],
        text("x", "assistant", "hi"),
        call("c1"),
        vec![result("m", "c1")],
    ]);
    snapshot.push(json!({"type":"MESSAGES_SNAPSHOT","messages":[
        {"id":"x","role":"assistant","content":"hi","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]},
        {"id":"m","role":"tool","toolCallId":"c1","content":"r"}]}));
    snapshot.push(finish("t", "r"));
    let mut assistant_input = start("t", "r2");
    assistant_input["input"] = json!({"threadId":"t","runId":"r2","messages":[{"id":"x","role":"assistant","content":"hi"}]});
    let fine = [
        // The same id in two threads: two conversations.
        (
            "two-threads",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                vec![finish("t", "r"), start("u", "r2")],
                reasoning("x"),
                vec![finish("u", "r2")],
            ]),
        ),
        // A text message reopened (1.1), and one the client's input already holds.
        (
            "reopened",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                text("x", "assistant", " there"),
                vec![finish("t", "r")],
            ]),
        ),
        (
            "continued",
            stream(vec![
                vec![assistant_input],
                text("x", "assistant", " more"),
                vec![finish("t", "r2")],
            ]),
        ),
        // A snapshot naming the messages the stream made.
        ("snapshot", snapshot),
        // A reasoning span under a text message's id makes no message.
        (
            "span",
            stream(vec![
                vec![start("t", "r")],
                text("x", "assistant", "hi"),
                vec![
                    json!({"type":"REASONING_START","messageId":"x"}),
                    json!({"type":"REASONING_END","messageId":"x"}),
                    finish("t", "r"),
                ],
            ]),
        ),
        // An activity updated by a second snapshot.
        (
            "activity",
            vec![
                start("t", "r"),
                activity("x"),
                activity("x"),
                finish("t", "r"),
            ],
        ),
    ];
    for (name, events) in &fine {
        let path = write(dir.path(), &format!("{name}.jsonl"), events);
        let (_, rules) = problems(&[s(&path)]);
        assert!(
            !rules.iter().any(|r| r == "reference/message-id-clash"),
            "{name}: {rules:?}"
        );
    }
}

/// A run that is cancelled (or fails) may close a tool call whose arguments were cut off
/// mid-object: the spec allows it ("closing a tool call establishes that its argument text is
/// complete, not that it is valid"), and the official client accepts it. `tool-args/invalid-json`
/// is said when the run ends another way, or the stream ends inside the run.
#[test]
fn arguments_cut_off_by_a_cancelled_or_failed_run_are_no_finding() {
    let dir = tempfile::tempdir().unwrap();
    let start = json!({"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"});
    let call = [
        json!({"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}),
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\":"}),
        json!({"type":"TOOL_CALL_END","toolCallId":"c1"}),
    ];
    let ending = |end: Option<Value>| {
        let mut events = vec![start.clone()];
        events.extend(call.iter().cloned());
        events.extend(end);
        events
    };
    let cases = [
        (
            "cancelled",
            Some(
                json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}),
            ),
            false,
        ),
        (
            "failed",
            Some(json!({"type":"RUN_ERROR","message":"stopped"})),
            false,
        ),
        (
            "finished",
            Some(json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"})),
            true,
        ),
        ("cut", None, true),
    ];
    for (name, end, said) in cases {
        let path = write(dir.path(), &format!("{name}.jsonl"), &ending(end));
        let (_, rules) = problems(&[s(&path)]);
        assert_eq!(
            rules.iter().any(|r| r == "tool-args/invalid-json"),
            said,
            "{name}: {rules:?}"
        );
    }
}

/// A run that declares a version newer than agui-lens knows may carry what that version adds:
/// an event type, or a member of a closed set (a patch op, an outcome, a role) 1.1 does not
/// name. The processing model says such material "MUST NOT abort the run" and a client drops
/// or strips it with a warning: `version/unrecognised`, a warning, not an error. Under a
/// version agui-lens knows, the same material is the producer's error, and a malformed known
/// value stays one under any version.
#[test]
fn what_a_newer_version_may_add_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = |version: &str, middle: Value| {
        vec![
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":version}),
            middle,
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ]
    };
    let added = [
        ("event", json!({"type":"FUTURE_EVENT","x":1})),
        (
            "op",
            json!({"type":"STATE_DELTA","delta":[{"op":"merge","path":"/a","value":1}]}),
        ),
    ];
    for (name, middle) in &added {
        let newer = write(
            dir.path(),
            &format!("{name}-newer.jsonl"),
            &run("1.2", middle.clone()),
        );
        let (code, rules) = problems(&[s(&newer)]);
        assert_eq!(code, 0, "{name}: {rules:?}");
        assert!(
            rules.contains(&"version/unrecognised".to_owned()),
            "{name}: {rules:?}"
        );
        let known = write(
            dir.path(),
            &format!("{name}-known.jsonl"),
            &run("1.1", middle.clone()),
        );
        let (code, rules) = problems(&[s(&known)]);
        assert_eq!(code, 1, "{name}: {rules:?}");
        assert!(
            !rules.contains(&"version/unrecognised".to_owned()),
            "{name}: {rules:?}"
        );
    }
    // A known field with a value of the wrong type is malformed under any version.
    let malformed = write(
        dir.path(),
        "malformed.jsonl",
        &run(
            "1.2",
            json!({"type":"TEXT_MESSAGE_START","messageId":5,"role":"assistant"}),
        ),
    );
    let (code, rules) = problems(&[s(&malformed)]);
    assert_eq!(code, 1, "{rules:?}");
}

/// 1.1's pendingToolCallIds, when sent and not empty, is exactly the calls the run started and
/// no TOOL_CALL_RESULT answered (in any order here: the MUST is about which calls); an absent
/// or empty list says nothing, and 1.0 has no such list. Usage entries hold to the token
/// accounting: only counts an entry gives are compared.
#[test]
fn a_runs_pending_calls_and_usage_are_held_to_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let run = |version: &str, finished: Value| {
        vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": version}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "confirm"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "a"}),
            json!({"type": "TOOL_CALL_CHUNK", "toolCallId": "b", "toolCallName": "pick", "delta": "{}"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "b"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "look"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
            json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "x"}),
            finished,
        ]
    };
    let finished = |outcome: Value| json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": outcome});
    let judged = |name: &str, version: &str, end: Value| {
        let (_, found) = problems(&[s(&write(dir.path(), name, &run(version, end)))]);
        found
            .into_iter()
            .filter(|r| r.starts_with("lifecycle/"))
            .collect::<Vec<_>>()
    };
    let pending = |ids: Value| finished(json!({"type": "success", "pendingToolCallIds": ids}));
    let none: Vec<String> = vec![];
    let wrong = vec!["lifecycle/pending-tool-calls".to_owned()];
    assert_eq!(
        judged("exact.jsonl", "1.1", pending(json!(["a", "b"]))),
        none
    );
    assert_eq!(
        judged("any-order.jsonl", "1.1", pending(json!(["b", "a"]))),
        none
    );
    assert_eq!(judged("empty.jsonl", "1.1", pending(json!([]))), none);
    assert_eq!(
        judged("absent.jsonl", "1.1", finished(json!({"type": "success"}))),
        none
    );
    assert_eq!(
        judged("one-short.jsonl", "1.1", pending(json!(["a"]))),
        wrong
    );
    assert_eq!(
        judged("answered.jsonl", "1.1", pending(json!(["a", "b", "c"]))),
        wrong
    );
    assert_eq!(
        judged("never.jsonl", "1.1", pending(json!(["a", "b", "z"]))),
        wrong
    );
    assert_eq!(
        judged("twice.jsonl", "1.1", pending(json!(["a", "b", "a"]))),
        wrong
    );
    let usage = |entry: Value| json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "usage": [entry]});
    assert_eq!(
        judged(
            "usage.jsonl",
            "1.1",
            usage(
                json!({"inputTokens": 10, "outputTokens": 5, "totalTokens": 15,
                "cachedInputTokens": 4, "cacheWriteInputTokens": 6, "reasoningTokens": 5})
            )
        ),
        none
    );
    assert_eq!(
        judged(
            "partial.jsonl",
            "1.1",
            usage(json!({"inputTokens": 10, "totalTokens": 99}))
        ),
        none
    );
    let accounting = vec!["lifecycle/usage-accounting".to_owned()];
    for (name, entry) in [
        (
            "total.jsonl",
            json!({"inputTokens": 10, "outputTokens": 5, "totalTokens": 16}),
        ),
        (
            "cache.jsonl",
            json!({"inputTokens": 10, "cachedInputTokens": 6, "cacheWriteInputTokens": 5}),
        ),
        (
            "reasoning.jsonl",
            json!({"outputTokens": 5, "reasoningTokens": 6}),
        ),
        (
            "under-input.jsonl",
            json!({"inputTokens": 100, "totalTokens": 50}),
        ),
        (
            "cache-over-total.jsonl",
            json!({"cachedInputTokens": 60, "totalTokens": 50}),
        ),
        (
            "reasoning-over-total.jsonl",
            json!({"reasoningTokens": 9, "totalTokens": 5}),
        ),
    ] {
        assert_eq!(judged(name, "1.1", usage(entry)), accounting, "{name}");
    }
}

/// A producer that announces a subagent invocation does so before any event attributed to it
/// (1.1); attributing events without announcing anything is allowed.
#[test]
fn a_subagent_is_announced_before_what_is_attributed_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let message = |id: &str| {
        [
            json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant", "subagentRunId": "s"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": id, "subagentRunId": "s"}),
        ]
    };
    let started = json!({"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "helper"});
    let finished = json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "s"});
    let run = |middle: Vec<Value>| {
        let mut all = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1"}),
        ];
        all.extend(middle);
        all.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}));
        all
    };
    let judged =
        |name: &str, middle: Vec<Value>| problems(&[s(&write(dir.path(), name, &run(middle)))]).1;
    let mut late = message("m1").to_vec();
    late.extend([started.clone(), finished.clone()]);
    assert_eq!(judged("late.jsonl", late), ["pairing/subagent"]);
    let mut first = vec![started, message("m1")[0].clone(), message("m1")[1].clone()];
    first.push(finished);
    assert_eq!(judged("first.jsonl", first), Vec::<String>::new());
    assert_eq!(
        judged("unannounced.jsonl", message("m1").to_vec()),
        Vec::<String>::new()
    );
}

/// A START that reopens a closed message or tool call (1.1) agrees with the one that opened
/// it: the same toolCallName and parentMessageId for a call, the same name for a message.
#[test]
fn a_reopening_start_agrees_with_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let judged = |name: &str, first: Value, again: Value, end: &str, id: &str| {
        let lines = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1"}),
            first,
            json!({"type": end, id: "x"}),
            again,
            json!({"type": end, id: "x"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ];
        problems(&[s(&write(dir.path(), name, &lines))])
            .1
            .into_iter()
            .filter(|r| r.starts_with("pairing/"))
            .collect::<Vec<_>>()
    };
    let call = |name: &str, parent: &str| json!({"type": "TOOL_CALL_START", "toolCallId": "x", "toolCallName": name, "parentMessageId": parent});
    let message = |name: &str| json!({"type": "TEXT_MESSAGE_START", "messageId": "x", "role": "assistant", "name": name});
    let same: Vec<String> = vec![];
    let tool = |a, b| judged("tool.jsonl", a, b, "TOOL_CALL_END", "toolCallId");
    let text = |a, b| judged("text.jsonl", a, b, "TEXT_MESSAGE_END", "messageId");
    assert_eq!(tool(call("f", "m"), call("f", "m")), same);
    assert_eq!(tool(call("f", "m"), call("g", "m")), ["pairing/tool-call"]);
    assert_eq!(tool(call("f", "m"), call("f", "n")), ["pairing/tool-call"]);
    assert_eq!(text(message("a"), message("a")), same);
    assert_eq!(text(message("a"), message("b")), ["pairing/text-message"]);
    // What a reopening START leaves out keeps the established value (a chunk that continues
    // a message or call names less).
    let unnamed = json!({"type": "TEXT_MESSAGE_START", "messageId": "x", "role": "assistant"});
    assert_eq!(text(message("a"), unnamed), same);
    let orphan = json!({"type": "TOOL_CALL_START", "toolCallId": "x", "toolCallName": "f"});
    assert_eq!(tool(call("f", "m"), orphan), same);
}

/// A producer that calls a frontend tool (one the run's input.tools declares) does not answer
/// it (1.0 and later); a tool it runs itself, not declared, it answers in the stream.
#[test]
fn a_frontend_tool_is_answered_by_the_application() {
    let dir = tempfile::tempdir().unwrap();
    let run = |version: &str, tool: &str| {
        vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": version,
                "input": {"threadId": "t", "runId": "r", "messages": [], "state": {}, "context": [],
                    "forwardedProps": {}, "tools": [{"name": "confirm", "description": "d", "parameters": {"type": "object"}}]}}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": tool}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
            json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "yes"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]
    };
    let judged = |name: &str, version: &str, tool: &str| {
        problems(&[s(&write(dir.path(), name, &run(version, tool)))]).1
    };
    assert_eq!(
        judged("frontend.jsonl", "1.1", "confirm"),
        ["tool-args/frontend-answered"]
    );
    // Nor in a later run: the application answers in that run's input.
    let mut later = run("1.1", "confirm");
    let result = later.remove(4);
    later.push(
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2", "protocolVersion": "1.1"}),
    );
    later.push(result);
    later.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}));
    let (_, found) = problems(&[s(&write(dir.path(), "later.jsonl", &later))]);
    assert_eq!(found, ["tool-args/frontend-answered"]);
    // Nor with a tool message the agent makes up in a snapshot of the run that made the call;
    // a later run's snapshot restating the application's answer is history.
    let snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "a", "role": "assistant", "toolCalls": [{"id": "c", "type": "function", "function": {"name": "confirm", "arguments": "{}"}}]},
        {"id": "m", "role": "tool", "toolCallId": "c", "content": "yes"}
    ]});
    let mut made_up = run("1.1", "confirm");
    made_up[4] = snapshot.clone();
    let (_, found) = problems(&[s(&write(dir.path(), "made-up.jsonl", &made_up))]);
    assert_eq!(found, ["tool-args/frontend-answered"]);
    let mut restated = run("1.1", "confirm");
    restated.remove(4);
    restated.push(
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2", "protocolVersion": "1.1"}),
    );
    restated.push(snapshot);
    restated.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}));
    let (_, found) = problems(&[s(&write(dir.path(), "restated.jsonl", &restated))]);
    assert_eq!(found, Vec::<String>::new());
    assert_eq!(
        judged("backend.jsonl", "1.1", "search"),
        Vec::<String>::new()
    );
    // 1.0 holds it too (the 1.1 pages add to 1.0 only `encryptedValueType`); 0.x does not.
    assert_eq!(
        judged("v10.jsonl", "1.0", "confirm"),
        ["tool-args/frontend-answered"]
    );
    assert_eq!(judged("v0.jsonl", "0.1", "confirm"), Vec::<String>::new());
}

/// A RUN_ERROR after RUN_FINISHED fails the run late (1.1: "A consumer MUST treat the run as
/// failed"): `fold` ends with the run failed, `diff --level fold` tells it from the run that
/// finished, and the late RUN_ERROR's usage is held to the accounting.
#[test]
fn a_late_run_error_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let lines = |late: Option<Value>| {
        let mut all = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ];
        all.extend(late);
        all
    };
    let finished = write(dir.path(), "finished.jsonl", &lines(None));
    let failed = write(
        dir.path(),
        "failed.jsonl",
        &lines(Some(json!({"type": "RUN_ERROR", "message": "flush failed",
            "usage": [{"inputTokens": 5, "outputTokens": 1, "totalTokens": 60}]}))),
    );
    let (code, stdout, _) = run(&["fold", s(&failed)]);
    assert_eq!(code, 0, "{stdout}");
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(folded["runs"][0]["status"], "error", "{stdout}");
    assert_eq!(
        folded["runs"][0]["error"]["message"], "flush failed",
        "{stdout}"
    );
    let (code, _, _) = run(&["diff", "--level", "fold", s(&finished), s(&failed)]);
    assert_eq!(code, 1);
    assert_eq!(problems(&[s(&failed)]).1, ["lifecycle/usage-accounting"]);
    // `inspect` shows the one run, failed, not a run that finished beside events outside any.
    let (_, stdout, _) = run(&["inspect", "--format", "json", s(&failed)]);
    let view: Value = serde_json::from_str(&stdout).unwrap();
    let runs = view["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{stdout}");
    assert_eq!(runs[0]["status"], "error", "{stdout}");
    assert_eq!(runs[0]["error"]["message"], "flush failed", "{stdout}");
}

/// The pending calls a success outcome names, the token accounting and the frontend tool the
/// agent may not answer are 1.0's (`@ag-ui/core@1.0.0` carries `pendingToolCallIds` and
/// `usage` with the rules they keep; the 1.1 pages list them among 1.0's changes): a run held
/// to 1.0, declared or by `--protocol`, is held to them, as one held to 1.1 is; 0.x is not.
#[test]
fn the_rules_of_1_0_hold_runs_that_declare_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "lifecycle/pending-tool-calls",
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"V"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"confirm"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"success","pendingToolCallIds":["c2"]}}
"#,
        ),
        (
            "lifecycle/usage-accounting",
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"V"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","usage":[{"inputTokens":5,"outputTokens":1,"totalTokens":60}]}
"#,
        ),
        (
            "tool-args/frontend-answered",
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"V","input":{"threadId":"t1","runId":"r1","messages":[],"tools":[{"name":"confirm","description":"ask the user","parameters":{"type":"object"}}]}}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"confirm"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"TOOL_CALL_RESULT","messageId":"m2","toolCallId":"c1","content":"yes"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
"#,
        ),
    ];
    // A call the run delivers in a MESSAGES_SNAPSHOT, not streamed (as `compact --level
    // snapshot` writes a run), may be named pending.
    let snapshot = dir.path().join("snapshot.jsonl");
    std::fs::write(
        &snapshot,
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}
{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"confirm","arguments":"{}"}}]}]}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"success","pendingToolCallIds":["c1"]}}
"#,
    )
    .unwrap();
    assert_eq!(problems(&[s(&snapshot)]), (0, vec![]));
    // A call a snapshot answers (a tool message for it) is no pending call, whether the run
    // streamed it or the snapshot holds it.
    let answered = r#"{"id":"t1","role":"tool","toolCallId":"c1","content":"yes"}"#;
    for streamed in [true, false] {
        let mut lines = vec![
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}"#
                .to_owned(),
        ];
        if streamed {
            lines.extend([
                r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"confirm"}"#
                    .to_owned(),
                r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}"#.to_owned(),
                r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#.to_owned(),
            ]);
        }
        lines.push(format!(
            r#"{{"type":"MESSAGES_SNAPSHOT","messages":[{{"id":"a1","role":"assistant","toolCalls":[{{"id":"c1","type":"function","function":{{"name":"confirm","arguments":"{{}}"}}}}]}},{answered}]}}"#
        ));
        lines.push(
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"success","pendingToolCallIds":["c1"]}}"#
                .to_owned(),
        );
        let path = dir.path().join(format!("answered-{streamed}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        assert_eq!(
            problems(&[s(&path)]),
            (1, vec!["lifecycle/pending-tool-calls".to_owned()]),
            "streamed: {streamed}"
        );
    }
    for (rule, text) in cases {
        for version in ["1.0", "1.1"] {
            let name = format!("{}-{version}.jsonl", rule.replace('/', "-"));
            let path = dir.path().join(name);
            std::fs::write(&path, text.replace("\"V\"", &format!("\"{version}\""))).unwrap();
            let (code, found) = problems(&[s(&path)]);
            assert_eq!(
                (code, found),
                (1, vec![rule.to_owned()]),
                "{rule} {version}"
            );
        }
        let path = dir.path().join("undeclared.jsonl");
        std::fs::write(&path, text.replace(",\"protocolVersion\":\"V\"", "")).unwrap();
        let (code, found) = problems(&["--protocol", "1.0", s(&path)]);
        assert_eq!(
            (code, found),
            (1, vec![rule.to_owned()]),
            "{rule} --protocol 1.0"
        );
        let (_, found) = problems(&["--protocol", "0.x", s(&path)]);
        assert!(!found.contains(&rule.to_owned()), "{rule} 0.x: {found:?}");
    }
}

/// Each interrupt of a run's interrupt outcome has an id of its own (a resume entry answers it
/// by that id): two with one id fail the run, in 1.0 and 1.1; distinct ids pass. Two were
/// passed clean.
#[test]
fn an_interrupt_id_is_the_runs_own() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |version: &str, second: &str| {
        format!(
            r#"{{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"{version}"}}
{{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{{"type":"interrupt","interrupts":[{{"id":"i1","reason":"approval"}},{{"id":"{second}","reason":"confirmation"}}]}}}}
"#
        )
    };
    for version in ["1.0", "1.1"] {
        let path = dir.path().join(format!("twice-{version}.jsonl"));
        std::fs::write(&path, stream(version, "i1")).unwrap();
        assert_eq!(
            problems(&[s(&path)]),
            (1, vec!["lifecycle/duplicate-interrupt-id".to_owned()]),
            "{version}"
        );
        let path = dir.path().join(format!("apart-{version}.jsonl"));
        std::fs::write(&path, stream(version, "i2")).unwrap();
        assert_eq!(problems(&[s(&path)]), (0, vec![]), "{version}");
    }
}
