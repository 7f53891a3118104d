//! Tool-argument rules: the concatenated TOOL_CALL_ARGS deltas of a call are JSON, and match
//! the `parameters` schema of the tool the run's input declared under that name.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::{EventType, Location};
use crate::protocol::ids::{FastBuild, IdSet, declared_call_ids};
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

/// How many unanswered calls to undeclared tools one run remembers.
const PENDING_KEPT: usize = 1024;

/// How many calls one run remembers to hold its `pendingToolCallIds` to; past it, the list
/// is not judged.
const CALLS_KEPT: usize = 16 * 1024;

/// A call to a tool the run's input did not declare, not answered yet: the agent may run it
/// itself (a backend tool), and then its result follows before the run ends.
struct Unanswered {
    id: String,
    name: String,
    loc: Location,
}

struct OpenCall {
    name: String,
    args: String,
    /// The arguments are not judged: they outgrew the cap and are no longer kept, or they go
    /// on from a call an earlier run ended (1.0 and later), judged there, whose text is not
    /// kept.
    overflow: bool,
}

/// A call closed in a run whose version lets it be reopened (1.0 and later): its arguments are
/// judged when the run ends, as a reopening START appends to them.
struct EndedCall {
    call: OpenCall,
    /// Its (last) TOOL_CALL_END, and that event's text.
    loc: Location,
    excerpt: Option<String>,
}

/// The TOOL_CALL_END a call's arguments are judged at.
struct At<'a> {
    loc: &'a Location,
    excerpt: Option<String>,
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
    /// The run is held to 1.0 or later: a closed call may be reopened (its arguments are whole
    /// only at the run's end; calls closed meanwhile wait in `ended`), a success outcome may
    /// name the calls left pending, and a frontend tool's call is the application's to answer.
    from_1_0: bool,
    ended: HashMap<String, EndedCall, FastBuild>,
    /// The calls the run started, in order, and those a TOOL_CALL_RESULT answered: what a
    /// success outcome's `pendingToolCallIds` names (1.0 and later). `None` past
    /// [`CALLS_KEPT`].
    started: Option<Vec<String>>,
    answered: std::collections::HashSet<String, FastBuild>,
    /// The calls the run's last MESSAGES_SNAPSHOT holds: a producer may deliver a call in a
    /// snapshot rather than stream it (compaction does), and a success outcome may then name
    /// it pending.
    in_snapshot: IdSet,
    /// The calls a tool message of the run's last MESSAGES_SNAPSHOT answers: no pending calls,
    /// as those a TOOL_CALL_RESULT answered are not.
    answered_in_snapshot: IdSet,
    /// Calls of the stream to tools their run's input declares (frontend tools), by id, with
    /// the tool's name: the application answers them (in a later run's messages), never the
    /// agent (1.0 and later).
    frontend: HashMap<String, String, FastBuild>,
    /// Calls whose arguments were judged when their run ended (1.0 and later): one reopened in
    /// a later run goes on from text that run held.
    judged: std::collections::HashSet<String, FastBuild>,
    /// The frontend calls the current run made: no answer of the application's to them can
    /// be in its stream.
    frontend_now: std::collections::HashSet<String, FastBuild>,
    unanswered: Vec<Unanswered>,
    /// The RunAgentInput a live call sent, whose `tools` the client declared.
    sent: Option<Arc<Value>>,
    /// Compiled schemas by their JSON text: a client sends the same tools with every run, so
    /// each schema is compiled once per stream rather than once per run that calls it.
    compiled: HashMap<String, Compiled>,
    /// Arguments found not to be JSON, said when the run ends: a run that is cancelled or
    /// fails may close a call whose arguments it cut off, which the spec allows. Each finding
    /// holds its TOOL_CALL_END's type and text already.
    deferred: Vec<crate::check::diagnostic::Diagnostic>,
}

const INVALID_JSON_HELP: &str =
    "stream the arguments as one JSON document across the ARGS deltas (\"{}\" for none)";

impl ToolArgs {
    pub fn new(max_args: usize) -> Self {
        ToolArgs {
            max_args,
            tools: None,
            recent: HashMap::new(),
            open: HashMap::default(),
            from_1_0: true,
            ended: HashMap::default(),
            started: Some(Vec::new()),
            answered: Default::default(),
            in_snapshot: Default::default(),
            answered_in_snapshot: Default::default(),
            frontend: HashMap::default(),
            judged: Default::default(),
            frontend_now: Default::default(),
            unanswered: Vec::new(),
            sent: None,
            compiled: HashMap::new(),
            deferred: Vec::new(),
        }
    }

    /// The protocol version the run is held to: from 1.0 a closed call may be reopened, and
    /// further arguments append.
    pub fn set_version(&mut self, version: crate::protocol::version::Version) {
        self.from_1_0 = version >= crate::protocol::version::Version::V1_0;
    }

    /// Says the arguments found not to be JSON that wait for their run's end, having judged
    /// the calls that waited for it to be whole.
    pub fn say_deferred(&mut self, out: &mut Out<'_>) {
        self.judge_ended(out);
        out.found.append(&mut self.deferred);
    }

    /// Judges the arguments of the calls closed in the run, in the order they were closed: no
    /// START can reopen them now.
    fn judge_ended(&mut self, out: &mut Out<'_>) {
        if self.ended.is_empty() {
            return;
        }
        let mut ended: Vec<(String, EndedCall)> = self.ended.drain().collect();
        ended.sort_by_key(|(_, e)| e.loc.index);
        for (id, ended) in ended {
            if self.judged.len() < CALLS_KEPT {
                self.judged.insert(id.clone());
            }
            let from = out.found.len();
            let at = At {
                loc: &ended.loc,
                excerpt: ended.excerpt,
            };
            self.check(&id, &ended.call, &at, out);
            // Said at the run's end, about the TOOL_CALL_END.
            for d in &mut out.found[from..] {
                d.event_type = Some(EventType::ToolCallEnd.as_str().to_owned());
                d.excerpt.clone_from(&at.excerpt);
            }
        }
    }

    /// A run started: its input declares the tools.
    pub fn new_run(&mut self, ev: &Ev<'_>) {
        self.open.clear();
        self.ended.clear();
        self.started = Some(Vec::new());
        self.answered.clear();
        self.in_snapshot.clear();
        self.answered_in_snapshot.clear();
        self.frontend_now.clear();
        // A frontend call an earlier run left pending is still the application's to answer.
        self.unanswered.clear();
        self.declare_tools(ev);
    }

    /// Tools the client declared itself, for a live call: the `tools` of the RunAgentInput it
    /// sent. A RUN_STARTED.input that lists tools replaces them.
    pub fn with_sent_tools(mut self, input: Option<Arc<Value>>) -> Self {
        self.sent = input;
        self
    }

    /// Takes the tools a RUN_STARTED declares (`input.tools`).
    pub fn declare_tools(&mut self, ev: &Ev<'_>) {
        let declared = ev
            .get("input")
            .and_then(|i| i.get("tools"))
            .or_else(|| self.sent.as_deref()?.get("tools"))
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

    /// The run ended. A call to an undeclared tool that nobody answered is reported now: the
    /// client cannot execute a tool it did not declare, so a run that finishes without that
    /// call's result leaves it unanswered for good. A run that failed, or finished waiting on
    /// the client (an interrupt) or cancelled, says why already.
    pub fn end_run(&mut self, error: bool, ev: &Ev<'_>, out: &mut Out<'_>) {
        self.judge_ended(out);
        let unanswered = std::mem::take(&mut self.unanswered);
        let outcome = ev
            .get("outcome")
            .and_then(|o| o.get("type").or(Some(o)))
            .and_then(Value::as_str);
        if error || outcome == Some("cancelled") {
            self.deferred.clear();
        } else {
            self.say_deferred(out);
        }
        if error || matches!(outcome, Some(kind) if kind != "success") {
            return;
        }
        self.judge_pending(ev, out);
        for call in unanswered {
            out.report_about(
                RuleId::ToolArgsUndeclaredTool,
                &call.loc,
                &call.name,
                format!(
                    "tool call \"{}\" calls \"{}\", which the run's input.tools does not declare, and the run finished without its result",
                    call.id, call.name
                ),
                "the client can only execute the tools it declared, so nobody answers this call: check the name, or, when the agent runs the tool itself, send its TOOL_CALL_RESULT (or RUN_ERROR if it failed) before RUN_FINISHED",
            );
            // Said at the run's end, about the call's start.
            if let Some(d) = out
                .found
                .last_mut()
                .filter(|d| d.rule == RuleId::ToolArgsUndeclaredTool)
            {
                d.event_type = Some(EventType::ToolCallStart.as_str().to_owned());
            }
        }
    }

    /// Takes the calls a MESSAGES_SNAPSHOT holds (see [`Self::in_snapshot`]): each restates the
    /// thread, so the last one of the run holds every call the run delivered so.
    fn hold_snapshot_calls(&mut self, ev: &Ev<'_>) {
        self.in_snapshot.clear();
        self.answered_in_snapshot.clear();
        for message in ev
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = message.get("toolCallId").and_then(Value::as_str) {
                self.answered_in_snapshot.insert(id);
            }
            for id in declared_call_ids(message.get("toolCalls")) {
                self.in_snapshot.insert(id);
            }
        }
    }

    /// Holds a success outcome's `pendingToolCallIds` (1.0 and later), when it names any, to
    /// the calls the run started and did not answer.
    fn judge_pending(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let started = self.started.take();
        if !self.from_1_0 || !out.wants(RuleId::LifecyclePendingToolCalls) {
            return;
        }
        let Some(listed) = ev
            .get("outcome")
            .and_then(|o| o.get("pendingToolCallIds"))
            .and_then(Value::as_array)
            .filter(|ids| !ids.is_empty())
        else {
            return;
        };
        let Some(started) = started else {
            return;
        };
        let listed: Vec<&str> = listed.iter().filter_map(Value::as_str).collect();
        let named: std::collections::HashSet<&str, FastBuild> = listed.iter().copied().collect();
        let made: std::collections::HashSet<&str, FastBuild> =
            started.iter().map(String::as_str).collect();
        let is_answered =
            |id: &str| self.answered.contains(id) || self.answered_in_snapshot.contains(id);
        let pending: Vec<&str> = started
            .iter()
            .map(String::as_str)
            .filter(|id| !is_answered(id))
            .collect();
        let quoted = |ids: &[&str]| {
            ids.iter()
                .map(|id| format!("\"{id}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let left_out: Vec<&str> = pending
            .iter()
            .copied()
            .filter(|id| !named.contains(id))
            .collect();
        let answered: Vec<&str> = listed
            .iter()
            .copied()
            .filter(|id| is_answered(id))
            .collect();
        let unknown: Vec<&str> = listed
            .iter()
            .copied()
            .filter(|id| !made.contains(id) && !self.in_snapshot.contains(id))
            .collect();
        let mut wrong = Vec::new();
        if named.len() < listed.len() {
            let mut seen = std::collections::HashSet::<&str, FastBuild>::default();
            let twice: Vec<&str> = listed
                .iter()
                .copied()
                .filter(|id| !seen.insert(id))
                .collect();
            wrong.push(format!("it names {} more than once", quoted(&twice)));
        }
        if !left_out.is_empty() {
            wrong.push(format!(
                "it leaves out {}, started and not answered",
                quoted(&left_out)
            ));
        }
        if !answered.is_empty() {
            wrong.push(format!(
                "it names {}, which the run answered (a TOOL_CALL_RESULT, or a tool message of a MESSAGES_SNAPSHOT)",
                quoted(&answered)
            ));
        }
        if !unknown.is_empty() {
            wrong.push(format!(
                "it names {}, which the run never started",
                quoted(&unknown)
            ));
        }
        if wrong.is_empty() {
            return;
        }
        out.report(
            RuleId::LifecyclePendingToolCalls,
            ev.loc,
            format!(
                "the outcome's pendingToolCallIds is not the run's unanswered calls ({}): {}",
                if pending.is_empty() {
                    "none".to_owned()
                } else {
                    quoted(&pending)
                },
                wrong.join("; ")
            ),
            "list exactly the tool calls the run started and did not answer with \
             TOOL_CALL_RESULT, in the order they were made (or leave the list out)",
        );
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        if !(out.wants(RuleId::ToolArgsInvalidJson)
            || out.wants(RuleId::ToolArgsEmptyArguments)
            || out.wants(RuleId::ToolArgsSchemaViolation)
            || out.wants(RuleId::ToolArgsUndeclaredTool)
            || out.wants(RuleId::LifecyclePendingToolCalls)
            || out.wants(RuleId::ToolArgsFrontendAnswered))
        {
            return;
        }
        match ev.ty {
            EventType::ToolCallStart => {
                let Some(id) = ev.str("toolCallId") else {
                    return;
                };
                // A reopening START that leaves the name out (the schema rules report it) goes
                // on with the call it reopens, as its ARGS and END do.
                let Some(name) = ev.str("toolCallName") else {
                    if let Some(ended) = self.ended.remove(id) {
                        self.open.insert(id.to_owned(), ended.call);
                    }
                    return;
                };
                if let Some(tools) = &self.tools {
                    if tools.contains_key(name) && self.from_1_0 && self.frontend.len() < CALLS_KEPT
                    {
                        self.frontend.insert(id.to_owned(), name.to_owned());
                        self.frontend_now.insert(id.to_owned());
                    }
                    if !tools.contains_key(name)
                        && out.wants(RuleId::ToolArgsUndeclaredTool)
                        && self.unanswered.len() < PENDING_KEPT
                    {
                        self.unanswered.push(Unanswered {
                            id: id.to_owned(),
                            name: name.to_owned(),
                            loc: ev.loc.clone(),
                        });
                    }
                }
                // A reopened call (1.0 and later) goes on with the arguments it had.
                let reopened = self.ended.remove(id).map(|ended| ended.call);
                if reopened.is_none() && !self.open.contains_key(id) {
                    let full = self.started.as_ref().is_some_and(|s| s.len() >= CALLS_KEPT);
                    if full {
                        self.started = None;
                    } else if let Some(started) = &mut self.started {
                        started.push(id.to_owned());
                    }
                }
                // One an earlier run ended (and judged) goes on here with the rest of its text:
                // that rest alone is no call's arguments.
                let continued = reopened.is_none() && self.from_1_0 && self.judged.contains(id);
                self.open
                    .entry(id.to_owned())
                    .or_insert(reopened.unwrap_or(OpenCall {
                        name: name.to_owned(),
                        args: String::new(),
                        overflow: continued,
                    }));
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
            EventType::ToolCallResult => {
                if let Some(id) = ev.str("toolCallId") {
                    // Said once: a snapshot restating this answer is not said again.
                    self.frontend_now.remove(id);
                    if let Some(name) = self.frontend.get(id) {
                        out.report(
                            RuleId::ToolArgsFrontendAnswered,
                            ev.loc,
                            format!(
                                "TOOL_CALL_RESULT answers tool call \"{id}\" to \"{name}\", a frontend tool (the input of the run that called it declares it): the application answers it, not the agent"
                            ),
                            "finish the run with the call unanswered (its id in the outcome's pendingToolCallIds); the application answers in the next run's messages. A tool the agent runs itself is not declared in input.tools",
                        );
                    }
                    self.unanswered.retain(|call| call.id != id);
                    if self.started.is_some() && self.answered.len() < CALLS_KEPT {
                        self.answered.insert(id.to_owned());
                    }
                }
            }
            EventType::MessagesSnapshot => {
                if self.from_1_0
                    && self.started.is_some()
                    && out.wants(RuleId::LifecyclePendingToolCalls)
                {
                    self.hold_snapshot_calls(ev);
                }
                if self.unanswered.is_empty() && self.frontend_now.is_empty() {
                    return;
                }
                let answered = ev
                    .get("messages")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m.get("toolCallId").and_then(Value::as_str));
                for id in answered {
                    self.unanswered.retain(|call| call.id != id);
                    // In the run that made the call, no answer of the application's can be
                    // there yet: a tool message for it is one the agent made up.
                    if self.frontend_now.remove(id)
                        && let Some(name) = self.frontend.get(id)
                    {
                        out.report(
                            RuleId::ToolArgsFrontendAnswered,
                            ev.loc,
                            format!(
                                "MESSAGES_SNAPSHOT holds a tool message answering tool call \"{id}\" to \"{name}\", a frontend tool this run called: the application answers it (in the next run's messages), not the agent"
                            ),
                            "leave the call unanswered in the snapshot; the application's answer comes in the next run's input",
                        );
                    }
                }
            }
            EventType::ToolCallEnd => {
                let Some(id) = ev.str("toolCallId") else {
                    return;
                };
                if let Some(call) = self.open.remove(id) {
                    let excerpt = || crate::check::parse::excerpt(ev.raw);
                    if self.from_1_0 {
                        let ended = EndedCall {
                            call,
                            loc: ev.loc.clone(),
                            excerpt: excerpt(),
                        };
                        self.ended.insert(id.to_owned(), ended);
                    } else {
                        let at = At {
                            loc: ev.loc,
                            excerpt: excerpt(),
                        };
                        self.check(id, &call, &at, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn check(&mut self, id: &str, call: &OpenCall, at: &At<'_>, out: &mut Out<'_>) {
        if call.overflow {
            return;
        }
        let args: Value = if call.args.trim().is_empty() {
            // The official client reads no arguments as `{}`: a warning, then checked as that.
            out.report(
                RuleId::ToolArgsEmptyArguments,
                at.loc,
                format!(
                    "tool call \"{id}\" ({}) ends with no arguments; clients that parse them strictly fail on an empty string",
                    call.name
                ),
                "send \"{}\" in a TOOL_CALL_ARGS when the tool takes no arguments",
            );
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str(&call.args) {
                Ok(args) => args,
                Err(err) => {
                    let what = err.to_string();
                    let what = what
                        .rsplit_once(" at line ")
                        .map_or(what.as_str(), |(w, _)| w)
                        .to_owned();
                    let message = format!(
                        "the arguments of tool call \"{id}\" ({}) are not valid JSON: {what} at column {}: {}",
                        call.name,
                        err.column(),
                        abbreviate(&call.args, 80)
                    );
                    if out.wants(RuleId::ToolArgsInvalidJson) {
                        // Said later, at the TOOL_CALL_END it is about.
                        let mut d = crate::check::parse::finding(
                            RuleId::ToolArgsInvalidJson,
                            at.loc,
                            message,
                        )
                        .with_help(INVALID_JSON_HELP);
                        d.event_type = Some(EventType::ToolCallEnd.as_str().to_owned());
                        d.excerpt.clone_from(&at.excerpt);
                        self.deferred.push(d);
                    }
                    return;
                }
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
            let pointer = error.instance_path().as_str();
            let place = if pointer.is_empty() {
                "the arguments".to_owned()
            } else {
                pointer.to_owned()
            };
            out.report(
                RuleId::ToolArgsSchemaViolation,
                at.loc,
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
