//! The HTML report in a real browser. Headless Chromium loads the page from a file:// URL and
//! is driven over its DevTools protocol (`--remote-debugging-pipe`: JSON messages ending in NUL
//! on file descriptors 3 and 4), which reports console errors, uncaught exceptions and failed
//! loads by level. Chromium's own logging cannot tell `console.error` from `console.log`.
//!
//! Chromium is `$CHROMIUM`, else `chromium` on PATH; when missing, the first test to need it
//! installs Debian's `chromium` package with apt-get (this needs root, as CI has on a fresh
//! machine; about a minute). Set `AGUI_LENS_UPDATE_SCREENSHOT=1` to rewrite docs/inspect.png.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use agui_lens_core::fold::Folder;
use serde_json::{Value, json};

use crate::common::{program, root, run};

/// How long one DevTools round trip may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The Chromium binary, installed once if missing.
pub fn chromium() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| match std::env::var_os("CHROMIUM") {
        Some(path) => PathBuf::from(path),
        None => program("chromium", "chromium"),
    })
}

/// A pipe whose ends close on exec.
fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

/// One headless Chromium, driven over the DevTools protocol.
struct Browser {
    child: Child,
    to_browser: File,
    from_browser: Receiver<Value>,
    next_id: u64,
    /// Events received while waiting for replies, in order.
    events: Vec<Value>,
    profile: tempfile::TempDir,
}

/// A page loaded in a browser tab.
struct Page<'a> {
    browser: &'a mut Browser,
    session: String,
}

impl Browser {
    fn launch() -> Browser {
        use std::os::fd::AsRawFd;
        let profile = tempfile::tempdir().unwrap();
        let log = File::create(profile.path().join("chromium.log")).unwrap();
        let (their_read, to_browser) = pipe();
        let (from_browser, their_write) = pipe();
        let (r, w) = (their_read.as_raw_fd(), their_write.as_raw_fd());
        let mut cmd = Command::new(chromium());
        cmd.args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--mute-audio",
            "--remote-debugging-pipe",
            "--window-size=1400,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .env("TMPDIR", profile.path())
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. The ends
        // are first moved above 10 so that placing one on 3 or 4 cannot clobber the other.
        unsafe {
            cmd.pre_exec(move || {
                let high_r = libc::fcntl(r, libc::F_DUPFD, 10);
                let high_w = libc::fcntl(w, libc::F_DUPFD, 10);
                if high_r < 0
                    || high_w < 0
                    || libc::dup2(high_r, 3) < 0
                    || libc::dup2(high_w, 4) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting chromium");
        drop((their_read, their_write));
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from_browser);
            let mut message = Vec::new();
            loop {
                message.clear();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if message.last() == Some(&0) {
                            message.pop();
                        }
                        let Ok(value) = serde_json::from_slice::<Value>(&message) else {
                            continue;
                        };
                        if tx.send(value).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Browser {
            child,
            to_browser,
            from_browser: rx,
            next_id: 0,
            events: Vec::new(),
            profile,
        }
    }

    fn log_tail(&self) -> String {
        let text =
            std::fs::read_to_string(self.profile.path().join("chromium.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    fn receive(&mut self, deadline: Instant) -> Value {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.from_browser.recv_timeout(wait) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "chromium did not answer in time; its log ends:\n{}",
                    self.log_tail()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!(
                    "chromium closed the pipe; its log ends:\n{}",
                    self.log_tail()
                )
            }
        }
    }

    /// Sends a command and waits for its reply; events that arrive meanwhile are kept.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to_browser.write_all(&bytes).unwrap();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let reply = self.receive(deadline);
            if reply.get("id") == Some(&json!(id)) {
                if let Some(error) = reply.get("error") {
                    panic!("{method} failed: {error}");
                }
                return reply["result"].clone();
            }
            self.events.push(reply);
        }
    }

    /// Waits for an event of a session, unless it already came.
    fn wait_for(&mut self, session: &str, method: &str) {
        let matches = |e: &Value| e["method"] == method && e["sessionId"] == session;
        if self.events.iter().any(matches) {
            return;
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let event = self.receive(deadline);
            let found = matches(&event);
            self.events.push(event);
            if found {
                return;
            }
        }
    }

    /// Opens a page in a new tab, sized like a laptop screen, and waits until it has loaded.
    fn open(&mut self, page: &Path) -> Page<'_> {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        let session = attached["sessionId"].as_str().unwrap().to_owned();
        for method in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.call(Some(&session), method, json!({}));
        }
        self.call(
            Some(&session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
        );
        let url = format!("file://{}", page.canonicalize().unwrap().display());
        self.call(Some(&session), "Page.navigate", json!({"url": url}));
        self.wait_for(&session, "Page.loadEventFired");
        Page {
            browser: self,
            session,
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Page<'_> {
    /// Evaluates an expression in the page; returns its value.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.browser.call(
            Some(&self.session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("evaluating {expression}: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// Console errors and assertions, uncaught exceptions, and errors the browser logged
    /// (failed loads, refused content), as text.
    fn problems(&mut self) -> Vec<String> {
        // A round trip, so everything the page did before it has been reported.
        self.eval("1");
        let session = self.session.clone();
        self.browser
            .events
            .iter()
            .filter(|e| e["sessionId"] == session.as_str())
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.consoleAPICalled"
                        if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                    {
                        Some(format!("console.{}: {}", p["type"], p["args"]))
                    }
                    "Runtime.exceptionThrown" => Some(format!(
                        "exception: {}",
                        p["exceptionDetails"]["exception"]["description"]
                            .as_str()
                            .unwrap_or_else(|| p["exceptionDetails"]["text"]
                                .as_str()
                                .unwrap_or_default())
                    )),
                    "Log.entryAdded" if p["entry"]["level"] == "error" => {
                        Some(format!("log: {}", p["entry"]["text"]))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    fn screenshot(&mut self) -> Vec<u8> {
        let shot = self.browser.call(
            Some(&self.session),
            "Page.captureScreenshot",
            json!({"format": "png"}),
        );
        base64_decode(shot["data"].as_str().unwrap())
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &d)| n | (u32::from(d) << (18 - 6 * i)));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(chunk.len() - 1)
        })
        .collect()
}

/// Writes the report of a stream into a temp dir; returns the dir and the page.
fn report(stream: &str) -> (tempfile::TempDir, PathBuf) {
    report_with(stream, &[])
}

/// [`report`], with more flags for `inspect`.
fn report_with(stream: &str, flags: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let mut args = vec!["inspect", stream, "--html", page.to_str().unwrap()];
    args.extend_from_slice(flags);
    let (code, stdout, stderr) = run(&args);
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    assert!(stderr.starts_with("wrote "), "{stderr}");
    (dir, page)
}

/// Clicks every row of the event table and checks the state the page shows against fold.
fn assert_states_match_fold(page: &mut Page<'_>, stream: &str) {
    let expected = states_by_fold(stream);
    let rows = page.eval(
        "Array.prototype.map.call(document.querySelectorAll('#events tbody tr'), function (r) {
            r.click();
            return [Number(r.dataset.last), document.getElementById('state-view').textContent];
        })",
    );
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let index = row[0].as_u64().unwrap() as usize;
        let shown = row[1].as_str().unwrap();
        match &expected[index] {
            None => assert_eq!(shown, "", "{stream}: event #{index}"),
            Some(state) => assert_eq!(
                serde_json::from_str::<Value>(shown).unwrap(),
                *state,
                "{stream}: the state after event #{index}"
            ),
        }
    }
}

/// The state after each event, folded by the library (the semantics the page must show).
fn states_by_fold(stream: &str) -> Vec<Option<Value>> {
    let text = std::fs::read_to_string(root().join(stream)).unwrap();
    let mut folder = Folder::new(1 << 30);
    let path: std::sync::Arc<str> = "t".into();
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let value: Value = serde_json::from_str(line).unwrap();
            folder.apply(&crate::common::event_at(&path, i, value));
            folder.state().cloned()
        })
        .collect()
}

#[test]
fn console_errors_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!doctype html><title>bad</title><p>x</p>\
         <script>console.log('fine'); console.error('deliberate console error');</script>\
         <script>undefinedFunction();</script>\
         <img src=\"missing-image.png\">",
    )
    .unwrap();
    let good = dir.path().join("good.html");
    std::fs::write(
        &good,
        "<!doctype html><title>good</title><script>console.log('only a log');</script>",
    )
    .unwrap();
    let mut browser = Browser::launch();
    let problems = browser.open(&bad).problems();
    let all = problems.join("\n");
    assert!(all.contains("deliberate console error"), "{all}");
    assert!(all.contains("undefinedFunction is not defined"), "{all}");
    assert!(all.contains("ERR_FILE_NOT_FOUND"), "{all}");
    assert_eq!(problems.len(), 3, "{all}");
    assert_eq!(browser.open(&good).problems(), Vec::<String>::new());
    // Chromium's singleton lock lives in its temporary folder; the browser is killed, not
    // closed, so a lock in the machine's /tmp would outlive every test run.
    let locks = std::fs::read_dir(browser.profile.path())
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("org.chromium.")
        })
        .count();
    assert_eq!(
        locks, 1,
        "the singleton lock is kept in the profile's folder"
    );
}

#[test]
fn report_renders_with_its_elements_and_escapes_what_it_embeds() {
    let stream = "fixtures/inspect/everything.jsonl";
    // Its RUN_ERROR with a message open is a note by default: made a warning, it shows a
    // warning's mark.
    let (_dir, page) = report_with(stream, &["--warn", "lifecycle/open-at-error"]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "nothing is fetched"
    );
    let mut browser = Browser::launch();
    let mut page = browser.open(&page);
    assert_eq!(page.eval("document.body.dataset.ready"), json!("yes"));
    let counts = page.eval(
        "JSON.stringify({
            lanes: document.querySelectorAll('#timeline .lane[data-first]').length,
            messageLanes: document.querySelectorAll('#timeline .lane.message').length,
            toolLanes: document.querySelectorAll('#timeline .lane.tool').length,
            stepLanes: document.querySelectorAll('#timeline .lane.step').length,
            reasoningLanes: document.querySelectorAll('#timeline .lane.reasoning').length,
            subagentLanes: document.querySelectorAll('#timeline .lane.subagent').length,
            errorMarks: document.querySelectorAll('#timeline .lane.problems .mark.error').length,
            warningMarks: document.querySelectorAll('#timeline .lane.problems .mark.warning').length,
            ticks: document.querySelectorAll('#timeline .tick').length,
            messages: document.querySelectorAll('#conversation .msg').length,
            rows: document.querySelectorAll('#events tbody tr').length,
            problemRows: document.querySelectorAll('#events tbody tr.problem').length,
            problems: document.querySelectorAll('#problems li').length,
            scripts: document.scripts.length,
            selected: document.querySelectorAll('#events tr.selected').length
        })",
    );
    let counts: Value = serde_json::from_str(counts.as_str().unwrap()).unwrap();
    // Four problems (one of them the RUN_ERROR with a message open, made a warning), and the
    // note that the stream declares no protocol version (listed, never marked as a problem on
    // the timeline).
    assert_eq!(
        counts,
        json!({
            "lanes": 10, "messageLanes": 3, "toolLanes": 1, "stepLanes": 1,
            "reasoningLanes": 1, "subagentLanes": 2, "errorMarks": 3, "warningMarks": 1,
            "ticks": 4, "messages": 7, "rows": 34, "problemRows": 4, "problems": 5,
            "scripts": 2, "selected": 1
        })
    );
    // Text that looks like markup is shown as text, and did not end the script early.
    let conversation = page.eval("document.getElementById('conversation').textContent");
    let conversation = conversation.as_str().unwrap();
    assert!(conversation.contains("</script><script>alert('x')</script>"));
    assert!(conversation.contains("</script><!-- <b>not bold</b> & more."));
    // Filters: text, problems only; a problem mark selects its event's row.
    let filtered = page.eval(
        "(function () {
            var f = document.getElementById('filter');
            f.value = 'tool_call'; f.dispatchEvent(new Event('input'));
            var text = document.querySelectorAll('#events tbody tr:not([hidden])').length;
            f.value = ''; f.dispatchEvent(new Event('input'));
            var p = document.getElementById('problems-only');
            p.checked = true; p.dispatchEvent(new Event('change'));
            var problems = document.querySelectorAll('#events tbody tr:not([hidden])').length;
            document.querySelector('#timeline .mark.warning').click();
            var sel = document.querySelector('#events tr.selected');
            return [text, problems, sel.dataset.first, document.getElementById('shown').textContent];
        })()",
    );
    assert_eq!(filtered, json!([4, 4, "36", "4 of 34 rows"]));
    assert_eq!(page.problems(), Vec::<String>::new());
}

#[test]
fn state_at_every_event_is_the_state_fold_has_there() {
    let streams = [
        "fixtures/inspect/everything.jsonl",
        // Ninety deltas of every operation, a failed one, a root replacement: the page
        // replays changes between whole states, which it embeds now and then.
        "fixtures/inspect/state-changes.jsonl",
        "fixtures/recordings/copilotkit-full.jsonl",
        "fixtures/recordings/agui-sdk-full.jsonl",
    ];
    let mut browser = Browser::launch();
    for stream in streams {
        let (_dir, page) = report(stream);
        let mut page = browser.open(&page);
        assert_states_match_fold(&mut page, stream);
        assert_eq!(page.problems(), Vec::<String>::new(), "{stream}");
    }
}

#[test]
fn degenerate_inputs_render_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Inputs with no AG-UI events are no streams: no report is written for them.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    for stream in [
        empty.to_str().unwrap(),
        "fixtures/recordings/pydantic-ai-invalid.jsonl",
    ] {
        let page = dir.path().join("none.html");
        let (code, _, stderr) = run(&["inspect", stream, "--html", page.to_str().unwrap()]);
        assert_eq!(code, 2, "{stream}: {stderr}");
        assert!(
            stderr.contains("holds no AG-UI events"),
            "{stream}: {stderr}"
        );
        assert!(!page.exists(), "{stream}");
    }
    let lone = dir.path().join("lone.jsonl");
    std::fs::write(
        &lone,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    )
    .unwrap();
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(
        &garbage,
        "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"x\",\"delta\":\"hi\"}\nnot json\n\
         {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    )
    .unwrap();
    let mut browser = Browser::launch();
    for stream in [lone.to_str().unwrap(), garbage.to_str().unwrap()] {
        let (_dir, page) = report(stream);
        let mut page = browser.open(&page);
        assert_eq!(
            page.eval("document.body.dataset.ready"),
            json!("yes"),
            "{stream}"
        );
        assert_eq!(page.problems(), Vec::<String>::new(), "{stream}");
        let listed = page.eval("document.querySelectorAll('#problems li').length");
        assert!(
            listed.as_u64().unwrap() >= 1,
            "{stream}: its findings are listed"
        );
    }
}

#[test]
fn screenshot_of_a_real_recording() {
    let (_dir, page) = report("fixtures/recordings/pydantic-ai-full.jsonl");
    let mut browser = Browser::launch();
    let mut page = browser.open(&page);
    assert_eq!(page.eval("document.body.dataset.ready"), json!("yes"));
    let lanes = page.eval("document.querySelectorAll('#timeline .lane[data-first]').length");
    assert_eq!(
        lanes,
        json!(8),
        "the run, one reasoning span, two messages, four tool calls"
    );
    assert_eq!(page.problems(), Vec::<String>::new());
    let png = page.screenshot();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((size(16), size(20)), (1400, 1000), "width and height");
    let docs = root().join("docs/inspect.png");
    if std::env::var_os("AGUI_LENS_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(&docs, &png).unwrap();
    }
    assert!(
        docs.is_file(),
        "docs/inspect.png is missing: run this test with AGUI_LENS_UPDATE_SCREENSHOT=1"
    );
}

/// A problem past the rows the event table holds (it holds the first 10,000) is said to be
/// there when it is picked: the page showed the JSON of the table's last row, another event,
/// as if it were the one picked.
#[test]
fn a_problem_past_the_table_shows_no_other_event() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("long.jsonl");
    let mut text = String::from(concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}"#,
        "\n"
    ));
    // Steps, which the table does not merge: one row each.
    for i in 0..6000 {
        text.push_str(&format!(
            "{{\"type\":\"STEP_STARTED\",\"stepName\":\"s{i}\"}}\n{{\"type\":\"STEP_FINISHED\",\"stepName\":\"s{i}\"}}\n"
        ));
    }
    // The problem, past the table: a message that never started.
    text.push_str(r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"ghost","delta":"boo"}"#);
    text.push('\n');
    text.push_str(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#);
    text.push('\n');
    std::fs::write(&stream, text).unwrap();
    let (_dir, page) = report(stream.to_str().unwrap());
    let mut browser = Browser::launch();
    let mut page = browser.open(&page);
    assert_eq!(page.eval("document.body.dataset.ready"), json!("yes"));
    let shown = page.eval(
        "(function () {
            var rows = document.querySelectorAll('#events tbody tr');
            var last = rows[rows.length - 1].dataset.last;
            document.querySelector('#problems [data-event=\"12001\"]').click();
            return [last, document.getElementById('event-view').textContent,
                    document.querySelectorAll('#events tr.selected').length];
        })()",
    );
    let shown = shown.as_array().unwrap();
    assert!(
        shown[0].as_str().unwrap().parse::<u64>().unwrap() < 12001,
        "{shown:?}"
    );
    let view = shown[1].as_str().unwrap();
    assert!(!view.contains("STEP_"), "another event was shown: {view}");
    assert!(view.contains("#12001"), "{view}");
    assert_eq!(shown[2], json!(0), "no row is the event picked");
    assert_eq!(page.problems(), Vec::<String>::new());
}
