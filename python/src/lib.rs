//! The Python module `agui_lens._agui_lens`: agui-lens-core's check, incremental checker and
//! fold, called from Python. Findings and folds cross as JSON text (the pure-Python layer,
//! `agui_lens/__init__.py`, turns them into objects); errors cross as `AguiLensError` with the
//! command line's messages; a panic is caught here and crosses as that error too.

use std::cell::RefCell;
use std::io::{self, Cursor, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{Value, json};

use agui_lens_core::check::Checker as CoreChecker;
use agui_lens_core::check::capabilities::levels_for;
use agui_lens_core::check::catalog::{Level, Levels};
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::{Context, Fed};
use agui_lens_core::check::opened::check_sent;
use agui_lens_core::check::recorded::{self, Recorded, check_findings};
use agui_lens_core::check::request::input_findings;
use agui_lens_core::check::rules::protocol::{DEFAULT_STATE_LIMIT, ProtocolOptions};
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::check::stream::{for_each_fed, holding_warnings, not_a_stream, require_events};
use agui_lens_core::compact::verify::{count_errors_of, judge, read_back, verification_levels_for};
use agui_lens_core::compact::{Compactor, Level as CompactLevel};
use agui_lens_core::compare::Level as CompareLevel;
use agui_lens_core::compare::comparison::plain;
use agui_lens_core::compare::normalize::Settings;
use agui_lens_core::compare::streams::diff_paths;
use agui_lens_core::fold::threads::{fold_opened, pick};
use agui_lens_core::protocol::version::Version;
use agui_lens_core::read::{
    self, Batch, Compression, FrameKind, InputFormat, InputSpec, Opened, ReadOptions,
    RequestCarrier,
};
use agui_lens_core::report::human::Human;
use agui_lens_core::report::{self, DiagnosticRecord, Format, Reporter, Summary};
use agui_lens_core::write::{EventWriter, Output};

create_exception!(
    agui_lens._agui_lens,
    AguiLensError,
    PyValueError,
    "agui-lens could not do what was asked: an unreadable input, a bad option, an input that holds no AG-UI events where a stream is needed."
);

/// How many times Ctrl-C stopped the calls under way.
static STOPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many calls are under way: the stop Ctrl-C asked for is forgotten when the last ends.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A call leaving: the last one out forgets a stop (the next call runs whole).
struct Leaving;

impl Drop for Leaving {
    fn drop(&mut self) {
        if IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            agui_lens_core::stop::clear();
        }
    }
}

/// Runs `work` with the interpreter free for other threads, turning an error or a panic into
/// an `AguiLensError` (a panic is a bug of agui-lens, never the caller's to crash on).
///
/// The work runs on a thread of its own while this one looks at the interpreter's signals
/// every tenth of a second: Ctrl-C stops it as it stops the command line (the readers end at
/// their next batch), and raises KeyboardInterrupt once it has ended, instead of when a long
/// call returns. A stop is asked of every call under way (the stop is one for the process).
fn guarded<T: Send>(py: Python<'_>, work: impl FnOnce() -> Result<T> + Send) -> PyResult<T> {
    // Ctrl-C stops every call under way: one that ran meanwhile may have stopped early, and
    // what it returns would not be whole.
    IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _leaving = Leaving;
    let stops = STOPS.load(std::sync::atomic::Ordering::SeqCst);
    if agui_lens_core::stop::requested() {
        return Err(AguiLensError::new_err(
            "stopped: Ctrl-C (KeyboardInterrupt on the main thread) is stopping every call",
        ));
    }
    let outcome = std::thread::scope(|scope| {
        let (done, mut result) = std::sync::mpsc::channel();
        scope.spawn(move || {
            let _ = done.send(catch_unwind(AssertUnwindSafe(work)));
        });
        loop {
            // The receiver goes with the wait (it may not be shared) and comes back.
            let (back, waited) = py.detach(move || {
                let waited = result.recv_timeout(std::time::Duration::from_millis(100));
                (result, waited)
            });
            result = back;
            match waited {
                Ok(outcome) => break Ok(outcome),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(interrupt) = py.check_signals() {
                        STOPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        agui_lens_core::stop::insist(2);
                        let _ = py.detach(move || result.recv());
                        break Err(interrupt);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break Ok(Err(Box::new("the work ended without a result")
                        as Box<dyn std::any::Any + Send>));
                }
            }
        }
    })?;
    if STOPS.load(std::sync::atomic::Ordering::SeqCst) != stops {
        return Err(AguiLensError::new_err(
            "stopped: Ctrl-C (KeyboardInterrupt on the main thread) stopped this call too, \
             which may not have read its input whole",
        ));
    }
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(AguiLensError::new_err(format!("{err:#}"))),
        Err(panic) => Err(AguiLensError::new_err(format!(
            "internal error in agui-lens (please report it): {}",
            panic_text(&panic)
        ))),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic".to_owned()
    }
}

/// A stream handed over from memory: its bytes, or its events one by one (each item one
/// frame, whatever it holds).
#[derive(FromPyObject)]
enum Data {
    Bytes(Vec<u8>),
    Items(Vec<Vec<u8>>),
}

/// What is recorded beside a stream file (see [`recorded::recorded`]).
#[derive(Default)]
struct Recording {
    /// The request it answers.
    request: Option<Arc<Value>>,
    /// Whether that request is in the file `run --record` writes beside the stream (an
    /// exchange's `request.json` stays where it is).
    request_file: bool,
    /// Why it was cut when it was recorded.
    cut: Option<String>,
    /// The file of what only the call that recorded it found.
    findings: Option<PathBuf>,
    /// The status with which the agent refused an input sent invalid on purpose.
    refused: Option<u16>,
}

/// What to read: a file, or bytes named `name` in findings.
struct Source {
    path: Option<PathBuf>,
    data: Option<Data>,
    name: String,
    format: Option<InputFormat>,
    /// The stream of a browser capture to read (`--entry N`).
    entry: Option<usize>,
}

impl Source {
    fn new(
        path: Option<PathBuf>,
        data: Option<Data>,
        name: Option<String>,
        format: Option<&str>,
    ) -> Result<Source> {
        let format = format.map(parse_format).transpose()?;
        if path
            .as_ref()
            .is_some_and(|path| path.as_os_str().is_empty())
        {
            return Err(anyhow!("an empty path names no file"));
        }
        let name = match (&path, name) {
            (_, Some(name)) => name,
            (Some(path), None) => path.to_string_lossy().into_owned(),
            (None, None) => "<bytes>".to_owned(),
        };
        if path.is_none() && data.is_none() {
            return Err(anyhow!("no input: give a path or the stream's bytes"));
        }
        Ok(Source {
            path,
            data,
            name,
            format,
            entry: None,
        })
    }

    /// The stream of a browser capture to read, as `--entry N` picks it.
    fn entry(self, entry: Option<usize>) -> Source {
        Source { entry, ..self }
    }

    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format,
            entry: self.entry,
            ..ReadOptions::default()
        }
    }

    /// What is recorded beside a file `run --record` or the proxy wrote (nothing for bytes).
    fn recording(&self) -> Recording {
        let mut recording = Recording::default();
        if let Some(path) = &self.path
            && let Some(Recorded::Events {
                request,
                cut,
                findings,
                refused,
                ..
            }) = recorded::recorded(path)
        {
            recording = Recording {
                request_file: recorded::request_file_of(path).is_file(),
                request,
                cut,
                findings,
                refused,
            };
        }
        recording
    }

    fn open(&self) -> Result<Opened> {
        // A capture of several streams is told to pick one as the command line is; here
        // that is the `entry` keyword.
        self.open_as_read().map_err(|err| {
            let said = format!("{err:#}");
            if !said.contains("--entry ") {
                return err;
            }
            // `--entry N` is the `entry` keyword here; bytes have no name `#N` could follow.
            let mut said = said.as_str();
            let mut kept = String::with_capacity(said.len());
            while let Some(at) = said.find("--entry ") {
                kept.push_str(&said[..at]);
                let rest = &said[at + "--entry ".len()..];
                let token = rest
                    .find(|c: char| !c.is_ascii_alphanumeric())
                    .unwrap_or(rest.len());
                kept.push_str("entry=");
                kept.push_str(&rest[..token]);
                said = &rest[token..];
            }
            kept.push_str(said);
            if self.path.is_none() {
                if let Some(at) = kept.find(", or name it ") {
                    kept.truncate(at);
                }
            }
            anyhow!("{kept}")
        })
    }

    fn open_as_read(&self) -> Result<Opened> {
        let options = self.read_options();
        match (&self.path, &self.data) {
            // A stream of a capture is named as findings name it (`capture.har#3`), as on
            // the command line; `-` is a file of that name here, not this process's stdin.
            (Some(path), _) if path.as_os_str() == "-" => {
                read::open(&InputSpec::File(path.clone()), &options)
            }
            (Some(path), _) => read::open(&InputSpec::named(path), &options),
            // Bytes named like a file are read as that file would be (`run.sse` as SSE).
            (None, Some(Data::Bytes(data))) => read::open_reader(
                Arc::from(self.name.as_str()),
                Box::new(Cursor::new(data.clone())),
                read::format_from_extension(std::path::Path::new(&self.name)),
                &options,
            ),
            (None, Some(Data::Items(items))) => Ok(read::open_items(
                Arc::from(self.name.as_str()),
                items.clone(),
                &options,
            )),
            (None, None) => unreachable!("checked in Source::new"),
        }
    }
}

fn parse_format(text: &str) -> Result<InputFormat> {
    Ok(match text {
        "jsonl" => InputFormat::Jsonl,
        "json" => InputFormat::Json,
        "sse" => InputFormat::Sse,
        "proto" => InputFormat::Proto,
        other => {
            return Err(anyhow!(
                "unknown input format `{other}`: use jsonl, json, sse or proto"
            ));
        }
    })
}

/// What to check with: the rule levels (`rules`, applied in order as `--deny`, `--warn`,
/// `--allow` and `--note` are), the protocol version runs that declare none are held to, and
/// the RunAgentInput the stream answers (JSON text).
struct Options {
    levels: Levels,
    protocol: Option<Version>,
    input: Option<Arc<Value>>,
}

impl Options {
    fn new(
        rules: Vec<(String, String)>,
        protocol: Option<&str>,
        input: Option<&str>,
    ) -> Result<Options> {
        let mut levels = Levels::default();
        for (selector, level) in &rules {
            let parsed = Level::parse(level).ok_or_else(|| {
                anyhow!("rule `{selector}` has level `{level}`; use deny, warn, allow or note")
            })?;
            levels.set(selector, parsed)?;
        }
        let levels = levels_for(None, &levels);
        let protocol = protocol
            .map(|text| {
                Version::parse(text).ok_or_else(|| {
                    anyhow!("unknown protocol version `{text}`: use 1.1, 1.0 or 0.x")
                })
            })
            .transpose()?;
        let input = input
            .map(|text| serde_json::from_str::<Value>(text).context("reading the RunAgentInput"))
            .transpose()?;
        if let Some(input) = &input {
            if !input.is_object() {
                return Err(anyhow!("the RunAgentInput is no JSON object"));
            }
        }
        Ok(Options {
            levels,
            protocol,
            input: input.map(Arc::new),
        })
    }

    fn context<'a>(&'a self, schemas: &'a SchemaSet) -> Context<'a> {
        Context {
            protocol: ProtocolOptions {
                version: self.protocol,
                ..ProtocolOptions::default()
            },
            ..Context::new(schemas, &self.levels)
        }
    }
}

/// A writer whose bytes can be taken afterwards (reporters take their writer whole).
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

/// One finding as the Python layer reads it: the machine formats' fields and the excerpt.
fn record(d: &Diagnostic) -> Value {
    let mut value = serde_json::to_value(DiagnosticRecord::from(d)).expect("a record serializes");
    value["excerpt"] = json!(d.excerpt);
    value
}

/// Checks one input as `agui-lens check` does. Returns JSON text of the findings and the
/// input's counts, the human report (plain) and the `--format json` report.
#[pyfunction]
#[pyo3(signature = (path=None, data=None, name=None, format=None, input=None, protocol=None, rules=Vec::new(), entry=None))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<Data>,
    name: Option<String>,
    format: Option<String>,
    input: Option<String>,
    protocol: Option<String>,
    rules: Vec<(String, String)>,
    entry: Option<usize>,
) -> PyResult<(String, String, String)> {
    guarded(py, move || {
        let source = Source::new(path, data, name, format.as_deref())?.entry(entry);
        let options = Options::new(rules, protocol.as_deref(), input.as_deref())?;
        let schemas = SchemaSet::for_process(None)?;
        let ctx = options.context(schemas);
        // A recorded exchange's files (proxy --record, test --artifacts) are checked as the
        // CLI checks them, unless the caller says what the stream answers.
        let recorded = match (&source.path, &options.input) {
            (Some(path), None) => recorded::recorded(path).map(|r| (path.clone(), r)),
            _ => None,
        };
        let human_out = Shared::default();
        let json_out = Shared::default();
        let mut reporters: Vec<Box<dyn Reporter>> = vec![
            report::grouped(Box::new(Human::plain(Box::new(human_out.clone()))), true),
            report::reporter(Format::Json, Box::new(json_out.clone()), true)
                .expect("json is a library format"),
        ];
        let mut found = Vec::new();
        for r in &mut reporters {
            r.start_run(1)?;
        }
        let mut emit = |batch: &[Diagnostic]| -> std::io::Result<()> {
            for d in batch {
                for r in &mut reporters {
                    r.diagnostic(d)?;
                }
            }
            found.extend_from_slice(batch);
            Ok(())
        };
        let name: Arc<str> = Arc::from(source.name.as_str());
        let file = match recorded {
            Some((path, Recorded::Findings)) => check_findings(&ctx, &path, name, &mut emit)?,
            Some((path, Recorded::Failure)) => recorded::failure(&path, name),
            Some((path, Recorded::RunFindings { stream })) => {
                recorded::check_run_findings(&ctx, &path, &stream, name, &mut emit)?
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
            )) => recorded::check_recording(
                &ctx,
                source.open()?,
                false,
                request,
                cut,
                findings.as_deref(),
                no_stream,
                refused,
                &mut emit,
            )?,
            _ => check_sent(
                &ctx,
                source.open()?,
                false,
                options.input.clone(),
                &mut emit,
            )?,
        };
        // What `framing/no-events` says under a level that does not fail is still no checked
        // stream, as on the command line.
        let mut file = file;
        file.fail_if_checked_nothing();
        let mut summary = Summary::default();
        summary.add(&file);
        for r in &mut reporters {
            r.end_file(&file)?;
            r.finish(&summary)?;
        }
        let result = json!({
            "diagnostics": found.iter().map(record).collect::<Vec<_>>(),
            "file": file,
            "failure": file.failure_text(),
        });
        Ok((result.to_string(), human_out.text(), json_out.text()))
    })
}

/// Folds one input as `agui-lens fold` does (the thread of the last run, or `thread`).
/// Returns the JSON text it prints.
#[pyfunction]
#[pyo3(signature = (path=None, data=None, name=None, format=None, thread=None, entry=None))]
fn fold(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<Data>,
    name: Option<String>,
    format: Option<String>,
    thread: Option<String>,
    entry: Option<usize>,
) -> PyResult<(String, Vec<String>)> {
    guarded(py, move || {
        let source = Source::new(path, data, name, format.as_deref())?.entry(entry);
        let recording = source.recording();
        let opened = source.open()?;
        let max_line = source.read_options().max_line;
        // A recording's client started from the state its request sent, as `fold FILE` does.
        let initial = recorded::request_state(recording.request.as_deref());
        let (folded, mut warnings) = holding_warnings(|| {
            let threads = fold_opened(
                opened,
                max_line,
                DEFAULT_STATE_LIMIT,
                initial.as_ref(),
                thread.as_deref(),
            )?;
            pick(threads, thread.as_deref())
        });
        // Cut by its recorder, or ended early as its call found: said, as the command says it.
        let part = recorded::part_of(recording.cut.as_deref(), recording.findings.as_deref());
        if let Some(cut) = part {
            warnings.push(recorded::folded_cut(&source.name, &cut));
        }
        Ok((folded?.json_text(false), warnings))
    })
}

/// What [`events`] gives Python: each event's JSON, how many frames held none, the error
/// status a capture's answer came with, and what is said of frames the official client
/// reads as one.
type EventsRead = (Vec<String>, u64, Option<String>, Option<String>);

/// The events of one input, each as JSON text, read as `agui-lens cat` reads them; the count
/// of frames that held none; and the failed status a captured response was answered with
/// (`500 Internal Server Error`), whose events no client read; and what is said of SSE
/// frames the official client reads as one, returned apart.
#[pyfunction]
#[pyo3(signature = (path=None, data=None, name=None, format=None, entry=None))]
fn events(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<Data>,
    name: Option<String>,
    format: Option<String>,
    entry: Option<usize>,
) -> PyResult<EventsRead> {
    guarded(py, move || {
        let source = Source::new(path, data, name, format.as_deref())?.entry(entry);
        let recording = source.recording();
        let mut opened = source.open()?;
        // Half a UTF-16 pair is read, as `cat` reads it: a Python string holds it.
        opened.keep_halves = true;
        let max_line = source.read_options().max_line;
        let mut texts = Vec::new();
        // A capture's request goes with its stream, as the first RUN_STARTED's input, as
        // `cat` writes it.
        let mut carrier = RequestCarrier::of(&opened);
        let mut merged = agui_lens_core::compact::MergedFrames::default();
        let mut skipped = agui_lens_core::compact::SkippedFields::default();
        let stats = for_each_fed(&mut opened, max_line, false, |fed, _, frame| {
            merged.note(frame);
            skipped.note(frame);
            if let Fed::Event(event) = fed {
                let text = match carrier.carried(event) {
                    Some(with_input) => with_input.to_string(),
                    None => event.whole_value().to_string(),
                };
                texts.push(match event.halves {
                    true => agui_lens_core::read::halves::escape_stand_ins(&text).into_owned(),
                    false => text,
                });
            }
            Ok(())
        })?;
        // What holds no AG-UI event is no stream: not an empty one (as `cat` refuses it).
        require_events(&opened, &stats)?;
        // The frames that held no event: the caller decides whether to go on without them.
        let failed = opened.capture.as_ref().and_then(|c| c.failed_answer());
        // Frames the official client reads as one: returned apart, and said; and what only
        // the call that recorded the stream found, which the events alone do not carry.
        let merged = merged.said(&source.name, "returned");
        // Fields passed over in reading protobuf frames: the events returned lack them.
        let skipped = skipped.said(&source.name, "returned");
        let beside = recording.findings.as_deref().map(|findings| {
            format!(
                "{}: {}: the events alone do not carry it (agui_lens.check reads it)",
                source.name,
                recorded::findings_left_beside(findings)
            )
        });
        // What a browser capture holds of its response that `check` fails it for (a type
        // that is no event stream's, another transport than asked for), or the browser's
        // word that its read failed: as `cat` says it (and exits 1). A failed status is
        // returned apart.
        let capture = opened.capture.as_ref().filter(|_| failed.is_none());
        let response = capture.and_then(|capture| {
            let said =
                agui_lens_core::check::opened::capture_said(&opened.name, capture, opened.format);
            (!said.is_empty()).then(|| {
                format!(
                    "{}: {}: the events are returned as they came (agui_lens.check reports it)",
                    source.name,
                    said.join("; ")
                )
            })
        });
        let said = [merged, skipped, beside, response]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
        let said = (!said.is_empty()).then(|| said.join("; "));
        Ok((texts, stats.unreadable, failed, said))
    })
}

/// Compacts one input as `agui-lens compact FILE` does, verified the same way (it folds the
/// same and has no more errors of any rule); returns the bytes it writes to stdout.
#[pyfunction]
#[pyo3(signature = (path=None, data=None, name=None, format=None, level="deltas".to_owned(), drop_unreadable=false, rules=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn compact(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<Data>,
    name: Option<String>,
    format: Option<String>,
    level: String,
    drop_unreadable: bool,
    rules: Vec<(String, String)>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    let (bytes, note) = guarded(py, move || {
        let level = parse_level(&level)?;
        let source = Source::new(path, data, name, format.as_deref())?;
        let name = source.name.clone();
        let compacted = compact_source(
            &source,
            level,
            drop_unreadable,
            rules,
            Compression::None,
            WrittenTo::Stdout,
        )?;
        let note = compacted.carried.is_some().then(|| {
            format!(
                "{name}: the request it answers, recorded beside it, does not go with the \
                 compacted stream: agui_lens.compaction() gives the file to write beside it"
            )
        });
        match compacted.outcome {
            Outcome::Written(bytes) => Ok((bytes, note)),
            Outcome::Skipped(why) => Err(anyhow!("skipped {name}: {why}; nothing was written")),
            Outcome::Capture => Err(anyhow!(
                "{name} is a browser capture (HAR), which compact does not rewrite; \
                 `agui-lens cat FILE --entry N -o run.jsonl` extracts a stream from it"
            )),
            Outcome::NotAStream(err) => Err(err),
            Outcome::Refused(why) => Err(anyhow!("refused {name}: {why}; nothing was written")),
        }
    })?;
    Ok((PyBytes::new(py, &bytes).unbind(), note))
}

/// Compacts one input as `compact` does, but says what became of it instead of raising when
/// it is no stream or its compaction is refused: the bytes to write (compressed as
/// `compression` says: `gzip`, `zstd`, or plain), if any, and JSON text of the counts the
/// command prints for a file (`status`: compacted, kept, skipped or refused).
#[pyfunction]
#[pyo3(signature = (path=None, data=None, name=None, format=None, level="deltas".to_owned(), drop_unreadable=false, compression=None, rules=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn compact_report(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<Data>,
    name: Option<String>,
    format: Option<String>,
    level: String,
    drop_unreadable: bool,
    compression: Option<String>,
    rules: Vec<(String, String)>,
) -> PyResult<(Option<Py<PyBytes>>, String)> {
    let (bytes, report) = guarded(py, move || {
        let level = parse_level(&level)?;
        let compression = match compression.as_deref() {
            None | Some("none") => Compression::None,
            Some("gzip") => Compression::Gzip,
            Some("zstd") => Compression::Zstd,
            Some(other) => {
                return Err(anyhow!(
                    "unknown compression `{other}`: use gzip, zstd or none"
                ));
            }
        };
        let source = Source::new(path, data, name, format.as_deref())?;
        let c = compact_source(
            &source,
            level,
            drop_unreadable,
            rules,
            compression,
            WrittenTo::NamedFile,
        )?;
        let (status, reason, bytes) = match c.outcome {
            Outcome::Written(bytes) if c.kept.is_some() => ("kept", None, Some(bytes)),
            Outcome::Written(bytes) => ("compacted", None, Some(bytes)),
            Outcome::Capture => (
                "skipped",
                Some("it is a browser capture (HAR), which compact does not rewrite".to_owned()),
                None,
            ),
            Outcome::NotAStream(_) => (
                "skipped",
                Some(format!(
                    "no AG-UI events ({})",
                    match c.format {
                        Some(format) => read::describe_no_events(format, &c.head),
                        None => read::describe_non_stream(&c.head),
                    }
                )),
                None,
            ),
            Outcome::Refused(why) => ("refused", Some(why), None),
            Outcome::Skipped(why) => ("skipped", Some(why), None),
        };
        // As the command counts a file: one kept as it was read counts as it was on both sides.
        let (events_after, bytes_before, bytes_after) = match c.kept {
            Some(kept) => (c.events_in, kept, kept),
            None => (c.events_out, c.bytes_read, c.bytes_out),
        };
        let errors: serde_json::Map<String, Value> = c
            .errors
            .iter()
            .map(|(rule, n)| (rule.name().to_owned(), json!(n)))
            .collect();
        let report = json!({
            "status": status,
            "reason": reason,
            "format": c.format,
            "events_before": c.events_in,
            "events_after": events_after,
            "bytes_before": bytes_before,
            "bytes_after": bytes_after,
            "dropped": c.dropped,
            "unreadable": c.unreadable,
            "kept_deltas": c.kept_deltas,
            "errors": errors,
            // What to write beside what is written, as `compact` writes it beside the file:
            // the request a recording `run` made answers, with the new length.
            "request_file": c.carried.as_deref().zip(bytes.as_ref()).map(|(request, bytes)| {
                format!("{}\n", recorded::request_record(request, bytes.len() as u64, None))
            }),
        });
        Ok((bytes, report.to_string()))
    })?;
    Ok((bytes.map(|b| PyBytes::new(py, &b).unbind()), report))
}

fn parse_level(level: &str) -> Result<CompactLevel> {
    match level {
        "deltas" => Ok(CompactLevel::Deltas),
        "snapshot" => Ok(CompactLevel::Snapshot),
        other => Err(anyhow!("unknown level `{other}`: use deltas or snapshot")),
    }
}

/// What became of one input.
enum Outcome {
    /// The verified bytes to write.
    Written(Vec<u8>),
    /// A browser capture (HAR): never rewritten.
    Capture,
    /// No AG-UI event in it: why, as the command says it.
    NotAStream(anyhow::Error),
    /// Why the compacted stream may not replace it.
    Refused(String),
    /// Why it is left as it is, unread: a recording cut, or with what only its call found
    /// beside it (see [`recorded::rewrite_refusal`]).
    Skipped(String),
}

/// What compacting one input did, counted as the command counts it.
struct Compacted {
    outcome: Outcome,
    format: Option<InputFormat>,
    head: Vec<u8>,
    events_in: u64,
    events_out: u64,
    /// The input's bytes as read (decompressed).
    bytes_read: u64,
    /// The compacted stream's bytes (before compression).
    bytes_out: u64,
    /// Written as read, in this many bytes, because compacting would have made it larger.
    kept: Option<u64>,
    dropped: u64,
    unreadable: u64,
    /// STATE_DELTAs kept as they were: no state is known before them.
    kept_deltas: u64,
    /// The errors of the stream written, by rule (verification runs every rule that errs).
    errors: std::collections::BTreeMap<agui_lens_core::check::catalog::RuleId, u64>,
    /// The request a recording `run` made answers, recorded beside it: what is written goes
    /// with it, as `compact` writes it beside the file.
    carried: Option<Arc<Value>>,
}

/// Where a compaction is written: to stdout (as read), or to a file under the input's name.
#[derive(Clone, Copy, PartialEq)]
enum WrittenTo {
    Stdout,
    NamedFile,
}

/// `rules` are the levels the stream is checked at (as `check`'s): a rule they make an error
/// is held in the copy too (see `verification_levels_for`).
fn compact_source(
    source: &Source,
    level: CompactLevel,
    drop_unreadable: bool,
    rules: Vec<(String, String)>,
    compression: Compression,
    to: WrittenTo,
) -> Result<Compacted> {
    let project = Options::new(rules, None, None)?.levels;
    let mut compacted = Compacted {
        outcome: Outcome::Capture,
        format: None,
        head: Vec::new(),
        events_in: 0,
        events_out: 0,
        bytes_read: 0,
        bytes_out: 0,
        kept: None,
        dropped: 0,
        unreadable: 0,
        kept_deltas: 0,
        errors: Default::default(),
        carried: None,
    };
    // A capture, given as a file or as bytes (a tree elsewhere than a local disk), whatever
    // it holds: bytes of one with two streams, or none, raised where the file was skipped.
    let har_bytes = matches!(&source.data, Some(Data::Bytes(bytes)) if read::is_har_bytes(bytes));
    if har_bytes || source.path.as_deref().is_some_and(read::is_har_file) {
        return Ok(compacted);
    }
    let recording = source.recording();
    if let Some(why) = recorded::rewrite_refusal(
        recording.cut.as_deref(),
        recording.findings.as_deref(),
        recording.refused,
    ) {
        compacted.outcome = Outcome::Skipped(why);
        return Ok(compacted);
    }
    // A recording starts from the state its request sent, as its check does.
    let initial = recorded::request_state(recording.request.as_deref());
    if recording.request_file {
        compacted.carried = recording.request.clone();
    }
    let read = source.read_options();
    let mut opened = source.open()?;
    if opened.capture.is_some() {
        // Bytes that hold a browser capture: as a file of one, never rewritten.
        return Ok(compacted);
    }
    let (name, head, format) = (opened.name.clone(), opened.head.clone(), opened.format);
    let read_as = format;
    compacted.format = Some(format);
    let format = match to {
        WrittenTo::Stdout => format,
        // As the command writes a file in place or under its name.
        WrittenTo::NamedFile => read::rewritten_format(format, std::path::Path::new(&*name), &head),
    };
    let mut compactor = Compactor::new(level, DEFAULT_STATE_LIMIT)
        .with_max_line(read.max_line)
        .with_state(initial.clone());
    let mut writer = EventWriter::new(Vec::new(), format, compression)?;
    let mut merged = 0u64;
    let mut skipped = agui_lens_core::compact::SkippedFields::default();
    let stats = for_each_fed(&mut opened, read.max_line, false, |fed, batch, frame| {
        merged += u64::from(agui_lens_core::compact::is_merged(frame));
        skipped.note(frame);
        if let Fed::Event(event) = fed {
            compactor.push(event, batch.bytes(frame), &mut writer)?;
        }
        Ok(())
    })
    .with_context(|| format!("compacting {name}"))?;
    compacted.events_in = stats.events;
    compacted.bytes_read = opened.reader.bytes_read();
    let halves = stats.unread_halves;
    compacted.unreadable = stats.unreadable - halves;
    compacted.dropped = compactor.dropped();
    compacted.kept_deltas = compactor.kept_deltas();
    // Refused for what would be left out, as the command refuses it.
    let unkept = agui_lens_core::compact::Unkept {
        unreadable: compacted.unreadable,
        merged,
        skipped: skipped.frames,
        failing: compacted.dropped,
        halves,
    };
    if let Some(why) = unkept.refusal_always(&name) {
        compacted.outcome = Outcome::Refused(why);
        return Ok(compacted);
    }
    if stats.known == 0 {
        compacted.outcome = Outcome::NotAStream(not_a_stream(&name, read_as, &head));
        compacted.head = head;
        return Ok(compacted);
    }
    if !drop_unreadable && let Some(why) = unkept.refusal(&name, "drop_unreadable=True") {
        compacted.outcome = Outcome::Refused(why);
        return Ok(compacted);
    }
    let folded = compactor
        .finish(&mut writer)
        .with_context(|| format!("writing the compacted {name}"))?;
    compacted.events_out = writer.events();
    compacted.bytes_out = writer.bytes();
    let losses = writer.take_notes();
    let mut written = writer.finish()?;
    if let Some(why) = agui_lens_core::write::refusal_for_losses(&losses, format) {
        compacted.outcome = Outcome::Refused(why);
        return Ok(compacted);
    }
    // Protobuf frames take fewer bytes than the JSON the frames' events read as: the least
    // the events take written back as protobuf is the input's own size.
    let bytes_in = match (read_as, format) {
        (InputFormat::Proto, InputFormat::Proto) => compacted.bytes_read,
        _ => stats.bytes,
    };
    if compacted.bytes_out > bytes_in {
        // As the command does for a file: compaction never makes a stream larger; its
        // frames written back as they were read are kept when they are smaller.
        let mut opened = source.open()?;
        let mut as_read = EventWriter::new(Vec::new(), format, compression)?;
        let mut batch = Batch::default();
        while opened.reader.next_batch(&mut batch)? {
            for frame in &batch.frames {
                if let FrameKind::Data { .. } = frame.kind {
                    as_read.raw(batch.bytes(frame))?;
                }
            }
        }
        // As many bytes either way: kept as read, as the command keeps them.
        if as_read.bytes() <= compacted.bytes_out {
            compacted.kept = Some(as_read.bytes());
            written = as_read.finish()?;
        }
    }
    let (levels, raised) = verification_levels_for(&project);
    let mut ctx = Context::new(SchemaSet::for_process(None)?, &levels);
    ctx.protocol.state = initial;
    let back = read_back(&ctx, &read, format, Box::new(Cursor::new(written.clone())))?;
    compacted.errors = back.errors.clone();
    let dropped = drop_unreadable && unkept.any();
    let count = || count_errors_of(&ctx, source.open()?);
    let judged = match judge(&folded, &back, (level, dropped, raised), count)? {
        Some(why) => Some(why),
        // (Every schema rule compared: the events were not held to the schemas on the way.)
        None => agui_lens_core::compact::verify::hidden_schema_errors(&back, None, count)?,
    };
    compacted.outcome = match judged {
        Some(why) => Outcome::Refused(why),
        None => Outcome::Written(written),
    };
    Ok(compacted)
}

/// Compares two streams as `agui-lens diff --level LEVEL A B` does; returns whether they
/// are equal, the human text (plain) and the `--format json` document.
#[pyfunction]
#[pyo3(signature = (a, b, a_label, b_label, level="compact".to_owned(), max_lines=400))]
fn diff(
    py: Python<'_>,
    a: PathBuf,
    b: PathBuf,
    a_label: String,
    b_label: String,
    level: String,
    max_lines: usize,
) -> PyResult<(bool, String, String, Vec<String>)> {
    guarded(py, move || {
        let level = CompareLevel::parse(&level)
            .ok_or_else(|| anyhow!("unknown level `{level}`: use events, compact or fold"))?;
        let (diff, mut warnings) = holding_warnings(|| {
            diff_paths(&a, &b, &ReadOptions::default(), level, &Settings::current())
        });
        // A recording that holds part of its stream is compared as what it holds: said, as
        // the command says it.
        for (path, label) in [(&a, &a_label), (&b, &b_label)] {
            if let Some(cut) = recorded::part_recorded(path) {
                warnings.push(recorded::compared_cut(label, &cut));
            }
        }
        let diff = diff?;
        let labels = (a_label.as_str(), b_label.as_str());
        Ok((
            diff.comparison.equal,
            diff.human(labels, max_lines, &plain),
            diff.document(labels, max_lines).to_string(),
            warnings,
        ))
    })
}

/// The core's incremental checker with what it borrows: the levels and the context live on
/// the heap beside it, freed after it.
struct Owned {
    checker: Option<CoreChecker<'static>>,
    ctx: *mut Context<'static>,
    options: *mut Options,
}

// SAFETY: the pointers are owned (made by `Box::into_raw`, freed only by `drop`) and point to
// values that are themselves `Send` and `Sync`, as the checker is (asserted below): moving the
// whole to another thread, or sharing it behind Python's borrow checking, is as safe as it
// would be with boxes.
unsafe impl Send for Owned {}
unsafe impl Sync for Owned {}

const _: () = {
    const fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<CoreChecker<'static>>();
    send_and_sync::<Context<'static>>();
    send_and_sync::<Options>();
};

impl Drop for Owned {
    fn drop(&mut self) {
        // The checker borrows the context, which borrows the options: freed in that order.
        self.checker = None;
        // SAFETY: both pointers come from `Box::into_raw` in `Checker::new`, are freed only
        // here, and nothing borrows them once the checker is gone.
        unsafe {
            drop(Box::from_raw(self.ctx));
            drop(Box::from_raw(self.options));
        }
    }
}

/// Checks a stream one event at a time (`feed`), then its end (`finish`).
/// Usable from any thread (a worker of an executor, a thread the caller hands it to), one
/// call at a time: it was bound to the thread that made it, and panicked elsewhere.
#[pyclass(module = "agui_lens._agui_lens")]
struct Checker {
    owned: Owned,
    /// Findings reported before the first event, handed over with its own.
    pending: Vec<Diagnostic>,
}

#[pymethods]
impl Checker {
    #[new]
    #[pyo3(signature = (name="<events>".to_owned(), input=None, protocol=None, rules=Vec::new()))]
    fn new(
        name: String,
        input: Option<String>,
        protocol: Option<String>,
        rules: Vec<(String, String)>,
    ) -> PyResult<Checker> {
        let built = catch_unwind(AssertUnwindSafe(|| -> Result<Checker> {
            let options = Options::new(rules, protocol.as_deref(), input.as_deref())?;
            let schemas = SchemaSet::for_process(None)?;
            let options: *mut Options = Box::into_raw(Box::new(options));
            // SAFETY: `options` lives until `Owned::drop`, after everything that borrows it.
            let borrowed: &'static Options = unsafe { &*options };
            let mut ctx = borrowed.context(schemas);
            ctx.protocol.input = borrowed.input.clone();
            ctx.protocol.state = borrowed
                .input
                .as_ref()
                .and_then(|i| i.get("state"))
                .filter(|v| !v.is_null())
                .cloned();
            let ctx: *mut Context<'static> = Box::into_raw(Box::new(ctx));
            // SAFETY: as above, `ctx` lives until `Owned::drop`, after the checker.
            let ctx_ref: &'static Context<'static> = unsafe { &*ctx };
            let mut checker = CoreChecker::new(ctx_ref, &name);
            let mut found = Vec::new();
            if let Some(request) = &borrowed.input {
                let name: Arc<str> = Arc::from(name.as_str());
                for d in input_findings(schemas, request, borrowed.protocol, &name) {
                    found.extend(checker.report(d));
                }
            }
            Ok(Checker {
                owned: Owned {
                    checker: Some(checker),
                    ctx,
                    options,
                },
                pending: found,
            })
        }));
        unwrap_caught(built)
    }

    /// Checks the next event, its JSON text; returns JSON text of what it found.
    fn feed(&mut self, text: &[u8]) -> PyResult<String> {
        let checker = self.owned.checker.as_mut().ok_or_else(|| {
            AguiLensError::new_err("the stream was finished: feed comes before finish")
        })?;
        let mut found = std::mem::take(&mut self.pending);
        unwrap_caught(catch_unwind(AssertUnwindSafe(|| {
            found.extend(checker.feed(text));
            Ok(records(&found))
        })))
    }

    /// Ends the stream; returns JSON text of what only its end tells, and its counts.
    fn finish(&mut self) -> PyResult<(String, String)> {
        let checker = self
            .owned
            .checker
            .take()
            .ok_or_else(|| AguiLensError::new_err("the stream was already finished"))?;
        unwrap_caught(catch_unwind(AssertUnwindSafe(|| {
            let (found, stats) = checker.finish();
            let mut all = std::mem::take(&mut self.pending);
            all.extend(found);
            Ok((records(&all), serde_json::to_string(&stats)?))
        })))
    }
}

fn records(found: &[Diagnostic]) -> String {
    Value::from(found.iter().map(record).collect::<Vec<_>>()).to_string()
}

fn unwrap_caught<T>(caught: std::thread::Result<Result<T>>) -> PyResult<T> {
    match caught {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(AguiLensError::new_err(format!("{err:#}"))),
        Err(panic) => Err(AguiLensError::new_err(format!(
            "internal error in agui-lens (please report it): {}",
            panic_text(&panic)
        ))),
    }
}

/// Whether a walk of a folder (`agui-lens check DIR`, `compact DIR`) reads the file of this
/// name as a stream: `*.jsonl`, `*.sse.gz` … A file of another name is copied by `compact
/// --mirror` as it is (a raw body `run --record-raw` or the proxy recorded among them).
#[pyfunction]
fn walk_reads(name: &str) -> bool {
    read::is_stream_file(std::path::Path::new(name))
}

/// What the bytes of a file named `name` hold when it is no AG-UI stream (`None` when it is
/// one): a mirror writes a stream only over a stream, never over a file of the user's.
#[pyfunction]
fn what_no_stream_holds(data: &[u8], name: &str) -> Option<String> {
    let path = std::path::Path::new(name);
    if read::is_har_file(path) {
        return Some("a browser capture (HAR)".into());
    }
    let hint = read::format_from_extension(path);
    let opened = read::open_reader(
        Arc::from(name),
        Box::new(Cursor::new(data.to_vec())),
        hint,
        &read::ReadOptions::default(),
    );
    match opened {
        Ok(opened) => read::holds_events(opened).err(),
        Err(err) => Some(format!("what cannot be read as a stream ({err:#})")),
    }
}

/// Whether `data` is what `agui-lens run` (or a compaction) writes beside a recording as the
/// request it answers: a file of that name holding anything else is the user's.
#[pyfunction]
fn request_written_by_a_run(data: &[u8]) -> bool {
    recorded::Beside::Request.wrote(data)
}

#[pymodule]
fn _agui_lens(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AguiLensError", m.py().get_type::<AguiLensError>())?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(fold, m)?)?;
    m.add_function(wrap_pyfunction!(events, m)?)?;
    m.add_function(wrap_pyfunction!(compact, m)?)?;
    m.add_function(wrap_pyfunction!(compact_report, m)?)?;
    m.add_function(wrap_pyfunction!(what_no_stream_holds, m)?)?;
    m.add_function(wrap_pyfunction!(request_written_by_a_run, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(walk_reads, m)?)?;
    m.add_class::<Checker>()?;
    Ok(())
}
