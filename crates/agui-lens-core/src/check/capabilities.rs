//! What an agent declares about itself (`AgentCapabilities`, docs/spec/1.1/basic/capabilities
//! in ag-ui-protocol/ag-ui), read from JSON, and the rule levels a declaration leaves: a rule of
//! the `capability` tier applies only to an agent that declares its capability. How the
//! declaration is obtained (a file, a URL) is the caller's business, as it is the spec's.

use std::fmt;

use serde_json::{Map, Value};

use super::catalog::Levels;

/// An agent's capabilities declaration: an object of optional groups, each an object of
/// optional fields. Members this version does not define are kept and never used (the spec
/// forbids rejecting a declaration for them); a known member of the wrong type is refused,
/// since a declaration that does not validate must not be used.
#[derive(Clone, Debug, PartialEq)]
pub struct Capabilities {
    groups: Map<String, Value>,
}

/// Why a declaration cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CapabilitiesError {
    /// The text is not JSON.
    NotJson(String),
    /// The JSON is not an object.
    NotAnObject(&'static str),
    /// A member the schema defines holds a value of another kind.
    Malformed {
        path: String,
        found: &'static str,
        expected: &'static str,
    },
}

impl fmt::Display for CapabilitiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapabilitiesError::NotJson(why) => write!(f, "not JSON: {why}"),
            CapabilitiesError::NotAnObject(found) => write!(
                f,
                "a capabilities declaration is a JSON object, and this is {found}"
            ),
            CapabilitiesError::Malformed {
                path,
                found,
                expected,
            } => write!(
                f,
                "{path} is {found} where the capabilities schema has {expected}"
            ),
        }
    }
}

impl std::error::Error for CapabilitiesError {}

/// What a member of the schema holds.
#[derive(Clone, Copy)]
enum Kind {
    Boolean,
    String,
    Number,
    Array,
    Object,
}

impl Kind {
    fn matches(self, value: &Value) -> bool {
        match self {
            Kind::Boolean => value.is_boolean(),
            Kind::String => value.is_string(),
            Kind::Number => value.is_number(),
            Kind::Array => value.is_array(),
            Kind::Object => value.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Boolean => "a boolean",
            Kind::String => "a string",
            Kind::Number => "a number",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// The groups of `AgentCapabilities` and the kind of each of their fields (1.1; the subagent
/// list is spelled `subagents`). The records inside arrays (a `Tool`, a `SubagentInfo`) are
/// not looked into: no rule reads them.
const SCHEMA: &[(&str, &[(&str, Kind)])] = {
    use Kind::*;
    &[
        (
            "identity",
            &[
                ("name", String),
                ("type", String),
                ("description", String),
                ("version", String),
                ("provider", String),
                ("documentationUrl", String),
                ("metadata", Object),
            ],
        ),
        (
            "transport",
            &[
                ("streaming", Boolean),
                ("websocket", Boolean),
                ("httpBinary", Boolean),
                ("pushNotifications", Boolean),
                ("resumable", Boolean),
            ],
        ),
        (
            "tools",
            &[
                ("supported", Boolean),
                ("items", Array),
                ("parallelCalls", Boolean),
                ("clientProvided", Boolean),
            ],
        ),
        (
            "output",
            &[("structuredOutput", Boolean), ("supportedMimeTypes", Array)],
        ),
        (
            "state",
            &[
                ("snapshots", Boolean),
                ("deltas", Boolean),
                ("memory", Boolean),
                ("persistentState", Boolean),
            ],
        ),
        (
            "multiAgent",
            &[
                ("supported", Boolean),
                ("delegation", Boolean),
                ("handoffs", Boolean),
                ("subagents", Array),
            ],
        ),
        (
            "reasoning",
            &[
                ("supported", Boolean),
                ("streaming", Boolean),
                ("encrypted", Boolean),
            ],
        ),
        ("multimodal", &[("input", Object), ("output", Object)]),
        (
            "execution",
            &[
                ("codeExecution", Boolean),
                ("sandboxed", Boolean),
                ("maxIterations", Number),
                ("maxExecutionTime", Number),
            ],
        ),
        (
            "humanInTheLoop",
            &[
                ("supported", Boolean),
                ("approvals", Boolean),
                ("interventions", Boolean),
                ("feedback", Boolean),
                ("interrupts", Boolean),
                ("approveWithEdits", Boolean),
            ],
        ),
        ("custom", &[]),
    ]
};

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Capabilities {
    /// Reads a declaration from its JSON text.
    pub fn parse(text: &str) -> Result<Capabilities, CapabilitiesError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| CapabilitiesError::NotJson(e.to_string()))?;
        Capabilities::from_value(value)
    }

    /// Takes a declaration already parsed, checking the members the schema defines.
    pub fn from_value(value: Value) -> Result<Capabilities, CapabilitiesError> {
        let Value::Object(groups) = value else {
            return Err(CapabilitiesError::NotAnObject(kind_of(&value)));
        };
        for (group, fields) in SCHEMA {
            let Some(members) = groups.get(*group) else {
                continue;
            };
            let Value::Object(members) = members else {
                return Err(CapabilitiesError::Malformed {
                    path: (*group).to_owned(),
                    found: kind_of(members),
                    expected: Kind::Object.name(),
                });
            };
            for (field, kind) in *fields {
                match members.get(*field) {
                    Some(value) if !kind.matches(value) => {
                        return Err(CapabilitiesError::Malformed {
                            path: format!("{group}.{field}"),
                            found: kind_of(value),
                            expected: kind.name(),
                        });
                    }
                    _ => {}
                }
            }
        }
        Ok(Capabilities { groups })
    }

    /// Whether the member at a dotted path (`transport.httpBinary`) is declared `true`. An
    /// omitted member is undeclared, and `false` declares the capability absent.
    pub fn declares(&self, path: &str) -> bool {
        let mut parts = path.split('.');
        let Some(first) = parts.next() else {
            return false;
        };
        let mut at = self.groups.get(first);
        for part in parts {
            at = at.and_then(|value| value.get(part));
        }
        at == Some(&Value::Bool(true))
    }
}

/// The levels a run is checked by once the agent's declaration is known: `levels` as they are,
/// except that a rule of the `capability` tier is left out unless the declaration declares
/// its capability. Without a declaration (none was given, or it could not be read) the
/// levels are unchanged: every capability rule applies, as it did before declarations.
pub fn levels_for(declaration: Option<&Capabilities>, levels: &Levels) -> Levels {
    let mut levels = levels.clone();
    if let Some(declaration) = declaration {
        levels.limit_to_declared(|path| declaration.declares(path));
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::catalog::{Level, Levels, RuleId};

    const DECLARED: &str = r#"{
        "identity": {"name": "weather", "metadata": {"team": null}},
        "transport": {"streaming": true, "httpBinary": true, "websocket": false},
        "reasoning": {"supported": false},
        "multiAgent": {"subagents": [{"name": "planner"}]},
        "execution": {"maxIterations": 12},
        "later": {"anything": "at all"},
        "custom": {"x": [1, 2]}
    }"#;

    #[test]
    fn declares_only_what_is_true() {
        let caps = Capabilities::parse(DECLARED).unwrap();
        assert!(caps.declares("transport.httpBinary"));
        assert!(caps.declares("transport.streaming"));
        assert!(
            !caps.declares("transport.websocket"),
            "false is no declaration"
        );
        assert!(
            !caps.declares("transport.resumable"),
            "omitted is undeclared"
        );
        assert!(!caps.declares("state.deltas"), "a group left out");
        assert!(!caps.declares("identity.name"), "only true declares");
        assert!(!caps.declares("later.anything"));
    }

    #[test]
    fn a_malformed_known_member_is_refused_and_an_unknown_one_is_not() {
        assert!(Capabilities::parse(r#"{"brandNew": {"x": 1}}"#).is_ok());
        assert!(Capabilities::parse(r#"{"transport": {"teleport": true}}"#).is_ok());
        let err = Capabilities::parse(r#"{"transport": {"httpBinary": "yes"}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "transport.httpBinary is a string where the capabilities schema has a boolean"
        );
        let err = Capabilities::parse(r#"{"reasoning": true}"#).unwrap_err();
        assert!(
            err.to_string().starts_with("reasoning is a boolean"),
            "{err}"
        );
        let err = Capabilities::parse(r#"{"identity": {"name": 7}}"#).unwrap_err();
        assert!(err.to_string().contains("identity.name"), "{err}");
        let err = Capabilities::parse(r#"{"multiAgent": {"subagents": {}}}"#).unwrap_err();
        assert!(err.to_string().contains("an array"), "{err}");
        assert!(Capabilities::parse("[]").is_err(), "not an object");
        assert!(Capabilities::parse("{").is_err(), "not JSON");
    }

    #[test]
    fn levels_for_a_declaration() {
        let mut base = Levels::default();
        base.set("transport/*", Level::Deny).unwrap();
        let none = levels_for(None, &base);
        assert_eq!(none.level(RuleId::TransportNotNegotiated), Level::Deny);
        let without = Capabilities::parse(r#"{"transport": {"streaming": true}}"#).unwrap();
        let levels = levels_for(Some(&without), &base);
        assert_eq!(levels.level(RuleId::TransportNotNegotiated), Level::Allow);
        assert_eq!(levels.level(RuleId::TransportHttpStatus), Level::Deny);
        let with = Capabilities::parse(DECLARED).unwrap();
        let levels = levels_for(Some(&with), &base);
        assert_eq!(levels.level(RuleId::TransportNotNegotiated), Level::Deny);
    }
}
