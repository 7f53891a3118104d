//! Turning validator errors into findings a person can act on: which field, what was there,
//! what the schema wanted, and whether it is really a null standing for "absent".

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use super::SchemaSet;
use super::walk::{Step, follow};
use crate::text::abbreviate_value;

/// What a schema check found in one event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchemaFinding {
    /// The event breaks its schema.
    Violation {
        pointer: String,
        keyword: String,
        message: String,
        help: Option<String>,
    },
    /// An optional field is present with `null`.
    NullForOptional {
        pointer: String,
        help: Option<String>,
    },
    /// A field the schema does not define.
    UnknownField {
        pointer: String,
        field: String,
        suggestion: Option<String>,
    },
}

impl SchemaFinding {
    pub fn pointer(&self) -> &str {
        match self {
            SchemaFinding::Violation { pointer, .. }
            | SchemaFinding::NullForOptional { pointer, .. }
            | SchemaFinding::UnknownField { pointer, .. } => pointer,
        }
    }
}

pub(super) fn classify(
    set: &SchemaSet,
    root: &str,
    instance: &Value,
    error: &ValidationError<'_>,
    prefix: &str,
) -> SchemaFinding {
    let at = error.instance_path().as_str().to_owned();
    let steps = follow(set, root, error.evaluation_path().as_str());
    // A missing field's help sits on the schema of the field itself, which the error's path
    // stops short of: look there first.
    let missing_field_help = match error.kind() {
        ValidationErrorKind::Required { property } => steps.iter().rev().find_map(|step| {
            let name = property.as_str()?;
            let field = step.node.get("properties")?.get(name)?;
            field.get("x-help").and_then(Value::as_str)
        }),
        _ => None,
    };
    let help = missing_field_help
        .or_else(|| {
            steps
                .iter()
                .rev()
                .find_map(|step| step.node.get("x-help").and_then(Value::as_str))
        })
        .map(str::to_owned);
    let pointer = format!("{prefix}{at}");
    if error.instance().as_ref().is_null() && is_optional_member(instance, &at, &steps) {
        return SchemaFinding::NullForOptional { pointer, help };
    }
    let (pointer, message) = describe(error, &pointer);
    SchemaFinding::Violation {
        pointer,
        keyword: error.kind().keyword().to_owned(),
        message,
        help,
    }
}

/// Whether the value at `at` is a member of an object whose schema does not require it.
fn is_optional_member(instance: &Value, at: &str, steps: &[Step<'_>]) -> bool {
    let Some((parent, key)) = at.rsplit_once('/') else {
        return false;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    if !instance.pointer(parent).is_some_and(Value::is_object) {
        return false;
    }
    // The step into `properties` then `key` marks the object schema that declares the member.
    let declared = steps
        .windows(2)
        .rposition(|pair| pair[0].segment == "properties" && pair[1].segment == key);
    let Some(i) = declared else {
        return false;
    };
    let Some(object_schema) = i.checked_sub(1).map(|j| steps[j].node) else {
        return false;
    };
    let required = object_schema.get("required").and_then(Value::as_array);
    !required.is_some_and(|names| names.iter().any(|n| n.as_str() == Some(key.as_str())))
}

/// A message pointing at the data, and the pointer it is about.
fn describe(error: &ValidationError<'_>, pointer: &str) -> (String, String) {
    let value = error.instance();
    let shown = show(value.as_ref());
    let place = if pointer.is_empty() {
        "the event".to_owned()
    } else {
        pointer.to_owned()
    };
    let message = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let field = format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"));
            let within = if pointer.is_empty() {
                String::new()
            } else {
                format!(" in {pointer}")
            };
            return (field, format!("missing required field \"{name}\"{within}"));
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("{place} is {shown}, expected {}", with_article(&expected))
        }
        ValidationErrorKind::Enum { options } => {
            let options = options
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            format!("{place} is {shown}, expected one of {options}")
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{place} is {shown}, expected {expected_value}")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{place} is {shown}, which does not match the pattern {pattern}")
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{place} is {shown}, below the minimum {limit}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{place} is {shown}, above the maximum {limit}")
        }
        ValidationErrorKind::MinItems { limit } => {
            let n = value.as_array().map_or(0, Vec::len);
            format!("{place} has {n} items, expected at least {limit}")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!("{place} is {shown}, shorter than {limit} characters")
        }
        ValidationErrorKind::Not { .. } if value.is_null() => {
            format!("{place} is null, which is not allowed here")
        }
        ValidationErrorKind::FalseSchema => format!("{place} is not allowed here"),
        _ => format!("{place}: {error}"),
    };
    (pointer.to_owned(), message)
}

fn with_article(kind: &str) -> String {
    let first = kind.split(" or ").next().unwrap_or(kind);
    let article = if first.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

/// A value as a short literal: `42`, `"bot"`, `null`, `an object`.
fn show(value: &Value) -> String {
    match value {
        Value::Object(_) => "an object".into(),
        Value::Array(items) if items.is_empty() => "an empty array".into(),
        Value::Array(_) => "an array".into(),
        other => abbreviate_value(other, 60),
    }
}

pub(super) fn unknown_fields(
    set: &SchemaSet,
    root: &str,
    error: &ValidationError<'_>,
    prefix: &str,
    out: &mut Vec<SchemaFinding>,
) {
    let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind() else {
        return;
    };
    let steps = follow(set, root, error.evaluation_path().as_str());
    // The last step found is the object schema (`additionalProperties` exists only in the
    // strict variant, so the walk over the published documents stops right before it).
    let known: Vec<&str> = steps
        .last()
        .and_then(|step| step.node.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let at = error.instance_path().as_str();
    for field in unexpected {
        out.push(SchemaFinding::UnknownField {
            pointer: format!(
                "{prefix}{at}/{}",
                field.replace('~', "~0").replace('/', "~1")
            ),
            field: field.clone(),
            suggestion: suggest(field, &known),
        });
    }
}

/// The defined field an unknown one most likely meant: its camelCase form, or the same name
/// in other case or with separators.
pub fn suggest(field: &str, known: &[&str]) -> Option<String> {
    let camel = to_camel(field);
    if camel != field && known.contains(&camel.as_str()) {
        return Some(camel);
    }
    let squash = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let wanted = squash(field);
    known
        .iter()
        .find(|k| squash(k) == wanted && **k != field)
        .map(|k| (*k).to_owned())
}

fn to_camel(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.chars() {
        if c == '_' || c == '-' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let known = ["messageId", "toolCallId", "delta"];
        assert_eq!(suggest("message_id", &known), Some("messageId".into()));
        assert_eq!(suggest("messageID", &known), Some("messageId".into()));
        assert_eq!(suggest("tool-call-id", &known), Some("toolCallId".into()));
        assert_eq!(suggest("colour", &known), None);
        assert_eq!(suggest("delta", &known), None);
    }
}
