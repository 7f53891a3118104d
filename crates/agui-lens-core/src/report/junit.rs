//! JUnit XML, which every CI shows: one testsuite per input; each error is a failing test
//! case, an input without errors one passing case. Warnings go to the suite's system-out.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::group::{Repeated, places_text};
use super::{FileSummary, Reporter, Summary};
use crate::check::diagnostic::{Diagnostic, Severity};

pub struct Junit {
    out: Box<dyn Write>,
    current: Vec<Diagnostic>,
    /// The current input's repeats, by rule and subject: told in their first finding.
    repeats: Vec<Repeated>,
    suites: String,
    tests: u64,
    failures: u64,
    /// Inputs that could not be read: the run could not do its job for them.
    errors: u64,
}

impl Junit {
    pub fn new(out: Box<dyn Write>) -> Self {
        Junit {
            out,
            current: Vec::new(),
            repeats: Vec::new(),
            suites: String::new(),
            tests: 0,
            failures: 0,
            errors: 0,
        }
    }
}

/// Escapes text for XML content and attributes.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 cannot carry most control characters, nor U+FFFE and U+FFFF, even
            // escaped: a parser refuses the whole report.
            c if ((c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
                || matches!(c, '\u{fffe}' | '\u{ffff}') =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// [`xml_escape`] for an attribute's value: a line break or tab there would read back as a
/// space, so it is written as a character reference.
pub fn xml_attr(text: &str) -> String {
    let escaped = xml_escape(text);
    if !escaped.contains(['\n', '\r', '\t']) {
        return escaped;
    }
    escaped
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// A finding as the text of a report's element. What it quotes (a message naming an input or
/// a case, the input's name) is kept on its line: a CI step prints the report, and a line
/// break in a name began a line of its own there (`::error …`, a workflow command).
pub fn describe(d: &Diagnostic) -> String {
    let one_line = crate::report::human::visible_path;
    let mut text = format!("{}[{}]: {}", d.severity, d.rule, one_line(&d.message));
    if let Some(line) = d.line {
        text.push_str(&format!("\n  at {}:{line}", one_line(&d.path)));
    }
    if let Some(ty) = &d.event_type {
        text.push_str(&format!(" ({ty})"));
    }
    if let Some(excerpt) = &d.excerpt {
        // An event's text, or the start of what holds none (a body, a file's first bytes).
        let what = if d.event_index.is_some() {
            "event"
        } else {
            "text"
        };
        text.push_str(&format!("\n  {what}: {excerpt}"));
    }
    if let Some(help) = &d.help {
        text.push_str(&format!("\n  help: {help}"));
    }
    text
}

impl Reporter for Junit {
    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        self.current.push(d.clone());
        Ok(())
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        self.repeats.push(group.clone());
        Ok(())
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        let mut diagnostics = std::mem::take(&mut self.current);
        for group in std::mem::take(&mut self.repeats) {
            let first = diagnostics
                .iter_mut()
                .find(|d| d.rule == group.rule && d.subject.as_deref() == Some(&group.subject));
            if let Some(first) = first {
                first.message.push_str(&format!(
                    " (and {} more like it: {}; --no-group shows each)",
                    group.count,
                    places_text(&group, 20)
                ));
            }
        }
        let errors: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        let path = xml_attr(&file.path);
        let mut cases = String::new();
        if let Some(skipped) = &file.skipped {
            let _ = write!(
                self.suites,
                "  <testsuite name=\"{path}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\">\n    <testcase name=\"conforms to AG-UI\" classname=\"{path}\">\n      <skipped message=\"{}\"/>\n    </testcase>\n  </testsuite>\n",
                xml_attr(&format!("not a capture: {skipped}"))
            );
            self.tests += 1;
            return Ok(());
        }
        let failure_count = errors.len() as u64;
        let error_count = u64::from(file.failure.is_some());
        let mut tests = errors.len() as u64;
        for d in &errors {
            let name = match d.line {
                Some(line) => format!("{} at line {line}", d.rule),
                None => d.rule.to_string(),
            };
            let _ = write!(
                cases,
                "    <testcase name=\"{}\" classname=\"{path}\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                xml_attr(&name),
                xml_attr(&d.message),
                xml_attr(d.rule.name()),
                xml_escape(&describe(d)),
            );
        }
        if let Some(failure) = &file.failure {
            tests += 1;
            let _ = write!(
                cases,
                "    <testcase name=\"read\" classname=\"{path}\">\n      <error message=\"{}\">{}</error>\n    </testcase>\n",
                xml_attr(failure),
                xml_escape(&crate::report::human::visible_path(failure)),
            );
        }
        if tests == 0 {
            tests = 1;
            let _ = writeln!(
                cases,
                "    <testcase name=\"conforms to AG-UI\" classname=\"{path}\"/>"
            );
        }
        // Warnings and notes fail nothing: they are the suite's output.
        let said: Vec<String> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(describe)
            .chain(
                file.notes
                    .iter()
                    .map(|note| crate::report::human::visible_path(note).into_owned()),
            )
            .collect();
        let system_out = if said.is_empty() {
            String::new()
        } else {
            format!(
                "    <system-out>{}</system-out>\n",
                xml_escape(&said.join("\n"))
            )
        };
        let _ = write!(
            self.suites,
            "  <testsuite name=\"{path}\" tests=\"{tests}\" failures=\"{failure_count}\" errors=\"{error_count}\" skipped=\"0\">\n{cases}{system_out}  </testsuite>\n"
        );
        self.tests += tests;
        self.failures += failure_count;
        self.errors += error_count;
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        // Stopped by a signal, the run was cancelled (exit 130, 143), though every input it
        // read may have been read whole and passed: JUnit has no flag for a run, so the stop
        // is an error of a suite of its own, and no CI shows the run green.
        if let Some(signal) = summary.stopped_by {
            let text = format!("stopped by {signal}: the run was cancelled");
            let _ = write!(
                self.suites,
                "  <testsuite name=\"agui-lens\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    <testcase name=\"run\" classname=\"agui-lens\">\n      <error message=\"{}\">{}</error>\n    </testcase>\n  </testsuite>\n",
                xml_attr(&text),
                xml_escape(&text)
            );
            self.tests += 1;
            self.errors += 1;
        }
        write!(
            self.out,
            // No `skipped` here: the schema Jenkins validates against allows it only on each
            // testsuite.
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"agui-lens\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n{}</testsuites>\n",
            self.tests, self.failures, self.errors, self.suites
        )?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            xml_escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\\u0001"
        );
        assert_eq!(xml_escape("a\nb"), "a\nb");
        // Nor U+FFFE and U+FFFF (a message id may hold them): the report must still parse.
        assert_eq!(
            xml_escape("m\u{fffe}\u{ffff}\u{fffd}"),
            "m\\ufffe\\uffff\u{fffd}"
        );
        assert_eq!(xml_attr("a\nb\r\tc<"), "a&#10;b&#13;&#9;c&lt;");
    }

    /// An excerpt of what is no event (the start of an error page a live agent answered, a
    /// file's first bytes) is not labelled as an event.
    #[test]
    fn an_excerpt_is_labelled_as_what_it_is() {
        use crate::check::catalog::RuleId;
        let body = Diagnostic::whole_input(
            RuleId::TransportHttpStatus,
            Severity::Error,
            "http://agent/".into(),
            "the agent answered 500".into(),
        )
        .with_excerpt(Some("<html>oops</html>".into()));
        let text = describe(&body);
        assert!(text.contains("\n  text: <html>oops</html>"), "{text}");
        let mut event = body.clone();
        event.event_index = Some(3);
        assert!(describe(&event).contains("\n  event: <html>"));
    }
}
