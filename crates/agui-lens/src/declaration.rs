//! An agent's capabilities declaration, read from where a user names it: a file, or an
//! http(s) URL fetched once. The spec leaves how a declaration is obtained to the
//! implementation; reading it (and what it leaves of the rules) is the core's
//! `check::capabilities`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use agui_lens_core::check::capabilities::Capabilities;

use crate::cli::ScopeArgs;

/// How long fetching a declaration may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The declaration `--capabilities` names, if it names one.
pub fn from_flag(scope: &ScopeArgs) -> Result<Option<Capabilities>> {
    scope
        .capabilities
        .as_deref()
        .map(|source| load(source, None))
        .transpose()
}

/// Whether a declaration's source is an `http://` or `https://` URL, not a file.
pub fn is_url(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The declaration `source` names: an `http://` or `https://` URL is fetched with a GET, any
/// other text is a file path, relative to `base` when given (a suite file's directory) and to
/// the current directory otherwise. A declaration that cannot be had, or that breaks the
/// capabilities schema, is an error naming the source.
pub fn load(source: &str, base: Option<&Path>) -> Result<Capabilities> {
    // A URL is shown without the credentials it may carry.
    let shown = crate::live::http::display_url(source);
    let text = if is_url(source) {
        let bytes = crate::live::http::get(source, FETCH_TIMEOUT)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("fetching the capabilities declaration {shown}"))?;
        String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("the capabilities declaration {shown} is not UTF-8"))?
    } else {
        let path = match base {
            Some(base) => base.join(source),
            None => Path::new(source).to_path_buf(),
        };
        agui_lens_core::read::read_whole_text(&path)
            .map_err(|e| agui_lens_core::read::plainly(&path, e))
            .with_context(|| format!("reading the capabilities declaration {source}"))?
    };
    Capabilities::parse(&text).with_context(|| format!("the capabilities declaration {shown}"))
}
