//! `agui-lens run`, `check --follow` and `agui-lens test` against a scripted server on
//! 127.0.0.1: every transport fault trips its rule with the right exit code, what arrived
//! before a fault is still checked, output and recordings are written as events arrive, and
//! secrets never show.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::server::{Script, Server, Step, clean_run, frame, long_answer};
use crate::common::{EARLIER, PROXY_VARIABLES, agui_lens, split};

/// Runs the binary; returns (exit code, stdout, stderr).
fn lens(args: &[&str]) -> (i32, String, String) {
    split(agui_lens().args(args).output().unwrap())
}

/// `run URL --message hi` plus flags, human output without colour.
fn run_url(url: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", url, "--message", "hi", "--color", "never"];
    args.extend_from_slice(extra);
    lens(&args)
}

/// The report as JSON: `run --format json`.
fn run_json(url: &str, extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run_url(url, &args);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (code, doc, stderr)
}

fn rules(doc: &Value) -> Vec<String> {
    doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_owned())
        .collect()
}

/// What a person sees, with what changes from run to run masked: the port and the times
/// (`12 ms`, `(0.34 s`).
fn masked(text: &str, server: &Server) -> String {
    let text = text.replace(&server.addr.port().to_string(), "PORT");
    let mut out = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let shown: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, word)| {
                let unit = words
                    .get(i + 1)
                    .map(|u| u.trim_end_matches([',', ';', ')', ':']));
                let number = word.trim_start_matches('(');
                let is_time = matches!(unit, Some("ms" | "s"))
                    && !number.is_empty()
                    && number.chars().all(|c| c.is_ascii_digit() || c == '.');
                if is_time {
                    word.replace(number, "N")
                } else {
                    (*word).to_owned()
                }
            })
            .collect();
        out.push_str(&shown.join(" "));
        out.push('\n');
    }
    out
}

const HTML_500: &str = "<!DOCTYPE html>\n<html><head><title>Internal Server Error</title></head>\n<body><h1>Traceback</h1><pre>KeyError: 'messages'</pre></body></html>\n";

#[test]
fn a_clean_stream_checks_clean_and_the_input_is_sent_as_given() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    let body = "{\"threadId\": \"t-7\", \"runId\": \"r-7\", \"messages\": []}\n";
    std::fs::write(&input, body).unwrap();
    let (code, stdout, stderr) = lens(&[
        "run",
        &server.url("/agent"),
        "--input",
        input.to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout,
        "checked 1 live response, 5 events: 0 errors, 0 warnings\n"
    );
    assert!(
        stderr.contains(": 200 OK (text/event-stream), first event after "),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("in all; 5 events: 0 errors, 0 warnings\n"),
        "{stderr}"
    );
    let [request] = &server.requests()[..] else {
        panic!("one request, never a retry")
    };
    assert_eq!(request.path, "/agent");
    assert_eq!(request.body, body.as_bytes(), "sent byte for byte");
    assert_eq!(request.headers["accept"], "text/event-stream");
    assert_eq!(request.headers["content-type"], "application/json");
}

#[test]
fn a_message_becomes_a_minimal_input_with_fresh_ids() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    for _ in 0..2 {
        let (code, stdout, _) = run_url(&server.url("/"), &[]);
        assert_eq!(code, 0, "the stream echoes the ids: {stdout}");
    }
    let bodies: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies[0]["messages"][0]["role"], "user");
    assert_eq!(bodies[0]["messages"][0]["content"], "hi");
    assert_ne!(bodies[0]["runId"], bodies[1]["runId"]);
    assert_ne!(bodies[0]["threadId"], bodies[1]["threadId"]);
}

#[test]
fn an_error_status_shows_the_start_of_the_body() {
    let server = Server::start(Script::fixed(
        "500 Internal Server Error",
        "text/html",
        HTML_500,
    ));
    let (code, stdout, stderr) = run_url(&server.url("/"), &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout
            .contains("error[transport/http-status]: the agent answered 500 Internal Server Error")
    );
    assert!(
        stdout.contains("KeyError: 'messages'"),
        "the body is shown: {stdout}"
    );
    assert!(
        !stdout.contains("framing/no-events"),
        "one finding, not a cascade"
    );
    assert!(
        stderr.contains(": 500 Internal Server Error (text/html), no event"),
        "{stderr}"
    );
    insta::assert_snapshot!("live_http_500", masked(&stdout, &server));
    // The body is the one clue to why: every format carries it, not only human and JUnit
    // (the help says "the body above").
    for format in ["json", "jsonl", "sarif", "github", "junit"] {
        let (code, stdout, stderr) = run_url(&server.url("/"), &["--format", format]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        assert!(stdout.contains("KeyError"), "{format}: {stdout}");
    }
}

#[test]
fn an_html_page_with_status_200_is_a_content_type_finding() {
    let page = "<!doctype html><html><head><title>Sign in</title></head><body><form>…</form></body></html>";
    let server = Server::start(Script::fixed("200 OK", "text/html; charset=utf-8", page));
    let (code, stdout, _) = run_url(&server.url("/"), &[]);
    assert_eq!(code, 1);
    assert!(stdout.contains(
        "error[transport/content-type]: the response's Content-Type is `text/html; charset=utf-8`"
    ));
    assert!(stdout.contains("title \"Sign in\""), "{stdout}");
    assert!(!stdout.contains("framing/no-events"), "{stdout}");
    insta::assert_snapshot!("live_html_login_page", masked(&stdout, &server));
}

#[test]
fn a_stream_with_the_wrong_content_type_is_still_checked() {
    let mut script = Script::sse(vec![Step::Send(clean_run())]);
    script.head = script.head.replace("text/event-stream", "text/plain");
    let server = Server::start(script);
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules(&doc), ["transport/content-type"]);
    assert_eq!(doc["summary"]["events"], 5);
}

#[test]
fn a_reset_mid_event_is_connection_lost_and_what_came_before_is_checked() {
    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        )),
        Step::Send(frame(
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"robot"}"#,
        )),
        Step::Send(b"data: {\"type\":\"TEXT_MESSAGE_CONT".to_vec()),
        // Long enough for the client to have read the bytes before the reset drops them.
        Step::Pause(Duration::from_millis(500)),
        Step::Reset,
    ]));
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        rules(&doc),
        [
            "schema/violation",
            "transport/connection-lost",
            "lifecycle/unterminated-run"
        ],
        "the event before the reset was checked; the cut frame is not a JSON error"
    );
    assert_eq!(doc["diagnostics"][0]["event_index"], 1);
    assert_eq!(doc["summary"]["events"], 2);
    let lost = &doc["diagnostics"][1]["message"];
    assert!(
        lost.as_str().unwrap().contains("after ") && lost.as_str().unwrap().contains("2 events"),
        "{lost}"
    );
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(&input, r#"{"threadId":"t1","runId":"r1","messages":[]}"#).unwrap();
    let (_, stdout, _) = lens(&[
        "run",
        &server.url("/"),
        "--input",
        input.to_str().unwrap(),
        "--color",
        "never",
    ]);
    insta::assert_snapshot!("live_reset_mid_event", masked(&stdout, &server));
}

#[test]
fn a_close_before_the_last_chunk_is_connection_lost() {
    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        )),
        Step::Close,
    ]));
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        rules(&doc),
        ["transport/connection-lost", "lifecycle/unterminated-run"]
    );
}

#[test]
fn silence_after_the_headers_is_an_idle_timeout() {
    let server = Server::start(Script::sse(vec![Step::Hang]));
    let started = Instant::now();
    let (code, doc, _) = run_json(&server.url("/"), &["--idle-timeout", "1"]);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(code, 1);
    assert_eq!(
        rules(&doc),
        ["transport/idle-timeout"],
        "not also no-events"
    );
    assert_eq!(
        doc["diagnostics"][0]["message"],
        "nothing arrived for 1 s after 0 bytes and 0 events (--idle-timeout)"
    );

    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        )),
        Step::Hang,
    ]));
    let (code, doc, _) = run_json(&server.url("/"), &["--idle-timeout", "1"]);
    assert_eq!(code, 1);
    assert_eq!(
        rules(&doc),
        ["transport/idle-timeout", "lifecycle/unterminated-run"]
    );
    assert_eq!(doc["summary"]["events"], 1);
}

#[test]
fn no_response_head_is_an_idle_timeout_not_a_usage_error() {
    let server = Server::start(Script {
        head: String::new(),
        steps: vec![Step::Hang],
    });
    let (code, doc, stderr) = run_json(&server.url("/"), &["--idle-timeout", "1"]);
    assert_eq!(code, 1, "an HTTP exchange began: a finding, exit 1");
    assert_eq!(rules(&doc), ["transport/idle-timeout"]);
    assert!(
        doc["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("before the response head arrived")
    );
    assert!(stderr.contains(": no response, no event"), "{stderr}");
}

/// The timeout rules are advice, so `--tier must` leaves them out; an agent that never
/// answered (or answered no event before the timeout) then passed as conforming, though
/// nothing was checked. The empty answer is reported as one whenever its reason is not.
#[test]
fn a_hung_agent_never_passes_under_a_tier_without_timeouts() {
    let hangs = [
        Script {
            head: String::new(),
            steps: vec![Step::Hang],
        },
        Script::sse(vec![Step::Hang]),
        Script::sse(vec![Step::Trickle(
            ": keep-alive\n\n".repeat(1000).into_bytes(),
            Duration::from_millis(20),
        )]),
    ];
    for script in hangs {
        let server = Server::start(script);
        for tier in [&["--tier", "must"][..], &["--allow", "transport/*"]] {
            let mut args = vec!["--idle-timeout", "1", "--timeout", "1.5"];
            args.extend_from_slice(tier);
            let (code, doc, stderr) = run_json(&server.url("/"), &args);
            assert_eq!(code, 1, "{tier:?}: {doc}\n{stderr}");
            assert_eq!(rules(&doc), ["framing/no-events"], "{tier:?}: {doc}");
            let message = doc["diagnostics"][0]["message"].as_str().unwrap();
            assert!(
                message.contains("--idle-timeout") || message.contains("--timeout"),
                "{message}"
            );
        }
    }
}

#[test]
fn the_total_timeout_cuts_a_stream_that_trickles_forever() {
    let keep_alive = ": keep-alive\n\n".repeat(1000).into_bytes();
    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        )),
        Step::Trickle(keep_alive, Duration::from_millis(20)),
    ]));
    let started = Instant::now();
    let (code, doc, _) = run_json(
        &server.url("/"),
        &["--timeout", "1.5", "--idle-timeout", "5"],
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(code, 1);
    assert_eq!(
        rules(&doc),
        ["transport/timeout", "lifecycle/unterminated-run"]
    );
}

#[test]
fn one_byte_at_a_time_is_read_like_any_stream() {
    let server = Server::start(Script::sse(vec![Step::Trickle(
        clean_run(),
        Duration::from_micros(300),
    )]));
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["summary"]["events"], 5);
}

#[test]
fn crlf_framing_with_a_bom_and_comments() {
    let mut body = b"\xEF\xBB\xBF: stream opened\r\nretry: 1000\r\n\r\n".to_vec();
    for (i, event) in String::from_utf8(clean_run())
        .unwrap()
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .enumerate()
    {
        body.extend(format!(": ping\r\nevent: message\r\nid: {i}\r\n{event}\r\n\r\n").bytes());
    }
    let server = Server::start(Script::sse(vec![Step::Send(body)]));
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    // Every event is read, and the frames the official client cannot split apart are said
    // once.
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["summary"]["events"], 5);
    assert_eq!(rules(&doc), ["framing/sse-frames-merged"], "{doc}");
}

#[test]
fn a_very_long_event_is_read_whole_or_reported_over_the_cap() {
    let big = "x".repeat(3 * 1024 * 1024);
    let mut body = frame(
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
    );
    body.extend(frame(&format!(
        r#"{{"type":"STATE_SNAPSHOT","snapshot":{{"blob":"{big}"}}}}"#
    )));
    body.extend(frame(
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ));
    let steps = body
        .chunks(64 * 1024)
        .map(|c| Step::Send(c.to_vec()))
        .collect();
    let server = Server::start(Script::sse(steps));
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    assert_eq!(code, 0, "{}", doc["diagnostics"]);
    assert_eq!(doc["summary"]["events"], 3);
    let (code, doc, _) = run_json(&server.url("/"), &["--max-line", "1MiB"]);
    assert_eq!(code, 1);
    assert_eq!(rules(&doc), ["framing/line-too-long"]);
    assert_eq!(
        doc["summary"]["events"], 2,
        "the events after it are still read"
    );
}

/// What only the live call could find (a run id other than the one sent, SSE frames the
/// official client reads as one) is recorded beside `run --record FILE` and `--record-raw`,
/// and `check` of either, or of their folder, finds it again, once, in every format: the
/// recordings of a run that failed checked clean. A clean run recorded over them takes it away.
#[test]
fn what_only_the_call_found_stays_with_its_recordings() {
    let body = String::from_utf8(clean_run())
        .unwrap()
        .replace("\"runId\":\"{runId}\"", "\"runId\":\"run-made-up\"")
        // The first frame ends with CR LF CR LF: the official client reads on into the next.
        .replacen("\n\n", "\r\n\r\n", 1);
    let server = Server::start(Script::sse(vec![Step::Send(body.into_bytes())]));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(&input, r#"{"threadId":"t1","runId":"r1","messages":[]}"#).unwrap();
    let recorded = dir.path().join("rec");
    std::fs::create_dir(&recorded).unwrap();
    let (events, raw) = (recorded.join("run.jsonl"), recorded.join("run.raw"));
    let call = |url: &str| {
        lens(&[
            "run",
            url,
            "--input",
            input.to_str().unwrap(),
            "--record",
            events.to_str().unwrap(),
            "--record-raw",
            raw.to_str().unwrap(),
            "--format",
            "json",
        ])
    };
    let (code, stdout, stderr) = call(&server.url("/"));
    assert_eq!(code, 1, "{stderr}");
    let live = rules(&serde_json::from_str(&stdout).unwrap());
    for rule in ["transport/run-id-mismatch", "framing/sse-frames-merged"] {
        assert!(live.contains(&rule.to_owned()), "{live:?}");
    }
    for checked in [&events, &raw, &recorded] {
        let (code, stdout, stderr) =
            lens(&["check", "--format", "json", checked.to_str().unwrap()]);
        assert_eq!(code, 1, "{}: {stdout}{stderr}", checked.display());
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let mut found = rules(&doc);
        for rule in ["transport/run-id-mismatch", "framing/sse-frames-merged"] {
            assert_eq!(
                found.iter().filter(|r| *r == rule).count(),
                1,
                "{}: {found:?}",
                checked.display()
            );
        }
        found.sort();
        assert_eq!(
            doc["summary"]["unreadable"],
            0,
            "{}: {doc}",
            checked.display()
        );
        // Placed in the recording.
        let placed = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["rule"] == "transport/run-id-mismatch")
            .unwrap();
        assert!(
            placed["path"].as_str().unwrap().ends_with(".jsonl")
                || placed["path"].as_str().unwrap().ends_with(".raw"),
            "{placed}"
        );
        for format in ["sarif", "github", "junit", "human"] {
            let (code, stdout, _) = lens(&["check", "--format", format, checked.to_str().unwrap()]);
            assert_eq!(code, 1, "{format}");
            assert!(stdout.contains("run-id-mismatch"), "{format}: {stdout}");
        }
    }
    // Named alone, the findings are checked, placed in the recording they are about.
    let sidecar = recorded.join("run.jsonl.findings.txt");
    let (code, stdout, stderr) = lens(&["check", "--format", "json", sidecar.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        rules(&doc).contains(&"transport/run-id-mismatch".to_owned()),
        "{doc}"
    );
    assert!(
        doc["diagnostics"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("run.jsonl"),
        "{doc}"
    );
    // Named beside their recording (as `check run.jsonl*` names them), they are read with it
    // once: not counted a second time as a file of their own.
    let (code, stdout, stderr) = lens(&[
        "check",
        "--format",
        "json",
        sidecar.to_str().unwrap(),
        events.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let mismatches = rules(&doc)
        .iter()
        .filter(|r| *r == "transport/run-id-mismatch")
        .count();
    assert_eq!(mismatches, 1, "{doc}");
    let (_, alone, _) = lens(&["check", "--format", "json", events.to_str().unwrap()]);
    let alone: Value = serde_json::from_str(&alone).unwrap();
    assert_eq!(
        doc["summary"]["errors"], alone["summary"]["errors"],
        "{doc}"
    );
    assert!(stdout.contains("read with its stream"), "{stdout}");
    // No report is written over them, and `cat` of the recording says the copy does not
    // carry them (exit 1).
    let serve = agui_lens()
        .args([
            "serve",
            events.to_str().unwrap(),
            "--report",
            sidecar.to_str().unwrap(),
        ])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let (code, _, stderr) = split(serve);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("left as it was"), "{stderr}");
    let copy = dir.path().join("copy.jsonl");
    let (code, _, stderr) = lens(&[
        "cat",
        events.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("run.jsonl.findings.txt"), "{stderr}");
    // `compact` leaves such a recording as it is (a copy elsewhere would check clean), and
    // says why.
    let out = dir.path().join("compacted");
    let (code, stdout, stderr) = lens(&[
        "compact",
        events.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("only the call that recorded it found"),
        "{stderr}"
    );
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
    // `inspect` shows them among the stream's problems, and fails as `check` does.
    for shown in [&events, &raw] {
        let (code, stdout, stderr) =
            lens(&["inspect", shown.to_str().unwrap(), "--color", "never"]);
        assert_eq!(code, 1, "{}: {stdout}{stderr}", shown.display());
        assert!(stdout.contains("run-id-mismatch"), "{stdout}");
    }
    // Another capture put in the recording's place (another length): the findings are of
    // what was there before, and are left out, with a warning.
    let saved = std::fs::read(&events).unwrap();
    std::fs::copy(
        crate::common::root().join("fixtures/valid/agui-sdk-full.jsonl"),
        &events,
    )
    .unwrap();
    let (code, stdout, stderr) = lens(&["check", events.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("findings.txt") && stderr.contains("stale"),
        "{stderr}"
    );
    // Said where a check in CI is read, too: in every report format.
    for format in ["json", "jsonl", "sarif", "junit", "github"] {
        let (code, stdout, stderr) = lens(&["check", events.to_str().unwrap(), "--format", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(
            stdout.contains("findings.txt") && stdout.contains("stale"),
            "{format}: {stdout}"
        );
    }
    std::fs::write(&events, saved).unwrap();
    // A clean run recorded over them: nothing of the earlier one stays.
    let clean = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let (code, _, stderr) = call(&clean.url("/"));
    assert_eq!(code, 0, "{stderr}");
    for checked in [&events, &raw, &recorded] {
        let (code, stdout, stderr) = lens(&["check", checked.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {stdout}{stderr}", checked.display());
    }
}

#[test]
fn run_started_must_echo_the_ids_sent() {
    let server = Server::start(Script::sse(vec![Step::Send(
        String::from_utf8(clean_run())
            .unwrap()
            .replacen("\"runId\":\"{runId}\"", "\"runId\":\"run-made-up\"", 1)
            .into_bytes(),
    )]));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(&input, r#"{"threadId":"t1","runId":"r1","messages":[]}"#).unwrap();
    let (code, stdout, _) = lens(&[
        "run",
        &server.url("/"),
        "--input",
        input.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let rules = rules(&doc);
    assert!(
        rules.contains(&"transport/run-id-mismatch".to_owned()),
        "{rules:?}"
    );
    let d = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "transport/run-id-mismatch")
        .unwrap();
    assert_eq!(d["event_index"], 0);
    assert_eq!(
        d["message"],
        "RUN_STARTED has runId \"run-made-up\" where the input sent \"r1\""
    );
    let (code, _, _) = lens(&[
        "run",
        &server.url("/"),
        "--input",
        input.to_str().unwrap(),
        "--allow",
        "transport/run-id-mismatch",
        "--allow",
        "lifecycle/run-id-mismatch",
    ]);
    assert_eq!(code, 0, "rule flags apply to transport rules");
}

#[test]
fn redirects_are_reported_not_followed() {
    let server = Server::start(Script {
        head: "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/login?next=%2F\r\nContent-Length: 0\r\n".into(),
        steps: vec![],
    });
    let (code, doc, _) = run_json(&server.url("/"), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules(&doc), ["transport/http-status"]);
    assert!(
        doc["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("a redirect to http://127.0.0.1:1/login?next=…, which is not followed")
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn no_http_exchange_at_all_exits_2() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (code, stdout, stderr) = run_url(&format!("http://127.0.0.1:{port}/"), &[]);
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("refused"), "{stderr}");
    let (code, _, stderr) = run_url("ftp://127.0.0.1/", &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("not an http:// or https:// URL"),
        "{stderr}"
    );
    // TLS is rustls: a server that does not speak it fails the handshake, before HTTP.
    let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = plain.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut stream, _) = plain.accept().unwrap();
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        std::thread::sleep(Duration::from_secs(2));
    });
    let (code, _, stderr) = run_url(&format!("https://127.0.0.1:{port}/"), &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("could not connect to https://127.0.0.1:"),
        "{stderr}"
    );
    let (code, _, stderr) = run_url("http://user:hunter2@127.0.0.1:1/", &[]);
    assert_eq!(code, 2);
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn secrets_stay_out_of_output_and_recordings() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    // In folders not made yet, as a CI job names them.
    let record = dir.path().join("captures/run.jsonl");
    let raw = dir.path().join("raw/today/run.sse");
    let output = agui_lens()
        .env("AGUI_TEST_TOKEN", "s3cret-token")
        .args([
            "run",
            &server.url("/"),
            "--message",
            "hi",
            "-H",
            "Authorization: Bearer ${AGUI_TEST_TOKEN}",
            "-H",
            "X-Api-Key: ${AGUI_TEST_TOKEN}",
            "--verbose",
            "--record",
            record.to_str().unwrap(),
            "--record-raw",
            raw.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let (code, stdout, stderr) = split(output);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let request = &server.requests()[0];
    assert_eq!(request.headers["authorization"], "Bearer s3cret-token");
    assert_eq!(request.headers["x-api-key"], "s3cret-token");
    assert!(stderr.contains("> Authorization: ***"), "{stderr}");
    for text in [
        stdout,
        stderr,
        std::fs::read_to_string(&record).unwrap(),
        std::fs::read_to_string(&raw).unwrap(),
    ] {
        assert!(!text.contains("s3cret"), "{text}");
    }
    // A key in the query string is sent, and shown as `api_key=…` in every format.
    let keyed = server.url("/?api_key=s3cret-query&agent=a1");
    for format in ["human", "json", "sarif", "github", "junit"] {
        let (code, stdout, stderr) = run_url(&keyed, &["--format", format, "--verbose"]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        let said = format!("{stdout}{stderr}");
        assert!(!said.contains("s3cret"), "{format}: {said}");
    }
    let (_, _, stderr) = run_url(&keyed, &[]);
    assert!(stderr.contains("api_key=…&agent=…"), "{stderr}");
    let sent = server.requests().len();
    assert!(
        server.requests()[sent - 1]
            .path
            .contains("api_key=s3cret-query")
    );
    // A variable that is not set is a usage error, and nothing is sent.
    let (code, _, stderr) = run_url(
        &server.url("/"),
        &["-H", "Authorization: Bearer ${AGUI_TEST_NOPE}"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("AGUI_TEST_NOPE is not set"), "{stderr}");
    assert_eq!(server.requests().len(), sent);
}

/// Waits for a condition, polling; false on timeout.
fn eventually(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A child process we started, killed when the test ends however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(args: &[&str]) -> Killed {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agui-lens"));
    for proxy in PROXY_VARIABLES {
        cmd.env_remove(proxy);
    }
    Killed(
        cmd.args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

fn first_line_within(child: &mut Killed, limit: Duration, stderr: bool) -> Option<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let pipe: Box<dyn std::io::Read + Send> = if stderr {
        Box::new(child.0.stderr.take().unwrap())
    } else {
        Box::new(child.0.stdout.take().unwrap())
    };
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    rx.recv_timeout(limit).ok()
}

#[test]
fn recordings_are_written_as_events_arrive() {
    let two = [
        frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#),
        frame(r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#),
    ]
    .concat();
    let server = Server::start(Script::sse(vec![Step::Send(two), Step::Hang]));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("run.jsonl");
    let raw = dir.path().join("run.sse");
    let url = server.url("/");
    let child = spawn(&[
        "run",
        &url,
        "--message",
        "hi",
        "--record",
        record.to_str().unwrap(),
        "--record-raw",
        raw.to_str().unwrap(),
    ]);
    let lines = || {
        std::fs::read_to_string(&record)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    assert!(
        eventually(Duration::from_secs(20), || lines() == 2),
        "the recording holds the events while the stream is still open"
    );
    drop(child);
    let recorded = std::fs::read_to_string(&record).unwrap();
    let first: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "RUN_STARTED");
    let raw = std::fs::read_to_string(&raw).unwrap();
    assert!(raw.starts_with("data: {\"type\":\"RUN_STARTED\""), "{raw}");
    assert!(raw.ends_with("\n\n"));
}

/// A call that reaches no agent leaves the recordings of an earlier call as they were (they
/// were emptied before the call was made); an answer with an empty body empties them.
#[test]
fn a_call_that_reaches_no_agent_keeps_an_earlier_recording() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("run.jsonl");
    let raw = dir.path().join("run.sse");
    let call = |url: &str| {
        split(
            agui_lens()
                .args(["run", url, "--message", "hi", "--record"])
                .arg(&record)
                .arg("--record-raw")
                .arg(&raw)
                .output()
                .unwrap(),
        )
    };
    std::fs::write(&record, EARLIER).unwrap();
    std::fs::write(&raw, "earlier\n").unwrap();
    // Nothing listens on port 9 of this host.
    let (code, _, stderr) = call("http://127.0.0.1:9/");
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(std::fs::read_to_string(&record).unwrap(), EARLIER);
    assert_eq!(std::fs::read_to_string(&raw).unwrap(), "earlier\n");
    let server = Server::start(Script::fixed("200 OK", "text/event-stream", ""));
    let (code, _, stderr) = call(&server.url("/"));
    assert_eq!(code, 1, "no event is an error: {stderr}");
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "");
    assert_eq!(std::fs::read_to_string(&raw).unwrap(), "");
}

#[test]
fn diagnostics_and_verbose_lines_come_out_as_events_arrive() {
    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        )),
        Step::Send(frame(
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m9","delta":1}"#,
        )),
        Step::Hang,
    ]));
    let url = server.url("/");
    let mut child = spawn(&["run", &url, "--message", "hi", "--format", "jsonl", "-v"]);
    let line = first_line_within(&mut child, Duration::from_secs(20), false)
        .expect("a diagnostic while the stream is still open");
    assert!(line.contains("\"rule\":\"schema/violation\""), "{line}");
    let mut child = spawn(&["run", &url, "--message", "hi", "-v"]);
    let line = first_line_within(&mut child, Duration::from_secs(20), true).unwrap();
    assert!(line.starts_with("> POST http://127.0.0.1:"), "{line}");
}

/// An agent that cannot be reached is a failure every report carries, as an input that
/// could not be read is for `check`: a SARIF or JUnit file uploaded whatever the exit status
/// must not come out empty, nor clean.
#[test]
fn no_http_exchange_is_in_every_format() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let (code, stdout, stderr) = run_url(&url, &["--format", "json"]);
    assert_eq!(code, 2, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        doc["files"][0]["failure"]
            .as_str()
            .is_some_and(|f| f.contains("refused")),
        "{stdout}"
    );
    assert!(stderr.contains("refused"), "{stderr}");
    let (code, stdout, _) = run_url(&url, &["--format", "jsonl"]);
    assert_eq!(code, 2);
    let line: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert!(
        line["failure"].as_str().unwrap().contains("refused"),
        "{stdout}"
    );
    let (code, stdout, _) = run_url(&url, &["--format", "github"]);
    assert_eq!(code, 2);
    assert!(stdout.starts_with("::error "), "{stdout}");
    // A call is not a file: nothing was there to be read.
    assert!(
        stdout.contains(&format!("no response from {url}")),
        "{stdout}"
    );
    assert!(!stdout.contains("could not read"), "{stdout}");
    let (code, stdout, _) = run_url(&url, &["--format", "junit"]);
    assert_eq!(code, 2);
    assert!(
        stdout.contains("<error message=") && stdout.contains("refused"),
        "{stdout}"
    );
    let (code, stdout, _) = run_url(&url, &["--format", "sarif"]);
    assert_eq!(code, 2);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{stdout}");
    assert!(
        invocation["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("refused"),
        "{stdout}"
    );
    let (code, stdout, _) = run_url(&url, &["--format", "human"]);
    assert_eq!(code, 2);
    assert!(stdout.contains("1 response could not be had"), "{stdout}");
}

#[test]
fn every_format_works_for_run() {
    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        )),
        Step::Close,
    ]));
    let url = server.url("/");
    let (code, stdout, _) = run_url(&url, &["--format", "jsonl"]);
    assert_eq!(code, 1);
    let first: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["rule"], "transport/connection-lost");
    assert_eq!(first["path"], url);
    // The agent's URL is no file GitHub can place an annotation on: it is named in the
    // message.
    let (_, stdout, _) = run_url(&url, &["--format", "github"]);
    assert!(
        stdout.starts_with(&format!(
            "::error title=transport/connection-lost::{url}: the connection"
        )),
        "{stdout}"
    );
    let (_, stdout, _) = run_url(&url, &["--format", "junit"]);
    assert!(stdout.starts_with("<?xml"));
    assert_eq!(stdout.matches("<failure ").count(), 2, "{stdout}");
    let (_, stdout, _) = run_url(&url, &["--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["ruleId"],
        "transport/connection-lost"
    );
    let (_, doc, _) = run_json(&url, &[]);
    assert_eq!(doc["files"][0]["path"], url);
    assert_eq!(doc["summary"]["errors"], 2);
}

#[test]
fn check_follow_reports_appended_events_as_they_arrive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("growing.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.1\"}\n",
    )
    .unwrap();
    let mut child = spawn(&[
        "check",
        "--follow",
        "--idle-timeout",
        "3",
        "--format",
        "jsonl",
        path.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(500));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":1}\n")
        .unwrap();
    let line = first_line_within(&mut child, Duration::from_secs(20), false)
        .expect("reported while the file is still followed");
    assert!(line.contains("schema/violation"), "{line}");
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(1), "stops after the idle timeout");
    let (code, _, stderr) = lens(&["check", "--follow", "-"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--follow takes a file"), "{stderr}");
}

/// A recording `run --record` made is followed as `check` reads it: with what the call found
/// beside it (`FILE.findings.txt`: an answer sent as text/html passed `--follow`, exit 0, in
/// every format) and the request it answers (`FILE.request.txt`: the state its deltas start
/// from; without it they were "before any known state").
#[test]
fn check_follow_reads_a_recording_as_check_does() {
    let body: String = [
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/counter","value":1}]}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
    ]
    .iter()
    .map(|e| format!("data: {e}\n\n"))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(
        &input,
        r#"{"threadId":"t1","runId":"r1","state":{"counter":0},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#,
    )
    .unwrap();
    let input = input.to_str().unwrap();
    let page = "<html><body>Oops</body></html>";
    for (content_type, body, code) in [
        ("text/html", body.as_str(), 1),
        ("text/event-stream", body.as_str(), 0),
        // A page, no stream: no finding of the page's own (it was "an empty body").
        ("text/html", page, 1),
    ] {
        let server = Server::start(Script::fixed("200 OK", content_type, body));
        let rec = dir.path().join(format!(
            "{}-{}.jsonl",
            content_type.replace('/', "-"),
            body.len()
        ));
        let rec = rec.to_str().unwrap();
        let url = server.url("/");
        let (ran, _, stderr) = lens(&["run", &url, "--input", input, "--record", rec]);
        assert_eq!(ran, code, "{stderr}");
        for format in ["human", "json", "sarif", "junit"] {
            let (followed, stdout, stderr) = lens(&[
                "check",
                "--follow",
                "--idle-timeout",
                "1",
                "--format",
                format,
                rec,
            ]);
            assert_eq!(followed, code, "{content_type} {format}: {stdout}{stderr}");
            if format == "sarif" {
                // (SARIF lists every rule.)
                continue;
            }
            assert_eq!(
                stdout.contains("transport/content-type"),
                code == 1,
                "{content_type} {format}: {stdout}"
            );
            assert!(!stdout.contains("no-baseline"), "{format}: {stdout}");
            assert!(!stdout.contains("no-events"), "{format}: {stdout}");
        }
    }
}

/// A followed path that cannot be opened (missing, a folder) is an input that could not be
/// read, in every format, as without --follow: the reports were empty.
#[test]
fn check_follow_of_what_cannot_be_opened_is_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    for path in [missing.to_str().unwrap(), dir.path().to_str().unwrap()] {
        for format in ["json", "sarif", "junit", "github", "jsonl"] {
            let (code, stdout, stderr) = lens(&["check", "--follow", path, "--format", format]);
            assert_eq!(code, 2, "{format}: {stderr}");
            assert!(stdout.contains(path), "{format} {path}: {stdout}");
            if format == "sarif" {
                assert!(stdout.contains("agui-lens/input-not-read"), "{stdout}");
                assert!(
                    stdout.contains("\"executionSuccessful\": false"),
                    "{stdout}"
                );
            }
        }
    }
}

// ---- agui-lens test ----

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn suite_server() -> Server {
    let warns = String::from_utf8(clean_run()).unwrap().replacen(
        "\"role\":\"assistant\"",
        "\"role\":\"assistant\",\"mood\":\"calm\"",
        1,
    );
    Server::routes(vec![
        ("/chat", Script::sse(vec![Step::Send(clean_run())])),
        (
            "/bad",
            Script::fixed(
                "422 Unprocessable Entity",
                "application/json",
                r#"{"detail":[{"loc":["threadId"],"msg":"Field required"}]}"#,
            ),
        ),
        ("/warns", Script::sse(vec![Step::Send(warns.into_bytes())])),
        (
            "/slow",
            Script::sse(vec![
                Step::Pause(Duration::from_millis(1200)),
                Step::Send(clean_run()),
            ]),
        ),
    ])
}

fn suite_text(server: &Server) -> String {
    let url = |path: &str| server.url(path);
    format!(
        r#"# A suite as a team would write it.
[[case]]
name = "chat"
url = "{chat}"
input = "inputs/chat.json"
headers = {{ Authorization = "Bearer ${{AGUI_TEST_TOKEN}}" }}
require_events = ["TEXT_MESSAGE_START"]
snapshot = "snapshots/chat.snap"
max_first_event_ms = 5000

[[case]]
name = "bad body"
url = "{bad}"
message = "hi"
expect_status = 422

[[case]]
name = "tools"
url = "{chat}"
message = "use a tool"
require_events = ["TOOL_CALL_START", "TOOL_CALL_END"]

[[case]]
name = "strict"
url = "{warns}"
message = "hi"
deny = ["schema/unknown-field"]

[[case]]
name = "lenient"
url = "{warns}"
message = "hi"

[[case]]
name = "slow"
url = "{slow}"
message = "hi"
max_first_event_ms = 300

[[case]]
name = "from env"
url_env = "AGUI_TEST_URL"
message = "hi"
"#,
        chat = url("/chat"),
        bad = url("/bad"),
        warns = url("/warns"),
        slow = url("/slow"),
    )
}

/// `agui-lens test suite.toml --color never`, run in `dir`.
fn suite_command(dir: &Path) -> assert_cmd::Command {
    let mut cmd = agui_lens();
    cmd.current_dir(dir)
        .args(["test", "suite.toml", "--color", "never"]);
    cmd
}

fn test_cmd(dir: &Path, server: &Server, args: &[&str]) -> (i32, String, String) {
    let mut cmd = suite_command(dir);
    cmd.env("AGUI_TEST_TOKEN", "tok-123")
        .env("AGUI_TEST_URL", server.url("/chat"))
        .args(args);
    split(cmd.output().unwrap())
}

#[test]
fn a_suite_end_to_end() {
    let server = suite_server();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, "suite.toml", &suite_text(&server));
    write(
        dir,
        "inputs/chat.json",
        r#"{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"hi"}]}"#,
    );

    // First run: the snapshot is written; three cases fail, each for its own reason.
    let (code, stdout, stderr) = test_cmd(
        dir,
        &server,
        &[
            "--update-snapshots",
            "--reason",
            "first capture",
            "-j",
            "3",
            "--junit",
            "junit.xml",
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let verdicts: Vec<&str> = stdout.lines().filter(|l| l.starts_with("case ")).collect();
    let names: Vec<&str> = verdicts
        .iter()
        .map(|l| l["case ".len()..l.find(" ... ").unwrap()].trim())
        .collect();
    assert_eq!(
        names,
        [
            "chat", "bad body", "tools", "strict", "lenient", "slow", "from env"
        ],
        "suite order whatever finishes first"
    );
    let failed: Vec<&str> = verdicts
        .iter()
        .filter(|l| l.contains(" ... FAILED"))
        .map(|l| l["case ".len()..l.find(" ... ").unwrap()].trim())
        .collect();
    assert_eq!(failed, ["tools", "strict", "slow"], "{stdout}");
    assert!(stdout.contains("suite/missing-event: TOOL_CALL_START, TOOL_CALL_END were never sent"));
    assert!(
        stdout.contains("error[schema/unknown-field]"),
        "per-case deny: {stdout}"
    );
    assert!(
        stdout.contains("case lenient ... ok") && stdout.contains("1 warning"),
        "{stdout}"
    );
    assert!(stdout.contains("suite/first-event-slow: the first event came after"));
    assert!(stdout.contains("test result: FAILED. 4 passed; 3 failed; 7 cases in "));
    let snapshot = std::fs::read_to_string(dir.join("snapshots/chat.snap")).unwrap();
    assert!(snapshot.contains("# reason: first capture"), "{snapshot}");
    let received = server.requests();
    let chat = received
        .iter()
        .find(|r| String::from_utf8_lossy(&r.body).contains("\"u1\""))
        .unwrap();
    let sent: Value = serde_json::from_slice(&chat.body).unwrap();
    assert!(
        sent["threadId"].as_str().unwrap().starts_with("thread-") && sent["runId"] != "r1",
        "each run of the suite starts a fresh thread: {sent}"
    );
    assert_eq!(
        sent["messages"][0]["id"], "u1",
        "the history is sent as written"
    );
    assert_eq!(chat.headers["authorization"], "Bearer tok-123");
    assert!(!stdout.contains("tok-123") && !stderr.contains("tok-123"));
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 7, "{junit}");
    assert_eq!(junit.matches("classname=\"suite.toml\"").count(), 7);
    for (name, line) in [("chat", 2), ("bad body", 11), ("from env", 40)] {
        assert!(
            junit.contains(&format!(
                "<testcase name=\"{name}\" classname=\"suite.toml\" file=\"suite.toml\" line=\"{line}\""
            )),
            "{name} at line {line}: {junit}"
        );
    }
    assert_eq!(junit.matches("<failure ").count(), 3);
    assert!(junit.contains("<testsuite name=\"suite.toml\" tests=\"7\" failures=\"3\""));
    assert!(junit.contains("<failure message=\"suite/missing-event: TOOL_CALL_START"));
    let strict = &junit[junit.find("name=\"strict\"").unwrap()..];
    assert!(
        strict.contains("event: {&quot;type&quot;:&quot;TEXT_MESSAGE_START&quot;"),
        "the failure shows the event: {strict}"
    );
    let masked_out = masked(&stdout, &server);
    insta::assert_snapshot!("suite_first_run", masked_out);

    // Second run: the snapshot holds; only the real failures remain.
    let (code, stdout, _) = test_cmd(dir, &server, &["--format", "json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["summary"]["passed"], 4);
    assert_eq!(doc["cases"][0]["name"], "chat");
    assert_eq!(doc["cases"][0]["passed"], true);
    assert_eq!(doc["cases"][1]["status"], 422);

    // The stream no longer matches the snapshot: the case fails and FILE.new is written.
    let changed = snapshot.replace("\"Hello\"", "\"Howdy\"");
    std::fs::write(dir.join("snapshots/chat.snap"), changed).unwrap();
    let (_, stdout, _) = test_cmd(dir, &server, &["--format", "jsonl"]);
    let chat: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(chat["passed"], false);
    assert_eq!(chat["diagnostics"][0]["rule"], "suite/snapshot-mismatch");
    assert!(
        chat["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("was \"Howdy\", is \"Hello\""),
        "{chat}"
    );
    assert!(dir.join("snapshots/chat.snap.new").is_file());

    // GitHub annotations point at the case's line in the suite file.
    let (_, stdout, _) = test_cmd(dir, &server, &["--format", "github"]);
    assert!(
        stdout
            .contains("::error file=suite.toml,line=2,title=suite/snapshot-mismatch::case chat: "),
        "{stdout}"
    );
}

/// `--update-snapshots` updates a snapshot from an answer the case takes, not from an error
/// page the case does not expect nor from a stream cut short: the reviewed expectation was
/// replaced by those, and the next run against a healthy agent failed. A body that ends
/// cleanly inside a run (`serve --truncate`) is cut short too: it replaced the snapshot.
#[test]
fn updating_snapshots_keeps_them_from_a_failed_answer() {
    let cut: Vec<u8> = clean_run()[..150].to_vec();
    let whole = clean_run();
    let frames = String::from_utf8(whole.clone()).unwrap();
    let second_frame_end = frames.match_indices("\n\n").nth(1).unwrap().0 + 2;
    let ended: Vec<u8> = whole[..second_frame_end].to_vec();
    let server = Server::routes(vec![
        ("/ok", Script::sse(vec![Step::Send(clean_run())])),
        (
            "/e500",
            Script::fixed(
                "500 Internal Server Error",
                "text/html",
                "<html><body>Internal error</body></html>",
            ),
        ),
        ("/half", Script::sse(vec![Step::Send(cut), Step::Close])),
        ("/ended", Script::sse(vec![Step::Send(ended)])),
        ("/empty", Script::sse(vec![])),
        (
            "/page",
            Script::fixed("200 OK", "text/html", "<html><body>Sign in</body></html>"),
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        "[[case]]\nname = \"snap\"\nurl_env = \"AGUI_TEST_URL\"\nmessage = \"hi\"\nsnapshot = \"s.snap\"\n",
    );
    let test = |route: &str, update: bool| {
        let mut cmd = suite_command(dir);
        cmd.env_remove("CI").env("AGUI_TEST_URL", server.url(route));
        if update {
            cmd.arg("--update-snapshots");
        }
        split(cmd.output().unwrap())
    };
    let (code, stdout, stderr) = test("/ok", true);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let reviewed = std::fs::read_to_string(dir.join("s.snap")).unwrap();
    for route in ["/e500", "/half", "/ended", "/empty", "/page"] {
        for update in [true, false] {
            let _ = std::fs::remove_file(dir.join("s.snap.new"));
            let (code, stdout, stderr) = test(route, update);
            // A case that fails (exit 1), not a tool that could not run (exit 2: an answer
            // with no events was compared, and read as no stream).
            assert_eq!(code, 1, "{route}: {stdout}{stderr}");
            assert!(!stdout.contains("updated s.snap"), "{route}: {stdout}");
            assert_eq!(
                stdout.contains("s.snap was not updated"),
                update,
                "{route}: {stdout}"
            );
            assert_eq!(
                std::fs::read_to_string(dir.join("s.snap")).unwrap(),
                reviewed,
                "{route}"
            );
            // Nor is the answer left pending, for `snapshot accept` to make half a stream or
            // an error page the expectation.
            assert!(!dir.join("s.snap.new").exists(), "{route}: {stdout}");
            assert!(
                stdout.contains("s.snap was not compared"),
                "{route}: {stdout}"
            );
        }
    }
    let (code, stdout, stderr) = test("/ok", false);
    assert_eq!(code, 0, "{stdout}{stderr}");

    // A case that expects an error status, answered with a stream: not compared either.
    write(
        dir,
        "suite.toml",
        "[[case]]\nname = \"snap\"\nurl_env = \"AGUI_TEST_URL\"\nmessage = \"hi\"\nsnapshot = \"e.snap\"\nexpect_status = 500\n",
    );
    let (code, stdout, stderr) = test("/e500", true);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let refusal = std::fs::read_to_string(dir.join("e.snap")).unwrap();
    let (code, stdout, stderr) = test("/ok", false);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("e.snap was not compared"), "{stdout}");
    assert!(!dir.join("e.snap.new").exists(), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.join("e.snap")).unwrap(),
        refusal
    );
}

/// `--update-baseline` when a case's agent cannot be asked leaves the baseline as it was: the
/// known findings were replaced by "could not connect", which then came back as new.
#[test]
fn an_agent_that_cannot_be_asked_records_no_baseline() {
    let server = suite_server();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        "[[case]]\nname = \"warns\"\nurl_env = \"AGUI_TEST_URL\"\nmessage = \"hi\"\n",
    );
    let test = |url: &str| {
        split(
            suite_command(dir)
                .env("AGUI_TEST_URL", url)
                .args(["--baseline", "known.toml", "--update-baseline"])
                .output()
                .unwrap(),
        )
    };
    let (code, stdout, stderr) = test(&server.url("/warns"));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let known = std::fs::read_to_string(dir.join("known.toml")).unwrap();
    assert!(known.contains("schema/unknown-field"), "{known}");
    // Nothing listens on port 9 of this host.
    let (code, stdout, stderr) = test("http://127.0.0.1:9/");
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("known.toml was left as it was"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("known.toml")).unwrap(),
        known
    );
}

/// An agent that goes silent or cuts the connection before its first event is an error of
/// the environment (a JUnit `<error>`), as it is after some events; it was a failure with
/// "the agent did not run". So is one silent before its response head.
#[test]
fn a_call_cut_before_any_event_is_an_error_not_a_failure() {
    let server = Server::routes(vec![
        ("/silent", Script::sse(vec![Step::Hang])),
        ("/closed", Script::sse(vec![Step::Close])),
        (
            "/headless",
            Script {
                head: String::new(),
                steps: vec![Step::Hang],
            },
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"silent\"\nurl = \"{}\"\nmessage = \"hi\"\nidle_timeout = 1\n\n\
             [[case]]\nname = \"closed\"\nurl = \"{}\"\nmessage = \"hi\"\n\n\
             [[case]]\nname = \"headless\"\nurl = \"{}\"\nmessage = \"hi\"\nidle_timeout = 1\n",
            server.url("/silent"),
            server.url("/closed"),
            server.url("/headless")
        ),
    );
    let (code, stdout, stderr) = split(
        suite_command(dir)
            .args(["--format", "junit"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("errors=\"3\""), "{stdout}");
    assert!(!stdout.contains("<failure"), "{stdout}");
    assert!(!stdout.contains("suite/no-stream"), "{stdout}");
}

/// A baseline holds back the same finding at the next run, though its message names the
/// run's fresh ids (`the stream ends inside run "run-…"`): it was new at every run.
#[test]
fn a_baseline_holds_findings_that_name_fresh_ids() {
    let open = [
        frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#),
        frame(r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#),
    ]
    .concat();
    let server = Server::start(Script::sse(vec![Step::Send(open)]));
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"open\"\nurl = \"{}\"\nmessage = \"hi\"\n",
            server.url("/")
        ),
    );
    let test = |update: bool| {
        let mut cmd = suite_command(dir);
        cmd.args(["--baseline", "known.json"]);
        if update {
            cmd.arg("--update-baseline");
        }
        split(cmd.output().unwrap())
    };
    let (code, stdout, stderr) = test(true);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let known = std::fs::read_to_string(dir.join("known.json")).unwrap();
    assert!(known.contains("lifecycle/unterminated-run"), "{known}");
    for _ in 0..2 {
        let (code, stdout, stderr) = test(false);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(stderr.contains("held back"), "{stderr}");
    }
}

/// `--junit` never writes over a file the suite reads: a case's input, a snapshot, the
/// baseline (only the suite file itself was guarded).
#[test]
fn the_junit_report_never_replaces_what_the_suite_reads() {
    let server = suite_server();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"chat\"\nurl = \"{}\"\ninput = \"in.json\"\nsnapshot = \"s.snap\"\n",
            server.url("/chat")
        ),
    );
    write(
        dir,
        "in.json",
        r#"{"threadId":"t","runId":"r","messages":[]}"#,
    );
    write(dir, "s.snap", "kept\n");
    write(dir, "known.toml", r#"{"version": 1, "findings": []}"#);
    for (target, named) in [
        ("in.json", "a case's input"),
        ("s.snap", "a case's snapshot"),
        ("known.toml", "--baseline"),
    ] {
        let before = std::fs::read(dir.join(target)).unwrap();
        let (code, _, stderr) = split(
            suite_command(dir)
                .args(["--junit", target, "--baseline", "known.toml"])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{target}: {stderr}");
        assert!(stderr.contains(named), "{target}: {stderr}");
        assert_eq!(std::fs::read(dir.join(target)).unwrap(), before, "{target}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_broken_suite_exits_2_before_calling_anything() {
    let server = suite_server();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"chat\"\nurl = \"{}\"\nmessage = \"hi\"\nexpect_stauts = 200\n",
            server.url("/chat")
        ),
    );
    let (code, _, stderr) = test_cmd(dir, &server, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("line 5") && stderr.contains("expect_stauts"),
        "{stderr}"
    );
    write(
        dir,
        "suite.toml",
        "[[case]]\nname = \"chat\"\nurl_env = \"AGUI_TEST_UNSET\"\nmessage = \"hi\"\n",
    );
    let (code, _, stderr) = test_cmd(dir, &server, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("suite.toml:1") && stderr.contains("AGUI_TEST_UNSET"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
    // Updating snapshots in CI needs a reason.
    write(&dir.join("ok"), "suite.toml", &suite_text(&server));
    write(&dir.join("ok"), "inputs/chat.json", "{}");
    let output = agui_lens()
        .current_dir(dir.join("ok"))
        .env("CI", "true")
        .env("AGUI_TEST_TOKEN", "tok")
        .env("AGUI_TEST_URL", server.url("/chat"))
        .args(["test", "suite.toml", "--update-snapshots"])
        .output()
        .unwrap();
    let (code, _, stderr) = split(output);
    assert_eq!(code, 2);
    assert!(stderr.contains("without --reason"), "{stderr}");
}

#[test]
fn the_state_sent_is_the_baseline_for_deltas() {
    let delta = |op: &str| {
        [
            frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#),
            frame(&format!(r#"{{"type":"STATE_DELTA","delta":[{op}]}}"#)),
            frame(r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#),
        ]
        .concat()
    };
    let server = Server::routes(vec![
        (
            "/add",
            Script::sse(vec![Step::Send(delta(
                r#"{"op":"add","path":"/items/-","value":"b"}"#,
            ))]),
        ),
        (
            "/remove",
            Script::sse(vec![Step::Send(delta(
                r#"{"op":"remove","path":"/missing"}"#,
            ))]),
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(
        &input,
        r#"{"threadId":"t1","runId":"r1","messages":[],"state":{"items":["a"]}}"#,
    )
    .unwrap();
    let run = |path: &str| {
        let (code, stdout, _) = lens(&[
            "run",
            &server.url(path),
            "--input",
            input.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        (code, rules(&doc))
    };
    assert_eq!(run("/add"), (0, vec![]), "not state/no-baseline");
    assert_eq!(run("/remove"), (1, vec!["state/patch-failed".to_owned()]));
}

/// Writes a RunAgentInput for the live tests of what `run` knows from what it sent.
fn input_file(dir: &Path, value: &Value) -> std::path::PathBuf {
    let path = dir.join("input.json");
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

/// A stream that does not echo its input: only the input sent says which tools the client
/// has and which calls its history holds.
fn unechoed(events: &[&str]) -> Script {
    let mut body = frame(
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
    );
    for event in events {
        body.extend(frame(event));
    }
    body.extend(frame(
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ));
    Script::sse(vec![Step::Send(body)])
}

/// `run` holds tool calls to the tools it sent and results to the history it sent, when the
/// stream does not echo them: arguments that break the sent schema are an error, a call to a
/// tool it did not send that the run leaves unanswered is a warning (a backend tool that
/// failed silently), and a result for a call in the sent history is no finding.
#[test]
fn what_run_sent_is_what_the_stream_is_held_to() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_file(
        dir.path(),
        &serde_json::json!({
            "threadId": "t-1", "runId": "r-1", "state": {}, "context": [], "forwardedProps": {},
            "messages": [
                {"id": "u1", "role": "user", "content": "hi"},
                {"id": "a1", "role": "assistant", "toolCalls": [{"id": "earlier", "type": "function", "function": {"name": "pick", "arguments": "{}"}}]}
            ],
            "tools": [{"name": "pick", "description": "d", "parameters": {"type": "object", "properties": {"n": {"type": "string"}}}}]
        }),
    );
    let server = Server::start(unechoed(&[
        r#"{"type":"TOOL_CALL_RESULT","messageId":"tm","toolCallId":"earlier","content":"ok"}"#,
        r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"pick"}"#,
        r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"n\": 3}"}"#,
        r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
        r#"{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"lookup"}"#,
        r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c2","delta":"{}"}"#,
        r#"{"type":"TOOL_CALL_END","toolCallId":"c2"}"#,
    ]));
    let (code, stdout, stderr) = lens(&[
        "run",
        &server.url("/"),
        "--input",
        input.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        rules(&doc),
        ["tool-args/schema-violation", "tool-args/undeclared-tool"],
        "{stdout}"
    );
}

/// `run` holds its input to the RunAgentInput schema before sending: an invalid one is
/// refused with what breaks it and nothing is sent, unless `--send-invalid` asks to see how
/// the agent answers it.
#[test]
fn an_invalid_input_is_refused_before_anything_is_sent() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let input = input_file(
        dir.path(),
        &serde_json::json!({
            "threadId": "t-1", "runId": "r-1", "tools": [], "context": [],
            "messages": [{"id": "u1", "role": "wizard", "content": "hi"}]
        }),
    );
    let args = ["run", &server.url("/"), "--input", input.to_str().unwrap()];
    let (code, stdout, stderr) = lens(&args);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("error[request/input-schema]") && stdout.contains("/messages/0/role"),
        "{stdout}"
    );
    assert!(stderr.contains("nothing was sent"), "{stderr}");
    assert!(server.requests().is_empty(), "refused before the request");
    // The report carries the refusal and what broke the input, in every format: an uploaded
    // report is never empty.
    let refused = |format: &str| {
        let mut with = args.to_vec();
        with.extend(["--format", format]);
        let (code, stdout, stderr) = lens(&with);
        assert_eq!(code, 2, "{format}: {stdout}");
        let said = if format == "human" { &stderr } else { &stdout };
        assert!(
            said.contains("nothing was sent"),
            "{format}: {stdout}{stderr}"
        );
        stdout
    };
    let doc: Value = serde_json::from_str(&refused("json")).unwrap();
    assert_eq!(rules(&doc), ["request/input-schema"], "{doc}");
    assert_eq!(doc["summary"]["errors"], 1, "{doc}");
    let sarif: Value = serde_json::from_str(&refused("sarif")).unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["ruleId"],
        "request/input-schema"
    );
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    assert!(refused("junit").contains("<failure "));
    assert!(refused("github").contains("::error "));
    refused("jsonl");
    assert!(refused("human").contains("error[request/input-schema]"));
    assert!(server.requests().is_empty(), "refused before the request");

    let mut sent = args.to_vec();
    sent.push("--send-invalid");
    let (code, stdout, stderr) = lens(&sent);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("sending it anyway (--send-invalid)"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 1);
}

/// A run that ends in RUN_ERROR is a stream the protocol allows (no finding), but the agent
/// failed: the summary says so, with the error's message, rather than only "0 errors".
#[test]
fn a_run_that_ended_in_an_error_is_said_so() {
    let failing = String::from_utf8(clean_run()).unwrap().replace(
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
        r#"{"type":"RUN_ERROR","message":"the model timed out","code":"TIMEOUT"}"#,
    );
    let server = Server::start(Script::sse(vec![Step::Send(failing.clone().into_bytes())]));
    let (code, stdout, stderr) = run_url(&server.url("/"), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("the run ended in RUN_ERROR (TIMEOUT): the model timed out"),
        "{stderr}"
    );
    let said = "the run ended in RUN_ERROR (TIMEOUT): the model timed out";
    // Every report on stdout says it too, not only the summary on stderr: a pipeline that
    // reads the JSON or an uploaded report is told the agent failed. Still no finding.
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let server = Server::start(Script::sse(vec![Step::Send(failing.clone().into_bytes())]));
        let (code, stdout, stderr) = run_url(&server.url("/"), &["--format", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(said), "{format}: {stdout}");
        if format == "json" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            // (Beside the count of note findings, not in its place: a key given twice.)
            assert_eq!(doc["files"][0]["remarks"], json!([said]), "{stdout}");
            assert!(doc["files"][0]["notes"].is_u64(), "{stdout}");
            assert_eq!(stdout.matches("\"notes\"").count(), 2, "{stdout}");
            assert_eq!(doc["summary"]["errors"], 0, "{stdout}");
        }
        if format == "sarif" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            let run = &doc["runs"][0];
            assert_eq!(run["results"], json!([]), "{stdout}");
            assert_eq!(run["invocations"][0]["executionSuccessful"], true);
            let notes = &run["invocations"][0]["toolExecutionNotifications"];
            assert_eq!(notes[0]["level"], "note", "{stdout}");
        }
    }
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let (_, _, stderr) = run_url(&server.url("/"), &[]);
    assert!(!stderr.contains("RUN_ERROR"), "{stderr}");
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
        let (_, stdout, _) = run_url(&server.url("/"), &["--format", format]);
        assert!(!stdout.contains("ended in RUN_ERROR"), "{format}: {stdout}");
    }
    // A suite's case says it too, under its line, and in every report.
    let dir = tempfile::tempdir().unwrap();
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let server = Server::start(Script::sse(vec![Step::Send(failing.clone().into_bytes())]));
        write(
            dir.path(),
            "suite.toml",
            &format!(
                "[[case]]\nname = \"chat\"\nurl = \"{}\"\nmessage = \"hi\"\n",
                server.url("/")
            ),
        );
        let (code, stdout, stderr) = test_cmd(dir.path(), &server, &["--format", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(said), "{format}: {stdout}");
        if format == "human" {
            assert!(stdout.contains("case chat ... ok"), "{stdout}");
        }
    }
}

/// An agent that answers 200 with an empty event stream is told about as a live call.
#[test]
fn an_empty_answer_is_worded_for_a_live_call() {
    let server = Server::start(Script::fixed("200 OK", "text/event-stream", ""));
    let (code, stdout, _) = run_url(&server.url("/"), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("no AG-UI events: the agent answered with an empty body"),
        "{stdout}"
    );
    assert!(!stdout.contains("capture the response body"), "{stdout}");
}

/// The events of a clean run as protobuf frames, for thread "t1" and run "r1".
fn clean_run_proto() -> Vec<u8> {
    use agui_lens_core::protocol::proto::{encode_event, push_frame};
    let text = String::from_utf8(clean_run())
        .unwrap()
        .replace("{threadId}", "t1")
        .replace("{runId}", "r1");
    let mut out = Vec::new();
    for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        let event: Value = serde_json::from_str(line).unwrap();
        push_frame(&encode_event(&event).unwrap().bytes, &mut out);
    }
    out
}

fn proto_script(content_type: &str, steps: Vec<Step>) -> Script {
    Script {
        head: format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n"
        ),
        steps,
    }
}

/// `run URL --format json` with the input `clean_run_proto` answers (thread "t1", run "r1")
/// plus flags.
fn run_t1_r1(url: &str, extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let input = input_file(
        dir.path(),
        &serde_json::json!({"threadId":"t1","runId":"r1","state":{},"messages":[
            {"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{}}),
    );
    let mut args = vec![
        "run",
        url,
        "--input",
        input.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = lens(&args);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, doc)
}

#[test]
fn protobuf_frames_are_read_as_they_arrive_a_byte_at_a_time() {
    let server = Server::start(proto_script(
        "application/vnd.ag-ui.event+proto",
        vec![Step::Trickle(clean_run_proto(), Duration::from_millis(1))],
    ));
    let (code, doc) = run_t1_r1(&server.url("/"), &["--accept", "proto"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(rules(&doc), Vec::<String>::new());
    assert_eq!(doc["summary"]["events"], 5);
    let sent = server.requests();
    assert_eq!(
        sent[0].headers["accept"],
        "application/vnd.ag-ui.event+proto"
    );
}

#[test]
fn a_protobuf_request_answered_with_sse_is_not_negotiated() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let (code, doc, _) = run_json(&server.url("/"), &["--accept", "proto"]);
    assert_eq!(code, 0);
    assert_eq!(rules(&doc), ["transport/not-negotiated"]);
    assert_eq!(doc["diagnostics"][0]["severity"], "warning");
    assert_eq!(doc["summary"]["events"], 5);
    // And the reverse: frames to an SSE request.
    let server = Server::start(proto_script(
        "application/vnd.ag-ui.event+proto",
        vec![Step::Send(clean_run_proto())],
    ));
    let (code, doc) = run_t1_r1(&server.url("/"), &[]);
    assert_eq!(code, 0);
    assert_eq!(rules(&doc), ["transport/not-negotiated"]);
    assert_eq!(doc["summary"]["events"], 5);
}

/// A capability rule applies only where the agent's declaration (`--capabilities`, a file or
/// a URL) declares its capability: answering SSE to a protobuf request is a finding for an
/// agent that declares the binary transport, and nothing for one that does not.
#[test]
fn capabilities_decide_whether_a_capability_rule_applies() {
    let declared = r#"{"transport": {"streaming": true, "httpBinary": true}}"#;
    let undeclared = r#"{"transport": {"streaming": true}, "identity": {"name": "x"}}"#;
    let server = Server::routes(vec![
        ("/", Script::sse(vec![Step::Send(clean_run())])),
        (
            "/declared",
            Script::fixed("200 OK", "application/json", declared),
        ),
        (
            "/undeclared",
            Script::fixed("200 OK", "application/json", undeclared),
        ),
        (
            "/missing",
            Script::fixed("404 Not Found", "text/plain", "no"),
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("caps.json");
    std::fs::write(&file, undeclared).unwrap();
    let file = file.to_str().unwrap();
    let accept = ["--accept", "proto"];
    for (source, expected) in [
        (server.url("/declared"), vec!["transport/not-negotiated"]),
        (server.url("/undeclared"), vec![]),
        (file.to_owned(), vec![]),
    ] {
        let mut args = accept.to_vec();
        args.extend(["--capabilities", source.as_str()]);
        let (code, doc, stderr) = run_json(&server.url("/"), &args);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(rules(&doc), expected, "{source}");
    }
    // A declaration that cannot be had, or is malformed, is a usage error: nothing is sent.
    let before = server.requests().len();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"transport": {"httpBinary": "yes"}}"#).unwrap();
    for source in [server.url("/missing"), bad.to_str().unwrap().to_owned()] {
        let mut args = vec!["run", "--message", "hi", "--capabilities", source.as_str()];
        let url = server.url("/");
        args.insert(1, url.as_str());
        let (code, _, stderr) = lens(&args);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(&source), "names the source: {stderr}");
    }
    let posted = server.requests()[before..]
        .iter()
        .filter(|r| r.path == "/")
        .count();
    assert_eq!(posted, 0, "no POST once the declaration failed");
}

#[test]
fn frames_under_a_generic_content_type_are_read_as_frames() {
    let server = Server::start(proto_script(
        "application/octet-stream",
        vec![Step::Send(clean_run_proto())],
    ));
    let (code, doc) = run_t1_r1(&server.url("/"), &["--accept", "proto"]);
    assert_eq!(code, 1);
    assert_eq!(rules(&doc), ["transport/content-type"]);
    let message = doc["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("looks like protobuf frames"), "{message}");
    assert_eq!(doc["summary"]["events"], 5);
}

/// A recording whose call lost the connection holds part of a stream, as one its recorder
/// cut: `snapshot` holds it to no expectation and makes none of it, `diff` and `fold` say it
/// (they passed it as the stream: two recordings cut at the same place matched the
/// snapshot made of the first, exit 0). The same for the raw recording, and for an exchange
/// folder whose findings say so, named as its file or through a link (`check` and `cat` of it
/// passed it whole).
#[test]
fn a_recording_whose_connection_was_lost_is_held_to_no_expectation() {
    let events: Vec<u8> = clean_run();
    let half = events.len() / 2;
    let server = Server::start(Script::sse(vec![
        Step::Send(events[..half].to_vec()),
        Step::Close,
    ]));
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    for n in ["1", "2"] {
        let (code, _, stderr) = lens(&[
            "run",
            &server.url("/"),
            "--message",
            "hi",
            "--record",
            &at(&format!("r{n}.jsonl")),
            "--record-raw",
            &at(&format!("r{n}.sse")),
        ]);
        assert_eq!(code, 1, "{stderr}");
    }
    let whole = at("whole.jsonl");
    std::fs::write(&whole, b"").unwrap();
    for recording in ["r1.jsonl", "r1.sse"] {
        let snap = at(&format!("{recording}.snap"));
        let (code, _, stderr) = lens(&["snapshot", &at(recording), "--expect", &snap, "--update"]);
        assert_eq!(code, 2, "{recording}: {stderr}");
        assert!(
            stderr.contains("cut when it was recorded")
                && stderr.contains("transport/connection-lost"),
            "{recording}: {stderr}"
        );
        assert!(!Path::new(&snap).exists(), "{recording}");
    }
    // Held to an expectation made of the events it holds: refused all the same. (The copy
    // is said to lack what only the call found; it ends inside a run, so it makes no
    // expectation either.)
    let (code, _, stderr) = lens(&["cat", &at("r2.jsonl"), "-o", &whole]);
    assert_eq!(code, 1, "{stderr}");
    let snap = at("made.snap");
    let (code, _, stderr) = lens(&["snapshot", &whole, "--expect", &snap, "--update"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("ends inside a run"), "{stderr}");
    let (code, _, stderr) = lens(&["snapshot", &at("r2.jsonl"), "--expect", &snap]);
    assert_eq!(code, 2, "{stderr}");

    let (code, _, stderr) = lens(&["diff", &at("r1.jsonl"), &at("r2.jsonl")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr.matches("cut when it was recorded").count(),
        2,
        "{stderr}"
    );
    let (code, _, stderr) = lens(&["fold", &at("r1.jsonl")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("cut when it was recorded"), "{stderr}");

    // An exchange folder (the proxy's, `test`'s) whose findings say the connection was lost.
    let exchange = dir.path().join("001");
    std::fs::create_dir(&exchange).unwrap();
    std::fs::write(
        exchange.join("request.json"),
        r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#,
    )
    .unwrap();
    std::fs::copy(at("r1.sse"), exchange.join("response.raw")).unwrap();
    std::fs::copy(at("r1.jsonl"), exchange.join("events.jsonl")).unwrap();
    std::fs::copy(at("r1.jsonl.findings.txt"), exchange.join("findings.jsonl")).unwrap();
    let events = exchange.join("events.jsonl");
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&events, &link).unwrap();
    for named in [&events, &link] {
        let named = named.to_str().unwrap();
        let (code, _, stderr) = lens(&["snapshot", named, "--expect", &snap]);
        assert_eq!(code, 2, "{named}: {stderr}");
        assert!(stderr.contains("transport/connection-lost"), "{stderr}");
        // Checked named alone, it is no whole stream either (the check read no word of the
        // exchange's findings, and passed it).
        let (code, stdout, stderr) = lens(&["check", named]);
        assert_eq!(code, 2, "{named}: {stdout}{stderr}");
        assert!(
            stderr.contains("cut when it was recorded") && stderr.contains("connection-lost"),
            "{stderr}"
        );
        let (code, _, stderr) = lens(&["cat", named, "-o", &at("copy.jsonl")]);
        assert_eq!(code, 1, "{named}: {stderr}");
    }

    // Blank lines are no events: the findings still speak of the events it holds.
    let mut with_blanks = std::fs::read(&events).unwrap();
    with_blanks.extend_from_slice(b"\n  \n");
    std::fs::write(&events, with_blanks).unwrap();
    let (code, stdout, stderr) = lens(&["check", events.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("cut when it was recorded") && !stderr.contains("stale"),
        "{stderr}"
    );

    // The same findings beside another stream (a folder copied over, a whole answer recorded
    // again into it): they speak of 3 events where it holds the whole run, and are stale, not
    // the word that it was cut.
    let other = dir.path().join("002");
    std::fs::create_dir(&other).unwrap();
    for name in ["request.json", "findings.jsonl"] {
        std::fs::copy(exchange.join(name), other.join(name)).unwrap();
    }
    let answer = String::from_utf8(clean_run()).unwrap();
    let answer = answer.replace("{threadId}", "t").replace("{runId}", "r");
    std::fs::write(other.join("response.raw"), &answer).unwrap();
    let jsonl: String = answer
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|event| format!("{event}\n"))
        .collect();
    assert_eq!(jsonl.lines().count(), 5);
    let events = other.join("events.jsonl");
    std::fs::write(&events, jsonl).unwrap();
    let events = events.to_str().unwrap();
    let (code, stdout, stderr) = lens(&["check", events]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stderr.contains("cut when it was recorded"), "{stderr}");
    assert!(
        stderr.contains("stale") && stderr.contains("findings.jsonl"),
        "{stderr}"
    );
    let snap = at("other.snap");
    let (code, _, stderr) = lens(&["snapshot", events, "--expect", &snap, "--update"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("stale"), "{stderr}");
}

#[test]
fn a_connection_lost_inside_a_frame_is_reported_with_what_came_before() {
    let frames = clean_run_proto();
    let cut = frames.len() - 10;
    let server = Server::start(proto_script(
        "application/vnd.ag-ui.event+proto",
        vec![Step::Send(frames[..cut].to_vec()), Step::Close],
    ));
    let (code, doc) = run_t1_r1(&server.url("/"), &["--accept", "proto"]);
    assert_eq!(code, 1);
    let found = rules(&doc);
    assert!(
        found.contains(&"transport/connection-lost".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"lifecycle/unterminated-run".to_owned()),
        "{found:?}"
    );
    assert_eq!(doc["summary"]["events"], 4);
}

/// A run that ends waiting on the frontend tool `paint`; its ids carry the run's, so every
/// run of a thread makes new ones.
fn paint_run() -> Vec<u8> {
    [
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m-{runId}","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m-{runId}","delta":"Painting"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m-{runId}"}"#,
        r#"{"type":"TOOL_CALL_START","toolCallId":"call-{runId}","toolCallName":"paint","parentMessageId":"m-{runId}"}"#,
        r#"{"type":"TOOL_CALL_ARGS","toolCallId":"call-{runId}","delta":"{\"color\":\"red\"}"}"#,
        r#"{"type":"TOOL_CALL_END","toolCallId":"call-{runId}"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ]
    .iter()
    .flat_map(|e| frame(e))
    .collect()
}

#[test]
fn a_conversation_runs_turn_by_turn() {
    let server = Server::routes(vec![
        ("/tool", Script::sse(vec![Step::Send(paint_run())])),
        ("/chat", Script::sse(vec![Step::Send(clean_run())])),
        (
            "/bad",
            Script::fixed("400 Bad Request", "application/json", r#"{"detail":"no"}"#),
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "paint.json",
        r#"{"threadId":"t-fixed","runId":"r-fixed","messages":[{"id":"u1","role":"user","content":"paint it"}],
            "tools":[{"name":"paint","description":"Paints the page","parameters":{"type":"object"}}],
            "context":[],"state":{"n":1},"forwardedProps":{}}"#,
    );
    write(
        dir,
        "suite.toml",
        &format!(
            r#"[[case]]
name = "round trip"
url = "{tool}"
input = "paint.json"

[[case.turn]]
tool_results = {{ paint = "painted" }}
require_events = ["TOOL_CALL_START"]

[[case]]
name = "answers a call never made"
url = "{chat}"
message = "hi"

[[case.turn]]
tool_results = {{ paint = "x" }}

[[case.turn]]
message = "more"

[[case]]
name = "refused"
url = "{bad}"
message = "hi"
expect_status = [400, 422]

[[case]]
name = "nobody there"
url = "http://127.0.0.1:1/"
message = "hi"
"#,
            tool = server.url("/tool"),
            chat = server.url("/chat"),
            bad = server.url("/bad"),
        ),
    );
    let (code, stdout, stderr) = test_cmd(
        dir,
        &server,
        &["-j", "2", "--junit", "junit.xml", "--artifacts", "art"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let verdicts: Vec<&str> = stdout.lines().filter(|l| l.starts_with("case ")).collect();
    let expected = [
        "case round trip / turn 1 ... ok",
        "case round trip / turn 2 ... ok",
        "case answers a call never made / turn 1 ... ok",
        "case answers a call never made / turn 2 ... FAILED",
        "case answers a call never made / turn 3 ... not run",
        "case refused ... ok",
        "case nobody there ... ERROR",
    ];
    assert_eq!(verdicts.len(), expected.len(), "{stdout}");
    for (line, start) in verdicts.iter().zip(expected) {
        assert!(line.starts_with(start), "{line} / {start}\n{stdout}");
    }
    assert!(
        stdout.contains("suite/turn-mismatch: turn 2 gives a result for paint, but turn 1 left no call of it waiting"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not run: turn 2 could not be built"),
        "{stdout}"
    );

    // Turn 2 continues the thread as a client that folded turn 1 would.
    let received = server.requests();
    let tool: Vec<Value> = received
        .iter()
        .filter(|r| r.path == "/tool")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let [first, second] = &tool[..] else {
        panic!("{tool:?}")
    };
    assert_ne!(first["threadId"], "t-fixed", "fresh ids by default");
    assert_eq!(first["messages"][0]["id"], "u1");
    assert_eq!(second["threadId"], first["threadId"]);
    assert_ne!(second["runId"], first["runId"]);
    let run1 = first["runId"].as_str().unwrap();
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"], "{second}");
    assert_eq!(messages[1]["id"], format!("m-{run1}"));
    assert_eq!(messages[1]["toolCalls"][0]["id"], format!("call-{run1}"));
    assert_eq!(
        messages[1]["toolCalls"][0]["function"]["arguments"],
        "{\"color\":\"red\"}"
    );
    assert_eq!(messages[2]["toolCallId"], format!("call-{run1}"));
    assert_eq!(messages[2]["content"], "painted");
    assert_eq!(second["state"], json!({"n": 1}));
    assert_eq!(second["tools"], first["tools"]);

    // JUnit: a testcase per turn at its line; the unreachable agent is an error.
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(
        junit.contains(
            "<testcase name=\"round trip / turn 2\" classname=\"suite.toml\" file=\"suite.toml\" line=\"6\""
        ),
        "{junit}"
    );
    assert!(
        junit.contains("tests=\"7\" failures=\"1\" errors=\"1\""),
        "{junit}"
    );
    let unreachable = &junit[junit.find("name=\"nobody there\"").unwrap()..];
    assert!(
        unreachable.contains("<error message=\"no response: "),
        "{junit}"
    );

    // Artifacts: what each turn sent and got.
    let turn2 = dir.join("art/01-round-trip/turn-2");
    let sent: Value =
        serde_json::from_slice(&std::fs::read(turn2.join("request.json")).unwrap()).unwrap();
    assert_eq!(&sent, second);
    let raw = std::fs::read_to_string(turn2.join("response.raw")).unwrap();
    assert!(raw.starts_with("data: {\"type\":\"RUN_STARTED\""), "{raw}");
    let events = std::fs::read_to_string(turn2.join("events.jsonl")).unwrap();
    assert_eq!(events.lines().count(), 8, "{events}");
    let outcome: Value =
        serde_json::from_slice(&std::fs::read(turn2.join("outcome.json")).unwrap()).unwrap();
    assert_eq!(outcome["passed"], true);
    let mismatch = dir.join("art/02-answers-a-call-never-made/turn-2/findings.jsonl");
    let findings = std::fs::read_to_string(mismatch).unwrap();
    assert!(findings.contains("suite/turn-mismatch"), "{findings}");
    // A findings file is written when there are findings, and a walk of the artifacts
    // checks the streams, not what the suite wrote beside them.
    if let Ok(text) = std::fs::read_to_string(turn2.join("findings.jsonl")) {
        assert!(!text.is_empty());
    }
    let (_, report, _) = crate::common::run(&[
        "check",
        "--format",
        "json",
        dir.join("art").to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_str(&report).unwrap();
    for d in report["diagnostics"].as_array().unwrap() {
        let path = d["path"].as_str().unwrap();
        assert!(
            !path.ends_with("findings.jsonl") && !path.ends_with("outcome.json"),
            "{d}"
        );
        // The refusal the case expects is no capture of nothing.
        assert!(!path.contains("refused"), "{d}");
    }
    let refused = dir.join("art/03-refused/turn-1");
    assert!(refused.join("response.raw").exists());
    assert!(
        !refused.join("events.jsonl").exists(),
        "an expected refusal left an empty events.jsonl"
    );
    let skipped = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            let path = f["path"].as_str().unwrap();
            path.ends_with("outcome.json") || path.ends_with("findings.jsonl")
        })
        .filter(|f| f["skipped"].is_string())
        .count();
    assert!(skipped >= 8, "{report}");
    // Into the same folder again: a turn that found nothing keeps no findings of a run before.
    let clean_turn = dir.join("art/02-answers-a-call-never-made/turn-1");
    assert!(!clean_turn.join("findings.jsonl").exists());
    std::fs::write(clean_turn.join("findings.jsonl"), "{\"rule\":\"x\"}\n").unwrap();
    // Nor does a turn that could not be sent keep what an earlier run sent and got.
    let unsent = dir.join("art/02-answers-a-call-never-made/turn-2");
    assert!(!unsent.join("request.json").exists());
    for name in ["request.json", "response.raw", "events.jsonl"] {
        std::fs::write(unsent.join(name), "from a run before\n").unwrap();
    }
    std::fs::write(unsent.join("notes.txt"), "the user's\n").unwrap();
    // Nor one not run at all this time (after a turn that could not be built).
    let not_run = dir.join("art/02-answers-a-call-never-made/turn-3");
    std::fs::create_dir_all(&not_run).unwrap();
    for name in ["request.json", "response.raw", "events.jsonl"] {
        std::fs::write(not_run.join(name), "from a run before\n").unwrap();
    }
    std::fs::write(not_run.join("outcome.json"), "{\"passed\": true}\n").unwrap();
    // A case the suite no longer has (renamed since) left its folder: it is said, and kept;
    // a folder of the user's is neither.
    let gone = dir.join("art/05-renamed-since/turn-1");
    std::fs::create_dir_all(&gone).unwrap();
    std::fs::write(gone.join("outcome.json"), "{\"passed\": true}\n").unwrap();
    std::fs::create_dir_all(dir.join("art/notes")).unwrap();
    let (code, stdout, stderr) = test_cmd(dir, &server, &["-j", "2", "--artifacts", "art"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("holds the artifacts of cases this suite does not have (an earlier run's): 05-renamed-since; left as they are"),
        "{stderr}"
    );
    assert!(gone.join("outcome.json").exists());
    // A run of some of its cases (`--case`): the others' folders are still the suite's.
    let (_, stdout, stderr) = test_cmd(dir, &server, &["--case", "refused", "--artifacts", "art"]);
    assert!(
        stderr.contains("does not have (an earlier run's): 05-renamed-since; left as they are"),
        "{stdout}{stderr}"
    );
    assert!(
        !clean_turn.join("findings.jsonl").exists(),
        "a finding of an earlier run was kept"
    );
    for name in ["request.json", "response.raw", "events.jsonl"] {
        assert!(
            !unsent.join(name).exists(),
            "{name} of an earlier run was kept"
        );
    }
    assert!(
        unsent.join("notes.txt").exists(),
        "a file agui-lens did not write was removed"
    );
    for name in ["request.json", "response.raw", "events.jsonl"] {
        assert!(
            !not_run.join(name).exists(),
            "{name} of an earlier run was kept"
        );
    }
    let outcome: Value =
        serde_json::from_slice(&std::fs::read(not_run.join("outcome.json")).unwrap()).unwrap();
    assert_eq!(outcome["passed"], false, "{outcome}");
    assert!(
        outcome["skipped"].as_str().unwrap().contains("not run"),
        "{outcome}"
    );

    // JSON counts cases and turns.
    let (code, json, _) = test_cmd(dir, &server, &["--format", "json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["summary"]["cases"], 4, "{json}");
    assert_eq!(doc["summary"]["turns"], 7);
    assert_eq!(doc["summary"]["not_run"], 1);
    assert_eq!(doc["cases"][1]["name"], "round trip / turn 2");
    assert_eq!(doc["cases"][1]["turn"], 2);

    // One case by name, twice: the same verdict on a fresh thread each time.
    let mut threads = Vec::new();
    for _ in 0..2 {
        let before = server.requests().len();
        let (code, stdout, stderr) = test_cmd(
            dir,
            &server,
            &[
                "--case",
                "answers*",
                "--case",
                "round*",
                "--artifacts",
                "picked",
            ],
        );
        assert_eq!(code, 1, "{stdout}{stderr}");
        assert!(
            dir.join("picked/02-answers-a-call-never-made/turn-2/findings.jsonl")
                .is_file(),
            "artifacts keep the case's place in the suite file"
        );
        let (code, stdout, stderr) = test_cmd(dir, &server, &["--case", "round*"]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(
            stdout.contains("2 passed; 0 failed; 1 case (2 turns)"),
            "{stdout}"
        );
        let sent: Value = serde_json::from_slice(&server.requests()[before].body).unwrap();
        threads.push(sent["threadId"].clone());
        assert!(dir.join("art/01-round-trip/turn-2/request.json").is_file());
    }
    assert_ne!(threads[0], threads[1]);
    let (code, _, stderr) = test_cmd(dir, &server, &["--case", "nope*"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("matches no case"), "{stderr}");
}

#[test]
fn cases_on_one_fixed_thread_never_overlap() {
    let slow = Script::sse(vec![
        Step::Pause(Duration::from_millis(600)),
        Step::Send(clean_run()),
    ]);
    let server = Server::routes(vec![("/slow", slow)]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "input.json",
        r#"{"threadId":"shared","runId":"r1","messages":[]}"#,
    );
    let mut suite = String::new();
    for (name, fixed) in [("a", true), ("b", false), ("c", true), ("d", false)] {
        suite.push_str(&format!(
            "[[case]]\nname = \"{name}\"\nurl = \"{}\"\ninput = \"input.json\"\nfixed_ids = {fixed}\n\n",
            server.url("/slow")
        ));
    }
    write(dir, "suite.toml", &suite);
    let (code, stdout, stderr) = test_cmd(dir, &server, &["-j", "4"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let received = server.requests();
    assert_eq!(received.len(), 4);
    let thread = |r: &crate::common::server::Received| {
        serde_json::from_slice::<Value>(&r.body).unwrap()["threadId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let shared: Vec<_> = received.iter().filter(|r| thread(r) == "shared").collect();
    assert_eq!(shared.len(), 2, "fixed ids are sent as written");
    let (one, two) = (shared[0], shared[1]);
    assert!(
        two.started >= one.finished.unwrap(),
        "the second run of thread `shared` started before the first was answered"
    );
    let fresh: Vec<_> = received.iter().filter(|r| thread(r) != "shared").collect();
    assert_ne!(thread(fresh[0]), thread(fresh[1]));
}

#[test]
fn waiting_for_the_agent() {
    let server = suite_server();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"chat\"\nurl = \"{}\"\nmessage = \"hi\"\n",
            server.url("/chat")
        ),
    );
    let (code, stdout, stderr) = test_cmd(dir, &server, &["--wait-for", &server.url("/chat")]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("answered after"), "{stderr}");
    let before = server.requests().len();
    let (code, _, stderr) = test_cmd(
        dir,
        &server,
        &["--wait-for", "http://127.0.0.1:1/", "--wait-timeout", "0.6"],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--wait-for: http://127.0.0.1:1/ did not answer within 0.6 s"),
        "{stderr}"
    );
    assert_eq!(
        server.requests().len(),
        before,
        "no case runs when the agent never answered"
    );
    // Stopped while waiting: said as a stop, in every report and every format, not as the
    // wait running out.
    for format in ["json", "jsonl", "sarif", "github", "human"] {
        let junit = dir.join(format!("report-{format}.xml"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        crate::common::with_default_signals(&mut command, None);
        let child = command
            .current_dir(dir)
            .args(["test", "suite.toml", "--wait-for", "http://127.0.0.1:1/"])
            .args(["--wait-timeout", "60", "--format", format, "--junit"])
            .arg(&junit)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(800));
        // SAFETY: a signal to the child this test started.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let (code, stdout, stderr) = split(child.wait_with_output().unwrap());
        assert_eq!(code, 130, "{format}: {stdout}{stderr}");
        for said in [&stderr, &std::fs::read_to_string(&junit).unwrap()] {
            assert!(said.contains("stopped by SIGINT"), "{format}: {said}");
            assert!(!said.contains("within 60 s"), "{format}: {said}");
        }
        assert!(!stdout.contains("within 60 s"), "{format}: {stdout}");
        // The suite was read: the stop is no input that could not be.
        assert!(
            !stdout.contains("could not read test"),
            "{format}: {stdout}"
        );
        match format {
            "json" => {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(doc["summary"]["stopped_by"], "SIGINT", "{doc}");
                assert_eq!(doc["summary"]["unreadable"], 0, "{doc}");
            }
            "jsonl" => {
                let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
                assert_eq!(
                    last,
                    serde_json::json!({"stopped_by": "SIGINT"}),
                    "{stdout}"
                );
            }
            "sarif" => {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                let invocation = &doc["runs"][0]["invocations"][0];
                assert_eq!(invocation["executionSuccessful"], false, "{doc}");
                assert!(
                    invocation.to_string().contains("stopped by SIGINT"),
                    "{doc}"
                );
            }
            "github" => assert!(stdout.contains("stopped by SIGINT"), "{stdout}"),
            // (said on stderr, above)
            _ => {}
        }
    }
}

/// A run whose payloads name its own ids (RAW, state) and a framework's run id, with two
/// parallel tool results in the order given.
fn payload_ids_run(first: &str, second: &str) -> Vec<u8> {
    let result = |call: &str| {
        format!(
            r#"{{"type":"TOOL_CALL_RESULT","messageId":"res-{call}-{{runId}}","toolCallId":"{call}-{{runId}}","content":"{call} done"}}"#
        )
    };
    let mut events = vec![
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#.to_owned(),
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"lastRun":"{runId}","checkpoint":"lc_run--{runId}"}}"#.to_owned(),
        r#"{"type":"RAW","event":{"run_id":"{runId}","framework_run":"lc_run--{runId}"}}"#.to_owned(),
    ];
    for call in ["a", "b"] {
        events.push(format!(
            r#"{{"type":"TOOL_CALL_START","toolCallId":"{call}-{{runId}}","toolCallName":"look"}}"#
        ));
        events.push(format!(
            r#"{{"type":"TOOL_CALL_END","toolCallId":"{call}-{{runId}}"}}"#
        ));
    }
    events.push(result(first));
    events.push(result(second));
    events.push(r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#.to_owned());
    events.iter().flat_map(|e| frame(e)).collect()
}

#[test]
fn suite_snapshots_hold_across_fresh_ids_and_parallel_results() {
    let refusal = |detail: &str| {
        Script::fixed(
            "422 Unprocessable Entity",
            "application/json",
            &format!(r#"{{"detail":"{detail}","requestId":"req-{{runId}}"}}"#),
        )
    };
    let server = Server::routes(vec![
        (
            "/ab",
            Script::sse(vec![Step::Send(payload_ids_run("a", "b"))]),
        ),
        (
            "/ba",
            Script::sse(vec![Step::Send(payload_ids_run("b", "a"))]),
        ),
        ("/refuse", refusal("threadId is required")),
        ("/refuse-other", refusal("something else")),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let suite = |ids: &str, refuse: &str| {
        format!(
            r#"[defaults]
id_patterns = ["lc_run--*"]
unordered = ["TOOL_CALL_RESULT"]

[[case]]
name = "ids"
url = "{}"
message = "hi"
snapshot = "snaps/ids.snap"

[[case]]
name = "refused"
url = "{}"
message = "hi"
expect_status = "4xx"
snapshot = "snaps/refused.snap"
redact = ["/body/requestId"]
"#,
            server.url(ids),
            server.url(refuse)
        )
    };
    write(dir, "suite.toml", &suite("/ab", "/refuse"));
    let (code, stdout, stderr) =
        test_cmd(dir, &server, &["--update-snapshots", "--reason", "first"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let ids = std::fs::read_to_string(dir.join("snaps/ids.snap")).unwrap();
    for header in [
        "# ids: payloads",
        "# id-pattern: lc_run--*",
        "# unordered: TOOL_CALL_RESULT",
    ] {
        assert!(ids.contains(header), "{header}: {ids}");
    }
    assert!(
        ids.contains(r#""snapshot":{"checkpoint":"id-1","lastRun":"run-1"}"#),
        "{ids}"
    );
    let refused = std::fs::read_to_string(dir.join("snaps/refused.snap")).unwrap();
    assert!(
        refused.contains(r#"{"body":{"detail":"threadId is required"},"contentType":"application/json","status":422}"#),
        "{refused}"
    );

    // Every run has new ids; the results come in the other order: still the same.
    for (ids, refuse) in [("/ab", "/refuse"), ("/ba", "/refuse")] {
        write(dir, "suite.toml", &suite(ids, refuse));
        let (code, stdout, stderr) = test_cmd(dir, &server, &[]);
        assert_eq!(code, 0, "{ids}: {stdout}{stderr}");
    }
    // A different error body is a difference.
    write(dir, "suite.toml", &suite("/ab", "/refuse-other"));
    let (code, stdout, _) = test_cmd(dir, &server, &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("case refused ... FAILED") && stdout.contains("\"something else\""),
        "{stdout}"
    );
    // The order is only free where the suite says so.
    let strict = suite("/ba", "/refuse").replace("unordered = [\"TOOL_CALL_RESULT\"]\n", "");
    write(dir, "suite.toml", &strict);
    std::fs::write(
        dir.join("snaps/ids.snap"),
        ids.replace("# unordered: TOOL_CALL_RESULT\n", ""),
    )
    .unwrap();
    let (code, stdout, _) = test_cmd(dir, &server, &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("case ids ... FAILED"), "{stdout}");
}

#[test]
fn a_suite_checks_by_tier_and_by_what_the_agent_declares() {
    let odd = String::from_utf8(clean_run()).unwrap().replacen(
        "\"role\":\"assistant\"",
        "\"role\":\"assistant\",\"mood\":\"calm\"",
        1,
    );
    let server = Server::routes(vec![
        ("/odd", Script::sse(vec![Step::Send(odd.into_bytes())])),
        ("/sse", Script::sse(vec![Step::Send(clean_run())])),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "binary.json",
        r#"{"transport": {"streaming": true, "httpBinary": true}}"#,
    );
    write(dir, "plain.json", r#"{"transport": {"streaming": true}}"#);
    write(
        dir,
        "suite.toml",
        &format!(
            r#"[defaults]
deny = ["schema/unknown-field", "transport/not-negotiated"]

[[case]]
name = "a should, denied"
url = "{odd}"
message = "hi"

[[case]]
name = "proto asked of an agent that declares it"
url = "{sse}"
message = "hi"
accept = "proto"
capabilities = "binary.json"

[[case]]
name = "proto asked of an agent that does not"
url = "{sse}"
message = "hi"
accept = "proto"
capabilities = "plain.json"
"#,
            odd = server.url("/odd"),
            sse = server.url("/sse"),
        ),
    );
    let verdicts = |args: &[&str]| -> Vec<String> {
        let (_, stdout, stderr) = test_cmd(dir, &server, args);
        let lines: Vec<String> = stdout
            .lines()
            .filter(|l| l.starts_with("case "))
            .map(|l| l[..l.find(" (").unwrap()].to_owned())
            .collect();
        assert_eq!(lines.len(), 3, "{stdout}{stderr}");
        lines
    };
    assert_eq!(
        verdicts(&[]),
        [
            "case a should, denied ... FAILED",
            "case proto asked of an agent that declares it ... FAILED",
            "case proto asked of an agent that does not ... ok",
        ]
    );
    // Only the MUSTs: the case's deny cannot bring a SHOULD back.
    assert_eq!(
        verdicts(&["--tier", "must"]),
        [
            "case a should, denied ... ok",
            "case proto asked of an agent that declares it ... ok",
            "case proto asked of an agent that does not ... ok",
        ]
    );
    // A declaration that cannot be read stops the suite before any call.
    let before = server.requests().len();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"x\"\nurl = \"{}\"\nmessage = \"hi\"\ncapabilities = \"missing.json\"\n",
            server.url("/sse")
        ),
    );
    let (code, _, stderr) = test_cmd(dir, &server, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("missing.json"), "{stderr}");
    assert_eq!(server.requests().len(), before);
}

/// Validates an XML file against the JUnit schema Jenkins' xUnit plugin uses
/// (fixtures/junit): Ok, or xmllint's complaint.
fn jenkins_valid(xml: &Path) -> Result<(), String> {
    let xmllint = crate::common::program("xmllint", "libxml2-utils");
    let schema = crate::common::root().join("fixtures/junit/jenkins-xunit-junit-10.xsd");
    let out = Command::new(xmllint)
        .arg("--noout")
        .arg("--schema")
        .arg(schema)
        .arg(xml)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn junit_reports_validate_against_the_jenkins_schema() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // The validator is strict: an attribute the schema does not know is refused.
    write(
        dir,
        "odd.xml",
        "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase name=\"c\" colour=\"red\"/></testsuite></testsuites>",
    );
    assert!(jenkins_valid(&dir.join("odd.xml")).is_err());

    // A suite with every kind of testcase: passed, failed, error (unreachable), skipped
    // (a turn after one that could not be built), turns with file and line.
    let server = Server::routes(vec![
        ("/tool", Script::sse(vec![Step::Send(paint_run())])),
        ("/chat", Script::sse(vec![Step::Send(clean_run())])),
    ]);
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"round <trip> & back\"\nurl = \"{tool}\"\nmessage = \"paint\"\n\n[[case.turn]]\ntool_results = {{ \"*\" = \"done\" }}\n\n[[case]]\nname = \"mismatch\"\nurl = \"{chat}\"\nmessage = \"hi\"\n\n[[case.turn]]\ntool_results = {{ paint = \"x\" }}\n\n[[case.turn]]\nmessage = \"more\"\n\n[[case]]\nname = \"down\"\nurl = \"http://127.0.0.1:1/\"\nmessage = \"hi\"\n",
            tool = server.url("/tool"),
            chat = server.url("/chat"),
        ),
    );
    let (code, stdout, stderr) = test_cmd(dir, &server, &["--junit", "suite.xml"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let junit = std::fs::read_to_string(dir.join("suite.xml")).unwrap();
    for part in [
        "<failure ",
        "<error ",
        "<skipped ",
        " file=\"suite.toml\" line=\"6\"",
    ] {
        assert!(junit.contains(part), "{part}: {junit}");
    }
    jenkins_valid(&dir.join("suite.xml")).unwrap_or_else(|e| panic!("{e}\n{junit}"));

    // check's JUnit: a clean capture, one with errors, one that cannot be read.
    let root = crate::common::root();
    let (_, xml, _) = lens(&[
        "check",
        "--format",
        "junit",
        root.join("fixtures/valid/agui-sdk-full.jsonl")
            .to_str()
            .unwrap(),
        root.join("fixtures/invalid/pairing/tool-call.jsonl")
            .to_str()
            .unwrap(),
        dir.join("missing.jsonl").to_str().unwrap(),
    ]);
    assert!(
        xml.contains("<failure") && xml.contains("errors=\"1\""),
        "{xml}"
    );
    write(dir, "check.xml", &xml);
    jenkins_valid(&dir.join("check.xml")).unwrap_or_else(|e| panic!("{e}\n{xml}"));
}

/// A walk of `test --artifacts` checks each turn's stream as the answer to the request the
/// turn sent (its state is the baseline of the stream's deltas: without it, a delta to it
/// fails), and says again what `test` found of the exchange itself (the status it was
/// answered with), from the turn's findings, in the file it is about.
#[test]
fn artifacts_check_as_their_exchanges_were_found() {
    let delta_run: Vec<u8> = [
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}]}"#,
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ]
    .iter()
    .flat_map(|e| frame(e))
    .collect();
    let server = Server::routes(vec![
        ("/delta", Script::sse(vec![Step::Send(delta_run)])),
        (
            "/down",
            Script::fixed("503 Service Unavailable", "text/plain", "down for a moment"),
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "state.json",
        r#"{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"count"}],
            "tools":[],"context":[],"state":{"n":1},"forwardedProps":{},"protocolVersion":"1.1"}"#,
    );
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"state\"\nurl = \"{}\"\ninput = \"state.json\"\n\n\
             [[case]]\nname = \"down\"\nurl = \"{}\"\nmessage = \"hi\"\n\n\
             [[case]]\nname = \"expects success\"\nurl = \"{}\"\nmessage = \"hi\"\n\
             expect_status = 200\n\n\
             [[case]]\nname = \"nobody there\"\nurl = \"http://127.0.0.1:1/\"\nmessage = \"hi\"\n",
            server.url("/delta"),
            server.url("/down"),
            server.url("/down"),
        ),
    );
    let (code, stdout, stderr) = test_cmd(dir, &server, &["--artifacts", "art"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    // What the turns recorded of their exchanges (`test` places a finding in its case), as
    // (rule, the file under art/ it is about).
    let art = dir.join("art");
    let of_exchange = |rule: &str| {
        rule.starts_with("request/")
            || rule.starts_with("transport/")
            || rule == "suite/status-mismatch"
    };
    let cases = [
        "01-state",
        "02-down",
        "03-expects-success",
        "04-nobody-there",
    ];
    let mut recorded = Vec::new();
    for case in cases {
        let turn = art.join(case).join("turn-1");
        if let Ok(text) = std::fs::read_to_string(turn.join("findings.jsonl")) {
            for line in text.lines() {
                let d: Value = serde_json::from_str(line).unwrap();
                let rule = d["rule"].as_str().unwrap();
                let file = match rule.starts_with("request/") {
                    true => "request.json",
                    false => "response.raw",
                };
                if of_exchange(rule) {
                    recorded.push((rule.to_owned(), format!("{case}/turn-1/{file}")));
                }
            }
        }
    }
    recorded.sort();
    for case in &cases[1..] {
        assert!(
            !art.join(case).join("turn-1/events.jsonl").exists(),
            "{case}: a refusal, or no answer, left an empty events.jsonl"
        );
    }
    for expected in [
        (
            "suite/status-mismatch",
            "03-expects-success/turn-1/response.raw",
        ),
        (
            "suite/status-mismatch",
            "04-nobody-there/turn-1/response.raw",
        ),
    ] {
        let expected = (expected.0.to_owned(), expected.1.to_owned());
        assert!(recorded.contains(&expected), "{recorded:?}");
    }
    assert!(
        recorded.contains(&(
            "transport/http-status".to_owned(),
            "02-down/turn-1/response.raw".to_owned()
        )),
        "{recorded:?}"
    );
    for format in ["json", "human", "sarif"] {
        let (code, report, stderr) =
            crate::common::run(&["check", "--format", format, art.to_str().unwrap()]);
        assert_eq!(code, 1, "{format}: {report}{stderr}");
        if format != "json" {
            assert!(
                report.contains("transport/http-status"),
                "{format}: {report}"
            );
            if format == "human" {
                let outcome = report
                    .lines()
                    .find(|l| l.contains("01-state/turn-1/outcome.json"));
                assert!(
                    outcome.is_some_and(|l| l.contains("the verdict `agui-lens test` recorded")),
                    "{report}"
                );
            }
            continue;
        }
        let report: Value = serde_json::from_str(&report).unwrap();
        let diagnostics = report["diagnostics"].as_array().unwrap();
        let mut said: Vec<_> = diagnostics
            .iter()
            .filter(|d| of_exchange(d["rule"].as_str().unwrap()))
            .map(|d| {
                let path = Path::new(d["path"].as_str().unwrap());
                let at = path
                    .strip_prefix(&art)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (d["rule"].as_str().unwrap().to_owned(), at)
            })
            .collect();
        said.sort();
        assert_eq!(said, recorded, "{report}");
        // The delta applies to the state the turn sent: nothing of the stream is wrong.
        let streamed: Vec<&Value> = diagnostics
            .iter()
            .filter(|d| {
                d["path"]
                    .as_str()
                    .unwrap()
                    .ends_with("01-state/turn-1/events.jsonl")
                    && d["severity"] != "note"
            })
            .collect();
        assert!(streamed.is_empty(), "{streamed:?}");
    }
}

/// A case's input goes out as written: ids it leaves out stay out (the case tests an agent's
/// answer to their absence), and fresh ids replace only those it has. An input that is no
/// RunAgentInput is the case's error, not sent, unless the case expects a refusal.
#[test]
fn a_case_input_goes_out_as_written() {
    let server = Server::routes(vec![
        (
            "/refuses",
            Script::fixed(
                "422 Unprocessable Entity",
                "application/json",
                r#"{"detail":"threadId is required"}"#,
            ),
        ),
        ("/", Script::sse(vec![Step::Send(clean_run())])),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "no-thread.json",
        r#"{"runId":"r1","messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#,
    );
    write(dir, "hello.json", r#"{"hello":1}"#);
    let suite = |cases: &str| write(dir, "suite.toml", cases);

    suite(&format!(
        "[[case]]\nname = \"no thread\"\nurl = \"{}\"\ninput = \"no-thread.json\"\nexpect_status = 422\n",
        server.url("/refuses")
    ));
    let (code, stdout, stderr) = split(suite_command(dir).output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let sent: Value = serde_json::from_slice(&server.requests()[0].body).unwrap();
    assert_eq!(sent.get("threadId"), None, "{sent}");
    assert_ne!(sent["runId"], "r1", "the run id is fresh: {sent}");
    assert!(
        sent["runId"].as_str().unwrap().starts_with("run-"),
        "{sent}"
    );

    // Not a RunAgentInput, and the case expects a stream: nothing is sent, the case fails.
    suite(&format!(
        "[[case]]\nname = \"hello\"\nurl = \"{}\"\ninput = \"hello.json\"\n",
        server.url("/")
    ));
    for format in ["human", "json", "junit", "sarif", "github"] {
        let (code, stdout, stderr) = split(
            suite_command(dir)
                .args(["--format", format])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        assert!(
            stdout.contains("request/input-schema"),
            "{format}: {stdout}{stderr}"
        );
    }
    assert_eq!(server.requests().len(), 1, "only the first case was sent");

    // The same input where the case expects the agent to refuse it: sent as is.
    suite(&format!(
        "[[case]]\nname = \"hello refused\"\nurl = \"{}\"\ninput = \"hello.json\"\nexpect_status = 422\n",
        server.url("/refuses")
    ));
    let (code, stdout, stderr) = split(suite_command(dir).output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let sent: Value = serde_json::from_slice(&server.requests()[1].body).unwrap();
    assert_eq!(sent, json!({"hello": 1}));
}

/// The snapshot of an error answer that echoes the input it refuses holds the ids the run
/// minted (its threadId and runId, a message's id) as keys (`{runId}`), in values and in
/// members' names: it matches the next run's answer (it failed at every run after the one
/// that wrote it, on the fresh ids in the body).
#[test]
fn an_error_snapshot_does_not_hold_the_ids_a_run_minted() {
    use std::io::{Read, Write};
    // An agent that refuses every input with a 422 echoing it whole, and naming its run.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let seen = sent.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            let body = loop {
                let n = stream.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break None;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).into_owned();
                let Some((head, body)) = text.split_once("\r\n\r\n") else {
                    continue;
                };
                let len = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if body.len() >= len {
                    break Some(body[..len].to_owned());
                }
            };
            let Some(body) = body else { continue };
            let input: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            seen.lock().unwrap().push(input.clone());
            let run = input["runId"].as_str().unwrap_or("").to_owned();
            let answer =
                json!({"detail": [{"msg": "refused", "input": input}], "runs": {run: "bad"}})
                    .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"refused\"\nurl = \"{url}\"\nmessage = \"hi\"\n\
             expect_status = 422\nsnapshot = \"refused.snap\"\n"
        ),
    );
    let (code, stdout, stderr) = split(
        suite_command(dir)
            .arg("--update-snapshots")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let snapshot = std::fs::read_to_string(dir.join("refused.snap")).unwrap();
    assert!(snapshot.contains("{runId}"), "{snapshot}");
    for _ in 0..2 {
        let (code, stdout, stderr) = split(suite_command(dir).output().unwrap());
        assert_eq!(code, 0, "{stdout}{stderr}\n{snapshot}");
    }
    // Each run sent fresh ids.
    let sent = sent.lock().unwrap();
    assert_eq!(sent.len(), 3);
    assert!(sent[0]["runId"] != sent[1]["runId"], "{sent:?}");
    assert!(
        sent[0]["messages"][0]["id"] != sent[1]["messages"][0]["id"],
        "{sent:?}"
    );
}

/// A recording named as a folder is refused before the agent is called (the call was made,
/// then the recording could not be created).
#[test]
fn a_recording_named_as_a_folder_is_refused_before_the_call() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--record", "--record-raw"] {
        let (code, _, stderr) = split(
            agui_lens()
                .args(["run", "--message", "hi", flag])
                .arg(dir.path())
                .arg(server.url("/"))
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("is a directory"), "{stderr}");
    }
    assert!(server.requests().is_empty(), "the agent was called");
}

/// A suite that cannot be run (a typo in a key, an input that is not there) says so in
/// every format it was asked for, and in its `--junit` file, which a CI step publishes
/// whatever the exit status: it printed nothing and left the last run's green JUnit in place.
/// A `--junit` path that holds anything but a report is not written over.
#[test]
fn a_suite_that_cannot_run_is_said_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "typo.toml",
        "[[case]]\nname = \"c\"\nurl = \"http://127.0.0.1:9/\"\nmessage = \"hi\"\nrequire_event = [\"RUN_STARTED\"]\n",
    );
    write(
        dir,
        "missing.toml",
        "[[case]]\nname = \"c\"\nurl = \"http://127.0.0.1:9/\"\ninput = \"nowhere.json\"\n",
    );
    let green = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"agui-lens test\" tests=\"16\" failures=\"0\" errors=\"0\"></testsuites>\n";
    for (suite, said) in [
        ("typo.toml", "require_event"),
        ("missing.toml", "nowhere.json"),
    ] {
        write(dir, "junit.xml", green);
        let (code, stdout, stderr) = split(
            agui_lens()
                .current_dir(dir)
                .args(["test", suite, "--junit", "junit.xml"])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{suite}: {stdout}{stderr}");
        assert!(stderr.contains(said), "{suite}: {stderr}");
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        assert_ne!(junit, green, "{suite}");
        assert!(
            junit.contains("<error") || junit.contains("<failure"),
            "{junit}"
        );
        assert!(junit.contains(said), "{junit}");
        for format in ["json", "jsonl", "junit", "sarif", "github"] {
            let (code, stdout, stderr) = split(
                agui_lens()
                    .current_dir(dir)
                    .args(["test", suite, "--format", format])
                    .output()
                    .unwrap(),
            );
            assert_eq!(code, 2, "{suite} {format}: {stderr}");
            assert!(stdout.contains(said), "{suite} {format}: {stdout}");
        }
    }
    // Not a report: left as it was.
    write(dir, "notes.txt", "my notes\n");
    let (code, _, stderr) = split(
        agui_lens()
            .current_dir(dir)
            .args(["test", "typo.toml", "--junit", "notes.txt"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "my notes\n"
    );
}

/// A status the case does not expect is explained by what happened: an agent that refused
/// with another error status than the case expects did not "accept" the request, and one
/// that streamed where the case expects a refusal took no "other success status".
#[test]
fn a_status_mismatch_says_which_way_the_agent_went() {
    use crate::common::server::{Script, Server, clean_run};
    let server = Server::routes(vec![
        (
            "/refuses",
            Script::fixed("422 Unprocessable Entity", "text/plain", "no"),
        ),
        (
            "/streams",
            Script::sse(vec![crate::common::server::Step::Send(clean_run())]),
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.toml"),
        format!(
            "[[case]]\nname = \"refused otherwise\"\nurl = \"{}\"\nmessage = \"hi\"\nexpect_status = 400\n\n\
             [[case]]\nname = \"not refused\"\nurl = \"{}\"\nmessage = \"hi\"\nexpect_status = 422\n",
            server.url("/refuses"),
            server.url("/streams")
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = split(suite_command(dir.path()).output().unwrap());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("the agent refused the request, with another status than the case expects"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the agent accepted what the case expects it to refuse"),
        "{stdout}"
    );
    assert!(!stdout.contains("another success status"), "{stdout}");
    // A redirect is no refusal, and a stream is no redirect.
    let server = Server::routes(vec![
        (
            "/moved",
            Script::fixed("302 Found", "text/plain", "elsewhere"),
        ),
        (
            "/streams",
            Script::sse(vec![crate::common::server::Step::Send(clean_run())]),
        ),
    ]);
    std::fs::write(
        dir.path().join("suite.toml"),
        format!(
            "[[case]]\nname = \"moved\"\nurl = \"{}\"\nmessage = \"hi\"\nexpect_status = 200\n\n\
             [[case]]\nname = \"not moved\"\nurl = \"{}\"\nmessage = \"hi\"\nexpect_status = \"3xx\"\n",
            server.url("/moved"),
            server.url("/streams")
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = split(suite_command(dir.path()).output().unwrap());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("sent the call elsewhere"), "{stdout}");
    assert!(stdout.contains("answered the call itself"), "{stdout}");
    assert!(!stdout.contains("refuse"), "{stdout}");
}

/// `--record` and `--record-raw` naming one file that is not there yet, spelled two ways
/// (`x`, `../here/x`, `new/../x`), are refused before anything is sent: both were written into
/// it, and the recording was neither.
#[test]
fn two_recordings_named_as_one_file_are_refused_however_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().join("here");
    std::fs::create_dir(&here).unwrap();
    for (record, raw) in [
        ("s.x", "../here/s.x"),
        ("new/../s.x", "./s.x"),
        ("s.x", "../here/./new/../s.x"),
    ] {
        let (code, _, stderr) = split(
            agui_lens()
                .current_dir(&here)
                .args([
                    "run",
                    "http://127.0.0.1:9/",
                    "--message",
                    "hi",
                    "--record",
                    record,
                ])
                .args(["--record-raw", raw])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{record} {raw}: {stderr}");
        assert!(stderr.contains("name one file"), "{record} {raw}: {stderr}");
        assert!(!here.join("s.x").exists());
    }
    // A link to the other, which is not there yet.
    std::os::unix::fs::symlink("s.x", here.join("link.x")).unwrap();
    let (code, _, stderr) = split(
        agui_lens()
            .current_dir(&here)
            .args([
                "run",
                "http://127.0.0.1:9/",
                "--message",
                "hi",
                "--record",
                "s.x",
            ])
            .args(["--record-raw", "link.x"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("name one file"), "{stderr}");
}

/// A recording is checked as the answer to the request that was sent: `run --record` keeps
/// the request beside it (`FILE.request.txt`), so that what the run found with the input
/// (arguments against the tools sent, deltas against the state sent) is found again. Without
/// it, a run that failed on its tool call's arguments checked clean from its recording.
#[test]
fn a_recording_is_checked_as_the_answer_to_what_was_sent() {
    let frames = [
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}]}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
        r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"setColor"}"#,
        r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"colour\":5}"}"#,
        r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
    ];
    let body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
    let server = Server::start(Script::sse(vec![Step::Send(body.into_bytes())]));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(
        &input,
        r#"{"threadId":"t1","runId":"r1","messages":[],"state":{"n":1},"context":[],
            "forwardedProps":{},"tools":[{"name":"setColor","description":"d","parameters":
            {"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}]}"#,
    )
    .unwrap();
    let events = dir.path().join("run.jsonl");
    let (code, stdout, stderr) = lens(&[
        "run",
        &server.url("/"),
        "--input",
        input.to_str().unwrap(),
        "--record",
        events.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let live = rules(&serde_json::from_str(&stdout).unwrap());
    assert!(
        live.contains(&"tool-args/schema-violation".to_owned()),
        "{live:?}"
    );
    let sidecar = dir.path().join("run.jsonl.request.txt");
    assert!(sidecar.is_file());
    // The recording checks as the run did, in every format.
    let checked = |path: &Path| {
        let (code, stdout, stderr) = lens(&["check", "--format", "json", path.to_str().unwrap()]);
        (code, rules(&serde_json::from_str(&stdout).unwrap()), stderr)
    };
    let (code, found, _) = checked(&events);
    assert_eq!((code, &found), (1, &live));
    for format in ["human", "jsonl", "sarif", "junit", "github"] {
        let (code, stdout, _) = lens(&["check", "--format", format, events.to_str().unwrap()]);
        assert_eq!(code, 1, "{format}: {stdout}");
        assert!(stdout.contains("schema-violation"), "{format}: {stdout}");
        // (SARIF lists every rule the tool has.)
        assert!(
            format == "sarif" || !stdout.contains("no-baseline"),
            "{format}: {stdout}"
        );
    }
    let (code, found, _) = checked(dir.path());
    assert_eq!((code, &found), (1, &live), "the folder walk");
    // The request named beside its recording is read with it, not as a stream of its own.
    let (code, stdout, _) = lens(&[
        "check",
        "--format",
        "json",
        events.to_str().unwrap(),
        sidecar.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((code, rules(&doc)), (1, live.clone()), "{doc}");
    // `inspect` has the request too.
    let (code, stdout, _) = lens(&["inspect", "--format", "json", events.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("schema-violation"), "{stdout}");
    assert!(!stdout.contains("no-baseline"), "{stdout}");
    // `fold` starts from the state the request sent, as the client did.
    let (code, stdout, stderr) = lens(&["fold", events.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let folded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(folded["state"], json!({"n": 2}), "{folded}");
    // Compacted, elsewhere or in place, the recording keeps its request: it checks as before.
    let out = dir.path().join("compacted");
    let (code, _, stderr) = lens(&[
        "compact",
        events.to_str().unwrap(),
        "--output",
        out.join("run.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.join("run.jsonl.request.txt").is_file(), "{stderr}");
    let (code, found, _) = checked(&out.join("run.jsonl"));
    assert_eq!((code, &found), (1, &live));
    let before = std::fs::metadata(&events).unwrap().len();
    let (code, _, stderr) = lens(&["compact", "--in-place", events.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::metadata(&events).unwrap().len() < before,
        "{stderr}"
    );
    let (code, found, stderr) = checked(&events);
    assert_eq!((code, &found), (1, &live), "{stderr}");
    // Another capture put in the recording's place is checked as it is, the request said
    // to be another's.
    std::fs::write(&events, frames[..2].join("\n")).unwrap();
    let (_, found, stderr) = checked(&events);
    assert!(stderr.contains("run.jsonl.request.txt"), "{stderr}");
    assert_eq!(
        stderr.matches("is checked as it is").count(),
        1,
        "said once: {stderr}"
    );
    assert!(!found.contains(&"tool-args/schema-violation".to_owned()));
    // A request file that does not give the recording's length cannot be told stale: it is
    // no request `run` recorded, said, and left out.
    std::fs::write(&events, frames.join("\n") + "\n").unwrap();
    let sidecar_text =
        r#"{"request":{"threadId":"t1","runId":"r1","messages":[],"state":{"m":1}}}"#;
    std::fs::write(&sidecar, sidecar_text).unwrap();
    let (_, found, stderr) = checked(&events);
    assert!(stderr.contains("is no request"), "{stderr}");
    assert!(
        !found.contains(&"state/patch-failed".to_owned()),
        "{found:?}"
    );
    // The raw body may not be recorded where the events' request goes (nor the reverse): one
    // would be written over the other. Refused before anything is sent.
    let other = dir.path().join("other.jsonl");
    let beside = dir.path().join("other.jsonl.request.txt");
    for (record, raw) in [(&other, &beside), (&beside, &other)] {
        let (code, _, stderr) = lens(&[
            "run",
            &server.url("/"),
            "--input",
            input.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
            "--record-raw",
            raw.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("nothing was sent"), "{stderr}");
        assert!(!other.exists() && !beside.exists(), "{stderr}");
    }
}

/// Two runs recording into one file at once: the second is refused before it sends anything
/// (it would have truncated the first's recording under it, and the two streams interleaved,
/// one's findings deleted by the other), and the first's recording is whole.
#[test]
fn a_recording_under_way_is_not_recorded_over() {
    let server = Server::start(Script::sse(vec![
        Step::Send(frame(
            r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#,
        )),
        Step::Pause(Duration::from_millis(1500)),
        Step::Send(frame(
            r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
        )),
    ]));
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("run.jsonl");
    let url = server.url("/");
    let mut first = Command::new(env!("CARGO_BIN_EXE_agui-lens"));
    for proxy in PROXY_VARIABLES {
        first.env_remove(proxy);
    }
    let first = first
        .args(["run", &url, "--message", "hi", "--record"])
        .arg(&events)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first call under way (its request received).
    let waited = Instant::now();
    while server.requests().is_empty() && waited.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for record in ["--record", "--record-raw"] {
        let (code, _, stderr) = lens(&[
            "run",
            &url,
            "--message",
            "hi",
            record,
            events.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("another agui-lens is recording"),
            "{stderr}"
        );
    }
    assert_eq!(server.requests().len(), 1);
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, stdout, stderr) = lens(&["check", events.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(std::fs::read_to_string(&events).unwrap().lines().count(), 2);
    // Once it is done, the file is free again; a call that reaches no agent, into a file
    // that was not there, leaves none behind.
    let (code, _, stderr) = lens(&[
        "run",
        &url,
        "--message",
        "hi",
        "--record",
        events.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let nowhere = dir.path().join("nowhere.jsonl");
    let (code, _, stderr) = lens(&[
        "run",
        "http://127.0.0.1:9/",
        "--message",
        "hi",
        "--record",
        nowhere.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!nowhere.exists());
}

/// A file of the user's named as one a run writes beside its recording (the request, the
/// findings only the call finds, the word that it was cut) is refused as a file of theirs
/// named as the recording is: nothing is sent, and the file is left as it was (the request
/// file was written over, the findings file taken away, in silence). What a run wrote there
/// is written over by the next.
#[test]
fn a_users_file_beside_a_recording_is_not_written_over() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("y.jsonl");
    let url = server.url("/");
    for suffix in [".request.txt", ".findings.txt", ".cut.txt"] {
        let beside = dir.path().join(format!("y.jsonl{suffix}"));
        std::fs::write(&beside, "my notes\n").unwrap();
        let (code, _, stderr) = lens(&[
            "run",
            &url,
            "--message",
            "hi",
            "--record",
            events.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("what no `agui-lens run` wrote there"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&beside).unwrap(), "my notes\n");
        std::fs::remove_file(&beside).unwrap();
    }
    assert!(server.requests().is_empty());
    for _ in 0..2 {
        let (code, _, stderr) = lens(&[
            "run",
            &url,
            "--message",
            "hi",
            "--record",
            events.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stderr}");
    }
    assert_eq!(server.requests().len(), 2);
}

/// A run answered with an error page, or with a body that is no event stream, finds one
/// error; its recording (empty of events, with what the call found beside it) is checked
/// with the same findings: it gained a `framing/no-events` that called the page "an empty
/// body".
#[test]
fn a_recorded_answer_of_no_stream_is_checked_as_it_was_live() {
    for script in [
        Script::fixed(
            "404 Not Found",
            "text/html",
            "<html><h1>Not Found</h1></html>",
        ),
        Script::fixed("200 OK", "text/plain", "hello, I am not a stream"),
    ] {
        let server = Server::start(script);
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("e.jsonl");
        let raw = dir.path().join("e.raw");
        let (code, live, stderr) = lens(&[
            "run",
            &server.url("/"),
            "--message",
            "hi",
            "--record",
            events.to_str().unwrap(),
            "--record-raw",
            raw.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code, 1, "{stderr}");
        let live = rules(&serde_json::from_str(&live).unwrap());
        // The body as it came too: a page no client reads as a stream is not read as one.
        for recorded in [&events, &raw] {
            let (code, stdout, stderr) =
                lens(&["check", recorded.to_str().unwrap(), "--format", "json"]);
            assert_eq!(code, 1, "{stdout}{stderr}");
            assert_eq!(
                rules(&serde_json::from_str(&stdout).unwrap()),
                live,
                "{}: {stdout}",
                recorded.display()
            );
        }
    }
}

/// An agent that cannot be reached is one failure in every format: SARIF and GitHub said it
/// twice (as `suite/status-mismatch` and again as the case that could not be asked, in the
/// same words), where JSON, JUnit and the terminal say it once.
#[test]
fn an_unreachable_agent_is_said_once_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.toml",
        "[[case]]\nname = \"down\"\nurl = \"http://127.0.0.1:1/\"\nmessage = \"hi\"\n",
    );
    let suite = dir.path().join("suite.toml");
    let suite = suite.to_str().unwrap();
    let (code, stdout, stderr) = lens(&["test", suite, "--format", "sarif"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 1, "{stdout}");
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    let (code, stdout, stderr) = lens(&["test", suite, "--format", "github"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let errors = stdout.lines().filter(|l| l.starts_with("::error")).count();
    assert_eq!(errors, 1, "{stdout}");
    assert!(stdout.contains("could not connect"), "{stdout}");
}

/// `run --record` onto a disk that fills up part way: stdout was empty in every format (an
/// uploaded SARIF or JUnit file empty), and the recording cut in the middle of a line with
/// nothing beside it to say so. The stream is checked to its end all the same, the report
/// carries the failure in every format, and a `.cut.txt` says the recording holds part of it.
/// (A file size limit stands in for the full disk: the write fails the same way.)
#[test]
fn a_recording_that_cannot_be_written_to_its_end_is_a_failure_every_report_carries() {
    let body = long_answer(200);
    for flag in ["--record", "--record-raw"] {
        for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
            let dir = tempfile::tempdir().unwrap();
            let rec = dir.path().join("rec.jsonl");
            let server = Server::start(Script::sse(vec![Step::Send(body.clone())]));
            let mut command = Command::new(env!("CARGO_BIN_EXE_agui-lens"));
            command
                .args([
                    "run",
                    &server.url("/"),
                    "--message",
                    "hi",
                    "--color",
                    "never",
                ])
                .args([flag, rec.to_str().unwrap(), "--format", format]);
            for proxy in PROXY_VARIABLES {
                command.env_remove(proxy);
            }
            crate::common::with_file_size_limit(&mut command, 2048);
            let (code, stdout, stderr) = split(command.output().unwrap());
            let what = format!("{flag} {format}: {stdout}{stderr}");
            assert_eq!(code, 2, "{what}");
            assert!(stderr.contains("writing the recording"), "{what}");
            if format == "human" {
                // The reason on stderr (above), as for any input; the count on stdout.
                assert!(
                    stdout.contains("1 recording could not be written"),
                    "{what}"
                );
            } else {
                assert!(stdout.contains("writing the recording"), "{what}");
            }
            match format {
                "json" => {
                    let doc: Value = serde_json::from_str(&stdout).unwrap();
                    // Checked to its end: every event was read, and the run it holds ended.
                    if flag == "--record" {
                        assert_eq!(doc["files"][0]["events"], 204, "{what}");
                    }
                    assert_eq!(doc["summary"]["errors"], 0, "{what}");
                }
                "sarif" => {
                    let doc: Value = serde_json::from_str(&stdout).unwrap();
                    let run = &doc["runs"][0];
                    assert_eq!(
                        run["invocations"][0]["executionSuccessful"], false,
                        "{what}"
                    );
                }
                "junit" => assert!(stdout.contains("<error"), "{what}"),
                _ => {}
            }
            let cut = dir.path().join("rec.jsonl.cut.txt");
            let said = std::fs::read_to_string(&cut).unwrap_or_default();
            assert!(said.contains("writing the recording"), "{what}: {said}");
            // Not how many events the check went on to read, which the recording does not
            // hold.
            assert!(!said.contains("204 events"), "{what}: {said}");
            // A check of the recording says it holds the stream in part, never that it is
            // whole or the agent's cut.
            let (code, stdout, stderr) = lens(&["check", rec.to_str().unwrap()]);
            assert_ne!(code, 0, "{what}: {stdout}{stderr}");
            assert!(
                format!("{stdout}{stderr}").contains("writing the recording"),
                "{what}: {stdout}{stderr}"
            );
            // Recording into the same file again: what the failed run wrote beside it is a
            // run's, replaced (it was refused as a file of the user's), and a whole
            // recording takes it away.
            let again = Server::start(Script::sse(vec![Step::Send(body.clone())]));
            let (code, stdout, stderr) = run_url(&again.url("/"), &[flag, rec.to_str().unwrap()]);
            assert_eq!(code, 0, "{what}: again: {stdout}{stderr}");
            assert!(!cut.exists(), "{what}");
            let (code, stdout, stderr) = lens(&["check", rec.to_str().unwrap()]);
            assert_eq!(code, 0, "{what}: {stdout}{stderr}");
        }
    }
}

/// `--send-invalid` sends an input that breaks its schema to see how the agent answers it. An
/// agent that refuses it (400, 422) does what it may, and was charged with
/// `transport/http-status` (exit 1), while one that ran on the bad input passed with nothing
/// said of it in the report (what broke the input went to stderr only). The refusal is no
/// finding, and every format says what was sent and how the agent took it.
#[test]
fn a_refused_invalid_input_sent_on_purpose_is_no_finding() {
    let refusing = Server::start(Script::fixed(
        "422 Unprocessable Entity",
        "application/json",
        r#"{"detail":"messages.0.role: invalid"}"#,
    ));
    let accepting = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let failing = Server::start(Script::fixed(
        "500 Internal Server Error",
        "text/plain",
        "boom",
    ));
    let dir = tempfile::tempdir().unwrap();
    let input = input_file(
        dir.path(),
        &serde_json::json!({
            "threadId": "t-1", "runId": "r-1", "tools": [], "context": [],
            "messages": [{"id": "u1", "role": "wizard", "content": "hi"}]
        }),
    );
    let input = input.to_str().unwrap();
    for (server, code, said) in [
        (&refusing, 0, "refused the input"),
        (&accepting, 0, "took the input"),
        (&failing, 1, "answered 500"),
    ] {
        for format in ["human", "json", "sarif", "junit", "github", "jsonl"] {
            let (got, stdout, stderr) = lens(&[
                "run",
                &server.url("/"),
                "--input",
                input,
                "--send-invalid",
                "--format",
                format,
            ]);
            let what = format!("{said} {format}: {stdout}{stderr}");
            assert_eq!(got, code, "{what}");
            assert!(stdout.contains(said), "{what}");
            if code == 0 && format == "json" {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(doc["summary"]["errors"], 0, "{what}");
            }
        }
    }
    // Recorded, the refusal is what a later check of the recording says too: it charged the
    // agent with `framing/no-events` for the empty body it kept ("the agent took the request
    // and streamed nothing").
    let record = dir.path().join("refused.jsonl");
    let raw = dir.path().join("refused.raw");
    let (got, stdout, stderr) = lens(&[
        "run",
        &refusing.url("/"),
        "--input",
        input,
        "--send-invalid",
        "--record",
        record.to_str().unwrap(),
        "--record-raw",
        raw.to_str().unwrap(),
    ]);
    assert_eq!(got, 0, "{stdout}{stderr}");
    for recording in [&record, &raw] {
        for format in ["human", "json", "sarif", "junit", "github", "jsonl"] {
            let (got, stdout, stderr) =
                lens(&["check", recording.to_str().unwrap(), "--format", format]);
            let what = format!("{}, {format}: {stdout}{stderr}", recording.display());
            assert_eq!(got, 0, "{what}");
            assert!(stdout.contains("refused the input (422)"), "{what}");
            let found = crate::common::findings_said(format, &stdout);
            assert!(!found.contains("no-events"), "{what}");
        }
    }
    // The refusal holds only for what was recorded: a request file that says a valid input
    // was refused, or a status no refusal has, or other bytes of the same length in the
    // recording's place, pass nothing.
    let request_file = dir.path().join("refused.jsonl.request.txt");
    let kept: Value = serde_json::from_slice(&std::fs::read(&request_file).unwrap()).unwrap();
    let valid = serde_json::json!({"threadId": "t", "runId": "r", "messages": [], "tools": [],
        "context": [], "state": {}, "forwardedProps": {}});
    let mut other_status = kept.clone();
    other_status["refusedSentInvalid"] = 500.into();
    let mut made_valid = kept.clone();
    made_valid["request"] = valid;
    for (tampered, why) in [(other_status, "a 500"), (made_valid, "a valid request")] {
        std::fs::write(&request_file, tampered.to_string()).unwrap();
        let (got, stdout, stderr) = lens(&["check", record.to_str().unwrap()]);
        assert_eq!(got, 1, "{why}: {stdout}{stderr}");
        assert!(!stdout.contains("refused the input"), "{why}: {stdout}");
    }
    std::fs::write(&request_file, kept.to_string()).unwrap();
    let body = std::fs::read(&raw).unwrap();
    let event = br#"{"type":"RUN_ERROR"}"#;
    assert!(body.len() > event.len() + 1, "{}", body.len());
    let mut swapped = event.to_vec();
    swapped.resize(body.len() - 1, b' ');
    swapped.push(b'\n');
    std::fs::write(&raw, &swapped).unwrap();
    let (got, stdout, stderr) = lens(&["check", raw.to_str().unwrap()]);
    assert_ne!(got, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("refused the input"), "{stdout}");
    // Another stream put in the recording's place later is checked as what it is.
    std::fs::write(&record, "").unwrap();
    std::fs::write(
        &record,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    )
    .unwrap();
    let (got, stdout, stderr) = lens(&["check", record.to_str().unwrap()]);
    assert_eq!(got, 1, "{stdout}{stderr}");
    assert!(stdout.contains("unterminated-run"), "{stdout}{stderr}");
}

/// What a suite's case expects is its author's, not a finding to adopt: `--update-baseline`
/// recorded `suite/status-mismatch` (a case expecting a refusal, the agent accepting the
/// input) and `suite/snapshot-mismatch` (no snapshot yet), and with the baseline those cases
/// passed on every run after. They fail with a baseline as without one.
#[test]
fn a_baseline_holds_back_no_expectation_of_a_suite() {
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "suite.toml",
        &format!(
            "[[case]]\nname = \"refuses\"\nurl = \"{url}\"\nmessage = \"hi\"\nexpect_status = 422\n\n\
             [[case]]\nname = \"snapped\"\nurl = \"{url}\"\nmessage = \"hi\"\nsnapshot = \"s.snap\"\n",
            url = server.url("/")
        ),
    );
    let test = |update: bool| {
        let mut cmd = suite_command(dir);
        cmd.env_remove("CI").args(["--baseline", "known.json"]);
        if update {
            cmd.arg("--update-baseline");
        }
        split(cmd.output().unwrap())
    };
    let (_, stdout, stderr) = test(true);
    let known = std::fs::read_to_string(dir.join("known.json")).unwrap_or_default();
    assert!(!known.contains("suite/"), "{known}\n{stdout}{stderr}");
    let _ = std::fs::remove_file(dir.join("s.snap.new"));
    let (code, stdout, stderr) = test(false);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("suite/status-mismatch"), "{stdout}");
    assert!(stdout.contains("suite/snapshot-mismatch"), "{stdout}");
}

/// What an agent says (a RUN_ERROR's message) and what a suite names (a case) reach a CI log
/// on lines of their own: a line break and `::error …` in either wrote a workflow command,
/// colour codes a green `test result: ok.` of their own. Each is shown escaped, in `run`'s
/// and `test`'s words, in every format that writes lines for a person.
#[test]
fn what_an_agent_says_writes_no_line_of_its_own_into_a_ci_log() {
    let said =
        "boom\n::error file=README.md,line=1::PWNED\n\u{1b}[32mtest result: ok. 9 passed\u{1b}[0m";
    let error = json!({"type": "RUN_ERROR", "message": said, "code": "X\n::warning::code"});
    let mut body = frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#);
    body.extend(frame(&error.to_string()));
    let server = Server::start(Script::sse(vec![Step::Send(body)]));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.toml"),
        format!(
            "[[case]]\nname = \"agent\"\nurl = \"{0}\"\nmessage = \"hi\"\n\n[[case]]\nname = \"evil\\n::error file=x.toml,line=1::INJECTED\"\nurl = \"{0}\"\nmessage = \"hi\"\n",
            server.url("/")
        ),
    )
    .unwrap();
    let injected = |out: &str| {
        out.lines().any(|line| {
            line.starts_with("::error file=README")
                || line.starts_with("::error file=x.toml")
                || line.starts_with("::warning::code")
                || line.starts_with("\u{1b}[32mtest result")
        }) || out.contains('\u{1b}')
    };
    let (_, stdout, stderr) = run_url(&server.url("/"), &[]);
    let out = format!("{stdout}{stderr}");
    assert!(!injected(&out), "{out}");
    assert!(
        out.contains("RUN_ERROR (X\\n::warning::code): boom\\n::error"),
        "{out}"
    );
    // Where the format escapes for itself (JSON), the agent's words are kept as they came.
    let (_, report, _) = run_json(&server.url("/"), &[]);
    let remarks = report.to_string();
    assert!(
        remarks.contains(r"boom\n::error file=README.md"),
        "{remarks}"
    );
    assert!(!remarks.contains(r"boom\\n"), "{remarks}");
    for format in ["human", "github", "junit"] {
        let (_, stdout, stderr) = split(
            agui_lens()
                .current_dir(dir.path())
                .args(["test", "suite.toml", "--color", "never", "--format", format])
                .output()
                .unwrap(),
        );
        let out = format!("{stdout}{stderr}");
        assert!(!injected(&out), "{format}: {out}");
        assert!(
            out.contains("evil\\n::error file=x.toml") || out.contains("evil&#10;::error"),
            "{format}: {out}"
        );
    }
}

/// A case that could not be asked (an agent nobody listens for) is said at the case's line
/// in SARIF and in GitHub's annotations, as every other format says it: it lost its line
/// there, and a dashboard pointed at the top of the suite.
#[test]
fn a_case_that_could_not_be_asked_keeps_its_line_in_every_format() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.toml"),
        format!("# cases\n\n[[case]]\nname = \"gone\"\nurl = \"http://127.0.0.1:{port}/\"\nmessage = \"hi\"\n"),
    )
    .unwrap();
    let test = |format: &str| {
        split(
            agui_lens()
                .current_dir(dir.path())
                .args(["test", "suite.toml", "--format", format])
                .output()
                .unwrap(),
        )
    };
    let (code, stdout, _) = test("sarif");
    assert_eq!(code, 1, "{stdout}");
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{stdout}");
    for result in results {
        assert_eq!(
            result["locations"][0]["physicalLocation"]["region"]["startLine"], 3,
            "{stdout}"
        );
    }
    let (code, stdout, _) = test("github");
    assert_eq!(code, 1, "{stdout}");
    let annotation = stdout.lines().find(|l| l.starts_with("::error ")).unwrap();
    assert!(
        annotation.starts_with("::error file=suite.toml,line=3,"),
        "{stdout}"
    );
}
