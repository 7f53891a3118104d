//! A conformance suite file (`agui-lens test`): `[[case]]` tables, each a live call and what
//! its answer must be. Everything that can be known before a call is checked at load time,
//! with the line of the case, so a broken suite fails before any agent is called.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::live::http::{Transport, check_header};
use crate::live::request::{AgentInput, expand};
use agui_lens_core::check::catalog::{Level, Levels};
use agui_lens_core::protocol::event::EventType;

/// How long a case waits for bytes unless it says otherwise.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The file as written. Unknown keys are errors: a misspelt expectation must not silently
/// check nothing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    #[serde(default, rename = "case")]
    cases: Vec<toml::Spanned<CaseFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: String,
    url: Option<String>,
    url_env: Option<String>,
    input: Option<PathBuf>,
    message: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    expect_status: Option<u16>,
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
    /// The line of the case's `[[case]]` in the suite file.
    pub line: u64,
    pub url: String,
    pub input: AgentInput,
    /// Values expanded; never printed.
    pub headers: Vec<(String, String)>,
    /// None: any 2xx.
    pub expect_status: Option<u16>,
    pub require_events: Vec<EventType>,
    pub snapshot: Option<PathBuf>,
    /// Rule overrides, applied in this order over the configured levels: allow, warn, deny.
    pub rules: Vec<(Level, String)>,
    pub max_first_event: Option<Duration>,
    pub idle_timeout: Duration,
    pub timeout: Option<Duration>,
    pub accept: Transport,
}

impl Suite {
    /// Reads and checks a suite. `env` reads environment variables (`url_env`, `${VAR}` in
    /// headers); a missing one is an error, like any other mistake in the file.
    pub fn load(path: &Path, env: impl Fn(&str) -> Option<String>) -> Result<Suite> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let file: SuiteFile = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))
            .with_context(|| format!("in {}", path.display()))?;
        if file.cases.is_empty() {
            bail!("{} has no [[case]]", path.display());
        }
        let base = path.parent().unwrap_or(Path::new(""));
        let mut names = BTreeSet::new();
        let mut cases = Vec::new();
        for spanned in file.cases {
            let line = line_of(&text, spanned.span().start);
            let case = spanned.into_inner();
            let where_ = format!("{}:{line}", path.display());
            if !names.insert(case.name.clone()) {
                bail!("{where_}: a second case named {:?}", case.name);
            }
            let resolved = resolve(case, line, base, &env)
                .with_context(|| format!("{where_}: in the case starting here"))?;
            cases.push(resolved);
        }
        Ok(Suite {
            path: path.to_path_buf(),
            cases,
        })
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
}

fn resolve(
    case: CaseFile,
    line: u64,
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
    let input = match (case.input, case.message) {
        (Some(file), None) => {
            let file = base.join(file);
            let body =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            AgentInput::from_bytes(body).with_context(|| format!("reading {}", file.display()))?
        }
        (None, Some(text)) => AgentInput::from_message(&text),
        _ => bail!("give exactly one of `input` and `message`"),
    };
    let mut headers = Vec::new();
    for (name, value) in case.headers {
        let value = expand(&name, &value, env)?;
        check_header(&name, &value).map_err(anyhow::Error::msg)?;
        headers.push((name, value));
    }
    if let Some(status) = case.expect_status
        && !(100..=599).contains(&status)
    {
        bail!("expect_status {status} is not an HTTP status");
    }
    let require_events = case
        .require_events
        .iter()
        .map(|name| {
            EventType::from_name(name)
                .with_context(|| format!("require_events: `{name}` is not an AG-UI event type"))
        })
        .collect::<Result<Vec<_>>>()?;
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
    Ok(Case {
        name: case.name,
        line,
        url,
        input,
        headers,
        expect_status: case.expect_status,
        require_events,
        snapshot: case.snapshot.map(|s| base.join(s)),
        rules,
        max_first_event: case.max_first_event_ms.map(Duration::from_millis),
        idle_timeout: seconds("idle_timeout", case.idle_timeout)?.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        timeout: seconds("timeout", case.timeout)?,
        accept: case.accept.unwrap_or_default(),
    })
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
        assert_eq!(chat.require_events, vec![EventType::TextMessageStart]);
        let levels = chat.levels(&Levels::default());
        assert_eq!(
            levels.level(agui_lens_core::check::catalog::RuleId::OrderTimestampDecreasing),
            Level::Deny,
            "deny is applied last"
        );
        assert_eq!(hello.line, 12);
        assert_eq!(hello.expect_status, Some(422));
        assert_eq!(hello.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(hello.idle_timeout, DEFAULT_IDLE_TIMEOUT);
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
    }
}
