//! Finds keys repeated within one JSON object. Parsers disagree on such objects (JSON.parse
//! and serde_json keep the last value, others the first or reject them), so the event means
//! different things to different clients.
//!
//! Runs on text that has already parsed as JSON, so it only has to tell strings from
//! structure, not validate.

use std::collections::HashSet;
use std::fmt::Write;

use memchr::memchr2;
use serde::Deserializer;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::protocol::patch::push_token;

/// A repeated key: where its object is (a JSON Pointer) and the key, decoded.
#[derive(Debug, PartialEq, Eq)]
pub struct Repeated {
    pub pointer: String,
    pub key: String,
}

/// Objects with more keys than this are checked through a hash set.
const LINEAR: usize = 16;

enum Frame<'a> {
    Object {
        /// Where this object's keys start in the shared key list.
        first: usize,
        /// For objects with many keys: the keys, decoded.
        set: Option<HashSet<String>>,
        /// The key whose value is being read, for the pointer.
        current: &'a [u8],
    },
    Array {
        index: usize,
    },
}

/// Bytes that change the scanner's state; everything else (numbers, literals, whitespace,
/// colons) is skipped.
const STRUCTURE: [bool; 256] = {
    let mut table = [false; 256];
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table[b'[' as usize] = true;
    table[b']' as usize] = true;
    table[b',' as usize] = true;
    table[b'"' as usize] = true;
    table
};

/// The first repeated key in `text`, which must be valid JSON.
pub fn first_repeated(text: &[u8]) -> Option<Repeated> {
    // Fast exit: an object with one key or none cannot repeat one.
    memchr::memchr(b',', text)?;
    let mut stack: Vec<Frame<'_>> = Vec::new();
    // The keys of every open object, innermost last (raw, as written between the quotes).
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    // In an object, whether the next string is a key.
    let mut expect_key = false;
    loop {
        while i < text.len() && !STRUCTURE[text[i] as usize] {
            i += 1;
        }
        let &byte = text.get(i)?;
        i += 1;
        match byte {
            b'{' => {
                stack.push(Frame::Object {
                    first: keys.len(),
                    set: None,
                    current: b"",
                });
                expect_key = true;
            }
            b'[' => {
                stack.push(Frame::Array { index: 0 });
                expect_key = false;
            }
            b'}' | b']' => {
                if let Some(Frame::Object { first, .. }) = stack.pop() {
                    keys.truncate(first);
                }
                expect_key = false;
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { .. }) => expect_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {
                let end = string_end(text, i)?;
                let raw = &text[i..end];
                i = end + 1;
                if !expect_key {
                    continue;
                }
                expect_key = false;
                let depth = stack.len();
                if let Some(Frame::Object {
                    first,
                    set,
                    current,
                }) = stack.last_mut()
                {
                    *current = raw;
                    if seen_before(&mut keys, *first, set, raw) {
                        return Some(Repeated {
                            pointer: pointer(&stack[..depth - 1]),
                            key: decode(raw),
                        });
                    }
                }
            }
        }
    }
}

/// The index of the quote that closes the string whose contents start at `from`.
pub(crate) fn string_end(text: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + memchr2(b'"', b'\\', &text[from..])?;
        if text[at] == b'"' {
            return Some(at);
        }
        from = at + 2;
        if from > text.len() {
            return None;
        }
    }
}

/// Records a key of the object whose keys start at `first`; whether it already had it. Keys
/// written with escapes are compared decoded (`"a"` and `"\u0061"` are the same key).
fn seen_before<'a>(
    keys: &mut Vec<&'a [u8]>,
    first: usize,
    set: &mut Option<HashSet<String>>,
    raw: &'a [u8],
) -> bool {
    if set.is_none() {
        let own = &keys[first..];
        let escaped = raw.contains(&b'\\') || own.iter().any(|k| k.contains(&b'\\'));
        if !escaped && own.len() < LINEAR {
            let repeated = own.contains(&raw);
            keys.push(raw);
            return repeated;
        }
        *set = Some(own.iter().map(|k| decode(k)).collect());
    }
    let set = set.as_mut().expect("set just made");
    !set.insert(decode(raw))
}

fn decode(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    if !raw.contains(&b'\\') {
        return text.into_owned();
    }
    serde_json::from_str::<String>(&format!("\"{text}\"")).unwrap_or_else(|_| text.into_owned())
}

/// The JSON Pointer of the object on top of `outer`.
fn pointer(outer: &[Frame<'_>]) -> String {
    let mut out = String::new();
    for frame in outer {
        match frame {
            Frame::Object { current, .. } => push_token(&mut out, &decode(current)),
            Frame::Array { index } => {
                let _ = write!(out, "/{index}");
            }
        }
    }
    out
}

/// Parses `text` as serde_json parses a `Value` (the last of repeated keys wins), noting the
/// first repeated key on the way, as [`first_repeated`] finds it: one pass where the scan
/// would be a second.
pub fn parse_noting_repeats(text: &str) -> serde_json::Result<(Value, Option<Repeated>)> {
    let mut state = Noting::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(&mut state).deserialize(&mut de)?;
    de.end()?;
    let repeated = state.found.map(|found| {
        let mut pointer = String::new();
        for segment in found.segments.iter().rev() {
            pointer.push('/');
            pointer.push_str(segment);
        }
        Repeated {
            pointer,
            key: found.key,
        }
    });
    Ok((value, repeated))
}

/// What the parse has come to: how deep it is, and the first repeat found.
#[derive(Default)]
struct Noting {
    depth: usize,
    found: Option<Found>,
}

struct Found {
    key: String,
    /// The pointer's segments, escaped, innermost first; those above `open` are still to come.
    segments: Vec<String>,
    /// The depth of the container whose segment in its parent comes next.
    open: usize,
}

impl Noting {
    /// A child of the container at the current depth has been read, at `segment`: if the
    /// repeat lies in it, the child's place joins the pointer.
    fn child_done(&mut self, segment: impl FnOnce() -> String) {
        if let Some(found) = &mut self.found
            && found.open == self.depth + 1
        {
            found.segments.push(segment());
            found.open = self.depth;
        }
    }
}

struct Seed<'s>(&'s mut Noting);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

/// serde_json hands a number over as a map with this one key when it keeps numbers as written
/// (its `arbitrary_precision` feature), as its own `Value` expects.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let state = self.0;
        let mut items = Vec::new();
        state.depth += 1;
        while let Some(item) = seq.next_element_seed(Seed(&mut *state))? {
            let index = items.len();
            state.child_done(|| index.to_string());
            items.push(item);
        }
        state.depth -= 1;
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let state = self.0;
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(serde_json::Map::new()));
        };
        if first == NUMBER_TOKEN {
            let written: String = map.next_value()?;
            return written
                .parse::<serde_json::Number>()
                .map(Value::Number)
                .map_err(serde::de::Error::custom);
        }
        let mut object = serde_json::Map::new();
        let mut key = Some(first);
        state.depth += 1;
        while let Some(name) = key {
            let before = state.found.is_some();
            let value = map.next_value_seed(Seed(&mut *state))?;
            state.child_done(|| name.replace('~', "~0").replace('/', "~1"));
            // One search of the object for the key, whether it is new or repeated.
            match object.entry(name) {
                serde_json::map::Entry::Vacant(vacant) => {
                    vacant.insert(value);
                }
                serde_json::map::Entry::Occupied(mut occupied) => {
                    if !before {
                        // The first repeat in the text: this key comes before anything in
                        // its value.
                        state.found = Some(Found {
                            key: occupied.key().clone(),
                            segments: Vec::new(),
                            open: state.depth,
                        });
                    }
                    occupied.insert(value);
                }
            }
            key = map.next_key()?;
        }
        state.depth -= 1;
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What both finders say, once they have been seen to agree, and the parse to equal
    /// serde_json's.
    fn find(text: &str) -> Option<(String, String)> {
        let scanned = first_repeated(text.as_bytes()).map(|r| (r.pointer, r.key));
        let (value, noted) = parse_noting_repeats(text).unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<Value>(text).unwrap(),
            "{text}"
        );
        assert_eq!(noted.map(|r| (r.pointer, r.key)), scanned, "{text}");
        scanned
    }

    #[test]
    fn the_outer_repeat_comes_first_even_when_its_value_repeats_too() {
        assert_eq!(
            find(r#"{"a":1,"a":{"b":1,"b":2}}"#),
            Some(("".into(), "a".into()))
        );
        assert_eq!(
            find(r#"{"x":{"b":1,"b":2},"a":1,"a":2}"#),
            Some(("/x".into(), "b".into()))
        );
        assert_eq!(
            find(r#"[0,{"k":[1,{"~":{"q":1,"q":2}}]},{"z":1,"z":2}]"#),
            Some(("/1/k/1/~0".into(), "q".into()))
        );
    }

    #[test]
    fn numbers_parse_as_serde_json_keeps_them() {
        for text in [
            r#"{"a":1.0,"b":-0,"c":1e400,"d":123456789012345678901234567890,"e":[0.1,2E-3]}"#,
            r#"[1,1.50,-7]"#,
            "3.25",
        ] {
            assert_eq!(find(text), None);
        }
        assert!(parse_noting_repeats(r#"{"a":1} x"#).is_err());
        assert!(parse_noting_repeats(r#"{"a":1"#).is_err());
    }

    proptest::proptest! {
        /// Any JSON, its objects' keys drawn from a few so that repeats are common: the two
        /// finders name the same repeat, and the parse is serde_json's.
        #[test]
        fn both_finders_agree(text in json_text()) {
            find(&text);
        }
    }

    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let key = prop::sample::select(vec!["a", "b", "a/b", "~c", "\\u0061", "type", "\\\"q"]);
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            (-1000i64..1000).prop_map(|n| n.to_string()),
            Just("1.50".to_owned()),
            "[a-z,{}\\[\\]:]{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((key.clone(), inner), 0..6).prop_map(|entries| {
                    let body: Vec<String> = entries
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect();
                    format!("{{{}}}", body.join(","))
                }),
            ]
        })
    }

    #[test]
    fn finds_repeats_at_any_depth() {
        assert_eq!(find(r#"{"a":1,"a":2}"#), Some(("".into(), "a".into())));
        assert_eq!(
            find(r#"{"type":"X","value":{"k":[{"z":1},{"z":1,"y":2,"z":3}]}}"#),
            Some(("/value/k/1".into(), "z".into()))
        );
        assert_eq!(
            find(r#"{"a/b":{"x":1,"\u0078":2}}"#),
            Some(("/a~1b".into(), "x".into()))
        );
    }

    #[test]
    fn same_keys_in_different_objects_are_fine() {
        assert_eq!(
            find(r#"{"a":{"a":1},"b":{"a":2},"c":[{"a":1},{"a":1}]}"#),
            None
        );
        // Strings that look like structure are skipped.
        assert_eq!(find(r#"{"a":"\",\"a\":{","b":"]}"}"#), None);
        assert_eq!(find(r#"{"a":"x\\","b":1}"#), None);
    }

    #[test]
    fn large_objects_use_a_set() {
        let mut text = String::from("{");
        for i in 0..100 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k42\":0}");
        assert_eq!(find(&text), Some(("".into(), "k42".into())));
        assert_eq!(find(&text.replace("\"k42\":0}", "\"k100\":0}")), None);
    }
}
