//! `agui-lens proxy` with real parts: the official HttpAgent talking to the pydantic-ai peer
//! through it, and byte-for-byte forwarding checked against `serve`, whose bytes are known.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::server::{Script, Server, Step, clean_run, frame, long_answer};
use crate::common::{root, run};
use crate::peer::Peer;
use crate::serving::{Served, client};

fn findings_rules(jsonl: &str) -> Vec<String> {
    let mut rules: Vec<String> = jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|d| d["rule"].as_str().map(str::to_owned))
        .collect();
    rules.sort();
    rules
}

/// HttpAgent through the proxy to the pydantic-ai peer: the run completes for the client,
/// the recording holds what the client got, and the findings are `run`'s on the same input.
#[test]
fn httpagent_through_the_proxy_to_the_pydantic_ai_peer() {
    if std::env::var_os("AGUI_LENS_SKIP_PEERS").is_some_and(|v| !v.is_empty()) {
        eprintln!("skipped: AGUI_LENS_SKIP_PEERS is set");
        return;
    }
    let peer = Peer::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &["--upstream", &peer.url(), "--record", &record_arg, "--once"],
    );
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(
            root().join("crates/agui-lens/tests/peers/pydantic-ai/input.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let got = client(
        &proxy.url,
        &json!({"threadId": "thread-proxied", "messages": input["messages"], "state": input["state"],
            "tools": input["tools"]}),
    );
    assert_eq!(got["ok"], true, "{got}");
    let (code, stdout, stderr) = proxy.finish();
    assert!(
        stderr.contains("exchange 1 (thread thread-proxied): 200 text/event-stream"),
        "{stderr}"
    );

    // What was recorded is what the client folded.
    let at = record.join("001");
    let events = at.join("events.jsonl");
    let request = at.join("request.json");
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(&request).unwrap()).unwrap();
    assert_eq!(sent["threadId"], "thread-proxied");
    let (fold_code, folded, _) = run(&[
        "fold",
        "--compact",
        "--initial-state",
        &sent["state"].to_string(),
        &events.to_string_lossy(),
    ]);
    assert_eq!(fold_code, 0);
    let folded: Value = serde_json::from_str(&folded).unwrap();
    let got_new: Vec<&Value> = got["messages"].as_array().unwrap()[1..].iter().collect();
    let folded_messages: Vec<&Value> = folded["messages"].as_array().unwrap().iter().collect();
    assert_eq!(got_new, folded_messages);
    assert_eq!(got["state"], folded["state"]);
    assert!(
        std::fs::read(at.join("response.raw"))
            .unwrap()
            .starts_with(b"data: ")
    );

    // The findings are `run`'s on the same input, against the peer directly (no file: none).
    let recorded = match std::fs::read_to_string(at.join("findings.jsonl")) {
        Ok(text) => {
            assert!(!text.is_empty(), "an empty findings file");
            text
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => panic!("{err}"),
    };
    let (_, direct, _) = run(&[
        "run",
        &peer.url(),
        "--input",
        &request.to_string_lossy(),
        "--format",
        "jsonl",
    ]);
    assert_eq!(
        findings_rules(&recorded),
        findings_rules(&direct),
        "{stdout}"
    );
    assert_eq!(code, i32::from(stdout.contains("error[")), "{stdout}");
}

/// The proxy passes the stream on byte for byte (`serve` splits it at random points, so
/// chunk boundaries are nothing to rely on), records the request and the body but never a
/// header, and holds the next request on a thread to what the stream left the client holding.
#[test]
fn proxy_forwards_byte_for_byte_and_checks_the_next_turn() {
    let script = "fixtures/serve/two-turns/script.toml";
    let direct = Served::start(&[script, "--split-random", "5"]);
    let upstream = Served::start(&[script, "--split-random", "5"]);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &["--upstream", &upstream.url, "--record", &record_arg],
    );
    let requests = std::fs::read_to_string(
        root().join("fixtures/serve/request/missing-tool-result/requests.jsonl"),
    )
    .unwrap();
    let requests: Vec<&str> = requests.lines().collect();
    let post = |url: &str, body: &str| {
        let mut response = ureq::post(url)
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer SECRET-TOKEN-42")
            .send(body)
            .unwrap();
        let content_type = response
            .headers()
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        (content_type, response.body_mut().read_to_vec().unwrap())
    };
    let (direct_type, direct_body) = post(&direct.url, requests[0]);
    let (proxied_type, proxied_body) = post(&proxy.url, requests[0]);
    assert_eq!(proxied_type, direct_type);
    assert!(proxied_body == direct_body, "the proxied body differs");
    // The next turn, without the tool result the first one asked for.
    post(&proxy.url, requests[1]);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 143);
    assert!(
        stdout.contains(
            "error[request/missing-tool-result]: the request does not answer the tool call call-1"
        ),
        "{stdout}"
    );
    let at = record.join("001");
    assert!(std::fs::read(at.join("response.raw")).unwrap() == direct_body);
    assert_eq!(
        std::fs::read_to_string(at.join("request.json")).unwrap(),
        requests[0]
    );
    assert!(record.join("002/findings.jsonl").exists());
    let mut everything = stdout.clone() + &stderr;
    for entry in std::fs::read_dir(&record).unwrap() {
        for file in std::fs::read_dir(entry.unwrap().path()).unwrap() {
            everything += &String::from_utf8_lossy(&std::fs::read(file.unwrap().path()).unwrap());
        }
    }
    assert!(!everything.contains("SECRET-TOKEN-42"));
}

#[test]
fn an_upstream_that_is_no_url_is_refused() {
    let (code, stdout, stderr) = run(&["proxy", "--upstream", "localhost:8000"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("is not an http:// or https:// URL"),
        "{stderr}"
    );
}

/// An agent that cannot be reached: the client gets a 502 saying so, and the thread's next
/// request is forwarded at once (nothing is left waiting for the failed exchange).
#[test]
fn an_unreachable_upstream_answers_502_and_holds_nothing_up() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/", listener.local_addr().unwrap())
    };
    let proxy = Served::command("proxy", &["--upstream", &closed]);
    let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let agent = lenient_client();
        let mut response = agent.post(&proxy.url).send(body).unwrap();
        assert_eq!(response.status(), 502);
        let text = response.body_mut().read_to_string().unwrap();
        assert!(text.contains("the upstream could not be reached"), "{text}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}

/// What went wrong between the proxy and the agent is a finding like any other: in the live
/// output, in every report format, and in `--once`'s exit status. An agent that fails, answers
/// a page, cuts the stream or names another run is never passed as clean.
#[test]
fn what_the_agent_answers_is_judged_in_every_format() {
    let cut_stream = {
        let mut body = frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        );
        body.extend_from_slice(b"data: {\"type\":\"TEXT_MESSAGE_ST");
        Script::sse(vec![Step::Send(body), Step::Close])
    };
    let other_run = Script::sse(vec![Step::Send(
        String::from_utf8(clean_run())
            .unwrap()
            .replace("{runId}", "someone-elses-run")
            .into_bytes(),
    )]);
    let cases = [
        (
            Script::fixed(
                "500 Internal Server Error",
                "text/html",
                "<html><body>Traceback: KeyError 'messages'</body></html>",
            ),
            "transport/http-status",
            "json",
        ),
        (
            Script::fixed("200 OK", "text/html", "<html><body>Sign in</body></html>"),
            "transport/content-type",
            "sarif",
        ),
        (cut_stream, "transport/connection-lost", "junit"),
        (other_run, "transport/run-id-mismatch", "github"),
        (
            Script::fixed("401 Unauthorized", "application/json", r#"{"detail":"no"}"#),
            // The advice is the proxy's, not `run`'s (which names its -H flag).
            "the agent refused the credentials the client sent",
            "jsonl",
        ),
    ];
    let body = r#"{"threadId":"t1","runId":"r1","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#;
    for (script, rule, format) in cases {
        let agent = Server::start(script);
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report");
        let proxy = proxy_once(
            &agent,
            &["--report", &report.to_string_lossy(), "--format", format],
        );
        let client = lenient_client();
        if let Ok(mut response) = client
            .post(&proxy.url)
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream")
            .send(body)
        {
            // A cut stream ends in an error for the client too.
            let _ = response.body_mut().read_to_vec();
        }
        let (code, stdout, stderr) = proxy.finish();
        assert_eq!(code, 1, "{rule}: {stdout}{stderr}");
        assert!(
            stdout.contains(rule),
            "{rule} not in the live output: {stdout}"
        );
        let written = std::fs::read_to_string(&report).unwrap();
        let rule = if rule.contains(' ') {
            "transport/http-status"
        } else {
            rule
        };
        assert!(
            written.contains(rule),
            "{rule} not in the {format} report: {written}"
        );
        if format == "json" {
            // Nothing streamed: nothing counted.
            let doc: Value = serde_json::from_str(&written).unwrap();
            assert_eq!(doc["summary"]["events"], 0, "{doc}");
        }
        if rule == "transport/run-id-mismatch" {
            // The report counts the events it checked (it said 0 for any exchange).
            let report = dir.path().join("report.json");
            let agent = Server::start(Script::sse(vec![Step::Send(clean_run())]));
            let proxy = proxy_once(&agent, &["--report", &report.to_string_lossy()]);
            let mut response = client.post(&proxy.url).send(body).unwrap();
            let _ = response.body_mut().read_to_vec();
            let (code, stdout, stderr) = proxy.finish();
            assert_eq!(code, 0, "{stdout}{stderr}");
            let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
            assert_eq!(doc["summary"]["events"], 5, "{doc}");
            assert_eq!(doc["files"][0]["frames"], 5, "{doc}");
        }
    }
}

/// A proxy to `agent` that stops after one exchange, with `args` besides.
fn proxy_once(agent: &Server, args: &[&str]) -> Served {
    let upstream = agent.url("/");
    let mut all = vec!["--upstream", upstream.as_str(), "--once"];
    all.extend_from_slice(args);
    Served::command("proxy", &all)
}

/// A proxy to `agent` that stops after one exchange and records it: the temp folder (kept
/// alive by the caller), the recording's folder in it, and the proxy.
fn proxy_recording_once(agent: &Server) -> (tempfile::TempDir, std::path::PathBuf, Served) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let proxy = proxy_once(agent, &["--record", &record.to_string_lossy()]);
    (dir, record, proxy)
}

/// A frontend that hangs up halfway (its user pressed stop) cuts the exchange: the agent is
/// not charged with the run its stream left open (`lifecycle/unterminated-run`), in the
/// output or in the recording; what came is checked. So whether the agent's body comes in
/// chunks or runs to the connection's close (as simple servers send it), where the proxy's
/// hanging up on the agent reads as the body's end.
#[test]
fn a_client_that_hangs_up_is_not_the_agents_error() {
    for close_delimited in [false, true] {
        client_hangs_up(close_delimited);
    }
}

fn client_hangs_up(close_delimited: bool) {
    let head = [
        frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#),
        frame(r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#),
    ]
    .concat();
    let more = frame(r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x"}"#);
    let tail = [
        frame(r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#),
        frame(r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#),
    ]
    .concat();
    let pause = || Step::Pause(Duration::from_millis(400));
    let mut script = Script::sse(vec![
        Step::Send(head),
        pause(),
        Step::Send(more.clone()),
        pause(),
        Step::Send(more.clone()),
        pause(),
        Step::Send(more),
        pause(),
        Step::Send(tail),
    ]);
    if close_delimited {
        script.head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n".into();
    }
    let agent = Server::start(script);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let report = dir.path().join("report.json");
    let proxy = proxy_once(
        &agent,
        &[
            "--record",
            &record.to_string_lossy(),
            "--report",
            &report.to_string_lossy(),
            "--format",
            "json",
        ],
    );
    // The client goes away, the agent still streaming.
    proxy.post_and_hang_up("TEXT_MESSAGE_START");
    let (code, stdout, stderr) = proxy.finish();
    assert!(stderr.contains("the client went away"), "{stderr}");
    assert!(!stdout.contains("unterminated-run"), "{stdout}");
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The report and the summary say the exchange was not checked whole (its summary was
    // that of a clean session).
    let cut = "1 exchange cut by the client before the stream's end";
    assert!(stderr.contains(cut), "{stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(
        doc["files"][0]["remarks"][0]
            .as_str()
            .unwrap_or_default()
            .contains(cut),
        "{doc}"
    );
    let findings = record.join("001/findings.jsonl");
    let recorded = std::fs::read_to_string(&findings).unwrap_or_default();
    assert!(!recorded.contains("unterminated-run"), "{recorded}");
    // Checked later, the recording says what the proxy said: the cut is the client's. And
    // a stream cut short is no whole stream to pass.
    let (code, stdout, stderr) = crate::common::run(&["check", record.to_str().unwrap()]);
    assert!(!stdout.contains("unterminated-run"), "{stdout}");
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("cut when it was recorded: the client went away"),
        "{stdout}"
    );
}

/// A POST whose body is no JSON is no RunAgentInput: an error of the request, as `serve`
/// finds, and in the recording `check` reads (it passed as clean, where a JSON body of the
/// wrong shape did not).
#[test]
fn a_body_that_is_no_json_is_a_request_error() {
    let agent = Server::start(Script::fixed(
        "422 Unprocessable Entity",
        "application/json",
        r#"{"detail":"invalid JSON"}"#,
    ));
    let (_dir, record, proxy) = proxy_recording_once(&agent);
    let _ = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .send("garbage")
        .map(|mut r| r.body_mut().read_to_vec());
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("request/input-schema"), "{stdout}");
    assert!(
        stdout.contains("the request's body is not JSON"),
        "{stdout}"
    );
    let (code, stdout, stderr) = run(&["check", &record.to_string_lossy()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("request/input-schema"), "{stdout}");
}

/// An agent that cannot be reached is a failure of the proxy's job (exit 2 under `--once`),
/// said in the report, not a clean run.
#[test]
fn an_unreachable_upstream_fails_the_once_run() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/", listener.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let report_arg = report.to_string_lossy();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &[
            "--upstream",
            &closed,
            "--once",
            "--report",
            &report_arg,
            "--format",
            "json",
            "--record",
            &record_arg,
        ],
    );
    let client = lenient_client();
    let response = client
        .post(&proxy.url)
        .send(r#"{"threadId":"t","runId":"r","messages":[]}"#)
        .unwrap();
    assert_eq!(response.status(), 502);
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 2, "{stdout}{stderr}");
    // Counted once, as not forwarded (it was "1 request forwarded … 1 could not be").
    assert!(
        stderr.contains(
            "proxy: 0 requests forwarded: 0 errors, 1 warning; 1 request could not be forwarded"
        ),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&report).unwrap();
    assert!(
        written.contains("could not be reached"),
        "the failure is not in the report: {written}"
    );
    // The exchange is recorded too: what was sent, and why nothing came back.
    let at = record.join("001");
    assert_eq!(
        std::fs::read_to_string(at.join("request.json")).unwrap(),
        r#"{"threadId":"t","runId":"r","messages":[]}"#
    );
    let failure = std::fs::read_to_string(at.join("failure.txt")).unwrap();
    assert!(failure.contains("could not be reached"), "{failure}");
    // A check of the recording fails as the run did, in every format (it passed: the
    // request and the failure were no captures, and nothing else was there).
    for format in ["human", "json", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, &record_arg]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(
            stderr.contains("001/failure.txt: the exchange recorded no response: exchange 1 (thread t): the upstream could not be reached"),
            "{format}: {stderr}"
        );
        if format != "human" {
            assert!(
                stdout.contains("could not be reached"),
                "{format}: {stdout}"
            );
        }
        // And what the proxy found of the request (it declares no protocolVersion), as the
        // proxy said it: it was lost from the recording.
        if format == "json" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(doc["summary"]["warnings"], 1, "{stdout}");
            assert!(stdout.contains("request/protocol-version"), "{stdout}");
        }
    }
}

/// Recording into a folder that already holds exchanges (the proxy run again, or two at once
/// into one folder) adds to it: no exchange is written over another.
#[test]
fn recordings_are_added_never_written_over() {
    let script = "fixtures/serve/two-turns/script.toml";
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let post = |url: &str, thread: &str| {
        let body = format!(r#"{{"threadId":"{thread}","runId":"r","messages":[]}}"#);
        let mut response = ureq::post(url).send(&body).unwrap();
        response.body_mut().read_to_vec().unwrap();
    };
    // Run once, then twice at the same time.
    let agent = Served::start(&[script]);
    let first = Served::command(
        "proxy",
        &["--upstream", &agent.url, "--once", "--record", &record_arg],
    );
    post(&first.url, "first");
    assert_eq!(first.finish().0, 0);
    let agents = [Served::start(&[script]), Served::start(&[script])];
    let proxies: Vec<Served> = agents
        .iter()
        .map(|agent| {
            Served::command(
                "proxy",
                &["--upstream", &agent.url, "--once", "--record", &record_arg],
            )
        })
        .collect();
    std::thread::scope(|scope| {
        for (proxy, thread) in proxies.iter().zip(["second", "third"]) {
            scope.spawn(move || post(&proxy.url, thread));
        }
    });
    for proxy in proxies {
        assert_eq!(proxy.finish().0, 0);
    }
    let mut threads: Vec<String> = std::fs::read_dir(&record)
        .unwrap()
        .map(|entry| {
            let request = std::fs::read_to_string(entry.unwrap().path().join("request.json"));
            let request: Value = serde_json::from_str(&request.unwrap()).unwrap();
            request["threadId"].as_str().unwrap().to_owned()
        })
        .collect();
    threads.sort();
    assert_eq!(threads, ["first", "second", "third"]);
}

/// Stopped (Ctrl-C) while a stream is being forwarded, the proxy still records what had come
/// of it: the request and the body so far. The stream's end is the proxy's, not the agent's
/// (no `lifecycle/unterminated-run`), and the report says the run was stopped.
#[test]
fn a_stop_halfway_keeps_what_was_forwarded() {
    let agent = Served::start(&[
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "--drip",
        "0.1",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let report = dir.path().join("proxy.json");
    let report_arg = report.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &[
            "--upstream",
            &agent.url,
            "--record",
            &record_arg,
            "--report",
            &report_arg,
            "--format",
            "json",
        ],
    );
    let url = proxy.url.clone();
    let client = std::thread::spawn(move || {
        let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
        if let Ok(mut response) = ureq::post(&url).send(body) {
            let _ = response.body_mut().read_to_vec();
        }
    });
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (code, _, stderr) = proxy.finish();
    client.join().unwrap();
    assert_eq!(code, 130, "{stderr}");
    let raw = std::fs::read(record.join("001/response.raw")).unwrap_or_default();
    assert!(
        !raw.is_empty(),
        "nothing of the body was recorded: {stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(doc["summary"]["stopped_by"], "SIGINT", "{doc}");
    assert!(!doc.to_string().contains("unterminated-run"), "{doc}");
    // The exchange the stop cut is said so in the report itself, as the recording says it:
    // it was `interrupted: 0`, no failure, and its JUnit "conforms" testcase passed.
    assert_eq!(doc["summary"]["interrupted"], 1, "{doc}");
    let failure = doc["files"][0]["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("cut by the stop"), "{doc}");
    // Checked later, the recording says what the proxy said: the cut was the proxy's. Its
    // findings are findings only (the stop is in `cut.txt`): they were written with the
    // report's `stopped_by` record, which `check DIR` could not read, and failed.
    // But the stream was not read to its end: that is no pass either, in any format (it was
    // "ok", and JUnit "conforms to AG-UI").
    assert!(record.join("001/cut.txt").exists());
    for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
        let (code, stdout, stderr) =
            crate::common::run(&["check", "--format", format, record.to_str().unwrap()]);
        if format != "sarif" {
            // (SARIF lists every rule.)
            assert!(!stdout.contains("unterminated-run"), "{stdout}{stderr}");
        }
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(
            stdout.contains("cut when it was recorded"),
            "{format}: {stdout}"
        );
        if format == "sarif" {
            let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(
                doc["runs"][0]["invocations"][0]["executionSuccessful"],
                false
            );
            let results = doc["runs"][0]["results"].to_string();
            assert!(!results.contains("unterminated-run"), "{results}");
        }
    }
}

/// Stopped while the agent is silent in the middle of a stream (it sent two events and
/// hangs), the proxy does not wait past its grace, and the body it had forwarded is recorded
/// all the same; it says that exchange was left unfinished, in its report too (which called
/// the run clean: a CI job that stops the proxy got a green report for a hung agent).
#[test]
fn a_stop_while_the_agent_is_silent_keeps_the_body_so_far() {
    silent_agent_stopped(false);
}

/// As [`a_stop_while_the_agent_is_silent_keeps_the_body_so_far`], the agent answering in
/// protobuf: the events that came are recorded too.
#[test]
fn a_stop_while_a_protobuf_agent_is_silent_keeps_its_events() {
    silent_agent_stopped(true);
}

fn silent_agent_stopped(proto: bool) {
    let events = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
    ];
    let (two, content_type) = if proto {
        use agui_lens_core::protocol::proto::{encode_event, push_frame};
        let mut out = Vec::new();
        for event in events {
            let event: Value = serde_json::from_str(event).unwrap();
            push_frame(&encode_event(&event).unwrap().bytes, &mut out);
        }
        (out, "application/vnd.ag-ui.event+proto")
    } else {
        (events.map(frame).concat(), "text/event-stream")
    };
    let sent = two.len() as u64;
    let script = Script {
        head: format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n"
        ),
        steps: vec![Step::Send(two), Step::Hang],
    };
    let agent = Server::start(script);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let report = dir.path().join("report.sarif");
    let report_arg = report.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &[
            "--upstream",
            &agent.url("/"),
            "--record",
            &record_arg,
            "--report",
            &report_arg,
            "--format",
            "sarif",
        ],
    );
    let url = proxy.url.clone();
    let (got_first, first) = std::sync::mpsc::channel();
    let client = std::thread::spawn(move || {
        use std::io::Read;
        let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
        let mut response = ureq::post(&url)
            .header(
                "Accept",
                "application/vnd.ag-ui.event+proto, text/event-stream",
            )
            .send(body)
            .unwrap();
        let mut reader = response.body_mut().as_reader();
        let mut buf = [0u8; 4096];
        let n = reader.read(&mut buf).unwrap_or(0);
        got_first.send(n).unwrap();
        // Read on until the proxy lets go of the connection.
        let _ = reader.read_to_end(&mut Vec::new());
    });
    assert!(first.recv_timeout(Duration::from_secs(20)).unwrap() > 0);
    // The body is on disk while the exchange goes on (it was written only at its end): once
    // all the agent sent is there, the proxy waits on the silent agent, and is stopped there.
    let raw_path = record.join("001/response.raw");
    let whole = |raw: &std::path::Path| std::fs::metadata(raw).is_ok_and(|m| m.len() == sent);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !whole(&raw_path) {
        assert!(
            std::time::Instant::now() < deadline,
            "the body was not written as it came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let stopped = std::time::Instant::now();
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (code, _, stderr) = proxy.finish();
    assert!(stopped.elapsed() < Duration::from_secs(10), "{stderr}");
    assert_eq!(code, 130, "{stderr}");
    assert!(whole(&raw_path), "the body so far was not kept: {stderr}");
    assert!(stderr.contains("left unfinished"), "{stderr}");
    let sarif: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
    assert!(
        invocation.to_string().contains("left unfinished"),
        "{invocation}"
    );
    // The proxy records the exchange it left waiting: the events that came, and that the
    // stream was cut at its stop. Checked later, the recording is read as a stream the proxy
    // cut (it held only `request.json` and `response.raw`, and `check DIR` read nothing).
    let events = std::fs::read_to_string(record.join("001/events.jsonl")).unwrap_or_default();
    assert_eq!(events.lines().count(), 2, "{events}");
    let cut = std::fs::read_to_string(record.join("001/cut.txt")).unwrap_or_default();
    assert!(cut.contains("stopped by SIGINT"), "{cut}");
    let (code, stdout, stderr) = crate::common::run(&["check", record.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.contains("2 events"), "{stdout}");
    assert!(stdout.contains("cut when it was recorded"), "{stdout}");
    // What the proxy found of the request (it declares no protocolVersion) is in the
    // recording too: the exchange's findings were written only at its end, which never came.
    assert!(stdout.contains("request/protocol-version"), "{stdout}");
    drop(agent);
    client.join().unwrap();
}

/// A client that takes any status as an answer, so a test can look at a 4xx or 5xx.
fn lenient_client() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build(),
    )
}

/// A request with no thread id (not a RunAgentInput at all) is named as such, not as
/// "thread " with nothing after it.
#[test]
fn an_exchange_without_a_thread_is_named_so() {
    let agent = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let proxy = Served::command("proxy", &["--upstream", &agent.url("/"), "--once"]);
    let mut response = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    let _ = response.body_mut().read_to_vec();
    let (_, stdout, stderr) = proxy.finish();
    assert!(
        stderr.contains("exchange 1 (no thread): 200"),
        "{stdout}{stderr}"
    );
    assert!(!stderr.contains("(thread )"), "{stderr}");
}

/// A folder that holds recordings already gets the next exchange after the last of them, not
/// in a gap between them: its folders' order stays the order exchanges came in.
#[test]
fn a_recording_goes_on_after_what_the_folder_holds() {
    let agent = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    for held in ["005", "999", "notes"] {
        std::fs::create_dir_all(record.join(held)).unwrap();
    }
    let proxy = proxy_once(&agent, &["--record", &record.to_string_lossy()]);
    let mut response = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .send(r#"{"threadId":"t","runId":"r","messages":[]}"#)
        .unwrap();
    let _ = response.body_mut().read_to_vec();
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(record.join("1000/request.json").is_file(), "{stderr}");
    assert!(!record.join("001").exists(), "{stderr}");
}

/// Recorded, an exchange's findings point at the files that hold what they are about, in the
/// formats that place a finding in a file: the stream's at `DIR/NNN/response.raw` (whose lines
/// they count), the request's at `DIR/NNN/request.json`. Unrecorded there is no such file, and
/// the exchange is named as before.
#[test]
fn recorded_findings_point_at_the_recording_in_every_format() {
    let stream = String::from_utf8(clean_run())
        .unwrap()
        .replace(r#""delta":"Hello""#, r#""delta":7"#);
    // A RunAgentInput without messages: a finding about the request.
    let body =
        r#"{"threadId":"t1","runId":"r1","state":{},"tools":[],"context":[],"forwardedProps":{}}"#;
    for format in ["sarif", "github"] {
        let agent = Server::start(Script::sse(vec![Step::Send(stream.clone().into_bytes())]));
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("exchanges");
        let report = dir.path().join("report");
        let proxy = Served::command(
            "proxy",
            &[
                "--upstream",
                &agent.url("/"),
                "--once",
                "--record",
                &record.to_string_lossy(),
                "--report",
                &report.to_string_lossy(),
                "--format",
                format,
            ],
        );
        let mut response = lenient_client()
            .post(&proxy.url)
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream")
            .send(body)
            .unwrap();
        let _ = response.body_mut().read_to_vec();
        let (code, stdout, stderr) = proxy.finish();
        assert_eq!(code, 1, "{stdout}{stderr}");
        let raw = std::fs::read_to_string(record.join("001/response.raw")).unwrap();
        // The broken event's line in the recorded body.
        let line = raw
            .lines()
            .position(|l| l.contains(r#""delta":7"#))
            .unwrap()
            + 1;
        let written = std::fs::read_to_string(&report).unwrap();
        // Where each rule's finding is placed: (file, line).
        let placed: Vec<(String, String, Option<u64>)> = match format {
            "sarif" => {
                let doc: Value = serde_json::from_str(&written).unwrap();
                doc["runs"][0]["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        let at = &r["locations"][0]["physicalLocation"];
                        (
                            r["ruleId"].as_str().unwrap().to_owned(),
                            at["artifactLocation"]["uri"].as_str().unwrap().to_owned(),
                            at["region"]["startLine"].as_u64(),
                        )
                    })
                    .collect()
            }
            _ => written
                .lines()
                .filter_map(|l| {
                    let fields = l.strip_prefix("::error ")?.split("::").next()?;
                    let field = |name: &str| {
                        fields
                            .split(',')
                            .find_map(|f| f.strip_prefix(&format!("{name}=")))
                            .map(str::to_owned)
                    };
                    let title = field("title")?;
                    let rule = title.split_whitespace().next()?.to_owned();
                    Some((
                        rule,
                        field("file")?,
                        field("line").and_then(|n| n.parse().ok()),
                    ))
                })
                .collect(),
        };
        let at = |rule: &str| {
            placed
                .iter()
                .find(|(r, ..)| r.contains(rule))
                .unwrap_or_else(|| panic!("{rule} not in the {format} report: {written}"))
                .clone()
        };
        let (_, file, at_line) = at("schema/violation");
        assert!(
            file.ends_with("exchanges/001/response.raw"),
            "{format}: {file}"
        );
        assert_eq!(at_line, Some(line as u64), "{format}: {written}");
        let (_, file, _) = at("request/input-schema");
        assert!(
            file.ends_with("exchanges/001/request.json"),
            "{format}: {file}"
        );
    }
}

/// One exchange through a proxy recording into `record` (`--once` with `once`), to an agent
/// that answers `stream` over SSE: the proxy, once its client has read the whole body, that
/// body, and the agent (to keep until the proxy is done).
fn one_exchange(
    stream: Vec<u8>,
    record: &std::path::Path,
    body: &str,
    once: bool,
) -> (Served, Vec<u8>, Server) {
    let agent = Server::start(Script::sse(vec![Step::Send(stream)]));
    let url = agent.url("/");
    let record = record.to_string_lossy();
    let mut args = vec!["--upstream", &url, "--record", &record];
    if once {
        args.push("--once");
    }
    let proxy = Served::command("proxy", &args);
    let mut response = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream")
        .send(body)
        .unwrap();
    let got = response.body_mut().read_to_vec().unwrap_or_default();
    (proxy, got, agent)
}

/// A recording folder checks as what was forwarded: `check DIR` reads each exchange's stream,
/// in every format, and neither the request nor the findings beside it is taken for a
/// stream. A clean exchange has no findings file (an empty one read as a capture of nothing),
/// one with findings has them.
#[test]
fn a_recording_checks_as_what_was_forwarded() {
    let clean = String::from_utf8(clean_run()).unwrap();
    let broken = clean.replace(r#""delta":"Hello""#, r#""delta":7"#);
    let body = r#"{"threadId":"t1","runId":"r1","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{},"protocolVersion":"1.1"}"#;
    // Events of a type no one knows, or of none: they were left out of events.jsonl, and
    // `check DIR` passed the exchange the proxy failed. And an emoji cut in two across
    // deltas (half a UTF-16 pair each, JSON a client reads and joins): left out, the
    // message's text lost.
    let odd: String = clean
        .split_inclusive("\n\n")
        .enumerate()
        .map(|(i, frame)| match i {
            1 => format!(
                "data: {{\"type\":\"MY_OWN_TYPE\",\"x\":1}}\n\ndata: {{\"foo\":1}}\n\n{frame}"
            ),
            3 => format!(
                "data: {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\" \\ud83d\"}}\n\n\
                 data: {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"\\ude00\"}}\n\n{frame}"
            ),
            _ => frame.to_owned(),
        })
        .collect();
    assert!(odd.contains("MY_OWN_TYPE"));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    for stream in [&clean, &broken, &odd] {
        let (proxy, _, _agent) = one_exchange(stream.clone().into_bytes(), &record, body, true);
        proxy.finish();
    }
    let kept = std::fs::read_to_string(record.join("003/events.jsonl")).unwrap();
    assert!(
        kept.contains("MY_OWN_TYPE") && kept.contains(r#"{"foo":1}"#) && kept.contains(r#"\ud83d"#),
        "{kept}"
    );
    assert_eq!(kept.lines().count(), 9, "{kept}");
    let (code, folded, stderr) = run(&["fold", record.join("003/events.jsonl").to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(folded.contains("Hello \u{1F600}"), "{folded}");
    let odd_one = record.join("003");
    for format in ["human", "json", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, odd_one.to_str().unwrap()]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        assert!(
            stdout.contains("schema/unknown-event-type") && stdout.contains("schema/missing-type"),
            "{format}: {stdout}"
        );
    }
    std::fs::remove_dir_all(&odd_one).unwrap();
    assert!(!record.join("001/findings.jsonl").exists(), "nothing found");
    let found = std::fs::read_to_string(record.join("002/findings.jsonl")).unwrap();
    assert!(found.contains("schema/"), "{found}");
    let folder = record.to_str().unwrap();
    let clean_one = record.join("001");
    for format in ["human", "json", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) =
            run(&["check", "--format", format, clean_one.to_str().unwrap()]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        let (code, stdout, stderr) = run(&["check", "--format", format, folder]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        // (SARIF lists every rule: the finding's message is what would say it.)
        assert!(!stdout.contains("no AG-UI events: "), "{format}: {stdout}");
    }
    // The findings file is read as the proxy's (see the next test): the schema finding it
    // holds is the stream's, found again in events.jsonl, and is not reported twice.
    let (_, stdout, _) = run(&["check", "--format", "json", folder]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let found: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(found.len(), 1, "{stdout}");
    assert!(found[0].ends_with("002/events.jsonl"), "{stdout}");
}

/// A recording checks as the proxy found it: `check DIR` reports what only the proxy could
/// know (the status an exchange was answered with, a turn that leaves out what the previous
/// one asked for), from the findings it recorded, and checks each stream as the answer to
/// the request recorded beside it. A refused exchange leaves no empty `events.jsonl` (it was
/// "no AG-UI events: the input is empty"). Before, the missing tool result and the refusal
/// were gone from `check DIR`, in every format.
#[test]
fn a_recording_checks_as_the_proxy_found_it() {
    let script = "fixtures/serve/two-turns/script.toml";
    let upstream = Served::start(&[script]);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &["--upstream", &upstream.url, "--record", &record_arg],
    );
    let requests = std::fs::read_to_string(
        root().join("fixtures/serve/request/missing-tool-result/requests.jsonl"),
    )
    .unwrap();
    let bodies: Vec<&str> = requests.lines().collect();
    for body in &bodies {
        let _ = lenient_client()
            .post(&proxy.url)
            .header("Content-Type", "application/json")
            .send(*body)
            .unwrap()
            .body_mut()
            .read_to_vec();
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 143, "{stdout}{stderr}");
    // Then, into the same folder, an exchange the agent refuses.
    let refusing = Server::start(Script::fixed(
        "422 Unprocessable Entity",
        "application/json",
        r#"{"error":"no such tool"}"#,
    ));
    let proxy = Served::command(
        "proxy",
        &[
            "--upstream",
            &refusing.url("/"),
            "--record",
            &record_arg,
            "--once",
        ],
    );
    let _ = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .send(bodies[0])
        .unwrap()
        .body_mut()
        .read_to_vec();
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        !record.join("003/events.jsonl").exists(),
        "a refused exchange left an events.jsonl"
    );
    // Last, a stream with frames events.jsonl cannot hold (one not JSON, one with a key
    // twice), answering a request the schema refuses (no runId).
    let broken: Vec<u8> = [
        r#"data: {"type":"RUN_STARTED","threadId":"t9","runId":"r9"}"#,
        "data: {not json",
        r#"data: {"type":"STEP_STARTED","stepName":"a","stepName":"b"}"#,
        r#"data: {"type":"STEP_FINISHED","stepName":"b"}"#,
        r#"data: {"type":"RUN_FINISHED","threadId":"t9","runId":"r9"}"#,
    ]
    .iter()
    .flat_map(|frame| format!("{frame}\n\n").into_bytes())
    .collect();
    let body =
        r#"{"threadId":"t9","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#;
    let (proxy, _, _agent) = one_exchange(broken, &record, body, true);
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    let found = std::fs::read_to_string(record.join("004/findings.jsonl")).unwrap();
    let mut said: Vec<(String, String)> = found
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|d| (d["rule"].to_string(), d["message"].to_string()))
        .collect();
    let all = said.len();
    said.sort();
    said.dedup();
    assert_eq!(said.len(), all, "a finding recorded twice: {found}");
    for rule in [
        "request/input-schema",
        "framing/invalid-json",
        "framing/duplicate-key",
    ] {
        assert!(found.contains(rule), "{rule}: {found}");
    }
    // What the proxy found, as (rule, exchange/file).
    let placed = |d: &Value| {
        let path = std::path::Path::new(d["path"].as_str().unwrap());
        let exchange = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let file = path.file_name().unwrap().to_string_lossy();
        (
            d["rule"].as_str().unwrap().to_owned(),
            format!("{exchange}/{file}"),
        )
    };
    let mut proxied = Vec::new();
    for n in ["001", "002", "003", "004"] {
        if let Ok(text) = std::fs::read_to_string(record.join(n).join("findings.jsonl")) {
            proxied.extend(
                text.lines()
                    .map(|l| placed(&serde_json::from_str(l).unwrap())),
            );
        }
    }
    proxied.sort();
    for expected in [
        ("request/missing-tool-result", "002/request.json"),
        ("transport/http-status", "003/response.raw"),
    ] {
        let expected = (expected.0.to_owned(), expected.1.to_owned());
        assert!(proxied.contains(&expected), "{proxied:?}");
    }
    let folder = record.to_str().unwrap();
    let (code, stdout, stderr) = run(&["check", "--format", "json", folder]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let mut checked: Vec<_> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(placed)
        .collect();
    checked.sort();
    // The stream findings found again are placed in events.jsonl (the proxy placed them in
    // the body); what is said again from the record stays in the body (the status, frames
    // that never reached events.jsonl).
    let mut proxied_as_checked: Vec<_> = proxied
        .iter()
        .map(|(rule, at)| {
            let kept = rule.starts_with("transport/")
                || (rule.starts_with("framing/") && rule != "framing/no-events");
            match kept {
                true => (rule.clone(), at.clone()),
                false => (rule.clone(), at.replace("/response.raw", "/events.jsonl")),
            }
        })
        .collect();
    proxied_as_checked.sort();
    assert_eq!(checked, proxied_as_checked, "{stdout}");
    for format in ["human", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, folder]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        // SARIF names every rule it knows: there, a finding is a result.
        let said = crate::common::findings_said(format, &stdout);
        for rule in ["request/missing-tool-result", "transport/http-status"] {
            assert!(said.contains(rule), "{format}: {rule} is gone: {stdout}");
        }
        assert!(!said.contains("no AG-UI events: "), "{format}: {stdout}");
        if format == "human" {
            assert!(
                stdout.contains("002/findings.jsonl (recorded findings)"),
                "{stdout}"
            );
        }
    }
    // Rule levels apply to what was recorded as to what is found.
    let (code, stdout, stderr) = run(&[
        "check",
        "--format",
        "json",
        "--allow",
        "request/missing-tool-result",
        "--allow",
        "transport/http-status",
        folder,
    ]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let rules: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(
        !rules.contains(&"request/missing-tool-result")
            && !rules.contains(&"transport/http-status"),
        "{rules:?}"
    );
    assert_eq!(
        code,
        i32::from(doc["summary"]["errors"] != 0),
        "{stdout}{stderr}"
    );
}

/// Stopped (SIGTERM) the moment its client has the whole stream, the proxy records the
/// exchange whole: its events too, not only the body (they were read again from the body
/// after the stop and came out empty). Five times, since the stop lands at a different point
/// of the recording each time.
#[test]
fn a_stop_right_after_an_exchange_records_its_events() {
    let body = r#"{"threadId":"t1","runId":"r1","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#;
    for attempt in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("exchanges");
        let (proxy, got, _agent) = one_exchange(clean_run(), &record, body, false);
        // SAFETY: a signal to the child this test started.
        unsafe {
            libc::kill(proxy.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let (code, stdout, stderr) = proxy.finish();
        assert_eq!(code, 143, "{stdout}{stderr}");
        let raw = std::fs::read(record.join("001/response.raw")).unwrap();
        assert!(raw == got, "attempt {attempt}: the body");
        let events = std::fs::read_to_string(record.join("001/events.jsonl")).unwrap();
        assert_eq!(
            events.lines().count(),
            5,
            "attempt {attempt}: {events:?}\n{stderr}"
        );
    }
    // What only the end of a stream tells is found too: a run the agent never finished.
    let unfinished: Vec<u8> = [
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.1"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
    ]
    .iter()
    .flat_map(|e| frame(e))
    .collect();
    for attempt in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("exchanges");
        let (proxy, _, _agent) = one_exchange(unfinished.clone(), &record, body, false);
        // SAFETY: a signal to the child this test started.
        unsafe {
            libc::kill(proxy.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let (code, stdout, stderr) = proxy.finish();
        assert_eq!(code, 143, "{stdout}{stderr}");
        let found = std::fs::read_to_string(record.join("001/findings.jsonl")).unwrap_or_default();
        assert!(
            found.contains("lifecycle/unterminated-run"),
            "attempt {attempt}: {found}\n{stdout}{stderr}"
        );
    }
}

/// A frontend that hangs up while its agent is silent (the user pressed stop during a long
/// thought): the proxy hangs up on the agent too, as the frontend would have without it, so
/// the agent sees the cancel and the exchange ends; the thread's next request is forwarded at
/// once, not held for the stream that was given up.
#[test]
fn a_client_that_hangs_up_on_a_silent_agent_is_passed_on() {
    let head = frame(
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
    );
    let agent = Server::start(Script::sse(vec![Step::Send(head), Step::Hang]));

    let proxy = proxy_once(&agent, &[]);
    proxy.post_and_hang_up("RUN_STARTED");
    // The exchange ends, so a `--once` proxy stops (it waited on the agent for ever).
    let (code, stdout, stderr) = proxy.finish();
    assert!(stderr.contains("the client went away"), "{stdout}{stderr}");
    assert_eq!(code, 0, "{stdout}{stderr}");

    let proxy = Served::command("proxy", &["--upstream", &agent.url("/")]);
    proxy.post_and_hang_up("RUN_STARTED");
    let second = Instant::now();
    proxy.post_and_hang_up("RUN_STARTED");
    // Both reached the agent, the second without waiting out the 10 s a thread's next
    // request waits for a stream still being forwarded.
    assert_eq!(agent.requests().len(), 3);
    assert!(
        second.elapsed() < Duration::from_secs(8),
        "{:?}",
        second.elapsed()
    );
}

/// The input `run --message` makes passes the request rules the proxy (and `serve`) hold a
/// client to: it declares its protocol version (it did not, and `proxy --deny-warnings`
/// failed agui-lens's own client with `request/protocol-version`).
#[test]
fn agui_lens_own_client_passes_the_request_rules() {
    let agent = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let proxy = proxy_once(&agent, &["--deny-warnings"]);
    let (code, stdout, stderr) = crate::common::run(&["run", "--message", "hi", &proxy.url]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("request/"), "{stdout}");
}

/// A readiness probe (a GET, a HEAD) is forwarded, but it is no exchange to judge: under
/// `--once` the proxy waits on for the agent call, and its exit status is that call's. (It
/// took the probe for the one exchange, exited 0 with a clean report, and the client's call
/// then found no proxy.)
#[test]
fn a_probe_is_not_the_one_exchange() {
    let bad_run = String::from_utf8(clean_run()).unwrap().replace(
        r#""type":"RUN_FINISHED""#,
        r#""type":"RUN_FINISHED","result":null"#,
    );
    let agent = Server::start(Script::sse(vec![Step::Send(bad_run.into_bytes())]));
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.sarif");
    let proxy = proxy_once(
        &agent,
        &["--report", report.to_str().unwrap(), "--format", "sarif"],
    );
    for method in ["GET", "HEAD"] {
        let mut response = lenient_client()
            .run(
                ureq::http::Request::builder()
                    .method(method)
                    .uri(format!("{}/info", proxy.url))
                    .body(())
                    .unwrap(),
            )
            .unwrap();
        let _ = response.body_mut().read_to_vec();
    }
    let mut response = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .send(r#"{"threadId":"t1","runId":"r1","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{},"protocolVersion":"1.1"}"#)
        .expect("the proxy is still there for the agent call");
    let _ = response.body_mut().read_to_vec();
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    let sarif: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(
        !sarif["runs"][0]["results"].as_array().unwrap().is_empty(),
        "{sarif}"
    );
}

/// The start of an error answer's body that the proxy recorded with its finding is in what
/// `check DIR` reads back of the recording, in every format (reading it back dropped it, and
/// the help still pointed at "the body above").
#[test]
fn a_recorded_error_answer_keeps_its_body() {
    let agent = Server::start(Script::fixed(
        "500 Internal Server Error",
        "text/html",
        "<html><body>Traceback: KeyError 'messages'</body></html>",
    ));
    let (_dir, record, proxy) = proxy_recording_once(&agent);
    let body = r#"{"threadId":"t1","runId":"r1","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{},"protocolVersion":"1.1"}"#;
    let _ = lenient_client()
        .post(&proxy.url)
        .header("Content-Type", "application/json")
        .send(body)
        .map(|mut r| r.body_mut().read_to_vec());
    let (code, stdout, stderr) = proxy.finish();
    assert_eq!(code, 1, "{stdout}{stderr}");
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let (code, stdout, _) = run(&["check", "--format", format, &record.to_string_lossy()]);
        assert_eq!(code, 1, "{format}: {stdout}");
        assert!(stdout.contains("KeyError"), "{format}: {stdout}");
    }
}

/// A request the proxy holds back while the turn before it on its thread streams is not sent
/// to the agent once the proxy is stopped: it is answered 503 and recorded as not forwarded.
/// It was forwarded as the stop came, and the agent began a run during the shutdown.
#[test]
fn a_stop_forwards_no_request_that_was_waiting_for_its_turn() {
    let agent = Served::start(&[
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "--drip",
        "0.1",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &["--upstream", &agent.url, "--record", &record_arg],
    );
    let post = |pause: u64| {
        let url = proxy.url.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(pause));
            let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
            let agent = ureq::Agent::new_with_config(
                ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build(),
            );
            match agent.post(&url).send(body) {
                Ok(mut response) => {
                    let _ = response.body_mut().read_to_vec();
                    Some(response.status().as_u16())
                }
                Err(_) => None,
            }
        })
    };
    let first = post(0);
    let second = post(400);
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (code, _, stderr) = proxy.finish();
    let _ = first.join().unwrap();
    let second = second.join().unwrap();
    assert_eq!(code, 130, "{stderr}");
    assert!(record.join("001/response.raw").exists(), "{stderr}");
    // The held request: never forwarded, and said so.
    assert!(!record.join("002/response.raw").exists(), "{stderr}");
    let failure = std::fs::read_to_string(record.join("002/failure.txt")).unwrap_or_default();
    assert!(failure.contains("not forwarded"), "{failure:?} {stderr}");
    assert_eq!(second, Some(503), "{stderr}");
    assert!(stderr.contains("not forwarded"), "{stderr}");
    assert!(
        stderr.contains("1 request forwarded") && stderr.contains("1 request held back"),
        "{stderr}"
    );
}

/// A status that is no success is in the recording as soon as it came: an agent that answered
/// 500 with a whole run and held the connection open, and the proxy killed (kill -9) before the
/// exchange ended, left a recording that checked clean (the status was written at the end).
#[test]
fn a_failed_status_is_recorded_before_the_exchange_ends() {
    let agent = Server::start(Script {
        head: "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n".into(),
        steps: vec![Step::Send(clean_run()), Step::Hang],
    });
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let mut proxy = Served::command(
        "proxy",
        &["--upstream", &agent.url("/"), "--record", &record_arg],
    );
    let url = proxy.url.clone();
    let _client = std::thread::spawn(move || {
        let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build(),
        );
        if let Ok(mut response) = agent.post(&url).send(body) {
            let _ = response.body_mut().read_to_vec();
        }
    });
    body_recorded(&record.join("001/response.raw"));
    let _ = proxy.child.kill();
    let _ = proxy.child.wait();
    let (code, stdout, stderr) = run(&["check", record.to_str().unwrap()]);
    assert_ne!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("transport/http-status"), "{stdout}");
}

/// Stopped (SIGTERM) while an agent that answered 500 holds its stream open, the proxy
/// counts the failed status it forwarded: its closing line said "0 errors", and its report
/// held nothing, of an exchange whose recording fails.
#[test]
fn a_failed_status_is_counted_when_a_stop_cuts_its_exchange() {
    let agent = Server::start(Script {
        head: "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n".into(),
        steps: vec![Step::Send(clean_run()), Step::Hang],
    });
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let report = dir.path().join("report.json");
    let proxy = Served::command(
        "proxy",
        &[
            "--upstream",
            &agent.url("/"),
            "--record",
            &record.to_string_lossy(),
            "--report",
            &report.to_string_lossy(),
            "--format",
            "json",
        ],
    );
    let url = proxy.url.clone();
    let _client = std::thread::spawn(move || {
        let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
        if let Ok(mut response) = lenient_client().post(&url).send(body) {
            let _ = response.body_mut().read_to_vec();
        }
    });
    body_recorded(&record.join("001/response.raw"));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let (code, stdout, stderr) = proxy.finish();
    assert_ne!(code, 0, "{stdout}{stderr}");
    let closing = stderr
        .lines()
        .find(|l| l.contains("forwarded:"))
        .unwrap_or_default();
    assert!(closing.contains("1 error"), "{stderr}");
    let said = std::fs::read_to_string(&report).unwrap();
    assert!(said.contains("transport/http-status"), "{said}");
    let doc: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(doc["summary"]["errors"], 1, "{said}");
}

/// Waits (up to 10 s) until the proxy has written some of an answer's body to `raw`, and a
/// little more, so that the agent's hold on the connection is what comes next.
fn body_recorded(raw: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(raw).map(|m| m.len()).unwrap_or(0) == 0 {
        assert!(Instant::now() < deadline, "nothing was recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
}

/// `proxy --record` onto a disk that fills up: the recording's failure cut the stream the
/// frontend got (an empty reply, or part of the body), and the proxy exited 0 with a report
/// that failed nothing. The frontend gets the whole stream, the exchange is checked whole, and
/// the run fails (exit 2) in every report, saying the exchange could not be recorded whole.
/// (A file size limit stands in for the full disk: the write fails the same way.)
#[test]
fn a_recording_the_disk_cannot_hold_cuts_nothing_forwarded() {
    let body = long_answer(20_000);
    // Past the body's first part, below the report's size.
    for limit in [512 << 10] {
        for format in ["json", "sarif", "junit", "human"] {
            let agent = Server::start(Script::sse(vec![Step::Send(body.clone())]));
            let dir = tempfile::tempdir().unwrap();
            let record = dir.path().join("exchanges");
            let report = dir.path().join("report.out");
            let upstream = agent.url("/");
            let args = [
                "--upstream",
                upstream.as_str(),
                "--once",
                "--record",
                record.to_str().unwrap(),
                "--report",
                report.to_str().unwrap(),
                "--format",
                format,
            ];
            let proxy = Served::command_with("proxy", &args, |command| {
                crate::common::with_file_size_limit(command, limit)
            });
            let mut response = ureq::post(&proxy.url)
                .send(r#"{"threadId":"t","runId":"r","messages":[]}"#)
                .unwrap();
            let got = response.body_mut().read_to_string().unwrap();
            let (code, stdout, stderr) = proxy.finish();
            let what = format!("{limit} {format}: {stdout}{stderr}");
            assert!(
                got.contains("RUN_FINISHED"),
                "{what}: the client got {got:?}"
            );
            assert_eq!(
                got.matches("TEXT_MESSAGE_CONTENT").count(),
                20_000,
                "{what}"
            );
            assert_eq!(code, 2, "{what}");
            assert!(
                stderr.contains("1 exchange could not be recorded whole"),
                "{what}"
            );
            let said = std::fs::read_to_string(&report).unwrap_or_default();
            assert!(said.contains("recording into"), "{what}: {said}");
            if format == "sarif" {
                let doc: Value = serde_json::from_str(&said).unwrap();
                let run = &doc["runs"][0];
                assert_eq!(
                    run["invocations"][0]["executionSuccessful"], false,
                    "{said}"
                );
            }
        }
    }
}

/// A proxy killed part way (SIGKILL, a crash) writes nothing at the exchange's end: its folder
/// held the request and the body so far, which `check DIR` read as the agent's whole answer
/// and charged the agent with the run left open (`lifecycle/unterminated-run`). The folder
/// says the recording is not finished from its start, until the exchange's end says how it
/// ended.
#[test]
fn a_proxy_killed_part_way_leaves_its_exchange_unfinished() {
    let two = [
        frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.0"}"#),
        frame(r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#),
    ]
    .concat();
    let agent = Server::start(Script::sse(vec![Step::Send(two), Step::Hang]));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("exchanges");
    let record_arg = record.to_string_lossy();
    let proxy = Served::command(
        "proxy",
        &["--upstream", &agent.url("/"), "--record", &record_arg],
    );
    let url = proxy.url.clone();
    let client = std::thread::spawn(move || {
        use std::io::Read;
        let body = r#"{"threadId":"t","runId":"r","messages":[]}"#;
        if let Ok(mut response) = ureq::post(&url).send(body) {
            let _ = response.body_mut().as_reader().read_to_end(&mut Vec::new());
        }
    });
    let raw_path = record.join("001/response.raw");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&raw_path)
        .unwrap_or_default()
        .contains("TEXT_MESSAGE_START")
    {
        assert!(std::time::Instant::now() < deadline, "nothing recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGKILL);
    }
    let _ = proxy.finish();
    for format in ["human", "json", "sarif", "junit", "github", "jsonl"] {
        let (code, stdout, stderr) =
            crate::common::run(&["check", record.to_str().unwrap(), "--format", format]);
        let what = format!("{format}: {stdout}{stderr}");
        assert_eq!(code, 2, "{what}");
        // (SARIF lists every rule it knows: its results name none of the agent's cut.)
        let found = crate::common::findings_said(format, &stdout);
        assert!(!found.contains("unterminated-run"), "{what}");
        assert!(what.contains("not finished"), "{what}");
    }
    drop(agent);
    client.join().unwrap();
}
