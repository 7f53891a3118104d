//! Reporters: one per output format. A reporter gets diagnostics and a summary and writes them;
//! it never decides the exit code. Streaming formats write as diagnostics arrive, whole-run
//! formats at the end.

mod github;
mod human;
mod json;
mod jsonl;
mod junit;
mod sarif;
pub mod suite;

use std::io::{self, Write};
use std::sync::Arc;

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::rules::engine::Stats;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
}

/// The whole run's outcome.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Summary {
    pub files: u64,
    pub events: u64,
    pub errors: u64,
    pub warnings: u64,
}

impl Summary {
    pub fn add(&mut self, file: &FileSummary) {
        self.files += 1;
        self.events += file.stats.events;
        self.errors += file.stats.errors;
        self.warnings += file.stats.warnings;
    }
}

/// Receives a run's findings, in order: per input, `start_file`, its diagnostics, `end_file`;
/// then `finish` once.
pub trait Reporter {
    fn start_file(&mut self, _path: &str) -> io::Result<()> {
        Ok(())
    }
    fn diagnostic(&mut self, diagnostic: &Diagnostic) -> io::Result<()>;
    fn end_file(&mut self, _file: &FileSummary) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self, summary: &Summary) -> io::Result<()>;
    /// Pushes out what streaming formats have written so far.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reporter for a format, writing to `out`.
pub fn reporter(format: Format, out: Box<dyn Write>, color: bool) -> Box<dyn Reporter> {
    match format {
        Format::Human => Box::new(human::Human::new(out, color)),
        Format::Json => Box::new(json::Json::new(out)),
        Format::Jsonl => Box::new(jsonl::Jsonl::new(out)),
        Format::Github => Box::new(github::Github::new(out)),
        Format::Junit => Box::new(junit::Junit::new(out)),
        Format::Sarif => Box::new(sarif::Sarif::new(out)),
    }
}

/// The fields every machine-readable format shares.
#[derive(Serialize)]
pub(crate) struct DiagnosticRecord<'a> {
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
        }
    }
}

/// `1 error`, `2 warnings`.
pub(crate) fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
