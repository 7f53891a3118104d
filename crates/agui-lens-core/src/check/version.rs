//! Which protocol version each run of a stream is held to: the one its RUN_STARTED declares,
//! else `--protocol`, else the newest agui-lens knows; and the version rules.

use serde::Serialize;

use super::catalog::RuleId;
use super::diagnostic::Diagnostic;
use super::parse::finding;
use crate::protocol::event::Event;
use crate::protocol::version::{Declared, Version, read_declared};

/// The version a stretch of a stream was judged by, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VersionUse {
    /// `1.1`, `1.0`, `0.x`.
    pub version: &'static str,
    /// What the stream declared (`protocolVersion` as written), if anything.
    pub declared: Option<String>,
    /// Why this version: `declared`, `newer than known`, `uninterpretable`, `--protocol`,
    /// `newest known` (nothing declared, nothing asked).
    pub why: &'static str,
    /// The index of the first event judged by it.
    pub from_event: u64,
    /// How many runs started under it.
    pub runs: u64,
}

/// Follows the versions a stream's runs declare.
#[derive(Debug)]
pub struct Versioning {
    /// For runs that declare nothing: `--protocol`, else the newest.
    default: Version,
    /// `--protocol` was given.
    asked: bool,
    current: Version,
    /// The current run declared a version it can be held to: one agui-lens knows, or a newer
    /// one (so what that version lacks is the run's own error). A declaration that reads as
    /// no version at all does not count.
    declared: bool,
    /// The current run declared a version newer than agui-lens knows.
    newer: bool,
    undeclared_reported: bool,
    uses: Vec<VersionUse>,
}

impl Versioning {
    pub fn new(asked: Option<Version>) -> Self {
        let default = asked.unwrap_or(Version::NEWEST);
        Versioning {
            default,
            asked: asked.is_some(),
            current: default,
            declared: false,
            newer: false,
            undeclared_reported: false,
            uses: Vec::new(),
        }
    }

    /// The version the current event is held to.
    pub fn current(&self) -> Version {
        self.current
    }

    /// The current run declared a version newer than agui-lens knows: what that version may
    /// add cannot be judged.
    pub fn newer(&self) -> bool {
        self.newer
    }

    /// What the current run declared, as written, when it declared a version it can be held
    /// to (see [`Versioning::run_started`]).
    pub fn declared(&self) -> Option<&str> {
        if !self.declared {
            return None;
        }
        self.uses.last().and_then(|last| last.declared.as_deref())
    }

    /// Every version the stream was judged by, in order.
    pub fn uses(&self) -> &[VersionUse] {
        &self.uses
    }

    /// A RUN_STARTED: its declaration (or its lack) decides its run's version.
    pub fn run_started(&mut self, event: &Event, found: &mut Vec<Diagnostic>) {
        let declared = event.value.get("protocolVersion");
        let text = declared.and_then(|v| v.as_str());
        self.newer = false;
        let (version, why) = match (declared, text) {
            (None, _) | (Some(serde_json::Value::Null), _) => {
                if !self.undeclared_reported {
                    self.undeclared_reported = true;
                    let how = if self.asked {
                        format!("judged by {} (--protocol)", self.default)
                    } else {
                        format!(
                            "judged by {}, the newest version agui-lens knows (--protocol 0.x judges it by the rules before 1.0)",
                            self.default
                        )
                    };
                    found.push(
                        finding(
                            RuleId::VersionUndeclared,
                            &event.loc,
                            format!(
                                "RUN_STARTED declares no protocolVersion, as peers from before versioning send none: {how}"
                            ),
                        )
                        .with_help("since 1.0 a producer declares its own version on RUN_STARTED: \"protocolVersion\": \"1.0\"")
                        .with_subject(""),
                    );
                }
                self.declared = false;
                let why = if self.asked {
                    "--protocol"
                } else {
                    "newest known"
                };
                (self.default, why)
            }
            (Some(_), Some(text)) => {
                self.declared = true;
                match read_declared(text) {
                    Declared::Known(version) => (version, "declared"),
                    Declared::Newer => {
                        self.newer = true;
                        found.push(
                            finding(
                                RuleId::VersionNewer,
                                &event.loc,
                                format!(
                                    "RUN_STARTED declares protocol {text:?}, newer than agui-lens knows: checked by {}",
                                    Version::NEWEST
                                ),
                            )
                            .with_help("what the newer version adds shows as unknown fields and events; a newer agui-lens judges it")
                            .with_subject(text),
                        );
                        (Version::NEWEST, "newer than known")
                    }
                    Declared::Uninterpretable => {
                        // Handled like a newer version, as the spec has a declaration a party
                        // cannot interpret handled (and the official client does): what the
                        // newest known version does not name is not judged as an error.
                        self.newer = true;
                        found.push(
                            finding(
                                RuleId::VersionUninterpretable,
                                &event.loc,
                                format!(
                                    "RUN_STARTED declares protocol {text:?}, which is not MAJOR.MINOR: handled like a newer version than agui-lens knows (as the spec has a declaration that cannot be read handled), and checked by {}",
                                    Version::NEWEST
                                ),
                            )
                            .with_help("declare the version as the spec names it: \"1.0\", \"1.1\"")
                            .with_subject(text),
                        );
                        (Version::NEWEST, "uninterpretable")
                    }
                }
            }
            (Some(_), None) => {
                // Not a string: the schema reports it; the run is judged as one that declares
                // none.
                self.declared = false;
                (self.default, "uninterpretable")
            }
        };
        self.current = version;
        let declared = text.map(str::to_owned);
        match self.uses.last_mut() {
            Some(last)
                if last.version == version.name()
                    && last.why == why
                    && last.declared == declared =>
            {
                last.runs += 1;
            }
            _ => self.uses.push(VersionUse {
                version: version.name(),
                declared,
                why,
                from_event: event.loc.index,
                runs: 1,
            }),
        }
    }
}
