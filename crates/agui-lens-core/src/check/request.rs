//! Requests a client sent (a browser capture's entries): held to the RunAgentInput schema of
//! the version they declare.

use std::sync::Arc;

use serde_json::Value;

use crate::check::catalog::RuleId;
use crate::check::diagnostic::{Diagnostic, Severity};
use crate::check::schema::{SchemaFinding, SchemaSet};
use crate::protocol::version::{Version, judged_by};

/// What breaks a request's RunAgentInput: one `request/input-schema` finding per place (a
/// field the schema does not define is not one: agents ignore it). `asked` is `--protocol`.
pub fn input_findings(
    schemas: &SchemaSet,
    input: &Value,
    asked: Option<Version>,
    path: &Arc<str>,
) -> Vec<Diagnostic> {
    let declared = input.get("protocolVersion").and_then(Value::as_str);
    let version = judged_by(declared, asked);
    let findings = match schemas.for_version(version).validate_input(input) {
        Ok(findings) => findings,
        Err(err) => {
            let message = format!("the request's RunAgentInput could not be checked: {err:#}");
            return vec![whole(path, message)];
        }
    };
    let shown = |pointer: &str| {
        if pointer.is_empty() {
            "the input".to_owned()
        } else {
            pointer.to_owned()
        }
    };
    findings
        .into_iter()
        .filter_map(|finding| match finding {
            SchemaFinding::Violation {
                pointer,
                message,
                help,
                ..
            } => {
                let d = whole(
                    path,
                    format!(
                        "the request's RunAgentInput breaks the protocol {version} schema at {}: {message}",
                        shown(&pointer)
                    ),
                );
                Some(match help {
                    Some(help) => d.with_help(help),
                    None => d,
                })
            }
            SchemaFinding::NullForOptional { pointer, .. } => Some(
                whole(
                    path,
                    format!(
                        "the request's RunAgentInput has null for the optional {}",
                        shown(&pointer)
                    ),
                )
                .with_help("leave an optional field out rather than sending null"),
            ),
            SchemaFinding::UnknownField { .. } => None,
        })
        .collect()
}

fn whole(path: &Arc<str>, message: String) -> Diagnostic {
    let severity = RuleId::RequestInputSchema
        .rule()
        .default
        .severity()
        .unwrap_or(Severity::Error);
    Diagnostic::whole_input(RuleId::RequestInputSchema, severity, path.clone(), message)
}
