//! `agui-lens proxy --upstream URL`: sits between a real frontend and a real agent. Each
//! request is forwarded to URL as it came (method, body, headers but the hop-by-hop ones) and
//! its response streamed back as it arrives, chunk by chunk, unbuffered and never retried.
//! Beside the forwarding, the request is held to the `request/*` rules (the next turn of a
//! thread to what the previous stream left the client holding) and the stream to every
//! `check` rule, live; each exchange can be recorded (the request, the raw body, the events,
//! the findings; never a header, so never a credential) to replay with `serve` or check again.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::ArgMatches;
use serde_json::Value;

use super::Outcome;
use super::check::{Settings, settings, use_color};
use super::serve::{Buffer, CORS, Request, fixed, fold, gone, read_request};
use crate::cli::ProxyArgs;
use crate::live::call::{
    ERROR_BODY_LEN, body_excerpt, content_type_finding, cut_finding, id_mismatch, not_negotiated,
    status_finding,
};
use crate::live::http::{Cut, Transport};
use agui_lens_core::check::catalog::{Levels, RuleId};
use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::Stats;
use agui_lens_core::check::opened::check_answer_to;
use agui_lens_core::check::request::{input_findings, next_turn_findings, sent_findings};
use agui_lens_core::check::rules::protocol::{DEFAULT_STATE_LIMIT, ProtocolOptions};
use agui_lens_core::check::stream::parse_event;
use agui_lens_core::fold::Folded;
use agui_lens_core::protocol::event::EventType;
use agui_lens_core::read::{self, Batch, DEFAULT_MAX_LINE, InputFormat, ReadOptions};
use agui_lens_core::report::Format;

/// Headers that belong to one connection, not to the request or response: never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "content-length",
    "te",
    "trailer",
    "upgrade",
];

/// What a failure to reach the agent says.
const UNREACHABLE: &str = "the upstream could not be reached";
/// How an exchange that could not be recorded says so (a full disk): forwarded, not recorded.
const RECORDING_INTO: &str = "recording into ";

/// What the connection threads share.
struct Shared {
    upstream: String,
    /// How the upstream is called. Each exchange has an agent of its own, so that a client's
    /// hang-up can hang up on the upstream too (`ureq::Agent::shutdown` ends its connections).
    config: ureq::config::Config,
    settings: Settings,
    asked: Option<agui_lens_core::protocol::version::Version>,
    record: Option<PathBuf>,
    /// The next number to try for an exchange's folder under `record`.
    next_slot: std::sync::atomic::AtomicU64,
    /// The folders of exchanges being recorded, until each is recorded whole: one still here
    /// at a stop is finished by the proxy itself ([`finish_abandoned`]).
    open_slots: Mutex<Vec<PathBuf>>,
    /// Requests seen, and per thread what a client that applied its last stream holds, or
    /// which exchange is forwarding its stream.
    threads: Mutex<(u64, HashMap<String, Turn>)>,
    to_main: Mutex<mpsc::Sender<Note>>,
    /// Requests held back for their thread's turn when the proxy was stopped, and never sent.
    not_forwarded: std::sync::atomic::AtomicU64,
    /// Exchanges whose client went away before the stream's end: checked only as far as it
    /// came, which the report says.
    cut_by_clients: std::sync::atomic::AtomicU64,
    /// Exchanges the proxy's own stop cut before the stream's end: not checked whole, which
    /// the report says as an interruption (its recording's `cut.txt` says the same).
    cut_by_stop: std::sync::atomic::AtomicU64,
    /// What is known of an exchange under way before its end, by its number (a failed status,
    /// forwarded with the head): said at its end with the rest, or at a stop the exchange does
    /// not outlive, by whichever takes it first.
    unsettled: Mutex<HashMap<u64, Vec<Diagnostic>>>,
}

/// Where a thread stands.
enum Turn {
    /// Exchange N is forwarding a stream of the thread.
    UnderWay(u64),
    /// What a client that applied the thread's last stream holds.
    Held(Folded),
}

enum Note {
    Said(String),
    /// The proxy could not do its job for an exchange (the agent could not be reached).
    Failed(String),
    /// An exchange was forwarded, but could not be recorded whole (a full disk).
    Unrecorded(String),
    Findings(Vec<Diagnostic>),
    /// The frames and events of a stream checked to its end.
    Counted {
        frames: u64,
        events: u64,
    },
    /// An exchange ended (its response forwarded whole, or cut).
    Done,
}

impl Shared {
    fn tell(&self, note: Note) {
        if let Ok(to_main) = self.to_main.lock() {
            let _ = to_main.send(note);
        }
    }

    fn leveled(&self, findings: Vec<Diagnostic>) -> Vec<Diagnostic> {
        leveled(&self.settings.levels, findings)
    }
}

/// The findings at the severity the settings give their rules, without those turned off.
fn leveled(levels: &Levels, findings: Vec<Diagnostic>) -> Vec<Diagnostic> {
    findings
        .into_iter()
        .filter_map(|mut d| {
            d.severity = levels.severity(d.rule)?;
            Some(d)
        })
        .collect()
}

pub fn run(args: &ProxyArgs, matches: &ArgMatches) -> Result<Outcome> {
    let lower = args.upstream.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        bail!(
            "--upstream {} is not an http:// or https:// URL",
            args.upstream
        );
    }
    let settings = settings(&args.rules, matches, None, None)?;
    let deny_warnings = settings.deny_warnings;
    if let Some(report) = &args.report {
        let read = super::settings_files(&args.rules);
        let read: Vec<_> = read.iter().map(|(p, by)| (p.as_path(), *by)).collect();
        super::refuse_output_over_input(report, "--report", &read)?;
        super::refuse_report_over_other(report)?;
        let name = format!("proxy {}", args.upstream);
        super::report_under_way(report, args.format, &name)?;
    }
    if let Some(dir) = &args.record {
        super::create_folders(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let listener = TcpListener::bind(&args.listen)
        .with_context(|| format!("listening on {}", args.listen))
        .map_err(|err| {
            let name = format!("proxy {}", args.upstream);
            super::report_not_begun(args.report.as_deref(), args.format, &name, err)
        })?;
    let addr = listener.local_addr()?;
    crate::signals::catch();
    {
        let mut out = super::ReportOut::default();
        writeln!(out, "listening on http://{addr}")?;
        out.flush()?;
    }
    say!(
        "proxy: forwarding to {}",
        crate::live::http::display_url(&args.upstream)
    );
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build();
    let (to_main, notes) = mpsc::channel();
    let shared = Arc::new(Shared {
        upstream: args.upstream.clone(),
        config,
        settings,
        asked: args.rules.protocol,
        record: args.record.clone(),
        next_slot: std::sync::atomic::AtomicU64::new(
            args.record.as_deref().map_or(1, after_recorded),
        ),
        open_slots: Mutex::new(Vec::new()),
        threads: Mutex::new((0, HashMap::new())),
        to_main: Mutex::new(to_main),
        not_forwarded: std::sync::atomic::AtomicU64::new(0),
        cut_by_clients: std::sync::atomic::AtomicU64::new(0),
        cut_by_stop: std::sync::atomic::AtomicU64::new(0),
        unsettled: Mutex::new(HashMap::new()),
    });
    let mut live = crate::render::reporter(
        Format::Human,
        Box::new(super::ReportOut::default()),
        use_color(args.color),
        false,
    );
    let mut found: Vec<Diagnostic> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut unrecorded: Vec<String> = Vec::new();
    let (mut errors, mut warnings) = (0u64, 0u64);
    let mut counted = Stats::default();
    let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acceptor = {
        let shared = Arc::clone(&shared);
        let stopping = Arc::clone(&stopping);
        thread::spawn(move || {
            let mut workers: Vec<thread::JoinHandle<()>> = Vec::new();
            for stream in listener.incoming() {
                if stopping.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    let shared = Arc::clone(&shared);
                    workers.push(thread::spawn(move || connection(stream, &shared)));
                }
                workers.retain(|w| !w.is_finished());
            }
            workers
        })
    };
    let mut done = false;
    let mut take = |note: Note, done: &mut bool| -> io::Result<()> {
        match note {
            Note::Said(line) => say!("{line}"),
            Note::Failed(line) => {
                say!("proxy: {line}");
                failures.push(line);
            }
            Note::Unrecorded(line) => {
                say!("proxy: {line}");
                unrecorded.push(line);
            }
            Note::Findings(batch) => {
                for d in batch {
                    live.diagnostic(&d)?;
                    match d.severity {
                        Severity::Error => errors += 1,
                        Severity::Warning => warnings += 1,
                        Severity::Note => {}
                    }
                    found.push(d);
                }
                live.flush()?;
            }
            Note::Counted { frames, events } => {
                counted.frames += frames;
                counted.events += events;
            }
            Note::Done => *done |= args.once,
        }
        Ok(())
    };
    while !done && !agui_lens_core::stop::requested() {
        if let Ok(note) = notes.recv_timeout(Duration::from_millis(50)) {
            take(note, &mut done)?;
        }
    }
    stopping.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = TcpStream::connect(addr);
    let workers = acceptor.join().unwrap_or_default();
    // Stopped, an exchange under way ends at its next piece and records what it has; one whose
    // agent stays silent is not waited for past the grace.
    const GRACE: Duration = Duration::from_secs(2);
    let stopped_at = Instant::now();
    let mut left = 0u64;
    for worker in workers {
        while !worker.is_finished()
            && (!agui_lens_core::stop::requested() || stopped_at.elapsed() < GRACE)
        {
            thread::sleep(Duration::from_millis(10));
        }
        if worker.is_finished() {
            let _ = worker.join();
        } else {
            left += 1;
        }
    }
    // An exchange whose stream was not read to its end holds no verdict: the report says
    // so (it was a clean report of a hung agent).
    let unfinished = (left > 0).then(|| {
        format!(
            "interrupted by {}: {} left unfinished: the agent sent nothing more within {} s of \
             the stop, and its stream was not checked to its end",
            agui_lens_core::stop::signal_name(),
            agui_lens_core::text::plural(left, "exchange"),
            GRACE.as_secs(),
        )
    });
    // What an exchange that did not reach its end was found to break so far counts: an agent
    // that answered 500 and held the stream open past the stop was "0 errors".
    let unsettled =
        std::mem::take(&mut *shared.unsettled.lock().unwrap_or_else(|e| e.into_inner()));
    for (_, known) in unsettled {
        shared.tell(Note::Findings(known));
    }
    if unfinished.is_some() {
        let open =
            std::mem::take(&mut *shared.open_slots.lock().unwrap_or_else(|e| e.into_inner()));
        for at in open {
            if let Err(err) = finish_abandoned(&at, GRACE) {
                say!("proxy: recording into {}: {err:#}", at.display());
            }
        }
    }
    if let Some(unfinished) = &unfinished {
        say!(
            "proxy: {unfinished}{}",
            if args.record.is_some() {
                "; the body it had sent is in the recording"
            } else {
                ""
            }
        );
    }
    while let Ok(note) = notes.try_recv() {
        take(note, &mut done)?;
    }
    let mut unfinished = unfinished;
    // Nor does one the stop cut as its stream came (it was reported as any other).
    let stopped = shared.cut_by_stop.load(std::sync::atomic::Ordering::SeqCst);
    if stopped > 0 {
        let why = format!(
            "interrupted by {}: {} cut by the stop before the stream's end, checked only as \
             far as it came",
            agui_lens_core::stop::signal_name(),
            agui_lens_core::text::plural(stopped, "exchange"),
        );
        say!("proxy: {why}");
        unfinished = Some(match unfinished {
            Some(left) => format!("{left}; {why}"),
            None => why,
        });
    }
    live.flush()?;
    drop(live);
    let requests = shared.threads.lock().unwrap_or_else(|e| e.into_inner()).0;
    // A request that could not be forwarded, or was held back at the stop, is counted there,
    // not also as forwarded.
    let held_back = shared
        .not_forwarded
        .load(std::sync::atomic::Ordering::SeqCst);
    let forwarded = requests.saturating_sub(failures.len() as u64 + held_back);
    // Cut by their clients, exchanges were checked only as far as they came: said, beside
    // the findings (the client's going is no fault of the agent's).
    let cut = match shared
        .cut_by_clients
        .load(std::sync::atomic::Ordering::SeqCst)
    {
        0 => None,
        n => Some(format!(
            "{} cut by the client before the stream's end: checked only as far as it came",
            agui_lens_core::text::plural(n, "exchange")
        )),
    };
    say!(
        "proxy: {} forwarded{}: {}, {}{}{}{}",
        agui_lens_core::text::plural(forwarded, "request"),
        cut.as_ref().map(|c| format!(" ({c})")).unwrap_or_default(),
        agui_lens_core::text::plural(errors, "error"),
        agui_lens_core::text::plural(warnings, "warning"),
        if failures.is_empty() {
            String::new()
        } else {
            format!(
                "; {} could not be forwarded",
                agui_lens_core::text::plural(failures.len() as u64, "request")
            )
        },
        if unrecorded.is_empty() {
            String::new()
        } else {
            format!(
                "; {} could not be recorded whole",
                agui_lens_core::text::plural(unrecorded.len() as u64, "exchange")
            )
        },
        match held_back {
            0 => String::new(),
            n => format!(
                "; {} held back at the stop, not forwarded",
                agui_lens_core::text::plural(n, "request")
            ),
        }
    );
    // An exchange that could not be recorded whole fails the run as one not forwarded does:
    // a recording asked for and not made is no pass.
    let failure = (!failures.is_empty() || !unrecorded.is_empty()).then(|| {
        failures
            .iter()
            .chain(&unrecorded)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ")
    });
    if let Some(path) = &args.report {
        let stats = Stats {
            errors,
            warnings,
            ..counted
        };
        let bytes = report(
            args.format,
            &found,
            stats,
            (failure.clone(), unfinished, cut),
            true,
        )?;
        // Looked at again: a file may have been put there while the server ran.
        super::refuse_report_over_other(path)?;
        super::write_bytes(path, &bytes)?;
    }
    Ok(if failure.is_some() {
        Outcome::Failed
    } else if errors > 0 || (deny_warnings && warnings > 0) {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// Findings written in a report format, with what could not be forwarded as the input's
/// failure.
fn report(
    format: Format,
    found: &[Diagnostic],
    stats: Stats,
    (failure, unfinished, cut): (Option<String>, Option<String>, Option<String>),
    say_stop: bool,
) -> Result<Vec<u8>> {
    use agui_lens_core::report::{FileSummary, Summary};
    let buffer = Buffer::default();
    {
        let name: Arc<str> = Arc::from("proxy");
        let mut file = match (failure, &unfinished) {
            (failure, None) => FileSummary::checked(name.clone(), stats, failure),
            (Some(failure), Some(unfinished)) => FileSummary::checked(
                name.clone(),
                stats,
                Some(format!("{unfinished}; {failure}")),
            ),
            (None, Some(unfinished)) => {
                FileSummary::checked(name.clone(), stats, Some(unfinished.clone()))
            }
        };
        file.interrupted = unfinished.is_some();
        file.notes.extend(cut);
        let mut summary = Summary::default();
        summary.add(&file);
        // Stopped by a signal (exit 130, 143): no format calls the run a success.
        // (Not in an exchange's recorded findings: `cut.txt` says the stop there, and
        // `check DIR` reads those findings back as findings only.)
        summary.stopped_by =
            (say_stop && agui_lens_core::stop::requested()).then(agui_lens_core::stop::signal_name);
        let mut reporter = crate::render::reporter(format, Box::new(buffer.clone()), false, false);
        reporter.start_run(1)?;
        reporter.start_file(&name)?;
        for d in found {
            reporter.diagnostic(d)?;
        }
        reporter.end_file(&file)?;
        reporter.finish(&summary)?;
        reporter.flush()?;
        // The human report says why the run failed, as stderr did (the other formats carry
        // it as the input's failure).
        if let (Format::Human, Some(failure)) = (format, &file.failure) {
            let mut out = buffer.clone();
            writeln!(
                out,
                "error: {}",
                agui_lens_core::report::human::visible(failure)
            )?;
        }
    }
    let bytes = std::mem::take(&mut *buffer.0.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(bytes)
}

fn connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    match exchange(stream, shared) {
        Ok(false) => {}
        Ok(true) => shared.tell(Note::Done),
        Err(err) => {
            let line = format!("{err:#}");
            shared.tell(if line.contains(UNREACHABLE) {
                Note::Failed(line)
            } else if line.starts_with(RECORDING_INTO) {
                Note::Unrecorded(line)
            } else {
                Note::Said(format!("proxy: {line}"))
            });
            shared.tell(Note::Done);
        }
    }
}

/// A body read a piece at a time from a channel: the stream as the checker sees it.
struct Pieces(
    mpsc::Receiver<Vec<u8>>,
    Vec<u8>,
    usize,
    /// Set when the forwarding ended before the stream did.
    CutBy,
);

/// What ended a forwarding before the stream's end, if anything did: the client that went
/// away, or the proxy's own stop (Ctrl-C, SIGTERM). Either way the stream's end is not the
/// agent's. Shared between the forwarding and the checker.
#[derive(Clone, Default)]
struct CutBy(Arc<std::sync::atomic::AtomicU8>);

impl CutBy {
    const CLIENT: u8 = 1;
    const STOP: u8 = 2;

    fn set(&self, by: u8) {
        self.0.store(by, std::sync::atomic::Ordering::SeqCst);
    }

    /// What cut the stream, in words; `None` while nothing did.
    fn why(&self) -> Option<&'static str> {
        match self.0.load(std::sync::atomic::Ordering::SeqCst) {
            Self::CLIENT => Some("the client went away"),
            Self::STOP => Some("the proxy was stopped"),
            _ => None,
        }
    }

    fn client_went_away(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst) == Self::CLIENT
    }
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.2 == self.1.len() {
            match self.0.recv() {
                Ok(piece) => {
                    self.1 = piece;
                    self.2 = 0;
                }
                // Read no further, as a stop does: what came is checked, not as a whole
                // stream (its end is not the agent's).
                Err(_) => {
                    return match self.3.why() {
                        Some(why) => Err(agui_lens_core::stop::reading_stopped(why)),
                        None => Ok(0),
                    };
                }
            }
        }
        let n = buf.len().min(self.1.len() - self.2);
        buf[..n].copy_from_slice(&self.1[self.2..self.2 + n]);
        self.2 += n;
        Ok(n)
    }
}

/// Forwards one request and its response; true for an agent call (a POST), the exchange
/// `--once` waits for. Another request (a readiness probe's GET) is forwarded, not recorded;
/// a closed connection or a CORS preflight (answered here) is not forwarded.
fn exchange(mut client: TcpStream, shared: &Shared) -> Result<bool> {
    let Some(request) = read_request(&client)? else {
        return Ok(false);
    };
    if request.method == "OPTIONS" {
        write!(
            client,
            "HTTP/1.1 204 No Content\r\n{CORS}Connection: close\r\n\r\n"
        )?;
        return Ok(false);
    }
    let n = {
        let mut guard = shared.threads.lock().unwrap_or_else(|e| e.into_inner());
        guard.0 += 1;
        guard.0
    };
    let started = Instant::now();
    let agent_call = request.method == "POST";
    // Its folder, taken as it arrives (so folders follow the order requests came in), and the
    // request in it at once: whatever happens next, what was sent is kept.
    // A recording that cannot be written (a full disk) is given up, said, and fails the run;
    // the exchange is forwarded whole all the same.
    let mut record_failed: Option<String> = None;
    let slot = match &shared.record {
        Some(dir) if agent_call => {
            let at = claim_slot(dir, &shared.next_slot)?;
            // Until the exchange's end says how it ended, its recording is not finished (a
            // proxy killed part way writes nothing more).
            let written =
                super::say_unfinished(&at.join(agui_lens_core::check::recorded::CUT_FILE))
                    .and_then(|()| Ok(std::fs::write(at.join("request.json"), &request.body)?));
            unrecorded(&mut record_failed, &at, written);
            Some(SlotOpen::new(shared, at))
        }
        _ => None,
    };
    // The request, checked as `serve` checks it (a POST of a RunAgentInput).
    let body = (request.method == "POST").then(|| {
        request
            .decoded_body()
            .and_then(|body| agui_lens_core::check::request::request_body(&body))
    });
    let input: Option<Value> = body.as_ref().and_then(|b| b.as_ref().ok().cloned());
    let thread_id = input
        .as_ref()
        .and_then(|i| i.get("threadId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // What it is called in what the proxy says; recorded, its findings are placed in the
    // files that hold what they are about (the body's lines are the stream's), so that a
    // report that places findings in files (SARIF, GitHub) names files that exist.
    let label: Arc<str> = Arc::from(if thread_id.is_empty() {
        format!("exchange {n} (no thread)")
    } else {
        format!("exchange {n} (thread {thread_id})")
    });
    let recorded = |file: &str| match &slot {
        Some(at) => Arc::from(at.join(file).to_string_lossy().as_ref()),
        None => label.clone(),
    };
    let path: Arc<str> = recorded("response.raw");
    let sent_as: Arc<str> = recorded("request.json");
    let mut exchange_findings = Vec::new();
    // Whatever ends this exchange early, the thread's next request does not wait for it.
    let _in_flight = input.as_ref().map(|_| InFlight {
        shared,
        thread_id: &thread_id,
        exchange: n,
    });
    if let Some(input) = &input {
        let previous = previous_turn(shared, &thread_id, n);
        let mut findings = input_findings(shared.settings.schemas, input, shared.asked, &sent_as);
        findings.extend(sent_findings(input, shared.asked, &sent_as));
        if let Some(previous) = &previous {
            findings.extend(next_turn_findings(input, previous, &sent_as));
        }
        let findings = shared.leveled(findings);
        if !findings.is_empty() {
            exchange_findings.extend(findings.iter().cloned());
            shared.tell(Note::Findings(findings));
        }
    } else if let Some(Err(problem)) = &body {
        // A body that is no JSON object is no RunAgentInput, as `serve` judges it (it passed
        // as clean, where a JSON body of the wrong shape did not), and no turn of a thread.
        let d = agui_lens_core::check::request::unreadable_body(&sent_as, problem);
        let findings = shared.leveled(vec![d]);
        if !findings.is_empty() {
            exchange_findings.extend(findings.iter().cloned());
            shared.tell(Note::Findings(findings));
        }
    }
    if let Some(at) = slot.as_deref().filter(|_| record_failed.is_none()) {
        unrecorded(
            &mut record_failed,
            at,
            write_findings(at, &exchange_findings),
        );
    }

    // A request held back for its thread's turn before it, when the proxy was stopped in
    // the meantime, is not sent: a stop must not begin a run of the agent.
    if agui_lens_core::stop::requested() {
        let why = format!(
            "not forwarded: the proxy was stopped ({}) before it called the agent",
            agui_lens_core::stop::signal_name()
        );
        fixed(
            &mut client,
            "503 Service Unavailable",
            "text/plain",
            &format!("agui-lens proxy: {why}\n"),
        )?;
        shared.tell(Note::Said(format!("proxy: {label}: {why}")));
        shared
            .not_forwarded
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(at) = &slot {
            write_failure(at, &format!("{label}: {why}"))?;
        }
        return Ok(agent_call);
    }

    // From here the client is watched: if it hangs up, so does the proxy, on the agent.
    let agent = ureq::Agent::new_with_config(shared.config.clone());
    let watch = Watch::start(&client, &agent)?;
    let response = match forward(&request, shared, &agent) {
        Ok(response) => response,
        Err(_) if watch.client_gone() => {
            shared
                .cut_by_clients
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            shared.tell(Note::Said(format!(
                "proxy: {label}: the client went away before the agent answered"
            )));
            if let Some(at) = &slot {
                write_failure(at, "the client went away before the agent answered")?;
            }
            return Ok(agent_call);
        }
        Err(err) => {
            fixed(
                &mut client,
                "502 Bad Gateway",
                "text/plain",
                &format!("agui-lens proxy: {UNREACHABLE}: {err}\n"),
            )?;
            let failure = format!("{label}: {UNREACHABLE}: {err}");
            if let Some(at) = &slot {
                write_failure(at, &failure)?;
                // What was found of the request is kept beside it, as for an answered one.
                record(at, None, &exchange_findings, None)
                    .with_context(|| format!("{RECORDING_INTO}{}", at.display()))?;
            }
            bail!("{failure}");
        }
    };
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    for (name, value) in response.headers() {
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        head.push_str(&format!(
            "{name}: {}\r\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    // A page on another origin may read the answer (the preflight was answered here), unless
    // the agent says otherwise itself.
    if !response
        .headers()
        .contains_key("access-control-allow-origin")
    {
        head.push_str("Access-Control-Allow-Origin: *\r\n");
    }
    head.push_str("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    client.write_all(head.as_bytes())?;
    client.flush()?;
    // A status that is no success is recorded as soon as it is known: the exchange's end, where
    // it is said with the body's start, may never come (the proxy killed while the agent holds
    // the connection open), and the recording would check clean.
    if let (Some(_), false) = (&input, status.is_success()) {
        let known = shared.leveled(vec![status_finding(
            &path,
            (status.as_u16(), status.canonical_reason()),
            location.as_deref(),
            None,
        )]);
        if let Some(at) = slot.as_deref().filter(|_| record_failed.is_none()) {
            let mut so_far = exchange_findings.clone();
            so_far.extend(known.iter().cloned());
            unrecorded(&mut record_failed, at, write_findings(at, &so_far));
        }
        shared
            .unsettled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(n, known);
    }

    // The answer to a RunAgentInput is judged as `run` judges one: its status, its content
    // type against the request's Accept, then the stream, checked beside the forwarding from a
    // copy of each piece.
    let answered = Transport::of((!content_type.is_empty()).then_some(content_type.as_str()));
    let (to_checker, pieces) = mpsc::channel::<Vec<u8>>();
    let cut_by = CutBy::default();
    let cut_for_checker = cut_by.clone();
    let checker = (status.is_success() && input.is_some()).then(|| {
        let accepted = accepted_transports(&request);
        let declared = (!content_type.is_empty()).then(|| content_type.clone());
        let sent = Arc::new(input.clone().unwrap_or(Value::Null));
        let path = path.clone();
        let label = label.clone();
        let asked = shared.asked;
        let schemas = shared.settings.schemas;
        let levels = shared.settings.levels.clone();
        let max_line = shared.settings.max_line;
        let to_main = shared.to_main.lock().map(|t| t.clone()).ok();
        thread::spawn(move || {
            let tell = |note: Note| {
                if let Some(to_main) = &to_main {
                    let _ = to_main.send(note);
                }
            };
            let options = ReadOptions {
                format: answered.map(Transport::format),
                max_line,
                entry: None,
            };
            let opened = match read::open_reader(
                path.clone(),
                Box::new(Pieces(pieces, Vec::new(), 0, cut_for_checker)),
                None,
                &options,
            ) {
                Ok(opened) => opened,
                Err(err) => {
                    tell(Note::Said(format!("proxy: {label}: {err:#}")));
                    return (Vec::new(), None);
                }
            };
            let mut all = Vec::new();
            let judged = |d: Diagnostic, all: &mut Vec<Diagnostic>| {
                let d = leveled(&levels, vec![d]);
                if !d.is_empty() {
                    tell(Note::Findings(d.clone()));
                    all.extend(d);
                }
            };
            match answered {
                Some(answered) if !accepted.is_empty() && !accepted.contains(&answered) => {
                    judged(not_negotiated(&path, accepted[0], answered), &mut all);
                }
                Some(_) => {}
                None => {
                    let looks_like = Transport::of_format(opened.format);
                    let d =
                        content_type_finding(&path, declared.as_deref(), &opened.head, looks_like);
                    judged(d, &mut all);
                    if looks_like.is_none() {
                        // A page, not a stream: nothing in it to check as events.
                        return (all, None);
                    }
                }
            }
            let settings = Settings {
                levels,
                schemas,
                max_line,
                deny_warnings: false,
            };
            let ctx = settings.context(ProtocolOptions {
                state_limit: DEFAULT_STATE_LIMIT,
                version: asked,
                ..ProtocolOptions::default()
            });
            let format = opened.format;
            // The request was held to its rules when it came (`input_findings`): here it is
            // only what the stream answers, or each of its findings would be said twice.
            let checked =
                check_answer_to(&ctx, opened, false, Some(sent), None, false, &mut |batch| {
                    if !batch.is_empty() {
                        all.extend_from_slice(batch);
                        tell(Note::Findings(batch.to_vec()));
                    }
                    Ok(())
                });
            if let Ok(file) = checked {
                tell(Note::Counted {
                    frames: file.stats.frames,
                    events: file.stats.events,
                });
            }
            (all, Some(format))
        })
    });

    let mut body = Vec::new();
    // The body is recorded as it comes: an exchange the proxy cannot wait for at a stop (its
    // agent silent) leaves what it had.
    let mut raw = match slot.as_deref().filter(|_| record_failed.is_none()) {
        Some(at) => match std::fs::File::create(at.join("response.raw")) {
            Ok(file) => Some(file),
            Err(err) => {
                unrecorded(&mut record_failed, at, Err(err.into()));
                None
            }
        },
        None => None,
    };
    let mut reader = response.into_body().into_reader();
    let mut buf = vec![0u8; 64 * 1024];
    let mut first_byte = None;
    let mut cut = None;
    // The agent ended the body early (not the client, not the user).
    let mut upstream_cut = None;
    loop {
        let n = match reader.read(&mut buf) {
            // The client went away and the proxy hung up on the agent: not the agent's cut.
            // A body that runs to the connection's close (no chunks, no length) ends then
            // as if the agent had ended it: it is the client's cut all the same.
            Err(_) | Ok(0) if watch.client_gone() => {
                cut = Some("the client went away".into());
                cut_by.set(CutBy::CLIENT);
                break;
            }
            Ok(0) => break,
            Ok(n) => n,
            Err(err) => {
                cut = Some(err.to_string());
                upstream_cut = Some(err.to_string());
                break;
            }
        };
        first_byte.get_or_insert_with(|| started.elapsed());
        let piece = &buf[..n];
        let mut chunk = format!("{n:x}\r\n").into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        if let Err(err) = client.write_all(&chunk).and_then(|()| client.flush()) {
            if gone(&err) {
                cut = Some("the client went away".into());
                cut_by.set(CutBy::CLIENT);
                break;
            }
            return Err(err.into());
        }
        let _ = to_checker.send(piece.to_vec());
        body.extend_from_slice(piece);
        // A recording that cannot be written (a full disk) is given up; the body goes on to
        // the client and the checker whole.
        if let (Some(file), Some(at)) = (&mut raw, slot.as_deref())
            && let Err(err) = file.write_all(piece)
        {
            unrecorded(&mut record_failed, at, Err(err.into()));
            raw = None;
        }
        if agui_lens_core::stop::requested() {
            cut = Some("stopped".into());
            cut_by.set(CutBy::STOP);
            shared
                .cut_by_stop
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            break;
        }
    }
    // The stream came whole, or was cut: a client that goes away now changes nothing.
    drop(watch);
    if cut_by.client_went_away() {
        shared
            .cut_by_clients
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    drop(to_checker);
    if cut.is_none() {
        if let Err(err) = client.write_all(b"0\r\n\r\n").and_then(|()| client.flush()) {
            if !gone(&err) {
                return Err(err.into());
            }
            // The agent's stream was whole; only its end did not reach the client.
            cut = Some("the client went away before the body's end".into());
        }
    }
    // A cut upstream is passed on: the client's connection closes without the body's end.
    drop(client);
    // The format the body was read in as a stream; none when it was not (a page).
    let mut read_as = None;
    if let Some(checker) = checker {
        let (found, format) = checker.join().unwrap_or_default();
        exchange_findings.extend(found);
        read_as = format;
    }
    shared.tell(Note::Said(format!(
        "proxy: {label}: {} {}, {} bytes{}{}",
        status.as_u16(),
        if content_type.is_empty() {
            "(no content type)"
        } else {
            &content_type
        },
        body.len(),
        first_byte
            .map(|d| format!(", first byte after {:.1} ms", d.as_secs_f64() * 1000.0))
            .unwrap_or_default(),
        cut.map(|why| format!(", cut: {why}")).unwrap_or_default(),
    )));

    // What the client holds now, for its thread's next request.
    let (lines, events, mismatch) = match (&input, read_as) {
        (Some(input), Some(format)) => {
            let ids = |key: &str| input.get(key).and_then(Value::as_str);
            events_of(&path, &body, format, (ids("threadId"), ids("runId")))
        }
        _ => (Vec::new(), Vec::new(), None),
    };
    let streamed = read_as.is_some();
    if let Some(input) = &input {
        // What only the whole exchange tells: a failed status, a cut, another run's ids.
        let mut late = Vec::new();
        if !status.is_success() {
            let start = &body[..body.len().min(ERROR_BODY_LEN as usize)];
            let mut d = status_finding(
                &path,
                (status.as_u16(), status.canonical_reason()),
                location.as_deref(),
                body_excerpt(start),
            );
            // `run`'s advice names its own flags; here the client's headers went through.
            match status.as_u16() {
                300..=399 => {
                    d.help = Some(
                        "the proxy passes a redirect on and does not follow it: point the \
                         client (and --upstream) at the URL it names"
                            .into(),
                    );
                }
                401 | 403 => {
                    d.help = Some(
                        "the agent refused the credentials the client sent (the proxy passes \
                         the client's headers on as they came)"
                            .into(),
                    );
                }
                _ => {}
            }
            late.push(d);
        }
        if let Some(why) = upstream_cut {
            // (As many as events.jsonl will hold: see `recorded::exchange_cut_by_call`.)
            let so_far = Some((body.len() as u64, lines.len() as u64));
            late.extend(cut_finding(&path, &Cut::ConnectionLost(why), so_far));
        }
        late.extend(mismatch);
        let mut late = shared.leveled(late);
        // Taken by a stop that did not wait for this end, the failed status was said then.
        let unsettled = shared
            .unsettled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&n);
        if unsettled.is_none() && !status.is_success() {
            late.retain(|d| d.rule != RuleId::TransportHttpStatus);
        }
        if !late.is_empty() {
            exchange_findings.extend(late.iter().cloned());
            shared.tell(Note::Findings(late));
        }
        // A client that went away holds what it got, which its next request says; there is
        // nothing whole to hold that request to.
        let whole = streamed && !cut_by.client_went_away();
        let held = whole.then(|| fold(input, &events, &path));
        let mut guard = shared.threads.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(guard.1.get(&thread_id), Some(Turn::UnderWay(m)) if *m == n) {
            match held {
                Some(held) => {
                    guard.1.insert(thread_id.clone(), Turn::Held(held));
                }
                None => {
                    guard.1.remove(&thread_id);
                }
            }
        }
    }
    if let Some(at) = slot.as_deref() {
        let refused = !status.is_success() && lines.is_empty();
        // Cut by the client, or by the proxy's own stop: the stream's end is not the agent's.
        let cut_here = match &record_failed {
            Some(failed) => Some(format!(
                "{failed}: the body was recorded in part (it was forwarded and checked whole)"
            )),
            None => cut_by.why().map(|why| {
                format!(
                    "{why} after {} bytes of the body: {FORWARDED_IN_PART}",
                    body.len()
                )
            }),
        };
        let recorded = record(
            at,
            (!refused).then_some(&lines[..]),
            &exchange_findings,
            cut_here.as_deref(),
        );
        if let Some(failed) = record_failed {
            if let Err(err) = recorded {
                say!("proxy: {label}: {err:#}");
            }
            anyhow::bail!(
                "{failed}: {label} was forwarded and checked whole, and recorded in part"
            );
        }
        recorded.with_context(|| format!("{RECORDING_INTO}{}", at.display()))?;
        shared.tell(Note::Said(format!(
            "proxy: {label}: recorded in {}",
            at.display()
        )));
    }
    Ok(agent_call)
}

/// Keeps the first failure to write an exchange's recording (`at`), if `written` is one.
/// Records in the exchange's folder `at` why it has no response (`failure.txt`, which a check
/// reads in place of a stream), and that its recording is finished.
fn write_failure(at: &std::path::Path, failure: &str) -> Result<()> {
    std::fs::write(at.join("failure.txt"), format!("{failure}\n"))
        .and_then(|()| finished(at))
        .with_context(|| format!("{RECORDING_INTO}{}", at.display()))
}

/// Takes away what says the recording in `at` is not finished: it ended as its files say.
fn finished(at: &std::path::Path) -> io::Result<()> {
    super::remove_if_there(&at.join(agui_lens_core::check::recorded::CUT_FILE))
}

fn unrecorded(failed: &mut Option<String>, at: &std::path::Path, written: Result<()>) {
    if let Err(err) = written {
        failed.get_or_insert_with(|| format!("{RECORDING_INTO}{}: {err:#}", at.display()));
    }
}

/// A thread's exchange under way: dropped before the stream was folded (the upstream could not
/// be reached, the client went away), it leaves the thread with nothing to wait for.
struct InFlight<'a> {
    shared: &'a Shared,
    thread_id: &'a str,
    exchange: u64,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut guard = self
            .shared
            .threads
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if matches!(guard.1.get(self.thread_id), Some(Turn::UnderWay(n)) if *n == self.exchange) {
            guard.1.remove(self.thread_id);
        }
    }
}

/// Watches the client's side of an exchange while its request is forwarded and its answer
/// streamed: a client that hangs up (a frontend's stop) gets the upstream hung up on, as it
/// would have been without the proxy, so the agent sees the cancel even while it is silent,
/// and the exchange ends at once.
struct Watch {
    watcher: Option<thread::JoinHandle<()>>,
    done: Arc<std::sync::atomic::AtomicBool>,
    gone: Arc<std::sync::atomic::AtomicBool>,
    /// The client's connection, to wake the watcher with when the exchange is over.
    client: TcpStream,
}

impl Watch {
    fn start(client: &TcpStream, agent: &ureq::Agent) -> Result<Watch> {
        use std::sync::atomic::Ordering::SeqCst;
        let mut watched = client.try_clone()?;
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let gone = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let agent = agent.clone();
        let (ended, went) = (Arc::clone(&done), Arc::clone(&gone));
        let watcher = thread::spawn(move || {
            let mut buf = [0u8; 512];
            loop {
                match watched.read(&mut buf) {
                    // More from the client (a pipelined request): not forwarded, not a hang-up.
                    Ok(n) if n > 0 => {}
                    Err(err)
                        if matches!(
                            err.kind(),
                            io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                                | io::ErrorKind::Interrupted
                        ) =>
                    {
                        if ended.load(SeqCst) {
                            return;
                        }
                    }
                    // The end of the client's side, or its connection failed.
                    _ => {
                        if !ended.load(SeqCst) {
                            went.store(true, SeqCst);
                            agent.shutdown();
                        }
                        return;
                    }
                }
            }
        });
        Ok(Watch {
            watcher: Some(watcher),
            done,
            gone,
            client: client.try_clone()?,
        })
    }

    fn client_gone(&self) -> bool {
        self.gone.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Watch {
    /// The exchange is over: the watcher is woken (its read sees the end) and waited for, so
    /// that the client's connection closes when the exchange drops it.
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.client.shutdown(std::net::Shutdown::Read);
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

/// What a client that applied the thread's last stream holds, once that stream has been
/// forwarded whole (a client may ask again as soon as it has the terminal event); the thread
/// is then marked as having a stream under way.
fn previous_turn(shared: &Shared, thread_id: &str, exchange: u64) -> Option<Folded> {
    crate::live::after_previous_turn(
        &shared.threads,
        |(_, threads)| matches!(threads.get(thread_id), Some(Turn::UnderWay(_))),
        |(_, threads)| match threads.insert(thread_id.to_owned(), Turn::UnderWay(exchange)) {
            Some(Turn::Held(folded)) => Some(folded),
            _ => None,
        },
    )
}

/// The request sent on to the upstream, the client's headers with it (but the hop-by-hop
/// ones); the response's head.
fn forward(
    request: &Request,
    shared: &Shared,
    agent: &ureq::Agent,
) -> Result<ureq::http::Response<ureq::Body>> {
    let url = shared.upstream.as_str();
    let headers = request
        .headers
        .iter()
        .filter(|(name, _)| !HOP_BY_HOP.contains(&name.to_ascii_lowercase().as_str()));
    let response = match request.method.as_str() {
        "POST" | "PUT" | "PATCH" => {
            let mut builder = match request.method.as_str() {
                "POST" => agent.post(url),
                "PUT" => agent.put(url),
                _ => agent.patch(url),
            };
            for (name, value) in headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            builder.send(&request.body[..])?
        }
        "GET" | "HEAD" | "DELETE" => {
            let mut builder = match request.method.as_str() {
                "GET" => agent.get(url),
                "HEAD" => agent.head(url),
                _ => agent.delete(url),
            };
            for (name, value) in headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            builder.call()?
        }
        other => bail!("{other} requests are not forwarded"),
    };
    Ok(response)
}

/// The transports the request's Accept header takes, the preferred first: none when it names
/// neither, or takes anything (`*/*`).
fn accepted_transports(request: &Request) -> Vec<Transport> {
    let Some(accept) = request
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("accept"))
        .map(|(_, value)| value.as_str())
    else {
        return Vec::new();
    };
    agui_lens_core::read::accepted_formats(accept)
        .into_iter()
        .filter_map(Transport::of_format)
        .collect()
}

/// The events of a forwarded body read as `format`: as `events.jsonl`'s lines (every frame
/// that holds an event, see [`event_line`]), as JSON values (those that read as events), and
/// what its first RUN_STARTED says against the ids `sent` (threadId, runId).
fn events_of(
    path: &Arc<str>,
    body: &[u8],
    format: InputFormat,
    sent: (Option<&str>, Option<&str>),
) -> (Vec<Vec<u8>>, Vec<Value>, Option<Diagnostic>) {
    let options = ReadOptions {
        format: Some(format),
        max_line: DEFAULT_MAX_LINE,
        entry: None,
    };
    let (mut lines, mut events) = (Vec::new(), Vec::new());
    let mut mismatch = None;
    let mut run_started = false;
    let body = Box::new(io::Cursor::new(body.to_vec()));
    // Read frame by frame here, not on the pool: a body held whole is read whole even once a
    // stop is asked for (the pool's reading ends there, and the exchange's events with it).
    if let Ok(mut opened) = read::open_reader(path.clone(), body, None, &options) {
        let mut batch = Batch::default();
        while opened.reader.next_batch(&mut batch).unwrap_or(false) {
            for frame in &batch.frames {
                let (line, event) = event_line(path, &batch, frame, format);
                lines.extend(line);
                let Some(event) = event else {
                    continue;
                };
                // Every event read, of a type no one knows or of none too: events.jsonl is
                // checked in place of the body, and what is wrong with them is found there.
                events.push(event.whole_value().into_owned());
                if !run_started && event.kind == Some(EventType::RunStarted) {
                    run_started = true;
                    mismatch = id_mismatch(sent, &event, batch.bytes(frame));
                }
            }
        }
    }
    (lines, events, mismatch)
}

/// A frame of a body read as `format` as a line of `events.jsonl`, when it holds an event,
/// and the event, when it reads as one: the event as read (a key given twice written once,
/// as a client reads it; a protobuf message as the JSON event it decodes to), or, for an
/// event that holds half of a UTF-16 pair (which reads as no event here, and a JSON value
/// cannot hold), its JSON as it came, line ends between its tokens made spaces (such events
/// were left out, and the text of the message they end with).
fn event_line(
    path: &Arc<str>,
    batch: &Batch,
    frame: &agui_lens_core::read::Frame,
    format: InputFormat,
) -> (
    Option<Vec<u8>>,
    Option<agui_lens_core::protocol::event::Event>,
) {
    let event = parse_event(path, batch, frame, DEFAULT_MAX_LINE);
    let raw = batch.bytes(frame);
    let line = match (&event, format) {
        (Some(event), _) => serde_json::to_vec(&*event.whole_value()).ok(),
        (None, InputFormat::Proto) => None,
        (None, _) => agui_lens_core::check::parse::value_keeping_halves(raw)
            .ok()
            .map(|_| raw.to_vec()),
    };
    let line = line.map(|mut line| {
        for byte in &mut line {
            if matches!(*byte, b'\n' | b'\r') {
                *byte = b' ';
            }
        }
        line
    });
    (line, event)
}

/// Past the numbers an exchange's folder is given.
const LAST_NUMBER: u64 = 1_000_000_000_000_000_000;

/// The number after the highest of the exchanges `dir` holds already (1 for none): a second
/// run goes on after them, so the folders' order stays the order exchanges came in.
fn after_recorded(dir: &std::path::Path) -> u64 {
    let numbered = |entry: std::fs::DirEntry| {
        let name = entry.file_name();
        let name = name.to_str()?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Past a quintillion, a folder is no exchange's: the count would wrap to 000.
        name.parse::<u64>().ok().filter(|&n| n < LAST_NUMBER)
    };
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().filter_map(numbered).max().unwrap_or(0))
        .unwrap_or(0)
        .saturating_add(1)
}

/// A new folder DIR/NNN/ for one exchange: the first number from `next` on that no folder
/// has, made so no other exchange (of this proxy, an earlier run, or another proxy recording
/// into DIR at the same time) can have it too.
fn claim_slot(dir: &std::path::Path, next: &std::sync::atomic::AtomicU64) -> Result<PathBuf> {
    loop {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let at = dir.join(format!("{n:03}"));
        match std::fs::create_dir(&at) {
            Ok(()) => return Ok(at),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => {
                return Err(anyhow::Error::new(err).context(format!("creating {}", at.display())));
            }
        }
    }
}

/// An exchange's folder under `--record`, listed in [`Shared::open_slots`] until it is
/// recorded whole (or the exchange ends otherwise).
struct SlotOpen<'a> {
    shared: &'a Shared,
    at: PathBuf,
}

impl<'a> SlotOpen<'a> {
    fn new(shared: &'a Shared, at: PathBuf) -> Self {
        let open = &shared.open_slots;
        open.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(at.clone());
        SlotOpen { shared, at }
    }
}

impl std::ops::Deref for SlotOpen<'_> {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.at
    }
}

impl Drop for SlotOpen<'_> {
    fn drop(&mut self) {
        let open = &self.shared.open_slots;
        open.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| *p != self.at);
    }
}

/// What a cut said of an exchange the client or the proxy's stop cut.
const FORWARDED_IN_PART: &str =
    "the stream was forwarded in part, and what only its end tells was not checked";

/// Records an exchange whose agent stayed silent past the stop (its thread is left waiting):
/// the events of the body it had sent, read from `response.raw`, and `cut.txt`, so that
/// `check DIR` checks what came as a stream the proxy cut, not as the agent's end.
fn finish_abandoned(at: &std::path::Path, grace: Duration) -> Result<()> {
    use agui_lens_core::read::{self, Batch, FrameKind, InputSpec, ReadOptions};
    let raw = at.join("response.raw");
    let mut lines = Vec::new();
    if let Ok(mut opened) = read::open(&InputSpec::File(raw), &ReadOptions::default()) {
        let (name, format) = (opened.name.clone(), opened.format);
        let mut batch = Batch::default();
        while opened.reader.next_batch(&mut batch)? {
            for frame in &batch.frames {
                if let FrameKind::Data { .. } = frame.kind {
                    lines.extend(event_line(&name, &batch, frame, format).0);
                }
            }
        }
    }
    let why = format!(
        "stopped by {}: the agent sent nothing more within {} s of the stop: {FORWARDED_IN_PART}",
        agui_lens_core::stop::signal_name(),
        grace.as_secs()
    );
    record(
        at,
        (!lines.is_empty()).then_some(&lines[..]),
        &[],
        Some(&why),
    )
}

/// What came of one exchange, recorded in its folder `at` (DIR/NNN/, which holds the request
/// and the raw response body already): its events as JSONL, unless the agent refused the
/// request with a body that held none (an empty file would read as a stream of nothing; the
/// body and its status are in `response.raw` and the findings), and the findings (request,
/// response and stream) as JSONL. An agent that could not be reached leaves `failure.txt`
/// instead. No header is written (they may carry credentials).
fn record(
    at: &std::path::Path,
    lines: Option<&[Vec<u8>]>,
    findings: &[Diagnostic],
    cut: Option<&str>,
) -> Result<()> {
    // A stream the client (or the proxy's stop, or a full disk) cut is checked later as it
    // was now: its end is not the agent's.
    if let Some(why) = cut {
        std::fs::write(
            at.join(agui_lens_core::check::recorded::CUT_FILE),
            format!("{why}\n"),
        )?;
    }
    if let Some(lines) = lines {
        let mut jsonl = Vec::new();
        for line in lines {
            jsonl.extend_from_slice(line);
            jsonl.push(b'\n');
        }
        std::fs::write(at.join("events.jsonl"), jsonl)?;
    }
    write_findings(at, findings)?;
    if cut.is_none() {
        finished(at)?;
    }
    Ok(())
}

/// An exchange's findings as JSONL in its folder `at`, written only when something was found:
/// an empty file would read as a capture of nothing to a walk of the recordings. Written once
/// the request is judged, and again with the rest at the exchange's end, so that a stop in
/// between (the proxy's, with the agent silent) keeps what was found of the request.
fn write_findings(at: &std::path::Path, findings: &[Diagnostic]) -> Result<()> {
    if findings.is_empty() {
        return Ok(());
    }
    let count = |severity| findings.iter().filter(|d| d.severity == severity).count() as u64;
    std::fs::write(
        at.join("findings.jsonl"),
        report(
            Format::Jsonl,
            findings,
            Stats {
                errors: count(Severity::Error),
                warnings: count(Severity::Warning),
                ..Stats::default()
            },
            (None, None, None),
            false,
        )?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next number goes on after the exchanges a folder holds, and never wraps round to
    /// 000 past the largest number (a folder named so is no exchange's).
    #[test]
    fn numbering_goes_on_and_never_wraps() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(after_recorded(dir.path()), 1);
        for name in [
            "005",
            "999",
            "notes",
            "18446744073709551615",
            "99999999999999999999",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        assert_eq!(after_recorded(dir.path()), 1000);
    }
}
