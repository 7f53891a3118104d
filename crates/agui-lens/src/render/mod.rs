//! What a person sees in a terminal: diagnostics as rustc-like blocks, a suite's results as a
//! test runner's lines; and the reporter for any format the command line asks for.

pub mod human;
pub mod suite;

use std::io::Write;

use colored::Colorize;

use agui_lens_core::compare::comparison::DiffLine;
use agui_lens_core::report::{self, Format, Reporter};

/// A reporter for a format, writing to `out`; human output coloured when `color`; with
/// `group`, repeats of one cause are shown once (see [`report::group::Grouping`]).
pub fn reporter(
    format: Format,
    out: Box<dyn Write>,
    color: bool,
    group: bool,
) -> Box<dyn Reporter> {
    match format {
        Format::Human => report::grouped(Box::new(human::human(out, color)), group),
        _ => report::reporter(format, out, group).expect("every other format is the library's"),
    }
}

/// How a unified diff's lines are shown: coloured by what they are when `color`.
pub fn diff_painter(color: bool) -> impl Fn(DiffLine, &str) -> String {
    move |kind, line| {
        if !color {
            return line.to_owned();
        }
        match kind {
            DiffLine::Header => line.bold().to_string(),
            DiffLine::Added => line.green().to_string(),
            DiffLine::Removed => line.red().to_string(),
            DiffLine::Hunk => line.cyan().to_string(),
            DiffLine::Context => line.to_owned(),
        }
    }
}
