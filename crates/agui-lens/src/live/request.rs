//! What is sent to a live agent: the RunAgentInput (a file as is, or one user message with
//! fresh ids) and headers whose `${VAR}` references are expanded from the environment, so
//! tokens stay out of shell history and suite files.

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

/// A RunAgentInput ready to send, with the ids RUN_STARTED should echo.
#[derive(Clone, Debug)]
pub struct AgentInput {
    /// Sent byte for byte.
    pub body: Payload,
    pub thread_id: Option<String>,
    pub run_id: Option<String>,
    /// The body as JSON: the state the client holds before the stream (the baseline for
    /// STATE_DELTA), the tools it declared and the history it sent.
    pub value: Arc<Value>,
}

/// Why a request could not be prepared. Usage errors: nothing was sent.
#[derive(Debug, PartialEq, Eq)]
pub enum RequestError {
    /// The input is not a JSON object.
    NotAnObject(String),
    /// The input's file cannot be read (why, as the system says it).
    Unreadable(String),
    /// `${NAME}` names a variable that is not set.
    MissingVariable { header: String, variable: String },
    /// `${` without a closing `}`, or an empty or ill-formed name.
    BadReference { header: String },
    /// Not `Name: value`.
    BadHeader(String),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NotAnObject(why) => write!(f, "the input is not a RunAgentInput: {why}"),
            RequestError::Unreadable(why) => f.write_str(why),
            RequestError::MissingVariable { header, variable } => write!(
                f,
                "header `{header}` uses ${{{variable}}}, but the environment variable {variable} is not set"
            ),
            RequestError::BadReference { header } => write!(
                f,
                "header `{header}` has a `${{` without a variable name and a closing `}}` (write $${{ for a literal ${{)"
            ),
            RequestError::BadHeader(text) => {
                // Up to the first space or colon: never a value.
                let name = text
                    .trim_start()
                    .split([':', ' ', '\t'])
                    .next()
                    .unwrap_or_default();
                write!(f, "header `{name}…` is not `Name: value`")
            }
        }
    }
}

impl std::error::Error for RequestError {}

/// The bytes of a request body: held, or read from their file as they are sent (a large
/// input is then never held as bytes beside its parsed form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    Bytes(Arc<[u8]>),
    File(std::path::PathBuf),
}

impl Payload {
    /// The bytes, read from the file if that is where they are.
    pub fn bytes(&self) -> std::io::Result<std::borrow::Cow<'_, [u8]>> {
        match self {
            Payload::Bytes(bytes) => Ok(std::borrow::Cow::Borrowed(bytes)),
            Payload::File(path) => {
                agui_lens_core::read::read_whole(path).map(std::borrow::Cow::Owned)
            }
        }
    }
}

impl AgentInput {
    /// An input as given: it must be a JSON object; it is sent unchanged.
    pub fn from_bytes(body: Vec<u8>) -> Result<AgentInput, RequestError> {
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| RequestError::NotAnObject(format!("not JSON ({e})")))?;
        Self::with(value, Payload::Bytes(body.into()))
    }

    /// An input in a file, sent from the file byte for byte as it is read: once parsed, only
    /// its parsed form is held (the bytes are read whole to parse them, which is many times
    /// faster than parsing from a reader, and dropped).
    pub fn from_file(path: &std::path::Path) -> Result<AgentInput, RequestError> {
        let bytes = agui_lens_core::read::read_whole(path).map_err(|e| {
            RequestError::Unreadable(agui_lens_core::read::plainly(path, e).to_string())
        })?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| RequestError::NotAnObject(format!("not JSON ({e})")))?;
        drop(bytes);
        Self::with(value, Payload::File(path.to_path_buf()))
    }

    /// An input built here (a later turn of a conversation, an input given fresh ids): sent
    /// as its JSON.
    pub fn from_value(value: Value) -> Result<AgentInput, RequestError> {
        let body = serde_json::to_vec(&value)
            .map_err(|e| RequestError::NotAnObject(format!("not JSON ({e})")))?;
        Self::with(value, Payload::Bytes(body.into()))
    }

    /// The same input for another thread and run: what a client starting a conversation
    /// afresh sends. Only the ids the input has as strings are replaced: one it leaves out,
    /// or gives as null or a number, stays as it is (the case asks how the agent answers it).
    pub fn with_ids(&self, thread_id: &str, run_id: &str) -> Result<AgentInput, RequestError> {
        let mut value = (*self.value).clone();
        if let Value::Object(map) = &mut value {
            for (key, id) in [("threadId", thread_id), ("runId", run_id)] {
                if let Some(held @ Value::String(_)) = map.get_mut(key) {
                    *held = Value::String(id.to_owned());
                }
            }
        }
        Self::from_value(value)
    }

    fn with(value: Value, body: Payload) -> Result<AgentInput, RequestError> {
        let Value::Object(map) = &value else {
            return Err(RequestError::NotAnObject("not a JSON object".into()));
        };
        let id = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(AgentInput {
            thread_id: id("threadId"),
            run_id: id("runId"),
            body,
            value: Arc::new(value),
        })
    }

    /// The smallest input the schema and common servers accept: one user message, fresh
    /// threadId, runId and message id, empty tools, context and state, and the declaration
    /// of the newest protocol version agui-lens reads (a client says which it speaks; the
    /// request rules that `serve` and `proxy` apply ask it of every client, this one too).
    pub fn from_message(text: &str) -> AgentInput {
        let thread_id = format!("thread-{}", fresh_id());
        let run_id = format!("run-{}", fresh_id());
        let value = json!({
            "threadId": thread_id,
            "runId": run_id,
            "protocolVersion": agui_lens_core::protocol::version::Version::NEWEST.name(),
            "messages": [{"id": format!("msg-{}", fresh_id()), "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        });
        AgentInput {
            body: Payload::Bytes(serde_json::to_vec(&value).unwrap_or_default().into()),
            thread_id: Some(thread_id),
            run_id: Some(run_id),
            value: Arc::new(value),
        }
    }
}

/// A random UUID (version 4) from the operating system's generator, or, where there is none,
/// from the standard library's per-process random hash keys.
pub fn fresh_id() -> String {
    let mut bytes = [0u8; 16];
    if !read_urandom(&mut bytes) {
        use std::hash::{BuildHasher, Hasher};
        for half in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default(),
            );
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn read_urandom(bytes: &mut [u8]) -> bool {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(bytes))
        .is_ok()
}

/// Splits `Name: value` (as curl's `-H` takes it) and expands the value.
pub fn parse_header(
    text: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(String, String), RequestError> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| RequestError::BadHeader(text.to_owned()))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(RequestError::BadHeader(text.to_owned()));
    }
    let value = expand(name, value.trim(), env)?;
    Ok((name.to_owned(), value))
}

/// Replaces each `${NAME}` with the variable's value; `$${` is a literal `${`.
pub fn expand(
    header: &str,
    value: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, RequestError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let bad = || RequestError::BadReference {
                header: header.to_owned(),
            };
            let end = tail.find('}').ok_or_else(bad)?;
            let variable = &tail[..end];
            let well_formed = !variable.is_empty()
                && variable
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !well_formed {
                return Err(bad());
            }
            let found = env(variable).ok_or_else(|| RequestError::MissingVariable {
                header: header.to_owned(),
                variable: variable.to_owned(),
            })?;
            out.push_str(&found);
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads the process environment (for [`parse_header`] and [`expand`]).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_lens_core::check::schema::SchemaSet;
    use agui_lens_core::protocol::event::EventType;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn headers_expand_variables() {
        assert_eq!(
            parse_header("Authorization: Bearer ${TOKEN}", env),
            Ok(("Authorization".into(), "Bearer s3cret".into()))
        );
        assert_eq!(
            parse_header("X-Price: $5 and $${literal}", env),
            Ok(("X-Price".into(), "$5 and ${literal}".into()))
        );
        let missing = parse_header("Authorization: Bearer ${NOPE}", env).unwrap_err();
        assert_eq!(
            missing,
            RequestError::MissingVariable {
                header: "Authorization".into(),
                variable: "NOPE".into()
            }
        );
        assert!(parse_header("X: ${UNCLOSED", env).is_err());
        assert!(parse_header("X: ${A B}", env).is_err());
        assert!(parse_header("no colon", env).is_err());
        assert!(parse_header(": empty name", env).is_err());
    }

    #[test]
    fn errors_never_show_header_values() {
        let err = parse_header("Authorization Bearer abc", env).unwrap_err();
        assert!(!err.to_string().contains("abc"), "{err}");
    }

    #[test]
    fn message_inputs_are_valid_and_fresh() {
        let a = AgentInput::from_message("Hello");
        let b = AgentInput::from_message("Hello");
        assert_ne!(a.run_id, b.run_id);
        assert_ne!(a.thread_id, b.thread_id);
        let input: Value = serde_json::from_slice(&a.body.bytes().unwrap()).unwrap();
        assert_eq!(input["messages"][0]["content"], "Hello");
        let event = json!({
            "type": "RUN_STARTED",
            "threadId": a.thread_id,
            "runId": a.run_id,
            "input": input,
        });
        let schemas = SchemaSet::embedded().unwrap();
        let findings = schemas.validate_event(EventType::RunStarted, &event);
        assert!(findings.is_empty(), "{findings:?}");
    }

    #[test]
    fn file_inputs_are_sent_unchanged() {
        let body = br#"{"threadId":"t","runId":"r","messages":[]}"#.to_vec();
        let input = AgentInput::from_bytes(body.clone()).unwrap();
        assert_eq!(input.body, Payload::Bytes(body.into()));
        assert_eq!(input.thread_id.as_deref(), Some("t"));
        assert!(AgentInput::from_bytes(b"[1]".to_vec()).is_err());
        assert!(AgentInput::from_bytes(b"{".to_vec()).is_err());
    }

    #[test]
    fn new_ids_replace_only_the_ids_an_input_has() {
        let input = AgentInput::from_bytes(br#"{"runId":null,"messages":[]}"#.to_vec()).unwrap();
        let fresh = input.with_ids("t2", "r2").unwrap();
        let sent: Value = serde_json::from_slice(&fresh.body.bytes().unwrap()).unwrap();
        assert_eq!(sent, json!({"runId": null, "messages": []}));
        assert_eq!(fresh.thread_id, None);
    }

    #[test]
    fn new_ids_change_only_the_ids() {
        let body = br#"{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"x"}],"state":{"n":1.50}}"#;
        let input = AgentInput::from_bytes(body.to_vec()).unwrap();
        let fresh = input.with_ids("t2", "r2").unwrap();
        assert_eq!(fresh.thread_id.as_deref(), Some("t2"));
        assert_eq!(fresh.run_id.as_deref(), Some("r2"));
        let sent: Value = serde_json::from_slice(&fresh.body.bytes().unwrap()).unwrap();
        let mut expected: Value = serde_json::from_slice(body).unwrap();
        expected["threadId"] = json!("t2");
        expected["runId"] = json!("r2");
        assert_eq!(sent, expected);
        assert!(
            String::from_utf8_lossy(&fresh.body.bytes().unwrap()).contains("1.50"),
            "numbers are sent as written"
        );
    }

    #[test]
    fn ids_are_uuids() {
        let id = fresh_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
    }
}
