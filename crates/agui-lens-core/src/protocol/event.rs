//! The shared event types: an AG-UI event as read, and where it was read from.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

macro_rules! event_types {
    ($($variant:ident = $name:literal,)*) => {
        /// Every event type agui-lens knows: the 31 of AG-UI 1.0 and the THINKING_* events
        /// that 1.0 removed.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventType {
            $($variant,)*
        }

        impl EventType {
            /// All known types, in the order of the protocol's documentation.
            pub const ALL: &'static [EventType] = &[$(EventType::$variant,)*];

            /// The wire name, e.g. `TEXT_MESSAGE_START`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(EventType::$variant => $name,)*
                }
            }

            /// The type for a wire name; `None` for names AG-UI does not define.
            pub fn from_name(name: &str) -> Option<EventType> {
                match name {
                    $($name => Some(EventType::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

event_types! {
    RunStarted = "RUN_STARTED",
    RunFinished = "RUN_FINISHED",
    RunError = "RUN_ERROR",
    StepStarted = "STEP_STARTED",
    StepFinished = "STEP_FINISHED",
    TextMessageStart = "TEXT_MESSAGE_START",
    TextMessageContent = "TEXT_MESSAGE_CONTENT",
    TextMessageEnd = "TEXT_MESSAGE_END",
    TextMessageChunk = "TEXT_MESSAGE_CHUNK",
    ToolCallStart = "TOOL_CALL_START",
    ToolCallArgs = "TOOL_CALL_ARGS",
    ToolCallEnd = "TOOL_CALL_END",
    ToolCallChunk = "TOOL_CALL_CHUNK",
    ToolCallResult = "TOOL_CALL_RESULT",
    StateSnapshot = "STATE_SNAPSHOT",
    StateDelta = "STATE_DELTA",
    MessagesSnapshot = "MESSAGES_SNAPSHOT",
    ActivitySnapshot = "ACTIVITY_SNAPSHOT",
    ActivityDelta = "ACTIVITY_DELTA",
    ReasoningStart = "REASONING_START",
    ReasoningMessageStart = "REASONING_MESSAGE_START",
    ReasoningMessageContent = "REASONING_MESSAGE_CONTENT",
    ReasoningMessageEnd = "REASONING_MESSAGE_END",
    ReasoningMessageChunk = "REASONING_MESSAGE_CHUNK",
    ReasoningEnd = "REASONING_END",
    ReasoningEncryptedValue = "REASONING_ENCRYPTED_VALUE",
    SubagentStarted = "SUBAGENT_STARTED",
    SubagentFinished = "SUBAGENT_FINISHED",
    SubagentError = "SUBAGENT_ERROR",
    Raw = "RAW",
    Custom = "CUSTOM",
    ThinkingStart = "THINKING_START",
    ThinkingEnd = "THINKING_END",
    ThinkingTextMessageStart = "THINKING_TEXT_MESSAGE_START",
    ThinkingTextMessageContent = "THINKING_TEXT_MESSAGE_CONTENT",
    ThinkingTextMessageEnd = "THINKING_TEXT_MESSAGE_END",
}

impl EventType {
    /// The REASONING_* event that replaced a THINKING_* event in 1.0, if this type was removed.
    pub fn replaced_by(self) -> Option<EventType> {
        use EventType::*;
        match self {
            ThinkingStart => Some(ReasoningStart),
            ThinkingEnd => Some(ReasoningEnd),
            ThinkingTextMessageStart => Some(ReasoningMessageStart),
            ThinkingTextMessageContent => Some(ReasoningMessageContent),
            ThinkingTextMessageEnd => Some(ReasoningMessageEnd),
            _ => None,
        }
    }

    /// Whether the type is part of AG-UI 1.0 (as opposed to a removed pre-1.0 type).
    pub fn is_current(self) -> bool {
        self.replaced_by().is_none()
    }

    /// A position in `ALL`, for tables indexed by type.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl EventType {
    /// The field holding an event's JSON Patch: `delta` of STATE_DELTA, `patch` of
    /// ACTIVITY_DELTA.
    pub fn patch_field(self) -> Option<&'static str> {
        match self {
            EventType::StateDelta => Some("delta"),
            EventType::ActivityDelta => Some("patch"),
            _ => None,
        }
    }
}

/// The operations of a JSON Patch as the JSON text of their array, read one at a time.
#[derive(Debug)]
pub struct RawPatch {
    text: Box<str>,
}

impl RawPatch {
    /// A patch from the text of a JSON array (which the caller has read as valid JSON).
    pub fn new(text: &str) -> Option<RawPatch> {
        text.trim_start()
            .starts_with('[')
            .then(|| RawPatch { text: text.into() })
    }

    /// The array's text, as read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Calls `each` with every operation in order, with its index, until it returns false.
    pub fn each(&self, mut each: impl FnMut(usize, Value) -> bool) {
        use serde::de::{Deserializer as _, IgnoredAny, SeqAccess, Visitor};
        struct Ops<'f>(&'f mut dyn FnMut(usize, Value) -> bool);
        impl<'de> Visitor<'de> for Ops<'_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of operations")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                let mut index = 0;
                while let Some(op) = seq.next_element::<Value>()? {
                    if !(self.0)(index, op) {
                        // The rest is read past, not built.
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        break;
                    }
                    index += 1;
                }
                Ok(())
            }
        }
        let mut deserializer = serde_json::Deserializer::from_str(&self.text);
        // The text was read as valid JSON before it was kept.
        let _ = deserializer.deserialize_seq(Ops(&mut each));
    }

    /// The operations as one value.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Array(Vec::new()))
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an event (or a line that should have been one) was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file as the user named it, `-` for stdin, or a URL for live input.
    pub path: Arc<str>,
    /// 1-based line; for SSE, the line where the event's first `data:` field starts.
    pub line: u64,
    /// Byte offset of that line from the start of the (decompressed) input.
    pub offset: u64,
    /// 0-based index of the frame among all frames of the input, readable or not.
    pub index: u64,
}

/// One parsed event: a JSON object and its type, if it names a known one.
#[derive(Clone, Debug)]
pub struct Event {
    pub loc: Location,
    /// The `type` field when it names a known event type.
    pub kind: Option<EventType>,
    /// The whole event as read; for a large patch (see `patch`), with its operations left
    /// out: the patch field holds `[]`.
    pub value: Value,
    /// The operations of a large STATE_DELTA's `delta` or ACTIVITY_DELTA's `patch`, kept as
    /// the text they were read from. Held as values, a million small operations take twenty
    /// times their text, so they are read one at a time where they are used.
    pub patch: Option<Arc<RawPatch>>,
    /// Read with a stand-in for half a UTF-16 surrogate pair (see [`crate::read::halves`]).
    pub halves: bool,
    /// Read with U+FFFD for half a UTF-16 surrogate pair, which was said
    /// (`framing/lone-surrogate`): what folds the stream reads it again, keeping the half.
    pub mended: bool,
}

impl EventType {
    /// The type a JSON event's `type` field names: none when the field is missing, is not a
    /// string, or names a type AG-UI does not define.
    pub fn of(value: &Value) -> Option<EventType> {
        value
            .get("type")
            .and_then(Value::as_str)
            .and_then(EventType::from_name)
    }
}

impl Event {
    /// An event read whole.
    pub fn new(loc: Location, kind: Option<EventType>, value: Value) -> Event {
        Event {
            loc,
            kind,
            value,
            patch: None,
            halves: false,
            mended: false,
        }
    }

    /// An event read whole, of the type its `type` field names (see [`EventType::of`]).
    pub fn from_value(loc: Location, value: Value) -> Event {
        Event::new(loc, EventType::of(&value), value)
    }

    /// The event with a large patch's operations in place, as it was written: for the few
    /// uses that need the whole value (comparing events one by one, writing one out that was
    /// read over several lines). Costs what holding the operations costs.
    pub fn whole_value(&self) -> std::borrow::Cow<'_, Value> {
        match (&self.patch, self.kind.and_then(EventType::patch_field)) {
            (Some(patch), Some(field)) => {
                let mut value = self.value.clone();
                if let Value::Object(map) = &mut value {
                    map.insert(field.into(), patch.to_value());
                }
                std::borrow::Cow::Owned(value)
            }
            _ => std::borrow::Cow::Borrowed(&self.value),
        }
    }

    /// The `type` field as written, known or not.
    pub fn type_name(&self) -> Option<&str> {
        self.value.get("type").and_then(Value::as_str)
    }

    /// A string field of the event, if present and a string.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    /// Any field of the event.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.value.get(key)
    }

    /// The event's timestamp in milliseconds since the epoch, read as a client shows time:
    /// a value in [`SECONDS`] (or with a fraction that small) is seconds, as some producers
    /// send (`order/timestamp-unit` reports them), and is scaled.
    pub fn timestamp_millis(&self) -> Option<i64> {
        let value = self.value.get("timestamp")?;
        if let Some(ts) = value.as_i64() {
            return Some(if SECONDS.contains(&ts) { ts * 1000 } else { ts });
        }
        let ts = value.as_f64().filter(|t| t.is_finite())?;
        let ms = if (SECONDS.start as f64..SECONDS.end as f64).contains(&ts) {
            ts * 1000.0
        } else {
            ts
        };
        Some(ms.round() as i64)
    }
}

/// Timestamps that read as seconds since the epoch (2001-09-09 to 2286-11-20), not
/// milliseconds (which would put them in 1970-1973).
pub const SECONDS: std::ops::Range<i64> = 1_000_000_000..100_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_type_is_the_one_its_type_field_names() {
        use serde_json::json;
        assert_eq!(
            EventType::of(&json!({"type": "STATE_DELTA", "delta": []})),
            Some(EventType::StateDelta)
        );
        for value in [
            json!({"type": "state_delta"}),
            json!({"type": "NOT_AN_EVENT"}),
            json!({"type": 3}),
            json!({"delta": []}),
            json!(["type", "RUN_STARTED"]),
            json!("RUN_STARTED"),
        ] {
            assert_eq!(EventType::of(&value), None, "{value}");
        }
    }

    #[test]
    fn timestamps_in_seconds_read_as_milliseconds() {
        let at = |ts: Value| {
            let mut value = serde_json::json!({"type": "RUN_STARTED"});
            value["timestamp"] = ts;
            Event {
                loc: Location {
                    path: Arc::from("t"),
                    line: 1,
                    offset: 0,
                    index: 0,
                },
                kind: Some(EventType::RunStarted),
                value,
                patch: None,
                halves: false,
                mended: false,
            }
            .timestamp_millis()
        };
        assert_eq!(
            at(serde_json::json!(1_732_000_000_123_i64)),
            Some(1_732_000_000_123)
        );
        assert_eq!(
            at(serde_json::json!(1_732_000_000)),
            Some(1_732_000_000_000)
        );
        assert_eq!(
            at(serde_json::json!(1_732_000_000.25)),
            Some(1_732_000_000_250)
        );
        assert_eq!(at(serde_json::json!(5)), Some(5));
        assert_eq!(at(serde_json::json!("soon")), None);
    }

    #[test]
    fn names_round_trip() {
        for ty in EventType::ALL {
            assert_eq!(EventType::from_name(ty.as_str()), Some(*ty));
        }
        assert_eq!(EventType::from_name("text_message_start"), None);
    }

    #[test]
    fn thirty_one_current_types() {
        let current = EventType::ALL.iter().filter(|t| t.is_current()).count();
        assert_eq!(current, 31);
        assert_eq!(EventType::ALL.len(), 36);
    }
}
