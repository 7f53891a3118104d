//! One JSON object per diagnostic, one per line, written as each is found.

use std::io::{self, Write};

use super::{DiagnosticRecord, Reporter, Summary};
use crate::diagnostic::Diagnostic;

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

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        self.out.flush()
    }
}
