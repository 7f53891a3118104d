//! The rule catalog: every rule agui-lens can report, its documentation and default level,
//! and the levels a user sets. Plain data, below everything that reports or shows a finding.
//!
//! Adding a rule touches four places: its definition in this folder's file of its family (with
//! its tier and the spec page that tier rests on; `docs/tiers.md` says why), one
//! line in `registry!` below, the check that reports it (`check/rules/`, or the command for
//! the live-only `transport/` and `suite/` rules), and one fixture under `fixtures/invalid/`
//! (for the live-only rules, a test in `tests/live.rs`).

/// A page of the AG-UI 1.1 specification (`docs/spec/1.1/` in ag-ui-protocol/ag-ui), by its
/// path there and an anchor. One place to point elsewhere when the pages move.
macro_rules! spec {
    ($page:literal) => {
        concat!(
            "https://github.com/ag-ui-protocol/ag-ui/blob/main/docs/spec/1.1/",
            $page
        )
    };
}

pub mod framing;
pub mod lifecycle;
pub mod order;
pub mod pairing;
pub mod reference;
pub mod request;
pub mod schema;
pub mod state;
pub mod suite;
pub mod tool_args;
pub mod transport;
pub mod version;

use std::fmt;

use serde::Serialize;

/// How serious a finding is once the user's configuration has been applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, never a problem (a stream that declares no protocol version).
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a rule reports as, before or after the user's overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Allow,
    /// Reported as a note: shown, counted apart, never failing a run.
    Note,
    Warn,
    Deny,
}

impl Level {
    pub fn severity(self) -> Option<Severity> {
        match self {
            Level::Allow => None,
            Level::Note => Some(Severity::Note),
            Level::Warn => Some(Severity::Warning),
            Level::Deny => Some(Severity::Error),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Allow => "off",
            Level::Note => "note",
            Level::Warn => "warning",
            Level::Deny => "error",
        }
    }

    /// Parses the spellings a config file may use.
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "allow" | "off" => Some(Level::Allow),
            "note" => Some(Level::Note),
            "warn" | "warning" => Some(Level::Warn),
            "deny" | "error" => Some(Level::Deny),
            _ => None,
        }
    }
}

/// How strongly the protocol asks for what a rule checks, the way conformance kits grade
/// requirements. The tiers nest in this order: `must` ⊂ `should` ⊂ `capability` ⊂ `advice`, so
/// `--tier should` keeps the MUSTs too, and `--tier advice` keeps every rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Tier {
    /// The spec's MUST, MUST NOT or REQUIRED (or, for framing and transport, the MUST of the
    /// JSON, SSE or HTTP binding text the stream travels in).
    Must,
    /// The spec's SHOULD or SHOULD NOT: a departure needs a reason, it is no violation.
    Should,
    /// Asked only of an agent that declares a capability (the rule names which).
    Capability,
    /// agui-lens's own advice: no spec sentence requires it.
    Advice,
}

impl Tier {
    /// Every tier, narrowest first.
    pub const ALL: &'static [Tier] = &[Tier::Must, Tier::Should, Tier::Capability, Tier::Advice];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Must => "must",
            Tier::Should => "should",
            Tier::Capability => "capability",
            Tier::Advice => "advice",
        }
    }

    /// Parses the spellings `as_str` gives.
    pub fn parse(text: &str) -> Option<Tier> {
        Tier::ALL.iter().copied().find(|tier| tier.as_str() == text)
    }

    /// Whether a rule of this tier is kept when checking up to `limit`.
    pub fn within(self, limit: Tier) -> bool {
        self <= limit
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule's definition and documentation. `agui-lens explain` prints these.
#[derive(Debug)]
pub struct Rule {
    /// `family/what-is-wrong`. Public interface: never renamed, never reused.
    pub name: &'static str,
    pub default: Level,
    /// The protocol versions it holds streams to: `every version`, `1.0 and later` …
    pub versions: &'static str,
    /// One line: what the rule checks.
    pub summary: &'static str,
    /// Why it matters to a client or a user.
    pub why: &'static str,
    /// A stream (JSONL) that trips the rule.
    pub example: &'static str,
    /// How strongly the spec asks for what the rule checks.
    pub tier: Tier,
    /// The page (an absolute https URL, with its anchor) of the sentence the tier rests on.
    pub spec: &'static str,
    /// For a `capability` rule, the declaration member that must be `true` for the rule to
    /// apply, as a dotted path into the agent's capabilities (`transport.httpBinary`).
    pub capability: Option<&'static str>,
}

impl Rule {
    pub fn family(&self) -> &'static str {
        self.name.split('/').next().unwrap_or(self.name)
    }
}

macro_rules! registry {
    ($($id:ident => $def:path,)*) => {
        /// A rule's identity: cheap to copy, compare, and index tables by.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleId {
            $($id,)*
        }

        impl RuleId {
            /// Every rule, in registry order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$id,)*];

            pub fn rule(self) -> &'static Rule {
                match self {
                    $(RuleId::$id => &$def,)*
                }
            }
        }
    };
}

registry! {
    FramingInvalidJson => framing::INVALID_JSON,
    FramingInvalidUtf8 => framing::INVALID_UTF8,
    FramingNotAnObject => framing::NOT_AN_OBJECT,
    FramingDuplicateKey => framing::DUPLICATE_KEY,
    FramingLoneSurrogate => framing::LONE_SURROGATE,
    FramingLineTooLong => framing::LINE_TOO_LONG,
    FramingSseUnterminatedFrame => framing::SSE_UNTERMINATED_FRAME,
    FramingSseFramesMerged => framing::SSE_FRAMES_MERGED,
    FramingSseOverClientLimit => framing::SSE_OVER_CLIENT_LIMIT,
    FramingNoEvents => framing::NO_EVENTS,
    FramingProtoTruncated => framing::PROTO_TRUNCATED,
    FramingProtoTooLong => framing::PROTO_TOO_LONG,
    FramingProtoUndecodable => framing::PROTO_UNDECODABLE,
    FramingProtoUnknownArm => framing::PROTO_UNKNOWN_ARM,
    FramingProtoUnknownField => framing::PROTO_UNKNOWN_FIELD,
    FramingProtoOverClientLimit => framing::PROTO_OVER_CLIENT_LIMIT,
    SchemaMissingType => schema::MISSING_TYPE,
    SchemaUnknownEventType => schema::UNKNOWN_EVENT_TYPE,
    SchemaViolation => schema::VIOLATION,
    SchemaUnknownField => schema::UNKNOWN_FIELD,
    SchemaNullForOptional => schema::NULL_FOR_OPTIONAL,
    SchemaDeprecatedEvent => schema::DEPRECATED_EVENT,
    LifecycleFirstEvent => lifecycle::FIRST_EVENT,
    LifecycleRunAlreadyActive => lifecycle::RUN_ALREADY_ACTIVE,
    LifecycleEventAfterFinish => lifecycle::EVENT_AFTER_FINISH,
    LifecycleEventAfterError => lifecycle::EVENT_AFTER_ERROR,
    LifecycleOpenAtFinish => lifecycle::OPEN_AT_FINISH,
    LifecycleOpenAtError => lifecycle::OPEN_AT_ERROR,
    LifecycleUnterminatedRun => lifecycle::UNTERMINATED_RUN,
    LifecycleRunIdMismatch => lifecycle::RUN_ID_MISMATCH,
    LifecycleDuplicateRunId => lifecycle::DUPLICATE_RUN_ID,
    LifecycleUnknownParentRun => lifecycle::UNKNOWN_PARENT_RUN,
    LifecycleThreadChanged => lifecycle::THREAD_CHANGED,
    LifecyclePendingToolCalls => lifecycle::PENDING_TOOL_CALLS,
    LifecycleUsageAccounting => lifecycle::USAGE_ACCOUNTING,
    LifecycleDuplicateInterruptId => lifecycle::DUPLICATE_INTERRUPT_ID,
    PairingTextMessage => pairing::TEXT_MESSAGE,
    PairingToolCall => pairing::TOOL_CALL,
    PairingReasoning => pairing::REASONING,
    PairingReasoningMessage => pairing::REASONING_MESSAGE,
    PairingStep => pairing::STEP,
    PairingSubagent => pairing::SUBAGENT,
    PairingChunkMissingId => pairing::CHUNK_MISSING_ID,
    PairingEmptyDelta => pairing::EMPTY_DELTA,
    PairingMessageIdReused => pairing::MESSAGE_ID_REUSED,
    PairingAttributionMismatch => pairing::ATTRIBUTION_MISMATCH,
    StatePatchFailed => state::PATCH_FAILED,
    StateNoBaseline => state::NO_BASELINE,
    StateTooLarge => state::TOO_LARGE,
    StateActivityPatchFailed => state::ACTIVITY_PATCH_FAILED,
    StateActivityUnknown => state::ACTIVITY_UNKNOWN,
    StateActivityTypeChanged => state::ACTIVITY_TYPE_CHANGED,
    ReferenceUnknownToolCall => reference::UNKNOWN_TOOL_CALL,
    ReferenceUnknownParentMessage => reference::UNKNOWN_PARENT_MESSAGE,
    ReferenceUnknownEntity => reference::UNKNOWN_ENTITY,
    ReferenceDuplicateMessageId => reference::DUPLICATE_MESSAGE_ID,
    ReferenceMessageIdClash => reference::MESSAGE_ID_CLASH,
    ToolArgsInvalidJson => tool_args::INVALID_JSON,
    ToolArgsSchemaViolation => tool_args::SCHEMA_VIOLATION,
    ToolArgsUndeclaredTool => tool_args::UNDECLARED_TOOL,
    ToolArgsEmptyArguments => tool_args::EMPTY_ARGUMENTS,
    ToolArgsFrontendAnswered => tool_args::FRONTEND_ANSWERED,
    OrderTimestampDecreasing => order::TIMESTAMP_DECREASING,
    OrderTimestampUnit => order::TIMESTAMP_UNIT,
    TransportHttpStatus => transport::HTTP_STATUS,
    TransportContentType => transport::CONTENT_TYPE,
    TransportNotNegotiated => transport::NOT_NEGOTIATED,
    TransportConnectionLost => transport::CONNECTION_LOST,
    TransportIdleTimeout => transport::IDLE_TIMEOUT,
    TransportTimeout => transport::TIMEOUT,
    TransportRunIdMismatch => transport::RUN_ID_MISMATCH,
    RequestInputSchema => request::INPUT_SCHEMA,
    RequestProtocolVersion => request::PROTOCOL_VERSION,
    RequestActivitySent => request::ACTIVITY_SENT,
    RequestMissingToolResult => request::MISSING_TOOL_RESULT,
    RequestMissingResume => request::MISSING_RESUME,
    RequestHistoryMismatch => request::HISTORY_MISMATCH,
    RequestStateMismatch => request::STATE_MISMATCH,
    RequestRunIdReused => request::RUN_ID_REUSED,
    RequestUnknownResume => request::UNKNOWN_RESUME,
    SuiteStatusMismatch => suite::STATUS_MISMATCH,
    SuiteMissingEvent => suite::MISSING_EVENT,
    SuiteSnapshotMismatch => suite::SNAPSHOT_MISMATCH,
    SuiteFirstEventSlow => suite::FIRST_EVENT_SLOW,
    SuiteNoStream => suite::NO_STREAM,
    SuiteTurnMismatch => suite::TURN_MISMATCH,
    VersionUndeclared => version::UNDECLARED,
    VersionNewer => version::NEWER,
    VersionUnrecognised => version::UNRECOGNISED,
    VersionUninterpretable => version::UNINTERPRETABLE,
    VersionRemovedEvent => version::REMOVED_EVENT,
}

impl RuleId {
    pub fn name(self) -> &'static str {
        self.rule().name
    }

    pub fn from_name(name: &str) -> Option<RuleId> {
        RuleId::ALL.iter().copied().find(|id| id.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The level of every rule after defaults, config file and flags, and which rules a tier or an
/// agent's capability declaration leaves out.
#[derive(Clone, Debug)]
pub struct Levels {
    levels: Vec<Level>,
    /// Rules left out by [`Levels::limit_to`] or [`Levels::limit_to_declared`]: off whatever
    /// level is set for them before or after, so a tier is a promise no selector breaks.
    left_out: Vec<bool>,
}

impl Default for Levels {
    fn default() -> Self {
        Levels {
            levels: RuleId::ALL.iter().map(|id| id.rule().default).collect(),
            left_out: vec![false; RuleId::ALL.len()],
        }
    }
}

/// A selector that names no rule.
#[derive(Debug, PartialEq, Eq)]
pub struct UnknownSelector(pub String);

impl fmt::Display for UnknownSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` names no rule or family (see `agui-lens rules`)",
            self.0
        )
    }
}

impl std::error::Error for UnknownSelector {}

impl Levels {
    /// Sets the level of the rules a selector names: `family/name`, `family/*`, `family`, or `*`.
    pub fn set(&mut self, selector: &str, level: Level) -> Result<(), UnknownSelector> {
        let matched: Vec<RuleId> = RuleId::ALL
            .iter()
            .copied()
            .filter(|id| selector_matches(selector, id.rule()))
            .collect();
        if matched.is_empty() {
            return Err(UnknownSelector(selector.to_owned()));
        }
        for id in matched {
            self.levels[id.index()] = level;
        }
        Ok(())
    }

    pub fn level(&self, id: RuleId) -> Level {
        if self.left_out[id.index()] {
            Level::Allow
        } else {
            self.levels[id.index()]
        }
    }

    /// Leaves out, for good, every rule whose tier is wider than `tier`: `Tier::Must` keeps only
    /// the MUSTs, `Tier::Advice` keeps everything.
    pub fn limit_to(&mut self, tier: Tier) {
        for id in RuleId::ALL {
            if !id.rule().tier.within(tier) {
                self.left_out[id.index()] = true;
            }
        }
    }

    /// Leaves out, for good, every `capability` rule whose capability `declares` does not
    /// declare (see `check::capabilities`, which reads a declaration).
    pub fn limit_to_declared(&mut self, declares: impl Fn(&str) -> bool) {
        for id in RuleId::ALL {
            if id.rule().capability.is_some_and(|path| !declares(path)) {
                self.left_out[id.index()] = true;
            }
        }
    }

    pub fn severity(&self, id: RuleId) -> Option<Severity> {
        self.level(id).severity()
    }

    /// Every rule reported as a warning is reported as an error: what `--deny-warnings`
    /// asks. A warning that fails the run is an error in every report (JUnit, SARIF, JSON),
    /// not a warning beside a failed exit status.
    pub fn deny_warnings(&mut self) {
        for level in &mut self.levels {
            if *level == Level::Warn {
                *level = Level::Deny;
            }
        }
    }

    pub fn enabled(&self, id: RuleId) -> bool {
        self.level(id) != Level::Allow
    }
}

fn selector_matches(selector: &str, rule: &Rule) -> bool {
    if selector == "*" || selector == rule.name {
        return true;
    }
    let family = selector.strip_suffix("/*").unwrap_or(selector);
    family == rule.family()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for id in RuleId::ALL {
            let rule = id.rule();
            assert!(seen.insert(rule.name), "duplicate rule {}", rule.name);
            let (family, what) = rule.name.split_once('/').expect("family/name");
            assert!(!family.is_empty() && !what.is_empty());
            assert!(
                rule.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c == '/' || c.is_ascii_digit()),
                "{}",
                rule.name
            );
            assert!(!rule.summary.is_empty() && !rule.why.is_empty() && !rule.example.is_empty());
            assert_eq!(RuleId::from_name(rule.name), Some(*id));
        }
    }

    /// Every rule says how strongly the spec asks for what it checks, and links the page that
    /// asks; a rule required only where an agent declares a capability names that capability.
    #[test]
    fn every_rule_has_a_tier_and_a_spec_page() {
        for id in RuleId::ALL {
            let rule = id.rule();
            assert_eq!(
                Tier::parse(rule.tier.as_str()),
                Some(rule.tier),
                "{}",
                rule.name
            );
            let rest = rule
                .spec
                .strip_prefix("https://")
                .unwrap_or_else(|| panic!("{}: spec is no https URL: {}", rule.name, rule.spec));
            let host = rest.split('/').next().unwrap_or("");
            assert!(
                host.contains('.') && rest.len() > host.len() + 1,
                "{}: {}",
                rule.name,
                rule.spec
            );
            assert!(
                !rule.spec.contains(char::is_whitespace),
                "{}: {}",
                rule.name,
                rule.spec
            );
            assert_eq!(
                rule.tier == Tier::Capability,
                rule.capability.is_some(),
                "{}: a capability rule, and only one, names its capability",
                rule.name
            );
        }
        for tier in Tier::ALL {
            assert!(
                RuleId::ALL.iter().any(|id| id.rule().tier == *tier),
                "no rule of tier {tier}"
            );
        }
    }

    #[test]
    fn tiers_nest() {
        assert_eq!(Tier::parse("must"), Some(Tier::Must));
        assert_eq!(Tier::parse("MUST"), None);
        assert!(Tier::Must.within(Tier::Must));
        assert!(Tier::Must.within(Tier::Advice));
        assert!(Tier::Should.within(Tier::Capability));
        assert!(!Tier::Should.within(Tier::Must));
        assert!(!Tier::Advice.within(Tier::Capability));
        assert_eq!(
            serde_json::to_value(Tier::Capability).unwrap(),
            "capability"
        );
    }

    /// A tier switches rules off for good: neither a later selector nor a copy brings them back
    /// (a suite case's overrides are applied to a copy of the configured levels).
    #[test]
    fn a_tier_limits_the_rules_for_good() {
        let mut levels = Levels::default();
        levels.limit_to(Tier::Must);
        assert!(levels.enabled(RuleId::SchemaViolation), "a must rule stays");
        assert!(
            !levels.enabled(RuleId::SchemaUnknownField),
            "a should rule goes"
        );
        assert!(!levels.enabled(RuleId::OrderTimestampUnit), "advice goes");
        assert!(
            !levels.enabled(RuleId::TransportNotNegotiated),
            "capability goes"
        );
        levels.set("*", Level::Deny).unwrap();
        let copy = levels.clone();
        assert_eq!(copy.level(RuleId::OrderTimestampUnit), Level::Allow);
        assert_eq!(copy.level(RuleId::SchemaUnknownField), Level::Allow);
        assert_eq!(copy.level(RuleId::SchemaViolation), Level::Deny);
        let mut wide = Levels::default();
        wide.limit_to(Tier::Capability);
        assert!(wide.enabled(RuleId::TransportNotNegotiated));
        assert!(wide.enabled(RuleId::SchemaUnknownField));
        assert!(!wide.enabled(RuleId::OrderTimestampUnit));
        let mut all = Levels::default();
        all.limit_to(Tier::Advice);
        for id in RuleId::ALL {
            assert_eq!(all.level(*id), id.rule().default, "{id}");
        }
    }

    /// A declaration leaves a capability rule on only where it declares the capability.
    #[test]
    fn capability_rules_follow_what_is_declared() {
        let mut levels = Levels::default();
        levels.limit_to_declared(|path| path == "reasoning.encrypted");
        assert!(!levels.enabled(RuleId::TransportNotNegotiated));
        assert!(
            levels.enabled(RuleId::SchemaUnknownField),
            "other tiers untouched"
        );
        let mut levels = Levels::default();
        levels.limit_to_declared(|path| path == "transport.httpBinary");
        assert!(levels.enabled(RuleId::TransportNotNegotiated));
    }

    #[test]
    fn selectors() {
        let mut levels = Levels::default();
        assert_eq!(
            levels.level(RuleId::SchemaUnknownField),
            Level::Warn,
            "default"
        );
        levels.set("schema/*", Level::Deny).unwrap();
        assert_eq!(levels.level(RuleId::SchemaUnknownField), Level::Deny);
        levels.set("schema/unknown-field", Level::Allow).unwrap();
        assert!(!levels.enabled(RuleId::SchemaUnknownField));
        assert!(levels.enabled(RuleId::SchemaViolation));
        levels.set("framing", Level::Warn).unwrap();
        assert_eq!(
            levels.severity(RuleId::FramingInvalidJson),
            Some(Severity::Warning)
        );
        assert_eq!(
            levels.set("nope/*", Level::Deny),
            Err(UnknownSelector("nope/*".into()))
        );
        assert!(levels.set("schema/violatio", Level::Deny).is_err());
    }
}
