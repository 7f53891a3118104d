//! `agui-lens test SUITE.toml`: a conformance suite of live calls, a gate for CI. Each case
//! is one call, checked like `run`, then held to the case's expectations (status, required
//! events, snapshot, time to first event); a case passes when nothing is left at error level.
//! Cases run `-j` at a time; results are printed in suite order.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use super::Outcome;
use super::check::use_color;
use super::snapshot::{Hold, Verdict, hold};
use crate::cli::{TestArgs, parse_size};
use crate::config::Config;
use crate::live::call::{Call, LiveError, Taps, check_call};
use crate::live::request::process_env;
use crate::render::suite::{self, CaseOutcome};
use crate::suite::{Case, Suite};
use agui_lens_core::check::catalog::{Levels, RuleId};
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::Context;
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::compare::comparison::compare;
use agui_lens_core::protocol::event::{Event, EventType};
use agui_lens_core::read::{self, InputFormat, ReadOptions};
use agui_lens_core::report::{self, Format, Summary};

/// What every case shares.
struct Shared<'a> {
    suite_path: Arc<str>,
    schemas: &'a SchemaSet,
    levels: &'a Levels,
    max_line: usize,
    deny_warnings: bool,
    update: bool,
    reason: Option<&'a str>,
}

pub fn run(args: &TestArgs) -> Result<Outcome> {
    let config = Config::load(args.config.as_deref())?;
    let levels = config.levels(&[])?;
    let max_line = match &config.file.max_line {
        Some(text) => parse_size(text).map_err(anyhow::Error::msg)?,
        None => read::DEFAULT_MAX_LINE,
    };
    let schemas_dir = args.schemas.clone().or_else(|| config.schemas_dir());
    let schemas = SchemaSet::load(schemas_dir.as_deref())?;
    let suite = Suite::load(&args.suite, process_env)?;
    if args.update_snapshots
        && args.reason.is_none()
        && std::env::var_os("CI").is_some_and(|v| !v.is_empty())
    {
        bail!(
            "refusing to update snapshots in CI without --reason: say why the expectations change"
        );
    }
    let shared = Shared {
        suite_path: Arc::from(args.suite.to_string_lossy().as_ref()),
        schemas: &schemas,
        levels: &levels,
        max_line,
        deny_warnings: config.file.deny_warnings,
        update: args.update_snapshots,
        reason: args.reason.as_deref(),
    };
    // Ctrl-C or SIGTERM (a cancelled CI job) stops the case under way, which is reported as
    // an error, and the cases not started, which are reported as not run.
    crate::signals::catch();
    let color = use_color(args.output.color);
    let started = Instant::now();
    let mut out = io::BufWriter::new(io::stdout());
    if args.output.format == Format::Human {
        writeln!(
            out,
            "running {} from {}",
            report::plural(suite.cases.len() as u64, "case"),
            args.suite.display()
        )?;
        out.flush()?;
    }
    let mut human = crate::render::reporter(Format::Human, Box::new(io::stdout()), color, false);
    let mut outcomes = Vec::new();
    // Diagnostic blocks end with a blank line already.
    let mut blank = false;
    run_cases(&shared, &suite.cases, usize::from(args.jobs), |case| {
        match args.output.format {
            Format::Human => {
                writeln!(out, "{}", suite::human_line(&case, color))?;
                for note in &case.notes {
                    writeln!(out, "    {note}")?;
                }
                out.flush()?;
                blank = false;
                if !case.passed && !case.diagnostics.is_empty() {
                    for d in &case.diagnostics {
                        human.diagnostic(d)?;
                    }
                    human.flush()?;
                    blank = true;
                }
            }
            Format::Jsonl => {
                serde_json::to_writer(&mut out, &suite::case_json(&case))?;
                writeln!(out)?;
                out.flush()?;
            }
            _ => {}
        }
        outcomes.push(case);
        Ok(())
    })?;
    let elapsed = started.elapsed();
    let junit = suite::junit(&args.suite, &outcomes, elapsed);
    match args.output.format {
        Format::Human => {
            if !blank {
                writeln!(out)?;
            }
            writeln!(out, "{}", suite::human_summary(&outcomes, elapsed, color))?;
        }
        Format::Jsonl => {}
        Format::Json => {
            let cases: Vec<_> = outcomes.iter().map(suite::case_json).collect();
            let passed = outcomes.iter().filter(|c| c.passed).count();
            let not_run = outcomes.iter().filter(|c| c.skipped.is_some()).count();
            let document = serde_json::json!({
                "suite": args.suite.to_string_lossy(),
                "cases": cases,
                "summary": {
                    "cases": outcomes.len(),
                    "passed": passed,
                    "failed": outcomes.len() - passed - not_run,
                    "not_run": not_run,
                    "time_ms": elapsed.as_millis() as u64,
                },
            });
            serde_json::to_writer_pretty(&mut out, &document)?;
            writeln!(out)?;
        }
        Format::Junit => out.write_all(junit.as_bytes())?,
        Format::Github | Format::Sarif => {
            // Annotate the suite file at each case's line: a stream is not a file in the
            // repository.
            out.flush()?;
            let mut reporter =
                crate::render::reporter(args.output.format, Box::new(io::stdout()), false, false);
            let mut summary = Summary::default();
            for case in &outcomes {
                for d in &case.diagnostics {
                    reporter.diagnostic(&suite::in_suite(d, &shared.suite_path, case))?;
                }
                summary.files += 1;
                summary.events += case.stats.events;
                summary.errors += case.stats.errors;
                summary.warnings += case.stats.warnings;
            }
            if args.output.format == Format::Sarif {
                reporter.finish(&summary)?;
            } else {
                reporter.flush()?;
                for case in &outcomes {
                    writeln!(out, "{}", suite::human_line(case, false))?;
                }
                writeln!(out, "{}", suite::human_summary(&outcomes, elapsed, false))?;
            }
        }
    }
    out.flush()?;
    if let Some(path) = &args.junit {
        std::fs::write(path, &junit).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(if outcomes.iter().any(|c| c.failure.is_some()) {
        Outcome::Failed
    } else if outcomes.iter().all(|c| c.passed) {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// Runs the cases `jobs` at a time, handing each outcome to `done` in suite order.
fn run_cases(
    shared: &Shared<'_>,
    cases: &[Case],
    jobs: usize,
    mut done: impl FnMut(CaseOutcome) -> Result<()>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(cases.len()) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    if agui_lens_core::stop::requested() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    if tx.send((i, run_case(shared, case))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting = BTreeMap::new();
        let mut due = 0;
        for (i, outcome) in rx {
            waiting.insert(i, outcome);
            while let Some(outcome) = waiting.remove(&due) {
                due += 1;
                if let Err(e) = done(outcome) {
                    // Stop handing out cases; those running finish on their own.
                    next.store(cases.len(), Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        // Stopped early: the cases never started are reported as not run.
        for (i, case) in cases.iter().enumerate().skip(due) {
            let outcome = waiting.remove(&i).unwrap_or_else(|| {
                let mut outcome = CaseOutcome::new(case);
                outcome.skipped = Some(format!(
                    "not run: interrupted by {}",
                    agui_lens_core::stop::signal_name()
                ));
                outcome
            });
            done(outcome)?;
        }
        Ok(())
    })
}

fn run_case(shared: &Shared<'_>, case: &Case) -> CaseOutcome {
    let started = Instant::now();
    let levels = case.levels(shared.levels);
    let ctx = Context {
        schemas: shared.schemas,
        levels: &levels,
        max_line: shared.max_line,
        protocol: ProtocolOptions {
            max_args: shared.max_line,
            ..ProtocolOptions::default()
        },
    };
    let mut outcome = CaseOutcome::new(case);
    // The stream is recorded only to be compared with the snapshot.
    let mut record = match &case.snapshot {
        Some(_) => match tempfile::Builder::new().suffix(".jsonl").tempfile() {
            Ok(file) => Some(io::BufWriter::new(file)),
            Err(e) => {
                outcome.failure = Some(format!("creating a temporary file: {e}"));
                return outcome;
            }
        },
        None => None,
    };
    let mut seen = vec![false; EventType::ALL.len()];
    let mut on_event = |event: &Event, _: &[u8], _: Duration| {
        if let Some(kind) = event.kind {
            seen[kind.index()] = true;
        }
    };
    let call = Call {
        url: &case.url,
        headers: &case.headers,
        input: &case.input,
        idle_timeout: case.idle_timeout,
        timeout: case.timeout,
        expect_status: case.expect_status,
        accept: case.accept,
    };
    let name: Arc<str> = Arc::from(case.name.as_str());
    let mut found = Vec::new();
    let result = check_call(
        &ctx,
        &call,
        name,
        Taps {
            record: record.as_mut().map(|r| r as &mut dyn Write),
            record_raw: None,
            on_event: Some(&mut on_event),
        },
        &mut |diagnostics| {
            found.extend_from_slice(diagnostics);
            Ok(())
        },
    );
    let mut expectations = Expectations {
        shared,
        case,
        levels: &levels,
        found: Vec::new(),
    };
    let exchange = match result {
        Ok(exchange) => Some(exchange),
        Err(LiveError::Unreachable(why)) => {
            expectations.report(
                RuleId::SuiteStatusMismatch,
                format!("no response: {why}"),
                "start the agent, or check the case's url",
            );
            None
        }
        Err(LiveError::Failed(e)) => {
            outcome.failure = Some(format!("{e:#}"));
            None
        }
    };
    if let Some(exchange) = exchange.as_ref().filter(|e| e.interrupted) {
        // Half a stream holds no verdict on the case, and no expectation is written from it.
        outcome.stats = exchange.stats;
        outcome.status = exchange.status;
        outcome.content_type = exchange.content_type.clone();
        outcome.diagnostics = found;
        outcome.failure = Some(format!(
            "interrupted by {} after {}: the stream was not read to its end",
            agui_lens_core::stop::signal_name(),
            agui_lens_core::report::plural(exchange.stats.events, "event")
        ));
        outcome.elapsed = started.elapsed();
        return outcome;
    }
    if let Some(exchange) = &exchange {
        outcome.status = exchange.status;
        outcome.content_type = exchange.content_type.clone();
        outcome.first_event = exchange.first_event;
        outcome.stats = exchange.stats;
        let streamed = exchange.status.is_some_and(|s| (200..300).contains(&s));
        expectations.status(exchange.status, exchange.body_excerpt.clone());
        if streamed {
            if exchange.known_events == 0 {
                expectations.report(
                    RuleId::SuiteNoStream,
                    format!(
                        "the agent answered {} with no AG-UI events in {}",
                        exchange.status.unwrap_or_default(),
                        agui_lens_core::report::plural(exchange.bytes, "byte")
                    ),
                    "the agent did not run: see its logs and the body above",
                );
            }
            expectations.events(&seen);
            expectations.first_event(exchange.first_event);
            if let (Some(snapshot), Some(record)) = (&case.snapshot, record.take()) {
                match expectations.snapshot(snapshot, record) {
                    Ok(Some(note)) => outcome.notes.push(note),
                    Ok(None) => {}
                    Err(e) => outcome.failure = Some(format!("{e:#}")),
                }
            }
        }
    }
    for d in &expectations.found {
        outcome.stats.count(d);
    }
    found.append(&mut expectations.found);
    outcome.diagnostics = found;
    outcome.passed = outcome.failure.is_none()
        && outcome.stats.errors == 0
        && !(shared.deny_warnings && outcome.stats.warnings > 0);
    outcome.elapsed = started.elapsed();
    outcome
}

/// Holds one case's answer to what the suite expects of it; findings go to the case's line.
struct Expectations<'a> {
    shared: &'a Shared<'a>,
    case: &'a Case,
    levels: &'a Levels,
    found: Vec<Diagnostic>,
}

impl Expectations<'_> {
    fn report(&mut self, rule: RuleId, message: String, help: &str) -> Option<&mut Diagnostic> {
        let severity = self.levels.severity(rule)?;
        let mut d =
            Diagnostic::whole_input(rule, severity, self.shared.suite_path.clone(), message)
                .with_help(help);
        d.line = Some(self.case.line);
        self.found.push(d);
        self.found.last_mut()
    }

    fn status(&mut self, status: Option<u16>, body: Option<String>) {
        let Some(expected) = self.case.expect_status else {
            // Without an expectation, `transport/http-status` already reports a refusal.
            return;
        };
        let Some(status) = status else {
            self.report(
                RuleId::SuiteStatusMismatch,
                format!("no response head arrived, where the case expects {expected}"),
                "see the transport finding above",
            );
            return;
        };
        if status != expected {
            let help = if (200..300).contains(&expected) {
                "the body above usually says why the agent refused"
            } else {
                "the agent accepted what the case expects it to refuse"
            };
            if let Some(d) = self.report(
                RuleId::SuiteStatusMismatch,
                format!("the agent answered {status}, where the case expects {expected}"),
                help,
            ) {
                d.excerpt = body;
            }
        }
    }

    fn events(&mut self, seen: &[bool]) {
        let missing: Vec<&str> = self
            .case
            .require_events
            .iter()
            .filter(|ty| !seen[ty.index()])
            .map(|ty| ty.as_str())
            .collect();
        if !missing.is_empty() {
            let verb = if missing.len() == 1 { "was" } else { "were" };
            self.report(
                RuleId::SuiteMissingEvent,
                format!("{} {verb} never sent (require_events)", missing.join(", ")),
                "the stream did not do what the case is for; check the input asks for it",
            );
        }
    }

    fn first_event(&mut self, first: Option<Duration>) {
        let Some(limit) = self.case.max_first_event else {
            return;
        };
        let message = match first {
            Some(at) if at <= limit => return,
            Some(at) => format!(
                "the first event came after {} ms, over max_first_event_ms = {}",
                at.as_millis(),
                limit.as_millis()
            ),
            None => format!(
                "no event came at all (max_first_event_ms = {})",
                limit.as_millis()
            ),
        };
        self.report(
            RuleId::SuiteFirstEventSlow,
            message,
            "send RUN_STARTED as soon as the request is accepted, before slow work",
        );
    }

    /// Compares the recorded stream with the snapshot, the way `agui-lens snapshot` does.
    /// Returns a note when a snapshot was written.
    fn snapshot(
        &mut self,
        file: &Path,
        record: io::BufWriter<tempfile::NamedTempFile>,
    ) -> Result<Option<String>> {
        let record = record
            .into_inner()
            .map_err(|e| e.into_error())
            .context("writing the recording")?;
        let read = ReadOptions {
            format: Some(InputFormat::Jsonl),
            max_line: self.shared.max_line,
            entry: None,
        };
        let request = Hold {
            update: self.shared.update,
            reason: self.shared.reason.map(str::to_owned),
            level: None,
            settings: None,
        };
        let shown = file.display();
        let review = "review it with `agui-lens snapshot review DIR` or accept it with `agui-lens \
                      snapshot accept FILE`, or run the suite with --update-snapshots";
        match hold(record.path(), &read, file, &request)? {
            Verdict::Matches => Ok(None),
            Verdict::Written => Ok(Some(format!("wrote {shown}"))),
            Verdict::Updated => Ok(Some(format!("updated {shown}"))),
            Verdict::New { pending } => {
                self.report(
                    RuleId::SuiteSnapshotMismatch,
                    format!("no snapshot at {shown} yet: wrote {}", pending.display()),
                    review,
                );
                Ok(None)
            }
            Verdict::Changed {
                pending,
                stored,
                current,
            } => {
                let comparison = compare(&stored, &current);
                let mut message = format!("the stream no longer matches {shown}");
                if let Some(first) = &comparison.first {
                    let show = |v: &Option<serde_json::Value>| match v {
                        Some(v) => agui_lens_core::text::abbreviate_value(v, 80),
                        None => "(absent)".into(),
                    };
                    let pointer = if first.pointer.is_empty() {
                        "/"
                    } else {
                        &first.pointer
                    };
                    message.push_str(&format!(
                        ": item {} ({}) at {pointer} was {}, is {}",
                        first.index,
                        first
                            .right_type
                            .clone()
                            .or_else(|| first.left_type.clone())
                            .unwrap_or_default(),
                        show(&first.left),
                        show(&first.right)
                    ));
                }
                message.push_str(&format!("; wrote {}", pending.display()));
                self.report(RuleId::SuiteSnapshotMismatch, message, review);
                Ok(None)
            }
        }
    }
}
