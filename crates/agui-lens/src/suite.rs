//! A conformance suite file (`agui-lens test`): `[[case]]` tables, each a live call and what
//! its answer must be. Everything that can be known before a call is checked at load time,
//! with the line of the case, so a broken suite fails before any agent is called.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::glob;
use crate::live::http::{Transport, check_header};
use crate::live::request::{AgentInput, expand};
use agui_lens_core::check::capabilities::Capabilities;
use agui_lens_core::check::catalog::{Level, Levels};
use agui_lens_core::compare::Level as CompareLevel;
use agui_lens_core::compare::normalize::{Selector, Settings};
use agui_lens_core::protocol::event::EventType;

/// How long a case waits for bytes unless it says otherwise.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The file as written. Unknown keys are errors: a misspelt expectation must not silently
/// check nothing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    /// What every case takes unless it says otherwise.
    #[serde(default)]
    defaults: Defaults,
    #[serde(default, rename = "case")]
    cases: Vec<toml::Spanned<CaseFile>>,
}

/// `[defaults]`: what every case takes. A case's own value replaces a default; lists of
/// rule overrides, redactions and id patterns add to the defaults', and headers merge.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    /// The agent's capabilities declaration: a file (relative to the suite) or a URL.
    capabilities: Option<String>,
    url: Option<String>,
    url_env: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    expect_status: Option<toml::Value>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    warn: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    max_first_event_ms: Option<u64>,
    idle_timeout: Option<f64>,
    timeout: Option<f64>,
    accept: Option<Transport>,
    fixed_ids: Option<bool>,
    snapshot_level: Option<String>,
    #[serde(default)]
    redact: Vec<String>,
    #[serde(default)]
    id_patterns: Vec<String>,
    #[serde(default)]
    id_keys: Vec<String>,
    #[serde(default)]
    unordered: Vec<String>,
}

impl CaseFile {
    /// The case with the suite's defaults filled in.
    fn with_defaults(mut self, d: &Defaults) -> CaseFile {
        if self.url.is_none() && self.url_env.is_none() {
            self.url = d.url.clone();
            self.url_env = d.url_env.clone();
        }
        for (name, value) in &d.headers {
            self.headers
                .entry(name.clone())
                .or_insert_with(|| value.clone());
        }
        self.expect_status = self.expect_status.or_else(|| d.expect_status.clone());
        self.capabilities = self.capabilities.or_else(|| d.capabilities.clone());
        let before = |own: Vec<String>, default: &[String]| {
            let mut all = default.to_vec();
            all.extend(own);
            all
        };
        self.deny = before(std::mem::take(&mut self.deny), &d.deny);
        self.warn = before(std::mem::take(&mut self.warn), &d.warn);
        self.allow = before(std::mem::take(&mut self.allow), &d.allow);
        self.max_first_event_ms = self.max_first_event_ms.or(d.max_first_event_ms);
        self.idle_timeout = self.idle_timeout.or(d.idle_timeout);
        self.timeout = self.timeout.or(d.timeout);
        self.accept = self.accept.or(d.accept);
        self.fixed_ids = self.fixed_ids.or(d.fixed_ids);
        self.snapshot_level = self.snapshot_level.or_else(|| d.snapshot_level.clone());
        self.redact = before(std::mem::take(&mut self.redact), &d.redact);
        self.id_patterns = before(std::mem::take(&mut self.id_patterns), &d.id_patterns);
        self.id_keys = before(std::mem::take(&mut self.id_keys), &d.id_keys);
        self.unordered = before(std::mem::take(&mut self.unordered), &d.unordered);
        self
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: String,
    /// The agent's capabilities declaration: a file (relative to the suite) or a URL.
    capabilities: Option<String>,
    url: Option<String>,
    url_env: Option<String>,
    input: Option<PathBuf>,
    message: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    expect_status: Option<toml::Value>,
    #[serde(default)]
    require_events: Vec<String>,
    snapshot: Option<PathBuf>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    warn: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    max_first_event_ms: Option<u64>,
    idle_timeout: Option<f64>,
    timeout: Option<f64>,
    /// `sse` (the default) or `proto`: the transport the case asks for.
    accept: Option<Transport>,
    /// Send the input's threadId and runId as written, not fresh ones.
    fixed_ids: Option<bool>,
    /// The turns after the first, on the same thread.
    #[serde(default, rename = "turn")]
    turns: Vec<toml::Spanned<TurnFile>>,
    /// How the case's snapshots are written: `events`, `compact` (the default) or `fold`.
    snapshot_level: Option<String>,
    /// JSON Pointer patterns removed before comparing with a snapshot.
    #[serde(default)]
    redact: Vec<String>,
    /// Globs of string values that are ids (compared as tokens).
    #[serde(default)]
    id_patterns: Vec<String>,
    /// Keys whose string values are ids.
    #[serde(default)]
    id_keys: Vec<String>,
    /// Event types whose neighbouring events compare in any order.
    #[serde(default)]
    unordered: Vec<String>,
}

/// A later turn: what the user or the application adds to what the client holds, and what
/// the answer must be.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnFile {
    message: Option<String>,
    /// Results of the frontend tool calls the previous turn left waiting, by tool name
    /// (`"*"`: any other tool). A table or array is sent as its JSON text.
    #[serde(default)]
    tool_results: BTreeMap<String, toml::Value>,
    /// The answer to every interrupt the previous turn ended with: `status` and `payload`.
    resume: Option<toml::Table>,
    expect_status: Option<toml::Value>,
    #[serde(default)]
    require_events: Vec<String>,
    snapshot: Option<PathBuf>,
    max_first_event_ms: Option<u64>,
}

/// A loaded suite.
#[derive(Debug)]
pub struct Suite {
    pub path: PathBuf,
    pub cases: Vec<Case>,
}

/// One case, resolved: URL and headers expanded, input read, paths made absolute.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    /// The case's place in the suite file, from 0 (kept when `--case` picks some).
    pub index: usize,
    /// The line of the case's `[[case]]` in the suite file.
    pub line: u64,
    pub url: String,
    pub input: AgentInput,
    /// The file `input` was read from, when it was one.
    pub input_file: Option<PathBuf>,
    /// Send the input's ids as written. Otherwise every run of the suite starts a fresh thread.
    pub fixed_ids: bool,
    /// Values expanded; never printed.
    pub headers: Vec<(String, String)>,
    /// Rule overrides, applied in this order over the configured levels: allow, warn, deny.
    pub rules: Vec<(Level, String)>,
    pub idle_timeout: Duration,
    pub timeout: Option<Duration>,
    pub accept: Transport,
    /// What the agent declares it can do: capability rules apply only where it declares their
    /// capability.
    pub capabilities: Option<Capabilities>,
    /// How new snapshots of the case are normalised (an existing one compares by its header).
    pub snapshot_level: Option<CompareLevel>,
    pub normalize: Option<Settings>,
    /// The first turn is the case's own input; later ones are built from the fold of the one
    /// before.
    pub turns: Vec<Turn>,
}

/// One call of a case and what its answer must be.
#[derive(Debug)]
pub struct Turn {
    /// 1 for the case's own input.
    pub number: usize,
    /// The line of the case (turn 1) or of its `[[case.turn]]`.
    pub line: u64,
    /// What a later turn adds; empty for the first.
    pub adds: TurnAdds,
    /// None: any 2xx.
    pub expect_status: Option<Statuses>,
    pub require_events: Vec<EventType>,
    pub snapshot: Option<PathBuf>,
    pub max_first_event: Option<Duration>,
}

/// What a later turn adds to the history the client holds.
#[derive(Debug, Default)]
pub struct TurnAdds {
    pub message: Option<String>,
    /// Tool name (or `*`) → the result's content.
    pub tool_results: BTreeMap<String, String>,
    /// `status` and `payload` of the resume entry sent for each pending interrupt.
    pub resume: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Accepted HTTP statuses: codes and inclusive ranges (`422`, `[400, 422]`, `"4xx"`,
/// `"400-499"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statuses(Vec<(u16, u16)>);

impl Statuses {
    pub fn contains(&self, status: u16) -> bool {
        self.0.iter().any(|(lo, hi)| (*lo..=*hi).contains(&status))
    }

    /// Whether every accepted status is a redirect.
    pub fn expects_redirect(&self) -> bool {
        self.0.iter().all(|(lo, hi)| *lo >= 300 && *hi < 400)
    }

    /// Whether every accepted status is a success: a stream is then expected.
    pub fn expects_stream(&self) -> bool {
        self.0.iter().all(|(lo, hi)| *lo >= 200 && *hi < 300)
    }

    fn parse(value: &toml::Value) -> Result<Statuses> {
        let mut ranges = Vec::new();
        let items = match value {
            toml::Value::Array(items) => items.as_slice(),
            one => std::slice::from_ref(one),
        };
        if items.is_empty() {
            bail!("expect_status is an empty list");
        }
        for item in items {
            let range = match item {
                toml::Value::Integer(code) => {
                    let code = u16::try_from(*code).unwrap_or(0);
                    (code, code)
                }
                toml::Value::String(text) => parse_range(text)?,
                other => bail!(
                    "expect_status takes a status, a range such as \"4xx\" or \"400-499\", or a \
                     list of them, not {other}"
                ),
            };
            for code in [range.0, range.1] {
                if !(100..=599).contains(&code) {
                    bail!("expect_status {code} is not an HTTP status");
                }
            }
            if range.0 > range.1 {
                bail!(
                    "expect_status \"{}-{}\" is an empty range",
                    range.0,
                    range.1
                );
            }
            ranges.push(range);
        }
        Ok(Statuses(ranges))
    }
}

fn parse_range(text: &str) -> Result<(u16, u16)> {
    let bad =
        || anyhow::anyhow!("expect_status \"{text}\" is not a status, \"4xx\" or \"400-499\"");
    let text = text.trim();
    if let Some(class) = text.strip_suffix("xx").or_else(|| text.strip_suffix("XX")) {
        let class: u16 = class.parse().map_err(|_| bad())?;
        return Ok((class * 100, class * 100 + 99));
    }
    match text.split_once('-') {
        Some((lo, hi)) => Ok((
            lo.trim().parse().map_err(|_| bad())?,
            hi.trim().parse().map_err(|_| bad())?,
        )),
        None => {
            let code = text.parse().map_err(|_| bad())?;
            Ok((code, code))
        }
    }
}

impl fmt::Display for Statuses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .0
            .iter()
            .map(|(lo, hi)| match (lo, hi) {
                (lo, hi) if lo == hi => lo.to_string(),
                (lo, hi) if lo % 100 == 0 && *hi == lo + 99 => format!("{}xx", lo / 100),
                (lo, hi) => format!("{lo}-{hi}"),
            })
            .collect();
        match items.as_slice() {
            [one] => f.write_str(one),
            [rest @ .., last] => write!(f, "{} or {last}", rest.join(", ")),
            [] => Ok(()),
        }
    }
}

impl Suite {
    /// Reads and checks a suite. `env` reads environment variables (`url_env`, `${VAR}` in
    /// headers); a missing one is an error, like any other mistake in the file.
    pub fn load(path: &Path, env: impl Fn(&str) -> Option<String>) -> Result<Suite> {
        let text = agui_lens_core::read::read_text(path)?;
        let file: SuiteFile = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))
            .with_context(|| format!("in {}", path.display()))?;
        if file.cases.is_empty() {
            bail!("{} has no [[case]]", path.display());
        }
        let base = path.parent().unwrap_or(Path::new(""));
        let mut names = BTreeSet::new();
        let mut turn_names: BTreeMap<String, String> = BTreeMap::new();
        let mut snapshots: BTreeMap<PathBuf, (String, usize)> = BTreeMap::new();
        let mut cases = Vec::new();
        for spanned in file.cases {
            let line = line_of(&text, spanned.span().start);
            let case = spanned.into_inner().with_defaults(&file.defaults);
            let where_ = format!("{}:{line}", path.display());
            if !names.insert(case.name.clone()) {
                bail!("{where_}: a second case named {:?}", case.name);
            }
            let resolved = resolve(case, cases.len(), line, &text, base, &env)
                .with_context(|| format!("{where_}: in the case starting here"))?;
            // A turn is reported (and its findings kept in a baseline) by its name: a case
            // named `chat / turn 2` beside a conversation `chat` would be one with its turn.
            for turn in &resolved.turns {
                let name = resolved.turn_name(turn);
                if let Some(other) = turn_names.insert(name.clone(), resolved.name.clone()) {
                    bail!(
                        "{where_}: case {:?} turn {} is named {name:?}, as is a turn of case \
                         {other:?}: their results and findings would be one; rename one",
                        resolved.name,
                        turn.number
                    );
                }
            }
            for turn in &resolved.turns {
                let Some(snapshot) = &turn.snapshot else {
                    continue;
                };
                // A snapshot holds its file and the one its pending answer goes to (`.new`).
                let file = same_place(snapshot);
                let mut pending = file.clone().into_os_string();
                pending.push(".new");
                for key in [file, pending.into()] {
                    let this = (resolved.name.clone(), turn.number);
                    if let Some((case, number)) = snapshots.insert(key, this) {
                        bail!(
                            "{}:{}: case {:?} turn {} holds its answer to {}, which case \
                             {case:?} turn {number} uses too (for its snapshot, or for its \
                             pending answer, FILE.new): an update would keep only one answer, \
                             and the next run fail the other; give each its own snapshot file",
                            path.display(),
                            turn.line,
                            resolved.name,
                            turn.number,
                            snapshot.display()
                        );
                    }
                }
            }
            cases.push(resolved);
        }
        Ok(Suite {
            path: path.to_path_buf(),
            cases,
        })
    }

    /// Keeps the cases whose name matches one of the patterns (`*` any run of characters,
    /// `?` one). Fails when a pattern matches no case: a misspelt name must not run nothing.
    pub fn select(&mut self, patterns: &[String]) -> Result<()> {
        if patterns.is_empty() {
            return Ok(());
        }
        for pattern in patterns {
            if !self.cases.iter().any(|c| glob::matches(pattern, &c.name)) {
                bail!(
                    "--case {pattern:?} matches no case in {}; the cases are: {}",
                    self.path.display(),
                    self.cases
                        .iter()
                        .map(|c| format!("{:?}", c.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        self.cases
            .retain(|c| patterns.iter().any(|p| glob::matches(p, &c.name)));
        Ok(())
    }
}

/// Where a file the suite names is, however it is spelt: the file, when there, with its links
/// followed; else its folder, when there, with its links followed; else the path made
/// absolute, `.` and `..` taken out.
fn same_place(path: &Path) -> PathBuf {
    if let Ok(file) = std::fs::canonicalize(path) {
        return file;
    }
    let folder = path.parent().and_then(|folder| {
        let folder = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        };
        std::fs::canonicalize(folder).ok()
    });
    match (folder, path.file_name()) {
        (Some(folder), Some(name)) => folder.join(name),
        _ => crate::commands::plain_path(path).unwrap_or_else(|| path.to_path_buf()),
    }
}

impl Case {
    /// The configured levels with this case's overrides.
    pub fn levels(&self, base: &Levels) -> Levels {
        let mut levels = base.clone();
        for (level, selector) in &self.rules {
            // Checked when the suite was loaded.
            let _ = levels.set(selector, *level);
        }
        levels
    }

    /// The thread the case runs on when its ids are fixed: two such cases on one thread never
    /// run at the same time.
    pub fn fixed_thread(&self) -> Option<&str> {
        if self.fixed_ids {
            self.input.thread_id.as_deref()
        } else {
            None
        }
    }

    /// The name a turn is reported under: the case's, and `/ turn N` when it has several.
    pub fn turn_name(&self, turn: &Turn) -> String {
        if self.turns.len() > 1 {
            format!("{} / turn {}", self.name, turn.number)
        } else {
            self.name.clone()
        }
    }
}

fn resolve(
    case: CaseFile,
    index: usize,
    line: u64,
    text: &str,
    base: &Path,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Case> {
    if case.name.trim().is_empty() {
        bail!("`name` is empty");
    }
    let url = match (case.url, case.url_env) {
        (Some(url), None) => url,
        (None, Some(var)) => env(&var)
            .filter(|v| !v.is_empty())
            .with_context(|| format!("url_env names {var}, which is not set"))?,
        _ => bail!("give exactly one of `url` and `url_env`"),
    };
    let input_file = case.input.as_ref().map(|file| base.join(file));
    let input = match (case.input, case.message) {
        (Some(file), None) => {
            let file = base.join(file);
            let body = agui_lens_core::read::read_whole(&file)
                .map_err(|e| agui_lens_core::read::plainly(&file, e))
                .with_context(|| format!("reading {}", file.display()))?;
            AgentInput::from_bytes(body).with_context(|| format!("reading {}", file.display()))?
        }
        (None, Some(text)) => AgentInput::from_message(&text),
        _ => bail!("give exactly one of `input` and `message`"),
    };
    let fixed_ids = case.fixed_ids.unwrap_or(false);
    if fixed_ids && input.thread_id.is_none() {
        bail!("fixed_ids: the input has no threadId to keep");
    }
    let mut headers = Vec::new();
    for (name, value) in case.headers {
        let value = expand(&name, &value, env)?;
        check_header(&name, &value).map_err(anyhow::Error::msg)?;
        headers.push((name, value));
    }
    let mut rules = Vec::new();
    let mut probe = Levels::default();
    for (level, selectors) in [
        (Level::Allow, case.allow),
        (Level::Warn, case.warn),
        (Level::Deny, case.deny),
    ] {
        for selector in selectors {
            probe.set(&selector, level)?;
            rules.push((level, selector));
        }
    }
    let seconds = |key: &str, value: Option<f64>| -> Result<Option<Duration>> {
        match value {
            None => Ok(None),
            Some(secs) if secs > 0.0 && secs < 1e9 => Ok(Some(Duration::from_secs_f64(secs))),
            Some(secs) => bail!("{key} = {secs} is not a number of seconds above 0"),
        }
    };
    let first = Turn {
        number: 1,
        line,
        adds: TurnAdds::default(),
        expect_status: statuses(case.expect_status.as_ref())?,
        require_events: event_types(&case.require_events)?,
        snapshot: case.snapshot.map(|s| base.join(s)),
        max_first_event: case.max_first_event_ms.map(Duration::from_millis),
    };
    let snapshot_level = case
        .snapshot_level
        .as_deref()
        .map(|name| {
            CompareLevel::parse(name).with_context(|| {
                format!("snapshot_level = {name:?}: it is \"events\", \"compact\" or \"fold\"")
            })
        })
        .transpose()?;
    agui_lens_core::compare::normalize::check_unordered(&case.unordered)
        .map_err(|e| anyhow::anyhow!(e.replace("--unordered ", "unordered: ")))?;
    agui_lens_core::compare::normalize::check_id_settings(&case.id_patterns, &case.id_keys)
        .map_err(|e| {
            anyhow::anyhow!(
                e.replace("--id-pattern", "id_patterns")
                    .replace("--id-key", "id_keys")
            )
        })?;
    let normalize = if case.redact.is_empty()
        && case.id_patterns.is_empty()
        && case.id_keys.is_empty()
        && case.unordered.is_empty()
    {
        None
    } else {
        Some(Settings {
            redact: case
                .redact
                .iter()
                .map(|r| Selector::parse(r).map_err(anyhow::Error::msg))
                .collect::<Result<_>>()?,
            id_patterns: case.id_patterns,
            id_keys: case.id_keys,
            unordered: case.unordered,
            ..Settings::current()
        })
    };
    let mut turns = vec![first];
    for spanned in case.turns {
        let turn_line = line_of(text, spanned.span().start);
        let number = turns.len() + 1;
        let turn = resolve_turn(spanned.into_inner(), number, turn_line, base)
            .with_context(|| format!("line {turn_line}: in turn {number}"))?;
        turns.push(turn);
    }
    Ok(Case {
        name: case.name,
        index,
        line,
        url,
        input,
        input_file,
        fixed_ids,
        headers,
        rules,
        idle_timeout: seconds("idle_timeout", case.idle_timeout)?.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        timeout: seconds("timeout", case.timeout)?,
        accept: case.accept.unwrap_or_default(),
        capabilities: match &case.capabilities {
            Some(source) => Some(crate::declaration::load(source, Some(base)).with_context(
                || {
                    format!(
                        "capabilities = {:?}",
                        crate::live::http::display_url(source)
                    )
                },
            )?),
            None => None,
        },
        snapshot_level,
        normalize,
        turns,
    })
}

fn resolve_turn(turn: TurnFile, number: usize, line: u64, base: &Path) -> Result<Turn> {
    if turn.message.is_none() && turn.tool_results.is_empty() && turn.resume.is_none() {
        bail!("a turn adds something: `message`, `tool_results` or `resume`");
    }
    let mut tool_results = BTreeMap::new();
    for (tool, value) in turn.tool_results {
        let content = match value {
            toml::Value::String(text) => text,
            other => serde_json::to_string(&toml_to_json(other))?,
        };
        tool_results.insert(tool, content);
    }
    let resume = match turn.resume {
        None => None,
        Some(table) => {
            let serde_json::Value::Object(mut entry) = toml_to_json(toml::Value::Table(table))
            else {
                unreachable!("a table converts to an object")
            };
            let status = entry
                .entry("status")
                .or_insert_with(|| serde_json::Value::String("resolved".into()));
            if !matches!(status.as_str(), Some("resolved" | "cancelled")) {
                bail!("resume: status is \"resolved\" or \"cancelled\", not {status}");
            }
            if let Some(other) = entry
                .keys()
                .find(|k| !matches!(k.as_str(), "status" | "payload" | "metadata"))
            {
                bail!("resume: unknown key `{other}` (status, payload, metadata)");
            }
            Some(entry)
        }
    };
    Ok(Turn {
        number,
        line,
        adds: TurnAdds {
            message: turn.message,
            tool_results,
            resume,
        },
        expect_status: statuses(turn.expect_status.as_ref())?,
        require_events: event_types(&turn.require_events)?,
        snapshot: turn.snapshot.map(|s| base.join(s)),
        max_first_event: turn.max_first_event_ms.map(Duration::from_millis),
    })
}

fn statuses(value: Option<&toml::Value>) -> Result<Option<Statuses>> {
    value.map(Statuses::parse).transpose()
}

fn event_types(names: &[String]) -> Result<Vec<EventType>> {
    names
        .iter()
        .map(|name| {
            EventType::from_name(name)
                .with_context(|| format!("require_events: `{name}` is not an AG-UI event type"))
        })
        .collect()
}

/// TOML has no null; everything else maps one to one (dates become their text).
fn toml_to_json(value: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(items) => J::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => J::Object(
            table
                .into_iter()
                .map(|(k, v)| (k, toml_to_json(v)))
                .collect(),
        ),
    }
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> u64 {
    let offset = offset.min(text.len());
    1 + text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "AGENT_URL" => Some("http://127.0.0.1:9/agent".into()),
            "TOKEN" => Some("s3cret".into()),
            _ => None,
        }
    }

    /// One file reached through a linked folder is one file.
    #[test]
    fn a_snapshot_through_a_linked_folder_is_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("snaps")).unwrap();
        std::os::unix::fs::symlink("snaps", dir.path().join("linked")).unwrap();
        let path = dir.path().join("suite.toml");
        let case = |name: &str, snapshot: &str| {
            format!(
                "[[case]]\nname = \"{name}\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"{snapshot}\"\n"
            )
        };
        let text = case("a", "snaps/a.snap") + &case("b", "linked/a.snap");
        std::fs::write(&path, text).unwrap();
        let err = format!("{:#}", Suite::load(&path, env).unwrap_err());
        assert!(
            err.contains("linked/a.snap") && err.contains("case \"a\""),
            "{err}"
        );
        // A file linked to another is that file.
        std::fs::write(dir.path().join("snaps/x.snap"), "").unwrap();
        std::os::unix::fs::symlink("x.snap", dir.path().join("snaps/y.snap")).unwrap();
        let text = case("a", "snaps/x.snap") + &case("b", "snaps/y.snap");
        std::fs::write(&path, text).unwrap();
        let err = format!("{:#}", Suite::load(&path, env).unwrap_err());
        assert!(
            err.contains("y.snap") && err.contains("case \"a\""),
            "{err}"
        );
    }

    fn load(text: &str) -> Result<Suite> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("in.json"),
            r#"{"threadId":"t","runId":"r","messages":[]}"#,
        )
        .unwrap();
        let path = dir.path().join("suite.toml");
        std::fs::write(&path, text).unwrap();
        Suite::load(&path, env)
    }

    #[test]
    fn cases_resolve() {
        let suite = load(
            r#"
[[case]]
name = "chat"
url_env = "AGENT_URL"
input = "in.json"
headers = { Authorization = "Bearer ${TOKEN}" }
require_events = ["TEXT_MESSAGE_START"]
deny = ["order/*"]
allow = ["order/timestamp-unit"]
max_first_event_ms = 3000

[[case]]
name = "hello"
url = "http://127.0.0.1:9/"
message = "Hello"
expect_status = 422
timeout = 1.5
"#,
        )
        .unwrap();
        let [chat, hello] = &suite.cases[..] else {
            panic!()
        };
        assert_eq!(chat.line, 2);
        assert_eq!(chat.url, "http://127.0.0.1:9/agent");
        assert_eq!(
            chat.headers,
            vec![("Authorization".into(), "Bearer s3cret".into())]
        );
        assert_eq!(chat.input.run_id.as_deref(), Some("r"));
        assert_eq!(
            chat.turns[0].require_events,
            vec![EventType::TextMessageStart]
        );
        let levels = chat.levels(&Levels::default());
        assert_eq!(
            levels.level(agui_lens_core::check::catalog::RuleId::OrderTimestampDecreasing),
            Level::Deny,
            "deny is applied last"
        );
        assert_eq!(hello.line, 12);
        assert_eq!(
            hello.turns[0].expect_status,
            Some(Statuses(vec![(422, 422)]))
        );
        assert_eq!(hello.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(hello.idle_timeout, DEFAULT_IDLE_TIMEOUT);
    }

    #[test]
    fn statuses_take_codes_ranges_and_lists() {
        let parse = |text: &str| {
            let value: toml::Table = toml::from_str(&format!("s = {text}")).unwrap();
            Statuses::parse(&value["s"])
        };
        let set = parse("[400, \"422\", \"5xx\", \"300-302\"]").unwrap();
        for (code, inside) in [
            (400, true),
            (422, true),
            (503, true),
            (301, true),
            (401, false),
            (200, false),
        ] {
            assert_eq!(set.contains(code), inside, "{code}");
        }
        assert_eq!(set.to_string(), "400, 422, 5xx or 300-302");
        assert!(!set.expects_stream());
        assert!(parse("\"2xx\"").unwrap().expects_stream());
        for bad in ["[]", "99", "\"4x\"", "\"499-400\"", "true", "\"600\""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn later_turns_say_what_they_add() {
        let suite = load(
            r#"
[[case]]
name = "tool round trip"
url = "http://127.0.0.1:9/"
input = "in.json"
fixed_ids = true

[[case.turn]]
tool_results = { change_background = "done", "*" = { ok = true } }
require_events = ["TEXT_MESSAGE_CONTENT"]
expect_status = "2xx"

[[case.turn]]
message = "and now?"
resume = { payload = { approved = true } }
"#,
        )
        .unwrap();
        let case = &suite.cases[0];
        assert_eq!(case.fixed_thread(), Some("t"));
        let [first, second, third] = &case.turns[..] else {
            panic!("{:?}", case.turns)
        };
        assert_eq!((first.number, first.line), (1, 2));
        assert_eq!((second.number, second.line), (2, 8));
        assert_eq!(third.line, 13);
        assert_eq!(second.adds.tool_results["change_background"], "done");
        assert_eq!(second.adds.tool_results["*"], r#"{"ok":true}"#);
        assert_eq!(second.require_events, vec![EventType::TextMessageContent]);
        let resume = third.adds.resume.as_ref().unwrap();
        assert_eq!(resume["status"], "resolved", "the default status");
        assert_eq!(resume["payload"]["approved"], true);
        assert_eq!(case.turn_name(third), "tool round trip / turn 3");
        for (turn, wanted) in [
            ("require_events = []", "adds something"),
            (
                "message = \"x\"\nresume = { status = \"maybe\" }",
                "resolved",
            ),
            (
                "message = \"x\"\nresume = { answer = 1 }",
                "unknown key `answer`",
            ),
            ("message = \"x\"\ncolour = 1", "colour"),
        ] {
            let text = format!(
                "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\n\n[[case.turn]]\n{turn}\n"
            );
            let err = format!("{:#}", load(&text).unwrap_err());
            assert!(err.contains(wanted), "{turn}: {err}");
        }
    }

    #[test]
    fn cases_are_picked_by_name() {
        let text = "[[case]]\nname = \"chat one\"\nurl = \"http://x/\"\nmessage = \"m\"\n\n[[case]]\nname = \"tools\"\nurl = \"http://x/\"\nmessage = \"m\"\n";
        let mut suite = load(text).unwrap();
        suite.select(&["chat*".into()]).unwrap();
        let names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["chat one"]);
        let mut suite = load(text).unwrap();
        let err = suite.select(&["nope".into()]).unwrap_err().to_string();
        assert!(
            err.contains("matches no case") && err.contains("\"tools\""),
            "{err}"
        );
    }

    #[test]
    fn mistakes_name_their_line() {
        let unknown =
            load("[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\ncolour = 1\n")
                .unwrap_err();
        let text = format!("{unknown:#}");
        assert!(text.contains("line 5") && text.contains("colour"), "{text}");
        for (suite, wanted) in [
            (
                "[[case]]\nname = \"a\"\nmessage = \"m\"\n",
                "exactly one of `url`",
            ),
            (
                "[[case]]\nname = \"a\"\nurl_env = \"NOPE\"\nmessage = \"m\"\n",
                "NOPE, which is not set",
            ),
            (
                "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\nheaders = { A = \"${NOPE}\" }\n",
                "NOPE",
            ),
            (
                "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\nrequire_events = [\"TEXT\"]\n",
                "`TEXT` is not",
            ),
            (
                "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\ndeny = [\"nope/*\"]\n",
                "nope/*",
            ),
            (
                "[[case]]\nname = \"a\"\nurl = \"http://x/\"\ninput = \"missing.json\"\n",
                "missing.json",
            ),
            ("", "no [[case]]"),
        ] {
            let err = format!("{:#}", load(suite).unwrap_err());
            assert!(err.contains(wanted), "{suite:?}: {err}");
        }
        let twice = "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\n\n[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\n";
        let err = format!("{:#}", load(twice).unwrap_err());
        assert!(
            err.contains("suite.toml:6") && err.contains("second case"),
            "{err}"
        );
        // A case named as another's turn is reported as that turn, in either order.
        let conversation = "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\n[[case.turn]]\nmessage = \"n\"\n";
        let alone = "[[case]]\nname = \"a / turn 2\"\nurl = \"http://x/\"\nmessage = \"m\"\n";
        for suite in [
            format!("{conversation}\n{alone}"),
            format!("{alone}\n{conversation}"),
        ] {
            let err = format!("{:#}", load(&suite).unwrap_err());
            assert!(
                err.contains("is named \"a / turn 2\", as is a turn of case"),
                "{err}"
            );
        }
        // Two answers held to one snapshot file: an update keeps the last, and the next
        // run fails the other. Spelt another way, it is the same file.
        let shared = "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"s.snap\"\n\n[[case]]\nname = \"b\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"./x/../s.snap\"\n";
        let err = format!("{:#}", load(shared).unwrap_err());
        assert!(
            err.contains("suite.toml:7") && err.contains("s.snap") && err.contains("case \"a\""),
            "{err}"
        );
        let turns = "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"s.snap\"\n[[case.turn]]\nmessage = \"n\"\nsnapshot = \"s.snap\"\n";
        let err = format!("{:#}", load(turns).unwrap_err());
        assert!(err.contains("s.snap") && err.contains("turn 1"), "{err}");
        let pending = "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"x.snap\"\n\n[[case]]\nname = \"b\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"x.snap.new\"\n";
        let err = format!("{:#}", load(pending).unwrap_err());
        assert!(
            err.contains("x.snap.new") && err.contains("pending"),
            "{err}"
        );
        let apart = "[[case]]\nname = \"a\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"a.snap\"\n\n[[case]]\nname = \"b\"\nurl = \"http://x/\"\nmessage = \"m\"\nsnapshot = \"b.snap\"\n";
        assert!(load(apart).is_ok());
    }
}
