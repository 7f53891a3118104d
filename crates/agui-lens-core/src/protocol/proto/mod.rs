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

/// The content type of a protobuf event stream.
pub const CONTENT_TYPE: &str = "application/vnd.ag-ui.event+proto";

/// Bytes of the length prefix in front of every frame.
pub const PREFIX_LEN: usize = 4;

/// What one frame's message holds.
#[derive(Debug, PartialEq)]
pub enum Decoded {
    /// An event, in its JSON form.
    Event(Map<String, Value>),
    /// Only envelope fields this build does not know: an event of a later protocol version,
    /// which a client drops with a warning. The field numbers it used.
    UnknownArm(Vec<u32>),
}

/// Decodes one frame's message (without its length prefix). An `Err` says why the bytes are
/// not an event: a client gives up on the stream there.
pub fn decode_event(bytes: &[u8]) -> Result<Decoded, String> {
    let arms = wire::envelope_fields(bytes)?;
    let known: Vec<u32> = arms
        .iter()
        .copied()
        .filter(|&n| wire::is_known_arm(n))
        .collect();
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
    let (ty, body) = wire::decode_envelope(bytes)?;
    shape::from_wire(ty, body).map(Decoded::Event)
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
}

/// Encodes one event. An `Err` when it has no protobuf form at all (not an object, no
/// `type`, or a type the wire format has no message for).
pub fn encode_event(event: &Value) -> Result<Encoded, String> {
    let object = event.as_object().ok_or("the event is not a JSON object")?;
    let (arm, body) = shape::to_wire(object)?;
    let bytes = wire::encode_envelope(&arm, &body)?;
    let lost = match decode_event(&bytes) {
        Ok(Decoded::Event(back)) => {
            let mut lost = Vec::new();
            differences(event, &Value::Object(back), &mut String::new(), &mut lost);
            lost
        }
        Ok(Decoded::UnknownArm(_)) => vec![String::new()],
        Err(err) => return Err(format!("its protobuf form does not decode again: {err}")),
    };
    Ok(Encoded { bytes, lost })
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

/// JSON Pointers where `b` differs from `a`. A member that is null on one side and absent on
/// the other is the same (the wire has no null for an optional field, and AG-UI reads both
/// as "not set"), as is an empty list that only `b` has (a decoder gives a run input its
/// lists of tools, context and resume entries, empty when none were sent); numbers are
/// compared by value (`1.0` is `1`).
fn differences(a: &Value, b: &Value, path: &mut String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, left) in a {
                let right = b.get(key).unwrap_or(&Value::Null);
                with_key(path, key, |path| differences(left, right, path, out));
            }
            for (key, right) in b {
                let empty = right.is_null() || right.as_array().is_some_and(Vec::is_empty);
                if !a.contains_key(key) && !empty {
                    with_key(path, key, |path| out.push(path.clone()));
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
            let integer =
                |n: &serde_json::Number| n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
            let same = match integer(x) {
                Some(x) => integer(y) == Some(x),
                None => x.as_f64().is_some() && x.as_f64() == y.as_f64(),
            };
            if !same {
                out.push(path.clone());
            }
        }
        (a, b) if a == b => {}
        _ => out.push(path.clone()),
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
