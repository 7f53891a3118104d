//! `agui-lens schema list|show|export`.

use std::io::{self, Write};

use anyhow::{Result, bail};
use serde_json::Value;

use super::Outcome;
use crate::cli::SchemaCommand;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::protocol::version::Version;

pub fn run(command: &SchemaCommand) -> Result<Outcome> {
    match command {
        SchemaCommand::List { protocol } => list(version(*protocol)),
        SchemaCommand::Show {
            name,
            schemas,
            protocol,
        } => {
            let version = version(*protocol);
            let loaded = SchemaSet::load(schemas.as_deref())?;
            let set = loaded.for_version(version);
            let Some((_, doc)) = set.find(name) else {
                bail!(
                    "no schema named `{name}` in AG-UI {version} (see `agui-lens schema list \
                     --protocol {version}`)"
                );
            };
            say_version(version);
            let mut out = io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, doc)?;
            writeln!(out)?;
            Ok(Outcome::Clean)
        }
        SchemaCommand::Export {
            dir,
            schemas,
            protocol,
        } => {
            let version = version(*protocol);
            let loaded = SchemaSet::load(schemas.as_deref())?;
            let set = loaded.for_version(version);
            let mut count = 0;
            for (rel, doc) in set.files() {
                let mut text = serde_json::to_string_pretty(doc)?;
                text.push('\n');
                super::write_bytes(&dir.join(rel), text.as_bytes())?;
                count += 1;
            }
            eprintln!(
                "wrote {count} schemas of AG-UI {version} to {}{}",
                dir.display(),
                other_versions(version)
            );
            Ok(Outcome::Clean)
        }
    }
}

/// The version asked for, or the newest.
fn version(asked: Option<Version>) -> Version {
    asked.unwrap_or(Version::NEWEST)
}

/// How to get another version's schemas.
fn other_versions(version: Version) -> String {
    let others: Vec<&str> = Version::ALL
        .iter()
        .filter(|v| **v != version)
        .map(|v| v.name())
        .collect();
    format!(" (--protocol {} for another version)", others.join(" or "))
}

/// Says on stderr whose schemas stdout holds: the versions differ.
fn say_version(version: Version) {
    eprintln!(
        "agui-lens: the AG-UI {version} schemas{}",
        other_versions(version)
    );
}

fn list(version: Version) -> Result<Outcome> {
    let loaded = SchemaSet::load(None)?;
    let set = loaded.for_version(version);
    say_version(version);
    let mut out = io::stdout().lock();
    let width = set.files().map(|(rel, _)| rel.len()).max().unwrap_or(0);
    for (rel, doc) in set.files() {
        let title = doc.get("title").and_then(Value::as_str).unwrap_or_default();
        let deprecated = doc.get("deprecated").and_then(Value::as_bool) == Some(true);
        let note = if deprecated { "  (removed in 1.0)" } else { "" };
        writeln!(out, "{rel:<width$}  {title}{note}")?;
    }
    Ok(Outcome::Clean)
}
