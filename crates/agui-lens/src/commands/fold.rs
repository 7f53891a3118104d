//! `agui-lens fold PATH`: what a client ends with after applying the stream, as JSON.

use anyhow::Result;

use super::Outcome;
use crate::cli::FoldArgs;
use agui_lens_core::check::recorded::{Recorded, recorded};
pub use agui_lens_core::fold::threads::fold_threads;
use agui_lens_core::fold::threads::pick;
use agui_lens_core::read::InputSpec;

pub fn run(args: &FoldArgs) -> Result<Outcome> {
    let input = InputSpec::named(&args.path);
    let read = args.read.options();
    let limit = args.read.state_limit();
    let recorded = input.path().and_then(recorded);
    // A recorded stream's client started from the state its request sent (a recording `run`
    // or the proxy made keeps the request beside it), as its check does, unless one is given.
    let initial = match (args.read.initial_state()?, &recorded) {
        (None, Some(Recorded::Events { request, .. })) => {
            agui_lens_core::check::recorded::request_state(request.as_deref())
        }
        (given, _) => given,
    };
    let _progress =
        crate::progress::Progress::start("folding", crate::progress::total_size([&input]), 1, true);
    let unread = format!("the end of {}", input.display_name());
    let threads = super::reading(
        &unread,
        || "nothing was shown".into(),
        || {
            fold_threads(
                &input,
                &read,
                limit,
                initial.as_ref(),
                args.thread.as_deref(),
            )
        },
    )?;
    // A recording its recorder cut (a stop, a client that went away), or whose call found
    // the answer ended early, folds to what the client held at the cut, not at the stream's
    // end: said, as `check` says it.
    let part = match &recorded {
        Some(Recorded::Events { cut, findings, .. }) => {
            agui_lens_core::check::recorded::part_of(cut.as_deref(), findings.as_deref())
        }
        _ => None,
    };
    if let Some(cut) = part {
        say!(
            "warning: {}",
            agui_lens_core::check::recorded::folded_cut(
                &agui_lens_core::report::human::visible(&input.display_name()),
                &cut
            )
        );
    }
    let folded = pick(threads, args.thread.as_deref())?;
    super::writing_stdout("the folded stream", |out| {
        folded.write_json(&mut *out, !args.compact)?;
        writeln!(out)?;
        Ok(())
    })?;
    Ok(Outcome::Clean)
}
