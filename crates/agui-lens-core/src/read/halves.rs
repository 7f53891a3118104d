//! Half a UTF-16 surrogate pair in a JSON string (`"\ud83d"`). It is JSON (RFC 8259 §8.2),
//! and it is what a JavaScript agent that slices text by UTF-16 units sends when it cuts an
//! emoji in two across deltas; the official client, whose strings are UTF-16, joins the halves
//! as it concatenates. A Rust string cannot hold half a pair, so what folds a stream reads
//! each half as a stand-in: a character from the end of plane 16's private use area,
//! U+10F800 plus the unit's distance from U+D800. A high and a low stand-in that meet where
//! text is appended ([`append`]) become the character they encode, and a stand-in nothing
//! joins is written back as the escape it was read from ([`escape_stand_ins`]), as the
//! official reducer's JSON writes it.
//!
//! Only events read that way (see [`crate::read::Opened::keep_halves`]) carry stand-ins; only
//! text such an event appends is joined to what comes before it, and only a fold that applied
//! one writes stand-ins back as escapes: those private-use characters written as text
//! elsewhere in a stream stay as they are.

use std::borrow::Cow;

/// The stand-in of U+D800, the first surrogate.
const BASE: u32 = 0x10F800;

/// The stand-in of a surrogate code unit (`0xD800..=0xDFFF`).
fn stand_in(unit: u16) -> char {
    char::from_u32(BASE + u32::from(unit - 0xD800)).expect("U+10F800..U+10FFFF are characters")
}

/// The surrogate code unit a stand-in stands for.
fn unit_of(c: char) -> Option<u16> {
    let code = u32::from(c);
    (BASE..BASE + 0x800)
        .contains(&code)
        .then(|| 0xD800 + (code - BASE) as u16)
}

/// `text` (JSON) with each `\uD800`–`\uDFFF` escape that is not one half of a pair replaced
/// by `with(unit)`, and the first such escape as it was; `None` when there is none. Escapes
/// are told apart as JSON does: `\\ud800` is a backslash and text.
pub(crate) fn replace_lone(text: &str, with: impl Fn(u16) -> String) -> Option<(String, String)> {
    let bytes = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u'))
            .then(|| std::str::from_utf8(bytes.get(at + 2..at + 6)?).ok())
            .flatten()
            .and_then(|hex| u16::from_str_radix(hex, 16).ok())
    };
    let mut out = String::with_capacity(text.len());
    let mut first = None;
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        let Some(code) = unit(at) else {
            at += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&code);
        let low = (0xDC00..0xE000).contains(&code);
        if high && unit(at + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next)) {
            at += 12;
            continue;
        }
        if high || low {
            first.get_or_insert_with(|| text[at..at + 6].to_owned());
            out.push_str(&text[copied..at]);
            out.push_str(&with(code));
            copied = at + 6;
        }
        at += 6;
    }
    let first = first?;
    out.push_str(&text[copied..]);
    Some((out, first))
}

/// `text` (JSON) with each lone surrogate escape replaced by its stand-in, written as itself
/// (not escaped); `None` when there is none.
pub(crate) fn keep_lone(text: &str) -> Option<String> {
    replace_lone(text, |unit| stand_in(unit).to_string()).map(|(kept, _)| kept)
}

/// Appends `delta` to `text` as a JavaScript string is appended to: a high half `text` ends
/// with and a low half `delta` starts with make one character.
pub fn append(text: &mut String, delta: &str) {
    let mut rest = delta.chars();
    if let (Some(high), Some(low)) = (
        text.chars().next_back().and_then(unit_of),
        rest.next().and_then(unit_of),
    ) && (0xD800..0xDC00).contains(&high)
        && (0xDC00..0xE000).contains(&low)
    {
        let code = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
        text.pop();
        text.push(char::from_u32(code).expect("a surrogate pair encodes a character"));
        text.push_str(rest.as_str());
        return;
    }
    text.push_str(delta);
}

/// JSON text with each stand-in written as the escape of the half it stands for (`\ud83d`).
pub fn escape_stand_ins(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| unit_of(c).is_some()) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match unit_of(c) {
            Some(unit) => out.push_str(&format!("\\u{unit:04x}")),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether JSON text holds a character of the range stand-ins are taken from
/// (U+10F800–U+10FFFF), as UTF-8 or as an escaped pair (`\udbfe\udc00`): beside a half read
/// as a stand-in, such a character cannot be told from one.
pub fn holds_stand_in_range(bytes: &[u8]) -> bool {
    use std::sync::LazyLock;
    static ESCAPE: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
    // U+10F800–U+10FFFF in UTF-8: F4 8F A0..BF, then two more bytes.
    let raw = memchr::memchr_iter(0xF4, bytes).any(|at| {
        bytes.get(at + 1) == Some(&0x8F)
            && bytes.get(at + 2).is_some_and(|b| (0xA0..=0xBF).contains(b))
    });
    raw || ESCAPE.find_iter(bytes).any(|at| {
        let hex = |from: usize| {
            bytes
                .get(from..from + 4)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u16::from_str_radix(h, 16).ok())
        };
        // Escapes are told apart as JSON does: `\\udbfe` is a backslash and text.
        let escaped = bytes[..at]
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count()
            % 2
            == 1;
        !escaped
            && hex(at + 2).is_some_and(|high| (0xDBFE..=0xDBFF).contains(&high))
            && bytes.get(at + 6..at + 8) == Some(b"\\u")
            && hex(at + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low))
    })
}

/// Whether JSON text holds a lone surrogate escape (half a pair).
pub fn holds_lone(text: &str) -> bool {
    replace_lone(text, |_| String::new()).is_some()
}

/// What is said when a stream holds both halves and characters of their range.
pub fn ambiguity(name: &str) -> String {
    format!(
        "{name} holds half a UTF-16 pair, read as a character of U+10F800–U+10FFFF as it is \
         joined the way a client joins halves, and characters of that range written as text: \
         they cannot be told apart, and such a character may be written as a half's escape"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_are_kept_joined_and_written_back() {
        let kept = keep_lone(r#"{"delta":"hi \ud83d"}"#).unwrap();
        let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
        let mut text = value["delta"].as_str().unwrap().to_owned();
        let low: serde_json::Value =
            serde_json::from_str(&keep_lone(r#""\ude00 end""#).unwrap()).unwrap();
        append(&mut text, low.as_str().unwrap());
        assert_eq!(text, "hi \u{1F600} end");

        // A pair written whole, an escaped backslash and text with no escape are left alone.
        assert_eq!(keep_lone(r#""\ud83d\ude00""#), None);
        assert_eq!(keep_lone(r#""\\ud83d""#), None);
        let mut plain = "a".to_owned();
        append(&mut plain, "b");
        assert_eq!(plain, "ab");

        // Half a pair nothing joins is written as it was read.
        let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
        assert_eq!(
            escape_stand_ins(&serde_json::to_string(&value).unwrap()),
            r#"{"delta":"hi \ud83d"}"#
        );
        // Two lows, or a low before a high, join nothing.
        let lows: serde_json::Value =
            serde_json::from_str(&keep_lone(r#""\ude00\ud83d""#).unwrap()).unwrap();
        let mut text = "x".to_owned();
        append(&mut text, lows.as_str().unwrap());
        assert_eq!(escape_stand_ins(&text), r"x\ude00\ud83d");
    }

    #[test]
    fn characters_of_the_range_are_found_raw_and_escaped() {
        assert!(holds_stand_in_range("a\u{10F800}b".as_bytes()));
        assert!(holds_stand_in_range("\u{10FFFF}".as_bytes()));
        assert!(holds_stand_in_range(br#""a\udbfe\udc00""#));
        assert!(holds_stand_in_range(br#""\uDBFF\uDFFF""#));
        // Just below the range, a lone half, an escaped backslash: none.
        assert!(!holds_stand_in_range("\u{10F7FF}\u{E0000}".as_bytes()));
        assert!(!holds_stand_in_range(br#""\udbfe""#));
        assert!(!holds_stand_in_range(br#""\\udbfe\udc00""#));
        assert!(!holds_stand_in_range(br#""\ud83d\ude00""#));
    }
}
