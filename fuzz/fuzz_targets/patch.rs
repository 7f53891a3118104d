//! JSON Patch: applying any patch to any document either succeeds or leaves the document
//! exactly as it was, and the tracked size always equals a fresh estimate.
#![no_main]

use agui_lens_core::protocol::patch::{apply, estimated_size};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|input: &[u8]| {
    // `[document, patch]`
    let Ok(Value::Array(pair)) = serde_json::from_slice::<Value>(input) else {
        return;
    };
    let [document, patch] = pair.as_slice() else {
        return;
    };
    let mut doc = document.clone();
    let mut size = estimated_size(&doc, usize::MAX);
    match apply(&mut doc, patch, &mut size, 1 << 20) {
        Ok(()) => assert_eq!(
            size,
            estimated_size(&doc, usize::MAX),
            "size tracking drifted"
        ),
        Err(_) => {
            assert_eq!(&doc, document, "a failed patch changed the document");
            assert_eq!(size, estimated_size(document, usize::MAX));
        }
    }
});
