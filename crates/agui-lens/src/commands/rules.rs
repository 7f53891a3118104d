//! `agui-lens rules` and `agui-lens explain RULE`.

use std::io::{self, Write};

use anyhow::{Result, bail};

use super::Outcome;
use crate::cli::{RulesArgs, RulesFormat};
use agui_lens_core::check::catalog::RuleId;

pub fn list(args: &RulesArgs) -> Result<Outcome> {
    let mut out = io::stdout().lock();
    match args.format {
        RulesFormat::Json => {
            let rules: Vec<_> = RuleId::ALL
                .iter()
                .map(|id| {
                    let rule = id.rule();
                    serde_json::json!({
                        "name": rule.name,
                        "family": rule.family(),
                        "default": rule.default.as_str(),
                        "versions": rule.versions,
                        "summary": rule.summary,
                    })
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &rules)?;
            writeln!(out)?;
        }
        RulesFormat::Human => {
            let width = RuleId::ALL
                .iter()
                .map(|id| id.name().len())
                .max()
                .unwrap_or(0);
            for id in RuleId::ALL {
                let rule = id.rule();
                writeln!(
                    out,
                    "{:<width$}  {:<7}  {}",
                    rule.name,
                    rule.default.as_str(),
                    rule.summary
                )?;
                if rule.versions != "every version" {
                    writeln!(
                        out,
                        "{:<width$}  {:<7}  (versions: {})",
                        "", "", rule.versions
                    )?;
                }
            }
        }
    }
    Ok(Outcome::Clean)
}

pub fn explain(name: &str) -> Result<Outcome> {
    let Some(id) = RuleId::from_name(name) else {
        let close: Vec<&str> = RuleId::ALL
            .iter()
            .map(|id| id.name())
            .filter(|n| n.contains(name) || name.contains(n.split('/').nth(1).unwrap_or(n)))
            .collect();
        if close.is_empty() {
            bail!("no rule named `{name}` (see `agui-lens rules`)");
        }
        bail!("no rule named `{name}`; did you mean {}?", close.join(", "));
    };
    let rule = id.rule();
    let mut out = io::stdout().lock();
    writeln!(out, "{}  (default: {})", rule.name, rule.default.as_str())?;
    writeln!(out)?;
    writeln!(out, "Protocol versions: {}.", rule.versions)?;
    writeln!(out)?;
    writeln!(out, "What it checks: {}.", rule.summary)?;
    writeln!(out)?;
    writeln!(out, "Why it matters: {}", rule.why)?;
    writeln!(out)?;
    writeln!(out, "A stream that trips it:")?;
    for line in rule.example.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(Outcome::Clean)
}
