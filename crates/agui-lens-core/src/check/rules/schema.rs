//! Schema rules: does each event match the JSON Schema of its type (AG-UI 1.0).

use crate::check::catalog::{Levels, RuleId};
use crate::check::diagnostic::Diagnostic;
use crate::check::parse::{Parsed, finding, kind_name};
use crate::check::schema::{SchemaFinding, SchemaSet};
use crate::protocol::event::{Event, EventType};
use crate::protocol::version::Version;

/// Checks one parsed event against its schema, unless the parser read it on the fast path of
/// [`crate::read::plain`] and these are the newest embedded schemas, which that path stands
/// in for (they would find nothing).
pub fn check_parsed(
    parsed: &Parsed,
    schemas: &SchemaSet,
    levels: &Levels,
    out: &mut Vec<Diagnostic>,
) {
    let Some(event) = &parsed.event else {
        return;
    };
    if parsed.plain && schemas.is_stock() && schemas.version() == Version::NEWEST {
        return;
    }
    check(event, schemas, levels, out);
}

/// Checks one event against its schema. Stateless, so events can be checked in parallel.
pub fn check(event: &Event, schemas: &SchemaSet, levels: &Levels, out: &mut Vec<Diagnostic>) {
    let loc = &event.loc;
    let ty = match event.value.get("type") {
        None => {
            out.push(
                finding(
                    RuleId::SchemaMissingType,
                    loc,
                    "the event has no `type` field".into(),
                )
                .with_help("every AG-UI event names its type, e.g. \"type\": \"RUN_STARTED\""),
            );
            return;
        }
        Some(serde_json::Value::String(name)) => name,
        Some(other) => {
            out.push(
                finding(
                    RuleId::SchemaMissingType,
                    loc,
                    format!("`type` is a {}, not a string", kind_name(other)),
                )
                .with_help(
                    "every AG-UI event names its type as a string, e.g. \"type\": \"RUN_STARTED\"",
                ),
            );
            return;
        }
    };
    let Some(kind) = event.kind else {
        let mut diagnostic = finding(
            RuleId::SchemaUnknownEventType,
            loc,
            format!("unknown event type \"{ty}\""),
        )
        .with_event_type(Some(ty))
        .with_subject(ty);
        diagnostic.help = Some(match closest_type(ty) {
            Some(known) => format!("did you mean \"{known}\"?"),
            None => "application events belong in a CUSTOM event: {\"type\": \"CUSTOM\", \"name\": …, \"value\": …}".into(),
        });
        out.push(diagnostic);
        return;
    };
    if let Some(replacement) = kind.replaced_by() {
        out.push(
            finding(
                RuleId::SchemaDeprecatedEvent,
                loc,
                format!(
                    "{kind} was removed in AG-UI 1.0, and the official 1.0 client fails the \
                     run at it; a warning because the run declares no version, as a peer from \
                     before 1.0 would not (declared, or under --protocol 1.0 or later: \
                     version/removed-event, an error)"
                ),
            )
            .with_help(format!("send {replacement} instead"))
            .with_subject(kind.as_str()),
        );
    }
    let wanted = [
        RuleId::SchemaViolation,
        RuleId::SchemaNullForOptional,
        RuleId::SchemaUnknownField,
    ];
    if !wanted.iter().any(|id| levels.enabled(*id)) {
        return;
    }
    let mut findings = schemas.validate_event(kind, &event.value);
    if let (Some(patch), Some(field)) = (&event.patch, kind.patch_field()) {
        // A large patch's operations were left out of the value: each is checked on its own,
        // against the schema the event's holds them to.
        patch.each(|index, op| {
            findings.extend(schemas.validate_patch_op(&op, &format!("/{field}/{index}")));
            true
        });
    }
    if kind == EventType::Custom {
        let name = event.str_field("name").unwrap_or_default();
        if let (Some(value), true) = (event.field("value"), schemas.has_custom(name)) {
            findings.extend(schemas.validate_custom(name, value).unwrap_or_default());
        }
    }
    for found in findings {
        out.push(to_diagnostic(found, kind, event));
    }
}

fn to_diagnostic(found: SchemaFinding, kind: EventType, event: &Event) -> Diagnostic {
    let loc = &event.loc;
    let schema_help = format!("see `agui-lens schema show {kind}`");
    match found {
        SchemaFinding::Violation {
            pointer,
            keyword,
            message,
            help,
        } => {
            let mut d = finding(RuleId::SchemaViolation, loc, message.clone())
                .with_help(help.unwrap_or(schema_help))
                .with_subject(format!("{kind} {message}"));
            d.pointer = Some(pointer);
            d.keyword = Some(keyword);
            d
        }
        SchemaFinding::NullForOptional { pointer, help } => {
            let mut d = finding(
                RuleId::SchemaNullForOptional,
                loc,
                format!("{pointer} is null; AG-UI 1.0 leaves an optional field out instead"),
            )
            .with_help(help.unwrap_or_else(|| {
                "omit the field; the 1.0 client rejects null for optional fields".into()
            }))
            .with_subject(format!("{kind} {}", any_index(&pointer)));
            d.pointer = Some(pointer);
            d
        }
        SchemaFinding::UnknownField {
            pointer,
            field,
            suggestion,
        } => {
            let parent = pointer.rsplit_once('/').map(|(p, _)| p).unwrap_or_default();
            let within = if parent.is_empty() {
                kind.to_string()
            } else {
                parent.to_string()
            };
            let mut d = finding(
                RuleId::SchemaUnknownField,
                loc,
                format!("unknown field \"{field}\" in {within}"),
            )
            .with_subject(format!("{kind} {}", any_index(&pointer)));
            d.help = Some(match suggestion {
                Some(name) => format!("did you mean \"{name}\"? AG-UI field names are camelCase"),
                None => schema_help,
            });
            d.pointer = Some(pointer);
            d
        }
    }
}

/// A JSON Pointer with array indexes made `*`: one field unknown in every element of a list
/// is one cause.
fn any_index(pointer: &str) -> String {
    pointer
        .split('/')
        .map(|segment| {
            if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The known type a misspelt one most likely meant.
fn closest_type(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase().replace(['-', ' ', '.'], "_");
    let mut best: Option<(usize, &'static str)> = None;
    for ty in EventType::ALL.iter().filter(|t| t.is_current()) {
        let known = ty.as_str();
        let distance = edit_distance(&upper, known);
        if distance <= 3 && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, known));
        }
    }
    best.map(|(_, known)| known)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_suggestions() {
        assert_eq!(
            closest_type("text_message_start"),
            Some("TEXT_MESSAGE_START")
        );
        assert_eq!(closest_type("RUN_STARTD"), Some("RUN_STARTED"));
        assert_eq!(closest_type("my_app_event"), None);
    }
}
