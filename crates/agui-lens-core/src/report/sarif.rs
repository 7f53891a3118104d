//! SARIF 2.1.0, for code-scanning dashboards: every rule described in the tool section,
//! every diagnostic a result with its file and line.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::group::Repeated;
use super::{FileSummary, Reporter, Summary};
use crate::check::catalog::{Level, RuleId};
use crate::check::diagnostic::Diagnostic;

pub struct Sarif {
    out: Box<dyn Write>,
    results: Vec<Value>,
    /// What the tool says about its own run: inputs it could not read (errors), inputs it
    /// skipped (notes).
    notifications: Vec<Value>,
    /// Whether every input could be read.
    successful: bool,
}

impl Sarif {
    pub fn new(out: Box<dyn Write>) -> Self {
        Sarif {
            out,
            results: Vec::new(),
            notifications: Vec::new(),
            successful: true,
        }
    }
}

fn level(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Note => "note",
        Level::Allow => "none",
    }
}

fn rules() -> Vec<Value> {
    RuleId::ALL
        .iter()
        .map(|id| {
            let rule = id.rule();
            json!({
                "id": rule.name,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.why},
                "help": {"text": format!("{}\n\nExample:\n{}", rule.why, rule.example)},
                "defaultConfiguration": {"level": level(rule.default)},
                "properties": {"tags": [rule.family()]},
            })
        })
        .collect()
}

impl Reporter for Sarif {
    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        let mut region = serde_json::Map::new();
        if let Some(line) = d.line {
            region.insert("startLine".into(), json!(line));
        }
        let mut location = json!({
            "physicalLocation": {"artifactLocation": {"uri": uri(&d.path)}}
        });
        if !region.is_empty() {
            location["physicalLocation"]["region"] = Value::Object(region);
        }
        let mut properties = serde_json::Map::new();
        if let Some(index) = d.event_index {
            properties.insert("eventIndex".into(), json!(index));
        }
        if let Some(ty) = &d.event_type {
            properties.insert("eventType".into(), json!(ty));
        }
        if let Some(pointer) = &d.pointer {
            properties.insert("pointer".into(), json!(pointer));
        }
        if let Some(subject) = &d.subject {
            properties.insert("subject".into(), json!(subject));
        }
        self.results.push(json!({
            "ruleId": d.rule.name(),
            "ruleIndex": RuleId::ALL.iter().position(|id| *id == d.rule),
            "level": d.severity.as_str(),
            "message": {"text": message},
            "locations": [location],
            "properties": properties,
        }));
        Ok(())
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        let first = self.results.iter_mut().rev().find(|r| {
            r["ruleId"] == group.rule.name()
                && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    == uri(&group.path)
                && r["properties"]["subject"] == group.subject.as_str()
        });
        if let Some(first) = first {
            let related: Vec<Value> = group
                .places
                .iter()
                .enumerate()
                .map(|(i, place)| {
                    let mut location = json!({
                        "id": i + 1,
                        "physicalLocation": {"artifactLocation": {"uri": uri(&group.path)}},
                    });
                    if let Some(line) = place.line {
                        location["physicalLocation"]["region"] = json!({"startLine": line});
                    }
                    location
                })
                .collect();
            first["properties"]["repeats"] = json!(group.count);
            first["relatedLocations"] = Value::Array(related);
            if let Some(text) = first["message"]["text"].as_str() {
                first["message"]["text"] = json!(format!(
                    "{text}\n(and {} more like it; --no-group shows each)",
                    group.count
                ));
            }
        }
        Ok(())
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        let (level, text) = match (file.failure_text(), &file.skipped) {
            (Some(failure), _) => {
                self.successful = false;
                ("error", failure)
            }
            (None, Some(skipped)) => (
                "note",
                format!("skipped {}: not a capture ({skipped})", file.path),
            ),
            (None, None) => return Ok(()),
        };
        self.notifications.push(json!({
            "level": level,
            "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(&file.path)}}}],
        }));
        Ok(())
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        // A dashboard that reads only results would show an unreadable input as a clean run:
        // the invocation says the run did not succeed, and why.
        let invocation = json!({
            "executionSuccessful": self.successful,
            "toolExecutionNotifications": self.notifications,
        });
        let document = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "agui-lens",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules(),
                }},
                "invocations": [invocation],
                "results": self.results,
            }],
        });
        serde_json::to_writer_pretty(&mut self.out, &document).map_err(io::Error::other)?;
        writeln!(self.out)?;
        self.out.flush()
    }
}

/// A relative path as a URI reference (forward slashes, spaces escaped).
fn uri(path: &str) -> String {
    path.replace('\\', "/")
        .replace('%', "%25")
        .replace(' ', "%20")
}
