//! `agui-lens diff A B`: do two streams mean the same, at the level asked?

use std::io::Write;

use agui_lens_core::report::human::visible;
use anyhow::Result;

use super::Outcome;
use super::check::use_color;
use crate::cli::{DiffArgs, NormalizeArgs};
use crate::commands::inspect::Format;
pub use agui_lens_core::compare::Level;
use agui_lens_core::compare::normalize::{Selector, Settings};
use agui_lens_core::compare::streams::diff_paths;
use agui_lens_core::read::{DEFAULT_MAX_LINE, ReadOptions};

pub fn run(args: &DiffArgs) -> Result<Outcome> {
    if args.a.as_os_str() == "-" && args.b.as_os_str() == "-" {
        anyhow::bail!(
            "stdin (-) is named twice: it can be read once; save one of the streams to a file"
        );
    }
    let settings = settings(&args.normalize)?;
    let read = ReadOptions {
        format: args.input_format,
        max_line: DEFAULT_MAX_LINE,
        entry: None,
    };
    let unread = format!(
        "{} and {} were read to the end",
        args.a.display(),
        args.b.display()
    );
    let labels = (args.a.to_string_lossy(), args.b.to_string_lossy());
    let labels = (labels.0.as_ref(), labels.1.as_ref());
    // A recording its recorder cut is compared as what it holds: said, as `fold` says it.
    for path in [&args.a, &args.b] {
        if let Some(cut) = super::cut_when_recorded(path) {
            say!(
                "warning: {}",
                agui_lens_core::check::recorded::compared_cut(
                    &visible(&path.to_string_lossy()),
                    &cut
                )
            );
        }
    }
    let diff = match super::reading(
        &unread,
        || "nothing was shown".into(),
        || diff_paths(&args.a, &args.b, &read, args.level, &settings),
    ) {
        Ok(diff) => diff,
        Err(err) => {
            if args.format == Format::Json {
                // A reader of the JSON gets a document that says why there is no verdict,
                // not an empty stdout.
                let document = serde_json::json!({
                    "equal": null,
                    "level": args.level.name(),
                    "left": {"path": labels.0},
                    "right": {"path": labels.1},
                    "error": format!("{err:#}"),
                });
                let mut out = super::ReportOut::default();
                let _ = writeln!(out, "{}", serde_json::to_string_pretty(&document)?);
                let _ = out.flush();
            }
            return Err(err);
        }
    };
    // What is shown is made whole before any of it is (the line diff of a long stream takes
    // a while): stopped meanwhile, nothing is.
    let shown = super::reading(
        "the diff was shown",
        || "nothing was shown".into(),
        || {
            Ok(match args.format {
                Format::Json => {
                    let mut text =
                        serde_json::to_string_pretty(&diff.document(labels, args.max_lines))?;
                    text.push('\n');
                    text
                }
                Format::Human => {
                    let painter = crate::render::diff_painter(use_color(args.color));
                    // The files' names as a terminal may show them (the values shown are JSON,
                    // which escapes what a terminal acts on).
                    let (a, b) = (visible(labels.0), visible(labels.1));
                    diff.human((&a, &b), args.max_lines, &painter)
                }
            })
        },
    )?;
    super::writing_stdout("the diff", |out| Ok(out.write_all(shown.as_bytes())?))?;
    Ok(if diff.comparison.equal {
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
    agui_lens_core::compare::normalize::check_unordered(&args.unordered)
        .map_err(anyhow::Error::msg)?;
    agui_lens_core::compare::normalize::check_id_settings(&args.id_pattern, &args.id_key)
        .map_err(anyhow::Error::msg)?;
    Ok(Settings {
        keep: args.keep.clone(),
        redact,
        id_patterns: args.id_pattern.clone(),
        id_keys: args.id_key.clone(),
        unordered: args.unordered.clone(),
        ..Settings::current()
    })
}
