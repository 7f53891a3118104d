//! Checking events as they arrive, one at a time (a stream being produced, a middleware that
//! checks what passes through), with every rule a file is checked with.

use std::sync::Arc;

use super::diagnostic::Diagnostic;
use super::engine::{Context, Engine, Stats};
use crate::read::{Batch, Caveat};

/// Checks a stream handed over one event's text at a time.
///
/// ```
/// use agui_lens_core::check::Checker;
/// use agui_lens_core::check::catalog::{Levels, RuleId};
/// use agui_lens_core::check::engine::Context;
/// use agui_lens_core::check::schema::SchemaSet;
///
/// let schemas = SchemaSet::embedded()?;
/// let levels = Levels::default();
/// let ctx = Context::new(&schemas, &levels);
/// let mut checker = Checker::new(&ctx, "live");
/// let started = br#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}"#;
/// assert!(checker.feed(started).is_empty());
/// let found = checker.feed(br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#);
/// assert_eq!(found[0].rule, RuleId::PairingTextMessage);
/// let (left, stats) = checker.finish();
/// assert_eq!(left[0].rule, RuleId::LifecycleUnterminatedRun);
/// assert_eq!(stats.events, 2);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub struct Checker<'a> {
    engine: Engine<'a>,
    batch: Batch,
    index: u64,
    offset: u64,
}

impl<'a> Checker<'a> {
    /// A checker for one stream, named `name` in its findings.
    pub fn new(ctx: &'a Context<'a>, name: &str) -> Self {
        Checker {
            engine: Engine::new(ctx, Arc::from(name), Vec::new()),
            batch: Batch::default(),
            index: 0,
            offset: 0,
        }
    }

    /// Checks the next event, given as its JSON text (one line of JSONL, one SSE frame's
    /// data); returns what it found. Findings that only the next events can decide (whether
    /// an input holds any event at all) come later, at the latest from [`Checker::finish`].
    pub fn feed(&mut self, text: &[u8]) -> Vec<Diagnostic> {
        self.batch.clear();
        self.batch
            .push_data(text, self.index + 1, self.offset, self.index, Caveat::None);
        self.batch.check_utf8();
        // Frames as a file would hold them, one per line.
        if self.index > 0 {
            self.engine.learn_head(b"\n");
        }
        self.engine.learn_head(text);
        self.index += 1;
        self.offset += text.len() as u64 + 1;
        let mut found = Vec::new();
        self.engine.check_batch(&self.batch, &mut found);
        found
    }

    /// Reports a finding from outside the stream (the RunAgentInput it answers), under the
    /// checker's levels; returns what is reported now (nothing while no event has come: it
    /// waits, as the stream's own findings do, in case the input holds no event at all).
    pub fn report(&mut self, d: Diagnostic) -> Vec<Diagnostic> {
        let mut found = Vec::new();
        self.engine.report(d, &mut found);
        found
    }

    /// Ends the stream: what only its end can tell (a run left open), and the counts.
    pub fn finish(self) -> (Vec<Diagnostic>, Stats) {
        let mut found = Vec::new();
        let stats = self.engine.finish(&mut found);
        (found, stats)
    }
}
