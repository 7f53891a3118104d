//! Hostile inputs: each is answered with exit 0, 1 or 2 and a clear message, in bounded time
//! and memory, and never a panic. Memory is the child's peak RSS as the kernel accounts it.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// What a run of the binary left behind.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub peak_rss_mib: f64,
}

impl Ran {
    /// The peak resident memory, for a test that bounds it: a run never seen after its exec
    /// (it ended first) has no reading, and a bound on no reading would hold of anything.
    pub fn peak_mib(&self) -> f64 {
        assert!(
            self.peak_rss_mib > 0.0,
            "no reading of the run's memory was taken"
        );
        self.peak_rss_mib
    }
}

/// Runs the binary, failing the test if it runs past `limit`; reports its peak resident memory
/// (the kernel's high-water mark, read from /proc while it runs: rusage from wait4 would also
/// count the test process, whose memory the child shares until it execs). A run that ended
/// before any reading could be taken (a short one, on a busy machine: once in CI) is run
/// again, up to five times, so that the reading is of a run; the last run is returned.
pub fn run_measured(args: &[&str], limit: Duration) -> Ran {
    let mut ran = run_measured_once(args, limit);
    for _ in 1..5 {
        if ran.peak_rss_mib > 0.0 {
            break;
        }
        ran = run_measured_once(args, limit);
    }
    ran
}

/// [`run_measured`], once.
fn run_measured_once(args: &[&str], limit: Duration) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .args(args)
        .current_dir(crate::common::root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = Vec::new();
        out.read_to_end(&mut s).unwrap();
        s
    });
    let stderr = std::thread::spawn(move || {
        let mut s = Vec::new();
        err.read_to_end(&mut s).unwrap();
        s
    });
    let started = Instant::now();
    let mut peak_kib = 0u64;
    let status = loop {
        if let Some(hwm) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|text| vm_hwm_kib(&text))
        {
            peak_kib = peak_kib.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("agui-lens {args:?} ran longer than {limit:?}");
        }
        // Until a first reading, as often as it can be had: a short run may end within the
        // first few milliseconds after its exec.
        std::thread::sleep(match peak_kib {
            0 => Duration::from_micros(100),
            _ => Duration::from_millis(5),
        });
    };
    let stdout = String::from_utf8_lossy(&stdout.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    let code = status
        .code()
        .unwrap_or_else(|| panic!("agui-lens {args:?} was killed by a signal; stderr: {stderr}"));
    Ran {
        code,
        stdout,
        stderr,
        peak_rss_mib: peak_kib as f64 / 1024.0,
    }
}

/// The high-water mark in a `/proc/PID/status`, if the process is agui-lens by then: its name
/// changes only once exec has given it memory of its own.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let name = status.lines().find_map(|l| l.strip_prefix("Name:"))?;
    if name.trim() != "agui-lens" {
        return None;
    }
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A reading of the child taken before it has become agui-lens is the test process's: the
/// spawn returns as soon as the child starts to exec, and for a moment after, its status
/// still shows the memory it shared (once, a `cat` of 270 MiB read as 1987 MiB).
#[test]
fn the_test_process_memory_is_not_the_child_peak() {
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    assert!(own.contains("VmHWM:"), "{own}");
    assert_eq!(vm_hwm_kib(&own), None);
    let child = "Name:\tagui-lens\nUmask:\t0022\nVmPeak:\t  300000 kB\nVmHWM:\t  270336 kB\n";
    assert_eq!(vm_hwm_kib(child), Some(270336));
}

/// `check --format json`; these streams declare no protocol version, and the note that
/// says so is left out.
fn check_json(path: &Path, extra: &[&str]) -> (Ran, Value) {
    let mut args = vec!["check", "--format", "json", "--allow", "version/undeclared"];
    args.extend_from_slice(extra);
    let path = path.to_str().unwrap();
    args.push(path);
    let ran = run_measured(&args, Duration::from_secs(120));
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    let doc = serde_json::from_str(&ran.stdout).unwrap_or(Value::Null);
    (ran, doc)
}

fn rules(doc: &Value) -> Vec<String> {
    doc["diagnostics"]
        .as_array()
        .map(|ds| {
            ds.iter()
                .map(|d| d["rule"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn small_hostile_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let start = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
    let mut random = vec![0u8; 4096];
    let mut x: u32 = 0x2545_f491;
    for byte in &mut random {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *byte = x as u8;
    }
    let deep = format!(
        "{start}\n{{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":{}{}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases: Vec<(&str, Vec<u8>, i32, &str)> = vec![
        ("empty.jsonl", Vec::new(), 1, "framing/no-events"),
        ("random.bin", random, 1, "framing/no-events"),
        ("deep.jsonl", deep.into_bytes(), 1, "framing/invalid-json"),
        (
            "truncated.jsonl",
            format!("{start}\n{{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\"").into_bytes(),
            1,
            "framing/invalid-json",
        ),
        (
            "utf8.jsonl",
            [start.as_bytes(), b"\n{\"type\":\"CUSTOM\",\"name\":\"\xff\",\"value\":1}\n"].concat(),
            1,
            "framing/invalid-utf8",
        ),
        (
            "nul.jsonl",
            format!("{start}\n{{\"type\":\"CUSTOM\",\"name\":\"a\0b\",\"value\":1}}\n").into_bytes(),
            1,
            "framing/invalid-json",
        ),
        (
            "huge-number.jsonl",
            format!("{start}\n{{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":1e999999,\"timestamp\":1e999999}}\n")
                .into_bytes(),
            1,
            "schema/violation",
        ),
        (
            "surrogate.jsonl",
            format!("{start}\n{{\"type\":\"CUSTOM\",\"name\":\"\\ud800\",\"value\":1}}\n").into_bytes(),
            1,
            "framing/lone-surrogate",
        ),
        (
            "two-boms.jsonl",
            format!("\u{feff}\u{feff}{start}\n").into_bytes(),
            1,
            "framing/no-events",
        ),
        (
            "two-boms.sse",
            format!("\u{feff}\u{feff}data: {start}\n\n").into_bytes(),
            1,
            "framing/no-events",
        ),
        (
            "duplicate-keys.jsonl",
            format!("{start}\n{{\"type\":\"CUSTOM\",\"name\":\"a\",\"name\":\"b\",\"value\":1}}\n{}\n", r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#)
                .into_bytes(),
            0,
            "framing/duplicate-key",
        ),
        (
            "cr-only.sse",
            format!("data: {start}\r\rdata: {{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}}\r\r").into_bytes(),
            // Read as the SSE grammar has it, and an error: the official client, which
            // splits only at two LFs, reads both frames as one.
            1,
            "framing/sse-frames-merged",
        ),
    ];
    for (name, bytes, want_code, want_rule) in cases {
        let path = write(d, name, &bytes);
        let (ran, doc) = check_json(&path, &[]);
        assert_eq!(ran.code, want_code, "{name}: {}", ran.stdout);
        if !want_rule.is_empty() {
            assert!(
                rules(&doc).iter().any(|r| r == want_rule),
                "{name}: expected {want_rule}, got {}",
                ran.stdout
            );
        }
        assert!(ran.peak_mib() < 64.0, "{name}: {} MiB", ran.peak_rss_mib);
    }
}

#[test]
fn paths_that_are_not_readable_files() {
    let dir = tempfile::tempdir().unwrap();
    let (ran, _) = check_json(&dir.path().join("missing.jsonl"), &[]);
    assert_eq!(ran.code, 2);
    assert!(ran.stderr.contains("missing.jsonl"), "{}", ran.stderr);
    assert!(ran.stderr.contains("No such file"), "{}", ran.stderr);
    // An empty directory holds no stream files.
    let (ran, _) = check_json(dir.path(), &[]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains("holds no stream files"),
        "{}",
        ran.stderr
    );
    // A FIFO is read like stdin.
    let fifo = dir.path().join("live.jsonl");
    crate::common::make_fifo(&fifo);
    let writer_path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(writer_path)
            .unwrap();
        f.write_all(b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n")
            .unwrap();
    });
    let (ran, doc) = check_json(&fifo, &[]);
    writer.join().unwrap();
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(doc["summary"]["events"], 2);
}

/// A 150 MB line is reported and skipped without being held: memory is bounded by the cap
/// (lowered here to 8 MiB; a line is only known to be too long once the cap is reached), not by
/// the line.
#[test]
fn a_150_mb_line_is_skipped_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    file.write_all(b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":\"")
        .unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..150 {
        file.write_all(&chunk).unwrap();
    }
    file.write_all(b"\"}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n")
        .unwrap();
    drop(file);
    for format in ["jsonl", "json"] {
        let (ran, doc) = check_json(&path, &["--input-format", format, "--max-line", "8MiB"]);
        assert_eq!(ran.code, 1, "{format}: {}", ran.stdout);
        assert_eq!(rules(&doc), vec!["framing/line-too-long"], "{format}");
        assert!(
            ran.peak_mib() < 48.0,
            "{format}: peak RSS {} MiB for a 150 MB line",
            ran.peak_rss_mib
        );
    }
    // The same as one SSE frame.
    let sse = dir.path().join("huge.sse");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&sse).unwrap());
    file.write_all(
        b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\ndata: \"",
    )
    .unwrap();
    for _ in 0..150 {
        file.write_all(&chunk).unwrap();
    }
    file.write_all(
        b"\"\n\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n",
    )
    .unwrap();
    drop(file);
    let (ran, doc) = check_json(&sse, &["--max-line", "8MiB"]);
    assert_eq!(rules(&doc), vec!["framing/line-too-long"]);
    assert!(ran.peak_mib() < 48.0, "sse: {} MiB", ran.peak_rss_mib);
}

/// A run around `events`, one per line.
fn run_of(events: impl IntoIterator<Item = Value>) -> Vec<u8> {
    let mut out = br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#.to_vec();
    out.push(b'\n');
    for event in events {
        serde_json::to_writer(&mut out, &event).unwrap();
        out.push(b'\n');
    }
    out.extend_from_slice(b"{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    out
}

/// The state `agui-lens fold` ends with.
fn folded_state(path: &Path) -> Value {
    let ran = run_measured(
        &["fold", "--compact", path.to_str().unwrap()],
        Duration::from_secs(300),
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let doc: Value = serde_json::from_str(&ran.stdout).unwrap();
    doc["state"].clone()
}

#[test]
fn patches_that_explode_or_reach_too_far_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let seed = serde_json::json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": {"b": [1, 2, 3]}}});

    // Each copy of the root into itself doubles the state: refused at the state limit (256 MiB
    // estimated), with the state as it was before the refused patch.
    let mut events = vec![seed.clone()];
    events.extend((0..40).map(|i| {
        serde_json::json!({"type": "STATE_DELTA",
            "delta": [{"op": "copy", "from": "", "path": format!("/x{i}")}]})
    }));
    let path = write(dir.path(), "root-copies.jsonl", &run_of(events));
    let (ran, doc) = check_json(&path, &[]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    let found = rules(&doc);
    assert!(
        !found.is_empty() && found.iter().all(|r| r == "state/too-large"),
        "{found:?}"
    );
    assert!(ran.peak_mib() < 384.0, "{} MiB", ran.peak_rss_mib);
    let message = doc["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("256 MiB limit"), "{message}");

    // The same copies in one patch: refused whole, nothing of it applied.
    let ops: Vec<Value> = (0..40)
        .map(|i| serde_json::json!({"op": "copy", "from": "", "path": format!("/x{i}")}))
        .collect();
    let one = serde_json::json!({"type": "STATE_DELTA", "delta": ops});
    let path = write(
        dir.path(),
        "root-copies-one-patch.jsonl",
        &run_of([seed.clone(), one]),
    );
    let (ran, doc) = check_json(&path, &["--max-state", "16MiB"]);
    assert_eq!(ran.code, 1);
    assert_eq!(rules(&doc), vec!["state/too-large"]);
    assert_eq!(
        folded_state(&path),
        serde_json::json!({"a": {"b": [1, 2, 3]}})
    );

    // An index no array has.
    let far = serde_json::json!({"type": "STATE_DELTA",
        "delta": [{"op": "add", "path": "/a/b/99999999999", "value": 1}]});
    let path = write(dir.path(), "far-index.jsonl", &run_of([seed, far]));
    let (ran, doc) = check_json(&path, &[]);
    assert_eq!(ran.code, 1);
    assert_eq!(rules(&doc), vec!["state/patch-failed"]);
    let message = doc["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("past the end of an array of 3"),
        "{message}"
    );
    assert!(ran.peak_mib() < 64.0, "{} MiB", ran.peak_rss_mib);
}

/// A million operations in one STATE_DELTA apply, and when the last one fails none of them
/// does. The event is held whole while it is checked, so memory follows its size (a parsed
/// JSON value takes about 20 times the bytes), not the state limit.
#[test]
fn a_patch_of_a_million_operations() {
    let dir = tempfile::tempdir().unwrap();
    let seed = serde_json::json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": []}});
    let mut ops: Vec<Value> = (0..1_000_000)
        .map(|i| serde_json::json!({"op": "add", "path": "/a/-", "value": i}))
        .collect();
    let delta = |ops: &[Value]| serde_json::json!({"type": "STATE_DELTA", "delta": ops});

    let bytes = run_of([seed.clone(), delta(&ops)]);
    let size_mib = bytes.len() as f64 / (1 << 20) as f64;
    let path = write(dir.path(), "million.jsonl", &bytes);
    let (ran, doc) = check_json(&path, &[]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(doc["summary"]["events"], 4);
    assert!(
        ran.peak_mib() < 64.0 + 30.0 * size_mib,
        "{} MiB for a {size_mib:.0} MiB event",
        ran.peak_rss_mib
    );
    let state = folded_state(&path);
    assert_eq!(state["a"].as_array().map(Vec::len), Some(1_000_000));
    assert_eq!(state["a"][999_999], 999_999);

    ops.push(serde_json::json!({"op": "remove", "path": "/missing"}));
    let path = write(
        dir.path(),
        "million-failing.jsonl",
        &run_of([seed, delta(&ops)]),
    );
    let (ran, doc) = check_json(&path, &[]);
    assert_eq!(ran.code, 1);
    assert_eq!(rules(&doc), vec!["state/patch-failed"]);
    let message = doc["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("operation 1000000 (remove /missing)"),
        "{message}"
    );
    assert_eq!(folded_state(&path), serde_json::json!({"a": []}));
}

#[test]
fn broken_and_explosive_compressed_inputs() {
    let dir = tempfile::tempdir().unwrap();
    // A message in pseudo-random pieces: megabytes that compress into many blocks, so that a
    // cut leaves some to decode.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut events = vec![
        serde_json::json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
    ];
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        events.push(
            serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
            "delta": format!("{x:016x}{:016x}", x.rotate_left(29))}),
        );
    }
    events.push(serde_json::json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}));
    let recording = run_of(events);

    // Cut short: what was decoded is checked, then the read error ends the input (exit 2).
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&recording).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(&recording[..], 3).unwrap();
    for (name, bytes, format) in [
        ("cut.jsonl.gz", &gz[..gz.len() / 2], "gzip"),
        ("cut.jsonl.zst", &zst[..zst.len() / 2], "zstd"),
    ] {
        let path = write(dir.path(), name, bytes);
        let (ran, doc) = check_json(&path, &[]);
        assert_eq!(ran.code, 2, "{name}: {}", ran.stdout);
        assert!(
            ran.stderr
                .contains(&format!("the {format} data ends early")),
            "{name}: {}",
            ran.stderr
        );
        assert!(doc["summary"]["events"].as_u64().unwrap() > 0, "{name}");
    }

    // A gigabyte of text with no line end in 30 KiB of zstd: one line over the cap, skipped
    // in bounded memory.
    let bomb = dir.path().join("bomb.jsonl.zst");
    let mut encoder = zstd::Encoder::new(std::fs::File::create(&bomb).unwrap(), 3).unwrap();
    std::io::copy(&mut std::io::repeat(b'x').take(1 << 30), &mut encoder).unwrap();
    encoder.finish().unwrap();
    let (ran, doc) = check_json(&bomb, &[]);
    assert_eq!(ran.code, 1);
    assert_eq!(
        rules(&doc),
        vec!["framing/line-too-long", "framing/no-events"]
    );
    assert!(ran.peak_mib() < 128.0, "{} MiB", ran.peak_rss_mib);

    // A gigabyte of zeros: binary, which its first bytes tell, so it is one finding and the
    // rest is never decompressed.
    let zeros = dir.path().join("zeros.jsonl.zst");
    let mut encoder = zstd::Encoder::new(std::fs::File::create(&zeros).unwrap(), 3).unwrap();
    std::io::copy(&mut std::io::repeat(0).take(1 << 30), &mut encoder).unwrap();
    encoder.finish().unwrap();
    let started = Instant::now();
    let (ran, doc) = check_json(&zeros, &[]);
    assert_eq!(ran.code, 1);
    assert_eq!(rules(&doc), vec!["framing/no-events"]);
    assert!(ran.stdout.contains("binary"), "{}", ran.stdout);
    assert!(ran.peak_mib() < 64.0, "{} MiB", ran.peak_rss_mib);
    let _ = started;

    // 256 MiB of empty lines in gzip: read through, in little memory.
    let blank = dir.path().join("blank.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&blank).unwrap(),
        flate2::Compression::fast(),
    );
    std::io::copy(&mut std::io::repeat(b'\n').take(256 << 20), &mut encoder).unwrap();
    encoder.finish().unwrap();
    let (ran, doc) = check_json(&blank, &[]);
    assert_eq!(ran.code, 1);
    assert_eq!(rules(&doc), vec!["framing/no-events"]);
    assert!(ran.peak_mib() < 64.0, "{} MiB", ran.peak_rss_mib);
}

/// A capture cannot drive the terminal that shows its findings: escape sequences and carriage
/// returns, raw in a broken line or JSON-escaped in a value a message quotes, are written as
/// escapes (`\x1b`) in the human report.
#[test]
fn a_capture_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("esc.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\
         \u{1b}[31mRED\u{1b}[0m\rnot json\n\
         {\"type\":\"TOOL_CALL_START\",\"toolCallId\":\"c\",\"toolCallName\":\"\\u001b]0;pwned\\u0007\"}\n\
         {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    )
    .unwrap();
    let output = crate::common::agui_lens()
        .args(["check", path.to_str().unwrap(), "--color", "never"])
        .output()
        .unwrap();
    let (_, stdout, stderr) = crate::common::split(output);
    assert!(stdout.contains("\\x1b[31mRED"), "{stdout}");
    for control in ['\u{1b}', '\r', '\u{7}'] {
        assert!(!stdout.contains(control), "{stdout:?}");
        assert!(!stderr.contains(control), "{stderr:?}");
    }
}
