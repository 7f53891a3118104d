//! Commands: the only code that wires sources, rules and reporters together.

pub mod check;
pub mod compact;
pub mod diff;
pub mod events;
pub mod fold;
pub mod live;
pub mod rules;
pub mod run;
pub mod schema;
pub mod snapshot;
pub mod test;

use std::process::ExitCode;

use anyhow::Result;
use clap::ArgMatches;

use crate::cli::{Cli, Command};
use crate::report::Summary;

/// How a command ended, before it becomes an exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to report (exit 0).
    Clean,
    /// Findings that fail the run (exit 1).
    Findings,
    /// The tool could not do its job for some input (exit 2).
    Failed,
}

impl Outcome {
    pub fn from_summary(run: &check::RunSummary, deny_warnings: bool) -> Outcome {
        let Summary {
            errors, warnings, ..
        } = run.summary;
        if run.failed_inputs > 0 {
            Outcome::Failed
        } else if errors > 0 || (deny_warnings && warnings > 0) {
            Outcome::Findings
        } else {
            Outcome::Clean
        }
    }

    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Findings => ExitCode::from(1),
            Outcome::Failed => ExitCode::from(2),
        }
    }
}

/// Runs the command the user asked for.
pub fn run(cli: &Cli, matches: &ArgMatches) -> Result<Outcome> {
    let sub = matches.subcommand().map(|(_, m)| m).unwrap_or(matches);
    match &cli.command {
        Command::Check(args) => check::run(args, sub),
        Command::Run(args) => run::run(args, sub),
        Command::Test(args) => test::run(args),
        Command::Rules(args) => rules::list(args),
        Command::Explain { rule } => rules::explain(rule),
        Command::Schema(command) => schema::run(command),
        Command::Fold(args) => fold::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Snapshot(args) => snapshot::run(args),
    }
}
