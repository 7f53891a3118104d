//! The default format: rustc-like blocks, coloured when asked, and a one-line summary.

use std::io::{self, Write};

use colored::{ColoredString, Colorize};

use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::report::group::{Repeated, places_text};
use agui_lens_core::report::{FileSummary, Reporter, Summary, plural};

pub struct Human {
    out: Box<dyn Write>,
    color: bool,
    /// Each input's verdict, listed before the summary when there are several.
    verdicts: Option<Vec<(String, String)>>,
}

impl Human {
    pub fn new(out: Box<dyn Write>, color: bool) -> Self {
        if color {
            // The user asked (or stdout is a terminal): colour even when `colored` would guess
            // otherwise from the environment.
            colored::control::set_override(true);
        }
        Human {
            out,
            color,
            verdicts: None,
        }
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
    fn start_run(&mut self, inputs: usize) -> io::Result<()> {
        if inputs > 1 {
            self.verdicts = Some(Vec::new());
        }
        Ok(())
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        if self.verdicts.is_some() {
            let verdict = file.verdict();
            let shown = if file.failure.is_some() || file.stats.errors > 0 {
                self.paint(&verdict, |s| s.red().bold())
            } else if file.stats.warnings > 0 {
                self.paint(&verdict, |s| s.yellow().bold())
            } else {
                verdict
            };
            let events = if file.skipped.is_some() {
                String::new()
            } else {
                format!(" ({})", plural(file.stats.events, "event"))
            };
            if let Some(verdicts) = &mut self.verdicts {
                verdicts.push((format!("{}{events}", file.path), shown));
            }
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let label = match d.severity {
            Severity::Error => self.paint("error", |s| s.red().bold()),
            Severity::Warning => self.paint("warning", |s| s.yellow().bold()),
            Severity::Note => self.paint("note", |s| s.bold()),
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

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        let label = self.paint("note", |s| s.bold());
        let rule = self.paint(&format!("[{}]", group.rule), |s| s.bold());
        let about = if group.subject.is_empty() {
            String::new()
        } else {
            format!(" for \"{}\"", group.subject)
        };
        writeln!(
            self.out,
            "{label}{rule}: and {} more like the {} above{about}",
            group.count, group.severity
        )?;
        let arrow = self.paint("-->", |s| s.blue().bold());
        writeln!(
            self.out,
            "  {arrow} {}: {}",
            group.path,
            places_text(group, 12)
        )?;
        let eq = self.paint("=", |s| s.blue().bold());
        writeln!(self.out, "   {eq} --no-group shows each")?;
        writeln!(self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        if let Some(verdicts) = self.verdicts.take() {
            let width = verdicts
                .iter()
                .map(|(name, _)| name.len())
                .max()
                .unwrap_or(0);
            for (name, verdict) in verdicts {
                writeln!(self.out, "  {name:<width$}  {verdict}")?;
            }
        }
        let line = summary.line(&|text, severity| match severity {
            Severity::Error => self.paint(text, |s| s.red().bold()),
            Severity::Warning => self.paint(text, |s| s.yellow().bold()),
            Severity::Note => text.to_owned(),
        });
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }
}
