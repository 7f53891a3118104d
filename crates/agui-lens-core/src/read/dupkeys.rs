//! Finds keys repeated within one JSON object. Parsers disagree on such objects (JSON.parse
//! and serde_json keep the last value, others the first or reject them), so the event means
//! different things to different clients.
//!
//! Runs on text that has already parsed as JSON, so it only has to tell strings from
//! structure, not validate.

use std::collections::HashSet;
use std::fmt::Write;

use memchr::memchr2;

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
fn string_end(text: &[u8], mut from: usize) -> Option<usize> {
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
        out.push('/');
        match frame {
            Frame::Object { current, .. } => {
                let key = decode(current);
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Frame::Array { index } => {
                let _ = write!(out, "{index}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<(String, String)> {
        first_repeated(text.as_bytes()).map(|r| (r.pointer, r.key))
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
