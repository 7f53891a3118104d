//! `agui-lens man [--dir DIR]`: man pages generated from the clap definitions with
//! clap_mangen, each ending in the exit statuses of its command.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};
use clap_mangen::Man;
use roff::{Roff, bold, roman};

use super::Outcome;
use crate::cli::{self, ExitStatus};

pub fn run(dir: Option<&Path>) -> Result<Outcome> {
    // Built, as clap_mangen's own generate_to builds it: each subcommand then knows its full
    // name (agui-lens-check) and how it is invoked (agui-lens check). clap's `help` command
    // gets no page.
    let mut command = cli::command().disable_help_subcommand(true);
    command.build();
    match dir {
        None => {
            let mut out = io::stdout().lock();
            out.write_all(&page(&command, &[]))?;
            out.flush()?;
        }
        Some(dir) => {
            super::create_folders(dir).with_context(|| format!("creating {}", dir.display()))?;
            write_pages(&command, &mut Vec::new(), dir)?;
        }
    }
    Ok(Outcome::Clean)
}

/// Writes the page of `command` (at `path` below the top) and of every command below it.
fn write_pages(command: &clap::Command, path: &mut Vec<String>, dir: &Path) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        path.push(sub.get_name().to_owned());
        write_pages(sub, path, dir)?;
        path.pop();
    }
    let names: Vec<&str> = path.iter().map(String::as_str).collect();
    let file = dir.join(Man::new(command.clone()).get_filename());
    let page = page(command, &names);
    super::write_bytes(&file, &page)
}

/// One command's page: clap_mangen's sections, then EXIT STATUS, then VERSION.
fn page(command: &clap::Command, path: &[&str]) -> Vec<u8> {
    let man = Man::new(command.clone());
    let mut sections: Vec<Vec<u8>> = Vec::new();
    let mut section = |render: &dyn Fn(&mut dyn Write) -> io::Result<()>| {
        let mut text = Vec::new();
        render(&mut text).expect("writing to memory");
        sections.push(text);
    };
    section(&|w| man.render_title(w));
    section(&|w| man.render_name_section(w));
    section(&|w| man.render_synopsis_section(w));
    section(&|w| man.render_description_section(w));
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        section(&|w| man.render_options_section(w));
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        section(&|w| man.render_subcommands_section(w));
    }
    let statuses = cli::exit_statuses(path).expect("every command has its exit statuses");
    section(&|w| exit_status_section(&statuses).to_writer(w));
    section(&|w| man.render_version_section(w));
    // Each section comes with roff's preamble (how to typeset an apostrophe): once is enough.
    let preamble = preamble();
    let mut page = Vec::new();
    for (i, text) in sections.iter().enumerate() {
        let text = match text.strip_prefix(preamble.as_slice()) {
            Some(rest) if i > 0 => rest,
            _ => text,
        };
        page.extend_from_slice(text);
    }
    page
}

fn exit_status_section(statuses: &[ExitStatus]) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in statuses {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(*meaning)]);
    }
    roff
}

/// What roff writes before a document's own lines.
fn preamble() -> Vec<u8> {
    let mut text = Vec::new();
    Roff::new().to_writer(&mut text).expect("writing to memory");
    text
}
