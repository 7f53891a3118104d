//! `agui-lens completions SHELL`: a completion script, generated from the clap definitions.

use std::io::{self, Write};

use anyhow::Result;
use clap_complete::Shell;

use super::Outcome;

pub fn run(shell: Shell) -> Result<Outcome> {
    let mut command = crate::cli::command();
    // Generated whole first: clap_complete panics on a failed write, and a closed pipe is no
    // panic.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "agui-lens", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Clean)
}
