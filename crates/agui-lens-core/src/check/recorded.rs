//! An exchange `proxy --record` or `test --artifacts` recorded (a folder with `request.json`,
//! `response.raw`, `events.jsonl` and, when anything was found, `findings.jsonl`), checked as
//! it was found then: the stream as the answer to the request beside it, and what only the
//! recording command could know of the exchange (the status the response came with, frames
//! that never reached `events.jsonl`, what the thread's previous turn left) from the findings
//! it recorded. What else a suite expected is the suite's verdict (`outcome.json`), not the
//! exchange's, and is left to `test`.

use std::io;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::check::catalog::{RuleId, Severity};
use crate::check::diagnostic::Diagnostic;
use crate::check::engine::{Context, Stats};
use crate::report::FileSummary;

/// What a file of a recorded exchange is to a check.
pub enum Recorded {
    /// `events.jsonl` (or `response.raw`): the stream, answering this request (when
    /// `request.json` holds one), and, when the side that recorded it cut it, what
    /// [`CUT_FILE`] says: what only its end tells is then not checked, as it was not when it
    /// was recorded, and the stream is no whole one to pass.
    Events {
        request: Option<Arc<Value>>,
        cut: Option<String>,
        /// The file `run --record` wrote beside the stream with what only the call could find
        /// (see [`FINDINGS_SUFFIX`]): checked with the stream ([`add_run_findings`]).
        findings: Option<std::path::PathBuf>,
        /// What the recorder found says the answer held no stream (its status was no
        /// success, or its body was no event stream): an empty recording is that answer's,
        /// said once, as it was when it was recorded, not again as `framing/no-events`.
        no_stream: bool,
        /// The recorded request says the agent refused it (its status), sent invalid on
        /// purpose (`run --send-invalid`): no stream came, and none was owed.
        refused: Option<u16>,
    },
    /// `findings.jsonl`: what the recording command found.
    Findings,
    /// The findings `run --record` wrote beside `stream` (see [`FINDINGS_SUFFIX`]), named on
    /// their own (a walk does not read them: they are checked with the stream).
    RunFindings { stream: std::path::PathBuf },
    /// The request `run --record` sent for `stream` (see [`REQUEST_SUFFIX`]), named on its
    /// own: no capture, and read with the stream.
    RunRequest { stream: std::path::PathBuf },
    /// `failure.txt`: why the exchange has no response (the proxy could not reach the agent,
    /// or `test`'s call failed).
    Failure,
    /// `outcome.json`: `test`'s verdict on the turn, no capture.
    Outcome,
}

/// The file beside a recorded exchange's stream that says the recorder cut it (the proxy's
/// client went away before the stream's end), and how far it came.
pub const CUT_FILE: &str = "cut.txt";

/// What a recorder writes in the file that says a recording was cut ([`CUT_FILE`],
/// [`CUT_SUFFIX`]) before the recording's first byte, and takes away (or replaces with why it
/// cut the stream) once the recording ends: a recorder killed part way, or left with no room
/// to write even that, leaves it saying so, and a later check does not take the part recorded
/// for the whole answer. (Even left empty by a full disk, the file says the stream was cut.)
pub const UNFINISHED: &str = "not finished: the recording ended before its recorder could \
     end it (it was killed, or could write no more)";

/// What is said in place of [`UNFINISHED`] of a recording whose recorder holds it now: it is
/// not finished yet, and its recorder was not killed.
pub const UNDER_WAY: &str = "not finished yet: another agui-lens is recording into it now";

/// How to tell whether a recorder holds the recording at a path now (its lock, which this
/// library has no way of its own to look at): given once by the program, see
/// [`tell_recording_now_by`].
static RECORDING_NOW: std::sync::OnceLock<fn(&Path) -> bool> = std::sync::OnceLock::new();

/// Gives the way to tell whether a recorder holds a recording now (the program's look at the
/// file's lock): a recording under way is then said to be, not to have been killed.
pub fn tell_recording_now_by(probe: fn(&Path) -> bool) {
    let _ = RECORDING_NOW.set(probe);
}

/// What a recording's word of its cut says, read now: [`UNFINISHED`] of a recording whose
/// recorder holds it is [`UNDER_WAY`].
fn read_now(cut: String, path: &Path) -> String {
    if cut == UNFINISHED && RECORDING_NOW.get().is_some_and(|now| now(path)) {
        UNDER_WAY.to_owned()
    } else {
        cut
    }
}

/// What is added to the name of a stream file `run --record` wrote for the file beside it
/// that says the recorder cut the stream (`run.jsonl.cut.txt`), as [`CUT_FILE`] does in a
/// recorded exchange's folder.
pub const CUT_SUFFIX: &str = ".cut.txt";

/// What is added to the name of a stream file `run --record` (or `--record-raw`) wrote for
/// the file beside it that holds what only the call could find, and a check of the file
/// cannot find again (`run.jsonl.findings.txt`): the status and headers, a run id other than
/// the one sent, frames that never reached the recorded events. JSON Lines, one finding each,
/// as `--format jsonl` writes them. Named `.txt`, so that no walk takes it for a stream.
pub const FINDINGS_SUFFIX: &str = ".findings.txt";

/// The member of each line of such a file that gives the stream's length in bytes when it was
/// written: one of another length is another capture put in its place.
pub const RECORDING_SIZE: &str = "recording_size";

/// What is added to the name of a stream file `run --record` (or `--record-raw`) wrote for
/// the file beside it that holds the request the stream answers: a JSON object with the
/// RunAgentInput sent ([`REQUEST`]) and the stream's length ([`RECORDING_SIZE`]). A check of
/// the stream reads it as a check of a recorded exchange reads its `request.json`: the
/// request's state is the baseline of the deltas, its tools what calls may name and their
/// arguments' schemas, its messages what the stream may refer to.
pub const REQUEST_SUFFIX: &str = ".request.txt";

/// The member of such a file that holds the request.
pub const REQUEST: &str = "request";

/// The file beside the stream file `path` that holds the request it answers.
pub fn request_file_of(path: &Path) -> std::path::PathBuf {
    beside(path, REQUEST_SUFFIX)
}

/// The member of such a file that holds the status (400, 422) with which the agent refused
/// an input `run --send-invalid` sent on purpose though it breaks its schema: no stream came,
/// and none was owed (see [`refused_sent_invalid`]).
pub const REFUSED_SENT_INVALID: &str = "refusedSentInvalid";

/// The member of such a file that holds, beside [`REFUSED_SENT_INVALID`], what the recording
/// of the refusal holds ([`recording_digest`]): a refusal is taken at its word only for
/// those very bytes, not for a stream of the same length put in their place.
pub const RECORDING_DIGEST: &str = "recordingDigest";

/// What identifies a recording's bytes (64-bit FNV-1a, in hex): enough to tell a recording
/// from another put in its place, not a guard against a forger.
pub fn recording_digest(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// What such a file holds for `recording`, `size` bytes long: the request, its length, and,
/// when the agent refused it (sent invalid on purpose), the status and the recording's
/// [`recording_digest`].
pub fn request_record(request: &Value, size: u64, refused: Option<(u16, String)>) -> Value {
    let mut record = serde_json::json!({ RECORDING_SIZE: size, REQUEST: request });
    if let Some((status, digest)) = refused {
        record[REFUSED_SENT_INVALID] = status.into();
        record[RECORDING_DIGEST] = digest.into();
    }
    record
}

/// What is said of a recording of an agent's refusal (`status`) of an input sent invalid on
/// purpose: the refusal is what an agent may do, and its body no stream to judge.
pub fn refused_sent_invalid(status: u16) -> String {
    format!(
        "the input `agui-lens run --send-invalid` sent breaks its schema on purpose, and the \
         agent refused the input ({status}), as an agent may: no stream was owed"
    )
}

/// Why a check passes over the request `run` recorded beside `stream`, named on its own.
pub fn request_read_with(stream: &Path) -> String {
    format!(
        "it is the request `agui-lens run` sent for {}, read with it when it is checked",
        stream.display()
    )
}

/// The request `run` recorded beside `stream` (see [`REQUEST_SUFFIX`]), if the stream is still
/// the one it was sent for; one that cannot be read, or another capture's, is said and left
/// out: the stream is checked as it is.
fn recorded_request(stream: &Path) -> Option<(Arc<Value>, Option<u16>)> {
    let file = request_file_of(stream);
    let bytes = crate::read::read_beside(&file).ok()?;
    let record = serde_json::from_slice::<Value>(&bytes).ok();
    let request = record
        .as_ref()
        .and_then(|r| r.get(REQUEST))
        .filter(|r| r.is_object());
    // Without the recording's length it cannot be told from another capture's.
    let then = record
        .as_ref()
        .and_then(|r| r.get(RECORDING_SIZE))
        .and_then(Value::as_u64);
    let (Some(request), Some(then)) = (request, then) else {
        crate::check::stream::warn(format!(
            "{} is no request `agui-lens run` recorded (a JSON object with `{REQUEST}` and \
             `{RECORDING_SIZE}`): {} is checked without the request it answers",
            file.display(),
            stream.display()
        ));
        return None;
    };
    let what = format!("holds the request {} answered", stream.display());
    if replaced_since(&file, stream, Some(then), &what) {
        return None;
    }
    // A refusal (a status an agent refuses an input with) of the very bytes recorded.
    let refused = record
        .as_ref()
        .and_then(|r| r.get(REFUSED_SENT_INVALID))
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok())
        .filter(|&status| crate::check::request::refuses_an_input(status))
        .filter(|_| {
            let digest = record
                .as_ref()
                .and_then(|r| r.get(RECORDING_DIGEST))
                .and_then(Value::as_str);
            let now = crate::read::read_beside(stream).map(|bytes| recording_digest(&bytes));
            let same = matches!((digest, &now), (Some(then), Ok(now)) if then == now);
            if !same {
                crate::check::stream::warn(format!(
                    "{} says the agent refused the request {} answered, but not of what it \
                     holds now: it is checked as it is",
                    file.display(),
                    stream.display()
                ));
            }
            same
        });
    Some((Arc::new(request.clone()), refused))
}

/// What a live check says when a response's body is no event stream, with another type than
/// an event stream's (`transport/content-type`).
pub const BODY_IS_NO_STREAM: &str = "the body is no event stream";

/// Whether the findings recorded at `path` (one JSON object a line) say the answer held no
/// stream: a status that is no success, or a body that is no event stream.
fn said_no_stream(path: &Path) -> bool {
    let Ok(text) = crate::read::read_beside_text(path) else {
        return false;
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .any(|finding| {
            let rule = finding.get("rule").and_then(Value::as_str);
            let message = finding.get("message").and_then(Value::as_str).unwrap_or("");
            rule == Some(RuleId::TransportHttpStatus.name())
                || (rule == Some(RuleId::TransportContentType.name())
                    && message.contains(BODY_IS_NO_STREAM))
        })
}

/// A file `run --record` writes beside a recording.
#[derive(Clone, Copy, Debug)]
pub enum Beside {
    /// `FILE.request.txt`: see [`REQUEST_SUFFIX`].
    Request,
    /// `FILE.findings.txt`: see [`FINDINGS_SUFFIX`].
    Findings,
    /// `FILE.cut.txt`: see [`CUT_SUFFIX`].
    Cut,
}

impl Beside {
    /// Whether `bytes` are what a run writes in such a file (of any recording): a file of that
    /// name holding anything else is no run's, and never replaced.
    pub fn wrote(self, bytes: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return false;
        };
        match self {
            Beside::Request => serde_json::from_str::<Value>(text).is_ok_and(|record| {
                record.get(REQUEST).is_some_and(Value::is_object)
                    && record.get(RECORDING_SIZE).is_some_and(Value::is_u64)
            }),
            Beside::Findings => text.lines().filter(|l| !l.trim().is_empty()).all(|line| {
                serde_json::from_str::<Value>(line).is_ok_and(|finding| {
                    finding.get("rule").is_some_and(Value::is_string)
                        && finding.get("severity").is_some_and(Value::is_string)
                })
            }),
            // (Its size line came later: a cut said without one is a run's too.)
            Beside::Cut => ["stopped by ", "writing the recording", UNFINISHED]
                .iter()
                .any(|said| text.starts_with(said)),
        }
    }

    /// Whether the file at `path`, of this kind, holds what no run wrote (a file of the
    /// user's under that name): what is said of it then. Nothing there, or nothing in it, is
    /// no one's.
    pub fn users(self, path: &Path) -> Option<String> {
        let bytes = crate::read::read_beside(path).ok()?;
        (!bytes.is_empty() && !self.wrote(&bytes)).then(|| {
            format!(
                "{} holds what no `agui-lens run` wrote there ({})",
                path.display(),
                self.describe()
            )
        })
    }

    /// What a run writes in such a file.
    pub fn describe(self) -> &'static str {
        match self {
            Beside::Request => "a run writes the request it sent there, as a JSON object",
            Beside::Findings => {
                "a run writes the findings only its call found there, one JSON object a line"
            }
            Beside::Cut => "a run writes there that a stop cut it",
        }
    }
}

/// The state a recorded stream's client started from: the one its request sent.
pub fn request_state(request: Option<&Value>) -> Option<Value> {
    request
        .and_then(|r| r.get("state"))
        .filter(|state| !state.is_null())
        .cloned()
}

/// Why a recording may not be rewritten (compacted), if it may not: a recording its recorder
/// cut says so in a file beside it, which a rewrite (another length, another name) would
/// leave saying it of nothing (a later check would judge the stream whole, and charge the
/// agent with the run the cut left open, or pass it); so does the file of what only the call
/// that recorded it found (`run --record`): its findings name the stream's events, and a copy
/// elsewhere would check clean without it. A recording of the agent's refusal of an input
/// sent invalid on purpose (`refused`) holds no stream to rewrite.
pub fn rewrite_refusal(
    cut: Option<&str>,
    findings: Option<&Path>,
    refused: Option<u16>,
) -> Option<String> {
    if let Some(status) = refused {
        return Some(format!(
            "it records the agent's refusal ({status}) of an input `agui-lens run \
             --send-invalid` sent on purpose: no stream came to rewrite"
        ));
    }
    match (cut, findings) {
        (Some(cut), _) => Some(format!(
            "it was cut when it was recorded ({cut}), as the file beside it says, which a \
             rewrite would leave saying it of nothing"
        )),
        (None, Some(findings)) => Some(format!(
            "what only the call that recorded it found is in {} beside it, naming its \
             events: a rewrite would leave that naming other events, and a copy elsewhere \
             would check clean without it",
            findings.display()
        )),
        (None, None) => None,
    }
}

/// Why the call that recorded a stream found that it ended before the agent's answer did,
/// when the findings it wrote beside it (`FILE.findings.txt`) say so: the connection closed
/// before the body ended, no byte came for the idle timeout, or the answer took longer than
/// the whole call was allowed. The recording then holds part of a stream, as one its
/// recorder cut does.
pub fn cut_by_call(findings: &Path) -> Option<String> {
    call_cut(findings).map(|(said, _)| said)
}

/// [`cut_by_call`], with the number of events the finding says had come when the call was
/// cut, when it says one.
fn call_cut(findings: &Path) -> Option<(String, Option<u64>)> {
    let text = crate::read::read_beside_text(findings).ok()?;
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|finding| {
            let rule = finding.get("rule").and_then(Value::as_str)?;
            let message = finding.get("message").and_then(Value::as_str).unwrap_or("");
            RuleId::from_name(rule).is_some_and(ends_the_call).then(|| {
                let said = format!("{rule}: {message}, as {} says", findings.display());
                (said, events_when_cut(message))
            })
        })
}

/// How many events had come when a call was cut, as its finding's message says it ("… after
/// 366 bytes and 5 events …", or "before the response head arrived": none).
fn events_when_cut(message: &str) -> Option<u64> {
    if message.contains("before the response head arrived") {
        return Some(0);
    }
    let words: Vec<&str> = message.split_whitespace().collect();
    words.windows(6).find_map(|w| match w {
        ["after", _, "byte" | "bytes", "and", n, event] if event.starts_with("event") => {
            n.parse().ok()
        }
        _ => None,
    })
}

/// The cut an exchange's findings say the call found ([`cut_by_call`]), when they are about
/// the answer recorded in `folder`: findings that speak of another number of events than its
/// `events.jsonl` holds are of another answer (a folder copied over, an exchange recorded into
/// it again), said stale, and the stream is checked as it is.
fn exchange_cut_by_call(folder: &Path) -> Option<String> {
    let findings = folder.join("findings.jsonl");
    let (said, then) = call_cut(&findings)?;
    let recorded = folder.join("events.jsonl");
    let now = std::fs::File::open(&recorded).and_then(count_events).ok();
    if let (Some(then), Some(now)) = (then, now)
        && then != now
    {
        crate::check::stream::warn(format!(
            "{} says the answer was cut after {} when it was recorded; {} holds {}, and is \
             checked as it is (remove the stale {})",
            findings.display(),
            crate::text::plural(then, "event"),
            recorded.display(),
            crate::text::plural(now, "event"),
            findings.display()
        ));
        return None;
    }
    Some(said)
}

/// How many events a JSONL file holds: its lines that hold more than white space.
fn count_events(mut file: std::fs::File) -> std::io::Result<u64> {
    use std::io::Read as _;
    let mut buf = vec![0; 64 * 1024];
    let (mut lines, mut filled) = (0u64, false);
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        for &byte in &buf[..n] {
            if byte == b'\n' {
                lines += u64::from(filled);
                filled = false;
            } else if !byte.is_ascii_whitespace() {
                filled = true;
            }
        }
    }
    Ok(lines + u64::from(filled))
}

/// Whether a finding of `rule` says the call was cut off, by time or by the connection: the
/// recording holds part of the stream, and `test` reports it as an error of the environment
/// (a JUnit `<error>`), not a failure of the agent's answer.
pub fn ends_the_call(rule: RuleId) -> bool {
    matches!(
        rule,
        RuleId::TransportTimeout | RuleId::TransportIdleTimeout | RuleId::TransportConnectionLost
    )
}

/// What is said of a recording its recorder cut when it is folded: it folds to what the
/// client held at the cut, not at the stream's end.
pub fn folded_cut(name: &str, cut: &str) -> String {
    format!(
        "{name} was cut when it was recorded ({cut}): what it folds to is what a client held at \
         the cut"
    )
}

/// Why the recording at `path` holds part of its stream, when it does: its recorder cut it (a
/// stop, a client that went away: see [`CUT_FILE`]), or the call that recorded it found the
/// answer ended early (a connection lost, a timeout: see [`cut_by_call`]), in the findings
/// `run` wrote beside it or in its exchange's `findings.jsonl` (which [`recorded`] reads as
/// the exchange's cut).
pub fn part_recorded(path: &Path) -> Option<String> {
    let Some(Recorded::Events { cut, findings, .. }) = recorded(path) else {
        return None;
    };
    part_of(cut.as_deref(), findings.as_deref())
}

/// [`part_recorded`], of a recording already looked at: its cut, and the findings beside it.
pub fn part_of(cut: Option<&str>, findings: Option<&Path>) -> Option<String> {
    cut.map(str::to_owned).or_else(|| cut_by_call(findings?))
}

/// What is said of a recording that holds part of its stream when it is compared: it is
/// compared as what it holds.
pub fn compared_cut(name: &str, cut: &str) -> String {
    format!("{name} was cut when it was recorded ({cut}): it holds part of the stream")
}

/// What is said of a recording whose copy (its events alone) leaves out what only the call
/// that recorded it found.
pub fn findings_left_beside(findings: &Path) -> String {
    format!(
        "what only the call that recorded it found is in {} beside it",
        findings.display()
    )
}

/// The file beside the stream file `path` that holds what only the call that recorded it
/// could find.
pub fn findings_file_of(path: &Path) -> std::path::PathBuf {
    beside(path, FINDINGS_SUFFIX)
}

/// The file named as `path` with `suffix` added, beside it.
fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// Whether the findings `run` recorded beside `stream` are of another stream than the one
/// there now (see [`replaced_since`]; its length then is on their first line).
fn stale_findings(findings: &Path, stream: &Path) -> bool {
    use std::io::BufRead as _;
    let mut first = String::new();
    let read = std::fs::File::open(findings)
        .map(std::io::BufReader::new)
        .and_then(|mut file| file.read_line(&mut first));
    let then = read
        .ok()
        .and_then(|_| serde_json::from_str::<Value>(&first).ok())
        .and_then(|line| line.get(RECORDING_SIZE)?.as_u64());
    let what = format!(
        "holds what the call that recorded {} found",
        stream.display()
    );
    replaced_since(findings, stream, then, &what)
}

/// Whether `stream` is no longer the stream the file `said` beside it speaks of: its length
/// when that file was written (`then`) is not its length now, another capture put in its place.
/// Said (`what`: what that file says of the stream), and the file is left out: the stream is
/// checked as it is.
fn replaced_since(said: &Path, stream: &Path, then: Option<u64>, what: &str) -> bool {
    let (Some(then), Ok(meta)) = (then, std::fs::metadata(stream)) else {
        return false;
    };
    let now = meta.len();
    if then == now {
        return false;
    }
    crate::check::stream::warn(format!(
        "{} {what}, at {then} bytes; it holds {now} now, and is checked as it is (remove the \
         stale {})",
        said.display(),
        said.display()
    ));
    true
}

/// The line of such a file that gives the stream's length in bytes when it was cut.
pub const CUT_SIZE: &str = "size: ";

/// The file beside the stream file `path` that says its recorder cut it.
pub fn cut_file_of(path: &Path) -> std::path::PathBuf {
    beside(path, CUT_SUFFIX)
}

/// What the first line of a cut file says (or a plain word when it says nothing), and the
/// stream's length it gives (see [`CUT_SIZE`]), when it gives one.
fn cut_said(file: &Path) -> Option<(String, Option<u64>)> {
    let said = crate::read::read_beside(file).ok()?;
    let text = String::from_utf8_lossy(&said);
    let why = match text.lines().next().map(str::trim) {
        Some(line) if !line.is_empty() => line.to_owned(),
        _ => "the recorder cut it".to_owned(),
    };
    let size = text
        .lines()
        .find_map(|line| line.strip_prefix(CUT_SIZE)?.trim().parse::<u64>().ok());
    Some((why, size))
}

/// Why a check passes over a turn's `outcome.json`.
pub const OUTCOME_SKIPPED: &str =
    "it is the verdict `agui-lens test` recorded for this turn (see `outcome.json` itself)";

/// What `path` is, if it is the stream, the findings or the failure of a recorded exchange:
/// a folder holding the request and the response body recorded with it (or, for a failure,
/// the request alone); or a stream file a stop cut as it was recorded (see [`CUT_SUFFIX`]).
pub fn recorded(path: &Path) -> Option<Recorded> {
    let found = recorded_as_named(path);
    if found.is_none() && path.is_symlink() {
        // A link to a recording: what is beside the recording speaks of it, not what is
        // beside the link (a cut recording checked through a link was judged whole).
        return std::fs::canonicalize(path)
            .ok()
            .and_then(|target| recorded_as_named(&target));
    }
    found
}

/// [`recorded`], by the name `path` has and what is beside it.
fn recorded_as_named(path: &Path) -> Option<Recorded> {
    // By name first: most inputs are none of these, and cost no look at their folder.
    let file = path.file_name()?.to_str()?;
    if !matches!(
        file,
        "events.jsonl" | "response.raw" | "findings.jsonl" | "outcome.json" | "failure.txt"
    ) {
        if let Some(stream) = file.strip_suffix(FINDINGS_SUFFIX) {
            let stream = path.with_file_name(stream);
            if stream.is_file() {
                return Some(Recorded::RunFindings { stream });
            }
        }
        if let Some(stream) = file.strip_suffix(REQUEST_SUFFIX) {
            let stream = path.with_file_name(stream);
            if stream.is_file() {
                return Some(Recorded::RunRequest { stream });
            }
        }
        // What only the call found, recorded beside the stream, when the stream is still the
        // one it was found of.
        let findings = Some(findings_file_of(path))
            .filter(|f| f.is_file())
            .filter(|f| !stale_findings(f, path));
        // A stream `run --record` wrote, cut by a stop, has a file beside it that says so,
        // and how long the stream was then: one of another length was written since (a
        // capture put in its place), and is checked as what it is.
        let said = cut_file_of(path);
        let cut = cut_said(&said).and_then(|(cut, size)| {
            let what = format!("says {} was cut when it was recorded", path.display());
            (!replaced_since(&said, path, size, &what)).then(|| read_now(cut, path))
        });
        // The request it answers.
        let (request, refused) = recorded_request(path).unzip();
        let refused = refused.flatten();
        if cut.is_none() && findings.is_none() && request.is_none() {
            return None;
        }
        let no_stream = findings.as_deref().is_some_and(said_no_stream);
        return Some(Recorded::Events {
            request,
            cut,
            findings,
            no_stream,
            refused,
        });
    }
    let folder = path.parent()?;
    let is_file = |name: &str| folder.join(name).is_file();
    if file == "failure.txt" {
        // Where the proxy (DIR/NNN/) or `test` (DIR/NN-case/turn-N/) records one.
        return (is_exchange_folder(folder) && is_file("request.json"))
            .then_some(Recorded::Failure);
    }
    // The findings of an exchange with no response (the agent could not be reached) are
    // beside its request and `failure.txt`.
    if file == "findings.jsonl" && is_file("request.json") && is_file("failure.txt") {
        return Some(Recorded::Findings);
    }
    // (A recording the disk could not hold may have no `response.raw`, but says so.)
    if !(is_file("request.json") && (is_file("response.raw") || is_file(CUT_FILE))) {
        return None;
    }
    match file {
        // The stream as its events, or as the bytes that came (named only: a walk reads
        // `events.jsonl`).
        "events.jsonl" | "response.raw" => {
            let request = crate::read::read_beside(&folder.join("request.json"))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
                .filter(Value::is_object);
            // Cut by its recorder, or ended early as the call found (a connection lost, a
            // timeout: in the exchange's findings, which a check of its stream file does not
            // read): either way it holds part of the stream.
            let cut = cut_said(&folder.join(CUT_FILE))
                .map(|(why, _)| why)
                .or_else(|| exchange_cut_by_call(folder));
            Some(Recorded::Events {
                request: request.map(Arc::new),
                cut,
                findings: None,
                no_stream: said_no_stream(&folder.join("findings.jsonl")),
                refused: None,
            })
        }
        "findings.jsonl" => Some(Recorded::Findings),
        "outcome.json" => Some(Recorded::Outcome),
        _ => None,
    }
}

/// Whether `path` is the request of an exchange recorded beside it (`request.json` next to the
/// response body, or to the failure that took its place): the proxy or `test` held it to the
/// request rules when it was sent, and what they found is in the exchange's findings. It is
/// no capture, whatever it holds (a client may post text that is no JSON).
pub fn is_recorded_request(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "request.json")
        && path.parent().is_some_and(|folder| {
            folder.join("response.raw").is_file() || folder.join("failure.txt").is_file()
        })
}

/// Whether `path` is the response body of a recorded exchange whose recorder ended before the
/// exchange did (the proxy killed, or stopped, in the middle of an answer): no `events.jsonl`,
/// no `failure.txt`, no verdict of `test`'s, and findings that say nothing of the answer (a
/// finished one that brought no events is said in them: its status, or that it held none). A
/// walk reads such a body as the exchange's stream: what came of the answer is judged, and an
/// answer with nothing in it fails, never passed over.
pub fn is_unfinished_body(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "response.raw")
        && path
            .parent()
            .is_some_and(|folder| folder.join("request.json").is_file() && unfinished(folder))
}

/// Whether a recorded exchange's folder holds no end of it (see [`is_unfinished_body`]).
fn unfinished(folder: &Path) -> bool {
    // (`test` writes its verdict on the turn once the answer was judged.)
    let ended = ["events.jsonl", "failure.txt", "outcome.json"];
    if ended.iter().any(|file| folder.join(file).exists()) {
        return false;
    }
    let findings =
        crate::read::read_beside_text(&folder.join("findings.jsonl")).unwrap_or_default();
    !(findings.contains("\"transport/") || findings.contains("\"framing/no-events\""))
}

/// Why the request of an exchange its recorder ended before any answer came is its only
/// record (`request.json` alone in a folder of the proxy's or `test`'s, no `response.raw`,
/// no `failure.txt`): the exchange is not passed over, it failed to be recorded.
pub fn unanswered(path: &Path) -> Option<String> {
    if path.file_name()? != "request.json" {
        return None;
    }
    let folder = path.parent()?;
    (is_exchange_folder(folder) && !folder.join("response.raw").exists() && unfinished(folder))
        .then(|| {
            format!(
                "{}: the exchange recorded in {} holds its request and no answer (no response.raw, \
             no failure.txt): its recorder ended before one came",
                path.display(),
                folder.display()
            )
        })
}

/// Whether a folder is named as the proxy (`DIR/NNN/`) or `test` (`DIR/NN-case/turn-N/`)
/// names the folder of one exchange.
fn is_exchange_folder(folder: &Path) -> bool {
    let numbered = |digits: &str| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    folder
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| numbered(name) || name.strip_prefix("turn-").is_some_and(numbered))
}

/// Why a walk passes over a recorded exchange's request (see [`is_recorded_request`]):
/// where what was found of it is, or that nothing was.
pub fn request_skipped(request: &Path) -> String {
    let held = "the request of the exchange recorded beside it, held to the request rules when \
                it was sent";
    match request.with_file_name("findings.jsonl").is_file() {
        true => format!("{held}; what was found is in its findings.jsonl"),
        false => format!("{held}; nothing was found (the exchange has no findings.jsonl)"),
    }
}

/// Whether a rule's findings are about the exchange and cannot be found again from its files:
/// the request findings needed the thread's previous turn; the transport findings and the
/// suite's status mismatch the response's status and headers (not recorded); the framing
/// findings frames that never reached `events.jsonl` (it holds the events that could be
/// read). The stream's other findings are found again from `events.jsonl`, and so is an
/// answer with no events.
pub fn found_only_when_recorded(rule: RuleId) -> bool {
    let name = rule.name();
    name.starts_with("request/")
        || name.starts_with("transport/")
        || (name.starts_with("framing/") && rule != RuleId::FramingNoEvents)
        || rule == RuleId::SuiteStatusMismatch
}

/// The findings recorded in `path` (named `name` in this run) that a check of the
/// exchange's files cannot find again, at the levels this run gives their rules, placed in
/// the recorded file they are about (beside `name`). A line that is no finding fails the
/// file, as a stream that cannot be read does; so does a finding of a rule this build does
/// not know (another version's) recorded as an error or a warning, which this build cannot
/// judge (left out, the recording would pass); one recorded as a note is left out, with a
/// warning.
pub fn check_findings(
    ctx: &Context<'_>,
    path: &Path,
    name: Arc<str>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    check_findings_in(ctx, path, name, None, emit)
}

/// Checks a recorded stream (`opened`) as it was found when recorded: as the answer to its
/// request, with how its recorder cut it (see [`crate::check::opened::check_answer_to`]),
/// and with what only the call that recorded it found ([`add_run_findings`]).
#[allow(clippy::too_many_arguments)]
pub fn check_recording(
    ctx: &Context<'_>,
    opened: crate::read::Opened,
    walked: bool,
    request: Option<Arc<Value>>,
    cut: Option<String>,
    findings: Option<&Path>,
    no_stream: bool,
    refused: Option<u16>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    // (Only an input that breaks its schema may be refused so: a valid one was owed a run.)
    let broken = |request: &Value| {
        !crate::check::request::input_findings(
            ctx.schemas,
            request,
            ctx.protocol.version,
            &opened.name,
        )
        .is_empty()
    };
    let refused = refused.filter(|_| request.as_deref().is_some_and(broken));
    if let (None, Some(status)) = (&cut, refused) {
        // The agent refused an input sent invalid on purpose: what it may do. Its body (a
        // raw recording holds it) is no stream, and is not read as one.
        let mut file = FileSummary::checked(opened.name.clone(), Stats::default(), None);
        file.no_stream_owed = true;
        file.notes.push(refused_sent_invalid(status));
        if let Some(findings) = findings {
            add_run_findings(ctx, findings, &mut file, emit)?;
        }
        return Ok(file);
    }
    if let (true, Some(findings)) = (no_stream, findings) {
        // What the call found says the answer held no stream (a status that is no success, a
        // page): its body is no stream a client reads, and is not read as one, as the live
        // check did not read it (the raw body holds the page itself).
        let mut file = FileSummary::checked(opened.name.clone(), Stats::default(), None);
        add_run_findings(ctx, findings, &mut file, emit)?;
        return Ok(file);
    }
    let mut file =
        crate::check::opened::check_answer_to(ctx, opened, walked, request, cut, no_stream, emit)?;
    if let Some(findings) = findings {
        add_run_findings(ctx, findings, &mut file, emit)?;
    }
    Ok(file)
}

/// Adds the findings `run --record` wrote beside a stream (`findings`, see
/// [`FINDINGS_SUFFIX`]) to `file`, the check of that stream: placed in it, at this run's
/// levels. A file that cannot be read fails the stream's check, as the stream's own
/// unreadable frames would.
pub fn add_run_findings(
    ctx: &Context<'_>,
    findings: &Path,
    file: &mut FileSummary,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<()> {
    let name: Arc<str> = Arc::from(findings.to_string_lossy().as_ref());
    let stream = file.path.clone();
    let found = check_findings_in(ctx, findings, name, Some(&stream), emit)?;
    file.stats.errors += found.stats.errors;
    file.stats.warnings += found.stats.warnings;
    file.stats.notes += found.stats.notes;
    if file.failure.is_none() {
        file.failure = found.failure;
    }
    Ok(())
}

/// The findings `run --record` wrote beside `stream`, checked alone (`path`, named `name`):
/// placed in the stream they are about.
pub fn check_run_findings(
    ctx: &Context<'_>,
    path: &Path,
    stream: &Path,
    name: Arc<str>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    let stream: Arc<str> = Arc::from(stream.to_string_lossy().as_ref());
    let mut file = FileSummary::checked(stream, Stats::default(), None);
    file.recorded_findings = true;
    add_run_findings(ctx, path, &mut file, emit)?;
    file.path = name;
    Ok(file)
}

/// [`check_findings`], each finding placed in `placed_in` when given (the stream `run`
/// recorded), else in the exchange's file it is about.
fn check_findings_in(
    ctx: &Context<'_>,
    path: &Path,
    name: Arc<str>,
    placed_in: Option<&str>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    let failed = |name: Arc<str>, why: String| {
        let mut file = FileSummary::checked(name, Stats::default(), Some(why));
        file.recorded_findings = true;
        file
    };
    let text = match crate::read::read_beside_text(path) {
        Ok(text) => text,
        Err(err) => {
            let why = format!("reading {name}: {err}");
            return Ok(failed(name, why));
        }
    };
    let mut stats = Stats::default();
    let mut found = Vec::new();
    let mut unknown = Vec::new();
    let mut failing = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let d = match finding(line, &name, placed_in) {
            Ok(d) => d,
            Err(Unread::Unknown { rule, note }) => {
                if note {
                    unknown.push(rule);
                } else {
                    failing.push(rule);
                }
                continue;
            }
            Err(Unread::Malformed) => {
                let why = format!(
                    "{name}:{}: not a finding agui-lens recorded (the exchange's findings cannot be read)",
                    n + 1
                );
                return Ok(failed(name, why));
            }
        };
        if !found_only_when_recorded(d.rule) {
            continue;
        }
        // A request that declared no version was asked for one by the version it was judged
        // by when recorded; judged by the rules before 1.0 now (`--protocol 0.x`), it had none
        // to declare.
        if d.rule == RuleId::RequestProtocolVersion
            && d.message == crate::check::request::NO_VERSION_DECLARED
            && crate::protocol::version::judged_by(None, ctx.protocol.version)
                < crate::protocol::version::Version::V1_0
        {
            continue;
        }
        let mut d = d;
        let Some(severity) = ctx.levels.severity(d.rule) else {
            continue;
        };
        d.severity = severity;
        stats.count(&d);
        found.push(d);
    }
    if !unknown.is_empty() {
        unknown.sort();
        unknown.dedup();
        crate::check::stream::warn(format!(
            "{name}: findings of rules this agui-lens does not know (another version's) were left out: {}",
            unknown.join(", ")
        ));
    }
    emit(&found)?;
    let failure = (!failing.is_empty()).then(|| {
        failing.sort();
        failing.dedup();
        format!(
            "{name}: findings of rules this agui-lens does not know (another version's), \
             recorded as errors or warnings, cannot be judged: {}; check the recording with \
             the version that recorded it",
            failing.join(", ")
        )
    });
    let mut file = FileSummary::checked(name, stats, failure);
    file.recorded_findings = true;
    Ok(file)
}

/// Why a line of a recorded `findings.jsonl` gave no finding.
enum Unread {
    /// A rule this build does not know, and whether it was recorded as a note.
    Unknown { rule: String, note: bool },
    /// Not a finding at all.
    Malformed,
}

/// One line of a recorded `findings.jsonl` as a finding, placed in the file of the exchange
/// it is about (`request.json` for the request's, `response.raw` for the others), beside
/// `findings`.
fn finding(line: &str, findings: &str, placed_in: Option<&str>) -> Result<Diagnostic, Unread> {
    let record: Value = serde_json::from_str(line).map_err(|_| Unread::Malformed)?;
    let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| record.get(key).and_then(Value::as_u64);
    let (Some(rule), Some(message)) = (text("rule"), text("message")) else {
        return Err(Unread::Malformed);
    };
    // The level is this run's; the recorded one only has to be one.
    let severity = match text("severity").as_deref() {
        Some("error") => Severity::Error,
        Some("warning") => Severity::Warning,
        Some("note") => Severity::Note,
        _ => return Err(Unread::Malformed),
    };
    let Some(rule) = RuleId::from_name(&rule) else {
        let note = severity == Severity::Note;
        return Err(Unread::Unknown { rule, note });
    };
    // In the file the finding is about (the proxy names it; `test` names the case).
    let about = if rule.name().starts_with("request/") {
        "request.json"
    } else {
        "response.raw"
    };
    let path = match placed_in {
        Some(stream) => Arc::from(stream),
        None => Arc::from(
            Path::new(findings)
                .with_file_name(about)
                .to_string_lossy()
                .as_ref(),
        ),
    };
    Ok(Diagnostic {
        rule,
        severity,
        path,
        line: number("line"),
        offset: number("offset"),
        event_index: number("event_index"),
        event_type: text("event_type"),
        message,
        help: text("help"),
        pointer: text("pointer"),
        keyword: text("keyword"),
        // Recorded as a report writes it: `text`, the start of what holds no event.
        excerpt: text("text").or_else(|| text("excerpt")),
        subject: text("subject"),
    })
}

/// A recorded exchange that got no response fails as the run that recorded it did: `name`
/// is its `failure.txt`, which says why.
pub fn failure(path: &Path, name: Arc<str>) -> FileSummary {
    let why = match crate::read::read_beside_text(path) {
        Ok(text) => format!("{name}: the exchange recorded no response: {}", text.trim()),
        Err(err) => format!("reading {name}: {err}"),
    };
    FileSummary::checked(name, Stats::default(), Some(why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::catalog::Levels;
    use crate::check::schema::SchemaSet;
    use crate::check::stream::holding_warnings;

    /// The number of events a cut call's finding names, in each form `run`, `test` and the
    /// proxy write it; none where it names none.
    #[test]
    fn the_events_a_cut_finding_names_are_read() {
        for (message, events) in [
            (
                "Peer disconnected after 366 bytes and 5 events, before the response ended",
                Some(5),
            ),
            (
                "reset after 1 byte and 1 event, before the response ended",
                Some(1),
            ),
            (
                "nothing arrived for 2 s after 40 bytes and 0 events (--idle-timeout)",
                Some(0),
            ),
            (
                "the response was still going after 1.5 s before the response head arrived \
                 (--timeout)",
                Some(0),
            ),
            ("the connection was lost", None),
            ("after many bytes and some events", None),
        ] {
            assert_eq!(events_when_cut(message), events, "{message}");
        }
    }

    fn exchange(dir: &Path, name: &str) -> std::path::PathBuf {
        let at = dir.join(name);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join("request.json"), "{}").unwrap();
        at
    }

    /// A note of a rule another version knows is left out with a warning, and the others
    /// are read; an error or a warning of such a rule, or a line that is no finding, fails
    /// the file (this build cannot judge it, and left out the recording would pass).
    #[test]
    fn findings_of_unknown_rules_are_left_out_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let at = exchange(dir.path(), "001");
        std::fs::write(at.join("response.raw"), "").unwrap();
        let findings = at.join("findings.jsonl");
        std::fs::write(
            &findings,
            concat!(
                r#"{"rule":"transport/from-the-future","severity":"note","message":"m"}"#,
                "\n",
                r#"{"rule":"transport/http-status","severity":"error","message":"the agent answered 500","path":"x"}"#,
                "\n",
            ),
        )
        .unwrap();
        let schemas = SchemaSet::embedded().unwrap();
        let levels = Levels::default();
        let ctx = Context::new(&schemas, &levels);
        let mut found = Vec::new();
        let (file, said) = holding_warnings(|| {
            check_findings(&ctx, &findings, Arc::from("f"), &mut |batch| {
                found.extend_from_slice(batch);
                Ok(())
            })
        });
        let file = file.unwrap();
        assert_eq!(file.failure, None);
        assert_eq!(file.stats.errors, 1);
        assert_eq!(found.len(), 1);
        assert_eq!(&*found[0].path, "response.raw");
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("transport/from-the-future"), "{said:?}");
        let error = r#"{"rule":"transport/from-the-future","severity":"error","message":"m"}"#;
        let text = std::fs::read_to_string(&findings).unwrap();
        std::fs::write(&findings, format!("{text}{error}\n")).unwrap();
        let mut found = Vec::new();
        let file = check_findings(&ctx, &findings, Arc::from("f"), &mut |batch| {
            found.extend_from_slice(batch);
            Ok(())
        })
        .unwrap();
        let failure = file.failure.unwrap();
        assert!(
            failure.contains("cannot be judged: transport/from-the-future"),
            "{failure}"
        );
        assert_eq!((file.stats.errors, found.len()), (1, 1));
        std::fs::write(&findings, "not a finding\n").unwrap();
        let file = check_findings(&ctx, &findings, Arc::from("f"), &mut |_| Ok(())).unwrap();
        assert!(file.failure.unwrap().contains("f:1: not a finding"));
    }

    /// A `failure.txt` is a recorded exchange's only where the proxy or `test` records one.
    #[test]
    fn a_failure_is_recorded_only_in_an_exchange_folder() {
        let dir = tempfile::tempdir().unwrap();
        for (name, recorded) in [
            ("001", true),
            ("turn-2", true),
            ("notes", false),
            ("turn-", false),
        ] {
            let at = exchange(dir.path(), name);
            let failure = at.join("failure.txt");
            std::fs::write(&failure, "why\n").unwrap();
            assert_eq!(
                matches!(super::recorded(&failure), Some(Recorded::Failure)),
                recorded,
                "{name}"
            );
        }
    }
}
