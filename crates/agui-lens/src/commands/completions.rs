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
    if shell == Shell::Bash {
        script = mend_bash(&script);
    }
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Clean)
}

/// clap_complete's bash script (up to 4.6.12 at least: clap-rs/clap#6421) names the state of a
/// subcommand of a hyphenated program two ways: its dispatch loop sets `agui__lens__subcmd__cat`
/// while the arms that complete it are labelled `agui__subcmd__lens__subcmd__cat`, so no
/// subcommand's options or values ever completed. The arms are relabelled as the loop spells
/// them.
fn mend_bash(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("agui__subcmd__lens__subcmd__", "agui__lens__subcmd__")
        .into_bytes()
}
