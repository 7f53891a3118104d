//! Settings from `agui-lens.toml` (the nearest one in the current directory or above, or
//! `--config FILE`), merged under the command-line flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use agui_lens_core::check::catalog::{Level, Levels, Tier};

pub const FILE_NAME: &str = "agui-lens.toml";

/// The file's contents. Unknown keys are errors, so a typo cannot silently do nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigFile {
    /// Exit 1 on warnings too.
    #[serde(default)]
    pub deny_warnings: bool,
    /// Largest line or frame, e.g. "64MiB".
    pub max_line: Option<String>,
    /// A directory of schemas laid over the built-in ones, relative to the file.
    pub schemas: Option<PathBuf>,
    /// Check only the rules up to this tier: "must", "should", "capability" or "advice".
    pub tier: Option<String>,
    /// Rule or family (`order/*`) → "deny" | "warn" | "allow".
    #[serde(default)]
    pub rules: BTreeMap<String, String>,
}

/// A loaded config file and where it was found.
#[derive(Debug, Default)]
pub struct Config {
    pub path: Option<PathBuf>,
    pub file: ConfigFile,
}

impl Config {
    /// The file [`Config::load`] reads: `explicit`, or else the nearest `agui-lens.toml` from
    /// the current directory up, if there is one.
    pub fn locate(explicit: Option<&Path>) -> Option<PathBuf> {
        match explicit {
            Some(path) => Some(path.to_path_buf()),
            None => std::env::current_dir()
                .ok()
                .and_then(|dir| find_upwards(&dir)),
        }
    }

    /// Loads `explicit`, or else the nearest `agui-lens.toml` from the current directory up.
    pub fn load(explicit: Option<&Path>) -> Result<Config> {
        let Some(path) = Config::locate(explicit) else {
            return Ok(Config::default());
        };
        let text = agui_lens_core::read::read_text(&path)?;
        let file: ConfigFile =
            toml::from_str(&text).with_context(|| format!("in {}", path.display()))?;
        if explicit.is_none() {
            // Found, not named: the log says whose rules the run was checked by.
            say!("agui-lens: rule settings from {}", path.display());
        }
        Ok(Config {
            path: Some(path),
            file,
        })
    }

    /// Rule levels: defaults, then this file (families before single rules), then the flags
    /// in the order they were given, then this file's tier.
    pub fn levels(&self, flags: &[(Level, String)]) -> Result<Levels> {
        self.scoped_levels(flags, None)
    }

    /// The file's tier, if it names one.
    pub fn tier(&self) -> Result<Option<Tier>> {
        let Some(text) = &self.file.tier else {
            return Ok(None);
        };
        match Tier::parse(text) {
            Some(tier) => Ok(Some(tier)),
            None => anyhow::bail!(
                "{}: tier `{text}`; use must, should, capability or advice",
                self.where_()
            ),
        }
    }

    pub(crate) fn where_(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }

    /// [`Config::levels`], limited to `tier` (the `--tier` flag) when given, else to the
    /// file's tier: the rules of wider tiers are off whatever their level says.
    pub fn scoped_levels(&self, flags: &[(Level, String)], tier: Option<Tier>) -> Result<Levels> {
        let mut levels = Levels::default();
        let mut entries: Vec<(&String, &String)> = self.file.rules.iter().collect();
        // Families (`state/*`, `state`) first, so a single rule's entry overrides its family's.
        let is_single_rule = |s: &str| s.contains('/') && !s.ends_with("/*");
        entries.sort_by_key(|(selector, _)| is_single_rule(selector));
        for (selector, level) in entries {
            let where_ = || self.where_();
            let level = Level::parse(level).with_context(|| {
                format!(
                    "{}: rule `{selector}` has level `{level}`; use deny (or error), warn (or warning), note, or allow (or off)",
                    where_()
                )
            })?;
            levels
                .set(selector, level)
                .with_context(|| format!("in {}", where_()))?;
        }
        for (level, selector) in flags {
            levels.set(selector, *level)?;
        }
        let tier = match tier {
            Some(tier) => Some(tier),
            None => self.tier()?,
        };
        if let Some(tier) = tier {
            levels.limit_to(tier);
        }
        Ok(levels)
    }

    /// The line cap: `flag` (`--max-line`) when given, else the file's `max-line`, else the
    /// default. `check` reads under it and `compact` reads and writes under it.
    pub fn max_line(&self, flag: Option<usize>) -> Result<usize> {
        match (flag, &self.file.max_line) {
            (Some(max), _) => Ok(max),
            (None, Some(text)) => crate::cli::parse_size(text)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("max-line in {}", self.where_())),
            (None, None) => Ok(agui_lens_core::read::DEFAULT_MAX_LINE),
        }
    }

    /// Whether warnings fail the run: `flag` (`--deny-warnings`) or the file's
    /// `deny-warnings`.
    pub fn deny_warnings(&self, flag: bool) -> bool {
        flag || self.file.deny_warnings
    }

    /// The overlay schema directory, resolved against the config file's directory.
    pub fn schemas_dir(&self) -> Option<PathBuf> {
        let dir = self.file.schemas.as_ref()?;
        let base = self.path.as_ref().and_then(|p| p.parent());
        Some(match base {
            Some(base) if dir.is_relative() => base.join(dir),
            _ => dir.clone(),
        })
    }
}

/// The nearest `agui-lens.toml` from `start` up, not above the root of the repository
/// `start` is in (the folder that holds `.git`); outside any repository, `start`'s own: a
/// file in a home folder or in /tmp is no rule of the project's.
fn find_upwards(start: &Path) -> Option<PathBuf> {
    let in_repository = start.ancestors().any(|dir| dir.join(".git").exists());
    for dir in start.ancestors() {
        if let Some(file) = found(dir.join(FILE_NAME)) {
            return Some(file);
        }
        if !in_repository || dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// `candidate` when anything is there by that name: a file, a link that leads nowhere or a
/// folder (to be said to be no config: going on without the project's config would check
/// by other rules).
fn found(candidate: PathBuf) -> Option<PathBuf> {
    (candidate.exists() || candidate.is_symlink()).then_some(candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_lens_core::check::catalog::RuleId;

    fn config(text: &str) -> Result<Config> {
        Ok(Config {
            path: Some("agui-lens.toml".into()),
            file: toml::from_str(text)?,
        })
    }

    #[test]
    fn file_then_flags() {
        let config = config(
            r#"
            deny-warnings = true
            [rules]
            "schema/unknown-field" = "allow"
            "schema/*" = "warn"
            "#,
        )
        .unwrap();
        assert!(config.file.deny_warnings);
        let levels = config.levels(&[]).unwrap();
        // The single rule wins over its family whatever the order in the file.
        assert_eq!(levels.level(RuleId::SchemaUnknownField), Level::Allow);
        assert_eq!(levels.level(RuleId::SchemaViolation), Level::Warn);
        let levels = config
            .levels(&[(Level::Deny, "schema/unknown-field".into())])
            .unwrap();
        assert_eq!(levels.level(RuleId::SchemaUnknownField), Level::Deny);
    }

    /// Inside a repository the nearest file up to its root is found, never one above it;
    /// outside any repository, only the current folder's: a shared `/tmp/agui-lens.toml`
    /// set the rules of every folder under /tmp.
    #[test]
    fn a_config_is_the_projects_own() {
        let root = tempfile::tempdir().unwrap();
        let above = root.path().join(FILE_NAME);
        std::fs::write(&above, "").unwrap();
        let plain = root.path().join("norepo/deep");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(find_upwards(&plain), None);
        std::fs::write(plain.join(FILE_NAME), "").unwrap();
        assert_eq!(find_upwards(&plain), Some(plain.join(FILE_NAME)));
        let repo = root.path().join("repo");
        let inner = repo.join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(find_upwards(&inner), None);
        std::fs::write(repo.join(FILE_NAME), "").unwrap();
        assert_eq!(find_upwards(&inner), Some(repo.join(FILE_NAME)));
    }

    #[test]
    fn mistakes_are_errors() {
        assert!(config("deny_warnings = true").is_err(), "unknown key");
        let bad_level = config("[rules]\n\"schema/*\" = \"loud\"").unwrap();
        assert!(bad_level.levels(&[]).is_err());
        let bad_rule = config("[rules]\n\"schema/nope\" = \"deny\"").unwrap();
        assert!(bad_rule.levels(&[]).is_err());
    }
}
