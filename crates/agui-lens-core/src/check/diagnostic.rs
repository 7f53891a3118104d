//! Diagnostics: what a rule found, where, and how bad it is. Plain serializable data.

use std::sync::Arc;

use crate::check::catalog::RuleId;
pub use crate::check::catalog::Severity;
use crate::protocol::event::Location;

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
