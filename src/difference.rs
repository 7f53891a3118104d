//! Where two JSON values first differ: the JSON Pointer and the value on each side.

use serde_json::Value;

use crate::patch::js_equal;

/// The first difference between two values, depth first in document order.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub pointer: String,
    pub left: Option<Value>,
    pub right: Option<Value>,
}

/// Numbers compare by value (`1.0` equals `1`), objects regardless of key order.
pub fn first_difference(left: &Value, right: &Value) -> Option<Difference> {
    let mut pointer = String::new();
    walk(left, right, &mut pointer)
}

fn walk(left: &Value, right: &Value, pointer: &mut String) -> Option<Difference> {
    match (left, right) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let len = pointer.len();
                push(pointer, key);
                let found = match b.get(key) {
                    Some(vb) => walk(va, vb, pointer),
                    None => Some(Difference {
                        pointer: pointer.clone(),
                        left: Some(va.clone()),
                        right: None,
                    }),
                };
                pointer.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    let len = pointer.len();
                    push(pointer, key);
                    let found = Difference {
                        pointer: pointer.clone(),
                        left: None,
                        right: Some(vb.clone()),
                    };
                    pointer.truncate(len);
                    return Some(found);
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let len = pointer.len();
                push(pointer, &i.to_string());
                let found = match (a.get(i), b.get(i)) {
                    (Some(va), Some(vb)) => walk(va, vb, pointer),
                    (va, vb) => Some(Difference {
                        pointer: pointer.clone(),
                        left: va.cloned(),
                        right: vb.cloned(),
                    }),
                };
                pointer.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        _ if js_equal(left, right) => None,
        _ => Some(Difference {
            pointer: pointer.clone(),
            left: Some(left.clone()),
            right: Some(right.clone()),
        }),
    }
}

fn push(pointer: &mut String, key: &str) {
    pointer.push('/');
    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_first_difference() {
        assert_eq!(
            first_difference(&json!({"a": [1, 2]}), &json!({"a": [1, 2.0]})),
            None
        );
        let d =
            first_difference(&json!({"m": [{"c": "ab"}]}), &json!({"m": [{"c": "ax"}]})).unwrap();
        assert_eq!(d.pointer, "/m/0/c");
        assert_eq!((d.left, d.right), (Some(json!("ab")), Some(json!("ax"))));
        let d = first_difference(&json!([1]), &json!([1, 2])).unwrap();
        assert_eq!(
            (d.pointer.as_str(), d.left, d.right),
            ("/1", None, Some(json!(2)))
        );
        let d = first_difference(&json!({"a/b": 1}), &json!({})).unwrap();
        assert_eq!(d.pointer, "/a~1b");
    }
}
