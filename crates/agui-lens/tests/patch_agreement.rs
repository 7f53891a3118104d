//! agui-lens's JSON Patch applier agrees with fast-json-patch 3.1.1 as the official client
//! calls it (`applyPatch(doc, patch, true, false)`) on every case of
//! fixtures/patch-cases/cases.jsonl. The verdicts there come from running fast-json-patch
//! through reference/patch.mjs; reference/make-patch-cases.mjs derives the corpus. No node here.
//!
//! Agreement: the patch is accepted exactly when the reference accepts it; an accepted patch
//! leaves a document equal to the reference's (numbers by value, objects regardless of key
//! order); a rejected patch leaves the document exactly as it was, byte for byte.

use serde_json::Value;

use crate::common::root;

/// The first place two JSON values differ, as JavaScript would see them: numbers compare by
/// value (agui-lens keeps `1.0` as written, JavaScript prints `1`), objects regardless of key
/// order. Returns the JSON pointer of the difference and the two sides (`None` = absent).
pub fn first_difference(a: &Value, b: &Value) -> Option<(String, Option<Value>, Option<Value>)> {
    fn walk(
        a: &Value,
        b: &Value,
        at: &mut String,
    ) -> Option<(String, Option<Value>, Option<Value>)> {
        let differ = |at: &String| Some((at.clone(), Some(a.clone()), Some(b.clone())));
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let same = x.as_str() == y.as_str()
                    || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q);
                if same { None } else { differ(at) }
            }
            (Value::Array(x), Value::Array(y)) => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    if let Some(d) = walk(p, q, at) {
                        return Some(d);
                    }
                    at.truncate(len);
                }
                if x.len() != y.len() {
                    let i = x.len().min(y.len());
                    return Some((format!("{at}/{i}"), x.get(i).cloned(), y.get(i).cloned()));
                }
                None
            }
            (Value::Object(x), Value::Object(y)) => {
                for (k, p) in x {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    match y.get(k) {
                        None => return Some((at.clone(), Some(p.clone()), None)),
                        Some(q) => {
                            if let Some(d) = walk(p, q, at) {
                                return Some(d);
                            }
                        }
                    }
                    at.truncate(len);
                }
                for (k, q) in y {
                    if !x.contains_key(k) {
                        let key = k.replace('~', "~0").replace('/', "~1");
                        return Some((format!("{at}/{key}"), None, Some(q.clone())));
                    }
                }
                None
            }
            _ if a == b => None,
            _ => differ(at),
        }
    }
    walk(a, b, &mut String::new())
}

/// Shows one side of a difference, shortened.
pub fn show(v: &Option<Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 300 {
                format!("{}…", s.chars().take(300).collect::<String>())
            } else {
                s
            }
        }
    }
}

#[test]
fn patch_agrees_with_fast_json_patch() {
    const KNOWN: &str = "fixtures/patch-cases/known-differences.tsv";
    let text = std::fs::read_to_string(root().join("fixtures/patch-cases/cases.jsonl")).unwrap();
    let mut outcomes: Vec<(String, Option<String>)> = Vec::new();
    let mut total = 0;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        total += 1;
        let case: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("cases.jsonl line {}: {e}", n + 1));
        let name = case["name"].as_str().unwrap_or("?");
        let before = case["doc"].clone();
        let expected = &case["expected"];
        let mut doc = before.clone();
        let mut size = agui_lens_core::protocol::patch::estimated_size(&doc, usize::MAX);
        let got =
            agui_lens_core::protocol::patch::apply(&mut doc, &case["patch"], &mut size, 1 << 30);
        let want_ok = expected["ok"].as_bool().unwrap();
        let patch = case["patch"].to_string();
        let doc_text = before.to_string();
        let mut difference = None;
        match (&got, want_ok) {
            (Ok(()), true) => {
                if let Some((at, ours, theirs)) = first_difference(&doc, &expected["doc"]) {
                    difference = Some(format!(
                        "line {} {name:?}: documents differ at {at:?}: agui-lens {} vs reference {}\n    doc   {doc_text}\n    patch {patch}",
                        n + 1,
                        show(&ours),
                        show(&theirs)
                    ));
                }
            }
            (Err(e), false) => {
                if doc != before {
                    difference = Some(format!(
                        "line {} {name:?}: rejected ({e}) but the document changed to {}\n    patch {patch}",
                        n + 1,
                        doc
                    ));
                }
            }
            (Ok(()), false) => {
                difference = Some(format!(
                    "line {} {name:?}: agui-lens accepts, reference rejects ({}); agui-lens result {}\n    doc   {doc_text}\n    patch {patch}",
                    n + 1,
                    case["reference_error"].as_str().unwrap_or("?"),
                    show(&Some(doc.clone()))
                ))
            }
            (Err(e), true) => {
                difference = Some(format!(
                    "line {} {name:?}: agui-lens rejects ({e}), reference accepts with {}\n    doc   {doc_text}\n    patch {patch}",
                    n + 1,
                    show(&Some(expected["doc"].clone()))
                ))
            }
        }
        outcomes.push((name.to_owned(), difference));
    }
    assert!(total > 0, "no patch cases");
    let (failures, known) = crate::common::against_known(KNOWN, &outcomes);
    eprintln!("patch-cases: {total} cases, {known} known differences listed in {KNOWN}");
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("{f}");
        }
        panic!(
            "{} of {total} patch cases disagree with fast-json-patch",
            failures.len()
        );
    }
}
