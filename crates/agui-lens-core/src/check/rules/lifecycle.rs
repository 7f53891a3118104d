//! Lifecycle rules: runs start, end once, and nothing happens outside them. A stream may hold
//! many runs (a stored thread replayed), including a new run after a RUN_ERROR.

use super::protocol::{Ev, Out};
use crate::check::catalog::RuleId;
use crate::protocol::event::{EventType, Location};
use crate::protocol::ids::IdSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No event yet.
    Before,
    Active,
    Finished,
    Errored,
}

/// What a lifecycle event means for the other families.
pub enum Transition {
    None,
    /// A run started: per-run state starts afresh.
    NewRun,
    /// The RUN_STARTED of a run whose first events came before it (already reported as
    /// `lifecycle/first-event`): it names the run those events belong to, which goes on.
    LateStart,
    /// The run ended: whatever is open is reported and closed.
    Ends {
        error: bool,
    },
}

struct Run {
    thread: Option<String>,
    run: Option<String>,
    started: Location,
    /// Assumed from an event other than RUN_STARTED.
    assumed: bool,
}

pub struct Lifecycle {
    attach: bool,
    phase: Phase,
    run: Option<Run>,
    runs: IdSet,
    any_run_started: bool,
    last_thread: Option<String>,
    /// Events after the terminal event are reported once per terminal.
    reported_after_terminal: bool,
}

impl Lifecycle {
    pub fn new(attach: bool) -> Self {
        Lifecycle {
            attach,
            phase: Phase::Before,
            run: None,
            runs: IdSet::default(),
            any_run_started: false,
            last_thread: None,
            reported_after_terminal: false,
        }
    }

    /// No RUN_STARTED has been seen yet.
    pub fn before_first_run(&self) -> bool {
        !self.any_run_started
    }

    pub fn on_event(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) -> Transition {
        if self.phase == Phase::Before {
            if !matches!(ev.ty, EventType::RunStarted | EventType::RunError) && !self.attach {
                out.report(
                    RuleId::LifecycleFirstEvent,
                    ev.loc,
                    format!("the stream starts with {}, not RUN_STARTED", ev.ty),
                    "a run begins with RUN_STARTED; if the capture began mid-run, check it with --attach",
                );
            }
            if ev.ty != EventType::RunStarted {
                // Carry on as if the run had started before the capture.
                self.phase = Phase::Active;
                self.run = Some(Run {
                    thread: None,
                    run: None,
                    started: ev.loc.clone(),
                    assumed: true,
                });
            }
        }
        match ev.ty {
            EventType::RunStarted => self.run_started(ev, out),
            EventType::RunFinished => self.run_finished(ev, out),
            EventType::RunError => self.run_error(ev, out),
            _ => {
                self.after_terminal(ev, out);
                Transition::None
            }
        }
    }

    fn after_terminal(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        if self.reported_after_terminal {
            return;
        }
        match self.phase {
            Phase::Finished => {
                self.reported_after_terminal = true;
                out.report(
                    RuleId::LifecycleEventAfterFinish,
                    ev.loc,
                    format!("{} after RUN_FINISHED{}", ev.ty, self.run_label()),
                    "send it before RUN_FINISHED, or start a new run with RUN_STARTED",
                );
            }
            Phase::Errored => {
                self.reported_after_terminal = true;
                out.report(
                    RuleId::LifecycleEventAfterError,
                    ev.loc,
                    format!("{} after RUN_ERROR{}", ev.ty, self.run_label()),
                    "RUN_ERROR ends the run; only a new RUN_STARTED may follow",
                );
            }
            _ => {}
        }
    }

    /// ` of run "r1"`, when the run's id is known.
    fn run_label(&self) -> String {
        match self.run.as_ref().and_then(|r| r.run.as_deref()) {
            Some(id) => format!(" of run \"{id}\""),
            None => String::new(),
        }
    }

    fn run_started(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) -> Transition {
        // Without --attach, events before the first RUN_STARTED were reported as out of place;
        // the RUN_STARTED that follows them starts the run they belong to, not a second one.
        let late = !self.attach
            && !self.any_run_started
            && self.phase == Phase::Active
            && self.run.as_ref().is_some_and(|r| r.assumed);
        if self.phase == Phase::Active && !late {
            let started = self.run.as_ref().map(|r| r.started.line).unwrap_or(0);
            out.report(
                RuleId::LifecycleRunAlreadyActive,
                ev.loc,
                format!(
                    "RUN_STARTED while run{} (started at line {started}) is still active",
                    self.run
                        .as_ref()
                        .and_then(|r| r.run.as_deref())
                        .map(|id| format!(" \"{id}\""))
                        .unwrap_or_default()
                ),
                "end the previous run with RUN_FINISHED or RUN_ERROR first",
            );
        }
        let thread = ev.str("threadId").map(str::to_owned);
        let run = ev.str("runId").map(str::to_owned);
        if let Some(id) = &run {
            if !self.runs.insert(id) {
                out.report(
                    RuleId::LifecycleDuplicateRunId,
                    ev.loc,
                    format!("runId \"{id}\" was already used by an earlier run of this stream"),
                    "give every run a fresh runId",
                );
            }
        }
        if let Some(parent) = ev.str("parentRunId") {
            if !self.runs.contains(parent) || Some(parent) == run.as_deref() {
                out.report(
                    RuleId::LifecycleUnknownParentRun,
                    ev.loc,
                    format!("parentRunId \"{parent}\" names no earlier run of this stream"),
                    "fine if the capture starts mid-thread; otherwise point at the run this one continues",
                );
            }
        }
        if let (Some(previous), Some(current)) = (&self.last_thread, &thread) {
            if previous != current {
                out.report_about(
                    RuleId::LifecycleThreadChanged,
                    ev.loc,
                    current,
                    format!("threadId changes from \"{previous}\" to \"{current}\""),
                    "a stored history usually holds one thread; agui-lens follows each thread on its own (`fold --thread ID` shows one)",
                );
            }
        }
        if thread.is_some() {
            self.last_thread = thread.clone();
        }
        self.phase = Phase::Active;
        self.any_run_started = true;
        self.reported_after_terminal = false;
        self.run = Some(Run {
            thread,
            run,
            started: ev.loc.clone(),
            assumed: false,
        });
        if late {
            Transition::LateStart
        } else {
            Transition::NewRun
        }
    }

    fn run_finished(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) -> Transition {
        match self.phase {
            Phase::Errored => {
                self.after_terminal(ev, out);
                Transition::None
            }
            Phase::Finished => {
                self.after_terminal(ev, out);
                Transition::None
            }
            _ => {
                self.check_ids(ev, out);
                self.phase = Phase::Finished;
                self.reported_after_terminal = false;
                Transition::Ends { error: false }
            }
        }
    }

    fn run_error(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) -> Transition {
        match self.phase {
            Phase::Errored => {
                self.after_terminal(ev, out);
                Transition::None
            }
            Phase::Finished => {
                // Allowed: a run can still fail after it reported finishing.
                self.phase = Phase::Errored;
                self.reported_after_terminal = false;
                Transition::None
            }
            _ => {
                self.check_ids(ev, out);
                self.phase = Phase::Errored;
                self.reported_after_terminal = false;
                Transition::Ends { error: true }
            }
        }
    }

    /// The terminal event's ids against the open run's.
    fn check_ids(&mut self, ev: &Ev<'_>, out: &mut Out<'_>) {
        let Some(run) = &mut self.run else {
            return;
        };
        for (field, known) in [("threadId", &mut run.thread), ("runId", &mut run.run)] {
            let Some(said) = ev.str(field) else {
                continue;
            };
            match known {
                Some(known) if known != said => out.report(
                    RuleId::LifecycleRunIdMismatch,
                    ev.loc,
                    format!(
                        "{} names {field} \"{said}\", but the open run (line {}) has \"{known}\"",
                        ev.ty, run.started.line
                    ),
                    "end a run with the threadId and runId it started with",
                ),
                Some(_) => {}
                // A run adopted mid-stream learns its ids from its end.
                None => *known = Some(said.to_owned()),
            }
        }
    }

    /// Reports what is still open when a run ends.
    pub fn report_open(&mut self, ev: &Ev<'_>, error: bool, open: &[String], out: &mut Out<'_>) {
        if open.is_empty() {
            return;
        }
        let (rule, help) = if error {
            (
                RuleId::LifecycleOpenAtError,
                "close what the run opened before RUN_ERROR, so clients keep a clean transcript",
            )
        } else {
            (
                RuleId::LifecycleOpenAtFinish,
                "end every message, tool call, step, reasoning span and subagent before RUN_FINISHED",
            )
        };
        out.report(
            rule,
            ev.loc,
            format!("{} while still open: {}", ev.ty, open.join(", ")),
            help,
        );
    }

    /// Whether a run is open: one the stream's end would leave unterminated.
    pub fn in_run(&self) -> bool {
        self.phase == Phase::Active && self.run.is_some()
    }

    /// The stream ended.
    pub fn finish(&mut self, open: &[String], out: &mut Out<'_>) {
        if self.phase != Phase::Active {
            return;
        }
        let Some(run) = &self.run else {
            return;
        };
        let mut message = match &run.run {
            Some(id) => {
                format!("the stream ends inside run \"{id}\": no RUN_FINISHED or RUN_ERROR")
            }
            None => "the stream ends inside a run: no RUN_FINISHED or RUN_ERROR".to_owned(),
        };
        if !open.is_empty() {
            message.push_str(&format!(" (still open: {})", open.join(", ")));
        }
        let started = run.started.clone();
        out.report(
            RuleId::LifecycleUnterminatedRun,
            &started,
            message,
            "the capture may be truncated, or the connection dropped before the run ended",
        );
    }
}

/// Holds the interrupts of a RUN_FINISHED's interrupt outcome to ids of their own: a resume
/// entry answers an interrupt by its id. Each id repeated is said once.
pub fn judge_interrupts(ev: &Ev<'_>, out: &mut Out<'_>) {
    if !out.wants(RuleId::LifecycleDuplicateInterruptId) {
        return;
    }
    let Some(outcome) = ev
        .get("outcome")
        .filter(|o| o.get("type").and_then(serde_json::Value::as_str) == Some("interrupt"))
    else {
        return;
    };
    let Some(interrupts) = outcome
        .get("interrupts")
        .and_then(serde_json::Value::as_array)
    else {
        return;
    };
    let ids: Vec<&str> = interrupts
        .iter()
        .filter_map(|i| i.get("id")?.as_str())
        .collect();
    let mut twice: Vec<&str> = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        if ids[..n].contains(id) && !twice.contains(id) {
            twice.push(id);
        }
    }
    for id in twice {
        let count = ids.iter().filter(|i| **i == id).count();
        out.report(
            RuleId::LifecycleDuplicateInterruptId,
            ev.loc,
            format!("the interrupt outcome names {count} interrupts with the id \"{id}\": a resume entry answers one by its id"),
            "give each interrupt of the run an id of its own",
        );
    }
}

/// Holds each `usage` entry of a run's terminal event to the token accounting of 1.0 and later:
/// `totalTokens` is `inputTokens` plus `outputTokens`, and the cache and reasoning counts are
/// parts of those totals. Only counts the entry gives are compared (an absent count is
/// unknown, not zero).
pub fn judge_usage(ev: &Ev<'_>, out: &mut Out<'_>) {
    if !out.wants(RuleId::LifecycleUsageAccounting) {
        return;
    }
    let Some(entries) = ev.get("usage").and_then(serde_json::Value::as_array) else {
        return;
    };
    for (i, entry) in entries.iter().enumerate() {
        let count = |key: &str| entry.get(key).and_then(serde_json::Value::as_u64);
        let (input, output) = (count("inputTokens"), count("outputTokens"));
        let total = count("totalTokens");
        let mut wrong = Vec::new();
        match (input, output, total) {
            (Some(input), Some(output), Some(total))
                if input.checked_add(output) != Some(total) =>
            {
                wrong.push(format!(
                    "totalTokens is {total}, not inputTokens plus outputTokens ({input} + {output})"
                ));
            }
            // One side unknown: the total still holds the other.
            (Some(part), None, Some(total)) | (None, Some(part), Some(total)) if part > total => {
                let name = if input.is_some() {
                    "inputTokens"
                } else {
                    "outputTokens"
                };
                wrong.push(format!(
                    "totalTokens ({total}) is less than {name} ({part}), which it adds up"
                ));
            }
            _ => {}
        }
        let parts: Vec<(&str, u64)> = ["cachedInputTokens", "cacheWriteInputTokens"]
            .into_iter()
            .filter_map(|key| Some((key, count(key)?)))
            .collect();
        let cache = parts
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n));
        // A part is held to its own total, and to `totalTokens` when that one is unknown.
        let holder = |own: Option<u64>, name: &'static str| match (own, total) {
            (Some(own), _) => Some((name, own)),
            (None, Some(total)) => Some(("totalTokens", total)),
            (None, None) => None,
        };
        if let Some((holder, most)) = holder(input, "inputTokens")
            && cache > most
        {
            let named: Vec<String> = parts.iter().map(|(k, n)| format!("{k} {n}")).collect();
            wrong.push(format!(
                "{} {} more than {holder} ({most}), which counts {}",
                named.join(" and "),
                if parts.len() == 1 { "is" } else { "are" },
                if parts.len() == 1 { "it" } else { "them" }
            ));
        }
        if let (Some((holder, most)), Some(reasoning)) =
            (holder(output, "outputTokens"), count("reasoningTokens"))
            && reasoning > most
        {
            wrong.push(format!(
                "reasoningTokens {reasoning} is more than {holder} ({most}), which counts it"
            ));
        }
        if wrong.is_empty() {
            continue;
        }
        out.report_at(
            RuleId::LifecycleUsageAccounting,
            ev.loc,
            format!("/usage/{i}"),
            format!("usage entry {i}: {}", wrong.join("; ")),
            "report inputTokens and outputTokens as totals with every part added in, and \
             totalTokens as their sum, not a provider's total that counts otherwise",
        );
    }
}
