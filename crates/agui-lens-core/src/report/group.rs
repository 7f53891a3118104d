//! One cause, one finding: repeats of a rule with the same subject in one input (a tool the
//! input does not declare, called two thousand times) reach a reporter once, and at the end of
//! the input the reporter hears how many more there were and where.

use std::collections::HashMap;
use std::io;

use super::{FileSummary, Reporter, Summary};
use crate::check::catalog::RuleId;
use crate::check::diagnostic::{Diagnostic, Severity};

/// The most places of one group kept to show; past it they are only counted.
const PLACES_KEPT: usize = 1000;

/// Where a repeat was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub line: Option<u64>,
    pub event_index: Option<u64>,
}

/// Where the last finding of each rule, path and subject went in a report's list, so that a
/// group of its repeats finds it at once.
#[derive(Default)]
pub struct LastOf(
    std::collections::HashMap<(crate::check::catalog::RuleId, std::sync::Arc<str>, String), usize>,
);

impl LastOf {
    /// `d` is at `at` in the list.
    pub fn note(&mut self, d: &crate::check::diagnostic::Diagnostic, at: usize) {
        if let Some(subject) = &d.subject {
            self.0.insert((d.rule, d.path.clone(), subject.clone()), at);
        }
    }

    /// Where the finding the group repeats is.
    pub fn of(&self, group: &Repeated) -> Option<usize> {
        self.0
            .get(&(group.rule, group.path.clone(), group.subject.clone()))
            .copied()
    }
}

/// The repeats of one finding, told after the input's last diagnostic.
#[derive(Clone, Debug)]
pub struct Repeated {
    pub rule: RuleId,
    pub severity: Severity,
    pub path: std::sync::Arc<str>,
    pub subject: String,
    /// The first finding's message, as it was shown.
    pub message: String,
    /// How many more findings there were after the one shown.
    pub count: u64,
    /// Where the first thousand of them were.
    pub places: Vec<Place>,
}

/// Wraps a reporter, passing each group's first finding on and holding back its repeats.
pub struct Grouping {
    inner: Box<dyn Reporter>,
    groups: HashMap<(RuleId, String), usize>,
    order: Vec<Repeated>,
}

impl Grouping {
    pub fn new(inner: Box<dyn Reporter>) -> Self {
        Grouping {
            inner,
            groups: HashMap::new(),
            order: Vec::new(),
        }
    }

    /// Tells the inner reporter of the repeats of the input that ends.
    fn flush_groups(&mut self) -> io::Result<()> {
        self.groups.clear();
        for group in std::mem::take(&mut self.order) {
            if group.count > 0 {
                self.inner.repeated(&group)?;
            }
        }
        Ok(())
    }
}

impl Reporter for Grouping {
    fn start_run(&mut self, inputs: usize) -> io::Result<()> {
        self.inner.start_run(inputs)
    }

    fn start_file(&mut self, path: &str) -> io::Result<()> {
        self.inner.start_file(path)
    }

    fn stream_within(&mut self, stream: &str, file: &str) -> io::Result<()> {
        self.inner.stream_within(stream, file)
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let Some(subject) = &d.subject else {
            return self.inner.diagnostic(d);
        };
        let key = (d.rule, subject.clone());
        match self.groups.get(&key) {
            Some(&at) => {
                let group = &mut self.order[at];
                group.count += 1;
                if group.places.len() < PLACES_KEPT {
                    group.places.push(Place {
                        line: d.line,
                        event_index: d.event_index,
                    });
                }
                Ok(())
            }
            None => {
                self.groups.insert(key, self.order.len());
                self.order.push(Repeated {
                    rule: d.rule,
                    severity: d.severity,
                    path: d.path.clone(),
                    subject: subject.clone(),
                    message: d.message.clone(),
                    count: 0,
                    places: Vec::new(),
                });
                self.inner.diagnostic(d)
            }
        }
    }

    fn held(&mut self, d: &Diagnostic, baseline: &str) -> io::Result<()> {
        self.inner.held(d, baseline)
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        self.flush_groups()?;
        self.inner.end_file(file)
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        self.inner.repeated(group)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        // An input reported without `end_file` (a live call's) ends here.
        self.flush_groups()?;
        self.inner.finish(summary)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `lines 5, 8, 11, … (35 in all)`, for a person.
pub fn places_text(group: &Repeated, shown: usize) -> String {
    let lines: Vec<String> = group
        .places
        .iter()
        .take(shown)
        .map(|p| match (p.line, p.event_index) {
            (Some(line), _) => line.to_string(),
            (None, Some(index)) => format!("event {index}"),
            (None, None) => "?".into(),
        })
        .collect();
    let more = if group.count as usize > lines.len() {
        ", …"
    } else {
        ""
    };
    format!("lines {}{more}", lines.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Remembers what reached it.
    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<String>>>);

    impl Reporter for Seen {
        fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
            self.0
                .lock()
                .unwrap()
                .push(format!("{} {}", d.rule, d.message));
            Ok(())
        }
        fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
            self.0.lock().unwrap().push(format!(
                "{} +{} {:?}",
                group.rule, group.count, group.places
            ));
            Ok(())
        }
        fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
            self.0.lock().unwrap().push(format!("end {}", file.path));
            Ok(())
        }
        fn finish(&mut self, _: &Summary) -> io::Result<()> {
            Ok(())
        }
    }

    fn at(line: u64, subject: Option<&str>) -> Diagnostic {
        let mut d = Diagnostic::whole_input(
            RuleId::ToolArgsUndeclaredTool,
            Severity::Warning,
            Arc::from("f"),
            format!("line {line}"),
        );
        d.line = Some(line);
        d.subject = subject.map(str::to_owned);
        d
    }

    #[test]
    fn repeats_of_a_subject_are_told_once_per_input_after_its_findings() {
        let seen = Seen::default();
        let mut grouping = Grouping::new(Box::new(seen.clone()));
        for d in [
            at(1, Some("a")),
            at(2, Some("a")),
            at(3, Some("b")),
            at(4, None),
            at(5, None),
            at(6, Some("a")),
        ] {
            grouping.diagnostic(&d).unwrap();
        }
        let file = FileSummary::checked(Arc::from("f"), Default::default(), None);
        grouping.end_file(&file).unwrap();
        // A new input starts its groups afresh.
        grouping.diagnostic(&at(7, Some("a"))).unwrap();
        grouping.finish(&Summary::default()).unwrap();
        let place = |line| Place {
            line: Some(line),
            event_index: None,
        };
        assert_eq!(
            *seen.0.lock().unwrap(),
            vec![
                "tool-args/undeclared-tool line 1".to_owned(),
                "tool-args/undeclared-tool line 3".to_owned(),
                "tool-args/undeclared-tool line 4".to_owned(),
                "tool-args/undeclared-tool line 5".to_owned(),
                format!(
                    "tool-args/undeclared-tool +2 {:?}",
                    vec![place(2), place(6)]
                ),
                "end f".to_owned(),
                "tool-args/undeclared-tool line 7".to_owned(),
            ]
        );
    }
}
