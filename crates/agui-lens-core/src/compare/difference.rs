//! Where two JSON values differ: the first difference (for diff and snapshot), or all of them
//! (for inspect's state changes), each as a JSON Pointer and the value on each side.

use serde_json::Value;

use crate::protocol::patch::{js_equal, push_token};

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
                push_token(pointer, key);
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
                    push_token(pointer, key);
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
                push_index(pointer, i);
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

/// Every difference between two values, in document order: changed leaves, and members added
/// or removed, each at the deepest pointer where the sides part. Either side may be absent.
/// Arrays whose elements all carry distinct string ids are compared element by element by id
/// (a removed one named by its old index, the others by their new); other arrays index by
/// index (a shorter side's missing tail is added or removed), so removals from an array's tail
/// come in ascending index order. Pointers start with `base`.
/// At most `max` differences are kept; `total` counts them all.
pub fn all_differences(
    left: Option<&Value>,
    right: Option<&Value>,
    base: &str,
    max: usize,
) -> Differences {
    let mut out = Differences::default();
    let mut pointer = base.to_owned();
    walk_all(left, right, &mut pointer, max, &mut out);
    out
}

/// What [`all_differences`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Differences {
    /// The first `max` differences.
    pub found: Vec<Difference>,
    /// How many there are in all.
    pub total: usize,
}

fn walk_all(
    left: Option<&Value>,
    right: Option<&Value>,
    pointer: &mut String,
    max: usize,
    out: &mut Differences,
) {
    match (left, right) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            for (key, va) in a {
                let len = pointer.len();
                push_token(pointer, key);
                walk_all(Some(va), b.get(key), pointer, max, out);
                pointer.truncate(len);
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    let len = pointer.len();
                    push_token(pointer, key);
                    walk_all(None, Some(vb), pointer, max, out);
                    pointer.truncate(len);
                }
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => match (ids(a), ids(b)) {
            // Elements that carry ids (messages, todos) are matched by id, so one inserted
            // element is one change, not a rewrite of every later one. A removed element is
            // named by its index in the old list, the others by their index in the new.
            (Some(old), Some(new)) => {
                let kept: std::collections::HashSet<&str> = new.iter().copied().collect();
                let was: std::collections::HashMap<&str, usize> =
                    old.iter().enumerate().map(|(i, id)| (*id, i)).collect();
                for (i, id) in old.iter().enumerate() {
                    if !kept.contains(id) {
                        let len = pointer.len();
                        push_index(pointer, i);
                        walk_all(Some(&a[i]), None, pointer, max, out);
                        pointer.truncate(len);
                    }
                }
                for (j, id) in new.iter().enumerate() {
                    let len = pointer.len();
                    push_index(pointer, j);
                    walk_all(was.get(id).map(|&i| &a[i]), Some(&b[j]), pointer, max, out);
                    pointer.truncate(len);
                }
            }
            _ => {
                for i in 0..a.len().max(b.len()) {
                    let len = pointer.len();
                    push_index(pointer, i);
                    walk_all(a.get(i), b.get(i), pointer, max, out);
                    pointer.truncate(len);
                }
            }
        },
        (None, None) => {}
        (Some(a), Some(b)) if js_equal(a, b) => {}
        (left, right) => {
            out.total += 1;
            if out.found.len() < max {
                out.found.push(Difference {
                    pointer: pointer.clone(),
                    left: left.cloned(),
                    right: right.cloned(),
                });
            }
        }
    }
}

/// The `id` of every element, when each is an object with a string `id` and no two share one.
fn ids(items: &[Value]) -> Option<Vec<&str>> {
    let ids: Vec<&str> = items
        .iter()
        .map(|item| item.get("id").and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let unique: std::collections::HashSet<&str> = ids.iter().copied().collect();
    (!ids.is_empty() && unique.len() == ids.len()).then_some(ids)
}

fn push_index(pointer: &mut String, index: usize) {
    use std::fmt::Write;
    let _ = write!(pointer, "/{index}");
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

    /// What was found, as (pointer, old, new).
    fn listed(all: &Differences) -> Vec<(&str, Option<Value>, Option<Value>)> {
        all.found
            .iter()
            .map(|d| (d.pointer.as_str(), d.left.clone(), d.right.clone()))
            .collect()
    }

    /// One message inserted at the front of a list of messages is one change.
    #[test]
    fn elements_with_ids_are_matched_by_id() {
        let old = json!({"messages": [{"id": "a", "text": "1"}, {"id": "b", "text": "2"}]});
        let new = json!({"messages": [{"id": "x", "text": "0"}, {"id": "a", "text": "1"},
                                      {"id": "b", "text": "2!"}]});
        let all = all_differences(Some(&old), Some(&new), "", 10);
        let seen = listed(&all);
        assert_eq!(
            seen,
            [
                ("/messages/0", None, Some(json!({"id": "x", "text": "0"}))),
                ("/messages/2/text", Some(json!("2")), Some(json!("2!"))),
            ]
        );
        // Removed: named by its old index. Without ids (or with a repeated one): by index.
        let all = all_differences(Some(&new), Some(&old), "", 10);
        assert_eq!(all.found[0].pointer, "/messages/0");
        assert_eq!(all.found[0].right, None);
        let all = all_differences(Some(&json!([1, 2])), Some(&json!([0, 1, 2])), "", 10);
        assert_eq!(all.total, 3);
    }

    #[test]
    fn finds_every_difference() {
        let all = all_differences(
            Some(&json!({"a": 1, "b": [1, 2, 3], "c": {"d": true}, "gone": 0})),
            Some(&json!({"a": 2, "b": [1, 5], "c": {"d": true, "e": null}, "new": "x"})),
            "",
            10,
        );
        let seen = listed(&all);
        assert_eq!(
            seen,
            vec![
                ("/a", Some(json!(1)), Some(json!(2))),
                ("/b/1", Some(json!(2)), Some(json!(5))),
                ("/b/2", Some(json!(3)), None),
                ("/c/e", None, Some(json!(null))),
                ("/gone", Some(json!(0)), None),
                ("/new", None, Some(json!("x"))),
            ]
        );
        assert_eq!(all.total, 6);
        // Equal by value, whatever the key order or number spelling.
        let none = all_differences(Some(&json!({"x": 1.0})), Some(&json!({"x": 1})), "", 10);
        assert_eq!(none.total, 0);
        // A type change is one difference where it happens; absent sides; a base pointer.
        let some = all_differences(None, Some(&json!({"k": 1})), "/s", 10);
        assert_eq!(some.found[0].pointer, "/s");
        let capped = all_differences(Some(&json!([1, 2, 3])), Some(&json!([])), "", 1);
        assert_eq!((capped.found.len(), capped.total), (1, 3));
    }
}
