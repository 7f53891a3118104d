//! Decoding messages straight into wire JSON, guided by tables built once from the
//! descriptors: each field's number, JSON name and type, and the value a field without
//! presence reads as when it is absent. (A dynamic message per event, then a walk over it,
//! cost ten times the parsing of the same event as JSON.)

use std::collections::HashMap;
use std::sync::LazyLock;

use prost::encoding::decode_varint;
use prost_reflect::{Kind as ProtoKind, MessageDescriptor};
use serde_json::{Map, Number, Value};

enum Kind {
    Str,
    Int,
    Bool,
    Double,
    /// Names by number.
    Enum(HashMap<i32, String>),
    /// Another message: its table's index.
    Message(usize),
    /// `google.protobuf.Value`, `Struct`, `ListValue`: plain JSON.
    JsonValue,
    JsonObject,
    JsonList,
    /// A type no AG-UI message uses: skipped.
    Other,
}

struct Field {
    json: String,
    kind: Kind,
    list: bool,
    /// Read as its default when absent (a proto3 field without presence).
    default: Option<Value>,
}

pub struct Table {
    /// The message's full name (`ag_ui.TextMessageContentEvent`).
    name: String,
    fields: HashMap<u32, Field>,
}

/// A field a message carried that decoding passed over: a number its definition does not
/// have (one of a later protocol version, or of another producer's own), or a known number
/// sent in a wire type its type does not have. Every protobuf decoder drops such a field
/// without a word, so what it held reaches no reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The full name of the message that carried it.
    pub message: &'static str,
    pub number: u32,
    pub wire: u8,
    /// The field's JSON name, when the number is a known one (sent in the wrong wire type).
    pub known: Option<&'static str>,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.known {
            None => write!(f, "field {} of {}", self.number, self.message),
            Some(name) => write!(
                f,
                "field {} (`{name}`) of {} in wire type {}, which its type does not have",
                self.number, self.message, self.wire
            ),
        }
    }
}

/// The fields a message's decoding passed over: how many, and the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skips {
    pub count: u32,
    pub first: Option<Skipped>,
}

impl Skips {
    pub fn add(&mut self, skipped: Skipped) {
        self.count = self.count.saturating_add(1);
        self.first.get_or_insert(skipped);
    }

    /// Steps over a field of `message` that is not read, counting it.
    fn skip(
        &mut self,
        message: &'static str,
        known: Option<&'static str>,
        wire: u8,
        buf: &mut &[u8],
        number: u32,
    ) -> Result<(), String> {
        skip(wire, buf, number)?;
        self.add(Skipped {
            message,
            number,
            wire,
            known,
        });
        Ok(())
    }
}

const VALUE: &str = "google.protobuf.Value";
const STRUCT: &str = "google.protobuf.Struct";
const LIST_VALUE: &str = "google.protobuf.ListValue";

pub struct Tables {
    pub tables: Vec<Table>,
    pub envelope: usize,
}

pub static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut tables = Vec::new();
    let mut index = HashMap::new();
    let envelope = table_of(&super::wire::envelope(), &mut tables, &mut index);
    Tables { tables, envelope }
});

fn table_of(
    desc: &MessageDescriptor,
    tables: &mut Vec<Table>,
    index: &mut HashMap<String, usize>,
) -> usize {
    if let Some(&at) = index.get(desc.full_name()) {
        return at;
    }
    let at = tables.len();
    index.insert(desc.full_name().to_owned(), at);
    tables.push(Table {
        name: desc.full_name().to_owned(),
        fields: HashMap::new(),
    });
    let mut fields = HashMap::new();
    for field in desc.fields() {
        let kind = match field.kind() {
            ProtoKind::String => Kind::Str,
            ProtoKind::Int64 | ProtoKind::Int32 => Kind::Int,
            ProtoKind::Bool => Kind::Bool,
            ProtoKind::Double => Kind::Double,
            ProtoKind::Enum(e) => Kind::Enum(
                e.values()
                    .map(|v| (v.number(), v.name().to_owned()))
                    .collect(),
            ),
            ProtoKind::Message(m) => match m.full_name() {
                VALUE => Kind::JsonValue,
                STRUCT => Kind::JsonObject,
                LIST_VALUE => Kind::JsonList,
                _ => Kind::Message(table_of(&m, tables, index)),
            },
            _ => Kind::Other,
        };
        let default = if field.is_list() || field.supports_presence() {
            None
        } else {
            match &kind {
                Kind::Str => Some(Value::String(String::new())),
                Kind::Int | Kind::Double => Some(Value::from(0)),
                Kind::Bool => Some(Value::Bool(false)),
                Kind::Enum(names) => Some(
                    names
                        .get(&0)
                        .map_or(Value::from(0), |n| Value::String(n.clone())),
                ),
                _ => None,
            }
        };
        fields.insert(
            field.number(),
            Field {
                json: field.json_name().to_owned(),
                kind,
                list: field.is_list(),
                default,
            },
        );
    }
    tables[at].fields = fields;
    at
}

impl Tables {
    /// The table of a message field, if the field holds a message.
    pub fn field_table(&self, table: usize, number: u32) -> Option<usize> {
        match self.tables[table].fields.get(&number)?.kind {
            Kind::Message(at) => Some(at),
            _ => None,
        }
    }

    /// The full name of a table's message.
    pub fn message_name(&'static self, table: usize) -> &'static str {
        &self.tables[table].name
    }

    /// A length-delimited field of a message kind, as JSON.
    fn payload(
        &'static self,
        kind: &Kind,
        bytes: &[u8],
        skips: &mut Skips,
    ) -> Result<Option<Value>, String> {
        Ok(match kind {
            Kind::Message(at) => Some(Value::Object(self.decode(*at, bytes, skips)?)),
            Kind::JsonValue => json_value(bytes, skips)?,
            Kind::JsonObject => Some(Value::Object(json_object(bytes, skips)?)),
            Kind::JsonList => Some(Value::Array(json_list(bytes, skips)?)),
            _ => None,
        })
    }

    /// A message as wire JSON: every field it carries, and the default of each field without
    /// presence that it does not. A message field sent twice is merged, as protobuf merges it
    /// (its occurrences read as one). A field of a number the message does not define, or of
    /// a wire type its type does not have, is skipped, as protobuf skips it, and counted in
    /// `skips`.
    pub fn decode(
        &'static self,
        table: usize,
        bytes: &[u8],
        skips: &mut Skips,
    ) -> Result<Map<String, Value>, String> {
        let t = &self.tables[table];
        let _nested = Nested::enter()?;
        let mut out = Map::new();
        for field in t.fields.values() {
            if field.list {
                out.insert(field.json.clone(), Value::Array(Vec::new()));
            } else if let Some(default) = &field.default {
                out.insert(field.json.clone(), default.clone());
            }
        }
        let mut buf = bytes;
        while !buf.is_empty() {
            let (number, wire) = key(&mut buf, bytes.len())?;
            let Some(field) = t.fields.get(&number) else {
                skips.skip(&t.name, None, wire, &mut buf, number)?;
                continue;
            };
            let value = match (&field.kind, wire) {
                (Kind::Str, 2) => Some(Value::String(string(&mut buf, number)?)),
                (Kind::Int, 0) => Some(Value::from(varint(&mut buf)? as i64)),
                (Kind::Bool, 0) => Some(Value::Bool(varint(&mut buf)? != 0)),
                (Kind::Double, 1) => Some(number_value(fixed64(&mut buf)?)),
                (Kind::Enum(names), 0) => {
                    let n = varint(&mut buf)? as i32;
                    Some(
                        names
                            .get(&n)
                            .map_or(Value::from(n), |n| Value::String(n.clone())),
                    )
                }
                (Kind::Message(_) | Kind::JsonValue | Kind::JsonObject | Kind::JsonList, 2) => {
                    let part = bytes_of(&mut buf, number)?;
                    if !field.list && out.contains_key(&field.json) {
                        // Sent before (a message field has no default): its occurrences so
                        // far, this one included, read as one, rare enough to gather again.
                        // What this part skips is counted once, the earlier ones' already.
                        self.payload(&field.kind, part, skips)?;
                        let read = &bytes[..bytes.len() - buf.len()];
                        let all = occurrences(read, number)?;
                        self.payload(&field.kind, &all, &mut Skips::default())?
                    } else {
                        self.payload(&field.kind, part, skips)?
                    }
                }
                _ => {
                    skips.skip(&t.name, Some(&field.json), wire, &mut buf, number)?;
                    None
                }
            };
            let Some(value) = value else { continue };
            if field.list {
                if let Some(Value::Array(items)) = out.get_mut(&field.json) {
                    items.push(value);
                }
            } else {
                out.insert(field.json.clone(), value);
            }
        }
        Ok(out)
    }
}

/// The payloads of every length-delimited field `number` of a message, one after another: how
/// protobuf reads a message field sent more than once.
fn occurrences(bytes: &[u8], number: u32) -> Result<Vec<u8>, String> {
    let mut all = Vec::new();
    let mut buf = bytes;
    while !buf.is_empty() {
        let (n, wire) = key(&mut buf, bytes.len())?;
        if (n, wire) == (number, 2) {
            all.extend_from_slice(bytes_of(&mut buf, n)?);
        } else {
            skip(wire, &mut buf, n)?;
        }
    }
    Ok(all)
}

/// A double as JSON: integral values as integers (`5`, not `5.0`), as JavaScript prints them.
pub fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// A `google.protobuf.Value`; `None` when it holds nothing.
fn json_value(bytes: &[u8], skips: &mut Skips) -> Result<Option<Value>, String> {
    let _nested = Nested::enter()?;
    let mut buf = bytes;
    let mut found = None;
    while !buf.is_empty() {
        let (number, wire) = key(&mut buf, bytes.len())?;
        found = match (number, wire) {
            (1, 0) => {
                varint(&mut buf)?;
                Some(Value::Null)
            }
            (2, 1) => Some(number_value(fixed64(&mut buf)?)),
            (3, 2) => Some(Value::String(string(&mut buf, number)?)),
            (4, 0) => Some(Value::Bool(varint(&mut buf)? != 0)),
            (5, 2) => Some(Value::Object(json_object(
                bytes_of(&mut buf, number)?,
                skips,
            )?)),
            (6, 2) => Some(Value::Array(json_list(bytes_of(&mut buf, number)?, skips)?)),
            _ => {
                skips.skip(VALUE, None, wire, &mut buf, number)?;
                continue;
            }
        };
    }
    Ok(found)
}

/// A `google.protobuf.Struct`: its entries, each a key and a value.
fn json_object(bytes: &[u8], skips: &mut Skips) -> Result<Map<String, Value>, String> {
    let _nested = Nested::enter()?;
    let mut buf = bytes;
    let mut out = Map::new();
    while !buf.is_empty() {
        let (number, wire) = key(&mut buf, bytes.len())?;
        if (number, wire) != (1, 2) {
            skips.skip(STRUCT, None, wire, &mut buf, number)?;
            continue;
        }
        let entry = bytes_of(&mut buf, number)?;
        let mut inner = entry;
        let (mut name, mut value) = (String::new(), Value::Null);
        while !inner.is_empty() {
            let (number, wire) = key(&mut inner, entry.len())?;
            match (number, wire) {
                (1, 2) => name = string(&mut inner, number)?,
                (2, 2) => {
                    value =
                        json_value(bytes_of(&mut inner, number)?, skips)?.unwrap_or(Value::Null);
                }
                _ => skips.skip(
                    "google.protobuf.Struct.FieldsEntry",
                    None,
                    wire,
                    &mut inner,
                    number,
                )?,
            }
        }
        out.insert(name, value);
    }
    Ok(out)
}

/// A `google.protobuf.ListValue`.
fn json_list(bytes: &[u8], skips: &mut Skips) -> Result<Vec<Value>, String> {
    let _nested = Nested::enter()?;
    let mut buf = bytes;
    let mut out = Vec::new();
    while !buf.is_empty() {
        let (number, wire) = key(&mut buf, bytes.len())?;
        if (number, wire) == (1, 2) {
            out.push(json_value(bytes_of(&mut buf, number)?, skips)?.unwrap_or(Value::Null));
        } else {
            skips.skip(LIST_VALUE, None, wire, &mut buf, number)?;
        }
    }
    Ok(out)
}

/// A field's key: (number, wire type).
pub fn key(buf: &mut &[u8], whole: usize) -> Result<(u32, u8), String> {
    let at = whole - buf.len();
    let key = decode_varint(buf).map_err(|_| format!("a broken field key at byte {at}"))?;
    // A key is a 32-bit varint; field numbers run from 1 to 2^29 - 1.
    let number = key >> 3;
    if number == 0 || number > MAX_FIELD {
        return Err(format!("field number {number} at byte {at}"));
    }
    let number = number as u32;
    Ok((number, (key & 7) as u8))
}

fn varint(buf: &mut &[u8]) -> Result<u64, String> {
    decode_varint(buf).map_err(|_| "a varint runs past the message's end".to_owned())
}

fn fixed64(buf: &mut &[u8]) -> Result<f64, String> {
    let (bytes, rest) = buf
        .split_first_chunk::<8>()
        .ok_or("a double runs past the message's end")?;
    *buf = rest;
    Ok(f64::from_le_bytes(*bytes))
}

/// The bytes of a length-delimited field.
fn bytes_of<'a>(buf: &mut &'a [u8], number: u32) -> Result<&'a [u8], String> {
    let len = varint(buf)? as usize;
    if len > buf.len() {
        return Err(format!("field {number} runs past the message's end"));
    }
    let (bytes, rest) = buf.split_at(len);
    *buf = rest;
    Ok(bytes)
}

fn string(buf: &mut &[u8], number: u32) -> Result<String, String> {
    let bytes = bytes_of(buf, number)?;
    String::from_utf8(bytes.to_vec())
        .map_err(|_| format!("field {number} is a string that is not UTF-8"))
}

/// How deep messages (and groups) may nest: past it a message does not decode, as the official
/// decoders refuse it (a crafted frame of nested groups or values ran the stack out).
pub const MAX_DEPTH: usize = 100;

thread_local! {
    /// How many messages are being decoded, one inside the other, on this thread.
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One more message being decoded inside the others, for as long as it lives; refused past
/// [`MAX_DEPTH`].
struct Nested;

impl Nested {
    fn enter() -> Result<Nested, String> {
        DEPTH.with(|depth| {
            if depth.get() >= MAX_DEPTH {
                return Err(format!("messages nest deeper than {MAX_DEPTH}"));
            }
            depth.set(depth.get() + 1);
            Ok(Nested)
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        DEPTH.with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

/// Steps over a group begun as field `number` to its end, the groups inside it with it (one
/// loop, however deep: no recursion a crafted frame could run out of stack with).
fn skip_group(buf: &mut &[u8], number: u32) -> Result<(), String> {
    let mut open = vec![number];
    while let Some(&innermost) = open.last() {
        if buf.is_empty() {
            return Err(format!("group {innermost} runs past the message's end"));
        }
        let (inner, wire) = key(buf, buf.len())?;
        match wire {
            3 if open.len() >= MAX_DEPTH => {
                return Err(format!("groups nest deeper than {MAX_DEPTH}"));
            }
            3 => open.push(inner),
            4 if inner == innermost => {
                open.pop();
            }
            4 => return Err(format!("group {innermost} is ended as group {inner}")),
            wire => skip(wire, buf, inner)?,
        }
    }
    Ok(())
}

/// The largest field number protobuf allows.
const MAX_FIELD: u64 = (1 << 29) - 1;

/// Steps over a field this build does not read. A group (wire type 3, long deprecated) is
/// stepped over to its end, as protobuf decoders step over an unknown one.
pub fn skip(wire: u8, buf: &mut &[u8], number: u32) -> Result<(), String> {
    let len = match wire {
        0 => return varint(buf).map(|_| ()),
        1 => 8,
        2 => varint(buf)? as usize,
        3 => return skip_group(buf, number),
        5 => 4,
        wire => {
            return Err(format!(
                "field {number} has wire type {wire}, which no event uses"
            ));
        }
    };
    if len > buf.len() {
        return Err(format!("field {number} runs past the message's end"));
    }
    *buf = &buf[len..];
    Ok(())
}
