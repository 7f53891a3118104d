//! The readers: whatever the bytes and however they arrive (in pieces of any size), the same
//! frames come out, and nothing panics.
#![no_main]

use agui_lens_fuzz::{Pieces, format_of, frames};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, rest)) = input.split_first() else {
        return;
    };
    // The first bytes up to a NUL give the read sizes; the rest is the stream.
    let (sizes, data) = match rest.iter().position(|&b| b == 0) {
        Some(at) if at <= 16 => (&rest[..at], &rest[at + 1..]),
        _ => (&[][..], rest),
    };
    let format = format_of(selector);
    let whole = frames(Box::new(std::io::Cursor::new(data.to_vec())), format);
    let pieces = frames(Box::new(Pieces::new(data, sizes)), format);
    // A decoder that meets corrupt data may or may not hand out what it decoded before the
    // corruption, depending on how the compressed bytes arrived; only plain input must read
    // the same whatever the pieces.
    let compressed = data.starts_with(&[0x1f, 0x8b]) || data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    if !compressed || (whole.1.is_none() && pieces.1.is_none()) {
        assert_eq!(
            whole, pieces,
            "reading in pieces {sizes:?} changed the frames"
        );
    }
});
