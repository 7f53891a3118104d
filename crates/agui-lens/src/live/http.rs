//! Live input: one POST of a RunAgentInput to an agent, the response's head, and a body reader
//! that remembers why it stopped when the transport failed. Never retries and never
//! reconnects: a second request would run the agent a second time.

use std::fmt;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use ureq::http::{HeaderName, HeaderValue};

use crate::live::request::Payload;

/// What to send.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub url: &'a str,
    /// Extra headers, values already expanded. Never printed.
    pub headers: &'a [(String, String)],
    pub body: &'a Payload,
    /// Longest wait for the next bytes (of the response head or the body).
    pub idle_timeout: Duration,
    /// Longest the whole exchange may take.
    pub timeout: Option<Duration>,
    /// Asked now and then while waiting: true stops the exchange ([`Cut::Interrupted`]).
    pub stop: fn() -> bool,
    /// The transport the request asks for (its Accept header).
    pub accept: Transport,
}

/// The two ways an AG-UI stream travels over HTTP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Server-Sent Events, `text/event-stream`.
    #[default]
    Sse,
    /// Length-prefixed protobuf frames, `application/vnd.ag-ui.event+proto`.
    Proto,
}

impl Transport {
    pub fn content_type(self) -> &'static str {
        match self {
            Transport::Sse => "text/event-stream",
            Transport::Proto => agui_lens_core::protocol::proto::CONTENT_TYPE,
        }
    }

    /// The format its body is read in.
    pub fn format(self) -> agui_lens_core::read::InputFormat {
        match self {
            Transport::Sse => agui_lens_core::read::InputFormat::Sse,
            Transport::Proto => agui_lens_core::read::InputFormat::Proto,
        }
    }

    /// The transport whose body is read in `format`, if one is.
    pub fn of_format(format: agui_lens_core::read::InputFormat) -> Option<Transport> {
        match format {
            agui_lens_core::read::InputFormat::Sse => Some(Transport::Sse),
            agui_lens_core::read::InputFormat::Proto => Some(Transport::Proto),
            _ => None,
        }
    }

    /// The transport a Content-Type names (`text/event-stream; charset=utf-8` is SSE), if
    /// it names one.
    pub fn of(content_type: Option<&str>) -> Option<Transport> {
        agui_lens_core::read::transport_format(content_type?).and_then(Transport::of_format)
    }
}

/// Why a response stopped before its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cut {
    /// No bytes for this long.
    IdleTimeout(Duration),
    /// The exchange took longer than this in all.
    Timeout(Duration),
    /// Closed or reset; the text says which.
    ConnectionLost(String),
    /// The user asked to stop (Ctrl-C, SIGTERM): not the agent's doing.
    Interrupted,
}

/// Why a POST got no response head.
#[derive(Debug)]
pub enum PostError {
    /// No HTTP exchange happened: a bad URL, an unknown host, a refused connection, a failed
    /// TLS handshake.
    Unreachable(String),
    /// The request went out, but the response head never came.
    Cut(Cut),
}

impl fmt::Display for PostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PostError::Unreachable(why) => f.write_str(why),
            PostError::Cut(cut) => write!(f, "{cut:?}"),
        }
    }
}

/// A response head, with its body still to read.
pub struct Response {
    pub status: u16,
    pub reason: Option<&'static str>,
    pub content_type: Option<String>,
    /// Where a redirect points.
    pub location: Option<String>,
    pub body: Body,
    /// How reading the body is going; shared with the body, which is handed to a reader.
    pub progress: Arc<Progress>,
}

/// What reading a body has come to, readable while another owner reads it.
#[derive(Debug, Default)]
pub struct Progress {
    cut: Mutex<Option<Cut>>,
    record_error: Mutex<Option<String>>,
    bytes: AtomicU64,
}

impl Progress {
    /// Why the body stopped early, if it did.
    pub fn cut(&self) -> Option<Cut> {
        self.cut.lock().map(|c| c.clone()).unwrap_or(None)
    }

    /// A failure to write the raw recording, which stops the read.
    pub fn record_error(&self) -> Option<String> {
        self.record_error.lock().map(|e| e.clone()).unwrap_or(None)
    }

    /// Body bytes received so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Checks a header before anything is sent; the message names the header, never its value.
pub fn check_header(name: &str, value: &str) -> Result<(), String> {
    HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("`{name}` is not a valid header name"))?;
    HeaderValue::from_str(value)
        .map_err(|_| format!("the value of header `{name}` holds characters a header cannot"))?;
    Ok(())
}

/// A URL as it may be shown: without a password or user name in it, nor the values of its
/// query string (names are kept).
pub fn display_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let rest = match rest[..end].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    // A query string's values may be keys (`?api_key=…`): only their names are shown.
    let Some((before, query)) = rest.split_once('?') else {
        return format!("{scheme}://{rest}");
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let names: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() => format!("{name}=…"),
            _ => pair.to_owned(),
        })
        .collect();
    let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
    format!("{scheme}://{before}?{}{fragment}", names.join("&"))
}

/// Waits until something answers HTTP at `url` (any status: an agent's endpoint often
/// refuses a GET), trying every quarter second for at most `limit`. Returns how long it took,
/// or why the last try failed. Stops early when a stop is asked for.
pub fn wait_for(url: &str, limit: Duration, stop: fn() -> bool) -> Result<Duration, String> {
    let lower = url.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err(format!(
            "`{}` is not an http:// or https:// URL",
            display_url(url)
        ));
    }
    let started = std::time::Instant::now();
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("agui-lens/", env!("CARGO_PKG_VERSION")))
        .timeout_global(Some(
            Duration::from_secs(2).min(limit.max(Duration::from_millis(100))),
        ))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    loop {
        let why = match agent.get(url).call() {
            Ok(_) => return Ok(started.elapsed()),
            Err(err) => err.to_string(),
        };
        if stop() {
            return Err(why);
        }
        if started.elapsed() + Duration::from_millis(250) > limit {
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// POSTs the body as JSON, asking for an event stream. `tee` receives the body's bytes
/// exactly as they arrive.
pub fn post(
    request: &Request<'_>,
    tee: Option<Box<dyn Write + Send>>,
) -> Result<Response, PostError> {
    let lower = request.url.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err(PostError::Unreachable(format!(
            "`{}` is not an http:// or https:// URL",
            display_url(request.url)
        )));
    }
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A POST is not re-sent elsewhere: the redirect itself is the answer.
        .max_redirects(0)
        .user_agent(concat!("agui-lens/", env!("CARGO_PKG_VERSION")))
        .timeout_connect(Some(request.idle_timeout))
        .timeout_per_read(Some(request.idle_timeout))
        .timeout_global(request.timeout)
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut builder = agent
        .post(request.url)
        .header("Content-Type", "application/json")
        .header("Accept", request.accept.content_type());
    for (name, value) in request.headers {
        check_header(name, value).map_err(PostError::Unreachable)?;
        builder = builder.header(name.as_str(), value.as_str());
    }
    // The request is sent, and its head waited for, on a thread of its own, so that a stop
    // asked for meanwhile is heard (the thread is left to its blocked read).
    let body = request.body.clone();
    let (sent_tx, sent_rx) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let sent = match body {
            Payload::Bytes(bytes) => builder.send(&bytes[..]),
            // Read from the file as it is sent, its length from the file's size.
            Payload::File(path) => match std::fs::File::open(&path) {
                Ok(file) => builder.send(file),
                Err(err) => Err(ureq::Error::Io(err)),
            },
        };
        let _ = sent_tx.send(sent);
    });
    let response = loop {
        match sent_rx.recv_timeout(POLL) {
            Ok(result) => break result.map_err(|e| post_error(e, request))?,
            Err(mpsc::RecvTimeoutError::Timeout) if (request.stop)() => {
                return Err(PostError::Cut(Cut::Interrupted));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PostError::Unreachable(
                    "the request could not be sent".into(),
                ));
            }
        }
    };
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let status = response.status();
    let progress = Arc::new(Progress::default());
    let (content_type, location) = (header("content-type"), header("location"));
    let limits = Limits {
        idle_timeout: request.idle_timeout,
        timeout: request.timeout,
    };
    Ok(Response {
        status: status.as_u16(),
        reason: status.canonical_reason(),
        content_type,
        location,
        progress: progress.clone(),
        body: Body {
            chunks: pump(response.into_body().into_reader(), limits),
            chunk: Vec::new(),
            at: 0,
            tee,
            progress,
            stop: request.stop,
        },
    })
}

/// The largest document [`get`] reads.
const MAX_GET: u64 = 16 * 1024 * 1024;

/// GETs a small document (an agent's capabilities declaration): its body when the status is
/// 2xx, else why not. Redirects are followed (a GET runs no agent); the body is capped.
pub fn get(url: &str, timeout: Duration) -> Result<Vec<u8>, String> {
    let lower = url.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err(format!(
            "`{}` is not an http:// or https:// URL",
            display_url(url)
        ));
    }
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .user_agent(concat!("agui-lens/", env!("CARGO_PKG_VERSION")))
        .timeout_global(Some(timeout))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let response = agent
        .get(url)
        .header("Accept", "application/json")
        .call()
        .map_err(|e| format!("{}: {e}", display_url(url)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "{} answered {} {}",
            display_url(url),
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )
        .trim_end()
        .to_owned());
    }
    let mut body = Vec::new();
    response
        .into_body()
        .into_reader()
        .take(MAX_GET + 1)
        .read_to_end(&mut body)
        .map_err(|e| format!("{}: {e}", display_url(url)))?;
    if body.len() as u64 > MAX_GET {
        return Err(format!("{}: the body is over 16 MiB", display_url(url)));
    }
    Ok(body)
}

/// How often a wait looks at whether the user asked to stop.
const POLL: Duration = Duration::from_millis(100);

/// The timeouts a transport failure is told apart by.
#[derive(Clone, Copy)]
struct Limits {
    idle_timeout: Duration,
    timeout: Option<Duration>,
}

/// What the thread reading a body hands over: bytes (empty at the end) or why it stopped.
type Chunk = Result<Vec<u8>, Cut>;

/// Reads a body on a thread of its own, handing its bytes over as they come, a few reads
/// ahead at most; the reader can then wait for them and still hear a request to stop.
fn pump(mut inner: ureq::BodyReader<'static>, limits: Limits) -> mpsc::Receiver<Chunk> {
    let (tx, rx) = mpsc::sync_channel(4);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let chunk = match inner.read(&mut buf) {
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(classify(e, limits)),
            };
            let last = !matches!(&chunk, Ok(bytes) if !bytes.is_empty());
            if tx.send(chunk).is_err() || last {
                return;
            }
        }
    });
    rx
}

fn post_error(err: ureq::Error, request: &Request<'_>) -> PostError {
    use ureq::Timeout;
    match err {
        ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve) => {
            PostError::Unreachable(format!(
                "could not connect to {} within {}",
                display_url(request.url),
                seconds(request.idle_timeout)
            ))
        }
        ureq::Error::Timeout(Timeout::PerRead) => {
            PostError::Cut(Cut::IdleTimeout(request.idle_timeout))
        }
        ureq::Error::Timeout(_) => {
            PostError::Cut(Cut::Timeout(request.timeout.unwrap_or_default()))
        }
        ureq::Error::Io(e) if connection_was_open(&e) => {
            PostError::Cut(Cut::ConnectionLost(describe_io(&e)))
        }
        ureq::Error::Io(e) => PostError::Unreachable(format!(
            "could not connect to {}: {}",
            display_url(request.url),
            describe_io(&e)
        )),
        ureq::Error::HostNotFound => PostError::Unreachable(format!(
            "could not connect to {}: host not found",
            display_url(request.url)
        )),
        other => PostError::Unreachable(format!("{}: {other}", display_url(request.url))),
    }
}

/// Errors that only an open connection can give.
fn connection_was_open(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::UnexpectedEof
            | io::ErrorKind::BrokenPipe
    )
}

fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionReset => "the connection was reset".into(),
        io::ErrorKind::ConnectionAborted => "the connection was aborted".into(),
        // ureq reports a reset in the middle of a body as an unexpected end, too.
        io::ErrorKind::UnexpectedEof => "the connection was closed or reset".into(),
        io::ErrorKind::BrokenPipe => "the connection closed while the request was sent".into(),
        io::ErrorKind::ConnectionRefused => "the connection was refused".into(),
        _ => e.to_string(),
    }
}

/// `60 s`, `1.5 s`, `250 ms`.
pub fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cut::IdleTimeout(d) => write!(f, "no bytes for {}", seconds(*d)),
            Cut::Timeout(d) => write!(f, "still going after {}", seconds(*d)),
            Cut::ConnectionLost(why) => f.write_str(why),
            Cut::Interrupted => f.write_str("interrupted"),
        }
    }
}

fn classify(err: io::Error, limits: Limits) -> Cut {
    match ureq::Error::from(err) {
        ureq::Error::Timeout(ureq::Timeout::PerRead) => Cut::IdleTimeout(limits.idle_timeout),
        ureq::Error::Timeout(_) => Cut::Timeout(limits.timeout.unwrap_or_default()),
        ureq::Error::Io(e) if matches!(e.kind(), io::ErrorKind::TimedOut) => {
            Cut::IdleTimeout(limits.idle_timeout)
        }
        ureq::Error::Io(e) => Cut::ConnectionLost(describe_io(&e)),
        ureq::Error::Protocol(e) => {
            Cut::ConnectionLost(format!("the response body is malformed ({e})"))
        }
        other => Cut::ConnectionLost(other.to_string()),
    }
}

/// A response body. A transport failure, or a request to stop, is recorded in [`Progress`]
/// and returned as an error, so the frame reader stops there and what arrived before is
/// still checked.
pub struct Body {
    chunks: mpsc::Receiver<Chunk>,
    /// The chunk being handed out, from `at` on.
    chunk: Vec<u8>,
    at: usize,
    tee: Option<Box<dyn Write + Send>>,
    progress: Arc<Progress>,
    stop: fn() -> bool,
}

impl Body {
    /// Records why the body stopped and makes the error the reader returns.
    fn cut(&self, cut: Cut) -> io::Error {
        let message = cut.to_string();
        if let Ok(mut slot) = self.progress.cut.lock() {
            slot.get_or_insert(cut);
        }
        io::Error::other(message)
    }
}

impl Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            // Heard between chunks too: a body that keeps coming (an agent streaming a token
            // every few milliseconds) was read to its end after a stop.
            if (self.stop)() {
                return Err(self.cut(Cut::Interrupted));
            }
            match self.chunks.recv_timeout(POLL) {
                Ok(Ok(bytes)) if bytes.is_empty() => return Ok(0),
                Ok(Ok(bytes)) => {
                    self.chunk = bytes;
                    self.at = 0;
                }
                Ok(Err(cut)) => return Err(self.cut(cut)),
                // The stop is looked at again at the top of the loop.
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        self.progress.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(tee) = &mut self.tee
            && let Err(e) = tee.write_all(&buf[..n]).and_then(|()| tee.flush())
        {
            let message = e.to_string();
            if let Ok(mut slot) = self.progress.record_error.lock() {
                *slot = Some(message.clone());
            }
            self.tee = None;
            return Err(io::Error::other(message));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            display_url("https://user:secret@example.com/agent?x=1"),
            "https://example.com/agent?x=…"
        );
        // A query string's values may be keys: only the names show.
        assert_eq!(
            display_url("http://h/a?api_key=k3y&flag&empty=#top"),
            "http://h/a?api_key=…&flag&empty=#top"
        );
        assert_eq!(
            display_url("http://127.0.0.1:8000/"),
            "http://127.0.0.1:8000/"
        );
        assert_eq!(
            display_url("http://h/path@not-userinfo"),
            "http://h/path@not-userinfo"
        );
    }

    #[test]
    fn event_stream_types() {
        assert_eq!(
            Transport::of(Some("text/event-stream")),
            Some(Transport::Sse)
        );
        let sse = Some("Text/Event-Stream; charset=utf-8");
        assert_eq!(Transport::of(sse), Some(Transport::Sse));
        let proto = Some("application/vnd.ag-ui.event+proto");
        assert_eq!(Transport::of(proto), Some(Transport::Proto));
        assert_eq!(Transport::of(Some("application/protobuf")), None);
        assert_eq!(Transport::of(Some("text/html")), None);
        assert_eq!(Transport::of(None), None);
    }

    #[test]
    fn header_problems_never_show_the_value() {
        assert!(check_header("Authorization", "Bearer x").is_ok());
        let err = check_header("Authorization", "Bearer sec\nret").unwrap_err();
        assert!(!err.contains("sec"), "{err}");
        assert!(check_header("Bad Name", "x").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(seconds(Duration::from_secs(60)), "60 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(seconds(Duration::from_millis(250)), "250 ms");
    }
}
