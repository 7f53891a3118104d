//! `agui-lens serve SCRIPT`: a replay server for testing AG-UI clients. Every POST gets the
//! next turn of the script (a recorded stream, a browser capture's streams, or a TOML list) with its threadId and
//! runId rewritten to the request's, framed as SSE or protobuf, under the faults the flags
//! ask for; every request is held to the `request/*` rules, the next turn of a thread to
//! what the stream served before it left the client holding.
//!
//! The HTTP/1.1 server is written by hand over `TcpListener`, so every fault is byte for byte
//! the one asked for: a thread per connection, `Connection: close`, chunked bodies.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::ArgMatches;
use serde::Deserialize;
use serde_json::Value;

use super::Outcome;
use super::check::{Settings, settings, use_color};
use crate::cli::{LineEnd, ServeArgs, ServeTransport};
use agui_lens_core::check::catalog::RuleId;
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::Stats;
use agui_lens_core::check::request::{
    input_findings, next_turn_findings, request_body, sent_findings, unreadable_body,
};
use agui_lens_core::check::rules::protocol::DEFAULT_STATE_LIMIT;
use agui_lens_core::check::stream::{for_each_opened_frame, require_events};
use agui_lens_core::fold::{Folded, Folder};
use agui_lens_core::protocol::event::{Event, Location};
use agui_lens_core::protocol::proto;
use agui_lens_core::read::{DEFAULT_MAX_LINE, InputSpec, ReadOptions};
use agui_lens_core::report::{FileSummary, Summary};

/// The media type of protobuf framing, as a client's Accept asks for it.
const PROTO_TYPE: &str = "application/vnd.ag-ui.event+proto";
/// The largest request body read.
const MAX_BODY: usize = 64 << 20;

/// One turn of the script: the events served, as recorded.
struct Turn {
    name: String,
    events: Vec<Value>,
    /// A browser capture's stream that came with a status that is no success: the status
    /// line it is served with, as the client met it (`503 Service Unavailable`).
    status: Option<String>,
    /// The turn breaks a `state/*` rule at error level (a patch that fails): what a client
    /// holds after it is not agui-lens's to say ([`script_check`]).
    unsettled_state: bool,
}

/// A TOML script: `[[turn]] stream = "a.jsonl"`, paths relative to the script.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    turn: Vec<TurnFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnFile {
    stream: PathBuf,
}

/// The turns SCRIPT names: a TOML script's, or the one stream a capture holds.
fn load_script(path: &Path) -> Result<Vec<Turn>> {
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if !is_toml {
        // A browser capture holding several AG-UI streams is a conversation: one turn each.
        if path.is_dir() {
            bail!(
                "{} is a directory: name a stream, or a TOML script of turns",
                path.display()
            );
        }
        let named = super::inputs::expand(&[path.to_path_buf()], &super::inputs::Walk::default())?;
        return super::inputs::open_captures(named, None)
            .into_iter()
            .map(|input| match input.unreadable {
                Some(why) => Err(anyhow::anyhow!(why)),
                None => load_turn(&input.spec),
            })
            .collect();
    }
    let text = agui_lens_core::read::read_text(path)?;
    let script: ScriptFile =
        toml::from_str(&text).with_context(|| format!("{} is no serve script", path.display()))?;
    if script.turn.is_empty() {
        bail!("{} has no [[turn]]", path.display());
    }
    let dir = super::directory_of(path);
    script
        .turn
        .iter()
        .map(|turn| load_turn(&InputSpec::File(dir.join(&turn.stream))))
        .collect()
}

fn load_turn(input: &InputSpec) -> Result<Turn> {
    let read = ReadOptions {
        format: None,
        max_line: DEFAULT_MAX_LINE,
        entry: None,
    };
    let mut events = Vec::new();
    let mut opened = agui_lens_core::read::open(input, &read)?;
    // Served, the events are encoded again: fields a protobuf recording carried that the
    // definitions lack are not in them.
    let mut skipped = agui_lens_core::compact::SkippedFields::default();
    let mut no_object = 0u64;
    let stats = for_each_opened_frame(&mut opened, read.max_line, |event, _, frame| {
        skipped.note(frame);
        match event {
            Some(event) if event.value.is_object() => {
                events.push(event.whole_value().into_owned());
            }
            Some(_) => no_object += 1,
            None => {}
        }
        Ok(())
    })?;
    require_events(&opened, &stats)?;
    if let Some(said) = skipped.said(&opened.name, "served") {
        say!("warning: {said}");
    }
    // What a client of the replay does not get of the recording.
    let left_out = stats.unreadable + no_object;
    if left_out > 0 {
        let plural = agui_lens_core::text::plural;
        let is = |n: u64| if n == 1 { "is" } else { "are" };
        let mut why = Vec::new();
        if stats.unread_halves > 0 {
            why.push(format!(
                "{} {} half of a UTF-16 surrogate pair (framing/lone-surrogate), which serve \
                 cannot encode again",
                plural(stats.unread_halves, "event"),
                if stats.unread_halves == 1 {
                    "holds"
                } else {
                    "hold"
                }
            ));
        }
        if no_object > 0 {
            why.push(format!(
                "{no_object} {} JSON that is no event object",
                is(no_object)
            ));
        }
        let unreadable = stats.unreadable - stats.unread_halves;
        if unreadable > 0 {
            why.push(format!("{unreadable} {} no event at all", is(unreadable)));
        }
        say!(
            "warning: {}: {} {} not served: {} (`agui-lens check {}` says where); a client of \
             the replay gets less than the recording holds",
            opened.name,
            plural(left_out, "frame"),
            is(left_out),
            why.join(", "),
            opened.name
        );
    }
    let status = opened.capture.as_ref().and_then(|c| c.failed_answer());
    Ok(Turn {
        name: opened.name.to_string(),
        events,
        status,
        unsettled_state: false,
    })
}

/// Checks each turn of the script as `check` would (its events, as served before the ids
/// are rewritten), marks those that leave the state unsettled, and returns what to say of
/// the turns that break the protocol: a client is then not blamed for what they caused.
fn script_check(turns: &mut [Turn], settings: &Settings) -> Vec<String> {
    use agui_lens_core::check::diagnostic::Severity;
    let ctx = settings.context(Default::default());
    let options = ReadOptions {
        format: Some(agui_lens_core::read::InputFormat::Jsonl),
        max_line: settings.max_line,
        entry: None,
    };
    let mut said = Vec::new();
    for (i, turn) in turns.iter_mut().enumerate() {
        let mut lines = Vec::new();
        for event in &turn.events {
            lines.extend_from_slice(event.to_string().as_bytes());
            lines.push(b'\n');
        }
        let name: Arc<str> = Arc::from(turn.name.as_str());
        let Ok(opened) = agui_lens_core::read::open_reader(
            name,
            Box::new(io::Cursor::new(lines)),
            None,
            &options,
        ) else {
            continue;
        };
        let mut errors: Vec<&'static str> = Vec::new();
        let mut count = 0u64;
        let checked =
            agui_lens_core::check::opened::check_opened(&ctx, opened, false, &mut |found| {
                for d in found.iter().filter(|d| d.severity == Severity::Error) {
                    count += 1;
                    let rule = d.rule.name();
                    if !errors.contains(&rule) {
                        errors.push(rule);
                    }
                }
                Ok(())
            });
        if checked.is_err() || count == 0 {
            continue;
        }
        turn.unsettled_state = errors.iter().any(|r| r.starts_with("state/"));
        let mut line = format!(
            "turn {} of the script ({}) breaks the protocol: {} ({}); `agui-lens check` shows \
             where",
            i + 1,
            turn.name,
            agui_lens_core::text::plural(count, "error"),
            errors.join(", ")
        );
        if turn.unsettled_state {
            line.push_str(
                "; the state a client holds after it is not held to agui-lens's fold \
                 (no request/state-mismatch on the next request)",
            );
        }
        said.push(line);
    }
    said
}

/// How every answer is framed and spoiled.
#[derive(Clone)]
struct Faults {
    transport: ServeTransport,
    split_bytes: bool,
    split_random: Option<u64>,
    line_end: &'static str,
    bom: bool,
    comments: bool,
    fields: bool,
    drip: Option<Duration>,
    pause: Option<Duration>,
    cut: bool,
    truncate: bool,
    reset: bool,
    status: Option<u16>,
    content_type: Option<String>,
}

impl Faults {
    fn from_args(args: &ServeArgs) -> Faults {
        Faults {
            transport: args.transport,
            split_bytes: args.split_bytes,
            split_random: args.split_random,
            line_end: match args.line_ends {
                LineEnd::Lf => "\n",
                LineEnd::Crlf => "\r\n",
                LineEnd::Cr => "\r",
            },
            bom: args.bom,
            comments: args.comments,
            fields: args.fields,
            drip: args.drip,
            pause: args.pause,
            cut: args.cut,
            truncate: args.truncate,
            reset: args.reset,
            status: args.status,
            content_type: args.content_type.clone(),
        }
    }
}

/// What a thread's next request is held to.
struct ThreadState {
    /// The next turn to serve.
    turn: usize,
    /// What a client that applied the last stream served holds.
    folded: Option<Folded>,
    /// The turn of the script whose stream `folded` ends with.
    folded_by: usize,
    /// That turn was cut by a fault the spec makes fatal (see [`Retry`]).
    retry: Option<Retry>,
    /// A turn of the thread is being served: its next request waits for it (see
    /// [`take_turn`]).
    under_way: bool,
}

/// A turn cut by a fault the spec makes fatal (`--truncate`, `--reset`, `--cut`): a client
/// must not take the run as a success, and one that retries it holds what it held before the
/// turn (`before`); one that goes on holds what came. The next request is held to whichever
/// it fits, and a retry is served the turn again.
struct Retry {
    before: Option<Folded>,
    turn: usize,
}

/// What the connection threads share.
struct Shared {
    turns: Vec<Turn>,
    faults: Faults,
    settings: Settings,
    asked: Option<agui_lens_core::protocol::version::Version>,
    threads: Mutex<(u64, HashMap<String, ThreadState>)>,
    to_main: Mutex<mpsc::Sender<Note>>,
    /// Turns whose body is being written, or was cut by a stop (Ctrl-C, SIGTERM): one the
    /// stop came to is not served whole, whether or not its thread has said so yet.
    serving: std::sync::atomic::AtomicU64,
}

/// What a connection thread tells the main thread.
enum Note {
    /// A line for stderr.
    Said(String),
    Findings(Vec<Diagnostic>),
    /// The script's last turn was served (its body written, or cut as asked).
    LastTurnServed,
    /// A turn was not served whole: the client went away during it.
    NotServedWhole(String),
    /// A turn's body was written (cut as the faults asked, if they did): its events.
    Served(u64),
}

impl Shared {
    fn tell(&self, note: Note) {
        if let Ok(to_main) = self.to_main.lock() {
            let _ = to_main.send(note);
        }
    }
}

pub fn run(args: &ServeArgs, matches: &ArgMatches) -> Result<Outcome> {
    let settings = settings(&args.rules, matches, None, None)?;
    let deny_warnings = settings.deny_warnings;
    if let Some(report) = &args.report {
        let settings_files = super::settings_files(&args.rules);
        let mut read = vec![(args.script.as_path(), "SCRIPT")];
        read.extend(settings_files.iter().map(|(p, by)| (p.as_path(), *by)));
        super::refuse_output_over_input(report, "--report", &read)?;
        super::refuse_report_over_other(report)?;
        let name = format!("serve {}", args.script.display());
        super::report_under_way(report, args.format, &name)?;
    }
    let not_begun = |err| {
        let name = format!("serve {}", args.script.display());
        super::report_not_begun(args.report.as_deref(), args.format, &name, err)
    };
    let mut turns = load_script(&args.script).map_err(not_begun)?;
    let script_notes = script_check(&mut turns, &settings);
    let listener = TcpListener::bind(&args.listen)
        .with_context(|| format!("listening on {}", args.listen))
        .map_err(not_begun)?;
    let addr = listener.local_addr()?;
    crate::signals::catch();
    {
        let mut out = super::ReportOut::default();
        writeln!(out, "listening on http://{addr}")?;
        out.flush()?;
    }
    say!(
        "serve: {} from {}",
        agui_lens_core::text::plural(turns.len() as u64, "turn"),
        args.script.display()
    );
    for note in &script_notes {
        say!("serve: {note}");
    }
    let (to_main, notes) = mpsc::channel();
    let shared = Arc::new(Shared {
        turns,
        faults: Faults::from_args(args),
        settings,
        asked: args.rules.protocol,
        threads: Mutex::new((0, HashMap::new())),
        to_main: Mutex::new(to_main),
        serving: std::sync::atomic::AtomicU64::new(0),
    });

    let color = use_color(args.color);
    let mut live = crate::render::reporter(
        agui_lens_core::report::Format::Human,
        Box::new(super::ReportOut::default()),
        color,
        false,
    );
    let mut found: Vec<Diagnostic> = Vec::new();
    let mut stats = Stats::default();
    // The last turn, when the client went away before its end.
    let mut unserved: Vec<String> = Vec::new();
    let mut done = false;
    let mut take = |note: Note, done: &mut bool| -> io::Result<()> {
        match note {
            Note::Said(line) => say!("{line}"),
            Note::Findings(batch) => {
                for d in batch {
                    live.diagnostic(&d)?;
                    match d.severity {
                        agui_lens_core::check::diagnostic::Severity::Error => stats.errors += 1,
                        agui_lens_core::check::diagnostic::Severity::Warning => stats.warnings += 1,
                        agui_lens_core::check::diagnostic::Severity::Note => stats.notes += 1,
                    }
                    found.push(d);
                }
                live.flush()?;
            }
            Note::LastTurnServed => *done |= args.once,
            Note::NotServedWhole(why) => unserved.push(why),
            Note::Served(events) => stats.events += events,
        }
        Ok(())
    };
    // Connections are taken as they come, on a thread of their own; this one prints what
    // they tell, and wakes every 50 ms to see whether to stop.
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
                match stream {
                    Ok(stream) => {
                        let shared = Arc::clone(&shared);
                        workers.push(thread::spawn(move || connection(stream, &shared)));
                    }
                    Err(err) => {
                        shared.tell(Note::Said(format!("serve: accepting a connection: {err}")))
                    }
                }
                workers.retain(|w| !w.is_finished());
            }
            workers
        })
    };
    while !done && !agui_lens_core::stop::requested() {
        if let Ok(note) = notes.recv_timeout(Duration::from_millis(50)) {
            take(note, &mut done)?;
        }
    }
    // The acceptor is woken by a connection of our own, and stops.
    stopping.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = TcpStream::connect(addr);
    let workers = acceptor.join().unwrap_or_default();
    // With --once, the streams under way are served to their end. Stopped by a signal, they
    // end with the process (a connection waiting for its request would hold it up).
    if !agui_lens_core::stop::requested() {
        for worker in workers {
            let _ = worker.join();
        }
    }
    while let Ok(note) = notes.try_recv() {
        take(note, &mut done)?;
    }
    let name: Arc<str> = Arc::from(format!("serve {}", args.script.display()));
    // Under `--once`, a script not served whole is no clean run, however the requests were.
    let mut failure = (args.once && !unserved.is_empty()).then(|| unserved.join("; "));
    // Nor is one stopped while a turn was under way: that turn was cut (it was reported as
    // served, its whole stream counted).
    let cut = shared.serving.load(std::sync::atomic::Ordering::SeqCst);
    let stopped_during = agui_lens_core::stop::requested() && cut > 0;
    if stopped_during {
        let why = format!(
            "stopped while {} being served: not served whole",
            match cut {
                1 => "a turn was".to_owned(),
                n => format!("{n} turns were"),
            }
        );
        say!("serve: {why}");
        failure = Some(match failure {
            Some(earlier) => format!("{earlier}; {why}"),
            None => why,
        });
    }
    let mut file = FileSummary::checked(name.clone(), stats, failure.clone());
    file.interrupted = stopped_during;
    file.notes = script_notes;
    let mut summary = Summary::default();
    summary.add(&file);
    // Stopped by a signal (exit 130, 143; a stream under way was cut): no format calls the
    // run a success.
    summary.stopped_by = agui_lens_core::stop::requested().then(agui_lens_core::stop::signal_name);
    live.flush()?;
    drop(live);
    say!(
        "serve: {} answered: {}, {}",
        agui_lens_core::text::plural(requests(&shared), "request"),
        agui_lens_core::text::plural(stats.errors, "error"),
        agui_lens_core::text::plural(stats.warnings, "warning")
    );
    if let Some(path) = &args.report {
        let buffer = Buffer::default();
        buffer.say_failure(args.format, &file);
        {
            let mut reporter =
                crate::render::reporter(args.format, Box::new(buffer.clone()), false, false);
            reporter.start_run(1)?;
            reporter.start_file(&name)?;
            for d in &found {
                reporter.diagnostic(d)?;
            }
            reporter.end_file(&file)?;
            reporter.finish(&summary)?;
            reporter.flush()?;
        }
        let bytes = std::mem::take(&mut *buffer.0.lock().unwrap_or_else(|e| e.into_inner()));
        // Looked at again: a file may have been put there while the server ran.
        super::refuse_report_over_other(path)?;
        super::write_bytes(path, &bytes)?;
    }
    Ok(
        if stats.errors > 0 || (deny_warnings && stats.warnings > 0) || failure.is_some() {
            Outcome::Findings
        } else {
            Outcome::Clean
        },
    )
}

/// How many requests were read.
fn requests(shared: &Shared) -> u64 {
    shared.threads.lock().unwrap_or_else(|e| e.into_inner()).0
}

/// Where a report is written before it goes to its file.
#[derive(Clone, Default)]
pub(crate) struct Buffer(pub(crate) Arc<Mutex<Vec<u8>>>);

impl Buffer {
    /// Starts a human report with the input's failure: that format holds none of its own (a
    /// terminal has it on stderr), and a report file would not say why the run failed.
    pub(super) fn say_failure(&self, format: agui_lens_core::report::Format, file: &FileSummary) {
        if let Some(failure) = file
            .failure_text()
            .filter(|_| format == agui_lens_core::report::Format::Human)
        {
            let said = format!("error: {failure}\n");
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(said.as_bytes());
        }
    }
}

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One connection: a request read, checked and answered.
fn connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    if let Err(err) = answer(stream, shared) {
        shared.tell(Note::Said(format!("serve: {err:#}")));
    }
}

/// A request as read off the wire.
pub(super) struct Request {
    pub(super) method: String,
    pub(super) path: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl Request {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as the client meant it: decoded when its `Content-Encoding` is gzip or
    /// deflate (a gzip body was blamed as "not JSON"); an encoding agui-lens does not decode,
    /// or a body that is not what its encoding says, is said (as a body that is no JSON
    /// object is, by `request_body`).
    pub(super) fn decoded_body(&self) -> Result<std::borrow::Cow<'_, [u8]>, String> {
        use std::borrow::Cow;
        let Some(encoding) = self
            .header("content-encoding")
            .map(str::trim)
            .filter(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"))
        else {
            return Ok(Cow::Borrowed(&self.body));
        };
        let mut decoded = Vec::new();
        let read = match encoding.to_ascii_lowercase().as_str() {
            "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(&self.body[..])
                .take(MAX_BODY as u64 + 1)
                .read_to_end(&mut decoded),
            "deflate" => flate2::read::ZlibDecoder::new(&self.body[..])
                .take(MAX_BODY as u64 + 1)
                .read_to_end(&mut decoded),
            other => {
                return Err(format!(
                    "is encoded as `{other}` (Content-Encoding), which agui-lens does not decode"
                ));
            }
        };
        match read {
            Err(err) => Err(format!(
                "is not what its Content-Encoding `{encoding}` says ({err})"
            )),
            Ok(_) if decoded.len() > MAX_BODY => Err(format!(
                "decoded from `{encoding}`, is larger than serve reads"
            )),
            Ok(_) => Ok(Cow::Owned(decoded)),
        }
    }
}

pub(super) fn read_request(stream: &TcpStream) -> Result<Option<Request>> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or("/").to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            bail!("the connection closed inside the request's headers");
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    let length: usize = request
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if length > MAX_BODY {
        bail!("a request body of {length} bytes is more than serve reads");
    }
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .context("a bad chunk size in the request body")?;
            if size == 0 {
                break;
            }
            if request.body.len() + size > MAX_BODY {
                bail!("a request body larger than serve reads");
            }
            let at = request.body.len();
            request.body.resize(at + size, 0);
            reader.read_exact(&mut request.body[at..])?;
            line.clear();
            reader.read_line(&mut line)?;
        }
    } else {
        request.body.resize(length, 0);
        reader.read_exact(&mut request.body)?;
    }
    Ok(Some(request))
}

pub(super) const CORS: &str = "Access-Control-Allow-Origin: *\r\nAccess-Control-Allow-Headers: *\r\nAccess-Control-Allow-Methods: POST, GET, OPTIONS\r\n";

pub(super) fn fixed(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{CORS}Connection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

fn answer(mut stream: TcpStream, shared: &Shared) -> Result<()> {
    let Some(request) = read_request(&stream)? else {
        return Ok(());
    };
    match request.method.as_str() {
        "POST" => {}
        "OPTIONS" => {
            write!(
                stream,
                "HTTP/1.1 204 No Content\r\n{CORS}Connection: close\r\n\r\n"
            )?;
            return Ok(());
        }
        "GET" | "HEAD" => {
            fixed(
                &mut stream,
                "200 OK",
                "text/plain",
                "agui-lens serve: POST a RunAgentInput here\n",
            )?;
            return Ok(());
        }
        _ => {
            fixed(
                &mut stream,
                "405 Method Not Allowed",
                "text/plain",
                "POST a RunAgentInput\n",
            )?;
            return Ok(());
        }
    }
    // A body that is no JSON object is no RunAgentInput: refused, and no turn of a thread.
    let input = match request.decoded_body().and_then(|body| request_body(&body)) {
        Ok(input) => input,
        Err(problem) => {
            let (n, _) = next_request(shared);
            let path: Arc<str> = Arc::from(format!("request {n} (POST {})", request.path));
            let d = unreadable_body(&path, &problem);
            shared.tell(Note::Findings(leveled(shared, vec![d])));
            fixed(
                &mut stream,
                "400 Bad Request",
                "application/json",
                &serde_json::json!({ "error": format!("the body {problem}") }).to_string(),
            )?;
            return Ok(());
        }
    };
    let thread_id = input
        .get("threadId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // A request with no thread id (missing, or no string) is of no thread: held to no other
    // request's turn (two broken clients were taken for one thread's turns), and none to it.
    let thread_key = match input.get("threadId") {
        Some(Value::String(_)) => thread_id.clone(),
        _ => {
            static UNTHREADED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let k = UNTHREADED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!("\u{0}no threadId {k}")
        }
    };
    let run_id = input
        .get("runId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // Which turn this is, and what the client should hold.
    let (n, mut turn_index, mut previous, unsettled, retry) = take_turn(shared, &thread_key);
    // How the request's thread is named: none, or an empty id, is said so.
    let thread_shown = match input.get("threadId") {
        Some(Value::String(id)) if id.is_empty() => "thread \"\"".to_owned(),
        Some(Value::String(id)) => format!("thread {id}"),
        _ => "no threadId".to_owned(),
    };
    let path_of = |turn: usize| -> Arc<str> {
        Arc::from(format!("request {n} ({thread_shown}, turn {})", turn + 1))
    };
    // What the request is held to against what the client should hold.
    let held_to = |held: Option<&Folded>, path: &Arc<str>| -> Vec<Diagnostic> {
        held.map(|held| {
            next_turn_findings(&input, held, path)
                .into_iter()
                .filter(|d| !(unsettled && d.rule == RuleId::RequestStateMismatch))
                .collect()
        })
        .unwrap_or_default()
    };
    let mut path = path_of(turn_index);
    let mut next_turn = held_to(previous.as_ref(), &path);
    if let Some(retry) = retry.filter(|_| !next_turn.is_empty()) {
        // The turn before was cut by a fatal fault: a request that fits what the client held
        // before it, and not what came, retries it, and is served it again.
        let retry_path = path_of(retry.turn);
        let as_retry = held_to(retry.before.as_ref(), &retry_path);
        if as_retry.is_empty() {
            turn_index = retry.turn;
            previous = retry.before;
            path = retry_path;
            next_turn = as_retry;
            let mut guard = shared.threads.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(thread) = guard.1.get_mut(&thread_key) {
                thread.turn = retry.turn + 1;
            }
        }
    }
    let turn = &shared.turns[turn_index];
    let mut findings = input_findings(shared.settings.schemas, &input, shared.asked, &path);
    findings.extend(sent_findings(&input, shared.asked, &path));
    findings.extend(next_turn);
    let findings = leveled(shared, findings);
    if !findings.is_empty() {
        shared.tell(Note::Findings(findings));
    }

    let events = rewrite(&turn.events, &thread_id, &run_id);
    let faults = &shared.faults;
    let proto = match faults.transport {
        ServeTransport::Proto => true,
        ServeTransport::Sse => false,
        // Read as HTTP has it: case aside, and a type refused with `q=0` is not asked for.
        ServeTransport::Auto => request.header("accept").is_some_and(|a| {
            agui_lens_core::read::accepted_formats(a)
                .contains(&agui_lens_core::read::InputFormat::Proto)
        }),
    };
    // Over protobuf the client receives what the wire carries of each event: it is held to
    // that, and told what was left out.
    let (over_proto, lost) = if proto {
        over_protobuf(&events)
    } else {
        (Vec::new(), Vec::new())
    };
    let received = if proto { &over_proto } else { &events };
    // A client that met an error status (the capture's, or `--status`) read none of the
    // events: it holds what it sent. One whose body ended halfway (`--truncate`, `--reset`,
    // `--cut`) holds what came whole: the frames before the middle one (see `steps`).
    let folded = if turn.status.is_some() || faults.status.is_some() {
        fold(&input, &[], &path)
    } else if faults.truncate || faults.reset || faults.cut {
        fold(&input, &received[..received.len() / 2], &path)
    } else {
        fold(&input, received, &path)
    };
    // However the turn ends, the thread's next request may go ahead.
    let mut ending = TurnEnding {
        shared,
        thread_id: &thread_key,
        turn: turn_index,
        served: None,
        before: previous,
        fatal: faults.truncate || faults.reset || faults.cut,
    };
    let last = turn_index + 1 == shared.turns.len();
    let lost = match lost.len() {
        0 => String::new(),
        n => {
            let shown: Vec<&str> = lost.iter().take(5).map(String::as_str).collect();
            let more = if n > 5 {
                format!(" and {} more", n - 5)
            } else {
                String::new()
            };
            format!(
                ", less what the protobuf form does not carry ({}{more}): the client is held \
                 to what it was sent",
                shown.join("; ")
            )
        }
    };
    let answered = match &turn.status {
        Some(status) => format!(", answered {status} as the capture recorded"),
        None => String::new(),
    };
    // What the faults make of the turn: the log says what the client is sent, not the script.
    let faulted = if faults.truncate {
        ", the body ended halfway, without the run's terminal event (--truncate)"
    } else if faults.reset {
        ", the connection reset halfway (--reset)"
    } else if faults.cut {
        ", the connection closed inside the middle frame (--cut)"
    } else {
        ""
    };
    shared.tell(Note::Said(match faults.status {
        Some(code) => format!(
            "serve: {path}: answered {code} with an HTML page (--status), none of the {} of {}",
            agui_lens_core::text::plural(events.len() as u64, "event"),
            turn.name
        ),
        None => format!(
            "serve: {path}: {} of {} as {}{lost}{answered}{faulted}",
            agui_lens_core::text::plural(events.len() as u64, "event"),
            turn.name,
            if proto { "protobuf" } else { "SSE" }
        ),
    }));
    let serving = &shared.serving;
    serving.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let result = respond(
        &mut stream,
        &events,
        proto,
        turn.status.as_deref().unwrap_or("200 OK"),
        faults,
    );
    // A turn a stop cut stays counted (see `Shared::serving`).
    if !matches!(result, Ok(Body::Stopped)) {
        serving.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
    match &result {
        Ok(Body::Stopped) => {}
        Ok(Body::ClientGone(sent, total)) => {
            let why = format!(
                "{path}: the client went away after {sent} of the body's {total} bytes: the \
                 turn was not served whole"
            );
            shared.tell(Note::Said(format!("serve: {why}")));
            // An earlier turn is served again to the retry; the last one ends a `--once` run.
            if last {
                shared.tell(Note::NotServedWhole(why));
            }
        }
        // Served whole, or cut as the faults asked: the client holds what it was sent.
        Ok(Body::Written) => {
            ending.served = Some(folded);
            if faults.status.is_none() {
                shared.tell(Note::Served(events.len() as u64));
            }
        }
        Err(_) => {}
    }
    drop(ending);
    if last {
        shared.tell(Note::LastTurnServed);
    }
    result.map(|_| ())
}

/// The turn a thread's request takes, with what the client should hold (what the thread's
/// last stream served whole left it). A request that comes while a turn of its thread is
/// being served (a client that submits twice) waits for that turn to end, up to 10 s, and is
/// then held to it, as one sent after it is.
/// The request's number, the turn it takes, what the client should hold, whether the turn
/// that left it so has a script that leaves the state unsettled ([`Turn::unsettled_state`]),
/// and, when a fatal fault cut that turn, what a client that retries it holds ([`Retry`]).
fn take_turn(
    shared: &Shared,
    thread_id: &str,
) -> (u64, usize, Option<Folded>, bool, Option<Retry>) {
    crate::live::after_previous_turn(
        &shared.threads,
        |(_, threads)| threads.get(thread_id).is_some_and(|t| t.under_way),
        |(count, threads)| {
            *count += 1;
            let thread = threads.entry(thread_id.to_owned()).or_insert(ThreadState {
                turn: 0,
                folded: None,
                folded_by: 0,
                retry: None,
                under_way: false,
            });
            let index = thread.turn.min(shared.turns.len() - 1);
            thread.turn += 1;
            thread.under_way = true;
            // A turn whose script leaves the state unsettled settles nothing to hold the
            // client's state to.
            let unsettled =
                thread.folded.is_some() && shared.turns[thread.folded_by].unsettled_state;
            let retry = thread.retry.take();
            (*count, index, thread.folded.take(), unsettled, retry)
        },
    )
}

/// The end of a turn being served, on drop: the thread's next request may go ahead. Served
/// whole (`served`), the client holds the turn's fold; otherwise it never had the turn's end
/// and holds what it held `before`, and its next request (a retry) takes the turn again.
struct TurnEnding<'a> {
    shared: &'a Shared,
    thread_id: &'a str,
    turn: usize,
    served: Option<Folded>,
    before: Option<Folded>,
    /// The turn was cut by a fault the spec makes fatal: its retry may come ([`Retry`]).
    fatal: bool,
}

impl Drop for TurnEnding<'_> {
    fn drop(&mut self) {
        let mut guard = self
            .shared
            .threads
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(thread) = guard.1.get_mut(self.thread_id) {
            thread.under_way = false;
            match self.served.take() {
                Some(folded) => {
                    thread.folded = Some(folded);
                    thread.folded_by = self.turn;
                    thread.retry = self.fatal.then(|| Retry {
                        before: self.before.take(),
                        turn: self.turn,
                    });
                }
                None => {
                    thread.folded = self.before.take();
                    if thread.turn == self.turn + 1 {
                        thread.turn = self.turn;
                    }
                }
            }
        }
    }
}

/// The next request's number, for a request that takes no turn.
fn next_request(shared: &Shared) -> (u64, ()) {
    let mut guard = shared.threads.lock().unwrap_or_else(|e| e.into_inner());
    guard.0 += 1;
    (guard.0, ())
}

/// Findings at the levels the flags and config set; those turned off dropped.
fn leveled(shared: &Shared, findings: Vec<Diagnostic>) -> Vec<Diagnostic> {
    findings
        .into_iter()
        .filter_map(|mut d| {
            d.severity = shared.settings.levels.severity(d.rule)?;
            Some(d)
        })
        .collect()
}

/// The turn's events with the request's threadId on every event that carries one, and its
/// runId on the events of the stream's last run (a replayed earlier run keeps its own).
fn rewrite(events: &[Value], thread_id: &str, run_id: &str) -> Vec<Value> {
    let last_run = events
        .iter()
        .rev()
        .find(|e| e.get("type").and_then(Value::as_str) == Some("RUN_STARTED"))
        .and_then(|e| e.get("runId"))
        .cloned();
    events
        .iter()
        .map(|event| {
            let mut event = event.clone();
            if let Some(object) = event.as_object_mut() {
                if !thread_id.is_empty() && object.get("threadId").is_some_and(Value::is_string) {
                    object.insert("threadId".into(), Value::String(thread_id.to_owned()));
                }
                if !run_id.is_empty()
                    && last_run.is_some()
                    && object.get("runId") == last_run.as_ref()
                {
                    object.insert("runId".into(), Value::String(run_id.to_owned()));
                }
            }
            event
        })
        .collect()
}

/// What a client that sent `input` holds once it applied `events`.
pub(super) fn fold(input: &Value, events: &[Value], path: &Arc<str>) -> Folded {
    let mut folder = Folder::new(DEFAULT_STATE_LIMIT).with_input(input);
    for (i, value) in events.iter().enumerate() {
        let loc = Location {
            path: path.clone(),
            line: i as u64 + 1,
            offset: 0,
            index: i as u64,
        };
        folder.apply(&Event::from_value(loc, value.clone()));
    }
    folder.finish()
}

/// The events as a protobuf client receives them (each encoded and decoded again; one with
/// no protobuf form is not sent), and what the wire left out, event by event.
fn over_protobuf(events: &[Value]) -> (Vec<Value>, Vec<String>) {
    let mut received = Vec::with_capacity(events.len());
    let mut lost = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let ty = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("an event with no type");
        let Ok(encoded) = proto::encode_event(event) else {
            lost.push(format!("event {i} ({ty}) left out"));
            continue;
        };
        if !encoded.lost.is_empty() {
            lost.push(format!(
                "event {i} ({ty}) without {}",
                encoded.lost.join(", ")
            ));
        }
        if let Ok(proto::Decoded::Event(back, _)) = proto::decode_event(&encoded.bytes) {
            received.push(Value::Object(back));
        }
    }
    (received, lost)
}

/// One frame of the body per event, framed as asked.
fn frames(events: &[Value], proto: bool, faults: &Faults) -> Vec<Vec<u8>> {
    let end = faults.line_end;
    let mut frames = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let mut frame = Vec::new();
        if proto {
            match proto::encode_event(event) {
                Ok(encoded) => proto::push_frame(&encoded.bytes, &mut frame),
                // An event with no protobuf form is left out, as `cat -o x.pb` leaves it.
                Err(_) => continue,
            }
            frames.push(frame);
            continue;
        }
        if faults.comments {
            frame.extend_from_slice(format!(": agui-lens serve, event {i}{end}").as_bytes());
        }
        if faults.fields {
            let ty = event
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("message");
            frame.extend_from_slice(
                format!("event: {ty}{end}id: {i}{end}retry: 3000{end}").as_bytes(),
            );
        }
        frame.extend_from_slice(b"data: ");
        frame.extend_from_slice(&serde_json::to_vec(event).unwrap_or_default());
        frame.extend_from_slice(end.as_bytes());
        frame.extend_from_slice(end.as_bytes());
        if faults.comments {
            frame.extend_from_slice(format!(":{end}{end}").as_bytes());
        }
        frames.push(frame);
    }
    if faults.bom && !proto {
        if let Some(first) = frames.first_mut() {
            first.splice(0..0, [0xEF, 0xBB, 0xBF]);
        }
    }
    frames
}

/// What is done on the wire, in order.
enum Step {
    Data(Vec<u8>),
    Pause(Duration),
    /// Close without ending the body.
    Cut,
    /// Close with a TCP reset.
    Reset,
}

/// The body's steps: frames split into chunks as asked, the pause, cut or reset halfway.
fn steps(frames: Vec<Vec<u8>>, faults: &Faults) -> Vec<Step> {
    let middle = frames.len() / 2;
    let mut steps = Vec::new();
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut rng = faults
        .split_random
        .map(|seed| seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut flush = |pieces: &mut Vec<Vec<u8>>, steps: &mut Vec<Step>| {
        let bytes: Vec<u8> = pieces.drain(..).flatten().collect();
        if bytes.is_empty() {
            return;
        }
        if faults.split_bytes {
            steps.extend(bytes.iter().map(|b| Step::Data(vec![*b])));
        } else if let Some(state) = rng.as_mut() {
            let mut at = 0;
            while at < bytes.len() {
                // xorshift64
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                let size = 1 + (*state % 48) as usize;
                let to = (at + size).min(bytes.len());
                steps.push(Step::Data(bytes[at..to].to_vec()));
                at = to;
            }
        } else {
            steps.push(Step::Data(bytes));
        }
    };
    for (i, frame) in frames.into_iter().enumerate() {
        if i == middle && i > 0 {
            if let Some(pause) = faults.pause {
                flush(&mut pieces, &mut steps);
                steps.push(Step::Pause(pause));
            }
            if faults.truncate {
                flush(&mut pieces, &mut steps);
                return steps;
            }
            if faults.reset {
                flush(&mut pieces, &mut steps);
                steps.push(Step::Reset);
                return steps;
            }
            if faults.cut {
                pieces.push(frame[..frame.len() / 2].to_vec());
                flush(&mut pieces, &mut steps);
                steps.push(Step::Cut);
                return steps;
            }
        }
        pieces.push(frame);
        if !faults.split_bytes && faults.split_random.is_none() {
            flush(&mut pieces, &mut steps);
        }
    }
    flush(&mut pieces, &mut steps);
    steps
}

/// How a turn's body ended.
enum Body {
    /// Written to its end, or cut as the faults asked.
    Written,
    /// The client went away after so many bytes of the body's so many.
    ClientGone(u64, u64),
    /// A stop (Ctrl-C, SIGTERM) came before its end.
    Stopped,
}

/// Answers with `events` as a stream under `status` (the status line's code and reason),
/// spoiled as `faults` asks.
fn respond(
    stream: &mut TcpStream,
    events: &[Value],
    proto: bool,
    status: &str,
    faults: &Faults,
) -> Result<Body> {
    if let Some(code) = faults.status {
        let reason = match code {
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            504 => "Gateway Timeout",
            _ => "Error",
        };
        let body = format!(
            "<!DOCTYPE html>\n<html><head><title>{code} {reason}</title></head>\n<body><h1>{code} {reason}</h1><p>agui-lens serve --status {code}</p></body></html>\n"
        );
        fixed(
            stream,
            &format!("{code} {reason}"),
            "text/html; charset=utf-8",
            &body,
        )?;
        return Ok(Body::Written);
    }
    let content_type = faults.content_type.clone().unwrap_or_else(|| {
        if proto {
            PROTO_TYPE.to_owned()
        } else {
            "text/event-stream".to_owned()
        }
    });
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n{CORS}Connection: close\r\n\r\n"
    )?;
    stream.flush()?;
    let steps = steps(frames(events, proto, faults), faults);
    let total: u64 = steps
        .iter()
        .map(|step| match step {
            Step::Data(bytes) => bytes.len() as u64,
            _ => 0,
        })
        .sum();
    let mut sent = 0u64;
    let mut first = true;
    for step in steps {
        if agui_lens_core::stop::requested() {
            return Ok(Body::Stopped);
        }
        match step {
            Step::Data(bytes) => {
                if !first {
                    if let Some(drip) = faults.drip {
                        if !wait_for_client(stream, drip) {
                            return Ok(Body::ClientGone(sent, total));
                        }
                    }
                }
                first = false;
                let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
                chunk.extend_from_slice(&bytes);
                chunk.extend_from_slice(b"\r\n");
                if let Err(err) = stream.write_all(&chunk).and_then(|()| stream.flush()) {
                    // The client went away: its business, not a failure of serve, but said:
                    // the turn was not served whole.
                    if gone(&err) {
                        return Ok(Body::ClientGone(sent, total));
                    }
                    return Err(err.into());
                }
                sent += bytes.len() as u64;
            }
            // A client that goes away during the pause is seen to go at once: its retry was
            // held up until the pause ended and the next write failed.
            Step::Pause(pause) => {
                if !wait_for_client(stream, pause) {
                    return Ok(Body::ClientGone(sent, total));
                }
            }
            Step::Cut => return Ok(Body::Written),
            Step::Reset => {
                reset(stream);
                return Ok(Body::Written);
            }
        }
    }
    match stream.write_all(b"0\r\n\r\n").and_then(|()| stream.flush()) {
        Err(err) if !gone(&err) => Err(err.into()),
        _ => Ok(Body::Written),
    }
}

pub(super) fn gone(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
    )
}

/// Sleeps, waking early when the user asks to stop, and looking at the connection meanwhile:
/// false as soon as the client has gone (it closed the connection or reset it; it sent its
/// whole request before, so anything it shuts down now is its going away).
fn wait_for_client(stream: &TcpStream, how_long: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let until = Instant::now() + how_long;
    while !agui_lens_core::stop::requested() {
        let mut byte = 0u8;
        // SAFETY: a peek of at most one byte into a local, on a descriptor this stream owns.
        let peeked = unsafe {
            libc::recv(
                stream.as_raw_fd(),
                (&raw mut byte).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        // Gone as a write would find it: closed (an end of its stream), reset or aborted.
        let went = match peeked {
            0 => true,
            -1 => gone(&io::Error::last_os_error()),
            _ => false,
        };
        if went {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        thread::sleep((until - now).min(Duration::from_millis(50)));
    }
    true
}

/// Closes with a TCP reset: SO_LINGER on with a zero timeout, then the socket dropped.
fn reset(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a descriptor this stream owns, with a value of the size given.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn faults() -> Faults {
        Faults {
            transport: ServeTransport::Sse,
            split_bytes: false,
            split_random: None,
            line_end: "\n",
            bom: false,
            comments: false,
            fields: false,
            drip: None,
            pause: None,
            cut: false,
            truncate: false,
            reset: false,
            status: None,
            content_type: None,
        }
    }

    fn body(steps: &[Step]) -> Vec<u8> {
        steps
            .iter()
            .flat_map(|s| match s {
                Step::Data(b) => b.clone(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn the_last_run_takes_the_requests_ids_and_earlier_runs_keep_theirs() {
        let events = vec![
            json!({"type": "RUN_STARTED", "threadId": "t0", "runId": "a"}),
            json!({"type": "RUN_FINISHED", "threadId": "t0", "runId": "a"}),
            json!({"type": "RUN_STARTED", "threadId": "t0", "runId": "b"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
            json!({"type": "RUN_FINISHED", "threadId": "t0", "runId": "b"}),
        ];
        let out = rewrite(&events, "T", "R");
        assert_eq!(out[0]["runId"], "a");
        assert_eq!(out[2]["runId"], "R");
        assert_eq!(out[4]["runId"], "R");
        assert!(
            out.iter()
                .filter(|e| e.get("threadId").is_some())
                .all(|e| e["threadId"] == "T")
        );
        assert_eq!(out[3], events[3]);
    }

    #[test]
    fn splitting_keeps_the_bytes_and_faults_change_only_what_they_say() {
        let events = vec![
            json!({"type": "A"}),
            json!({"type": "B"}),
            json!({"type": "C"}),
        ];
        let plain = body(&steps(frames(&events, false, &faults()), &faults()));
        assert_eq!(
            plain,
            b"data: {\"type\":\"A\"}\n\ndata: {\"type\":\"B\"}\n\ndata: {\"type\":\"C\"}\n\n"
        );
        let bytes = Faults {
            split_bytes: true,
            ..faults()
        };
        let split = steps(frames(&events, false, &bytes), &bytes);
        assert_eq!(split.len(), plain.len());
        assert_eq!(body(&split), plain);
        let random = Faults {
            split_random: Some(7),
            ..faults()
        };
        let many: Vec<Value> = (0..20).map(|i| json!({"type": "A", "i": i})).collect();
        let whole = body(&steps(frames(&many, false, &faults()), &faults()));
        let split = steps(frames(&many, false, &random), &random);
        let sizes: std::collections::BTreeSet<usize> = split
            .iter()
            .map(|s| match s {
                Step::Data(b) => b.len(),
                _ => 0,
            })
            .collect();
        assert!(split.len() > 10 && sizes.len() > 5, "{sizes:?}");
        assert_eq!(body(&split), whole);
        let crlf = Faults {
            line_end: "\r\n",
            bom: true,
            fields: true,
            ..faults()
        };
        let text = body(&steps(frames(&events[..1], false, &crlf), &crlf));
        assert_eq!(
            text,
            b"\xEF\xBB\xBFevent: A\r\nid: 0\r\nretry: 3000\r\ndata: {\"type\":\"A\"}\r\n\r\n"
        );
        let cut = Faults {
            cut: true,
            ..faults()
        };
        let steps = steps(frames(&events, false, &cut), &cut);
        assert!(matches!(steps.last(), Some(Step::Cut)));
        let sent = body(&steps);
        assert!(sent.starts_with(b"data: {\"type\":\"A\"}\n\ndata: {\"ty"));
        assert!(!sent.ends_with(b"\n\n"));
    }
}
