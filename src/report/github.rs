//! GitHub Actions workflow commands: each diagnostic annotates its file and line in the PR.

use std::io::{self, Write};

use super::{Reporter, Summary, plural};
use crate::diagnostic::{Diagnostic, Severity};

pub struct Github {
    out: Box<dyn Write>,
}

impl Github {
    pub fn new(out: Box<dyn Write>) -> Self {
        Github { out }
    }
}

/// Escapes a command's message (`%`, CR, LF).
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property (also `:` and `,`).
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

impl Reporter for Github {
    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut properties = vec![format!("file={}", escape_property(&d.path))];
        if let Some(line) = d.line {
            properties.push(format!("line={line}"));
        }
        properties.push(format!("title={}", escape_property(d.rule.name())));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        writeln!(
            self.out,
            "::{command} {}::{}",
            properties.join(","),
            escape_data(&message)
        )?;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        writeln!(
            self.out,
            "agui-lens: checked {}, {}: {}, {}",
            plural(summary.files, "file"),
            plural(summary.events, "event"),
            plural(summary.errors, "error"),
            plural(summary.warnings, "warning"),
        )?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_data("50%\nnext"), "50%25%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
