//! Browser captures: HAR files (DevTools "Save all as HAR", Firefox, Playwright's
//! `recordHar`, mitmproxy). Each entry whose response is an AG-UI stream (SSE or protobuf
//! frames, its body as text or base64) is a stream of its own; the request that asked for it,
//! when it is a RunAgentInput, is what the client sent. Headers are never read: a capture's
//! cookies and credentials stay in the capture.

use std::io::Read;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::detect;
use crate::protocol::event::EventType;
use crate::protocol::proto;

/// One AG-UI stream of a HAR file.
#[derive(Clone, Debug)]
pub struct HarStream {
    /// 0-based index of the entry in `log.entries`.
    pub entry: usize,
    pub method: String,
    /// The request URL, without its query string or user name and password.
    pub url: String,
    pub status: Option<u16>,
    /// The status's reason as the capture holds it (`statusText`), when it holds one.
    pub reason: Option<String>,
    /// The response's type as the capture holds it (`content.mimeType`), when it names no
    /// event stream (neither `text/event-stream` nor the protobuf type); none when it does,
    /// or when the capture holds no type.
    pub other_type: Option<String>,
    /// The transport the response's type names (`text/event-stream`, or the protobuf type),
    /// which a client picks its parser by, whatever the body holds.
    pub declared: Option<super::InputFormat>,
    /// The response body, decoded from base64 where the capture stored it so.
    pub body: Vec<u8>,
    /// The request body, when it is a JSON object (a RunAgentInput, as a rule).
    pub request: Option<Value>,
    /// Why a request body the capture holds could not be read as a JSON object (base64 that
    /// is none, text that is no JSON): the request is not lost in silence.
    pub request_problem: Option<String>,
    /// The transports the request's Accept header asks for (none when it asks for none, or
    /// for any: `*/*`).
    pub accepted: Vec<super::InputFormat>,
    /// Why the browser says the response ended early, when it says so (`_failureText`, `_error`).
    pub failure: Option<String>,
}

impl HarStream {
    /// How the stream is named in diagnostics: the file, the entry, the request.
    pub fn name(&self, file: &str) -> String {
        format!("{file}#{} ({} {})", self.entry, self.method, self.url)
    }
}

/// A call to an agent in a capture (its request is a RunAgentInput) that brought back no
/// AG-UI stream: an error status, no response, a body the capture left out or one with no
/// events. It is no other traffic: what the client asked for did not come.
#[derive(Clone, Debug)]
pub struct FailedCall {
    /// 0-based index of the entry in `log.entries`.
    pub entry: usize,
    pub method: String,
    /// The request URL, as [`HarStream::url`].
    pub url: String,
    /// What came instead of a stream.
    pub why: String,
}

impl FailedCall {
    /// How the call is named, as a stream of the capture would be.
    pub fn name(&self, file: &str) -> String {
        format!("{file}#{} ({} {})", self.entry, self.method, self.url)
    }
}

/// The AG-UI streams of a HAR file, the agent calls that brought none, and how many entries
/// were something else.
#[derive(Debug)]
pub struct HarCapture {
    pub streams: Vec<HarStream>,
    pub failed: Vec<FailedCall>,
    /// Entries that are no AG-UI stream (page loads, scripts, other APIs), skipped.
    pub others: usize,
    /// Of those, POSTs whose response body the capture left out (recorded with bodies omitted,
    /// or attached in side files: Playwright's `content: "omit"` or `"attach"`).
    pub posts_without_bodies: usize,
}

impl HarCapture {
    /// The call each stream answered, by entry index: the request's method and URL, and which
    /// call to that URL it is among those the capture holds a stream of (`POST
    /// https://app.example/agent, call 2`). Other traffic around them (a health check, a page
    /// load, a call that failed and was made again) does not change it, as it changes the
    /// entries' indexes. (A call that brought no stream fails whole, and no baseline holds it.)
    pub fn calls(&self) -> std::collections::BTreeMap<usize, String> {
        let mut requests: Vec<(usize, &str, &str)> = self
            .streams
            .iter()
            .map(|s| (s.entry, s.method.as_str(), s.url.as_str()))
            .collect();
        requests.sort_unstable();
        let mut seen: std::collections::HashMap<(&str, &str), usize> = Default::default();
        requests
            .into_iter()
            .map(|(entry, method, url)| {
                let n = seen.entry((method, url)).or_default();
                *n += 1;
                (entry, format!("{method} {url}, call {n}"))
            })
            .collect()
    }
}

/// Why the browser says a response ended before its end, as the capture holds it: Chromium
/// and Playwright write `response._failureText`, the DevTools export `response._error`
/// (`net::ERR_ABORTED`, `net::ERR_INCOMPLETE_CHUNKED_ENCODING`, …).
fn failure_of(response: &Value) -> Option<String> {
    ["_failureText", "_error"]
        .iter()
        .filter_map(|key| response.get(*key).and_then(Value::as_str))
        .map(str::trim)
        .find(|text| !text.is_empty())
        .map(str::to_owned)
}

/// Whether a browser's failure text (`_failureText`, `_error`) says the page itself stopped the call
/// (an `AbortController`, a navigation, a closed tab) rather than the connection failing:
/// Chromium's `net::ERR_ABORTED`, Firefox's `NS_BINDING_ABORTED`, WebKit's "cancelled".
pub fn stopped_by_page(failure: &str) -> bool {
    let failure = failure.to_ascii_lowercase();
    ["err_aborted", "ns_binding_aborted", "cancelled", "canceled"]
        .iter()
        .any(|said| failure.contains(said))
}

/// Whether the first bytes of a JSON document open a HAR: `{"log": {` and one of the members
/// a HAR log starts with (`version` as every capture tool writes it, or another of the HAR
/// log's own members when a tool reordered them), so that another document with a `log`
/// object is not taken for one.
pub fn is_har(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let rest = text.trim_start();
    let Some(rest) = rest.strip_prefix('{') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix("\"log\"") else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix(':') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix('{') else {
        return false;
    };
    let rest = rest.trim_start();
    [
        "\"version\"",
        "\"creator\"",
        "\"browser\"",
        "\"pages\"",
        "\"entries\"",
    ]
    .iter()
    .any(|key| rest.starts_with(key))
}

impl HarCapture {
    /// Why a capture named `name` that holds neither a stream nor a call that failed is no
    /// input: its entries answered with no AG-UI events, or the capture left out the bodies
    /// of its POSTs, and where to get them from.
    pub fn holds_no_stream(&self, name: &str) -> String {
        match self.posts_without_bodies {
            0 => format!(
                "{name} is a browser capture (HAR) that holds no AG-UI stream: none of its {} \
                 entries answered with AG-UI events",
                self.others
            ),
            posts => format!(
                "{name} is a browser capture (HAR) that holds no AG-UI stream: it left out the \
                 response bodies of {} of its {} entries (saved with bodies omitted, or \
                 attached in side files); save it with the bodies in it (DevTools' \"Save all \
                 as HAR with content\", Playwright's `recordHar` with `content: \"embed\"`), or \
                 record the calls with `agui-lens proxy`",
                crate::text::plural(posts as u64, "POST"),
                self.others
            ),
        }
    }

    /// The calls that brought no stream, each with why: `entry 1: …; entry 4: …`.
    pub fn failed_listed(&self) -> String {
        self.failed
            .iter()
            .map(|f| format!("entry {}: {}", f.entry, f.why))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Reads a HAR file's AG-UI streams. The file is read whole first: parsed straight from a
/// reader, JSON costs a call per byte, which on an unbuffered file is a system call per byte.
pub fn read_har(mut reader: impl Read) -> Result<HarCapture> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .context("the HAR file could not be read")?;
    let har: Value = serde_json::from_slice(&bytes).context("the HAR file is not JSON")?;
    drop(bytes);
    let Some(entries) = har.pointer("/log/entries").and_then(Value::as_array) else {
        bail!("the HAR file has no log.entries list");
    };
    let mut capture = HarCapture {
        streams: Vec::new(),
        failed: Vec::new(),
        others: 0,
        posts_without_bodies: 0,
    };
    let streams: Vec<Option<HarStream>> = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| stream_of(index, entry))
        .collect();
    // Where the agent is: the URLs its streams came from.
    let agent_urls: Vec<&str> = entries
        .iter()
        .zip(&streams)
        .filter(|(_, stream)| stream.is_some())
        .filter_map(|(entry, _)| entry.pointer("/request/url").and_then(Value::as_str))
        .collect();
    for ((index, entry), stream) in entries.iter().enumerate().zip(streams) {
        if let Some(stream) = stream {
            capture.streams.push(stream);
        } else if let Some(failed) = failed_call(index, entry, &agent_urls) {
            capture.failed.push(failed);
        } else {
            capture.others += 1;
            let post = entry.pointer("/request/method").and_then(Value::as_str) == Some("POST");
            let content = entry.pointer("/response/content");
            let left_out = content.is_some_and(|c| {
                c.get("_file").is_some()
                    || c.get("text")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                        && c.get("size").and_then(Value::as_u64).is_some_and(|n| n > 0)
            });
            capture.posts_without_bodies += usize::from(post && left_out);
        }
    }
    Ok(capture)
}

/// An entry that is a call to an agent and brought back no stream ([`stream_of`] found
/// none): why. A call to an agent: its request body is a RunAgentInput (a `threadId`, a
/// `runId` and `messages`); or it is a POST to a URL a stream of the capture came from
/// (`agent_urls`) that failed or was answered as an event stream (a client's other calls to
/// one endpoint, answered 200 with JSON, are not runs); or it failed, and its body names a
/// run (a `threadId` or a `runId`) though it breaks the schema, which is why an agent
/// refuses it (422).
fn failed_call(index: usize, entry: &Value, agent_urls: &[&str]) -> Option<FailedCall> {
    let request = entry.get("request")?;
    let response = entry.get("response");
    let status = response
        .and_then(|r| r.get("status"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let failed = !(200..300).contains(&status);
    let streamed = || {
        response
            .and_then(|r| r.pointer("/content/mimeType"))
            .and_then(Value::as_str)
            .is_some_and(|mime| super::transport_format(mime).is_some())
    };
    let to_the_agent = || {
        (failed || streamed())
            && request.get("method").and_then(Value::as_str) == Some("POST")
            && request
                .get("url")
                .and_then(Value::as_str)
                .is_some_and(|url| agent_urls.contains(&url))
    };
    let names_a_run = || {
        failed
            && matches!(request_of(request), Some(Ok(Value::Object(input)))
                if input.contains_key("threadId") || input.contains_key("runId"))
    };
    if !(asks_for_a_run(request) || to_the_agent() || names_a_run()) {
        return None;
    }
    let status_text = response
        .and_then(|r| r.get("statusText"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let answered = if status_text.is_empty() {
        status.to_string()
    } else {
        format!("{status} {status_text}")
    };
    let content = response.and_then(|r| r.get("content"));
    let mime = content
        .and_then(|c| c.get("mimeType"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let decoded = content.and_then(body_of);
    // A body the capture holds, marked base64, that is none: there, but not to be read.
    let undecodable = decoded.is_none() && content.is_some_and(|c| c.get("text").is_some());
    let body = decoded.unwrap_or_default();
    let failure = response.and_then(failure_of);
    let why = if let Some(failure) = failure.filter(|_| body.iter().all(u8::is_ascii_whitespace)) {
        if stopped_by_page(&failure) {
            format!(
                "the page stopped the call ({failure}) before the capture held any of its \
                 response"
            )
        } else {
            format!(
                "the browser's read of the response failed ({failure}) before the capture \
                 held any of it: the agent, or a proxy in front of it, ended the response"
            )
        }
    } else if status == 0 {
        "the request got no response in the capture (status 0: cancelled, blocked or failed in \
         the browser)"
            .to_owned()
    } else if undecodable {
        format!(
            "the agent answered {answered}; the capture marks the response body as base64, \
             which it is not, so it cannot be read"
        )
    } else if body.iter().all(u8::is_ascii_whitespace) {
        format!(
            "the agent answered {answered}, and the capture holds no response body for it (a \
             browser may leave out the body of a streamed response: record the call with \
             `agui-lens proxy` or `agui-lens run --record`)"
        )
    } else if !(200..300).contains(&status) {
        format!(
            "the agent answered {answered} with no AG-UI stream: {}",
            excerpt(&body)
        )
    } else {
        let mime = if mime.is_empty() {
            "no content type"
        } else {
            mime
        };
        format!(
            "the agent answered {answered} ({mime}) with no AG-UI events: {}",
            excerpt(&body)
        )
    };
    Some(FailedCall {
        entry: index,
        method: request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("POST")
            .to_owned(),
        url: shown_url(request.get("url").and_then(Value::as_str).unwrap_or("")),
        why,
    })
}

/// Whether a request is a call to an agent: its body a RunAgentInput (a `threadId`, a
/// `runId` and `messages`).
fn asks_for_a_run(request: &Value) -> bool {
    let Some(Ok(input)) = request_of(request) else {
        return false;
    };
    input.get("threadId").is_some_and(Value::is_string)
        && input.get("runId").is_some_and(Value::is_string)
        && input.get("messages").is_some_and(Value::is_array)
}

/// Whether a response's type names a document a page loads (a script, a style sheet, a
/// page, an image, a font, WebAssembly): the SDK's own scripts hold the event types' names.
fn is_page_asset(mime: &str) -> bool {
    let mime = mime.trim().to_ascii_lowercase();
    ["javascript", "ecmascript", "wasm"]
        .iter()
        .any(|kind| mime.contains(kind))
        || ["text/css", "text/html", "image/", "font/"]
            .iter()
            .any(|kind| mime.starts_with(kind))
}

/// The start of a body, on one line, as a reason quotes it.
fn excerpt(body: &[u8]) -> String {
    const SHOWN: usize = 200;
    let text = String::from_utf8_lossy(&body[..body.len().min(SHOWN * 8)]);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// An entry's AG-UI stream: a response whose type is an event stream, or whose body reads as
/// one, holding AG-UI events.
fn stream_of(index: usize, entry: &Value) -> Option<HarStream> {
    let request = entry.get("request")?;
    let response = entry.get("response")?;
    let content = response.get("content")?;
    let mime = content
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("");
    let declared = super::transport_format(mime);
    // What a page loads is other traffic, unless an agent call was answered with it (an HTML
    // page answered to a RunAgentInput is that call's stream, said as `transport/content-type`).
    if is_page_asset(mime) && !asks_for_a_run(request) {
        return None;
    }
    let body = body_of(content)?;
    let is_proto = declared == Some(super::InputFormat::Proto) || proto::looks_like_frames(&body);
    let holds_events = is_proto
        || EventType::ALL
            .iter()
            .any(|ty| contains(&body, format!("\"{}\"", ty.as_str()).as_bytes()));
    let declared_stream = declared.is_some();
    let streamed = declared_stream
        || is_proto
        || matches!(
            detect::sniff_format(&body[..body.len().min(detect::SNIFF_LEN)]),
            super::InputFormat::Sse | super::InputFormat::Jsonl
        );
    if !(holds_events && streamed) {
        return None;
    }
    let (request_body, request_problem) = match request_of(request) {
        Some(Ok(body)) => (Some(body), None),
        Some(Err(problem)) => (None, Some(problem)),
        None => (None, None),
    };
    Some(HarStream {
        entry: index,
        method: request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("GET")
            .to_owned(),
        url: shown_url(request.get("url").and_then(Value::as_str).unwrap_or("")),
        status: response
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok()),
        reason: response
            .get("statusText")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned),
        other_type: Some(mime.trim())
            .filter(|m| !m.is_empty() && !declared_stream)
            .map(str::to_owned),
        declared,
        body,
        request: request_body,
        request_problem,
        accepted: accepted(request),
        failure: failure_of(response),
    })
}

/// The request body as a JSON object (decoded from base64 where the capture stored it so:
/// `encoding`, or Chromium's `_encoding`); `None` when the capture holds none, an `Err` saying
/// why when it holds one that is no JSON object.
fn request_of(request: &Value) -> Option<Result<Value, String>> {
    let post = request.get("postData")?;
    let text = post.get("text").and_then(Value::as_str)?;
    let base64_marked = ["encoding", "_encoding"].iter().any(|key| {
        post.get(key)
            .and_then(Value::as_str)
            .is_some_and(|e| e.eq_ignore_ascii_case("base64"))
    });
    let bytes = if base64_marked {
        match base64(text) {
            Some(bytes) => bytes,
            None => {
                return Some(Err(
                    "is marked base64 in the capture, and is no base64".to_owned()
                ));
            }
        }
    } else {
        text.as_bytes().to_vec()
    };
    Some(crate::check::request::request_body(&bytes))
}

/// The transports a request's Accept header asks for, as the proxy reads a live one.
fn accepted(request: &Value) -> Vec<super::InputFormat> {
    request
        .get("headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|h| {
            h.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.eq_ignore_ascii_case("accept"))
        })
        .and_then(|h| h.get("value"))
        .and_then(Value::as_str)
        .map(super::accepted_formats)
        .unwrap_or_default()
}

/// A response's body as the capture holds it (`content.text`, decoded from base64 where the
/// capture stored it so); `None` when it holds none, or base64 that is not.
fn body_of(content: &Value) -> Option<Vec<u8>> {
    let text = content.get("text").and_then(Value::as_str)?;
    match content.get("encoding").and_then(Value::as_str) {
        Some(encoding) if encoding.eq_ignore_ascii_case("base64") => base64(text),
        _ => Some(text.as_bytes().to_vec()),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// A URL as diagnostics show it: no user name or password, no query string (where tokens
/// ride), no fragment.
fn shown_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or("");
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            let host = &rest[..end];
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            format!("{scheme}://{host}{}", &rest[end..])
        }
        None => url.to_owned(),
    }
}

/// Standard base64, padded or not; `None` when it is not base64.
fn base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    ENGINE.decode(text.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(mime: &str, text: &str, encoding: Option<&str>, post: Option<&str>) -> Value {
        let mut content = json!({"mimeType": mime, "text": text, "size": text.len()});
        if let Some(encoding) = encoding {
            content["encoding"] = json!(encoding);
        }
        let mut request = json!({"method": "POST", "url": "https://u:p@agent.example/run?key=secret",
                                  "headers": [{"name": "Authorization", "value": "Bearer x"}]});
        if let Some(post) = post {
            request["postData"] = json!({"mimeType": "application/json", "text": post});
        }
        json!({"request": request, "response": {"status": 200, "content": content}})
    }

    #[test]
    fn streams_are_found_among_other_entries() {
        let sse = "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n";
        let mut frames = Vec::new();
        let event = json!({"type":"RUN_STARTED","threadId":"t","runId":"r"});
        proto::push_frame(&proto::encode_event(&event).unwrap().bytes, &mut frames);
        let b64 = {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(&frames)
        };
        let har = json!({"log": {"version": "1.2", "entries": [
            entry("text/html", "<html></html>", None, None),
            entry("text/event-stream", sse, None, Some(r#"{"threadId":"t","runId":"r"}"#)),
            entry("application/json", r#"{"ok":true}"#, None, None),
            entry(proto::CONTENT_TYPE, &b64, Some("base64"), None),
            entry("text/event-stream", "data: {\"ping\":1}\n\n", None, None),
        ]}});
        let text = serde_json::to_vec_pretty(&har).unwrap();
        assert!(is_har(&text));
        let capture = read_har(&text[..]).unwrap();
        assert_eq!(capture.others, 2);
        let entries: Vec<usize> = capture.streams.iter().map(|s| s.entry).collect();
        assert_eq!(entries, [1, 3]);
        // An event stream of no AG-UI event, from where the streams came: a call that
        // brought none.
        let failed: Vec<usize> = capture.failed.iter().map(|f| f.entry).collect();
        assert_eq!(failed, [4]);
        assert_eq!(capture.streams[0].body, sse.as_bytes());
        assert_eq!(
            capture.streams[0].request,
            Some(json!({"threadId":"t","runId":"r"}))
        );
        assert_eq!(capture.streams[1].body, frames);
        assert_eq!(capture.streams[0].url, "https://agent.example/run");
        assert_eq!(
            capture.streams[0].name("c.har"),
            "c.har#1 (POST https://agent.example/run)"
        );
    }

    #[test]
    fn only_a_log_object_is_a_har() {
        assert!(is_har(b"{\"log\":{\"version\":\"1.2\"}}"));
        assert!(is_har(b" {\n  \"log\" : {\n    \"version\": \"1.2\","));
        assert!(!is_har(b"{\"log\": {\"level\": \"debug\"}}"));
        assert!(!is_har(b"{\"type\":\"RUN_STARTED\"}"));
        assert!(!is_har(b"{\"log\": \"text\"}"));
        assert!(!is_har(b"[]"));
    }

    /// A capture is read in blocks: parsed straight from an unbuffered file, the JSON parser
    /// asked for one byte per call (a system call each), and a capture of a few megabytes
    /// took minutes.
    #[test]
    fn a_capture_is_read_in_blocks_not_byte_by_byte() {
        struct Calls<'a>(&'a [u8], usize);
        impl Read for Calls<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.1 += 1;
                self.0.read(buf)
            }
        }
        let sse =
            "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n".repeat(2000);
        let har = json!({"log": {"version": "1.2", "entries": [
            entry("text/event-stream", &sse, None, None),
        ]}});
        let text = serde_json::to_vec(&har).unwrap();
        assert!(text.len() > 100_000);
        let mut reader = Calls(&text, 0);
        let capture = read_har(&mut reader).unwrap();
        assert_eq!(capture.streams.len(), 1);
        assert!(
            reader.1 < 100,
            "{} reads for {} bytes",
            reader.1,
            text.len()
        );
    }
}
