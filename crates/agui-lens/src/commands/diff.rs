//! `agui-lens diff A B`: do two streams mean the same, at the level asked?

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::Outcome;
use super::check::use_color;
use crate::cli::{DiffArgs, NormalizeArgs};
use crate::commands::inspect::Format;
use agui_lens_core::check::rules::protocol::DEFAULT_STATE_LIMIT;
use agui_lens_core::check::stream::{for_each_event, require_events, warn_unreadable};
use agui_lens_core::compact::{Compactor, Level as CompactLevel};
pub use agui_lens_core::compare::Level;
use agui_lens_core::compare::comparison::{compare, plain, render, summary, unified_diff};
use agui_lens_core::compare::normalize::{Normalizer, Selector, Settings};
use agui_lens_core::fold::Folder;
use agui_lens_core::read::{DEFAULT_MAX_LINE, InputSpec, ReadOptions};
use agui_lens_core::write::Output;

pub fn run(args: &DiffArgs) -> Result<Outcome> {
    let settings = settings(&args.normalize)?;
    let read = ReadOptions {
        format: args.input_format,
        max_line: DEFAULT_MAX_LINE,
        entry: None,
    };
    let left = normalized(&args.a, &read, args.level, &settings)?;
    let right = normalized(&args.b, &read, args.level, &settings)?;
    let comparison = compare(&left, &right);
    let labels = (args.a.to_string_lossy(), args.b.to_string_lossy());
    let labels = (labels.0.as_ref(), labels.1.as_ref());
    // Event by event, an item is an event of the file: where it is, in each file.
    let lines = match (&comparison.first, args.level) {
        (Some(_), Level::Fold) | (None, _) => None,
        (Some(first), level) => Some((
            line_of_item(&args.a, &read, level, first.index)?,
            line_of_item(&args.b, &read, level, first.index)?,
        )),
    };
    let mut out = io::stdout().lock();
    match args.format {
        Format::Json => {
            let diff = if comparison.equal {
                String::new()
            } else {
                unified_diff(
                    &render(&left),
                    &render(&right),
                    labels,
                    &plain,
                    args.max_lines,
                )
            };
            let document = json!({
                "equal": comparison.equal,
                "level": args.level.name(),
                "left": {"path": labels.0, "counts": comparison.left_counts},
                "right": {"path": labels.1, "counts": comparison.right_counts},
                "first_difference": comparison.first,
                "first_difference_lines": lines.map(|(a, b)| json!([a, b])),
                "raw_only": comparison.raw_only,
                "diff": diff,
            });
            serde_json::to_writer_pretty(&mut out, &document)?;
            writeln!(out)?;
        }
        Format::Human => {
            let color = use_color(args.color);
            let level = match args.level {
                Level::Events => {
                    "compared event by event, ids and timestamps normalised".to_owned()
                }
                Level::Compact => "compared compacted (each message's deltas merged into \
                                       one): counts and item numbers are of the compacted \
                                       streams; --level events compares events as written"
                    .to_owned(),
                Level::Fold => {
                    "compared by what a client ends with: items are messages and state".to_owned()
                }
            };
            writeln!(out, "{level}\n")?;
            let at = |line: Option<u64>| line.map_or("none".to_owned(), |l| format!("line {l}"));
            for line in summary(&comparison, labels).split_inclusive('\n') {
                write!(out, "{line}")?;
                // The first difference, then where it stands in each file.
                if let (true, Some((a, b))) = (line.starts_with("first difference"), lines) {
                    let (a, b) = (at(a), at(b));
                    writeln!(out, "  {a} of {}, {b} of {}", labels.0, labels.1)?;
                }
            }
            if !comparison.equal {
                writeln!(out)?;
                let diff = unified_diff(
                    &render(&left),
                    &render(&right),
                    labels,
                    &crate::render::diff_painter(color),
                    args.max_lines,
                );
                write!(out, "{diff}")?;
            }
        }
    }
    out.flush()?;
    Ok(if comparison.equal {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// The normalisation the flags ask for.
pub fn settings(args: &NormalizeArgs) -> Result<Settings> {
    let redact = args
        .redact
        .iter()
        .map(|s| Selector::parse(s).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    for ty in &args.unordered {
        if agui_lens_core::protocol::event::EventType::from_name(ty).is_none() {
            bail!("--unordered {ty}: not an AG-UI event type");
        }
    }
    Ok(Settings {
        keep: args.keep.clone(),
        redact,
        id_patterns: args.id_pattern.clone(),
        id_keys: args.id_key.clone(),
        unordered: args.unordered.clone(),
        ..Settings::current()
    })
}

/// The stream compacted, each item with the line of the event whose reading wrote it.
fn compacted(input: &InputSpec, read: &ReadOptions) -> Result<Collected> {
    let mut compactor = Compactor::new(CompactLevel::Deltas, DEFAULT_STATE_LIMIT);
    let mut collected = Collected::default();
    let (opened, stats) = for_each_event(input, read, |event, raw| {
        collected.reading = event.loc.line;
        compactor.push(event, raw, &mut collected)?;
        Ok(())
    })?;
    require_events(&opened, &stats)?;
    warn_unreadable(&input.display_name(), &stats);
    compactor.finish(&mut collected)?;
    Ok(collected)
}

/// Where item `index` of a stream at a level comes from in its file: the line of that event
/// (`events`), or of the first event of the file with the compacted item's type and ids
/// (`compact`: a merged message's first delta). None for `fold`, stdin, or past the end.
fn line_of_item(
    path: &Path,
    read: &ReadOptions,
    level: Level,
    index: usize,
) -> Result<Option<u64>> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let input = InputSpec::File(path.to_path_buf());
    match level {
        Level::Events => {
            let mut seen = 0;
            let mut line = None;
            for_each_event(&input, read, |event, _| {
                if seen == index {
                    line = Some(event.loc.line);
                }
                seen += 1;
                Ok(())
            })?;
            Ok(line)
        }
        Level::Compact => {
            let collected = compacted(&input, read)?;
            let Some(item) = collected.items.get(index) else {
                return Ok(None);
            };
            const IDS: &[&str] = &[
                "messageId",
                "toolCallId",
                "stepName",
                "runId",
                "subagentRunId",
            ];
            let mut line = None;
            for_each_event(&input, read, |event, _| {
                let same = event.field("type") == item.get("type")
                    && IDS.iter().all(|k| event.field(k) == item.get(*k));
                if line.is_none() && same {
                    line = Some(event.loc.line);
                }
                Ok(())
            })?;
            Ok(line.or(collected.lines.get(index).copied()))
        }
        Level::Fold => Ok(None),
    }
}

/// A stream as normalised items at a level: its events, its compacted events, or its folded
/// messages followed by `{"state": …}`.
pub fn normalized(
    path: &Path,
    read: &ReadOptions,
    level: Level,
    settings: &Settings,
) -> Result<Vec<Value>> {
    let input = if path.as_os_str() == "-" {
        InputSpec::Stdin
    } else {
        InputSpec::File(path.to_path_buf())
    };
    let name = input.display_name();
    match level {
        Level::Events => {
            let mut items = Vec::new();
            let (opened, stats) = for_each_event(&input, read, |event, _| {
                items.push(event.whole_value().into_owned());
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            warn_unreadable(&name, &stats);
            Ok(Normalizer::events(settings.clone(), &items))
        }
        Level::Compact => {
            let collected = compacted(&input, read)?;
            Ok(Normalizer::events(settings.clone(), &collected.items))
        }
        Level::Fold => {
            let mut folder = Folder::new(DEFAULT_STATE_LIMIT);
            let (opened, stats) = for_each_event(&input, read, |event, _| {
                folder.apply(event);
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            warn_unreadable(&name, &stats);
            let folded = Normalizer::fold(settings.clone(), &folder.finish().meaning());
            let mut items: Vec<Value> = folded["messages"].as_array().cloned().unwrap_or_default();
            items.push(json!({"state": folded["state"]}));
            Ok(items)
        }
    }
}

/// Compacted events, collected as values.
#[derive(Default)]
struct Collected {
    items: Vec<Value>,
    /// For each item, the line of the event whose reading wrote it (when nothing in the
    /// file has the item's type and ids).
    lines: Vec<u64>,
    /// The line of the event being read.
    reading: u64,
}

impl Output for Collected {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        let value = serde_json::from_slice(bytes).map_err(io::Error::other)?;
        self.event(&value)
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        self.items.push(value.clone());
        self.lines.push(self.reading);
        Ok(())
    }
}
