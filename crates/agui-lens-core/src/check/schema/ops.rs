//! The operations of a JSON Patch, checked once per shape. STATE_DELTA is the commonest event
//! a stored history holds after the content deltas, and it patches the same few places of the
//! state again and again: checking every operation of every patch against the schema of an
//! operation took about half of the schema time of a mixed history.
//!
//! An operation's schema says nothing of its `value` (any JSON value, null included), only of
//! the rest: `op`, `path`, `from` and the members it may carry. So whether an operation
//! conforms is decided by the operation with its `value` left out, and that is checked once:
//! a digest of each such shape found to conform is kept on the thread. The event is checked
//! against a variant of its schema that leaves the operations out (`items: true` where the
//! published one says `items: {"$ref": JsonPatchOperation}`), then each operation by shape.
//!
//! The verdict is the same as checking the event whole: an array schema with `items` is the
//! conjunction of its other keywords and of each item against `items`, so long as nothing in
//! it reads what `items` evaluated (`unevaluatedItems`), and an operation conforms with its
//! value exactly when it does with null there, so long as no schema of an operation holds its
//! value to anything. [`derive`] makes sure of both before it builds a variant; the embedded
//! schemas only, never a user's. An event that fails in parts is checked whole again, so what
//! is reported comes from the whole schema, as before.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};

use serde_json::Value;
use xxhash_rust::xxh3::Xxh3;

use crate::protocol::event::EventType;
use crate::protocol::ids;

/// The schema of one operation.
pub(super) const OPERATION: &str = "defs/JsonPatchOperation.json";

/// The schema of a patch, and its variant that leaves the operations out.
const PATCH: &str = "defs/JsonPatch.json";
pub(super) const PATCH_PARTS: &str = "defs/JsonPatch.parts.json";

/// The events that carry a patch: their schema, its variant, and the field of the patch.
const EVENTS: &[(EventType, &str, &str, &str)] = &[
    (
        EventType::StateDelta,
        "events/STATE_DELTA.json",
        "events/STATE_DELTA.parts.json",
        "delta",
    ),
    (
        EventType::ActivityDelta,
        "events/ACTIVITY_DELTA.json",
        "events/ACTIVITY_DELTA.parts.json",
        "patch",
    ),
];

/// Keywords that say something of a value without holding it to anything.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "x-help",
    "$comment",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords that hold an object's members to something by other than their name in
/// `properties`, or that compare the object whole.
const REACHING: &[&str] = &[
    "patternProperties",
    "propertyNames",
    "dependentSchemas",
    "unevaluatedProperties",
    "const",
    "enum",
];

/// Keywords whose subschemas apply to the object itself.
const IN_PLACE: &[&str] = &["allOf", "anyOf", "oneOf", "not", "if", "then", "else"];

/// The variant an event type is checked in parts with, and the field of its patch.
pub(super) fn variant_of(ty: EventType) -> Option<(&'static str, &'static str)> {
    EVENTS
        .iter()
        .find(|(t, ..)| *t == ty)
        .map(|&(_, _, variant, field)| (variant, field))
}

/// Adds to `docs` (strict schema documents, by relative path) the variants of the events that
/// carry a patch, when the schemas have the shape that makes checking in parts give the same
/// verdict; else none, and those events are checked whole.
pub(super) fn derive(docs: &mut BTreeMap<String, Value>, id_of: impl Fn(&str) -> String) {
    if !values_are_free(docs) {
        return;
    }
    let Some(mut patch) = docs.get(PATCH).cloned() else {
        return;
    };
    let Value::Object(map) = &mut patch else {
        return;
    };
    let items = serde_json::json!({ "$ref": "JsonPatchOperation.json" });
    if map.get("items") != Some(&items)
        || map.contains_key("unevaluatedItems")
        || map.contains_key("prefixItems")
        || map.contains_key("contains")
    {
        return;
    }
    map.insert("items".into(), Value::Bool(true));
    map.insert("$id".into(), Value::String(id_of(PATCH_PARTS)));
    let mut variants = vec![(PATCH_PARTS.to_owned(), patch)];
    for &(_, rel, variant, field) in EVENTS {
        let Some(mut doc) = docs.get(rel).cloned() else {
            continue;
        };
        let Some(Value::Object(property)) = doc
            .get_mut("properties")
            .and_then(|properties| properties.get_mut(field))
        else {
            continue;
        };
        if property.get("$ref") != Some(&Value::String("../defs/JsonPatch.json".into())) {
            continue;
        }
        property.insert(
            "$ref".into(),
            Value::String("../defs/JsonPatch.parts.json".into()),
        );
        if let Value::Object(map) = &mut doc {
            map.insert("$id".into(), Value::String(id_of(variant)));
        }
        variants.push((variant.to_owned(), doc));
    }
    docs.extend(variants);
}

/// Whether no schema of an operation holds its `value` to anything: every schema in the
/// documents of operations names `value` in `properties` with annotations only, if at all,
/// and none reaches members another way.
fn values_are_free(docs: &BTreeMap<String, Value>) -> bool {
    let operations: Vec<&Value> = docs
        .iter()
        .filter(|(rel, _)| rel.starts_with("defs/") && rel.ends_with("Operation.json"))
        .map(|(_, doc)| doc)
        .collect();
    !operations.is_empty() && docs.contains_key(OPERATION) && operations.into_iter().all(free)
}

fn free(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    map.iter().all(|(key, sub)| match key.as_str() {
        k if REACHING.contains(&k) => false,
        // A schema for members not in `properties`: one that refuses them all, or takes any.
        "additionalProperties" => sub.is_boolean(),
        // The schemas of the other members apply to those members only.
        "properties" => sub.get("value").is_none_or(annotations_only),
        // Every schema of an operation is checked itself; a reference elsewhere is not.
        "$ref" => sub
            .as_str()
            .is_some_and(|target| target.ends_with("Operation.json")),
        k if IN_PLACE.contains(&k) => match sub {
            Value::Array(subs) => subs.iter().all(free),
            sub => free(sub),
        },
        _ => true,
    })
}

/// Whether a schema takes any value.
fn annotations_only(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(map) => map.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

/// How many digests of conforming shapes a thread keeps before it starts over.
const KEPT: usize = 1 << 16;

thread_local! {
    /// Digests of the shapes of operations found to conform on this thread, each with the
    /// version of the schemas that found it.
    static CONFORMING: RefCell<HashSet<u128, ids::Build>> = RefCell::new(HashSet::default());
}

/// Whether `op` conforms, asking `check` (with the operation's value made null) only for a
/// shape not seen to conform before on this thread under the schemas of `version` (an index of
/// the embedded versions).
pub(super) fn op_conforms(version: usize, op: &Value, check: impl FnOnce(&Value) -> bool) -> bool {
    let Value::Object(members) = op else {
        // Not an object: no shape to remember.
        return check(op);
    };
    let mut hasher = Xxh3::new();
    hasher.update(&(version as u64).to_le_bytes());
    hasher.update(&(members.len() as u64).to_le_bytes());
    for (name, member) in members {
        text(&mut hasher, name);
        if name == "value" {
            hasher.update(b"v");
        } else {
            digest(&mut hasher, member);
        }
    }
    let key = hasher.digest128();
    if CONFORMING.with(|seen| seen.borrow().contains(&key)) {
        return true;
    }
    let shape = match members.get("value") {
        Some(Value::Null) | None => None,
        Some(_) => {
            let mut shape = members.clone();
            shape.insert("value".into(), Value::Null);
            Some(Value::Object(shape))
        }
    };
    if !check(shape.as_ref().unwrap_or(op)) {
        return false;
    }
    CONFORMING.with(|seen| {
        let mut seen = seen.borrow_mut();
        if seen.len() >= KEPT {
            seen.clear();
        }
        seen.insert(key);
    });
    true
}

/// Feeds a value to the hasher so that two values with the same digest are, but for a
/// collision of a 128-bit hash, the same value with their members in the same order: each
/// node says its kind, and each string and container its length.
fn digest(hasher: &mut Xxh3, value: &Value) {
    match value {
        Value::Null => hasher.update(b"n"),
        Value::Bool(true) => hasher.update(b"t"),
        Value::Bool(false) => hasher.update(b"f"),
        Value::Number(number) => {
            hasher.update(b"#");
            text(hasher, number.as_str());
        }
        Value::String(string) => {
            hasher.update(b"\"");
            text(hasher, string);
        }
        Value::Array(items) => {
            hasher.update(b"[");
            hasher.update(&(items.len() as u64).to_le_bytes());
            items.iter().for_each(|item| digest(hasher, item));
        }
        Value::Object(members) => {
            hasher.update(b"{");
            hasher.update(&(members.len() as u64).to_le_bytes());
            for (name, member) in members {
                text(hasher, name);
                digest(hasher, member);
            }
        }
    }
}

fn text(hasher: &mut Xxh3, text: &str) {
    hasher.update(&(text.len() as u64).to_le_bytes());
    hasher.update(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(value: &Value) -> u128 {
        let mut hasher = Xxh3::new();
        digest(&mut hasher, value);
        hasher.digest128()
    }

    #[test]
    fn values_that_differ_digest_apart() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(1),
            json!(1.0),
            json!("1"),
            json!([]),
            json!({}),
            json!([[]]),
            json!([[], []]),
            json!(["a", "b"]),
            json!(["ab"]),
            json!({"a": "b"}),
            json!({"ab": ""}),
            json!({"a": {"b": 1}}),
            json!({"a": {}, "b": 1}),
            json!({"op": "add", "path": "/a"}),
            json!({"op": "add", "path": "/a "}),
        ];
        let keys: HashSet<u128> = values.iter().map(key).collect();
        assert_eq!(keys.len(), values.len());
        assert_eq!(key(&json!({"a": [1, "x"]})), key(&json!({"a": [1, "x"]})));
    }

    #[test]
    fn a_shape_is_checked_until_it_conforms_then_remembered() {
        let op = json!({"op": "replace", "path": "/shape-test", "value": {"deep": [1, 2]}});
        let mut asked = Vec::new();
        assert!(!op_conforms(7, &op, |shape| {
            asked.push(shape.clone());
            false
        }));
        assert!(op_conforms(7, &op, |shape| {
            asked.push(shape.clone());
            true
        }));
        // The same shape with another value is not checked again.
        let other = json!({"op": "replace", "path": "/shape-test", "value": "x"});
        assert!(op_conforms(7, &other, |_| panic!("checked again")));
        // What is checked is the operation with its value made null.
        let shape = json!({"op": "replace", "path": "/shape-test", "value": null});
        assert_eq!(asked, vec![shape.clone(), shape]);
        // Another path, a value left out, or other schemas: another shape.
        for (version, op) in [
            (
                7,
                json!({"op": "replace", "path": "/shape-test2", "value": 1}),
            ),
            (7, json!({"op": "replace", "path": "/shape-test"})),
            (8, op.clone()),
        ] {
            let mut checked = false;
            assert!(!op_conforms(version, &op, |_| {
                checked = true;
                false
            }));
            assert!(checked, "{op}");
        }
    }

    #[test]
    fn a_schema_that_holds_the_value_to_something_is_not_checked_by_shape() {
        let free_op = json!({"type": "object", "properties": {
            "op": {"const": "add"}, "value": {"description": "any"}}});
        assert!(free(&free_op));
        for held in [
            json!({"type": "object", "properties": {"value": {"type": "string"}}}),
            json!({"properties": {"value": false}}),
            json!({"allOf": [{"properties": {"value": {"minLength": 1}}}]}),
            json!({"patternProperties": {"^v": {"type": "string"}}}),
            json!({"additionalProperties": {"type": "string"}}),
            json!({"if": {"properties": {"value": {"const": 1}}}, "then": false}),
            json!({"enum": [{"op": "add", "path": "", "value": 1}]}),
            json!({"$ref": "Elsewhere.json"}),
        ] {
            assert!(!free(&held), "{held}");
        }
    }
}
