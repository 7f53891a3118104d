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
    /// with the stream named first in the message). What is no file on the disk (a live
    /// agent's URL, stdin, a suite's or a proxy's exchange named in words) places none, and
    /// is named first in the message: an annotation on a file that is not there is lost.
    fn place(&self, path: &str, line: Option<u64>) -> (Vec<String>, Option<String>) {
        let place = self.containers.place(path);
        // (`-` is stdin: a file of that name in the working folder is another input.) A
        // name a log viewer would act on (an escape sequence, a bidi override) cannot be
        // given as it is, and escaped it names no file: it is named in the message instead.
        let shown_as_is = matches!(
            crate::report::human::visible(place.file),
            std::borrow::Cow::Borrowed(_)
        );
        if place.file == "-" || !shown_as_is || !std::path::Path::new(place.file).is_file() {
            let named = match place.stream {
                Some(stream) => format!("{}: {stream}: ", place.file),
                None => format!("{}: ", place.file),
            };
            return (Vec::new(), Some(named));
        }
        let mut properties = vec![format!("file={}", escape_property(place.file))];
        if let (Some(line), None) = (line, place.stream) {
            properties.push(format!("line={line}"));
        }
        (properties, place.stream.map(|s| format!("{s}: ")))
    }
}

/// Escapes a command's message (`%`, CR, LF), with what a log viewer would act on (an escape
/// sequence, a bidi override) written as [`visible`](crate::report::human::visible) writes it.
fn escape_data(text: &str) -> String {
    crate::report::human::visible(text)
        .replace('%', "%25")
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
        // Each message names the file already.
        let mut properties = self.place(&file.path, file.line).0;
        properties.push("title=agui-lens".to_owned());
        let properties = properties.join(",");
        if let Some(failure) = file.failure_text() {
            writeln!(self.out, "::error {properties}::{}", escape_data(&failure))?;
        } else if let Some(skipped) = &file.skipped {
            writeln!(
                self.out,
                "::notice {properties}::{}",
                escape_data(&format!("skipped {}: not a capture ({skipped})", file.path))
            )?;
        }
        for note in &file.notes {
            writeln!(
                self.out,
                "::notice {properties}::{}",
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
            writeln!(self.out, "{}", stopped_annotation(signal))?;
        }
        writeln!(
            self.out,
            "agui-lens: {}",
            summary.line(&|text, _| text.to_owned())
        )?;
        self.out.flush()
    }
}

/// The error annotation of a run a signal stopped (`stopped by SIGTERM …`): it did not end on
/// its own, so it is no pass.
pub fn stopped_annotation(signal: &str) -> String {
    format!(
        "::error title=agui-lens::{}",
        escape_data(&format!(
            "stopped by {signal}: the run did not end on its own, so it is no pass"
        ))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_data("50%\nnext"), "50%25%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }

    /// An annotation names a file only when there is one: what is no file (a live agent's URL,
    /// a suite's or a proxy's exchange named in words) is named in the message instead, with
    /// no `file=` GitHub cannot place.
    #[test]
    fn only_a_file_that_is_there_is_annotated() {
        use crate::check::catalog::RuleId;
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("run.jsonl");
        std::fs::write(&there, "{}\n").unwrap();
        let there = there.to_str().unwrap();
        struct Into(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Into {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let written = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut github = Github::new(Box::new(Into(written.clone())));
        for path in [
            there,
            "request 1 (thread t, turn 1)",
            "http://127.0.0.1:1/agent",
        ] {
            let d = Diagnostic::whole_input(
                RuleId::TransportHttpStatus,
                Severity::Error,
                path.into(),
                "the agent answered 500".into(),
            );
            github.diagnostic(&d).unwrap();
            let file = FileSummary::checked(path.into(), Default::default(), Some("broken".into()));
            github.end_file(&file).unwrap();
        }
        let out = written.borrow().clone();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with(&format!("::error file={}", escape_property(there))),
            "{out}"
        );
        assert!(
            lines[1].starts_with(&format!("::error file={}", escape_property(there))),
            "{out}"
        );
        for (i, named) in [
            (2, "request 1 (thread t, turn 1)"),
            (4, "http://127.0.0.1:1/agent"),
        ] {
            assert!(
                lines[i].starts_with(&format!(
                    "::error title=transport/http-status::{}: ",
                    escape_data(named)
                )),
                "{out}"
            );
            assert!(
                lines[i + 1].starts_with("::error title=agui-lens::"),
                "{out}"
            );
        }
    }
}
