//! `agui-lens cat PATH`: slice a stream (by type, run, index range) and convert it between
//! JSONL, SSE and JSON arrays, plain or compressed. Events are written back as read.

use std::io::{self, Write};

use anyhow::{Context, Result, bail};

use super::{Outcome, persist, same_file};
use crate::cli::CatArgs;
use crate::glob;
use agui_lens_core::check::opened::capture_said;
use agui_lens_core::check::recorded::{Recorded, recorded};
use agui_lens_core::check::stream::{for_each_opened_frame, require_events, warn_unreadable};
use agui_lens_core::protocol::event::{Event, EventType};
use agui_lens_core::read::{
    self, Compression, DEFAULT_MAX_LINE, InputFormat, InputSpec, ReadOptions, format_from_extension,
};
use agui_lens_core::write::{EventWriter, Output, WriteNote};

/// Which events to keep.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Type globs; an event is kept when any matches (none given: every type).
    pub types: Vec<String>,
    /// Keep only the events of this run, RUN_STARTED to RUN_FINISHED or RUN_ERROR (with a late
    /// RUN_ERROR right after its RUN_FINISHED).
    pub run: Option<String>,
    /// Inclusive range of event indexes (as `check` numbers them).
    pub from: Option<u64>,
    pub to: Option<u64>,
}

/// Applies a [`Selection`] to events in stream order.
pub struct Filter {
    selection: Selection,
    in_run: bool,
    /// A RUN_STARTED of the `--run` asked for was seen.
    found_run: bool,
    /// The last run begun is the `--run` asked for, and it has finished (not failed): a
    /// RUN_ERROR now, before another run, is its late failure, which ends it in error.
    finished_run: bool,
    /// Frames that could not be read since then, and those of them the run's late RUN_ERROR
    /// claimed.
    pending_unread: u64,
    late_unread: u64,
    /// Events kept so far.
    kept: u64,
    /// How another run's events cut into the `--run` asked for, when they did (the stream
    /// is then no sequence of runs): the copy is not all of that run.
    tangled: Option<String>,
}

impl Filter {
    pub fn new(selection: Selection) -> Self {
        Filter {
            selection,
            in_run: false,
            found_run: false,
            finished_run: false,
            pending_unread: 0,
            late_unread: 0,
            kept: 0,
            tangled: None,
        }
    }

    /// Whether a selection was asked for (a type, a range) and kept no event.
    pub fn kept_nothing(&self) -> bool {
        let selection = &self.selection;
        let asked = !selection.types.is_empty()
            || selection.from.is_some()
            || selection.to.is_some()
            || selection.run.is_some();
        asked && self.kept == 0
    }

    /// The `--run` asked for, when no RUN_STARTED of it was seen.
    pub fn missing_run(&self) -> Option<&str> {
        self.selection.run.as_deref().filter(|_| !self.found_run)
    }

    /// How another run cut into the `--run` asked for, if one did.
    pub fn tangled(&self) -> Option<&str> {
        self.tangled.as_deref()
    }

    /// Whether the event is kept. Must see every event in order (runs are tracked).
    pub fn keep(&mut self, event: &Event) -> bool {
        let kept = self.selects(event);
        self.kept += u64::from(kept);
        kept
    }

    fn selects(&mut self, event: &Event) -> bool {
        let mut in_run = true;
        if let Some(want) = &self.selection.run {
            if self.in_run && self.tangled.is_none() {
                let index = event.loc.index;
                let run_id = event.str_field("runId");
                self.tangled = match (event.kind, run_id) {
                    (Some(EventType::RunStarted), Some(id)) if id == want.as_str() => Some(
                        format!("run {want} began again before its end (event {index})"),
                    ),
                    (Some(EventType::RunStarted), id) => Some(format!(
                        "run {want} had not ended when {} began (event {index}): the copy ends \
                         before it",
                        id.map_or("a run with no runId".to_owned(), |id| format!("run {id}"))
                    )),
                    (Some(EventType::RunFinished | EventType::RunError), Some(id))
                        if id != want.as_str() =>
                    {
                        Some(format!(
                            "run {want} was ended by the {} of run {id} (event {index}): the \
                             copy ends with it",
                            event.type_name().unwrap_or_default()
                        ))
                    }
                    _ => None,
                };
            }
            match event.kind {
                Some(EventType::RunStarted) => {
                    self.in_run = event.str_field("runId") == Some(want.as_str());
                    self.found_run |= self.in_run;
                    self.finished_run = false;
                    self.pending_unread = 0;
                    in_run = self.in_run;
                }
                Some(EventType::RunFinished) => {
                    in_run = self.in_run;
                    self.finished_run = self.in_run;
                    self.pending_unread = 0;
                    self.in_run = false;
                }
                Some(EventType::RunError) => {
                    in_run = self.in_run || self.finished_run;
                    if self.finished_run {
                        self.late_unread = std::mem::take(&mut self.pending_unread);
                    }
                    self.in_run = false;
                    self.finished_run = false;
                }
                _ => in_run = self.in_run,
            }
        }
        let index = event.loc.index;
        in_run
            && self.selection.from.is_none_or(|from| index >= from)
            && self.selection.to.is_none_or(|to| index <= to)
            && (self.selection.types.is_empty()
                || event.type_name().is_some_and(|ty| {
                    self.selection
                        .types
                        .iter()
                        .any(|pattern| glob::matches(pattern, ty))
                }))
    }

    /// How many of the frames `from..to` (indexes), which could not be read as events and
    /// came after the events seen so far, the selection might have kept: those in the index
    /// range, while the `--run` asked for is open. Their type is unknown, so any may match.
    pub fn unread_kept(&mut self, from: u64, to: u64) -> u64 {
        if self.selection.run.is_some() && !self.in_run {
            if self.finished_run {
                // Right after the run's RUN_FINISHED: of the run, if its late RUN_ERROR
                // follows (see `take_late_unread`).
                self.pending_unread += to.saturating_sub(from);
            }
            return 0;
        }
        let from = self.selection.from.map_or(from, |f| f.max(from));
        let to = self
            .selection
            .to
            .map_or(to, |t| t.saturating_add(1).min(to));
        to.saturating_sub(from)
    }

    /// The frames that could not be read between the run's RUN_FINISHED and its late
    /// RUN_ERROR, once that is kept: the run's, which the copy lacks.
    pub fn take_late_unread(&mut self) -> u64 {
        std::mem::take(&mut self.late_unread)
    }

    /// Whether no later event can be kept (past `--to`).
    pub fn done(&self, index: u64) -> bool {
        self.selection.to.is_some_and(|to| index >= to)
    }
}

/// Stops reading once the range is past; not an error.
#[derive(Debug)]
struct PastRange;

impl std::fmt::Display for PastRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("past the requested range")
    }
}

impl std::error::Error for PastRange {}

pub fn run(args: &CatArgs) -> Result<Outcome> {
    if let (Some(from), Some(to)) = (args.from, args.to) {
        if from > to {
            bail!("--from {from} is after --to {to}");
        }
    }
    let input = InputSpec::named(&args.path);
    let _progress =
        crate::progress::Progress::start("reading", crate::progress::total_size([&input]), 1, true);
    let read = ReadOptions {
        format: args.input_format,
        max_line: args.max_line.unwrap_or(DEFAULT_MAX_LINE),
        entry: args.entry,
    };
    let mut filter = Filter::new(Selection {
        types: args.types.clone(),
        run: args.run.clone(),
        from: args.from,
        to: args.to,
    });
    let output = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    // A device or FIFO (`/dev/null`, `/dev/stdout`, a pipe) is written into, not replaced.
    let stream = output.is_some_and(super::is_stream);
    let format = match (args.output_format, output) {
        (Some(format), _) => format,
        // Such an output is written as stdout is, unless its name tells a format.
        (None, Some(path)) if stream && format_from_extension(path).is_none() => {
            InputFormat::Jsonl
        }
        (None, Some(path)) => format_from_extension(path).with_context(|| {
            format!(
                "cannot tell the output format from {}: name it .jsonl, .ndjson, .sse, .json or .pb (optionally .gz or .zst), or give --output-format",
                path.display()
            )
        })?,
        (None, None) => InputFormat::Jsonl,
    };
    match output {
        None => {
            // Ctrl-C or SIGTERM ends the copy (while the input is awaited too): what was
            // written stays on stdout, and is said to be cut short.
            let caught = crate::signals::Caught::begin();
            let mut writer = EventWriter::new(super::Stdout, format, Compression::None)?;
            let unread = copy(&input, &read, &mut filter, &mut writer, "stdout");
            if agui_lens_core::stop::requested() {
                let _ = writer.finish().and_then(|mut out| out.flush());
                drop(caught);
                bail!(
                    "stopped by {} before the end of {}: what stdout holds of the copy is cut short",
                    agui_lens_core::stop::signal_name(),
                    input.display_name()
                );
            }
            drop(caught);
            let unread = unread?;
            let notes = writer.take_notes();
            let over_limit = writer.over_limit().map(|(first, n)| first.warning(n));
            writer.finish()?.flush()?;
            if let Some(run) = filter.missing_run() {
                return Ok(no_such_run(run, &args.path, None));
            }
            if filter.kept_nothing() && unread.frames == 0 {
                return Ok(kept_nothing(&args.path, None));
            }
            warn_over_limit(over_limit);
            Ok(tangled_run(&filter, report_losses(&notes, format, &unread)))
        }
        Some(path) => {
            if let InputSpec::File(input) = &input {
                if same_file(input, path) {
                    bail!("the output {} is the input", path.display());
                }
            }
            super::refuse_to_replace(path, "-o", super::Replaces::Stream)?;
            let compression = read::detect_compression_ext(path);
            // Ctrl-C or SIGTERM stops the reading (see `for_each_event`) and the temp file
            // goes, until the copy is in place: dropped after `temp`.
            // (Into a FIFO or a device: a stop ends the copy, and a wait for the reader.)
            let _caught = crate::signals::Caught::begin();
            let cut = |path: &std::path::Path| {
                if stream {
                    format!("what {} got of the copy is cut short", path.display())
                } else {
                    super::left_unwritten(path)
                }
            };
            // A file is replaced by a finished temp file. A FIFO's open waits for its reader:
            // an input that is not there, or a regular file that cannot be read, is said
            // first. (An input that is itself a FIFO is opened once, by the reading.)
            if let (true, InputSpec::File(input)) = (stream, &input) {
                let opened = match std::fs::metadata(input) {
                    Ok(meta) if meta.is_dir() => bail!("{} is a directory", input.display()),
                    Ok(meta) if meta.is_file() => std::fs::File::open(input).map(drop),
                    Ok(_) => Ok(()),
                    Err(e) => Err(e),
                };
                opened
                    .map_err(|e| read::plainly(input, e))
                    .with_context(|| format!("opening {}", input.display()))?;
            }
            let (file, temp): (Box<dyn Write + Send>, _) = if stream {
                (Box::new(super::open_stream(path)?), None)
            } else {
                let temp = super::temp_beside(path)?;
                let file = temp.as_file().try_clone().context("creating a temp file")?;
                (Box::new(file), Some(temp))
            };
            // Compressing and writing happen beside this thread, which reads and filters.
            let mut writer = EventWriter::background(file, format, compression)?;
            let shown = path.display().to_string();
            let unread = copy(&input, &read, &mut filter, &mut writer, &shown).map_err(|err| {
                if agui_lens_core::stop::requested() {
                    anyhow::anyhow!(
                        "stopped by {}: {}",
                        agui_lens_core::stop::signal_name(),
                        cut(path)
                    )
                } else {
                    err
                }
            })?;
            if stream && agui_lens_core::stop::requested() {
                let _ = writer.finish().and_then(|mut out| out.flush());
                bail!(
                    "stopped by {} before the end of {}: {}",
                    agui_lens_core::stop::signal_name(),
                    input.display_name(),
                    cut(path)
                );
            }
            let notes = writer.take_notes();
            let over_limit = writer.over_limit().map(|(first, n)| first.warning(n));
            writer
                .finish()
                .with_context(|| format!("writing {}", path.display()))?;
            if let Some(run) = filter.missing_run() {
                // The temp file goes; what the output held stays.
                return Ok(no_such_run(run, &args.path, Some(path)));
            }
            if filter.kept_nothing() && unread.frames == 0 {
                return Ok(kept_nothing(&args.path, Some(path)));
            }
            if let Some(temp) = temp {
                persist(temp, path).with_context(|| format!("writing {}", path.display()))?;
            }
            warn_over_limit(over_limit);
            Ok(tangled_run(&filter, report_losses(&notes, format, &unread)))
        }
    }
}

/// Says when another run cut into the `--run` asked for: the copy is then not all of that
/// run (exit 1).
fn tangled_run(filter: &Filter, outcome: Outcome) -> Outcome {
    let (Some(tangled), Some(run)) = (filter.tangled(), filter.selection.run.as_deref()) else {
        return outcome;
    };
    say!(
        "cat: the output is not all of run {run}: {tangled} (`agui-lens check` says what is \
         wrong with the stream)"
    );
    Outcome::Findings
}

/// A protobuf frame written whole that the official client cannot read: a warning, as the
/// copy lost nothing.
fn warn_over_limit(warning: Option<String>) {
    if let Some(warning) = warning {
        say!("cat: warning: {warning}");
    }
}

/// Frames of the input that could not be read as events, which the selection might have kept
/// (see [`Filter::unread_kept`]): left out of the copy.
struct Unread {
    name: String,
    frames: u64,
    /// What is said of SSE frames the official client reads as one, copied as the events
    /// they hold: the copy reads otherwise than the input.
    merged: Option<String>,
    /// What a browser capture holds of the response its stream came in that fails it (an
    /// error status, a type that is no event stream's, a read the browser says failed): the
    /// copy holds the events alone.
    response: Option<String>,
    /// What is said of protobuf frames whose fields were passed over in reading them: the
    /// copy lacks them.
    skipped: Option<String>,
}

/// What the output format could not carry, event by event, and the frames that could not be
/// read, on stderr; a copy that left anything out fails (exit 1), as it is not the whole input.
fn report_losses(notes: &[WriteNote], format: InputFormat, unread: &Unread) -> Outcome {
    /// Notes shown one by one; the rest are counted.
    const SHOWN: usize = 20;
    let mut err = io::stderr().lock();
    if let Some(merged) = &unread.merged {
        let _ = writeln!(
            err,
            "cat: the output is not what a client reads of the input: {merged}; the copy, \
             framed with LF, reads whole"
        );
    }
    if let Some(response) = &unread.response {
        let _ = writeln!(
            err,
            "cat: the output is not the whole input: {response}; the copy holds the events \
             alone, not the response they came in"
        );
    }
    if let Some(skipped) = &unread.skipped {
        let _ = writeln!(err, "cat: the output is not the whole input: {skipped}");
    }
    if unread.frames > 0 {
        let name = &unread.name;
        let _ = writeln!(
            err,
            "cat: the output is not the whole input: {} of the frames asked for could not be read \
             as events and were left out (`agui-lens check {name}` says which)",
            unread.frames
        );
    }
    if notes.is_empty() {
        let lost = unread.merged.is_some() || unread.response.is_some() || unread.skipped.is_some();
        return if unread.frames > 0 || lost {
            Outcome::Findings
        } else {
            Outcome::Clean
        };
    }
    for note in notes.iter().take(SHOWN) {
        let ty = note
            .event_type
            .as_deref()
            .unwrap_or("an event with no type");
        let _ = writeln!(err, "cat: event {} ({ty}): {}", note.index, note.message);
    }
    if notes.len() > SHOWN {
        let _ = writeln!(
            err,
            "cat: … and {} more events like these",
            notes.len() - SHOWN
        );
    }
    let dropped = notes.iter().filter(|n| !n.written).count();
    let _ = writeln!(
        err,
        "cat: the {format} output is not the whole input: {} of its events lost something \
         ({dropped} of them entirely)",
        notes.len()
    );
    Outcome::Findings
}

/// What a browser capture holds of the response the stream came in that `check` fails it
/// for (see [`capture_said`]), or the browser's word that the read failed: the copy, the
/// events alone, carries none of it.
fn response_lost(input: &InputSpec, opened: &read::Opened) -> Option<String> {
    // A recording `run` made, with what only its call found written beside it.
    let beside = input.path().and_then(|path| match recorded(path) {
        // Cut when it was recorded: the copy holds part of the stream, and no word of the cut
        // (a check of it charged the agent with the run the cut left open).
        Some(Recorded::Events { cut: Some(cut), .. }) => Some(format!(
            "it was cut when it was recorded ({cut}), as the file beside it says: the copy \
             holds part of the stream, and not that it was cut"
        )),
        Some(Recorded::Events {
            findings: Some(findings),
            ..
        }) => Some(agui_lens_core::check::recorded::findings_left_beside(
            &findings,
        )),
        _ => None,
    });
    if beside.is_some() {
        return beside;
    }
    let capture = opened.capture.as_ref()?;
    let said = capture_said(&opened.name, capture, opened.format);
    // The command to see it, as it can be run (the capture's file, and which of its streams).
    let check = match input.path() {
        Some(path) => format!(
            "`agui-lens check {} --entry {}` reports it",
            path.display(),
            capture.entry
        ),
        None => "`agui-lens check` of the capture reports it".to_owned(),
    };
    (!said.is_empty()).then(|| format!("{} ({check})", said.join("; ")))
}

/// `--run` names no run of the input: said on stderr, and a failing status (exit 1), as a
/// filter that matched nothing is not a copy.
fn no_such_run(run: &str, input: &std::path::Path, output: Option<&std::path::Path>) -> Outcome {
    nothing_written(
        &format!(
            "no run \"{run}\" in {}: no RUN_STARTED has that runId",
            input.display()
        ),
        output,
    )
}

/// The selection kept no event: said and failing, as for a `--run` that is not there.
fn kept_nothing(input: &std::path::Path, output: Option<&std::path::Path>) -> Outcome {
    nothing_written(
        &format!("the selection kept no event of {}", input.display()),
        output,
    )
}

/// Says on stderr why nothing was written, and what became of the output file.
fn nothing_written(why: &str, output: Option<&std::path::Path>) -> Outcome {
    let kept = match output {
        Some(path) => format!("; {} was left as it was", path.display()),
        None => String::new(),
    };
    let _ = writeln!(io::stderr(), "cat: {why}, so nothing was written{kept}");
    Outcome::Findings
}

/// Copies the kept events. An event is written as read, unless JSONL needs it on one line and
/// it spans several (a pretty-printed array element): then it is written compactly. What is
/// kept before the first AG-UI event is held back until one comes: an input with none (an
/// error body, a sidecar) writes nothing and fails, as no stream. Frames that cannot be read
/// as events are left out; those the selection might have kept are counted.
fn copy<W: Write>(
    input: &InputSpec,
    read: &ReadOptions,
    filter: &mut Filter,
    writer: &mut EventWriter<W>,
    output: &str,
) -> Result<Unread> {
    /// The most held back before an AG-UI event shows; past it, the input is no stream.
    const HOLD_EVENTS: usize = 10_000;
    const HOLD_BYTES: usize = 16 << 20;
    let format = writer.format();
    let mut held: Vec<(Option<serde_json::Value>, Vec<u8>, bool)> = Vec::new();
    let mut held_bytes = 0;
    let mut known = false;
    let mut past_range = false;
    // The index the next frame has: a gap before an event's index is frames not read.
    let mut next = 0;
    let mut unread = 0;
    // An event is rewritten only to be put on one line or to carry its request; one holding
    // half a UTF-16 pair is read with a stand-in for it, written back as its escape.
    // A failure to write names the output (a full disk said only "No space left").
    let write = |writer: &mut EventWriter<W>,
                 event: Option<&serde_json::Value>,
                 raw: &[u8],
                 halves: bool|
     -> Result<()> {
        let written = match event {
            Some(value) if halves => {
                let text = serde_json::to_string(value)?;
                writer.raw(agui_lens_core::read::halves::escape_stand_ins(&text).as_bytes())
            }
            Some(value) => writer.event(value),
            None => writer.raw(raw),
        };
        written.with_context(|| format!("writing {output}"))
    };
    let mut opened = read::open(input, read)?;
    // Half a UTF-16 pair is JSON the official client reads: such an event is copied.
    opened.keep_halves = true;
    // A capture's request goes with its stream, as the first RUN_STARTED's input (where a
    // stream carries a run's RunAgentInput): without it, the stream alone folds from nothing.
    let mut carrier = read::RequestCarrier::of(&opened);
    let mut carried = false;
    let mut merged = agui_lens_core::compact::MergedFrames::default();
    let mut skipped = agui_lens_core::compact::SkippedFields::default();
    let result = for_each_opened_frame(&mut opened, read.max_line, |event, raw, frame| {
        merged.note(frame);
        // A frame that holds no event is counted by the reading, and said below.
        let Some(event) = event else {
            return Ok(());
        };
        if !known && event.kind.is_some() {
            known = true;
            for (value, raw, halves) in held.drain(..) {
                write(writer, value.as_ref(), &raw, halves)?;
            }
        }
        let index = event.loc.index;
        if !past_range && index > next {
            unread += filter.unread_kept(next, index);
        }
        next = index + 1;
        if past_range {
            // Read on only to learn whether the input is a stream at all.
            return if known { Err(PastRange.into()) } else { Ok(()) };
        }
        // Looked at whether kept or not: only the stream's first RUN_STARTED carries it.
        let with_input = carrier.carried(event);
        let kept = filter.keep(event);
        unread += filter.take_late_unread();
        if kept {
            // Fields its reading passed over are not in the copy.
            skipped.note(frame);
            // An event over several lines becomes one JSONL line with the whitespace between
            // its tokens taken out, nothing else: a key given twice, a number as it was
            // spelled, stay (a value read and written again lost them).
            let one_line = (format == InputFormat::Jsonl
                && raw.iter().any(|&b| b == b'\n' || b == b'\r'))
            .then(|| agui_lens_core::write::on_one_line(raw));
            let raw = one_line.as_deref().unwrap_or(raw);
            let mut value = None;
            if let Some(with_input) = with_input {
                carried = true;
                value = Some(with_input);
            }
            if known {
                write(writer, value.as_ref(), raw, event.halves)?;
            } else if held.len() < HOLD_EVENTS && held_bytes < HOLD_BYTES {
                held_bytes += raw.len();
                held.push((value, raw.to_vec(), event.halves));
            } else {
                return Err(NoEventsYet.into());
            }
        }
        if filter.done(event.loc.index) {
            past_range = true;
            if known {
                return Err(PastRange.into());
            }
        }
        Ok(())
    });
    let name = input.display_name();
    if carried {
        say!(
            "cat: {name}: the request the capture holds is written as the first RUN_STARTED's \
             input, so the stream alone folds as the capture does (from the state and messages \
             it sent)"
        );
    }
    let response = response_lost(input, &opened);
    match result.map(|stats| (opened, stats)) {
        Ok((opened, stats)) => {
            require_events(&opened, &stats)?;
            if !past_range {
                unread += filter.unread_kept(next, stats.frames);
            }
            if unread == 0 {
                warn_unreadable(&opened.name, &stats);
            }
            Ok(Unread {
                name: opened.name.to_string(),
                frames: unread,
                merged: merged.said(&opened.name, "copied"),
                skipped: skipped.said(&opened.name, "copied"),
                response,
            })
        }
        Err(err) if err.is::<PastRange>() => Ok(Unread {
            name: name.to_string(),
            frames: unread,
            merged: merged.said(&name, "copied"),
            skipped: skipped.said(&name, "copied"),
            response,
        }),
        Err(err) if err.is::<NoEventsYet>() => {
            bail!(
                "{name} holds no AG-UI events in its first {HOLD_EVENTS} frames or {} MiB: it is no stream",
                HOLD_BYTES >> 20
            )
        }
        Err(err) => Err(err),
    }
}

/// So many frames held back with no AG-UI event among them that the input is no stream.
#[derive(Debug)]
struct NoEventsYet;

impl std::fmt::Display for NoEventsYet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no AG-UI events")
    }
}

impl std::error::Error for NoEventsYet {}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_lens_core::protocol::event::Location;
    use serde_json::json;

    fn events(types: &[(&str, Option<&str>)]) -> Vec<Event> {
        types
            .iter()
            .enumerate()
            .map(|(i, (ty, run))| {
                let mut value = json!({ "type": ty });
                if let Some(run) = run {
                    value["runId"] = json!(run);
                }
                Event {
                    loc: Location {
                        path: "t".into(),
                        line: i as u64 + 1,
                        offset: 0,
                        index: i as u64,
                    },
                    kind: EventType::from_name(ty),
                    value,
                    patch: None,
                    halves: false,
                    mended: false,
                }
            })
            .collect()
    }

    fn kept(selection: Selection, stream: &[Event]) -> Vec<u64> {
        let mut filter = Filter::new(selection);
        stream
            .iter()
            .filter(|e| filter.keep(e))
            .map(|e| e.loc.index)
            .collect()
    }

    #[test]
    fn selections_combine() {
        let stream = events(&[
            ("RUN_STARTED", Some("r1")),
            ("TEXT_MESSAGE_START", None),
            ("RUN_FINISHED", Some("r1")),
            ("RUN_STARTED", Some("r2")),
            ("TEXT_MESSAGE_CONTENT", None),
            ("TOOL_CALL_START", None),
            ("RUN_ERROR", None),
            ("CUSTOM", None),
        ]);
        let run = |id: &str| Selection {
            run: Some(id.into()),
            ..Selection::default()
        };
        assert_eq!(kept(run("r1"), &stream), vec![0, 1, 2]);
        assert_eq!(kept(run("r2"), &stream), vec![3, 4, 5, 6]);
        assert_eq!(kept(run("nope"), &stream), Vec::<u64>::new());
        let text = Selection {
            types: vec!["TEXT_*".into(), "custom".into()],
            ..Selection::default()
        };
        assert_eq!(kept(text, &stream), vec![1, 4, 7]);
        let range = Selection {
            types: vec!["*_STARTED".into()],
            from: Some(1),
            to: Some(5),
            ..Selection::default()
        };
        assert_eq!(kept(range, &stream), vec![3]);
    }
}
