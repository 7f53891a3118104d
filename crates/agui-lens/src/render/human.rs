//! The default format in a terminal: the library's human reporter, coloured when asked.

use std::io::Write;

use colored::Colorize;

use agui_lens_core::report::human::{Human, Paint};

/// The human reporter writing to `out`, coloured when `color`.
pub fn human(out: Box<dyn Write>, color: bool) -> Human {
    if !color {
        return Human::plain(out);
    }
    // The user asked (or stdout is a terminal): colour even when `colored` would guess
    // otherwise from the environment.
    colored::control::set_override(true);
    Human::painted(
        out,
        Box::new(|text, paint| {
            match paint {
                Paint::Error => text.red().bold(),
                Paint::Warning => text.yellow().bold(),
                Paint::Bold => text.bold(),
                Paint::Frame => text.blue().bold(),
            }
            .to_string()
        }),
    )
}
