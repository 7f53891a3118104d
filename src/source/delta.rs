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

use crate::event::EventType;

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
