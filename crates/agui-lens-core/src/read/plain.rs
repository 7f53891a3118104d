//! The fast path for the small events around the deltas: the openers and closers of runs,
//! messages, tool calls, reasoning spans, steps and subagents. Their fields are a few strings
//! and a timestamp, and producers write them compact with `type` first; such an event is read
//! here in one pass straight into the value the full parser would build, and only when every
//! field is one the schema holds to a plain string (or one of a few strings), every field the
//! schema requires is there, and nothing else is. Anything else returns `None` and takes the
//! full path. So an event read here is one the embedded schemas of the newest version find
//! nothing wrong with (a test holds the table below to those schemas, and this reader to the
//! full parser and the schemas on generated lines), and its schema check can be skipped.
//! STATE_DELTA, the commonest event after the deltas in stored histories, is read the same
//! way when its patch is plain (see `state_delta`): its values are parsed by serde_json.

use serde_json::{Map, Number, Value};

use crate::protocol::event::EventType;
use crate::read::delta::{integer, string};

/// What a field's value must be.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// Any string.
    Text,
    /// One of these strings.
    OneOf(&'static [&'static str]),
}

/// The fields an event type may carry on this path besides `type`, and which of them it must.
#[derive(Debug)]
pub(crate) struct Shape {
    pub kind: EventType,
    pub fields: &'static [(&'static str, Kind)],
    pub required: &'static [&'static str],
}

use Kind::{OneOf, Text};

/// `timestamp` is read apart (a safe non-negative integer); `subagentRunId` is a string on
/// every event.
const OWNER: (&str, Kind) = ("subagentRunId", Text);

pub(crate) const SHAPES: &[Shape] = &[
    Shape {
        kind: EventType::StepStarted,
        fields: &[("stepName", Text), OWNER],
        required: &["stepName"],
    },
    Shape {
        kind: EventType::StepFinished,
        fields: &[("stepName", Text), OWNER],
        required: &["stepName"],
    },
    Shape {
        kind: EventType::TextMessageStart,
        fields: &[
            ("messageId", Text),
            ("role", OneOf(&["developer", "system", "assistant", "user"])),
            ("name", Text),
            OWNER,
        ],
        required: &["messageId"],
    },
    Shape {
        kind: EventType::TextMessageEnd,
        fields: &[("messageId", Text), OWNER],
        required: &["messageId"],
    },
    Shape {
        kind: EventType::ToolCallStart,
        fields: &[
            ("toolCallId", Text),
            ("toolCallName", Text),
            ("parentMessageId", Text),
            OWNER,
        ],
        required: &["toolCallId", "toolCallName"],
    },
    Shape {
        kind: EventType::ToolCallEnd,
        fields: &[("toolCallId", Text), OWNER],
        required: &["toolCallId"],
    },
    Shape {
        kind: EventType::ReasoningStart,
        fields: &[("messageId", Text), OWNER],
        required: &["messageId"],
    },
    Shape {
        kind: EventType::ReasoningMessageStart,
        fields: &[("messageId", Text), ("role", OneOf(&["reasoning"])), OWNER],
        required: &["messageId", "role"],
    },
    Shape {
        kind: EventType::ReasoningMessageEnd,
        fields: &[("messageId", Text), OWNER],
        required: &["messageId"],
    },
    Shape {
        kind: EventType::ReasoningEnd,
        fields: &[("messageId", Text), OWNER],
        required: &["messageId"],
    },
    Shape {
        kind: EventType::RunFinished,
        fields: &[("threadId", Text), ("runId", Text)],
        required: &["threadId", "runId"],
    },
    Shape {
        kind: EventType::SubagentStarted,
        fields: &[
            ("subagentRunId", Text),
            ("name", Text),
            ("description", Text),
            ("parentSubagentRunId", Text),
            ("parentToolCallId", Text),
            ("parentMessageId", Text),
        ],
        required: &["subagentRunId", "name"],
    },
    Shape {
        kind: EventType::SubagentFinished,
        fields: &[("subagentRunId", Text)],
        required: &["subagentRunId"],
    },
];

/// Reads an event of one of the types above, or a STATE_DELTA (see `state_delta`), if it
/// has exactly a plain, valid shape, into its type and the value the full parser builds from
/// the same bytes.
pub fn scan(text: &str) -> Option<(EventType, Value)> {
    let raw = text.as_bytes();
    let rest = raw.strip_prefix(b"{\"type\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    let (name, mut rest) = (&rest[..end], &rest[end + 1..]);
    if name == b"STATE_DELTA" {
        return state_delta(text, rest).map(|value| (EventType::StateDelta, value));
    }
    let shape = SHAPES
        .iter()
        .find(|shape| shape.kind.as_str().as_bytes() == name)?;
    let mut map = Map::new();
    map.insert(
        "type".to_owned(),
        Value::String(shape.kind.as_str().to_owned()),
    );
    // Bit i: field i of the shape was seen; the top bit: `timestamp`.
    let mut seen = 0u32;
    const TIMESTAMP: u32 = 1 << 31;
    loop {
        match rest.split_first()? {
            (b'}', []) => break,
            (b',', tail) => rest = tail,
            _ => return None,
        }
        let body = rest.strip_prefix(b"\"")?;
        // A key with an escape is left to the full parser: none of ours needs one.
        let close = body.iter().position(|&b| b == b'"' || b == b'\\')?;
        if body[close] != b'"' {
            return None;
        }
        let key = &body[..close];
        let after = body[close + 1..].strip_prefix(b":")?;
        if key == b"timestamp" {
            if seen & TIMESTAMP != 0 {
                return None;
            }
            seen |= TIMESTAMP;
            let (value, tail) = integer(after)?;
            map.insert("timestamp".to_owned(), Value::Number(Number::from(value)));
            rest = tail;
            continue;
        }
        let index = shape
            .fields
            .iter()
            .position(|(field, _)| field.as_bytes() == key)?;
        if seen & (1 << index) != 0 {
            return None;
        }
        seen |= 1 << index;
        let (field, kind) = shape.fields[index];
        let (text, tail) = string(raw, after, true)?;
        let text = text.get(raw);
        if let OneOf(allowed) = kind {
            if !allowed.contains(&text) {
                return None;
            }
        }
        map.insert(field.to_owned(), Value::String(text.to_owned()));
        rest = tail;
    }
    let has = |name: &str| {
        shape
            .fields
            .iter()
            .position(|(field, _)| *field == name)
            .is_some_and(|index| seen & (1 << index) != 0)
    };
    shape
        .required
        .iter()
        .all(|name| has(name))
        .then_some((shape.kind, Value::Object(map)))
}

/// The operations of a JSON Patch, and what each must carry besides `op` (RFC 6902 and the
/// schemas agree).
const OPERATIONS: &[(&str, &[&str])] = &[
    ("add", &["path", "value"]),
    ("remove", &["path"]),
    ("replace", &["path", "value"]),
    ("move", &["from", "path"]),
    ("copy", &["from", "path"]),
    ("test", &["path", "value"]),
];

/// The fields an operation may carry on this path. `path` is a JSON Pointer on every
/// operation, `from` on those that use it; `value` is any JSON.
const OPERATION_FIELDS: [&str; 4] = ["op", "path", "from", "value"];

/// A STATE_DELTA whose fields are `delta` and perhaps `timestamp` and `subagentRunId`, after
/// `{"type":"STATE_DELTA"`, compact, each field once; each of its operations an object of
/// the fields above, each once, with those its `op` requires. A value is parsed by serde_json
/// (a repeated key in it leaves the event to the full path, which reports it).
fn state_delta(text: &str, mut rest: &[u8]) -> Option<Value> {
    let raw = text.as_bytes();
    let mut map = Map::new();
    map.insert(
        "type".to_owned(),
        Value::String(EventType::StateDelta.as_str().to_owned()),
    );
    loop {
        match rest.split_first()? {
            (b'}', []) => break,
            (b',', tail) => rest = tail,
            _ => return None,
        }
        let (field, value, tail) = if let Some(after) = rest.strip_prefix(b"\"delta\":") {
            let (operations, tail) = operations(text, after)?;
            ("delta", Value::Array(operations), tail)
        } else if let Some(after) = rest.strip_prefix(b"\"timestamp\":") {
            let (value, tail) = integer(after)?;
            ("timestamp", Value::Number(Number::from(value)), tail)
        } else if let Some(after) = rest.strip_prefix(b"\"subagentRunId\":") {
            let (owner, tail) = string(raw, after, true)?;
            (
                "subagentRunId",
                Value::String(owner.get(raw).to_owned()),
                tail,
            )
        } else {
            return None;
        };
        if map.insert(field.to_owned(), value).is_some() {
            return None;
        }
        rest = tail;
    }
    map.contains_key("delta").then_some(Value::Object(map))
}

/// The operations of a patch from its `[`, and what follows its `]`.
fn operations<'a>(text: &str, rest: &'a [u8]) -> Option<(Vec<Value>, &'a [u8])> {
    let mut rest = rest.strip_prefix(b"[")?;
    let mut operations = Vec::new();
    if let Some(tail) = rest.strip_prefix(b"]") {
        return Some((operations, tail));
    }
    loop {
        let (operation, tail) = operation(text, rest)?;
        operations.push(operation);
        match tail.split_first()? {
            (b',', tail) => rest = tail,
            (b']', tail) => return Some((operations, tail)),
            _ => return None,
        }
    }
}

/// One operation from its `{`, and what follows its `}`.
fn operation<'a>(text: &str, rest: &'a [u8]) -> Option<(Value, &'a [u8])> {
    let raw = text.as_bytes();
    let mut rest = rest.strip_prefix(b"{")?;
    let mut map = Map::new();
    loop {
        let body = rest.strip_prefix(b"\"")?;
        let index = OPERATION_FIELDS.iter().position(|field| {
            body.strip_prefix(field.as_bytes())
                .is_some_and(|after| after.starts_with(b"\":"))
        })?;
        let field = OPERATION_FIELDS[index];
        let after = &body[field.len() + 2..];
        // `from` is a pointer only where the operation uses it (checked at the end); on the
        // others, as `value` on any, it may be anything.
        let (value, tail) = if field == "value" || field == "from" {
            json_value(text, after)?
        } else {
            let (found, tail) = string(raw, after, true)?;
            let found = found.get(raw);
            let fits = match field {
                "op" => OPERATIONS.iter().any(|(op, _)| *op == found),
                _ => is_pointer(found),
            };
            if !fits {
                return None;
            }
            (Value::String(found.to_owned()), tail)
        };
        if map.insert(field.to_owned(), value).is_some() {
            return None;
        }
        match tail.split_first()? {
            (b',', tail) => rest = tail,
            (b'}', tail) => {
                let op = map.get("op")?.as_str()?;
                let (_, required) = OPERATIONS.iter().find(|(name, _)| *name == op)?;
                let complete = required.iter().all(|field| match *field {
                    "from" => map
                        .get("from")
                        .and_then(Value::as_str)
                        .is_some_and(is_pointer),
                    field => map.contains_key(field),
                });
                return complete.then_some((Value::Object(map), tail));
            }
            _ => return None,
        }
    }
}

/// Whether `text` is a JSON Pointer as the schemas' pattern has it: empty, or `/`-separated
/// tokens in which every `~` is followed by `0` or `1`.
fn is_pointer(text: &str) -> bool {
    let bytes = text.as_bytes();
    (bytes.is_empty() || bytes[0] == b'/')
        && bytes
            .iter()
            .enumerate()
            .all(|(i, &b)| b != b'~' || matches!(bytes.get(i + 1), Some(b'0' | b'1')))
}

/// Any JSON value at the start of `rest` (a suffix of `text`), up to the `,`, `}` or `]` that
/// ends it, as serde_json parses it; `None` if it is not one, or holds an object with a key
/// written twice.
fn json_value<'a>(text: &str, rest: &'a [u8]) -> Option<(Value, &'a [u8])> {
    // serde_json refuses what nests deeper than 128 levels, counted from the event: three
    // are open around a value. A deep value is left to the full path, which says so.
    const DEEPEST: usize = 100;
    let mut depth = 0usize;
    let mut objects = false;
    let mut at = 0;
    let end = loop {
        match *rest.get(at)? {
            b'"' => {
                at = crate::read::dupkeys::string_end(rest, at + 1)?;
            }
            b'{' | b'[' if depth == DEEPEST => return None,
            b'{' => {
                objects = true;
                depth += 1;
            }
            b'[' => depth += 1,
            b'}' | b']' if depth == 0 => break at,
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => break at,
            _ => {}
        }
        at += 1;
    };
    // `rest` is a suffix of `text`, and the value ends at an ASCII byte: a char boundary.
    let start = text.len() - rest.len();
    let value = text.get(start..start + end)?;
    let parsed = if objects {
        match crate::read::dupkeys::parse_noting_repeats(value).ok()? {
            (value, None) => value,
            (_, Some(_)) => return None,
        }
    } else {
        serde_json::from_str(value).ok()?
    };
    Some((parsed, &rest[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::catalog::Levels;
    use crate::check::parse::parse_frame_with;
    use crate::check::schema::SchemaSet;
    use crate::protocol::version::Version;
    use crate::read::Batch;
    use crate::read::delta::flips;
    use std::sync::Arc;

    /// The table says what the newest embedded schemas say of every field it lets through.
    #[test]
    fn the_shapes_are_the_schemas() {
        let schemas = SchemaSet::embedded().unwrap();
        assert_eq!(schemas.version(), Version::NEWEST);
        for shape in SHAPES {
            let rel = crate::check::schema::event_schema_path(shape.kind);
            let doc = schemas.doc(&rel).unwrap();
            let properties = doc["properties"].as_object().unwrap();
            let mut required: Vec<&str> = doc["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .filter(|r| *r != "type")
                .collect();
            required.sort_unstable();
            let mut ours = shape.required.to_vec();
            ours.sort_unstable();
            assert_eq!(ours, required, "{}", shape.kind);
            // Nothing but properties, `required` and `type: object` constrains the event.
            for key in doc.as_object().unwrap().keys() {
                assert!(
                    [
                        "$schema",
                        "$id",
                        "title",
                        "description",
                        "type",
                        "properties",
                        "required"
                    ]
                    .contains(&key.as_str()),
                    "{}: {key}",
                    shape.kind
                );
            }
            let bare = |name: &str| {
                let mut schema = properties[name].as_object().unwrap().clone();
                schema.remove("description");
                schema.remove("x-help");
                Value::Object(schema)
            };
            for (name, kind) in shape.fields.iter().chain([&("timestamp", Text)]) {
                let expected = match (*name, kind) {
                    ("timestamp", _) => serde_json::json!({
                        "type": "integer",
                        "minimum": -9_007_199_254_740_991i64,
                        "maximum": 9_007_199_254_740_991i64,
                    }),
                    (_, Text) => serde_json::json!({"type": "string"}),
                    (_, OneOf([only])) => serde_json::json!({"const": only}),
                    (_, OneOf(all)) => serde_json::json!({"enum": all}),
                };
                assert_eq!(bare(name), expected, "{} {name}", shape.kind);
            }
        }
    }

    /// What the full path makes of a line: its event's type and value, and whether anything
    /// was found wrong with it, by the parser or the newest embedded schemas.
    fn full(schemas: &SchemaSet, line: &str) -> (Option<(Option<EventType>, Value)>, bool) {
        let mut batch = Batch::default();
        batch.push_frame(line.as_bytes(), 0);
        batch.check_utf8();
        let name: Arc<str> = Arc::from("case");
        let parsed = parse_frame_with(
            &name,
            &batch,
            &batch.frames[0],
            1 << 20,
            true,
            false,
            crate::check::parse::Halves::Mended,
        );
        let mut found = parsed.problems;
        if let Some(event) = &parsed.event {
            crate::check::rules::schema::check(event, schemas, &Levels::default(), &mut found);
        }
        (parsed.event.map(|e| (e.kind, e.value)), !found.is_empty())
    }

    /// A line this reader takes is one the full path reads to the same value and finds nothing
    /// wrong with; and the lines producers write (compact, `type` first, no `\u`) of a valid
    /// shape are all this reader's.
    #[test]
    fn the_scanner_reads_what_the_full_path_passes() {
        use proptest::prelude::*;

        let piece = prop_oneof![
            "[a-z ]{0,6}",
            Just("assistant".to_owned()),
            Just("reasoning".to_owned()),
            Just("\\\"".to_owned()),
            Just("\\n".to_owned()),
            Just("\\u00e9".to_owned()),
            Just("\\x".to_owned()),
            Just("\u{1}".to_owned()),
            Just("é東😀".to_owned()),
        ];
        let text = proptest::collection::vec(piece, 0..3).prop_map(|p| p.concat());
        let value = prop_oneof![
            6 => text.clone().prop_map(|t| format!("\"{t}\"")),
            1 => prop_oneof![
                Just("\"user\"".to_owned()),
                Just("\"tool\"".to_owned()),
                Just("0".to_owned()),
                Just("017".to_owned()),
                Just("-3".to_owned()),
                Just("-0".to_owned()),
                Just("1.5".to_owned()),
                Just("2e3".to_owned()),
                Just("9007199254740991".to_owned()),
                Just("9007199254740992".to_owned()),
                Just("null".to_owned()),
                Just("{}".to_owned()),
                Just("[]".to_owned()),
                Just("true".to_owned()),
            ],
            1 => (0u64..2_000_000_000_000).prop_map(|n| n.to_string()),
        ];
        let key = prop_oneof![
            Just("messageId"),
            Just("toolCallId"),
            Just("toolCallName"),
            Just("parentMessageId"),
            Just("stepName"),
            Just("role"),
            Just("name"),
            Just("threadId"),
            Just("runId"),
            Just("result"),
            Just("timestamp"),
            Just("subagentRunId"),
            Just("rawEvent"),
            Just("type"),
            Just("desc\\u0072iption"),
            Just("extra"),
        ];
        let shape = (0..SHAPES.len()).prop_map(|i| &SHAPES[i]);
        // Mostly the fields its type may carry, each once, the required ones always, in any
        // order, their values mostly of the right kind; sometimes any fields at all.
        let fields = |shape: &'static Shape| {
            let slots = shape.fields.len() + 1;
            let own = (
                any::<u32>(),
                any::<u64>(),
                proptest::collection::vec(
                    prop_oneof![
                        4 => Just(String::new()),
                        2 => text.clone().prop_map(|t| format!("\"{t}\"")),
                        1 => value.clone(),
                    ],
                    slots,
                ),
            )
                .prop_map(move |(mask, order, values)| {
                    let mut picked = Vec::new();
                    for (i, v) in values.into_iter().enumerate() {
                        let (name, kind) =
                            shape.fields.get(i).copied().unwrap_or(("timestamp", Text));
                        if !shape.required.contains(&name) && mask & (1 << i) == 0 {
                            continue;
                        }
                        let v = match (v.is_empty(), name, kind) {
                            (true, "timestamp", _) => (order % 2_000_000_000_000).to_string(),
                            (true, _, OneOf(allowed)) => {
                                format!("\"{}\"", allowed[order as usize % allowed.len()])
                            }
                            (true, _, Text) => format!("\"id-{}\"", order % 1000),
                            (false, ..) => v,
                        };
                        picked.push((name.to_owned(), v));
                    }
                    if !picked.is_empty() {
                        let turn = (order % picked.len() as u64) as usize;
                        picked.rotate_left(turn);
                    }
                    if order & 256 != 0 {
                        picked.reverse();
                    }
                    picked
                });
            prop_oneof![
                4 => own,
                1 => proptest::collection::vec((key.clone(), value.clone()), 0..5)
                    .prop_map(|f| f.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
            ]
        };
        let line = (
            shape.prop_flat_map(move |shape| (Just(shape), fields(shape))),
            prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("x")],
            flips::flip(),
        )
            .prop_map(|((shape, fields), tail, flip)| {
                let mut line = format!("{{\"type\":\"{}\"", shape.kind.as_str());
                for (key, value) in fields {
                    line.push_str(&format!(",\"{key}\":{value}"));
                }
                line.push('}');
                line.push_str(tail);
                let flipped = flip.is_some();
                (flips::apply(line, flip), flipped)
            });
        // Left to the full path for a reason: a `\u` escape, a timestamp that is negative
        // or written with an exponent (`2e3` is an integer to a schema), a field of any value
        // (`rawEvent`, `result`), anything after the object.
        hold_to_the_full_path(line, |line| {
            line.contains("\"rawEvent\"")
                || line.contains("\"result\"")
                || line.contains("\\u")
                || line.contains(":-")
                || line.contains("2e3")
                || !line.ends_with('}')
        });
    }

    /// What [`state_delta`] lets through is what the newest embedded schemas allow of a
    /// STATE_DELTA and of each operation.
    #[test]
    fn the_state_delta_shape_is_the_schema() {
        let schemas = SchemaSet::embedded().unwrap();
        let doc = |rel: &str| {
            let mut doc = schemas.doc(rel).unwrap().clone();
            strip(&mut doc);
            doc
        };
        let event = doc(&crate::check::schema::event_schema_path(
            EventType::StateDelta,
        ));
        assert_eq!(event["required"], serde_json::json!(["type", "delta"]));
        assert_eq!(
            event["properties"]["delta"]["$ref"],
            "../defs/JsonPatch.json"
        );
        assert_eq!(
            event["properties"]["subagentRunId"],
            serde_json::json!({"type": "string"})
        );
        let keys: Vec<&String> = event.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["properties", "required", "title", "type"]);
        let patch = doc("defs/JsonPatch.json");
        assert_eq!(
            patch,
            serde_json::json!({"title": "JSON Patch", "type": "array",
                "items": {"$ref": "JsonPatchOperation.json"}})
        );
        let operation = doc("defs/JsonPatchOperation.json");
        let ops: Vec<&str> = OPERATIONS.iter().map(|(op, _)| *op).collect();
        assert_eq!(
            operation["properties"]["op"],
            serde_json::json!({"enum": ops})
        );
        assert_eq!(operation["required"], serde_json::json!(["op"]));
        let branches = operation["allOf"].as_array().unwrap();
        assert_eq!(branches.len(), OPERATIONS.len());
        for ((op, required), branch) in OPERATIONS.iter().zip(branches) {
            assert_eq!(branch["if"]["properties"]["op"]["const"], *op);
            let name = branch["then"]["$ref"].as_str().unwrap();
            let variant = doc(&format!("defs/{name}"));
            let mut expected: Vec<&str> = required.to_vec();
            expected.push("op");
            expected.sort_unstable();
            let mut listed: Vec<&str> = variant["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            listed.sort_unstable();
            assert_eq!(listed, expected, "{op}");
            for (field, schema) in variant["properties"].as_object().unwrap() {
                let expected = match field.as_str() {
                    "op" => serde_json::json!({"const": op}),
                    "path" | "from" => serde_json::json!({"$ref": "JsonPointer.json"}),
                    "value" => serde_json::json!({}),
                    other => panic!("{op}: a field the scanner does not know: {other}"),
                };
                assert_eq!(*schema, expected, "{op} {field}");
            }
            // Open: no `additionalProperties` (a field besides ours leaves the path anyway).
            assert!(variant.get("additionalProperties").is_none(), "{op}");
        }
        assert_eq!(
            doc("defs/JsonPointer.json"),
            serde_json::json!({"title": "JSON Pointer", "type": "string",
                "pattern": "^(/([^/~]|~[01])*)*$"})
        );
    }

    /// A schema document without the words around it.
    fn strip(doc: &mut Value) {
        match doc {
            Value::Object(map) => {
                for key in [
                    "description",
                    "x-help",
                    "$schema",
                    "$id",
                    "examples",
                    "x-open",
                    "x-discriminator",
                ] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }

    /// A STATE_DELTA this reader takes is one the full path reads to the same value and
    /// finds nothing wrong with; and every compact one of plain shape is taken.
    #[test]
    fn state_deltas_read_as_the_full_path_reads_them() {
        use proptest::prelude::*;

        let pointer = prop_oneof![
            Just(String::new()),
            "(/[a-z0-9~-]{0,3}){1,3}",
            Just("/a~1b/~0".to_owned()),
            Just("a".to_owned()),
            Just("/\\u007e".to_owned()),
            Just("/é/东".to_owned()),
        ];
        let value = prop_oneof![
            Just("\"plain\"".to_owned()),
            Just("{\"id\":\"x\",\"n\":[1,2]}".to_owned()),
            Just("1".to_owned()),
            Just("-0.5e3".to_owned()),
            Just("1e400".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just("null".to_owned()),
            Just("\"x\\\"y\"".to_owned()),
            Just("[1,[2,{}],\"]\"]".to_owned()),
            Just("{\"a\":{\"b\":[true,false]},\"c\":\"}\"}".to_owned()),
            Just("{\"a\":1,\"a\":2}".to_owned()),
            Just("{\"a\":{\"x\":1,\"x\":1}}".to_owned()),
            Just(" [ 1 , 2 ] ".to_owned()),
            Just("tru".to_owned()),
            Just("[1,2".to_owned()),
            Just("{\"a\":1}}".to_owned()),
            // Deep: serde_json refuses 128 levels counted from the event, three above.
            (95usize..130).prop_map(|d| format!("{}1{}", "[".repeat(d), "]".repeat(d))),
        ];
        let op = prop_oneof![
            8 => (0..OPERATIONS.len()).prop_map(|i| format!("\"{}\"", OPERATIONS[i].0)),
            1 => Just("\"nope\"".to_owned()),
            1 => Just("\"\\u0061dd\"".to_owned()),
            1 => Just("1".to_owned()),
        ];
        let field = prop_oneof![
            3 => op.prop_map(|op| ("op".to_owned(), op)),
            3 => pointer.clone().prop_map(|p| ("path".to_owned(), format!("\"{p}\""))),
            1 => pointer.clone().prop_map(|p| ("from".to_owned(), format!("\"{p}\""))),
            3 => value.clone().prop_map(|v| ("value".to_owned(), v)),
            1 => Just(("extra".to_owned(), "1".to_owned())),
            1 => Just(("path".to_owned(), "7".to_owned())),
        ];
        let object = |fields: Vec<(String, String)>| {
            let fields: Vec<String> = fields
                .into_iter()
                .map(|(key, value)| format!("\"{key}\":{value}"))
                .collect();
            format!("{{{}}}", fields.join(","))
        };
        // Mostly an operation with the fields its `op` needs, in any order; sometimes any
        // fields at all.
        let well_formed = (
            0..OPERATIONS.len(),
            pointer.clone(),
            pointer.clone(),
            value,
            0u8..8,
        )
            .prop_map(move |(i, path, from, value, twist)| {
                let (op, required) = OPERATIONS[i];
                let mut fields = vec![("op".to_owned(), format!("\"{op}\""))];
                for field in required
                    .iter()
                    .chain(if twist == 0 { &["from"][..] } else { &[] })
                {
                    let text = match *field {
                        "path" => format!("\"{path}\""),
                        "from" => format!("\"{from}\""),
                        _ => value.clone(),
                    };
                    fields.push(((*field).to_owned(), text));
                }
                let turn = usize::from(twist) % fields.len();
                fields.rotate_left(turn);
                fields
            });
        let operation = prop_oneof![
            3 => well_formed.prop_map(object),
            1 => proptest::collection::vec(field, 0..5).prop_map(object),
        ];
        let delta = prop_oneof![
            8 => proptest::collection::vec(operation, 0..4)
                .prop_map(|ops| format!("\"delta\":[{}]", ops.join(","))),
            1 => Just("\"delta\":{}".to_owned()),
        ];
        let other = prop_oneof![
            3 => (0u64..2_000_000_000_000).prop_map(|n| format!("\"timestamp\":{n}")),
            1 => Just("\"timestamp\":-1".to_owned()),
            2 => Just("\"subagentRunId\":\"s\"".to_owned()),
            1 => Just("\"metadata\":{}".to_owned()),
            1 => Just("\"delta\":[]".to_owned()),
        ];
        // The patch, mostly once, among a few other fields in any order.
        let line = (
            delta,
            proptest::collection::vec(other, 0..3),
            any::<usize>(),
            flips::flip(),
        )
            .prop_map(|(delta, mut fields, turn, flip)| {
                fields.push(delta);
                let turn = turn % fields.len();
                fields.rotate_left(turn);
                let mut line = "{\"type\":\"STATE_DELTA\"".to_owned();
                for field in fields {
                    line.push(',');
                    line.push_str(&field);
                }
                line.push('}');
                let flipped = flip.is_some();
                (flips::apply(line, flip), flipped)
            });
        // Left for a reason: a repeated key (the full path reports it), a value written
        // with spaces, a `\u` escape, an unknown field, a value nesting deep.
        hold_to_the_full_path(line, |line| {
            line.contains(' ')
                || line.contains("\\u")
                || line.contains("\"extra\"")
                || line.contains("\"metadata\"")
                || line.contains(":-")
                || line.contains("[[[[[[[[[[")
        });
    }

    /// Runs 20,000 generated lines, `true` beside those with a byte flipped: a line this
    /// reader takes must be one the full path reads to the same value and finds nothing
    /// wrong with; an unflipped line it leaves, one the full path faults or that
    /// `left_for_a_reason` names. Enough lines must be taken to mean something.
    fn hold_to_the_full_path(
        line: impl proptest::strategy::Strategy<Value = (String, bool)>,
        left_for_a_reason: impl Fn(&str) -> bool,
    ) {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};

        let schemas = SchemaSet::embedded().unwrap();
        let mut runner = TestRunner::new(Config {
            cases: 20_000,
            failure_persistence: None,
            ..Config::default()
        });
        let scanned = std::cell::Cell::new(0u32);
        runner
            .run(&line, |(line, flipped): (String, bool)| {
                let (read, found) = full(&schemas, &line);
                match scan(&line) {
                    Some((kind, value)) => {
                        scanned.set(scanned.get() + 1);
                        prop_assert!(!found, "taken, but the full path finds fault: {line}");
                        prop_assert_eq!(Some((Some(kind), value)), read, "{}", line);
                    }
                    None if flipped => {}
                    None => {
                        let plain = read.is_some() && !found && !left_for_a_reason(&line);
                        prop_assert!(!plain, "a plain valid line was left: {line}");
                    }
                }
                Ok(())
            })
            .unwrap();
        let scanned = scanned.get();
        assert!(scanned > 2_000, "only {scanned} lines taken");
    }

    /// However deep a value nests, the scanner reads what the full path reads: serde_json's
    /// limit counts from the event, not from the value.
    #[test]
    fn a_deep_value_is_judged_as_the_full_path_judges_it() {
        let schemas = SchemaSet::embedded().unwrap();
        for depth in 90..=130 {
            for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
                let value = format!("{}1{}", open.repeat(depth), close.repeat(depth));
                for field in ["value", "from"] {
                    let line = format!(
                        r#"{{"type":"STATE_DELTA","delta":[{{"op":"add","path":"/a","value":0,"{field}":{value}}}]}}"#
                    )
                    .replace(r#""value":0,"value":"#, r#""value":"#);
                    let (read, found) = full(&schemas, &line);
                    if let Some((kind, value)) = scan(&line) {
                        assert!(!found, "taken, but the full path finds fault: {depth}");
                        assert_eq!(Some((Some(kind), value)), read, "{depth}");
                    }
                }
            }
        }
    }

    #[test]
    fn anything_unusual_takes_the_full_path() {
        for text in [
            r#"{"type":"STEP_STARTED"}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","stepName":"b"}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","timestamp":1,"timestamp":2}"#,
            r#"{"type":"STEP_STARTED","stepName":null}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","rawEvent":{}}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","metadata":{}}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","extra":"x"}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","timestamp":1.0}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","timestamp":-1}"#,
            r#"{"type":"STEP_STARTED","stepName":"a","type":"STEP_FINISHED"}"#,
            r#"{"type":"STEP_STARTED","stepName":"\u0061"}"#,
            // Not JSON at all: an escape in a key the scanner would otherwise read past.
            r#"{"type":"STEP_STARTED","stepName\:"x"}"#,
            r#"{"type":"STEP_STARTED\","stepName":"x"}"#,
            r#"{"type":"STEP_STARTED", "stepName":"a"}"#,
            r#"{"type":"STEP_STARTED","stepName":"a"} "#,
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"tool"}"#,
            r#"{"type":"REASONING_MESSAGE_START","messageId":"m"}"#,
            r#"{"type":"TOOL_CALL_START","toolCallId":"t"}"#,
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":1}"#,
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","subagentRunId":"s"}"#,
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}"#,
            r#"{"type":"STATE_DELTA"}"#,
            r#"{"type":"STATE_DELTA","delta":[],"delta":[]}"#,
            r#"{"type":"STATE_DELTA","delta":[{}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a"}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"move","path":"/a"}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"a","value":1}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/~","value":1}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a","op":"remove"}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":{"k":1,"k":2}}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1 2}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a","why":1}]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a"},]}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a"}] }"#,
            r#"{"type":"STATE_DELTA","delta":{"op":"remove","path":"/a"}}"#,
            r#"{"type":"STATE_DELTA","delta":[],"metadata":{}}"#,
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
        let (kind, value) =
            scan(r#"{"type":"TEXT_MESSAGE_START","messageId":"m\n1","role":"user","timestamp":5}"#)
                .unwrap();
        assert_eq!(kind, EventType::TextMessageStart);

        assert_eq!(
            value,
            serde_json::json!({"type": "TEXT_MESSAGE_START", "messageId": "m\n1", "role": "user", "timestamp": 5})
        );
        let text = r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a~1b","value":{"k":[1,"]}"]}},{"op":"move","from":"/x","path":""}],"timestamp":3}"#;
        let (kind, value) = scan(text).unwrap();
        assert_eq!(kind, EventType::StateDelta);
        assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
    }
}
