//! The rules stage: takes frames, parses and schema-checks them (stateless, so in parallel),
//! then runs the stateful rules in stream order and applies the user's levels.

use std::io;
use std::sync::Arc;

use rayon::prelude::*;

use crate::check::catalog::{Levels, RuleId};
use crate::check::diagnostic::{Diagnostic, Severity};
use crate::check::parse::{self, excerpt};
use crate::check::rules::protocol::{DeltaView, Protocol, ProtocolOptions};
use crate::check::schema::SchemaSet;
use crate::check::version::Versioning;
use crate::protocol::event::{Event, EventType, Location};
use crate::read::delta::{self, Delta};
use crate::read::pipeline::pipelined;
use crate::read::{Batch, Frame, FrameKind, FrameReader, describe_non_stream};

/// How many findings are held back while no event has been seen, in case the input turns
/// out not to be a stream at all (then one `framing/no-events` says so instead).
const HOLD_LIMIT: usize = 32;

/// Whether a finding only says that a frame is no event: such findings, when the input holds
/// no event at all, are folded into its one `framing/no-events`.
fn only_no_event(d: &Diagnostic) -> bool {
    // (A frame that is no UTF-8 may well be an event saved in another encoding: said.)
    matches!(
        d.rule,
        RuleId::FramingInvalidJson
            | RuleId::FramingNotAnObject
            | RuleId::SchemaMissingType
            | RuleId::SchemaUnknownEventType
    )
}

/// Everything the stateless step learnt about one frame.
#[derive(Debug)]
pub struct Prepared {
    pub event: Option<Event>,
    /// A delta event read on the fast path (then `event` is `None`).
    pub delta: Option<Delta>,
    pub loc: Option<Location>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Counts for one input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub frames: u64,
    pub events: u64,
    pub errors: u64,
    pub warnings: u64,
    /// Notes: worth knowing, never failing a run.
    pub notes: u64,
}

/// An event as checked: built in full, or a plain content delta read on the fast path
/// (TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT or TOOL_CALL_ARGS with a string delta,
/// no metadata), which only comes while no chunk stream is open.
#[derive(Clone, Copy)]
pub enum Fed<'a> {
    Event(&'a Event),
    Delta {
        kind: EventType,
        id: &'a str,
        delta: &'a str,
        owner: Option<&'a str>,
        timestamp: Option<i64>,
        /// Where the event was read (its index, line and offset).
        frame: &'a Frame,
    },
}

impl<'a> Fed<'a> {
    /// A delta read on the fast path from `frame` of `batch`.
    pub fn delta(delta: &'a Delta, batch: &'a Batch, frame: &'a Frame) -> Fed<'a> {
        Fed::Delta {
            kind: delta.kind,
            id: delta.id.in_frame(batch, frame),
            delta: delta.delta.in_frame(batch, frame),
            owner: delta.owner.as_ref().map(|o| o.in_frame(batch, frame)),
            timestamp: delta.timestamp,
            frame,
        }
    }
}

/// What is handed every event once checked.
type EachFed<'f> = dyn FnMut(Fed<'_>, &[u8]) + 'f;

/// What takes the checked events and their findings on a thread of its own (see
/// [`Engine::check_reader_followed`]).
pub trait Follower: Send {
    /// Every event once checked, in stream order, as [`Engine::check_reader_with`]'s `each`.
    fn fed(&mut self, fed: Fed<'_>, raw: &[u8]);
    /// The findings of the batch whose events were just handed over, as its `emit`.
    fn found(&mut self, found: &mut Vec<Diagnostic>);
}

/// How many checked batches may wait for a [`Follower`].
pub const FOLLOW_AHEAD: usize = 2;

/// Hands a checked batch's events to `follower` as `Engine::feed_batch` handed them to its
/// `each`: a delta it took on the fast path as the delta (its `delta` is left only on those),
/// any other event as built.
fn follow_batch(batch: &Batch, prepared: &[Prepared], follower: &mut dyn Follower) {
    for (frame, prepared) in batch.frames.iter().zip(prepared) {
        let raw = batch.bytes(frame);
        if let (Some(delta), Some(_)) = (&prepared.delta, &prepared.loc) {
            follower.fed(Fed::delta(delta, batch, frame), raw);
        } else if let Some(event) = &prepared.event {
            follower.fed(Fed::Event(event), raw);
        }
    }
}

/// The stateless step: parsing and schema checks, shareable across the pool.
#[derive(Clone)]
pub struct Preparer<'a> {
    ctx: &'a Context<'a>,
    path: Arc<str>,
    /// Read plain delta events on the fast path (their `Event` is then not built).
    fast: bool,
    /// Read the small events of plain shape on their fast path ([`crate::read::plain`]).
    plain: bool,
}

impl Preparer<'_> {
    /// Parses and schema-checks one frame.
    pub fn prepare(&self, batch: &Batch, frame: &Frame) -> Prepared {
        if self.fast {
            if let FrameKind::Data {
                caveat: crate::read::Caveat::None,
                ..
            } = frame.kind
            {
                if let Some(delta) = delta::parse_in(batch, frame) {
                    return Prepared {
                        event: None,
                        delta: Some(delta),
                        loc: Some(parse::location(&self.path, frame)),
                        diagnostics: Vec::new(),
                    };
                }
            }
        }
        let mut parsed = parse::parse_frame_with(
            &self.path,
            batch,
            frame,
            self.ctx.max_line,
            self.ctx.levels.enabled(RuleId::FramingDuplicateKey),
            self.plain,
            parse::Halves::Mended,
        );
        let mut diagnostics = std::mem::take(&mut parsed.problems);
        super::rules::schema::check_parsed(
            &parsed,
            self.ctx.schemas,
            self.ctx.levels,
            &mut diagnostics,
        );
        Prepared {
            event: parsed.event,
            delta: None,
            loc: None,
            diagnostics,
        }
    }

    /// Prepares every frame of a batch, in parallel when it is worth it.
    pub fn prepare_batch(&self, batch: &Batch) -> Vec<Prepared> {
        if batch.frames.len() > 64 {
            batch
                .frames
                .par_iter()
                .with_min_len(32)
                .map(|frame| self.prepare(batch, frame))
                .collect()
        } else {
            batch
                .frames
                .iter()
                .map(|frame| self.prepare(batch, frame))
                .collect()
        }
    }
}

/// Settings shared by every input of a run.
pub struct Context<'a> {
    pub schemas: &'a SchemaSet,
    pub levels: &'a Levels,
    pub max_line: usize,
    pub protocol: ProtocolOptions,
}

impl<'a> Context<'a> {
    /// Checking with these schemas and levels, and the defaults for the rest: the default
    /// line cap, a whole capture (not attached mid-run), the default state limit.
    pub fn new(schemas: &'a SchemaSet, levels: &'a Levels) -> Self {
        Context {
            schemas,
            levels,
            max_line: crate::read::DEFAULT_MAX_LINE,
            protocol: ProtocolOptions::default(),
        }
    }
}

/// Checks one input.
pub struct Engine<'a> {
    ctx: &'a Context<'a>,
    path: Arc<str>,
    head: Vec<u8>,
    stats: Stats,
    /// Events with a known AG-UI type seen so far.
    known_events: u64,
    held: Vec<Diagnostic>,
    holding: bool,
    /// Findings that only say a frame is no event, met past [`HOLD_LIMIT`] while holding and
    /// counted instead of kept (see [`Engine::count_past_hold`]), and the first of them.
    counted: u64,
    first_counted: Option<Diagnostic>,
    count_past_hold: bool,
    /// An event came after findings that were only counted: the input is to be read again.
    reread: bool,
    /// The input was cut short for a reason already reported (a live connection failed).
    cut_short: bool,
    /// Why the input was cut short, where the levels left that reason out: the empty input's
    /// finding says it instead.
    unreported_cut: Option<String>,
    /// Reading stopped before the input ended, at the user's request: what only the end can
    /// tell (a run left open) is not known.
    stopped: bool,
    protocol: Protocol,
    /// Read plain delta events without building them (see [`crate::read::delta`]), and the
    /// small events of plain shape on their own fast path ([`crate::read::plain`]).
    fast: bool,
    /// Some rule that follows the stream (not framing, schema, or the live-only transport and
    /// suite rules) is on; when none is, the stream is not followed at all.
    follow: bool,
    /// The protocol version each run is held to.
    versioning: Versioning,
    /// The thread and run the request sent, which the first RUN_STARTED must name (see
    /// [`Engine::hold_run_ids`]); taken when it comes.
    run_ids: Option<(Option<String>, Option<String>)>,
    failures: RunFailures,
}

/// The runs a stream ended in RUN_ERROR: no finding (it is how the protocol says a run
/// failed), but what a user checking an agent's stream wants to be told.
#[derive(Clone, Debug, Default)]
pub struct RunFailures {
    count: u64,
    /// The last one's code and message.
    last: Option<(Option<String>, String)>,
}

impl RunFailures {
    fn note(&mut self, event: &Event) {
        self.count += 1;
        self.last = Some((
            event.str_field("code").map(str::to_owned),
            event.str_field("message").unwrap_or("").to_owned(),
        ));
    }

    /// The remark a report makes of them, when a run failed.
    pub fn said(&self) -> Option<String> {
        let (code, message) = self.last.as_ref()?;
        let code = code
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let runs = match self.count {
            1 => "the run ended".to_owned(),
            n => format!("{n} runs ended, the last"),
        };
        // (The agent's words as they came: each format that writes lines for a person shows
        // them on one line, see `report::human::visible_path`.)
        Some(format!("{runs} in RUN_ERROR{code}: {message}"))
    }
}

impl<'a> Engine<'a> {
    /// `head` is the first bytes of the input, used to describe it if it holds no events.
    pub fn new(ctx: &'a Context<'a>, path: Arc<str>, head: Vec<u8>) -> Self {
        Engine {
            ctx,
            path,
            head,
            stats: Stats::default(),
            known_events: 0,
            held: Vec::new(),
            holding: true,
            counted: 0,
            first_counted: None,
            count_past_hold: false,
            reread: false,
            cut_short: false,
            unreported_cut: None,
            stopped: false,
            protocol: Protocol::new(ctx.protocol.clone()),
            // The fast path stands in for the embedded schemas; a user's may say otherwise.
            fast: ctx.schemas.is_stock(),
            follow: RuleId::ALL.iter().any(|&id| {
                !matches!(
                    id.rule().family(),
                    "framing" | "schema" | "transport" | "suite"
                ) && ctx.levels.enabled(id)
            }),
            versioning: Versioning::new(ctx.protocol.version),
            run_ids: None,
            failures: RunFailures::default(),
        }
    }

    /// Holds the first RUN_STARTED to the thread and run a request sent (what `run` holds a
    /// live answer to): for a stream whose request is known, and whose finding was not made
    /// when it was recorded.
    pub fn hold_run_ids(&mut self, request: &serde_json::Value) {
        let id = |key: &str| request.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        self.run_ids = Some((id("threadId"), id("runId")));
    }

    /// Builds every event in full, as the fast paths must agree with (for tests and
    /// measurements).
    pub fn without_fast_path(mut self) -> Self {
        self.fast = false;
        self
    }

    /// For an input that can be read again from its start (a file): past the findings held
    /// while no event has been seen, those that only say a frame is no event are counted
    /// instead of let out, so that a long file of no events is judged as a short one is (one
    /// `framing/no-events`). Should an event come after them, reading ends (the reading
    /// methods return an error) and [`Engine::needs_rereading`] says the input is to be
    /// checked again from its start by an engine that counts nothing, which lets every such
    /// finding out in its place.
    pub fn count_past_hold(&mut self) {
        self.count_past_hold = true;
    }

    /// Whether an event came after findings that were only counted (see
    /// [`Engine::count_past_hold`]): what this engine found is incomplete, and nothing of it
    /// has been let out.
    pub fn needs_rereading(&self) -> bool {
        self.reread
    }

    /// The stateless half of the engine, which can work on one batch while the engine feeds
    /// another.
    pub fn preparer(&self) -> Preparer<'a> {
        Preparer {
            ctx: self.ctx,
            path: self.path.clone(),
            fast: false,
            plain: self.fast,
        }
    }

    /// The stateless half as the engine uses it on a stream: plain deltas read on the fast
    /// path when the schemas allow it.
    fn stream_preparer(&self) -> Preparer<'a> {
        Preparer {
            fast: self.fast,
            ..self.preparer()
        }
    }

    /// Checks every frame of `batch`, in order, exactly as reading them from a stream would,
    /// handing every event to `each` once checked.
    pub fn feed_frames(
        &mut self,
        batch: &Batch,
        out: &mut Vec<Diagnostic>,
        each: &mut dyn FnMut(Fed<'_>, &[u8]),
    ) {
        let mut prepared = self.stream_preparer().prepare_batch(batch);
        self.feed_batch(batch, &mut prepared, out, Some(each));
    }

    /// Checks an event built elsewhere from `raw`, the whole text of a well-formed, terminated
    /// data frame: what checking that frame would find, without parsing it again (parsing such
    /// a frame yields this event and no finding of its own). `schema` is what the schemas
    /// found wrong with it, if that is known (else they are checked here). The event must not
    /// be a plain content delta, which a stream's reader may take on the fast path instead.
    /// Returns `false`, having done nothing, when reading the frame would also scan it for
    /// repeated keys: then it has to be fed as a frame.
    pub fn feed_checked(
        &mut self,
        event: &Event,
        schema: Option<&[Diagnostic]>,
        raw: &[u8],
        out: &mut Vec<Diagnostic>,
    ) -> bool {
        if self.ctx.levels.enabled(RuleId::FramingDuplicateKey) {
            return false;
        }
        let found = match schema {
            Some(found) => found.to_vec(),
            None => {
                let mut found = Vec::new();
                super::rules::schema::check(event, self.ctx.schemas, self.ctx.levels, &mut found);
                found
            }
        };
        self.feed_ref(Some(event), found, raw, out);
        true
    }

    /// Parses and schema-checks one frame. Needs no state, so frames of a batch can be
    /// prepared in parallel.
    pub fn prepare(&self, batch: &Batch, frame: &Frame) -> Prepared {
        self.preparer().prepare(batch, frame)
    }

    /// Checks a whole batch: prepares its frames in parallel, then feeds them in order.
    pub fn check_batch(&mut self, batch: &Batch, out: &mut Vec<Diagnostic>) {
        self.check_batch_with(batch, out, |_, _| {});
    }

    /// Checks a whole batch, handing every event (with its text) to `each` once checked.
    pub fn check_batch_with(
        &mut self,
        batch: &Batch,
        out: &mut Vec<Diagnostic>,
        mut each: impl FnMut(&Event, &[u8]),
    ) {
        let mut prepared = self.preparer().prepare_batch(batch);
        let mut events = |fed: Fed<'_>, raw: &[u8]| {
            if let Fed::Event(event) = fed {
                each(event, raw);
            }
        };
        self.feed_batch(batch, &mut prepared, out, Some(&mut events));
    }

    /// Feeds a prepared batch in order. The events stay in `prepared` (so they can be dropped
    /// elsewhere); their findings are moved out.
    fn feed_batch(
        &mut self,
        batch: &Batch,
        prepared: &mut [Prepared],
        out: &mut Vec<Diagnostic>,
        mut each: Option<&mut EachFed<'_>>,
    ) {
        for (frame, prepared) in batch.frames.iter().zip(prepared) {
            let raw = batch.bytes(frame);
            let diagnostics = std::mem::take(&mut prepared.diagnostics);
            if let (Some(delta), Some(loc)) = (&prepared.delta, &prepared.loc) {
                if self.feed_delta(delta, loc, batch, frame, out) {
                    if let Some(each) = each.as_mut() {
                        each(Fed::delta(delta, batch, frame), raw);
                    }
                    continue;
                }
                // A chunk stream is open: this event needs the whole path after all (and is
                // handed on as the event: see `follow_batch`).
                prepared.delta = None;
                prepared.event = parse::parse_frame_with(
                    &self.path,
                    batch,
                    frame,
                    self.ctx.max_line,
                    false,
                    self.fast,
                    parse::Halves::Mended,
                )
                .event;
            }
            self.feed_ref(prepared.event.as_ref(), diagnostics, raw, out);
            if let (Some(event), Some(each)) = (&prepared.event, each.as_mut()) {
                each(Fed::Event(event), raw);
            }
        }
    }

    /// Checks everything a reader yields, handing diagnostics to `emit` after each batch. The
    /// next batch is read and prepared on the pool while this one runs through the stateful
    /// rules, so both cores stay busy; `live` inputs (a pipe, a socket) are instead handled one
    /// batch at a time, so nothing waits for data that has not arrived. A read error ends the
    /// input after what was read is checked, and is returned.
    pub fn check_reader(
        &mut self,
        reader: &mut dyn FrameReader,
        live: bool,
        out: &mut Vec<Diagnostic>,
        emit: &mut dyn FnMut(&mut Vec<Diagnostic>) -> io::Result<()>,
    ) -> io::Result<Option<io::Error>> {
        self.check_reader_each(reader, live, out, emit, None)
    }

    /// [`Engine::check_reader`], handing every event to `each` once checked: built in full,
    /// or a plain delta read on the fast path.
    pub fn check_reader_with(
        &mut self,
        reader: &mut dyn FrameReader,
        live: bool,
        out: &mut Vec<Diagnostic>,
        emit: &mut dyn FnMut(&mut Vec<Diagnostic>) -> io::Result<()>,
        each: &mut dyn FnMut(Fed<'_>, &[u8]),
    ) -> io::Result<Option<io::Error>> {
        self.check_reader_each(reader, live, out, emit, Some(each))
    }

    fn check_reader_each(
        &mut self,
        reader: &mut dyn FrameReader,
        live: bool,
        out: &mut Vec<Diagnostic>,
        emit: &mut dyn FnMut(&mut Vec<Diagnostic>) -> io::Result<()>,
        mut each: Option<&mut EachFed<'_>>,
    ) -> io::Result<Option<io::Error>> {
        let preparer = self.stream_preparer();
        let mut insisted = false;
        let read = pipelined(
            reader,
            live,
            |batch| preparer.prepare_batch(batch),
            |batch, prepared| {
                // A first stop lets a file under way be checked whole; a second one ends it
                // here, as a read that failed: what was found is reported, cut short.
                if crate::stop::insisted() {
                    insisted = true;
                    return Err(io::ErrorKind::Interrupted.into());
                }
                let each = each.as_mut().map(|e| &mut **e as &mut EachFed<'_>);
                self.feed_batch(batch, prepared, out, each);
                if self.reread {
                    return Err(io::Error::other(
                        "an event came after frames that were only counted",
                    ));
                }
                emit(out)
            },
        );
        match read {
            Err(_) if insisted => Ok(Some(io::Error::new(
                io::ErrorKind::Interrupted,
                "stopped by a second signal before its end",
            ))),
            read => read,
        }
    }

    /// [`Engine::check_reader_with`], with what follows the checked events on a thread of its
    /// own: the rules take batch after batch here while `follower` takes the batches already
    /// checked, each with its findings, in stream order, as `each` and `emit` would have
    /// (inspect's fold and pages cost more than the rules, and held up the stream on one
    /// core). At most [`FOLLOW_AHEAD`] checked batches wait for it.
    pub fn check_reader_followed(
        &mut self,
        reader: &mut dyn FrameReader,
        live: bool,
        follower: &mut dyn Follower,
    ) -> io::Result<Option<io::Error>> {
        use std::sync::mpsc;
        let preparer = self.stream_preparer();
        let (hand, handed) =
            mpsc::sync_channel::<(Batch, Vec<Prepared>, Vec<Diagnostic>)>(FOLLOW_AHEAD);
        let (give_back, given_back) = mpsc::channel::<(Batch, Vec<Prepared>)>();
        std::thread::scope(|scope| {
            let following = scope.spawn(move || {
                for (batch, prepared, mut found) in handed {
                    follow_batch(&batch, &prepared, follower);
                    follower.found(&mut found);
                    // Back to the reader for reuse; dropped here if it has stopped.
                    let _ = give_back.send((batch, prepared));
                }
            });
            let mut found = Vec::new();
            let result = pipelined(
                reader,
                live,
                |batch| preparer.prepare_batch(batch),
                |batch, prepared| {
                    // A stop (Ctrl-C, SIGTERM) ends the reading of a file too, not only of a
                    // stream still being written: what follows would be thrown away.
                    if crate::stop::requested() {
                        return Err(io::ErrorKind::Interrupted.into());
                    }
                    self.feed_batch(batch, prepared, &mut found, None);
                    // The batch goes on; one the follower is done with takes its place.
                    let (mut spare, mut done) = given_back.try_recv().unwrap_or_default();
                    std::mem::swap(batch, &mut spare);
                    std::mem::swap(prepared, &mut done);
                    hand.send((spare, done, std::mem::take(&mut found)))
                        .map_err(|_| io::Error::other("the follower of the checked events stopped"))
                },
            );
            drop(hand);
            match following.join() {
                Ok(()) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    /// Feeds a delta event read on the fast path; `false` when it needs the whole path.
    fn feed_delta(
        &mut self,
        delta: &Delta,
        loc: &Location,
        batch: &Batch,
        frame: &Frame,
        out: &mut Vec<Diagnostic>,
    ) -> bool {
        let raw = batch.bytes(frame);
        let view = DeltaView {
            kind: delta.kind,
            id: delta.id.in_frame(batch, frame),
            delta: &delta.delta,
            raw,
            owner: delta.owner.as_ref().map(|o| o.in_frame(batch, frame)),
            timestamp: delta.timestamp,
        };
        let mut found = Vec::new();
        if self.follow
            && !self
                .protocol
                .on_delta(&view, loc, self.ctx.levels, &mut found)
        {
            return false;
        }
        self.stats.frames += 1;
        self.stats.events += 1;
        self.known_events += 1;
        if !found.is_empty() {
            for d in &mut found {
                d.event_type = Some(delta.kind.as_str().to_owned());
                d.excerpt = excerpt(raw);
            }
            found.sort_by_key(|d| d.rule);
            for d in found {
                self.emit(d, out);
            }
        }
        if self.holding {
            self.release_held(out);
        }
        true
    }

    fn feed_ref(
        &mut self,
        event: Option<&Event>,
        mut found: Vec<Diagnostic>,
        raw: &[u8],
        out: &mut Vec<Diagnostic>,
    ) {
        self.stats.frames += 1;
        if let Some(event) = event {
            self.stats.events += 1;
            if event.kind.is_some() {
                self.known_events += 1;
            }
            if event.kind == Some(EventType::RunError) {
                self.failures.note(event);
            }
            if event.kind == Some(EventType::RunStarted) {
                self.versioning.run_started(event, &mut found);
                self.protocol.set_version(self.versioning.current());
                if let Some((thread, run)) = self.run_ids.take() {
                    found.extend(run_id_mismatch((thread.as_deref(), run.as_deref()), event));
                }
            }
            self.judge_by_version(event, raw, &mut found);
            if self.follow {
                // A member a newer version may add is not applied either: a client strips it.
                let conforms = !found.iter().any(|d| {
                    d.rule == RuleId::SchemaViolation || d.rule == RuleId::VersionUnrecognised
                });
                self.protocol
                    .on_event(event, raw, conforms, self.ctx.levels, &mut found);
            }
            if !found.is_empty() {
                let ty = event.type_name();
                // A finding about an earlier event (a call the run's end leaves unanswered)
                // is not labelled with this one.
                for d in found
                    .iter_mut()
                    .filter(|d| d.event_index.is_none_or(|at| at == event.loc.index))
                {
                    if d.event_type.is_none() {
                        d.event_type = ty.map(str::to_owned);
                    }
                    if d.excerpt.is_none() {
                        d.excerpt = excerpt(raw);
                    }
                }
            }
        }
        if !found.is_empty() {
            found.sort_by_key(|d| d.rule);
            for d in found {
                self.emit(d, out);
            }
        }
        if self.holding && (self.known_events > 0 || self.held.len() > HOLD_LIMIT) {
            self.release_held(out);
        }
    }

    /// Lets out the findings held while no event had been seen, unless some were only
    /// counted: then the input is to be read again (see [`Engine::count_past_hold`]).
    fn release_held(&mut self, out: &mut Vec<Diagnostic>) {
        if self.counted > 0 {
            self.reread = true;
        } else {
            self.release(out);
        }
    }

    /// Holds an event to the schemas of the version its run is held to. Events were checked
    /// on the pool against the newest version's; only an event those found something in (or
    /// that carries what the newest version added) is checked again, against its own.
    fn judge_by_version(&mut self, event: &Event, raw: &[u8], found: &mut Vec<Diagnostic>) {
        let version = self.versioning.current();
        let schemas = self.ctx.schemas;
        let recheck = version != schemas.version()
            && (found.iter().any(|d| d.rule.rule().family() == "schema")
                || carries_encrypted_value_type(raw)
                || schemas.overlays_version(version));
        if recheck {
            found.retain(|d| d.rule.rule().family() != "schema");
            super::rules::schema::check(
                event,
                schemas.for_version(version),
                self.ctx.levels,
                found,
            );
        }
        if self.versioning.newer() {
            // What the newer version may add is no error of a run that declares it.
            for d in found.iter_mut() {
                let unnamed_member = d.rule == RuleId::SchemaViolation
                    && matches!(d.keyword.as_deref(), Some("enum" | "const"));
                if d.rule == RuleId::SchemaUnknownEventType || unnamed_member {
                    d.rule = RuleId::VersionUnrecognised;
                    d.message = format!(
                        "{}: not in {version}, which this run is checked by; the newer version \
                         it declares may add it, and a {version} client drops or strips it with \
                         a warning",
                        d.message
                    );
                    d.help = Some(format!(
                        "a {version} client leaves it out; an agui-lens that knows the declared \
                         version judges it"
                    ));
                }
            }
        }
        let Some((kind, replacement)) = event
            .kind
            .and_then(|kind| Some((kind, kind.replaced_by()?)))
        else {
            return;
        };
        // Allowed under the releases before 1.0; an error of its own in a run that declares
        // 1.0 or later, or that the user holds to such a version (`--protocol 1.0`); else
        // (nothing declared or asked) the deprecation warning stands.
        let held = || {
            self.versioning
                .declared()
                .map(|declared| format!("declares protocol \"{declared}\""))
                .or_else(|| {
                    let asked = self.ctx.protocol.version?;
                    Some(format!("is held to protocol \"{asked}\" (--protocol)"))
                })
        };
        if version.has_thinking_events() {
            found.retain(|d| d.rule != RuleId::SchemaDeprecatedEvent);
        } else if let Some(held) = held() {
            found.retain(|d| d.rule != RuleId::SchemaDeprecatedEvent);
            found.push(
                parse::finding(
                    RuleId::VersionRemovedEvent,
                    &event.loc,
                    format!("{kind} in a run that {held}, which has no such event: 1.0 removed THINKING_*"),
                )
                .with_help(format!("send {replacement} instead"))
                .with_subject(kind.as_str()),
            );
        }
    }

    /// The protocol versions the stream was judged by, and why.
    pub fn versions(&self) -> &[super::version::VersionUse] {
        self.versioning.uses()
    }

    /// Events of a type AG-UI defines seen so far: none means the input is no stream.
    pub fn known_events(&self) -> u64 {
        self.known_events
    }

    /// The runs that ended in RUN_ERROR so far.
    pub fn run_failures(&self) -> &RunFailures {
        &self.failures
    }

    /// Whether the input ending now would leave a run, a message or a tool call open (what
    /// the end-of-stream rules report).
    pub fn ends_inside_a_run(&self) -> bool {
        self.protocol.ends_inside_a_run()
    }

    /// Gives the first bytes of an input fed frame by frame (no reader opened it, so none was
    /// peeked): what a stream of no events is said to hold. A head already known stays.
    pub fn learn_head(&mut self, bytes: &[u8]) {
        if self.known_events == 0 && self.head.len() < crate::read::detect::SNIFF_LEN {
            let room = crate::read::detect::SNIFF_LEN - self.head.len();
            self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }

    /// Reports a finding from outside the stream (the connection it came over, the input that
    /// was sent), under the user's levels and in the input's counts.
    pub fn report(&mut self, d: Diagnostic, out: &mut Vec<Diagnostic>) {
        self.emit(d, out);
    }

    /// Says the input ended early for a reason already reported with [`Engine::report`], so
    /// an empty input is not reported again as `framing/no-events`.
    pub fn cut_short(&mut self) {
        self.cut_short = true;
    }

    /// Reports `d`, the reason the input ended early (a timeout, a lost connection), as
    /// [`Engine::report`] does, and then [`Engine::cut_short`] if the levels keep it: where
    /// they leave it out (a tier that holds no timeouts), an empty input is still reported
    /// as one, or nothing would say that nothing was checked.
    pub fn report_cut(&mut self, d: Diagnostic, out: &mut Vec<Diagnostic>) {
        if self.ctx.levels.severity(d.rule).is_some() {
            self.cut_short = true;
        } else {
            self.unreported_cut = Some(d.message.clone());
        }
        self.emit(d, out);
    }

    /// Says reading stopped before the input ended, at the user's request (Ctrl-C during a
    /// live call): the end-of-stream rules are not run, and an empty input is not reported.
    pub fn stopped_early(&mut self) {
        self.stopped = true;
        self.cut_short = true;
    }

    /// Ends the input: reports what only the end can tell. Returns the input's counts.
    pub fn finish(mut self, out: &mut Vec<Diagnostic>) -> Stats {
        let mut found = Vec::new();
        if self.follow && !self.stopped {
            self.protocol.finish(self.ctx.levels, &mut found);
        }
        for d in found {
            self.emit(d, out);
        }
        if self.known_events == 0 {
            // Objects of no AG-UI type are not events: an input of them holds none.
            self.stats.events = 0;
        }
        if self.holding && self.known_events == 0 && !self.cut_short {
            // Findings that only say "this is not an event" are folded into one.
            let folded = self.held.iter().filter(|d| only_no_event(d)).count() as u64
                + std::mem::take(&mut self.counted);
            self.first_counted = None;
            self.held.retain(|d| !only_no_event(d));
            // A live call's input is the response to a request it made: say so.
            let live = self.ctx.protocol.input.is_some();
            let mut message = if let Some(cut) = &self.unreported_cut {
                format!("no AG-UI events: {cut}")
            } else if live && self.head.iter().all(u8::is_ascii_whitespace) {
                "no AG-UI events: the agent answered with an empty body".to_owned()
            } else if live {
                format!(
                    "no AG-UI events in the response: {}",
                    describe_non_stream(&self.head).replace("the input", "the body")
                )
            } else {
                format!("no AG-UI events: {}", describe_non_stream(&self.head))
            };
            if folded > 0 {
                message.push_str(&format!(
                    " ({folded} {} could not be read as events)",
                    if folded == 1 { "frame" } else { "frames" }
                ));
            }
            let severity = self.ctx.levels.severity(RuleId::FramingNoEvents);
            self.holding = false;
            let kept = std::mem::take(&mut self.held);
            for d in kept {
                self.emit(d, out);
            }
            if severity.is_some() {
                let help = if live {
                    "the agent took the request and streamed nothing: its log says why (a run that fails before its first event often ends like this)"
                } else {
                    "capture the response body of a successful run (Accept: text/event-stream)"
                };
                let d = parse::finding(RuleId::FramingNoEvents, &self.whole_input(), message)
                    .with_help(help);
                self.emit(d, out);
            }
        }
        if let Some(mut first) = self.first_counted.take() {
            // Reading stopped before the input could be read again: the frames only counted
            // are said in one finding, the first of them.
            let more = self.counted - 1;
            if more > 0 {
                first.message.push_str(&format!(
                    " (and {more} more {} before the first event could not be read as events; \
                     reading stopped before they were listed)",
                    if more == 1 { "frame" } else { "frames" }
                ));
            }
            let at = self.held.len().min(HOLD_LIMIT);
            self.held.insert(at, first);
        }
        self.release(out);
        self.stats
    }

    fn whole_input(&self) -> crate::protocol::event::Location {
        crate::protocol::event::Location {
            path: self.path.clone(),
            line: 1,
            offset: 0,
            index: 0,
        }
    }

    fn release(&mut self, out: &mut Vec<Diagnostic>) {
        self.holding = false;
        for d in self.held.drain(..) {
            self.stats.count(&d);
            out.push(d);
        }
    }

    fn emit(&mut self, mut d: Diagnostic, out: &mut Vec<Diagnostic>) {
        let Some(severity) = self.ctx.levels.severity(d.rule) else {
            return;
        };
        d.severity = severity;
        if d.rule == RuleId::FramingProtoTruncated {
            // A protobuf body cut short says why no event came (before its first, there was
            // none): it is not said again as one that holds none.
            self.cut_short = true;
        }
        if self.holding {
            if self.count_past_hold && self.held.len() >= HOLD_LIMIT && only_no_event(&d) {
                self.counted += 1;
                self.first_counted.get_or_insert(d);
            } else {
                self.held.push(d);
            }
        } else {
            self.stats.count(&d);
            out.push(d);
        }
    }
}

impl Stats {
    /// Counts a finding under its severity.
    pub fn count(&mut self, d: &Diagnostic) {
        match d.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Note => self.notes += 1,
        }
    }
}

/// Whether an event's bytes mention `encryptedValueType`, which only the newest version has.
/// The searcher is built once: building one per event cost more than the search.
fn carries_encrypted_value_type(raw: &[u8]) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"encryptedValueType"));
    FINDER.find(raw).is_some()
}

/// RUN_STARTED must name the thread and run the input sent (`transport/run-id-mismatch`).
pub fn run_id_mismatch(
    (thread_id, run_id): (Option<&str>, Option<&str>),
    event: &Event,
) -> Option<Diagnostic> {
    let mut differences = Vec::new();
    for (key, sent) in [("threadId", thread_id), ("runId", run_id)] {
        let Some(sent) = sent else { continue };
        let got = event.str_field(key);
        if got != Some(sent) {
            let got = got.map_or_else(|| "none".to_owned(), |g| format!("{g:?}"));
            differences.push(format!("{key} {got} where the input sent {sent:?}"));
        }
    }
    if differences.is_empty() {
        return None;
    }
    Some(
        parse::finding(
            RuleId::TransportRunIdMismatch,
            &event.loc,
            format!("RUN_STARTED has {}", differences.join(", and ")),
        )
        .with_help("echo the RunAgentInput's threadId and runId in RUN_STARTED")
        .with_event_type(Some("RUN_STARTED")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::schema::SchemaSet;
    use crate::read::{ReadOptions, open_reader};

    /// Hands out at most `step` bytes per read, so that the reader makes many batches.
    struct Trickle(std::io::Cursor<Vec<u8>>, usize);

    impl io::Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.1);
            self.0.read(&mut buf[..n])
        }
    }

    /// What was handed over, in order, one line each.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Log {
        fn fed(&mut self, fed: Fed<'_>) {
            self.0.push(match fed {
                Fed::Event(e) => format!("event {} {:?}", e.loc.index, e.type_name()),
                Fed::Delta {
                    id, delta, frame, ..
                } => format!("delta {} {id} {delta}", frame.index),
            });
        }

        fn found(&mut self, found: &mut Vec<Diagnostic>) {
            let rules: Vec<_> = found.drain(..).map(|d| d.rule.name()).collect();
            self.0.push(format!("found {rules:?}"));
        }
    }

    impl Follower for Log {
        fn fed(&mut self, fed: Fed<'_>, _: &[u8]) {
            Log::fed(self, fed);
        }

        fn found(&mut self, found: &mut Vec<Diagnostic>) {
            Log::found(self, found);
        }
    }

    /// The follower on its own thread is handed what `each` and `emit` are, in the same
    /// order: plain deltas as deltas, a delta that needed the whole path (a chunk stream was
    /// open) as its event, nothing for a line that is no event, each batch's findings after
    /// its events.
    #[test]
    fn a_follower_is_handed_what_each_is() {
        let lines = [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}"#,
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
            r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"c"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"d"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m9","delta":"e"}"#,
            r#"{nope"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}"#,
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
        ];
        let text = lines.join("\n").repeat(3);
        let schemas = SchemaSet::embedded().unwrap();
        let levels = Levels::default();
        let ctx = Context::new(&schemas, &levels);
        let run = |step: usize, followed: bool| {
            let raw = Box::new(Trickle(
                std::io::Cursor::new(text.clone().into_bytes()),
                step,
            ));
            let mut opened = open_reader("s".into(), raw, None, &ReadOptions::default()).unwrap();
            let mut engine =
                Engine::new(&ctx, opened.name.clone(), std::mem::take(&mut opened.head));
            let log = std::cell::RefCell::new(Log::default());
            if followed {
                let mut log = log.into_inner();
                let failure = engine.check_reader_followed(opened.reader.as_mut(), false, &mut log);
                assert!(failure.unwrap().is_none());
                return log.0;
            }
            let mut found = Vec::new();
            let failure = engine.check_reader_with(
                opened.reader.as_mut(),
                false,
                &mut found,
                &mut |found| {
                    log.borrow_mut().found(found);
                    Ok(())
                },
                &mut |fed, _| log.borrow_mut().fed(fed),
            );
            assert!(failure.unwrap().is_none());
            log.into_inner().0
        };
        for step in [64, 200, 1 << 20] {
            let each = run(step, false);
            assert_eq!(run(step, true), each, "reads of {step} bytes");
            let has = |p: &str| each.iter().any(|l| l.starts_with(p));
            assert!(has("delta 2 m1 a") && has("event 6 Some(\"TEXT_MESSAGE_CONTENT\")"));
            assert!(each.iter().any(|l| l.starts_with("found [") && l.len() > 8));
            let batches = each.iter().filter(|l| l.starts_with("found")).count();
            assert!(step > 1000 || batches > 5, "{batches} batches");
        }
    }

    /// Counting past the hold: a long input of no events ends in one `framing/no-events`
    /// that counts every frame; an event after them asks for the input to be read again and
    /// lets nothing out; stopped before that, the frames only counted are said in one finding.
    #[test]
    fn frames_counted_past_the_hold_are_never_lost() {
        let schemas = SchemaSet::embedded().unwrap();
        let levels = Levels::default();
        let ctx = Context::new(&schemas, &levels);
        let junk = "not json\n".repeat(40);
        let event = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
        let check = |text: String, stop: bool| {
            let raw = Box::new(Trickle(std::io::Cursor::new(text.into_bytes()), 64));
            let mut opened = open_reader("s".into(), raw, None, &ReadOptions::default()).unwrap();
            let mut engine =
                Engine::new(&ctx, opened.name.clone(), std::mem::take(&mut opened.head));
            engine.count_past_hold();
            let mut out = Vec::new();
            let mut let_out = 0;
            let read = engine.check_reader(opened.reader.as_mut(), false, &mut out, &mut |out| {
                let_out += out.len();
                out.clear();
                Ok(())
            });
            let reread = engine.needs_rereading();
            assert_eq!(read.is_err(), reread);
            if stop {
                engine.stopped_early();
            }
            let stats = engine.finish(&mut out);
            (reread, let_out, out, stats)
        };

        let (reread, let_out, out, stats) = check(junk.clone(), false);
        assert!(!reread);
        assert_eq!(let_out, 0);
        let rules: Vec<_> = out.iter().map(|d| d.rule).collect();
        assert_eq!(rules, [RuleId::FramingNoEvents]);
        assert!(
            out[0]
                .message
                .ends_with("(40 frames could not be read as events)"),
            "{}",
            out[0].message
        );
        assert_eq!(stats.errors, 1);

        let (reread, let_out, _, _) = check(format!("{junk}{event}\n"), false);
        assert!(reread);
        assert_eq!(
            let_out, 0,
            "nothing is let out of a reading to be done again"
        );

        let (reread, _, out, stats) = check(format!("{junk}{event}\n"), true);
        assert!(reread);
        // The 32 held, the one for the rest, then what the event found (a note).
        let junk_found = out.iter().filter(|d| d.rule == RuleId::FramingInvalidJson);
        assert_eq!(junk_found.count(), HOLD_LIMIT + 1);
        assert_eq!(out[HOLD_LIMIT].rule, RuleId::FramingInvalidJson);
        assert!(
            out[HOLD_LIMIT].message.contains(
                "(and 7 more frames before the first event could not be read as events; \
                 reading stopped before they were listed)"
            ),
            "{}",
            out[HOLD_LIMIT].message
        );
        assert_eq!(stats.errors, HOLD_LIMIT as u64 + 1);
    }
}
