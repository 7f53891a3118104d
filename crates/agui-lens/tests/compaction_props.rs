//! Property tests of compaction, on generated streams that are valid and invalid alike (events
//! out of order, unopened messages, patches that fail, chunks without ids, runs that error):
//! - at both levels the compacted stream folds to the same messages and state;
//! - compacting a compacted stream changes nothing;
//! - how the deltas are split into events never changes the fold.

use std::sync::Arc;

use agui_lens_core::compact::{Compactor, Level};
use agui_lens_core::protocol::event::EventType;
use agui_lens_core::write::Output;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

/// What each thread of a stream folds to, as `agui-lens fold` routes events to threads: the
/// generated streams hold two threads, each folded on its own.
fn fold_values(events: &[Value]) -> Value {
    use agui_lens_core::fold::Folder;
    use agui_lens_core::fold::threads::ByThread;
    let path: Arc<str> = Arc::from("fold-case");
    let mut threads = ByThread::new(|| Folder::new(1 << 30));
    for (i, value) in events.iter().enumerate() {
        let event = crate::common::event_at(&path, i, value.clone());
        threads.thread_of(Some(&event)).1.apply(&event);
    }
    threads_meaning(threads.finish())
}

fn threads_meaning(threads: Vec<(Option<String>, agui_lens_core::fold::Folded)>) -> Value {
    Value::Array(
        threads
            .into_iter()
            .filter(|(_, folded)| !folded.is_empty())
            .map(|(thread, folded)| json!([thread, folded.meaning()]))
            .collect(),
    )
}

/// Collects what compaction writes, as values.
struct Collect(Vec<Value>);

impl Output for Collect {
    fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0
            .push(serde_json::from_slice(bytes).expect("kept events are JSON"));
        Ok(())
    }
    fn event(&mut self, value: &Value) -> std::io::Result<()> {
        self.0.push(value.clone());
        Ok(())
    }
}

fn compact_values(events: &[Value], level: Level) -> Vec<Value> {
    let path: Arc<str> = Arc::from("generated");
    let mut compactor = Compactor::new(level, 1 << 30);
    let mut out = Collect(Vec::new());
    for (i, value) in events.iter().enumerate() {
        let event = crate::common::event_at(&path, i, value.clone());
        let raw = serde_json::to_vec(value).unwrap();
        compactor.push(&event, &raw, &mut out).unwrap();
    }
    compactor.finish(&mut out).unwrap();
    out.0
}

/// [`compact_values`] as the command runs it: plain deltas (a string delta, nothing but the
/// type and id beside it) handed over with `push_delta`, the rest with `push`. Also returns
/// what the compactor says the input folds to, which verification compares against.
fn compact_values_fast(events: &[Value], level: Level) -> (Vec<Value>, Value) {
    let path: Arc<str> = Arc::from("generated");
    let mut compactor = Compactor::new(level, 1 << 30);
    let mut out = Collect(Vec::new());
    for (i, value) in events.iter().enumerate() {
        let event = crate::common::event_at(&path, i, value.clone());
        let plain = event.kind.and_then(|kind| {
            let id_field = match kind {
                EventType::TextMessageContent | EventType::ReasoningMessageContent => "messageId",
                EventType::ToolCallArgs => "toolCallId",
                _ => return None,
            };
            let map = value.as_object()?;
            let id = map.get(id_field)?.as_str()?;
            let delta = map.get("delta")?.as_str()?;
            (map.len() == 3).then_some((kind, id, delta))
        });
        let taken =
            plain.is_some_and(|(kind, id, delta)| compactor.push_delta(kind, id, delta, None));
        if !taken {
            let raw = serde_json::to_vec(value).unwrap();
            compactor.push(&event, &raw, &mut out).unwrap();
        }
    }
    let folded = compactor.finish(&mut out).unwrap();
    (out.0, threads_meaning(folded))
}

/// Compacts at both levels, asserting that the fold is kept and a second pass changes nothing;
/// what each level wrote.
fn compacts_faithfully(events: &[Value]) -> [Vec<Value>; 2] {
    [Level::Deltas, Level::Snapshot].map(|level| {
        let once = compact_values(events, level);
        assert_eq!(fold_values(&once), fold_values(events), "{level:?}");
        assert_eq!(compact_values(&once, level), once, "{level:?}");
        once
    })
}

/// One step of a generated stream, over small pools of ids so that they collide.
fn step() -> impl Strategy<Value = Value> {
    let id = prop_oneof![Just("m1"), Just("m2"), Just("m3")];
    // Reasoning content lands in the message with its id, text message or not.
    let reasoning_id = prop_oneof![Just("zm1"), Just("zm2"), Just("m1")];
    let text = "[a-z \"{}:]{0,6}";
    prop_oneof![
        2 => (0u8..3, prop_oneof![3 => Just("t"), 1 => Just("u")]).prop_map(|(r, t)|
            json!({"type": "RUN_STARTED", "threadId": t, "runId": format!("r{r}")})),
        1 => Just(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r0"})),
        1 => Just(json!({"type": "RUN_ERROR", "message": "boom"})),
        3 => (id.clone(), prop_oneof![Just("assistant"), Just("user")]).prop_map(|(id, role)|
            json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": role})),
        8 => (id.clone(), text).prop_map(|(id, delta)|
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": delta})),
        3 => id.clone().prop_map(|id| json!({"type": "TEXT_MESSAGE_END", "messageId": id})),
        3 => (prop::option::of(id.clone()), text).prop_map(|(id, delta)| {
            let mut chunk = json!({"type": "TEXT_MESSAGE_CHUNK", "delta": delta});
            if let Some(id) = id {
                chunk["messageId"] = id.into();
            }
            chunk
        }),
        2 => (id.clone(), prop::option::of(id.clone())).prop_map(|(call, parent)| {
            let mut start = json!({"type": "TOOL_CALL_START", "toolCallId": format!("c{call}"),
                "toolCallName": "search"});
            if let Some(parent) = parent {
                start["parentMessageId"] = parent.into();
            }
            start
        }),
        4 => (id.clone(), text).prop_map(|(call, delta)|
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": format!("c{call}"), "delta": delta})),
        2 => id.clone().prop_map(|call|
            json!({"type": "TOOL_CALL_END", "toolCallId": format!("c{call}")})),
        1 => (id.clone(), text).prop_map(|(call, content)| json!({"type": "TOOL_CALL_RESULT",
            "messageId": format!("res-{call}"), "toolCallId": format!("c{call}"),
            "content": content})),
        2 => reasoning_id.clone().prop_map(|id| json!({"type": "REASONING_MESSAGE_START",
            "messageId": id, "role": "reasoning"})),
        3 => (reasoning_id.clone(), text).prop_map(|(id, delta)|
            json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": delta})),
        2 => reasoning_id.prop_map(|id| json!({"type": "REASONING_MESSAGE_END",
            "messageId": id})),
        2 => (0u8..3).prop_map(|n| json!({"type": "STATE_SNAPSHOT",
            "snapshot": {"n": n, "items": [], "nested": {"k": "v"}}})),
        4 => patch().prop_map(|ops| json!({"type": "STATE_DELTA", "delta": ops})),
        1 => id.clone().prop_map(|id| json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": id, "role": "assistant", "content": "from a snapshot"},
            {"id": "u1", "role": "user", "content": "hi"}]})),
        1 => (0u8..2, prop::option::of(id.clone())).prop_map(|(n, parent)| {
            let mut snapshot = json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "act",
                "activityType": "PLAN", "content": {"steps": [n]}, "replace": n == 0});
            if let Some(parent) = parent {
                snapshot["parentMessageId"] = format!("c{parent}").into();
            }
            snapshot
        }),
        2 => patch().prop_map(|ops| json!({"type": "ACTIVITY_DELTA", "messageId": "act",
            "activityType": "PLAN", "patch": ops})),
        1 => Just(json!({"type": "STEP_STARTED", "stepName": "plan"})),
        1 => Just(json!({"type": "STEP_FINISHED", "stepName": "plan"})),
        1 => Just(json!({"type": "CUSTOM", "name": "note", "value": {"x": 1}})),
    ]
}

/// A JSON Patch from a small pool of operations, some of which fail on some documents.
fn patch() -> impl Strategy<Value = Vec<Value>> {
    let op = prop_oneof![
        (0u8..9).prop_map(|v| json!({"op": "add", "path": "/items/-", "value": v})),
        (0u8..9).prop_map(|v| json!({"op": "replace", "path": "/n", "value": v})),
        Just(json!({"op": "remove", "path": "/items/0"})),
        Just(json!({"op": "add", "path": "/steps", "value": ["a"]})),
        Just(json!({"op": "add", "path": "/steps/-", "value": "b"})),
        Just(json!({"op": "copy", "from": "/nested", "path": "/copy"})),
        Just(json!({"op": "move", "from": "/copy", "path": "/moved"})),
        Just(json!({"op": "test", "path": "/n", "value": 1})),
        Just(json!({"op": "remove", "path": "/missing"})),
    ];
    prop::collection::vec(op, 1..4)
}

fn stream() -> impl Strategy<Value = Vec<Value>> {
    (any::<bool>(), prop::collection::vec(step(), 0..40)).prop_map(|(start, mut steps)| {
        if start {
            steps.insert(
                0,
                json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r9"}),
            );
        }
        steps
    })
}

fn listing(events: &[Value]) -> String {
    events
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

proptest! {
    #![proptest_config(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn compaction_keeps_the_fold_and_is_idempotent(events in stream()) {
        let folded = fold_values(&events);
        for level in [Level::Deltas, Level::Snapshot] {
            let once = compact_values(&events, level);
            prop_assert_eq!(
                &fold_values(&once),
                &folded,
                "{:?} changed the fold of\n{}\ninto\n{}",
                level,
                listing(&events),
                listing(&once)
            );
            let twice = compact_values(&once, level);
            prop_assert_eq!(
                &twice,
                &once,
                "{:?} is not idempotent on\n{}",
                level,
                listing(&events)
            );
        }
    }

    /// Deltas taken on the fast path (their text handed to the compactor's folder only when
    /// it is next used) compact as whole events do, and the compactor folds the input as the
    /// folder does event by event.
    #[test]
    fn deltas_taken_on_the_fast_path_compact_and_fold_the_same(events in stream()) {
        let folded = fold_values(&events);
        for level in [Level::Deltas, Level::Snapshot] {
            let (fast, fast_fold) = compact_values_fast(&events, level);
            prop_assert_eq!(
                &fast,
                &compact_values(&events, level),
                "{:?} on\n{}",
                level,
                listing(&events)
            );
            prop_assert_eq!(&fast_fold, &folded, "{:?} on\n{}", level, listing(&events));
        }
    }
}

/// The stream with the delta of every event whose `pick` is odd split in two at a character
/// boundary (both halves non-empty), each half in a copy of the event.
fn rechunk(events: &[Value], picks: &[u16]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let pick = picks.get(i).copied().unwrap_or(0);
        let delta = event.get("delta").and_then(Value::as_str);
        match delta {
            Some(delta) if pick % 2 == 1 && delta.chars().count() >= 2 => {
                let cuts: Vec<usize> = delta.char_indices().map(|(at, _)| at).skip(1).collect();
                let at = cuts[usize::from(pick / 2) % cuts.len()];
                for half in [&delta[..at], &delta[at..]] {
                    let mut piece = event.clone();
                    piece["delta"] = half.into();
                    out.push(piece);
                }
            }
            _ => out.push(event.clone()),
        }
    }
    out
}

proptest! {
    #![proptest_config(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn splitting_deltas_never_changes_the_fold(
        events in stream(),
        picks in prop::collection::vec(any::<u16>(), 40),
    ) {
        let split = rechunk(&events, &picks);
        prop_assert_eq!(
            fold_values(&split),
            fold_values(&events),
            "splitting changed the fold of\n{}\ninto\n{}",
            listing(&events),
            listing(&split)
        );
    }
}

/// Found by fuzzing: a content event whose delta is missing or not a string (outside the
/// schema) folds to whatever JavaScript makes of it, so it is kept, not merged.
#[test]
fn content_without_a_string_delta_is_kept_as_it_is() {
    let events = vec![
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 7}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    ];
    let [once, _] = compacts_faithfully(&events);
    assert!(
        once.contains(&events[3]) && once.contains(&events[4]),
        "{once:?}"
    );
}

/// Found by fuzzing: a chunk that adds nothing to the stream it continues (no delta, nothing
/// else) was kept, and once that stream was expanded it read as a second stream opening.
#[test]
fn a_chunk_that_adds_nothing_is_dropped() {
    let chunk = json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "timestamp": 1});
    let events = vec![chunk.clone(), chunk];
    for once in compacts_faithfully(&events) {
        let starts = once.iter().filter(|e| e["type"] == "TEXT_MESSAGE_START");
        assert_eq!(starts.count(), 1, "{once:?}");
        assert!(
            once.iter().all(|e| e["type"] != "TEXT_MESSAGE_CHUNK"),
            "{once:?}"
        );
    }
}

/// Found by fuzzing: a chunk that contradicts its stream (another tool name) is dropped by a
/// client; kept, it read as a new tool call once the chunk before it was expanded.
#[test]
fn a_chunk_a_client_drops_is_left_out() {
    let events = vec![
        json!({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "g"}),
        json!({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": ""}),
    ];
    for once in compacts_faithfully(&events) {
        assert!(
            once.iter().all(|e| e["type"] != "TOOL_CALL_CHUNK"),
            "{once:?}"
        );
    }
}

/// Found by fuzzing: text and reasoning content for one id both land in that message, so
/// neither may be held past the other.
#[test]
fn text_and_reasoning_content_for_one_message_keep_their_order() {
    let events = vec![
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "m", "delta": "b"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "c"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "m"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
    ];
    compacts_faithfully(&events);
}

/// Found by fuzzing: an activity event that names a tool call wrote the call's merged
/// arguments before itself even when it was collapsed, and the collapsed snapshot names
/// nothing, so a second pass wrote them elsewhere.
#[test]
fn a_collapsed_activity_does_not_move_what_it_names() {
    let events = vec![
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN", "content": {}}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "A"}),
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN",
            "content": {"n": 1}, "parentMessageId": "c"}),
    ];
    compacts_faithfully(&events);
}

/// Found by fuzzing: a delta for an activity from an earlier segment was collapsed into a
/// snapshot at the boundary, and the next pass wrote that snapshot in place (its id had not
/// been written in the segment), ahead of the activity collapsed before it.
#[test]
fn later_activity_events_are_collapsed_in_first_appearance_order() {
    let events = vec![
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a0", "activityType": "PLAN", "content": {}}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": []}),
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "PLAN", "content": {}}),
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "PLAN", "content": {"n": 1}}),
        json!({"type": "ACTIVITY_DELTA", "messageId": "a0", "activityType": "PLAN",
            "patch": [{"op": "add", "path": "/m", "value": 3}]}),
    ];
    compacts_faithfully(&events);
}

/// Found by fuzzing: a tool result reusing a text message's id, then a result inserted before
/// both. The fold shifted the shared id's position twice, so content held past the insertion
/// landed on the tool message; the official client (first message with the id) keeps it on
/// the text message.
#[test]
fn a_result_inserted_before_a_shared_id_keeps_later_content_on_the_first() {
    let events = vec![
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"role": "assistant", "toolCalls": [{"id": "c"}]}, {"id": "other"}]}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m"}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "m"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "text"}),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c"}),
    ];
    let [deltas, _] = compacts_faithfully(&events);
    let folded = crate::fold_agreement::fold_values(&deltas);
    assert_eq!(folded["messages"][3]["content"], "text", "{folded:#}");
    assert_eq!(folded["messages"][3]["role"], "assistant", "{folded:#}");
}

/// At the snapshot level the compactor keeps the history at each run's start up to date by
/// copying only what changed since the last run started. A tool result for an earlier run's
/// call is inserted before messages that were already there: what follows it has moved, so
/// the copy must be redone from there (the compactor checks its copy against the history at
/// every run in debug builds, which these tests are).
#[test]
fn a_result_for_an_earlier_run_moves_the_messages_after_its_call() {
    let events = vec![
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "a1"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "a1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "a2", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": "later"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "a2"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "ok"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}),
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r3"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "a3", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a3", "delta": "x"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "a3"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r3"}),
    ];
    let [_, snapshot] = compacts_faithfully(&events);
    let folded = crate::fold_agreement::fold_values(&snapshot);
    let ids: Vec<&str> = folded["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a1", "t1", "a2", "a3"], "{folded:#}");
}

/// The same when two messages share an id: a snapshot is then merged over the whole history,
/// which may change its first message.
#[test]
fn a_snapshot_over_shared_ids_changes_the_history_from_its_start() {
    let events = vec![
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "first"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "a1"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "a1"}),
        // The result takes the assistant message's id: two messages share it.
        json!({"type": "TOOL_CALL_RESULT", "messageId": "a1", "toolCallId": "c1", "content": "ok"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "a1", "role": "assistant", "content": "changed"}]}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}),
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r3"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r3"}),
    ];
    let [_, snapshot] = compacts_faithfully(&events);
    let folded = crate::fold_agreement::fold_values(&snapshot);
    assert_eq!(folded["messages"][0]["content"], "changed", "{folded:#}");
}

/// Found by fuzzing: an empty STATE_DELTA on an absent state leaves null, which means the same
/// as absent; the snapshot form still carried a STATE_SNAPSHOT of null, so it lost to the run
/// as written on the first pass and won on the second, where the delta was gone.
#[test]
fn a_run_that_leaves_the_state_as_it_was_needs_no_state_snapshot() {
    let events = vec![
        json!({"type": "RUN_STARTED", "d": "1"}),
        json!({"type": "TEMESSAGECHUNK", "messaged": "msoo"}),
        json!({"type": "STATE_DELTA", "delta": []}),
        json!({"type": "RUN_FINISHED", "t": ""}),
    ];
    let [_, snapshot] = compacts_faithfully(&events);
    assert!(
        !snapshot.iter().any(|e| e["type"] == "STATE_SNAPSHOT"),
        "{}",
        listing(&snapshot)
    );
}
