//! The agui-lens command line, as a library for its tests and fuzz targets: the clap types
//! ([`cli`]), the commands that wire the core's stages together ([`commands`]), and what only
//! a front end does: terminal and HTML rendering ([`render`], [`inspect`]), live agents over
//! HTTP ([`live`], [`suite`]), directory walks, signals and the allocator. The stages
//! themselves are in `agui_lens_core`.

/// `eprintln!` that cannot panic: a closed or full stderr (`2>&-`, a pipe whose reader went
/// away) must not end a command with a panic (exit 101) before its verdict and its reports.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod alloc;
pub mod cli;
pub mod commands;
pub mod config;
pub mod declaration;
pub mod glob;
pub mod inspect;
pub mod live;
pub mod progress;
pub mod render;
pub mod signals;
pub mod suite;
