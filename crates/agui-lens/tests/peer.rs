//! Against real AG-UI servers: the pydantic-ai peer (tests/peers/pydantic-ai, its AG-UI
//! adapter driving a scripted model, no LLM) and the agui-sdk peer (tests/peers/agui-sdk, a
//! scripted run built and encoded by the official Python SDK, run in the same environment). The test sets up its Python environment on
//! first use (tests/peers/pydantic-ai/setup.sh: a venv under target/, pinned packages from
//! PyPI, about half a minute), starts it on a free port of 127.0.0.1, and stops it at the end.
//! `AGUI_LENS_SKIP_PEERS=1` skips it where PyPI cannot be reached.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{agui_lens, root, split};

/// The peer's server process, stopped however the test ends.
pub(crate) struct Peer {
    child: Child,
    port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    pub(crate) fn start() -> Peer {
        Peer::start_script("crates/agui-lens/tests/peers/pydantic-ai/server.py")
    }

    /// Starts a peer server script (relative to the repository) in the peers' environment.
    fn start_script(script: &str) -> Peer {
        // The peers share one environment: two tests must not create it at the same time
        // (one would call pip while the other is still making the venv).
        static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let ready = SETUP.lock().unwrap_or_else(|e| e.into_inner());
        let setup = Command::new("bash")
            .arg(root().join("crates/agui-lens/tests/peers/pydantic-ai/setup.sh"))
            .stderr(Stdio::inherit())
            .output()
            .expect("running crates/agui-lens/tests/peers/pydantic-ai/setup.sh");
        assert!(
            setup.status.success(),
            "setting up the pydantic-ai peer failed (PyPI unreachable? AGUI_LENS_SKIP_PEERS=1 skips this test)"
        );
        drop(ready);
        let python = String::from_utf8(setup.stdout).unwrap();
        let python = python.lines().last().unwrap().trim().to_owned();
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let child = Command::new(python)
            .arg(root().join(script))
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting the pydantic-ai peer");
        let mut peer = Peer { child, port };
        let started = Instant::now();
        while !peer.healthy() {
            if let Ok(Some(status)) = peer.child.try_wait() {
                let mut stderr = String::new();
                let _ = peer
                    .child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr);
                panic!("the peer exited ({status}):\n{stderr}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "the peer did not answer /health within 90 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        peer
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Runs a suite against the peer `jobs` cases at a time, keeping artifacts; the suite
    /// must pass. Returns what it printed.
    fn suite(&self, suite: &str, jobs: &str, artifacts: &std::path::Path, more: &[&str]) -> String {
        let (code, stdout, stderr) = split(
            agui_lens()
                .env("AGUI_PEER_URL", self.url())
                .args(["test", suite, "-j", jobs, "--color", "never", "--artifacts"])
                .arg(artifacts)
                .args(more)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{suite} -j {jobs}: {stdout}{stderr}");
        stdout
    }

    fn healthy(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut answer = String::new();
        stream
            .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    }
}

#[test]
fn pydantic_ai_peer_streams_check_clean() {
    if std::env::var_os("AGUI_LENS_SKIP_PEERS").is_some_and(|v| !v.is_empty()) {
        eprintln!("skipped: AGUI_LENS_SKIP_PEERS is set");
        return;
    }
    let peer = Peer::start();

    // The `full` scenario: reasoning, text, parallel server tools that change state, a
    // frontend tool. It must check clean, with nothing at warning level either.
    let (code, stdout, stderr) = split(
        agui_lens()
            .args([
                "run",
                &peer.url(),
                "--input",
                "crates/agui-lens/tests/peers/pydantic-ai/input.json",
                "--format",
                "json",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["summary"]["errors"], 0, "{stdout}");
    assert_eq!(doc["summary"]["warnings"], 0, "{stdout}");
    assert!(doc["summary"]["events"].as_u64().unwrap() >= 30, "{stdout}");
    assert!(stderr.contains(": 200 OK (text/event-stream"), "{stderr}");

    // Asked for protobuf, the peer (the official Python encoder, which writes only SSE)
    // answers SSE: said, and the stream is still checked, with the same events.
    let (code, stdout, stderr) = split(
        agui_lens()
            .args(["run", &peer.url(), "--accept", "proto", "--format", "json"])
            .args([
                "--input",
                "crates/agui-lens/tests/peers/pydantic-ai/input.json",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let proto_doc: Value = serde_json::from_str(&stdout).unwrap();
    let rules: Vec<&str> = proto_doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["transport/not-negotiated"], "{stdout}");
    assert_eq!(proto_doc["summary"]["events"], doc["summary"]["events"]);

    // The same call made by a browser (Playwright's recordHar driving Chromium, the page on
    // the peer's origin POSTing with fetch) and saved as HAR checks as the live call does.
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("browser.har");
    let capture = std::process::Command::new("node")
        .arg(crate::common::reference_packages().join("har-capture.mjs"))
        .arg(peer.url())
        .arg(root().join("crates/agui-lens/tests/peers/pydantic-ai/input.json"))
        .arg(&har)
        .arg("--chromium")
        .arg(crate::browser::chromium())
        .output()
        .unwrap();
    assert!(
        capture.status.success(),
        "{}",
        String::from_utf8_lossy(&capture.stderr)
    );
    let (code, stdout, stderr) = split(
        agui_lens()
            .args(["check", har.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("1 AG-UI stream read, 1 other entry skipped"),
        "{stderr}"
    );
    let from_har: Value = serde_json::from_str(&stdout).unwrap();
    // The browser's request is a client's, held to the request rules (this input declares no
    // protocolVersion); the stream's findings are the live call's.
    let (request, stream): (Vec<Value>, Vec<Value>) = from_har["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .partition(|d| d["rule"].as_str().unwrap().starts_with("request/"));
    assert_eq!(Value::Array(stream), doc["diagnostics"], "{stdout}");
    let request: Vec<&str> = request
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(request, ["request/protocol-version"], "{stdout}");
    assert_eq!(from_har["summary"]["events"], doc["summary"]["events"]);
    let name = from_har["files"][0]["path"].as_str().unwrap();
    assert!(
        name.contains("browser.har#1 (POST http://127.0.0.1:"),
        "{name}"
    );

    // The tools a live call sent are what the client can execute: the peer calls the
    // frontend tool with a string colour, which a client that declared an integer cannot
    // take. The peer does not echo its input in RUN_STARTED, so only the input sent knows.
    let dir = tempfile::tempdir().unwrap();
    let mut input: Value = serde_json::from_str(
        &std::fs::read_to_string(
            root().join("crates/agui-lens/tests/peers/pydantic-ai/input.json"),
        )
        .unwrap(),
    )
    .unwrap();
    input["tools"][0]["parameters"]["properties"]["color"] = serde_json::json!({"type": "integer"});
    let integer = dir.path().join("integer-colour.json");
    std::fs::write(&integer, input.to_string()).unwrap();
    let (code, stdout, stderr) = split(
        agui_lens()
            .args(["run", &peer.url(), "--input", integer.to_str().unwrap()])
            .args(["--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let found: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["tool-args/schema-violation"], "{stdout}");
    assert!(stdout.contains("call_frontend_1"), "{stdout}");

    // Every scenario the peer has, as a suite, one case at a time and then four at a time,
    // without restarting the peer: fresh ids make every run of the suite a new conversation.
    // One case is a conversation: its frontend tool call is answered in turn 2.
    let dir = tempfile::tempdir().unwrap();
    for jobs in ["1", "4"] {
        let junit = dir.path().join(format!("junit-{jobs}.xml"));
        let artifacts = dir.path().join(format!("artifacts-{jobs}"));
        let stdout = peer.suite(
            "crates/agui-lens/tests/peers/pydantic-ai/suite.toml",
            jobs,
            &artifacts,
            &["--junit", junit.to_str().unwrap()],
        );
        assert!(
            stdout.contains("test result: ok. 13 passed; 0 failed; 11 cases (13 turns)"),
            "{stdout}"
        );
        let junit = std::fs::read_to_string(junit).unwrap();
        assert_eq!(junit.matches("<testcase ").count(), 13);
        assert!(junit.contains("name=\"frontend tool round trip / turn 2\""));
        assert!(!junit.contains("<failure") && !junit.contains("<error"));
        // Turn 2 sent the frontend tool's result after the call, on turn 1's thread.
        let turn = |n: u32| -> Value {
            let path = artifacts.join(format!("11-frontend-tool-round-trip/turn-{n}/request.json"));
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
        };
        let (first, second) = (turn(1), turn(2));
        assert_eq!(first["threadId"], second["threadId"]);
        let messages = second["messages"].as_array().unwrap();
        let answer = messages.last().unwrap();
        assert_eq!(answer["role"], "tool");
        assert_eq!(answer["toolCallId"], "call_frontend_1");
        assert_eq!(answer["content"], "The background is blue now.");
        assert_eq!(
            second["state"]["counter"], 42,
            "the state the server tools set in turn 1 is sent back"
        );
    }
}

#[test]
fn agui_sdk_peer_conversations_answer_tools_and_interrupts() {
    if std::env::var_os("AGUI_LENS_SKIP_PEERS").is_some_and(|v| !v.is_empty()) {
        eprintln!("skipped: AGUI_LENS_SKIP_PEERS is set");
        return;
    }
    let peer = Peer::start_script("crates/agui-lens/tests/peers/agui-sdk/server.py");
    let dir = tempfile::tempdir().unwrap();
    // Twice, without restarting the peer, the second time two cases at a time.
    for jobs in ["1", "2"] {
        let artifacts = dir.path().join(format!("artifacts-{jobs}"));
        let stdout = peer.suite(
            "crates/agui-lens/tests/peers/agui-sdk/suite.toml",
            jobs,
            &artifacts,
            &[],
        );
        assert!(
            stdout.contains("test result: ok. 4 passed; 0 failed; 2 cases (4 turns)"),
            "{stdout}"
        );
        let request = |case: &str, turn: u32| -> Value {
            let path = artifacts.join(format!("{case}/turn-{turn}/request.json"));
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
        };
        // The tool result answers the call the SDK's run left pending.
        let events = std::fs::read_to_string(
            artifacts.join("01-frontend-tool-round-trip/turn-1/events.jsonl"),
        )
        .unwrap();
        let finished: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
        let pending = &finished["outcome"]["pendingToolCallIds"][0];
        let second = request("01-frontend-tool-round-trip", 2);
        let answer = second["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(&answer["toolCallId"], pending, "{answer}");
        assert_eq!(answer["content"], r##"{"color":"#336699","ok":true}"##);
        // The resume answers the interrupt the first run ended on.
        let events =
            std::fs::read_to_string(artifacts.join("02-interrupt-then-resume/turn-1/events.jsonl"))
                .unwrap();
        let finished: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
        let interrupt = &finished["outcome"]["interrupts"][0]["id"];
        let resumed = request("02-interrupt-then-resume", 2);
        assert_eq!(&resumed["resume"][0]["interruptId"], interrupt);
        assert_eq!(resumed["resume"][0]["status"], "resolved");
        assert_eq!(resumed["resume"][0]["payload"]["approved"], true);
    }
}
