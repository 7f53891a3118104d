//! Reporting a conformance suite (`agui-lens test`): a test runner's line per case, a
//! summary, JUnit with one testcase per case, and JSON per case. Like every reporter, these
//! only render: whether a case passed was decided before.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use colored::Colorize;
use serde_json::{Value, json};

use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::Stats;
use agui_lens_core::report::junit::{describe, xml_attr, xml_escape};
use agui_lens_core::report::{DiagnosticRecord, plural};

/// How one case went.
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    /// The case's name, with `/ turn N` for a turn of a conversation.
    pub name: String,
    /// The case's own name.
    pub case: String,
    /// The turn of the case, from 1.
    pub turn: usize,
    /// The line of the case (or of its `[[case.turn]]`) in the suite file.
    pub line: u64,
    pub passed: bool,
    pub elapsed: Duration,
    /// None when no response head arrived.
    pub status: Option<u16>,
    /// The response's Content-Type, when it had one.
    pub content_type: Option<String>,
    pub first_event: Option<Duration>,
    /// Events of the stream; errors and warnings of every finding below.
    pub stats: Stats,
    /// Stream, transport and suite findings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// Findings a baseline holds back: counted nowhere, kept for SARIF (as suppressed).
    pub held: Vec<Diagnostic>,
    /// What the case did besides checking (a snapshot written).
    pub notes: Vec<String>,
    /// Set when agui-lens could not do its job for the case (an unreadable snapshot file, a
    /// call stopped by Ctrl-C).
    pub failure: Option<String>,
    /// Set when the agent could not be asked or did not answer in time (unreachable, timed
    /// out, cut off): an error of the environment (a JUnit `<error>`), not a wrong answer.
    pub error: Option<String>,
    /// Set when the case was never run, and why (the suite was interrupted before it).
    pub skipped: Option<String>,
}

impl CaseOutcome {
    /// A turn before it runs: not passed, nothing found.
    pub fn new(case: &crate::suite::Case, turn: &crate::suite::Turn) -> Self {
        CaseOutcome {
            name: case.turn_name(turn),
            case: case.name.clone(),
            turn: turn.number,
            line: turn.line,
            passed: false,
            elapsed: Duration::ZERO,
            status: None,
            content_type: None,
            first_event: None,
            stats: Stats::default(),
            diagnostics: Vec::new(),
            held: Vec::new(),
            notes: Vec::new(),
            failure: None,
            error: None,
            skipped: None,
        }
    }

    /// Whether the case ended as an error (JUnit `<error>`): agui-lens could not do its job,
    /// or the agent could not be reached or did not answer in time.
    pub fn is_error(&self) -> bool {
        self.failure.is_some() || self.error.is_some()
    }

    /// Why the case failed, in a few words: the first error, and how many more there are.
    pub fn why(&self) -> Option<String> {
        if let Some(skipped) = &self.skipped {
            return Some(skipped.clone());
        }
        if let Some(failure) = &self.failure {
            return Some(failure.clone());
        }
        if let Some(error) = &self.error {
            return Some(error.clone());
        }
        if self.passed {
            return None;
        }
        let mut errors = self
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error);
        let Some(first) = errors.next().or_else(|| self.diagnostics.first()) else {
            return Some("failed".into());
        };
        let mut why = format!("{}: {}", first.rule, first.message);
        let more = self.stats.errors.saturating_sub(1);
        if more > 0 {
            let noun = if more == 1 { "error" } else { "errors" };
            why.push_str(&format!(" (+{more} more {noun})"));
        } else if self.stats.errors == 0 {
            why.push_str(" (warnings fail the suite: deny-warnings)");
        }
        Some(why)
    }
}

/// `case chat ... ok (0.34 s)` or `case tools ... FAILED (1.20 s): why`.
pub fn human_line(case: &CaseOutcome, color: bool) -> String {
    let verdict = match (case.is_error(), case.passed) {
        _ if case.skipped.is_some() => paint("not run", color, |s| s.yellow().to_string()),
        (true, _) => paint("ERROR", color, |s| s.red().bold().to_string()),
        (false, true) => paint("ok", color, |s| s.green().to_string()),
        (false, false) => paint("FAILED", color, |s| s.red().bold().to_string()),
    };
    // A case's name and what went wrong (which may quote the agent) on one line, with
    // nothing a terminal or a CI log acts on: a line break in either wrote a line of its own.
    let visible = agui_lens_core::report::human::visible_path;
    let mut line = format!(
        "case {} ... {verdict} ({}",
        visible(&case.name),
        secs(case.elapsed)
    );
    if case.passed && case.stats.warnings > 0 {
        line.push_str(&format!(", {}", plural(case.stats.warnings, "warning")));
    }
    line.push(')');
    if let Some(why) = case.why() {
        line.push_str(": ");
        line.push_str(&visible(&why));
    }
    line
}

/// `test result: FAILED. 2 passed; 1 failed; 3 cases in 1.56 s`
pub fn human_summary(cases: &[CaseOutcome], elapsed: Duration, color: bool) -> String {
    let passed = cases.iter().filter(|c| c.passed).count();
    let not_run = cases.iter().filter(|c| c.skipped.is_some()).count();
    let failed = cases.len() - passed - not_run;
    let verdict = if failed == 0 && not_run == 0 {
        paint("ok", color, |s| s.green().to_string())
    } else {
        paint("FAILED", color, |s| s.red().bold().to_string())
    };
    let not_run = if not_run > 0 {
        format!(" {not_run} not run;")
    } else {
        String::new()
    };
    let distinct = distinct_cases(cases);
    let count = if distinct == cases.len() {
        plural(cases.len() as u64, "case")
    } else {
        format!(
            "{} ({})",
            plural(distinct as u64, "case"),
            plural(cases.len() as u64, "turn")
        )
    };
    format!(
        "test result: {verdict}. {passed} passed; {failed} failed;{not_run} {count} in {}",
        secs(elapsed)
    )
}

/// How many cases the outcomes are of: outcomes are per turn, and a conversation is one case.
pub fn distinct_cases(cases: &[CaseOutcome]) -> usize {
    cases.iter().filter(|c| c.turn == 1).count()
}

fn paint(text: &str, color: bool, style: fn(&str) -> String) -> String {
    if color { style(text) } else { text.to_owned() }
}

/// `0.34 s`
pub fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// JUnit XML: one testsuite named after the suite file, one testcase per case and turn
/// (classname the suite file's name; `file` the suite file as given, `line` the case's or
/// turn's line), a failure holding the diagnostics of a wrong answer, an error for a call that
/// could not be made or finished.
pub fn junit(suite: &Path, cases: &[CaseOutcome], elapsed: Duration) -> String {
    let file = xml_attr(&suite.to_string_lossy());
    let suite_name = suite
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| suite.display().to_string());
    let class = xml_attr(&suite_name);
    let failures = cases
        .iter()
        .filter(|c| !c.passed && !c.is_error() && c.skipped.is_none())
        .count();
    let errors = cases
        .iter()
        .filter(|c| c.is_error() && c.skipped.is_none())
        .count();
    let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
    let mut body = String::new();
    for case in cases {
        let _ = write!(
            body,
            "    <testcase name=\"{}\" classname=\"{class}\" file=\"{file}\" line=\"{}\" time=\"{:.3}\"",
            xml_attr(&case.name),
            case.line,
            case.elapsed.as_secs_f64()
        );
        let details: Vec<String> = case.diagnostics.iter().map(describe).collect();
        let details = xml_escape(&details.join("\n\n"));
        let mut inner = String::new();
        if let Some(skipped) = &case.skipped {
            let _ = writeln!(inner, "      <skipped message=\"{}\"/>", xml_attr(skipped));
        } else if case.is_error() {
            let _ = writeln!(
                inner,
                "      <error message=\"{}\" type=\"agui-lens\">{details}</error>",
                xml_attr(&case.why().unwrap_or_default())
            );
        } else if !case.passed {
            let why = case.why().unwrap_or_default();
            let _ = writeln!(
                inner,
                "      <failure message=\"{}\" type=\"agui-lens\">{details}</failure>",
                xml_attr(&why)
            );
        }
        // What fails nothing is the case's output: a passing case's findings, and its notes
        // (a run that ended in RUN_ERROR).
        let mut output = Vec::new();
        if case.passed && case.skipped.is_none() && !case.is_error() && !case.diagnostics.is_empty()
        {
            output.push(details);
        }
        output.extend(
            case.notes
                .iter()
                .map(|note| xml_escape(&agui_lens_core::report::human::visible_path(note))),
        );
        if !output.is_empty() {
            let _ = writeln!(
                inner,
                "      <system-out>{}</system-out>",
                output.join("\n\n")
            );
        }
        if inner.is_empty() {
            body.push_str("/>\n");
        } else {
            let _ = write!(body, ">\n{inner}    </testcase>\n");
        }
    }
    let totals = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\"",
        cases.len(),
        elapsed.as_secs_f64()
    );
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"agui-lens\" {totals}>\n  <testsuite name=\"{class}\" {totals} skipped=\"{skipped}\">\n{body}  </testsuite>\n</testsuites>\n"
    )
}

/// One case as JSON, for `--format json` (in a list) and `--format jsonl` (one per line).
pub fn case_json(case: &CaseOutcome) -> Value {
    let diagnostics: Vec<Value> = case
        .diagnostics
        .iter()
        .map(|d| serde_json::to_value(DiagnosticRecord::from(d)).unwrap_or(Value::Null))
        .collect();
    json!({
        "name": case.name,
        "turn": case.turn,
        "line": case.line,
        "passed": case.passed,
        "why": case.why(),
        "time_ms": case.elapsed.as_millis() as u64,
        "status": case.status,
        "content_type": case.content_type,
        "first_event_ms": case.first_event.map(|d| d.as_millis() as u64),
        "events": case.stats.events,
        "errors": case.stats.errors,
        "warnings": case.stats.warnings,
        "diagnostics": diagnostics,
        "notes": case.notes,
        "failure": case.failure,
        "error": case.error,
        "skipped": case.skipped,
    })
}

/// A finding moved to the case's line in the suite file, for formats that annotate files
/// (github, sarif): the stream it came from is not a file in the repository.
pub fn in_suite(d: &Diagnostic, suite: &str, case: &CaseOutcome) -> Diagnostic {
    let mut moved = d.clone();
    let mut message = format!("case {}: {}", case.name, d.message);
    if d.path.as_ref() != suite
        && let (Some(line), Some(index)) = (d.line, d.event_index)
    {
        message.push_str(&format!(" (stream line {line}, event {index})"));
    }
    moved.message = message;
    moved.path = suite.into();
    moved.line = Some(case.line);
    moved.offset = None;
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_lens_core::check::catalog::RuleId;

    fn case(passed: bool, diagnostics: Vec<Diagnostic>) -> CaseOutcome {
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count() as u64;
        CaseOutcome {
            name: "a <b>".into(),
            case: "a <b>".into(),
            turn: 1,
            line: 3,
            passed,
            elapsed: Duration::from_millis(1234),
            status: Some(200),
            content_type: None,
            first_event: None,
            stats: Stats {
                errors,
                ..Stats::default()
            },
            diagnostics,
            held: Vec::new(),
            notes: Vec::new(),
            failure: None,
            error: None,
            skipped: None,
        }
    }

    #[test]
    fn lines_and_junit() {
        let d = Diagnostic::whole_input(
            RuleId::SuiteMissingEvent,
            Severity::Error,
            "s.toml".into(),
            "TOOL_CALL_START never appeared".into(),
        );
        let failed = case(false, vec![d.clone(), d]);
        assert_eq!(
            human_line(&failed, false),
            "case a <b> ... FAILED (1.23 s): suite/missing-event: TOOL_CALL_START never appeared (+1 more error)"
        );
        let ok = case(true, vec![]);
        assert_eq!(human_line(&ok, false), "case a <b> ... ok (1.23 s)");
        let xml = junit(
            Path::new("dir/s.toml"),
            &[ok, failed],
            Duration::from_secs(2),
        );
        assert!(
            xml.contains("<testsuite name=\"s.toml\" tests=\"2\" failures=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("<testcase name=\"a &lt;b&gt;\" classname=\"s.toml\" file=\"dir/s.toml\" line=\"3\" time=\"1.234\"/>"),
            "{xml}"
        );
        assert_eq!(xml.matches("<failure ").count(), 1);
        assert_eq!(xml.matches("<testcase ").count(), 2);
    }
}
