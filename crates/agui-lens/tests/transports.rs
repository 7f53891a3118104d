//! Every way a stream travels, through the real binary: protobuf frames (read by content,
//! written by `cat`, kept by `compact`), browser captures (HAR), and JSON in any layout.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use crate::common::{agui_lens, fixture_files, root, run, split};

/// The (rule, event index) of every finding `check --format json` reports for a file.
fn verdict(path: &Path) -> (i32, Vec<(String, Option<u64>)>) {
    let (code, stdout, stderr) = run(&["check", "--format", "json", path.to_str().unwrap()]);
    assert!(stderr.is_empty(), "{}: {stderr}", path.display());
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let mut found: Vec<(String, Option<u64>)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_owned(),
                d["event_index"].as_u64(),
            )
        })
        .collect();
    found.sort();
    (code, found)
}

fn events_of(jsonl: &str) -> Vec<Value> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Removes the empty lists `back` has where `original` has nothing: a protobuf run input
/// always has its lists of tools, context and resume entries (the official decoder gives
/// them too).
fn drop_added_empty_lists(back: &mut Value, original: &Value) {
    if let (Value::Object(back), Value::Object(original)) = (back, original) {
        back.retain(|key, value| {
            original.contains_key(key) || !value.as_array().is_some_and(Vec::is_empty)
        });
        for (key, value) in back.iter_mut() {
            if let Some(original) = original.get(key) {
                drop_added_empty_lists(value, original);
            }
        }
    }
}

/// `cat` writes what the official `@ag-ui/proto` encoder writes for the same events
/// (`fixtures/proto/official.pb`, from `reference/proto.mjs`), and reads those bytes back as
/// the events they were made from.
#[test]
fn cat_writes_the_official_encoders_bytes_and_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let pb = dir.path().join("events.pb");
    let (code, _, stderr) = run(&[
        "cat",
        "fixtures/proto/events.jsonl",
        "-o",
        pb.to_str().unwrap(),
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let official = std::fs::read(root().join("fixtures/proto/official.pb")).unwrap();
    assert!(
        std::fs::read(&pb).unwrap() == official,
        "the frames differ from the official encoder's"
    );
    // To stdout, named by --output-format.
    let out = agui_lens()
        .args([
            "cat",
            "fixtures/proto/events.jsonl",
            "--output-format",
            "proto",
        ])
        .output()
        .unwrap();
    assert!(out.stdout == official);
    let (code, stdout, stderr) = run(&["cat", "fixtures/proto/official.pb"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let expected = std::fs::read_to_string(root().join("fixtures/proto/events.jsonl")).unwrap();
    assert_eq!(events_of(&stdout), events_of(&expected));
}

/// Every recorded stream goes to protobuf and back whole, and checks the same either way.
#[test]
fn every_recording_round_trips_through_proto_with_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for path in fixture_files("fixtures/recordings") {
        let name = path.file_name().unwrap().to_str().unwrap();
        if !name.ends_with(".jsonl") || name.contains("invalid") {
            continue;
        }
        let pb = dir.path().join(name).with_extension("pb");
        let back = dir.path().join(name).with_extension("back.jsonl");
        let (code, _, stderr) = run(&["cat", path.to_str().unwrap(), "-o", pb.to_str().unwrap()]);
        assert_eq!((code, stderr.as_str()), (0, ""), "{name}");
        let (code, _, stderr) = run(&["cat", pb.to_str().unwrap(), "-o", back.to_str().unwrap()]);
        assert_eq!((code, stderr.as_str()), (0, ""), "{name}");
        let (_, original, _) = run(&["cat", path.to_str().unwrap()]);
        let again = std::fs::read_to_string(&back).unwrap();
        let mut again = events_of(&again);
        let original = events_of(&original);
        for (back, original) in again.iter_mut().zip(&original) {
            drop_added_empty_lists(back, original);
        }
        assert_eq!(again, original, "{name}");
        assert_eq!(verdict(&pb), verdict(&root().join(&path)), "{name}");
        // The same events in either transport are the same stream at every level: the empty
        // lists a decoder adds are no difference.
        for level in ["events", "compact", "fold"] {
            let (code, stdout, stderr) = run(&[
                "diff",
                "--level",
                level,
                path.to_str().unwrap(),
                pb.to_str().unwrap(),
            ]);
            assert_eq!(
                (code, stderr.as_str()),
                (0, ""),
                "{name} at {level}: {stdout}"
            );
        }
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} recordings");
}

/// Protobuf frames are recognised by their first bytes, whatever the name, compressed or
/// not, from stdin too; a text file named `.pb` is read as the text it is.
#[test]
fn proto_is_recognised_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let pb = root().join("fixtures/valid/agui-sdk-full.pb");
    let bytes = std::fs::read(&pb).unwrap();
    let expected = verdict(&pb);
    assert_eq!(expected.0, 0);
    let misnamed = dir.path().join("capture.jsonl");
    std::fs::write(&misnamed, &bytes).unwrap();
    assert_eq!(verdict(&misnamed), expected);
    let unnamed = dir.path().join("capture.bin");
    std::fs::write(&unnamed, &bytes).unwrap();
    assert_eq!(verdict(&unnamed), expected);
    let gz = dir.path().join("capture.pb.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&bytes).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    assert_eq!(verdict(&gz), expected);
    let out = agui_lens()
        .args(["check", "--format", "json", "-"])
        .write_stdin(bytes.clone())
        .output()
        .unwrap();
    let (code, stdout, _) = split(out);
    assert_eq!(code, 0, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["files"][0]["events"], 33);
    // JSONL under a .pb name.
    let text = dir.path().join("text.pb");
    std::fs::copy(
        root().join("fixtures/recordings/agui-sdk-full.jsonl"),
        &text,
    )
    .unwrap();
    assert_eq!(verdict(&text), expected);
    // A directory walk takes .pb files as streams.
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::copy(&pb, tree.join("a.pb")).unwrap();
    std::fs::copy(
        root().join("fixtures/recordings/agui-sdk-full.jsonl"),
        tree.join("b.jsonl"),
    )
    .unwrap();
    let (code, stdout, _) = run(&["check", tree.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(stdout.contains("checked 2 files, 66 events"), "{stdout}");
}

/// What the protobuf form cannot carry is said event by event, and the copy fails.
#[test]
fn cat_says_what_proto_cannot_carry() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","vendorField":{"a":1}}"#,
            "\n",
            r#"{"type":"THINKING_START"}"#,
            "\n",
            // A double holds neither number (2^63 it holds exactly).
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"big":123456789012345678901234567890,"#,
            r#""long":0.1000000000000000055511151231257827,"edge":-9223372036854775808}}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out.pb");
    let (code, _, stderr) = run(&["cat", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("event 0 (RUN_STARTED): the protobuf form has no place for /vendorField"),
        "{stderr}"
    );
    assert!(
        stderr.contains("event 1 (THINKING_START): not written"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "event 2 (STATE_SNAPSHOT): the protobuf form carries numbers as doubles, which do \
             not hold /snapshot/big, /snapshot/long: written rounded"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("3 of its events lost something (1 of them entirely)"),
        "{stderr}"
    );
    // What could be written, was.
    let (_, stdout, _) = run(&["cat", out.to_str().unwrap()]);
    assert_eq!(events_of(&stdout).len(), 3);
}

/// A key written twice in one object: the protobuf form holds one value per field, so the
/// earlier is left out, and said. It was dropped in silence (exit 0), and the copy checked
/// clean where the input has `framing/duplicate-key` warnings.
#[test]
fn cat_says_the_proto_copy_keeps_one_of_a_repeated_key() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"a":{"b":1,"b":2}}}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out.pb");
    let (code, _, stderr) = run(&["cat", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "event 1 (STATE_SNAPSHOT): the protobuf form holds one value of a key: an earlier \
             `b` in /snapshot/a is left out"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("event 2 (RUN_FINISHED): the protobuf form holds one value of a key"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 of its events lost something"),
        "{stderr}"
    );
    // Written, the last of each as a reader of JSON keeps it.
    let (_, stdout, _) = run(&["cat", out.to_str().unwrap()]);
    let events = events_of(&stdout);
    assert_eq!(events.len(), 3);
    assert_eq!(events[1]["snapshot"]["a"]["b"], 2);
}

/// A required field the event leaves out that the protobuf form always carries (a tool
/// result's `content`, a snapshot's `messages`, a delta's ops) reads back filled in: the
/// schema errors of the input would vanish from the copy. `cat` names each such field with
/// what it reads back as, and the copy is not whole (exit 1).
#[test]
fn cat_names_what_the_proto_copy_fills_in() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c"}"#,
            "\n",
            r#"{"type":"STATE_DELTA"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let (code, found) = verdict(&input);
    assert_eq!(code, 1);
    let violations = |found: &[(String, Option<u64>)]| {
        found
            .iter()
            .filter(|(rule, _)| rule == "schema/violation")
            .count()
    };
    assert_eq!(violations(&found), 2, "{found:?}");
    let out = dir.path().join("out.pb");
    let (code, _, stderr) = run(&["cat", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "event 1 (TOOL_CALL_RESULT): the protobuf form cannot leave out /content: \
             it reads back as []"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("event 2 (STATE_DELTA): the protobuf form cannot leave out /delta"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 of its events lost something (0 of them entirely)"),
        "{stderr}"
    );
    assert!(!stderr.contains("no place for"), "{stderr}");
}

/// A browser capture's stream that came with an error status, or a type that is no event
/// stream's, fails `check`; the copy `cat` makes of it holds the events alone, which check
/// clean: `cat` says what the copy does not carry and exits 1, in every output format.
#[test]
fn cat_of_a_capture_says_the_response_it_cannot_carry() {
    let dir = tempfile::tempdir().unwrap();
    for (capture, said) in [
        ("http-status.har", "502"),
        ("content-type.har", "Content-Type"),
    ] {
        let input = root().join("fixtures/invalid/transport").join(capture);
        let (code, _) = verdict(&input);
        assert_eq!(code, 1, "{capture}");
        for out in ["copy.jsonl", "copy.pb", "copy.sse"] {
            let out = dir.path().join(out);
            let (code, _, stderr) =
                run(&["cat", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            assert_eq!(code, 1, "{capture} -> {}: {stderr}", out.display());
            assert!(
                stderr.contains("not the whole input") && stderr.contains(said),
                "{capture}: {stderr}"
            );
        }
    }
}

/// Compaction never makes a protobuf file larger, as it never makes a JSONL one larger: the
/// official encoder's 38 events, merged into 43 smaller ones, took 70 bytes more, and were
/// written (in place too); the events as read are kept then, and a file in place is left.
#[test]
fn compact_never_makes_a_protobuf_file_larger() {
    let dir = tempfile::tempdir().unwrap();
    let official = root().join("fixtures/proto/official.pb");
    let size = std::fs::metadata(&official).unwrap().len();
    let in_place = dir.path().join("in-place.pb");
    std::fs::copy(&official, &in_place).unwrap();
    let (code, _, stderr) = run(&["compact", in_place.to_str().unwrap(), "--in-place"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(&in_place).unwrap(),
        std::fs::read(&official).unwrap(),
        "{stderr}"
    );
    let out = dir.path().join("out.pb");
    let (code, _, stderr) = run(&[
        "compact",
        official.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::metadata(&out).unwrap().len() <= size, "{stderr}");
    assert!(stderr.contains("kept as they were"), "{stderr}");
}

/// `compact` keeps a protobuf input protobuf, and its result reads back to the same fold.
#[test]
fn compact_keeps_proto_as_proto() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("full.pb");
    let (code, _, stderr) = run(&[
        "compact",
        "fixtures/valid/agui-sdk-full.pb",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(&out).unwrap()[0],
        0,
        "a length prefix, not text"
    );
    let (_, before, _) = run(&["fold", "fixtures/valid/agui-sdk-full.pb"]);
    let (_, after, _) = run(&["fold", out.to_str().unwrap()]);
    assert_eq!(before, after);
}

/// An agent endpoint built on the official `@ag-ui/encoder` (reference/serve.mjs, run with
/// node), serving a recorded stream: its dependencies are installed on first use (`npm ci`
/// in reference/), and it is stopped however the test ends.
struct OfficialEncoder {
    child: std::process::Child,
    port: u16,
}

impl Drop for OfficialEncoder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OfficialEncoder {
    fn start(stream: &str) -> OfficialEncoder {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let reference = crate::common::reference_packages();
        let mut child = Command::new("node")
            .arg(reference.join("serve.mjs"))
            .arg(root().join(stream))
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting node reference/serve.mjs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("serve.mjs said {line:?}"))
            .parse()
            .unwrap();
        OfficialEncoder { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/agent", self.port)
    }
}

/// `run --accept proto` asks for protobuf, reads the frames the official encoder writes as
/// they arrive, and judges them as the same stream over SSE; `--record-raw` keeps the frames.
#[test]
fn run_reads_the_official_encoders_protobuf_live() {
    let server = OfficialEncoder::start("fixtures/recordings/agui-sdk-full.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("live.pb");
    let mut reports = Vec::new();
    for accept in ["proto", "sse"] {
        let (code, stdout, stderr) = run(&[
            "run",
            &server.url(),
            "--message",
            "hi",
            "--accept",
            accept,
            "--format",
            "json",
            "--record-raw",
            raw.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let content_type = if accept == "proto" {
            "application/vnd.ag-ui.event+proto"
        } else {
            "text/event-stream"
        };
        assert!(
            stderr.contains(&format!("200 OK ({content_type})")),
            "{stderr}"
        );
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["summary"]["events"], 33, "{stdout}");
        let rules: Vec<String> = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["rule"].as_str().unwrap().to_owned())
            .collect();
        reports.push(rules);
        if accept == "proto" {
            let bytes = std::fs::read(&raw).unwrap();
            assert_eq!(bytes[0], 0, "protobuf frames start with a length");
            let (code, stdout, _) = run(&["check", raw.to_str().unwrap()]);
            assert_eq!(code, 0, "{stdout}");
            assert!(stdout.contains("33 events"), "{stdout}");
        }
    }
    assert_eq!(reports[0], reports[1]);

    // A suite case asks for protobuf with `accept = "proto"`.
    let suite = dir.path().join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "[[case]]\nname = \"proto\"\nurl = \"{}\"\nmessage = \"hi\"\naccept = \"proto\"\n\
             warn = [\"tool-args/undeclared-tool\"]\n",
            server.url()
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["test", suite.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let case = &doc["cases"][0];
    assert_eq!(case["passed"], true, "{stdout}");
    assert_eq!(case["content_type"], "application/vnd.ag-ui.event+proto");
    assert_eq!(case["events"], 33);
}

/// Events pretty-printed one after another, or as one array, are read as such whatever the
/// file is called, with the verdict of the same events as JSONL.
#[test]
fn json_in_any_layout_is_recognised_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("fixtures/recordings/pydantic-ai-full.jsonl");
    let events = events_of(&std::fs::read_to_string(&source).unwrap());
    let expected = verdict(&source);
    let pretty: String = events
        .iter()
        .map(|e| serde_json::to_string_pretty(e).unwrap() + "\n")
        .collect();
    let array = serde_json::to_string_pretty(&events).unwrap();
    for (name, text) in [
        ("capture.log", &pretty),
        ("capture.txt", &pretty),
        ("capture.json", &pretty),
        ("capture", &pretty),
        ("array.txt", &array),
        ("array.log", &array),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        assert_eq!(verdict(&path), expected, "{name}");
    }
}

/// The hint for a line whose JSON is cut off says what is likely: a line ending where
/// pretty-printed JSON goes on (`{`, `,`) points at --input-format json; one cut mid-token
/// is a truncated capture.
#[test]
fn a_cut_off_line_is_explained_by_how_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(
        &cut,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","ro"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let (_, stdout, _) = run(&["check", cut.to_str().unwrap()]);
    assert!(
        stdout.contains("the line was probably truncated"),
        "{stdout}"
    );
    let open = dir.path().join("open.jsonl");
    std::fs::write(
        &open,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let (_, stdout, _) = run(&["check", open.to_str().unwrap()]);
    assert!(stdout.contains("--input-format json"), "{stdout}");
    assert!(!stdout.contains("probably truncated"), "{stdout}");
}

/// A HAR entry as browsers write one: request headers (credentials among them), a JSON
/// body, and the response body as text or base64.
fn har_entry(url: &str, post: Option<&Value>, mime: &str, body: &[u8], base64: bool) -> Value {
    use base64::Engine as _;
    let text = if base64 {
        base64::engine::general_purpose::STANDARD.encode(body)
    } else {
        String::from_utf8(body.to_vec()).unwrap()
    };
    let mut content = serde_json::json!({"size": body.len(), "mimeType": mime, "text": text});
    if base64 {
        content["encoding"] = "base64".into();
    }
    let mut request = serde_json::json!({
        "method": if post.is_some() { "POST" } else { "GET" },
        "url": url,
        "httpVersion": "HTTP/1.1",
        "headers": [
            {"name": "Authorization", "value": "Bearer SECRET-TOKEN-123"},
            {"name": "Cookie", "value": "session=SECRET-COOKIE-456"}
        ],
        "cookies": [{"name": "session", "value": "SECRET-COOKIE-456"}],
        "queryString": [],
        "headersSize": -1,
        "bodySize": 0
    });
    if let Some(post) = post {
        request["postData"] =
            serde_json::json!({"mimeType": "application/json", "text": post.to_string()});
    }
    serde_json::json!({
        "startedDateTime": "2026-11-25T06:00:00.000Z",
        "time": 12.5,
        "request": request,
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "Set-Cookie", "value": "session=SECRET-COOKIE-456"}],
                     "cookies": [], "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {},
        "timings": {"send": 0, "wait": 10, "receive": 2.5}
    })
}

/// An entry of a page load, which is no AG-UI stream.
fn page_entry() -> Value {
    har_entry(
        "https://app.example/",
        None,
        "text/html",
        b"<html></html>",
        false,
    )
}

fn har(entries: Vec<Value>) -> String {
    serde_json::to_string_pretty(&serde_json::json!({"log": {
        "version": "1.2",
        "creator": {"name": "WebInspector", "version": "537.36"},
        "pages": [],
        "entries": entries
    }}))
    .unwrap()
}

fn sse_of(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|e| format!("data: {e}\n\n").into_bytes())
        .collect()
}

/// A browser capture: each AG-UI stream in it is checked on its own, named by its entry,
/// with the request as what the client held; other entries are skipped and counted; the
/// capture's credentials show in no output.
#[test]
fn a_browser_capture_checks_each_of_its_streams() {
    let dir = tempfile::tempdir().unwrap();
    let input = |run: &str| {
        serde_json::json!({"threadId":"t","runId":run,"state":{"counter":1},"messages":[
            {"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{},
            "protocolVersion":"1.1"})
    };
    // Replaces /counter: applies to the state the request sent, fails on `{}`.
    let first = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r1","protocolVersion":"1.0"}),
        serde_json::json!({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/counter","value":2}]}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r1"}),
    ];
    let second = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r2","protocolVersion":"1.0"}),
        serde_json::json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r2"}),
    ];
    let mut frames = Vec::new();
    for event in &second {
        let encoded = agui_lens_core::protocol::proto::encode_event(event).unwrap();
        agui_lens_core::protocol::proto::push_frame(&encoded.bytes, &mut frames);
    }
    let path = dir.path().join("session.har");
    std::fs::write(
        &path,
        har(vec![
            page_entry(),
            har_entry(
                "https://agent.example/run?token=SECRET-QUERY-789",
                Some(&input("r1")),
                "text/event-stream",
                &sse_of(&first),
                false,
            ),
            har_entry(
                "https://app.example/app.js",
                None,
                "text/javascript",
                b"let a = 1;",
                false,
            ),
            har_entry(
                "https://agent.example/run",
                Some(&input("r2")),
                "application/vnd.ag-ui.event+proto",
                &frames,
                true,
            ),
        ]),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["check", path, "--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let files: Vec<(&str, u64)> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["events"].as_u64().unwrap()))
        .collect();
    let first_name = format!("{path}#1 (POST https://agent.example/run)");
    let second_name = format!("{path}#3 (POST https://agent.example/run)");
    assert_eq!(
        files,
        [(first_name.as_str(), 3), (second_name.as_str(), 3)],
        "{stdout}"
    );
    assert!(
        stderr.contains("2 AG-UI streams read, 2 other entries skipped"),
        "{stderr}"
    );
    // The delta applies to the state the request sent; the open text message is an error.
    let found: Vec<(&str, &str)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [(second_name.as_str(), "lifecycle/open-at-finish")],
        "{stdout}"
    );
    assert_eq!(code, 1);
    // No credential in any output.
    for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
        let (_, stdout, stderr) = run(&["check", path, "--format", format]);
        for secret in ["SECRET-TOKEN-123", "SECRET-COOKIE-456", "SECRET-QUERY-789"] {
            assert!(
                !stdout.contains(secret) && !stderr.contains(secret),
                "{format} shows {secret}"
            );
        }
    }
    // One stream at a time for the commands that read one.
    let (code, _, stderr) = run(&["cat", path]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("holding 2 AG-UI streams (entries 1, 3): pick one with --entry N"),
        "{stderr}"
    );
    let out = dir.path().join("second.jsonl");
    let (code, _, stderr) = run(&["cat", path, "--entry", "3", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let written = events_of(&std::fs::read_to_string(&out).unwrap());
    // With the request that asked for it, as its first RUN_STARTED's input.
    let mut expected = second.to_vec();
    expected[0]["input"] = input("r2");
    assert_eq!(written, expected);
    let (code, stdout, _) = run(&["fold", path, "--entry", "1"]);
    assert_eq!(code, 0);
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        folded["state"],
        serde_json::json!({"counter": 2}),
        "{stdout}"
    );
    let (code, stdout, _) = run(&["check", path, "--entry", "1"]);
    assert_eq!(code, 0, "{stdout}");
    let (code, _, stderr) = run(&["cat", path, "--entry", "2"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("entry 2 of"), "{stderr}");
    // Never rewritten by compact, in place or not.
    let before = std::fs::read(path).unwrap();
    let (code, _, stderr) = run(&["compact", path, "--in-place"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("browser capture (HAR), which compact does not rewrite"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(path).unwrap(), before);
    // Beside a stream in a folder, it is counted as a file left as it was, not as one with
    // no events.
    std::fs::copy(
        root().join("fixtures/recordings/agui-sdk-full.jsonl"),
        dir.path().join("run.jsonl"),
    )
    .unwrap();
    let (code, _, stderr) = run(&["compact", dir.path().to_str().unwrap(), "--in-place"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("left 1 file as it was"), "{stderr}");
    assert!(!stderr.contains("no AG-UI events"), "{stderr}");
    assert_eq!(std::fs::read(path).unwrap(), before);
}

/// A finding in a stream of a browser capture is placed on the capture in the formats that
/// point into files (a SARIF `uri` or a GitHub `file` named `x.har#1 (POST …)` is a file no
/// repository holds, and a dashboard shows the finding nowhere), without the stream's line
/// (which counts in the response body, not in the HAR), with the stream named in its message;
/// two entries' findings stay two. Every format reports every finding.
#[test]
fn findings_in_a_browser_capture_point_at_the_capture_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let open = |run: &str| {
        sse_of(&[
            serde_json::json!({"type":"RUN_STARTED","threadId":run,"runId":run,"protocolVersion":"1.0"}),
            serde_json::json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}),
            serde_json::json!({"type":"RUN_FINISHED","threadId":run,"runId":run}),
        ])
    };
    let input = |run: &str| serde_json::json!({"threadId":run,"runId":run,"state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{},"protocolVersion":"1.1"});
    std::fs::write(
        dir.path().join("session.har"),
        har(vec![
            page_entry(),
            har_entry(
                "https://agent.example/run",
                Some(&input("r1")),
                "text/event-stream",
                &open("r1"),
                false,
            ),
            har_entry(
                "https://agent.example/run",
                Some(&input("r2")),
                "text/event-stream",
                &open("r2"),
                false,
            ),
        ]),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plain.jsonl"),
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.0\"}\n{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    )
    .unwrap();
    let folder = dir.path().to_str().unwrap();
    let capture = dir.path().join("session.har");
    let capture = capture.to_str().unwrap();
    let plain = dir.path().join("plain.jsonl");
    let plain = plain.to_str().unwrap();

    let (code, stdout, _) = run(&["check", folder, "--format", "json"]);
    assert_eq!(code, 1, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let found: Vec<(String, Option<u64>)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap().to_owned(), d["line"].as_u64()))
        .collect();
    let entry = |n: u32| format!("{capture}#{n} (POST https://agent.example/run)");
    assert_eq!(found.len(), 3, "{stdout}");
    for name in [entry(1), entry(2), plain.to_owned()] {
        assert!(
            found.iter().any(|(path, _)| *path == name),
            "{name}: {stdout}"
        );
    }

    let (code, stdout, _) = run(&["check", folder, "--format", "sarif"]);
    assert_eq!(code, 1);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{stdout}");
    let mut fingerprints = std::collections::HashSet::new();
    for r in results {
        let location = &r["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"].as_str().unwrap();
        let message = r["message"]["text"].as_str().unwrap();
        if uri.ends_with("/session.har") {
            assert!(location.get("region").is_none(), "{r}");
            let stream = r["properties"]["stream"].as_str().unwrap();
            assert!(stream == entry(1) || stream == entry(2), "{r}");
            assert!(message.starts_with(&format!("{stream}: ")), "{r}");
            assert_eq!(r["properties"]["streamLine"], 5, "{r}");
        } else {
            assert!(uri.ends_with("/plain.jsonl"), "{r}");
            assert_eq!(location["region"]["startLine"], 3, "{r}");
        }
        fingerprints.insert(
            r["partialFingerprints"]["agui-lens/v2"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(fingerprints.len(), 3, "{stdout}");

    let (code, stdout, _) = run(&["check", folder, "--format", "github"]);
    assert_eq!(code, 1);
    let annotations: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(annotations.len(), 3, "{stdout}");
    let on_capture = format!("::error file={},title=", capture.replace(':', "%3A"));
    assert_eq!(
        annotations
            .iter()
            .filter(|l| l.starts_with(&on_capture))
            .count(),
        2,
        "{stdout}"
    );
    for n in [1, 2] {
        let named = format!("::{}: ", entry(n));
        assert!(annotations.iter().any(|l| l.contains(&named)), "{stdout}");
    }
    assert!(
        annotations
            .iter()
            .any(|l| l.starts_with(&format!("::error file={plain},line=3,"))),
        "{stdout}"
    );

    let (_, stdout, _) = run(&["check", folder, "--format", "jsonl"]);
    assert_eq!(
        stdout.lines().filter(|l| l.contains("\"rule\"")).count(),
        3,
        "{stdout}"
    );
    let (_, stdout, _) = run(&["check", folder, "--format", "junit"]);
    assert_eq!(stdout.matches("<failure ").count(), 3, "{stdout}");
}

/// A stream of a capture can be named as diagnostics name it (`capture.har#2`) by every
/// command, `diff` and `snapshot` among them (which have no `--entry`); a file that has that
/// very name is read as itself. A capture of many streams lists a few of them.
#[test]
fn a_stream_of_a_capture_is_named_as_diagnostics_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let run_of = |run: &str, text: &str| {
        vec![
            serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":run,"protocolVersion":"1.0"}),
            serde_json::json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}),
            serde_json::json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":text}),
            serde_json::json!({"type":"TEXT_MESSAGE_END","messageId":"m"}),
            serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":run}),
        ]
    };
    let (first, second) = (run_of("r1", "hello"), run_of("r2", "goodbye"));
    let stream = |events: &[Value]| {
        har_entry(
            "https://agent.example/run",
            None,
            "text/event-stream",
            &sse_of(events),
            false,
        )
    };
    let capture = dir.path().join("session.har");
    std::fs::write(
        &capture,
        har(vec![page_entry(), stream(&first), stream(&second)]),
    )
    .unwrap();
    let at = |entry: &str| format!("{}#{entry}", capture.display());
    let extracted = dir.path().join("first.jsonl");
    let extracted = extracted.to_str().unwrap();
    let (code, _, stderr) = run(&["cat", &at("1"), "-o", extracted]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        events_of(&std::fs::read_to_string(extracted).unwrap()),
        first
    );
    let (code, stdout, stderr) = run(&["diff", &at("1"), extracted]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, _) = run(&["diff", &at("1"), &at("2")]);
    assert_eq!(code, 1, "{stdout}");
    let (code, stdout, _) = run(&["fold", &at("2")]);
    assert_eq!(code, 0);
    assert!(stdout.contains("goodbye"), "{stdout}");
    let (code, stdout, _) = run(&["check", &at("2"), "--format", "json"]);
    assert_eq!(code, 0, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let path = doc["files"][0]["path"].as_str().unwrap();
    assert!(path.starts_with(&format!("{} (GET", at("2"))), "{path}");
    let expect = dir.path().join("first.snap");
    let (code, _, stderr) = run(&["snapshot", &at("1"), "--expect", expect.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wrote"), "{stderr}");
    let (code, _, stderr) = run(&["check", &at("5")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("entry 5 of"), "{stderr}");
    // Named one way and asked for another: neither is taken over the other in silence.
    let (code, _, stderr) = run(&["check", &at("1"), "--entry", "2"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("names entry 1, and --entry 2 another"),
        "{stderr}"
    );
    let (code, _, _) = run(&["check", &at("1"), "--entry", "1"]);
    assert_eq!(code, 0);
    let (code, _, stderr) = run(&["fold", &at("1"), "--entry", "2"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("names entry 1, and --entry 2 another"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["diff", capture.to_str().unwrap(), extracted]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("name it {}#N", capture.display())),
        "{stderr}"
    );
    // After a file that is no capture, `#1` is part of a name no file has.
    let (code, _, stderr) = run(&["fold", &format!("{extracted}#1")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("No such file"), "{stderr}");
    // A file with that very name is itself.
    let odd = dir.path().join("odd.jsonl#1");
    std::fs::write(&odd, sse_of(&second)).unwrap();
    std::fs::write(dir.path().join("odd.jsonl"), "not read\n").unwrap();
    let (code, stdout, _) = run(&["fold", odd.to_str().unwrap(), "--input-format", "sse"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("goodbye"), "{stdout}");
    // Many streams: the first ten and the last are listed.
    let many: Vec<Value> = (0..30)
        .map(|i| stream(&run_of(&format!("r{i}"), "x")))
        .collect();
    std::fs::write(&capture, har(many)).unwrap();
    let (code, _, stderr) = run(&["fold", capture.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("(entries 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …, 29)"),
        "{stderr}"
    );
}

/// A capture with no AG-UI stream says so, and fails.
#[test]
fn a_browser_capture_without_a_stream_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("page.har");
    std::fs::write(&path, har(vec![page_entry()])).unwrap();
    let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.contains("holds no AG-UI stream: none of its 1 entries"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["fold", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("holds no AG-UI stream"), "{stderr}");
    // Found by a directory walk, it is skipped as no stream, like a sidecar.
    std::fs::copy(
        root().join("fixtures/recordings/agui-sdk-full.jsonl"),
        dir.path().join("run.jsonl"),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["check", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Listed and counted as skipped, as a sidecar is, in every format.
    assert!(
        stdout.lines().any(|l| l.contains("page.har")
            && l.contains(
                "skipped: not a capture (a browser capture (HAR) with no AG-UI stream among its \
                 1 entries)"
            )),
        "{stdout}{stderr}"
    );
    assert!(
        stdout.contains("checked 1 file, 33 events") && stdout.contains("1 skipped"),
        "{stdout}"
    );
    let (_, json, _) = run(&["check", "--format", "json", dir.path().to_str().unwrap()]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["summary"]["skipped"], 1, "{json}");
    assert!(
        json["files"].as_array().unwrap().iter().any(|f| f["path"]
            .as_str()
            .unwrap()
            .ends_with("page.har")
            && f["skipped"].is_string()),
        "{json}"
    );
}

/// A RunAgentInput of thread "t", run "r1", and the events of a run that answers it.
fn one_call() -> (Value, [Value; 2]) {
    let input = serde_json::json!({"threadId":"t","runId":"r1","state":{},"messages":[
        {"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{}});
    let events = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r1"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r1"}),
    ];
    (input, events)
}

/// [`one_call`] as a browser records it: the request sent, and its stream answered 200 as SSE.
fn one_call_entry() -> Value {
    let (input, events) = one_call();
    har_entry(
        "https://agent.example/run",
        Some(&input),
        "text/event-stream",
        &sse_of(&events),
        false,
    )
}

/// A call to an agent in a capture (its request is a RunAgentInput) that brought back no
/// AG-UI stream, an error status, a body the capture left out, is no other traffic: it is
/// named by its entry and fails the check, in every format, beside the streams that came.
/// Found by a walk, a capture of failed calls alone is reported, not skipped.
#[test]
fn a_call_in_a_capture_that_brought_no_stream_is_never_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let (input, _) = one_call();
    let good = one_call_entry();
    let mut failed = har_entry(
        "https://agent.example/run",
        Some(&input),
        "application/json",
        br#"{"detail":"upstream model timed out"}"#,
        false,
    );
    failed["response"]["status"] = 500.into();
    failed["response"]["statusText"] = "Internal Server Error".into();
    let mut bodiless = har_entry(
        "https://agent.example/run",
        Some(&input),
        "text/event-stream",
        b"",
        false,
    );
    bodiless["response"]["content"]
        .as_object_mut()
        .unwrap()
        .remove("text");
    let path = dir.path().join("session.har");
    std::fs::write(
        &path,
        har(vec![page_entry(), good, failed.clone(), bodiless.clone()]),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["check", path]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("#2 (POST https://agent.example/run)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("500") && stderr.contains("upstream model timed out"),
        "{stderr}"
    );
    assert!(
        stderr.contains("#3 (POST https://agent.example/run)"),
        "{stderr}"
    );
    assert!(stderr.contains("no response body"), "{stderr}");
    assert!(stdout.contains("2 files could not be read"), "{stdout}");
    assert!(
        stderr.contains("2 calls to an agent that brought none"),
        "{stderr}"
    );
    let (code, json, _) = run(&["check", "--format", "json", path]);
    assert_eq!(code, 2);
    let json: Value = serde_json::from_str(&json).unwrap();
    let failures: Vec<&str> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["failure"].as_str())
        .collect();
    assert_eq!(failures.len(), 2, "{json}");
    for format in ["sarif", "junit", "github", "jsonl"] {
        let (code, stdout, _) = run(&["check", "--format", format, path]);
        assert_eq!(code, 2, "{format}");
        assert!(
            stdout.contains("upstream model timed out"),
            "{format}: {stdout}"
        );
    }
    // `--entry` of the stream that came checks it alone; of the failed call, fails.
    assert_eq!(run(&["check", "--entry", "1", path]).0, 0);
    assert_eq!(run(&["check", "--entry", "2", path]).0, 2);
    // A command that takes one stream does not pick the one that came in silence, nor does
    // `check` of the capture on stdin.
    for command in ["fold", "inspect", "cat"] {
        let (code, _, stderr) = run(&[command, path]);
        assert_eq!(code, 2, "{command}: {stderr}");
        assert!(stderr.contains("--entry"), "{command}: {stderr}");
        assert_eq!(run(&[command, path, "--entry", "1"]).0, 0, "{command}");
    }
    // `diff` and `snapshot` take no --entry: the way to name the stream is said too.
    let (code, _, stderr) = run(&["diff", path, path]);
    assert_eq!(code, 2);
    assert!(stderr.contains(&format!("{path}#1")), "{stderr}");
    assert_eq!(
        run(&["diff", &format!("{path}#1"), &format!("{path}#1")]).0,
        0
    );
    let output = crate::common::agui_lens()
        .args(["check", "-"])
        .write_stdin(std::fs::read(path).unwrap())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // A capture of failed calls alone, found by a walk, is reported, not skipped.
    let walked = dir.path().join("walked");
    std::fs::create_dir(&walked).unwrap();
    std::fs::write(walked.join("failed.har"), har(vec![page_entry(), failed])).unwrap();
    let (code, stdout, stderr) = run(&["check", walked.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("upstream model timed out"), "{stderr}");
}

/// A call to the agent whose request breaks the RunAgentInput schema (a field left out, which
/// is why an agent answers 422) was taken for other traffic and passed over, and the capture
/// checked clean (exit 0, no result in any format): so was a POST with no body to the URL a
/// stream came from, answered 500, and one answered with an event stream of no AG-UI event.
/// Each is a call that brought no stream, and fails the check.
#[test]
fn a_failed_call_with_a_broken_request_is_no_other_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let good = one_call_entry();
    let url = good["request"]["url"].as_str().unwrap().to_owned();
    let broken = serde_json::json!({"threadId": "t", "runId": "r2", "protocolVersion": "1.1"});
    let mut refused = har_entry(
        "https://agent.example/other",
        Some(&broken),
        "application/json",
        br#"{"detail":"messages: field required"}"#,
        false,
    );
    refused["response"]["status"] = 422.into();
    refused["response"]["statusText"] = "Unprocessable Entity".into();
    let mut bodiless = har_entry(&url, None, "text/plain", b"Internal Server Error", false);
    bodiless["request"]["method"] = "POST".into();
    bodiless["response"]["status"] = 500.into();
    let overloaded = har_entry(
        &url,
        Some(&serde_json::json!({"hello": "there"})),
        "text/event-stream",
        b"data: {\"error\":\"model overloaded\"}\n\n",
        false,
    );
    for (name, failed, said) in [
        ("refused", refused, "field required"),
        ("bodiless", bodiless, "Internal Server Error"),
        ("overloaded", overloaded, "model overloaded"),
    ] {
        let path = dir.path().join(format!("{name}.har"));
        std::fs::write(&path, har(vec![page_entry(), good.clone(), failed])).unwrap();
        let path = path.to_str().unwrap();
        for format in ["human", "json", "sarif", "junit", "github", "jsonl"] {
            let (code, stdout, stderr) = run(&["check", "--format", format, path]);
            let what = format!("{name} {format}: {stdout}{stderr}");
            assert_eq!(code, 2, "{what}");
            assert!(stdout.contains(said) || format == "human", "{what}");
            assert!(stderr.contains(said), "{what}");
        }
    }
    // Other traffic stays other traffic: a POST elsewhere, with no run's ids, and another
    // call of the client's to the agent's endpoint, answered with JSON.
    let info = har_entry(
        &url,
        Some(&serde_json::json!({"method": "info"})),
        "application/json",
        br#"{"agents":["a"]}"#,
        false,
    );
    let mut elsewhere = har_entry(
        "https://telemetry.example/collect",
        Some(&serde_json::json!({"event": "click"})),
        "application/json",
        br#"{"ok":false}"#,
        false,
    );
    elsewhere["response"]["status"] = 500.into();
    let path = dir.path().join("elsewhere.har");
    std::fs::write(&path, har(vec![page_entry(), info, good, elsewhere])).unwrap();
    let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// How a capture's stream was answered is part of what it means: the same events answered 500
/// are another stream than those answered 200 (a client read the one and failed on the
/// other), at every level `diff` compares and in a snapshot; `fold`, which takes the events
/// as they came, says so.
#[test]
fn an_error_status_is_part_of_what_a_captured_stream_means() {
    let dir = tempfile::tempdir().unwrap();
    let mut entry = one_call_entry();
    let answered = dir.path().join("answered.har");
    std::fs::write(&answered, har(vec![entry.clone()])).unwrap();
    entry["response"]["status"] = 500.into();
    entry["response"]["statusText"] = "Internal Server Error".into();
    let failed = dir.path().join("failed.har");
    std::fs::write(&failed, har(vec![entry.clone()])).unwrap();
    let (answered, failed) = (answered.to_str().unwrap(), failed.to_str().unwrap());
    let jsonl = dir.path().join("events.jsonl");
    assert_eq!(run(&["cat", answered, "-o", jsonl.to_str().unwrap()]).0, 0);
    let jsonl = jsonl.to_str().unwrap();
    for level in ["events", "compact", "fold"] {
        let diff = |a: &str, b: &str| run(&["diff", "--level", level, "--color", "never", a, b]);
        assert_eq!(diff(answered, jsonl).0, 0, "{level}");
        assert_eq!(diff(failed, failed).0, 0, "{level}");
        let (code, stdout, _) = diff(answered, failed);
        assert_eq!(code, 1, "{level}: {stdout}");
        assert!(
            stdout.contains("Internal Server Error"),
            "{level}: {stdout}"
        );
        let (code, stdout, _) = run(&["diff", "--level", level, "--format", "json", jsonl, failed]);
        assert_eq!(code, 1, "{level}: {stdout}");
    }
    let snap = dir.path().join("run.snap");
    let f = snap.to_str().unwrap();
    assert_eq!(run(&["snapshot", answered, "--expect", f, "--update"]).0, 0);
    let (code, stdout, _) = run(&["snapshot", failed, "--expect", f, "--color", "never"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("500"), "{stdout}");
    assert_eq!(run(&["snapshot", answered, "--expect", f]).0, 0);
    let (code, stdout, stderr) = run(&["fold", failed]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"messages\""), "{stdout}");
    assert!(
        stderr.contains("answered 500 Internal Server Error") && stderr.contains("as they came"),
        "{stderr}"
    );
    assert_eq!(run(&["fold", answered]).2, "");
    // Nor does extracting the stream lose how it was answered without a word: the copy, the
    // events alone, is not the whole capture (it checks clean), and the exit status says so.
    let out = dir.path().join("out.jsonl");
    let (code, _, stderr) = run(&["cat", failed, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("answered 500 Internal Server Error"),
        "{stderr}"
    );
}

/// A capture's stream answered with an error status is what a client never read: the official
/// client throws on a status that is no success before it reads a byte of the body. The entry
/// is checked, and the status is reported on it as `run` reports it for a live agent, in
/// every format; a stream the browser cut (status 0) is not.
#[test]
fn a_stream_answered_with_an_error_status_is_no_clean_capture() {
    let dir = tempfile::tempdir().unwrap();
    let mut entry = one_call_entry();
    let path = dir.path().join("session.har");
    std::fs::write(&path, har(vec![entry.clone()])).unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(
        run(&["check", path]).0,
        0,
        "the capture as it came is clean"
    );
    entry["response"]["status"] = 500.into();
    entry["response"]["statusText"] = "Internal Server Error".into();
    std::fs::write(path, har(vec![entry.clone()])).unwrap();
    let (code, stdout, stderr) = run(&["check", path]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("error[transport/http-status]")
            && stdout.contains("answered 500 Internal Server Error"),
        "{stdout}"
    );
    for format in ["json", "jsonl", "sarif", "junit", "github"] {
        let (code, stdout, _) = run(&["check", "--format", format, path]);
        assert_eq!(code, 1, "{format}");
        assert!(
            stdout.contains("transport/http-status"),
            "{format}: {stdout}"
        );
    }
    // `inspect` shows the findings `check` reports.
    let (code, stdout, _) = run(&["inspect", path]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("1 error"), "{stdout}");
    let (code, stdout, _) = run(&["inspect", "--format", "json", path]);
    assert_eq!(code, 1);
    assert!(stdout.contains("transport/http-status"), "{stdout}");
    // A redirect's body is no answer the client read either.
    entry["response"]["status"] = 302.into();
    entry["response"]["statusText"] = "Found".into();
    std::fs::write(path, har(vec![entry.clone()])).unwrap();
    let (code, stdout, _) = run(&["check", path]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("answered 302 Found"), "{stdout}");
    // Status 0 is a response the browser did not see to its end (a stop, a closed tab): what
    // came is checked as it is.
    entry["response"]["status"] = 0.into();
    entry["response"]["statusText"] = "".into();
    std::fs::write(path, har(vec![entry])).unwrap();
    let (code, stdout, _) = run(&["check", path]);
    assert_eq!(code, 0, "{stdout}");
}

/// A capture's stream whose response was not declared an event stream is reported as `run`
/// reports a live one (`transport/content-type`); one with no type recorded is not, and a
/// type with parameters is read by its essence.
#[test]
fn a_stream_declared_as_something_else_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (_, events) = one_call();
    let path = dir.path().join("session.har");
    let path = path.to_str().unwrap();
    let with_type = |mime: &str| {
        let entry = har_entry(
            "https://agent.example/run",
            None,
            mime,
            &sse_of(&events),
            false,
        );
        std::fs::write(path, har(vec![entry])).unwrap();
        run(&["check", path, "--format", "json"])
    };
    for mime in ["text/event-stream", "text/event-stream; charset=utf-8", ""] {
        let (code, stdout, _) = with_type(mime);
        assert_eq!(code, 0, "{mime:?}: {stdout}");
    }
    let (code, stdout, _) = with_type("application/json");
    assert_eq!(code, 1, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let found: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["transport/content-type"], "{stdout}");
    assert!(stdout.contains("`application/json`"), "{stdout}");
}

/// `inspect` of a browser capture starts from what the request sent: the conversation holds
/// the user's prompt first, where the client had it, even when the stream does not echo it
/// and a snapshot brings it back (as LangGraph's do).
#[test]
fn inspect_of_a_capture_starts_from_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let request = serde_json::json!({"threadId":"t","runId":"r","state":{},"messages":[
        {"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{}});
    let events = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
        serde_json::json!({"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}),
        serde_json::json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Hello!"}),
        serde_json::json!({"type":"TEXT_MESSAGE_END","messageId":"a1"}),
        serde_json::json!({"type":"MESSAGES_SNAPSHOT","messages":[
            {"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","content":"Hello!"}]}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
    ];
    let path = dir.path().join("langgraph.har");
    let entry = har_entry(
        "http://127.0.0.1:8123/agent",
        Some(&request),
        "text/event-stream",
        &sse_of(&events),
        false,
    );
    std::fs::write(&path, har(vec![entry])).unwrap();
    let page = dir.path().join("report.html");
    let (code, _, stderr) = run(&[
        "inspect",
        path.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    let conversation = html.split("<section id=\"conversation\">").nth(1).unwrap();
    let (user, answer) = (
        conversation.find("<code>u1</code>"),
        conversation.find("<code>a1</code>"),
    );
    assert!(user.is_some() && user < answer, "{conversation}");
    assert!(!conversation.contains("does not say what the client held"));
    // `fold` starts from the same.
    let (_, stdout, _) = run(&["fold", path.to_str().unwrap()]);
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    let ids: Vec<&str> = folded["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["u1", "a1"]);
}

/// `inspect` holds a capture's request to its schema as `check` does: the same finding, and
/// the same failing exit status.
#[test]
fn inspect_of_a_capture_reports_its_request_as_check_does() {
    let har = "fixtures/invalid/request/input-schema.har";
    let (code, stdout, _) = run(&["inspect", har, "--color", "never"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("error[request/input-schema]: the request's RunAgentInput"),
        "{stdout}"
    );
    let (check_code, _, _) = run(&["check", har]);
    assert_eq!(check_code, code);
}

/// A HAR written on one line (as a script's `JSON.stringify(har)` writes it) is a browser
/// capture as much as a pretty-printed one, short or longer than the bytes the format is
/// guessed from, whatever its name.
#[test]
fn a_browser_capture_on_one_line_is_read_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
    ];
    for (padding, name) in [(0, "short.har"), (6000, "long.har"), (6000, "capture.json")] {
        let entry = har_entry(
            &format!("https://agent.example/run?pad={}", "p".repeat(padding)),
            Some(
                &serde_json::json!({"threadId":"t","runId":"r","state":{},"messages":[],
                "tools":[],"context":[],"forwardedProps":{}}),
            ),
            "text/event-stream",
            &sse_of(&events),
            false,
        );
        let pretty: Value = serde_json::from_str(&har(vec![entry])).unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string(&pretty).unwrap()).unwrap();
        let (code, stdout, stderr) = run(&["check", path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let files = doc["files"].as_array().unwrap();
        assert_eq!(files.len(), 1, "{name}: {stdout}");
        assert!(
            files[0]["path"]
                .as_str()
                .unwrap()
                .contains("#0 (POST https://agent.example/run"),
            "{name}: {stdout}"
        );
        assert_eq!(files[0]["events"], 2, "{name}: {stdout}");
    }
}

/// Found by a walk, a browser capture is one whatever its name: `capture.json` or
/// `session.har.json` is judged as `capture.har` is. Its findings are placed on the capture
/// file (a path that exists, in every format that names files), and one that holds no AG-UI
/// stream is skipped as no capture. Before, only `.har` names were opened as captures on a
/// walk: a capture named otherwise had its findings placed on `capture.json#0 (POST …)`, a
/// file no editor or CI annotation finds, and one with no stream failed the run.
#[test]
fn a_walked_capture_is_one_whatever_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let walked = dir.path().join("captures");
    std::fs::create_dir_all(&walked).unwrap();
    let with_stream = root().join("fixtures/invalid/request/input-schema.har");
    for name in ["a.har", "b.json", "c.har.json"] {
        std::fs::copy(&with_stream, walked.join(name)).unwrap();
    }
    let no_stream = har(vec![page_entry()]);
    for name in ["page.har", "page.json", "page.har.json"] {
        std::fs::write(walked.join(name), &no_stream).unwrap();
    }
    let (code, stdout, stderr) = run(&["check", "--format", "json", walked.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["summary"]["skipped"], 3, "{stdout}");
    assert_eq!(report["summary"]["unreadable"], 0, "{stdout}");
    let errors_of = |name: &str| {
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["path"].as_str().unwrap().contains(&format!("/{name}#")))
            .count()
    };
    assert!(errors_of("a.har") > 0, "{stdout}");
    for name in ["b.json", "c.har.json"] {
        assert_eq!(errors_of(name), errors_of("a.har"), "{name}: {stdout}");
    }
    // CI annotations name the capture file itself.
    let (code, stdout, _) = run(&["check", "--format", "github", walked.to_str().unwrap()]);
    assert_eq!(code, 1);
    for line in stdout.lines().filter(|l| l.starts_with("::")) {
        let file = line
            .split("file=")
            .nth(1)
            .and_then(|rest| rest.split([',', ':']).next())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(Path::new(file).is_file(), "{file} in {line}");
    }
    let (_, stdout, _) = run(&["check", "--format", "sarif", walked.to_str().unwrap()]);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    for result in sarif["runs"][0]["results"].as_array().unwrap() {
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(!uri.contains("%23"), "{uri}");
    }
}

/// At the fold level, a browser capture's stream means what `fold` says a client ends with:
/// from the state and messages its request sent. Two captures whose requests differ differ
/// (`diff`, `snapshot`), and so does the stream alone, without its request.
#[test]
fn a_capture_folds_from_its_request_when_compared() {
    let events: Vec<Value> = [
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"ok"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2}]}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
    ]
    .iter()
    .map(|e| serde_json::from_str(e).unwrap())
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let capture = |name: &str, said: &str, keep: &str| {
        let input = serde_json::json!({
            "threadId": "t1", "runId": "r1", "tools": [], "context": [], "forwardedProps": {},
            "messages": [{"id": "u0", "role": "user", "content": said}],
            "state": {"count": 0, "keep": keep},
        });
        let entry = har_entry(
            "https://agent.example/run",
            Some(&input),
            "text/event-stream",
            &sse_of(&events),
            false,
        );
        let path = dir.path().join(name);
        std::fs::write(&path, har(vec![entry])).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let a = capture("a.har", "hello", "A");
    let b = capture("b.har", "delete everything", "B");
    let same = capture("same.har", "hello", "A");
    let alone = dir.path().join("alone.sse");
    std::fs::write(&alone, sse_of(&events)).unwrap();
    let alone = alone.to_str().unwrap();

    let diff = |x: &str, y: &str| run(&["diff", "--level", "fold", x, y]);
    assert_eq!(diff(&a, &same).0, 0);
    let (code, stdout, stderr) = diff(&a, &b);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("delete everything"), "{stdout}");
    assert_eq!(diff(&a, alone).0, 1);
    // `cat` writes the request out with the stream, as the first RUN_STARTED's input (where a
    // stream carries it): the stream it writes means what the capture does, at every level.
    let out = dir.path().join("a.jsonl");
    let out = out.to_str().unwrap();
    let (code, _, stderr) = run(&["cat", &a, "-o", out]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("first RUN_STARTED's input"), "{stderr}");
    for level in ["events", "compact", "fold"] {
        let (code, stdout, stderr) = run(&["diff", "--level", level, &a, out]);
        assert_eq!(code, 0, "{level}: {stdout}{stderr}");
    }
    let (_, folded, _) = run(&["fold", "--compact", out]);
    let folded: Value = serde_json::from_str(&folded).unwrap();
    assert_eq!(
        folded["state"],
        serde_json::json!({"count": 2, "keep": "A"})
    );

    let snap = dir.path().join("a.snap");
    let snap = snap.to_str().unwrap();
    let update = [
        "snapshot", &a, "--expect", snap, "--update", "--level", "fold",
    ];
    assert_eq!(run(&update).0, 0);
    assert_eq!(run(&["snapshot", &same, "--expect", snap]).0, 0);
    let (code, stdout, stderr) = run(&["snapshot", &b, "--expect", snap]);
    assert_eq!(code, 1, "{stdout}{stderr}");
}

/// Read in a format that does not fit (`--input-format proto` on JSONL), a stream's events
/// are not found, and the error says so: it called RUN_STARTED "no AG-UI event type".
#[test]
fn a_forced_format_that_does_not_fit_is_named() {
    let stream = root().join("fixtures/recordings/agui-sdk-full.jsonl");
    let stream = stream.to_str().unwrap();
    for (command, format) in [("fold", "proto"), ("check", "sse"), ("cat", "proto")] {
        let (code, stdout, stderr) = run(&[command, stream, "--input-format", format]);
        let said = format!("{stdout}{stderr}");
        assert_ne!(code, 0, "{command}: {said}");
        assert!(said.contains("check --input-format"), "{command}: {said}");
        assert!(
            !said.contains("is no AG-UI event type"),
            "{command}: {said}"
        );
    }
}

/// `--entry N` past a capture's last entry says so, and how its entries are numbered (it
/// said the entry "is no AG-UI stream").
#[test]
fn an_entry_a_capture_does_not_have_is_named_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.har");
    std::fs::write(&path, har(vec![page_entry(), one_call_entry()])).unwrap();
    let path = path.to_str().unwrap();
    let (code, _, stderr) = run(&["check", "--entry", "99", path]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("has no entry 99: its 2 entries are numbered 0 to 1"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["check", "--entry", "0", path]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("entry 0 of this browser capture (HAR) is no AG-UI stream"),
        "{stderr}"
    );
}

/// A null the protobuf form cannot carry is not dropped in silence: a stream whose null
/// `parentMessageId` 1.0 refuses would read clean once written as protobuf.
#[test]
fn a_null_left_out_of_protobuf_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("nulls.jsonl");
    let mut text = String::new();
    for line in std::fs::read_to_string(root().join("fixtures/valid/agui-sdk-full.jsonl"))
        .unwrap()
        .lines()
    {
        let mut event: serde_json::Value = serde_json::from_str(line).unwrap();
        if event["type"] == "TOOL_CALL_START" {
            event["parentMessageId"] = serde_json::Value::Null;
        }
        text.push_str(&format!("{event}\n"));
    }
    std::fs::write(&input, text).unwrap();
    let pb = dir.path().join("nulls.pb");
    let (code, _, stderr) = run(&["cat", input.to_str().unwrap(), "-o", pb.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("no null") && stderr.contains("/parentMessageId"),
        "{stderr}"
    );
    assert!(stderr.contains("is not the whole input"), "{stderr}");
}

/// A RunAgentInput of thread `t` and run `sent`, and a run `run` answering it: its events,
/// and the same events as protobuf frames.
fn answered_run(sent: &str, run: &str) -> (Value, Vec<Value>, Vec<u8>) {
    let input = serde_json::json!({"threadId":"t","runId":sent,"state":{},"messages":[],
        "tools":[],"context":[],"forwardedProps":{}});
    let events = vec![
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":run,"protocolVersion":"1.0"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":run}),
    ];
    let mut frames = Vec::new();
    for event in &events {
        let encoded = agui_lens_core::protocol::proto::encode_event(event).unwrap();
        agui_lens_core::protocol::proto::push_frame(&encoded.bytes, &mut frames);
    }
    (input, events, frames)
}

/// A browser capture holds the request its stream answered: RUN_STARTED is held to the
/// thread and run it sent, as `run` holds a live answer (`transport/run-id-mismatch`), in
/// every output format.
#[test]
fn a_browser_capture_is_held_to_the_ids_its_request_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (input, events, _) = answered_run("sent", "other");
    let path = dir.path().join("session.har");
    let entry = |post: &Value| {
        har_entry(
            "https://agent.example/run",
            Some(post),
            "text/event-stream",
            &sse_of(&events),
            false,
        )
    };
    std::fs::write(&path, har(vec![entry(&input)])).unwrap();
    let p = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["check", p]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("transport/run-id-mismatch")
            && stdout.contains(r#"runId "other" where the input sent "sent""#),
        "{stdout}"
    );
    for format in ["json", "sarif", "junit", "github"] {
        let (code, stdout, _) = run(&["check", p, "--format", format]);
        assert_eq!(code, 1, "{format}");
        assert!(stdout.contains("run-id-mismatch"), "{format}: {stdout}");
    }
    // The ids it sent, echoed: nothing to say.
    let mut same = input.clone();
    same["runId"] = "other".into();
    std::fs::write(&path, har(vec![entry(&same)])).unwrap();
    let (code, stdout, stderr) = run(&["check", p]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// A client picks its parser by the response's Content-Type, as `run` reads a live body: a
/// capture whose body is SSE under the protobuf type, or protobuf frames under the SSE type,
/// is one the client reads no events from. It used to be read by its content, and pass.
#[test]
fn a_browser_capture_is_read_in_the_transport_its_content_type_names() {
    let dir = tempfile::tempdir().unwrap();
    let (input, events, frames) = answered_run("r", "r");
    let cases = [
        (
            "sse-as-proto.har",
            "application/vnd.ag-ui.event+proto",
            sse_of(&events),
            false,
        ),
        (
            "proto-as-sse.har",
            "text/event-stream",
            frames.clone(),
            true,
        ),
    ];
    for (name, mime, body, base64) in cases {
        let path = dir.path().join(name);
        let entry = har_entry(
            "https://agent.example/run",
            Some(&input),
            mime,
            &body,
            base64,
        );
        std::fs::write(&path, har(vec![entry])).unwrap();
        for format in ["human", "sarif", "junit"] {
            let (code, stdout, stderr) =
                run(&["check", path.to_str().unwrap(), "--format", format]);
            assert_eq!(code, 1, "{name} {format}: {stdout}{stderr}");
            assert!(stdout.contains("framing/"), "{name} {format}: {stdout}");
        }
    }
    // Labelled as what they are, both pass.
    for (name, mime, body, base64) in [
        ("sse.har", "text/event-stream", sse_of(&events), false),
        (
            "proto.har",
            "application/vnd.ag-ui.event+proto",
            frames,
            true,
        ),
    ] {
        let path = dir.path().join(name);
        let entry = har_entry(
            "https://agent.example/run",
            Some(&input),
            mime,
            &body,
            base64,
        );
        std::fs::write(&path, har(vec![entry])).unwrap();
        let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {stdout}{stderr}");
    }
}

/// A capture whose request asked for SSE and got protobuf frames is said to be, as `run`
/// says of a live answer (`transport/not-negotiated`, a warning).
#[test]
fn a_browser_capture_answered_in_a_transport_it_did_not_ask_for_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (input, _, frames) = answered_run("r", "r");
    let path = dir.path().join("notneg.har");
    let mut entry = har_entry(
        "https://agent.example/run",
        Some(&input),
        "application/vnd.ag-ui.event+proto",
        &frames,
        true,
    );
    for (accept, said) in [("text/event-stream", true), ("*/*", false)] {
        entry["request"]["headers"] = serde_json::json!([{"name": "Accept", "value": accept}]);
        std::fs::write(&path, har(vec![entry.clone()])).unwrap();
        let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{accept}: {stdout}{stderr}");
        assert_eq!(
            stdout.contains("transport/not-negotiated"),
            said,
            "{accept}: {stdout}"
        );
    }
}

/// A capture whose response body is marked base64 but is none is said to be so: the body is
/// there, it cannot be read, which "no response body" did not say.
#[test]
fn a_capture_body_that_is_no_base64_is_said_to_be() {
    let dir = tempfile::tempdir().unwrap();
    let (input, events, _) = answered_run("r", "r");
    let mut entry = har_entry(
        "https://agent.example/run",
        Some(&input),
        "text/event-stream",
        &sse_of(&events),
        false,
    );
    entry["response"]["content"]["encoding"] = "base64".into();
    entry["response"]["content"]["text"] = "this is !!! not base64".into();
    let path = dir.path().join("badb64.har");
    std::fs::write(&path, har(vec![entry])).unwrap();
    let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("marks the response body as base64"),
        "{stderr}"
    );
}

/// What the official client reads of a response body (reference/read-body.mjs): the types of
/// the events it hands on, and the error that ended the stream, if any.
fn official_client_reads(body: &Path, content_type: &str) -> Value {
    official_client_reads_in(body, content_type, None)
}

/// `official_client_reads`, in reads of `size` bytes when given (else in one).
fn official_client_reads_in(body: &Path, content_type: &str, size: Option<usize>) -> Value {
    let reference = crate::common::reference_packages();
    let output = std::process::Command::new("node")
        .arg(reference.join("read-body.mjs"))
        .arg(body)
        .arg(content_type)
        .args(size.map(|s| s.to_string()))
        .output()
        .expect("running node reference/read-body.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "read-body.mjs printed {stdout:?}, stderr {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A protobuf message may carry a field the definitions do not have: every decoder passes
/// over it in silence (the official client reads the stream whole), so what it held reaches
/// no one. `check` warns at that frame in every format; `cat` says its copy lacks it (exit
/// 1), `diff` that the events compared lack it; `compact` refuses to write the stream back
/// without it, leaving a file as it was, and compacts it when told to drop it.
#[test]
fn a_field_protobuf_passes_over_is_said_and_not_dropped_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("fixtures/invalid/framing/proto-unknown-field.pb");
    let body = std::fs::read(&fixture).unwrap();
    let pb = dir.path().join("history.pb");
    std::fs::write(&pb, &body).unwrap();
    let read = official_client_reads(&pb, "application/vnd.ag-ui.event+proto");
    assert_eq!(read["types"].as_array().map(Vec::len), Some(5), "{read}");
    assert!(read.get("error").is_none(), "{read}");

    let rule = "framing/proto-unknown-field";
    let pb = pb.to_str().unwrap();
    for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, pb]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(
            crate::common::findings_said(format, &stdout).contains(rule),
            "{format}: {stdout}"
        );
    }
    let found = findings_of(Path::new(pb), rule);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["event_index"], 2, "{found:?}");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("field 99 of ag_ui.TextMessageContentEvent"),
        "{found:?}"
    );

    // A copy lacks the field, in either format, and says so.
    for out in ["copy.jsonl", "copy.pb"] {
        let out = dir.path().join(out);
        let (code, _, stderr) = run(&["cat", pb, "-o", out.to_str().unwrap()]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("not the whole input") && stderr.contains(rule),
            "{stderr}"
        );
    }
    // Compared event by event or compacted, the events lack the field: said (the two
    // streams "meant the same" in silence); folded, what a client ends with is the same.
    let clean = dir.path().join("clean.jsonl");
    let (code, _, _) = run(&["cat", pb, "-o", clean.to_str().unwrap()]);
    assert_eq!(code, 1);
    for level in ["events", "compact", "fold"] {
        let (code, _, stderr) = run(&["diff", "--level", level, pb, clean.to_str().unwrap()]);
        assert_eq!(code, 0, "{level}: {stderr}");
        assert_eq!(stderr.contains(rule), level != "fold", "{level}: {stderr}");
    }
    // A copy of the events before it is whole.
    let (code, stdout, stderr) = run(&["cat", pb, "--to", "1"]);
    assert_eq!((code, stdout.lines().count()), (0, 2), "{stdout}{stderr}");

    // Compacted in place, the stream would lose it: refused, the file as it was.
    let (code, _, stderr) = run(&["compact", "--in-place", pb]);
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("refused") && stderr.contains(rule),
        "{stderr}"
    );
    assert_eq!(std::fs::read(pb).unwrap(), body);
    let (code, _, stderr) = run(&["compact", "--in-place", "--drop-unreadable", pb]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["check", "--format", "json", pb]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains(rule), "{found:?}");
}

/// `@ag-ui/client` ends a protobuf stream at a frame over 10 MiB, and the run is lost from
/// there. The protocol sets no limit, so agui-lens reads the event, and says what the client
/// will do: `check` warns at that frame in every format, `cat` and `compact` warn when they
/// write one (and exit 0: nothing was lost).
#[test]
fn a_frame_over_the_official_clients_limit_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("fixtures/invalid/framing/proto-over-client-limit.pb.gz");
    let mut body = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&fixture).unwrap()),
        &mut body,
    )
    .unwrap();
    let pb = dir.path().join("big.pb");
    std::fs::write(&pb, &body).unwrap();
    let read = official_client_reads(&pb, "application/vnd.ag-ui.event+proto");
    assert_eq!(
        read["types"],
        serde_json::json!(["RUN_STARTED", "TEXT_MESSAGE_START"]),
        "{read}"
    );
    assert!(
        read["error"]
            .as_str()
            .is_some_and(|e| e.contains("size exceeded")),
        "{read}"
    );
    let rule = "framing/proto-over-client-limit";
    let pb = pb.to_str().unwrap();
    for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, pb]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(rule), "{format}: {stdout}");
    }
    let found = findings_of(Path::new(pb), rule);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["severity"], "warning", "{found:?}");
    assert_eq!(found[0]["event_index"], 2, "{found:?}");

    // Back to JSON Lines and to protobuf again: the copy is whole, and said to be too large
    // for the client.
    let jsonl = dir.path().join("big.jsonl");
    let (code, _, stderr) = run(&["cat", pb, "-o", jsonl.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("10 MiB"), "{stderr}");
    let again = dir.path().join("again.pb");
    let (code, _, stderr) = run(&[
        "cat",
        jsonl.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("event 2 (TEXT_MESSAGE_CONTENT)") && stderr.contains("10 MiB"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&again).unwrap(), body);
    let compacted = dir.path().join("compacted.pb");
    let (code, _, stderr) = run(&[
        "compact",
        jsonl.to_str().unwrap(),
        "-o",
        compacted.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("10 MiB"),
        "{stderr}"
    );
}

/// The findings of one rule in `check --format json FILE`.
fn findings_of(file: &Path, rule: &str) -> Vec<Value> {
    let (_, stdout, _) = run(&["check", "--format", "json", file.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == rule)
        .cloned()
        .collect()
}

const SSE_RUN: [&str; 5] = [
    r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
    r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
    r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
    r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
    r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
];

/// SSE frames ended by CR LF (or CR) where the official client looks for two LFs: it splits a
/// body only at `\n\n`, reads the frames on either side as one, and the stream fails there.
/// The SSE grammar reads them (as agui-lens does), the 1.1 HTTP binding has a producer end
/// its lines with LF, and the client cannot: an error, said once, in every format. CR LF
/// where the client still reads every frame (a keep-alive comment, a stream of one frame)
/// is no finding.
#[test]
fn frames_the_official_client_reads_as_one_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let rule = "framing/sse-frames-merged";
    let frames = |ends: &dyn Fn(usize) -> &'static str| -> String {
        SSE_RUN
            .iter()
            .enumerate()
            .map(|(i, e)| format!("data: {e}{}", ends(i)))
            .collect()
    };
    let failing = [
        ("crlf.sse", frames(&|_| "\r\n\r\n")),
        ("cr.sse", frames(&|_| "\r\r")),
        // One frame ended by CR LF among frames ended by LF.
        (
            "one.sse",
            frames(&|i| if i == 2 { "\r\n\r\n" } else { "\n\n" }),
        ),
    ];
    for (name, body) in &failing {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        let read = official_client_reads(&path, "text/event-stream");
        assert!(read["error"].is_string(), "{name}: {read}");
        for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
            let (code, stdout, stderr) =
                run(&["check", "--format", format, path.to_str().unwrap()]);
            assert_eq!(code, 1, "{name} {format}: {stdout}{stderr}");
            assert!(stdout.contains(rule), "{name} {format}: {stdout}");
        }
        let found = findings_of(&path, rule);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        assert_eq!(found[0]["severity"], "error", "{found:?}");
    }
    // Said at the first frame the client cannot read apart from the one before it.
    let found = findings_of(&dir.path().join("crlf.sse"), rule);
    assert_eq!(found[0]["line"], 3, "{found:?}");
    let found = findings_of(&dir.path().join("one.sse"), rule);
    assert_eq!(found[0]["line"], 7, "{found:?}");

    let reading = [
        ("lf.sse", frames(&|_| "\n\n")),
        // A keep-alive comment ended by CR LF before each frame, as a real server sends it.
        (
            "keepalive.sse",
            frames(&|_| "\n\n").replace("data: ", ": keepalive\r\n\r\ndata: "),
        ),
        ("single.sse", format!("data: {}\r\n\r\n", SSE_RUN[0])),
        // CR LF inside a frame's fields, and LF LF after it.
        ("fields.sse", frames(&|_| "\r\n\n")),
    ];
    for (name, body) in &reading {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        let read = official_client_reads(&path, "text/event-stream");
        assert!(read["error"].is_null(), "{name}: {read}");
        assert!(findings_of(&path, rule).is_empty(), "{name}");
    }
    let keepalive = root().join("fixtures/valid/microsoft-agent-framework-keepalive.sse");
    assert!(findings_of(&keepalive, rule).is_empty());
}

/// The official client also ends an SSE stream when a read leaves more than 10 MiB of an
/// unfinished frame waiting (counted in UTF-16 units of the text it holds; the frame here is
/// longer by more than one read): a warning at that frame, as for protobuf.
/// A frame as long in bytes whose text is fewer characters is read, and no finding.
#[test]
fn an_sse_frame_over_the_official_clients_buffer_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let rule = "framing/sse-over-client-limit";
    let long = |text: &str| {
        let mut body = format!("data: {}\n\n", SSE_RUN[0]);
        body.push_str(&format!("data: {}\n\n", SSE_RUN[1]));
        let delta = serde_json::json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":text});
        body.push_str(&format!("data: {delta}\n\n"));
        for e in &SSE_RUN[3..] {
            body.push_str(&format!("data: {e}\n\n"));
        }
        body
    };
    let big = dir.path().join("big.sse");
    std::fs::write(&big, long(&"a".repeat(10 * 1024 * 1024 + 100_000))).unwrap();
    let read = official_client_reads_in(&big, "text/event-stream", Some(65536));
    assert!(
        read["error"]
            .as_str()
            .is_some_and(|e| e.contains("SSE buffer size exceeded")),
        "{read}"
    );
    for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, big.to_str().unwrap()]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(rule), "{format}: {stdout}");
    }
    let found = findings_of(&big, rule);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["severity"], "warning", "{found:?}");
    assert_eq!(found[0]["line"], 5, "{found:?}");
    // Written as SSE by `cat` and `compact`, such a frame is said, as a protobuf one is (exit
    // 0: the copy is whole).
    let jsonl = dir.path().join("big.jsonl");
    let (code, _, stderr) = run(&["cat", big.to_str().unwrap(), "-o", jsonl.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("10 MiB"), "{stderr}");
    let again = dir.path().join("again.sse");
    let (code, _, stderr) = run(&[
        "cat",
        jsonl.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("event 2 (TEXT_MESSAGE_CONTENT)") && stderr.contains("10 MiB"),
        "{stderr}"
    );
    assert_eq!(findings_of(&again, rule).len(), 1);
    let compacted = dir.path().join("compacted.sse");
    let (code, _, stderr) = run(&[
        "compact",
        jsonl.to_str().unwrap(),
        "-o",
        compacted.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("10 MiB"),
        "{stderr}"
    );
    // 11 MiB of bytes, 3.9 million characters: the client reads it.
    let wide = dir.path().join("wide.sse");
    std::fs::write(&wide, long(&"€".repeat(3_900_000))).unwrap();
    assert!(std::fs::metadata(&wide).unwrap().len() > 11 * 1024 * 1024);
    let read = official_client_reads_in(&wide, "text/event-stream", Some(65536));
    assert!(read["error"].is_null(), "{read}");
    assert!(findings_of(&wide, rule).is_empty());
    let (code, _, stderr) = run(&[
        "cat",
        wide.to_str().unwrap(),
        "-o",
        dir.path().join("wide2.sse").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("10 MiB"), "{stderr}");
}

/// A request body the capture stored as base64 (`encoding`, or Chromium's `_encoding`) is
/// decoded and held to the request rules as a text one is; one that cannot be read (base64
/// that is none, text that is no JSON object) is a request error, not a stream checked as if
/// no request had been sent (its findings were lost, and the check passed).
#[test]
fn a_request_body_in_base64_or_unreadable_is_read_or_said() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let bad = serde_json::json!({"threadId":"t","runId":"r","messages":[
        {"id":"u1","role":"human","content":"hi"}],"tools":[],"context":[],"state":{},
        "forwardedProps":{},"protocolVersion":"1.1"});
    let events = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
    ];
    let body = sse_of(&events);
    let with_post = |text: &str, encoding: Option<(&str, &str)>| {
        let mut entry = har_entry(
            "https://agent.example/run",
            Some(&bad),
            "text/event-stream",
            &body,
            false,
        );
        entry["request"]["postData"]["text"] = text.into();
        if let Some((key, value)) = encoding {
            entry["request"]["postData"][key] = value.into();
        }
        entry
    };
    let b64 = base64::engine::general_purpose::STANDARD.encode(bad.to_string());
    let cases = [
        ("plain", with_post(&bad.to_string(), None), "role"),
        (
            "encoding",
            with_post(&b64, Some(("encoding", "base64"))),
            "role",
        ),
        (
            "chromium",
            with_post(&b64, Some(("_encoding", "base64"))),
            "role",
        ),
        (
            "not-base64",
            with_post("%%%", Some(("encoding", "base64"))),
            "base64",
        ),
        ("not-json", with_post("threadId=t", None), "not JSON"),
    ];
    for (name, entry, said) in cases {
        let path = dir.path().join(format!("{name}.har"));
        std::fs::write(&path, har(vec![entry])).unwrap();
        for format in ["human", "json", "sarif", "junit", "github"] {
            let (code, stdout, stderr) =
                run(&["check", "--format", format, path.to_str().unwrap()]);
            assert_eq!(code, 1, "{name} {format}: {stdout}{stderr}");
            assert!(
                stdout.contains("request/input-schema"),
                "{name} {format}: {stdout}"
            );
        }
        let (_, stdout, _) = run(&["check", path.to_str().unwrap()]);
        assert!(stdout.contains(said), "{name}: {stdout}");
    }
}

/// A browser capture holds a client's requests in order, each with the stream that answered
/// it: the next request on a thread is held to what the previous stream left the client
/// holding, by the rules `serve` holds a live client to (`request/history-mismatch`,
/// `missing-tool-result`, `missing-resume`, `state-mismatch`). Each of `serve`'s request
/// fixtures, captured, trips its rule and no other `request/*` one; the two turns done right
/// trip none. (A capture of a client that `serve` failed passed `check`.)
#[test]
fn a_capture_holds_each_next_request_to_the_stream_before() {
    let dir = tempfile::tempdir().unwrap();
    let base = root().join("fixtures/serve");
    let mut folders: Vec<(std::path::PathBuf, Option<String>)> =
        std::fs::read_dir(base.join("request"))
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let rule = format!("request/{}", path.file_name().unwrap().to_string_lossy());
                (path, Some(rule))
            })
            .collect();
    folders.push((base.join("two-turns"), None));
    for (folder, rule) in folders {
        let script = std::fs::read_to_string(folder.join("script.toml")).unwrap();
        let streams: Vec<std::path::PathBuf> = script
            .lines()
            .filter_map(|l| l.strip_prefix("stream = "))
            .map(|s| folder.join(s.trim_matches('"')))
            .collect();
        let requests: Vec<Value> = std::fs::read_to_string(folder.join("requests.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let entries: Vec<Value> = requests
            .iter()
            .zip(&streams)
            .map(|(request, stream)| {
                // The stream as the agent answers this request: its thread and run.
                let events: Vec<Value> = std::fs::read_to_string(stream)
                    .unwrap()
                    .lines()
                    .map(|l| {
                        let mut event: Value = serde_json::from_str(l).unwrap();
                        for key in ["threadId", "runId"] {
                            if event.get(key).is_some() {
                                event[key] = request[key].clone();
                            }
                        }
                        event
                    })
                    .collect();
                har_entry(
                    "http://127.0.0.1:8000/",
                    Some(request),
                    "text/event-stream",
                    &sse_of(&events),
                    false,
                )
            })
            .collect();
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let path = dir.path().join(format!("{name}.har"));
        std::fs::write(&path, har(entries)).unwrap();
        let (_, stdout, stderr) = run(&["check", "--format", "json", path.to_str().unwrap()]);
        let doc: Value =
            serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}{stderr}"));
        let found: std::collections::BTreeSet<String> = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["rule"].as_str())
            .filter(|r| r.starts_with("request/"))
            .map(str::to_owned)
            .collect();
        let want: std::collections::BTreeSet<String> = rule.into_iter().collect();
        assert_eq!(found, want, "{name}: {stdout}");
    }
}

/// A browser says in its capture why a response ended early (Chromium and Playwright:
/// `response._failureText`; DevTools: `response._error`): the page stopped the call
/// (`net::ERR_ABORTED`), which is no finding of the agent's and leaves the stream unjudged
/// where only its end could tell, as a proxy recording cut by its client; or the connection
/// failed (`net::ERR_INCOMPLETE_CHUNKED_ENCODING`), the agent's cut, said as `run` says it
/// live (`transport/connection-lost`). Both read alike before, as a run the agent left open,
/// or, with no body, as a browser that left the body out.
#[test]
fn a_capture_says_whether_the_page_or_the_connection_ended_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let input = serde_json::json!({"threadId":"t","runId":"r","messages":[
        {"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{},
        "forwardedProps":{},"protocolVersion":"1.1"});
    let events = [
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}),
        serde_json::json!({"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}),
        serde_json::json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}),
    ];
    let body = sse_of(&events);
    let entry = |body: &[u8], key: &str, failure: &str| {
        let mut entry = har_entry(
            "https://agent.example/run",
            Some(&input),
            "text/event-stream",
            body,
            false,
        );
        entry["response"][key] = failure.into();
        entry
    };
    let stopped = "net::ERR_ABORTED";
    let lost = "net::ERR_INCOMPLETE_CHUNKED_ENCODING";
    // (name, entry, exit, what every format holds, what the human report holds)
    let cases = [
        (
            "page-stop",
            entry(&body, "_failureText", stopped),
            2,
            "ERR_ABORTED",
        ),
        (
            "devtools-stop",
            entry(&body, "_error", stopped),
            2,
            "ERR_ABORTED",
        ),
        (
            "cut",
            entry(&body, "_failureText", lost),
            1,
            "transport/connection-lost",
        ),
        (
            "devtools-cut",
            entry(&body, "_error", lost),
            1,
            "transport/connection-lost",
        ),
        (
            "page-stop-no-body",
            entry(b"", "_failureText", stopped),
            2,
            "ERR_ABORTED",
        ),
        (
            "cut-no-body",
            entry(b"", "_failureText", lost),
            2,
            "ERR_INCOMPLETE_CHUNKED_ENCODING",
        ),
    ];
    for (name, entry, exit, said) in cases {
        let path = dir.path().join(format!("{name}.har"));
        std::fs::write(&path, har(vec![entry])).unwrap();
        for format in ["human", "json", "jsonl", "sarif", "junit", "github"] {
            let (code, stdout, stderr) =
                run(&["check", "--format", format, path.to_str().unwrap()]);
            assert_eq!(code, exit, "{name} {format}: {stdout}{stderr}");
            // (The human report says an input it could not judge whole on stderr.)
            let said_where = if format == "human" {
                format!("{stdout}{stderr}")
            } else {
                stdout.clone()
            };
            assert!(
                said_where.contains(said),
                "{name} {format}: {stdout}{stderr}"
            );
            // A run the page stopped is not the agent's to end (SARIF lists every rule);
            // one the connection cut is, as `run` says of a live one.
            let stopped = name.contains("stop");
            assert!(
                !(stopped && stdout.contains("lifecycle/unterminated-run")) || format == "sarif",
                "{name} {format}: {stdout}"
            );
            if format == "sarif" {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                let results = doc["runs"][0]["results"].to_string();
                assert_eq!(
                    results.contains("unterminated-run"),
                    name == "cut" || name == "devtools-cut",
                    "{name}: {results}"
                );
                assert_eq!(
                    doc["runs"][0]["invocations"][0]["executionSuccessful"],
                    exit == 1,
                    "{name}"
                );
            }
        }
        let (_, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
        let human = format!("{stdout}{stderr}");
        assert!(!human.contains("may leave out the body"), "{name}: {human}");
        if name.contains("stop") {
            assert!(
                human.contains("the page stopped the call"),
                "{name}: {human}"
            );
            assert!(!human.contains("connection-lost"), "{name}: {human}");
        } else {
            assert!(human.contains(lost), "{name}: {human}");
        }
    }
}

/// A call the page stopped, or whose read failed, never gave the client its end: the client
/// holds what it held before it, and its retry, sending the same history again, is no
/// `request/history-mismatch` (it was held to the half a stream the capture holds, as `serve`
/// does not hold a client's retry).
#[test]
fn a_retry_after_a_call_cut_short_is_held_to_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let input = serde_json::json!({"threadId":"t","runId":"r1","messages":[
        {"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{"n":1},
        "forwardedProps":{},"protocolVersion":"1.1"});
    let mut retry = input.clone();
    retry["runId"] = "r2".into();
    let partial = sse_of(&[
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r1"}),
        serde_json::json!({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}]}),
        serde_json::json!({"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}),
        serde_json::json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}),
    ]);
    let whole = sse_of(&[
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r2"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r2"}),
    ]);
    for failure in ["net::ERR_ABORTED", "net::ERR_INCOMPLETE_CHUNKED_ENCODING"] {
        let mut first = har_entry(
            "https://agent.example/run",
            Some(&input),
            "text/event-stream",
            &partial,
            false,
        );
        first["response"]["_failureText"] = failure.into();
        let second = har_entry(
            "https://agent.example/run",
            Some(&retry),
            "text/event-stream",
            &whole,
            false,
        );
        let path = dir.path().join("retry.har");
        std::fs::write(&path, har(vec![first, second])).unwrap();
        let (_, stdout, stderr) = run(&["check", "--format", "json", path.to_str().unwrap()]);
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let request: Vec<&str> = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["rule"].as_str().unwrap())
            .filter(|r| r.starts_with("request/"))
            .collect();
        assert!(
            request.is_empty(),
            "{failure}: {request:?}\n{stdout}{stderr}"
        );
    }
}

/// A page that runs the official client loads the SDK's scripts, which hold event type names
/// ("TEXT_MESSAGE_START"): a script, a style sheet or a page is other traffic, never a stream
/// (one was read as a stream with `transport/content-type` and `framing/no-events` errors,
/// and a clean capture failed; `fold` asked for `--entry N` among streams that were not).
#[test]
fn the_sdk_scripts_a_page_loads_are_no_streams() {
    let dir = tempfile::tempdir().unwrap();
    let input = serde_json::json!({"threadId":"t","runId":"r","messages":[],"tools":[],
        "context":[],"state":{},"forwardedProps":{},"protocolVersion":"1.1"});
    let stream = sse_of(&[
        serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
        serde_json::json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
    ]);
    let script = b"//#region src/generated/types.ts\nexport const EventType = {\n  TEXT_MESSAGE_START: \"TEXT_MESSAGE_START\",\n  RUN_STARTED: \"RUN_STARTED\"\n};\n";
    let entries = vec![
        page_entry(),
        har_entry(
            "https://app.example/nm/@ag-ui/core/dist/version.mjs",
            None,
            "text/javascript",
            script,
            false,
        ),
        har_entry(
            "https://app.example/nm/@ag-ui/core/dist/index.js",
            None,
            "application/javascript; charset=utf-8",
            script,
            false,
        ),
        har_entry(
            "https://agent.example/run",
            Some(&input),
            "text/event-stream",
            &stream,
            false,
        ),
    ];
    let path = dir.path().join("page.har");
    std::fs::write(&path, har(entries)).unwrap();
    let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("1 AG-UI stream read, 3 other entries skipped"),
        "{stderr}"
    );
    let (code, stdout, stderr) = run(&["fold", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// A capture saved without its response bodies (Playwright's `content: "omit"`, whose
/// requests lose their bodies too, or `"attach"`, whose bodies sit in side files) says so and
/// how to save one that holds them, in every format; it said only that no entry answered
/// with AG-UI events, which sent the user looking at the agent.
#[test]
fn a_capture_saved_without_its_bodies_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let stream = sse_of(&[serde_json::json!({"type":"RUN_STARTED","threadId":"t","runId":"r"})]);
    for how in ["omit", "attach"] {
        let mut entry = har_entry(
            "https://agent.example/run",
            None,
            "text/event-stream",
            &stream,
            false,
        );
        entry["request"]["method"] = "POST".into();
        entry["request"]["postData"] =
            serde_json::json!({"mimeType": "application/json", "text": ""});
        let content = entry["response"]["content"].as_object_mut().unwrap();
        content.remove("text");
        if how == "attach" {
            content.insert("_file".into(), "cbde96c5.dat".into());
        }
        let path = dir.path().join(format!("{how}.har"));
        std::fs::write(&path, har(vec![page_entry(), entry])).unwrap();
        for format in ["human", "json", "sarif", "junit", "github"] {
            let (code, stdout, stderr) =
                run(&["check", "--format", format, path.to_str().unwrap()]);
            assert_eq!(code, 2, "{how} {format}: {stdout}{stderr}");
            let said = format!("{stdout}{stderr}");
            assert!(
                said.contains("left out the response bodies of 1 POST"),
                "{how} {format}: {said}"
            );
            assert!(said.contains("embed"), "{how} {format}: {said}");
        }
    }
}

/// A protobuf body cut inside its first frame's length (a `.pb` of 1–3 bytes) is said to be
/// that by every command that reads it, as `check` says it (`framing/proto-truncated`), not
/// "binary data": `compact` of a folder skipped it under that name.
#[test]
fn a_protobuf_body_cut_in_its_first_length_is_named_so_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("cut.pb"), [0u8, 0]).unwrap();
    let cut = tree.join("cut.pb");
    let cut = cut.to_str().unwrap();
    for args in [
        vec!["fold", cut],
        vec!["cat", cut],
        vec!["check", cut],
        vec!["inspect", cut],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_ne!(code, 0, "{args:?}");
        assert!(
            format!("{stdout}{stderr}").contains("proto-truncated"),
            "{args:?}: {stdout}{stderr}"
        );
        assert!(!stderr.contains("binary data"), "{args:?}: {stderr}");
    }
    let out = dir.path().join("out");
    let (_, _, stderr) = run(&[
        "compact",
        tree.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(stderr.contains("proto-truncated"), "{stderr}");
}
