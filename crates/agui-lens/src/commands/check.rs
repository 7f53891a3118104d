//! `agui-lens check`: read inputs, run every rule, report.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::ArgMatches;
use rayon::prelude::*;

use super::Outcome;
use super::baseline::{Gate, subtract};
use super::inputs::{self, Input};
use crate::cli::{CheckArgs, ColorChoice, RuleArgs, rule_flags_in_order};
use crate::config::Config;
use crate::progress::Progress;
use agui_lens_core::check::capabilities::levels_for;
use agui_lens_core::check::catalog::Levels;
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::{Context, Stats};
pub use agui_lens_core::check::opened::check_opened;
use agui_lens_core::check::recorded::{self, Recorded, check_findings};
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::read::{self, InputSpec, ReadOptions};
use agui_lens_core::report::human::visible;
use agui_lens_core::report::{FileSummary, Reporter, Summary};

pub fn run(args: &CheckArgs, matches: &ArgMatches) -> Result<Outcome> {
    let Some(junit) = &args.junit else {
        return check(args, matches, None);
    };
    refuse_junit_over(junit, args)?;
    super::report_under_way(junit, agui_lens_core::report::Format::Junit, "check")?;
    let buffer = super::serve::Buffer::default();
    match check(args, matches, Some(buffer.clone())) {
        Ok(outcome) => {
            let bytes = std::mem::take(&mut *buffer.0.lock().unwrap_or_else(|e| e.into_inner()));
            super::write_bytes(junit, &bytes)?;
            Ok(outcome)
        }
        // A CI step publishes the report whatever the exit status: it says why there is none.
        Err(err) => Err(super::report_not_begun(
            Some(junit),
            agui_lens_core::report::Format::Junit,
            "check",
            err,
        )),
    }
}

/// `--junit FILE` never names what the run reads (an input, the baseline, the config), nor a
/// file that holds something else than a JUnit report.
fn refuse_junit_over(junit: &Path, args: &CheckArgs) -> Result<()> {
    let settings = super::settings_files(&args.rules);
    let mut read: Vec<(&Path, &str)> = args
        .paths
        .iter()
        .map(|p| (p.as_path(), "an input"))
        .collect();
    read.extend(args.baseline.baseline.as_deref().map(|b| (b, "--baseline")));
    read.extend(settings.iter().map(|(p, by)| (p.as_path(), *by)));
    super::refuse_output_over_input(junit, "--junit", &read)?;
    super::refuse_junit_over_other(junit)
}

fn check(
    args: &CheckArgs,
    matches: &ArgMatches,
    junit: Option<super::serve::Buffer>,
) -> Result<Outcome> {
    let settings = settings(
        &args.rules,
        matches,
        args.read.max_line,
        args.schemas.as_deref(),
    )?;
    let paths = if args.paths.is_empty() {
        if io::stdin().is_terminal() {
            bail!("no input: give files or directories, or pipe a stream into `agui-lens check -`");
        }
        vec![PathBuf::from("-")]
    } else {
        args.paths.clone()
    };
    let read = ReadOptions {
        format: args.read.input_format,
        max_line: settings.max_line,
        entry: args.read.entry,
    };
    let ctx = settings.context(ProtocolOptions {
        attach: args.attach,
        state_limit: args.read.state_limit(),
        state: args.read.initial_state()?,
        version: args.rules.protocol,
        ..ProtocolOptions::default()
    });
    let color = use_color(args.output.color);
    let out: Box<dyn Write> = Box::new(io::BufWriter::new(super::ReportOut::default()));
    let mut reporter =
        crate::render::reporter(args.output.format, out, color, !args.output.no_group);
    if let Some(buffer) = junit {
        let format = agui_lens_core::report::Format::Junit;
        let also = crate::render::reporter(format, Box::new(buffer), false, !args.output.no_group);
        reporter = Box::new(agui_lens_core::report::Both(reporter, also));
    }
    let mut gate = Gate::load(&args.baseline)?;
    let summary = if args.follow {
        follow(&ctx, &paths, &read, args.idle_timeout, reporter.as_mut())?
    } else {
        let walk = inputs::Walk {
            recorded_failures: true,
            ..inputs::Walk::from_args(&args.walk)
        };
        let mut inputs = inputs::expand(&paths, &walk)?;
        // A walk passes over the `--junit` file it writes into (it says the run is under way
        // while it runs, and holds the last run's report before): read as an input, it failed
        // the run.
        if let Some(junit) = &args.junit {
            inputs.retain(|input| {
                input.explicit
                    || !input
                        .spec
                        .path()
                        .is_some_and(|p| super::same_place(p, junit))
            });
        }
        let inputs = inputs::each_file_once(inputs);
        let inputs = inputs::findings_with_their_streams(inputs);
        let inputs = inputs::open_captures(inputs, args.read.entry);
        // Ctrl-C or SIGTERM stops the reading; what was read is reported (exit 130, 143).
        // Files under way are read to their end, unless a second signal comes.
        crate::signals::catch_twice();
        let _progress = Progress::start(
            "checking",
            crate::progress::total_size(inputs.iter().map(|i| &i.spec)),
            inputs.len(),
            args.output.format == agui_lens_core::report::Format::Human,
        );
        check_inputs(&ctx, &inputs, &read, reporter.as_mut(), gate.as_mut())?
    };
    // A run whose inputs held no event checked nothing: recording their findings does not
    // pass it, as the next run with the baseline fails on them (beside a stream that was
    // checked, such an input passes both).
    let checked_nothing = summary.eventless > 0 && summary.summary.events == 0;
    let recording = gate.as_ref().is_some_and(Gate::recorded_all) && !checked_nothing;
    if let Some(mut gate) = gate {
        // An input that could not be read found nothing: recorded, the baseline would lose
        // what it held of it, and call it new at the next run.
        let unread = summary.summary.unreadable;
        if unread > 0 {
            gate.incomplete(format!(
                "{} could not be read",
                agui_lens_core::report::plural(unread, "input")
            ));
        }
        // Nor does a stream cut before its end (by whoever recorded it, or by a stop) give
        // all its findings: recorded, the baseline would hold part of them.
        let cut = summary.summary.interrupted;
        if cut > 0 {
            gate.incomplete(format!(
                "{} {} cut before the end",
                agui_lens_core::report::plural(cut, "input"),
                if cut == 1 { "was" } else { "were" },
            ));
        }
        gate.finish()?;
    }
    let outcome = Outcome::from_summary(&summary, settings.deny_warnings);
    // Recording a baseline passes: what was found is what the baseline now holds.
    Ok(match outcome {
        Outcome::Findings if recording => Outcome::Clean,
        outcome => outcome,
    })
}

/// `check --follow FILE`: one file, read as it grows, reported as events are appended. Ends
/// at Ctrl-C (or SIGTERM), or after `idle` without growth; what only the end can tell (an
/// unterminated run) is then reported as for any input.
fn follow(
    ctx: &Context<'_>,
    paths: &[PathBuf],
    read: &ReadOptions,
    idle: Option<Duration>,
    reporter: &mut dyn Reporter,
) -> Result<RunSummary> {
    let [path] = paths else {
        bail!("--follow takes exactly one file");
    };
    if path.as_os_str() == "-" {
        bail!("--follow takes a file; stdin is already read as it arrives (`agui-lens check -`)");
    }
    crate::signals::catch();
    let mut run = RunSummary {
        summary: Summary::default(),
        failed_inputs: 0,
        eventless: 0,
    };
    reporter.start_run(1)?;
    let name = InputSpec::File(path.clone()).display_name();
    reporter.start_file(&name)?;
    // A path that cannot be opened is an input that could not be read, in every format.
    let mut emit = |diagnostics: &[Diagnostic]| {
        for d in diagnostics {
            reporter.diagnostic(d)?;
        }
        reporter.flush()
    };
    let file = match read::open_follow(path, read, idle, agui_lens_core::stop::requested) {
        Ok(opened) => follow_recording(ctx, path, opened, &mut emit)?,
        Err(err) => failed(name, Stats::default(), format!("{err:#}")),
    };
    finish_file(&mut run, &file, reporter)?;
    run.summary.stopped_by =
        agui_lens_core::stop::requested().then(agui_lens_core::stop::signal_name);
    reporter.finish(&run.summary)?;
    Ok(run)
}

/// Checks a followed file as `check` reads it, when it is a recording `run --record` made:
/// from the request it answers (its state, where the recorder wrote it: the file was there
/// when the following began) and, once the stream ends, with what the call found and how the
/// recorder cut it, which the recorder writes at its end (an answer sent as text/html passed
/// `--follow`, its error beside it).
fn follow_recording(
    ctx: &Context<'_>,
    path: &Path,
    mut opened: read::Opened,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    use agui_lens_core::check::opened::check_answer_to;
    // How the recorder cut it, asked once the stream has been read (still recording: not
    // finished yet), so that what only the end tells is not charged to the agent.
    let at = path.to_path_buf();
    opened.late_cut = Some(Box::new(move || match recorded::recorded(&at) {
        Some(Recorded::Events { cut, .. }) => cut,
        _ => None,
    }));
    let Some(Recorded::Events {
        request,
        cut,
        findings,
        no_stream,
        refused,
    }) = recorded::recorded(path)
    else {
        // Nothing beside it yet: a recording whose recorder writes what is beside it at its
        // end is read again once the stream ends.
        let mut file = check_opened(ctx, opened, false, emit)?;
        after_following(ctx, path, &mut file, emit)?;
        return Ok(file);
    };
    if cut.as_deref() != Some(recorded::UNDER_WAY) {
        // Its recorder has ended: read as `check` reads it.
        let findings = findings.as_deref();
        return recorded::check_recording(
            ctx, opened, false, request, cut, findings, no_stream, refused, emit,
        );
    }
    // A recorder still at work (it holds the file) says how it ends at its end.
    let mut file = check_answer_to(ctx, opened, false, request, None, false, emit)?;
    after_following(ctx, path, &mut file, emit)?;
    Ok(file)
}

/// What a recorder wrote beside a followed recording by the stream's end: the call's
/// findings, added (its cut is asked by the check itself: see `read::Opened::late_cut`).
fn after_following(
    ctx: &Context<'_>,
    path: &Path,
    file: &mut FileSummary,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<()> {
    if let Some(Recorded::Events {
        findings: Some(findings),
        ..
    }) = recorded::recorded(path)
    {
        recorded::add_run_findings(ctx, &findings, file, emit)?;
    }
    Ok(())
}

/// What checking needs from the flags and the nearest agui-lens.toml: rule levels, schemas,
/// the line cap. Shared with `inspect`, which shows the same findings.
pub struct Settings {
    pub levels: Levels,
    pub schemas: &'static SchemaSet,
    pub max_line: usize,
    pub deny_warnings: bool,
}

impl Settings {
    /// The context streams are checked in; tool-call arguments are capped like lines.
    pub fn context(&self, protocol: ProtocolOptions) -> Context<'_> {
        Context {
            schemas: self.schemas,
            levels: &self.levels,
            max_line: self.max_line,
            protocol: ProtocolOptions {
                max_args: self.max_line,
                ..protocol
            },
        }
    }
}

pub fn settings(
    rules: &RuleArgs,
    matches: &ArgMatches,
    max_line: Option<usize>,
    schemas: Option<&Path>,
) -> Result<Settings> {
    let config = Config::load(rules.config.as_deref())?;
    let levels = config.scoped_levels(&rule_flags_in_order(matches, rules), rules.scope.tier)?;
    let declaration = crate::declaration::from_flag(&rules.scope)?;
    let levels = levels_for(declaration.as_ref(), &levels);
    let deny_warnings = config.deny_warnings(rules.deny_warnings);
    let mut levels = levels;
    if deny_warnings {
        levels.deny_warnings();
    }
    let max_line = config.max_line(max_line)?;
    let schemas_dir = schemas
        .map(Path::to_path_buf)
        .or_else(|| config.schemas_dir());
    let schemas = SchemaSet::for_process(schemas_dir.as_deref())?;
    Ok(Settings {
        levels,
        schemas,
        max_line,
        deny_warnings,
    })
}

/// Whether to colour human output: `--color`, else a terminal without `NO_COLOR`.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// The outcome of the whole run, with whether any input could not be read.
pub struct RunSummary {
    pub summary: Summary,
    pub failed_inputs: u64,
    /// Inputs read that held no AG-UI event.
    pub eventless: u64,
}

/// Checks every input and reports in input order. One input streams its diagnostics as they
/// are found; several are checked in parallel, a few at a time.
pub fn check_inputs(
    ctx: &Context<'_>,
    inputs: &[Input],
    read: &ReadOptions,
    reporter: &mut dyn Reporter,
    mut gate: Option<&mut Gate>,
) -> Result<RunSummary> {
    let mut run = RunSummary {
        summary: Summary::default(),
        failed_inputs: 0,
        eventless: 0,
    };
    reporter.start_run(inputs.len())?;
    for input in inputs {
        if let Some(gate) = gate.as_deref_mut() {
            gate.checked(&input.spec.display_name());
        }
        if let InputSpec::HarEntry { path, .. } = &input.spec {
            let name = input.spec.display_name();
            let file = path.to_string_lossy();
            reporter.stream_within(&name, &file)?;
            if let (Some(gate), Some(call)) = (gate.as_deref_mut(), &input.call) {
                gate.name_call(&name, &file, call);
                gate.checked_call(&file, call);
            }
        }
    }
    // Inputs skipped as no capture, and inputs that held no AG-UI event and no error (where
    // `framing/no-events` is only a warning or a note), with what was found in them: held
    // while nothing else has come. A run whose every input is such a file checked nothing,
    // and fails as a folder with no stream files does.
    let mut skipped_only: Vec<(FileSummary, Vec<(Diagnostic, bool)>)> = Vec::new();
    let mut seen_other = false;
    if let [input] = inputs {
        let mut file = check_one(ctx, input, read, &mut |diagnostics| {
            for d in diagnostics {
                show(reporter, gate.as_deref_mut(), d)?;
            }
            reporter.flush()
        })?;
        if let Some(gate) = gate.as_deref_mut() {
            subtract(&mut file.stats, gate.take_held());
        }
        if file.skipped.is_some() {
            skipped_only.push((file, Vec::new()));
        } else {
            file.fail_if_checked_nothing();
            finish_file(&mut run, &file, reporter)?;
        }
    } else {
        let width = rayon::current_num_threads().max(1) * 2;
        for group in inputs.chunks(width) {
            let results: Vec<Result<(FileSummary, Vec<Diagnostic>)>> = group
                .par_iter()
                .map(|input| {
                    let mut found = Vec::new();
                    let file = check_one(ctx, input, read, &mut |diagnostics| {
                        found.extend_from_slice(diagnostics);
                        Ok(())
                    })?;
                    Ok((file, found))
                })
                .collect();
            for result in results {
                let (mut file, found) = result?;
                // Through the baseline first, in input order: what it holds is taken off
                // before asking whether the input checked anything, as for one input alone.
                let found = sift(&mut file, found, gate.as_deref_mut());
                if (file.skipped.is_some() || file.checked_nothing()) && !seen_other {
                    skipped_only.push((file, found));
                    continue;
                }
                seen_other = true;
                for (held, found) in skipped_only.drain(..) {
                    finish_found(&mut run, held, &found, reporter, gate.as_deref())?;
                }
                finish_found(&mut run, file, &found, reporter, gate.as_deref())?;
            }
        }
    }
    // Held to the end only when nothing else came.
    for (mut held, found) in skipped_only {
        held.failure = Some(match held.skipped.take() {
            Some(why) => format!(
                "{}: not a capture ({why}), and no input of this run is one: nothing was checked",
                held.path
            ),
            None => format!(
                "{}: no AG-UI event in it, nor in any input of this run: nothing was checked",
                held.path
            ),
        });
        if inputs.len() > 1 {
            finish_found(&mut run, held, &found, reporter, gate.as_deref())?;
        } else {
            finish_file(&mut run, &held, reporter)?;
        }
    }
    run.summary.stopped_by =
        agui_lens_core::stop::requested().then(agui_lens_core::stop::signal_name);
    reporter.finish(&run.summary)?;
    Ok(run)
}

/// One of several inputs' findings through the baseline: each with whether the baseline holds
/// it, what it holds taken off the input's counts.
fn sift(
    file: &mut FileSummary,
    found: Vec<Diagnostic>,
    gate: Option<&mut Gate>,
) -> Vec<(Diagnostic, bool)> {
    let Some(gate) = gate else {
        return found.into_iter().map(|d| (d, false)).collect();
    };
    let sifted = found
        .into_iter()
        .map(|d| {
            let held = !gate.keep(&d);
            (d, held)
        })
        .collect();
    subtract(&mut file.stats, gate.take_held());
    sifted
}

/// Reports one of several inputs: its findings, those the baseline holds as held (see
/// [`sift`]), and its summary.
fn finish_found(
    run: &mut RunSummary,
    file: FileSummary,
    found: &[(Diagnostic, bool)],
    reporter: &mut dyn Reporter,
    gate: Option<&Gate>,
) -> Result<()> {
    reporter.start_file(&file.path)?;
    for (d, held) in found {
        match gate {
            Some(gate) if *held => reporter.held(d, &gate.path())?,
            _ => reporter.diagnostic(d)?,
        }
    }
    finish_file(run, &file, reporter)
}

/// Reports a finding, or tells the reporter a baseline holds it.
fn show(reporter: &mut dyn Reporter, gate: Option<&mut Gate>, d: &Diagnostic) -> io::Result<()> {
    if let Some(gate) = gate
        && !gate.keep(d)
    {
        return reporter.held(d, &gate.path());
    }
    reporter.diagnostic(d)
}

fn finish_file(
    run: &mut RunSummary,
    file: &FileSummary,
    reporter: &mut dyn Reporter,
) -> Result<()> {
    if let Some(failure) = &file.failure {
        run.failed_inputs += 1;
        // The report goes to stdout; say it on stderr too, where a person watching looks (an
        // interrupted input with its name: the reason alone does not carry it).
        let said = if file.interrupted {
            file.failure_text().unwrap_or_default()
        } else {
            format!("error: {failure}")
        };
        let _ = writeln!(io::stderr(), "{}", visible(&said));
    }
    if file.skipped.is_none() && file.failure.is_none() && file.stats.events == 0 {
        run.eventless += 1;
    }
    run.summary.add(file);
    reporter.end_file(file)?;
    Ok(())
}

/// Checks one input, handing diagnostics to `emit` batch by batch. A failure to open or read
/// the input is recorded in the summary (after what was read is reported); an `Err` means
/// `emit` failed (e.g. a closed pipe).
pub fn check_one(
    ctx: &Context<'_>,
    input: &Input,
    read: &ReadOptions,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    let name = input.spec.display_name();
    if let Some(why) = &input.unreadable {
        return Ok(failed(name, Stats::default(), why.clone()));
    }
    if let Some(why) = &input.skipped {
        let mut file = FileSummary::checked(name, Stats::default(), None);
        file.skipped = Some(why.clone());
        return Ok(file);
    }
    if agui_lens_core::stop::requested() {
        // Stopped before this input was begun: nothing of it is read, a recording's findings
        // and failures neither.
        return Ok(FileSummary::stopped(name, Stats::default()));
    }
    // An exchange recorded by the proxy or `test` is checked as it was found then. What is
    // said of the files beside it (one stale or unreadable, left out) goes to stderr and, as
    // the file's notes, into every report format: a check in CI shows it where it is read.
    let (recorded, said) = match &input.spec {
        InputSpec::File(path) => {
            let (found, said) =
                agui_lens_core::check::stream::holding_warnings(|| recorded::recorded(path));
            (found.map(|r| (path.as_path(), r)), said)
        }
        _ => (None, Vec::new()),
    };
    for message in &said {
        say!(
            "warning: {}",
            agui_lens_core::report::human::visible(message)
        );
    }
    let mut file = check_recorded(ctx, input, read, recorded, name, emit)?;
    file.notes.extend(said);
    Ok(file)
}

/// [`check_one`] of an input as what it is recorded as, if anything.
fn check_recorded(
    ctx: &Context<'_>,
    input: &Input,
    read: &ReadOptions,
    recorded: Option<(&std::path::Path, Recorded)>,
    name: Arc<str>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    let sent = match recorded {
        Some((path, Recorded::Findings)) => return check_findings(ctx, path, name, emit),
        Some((path, Recorded::Failure)) => return Ok(recorded::failure(path, name)),
        Some((_, Recorded::Outcome)) if !input.explicit => {
            let mut file = FileSummary::checked(name, Stats::default(), None);
            file.skipped = Some(recorded::OUTCOME_SKIPPED.into());
            return Ok(file);
        }
        // (Named alone: a walk does not read it, by its name.)
        Some((path, Recorded::RunFindings { stream })) => {
            return recorded::check_run_findings(ctx, path, &stream, name, emit);
        }
        Some((_, Recorded::RunRequest { stream })) => {
            let mut file = FileSummary::checked(name, Stats::default(), None);
            file.skipped = Some(recorded::request_read_with(&stream));
            return Ok(file);
        }
        Some((
            _,
            Recorded::Events {
                request,
                cut,
                findings,
                no_stream,
                refused,
            },
        )) => Some((request, cut, findings, no_stream, refused)),
        _ => None,
    };
    match read::open(&input.spec, read) {
        Ok(opened) => match sent {
            Some((request, cut, findings, no_stream, refused)) => {
                // A body a walk reads for an exchange left unfinished is judged, whatever it
                // holds: nothing in it is no sidecar to pass over. (A walk takes a
                // `response.raw` for no other reason: see `recorded::is_unfinished_body`.)
                let body = input
                    .spec
                    .path()
                    .is_some_and(|p| p.file_name().is_some_and(|name| name == "response.raw"));
                let walked = !input.explicit && !body;
                let findings = findings.as_deref();
                recorded::check_recording(
                    ctx, opened, walked, request, cut, findings, no_stream, refused, emit,
                )
            }
            None => check_opened(ctx, opened, !input.explicit, emit),
        },
        Err(_) if agui_lens_core::stop::requested() => {
            Ok(FileSummary::stopped(name, Stats::default()))
        }
        Err(err) => Ok(failed(name, Stats::default(), format!("{err:#}"))),
    }
}

fn failed(path: Arc<str>, stats: Stats, message: String) -> FileSummary {
    FileSummary::checked(path, stats, Some(message))
}
