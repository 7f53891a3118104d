//! The fast path for the events that make up most of any stream: TEXT_MESSAGE_CONTENT,
//! REASONING_MESSAGE_CONTENT and TOOL_CALL_ARGS. Such an event is read straight into a few
//! fields that point into its bytes — no `Value`, no allocation — when, and only when, it has
//! exactly the shape its schema allows with no unknown field, no null and no surprise. Anything
//! else returns `None` and takes the full path, which then reports whatever is wrong; so this
//! path can only ever accept events the full path would find nothing wrong with.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use serde::Deserialize;

use crate::protocol::event::EventType;
use crate::read::{Batch, Frame};

/// The largest integer a JSON number carries exactly; timestamps beyond it break the schema.
const MAX_SAFE: i64 = 9_007_199_254_740_991;

/// A string field: where it sits in the event's bytes, or its unescaped text when the bytes
/// hold escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    At(u32, u32),
    Owned(Box<str>),
}

impl Text {
    fn new(field: Cow<'_, str>, raw: &[u8]) -> Option<Text> {
        match field {
            Cow::Borrowed(text) => {
                let start = (text.as_ptr() as usize).checked_sub(raw.as_ptr() as usize)?;
                let end = start + text.len();
                if end > raw.len() {
                    return None;
                }
                Some(Text::At(start.try_into().ok()?, end.try_into().ok()?))
            }
            Cow::Owned(text) => Some(Text::Owned(text.into_boxed_str())),
        }
    }

    /// The text, given the event's bytes.
    pub fn get<'a>(&'a self, raw: &'a [u8]) -> &'a str {
        match self {
            // The range was taken from a string the parser read out of these bytes.
            Text::At(start, end) => {
                std::str::from_utf8(&raw[*start as usize..*end as usize]).unwrap_or_default()
            }
            Text::Owned(text) => text,
        }
    }

    /// The text, given the batch and frame the event was read from: what [`Text::get`]
    /// returns for the frame's bytes, without checking the text again where the batch was
    /// checked whole.
    pub fn in_frame<'a>(&'a self, batch: &'a Batch, frame: &Frame) -> &'a str {
        match self {
            Text::At(start, end) => batch
                .text(frame, *start as usize, *end as usize)
                .unwrap_or_default(),
            Text::Owned(text) => text,
        }
    }
}

/// A delta event read on the fast path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delta {
    pub kind: EventType,
    /// `messageId`, or `toolCallId` for TOOL_CALL_ARGS.
    pub id: Text,
    pub delta: Text,
    pub owner: Option<Text>,
    pub timestamp: Option<i64>,
}

/// Deserialises a present field; `null` is an error (the full path reports it).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(rename = "messageId", borrow, default, deserialize_with = "present")]
    message_id: Option<Cow<'a, str>>,
    #[serde(rename = "toolCallId", borrow, default, deserialize_with = "present")]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    delta: Cow<'a, str>,
    #[serde(default, deserialize_with = "present")]
    timestamp: Option<i64>,
    #[serde(
        rename = "subagentRunId",
        borrow,
        default,
        deserialize_with = "present"
    )]
    subagent_run_id: Option<Cow<'a, str>>,
}

/// Reads a delta event, if it is one of plain, valid shape.
pub fn parse(raw: &[u8]) -> Option<Delta> {
    scan(raw, false).or_else(|| parse_with_serde(raw))
}

/// [`parse`] of a frame of a batch, whose strings need no UTF-8 check of their own when the
/// batch was checked whole ([`Batch::check_utf8`]).
pub fn parse_in(batch: &Batch, frame: &Frame) -> Option<Delta> {
    let raw = batch.bytes(frame);
    scan(raw, batch.is_utf8()).or_else(|| parse_with_serde(raw))
}

/// Reads a delta event the way producers write one — compact, `type` first, no `\u` escape —
/// in a single pass over its bytes. `None` means "not sure", never "invalid": whatever this
/// does not recognise byte for byte goes to [`parse_with_serde`], which decides. So a `Some`
/// here is exactly what `parse_with_serde` returns for the same bytes (a test holds the two
/// to that on generated lines).
/// `utf8`: `raw` is known to be UTF-8.
fn scan(raw: &[u8], utf8: bool) -> Option<Delta> {
    let rest = strip(raw, b"{\"type\":\"")?;
    let (kind, mut rest) = if let Some(rest) = strip(rest, b"TEXT_MESSAGE_CONTENT\"") {
        (EventType::TextMessageContent, rest)
    } else if let Some(rest) = strip(rest, b"TOOL_CALL_ARGS\"") {
        (EventType::ToolCallArgs, rest)
    } else if let Some(rest) = strip(rest, b"REASONING_MESSAGE_CONTENT\"") {
        (EventType::ReasoningMessageContent, rest)
    } else {
        return None;
    };
    let id_key = |rest| match kind {
        EventType::ToolCallArgs => strip(rest, b"\"toolCallId\":"),
        _ => strip(rest, b"\"messageId\":"),
    };
    let mut id = None;
    let mut delta = None;
    let mut owner = None;
    let mut timestamp = None;
    loop {
        match rest.split_first()? {
            (b'}', []) => break,
            (b',', tail) => rest = tail,
            _ => return None,
        }
        // A field seen twice, the other kind's id or an unknown key: serde decides.
        rest = if let Some(tail) = id_key(rest) {
            fill(&mut id, string(raw, tail, utf8))?
        } else if let Some(tail) = strip(rest, b"\"delta\":") {
            fill(&mut delta, string(raw, tail, utf8))?
        } else if let Some(tail) = strip(rest, b"\"timestamp\":") {
            fill(&mut timestamp, integer(tail))?
        } else if let Some(tail) = strip(rest, b"\"subagentRunId\":") {
            fill(&mut owner, string(raw, tail, utf8))?
        } else {
            return None;
        };
    }
    Some(Delta {
        kind,
        id: id?,
        delta: delta?,
        owner,
        timestamp,
    })
}

/// What follows `prefix` at the start of `bytes`, if it is there. The prefix is an array, so
/// that comparing it is a few wide loads rather than a call to `memcmp` (which `strip_prefix`
/// made for each of the keys of ~700k events per 100 MB).
#[inline(always)]
fn strip<'a, const N: usize>(bytes: &'a [u8], prefix: &[u8; N]) -> Option<&'a [u8]> {
    let (head, tail) = bytes.split_first_chunk::<N>()?;
    (head == prefix).then_some(tail)
}

/// Puts a field's value read by `read` into its empty slot and returns what follows it;
/// `None` for a field seen twice or a value not read.
fn fill<'a, T>(slot: &mut Option<T>, read: Option<(T, &'a [u8])>) -> Option<&'a [u8]> {
    if slot.is_some() {
        return None;
    }
    let (value, tail) = read?;
    *slot = Some(value);
    Some(tail)
}

/// A JSON string at the start of `rest`, and what follows it. Only the short escapes are
/// unescaped here; `\u`, a control character or bytes that are not UTF-8 make it `None`.
pub(crate) fn string<'a>(raw: &[u8], rest: &'a [u8], utf8: bool) -> Option<(Text, &'a [u8])> {
    let body = rest.strip_prefix(b"\"")?;
    // `rest` ends where `raw` ends: `body` is the end of `raw`.
    let from = raw.len().checked_sub(body.len())?;
    debug_assert!(std::ptr::eq(raw[from..].as_ptr(), body.as_ptr()));
    let stop = special(raw, from)?;
    match body[stop] {
        b'"' => {
            let text = &body[..stop];
            if !utf8 && std::str::from_utf8(text).is_err() {
                return None;
            }
            let start = (text.as_ptr() as usize) - (raw.as_ptr() as usize);
            let at = Text::At(
                start.try_into().ok()?,
                (start + text.len()).try_into().ok()?,
            );
            Some((at, &body[stop + 1..]))
        }
        b'\\' => unescape(body, stop, utf8),
        _ => None,
    }
}

/// [`string`] for a body with an escape at `stop`; `utf8`: `body` is known to be UTF-8.
fn unescape(body: &[u8], mut stop: usize, utf8: bool) -> Option<(Text, &[u8])> {
    // The unescaped text is never longer than what is left of the event (a merged message
    // is one long string: growing from a small buffer copied it over and over).
    let mut out = Vec::with_capacity(body.len());
    let mut pos = 0;
    loop {
        out.extend_from_slice(&body[pos..stop]);
        match body[stop] {
            b'"' => break,
            b'\\' => {}
            _ => return None,
        }
        out.push(match body.get(stop + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            _ => return None,
        });
        pos = stop + 2;
        stop = pos + special(body, pos)?;
    }
    let text = if utf8 {
        debug_assert!(std::str::from_utf8(&out).is_ok());
        // SAFETY: `out` is pieces of `body`, which is UTF-8, each cut before and after an
        // ASCII byte (a quote, a backslash, an escape's letter), so each is UTF-8 itself, and
        // the unescaped characters between them are ASCII.
        unsafe { String::from_utf8_unchecked(out) }
    } else {
        String::from_utf8(out).ok()?
    };
    Some((Text::Owned(text.into_boxed_str()), &body[stop + 1..]))
}

/// Where the first byte of `bytes[from..]` that ends or interrupts a JSON string's plain text
/// is, counted from `from`: a quote, a backslash, or a control character (which a string may
/// not hold raw). One pass finds all three, a vector at a time: most strings here are a few
/// words long, too short for `memchr` to pay for its set-up, and a second pass for control
/// characters cost as much. The bytes before `from` are only read, never found: a rest too
/// short for a whole block is checked as the end of the block that ends where `bytes` ends
/// (a delta's text is mostly shorter than a block, and a loop over its bytes took a third
/// of the scanner's time).
pub(crate) fn special(bytes: &[u8], from: usize) -> Option<usize> {
    let tail = bytes.get(from..)?;
    #[cfg(target_arch = "x86_64")]
    {
        let (found, at) = special_blocks(tail);
        let rest = tail.len() - at;
        if found.is_some() || rest == 0 {
            return found;
        }
        if let Some(last) = bytes.last_chunk::<16>() {
            // The rest is the last `rest` bytes of the last block.
            let stops = block_stops(last) >> (16 - rest);
            return (stops != 0).then(|| at + stops.trailing_zeros() as usize);
        }
        special_after(tail, (None, at))
    }
    #[cfg(not(target_arch = "x86_64"))]
    special_after(tail, special_words(tail))
}

/// What a wide pass found, else the first special byte from where it stopped.
fn special_after(bytes: &[u8], (found, at): (Option<usize>, usize)) -> Option<usize> {
    found.or_else(|| {
        bytes[at..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .map(|i| at + i)
    })
}

/// [`special`] over whole 16-byte blocks: what it found, else where the bytes it left begin.
#[cfg(target_arch = "x86_64")]
fn special_blocks(bytes: &[u8]) -> (Option<usize>, usize) {
    let mut at = 0;
    while let Some(block) = bytes[at..].first_chunk::<16>() {
        let stops = block_stops(block);
        if stops != 0 {
            return (Some(at + stops.trailing_zeros() as usize), bytes.len());
        }
        at += 16;
    }
    (None, at)
}

/// The special bytes of a block, as the low 16 bits of a mask (SSE2, which every x86-64
/// has).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_stops(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64, so its intrinsics can always run; the load reads the
    // 16 bytes of `block`, and an unaligned load may read them from any address.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let below_space = _mm_set1_epi8(0x1f);
        let block = _mm_loadu_si128(block.as_ptr().cast());
        // A control character is one whose minimum with 0x1f is itself.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(block, below_space), block);
        let stops = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(block, quote),
                _mm_cmpeq_epi8(block, backslash),
            ),
            control,
        );
        _mm_movemask_epi8(stops) as u32
    }
}

/// [`special_blocks`] over whole 8-byte words, for where there is no SSE2.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn special_words(bytes: &[u8]) -> (Option<usize>, usize) {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // Bytes of `word` below `n` (at most 0x80), as their high bits. A borrow may mark bytes
    // after a marked one too, so only the first mark counts.
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    let chunks = bytes.chunks_exact(8);
    let rest = chunks.remainder().len();
    for (i, chunk) in chunks.enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let found = below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20);
        if found != 0 {
            return (
                Some(i * 8 + found.trailing_zeros() as usize / 8),
                bytes.len(),
            );
        }
    }
    (None, bytes.len() - rest)
}

/// A timestamp written as a plain integer the schema accepts (no sign, no leading zero, no
/// fraction or exponent, at most [`MAX_SAFE`]), and what follows it.
pub(crate) fn integer(rest: &[u8]) -> Option<(i64, &[u8])> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 16 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let (number, tail) = rest.split_at(digits);
    if matches!(tail.first(), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let value = number
        .iter()
        .fold(0i64, |value, digit| value * 10 + i64::from(digit - b'0'));
    (value <= MAX_SAFE).then_some((value, tail))
}

/// The general reader of a delta event: any key order, whitespace and escape.
fn parse_with_serde(raw: &[u8]) -> Option<Delta> {
    // Only try what can be a delta event: the type names sit in the bytes.
    static NAMES: LazyLock<[Finder<'static>; 2]> =
        LazyLock::new(|| [Finder::new(b"_CONTENT\""), Finder::new(b"TOOL_CALL_ARGS\"")]);
    if !NAMES.iter().any(|name| name.find(raw).is_some()) {
        return None;
    }
    let shape: Shape<'_> = serde_json::from_slice(raw).ok()?;
    let kind = match shape.ty.as_ref() {
        "TEXT_MESSAGE_CONTENT" => EventType::TextMessageContent,
        "REASONING_MESSAGE_CONTENT" => EventType::ReasoningMessageContent,
        "TOOL_CALL_ARGS" => EventType::ToolCallArgs,
        _ => return None,
    };
    let id = match (kind, shape.message_id, shape.tool_call_id) {
        (EventType::ToolCallArgs, None, Some(id)) => id,
        (EventType::TextMessageContent | EventType::ReasoningMessageContent, Some(id), None) => id,
        _ => return None,
    };
    if shape
        .timestamp
        .is_some_and(|ts| !(-MAX_SAFE..=MAX_SAFE).contains(&ts))
    {
        return None;
    }
    Some(Delta {
        kind,
        id: Text::new(id, raw)?,
        delta: Text::new(shape.delta, raw)?,
        owner: match shape.subagent_run_id {
            Some(owner) => Some(Text::new(owner, raw)?),
            None => None,
        },
        timestamp: shape.timestamp,
    })
}

/// For the scanners' property tests: a line with one byte made a piece of JSON's structure,
/// mostly no longer JSON, or JSON of another shape.
#[cfg(test)]
pub(crate) mod flips {
    use proptest::prelude::*;

    /// Sometimes (a quarter of the time) a place in the line and the byte put there.
    pub fn flip() -> impl Strategy<Value = Option<(usize, u8)>> {
        proptest::option::weighted(
            0.25,
            (
                any::<usize>(),
                proptest::sample::select(b"\\\":,{}[ 0".to_vec()),
            ),
        )
    }

    /// The line with the flip made; empty when it cut a character in two (no text at all).
    pub fn apply(line: String, flip: Option<(usize, u8)>) -> String {
        let Some((at, byte)) = flip else {
            return line;
        };
        let mut bytes = line.into_bytes();
        let at = at % bytes.len().max(1);
        if let Some(place) = bytes.get_mut(at) {
            *place = byte;
        }
        String::from_utf8(bytes).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Read = (EventType, String, String, Option<String>, Option<i64>);

    fn fast(text: &str) -> Option<Read> {
        let raw = text.as_bytes();
        parse(raw).map(|d| {
            (
                d.kind,
                d.id.get(raw).to_owned(),
                d.delta.get(raw).to_owned(),
                d.owner.as_ref().map(|o| o.get(raw).to_owned()),
                d.timestamp,
            )
        })
    }

    #[test]
    fn plain_deltas_take_the_fast_path() {
        assert_eq!(
            fast(r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi","timestamp":17}"#),
            Some((
                EventType::TextMessageContent,
                "m1".into(),
                "Hi".into(),
                None,
                Some(17)
            ))
        );
        assert_eq!(
            fast(
                r#"{"delta":"say \"x\"\n","toolCallId":"c1","type":"TOOL_CALL_ARGS","subagentRunId":"s"}"#
            ),
            Some((
                EventType::ToolCallArgs,
                "c1".into(),
                "say \"x\"\n".into(),
                Some("s".into()),
                None
            ))
        );
        assert!(
            fast(r#"{"type":"REASONING_MESSAGE_CONTENT","messageId":"r","delta":""}"#).is_some()
        );
    }

    #[test]
    fn special_finds_the_first_quote_backslash_or_control_byte() {
        let plain = |b: u8| b != b'"' && b != b'\\' && b >= 0x20;
        let fillers = [b'a', b' ', 0x7f, 0x80, 0xc3, 0xff, b'!', b'#', b'[', b']'];
        let specials = [b'"', b'\\', 0x00, 0x01, 0x1f, b'\n'];
        for len in 0..40 {
            for filler in fillers {
                let mut bytes = vec![filler; len];
                assert_eq!(special(&bytes, 0), None, "{len} x {filler:#x}");
                assert_eq!(special(&bytes, len + 1), None, "past the end");
                for at in 0..len {
                    for first in specials {
                        bytes[at] = first;
                        // Whatever follows the first special byte does not move it.
                        for later in at + 1..len.min(at + 10) {
                            bytes[later] = specials[later % specials.len()];
                        }
                        let expected = bytes.iter().position(|&b| !plain(b));
                        assert_eq!(special(&bytes, 0), expected, "{bytes:?}");
                        // Special bytes before where the search starts are not found.
                        for skipped in [1, 5, 15, 16, 17, 40] {
                            let mut before = vec![b'"'; skipped];
                            before.extend_from_slice(&bytes);
                            assert_eq!(special(&before, skipped), expected, "{skipped}: {bytes:?}");
                        }
                        let words = special_after(&bytes, special_words(&bytes));
                        assert_eq!(words, expected, "words: {bytes:?}");
                        bytes.fill(filler);
                    }
                }
            }
        }
    }

    /// A line the scanner reads is read the same way by serde; and the lines producers
    /// write (type first, compact, no `\u`) are all the scanner's.
    #[test]
    fn the_scanner_reads_what_serde_reads() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};

        // JSON text pieces, valid or not: plain, escaped, unicode, control, lone backslash.
        let piece = prop_oneof![
            "[a-z ]{0,6}",
            Just("\\\"".to_owned()),
            Just("\\n".to_owned()),
            Just("\\/".to_owned()),
            Just("\\\\".to_owned()),
            Just("\\u00e9".to_owned()),
            Just("\\x".to_owned()),
            Just("\\".to_owned()),
            Just("\u{1}".to_owned()),
            Just("\t".to_owned()),
            Just("é東😀".to_owned()),
            Just("\u{7f}".to_owned()),
        ];
        let text = proptest::collection::vec(piece, 0..4).prop_map(|p| p.concat());
        let value = prop_oneof![
            4 => text.clone().prop_map(|t| format!("\"{t}\"")),
            1 => prop_oneof![
                Just("0".to_owned()),
                Just("017".to_owned()),
                Just("-3".to_owned()),
                Just("1.5".to_owned()),
                Just("2e3".to_owned()),
                Just("9007199254740991".to_owned()),
                Just("9007199254740992".to_owned()),
                Just("12345678901234567890".to_owned()),
                Just("null".to_owned()),
                Just("{}".to_owned()),
            ],
            1 => (0u64..2_000_000_000_000).prop_map(|n| n.to_string()),
        ];
        let key = prop_oneof![
            Just("messageId"),
            Just("toolCallId"),
            Just("delta"),
            Just("timestamp"),
            Just("subagentRunId"),
            Just("type"),
            Just("extra"),
        ];
        let ty = prop_oneof![
            Just("TEXT_MESSAGE_CONTENT"),
            Just("REASONING_MESSAGE_CONTENT"),
            Just("TOOL_CALL_ARGS"),
            Just("TEXT_MESSAGE_CHUNK"),
        ];
        // Mostly the fields a delta of its type has, in any order; sometimes any fields.
        let proper = (
            text.clone(),
            text.clone(),
            proptest::option::of(0u64..2_000_000_000_000),
            proptest::option::of(text),
            any::<u64>(),
        )
            .prop_map(|(id, delta, timestamp, owner, order)| {
                let mut fields = vec![
                    ("ID", format!("\"{id}\"")),
                    ("delta", format!("\"{delta}\"")),
                ];
                fields.extend(timestamp.map(|t| ("timestamp", t.to_string())));
                fields.extend(owner.map(|o| ("subagentRunId", format!("\"{o}\""))));
                let turn = (order % fields.len() as u64) as usize;
                fields.rotate_left(turn);
                if order & 256 != 0 {
                    fields.reverse();
                }
                fields
            });
        let fields = prop_oneof![
            3 => proper,
            1 => proptest::collection::vec((key, value), 0..6),
        ];
        let line = (
            ty,
            fields,
            prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("\n"), 1 => Just("x")],
            flips::flip(),
        )
            .prop_map(|(ty, fields, tail, flip)| {
                let id = if ty == "TOOL_CALL_ARGS" {
                    "toolCallId"
                } else {
                    "messageId"
                };
                let mut line = format!("{{\"type\":\"{ty}\"");
                for (key, value) in fields {
                    let key = if key == "ID" { id } else { key };
                    line.push_str(&format!(",\"{key}\":{value}"));
                }
                line.push('}');
                line.push_str(tail);
                let flipped = flip.is_some();
                (flips::apply(line, flip), flipped)
            });
        let mut runner = TestRunner::new(Config {
            cases: 20_000,
            failure_persistence: None,
            ..Config::default()
        });
        let scanned = std::cell::Cell::new(0u32);
        runner
            .run(&line, |(line, flipped): (String, bool)| {
                let raw = line.as_bytes();
                let by_serde = parse_with_serde(raw);
                // What a reader gets out of each (serde owns ids it could borrow).
                let read = |d: &Delta| {
                    (
                        d.kind,
                        d.id.get(raw).to_owned(),
                        d.delta.get(raw).to_owned(),
                        d.owner.as_ref().map(|o| o.get(raw).to_owned()),
                        d.timestamp,
                    )
                };
                // Known to be UTF-8 (it is), the scanner reads the same.
                prop_assert_eq!(scan(raw, true), scan(raw, false));
                match scan(raw, false) {
                    Some(delta) => {
                        scanned.set(scanned.get() + 1);
                        prop_assert_eq!(Some(read(&delta)), by_serde.as_ref().map(read));
                    }
                    None if flipped => {}
                    None => {
                        // Only what it leaves to serde for a reason.
                        let plain = by_serde.is_some()
                            && !line.contains("\\u")
                            && !line.contains(":-")
                            && line.ends_with('}');
                        prop_assert!(!plain, "the scanner left a plain line to serde: {line}");
                    }
                }
                Ok(())
            })
            .unwrap();
        let scanned = scanned.get();
        assert!(scanned > 1_000, "only {scanned} lines scanned");
    }

    #[test]
    fn anything_unusual_takes_the_full_path() {
        for text in [
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi","extra":1}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi","metadata":{}}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":null,"delta":"Hi"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi","timestamp":null}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi","timestamp":1.5}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi","timestamp":9007199254740992}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":7}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","toolCallId":"m1","delta":"x"}"#,
            r#"{"type":"TOOL_CALL_ARGS","messageId":"m1","delta":"x"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","messageId":"m2","delta":"x"}"#,
            r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"_CONTENT\""}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x"} trailing"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\ud800"}"#,
        ] {
            assert_eq!(fast(text), None, "{text}");
        }
    }
}
