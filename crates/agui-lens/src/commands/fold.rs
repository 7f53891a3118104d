//! `agui-lens fold PATH`: what a client ends with after applying the stream, as JSON.

use anyhow::Result;

use super::Outcome;
use crate::cli::FoldArgs;
pub use agui_lens_core::fold::threads::fold_threads;
use agui_lens_core::fold::threads::pick;
use agui_lens_core::read::InputSpec;

pub fn run(args: &FoldArgs) -> Result<Outcome> {
    let input = InputSpec::named(&args.path);
    let read = args.read.options();
    let limit = args.read.state_limit();
    let initial = args.read.initial_state()?;
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
    let folded = pick(threads, args.thread.as_deref())?;
    super::writing_stdout("the folded stream", |out| {
        folded.write_json(&mut *out, !args.compact)?;
        writeln!(out)?;
        Ok(())
    })?;
    Ok(Outcome::Clean)
}
