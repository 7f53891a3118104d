//! Reading an input as a sequence of events for the commands that transform streams (fold,
//! compact, diff): frames are parsed in parallel per batch and handed over in order.

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::event::Event;
use crate::source::parse::{Parsed, parse_frame};
use crate::source::{self, Batch, InputSpec, Opened, ReadOptions};

/// What reading an input skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadStats {
    pub frames: u64,
    pub events: u64,
    /// Frames that could not be read as events (see `agui-lens check`).
    pub unreadable: u64,
}

/// Calls `each` with every event of an input, in order, with its frame's original bytes.
pub fn for_each_event(
    input: &InputSpec,
    read: &ReadOptions,
    mut each: impl FnMut(&Event, &[u8]) -> Result<()>,
) -> Result<(Opened, ReadStats)> {
    let mut opened = source::open(input, read)?;
    let name = opened.name.clone();
    let mut batch = Batch::default();
    let mut stats = ReadStats::default();
    while opened
        .reader
        .next_batch(&mut batch)
        .with_context(|| format!("reading {name}"))?
    {
        let parsed: Vec<Parsed> = batch
            .frames
            .par_iter()
            .with_min_len(64)
            .map(|frame| parse_frame(&name, &batch, frame, read.max_line))
            .collect();
        for (frame, parsed) in batch.frames.iter().zip(parsed) {
            stats.frames += 1;
            match parsed.event {
                Some(event) => {
                    stats.events += 1;
                    each(&event, batch.bytes(frame))?;
                }
                None => stats.unreadable += 1,
            }
        }
    }
    Ok((opened, stats))
}

/// Says on stderr that some frames were skipped, if any were.
pub fn warn_unreadable(name: &str, stats: &ReadStats) {
    if stats.unreadable > 0 {
        eprintln!(
            "warning: {name}: {} of {} frames could not be read as events and were skipped (see `agui-lens check {name}`)",
            stats.unreadable, stats.frames
        );
    }
}
