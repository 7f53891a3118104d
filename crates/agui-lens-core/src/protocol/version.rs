//! Protocol versions: which ones agui-lens knows, and what a declared `protocolVersion` says.
//!
//! A stream declares its version on each RUN_STARTED (`protocolVersion`, "MAJOR.MINOR", the
//! producer's own); a RunAgentInput declares the client's. A missing declaration means a peer
//! from before versioning (docs/spec/1.1/basic/versioning in ag-ui-protocol/ag-ui).

use std::fmt;

/// A version whose rules agui-lens holds streams to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// The releases before versioning that real servers still run: `@ag-ui/core` 0.0.x (the
    /// CopilotKit runtime ships 0.0.48), the Python `ag-ui-protocol` 0.1.x (Microsoft's agent
    /// framework). THINKING_* events, nulls in optional fields, fractional timestamps.
    Pre1,
    /// 1.0, as `@ag-ui/core@1.0.0` has it.
    V1_0,
    /// 1.1: 1.0 and `encryptedValueType`.
    V1_1,
}

impl Version {
    /// The newest version agui-lens knows: what a stream is held to when it declares none
    /// and nothing else is asked, as the spec has a peer of unknown version treated.
    pub const NEWEST: Version = Version::V1_1;

    pub const ALL: &'static [Version] = &[Version::Pre1, Version::V1_0, Version::V1_1];

    /// `0.x`, `1.0`, `1.1`: also the folder of its schemas under `schemas/`.
    pub fn name(self) -> &'static str {
        match self {
            Version::Pre1 => "0.x",
            Version::V1_0 => "1.0",
            Version::V1_1 => "1.1",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// A version as a user names it: `1.1`, `1.0`, or any pre-1.0 release (`0.x`, `0`,
    /// `0.0.48`, `0.1.22`).
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        match text {
            "1.1" => Some(Version::V1_1),
            "1.0" | "1" => Some(Version::V1_0),
            "0" | "0.x" => Some(Version::Pre1),
            _ if text.starts_with("0.")
                && text[2..]
                    .split('.')
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit())) =>
            {
                Some(Version::Pre1)
            }
            _ => None,
        }
    }

    /// Whether THINKING_* events are part of this version (they were removed in 1.0).
    pub fn has_thinking_events(self) -> bool {
        self == Version::Pre1
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Version {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Version::parse(text).ok_or_else(|| {
            format!("`{text}` is no protocol version agui-lens knows (1.1, 1.0, or 0.x for the releases before 1.0)")
        })
    }
}

/// What a declared `protocolVersion` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Declared {
    /// A version agui-lens knows.
    Known(Version),
    /// A newer version than agui-lens knows (`1.2`, `2.0`): held to the newest it knows.
    Newer,
    /// Not `MAJOR.MINOR` (`1.0.0`, `latest`): held to the newest it knows, as the spec has
    /// an uninterpretable version handled.
    Uninterpretable,
}

/// Reads a declared version: `MAJOR.MINOR`, each a run of digits, compared as numbers.
pub fn read_declared(text: &str) -> Declared {
    let Some((major, minor)) = text.split_once('.') else {
        return Declared::Uninterpretable;
    };
    let number = |part: &str| {
        (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse::<u64>().ok())
            .flatten()
    };
    let (Some(major), Some(minor)) = (number(major), number(minor)) else {
        return Declared::Uninterpretable;
    };
    match (major, minor) {
        (0, _) => Declared::Known(Version::Pre1),
        (1, 0) => Declared::Known(Version::V1_0),
        (1, 1) => Declared::Known(Version::V1_1),
        _ => Declared::Newer,
    }
}

/// The version a run is held to when it declares `declared`: a version agui-lens knows is
/// its own; a newer or uninterpretable one is held to the newest; none at all to `asked`
/// (`--protocol`), else the newest.
pub fn judged_by(declared: Option<&str>, asked: Option<Version>) -> Version {
    match declared.map(read_declared) {
        Some(Declared::Known(version)) => version,
        Some(Declared::Newer | Declared::Uninterpretable) => Version::NEWEST,
        None => asked.unwrap_or(Version::NEWEST),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_versions_are_read_as_numbers() {
        assert_eq!(read_declared("1.0"), Declared::Known(Version::V1_0));
        assert_eq!(read_declared("1.1"), Declared::Known(Version::V1_1));
        assert_eq!(
            read_declared("1.10"),
            Declared::Newer,
            "1.10 is newer than 1.9"
        );
        assert_eq!(read_declared("2.0"), Declared::Newer);
        assert_eq!(read_declared("0.9"), Declared::Known(Version::Pre1));
        for odd in ["1.0.0", "1", "latest", "", "1.x", " 1.0", "1.-1"] {
            assert_eq!(read_declared(odd), Declared::Uninterpretable, "{odd}");
        }
    }

    #[test]
    fn users_name_versions_and_releases() {
        assert_eq!(Version::parse("0.0.48"), Some(Version::Pre1));
        assert_eq!(Version::parse("0.1.22"), Some(Version::Pre1));
        assert_eq!(Version::parse("0.x"), Some(Version::Pre1));
        assert_eq!(Version::parse("1.0"), Some(Version::V1_0));
        assert_eq!(Version::parse("1.1"), Some(Version::V1_1));
        assert_eq!(Version::parse("1.2"), None);
        assert_eq!(Version::parse("0.a"), None);
        assert!(Version::NEWEST == *Version::ALL.last().unwrap());
    }
}
