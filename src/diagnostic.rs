//! Diagnostics: what a rule found, where, and how bad it is. Plain serializable data.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::event::Location;
use crate::rules::RuleId;

/// How serious a finding is once the user's configuration has been applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding. A finding is never an `Err`: errors mean the tool could not do its job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub rule: RuleId,
    pub severity: Severity,
    pub path: Arc<str>,
    /// 1-based line, when the finding belongs to a line of the input.
    pub line: Option<u64>,
    /// Byte offset of that line.
    pub offset: Option<u64>,
    /// 0-based frame index, when the finding belongs to one frame.
    pub event_index: Option<u64>,
    /// The event's `type`, when it has one.
    pub event_type: Option<String>,
    /// A lowercase statement of the fact, pointing at the data.
    pub message: String,
    /// How to fix it, on its own line.
    pub help: Option<String>,
    /// JSON Pointer into the event, for schema findings.
    pub pointer: Option<String>,
    /// The schema keyword that failed, for schema findings.
    pub keyword: Option<String>,
    /// The offending event, abbreviated.
    pub excerpt: Option<String>,
    /// What the finding is about when one cause repeats it (the tool a call names, the field
    /// an event carries): findings of one rule with the same subject in one input are shown
    /// once, with the count of the others, unless `--no-group`. None: never grouped.
    pub subject: Option<String>,
}

impl Diagnostic {
    /// A finding about the input as a whole (no line, no event).
    pub fn whole_input(rule: RuleId, severity: Severity, path: Arc<str>, message: String) -> Self {
        Diagnostic {
            rule,
            severity,
            path,
            line: None,
            offset: None,
            event_index: None,
            event_type: None,
            message,
            help: None,
            pointer: None,
            keyword: None,
            excerpt: None,
            subject: None,
        }
    }

    /// A finding about one frame of the input.
    pub fn at(rule: RuleId, severity: Severity, loc: &Location, message: String) -> Self {
        Diagnostic {
            line: Some(loc.line),
            offset: Some(loc.offset),
            event_index: Some(loc.index),
            ..Diagnostic::whole_input(rule, severity, loc.path.clone(), message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_event_type(mut self, ty: Option<&str>) -> Self {
        self.event_type = ty.map(str::to_owned);
        self
    }

    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    pub fn with_excerpt(mut self, excerpt: Option<String>) -> Self {
        self.excerpt = excerpt;
        self
    }

    /// The order diagnostics are reported in: position, then rule.
    pub fn sort_key(&self) -> (u64, u64, RuleId) {
        (
            self.event_index.unwrap_or(u64::MAX),
            self.line.unwrap_or(u64::MAX),
            self.rule,
        )
    }
}

/// Shortens text for display: at most `max` characters, cut on a character boundary, with an
/// ellipsis and the count of what was left out.
pub fn abbreviate(text: &str, max: usize) -> String {
    let text = text.trim_end_matches(['\r', '\n']);
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let rest = text.len() - cut;
            format!("{}… ({rest} more bytes)", &text[..cut])
        }
    }
}

/// Shortens a value's JSON for display, like [`abbreviate`], without writing out more than a
/// bounded amount of a large value: past 1 MiB the count of what was left out is a floor.
pub fn abbreviate_value(value: &serde_json::Value, max: usize) -> String {
    const COUNTED: usize = 1 << 20;
    struct Bounded {
        kept: Vec<u8>,
        keep: usize,
        total: usize,
    }
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.keep.saturating_sub(self.kept.len());
            self.kept.extend_from_slice(&buf[..buf.len().min(room)]);
            self.total += buf.len();
            if self.total > COUNTED {
                return Err(std::io::Error::other("enough"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Characters are at most four bytes, so this keeps enough for `max` of them.
    let mut out = Bounded {
        kept: Vec::new(),
        keep: max.saturating_mul(4).saturating_add(4),
        total: 0,
    };
    let complete = serde_json::to_writer(&mut out, value).is_ok();
    let text = String::from_utf8_lossy(&out.kept);
    let Some((cut, _)) = text.char_indices().nth(max) else {
        return text.into_owned();
    };
    let rest = out.total - cut;
    if complete {
        format!("{}… ({rest} more bytes)", &text[..cut])
    } else {
        format!("{}… (over {rest} more bytes)", &text[..cut])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviate_cuts_on_char_boundary() {
        assert_eq!(abbreviate("héllo", 10), "héllo");
        assert_eq!(abbreviate("héllo wörld", 3), "hél… (9 more bytes)");
        let value = serde_json::json!({"k": "héllo wörld"});
        assert_eq!(abbreviate_value(&value, 8), "{\"k\":\"hé… (12 more bytes)");
        assert_eq!(abbreviate_value(&value, 80), value.to_string());
        let big = serde_json::Value::String("x".repeat(3 << 20));
        let shown = abbreviate_value(&big, 2);
        assert!(shown.starts_with("\"x… (over "), "{shown}");
        assert_eq!(abbreviate("line\r\n", 10), "line");
    }
}
