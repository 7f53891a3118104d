//! Baselines: today's findings, recorded so that a team adopting agui-lens on old captures
//! (or an agent with known faults) fails only on new ones, the way linters let a codebase
//! adopt them gradually.
//!
//! A finding is recognised by its rule, its input and a fingerprint of what it says — the
//! event type, the pointer, the subject and the message with its numbers taken out — never
//! by its line, so a finding that moved (an event inserted above it, a renumbered stream)
//! is still the one recorded. A number is a run of digits standing alone ("line 4", "event
//! 12"); digits inside a name (`/x1`, `msg-2`, `"42"`) are part of the name, and kept. The
//! first version of the file took every digit out, so that a finding on `/x2` was held back
//! by one recorded on `/x1`: such a file is still read as it was written (see [`Baseline::version`]). Findings with the same fingerprint are counted: a baseline that
//! holds two of them admits two, and a third is new.
//!
//! A stream of a browser capture is keyed by its call, not by its entry's index: the file,
//! the request's method and URL, and which call to that URL it is (`session.har (POST
//! https://app.example/agent, call 2)`), so that a capture made again with other traffic in
//! front (a health check, a page load) keeps its known findings, and one call's findings are
//! never held by another's record. Version 2 files keyed such a stream by its entry
//! (`session.har#2 (POST …)`), and are read as written.
//!
//! An input that holds no events (`framing/no-events`, and `suite/no-stream` for a suite case)
//! is never recorded nor held back: it is no capture with a known fault, and a baseline must
//! not make it pass as one. Nor is any other `suite/*` finding: what a suite's case expects is
//! its author's to change, in the suite.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::check::catalog::RuleId;
use crate::check::diagnostic::Diagnostic;

/// The file's format version written: 2 keeps digits inside names in the fingerprint, 3 keys
/// a browser capture's streams by their calls, 4 names inputs from the file's own folder
/// (earlier versions named them from the folder the baseline was recorded from), 5 keys a
/// suite's cases by the suite and the case ([`case_key`]; earlier versions by the case's name
/// alone, so that two suites' cases of one name, recorded into one file, held each other's).
pub const VERSION: u64 = 5;

/// One recorded finding and how many times it was seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub rule: String,
    pub path: String,
    pub fingerprint: String,
    pub count: u64,
    /// The first message seen with this fingerprint, for a person reading the file.
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct File {
    version: u64,
    findings: Vec<Entry>,
}

/// Recorded findings, and how many of each are still to be met in this run.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    left: BTreeMap<(String, String, String), u64>,
    here: Here,
    version: u64,
}

/// Builds a baseline from the findings of a run.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    entries: BTreeMap<(String, String, String), Entry>,
    here: Here,
}

/// How findings' paths are keyed: the current folder, taken once, the first time a path is
/// keyed (see [`same_file_key`]), and the calls the streams of browser captures were named by
/// (see [`Baseline::name_call`]).
#[derive(Clone, Debug, Default)]
struct Here {
    folder: std::sync::OnceLock<(Option<std::path::PathBuf>, Option<std::path::PathBuf>)>,
    /// A stream's name (`session.har#2`) → its key (`session.har (POST …, call 1)`).
    calls: std::collections::HashMap<String, String>,
}

impl Here {
    fn key(&self, path: &str) -> String {
        if !self.calls.is_empty() {
            // A stream's findings name it with its request after its name (`x.har#2 (POST …)`).
            let ends = std::iter::once(path.len()).chain(path.match_indices(" (").map(|(i, _)| i));
            for end in ends {
                if let Some(key) = self.calls.get(&path[..end]) {
                    return key.clone();
                }
            }
        }
        self.file_key(path)
    }

    fn file_key(&self, path: &str) -> String {
        let (here, canonical) = self.folder.get_or_init(Folder::current);
        same_file_key_in(path, here.as_deref(), canonical.as_deref())
    }

    fn name_call(&mut self, stream: &str, file: &str, call: &str) {
        let key = format!("{} ({call})", self.file_key(file));
        self.calls.insert(stream.to_owned(), key);
    }
}

impl Baseline {
    /// Parses a baseline file, its inputs named as written. Errors name what is wrong.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        Baseline::parse_at(text, None)
    }

    /// Parses the baseline file at `file`: the inputs a version 4 (or later) file names from its folder
    /// are named from the current folder, as findings' paths are.
    pub fn parse_at(text: &str, file_path: Option<&std::path::Path>) -> Result<Baseline, String> {
        let file: File = serde_json::from_str(text).map_err(|e| {
            // serde's own words name the parser's types (`struct File`): the file's shape
            // is said instead, with where reading it failed.
            format!(
                "not an agui-lens baseline (a JSON object with \"version\" and \"findings\", \
                     as --update-baseline writes it): {} at line {} column {}",
                match e.classify() {
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                        "not JSON".to_owned()
                    }
                    // "missing field `findings`" helps; "expected struct File" does not.
                    _ => {
                        let said = e.to_string();
                        let said = said.split(" at line ").next().unwrap_or_default();
                        if said.contains("struct ") {
                            "another shape".to_owned()
                        } else {
                            said.to_owned()
                        }
                    }
                },
                e.line(),
                e.column()
            )
        })?;
        if !(1..=VERSION).contains(&file.version) {
            return Err(format!(
                "baseline version {} (this agui-lens reads versions 1 to {VERSION})",
                file.version
            ));
        }
        let mut left = BTreeMap::new();
        let here = Here::default();
        let folders = Folders::of_version(file.version, file_path);
        for entry in file.findings {
            let path = folders.to_here(&entry.path);
            let count = left
                .entry((entry.rule, here.key(&path), entry.fingerprint))
                .or_insert(0u64);
            *count = count.saturating_add(entry.count);
        }
        Ok(Baseline {
            left,
            here,
            version: file.version,
        })
    }

    /// The version of the file read. A version 1 file holds fingerprints made with every
    /// digit taken out, and is matched that way: it holds back what it held, including a
    /// finding whose name differs from the recorded one by a digit only. Rewriting it
    /// (`--update-baseline`) makes it the current version.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Names a stream of a browser capture (`session.har#2`, as its findings are named) by its
    /// call (`POST https://app.example/agent, call 1`: the first call to that URL in the
    /// capture), which keys its findings in place of its entry's index. A file of a version
    /// before 3 keyed them by the index, and is read so.
    pub fn name_call(&mut self, stream: &str, file: &str, call: &str) {
        if self.version >= 3 {
            self.here.name_call(stream, file, call);
        }
    }

    /// Whether the file keys streams of browser captures by their entries' indexes (a
    /// version before 3 that holds such a stream's findings): a capture made again with
    /// another entry in front shifts them.
    pub fn keys_streams_by_entry(&self) -> bool {
        self.version < 3
            && self.left.keys().any(|(_, path, _)| {
                path.split_once('#').is_some_and(|(_, entry)| {
                    let digits = entry.bytes().take_while(u8::is_ascii_digit).count();
                    digits > 0 && entry[digits..].starts_with(" (")
                })
            })
    }

    /// Whether the finding was recorded (and not yet met as often as recorded): it is then
    /// known, and held back.
    pub fn admits(&mut self, d: &Diagnostic) -> bool {
        let key = self.here.key(&d.path);
        self.admits_as(d, key)
    }

    /// As [`Baseline::admits`], the finding's input keyed `key` (a suite's case by its name
    /// alone, as files before version 5 keyed it).
    pub fn admits_as(&mut self, d: &Diagnostic, key: String) -> bool {
        if !adoptable(d) {
            return false;
        }
        let print = match self.version {
            1 => fingerprint_v1(d),
            _ => fingerprint(d),
        };
        let key = (d.rule.name().to_owned(), key, print);
        match self.left.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// The key of the finding's input here: its path named as the file's keys are (a
    /// capture's stream by its call).
    pub fn key_of(&self, d: &Diagnostic) -> String {
        self.here.key(&d.path)
    }

    /// The files the baseline holds findings of, named as its keys name them (before what a
    /// capture's stream or a suite's case adds to a file's name; see [`key_file`]).
    pub fn input_files(&self) -> std::collections::BTreeSet<&str> {
        self.left
            .keys()
            .map(|(_, path, _)| key_file(path).0)
            .collect()
    }

    /// How many recorded findings were not met: fixed since the baseline was written.
    pub fn unmet(&self) -> u64 {
        self.left.values().sum()
    }

    /// How many recorded findings of the inputs checked in this run (`checked`, given a
    /// finding's key) were not met: those of an input this run did not read were not looked
    /// for.
    pub fn unmet_where(&self, checked: impl Fn(&str) -> bool) -> u64 {
        self.left
            .iter()
            .filter(|((_, path, _), _)| checked(path))
            .map(|(_, n)| n)
            .sum()
    }
}

/// The key of an input checked in this run, as a finding's path is keyed.
pub fn input_key(name: &str) -> String {
    same_file_key(name)
}

/// The name of a capture's stream by its call, as findings of it are keyed (see
/// [`Baseline::name_call`]).
pub fn call_key(file: &str, call: &str) -> String {
    format!("{} ({call})", same_file_key(file))
}

/// What a suite's case adds to the suite's path in a key: `suite.toml (case "checkout")`.
const CASE: &str = " (case \"";

/// The key of the findings of a suite's case (one turn's name: `checkout`, `chat / turn 2`)
/// from version 5 on: the suite's file and the case, so that two suites with a case of one
/// name each keep their own.
pub fn case_key(suite: &str, case: &str) -> String {
    call_key(suite, &case_call(case))
}

/// What follows the suite in a case's key, as [`Baseline::name_call`] takes it.
pub fn case_call(case: &str) -> String {
    format!("case {case:?}")
}

/// Whether a finding keyed at `path` is of the input keyed `input`, by their text: the input
/// itself, or a stream within it (`x.har (POST …, call 1)`, `x.har#2`).
pub fn of_input(path: &str, input: &str) -> bool {
    path.strip_prefix(input)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(" (") || rest.starts_with('#'))
}

/// What [`Recorder::carry_over`] did with the findings a baseline held of inputs this run
/// did not check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Carried {
    /// Kept as they were.
    pub kept: u64,
    /// Of those, the findings of a file of an earlier version (which named inputs from the
    /// folder it was recorded from) whose input names no file from here (`there` said so).
    pub unfound: u64,
    /// Left out: the file was written by an earlier version, whose fingerprints this one
    /// does not make.
    pub older: u64,
}

impl Recorder {
    /// As [`Baseline::name_call`].
    pub fn name_call(&mut self, stream: &str, file: &str, call: &str) {
        self.here.name_call(stream, file, call);
    }

    /// Records a finding; false for one no baseline may hold (an input with no events).
    pub fn record(&mut self, d: &Diagnostic) -> bool {
        if !adoptable(d) {
            return false;
        }
        let print = fingerprint(d);
        let path = self.here.key(&d.path);
        let key = (d.rule.name().to_owned(), path.clone(), print.clone());
        self.entries
            .entry(key)
            .or_insert_with(|| Entry {
                rule: d.rule.name().to_owned(),
                path,
                fingerprint: print,
                count: 0,
                message: d.message.clone(),
            })
            .count += 1;
        true
    }

    pub fn findings(&self) -> u64 {
        self.entries.values().map(|e| e.count).sum()
    }

    /// Keeps the findings the baseline `old` (its file's text) recorded of inputs this run did
    /// not check (`checked`, given a finding's key, says which it did): recording part of the
    /// inputs replaces what the baseline held of those, not of the others. Those of a file of
    /// an earlier version are left out (their fingerprints are not this version's). `there`
    /// says whether a key names an input found from here, to count those that do not.
    pub fn carry_over(
        &mut self,
        (old, at): (&str, &std::path::Path),
        checked: impl Fn(&str) -> bool,
        there: impl Fn(&str) -> bool,
    ) -> Carried {
        let mut carried = Carried::default();
        let Ok(file) = serde_json::from_str::<File>(old) else {
            return carried;
        };
        let folders = Folders(Folders::of(at));
        for entry in file.findings {
            let from_file = folders.to_here(&entry.path);
            let path = if file.version >= 4 {
                from_file
            } else if !there(&entry.path) && there(&from_file) {
                // An earlier version named inputs from the folder it was recorded from, which
                // it does not say: one found from the file's folder (where most are recorded),
                // and not from here, is named from there.
                from_file
            } else {
                entry.path.clone()
            };
            let path = self.here.key(&path);
            if checked(&path) {
                continue;
            }
            // (Version 4 changed how inputs are named, not fingerprints.)
            if file.version < 3 {
                carried.older += entry.count;
                continue;
            }
            carried.kept += entry.count;
            // (An input a version 4+ file names that is not found is gone: what it names from
            // here is what it named where it was recorded.)
            if file.version < 4 && !there(&path) {
                carried.unfound += entry.count;
            }
            let key = (entry.rule.clone(), path.clone(), entry.fingerprint.clone());
            let kept = self.entries.entry(key).or_insert(Entry {
                path,
                count: 0,
                ..entry.clone()
            });
            kept.count = kept.count.saturating_add(entry.count);
        }
        carried
    }

    /// The baseline file to be written at `at` (its folder there): entries sorted by path,
    /// rule and fingerprint, so that a rewritten baseline differs from the old one only where
    /// findings changed. Inputs are named from the file's folder; when that folder and the
    /// current one cannot both be found, from the current one, in a version 3 file.
    pub fn render(&self, at: &std::path::Path) -> String {
        let folders = Folders::of(at);
        let version = if folders.is_some() { VERSION } else { 3 };
        let folders = Folders(folders);
        let mut findings: Vec<Entry> = self
            .entries
            .values()
            .map(|entry| Entry {
                path: folders.to_file(&entry.path),
                ..entry.clone()
            })
            .collect();
        findings.sort_by(|a, b| {
            (&a.path, &a.rule, &a.fingerprint).cmp(&(&b.path, &b.rule, &b.fingerprint))
        });
        let file = File { version, findings };
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The folder of a baseline file and the current folder, both as the file system names them
/// (links resolved): a version 4 file names its inputs from its folder, findings name them
/// from the current one. None when either cannot be found; inputs are then named as written.
struct Folders(Option<(std::path::PathBuf, std::path::PathBuf)>);

impl Folders {
    fn of(file: &std::path::Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        // A link to the file names its inputs from the folder of the file it leads to.
        let folder = match std::fs::canonicalize(file) {
            Ok(file) => file.parent()?.to_path_buf(),
            Err(_) => {
                let folder = file
                    .parent()
                    .filter(|folder| !folder.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."));
                std::fs::canonicalize(folder).ok()?
            }
        };
        let here = std::fs::canonicalize(std::env::current_dir().ok()?).ok()?;
        Some((folder, here))
    }

    /// The folders of the file at `file`, of `version`: none before 4, whose inputs are named
    /// from the folder the file was recorded from, which it does not say.
    fn of_version(version: u64, file: Option<&std::path::Path>) -> Folders {
        Folders(file.filter(|_| version >= 4).and_then(Folders::of))
    }

    /// An input named in the file, named from here.
    fn to_here(&self, key: &str) -> String {
        match &self.0 {
            Some((file, here)) => rebase(key, file, here),
            None => key.to_owned(),
        }
    }

    /// An input named from here, named in the file.
    fn to_file(&self, key: &str) -> String {
        match &self.0 {
            Some((file, here)) => rebase(key, here, file),
            None => key.to_owned(),
        }
    }
}

/// A key split into its file's path and what a capture's stream or a suite's case adds to it
/// (` (POST https://…, call 1)`, ` (case "checkout")`; empty for a file of its own).
pub fn key_file(key: &str) -> (&str, &str) {
    key.split_at(file_end(key))
}

/// Where what a capture's stream adds to its file's path begins in a key (` (POST
/// https://…, call 1)`; `#2` or `#2 (POST …)` in files of version 2; a suite's case, ` (case
/// "…")`), or the key's end: a `#` or ` (` elsewhere is part of a name.
fn file_end(key: &str) -> usize {
    // A suite's case (version 5): what follows is the case's name, slashes and all.
    if let Some(at) = key.find(CASE).filter(|_| key.ends_with("\")")) {
        return at;
    }
    let call = key.match_indices(" (").map(|(at, _)| at).find(|&at| {
        let rest = &key[at + 2..];
        let method = rest.bytes().take_while(u8::is_ascii_uppercase).count();
        method > 0 && rest[method..].starts_with(' ') && rest.contains("://") && key.ends_with(')')
    });
    let entry = key.rfind('#').filter(|&at| {
        let rest = &key[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && (digits == rest.len() || call == Some(at + 1 + digits))
    });
    // (Split so, a name such as `..#1` or `sub/#2` would leave no file's name before it.)
    let names_a_file = |at: &usize| {
        let before = &key[..*at];
        let name = before.rsplit('/').next().unwrap_or_default();
        !matches!(name, "" | "." | "..")
    };
    entry
        .filter(names_a_file)
        .or(call.filter(names_a_file))
        .unwrap_or(key.len())
}

/// `key`, an input named from the folder `from`, named from the folder `to` (both absolute,
/// as the file system names them): the file's path before what a capture's stream adds to it
/// (see [`file_end`]) is moved, its `..` taken back a folder as written (after a link, where
/// the link leads: the file's folder as the file system names it); what is no relative path
/// (a URL, an absolute path, stdin) stays as it is.
fn rebase(key: &str, from: &std::path::Path, to: &std::path::Path) -> String {
    let (file, rest) = key.split_at(file_end(key));
    if from == to
        || file.contains("://")
        || file.starts_with('/')
        || file == "-"
        || file.starts_with('<')
    {
        return key.to_owned();
    }
    match folders_of(std::path::Path::new(file), from) {
        Some(at) => format!("{}{rest}", named_from(to, &at)),
        None => key.to_owned(),
    }
}

/// The names of a folder's path, from the root.
fn names(path: &std::path::Path) -> Vec<String> {
    path.components()
        .filter_map(|part| match part {
            std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// Where the relative path `file` leads from the folder `from` (absolute, as the file system
/// names it), as the names of its path from the root: `.` dropped, `..` taken back a folder
/// as written, except right after a link, where the file system decides (the file's folder
/// as it names it; none when it cannot be found, nor for an absolute path).
fn folders_of(file: &std::path::Path, from: &std::path::Path) -> Option<Vec<String>> {
    use std::path::Component;
    let mut at = names(from);
    let mut walked = from.to_path_buf();
    for part in file.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if std::fs::symlink_metadata(&walked).is_ok_and(|m| m.file_type().is_symlink()) {
                    let joined = from.join(file);
                    let (name, folder) = joined
                        .file_name()
                        .zip(joined.parent().and_then(|f| std::fs::canonicalize(f).ok()))?;
                    let mut at = names(&folder);
                    at.push(name.to_string_lossy().into_owned());
                    return Some(at);
                }
                walked.pop();
                at.pop();
            }
            Component::Normal(name) => {
                walked.push(name);
                at.push(name.to_string_lossy().into_owned());
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(at)
}

/// The path `at` (names from the root) named from the folder `to` (absolute).
fn named_from(to: &std::path::Path, at: &[String]) -> String {
    let to = names(to);
    let common = at.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; to.len() - common];
    parts.extend(at[common..].iter().map(String::as_str));
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// A finding's path as a baseline keys it: one file named as `captures/a.jsonl`,
/// `./captures//a.jsonl` or by its absolute path (under the current folder) is one key, so a
/// folder named another way holds the same findings. What is no file path (a URL, a suite's
/// case) is kept as written.
pub fn same_file_key(path: &str) -> String {
    let (here, canonical) = Folder::current();
    same_file_key_in(path, here.as_deref(), canonical.as_deref())
}

/// The current folder as named and as the file system names it (links resolved).
struct Folder;

impl Folder {
    fn current() -> (Option<std::path::PathBuf>, Option<std::path::PathBuf>) {
        let here = std::env::current_dir().ok();
        let canonical = here.as_ref().and_then(|h| std::fs::canonicalize(h).ok());
        (here, canonical)
    }
}

/// [`same_file_key`] with the current folder given, as named and as the file system names it.
fn same_file_key_in(
    path: &str,
    here: Option<&std::path::Path>,
    canonical: Option<&std::path::Path>,
) -> String {
    use std::path::{Component, Path};
    let (file, rest) = path.split_at(file_end(path));
    if file.contains("://") || file == "-" || file.starts_with('<') {
        return path.to_owned();
    }
    let written = Path::new(file);
    // Under the current folder (as named, or as the file system names it), named from it.
    let inside = [here, canonical]
        .into_iter()
        .flatten()
        .find_map(|here| written.strip_prefix(here).ok());
    let relative = inside.unwrap_or(written);
    if let Some(here) = canonical.filter(|_| !relative.is_absolute())
        && let Some(at) = folders_of(relative, here)
    {
        return format!("{}{rest}", named_from(here, &at));
    }
    // As written (an absolute path elsewhere, a `..` after a link that leads nowhere).
    let mut parts: Vec<String> = Vec::new();
    for part in relative.components() {
        match part {
            Component::CurDir => {}
            Component::RootDir => parts.push(String::new()),
            other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
        }
    }
    let named = match parts.as_slice() {
        [] => ".".to_owned(),
        [root] if root.is_empty() => "/".to_owned(),
        _ => parts.join("/"),
    };
    format!("{named}{rest}")
}

/// Whether a finding may be recorded in a baseline: not one that says an input (or a suite
/// case's answer) is no stream, nor an answer that is no success (a 500, a redirect), from
/// which a client reads no events at all; nor what a suite's case expects and did not get
/// (`suite/*`: its status, events, snapshot, timing, turns), which the suite's author wrote
/// down to hold: held back, a case expecting a refusal passed as the agent accepted the input,
/// and one with no snapshot yet passed on every run.
fn adoptable(d: &Diagnostic) -> bool {
    !matches!(
        d.rule,
        RuleId::FramingNoEvents | RuleId::TransportHttpStatus
    ) && !d.rule.name().starts_with("suite/")
}

/// What identifies a finding within its rule and input, whatever line it is on: 16 hex digits
/// of a 64-bit FNV-1a hash (stable across platforms and versions of Rust) of the event type,
/// pointer, keyword, subject and the message with each number written `#`. A number is a run
/// of digits standing alone: not right after a letter, a digit's neighbours in a name (`-`,
/// `_`, `/`, `.`, `:`) or a quote, nor right before a letter or `_`; or six digits or more
/// in a row anywhere (a timestamp an id was minted with). So "line 12" and "operation 3" lose
/// their numbers, `/x1`, `msg-2`, `/items/5` and `"42"` keep theirs, and `run_1732000000`
/// is `run_#`.
pub fn fingerprint(d: &Diagnostic) -> String {
    fingerprint_with(d, |message| {
        let bytes = message.as_bytes();
        let in_name = |b: u8| b.is_ascii_alphanumeric() || b"-_/.:\"'`~#".contains(&b);
        let mut out = String::with_capacity(message.len());
        let mut kept = 0;
        let mut at = 0;
        while at < bytes.len() {
            if !bytes[at].is_ascii_digit() {
                at += 1;
                continue;
            }
            let start = at;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            let before = start.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(at).copied();
            let alone = !before.is_some_and(in_name)
                && !after.is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
            // A long run inside a name is a clock or a counter an agent mints anew at every
            // run (`thread_1732000000`), not part of what the finding is about.
            if alone || at - start >= MINTED_DIGITS {
                // A decimal is one number: "16.5 MiB" as "16.0 MiB".
                if after == Some(b'.') && bytes.get(at + 1).is_some_and(u8::is_ascii_digit) {
                    at += 1;
                    while at < bytes.len() && bytes[at].is_ascii_digit() {
                        at += 1;
                    }
                }
                out.push_str(&message[kept..start]);
                out.push('#');
                kept = at;
            }
        }
        out.push_str(&message[kept..]);
        out
    })
}

/// Digits in a row, inside a name, from which on they are taken for minted (a timestamp, a
/// sequence number) and taken out as a number standing alone is.
const MINTED_DIGITS: usize = 6;

/// The fingerprint of a version 1 baseline: every run of digits written `#`, in names too.
pub fn fingerprint_v1(d: &Diagnostic) -> String {
    fingerprint_with(d, |text| {
        let mut message = String::with_capacity(text.len());
        let mut in_digits = false;
        for c in text.chars() {
            if c.is_ascii_digit() {
                if !in_digits {
                    message.push('#');
                }
                in_digits = true;
            } else {
                message.push(c);
                in_digits = false;
            }
        }
        message
    })
}

fn fingerprint_with(d: &Diagnostic, numbers_out: impl Fn(&str) -> String) -> String {
    let parts = [&d.event_type, &d.pointer, &d.keyword, &d.subject];
    let mut parts: Vec<&str> = parts.iter().map(|p| p.as_deref().unwrap_or("")).collect();
    let message = numbers_out(&d.message);
    parts.push(&message);
    hash_of(&parts)
}

/// 16 hex digits of the 64-bit FNV-1a hash of `parts`, each followed by a separator no text
/// holds.
pub fn hash_of(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::catalog::Severity;
    use std::path::Path;

    fn finding(line: u64, message: &str) -> Diagnostic {
        let mut d = Diagnostic::whole_input(
            RuleId::PairingToolCall,
            Severity::Error,
            "a.jsonl".into(),
            message.into(),
        );
        d.line = Some(line);
        d.event_index = Some(line - 1);
        d.event_type = Some("TOOL_CALL_END".into());
        d
    }

    #[test]
    fn a_moved_finding_is_the_recorded_one_and_counts_hold() {
        let mut recorder = Recorder::default();
        recorder.record(&finding(4, "TOOL_CALL_END for c1 at event 3 has no start"));
        recorder.record(&finding(9, "TOOL_CALL_END for c1 at event 8 has no start"));
        assert_eq!(recorder.findings(), 2);
        let text = recorder.render(std::path::Path::new("known.json"));
        let mut baseline = Baseline::parse(&text).unwrap();
        // Both moved down a line, and a third of the same kind is new.
        assert!(baseline.admits(&finding(5, "TOOL_CALL_END for c1 at event 4 has no start")));
        assert!(baseline.admits(&finding(10, "TOOL_CALL_END for c1 at event 9 has no start")));
        assert!(!baseline.admits(&finding(
            12,
            "TOOL_CALL_END for c1 at event 11 has no start"
        )));
        assert!(!baseline.admits(&finding(3, "TOOL_CALL_END for c2 at event 2 has no start")));
        let mut other_file = finding(4, "TOOL_CALL_END for c1 at event 3 has no start");
        other_file.path = "b.jsonl".into();
        let mut again = Baseline::parse(&text).unwrap();
        assert!(!again.admits(&other_file));
        assert_eq!(again.unmet(), 2);
    }

    #[test]
    fn one_file_named_two_ways_is_one_key() {
        assert_eq!(same_file_key("./caps//a.jsonl"), "caps/a.jsonl");
        assert_eq!(same_file_key("caps/./a.jsonl"), "caps/a.jsonl");
        assert_eq!(same_file_key("../caps/a.jsonl"), "../caps/a.jsonl");
        assert_eq!(same_file_key("/elsewhere/a.jsonl"), "/elsewhere/a.jsonl");
        assert_eq!(
            same_file_key("http://agent/run?x=./y"),
            "http://agent/run?x=./y"
        );
        let here = std::env::current_dir().unwrap();
        let inside = here.join("caps").join("a.jsonl");
        assert_eq!(same_file_key(inside.to_str().unwrap()), "caps/a.jsonl");
    }

    #[test]
    fn an_input_with_no_events_is_never_adopted() {
        let empty = Diagnostic::whole_input(
            RuleId::FramingNoEvents,
            Severity::Error,
            "empty.jsonl".into(),
            "no AG-UI events: the input is empty".into(),
        );
        let mut recorder = Recorder::default();
        recorder.record(&empty);
        assert_eq!(recorder.findings(), 0);
        let forged = format!(
            r#"{{"version":1,"findings":[{{"rule":"framing/no-events","path":"empty.jsonl","fingerprint":"{}","count":1,"message":""}}]}}"#,
            fingerprint(&empty)
        );
        assert!(!Baseline::parse(&forged).unwrap().admits(&empty));
    }

    /// A hand-made file whose counts of one finding add up past what a count holds reads as
    /// "that many", not as a panic (or a count wrapped to 0).
    #[test]
    fn counts_past_the_largest_add_up_to_the_largest() {
        let d = finding(1, "x");
        let text = format!(
            r#"{{"version":1,"findings":[
                {{"rule":"pairing/tool-call","path":"a.jsonl","fingerprint":"{0}","count":18446744073709551615,"message":""}},
                {{"rule":"pairing/tool-call","path":"a.jsonl","fingerprint":"{0}","count":1,"message":""}}]}}"#,
            fingerprint(&d)
        );
        let mut baseline = Baseline::parse(&text).unwrap();
        assert!(baseline.admits(&d));
    }

    /// A version 1 file is matched as it was written: by fingerprints with every digit out.
    #[test]
    fn a_version_1_file_holds_what_it_held() {
        let recorded = finding(3, "STATE_DELTA operation 0 (replace /x1)");
        let text = format!(
            r#"{{"version":1,"findings":[{{"rule":"pairing/tool-call","path":"a.jsonl","fingerprint":"{}","count":2,"message":""}}]}}"#,
            fingerprint_v1(&recorded)
        );
        let mut baseline = Baseline::parse(&text).unwrap();
        assert_eq!(baseline.version(), 1);
        assert!(baseline.admits(&finding(5, "STATE_DELTA operation 0 (replace /x1)")));
        assert!(baseline.admits(&finding(5, "STATE_DELTA operation 0 (replace /x2)")));
        assert!(!baseline.admits(&recorded));
        let mut recorder = Recorder::default();
        recorder.record(&recorded);
        let rewritten =
            Baseline::parse(&recorder.render(std::path::Path::new("known.json"))).unwrap();
        assert_eq!(rewritten.version(), VERSION);
    }

    #[test]
    fn fingerprints_are_stable_and_files_are_checked() {
        // The value is part of the file format: it must not change between releases.
        assert_eq!(
            fingerprint(&finding(1, "TOOL_CALL_END for c1 at event 0 has no start")),
            fingerprint(&finding(
                70,
                "TOOL_CALL_END for c1 at event 69 has no start"
            ))
        );
        assert_eq!(
            fingerprint(&finding(1, "x")),
            "e380ce42eab3e54f",
            "FNV-1a of the parts (computed apart, in Python)"
        );
        assert!(Baseline::parse("{}").is_err());
        // Numbers standing alone go, digits in names stay.
        let print = |m: &str| fingerprint(&finding(1, m));
        assert_eq!(
            print("operation 3 (replace /x1) at line 12, 16.5 MiB"),
            print("operation 0 (replace /x1) at line 4, 2.0 MiB")
        );
        // Ids minted from a clock at each run of a live agent.
        assert_eq!(
            print("message \"msg_1732000000123\" was never started"),
            print("message \"msg_1732000999456\" was never started")
        );
        for (one, other) in [
            ("replace /x1", "replace /x2"),
            ("message \"msg-1\"", "message \"msg-2\""),
            ("add /items/5", "add /items/6"),
            ("message \"42\"", "message \"43\""),
            ("call 2a", "call 3a"),
            ("capture.har#1", "capture.har#2"),
        ] {
            assert_ne!(print(one), print(other), "{one}");
            assert_eq!(
                fingerprint_v1(&finding(1, one)),
                fingerprint_v1(&finding(1, other)),
                "{one}"
            );
        }
        assert!(
            Baseline::parse(r#"{"version":6,"findings":[]}"#)
                .unwrap_err()
                .contains("version 6")
        );
    }

    /// An input named from one folder is named from another as the same file; what is no
    /// file's relative path is left as written.
    #[test]
    fn inputs_are_named_from_another_folder() {
        let (top, sub) = (Path::new("/w"), Path::new("/w/sub"));
        for (key, from_sub) in [
            ("a.jsonl", "../a.jsonl"),
            ("sub/a.jsonl", "a.jsonl"),
            ("sub", "."),
            ("./x/../b.jsonl", "../b.jsonl"),
            (
                "c.har (POST https://app/x, call 1)",
                "../c.har (POST https://app/x, call 1)",
            ),
            (
                "sub/c.har#2 (POST https://app/x)",
                "c.har#2 (POST https://app/x)",
            ),
            ("../other/a.jsonl", "../../other/a.jsonl"),
            ("sub/#x.jsonl", "#x.jsonl"),
            ("#x.jsonl", "../#x.jsonl"),
            ("sub/ (y).jsonl", " (y).jsonl"),
            ("sub/#b/c.jsonl", "#b/c.jsonl"),
            ("d#1/a.jsonl", "../d#1/a.jsonl"),
            (
                "c.har#2 (POST https://app/x)",
                "../c.har#2 (POST https://app/x)",
            ),
            ("c.har#2", "../c.har#2"),
            ("sub/..#1", "..#1"),
            ("sub/.#1", ".#1"),
            ("#1", "../#1"),
        ] {
            assert_eq!(rebase(key, top, sub), from_sub, "{key}");
        }
        for key in ["https://agent/run", "/abs/a.jsonl", "-", "<stdin>"] {
            assert_eq!(rebase(key, top, sub), key);
        }
        assert_eq!(
            rebase("a.jsonl", Path::new("/w/x"), Path::new("/w/y")),
            "../x/a.jsonl"
        );
    }
}
