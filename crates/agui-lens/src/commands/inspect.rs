//! `agui-lens inspect PATH`: what happened in a stream, with `check`'s findings where they
//! occur — in the terminal, as JSON, as statistics, or as a self-contained HTML report.

use std::io::{self, Write};
use std::sync::Arc;

use anyhow::Result;
use clap::ArgMatches;
use serde_json::Value;

use super::Outcome;
use super::check::{Settings, settings, use_color};
use crate::cli::InspectArgs;
pub use crate::cli::ViewFormat as Format;
use crate::inspect::human::{Human, plural};
use crate::inspect::stats::{self, StatsCollector};
use crate::inspect::{Inspection, Inspector, PlainDelta, StateFrames, html};
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::{Context, Engine, Fed, Follower};
use agui_lens_core::check::opened::Answering;
use agui_lens_core::check::parse;
use agui_lens_core::check::recorded::{self, Recorded};
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::protocol::event::Event;
use agui_lens_core::read::{self, Frame, InputSpec, ReadOptions};

pub fn run(args: &InspectArgs, matches: &ArgMatches) -> Result<Outcome> {
    let mut began_writing = false;
    let result = inspect(args, matches, &mut began_writing);
    if let Err(err) = &result
        && !began_writing
        && args.format == crate::cli::ViewFormat::Json
        && args.html.is_none()
    {
        // A reader of the JSON gets a document that says why there is no view (as `check`
        // and `diff` give one), not an empty stdout.
        let document = serde_json::json!({
            "path": InputSpec::named(&args.path).display_name(),
            "error": format!("{err:#}"),
        });
        let mut out = super::ReportOut::default();
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&document)?);
        let _ = out.flush();
    }
    result
}

/// [`run`], which says on stdout why there is no view when `began_writing` is still false.
fn inspect(args: &InspectArgs, matches: &ArgMatches, began_writing: &mut bool) -> Result<Outcome> {
    let Settings {
        levels,
        schemas,
        max_line,
        deny_warnings,
    } = settings(&args.rules, matches, args.read.max_line, None)?;
    let input = InputSpec::named(&args.path);
    if let (Some(html), Some(path)) = (&args.html, input.path()) {
        let mut inputs = vec![(path, "PATH")];
        let state = args.read.initial_state.as_deref().map(std::path::Path::new);
        inputs.extend(state.map(|s| (s, "--initial-state")));
        let settings = super::settings_files(&args.rules);
        inputs.extend(settings.iter().map(|(p, by)| (p.as_path(), *by)));
        super::refuse_output_over_input(html, "--html", &inputs)?;
        super::refuse_to_replace(html, "--html", super::Replaces::Page)?;
    }
    let read = ReadOptions {
        format: args.read.input_format,
        max_line,
        entry: args.read.entry,
    };
    let state_limit = args.read.state_limit();
    let _progress = crate::progress::Progress::start(
        "inspecting",
        crate::progress::total_size([&input]),
        1,
        args.html.is_some() || args.format == crate::cli::ViewFormat::Human,
    );
    // Ctrl-C or SIGTERM ends the reading; what was read is not the stream, so nothing of it
    // is shown or written. That holds while the input's first bytes are awaited too (stdin
    // from a producer that has written nothing yet, a FIFO no writer opened).
    let unread = format!("the end of {}", input.display_name());
    let left = || match &args.html {
        Some(page) => super::left_unwritten(page),
        None => "nothing was shown".to_owned(),
    };
    let mut opened = super::reading(&unread, left, || read::open(&input, &read))?;
    // What the stream answered is held to what `check` holds it to: a browser capture's
    // request, or the one a recorded exchange keeps beside its stream, with how the side
    // that recorded it cut it.
    let (answering, run_findings) = match input.path().and_then(recorded::recorded) {
        Some(Recorded::Events {
            request,
            cut,
            findings,
            no_stream,
            ..
        }) => (
            Answering::new(&opened, request, false, cut).with_no_stream(no_stream),
            findings,
        ),
        _ => (Answering::new(&opened, None, true, None), None),
    };
    // The request is what the client held: its state and its messages.
    let request = answering.request.clone();
    let sent = |key: &str| request.as_deref().and_then(|r| read::member_sent(r, key));
    let initial_state = match args.read.initial_state()? {
        Some(state) => Some(state),
        None => sent("state").cloned(),
    };
    let history: Option<Vec<Value>> = request.as_ref().map(|_| {
        sent("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    });
    let ctx = Context {
        schemas,
        levels: &levels,
        max_line,
        protocol: ProtocolOptions {
            attach: false,
            state_limit,
            max_args: max_line,
            state: initial_state.clone(),
            version: args.rules.protocol,
            input: request.clone(),
        },
    };
    let name = opened.name.clone();
    let mut inspector = Inspector::new(&name, state_limit, args.html.is_some())
        .with_state(initial_state)
        .keeping_all(args.full);
    if let Some(history) = history {
        inspector = inspector.with_history(history);
    }
    let head = opened.head.clone();
    let mut engine = Engine::new(&ctx, name.clone(), std::mem::take(&mut opened.head));
    let mut found = Vec::new();
    answering.before(&ctx, &mut engine, opened.format, &mut found);
    inspector.diagnostics(&found);
    found.clear();
    // Parsing and the schemas run on the pool, ahead of the rules taking the events in order
    // here, and the inspector follows on a thread of its own; plain content deltas come as
    // borrowed text, not built events (see `Inspector::delta`).
    let mut following = Following {
        inspector,
        counts: args.stats.then(StatsCollector::default),
        page: args.html.as_ref().map(|_| html::Rows::default()),
        path: name.clone(),
    };
    let failure = super::reading(&unread, left, || {
        let read =
            engine.check_reader_followed(opened.reader.as_mut(), opened.live, &mut following);
        Ok(match read {
            Ok(None) => None,
            Ok(Some(err)) | Err(err) => Some(format!("reading {name}: {err}")),
        })
    })?;
    let Following {
        mut inspector,
        counts,
        page,
        ..
    } = following;
    if failure.is_none() && engine.known_events() == 0 {
        return Err(agui_lens_core::check::stream::not_a_stream(
            &name,
            opened.format,
            &head,
        ));
    }
    answering.after(&mut engine, agui_lens_core::stop::requested(), &mut found);
    // A recorded stream the recorder cut is shown as far as it came, and never passed whole.
    let failure = failure.or_else(|| {
        let cut = answering.cut.as_ref()?;
        Some(format!("{name}: cut when it was recorded: {cut}"))
    });
    let totals = engine.finish(&mut found);
    inspector.diagnostics(&found);
    // What only the call that recorded the stream found (`run --record`), as `check` has it.
    let mut failure = failure;
    if let Some(findings) = &run_findings {
        let mut file =
            agui_lens_core::report::FileSummary::checked(name.clone(), Default::default(), None);
        let mut recorded_found = Vec::new();
        recorded::add_run_findings(&ctx, findings, &mut file, &mut |batch| {
            recorded_found.extend_from_slice(batch);
            Ok(())
        })?;
        inspector.diagnostics(&recorded_found);
        failure = failure.or(file.failure);
    }
    inspector.set_frames(totals.frames);
    let states = inspector.take_state_frames();
    let mut inspection = inspector.finish();
    inspection.failure = failure.clone();
    *began_writing = true;
    write(args, &inspection, counts, page.zip(states))?;
    if let Some(failure) = failure {
        let _ = writeln!(
            io::stderr(),
            "error: {}",
            agui_lens_core::report::human::visible(&failure)
        );
        return Ok(Outcome::Failed);
    }
    let failing = inspection.errors > 0 || (deny_warnings && inspection.warnings > 0);
    if failing && args.stats {
        // The counts say nothing of the findings, which still decide the exit status.
        let _ = writeln!(
            io::stderr(),
            "inspect: the stream has {} and {} (`agui-lens check` lists them): exit status 1",
            plural(inspection.errors, "error"),
            plural(inspection.warnings, "warning")
        );
    }
    leave_to_exit(inspection);
    Ok(if failing {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// What takes the checked events: the inspection, and the statistics or the page's rows when
/// asked for.
struct Following {
    inspector: Inspector,
    counts: Option<StatsCollector>,
    page: Option<html::Rows>,
    path: Arc<str>,
}

impl Follower for Following {
    fn fed(&mut self, fed: Fed<'_>, raw: &[u8]) {
        let Following {
            inspector,
            counts,
            page,
            path,
        } = self;
        // An event the check read with U+FFFD for half a UTF-16 pair is shown as a client
        // folds it: with the half, which the next delta's half joins (an emoji cut in two).
        let kept;
        let fed = match fed {
            Fed::Event(event) if event.mended => match parse::value_keeping_halves(raw) {
                Ok(value) => {
                    kept = Event {
                        value,
                        halves: true,
                        mended: false,
                        ..event.clone()
                    };
                    Fed::Event(&kept)
                }
                Err(_) => fed,
            },
            fed => fed,
        };
        match fed {
            Fed::Event(event) => {
                inspector.event(event, raw);
                if let Some(counts) = counts {
                    counts.event(event, raw);
                }
                if let Some(page) = page {
                    page.event(event, raw);
                }
            }
            Fed::Delta {
                kind,
                id,
                delta,
                owner,
                timestamp,
                frame,
            } => {
                let plain = PlainDelta {
                    kind,
                    id,
                    delta,
                    owner,
                    timestamp,
                    index: frame.index,
                };
                // Either may need the event built after all (see their `delta`).
                let inspected = inspector.delta(plain, raw);
                let paged = page.as_mut().is_none_or(|page| page.delta(&plain, raw));
                if !inspected || !paged {
                    let event = whole_event(path, frame, &plain, raw);
                    if !inspected {
                        inspector.event(&event, raw);
                    }
                    if let (false, Some(page)) = (paged, page) {
                        page.event(&event, raw);
                    }
                }
                if let Some(counts) = counts {
                    counts.count(kind.as_str(), frame.index, frame.line, raw.len() as u64);
                }
            }
        }
    }

    fn found(&mut self, found: &mut Vec<Diagnostic>) {
        self.inspector.diagnostics(found);
        found.clear();
    }
}

/// The event of a frame the check read as a plain delta. Its bytes parsed as one (that is
/// what reading them as a delta decided); were they ever not to, the event is made from the
/// fields the delta was read with.
fn whole_event(path: &Arc<str>, frame: &Frame, plain: &PlainDelta<'_>, raw: &[u8]) -> Event {
    let value = serde_json::from_slice(raw).unwrap_or_else(|_| plain.to_value());
    Event::new(parse::location(path, frame), Some(plain.kind), value)
}

/// Leaves `value` for the end of the process to take back instead of freeing it now: the
/// inspection of a long stream is millions of small allocations, and freeing them one by one
/// took a tenth of `inspect --html`'s time. Only for what lives until the command returns, as
/// `inspect` runs once per process.
fn leave_to_exit<T>(value: T) {
    std::mem::forget(value);
}

fn write(
    args: &InspectArgs,
    inspection: &Inspection,
    counts: Option<StatsCollector>,
    page: Option<(html::Rows, StateFrames)>,
) -> Result<()> {
    if let (Some(path), Some((rows, states))) = (&args.html, page) {
        super::write_file(path, |out| {
            Ok(html::render(inspection, &rows, &states, out)?)
        })?;
        leave_to_exit((rows, states));
        say!(
            "wrote {}: {}, {}, {}",
            path.display(),
            plural(inspection.events, "event"),
            plural(inspection.errors, "error"),
            plural(inspection.warnings, "warning")
        );
        return Ok(());
    }
    super::writing_stdout("the view", |out| write_view(args, inspection, counts, out))
}

/// Writes the view on `out` (stdout).
fn write_view(
    args: &InspectArgs,
    inspection: &Inspection,
    counts: Option<StatsCollector>,
    mut out: &mut dyn Write,
) -> Result<()> {
    match (counts, args.format) {
        (Some(counts), Format::Json) => {
            serde_json::to_writer_pretty(&mut out, &counts.finish(inspection))?;
            writeln!(out)?;
        }
        (Some(counts), Format::Human) => {
            // Names from the stream (event types, ids) as a terminal may show them.
            let mut shown = agui_lens_core::report::human::Visible::new(&mut out);
            stats::render(&counts.finish(inspection), args.full, &mut shown)?;
        }
        (None, Format::Json) if inspection.halves => {
            // A half of a UTF-16 pair nothing joined, as its escape (as `fold` writes it).
            let json = serde_json::to_string_pretty(inspection)?;
            out.write_all(agui_lens_core::read::halves::escape_stand_ins(&json).as_bytes())?;
            writeln!(out)?;
        }
        (None, Format::Json) => {
            serde_json::to_writer_pretty(&mut out, inspection)?;
            writeln!(out)?;
        }
        (None, Format::Human) => {
            Human::new(&mut out, use_color(args.color), args.full).render(inspection)?;
        }
    }
    out.flush()?;
    Ok(())
}
