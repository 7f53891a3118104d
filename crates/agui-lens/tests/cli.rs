//! The binary as a user meets it: exit codes, every output format, stdin, directories,
//! compressed input, configuration, and the informational commands.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{agui_lens, root, run, split};

const VALID: &str = "fixtures/valid/agui-sdk-full.jsonl";
const INVALID: &str = "fixtures/invalid/schema/violation.jsonl";
const WARNS: &str = "fixtures/invalid/schema/unknown-field.jsonl";

#[test]
fn exit_codes() {
    assert_eq!(run(&["check", VALID]).0, 0);
    assert_eq!(run(&["check", INVALID]).0, 1);
    assert_eq!(run(&["check", WARNS]).0, 0, "warnings alone pass");
    assert_eq!(run(&["check", "--deny-warnings", WARNS]).0, 1);
    assert_eq!(
        run(&[
            "check",
            "--allow",
            "pairing/*",
            "fixtures/invalid/pairing/text-message.jsonl"
        ])
        .0,
        0
    );
    let (code, _, stderr) = run(&["check", "no/such/file.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such/file.jsonl"), "{stderr}");
    let (code, _, stderr) = run(&["check", "--deny", "schema/nope", VALID]);
    assert_eq!(code, 2);
    assert!(stderr.contains("schema/nope"), "{stderr}");
    assert_eq!(run(&["check", "--format", "yaml", VALID]).0, 2, "bad flag");
    assert_eq!(run(&["frobnicate"]).0, 2, "unknown command");
}

#[test]
fn several_inputs_are_checked_independently_and_reported_in_order() {
    let (code, stdout, stderr) = run(&[
        "check",
        "--color",
        "never",
        INVALID,
        "no/such/file.jsonl",
        VALID,
    ]);
    assert_eq!(code, 2, "an unreadable input makes the run fail");
    assert!(stderr.contains("no/such/file.jsonl"));
    assert!(
        stdout.contains("violation.jsonl:3"),
        "the readable inputs were still checked"
    );
    // The summary counts what was read, and says what could not be.
    let summary = stdout.lines().last().unwrap();
    assert!(summary.starts_with("checked 2 files"), "{stdout}");
    assert!(summary.contains("1 file could not be read"), "{stdout}");
}

#[test]
fn directories_are_walked() {
    let (code, stdout, _) = run(&["check", "--color", "never", "fixtures/valid"]);
    assert_eq!(code, 0, "{stdout}");
    let files = std::fs::read_dir(root().join("fixtures/valid"))
        .unwrap()
        .count();
    assert!(
        stdout.contains(&format!("checked {files} files")),
        "{stdout}"
    );
    let (code, _, stderr) = run(&["check", "crates/agui-lens-core/src/report"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no stream files"), "{stderr}");
}

#[test]
fn json_format() {
    let (code, stdout, _) = run(&["check", "--format", "json", INVALID]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let first = &doc["diagnostics"][0];
    for field in [
        "rule",
        "severity",
        "path",
        "line",
        "event_index",
        "event_type",
        "message",
        "help",
    ] {
        assert!(first.get(field).is_some(), "missing {field} in {first}");
    }
    assert_eq!(first["rule"], "schema/violation");
    assert_eq!(first["line"], 3);
    assert_eq!(first["event_index"], 2);
    assert_eq!(first["event_type"], "TEXT_MESSAGE_START");
    assert_eq!(first["pointer"], "/role");
    assert_eq!(first["keyword"], "enum");
    assert_eq!(doc["summary"]["files"], 1);
    assert_eq!(doc["summary"]["errors"], 7);
    assert_eq!(doc["summary"]["warnings"], 1);
}

#[test]
fn jsonl_format_is_one_diagnostic_per_line() {
    let (_, stdout, _) = run(&["check", "--format", "jsonl", INVALID]);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert!(
        lines
            .iter()
            .all(|d| d["rule"].is_string() && d["line"].is_u64())
    );
}

#[test]
fn github_format_annotates_file_and_line() {
    let (_, stdout, _) = run(&["check", "--format", "github", INVALID]);
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with(
            "::error file=fixtures/invalid/schema/violation.jsonl,line=3,title=schema/violation::"
        ),
        "{first}"
    );
    assert!(stdout.contains("::warning "), "{stdout}");
    assert!(!first.contains('\n'));
}

#[test]
fn junit_format_has_a_suite_per_file() {
    let (_, stdout, _) = run(&["check", "--format", "junit", INVALID, VALID]);
    assert!(stdout.starts_with("<?xml"));
    assert_eq!(stdout.matches("<testsuite ").count(), 2, "{stdout}");
    assert!(
        stdout.contains("<testsuites name=\"agui-lens\" tests=\"8\" failures=\"7\" errors=\"0\">"),
        "{stdout}"
    );
    assert!(stdout.contains("name=\"conforms to AG-UI\""));
    assert_eq!(stdout.matches("<failure ").count(), 7);
    // Every opened element is closed.
    assert_eq!(
        stdout.matches("<testsuite ").count(),
        stdout.matches("</testsuite>").count()
    );
}

/// A file name with a line break (legal on Unix) keeps it in the JUnit report: in an
/// attribute a raw line break reads back as a space, so it is written as a reference.
#[test]
fn junit_attributes_keep_line_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two\nlines.jsonl");
    std::fs::copy(crate::common::root().join(INVALID), &path).unwrap();
    let (code, stdout, _) = run(&["check", "--format", "junit", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("two&#10;lines.jsonl\""), "{stdout}");
    // Inside an element's text a line break is kept as it is.
    let inside = stdout.split("<failure ").nth(1).unwrap();
    let text = &inside[inside.find('>').unwrap()..inside.find("</failure>").unwrap()];
    assert!(!text.contains("&#10;"), "{text}");
    // No attribute holds a raw line break.
    for tag in stdout.split('<').skip(1) {
        let head = tag.split('>').next().unwrap();
        assert!(!head.contains('\n'), "a line break in <{head}>");
    }
}

#[test]
fn sarif_format() {
    let (_, stdout, _) = run(&["check", "--format", "sarif", INVALID]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let run = &doc["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    // Every rule, and the one an input that could not be read is a result of.
    assert_eq!(
        rules.len(),
        agui_lens_core::check::catalog::RuleId::ALL.len() + 1
    );
    assert_eq!(rules[rules.len() - 1]["id"], "agui-lens/input-not-read");
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "schema/violation");
    assert_eq!(result["level"], "error");
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "schema/violation");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        3
    );
}

#[test]
fn human_format_colours_only_when_asked() {
    let (_, plain, _) = run(&["check", INVALID]);
    assert!(!plain.contains('\u{1b}'), "not a terminal: no colour");
    let (_, coloured, _) = run(&["check", "--color", "always", INVALID]);
    assert!(coloured.contains("\u{1b}["));
}

#[test]
fn stdin_is_read_with_a_dash_or_no_path() {
    let input = std::fs::read(root().join(INVALID)).unwrap();
    let (code, stdout, _) = split(
        agui_lens()
            .args(["check", "-"])
            .write_stdin(input.clone())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1);
    assert!(
        stdout.contains("-:3 (event 2, TEXT_MESSAGE_START)"),
        "{stdout}"
    );
    let (code, _, _) = split(
        agui_lens()
            .arg("check")
            .write_stdin(input)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1);
}

/// Diagnostics for stdin appear as events arrive, not when the input ends.
#[test]
fn stdin_is_reported_as_it_arrives() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .args(["check", "--format", "jsonl", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.1\"}\n{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":1}\n")
        .unwrap();
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        tx.send(line).unwrap();
        // Keep reading: a closed pipe would end the check early (and quietly).
        std::io::copy(&mut reader, &mut std::io::sink()).unwrap();
    });
    // stdin is still open: the diagnostic must already be out.
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("no diagnostic before EOF");
    assert!(line.contains("schema/violation"), "{line}");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

#[test]
fn compressed_inputs_are_read_transparently() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(root().join(INVALID)).unwrap();
    let gz = dir.path().join("capture.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&text).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let zst = dir.path().join("capture.sse.zst");
    let sse: Vec<u8> = String::from_utf8(text.clone())
        .unwrap()
        .lines()
        .map(|l| format!("data: {l}\n\n"))
        .collect::<String>()
        .into_bytes();
    std::fs::write(&zst, zstd::encode_all(&sse[..], 3).unwrap()).unwrap();
    for path in [&gz, &zst] {
        let (code, stdout, _) = run(&["check", "--format", "json", path.to_str().unwrap()]);
        assert_eq!(code, 1);
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["summary"]["errors"], 7, "{}", path.display());
        assert_eq!(
            doc["diagnostics"][0]["line"],
            if path == &gz { 3 } else { 5 }
        );
    }
    // A directory walk finds the compressed forms too.
    let (_, stdout, _) = run(&["check", "--format", "json", dir.path().to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["summary"]["files"], 2);
}

#[test]
fn input_format_can_be_forced() {
    let (code, stdout, _) = run(&["check", "--format", "json", "--input-format", "sse", VALID]);
    assert_eq!(code, 1, "JSONL read as SSE holds no events");
    assert!(stdout.contains("framing/no-events"));
}

#[test]
fn config_file_sets_levels_and_flags_win() {
    let dir = tempfile::tempdir().unwrap();
    // A repository's root: the search goes up to it (outside one, it looks in the current
    // folder alone).
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::copy(root().join(WARNS), dir.path().join("w.jsonl")).unwrap();
    std::fs::write(
        dir.path().join("agui-lens.toml"),
        "[rules]\n\"schema/unknown-field\" = \"deny\"\n",
    )
    .unwrap();
    let nested = dir.path().join("sub");
    std::fs::create_dir(&nested).unwrap();
    let bin = env!("CARGO_BIN_EXE_agui-lens");
    let status = |args: &[&str]| {
        Command::new(bin)
            .args(args)
            .current_dir(&nested)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(
        status(&["check", "../w.jsonl"]),
        Some(1),
        "found in a parent directory"
    );
    assert_eq!(
        status(&["check", "--warn", "schema/unknown-field", "../w.jsonl"]),
        Some(0)
    );
    std::fs::write(
        dir.path().join("agui-lens.toml"),
        "[rules]\n\"schema/x\" = \"deny\"\n",
    )
    .unwrap();
    let output = Command::new(bin)
        .args(["check", "../w.jsonl"])
        .current_dir(&nested)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("schema/x"));
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "deny-warnings = true\n").unwrap();
    assert_eq!(
        status(&["check", "--config", other.to_str().unwrap(), "../w.jsonl"]),
        Some(1)
    );

    // Found by the search, the file is named on stderr: a green log says whose rules made it.
    std::fs::write(
        dir.path().join("agui-lens.toml"),
        "[rules]\n\"schema/*\" = \"allow\"\n",
    )
    .unwrap();
    let output = Command::new(bin)
        .args(["check", "../w.jsonl"])
        .current_dir(&nested)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{}", dir.path().join("agui-lens.toml").display())),
        "{stderr}"
    );
    // Inside a repository, the search ends at its root: a file above it (in a home folder,
    // in /tmp) is no rule of the project's.
    std::fs::create_dir(nested.join(".git")).unwrap();
    assert_eq!(
        status(&["check", "--deny", "schema/unknown-field", "../w.jsonl"]),
        Some(1)
    );
    assert_eq!(status(&["check", "../w.jsonl"]), Some(0), "warnings only");
    let output = Command::new(bin)
        .args(["check", "--format", "json", "../w.jsonl"])
        .current_dir(&nested)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(doc["summary"]["warnings"].as_u64().unwrap() > 0, "{doc}");
}

#[test]
fn rules_and_explain() {
    let (code, stdout, _) = run(&["rules"]);
    assert_eq!(code, 0);
    for id in agui_lens_core::check::catalog::RuleId::ALL {
        assert!(stdout.contains(id.name()), "{} not listed", id.name());
    }
    let (code, stdout, _) = run(&["rules", "--format", "json"]);
    assert_eq!(code, 0);
    let rules: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        rules.len(),
        agui_lens_core::check::catalog::RuleId::ALL.len()
    );
    let (code, stdout, _) = run(&["explain", "schema/null-for-optional"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Why it matters"));
    assert!(stdout.contains("\"parentMessageId\":null"));
    // A rule that is off by default says how its example is made to trip it.
    let (code, stdout, _) = run(&["explain", "pairing/empty-delta"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("`--warn pairing/empty-delta`"), "{stdout}");
    let (code, _, stderr) = run(&["explain", "null-for-optional"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("schema/null-for-optional"),
        "suggests the full name: {stderr}"
    );
}

#[test]
fn schema_commands() {
    let (code, stdout, _) = run(&["schema", "list"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("events/SUBAGENT_FINISHED.json"));
    assert!(stdout.contains("removed in 1.0"));
    let (code, stdout, _) = run(&["schema", "show", "RUN_FINISHED"]);
    assert_eq!(code, 0);
    let schema: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(schema["properties"]["type"]["const"], "RUN_FINISHED");
    let (code, stdout, _) = run(&["schema", "show", "Message"]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(run(&["schema", "show", "NOPE"]).0, 2);
    let dir = tempfile::tempdir().unwrap();
    let (code, _, _) = run(&["schema", "export", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(dir.path().join("events/RUN_STARTED.json").is_file());
    assert!(dir.path().join("defs/Message.json").is_file());
}

/// `schema list|show|export` take `--protocol`, as `check` does, and say which version's
/// schemas they give: an export meant for 1.0 streams got 1.1's shapes, with nothing said.
#[test]
fn schema_commands_give_the_version_asked_for_and_say_which() {
    let same = |exported: &std::path::Path, version: &str| {
        let ours = root().join("schemas").join(version);
        let mut differ = Vec::new();
        for entry in walk_files(&ours) {
            let rel = entry.strip_prefix(&ours).unwrap();
            let a: Value = serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
            let b: Value =
                serde_json::from_slice(&std::fs::read(exported.join(rel)).unwrap()).unwrap();
            if a != b {
                differ.push(rel.display().to_string());
            }
        }
        differ
    };
    for (args, version) in [(&[][..], "1.1"), (&["--protocol", "1.0"][..], "1.0")] {
        let dir = tempfile::tempdir().unwrap();
        let mut export = vec!["schema", "export", dir.path().to_str().unwrap()];
        export.extend_from_slice(args);
        let (code, _, stderr) = run(&export);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains(&format!("AG-UI {version}")), "{stderr}");
        assert_eq!(same(dir.path(), version), Vec::<String>::new(), "{version}");
        let mut show = vec!["schema", "show", "ToolCall"];
        show.extend_from_slice(args);
        let (code, stdout, stderr) = run(&show);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains(&format!("AG-UI {version}")), "{stderr}");
        let shown: Value = serde_json::from_str(&stdout).unwrap();
        let ours: Value = serde_json::from_slice(
            &std::fs::read(
                root()
                    .join("schemas")
                    .join(version)
                    .join("defs/ToolCall.json"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(shown, ours, "{version}");
        let mut list = vec!["schema", "list"];
        list.extend_from_slice(args);
        let (code, _, stderr) = run(&list);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains(&format!("AG-UI {version}")), "{stderr}");
    }
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk_files(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn schema_overlay_checks_custom_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("custom")).unwrap();
    std::fs::write(
        dir.path().join("custom/progress.json"),
        r#"{"type":"object","required":["percent"],"properties":{"percent":{"type":"integer","maximum":100}}}"#,
    )
    .unwrap();
    let stream = dir.path().join("s.jsonl");
    std::fs::write(
        &stream,
        concat!(
            "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.1\"}\n",
            "{\"type\":\"CUSTOM\",\"name\":\"progress\",\"value\":{\"percent\":140}}\n",
            "{\"type\":\"CUSTOM\",\"name\":\"other\",\"value\":1}\n",
            "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
        ),
    )
    .unwrap();
    let (code, stdout, _) = run(&[
        "check",
        "--format",
        "json",
        "--schemas",
        dir.path().to_str().unwrap(),
        stream.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{stdout}");
    assert_eq!(diagnostics[0]["pointer"], "/value/percent");
    // A broken overlay is a usage error, not a finding.
    std::fs::write(dir.path().join("custom/bad.json"), "{").unwrap();
    assert_eq!(
        run(&["check", "--schemas", dir.path().to_str().unwrap(), VALID]).0,
        2
    );
}

/// A file of an overlay that replaces no schema and that no schema refers to (a misspelt
/// event type) would tighten nothing in silence: it is refused, named. A folder named after
/// a protocol version lays its files over that version's schemas alone, so an exported 1.1
/// schema laid over 1.1 leaves 0.x and 1.0 as they were.
#[test]
fn an_overlay_file_that_replaces_nothing_is_refused_and_version_folders_hold_to_theirs() {
    let stream = |dir: &std::path::Path| {
        let path = dir.join("s.jsonl");
        std::fs::write(
            &path,
            concat!(
                "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.0\"}\n",
                "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n",
                "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"hello world\"}\n",
                "{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n",
                "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
            ),
        )
        .unwrap();
        path
    };
    let short = r#"{"type":"object","properties":{"delta":{"maxLength":3}}}"#;
    let dir = tempfile::tempdir().unwrap();
    let s = stream(dir.path());
    let overlay = dir.path().join("overlay");
    std::fs::create_dir_all(overlay.join("events")).unwrap();
    std::fs::write(overlay.join("events/TEXT_MESAGE_CONTENT.json"), short).unwrap();
    let (code, stdout, stderr) = run(&[
        "check",
        "--schemas",
        overlay.to_str().unwrap(),
        s.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("events/TEXT_MESAGE_CONTENT.json"),
        "{stderr}"
    );
    std::fs::remove_file(overlay.join("events/TEXT_MESAGE_CONTENT.json")).unwrap();

    // Under 1.1/, the stream (1.0) is checked by 1.0's schema; under 1.0/, by the overlay.
    for (folder, code) in [("1.1", 0), ("1.0", 1)] {
        let dir = overlay.join(folder).join("events");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("TEXT_MESSAGE_CONTENT.json"), short).unwrap();
        let (got, stdout, stderr) = run(&[
            "check",
            "--schemas",
            overlay.to_str().unwrap(),
            s.to_str().unwrap(),
        ]);
        assert_eq!(got, code, "{folder}: {stdout}{stderr}");
        std::fs::remove_dir_all(overlay.join(folder)).unwrap();
    }
}

/// A stream saved in a one-byte encoding (every event holds "café" as 0xE9) is text with
/// broken characters, not binary data: each line is said to be no UTF-8, as `explain
/// framing/invalid-utf8` shows, and the input is said to be text in another encoding.
#[test]
fn a_stream_saved_as_latin_1_is_said_to_be_no_utf8_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latin1.jsonl");
    std::fs::write(
        &file,
        b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\",\"x\":\"caf\xe9\"}\n\
          {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\",\"x\":\"caf\xe9\"}\n",
    )
    .unwrap();
    let (code, stdout, _) = run(&["check", "--format", "json", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let rules: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "framing/invalid-utf8",
            "framing/invalid-utf8",
            "framing/no-events"
        ],
        "{stdout}"
    );
    assert!(stdout.contains("not UTF-8"), "{stdout}");
    assert!(!stdout.contains("binary"), "{stdout}");
}

/// A protobuf body cut inside its first frame's 4-byte length, in a file named `.pb`, is a
/// body cut short (`framing/proto-truncated`, as the official client says "ended mid-frame"),
/// as one cut a byte later is; it was taken for binary data that is no stream.
#[test]
fn a_protobuf_body_cut_inside_its_first_length_is_truncated() {
    let whole = std::fs::read(root().join("fixtures/valid/agui-sdk-full.pb")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=5 {
        let file = dir.path().join(format!("cut{n}.pb"));
        std::fs::write(&file, &whole[..n]).unwrap();
        let (code, stdout, _) = run(&["check", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{n}: {stdout}");
        assert!(stdout.contains("framing/proto-truncated"), "{n}: {stdout}");
        assert!(!stdout.contains("binary data"), "{n}: {stdout}");
    }
}

/// A reader that goes away after the first line: `cat`, which only writes, ends quietly (exit
/// 0); `check`, whose exit status is its verdict, runs to its end and exits with it (1: the
/// stream has findings), quietly too.
#[test]
fn broken_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let line = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":1}\n";
    std::fs::write(&big, line.repeat(200_000)).unwrap();
    for (command, code) in [("cat", 0), ("check", 1)] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agui-lens"))
            .args([command, big.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        drop(stdout);
        let started = Instant::now();
        let output = child.wait_with_output().unwrap();
        assert!(started.elapsed() < Duration::from_secs(60));
        assert_eq!(output.status.code(), Some(code), "{command}");
        assert!(
            output.stderr.is_empty(),
            "{command}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn readme_lists_every_rule() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for id in agui_lens_core::check::catalog::RuleId::ALL {
        let rule = id.rule();
        let row = format!(
            "| `{}` | {} | {} |",
            rule.name,
            rule.default.as_str(),
            rule.tier.as_str()
        );
        assert!(readme.contains(&row), "README.md has no row starting {row}");
    }
}

/// docs/tiers.md gives every rule's tier, as the catalog has it.
#[test]
fn tiers_doc_gives_every_rule_its_tier() {
    let doc = std::fs::read_to_string(root().join("docs/tiers.md")).unwrap();
    for id in agui_lens_core::check::catalog::RuleId::ALL {
        let rule = id.rule();
        let row = format!("| `{}` | {}", rule.name, rule.tier.as_str());
        assert!(
            doc.contains(&row),
            "docs/tiers.md has no row starting {row}"
        );
    }
}

/// `rules` offers only the formats that mean something for a list: a table and JSON.
#[test]
fn rules_offers_only_the_formats_it_writes() {
    for format in ["sarif", "github", "junit", "jsonl"] {
        let (code, _, stderr) = run(&["rules", "--format", format]);
        assert_eq!(code, 2, "{format}: {stderr}");
        assert!(stderr.contains("possible values: human, json"), "{stderr}");
    }
    let (code, stdout, _) = run(&["rules", "--format", "json"]);
    assert_eq!(code, 0);
    assert!(serde_json::from_str::<Value>(&stdout).unwrap().is_array());
}

/// Wording a newcomer tripped over (issue 30): counts agree in number, an error body counts no
/// events, `inspect --stats` says why it fails, `diff` says at which level it counted, and
/// `--help` tells the exit statuses and what each positional argument is.
#[test]
fn the_details_a_newcomer_reads() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.jsonl");
    std::fs::write(
        &one,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    let (code, _, stderr) = run(&[
        "compact",
        one.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(": 1 → 1 event, "), "{stderr}");
    let body = dir.path().join("error.jsonl");
    std::fs::write(
        &body,
        "{\"error\":\"bad request\",\"detail\":\"threadId\"}\n",
    )
    .unwrap();
    let (_, stdout, _) = run(&["check", body.to_str().unwrap()]);
    assert!(
        stdout.contains("checked 1 file, 0 events: 1 error"),
        "{stdout}"
    );
    let (code, _, stderr) = run(&[
        "inspect",
        "--stats",
        "fixtures/invalid/lifecycle/first-event.jsonl",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("the stream has 1 error and 0 warnings"),
        "{stderr}"
    );
    let (_, stdout, _) = run(&[
        "diff",
        "fixtures/recordings/agui-sdk-full.jsonl",
        "fixtures/recordings/agui-sdk-full.sse",
    ]);
    assert!(stdout.starts_with("compared compacted"), "{stdout}");
    let (_, help, _) = run(&["--help"]);
    assert!(
        help.contains("Exit status:") && help.contains("143"),
        "{help}"
    );
    for (args, described) in [
        (["schema", "show", "--help"], "<NAME>  The event type"),
        (
            ["schema", "export", "--help"],
            "<DIR>  The directory the schemas are written into",
        ),
        (
            ["snapshot", "review", "--help"],
            "<DIR>  The directory searched",
        ),
        (
            ["snapshot", "accept", "--help"],
            "<FILE>  The snapshot file",
        ),
    ] {
        let (_, help, _) = run(&args);
        assert!(help.contains(described), "{args:?}:\n{help}");
    }
}

/// A stream that trips a MUST (content for a message never started), a SHOULD (a field its
/// event type does not define) and advice (timestamps in seconds).
fn three_tiers(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("tiers.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.1\",\"timestamp\":1732000000}\n",
            "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m7\",\"delta\":\"hi\"}\n",
            "{\"type\":\"STEP_STARTED\",\"stepName\":\"plan\",\"step_name\":\"plan\"}\n",
            "{\"type\":\"STEP_FINISHED\",\"stepName\":\"plan\"}\n",
            "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
        ),
    )
    .unwrap();
    path
}

/// The rules `check --format json` reports, sorted, with the exit status.
fn rules_reported(args: &[&str]) -> (i32, Vec<String>) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = run(&all);
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    let mut rules: Vec<String> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_owned())
        .collect();
    rules.sort();
    (code, rules)
}

/// `--tier` keeps the rules up to a tier (must ⊂ should ⊂ capability ⊂ advice), whatever a
/// later flag says, and the exit status follows what is left.
#[test]
fn tier_limits_what_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let stream = three_tiers(dir.path());
    let stream = stream.to_str().unwrap();
    let must = "pairing/text-message";
    let should = "schema/unknown-field";
    let advice = "order/timestamp-unit";
    let (code, all) = rules_reported(&[stream]);
    assert_eq!(code, 1);
    assert_eq!(all, [advice, must, should]);
    assert_eq!(rules_reported(&["--tier", "advice", stream]), (1, all));
    assert_eq!(
        rules_reported(&["--tier", "must", stream]),
        (1, vec![must.to_owned()])
    );
    assert_eq!(
        rules_reported(&["--tier", "should", stream]),
        (1, vec![must.to_owned(), should.to_owned()])
    );
    // A rule outside the tier stays off, whatever a flag says after.
    assert_eq!(
        rules_reported(&["--tier", "must", "--deny", "order/*", stream]),
        (1, vec![must.to_owned()])
    );
    // The exit status follows: without the MUST, only warnings are left, and --tier must
    // leaves none for --deny-warnings to fail on.
    let (code, _) = rules_reported(&["--allow", must, "--deny-warnings", stream]);
    assert_eq!(code, 1, "the should and advice warnings fail it");
    assert_eq!(
        rules_reported(&["--tier", "must", "--allow", must, "--deny-warnings", stream]),
        (0, vec![])
    );
    let (code, _, stderr) = run(&["check", "--tier", "strict", stream]);
    assert_eq!(code, 2);
    assert!(stderr.contains("must"), "names the tiers: {stderr}");
}

/// `tier = "…"` in agui-lens.toml, which `--tier` overrides.
#[test]
fn tier_in_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let stream = three_tiers(dir.path());
    let stream = stream.to_str().unwrap();
    let config = dir.path().join("agui-lens.toml");
    std::fs::write(&config, "tier = \"must\"\n").unwrap();
    let config = config.to_str().unwrap();
    assert_eq!(
        rules_reported(&["--config", config, stream]),
        (1, vec!["pairing/text-message".to_owned()])
    );
    let (_, rules) = rules_reported(&["--config", config, "--tier", "should", stream]);
    assert_eq!(rules.len(), 2, "{rules:?}");
    std::fs::write(dir.path().join("bad.toml"), "tier = \"most\"\n").unwrap();
    let bad = dir.path().join("bad.toml");
    let (code, _, stderr) = run(&["check", "--config", bad.to_str().unwrap(), stream]);
    assert_eq!(code, 2);
    assert!(stderr.contains("most"), "{stderr}");
}

/// `rules` shows each rule's tier (and filters by it); its JSON carries the spec link;
/// `explain` prints both.
#[test]
fn rules_and_explain_show_tiers_and_spec_pages() {
    use agui_lens_core::check::catalog::{RuleId, Tier};
    let (code, stdout, _) = run(&["rules"]);
    assert_eq!(code, 0);
    for id in RuleId::ALL {
        let rule = id.rule();
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(rule.name))
            .unwrap_or_else(|| panic!("{} not listed", rule.name));
        assert!(
            line.split_whitespace().any(|w| w == rule.tier.as_str()),
            "{line}"
        );
    }
    let (code, stdout, _) = run(&["rules", "--format", "json"]);
    assert_eq!(code, 0);
    let listed: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    for (entry, id) in listed.iter().zip(RuleId::ALL) {
        assert_eq!(entry["name"], id.name());
        assert_eq!(entry["tier"], id.rule().tier.as_str());
        assert_eq!(entry["spec"], id.rule().spec);
    }
    let negotiated = listed
        .iter()
        .find(|r| r["name"] == "transport/not-negotiated")
        .unwrap();
    assert_eq!(negotiated["capability"], "transport.httpBinary");
    let (code, stdout, _) = run(&["rules", "--tier", "must", "--format", "json"]);
    assert_eq!(code, 0);
    let musts: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    let expected = RuleId::ALL
        .iter()
        .filter(|id| id.rule().tier == Tier::Must)
        .count();
    assert_eq!(musts.len(), expected);
    assert!(musts.iter().all(|r| r["tier"] == "must"));
    let (code, stdout, _) = run(&["explain", "transport/not-negotiated"]);
    assert_eq!(code, 0);
    let rule = RuleId::TransportNotNegotiated.rule();
    assert!(stdout.contains("Tier: capability"), "{stdout}");
    assert!(stdout.contains("transport.httpBinary"), "{stdout}");
    assert!(stdout.contains(rule.spec), "{stdout}");
    let (_, stdout, _) = run(&["explain", "order/timestamp-unit"]);
    assert!(stdout.contains("Tier: advice"), "{stdout}");
    assert!(
        stdout.contains(RuleId::OrderTimestampUnit.rule().spec),
        "{stdout}"
    );
}

/// Every rule SARIF describes links its spec page (`helpUri`, an absolute URI) and carries
/// its tier.
#[test]
fn sarif_rules_link_their_spec_page() {
    let (_, stdout, _) = run(&["check", "--format", "sarif", INVALID]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let rules = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    // The last is agui-lens's own (an input that could not be read): no spec page.
    assert_eq!(
        rules.len(),
        agui_lens_core::check::catalog::RuleId::ALL.len() + 1
    );
    for (described, id) in rules
        .iter()
        .zip(agui_lens_core::check::catalog::RuleId::ALL)
    {
        let rule = id.rule();
        assert_eq!(described["id"], rule.name);
        let uri = described["helpUri"].as_str().unwrap_or_default();
        assert_eq!(uri, rule.spec);
        let (scheme, rest) = uri.split_once("://").expect("an absolute URI");
        assert!(scheme == "https" && !rest.is_empty(), "{uri}");
        assert!(
            uri.bytes().all(|b| b.is_ascii_graphic()),
            "no character a URI may not hold: {uri}"
        );
        assert_eq!(described["properties"]["tier"], rule.tier.as_str());
        assert_eq!(described["properties"]["tags"][0], rule.family());
    }
}

/// Runs agui-lens on a pseudo-terminal (util-linux `script`), as a person at a terminal would,
/// with progress shown at once; returns what the terminal got.
fn on_a_terminal(dir: &std::path::Path, args: &str) -> String {
    let out = Command::new("script")
        .current_dir(dir)
        .env("AGUI_LENS_PROGRESS_DELAY_MS", "0")
        .args([
            "-qec",
            &format!("{} {args}", env!("CARGO_BIN_EXE_agui-lens")),
            "/dev/null",
        ])
        .output()
        .expect("running script (util-linux)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn long_inputs_show_progress_on_a_terminal_and_never_on_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut text = String::from(
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.0\"}\n{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n",
    );
    let delta = format!(
        "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"{}\"}}\n",
        "word ".repeat(20)
    );
    for _ in 0..60_000 {
        text.push_str(&delta);
    }
    text.push_str("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    std::fs::write(dir.join("long.jsonl"), &text).unwrap();
    for (args, label) in [
        ("check long.jsonl", "checking"),
        ("fold long.jsonl --compact -o /dev/null", "folding"),
        ("cat long.jsonl -o copy.jsonl", "reading"),
        ("inspect long.jsonl --stats", "inspecting"),
        ("compact long.jsonl -o small.jsonl", "compacting"),
    ] {
        let args = args.replace(" -o /dev/null", " > /dev/null");
        let seen = on_a_terminal(dir, &args);
        assert!(
            seen.contains(label) && seen.contains(" left") && seen.contains("MiB"),
            "{args}: {seen}"
        );
        // A pipe never gets it.
        let (_, stdout, stderr) = split(
            agui_lens()
                .current_dir(dir)
                .env("AGUI_LENS_PROGRESS_DELAY_MS", "0")
                .args(args.split(' ').take_while(|a| *a != ">"))
                .output()
                .unwrap(),
        );
        // (The bar's label, and its "… left" after the rate; a summary's "left as it was"
        // is no bar.)
        let drawn = |text: &str| text.contains(label) || text.contains("/s, ");
        assert!(!drawn(&stderr) && !drawn(&stdout), "{args}: {stderr}");
    }
    // A report for a program gets none either.
    let seen = on_a_terminal(dir, "check long.jsonl --format json");
    assert!(!seen.contains("checking"), "{seen}");
}

/// A glob `--exclude` cannot read is named as the user wrote it, not as the walk negates it.
#[test]
fn a_bad_exclude_glob_is_named_as_written() {
    let (code, _, stderr) = run(&["check", "fixtures/valid", "--exclude", "["]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--exclude ["), "{stderr}");
    assert!(!stderr.contains("'!['"), "{stderr}");
}

/// `explain` of a misspelt rule suggests the rules spelt closest to it.
#[test]
fn explain_suggests_the_rules_spelt_closest() {
    for (typo, meant) in [
        ("lifecycle/unterminated-rn", "lifecycle/unterminated-run"),
        ("schema/unknown-feld", "schema/unknown-field"),
        ("unknown-field", "schema/unknown-field"),
    ] {
        let (code, _, stderr) = run(&["explain", typo]);
        assert_eq!(code, 2, "{typo}: {stderr}");
        assert!(
            stderr.contains("did you mean") && stderr.contains(meant),
            "{typo}: {stderr}"
        );
    }
}

/// `check --junit FILE` writes the JUnit report of the same run beside the format on stdout,
/// so a CI step (the Action) gets SARIF and JUnit from one run — one baseline recorded, one
/// verdict — and byte for byte what `--format junit` prints. It never writes over an input,
/// nor over a file that holds no report.
#[test]
fn check_writes_a_junit_report_beside_its_format() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("reports/junit.xml");
    let (code, stdout, stderr) = run(&[
        "check",
        "--format",
        "sarif",
        INVALID,
        VALID,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    let (_, sarif_alone, _) = run(&["check", "--format", "sarif", INVALID, VALID]);
    assert_eq!(stdout, sarif_alone);
    let (_, alone, _) = run(&["check", "--format", "junit", INVALID, VALID]);
    assert_eq!(std::fs::read_to_string(&junit).unwrap(), alone);

    // A missing input is in both reports.
    let missing = dir.path().join("missing.jsonl");
    let (code, stdout, _) = run(&[
        "check",
        "--format",
        "github",
        VALID,
        missing.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(stdout.contains("::error"), "{stdout}");
    let written = std::fs::read_to_string(&junit).unwrap();
    assert!(
        written.contains("missing.jsonl") && written.contains("errors=\"1\""),
        "{written}"
    );

    // Not over an input, nor over what is no report.
    let input = dir.path().join("a.jsonl");
    std::fs::copy(root().join(VALID), &input).unwrap();
    let (code, _, stderr) = run(&[
        "check",
        input.to_str().unwrap(),
        "--junit",
        input.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is an input"), "{stderr}");
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(root().join(VALID)).unwrap()
    );
    // Nor over XML or a page that is no JUnit report (a first `<` was taken for one), nor a
    // folder; a report is replaced.
    for (name, text) in [
        ("notes.txt", "keep me\n"),
        (
            "pom.xml",
            "<?xml version=\"1.0\"?>\n<project><modelVersion>4.0.0</modelVersion></project>\n",
        ),
        (
            "index.html",
            "<!doctype html><html><body>hi</body></html>\n",
        ),
        ("suites.xml", "<!-- ours --><testsuitesx/>\n"),
    ] {
        let other = dir.path().join(name);
        std::fs::write(&other, text).unwrap();
        let (code, _, stderr) = run(&["check", VALID, "--junit", other.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(
            stderr.contains("something else than a JUnit report"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&other).unwrap(), text, "{name}");
    }
    let (code, _, stderr) = run(&["check", VALID, "--junit", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a directory"), "{stderr}");
    let report = dir.path().join("old-report.xml");
    std::fs::write(
        &report,
        "<?xml version=\"1.0\"?>\n<!-- old -->\n<testsuites name=\"x\"/>\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&["check", VALID, "--junit", report.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("agui-lens")
    );
    // `test --junit` the same, before any case runs.
    let suite = dir.path().join("suite.toml");
    std::fs::write(
        &suite,
        "[[case]]\nname = \"x\"\nurl = \"http://127.0.0.1:1/a\"\nmessage = \"hi\"\n",
    )
    .unwrap();
    let pom = dir.path().join("pom.xml");
    let (code, _, stderr) = run(&[
        "test",
        suite.to_str().unwrap(),
        "--junit",
        pom.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("something else than a JUnit report"),
        "{stderr}"
    );
    assert!(std::fs::read_to_string(&pom).unwrap().contains("<project>"));
}

/// `proxy --report` and `serve --report` replace only a report agui-lens writes (in any of
/// its formats: the format may change from one run to the next) or an empty file: a capture,
/// a config or notes named by a slip are refused before anything listens, and left as they
/// were. They were replaced by the report when the server stopped, and `serve` whose script
/// could not be read wrote its failure over them too.
#[test]
fn a_report_never_replaces_what_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("capture.jsonl");
    std::fs::copy(root().join(VALID), &capture).unwrap();
    let config = dir.path().join("agui-lens.toml");
    std::fs::write(&config, "[rules]\n\"version/undeclared\" = \"deny\"\n").unwrap();
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "# what we saw\n").unwrap();
    let missing = dir.path().join("nothere.jsonl");
    let valid = root().join(VALID);
    // Files that look like reports of other tools, or hold a line of ours among others.
    let look_alikes = [
        (
            "pasted.md",
            "# Notes\n\n```\n$ agui-lens check x.jsonl\nchecked 1 file, 42 events: 0 errors, 0 warnings\n```\n\nMore text.\n",
        ),
        (
            "ends-with-ours.md",
            "# Notes\nwhat we saw\nchecked 1 file, 42 events: 0 errors, 0 warnings\n",
        ),
        (
            "pytest.xml",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pytest\" tests=\"3\"><testsuite name=\"x\"/></testsuites>\n",
        ),
        (
            "eslint.sarif",
            r#"{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"tool":{"driver":{"name":"eslint"}},"results":[]}]}"#,
        ),
        ("other.github", "::error file=a.py,line=1::boom\n"),
        (
            "other.jsonl",
            "{\"rule\":\"E501\",\"severity\":\"error\",\"path\":\"a.py\",\"message\":\"line too long\"}\n",
        ),
        ("other.json", r#"{"diagnostics":[],"summary":{"errors":0}}"#),
    ]
    .map(|(name, text)| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    });
    // A link that leads nowhere is refused before anything listens too (it was after).
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink("/nonexistent-agui-lens/away.json", &dangling).unwrap();
    for args in [
        vec!["proxy", "--upstream", "http://127.0.0.1:1/"],
        vec!["serve", valid.to_str().unwrap()],
    ] {
        let output = agui_lens()
            .args(&args)
            .args(["--report", dangling.to_str().unwrap()])
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let (code, stdout, stderr) = split(output);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("leads nowhere"), "{stderr}");
    }
    for precious in [&capture, &config, &notes].into_iter().chain(&look_alikes) {
        let before = std::fs::read(precious).unwrap();
        let report = precious.to_str().unwrap();
        for args in [
            vec![
                "proxy",
                "--upstream",
                "http://127.0.0.1:1/",
                "--report",
                report,
            ],
            vec!["serve", valid.to_str().unwrap(), "--report", report],
            vec!["serve", missing.to_str().unwrap(), "--report", report],
        ] {
            for format in ["json", "sarif", "human"] {
                let output = agui_lens()
                    .args(&args)
                    .args(["--format", format])
                    .timeout(std::time::Duration::from_secs(20))
                    .output()
                    .unwrap();
                let (code, stdout, stderr) = split(output);
                assert_eq!(code, 2, "{args:?} {format}: {stdout}{stderr}");
                assert!(
                    stderr.contains("--report") && stderr.contains("left as it was"),
                    "{args:?}: {stderr}"
                );
                assert!(!stdout.contains("listening"), "{args:?}: {stdout}");
                assert_eq!(
                    std::fs::read(precious).unwrap(),
                    before,
                    "{args:?} {format}"
                );
            }
        }
    }
    // A report of any format is replaced, by one of another (each by the next, the last by
    // the first).
    let report = dir.path().join("report.out");
    let formats = ["human", "json", "jsonl", "github", "junit", "sarif"];
    for format in formats.iter().chain(&formats[..1]) {
        let script = missing.to_str().unwrap();
        let report_arg = report.to_str().unwrap();
        let (code, _, stderr) = run(&["serve", script, "--report", report_arg, "--format", format]);
        assert_eq!(code, 2, "{stderr}");
        assert!(!stderr.contains("left as it was"), "{format}: {stderr}");
        let text = std::fs::read_to_string(&report).unwrap();
        assert!(text.contains("nothere.jsonl"), "{format}: {text}");
    }
}

/// An output under a path where a file stands in place of a folder names that file; it said
/// "File exists (os error 17)", which named nothing.
#[test]
fn a_file_in_the_way_of_an_output_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "keep\n").unwrap();
    let under = file.join("copy.jsonl");
    let (code, _, stderr) = run(&["cat", VALID, "-o", under.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("notes.txt is a file, not a folder"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["man", "--dir", file.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("notes.txt is a file, not a folder"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep\n");
}

/// Findings of stdin (`-`) are annotated on no file by `--format github`, also when the
/// working folder holds a file named `-` (they were placed on it).
#[test]
fn stdin_is_annotated_on_no_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("-"), "notes\n").unwrap();
    let stream =
        std::fs::read(root().join("fixtures/invalid/lifecycle/duplicate-run-id.jsonl")).unwrap();
    let out = agui_lens()
        .current_dir(dir.path())
        .args(["check", "-", "--format", "github"])
        .write_stdin(stream)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("::error title=lifecycle/duplicate-run-id::-: "),
        "{stdout}"
    );
    assert!(!stdout.contains("file=-"), "{stdout}");
}
