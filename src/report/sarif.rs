//! SARIF 2.1.0, for code-scanning dashboards: every rule described in the tool section,
//! every diagnostic a result with its file and line.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{Reporter, Summary};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{Level, RuleId};

pub struct Sarif {
    out: Box<dyn Write>,
    results: Vec<Value>,
}

impl Sarif {
    pub fn new(out: Box<dyn Write>) -> Self {
        Sarif {
            out,
            results: Vec::new(),
        }
    }
}

fn level(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn => "warning",
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
        self.results.push(json!({
            "ruleId": d.rule.name(),
            "ruleIndex": RuleId::ALL.iter().position(|id| *id == d.rule),
            "level": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
            "message": {"text": message},
            "locations": [location],
            "properties": properties,
        }));
        Ok(())
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        let document = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "agui-lens",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules(),
                }},
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
