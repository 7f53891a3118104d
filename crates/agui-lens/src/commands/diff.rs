//! `agui-lens diff A B`: do two streams mean the same, at the level asked?

use std::io::{self, Write};
use std::path::Path;

use anyhow::Result;
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
        (Some(first), Level::Events) => Some((
            line_of_event(&args.a, &read, first.index)?,
            line_of_event(&args.b, &read, first.index)?,
        )),
        _ => None,
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
    Ok(Settings {
        keep: args.keep.clone(),
        redact,
    })
}

/// The line of the AG-UI event numbered `index` (among the events, as the `events` level counts
/// items), if the stream has that many.
fn line_of_event(path: &Path, read: &ReadOptions, index: usize) -> Result<Option<u64>> {
    let input = if path.as_os_str() == "-" {
        return Ok(None);
    } else {
        InputSpec::File(path.to_path_buf())
    };
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
    let mut normalizer = Normalizer::new(settings.clone());
    let name = input.display_name();
    match level {
        Level::Events => {
            let mut items = Vec::new();
            let (opened, stats) = for_each_event(&input, read, |event, _| {
                items.push(normalizer.event(&event.whole_value()));
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            warn_unreadable(&name, &stats);
            Ok(items)
        }
        Level::Compact => {
            let mut compactor = Compactor::new(CompactLevel::Deltas, DEFAULT_STATE_LIMIT);
            let mut collected = Collected::default();
            let (opened, stats) = for_each_event(&input, read, |event, raw| {
                compactor.push(event, raw, &mut collected)?;
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            warn_unreadable(&name, &stats);
            compactor.finish(&mut collected)?;
            Ok(collected.0.iter().map(|e| normalizer.event(e)).collect())
        }
        Level::Fold => {
            let mut folder = Folder::new(DEFAULT_STATE_LIMIT);
            let (opened, stats) = for_each_event(&input, read, |event, _| {
                folder.apply(event);
                Ok(())
            })?;
            require_events(&opened, &stats)?;
            warn_unreadable(&name, &stats);
            let folded = normalizer.folded(&folder.finish().meaning());
            let mut items: Vec<Value> = folded["messages"].as_array().cloned().unwrap_or_default();
            items.push(json!({"state": folded["state"]}));
            Ok(items)
        }
    }
}

/// Compacted events, collected as values.
#[derive(Default)]
struct Collected(Vec<Value>);

impl Output for Collected {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        let value = serde_json::from_slice(bytes).map_err(io::Error::other)?;
        self.0.push(value);
        Ok(())
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        self.0.push(value.clone());
        Ok(())
    }
}
