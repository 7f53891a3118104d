//! Reporters: one per output format. A reporter gets diagnostics and a summary and writes them;
//! it never decides the exit code. Streaming formats write as diagnostics arrive, whole-run
//! formats at the end.

pub mod baseline;
pub mod github;
pub mod group;
pub mod human;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod sarif;

use std::io::{self, Write};
use std::sync::Arc;

use serde::Serialize;

use crate::check::diagnostic::{Diagnostic, Severity};
use crate::check::engine::Stats;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// rustc-like text, coloured on a terminal.
    Human,
    /// One JSON document at the end.
    Json,
    /// One JSON diagnostic per line, as found.
    Jsonl,
    /// GitHub Actions workflow commands that annotate file and line.
    Github,
    /// JUnit XML: one testsuite per file.
    Junit,
    /// SARIF 2.1.0 for code-scanning dashboards.
    Sarif,
}

/// One input's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct FileSummary {
    pub path: Arc<str>,
    #[serde(flatten)]
    pub stats: Stats,
    /// Set when the input could not be read to the end.
    pub failure: Option<String>,
    /// Set when a directory walk found the input to be plainly no capture (JSON that is no
    /// event, beside the captures): what it is. It was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Reading stopped at the user's request (Ctrl-C, SIGTERM) before the input ended;
    /// `failure` says after how much.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The input was checked as far as `stats` count, but its recording (`run --record`)
    /// could not be written to its end: `failure` says why.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unwritten: bool,
    /// The protocol versions the input was judged by, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protocol: Vec<crate::check::version::VersionUse>,
    /// The input is a live call (`run`), not a file: a failure is a response that could not
    /// be had, not a file that could not be read.
    #[serde(skip)]
    pub call: bool,
    /// The input is the findings recorded beside an exchange (proxy, test), not a stream: it has
    /// no events to count.
    #[serde(skip)]
    pub recorded_findings: bool,
    /// The input records an answer that owed no stream (an input sent invalid on purpose,
    /// refused): that it holds no event is no sign that nothing was checked.
    #[serde(skip)]
    pub no_stream_owed: bool,
    /// The line of the input what is said of it belongs to (a suite's case), for the formats
    /// that point at lines (SARIF, GitHub's annotations).
    #[serde(skip)]
    pub line: Option<u64>,
    /// What a user wants to know about the input that is no finding, said in every format:
    /// a live run that ended in RUN_ERROR (the protocol's way to say a run failed), a file
    /// beside a recording left out. (`remarks` in JSON: `notes` there counts the findings of
    /// that severity.)
    #[serde(skip_serializing_if = "Vec::is_empty", rename = "remarks")]
    pub notes: Vec<String>,
}

impl FileSummary {
    /// An input read to its end with no AG-UI event in it and no error: what it holds was
    /// reported (`framing/no-events`, under a level that does not fail), but nothing in it
    /// was checked.
    pub fn checked_nothing(&self) -> bool {
        self.skipped.is_none()
            && !self.no_stream_owed
            && self.failure.is_none()
            && !self.interrupted
            && self.stats.events == 0
            && self.stats.errors == 0
    }

    /// Fails an input that [checked nothing](FileSummary::checked_nothing), as the one input
    /// of a run: what it held was no stream to check.
    pub fn fail_if_checked_nothing(&mut self) {
        if self.checked_nothing() {
            self.failure = Some(format!(
                "{}: no AG-UI event in it: nothing was checked",
                self.path
            ));
        }
    }

    /// An input read to its end (or as far as it could be, with `failure`).
    pub fn checked(path: Arc<str>, stats: Stats, failure: Option<String>) -> Self {
        FileSummary {
            path,
            stats,
            failure,
            skipped: None,
            interrupted: false,
            unwritten: false,
            protocol: Vec::new(),
            call: false,
            recorded_findings: false,
            no_stream_owed: false,
            line: None,
            notes: Vec::new(),
        }
    }

    /// An input whose reading the user stopped (Ctrl-C, SIGTERM) after what `stats` counts.
    pub fn stopped(path: Arc<str>, stats: Stats) -> Self {
        let failure = format!(
            "interrupted by {} after {}: the rest was not read",
            crate::stop::signal_name(),
            plural(stats.events, "event")
        );
        FileSummary {
            interrupted: true,
            ..FileSummary::checked(path, stats, Some(failure))
        }
    }

    /// What went wrong reading the input, as a sentence naming it.
    pub fn failure_text(&self) -> Option<String> {
        let failure = self.failure.as_ref()?;
        Some(if self.interrupted || self.unwritten {
            format!("{}: {failure}", self.path)
        } else if self.call {
            format!("no response from {}: {failure}", self.path)
        } else {
            format!("could not read {}: {failure}", self.path)
        })
    }

    /// The verdict on this input alone, for a list of inputs: `ok`, `2 errors`, `1 warning`,
    /// `could not be read: …`, `skipped: …`.
    pub fn verdict(&self) -> String {
        if let Some(why) = &self.skipped {
            return format!("skipped: not a capture ({why})");
        }
        if let Some(why) = &self.failure {
            return if self.interrupted || self.unwritten {
                why.clone()
            } else if self.call {
                format!("no response: {why}")
            } else {
                format!("could not be read: {why}")
            };
        }
        match (self.stats.errors, self.stats.warnings) {
            (0, 0) => "ok".into(),
            (0, w) => plural(w, "warning"),
            (e, 0) => plural(e, "error"),
            (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
        }
    }
}

/// The whole run's outcome.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Summary {
    /// Inputs read to their end.
    pub files: u64,
    pub events: u64,
    pub errors: u64,
    pub warnings: u64,
    /// Inputs that could not be opened or read to their end.
    pub unreadable: u64,
    /// Inputs a directory walk found to be no capture, not checked.
    pub skipped: u64,
    /// Inputs whose reading the user stopped (Ctrl-C, SIGTERM).
    pub interrupted: u64,
    /// Inputs checked whose recording could not be written to its end.
    #[serde(skip_serializing_if = "is_zero")]
    pub unwritten: u64,
    /// Notes: worth knowing, never failing a run.
    pub notes: u64,
    /// The inputs were responses of live agents (`run`), not files.
    #[serde(skip)]
    pub live: bool,
    /// The signal that stopped the run (`SIGTERM`), when one did: even with every input read
    /// whole, the run was cancelled, and a report that says whether it succeeded says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<&'static str>,
}

impl Summary {
    pub fn add(&mut self, file: &FileSummary) {
        if file.skipped.is_some() {
            self.skipped += 1;
            return;
        }
        if file.interrupted {
            self.interrupted += 1;
        } else if file.unwritten {
            self.files += 1;
            self.unwritten += 1;
        } else if file.failure.is_some() {
            self.unreadable += 1;
        } else {
            self.files += 1;
        }
        self.events += file.stats.events;
        self.errors += file.stats.errors;
        self.warnings += file.stats.warnings;
        self.notes += file.stats.notes;
    }

    /// `checked 2 files, 42 events: 1 error, 0 warnings; 1 file could not be read; 1 skipped
    /// (not a capture)`, with the counts coloured by `paint` when asked.
    pub fn line(&self, paint: &dyn Fn(&str, Severity) -> String) -> String {
        let errors = plural(self.errors, "error");
        let errors = if self.errors > 0 {
            paint(&errors, Severity::Error)
        } else {
            errors
        };
        let warnings = plural(self.warnings, "warning");
        let warnings = if self.warnings > 0 {
            paint(&warnings, Severity::Warning)
        } else {
            warnings
        };
        let inputs = if self.live {
            plural(self.files, "live response")
        } else {
            plural(self.files, "file")
        };
        let mut line = format!(
            "checked {inputs}, {}: {errors}, {warnings}",
            plural(self.events, "event"),
        );
        if self.notes > 0 {
            line.push_str(&format!(", {}", plural(self.notes, "note")));
        }
        if self.unreadable > 0 {
            let unreadable = if self.live {
                format!("{} could not be had", plural(self.unreadable, "response"))
            } else {
                format!("{} could not be read", plural(self.unreadable, "file"))
            };
            line.push_str("; ");
            line.push_str(&paint(&unreadable, Severity::Error));
        }
        if self.unwritten > 0 {
            let unwritten = format!(
                "{} could not be written",
                plural(self.unwritten, "recording")
            );
            line.push_str("; ");
            line.push_str(&paint(&unwritten, Severity::Error));
        }
        if self.skipped > 0 {
            line.push_str(&format!("; {} skipped (not a capture)", self.skipped));
        }
        if self.interrupted > 0 {
            let stopped = format!(
                "{} interrupted before {} end",
                plural(self.interrupted, "input"),
                if self.interrupted == 1 {
                    "its"
                } else {
                    "their"
                }
            );
            line.push_str("; ");
            line.push_str(&paint(&stopped, Severity::Error));
        }
        if let Some(signal) = self.stopped_by {
            // Said even when every input was read to its end: the run did not end on its own.
            line.push_str("; ");
            line.push_str(&paint(&format!("stopped by {signal}"), Severity::Error));
        }
        line
    }
}

/// The files streams were read from inside of (see [`Reporter::stream_within`]), for the
/// formats that place findings in files.
#[derive(Default)]
struct Containers(std::collections::HashMap<String, String>);

/// Where a finding goes in a format that points into files.
struct Place<'a> {
    file: &'a str,
    /// The stream's name, when the stream is not the file itself.
    stream: Option<&'a str>,
    /// What the stream's name adds to the file's as the stream was named before it was read
    /// (`#3` for the HAR entry `x.har#3 (POST …)`): the same for every run over that file.
    entry: &'a str,
}

impl Containers {
    fn add(&mut self, stream: &str, file: &str) {
        self.0.insert(stream.to_owned(), file.to_owned());
    }

    /// Where the findings of the input named `path` go.
    fn place<'a>(&'a self, path: &'a str) -> Place<'a> {
        if !self.0.is_empty() {
            let named = std::iter::once(path.len()).chain(path.match_indices(" (").map(|(i, _)| i));
            for end in named {
                if let Some(file) = self.0.get(&path[..end]) {
                    return Place {
                        file,
                        stream: Some(path),
                        entry: path[..end].strip_prefix(file.as_str()).unwrap_or_default(),
                    };
                }
            }
        }
        Place {
            file: path,
            stream: None,
            entry: "",
        }
    }
}

/// Receives a run's findings, in order: `start_run` once, then per input `start_file`, its
/// diagnostics, `end_file`; then `finish` once.
pub trait Reporter {
    /// How many inputs the run reads.
    fn start_run(&mut self, _inputs: usize) -> io::Result<()> {
        Ok(())
    }
    fn start_file(&mut self, _path: &str) -> io::Result<()> {
        Ok(())
    }
    /// The stream named `stream` was read from inside `file` (an entry of a browser capture;
    /// its name goes on with ` (` and its request once read): formats that point into files
    /// (SARIF, GitHub) place its findings in `file`, without a line, as their lines count in
    /// the stream, not in the file. Told before the run's first input.
    fn stream_within(&mut self, _stream: &str, _file: &str) -> io::Result<()> {
        Ok(())
    }
    fn diagnostic(&mut self, diagnostic: &Diagnostic) -> io::Result<()>;
    /// A finding a baseline (the file `baseline`) holds back: neither shown nor counted, except
    /// by a format that can carry it marked as suppressed (SARIF), so that a dashboard still
    /// knows it is there.
    fn held(&mut self, _diagnostic: &Diagnostic, _baseline: &str) -> io::Result<()> {
        Ok(())
    }
    /// The repeats of a finding already given, held back by [`group::Grouping`]: told at
    /// the end of their input, before `end_file`.
    fn repeated(&mut self, group: &group::Repeated) -> io::Result<()>;
    fn end_file(&mut self, _file: &FileSummary) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self, summary: &Summary) -> io::Result<()>;
    /// Pushes out what streaming formats have written so far.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reporter for a machine format, writing to `out`: every format but `human`, which a front
/// end paints its own way ([`human::Human`]). With `group`, repeats of one cause are shown once
/// (see [`group::Grouping`]).
pub fn reporter(format: Format, out: Box<dyn Write>, group: bool) -> Option<Box<dyn Reporter>> {
    let reporter: Box<dyn Reporter> = match format {
        Format::Human => return None,
        Format::Json => Box::new(json::Json::new(out)),
        Format::Jsonl => Box::new(jsonl::Jsonl::new(out)),
        Format::Github => Box::new(github::Github::new(out)),
        Format::Junit => Box::new(junit::Junit::new(out)),
        Format::Sarif => Box::new(sarif::Sarif::new(out)),
    };
    Some(grouped(reporter, group))
}

/// Two reporters told the same run: one format on stdout and another written to a file
/// (`check --junit`), so both say what one run found.
pub struct Both(pub Box<dyn Reporter>, pub Box<dyn Reporter>);

impl Reporter for Both {
    fn start_run(&mut self, inputs: usize) -> io::Result<()> {
        self.0.start_run(inputs)?;
        self.1.start_run(inputs)
    }
    fn start_file(&mut self, path: &str) -> io::Result<()> {
        self.0.start_file(path)?;
        self.1.start_file(path)
    }
    fn stream_within(&mut self, stream: &str, file: &str) -> io::Result<()> {
        self.0.stream_within(stream, file)?;
        self.1.stream_within(stream, file)
    }
    fn diagnostic(&mut self, diagnostic: &Diagnostic) -> io::Result<()> {
        self.0.diagnostic(diagnostic)?;
        self.1.diagnostic(diagnostic)
    }
    fn held(&mut self, diagnostic: &Diagnostic, baseline: &str) -> io::Result<()> {
        self.0.held(diagnostic, baseline)?;
        self.1.held(diagnostic, baseline)
    }
    fn repeated(&mut self, group: &group::Repeated) -> io::Result<()> {
        self.0.repeated(group)?;
        self.1.repeated(group)
    }
    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        self.0.end_file(file)?;
        self.1.end_file(file)
    }
    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        self.0.finish(summary)?;
        self.1.finish(summary)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()?;
        self.1.flush()
    }
}

/// `reporter` behind [`group::Grouping`] when `group`.
pub fn grouped(reporter: Box<dyn Reporter>, group: bool) -> Box<dyn Reporter> {
    if group {
        Box::new(group::Grouping::new(reporter))
    } else {
        reporter
    }
}

/// The places of a group's repeats, for the machine formats: `[{"line", "event_index"}]`.
pub fn places_json(group: &group::Repeated) -> serde_json::Value {
    group
        .places
        .iter()
        .map(|p| serde_json::json!({"line": p.line, "event_index": p.event_index}))
        .collect()
}

/// The fields every machine-readable format shares.
#[derive(Serialize)]
pub struct DiagnosticRecord<'a> {
    pub rule: &'static str,
    pub severity: &'static str,
    pub path: &'a str,
    pub line: Option<u64>,
    pub offset: Option<u64>,
    pub event_index: Option<u64>,
    pub event_type: Option<&'a str>,
    pub message: &'a str,
    pub help: Option<&'a str>,
    pub pointer: Option<&'a str>,
    pub keyword: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<&'a str>,
    /// The start of what holds no event (an error page's body): see [`text_of`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
}

/// The start of what a finding is about when that holds no event (the body of an error
/// answer, a file's first bytes), which every format carries: the reason an agent refused is
/// in it. An event's own text is not repeated: its line places it.
pub fn text_of(d: &Diagnostic) -> Option<&str> {
    d.excerpt.as_deref().filter(|_| d.event_index.is_none())
}

impl<'a> From<&'a Diagnostic> for DiagnosticRecord<'a> {
    fn from(d: &'a Diagnostic) -> Self {
        DiagnosticRecord {
            rule: d.rule.name(),
            severity: d.severity.as_str(),
            path: &d.path,
            line: d.line,
            offset: d.offset,
            event_index: d.event_index,
            event_type: d.event_type.as_deref(),
            message: &d.message,
            help: d.help.as_deref(),
            pointer: d.pointer.as_deref(),
            keyword: d.keyword.as_deref(),
            subject: d.subject.as_deref(),
            text: text_of(d),
        }
    }
}

pub use crate::text::plural;

fn is_zero(n: &u64) -> bool {
    *n == 0
}
