//! Reading an input as a sequence of events for the commands that transform streams (fold,
//! compact, diff): frames are parsed in parallel per batch and handed over in order.

use std::cell::RefCell;
use std::io;
use std::sync::Arc;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::check::diagnostic::Diagnostic;
use crate::check::engine::{Context as CheckContext, Fed};
use crate::check::parse::Halves;
pub use crate::check::parse::parse_event;
use crate::check::rules::schema;
use crate::protocol::event::Event;
use crate::read::delta::{self, Delta};
use crate::read::pipeline::pipelined;
use crate::read::{self, Batch, Frame, FrameKind, InputSpec, Opened, ReadOptions};
use crate::stop;

/// What reading an input skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadStats {
    pub frames: u64,
    pub events: u64,
    /// Frames that could not be read as events (see `agui-lens check`).
    pub unreadable: u64,
    /// Events of a type AG-UI defines: none means the input is no stream at all.
    pub known: u64,
    /// The frames' bytes, with one line end each (about the input's size, decompressed).
    pub bytes: u64,
    /// Read keeping halves of UTF-16 pairs ([`crate::read::Opened::keep_halves`]): an event
    /// held one.
    pub halves: bool,
    /// Read keeping halves: a frame held a character of the range they are read into.
    pub stand_in_range: bool,
    /// Of the `unreadable` frames, those that are events holding half of a UTF-16 pair
    /// (`framing/lone-surrogate`), read not keeping halves: JSON a client reads.
    pub unread_halves: u64,
}

impl ReadStats {
    /// Whether halves of UTF-16 pairs and characters of the range they are read into were
    /// both read: what was folded of them cannot be told apart (see
    /// [`crate::read::halves::ambiguity`]).
    pub fn halves_ambiguous(&self) -> bool {
        self.halves && self.stand_in_range
    }
}

/// Calls `each` with every event of an input, in order, with its frame's original bytes.
pub fn for_each_event(
    input: &InputSpec,
    read: &ReadOptions,
    mut each: impl FnMut(&Event, &[u8]) -> Result<()>,
) -> Result<(Opened, ReadStats)> {
    let mut opened = read::open(input, read)?;
    let stats = for_each_opened_event(&mut opened, read.max_line, &mut each)?;
    Ok((opened, stats))
}

/// [`for_each_event`] for an input already opened (a body held in memory, a socket).
pub fn for_each_opened_event(
    opened: &mut Opened,
    max_line: usize,
    mut each: impl FnMut(&Event, &[u8]) -> Result<()>,
) -> Result<ReadStats> {
    for_each_fed(opened, max_line, false, |fed, batch, frame| match fed {
        Fed::Event(event) => each(event, batch.bytes(frame)),
        Fed::Delta { .. } => unreachable!("plain deltas are only read apart on request"),
    })
}

/// One frame, prepared on the pool: a plain delta read on the fast path, or the event (none
/// for a frame that holds no event) with what the schemas found wrong with it, when asked.
enum Item {
    Delta(Delta),
    Event(Option<Event>, Vec<Diagnostic>),
}

fn prepare_frame(
    name: &Arc<str>,
    batch: &Batch,
    frame: &Frame,
    max_line: usize,
    (fast, halves): (bool, Halves),
    schemas: Option<&CheckContext<'_>>,
) -> Item {
    if let FrameKind::Data {
        caveat: crate::read::Caveat::None,
        ..
    } = frame.kind
    {
        if let Some(delta) = fast.then(|| delta::parse_in(batch, frame)).flatten() {
            return Item::Delta(delta);
        }
    }
    let parsed =
        crate::check::parse::parse_frame_with(name, batch, frame, max_line, false, true, halves);
    let mut found = Vec::new();
    if let Some(ctx) = schemas {
        schema::check_parsed(&parsed, ctx.schemas, ctx.levels, &mut found);
    }
    Item::Event(parsed.event, found)
}

fn prepare_batch(
    name: &Arc<str>,
    batch: &Batch,
    max_line: usize,
    read: (bool, Halves),
    schemas: Option<&CheckContext<'_>>,
) -> Vec<Item> {
    if batch.frames.len() > 64 {
        batch
            .frames
            .par_iter()
            .with_min_len(32)
            .map(|frame| prepare_frame(name, batch, frame, max_line, read, schemas))
            .collect()
    } else {
        batch
            .frames
            .iter()
            .map(|frame| prepare_frame(name, batch, frame, max_line, read, schemas))
            .collect()
    }
}

/// Calls `each` with every event of an opened input, in order, with the frame it came from:
/// parsed on the pool while the previous batch is handed over, and with `fast`, plain
/// content deltas (see [`crate::read::delta`]) as borrowed strings rather than built
/// events. A consumer that cannot take a delta that way can parse its frame
/// ([`parse_event`]). Stops at the first error `each` returns, and at a read error.
pub fn for_each_fed(
    opened: &mut Opened,
    max_line: usize,
    fast: bool,
    mut each: impl FnMut(Fed<'_>, &Batch, &Frame) -> Result<()>,
) -> Result<ReadStats> {
    for_each_schema_checked(opened, max_line, fast, None, |fed, batch, frame, _| {
        each(fed, batch, frame)
    })
}

/// [`for_each_event`], with each frame that could not be read as an event handed over too, as
/// `None` with its bytes, in its place: for what must account for every frame of an input.
pub fn for_each_frame(
    input: &InputSpec,
    read: &ReadOptions,
    each: impl FnMut(Option<&Event>, &[u8], &Frame) -> Result<()>,
) -> Result<(Opened, ReadStats)> {
    let mut opened = read::open(input, read)?;
    let stats = for_each_opened_frame(&mut opened, read.max_line, each)?;
    Ok((opened, stats))
}

/// [`for_each_frame`] of an input already opened, its lines capped at `max_line`.
pub fn for_each_opened_frame(
    opened: &mut Opened,
    max_line: usize,
    mut each: impl FnMut(Option<&Event>, &[u8], &Frame) -> Result<()>,
) -> Result<ReadStats> {
    let cell = std::cell::RefCell::new(&mut each);
    feed(
        opened,
        max_line,
        false,
        None,
        |fed, batch, frame, _| match fed {
            Fed::Event(event) => (cell.borrow_mut())(Some(event), batch.bytes(frame), frame),
            Fed::Delta { .. } => unreachable!("plain deltas are only read apart on request"),
        },
        |batch, frame| (cell.borrow_mut())(None, batch.bytes(frame), frame),
    )
}

/// [`for_each_fed`], with every event built in full also checked against the schemas of
/// `schemas`, on the pool: what they find is handed over with the event (nothing with a
/// delta read on the fast path, or without `schemas`).
pub fn for_each_schema_checked(
    opened: &mut Opened,
    max_line: usize,
    fast: bool,
    schemas: Option<&CheckContext<'_>>,
    each: impl FnMut(Fed<'_>, &Batch, &Frame, &[Diagnostic]) -> Result<()>,
) -> Result<ReadStats> {
    feed(opened, max_line, fast, schemas, each, |_, _| Ok(()))
}

/// [`for_each_schema_checked`], with `unreadable` called for each frame that could not be
/// read as an event.
fn feed(
    opened: &mut Opened,
    max_line: usize,
    fast: bool,
    schemas: Option<&CheckContext<'_>>,
    mut each: impl FnMut(Fed<'_>, &Batch, &Frame, &[Diagnostic]) -> Result<()>,
    mut unreadable: impl FnMut(&Batch, &Frame) -> Result<()>,
) -> Result<ReadStats> {
    let name = opened.name.clone();
    let halves = match opened.keep_halves {
        true => Halves::Kept,
        false => Halves::Unread,
    };
    let mut stats = ReadStats::default();
    let mut failed: Option<anyhow::Error> = None;
    let read_failure = pipelined(
        opened.reader.as_mut(),
        opened.live,
        |batch| prepare_batch(&name, batch, max_line, (fast, halves), schemas),
        |batch, items| {
            if stop::requested() {
                failed = Some(anyhow::anyhow!("interrupted"));
                return Err(io::ErrorKind::Interrupted.into());
            }
            stats.bytes += batch.data_len() as u64 + batch.frames.len() as u64;
            for (frame, item) in batch.frames.iter().zip(items.iter()) {
                stats.frames += 1;
                if halves == Halves::Kept
                    && !stats.stand_in_range
                    && crate::read::halves::holds_stand_in_range(batch.bytes(frame))
                {
                    stats.stand_in_range = true;
                }
                let (fed, found) = match item {
                    Item::Delta(delta) => (Fed::delta(delta, batch, frame), &[][..]),
                    Item::Event(Some(event), found) => {
                        stats.halves |= event.halves;
                        (Fed::Event(event), &found[..])
                    }
                    Item::Event(None, _) => {
                        stats.unreadable += 1;
                        if halves == Halves::Unread
                            && crate::check::parse::value_keeping_halves(batch.bytes(frame))
                                .is_ok_and(|value| value.is_object())
                        {
                            stats.unread_halves += 1;
                        }
                        if let Err(err) = unreadable(batch, frame) {
                            failed = Some(err);
                            return Err(io::Error::other("stopped"));
                        }
                        continue;
                    }
                };
                stats.events += 1;
                if match fed {
                    Fed::Delta { .. } => true,
                    Fed::Event(event) => event.kind.is_some(),
                } {
                    stats.known += 1;
                }
                if let Err(err) = each(fed, batch, frame, found) {
                    failed = Some(err);
                    return Err(io::Error::other("stopped"));
                }
            }
            Ok(())
        },
    );
    if let Some(err) = failed {
        return Err(err);
    }
    let read_failure = read_failure.with_context(|| format!("reading {name}"))?;
    if let Some(err) = read_failure {
        return Err(err).with_context(|| format!("reading {name}"));
    }
    Ok(stats)
}

/// An input that holds no AG-UI event at all is not a stream, and no command may treat it as
/// an empty one: this is the error that says so, naming the input and what it looks like
/// read as `format` (see [`read::describe_no_events`]).
pub fn not_a_stream(name: &str, format: read::InputFormat, head: &[u8]) -> anyhow::Error {
    anyhow::anyhow!(
        "{name} holds no AG-UI events: {}",
        read::describe_no_events(format, head)
    )
}

/// Fails with [`not_a_stream`] when reading an input found no AG-UI event.
pub fn require_events(opened: &Opened, stats: &ReadStats) -> Result<()> {
    if stats.known == 0 {
        return Err(not_a_stream(&opened.name, opened.format, &opened.head));
    }
    Ok(())
}

thread_local! {
    /// The warnings kept on this thread for a caller that says them its own way (see
    /// [`holding_warnings`]); none when they go to stderr.
    static HELD: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Says a warning about an input: on stderr as `warning: …`, or, inside [`holding_warnings`]
/// on this thread, kept for its caller.
pub(crate) fn warn(message: String) {
    let kept = HELD.with(|held| match held.borrow_mut().as_mut() {
        Some(held) => {
            held.push(message);
            None
        }
        None => Some(message),
    });
    if let Some(message) = kept {
        // (It names files, and may quote what they hold.)
        // (A closed or full stderr is no reason to fail: never a panic.)
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "warning: {}",
            crate::report::human::visible(&message)
        );
    }
}

/// Runs `f` with the warnings it gives on this thread (a capture answered with an error
/// status, frames skipped) kept instead of said on stderr, and returns them beside its
/// result, for a caller whose users do not see stderr (a library's warnings, a page).
pub fn holding_warnings<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    /// Puts back what was held outside (also when `f` panics).
    struct Restore(Option<Option<Vec<String>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                HELD.with(|held| *held.borrow_mut() = outer);
            }
        }
    }
    let outer = HELD.with(|held| held.borrow_mut().replace(Vec::new()));
    let mut restore = Restore(Some(outer));
    let result = f();
    let outer = restore.0.take().flatten();
    let kept = HELD.with(|held| std::mem::replace(&mut *held.borrow_mut(), outer));
    (result, kept.unwrap_or_default())
}

/// Warns that a browser capture's stream was answered with a status that is no success, if
/// it was: a client read none of its events (it failed on the status), and what follows
/// takes them as they came.
pub fn warn_failed_status(opened: &Opened) {
    if let Some(answered) = opened.capture.as_ref().and_then(|c| c.failed_answer()) {
        let name = &opened.name;
        warn(format!(
            "{name}: the agent answered {answered}: a client reads none of this stream's events (it fails on the status); they are taken as they came (`agui-lens check` reports it)"
        ));
    }
}

/// Warns that some frames were skipped, if any were.
pub fn warn_unreadable(name: &str, stats: &ReadStats) {
    if stats.unreadable > 0 {
        warn(format!(
            "{name}: {} of {} frames could not be read as events and were skipped (see `agui-lens check {name}`)",
            stats.unreadable, stats.frames
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> bool {
        HELD.with(|held| held.borrow().is_some())
    }

    /// Each caller gets the warnings given inside its own call, a panic inside one puts back
    /// what was outside it, and after the last, warnings go to stderr again.
    #[test]
    fn warnings_are_held_for_the_innermost_caller() {
        let ((inner, panicked), outer) = holding_warnings(|| {
            warn("first".into());
            let ((), inner) = holding_warnings(|| warn("inner".into()));
            let panicked = std::panic::catch_unwind(|| {
                holding_warnings(|| {
                    warn("lost with the panic".into());
                    panic!("stop");
                })
            })
            .is_err();
            warn("last".into());
            (inner, panicked)
        });
        assert!(panicked);
        assert_eq!(inner, ["inner"]);
        assert_eq!(outer, ["first", "last"]);
        assert!(!held());
    }
}
