//! Chunk expansion: TEXT_MESSAGE_CHUNK, TOOL_CALL_CHUNK and REASONING_MESSAGE_CHUNK become the
//! START / CONTENT (ARGS) / END events a client sees in their place, the way the official
//! client's chunk transform expands them.
//!
//! Each owner (the parent agent, or a subagent by `subagentRunId`) has one lane, holding at
//! most one stream being assembled from chunks. A chunk continues the open stream of its lane
//! when it names the same id (or none); anything else closes the lane first. Most other events
//! close the lane of their owner; run boundaries and MESSAGES_SNAPSHOT close every lane.

use serde_json::{Map, Value};

use crate::protocol::event::EventType;

/// The stream a lane is assembling.
#[derive(Clone, Debug, PartialEq)]
enum Pending {
    Text {
        message_id: String,
        /// As the first chunk said it; absent means "assistant" (null stays null).
        role: Value,
        name: Option<String>,
        subagent: Option<String>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        parent_message_id: Option<String>,
        subagent: Option<String>,
    },
    Reasoning {
        message_id: String,
        subagent: Option<String>,
    },
    /// A chunk stream whose first chunk lacked its id: continuations are swallowed (already
    /// reported) until the lane closes or a chunk names an id.
    Orphan { kind: ChunkKind },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    Text,
    Tool,
    Reasoning,
}

impl ChunkKind {
    pub fn chunk_type(self) -> EventType {
        match self {
            ChunkKind::Text => EventType::TextMessageChunk,
            ChunkKind::Tool => EventType::ToolCallChunk,
            ChunkKind::Reasoning => EventType::ReasoningMessageChunk,
        }
    }

    fn of(ty: EventType) -> Option<ChunkKind> {
        match ty {
            EventType::TextMessageChunk => Some(ChunkKind::Text),
            EventType::ToolCallChunk => Some(ChunkKind::Tool),
            EventType::ReasoningMessageChunk => Some(ChunkKind::Reasoning),
            _ => None,
        }
    }

    fn id_field(self) -> &'static str {
        match self {
            ChunkKind::Tool => "toolCallId",
            _ => "messageId",
        }
    }

    /// The fields a chunk of this kind describes; anything else rides along as a remainder.
    fn described(self) -> &'static [&'static str] {
        const BASE: [&str; 5] = ["type", "timestamp", "rawEvent", "metadata", "subagentRunId"];
        match self {
            ChunkKind::Text => &[
                BASE[0],
                BASE[1],
                BASE[2],
                BASE[3],
                BASE[4],
                "messageId",
                "role",
                "delta",
                "name",
            ],
            ChunkKind::Tool => &[
                BASE[0],
                BASE[1],
                BASE[2],
                BASE[3],
                BASE[4],
                "toolCallId",
                "toolCallName",
                "parentMessageId",
                "delta",
            ],
            ChunkKind::Reasoning => &[
                BASE[0],
                BASE[1],
                BASE[2],
                BASE[3],
                BASE[4],
                "messageId",
                "delta",
            ],
        }
    }
}

impl Pending {
    fn kind(&self) -> ChunkKind {
        match self {
            Pending::Text { .. } => ChunkKind::Text,
            Pending::Tool { .. } => ChunkKind::Tool,
            Pending::Reasoning { .. } => ChunkKind::Reasoning,
            Pending::Orphan { kind } => *kind,
        }
    }

    fn id(&self) -> Option<&str> {
        match self {
            Pending::Text { message_id, .. } | Pending::Reasoning { message_id, .. } => {
                Some(message_id)
            }
            Pending::Tool { tool_call_id, .. } => Some(tool_call_id),
            Pending::Orphan { .. } => None,
        }
    }
}

/// What went wrong expanding a chunk. The chunk is dropped; expansion goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkProblem {
    /// The first chunk of a stream lacks its id (or, for tool calls, its name).
    MissingField {
        kind: ChunkKind,
        field: &'static str,
    },
    /// A chunk without id or owner while several subagents have a stream of its kind open.
    Ambiguous { kind: ChunkKind, lanes: usize },
    /// A chunk repeats a field of its stream with another value.
    Conflict {
        kind: ChunkKind,
        id: String,
        field: &'static str,
        incoming: String,
        established: Option<String>,
    },
    /// A chunk names a stream open in another owner's lane.
    WrongOwner {
        kind: ChunkKind,
        id: String,
        tag: String,
        owner: Option<String>,
    },
}

impl ChunkProblem {
    /// What the official client fails on, in words that name no id (two streams compared
    /// mint their own): the same failure reads the same in both.
    pub fn summary(&self) -> String {
        match self {
            ChunkProblem::MissingField { kind, field } => {
                format!("the first {} of a stream has no {field}", kind.chunk_type())
            }
            ChunkProblem::Ambiguous { kind, .. } => format!(
                "a {} names no stream while several subagents have one open",
                kind.chunk_type()
            ),
            ChunkProblem::Conflict { kind, field, .. } => format!(
                "a {} gives its stream's {field} another value",
                kind.chunk_type()
            ),
            ChunkProblem::WrongOwner { kind, .. } => format!(
                "a {} names a stream open for another subagent",
                kind.chunk_type()
            ),
        }
    }
}

/// One event a client sees: the input event itself, or one made up in its place.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    Original,
    Synthetic(Value),
}

/// Expands chunk events, one input event at a time.
#[derive(Debug, Default)]
pub struct ChunkExpander {
    lanes: Vec<(Option<String>, Pending)>,
    /// The last event was a chunk swallowed as part of a stream that could not be opened.
    swallowed: bool,
}

fn str_field<'a>(event: &'a Value, key: &str) -> Option<&'a str> {
    event.get(key).and_then(Value::as_str)
}

impl ChunkExpander {
    pub fn new() -> Self {
        ChunkExpander::default()
    }

    /// Whether any stream is being assembled.
    pub fn is_idle(&self) -> bool {
        self.lanes.is_empty()
    }

    /// The last event expanded was a chunk continuing a stream whose opening chunk was
    /// reported: it was dropped without a finding of its own. (A chunk that simply adds
    /// nothing to a healthy stream also expands to nothing, but is not swallowed.)
    pub fn swallowed(&self) -> bool {
        self.swallowed
    }

    /// Expands one event of type `ty` into `out` (cleared first): the events a client sees in
    /// its place, in order. Unknown types (`None`) pass through.
    pub fn expand(
        &mut self,
        ty: Option<EventType>,
        event: &Value,
        out: &mut Vec<Piece>,
    ) -> Result<(), ChunkProblem> {
        out.clear();
        self.swallowed = false;
        let Some(ty) = ty else {
            out.push(Piece::Original);
            return Ok(());
        };
        if let Some(kind) = ChunkKind::of(ty) {
            return self.expand_chunk(kind, event, out);
        }
        if !self.lanes.is_empty() {
            use EventType::*;
            let owner = || str_field(event, "subagentRunId").map(str::to_owned);
            match ty {
                RunStarted | RunFinished | RunError | MessagesSnapshot => self.close_all(out),
                TextMessageStart
                | TextMessageContent
                | TextMessageEnd
                | ToolCallStart
                | ToolCallArgs
                | ToolCallEnd
                | ToolCallResult
                | StateSnapshot
                | StateDelta
                | Custom
                | StepStarted
                | StepFinished
                | ReasoningStart
                | ReasoningMessageStart
                | ReasoningMessageContent
                | ReasoningMessageEnd
                | ReasoningEnd => self.close_lane(&owner(), out),
                SubagentFinished | SubagentError => {
                    if let Some(owner) = owner() {
                        self.close_lane(&Some(owner), out);
                    }
                }
                _ => {}
            }
        }
        out.push(Piece::Original);
        Ok(())
    }

    /// Closes every lane (the END events a run boundary produces).
    pub fn close_all(&mut self, out: &mut Vec<Piece>) {
        let owners: Vec<Option<String>> = self.lanes.iter().map(|(o, _)| o.clone()).collect();
        for owner in owners {
            self.close_lane(&owner, out);
        }
    }

    fn lane_index(&self, owner: &Option<String>) -> Option<usize> {
        self.lanes.iter().position(|(o, _)| o == owner)
    }

    fn close_lane(&mut self, owner: &Option<String>, out: &mut Vec<Piece>) {
        let Some(i) = self.lane_index(owner) else {
            return;
        };
        let (_, pending) = self.lanes.remove(i);
        let (ty, id_field, id, subagent) = match pending {
            Pending::Text {
                message_id,
                subagent,
                ..
            } => (EventType::TextMessageEnd, "messageId", message_id, subagent),
            Pending::Tool {
                tool_call_id,
                subagent,
                ..
            } => (EventType::ToolCallEnd, "toolCallId", tool_call_id, subagent),
            Pending::Reasoning {
                message_id,
                subagent,
            } => (
                EventType::ReasoningMessageEnd,
                "messageId",
                message_id,
                subagent,
            ),
            Pending::Orphan { .. } => return,
        };
        let mut end = Map::new();
        end.insert("type".into(), ty.as_str().into());
        end.insert(id_field.into(), id.into());
        if let Some(subagent) = subagent {
            end.insert("subagentRunId".into(), subagent.into());
        }
        out.push(Piece::Synthetic(Value::Object(end)));
    }

    /// Which lane a chunk belongs to.
    fn resolve_lane(
        &self,
        kind: ChunkKind,
        id: Option<&str>,
        tag: Option<&str>,
    ) -> Result<Option<String>, ChunkProblem> {
        if let Some(id) = id {
            let holder = self
                .lanes
                .iter()
                .find(|(_, p)| p.kind() == kind && p.id() == Some(id));
            if let Some((owner, _)) = holder {
                if let Some(tag) = tag {
                    if Some(tag) != owner.as_deref() {
                        return Err(ChunkProblem::WrongOwner {
                            kind,
                            id: id.to_owned(),
                            tag: tag.to_owned(),
                            owner: owner.clone(),
                        });
                    }
                }
                return Ok(owner.clone());
            }
            return Ok(tag.map(str::to_owned));
        }
        if let Some(tag) = tag {
            return Ok(Some(tag.to_owned()));
        }
        if let Some(i) = self.lane_index(&None) {
            if self.lanes[i].1.kind() == kind {
                return Ok(None);
            }
        }
        let candidates: Vec<&Option<String>> = self
            .lanes
            .iter()
            .filter(|(_, p)| p.kind() == kind)
            .map(|(o, _)| o)
            .collect();
        match candidates.len() {
            0 => Ok(None),
            1 => Ok(candidates[0].clone()),
            lanes => Err(ChunkProblem::Ambiguous { kind, lanes }),
        }
    }

    fn expand_chunk(
        &mut self,
        kind: ChunkKind,
        chunk: &Value,
        out: &mut Vec<Piece>,
    ) -> Result<(), ChunkProblem> {
        let id = str_field(chunk, kind.id_field());
        let tag = str_field(chunk, "subagentRunId");
        let lane = self.resolve_lane(kind, id, tag)?;
        let open = self.lane_index(&lane).map(|i| &self.lanes[i].1);
        let continues = open.is_some_and(|p| p.kind() == kind && (id.is_none() || p.id() == id));
        if continues {
            let pending = open.cloned().unwrap();
            if let Pending::Orphan { .. } = pending {
                self.swallowed = true;
                return Ok(());
            }
            check_agreement(kind, &pending, chunk)?;
            self.push_content(kind, &pending, chunk, false, out);
            return Ok(());
        }
        self.close_lane(&lane, out);
        let Some(id) = id else {
            // Keep swallowing the id-less continuations of this stream: one report, not one
            // per chunk.
            self.lanes.push((lane, Pending::Orphan { kind }));
            return Err(ChunkProblem::MissingField {
                kind,
                field: kind.id_field(),
            });
        };
        let subagent = tag.map(str::to_owned);
        let pending = match kind {
            ChunkKind::Text => Pending::Text {
                message_id: id.to_owned(),
                role: chunk
                    .get("role")
                    .cloned()
                    .unwrap_or_else(|| Value::String("assistant".into())),
                name: str_field(chunk, "name").map(str::to_owned),
                subagent,
            },
            ChunkKind::Tool => {
                let Some(name) = str_field(chunk, "toolCallName") else {
                    self.lanes.push((lane, Pending::Orphan { kind }));
                    return Err(ChunkProblem::MissingField {
                        kind,
                        field: "toolCallName",
                    });
                };
                Pending::Tool {
                    tool_call_id: id.to_owned(),
                    name: name.to_owned(),
                    parent_message_id: str_field(chunk, "parentMessageId").map(str::to_owned),
                    subagent,
                }
            }
            ChunkKind::Reasoning => Pending::Reasoning {
                message_id: id.to_owned(),
                subagent,
            },
        };
        out.push(Piece::Synthetic(start_event(&pending, chunk)));
        self.push_content(kind, &pending, chunk, true, out);
        self.lanes.push((lane, pending));
        Ok(())
    }

    /// The CONTENT / ARGS event a chunk carries, if it carries one. `opened` says whether this
    /// chunk opened its stream (a START is already in `out`).
    fn push_content(
        &self,
        kind: ChunkKind,
        pending: &Pending,
        chunk: &Value,
        opened: bool,
        out: &mut Vec<Piece>,
    ) {
        let delta = chunk.get("delta");
        let raw = chunk.get("rawEvent");
        let metadata = chunk.get("metadata");
        let remainder: Vec<(&String, &Value)> = chunk
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| !kind.described().contains(&k.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let carries_content = delta.is_some() || raw.is_some();
        // A continuation with nothing to add still delivers its metadata, raw event or
        // unrecognised fields, on an empty content event.
        let carries_extras = !opened
            && (metadata.is_some()
                || chunk.get("subagentRunId") == Some(&Value::Null)
                || !remainder.is_empty());
        if !carries_content && !carries_extras {
            if opened && !remainder.is_empty() {
                // An opening chunk's unrecognised fields ride on its START.
                if let Some(Piece::Synthetic(Value::Object(start))) = out.last_mut() {
                    let mut merged: Map<String, Value> = remainder
                        .iter()
                        .map(|(k, v)| ((*k).clone(), (*v).clone()))
                        .collect();
                    for (k, v) in std::mem::take(start) {
                        merged.insert(k, v);
                    }
                    *start = merged;
                }
            }
            return;
        }
        let (ty, id_field) = match kind {
            ChunkKind::Text => (EventType::TextMessageContent, "messageId"),
            ChunkKind::Tool => (EventType::ToolCallArgs, "toolCallId"),
            ChunkKind::Reasoning => (EventType::ReasoningMessageContent, "messageId"),
        };
        let mut content: Map<String, Value> = remainder
            .iter()
            .map(|(k, v)| ((*k).clone(), (*v).clone()))
            .collect();
        content.insert("type".into(), ty.as_str().into());
        content.insert(id_field.into(), pending.id().unwrap_or_default().into());
        content.insert(
            "delta".into(),
            delta
                .cloned()
                .unwrap_or_else(|| Value::String(String::new())),
        );
        let owner = str_field(chunk, "subagentRunId")
            .map(str::to_owned)
            .or_else(|| pending_subagent(pending));
        if let Some(owner) = owner {
            content.insert("subagentRunId".into(), owner.into());
        }
        if let Some(metadata) = metadata {
            content.insert("metadata".into(), metadata.clone());
        }
        if let Some(raw) = raw {
            content.insert("rawEvent".into(), raw.clone());
        }
        out.push(Piece::Synthetic(Value::Object(content)));
    }

    /// The ids of streams still being assembled, with their kind (for "open at end" reports).
    pub fn open_streams(&self) -> impl Iterator<Item = (ChunkKind, &str)> {
        self.lanes
            .iter()
            .filter_map(|(_, p)| p.id().map(|id| (p.kind(), id)))
    }
}

fn pending_subagent(pending: &Pending) -> Option<String> {
    match pending {
        Pending::Text { subagent, .. }
        | Pending::Tool { subagent, .. }
        | Pending::Reasoning { subagent, .. } => subagent.clone(),
        Pending::Orphan { .. } => None,
    }
}

fn check_agreement(kind: ChunkKind, pending: &Pending, chunk: &Value) -> Result<(), ChunkProblem> {
    let conflict = |field: &'static str, established: Option<&str>| -> Result<(), ChunkProblem> {
        match str_field(chunk, field) {
            Some(incoming) if Some(incoming) != established => Err(ChunkProblem::Conflict {
                kind,
                id: pending.id().unwrap_or_default().to_owned(),
                field,
                incoming: incoming.to_owned(),
                established: established.map(str::to_owned),
            }),
            _ => Ok(()),
        }
    };
    match pending {
        Pending::Text { role, name, .. } => {
            if let Some(incoming) = chunk.get("role").filter(|r| *r != role) {
                return Err(ChunkProblem::Conflict {
                    kind,
                    id: pending.id().unwrap_or_default().to_owned(),
                    field: "role",
                    incoming: incoming
                        .as_str()
                        .map_or_else(|| incoming.to_string(), str::to_owned),
                    established: Some(
                        role.as_str()
                            .map_or_else(|| role.to_string(), str::to_owned),
                    ),
                });
            }
            conflict("name", name.as_deref())
        }
        Pending::Tool {
            name,
            parent_message_id,
            ..
        } => {
            conflict("toolCallName", Some(name))?;
            conflict("parentMessageId", parent_message_id.as_deref())
        }
        _ => Ok(()),
    }
}

/// The START event that opens a chunk stream; it carries the chunk's metadata.
fn start_event(pending: &Pending, chunk: &Value) -> Value {
    let mut start = Map::new();
    match pending {
        Pending::Text {
            message_id,
            role,
            name,
            subagent,
        } => {
            start.insert("type".into(), EventType::TextMessageStart.as_str().into());
            start.insert("messageId".into(), message_id.clone().into());
            start.insert("role".into(), role.clone());
            if let Some(name) = name {
                start.insert("name".into(), name.clone().into());
            }
            if let Some(subagent) = subagent {
                start.insert("subagentRunId".into(), subagent.clone().into());
            }
        }
        Pending::Tool {
            tool_call_id,
            name,
            parent_message_id,
            subagent,
        } => {
            start.insert("type".into(), EventType::ToolCallStart.as_str().into());
            start.insert("toolCallId".into(), tool_call_id.clone().into());
            start.insert("toolCallName".into(), name.clone().into());
            if let Some(parent) = parent_message_id {
                start.insert("parentMessageId".into(), parent.clone().into());
            }
            if let Some(subagent) = subagent {
                start.insert("subagentRunId".into(), subagent.clone().into());
            }
        }
        Pending::Reasoning {
            message_id,
            subagent,
        } => {
            start.insert(
                "type".into(),
                EventType::ReasoningMessageStart.as_str().into(),
            );
            start.insert("messageId".into(), message_id.clone().into());
            start.insert("role".into(), "reasoning".into());
            if let Some(subagent) = subagent {
                start.insert("subagentRunId".into(), subagent.clone().into());
            }
        }
        Pending::Orphan { .. } => {}
    }
    if let Some(metadata) = chunk.get("metadata") {
        start.insert("metadata".into(), metadata.clone());
    }
    Value::Object(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Expands a whole stream; returns the resulting events as compact JSON, or the problems.
    fn expand_all(events: &[Value]) -> (Vec<String>, Vec<ChunkProblem>) {
        let mut expander = ChunkExpander::new();
        let mut out = Vec::new();
        let mut pieces = Vec::new();
        let mut problems = Vec::new();
        for event in events {
            let ty = EventType::of(event);
            if let Err(p) = expander.expand(ty, event, &mut pieces) {
                problems.push(p);
            }
            for piece in &pieces {
                out.push(match piece {
                    Piece::Original => event.to_string(),
                    Piece::Synthetic(v) => v.to_string(),
                });
            }
        }
        (out, problems)
    }

    #[test]
    fn text_chunks_expand_and_close_on_the_next_event() {
        let (out, problems) = expand_all(&[
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hel"}),
            json!({"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ]);
        assert!(problems.is_empty());
        assert_eq!(
            parsed(&out),
            vec![
                json!({"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}),
                json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}),
                json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}),
                json!({"type":"TEXT_MESSAGE_END","messageId":"m1"}),
                json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
            ]
        );
    }

    fn parsed(out: &[String]) -> Vec<Value> {
        out.iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect()
    }

    #[test]
    fn a_tool_chunk_after_text_chunks_closes_the_message_first() {
        let (out, _) = expand_all(&[
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hi"}),
            json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1","delta":"{}"}),
            json!({"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"ok"}),
        ]);
        let types: Vec<String> = out
            .iter()
            .map(|e| {
                serde_json::from_str::<Value>(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            types,
            vec![
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
                "TOOL_CALL_START",
                "TOOL_CALL_ARGS",
                "TOOL_CALL_END",
                "TOOL_CALL_RESULT"
            ]
        );
    }

    #[test]
    fn missing_ids_are_reported_once_per_stream() {
        let (out, problems) = expand_all(&[
            json!({"type":"TEXT_MESSAGE_CHUNK","delta":"a"}),
            json!({"type":"TEXT_MESSAGE_CHUNK","delta":"b"}),
            json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c1","delta":"{"}),
        ]);
        assert_eq!(
            problems,
            vec![
                ChunkProblem::MissingField {
                    kind: ChunkKind::Text,
                    field: "messageId"
                },
                ChunkProblem::MissingField {
                    kind: ChunkKind::Tool,
                    field: "toolCallName"
                },
            ]
        );
        assert!(out.is_empty());
    }

    #[test]
    fn conflicting_repeats_and_owners() {
        let (_, problems) = expand_all(&[
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"a"}),
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"user","delta":"b"}),
        ]);
        assert!(matches!(
            &problems[0],
            ChunkProblem::Conflict { field: "role", .. }
        ));
        let (_, problems) = expand_all(&[
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","subagentRunId":"s1","delta":"a"}),
            json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","subagentRunId":"s2","delta":"a"}),
            json!({"type":"TEXT_MESSAGE_CHUNK","delta":"?"}),
        ]);
        assert_eq!(
            problems,
            vec![ChunkProblem::Ambiguous {
                kind: ChunkKind::Text,
                lanes: 2
            }]
        );
    }

    #[test]
    fn metadata_and_unknown_fields_ride_along() {
        let (out, _) = expand_all(&[json!({
            "type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"x",
            "metadata":{"k":1},"rawEvent":{"p":1},"extra":true
        })]);
        assert_eq!(
            parsed(&out),
            vec![
                json!({"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning","metadata":{"k":1}}),
                json!({"extra":true,"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"x","metadata":{"k":1},"rawEvent":{"p":1}}),
            ]
        );
    }
}
