//! From a frame's bytes to a located event, or to the framing problem that prevents one.

use std::sync::Arc;

use serde_json::Value;

use crate::check::catalog::RuleId;
use crate::check::diagnostic::{Diagnostic, Severity};
use crate::protocol::event::{Event, EventType, Location, RawPatch};
use crate::read::{Batch, CLIENT_FRAME_LIMIT, Caveat, Frame, FrameKind, ProtoProblem, halves};
use crate::text::{abbreviate, human_bytes};

/// Longest excerpt of an event shown with a diagnostic.
pub const EXCERPT_LEN: usize = 160;

/// What one frame yielded: an event (if its bytes are a JSON object) and framing findings.
#[derive(Debug)]
pub struct Parsed {
    pub event: Option<Event>,
    pub problems: Vec<Diagnostic>,
    /// The event was read by [`crate::read::plain`]: the newest embedded schemas find
    /// nothing wrong with it.
    pub plain: bool,
}

/// A finding with the rule's default severity; the engine applies the user's levels.
pub fn finding(rule: RuleId, loc: &Location, message: String) -> Diagnostic {
    let severity = rule.rule().default.severity().unwrap_or(Severity::Warning);
    Diagnostic::at(rule, severity, loc, message)
}

/// An abbreviated, printable excerpt of a frame's bytes, on one line (a pretty-printed
/// event's line breaks become spaces). When an event is too long to show whole, the members
/// that say which event it is (its type and ids) come first, so a long `rawEvent` or
/// snapshot does not push them out of sight.
pub fn excerpt(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    let text = if text.chars().nth(EXCERPT_LEN).is_some() {
        identifying_first(bytes).unwrap_or(text)
    } else {
        text
    };
    Some(abbreviate(&one_line(&text), EXCERPT_LEN))
}

/// The members of an event object that name it, in the order they are shown first.
const IDENTIFYING: &[&str] = &[
    "type",
    "messageId",
    "toolCallId",
    "toolCallName",
    "parentMessageId",
    "threadId",
    "runId",
    "stepName",
    "name",
    "subagentRunId",
    "activityType",
    "entityId",
];

/// An object's JSON with its identifying members first, the others after them in the order
/// written; `None` when the bytes are no JSON object.
fn identifying_first(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    struct Members<'a>(Vec<(String, &'a serde_json::value::RawValue)>);
    impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit<'a>(std::marker::PhantomData<&'a ()>);
            impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
                type Value = Members<'a>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<M: serde::de::MapAccess<'de>>(
                    self,
                    mut map: M,
                ) -> Result<Members<'a>, M::Error> {
                    let mut members = Vec::new();
                    while let Some(entry) = map.next_entry()? {
                        members.push(entry);
                    }
                    Ok(Members(members))
                }
            }
            d.deserialize_map(Visit(std::marker::PhantomData))
        }
    }
    let Members(mut members) = serde_json::from_slice(bytes).ok()?;
    let rank = |key: &str| {
        IDENTIFYING
            .iter()
            .position(|k| *k == key)
            .unwrap_or(usize::MAX)
    };
    members.sort_by_key(|(key, _)| rank(key));
    let mut out = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(key).ok()?);
        out.push(':');
        out.push_str(value.get());
    }
    out.push('}');
    Some(std::borrow::Cow::Owned(out))
}

/// Text on one line: each run of whitespace holding a line feed becomes one space (in JSON,
/// line breaks only ever stand between tokens). A carriage return with no line feed is kept:
/// in a line that is no JSON it is what the line holds (shown as an escape, not as a space a
/// reader would take for one).
fn one_line(text: &str) -> String {
    if !text.contains('\n') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            if run.contains('\n') {
                out.push(' ');
            } else {
                out.push_str(&run);
            }
            run.clear();
        }
        out.push(c);
    }
    out
}

pub fn location(path: &Arc<str>, frame: &Frame) -> Location {
    Location {
        path: path.clone(),
        line: frame.line,
        offset: frame.offset,
        index: frame.index,
    }
}

/// Whether a line that ends inside a JSON value ends the way a line of pretty-printed JSON
/// does (after an opening bracket or a comma) rather than in the middle of a token, where a
/// cut capture ends.
fn opens_a_multiline_value(text: &str) -> bool {
    text.trim_end().ends_with(['{', '[', ','])
}

/// Parses one frame into its event, if it holds one, for a reader that reports nothing
/// (fold, compact): the same event [`parse_frame`] yields, without looking for what would
/// only be reported.
pub fn parse_event(
    path: &Arc<str>,
    batch: &Batch,
    frame: &Frame,
    max_line: usize,
) -> Option<Event> {
    parse_frame(path, batch, frame, max_line, false).event
}

/// One event's JSON read as what folds a stream reads it: half a UTF-16 pair, which
/// `serde_json` refuses, with a stand-in for it (see [`halves`]).
pub fn value_keeping_halves(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(bytes).or_else(|err| {
        let kept = std::str::from_utf8(bytes).ok().and_then(halves::keep_lone);
        match kept {
            Some(kept) => serde_json::from_str(&kept),
            None => Err(err),
        }
    })
}

/// Parses one frame, with everything found wrong with it; repeated keys are looked for only
/// when `repeated_keys` (noted while parsing, at some cost, worth it only when the rule that
/// reports them is on).
pub fn parse_frame(
    path: &Arc<str>,
    batch: &Batch,
    frame: &Frame,
    max_line: usize,
    repeated_keys: bool,
) -> Parsed {
    parse_frame_with(
        path,
        batch,
        frame,
        max_line,
        repeated_keys,
        true,
        Halves::Unread,
    )
}

/// How an event whose string holds half a UTF-16 surrogate pair is read (see
/// [`crate::read::halves`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Halves {
    /// Not read: what rewrites events leaves it unread, as one it cannot read, for its text
    /// is not what the stream holds.
    Unread,
    /// Read with U+FFFD in the half's place, and said (checking).
    Mended,
    /// Read with a stand-in for the half, which text appended after it can join (folding).
    Kept,
}

/// A protobuf frame of `len` bytes over the official client's limit.
fn over_client_limit(loc: &Location, len: u64) -> Diagnostic {
    finding(
        RuleId::FramingProtoOverClientLimit,
        loc,
        format!(
            "a frame of {len} bytes (its 4-byte length included) is over the {} \
             ({CLIENT_FRAME_LIMIT} bytes) that the official client reads: @ag-ui/client ends \
             the stream here",
            human_bytes(CLIENT_FRAME_LIMIT)
        ),
    )
    .with_help(
        "send an event this large over SSE, or split it (a STATE_SNAPSHOT into deltas, a long \
         text into several TEXT_MESSAGE_CONTENT deltas)",
    )
}

/// [`parse_frame`], with the small events read on their fast path only when `plain` (tests
/// hold that path to the other), and an event whose string holds half a UTF-16 surrogate
/// pair read as `halves` says.
pub(crate) fn parse_frame_with(
    path: &Arc<str>,
    batch: &Batch,
    frame: &Frame,
    max_line: usize,
    repeated_keys: bool,
    plain: bool,
    halves: Halves,
) -> Parsed {
    let loc = location(path, frame);
    let mut problems = Vec::new();
    let bytes = batch.bytes(frame);
    match &frame.kind {
        FrameKind::TooLong { len } => {
            problems.push(
                finding(
                    RuleId::FramingLineTooLong,
                    &loc,
                    format!(
                        "a frame of {} is over the {} cap and was skipped",
                        human_bytes(*len),
                        human_bytes(max_line as u64)
                    ),
                )
                .with_help("raise the cap with --max-line if events this large are expected"),
            );
            return Parsed {
                event: None,
                problems,
                plain: false,
            };
        }
        FrameKind::Malformed { message } => {
            problems.push(finding(
                RuleId::FramingInvalidJson,
                &loc,
                format!("invalid JSON: {message}"),
            ));
            return Parsed {
                event: None,
                problems,
                plain: false,
            };
        }
        FrameKind::Proto { problem, message } => {
            let (rule, help) = match problem {
                ProtoProblem::Truncated => (
                    RuleId::FramingProtoTruncated,
                    "the agent stopped (or the capture was cut) inside an event",
                ),
                ProtoProblem::TooLong => (
                    RuleId::FramingProtoTooLong,
                    "if the input is protobuf frames, raise the cap with --max-line; else \
                     name its format with --input-format",
                ),
                ProtoProblem::Undecodable => (
                    RuleId::FramingProtoUndecodable,
                    "encode each event as one ag_ui.Event message (proto/events.proto)",
                ),
                ProtoProblem::UnknownArm => (
                    RuleId::FramingProtoUnknownArm,
                    "a client of protocol 1.0 drops this event; check that both sides speak \
                     the same protocol version",
                ),
            };
            problems.push(finding(rule, &loc, message.clone()).with_help(help));
            return Parsed {
                event: None,
                problems,
                plain: false,
            };
        }
        FrameKind::Data {
            caveat: Caveat::OverClientLimit { len },
            ..
        } => problems.push(over_client_limit(&loc, *len)),
        FrameKind::Data {
            caveat: Caveat::ProtoSkipped { len, skips },
            ..
        } => {
            let first = skips
                .first
                .map_or_else(String::new, |first| format!(" ({first})"));
            let fields = match skips.count {
                1 => format!("a field{first}"),
                n => format!("{n} fields, the first{first},"),
            };
            problems.push(
                finding(
                    RuleId::FramingProtoUnknownField,
                    &loc,
                    format!(
                        "this frame's message carries {fields} that this build's protobuf \
                         definitions do not have: decoding passes over it, as every protobuf \
                         decoder does, so no client reads what it holds and it is not checked"
                    ),
                )
                .with_help(
                    "check that both sides speak the same protocol version; data of the \
                     producer's own belongs in a field the protocol defines (metadata, \
                     rawEvent) or a CUSTOM event",
                ),
            );
            if *len > CLIENT_FRAME_LIMIT {
                problems.push(over_client_limit(&loc, *len));
            }
        }
        FrameKind::Data {
            caveat: Caveat::SseMerged { with_line },
            ..
        } => {
            problems.push(
                finding(
                    RuleId::FramingSseFramesMerged,
                    &loc,
                    format!(
                        "no two LFs part this SSE frame from the one at line {with_line} (their \
                         lines end with CR LF or CR): the official client splits frames only at \
                         two LFs, reads both as one and ends the stream here"
                    ),
                )
                .with_help(
                    "end every SSE line with LF alone, as the 1.1 HTTP binding has a producer do",
                ),
            );
        }
        FrameKind::Data {
            caveat: Caveat::SseOverClientLimit { len },
            ..
        } => {
            problems.push(
                finding(
                    RuleId::FramingSseOverClientLimit,
                    &loc,
                    format!(
                        "the official client holds {len} UTF-16 units of text until this SSE \
                         frame ends, over the {} ({CLIENT_FRAME_LIMIT}) it buffers: \
                         @ag-ui/client ends the stream here when a read leaves more than that \
                         waiting",
                        human_bytes(CLIENT_FRAME_LIMIT)
                    ),
                )
                .with_help(
                    "split the event (a STATE_SNAPSHOT into deltas, a long text into several \
                     TEXT_MESSAGE_CONTENT deltas)",
                ),
            );
        }
        FrameKind::Data { caveat, .. } => {
            if *caveat == Caveat::Unterminated {
                problems.push(
                    finding(
                        RuleId::FramingSseUnterminatedFrame,
                        &loc,
                        "the input ends inside an SSE frame: no blank line after its last field"
                            .into(),
                    )
                    .with_help(
                        "end every SSE event with a blank line; an EventSource drops an \
                         unterminated last event",
                    ),
                );
            }
        }
    }
    // Checked once for the whole batch where the batch is UTF-8 (most are).
    let text = match batch
        .text(frame, 0, bytes.len())
        .map_or_else(|| std::str::from_utf8(bytes), Ok)
    {
        Ok(text) => text,
        Err(err) => {
            let at = err.valid_up_to();
            let bad = bytes.get(at).copied().unwrap_or_default();
            problems.push(
                finding(
                    RuleId::FramingInvalidUtf8,
                    &loc,
                    format!("invalid UTF-8 at byte {at} of the event (0x{bad:02X})"),
                )
                .with_help(
                    "events are UTF-8 JSON; the capture may have been re-encoded (e.g. as Latin-1)",
                )
                .with_excerpt(excerpt(bytes)),
            );
            return Parsed {
                event: None,
                problems,
                plain: false,
            };
        }
    };
    // A patch long enough to be kept as text is read on the full path, which keeps it so.
    if plain && text.len() < large_patch_threshold() {
        if let Some((kind, value)) = crate::read::plain::scan(text) {
            return Parsed {
                event: Some(Event::new(loc, Some(kind), value)),
                problems,
                plain: true,
            };
        }
    }
    let large = (text.len() >= large_patch_threshold())
        .then(|| parse_large_patch(text))
        .flatten();
    // A repeated key is noted while parsing when the rule wants it; a large patch, parsed
    // apart, is scanned for one afterwards.
    let parsed = match large {
        Some((value, patch)) => {
            let repeated = repeated_keys
                .then(|| crate::read::dupkeys::first_repeated(bytes))
                .flatten();
            Ok((value, Some(Arc::new(patch)), repeated))
        }
        None if repeated_keys => crate::read::dupkeys::parse_noting_repeats(text)
            .map(|(value, repeated)| (value, None, repeated)),
        None => serde_json::from_str(text).map(|value| (value, None, None)),
    };
    // Half a UTF-16 pair is JSON serde_json does not read: the event is read with U+FFFD in
    // its place, and that is said; or with a stand-in for it, which is not.
    let (mut kept, mut mended) = (false, false);
    let parsed = match parsed {
        Err(err) if halves != Halves::Unread && is_surrogate_error(text, &err) => {
            let read = match halves {
                Halves::Mended => halves::replace_lone(text, |_| "\\uFFFD".to_owned()),
                _ => halves::keep_lone(text).map(|kept| (kept, String::new())),
            };
            // Read again, noting a repeated key as the first reading would have.
            let again = |text: &str| match repeated_keys {
                true => crate::read::dupkeys::parse_noting_repeats(text),
                false => serde_json::from_str(text).map(|value| (value, None)),
            };
            match read.map(|(text, first)| (again(&text), first)) {
                Some((Ok((value, repeated)), first)) => {
                    if halves == Halves::Mended {
                        problems.push(lone_surrogate(&loc, &first).with_excerpt(excerpt(bytes)));
                    }
                    kept = halves == Halves::Kept;
                    mended = halves == Halves::Mended;
                    Ok((value, None, repeated))
                }
                _ => Err(err),
            }
        }
        parsed => parsed,
    };
    let (value, patch, repeated) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            problems.push(invalid_json(&loc, text, &err).with_excerpt(excerpt(bytes)));
            return Parsed {
                event: None,
                problems,
                plain: false,
            };
        }
    };
    if !value.is_object() {
        problems.push(
            finding(
                RuleId::FramingNotAnObject,
                &loc,
                format!("the event is a JSON {}, not an object", kind_name(&value)),
            )
            .with_help("every AG-UI event is a JSON object with a `type` field")
            .with_excerpt(excerpt(bytes)),
        );
        return Parsed {
            event: None,
            problems,
            plain: false,
        };
    }
    if let Some(repeated) = repeated {
        let place = if repeated.pointer.is_empty() {
            "the event".to_owned()
        } else {
            format!("the object at {}", repeated.pointer)
        };
        problems.push(
            finding(
                RuleId::FramingDuplicateKey,
                &loc,
                format!(
                    "key \"{}\" appears more than once in {place}; the last value is the one read",
                    repeated.key
                ),
            )
            .with_help("write each key once; parsers disagree on which repeat wins")
            .with_subject(format!("{} {}", repeated.pointer, repeated.key))
            .with_excerpt(excerpt(bytes)),
        );
    }
    let kind = EventType::of(&value);
    let mut event = Event::new(loc, kind, value);
    event.patch = patch;
    event.halves = kept;
    event.mended = mended;
    Parsed {
        event: Some(event),
        problems,
        plain: false,
    }
}

/// Frames at least this long that hold a JSON Patch keep its operations as text (see
/// [`Event::patch`]). `AGUI_LENS_LARGE_PATCH` (bytes) lowers it, for tests that hold both
/// ways of reading a patch to one verdict.
pub fn large_patch_threshold() -> usize {
    static AT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AT.get_or_init(|| {
        std::env::var("AGUI_LENS_LARGE_PATCH")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(4 << 20)
    })
}

/// Reads a STATE_DELTA or ACTIVITY_DELTA with its patch's operations kept as text, and every
/// other field as a value (the patch field holds `[]`); `None` for any other event, which is
/// then read whole.
fn parse_large_patch(text: &str) -> Option<(Value, RawPatch)> {
    use std::borrow::Cow;
    use std::collections::BTreeMap;
    // Each part is parsed apart, so serde_json's limit of 128 levels would count from the
    // part, not from the event: an event that nests that deep is left to the full parse,
    // which refuses it.
    if nests(text.as_bytes(), 127) {
        return None;
    }
    let fields: BTreeMap<Cow<'_, str>, &serde_json::value::RawValue> =
        serde_json::from_str(text).ok()?;
    let ty: Cow<'_, str> = serde_json::from_str(fields.get("type")?.get()).ok()?;
    let field = EventType::from_name(&ty)?.patch_field()?;
    let patch = RawPatch::new(fields.get(field)?.get())?;
    let mut value = serde_json::Map::new();
    for (key, raw) in fields {
        let field_value = if key == field {
            Value::Array(Vec::new())
        } else {
            serde_json::from_str(raw.get()).ok()?
        };
        value.insert(key.into_owned(), field_value);
    }
    Some((Value::Object(value), patch))
}

/// Whether `text` opens `levels` arrays or objects one inside another anywhere outside its
/// strings.
fn nests(text: &[u8], levels: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'"' => match crate::read::dupkeys::string_end(text, at + 1) {
                Some(end) => at = end,
                None => return false,
            },
            b'[' | b'{' => {
                depth += 1;
                if depth >= levels {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    false
}

fn invalid_json(loc: &Location, text: &str, err: &serde_json::Error) -> Diagnostic {
    use serde_json::error::Category;
    let full = err.to_string();
    // serde_json appends " at line L column C"; we say where ourselves.
    let what = full
        .rsplit_once(" at line ")
        .map(|(what, _)| what.to_owned())
        .unwrap_or(full.clone());
    let place = if text.contains('\n') {
        format!("line {} of the event, column {}", err.line(), err.column())
    } else {
        format!("column {}", err.column())
    };
    let (message, help) = if what.contains("recursion limit") {
        (
            format!("the event nests arrays or objects deeper than 128 levels ({place})"),
            Some("no AG-UI event nests that deep; the data is probably corrupt or hostile"),
        )
    } else if is_surrogate_error(text, err) {
        (
            format!("invalid JSON: a string holds a lone UTF-16 surrogate escape ({place})"),
            Some(
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair) is not \
                 Unicode text; fix the encoder that produced it",
            ),
        )
    } else if err.classify() == Category::Eof && opens_a_multiline_value(text) {
        (
            format!("the event's JSON is cut off at the end of its line: {what} ({place})"),
            Some(
                "the line ends where a pretty-printed value goes on to the next: read the \
                 input as JSON values one after another with --input-format json",
            ),
        )
    } else if err.classify() == Category::Eof {
        (
            format!("the event's JSON is cut off: {what} ({place})"),
            Some("the line was probably truncated when the stream was captured"),
        )
    } else if text.starts_with('\u{feff}') {
        (
            format!("invalid JSON: the event starts with a byte-order mark (U+FEFF) ({place})"),
            Some("only one byte-order mark at the very start of the input is ignored"),
        )
    } else if text.contains('\0') {
        (
            format!("invalid JSON: {what} ({place}); the event contains NUL bytes"),
            None,
        )
    } else {
        (format!("invalid JSON: {what} ({place})"), None)
    };
    let diagnostic = finding(RuleId::FramingInvalidJson, loc, message);
    match help {
        Some(help) => diagnostic.with_help(help),
        None => diagnostic,
    }
}

/// Whether serde_json refused `text` for a surrogate escape it cannot pair.
fn is_surrogate_error(text: &str, err: &serde_json::Error) -> bool {
    let what = err.to_string();
    what.contains("surrogate") || (what.contains("hex escape") && has_surrogate_escape(text))
}

fn lone_surrogate(loc: &Location, escape: &str) -> Diagnostic {
    finding(
        RuleId::FramingLoneSurrogate,
        loc,
        format!(
            "a string holds {escape}, half of a UTF-16 surrogate pair with no other half: \
             JavaScript and Python read it, strict Unicode parsers refuse it; checked with \
             U+FFFD in its place"
        ),
    )
    .with_help(
        "split text at character boundaries, not UTF-16 units (a JavaScript `slice` can cut \
         an emoji in two)",
    )
}

/// Whether the text holds a `\uD800`–`\uDFFF` escape, the half of a UTF-16 pair.
fn has_surrogate_escape(text: &str) -> bool {
    text.as_bytes().windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}

pub fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brackets inside strings (after escaped quotes too) are not nesting.
    #[test]
    fn nesting_is_counted_outside_strings() {
        assert!(nests(b"[[[]]]", 3));
        assert!(!nests(b"[[[]]]", 4));
        assert!(!nests(br#"[{"a":"[[[[\"[[[["}]"#, 3));
        assert!(nests(br#"[{"a\"":[{}]}]"#, 4));
        assert!(!nests(br#"[{"a":"\\","b":"[[[["}]"#, 3));
        assert!(!nests(br#"["unterminated [[[["#, 2));
    }

    fn parse_one(text: &[u8]) -> Parsed {
        let mut batch = Batch::default();
        batch.push_data(text, 7, 100, 3, crate::read::Caveat::None);
        let frame = batch.frames[0].clone();
        parse_frame_with(
            &Arc::from("f.jsonl"),
            &batch,
            &frame,
            1024,
            true,
            true,
            Halves::Mended,
        )
    }

    fn rule_and_message(text: &[u8]) -> (RuleId, String) {
        let parsed = parse_one(text);
        assert!(parsed.event.is_none());
        let p = &parsed.problems[0];
        (p.rule, p.message.clone())
    }

    /// A long event shows what it is first: LangGraph puts a large `rawEvent` before the
    /// ids a finding is about.
    #[test]
    fn a_long_excerpt_leads_with_the_events_identity() {
        let raw = "x".repeat(1000);
        let text = format!(
            r#"{{"rawEvent":{{"data":"{raw}"}},"type":"TOOL_CALL_START","toolCallName":"search","toolCallId":"call_1","parentMessageId":"m1"}}"#
        );
        let shown = excerpt(text.as_bytes()).unwrap();
        assert!(
            shown.starts_with(
                r#"{"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"search","parentMessageId":"m1","rawEvent":{"data":"xxx"#
            ),
            "{shown}"
        );
        // A short event is shown as written.
        let short = r#"{"rawEvent":1,"type":"RUN_STARTED"}"#;
        assert_eq!(excerpt(short.as_bytes()).unwrap(), short);
    }

    /// A pretty-printed event is shown on one line, so it stays inside the report's gutter.
    #[test]
    fn an_excerpt_is_one_line() {
        let text = "{\n  \"type\": \"RUN_STARTED\",\r\n  \"runId\": \"a  b\"\n}";
        assert_eq!(
            excerpt(text.as_bytes()).unwrap(),
            r#"{ "type": "RUN_STARTED", "runId": "a  b" }"#
        );
        let long = format!(
            "{{\n  \"delta\": \"{}\",\n  \"type\": \"X\"\n}}",
            "y".repeat(300)
        );
        assert!(!excerpt(long.as_bytes()).unwrap().contains('\n'));
    }

    #[test]
    fn events_keep_their_location() {
        let parsed = parse_one(br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#);
        let event = parsed.event.unwrap();
        assert_eq!(event.kind, Some(EventType::RunStarted));
        assert_eq!(
            (event.loc.line, event.loc.offset, event.loc.index),
            (7, 100, 3)
        );
        assert!(parsed.problems.is_empty());
    }

    #[test]
    fn framing_problems() {
        assert_eq!(
            rule_and_message(b"{\"type\":"),
            (
                RuleId::FramingInvalidJson,
                "the event's JSON is cut off: EOF while parsing a value (column 8)".into()
            )
        );
        assert_eq!(rule_and_message(b"[1]").0, RuleId::FramingNotAnObject);
        assert_eq!(
            rule_and_message(b"{\"a\":\"caf\xe9\"}").0,
            RuleId::FramingInvalidUtf8
        );
        // Half a UTF-16 pair is JSON (RFC 8259 §8.2) that JavaScript and Python read: said,
        // and the event read with U+FFFD in its place; an escape that is no hex stays invalid.
        let parsed = parse_one(br#"{"a":"\ud800"}"#);
        assert_eq!(parsed.problems[0].rule, RuleId::FramingLoneSurrogate);
        let message = &parsed.problems[0].message;
        assert!(message.contains("\\ud800"), "{message}");
        let parsed =
            parse_one(br#"{"type":"CUSTOM","name":"x\ude00\\ud800\ud83d\ude00","value":1}"#);
        let event = parsed.event.expect("read");
        assert_eq!(event.value["name"], "x\u{fffd}\\ud800\u{1f600}");
        assert_eq!(parsed.problems.len(), 1);
        // Nor does it hide a key given twice in the same event.
        let parsed = parse_one(br#"{"type":"CUSTOM","name":"\ud83d","name":"ok","value":1}"#);
        let rules: Vec<RuleId> = parsed.problems.iter().map(|d| d.rule).collect();
        assert_eq!(
            rules,
            [RuleId::FramingLoneSurrogate, RuleId::FramingDuplicateKey]
        );
        let (rule, _) = rule_and_message(br#"{"a":"\ud800\u12"}"#);
        assert_eq!(rule, RuleId::FramingInvalidJson);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let (_, message) = rule_and_message(deep.as_bytes());
        assert!(message.contains("deeper than 128"), "{message}");
        let (_, message) = rule_and_message(b"{\"a\":1}\0");
        assert!(message.contains("NUL"), "{message}");
    }

    #[test]
    fn huge_exponents_parse_without_rounding() {
        let parsed = parse_one(br#"{"type":"CUSTOM","name":"n","value":1e999999}"#);
        let value = parsed.event.unwrap().value;
        // The value is kept exactly (as text), not rounded to infinity.
        assert_eq!(value["value"].to_string(), "1e+999999");
        let parsed = parse_one(br#"{"n":123456789012345678901234567890}"#);
        let value = parsed.event.unwrap().value;
        assert_eq!(value["n"].to_string(), "123456789012345678901234567890");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(12), "12 bytes");
        assert_eq!(human_bytes(64 * 1024 * 1024), "64 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
