//! Compaction: any JSONL stream compacts, at both levels, to one that folds to the same
//! messages and state, and compacting that again changes nothing; taking plain deltas on the
//! fast path, as the command does, compacts the same and folds the input the same.
#![no_main]

use std::sync::Arc;

use agui_lens_core::compact::{Compactor, Level};
use agui_lens_core::write::Output;
use agui_lens_core::protocol::event::{Event, EventType, Location};
use agui_lens_core::fold::threads::ByThread;
use agui_lens_core::fold::{Folded, Folder};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

struct Collect(Vec<Value>);

impl Output for Collect {
    fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0
            .push(serde_json::from_slice(bytes).expect("a kept event is JSON"));
        Ok(())
    }
    fn event(&mut self, value: &Value) -> std::io::Result<()> {
        self.0.push(value.clone());
        Ok(())
    }
}

fn event(value: &Value, i: usize) -> Event {
    Event {
        loc: Location {
            path: Arc::from("fuzz"),
            line: i as u64 + 1,
            offset: 0,
            index: i as u64,
        },
        kind: value
            .get("type")
            .and_then(Value::as_str)
            .and_then(EventType::from_name),
        value: value.clone(),
        patch: None,
    }
}

/// What each thread folds to, as the compactor folds them.
fn meanings(threads: &[(Option<String>, Folded)]) -> Value {
    Value::Array(threads.iter().map(|(_, folded)| folded.meaning()).collect())
}

fn fold(events: &[Value]) -> Value {
    let mut threads = ByThread::new(|| Folder::new(1 << 24));
    for (i, value) in events.iter().enumerate() {
        let event = event(value, i);
        threads.thread_of(Some(&event)).1.apply(&event);
    }
    meanings(&threads.finish())
}

fn compact(events: &[Value], level: Level) -> Vec<Value> {
    let mut compactor = Compactor::new(level, 1 << 24);
    let mut out = Collect(Vec::new());
    for (i, value) in events.iter().enumerate() {
        let raw = serde_json::to_vec(value).unwrap();
        compactor.push(&event(value, i), &raw, &mut out).unwrap();
    }
    compactor.finish(&mut out).unwrap();
    out.0
}

/// As the command compacts: lines the delta scanner reads go to `push_delta`. Returns what
/// was written and what the compactor says the input folds to.
fn compact_fast(lines: &[(&[u8], Value)], level: Level) -> (Vec<Value>, Value) {
    let mut compactor = Compactor::new(level, 1 << 24);
    let mut out = Collect(Vec::new());
    for (i, (raw, value)) in lines.iter().enumerate() {
        let taken = agui_lens_core::read::delta::parse(raw).is_some_and(|d| {
            let owner = d.owner.as_ref().map(|o| o.get(raw));
            compactor.push_delta(d.kind, d.id.get(raw), d.delta.get(raw), owner)
        });
        if !taken {
            compactor.push(&event(value, i), raw, &mut out).unwrap();
        }
    }
    let folded = compactor.finish(&mut out).unwrap();
    (out.0, meanings(&folded))
}

fuzz_target!(|input: &[u8]| {
    // One event per line; lines that are not JSON objects are left out, as a reader would
    // report and skip them.
    let events: Vec<Value> = input
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter(Value::is_object)
        .collect();
    let folded = fold(&events);
    for level in [Level::Deltas, Level::Snapshot] {
        let once = compact(&events, level);
        assert_eq!(fold(&once), folded, "{level:?} changed the fold");
        assert_eq!(compact(&once, level), once, "{level:?} is not idempotent");
    }
    // The same lines as read: raw bytes beside their values.
    let lines: Vec<(&[u8], Value)> = input
        .split(|&b| b == b'\n')
        .filter_map(|line| Some((line, serde_json::from_slice::<Value>(line).ok()?)))
        .filter(|(_, value)| value.is_object())
        .collect();
    for level in [Level::Deltas, Level::Snapshot] {
        let (fast, fast_fold) = compact_fast(&lines, level);
        let whole = {
            let mut compactor = Compactor::new(level, 1 << 24);
            let mut out = Collect(Vec::new());
            for (i, (raw, value)) in lines.iter().enumerate() {
                compactor.push(&event(value, i), raw, &mut out).unwrap();
            }
            compactor.finish(&mut out).unwrap();
            out.0
        };
        assert_eq!(fast, whole, "{level:?}: the fast path compacts differently");
        assert_eq!(fast_fold, folded, "{level:?}: the fast path folds differently");
    }
});
