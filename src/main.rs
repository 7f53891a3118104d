//! The `agui-lens` binary: parse arguments, run a command, map the outcome to an exit code.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use agui_lens::cli::Cli;
use agui_lens::commands;

#[global_allocator]
static ALLOCATOR: agui_lens::alloc::Split = agui_lens::alloc::Split;

fn main() -> ExitCode {
    agui_lens::alloc::init();
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    match commands::run(&cli, &matches) {
        Ok(outcome) => outcome.exit_code(),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(io::stderr(), "error: {err:#}");
            ExitCode::from(2)
        }
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
