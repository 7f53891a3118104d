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
use crate::protocol::event::{Event, EventType};
use crate::read::{self, InputSpec, Opened, ReadOptions};

/// A folder for each thread of a stream, in the order threads first appear. A RUN_STARTED
/// moves to its thread; events before any RUN_STARTED belong to the first thread that
/// follows (or stand alone).
pub struct ByThread<M: Fn() -> Folder> {
    threads: Vec<(Option<String>, Folder)>,
    current: Option<usize>,
    /// The thread of the last RUN_STARTED.
    last_run: Option<usize>,
    new_folder: M,
}

/// What each thread of a stream folds to, in the order threads first appeared.
pub struct Threads {
    pub threads: Vec<(Option<String>, Folded)>,
    /// Where in `threads` the thread of the stream's last run is (none without a run).
    pub last_run: Option<usize>,
}

impl<M: Fn() -> Folder> ByThread<M> {
    /// `new_folder` makes the folder a thread starts with.
    pub fn new(new_folder: M) -> Self {
        ByThread {
            threads: Vec::new(),
            current: None,
            last_run: None,
            new_folder,
        }
    }

    /// The thread of the next event and its folder; `event` is that event when it was built
    /// (a plain delta read on the fast path is no RUN_STARTED, and stays where it is).
    pub fn thread_of(&mut self, event: Option<&Event>) -> (Option<&str>, &mut Folder) {
        if let Some(event) = event.filter(|e| e.kind == Some(EventType::RunStarted)) {
            let thread = event.str_field("threadId").map(str::to_owned);
            let at = match self.threads.iter().position(|(t, _)| *t == thread) {
                Some(at) => at,
                // Events seen before the first run join the first thread.
                None if self.threads.len() == 1 && self.threads[0].0.is_none() => {
                    self.threads[0].0 = thread;
                    0
                }
                None => {
                    self.threads.push((thread, (self.new_folder)()));
                    self.threads.len() - 1
                }
            };
            self.current = Some(at);
            self.last_run = Some(at);
        }
        let at = match self.current {
            Some(at) => at,
            None => {
                self.threads.push((None, (self.new_folder)()));
                self.threads.len() - 1
            }
        };
        self.current = Some(at);
        let (thread, folder) = &mut self.threads[at];
        (thread.as_deref(), folder)
    }

    /// What each thread folds to, in the order threads first appeared.
    pub fn finish(self) -> Vec<(Option<String>, Folded)> {
        self.finish_threads().threads
    }

    /// [`ByThread::finish`], with the thread of the last run.
    pub fn finish_threads(self) -> Threads {
        Threads {
            threads: self
                .threads
                .into_iter()
                .map(|(t, f)| (t, f.finish()))
                .collect(),
            last_run: self.last_run,
        }
    }
}

/// Folds every thread of an input (or only `only`), in the order threads first appear.
/// Events before any RUN_STARTED belong to the first thread that follows (or stand alone).
pub fn fold_threads(
    input: &InputSpec,
    read: &ReadOptions,
    limit: usize,
    initial: Option<&Value>,
    only: Option<&str>,
) -> Result<Threads> {
    let opened = read::open(input, read)?;
    fold_opened(opened, read.max_line, limit, initial, only)
}

/// What a thread's fold starts from: the `initial` state (`--initial-state`), else the state a
/// browser capture's request sent, and the messages it sent (its client held them).
pub fn starting_folder(
    capture: Option<&read::CaptureEntry>,
    initial: Option<&Value>,
    limit: usize,
) -> Folder {
    let sent = |key: &str| capture.and_then(|c| c.sent(key));
    let history: &[Value] = sent("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    Folder::new(limit)
        .with_state(initial.or(sent("state")).cloned())
        .with_messages(history)
}

/// [`fold_threads`] of an input already opened (a buffer, a socket body), its lines capped at
/// `max_line`.
pub fn fold_opened(
    mut opened: Opened,
    max_line: usize,
    limit: usize,
    initial: Option<&Value>,
    only: Option<&str>,
) -> Result<Threads> {
    // Halves of UTF-16 pairs are read, to be joined as a client joins them.
    opened.keep_halves = true;
    // A browser capture's stream starts from what its request sent: state and messages.
    let capture = opened.capture.clone();
    let mut threads = ByThread::new(|| starting_folder(capture.as_ref(), initial, limit));
    let name = opened.name.clone();
    let mut merged = crate::compact::MergedFrames::default();
    let stats = for_each_fed(&mut opened, max_line, true, |fed, batch, frame| {
        merged.note(frame);
        let built = match fed {
            Fed::Event(event) => Some(event),
            Fed::Delta { .. } => None,
        };
        let (thread, folder) = threads.thread_of(built);
        // Events before any run are folded whatever thread is wanted: the run that follows
        // may be of that thread, and they are its (`pick` drops a thread not wanted).
        if only.is_some_and(|want| thread.is_some_and(|t| t != want)) {
            return Ok(());
        }
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
    if stats.halves_ambiguous() {
        crate::check::stream::warn(crate::read::halves::ambiguity(&opened.name));
    }
    if let Some(said) = merged.said(&opened.name, "folded") {
        crate::check::stream::warn(said);
    }
    Ok(threads.finish_threads())
}

/// The fold of thread `want`, or of the thread of the last run: what `agui-lens fold`
/// prints.
pub fn pick(threads: Threads, want: Option<&str>) -> Result<Folded> {
    let Threads { threads, last_run } = threads;
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
            // The thread of the last run (without a run, the only thread there is).
            let last = last_run.unwrap_or(threads.len().saturating_sub(1));
            if threads.len() > 1 {
                // Only one is shown: say which, and what else there is.
                let name = |t: &Option<String>| t.clone().unwrap_or_else(|| "(no thread)".into());
                let others: Vec<String> = threads
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != last)
                    .map(|(_, (t, _))| name(t))
                    .collect();
                crate::check::stream::warn(format!(
                    "the input holds {} threads; shown: {}, the last run's; another is shown \
                     when named (`--thread ID`: {})",
                    threads.len(),
                    threads.get(last).map(|(t, _)| name(t)).unwrap_or_default(),
                    others.join(", ")
                ));
            }
            match threads.into_iter().nth(last) {
                Some((_, folded)) => Ok(folded),
                None => Ok(Folder::new(0).finish()),
            }
        }
    }
}
