//! Where two JSON values differ: the first difference (for diff and snapshot), or all of them
//! (for inspect's state changes), each as a JSON Pointer and the value on each side.

use serde_json::Value;

use crate::protocol::ids::FastBuild;
use crate::protocol::patch::push_token;

/// The first difference between two values, depth first in document order.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub pointer: String,
    pub left: Option<Value>,
    pub right: Option<Value>,
}

/// Numbers compare by their exact value (`1.0` equals `1`, `1e2` equals `100`; two integers past
/// 2^53 that differ differ, though a JavaScript client holds them as one double), objects
/// regardless of key order.
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
        _ if equal(left, right) => None,
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
                let vb = b.get(key);
                if same(va, vb) {
                    continue;
                }
                let len = pointer.len();
                push_token(pointer, key);
                walk_all(Some(va), vb, pointer, max, out);
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
        // Elements that carry ids (messages, todos) are matched by id, so one inserted
        // element is one change, not a rewrite of every later one. A removed element is
        // named by its index in the old list, the others by their index in the new. When
        // the old ids are where they were, that is index by index: no sets are needed.
        (Some(Value::Array(a)), Some(Value::Array(b))) if !ids_kept_in_place(a, b) => {
            match (ids(a), ids(b)) {
                (Some(old), Some(new)) => {
                    let kept: std::collections::HashSet<&str, FastBuild> =
                        new.iter().copied().collect();
                    let was: std::collections::HashMap<&str, usize, FastBuild> =
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
                _ => walk_indexes(a, b, pointer, max, out),
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => walk_indexes(a, b, pointer, max, out),
        (None, None) => {}
        (Some(a), Some(b)) if equal(a, b) => {}
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

/// Two arrays compared index by index (a shorter side's missing tail added or removed).
fn walk_indexes(a: &[Value], b: &[Value], pointer: &mut String, max: usize, out: &mut Differences) {
    for i in 0..a.len().max(b.len()) {
        let (va, vb) = (a.get(i), b.get(i));
        if va.is_some_and(|va| same(va, vb)) {
            continue;
        }
        let len = pointer.len();
        push_index(pointer, i);
        walk_all(va, vb, pointer, max, out);
        pointer.truncate(len);
    }
}

/// Whether `b` equals `a`: [`walk_all`] would find nothing there, so its pointer need not be
/// written. Most members of a state a patch changed are as they were, and comparing them is
/// cheaper than walking them (an unequal pair is compared up to its first difference, then
/// walked).
fn same(a: &Value, b: Option<&Value>) -> bool {
    b.is_some_and(|b| equal(a, b))
}

/// Whether two values are equal: numbers by their exact value, objects regardless of key
/// order.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((exact(x.as_str()), exact(y.as_str())), (Some(x), Some(y)) if x == y)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// A JSON number's exact value: its sign, its significant digits and the power of ten they
/// are scaled by (`-1.50e2` is `(true, "15", 1)`; zero is `(false, "", 0)`, whatever its
/// sign). `None` for an exponent past what an `i64` holds.
fn exact(text: &str) -> Option<(bool, String, i64)> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let leading = digits.len() - digits.trim_start_matches('0').len();
    let digits = &digits[leading..];
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Some((false, String::new(), 0));
    }
    let trailing = (digits.len() - significant.len()) as i64;
    let scale = exponent
        .checked_sub(fraction.len() as i64)?
        .checked_add(trailing)?;
    Some((negative, significant.to_owned(), scale))
}

/// A number written in one form for its exact value, so that numbers [`equal`] holds the same
/// read the same: `100.000`, `1e2` and `100` are `100`; `-0` is `0`; `0.50` is `0.5`; past 21
/// digits, or past five zeros after the point, `1.5e300` (as JavaScript writes numbers). `None` for an exponent past
/// what an `i64` holds.
pub fn canonical_number(text: &str) -> Option<String> {
    let (negative, digits, scale) = exact(text)?;
    if digits.is_empty() {
        return Some("0".to_owned());
    }
    let sign = if negative { "-" } else { "" };
    let len = digits.len() as i64;
    let written = if scale >= 0 && len + scale <= 21 {
        format!("{digits}{}", "0".repeat(scale as usize))
    } else if scale < 0 && -scale < len {
        let point = (len + scale) as usize;
        format!("{}.{}", &digits[..point], &digits[point..])
    } else if scale < 0 && -scale - len < 6 {
        format!("0.{}{digits}", "0".repeat((-scale - len) as usize))
    } else {
        let fraction = if len > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!("{}{fraction}e{}", &digits[..1], scale.checked_add(len - 1)?)
    };
    Some(format!("{sign}{written}"))
}

/// Whether every element of `old` has the same id (or the same lack of one) as the element at
/// its index in `new`. Then matching by id pairs each index with itself and what `new` adds
/// is its tail, as the index-by-index walk has it: ids shared by two elements of either side
/// send both ways there too.
fn ids_kept_in_place(old: &[Value], new: &[Value]) -> bool {
    fn id(item: &Value) -> Option<&str> {
        item.get("id").and_then(Value::as_str)
    }
    new.len() >= old.len() && old.iter().zip(new).all(|(o, n)| id(o) == id(n))
}

/// The `id` of every element, when each is an object with a string `id` and no two share one.
fn ids(items: &[Value]) -> Option<Vec<&str>> {
    let ids: Vec<&str> = items
        .iter()
        .map(|item| item.get("id").and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let unique: std::collections::HashSet<&str, FastBuild> = ids.iter().copied().collect();
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
    fn a_number_has_one_writing() {
        for (text, written) in [
            ("100.000", "100"),
            ("1e2", "100"),
            ("-0.0", "0"),
            ("0.50", "0.5"),
            ("123e-2", "1.23"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("-2.50E-9", "-2.5e-9"),
            ("123456789012345678901", "123456789012345678901"),
            ("1234567890123456789012", "1.234567890123456789012e21"),
        ] {
            assert_eq!(canonical_number(text).as_deref(), Some(written), "{text}");
        }
        assert_eq!(canonical_number("1e99999999999999999999"), None);
    }

    #[test]
    fn numbers_are_equal_by_their_exact_value() {
        let n = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        for (a, b) in [
            ("1", "1.0"),
            ("100", "1e2"),
            ("0.5", "5E-1"),
            ("-0", "0.0"),
            ("12345678901234567890", "1.234567890123456789e19"),
        ] {
            assert!(equal(&n(a), &n(b)), "{a} = {b}");
        }
        for (a, b) in [
            ("12345678901234567890", "12345678901234567891"),
            ("1", "-1"),
            ("0.1", "0.10000000000000001"),
            ("1e400", "1e401"),
        ] {
            assert!(!equal(&n(a), &n(b)), "{a} ≠ {b}");
        }
    }

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

    /// The comparison as first written: ids looked up in hash sets for every pair of arrays,
    /// every member's pointer built before its sides are compared. The shortcuts must find
    /// what it finds, in its order.
    fn walk_as_written(
        left: Option<&Value>,
        right: Option<&Value>,
        pointer: &mut String,
        out: &mut Differences,
    ) {
        let at = |pointer: &mut String, token: Result<&str, usize>, l, r, out: &mut _| {
            let len = pointer.len();
            match token {
                Ok(key) => push_token(pointer, key),
                Err(index) => push_index(pointer, index),
            }
            walk_as_written(l, r, pointer, out);
            pointer.truncate(len);
        };
        match (left, right) {
            (Some(Value::Object(a)), Some(Value::Object(b))) => {
                for (key, va) in a {
                    at(pointer, Ok(key), Some(va), b.get(key), out);
                }
                for (key, vb) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                    at(pointer, Ok(key), None, Some(vb), out);
                }
            }
            (Some(Value::Array(a)), Some(Value::Array(b))) => match (ids(a), ids(b)) {
                (Some(old), Some(new)) => {
                    let kept: std::collections::HashSet<&str, FastBuild> =
                        new.iter().copied().collect();
                    for (i, id) in old.iter().enumerate() {
                        if !kept.contains(id) {
                            at(pointer, Err(i), Some(&a[i]), None, out);
                        }
                    }
                    for (j, id) in new.iter().enumerate() {
                        let was = old.iter().position(|o| o == id).map(|i| &a[i]);
                        at(pointer, Err(j), was, Some(&b[j]), out);
                    }
                }
                _ => {
                    for i in 0..a.len().max(b.len()) {
                        at(pointer, Err(i), a.get(i), b.get(i), out);
                    }
                }
            },
            (None, None) => {}
            (Some(a), Some(b)) if equal(a, b) => {}
            (left, right) => {
                out.total += 1;
                out.found.push(Difference {
                    pointer: pointer.clone(),
                    left: left.cloned(),
                    right: right.cloned(),
                });
            }
        }
    }

    /// A list of small objects, most with an id from a few (so some repeat), some without,
    /// some not objects at all; and the same list after random edits.
    fn lists() -> impl proptest::strategy::Strategy<Value = (Value, Value)> {
        use proptest::prelude::*;
        let item = prop_oneof![
            8 => (0..6u8, 0..3u8, any::<bool>()).prop_map(|(id, n, nested)| {
                let body = if nested { json!({"n": n, "deep": [n, {"m": n}]}) } else { json!(n) };
                json!({"id": format!("i{id}"), "v": body})
            }),
            1 => (0..3u8).prop_map(|n| json!({"v": n})),
            1 => (0..3u8).prop_map(|n| json!(n)),
            1 => Just(json!({"id": 7})),
        ];
        let edit = (0..6u8, 0..8usize, item.clone());
        (
            proptest::collection::vec(item, 0..7),
            proptest::collection::vec(edit, 0..4),
        )
            .prop_map(|(old, edits)| {
                let mut new = old.clone();
                for (kind, at, item) in edits {
                    let at = at % (new.len() + 1);
                    match kind {
                        0 => new.push(item),
                        1 => new.insert(at, item),
                        2 if at < new.len() => {
                            new.remove(at);
                        }
                        3 if at < new.len() => new[at] = item,
                        // The same element, changed: its id stays.
                        4 if at < new.len() => {
                            if let Some(item) = new[at].as_object_mut() {
                                item.insert("v".into(), json!(["changed"]));
                            }
                        }
                        _ => new.truncate(at),
                    }
                }
                (json!({"list": old, "k": 1}), json!({"list": new, "k": 1.0}))
            })
    }

    proptest::proptest! {
        #[test]
        fn the_shortcuts_find_what_the_full_comparison_finds((old, new) in lists()) {
            for (left, right) in [(&old, &new), (&new, &old)] {
                let mut want = Differences::default();
                walk_as_written(Some(left), Some(right), &mut "/s".to_owned(), &mut want);
                let got = all_differences(Some(left), Some(right), "/s", usize::MAX);
                proptest::prop_assert_eq!(&got, &want, "{} -> {}", left, right);
            }
        }
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
