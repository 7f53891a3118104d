//! One JSON object per diagnostic, one per line, written as each is found.

use std::io::{self, Write};

use super::group::Repeated;
use super::{DiagnosticRecord, FileSummary, Reporter, Summary, places_json};
use crate::check::diagnostic::Diagnostic;

pub struct Jsonl {
    out: Box<dyn Write>,
}

impl Jsonl {
    pub fn new(out: Box<dyn Write>) -> Self {
        Jsonl { out }
    }
}

impl Reporter for Jsonl {
    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, &DiagnosticRecord::from(d))
            .map_err(io::Error::other)?;
        writeln!(self.out)?;
        Ok(())
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        // The first finding went out as it was found: its repeats are a line of their own.
        let record = serde_json::json!({
            "rule": group.rule.name(),
            "severity": group.severity.as_str(),
            "path": group.path,
            "subject": group.subject,
            "message": group.message,
            "repeats": group.count,
            "more": places_json(group),
        });
        serde_json::to_writer(&mut self.out, &record).map_err(io::Error::other)?;
        writeln!(self.out)
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        // An input that could not be read, was skipped, or has notes is a line of its own.
        let mut record = match (&file.failure, &file.skipped) {
            (Some(failure), _) => serde_json::json!({"path": file.path, "failure": failure}),
            (None, Some(skipped)) => serde_json::json!({"path": file.path, "skipped": skipped}),
            (None, None) if !file.notes.is_empty() => serde_json::json!({"path": file.path}),
            (None, None) => return Ok(()),
        };
        if !file.notes.is_empty() {
            record["remarks"] = serde_json::json!(file.notes);
        }
        serde_json::to_writer(&mut self.out, &record).map_err(io::Error::other)?;
        writeln!(self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        // A run stopped by a signal is a line of its own, as an input that failed is.
        if let Some(signal) = summary.stopped_by {
            writeln!(self.out, "{}", stopped_record(signal))?;
        }
        self.out.flush()
    }
}

/// The line of a run a signal stopped (`{"stopped_by":"SIGTERM"}`), the last of its report.
pub fn stopped_record(signal: &str) -> String {
    serde_json::json!({ "stopped_by": signal }).to_string()
}
