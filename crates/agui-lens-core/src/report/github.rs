//! GitHub Actions workflow commands: each diagnostic annotates its file and line in the PR.

use std::io::{self, Write};

use super::group::{Repeated, places_text};
use super::{Containers, FileSummary, Reporter, Summary};
use crate::check::diagnostic::{Diagnostic, Severity};

pub struct Github {
    out: Box<dyn Write>,
    containers: Containers,
}

impl Github {
    pub fn new(out: Box<dyn Write>) -> Self {
        Github {
            out,
            containers: Containers::default(),
        }
    }

    /// The properties that place an annotation: its file, and its line when the line counts
    /// in that file (a stream read from inside a HAR is annotated on the HAR, without one and
    /// with the stream named first in the message).
    fn place(&self, path: &str, line: Option<u64>) -> (Vec<String>, Option<String>) {
        let place = self.containers.place(path);
        let mut properties = vec![format!("file={}", escape_property(place.file))];
        if let (Some(line), None) = (line, place.stream) {
            properties.push(format!("line={line}"));
        }
        (properties, place.stream.map(|s| format!("{s}: ")))
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
    fn stream_within(&mut self, stream: &str, file: &str) -> io::Result<()> {
        self.containers.add(stream, file);
        Ok(())
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let (mut properties, stream) = self.place(&d.path, d.line);
        properties.push(format!("title={}", escape_property(d.rule.name())));
        let mut message = stream.unwrap_or_default();
        message.push_str(&d.message);
        if let Some(text) = super::text_of(d) {
            message.push_str("\ntext: ");
            message.push_str(text);
        }
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

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        let line = group.places.first().and_then(|p| p.line);
        let (mut properties, stream) = self.place(&group.path, line);
        properties.push(format!("title={}", escape_property(group.rule.name())));
        writeln!(
            self.out,
            "::notice {}::{}",
            properties.join(","),
            escape_data(&format!(
                "{}and {} more {} like the first ({}; --no-group shows each)",
                stream.unwrap_or_default(),
                group.count,
                group.rule,
                places_text(group, 20)
            ))
        )
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        let file_property = self.place(&file.path, None).0.join(",");
        if let Some(failure) = file.failure_text() {
            writeln!(
                self.out,
                "::error {file_property},title=agui-lens::{}",
                escape_data(&failure)
            )?;
        } else if let Some(skipped) = &file.skipped {
            writeln!(
                self.out,
                "::notice {file_property},title=agui-lens::{}",
                escape_data(&format!("skipped {}: not a capture ({skipped})", file.path))
            )?;
        }
        for note in &file.notes {
            writeln!(
                self.out,
                "::notice {file_property},title=agui-lens::{}",
                escape_data(&format!("{}: {note}", file.path))
            )?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        if let Some(signal) = summary.stopped_by {
            writeln!(
                self.out,
                "::error title=agui-lens::{}",
                escape_data(&format!(
                    "stopped by {signal}: the run did not end on its own, so it is no pass"
                ))
            )?;
        }
        writeln!(
            self.out,
            "agui-lens: {}",
            summary.line(&|text, _| text.to_owned())
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
