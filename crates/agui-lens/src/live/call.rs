//! Checking a live agent: one POST, the response checked as it arrives, and what went wrong
//! on the way reported as `transport/*` findings. Shared by `run` and `test`.

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::live::http::{self, Cut, PostError, Transport, display_url, seconds};
use crate::live::request::AgentInput;
use agui_lens_core::check::catalog::RuleId;
use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::{Context, Engine, RunFailures, Stats};
use agui_lens_core::check::parse::excerpt;
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::check::version::VersionUse;
use agui_lens_core::protocol::event::{Event, EventType};
use agui_lens_core::read::{self, Batch, ReadOptions, describe_non_stream};
use agui_lens_core::report::plural;

/// How much of a body that is not a stream is read, to show and record.
pub(crate) const ERROR_BODY_LEN: u64 = 64 * 1024;

/// One call to make.
pub struct Call<'a> {
    pub url: &'a str,
    /// Extra headers, expanded. Never printed.
    pub headers: &'a [(String, String)],
    pub input: &'a AgentInput,
    pub idle_timeout: Duration,
    pub timeout: Option<Duration>,
    /// The caller judges the status itself (a suite case's `expect_status`), and
    /// `transport/http-status` is not reported.
    pub judge_status: bool,
    /// The input breaks its schema and is sent on purpose (`run --send-invalid`): a refusal
    /// of it as a bad request (400, 422) is what an agent may answer, no
    /// `transport/http-status`.
    pub invalid_sent: bool,
    /// The transport asked for.
    pub accept: Transport,
}

/// Sees each event once checked: the event, its bytes, the time since the call began.
pub type EventTap<'a> = dyn FnMut(&Event, &[u8], Duration) + 'a;

/// What to do with the response besides checking it.
#[derive(Default)]
pub struct Taps<'a> {
    /// Each event as one JSONL line, flushed after every batch.
    pub record: Option<&'a mut dyn Write>,
    /// The body's bytes as they arrive.
    pub record_raw: Option<Box<dyn Write + Send>>,
    /// Each event once checked, with its bytes and the time since the call began.
    pub on_event: Option<&'a mut EventTap<'a>>,
}

/// How the exchange went.
#[derive(Clone, Debug, Default)]
pub struct Exchange {
    /// None when no response head arrived.
    pub status: Option<u16>,
    pub reason: Option<&'static str>,
    pub content_type: Option<String>,
    /// The start of a body that was not checked as a stream (an error page), abbreviated.
    pub body_excerpt: Option<String>,
    pub first_event: Option<Duration>,
    pub elapsed: Duration,
    /// Body bytes received.
    pub bytes: u64,
    pub stats: Stats,
    /// Events of a type AG-UI defines: none means the body was no stream at all.
    pub known_events: u64,
    /// The user asked to stop (Ctrl-C, SIGTERM) before the response ended: what arrived was
    /// checked, but not what only its end can tell.
    pub interrupted: bool,
    /// The protocol versions the stream was judged by, and why.
    pub protocol: Vec<VersionUse>,
    /// Runs that ended in RUN_ERROR: a stream the protocol allows, from an agent that failed.
    pub failures: RunFailures,
    /// Writing a recording failed part way (a full disk): the recording holds the stream in
    /// part.
    pub record_failed: Option<RecordFailure>,
}

/// A recording that could not be written to its end.
#[derive(Clone, Debug)]
pub struct RecordFailure {
    /// The body as it came (`--record-raw`), whose failure stopped the read; else the events,
    /// which were checked on to the stream's end.
    pub raw: bool,
    pub message: String,
}

impl Exchange {
    /// How the agent's runs failed, when one ended in RUN_ERROR: no finding, but what a user
    /// calling an agent wants to know.
    pub fn run_failed(&self) -> Option<String> {
        self.failures.said()
    }
}

/// Why a call could not be checked.
#[derive(Debug)]
pub enum LiveError {
    /// No HTTP exchange happened: a bad URL, an unknown host, a refused connection.
    Unreachable(String),
    /// Writing the report or a recording failed.
    Failed(anyhow::Error),
}

impl From<io::Error> for LiveError {
    fn from(e: io::Error) -> Self {
        LiveError::Failed(e.into())
    }
}

/// Makes the call and checks the response as it arrives, handing diagnostics to `emit` batch
/// by batch. `name` is what diagnostics say the input is.
pub fn check_call(
    ctx: &Context<'_>,
    call: &Call<'_>,
    name: Arc<str>,
    mut taps: Taps<'_>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
) -> Result<Exchange, LiveError> {
    let started = Instant::now();
    // The client holds the state it sent: deltas apply to it.
    let ctx = &Context {
        protocol: ProtocolOptions {
            state: call
                .input
                .value
                .get("state")
                .filter(|s| !s.is_null())
                .cloned(),
            input: Some(Arc::clone(&call.input.value)),
            ..ctx.protocol.clone()
        },
        ..*ctx
    };
    let request = http::Request {
        url: call.url,
        headers: call.headers,
        body: &call.input.body,
        idle_timeout: call.idle_timeout,
        timeout: call.timeout,
        stop: agui_lens_core::stop::requested,
        accept: call.accept,
    };
    let mut exchange = Exchange::default();
    let mut found = Vec::new();
    let mut response = match http::post(&request, taps.record_raw.take()) {
        Ok(response) => response,
        Err(PostError::Unreachable(why)) => return Err(LiveError::Unreachable(why)),
        Err(PostError::Cut(cut)) => {
            let mut engine = Engine::new(ctx, name.clone(), Vec::new());
            match cut_finding(&name, &cut, None) {
                Some(d) => engine.report_cut(d, &mut found),
                None => {
                    exchange.interrupted = true;
                    engine.stopped_early();
                }
            }
            return stop_early(engine, &mut found, emit, exchange, 0, started);
        }
    };
    exchange.status = Some(response.status);
    exchange.reason = response.reason;
    exchange.content_type = response.content_type.clone();
    let progress = response.progress.clone();
    let answered = Transport::of(response.content_type.as_deref());

    if !(200..300).contains(&response.status) {
        // No stream is expected: show the start of the body, which usually says why.
        let mut body = Vec::new();
        let _ = (&mut response.body)
            .take(ERROR_BODY_LEN)
            .read_to_end(&mut body);
        exchange.body_excerpt = body_excerpt(&body);
        let mut engine = Engine::new(ctx, name.clone(), Vec::new());
        let refused_as_invalid =
            call.invalid_sent && agui_lens_core::check::request::refuses_an_input(response.status);
        if !call.judge_status && !refused_as_invalid {
            let d = status_finding(
                &name,
                (response.status, response.reason),
                response.location.as_deref(),
                exchange.body_excerpt.clone(),
            );
            engine.report(d, &mut found);
        }
        engine.cut_short();
        return stop_early(
            engine,
            &mut found,
            emit,
            exchange,
            progress.bytes(),
            started,
        );
    }

    let read = ReadOptions {
        format: answered.map(Transport::format),
        max_line: ctx.max_line,
        entry: None,
    };
    let content_type = response.content_type.clone();
    let opened = read::open_reader(name.clone(), Box::new(response.body), None, &read);
    let mut opened = match opened {
        Ok(opened) => opened,
        Err(err) => {
            // Nothing could be framed: the response stopped before its first line.
            let mut engine = Engine::new(ctx, name.clone(), Vec::new());
            if let Some(message) = progress.record_error() {
                // The read stopped because the raw recording could not be written: no cut of
                // the agent's.
                exchange.record_failed = Some(raw_failure(message));
                engine.stopped_early();
            } else {
                let cut = progress
                    .cut()
                    .unwrap_or_else(|| Cut::ConnectionLost(format!("{err:#}")));
                match cut_finding(&name, &cut, Some((progress.bytes(), 0))) {
                    Some(d) => engine.report_cut(d, &mut found),
                    None => {
                        exchange.interrupted = true;
                        engine.stopped_early();
                    }
                }
            }
            return stop_early(
                engine,
                &mut found,
                emit,
                exchange,
                progress.bytes(),
                started,
            );
        }
    };
    let head = std::mem::take(&mut opened.head);
    let mut engine = Engine::new(ctx, name.clone(), head.clone());
    match answered {
        Some(transport) if transport != call.accept => {
            engine.report(not_negotiated(&name, call.accept, transport), &mut found);
        }
        Some(_) => {}
        None => {
            let looks_like = Transport::of_format(opened.format);
            let d = content_type_finding(&name, content_type.as_deref(), &head, looks_like);
            engine.report(d, &mut found);
            if looks_like.is_none() {
                exchange.body_excerpt = body_excerpt(&head);
                engine.cut_short();
                return stop_early(
                    engine,
                    &mut found,
                    emit,
                    exchange,
                    progress.bytes(),
                    started,
                );
            }
        }
    }

    let mut batch = Batch::default();
    let mut pending = Vec::new();
    let mut events = 0u64;
    let mut run_started_seen = false;
    let mut record_error: Option<io::Error> = None;
    let mut first_event = None;
    loop {
        match opened.reader.next_batch(&mut batch) {
            Ok(true) => {
                engine.check_batch_with(&batch, &mut found, |event, raw| {
                    let at = started.elapsed();
                    first_event.get_or_insert(at);
                    events += 1;
                    if let Some(record) = taps.record.as_mut()
                        && record_error.is_none()
                        && let Err(e) = write_event(&mut **record, event, raw)
                    {
                        record_error = Some(e);
                    }
                    if let Some(on_event) = taps.on_event.as_mut() {
                        on_event(event, raw, at);
                    }
                    if !run_started_seen && event.kind == Some(EventType::RunStarted) {
                        run_started_seen = true;
                        pending.extend(id_mismatch(
                            (
                                call.input.thread_id.as_deref(),
                                call.input.run_id.as_deref(),
                            ),
                            event,
                            raw,
                        ));
                    }
                });
                for d in pending.drain(..) {
                    engine.report(d, &mut found);
                }
                if let Some(record) = taps.record.as_mut()
                    && record_error.is_none()
                    && let Err(e) = record.flush()
                {
                    record_error = Some(e);
                }
                emit(&found)?;
                found.clear();
            }
            Ok(false) => break,
            Err(err) => {
                if let Some(message) = progress.record_error() {
                    // The read stopped because the raw recording could not be written: what
                    // only the stream's end tells is not known, and no cut is the agent's.
                    exchange.record_failed = Some(raw_failure(message));
                    engine.stopped_early();
                    break;
                }
                let cut = progress.cut().unwrap_or_else(|| {
                    Cut::ConnectionLost(format!("reading the body failed: {err}"))
                });
                match cut_finding(&name, &cut, Some((progress.bytes(), events))) {
                    Some(d) => engine.report_cut(d, &mut found),
                    None => {
                        // Stopped by the user: the stream did not end, so what only its
                        // end could tell is not reported.
                        exchange.interrupted = true;
                        engine.stopped_early();
                    }
                }
                break;
            }
        }
    }
    // (A failure of the raw recording, which came after, says both recordings hold part of
    // the stream, and is kept.)
    if let Some(err) = record_error.filter(|_| exchange.record_failed.is_none()) {
        // Writing stopped there; the stream was checked on to its end.
        exchange.record_failed = Some(RecordFailure {
            raw: false,
            message: format!("writing the recording: {err}"),
        });
    }
    exchange.known_events = engine.known_events();
    exchange.protocol = engine.versions().to_vec();
    exchange.failures = engine.run_failures().clone();
    exchange.stats = engine.finish(&mut found);
    if exchange.known_events == 0 {
        // Frames that hold no AG-UI event are not counted as events beside `no-events`.
        exchange.stats.events = 0;
    }
    emit(&found)?;
    exchange.first_event = first_event;
    exchange.bytes = progress.bytes();
    exchange.elapsed = started.elapsed();
    Ok(exchange)
}

/// Ends a response that is not read as a stream, or no further: what the end tells (an open
/// run), then the counts. The caller has reported the reason (and said whether an empty
/// input is reported too: [`Engine::cut_short`], [`Engine::report_cut`]).
fn stop_early(
    engine: Engine<'_>,
    found: &mut Vec<Diagnostic>,
    emit: &mut dyn FnMut(&[Diagnostic]) -> io::Result<()>,
    mut exchange: Exchange,
    bytes: u64,
    started: Instant,
) -> Result<Exchange, LiveError> {
    exchange.protocol = engine.versions().to_vec();
    exchange.stats = engine.finish(found);
    emit(found)?;
    exchange.bytes = bytes;
    exchange.elapsed = started.elapsed();
    Ok(exchange)
}

fn raw_failure(message: String) -> RecordFailure {
    RecordFailure {
        raw: true,
        message: format!("writing the recording of the body: {message}"),
    }
}

/// One event as a JSONL line: as it arrived, unless it spans lines (SSE data may).
fn write_event(out: &mut dyn Write, event: &Event, raw: &[u8]) -> io::Result<()> {
    if raw.contains(&b'\n') || raw.contains(&b'\r') {
        serde_json::to_writer(&mut *out, &*event.whole_value()).map_err(io::Error::other)?;
    } else {
        out.write_all(raw)?;
    }
    out.write_all(b"\n")
}

fn whole(name: &Arc<str>, rule: RuleId, message: String) -> Diagnostic {
    let severity = rule.rule().default.severity().unwrap_or(Severity::Error);
    Diagnostic::whole_input(rule, severity, name.clone(), message)
}

/// A transport failure, as a finding: none for a stop the user asked for. `so_far` is
/// (bytes, events) once the body had begun.
pub(crate) fn cut_finding(
    name: &Arc<str>,
    cut: &Cut,
    so_far: Option<(u64, u64)>,
) -> Option<Diagnostic> {
    let after = match so_far {
        Some((bytes, events)) => format!(
            "after {} and {}",
            plural(bytes, "byte"),
            plural(events, "event")
        ),
        None => "before the response head arrived".to_owned(),
    };
    Some(match cut {
        Cut::Interrupted => return None,
        Cut::IdleTimeout(d) => whole(
            name,
            RuleId::TransportIdleTimeout,
            format!(
                "nothing arrived for {} {after} (--idle-timeout)",
                seconds(*d)
            ),
        )
        .with_help(
            "an agent that works for long should keep the stream alive, e.g. with SSE comment \
             lines (`: keep-alive`); or raise --idle-timeout",
        ),
        Cut::Timeout(d) => whole(
            name,
            RuleId::TransportTimeout,
            format!(
                "the response was still going after {} {after} (--timeout)",
                seconds(*d)
            ),
        )
        .with_help("raise --timeout if runs this long are expected"),
        Cut::ConnectionLost(why) => whole(
            name,
            RuleId::TransportConnectionLost,
            format!("{why} {after}, before the response ended"),
        )
        .with_help(
            "the agent, or a proxy in front of it, ended the response early: see its logs \
             (agui-lens does not reconnect, which would run the agent again)",
        ),
    })
}

/// An answer that is no success: `status` with its reason, where a redirect points, the
/// start of the body.
pub(crate) fn status_finding(
    name: &Arc<str>,
    (status, reason): (u16, Option<&str>),
    location: Option<&str>,
    body: Option<String>,
) -> Diagnostic {
    let code = status;
    let status = format!(
        "{status}{}",
        reason.map(|r| format!(" {r}")).unwrap_or_default()
    );
    let (message, help) = if code < 400 {
        let to = location
            .map(|l| format!(" to {}", display_url(l)))
            .unwrap_or_default();
        (
            format!("the agent answered {status}, a redirect{to}, which is not followed"),
            "POST to the URL the redirect names; a redirect to a login page means the request \
             was not authenticated (pass a token with -H 'Authorization: Bearer ${TOKEN}')",
        )
    } else {
        let help = match code {
            401 | 403 => {
                "the agent refused the credentials: pass them with -H 'Authorization: Bearer \
                 ${TOKEN}'"
            }
            404 | 405 => "check the URL: the agent's endpoint takes a POST",
            400..=499 => {
                "the agent refused the request; the body above usually names the field of the \
                 RunAgentInput it could not accept"
            }
            _ => "the agent failed before streaming; the body above and its logs say why",
        };
        (format!("the agent answered {status}"), help)
    };
    whole(name, RuleId::TransportHttpStatus, message)
        .with_help(help)
        .with_excerpt(body)
}

/// The agent answered in the other transport than the one asked for.
pub(crate) fn not_negotiated(name: &Arc<str>, asked: Transport, answered: Transport) -> Diagnostic {
    agui_lens_core::check::opened::not_negotiated(name, asked.format(), answered.format())
}

pub(crate) fn content_type_finding(
    name: &Arc<str>,
    content_type: Option<&str>,
    head: &[u8],
    looks_like: Option<Transport>,
) -> Diagnostic {
    let declared = match content_type {
        Some(ct) => format!(
            "the response's Content-Type is `{ct}`, not an event stream's (`text/event-stream`, \
             or `application/vnd.ag-ui.event+proto`)"
        ),
        None => "the response has no Content-Type (an event stream is `text/event-stream`)".into(),
    };
    let (message, help) = if let Some(transport) = looks_like {
        let (what, help) = match transport {
            Transport::Sse => (
                "SSE",
                "send the stream with `Content-Type: text/event-stream`, or proxies may buffer it",
            ),
            Transport::Proto => (
                "protobuf frames",
                "send protobuf frames with `Content-Type: application/vnd.ag-ui.event+proto`: \
                 clients pick their parser by it",
            ),
        };
        (
            format!("{declared}; the body looks like {what} and is checked as such"),
            help,
        )
    } else {
        (
            format!(
                "{declared}, and {}: {}",
                agui_lens_core::check::recorded::BODY_IS_NO_STREAM,
                describe_non_stream(head)
            ),
            "check the URL and the credentials: a page in place of the stream usually comes \
             from a login or error page in front of the agent",
        )
    };
    let mut d = whole(name, RuleId::TransportContentType, message).with_help(help);
    if looks_like.is_none() {
        d = d.with_excerpt(body_excerpt(head));
    }
    d
}

/// RUN_STARTED must name the thread and run the input sent.
pub(crate) fn id_mismatch(
    (thread_id, run_id): (Option<&str>, Option<&str>),
    event: &Event,
    raw: &[u8],
) -> Option<Diagnostic> {
    agui_lens_core::check::engine::run_id_mismatch((thread_id, run_id), event)
        .map(|d| d.with_excerpt(excerpt(raw)))
}

/// The start of a body on one line, for a diagnostic's excerpt.
pub(crate) fn body_excerpt(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let flat: Vec<&str> = text.split_whitespace().collect();
    excerpt(flat.join(" ").as_bytes())
}
