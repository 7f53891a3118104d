//! `agui-lens schema list|show|export`.

use std::io::{self, Write};

use anyhow::{Result, bail};
use serde_json::Value;

use super::Outcome;
use crate::cli::SchemaCommand;
use agui_lens_core::check::schema::SchemaSet;

pub fn run(command: &SchemaCommand) -> Result<Outcome> {
    match command {
        SchemaCommand::List => list(),
        SchemaCommand::Show { name, schemas } => {
            let set = SchemaSet::load(schemas.as_deref())?;
            let Some((_, doc)) = set.find(name) else {
                bail!("no schema named `{name}` (see `agui-lens schema list`)");
            };
            let mut out = io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, doc)?;
            writeln!(out)?;
            Ok(Outcome::Clean)
        }
        SchemaCommand::Export { dir, schemas } => {
            let set = SchemaSet::load(schemas.as_deref())?;
            let mut count = 0;
            for (rel, doc) in set.files() {
                let mut text = serde_json::to_string_pretty(doc)?;
                text.push('\n');
                super::write_bytes(&dir.join(rel), text.as_bytes())?;
                count += 1;
            }
            eprintln!("wrote {count} schemas to {}", dir.display());
            Ok(Outcome::Clean)
        }
    }
}

fn list() -> Result<Outcome> {
    let set = SchemaSet::embedded()?;
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
