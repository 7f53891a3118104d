//! State and activity rules: the shared state is followed from RUN_STARTED.input.state and
//! every STATE_SNAPSHOT through every STATE_DELTA, across the runs of each thread, and every
//! patch must apply. Patches are atomic, as clients apply them: a failing one changes nothing.

use std::collections::HashMap;

use serde_json::Value;

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::EventType;
use crate::protocol::ids::FastBuild;
use crate::protocol::patch::{self, PatchError, PatchErrorKind};
use crate::text::abbreviate_value;

/// An activity as followed: its type and content.
struct Activity {
    activity_type: String,
    content: Value,
    size: usize,
    /// A type change was reported once already.
    type_reported: bool,
}

/// The state of one thread (conversation), as a client that holds that thread has it.
#[derive(Default)]
struct ThreadState {
    state: Option<Value>,
    size: usize,
    /// A delta without baseline was reported; quiet until a baseline arrives.
    no_baseline_reported: bool,
    /// The state is the `{}` a client starts with, assumed because a delta came before any
    /// known state: a patch that fails on it says more about the capture than the agent.
    assumed: bool,
}

pub struct StateRules {
    limit: usize,
    /// The state of the thread whose run came last. A history may hold several threads, as
    /// `fold` and `compact` read it: each RUN_STARTED switches to its thread's state, and the
    /// events before the first run belong to the thread of that run.
    held: ThreadState,
    /// The thread `held` belongs to: None before the first run (and for runs without a
    /// threadId), the other threads' states parked in `parked`.
    thread: Option<String>,
    any_run: bool,
    parked: HashMap<Option<String>, ThreadState, FastBuild>,
    activities: HashMap<String, Activity, FastBuild>,
    unknown_activities_reported: crate::protocol::ids::IdSet,
}

impl StateRules {
    /// `baseline` is the state held before the stream, if known.
    pub fn new(limit: usize, baseline: Option<Value>) -> Self {
        let mut rules = StateRules {
            limit,
            held: ThreadState::default(),
            thread: None,
            any_run: false,
            parked: HashMap::default(),
            activities: HashMap::default(),
            unknown_activities_reported: Default::default(),
        };
        if let Some(state) = baseline.filter(|s| !s.is_null()) {
            rules.set_state(state);
        }
        rules
    }

    /// A run starts on `thread`: its state becomes the one held.
    fn enter_thread(&mut self, thread: Option<&str>) {
        if !self.any_run {
            // What came before the first run is this thread's.
            self.any_run = true;
            self.thread = thread.map(str::to_owned);
            return;
        }
        if self.thread.as_deref() == thread {
            return;
        }
        let next = thread.map(str::to_owned);
        let entered = self.parked.remove(&next).unwrap_or_default();
        let left = std::mem::replace(&mut self.held, entered);
        let previous = std::mem::replace(&mut self.thread, next);
        self.parked.insert(previous, left);
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        match ev.ty {
            EventType::RunStarted => {
                self.enter_thread(ev.str("threadId"));
                let input = ev.get("input");
                if let Some(state) = input.and_then(|i| i.get("state")).filter(|s| !s.is_null()) {
                    self.take_state(state);
                }
                self.seed_activities(input.and_then(|i| i.get("messages")));
            }
            EventType::StateSnapshot => {
                if let Some(snapshot) = ev.get("snapshot") {
                    self.take_state(snapshot);
                }
            }
            EventType::StateDelta if ev.conforms => self.delta(ev, adopting, out),
            EventType::MessagesSnapshot => self.seed_activities(ev.get("messages")),
            EventType::ActivitySnapshot => self.activity_snapshot(ev, out),
            EventType::ActivityDelta if ev.conforms => self.activity_delta(ev, adopting, out),
            _ => {}
        }
    }

    fn wanted(out: &Out<'_>) -> bool {
        out.wants(RuleId::StatePatchFailed)
            || out.wants(RuleId::StateTooLarge)
            || out.wants(RuleId::StateNoBaseline)
    }

    fn set_state(&mut self, state: Value) {
        let held = &mut self.held;
        held.size = patch::estimated_size(&state, usize::MAX);
        held.state = Some(state);
        held.no_baseline_reported = false;
        held.assumed = false;
    }

    /// [`Self::set_state`] from an event's value, copied only if it differs from the state
    /// held: a client usually sends back the state the last run ended with.
    fn take_state(&mut self, state: &Value) {
        match self.held.state.take() {
            Some(held) if held == *state => self.set_state(held),
            _ => self.set_state(state.clone()),
        }
    }

    fn delta(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        if !Self::wanted(out) {
            return;
        }
        let Some(delta) = ev.patch_ops() else {
            return;
        };
        if self.held.state.is_none() {
            // A client starts from the `{}` its agent is made with, and patches that.
            self.set_state(patch::empty_object());
            self.held.assumed = true;
            if !adopting {
                self.held.no_baseline_reported = true;
                out.report(
                    RuleId::StateNoBaseline,
                    ev.loc,
                    "STATE_DELTA before any known state (no RUN_STARTED.input.state, no STATE_SNAPSHOT): applied to {}, as a client that starts with no state does".into(),
                    "send a STATE_SNAPSHOT before the first delta; if the capture starts mid-thread, give the state it started from with --initial-state",
                );
            }
        }
        let held = &mut self.held;
        let Some(state) = &mut held.state else {
            return;
        };
        if let Err(err) = patch::apply_ops(state, delta, &mut held.size, self.limit) {
            if held.assumed {
                // Against a baseline that was only assumed: the capture may not hold the state
                // the agent patched, so this is told as such, not as the agent's error.
                if !adopting {
                    report_patch_error(
                        &err,
                        state,
                        ev,
                        "/delta",
                        RuleId::StateNoBaseline,
                        "the state this delta was computed from is not in the capture; give it with --initial-state",
                        out,
                    );
                }
                return;
            }
            report_patch_error(
                &err,
                state,
                ev,
                "/delta",
                RuleId::StatePatchFailed,
                "the client skips this delta and keeps its state; compute deltas against the state the client has",
                out,
            );
        }
    }

    fn seed_activities(&mut self, messages: Option<&Value>) {
        let Some(Value::Array(messages)) = messages else {
            return;
        };
        for message in messages {
            if message.get("role").and_then(Value::as_str) != Some("activity") {
                continue;
            }
            let (Some(id), Some(activity_type)) = (
                message.get("id").and_then(Value::as_str),
                message.get("activityType").and_then(Value::as_str),
            ) else {
                continue;
            };
            let content = message
                .get("content")
                .cloned()
                .unwrap_or_else(patch::empty_object);
            self.activities
                .insert(id.to_owned(), Activity::new(activity_type, content));
        }
    }

    fn activity_snapshot(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let (Some(id), Some(activity_type)) = (ev.str("messageId"), ev.str("activityType")) else {
            return;
        };
        let content = ev
            .get("content")
            .cloned()
            .unwrap_or_else(patch::empty_object);
        let replace = ev.get("replace") != Some(&Value::Bool(false));
        match self.activities.get_mut(id) {
            Some(activity) => {
                check_type(activity, id, activity_type, ev, out);
                if replace {
                    *activity = Activity::new(activity_type, content);
                }
            }
            None => {
                self.activities
                    .insert(id.to_owned(), Activity::new(activity_type, content));
            }
        }
    }

    fn activity_delta(&mut self, ev: &Ev<'_>, adopting: bool, out: &mut Out<'_>) {
        let (Some(id), Some(patch_ops)) = (ev.str("messageId"), ev.patch_ops()) else {
            return;
        };
        let Some(activity) = self.activities.get_mut(id) else {
            if !adopting && self.unknown_activities_reported.insert(id) {
                out.report(
                    RuleId::StateActivityUnknown,
                    ev.loc,
                    format!(
                        "ACTIVITY_DELTA for activity \"{id}\", which no ACTIVITY_SNAPSHOT created"
                    ),
                    "send an ACTIVITY_SNAPSHOT first (it may be in an earlier capture)",
                );
            }
            return;
        };
        if let Some(activity_type) = ev.str("activityType") {
            check_type(activity, id, activity_type, ev, out);
        }
        if let Err(err) = patch::apply_ops(
            &mut activity.content,
            patch_ops,
            &mut activity.size,
            self.limit,
        ) {
            report_patch_error(
                &err,
                &activity.content,
                ev,
                "/patch",
                RuleId::StateActivityPatchFailed,
                "the client keeps the activity's previous content",
                out,
            );
        }
    }
}

impl Activity {
    fn new(activity_type: &str, content: Value) -> Self {
        Activity {
            activity_type: activity_type.to_owned(),
            size: patch::estimated_size(&content, usize::MAX),
            content,
            type_reported: false,
        }
    }
}

fn check_type(
    activity: &mut Activity,
    id: &str,
    activity_type: &str,
    ev: &Ev<'_>,
    out: &mut Out<'_>,
) {
    if activity.activity_type != activity_type && !activity.type_reported {
        activity.type_reported = true;
        out.report(
            RuleId::StateActivityTypeChanged,
            ev.loc,
            format!(
                "{} names activityType \"{activity_type}\" for activity \"{id}\", which is \"{}\"",
                ev.ty, activity.activity_type
            ),
            "keep one activityType per activity; start a new activity for another kind",
        );
    }
}

/// Reports a failed patch: which operation, its pointer, why, and the document there.
fn report_patch_error(
    err: &PatchError,
    doc: &Value,
    ev: &Ev<'_>,
    field: &str,
    failed_rule: RuleId,
    help: &str,
    out: &mut Out<'_>,
) {
    let rule = match err.kind {
        PatchErrorKind::TooLarge { .. } => RuleId::StateTooLarge,
        _ => failed_rule,
    };
    let pointer = if matches!(err.kind, PatchErrorKind::NotAnArray) {
        field.to_owned()
    } else {
        format!("{field}/{}", err.index)
    };
    let (at, node) = patch::nearest(doc, &err.pointer);
    let shown = abbreviate_value(node, 120);
    let place = if at.is_empty() {
        "the root".to_owned()
    } else {
        at
    };
    let message = format!("{} {err}; the document at {place} is {shown}", ev.ty);
    let help = match err.kind {
        PatchErrorKind::TooLarge { .. } => {
            "the patch is refused and the state kept; raise the limit with --max-state if states this large are real"
        }
        _ => help,
    };
    out.report_at(rule, ev.loc, pointer, message, help);
}
