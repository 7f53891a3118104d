//! Comparing two normalised streams: equal or not, what a person needs first (event counts per
//! type, the first differing event and JSON path), and a unified diff of the two.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::compare::difference::{Difference, first_difference};

/// Where two sequences first part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FirstDifference {
    /// Index of the first item that differs (or is missing on one side).
    pub index: usize,
    pub left_type: Option<String>,
    pub right_type: Option<String>,
    /// JSON Pointer inside the item.
    pub pointer: String,
    pub left: Option<Value>,
    pub right: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub equal: bool,
    pub left_counts: BTreeMap<String, u64>,
    pub right_counts: BTreeMap<String, u64>,
    pub first: Option<FirstDifference>,
    /// Set when only RAW events differ: how many.
    pub raw_only: Option<usize>,
}

/// What kind of item this is, for counts: an event's type, a message's role, or `state`.
pub fn item_kind(item: &Value) -> String {
    if let Some(ty) = item.get("type").and_then(Value::as_str) {
        return ty.to_owned();
    }
    if let Some(role) = item.get("role").and_then(Value::as_str) {
        return format!("{role} message");
    }
    if item.get("state").is_some() {
        return "state".into();
    }
    if item.get("runs").is_some() {
        return "runs".into();
    }
    if item.get("unreadable").is_some() {
        return "unreadable frame".into();
    }
    if item.get("response").is_some() {
        return "failed response".into();
    }
    "other".into()
}

fn counts(items: &[Value]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for item in items {
        *counts.entry(item_kind(item)).or_default() += 1;
    }
    counts
}

/// Compares two normalised sequences item by item (numbers by value, keys in any order).
pub fn compare(left: &[Value], right: &[Value]) -> Comparison {
    let mut first = None;
    for i in 0..left.len().max(right.len()) {
        let difference = match (left.get(i), right.get(i)) {
            // Two events of different types differ first in their type, whatever member
            // comes before it in key order.
            (Some(a), Some(b)) => match (a.get("type"), b.get("type")) {
                (Some(x), Some(y)) if x != y => Some(Difference {
                    pointer: "/type".into(),
                    left: Some(x.clone()),
                    right: Some(y.clone()),
                }),
                _ => first_difference(a, b),
            },
            (a, b) => Some(Difference {
                pointer: String::new(),
                left: a.cloned(),
                right: b.cloned(),
            }),
        };
        if let Some(d) = difference {
            first = Some(FirstDifference {
                index: i,
                left_type: left.get(i).map(item_kind),
                right_type: right.get(i).map(item_kind),
                pointer: d.pointer,
                left: d.left,
                right: d.right,
            });
            break;
        }
    }
    Comparison {
        equal: first.is_none(),
        left_counts: counts(left),
        right_counts: counts(right),
        first,
        raw_only: raw_only(left, right),
    }
}

/// When every item that differs is a RAW event on both sides (provider payloads, which vary
/// from run to run), how many differ; `None` when anything else differs too, or nothing does.
pub fn raw_only(left: &[Value], right: &[Value]) -> Option<usize> {
    let mut differing = 0;
    for i in 0..left.len().max(right.len()) {
        match (left.get(i), right.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) if item_kind(a) == "RAW" && item_kind(b) == "RAW" => {
                differing += 1;
            }
            _ => return None,
        }
    }
    (differing > 0).then_some(differing)
}

/// Each item as indented JSON, one after another, for a line diff.
pub fn render(items: &[Value]) -> String {
    let mut text = String::new();
    for item in items {
        let mut item = item.clone();
        write_numbers_alike(&mut item);
        text.push_str(&serde_json::to_string_pretty(&item).unwrap_or_default());
        text.push('\n');
    }
    text
}

/// Writes every number of `value` in the one form its exact value has, so that the two sides
/// of a diff write alike what the comparison holds equal (`100.000` and `100`).
fn write_numbers_alike(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(canonical) = super::difference::canonical_number(number.as_str())
                .and_then(|text| text.parse::<serde_json::Number>().ok())
            {
                *number = canonical;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(write_numbers_alike),
        Value::Object(members) => members.values_mut().for_each(write_numbers_alike),
        _ => {}
    }
}

/// What a line of a unified diff is, for a front end that colours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffLine {
    /// `--- a` / `+++ b`.
    Header,
    Added,
    Removed,
    /// `@@ -1,3 +1,4 @@`.
    Hunk,
    Context,
}

/// A line of a diff as it is: for output that is not coloured.
pub fn plain(_: DiffLine, line: &str) -> String {
    line.to_owned()
}

/// The time a line diff takes to find the shortest diff before it settles for a true one.
const DIFF_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// A unified diff of two texts, each line as `paint` makes it, cut after `max_lines` lines.
pub fn unified_diff(
    left: &str,
    right: &str,
    labels: (&str, &str),
    paint: &dyn Fn(DiffLine, &str) -> String,
    max_lines: usize,
) -> String {
    // Finding the fewest changed lines takes time quadratic in what differs: two streams that
    // differ throughout (a snapshot against the wrong recording) took minutes. Past the time
    // given, the diff is still a true one, only not the shortest.
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIME)
        .diff_lines(left, right);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(labels.0, labels.1)
        .to_string();
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    let shown = shown_lines(&lines);
    let total = lines.len();
    for (n, (line, shown)) in lines.iter().zip(shown).enumerate() {
        if n == max_lines {
            let _ = writeln!(out, "… {} more lines of diff", total - max_lines);
            break;
        }
        let kind = if line.starts_with("+++") || line.starts_with("---") {
            DiffLine::Header
        } else if line.starts_with('+') {
            DiffLine::Added
        } else if line.starts_with('-') {
            DiffLine::Removed
        } else if line.starts_with("@@") {
            DiffLine::Hunk
        } else {
            DiffLine::Context
        };
        // As a terminal may show it: a bidi override in a changed value would show the
        // added line as the removed one.
        out.push_str(&paint(kind, &crate::report::human::visible(&shown)));
        out.push('\n');
    }
    out
}

/// Each line of a unified diff as shown: cut after [`SHOWN_LINE`] characters, and a removed
/// line and the added line in its place (the k-th of a change's `-` lines and the k-th of its
/// `+` lines) from near where they part, when that is past what would be shown.
fn shown_lines(lines: &[&str]) -> Vec<String> {
    let removed = |line: &str| line.starts_with('-') && !line.starts_with("---");
    let added = |line: &str| line.starts_with('+') && !line.starts_with("+++");
    let mut shown: Vec<String> = lines
        .iter()
        .map(|line| crate::text::abbreviate(line, SHOWN_LINE))
        .collect();
    let mut at = 0;
    while at < lines.len() {
        if !removed(lines[at]) {
            at += 1;
            continue;
        }
        let minus = at;
        while at < lines.len() && removed(lines[at]) {
            at += 1;
        }
        let plus = at;
        while at < lines.len() && added(lines[at]) {
            at += 1;
        }
        for (a, b) in (minus..plus).zip(plus..at) {
            let (old, new) = (&lines[a][1..], &lines[b][1..]);
            if old.len() > SHOWN_LINE || new.len() > SHOWN_LINE {
                let (old, new) = crate::text::abbreviate_pair(old, new, SHOWN_LINE);
                shown[a] = format!("-{old}");
                shown[b] = format!("+{new}");
            }
        }
    }
    shown
}

/// The most characters of one line a diff shows: a line of a 10 MiB value would bury the rest.
const SHOWN_LINE: usize = 2000;

/// The header a person reads first: counts side by side, then where the sides part.
pub fn summary(comparison: &Comparison, labels: (&str, &str)) -> String {
    let mut out = String::new();
    let kinds: std::collections::BTreeSet<&String> = comparison
        .left_counts
        .keys()
        .chain(comparison.right_counts.keys())
        .collect();
    let width = kinds.iter().map(|k| k.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(out, "{:<width$}  {:>8}  {:>8}", "", labels.0, labels.1);
    for kind in kinds {
        let a = comparison.left_counts.get(kind).copied().unwrap_or(0);
        let b = comparison.right_counts.get(kind).copied().unwrap_or(0);
        let mark = if a == b { "" } else { "  ≠" };
        let _ = writeln!(out, "{kind:<width$}  {a:>8}  {b:>8}{mark}");
    }
    match &comparison.first {
        None => {
            let _ = writeln!(out, "\nthe two mean the same");
        }
        Some(first) => {
            let kind = |k: &Option<String>| k.clone().unwrap_or_else(|| "(none)".into());
            let _ = writeln!(
                out,
                "\nfirst difference at item {} ({} / {})",
                first.index,
                kind(&first.left_type),
                kind(&first.right_type)
            );
            let show = |v: &Option<Value>| match v {
                Some(v) => crate::text::abbreviate_value(v, 120),
                None => "(absent)".into(),
            };
            // Two long values that part late are shown from near where they part.
            let (left, right) = match (&first.left, &first.right) {
                (Some(Value::String(a)), Some(Value::String(b))) => {
                    let (a, b) = crate::text::abbreviate_pair(a, b, 120);
                    (format!("\"{a}\""), format!("\"{b}\""))
                }
                _ => (show(&first.left), show(&first.right)),
            };
            let pointer = if first.pointer.is_empty() {
                "/"
            } else {
                &first.pointer
            };
            let _ = writeln!(out, "  at {pointer}");
            let _ = writeln!(out, "  {}: {left}", labels.0);
            let _ = writeln!(out, "  {}: {right}", labels.1);
        }
    }
    if let Some(n) = comparison.raw_only {
        let _ = writeln!(
            out,
            "\nonly RAW events differ ({n} of them): the provider data they pass on changes from \
             run to run; --level fold compares what a client keeps, --redact '/event' leaves \
             their payloads out"
        );
    }
    // As a terminal may show it (a value or a type can hold a bidi override).
    crate::report::human::visible(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_difference_and_counts() {
        let a = vec![json!({"type":"A","x":1}), json!({"type":"B","y":[1,2]})];
        let b = vec![
            json!({"type":"A","x":1.0}),
            json!({"type":"B","y":[1,3]}),
            json!({"type":"C"}),
        ];
        let c = compare(&a, &b);
        assert!(!c.equal);
        let first = c.first.as_ref().unwrap();
        assert_eq!((first.index, first.pointer.as_str()), (1, "/y/1"));
        assert_eq!(c.right_counts["C"], 1);
        assert!(compare(&a, &a).equal);
        let text = unified_diff(&render(&a), &render(&b), ("a", "b"), &plain, 100);
        assert!(text.contains("-    3") || text.contains("+    3"), "{text}");
        // Events of different types part at their type, not at a member before it.
        let a = vec![json!({"type":"REASONING_START","messageId":"m"})];
        let b = vec![json!({"type":"STEP_STARTED","stepName":"plan"})];
        let first = compare(&a, &b).first.unwrap();
        assert_eq!(first.pointer, "/type");
        assert_eq!(first.left, Some(json!("REASONING_START")));
    }

    /// Numbers the comparison holds equal are written alike on both sides of the diff, so
    /// only what differs is marked changed.
    #[test]
    fn equal_numbers_are_no_changed_lines() {
        let n = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let a = vec![n(
            r#"{"type":"A","x":100.000,"y":-0,"z":1e2,"w":0.50,"big":1.5e300,"s":"a"}"#,
        )];
        let b = vec![n(
            r#"{"type":"A","x":100,"y":0,"z":100,"w":5e-1,"big":15e299,"s":"b"}"#,
        )];
        let text = unified_diff(&render(&a), &render(&b), ("a", "b"), &plain, 100);
        let changed: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---") && !l.starts_with("+++"))
            .collect();
        assert_eq!(changed, [r#"-  "s": "a","#, r#"+  "s": "b","#], "{text}");
        assert!(text.contains(r#""x": 100,"#), "{text}");
        assert!(text.contains(r#""w": 0.5,"#), "{text}");
        assert!(text.contains(r#""big": 1.5e+300,"#), "{text}");
    }

    /// A line of the diff is shown up to a length a terminal can take, with how much was left
    /// out: a 10 MiB state value is not printed whole, whatever `max_lines` allows.
    #[test]
    fn a_long_line_is_shown_cut() {
        let long = "x".repeat(10 << 20);
        let a = vec![json!({"type":"STATE_SNAPSHOT","snapshot":{"v":long}})];
        let b = vec![json!({"type":"STATE_SNAPSHOT","snapshot":{"v":"short"}})];
        let text = unified_diff(&render(&a), &render(&b), ("a", "b"), &plain, 100);
        assert!(text.len() < 10_000, "{} bytes", text.len());
        assert!(text.contains("more bytes)"), "{text}");
        assert!(text.contains("+    \"v\": \"short\""), "{text}");
        // Two long lines that part past what is shown are shown from near where they part.
        let a = vec![json!({"type":"X","v": format!("{}X", "a".repeat(3000))})];
        let b = vec![json!({"type":"X","v": format!("{}Y", "a".repeat(3000))})];
        let text = unified_diff(&render(&a), &render(&b), ("a", "b"), &plain, 100);
        let changed: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---") && !l.starts_with("+++"))
            .collect();
        assert_eq!(changed.len(), 2, "{text}");
        assert!(
            changed[0].contains("aX\"") && changed[1].contains("aY\""),
            "{text}"
        );
        assert!(
            changed[0].starts_with("-…(") && changed[0].len() < 1000,
            "{text}"
        );
        let summary = summary(&compare(&a, &b), ("a", "b"));
        assert!(
            summary.contains("aX") && summary.contains("aY"),
            "{summary}"
        );
    }
}
