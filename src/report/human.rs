//! The default format: rustc-like blocks, coloured when asked, and a one-line summary.

use std::io::{self, Write};

use colored::{ColoredString, Colorize};

use super::{Reporter, Summary, plural};
use crate::diagnostic::{Diagnostic, Severity};

pub struct Human {
    out: Box<dyn Write>,
    color: bool,
}

impl Human {
    pub fn new(out: Box<dyn Write>, color: bool) -> Self {
        if color {
            // The user asked (or stdout is a terminal): colour even when `colored` would guess
            // otherwise from the environment.
            colored::control::set_override(true);
        }
        Human { out, color }
    }

    fn paint(&self, text: &str, style: fn(&str) -> ColoredString) -> String {
        if self.color {
            style(text).to_string()
        } else {
            text.to_owned()
        }
    }
}

impl Reporter for Human {
    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let label = match d.severity {
            Severity::Error => self.paint("error", |s| s.red().bold()),
            Severity::Warning => self.paint("warning", |s| s.yellow().bold()),
        };
        let rule = self.paint(&format!("[{}]", d.rule), |s| s.bold());
        let message = self.paint(&d.message, |s| s.bold());
        writeln!(self.out, "{label}{rule}: {message}")?;
        let mut place = d.path.to_string();
        if let Some(line) = d.line {
            place.push_str(&format!(":{line}"));
        }
        let mut context = Vec::new();
        if let Some(index) = d.event_index {
            context.push(format!("event {index}"));
        }
        if let Some(ty) = &d.event_type {
            context.push(ty.clone());
        }
        let arrow = self.paint("-->", |s| s.blue().bold());
        if context.is_empty() {
            writeln!(self.out, "  {arrow} {place}")?;
        } else {
            writeln!(self.out, "  {arrow} {place} ({})", context.join(", "))?;
        }
        let bar = self.paint("|", |s| s.blue().bold());
        if let Some(excerpt) = &d.excerpt {
            writeln!(self.out, "   {bar} {excerpt}")?;
        }
        let eq = self.paint("=", |s| s.blue().bold());
        if let (Some(pointer), Some(keyword)) = (&d.pointer, &d.keyword) {
            let pointer = if pointer.is_empty() {
                "the event root"
            } else {
                pointer
            };
            writeln!(self.out, "   {eq} at {pointer}, schema keyword `{keyword}`")?;
        }
        if let Some(help) = &d.help {
            let label = self.paint("help", |s| s.bold());
            writeln!(self.out, "   {eq} {label}: {help}")?;
        }
        writeln!(self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let verdict = if summary.errors > 0 {
            self.paint(&plural(summary.errors, "error"), |s| s.red().bold())
        } else {
            plural(summary.errors, "error")
        };
        let warnings = if summary.warnings > 0 {
            self.paint(&plural(summary.warnings, "warning"), |s| s.yellow().bold())
        } else {
            plural(summary.warnings, "warning")
        };
        writeln!(
            self.out,
            "checked {}, {}: {verdict}, {warnings}",
            plural(summary.files, "file"),
            plural(summary.events, "event"),
        )?;
        self.out.flush()
    }
}
