//! Messages as the descriptors of `proto/*.proto` define them, to and from "wire JSON": an
//! object per message keyed by each field's JSON name, enums by name, `google.protobuf.Value`,
//! `Struct` and `ListValue` as the plain JSON they stand for.
//!
//! Decoding is table-driven (`decode.rs`). Encoding walks the descriptors: fields in
//! declaration order (which is field-number order in these files, and the order the official
//! encoder writes), struct members in key order, so the same event always gives the same bytes.

use std::collections::HashMap;
use std::sync::LazyLock;

use prost::encoding::{WireType, decode_varint, encode_key, encode_varint};
use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

use super::decode::{self, TABLES};

/// The descriptors compiled from `proto/*.proto` by the build script.
static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(&include_bytes!(concat!(env!("OUT_DIR"), "/ag_ui.binpb"))[..])
        .expect("the descriptor set the build script compiled")
});

fn message(name: &str) -> MessageDescriptor {
    POOL.get_message_by_name(name)
        .unwrap_or_else(|| panic!("{name} is in proto/"))
}

static ENVELOPE: LazyLock<MessageDescriptor> = LazyLock::new(|| message("ag_ui.Event"));

/// Whether an envelope field number is an event arm of this build.
pub fn is_known_arm(number: u32) -> bool {
    ARMS.contains_key(&number)
}

/// The JSON name of the envelope arm for an event type (`TEXT_MESSAGE_START` →
/// `textMessageStart`), if the wire format has one.
pub fn arm_for_type(ty: &str) -> Option<String> {
    let field = ENVELOPE.get_field_by_name(&ty.to_ascii_lowercase())?;
    Some(field.json_name().to_owned())
}

/// The first key of a message: (field number, wire type). A key is a 32-bit varint, so at
/// most its first five bytes are read: what decides it never depends on the bytes after them.
pub fn first_key(bytes: &[u8]) -> Option<(u32, u8)> {
    let mut buf = &bytes[..bytes.len().min(5)];
    let key = u32::try_from(decode_varint(&mut buf).ok()?).ok()?;
    Some((key >> 3, (key & 7) as u8))
}

/// The field numbers of an envelope's fields, in the order they appear (a repeated one each
/// time), after checking that the bytes are a sequence of well-formed fields.
pub fn envelope_fields(bytes: &[u8]) -> Result<Vec<u32>, String> {
    let mut buf = bytes;
    let mut numbers = Vec::new();
    while !buf.is_empty() {
        let (number, wire) = decode::key(&mut buf, bytes.len())?;
        decode::skip(wire, &mut buf, number)?;
        numbers.push(number);
    }
    Ok(numbers)
}

/// Decodes an envelope with exactly one known arm (see [`envelope_fields`]): the event type
/// the arm carries, and its body as wire JSON. An arm sent more than once is read as one
/// message of all its occurrences, as protobuf merges them. The fields skipped, the
/// envelope's own and the body's, are counted in `skips`.
pub fn decode_envelope(
    bytes: &[u8],
    skips: &mut decode::Skips,
) -> Result<(&'static str, Map<String, Value>), String> {
    let tables = &*TABLES;
    let mut buf = bytes;
    let mut arm: Option<(u32, &'static str, std::borrow::Cow<'_, [u8]>)> = None;
    while !buf.is_empty() {
        let (number, wire) = decode::key(&mut buf, bytes.len())?;
        match (ARMS.get(&number), wire) {
            (Some(ty), 2) => {
                let len = decode_varint(&mut buf).map_err(|_| "a broken length".to_owned())?;
                let body = buf
                    .get(..len as usize)
                    .ok_or_else(|| format!("field {number} runs past the message's end"))?;
                buf = &buf[len as usize..];
                match &mut arm {
                    // Sent again: read as one message with the first (protobuf merges them).
                    Some((_, _, bodies)) => bodies.to_mut().extend_from_slice(body),
                    None => arm = Some((number, ty.as_str(), body.into())),
                }
            }
            (Some(_), wire) => {
                return Err(format!(
                    "envelope field {number} has wire type {wire}, not a message's"
                ));
            }
            (None, wire) => {
                // An arm of a later version beside a known one is an envelope field unknown
                // here like any other (two known arms were refused before).
                decode::skip(wire, &mut buf, number)?;
                skips.add(decode::Skipped {
                    message: tables.message_name(tables.envelope),
                    number,
                    wire,
                    known: None,
                });
            }
        }
    }
    let (number, ty, body) = arm.ok_or("the message names no event")?;
    let table = tables
        .field_table(tables.envelope, number)
        .expect("every arm of the envelope is a message");
    Ok((ty, tables.decode(table, &body, skips)?))
}

/// The event type each arm of the envelope carries, by field number.
static ARMS: LazyLock<HashMap<u32, String>> = LazyLock::new(|| {
    ENVELOPE
        .fields()
        .map(|f| (f.number(), f.name().to_ascii_uppercase()))
        .collect()
});

/// The envelope's descriptor, for the decoding tables.
pub fn envelope() -> MessageDescriptor {
    ENVELOPE.clone()
}

/// Encodes an envelope holding one arm (by its JSON name) whose body is wire JSON.
pub fn encode_envelope(arm: &str, body: &Map<String, Value>) -> Result<Vec<u8>, String> {
    let field = ENVELOPE
        .get_field_by_json_name(arm)
        .ok_or_else(|| format!("the wire format has no event `{arm}`"))?;
    let Kind::Message(desc) = field.kind() else {
        unreachable!("every arm of the envelope is a message");
    };
    let mut inner = Vec::new();
    encode_message(&desc, body, &mut inner);
    let mut out = Vec::with_capacity(inner.len() + 6);
    put_len(field.number(), &inner, &mut out);
    Ok(out)
}

/// Writes the fields of `body` that `desc` defines; members it does not define are left out
/// (the caller finds them by decoding again), as are values of the wrong JSON kind.
fn encode_message(desc: &MessageDescriptor, body: &Map<String, Value>, out: &mut Vec<u8>) {
    for field in desc.fields() {
        let Some(value) = body.get(field.json_name()) else {
            continue;
        };
        if value.is_null() && !is_json_value(&field) {
            continue;
        }
        if field.is_list() {
            if let Value::Array(items) = value {
                for item in items {
                    encode_single(&field, item, false, out);
                }
            }
        } else {
            encode_single(&field, value, field.supports_presence(), out);
        }
    }
}

fn is_json_value(field: &FieldDescriptor) -> bool {
    matches!(field.kind(), Kind::Message(m) if m.full_name() == "google.protobuf.Value")
}

/// One value of a field. A field without presence (`string message_id = 2`) is left out when
/// it holds its default, as every protobuf encoder does.
fn encode_single(field: &FieldDescriptor, value: &Value, presence: bool, out: &mut Vec<u8>) {
    let number = field.number();
    match field.kind() {
        Kind::String => {
            if let Value::String(s) = value
                && (presence || field.is_list() || !s.is_empty())
            {
                put_len(number, s.as_bytes(), out);
            }
        }
        Kind::Bool => {
            if let Value::Bool(b) = value
                && (presence || *b)
            {
                encode_key(number, WireType::Varint, out);
                encode_varint(u64::from(*b), out);
            }
        }
        Kind::Int64 | Kind::Int32 => {
            if let Some(n) = integral(value)
                && (presence || n != 0)
            {
                encode_key(number, WireType::Varint, out);
                encode_varint(n as u64, out);
            }
        }
        Kind::Enum(e) => {
            let n = match value {
                Value::String(name) => e.get_value_by_name(name).map(|v| v.number()),
                Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
                _ => None,
            };
            if let Some(n) = n
                && (presence || n != 0)
            {
                encode_key(number, WireType::Varint, out);
                encode_varint(i64::from(n) as u64, out);
            }
        }
        Kind::Message(desc) => {
            let mut inner = Vec::new();
            match desc.full_name() {
                "google.protobuf.Value" => encode_value(value, &mut inner),
                "google.protobuf.Struct" => match value {
                    Value::Object(members) => encode_struct(members, &mut inner),
                    _ => return,
                },
                _ => match value {
                    Value::Object(members) => encode_message(&desc, members, &mut inner),
                    _ => return,
                },
            }
            put_len(number, &inner, out);
        }
        // No field of the AG-UI messages has another kind.
        _ => {}
    }
}

/// The integer a JSON number means, however it is written (`1000`, `1.0`, `1e3`): none for
/// one with a fraction or past an `i64`. (A double holds it; one that does not hold the
/// written value exactly is said by the round trip's comparison.)
fn integral(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        let double = value.as_f64()?;
        // -2^63 ≤ double < 2^63: the range an i64 holds.
        (double.fract() == 0.0
            && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&double))
        .then_some(double as i64)
    })
}

/// A JSON value as a `google.protobuf.Value`.
fn encode_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => {
            encode_key(1, WireType::Varint, out);
            encode_varint(0, out);
        }
        Value::Number(n) => {
            encode_key(2, WireType::SixtyFourBit, out);
            out.extend_from_slice(&n.as_f64().unwrap_or(f64::NAN).to_le_bytes());
        }
        Value::String(s) => put_len(3, s.as_bytes(), out),
        Value::Bool(b) => {
            encode_key(4, WireType::Varint, out);
            encode_varint(u64::from(*b), out);
        }
        Value::Object(members) => {
            let mut inner = Vec::new();
            encode_struct(members, &mut inner);
            put_len(5, &inner, out);
        }
        Value::Array(items) => {
            let mut list = Vec::new();
            for item in items {
                let mut inner = Vec::new();
                encode_value(item, &mut inner);
                put_len(1, &inner, &mut list);
            }
            put_len(6, &list, out);
        }
    }
}

/// A JSON object as a `google.protobuf.Struct`: one map entry per member.
fn encode_struct(members: &Map<String, Value>, out: &mut Vec<u8>) {
    for (key, value) in members {
        let mut entry = Vec::new();
        if !key.is_empty() {
            put_len(1, key.as_bytes(), &mut entry);
        }
        let mut inner = Vec::new();
        encode_value(value, &mut inner);
        put_len(2, &inner, &mut entry);
        put_len(1, &entry, out);
    }
}

fn put_len(number: u32, bytes: &[u8], out: &mut Vec<u8>) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}
