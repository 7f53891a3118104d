//! Property tests of the fold's shortcuts (a MESSAGES_SNAPSHOT merged from the first message
//! it can change, a tool result placed from where the last one for its assistant went): on
//! generated streams heavy in snapshots (that name some messages, carry reasoning or activity
//! or not, repeat ids and tool calls) and in tool results, folding with the shortcuts ends
//! exactly where merging every snapshot over the whole history and walking every result to its
//! place does, and after every event the id and tool-call indexes (and the keys they name
//! messages by) are what rebuilding them from the messages would give.

use std::sync::Arc;

use agui_lens_core::fold::{Folder, Outline, merge_snapshot, snapshot_restores};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

/// A message a snapshot or a run's input may carry, over small pools of ids so that they
/// collide with the stream's.
fn message() -> impl Strategy<Value = Value> {
    let id = prop_oneof![Just("m1"), Just("m2"), Just("m3"), Just("z1"), Just("a1")];
    let call = prop_oneof![Just("c1"), Just("c2")];
    prop_oneof![
        (id.clone(), prop_oneof![Just("user"), Just("assistant")])
            .prop_map(|(id, role)| json!({"id": id, "role": role, "content": "text"})),
        (id.clone(), call.clone()).prop_map(|(id, call)| json!({"id": id, "role": "assistant",
            "toolCalls": [{"id": call, "type": "function",
                "function": {"name": "f", "arguments": "{}"}}]})),
        (id.clone(), call).prop_map(|(id, call)| json!({"id": id, "role": "tool",
            "toolCallId": call, "content": "done"})),
        id.clone()
            .prop_map(|id| json!({"id": id, "role": "reasoning", "content": "thinking"})),
        (id, prop_oneof![Just("PLAN"), Just("SEARCH")]).prop_map(|(id, ty)| json!({"id": id,
            "role": "activity", "activityType": ty, "content": {"n": 1}})),
    ]
}

fn step() -> impl Strategy<Value = Value> {
    let id = prop_oneof![Just("m1"), Just("m2"), Just("m3"), Just("z1"), Just("a1")];
    let call = prop_oneof![Just("c1"), Just("c2"), Just("c3")];
    let scope = prop_oneof![
        Just(None),
        Just(Some(json!(null))),
        Just(Some(json!(["PLAN"]))),
        Just(Some(json!([]))),
    ];
    prop_oneof![
        2 => prop::collection::vec(message(), 0..3).prop_map(|messages| json!({
            "type": "RUN_STARTED", "threadId": "t", "runId": "r",
            "input": {"threadId": "t", "runId": "r", "messages": messages}})),
        3 => (id.clone(), prop_oneof![Just("assistant"), Just("user")]).prop_map(|(id, role)|
            json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": role})),
        2 => id.clone().prop_map(|id|
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": "x"})),
        2 => id.clone().prop_map(|id| json!({"type": "REASONING_MESSAGE_START",
            "messageId": id, "role": "reasoning"})),
        3 => (call.clone(), prop::option::of(id.clone())).prop_map(|(call, parent)| {
            let mut start = json!({"type": "TOOL_CALL_START", "toolCallId": call,
                "toolCallName": "f"});
            if let Some(parent) = parent {
                start["parentMessageId"] = parent.into();
            }
            start
        }),
        2 => (call.clone(), id.clone()).prop_map(|(call, id)| json!({"type": "TOOL_CALL_RESULT",
            "messageId": format!("res-{id}"), "toolCallId": call, "content": "ok"})),
        1 => (call, id.clone()).prop_map(|(call, id)| json!({"type": "TOOL_CALL_RESULT",
            "messageId": id, "toolCallId": call, "content": "ok"})),
        2 => (id, any::<bool>()).prop_map(|(id, replace)| json!({"type": "ACTIVITY_SNAPSHOT",
            "messageId": id, "activityType": "PLAN", "content": {"n": 2}, "replace": replace})),
        4 => (prop::collection::vec(message(), 0..4), scope).prop_map(|(messages, scope)| {
            let mut snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": messages});
            if let Some(scope) = scope {
                snapshot["metadata"] =
                    json!({"@ag-ui/client": {"authoritativeActivityTypes": scope}});
            }
            snapshot
        }),
    ]
}

proptest! {
    #![proptest_config(Config {
        cases: 1024,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn snapshot_shortcut_folds_like_a_full_merge(
        events in prop::collection::vec(step(), 0..30)
    ) {
        let path: Arc<str> = Arc::from("generated");
        let mut fast = Folder::new(1 << 20);
        let mut full = Folder::new(1 << 20).without_shortcuts();
        for (i, value) in events.iter().enumerate() {
            let event = crate::common::event_at(&path, i, value.clone());
            fast.apply(&event);
            full.apply(&event);
            prop_assert!(fast.indexes_hold(), "indexes drifted at event {}: {}", i, value);
            prop_assert!(full.indexes_hold(), "rebuilt indexes drifted at event {}", i);
            prop_assert_eq!(fast.messages(), full.messages(), "after event {}: {}", i, value);
        }
    }

    /// Whether a run's snapshot restores its result is judged from the outlines of the
    /// messages at the run's start: the same answer merging the snapshot into the messages
    /// themselves gives, for a result of unique ids (the only one compaction snapshots). Of
    /// another it may say no where the merge happens to restore it, never yes where not.
    #[test]
    fn outlines_tell_whether_a_snapshot_restores_as_the_merge_does(
        old in prop::collection::vec(message(), 0..6),
        result in prop::collection::vec(message(), 0..6),
    ) {
        let as_map = |m: &Value| m.as_object().cloned().unwrap();
        let old: Vec<_> = old.iter().map(as_map).collect();
        let result_maps: Vec<_> = result.iter().map(as_map).collect();
        let outlines: Vec<Outline> = old.iter().map(Outline::of).collect();
        let restores = snapshot_restores(&outlines, &result_maps);
        let merged = merge_snapshot(old, &result, None) == result_maps;
        let mut ids: Vec<_> = result.iter().map(|m| &m["id"]).collect();
        ids.sort_by_key(|id| id.to_string());
        ids.dedup();
        if ids.len() == result.len() {
            prop_assert_eq!(restores, merged);
        } else {
            prop_assert!(!restores || merged);
        }
    }

    /// Outlines kept in step from time to time, as compaction keeps them at each run's
    /// start, are the outlines of the messages as they stand.
    #[test]
    fn outlines_kept_in_step_match_the_messages(
        events in prop::collection::vec((step(), any::<bool>()), 0..30)
    ) {
        let path: Arc<str> = Arc::from("generated");
        let mut folder = Folder::new(1 << 20);
        let mut outlines = Vec::new();
        for (i, (value, sync)) in events.iter().enumerate() {
            folder.apply(&crate::common::event_at(&path, i, value.clone()));
            if *sync {
                folder.sync_outlines(&mut outlines);
                let fresh: Vec<Outline> = folder.messages().iter().map(Outline::of).collect();
                prop_assert_eq!(&outlines, &fresh, "after event {}: {}", i, value);
            }
        }
    }
}
