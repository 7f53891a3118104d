//! diff and snapshot through the real binary: streams that mean the same compare equal however
//! their ids were generated and their deltas split; any change of meaning is a difference.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{agui_lens, root, run, split};

/// Fields that hold generated ids, renamed independently of agui-lens's own list.
const ID_FIELDS: &[&str] = &[
    "threadId",
    "runId",
    "parentRunId",
    "messageId",
    "parentMessageId",
    "toolCallId",
    "entityId",
    "subagentRunId",
    "parentSubagentRunId",
    "parentToolCallId",
    "interruptId",
];

fn rename_id(v: &mut Value) {
    if let Value::String(s) = v {
        *s = format!("other-{}", s.chars().rev().collect::<String>());
    }
}

/// Renames every generated id, consistently, wherever the protocol carries one.
fn rename_ids(event: &mut Value) {
    fn message(m: &mut Value) {
        for field in ["id", "toolCallId", "subagentRunId"] {
            if let Some(v) = m.get_mut(field) {
                rename_id(v);
            }
        }
        if let Some(Value::Array(calls)) = m.get_mut("toolCalls") {
            for c in calls {
                if let Some(v) = c.get_mut("id") {
                    rename_id(v);
                }
            }
        }
    }
    for field in ID_FIELDS {
        if let Some(v) = event.get_mut(*field) {
            rename_id(v);
        }
    }
    for at in ["/messages", "/input/messages"] {
        if let Some(Value::Array(messages)) = event.pointer_mut(at) {
            messages.iter_mut().for_each(message);
        }
    }
    for field in ["threadId", "runId", "parentRunId"] {
        if let Some(v) = event.pointer_mut(&format!("/input/{field}")) {
            rename_id(v);
        }
    }
    if let Some(Value::Array(ids)) = event.pointer_mut("/outcome/pendingToolCallIds") {
        ids.iter_mut().for_each(rename_id);
    }
}

/// Splits every delta in two (chunks too: the second piece continues without its id).
fn rechunk(events: Vec<Value>) -> (Vec<Value>, bool) {
    let mut out = Vec::new();
    let mut split_any = false;
    for event in events {
        let ty = event["type"].as_str().unwrap_or_default().to_owned();
        let delta = event
            .get("delta")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let splittable = matches!(
            ty.as_str(),
            "TEXT_MESSAGE_CONTENT"
                | "REASONING_MESSAGE_CONTENT"
                | "TOOL_CALL_ARGS"
                | "TEXT_MESSAGE_CHUNK"
                | "REASONING_MESSAGE_CHUNK"
                | "TOOL_CALL_CHUNK"
        );
        match delta {
            Some(d) if splittable && d.chars().count() >= 2 => {
                let cut = d.char_indices().nth(d.chars().count() / 2).unwrap().0;
                let mut first = event.clone();
                first["delta"] = json!(d[..cut]);
                let second = if ty.ends_with("_CHUNK") {
                    json!({"type": ty, "delta": d[cut..]})
                } else {
                    let mut second = event.clone();
                    second["delta"] = json!(d[cut..]);
                    second
                };
                out.push(first);
                out.push(second);
                split_any = true;
            }
            _ => out.push(event),
        }
    }
    (out, split_any)
}

fn read_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_events(path: &Path, events: &[Value]) {
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn diff_code(a: &Path, b: &Path, level: &str) -> i32 {
    run(&[
        "diff",
        "--level",
        level,
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ])
    .0
}

/// A stream file `name` in `dir` holding `lines`, one per line.
fn lines_file(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Records `recorded`'s snapshot in `dir`, then holds `held` to it: `snapshot`'s exit code.
fn snapshot_of_held_to(dir: &Path, recorded: &Path, held: &Path) -> i32 {
    let snap = dir.join("run.snap");
    let snap = snap.to_str().unwrap();
    let (code, _, stderr) = run(&[
        "snapshot",
        recorded.to_str().unwrap(),
        "--expect",
        snap,
        "--update",
        "--reason",
        "first",
    ]);
    assert_eq!(code, 0, "{stderr}");
    run(&["snapshot", held.to_str().unwrap(), "--expect", snap]).0
}

/// The real captures (fixtures/recordings, as recorded) that are event streams.
fn recordings() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/recordings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl") && !p.to_string_lossy().contains("invalid")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn renamed_and_rechunked_copies_mean_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let files = recordings();
    assert!(files.len() >= 3);
    let mut compared_events = 0;
    for original in files {
        let mut events = read_events(&original);
        events.iter_mut().for_each(rename_ids);
        let (events, split) = rechunk(events);
        let copy = dir.path().join("copy.jsonl");
        write_events(&copy, &events);
        let name = original.display();
        assert_eq!(
            diff_code(&original, &copy, "compact"),
            0,
            "{name} at compact"
        );
        assert_eq!(diff_code(&original, &copy, "fold"), 0, "{name} at fold");
        if split {
            compared_events += 1;
            assert_eq!(diff_code(&original, &copy, "events"), 1, "{name} at events");
        }
        // Renamed ids alone are no difference even event by event.
        let mut renamed = read_events(&original);
        renamed.iter_mut().for_each(rename_ids);
        write_events(&copy, &renamed);
        assert_eq!(
            diff_code(&original, &copy, "events"),
            0,
            "{name}: renamed ids at events"
        );
    }
    assert!(compared_events > 0);
}

#[test]
fn one_changed_character_is_a_difference_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let original = root().join("fixtures/valid/pydantic-ai-full.jsonl");
    let mut events = read_events(&original);
    let at = events
        .iter()
        .position(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .unwrap();
    let delta = events[at]["delta"].as_str().unwrap().to_owned();
    let mut changed = delta.clone();
    let last = changed.pop().unwrap();
    changed.push(if last == 'x' { 'y' } else { 'x' });
    events[at]["delta"] = json!(changed);
    let copy = dir.path().join("changed.jsonl");
    write_events(&copy, &events);
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&original, &copy, level), 1, "at {level}");
    }
}

#[test]
fn a_reference_that_points_elsewhere_is_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("two-messages.jsonl");
    let stream = |parent: &str| {
        vec![
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"one"}),
            json!({"type":"TEXT_MESSAGE_END","messageId":"m1"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"two"}),
            json!({"type":"TEXT_MESSAGE_END","messageId":"m2"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":parent}),
            json!({"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}),
            json!({"type":"TOOL_CALL_END","toolCallId":"c1"}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ]
    };
    write_events(&original, &stream("m1"));
    let moved = dir.path().join("moved.jsonl");
    write_events(&moved, &stream("m2"));
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&original, &moved, level), 1, "at {level}");
    }
    // The same structure with every id renamed is not a difference.
    let mut renamed = stream("m1");
    renamed.iter_mut().for_each(rename_ids);
    let renamed_path = dir.path().join("renamed.jsonl");
    write_events(&renamed_path, &renamed);
    assert_eq!(diff_code(&original, &renamed_path, "events"), 0);
}

#[test]
fn diff_output_names_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let original = root().join("fixtures/valid/pydantic-ai-full.jsonl");
    let mut events = read_events(&original);
    let at = events
        .iter()
        .position(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .unwrap();
    events[at]["delta"] = json!("CHANGED");
    let copy = dir.path().join("c.jsonl");
    write_events(&copy, &events);
    let (code, stdout, _) = run(&[
        "diff",
        "--level",
        "events",
        "--color",
        "never",
        original.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(&format!(
            "first difference at item {at} (TEXT_MESSAGE_CONTENT / TEXT_MESSAGE_CONTENT)"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("  at /delta"), "{stdout}");
    assert!(stdout.contains("+  \"delta\": \"CHANGED\","), "{stdout}");
    let (code, stdout, _) = run(&[
        "diff",
        "--format",
        "json",
        original.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["equal"], false);
    assert_eq!(doc["first_difference"]["pointer"], "/delta");
    assert!(
        doc["first_difference"]["right"]
            .as_str()
            .unwrap()
            .starts_with("CHANGED")
    );
    // Redacting what differs makes the two equal; keeping timestamps makes copies differ.
    let (code, _, _) = run(&[
        "diff",
        "--redact",
        "/delta",
        "--redact",
        "/**/content",
        original.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        run(&[
            "diff",
            "--redact",
            "no-slash",
            original.to_str().unwrap(),
            copy.to_str().unwrap()
        ])
        .0,
        2
    );
    assert_eq!(
        run(&["diff", original.to_str().unwrap(), "missing.jsonl"]).0,
        2
    );
}

#[test]
fn snapshot_life_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("chat.jsonl");
    std::fs::copy(
        root().join("fixtures/valid/pydantic-ai-full.jsonl"),
        &stream,
    )
    .unwrap();
    let snap = dir.path().join("snaps/chat.snap");
    let new = dir.path().join("snaps/chat.snap.new");
    let s = stream.to_str().unwrap();
    let f = snap.to_str().unwrap();

    // No expectation yet: fail, and write one to review.
    let (code, _, stderr) = run(&["snapshot", s, "--expect", f, "--redact", "/**/metadata"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!snap.exists() && new.exists(), "{stderr}");
    let text = std::fs::read_to_string(&new).unwrap();
    assert!(
        text.starts_with("# agui-lens snapshot 1\n# level: compact\n# redact: /**/metadata\n"),
        "{text}"
    );

    // Accept it; the same stream now matches, with no flags (the header says how).
    assert_eq!(run(&["snapshot", "accept", f]).0, 0);
    assert!(snap.exists() && !new.exists());
    assert_eq!(run(&["snapshot", s, "--expect", f]).0, 0);

    // A changed stream: fail, show the diff, write the new result beside the expectation.
    let mut events = read_events(&stream);
    let at = events
        .iter()
        .position(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .unwrap();
    events[at]["delta"] = json!("a different answer");
    write_events(&stream, &events);
    let (code, stdout, _) = run(&["snapshot", s, "--expect", f, "--color", "never"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("a different answer"), "{stdout}");
    assert!(new.exists());

    // Review: reject it, then produce it again and accept it.
    let review = |answer: &str| {
        split(
            agui_lens()
                .args([
                    "snapshot",
                    "review",
                    dir.path().to_str().unwrap(),
                    "--color",
                    "never",
                ])
                .write_stdin(answer.to_owned())
                .output()
                .unwrap(),
        )
    };
    let (code, stdout, _) = review("r\n");
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("accepted 0, rejected 1, skipped 0"),
        "{stdout}"
    );
    assert!(!new.exists());
    assert_eq!(run(&["snapshot", s, "--expect", f]).0, 1);
    // An answer that is none of a, r, s is asked again, never taken as a skip.
    let (_, stdout, _) = review("y\n\na\n");
    assert!(stdout.contains("\"y\" is not an answer"), "{stdout}");
    assert!(
        stdout.contains("accepted 1, rejected 0, skipped 0"),
        "{stdout}"
    );
    assert_eq!(run(&["snapshot", s, "--expect", f]).0, 0);

    // --update in CI needs a reason, which the header then records.
    let update = |ci: bool, reason: Option<&str>| {
        let mut cmd = agui_lens();
        cmd.args(["snapshot", s, "--expect", f, "--update", "--level", "fold"]);
        if let Some(reason) = reason {
            cmd.args(["--reason", reason]);
        }
        if ci {
            cmd.env("CI", "true");
        }
        split(cmd.output().unwrap())
    };
    let (code, _, stderr) = update(true, None);
    assert_eq!(code, 2);
    assert!(stderr.contains("--reason"), "{stderr}");
    // The expectation is replaced whole, and keeps the permissions it had.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&snap, std::fs::Permissions::from_mode(0o640)).unwrap();
    let (code, _, _) = update(true, Some("fold level is what we promise"));
    assert_eq!(code, 0);
    let mode = std::fs::metadata(&snap).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    let names: Vec<_> = std::fs::read_dir(snap.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["chat.snap"], "no temp file left");
    let text = std::fs::read_to_string(&snap).unwrap();
    assert!(text.contains("# level: fold\n"), "{text}");
    assert!(
        text.contains("# reason: fold level is what we promise\n"),
        "{text}"
    );
    assert_eq!(run(&["snapshot", s, "--expect", f]).0, 0);
    assert_eq!(run(&["snapshot", "accept", f]).0, 2, "nothing pending");
}

/// Streams that differ only in the provider payloads RAW events pass on are said to, with the
/// ways to compare past them; event by event, the first difference names its line in each file.
/// Writing the expectation (`--update`, `test --update-snapshots`) takes away the `FILE.new`
/// an earlier run left for review: reviewed later, it offered to put the older result back
/// over the one just written.
#[test]
fn an_update_leaves_no_older_result_to_review() {
    let dir = tempfile::tempdir().unwrap();
    let older = dir.path().join("older.jsonl");
    std::fs::copy(root().join("fixtures/valid/pydantic-ai-full.jsonl"), &older).unwrap();
    let mut events = read_events(&older);
    let at = events
        .iter()
        .position(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .unwrap();
    events[at]["delta"] = json!("a newer answer");
    let newer = dir.path().join("newer.jsonl");
    write_events(&newer, &events);
    let snap = dir.path().join("chat.snap");
    let pending = dir.path().join("chat.snap.new");
    let f = snap.to_str().unwrap();
    // No expectation: the older result waits for review.
    assert_eq!(
        run(&["snapshot", older.to_str().unwrap(), "--expect", f]).0,
        1
    );
    assert!(pending.exists() && !snap.exists());
    // Written by an update: nothing older is left to review.
    let (code, _, stderr) = run(&[
        "snapshot",
        newer.to_str().unwrap(),
        "--expect",
        f,
        "--update",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(snap.exists());
    assert!(
        !pending.exists(),
        "{} left beside the expectation",
        pending.display()
    );
    // And over an expectation that differs.
    assert_eq!(
        run(&["snapshot", older.to_str().unwrap(), "--expect", f]).0,
        1
    );
    assert!(pending.exists());
    let (code, _, stderr) = run(&[
        "snapshot",
        newer.to_str().unwrap(),
        "--expect",
        f,
        "--update",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !pending.exists(),
        "{} left beside the expectation",
        pending.display()
    );
    assert_eq!(
        run(&["snapshot", newer.to_str().unwrap(), "--expect", f]).0,
        0
    );
    // A `FILE.new` that holds no snapshot (the user's notes, a folder) is no result left for
    // review: left as it is, said, and the update still succeeds.
    let update = |stream: &Path| {
        run(&[
            "snapshot",
            stream.to_str().unwrap(),
            "--expect",
            f,
            "--update",
        ])
    };
    std::fs::write(&pending, "my notes\n").unwrap();
    let (code, _, stderr) = update(&older);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&pending).unwrap(), "my notes\n");
    assert!(stderr.contains("left as it is"), "{stderr}");
    std::fs::remove_file(&pending).unwrap();
    std::fs::create_dir(&pending).unwrap();
    let (code, _, stderr) = update(&newer);
    assert_eq!(code, 0, "{stderr}");
    assert!(pending.is_dir());
}

#[test]
fn raw_only_differences_are_named_and_located() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, id: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "{}\n\n{}\n{}\n",
                r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
                format_args!(r#"{{"type":"RAW","event":{{"id":"{id}"}}}}"#),
                r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (a, b) = (
        write("a.jsonl", "chatcmpl-1"),
        write("b.jsonl", "chatcmpl-2"),
    );
    let (code, stdout, _) = run(&["diff", &a, &b, "--level", "events", "--color", "never"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("only RAW events differ (1 of them)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("first difference at item 1 (RAW / RAW)\n  line 3 of "),
        "{stdout}"
    );
    // Compacted, an item is found in the file by its type and ids.
    let (_, stdout, _) = run(&["diff", &a, &b, "--color", "never"]);
    assert!(
        stdout.contains("first difference at item 1 (RAW / RAW)\n  line 3 of "),
        "{stdout}"
    );
    let (code, _, _) = run(&["diff", &a, &b, "--redact", "/event"]);
    assert_eq!(code, 0);
}

/// A frame that cannot be read as an event (not JSON, a line cut off) is part of what a stream
/// is: a client that meets it fails. A stream that gained one, or whose broken frame changed,
/// differs at every level; diff and snapshot never call such streams the same.
#[test]
fn a_frame_that_could_not_be_read_is_a_difference_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ];
    let write_at = |name: &str, extra: Option<&str>, at: usize| {
        let mut text = String::new();
        for (i, line) in lines.iter().enumerate() {
            if i == at {
                if let Some(extra) = extra {
                    text.push_str(extra);
                    text.push('\n');
                }
            }
            text.push_str(line);
            text.push('\n');
        }
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let write = |name: &str, extra: Option<&str>| write_at(name, extra, 3);
    let clean = write("clean.jsonl", None);
    let broken = write("broken.jsonl", Some("not json"));
    let again = write("again.jsonl", Some("not json"));
    let other = write("other.jsonl", Some("{\"type\":\"TEXT_MESSAGE_CONT"));
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&clean, &broken, level), 1, "at {level}");
        assert_eq!(diff_code(&broken, &clean, level), 1, "at {level}");
        assert_eq!(diff_code(&broken, &other, level), 1, "at {level}");
        assert_eq!(diff_code(&broken, &again, level), 0, "at {level}");
    }
    // Where it is matters: a client stops there. At the compact level it once went to the
    // end of the items whatever its place.
    let early = write_at("early.jsonl", Some("not json"), 1);
    for level in ["events", "compact"] {
        assert_eq!(diff_code(&broken, &early, level), 1, "at {level}");
    }
    let snap = dir.path().join("run.snap");
    let (s, snap) = (|p: &Path| p.to_str().unwrap().to_owned(), snap);
    let snap = s(&snap);
    let (code, _, stderr) = run(&[
        "snapshot",
        &s(&clean),
        "--expect",
        &snap,
        "--update",
        "--reason",
        "first",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = run(&["snapshot", &s(&broken), "--expect", &snap]);
    assert_eq!(code, 1, "{stdout}");
    let (code, _, stderr) = run(&[
        "snapshot",
        &s(&broken),
        "--expect",
        &snap,
        "--update",
        "--reason",
        "broken",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(run(&["snapshot", &s(&again), "--expect", &snap]).0, 0);
    assert_eq!(run(&["snapshot", &s(&other), "--expect", &snap]).0, 1);
    assert_eq!(run(&["snapshot", &s(&clean), "--expect", &snap]).0, 1);
}

/// A chunk the official client fails on (a first TEXT_MESSAGE_CHUNK with no id: it throws,
/// and the run is lost) is part of what a stream means. Compaction and folding leave it out,
/// so a stream that gained one compared the same as the one without it, at the default level
/// and by what a client ends with, and a snapshot passed it.
#[test]
fn a_chunk_the_client_fails_on_is_a_difference_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ];
    let write = |name: &str, extra: &[&str]| {
        let mut all: Vec<&str> = lines.to_vec();
        for (i, line) in extra.iter().enumerate() {
            all.insert(1 + i, line);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, all.join("\n") + "\n").unwrap();
        path
    };
    let clean = write("clean.jsonl", &[]);
    let broken = write(
        "broken.jsonl",
        &[r#"{"type":"TEXT_MESSAGE_CHUNK","delta":"lost?"}"#],
    );
    // The same failure with other ids and words: the same meaning.
    let again = write(
        "again.jsonl",
        &[r#"{"type":"TEXT_MESSAGE_CHUNK","delta":"gone"}"#],
    );
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&clean, &broken, level), 1, "at {level}");
        assert_eq!(diff_code(&broken, &clean, level), 1, "at {level}");
    }
    for level in ["compact", "fold"] {
        assert_eq!(diff_code(&broken, &again, level), 0, "at {level}");
    }
    let (code, stdout, _) = run(&["diff", clean.to_str().unwrap(), broken.to_str().unwrap()]);
    assert!(
        stdout.contains("client_fails") && stdout.contains("has no messageId"),
        "{code}: {stdout}"
    );
    let snap = dir.path().join("run.snap");
    let snap = snap.to_str().unwrap();
    let (code, _, stderr) = run(&[
        "snapshot",
        clean.to_str().unwrap(),
        "--expect",
        snap,
        "--update",
        "--reason",
        "first",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = run(&["snapshot", broken.to_str().unwrap(), "--expect", snap]);
    assert_eq!(code, 1, "{stdout}");
}

/// A frame that is no text of an event (a JSON array's misplaced comma, its missing `]`) is
/// compared by what is wrong with it: two streams broken in different ways never mean the
/// same, though neither broken part holds an event's text.
#[test]
fn frames_broken_in_different_ways_are_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let a = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
    let b = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let trailing = write("trailing.json", format!("[{a},\n{b},\n]\n"));
    let again = write("again.json", format!("[{a},\n{b},\n]\n"));
    let unclosed = write("unclosed.json", format!("[{a},\n{b}\n"));
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&trailing, &unclosed, level), 1, "at {level}");
        assert_eq!(diff_code(&trailing, &again, level), 0, "at {level}");
    }
}

/// How each run ended is part of what a stream folds to: a run that failed (RUN_ERROR) never
/// means the same as one that finished with the same messages, nor do two different
/// outcomes. Token usage, which varies from run to run, is no part of it. A snapshot written
/// before runs were compared (no `# fold: runs`) is compared as it was written.
#[test]
fn how_a_run_ended_is_a_difference_at_the_fold_level() {
    let dir = tempfile::tempdir().unwrap();
    let body = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
    ]
    .join("\n");
    let write = |name: &str, end: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{body}\n{end}\n")).unwrap();
        path
    };
    let finished = write(
        "finished.jsonl",
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    );
    let failed = write(
        "failed.jsonl",
        r#"{"type":"RUN_ERROR","message":"model overloaded"}"#,
    );
    let other_failure = write(
        "other.jsonl",
        r#"{"type":"RUN_ERROR","message":"rate limited"}"#,
    );
    assert_eq!(diff_code(&finished, &failed, "fold"), 1);
    assert_eq!(diff_code(&failed, &other_failure, "fold"), 1);
    assert_eq!(diff_code(&failed, &failed, "fold"), 0);
    // The same run under other minted ids, with its token usage, means the same.
    let renamed = dir.path().join("renamed.jsonl");
    std::fs::write(
        &renamed,
        std::fs::read_to_string(&finished)
            .unwrap()
            .replace("\"t\"", "\"thread-9\"")
            .replace("\"r\"", "\"run-9\"")
            .replace(
                r#""runId":"run-9"}"#,
                r#""runId":"run-9","usage":[{"inputTokens":12}]}"#,
            ),
    )
    .unwrap();
    assert_eq!(diff_code(&finished, &renamed, "fold"), 0);
    let snap = dir.path().join("fold.snap");
    let (s, snap) = (|p: &Path| p.to_str().unwrap().to_owned(), s_of(&snap));
    let (code, _, stderr) = run(&[
        "snapshot",
        &s(&finished),
        "--expect",
        &snap,
        "--level",
        "fold",
        "--update",
        "--reason",
        "first",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::read_to_string(&snap)
            .unwrap()
            .contains("# fold: runs\n")
    );
    assert_eq!(run(&["snapshot", &s(&failed), "--expect", &snap]).0, 1);
    // An older snapshot, without the header, holds messages and state only.
    let old: String = std::fs::read_to_string(&snap)
        .unwrap()
        .lines()
        .filter(|l| *l != "# fold: runs" && !l.starts_with("{\"runs\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&snap, old).unwrap();
    assert_eq!(run(&["snapshot", &s(&failed), "--expect", &snap]).0, 0);
}

fn s_of(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

/// The same events sent as JSON and as protobuf hold to one snapshot: the empty list of resume
/// entries a decoder gives every run input is none. A snapshot stored from protobuf before
/// that, which holds the list, still matches.
#[test]
fn a_stream_and_its_protobuf_copy_hold_to_one_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let json = root().join("fixtures/recordings/copilotkit-full.jsonl");
    let pb = dir.path().join("full.pb");
    let (json, pb) = (json.to_str().unwrap(), pb.to_str().unwrap());
    assert_eq!(run(&["cat", json, "-o", pb]).0, 0);
    let snap = dir.path().join("full.snap");
    let f = snap.to_str().unwrap();
    for (written, held) in [(json, pb), (pb, json)] {
        let (code, _, stderr) = run(&["snapshot", written, "--expect", f, "--update"]);
        assert_eq!(code, 0, "{stderr}");
        let (code, stdout, _) = run(&["snapshot", held, "--expect", f, "--color", "never"]);
        assert_eq!(code, 0, "{written} stored, {held} held: {stdout}");
    }
    let text = std::fs::read_to_string(&snap).unwrap();
    assert!(!text.contains("\"resume\""), "{text}");
    let listed = text.replacen("\"input\":{", "\"input\":{\"resume\":[],", 1);
    assert_ne!(listed, text);
    std::fs::write(&snap, listed).unwrap();
    for held in [json, pb] {
        let (code, stdout, _) = run(&["snapshot", held, "--expect", f, "--color", "never"]);
        assert_eq!(code, 0, "{held}: {stdout}");
    }
    // A run input that lists no tools and no context: the decoder gives it both, empty.
    let bare = dir.path().join("bare.jsonl");
    std::fs::write(
        &bare,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}],"state":{}}}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let bare_pb = dir.path().join("bare.pb");
    let (bare, bare_pb) = (bare.to_str().unwrap(), bare_pb.to_str().unwrap());
    assert_eq!(run(&["cat", bare, "-o", bare_pb]).0, 0);
    for level in ["events", "compact", "fold"] {
        let (code, stdout, _) = run(&["diff", "--level", level, bare, bare_pb]);
        assert_eq!(code, 0, "at {level}: {stdout}");
    }
}

/// At the fold level each thread of a stream is folded on its own, as a client holds one
/// conversation per thread: a change to the state of any thread is a difference. Folded
/// together, only the last thread's state was compared, so a change to an earlier thread's
/// state passed `diff` and `snapshot`.
#[test]
fn every_thread_is_compared_at_the_fold_level() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |a_state: &str, text: &str| {
        [
            r#"{"type":"RUN_STARTED","threadId":"A","runId":"r1"}"#.to_owned(),
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#.into(),
            format!(r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"{text}"}}"#),
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#.into(),
            format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{{"a":"{a_state}"}}}}"#),
            r#"{"type":"RUN_FINISHED","threadId":"A","runId":"r1"}"#.into(),
            r#"{"type":"RUN_STARTED","threadId":"B","runId":"r2"}"#.into(),
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"b":1}}"#.into(),
            r#"{"type":"RUN_FINISHED","threadId":"B","runId":"r2"}"#.into(),
        ]
        .join("\n")
            + "\n"
    };
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let base = write("base.jsonl", stream("x", "hello"));
    let same = write("same.jsonl", stream("x", "hello"));
    let state = write("state.jsonl", stream("y", "hello"));
    let text = write("text.jsonl", stream("x", "bye"));
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&base, &same, level), 0, "at {level}");
        assert_eq!(diff_code(&base, &state, level), 1, "at {level}");
        assert_eq!(diff_code(&base, &text, level), 1, "at {level}");
    }
    // The same two threads, B's run first: what each client ends with is the same, so the
    // folds are; the events came in another order.
    let swap = |text: String| {
        let lines: Vec<&str> = text.lines().collect();
        lines[6..]
            .iter()
            .chain(&lines[..6])
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    let swapped = write("swapped.jsonl", swap(stream("x", "hello")));
    let swapped_state = write("swapped-state.jsonl", swap(stream("y", "hello")));
    assert_eq!(diff_code(&base, &swapped, "fold"), 0);
    assert_eq!(diff_code(&swapped, &base, "fold"), 0);
    assert_eq!(diff_code(&base, &swapped_state, "fold"), 1);
    assert_eq!(diff_code(&base, &swapped, "events"), 1);
    let snap = dir.path().join("threads.snap");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let (code, _, stderr) = run(&[
        "snapshot",
        &s(&base),
        "--expect",
        &s(&snap),
        "--level",
        "fold",
        "--update",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(run(&["snapshot", &s(&same), "--expect", &s(&snap)]).0, 0);
    assert_eq!(run(&["snapshot", &s(&swapped), "--expect", &s(&snap)]).0, 0);
    assert_eq!(run(&["snapshot", &s(&state), "--expect", &s(&snap)]).0, 1);
}

/// `snapshot review DIR` reviews every pending snapshot it can: one it cannot read (a link
/// that leads nowhere, a file that is no snapshot) is named and left, the rest are still
/// offered, and the run exits 2. A link that loops is not followed.
#[test]
fn review_goes_on_past_a_pending_snapshot_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let root_dir = dir.path();
    let stream = root().join("fixtures/recordings/agui-sdk-full.jsonl");
    let snap = root_dir.join("sub/a.snap");
    let (code, _, stderr) = run(&[
        "snapshot",
        stream.to_str().unwrap(),
        "--expect",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    std::os::unix::fs::symlink("nowhere", root_dir.join("b.snap.new")).unwrap();
    std::fs::write(root_dir.join("c.snap.new"), "not a snapshot\n").unwrap();
    std::os::unix::fs::symlink(".", root_dir.join("loop")).unwrap();
    let (code, stdout, stderr) = split(
        agui_lens()
            .args([
                "snapshot",
                "review",
                root_dir.to_str().unwrap(),
                "--color",
                "never",
            ])
            .write_stdin("a\n")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        snap.exists(),
        "the readable one was accepted: {stdout}{stderr}"
    );
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("b.snap.new"), "{said}");
    assert!(said.contains("c.snap.new"), "{said}");
    assert!(said.contains("accepted 1"), "{said}");
}

/// `diff - -` names stdin twice: it can be read once, and the error says so (it said the
/// input was empty).
#[test]
fn stdin_named_twice_is_said_to_be() {
    let stream = std::fs::read(root().join("fixtures/recordings/agui-sdk-full.jsonl")).unwrap();
    let (code, stdout, stderr) = split(
        agui_lens()
            .args(["diff", "-", "-"])
            .write_stdin(stream)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("named twice"), "{stderr}");
}

/// A run's result (`RUN_FINISHED.result`, what the official client's `runAgent()` returns) is
/// part of how it ended: a changed result passed at the fold level.
#[test]
fn a_changed_run_result_is_a_difference_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |result: &str| {
        format!(
            "{}\n{}\n{}\n{}\n",
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
            format_args!(
                r#"{{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{result}}}"#
            )
        )
    };
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, stream(r#"{"ok":true}"#)).unwrap();
    std::fs::write(&b, stream(r#"{"ok":false}"#)).unwrap();
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&a, &b, level), 1, "{level}");
        assert_eq!(diff_code(&a, &a, level), 0, "{level}");
    }
}

/// Flags that say otherwise than an existing expectation's header are not used, and that is
/// said: `--redact` given against an existing snapshot changed nothing, silently.
#[test]
fn flags_an_expectation_overrides_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let stream = root().join("fixtures/recordings/pydantic-ai-full.jsonl");
    let snap = dir.path().join("run.snap");
    let (stream, snap) = (stream.to_str().unwrap(), snap.to_str().unwrap());
    let (code, _, stderr) = run(&["snapshot", stream, "--expect", snap, "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["snapshot", stream, "--expect", snap]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("not used"), "{stderr}");
    for flags in [&["--redact", "/**/delta"][..], &["--level", "fold"]] {
        let mut args = vec!["snapshot", stream, "--expect", snap];
        args.extend_from_slice(flags);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("are not used here"), "{flags:?}: {stderr}");
    }
}

/// An update with a flag changes what that flag names and keeps the rest of the stored
/// header: `--update --keep timestamp` wrote a fold-level snapshot at the compact level and
/// without its redaction, a secret the redaction kept out of the file then in it. A
/// redaction given is added to the stored ones.
#[test]
fn an_update_with_a_flag_keeps_the_rest_of_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("s.jsonl");
    std::fs::write(
        &stream,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":5}"#,
            "\n",
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"apiKey":"sk-SECRET-123","user":"ann"}}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let snap = dir.path().join("s.snap");
    let (stream, snap) = (stream.to_str().unwrap(), snap.to_str().unwrap());
    let (code, _, stderr) = run(&[
        "snapshot",
        stream,
        "--expect",
        snap,
        "--update",
        "--level",
        "fold",
        "--redact",
        "/state/apiKey",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let first = std::fs::read_to_string(snap).unwrap();
    assert!(!first.contains("sk-SECRET"), "{first}");
    for flags in [
        &["--keep", "timestamp"][..],
        &["--redact", "/state/user"],
        &["--id-key", "user"],
    ] {
        let mut args = vec!["snapshot", stream, "--expect", snap, "--update"];
        args.extend_from_slice(flags);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{flags:?}: {stderr}");
        let written = std::fs::read_to_string(snap).unwrap();
        assert!(
            !written.contains("sk-SECRET")
                && written.contains("# level: fold")
                && written.contains("# redact: /state/apiKey"),
            "{flags:?}: {written}"
        );
    }
    let written = std::fs::read_to_string(snap).unwrap();
    assert!(
        written.contains("# redact: /state/user") && !written.contains("ann"),
        "{written}"
    );
    // A level given is the level written; the header's settings stay.
    let (code, _, stderr) = run(&[
        "snapshot", stream, "--expect", snap, "--update", "--level", "events",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let written = std::fs::read_to_string(snap).unwrap();
    assert!(
        written.contains("# level: events") && written.contains("# redact: /state/apiKey"),
        "{written}"
    );
}

/// A fold-level snapshot written before such snapshots held the runs (no `# fold: runs`)
/// is compared as written, which cannot tell a run that errors from one that finishes: that
/// is said at every comparison (a stream ending in RUN_ERROR matched it in silence).
#[test]
fn a_fold_snapshot_that_holds_no_runs_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let ok = root().join("fixtures/recordings/pydantic-ai-full.jsonl");
    let text = std::fs::read_to_string(&ok).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let last = lines.pop().unwrap();
    assert!(last.contains("RUN_FINISHED"), "{last}");
    let failed = dir.path().join("failed.jsonl");
    let error = r#"{"type":"RUN_ERROR","message":"model crashed","code":"INTERNAL"}"#;
    std::fs::write(&failed, format!("{}\n{error}\n", lines.join("\n"))).unwrap();
    let snap = dir.path().join("run.snap");
    let (ok, failed, snap) = (
        ok.to_str().unwrap(),
        failed.to_str().unwrap(),
        snap.to_str().unwrap(),
    );
    let (code, _, stderr) = run(&[
        "snapshot", ok, "--expect", snap, "--update", "--level", "fold",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["snapshot", failed, "--expect", snap]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("fold: runs"), "{stderr}");
    let written = std::fs::read_to_string(snap).unwrap();
    let older: String = written
        .lines()
        .filter(|line| *line != "# fold: runs" && !line.starts_with("{\"runs\""))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(older, written);
    std::fs::write(snap, older).unwrap();
    for stream in [ok, failed] {
        let (code, _, stderr) = run(&["snapshot", stream, "--expect", snap]);
        assert_eq!(code, 0, "{stream}: {stderr}");
        assert!(
            stderr.contains("warning:") && stderr.contains("`# fold: runs`"),
            "{stream}: {stderr}"
        );
    }
    // A stream that means something else leaves for review what --update would write: its
    // fold with the runs (it was written in the older way, and accepting it kept that).
    let other = dir.path().join("other.jsonl");
    assert!(text.contains(r#""delta":""#));
    std::fs::write(
        &other,
        text.replacen(r#""delta":""#, r#""delta":"Changed: "#, 1),
    )
    .unwrap();
    let (code, _, stderr) = run(&["snapshot", other.to_str().unwrap(), "--expect", snap]);
    assert_eq!(code, 1, "{stderr}");
    let pending = std::fs::read_to_string(format!("{snap}.new")).unwrap();
    assert!(
        pending.lines().any(|line| line == "# fold: runs") && pending.contains("Changed: "),
        "{pending}"
    );
    // Piped in, the stream cannot be read again for that: what is left for review is written
    // the snapshot's way, and said (it was "- holds no AG-UI events", exit 2, nothing left).
    std::fs::remove_file(format!("{snap}.new")).unwrap();
    let output = agui_lens()
        .args(["snapshot", "-", "--expect", snap])
        .write_stdin(std::fs::read(&other).unwrap())
        .output()
        .unwrap();
    let (code, _, stderr) = split(output);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("could not be read a second time"),
        "{stderr}"
    );
    let pending = std::fs::read_to_string(format!("{snap}.new")).unwrap();
    assert!(pending.contains("Changed: "), "{pending}");
    // From a FIFO, the same (a second reading waited for a writer that never came).
    #[cfg(unix)]
    {
        std::fs::remove_file(format!("{snap}.new")).unwrap();
        let fifo = dir.path().join("fifo");
        crate::common::make_fifo(&fifo);
        let bytes = std::fs::read(&other).unwrap();
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
        };
        let output = agui_lens()
            .args(["snapshot", fifo.to_str().unwrap(), "--expect", snap])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        writer.join().unwrap();
        let (code, _, stderr) = split(output);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("could not be read a second time"),
            "{stderr}"
        );
        assert!(std::path::Path::new(&format!("{snap}.new")).exists());
    }
    // Updated as the warning says, it holds the runs.
    let (code, _, stderr) = run(&["snapshot", ok, "--expect", snap, "--update"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(snap).unwrap(), written);
    let (code, _, stderr) = run(&["snapshot", failed, "--expect", snap]);
    assert_eq!(code, 1, "{stderr}");
}

/// `fold` of a history of several threads shows one: it says which, and names the others
/// (it said nothing, and the other threads looked lost).
#[test]
fn fold_names_the_threads_it_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.jsonl");
    let run = |t: &str, r: &str| {
        format!(
            "{{\"type\":\"RUN_STARTED\",\"threadId\":\"{t}\",\"runId\":\"{r}\"}}\n{{\"type\":\"RUN_FINISHED\",\"threadId\":\"{t}\",\"runId\":\"{r}\"}}\n"
        )
    };
    std::fs::write(&path, run("first", "r1") + &run("second", "r2")).unwrap();
    let (code, _, stderr) = run_fold(&path, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: the input holds 2 threads; shown: second")
            && stderr.contains("`--thread ID`: first)"),
        "{stderr}"
    );
    let (_, _, stderr) = run_fold(&path, &["--thread", "first"]);
    assert!(!stderr.contains("threads; shown"), "{stderr}");
}

fn run_fold(path: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["fold", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(&args)
}

/// `--unordered` reorders neighbouring events; a fold has none: asked at the fold level, the
/// flag says it does nothing there rather than leaving a user to think it was applied.
#[test]
fn unordered_at_the_fold_level_says_it_does_nothing() {
    let stream = root().join("fixtures/recordings/agui-sdk-full.jsonl");
    let s = stream.to_str().unwrap();
    let (code, _, stderr) = run(&[
        "diff",
        s,
        s,
        "--level",
        "fold",
        "--unordered",
        "TOOL_CALL_RESULT",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("--unordered TOOL_CALL_RESULT has no effect at the fold level"),
        "{stderr}"
    );
    let (_, _, stderr) = run(&["diff", s, s, "--unordered", "TOOL_CALL_RESULT"]);
    assert!(!stderr.contains("no effect"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("a.snap");
    let (code, _, stderr) = run(&[
        "snapshot",
        s,
        "--expect",
        snap.to_str().unwrap(),
        "--level",
        "fold",
        "--unordered",
        "TOOL_CALL_RESULT",
        "--update",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("has no effect at the fold level"),
        "{stderr}"
    );
}

/// `--unordered` for a type whose order is what its events mean (patches applied one after
/// the other, deltas joined, the last snapshot winning) made streams that end with other state
/// or other text "mean the same" (exit 0): it is refused, in `diff`, `snapshot` (its flag or
/// a header that names it) and a suite, as an id pattern of nothing but wildcards is.
#[test]
fn unordered_is_refused_where_order_is_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let start = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned();
    let end = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned();
    let delta = |v: u32| {
        format!(r#"{{"type":"STATE_DELTA","delta":[{{"op":"add","path":"/a","value":{v}}}]}}"#)
    };
    let a = lines_file(
        dir.path(),
        "a.jsonl",
        &[start.clone(), delta(1), delta(2), end.clone()],
    );
    let b = lines_file(dir.path(), "b.jsonl", &[start, delta(2), delta(1), end]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for ty in [
        "STATE_DELTA",
        "TEXT_MESSAGE_CONTENT",
        "TOOL_CALL_ARGS",
        "MESSAGES_SNAPSHOT",
        "TOOL_CALL_START",
    ] {
        for level in ["events", "compact", "fold"] {
            let (code, stdout, stderr) = run(&["diff", a, b, "--level", level, "--unordered", ty]);
            assert_eq!(code, 2, "{ty} {level}: {stdout}{stderr}");
            assert!(stderr.contains(&format!("--unordered {ty}")), "{stderr}");
            assert!(!stdout.contains("mean the same"), "{stdout}");
        }
    }
    // Without the flag, and with one for parallel results, they differ.
    assert_eq!(run(&["diff", a, b]).0, 1);
    assert_eq!(run(&["diff", a, b, "--unordered", "TOOL_CALL_RESULT"]).0, 1);

    // A snapshot: by its flag, and by a header that names such a type.
    let snap = dir.path().join("a.snap");
    let snap = snap.to_str().unwrap();
    let (code, _, stderr) = run(&[
        "snapshot",
        a,
        "--expect",
        snap,
        "--update",
        "--unordered",
        "STATE_DELTA",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!Path::new(snap).exists());
    let (code, _, stderr) = run(&["snapshot", a, "--expect", snap, "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(snap).unwrap();
    let edited = text.replacen("# level:", "# unordered: STATE_DELTA\n# level:", 1);
    assert_ne!(edited, text);
    std::fs::write(snap, &edited).unwrap();
    let (code, stdout, stderr) = run(&["snapshot", b, "--expect", snap]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("STATE_DELTA"), "{stderr}");

    // A suite that names one is an invalid suite.
    let suite = dir.path().join("suite.toml");
    std::fs::write(
        &suite,
        "[[case]]\nname = \"c\"\nurl = \"http://127.0.0.1:9/\"\nmessage = \"hi\"\n\
         unordered = [\"STATE_DELTA\"]\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["test", suite.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("STATE_DELTA"),
        "{stdout}{stderr}"
    );
}

/// `diff --format json` that cannot compare (a file missing, one with no events) writes a
/// JSON document that says why, beside the exit status 2: a consumer of the JSON got an
/// empty stdout. And the header of an event-by-event diff says when timestamps are kept.
#[test]
fn a_diff_that_cannot_compare_still_writes_its_json_and_says_what_it_normalised() {
    let dir = tempfile::tempdir().unwrap();
    let stream = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let missing = dir.path().join("missing.jsonl");
    let (code, stdout, stderr) = run(&[
        "diff",
        "--format",
        "json",
        stream.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    assert_eq!(doc["equal"], Value::Null, "{doc}");
    assert!(
        doc["error"]
            .as_str()
            .is_some_and(|e| e.contains("missing.jsonl")),
        "{doc}"
    );
    let (_, stdout, _) = run(&[
        "diff",
        "--level",
        "events",
        "--keep",
        "timestamp",
        stream.to_str().unwrap(),
        stream.to_str().unwrap(),
    ]);
    assert!(stdout.contains("timestamps as written"), "{stdout}");
    let (_, stdout, _) = run(&[
        "diff",
        "--level",
        "events",
        stream.to_str().unwrap(),
        stream.to_str().unwrap(),
    ]);
    assert!(stdout.contains("ids and timestamps normalised"), "{stdout}");
}

/// A redaction that names no field, only wildcards (`/*/*`), takes what every item holds:
/// at the fold level any two streams compared the same under it. It is refused, as `/*` is.
#[test]
fn a_redaction_of_nothing_but_wildcards_is_refused() {
    let a = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let b = root().join("fixtures/valid/pydantic-ai-full.jsonl");
    for selector in ["/*/*", "/*/*/*", "/**/*", "/*"] {
        for level in ["events", "compact", "fold"] {
            let (code, stdout, stderr) = run(&[
                "diff",
                "--level",
                level,
                "--redact",
                selector,
                a.to_str().unwrap(),
                b.to_str().unwrap(),
            ]);
            assert_eq!(code, 2, "{selector} at {level}: {stdout}{stderr}");
            assert!(stderr.contains(selector), "{stderr}");
        }
    }
}

/// A STATE_DELTA that does not apply (its `test` fails, it replaces a path not there) leaves
/// the state as it was, and a client warns of it. Compacting left it out, so a stream that
/// began to send such patches compared the same as before, and passed its snapshot. It is
/// an item of the stream at every level: kept as written by compaction, and at the fold
/// level the client's warning (which is the same for two such patches).
#[test]
fn a_patch_that_fails_is_a_difference_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"count":1}}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2}]}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ];
    let write = |name: &str, extra: Option<&str>| {
        let mut all: Vec<&str> = lines.to_vec();
        if let Some(extra) = extra {
            all.insert(3, extra);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, all.join("\n") + "\n").unwrap();
        path
    };
    let clean = write("clean.jsonl", None);
    let failing = write(
        "failing.jsonl",
        Some(r#"{"type":"STATE_DELTA","delta":[{"op":"test","path":"/count","value":7}]}"#),
    );
    let again = write(
        "again.jsonl",
        Some(r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/gone","value":1}]}"#),
    );
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&clean, &failing, level), 1, "at {level}");
    }
    assert_eq!(diff_code(&failing, &again, "compact"), 1);
    assert_eq!(diff_code(&failing, &again, "fold"), 0);
    let snap = dir.path().join("run.snap");
    let snap = snap.to_str().unwrap();
    let (code, _, stderr) = run(&[
        "snapshot",
        clean.to_str().unwrap(),
        "--expect",
        snap,
        "--update",
        "--reason",
        "first",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = run(&["snapshot", failing.to_str().unwrap(), "--expect", snap]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("client_warns"), "{stdout}");
}

/// `--id-pattern` and `--id-key` name ids, never text: a pattern of nothing but wildcards or
/// a key that holds text is refused (exit 2, nothing compared), and a pattern that happens to
/// match a tool result's content or a delta leaves them as written. `--id-pattern '*'`
/// passed any two streams of as many events, and so did every later run against a snapshot
/// that stored it.
#[test]
fn id_patterns_never_make_text_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |text: &str| {
        [
            r#"{"type":"RUN_STARTED","threadId":"t-1","runId":"r-1"}"#.to_owned(),
            format!(r#"{{"type":"TOOL_CALL_RESULT","messageId":"m-1","toolCallId":"c-1","content":"{text}"}}"#),
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m-2","role":"assistant"}"#.to_owned(),
            format!(r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m-2","delta":"{text}"}}"#),
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m-2"}"#.to_owned(),
            r#"{"type":"RUN_FINISHED","threadId":"t-1","runId":"r-1"}"#.to_owned(),
        ]
        .join("\n")
            + "\n"
    };
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, stream("A-result")).unwrap();
    std::fs::write(&b, stream("A-RESULT-CHANGED")).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for flags in [
        &["--id-pattern", "*"][..],
        &["--id-key", "content"],
        &["--id-key", "delta"],
    ] {
        let (code, stdout, stderr) = run(&[&["diff", a, b][..], flags].concat());
        assert_eq!(code, 2, "{flags:?}: {stdout}{stderr}");
        assert!(stderr.contains(flags[1]), "{flags:?}: {stderr}");
        let snap = dir.path().join("s.snap");
        let (code, _, stderr) = run(&[
            &[
                "snapshot",
                a,
                "--expect",
                snap.to_str().unwrap(),
                "--update",
            ][..],
            flags,
        ]
        .concat());
        assert_eq!(code, 2, "{flags:?}: {stderr}");
        assert!(!snap.exists(), "{flags:?}");
    }
    for level in ["events", "compact", "fold"] {
        let (code, stdout, stderr) = run(&["diff", a, b, "--id-pattern", "*-*", "--level", level]);
        assert_eq!(code, 1, "{level}: {stdout}{stderr}");
    }
}

/// `--unordered TOOL_CALL_RESULT` lets parallel results come in either order at every level:
/// it passed swapped results event by event and compacted, and failed at the fold level (and
/// so did every fold-level snapshot that stored the flag). Changed results still differ.
#[test]
fn unordered_results_hold_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |results: [(&str, &str); 2]| {
        let mut lines = vec![
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
            r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a"}"#.to_owned(),
            r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#.to_owned(),
            r#"{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"g","parentMessageId":"a"}"#.to_owned(),
            r#"{"type":"TOOL_CALL_END","toolCallId":"c2"}"#.to_owned(),
        ];
        for (i, (call, content)) in results.iter().enumerate() {
            lines.push(format!(
                r#"{{"type":"TOOL_CALL_RESULT","messageId":"res-{i}-{call}","toolCallId":"{call}","content":"{content}"}}"#
            ));
        }
        lines.push(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned());
        lines.join("\n") + "\n"
    };
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let a = write("a.jsonl", stream([("c1", "one"), ("c2", "two")]));
    let b = write("b.jsonl", stream([("c2", "two"), ("c1", "one")]));
    let wrong = write("wrong.jsonl", stream([("c2", "one"), ("c1", "two")]));
    for level in ["events", "compact", "fold"] {
        let flags = ["--level", level, "--unordered", "TOOL_CALL_RESULT"];
        let (code, stdout, stderr) = run(&[&["diff", &a, &b][..], &flags].concat());
        assert_eq!(code, 0, "{level}: {stdout}{stderr}");
        let (code, stdout, stderr) = run(&[&["diff", &a, &wrong][..], &flags].concat());
        assert_eq!(code, 1, "{level}: {stdout}{stderr}");
        let (code, _, _) = run(&["diff", &a, &b, "--level", level]);
        assert_eq!(code, 1, "{level}: in order unless asked");
    }
}

/// A JavaScript agent that slices text by UTF-16 units cuts an emoji in two across deltas
/// (`"Done \ud83d"`, `"\ude00 see you"`): each half is JSON, and the official client joins
/// them as it concatenates. `fold` holds what that client holds, and `diff` calls the split
/// stream and the joined one the same by what they fold and compact to (event by event they
/// differ: their deltas do). Half a pair nothing joins stays half a pair, written as the
/// escape the official reducer's JSON writes.
#[test]
fn an_emoji_cut_in_two_across_deltas_is_joined_as_the_client_joins_it() {
    let split = root().join("fixtures/invalid/framing/lone-surrogate.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let joined = dir.path().join("joined.jsonl");
    std::fs::write(
        &joined,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\",\"protocolVersion\":\"1.1\"}\n\
         {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}\n\
         {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"Done \u{1F600} see you\"}\n\
         {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\
         {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n",
    )
    .unwrap();

    let (code, stdout, stderr) = run(&["fold", split.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("could not be read"), "{stderr}");
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(folded["messages"][0]["content"], "Done \u{1F600} see you");
    let official = std::process::Command::new("node")
        .arg(crate::common::reference_packages().join("fold.mjs"))
        .arg(&split)
        .output()
        .unwrap();
    let official: Value = serde_json::from_slice(&official.stdout).unwrap();
    assert_eq!(official["messages"], folded["messages"]);

    for (level, code) in [("fold", 0), ("compact", 0), ("events", 1)] {
        assert_eq!(diff_code(&split, &joined, level), code, "--level {level}");
    }

    // The second half never comes: the client holds half a pair, and so does the fold.
    let half = dir.path().join("half.jsonl");
    let text = std::fs::read_to_string(&split).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.contains("see you")).collect();
    std::fs::write(&half, lines.join("\n") + "\n").unwrap();
    let (code, stdout, stderr) = run(&["fold", "--compact", half.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(r#""content":"Done \ud83d""#), "{stdout}");
    let official = std::process::Command::new("node")
        .arg(crate::common::reference_packages().join("fold.mjs"))
        .arg(&half)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&official.stdout).contains(r#""content":"Done \ud83d""#),
        "{}",
        String::from_utf8_lossy(&official.stdout)
    );
    assert_eq!(diff_code(&half, &joined, "fold"), 1);

    // The private-use characters that stand in for halves, written as text (in the two
    // deltas the halves came in), are text: not joined, not escaped, compacted as they are.
    let text = "Done \u{10F83D}\u{10FE00} see you";
    let literal = dir.path().join("literal.jsonl");
    std::fs::write(
        &literal,
        std::fs::read_to_string(&split)
            .unwrap()
            .replace("\\ud83d", "\u{10F83D}")
            .replace("\\ude00", "\u{10FE00}"),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["fold", literal.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(folded["messages"][0]["content"], text);
    let compacted = dir.path().join("literal.compact.jsonl");
    let (code, _, stderr) = run(&[
        "compact",
        literal.to_str().unwrap(),
        "-o",
        compacted.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read_to_string(&compacted).unwrap().contains(text));
}

/// A stream that holds half a UTF-16 pair in one event and a character of U+10F800–U+10FFFF
/// (the range halves are read into) in another cannot be folded exactly: `fold` said nothing
/// and wrote the character as a half's escape, and `diff` called it the same as a stream
/// holding that half where the character was. `fold` now says so; `diff` will not compare
/// what it cannot tell apart (exit 2). Either alone folds and compares as before.
#[test]
fn a_half_beside_a_character_of_the_stand_in_range_is_said_not_folded_in_silence() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |text: &str| {
        format!(
            "{{\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"\\ud83d\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}}\n\
             {{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{{\"e\":\"{text}\"}}}}\n\
             {{\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}}\n"
        )
    };
    let real = dir.path().join("real.jsonl");
    std::fs::write(&real, stream("a\u{10F800}b")).unwrap();
    let escaped = dir.path().join("escaped.jsonl");
    std::fs::write(&escaped, stream("a\\udbfe\\udc00b")).unwrap();
    let half = dir.path().join("half.jsonl");
    std::fs::write(&half, stream("a\\ud800b")).unwrap();

    for with_char in [&real, &escaped] {
        let (code, stdout, stderr) = run(&["fold", "--compact", with_char.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains(r#""messages""#), "{stdout}");
        assert!(stderr.contains("U+10F800"), "{stderr}");
        for level in ["fold", "compact", "events"] {
            let (code, _, stderr) = run(&[
                "diff",
                "--level",
                level,
                with_char.to_str().unwrap(),
                half.to_str().unwrap(),
            ]);
            assert_eq!(code, 2, "--level {level}: {stderr}");
            assert!(stderr.contains("U+10F800"), "{stderr}");
        }
    }
    // Across two streams: one holds the half, the other the character it is read as. Each
    // alone is told apart; compared, they were "the same".
    let text = std::fs::read_to_string(&half).unwrap();
    let character = dir.path().join("character.jsonl");
    std::fs::write(
        &character,
        text.replace("\\ud83d", "\u{10F83D}")
            .replace("\\ud800", "\u{10F800}"),
    )
    .unwrap();
    assert!(
        !std::fs::read_to_string(&character)
            .unwrap()
            .contains("\\ud")
    );
    assert!(
        std::fs::read_to_string(&character)
            .unwrap()
            .contains('\u{10F83D}')
    );
    for level in ["fold", "compact", "events"] {
        for (a, b) in [(&half, &character), (&character, &half)] {
            let (code, _, stderr) = run(&[
                "diff",
                "--level",
                level,
                a.to_str().unwrap(),
                b.to_str().unwrap(),
            ]);
            assert_eq!(code, 2, "--level {level}: {stderr}");
            assert!(stderr.contains("cannot be told apart"), "{stderr}");
        }
    }

    // The half alone: folded and compared as before.
    let (code, stdout, stderr) = run(&["fold", "--compact", half.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(r#""e":"a\ud800b""#), "{stdout}");
    assert!(!stderr.contains("U+10F800"), "{stderr}");
    assert_eq!(diff_code(&half, &half, "fold"), 0);
}

/// A snapshot of a stream holding half a UTF-16 pair nothing joins writes the half as its
/// escape (it wrote the stand-in character itself), reads it back as the stream reads it, and
/// a stream holding the character of the range it is read into is not held to be the same
/// (it was, exit 0): not compared, as `diff` does not compare them (exit 2).
#[test]
fn a_snapshot_keeps_a_half_as_its_escape_and_is_not_taken_for_a_character() {
    let dir = tempfile::tempdir().unwrap();
    let half = dir.path().join("half.jsonl");
    let text = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\
                {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}\n\
                {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"hi \\ud83d\"}\n\
                {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\
                {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n";
    std::fs::write(&half, text).unwrap();
    let character = dir.path().join("character.jsonl");
    std::fs::write(&character, text.replace("\\ud83d", "\u{10F83D}")).unwrap();
    let snap = dir.path().join("exp.snap");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let (code, _, stderr) = run(&["snapshot", &s(&half), "--expect", &s(&snap), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let written = std::fs::read_to_string(&snap).unwrap();
    assert!(written.contains(r#""delta":"hi \ud83d""#), "{written}");
    assert!(!written.contains('\u{10F83D}'), "{written}");
    let (code, _, stderr) = run(&["snapshot", &s(&half), "--expect", &s(&snap)]);
    assert_eq!(code, 0, "the same stream matches: {stderr}");
    let (code, _, stderr) = run(&["snapshot", &s(&character), "--expect", &s(&snap)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot be told apart"), "{stderr}");
}

/// SSE the official client stops reading (two frames parted by CR LF, which it reads as one;
/// a frame over its 10 MiB buffer) is part of what a stream means, as a chunk it fails on
/// is: `check` fails such a stream and `compact` refuses it, yet `diff` said it meant the
/// same as the clean copy at every level, and a snapshot passed it.
#[test]
fn sse_the_client_stops_reading_is_a_difference_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ];
    let write = |name: &str, ends: &[&str]| {
        let text: String = events
            .iter()
            .zip(ends)
            .map(|(event, end)| format!("data: {event}{end}"))
            .collect();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let clean = write("clean.sse", &["\n\n"; 5]);
    let merged = write("merged.sse", &["\n\n", "\n\n", "\r\n\r\n", "\n\n", "\n\n"]);
    let big = {
        let delta = "x".repeat(11 << 20);
        let content =
            format!(r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"{delta}"}}"#);
        let split = |n: usize| {
            let half = format!(
                r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"{}"}}"#,
                &delta[..n]
            );
            let rest = format!(
                r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"{}"}}"#,
                &delta[n..]
            );
            (half, rest)
        };
        let (half, rest) = split(6 << 20);
        let frames = |middle: &[&str]| {
            let mut all = vec![events[0], events[1]];
            all.extend_from_slice(middle);
            all.extend_from_slice(&events[3..]);
            all.iter()
                .map(|e| format!("data: {e}\n\n"))
                .collect::<String>()
        };
        let one = dir.path().join("one-frame.sse");
        std::fs::write(&one, frames(&[&content])).unwrap();
        let two = dir.path().join("two-frames.sse");
        std::fs::write(&two, frames(&[&half, &rest])).unwrap();
        (one, two)
    };
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&clean, &merged, level), 1, "merged at {level}");
        assert_eq!(diff_code(&merged, &clean, level), 1, "merged at {level}");
        assert_eq!(
            diff_code(&big.0, &big.1, level),
            1,
            "over the buffer at {level}"
        );
    }
    let (_, stdout, _) = run(&["diff", clean.to_str().unwrap(), merged.to_str().unwrap()]);
    assert!(stdout.contains("client_fails"), "{stdout}");
    assert_eq!(snapshot_of_held_to(dir.path(), &clean, &merged), 1);
}

/// A plain value that reads as a token (`"msg-1"` in a state, naming nothing) is not the
/// token another stream's id became: a state that points at its message and one that points
/// at nothing meant the same at every level, and a snapshot passed the second.
#[test]
fn a_plain_value_of_a_tokens_form_is_no_id() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, id: &str| {
        let lines = [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
            format!(r#"{{"type":"TEXT_MESSAGE_START","messageId":"{id}","role":"assistant"}}"#),
            format!(r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"{id}","delta":"hi"}}"#),
            format!(r#"{{"type":"TEXT_MESSAGE_END","messageId":"{id}"}}"#),
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"focus":"msg-1"}}"#.to_owned(),
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned(),
        ];
        lines_file(dir.path(), name, &lines)
    };
    let named = write("named.jsonl", "msg-1");
    let plain = write("plain.jsonl", "a7f3c9e1-0b2d-4e5f-8a6b-1c2d3e4f5a6b");
    let again = write("again.jsonl", "b8e4d0f2-1c3e");
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&named, &plain, level), 1, "at {level}");
        assert_eq!(diff_code(&plain, &again, level), 0, "at {level}");
    }
    assert_eq!(snapshot_of_held_to(dir.path(), &named, &plain), 1);
}

/// Numbers compare by their exact value: two integers past 2^53 that differ are a difference
/// (compared as doubles, they were the same, though `fold` and the snapshot file hold them
/// apart), and `1.0` is still `1`.
#[test]
fn numbers_compare_by_their_exact_value() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, value: &str| {
        let lines = [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"count":0}}"#.to_owned(),
            format!(
                r#"{{"type":"STATE_DELTA","delta":[{{"op":"replace","path":"/count","value":{value}}}]}}"#
            ),
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned(),
        ];
        lines_file(dir.path(), name, &lines)
    };
    let a = write("a.jsonl", "12345678901234567890");
    let b = write("b.jsonl", "12345678901234567891");
    let one = write("one.jsonl", "1");
    let one_point_zero = write("one-point-zero.jsonl", "1.0");
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&a, &b, level), 1, "at {level}");
        assert_eq!(diff_code(&one, &one_point_zero, level), 0, "at {level}");
    }
    assert_eq!(snapshot_of_held_to(dir.path(), &a, &b), 1);
}

/// How a message's text was split does not matter at the `compact` level whatever its length:
/// compaction writes a message over an eighth of the line cap (8 MiB) in several events, and a
/// comparison that kept them found one 9 MiB delta and the same text in two to differ.
#[test]
fn a_long_message_split_another_way_means_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let text = "y".repeat(9 << 20);
    let write = |name: &str, parts: &[&str]| {
        let mut lines = vec![r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned()];
        lines.push(r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#.into());
        for part in parts {
            lines.push(format!(
                r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"{part}"}}"#
            ));
        }
        lines.push(r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#.into());
        lines.push(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.into());
        lines_file(dir.path(), name, &lines)
    };
    let one = write("one.jsonl", &[&text]);
    let two = write("two.jsonl", &[&text[..5 << 20], &text[5 << 20..]]);
    let (code, stdout, stderr) = run(&["diff", one.to_str().unwrap(), two.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(snapshot_of_held_to(dir.path(), &one, &two), 0);
}

/// An empty pendingToolCallIds says nothing (a client derives the pending calls from the
/// stream either way): a success outcome with it, one without it and no outcome mean the same
/// at every level, and a snapshot stored with a plain success outcome still holds.
#[test]
fn an_empty_pending_list_is_no_list() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, outcome: &str| {
        let lines = [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
            format!(r#"{{"type":"RUN_FINISHED","threadId":"t","runId":"r"{outcome}}}"#),
        ];
        lines_file(dir.path(), name, &lines)
    };
    let empty = write(
        "empty.jsonl",
        r#","outcome":{"type":"success","pendingToolCallIds":[]}"#,
    );
    let success = write("success.jsonl", r#","outcome":{"type":"success"}"#);
    let none = write("none.jsonl", "");
    let pending = write(
        "pending.jsonl",
        r#","outcome":{"type":"success","pendingToolCallIds":["c"]}"#,
    );
    for level in ["events", "compact", "fold"] {
        assert_eq!(diff_code(&empty, &success, level), 0, "at {level}");
        assert_eq!(diff_code(&empty, &none, level), 0, "at {level}");
        assert_eq!(diff_code(&empty, &pending, level), 1, "at {level}");
    }
    // A fold-level snapshot written before: its runs hold the plain success outcome.
    let snap = dir.path().join("old.snap");
    std::fs::write(
        &snap,
        "# agui-lens snapshot 1\n# level: fold\n# ids: payloads\n# fold: runs\n{\"state\":null}\n{\"runs\":[{\"outcome\":{\"type\":\"success\"},\"status\":\"finished\"}]}\n",
    )
    .unwrap();
    for stream in [&empty, &none] {
        let (code, stdout, _) = run(&[
            "snapshot",
            stream.to_str().unwrap(),
            "--expect",
            snap.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stdout}");
    }
    // A call left pending: an outcome that states the very list a client derives ends the
    // same for the client as no list (what was sent differs, event by event).
    let called = |name: &str, outcome: &str| {
        let lines = [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
            r#"{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"confirm"}"#.to_owned(),
            r#"{"type":"TOOL_CALL_END","toolCallId":"c"}"#.to_owned(),
            format!(r#"{{"type":"RUN_FINISHED","threadId":"t","runId":"r"{outcome}}}"#),
        ];
        lines_file(dir.path(), name, &lines)
    };
    let stated = called(
        "stated.jsonl",
        r#","outcome":{"type":"success","pendingToolCallIds":["c"]}"#,
    );
    let derived = called("derived.jsonl", "");
    let wrong = called(
        "wrong.jsonl",
        r#","outcome":{"type":"success","pendingToolCallIds":["d"]}"#,
    );
    assert_eq!(diff_code(&stated, &derived, "fold"), 0);
    assert_eq!(diff_code(&stated, &derived, "events"), 1);
    assert_eq!(diff_code(&wrong, &derived, "fold"), 1);
}

/// A stream the official client rejects part way (its `verifyEvents`: content after a
/// message's END, a second END, an event after RUN_FINISHED) fails the run there, whatever
/// its events would fold to: at the fold level that is an item of the stream compared, so
/// such a stream does not compare the same as the clean one (a fold-level snapshot of the
/// clean stream passed it).
#[test]
fn a_stream_the_client_rejects_differs_at_the_fold_level() {
    let dir = tempfile::tempdir().unwrap();
    let clean = [
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"Bye"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m2"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
    ];
    let write = |name: &str, lines: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let good = write("good.jsonl", &clean);
    let with = |at: usize, line: &'static str| {
        let mut lines = clean.to_vec();
        lines.insert(at, line);
        lines
    };
    let broken = [
        (
            "late-content.jsonl",
            with(
                4,
                r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":" again"}"#,
            ),
        ),
        (
            "second-end.jsonl",
            with(4, r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#),
        ),
        (
            "after-finish.jsonl",
            with(8, r#"{"type":"CUSTOM","name":"late","value":1}"#),
        ),
    ];
    assert_eq!(diff_code(&good, &good, "fold"), 0);
    for (name, lines) in &broken {
        let bad = write(name, lines);
        let (code, stdout, _) = run(&[
            "diff",
            good.to_str().unwrap(),
            bad.to_str().unwrap(),
            "--level",
            "fold",
        ]);
        assert_eq!(code, 1, "{name}: {stdout}");
        assert!(stdout.contains("client_fails"), "{name}: {stdout}");
        assert_eq!(diff_code(&bad, &bad, "fold"), 0, "{name}");
        // Read from stdin (once), it is the same stream.
        let piped = agui_lens()
            .args(["diff", good.to_str().unwrap(), "-", "--level", "fold"])
            .write_stdin(std::fs::read(&bad).unwrap())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&piped.stdout);
        assert_eq!(piped.status.code(), Some(1), "{name} from stdin: {stdout}");
        assert!(
            stdout.contains("client_fails"),
            "{name} from stdin: {stdout}"
        );
    }
    // A call reopened under another name: `check` fails it (the spec has a reopening START
    // repeat the first), but the official client reads on, and ends as with the call made once.
    let reopened = write(
        "reopened.jsonl",
        &[
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}"#,
            r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"first"}"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\":1}"}"#,
            r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
            r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"other"}"#,
            r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
        ],
    );
    let once = write(
        "once.jsonl",
        &[
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}"#,
            r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"other"}"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\":1}"}"#,
            r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
        ],
    );
    assert_eq!(diff_code(&reopened, &once, "fold"), 0);
    let snap = dir.path().join("fold.snap");
    let snap = snap.to_str().unwrap();
    let (code, _, stderr) = run(&[
        "snapshot",
        good.to_str().unwrap(),
        "--expect",
        snap,
        "--level",
        "fold",
        "--update",
        "--reason",
        "first",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let bad = dir.path().join("late-content.jsonl");
    let (code, stdout, _) = run(&["snapshot", bad.to_str().unwrap(), "--expect", snap]);
    assert_eq!(code, 1, "{stdout}");
}

/// A difference a person reviews is shown as it is: a bidi override (which shows text in
/// another order than it is) or an invisible character in a changed value is written as an
/// escape in `diff`'s and `snapshot`'s text, else the removed and added lines look alike.
#[test]
fn a_difference_hidden_by_invisible_characters_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |delta: &str| {
        vec![
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#.to_owned(),
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#.to_owned(),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": delta}).to_string(),
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#.to_owned(),
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#.to_owned(),
        ]
    };
    let plain = lines_file(dir.path(), "plain.jsonl", &stream("Pay 100 to account 42"));
    let cases = [
        ("\u{202e}", "Pay \u{202e}24 tnuocca ot 001\u{202c}"),
        ("\u{200b}", "Pay 100 to account 42\u{200b}"),
        ("\u{feff}", "Pay 100 to\u{feff} account 42"),
    ];
    for (hidden, delta) in cases {
        let escape = format!("\\u{{{:x}}}", hidden.chars().next().unwrap() as u32);
        let changed = lines_file(dir.path(), "changed.jsonl", &stream(delta));
        for level in ["events", "compact", "fold"] {
            let (code, stdout, _) = run(&[
                "diff",
                "--color",
                "never",
                "--level",
                level,
                plain.to_str().unwrap(),
                changed.to_str().unwrap(),
            ]);
            assert_eq!(code, 1, "{stdout}");
            assert!(
                !stdout.contains(hidden),
                "{level}: {escape} shown raw:\n{stdout}"
            );
            assert!(
                stdout.contains(&escape),
                "{level}: {escape} not shown:\n{stdout}"
            );
        }
        let snap = dir.path().join("expect.snap");
        let snap = snap.to_str().unwrap();
        let (code, _, stderr) = run(&[
            "snapshot",
            plain.to_str().unwrap(),
            "--expect",
            snap,
            "--update",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let (code, stdout, stderr) = run(&[
            "snapshot",
            changed.to_str().unwrap(),
            "--expect",
            snap,
            "--color",
            "never",
        ]);
        assert_eq!(code, 1, "{stdout}{stderr}");
        let shown = stdout + &stderr;
        assert!(
            !shown.contains(hidden),
            "snapshot: {escape} shown raw:\n{shown}"
        );
        assert!(
            shown.contains(&escape),
            "snapshot: {escape} not shown:\n{shown}"
        );
    }
}

/// A stream that ends inside a run with nothing that says it was cut (a body that ended
/// cleanly mid-run) is held to no snapshot, as `test` holds such an answer to none:
/// `snapshot --update` made half a stream the expectation, exit 0, with no word.
#[test]
fn half_a_stream_is_no_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let whole = std::fs::read_to_string(root().join("fixtures/valid/agui-sdk-full.jsonl")).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    std::fs::write(
        dir.join("half.jsonl"),
        lines[..lines.len() / 2].join("\n") + "\n",
    )
    .unwrap();
    std::fs::write(dir.join("whole.jsonl"), &whole).unwrap();
    let snapshot = |stream: &str, update: bool| {
        let mut cmd = agui_lens();
        cmd.current_dir(dir)
            .args(["snapshot", stream, "--expect", "e.snap"]);
        if update {
            cmd.arg("--update");
        }
        split(cmd.output().unwrap())
    };
    for update in [true, false] {
        let (code, _, stderr) = snapshot("half.jsonl", update);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("half.jsonl ends inside a run"), "{stderr}");
        assert!(!dir.join("e.snap").exists() && !dir.join("e.snap.new").exists());
    }
    let (code, _, stderr) = snapshot("whole.jsonl", true);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = snapshot("half.jsonl", false);
    assert_eq!(code, 1, "{stderr}");
    assert!(!dir.join("e.snap.new").exists(), "{stderr}");
    // Read once, from stdin or a FIFO, half a stream is told as it is compared (it was
    // written as the expectation, exit 0).
    let half = lines[..lines.len() / 2].join("\n") + "\n";
    let output = agui_lens()
        .current_dir(dir)
        .args(["snapshot", "-", "--expect", "piped.snap", "--update"])
        .write_stdin(half.clone())
        .output()
        .unwrap();
    let (code, _, stderr) = split(output);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("ends inside a run"), "{stderr}");
    assert!(!dir.join("piped.snap").exists() && !dir.join("piped.snap.new").exists());
    #[cfg(unix)]
    {
        let fifo = dir.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let writer = std::thread::spawn(move || std::fs::write(fifo, half).unwrap());
        let (code, _, stderr) = snapshot("fifo", true);
        writer.join().unwrap();
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("fifo ends inside a run"), "{stderr}");
        assert!(!dir.join("e.snap.new").exists(), "{stderr}");
        let (code, _, stderr) = snapshot("whole.jsonl", false);
        assert_eq!(code, 0, "the expectation stays as it was: {stderr}");
    }
}
