//! `agui-lens schema list|show|export`.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::Value;

use super::Outcome;
use crate::cli::SchemaCommand;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::protocol::version::Version;
use agui_lens_core::text::plural;

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
            let stock = SchemaSet::load(None)?;
            let (mut count, mut left) = (0, 0);
            for (rel, doc) in set.files() {
                let path = dir.join(rel);
                match exported_there(&path, &stock, rel, doc) {
                    There::Ours(held) if held == *doc => {}
                    There::Nothing | There::Ours(_) => {
                        let mut text = serde_json::to_string_pretty(doc)?;
                        text.push('\n');
                        super::write_bytes(&path, text.as_bytes())?;
                    }
                    There::Users(why) => {
                        say!(
                            "error: left {} as it was: {why}; export into another folder, or \
                             remove it to have it replaced",
                            path.display()
                        );
                        left += 1;
                        continue;
                    }
                }
                count += 1;
            }
            say!(
                "wrote {count} schemas of AG-UI {version} to {}{}",
                dir.display(),
                other_versions(version)
            );
            if left > 0 {
                let (were, places) = if left == 1 {
                    ("was", "its place")
                } else {
                    ("were", "their places")
                };
                say!(
                    "error: {} {were} not exported: a file of yours is in {places}",
                    plural(left, "schema")
                );
                return Ok(Outcome::Failed);
            }
            Ok(Outcome::Clean)
        }
    }
}

/// What an export finds where it is to write a schema.
enum There {
    Nothing,
    /// A schema agui-lens exports to that place, of some version (an earlier export): it is
    /// replaced.
    Ours(Value),
    /// Anything else, such as a schema edited for an overlay: it is left, and said to be.
    Users(String),
}

fn exported_there(path: &Path, stock: &SchemaSet, rel: &str, doc: &Value) -> There {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) {
        // Written through, it would change a file elsewhere (or make one outside the folder).
        return There::Users("it is a link, which an export does not write through".to_owned());
    }
    let bytes = match agui_lens_core::read::read_whole(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return There::Nothing,
        // A folder, a file that cannot be read: writing it says why it fails.
        Err(_) if !path.is_file() => return There::Nothing,
        Err(err) => return There::Users(format!("it could not be read ({err})")),
    };
    let Ok(held) = serde_json::from_slice::<Value>(&bytes) else {
        return There::Users("it holds no JSON".to_owned());
    };
    // What this export writes (an earlier export with the same overlay), or what an export of
    // some version without one wrote.
    let ours = held == *doc
        || Version::ALL.iter().any(|&version| {
            stock
                .for_version(version)
                .files()
                .any(|(known, doc)| known == rel && *doc == held)
        });
    if ours {
        There::Ours(held)
    } else {
        There::Users("it is no schema agui-lens exports there (one you edited?)".to_owned())
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
    say!(
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
