//! The binary transport, `application/vnd.ag-ui.event+proto`: a body of frames, each a 4-byte
//! unsigned big-endian length and then one protobuf `Event` message (`proto/events.proto`),
//! back to back with nothing between them.
//!
//! An event travels as JSON everywhere else in agui-lens, so this module converts between the
//! two forms: [`decode_event`] turns one frame's message into the JSON event a client would
//! build from it, [`encode_event`] the reverse, and says which parts of the JSON the message
//! cannot carry. The field numbers are those of the published `@ag-ui/proto` package (see
//! `proto/README.md`); where the JSON and the message are shaped differently (the envelope,
//! patch operations as an enum, content parts, outcomes) the conversion follows what that
//! package does, so a frame written here decodes there to the same event, and back.

mod decode;
mod shape;
mod wire;

use serde_json::{Map, Value};

pub use decode::{Skipped, Skips};

/// The content type of a protobuf event stream.
pub const CONTENT_TYPE: &str = "application/vnd.ag-ui.event+proto";

/// Bytes of the length prefix in front of every frame.
pub const PREFIX_LEN: usize = 4;

/// What one frame's message holds.
#[derive(Debug, PartialEq)]
pub enum Decoded {
    /// An event, in its JSON form, and the fields of its message that decoding passed over
    /// (numbers this build's definitions do not have): dropped, as every protobuf decoder
    /// drops them.
    Event(Map<String, Value>, Skips),
    /// Only envelope fields this build does not know: an event of a later protocol version,
    /// which a client drops with a warning. The field numbers it used.
    UnknownArm(Vec<u32>),
}

/// Decodes one frame's message (without its length prefix). An `Err` says why the bytes are
/// not an event: a client gives up on the stream there.
pub fn decode_event(bytes: &[u8]) -> Result<Decoded, String> {
    let arms = wire::envelope_fields(bytes)?;
    let mut known: Vec<u32> = arms
        .iter()
        .copied()
        .filter(|&n| wire::is_known_arm(n))
        .collect();
    // One arm sent twice is one event, its halves merged (as protobuf merges a field).
    known.dedup();
    match known.len() {
        0 if arms.is_empty() => return Err("the message is empty: it names no event".into()),
        0 => return Ok(Decoded::UnknownArm(arms)),
        1 => {}
        n => {
            return Err(format!(
                "the message carries {n} events (envelope fields {known:?}) where one belongs"
            ));
        }
    }
    let mut skips = Skips::default();
    let (ty, body) = wire::decode_envelope(bytes, &mut skips)?;
    shape::from_wire(ty, body).map(|event| Decoded::Event(event, skips))
}

/// An event in its protobuf form.
#[derive(Debug)]
pub struct Encoded {
    /// The `Event` message, without the length prefix.
    pub bytes: Vec<u8>,
    /// What the JSON event holds that the message does not carry, as JSON Pointers into the
    /// event (empty when it comes back whole). Found by decoding the bytes again and
    /// comparing, so nothing is dropped without being named here.
    pub lost: Vec<String>,
    /// Those of `lost` that are numbers the message carries as a double that does not hold
    /// them: written, rounded.
    pub rounded: Vec<String>,
    /// Those of `lost` that are a null where the message holds an optional scalar, which has
    /// no null on the wire: left out (null and absent are not the same to every reader).
    pub nulls: Vec<String>,
    /// Those of `lost` that the JSON event leaves out and the message cannot (a list, a
    /// string, an object it always carries): each with what it reads back as, in JSON.
    pub added: Vec<(String, String)>,
}

/// Encodes one event. An `Err` when it has no protobuf form at all (not an object, no
/// `type`, or a type the wire format has no message for).
pub fn encode_event(event: &Value) -> Result<Encoded, String> {
    let object = event.as_object().ok_or("the event is not a JSON object")?;
    let (arm, body) = shape::to_wire(object)?;
    let bytes = wire::encode_envelope(&arm, &body)?;
    let mut found = Differences::default();
    match decode_event(&bytes) {
        Ok(Decoded::Event(back, _)) => {
            differences(event, &Value::Object(back), &mut String::new(), &mut found);
        }
        Ok(Decoded::UnknownArm(_)) => found.all.push(String::new()),
        Err(err) => return Err(format!("its protobuf form does not decode again: {err}")),
    }
    Ok(Encoded {
        bytes,
        lost: found.all,
        rounded: found.rounded,
        nulls: found.nulls,
        added: found.added,
    })
}

/// Appends one frame (length prefix and message) to `out`.
pub fn push_frame(message: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(message.len()).expect("an event under 4 GiB");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(message);
}

/// Whether the first bytes of an input look like protobuf frames: a length prefix whose
/// first byte is 0 (any frame under 16 MiB), which no JSON or SSE text starts with, then an
/// `Event` message's first key, a length-delimited field (every arm of the envelope is one).
pub fn looks_like_frames(head: &[u8]) -> bool {
    let Some(prefix) = head.get(..PREFIX_LEN) else {
        return false;
    };
    let len = u32::from_be_bytes(prefix.try_into().expect("four bytes"));
    prefix[0] == 0
        && len > 0
        && matches!(wire::first_key(&head[PREFIX_LEN..]), Some((number, 2)) if number > 0)
}

/// JSON Pointers where `b` differs from `a`. A member only `b` has is no difference when it
/// is null or an empty list (a decoder gives a run input its lists of tools, context and
/// resume entries, empty when none were sent); a null of `a` that `b` lacks is one (the wire
/// has no null for an optional field, and 1.0's schemas refuse a null where they take an
/// absent field). Numbers are compared by value (`1.0` is `1`).
#[derive(Default)]
struct Differences {
    /// Every pointer where the two differ.
    all: Vec<String>,
    /// Those where both hold a number.
    rounded: Vec<String>,
    /// Those where `a` holds a null and `b` nothing.
    nulls: Vec<String>,
    /// Those where `a` holds nothing and `b` a value, with that value as JSON.
    added: Vec<(String, String)>,
}

/// Whether a field the decoded event holds where the JSON event had none means what its
/// absence means: the run input's optional lists (tools, context, resume entries), which
/// the message always carries and reads back empty.
fn means_absent(path: &str, key: &str, value: &Value) -> bool {
    path == "/input"
        && matches!(key, "tools" | "context" | "resume")
        && value.as_array().is_some_and(Vec::is_empty)
}

fn differences(a: &Value, b: &Value, path: &mut String, out: &mut Differences) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, left) in a {
                match b.get(key) {
                    None if left.is_null() => with_key(path, key, |path| {
                        out.all.push(path.clone());
                        out.nulls.push(path.clone());
                    }),
                    right => {
                        let right = right.unwrap_or(&Value::Null);
                        with_key(path, key, |path| differences(left, right, path, out));
                    }
                }
            }
            for (key, right) in b {
                if !a.contains_key(key) && !means_absent(path, key, right) {
                    with_key(path, key, |path| {
                        out.all.push(path.clone());
                        out.added.push((path.clone(), right.to_string()));
                    });
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (left, right)) in a.iter().zip(b).enumerate() {
                with_key(path, &i.to_string(), |path| {
                    differences(left, right, path, out)
                });
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            // An integer field (int64) gives back the integer written; a double field, the
            // double nearest it.
            let same = x == y
                || y.as_f64()
                    .is_some_and(|double| holds(double, &x.to_string()));
            if !same {
                out.all.push(path.clone());
                out.rounded.push(path.clone());
            }
        }
        (a, b) if a == b => {}
        _ => out.all.push(path.clone()),
    }
}

/// Whether `double` holds the number written as `text`: it is the double's exact value, or
/// the double's shortest writing (what a JSON encoder writes for it; `0.1` is no double
/// exactly, and means the one nearest it).
fn holds(double: f64, text: &str) -> bool {
    if !double.is_finite() {
        return false;
    }
    let Some(written) = Decimal::parse(text) else {
        return false;
    };
    Decimal::parse(&format!("{double:e}")).is_some_and(|shortest| shortest == written)
        || Decimal::exact(double) == written
}

/// A decimal number as ± digits × 10^exponent, its digits without leading or trailing
/// zeros (zero has none, and no sign), so that equal numbers are equal values.
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// A JSON number's text (or Rust's `{:e}` writing of a double).
    fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (
                &rest[..at],
                rest[at + 1..].trim_start_matches('+').parse::<i64>().ok()?,
            ),
            None => (rest, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let exponent = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
        Some(Decimal::new(negative, digits, exponent))
    }

    fn new(negative: bool, digits: Vec<u8>, mut exponent: i64) -> Decimal {
        let first = digits.iter().position(|&d| d != b'0');
        let Some(first) = first else {
            return Decimal {
                negative: false,
                digits: Vec::new(),
                exponent: 0,
            };
        };
        let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
        exponent += i64::try_from(digits.len() - 1 - last).unwrap_or(i64::MAX);
        Decimal {
            negative,
            digits: digits[first..=last].to_vec(),
            exponent,
        }
    }

    /// The exact value of a finite double: its mantissa times a power of two, written out
    /// (a power 2^-k is 5^k × 10^-k).
    fn exact(double: f64) -> Decimal {
        let bits = double.to_bits();
        let negative = bits >> 63 == 1;
        let biased = i64::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
        let fraction = bits & ((1 << 52) - 1);
        let (mantissa, power) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1 << 52), biased - 1075)
        };
        // Little-endian limbs of nine decimal digits.
        let mut limbs = vec![
            u32::try_from(mantissa % 1_000_000_000).unwrap_or(0),
            u32::try_from(mantissa / 1_000_000_000 % 1_000_000_000).unwrap_or(0),
            u32::try_from(mantissa / 1_000_000_000_000_000_000).unwrap_or(0),
        ];
        let (factor, times, exponent) = if power >= 0 {
            (2, power, 0)
        } else {
            (5, -power, power)
        };
        for _ in 0..times {
            let mut carry = 0u64;
            for limb in &mut limbs {
                let product = u64::from(*limb) * factor + carry;
                *limb = u32::try_from(product % 1_000_000_000).unwrap_or(0);
                carry = product / 1_000_000_000;
            }
            if carry > 0 {
                limbs.push(u32::try_from(carry).unwrap_or(0));
            }
        }
        let mut digits = String::new();
        for (i, limb) in limbs.iter().rev().enumerate() {
            if i == 0 {
                digits.push_str(&limb.to_string());
            } else {
                digits.push_str(&format!("{limb:09}"));
            }
        }
        Decimal::new(negative, digits.into_bytes(), exponent)
    }
}

fn with_key(path: &mut String, key: &str, f: impl FnOnce(&mut String)) {
    let len = path.len();
    crate::protocol::patch::push_token(path, key);
    f(path);
    path.truncate(len);
}

#[cfg(test)]
mod tests;
