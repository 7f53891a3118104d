//! The terminal view of an inspection: per run a header, then what happened in order, with
//! diagnostics inline, coloured by severity when asked. Long text is folded unless `full`.

use std::io::{self, Write};

use colored::{ColoredString, Colorize};
use serde_json::Value;

use super::{
    ActivityView, DiagnosticView, Inspection, Item, ItemKind, MessageView, ReasoningView, RunView,
    StateChangeView, SubagentView, ToolCallView,
};
use agui_lens_core::check::diagnostic::Severity;
use agui_lens_core::report::human::{Visible, visible, visible_path};
use agui_lens_core::text::human_bytes;

/// Lines of text shown before folding.
const FOLD_LINES: usize = 8;
/// Past this many runs, an overview comes before them.
const MANY_RUNS: usize = 10;
/// Runs with errors the overview names.
const OVERVIEW_RUNS: usize = 5;
/// Characters of text shown before folding.
const FOLD_CHARS: usize = 600;
/// Characters of one JSON value in a list of state changes.
const VALUE_CHARS: usize = 100;
/// Changed paths listed per state change before folding.
const FOLD_CHANGES: usize = 20;

pub struct Human<'a> {
    out: Visible<&'a mut dyn Write>,
    color: bool,
    full: bool,
    /// Whether the reason some runs are summarised was given.
    said_why: bool,
}

impl<'a> Human<'a> {
    pub fn new(out: &'a mut dyn Write, color: bool, full: bool) -> Self {
        if color {
            colored::control::set_override(true);
        }
        Human {
            out: Visible::marked(out),
            color,
            full,
            said_why: false,
        }
    }

    /// `text` in a style when the view paints: its codes are written with the view's mark in
    /// place of ESC (see [`Visible::marked`]), and what the text holds that a terminal would
    /// act on is escaped first. Whatever else the view writes (message text, ids, names, the
    /// file's name: they reach it from the stream by many paths) is escaped on its way out.
    fn paint(&self, text: &str, style: fn(&str) -> ColoredString) -> String {
        if self.color {
            style(&visible(text))
                .to_string()
                .replace('\u{1b}', self.out.mark())
        } else {
            text.to_owned()
        }
    }

    pub fn render(&mut self, inspection: &Inspection) -> io::Result<()> {
        self.out.stand_ins(inspection.halves);
        let runs = inspection
            .runs
            .iter()
            .filter(|r| r.status != "none")
            .count();
        let head = format!(
            "{}: {} in {}, {}, {}",
            inspection.path,
            plural(inspection.events, "event"),
            plural(runs as u64, "run"),
            plural(inspection.errors, "error"),
            plural(inspection.warnings, "warning"),
        );
        let head = self.paint(&head, |s| s.bold());
        writeln!(self.out, "{head}")?;
        if let Some(failure) = &inspection.failure {
            let line = crate::inspect::stats::not_read_whole(failure);
            let line = self.paint(&line, |s| s.red().bold());
            writeln!(self.out, "{line}")?;
        }
        if runs > MANY_RUNS {
            self.overview(inspection)?;
        }
        let mut runs = inspection.runs.as_slice();
        while let Some(run) = runs.first() {
            let quiet = |r: &RunView| r.items_left_out.is_some() && r.diagnostics.is_empty();
            let together = runs.iter().take_while(|r| quiet(r)).count();
            writeln!(self.out)?;
            if together > 0 {
                self.summarised(&runs[..together])?;
                runs = &runs[together..];
            } else {
                self.run(run)?;
                runs = &runs[1..];
            }
        }
        if !inspection.diagnostics.is_empty() {
            writeln!(self.out)?;
            for d in &inspection.diagnostics {
                self.diagnostic(d, "")?;
            }
        }
        self.out.flush()
    }

    /// Before many runs, what a person needs first: how the runs ended, and which have
    /// findings.
    fn overview(&mut self, inspection: &Inspection) -> io::Result<()> {
        let mut ended: std::collections::BTreeMap<&str, u64> = Default::default();
        let mut flagged = Vec::new();
        for run in inspection.runs.iter().filter(|r| r.status != "none") {
            *ended.entry(run.status).or_default() += 1;
            let errors = run
                .diagnostics
                .iter()
                .chain(run.items.iter().flat_map(|i| &i.diagnostics))
                .filter(|d| d.diagnostic.severity == Severity::Error)
                .count();
            if errors > 0 {
                flagged.push((run.run_id.as_deref().unwrap_or("(no runId)"), errors));
            }
        }
        let ended: Vec<String> = ended
            .iter()
            .map(|(status, n)| format!("{n} {status}"))
            .collect();
        writeln!(self.out, "  runs: {}", ended.join(", "))?;
        if flagged.is_empty() {
            return writeln!(self.out, "  no run has an error");
        }
        let shown: Vec<String> = flagged
            .iter()
            .take(OVERVIEW_RUNS)
            .map(|(id, n)| format!("{id} ({})", plural(*n as u64, "error")))
            .collect();
        let more = flagged.len().saturating_sub(OVERVIEW_RUNS);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        writeln!(
            self.out,
            "  {} with errors: {}{more}",
            plural(flagged.len() as u64, "run"),
            shown.join(", ")
        )
    }

    /// Neighbouring runs summarised without findings, as one block.
    fn summarised(&mut self, runs: &[RunView]) -> io::Result<()> {
        let (first, last) = (&runs[0], &runs[runs.len() - 1]);
        let mut ended: std::collections::BTreeMap<&str, u64> = Default::default();
        for run in runs {
            *ended.entry(run.status).or_default() += 1;
        }
        let ended: Vec<String> = ended.iter().map(|(s, n)| format!("{n} {s}")).collect();
        let id = |r: &RunView| r.run_id.clone().unwrap_or_else(|| "(no runId)".into());
        let ids = if runs.len() == 1 {
            id(first)
        } else {
            format!("{} … {}", id(first), id(last))
        };
        let title = format!(
            "{} summarised ({ids}) · {}",
            plural(runs.len() as u64, "run"),
            ended.join(", ")
        );
        writeln!(self.out, "{}", self.paint(&title, |s| s.bold()))?;
        let events: u64 = runs.iter().map(|r| r.events).sum();
        let bytes: u64 = runs.iter().map(|r| r.bytes).sum();
        self.field(
            "events",
            &format!(
                "{} · {} · {}",
                range(first.first_event, last.last_event),
                plural(events, "event"),
                human_bytes(bytes)
            ),
        )?;
        let items: u64 = runs.iter().filter_map(|r| r.items_left_out).sum();
        self.field(
            "items",
            &format!("{} not shown, none with findings", plural(items, "item")),
        )?;
        if self.said_why {
            return Ok(());
        }
        self.said_why = true;
        self.field("why", &summary_reason())
    }

    fn run(&mut self, run: &RunView) -> io::Result<()> {
        let title = if run.status == "none" {
            "events outside any run".to_owned()
        } else {
            let mut title = format!("run {}", run.run_id.as_deref().unwrap_or("(no runId)"));
            if let Some(thread) = &run.thread_id {
                title.push_str(&format!(" · thread {thread}"));
            }
            if let Some(parent) = &run.parent_run_id {
                title.push_str(&format!(" · parent run {parent}"));
            }
            title
        };
        let status = match run.status {
            "finished" => self.paint("finished", |s| s.green().bold()),
            "error" => self.paint("error", |s| s.red().bold()),
            "open" => self.paint("unfinished", |s| s.yellow().bold()),
            _ => String::new(),
        };
        let title = self.paint(&title, |s| s.bold().underline());
        if status.is_empty() {
            writeln!(self.out, "{title}")?;
        } else {
            writeln!(self.out, "{title} · {status}")?;
        }
        match run.status {
            "finished" => {
                let outcome = match &run.outcome {
                    None => "success (no outcome given)".to_owned(),
                    Some(outcome) => describe_outcome(outcome),
                };
                // (An agent's words, on the field's line: see the error's below.)
                self.field("outcome", &visible_path(&outcome))?;
            }
            "error" => {
                let error = run.error.as_ref();
                let message = error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)");
                let code = error
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_str)
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default();
                // On the field's line: a line break in the agent's message began a line of
                // its own (`::error …`, a workflow command in a CI log).
                let said = visible_path(&format!("{message}{code}")).into_owned();
                let text = self.paint(&said, |s| s.red());
                self.field("error", &text)?;
            }
            "open" => self.field("outcome", "none: the stream ends inside the run")?,
            _ => {}
        }
        self.field(
            "events",
            &format!(
                "{} · {} · {}",
                range(run.first_event, run.last_event),
                plural(run.events, "event"),
                human_bytes(run.bytes)
            ),
        )?;
        let mut timing = Vec::new();
        if let Some(ms) = run.duration_ms {
            timing.push(format!("{} in all", millis(ms)));
        }
        if let Some(ms) = run.first_event_after_ms {
            timing.push(format!("first event after {}", millis(ms)));
        }
        if !timing.is_empty() {
            self.field("timing", &timing.join(" · "))?;
        }
        if let Some(usage) = &run.usage {
            for line in describe_usage(usage) {
                self.field("usage", &line)?;
            }
        }
        if !run.tools.is_empty() {
            self.field("tools", &run.tools.join(", "))?;
        }
        if let Some(items) = run.items_left_out {
            self.field(
                "items",
                &format!(
                    "{} not shown; the run's findings follow",
                    plural(items, "item")
                ),
            )?;
            if !self.said_why {
                self.said_why = true;
                self.field("why", &summary_reason())?;
            }
        }
        writeln!(self.out)?;
        // Items and the findings no item holds, in stream order, their columns aligned.
        let columns: Vec<(String, String)> = run
            .items
            .iter()
            .map(|i| (range(i.first_event, i.last_event), since(i.started_at, run)))
            .chain(run.diagnostics.iter().map(|d| {
                let at = d.diagnostic.event_index.map(|i| format!("#{i}"));
                (at.unwrap_or_default(), since(d.timestamp, run))
            }))
            .collect();
        let widths = (
            columns
                .iter()
                .map(|c| c.0.chars().count())
                .max()
                .unwrap_or(0),
            columns
                .iter()
                .map(|c| c.1.chars().count())
                .max()
                .unwrap_or(0),
        );
        let mut loose = run.diagnostics.iter().peekable();
        for item in &run.items {
            while let Some(d) = loose.next_if(|d| position(d) <= item.first_event) {
                self.loose(d, run, widths)?;
            }
            self.item(item, run, widths)?;
        }
        for d in loose {
            self.loose(d, run, widths)?;
        }
        if !run.custom.is_empty() {
            let names: Vec<String> = run
                .custom
                .iter()
                .map(|(name, n)| {
                    let name = if name.is_empty() { "(no name)" } else { name };
                    format!("{name} ×{n}")
                })
                .collect();
            self.field("custom", &names.join(", "))?;
        }
        if run.raw > 0 {
            self.field("raw", &plural(run.raw, "event"))?;
        }
        Ok(())
    }

    fn field(&mut self, name: &str, value: &str) -> io::Result<()> {
        let name = self.paint(&format!("{name:<9}"), |s| s.dimmed());
        writeln!(self.out, "  {name} {value}")
    }

    /// The event range and time columns, padded.
    fn columns(&self, at: &str, time: &str, widths: (usize, usize)) -> String {
        let at = format!("{at:<width$}", width = widths.0);
        let at = self.paint(&at, |s| s.dimmed());
        if widths.1 == 0 {
            at
        } else {
            format!("{at} {time:>width$}", width = widths.1)
        }
    }

    fn loose(
        &mut self,
        d: &DiagnosticView,
        run: &RunView,
        widths: (usize, usize),
    ) -> io::Result<()> {
        let at = d
            .diagnostic
            .event_index
            .map(|i| format!("#{i}"))
            .unwrap_or_default();
        let columns = self.columns(&at, &since(d.timestamp, run), widths);
        let ty = match &d.diagnostic.event_type {
            Some(ty) => ty.as_str(),
            None if d.diagnostic.rule.name().starts_with("framing/") => "unreadable frame",
            None => "stream",
        };
        let ty = self.paint(ty, |s| s.cyan().bold());
        writeln!(self.out, "  {columns} {ty}")?;
        self.diagnostic(d, "      ")
    }

    fn item(&mut self, item: &Item, run: &RunView, widths: (usize, usize)) -> io::Result<()> {
        let at = range(item.first_event, item.last_event);
        let columns = self.columns(&at, &since(item.started_at, run), widths);
        let (kind, mut title, details) = self.describe(item);
        if let (Some(a), Some(b)) = (item.started_at, item.ended_at) {
            if b > a {
                title.push_str(&format!(" · {}", millis(b - a)));
            }
        }
        if let Some(owner) = &item.subagent {
            title.push_str(&format!(" · subagent {owner}"));
        }
        let kind = self.paint(&kind, |s| s.cyan().bold());
        writeln!(self.out, "  {columns} {kind} {title}")?;
        for line in details {
            writeln!(self.out, "      {line}")?;
        }
        for d in &item.diagnostics {
            self.diagnostic(d, "      ")?;
        }
        Ok(())
    }

    /// The kind word, the rest of the title line, and the lines under it.
    fn describe(&self, item: &Item) -> (String, String, Vec<String>) {
        match &item.kind {
            ItemKind::Message(m) => self.message(m),
            ItemKind::ToolCall(c) => self.tool_call(c),
            ItemKind::Step(step) => {
                let mut title = step.name.clone();
                if !step.finished {
                    title.push_str(" · never finished");
                }
                ("step".into(), title, Vec::new())
            }
            ItemKind::Reasoning(r) => self.reasoning(r),
            ItemKind::Subagent(s) => self.subagent(s),
            ItemKind::StateChange(c) => self.state_change(c),
            ItemKind::Activity(a) => self.activity(a),
            ItemKind::MessagesSnapshot(s) => (
                "messages".into(),
                format!("snapshot of {}", plural(s.messages as u64, "message")),
                Vec::new(),
            ),
            ItemKind::Encrypted(e) => (
                "encrypted".into(),
                format!(
                    "value for {} {} (not shown)",
                    e.subtype.as_deref().unwrap_or("entity"),
                    e.entity_id.as_deref().unwrap_or("(no entityId)")
                ),
                Vec::new(),
            ),
        }
    }

    fn message(&self, m: &MessageView) -> (String, String, Vec<String>) {
        let mut title = m.id.clone().unwrap_or_else(|| "(no messageId)".into());
        if let Some(name) = &m.name {
            title.push_str(&format!(" ({name})"));
        }
        let started = m.role != "?";
        if m.from_input {
            title.push_str(" · from the run's input");
        } else {
            title.push_str(&format!(" · {}", plural(m.deltas, "delta")));
            if !started {
                title.push_str(" · never started");
            } else if !m.ended {
                title.push_str(" · never ended");
            }
        }
        let mut lines = self.text(&m.text);
        if m.encrypted {
            lines.push(self.paint("encrypted value: present (not shown)", |s| s.dimmed()));
        }
        let kind = if started {
            m.role.clone()
        } else {
            "message".into()
        };
        (kind, title, lines)
    }

    fn tool_call(&self, c: &ToolCallView) -> (String, String, Vec<String>) {
        let mut title = format!(
            "{} {}",
            c.name.as_deref().unwrap_or("(unnamed)"),
            c.id.as_deref().unwrap_or("(no toolCallId)")
        );
        if !c.ended && c.deltas > 0 {
            title.push_str(" · never ended");
        }
        let mut lines = Vec::new();
        let args = if c.arguments.is_empty() {
            vec!["(none)".to_owned()]
        } else {
            self.text(&pretty_json_text(&c.arguments))
        };
        labelled(&mut lines, "arguments", args);
        match &c.result {
            Some(result) => {
                let content = match &result.content {
                    Value::String(text) => pretty_json_text(text),
                    other => json_block(other),
                };
                let mut shown = self.text(&content);
                let id = result
                    .message_id
                    .as_deref()
                    .map(|m| format!(", message {m}"))
                    .unwrap_or_default();
                let note = self.paint(&format!("(#{}{id})", result.event), |s| s.dimmed());
                if shown.len() == 1 {
                    shown[0].push_str(&format!("  {note}"));
                } else {
                    shown.insert(0, note);
                }
                labelled(&mut lines, "result", shown);
            }
            None if c.ended || c.deltas > 0 || c.name.is_some() => {
                labelled(&mut lines, "result", vec!["none in this stream".into()]);
            }
            None => {}
        }
        if c.encrypted {
            lines.push(self.paint("encrypted value: present (not shown)", |s| s.dimmed()));
        }
        ("tool call".into(), title, lines)
    }

    fn reasoning(&self, r: &ReasoningView) -> (String, String, Vec<String>) {
        let mut title = r.id.clone().unwrap_or_else(|| "(no messageId)".into());
        title.push_str(&format!(" · {}", plural(r.deltas, "delta")));
        if r.span && !r.ended {
            title.push_str(" · never ended");
        }
        let mut lines = if r.text.is_empty() {
            Vec::new()
        } else {
            self.text(&r.text)
        };
        if r.encrypted {
            lines.push(self.paint("encrypted value: present (not shown)", |s| s.dimmed()));
        }
        ("reasoning".into(), title, lines)
    }

    fn subagent(&self, s: &SubagentView) -> (String, String, Vec<String>) {
        let mut title = match (&s.name, &s.id) {
            (Some(name), Some(id)) => format!("{name} {id}"),
            (None, Some(id)) => id.clone(),
            (Some(name), None) => name.clone(),
            (None, None) => "(no subagentRunId)".into(),
        };
        title.push_str(&format!(
            " · {}",
            match s.status {
                "running" => "never finished",
                other => other,
            }
        ));
        let mut lines = Vec::new();
        if let Some(description) = &s.description {
            lines.push(description.clone());
        }
        if let Some(parent) = &s.parent {
            lines.push(format!("started by subagent {parent}"));
        }
        for (label, value) in [
            ("outcome", &s.outcome),
            ("result", &s.result),
            ("error", &s.error),
        ] {
            if let Some(value) = value {
                lines.push(format!("{label}: {}", self.value(value)));
            }
        }
        ("subagent".into(), title, lines)
    }

    fn state_change(&self, c: &StateChangeView) -> (String, String, Vec<String>) {
        let title = match (c.source, c.operations) {
            ("delta", Some(n)) => format!("delta, {}", plural(n as u64, "operation")),
            ("input", _) => "from the run's input".into(),
            (source, _) => source.into(),
        };
        let mut lines = Vec::new();
        if !c.applied {
            lines.push("did not apply; the state is unchanged".into());
        } else if c.changes.is_empty() {
            lines.push("no change".into());
        }
        let shown = if self.full {
            c.changes.len()
        } else {
            c.changes.len().min(FOLD_CHANGES)
        };
        for change in &c.changes[..shown] {
            let path = if change.path.is_empty() {
                "(the whole state)"
            } else {
                &change.path
            };
            let old = change
                .old
                .as_ref()
                .map_or("(absent)".into(), |v| self.value(v));
            let new = change
                .new
                .as_ref()
                .map_or("(removed)".into(), |v| self.value(v));
            lines.push(format!("{path}: {old} → {new}"));
        }
        // Paths kept but folded away, and paths only counted (past a change's or a run's
        // cap), which --full cannot show either.
        let folded = c.changes.len() - shown;
        if folded > 0 {
            let more = format!("… {folded} more changed paths (--full shows them)");
            lines.push(self.paint(&more, |s| s.dimmed()));
        }
        if c.more > 0 {
            let more = format!("… {} more changed paths not kept", c.more);
            lines.push(self.paint(&more, |s| s.dimmed()));
        }
        ("state".into(), title, lines)
    }

    fn activity(&self, a: &ActivityView) -> (String, String, Vec<String>) {
        let title = format!(
            "{} {} · {}",
            a.activity_type.as_deref().unwrap_or("(no type)"),
            a.id.as_deref().unwrap_or("(no messageId)"),
            plural(a.updates, "update")
        );
        ("activity".into(), title, self.text(&json_block(&a.content)))
    }

    /// A compact JSON value, shortened unless `full`.
    fn value(&self, value: &Value) -> String {
        let text = value.to_string();
        if self.full {
            text
        } else {
            shorten(&text, VALUE_CHARS)
        }
    }

    /// Text as lines, folded when long unless `full`.
    fn text(&self, text: &str) -> Vec<String> {
        if text.is_empty() {
            return vec![self.paint("(no text)", |s| s.dimmed())];
        }
        let lines: Vec<&str> = text.lines().collect();
        if self.full || (lines.len() <= FOLD_LINES && text.chars().count() <= FOLD_CHARS) {
            return lines.into_iter().map(str::to_owned).collect();
        }
        let mut shown = Vec::new();
        let mut chars = 0;
        for line in lines.iter().take(FOLD_LINES) {
            let room = FOLD_CHARS.saturating_sub(chars);
            if room == 0 {
                break;
            }
            let cut: String = line.chars().take(room).collect();
            chars += cut.chars().count();
            shown.push(cut);
        }
        let hidden_lines = lines.len() - shown.len();
        let note = if hidden_lines > 0 {
            format!(
                "… {hidden_lines} more {} ({} characters in all; --full shows all)",
                if hidden_lines == 1 { "line" } else { "lines" },
                text.chars().count()
            )
        } else {
            let hidden = text.chars().count() - chars - (shown.len() - 1);
            format!("… {hidden} more characters (--full shows all)")
        };
        shown.push(self.paint(&note, |s| s.dimmed()));
        shown
    }

    fn diagnostic(&mut self, d: &DiagnosticView, indent: &str) -> io::Result<()> {
        let d = &d.diagnostic;
        let label = match d.severity {
            Severity::Error => self.paint(&format!("error[{}]", d.rule), |s| s.red().bold()),
            Severity::Warning => self.paint(&format!("warning[{}]", d.rule), |s| s.yellow().bold()),
            Severity::Note => self.paint(&format!("note[{}]", d.rule), |s| s.bold()),
        };
        let at = d
            .event_index
            .map(|i| format!(" (#{i})"))
            .unwrap_or_default();
        writeln!(self.out, "{indent}{label}{at}: {}", d.message)?;
        if let (Some(pointer), Some(keyword)) = (&d.pointer, &d.keyword) {
            let pointer = if pointer.is_empty() {
                "the event root"
            } else {
                pointer
            };
            writeln!(
                self.out,
                "{indent}  at {pointer}, schema keyword `{keyword}`"
            )?;
        }
        if let Some(help) = &d.help {
            let label = self.paint("help", |s| s.bold());
            writeln!(self.out, "{indent}  {label}: {help}")?;
        }
        Ok(())
    }
}

/// Where a loose diagnostic sits among items.
fn position(d: &DiagnosticView) -> u64 {
    d.diagnostic.event_index.unwrap_or(u64::MAX)
}

/// Puts a label before the first line and aligns the rest under it.
fn labelled(lines: &mut Vec<String>, label: &str, body: Vec<String>) {
    let pad = " ".repeat(label.len() + 1);
    for (i, line) in body.into_iter().enumerate() {
        if i == 0 {
            lines.push(format!("{label} {line}"));
        } else {
            lines.push(format!("{pad}{line}"));
        }
    }
}

/// Text that is a JSON object or array, as [`json_block`] shows it; anything else as it is.
pub fn pretty_json_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => json_block(&value),
        _ => text.to_owned(),
    }
}

/// JSON on one line when short; indented when that fits the fold; else on one line if that
/// fits the fold; else indented (and folded).
pub fn json_block(value: &Value) -> String {
    let compact = value.to_string();
    let chars = compact.chars().count();
    if chars <= 120 {
        return compact;
    }
    let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| compact.clone());
    if pretty.lines().count() <= FOLD_LINES || chars > FOLD_CHARS {
        pretty
    } else {
        compact
    }
}

/// A run outcome in words: `success`, `success · pending tool calls: a, b`, `interrupt: …`.
pub fn describe_outcome(outcome: &Value) -> String {
    let kind = outcome
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("(no type)");
    let mut rest = outcome.clone();
    if let Value::Object(map) = &mut rest {
        map.remove("type");
        // An empty list names nothing (a client derives the pending calls from the stream).
        if let Some(Value::Array(ids)) = map
            .remove("pendingToolCallIds")
            .filter(|ids| ids.as_array().is_some_and(|ids| !ids.is_empty()))
        {
            let ids: Vec<String> = ids
                .iter()
                .map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_owned))
                .collect();
            let mut text = format!("{kind} · pending tool calls: {}", ids.join(", "));
            if !map.is_empty() {
                text.push_str(&format!(" · {}", shorten(&rest.to_string(), 200)));
            }
            return text;
        }
        if map.is_empty() {
            return kind.to_owned();
        }
    }
    format!("{kind} · {}", shorten(&rest.to_string(), 200))
}

/// Token usage (a list of per-model counts), one line each.
pub fn describe_usage(usage: &Value) -> Vec<String> {
    let Value::Array(entries) = usage else {
        return vec![shorten(&usage.to_string(), 200)];
    };
    entries
        .iter()
        .map(|u| {
            let n = |k: &str| u.get(k).and_then(Value::as_u64);
            let who: Vec<&str> = ["provider", "model"]
                .iter()
                .filter_map(|k| u.get(*k).and_then(Value::as_str))
                .collect();
            let mut parts = Vec::new();
            if let Some(v) = n("inputTokens") {
                let mut part = format!("{v} in");
                if let Some(c) = n("cachedInputTokens") {
                    part.push_str(&format!(" ({c} cached)"));
                }
                parts.push(part);
            }
            if let Some(v) = n("outputTokens") {
                let mut part = format!("{v} out");
                if let Some(r) = n("reasoningTokens") {
                    part.push_str(&format!(" ({r} reasoning)"));
                }
                parts.push(part);
            }
            if let Some(v) = n("totalTokens") {
                parts.push(format!("{v} total"));
            }
            let counts = if parts.is_empty() {
                shorten(&u.to_string(), 200)
            } else {
                parts.join(", ")
            };
            if who.is_empty() {
                counts
            } else {
                format!("{}: {counts}", who.join(" "))
            }
        })
        .collect()
}

/// `#3` or `#3–9`.
pub fn range(first: u64, last: u64) -> String {
    if first == last {
        format!("#{first}")
    } else {
        format!("#{first}–{last}")
    }
}

/// `+25 ms` from the start of the run, when both have timestamps.
fn since(timestamp: Option<i64>, run: &RunView) -> String {
    match (timestamp, run.started_at) {
        (Some(t), Some(s)) if run.status != "none" => format!("+{}", millis(t - s)),
        _ => String::new(),
    }
}

/// `25 ms`, `1.25 s`, `2 min 5 s`.
pub fn millis(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    if ms < 1000 {
        format!("{sign}{ms} ms")
    } else if ms < 60_000 {
        format!("{sign}{:.2} s", ms as f64 / 1000.0)
    } else {
        format!("{sign}{} min {} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// At most `max` characters, with an ellipsis.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Why some runs are summarised, and how to see them.
pub fn summary_reason() -> String {
    use crate::inspect::{DETAIL_FIRST, DETAIL_FLAGGED, DETAIL_LAST};
    format!(
        "a long stream is shown item by item for its first {DETAIL_FIRST} and last \
         {DETAIL_LAST} runs and its first {DETAIL_FLAGGED} other runs with findings; \
         --full shows every run"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_long_text() {
        let mut sink = Vec::new();
        let human = Human::new(&mut sink, false, false);
        let long: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let lines = human.text(&long);
        assert_eq!(lines.len(), FOLD_LINES + 1);
        assert!(lines[FOLD_LINES].contains("… 12 more lines"), "{lines:?}");
        let wide = "x".repeat(2000);
        let lines = human.text(&wide);
        assert_eq!(lines[0].len(), FOLD_CHARS);
        assert!(lines[1].contains("1400 more characters"), "{lines:?}");
        let full = Human::new(&mut sink, false, true);
        assert_eq!(full.text(&long).len(), 20);
    }

    #[test]
    fn words() {
        assert_eq!(millis(25), "25 ms");
        assert_eq!(millis(1250), "1.25 s");
        assert_eq!(millis(125_000), "2 min 5 s");
        assert_eq!(
            describe_outcome(&serde_json::json!({"type": "success", "pendingToolCallIds": ["a"]})),
            "success · pending tool calls: a"
        );
        assert_eq!(
            describe_outcome(&serde_json::json!({"type": "success", "pendingToolCallIds": []})),
            "success"
        );
        assert_eq!(
            describe_usage(
                &serde_json::json!([{"provider": "p", "model": "m", "inputTokens": 10, "outputTokens": 5, "reasoningTokens": 2, "totalTokens": 15}])
            ),
            vec!["p m: 10 in, 5 out (2 reasoning), 15 total"]
        );
    }
}
