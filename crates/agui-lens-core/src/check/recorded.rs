//! An exchange `proxy --record` or `test --artifacts` recorded (a folder with `request.json`,
//! `response.raw`, `events.jsonl` and, when anything was found, `findings.jsonl`), checked as
//! it was found then: the stream as the answer to the request beside it, and what only the
//! recording command could know of the exchange (the status the response came with, what the
//! thread's previous turn left) from the findings it recorded. What a suite expected is the
//! suite's verdict (`outcome.json`), not the exchange's, and is left to `test`.

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
    /// `events.jsonl`: the stream, answering this request (when `request.json` holds one).
    Events(Option<Arc<Value>>),
    /// `findings.jsonl`: what the recording command found.
    Findings,
    /// `failure.txt`: why the exchange has no response (the proxy could not reach the agent).
    Failure,
}

/// What `path` is, if it is the stream, the findings or the failure of a recorded exchange:
/// a folder holding the request and the response body recorded with it (or, for a failure,
/// the request alone).
pub fn recorded(path: &Path) -> Option<Recorded> {
    let folder = path.parent()?;
    let is_file = |name: &str| folder.join(name).is_file();
    let file = path.file_name()?.to_str()?;
    if file == "failure.txt" {
        return is_file("request.json").then_some(Recorded::Failure);
    }
    if !(is_file("request.json") && is_file("response.raw")) {
        return None;
    }
    match file {
        "events.jsonl" => {
            let request = std::fs::read(folder.join("request.json"))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
                .filter(Value::is_object);
            Some(Recorded::Events(request.map(Arc::new)))
        }
        "findings.jsonl" => Some(Recorded::Findings),
        _ => None,
    }
}

/// Whether a rule's findings are about the exchange and cannot be found again from its files:
/// the request findings needed the thread's previous turn, the transport findings the
/// response's status and headers (not recorded). The stream's are found again from
/// `events.jsonl`.
fn found_only_when_recorded(rule: RuleId) -> bool {
    let name = rule.name();
    name.starts_with("request/") || name.starts_with("transport/")
}

/// The findings recorded in `path` (named `name` in this run) that a check of the
/// exchange's files cannot find again, at the levels this run gives their rules, placed in
/// the recorded file they are about (beside `name`). A line that is no finding of agui-lens
/// fails the file, as a stream that cannot be read does.
pub fn check_findings(
    ctx: &Context<'_>,
    path: &Path,
    name: Arc<str>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            let why = format!("reading {name}: {err}");
            return Ok(FileSummary::checked(name, Stats::default(), Some(why)));
        }
    };
    let mut stats = Stats::default();
    let mut found = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let Some(mut d) = finding(line, &name) else {
            let why = format!(
                "{name}:{}: not a finding agui-lens recorded (the exchange's findings cannot be read)",
                n + 1
            );
            return Ok(FileSummary::checked(name, Stats::default(), Some(why)));
        };
        if !found_only_when_recorded(d.rule) {
            continue;
        }
        let Some(severity) = ctx.levels.severity(d.rule) else {
            continue;
        };
        d.severity = severity;
        stats.count(&d);
        found.push(d);
    }
    emit(&found)?;
    let mut file = FileSummary::checked(name, stats, None);
    file.recorded_findings = true;
    Ok(file)
}

/// One line of a recorded `findings.jsonl` as a finding, placed in the file of the exchange
/// it is about (`request.json` for the request's, `response.raw` for the others), beside
/// `findings`.
fn finding(line: &str, findings: &str) -> Option<Diagnostic> {
    let record: Value = serde_json::from_str(line).ok()?;
    let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| record.get(key).and_then(Value::as_u64);
    let rule = RuleId::from_name(record.get("rule")?.as_str()?)?;
    let severity = match record.get("severity")?.as_str()? {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "note" => Severity::Note,
        _ => return None,
    };
    // In the file the finding is about (the proxy names it; `test` names the case).
    let about = if rule.name().starts_with("request/") {
        "request.json"
    } else {
        "response.raw"
    };
    let path = Path::new(findings).with_file_name(about);
    Some(Diagnostic {
        rule,
        severity,
        path: Arc::from(path.to_string_lossy().as_ref()),
        line: number("line"),
        offset: number("offset"),
        event_index: number("event_index"),
        event_type: text("event_type"),
        message: text("message")?,
        help: text("help"),
        pointer: text("pointer"),
        keyword: text("keyword"),
        excerpt: text("excerpt"),
        subject: None,
    })
}

/// A recorded exchange that got no response fails as the run that recorded it did: `name`
/// is its `failure.txt`, which says why.
pub fn failure(path: &Path, name: Arc<str>) -> FileSummary {
    let why = match std::fs::read_to_string(path) {
        Ok(text) => format!("{name}: the exchange recorded no response: {}", text.trim()),
        Err(err) => format!("reading {name}: {err}"),
    };
    FileSummary::checked(name, Stats::default(), Some(why))
}
