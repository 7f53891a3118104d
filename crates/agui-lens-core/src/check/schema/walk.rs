//! Walking schema documents: the strict variant, `$ref` listing, and following an error's
//! evaluation path back to the schema nodes it went through.

use serde_json::{Map, Value};

use super::{BASE_URL, SchemaSet};

/// Keywords whose value is one subschema.
const ONE_SCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const SCHEMA_MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions"];

/// Rejects unknown fields: every object schema that lists its `properties` (and is not a
/// discriminated union, whose branches are strict themselves, nor marked `"x-open": true`
/// like JSON Patch operations, whose extra members RFC 6902 says to ignore) gets
/// `additionalProperties: false`. `if` and `not` are left alone: strictness there would flip
/// their meaning.
pub fn make_strict(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    let is_union =
        map.contains_key("allOf") || map.contains_key("anyOf") || map.contains_key("oneOf");
    let is_open = map.get("x-open") == Some(&Value::Bool(true));
    if map.contains_key("properties")
        && !map.contains_key("additionalProperties")
        && !is_union
        && !is_open
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for_each_subschema_mut(map, &mut make_strict);
}

fn for_each_subschema_mut(map: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
    for key in ONE_SCHEMA {
        if let Some(sub) = map.get_mut(*key) {
            f(sub);
        }
    }
    for key in SCHEMA_LIST {
        if let Some(Value::Array(subs)) = map.get_mut(*key) {
            subs.iter_mut().for_each(&mut *f);
        }
    }
    for key in SCHEMA_MAP {
        if let Some(Value::Object(subs)) = map.get_mut(*key) {
            subs.values_mut().for_each(&mut *f);
        }
    }
}

/// Calls `f` with every `$ref` in a schema document.
pub fn for_each_ref(schema: &Value, f: &mut dyn FnMut(&str)) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                f(r);
            }
            for (key, value) in map {
                if key != "const" && key != "enum" && key != "examples" && key != "default" {
                    for_each_ref(value, f);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| for_each_ref(item, f)),
        _ => {}
    }
}

/// One step of an evaluation path: the document it is in and the node reached.
pub struct Step<'a> {
    pub segment: String,
    pub node: &'a Value,
}

/// Follows an evaluation path (`/properties/outcome/$ref/type`) from a root document,
/// jumping through `$ref`s. The first step is the root itself (empty segment). Stops early if
/// the path leaves the documents (the steps so far are returned).
pub fn follow<'a>(set: &'a SchemaSet, root: &str, path: &str) -> Vec<Step<'a>> {
    let mut steps = Vec::new();
    let Some(mut node) = set.doc(root) else {
        return steps;
    };
    let mut doc = root.to_owned();
    steps.push(Step {
        segment: String::new(),
        node,
    });
    for segment in path.split('/').skip(1).map(unescape) {
        let next = if segment == "$ref" {
            node.get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| resolve(set, &doc, r))
                .map(|(d, n)| {
                    doc = d;
                    n
                })
        } else {
            match node {
                Value::Object(map) => map.get(&segment),
                Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            }
        };
        let Some(next) = next else {
            break;
        };
        node = next;
        steps.push(Step { segment, node });
    }
    steps
}

/// Resolves a `$ref` written in document `from` to (document, node).
fn resolve<'a>(set: &'a SchemaSet, from: &str, reference: &str) -> Option<(String, &'a Value)> {
    let (file, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let doc = if file.is_empty() {
        from.to_owned()
    } else if let Some(rel) = file.strip_prefix(BASE_URL) {
        rel.to_owned()
    } else {
        join(from, file)
    };
    let mut node = set.doc(&doc)?;
    if !fragment.is_empty() {
        node = node.pointer(fragment)?;
    }
    Some((doc, node))
}

/// Joins a relative reference to the directory of `from`: `events/A.json` + `../defs/B.json`.
pub fn join(from: &str, relative: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in relative.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_variant_leaves_unions_and_conditions_alone() {
        let mut schema = json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {}}}, "open": {"type": "object"}},
            "allOf": [{"if": {"properties": {"k": {"const": 1}}}, "then": {"properties": {"c": {}}}}],
            "$defs": {"d": {"properties": {"e": {}}}, "o": {"x-open": true, "properties": {"g": {}}}},
            "not": {"properties": {"f": {}}}
        });
        make_strict(&mut schema);
        assert_eq!(
            schema.get("additionalProperties"),
            None,
            "a union wrapper stays open"
        );
        assert_eq!(
            schema["properties"]["a"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            schema["properties"]["open"].get("additionalProperties"),
            None
        );
        assert_eq!(schema["allOf"][0]["if"].get("additionalProperties"), None);
        assert_eq!(
            schema["allOf"][0]["then"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(schema["$defs"]["d"]["additionalProperties"], json!(false));
        assert_eq!(
            schema["$defs"]["o"].get("additionalProperties"),
            None,
            "x-open stays open"
        );
        assert_eq!(schema["not"].get("additionalProperties"), None);
    }

    #[test]
    fn joins() {
        assert_eq!(join("events/A.json", "../defs/B.json"), "defs/B.json");
        assert_eq!(join("defs/A.json", "B.json"), "defs/B.json");
        assert_eq!(join("defs/A.json", "./B.json"), "defs/B.json");
    }
}
