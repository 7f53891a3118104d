//! Property tests of JSON Patch: on any document, any patch applies whole or not at all (a
//! failed one leaves the document and its tracked size exactly as they were), applying it in
//! one piece equals applying its operations one by one, and the tracked size always equals a
//! fresh estimate.

use agui_lens_core::protocol::patch::{apply, estimated_size};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0i64..5).prop_map(|n| json!(n)),
        "[a-c]{0,3}".prop_map(Value::String),
    ]
}

fn document() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-c]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Pointers over the same small names the documents use, so that some resolve and some do not.
fn pointer() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        "[a-c]".prop_map(String::from),
        (0u8..4).prop_map(|i| i.to_string()),
        Just("-".to_owned()),
        Just("01".to_owned()),
        Just("~1".to_owned()),
    ];
    prop::collection::vec(token, 0..=2)
        .prop_map(|tokens| tokens.iter().map(|t| format!("/{t}")).collect::<String>())
}

fn operation() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (pointer(), document()).prop_map(|(p, v)| json!({"op": "add", "path": p, "value": v})),
        1 => pointer().prop_map(|p| json!({"op": "remove", "path": p})),
        2 => (pointer(), document())
            .prop_map(|(p, v)| json!({"op": "replace", "path": p, "value": v})),
        2 => (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "move", "from": f, "path": p})),
        2 => (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "copy", "from": f, "path": p})),
        1 => (pointer(), document()).prop_map(|(p, v)| json!({"op": "test", "path": p, "value": v})),
        1 => Just(json!({"op": "nope", "path": "/a"})),
    ]
}

proptest! {
    #![proptest_config(Config {
        cases: 2048,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn patches_apply_whole_or_not_at_all(
        doc in document(),
        ops in prop::collection::vec(operation(), 1..5),
    ) {
        let limit = 1 << 20;
        let mut whole = doc.clone();
        let mut size = estimated_size(&whole, usize::MAX);
        let result = apply(&mut whole, &Value::Array(ops.clone()), &mut size, limit);

        // One operation at a time, stopping at the first that fails.
        let mut stepwise = doc.clone();
        let mut step_size = estimated_size(&stepwise, usize::MAX);
        let mut failed_at = None;
        for (i, op) in ops.iter().enumerate() {
            if apply(&mut stepwise, &json!([op]), &mut step_size, limit).is_err() {
                failed_at = Some(i);
                break;
            }
        }

        match result {
            Ok(()) => {
                prop_assert_eq!(failed_at, None);
                prop_assert_eq!(&whole, &stepwise);
                prop_assert_eq!(size, estimated_size(&whole, usize::MAX));
            }
            Err(err) => {
                prop_assert_eq!(&whole, &doc, "a failed patch changed the document");
                prop_assert_eq!(size, estimated_size(&doc, usize::MAX));
                prop_assert_eq!(Some(err.index), failed_at, "{}", err);
            }
        }
    }
}
