//! `inspect --stats`: events and bytes per type, deltas per message, the largest events, and
//! the runs. Counts are kept per type and per message; only the few largest events are held.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, Write};

use serde::Serialize;

use super::human::{millis, plural};
use super::{Inspection, Item, ItemKind};
use agui_lens_core::protocol::event::Event;
use agui_lens_core::text::human_bytes;

/// How many of the largest events are kept.
const LARGEST: usize = 10;
/// Rows of the per-message table shown before folding.
const STREAM_ROWS: usize = 20;

/// An event ranked by size: bytes, then the earlier first; with its line and type.
type Ranked = (u64, Reverse<u64>, u64, String);

/// Gathers per-type counts and the largest events while the stream is read.
#[derive(Default)]
pub struct StatsCollector {
    types: BTreeMap<String, (u64, u64)>,
    /// The largest events so far, smallest on top (so it is the one dropped).
    largest: BinaryHeap<Reverse<Ranked>>,
    bytes: u64,
}

impl StatsCollector {
    pub fn event(&mut self, event: &Event, raw: &[u8]) {
        let ty = event.type_name().unwrap_or("(no type)");
        self.count(ty, event.loc.index, event.loc.line, raw.len() as u64);
    }

    /// Counts an event of type `ty`, the `index`th of the stream, at `line`.
    pub fn count(&mut self, ty: &str, index: u64, line: u64, bytes: u64) {
        self.bytes += bytes;
        let entry = match self.types.get_mut(ty) {
            Some(entry) => entry,
            None => self.types.entry(ty.to_owned()).or_default(),
        };
        entry.0 += 1;
        entry.1 += bytes;
        // Only an event larger than the smallest kept one can join the largest.
        let smallest = self.largest.peek().map(|Reverse((b, ..))| *b);
        if self.largest.len() < LARGEST || smallest.is_some_and(|b| bytes > b) {
            self.largest
                .push(Reverse((bytes, Reverse(index), line, ty.to_owned())));
            if self.largest.len() > LARGEST {
                self.largest.pop();
            }
        }
    }

    /// The statistics, with what the inspection knows about messages and runs.
    pub fn finish(self, inspection: &Inspection) -> Stats {
        let mut types: Vec<TypeStats> = self
            .types
            .into_iter()
            .map(|(name, (events, bytes))| TypeStats {
                event_type: name,
                events,
                bytes,
            })
            .collect();
        types.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.event_type.cmp(&b.event_type)));
        let mut largest: Vec<LargeEvent> = self
            .largest
            .into_iter()
            .map(|Reverse((bytes, Reverse(index), line, ty))| LargeEvent {
                event_index: index,
                line,
                event_type: ty,
                bytes,
            })
            .collect();
        largest.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then(a.event_index.cmp(&b.event_index))
        });
        let mut streams = Vec::new();
        for run in &inspection.runs {
            streams.extend(run.items.iter().filter_map(stream_of));
        }
        streams.extend(inspection.summarised_streams.iter().cloned());
        streams.sort_by(|a, b| {
            b.deltas
                .cmp(&a.deltas)
                .then(a.first_event.cmp(&b.first_event))
        });
        let runs = inspection
            .runs
            .iter()
            .map(|r| RunStats {
                run_id: r.run_id.clone(),
                thread_id: r.thread_id.clone(),
                status: r.status,
                first_event: r.first_event,
                last_event: r.last_event,
                events: r.events,
                bytes: r.bytes,
                duration_ms: r.duration_ms,
            })
            .collect();
        Stats {
            path: inspection.path.clone(),
            failure: inspection.failure.clone(),
            frames: inspection.frames,
            events: inspection.events,
            errors: inspection.errors,
            warnings: inspection.warnings,
            bytes: self.bytes,
            types,
            streams,
            largest,
            runs,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Stats {
    pub path: String,
    /// Why the input could not be read to its end, when it could not (see
    /// [`Inspection::failure`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub frames: u64,
    pub events: u64,
    /// `check`'s findings, counted (the statistics list none; `inspect --format json` does):
    /// what decides the exit status.
    pub errors: u64,
    pub warnings: u64,
    /// Bytes of the events as read (decompressed; without SSE framing).
    pub bytes: u64,
    /// By bytes, largest first.
    pub types: Vec<TypeStats>,
    /// Messages, reasoning and tool calls, by number of deltas, most first.
    pub streams: Vec<StreamStats>,
    pub largest: Vec<LargeEvent>,
    pub runs: Vec<RunStats>,
}

#[derive(Debug, Serialize)]
pub struct TypeStats {
    #[serde(rename = "type")]
    pub event_type: String,
    pub events: u64,
    pub bytes: u64,
}

/// The delta stream an item is, if it is one: a message the stream sent (not one from the
/// run's input), a reasoning message, or a tool call.
pub fn stream_of(item: &Item) -> Option<StreamStats> {
    let (kind, id, deltas, text) = match &item.kind {
        ItemKind::Message(m) if !m.from_input => (m.role.as_str(), &m.id, m.deltas, m.text.len()),
        ItemKind::Reasoning(r) => ("reasoning", &r.id, r.deltas, r.text.len()),
        ItemKind::ToolCall(c) => ("tool call", &c.id, c.deltas, c.arguments.len()),
        _ => return None,
    };
    Some(StreamStats {
        kind: kind.to_owned(),
        id: id.clone(),
        first_event: item.first_event,
        deltas,
        text_bytes: text as u64,
    })
}

#[derive(Clone, Debug, Serialize)]
pub struct StreamStats {
    /// The role of a message, `reasoning`, or `tool call`.
    pub kind: String,
    pub id: Option<String>,
    pub first_event: u64,
    pub deltas: u64,
    /// Bytes of the text (or arguments) the deltas add up to.
    pub text_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct LargeEvent {
    pub event_index: u64,
    pub line: u64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct RunStats {
    pub run_id: Option<String>,
    pub thread_id: Option<String>,
    pub status: &'static str,
    pub first_event: u64,
    pub last_event: u64,
    pub events: u64,
    pub bytes: u64,
    pub duration_ms: Option<i64>,
}

/// Writes the statistics as aligned tables.
pub fn render(stats: &Stats, full: bool, out: &mut dyn Write) -> io::Result<()> {
    let unreadable = stats.frames - stats.events;
    // The events' own bytes as JSON, whatever carried them (SSE's framing, a protobuf
    // capture's smaller frames, compression): a .pb's size was shown as if it were its own.
    let mut head = format!(
        "{}: {}, {} as JSON",
        stats.path,
        plural(stats.events, "event"),
        human_bytes(stats.bytes)
    );
    if unreadable > 0 {
        head.push_str(&format!(
            " ({} could not be read as events)",
            plural(unreadable, "frame")
        ));
    }
    writeln!(out, "{head}")?;
    if let Some(failure) = &stats.failure {
        writeln!(out, "{}", not_read_whole(failure))?;
    }
    writeln!(out)?;
    let mut rows: Vec<Vec<String>> = stats
        .types
        .iter()
        .map(|t| {
            vec![
                t.event_type.clone(),
                t.events.to_string(),
                t.bytes.to_string(),
                percent(t.bytes, stats.bytes),
            ]
        })
        .collect();
    rows.push(vec![
        "total".into(),
        stats.events.to_string(),
        stats.bytes.to_string(),
        String::new(),
    ]);
    table(out, &["type", "events", "bytes", "of bytes"], &rows)?;
    writeln!(out)?;
    if stats.streams.is_empty() {
        writeln!(out, "no messages, reasoning or tool calls streamed")?;
    } else {
        let shown = if full {
            stats.streams.len()
        } else {
            stats.streams.len().min(STREAM_ROWS)
        };
        let rows: Vec<Vec<String>> = stats.streams[..shown]
            .iter()
            .map(|s| {
                vec![
                    format!("{} {}", s.kind, s.id.as_deref().unwrap_or("(no id)")),
                    format!("#{}", s.first_event),
                    s.deltas.to_string(),
                    s.text_bytes.to_string(),
                ]
            })
            .collect();
        table(
            out,
            &["deltas per message", "from", "deltas", "text bytes"],
            &rows,
        )?;
        if shown < stats.streams.len() {
            writeln!(
                out,
                "  … {} more (--full shows all)",
                stats.streams.len() - shown
            )?;
        }
    }
    writeln!(out)?;
    let rows: Vec<Vec<String>> = stats
        .largest
        .iter()
        .map(|e| {
            vec![
                format!("#{} {}", e.event_index, e.event_type),
                e.line.to_string(),
                e.bytes.to_string(),
            ]
        })
        .collect();
    table(out, &["largest events", "line", "bytes"], &rows)?;
    writeln!(out)?;
    let rows: Vec<Vec<String>> = stats
        .runs
        .iter()
        .map(|r| {
            let name = match (&r.run_id, &r.thread_id) {
                _ if r.status == "none" => "(outside any run)".to_owned(),
                (Some(run), Some(thread)) => format!("{run} · thread {thread}"),
                (Some(run), None) => run.clone(),
                (None, _) => "(no runId)".into(),
            };
            vec![
                name,
                format!("#{}–{}", r.first_event, r.last_event),
                r.events.to_string(),
                r.bytes.to_string(),
                r.duration_ms.map(millis).unwrap_or_else(|| "-".into()),
                match r.status {
                    "open" => "unfinished",
                    "none" => "-",
                    other => other,
                }
                .to_owned(),
            ]
        })
        .collect();
    table(
        out,
        &["runs", "range", "events", "bytes", "duration", "status"],
        &rows,
    )?;
    out.flush()
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        String::new()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// A table: the first column left-aligned, the others right-aligned, a header on top.
fn table(out: &mut dyn Write, header: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    // Rows are indented under the header.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut row = row.clone();
            row[0] = format!("  {}", row[0]);
            row
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i == 0 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str("  ");
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
        }
        text.trim_end().to_owned()
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    if rows.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for row in &rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

/// The line that says an input was not read to its end, and what that leaves out.
pub fn not_read_whole(failure: &str) -> String {
    format!("error: {failure}: what is shown is what was read before")
}
