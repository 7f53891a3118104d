//! The `agui-lens` binary: parse arguments, run a command, map the outcome to an exit code.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::FromArgMatches;

use agui_lens::cli::{self, Cli};
use agui_lens::commands;

#[global_allocator]
static ALLOCATOR: agui_lens::alloc::Split = agui_lens::alloc::Split;

/// The stack Linux gives a main thread by default.
const MAIN_STACK: usize = 8 << 20;

/// The allocators are tuned before `main`, where Rust's runtime makes its first allocations
/// (on Linux; elsewhere first thing in `main`). Tuned in `main`, those first blocks had
/// already faulted in and cleared two transparent huge pages, now and then several
/// milliseconds of a command's start.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static TUNE_ALLOCATORS: extern "C" fn() = {
    extern "C" fn tune() {
        agui_lens::alloc::init();
    }
    tune
};

fn main() -> ExitCode {
    #[cfg(not(target_os = "linux"))]
    agui_lens::alloc::init();
    let matches = cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    // The command runs on one of rayon's threads rather than beside them. Readers and
    // checkers work in pipelines (see `source::pipeline`): this thread follows the stream in
    // order while the pool parses what comes next. Run from a thread of the pool, a wait for
    // the next batch takes on the pool's work instead of sleeping, and two busy threads share
    // two cores instead of three. The pool's threads get the stack a main thread has, so that
    // nothing recurses less deep than it would on the main thread.
    // (`check`, `compact`: about 6% less wall time on two cores.)
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(MAIN_STACK)
        .build_global();
    let code = match rayon::scope(|_| commands::run(&cli, &matches)) {
        Ok(outcome) => outcome.exit_code(),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // (What went wrong may name a file, a URL or a body from the input.)
            let said = format!("{err:#}");
            let _ = writeln!(
                io::stderr(),
                "error: {}",
                agui_lens_core::report::human::visible(&said)
            );
            ExitCode::from(2)
        }
    };
    // A command stopped by Ctrl-C, SIGTERM or SIGHUP has written what it could; its status says
    // it was stopped, whatever it found (a cancelled CI job is never a pass).
    match agui_lens_core::stop::signal() {
        Some(signal) => ExitCode::from(128 + signal as u8),
        None => code,
    }
}

/// A reader that stopped reading (`agui-lens check … | head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let io_kind = cause
            .downcast_ref::<io::Error>()
            .map(io::Error::kind)
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            });
        io_kind == Some(io::ErrorKind::BrokenPipe)
    })
}
