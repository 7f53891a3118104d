//! The HTML report: one self-contained page (inline style and script, nothing fetched; a
//! Content-Security-Policy forbids anything else) with a timeline, the conversation as a client
//! renders it, the state at any selected event, a filterable event table, and diagnostics marked
//! on the timeline and in the table. Everything embedded is escaped for where it goes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Map, Value};

use super::human::{describe_outcome, describe_usage, millis, plural, pretty_json_text, shorten};
use super::{
    DiagnosticView, FrameKind, Inspection, Item, ItemKind, PlainDelta, RunView, StateFrames,
};
use agui_lens_core::check::diagnostic::Severity;
use agui_lens_core::protocol::event::{Event, EventType};
use agui_lens_core::read::halves;

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Rows in the event table; later events are left out (and the page says so).
const MAX_ROWS: usize = 10_000;
/// Characters of one event's JSON kept for the page.
const MAX_EVENT_TEXT: usize = 4_000;
/// Characters of merged delta text kept per row.
const MAX_MERGED_TEXT: usize = 4_000;
/// Lanes on the timeline.
const MAX_LANES: usize = 500;
/// Characters of one message's text in the conversation.
const MAX_MESSAGE_TEXT: usize = 100_000;

/// The event table, gathered while the stream is read. Consecutive deltas of one message or
/// tool call share a row, with a count.
#[derive(Debug, Default)]
pub struct Rows {
    rows: Vec<Row>,
    /// Events left out once the table was full.
    left_out: u64,
    /// Events merged into an earlier row.
    merged: u64,
    /// Rows whose text was cut.
    cut: u64,
}

#[derive(Debug)]
struct Row {
    first: u64,
    last: u64,
    count: u64,
    timestamp: Option<i64>,
    event_type: String,
    /// The message or tool call a delta belongs to; rows merge on it.
    stream: Option<String>,
    summary: String,
    bytes: u64,
    text: String,
    merged_text: String,
}

impl Rows {
    pub fn event(&mut self, event: &Event, raw: &[u8]) {
        let ty = event.type_name().unwrap_or("(no type)");
        let stream = delta_stream(event);
        if let Some(stream) = &stream {
            if self.continues(ty, event.loc.index, stream, || delta_of(event), raw.len()) {
                return;
            }
        }
        if self.rows.len() >= MAX_ROWS {
            self.left_out += 1;
            return;
        }
        let text = if mentions_encrypted_value(raw) {
            let mut value = event.value.clone();
            redact_encrypted(&mut value);
            value.to_string().into()
        } else {
            text_of(raw)
        };
        let merged_text = if stream.is_some() {
            delta_of(event)
        } else {
            String::new()
        };
        let summary = match &stream {
            Some(_) => String::new(),
            None => summary_of(event),
        };
        let row = Row {
            first: event.loc.index,
            last: event.loc.index,
            count: 1,
            timestamp: event.timestamp_millis(),
            event_type: ty.to_owned(),
            stream,
            summary,
            bytes: raw.len() as u64,
            text: String::new(),
            merged_text,
        };
        self.push(row, &text);
    }

    /// Takes a plain content delta read without building its event, as [`Rows::event`] takes
    /// the event; `false` when it needs the event after all (its bytes mention an encrypted
    /// value, which the event's text is shown without).
    pub fn delta(&mut self, delta: &PlainDelta<'_>, raw: &[u8]) -> bool {
        let ty = delta.kind.as_str();
        if self.continues(
            ty,
            delta.index,
            delta.id,
            || delta.delta.to_owned(),
            raw.len(),
        ) {
            return true;
        }
        if self.rows.len() >= MAX_ROWS {
            self.left_out += 1;
            return true;
        }
        // A new row shows the event's text, which the event's own path shows redacted.
        if mentions_encrypted_value(raw) {
            return false;
        }
        let row = Row {
            first: delta.index,
            last: delta.index,
            count: 1,
            timestamp: delta.timestamp,
            event_type: ty.to_owned(),
            stream: Some(delta.id.to_owned()),
            summary: String::new(),
            bytes: raw.len() as u64,
            text: String::new(),
            merged_text: delta.delta.to_owned(),
        };
        self.push(row, &text_of(raw));
        true
    }

    /// Merges a delta of `stream` into the last row when that row is the same stream's,
    /// ending at the event before.
    fn continues(
        &mut self,
        ty: &str,
        index: u64,
        stream: &str,
        delta: impl FnOnce() -> String,
        bytes: usize,
    ) -> bool {
        let Some(last) = self.rows.last_mut() else {
            return false;
        };
        let continues = last.event_type == ty
            && last.last + 1 == index
            && (stream.is_empty() || last.stream.as_deref() == Some(stream));
        if !continues {
            return false;
        }
        last.last = index;
        last.count += 1;
        last.bytes += bytes as u64;
        self.merged += 1;
        if last.merged_text.len() < MAX_MERGED_TEXT {
            halves::append(&mut last.merged_text, &delta());
            if last.merged_text.len() >= MAX_MERGED_TEXT {
                last.merged_text = shorten(&last.merged_text, MAX_MERGED_TEXT);
                self.cut += 1;
            }
        }
        true
    }

    /// Adds a row showing `text` (cut when long).
    fn push(&mut self, mut row: Row, text: &str) {
        row.text = if text.chars().count() > MAX_EVENT_TEXT {
            self.cut += 1;
            format!(
                "{} (cut: {} bytes in all)",
                shorten(text, MAX_EVENT_TEXT),
                row.bytes
            )
        } else {
            text.to_owned()
        };
        self.rows.push(row);
    }
}

impl Row {
    /// The row's line in the table: a delta stream's text so far, or what the event says.
    fn summary(&self) -> std::borrow::Cow<'_, str> {
        match &self.stream {
            Some(stream) => summary_of_deltas(Some(stream), &self.merged_text).into(),
            None => self.summary.as_str().into(),
        }
    }
}

/// An event's bytes as text. They are almost always UTF-8, which `from_utf8` confirms several
/// times faster than `from_utf8_lossy` reads them.
fn text_of(raw: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(raw) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

/// Whether an event's bytes mention `encryptedValue` (its text is then shown redacted). The
/// searcher is built once: building one per event cost more than the search.
fn mentions_encrypted_value(raw: &[u8]) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"encryptedValue"));
    FINDER.find(raw).is_some()
}

/// Replaces every `encryptedValue` with a note: encrypted values are shown as present, never
/// printed.
fn redact_encrypted(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "encryptedValue" {
                    let len = v.as_str().map_or(0, str::len);
                    *v = Value::String(format!("(encrypted value, {len} bytes, not shown)"));
                } else {
                    redact_encrypted(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_encrypted),
        _ => {}
    }
}

/// For a delta event, the id of its message or tool call (empty for a chunk that continues
/// the previous one without naming it); `None` for other events.
fn delta_stream(event: &Event) -> Option<String> {
    use EventType::*;
    let field = match event.kind? {
        TextMessageContent
        | TextMessageChunk
        | ReasoningMessageContent
        | ReasoningMessageChunk
        | ThinkingTextMessageContent => "messageId",
        ToolCallArgs | ToolCallChunk => "toolCallId",
        _ => return None,
    };
    Some(event.str_field(field).unwrap_or_default().to_owned())
}

/// How much of a patch's operations a row of the event table lists.
const SUMMARY_OPS_LEN: usize = 4000;

fn delta_of(event: &Event) -> String {
    match event.field("delta") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

fn summary_of_deltas(stream: Option<&str>, text: &str) -> String {
    let text = shorten(text, 160);
    match stream {
        Some(id) if !id.is_empty() => format!("{id} · “{text}”"),
        _ => format!("“{text}”"),
    }
}

/// A line about an event for the table.
fn summary_of(event: &Event) -> String {
    use EventType::*;
    let s = |k: &str| event.str_field(k).unwrap_or("").to_owned();
    let text = match event.kind {
        Some(RunStarted) => {
            let mut text = format!("run {} · thread {}", s("runId"), s("threadId"));
            if let Some(parent) = event.str_field("parentRunId") {
                text.push_str(&format!(" · parent {parent}"));
            }
            text
        }
        Some(RunFinished) => match event.field("outcome") {
            Some(outcome) => describe_outcome(outcome),
            None => "finished".into(),
        },
        Some(RunError) => format!("{} {}", s("code"), s("message")),
        Some(TextMessageStart) => format!("{} {}", s("role"), s("messageId")),
        Some(ToolCallStart) => format!("{} {}", s("toolCallName"), s("toolCallId")),
        Some(ToolCallResult) => {
            let content = match event.field("content") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            format!("{} · {}", s("toolCallId"), content)
        }
        Some(StateDelta) => {
            // The operations, as far as a row shows them; a large patch is counted past that.
            let mut shown = String::new();
            let mut count = 0usize;
            let mut add = |op: &Value| {
                if shown.len() < SUMMARY_OPS_LEN {
                    if count > 0 {
                        shown.push_str(", ");
                    }
                    shown.push_str(op.get("op").and_then(Value::as_str).unwrap_or("?"));
                    shown.push(' ');
                    shown.push_str(op.get("path").and_then(Value::as_str).unwrap_or("?"));
                }
                count += 1;
            };
            match (&event.patch, event.field("delta")) {
                (Some(raw), _) => raw.each(|_, op| {
                    add(&op);
                    true
                }),
                (None, Some(Value::Array(ops))) => ops.iter().for_each(&mut add),
                (None, _) => {}
            }
            if shown.len() >= SUMMARY_OPS_LEN {
                shown.push_str(&format!(", … ({count} operations)"));
            }
            shown
        }
        Some(StateSnapshot) => event
            .field("snapshot")
            .map(|v| v.to_string())
            .unwrap_or_default(),
        Some(MessagesSnapshot) => plural(
            event
                .field("messages")
                .and_then(Value::as_array)
                .map_or(0, Vec::len) as u64,
            "message",
        ),
        Some(StepStarted | StepFinished) => s("stepName"),
        Some(Custom) => format!(
            "{} {}",
            s("name"),
            event
                .field("value")
                .map(|v| v.to_string())
                .unwrap_or_default()
        ),
        Some(ReasoningEncryptedValue) => {
            format!("{} {} (value not shown)", s("subtype"), s("entityId"))
        }
        Some(SubagentStarted) => format!("{} {}", s("name"), s("subagentRunId")),
        Some(SubagentError) => format!("{} {}", s("subagentRunId"), s("message")),
        Some(ActivitySnapshot | ActivityDelta) => {
            format!("{} {}", s("activityType"), s("messageId"))
        }
        _ => ["messageId", "toolCallId", "subagentRunId", "name"]
            .iter()
            .filter_map(|k| event.str_field(k))
            .collect::<Vec<_>>()
            .join(" "),
    };
    shorten(text.trim(), 160)
}

/// Text escaped for HTML content and attribute values.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`write_script_json`] into a string.
#[cfg(test)]
pub fn script_json(value: &Value) -> String {
    let mut out = Vec::new();
    write_script_json(value, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// Writes `value` as JSON to embed in a `<script type="application/json">`, as it is
/// serialised (no copy of the text): no `<`, `>` or `&` appear as such, so no text inside
/// (`</script>`, `<!--`) can end the element early.
pub fn write_script_json(value: &impl serde::Serialize, out: &mut dyn Write) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, ScriptSafe);
    value.serialize(&mut serializer)?;
    out.flush()
}

/// serde_json's compact output, with what could end a script element and the two line
/// separators JavaScript once read as line ends written as `\u` escapes. Outside strings
/// JSON has none of those characters, so only the text of strings (and of raw JSON, whose
/// strings hold them if anything does) is looked at.
struct ScriptSafe;

/// The bytes [`ScriptSafe`] may replace: `<`, `>`, `&`, and the lead byte of U+2028/U+2029.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'<' as usize] = true;
    table[b'>' as usize] = true;
    table[b'&' as usize] = true;
    table[0xE2] = true;
    table
};

impl ScriptSafe {
    fn write_safe<W: ?Sized + Write>(writer: &mut W, text: &str) -> io::Result<()> {
        let bytes = text.as_bytes();
        // Bytes from `start` on are written as they are, up to the next one replaced.
        let mut start = 0;
        let mut i = 0;
        // Most text has none of the four bytes looked for: skip to the next one.
        while let Some(at) = bytes[i..].iter().position(|&b| SPECIAL[usize::from(b)]) {
            i += at;
            let (replacement, len): (&[u8], usize) = match bytes[i] {
                b'<' => (b"\\u003c", 1),
                b'>' => (b"\\u003e", 1),
                b'&' => (b"\\u0026", 1),
                0xE2 => match bytes.get(i + 1..i + 3) {
                    Some([0x80, 0xA8]) => (b"\\u2028", 3),
                    Some([0x80, 0xA9]) => (b"\\u2029", 3),
                    _ => {
                        i += 1;
                        continue;
                    }
                },
                _ => {
                    i += 1;
                    continue;
                }
            };
            writer.write_all(&bytes[start..i])?;
            writer.write_all(replacement)?;
            i += len;
            start = i;
        }
        writer.write_all(&bytes[start..])
    }
}

impl serde_json::ser::Formatter for ScriptSafe {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        Self::write_safe(writer, fragment)
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        Self::write_safe(writer, fragment)
    }
}

/// Where events sit on the timeline: by timestamp when every event has one, else by index.
struct Axis {
    by_time: bool,
    start: f64,
    end: f64,
}

impl Axis {
    fn new(inspection: &Inspection) -> Axis {
        let runs = &inspection.runs;
        if inspection.timestamped {
            let start = runs.iter().filter_map(|r| r.started_at).min();
            let end = runs.iter().filter_map(|r| r.ended_at).max();
            if let (Some(start), Some(end)) = (start, end) {
                if end > start {
                    return Axis {
                        by_time: true,
                        start: start as f64,
                        end: end as f64,
                    };
                }
            }
        }
        let start = runs.iter().map(|r| r.first_event).min().unwrap_or(0);
        let end = runs.iter().map(|r| r.last_event).max().unwrap_or(0);
        Axis {
            by_time: false,
            start: start as f64,
            end: (end.max(start + 1)) as f64,
        }
    }

    /// A position from 0 to 1.
    fn at(&self, index: u64, timestamp: Option<i64>) -> f64 {
        let v = match (self.by_time, timestamp) {
            (true, Some(t)) => t as f64,
            _ => index as f64,
        };
        ((v - self.start) / (self.end - self.start)).clamp(0.0, 1.0)
    }

    fn label(&self, at_end: bool) -> String {
        if self.by_time {
            if at_end {
                millis((self.end - self.start) as i64)
            } else {
                "0 ms".into()
            }
        } else if at_end {
            format!("event #{}", self.end as u64)
        } else {
            format!("event #{}", self.start as u64)
        }
    }
}

fn percent(x: f64) -> String {
    format!("{:.3}%", x * 100.0)
}

/// How every page starts, up to its title's own words: by it `inspect --html` tells a page it
/// wrote (which it replaces) from one it did not.
pub const PAGE_START: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
     <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
     <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
     <title>agui-lens inspect: ";

/// Writes the page. Its data (states and rows, the largest part of a long stream's page) is
/// written on another thread while the visible page is.
pub fn render(
    inspection: &Inspection,
    rows: &Rows,
    states: &StateFrames,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (page, data) = rayon::join(
        || {
            let mut page = Vec::new();
            visible(inspection, rows, states, &mut page).map(|()| page)
        },
        || {
            let mut data = Vec::new();
            write_script_json(&PageData { states, rows }, &mut data).map(|()| data)
        },
    );
    let (mut page, mut data) = (page?, data?);
    if inspection.halves {
        // A half of a UTF-16 pair nothing joined, as its escape (as `fold` writes it); in the
        // data, JSON a script reads back as the half.
        for part in [&mut page, &mut data] {
            let text = String::from_utf8_lossy(part);
            if let Cow::Owned(escaped) = halves::escape_stand_ins(&text) {
                *part = escaped.into_bytes();
            }
        }
    }
    out.write_all(&page)?;
    write!(out, "<script type=\"application/json\" id=\"data\">")?;
    out.write_all(&data)?;
    writeln!(out, "</script>")?;
    writeln!(out, "<script>\n{SCRIPT}</script>\n</body>\n</html>")
}

/// The page up to its data: the header, timeline, conversation, table and diagnostics.
fn visible(
    inspection: &Inspection,
    rows: &Rows,
    states: &StateFrames,
    out: &mut dyn Write,
) -> io::Result<()> {
    let axis = Axis::new(inspection);
    let title = escape(&inspection.path);
    write!(
        out,
        "{PAGE_START}{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n"
    )?;
    header(inspection, rows, states, &axis, out)?;
    timeline(inspection, &axis, out)?;
    writeln!(out, "<div class=\"columns\">")?;
    conversation(inspection, out)?;
    writeln!(
        out,
        "<section id=\"state\"><h2>State</h2><p id=\"state-at\">Select an event.</p>\
         <pre id=\"state-view\"></pre><h2>Event</h2><pre id=\"event-view\"></pre></section>"
    )?;
    writeln!(out, "</div>")?;
    let problems = all_diagnostics(inspection);
    table(rows, &problems, &axis, out)?;
    diagnostics(&problems, out)
}

fn header(
    inspection: &Inspection,
    rows: &Rows,
    states: &StateFrames,
    axis: &Axis,
    out: &mut dyn Write,
) -> io::Result<()> {
    let runs = inspection
        .runs
        .iter()
        .filter(|r| r.status != "none")
        .count();
    writeln!(
        out,
        "<header><h1>agui-lens inspect <span class=\"path\">{}</span></h1>",
        escape(&inspection.path)
    )?;
    writeln!(
        out,
        "<p class=\"summary\">{} · {} · <span class=\"{}\">{}</span> · <span class=\"{}\">{}</span> · timeline by {}</p>",
        plural(inspection.events, "event"),
        plural(runs as u64, "run"),
        if inspection.errors > 0 {
            "error"
        } else {
            "none"
        },
        plural(inspection.errors, "error"),
        if inspection.warnings > 0 {
            "warning"
        } else {
            "none"
        },
        plural(inspection.warnings, "warning"),
        if axis.by_time {
            "timestamp"
        } else {
            "event index"
        },
    )?;
    if let Some(failure) = &inspection.failure {
        writeln!(
            out,
            "<p class=\"failure error\">{}</p>",
            escape(&crate::inspect::stats::not_read_whole(failure))
        )?;
    }
    let mut notes = Vec::new();
    if rows.merged > 0 {
        notes.push(format!(
            "{} consecutive deltas of one message or tool call share a row with the delta before them (the row shows how many).",
            rows.merged
        ));
    }
    if rows.left_out > 0 {
        notes.push(format!(
            "Capped: the event table holds the first {MAX_ROWS} rows; {} later events are left out.",
            rows.left_out
        ));
    }
    if rows.cut > 0 {
        notes.push(format!(
            "Capped: {} rows show their event's text cut to {MAX_EVENT_TEXT} characters.",
            rows.cut
        ));
    }
    if inspection.runs_summarised > 0 {
        notes.push(format!(
            "Summarised: {} are not drawn item by item ({}).",
            plural(inspection.runs_summarised, "run"),
            crate::inspect::human::summary_reason()
        ));
    }
    if let Some(at) = states.capped_at {
        notes.push(format!(
            "Capped: the state is kept up to event #{at} only (the page holds at most 48 MiB of state history)."
        ));
    }
    let lanes = inspection
        .runs
        .iter()
        .flat_map(|r| &r.items)
        .filter(|i| lane_of(i))
        .count();
    if lanes > MAX_LANES {
        notes.push(format!(
            "Capped: the timeline shows the first {MAX_LANES} of {lanes} lanes."
        ));
    }
    if !notes.is_empty() {
        writeln!(out, "<ul class=\"notes\">")?;
        for note in notes {
            let class = if note.starts_with("Capped") {
                " class=\"capped\""
            } else {
                ""
            };
            writeln!(out, "<li{class}>{}</li>", escape(&note))?;
        }
        writeln!(out, "</ul>")?;
    }
    writeln!(out, "<div id=\"runs\">")?;
    for run in &inspection.runs {
        run_card(run, out)?;
    }
    writeln!(out, "</div></header>")
}

fn run_card(run: &RunView, out: &mut dyn Write) -> io::Result<()> {
    let mut parts = Vec::new();
    let title = if run.status == "none" {
        "events outside any run".to_owned()
    } else {
        format!("run {}", run.run_id.as_deref().unwrap_or("(no runId)"))
    };
    if let Some(thread) = &run.thread_id {
        parts.push(format!("thread {thread}"));
    }
    if let Some(parent) = &run.parent_run_id {
        parts.push(format!("parent run {parent}"));
    }
    match run.status {
        "finished" => parts.push(format!(
            "finished: {}",
            run.outcome
                .as_ref()
                .map_or("success (no outcome given)".into(), describe_outcome)
        )),
        "error" => parts.push(format!(
            "error: {}",
            run.error
                .as_ref()
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
        )),
        "open" => parts.push("unfinished: the stream ends inside the run".into()),
        _ => {}
    }
    parts.push(format!(
        "events #{}–{} ({})",
        run.first_event,
        run.last_event,
        plural(run.events, "event")
    ));
    if let Some(ms) = run.duration_ms {
        parts.push(format!("{} in all", millis(ms)));
    }
    if let Some(ms) = run.first_event_after_ms {
        parts.push(format!("first event after {}", millis(ms)));
    }
    if let Some(usage) = &run.usage {
        parts.push(format!("usage {}", describe_usage(usage).join("; ")));
    }
    if let Some(items) = run.items_left_out {
        parts.push(format!("summarised: {} not drawn", plural(items, "item")));
    }
    writeln!(
        out,
        "<div class=\"run status-{}\" data-event=\"{}\"><b>{}</b> · {}</div>",
        run.status,
        run.first_event,
        escape(&title),
        escape(&parts.join(" · "))
    )
}

fn lane_of(item: &Item) -> bool {
    match &item.kind {
        ItemKind::Message(m) => !m.from_input,
        other => other.has_lane(),
    }
}

fn lane_label(item: &Item) -> (&'static str, String) {
    match &item.kind {
        ItemKind::Message(m) => (
            "message",
            format!(
                "{} {}",
                if m.role == "?" { "message" } else { &m.role },
                m.id.as_deref().unwrap_or("")
            ),
        ),
        ItemKind::ToolCall(c) => (
            "tool",
            format!(
                "tool {} {}",
                c.name.as_deref().unwrap_or("(unnamed)"),
                c.id.as_deref().unwrap_or("")
            ),
        ),
        ItemKind::Step(s) => ("step", format!("step {}", s.name)),
        ItemKind::Reasoning(r) => (
            "reasoning",
            format!("reasoning {}", r.id.as_deref().unwrap_or("")),
        ),
        ItemKind::Subagent(s) => (
            "subagent",
            format!(
                "subagent {}",
                s.name.as_deref().or(s.id.as_deref()).unwrap_or("")
            ),
        ),
        _ => ("other", String::new()),
    }
}

fn mark(d: &DiagnosticView, axis: &Axis, out: &mut dyn Write) -> io::Result<()> {
    let Some(index) = d.diagnostic.event_index else {
        return Ok(());
    };
    let x = axis.at(index, d.timestamp);
    let class = d.diagnostic.severity.as_str();
    write!(
        out,
        "<span class=\"mark {class}\" style=\"left:{}\" data-event=\"{index}\" title=\"{}\"></span>",
        percent(x),
        escape(&format!(
            "{class}[{}] #{index}: {}",
            d.diagnostic.rule, d.diagnostic.message
        ))
    )
}

fn timeline(inspection: &Inspection, axis: &Axis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "<section id=\"timeline\"><h2>Timeline</h2>\n<div class=\"axis\"><span>{}</span><span>{}</span></div>\n<div class=\"lanes\">",
        escape(&axis.label(false)),
        escape(&axis.label(true))
    )?;
    let mut lanes = 0;
    for run in &inspection.runs {
        let (a, b) = (
            axis.at(run.first_event, run.started_at),
            axis.at(run.last_event, run.ended_at),
        );
        let label = if run.status == "none" {
            "outside any run".to_owned()
        } else {
            format!("run {}", run.run_id.as_deref().unwrap_or(""))
        };
        write!(
            out,
            "<div class=\"lane run\" data-first=\"{}\" data-last=\"{}\"><span class=\"label\" title=\"{}\">{}</span><span class=\"track\"><span class=\"bar\" style=\"left:{};width:{}\"></span>",
            run.first_event,
            run.last_event,
            escape(&label),
            escape(&label),
            percent(a),
            percent(b - a)
        )?;
        for d in &run.diagnostics {
            mark(d, axis, out)?;
        }
        writeln!(out, "</span></div>")?;
        for item in run.items.iter().filter(|i| lane_of(i)) {
            lanes += 1;
            if lanes > MAX_LANES {
                break;
            }
            let (class, label) = lane_label(item);
            let a = axis.at(item.first_event, item.started_at);
            let b = axis.at(item.last_event, item.ended_at);
            write!(
                out,
                "<div class=\"lane {class}\" data-first=\"{}\" data-last=\"{}\"><span class=\"label\" title=\"{}\">{}</span><span class=\"track\"><span class=\"bar\" style=\"left:{};width:{}\"></span>",
                item.first_event,
                item.last_event,
                escape(&label),
                escape(&label),
                percent(a),
                percent(b - a)
            )?;
            for d in &item.diagnostics {
                mark(d, axis, out)?;
            }
            writeln!(out, "</span></div>")?;
        }
    }
    // One lane with a tick per state change, one with every problem.
    write!(
        out,
        "<div class=\"lane state\"><span class=\"label\">state changes</span><span class=\"track\">"
    )?;
    for run in &inspection.runs {
        for item in &run.items {
            if let ItemKind::StateChange(change) = &item.kind {
                write!(
                    out,
                    "<span class=\"tick\" style=\"left:{}\" data-event=\"{}\" title=\"{}\"></span>",
                    percent(axis.at(item.first_event, item.started_at)),
                    item.first_event,
                    escape(&format!(
                        "#{} state {}: {} changed paths",
                        item.first_event,
                        change.source,
                        change.changes.len() + change.more
                    ))
                )?;
            }
        }
    }
    writeln!(out, "</span></div>")?;
    write!(
        out,
        "<div class=\"lane problems\"><span class=\"label\">problems</span><span class=\"track\">"
    )?;
    for d in all_diagnostics(inspection) {
        mark(d, axis, out)?;
    }
    writeln!(out, "</span></div>")?;
    writeln!(out, "<div id=\"cursor\" hidden></div></div></section>")
}

/// The tool calls a `tool-args` finding is about, by call id, with the first such finding:
/// what the stream sent for them is not what the conversation (the client's end state) shows.
fn flagged_calls(inspection: &Inspection) -> HashMap<&str, &str> {
    let mut flagged = HashMap::new();
    for view in all_diagnostics(inspection) {
        let d = &view.diagnostic;
        if d.rule.rule().family() != "tool-args" {
            continue;
        }
        let Some((_, rest)) = d.message.split_once("tool call \"") else {
            continue;
        };
        if let Some((id, _)) = rest.split_once('"') {
            flagged.entry(id).or_insert(d.message.as_str());
        }
    }
    flagged
}

fn conversation(inspection: &Inspection, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"conversation\"><h2>Conversation</h2>")?;
    if inspection.history_unknown {
        writeln!(
            out,
            "<p class=\"note\">The capture does not say what the client held before its first \
             run (that RUN_STARTED carries no input.messages). A message a MESSAGES_SNAPSHOT adds \
             without streaming it (the user's prompt, as a rule) stands where a client that held \
             nothing puts it: after the messages streamed before the snapshot.</p>"
        )?;
    }
    let flagged = flagged_calls(inspection);
    for (thread, folded) in &inspection.threads {
        if inspection.threads.len() > 1 || thread.is_some() {
            writeln!(
                out,
                "<h3>thread {}</h3>",
                escape(thread.as_deref().unwrap_or("(none)"))
            )?;
        }
        if folded.messages.is_empty() {
            writeln!(out, "<p class=\"empty\">No messages.</p>")?;
        }
        for message in &folded.messages {
            conversation_message(message, &flagged, out)?;
        }
        if !folded.pending_interrupts.is_empty() {
            writeln!(
                out,
                "<div class=\"msg interrupt\"><div class=\"who\">pending interrupts</div><pre>{}</pre></div>",
                escape(
                    &serde_json::to_string_pretty(&folded.pending_interrupts).unwrap_or_default()
                )
            )?;
        }
    }
    writeln!(out, "</section>")
}

fn conversation_message(
    message: &Map<String, Value>,
    flagged: &HashMap<&str, &str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let s = |k: &str| message.get(k).and_then(Value::as_str).unwrap_or("");
    let role = s("role");
    let role_class: String = role
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    write!(
        out,
        "<div class=\"msg role-{role_class}\"><div class=\"who\">{} <code>{}</code></div>",
        escape(if role.is_empty() { "(no role)" } else { role }),
        escape(s("id"))
    )?;
    let content = message.get("content");
    match role {
        "reasoning" => {
            write!(
                out,
                "<details><summary>reasoning</summary><div class=\"text\">{}</div></details>",
                escape(&content_text(content))
            )?;
        }
        "activity" => {
            write!(
                out,
                "<div class=\"activity-type\">{}</div><pre>{}</pre>",
                escape(s("activityType")),
                escape(
                    &serde_json::to_string_pretty(content.unwrap_or(&Value::Null))
                        .unwrap_or_default()
                )
            )?;
        }
        "tool" => {
            write!(
                out,
                "<div class=\"for\">result of <code>{}</code></div><pre>{}</pre>",
                escape(s("toolCallId")),
                escape(&pretty_json_text(&content_text(content)))
            )?;
        }
        _ => {
            let text = content_text(content);
            if !text.is_empty() {
                write!(out, "<div class=\"text\">{}</div>", escape(&text))?;
            }
        }
    }
    for call in message
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = call.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        let args = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
        let finding = match flagged.get(id) {
            Some(message) => format!(
                "<div class=\"flagged\">the streamed arguments were flagged: {}</div>",
                escape(message)
            ),
            None => String::new(),
        };
        write!(
            out,
            "<div class=\"tool-call\"><div class=\"who\">tool call {} <code>{}</code></div><pre>{}</pre>{finding}{}</div>",
            escape(name),
            escape(id),
            escape(&shorten(&pretty_json_text(args), MAX_MESSAGE_TEXT)),
            if call.get("encryptedValue").is_some() {
                "<div class=\"encrypted\">encrypted value present (not shown)</div>"
            } else {
                ""
            }
        )?;
    }
    if message.get("encryptedValue").is_some() {
        write!(
            out,
            "<div class=\"encrypted\">encrypted value present (not shown)</div>"
        )?;
    }
    writeln!(out, "</div>")
}

/// A message's content as text: a string, or the text parts of a list (other parts named).
fn content_text(content: Option<&Value>) -> String {
    let text = match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => part
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                Some(other) => format!("[{other}]"),
                None => part.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    if text.chars().count() > MAX_MESSAGE_TEXT {
        format!(
            "{} (cut: {} characters in all)",
            shorten(&text, MAX_MESSAGE_TEXT),
            text.chars().count()
        )
    } else {
        text
    }
}

/// Every diagnostic of the inspection, in stream order.
fn all_diagnostics(inspection: &Inspection) -> Vec<&DiagnosticView> {
    let mut all: Vec<&DiagnosticView> = inspection
        .runs
        .iter()
        .flat_map(|r| {
            r.diagnostics
                .iter()
                .chain(r.items.iter().flat_map(|i| &i.diagnostics))
        })
        .chain(&inspection.diagnostics)
        .collect();
    all.sort_by_key(|d| d.diagnostic.sort_key());
    all
}

fn table(
    rows: &Rows,
    problems: &[&DiagnosticView],
    axis: &Axis,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut types: Vec<&str> = rows.rows.iter().map(|r| r.event_type.as_str()).collect();
    types.sort_unstable();
    types.dedup();
    writeln!(
        out,
        "<section id=\"events\"><h2>Events</h2>\n<div class=\"filters\">\
         <input id=\"filter\" type=\"search\" placeholder=\"filter: type, id, text\" aria-label=\"filter rows\">\
         <select id=\"type-filter\" aria-label=\"event type\"><option value=\"\">all types</option>"
    )?;
    for ty in &types {
        write!(out, "<option>{}</option>", escape(ty))?;
    }
    writeln!(
        out,
        "</select><label><input type=\"checkbox\" id=\"problems-only\"> with problems only</label>\
         <span id=\"shown\"></span></div>\n<table><thead><tr><th>#</th><th>time</th><th>type</th>\
         <th>summary</th><th>bytes</th><th>problems</th></tr></thead><tbody>"
    )?;
    let start = rows.rows.iter().find_map(|r| r.timestamp);
    let mut pending = problems
        .iter()
        .filter(|d| d.diagnostic.event_index.is_some())
        .peekable();
    for (i, row) in rows.rows.iter().enumerate() {
        let mut found = Vec::new();
        while let Some(d) = pending.next_if(|d| d.diagnostic.event_index <= Some(row.last)) {
            found.push(*d);
        }
        let worst = found.iter().map(|d| d.diagnostic.severity).max();
        let class = match worst {
            Some(Severity::Error) => " class=\"problem error\"",
            Some(Severity::Warning) => " class=\"problem warning\"",
            Some(Severity::Note) | None => "",
        };
        let at = if row.count > 1 {
            format!("{}–{}", row.first, row.last)
        } else {
            row.first.to_string()
        };
        let ty = if row.count > 1 {
            Cow::Owned(format!("{} ×{}", escape(&row.event_type), row.count))
        } else {
            escape(&row.event_type)
        };
        let time = match (row.timestamp, start) {
            (Some(t), Some(s)) => format!("+{}", millis(t - s)),
            _ => String::new(),
        };
        write!(
            out,
            "<tr{class} data-row=\"{i}\" data-first=\"{}\" data-last=\"{}\" data-type=\"{}\" data-x=\"{:.5}\">\
             <td>{at}</td><td>{time}</td><td>{ty}</td><td>{}</td><td>{}</td><td>",
            row.first,
            row.last,
            escape(&row.event_type),
            axis.at(row.last, row.timestamp),
            escape(&row.summary()),
            row.bytes
        )?;
        for d in found {
            let class = d.diagnostic.severity.as_str();
            write!(
                out,
                "<div class=\"{class}\">{class}[{}]: {}</div>",
                d.diagnostic.rule,
                escape(&d.diagnostic.message)
            )?;
        }
        writeln!(out, "</td></tr>")?;
    }
    writeln!(out, "</tbody></table></section>")
}

fn diagnostics(problems: &[&DiagnosticView], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"problems\"><h2>Problems</h2>")?;
    if problems.is_empty() {
        writeln!(out, "<p class=\"empty\">`check` finds nothing wrong.</p>")?;
    } else {
        writeln!(out, "<ul>")?;
        for d in problems {
            let class = d.diagnostic.severity.as_str();
            let at = d
                .diagnostic
                .event_index
                .map(|i| format!(" data-event=\"{i}\""))
                .unwrap_or_default();
            let place = d
                .diagnostic
                .event_index
                .map(|i| format!(" #{i}"))
                .unwrap_or_default();
            write!(
                out,
                "<li class=\"{class}\"{at}><b>{class}[{}]</b>{place}: {}",
                d.diagnostic.rule,
                escape(&d.diagnostic.message)
            )?;
            if let Some(help) = &d.diagnostic.help {
                write!(out, "<div class=\"help\">help: {}</div>", escape(help))?;
            }
            writeln!(out, "</li>")?;
        }
        writeln!(out, "</ul>")?;
    }
    writeln!(out, "</section>")
}

/// The data the page's script reads: the state history and each row's text, serialised from
/// where they are kept (a copy of them would double what a large report holds).
struct PageData<'a> {
    states: &'a StateFrames,
    rows: &'a Rows,
}

impl serde::Serialize for PageData<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        struct Frames<'a>(&'a StateFrames);
        struct Frame<'a>(&'a super::StateFrame);
        struct Change<'a>(&'a (String, Option<Value>));
        struct RowsOf<'a>(&'a Rows);
        struct RowOf<'a>(&'a Row);
        impl serde::Serialize for Frames<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.frames.iter().map(Frame))
            }
        }
        impl serde::Serialize for Frame<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                // Keys in sorted order, as the page has always had them.
                let mut map = s.serialize_map(Some(3))?;
                if let FrameKind::Changes(changes) = &self.0.kind {
                    let changes: Vec<Change<'_>> = changes.iter().map(Change).collect();
                    map.serialize_entry("c", &changes)?;
                }
                map.serialize_entry("e", &self.0.event)?;
                map.serialize_entry("t", &self.0.thread)?;
                if let FrameKind::Whole(state) = &self.0.kind {
                    map.serialize_entry("w", state)?;
                }
                map.end()
            }
        }
        impl serde::Serialize for Change<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let (pointer, value) = self.0;
                let mut seq = s.serialize_seq(Some(1 + usize::from(value.is_some())))?;
                seq.serialize_element(pointer)?;
                if let Some(value) = value {
                    seq.serialize_element(value)?;
                }
                seq.end()
            }
        }
        impl serde::Serialize for RowsOf<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.rows.iter().map(RowOf))
            }
        }
        impl serde::Serialize for RowOf<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let row = self.0;
                let merged = row.count > 1;
                let mut map = s.serialize_map(Some(1 + usize::from(merged)))?;
                if merged {
                    map.serialize_entry("m", &row.merged_text)?;
                }
                map.serialize_entry("t", &row.text)?;
                map.end()
            }
        }
        let capped = self.states.capped_at;
        let mut map = serializer.serialize_map(Some(2 + usize::from(capped.is_some())))?;
        if let Some(at) = capped {
            map.serialize_entry("capped", &at)?;
        }
        map.serialize_entry("frames", &Frames(self.states))?;
        map.serialize_entry("rows", &RowsOf(self.rows))?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_events_bytes_are_shown_as_text_even_when_not_utf8() {
        assert!(matches!(
            text_of("{\"a\":\"é\"}".as_bytes()),
            Cow::Borrowed("{\"a\":\"é\"}")
        ));
        assert_eq!(text_of(b"{\"a\":\"\xff\"}"), "{\"a\":\"\u{FFFD}\"}");
    }

    #[test]
    fn encrypted_values_are_redacted() {
        let mut value = json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "r", "encryptedValue": "abc",
            "toolCalls": [{"id": "c", "encryptedValue": "defg"}]}]});
        redact_encrypted(&mut value);
        let text = value.to_string();
        assert!(!text.contains("abc") && !text.contains("defg"), "{text}");
        assert!(text.contains("(encrypted value, 4 bytes, not shown)"));
    }

    /// Every character that could end the script or a line in it is escaped wherever it
    /// stands (a key, a value, raw JSON, beside an escape serde_json writes), and every
    /// other character is kept as it was: the text reads back to the same value.
    #[test]
    fn script_json_escapes_strings_keys_and_raw_json() {
        let text = "a\u{2028}b\u{2029}\u{2026}\u{20AC}<&>\u{E2}\u{2028}\n\"<";
        let value = json!({ text: [text, 1.5, null], "k": {"\u{2028}": "\u{E2}\u{80}"} });
        let out = script_json(&value);
        assert!(
            !out.contains(['<', '>', '&', '\u{2028}', '\u{2029}']),
            "{out}"
        );
        assert!(
            out.contains(
                "a\\u2028b\\u2029\u{2026}\u{20AC}\\u003c\\u0026\\u003e\u{E2}\\u2028\\n\\\"\\u003c"
            ),
            "{out}"
        );
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), value);
        let raw = serde_json::value::RawValue::from_string(value.to_string()).unwrap();
        let mut written = Vec::new();
        write_script_json(&raw, &mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), out);
    }

    #[test]
    fn embedded_json_cannot_end_its_script() {
        let value = json!({"t": "</script><script>alert(1)</script><!-- & \u{2028}"});
        let text = script_json(&value);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
