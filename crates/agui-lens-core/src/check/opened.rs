//! Checking one opened input the way `agui-lens check` does: a browser capture's request
//! taken into account, findings handed over batch by batch, and an input a walk found that
//! is plainly no capture skipped.

use std::io;
use std::sync::Arc;

use serde_json::Value;

use crate::check::catalog::RuleId;
use crate::check::diagnostic::{Diagnostic, Severity};
use crate::check::engine::{Context, Engine, Stats};
use crate::check::request::input_findings;
use crate::check::rules::protocol::ProtocolOptions;
use crate::protocol::proto;
use crate::read::{self, CaptureEntry, InputFormat, Opened};
use crate::report::FileSummary;

/// Checks an opened input, handing diagnostics to `emit` batch by batch. An input a walk
/// found (`walked`) that turns out to be plainly no capture (JSON that is no event, such as
/// a sidecar beside the captures) is skipped instead of reported, when nothing about it has
/// been reported yet.
pub fn check_opened(
    ctx: &Context<'_>,
    opened: Opened,
    walked: bool,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    check_sent(ctx, opened, walked, None, emit)
}

/// [`check_opened`] for the response to `sent`, a RunAgentInput (as `run` holds a live call
/// to what it sent): its state is the baseline for deltas, its tools and history what the
/// rules know, and it is itself held to the RunAgentInput schema. A browser capture's own
/// request, when it has one, comes first.
pub fn check_sent(
    ctx: &Context<'_>,
    opened: Opened,
    walked: bool,
    sent: Option<Arc<Value>>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    check_answer(ctx, opened, walked, sent, true, None, false, emit)
}

/// [`check_sent`] where the request, `sent`, was held to its rules elsewhere (the proxy did,
/// with the thread's previous turn at hand, and recorded what it found beside the stream):
/// it is only what the stream answers (none when the request recorded is no RunAgentInput). `cut` says how the side that recorded the stream
/// stopped it before its end (the proxy's client went away, or it was stopped): what only
/// the end tells (a run left open) is not the producer's, and is not checked; the input is
/// said to be cut, as one whose reading was interrupted, never passed whole.
pub fn check_answer_to(
    ctx: &Context<'_>,
    opened: Opened,
    walked: bool,
    sent: Option<Arc<Value>>,
    cut: Option<String>,
    no_stream: bool,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    check_answer(ctx, opened, walked, sent, false, cut, no_stream, emit)
}

#[allow(clippy::too_many_arguments)]
fn check_answer(
    ctx: &Context<'_>,
    mut opened: Opened,
    walked: bool,
    sent: Option<Arc<Value>>,
    check_request: bool,
    cut: Option<String>,
    no_stream: bool,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> io::Result<FileSummary> {
    let (ctx_given, sent_given) = (ctx, sent.clone());
    let name = opened.name.clone();
    // What the input starts with, to say what it is if it holds no event.
    let head = opened.head.clone();
    let answering = Answering::new(&opened, sent, check_request, cut).with_no_stream(no_stream);
    let with_request;
    let ctx = match answering.context(ctx) {
        Some(given) => {
            with_request = given;
            &with_request
        }
        None => ctx,
    };
    // A file can be read again: one of no events is then judged whole, however long.
    let reopen = opened.reopen.take();
    let mut engine = Engine::new(ctx, name.clone(), std::mem::take(&mut opened.head));
    if reopen.is_some() {
        engine.count_past_hold();
    }
    let mut found = Vec::new();
    answering.before(ctx, &mut engine, opened.format, &mut found);
    let mut emitted = false;
    let piped = opened.piped;
    let read = engine.check_reader(
        opened.reader.as_mut(),
        opened.live,
        &mut found,
        &mut |found| {
            emitted |= !found.is_empty();
            let result = emit(found);
            found.clear();
            result
        },
    );
    if let Some(reopen) = reopen.filter(|_| engine.needs_rereading()) {
        if !crate::stop::requested() {
            // An event came after more frames of no event than are held: read it again,
            // letting every finding out in its place. Nothing was let out of this reading.
            drop(opened);
            let mut again = reopen
                .open()
                .map_err(|err| io::Error::other(format!("{err:#}")))?;
            again.reopen = None;
            return check_answer(
                ctx_given,
                again,
                walked,
                sent_given,
                check_request,
                answering.given_cut,
                no_stream,
                emit,
            );
        }
    }
    let read = match read {
        // Stopped before it could be read again: what was found is said (see `finish`).
        Err(_) if engine.needs_rereading() => Ok(Some(io::ErrorKind::Interrupted.into())),
        read => read,
    };
    let read = read?;
    // A piped input that ended once a stop was asked for: Ctrl-C stops the whole pipeline
    // (`producer | agui-lens check -`), so the end it read is the stop's, not the stream's.
    // Its end can be read before the signal is handled: one that ends inside a run waits a
    // moment for it (a stream that ends whole waits for nothing).
    let stopped_it = || {
        crate::stop::requested()
            || (engine.ends_inside_a_run()
                && crate::stop::requested_within(std::time::Duration::from_millis(100)))
    };
    let read = match read {
        None if piped && stopped_it() => Some(io::ErrorKind::Interrupted.into()),
        read => read,
    };
    // Cut by the reading side, not by the stream's end: by Ctrl-C or SIGTERM, or a reader
    // that stops early (the proxy, once its client went away). What came is checked, but
    // not as a whole stream.
    let interrupted = read.as_ref().is_some_and(crate::stop::is_reading_stopped);
    let failure = read.map(|err| format!("reading {name}: {err}"));
    let stopped = failure.is_some() && (crate::stop::requested() || interrupted);
    // A cut the recorder says only at its end (see `Opened::late_cut`).
    let mut answering = answering;
    if answering.cut.is_none()
        && let Some(late) = &opened.late_cut
    {
        answering.cut = late();
    }
    answering.after(&mut engine, stopped, &mut found);
    let cut = answering.cut;
    let known = engine.known_events();
    let versions = engine.versions().to_vec();
    let failed = engine.run_failures().said();
    let stats = engine.finish(&mut found);
    if walked && known == 0 && !emitted && failure.is_none() {
        let (kind, what) = read::classify_non_stream(&head);
        if kind.is_plainly_no_capture(&name) {
            let mut file = FileSummary::checked(name, Stats::default(), None);
            file.skipped = Some(what);
            return Ok(file);
        }
    }
    // An input with no event is no checked stream, even where the levels leave out the rule
    // that says so (`--allow 'framing/*'`, to quiet another framing rule): passed over, and
    // said to be, never "ok".
    if known == 0
        && failure.is_none()
        && !stopped
        && !ctx.levels.enabled(RuleId::FramingNoEvents)
        && found.is_empty()
        && !emitted
    {
        let mut file = FileSummary::checked(name, Stats::default(), None);
        file.skipped = Some(format!(
            "{} (framing/no-events is allowed)",
            read::describe_non_stream(&head)
        ));
        return Ok(file);
    }
    emit(&found)?;
    let mut stats = stats;
    if known == 0 {
        // Frames that hold no AG-UI event are not counted as events beside `no-events`.
        stats.events = 0;
    }
    let mut file = match (stopped, cut, failure) {
        (true, _, _) => FileSummary::stopped(name, stats),
        (false, Some(cut), None) => FileSummary {
            interrupted: true,
            ..FileSummary::checked(
                name,
                stats,
                Some(format!("cut when it was recorded: {cut}")),
            )
        },
        (false, _, failure) => FileSummary::checked(name, stats, failure),
    };
    file.protocol = versions;
    file.notes.extend(failed);
    file.notes.extend(unread_in_silence(ctx, &file.stats));
    Ok(file)
}

/// Frames that were no event, where a rule that would say so is allowed (`"framing/*" =
/// "allow"`): no finding, but the report says the stream was not all read, never "0 errors"
/// alone.
pub fn unread_in_silence(ctx: &Context<'_>, stats: &Stats) -> Option<String> {
    const SAY_A_FRAME_IS_NO_EVENT: [RuleId; 6] = [
        RuleId::FramingInvalidJson,
        RuleId::FramingInvalidUtf8,
        RuleId::FramingNotAnObject,
        RuleId::FramingLineTooLong,
        RuleId::FramingProtoUndecodable,
        RuleId::FramingProtoTooLong,
    ];
    let unread = stats.frames.saturating_sub(stats.events);
    let quiet = SAY_A_FRAME_IS_NO_EVENT
        .iter()
        .any(|&rule| !ctx.levels.enabled(rule));
    (unread > 0 && stats.events > 0 && quiet).then(|| {
        let (frames, were) = if unread == 1 {
            ("1 frame".to_owned(), "was")
        } else {
            (format!("{unread} frames"), "were")
        };
        format!(
            "{frames} {were} not read as an event and left out of the check (the framing rule \
             that says so is allowed)"
        )
    })
}

/// What an input's stream answered, as far as it is known, and what `check` holds it to for
/// that (`inspect` too): a browser capture's request, or the one `run` sent or a recording
/// keeps beside the stream; how the side that recorded the stream cut it; the connection the
/// browser says it lost.
pub struct Answering {
    name: Arc<str>,
    /// The RunAgentInput the stream answers.
    pub request: Option<Arc<Value>>,
    capture: Option<CaptureEntry>,
    /// Whether the request is held to its own rules here (not when the proxy did so, and
    /// recorded what it found beside the stream).
    check_request: bool,
    /// How the side that recorded the stream stopped it before its end (the proxy's client
    /// went away, the page stopped the call): what only the end tells is not the producer's.
    pub cut: Option<String>,
    /// The cut as given, before the capture's own was taken in (to read the input again).
    given_cut: Option<String>,
    /// Why the browser's read of the response failed: the agent's cut.
    lost: Option<String>,
    /// The recorder said the answer held no stream (see `Recorded::Events`).
    no_stream: bool,
}

impl Answering {
    /// For an opened input: `sent` is the request when the input holds none of its own,
    /// `cut` how the side that recorded it stopped it.
    pub fn new(
        opened: &Opened,
        sent: Option<Arc<Value>>,
        check_request: bool,
        cut: Option<String>,
    ) -> Answering {
        // A browser capture's stream is held to what its request sent, as `run` holds a live
        // one: the state is the baseline for deltas, the tools and history what the rules know.
        let capture = opened.capture.clone();
        let request = capture.as_ref().and_then(|c| c.request.clone()).or(sent);
        // A browser that says why the response ended early: the page's own stop is a cut by
        // the side that recorded it (what only the end tells is not the agent's); a failed
        // read is the agent's cut, said as `run` says a connection lost.
        let failure = capture.as_ref().and_then(|c| c.failure.clone());
        let given_cut = cut.clone();
        let (cut, lost) = match failure {
            Some(failure) if read::har::stopped_by_page(&failure) => (
                cut.or_else(|| Some(format!("the page stopped the call ({failure})"))),
                None,
            ),
            failure => (cut, failure),
        };
        Answering {
            name: opened.name.clone(),
            request,
            capture,
            check_request,
            cut,
            given_cut,
            lost,
            no_stream: false,
        }
    }

    /// Says the recorder found the answer held no stream (its status was no success, or its
    /// body no event stream): an empty input is its answer, not reported again as
    /// `framing/no-events`.
    pub fn with_no_stream(mut self, no_stream: bool) -> Answering {
        self.no_stream = no_stream;
        self
    }

    /// `ctx` with the request's state as the baseline for deltas (else `ctx`'s) and the
    /// request as what the rules know; none without a request.
    pub fn context<'a>(&self, ctx: &Context<'a>) -> Option<Context<'a>> {
        let request = self.request.as_ref()?;
        Some(Context {
            protocol: ProtocolOptions {
                state: request
                    .get("state")
                    .filter(|v| !v.is_null())
                    .cloned()
                    .or_else(|| ctx.protocol.state.clone()),
                input: Some(Arc::clone(request)),
                ..ctx.protocol.clone()
            },
            ..*ctx
        })
    }

    /// What is found before the stream is read: the request held to its schema and to what
    /// a client owes the turn before it on its thread, the response's status and type, and
    /// the run ids asked for held for the stream to answer. `format` is how the body reads.
    pub fn before(
        &self,
        ctx: &Context<'_>,
        engine: &mut Engine,
        format: InputFormat,
        found: &mut Vec<Diagnostic>,
    ) {
        let name = &self.name;
        let capture = self.capture.as_ref();
        if let Some(request) = self.request.as_ref().filter(|_| self.check_request) {
            let asked = ctx.protocol.version;
            for d in input_findings(ctx.schemas, request, asked, name) {
                engine.report(d, found);
            }
            // A capture's request, held to what `serve` holds any request a client sends
            // to, and the next one on a thread to what the stream before it left.
            if capture.is_some() {
                for d in crate::check::request::sent_findings(request, asked, name) {
                    engine.report(d, found);
                }
            }
            if let Some(previous) = capture.and_then(|c| c.previous.as_deref()) {
                for d in crate::check::request::next_turn_findings(request, previous, name) {
                    engine.report(d, found);
                }
            }
        }
        if let Some(capture) = capture {
            if let Some(problem) = capture
                .request_problem
                .as_ref()
                .filter(|_| self.check_request)
            {
                engine.report(crate::check::request::unreadable_body(name, problem), found);
            }
            if let Some(d) = capture_findings(name, capture, format) {
                engine.report(d, found);
            }
            // What `run` holds a live answer to; an exchange the proxy recorded says it in
            // its findings instead.
            if let Some(request) = &capture.request {
                engine.hold_run_ids(request);
            }
        }
    }

    /// What is found once the stream was read: a connection the browser lost (unless the
    /// reading was `stopped` or the stream cut by the side that recorded it), and what only
    /// the end tells left unsaid of a stream cut or stopped.
    pub fn after(&self, engine: &mut Engine, stopped: bool, found: &mut Vec<Diagnostic>) {
        if let Some(lost) = self
            .lost
            .as_ref()
            .filter(|_| !stopped && self.cut.is_none())
        {
            let d = connection_lost(&self.name, lost, engine.known_events());
            engine.report_cut(d, found);
        }
        if stopped || self.cut.is_some() {
            engine.stopped_early();
        }
        if self.no_stream {
            // Said where it was recorded: its status, or a body that was no event stream.
            engine.cut_short();
        }
    }
}

/// What a browser capture holds about the response its stream came in, as `run` would
/// report it of a live one: a status that is no success (`transport/http-status`), else a
/// type that is no event stream's (`transport/content-type`). `format` is how the body reads.
pub fn capture_findings(
    name: &Arc<str>,
    capture: &CaptureEntry,
    format: InputFormat,
) -> Option<Diagnostic> {
    match capture.failed_status() {
        Some((status, reason)) => Some(status_finding(
            name,
            status,
            &read::answered(status, reason),
        )),
        None => {
            let answered = capture.declared;
            match (capture.accepted.first(), answered) {
                (Some(&asked), Some(answered)) if !capture.accepted.contains(&answered) => {
                    Some(not_negotiated(name, asked, answered))
                }
                _ => capture
                    .other_type
                    .as_deref()
                    .map(|declared| content_type_finding(name, declared, format)),
            }
        }
    }
}

/// What a browser capture holds of its response that `check` fails its stream for (see
/// [`capture_findings`]: its errors' messages), and the browser's word that its read failed,
/// as said to whoever takes the stream's events alone: none when there is nothing.
pub fn capture_said(name: &Arc<str>, capture: &CaptureEntry, format: InputFormat) -> Vec<String> {
    let found = capture_findings(name, capture, format)
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message);
    let failed = capture.failure.as_ref().map(|failure| {
        if read::har::stopped_by_page(failure) {
            format!("the page stopped reading the response ({failure}): the stream was cut there")
        } else {
            format!("the browser's read of the response failed ({failure})")
        }
    });
    found.into_iter().chain(failed).collect()
}

/// A stream answered in another transport than the request asked for (protobuf to `Accept:
/// text/event-stream`, or the reverse): `run`, the proxy and a browser capture's check say it
/// alike.
pub fn not_negotiated(name: &Arc<str>, asked: InputFormat, answered: InputFormat) -> Diagnostic {
    let rule = RuleId::TransportNotNegotiated;
    let severity = rule.rule().default.severity().unwrap_or(Severity::Warning);
    let message = format!(
        "the request asked for `{}` (its Accept header), and the agent answered `{}`; the body \
         is checked as that",
        read::transport_content_type(asked),
        read::transport_content_type(answered)
    );
    Diagnostic::whole_input(rule, severity, name.clone(), message).with_help(
        "pick the encoder from the request's Accept header (the official EventEncoder does, \
         given `accept`)",
    )
}

/// A browser capture's stream whose response has a status that is no success: a client
/// reads no events from it (the official client throws before it reads the body), as `run`
/// reports for a live agent.
fn status_finding(name: &Arc<str>, status: u16, answered: &str) -> Diagnostic {
    let (what, help) = if status < 400 {
        (
            "a redirect",
            "the browser follows a redirect itself: the entry it led to holds the stream the \
             client read, and the events of this one were never read",
        )
    } else {
        (
            "an error",
            "the client read none of this stream's events: it failed on the status. See the \
             agent's logs for why it answered so and streamed anyway",
        )
    };
    let rule = RuleId::TransportHttpStatus;
    let severity = rule.rule().default.severity().unwrap_or(Severity::Error);
    let message = format!(
        "the agent answered {answered}, {what}, with an AG-UI stream: a client reads no events \
         from a response that is no success; the events are checked as they came"
    );
    Diagnostic::whole_input(rule, severity, name.clone(), message).with_help(help)
}

/// A browser capture's stream whose response the browser says failed to be read to its end
/// (`failure`, as `_failureText` holds it), after `events` events: the cut `run` says of a
/// live one as `transport/connection-lost`.
fn connection_lost(name: &Arc<str>, failure: &str, events: u64) -> Diagnostic {
    let rule = RuleId::TransportConnectionLost;
    let severity = rule.rule().default.severity().unwrap_or(Severity::Error);
    let events = crate::text::plural(events, "event");
    let message = format!(
        "the browser's read of the response failed ({failure}) after {events}, before the \
         response ended"
    );
    Diagnostic::whole_input(rule, severity, name.clone(), message)
        .with_help("the agent, or a proxy in front of it, ended the response early: see its logs")
}

/// A browser capture's stream whose response was declared as something else than an event
/// stream (`transport/content-type`, as `run` reports it): proxies and browsers buffer what
/// is not declared one, and a client picks its parser by the type.
fn content_type_finding(name: &Arc<str>, declared: &str, format: InputFormat) -> Diagnostic {
    let what = match format {
        InputFormat::Proto => "protobuf frames",
        InputFormat::Sse => "SSE",
        InputFormat::Jsonl => {
            "JSON lines, which no AG-UI client reads over HTTP (its transports are SSE and \
             protobuf frames)"
        }
        InputFormat::Json => {
            "JSON, which no AG-UI client reads over HTTP (its transports are SSE and protobuf \
             frames)"
        }
    };
    let rule = RuleId::TransportContentType;
    let severity = rule.rule().default.severity().unwrap_or(Severity::Error);
    let message = format!(
        "the response's Content-Type is `{declared}`, not an event stream's (`text/event-stream`, \
         or `{}`); the body reads as {what} and is checked as such",
        proto::CONTENT_TYPE
    );
    Diagnostic::whole_input(rule, severity, name.clone(), message).with_help(
        "send the stream with `Content-Type: text/event-stream` (or the protobuf type for \
         protobuf frames): clients pick their parser by it, and proxies buffer what is not \
         declared an event stream",
    )
}
