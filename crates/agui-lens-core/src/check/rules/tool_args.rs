//! Tool-argument rules: the concatenated TOOL_CALL_ARGS deltas of a call are JSON, and match
//! the `parameters` schema of the tool the run's input declared under that name.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::EventType;
use crate::protocol::ids::FastBuild;
use crate::text::abbreviate;

/// A tool's `parameters` schema, compiled (or why it does not compile).
type Compiled = Arc<Result<Validator, String>>;

/// How many compiled schemas are kept across runs; past it, the store starts over.
const COMPILED_KEPT: usize = 256;

/// How many versions of one tool's declaration are remembered, and for how many names.
const RECENT_VERSIONS: usize = 4;
const RECENT_NAMES: usize = 256;

/// A tool the run's input declared, with its schema compiled on first use.
struct Tool {
    parameters: Option<Value>,
    compiled: OnceLock<Compiled>,
}

struct OpenCall {
    name: String,
    args: String,
    /// The arguments outgrew the cap and are no longer kept.
    overflow: bool,
}

pub struct ToolArgs {
    max_args: usize,
    /// `None` when the run's input declared no tools.
    tools: Option<HashMap<String, Arc<Tool>>>,
    /// Tools declared lately, a few versions of each name: a client sends the same tools with
    /// every run (or alternates between a few sets), so a declaration is compared with these
    /// rather than copied again, and keeps its compiled schema.
    recent: HashMap<String, Vec<Arc<Tool>>>,
    open: HashMap<String, OpenCall, FastBuild>,
    /// Compiled schemas by their JSON text: a client sends the same tools with every run, so
    /// each schema is compiled once per stream rather than once per run that calls it.
    compiled: HashMap<String, Compiled>,
}

impl ToolArgs {
    pub fn new(max_args: usize) -> Self {
        ToolArgs {
            max_args,
            tools: None,
            recent: HashMap::new(),
            open: HashMap::default(),
            compiled: HashMap::new(),
        }
    }

    /// A run started: its input declares the tools.
    pub fn new_run(&mut self, ev: &Ev<'_>) {
        self.open.clear();
        self.declare_tools(ev);
    }

    /// Takes the tools a RUN_STARTED declares (`input.tools`).
    pub fn declare_tools(&mut self, ev: &Ev<'_>) {
        let declared = ev
            .get("input")
            .and_then(|i| i.get("tools"))
            .and_then(Value::as_array);
        let recent = &mut self.recent;
        self.tools = declared.map(|tools| {
            tools
                .iter()
                .filter_map(|tool| {
                    let name = tool.get("name")?.as_str()?;
                    let parameters = tool.get("parameters").filter(|p| !p.is_null());
                    Some((name.to_owned(), remembered(recent, name, parameters)))
                })
                .collect()
        });
    }

    pub fn close_all(&mut self) {
        self.open.clear();
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        if !(out.wants(RuleId::ToolArgsInvalidJson)
            || out.wants(RuleId::ToolArgsSchemaViolation)
            || out.wants(RuleId::ToolArgsUndeclaredTool))
        {
            return;
        }
        match ev.ty {
            EventType::ToolCallStart => {
                let (Some(id), Some(name)) = (ev.str("toolCallId"), ev.str("toolCallName")) else {
                    return;
                };
                if let Some(tools) = &self.tools {
                    if !tools.contains_key(name) {
                        out.report_about(
                            RuleId::ToolArgsUndeclaredTool,
                            ev.loc,
                            name,
                            format!("tool call \"{id}\" calls \"{name}\", which the run's input.tools does not declare"),
                            "declared here are the tools the client can execute; check the name (backend tools the agent runs itself are fine)",
                        );
                    }
                }
                self.open.entry(id.to_owned()).or_insert(OpenCall {
                    name: name.to_owned(),
                    args: String::new(),
                    overflow: false,
                });
            }
            EventType::ToolCallArgs => {
                let (Some(id), Some(delta)) = (ev.str("toolCallId"), ev.str("delta")) else {
                    return;
                };
                if let Some(call) = self.open.get_mut(id) {
                    if call.args.len() + delta.len() > self.max_args {
                        call.overflow = true;
                        call.args = String::new();
                    } else if !call.overflow {
                        call.args.push_str(delta);
                    }
                }
            }
            EventType::ToolCallEnd => {
                let Some(id) = ev.str("toolCallId") else {
                    return;
                };
                if let Some(call) = self.open.remove(id) {
                    if !call.overflow {
                        self.check(id, &call, ev, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn check(&mut self, id: &str, call: &OpenCall, ev: &Ev<'_>, out: &mut Out<'_>) {
        let args: Value = match serde_json::from_str(&call.args) {
            Ok(args) => args,
            Err(err) => {
                let message = if call.args.trim().is_empty() {
                    format!(
                        "tool call \"{id}\" ({}) ends with no arguments: an empty string is not JSON",
                        call.name
                    )
                } else {
                    let what = err.to_string();
                    let what = what
                        .rsplit_once(" at line ")
                        .map_or(what.as_str(), |(w, _)| w)
                        .to_owned();
                    format!(
                        "the arguments of tool call \"{id}\" ({}) are not valid JSON: {what} at column {}: {}",
                        call.name,
                        err.column(),
                        abbreviate(&call.args, 80)
                    )
                };
                out.report(
                    RuleId::ToolArgsInvalidJson,
                    ev.loc,
                    message,
                    "stream the arguments as one JSON document across the ARGS deltas (\"{}\" for none)",
                );
                return;
            }
        };
        if !out.wants(RuleId::ToolArgsSchemaViolation) {
            return;
        }
        let Some(tool) = self.tools.as_ref().and_then(|t| t.get(&call.name)).cloned() else {
            return;
        };
        let Some(parameters) = &tool.parameters else {
            return;
        };
        let store = &mut self.compiled;
        let compiled = tool.compiled.get_or_init(|| {
            let text = parameters.to_string();
            if let Some(compiled) = store.get(&text) {
                return Arc::clone(compiled);
            }
            if store.len() >= COMPILED_KEPT {
                store.clear();
            }
            let compiled = Arc::new(crate::check::schema::compile_inline(parameters));
            store.insert(text, Arc::clone(&compiled));
            compiled
        });
        let Ok(validator) = compiled.as_ref() else {
            // A tool schema that does not compile (or reaches outside itself) checks nothing.
            return;
        };
        for error in validator.iter_errors(&args).take(8) {
            let at = error.instance_path().as_str();
            let place = if at.is_empty() {
                "the arguments".to_owned()
            } else {
                at.to_owned()
            };
            out.report(
                RuleId::ToolArgsSchemaViolation,
                ev.loc,
                format!(
                    "tool call \"{id}\" ({}): {place}: {} (keyword `{}`)",
                    call.name,
                    error,
                    error.kind().keyword()
                ),
                "match the tool's parameters schema declared in RUN_STARTED.input.tools",
            );
        }
    }
}

/// The declaration of tool `name` with these parameters: one remembered from an earlier run
/// if it is equal, else a new one, remembered.
fn remembered(
    recent: &mut HashMap<String, Vec<Arc<Tool>>>,
    name: &str,
    parameters: Option<&Value>,
) -> Arc<Tool> {
    if let Some(versions) = recent.get(name) {
        if let Some(found) = versions
            .iter()
            .find(|t| t.parameters.as_ref() == parameters)
        {
            return Arc::clone(found);
        }
    } else if recent.len() >= RECENT_NAMES {
        recent.clear();
    }
    let tool = Arc::new(Tool {
        parameters: parameters.cloned(),
        compiled: OnceLock::new(),
    });
    let versions = recent.entry(name.to_owned()).or_default();
    if versions.len() >= RECENT_VERSIONS {
        versions.remove(0);
    }
    versions.push(Arc::clone(&tool));
    tool
}
