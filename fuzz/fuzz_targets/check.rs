//! The checker: any bytes, in any format, are checked without a panic, and the fast path for
//! plain deltas reports exactly what the full path reports.
#![no_main]

use agui_lens_fuzz::{check, format_of};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let format = format_of(selector);
    let fast = check(data, format, true);
    let full = check(data, format, false);
    for d in &fast {
        assert!(!d.message.trim().is_empty(), "{d:?} says nothing");
    }
    assert_eq!(fast, full, "the fast path disagrees");
});
