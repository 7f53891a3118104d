//! `agui-lens inspect`: the terminal view of real recordings, `--stats`, `--format json`, the
//! HTML report's caps and escaping (its rendering is tested in a browser, in `browser`).

use serde_json::Value;

use crate::common::{fixture_files, root, run};

const EVERYTHING: &str = "fixtures/inspect/everything.jsonl";
/// The encrypted value in EVERYTHING, which no output may print.
const SECRET: &str = "c2VjcmV0LXJlYXNvbmluZy1ibG9i";

fn inspect(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["inspect"];
    all.extend_from_slice(args);
    run(&all)
}

#[test]
fn terminal_view_of_recordings() {
    for stream in [
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "fixtures/recordings/copilotkit-full.jsonl",
        "fixtures/recordings/agui-sdk-full.jsonl",
        "fixtures/recordings/microsoft-agent-framework-tool-error.jsonl",
        EVERYTHING,
    ] {
        let (code, stdout, stderr) = inspect(&["--color", "never", stream]);
        assert!(stderr.is_empty(), "{stream}: {stderr}");
        let (check, _, _) = run(&["check", stream]);
        assert_eq!(code, check, "{stream}: inspect exits as check does");
        let name = stream.rsplit('/').next().unwrap();
        insta::assert_snapshot!(format!("inspect_{name}"), stdout);
    }
}

#[test]
fn long_text_is_folded_unless_full() {
    let (_, folded, _) = inspect(&["--color", "never", EVERYTHING]);
    assert!(
        folded.contains("more characters (--full shows all)"),
        "{folded}"
    );
    assert!(!folded.contains("Paragraph 8"));
    let (_, full, _) = inspect(&["--color", "never", "--full", EVERYTHING]);
    assert!(!full.contains("--full shows all"), "{full}");
    assert!(full.contains("Paragraph 8: the agent explains its plan"));
}

#[test]
fn encrypted_values_are_never_printed() {
    let text = std::fs::read_to_string(root().join(EVERYTHING)).unwrap();
    assert!(text.contains(SECRET), "the fixture holds the value");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    for args in [
        vec!["--color", "never", "--full", EVERYTHING],
        vec!["--format", "json", EVERYTHING],
        vec!["--stats", "--full", EVERYTHING],
        vec!["--html", page.to_str().unwrap(), EVERYTHING],
    ] {
        let (_, stdout, stderr) = inspect(&args);
        assert!(!stdout.contains(SECRET), "{args:?}");
        assert!(!stderr.contains(SECRET), "{args:?}");
    }
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains(SECRET));
    let (_, stdout, _) = inspect(&["--color", "never", EVERYTHING]);
    assert!(stdout.contains("encrypted value: present (not shown)"));
}

#[test]
fn diagnostics_are_coloured_by_severity() {
    let (_, stdout, _) = inspect(&["--color", "always", EVERYTHING]);
    assert!(
        stdout.contains("\u{1b}[1;31merror[state/patch-failed]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\u{1b}[1mnote[lifecycle/open-at-error]"),
        "{stdout}"
    );
    let (_, warned, _) = inspect(&[
        "--color",
        "always",
        "fixtures/invalid/tool-args/empty-arguments.jsonl",
    ]);
    assert!(
        warned.contains("\u{1b}[1;33mwarning[tool-args/empty-arguments]"),
        "{warned}"
    );
    let (_, plain, _) = inspect(&["--color", "never", EVERYTHING]);
    assert!(!plain.contains('\u{1b}'));
}

#[test]
fn sse_and_jsonl_captures_inspect_alike() {
    let mut pairs = 0;
    for jsonl in fixture_files("fixtures/recordings") {
        let jsonl = jsonl.to_string_lossy().into_owned();
        let Some(stem) = jsonl.strip_suffix(".jsonl") else {
            continue;
        };
        if stem.ends_with("-invalid") {
            continue;
        }
        let sse = format!("{stem}.sse");
        let (_, a, _) = inspect(&["--color", "never", &jsonl]);
        let (_, b, _) = inspect(&["--color", "never", &sse]);
        let strip = |text: &str, path: &str| {
            // Paths, byte counts and source lines differ between the two framings, and so
            // do findings of SSE framing (CR LF the official client cannot split at).
            text.replace(path, "PATH")
                .replace(", 1 error,", ", 0 errors,")
                .lines()
                .filter(|l| !l.trim_start().starts_with("events "))
                .filter(|l| {
                    !l.contains("framing/sse-frames-merged")
                        && !l.contains("help: end every SSE line")
                })
                .map(|l| l.split(" (line ").next().unwrap().to_owned())
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&a, &jsonl), strip(&b, &sse), "{stem}");
        pairs += 1;
    }
    assert!(pairs >= 20);
}

#[test]
fn stats() {
    let (code, stdout, stderr) =
        inspect(&["--stats", "fixtures/recordings/pydantic-ai-full.jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("inspect_stats", stdout);
    let (_, json, _) = inspect(&["--stats", "--format", "json", EVERYTHING]);
    let stats: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(stats["events"], 37);
    let types = stats["types"].as_array().unwrap();
    let counted: u64 = types.iter().map(|t| t["events"].as_u64().unwrap()).sum();
    assert_eq!(counted, 37);
    let bytes: u64 = types.iter().map(|t| t["bytes"].as_u64().unwrap()).sum();
    assert_eq!(bytes, stats["bytes"].as_u64().unwrap());
    // The long text delta is the largest event; streams tie on deltas and go earliest first.
    assert_eq!(stats["largest"][0]["event_index"], 24);
    assert_eq!(stats["largest"][1]["type"], "RUN_STARTED");
    let ids: Vec<&str> = stats["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r1", "c1", "m1", "ghost", "m2"]);
    assert_eq!(stats["runs"].as_array().unwrap().len(), 2);
    // The findings that decide the exit status are counted as `inspect --format json` counts
    // them (the statistics' JSON held no count: only stderr said them).
    let (_, view, _) = inspect(&["--format", "json", EVERYTHING]);
    let view: Value = serde_json::from_str(&view).unwrap();
    assert!(view["errors"].as_u64().unwrap() + view["warnings"].as_u64().unwrap() > 0);
    assert_eq!(stats["errors"], view["errors"]);
    assert_eq!(stats["warnings"], view["warnings"]);
}

#[test]
fn json_is_the_same_as_data() {
    let warned = ["--warn", "lifecycle/open-at-error"];
    let (code, stdout, _) = inspect(&[&["--format", "json", EVERYTHING][..], &warned].concat());
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (doc["errors"].as_u64(), doc["warnings"].as_u64()),
        (Some(3), Some(1))
    );
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "finished");
    assert_eq!(run["duration_ms"], 480);
    assert_eq!(run["first_event_after_ms"], 40);
    assert_eq!(run["usage"][0]["totalTokens"], 1540);
    let kinds: Vec<&str> = run["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "state_change",
            "message",
            "reasoning",
            "step",
            "subagent",
            "tool_call",
            "state_change",
            "subagent",
            "activity",
            "message",
            "state_change",
            "message",
            "state_change"
        ]
    );
    let tool = &run["items"][5];
    assert_eq!(tool["subagent"], "sub-1");
    assert_eq!(tool["arguments"], r#"{"q": "AG-UI protocol"}"#);
    assert_eq!(tool["result"]["event"], 14);
    let failed = &run["items"][10];
    assert_eq!(failed["applied"], false);
    assert_eq!(
        failed["diagnostics"][0]["rule"], "state/patch-failed",
        "findings sit on the item they concern"
    );
    let change = &run["items"][6]["changes"][1];
    assert_eq!(change["path"], "/plan/0");
    assert!(change.get("old").is_none(), "absent, not null: {change}");
    assert_eq!(doc["runs"][1]["error"]["code"], "OVERLOADED");
}

#[test]
fn exit_codes() {
    assert_eq!(inspect(&["fixtures/recordings/agui-sdk-full.jsonl"]).0, 0);
    assert_eq!(inspect(&[EVERYTHING]).0, 1, "errors found");
    let warns = "fixtures/recordings/microsoft-agent-framework-full.jsonl";
    assert_eq!(inspect(&[warns]).0, 0);
    assert_eq!(inspect(&["--deny-warnings", warns]).0, 1);
    assert_eq!(
        inspect(&[
            "--allow",
            "state/*",
            "--allow",
            "pairing/*",
            "--allow",
            "lifecycle/*",
            "--allow",
            "tool-args/*",
            EVERYTHING
        ])
        .0,
        0
    );
    let (code, _, stderr) = inspect(&["no/such.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such.jsonl"), "{stderr}");
    let (code, _, _) = inspect(&["--stats", "--html", "x.html", EVERYTHING]);
    assert_eq!(code, 2, "--html and --stats exclude each other");
}

#[test]
fn html_escapes_what_it_embeds_and_says_what_it_capped() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let (_, _, stderr) = inspect(&["--html", page.to_str().unwrap(), EVERYTHING]);
    assert_eq!(
        stderr,
        format!(
            "wrote {}: 37 events, 3 errors, 0 warnings\n",
            page.display()
        )
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("</script>").count(), 2, "only the page's own");
    assert_eq!(html.matches("<script").count(), 2);
    assert!(!html.contains("<!-- <b>"));
    assert!(html.contains("&lt;/script&gt;&lt;!-- &lt;b&gt;not bold&lt;/b&gt; &amp; more."));
    assert!(html.contains("Content-Security-Policy"));
    assert!(!html.contains("Capped"));
    // A stream longer than the table holds: the page says what it left out.
    let long = dir.path().join("long.jsonl");
    let mut text = String::from("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    for i in 0..10_050 {
        text.push_str(&format!(
            "{{\"type\":\"CUSTOM\",\"name\":\"tick\",\"value\":{i}}}\n"
        ));
    }
    text.push_str("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    std::fs::write(&long, text).unwrap();
    let (code, _, stderr) = inspect(&["--html", page.to_str().unwrap(), long.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(
            "Capped: the event table holds the first 10000 rows; 52 later events are left out."
        ),
        "{}",
        &html[..2000.min(html.len())]
    );
    assert_eq!(html.matches("<tr data-row=").count(), 10_000);
}

/// A tool call whose streamed arguments were flagged is marked in the conversation, which
/// shows what the client ended with.
#[test]
fn the_conversation_marks_tool_calls_whose_arguments_were_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let (code, _, stderr) = run(&[
        "inspect",
        "fixtures/invalid/tool-args/invalid-json.jsonl",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    let marked = html
        .split("<div class=\"tool-call\">")
        .nth(1)
        .and_then(|call| call.split("</div></div>").next())
        .unwrap_or_default();
    assert!(marked.contains("call-1"), "{marked}");
    assert!(
        marked.contains("<div class=\"flagged\">the streamed arguments were flagged: the arguments of tool call &quot;call-1&quot;"),
        "{marked}"
    );
    let (_, _, _) = run(&[
        "inspect",
        "fixtures/valid/pydantic-ai-full.jsonl",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(
        !std::fs::read_to_string(&page)
            .unwrap()
            .contains("class=\"flagged\"")
    );
}

/// Before many runs, the terminal view says how they ended and which have errors, so the
/// first screen is not only run headers.
#[test]
fn many_runs_are_summarised_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.jsonl");
    let mut text = String::new();
    for i in 0..12 {
        text.push_str(&format!(
            "{{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r{i}\"}}\n"
        ));
        if i == 7 {
            text.push_str("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"never-started\"}\n");
        }
        text.push_str(&format!(
            "{{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r{i}\"}}\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    let (code, stdout, _) = inspect(&[path.to_str().unwrap()]);
    assert_eq!(code, 1);
    let top: Vec<&str> = stdout.lines().take(3).collect();
    assert_eq!(top[1], "  runs: 12 finished", "{stdout}");
    assert!(top[2].starts_with("  1 run with errors: r7 ("), "{stdout}");
    // A few runs need no overview.
    let (_, stdout, _) = inspect(&["fixtures/recordings/agui-sdk-full.jsonl"]);
    assert!(!stdout.contains("  runs: "), "{stdout}");
}

/// A capture whose first RUN_STARTED does not say what the client held (LangGraph's) gets a
/// note on where the user's prompt then stands in the conversation; one that does, none.
#[test]
fn the_conversation_says_when_the_history_before_the_stream_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let stream = dir.path().join("unechoed.jsonl");
    std::fs::write(
        &stream,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Hello!"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_END","messageId":"a1"}"#,
            "\n",
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","content":"Hello!"}]}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let note = "The capture does not say what the client held before its first run";
    let (code, _, stderr) = run(&[
        "inspect",
        stream.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read_to_string(&page).unwrap().contains(note));
    let echoed = "fixtures/recordings/copilotkit-full-v1.jsonl";
    let (_, _, _) = run(&["inspect", echoed, "--html", page.to_str().unwrap()]);
    assert!(!std::fs::read_to_string(&page).unwrap().contains(note));
}

/// Content deltas are taken as text, not built events, except where a chunk stream is open
/// (the delta then closes it, as a built event would): both ways show the same items. This
/// fixture mixes them, with deltas before any run, under a subagent, and for streams never
/// started.
#[test]
fn plain_deltas_and_chunks_inspect_alike() {
    let stream = "fixtures/inspect/plain-deltas-around-chunks.jsonl";
    let (code, stdout, _) = inspect(&["--color", "never", stream]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("inspect_plain_deltas_around_chunks", stdout);
    let (_, json, _) = inspect(&["--format", "json", stream]);
    let json: Value = serde_json::from_str(&json).unwrap();
    let texts: Vec<&str> = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["items"].as_array().unwrap())
        .filter_map(|i| i["text"].as_str().or(i["arguments"].as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            "before any run",
            "chunk plain after chunk",
            "sub <b>encryptedValue</b> & \u{2028}",
            "{\"a\":",
            "1}",
            "think",
            "after run"
        ]
    );
}

/// A stream of 100 runs, 41 of them with a finding on one of their items: the first 8 and last
/// 8 runs and the first 32 other flagged runs are shown item by item, the others summarised.
fn long_stream() -> String {
    let mut text = String::new();
    for i in 0..100 {
        let run = format!("\"threadId\":\"t\",\"runId\":\"r{i}\"");
        text.push_str(&format!(
            "{{\"type\":\"RUN_STARTED\",{run},\"protocolVersion\":\"1.0\"}}\n"
        ));
        text.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m{i}\",\"role\":\"assistant\"}}\n"
        ));
        for word in ["one ", "two ", "three"] {
            text.push_str(&format!(
                "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m{i}\",\"delta\":\"{word}\"}}\n"
            ));
        }
        text.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m{i}\"}}\n"
        ));
        if i >= 10 && i % 2 == 0 && i < 92 {
            text.push_str(&format!(
                "{{\"type\":\"TOOL_CALL_ARGS\",\"toolCallId\":\"c{i}\",\"delta\":\"{{}}\"}}\n"
            ));
        }
        text.push_str(&format!("{{\"type\":\"RUN_FINISHED\",{run}}}\n"));
    }
    text
}

/// Every finding, as (rule, event, message), sorted: from wherever an inspection keeps it.
fn all_findings(json: &Value) -> Vec<(String, u64, String)> {
    let mut all = Vec::new();
    let mut add = |list: &Value| {
        for d in list.as_array().unwrap() {
            all.push((
                d["rule"].as_str().unwrap().to_owned(),
                d["event_index"].as_u64().unwrap_or(u64::MAX),
                d["message"].as_str().unwrap().to_owned(),
            ));
        }
    };
    add(&json["diagnostics"]);
    for run in json["runs"].as_array().unwrap() {
        add(&run["diagnostics"]);
        for item in run["items"].as_array().unwrap() {
            add(&item["diagnostics"]);
        }
    }
    all.sort();
    all
}

#[test]
fn long_streams_are_summarised_and_lose_no_finding() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, long_stream()).unwrap();
    let path = path.to_str().unwrap();

    let (code, full, _) = inspect(&["--format", "json", "--full", path]);
    assert_eq!(code, 1);
    let full: Value = serde_json::from_str(&full).unwrap();
    let (code, summed, _) = inspect(&["--format", "json", path]);
    assert_eq!(code, 1);
    let summed: Value = serde_json::from_str(&summed).unwrap();

    // Nothing is lost: the same findings, the same runs, every item counted.
    let findings = all_findings(&full);
    assert_eq!(findings.len(), 41, "{findings:?}");
    assert_eq!(all_findings(&summed), findings);
    let (runs, full_runs) = (
        summed["runs"].as_array().unwrap(),
        full["runs"].as_array().unwrap(),
    );
    assert_eq!(runs.len(), 100);
    assert_eq!(full_runs.len(), 100);
    assert_eq!(summed["runs_summarised"], 100 - 8 - 8 - 32);
    assert_eq!(full["runs_summarised"], 0);
    for (i, (run, whole)) in runs.iter().zip(full_runs).enumerate() {
        let items = whole["items"].as_array().unwrap().len() as u64;
        match run.get("items_left_out") {
            Some(left) => {
                assert_eq!(left.as_u64(), Some(items), "run {i}");
                assert!(run["items"].as_array().unwrap().is_empty(), "run {i}");
                // Which runs: not the first or last 8, and not the first 32 flagged others
                // (runs 10, 12, … 72).
                assert!((8..92).contains(&i), "run {i} summarised");
                assert!(
                    !(i % 2 == 0 && (10..=72).contains(&i)),
                    "run {i} summarised"
                );
            }
            None => assert_eq!(run["items"], whole["items"], "run {i}"),
        }
        assert_eq!(run["events"], whole["events"], "run {i}");
    }

    // The statistics count every stream, summarised or not.
    let (_, stats, _) = inspect(&["--stats", "--format", "json", path]);
    let (_, full_stats, _) = inspect(&["--stats", "--format", "json", "--full", path]);
    assert_eq!(stats, full_stats);

    // What the terminal shows: summarised runs say so, and how to see them.
    let (_, human, _) = inspect(&["--color", "never", path]);
    let (_, human_full, _) = inspect(&["--color", "never", "--full", path]);
    assert!(human.len() < human_full.len());
    assert_eq!(
        human.matches("  why ").count(),
        1,
        "the reason is given once"
    );
    assert!(!human_full.contains("summarised"));
    let blocks: Vec<&str> = human
        .split("\n\n")
        .filter(|b| b.contains("not shown"))
        .collect();
    insta::assert_snapshot!("inspect_summarised_runs", blocks.join("\n\n"));

    // The HTML report says so too, and every finding is still listed.
    let page = dir.path().join("report.html");
    let full_page = dir.path().join("full.html");
    let (_, _, stderr) = inspect(&["--html", page.to_str().unwrap(), path]);
    assert!(stderr.contains("41 errors"), "{stderr}");
    inspect(&["--full", "--html", full_page.to_str().unwrap(), path]);
    let page = std::fs::read_to_string(&page).unwrap();
    let full_page = std::fs::read_to_string(&full_page).unwrap();
    assert!(page.contains("Summarised: 52 runs are not drawn item by item"));
    let problems = |page: &str| {
        page.split("<section id=\"problems\"")
            .nth(1)
            .unwrap()
            .to_owned()
    };
    assert_eq!(problems(&page), problems(&full_page));
    assert_eq!(
        problems(&page)
            .matches("TOOL_CALL_ARGS for tool call")
            .count(),
        41
    );
}

/// A run whose every patch inserts at the front of a long list without ids changes every
/// element each time: what inspect keeps of those changed paths is bounded per run, and each
/// view says how many it did not keep, `--full` included.
#[test]
fn a_run_of_shifting_patches_keeps_a_bounded_list_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("shifting.jsonl");
    let mut lines = vec![
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
        format!(
            r#"{{"type":"STATE_SNAPSHOT","snapshot":{{"log":{:?}}}}}"#,
            (0..1500).collect::<Vec<u32>>()
        ),
    ];
    lines.extend((0..30).map(|n| {
        format!(
            r#"{{"type":"STATE_DELTA","delta":[{{"op":"add","path":"/log/0","value":{}}}]}}"#,
            10_000 + n
        )
    }));
    lines.push(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned());
    std::fs::write(&stream, lines.join("\n") + "\n").unwrap();
    let stream = stream.to_str().unwrap();

    let (code, json, _) = inspect(&["--format", "json", stream]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&json).unwrap();
    let changes: Vec<(usize, u64)> = json["runs"][0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["source"] == "delta")
        .map(|item| {
            (
                item["changes"].as_array().unwrap().len(),
                item["more"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(changes.len(), 30);
    // Each patch moves every element along one place and adds one: all are counted.
    for (n, (kept, more)) in changes.iter().enumerate() {
        assert_eq!(*kept as u64 + more, 1501 + n as u64, "patch {n}");
    }
    let kept: usize = changes.iter().map(|(kept, _)| kept).sum();
    assert!(kept < 20_000 && changes[29].0 == 0, "{changes:?}");

    for args in [vec!["--color", "never"], vec!["--color", "never", "--full"]] {
        let mut args = args;
        args.push(stream);
        let (_, text, _) = inspect(&args);
        assert!(
            text.contains("… 1530 more changed paths not kept"),
            "{args:?}"
        );
    }
    let (_, folded, _) = inspect(&["--color", "never", stream]);
    assert!(folded.contains("more changed paths (--full shows them)"));
    let page = dir.path().join("r.html");
    let (code, _, _) = inspect(&["--html", page.to_str().unwrap(), stream]);
    assert_eq!(code, 0);
    assert!(std::fs::metadata(&page).unwrap().len() > 0);
}

/// An input that could not be read to its end (a truncated gzip) is said so in every output,
/// not only on stderr: the JSON, the statistics and the page read like a run cut off by its
/// agent, where the file itself was damaged.
#[test]
fn a_read_failure_is_in_every_output() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.jsonl.gz");
    let stream = std::fs::read(root().join("fixtures/recordings/copilotkit-full.jsonl")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&stream).unwrap();
    let gz = gz.finish().unwrap();
    std::fs::write(&path, &gz[..gz.len() * 2 / 3]).unwrap();
    let name = path.to_str().unwrap();
    let page = dir.path().join("page.html");
    for args in [
        &["--format", "json"][..],
        &["--stats", "--format", "json"],
        &["--stats"],
        &["--color", "never"],
        &["--html", page.to_str().unwrap()],
    ] {
        let mut all = args.to_vec();
        all.push(name);
        let (code, stdout, stderr) = inspect(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        let shown = if args[0] == "--html" {
            std::fs::read_to_string(&page).unwrap()
        } else {
            stdout
        };
        assert!(shown.contains("gzip data ends early"), "{args:?}: {shown}");
        if args.last() == Some(&"json") {
            let doc: Value = serde_json::from_str(&shown).unwrap();
            assert!(doc["failure"].as_str().unwrap().contains("gzip"), "{doc}");
        }
    }
}

/// A browser capture's call, as a page makes one: `request` the RunAgentInput sent, `events`
/// the stream that answered it; `failure` what the browser says ended it early.
fn capture_entry(request: &Value, events: &[Value], failure: Option<&str>) -> Value {
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    let mut response = serde_json::json!({"status": 200, "statusText": "OK",
        "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
        "content": {"size": body.len(), "mimeType": "text/event-stream", "text": body}});
    if let Some(failure) = failure {
        response["_failureText"] = failure.into();
    }
    serde_json::json!({"startedDateTime": "2026-11-29T06:00:00.000Z", "time": 40,
        "request": {"method": "POST", "url": "http://127.0.0.1:9/agent",
                    "headers": [{"name": "Accept", "value": "text/event-stream"}],
                    "postData": {"mimeType": "application/json", "text": request.to_string()}},
        "response": response})
}

/// `inspect` holds a browser capture's calls to all that `check` holds them to: the run ids
/// the request asked for, what a request owes the turn before it on the thread, the
/// connection the browser says it lost. It held the request to its schema only, and called
/// a capture `check` fails "0 errors" (exit 0), in every format.
#[test]
fn a_browser_capture_is_inspected_with_every_finding_check_makes() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let tools = json!([{"name": "change_background", "description": "x",
        "parameters": {"type": "object", "properties": {"color": {"type": "string"}}}}]);
    let request = |run: &str, state: Value, messages: Value| {
        json!({"threadId": "T", "runId": run, "protocolVersion": "1.1", "state": state,
               "messages": messages, "tools": tools, "context": [], "forwardedProps": {}})
    };
    let started = |run: &str| json!({"type": "RUN_STARTED", "threadId": "T", "runId": run});
    let finished = |run: &str| json!({"type": "RUN_FINISHED", "threadId": "T", "runId": run});
    let hi = json!([{"id": "u1", "role": "user", "content": "hi"}]);
    let har = |entries: Vec<Value>| json!({"log": {"version": "1.2", "entries": entries}});
    // The stream names another run than the one asked for.
    let runid = har(vec![capture_entry(
        &request("OTHER", json!({}), hi.clone()),
        &[started("R1"), finished("R1")],
        None,
    )]);
    // The first call leaves a frontend tool call for the page; the second does not answer
    // it, asks for the same run again and sends another state than the first one left.
    let thread = har(vec![
        capture_entry(
            &request("R1", json!({}), hi.clone()),
            &[
                started("R1"),
                json!({"type": "TOOL_CALL_START", "toolCallId": "c1",
                       "toolCallName": "change_background", "parentMessageId": "a1"}),
                json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"color\":\"red\"}"}),
                json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
                finished("R1"),
            ],
            None,
        ),
        capture_entry(
            &request(
                "R1",
                json!({"x": 1}),
                json!([{"id": "u1", "role": "user", "content": "hi"},
                       {"id": "u2", "role": "user", "content": "and?"}]),
            ),
            &[started("R1"), finished("R1")],
            None,
        ),
    ]);
    // The browser lost the connection in the middle of the run.
    let lost = har(vec![capture_entry(
        &request("R1", json!({}), hi.clone()),
        &[started("R1")],
        Some("net::ERR_INCOMPLETE_CHUNKED_ENCODING"),
    )]);
    for (name, capture) in [("runid", &runid), ("thread", &thread), ("lost", &lost)] {
        std::fs::write(dir.path().join(format!("{name}.har")), capture.to_string()).unwrap();
    }
    let runid = dir.path().join("runid.har");
    let thread = dir.path().join("thread.har");
    let lost = dir.path().join("lost.har");
    let second = format!("{}#1", thread.display());
    let page = dir.path().join("page.html");
    for (input, entry) in [
        (runid.to_str().unwrap(), None),
        (second.as_str(), None),
        (thread.to_str().unwrap(), Some("1")),
        (lost.to_str().unwrap(), None),
    ] {
        let mut args = vec![input];
        if let Some(entry) = entry {
            args.extend(["--entry", entry]);
        }
        let (checked, stdout, stderr) = run(&[&["check", "--format", "json"][..], &args].concat());
        let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
        let mut rules: Vec<String> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["rule"].as_str().unwrap().to_owned())
            .collect();
        rules.sort();
        assert_eq!(checked, 1, "{input}: {stdout}");
        assert!(
            rules
                .iter()
                .any(|r| r.starts_with("request/") || r.starts_with("transport/")),
            "{input}: {rules:?}"
        );
        let (code, stdout, stderr) = inspect(&[&["--format", "json"][..], &args].concat());
        assert_eq!(code, checked, "{input}: {stdout}{stderr}");
        let inspected: Value = serde_json::from_str(&stdout).unwrap();
        let found: Vec<String> = all_findings(&inspected).into_iter().map(|f| f.0).collect();
        assert_eq!(found, rules, "{input}");
        // The terminal view and the page say as much.
        let (code, stdout, _) = inspect(&[&["--color", "never"][..], &args].concat());
        assert_eq!(code, checked, "{input}: {stdout}");
        for rule in &rules {
            assert!(
                stdout.contains(rule.as_str()),
                "{input}: {rule} in {stdout}"
            );
        }
        let html = ["--html", page.to_str().unwrap()];
        let (code, _, stderr) = inspect(&[&html[..], &args].concat());
        assert_eq!(code, checked, "{input}: {stderr}");
        let written = std::fs::read_to_string(&page).unwrap();
        for rule in &rules {
            assert!(
                written.contains(rule.as_str()),
                "{input}: {rule} on the page"
            );
        }
    }
}

/// What a stream holds that a terminal would act on (an escape sequence that clears the
/// screen, moves the cursor up over the findings, retitles the window or hides text; a
/// carriage return; a bidi override) is written as escapes by the terminal view, as `check`
/// writes it, coloured or not. It went to the terminal raw: a message's text could erase the
/// errors printed above it.
#[test]
fn the_terminal_view_escapes_what_a_terminal_would_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.jsonl");
    let events = [
        r#"{"type":"RUN_STARTED","threadId":"t\u001b[31mRED","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m\u001b]0;pwned\u0007","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u001b]0;pwned\u0007","delta":"clear\u001b[2J\u001b[Hscreen \r over \u202egnp.exe\u202c \b\b"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m\u001b]0;pwned\u0007"}"#,
        r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"x\u001b[8mhidden"}"#,
        r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
        r#"{"type":"RUN_ERROR","message":"\u001b[5A\u001b[J all good"}"#,
    ];
    std::fs::write(&path, events.join("\n") + "\n").unwrap();
    for color in ["never", "always"] {
        let (code, stdout, stderr) = inspect(&[path.to_str().unwrap(), "--color", color]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        for hostile in [
            "\u{1b}[31mRED",
            "\u{1b}]0",
            "\u{1b}[2J",
            "\u{1b}[8m",
            "\u{1b}[5A",
            "\r",
            "\u{8}",
            "\u{202e}",
        ] {
            assert!(
                !stdout.contains(hostile),
                "{color}: {hostile:?} in {stdout:?}"
            );
        }
        for escaped in [
            "\\x1b[31mRED",
            "\\x1b[2J",
            "\\x1b[8mhidden",
            "\\x1b[5A",
            "\\u{202e}",
        ] {
            assert!(
                stdout.contains(escaped),
                "{color}: {escaped} not in {stdout}"
            );
        }
        if color == "always" {
            assert!(
                stdout.contains("\u{1b}[1m"),
                "{color}: its own colours are kept: {stdout:?}"
            );
        }
    }
    // The statistics name the stream's types and ids; `check` names the event's type.
    let odd = dir.path().join("odd.jsonl");
    std::fs::write(
        &odd,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t\u001b[31mRED","runId":"r\u001b[2J"}"#,
            "\n",
            r#"{"type":"X\u001b[2J","a":1}"#,
            "\n"
        ),
    )
    .unwrap();
    let (_, stats, _) = inspect(&[odd.to_str().unwrap(), "--stats"]);
    let (_, checked, _) = run(&["check", odd.to_str().unwrap()]);
    for (what, out) in [("stats", &stats), ("check", &checked)] {
        assert!(!out.contains('\u{1b}'), "{what}: {out:?}");
        assert!(out.contains("X\\x1b[2J"), "{what}: {out}");
    }
}

/// An emoji a JavaScript agent cut in two across deltas (`"smile \ud83d"`, `"\ude00 done"`)
/// is shown as a client shows it, and as `fold` gives it: whole, in the terminal, the JSON and
/// the page; a half nothing joins is its escape, as `fold` writes it. `inspect` showed each
/// half as U+FFFD ("smile �� done").
#[test]
fn an_emoji_cut_in_two_across_deltas_is_shown_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("split.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"smile \ud83d"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ude00 done"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":" lone \ud83d!"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n",
        ),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    // (JSON a strict parser refuses, for the half: compared as text.)
    let (_, folded, _) = run(&["fold", path]);
    let content = "smile 😀 done lone \\ud83d!";
    assert!(
        folded.contains(&format!("\"content\": \"{content}\"")),
        "{folded}"
    );
    let (_, json, _) = inspect(&[path, "--format", "json"]);
    assert!(json.contains(&format!("\"text\": \"{content}\"")), "{json}");
    // Still said: the stream holds halves a strict parser refuses.
    assert!(json.contains("framing/lone-surrogate"), "{json}");
    let (_, terminal, _) = inspect(&[path, "--color", "never"]);
    assert!(
        terminal.contains("smile 😀 done lone \\ud83d!"),
        "{terminal}"
    );
    assert!(!terminal.contains('\u{fffd}'), "{terminal}");
    let page = dir.path().join("page.html");
    let (code, _, stderr) = inspect(&[path, "--html", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("smile 😀 done lone \\ud83d!"),
        "the conversation"
    );
    assert!(!html.contains('\u{fffd}'));
    assert!(!html.contains("\\ud83d\\ude00"), "the merged deltas");
}

/// Why an input could not be read names it, and may quote what it held: a file's name, a
/// browser capture's URL and the body of a call that failed. Those reached the terminal raw
/// (escape sequences, carriage returns, bidi overrides), in `check`'s verdicts and on stderr,
/// and in `inspect`'s error.
#[test]
fn why_an_input_could_not_be_read_is_written_as_a_terminal_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let walked = dir.path().join("walked");
    std::fs::create_dir(&walked).unwrap();
    std::os::unix::fs::symlink("/nowhere", walked.join("bad\u{1b}[31mX\rY\u{202e}.jsonl")).unwrap();
    std::fs::copy(root().join(EVERYTHING), walked.join("ok.jsonl")).unwrap();
    let har = dir.path().join("failed.har");
    let entry = serde_json::json!({
        "request": {"method": "POST", "url": "http://h/x\u{1b}]0;pwn\u{7}\r",
                    "postData": {"mimeType": "application/json",
                                 "text": r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#}},
        "response": {"status": 500, "statusText": "Oops",
                     "content": {"mimeType": "text/plain", "text": "err\u{1b}[2J\u{202e}gone"}}
    });
    std::fs::write(
        &har,
        serde_json::json!({"log": {"entries": [entry]}}).to_string(),
    )
    .unwrap();
    let empty = dir.path().join("none\u{1b}[31m\r.pb");
    std::fs::write(&empty, [0u8, 0]).unwrap();
    let named = dir.path().join("d\u{1b}[31m\u{202e}.jsonl");
    std::fs::copy(root().join(EVERYTHING), &named).unwrap();
    let other = root().join("fixtures/recordings/pydantic-ai-full.jsonl");
    for args in [
        vec!["check", walked.to_str().unwrap()],
        vec!["check", har.to_str().unwrap()],
        vec!["inspect", har.to_str().unwrap()],
        vec!["inspect", empty.to_str().unwrap()],
        vec!["compact", walked.to_str().unwrap(), "--in-place"],
        vec!["run", "ht\u{1b}[31mtp://x/\r", "--message", "hi"],
        vec!["diff", named.to_str().unwrap(), other.to_str().unwrap()],
    ] {
        for color in ["never", "always"] {
            let mut all = args.clone();
            if args[0] != "compact" {
                all.extend(["--color", color]);
            }
            let (code, stdout, stderr) = run(&all);
            // (compact leaves the link out, and passes.)
            assert!(
                code != 0 || args[0] == "compact",
                "{args:?}: {stdout}{stderr}"
            );
            let said = format!("{stdout}{stderr}");
            let raw = said.replace("\u{1b}[", "").contains('\u{1b}');
            assert!(
                !raw && !said.contains('\r') && !said.contains('\u{202e}'),
                "{args:?} {color}: {said:?}"
            );
            if color == "never" {
                assert!(!said.contains('\u{1b}'), "{args:?}: {said:?}");
            }
        }
    }
}

/// What a person cannot see, or takes for something else, is shown as an escape by every
/// view a person reads: an Arabic letter mark (a bidi control), a soft hyphen, a no-break
/// space, a line separator, a Hangul filler, a tag character; in `check` and `inspect`, in
/// GitHub's annotations (a log viewer acts on an escape sequence), and a carriage return in
/// a line that is no JSON (it was shown as a space).
#[test]
fn what_cannot_be_seen_is_shown_as_an_escape() {
    let dir = tempfile::tempdir().unwrap();
    let hidden = [
        '\u{061c}',
        '\u{00ad}',
        '\u{00a0}',
        '\u{2028}',
        '\u{3164}',
        '\u{e0001}',
        '\u{1b}',
    ];
    for c in hidden {
        let path = dir.path().join("hidden.jsonl");
        let id = format!("m{c}1");
        let lines = [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_owned(),
            serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": format!("a{c}b")})
                .to_string(),
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned(),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let escape = if (c as u32) < 0x100 {
            format!("\\x{:02x}", c as u32)
        } else {
            format!("\\u{{{:x}}}", c as u32)
        };
        let p = path.to_str().unwrap();
        for (what, args) in [
            ("check", vec!["check", p]),
            ("github", vec!["check", p, "--format", "github"]),
            ("inspect", vec!["inspect", p, "--color", "never"]),
        ] {
            let (code, stdout, _) = run(&args);
            assert_eq!(code, 1, "{what}: {stdout}");
            assert!(
                !stdout.contains(c),
                "{what}: {escape} shown raw: {stdout:?}"
            );
            assert!(
                stdout.contains(&escape),
                "{what}: {escape} not shown: {stdout}"
            );
        }
    }
    let path = dir.path().join("cr.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\nbad\revil\n",
    )
    .unwrap();
    let (code, stdout, _) = run(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("bad\\x0devil"), "{stdout}");
}

/// A run's error message (and an interrupt's reason) is the agent's: shown on its field's
/// line, a line break in it began a line of its own (`::error …`, a workflow command in a CI
/// log that prints `inspect`).
#[test]
fn an_agents_error_message_stays_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("failed.jsonl");
    std::fs::write(
        &stream,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"RUN_ERROR","message":"boom\n::error file=x,line=1::injected","code":"E\n::warning::x"}"#,
            "\n",
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = inspect(&[stream.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stdout.lines().any(|line| line.starts_with("::")),
        "{stdout}"
    );
    assert!(
        stdout.contains(r"boom\n::error file=x,line=1::injected (E\n::warning::x)"),
        "{stdout}"
    );
}

/// An input that cannot be read (missing, empty, no stream) gives `--format json` one
/// document saying why, as `check` and `diff` give: stdout was empty, and a program reading
/// it met a parse error.
#[test]
fn json_says_why_there_is_no_view() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a stream\n").unwrap();
    let missing = dir.path().join("missing.jsonl");
    for path in [&empty, &notes, &missing] {
        let path = path.to_str().unwrap();
        for stats in [false, true] {
            let mut args = vec![path, "--format", "json"];
            if stats {
                args.push("--stats");
            }
            let (code, stdout, stderr) = inspect(&args);
            assert_eq!(code, 2, "{path}: {stdout}{stderr}");
            let document: serde_json::Value = serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("{path} {stats}: {e}: {stdout:?} {stderr}"));
            assert_eq!(document["path"], path, "{document}");
            assert!(document["error"].as_str().is_some_and(|e| !e.is_empty()));
        }
    }
}
