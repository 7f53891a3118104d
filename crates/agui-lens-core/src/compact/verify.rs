//! Verifying a compacted stream: checking and folding it as a reader of the written file
//! would, so that `compact` can compare it with the original before it replaces anything.
//!
//! Two ways reach the same result. [`read_back`] reads the file written and checks it.
//! [`Verifier`] checks the compacted events as the first pass writes them, and keeps a digest
//! of every event's text; [`Written::confirm`] then reads the file's frames (without parsing
//! them) and accepts the result only if they are those very texts, in that order. An event
//! written byte for byte as it was read is not parsed a second time: it is checked as the
//! event the first pass built from those same bytes (parsing is deterministic), with what the
//! schemas found wrong with it there, on the pool. `compact` falls back on [`read_back`]
//! whenever the file does not confirm. The digest (XXH3, 128 bits) is there to catch a
//! writer and a reader that disagree, not an adversary: whoever could change the file between
//! the two could as well change it after it is written.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value;
use xxhash_rust::xxh3::Xxh3;

use crate::check::catalog::{Level as RuleLevel, Levels, RuleId};
use crate::check::diagnostic::{Diagnostic, Severity};
use crate::check::engine::{Context as CheckContext, Engine, Fed};
use crate::check::rules::protocol::DEFAULT_STATE_LIMIT;
use crate::compare::difference::first_difference;
use crate::fold::threads::ByThread;
use crate::fold::{Folded, Folder};
use crate::protocol::event::{Event, EventType, Location};
use crate::read::{self, Batch, Caveat, FrameKind, InputFormat, ReadOptions};
use crate::text::abbreviate_value;
use crate::write::Output;

/// What checking the compacted stream found: what each of its threads folds to (in the order
/// threads came), and its errors by rule.
pub struct ReadBack {
    pub folded: Vec<(Option<String>, Folded)>,
    pub errors: BTreeMap<RuleId, u64>,
}

pub fn count_errors(counts: &mut BTreeMap<RuleId, u64>, found: impl Iterator<Item = Diagnostic>) {
    for d in found {
        if d.severity == Severity::Error {
            *counts.entry(d.rule).or_default() += 1;
        }
    }
}

/// Reads the compacted stream back (the bytes written, compressed if they are), checks it and
/// folds it.
pub fn read_back(
    ctx: &CheckContext<'_>,
    read: &ReadOptions,
    format: InputFormat,
    written: Box<dyn io::Read + Send>,
) -> Result<ReadBack> {
    let read = ReadOptions {
        format: Some(format),
        ..read.clone()
    };
    let name: Arc<str> = Arc::from("compacted");
    let mut opened = read::open_reader(name.clone(), written, None, &read)?;
    let mut engine = Engine::new(ctx, name, std::mem::take(&mut opened.head));
    let mut threads = threads_from(ctx);
    let mut found = Vec::new();
    let mut errors = BTreeMap::new();
    let failure = engine.check_reader_with(
        opened.reader.as_mut(),
        false,
        &mut found,
        &mut |found| {
            count_errors(&mut errors, found.drain(..));
            Ok(())
        },
        &mut |fed, _| fold_routed(&mut threads, fed),
    )?;
    if let Some(err) = failure {
        return Err(err).context("reading the compacted stream back");
    }
    engine.finish(&mut found);
    count_errors(&mut errors, found.drain(..));
    Ok(ReadBack {
        folded: threads.finish(),
        errors,
    })
}

/// Threads as `agui-lens fold` makes them, each starting from the state the check starts
/// from (`--initial-state`).
type Threads<'a> = ByThread<Box<dyn Fn() -> Folder + 'a>>;

fn threads_from<'a>(ctx: &'a CheckContext<'a>) -> Threads<'a> {
    let state = ctx.protocol.state.as_ref();
    ByThread::new(Box::new(move || {
        Folder::new(DEFAULT_STATE_LIMIT.max(1)).with_state(state.cloned())
    }))
}

/// Folds an event as the engine hands it over into the fold of its thread.
fn fold_routed(threads: &mut Threads<'_>, fed: Fed<'_>) {
    let built = match &fed {
        Fed::Event(event) => Some(*event),
        Fed::Delta { .. } => None,
    };
    let (_, folder) = threads.thread_of(built);
    fold_fed(folder, fed);
}

/// The rules verification runs: it compares errors only, so a rule that can only warn (or
/// note) is left out (the repeated-key scan, for one, would read every full event a second
/// time). The original's errors are counted under the same levels, so both sides count the
/// same rules.
pub fn verification_levels() -> Levels {
    let mut levels = Levels::default();
    for id in RuleId::ALL {
        if matches!(levels.level(*id), RuleLevel::Warn | RuleLevel::Note) {
            levels
                .set(id.name(), RuleLevel::Allow)
                .expect("a rule's own name selects it");
        }
    }
    levels
}

/// The rules verification runs for a project: those of [`verification_levels`], and every
/// rule the project's levels make an error (a warning raised in agui-lens.toml, `--deny`,
/// `--deny-warnings`), so that a stream failing `check` there is not compacted into one that
/// passes. The second value says whether the project raised any: merged deltas can take such
/// a rule's findings with them (a repeated key, an unknown field), so then the copy is held to
/// no fewer errors of any rule at every level (see [`judge`]).
pub fn verification_levels_for(project: &Levels) -> (Levels, bool) {
    let mut levels = verification_levels();
    let mut raised = false;
    for id in RuleId::ALL {
        if project.level(*id) == RuleLevel::Deny && levels.level(*id) != RuleLevel::Deny {
            levels
                .set(id.name(), RuleLevel::Deny)
                .expect("a rule's own name selects it");
            raised = true;
        }
    }
    (levels, raised)
}

/// Why the compacted stream may not replace the original when merging took schema errors
/// with it: an event that breaks a schema (a delta with a null timestamp) merged into
/// another loses its error, and the copy would pass where the original fails. `seen` is what
/// the schemas said of the original's events read whole on the way (without what the run's
/// declared version makes of them): it says where to look, and when nothing is amiss there,
/// the original is not read again; `None` when it was not looked at (every schema rule is
/// compared). `errors_before` counts the original's errors by rule, as the copy's are.
pub fn hidden_schema_errors(
    read_back: &ReadBack,
    seen: Option<&BTreeMap<RuleId, u64>>,
    errors_before: impl FnOnce() -> Result<BTreeMap<RuleId, u64>>,
) -> Result<Option<String>> {
    let after = |rule: &RuleId| read_back.errors.get(rule).copied().unwrap_or(0);
    if seen.is_some_and(|seen| seen.iter().all(|(rule, before)| after(rule) >= *before)) {
        return Ok(None);
    }
    let full = errors_before()?;
    let rules: Vec<RuleId> = match seen {
        Some(seen) => seen.keys().copied().collect(),
        None => full
            .keys()
            .copied()
            .filter(|rule| rule.name().starts_with("schema/"))
            .collect(),
    };
    for rule in rules {
        let (before, after) = (full.get(&rule).copied().unwrap_or(0), after(&rule));
        if after < before {
            return Ok(Some(format!(
                "the original has {before} {rule} errors, the compacted stream {after}: \
                 merging the events that have them would hide them"
            )));
        }
    }
    Ok(None)
}

/// The compacted stream must fold to the same messages and state, end its runs as the
/// original did (outcome, tool calls left pending, interrupts), and check with no more
/// errors of any rule. Returns why not, if not. `errors_before` counts the original's errors
/// by rule: it is called only when the compacted stream has some, or at the `snapshot` level
/// (`level`), where whole runs are replaced by snapshots of their result: there the
/// compacted stream must have no fewer errors of any rule either (a run whose events broke a
/// rule, snapshotted, folds the same and passes: the history would be called clean), but for
/// the rules of what was `dropped` as asked (frames that are no events, chunks the official
/// client fails on: `--drop-unreadable`). So it is at the `deltas` level too when the project
/// `raised` rules to errors ([`verification_levels_for`]).
pub fn judge(
    original: &[(Option<String>, Folded)],
    read_back: &ReadBack,
    (level, dropped, raised): (crate::compact::Level, bool, bool),
    errors_before: impl FnOnce() -> Result<BTreeMap<RuleId, u64>>,
) -> Result<Option<String>> {
    // The original's errors are counted only when they can tell something.
    let errors_after = &read_back.errors;
    let whole_runs = level == crate::compact::Level::Snapshot;
    let every_rule = whole_runs || raised;
    let errors_before = if errors_after.is_empty() && !every_rule {
        BTreeMap::new()
    } else {
        errors_before()?
    };
    if every_rule {
        // What --drop-unreadable drops: frames that are no events (framing), chunks the
        // official client fails on (a first chunk with no id); nothing else.
        let as_asked = |rule: &RuleId| {
            dropped
                && (rule.name().starts_with("framing/") || *rule == RuleId::PairingChunkMissingId)
        };
        for (rule, before) in errors_before.iter().filter(|(rule, _)| !as_asked(rule)) {
            let after = errors_after.get(rule).copied().unwrap_or(0);
            if after < *before && whole_runs && !raised {
                return Ok(Some(format!(
                    "the original has {before} {rule} errors, the compacted stream {after}: a \
                     run snapshotted would hide what its events broke; compact at the deltas \
                     level, which keeps them"
                )));
            }
            if after < *before {
                return Ok(Some(format!(
                    "the original has {before} {rule} errors under the rule levels given, the \
                     compacted stream {after}: merging the events that have them would hide them"
                )));
            }
        }
    }
    let count = |errors: &BTreeMap<RuleId, u64>, rule| errors.get(&rule).copied().unwrap_or(0);
    // A line of the compacted stream over the cap (a state collapsed into one snapshot
    // larger than any line the original held) is skipped when read back, and the fold then
    // differs: the line is the reason to give, not the fold.
    let (too_long, was) = (
        count(errors_after, RuleId::FramingLineTooLong),
        count(&errors_before, RuleId::FramingLineTooLong),
    );
    if too_long > was {
        return Ok(Some(format!(
            "the compacted stream would hold {} over the line cap (a state or activity \
             collapsed into one snapshot larger than any line of the original), which a \
             reader with that cap skips; raise --max-line, or compact at a level that keeps \
             such events",
            crate::text::plural(too_long - was, "line")
        )));
    }
    let (original, compacted) = (held(original), held(&read_back.folded));
    let names = |threads: &[&(Option<String>, Folded)]| {
        threads
            .iter()
            .map(|(t, _)| t.as_deref().unwrap_or("(none)").to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (before, after) = (names(&original), names(&compacted));
    if before != after {
        return Ok(Some(format!(
            "the compacted stream holds other threads: {before} before, {after} after"
        )));
    }
    let several = original.len() > 1;
    for ((thread, original), (_, folded)) in original.into_iter().zip(compacted) {
        if let Some(why) = judge_thread(original, folded) {
            return Ok(Some(match (several, thread) {
                (true, Some(thread)) => format!("in thread \"{thread}\", {why}"),
                _ => why,
            }));
        }
    }
    for (rule, after) in errors_after {
        let before = count(&errors_before, *rule);
        if *after > before {
            return Ok(Some(format!(
                "the compacted stream has {after} {rule} errors, the original {before}"
            )));
        }
    }
    Ok(None)
}

/// The threads that hold anything (a thread whose events all failed to apply is as good as
/// none).
fn held(threads: &[(Option<String>, Folded)]) -> Vec<&(Option<String>, Folded)> {
    threads.iter().filter(|(_, f)| !f.is_empty()).collect()
}

/// Why one thread's compacted fold differs from its original, if it does.
fn judge_thread(original: &Folded, folded: &Folded) -> Option<String> {
    // Equal as they stand, they mean the same; only otherwise are both copied into the form
    // that compares by meaning (numbers by value), which would copy a long history twice.
    let null = serde_json::Value::Null;
    let same = original.messages == folded.messages
        && original.state.as_ref().unwrap_or(&null) == folded.state.as_ref().unwrap_or(&null);
    let difference = if same {
        None
    } else {
        first_difference(&original.meaning(), &folded.meaning())
    };
    let show = |v: &Option<serde_json::Value>| match v {
        Some(v) => abbreviate_value(v, 100),
        None => "(absent)".into(),
    };
    let at = |pointer: &str| {
        if pointer.is_empty() {
            "/".to_owned()
        } else {
            pointer.to_owned()
        }
    };
    if let Some(d) = difference {
        return Some(format!(
            "the compacted stream folds differently at {}: {} before, {} after",
            at(&d.pointer),
            show(&d.left),
            show(&d.right)
        ));
    }
    // How each run ended, the tool calls it left for the client and the interrupts it left
    // open: what a client acts on next.
    let ended = |folded: &Folded| {
        serde_json::json!({
            "runs": folded.runs_json(),
            "pendingInterrupts": folded.pending_interrupts,
        })
    };
    let (before, after) = (ended(original), ended(folded));
    if before != after {
        if let Some(d) = first_difference(&before, &after) {
            return Some(format!(
                "the compacted stream ends its runs differently at {}: {} before, {} after",
                at(&d.pointer),
                show(&d.left),
                show(&d.right)
            ));
        }
    }
    None
}

/// Checks the original (again) and counts its errors by rule.
pub fn count_errors_of(
    ctx: &CheckContext<'_>,
    mut opened: read::Opened,
) -> Result<BTreeMap<RuleId, u64>> {
    let name = opened.name.clone();
    let mut engine = Engine::new(ctx, name.clone(), std::mem::take(&mut opened.head));
    let mut counts = BTreeMap::new();
    let mut found = Vec::new();
    let failure = engine
        .check_reader(opened.reader.as_mut(), false, &mut found, &mut |found| {
            count_errors(&mut counts, found.drain(..));
            Ok(())
        })
        .with_context(|| format!("checking {name}"))?;
    if let Some(err) = failure {
        return Err(err).with_context(|| format!("reading {name}"));
    }
    engine.finish(&mut found);
    count_errors(&mut counts, found.drain(..));
    Ok(counts)
}

/// Checks and folds compacted events as they are written, in order, as [`read_back`] would
/// find them in the file, and keeps a digest of their texts for [`Written::confirm`].
pub struct Verifier<'a> {
    engine: Engine<'a>,
    threads: Threads<'a>,
    found: Vec<Diagnostic>,
    errors: BTreeMap<RuleId, u64>,
    /// Holds one event's text at a time, for events that are parsed here.
    batch: Batch,
    written: Written,
}

impl<'a> Verifier<'a> {
    pub fn new(ctx: &'a CheckContext<'a>) -> Self {
        Verifier {
            engine: Engine::new(ctx, Arc::from("compacted"), Vec::new()),
            threads: threads_from(ctx),
            found: Vec::new(),
            errors: BTreeMap::new(),
            batch: Batch::default(),
            written: Written::default(),
        }
    }

    /// An event written as `text`, read as a reader of the file would.
    fn text(&mut self, text: &[u8]) {
        self.batch.clear();
        self.batch.push_frame(text, self.written.events);
        self.batch.check_utf8();
        self.written.add(text);
        let threads = &mut self.threads;
        self.engine
            .feed_frames(&self.batch, &mut self.found, &mut |fed, _| {
                fold_routed(threads, fed)
            });
        self.count();
    }

    /// An event written as `text`, the very text the first pass built `event` from (see
    /// [`Engine::feed_checked`]; `schema`, what the schemas found wrong with it, if known).
    fn built(&mut self, event: &Event, schema: Option<&[Diagnostic]>, text: &[u8]) {
        if is_content_delta(event)
            || !self
                .engine
                .feed_checked(event, schema, text, &mut self.found)
        {
            return self.text(text);
        }
        self.written.add(text);
        self.threads.thread_of(Some(event)).1.apply(event);
        self.count();
    }

    fn count(&mut self) {
        if !self.found.is_empty() {
            count_errors(&mut self.errors, self.found.drain(..));
        }
    }

    /// Ends the stream: what checking it found, and what the file must hold.
    pub fn finish(mut self) -> (ReadBack, Written) {
        self.engine.finish(&mut self.found);
        count_errors(&mut self.errors, self.found.drain(..));
        let back = ReadBack {
            folded: self.threads.finish(),
            errors: self.errors,
        };
        (back, self.written)
    }
}

/// A plain content delta may be read on a reader's fast path, and is then handed over as a
/// delta rather than as a built event: such events are read as a reader would.
fn is_content_delta(event: &Event) -> bool {
    matches!(
        event.kind,
        Some(
            EventType::TextMessageContent
                | EventType::ReasoningMessageContent
                | EventType::ToolCallArgs
        )
    )
}

/// The texts of the events written, as a count and a digest.
#[derive(Default)]
pub struct Written {
    events: u64,
    digest: Digest,
}

/// A 128-bit XXH3 digest of a sequence of texts, each preceded by its length so that no two
/// sequences run together into the same bytes.
struct Digest(Xxh3);

impl Default for Digest {
    fn default() -> Self {
        Digest(Xxh3::new())
    }
}

impl Written {
    fn add(&mut self, text: &[u8]) {
        self.events += 1;
        self.digest.0.update(&(text.len() as u64).to_le_bytes());
        self.digest.0.update(text);
    }

    /// Whether `file`, read in `format` (decompressed if it is compressed), holds exactly
    /// these texts as its frames, in this order, and nothing else.
    pub fn confirm(
        &self,
        file: Box<dyn io::Read + Send>,
        format: InputFormat,
        read: &ReadOptions,
    ) -> Result<bool> {
        let read = ReadOptions {
            format: Some(format),
            ..read.clone()
        };
        let mut opened = read::open_reader(Arc::from("compacted"), file, None, &read)?;
        let mut found = Written::default();
        let mut batch = Batch::default();
        while opened.reader.next_batch(&mut batch)? {
            for frame in &batch.frames {
                match frame.kind {
                    // A frame over the official client's limit holds its event whole.
                    FrameKind::Data {
                        caveat:
                            Caveat::None
                            | Caveat::OverClientLimit { .. }
                            | Caveat::SseOverClientLimit { .. },
                        ..
                    } => found.add(batch.bytes(frame)),
                    _ => return Ok(false),
                }
            }
        }
        Ok(found.events == self.events && found.digest.0.digest128() == self.digest.0.digest128())
    }
}

/// The event being compacted, as its first pass built it.
#[derive(Clone, Copy)]
pub struct Current<'a> {
    pub event: &'a Event,
    /// The text it was built from.
    pub text: &'a [u8],
    /// What the schemas found wrong with it, if that is known.
    pub schema: Option<&'a [Diagnostic]>,
}

/// Whether `bytes`, written while `current` was compacted, is its text with the whitespace
/// between tokens taken out (as compaction writes an event it keeps) and reads as the very
/// event that was built from that text. Then checking `bytes` finds what checking the event
/// found, and the schemas need not be run on it again. For a history written with spaces
/// (Python's `json.dumps`), checking each kept event again as new text was half the
/// instructions of compacting it, its schemas a third. That `bytes` reads as the event is
/// found by parsing it, not taken from how it was made. An event whose patch is kept as text
/// is not compared (its value lacks the patch).
fn reads_as(current: Current<'_>, bytes: &[u8]) -> bool {
    let token = |b: &&u8| !matches!(**b, b' ' | b'\t' | b'\n' | b'\r');
    current.event.patch.is_none()
        && bytes.len() < current.text.len()
        && current
            .text
            .iter()
            .filter(token)
            .eq(bytes.iter().filter(token))
        && serde_json::from_slice::<Value>(bytes).is_ok_and(|value| value == current.event.value)
}

/// Writes compacted events to `out` and hands each to a [`Verifier`] as well.
pub struct Tee<'o, 'v, 'a> {
    pub out: &'o mut dyn Output,
    pub verifier: &'v mut Verifier<'a>,
    /// The event being compacted: when compaction writes the very text it was built from,
    /// it is checked as it was built.
    pub current: Option<Current<'o>>,
    /// Where events made by compaction are serialised.
    pub scratch: &'o mut Vec<u8>,
}

impl Output for Tee<'_, '_, '_> {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.raw(bytes)?;
        match self.current {
            // Mostly the very slice it was read as (no need to compare its bytes then).
            Some(current) if std::ptr::eq(current.text, bytes) || current.text == bytes => {
                self.verifier.built(current.event, current.schema, bytes)
            }
            Some(current) if reads_as(current, bytes) => {
                self.verifier.built(current.event, current.schema, bytes)
            }
            _ => self.verifier.text(bytes),
        }
        Ok(())
    }

    fn event(&mut self, value: &Value) -> io::Result<()> {
        self.scratch.clear();
        serde_json::to_writer(&mut *self.scratch, value).map_err(io::Error::other)?;
        self.out.raw(self.scratch)?;
        self.verifier.text(self.scratch);
        Ok(())
    }
}

/// Applies an event as the engine hands it over.
pub fn fold_fed(folder: &mut Folder, fed: Fed<'_>) {
    match fed {
        Fed::Event(event) => folder.apply(event),
        Fed::Delta {
            kind,
            id,
            delta,
            owner,
            ..
        } => {
            if !folder.apply_delta(kind, id, delta) {
                // Not expected (the engine only reads plain deltas while no chunk stream is
                // open, and the folder follows the same chunks), but exact if it happens.
                let id_field = if kind == EventType::ToolCallArgs {
                    "toolCallId"
                } else {
                    "messageId"
                };
                let mut value =
                    serde_json::json!({"type": kind.as_str(), id_field: id, "delta": delta});
                if let Some(owner) = owner {
                    value["subagentRunId"] = owner.into();
                }
                folder.apply(&Event {
                    loc: Location {
                        path: Arc::from("compacted"),
                        line: 0,
                        offset: 0,
                        index: 0,
                    },
                    kind: Some(kind),
                    value,
                    patch: None,
                    halves: false,
                    mended: false,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::schema::SchemaSet;

    struct Nowhere;

    impl Output for Nowhere {
        fn raw(&mut self, _: &[u8]) -> io::Result<()> {
            Ok(())
        }

        fn event(&mut self, _: &Value) -> io::Result<()> {
            Ok(())
        }
    }

    /// An event written with its whitespace taken out is checked as the event built from the
    /// original only when it reads as that event: text whose tokens are the same but whose
    /// strings lost a space (what a wrong minifier would write) is checked as written, and the
    /// verification folds what the file holds.
    #[test]
    fn a_shortened_event_is_taken_as_read_only_if_it_reads_the_same() {
        let schemas = SchemaSet::embedded().unwrap();
        let levels = verification_levels();
        let ctx = CheckContext::new(&schemas, &levels);
        let original: &[u8] = br#"{"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m1", "role": "user", "content": "a b"}]}"#;
        let loc = Location {
            path: Arc::from("t"),
            line: 1,
            offset: 0,
            index: 0,
        };
        let event = Event::from_value(loc, serde_json::from_slice(original).unwrap());
        let as_read: &[u8] = br#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","content":"a b"}]}"#;
        let lost_a_space: &[u8] = br#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","content":"ab"}]}"#;
        for (written, content, taken_as_read) in
            [(as_read, "a b", true), (lost_a_space, "ab", false)]
        {
            let current = Current {
                event: &event,
                text: original,
                schema: Some(&[]),
            };
            assert_eq!(reads_as(current, written), taken_as_read);
            let mut verifier = Verifier::new(&ctx);
            let mut scratch = Vec::new();
            Tee {
                out: &mut Nowhere,
                verifier: &mut verifier,
                current: Some(current),
                scratch: &mut scratch,
            }
            .raw(written)
            .unwrap();
            let (back, written) = verifier.finish();
            assert_eq!(back.folded[0].1.messages[0]["content"], content);
            assert_eq!(written.events, 1);
        }
    }
}
