//! Property tests of the checker as a whole:
//! - it never panics, whatever sequence of (half-)events it is given;
//! - how the producer split its deltas never changes what it reports;
//! - the SSE reader yields the same events whatever the line endings and read sizes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};
use std::sync::{Arc, OnceLock};

use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::protocol::event::EventType;
use agui_lens_core::read::{self, Batch, FrameKind, InputFormat, ReadOptions};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

use crate::verify_agreement::{check_in_full, check_with, jsonl};

fn schemas() -> &'static SchemaSet {
    static SCHEMAS: OnceLock<SchemaSet> = OnceLock::new();
    SCHEMAS.get_or_init(|| SchemaSet::embedded().unwrap())
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        // Failures are printed with their minimal input; nothing is written into the tree.
        failure_persistence: None,
        ..Config::default()
    }
}

// ------------------------------------------------------------------ arbitrary events

/// Fields an AG-UI event may carry; each generated event picks a few.
const FIELDS: &[&str] = &[
    "messageId",
    "toolCallId",
    "toolCallName",
    "parentMessageId",
    "stepName",
    "subagentRunId",
    "parentSubagentRunId",
    "delta",
    "role",
    "name",
    "entityId",
    "subtype",
    "encryptedValue",
    "threadId",
    "runId",
    "parentRunId",
    "message",
    "code",
    "snapshot",
    "patch",
    "activityType",
    "content",
    "replace",
    "messages",
    "outcome",
    "input",
    "event",
    "value",
    "timestamp",
    "rawEvent",
    "metadata",
    "result",
];

const IDS: &[&str] = &["a", "b", ""];

/// A plausible value for a field, chosen by `seed`.
fn plausible(field: &str, seed: u64) -> Value {
    let id = Value::from(IDS[(seed % 3) as usize]);
    let k = (seed / 3) as usize;
    let choose = |options: Vec<Value>| options[k % options.len()].clone();
    match field {
        "delta" => choose(vec![
            json!("x"),
            json!(""),
            json!("{\"q\":"),
            json!("é😀\n"),
            json!([{"op": "add", "path": "/x", "value": 1}]),
            json!([{"op": "remove", "path": "/nope"}]),
            json!([{"op": "move", "from": "/x", "path": "/x/y"}]),
            json!([{"op": "test", "path": "/x", "value": 2}]),
        ]),
        "patch" => choose(vec![
            json!([{"op": "add", "path": "/steps/-", "value": "s"}]),
            json!([{"op": "replace", "path": "", "value": {}}]),
            json!([{"op": "copy", "from": "/missing", "path": "/y"}]),
            json!([]),
        ]),
        "role" => choose(vec![
            json!("assistant"),
            json!("user"),
            json!("reasoning"),
            json!("tool"),
            json!("robot"),
        ]),
        "subtype" => choose(vec![json!("message"), json!("tool-call"), json!("other")]),
        "snapshot" | "content" | "value" | "event" | "rawEvent" | "metadata" | "result" => {
            choose(vec![
                json!({"n": 1, "items": []}),
                json!("text"),
                json!([{"type": "text", "text": "x"}]),
                json!([1, 2]),
                json!({}),
            ])
        }
        "replace" => Value::Bool(seed % 2 == 0),
        "timestamp" => choose(vec![
            json!(1_700_000_000_000u64),
            json!(1_600_000_000_000u64),
            json!(1_700_000_000),
            json!(-5),
            json!(1.5),
            json!(9_007_199_254_740_993u64),
            json!(i64::MAX),
            json!(i64::MIN),
            json!(u64::MAX),
        ]),
        "messages" => {
            let owner = if k % 3 == 0 { json!("s1") } else { Value::Null };
            let mut message = json!({"id": id, "role": "assistant", "content": "c"});
            if !owner.is_null() {
                message["subagentRunId"] = owner;
            }
            if k % 2 == 0 {
                message["toolCalls"] = json!([{"id": IDS[k % 3], "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]);
            }
            choose(vec![
                json!([message.clone()]),
                json!([{"id": IDS[k % 3], "role": "reasoning", "content": "r"}, message]),
                json!([{"id": "u", "role": "user", "content": "hi"}]),
                json!([]),
            ])
        }
        "outcome" => choose(vec![
            json!({"type": "success"}),
            json!({"type": "interrupt", "interrupts": [{"id": "i", "reason": "r"}]}),
            json!({"type": "suspended", "interruptIds": ["i"]}),
            json!("success"),
            json!({"type": "weird"}),
        ]),
        "input" => json!({"threadId": "t", "runId": "r", "messages": plausible("messages", seed)}),
        "threadId" | "runId" | "parentRunId" => choose(vec![json!("t"), json!("r1"), json!("r2")]),
        "message" | "code" | "encryptedValue" | "activityType" | "toolCallName" => {
            choose(vec![json!("PLAN"), json!("f"), json!("")])
        }
        _ => id,
    }
}

/// A value of a wrong type (or null).
fn junk(seed: u64) -> Value {
    match seed % 7 {
        0 => Value::Null,
        1 => json!(seed as i64 - 3),
        2 => Value::Bool(seed % 2 == 0),
        3 => json!([]),
        4 => json!({"x": null}),
        5 => json!(0.25),
        _ => json!("\u{0}\u{ffff}"),
    }
}

/// How one generated event is made: its type, and for some fields whether the value is
/// plausible or junk, with a seed.
type EventRecipe = (u16, Vec<(usize, u8, u64)>);

fn build_event((ty, fields): &EventRecipe) -> Value {
    let mut event = serde_json::Map::new();
    let all = EventType::ALL;
    let n = all.len() as u16;
    match *ty {
        t if t < n * 8 => {
            event.insert("type".into(), all[(t % n) as usize].as_str().into());
        }
        t if t % 4 == 0 => {}
        t if t % 4 == 1 => {
            event.insert("type".into(), json!(42));
        }
        t if t % 4 == 2 => {
            event.insert("type".into(), json!("TEXT_MESSAGE_DELTA"));
        }
        _ => {
            event.insert("type".into(), json!("run_started"));
        }
    }
    for &(field, how, seed) in fields {
        let name = FIELDS[field % FIELDS.len()];
        let value = if how < 8 {
            plausible(name, seed)
        } else {
            junk(seed)
        };
        event.insert(name.into(), value);
    }
    Value::Object(event)
}

fn event_recipe() -> impl Strategy<Value = EventRecipe> {
    (
        0u16..(EventType::ALL.len() as u16 * 8 + 8),
        prop::collection::vec((0..FIELDS.len(), 0u8..10, any::<u64>()), 0..7),
    )
}

/// One line of input: usually an event, now and then something that is not one.
#[derive(Clone, Debug)]
enum LineRecipe {
    Event(EventRecipe),
    Garbage(u8),
}

fn line_recipe() -> impl Strategy<Value = LineRecipe> {
    prop_oneof![
        20 => event_recipe().prop_map(LineRecipe::Event),
        1 => (0u8..4).prop_map(LineRecipe::Garbage),
    ]
}

fn render_line(line: &LineRecipe) -> String {
    match line {
        LineRecipe::Event(recipe) => build_event(recipe).to_string(),
        LineRecipe::Garbage(0) => "{\"type\": \"RUN_STARTED\"".into(),
        LineRecipe::Garbage(1) => "[1, 2]".into(),
        LineRecipe::Garbage(2) => "not json".into(),
        LineRecipe::Garbage(_) => "\"RUN_FINISHED\"".into(),
    }
}

fn assert_sane(diags: &[Diagnostic], frames: usize) -> Result<(), TestCaseError> {
    for d in diags {
        prop_assert!(
            !d.message.trim().is_empty(),
            "{} has an empty message",
            d.rule
        );
        if let Some(index) = d.event_index {
            prop_assert!(
                (index as usize) < frames.max(1),
                "{} at event {index} of {frames}",
                d.rule
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(128))]

    /// Whatever the events, the checker returns, and says something in every diagnostic.
    #[test]
    fn the_checker_never_panics(lines in prop::collection::vec(line_recipe(), 0..24)) {
        let rendered: Vec<String> = lines.iter().map(render_line).collect();
        let mut text = String::new();
        for line in &rendered {
            text.push_str(line);
            text.push('\n');
        }
        let diags = check_with(schemas(), text.as_bytes(), Some(InputFormat::Jsonl));
        assert_sane(&diags, rendered.len())?;
        // The fast path for plain deltas changes nothing.
        prop_assert_eq!(&diags, &check_in_full(schemas(), text.as_bytes(), Some(InputFormat::Jsonl)));

        // The same lines as SSE frames go through the same rules.
        let mut sse = String::new();
        for line in &rendered {
            sse.push_str("data: ");
            sse.push_str(line);
            sse.push_str("\n\n");
        }
        let diags = check_with(schemas(), sse.as_bytes(), Some(InputFormat::Sse));
        assert_sane(&diags, rendered.len())?;
    }
}

// ------------------------------------------------------------------ splitting deltas

#[derive(Clone, Copy, Debug)]
enum Kind {
    Text,
    Tool,
    Reasoning,
}

/// One message, tool call or reasoning message of a generated stream.
#[derive(Clone, Debug)]
struct Item {
    kind: Kind,
    /// From a pool of three, so ids collide.
    id: usize,
    chunks: bool,
    content: String,
    tag: Option<&'static str>,
    /// Whether its continuations repeat the tag.
    tag_continuations: bool,
    /// Whether continuation chunks repeat the id.
    chunk_ids: bool,
    /// Whether an END follows (a chunk stream is also closed by whatever comes next).
    close: bool,
    /// Where the two versions of the stream cut the content.
    cuts_a: Vec<usize>,
    cuts_b: Vec<usize>,
}

fn item() -> impl Strategy<Value = Item> {
    let kind = prop_oneof![Just(Kind::Text), Just(Kind::Tool), Just(Kind::Reasoning)];
    let text = "[a-z é😀\"{}]{0,14}";
    let args = prop_oneof![
        "[a-z é😀]{0,8}".prop_map(|s| json!({"q": s, "n": [1, 2]}).to_string()),
        "[a-z{}\":,]{0,10}",
    ];
    (
        kind,
        0usize..3,
        any::<bool>(),
        (text, args),
        prop_oneof![3 => Just(None), 1 => Just(Some("s1")), 1 => Just(Some("s2"))],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![6 => Just(true), 1 => Just(false)],
        prop::collection::vec(0usize..64, 0..6),
        prop::collection::vec(0usize..64, 0..6),
    )
        .prop_map(
            |(kind, id, chunks, (text, args), tag, tag_continuations, chunk_ids, close, a, b)| {
                Item {
                    content: if matches!(kind, Kind::Tool) {
                        args
                    } else {
                        text
                    },
                    kind,
                    id,
                    chunks,
                    tag,
                    tag_continuations,
                    chunk_ids,
                    close,
                    cuts_a: a,
                    cuts_b: b,
                }
            },
        )
}

/// Cuts `content` at the given positions (taken modulo its length in characters) into
/// non-empty pieces; the empty string stays one empty piece.
fn pieces(content: &str, cuts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = content.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let mut at: BTreeSet<usize> = cuts.iter().map(|c| c % chars.len()).collect();
    at.remove(&0);
    let mut out = Vec::new();
    let mut start = 0;
    for cut in at.into_iter().chain([chars.len()]) {
        out.push(chars[start..cut].iter().collect());
        start = cut;
    }
    out
}

#[derive(Clone, Copy, Debug)]
enum Ending {
    Finished,
    Error,
    None,
}

/// Which piece of which item an event carries, if it carries a piece of a delta.
type Slot = Option<(usize, usize)>;

/// The stream for `items`, cut by version A or B: its events, and the piece each carries.
///
/// Chunk continuations are written so that which stream they continue does not depend on
/// the number of pieces: with the id, or, id-less, with the opener's tag (an id-less chunk
/// without a tag goes to the parent's stream of its kind when there is one, which would
/// rightly change the verdict). Chunk streams of subagents take their ids from another pool
/// than the parent's, for the same reason.
fn split_stream(items: &[Item], ending: Ending, version_b: bool) -> (Vec<Value>, Vec<Slot>) {
    let mut events = vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})];
    let mut slots = vec![None];
    for (n, item) in items.iter().enumerate() {
        let id = if item.chunks && item.tag.is_some() {
            ["p", "q", "p"][item.id]
        } else {
            ["x", "y", "z"][item.id]
        };
        let cuts = if version_b {
            &item.cuts_b
        } else {
            &item.cuts_a
        };
        let parts = pieces(&item.content, cuts);
        let id_field = if matches!(item.kind, Kind::Tool) {
            "toolCallId"
        } else {
            "messageId"
        };
        let tag = |event: &mut Value, continuation: bool| {
            if let Some(tag) = item.tag {
                let idless = event.get(id_field).is_none();
                if !continuation || item.tag_continuations || idless {
                    event["subagentRunId"] = tag.into();
                }
            }
        };
        if item.chunks {
            let ty = match item.kind {
                Kind::Text => "TEXT_MESSAGE_CHUNK",
                Kind::Tool => "TOOL_CALL_CHUNK",
                Kind::Reasoning => "REASONING_MESSAGE_CHUNK",
            };
            for (i, part) in parts.iter().enumerate() {
                let mut chunk = json!({"type": ty, "delta": part});
                if i == 0 || item.chunk_ids || item.tag.is_none() {
                    chunk[id_field] = id.into();
                }
                if i == 0 && matches!(item.kind, Kind::Tool) {
                    chunk["toolCallName"] = "search".into();
                }
                tag(&mut chunk, i > 0);
                events.push(chunk);
                slots.push(Some((n, i)));
            }
        } else {
            let (start, content, _) = names(item.kind);
            let mut opener = json!({"type": start, id_field: id});
            match item.kind {
                Kind::Text => opener["role"] = "assistant".into(),
                Kind::Tool => opener["toolCallName"] = "search".into(),
                Kind::Reasoning => opener["role"] = "reasoning".into(),
            }
            tag(&mut opener, false);
            events.push(opener);
            slots.push(None);
            for (i, part) in parts.iter().enumerate() {
                let mut event = json!({"type": content, id_field: id, "delta": part});
                tag(&mut event, true);
                events.push(event);
                slots.push(Some((n, i)));
            }
        }
        // An explicit END after chunks closes the chunk lane first, then finds the entity
        // ended: mostly left out, so that most streams are well formed.
        if item.close && (!item.chunks || item.id == 0) {
            let (_, _, end) = names(item.kind);
            let mut event = json!({"type": end, id_field: id});
            tag(&mut event, true);
            events.push(event);
            slots.push(None);
        }
    }
    match ending {
        Ending::Finished => {
            events.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}))
        }
        Ending::Error => events.push(json!({"type": "RUN_ERROR", "message": "boom"})),
        Ending::None => {}
    }
    slots.resize(events.len(), None);
    (events, slots)
}

fn names(kind: Kind) -> (&'static str, &'static str, &'static str) {
    match kind {
        Kind::Text => (
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
        ),
        Kind::Tool => ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"),
        Kind::Reasoning => (
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
        ),
    }
}

/// Where an event sits in a stream, comparable between the two versions: the events that
/// carry no piece of a delta are the same in both, so an event is placed by how many of those
/// come up to it, then by the item whose piece it carries, and whether that is its first
/// piece (there is a first piece in both versions; the later ones differ).
type Place = (u64, u64, u8);

fn places(slots: &[Slot]) -> Vec<Place> {
    let mut fixed = 0u64;
    slots
        .iter()
        .map(|slot| match slot {
            None => {
                fixed += 1;
                (fixed, 0, 0)
            }
            Some((item, piece)) => (fixed, *item as u64 + 1, u8::from(*piece > 0)),
        })
        .collect()
}

/// What a split cannot change: where the first error is and which rules report it; the rules
/// reported; and (rule, severity) counted over the diagnostics that are not located on an
/// event carrying a piece of a delta.
///
/// Unless `strict`, the last two only count diagnostics up to that first error (a later piece
/// of the same item being past it). After an error agui-lens reads on as if the producer had
/// meant the obvious thing, and what that gives can depend on the pieces: after a chunk is
/// dropped for naming another producer's stream, its id-less continuations (as many as there
/// are pieces) are read as continuing whatever else is open. The ignored
/// `splitting_deltas_never_changes_anything_reported` checks the strict form.
#[derive(Debug, PartialEq, Eq)]
struct Findings {
    first_error: Option<(Place, BTreeSet<&'static str>)>,
    rules: BTreeSet<&'static str>,
    untied: BTreeMap<(&'static str, &'static str), usize>,
}

fn findings(diags: &[Diagnostic], slots: &[Slot], strict: bool) -> Findings {
    let places = places(slots);
    let place = |d: &Diagnostic| {
        d.event_index
            .and_then(|i| places.get(i as usize).copied())
            .unwrap_or((u64::MAX, 0, 0))
    };
    let first = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(place)
        .min();
    let mut rules = BTreeSet::new();
    let mut untied = BTreeMap::new();
    let mut at_first = BTreeSet::new();
    for d in diags {
        let at = place(d);
        if Some(at) == first && d.severity == Severity::Error {
            at_first.insert(d.rule.name());
        }
        if !strict && first.is_some_and(|first| at > first) {
            continue;
        }
        rules.insert(d.rule.name());
        let tied = d
            .event_index
            .is_some_and(|i| slots.get(i as usize).is_some_and(Option::is_some));
        if !tied {
            *untied
                .entry((d.rule.name(), d.severity.as_str()))
                .or_insert(0) += 1;
        }
    }
    Findings {
        first_error: first.map(|at| (at, at_first)),
        rules,
        untied,
    }
}

fn compare_splits(items: &[Item], ending: Ending, strict: bool) -> Result<(), TestCaseError> {
    let (a, slots_a) = split_stream(items, ending, false);
    let (b, slots_b) = split_stream(items, ending, true);
    let found_a = check_with(schemas(), &jsonl(&a), Some(InputFormat::Jsonl));
    let found_b = check_with(schemas(), &jsonl(&b), Some(InputFormat::Jsonl));
    let listing = |found: &[Diagnostic]| {
        found
            .iter()
            .map(|d| format!("{:?} {} {}", d.event_index, d.rule, d.message))
            .collect::<Vec<_>>()
            .join("\n  ")
    };
    prop_assert_eq!(
        findings(&found_a, &slots_a, strict),
        findings(&found_b, &slots_b, strict),
        "\nA:\n{}B:\n{}A found:\n  {}\nB found:\n  {}",
        String::from_utf8_lossy(&jsonl(&a)),
        String::from_utf8_lossy(&jsonl(&b)),
        listing(&found_a),
        listing(&found_b)
    );
    Ok(())
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![4 => Just(Ending::Finished), 1 => Just(Ending::Error), 1 => Just(Ending::None)]
}

proptest! {
    #![proptest_config(config(128))]

    /// Splitting every delta differently (same concatenation) changes neither the verdict nor
    /// what is reported up to the first error.
    #[test]
    fn splitting_deltas_never_changes_the_verdict(
        items in prop::collection::vec(item(), 1..6),
        ending in ending(),
    ) {
        compare_splits(&items, ending, false)?;
    }

    /// The same, for everything reported (follow-on findings after an error included).
    #[test]
    #[ignore = "fails: after an error, follow-on findings depend on the split (see findings())"]
    fn splitting_deltas_never_changes_anything_reported(
        items in prop::collection::vec(item(), 1..6),
        ending in ending(),
    ) {
        compare_splits(&items, ending, true)?;
    }
}

// ------------------------------------------------------------------ SSE framing

/// Gives out its bytes in the sizes it is told, cycling through them.
struct Trickle {
    data: Vec<u8>,
    pos: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let n = size.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[derive(Clone, Copy, Debug)]
enum Endings {
    Lf,
    CrLf,
    Cr,
    Mixed,
}

/// An SSE capture of `events`: each as `data:` lines (sometimes the pretty-printed JSON,
/// one line per `data:` field), with comments and other fields around, and the given line
/// endings. Returns the bytes.
fn sse_capture(
    events: &[Value],
    extras: &[u8],
    endings: Endings,
    picks: &[u8],
    terminate_last: bool,
) -> Vec<u8> {
    let mut lines: Vec<String> = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let extra = extras.get(i).copied().unwrap_or(0);
        if extra & 1 != 0 {
            lines.push(": keep-alive".into());
        }
        if extra & 2 != 0 {
            lines.push("event: message".into());
        }
        if extra & 4 != 0 {
            lines.push(format!("id: {i}"));
        }
        if extra & 8 != 0 {
            lines.push("retry: 1000".into());
        }
        if extra & 16 != 0 {
            for line in serde_json::to_string_pretty(event).unwrap().lines() {
                lines.push(format!("data: {line}"));
            }
        } else if extra & 32 != 0 {
            lines.push(format!("data:{event}"));
        } else {
            lines.push(format!("data: {event}"));
        }
        let last = i + 1 == events.len();
        if !last || terminate_last {
            lines.push(String::new());
            if extra & 64 != 0 {
                lines.push(String::new());
            }
        }
    }
    let mut out = String::new();
    let mut previous = "";
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        let mut ending = match endings {
            Endings::Lf => "\n",
            Endings::CrLf => "\r\n",
            Endings::Cr => "\r",
            Endings::Mixed => ["\n", "\r\n", "\r"][picks.get(i).copied().unwrap_or(0) as usize % 3],
        };
        // A CR followed by an empty line ended by LF would read as one CRLF.
        if previous == "\r" && line.is_empty() && ending == "\n" {
            ending = "\r\n";
        }
        // Likewise a CR ending right before a line that starts with LF cannot happen: lines
        // hold no line breaks.
        out.push_str(ending);
        previous = ending;
    }
    if !terminate_last {
        // The last frame is cut off before its blank line (and maybe before its line end).
        if let Some(stripped) = out.strip_suffix(previous) {
            if picks.first().is_some_and(|p| p % 2 == 0) {
                out = stripped.to_owned();
            }
        }
    }
    out.into_bytes()
}

fn sse_event() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            "TEXT_MESSAGE_CONTENT",
            "TOOL_CALL_ARGS",
            "CUSTOM",
            "RUN_STARTED",
        ]),
        "[a-z é😀\r\n\"\\\\:]{0,12}",
        any::<i32>(),
    )
        .prop_map(|(ty, text, n)| json!({"type": ty, "messageId": "m1", "delta": text, "n": n}))
}

proptest! {
    #![proptest_config(config(96))]

    /// LF, CRLF, CR or a mix, and any read sizes: the same events come out.
    #[test]
    fn sse_frames_do_not_depend_on_line_endings_or_reads(
        events in prop::collection::vec(sse_event(), 1..8),
        extras in prop::collection::vec(any::<u8>(), 8),
        endings in prop_oneof![Just(Endings::Lf), Just(Endings::CrLf), Just(Endings::Cr), Just(Endings::Mixed)],
        picks in prop::collection::vec(any::<u8>(), 64),
        sizes in prop::collection::vec(1usize..40, 1..8),
        terminate_last in any::<bool>(),
    ) {
        let bytes = sse_capture(&events, &extras, endings, &picks, terminate_last);
        let reader = Trickle { data: bytes.clone(), pos: 0, sizes, next: 0 };
        let mut opened = read::open_reader(
            Arc::from("sse"),
            Box::new(reader),
            Some(InputFormat::Sse),
            &ReadOptions::default(),
        )
        .unwrap();
        let mut batch = Batch::default();
        let mut read = Vec::new();
        while opened.reader.next_batch(&mut batch).unwrap() {
            for frame in &batch.frames {
                prop_assert!(
                    matches!(frame.kind, FrameKind::Data { .. }),
                    "unexpected frame {:?} in {:?}", frame, String::from_utf8_lossy(&bytes)
                );
                let text = batch.bytes(frame);
                let value: Value = serde_json::from_slice(text).map_err(|e| {
                    TestCaseError::fail(format!(
                        "frame {:?} is not JSON ({e}) in {:?}",
                        String::from_utf8_lossy(text),
                        String::from_utf8_lossy(&bytes)
                    ))
                })?;
                read.push(value);
            }
        }
        prop_assert_eq!(&read, &events, "capture: {:?}", String::from_utf8_lossy(&bytes));
    }
}
