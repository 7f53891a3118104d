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
        // A report that could not be written on stdout (a full device) is no pass: the
        // command ran to its end (its `--junit` written), and fails.
        Ok(_) if commands::report_lost().is_some() => {
            let why = commands::report_lost().unwrap_or_default();
            let _ = writeln!(io::stderr(), "error: writing the report on stdout: {why}");
            ExitCode::from(2)
        }
        Ok(outcome) => outcome.exit_code(),
        // A command whose status is a verdict never passes for a pipe that closed: its own
        // output gives a reader that went away no more and goes on (see `ReportOut`), so a
        // closed pipe here is one it had to write to (a FIFO named as its report).
        Err(err) if is_broken_pipe(&err) && quiet_when_unread(&cli.command) => ExitCode::SUCCESS,
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

/// Whether the command's exit status is a verdict on what it read (findings, a difference, a
/// changed snapshot), which a closed pipe must not turn into a pass.
/// Whether a reader that stopped reading (`| head`) ends the command in silence: only a
/// command that gives no verdict and writes to stdout. An output named with `-o` (a FIFO
/// whose reader left early) holds part of what `cat` wrote, which its status must say.
fn quiet_when_unread(command: &cli::Command) -> bool {
    let named_output = match command {
        cli::Command::Cat(args) => args.output.as_ref(),
        _ => None,
    };
    !gives_a_verdict(command) && named_output.is_none_or(|out| out.as_os_str() == "-")
}

fn gives_a_verdict(command: &cli::Command) -> bool {
    use cli::Command::*;
    matches!(
        command,
        Check(_) | Run(_) | Test(_) | Diff(_) | Snapshot(_) | Inspect(_) | Serve(_) | Proxy(_)
    )
}

/// A reader that stopped reading (`agui-lens cat … | head`) is not an error.
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
