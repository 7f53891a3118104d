//! `agui-lens test SUITE.toml`: a conformance suite of live calls, a gate for CI. Each case
//! is one call, checked like `run`, then held to the case's expectations (status, required
//! events, snapshot, time to first event); a case passes when nothing is left at error level.
//! Cases run `-j` at a time; results are printed in suite order.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use super::Outcome;
use super::baseline::{Gate, subtract};
use super::check::use_color;
use super::snapshot::{Hold, Verdict, hold_items};
use crate::cli::TestArgs;
use crate::config::Config;
use crate::live::call::{Call, LiveError, Taps, check_call};
use crate::live::http::wait_for;
use crate::live::request::{AgentInput, fresh_id, process_env};
use crate::render::suite::{self, CaseOutcome};
use crate::suite::{Case, Suite, Turn};
use agui_lens_core::check::capabilities::{Capabilities, levels_for};
use agui_lens_core::check::catalog::{Levels, RuleId};
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::Context;
use agui_lens_core::check::request::input_findings;
use agui_lens_core::check::rules::protocol::{DEFAULT_STATE_LIMIT, ProtocolOptions};
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::compare::Level as CompareLevel;
use agui_lens_core::compare::comparison::compare;
use agui_lens_core::compare::normalize::{Normalizer, Settings as NormalizeSettings};
use agui_lens_core::compare::streams::{ReadNotes, normalized_reading};
use agui_lens_core::fold::next::{Additions, next_input, pending_calls};
use agui_lens_core::fold::{Folded, Folder};
use agui_lens_core::protocol::event::{Event, EventType};
use agui_lens_core::read::{InputFormat, ReadOptions};
use agui_lens_core::report::{DiagnosticRecord, Format, Summary, plural};
use serde_json::{Value, json};

/// What every case shares.
struct Shared<'a> {
    suite_path: Arc<str>,
    schemas: &'a SchemaSet,
    levels: &'a Levels,
    max_line: usize,
    deny_warnings: bool,
    update: bool,
    reason: Option<&'a str>,
    artifacts: Option<&'a Path>,
    /// The capabilities declaration given on the command line, for cases that name none.
    declared: Option<&'a Capabilities>,
}

pub fn run(args: &TestArgs) -> Result<Outcome> {
    if let Some(junit) = &args.junit {
        // (Nor the baseline: a report written there in its place, for a suite that did not
        // begin, would be read as no baseline.)
        let mut read = vec![(args.suite.as_path(), "SUITE")];
        read.extend(args.baseline.baseline.as_deref().map(|b| (b, "--baseline")));
        super::refuse_output_over_input(junit, "--junit", &read)?;
        // (A file that holds something else is said when the suite does not begin.)
        if super::refuse_junit_over_other(junit).is_ok() {
            let name = format!("test {}", args.suite.display());
            super::report_under_way(junit, Format::Junit, &name)?;
        }
    }
    let mut begun = false;
    run_suite(args, &mut begun).map_err(|err| {
        if !begun {
            return not_begun(args, err);
        }
        // Ended by an error once under way: its `--junit` says so, not that it was killed.
        match &args.junit {
            Some(junit) if super::still_under_way(junit) => {
                let name = format!("test {}", args.suite.display());
                super::report_not_begun(Some(junit), Format::Junit, &name, err)
            }
            _ => err,
        }
    })
}

/// A suite that could not be run (one that does not read, a baseline that does not, an agent
/// `--wait-for` never heard from) says why in every report asked for: stdout in `--format`,
/// and `--junit`, which a CI step publishes whatever the exit status (the last run's green
/// one stood). A `--junit` file that holds anything but a report is not written over.
fn not_begun(args: &TestArgs, err: anyhow::Error) -> anyhow::Error {
    let name = format!("test {}", args.suite.display());
    let format = args.output.format;
    if format != Format::Human {
        if let Ok(bytes) = super::not_begun_report(format, &name, &err) {
            let mut out = super::ReportOut::default();
            let _ = out.write_all(&bytes).and_then(|()| out.flush());
        }
    }
    let Some(junit) = &args.junit else {
        return err;
    };
    if let Err(refused) = super::refuse_junit_over_other(junit) {
        // Said once, when that is why the suite did not begin (by its first words: a temp
        // file tried for it is named differently each time).
        let (said, why) = (format!("{err:#}"), format!("{refused:#}"));
        return if said.contains(&refused.to_string()) {
            err
        } else {
            err.context(why)
        };
    }
    super::report_not_begun(Some(junit), Format::Junit, &name, err)
}

fn run_suite(args: &TestArgs, begun: &mut bool) -> Result<Outcome> {
    let config = Config::load(args.config.as_deref())?;
    let levels = config.scoped_levels(&[], args.scope.tier)?;
    let declared = crate::declaration::from_flag(&args.scope)?;
    let max_line = config.max_line(None)?;
    let schemas_dir = args.schemas.clone().or_else(|| config.schemas_dir());
    let schemas = SchemaSet::load(schemas_dir.as_deref())?;
    let mut suite = Suite::load(&args.suite, process_env)?;
    if let Some(junit) = &args.junit {
        // Nor any file the suite reads: a case's input, a snapshot, the baseline.
        let mut read: Vec<(&Path, &str)> = Vec::new();
        for case in &suite.cases {
            if let Some(input) = &case.input_file {
                read.push((input, "a case's input"));
            }
            for turn in &case.turns {
                if let Some(snapshot) = &turn.snapshot {
                    read.push((snapshot, "a case's snapshot"));
                }
            }
        }
        if let Some(baseline) = &args.baseline.baseline {
            read.push((baseline, "--baseline"));
        }
        super::refuse_output_over_input(junit, "--junit", &read)?;
        super::refuse_junit_over_other(junit)?;
    }
    // The folders of every case of the suite, those `--case` leaves out too, are its own.
    let case_dirs: Vec<std::ffi::OsString> = match &args.artifacts {
        Some(root) => suite
            .cases
            .iter()
            .filter_map(|case| case_dir(root, case).file_name().map(ToOwned::to_owned))
            .collect(),
        None => Vec::new(),
    };
    suite.select(&args.cases)?;
    let left_out: Vec<std::ffi::OsString> = match &args.artifacts {
        Some(root) => {
            let chosen: Vec<std::ffi::OsString> = suite
                .cases
                .iter()
                .filter_map(|case| case_dir(root, case).file_name().map(ToOwned::to_owned))
                .collect();
            case_dirs
                .iter()
                .filter(|dir| !chosen.contains(dir))
                .cloned()
                .collect()
        }
        None => Vec::new(),
    };
    // A baseline that cannot be read stops the suite before any agent is called.
    let mut gate = Gate::load(&args.baseline)?;
    if let Some(gate) = gate.as_mut() {
        gate.running_cases(
            &args.suite.to_string_lossy(),
            suite
                .cases
                .iter()
                .flat_map(|case| case.turns.iter().map(|turn| case.turn_name(turn))),
        );
    }
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
        deny_warnings: config.deny_warnings(false),
        update: args.update_snapshots,
        reason: args.reason.as_deref(),
        artifacts: args.artifacts.as_deref(),
        declared: declared.as_ref(),
    };
    // Held until the suite ends: a second suite writing into the folder at once would mix
    // its cases' files with this one's.
    let _artifacts_lock = match &args.artifacts {
        Some(dir) => {
            super::create_folders(dir).with_context(|| format!("creating {}", dir.display()))?;
            let lock = lock_artifacts(dir)?;
            warn_stale_artifacts(dir, &case_dirs, &left_out);
            warn_stale_turns(dir, &suite.cases);
            Some(lock)
        }
        None => None,
    };
    // Ctrl-C or SIGTERM (a cancelled CI job) stops the case under way, which is reported as
    // an error, and the cases not started, which are reported as not run.
    crate::signals::catch();
    let color = use_color(args.output.color);
    if let Some(url) = &args.wait_for {
        if !(args.wait_timeout > 0.0 && args.wait_timeout < 1e9) {
            bail!(
                "--wait-timeout {} is not a number of seconds above 0",
                args.wait_timeout
            );
        }
        let limit = Duration::from_secs_f64(args.wait_timeout);
        let shown = crate::live::http::display_url(url);
        match wait_for(url, limit, agui_lens_core::stop::requested) {
            Ok(waited) if args.output.format == Format::Human => {
                say!("{shown} answered after {}", suite::secs(waited))
            }
            Ok(_) => {}
            Err(why) if agui_lens_core::stop::requested() => bail!(
                "--wait-for: stopped by {} while waiting for {shown} (last try: {why}); no case \
                 was run",
                agui_lens_core::stop::signal_name()
            ),
            Err(why) => bail!(
                "--wait-for: {shown} did not answer within {} s: {why}",
                args.wait_timeout
            ),
        }
    }
    *begun = true;
    let started = Instant::now();
    let mut out = io::BufWriter::new(super::ReportOut::default());
    if args.output.format == Format::Human {
        writeln!(
            out,
            "running {} from {}",
            plural(suite.cases.len() as u64, "case"),
            args.suite.display()
        )?;
        out.flush()?;
    }
    let mut human = crate::render::reporter(
        Format::Human,
        Box::new(super::ReportOut::default()),
        color,
        false,
    );
    let mut outcomes = Vec::new();
    // Diagnostic blocks end with a blank line already.
    let mut blank = false;
    run_cases(&shared, &suite.cases, usize::from(args.jobs), |turns| {
        for mut case in turns {
            if let Some(gate) = gate.as_mut() {
                let (kept, held) = std::mem::take(&mut case.diagnostics)
                    .into_iter()
                    .partition(|d| gate.keep(&of_case(&fresh_ids_hidden(d), &case.name)));
                case.diagnostics = kept;
                case.held = held;
                subtract(&mut case.stats, gate.take_held());
                if case.skipped.is_none() {
                    case.passed = passed(&shared, &case);
                }
            }
            match args.output.format {
                Format::Human => {
                    writeln!(out, "{}", suite::human_line(&case, color))?;
                    for note in &case.notes {
                        let note = agui_lens_core::report::human::visible_path(note);
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
        }
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
        Format::Jsonl => {
            // Stopped by a signal, as `check` says it: the cases under way were cut.
            if agui_lens_core::stop::requested() {
                let signal = agui_lens_core::stop::signal_name();
                writeln!(
                    out,
                    "{}",
                    agui_lens_core::report::jsonl::stopped_record(signal)
                )?;
            }
        }
        Format::Json => {
            let cases: Vec<_> = outcomes.iter().map(suite::case_json).collect();
            let passed = outcomes.iter().filter(|c| c.passed).count();
            let not_run = outcomes.iter().filter(|c| c.skipped.is_some()).count();
            let document = serde_json::json!({
                "suite": args.suite.to_string_lossy(),
                "cases": cases,
                // Counts of turns: a case of one turn is one.
                "summary": {
                    "cases": suite::distinct_cases(&outcomes),
                    "turns": outcomes.len(),
                    "passed": passed,
                    "failed": outcomes.len() - passed - not_run,
                    "not_run": not_run,
                    "time_ms": elapsed.as_millis() as u64,
                    // Stopped by a signal, as `check` says it: the cases under way were cut.
                    "stopped_by": agui_lens_core::stop::requested()
                        .then(agui_lens_core::stop::signal_name),
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
            let mut reporter = crate::render::reporter(
                args.output.format,
                Box::new(super::ReportOut::default()),
                false,
                false,
            );
            let mut summary = Summary {
                stopped_by: agui_lens_core::stop::requested()
                    .then(agui_lens_core::stop::signal_name),
                ..Summary::default()
            };
            let baseline = gate.as_ref().map(Gate::path).unwrap_or_default();
            for case in &outcomes {
                // A finding that says no more than why the case could not be asked (an agent
                // unreachable) is said once, as that, below.
                let said_below = |d: &&Diagnostic| case.error.as_ref() == Some(&d.message);
                for d in case.diagnostics.iter().filter(|d| !said_below(d)) {
                    reporter.diagnostic(&suite::in_suite(d, &shared.suite_path, case))?;
                }
                for d in &case.held {
                    reporter.held(&suite::in_suite(d, &shared.suite_path, case), &baseline)?;
                }
                // A case stopped, never run, or that could not be asked is no pass: said as
                // an input that failed (SARIF's run did not succeed; a GitHub error), in the
                // suite file.
                let why = [&case.failure, &case.error, &case.skipped]
                    .into_iter()
                    .find_map(Option::as_ref);
                // The case's notes (a run that ended in RUN_ERROR) are said beside it.
                if why.is_some() || !case.notes.is_empty() {
                    let mut said = agui_lens_core::report::FileSummary::checked(
                        shared.suite_path.clone(),
                        case.stats,
                        why.map(|why| format!("case \"{}\": {why}", case.name)),
                    );
                    // Said as "SUITE: case …", not as a file that could not be read, at
                    // the case's line.
                    said.interrupted = true;
                    said.line = Some(case.line);
                    said.notes = case
                        .notes
                        .iter()
                        .map(|note| format!("case \"{}\": {note}", case.name))
                        .collect();
                    reporter.end_file(&said)?;
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
                if let Some(signal) = summary.stopped_by {
                    let annotation = agui_lens_core::report::github::stopped_annotation(signal);
                    writeln!(out, "{annotation}")?;
                }
                for case in &outcomes {
                    writeln!(out, "{}", suite::human_line(case, false))?;
                }
                writeln!(out, "{}", suite::human_summary(&outcomes, elapsed, false))?;
            }
        }
    }
    out.flush()?;
    if let Some(path) = &args.junit {
        // Written whole or not at all, into folders made as needed (also when the run was
        // stopped: the report says so).
        super::write_bytes(path, junit.as_bytes())?;
    }
    let recording = gate.as_ref().is_some_and(Gate::recorded_all);
    if let Some(gate) = gate.as_mut() {
        // A case whose agent could not be asked (unreachable, timed out, cut off) found only
        // that: recorded, its real findings would be lost, and come back as new.
        if let Some(case) = outcomes
            .iter()
            .find(|c| c.error.is_some() || c.failure.is_some())
        {
            let why = case.error.as_ref().or(case.failure.as_ref());
            gate.incomplete(format!(
                "case \"{}\" got no answer to judge ({})",
                case.name,
                why.map_or("", String::as_str)
            ));
        }
    }
    if let Some(gate) = gate {
        gate.finish()?;
    }
    Ok(if outcomes.iter().any(|c| c.failure.is_some()) {
        Outcome::Failed
    } else if outcomes.iter().all(|c| c.passed) {
        Outcome::Clean
    } else if recording && !outcomes.iter().any(|c| c.error.is_some()) {
        // What was found is what the baseline now holds.
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// Runs the cases `jobs` at a time, handing each case's outcomes (one per turn) to `done`
/// in suite order. Cases with fixed ids on one thread form a chain, run in order by one
/// worker: a server that keeps threads must never see two runs of one thread at once.
fn run_cases(
    shared: &Shared<'_>,
    cases: &[Case],
    jobs: usize,
    mut done: impl FnMut(Vec<CaseOutcome>) -> Result<()>,
) -> Result<()> {
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let mut by_thread: HashMap<&str, usize> = HashMap::new();
    for (i, case) in cases.iter().enumerate() {
        match case.fixed_thread().and_then(|t| by_thread.get(t)) {
            Some(&chain) => chains[chain].push(i),
            None => {
                if let Some(thread) = case.fixed_thread() {
                    by_thread.insert(thread, chains.len());
                }
                chains.push(vec![i]);
            }
        }
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(chains.len()) {
            let tx = tx.clone();
            let next = &next;
            let chains = &chains;
            scope.spawn(move || {
                loop {
                    let c = next.fetch_add(1, Ordering::SeqCst);
                    let Some(chain) = chains.get(c) else { break };
                    for &i in chain {
                        if agui_lens_core::stop::requested() {
                            return;
                        }
                        if tx.send((i, run_case(shared, &cases[i]))).is_err() {
                            return;
                        }
                    }
                }
            });
        }
        drop(tx);
        let mut waiting = BTreeMap::new();
        let mut due = 0;
        for (i, outcomes) in rx {
            waiting.insert(i, outcomes);
            while let Some(outcomes) = waiting.remove(&due) {
                due += 1;
                if let Err(e) = done(outcomes) {
                    // Stop handing out cases; those running finish on their own.
                    next.store(chains.len(), Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        // Stopped early: the cases never started are reported as not run.
        for (i, case) in cases.iter().enumerate().skip(due) {
            let outcomes = waiting.remove(&i).unwrap_or_else(|| {
                let why = format!(
                    "not run: interrupted by {}",
                    agui_lens_core::stop::signal_name()
                );
                let outcomes: Vec<CaseOutcome> = case
                    .turns
                    .iter()
                    .map(|turn| not_run(case, turn, &why))
                    .collect();
                // Its folder says so, not what an earlier run into it found.
                unsent_artifacts(shared, case, &outcomes);
                outcomes
            });
            done(outcomes)?;
        }
        Ok(())
    })
}

/// A case's input that is no RunAgentInput, where the case expects a stream, is the case's
/// error and is not sent (as `run` refuses it): the agent's answer to it says nothing. A case
/// that expects a status sends it as written, to see the agent refuse it.
fn unsendable(
    shared: &Shared<'_>,
    case: &Case,
    input: &AgentInput,
    levels: &Levels,
) -> Option<CaseOutcome> {
    let turn = &case.turns[0];
    if turn.expect_status.is_some() {
        return None;
    }
    let severity = levels.severity(RuleId::RequestInputSchema)?;
    let found: Vec<Diagnostic> =
        input_findings(shared.schemas, &input.value, None, &shared.suite_path)
            .into_iter()
            .map(|mut d| {
                d.severity = severity;
                d.line = Some(turn.line);
                d.message.push_str(" (not sent)");
                let why = "A case sends its input only when it is a RunAgentInput; to see the \
                           agent refuse it, give the case the status it should answer \
                           (expect_status).";
                d.help = Some(match d.help.take() {
                    Some(help) => format!("{} {why}", help.trim_end()),
                    None => why.to_owned(),
                });
                d
            })
            .collect();
    if found.is_empty() {
        return None;
    }
    let mut outcome = CaseOutcome::new(case, turn);
    finish(shared, &mut outcome, found, Instant::now());
    Some(outcome)
}

/// The turns of a case from the `from`th (0-based) on, reported as not run.
fn not_run_from<'a>(
    case: &'a Case,
    from: usize,
    why: &'a str,
) -> impl Iterator<Item = TurnResult> + 'a {
    case.turns[from..]
        .iter()
        .map(move |turn| TurnResult::from(not_run(case, turn, why)))
}

fn not_run(case: &Case, turn: &Turn, why: &str) -> CaseOutcome {
    let mut outcome = CaseOutcome::new(case, turn);
    outcome.skipped = Some(why.to_owned());
    outcome
}

/// Runs a case turn by turn on one thread: fresh ids unless the case fixes them, each later
/// turn's request built from the fold of the one before.
fn run_case(shared: &Shared<'_>, case: &Case) -> Vec<CaseOutcome> {
    // A tier's limit survives the case's overrides; a declaration leaves capability rules on
    // only where it declares their capability.
    let mut levels = levels_for(
        case.capabilities.as_ref().or(shared.declared),
        &case.levels(shared.levels),
    );
    if shared.deny_warnings {
        levels.deny_warnings();
    }
    let mut outcomes = Vec::new();
    let first = if case.fixed_ids {
        Ok(case.input.clone())
    } else {
        case.input.with_ids(
            &format!("thread-{}", fresh_id()),
            &format!("run-{}", fresh_id()),
        )
    };
    let mut input = match first {
        Ok(input) => input,
        Err(e) => {
            let mut outcome = CaseOutcome::new(case, &case.turns[0]);
            outcome.failure = Some(e.to_string());
            unsent_artifacts(shared, case, [&outcome]);
            return vec![outcome];
        }
    };
    if let Some(outcome) = unsendable(shared, case, &input, &levels) {
        unsent_artifacts(shared, case, [&outcome]);
        return vec![outcome];
    }
    for (t, turn) in case.turns.iter().enumerate() {
        if t > 0 {
            let previous = outcomes.last().and_then(|o: &TurnResult| o.folded.as_ref());
            let Some(folded) = previous else {
                let why = format!("not run: turn {} did not end with a stream", t);
                outcomes.extend(not_run_from(case, t, &why));
                break;
            };
            match next_turn_input(case, turn, &input, folded) {
                Ok(next) => input = next,
                Err(mismatch) => {
                    let mut outcome = CaseOutcome::new(case, turn);
                    let mut found = Expectations::new(shared, turn, &levels);
                    found.report(
                        RuleId::SuiteTurnMismatch,
                        mismatch,
                        "make the case's turns follow what the agent does, or fix the agent",
                    );
                    finish(shared, &mut outcome, found.found, Instant::now());
                    // Nothing was sent: the findings say why.
                    unsent_artifacts(shared, case, [&outcome]);
                    outcomes.push(outcome.into());
                    let why = format!("not run: turn {} could not be built", t + 1);
                    outcomes.extend(not_run_from(case, t + 1, &why));
                    break;
                }
            }
        }
        let result = run_turn(shared, case, turn, &input, &levels);
        let stopped = result.folded.is_none();
        outcomes.push(result);
        if stopped && t + 1 < case.turns.len() {
            let why = if agui_lens_core::stop::requested() {
                format!(
                    "not run: interrupted by {}",
                    agui_lens_core::stop::signal_name()
                )
            } else {
                format!("not run: turn {} did not end with a stream", t + 1)
            };
            outcomes.extend(not_run_from(case, t + 1, &why));
            break;
        }
    }
    let outcomes: Vec<CaseOutcome> = outcomes.into_iter().map(|r| r.outcome).collect();
    unsent_artifacts(
        shared,
        case,
        outcomes.iter().filter(|o| o.skipped.is_some()),
    );
    outcomes
}

/// The artifacts of turns that sent nothing this run (not run, or failed before sending):
/// their verdict alone, and nothing an earlier run into the same folder wrote for them.
fn unsent_artifacts<'o>(
    shared: &Shared<'_>,
    case: &Case,
    outcomes: impl IntoIterator<Item = &'o CaseOutcome>,
) {
    let Some(root) = shared.artifacts else {
        return;
    };
    for outcome in outcomes {
        let Some(turn) = case.turns.iter().find(|t| t.number == outcome.turn) else {
            continue;
        };
        let dir = artifacts_dir(root, case, turn);
        match fresh_artifacts_dir(&dir) {
            Ok(()) => {
                // (Said on stderr when it fails: the turn was not run, and fails as not run.)
                let _ = write_artifacts(Some(&dir), outcome);
            }
            Err(e) => say!("agui-lens: preparing {}: {e}", dir.display()),
        }
    }
}

/// A turn's outcome and, when its stream was read to the end, what a client holds after it.
struct TurnResult {
    outcome: CaseOutcome,
    folded: Option<Folded>,
}

impl From<CaseOutcome> for TurnResult {
    fn from(outcome: CaseOutcome) -> Self {
        TurnResult {
            outcome,
            folded: None,
        }
    }
}

/// The request of a later turn: the fold of the turn before, the results of the frontend
/// tool calls it left waiting, answers to its interrupts, the turn's message. Err says why the
/// turn does not fit how the previous one ended.
fn next_turn_input(
    case: &Case,
    turn: &Turn,
    previous: &AgentInput,
    folded: &Folded,
) -> std::result::Result<AgentInput, String> {
    let adds = &turn.adds;
    let id = |kind: &str, n: usize| {
        if case.fixed_ids {
            format!("{kind}-turn{}-{n}", turn.number)
        } else {
            format!("{kind}-{}", fresh_id())
        }
    };
    let mut problems = Vec::new();
    let mut messages = Vec::new();
    let pending = pending_calls(&folded.messages);
    for call in &pending {
        let content = adds
            .tool_results
            .get(&call.name)
            .or_else(|| adds.tool_results.get("*"));
        match content {
            Some(content) => messages.push(json!({
                "id": id("msg", messages.len() + 1),
                "role": "tool",
                "toolCallId": call.id,
                "content": content,
            })),
            None => problems.push(format!(
                "turn {} left frontend tool call {} ({}) waiting, and turn {} gives no result for \
                 it (tool_results)",
                turn.number - 1,
                call.id,
                call.name,
                turn.number
            )),
        }
    }
    for tool in adds.tool_results.keys().filter(|t| *t != "*") {
        if !pending.iter().any(|c| &c.name == tool) {
            problems.push(format!(
                "turn {} gives a result for {tool}, but turn {} left no call of it waiting",
                turn.number,
                turn.number - 1
            ));
        }
    }
    if let Some(text) = &adds.message {
        messages.push(json!({
            "id": id("msg", messages.len() + 1),
            "role": "user",
            "content": text,
        }));
    }
    let mut resume = Vec::new();
    match (&adds.resume, folded.pending_interrupts.is_empty()) {
        (Some(answer), false) => {
            for interrupt in &folded.pending_interrupts {
                let mut entry = answer.clone();
                if let Some(id) = interrupt.get("id") {
                    entry.insert("interruptId".into(), id.clone());
                }
                resume.push(Value::Object(entry));
            }
        }
        (Some(_), true) => problems.push(format!(
            "turn {} resumes, but turn {} ended with no interrupt",
            turn.number,
            turn.number - 1
        )),
        (None, false) => problems.push(format!(
            "turn {} ended with {} waiting, and turn {} gives no resume",
            turn.number - 1,
            plural(folded.pending_interrupts.len() as u64, "interrupt"),
            turn.number
        )),
        (None, true) => {}
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let Value::Object(map) = &*previous.value else {
        return Err("the previous request is not a JSON object".into());
    };
    let run_id = if case.fixed_ids {
        format!(
            "{}-turn{}",
            case.input.run_id.as_deref().unwrap_or("run"),
            turn.number
        )
    } else {
        format!("run-{}", fresh_id())
    };
    let next = next_input(map, folded, &run_id, Additions { messages, resume });
    AgentInput::from_value(Value::Object(next)).map_err(|e| e.to_string())
}

/// Where the body's bytes go as they arrive.
type RawTap = Box<dyn Write + Send>;

/// Keeps the first [`ERROR_BODY_KEPT`] bytes of a body.
#[derive(Clone, Default)]
struct BodyHead(Arc<std::sync::Mutex<Vec<u8>>>);

/// How much of an error answer's body a snapshot holds.
const ERROR_BODY_KEPT: usize = 64 * 1024;

impl BodyHead {
    fn bytes(&self) -> Vec<u8> {
        self.0.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

impl Write for BodyHead {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Ok(mut kept) = self.0.lock() {
            let room = ERROR_BODY_KEPT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..room.min(buf.len())]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes to both.
struct Both(RawTap, BodyHead);

impl Write for Both {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(buf)?;
        self.1.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// What a snapshot of an error answer holds: the status, the content type and the body, as
/// JSON when it is JSON.
fn error_item(status: u16, content_type: Option<&str>, body: &[u8]) -> Value {
    let body = serde_json::from_slice::<Value>(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    json!({"status": status, "contentType": content_type, "body": body})
}

/// Writes the ids a run minted for its input (its `threadId` and `runId`, a later turn's
/// message ids: any `kind-UUID` the input holds), wherever a string or a member's name of
/// `item` holds them, as `{threadId}`, `{runId}`, `{id 1}`, … (numbered in the input's order):
/// the same answer to another run is then the same item.
fn forget_minted_ids(item: &mut Value, input: &Value) {
    let mut minted: Vec<(String, String)> = ["threadId", "runId"]
        .into_iter()
        .filter_map(|key| Some((format!("{{{key}}}"), input.get(key)?.as_str()?.to_owned())))
        .filter(|(_, id)| !id.is_empty())
        .collect();
    fn gather(value: &Value, minted: &mut Vec<(String, String)>) {
        match value {
            Value::String(text)
                if looks_minted(text) && !minted.iter().any(|(_, id)| id == text) =>
            {
                let key = format!("{{id {}}}", minted.len() + 1);
                minted.push((key, text.clone()));
            }
            Value::Array(items) => items.iter().for_each(|item| gather(item, minted)),
            Value::Object(members) => members.values().for_each(|item| gather(item, minted)),
            _ => {}
        }
    }
    gather(input, &mut minted);
    let forget = |text: &str| {
        let mut text = text.to_owned();
        for (key, id) in &minted {
            if text.contains(id.as_str()) {
                text = text.replace(id.as_str(), key);
            }
        }
        text
    };
    fn walk(value: &mut Value, forget: &dyn Fn(&str) -> String) {
        match value {
            Value::String(text) => *text = forget(text),
            Value::Array(items) => items.iter_mut().for_each(|item| walk(item, forget)),
            Value::Object(members) => {
                let taken = std::mem::take(members);
                for (name, mut item) in taken {
                    walk(&mut item, forget);
                    members.insert(forget(&name), item);
                }
            }
            _ => {}
        }
    }
    walk(item, &forget);
}

/// Whether `text` is an id as a suite mints them: a word, a dash, a UUID.
fn looks_minted(text: &str) -> bool {
    text.split_once('-').is_some_and(|(kind, rest)| {
        !kind.is_empty()
            && kind.bytes().all(|b| b.is_ascii_alphabetic())
            && uuid_at(rest.as_bytes()) == Some(rest.len())
    })
}

/// Where a turn's recording goes: into the artifacts directory, or a temporary file when only
/// a snapshot needs it.
struct Recording {
    file: io::BufWriter<std::fs::File>,
    path: std::path::PathBuf,
    _temp: Option<tempfile::TempPath>,
}

impl Recording {
    fn temporary() -> io::Result<Recording> {
        let (file, temp) = tempfile::Builder::new()
            .suffix(".jsonl")
            .tempfile()?
            .into_parts();
        Ok(Recording {
            file: io::BufWriter::new(file),
            path: temp.to_path_buf(),
            _temp: Some(temp),
        })
    }

    fn create(path: std::path::PathBuf) -> io::Result<Recording> {
        Ok(Recording {
            file: io::BufWriter::new(std::fs::File::create(&path)?),
            path,
            _temp: None,
        })
    }
}

/// Says on stderr which folders of the artifacts directory hold an earlier run's artifacts
/// this run writes nothing over: of a case this suite does not have (besides `case_dirs`, the
/// suite's cases' own: renamed, moved or removed since), and of the suite's cases `--case`
/// leaves out (`left_out`). They are left as they are, and a walk or an upload of the folder
/// would take them for this run's.
fn warn_stale_artifacts(
    root: &Path,
    case_dirs: &[std::ffi::OsString],
    left_out: &[std::ffi::OsString],
) {
    let ours: std::collections::HashSet<&std::ffi::OsString> = case_dirs.iter().collect();
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let (mut stale, mut not_chosen) = (Vec::new(), Vec::new());
    for entry in entries.flatten() {
        let holds_artifacts = entry.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::read_dir(entry.path()).is_ok_and(|turns| {
                turns
                    .flatten()
                    .any(|turn| turn.path().join("outcome.json").is_file())
            });
        let name = entry.file_name();
        if !holds_artifacts {
            continue;
        }
        if !ours.contains(&name) {
            stale.push(name.to_string_lossy().into_owned());
        } else if left_out.contains(&name) {
            not_chosen.push(name.to_string_lossy().into_owned());
        }
    }
    for (mut names, whose) in [
        (stale, "cases this suite does not have"),
        (not_chosen, "cases --case leaves out"),
    ] {
        if names.is_empty() {
            continue;
        }
        names.sort();
        say!(
            "warning: {} holds the artifacts of {whose} (an earlier run's): {}; left as they are",
            root.display(),
            names.join(", ")
        );
    }
}

/// Says on stderr which turns' folders of the suite's cases hold an earlier run's artifacts of
/// a turn the case no longer has (`turn-3` of a case of two turns now): left as they are,
/// where a walk or an upload of the folder would take them for this run's.
fn warn_stale_turns(root: &Path, cases: &[Case]) {
    let mut stale = Vec::new();
    for case in cases {
        let dir = case_dir(root, case);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let gone = name
                .strip_prefix("turn-")
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| !case.turns.iter().any(|turn| turn.number == n));
            if gone && entry.path().join("outcome.json").is_file() {
                stale.push(dir.join(&name).display().to_string());
            }
        }
    }
    if stale.is_empty() {
        return;
    }
    stale.sort();
    say!(
        "warning: {} the artifacts of turns their case no longer has (an earlier run's): {}; \
         left as they are",
        if stale.len() == 1 {
            "a folder holds"
        } else {
            "folders hold"
        },
        stale.join(", ")
    );
}

/// The directory a case's turns go to: `DIR/NN-case-name`, NN the case's place in the suite
/// file.
fn case_dir(root: &Path, case: &Case) -> std::path::PathBuf {
    let mut slug: String = case
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while slug.contains("--") {
        slug = slug.replace("--", "-");
    }
    let slug = slug.trim_matches('-');
    root.join(format!("{:02}-{slug}", case.index + 1))
}

/// The artifacts folder `dir`, locked against another agui-lens writing into it (`flock` on
/// the folder, as `run --record` locks its file): held while the returned handle is open.
fn lock_artifacts(dir: &Path) -> Result<std::fs::File> {
    let folder = std::fs::File::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    match super::run::try_lock(&folder) {
        Ok(true) => Ok(folder),
        Ok(false) => bail!(
            "another agui-lens is writing into {} now; nothing was sent (give another \
             --artifacts folder, or wait for it to end)",
            dir.display()
        ),
        Err(err) => {
            Err(anyhow::Error::new(err)
                .context(format!("locking {} to write into it", dir.display())))
        }
    }
}

/// The directory a turn's artifacts go to: `DIR/NN-case-name/turn-N`.
fn artifacts_dir(root: &Path, case: &Case, turn: &Turn) -> std::path::PathBuf {
    case_dir(root, case).join(format!("turn-{}", turn.number))
}

fn run_turn(
    shared: &Shared<'_>,
    case: &Case,
    turn: &Turn,
    input: &AgentInput,
    levels: &Levels,
) -> TurnResult {
    let started = Instant::now();
    let ctx = Context {
        schemas: shared.schemas,
        levels,
        max_line: shared.max_line,
        protocol: ProtocolOptions {
            max_args: shared.max_line,
            ..ProtocolOptions::default()
        },
    };
    let mut outcome = CaseOutcome::new(case, turn);
    let artifacts = shared.artifacts.map(|root| artifacts_dir(root, case, turn));
    let prepare = || -> io::Result<(Option<Recording>, Option<RawTap>)> {
        let Some(dir) = &artifacts else {
            let record = match &turn.snapshot {
                Some(_) => Some(Recording::temporary()?),
                None => None,
            };
            return Ok((record, None));
        };
        fresh_artifacts_dir(dir)?;
        // Until the turn's end says how its recording ended, it is not finished.
        super::say_unfinished(&dir.join(agui_lens_core::check::recorded::CUT_FILE))
            .map_err(io::Error::other)?;
        std::fs::write(dir.join("request.json"), &*input.body.bytes()?)?;
        let raw = std::fs::File::create(dir.join("response.raw"))?;
        let record = Recording::create(dir.join("events.jsonl"))?;
        Ok((Some(record), Some(Box::new(raw) as RawTap)))
    };
    let (mut record, record_raw) = match prepare() {
        Ok(taps) => taps,
        Err(e) => {
            outcome.failure = Some(format!("preparing the recording: {e}"));
            return outcome.into();
        }
    };
    // The start of the body, for a snapshot of an error answer.
    let head = BodyHead::default();
    let record_raw: Option<RawTap> = match (&turn.snapshot, record_raw) {
        (Some(_), Some(raw)) => Some(Box::new(Both(raw, head.clone()))),
        (Some(_), None) => Some(Box::new(head.clone())),
        (None, raw) => raw,
    };
    let mut folder = Folder::new(DEFAULT_STATE_LIMIT.max(1)).with_input(&input.value);
    let mut seen = vec![false; EventType::ALL.len()];
    let mut on_event = |event: &Event, _: &[u8], _: Duration| {
        if let Some(kind) = event.kind {
            seen[kind.index()] = true;
        }
        folder.apply(event);
    };
    let call = Call {
        url: &case.url,
        headers: &case.headers,
        input,
        idle_timeout: case.idle_timeout,
        timeout: case.timeout,
        judge_status: turn.expect_status.is_some(),
        invalid_sent: false,
        accept: case.accept,
    };
    let name: Arc<str> = Arc::from(case.turn_name(turn).as_str());
    let mut found = Vec::new();
    let result = check_call(
        &ctx,
        &call,
        name,
        Taps {
            record: record.as_mut().map(|r| &mut r.file as &mut dyn Write),
            record_raw,
            on_event: Some(&mut on_event),
        },
        &mut |diagnostics| {
            found.extend_from_slice(diagnostics);
            Ok(())
        },
    );
    let mut expectations = Expectations::new(shared, turn, levels);
    let exchange = match result {
        Ok(exchange) => Some(exchange),
        Err(LiveError::Unreachable(why)) => {
            outcome.error = Some(format!("no response: {why}"));
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
    if let (None, Some(dir)) = (&exchange, &artifacts) {
        // No answer came: an empty `events.jsonl` would read as an agent that answered
        // nothing. Why none came is in the findings (no response) or in `failure.txt`.
        keep_no_events(dir, &mut record);
        if let Some(failure) = &outcome.failure {
            let at = dir.join("failure.txt");
            if let Err(e) = std::fs::write(&at, format!("{failure}\n")) {
                say!("agui-lens: writing {}: {e}", at.display());
            }
        }
    }
    let mut folded = None;
    if let Some(exchange) = exchange.as_ref().filter(|e| e.interrupted) {
        // Half a stream holds no verdict on the case, and no expectation is written from it.
        outcome.stats = exchange.stats;
        outcome.status = exchange.status;
        outcome.content_type = exchange.content_type.clone();
        outcome.first_event = exchange.first_event;
        // What the stop leaves settled is kept: a first event that came too late.
        if exchange.first_event.is_some() {
            expectations.first_event(exchange.first_event);
        }
        expectations.settle(&mut outcome, found);
        outcome.failure = Some(format!(
            "interrupted by {} after {}: the stream was not read to its end",
            agui_lens_core::stop::signal_name(),
            plural(exchange.stats.events, "event")
        ));
        outcome.elapsed = started.elapsed();
        if let Some(dir) = &artifacts {
            // Read later by `check DIR`: the stream's end is the stop's, not the agent's.
            let at = dir.join(agui_lens_core::check::recorded::CUT_FILE);
            let said = outcome.failure.as_deref().unwrap_or_default();
            if let Err(e) = std::fs::write(&at, format!("{said}\n")) {
                say!("agui-lens: writing {}: {e}", at.display());
            }
        }
        // (A stopped turn fails already; what could not be written is said on stderr.)
        let _ = write_artifacts(artifacts.as_deref(), &outcome);
        return outcome.into();
    }
    if let Some(exchange) = &exchange {
        outcome.status = exchange.status;
        outcome.content_type = exchange.content_type.clone();
        outcome.first_event = exchange.first_event;
        outcome.stats = exchange.stats;
        outcome.notes.extend(exchange.run_failed());
        outcome
            .notes
            .extend(agui_lens_core::check::opened::unread_in_silence(
                &ctx,
                &exchange.stats,
            ));
        let streamed = exchange.status.is_some_and(|s| (200..300).contains(&s));
        if let Some(failed) = &exchange.record_failed {
            // The artifacts could not be written (a full disk): agui-lens could not do its job
            // for the turn. No verdict on the agent from what was kept, no snapshot from it.
            let said = if failed.raw {
                "the rest of the answer was not read"
            } else {
                "the stream was checked to its end"
            };
            outcome.failure = Some(format!(
                "{}: the artifacts hold part of the answer; {said}",
                failed.message
            ));
            if let Some(dir) = &artifacts {
                let cut = dir.join(agui_lens_core::check::recorded::CUT_FILE);
                let _ = std::fs::write(&cut, format!("{}\n", failed.message));
            }
            expectations.settle(&mut outcome, found);
            outcome.passed = false;
            outcome.elapsed = started.elapsed();
            let _ = write_artifacts(artifacts.as_deref(), &outcome);
            return TurnResult {
                outcome,
                folded: None,
            };
        }
        expectations.status(exchange.status, exchange.body_excerpt.clone());
        if exchange.status.is_none()
            && let Some(cut) = found
                .iter()
                .find(|d| agui_lens_core::check::recorded::ends_the_call(d.rule))
        {
            // No response head came in time, or the connection closed first: as below.
            outcome.error = Some(format!("{}: {}", cut.rule, cut.message));
        }
        if streamed {
            // Cut off (by time or the connection) is an error of the environment whenever it
            // came, before the first event too: not a stream the agent chose not to send.
            if let Some(cut) = found
                .iter()
                .find(|d| agui_lens_core::check::recorded::ends_the_call(d.rule))
            {
                outcome.error = Some(format!("{}: {}", cut.rule, cut.message));
            } else if exchange.known_events == 0 {
                expectations.report(
                    RuleId::SuiteNoStream,
                    format!(
                        "the agent answered {} with no AG-UI events in {}",
                        exchange.status.unwrap_or_default(),
                        plural(exchange.bytes, "byte")
                    ),
                    "the agent did not run: see its logs and the body above",
                );
            } else {
                folded = Some(folder.finish());
            }
            expectations.events(&seen);
            expectations.first_event(exchange.first_event);
            let mismatch = |e: &Expectations<'_>| {
                e.found
                    .iter()
                    .any(|d| d.rule == RuleId::SuiteStatusMismatch)
            };
            // A body that ended inside a run (cleanly, as `serve --truncate` ends one) is a
            // stream cut short as much as one whose connection was lost.
            let ended_inside_a_run = folded
                .as_ref()
                .is_some_and(|f| f.runs.iter().any(|run| run.status == "open"));
            let cut_short = outcome.error.is_some() || ended_inside_a_run;
            expectations.may_update =
                exchange.known_events > 0 && !cut_short && !mismatch(&expectations);
            if let (Some(snapshot), Some(record)) = (&turn.snapshot, record.take()) {
                if shared.update && !expectations.may_update {
                    outcome.notes.push(not_updated(snapshot));
                }
                if cut_short {
                    // Half a stream is held to no expectation, nor left pending as one (a
                    // `snapshot accept` made it the expectation with no word of the cut).
                    outcome.notes.push(format!(
                        "{} was not compared: the stream was cut short, and half a stream is \
                         held to no expectation",
                        snapshot.display()
                    ));
                } else if !expectations.may_update {
                    // Nor is an answer the case does not take (no events, a status it does
                    // not expect): left pending, it was one `snapshot accept` away from being
                    // the expectation, and compared, read as a tool error (exit 2).
                    outcome.notes.push(not_compared(snapshot));
                } else {
                    match expectations.snapshot(snapshot, record, case) {
                        Ok(Some(note)) => outcome.notes.push(note),
                        Ok(None) => {}
                        Err(e) => outcome.failure = Some(format!("{e:#}")),
                    }
                }
            }
        } else {
            if let (Some(dir), Some(_)) = (&artifacts, exchange.status) {
                // A refusal (expected or not) that sent no stream: its body is in
                // `response.raw` and its status, when the case did not expect it, in the
                // findings; an empty `events.jsonl` beside them would read as a capture of
                // nothing (an error) to a walk of the artifacts.
                if exchange.stats.events == 0 {
                    keep_no_events(dir, &mut record);
                }
            }
            if let (Some(snapshot), Some(status)) = (&turn.snapshot, exchange.status) {
                // An error answer the case expects may replace its snapshot; one it does not
                // expect never does.
                expectations.may_update = turn
                    .expect_status
                    .as_ref()
                    .is_some_and(|expected| expected.contains(status));
                if shared.update && !expectations.may_update {
                    outcome.notes.push(not_updated(snapshot));
                }
                // An error answer's snapshot holds its status and body, without the ids this
                // run minted (an agent may echo the input it refuses): they differ each run.
                let mut item = error_item(status, exchange.content_type.as_deref(), &head.bytes());
                if !case.fixed_ids {
                    forget_minted_ids(&mut item, &input.value);
                }
                if !expectations.may_update {
                    // An error page where a stream was expected is no answer to hold to the
                    // snapshot, nor to leave pending for `snapshot accept`.
                    outcome.notes.push(not_compared(snapshot));
                } else {
                    match expectations.snapshot_items(snapshot, case, |_, settings| {
                        let items =
                            Normalizer::events(settings.clone(), std::slice::from_ref(&item));
                        Ok((items, ReadNotes::default()))
                    }) {
                        Ok(Some(note)) => outcome.notes.push(note),
                        Ok(None) => {}
                        Err(e) => outcome.failure = Some(format!("{e:#}")),
                    }
                }
            }
        }
    }
    expectations.settle(&mut outcome, found);
    outcome.passed = passed(shared, &outcome);
    outcome.elapsed = started.elapsed();
    if let Some(unwritten) = write_artifacts(artifacts.as_deref(), &outcome) {
        // A verdict its artifacts do not hold (a full disk) is no pass of the suite's run.
        outcome.failure.get_or_insert(unwritten);
        outcome.passed = false;
    } else if let Some(dir) = &artifacts {
        // The turn's recording ended whole: it is no longer said to be unfinished.
        let at = dir.join(agui_lens_core::check::recorded::CUT_FILE);
        if let Err(e) = super::remove_if_there(&at) {
            let said = format!("removing {}: {e}", at.display());
            say!("agui-lens: {said}");
            outcome.failure.get_or_insert(said);
            outcome.passed = false;
        }
    }
    TurnResult { outcome, folded }
}

/// A finding as a baseline keys it in a suite: of its case (its subject names the case), so
/// that the same finding in another case (one fixed, another broken the same way) is new.
fn of_case(d: &Diagnostic, case: &str) -> Diagnostic {
    let mut keyed = d.clone();
    keyed.subject = Some(match &d.subject {
        Some(subject) => format!("case {case:?}: {subject}"),
        None => format!("case {case:?}"),
    });
    keyed
}

/// A finding as a baseline holds it: the ids minted for each run (`thread-…`, `run-…`, and
/// any other UUID, as agents mint message ids) written `{id}`, so that the same finding of
/// the next run, with its fresh ids, is the same finding (it was new at every run).
fn fresh_ids_hidden(d: &Diagnostic) -> std::borrow::Cow<'_, Diagnostic> {
    let hide = |text: &str| -> Option<String> {
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut from = 0;
        let mut at = 0;
        while at < bytes.len() {
            let boundary = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            match uuid_at(&bytes[at..]).filter(|_| boundary) {
                Some(len) => {
                    out.push_str(&text[from..at]);
                    out.push_str("{id}");
                    at += len;
                    from = at;
                }
                None => at += 1,
            }
        }
        (from > 0).then(|| {
            out.push_str(&text[from..]);
            out
        })
    };
    let message = hide(&d.message);
    let subject = d.subject.as_deref().and_then(hide);
    if message.is_none() && subject.is_none() {
        return std::borrow::Cow::Borrowed(d);
    }
    let mut hidden = d.clone();
    if let Some(message) = message {
        hidden.message = message;
    }
    if subject.is_some() {
        hidden.subject = subject;
    }
    std::borrow::Cow::Owned(hidden)
}

/// The length of the UUID (8-4-4-4-12 hex digits) `bytes` start with, not followed by more
/// of a word.
fn uuid_at(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    for (i, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 {
            (bytes.get(at) == Some(&b'-')).then_some(())?;
            at += 1;
        }
        let part = bytes.get(at..at + len)?;
        part.iter().all(u8::is_ascii_hexdigit).then_some(())?;
        at += len;
    }
    let ends = bytes.get(at).is_none_or(|b| !b.is_ascii_alphanumeric());
    ends.then_some(at)
}

/// Why an answer was not held to its snapshot: the case does not take it (its status, or no
/// events), which its findings say.
fn not_compared(snapshot: &Path) -> String {
    format!(
        "{} was not compared: the case does not take this answer (see its findings), and no \
         answer it does not take is held to its expectation or left pending as one",
        snapshot.display()
    )
}

/// Why `--update-snapshots` left a snapshot as it was.
fn not_updated(snapshot: &Path) -> String {
    format!(
        "{} was not updated: the case failed before its answer could stand as the expectation",
        snapshot.display()
    )
}

fn finish(
    shared: &Shared<'_>,
    outcome: &mut CaseOutcome,
    found: Vec<Diagnostic>,
    started: Instant,
) {
    outcome.diagnostics = found;
    let mut stats = outcome.stats;
    stats.errors = 0;
    stats.warnings = 0;
    for d in &outcome.diagnostics {
        stats.count(d);
    }
    outcome.stats = stats;
    outcome.passed = passed(shared, outcome);
    outcome.elapsed = started.elapsed();
}

fn passed(shared: &Shared<'_>, outcome: &CaseOutcome) -> bool {
    outcome.failure.is_none()
        && outcome.error.is_none()
        && outcome.stats.errors == 0
        && !(shared.deny_warnings && outcome.stats.warnings > 0)
}

/// Ends a turn's recording of events and removes its `events.jsonl` from `dir`: the turn got
/// no stream, and an empty file would read as a capture of nothing to a walk of the artifacts.
fn keep_no_events(dir: &Path, record: &mut Option<Recording>) {
    drop(record.take());
    let at = dir.join("events.jsonl");
    if let Err(e) = super::remove_if_there(&at) {
        say!("agui-lens: removing {}: {e}", at.display());
    }
}

/// The files agui-lens writes into a turn's artifacts directory.
const ARTIFACTS: [&str; 7] = [
    "request.json",
    "response.raw",
    "events.jsonl",
    "findings.jsonl",
    "outcome.json",
    "failure.txt",
    agui_lens_core::check::recorded::CUT_FILE,
];

/// Makes a turn's artifacts directory, without what an earlier run into it wrote there (a
/// turn not sent this time keeps no request or body of one that was), and nothing else
/// removed.
fn fresh_artifacts_dir(dir: &Path) -> io::Result<()> {
    super::create_folders(dir)?;
    for name in ARTIFACTS {
        super::remove_if_there(&dir.join(name))?;
    }
    Ok(())
}

/// What the turn found and how it ended, beside its recording.
/// Writes a turn's findings and verdict beside its recording; says what could not be written.
fn write_artifacts(dir: Option<&Path>, outcome: &CaseOutcome) -> Option<String> {
    let dir = dir?;
    let mut findings = Vec::new();
    for d in &outcome.diagnostics {
        if let Ok(line) = serde_json::to_vec(&DiagnosticRecord::from(d)) {
            findings.extend_from_slice(&line);
            findings.push(b'\n');
        }
    }
    let json = serde_json::to_vec_pretty(&suite::case_json(outcome)).unwrap_or_default();
    // The findings only when there are some: an empty file would read as a capture of
    // nothing to a walk of the artifacts.
    let findings = (!findings.is_empty()).then_some(("findings.jsonl", findings));
    let mut unwritten = None;
    for (name, bytes) in findings.into_iter().chain([("outcome.json", json)]) {
        if let Err(e) = std::fs::write(dir.join(name), bytes) {
            let said = format!("writing {}: {e}", dir.join(name).display());
            say!("agui-lens: {said}");
            unwritten.get_or_insert(said);
        }
    }
    unwritten
}

/// Holds one case's answer to what the suite expects of it; findings go to the case's line.
struct Expectations<'a> {
    shared: &'a Shared<'a>,
    turn: &'a Turn,
    levels: &'a Levels,
    found: Vec<Diagnostic>,
    /// The answer is one the case takes (the status it expects, a stream read to its end):
    /// only such an answer may replace a snapshot under `--update-snapshots`.
    may_update: bool,
}

impl<'a> Expectations<'a> {
    /// The turn's findings: the stream's (`found`, counted already) and the expectations' own,
    /// counted here.
    fn settle(&mut self, outcome: &mut CaseOutcome, mut found: Vec<Diagnostic>) {
        for d in &self.found {
            outcome.stats.count(d);
        }
        found.append(&mut self.found);
        outcome.diagnostics = found;
    }

    fn new(shared: &'a Shared<'a>, turn: &'a Turn, levels: &'a Levels) -> Self {
        Expectations {
            shared,
            turn,
            levels,
            found: Vec::new(),
            may_update: true,
        }
    }

    fn report(&mut self, rule: RuleId, message: String, help: &str) -> Option<&mut Diagnostic> {
        let severity = self.levels.severity(rule)?;
        let mut d =
            Diagnostic::whole_input(rule, severity, self.shared.suite_path.clone(), message)
                .with_help(help);
        d.line = Some(self.turn.line);
        self.found.push(d);
        self.found.last_mut()
    }

    fn status(&mut self, status: Option<u16>, body: Option<String>) {
        let Some(expected) = &self.turn.expect_status else {
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
        if !expected.contains(status) {
            let success = (200..300).contains(&status);
            let redirect = (300..400).contains(&status);
            let help = match (success, expected.expects_stream()) {
                _ if redirect => {
                    "the agent sent the call elsewhere (its Location header): a client follows \
                     it; name the URL it leads to in the case"
                }
                (true, true) => {
                    "the agent took the request with another success status than the case expects"
                }
                (true, false) if expected.expects_redirect() => {
                    "the agent answered the call itself where the case expects it sent elsewhere"
                }
                (true, false) => "the agent accepted what the case expects it to refuse",
                (false, true) => "the body above usually says why the agent refused",
                (false, false) => {
                    "the agent refused the request, with another status than the case expects"
                }
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
            .turn
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
        let Some(limit) = self.turn.max_first_event else {
            return;
        };
        let message = match first {
            Some(at) if at <= limit => return,
            // Whole milliseconds, unless they would read as within the limit.
            Some(at) if at.as_millis() > limit.as_millis() => format!(
                "the first event came after {} ms, over max_first_event_ms = {}",
                at.as_millis(),
                limit.as_millis()
            ),
            Some(at) => format!(
                "the first event came after {:.3} ms, over max_first_event_ms = {}",
                at.as_secs_f64() * 1000.0,
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
    fn snapshot(&mut self, file: &Path, record: Recording, case: &Case) -> Result<Option<String>> {
        let Recording {
            file: writer,
            path,
            _temp,
        } = record;
        writer
            .into_inner()
            .map_err(|e| e.into_error())
            .context("writing the recording")?;
        let read = ReadOptions {
            format: Some(InputFormat::Jsonl),
            max_line: self.shared.max_line,
            entry: None,
        };
        self.snapshot_items(file, case, |level, settings| {
            normalized_reading(&path, &read, level, settings)
        })
    }

    /// Holds what `make` gives to the snapshot in `file`, as `agui-lens snapshot` would.
    /// Returns a note when a snapshot was written.
    fn snapshot_items(
        &mut self,
        file: &Path,
        case: &Case,
        make: impl FnMut(CompareLevel, &NormalizeSettings) -> Result<(Vec<Value>, ReadNotes)>,
    ) -> Result<Option<String>> {
        let request = Hold {
            update: self.shared.update && self.may_update,
            reason: self.shared.reason.map(str::to_owned),
            level: case.snapshot_level,
            settings: case.normalize.clone(),
        };
        let shown = file.display();
        let review = "review it with `agui-lens snapshot review DIR` or accept it with `agui-lens \
                      snapshot accept FILE`, or run the suite with --update-snapshots";
        match hold_items(file, &request, make)? {
            Verdict::Matches => Ok(None),
            // Answers that end inside a run are failed before they are held to a snapshot.
            Verdict::EndsInsideRun => {
                self.report(
                    RuleId::SuiteSnapshotMismatch,
                    format!("the stream ends inside a run: it is not held to {shown}"),
                    "record the stream whole",
                );
                Ok(None)
            }
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
