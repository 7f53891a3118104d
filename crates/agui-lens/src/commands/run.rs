//! `agui-lens run URL`: POST one RunAgentInput to a live agent and check the stream as it
//! arrives. Diagnostics go to stdout in the chosen format as they are found; the exchange's
//! summary (status, time to first event, total time) and `--verbose` event lines go to
//! stderr, so a json, junit or sarif report on stdout stays one document.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::ArgMatches;

use super::Outcome;
use super::check::{RunSummary, settings, use_color};
use crate::cli::RunArgs;
use crate::live::call::{Call, Exchange, LiveError, Taps, check_call};
use crate::live::http::{display_url, seconds};
use crate::live::request::{AgentInput, parse_header, process_env};
use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::Stats;
use agui_lens_core::check::parse::excerpt;
use agui_lens_core::check::recorded::{RECORDING_SIZE, findings_file_of, found_only_when_recorded};
use agui_lens_core::check::request::input_findings;
use agui_lens_core::check::rules::protocol::{DEFAULT_STATE_LIMIT, ProtocolOptions};
use agui_lens_core::check::schema::{SchemaFinding, SchemaSet};
use agui_lens_core::protocol::event::Event;
use agui_lens_core::protocol::version::judged_by;
use agui_lens_core::report::human::visible;
use agui_lens_core::report::{DiagnosticRecord, FileSummary, Summary, plural};

pub fn run(args: &RunArgs, matches: &ArgMatches) -> Result<Outcome> {
    // A recording named by a link is written into the file it leads to, and what is written
    // beside it goes beside that file, where a check of the file looks (beside the link's
    // name, a check of the file judged a cut recording whole).
    let mut resolved = args.clone();
    for path in [&mut resolved.record, &mut resolved.record_raw]
        .into_iter()
        .flatten()
    {
        if path.is_symlink()
            && let Ok(target) = std::fs::canonicalize(&*path)
        {
            *path = target;
        }
    }
    let args = &resolved;
    refuse_recording_over_input(args)?;
    let settings = settings(&args.rules, matches, args.max_line, args.schemas.as_deref())?;
    let input = agent_input(args)?;
    let (refused, sent_invalid) = match judge_input(&input, settings.schemas, args)? {
        Judged::Valid => (None, None),
        Judged::Refused(why) => (Some(why), None),
        Judged::SentInvalid(what) => (None, Some(what)),
    };
    let headers = args
        .headers
        .iter()
        .map(|h| parse_header(h, process_env))
        .collect::<Result<Vec<_>, _>>()?;
    let name: Arc<str> = Arc::from(display_url(&args.url));
    let reporter = || {
        let out: Box<dyn Write> = Box::new(io::BufWriter::new(super::ReportOut::default()));
        crate::render::reporter(
            args.output.format,
            out,
            use_color(args.output.color),
            !args.output.no_group,
        )
    };
    if let Some(why) = refused {
        // Nothing is sent (nor recorded): the report says why, with what broke the input, so
        // an uploaded report is never empty.
        let _ = writeln!(io::stderr(), "error: {}", visible(&why));
        let mut reporter = reporter();
        let findings = input_findings(settings.schemas, &input.value, args.rules.protocol, &name);
        let mut stats = Stats::default();
        // At the levels the flags and config give them, as every other finding.
        let findings = findings.into_iter().filter_map(|mut d| {
            d.severity = settings.levels.severity(d.rule)?;
            Some(d)
        });
        for d in findings {
            match d.severity {
                Severity::Error => stats.errors += 1,
                Severity::Warning => stats.warnings += 1,
                Severity::Note => stats.notes += 1,
            }
            reporter.diagnostic(&d)?;
        }
        let mut file = FileSummary::checked(name, stats, Some(why));
        file.call = true;
        let run = report_response(reporter.as_mut(), &file, 1)?;
        return Ok(Outcome::from_summary(&run, settings.deny_warnings));
    }
    let mut record = match &args.record {
        Some(path) => Some(io::BufWriter::new(Recording::new(path)?)),
        None => None,
    };
    let raw = args.record_raw.as_deref().map(Recording::new).transpose()?;
    let raw_begun = raw.as_ref().map(|r| (r.path.clone(), r.begun.clone()));
    // The raw recording is handed to the call; its lock is held to the run's end with this
    // handle, over what is written beside it.
    let _raw_held = raw
        .as_ref()
        .map(|r| r.file.try_clone())
        .transpose()
        .context("holding the raw recording")?;
    let record_raw: Option<Box<dyn Write + Send>> = raw.map(|r| Box::new(r) as _);
    if args.verbose {
        let mut err = super::Said;
        writeln!(err, "> POST {name}")?;
        for (header, _) in &headers {
            // Values may be credentials: the name is enough to see what was sent.
            writeln!(err, "> {header}: ***")?;
        }
    }
    let mut on_event = |event: &Event, raw: &[u8], at: Duration| print_event(event, raw, at);
    let taps = Taps {
        record: record.as_mut().map(|r| r as &mut dyn Write),
        record_raw,
        on_event: if args.verbose {
            Some(&mut on_event)
        } else {
            None
        },
    };
    let call = Call {
        url: &args.url,
        headers: &headers,
        input: &input,
        idle_timeout: args.idle_timeout,
        timeout: args.timeout,
        judge_status: false,
        invalid_sent: sent_invalid.is_some(),
        accept: args.accept,
    };
    let ctx = settings.context(ProtocolOptions {
        state_limit: args.max_state.unwrap_or(DEFAULT_STATE_LIMIT),
        version: args.rules.protocol,
        ..ProtocolOptions::default()
    });
    // Ctrl-C or SIGTERM stops the call, and what arrived is still checked and reported.
    crate::signals::catch();
    let mut reporter = reporter();
    // What a check of the recordings could not find again, kept to record beside them.
    let mut only_the_call = Vec::new();
    let recording = args.record.is_some() || args.record_raw.is_some();
    let result = check_call(&ctx, &call, name.clone(), taps, &mut |diagnostics| {
        for d in diagnostics {
            reporter.diagnostic(d)?;
            if recording && found_only_when_recorded(d.rule) {
                only_the_call.push(d.clone());
            }
        }
        reporter.flush()
    });
    let exchange = match result {
        Ok(exchange) => exchange,
        Err(LiveError::Unreachable(why)) => {
            // No exchange at all: a failure the report carries in every format, as an
            // input `check` could not read, so an uploaded report is never empty or clean.
            let _ = writeln!(io::stderr(), "error: {}", visible(&why));
            let mut file = FileSummary::checked(name.clone(), Default::default(), Some(why));
            file.call = true;
            let run = report_response(reporter.as_mut(), &file, 1)?;
            return Ok(Outcome::from_summary(&run, settings.deny_warnings));
        }
        Err(LiveError::Failed(err)) => return Err(err),
    };
    // A recording that could not be written to its end (a full disk) fails the run, in every
    // report; what was checked of the stream is still reported, and what is written beside
    // the recordings is tried, and said when it cannot be.
    let failed = exchange.record_failed.clone();
    let beside = |done: Result<()>| -> Result<()> {
        match (done, &failed) {
            (Err(err), Some(_)) => {
                let _ = writeln!(io::stderr(), "warning: {err:#}");
                Ok(())
            }
            (done, _) => done,
        }
    };
    // An answer came: the recordings hold it, even when it had no body.
    if let Some(record) = record.as_mut().filter(|_| failed.is_none()) {
        record.flush().context("writing the recording")?;
        record.get_mut().begin()?;
    }
    let begun =
        |flag: &std::sync::atomic::AtomicBool| flag.load(std::sync::atomic::Ordering::SeqCst);
    let raw_begun = match raw_begun {
        Some((_, flag)) if begun(&flag) => true,
        Some((path, _)) if failed.as_ref().is_none_or(|f| !f.raw) => {
            create_recording(&path)?;
            true
        }
        _ => false,
    };
    let events_begun = record.as_ref().is_some_and(|r| begun(&r.get_ref().begun));
    // A recording the stop cut says so beside it, for a later `check` of it (the run it
    // leaves open is the stop's, not the agent's); a whole one leaves no such file behind
    // from an earlier run.
    for (path, raw) in [(&args.record, false), (&args.record_raw, true)] {
        let Some(path) = path else { continue };
        // A recording this run never began (its first write failed) is as it was, and so is
        // what is beside it (an earlier run's whole recording, or its cut).
        if !(if raw { raw_begun } else { events_begun }) {
            continue;
        }
        let cut = agui_lens_core::check::recorded::cut_file_of(path);
        // The raw recording's failure stopped the read, so both recordings hold part of the
        // stream; the events' failure, only theirs.
        let partly = failed.as_ref().filter(|f| f.raw || !raw);
        let why = match partly {
            // (How many events it holds is the file's to say: the check went on past it.)
            Some(failed) => Some(format!(
                "{}: the stream was recorded in part",
                failed.message
            )),
            None if exchange.interrupted => Some(format!(
                "stopped by {} after {}: the stream was recorded in part, and what only its \
                 end tells was not checked",
                agui_lens_core::stop::signal_name(),
                plural(exchange.stats.events, "event"),
            )),
            None => None,
        };
        let done = if let Some(why) = why {
            // With the recording's length, by which a capture put in its place later is told
            // from it.
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or_default();
            let said = format!(
                "{why}\n{}{size}\n",
                agui_lens_core::check::recorded::CUT_SIZE
            );
            std::fs::write(&cut, said)
        } else if cut.is_file() {
            std::fs::remove_file(&cut)
        } else {
            Ok(())
        };
        beside(done.with_context(|| format!("writing {}", cut.display())))?;
    }
    if let Some(path) = &args.record {
        beside(record_call_findings(path, &only_the_call, false))?;
    }
    if let Some(path) = &args.record_raw {
        beside(record_call_findings(path, &only_the_call, true))?;
    }
    use agui_lens_core::check::request::refuses_an_input;
    // An input sent invalid on purpose and refused: a later check of the recordings says so,
    // and owes no stream.
    let refused = exchange
        .status
        .filter(|&status| sent_invalid.is_some() && refuses_an_input(status));
    for path in [&args.record, &args.record_raw].into_iter().flatten() {
        beside(super::record_request(path, &input.value, refused))?;
    }
    let mut file = match &failed {
        _ if exchange.interrupted => FileSummary::stopped(name.clone(), exchange.stats),
        Some(failed) => FileSummary {
            unwritten: true,
            ..FileSummary::checked(
                name.clone(),
                exchange.stats,
                Some(if failed.raw {
                    format!("{}: the rest of the stream was not read", failed.message)
                } else {
                    format!("{}: the stream was checked to its end", failed.message)
                }),
            )
        },
        None => FileSummary::checked(name.clone(), exchange.stats, None),
    };
    file.protocol = exchange.protocol.clone();
    file.notes.extend(exchange.run_failed());
    // An input sent on purpose though it breaks its schema: what it got.
    if let Some(what) = &sent_invalid {
        let answer = match exchange.status {
            Some(status) if refuses_an_input(status) => {
                format!("the agent refused the input ({status}), as an agent may")
            }
            Some(status) if (200..300).contains(&status) => {
                format!("the agent took the input and answered {status}")
            }
            Some(status) => format!("the agent answered {status}"),
            None => "no answer came".to_owned(),
        };
        file.notes.push(format!(
            "{what}, and was sent on purpose (--send-invalid): {answer}"
        ));
    }
    file.notes
        .extend(agui_lens_core::check::opened::unread_in_silence(
            &ctx,
            &exchange.stats,
        ));
    if let Some(failure) = file.failure_text() {
        let _ = writeln!(io::stderr(), "{failure}");
    }
    let run = report_response(reporter.as_mut(), &file, u64::from(file.unwritten))?;
    let _ = writeln!(io::stderr(), "{}", summary_line(&name, &exchange));
    Ok(Outcome::from_summary(&run, settings.deny_warnings))
}

/// Writes beside a recording what only the call found of it (see
/// [`agui_lens_core::check::recorded::FINDINGS_SUFFIX`]), which `check` of the recording
/// then reports with what it finds itself: the recording of a run that failed on its status,
/// its run id or frames no client reads apart checked clean. Of the body as it came (`raw`),
/// the frames' findings are found again from its bytes, and not written; of the events, they
/// are placed by event, as the body's lines are not the recording's. Nothing found takes away
/// such a file an earlier run left.
fn record_call_findings(
    recording: &std::path::Path,
    found: &[Diagnostic],
    raw: bool,
) -> Result<()> {
    let file = findings_file_of(recording);
    // With the recording's length, by which a capture put in its place later is told from it.
    let size = std::fs::metadata(recording)
        .map(|m| m.len())
        .unwrap_or_default();
    let mut lines = String::new();
    for d in found {
        if raw && d.rule.name().starts_with("framing/") {
            continue;
        }
        let mut d = d.clone();
        if !raw {
            (d.line, d.offset) = (None, None);
        }
        let mut record = serde_json::to_value(DiagnosticRecord::from(&d))?;
        record[RECORDING_SIZE] = size.into();
        lines.push_str(&record.to_string());
        lines.push('\n');
    }
    if lines.is_empty() {
        return super::remove_if_there(&file)
            .with_context(|| format!("removing {}", file.display()));
    }
    super::write_bytes(&file, lines.as_bytes())
}

/// Ends the report of the one live response, or of the call that had none
/// (`failed_inputs`: 1).
fn report_response(
    reporter: &mut dyn agui_lens_core::report::Reporter,
    file: &FileSummary,
    failed_inputs: u64,
) -> Result<RunSummary> {
    let mut run = RunSummary {
        summary: Summary {
            live: true,
            ..Summary::default()
        },
        failed_inputs,
        eventless: 0,
    };
    run.summary.add(file);
    // Stopped by a signal: said as `check` says it (JSON's `stopped_by`).
    run.summary.stopped_by =
        agui_lens_core::stop::requested().then(agui_lens_core::stop::signal_name);
    reporter.end_file(file)?;
    reporter.finish(&run.summary)?;
    Ok(run)
}

/// Refuses a recording when a file beside it that the run writes or takes away (the request,
/// the findings only the call finds, the word that it was cut) holds what no run wrote.
fn refuse_beside(recording: &std::path::Path, flag: &str) -> Result<()> {
    use agui_lens_core::check::recorded::{Beside, cut_file_of, findings_file_of, request_file_of};
    for (path, kind) in [
        (request_file_of(recording), Beside::Request),
        (findings_file_of(recording), Beside::Findings),
        (cut_file_of(recording), Beside::Cut),
    ] {
        if let Some(users) = kind.users(&path) {
            bail!(
                "{flag} {}: beside it, {users}, which this run would replace or take away; it \
                 was left as it was, and nothing was sent (move it, or record into another file)",
                recording.display(),
            );
        }
    }
    Ok(())
}

/// A recording named as the RunAgentInput would empty it before it is sent, and the two
/// recordings named as one file would interleave: refused before anything is read or sent.
fn refuse_recording_over_input(args: &RunArgs) -> Result<()> {
    let input = args.input.as_deref().filter(|p| p.as_os_str() != "-");
    for (output, flag) in [
        (&args.record, "--record"),
        (&args.record_raw, "--record-raw"),
    ] {
        if let (Some(output), Some(input)) = (output, input) {
            super::refuse_output_over_input(output, flag, &[(input, "--input")])?;
        }
    }
    for (output, flag) in [
        (&args.record, "--record"),
        (&args.record_raw, "--record-raw"),
    ] {
        // A recording is a file, replaced whole and checked later with what is written
        // beside it: a FIFO or a device (`/dev/null`, `>(…)`) got nothing, after the call,
        // and files beside it (in /dev too).
        if let Some(output) = output.as_deref().filter(|p| super::is_stream(p)) {
            bail!(
                "{flag} {} is a FIFO or a device, not a file: name a file to record into \
                 (nothing was sent)",
                output.display()
            );
        }
        if let Some(output) = output.as_deref().filter(|p| p.is_dir()) {
            bail!(
                "{flag} {} is a directory: name a file to record into (nothing was sent)",
                output.display()
            );
        }
        // A path that ends in `/` names a folder, there or not: the recording could not be
        // made after the call, and the agent's answer was lost.
        if let Some(output) = output.as_deref().filter(|p| super::names_a_folder(p)) {
            bail!(
                "{flag} {} names a directory: name a file to record into (nothing was sent)",
                output.display()
            );
        }
        if let Some(nowhere) = output.as_deref().and_then(super::link_into_nothing) {
            return Err(anyhow::Error::new(nowhere).context(format!("{flag} (nothing was sent)")));
        }
    }
    if let Some(record) = &args.record {
        super::refuse_to_replace(record, "--record", super::Replaces::Stream)?;
    }
    // What the run writes beside a recording (or takes away) is only ever written over what
    // a run wrote there: a file of the user's of that name is refused, as the recording is.
    for (output, flag) in [
        (&args.record, "--record"),
        (&args.record_raw, "--record-raw"),
    ] {
        if let Some(output) = output {
            refuse_beside(output, flag)?;
        }
    }
    if let (Some(record), Some(raw)) = (&args.record, &args.record_raw) {
        let same_name = |a: &std::path::Path, b: &std::path::Path| {
            let whole = |p: &std::path::Path| where_named(p);
            whole(a).is_some() && whole(a) == whole(b)
        };
        if same_name(record, raw) || super::same_file(record, raw) {
            bail!(
                "--record and --record-raw name one file ({}): the events and the raw body \
                 would be written over each other; name two files",
                record.display()
            );
        }
        // What is written beside each recording (its request, what only the call found, the
        // cut) would be written over the other recording.
        use agui_lens_core::check::recorded::{cut_file_of, findings_file_of, request_file_of};
        for (one, other) in [(record, raw), (raw, record)] {
            let beside = [
                request_file_of(one),
                findings_file_of(one),
                cut_file_of(one),
            ];
            if let Some(clash) = beside
                .iter()
                .find(|b| same_name(b, other) || super::same_file(b, other))
            {
                bail!(
                    "{} is the file written beside {} (what a check of it reads): the other \
                     recording would be written over; name another file (nothing was sent)",
                    clash.display(),
                    one.display()
                );
            }
        }
    }
    Ok(())
}

/// Where a file to be written is, however it is named (`x`, `./x`, `../here/x`, through a
/// linked folder, a link to it): its folder as the system resolves it, when there is one yet,
/// and its name; else the path with `.` and `..` taken out as written.
fn where_named(path: &std::path::Path) -> Option<std::path::PathBuf> {
    where_named_within(path, 8)
}

/// [`where_named`], following at most `hops` links (one may lead to a file not there yet).
fn where_named_within(path: &std::path::Path, hops: u8) -> Option<std::path::PathBuf> {
    if hops > 0
        && let Ok(target) = std::fs::read_link(path)
    {
        let target = match path.parent() {
            Some(folder) if target.is_relative() => folder.join(target),
            _ => target,
        };
        return where_named_within(&target, hops - 1);
    }
    let plain = super::plain_path(path)?;
    let (Some(folder), Some(name)) = (plain.parent(), plain.file_name()) else {
        return Some(plain);
    };
    Some(match std::fs::canonicalize(folder) {
        Ok(folder) => folder.join(name),
        Err(_) => plain,
    })
}

/// What the input is, held to its schema before it is sent.
enum Judged {
    /// Nothing breaks it.
    Valid,
    /// It breaks its schema and is not sent: why.
    Refused(String),
    /// It breaks its schema and is sent all the same (`--send-invalid`): what breaks it.
    SentInvalid(String),
}

/// Holds the input to the RunAgentInput schema of the version it declares (else
/// `--protocol`, else the newest) before it is sent: what breaks it is said on stderr, and
/// the call is refused unless `--send-invalid` asks for it. Unknown fields are only noted.
fn judge_input(input: &AgentInput, schemas: &SchemaSet, args: &RunArgs) -> Result<Judged> {
    let declared = input.value.get("protocolVersion").and_then(|v| v.as_str());
    let version = judged_by(declared, args.rules.protocol);
    let findings = schemas.for_version(version).validate_input(&input.value)?;
    let mut lines = Vec::new();
    let mut breaks = 0;
    for finding in &findings {
        let line = match finding {
            SchemaFinding::Violation {
                pointer, message, ..
            } => {
                breaks += 1;
                if !pointer.is_empty() && message.starts_with(pointer.as_str()) {
                    format!("error: {message}")
                } else {
                    format!("error: {}: {message}", shown_pointer(pointer))
                }
            }
            SchemaFinding::NullForOptional { pointer, .. } => {
                breaks += 1;
                format!(
                    "error: {}: null for an optional field (leave it out)",
                    shown_pointer(pointer)
                )
            }
            SchemaFinding::UnknownField { pointer, field, .. } => format!(
                "note: {}: `{field}` is not a RunAgentInput field (servers ignore it)",
                shown_pointer(pointer)
            ),
        };
        lines.push(format!("input: {line}"));
    }
    let mut err = super::Said;
    let mut say = |more: &str| {
        for line in &lines {
            writeln!(err, "{line}")?;
        }
        if !more.is_empty() {
            writeln!(err, "{more}")?;
        }
        io::Result::Ok(())
    };
    if breaks == 0 {
        say("")?;
        return Ok(Judged::Valid);
    }
    let what = format!(
        "the input breaks the RunAgentInput schema of protocol {version} in {}",
        plural(breaks, "place")
    );
    if args.send_invalid {
        say(&format!(
            "input: {what}; sending it anyway (--send-invalid)"
        ))?;
        return Ok(Judged::SentInvalid(what));
    }
    // Refused: what broke it is in the report.
    Ok(Judged::Refused(format!(
        "{what}: nothing was sent; fix it, or pass --send-invalid to see how the agent answers a bad request"
    )))
}

fn shown_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(the input)"
    } else {
        pointer
    }
}

fn agent_input(args: &RunArgs) -> Result<AgentInput> {
    if let Some(text) = &args.message {
        return Ok(AgentInput::from_message(text));
    }
    let Some(path) = &args.input else {
        bail!("give --input FILE or --message TEXT");
    };
    if path.as_os_str() != "-" {
        // Sent from the file as it is read: a large input is not held twice.
        return AgentInput::from_file(path).with_context(|| format!("reading {}", path.display()));
    }
    let mut body = Vec::new();
    io::Read::read_to_end(&mut io::stdin(), &mut body).context("reading stdin")?;
    AgentInput::from_bytes(body).context("reading stdin")
}

/// `--verbose`: one line per event, as it is checked.
fn print_event(event: &Event, raw: &[u8], at: Duration) {
    let ty = event.type_name().unwrap_or("(no type)");
    let shown = excerpt(raw).unwrap_or_default().replace(['\n', '\r'], " ");
    let _ = writeln!(
        io::stderr(),
        "{:>9}  event {:<4} {ty}  {shown}",
        format!("+{:.3}s", at.as_secs_f64()),
        event.loc.index
    );
}

/// `POST URL: 200 OK (text/event-stream), first event after 12 ms, 340 ms in all; 42 events: 0 errors, 0 warnings`
pub fn summary_line(name: &str, exchange: &Exchange) -> String {
    let answer = match exchange.status {
        Some(status) => {
            let mut text = status.to_string();
            if let Some(reason) = exchange.reason {
                text.push(' ');
                text.push_str(reason);
            }
            if let Some(ct) = &exchange.content_type {
                text.push_str(&format!(" ({ct})"));
            }
            text
        }
        None => "no response".to_owned(),
    };
    let first = match exchange.first_event {
        Some(at) => format!("first event after {}", precise(at)),
        None => "no event".to_owned(),
    };
    // (The agent's words on one line: see `visible_path`.)
    let failed = exchange
        .run_failed()
        .map(|failed| format!("; {}", agui_lens_core::report::human::visible_path(&failed)))
        .unwrap_or_default();
    format!(
        "POST {name}: {answer}, {first}, {} in all; {}: {}, {}{failed}",
        precise(exchange.elapsed),
        plural(exchange.stats.events, "event"),
        plural(exchange.stats.errors, "error"),
        plural(exchange.stats.warnings, "warning"),
    )
}

/// Milliseconds below ten seconds, else seconds.
fn precise(d: Duration) -> String {
    if d < Duration::from_secs(10) {
        format!("{} ms", d.as_millis())
    } else {
        seconds(d)
    }
}

/// A recording, emptied when the first bytes of an answer come, not before: a call that
/// reaches no agent leaves an earlier recording of that name as it was (and none where there
/// was none). The file is held locked from before the call to the end of the run: a second
/// run recording into it at once is refused before it sends anything (the two streams were
/// interleaved in it, and the first's findings deleted by the second).
struct Recording {
    path: std::path::PathBuf,
    /// The file, open and locked; emptied at the answer's first bytes.
    file: File,
    /// It was not there before this run opened it.
    made: bool,
    begun: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Recording {
    /// Its folders are made now, so that a path that cannot be had fails before the call (a
    /// link into nothing was refused before, with the other outputs' faults).
    fn new(path: &std::path::Path) -> Result<Recording> {
        super::create_folders(super::directory_of(path))
            .with_context(|| format!("creating {}", path.display()))?;
        let made = !path.exists();
        if made {
            // A file made for the call stands empty until the answer comes: said first, so
            // that a run killed from here on leaves it saying it is no answer (taken away with
            // it when none came).
            say_unfinished(path)?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .inspect_err(|_| {
                if made {
                    let _ =
                        std::fs::remove_file(agui_lens_core::check::recorded::cut_file_of(path));
                }
            })
            .with_context(|| format!("creating {}", path.display()))?;
        let locked = try_lock(&file);
        if !matches!(locked, Ok(true)) {
            // Not taken away, even when this run made it: the run that holds it records into
            // it (the two may have come to an empty place at once).
            return Err(match locked {
                Ok(_) => anyhow::anyhow!(
                    "another agui-lens is recording into {} now; nothing was sent (record \
                     into another file, or wait for it to end)",
                    path.display()
                ),
                Err(err) => anyhow::Error::new(err)
                    .context(format!("locking {} to record into it", path.display())),
            });
        }
        Ok(Recording {
            path: path.to_owned(),
            file,
            made,
            begun: Default::default(),
        })
    }

    fn begin(&mut self) -> Result<&mut File> {
        if !self.begun.load(std::sync::atomic::Ordering::SeqCst) {
            // Until the run's end says how the recording ended, it is not finished.
            say_unfinished(&self.path)?;
            self.file
                .set_len(0)
                .and_then(|()| self.file.rewind())
                .with_context(|| format!("creating {}", self.path.display()))?;
            self.begun.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(&mut self.file)
    }
}

/// Writes beside the recording at `path` that it is not finished, until the run's end says
/// how it ended: whole or not at all (what is there stays as it was when the disk is full: the
/// recording may be an earlier run's, whole or cut).
fn say_unfinished(path: &std::path::Path) -> Result<()> {
    super::say_unfinished(&agui_lens_core::check::recorded::cut_file_of(path))
}

/// Takes the file's lock (`flock`, exclusive), if no other open file holds it: held until
/// every handle of this open file is closed, the process's end included. A look at the lock
/// ([`held_by_a_recorder`], by a check of the recording) holds it for an instant: found taken,
/// it is tried again for a moment before another recorder is taken to hold it.
pub(super) fn try_lock(file: &File) -> io::Result<bool> {
    for _ in 0..20 {
        if flock(file, libc::LOCK_EX)? {
            return Ok(true);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Ok(false)
}

/// Whether a recorder holds the recording at `path` now: its lock is taken. Looked at with a
/// shared lock, let go at once (the file is closed on return).
pub(crate) fn held_by_a_recorder(path: &std::path::Path) -> bool {
    File::open(path).is_ok_and(|file| matches!(flock(&file, libc::LOCK_SH), Ok(false)))
}

/// `flock(operation)` without waiting: false when another open file holds the lock.
fn flock(file: &File, operation: libc::c_int) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor this `File` owns, open for its whole call.
    if unsafe { libc::flock(file.as_raw_fd(), operation | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.kind() {
        io::ErrorKind::WouldBlock => Ok(false),
        _ => Err(err),
    }
}

impl Drop for Recording {
    /// A file made for a call that never answered is taken away again.
    fn drop(&mut self) {
        if self.made && !self.begun.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = std::fs::remove_file(&self.path);
            let _ = std::fs::remove_file(agui_lens_core::check::recorded::cut_file_of(&self.path));
        }
    }
}

impl Write for Recording {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.begin().map_err(io::Error::other)?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A recording file, written as the response arrives (not through a temp file: what arrived
/// before an interruption is kept), in folders made as needed.
fn create_recording(path: &std::path::Path) -> Result<File> {
    super::create_folders(super::directory_of(path))
        .and_then(|()| File::create(path))
        .with_context(|| format!("creating {}", path.display()))
}
