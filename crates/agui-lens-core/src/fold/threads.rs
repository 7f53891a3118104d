//! An input folded thread by thread, the way `agui-lens fold` reads it: events before any
//! RUN_STARTED join the first thread that follows; a browser capture's stream starts from
//! what its request sent.

use anyhow::{Result, bail};
use serde_json::Value;

use crate::check::engine::Fed;
use crate::check::stream::{
    for_each_fed, parse_event, require_events, warn_failed_status, warn_unreadable,
};
use crate::fold::{Folded, Folder};
use crate::protocol::event::EventType;
use crate::read::{self, InputSpec, Opened, ReadOptions};

/// Folds every thread of an input (or only `only`), in the order threads first appear.
/// Events before any RUN_STARTED belong to the first thread that follows (or stand alone).
pub fn fold_threads(
    input: &InputSpec,
    read: &ReadOptions,
    limit: usize,
    initial: Option<&Value>,
    only: Option<&str>,
) -> Result<Vec<(Option<String>, Folded)>> {
    let opened = read::open(input, read)?;
    fold_opened(opened, read.max_line, limit, initial, only)
}

/// [`fold_threads`] of an input already opened (a buffer, a socket body), its lines capped at
/// `max_line`.
pub fn fold_opened(
    mut opened: Opened,
    max_line: usize,
    limit: usize,
    initial: Option<&Value>,
    only: Option<&str>,
) -> Result<Vec<(Option<String>, Folded)>> {
    let mut threads: Vec<(Option<String>, Folder)> = Vec::new();
    let mut current: Option<usize> = None;
    // A browser capture's stream starts from what its request sent: state and messages.
    let capture = opened.capture.clone();
    let sent = |key: &str| capture.as_ref().and_then(|c| c.sent(key));
    let initial = initial.or(sent("state"));
    let history: &[Value] = sent("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let name = opened.name.clone();
    let stats = for_each_fed(&mut opened, max_line, true, |fed, batch, frame| {
        if let Fed::Event(event) = fed {
            if event.kind == Some(EventType::RunStarted) {
                let thread = event.str_field("threadId").map(str::to_owned);
                current = match threads.iter().position(|(t, _)| *t == thread) {
                    Some(i) => Some(i),
                    // Events seen before the first run join the first thread.
                    None if threads.len() == 1 && threads[0].0.is_none() => {
                        threads[0].0 = thread;
                        Some(0)
                    }
                    None => {
                        threads.push((
                            thread,
                            Folder::new(limit)
                                .with_state(initial.cloned())
                                .with_messages(history),
                        ));
                        Some(threads.len() - 1)
                    }
                };
            }
        }
        let at = match current {
            Some(at) => at,
            None => {
                threads.push((
                    None,
                    Folder::new(limit)
                        .with_state(initial.cloned())
                        .with_messages(history),
                ));
                current = Some(threads.len() - 1);
                threads.len() - 1
            }
        };
        if only.is_some_and(|want| threads[at].0.as_deref() != Some(want)) {
            return Ok(());
        }
        let folder = &mut threads[at].1;
        match fed {
            Fed::Event(event) => folder.apply(event),
            Fed::Delta {
                kind, id, delta, ..
            } => {
                if !folder.apply_delta(kind, id, delta) {
                    // A chunk stream is open: the whole event after all.
                    if let Some(event) = parse_event(&name, batch, frame, max_line) {
                        folder.apply(&event);
                    }
                }
            }
        }
        Ok(())
    })?;
    require_events(&opened, &stats)?;
    warn_failed_status(&opened);
    warn_unreadable(&opened.name, &stats);
    Ok(threads.into_iter().map(|(t, f)| (t, f.finish())).collect())
}

/// The fold of thread `want`, or of the thread of the last run: what `agui-lens fold`
/// prints.
pub fn pick(threads: Vec<(Option<String>, Folded)>, want: Option<&str>) -> Result<Folded> {
    let names: Vec<String> = threads.iter().filter_map(|(t, _)| t.clone()).collect();
    match want {
        Some(want) => match threads
            .into_iter()
            .find(|(t, _)| t.as_deref() == Some(want))
        {
            Some((_, folded)) => Ok(folded),
            None => bail!(
                "no thread \"{want}\" in the input (threads: {})",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ),
        },
        None => {
            // The thread of the last run.
            let last = threads
                .iter()
                .rposition(|(_, f)| !f.runs.is_empty())
                .unwrap_or(threads.len().saturating_sub(1));
            match threads.into_iter().nth(last) {
                Some((_, folded)) => Ok(folded),
                None => Ok(Folder::new(0).finish()),
            }
        }
    }
}
