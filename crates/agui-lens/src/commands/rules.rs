//! `agui-lens rules` and `agui-lens explain RULE`.

use std::io::{self, Write};

use anyhow::{Result, bail};

use super::Outcome;
use crate::cli::{RulesArgs, RulesFormat};
use agui_lens_core::check::catalog::{Rule, RuleId, Tier};

pub fn list(args: &RulesArgs) -> Result<Outcome> {
    let mut out = io::stdout().lock();
    let listed: Vec<&Rule> = RuleId::ALL
        .iter()
        .map(|id| id.rule())
        .filter(|rule| args.tier.is_none_or(|tier| rule.tier.within(tier)))
        .collect();
    match args.format {
        RulesFormat::Json => {
            let rules: Vec<_> = listed
                .iter()
                .map(|rule| {
                    let mut entry = serde_json::json!({
                        "name": rule.name,
                        "family": rule.family(),
                        "default": rule.default.as_str(),
                        "tier": rule.tier.as_str(),
                        "versions": rule.versions,
                        "summary": rule.summary,
                        "spec": rule.spec,
                    });
                    if let Some(capability) = rule.capability {
                        entry["capability"] = serde_json::json!(capability);
                    }
                    entry
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &rules)?;
            writeln!(out)?;
        }
        RulesFormat::Human => {
            let width = listed.iter().map(|r| r.name.len()).max().unwrap_or(0);
            let tiers = Tier::ALL
                .iter()
                .map(|t| t.as_str().len())
                .max()
                .unwrap_or(0);
            let blank = "";
            for rule in listed {
                writeln!(
                    out,
                    "{:<width$}  {:<7}  {:<tiers$}  {}",
                    rule.name,
                    rule.default.as_str(),
                    rule.tier.as_str(),
                    rule.summary
                )?;
                if rule.versions != "every version" {
                    writeln!(
                        out,
                        "{blank:<width$}  {blank:<7}  {blank:<tiers$}  (versions: {})",
                        rule.versions
                    )?;
                }
                if let Some(capability) = rule.capability {
                    writeln!(
                        out,
                        "{blank:<width$}  {blank:<7}  {blank:<tiers$}  (when the agent declares {capability})"
                    )?;
                }
            }
        }
    }
    Ok(Outcome::Clean)
}

/// One sentence on what a rule's tier means for it.
fn tier_line(rule: &Rule) -> String {
    match rule.tier {
        Tier::Must => {
            "must: the spec (or the JSON, SSE or HTTP text it travels in) requires it".to_owned()
        }
        Tier::Should => {
            "should: the spec recommends it; departing from it needs a reason".to_owned()
        }
        Tier::Capability => format!(
            "capability: required of an agent that declares {} (given --capabilities, it \
             applies only then)",
            rule.capability.unwrap_or("its capability")
        ),
        Tier::Advice => "advice: agui-lens's own; no spec sentence requires it".to_owned(),
    }
}

pub fn explain(name: &str) -> Result<Outcome> {
    let Some(id) = RuleId::from_name(name) else {
        // Names that hold it or its rule part, else the names a few edits away (a typo).
        let mut close: Vec<&str> = RuleId::ALL
            .iter()
            .map(|id| id.name())
            .filter(|n| n.contains(name) || name.contains(n.split('/').nth(1).unwrap_or(n)))
            .collect();
        if close.is_empty() {
            let allowed = (name.chars().count() / 5).clamp(1, 3);
            let by_distance = |n: &str| {
                let rule = n.split('/').nth(1).unwrap_or(n);
                edits(name, n).min(edits(name, rule))
            };
            let best = RuleId::ALL
                .iter()
                .map(|id| by_distance(id.name()))
                .min()
                .unwrap_or(usize::MAX);
            if best <= allowed {
                close = RuleId::ALL
                    .iter()
                    .map(|id| id.name())
                    .filter(|n| by_distance(n) == best)
                    .collect();
            }
        }
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
    writeln!(out, "Tier: {}.", tier_line(rule))?;
    writeln!(out, "Spec: {}", rule.spec)?;
    writeln!(out)?;
    writeln!(out, "What it checks: {}.", rule.summary)?;
    writeln!(out)?;
    writeln!(out, "Why it matters: {}", rule.why)?;
    writeln!(out)?;
    if rule.default == agui_lens_core::check::catalog::Level::Allow {
        // Off unless turned on: checked as printed, the example trips nothing.
        writeln!(
            out,
            "A stream that trips it (the rule is off by default: `--warn {}` or `--deny {}` \
             turns it on):",
            rule.name, rule.name
        )?;
    } else {
        writeln!(out, "A stream that trips it:")?;
    }
    for line in rule.example.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(Outcome::Clean)
}

/// How many single-character edits (insertions, deletions, substitutions) turn `a` into `b`.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}
