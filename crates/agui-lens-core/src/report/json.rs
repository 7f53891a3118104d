//! One JSON document at the end: `{"diagnostics": […], "summary": {…}}`.

use std::io::{self, Write};

use serde_json::json;

use super::group::Repeated;
use super::{DiagnosticRecord, FileSummary, Reporter, Summary, places_json};
use crate::check::diagnostic::Diagnostic;

pub struct Json {
    out: Box<dyn Write>,
    diagnostics: Vec<serde_json::Value>,
    /// The last diagnostic of each rule, path and subject, for the groups of repeats that
    /// come after it (found by a search, each group cost the whole list: quadratic).
    last: super::group::LastOf,
    files: Vec<serde_json::Value>,
}

impl Json {
    pub fn new(out: Box<dyn Write>) -> Self {
        Json {
            out,
            diagnostics: Vec::new(),
            last: Default::default(),
            files: Vec::new(),
        }
    }
}

impl Reporter for Json {
    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        self.last.note(d, self.diagnostics.len());
        self.diagnostics
            .push(serde_json::to_value(DiagnosticRecord::from(d)).map_err(io::Error::other)?);
        Ok(())
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        let first = self
            .last
            .of(group)
            .and_then(|at| self.diagnostics.get_mut(at));
        if let Some(serde_json::Value::Object(first)) = first {
            first.insert("repeats".into(), json!(group.count));
            first.insert("more".into(), places_json(group));
        }
        Ok(())
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        self.files
            .push(serde_json::to_value(file).map_err(io::Error::other)?);
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let document = json!({
            "diagnostics": self.diagnostics,
            "files": self.files,
            "summary": summary,
        });
        serde_json::to_writer_pretty(&mut self.out, &document).map_err(io::Error::other)?;
        writeln!(self.out)?;
        self.out.flush()
    }
}
