//! Where an event's JSON and its message are shaped differently, as the official
//! `@ag-ui/proto` converts them: the fields every event has ride in `baseEvent`; patch
//! operations are an enum; a message's or tool result's `content` is a string, a list of parts
//! (`contentParts`, each part a oneof) or, for an activity, an object (`activityContent`);
//! outcomes are a string with their payload beside it.

use serde_json::{Map, Value, json};

use super::wire;

type Object = Map<String, Value>;

/// The envelope arm and wire JSON body for an event.
pub fn to_wire(event: &Object) -> Result<(String, Object), String> {
    let ty = event
        .get("type")
        .and_then(Value::as_str)
        .ok_or("the event has no string `type`")?;
    let arm = wire::arm_for_type(ty)
        .ok_or_else(|| format!("the 1.0 wire format has no message for {ty} events"))?;
    let mut rest = event.clone();
    let mut base = Object::new();
    base.insert("type".into(), Value::String(ty.to_owned()));
    for key in ["timestamp", "rawEvent"] {
        if let Some(value) = rest.remove(key).filter(|v| !v.is_null()) {
            base.insert(key.into(), value);
        }
    }
    if let Some(metadata) = rest.remove("metadata").filter(Value::is_object) {
        base.insert("metadata".into(), metadata);
    }
    rest.remove("type");
    match ty {
        "MESSAGES_SNAPSHOT" => map_array(&mut rest, "messages", message_to_wire),
        "RUN_STARTED" => {
            if let Some(input) = rest.get("input").and_then(Value::as_object) {
                let input = input_to_wire(input);
                rest.insert("input".into(), Value::Object(input));
            }
        }
        "RUN_FINISHED" => {
            let outcome = rest.remove("outcome");
            rest.insert("pendingToolCallIds".into(), json!([]));
            rest.insert("interrupts".into(), json!([]));
            let kind = outcome_to_wire(
                outcome.as_ref(),
                &mut rest,
                &["pendingToolCallIds", "interrupts"],
            );
            rest.insert("outcome".into(), Value::String(kind));
        }
        "SUBAGENT_FINISHED" => {
            let outcome = rest.remove("outcome");
            rest.insert("interruptIds".into(), json!([]));
            let kind = outcome_to_wire(outcome.as_ref(), &mut rest, &["interruptIds"]);
            rest.insert("outcome".into(), Value::String(kind));
        }
        "STATE_DELTA" => map_array(&mut rest, "delta", op_to_wire),
        "ACTIVITY_DELTA" => map_array(&mut rest, "patch", op_to_wire),
        "TOOL_CALL_RESULT" => {
            if let Some(Value::Array(parts)) = rest.get("content") {
                let parts = parts.iter().filter_map(part_to_wire).collect();
                rest.insert("contentParts".into(), Value::Array(parts));
                rest.remove("content");
            }
        }
        _ => {}
    }
    rest.insert("baseEvent".into(), Value::Object(base));
    Ok((arm, rest))
}

/// The JSON event of type `ty` (the envelope arm that carried it) from its wire JSON body. An
/// `Err` for a message the official decoder refuses as well.
pub fn from_wire(ty: &str, mut body: Object) -> Result<Object, String> {
    let Some(Value::Object(base)) = body.remove("baseEvent") else {
        return Err(format!("the {ty} event has no baseEvent"));
    };
    let declared = base.get("type").and_then(Value::as_str).unwrap_or("");
    if declared != ty {
        return Err(format!(
            "the envelope carries {ty} but its baseEvent declares {}",
            base.get("type").map_or("nothing".into(), Value::to_string)
        ));
    }
    let mut event = Object::new();
    event.insert("type".into(), Value::String(ty.to_owned()));
    for key in ["timestamp", "rawEvent", "metadata"] {
        if let Some(value) = base.get(key) {
            event.insert(key.into(), value.clone());
        }
    }
    match ty {
        "MESSAGES_SNAPSHOT" => {
            if let Some(Value::Array(messages)) = body.get_mut("messages") {
                for message in messages.iter_mut() {
                    if let Value::Object(m) = message {
                        *m = message_from_wire(std::mem::take(m))?;
                    }
                }
            }
        }
        "RUN_STARTED" => {
            if let Some(Value::Object(input)) = body.remove("input") {
                body.insert("input".into(), Value::Object(input_from_wire(input)?));
            }
        }
        "RUN_FINISHED" => outcome_from_wire(&mut body, &["pendingToolCallIds", "interrupts"]),
        "SUBAGENT_FINISHED" => outcome_from_wire(&mut body, &["interruptIds"]),
        "STATE_DELTA" => map_array(&mut body, "delta", op_from_wire),
        "ACTIVITY_DELTA" => map_array(&mut body, "patch", op_from_wire),
        "TOOL_CALL_RESULT" => {
            let parts = body.remove("contentParts");
            let parts = parts.as_ref().and_then(Value::as_array);
            let has_parts = parts.is_some_and(|p| !p.is_empty());
            if body.contains_key("content") && has_parts {
                return Err("the tool result carries both string content and content parts".into());
            }
            if !body.contains_key("content") {
                let parts = parts
                    .into_iter()
                    .flatten()
                    .filter_map(part_from_wire)
                    .collect();
                body.insert("content".into(), Value::Array(parts));
            }
        }
        _ => {}
    }
    if matches!(ty, "RUN_FINISHED" | "RUN_ERROR") && is_empty_array(body.get("usage")) {
        body.remove("usage");
    }
    event.extend(body);
    Ok(event)
}

fn map_array(object: &mut Object, key: &str, f: impl Fn(&Value) -> Value) {
    if let Some(Value::Array(items)) = object.get_mut(key) {
        for item in items.iter_mut() {
            *item = f(item);
        }
    }
}

fn is_empty_array(value: Option<&Value>) -> bool {
    value.and_then(Value::as_array).is_some_and(Vec::is_empty)
}

/// A patch operation's `op` as the enum's name (`add` → `ADD`).
fn op_to_wire(op: &Value) -> Value {
    let mut op = op.clone();
    if let Some(Value::String(name)) = op.get_mut("op") {
        *name = name.to_ascii_uppercase();
    }
    op
}

/// Back: a name in lower case, a number this build has no name for as its decimal spelling
/// (no valid op, so the patch rules report it rather than the transport losing it).
fn op_from_wire(op: &Value) -> Value {
    let mut op = op.clone();
    if let Some(name) = op.get_mut("op") {
        let spelled = match &*name {
            Value::String(s) => s.to_ascii_lowercase(),
            other => other.to_string(),
        };
        *name = Value::String(spelled);
    }
    op
}

/// An outcome object as its wire string, its payload moved to the fields beside it.
fn outcome_to_wire(outcome: Option<&Value>, rest: &mut Object, payload: &[&str]) -> String {
    let Some(outcome) = outcome.and_then(Value::as_object) else {
        return String::new();
    };
    let kind = outcome.get("type").and_then(Value::as_str).unwrap_or("");
    for key in payload {
        // Each known outcome carries only its own payload; an unknown one carries none.
        let carried = matches!(
            (kind, *key),
            ("success", "pendingToolCallIds")
                | ("interrupt", "interrupts")
                | ("suspended", "interruptIds")
        );
        if carried && let Some(value) = outcome.get(*key).filter(|v| v.is_array()) {
            rest.insert((*key).into(), value.clone());
        }
    }
    kind.to_owned()
}

fn outcome_from_wire(body: &mut Object, payload: &[&str]) {
    let kind = match body.remove("outcome") {
        Some(Value::String(kind)) if !kind.is_empty() => Some(kind),
        _ => None,
    };
    let mut carried = Object::new();
    for key in payload {
        if let Some(value) = body.remove(*key).filter(|v| !is_empty_array(Some(v))) {
            carried.insert((*key).into(), value);
        }
    }
    match kind {
        None => body.extend(carried),
        Some(kind) => {
            let mut outcome = Object::new();
            if kind == "interrupt" && !carried.contains_key("interrupts") {
                carried.insert("interrupts".into(), json!([]));
            }
            outcome.insert("type".into(), Value::String(kind));
            outcome.extend(carried);
            body.insert("outcome".into(), Value::Object(outcome));
        }
    }
}

fn object_or_none(value: Option<&Value>) -> Option<Value> {
    value.filter(|v| v.is_object()).cloned()
}

fn set_or_remove(object: &mut Object, key: &str, value: Option<Value>) {
    match value {
        Some(value) => object.insert(key.into(), value),
        None => object.remove(key),
    };
}

/// Roles whose list content rides as `contentParts`, and whose object content rides as
/// `activityContent`.
const PARTS_ROLES: &[&str] = &["user", "tool"];
const KNOWN_ROLES: &[&str] = &[
    "developer",
    "system",
    "assistant",
    "user",
    "tool",
    "activity",
    "reasoning",
];

fn message_to_wire(message: &Value) -> Value {
    let Some(source) = message.as_object() else {
        return json!({"contentParts": []});
    };
    let mut wire = source.clone();
    set_or_remove(
        &mut wire,
        "metadata",
        object_or_none(source.get("metadata")),
    );
    let calls: Vec<Value> = source
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|call| {
            let mut call = call.as_object().cloned().unwrap_or_default();
            let metadata = object_or_none(call.get("metadata"));
            set_or_remove(&mut call, "metadata", metadata);
            Value::Object(call)
        })
        .collect();
    wire.insert("toolCalls".into(), Value::Array(calls));
    let mut parts = Vec::new();
    if let Some(Value::Array(content)) = source.get("content") {
        parts = content.iter().filter_map(part_to_wire).collect();
        wire.remove("content");
    } else if source.get("role").and_then(Value::as_str) == Some("activity") {
        let content = object_or_none(source.get("content")).unwrap_or_else(|| json!({}));
        wire.insert("activityContent".into(), content);
        wire.remove("content");
    }
    wire.insert("contentParts".into(), Value::Array(parts));
    Value::Object(wire)
}

fn message_from_wire(mut wire: Object) -> Result<Object, String> {
    let role = wire
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let known = KNOWN_ROLES.contains(&role.as_str());
    let parts = wire.remove("contentParts");
    let parts: &[Value] = parts
        .as_ref()
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let activity = wire.remove("activityContent");
    let has_content = wire.contains_key("content");
    let uses_parts = if known {
        PARTS_ROLES.contains(&role.as_str())
    } else {
        !parts.is_empty()
    };
    let uses_map = if known {
        role == "activity"
    } else {
        !uses_parts && activity.is_some()
    };
    let carriers =
        usize::from(has_content) + usize::from(!parts.is_empty()) + usize::from(activity.is_some());
    if carriers > 1 && (!known || uses_parts || uses_map) {
        return Err(format!(
            "a {role:?} message carries its content in more than one form"
        ));
    }
    if known && !uses_parts && !parts.is_empty() {
        return Err(format!(
            "a {role} message carries content parts, which its role has none of"
        ));
    }
    if known && !uses_map && activity.is_some() {
        return Err(format!("a {role} message carries activity content"));
    }
    if uses_parts && !has_content {
        let parts = parts.iter().filter_map(part_from_wire).collect();
        wire.insert("content".into(), Value::Array(parts));
    }
    if uses_map && let Some(activity) = activity {
        wire.insert("content".into(), activity);
    }
    if is_empty_array(wire.get("toolCalls")) {
        wire.remove("toolCalls");
    }
    Ok(wire)
}

fn input_to_wire(input: &Object) -> Object {
    let mut wire = Object::new();
    for key in [
        "threadId",
        "runId",
        "protocolVersion",
        "parentRunId",
        "state",
        "forwardedProps",
    ] {
        if let Some(value) = input.get(key) {
            wire.insert(key.into(), value.clone());
        }
    }
    let list = |key: &str| {
        input
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let with_metadata = |item: Value| {
        let mut item = item.as_object().cloned().unwrap_or_default();
        let metadata = object_or_none(item.get("metadata"));
        set_or_remove(&mut item, "metadata", metadata);
        Value::Object(item)
    };
    let messages = list("messages").iter().map(message_to_wire).collect();
    wire.insert("messages".into(), Value::Array(messages));
    wire.insert(
        "tools".into(),
        list("tools").into_iter().map(with_metadata).collect(),
    );
    wire.insert("context".into(), Value::Array(list("context")));
    wire.insert(
        "resume".into(),
        list("resume").into_iter().map(with_metadata).collect(),
    );
    wire
}

fn input_from_wire(mut wire: Object) -> Result<Object, String> {
    if let Some(Value::Array(messages)) = wire.get_mut("messages") {
        for message in messages.iter_mut() {
            if let Value::Object(m) = message {
                *m = message_from_wire(std::mem::take(m))?;
            }
        }
    }
    Ok(wire)
}

/// A content part as the oneof of its kind: `{"type":"text","text":"hi"}` →
/// `{"text":{"text":"hi"}}`. The retired `binary` part rides as a document marked
/// `legacyBinary`, as the official encoder writes it. `None`: a part with no wire form.
fn part_to_wire(part: &Value) -> Option<Value> {
    let part = part.as_object()?;
    let kind = part.get("type")?.as_str()?;
    let pick = |keys: &[&str]| -> Object {
        keys.iter()
            .filter_map(|k| part.get(*k).map(|v| ((*k).to_owned(), v.clone())))
            .collect()
    };
    let body = match kind {
        "text" => pick(&["id", "text", "metadata"]),
        "image" | "audio" | "video" | "document" => {
            let mut body = pick(&["id", "metadata"]);
            if let Some(source) = part.get("source") {
                body.insert("source".into(), source_to_wire(source)?);
            }
            body
        }
        "binary" => {
            let mime = part.get("mimeType").cloned();
            let (arm, value) = if let Some(data) = part.get("data").filter(|v| truthy(v)) {
                ("data", data.clone())
            } else if let Some(url) = part.get("url").filter(|v| truthy(v)) {
                ("url", url.clone())
            } else {
                ("url", part.get("id").filter(|v| truthy(v))?.clone())
            };
            let mut source = Object::new();
            source.insert("value".into(), value);
            if let Some(mime) = mime {
                source.insert("mimeType".into(), mime);
            }
            let mut metadata = Object::new();
            metadata.insert("legacyBinary".into(), Value::Bool(true));
            for key in ["filename", "id"] {
                if let Some(value) = part.get(key) {
                    metadata.insert(key.into(), value.clone());
                }
            }
            let kind_of_source = json!({ arm: source });
            return Some(json!({"document": {"source": kind_of_source, "metadata": metadata}}));
        }
        _ => return None,
    };
    Some(json!({ kind: body }))
}

fn truthy(value: &Value) -> bool {
    !matches!(value, Value::Null | Value::Bool(false)) && value != &json!("")
}

fn source_to_wire(source: &Value) -> Option<Value> {
    let source = source.as_object()?;
    let kind = source.get("type")?.as_str()?;
    let keys: &[&str] = match kind {
        "data" | "url" => &["value", "mimeType"],
        "file" => &["value", "provider", "mimeType"],
        _ => return None,
    };
    let body: Object = keys
        .iter()
        .filter_map(|k| source.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    Some(json!({ kind: body }))
}

fn part_from_wire(part: &Value) -> Option<Value> {
    let (kind, body) = part.as_object()?.iter().next()?;
    let body = body.as_object()?;
    let mut out = Object::new();
    out.insert("type".into(), Value::String(kind.clone()));
    for (key, value) in body {
        if key == "source" {
            out.insert(key.clone(), source_from_wire(value)?);
        } else {
            out.insert(key.clone(), value.clone());
        }
    }
    Some(Value::Object(out))
}

fn source_from_wire(source: &Value) -> Option<Value> {
    let (kind, body) = source.as_object()?.iter().next()?;
    let mut out = body.as_object()?.clone();
    out.insert("type".into(), Value::String(kind.clone()));
    Some(Value::Object(out))
}
