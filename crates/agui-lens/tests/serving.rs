//! `agui-lens serve` with real parts: the official `@ag-ui/client` HttpAgent
//! (reference/client.mjs, run with node) against recordings under every fault, a two-turn
//! script whose second request is held to the `request/*` rules, a fixture per rule sent
//! with ureq, and the command from the outside (bad scripts, two at once, SIGTERM).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{fixture_files, root, run};

/// A `serve` child on a free port, killed however the test ends (unless it exited).
pub(crate) struct Served {
    pub(crate) child: Child,
    pub(crate) url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// `agui-lens serve ARGS`.
    pub(crate) fn start(args: &[&str]) -> Served {
        Served::command("serve", args)
    }

    /// `agui-lens COMMAND ARGS`, for a command that prints `listening on URL` first.
    pub(crate) fn command(command: &str, args: &[&str]) -> Served {
        Served::command_with(command, args, |_| {})
    }

    /// [`Served::command`], the command prepared by `prepare` before it starts.
    pub(crate) fn command_with(
        command: &str,
        args: &[&str],
        prepare: impl FnOnce(&mut Command),
    ) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        crate::common::with_default_signals(&mut child, None);
        prepare(&mut child);
        let mut child = child
            .arg(command)
            .args(args)
            .args(["--color", "never"])
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting agui-lens serve");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("serve said {line:?}"))
            .to_owned();
        child.stdout = Some(stdout.into_inner());
        Served { child, url }
    }

    /// POSTs a RunAgentInput as a client would, reads the answer until it holds `until`, and
    /// goes away (the connection closed) with the rest still to come.
    pub(crate) fn post_and_hang_up(&self, until: &str) {
        self.post_this_and_hang_up(r#"{"threadId":"t","runId":"r","messages":[]}"#, until);
    }

    /// [`Served::post_and_hang_up`] with the given body.
    pub(crate) fn post_this_and_hang_up(&self, body: &str, until: &str) {
        use std::io::{Read, Write};
        let address = self.url.trim_start_matches("http://").trim_end_matches('/');
        let mut client = std::net::TcpStream::connect(address).unwrap();
        write!(
            client,
            "POST / HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains(until) {
            let n = client.read(&mut buf).unwrap();
            assert!(n > 0, "{}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
    }

    /// Waits for a `--once` server to exit: its status, the rest of stdout, and stderr.
    pub(crate) fn finish(mut self) -> (i32, String, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        let mut err = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (status.code().unwrap_or(-1), out, err)
    }
}

/// What the official HttpAgent ends with after running against `url` (see reference/client.mjs).
pub(crate) fn client(url: &str, options: &Value) -> Value {
    clients(&[(url.to_owned(), options.clone())]).remove(0)
}

/// [`client`] for several runs, one after the other in one node process.
fn clients(runs: &[(String, Value)]) -> Vec<Value> {
    use std::io::Write;
    let reference = crate::common::reference_packages();
    let mut child = Command::new("node")
        .arg(reference.join("client.mjs"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running node reference/client.mjs");
    let pairs: Vec<Value> = runs
        .iter()
        .map(|(url, options)| json!([url, options]))
        .collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json!(pairs).to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let got: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    assert_eq!(
        got.len(),
        runs.len(),
        "client.mjs printed {stdout:?}, stderr {}",
        String::from_utf8_lossy(&output.stderr)
    );
    got
}

/// `agui-lens fold` of a recording, its state `{}` where it sets none (a client starts there).
fn fold(recording: &str) -> Value {
    let (code, stdout, stderr) = run(&["fold", "--compact", recording]);
    assert_eq!(code, 0, "{recording}: {stderr}");
    let mut folded: Value = serde_json::from_str(&stdout).unwrap();
    if folded["state"].is_null() {
        folded["state"] = json!({});
    }
    folded
}

/// The client a recording was made for: the history and state its first RUN_STARTED says
/// the agent was sent (a recording of a later turn starts from them, and so does its fold).
fn client_for(recording: &str) -> Value {
    let text = std::fs::read_to_string(root().join(recording)).unwrap();
    let input = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|e| e["type"] == "RUN_STARTED")
        .and_then(|e| e.get("input").cloned())
        .unwrap_or(Value::Null);
    json!({
        "messages": input.get("messages").cloned().unwrap_or(json!([])),
        "state": input.get("state").cloned().filter(|s| !s.is_null()).unwrap_or(json!({})),
        "timeoutMs": 10000,
    })
}

/// The recordings that are streams (the `-invalid` ones are error bodies, refused: see
/// `a_script_that_is_no_stream_is_refused`).
fn recordings() -> Vec<String> {
    fixture_files("fixtures/recordings")
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".jsonl") && !p.contains("-invalid"))
        .collect()
}

/// The fold of every recording, made once for all the faults each is served under.
fn folds() -> &'static BTreeMap<String, Value> {
    static FOLDS: OnceLock<BTreeMap<String, Value>> = OnceLock::new();
    FOLDS.get_or_init(|| {
        recordings()
            .into_iter()
            .map(|recording| {
                let folded = fold(&recording);
                (recording, folded)
            })
            .collect()
    })
}

fn assert_folds_as(got: &Value, want: &Value, what: &str) {
    assert_eq!(
        got["ok"], true,
        "{what}: the client failed: {}",
        got["error"]
    );
    assert_eq!(got["messages"], want["messages"], "{what}: messages");
    assert_eq!(got["state"], want["state"], "{what}: state");
}

/// Every recording under `fault`, one server each, the client run against each (twice when
/// `also_proto`, the second asking for protobuf): what it ends with is what `fold` says.
fn every_recording_folds_under(fault: &[&str], also_proto: bool) {
    let recordings = recordings();
    assert!(recordings.len() >= 20);
    let servers: Vec<Served> = recordings
        .iter()
        .map(|recording| {
            let mut args = vec![recording.as_str()];
            args.extend_from_slice(fault);
            Served::start(&args)
        })
        .collect();
    let mut runs = Vec::new();
    for (recording, server) in recordings.iter().zip(&servers) {
        runs.push((server.url.clone(), client_for(recording)));
        if also_proto {
            let mut proto = client_for(recording);
            proto["proto"] = json!(true);
            runs.push((server.url.clone(), proto));
        }
    }
    let got = clients(&runs);
    let per = if also_proto { 2 } else { 1 };
    for (i, recording) in recordings.iter().enumerate() {
        let want = &folds()[recording];
        for (j, got) in got[i * per..(i + 1) * per].iter().enumerate() {
            let how = if j == 1 { " as protobuf" } else { "" };
            assert_folds_as(got, want, &format!("{recording} {fault:?}{how}"));
        }
    }
}

/// A client that hangs up halfway is said to have done so: serve reported the turn as served
/// in full ("42 events … as SSE", "1 request answered"). Under `--once` the script was not
/// served whole: the run is not clean (it exited 0, every report clean), and the report says
/// why.
#[test]
fn a_client_that_hangs_up_is_said_to() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("serve.json");
    let served = Served::start(&[
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "--once",
        "--drip",
        "0.1",
        "--report",
        &report.to_string_lossy(),
        "--format",
        "json",
    ]);
    // Gone after the first event, with 40-odd to come.
    served.post_and_hang_up("RUN_STARTED");
    let (code, stdout, stderr) = served.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("the client went away after") && stderr.contains("not served whole"),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let failure = doc["files"][0]["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("not served whole"), "{doc}");
}

/// Stopped (Ctrl-C) while a turn's body is under way, serve said the turn was served: its
/// report counted the whole stream's events, no failure, a passing "conforms" testcase. The
/// turn is said cut by the stop, in every report.
#[test]
fn a_turn_cut_by_stopping_the_server_is_said_to_be() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    for format in ["json", "junit"] {
        let report = dir.path().join(format!("serve.{format}"));
        let served = Served::start(&[
            "fixtures/recordings/pydantic-ai-full.jsonl",
            "--once",
            "--drip",
            "0.1",
            "--report",
            &report.to_string_lossy(),
            "--format",
            format,
        ]);
        let address = served
            .url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let mut client = std::net::TcpStream::connect(&address).unwrap();
        let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
        write!(
            client,
            "POST / HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains("RUN_STARTED") {
            let n = client.read(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        // SAFETY: kill on the pid of a child the test owns and has not waited for.
        unsafe { libc::kill(served.child.id() as libc::pid_t, libc::SIGINT) };
        let (code, stdout, stderr) = served.finish();
        drop(client);
        assert_eq!(code, 130, "{stdout}{stderr}");
        assert!(stderr.contains("not served whole"), "{stderr}");
        let text = std::fs::read_to_string(&report).unwrap();
        assert!(text.contains("stopped while"), "{text}");
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc["summary"]["interrupted"], 1, "{doc}");
            assert_ne!(doc["files"][0]["events"], 42, "{doc}");
        } else {
            assert!(!text.contains("errors=\"0\""), "{text}");
        }
    }
}

/// A client that hangs up during `--pause` is seen to go at once, not when the pause ends
/// and the next write fails: its retry waited for the turn (up to 10 s) meanwhile. Here the
/// pause is ten minutes and `--once` ends as soon as the turn is seen cut.
#[test]
fn a_client_that_hangs_up_during_a_pause_is_seen_to_go_at_once() {
    let served = Served::start(&[
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "--once",
        "--pause",
        "600",
    ]);
    // After the last event before the pause, halfway (gone right after RUN_STARTED, the
    // client is seen to go by the writes before the pause).
    served.post_and_hang_up(r#""toolCallName":"set_counter","type":"TOOL_CALL_START"}"#);
    let (code, stdout, stderr) = served.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("the client went away after 2755 of the body's 5519 bytes"),
        "{stderr}"
    );
}

/// A client that went away during a turn holds what it held before it (it never had the
/// turn's end), and a retry of its request is served that turn again. serve used to hold the
/// retry to the whole stream (blaming the client for a history it never got) and serve it
/// the next turn.
#[test]
fn a_turn_cut_by_the_client_is_served_again_to_its_retry() {
    let requests =
        std::fs::read_to_string(root().join("fixtures/serve/two-turns/requests.jsonl")).unwrap();
    let lines: Vec<&str> = requests.lines().collect();
    let served = Served::start(&[
        "fixtures/serve/two-turns/script.toml",
        "--once",
        "--drip",
        "0.05",
    ]);
    served.post_this_and_hang_up(lines[0], "RUN_STARTED");
    let mut bodies = Vec::new();
    for line in &lines {
        let mut response = ureq::post(&served.url).send(*line).unwrap();
        bodies.push(response.body_mut().read_to_string().unwrap());
    }
    assert!(
        bodies[0].contains("change_background"),
        "turn 1 again: {}",
        bodies[0]
    );
    assert!(
        bodies[1].contains("the background is blue"),
        "{}",
        bodies[1]
    );
    let (code, stdout, stderr) = served.finish();
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// Two requests of one thread at once (a client that submits twice): the second waits for
/// the first's stream to end and is held to it, as one sent after it is. It used to be
/// served the next turn with nothing to hold it to, and pass.
#[test]
fn a_second_request_of_a_thread_waits_for_the_first() {
    let requests =
        std::fs::read_to_string(root().join("fixtures/serve/two-turns/requests.jsonl")).unwrap();
    let first = requests.lines().next().unwrap().to_owned();
    let served = Served::start(&[
        "fixtures/serve/two-turns/script.toml",
        "--once",
        "--drip",
        "0.05",
    ]);
    let both: Vec<_> = (0..2)
        .map(|_| {
            let (url, body) = (served.url.clone(), first.clone());
            std::thread::spawn(move || {
                let mut response = ureq::post(&url).send(&body).unwrap();
                response.body_mut().read_to_string().unwrap()
            })
        })
        .collect();
    for one in both {
        one.join().unwrap();
    }
    let (code, stdout, stderr) = served.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("request/history-mismatch"), "{stdout}");
}

#[test]
fn httpagent_ends_with_the_fold_of_every_recording() {
    every_recording_folds_under(&[], true);
}

/// The faults a client must survive, each on every recording: HttpAgent survives them all,
/// ending with the fold.
#[test]
fn httpagent_survives_split_frames_bom_comments_fields_and_a_drip() {
    let faults: &[&[&str]] = &[
        &["--split-bytes"],
        &["--split-random", "7"],
        &["--split-random", "1234"],
        &["--bom"],
        &["--comments"],
        &["--fields"],
        &["--bom", "--comments", "--fields", "--split-random", "99"],
        &["--drip", "0.002"],
        &["--transport", "proto", "--split-bytes"],
    ];
    for fault in faults {
        every_recording_folds_under(fault, false);
    }
}

/// Faults HttpAgent 1.0.0 does not get through, each pinned as it behaves today: a fatal
/// fault ends the run with an error, except where the client has a defect (marked DEFECT).
/// When one of these starts to fail, the client changed: update the README's list.
#[test]
fn httpagent_under_fatal_faults_and_its_defects() {
    let recording = "fixtures/recordings/pydantic-ai-full.jsonl";
    let want = fold(recording);
    let options = client_for(recording);
    let under = |fault: &[&str], options: &Value| {
        let mut args = vec![recording];
        args.extend_from_slice(fault);
        let server = Served::start(&args);
        client(&server.url, options)
    };

    // An error status with an HTML body: the run fails, naming the status.
    let got = under(&["--status", "502"], &options);
    assert_eq!(got["ok"], false);
    assert!(
        got["error"].as_str().unwrap().starts_with("HTTP 502"),
        "{got}"
    );

    // A pause shorter than the client waits is survived.
    let got = under(&["--pause", "1.5"], &options);
    assert_folds_as(&got, &want, "--pause 1.5");

    // A pause longer than the client waits: its own timeout ends the run.
    let mut patient = options.clone();
    patient["timeoutMs"] = json!(1000);
    let got = under(&["--pause", "3"], &patient);
    assert_eq!(got["ok"], false);
    assert!(
        got["error"].as_str().unwrap().contains("longer than"),
        "{got}"
    );

    // A cut inside a frame (the chunked body never ends): the run fails, but with a JSON
    // parse error of the half frame, which the SSE standard says is dropped, not parsed.
    let got = under(&["--cut"], &options);
    assert_eq!(got["ok"], false);
    assert!(got["error"].as_str().unwrap().contains("JSON"), "{got}");

    // DEFECT: a body that ends cleanly halfway, without the run's terminal event, is a
    // truncated run, which a consumer "MUST NOT report as having succeeded" (1.1, Transports,
    // Truncation): runAgent resolves as if the run had finished, with half the conversation.
    // A reset halfway ends the same way: Node's fetch ends the body quietly at the reset.
    for fault in ["--truncate", "--reset"] {
        let got = under(&[fault], &options);
        assert_eq!(got["ok"], true, "{fault}: {got}");
        let messages = got["messages"].as_array().unwrap();
        assert!(
            messages.len() < want["messages"].as_array().unwrap().len(),
            "{fault}"
        );
        assert_ne!(got["state"], want["state"], "{fault}");
    }

    // CRLF and CR line ends fail the run with a JSON parse error (frames are looked for
    // between "\n\n"). No violation: the 1.1 SSE binding has producers frame with LF and
    // leaves the rest of the SSE grammar to a consumer that MAY accept it.
    for ends in ["crlf", "cr"] {
        let got = under(&["--line-ends", ends], &options);
        assert_eq!(got["ok"], false, "{ends}");
        assert!(
            got["error"].as_str().unwrap().contains("JSON"),
            "{ends}: {got}"
        );
    }

    // A wrong content type is not refused: the body is read as SSE all the same.
    let got = under(&["--content-type", "text/html"], &options);
    assert_folds_as(&got, &want, "--content-type text/html");
}

/// Sends each request of `requests.jsonl` in turn (reading each stream to its end) to a
/// `serve --once` of `script.toml`, and returns what it printed and its status.
fn send_fixture(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let script = dir.join("script.toml");
    let script = script.to_string_lossy();
    let mut args = vec![script.as_ref(), "--once"];
    args.extend_from_slice(extra);
    let server = Served::start(&args);
    let requests = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap();
    for line in requests.lines() {
        let mut response = ureq::post(&server.url)
            .header("Content-Type", "application/json")
            .send(line)
            .unwrap();
        let body = response.body_mut().read_to_string().unwrap();
        assert!(body.contains("RUN_FINISHED"), "{body}");
    }
    let (code, stdout, stderr) = server.finish();
    (code, stdout, stderr)
}

/// `fixtures/serve/request/history-mismatch` pins `request/history-mismatch`: each trips its
/// rule alone, and what the user sees is snapshotted.
#[test]
fn serve_fixtures_trip_their_rule() {
    let base = root().join("fixtures/serve/request");
    let mut dirs: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 8);
    for dir in dirs {
        let stem = dir.file_name().unwrap().to_string_lossy().into_owned();
        let rule = format!("request/{stem}");
        let (code, stdout, stderr) = send_fixture(&dir, &[]);
        let rules: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.split_once('[')?.1.split_once(']').map(|(r, _)| r))
            .collect();
        assert!(!rules.is_empty(), "{rule}: {stdout}\n{stderr}");
        assert!(rules.iter().all(|r| *r == rule), "{rule}: {stdout}");
        let is_error = stdout.contains("error[");
        assert_eq!(code, i32::from(is_error), "{rule}: {stderr}");
        insta::assert_snapshot!(format!("serve__request__{stem}"), stdout);
    }
}

/// The same exchange done right trips nothing: `--once` exits 0, and the JSON report says so.
#[test]
fn a_clean_two_turn_exchange_passes_and_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let report_arg = report.to_string_lossy();
    let (code, stdout, stderr) = send_fixture(
        &root().join("fixtures/serve/two-turns"),
        &["--report", &report_arg, "--format", "json"],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stdout.contains('['), "{stdout}");
    assert!(
        stderr.contains("2 requests answered: 0 errors, 0 warnings"),
        "{stderr}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["summary"]["errors"], 0, "{report}");
    // The events of the two turns served: 11 and 6.
    assert_eq!(report["summary"]["events"], 17, "{report}");
}

/// The official client through a two-turn script with a frontend tool call: its second
/// request answers the call and holds what it folded, so it passes every request/* rule.
/// The same request with the tool result dropped trips `request/missing-tool-result`.
#[test]
fn httpagent_answers_the_frontend_tool_call_on_the_next_turn() {
    let script = "fixtures/serve/two-turns/script.toml";
    let server = Served::start(&[script, "--once"]);
    let tools = json!([{"name": "change_background", "description": "Change the page background colour.",
        "parameters": {"type": "object", "properties": {"color": {"type": "string"}}}}]);
    let got = client(
        &server.url,
        &json!({"threadId": "thread-1", "turns": 2, "tools": tools,
            "messages": [{"id": "u1", "role": "user", "content": "paint the page blue"}]}),
    );
    assert_eq!(got["ok"], true, "{got}");
    let (code, stdout, stderr) = server.finish();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stdout.contains('['), "{stdout}");
    assert!(
        stderr.contains("request 2 (thread thread-1, turn 2)"),
        "{stderr}"
    );
    let roles: Vec<&str> = got["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(got["state"], json!({"background": "blue", "turns": 2}));

    // The client's second request, with its tool message taken out.
    let server = Served::start(&[script, "--once"]);
    let first = json!({"threadId": "thread-1", "runId": "r1", "protocolVersion": "1.1",
        "messages": [{"id": "u1", "role": "user", "content": "paint the page blue"}],
        "state": {}, "tools": tools, "context": [], "forwardedProps": {}});
    let mut second = first.clone();
    second["runId"] = json!("r2");
    second["state"] = got["state"].clone();
    second["state"]["turns"] = json!(1);
    second["state"]["background"] = json!("white");
    let mut messages: Vec<Value> = got["messages"].as_array().unwrap()[..3].to_vec();
    messages.retain(|m| m["role"] != "tool");
    second["messages"] = json!(messages);
    for input in [&first, &second] {
        let mut response = ureq::post(&server.url)
            .header("Content-Type", "application/json")
            .send(input.to_string())
            .unwrap();
        response.body_mut().read_to_string().unwrap();
    }
    let (code, stdout, _) = server.finish();
    assert_eq!(code, 1);
    assert!(
        stdout.contains("error[request/missing-tool-result]: the request does not answer the tool call call-1 (change_background)"),
        "{stdout}"
    );
    assert!(!stdout.contains("history-mismatch"), "{stdout}");
}

#[test]
fn a_missing_script_is_refused() {
    let (code, _, stderr) = run(&["serve", "no/such/script.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such/script.jsonl"), "{stderr}");
    assert!(stderr.contains("No such file"), "{stderr}");
}

#[test]
fn a_script_that_is_no_stream_is_refused() {
    let (code, stdout, stderr) = run(&["serve", "fixtures/recordings/pydantic-ai-invalid.jsonl"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "nothing listens: {stdout}");
    assert!(stderr.contains("holds no AG-UI events"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[turn]]\nstreem = \"a.jsonl\"\n").unwrap();
    let (code, _, stderr) = run(&["serve", &bad.to_string_lossy()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is no serve script"), "{stderr}");
    assert!(stderr.contains("streem"), "{stderr}");
}

/// A protobuf recording whose frames carry fields the definitions lack is served without
/// them (its events are encoded again), and serve says so as it starts: a client of the
/// replay sees less than one of the recorded agent did.
#[test]
fn a_protobuf_recording_served_without_fields_it_carried_says_so() {
    let (stdout, stderr) = served_once("fixtures/invalid/framing/proto-unknown-field.pb");
    assert!(
        stderr.contains("framing/proto-unknown-field") && stderr.contains("served lack them"),
        "{stdout}\n{stderr}"
    );
}

/// Frames serve cannot send again (events holding half of a UTF-16 pair, which it cannot
/// encode; JSON that is no event object) are said as it starts: they were left out of the
/// replay in silence, a message's text with them.
#[test]
fn frames_a_replay_leaves_out_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("split.jsonl");
    std::fs::write(
        &stream,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"a\ud83d"}"#,
            "\n",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ude00b"}"#,
            "\n",
            "[1, 2]\n",
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n"
        ),
    )
    .unwrap();
    let (stdout, stderr) = served_once(stream.to_str().unwrap());
    assert!(
        stderr.contains("3 frames are not served")
            && stderr.contains("2 events hold half of a UTF-16 surrogate pair")
            && stderr.contains("1 is no event at all"),
        "{stdout}\n{stderr}"
    );
}

/// `serve SCRIPT --once` asked for one turn (thread t, run r): what it said on stdout and stderr.
fn served_once(script: &str) -> (String, String) {
    let server = Served::start(&[script, "--once"]);
    let mut response = ureq::post(&server.url)
        .header("Content-Type", "application/json")
        .send(r#"{"threadId":"t","runId":"r","messages":[],"state":{},"tools":[],"context":[],"forwardedProps":{}}"#)
        .unwrap();
    response.body_mut().read_to_string().unwrap();
    let (_, stdout, stderr) = server.finish();
    (stdout, stderr)
}

/// Two servers on port 0 get two ports, and each answers.
#[test]
fn two_servers_at_once_listen_on_two_free_ports() {
    let recording = "fixtures/recordings/agui-sdk-text.jsonl";
    let recording = if root().join(recording).exists() {
        recording
    } else {
        "fixtures/recordings/pydantic-ai-text.jsonl"
    };
    let a = Served::start(&[recording]);
    let b = Served::start(&[recording]);
    assert_ne!(a.url, b.url);
    for server in [&a, &b] {
        assert!(server.url.starts_with("http://127.0.0.1:"));
        let body = ureq::get(&server.url)
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        assert!(body.contains("agui-lens serve"));
    }
}

/// SIGTERM while a stream is paused halfway: the server stops at once with 143, and the
/// findings it had are printed (here, the request's missing protocolVersion).
/// Its report says the stop (a stream under way was cut by it): SARIF's invocation is
/// unsuccessful, as the exit status is not 0; it used to say the run succeeded.
#[test]
fn sigterm_halfway_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("serve.sarif");
    let server = Served::start(&[
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "--pause",
        "60",
        "--report",
        &report.to_string_lossy(),
        "--format",
        "sarif",
    ]);
    let url = server.url.clone();
    let request = std::thread::spawn(move || {
        let response = ureq::post(&url)
            .header("Content-Type", "application/json")
            .send(r#"{"threadId":"t","runId":"r","messages":[],"state":{},"tools":[],"context":[],"forwardedProps":{}}"#);
        let _ = response.map(|mut r| r.body_mut().read_to_string());
    });
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let (code, stdout, _) = server.finish();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(code, 143);
    assert!(stdout.contains("[request/protocol-version]"), "{stdout}");
    request.join().unwrap();
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
}

/// A stream of fixtures/serve/streams as the SSE body a capture holds.
fn served_as_sse(name: &str) -> String {
    let text = std::fs::read_to_string(root().join("fixtures/serve/streams").join(name)).unwrap();
    text.lines().map(|l| format!("data: {l}\n\n")).collect()
}

/// A browser capture of a conversation is a script: its AG-UI streams are the turns, and the
/// entries that are something else are skipped.
#[test]
fn a_browser_capture_is_served_turn_by_turn() {
    let entry = |url: &str, mime: &str, body: String| {
        json!({"request": {"method": "POST", "url": url, "headers": [],
                "postData": {"mimeType": "application/json", "text": "{}"}},
            "response": {"status": 200, "headers": [],
                "content": {"mimeType": mime, "text": body}}})
    };
    let har = json!({"log": {"version": "1.2", "entries": [
        entry("http://agent/run", "text/event-stream", served_as_sse("frontend-call.jsonl")),
        entry("http://agent/health", "application/json", "{\"ok\":true}".into()),
        entry("http://agent/run", "text/event-stream", served_as_sse("after-call.jsonl")),
    ]}});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conversation.har");
    // Pretty-printed, as browsers write them.
    std::fs::write(&path, serde_json::to_string_pretty(&har).unwrap()).unwrap();
    let server = Served::start(&[&path.to_string_lossy(), "--once"]);
    let requests =
        std::fs::read_to_string(root().join("fixtures/serve/two-turns/requests.jsonl")).unwrap();
    let mut bodies = Vec::new();
    for line in requests.lines() {
        let mut response = ureq::post(&server.url).send(line).unwrap();
        bodies.push(response.body_mut().read_to_string().unwrap());
    }
    assert!(bodies[0].contains("change_background") && !bodies[1].contains("change_background"));
    assert!(bodies[1].contains("the background is blue"));
    let (code, stdout, stderr) = server.finish();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("2 turns from"), "{stderr}");
}

/// A turn of a capture whose response came with an error status is served with that status,
/// as the client met it, not as a stream it never read.
#[test]
fn a_captured_error_status_is_served_as_it_came() {
    let entry = |status: u16, reason: &str, body: String| {
        json!({"request": {"method": "POST", "url": "http://agent/run", "headers": [],
                "postData": {"mimeType": "application/json", "text": "{}"}},
            "response": {"status": status, "statusText": reason, "headers": [],
                "content": {"mimeType": "text/event-stream", "text": body}}})
    };
    let har = json!({"log": {"version": "1.2", "entries": [
        entry(200, "OK", served_as_sse("frontend-call.jsonl")),
        entry(503, "Service Unavailable", served_as_sse("after-call.jsonl")),
    ]}});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conversation.har");
    std::fs::write(&path, har.to_string()).unwrap();
    let server = Served::start(&[&path.to_string_lossy(), "--once"]);
    let requests =
        std::fs::read_to_string(root().join("fixtures/serve/two-turns/requests.jsonl")).unwrap();
    let client = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build(),
    );
    let mut answers = Vec::new();
    for line in requests.lines() {
        let mut response = client.post(&server.url).send(line).unwrap();
        let status = response.status().as_u16();
        answers.push((status, response.body_mut().read_to_string().unwrap()));
    }
    assert_eq!(answers[0].0, 200);
    assert!(answers[0].1.contains("change_background"));
    assert_eq!(answers[1].0, 503, "{answers:?}");
    let (_, stdout, stderr) = server.finish();
    assert!(
        stderr.contains("503 Service Unavailable"),
        "{stdout}\n{stderr}"
    );
}

/// The log says what the client was sent: an error page for `--status`, half a stream for
/// `--truncate`, not "42 events … as SSE".
#[test]
fn the_log_says_what_a_fault_sent() {
    for (fault, said) in [
        (
            &["--status", "503"][..],
            "answered 503 with an HTML page (--status)",
        ),
        (&["--truncate"], "the body ended halfway"),
    ] {
        let mut args = vec!["fixtures/recordings/pydantic-ai-full.jsonl", "--once"];
        args.extend_from_slice(fault);
        let served = Served::start(&args);
        let _ = ureq::post(&served.url)
            .send(r#"{"threadId":"t","runId":"r","messages":[],"protocolVersion":"1.1"}"#)
            .map(|mut r| r.body_mut().read_to_string());
        let (_, stdout, stderr) = served.finish();
        assert!(stderr.contains(said), "{fault:?}: {stdout}{stderr}");
    }
}

/// Under `--status`, a client gets an error page and reads none of the turn's events: its next
/// request (a retry, sending what it held before) is held to that, not to the turn's stream.
/// It used to be held to the whole stream, and charged with history it never received.
#[test]
fn a_turn_answered_with_an_error_status_leaves_the_client_where_it_was() {
    let requests =
        std::fs::read_to_string(root().join("fixtures/serve/two-turns/requests.jsonl")).unwrap();
    let first = requests.lines().next().unwrap();
    let served = Served::start(&[
        "fixtures/serve/two-turns/script.toml",
        "--once",
        "--status",
        "503",
    ]);
    for _ in 0..2 {
        let status = match ureq::post(&served.url).send(first) {
            Ok(response) => response.status().as_u16(),
            Err(ureq::Error::StatusCode(code)) => code,
            Err(other) => panic!("{other}"),
        };
        assert_eq!(status, 503);
    }
    let (_, stdout, stderr) = served.finish();
    assert!(
        !stdout.contains("request/history-mismatch") && !stderr.contains("history-mismatch"),
        "{stdout}{stderr}"
    );
    assert!(stderr.contains("answered 503"), "{stderr}");
}

/// Served as protobuf, a script whose events the wire cannot carry whole (an event 1.0's
/// messages have no place for, a field the message lacks) is said to reach the client less
/// those parts, naming them, as `cat -o x.pb` names them; the client is held to what it was
/// sent. Served as SSE, nothing is said.
#[test]
fn what_protobuf_cannot_carry_of_a_script_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("lossy.jsonl");
    let lines = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","extra":1}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"THINKING_START"}"#,
        r#"{"type":"THINKING_END"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ];
    std::fs::write(&script, lines.join("\n") + "\n").unwrap();
    for (transport, lossy) in [("proto", true), ("sse", false)] {
        let server = Served::start(&[script.to_str().unwrap(), "--transport", transport, "--once"]);
        let mut response = ureq::post(&server.url)
            .header("Content-Type", "application/json")
            .send(r#"{"threadId":"t","runId":"r","messages":[],"protocolVersion":"1.1"}"#)
            .unwrap();
        let _ = response.body_mut().read_to_vec();
        let (_, stdout, stderr) = server.finish();
        if lossy {
            assert!(
                stderr.contains("event 1 (TEXT_MESSAGE_START) without /extra")
                    && stderr.contains("event 3 (THINKING_START) left out")
                    && stderr.contains("event 4 (THINKING_END) left out"),
                "{stdout}{stderr}"
            );
        } else {
            assert!(!stderr.contains("left out"), "{stdout}{stderr}");
        }
    }
}

/// A request whose messages hold one id twice breaks "a messageId MUST be unique within its
/// thread" as a snapshot that does: `reference/duplicate-message-id`, found by `serve` (and
/// so by the proxy and in a browser capture, which hold requests to the same rules).
#[test]
fn a_request_with_a_message_id_twice_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let stream = root().join("fixtures/serve/streams/activity.jsonl");
    std::fs::write(
        dir.path().join("script.toml"),
        format!("[[turn]]\nstream = {:?}\n", stream.to_str().unwrap()),
    )
    .unwrap();
    let request = json!({"threadId":"thread-1","runId":"r1","protocolVersion":"1.1","state":{},
        "messages":[{"id":"u1","role":"user","content":"a"},{"id":"u1","role":"user","content":"b"}],
        "tools":[],"context":[],"forwardedProps":{}});
    std::fs::write(dir.path().join("requests.jsonl"), format!("{request}\n")).unwrap();
    let (code, stdout, stderr) = send_fixture(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("error[reference/duplicate-message-id]") && stdout.contains("\"u1\""),
        "{stdout}"
    );
}

/// Requests with no thread id (missing, or a number) are of no thread: each is held to its
/// schema alone, not to the turn another such request was served (the second was blamed
/// for the first's history and state, as the same thread's next turn).
#[test]
fn requests_with_no_thread_id_are_not_one_thread() {
    let stream = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let server = Served::start(&[stream.to_str().unwrap()]);
    for body in [
        json!({"runId":"r1","messages":[],"protocolVersion":"1.0"}),
        json!({"threadId":5,"runId":"r2","messages":[],"protocolVersion":"1.0"}),
    ] {
        let mut response = ureq::post(&server.url)
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .unwrap();
        let body = response.body_mut().read_to_string().unwrap();
        assert!(body.contains("RUN_FINISHED"), "{body}");
    }
    // SAFETY: a signal to the child this test started, which it has not reaped.
    unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM) };
    let (code, stdout, stderr) = server.finish();
    assert_eq!(code, 143, "{stdout}\n{stderr}");
    assert!(stdout.contains("request/input-schema"), "{stdout}");
    for rule in ["history-mismatch", "state-mismatch", "missing-tool-result"] {
        assert!(!stdout.contains(rule), "{rule}: {stdout}");
    }
    // Each is named as of no thread (it was "(thread , turn 1)").
    let said = format!("{stdout}{stderr}");
    assert!(!said.contains("(thread , turn"), "{said}");
    assert!(said.contains("(no threadId, turn 1)"), "{said}");
}

/// `--transport auto` reads Accept as HTTP has it: protobuf asked for in capitals is
/// protobuf, protobuf refused with `q=0` is SSE (as the official encoder picks).
#[test]
fn auto_transport_reads_accept_as_http_does() {
    let proto = "application/vnd.ag-ui.event+proto";
    for (accept, want) in [
        (proto.to_ascii_uppercase(), proto),
        (
            format!("{proto};q=0, text/event-stream"),
            "text/event-stream",
        ),
        ("text/event-stream".to_owned(), "text/event-stream"),
    ] {
        let server = Served::start(&["fixtures/recordings/pydantic-ai-text.jsonl", "--once"]);
        let response = ureq::post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", &accept)
            .send(r#"{"threadId":"t","runId":"r","messages":[],"protocolVersion":"1.1"}"#)
            .unwrap();
        let got = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        drop(response);
        let _ = server.finish();
        assert!(got.starts_with(want), "{accept}: {got}");
    }
}

/// `serve` and `proxy` that cannot listen (the port is taken) still write `--report`, saying
/// so, in every format: a CI step that uploads the report finds one (it found no file), and
/// it is no pass.
#[test]
fn a_port_that_is_taken_is_said_in_the_report() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    for command in ["serve", "proxy"] {
        for format in ["json", "jsonl", "sarif", "junit", "github", "human"] {
            let report = dir.path().join(format!("{command}.{format}"));
            let mut args = vec![command];
            if command == "serve" {
                args.push("fixtures/recordings/pydantic-ai-text.jsonl");
            } else {
                args.extend(["--upstream", "http://127.0.0.1:9/"]);
            }
            args.extend([
                "--listen",
                &listen,
                "--report",
                report.to_str().unwrap(),
                "--format",
                format,
            ]);
            let (code, stdout, stderr) = crate::common::run(&args);
            assert_eq!(code, 2, "{command} {format}: {stdout}{stderr}");
            let written = std::fs::read_to_string(&report)
                .unwrap_or_else(|_| panic!("{command} {format}: no report; {stderr}"));
            assert!(
                written.contains("listening on"),
                "{command} {format}: {written}"
            );
            if format == "sarif" {
                let doc: Value = serde_json::from_str(&written).unwrap();
                assert_eq!(
                    doc["runs"][0]["invocations"][0]["executionSuccessful"],
                    false
                );
            }
        }
    }
}

/// A script that breaks the protocol is said so when serve starts, and the client is not
/// blamed for what the script left unsettled: a patch that fails here (`copy` from an
/// array's `length`) is one the official client applies with JavaScript's semantics, so the
/// state its next request sends is no `request/state-mismatch` (it was one, a finding
/// against a client for a divergence the script caused).
#[test]
fn a_script_that_breaks_the_protocol_is_said_and_the_client_not_blamed_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r1"}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"b":{"c":[1,2,3]}}}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"copy","from":"/b/c/length","path":"/z"}]}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}"#,
    ];
    std::fs::write(dir.path().join("patch.jsonl"), lines.join("\n") + "\n").unwrap();
    let second = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r2"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r2"}"#,
    ];
    std::fs::write(dir.path().join("second.jsonl"), second.join("\n") + "\n").unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[[turn]]\nstream = \"patch.jsonl\"\n[[turn]]\nstream = \"second.jsonl\"\n",
    )
    .unwrap();
    let request = |run: &str, state: Value| {
        json!({"threadId":"t","runId":run,"protocolVersion":"1.1","state":state,
            "messages":[],"tools":[],"context":[],"forwardedProps":{}})
    };
    // What the official client holds after turn 1 (`reference/fold.mjs` of the stream).
    let requests = [
        request("r1", json!({})),
        request("r2", json!({"b":{"c":[1,2,3]},"z":3})),
    ];
    let text: String = requests.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.path().join("requests.jsonl"), text).unwrap();
    let (code, stdout, stderr) = send_fixture(dir.path(), &[]);
    assert!(!stdout.contains("state-mismatch"), "{stdout}\n{stderr}");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("turn 1 of the script")
            && stderr.contains("state/patch-failed")
            && stderr.contains("patch.jsonl"),
        "{stderr}"
    );
    // A script that is clean says nothing of itself.
    let (_, _, stderr) = send_fixture(&root().join("fixtures/serve/two-turns"), &[]);
    assert!(!stderr.contains("of the script"), "{stderr}");
}

/// A body that is JSON but no object (`[]`, `null`, a string) is no RunAgentInput: refused
/// as a body that is no JSON is (400, `request/input-schema`), and no turn of a thread. It
/// was served a stream as turn 1 of a thread named "", so the next such request was then
/// blamed for the history of the first.
#[test]
fn a_body_that_is_no_object_takes_no_turn() {
    let stream = root().join("fixtures/serve/streams/activity.jsonl");
    let server = Served::start(&[stream.to_str().unwrap(), "--once"]);
    for body in ["[]", "null", "\"hi\""] {
        let response = lenient(&server.url, body);
        assert_eq!(response, 400, "{body}");
    }
    let good = json!({"threadId":"t","runId":"r1","protocolVersion":"1.1","state":{},
        "messages":[],"tools":[],"context":[],"forwardedProps":{}});
    assert_eq!(lenient(&server.url, &good.to_string()), 200);
    let (code, stdout, stderr) = server.finish();
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert_eq!(
        stdout.matches("error[request/input-schema]").count(),
        3,
        "{stdout}"
    );
    assert!(!stdout.contains("history-mismatch"), "{stdout}");
    assert!(!stderr.contains("thread , turn"), "{stderr}");
    assert!(stderr.contains("request 4 (thread t, turn 1)"), "{stderr}");
}

/// A body sent gzip-encoded (`Content-Encoding: gzip`) is read as what it encodes: it was
/// blamed as "not JSON" (`request/input-schema`, 400). An encoding agui-lens does not
/// decode is named as the reason, not the client's JSON.
#[test]
fn an_encoded_body_is_read_as_what_it_encodes() {
    let stream = root().join("fixtures/serve/streams/activity.jsonl");
    let server = Served::start(&[stream.to_str().unwrap(), "--once"]);
    let good = json!({"threadId":"t","runId":"r1","protocolVersion":"1.1","state":{},
        "messages":[],"tools":[],"context":[],"forwardedProps":{}});
    let post = |encoding: &str, body: Vec<u8>| {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let mut response = agent
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Content-Encoding", encoding)
            .send(&body[..])
            .unwrap();
        let _ = response.body_mut().read_to_vec();
        response.status().as_u16()
    };
    assert_eq!(post("br", b"\x0b\x02\x80{}\x03".to_vec()), 400);
    assert_eq!(
        post("gzip", crate::common::gzip(good.to_string().as_bytes())),
        200
    );
    let (code, stdout, stderr) = server.finish();
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert_eq!(
        stdout.matches("error[request/input-schema]").count(),
        1,
        "{stdout}"
    );
    assert!(stdout.contains("encoded as `br`"), "{stdout}");
    assert!(!stdout.contains("not JSON"), "{stdout}");
}

/// POSTs `body` as JSON and returns the status, whatever it is.
fn lenient(url: &str, body: &str) -> u16 {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)
        .unwrap();
    let _ = response.body_mut().read_to_vec();
    response.status().as_u16()
}

/// Under a fault the spec makes fatal (`--truncate`: the body ends without the run's terminal
/// event), a client that takes the run as failed and retries it with what it held before is
/// served that turn again and blamed for nothing: it was held to the half stream and got
/// `request/history-mismatch`, while a client that went on as if the run had succeeded
/// passed.
#[test]
fn a_retry_after_a_fatal_fault_is_served_the_turn_again() {
    let dir = root().join("fixtures/serve/two-turns");
    let script = dir.join("script.toml");
    let server = Served::start(&[script.to_str().unwrap(), "--truncate"]);
    let requests = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap();
    let first: Value = serde_json::from_str(requests.lines().next().unwrap()).unwrap();
    let mut retry = first.clone();
    retry["runId"] = "r1-retry".into();
    for body in [&first, &retry] {
        let mut response = ureq::post(&server.url)
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .unwrap();
        let _ = response.body_mut().read_to_vec();
    }
    // SAFETY: kill on the pid of a child this test owns and has not waited for.
    unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM) };
    let (_, stdout, stderr) = server.finish();
    assert!(!stdout.contains("request/"), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("request 2 (thread thread-1, turn 1)"),
        "{stderr}"
    );
}
