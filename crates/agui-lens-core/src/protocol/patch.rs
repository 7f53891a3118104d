//! JSON Patch (RFC 6902), applied the way the official client applies state and activity
//! deltas (fast-json-patch with validation): atomically — a failing patch leaves the document
//! exactly as it was — and with a size limit, so a patch that keeps copying the root into
//! itself is refused before it exhausts memory.
//!
//! Atomicity comes from an undo log rather than a copy of the document, so applying a small
//! patch to a large state costs the patch, not the state.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use crate::protocol::event::RawPatch;
use crate::text::human_bytes;

/// Why a patch was not applied. `index` is the failing operation's position in the patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    pub index: usize,
    /// The operation's `op`, as written.
    pub op: String,
    /// The operation's `path` (or `from`, when that is what failed).
    pub pointer: String,
    pub kind: PatchErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchErrorKind {
    /// The patch is not an array.
    NotAnArray,
    /// An operation is not an object, or lacks what its `op` needs.
    Malformed(&'static str),
    /// The path (or `from`) names nothing.
    Missing,
    /// An `add` whose parent does not exist.
    NoParent,
    /// A path steps into something that is neither an object nor an array.
    NotAContainer,
    /// An array index that is not a number.
    BadIndex,
    /// An `add` index past the end of the array.
    OutOfBounds { len: usize },
    /// A `test` that did not match.
    TestFailed,
    /// A key the official client refuses to touch (`__proto__`).
    Forbidden,
    /// Applying it would grow the document past the limit.
    TooLarge { size: usize, limit: usize },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PatchErrorKind::*;
        let what = match &self.kind {
            NotAnArray => return f.write_str("the patch is not an array of operations"),
            Malformed(why) => return write!(f, "operation {} is malformed: {why}", self.index),
            Missing => "names nothing".to_string(),
            NoParent => "has no parent to add to".to_string(),
            NotAContainer => "steps into a value that is neither an object nor an array".into(),
            BadIndex => "uses an array index that is not a number".into(),
            OutOfBounds { len } => format!("is past the end of an array of {len}"),
            TestFailed => "holds a different value than the test expects".into(),
            Forbidden => "touches __proto__, which clients refuse to modify".into(),
            TooLarge { size, limit } => {
                return write!(
                    f,
                    "operation {} ({}) would grow the state past the {} limit (to at least {} in memory)",
                    self.index,
                    self.op,
                    human_bytes(*limit as u64),
                    human_bytes(*size as u64)
                );
            }
        };
        let pointer = if self.pointer.is_empty() {
            "the root"
        } else {
            &self.pointer
        };
        write!(
            f,
            "operation {} ({} {pointer}): the path {what}",
            self.index, self.op
        )
    }
}

/// The operations of a patch: a parsed array, or the text of a large one, read one
/// operation at a time (see [`RawPatch`]).
#[derive(Clone, Copy, Debug)]
pub enum Ops<'a> {
    Value(&'a Value),
    Raw(&'a RawPatch),
}

/// Applies a patch to a document in place, all or nothing. `limit` caps the document's
/// estimated size (see [`estimated_size`]); `size` is the document's current estimate and is
/// updated on success.
pub fn apply(
    doc: &mut Value,
    patch: &Value,
    size: &mut usize,
    limit: usize,
) -> Result<(), PatchError> {
    apply_ops(doc, Ops::Value(patch), size, limit)
}

/// [`apply`] for the operations of a patch however they are held.
pub fn apply_ops(
    doc: &mut Value,
    ops: Ops<'_>,
    size: &mut usize,
    limit: usize,
) -> Result<(), PatchError> {
    apply_atomically(doc, ops, size, limit, 1 << 16)
}

/// [`apply_ops`], copying the document first rather than logging what each operation undoes
/// when the patch weighs more than `copy_over` bytes and more than the document.
fn apply_atomically(
    doc: &mut Value,
    ops: Ops<'_>,
    size: &mut usize,
    limit: usize,
    copy_over: usize,
) -> Result<(), PatchError> {
    // All or nothing: an undo log costs what the patch touches, a copy of the document what
    // the document holds. A patch that outweighs its document (a million replaces of a few
    // small values) is made atomic by a copy taken first, not a log as long as the patch.
    let weight = match ops {
        Ops::Value(Value::Array(items)) => items.len().saturating_mul(64),
        Ops::Value(_) => 0,
        Ops::Raw(raw) => raw.text().len(),
    };
    let copy = (weight > copy_over && weight > *size).then(|| doc.clone());
    let mut undo = Vec::new();
    let mut new_size = *size;
    let mut failure = None;
    let mut step =
        |index: usize, op: &Value| match apply_op(doc, op, &mut undo, &mut new_size, limit) {
            Ok(()) => {
                if copy.is_some() {
                    undo.clear();
                }
                true
            }
            Err(kind) => {
                failure = Some(op_error(index, op, kind));
                false
            }
        };
    match ops {
        Ops::Value(Value::Array(items)) => {
            for (index, op) in items.iter().enumerate() {
                if !step(index, op) {
                    break;
                }
            }
        }
        Ops::Value(_) => {
            return Err(PatchError {
                index: 0,
                op: String::new(),
                pointer: String::new(),
                kind: PatchErrorKind::NotAnArray,
            });
        }
        Ops::Raw(raw) => raw.each(|index, op| step(index, &op)),
    }
    if let Some(err) = failure {
        match copy {
            Some(copy) => *doc = copy,
            None => {
                for step in undo.into_iter().rev() {
                    revert(doc, step);
                }
            }
        }
        return Err(err);
    }
    *size = new_size;
    Ok(())
}

/// The error of the operation at `index`, naming it as it was written.
fn op_error(index: usize, op: &Value, kind: PatchErrorKind) -> PatchError {
    let field = |k: &str| {
        op.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let pointer = match (&kind, field("op").as_str()) {
        (PatchErrorKind::Missing, "move" | "copy") => field("from"),
        _ => field("path"),
    };
    PatchError {
        index,
        op: field("op"),
        pointer,
        kind,
    }
}

/// How to undo one step. Each names the container it changed by its pointer, as written in
/// the operation (parsed again only when a step is undone, which is rare).
enum Undo {
    Root(Value),
    /// A key was added: remove it.
    RemoveKey(String, String),
    /// A key's value was replaced: put the old one back.
    SetKey(String, String, Value),
    /// A key was removed: insert it back.
    InsertKey(String, String, Value),
    ArrayRemove(String, usize),
    ArrayInsert(String, usize, Value),
    ArraySet(String, usize, Value),
}

fn resolve_mut<'a>(doc: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    let mut node = doc;
    for key in parse_pointer(pointer).ok()?.keys {
        node = match node {
            Value::Object(map) => map.get_mut(&*key)?,
            Value::Array(items) => items.get_mut(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Undoes one step. Steps are undone in reverse, so every path resolves as it did when the
/// step was recorded.
fn revert(doc: &mut Value, step: Undo) {
    match step {
        Undo::Root(old) => *doc = old,
        Undo::RemoveKey(path, key) => {
            if let Some(Value::Object(map)) = resolve_mut(doc, &path) {
                map.remove(&key);
            }
        }
        Undo::SetKey(path, key, old) => {
            if let Some(Value::Object(map)) = resolve_mut(doc, &path) {
                map.insert(key, old);
            }
        }
        Undo::InsertKey(path, key, old) => {
            if let Some(Value::Object(map)) = resolve_mut(doc, &path) {
                map.insert(key, old);
            }
        }
        Undo::ArrayRemove(path, at) => {
            if let Some(Value::Array(items)) = resolve_mut(doc, &path) {
                items.remove(at);
            }
        }
        Undo::ArrayInsert(path, at, old) => {
            if let Some(Value::Array(items)) = resolve_mut(doc, &path) {
                items.insert(at, old);
            }
        }
        Undo::ArraySet(path, at, old) => {
            if let Some(Value::Array(items)) = resolve_mut(doc, &path) {
                items[at] = old;
            }
        }
    }
}

/// Names every plain JavaScript object inherits: the official client sees them as existing
/// members of any object when it checks that a path exists.
const INHERITED: &[&str] = &[
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

/// A JSON Pointer as read: its text, and its keys (borrowed from the text where no escape
/// changed them).
struct Pointer<'a> {
    text: &'a str,
    keys: Vec<Cow<'a, str>>,
}

impl Pointer<'_> {
    /// The pointer to the container of the last key, as written.
    fn parent(&self) -> String {
        self.text[..self.text.rfind('/').unwrap_or(0)].to_owned()
    }
}

fn parse_pointer(pointer: &str) -> Result<Pointer<'_>, PatchErrorKind> {
    let mut keys = Vec::new();
    if pointer.is_empty() {
        return Ok(Pointer {
            text: pointer,
            keys,
        });
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(PatchErrorKind::Malformed(
            "a path must be empty or start with /",
        ));
    };
    for key in tokens(rest) {
        let after_constructor = keys.last().is_some_and(|prev| prev == "constructor");
        if forbidden(&key, after_constructor) {
            return Err(PatchErrorKind::Forbidden);
        }
        keys.push(key);
    }
    Ok(Pointer {
        text: pointer,
        keys,
    })
}

/// The keys of a pointer, from the text after its first `/`: unescaped (`~1` as `/`, `~0` as
/// `~`), borrowed where no escape changed them.
fn tokens(rest: &str) -> Tokens<'_> {
    Tokens { rest, start: 0 }
}

struct Tokens<'a> {
    rest: &'a str,
    /// Where the next key starts; past the end once the last is read.
    start: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Cow<'a, str>;

    #[inline]
    fn next(&mut self) -> Option<Cow<'a, str>> {
        let (rest, start) = (self.rest, self.start);
        if start > rest.len() {
            return None;
        }
        // Paths are short: a plain scan for the separators beats `split`'s searcher.
        let end = rest.as_bytes()[start..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(rest.len(), |i| start + i);
        let k = &rest[start..end];
        self.start = end + 1;
        Some(if k.as_bytes().contains(&b'~') {
            Cow::Owned(k.replace("~1", "/").replace("~0", "~"))
        } else {
            Cow::Borrowed(k)
        })
    }
}

/// Keys a path may not name, as the official client refuses them: `__proto__`, and
/// `prototype` right after `constructor`.
#[inline]
fn forbidden(key: &str, after_constructor: bool) -> bool {
    key == "__proto__" || (key == "prototype" && after_constructor)
}

/// An array index as the official client reads one: any run of digits (even empty), read as a
/// JavaScript number (rounded to a double) and truncated to a signed 32-bit integer, the way
/// `~~key` does.
fn js_index(key: &str) -> Option<i64> {
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: f64 = if key.is_empty() {
        0.0
    } else {
        key.parse().ok()?
    };
    if !number.is_finite() {
        return Some(0);
    }
    let wrapped = number.trunc().rem_euclid(4_294_967_296.0);
    Some(i64::from(wrapped as u32 as i32))
}

/// Whether `key` names an existing element (a canonical index below the length).
fn array_has(items: &[Value], key: &str) -> Option<usize> {
    array_index(key).filter(|&i| i < items.len())
}

/// Resolves a path to a node (for `from` and `test`).
fn get<'a>(doc: &'a Value, keys: &[Cow<'_, str>]) -> Option<&'a Value> {
    let mut node = doc;
    for key in keys {
        node = match node {
            Value::Object(map) => map.get(&**key)?,
            Value::Array(items) => &items[array_has(items, key)?],
            _ => return None,
        };
    }
    Some(node)
}

/// Resolves a path for `test`, which the official client does not check for existence: array
/// indices are read as `~~key` reads them ("01" is 1), anything else on an array is an error.
fn get_coerced<'a>(
    doc: &'a Value,
    keys: &[Cow<'_, str>],
) -> Result<Option<&'a Value>, PatchErrorKind> {
    let mut node = doc;
    for (n, key) in keys.iter().enumerate() {
        let next = match node {
            Value::Object(map) => map.get(&**key),
            Value::Array(items) if key == "-" => None,
            Value::Array(items) => {
                let i = js_index(key).ok_or(PatchErrorKind::BadIndex)?;
                usize::try_from(i).ok().and_then(|i| items.get(i))
            }
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None if n + 1 == keys.len() => return Ok(None),
            None => return Err(PatchErrorKind::NotAContainer),
        }
    }
    Ok(Some(node))
}

/// An operation on a document that is a number, a boolean or a string, with a one-segment
/// path. The official client writes to it as to an object, which JavaScript silently ignores;
/// only a truthy document has its paths checked for existence first.
fn on_primitive(
    doc: &Value,
    op: &str,
    key: &str,
    value: Option<&Value>,
) -> Result<(), PatchErrorKind> {
    let truthy = match doc {
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        _ => false,
    };
    let member = match doc {
        Value::String(s) if key == "length" => Some(Value::from(s.encode_utf16().count())),
        Value::String(s) => array_index(key)
            .and_then(|i| s.chars().nth(i))
            .map(|c| Value::String(c.to_string())),
        _ => None,
    };
    let exists = member.is_some() || INHERITED.contains(&key);
    match op {
        "add" => Ok(()),
        "replace" | "remove" | "_get" if !truthy || exists => Ok(()),
        "replace" | "remove" | "_get" => Err(PatchErrorKind::Missing),
        "test" => match (member, value) {
            (Some(found), Some(value)) if js_equal(&found, value) => Ok(()),
            _ => Err(PatchErrorKind::TestFailed),
        },
        "move" | "copy" => Err(PatchErrorKind::Missing),
        _ => Err(PatchErrorKind::Malformed(
            "`op` must be add, remove, replace, move, copy or test",
        )),
    }
}

/// A canonical index ("0", "12"; not "01").
fn array_index(key: &str) -> Option<usize> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) || key.len() > 15 {
        return None;
    }
    key.parse().ok()
}

/// Resolves the parent of the last key, failing the way a validated operation fails.
fn parent_mut<'a>(
    doc: &'a mut Value,
    keys: &[Cow<'_, str>],
) -> Result<&'a mut Value, PatchErrorKind> {
    let mut node = doc;
    for key in &keys[..keys.len() - 1] {
        node = match node {
            Value::Object(map) => map.get_mut(&**key).ok_or(PatchErrorKind::NoParent)?,
            Value::Array(items) => {
                let i = array_has(items, key).ok_or(PatchErrorKind::NoParent)?;
                &mut items[i]
            }
            _ => return Err(PatchErrorKind::NotAContainer),
        };
        if !matches!(node, Value::Object(_) | Value::Array(_)) {
            return Err(PatchErrorKind::NotAContainer);
        }
    }
    Ok(node)
}

fn apply_op(
    doc: &mut Value,
    op: &Value,
    undo: &mut Vec<Undo>,
    size: &mut usize,
    limit: usize,
) -> Result<(), PatchErrorKind> {
    let Value::Object(fields) = op else {
        return Err(PatchErrorKind::Malformed("an operation must be an object"));
    };
    let name = fields.get("op").and_then(Value::as_str).unwrap_or_default();
    let Some(Value::String(path)) = fields.get("path") else {
        return Err(PatchErrorKind::Malformed("`path` must be a string"));
    };
    let pointer = parse_pointer(path)?;
    let keys = &pointer.keys;
    let value = fields.get("value");
    let from = match name {
        "move" | "copy" => match fields.get("from") {
            Some(Value::String(from)) => Some(parse_pointer(from)?),
            _ => return Err(PatchErrorKind::Malformed("`from` must be a string")),
        },
        _ => None,
    };
    if value.is_none() && matches!(name, "add" | "replace" | "test") {
        return Err(PatchErrorKind::Malformed("`value` is required"));
    }
    if let ([key], Value::Number(_) | Value::Bool(_) | Value::String(_)) = (keys.as_slice(), &*doc)
    {
        return on_primitive(doc, name, key, value);
    }
    match name {
        "add" => {
            let value = value.unwrap();
            grow(size, estimated_size(value, limit), limit)?;
            add(doc, &pointer, value.clone(), true, undo, size)
        }
        "replace" => {
            let value = value.unwrap();
            grow(size, estimated_size(value, limit), limit)?;
            replace(doc, &pointer, value.clone(), undo, size)
        }
        "remove" => remove(doc, &pointer, undo, size),
        "test" => {
            let found = get_coerced(doc, keys)?;
            if found.is_some_and(|v| js_equal(v, value.unwrap())) {
                Ok(())
            } else {
                Err(PatchErrorKind::TestFailed)
            }
        }
        "move" => {
            let from = from.unwrap();
            if get(doc, &from.keys).is_none() {
                return Err(PatchErrorKind::Missing);
            }
            if from.keys.is_empty() && !keys.is_empty() {
                // Moving the root into itself: the official client adds the document under
                // its own path (a cycle, which a later operation may break); a copy of it
                // holds the same value.
                let headroom = limit.saturating_sub(*size).saturating_add(1);
                grow(size, estimated_size(doc, headroom), limit)?;
                let copy = doc.clone();
                return add(doc, &pointer, copy, false, undo, size);
            }
            if keys.is_empty() {
                let moved = get(doc, &from.keys).cloned().unwrap_or(Value::Null);
                *size = estimated_size(&moved, usize::MAX);
                undo.push(Undo::Root(std::mem::replace(doc, moved)));
                return Ok(());
            }
            // The value moved is copied: the original stays in the undo step of its removal.
            let moved = get(doc, &from.keys).cloned().unwrap_or(Value::Null);
            remove(doc, &from, undo, size)?;
            add(doc, &pointer, moved, false, undo, size)
        }
        "copy" => {
            let from = from.unwrap();
            let Some(source) = get(doc, &from.keys) else {
                return Err(PatchErrorKind::Missing);
            };
            let headroom = limit.saturating_sub(*size).saturating_add(1);
            grow(size, estimated_size(source, headroom), limit)?;
            let copy = source.clone();
            if keys.is_empty() {
                *size = estimated_size(&copy, usize::MAX);
                undo.push(Undo::Root(std::mem::replace(doc, copy)));
                return Ok(());
            }
            add(doc, &pointer, copy, false, undo, size)
        }
        "_get" => get(doc, keys).map(drop).ok_or(PatchErrorKind::Missing),
        _ => Err(PatchErrorKind::Malformed(
            "`op` must be add, remove, replace, move, copy or test",
        )),
    }
}

/// Refuses `extra` more bytes when they would take the document past the limit.
fn grow(size: &usize, extra: usize, limit: usize) -> Result<(), PatchErrorKind> {
    let new = size.saturating_add(extra);
    if new > limit {
        return Err(PatchErrorKind::TooLarge { size: new, limit });
    }
    Ok(())
}

/// Adds a value. `validated` is false for the add inside `move` and `copy`, which the official
/// client does not validate (an index past the end then appends).
fn add(
    doc: &mut Value,
    pointer: &Pointer<'_>,
    value: Value,
    validated: bool,
    undo: &mut Vec<Undo>,
    size: &mut usize,
) -> Result<(), PatchErrorKind> {
    let keys = &pointer.keys;
    let added = estimated_size(&value, usize::MAX);
    let Some(last) = keys.last() else {
        undo.push(Undo::Root(std::mem::replace(doc, value)));
        *size = added;
        return Ok(());
    };
    let parent_keys = pointer.parent();
    match parent_mut(doc, keys)? {
        Value::Object(map) => {
            *size += added;
            match map.insert(last.to_string(), value) {
                Some(old) => {
                    *size = size.saturating_sub(estimated_size(&old, usize::MAX));
                    undo.push(Undo::SetKey(parent_keys, last.to_string(), old));
                }
                None => {
                    *size += entry_cost(last);
                    undo.push(Undo::RemoveKey(parent_keys, last.to_string()));
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            let len = items.len();
            let at = if last == "-" {
                len
            } else {
                let i = js_index(last).ok_or(PatchErrorKind::BadIndex)?;
                if validated && i > len as i64 {
                    return Err(PatchErrorKind::OutOfBounds { len });
                }
                // Array.prototype.splice clamps: negative counts from the end, past the end
                // appends.
                if i < 0 {
                    (len as i64 + i).max(0) as usize
                } else {
                    (i as usize).min(len)
                }
            };
            *size += added;
            items.insert(at, value);
            undo.push(Undo::ArrayRemove(parent_keys, at));
            Ok(())
        }
        _ => Err(PatchErrorKind::NotAContainer),
    }
}

fn replace(
    doc: &mut Value,
    pointer: &Pointer<'_>,
    value: Value,
    undo: &mut Vec<Undo>,
    size: &mut usize,
) -> Result<(), PatchErrorKind> {
    let keys = &pointer.keys;
    let added = estimated_size(&value, usize::MAX);
    let Some(last) = keys.last() else {
        undo.push(Undo::Root(std::mem::replace(doc, value)));
        *size = added;
        return Ok(());
    };
    let parent_keys = pointer.parent();
    let parent = parent_mut(doc, keys).map_err(|_| PatchErrorKind::Missing)?;
    let step = match parent {
        Value::Object(map) => match map.get_mut(&**last) {
            Some(slot) => {
                let old = std::mem::replace(slot, value);
                Undo::SetKey(parent_keys, last.to_string(), old)
            }
            None if INHERITED.contains(&&**last) => {
                // The official client finds an inherited member and assigns an own one.
                map.insert(last.to_string(), value);
                *size += entry_cost(last);
                Undo::RemoveKey(parent_keys, last.to_string())
            }
            None => return Err(PatchErrorKind::Missing),
        },
        Value::Array(items) => {
            let i = array_has(items, last).ok_or(PatchErrorKind::Missing)?;
            let old = std::mem::replace(&mut items[i], value);
            Undo::ArraySet(parent_keys, i, old)
        }
        _ => return Err(PatchErrorKind::Missing),
    };
    let replaced = match &step {
        Undo::SetKey(_, _, old) | Undo::ArraySet(_, _, old) => old,
        _ => &Value::Null,
    };
    *size = (*size + added).saturating_sub(estimated_size(replaced, usize::MAX));
    undo.push(step);
    Ok(())
}

/// Removes a value; its undo step keeps it.
fn remove(
    doc: &mut Value,
    pointer: &Pointer<'_>,
    undo: &mut Vec<Undo>,
    size: &mut usize,
) -> Result<(), PatchErrorKind> {
    let keys = &pointer.keys;
    let Some(last) = keys.last() else {
        undo.push(Undo::Root(std::mem::replace(doc, Value::Null)));
        *size = estimated_size(&Value::Null, usize::MAX);
        return Ok(());
    };
    let parent_keys = pointer.parent();
    let parent = parent_mut(doc, keys).map_err(|_| PatchErrorKind::Missing)?;
    let step = match parent {
        Value::Object(map) => match map.remove(&**last) {
            Some(old) => {
                *size = size.saturating_sub(entry_cost(last));
                Undo::InsertKey(parent_keys, last.to_string(), old)
            }
            // An inherited member "exists" and deleting it does nothing.
            None if INHERITED.contains(&&**last) => return Ok(()),
            None => return Err(PatchErrorKind::Missing),
        },
        Value::Array(items) => {
            let i = array_has(items, last).ok_or(PatchErrorKind::Missing)?;
            Undo::ArrayInsert(parent_keys, i, items.remove(i))
        }
        _ => return Err(PatchErrorKind::Missing),
    };
    if let Undo::InsertKey(_, _, old) | Undo::ArrayInsert(_, _, old) = &step {
        *size = size.saturating_sub(estimated_size(old, usize::MAX));
    }
    undo.push(step);
    Ok(())
}

/// Equality as JavaScript's deep comparison sees it: numbers by value, objects regardless of
/// key order.
pub fn js_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x == y)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| js_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| js_equal(v, w)))
        }
        _ => a == b,
    }
}

/// An estimate of the memory a parsed value takes, in bytes, stopping early once past `cap`,
/// so the state limit is a limit on memory. Calibrated on serde_json's layout: every value is a
/// 32-byte slot; an object is a B-tree whose first node (632 bytes) is paid even for one entry,
/// and whose entries cost about 72 bytes each once it grows (node space, slot included);
/// strings, keys and numbers (kept as text) are heap blocks rounded up to 16 bytes. The sum is
/// additive, so a patch's operations can keep it up to date without a fresh walk.
pub fn estimated_size(value: &Value, cap: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total += SLOT;
        match v {
            Value::String(s) => total += heap(s.len()),
            Value::Number(n) => total += heap(n.as_str().len()),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => {
                total += OBJECT;
                for (k, v) in map {
                    total += entry_cost(k);
                    stack.push(v);
                }
            }
            _ => {}
        }
        if total > cap {
            return total;
        }
    }
    total
}

const SLOT: usize = 32;
/// The part of an object's first B-tree node that its entries do not account for.
const OBJECT: usize = 560;

/// What an object entry costs besides its value: node space and the key.
fn entry_cost(key: &str) -> usize {
    40 + heap(key.len())
}

fn heap(len: usize) -> usize {
    len.next_multiple_of(16)
}

/// The value at a pointer, for excerpts in diagnostics and inspect's views of changes;
/// nothing for a pointer that is malformed or names a forbidden key, as for a patch. Walked
/// key by key, without gathering the keys first.
pub fn get_pointer<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut node = doc;
    let mut after_constructor = false;
    for key in tokens(rest) {
        if forbidden(&key, after_constructor) {
            return None;
        }
        after_constructor = key == "constructor";
        node = match node {
            Value::Object(map) => map.get(&*key)?,
            Value::Array(items) => &items[array_has(items, &key)?],
            _ => return None,
        };
    }
    Some(node)
}

/// The nearest existing ancestor of a pointer and its pointer.
pub fn nearest<'a>(doc: &'a Value, pointer: &str) -> (String, &'a Value) {
    let Ok(Pointer { keys, .. }) = parse_pointer(pointer) else {
        return (String::new(), doc);
    };
    let mut node = doc;
    let mut at = String::new();
    for key in &keys {
        let next = match node {
            Value::Object(map) => map.get(&**key),
            Value::Array(items) => array_has(items, key).map(|i| &items[i]),
            _ => None,
        };
        match next {
            Some(next) => {
                node = next;
                push_token(&mut at, key);
            }
            None => break,
        }
    }
    (at, node)
}

/// Appends `/` and `key` escaped as a JSON Pointer token (`~` as `~0`, `/` as `~1`).
/// Most keys have neither, and are copied as they are.
pub fn push_token(pointer: &mut String, key: &str) {
    pointer.push('/');
    if !key.bytes().any(|b| b == b'~' || b == b'/') {
        pointer.push_str(key);
        return;
    }
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// An empty object, for activity content.
pub fn empty_object() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A token is escaped as RFC 6901 says, and reads back through `get_pointer` to the
    /// member it names.
    #[test]
    fn a_pushed_token_names_its_member() {
        for key in ["a", "", "a/b", "~", "~1", "x~/y", "é/~ü", "0"] {
            let mut pointer = String::new();
            push_token(&mut pointer, key);
            let expected = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
            assert_eq!(pointer, expected, "{key:?}");
            let doc = json!({ key: 7 });
            assert_eq!(get_pointer(&doc, &pointer), Some(&json!(7)), "{key:?}");
        }
    }

    /// Walking a pointer finds what reading all its keys first and then following them finds,
    /// for every pointer of up to three tokens of every shape (escapes, indexes canonical or
    /// not, `-`, empty and forbidden tokens) and for malformed ones.
    #[test]
    fn a_walked_pointer_finds_what_its_keys_find() {
        let doc = json!({
            "a": {"b": [1, {"a": 2}], "": 3, "constructor": {"prototype": 4}},
            "b": [[5], {"0": 6}],
            "": {"": 7},
            "a/b": 8, "~": 9, "~1": 10,
            "constructor": {"prototype": 11, "a": 12},
            "prototype": 13,
            "__proto__": 14,
        });
        let tokens = [
            "a",
            "b",
            "",
            "0",
            "1",
            "01",
            "-",
            "2",
            "a~1b",
            "~0",
            "~",
            "~2",
            "constructor",
            "prototype",
            "__proto__",
            "x/y",
        ];
        let mut pointers = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..3 {
            last = last
                .iter()
                .flat_map(|p| tokens.iter().map(move |t| format!("{p}/{t}")))
                .collect();
            pointers.extend(last.iter().cloned());
        }
        pointers.extend(["a", "a/b", "~0"].map(String::from));
        let mut found = 0;
        for pointer in &pointers {
            let keys = parse_pointer(pointer).ok().map(|p| p.keys);
            let expected = keys.and_then(|keys| get(&doc, &keys));
            found += usize::from(expected.is_some());
            assert_eq!(get_pointer(&doc, pointer), expected, "{pointer}");
        }
        assert!(found >= 20, "only {found} pointers found something");
    }

    /// A patch read as text applies exactly as the same patch read as values, made atomic by
    /// an undo log or by a copy: the same document after, the same error, on every case of
    /// the corpus the applier is held to (fixtures/patch-cases).
    #[test]
    fn a_patch_read_as_text_applies_as_its_values_do() {
        let corpus = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/patch-cases/cases.jsonl"
        );
        let text = std::fs::read_to_string(corpus).unwrap();
        let mut compared = 0;
        for line in text.lines() {
            let case: Value = serde_json::from_str(line).unwrap();
            let patch = &case["patch"];
            let Some(raw) = RawPatch::new(&patch.to_string()) else {
                continue;
            };
            let run = |ops: Ops<'_>, copy_over: usize| {
                let mut doc = case["doc"].clone();
                let mut size = estimated_size(&doc, usize::MAX);
                let result = apply_atomically(&mut doc, ops, &mut size, 1 << 30, copy_over);
                (doc, size, result)
            };
            let values = run(Ops::Value(patch), usize::MAX);
            for copy_over in [usize::MAX, 0] {
                assert_eq!(run(Ops::Raw(&raw), copy_over), values, "{line}");
                assert_eq!(run(Ops::Value(patch), copy_over), values, "{line}");
            }
            compared += 1;
        }
        assert!(compared > 1000, "only {compared} cases");
    }

    fn run(doc: Value, patch: Value) -> Result<Value, PatchErrorKind> {
        let mut doc = doc;
        let mut size = estimated_size(&doc, usize::MAX);
        apply(&mut doc, &patch, &mut size, 1 << 20)
            .map(|_| doc)
            .map_err(|e| e.kind)
    }

    #[test]
    fn rfc_examples() {
        assert_eq!(
            run(
                json!({"foo": "bar"}),
                json!([{"op": "add", "path": "/baz", "value": "qux"}])
            ),
            Ok(json!({"foo": "bar", "baz": "qux"}))
        );
        assert_eq!(
            run(
                json!({"foo": ["bar", "baz"]}),
                json!([{"op": "add", "path": "/foo/1", "value": "qux"}])
            ),
            Ok(json!({"foo": ["bar", "qux", "baz"]}))
        );
        assert_eq!(
            run(
                json!({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}),
                json!([{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}])
            ),
            Ok(json!({"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}))
        );
        assert_eq!(
            run(
                json!({"baz": "qux"}),
                json!([{"op": "test", "path": "/baz", "value": "bar"}])
            ),
            Err(PatchErrorKind::TestFailed)
        );
        assert_eq!(
            run(
                json!({"foo": "bar"}),
                json!([{"op": "add", "path": "/baz/bat", "value": "qux"}])
            ),
            Err(PatchErrorKind::NoParent)
        );
        assert_eq!(
            run(
                json!([1, 2]),
                json!([{"op": "add", "path": "/-", "value": 3}])
            ),
            Ok(json!([1, 2, 3]))
        );
    }

    #[test]
    fn failing_patches_leave_the_document_exactly_as_it_was() {
        let doc = json!({"a": 1, "b": [1, 2, 3], "c": {"d": 4, "e": 5}});
        let patch = json!([
            {"op": "remove", "path": "/c/d"},
            {"op": "add", "path": "/z", "value": 0},
            {"op": "replace", "path": "/a", "value": 9},
            {"op": "remove", "path": "/b/0"},
            {"op": "add", "path": "/b/0", "value": 7},
            {"op": "move", "from": "/c/e", "path": "/b/-"},
            {"op": "copy", "from": "/c", "path": "/c2"},
            {"op": "replace", "path": "", "value": [1]},
            {"op": "test", "path": "/0", "value": 2}
        ]);
        let mut failed = doc.clone();
        let mut size = 0;
        let err = apply(&mut failed, &patch, &mut size, 1 << 20).unwrap_err();
        assert_eq!(err.index, 8);
        assert_eq!(failed, doc);
    }

    /// Undoing finds each container again by the pointer written in the operation: escaped
    /// keys, empty keys and array indices deep in the document come back as they were.
    #[test]
    fn undoing_finds_containers_behind_escaped_and_empty_keys() {
        let doc = json!({"a/b": {"~c": [1, {"d": 2}]}, "": {"": 1}, "x~1y": 0});
        let patch = json!([
            {"op": "replace", "path": "/a~1b/~0c/1/d", "value": 3},
            {"op": "add", "path": "/a~1b/~0c/-", "value": 4},
            {"op": "remove", "path": "/a~1b/~0c/0"},
            {"op": "add", "path": "//x", "value": 1},
            {"op": "replace", "path": "//", "value": 5},
            {"op": "remove", "path": "/x~01y"},
            {"op": "move", "from": "/a~1b/~0c/0", "path": "//y"},
            {"op": "test", "path": "/a~1b", "value": null}
        ]);
        let mut failed = doc.clone();
        let mut size = 0;
        let err = apply(&mut failed, &patch, &mut size, 1 << 20).unwrap_err();
        assert_eq!(err.index, 7);
        assert_eq!(failed, doc);
    }

    #[test]
    fn official_client_quirks() {
        // Leading zeros and an empty key are indices for `add`, not for existence.
        assert_eq!(
            run(
                json!([1, 2]),
                json!([{"op": "add", "path": "/01", "value": 9}])
            ),
            Ok(json!([1, 9, 2]))
        );
        assert_eq!(
            run(
                json!([1, 2]),
                json!([{"op": "replace", "path": "/01", "value": 9}])
            ),
            Err(PatchErrorKind::Missing)
        );
        assert_eq!(
            run(
                json!([1, 2]),
                json!([{"op": "add", "path": "/", "value": 9}])
            ),
            Ok(json!([9, 1, 2]))
        );
        assert_eq!(
            run(
                json!({"a": [1]}),
                json!([{"op": "add", "path": "/a/99999999999", "value": 9}])
            ),
            Err(PatchErrorKind::OutOfBounds { len: 1 })
        );
        assert_eq!(
            run(
                json!({}),
                json!([{"op": "add", "path": "/__proto__/x", "value": 1}])
            ),
            Err(PatchErrorKind::Forbidden)
        );
        assert_eq!(
            run(json!({"a": 1}), json!([{"op": "remove", "path": ""}])),
            Ok(Value::Null)
        );
        assert_eq!(
            run(
                json!({"n": 1.0}),
                json!([{"op": "test", "path": "/n", "value": 1}])
            ),
            Ok(json!({"n": 1.0}))
        );
        // move's inner add is not validated: past the end appends.
        assert_eq!(
            run(
                json!({"a": 1, "b": []}),
                json!([{"op": "move", "from": "/a", "path": "/b/5"}])
            ),
            Ok(json!({"b": [1]}))
        );
    }

    #[test]
    fn copying_the_root_into_itself_hits_the_limit() {
        let patch: Vec<Value> = (0..40)
            .map(|i| json!({"op": "copy", "from": "", "path": format!("/c{i}")}))
            .collect();
        let mut doc = json!({"seed": "x"});
        let mut size = estimated_size(&doc, usize::MAX);
        let err = apply(&mut doc, &Value::Array(patch), &mut size, 64 << 20).unwrap_err();
        assert!(
            matches!(err.kind, PatchErrorKind::TooLarge { .. }),
            "{err:?}"
        );
        assert_eq!(doc, json!({"seed": "x"}));

        // Moving the root into itself copies it too.
        let patch: Vec<Value> = (0..40)
            .map(|i| json!({"op": "move", "from": "", "path": format!("/m{i}")}))
            .collect();
        let err = apply(&mut doc, &Value::Array(patch), &mut size, 64 << 20).unwrap_err();
        assert!(
            matches!(err.kind, PatchErrorKind::TooLarge { .. }),
            "{err:?}"
        );
        assert_eq!(doc, json!({"seed": "x"}));
    }

    #[test]
    fn size_tracking_matches_a_fresh_estimate() {
        let mut doc = json!({"a": [1, 2], "b": {"c": "hello"}});
        let mut size = estimated_size(&doc, usize::MAX);
        let patch = json!([
            {"op": "add", "path": "/a/-", "value": {"x": "yyyy"}},
            {"op": "remove", "path": "/b/c"},
            {"op": "replace", "path": "/a/0", "value": "a longer string"},
            {"op": "copy", "from": "/a", "path": "/d"},
            {"op": "move", "from": "/d", "path": "/e"},
            {"op": "add", "path": "/new key", "value": {"k": [true, null, 1.5]}},
            {"op": "add", "path": "/new key", "value": "replaced by add"},
            {"op": "remove", "path": "/a/1"},
            {"op": "move", "from": "", "path": "/self"},
            {"op": "copy", "from": "/b", "path": ""},
            {"op": "add", "path": "/x", "value": [1, 2]},
            {"op": "move", "from": "/x", "path": ""}
        ]);
        apply(&mut doc, &patch, &mut size, 1 << 20).unwrap();
        assert_eq!(size, estimated_size(&doc, usize::MAX));
    }
}
