//! SARIF 2.1.0, for code-scanning dashboards: every rule described in the tool section (with
//! its tier, and its spec page as `helpUri`), every diagnostic a result with its file and line.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::group::Repeated;
use super::{Containers, FileSummary, Place, Reporter, Summary};
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
    containers: Containers,
    /// The last result of each rule, path and subject, for the groups of repeats.
    last: super::group::LastOf,
}

impl Sarif {
    pub fn new(out: Box<dyn Write>) -> Self {
        Sarif {
            out,
            results: Vec::new(),
            notifications: Vec::new(),
            successful: true,
            containers: Containers::default(),
            last: Default::default(),
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

/// The result an input that could not be read gets (see [`Sarif::end_file`]): no rule of the
/// protocol's, but a dashboard that reads only results must show it.
const NOT_READ: &str = "agui-lens/input-not-read";

fn rules() -> Vec<Value> {
    let not_read = json!({
        "id": NOT_READ,
        "name": NOT_READ,
        "shortDescription": {"text": "an input could not be read whole (missing, unreadable, cut short, stopped, or a capture's call that brought no stream)"},
        "fullDescription": {"text": "Nothing in it was checked past the point where reading failed: the run is no pass, whatever else it found."},
        "help": {"text": "The message says why; `agui-lens check FILE` names it too."},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["input"]},
    });
    RuleId::ALL
        .iter()
        .map(|id| {
            let rule = id.rule();
            let mut properties = json!({"tags": [rule.family()], "tier": rule.tier.as_str()});
            if let Some(capability) = rule.capability {
                properties["capability"] = json!(capability);
            }
            json!({
                "id": rule.name,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.why},
                "help": {"text": format!("{}\n\nExample:\n{}", rule.why, rule.example)},
                // The spec page the rule's tier rests on: an absolute https URL.
                "helpUri": rule.spec,
                "defaultConfiguration": {"level": level(rule.default)},
                "properties": properties,
            })
        })
        .chain(std::iter::once(not_read))
        .collect()
}

/// A finding as a SARIF result. `partialFingerprints` carries the fingerprint baselines use,
/// so a dashboard tracks a finding across runs whatever line it moves to. A finding in a
/// stream read from inside a file (a HAR entry) is placed in that file, with the stream named
/// first in its message and in its fingerprint (two entries' findings are two results).
fn result(d: &Diagnostic, place: &Place<'_>) -> Value {
    {
        let mut message = match place.stream {
            Some(stream) => format!("{stream}: {}", d.message),
            None => d.message.clone(),
        };
        if let Some(text) = super::text_of(d) {
            message.push_str("\ntext: ");
            message.push_str(text);
        }
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        let mut location = json!({
            "physicalLocation": {"artifactLocation": {"uri": uri(place.file)}}
        });
        if let (Some(line), None) = (d.line, place.stream) {
            location["physicalLocation"]["region"] = json!({"startLine": line});
        }
        let mut fingerprint = super::baseline::fingerprint(d);
        let mut properties = serde_json::Map::new();
        if let Some(stream) = place.stream {
            fingerprint.push_str(place.entry);
            properties.insert("stream".into(), json!(stream));
            if let Some(line) = d.line {
                properties.insert("streamLine".into(), json!(line));
            }
        }
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
        json!({
            "ruleId": d.rule.name(),
            "ruleIndex": RuleId::ALL.iter().position(|id| *id == d.rule),
            "level": d.severity.as_str(),
            "message": {"text": message},
            "locations": [location],
            "partialFingerprints": {"agui-lens/v2": fingerprint},
            "properties": properties,
        })
    }
}

impl Reporter for Sarif {
    fn stream_within(&mut self, stream: &str, file: &str) -> io::Result<()> {
        self.containers.add(stream, file);
        Ok(())
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        self.last.note(d, self.results.len());
        self.results
            .push(result(d, &self.containers.place(&d.path)));
        Ok(())
    }

    fn held(&mut self, d: &Diagnostic, baseline: &str) -> io::Result<()> {
        self.last.note(d, self.results.len());
        let mut held = result(d, &self.containers.place(&d.path));
        held["suppressions"] = json!([{
            "kind": "external",
            "justification": format!("a known finding, recorded in the baseline {baseline}"),
        }]);
        self.results.push(held);
        Ok(())
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        let place = self.containers.place(&group.path);
        let first = self.last.of(group).and_then(|at| self.results.get_mut(at));
        if let Some(first) = first {
            let in_file = &place;
            let related: Vec<Value> = group
                .places
                .iter()
                .enumerate()
                .map(|(i, place)| {
                    let mut location = json!({
                        "id": i + 1,
                        "physicalLocation": {"artifactLocation": {"uri": uri(in_file.file)}},
                    });
                    if let (Some(line), None) = (place.line, in_file.stream) {
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
        let mut location = json!({"physicalLocation": {"artifactLocation": {"uri": uri(self.containers.place(&file.path).file)}}});
        if let Some(line) = file.line {
            location["physicalLocation"]["region"] = json!({"startLine": line});
        }
        for note in &file.notes {
            let location = location.clone();
            self.notifications.push(json!({
                "level": "note",
                "message": {"text": format!("{}: {note}", file.path)},
                "locations": [location],
            }));
        }
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
        if level == "error" {
            // A result too: a dashboard shows results, not notifications.
            let fingerprint = super::baseline::hash_of(&[NOT_READ, &file.path]);
            self.results.push(json!({
                "ruleId": NOT_READ,
                "ruleIndex": RuleId::ALL.len(),
                "level": "error",
                "message": {"text": text},
                "locations": [location.clone()],
                "partialFingerprints": {"agui-lens/v2": fingerprint},
            }));
        }
        self.notifications.push(json!({
            "level": level,
            "message": {"text": text},
            "locations": [location],
        }));
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        // Stopped by a signal, the run was cancelled (exit 130, 143), though every input it
        // read was read whole.
        if let Some(signal) = summary.stopped_by {
            self.successful = false;
            self.notifications.push(json!({
                "level": "error",
                "message": {"text": format!("stopped by {signal}: the run was cancelled")},
            }));
        }
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

/// A path as a URI reference: a relative path stays relative, an absolute one becomes a
/// `file://` URI, every byte but the unreserved ones and `/` percent-encoded (a `#` would
/// start a fragment, a `?` a query). A live input's URL is already one.
fn uri(path: &str) -> String {
    if path.starts_with("http://") || path.starts_with("https://") {
        return path.to_owned();
    }
    let path = path.replace('\\', "/");
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    let mut out = String::with_capacity(path.len() + 8);
    let mut rest = path.as_str();
    if drive {
        out.push_str("file:///");
        out.push_str(&path[..2]);
        rest = &path[2..];
    } else if path.starts_with('/') {
        out.push_str("file://");
    }
    for &byte in rest.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::uri;
    use crate::report::{Reporter, Summary};

    /// A run stopped by a signal after its last input was read whole is no successful run:
    /// its exit status is 130 or 143.
    #[test]
    fn a_stopped_run_is_unsuccessful() {
        let invocation = |summary: &Summary| {
            let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
            impl std::io::Write for Shared {
                fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                    self.0.lock().unwrap().extend_from_slice(buf);
                    Ok(buf.len())
                }
                fn flush(&mut self) -> std::io::Result<()> {
                    Ok(())
                }
            }
            let mut sarif = super::Sarif::new(Box::new(Shared(out.clone())));
            sarif.finish(summary).unwrap();
            let doc: serde_json::Value = serde_json::from_slice(&out.lock().unwrap()).unwrap();
            doc["runs"][0]["invocations"][0].clone()
        };
        let whole = Summary::default();
        assert_eq!(invocation(&whole)["executionSuccessful"], true);
        let stopped = Summary {
            stopped_by: Some("SIGTERM"),
            ..Summary::default()
        };
        let stopped = invocation(&stopped);
        assert_eq!(stopped["executionSuccessful"], false, "{stopped}");
        assert!(
            stopped.to_string().contains("stopped by SIGTERM"),
            "{stopped}"
        );
    }

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(uri("captures/run 1.jsonl"), "captures/run%201.jsonl");
        assert_eq!(
            uri("odd dir/a b#1%,x.jsonl"),
            "odd%20dir/a%20b%231%25%2Cx.jsonl"
        );
        assert_eq!(uri("/tmp/run?.sse"), "file:///tmp/run%3F.sse");
        assert_eq!(uri("C:\\runs\\a.jsonl"), "file:///C:/runs/a.jsonl");
        assert_eq!(uri("héllo.jsonl"), "h%C3%A9llo.jsonl");
        assert_eq!(
            uri("http://127.0.0.1:8000/agent"),
            "http://127.0.0.1:8000/agent"
        );
    }
}
