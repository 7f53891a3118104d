//! `agui-lens snapshot`: hold a stream to an expectation stored in a file, the way insta holds
//! values to snapshots — a new or changed result is written beside the expectation as
//! `FILE.new` for review, never accepted silently.
//!
//! A snapshot file is a short header then the normalised items, one JSON object per line with
//! keys in a fixed order:
//!
//! ```text
//! # agui-lens snapshot 1
//! # level: compact
//! # keep: timestamp
//! # redact: /**/metadata
//! # reason: the greeting changed on purpose
//! {"delta":"Hello","messageId":"msg-1","type":"TEXT_MESSAGE_CONTENT"}
//! ```
//!
//! The header says how the stream was normalised, so a comparison needs no flags.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::Outcome;
use super::check::use_color;
use super::diff::{Level, settings as normalize_settings};
use crate::cli::{SnapshotAction, SnapshotArgs};
use agui_lens_core::compare::comparison::{compare, render, summary, unified_diff};
use agui_lens_core::compare::normalize::{Selector, Settings, drop_empty_input_lists};
use agui_lens_core::compare::streams::{ReadNotes, normalized_reading};
use agui_lens_core::read::{self, DEFAULT_MAX_LINE, ReadOptions};

const MAGIC: &str = "# agui-lens snapshot 1";

/// A snapshot file, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub level: Level,
    pub settings: Settings,
    pub reason: Option<String>,
    pub items: Vec<Value>,
    /// The items hold halves of UTF-16 pairs, read as stand-ins (see
    /// `agui_lens_core::read::halves`): written back as their escapes.
    pub halves: bool,
    /// The items hold characters of the range stand-ins are taken from, as text.
    pub range: bool,
}

impl Snapshot {
    pub fn render(&self) -> String {
        let mut out = format!("{MAGIC}\n# level: {}\n", self.level.name());
        for keep in &self.settings.keep {
            out.push_str(&format!("# keep: {keep}\n"));
        }
        for redact in &self.settings.redact {
            out.push_str(&format!("# redact: {redact}\n"));
        }
        if self.settings.payload_ids {
            out.push_str("# ids: payloads\n");
        }
        if self.settings.escape_tokens {
            out.push_str("# ids: escaped\n");
        }
        if self.settings.fold_runs {
            out.push_str("# fold: runs\n");
        }
        for pattern in &self.settings.id_patterns {
            out.push_str(&format!("# id-pattern: {pattern}\n"));
        }
        for key in &self.settings.id_keys {
            out.push_str(&format!("# id-key: {key}\n"));
        }
        for ty in &self.settings.unordered {
            out.push_str(&format!("# unordered: {ty}\n"));
        }
        if let Some(reason) = &self.reason {
            out.push_str(&format!("# reason: {}\n", reason.replace('\n', " ")));
        }
        for item in &self.items {
            // serde_json's maps keep keys sorted: a canonical order.
            let line = serde_json::to_string(item).unwrap_or_default();
            match self.halves {
                true => out.push_str(&agui_lens_core::read::halves::escape_stand_ins(&line)),
                false => out.push_str(&line),
            }
            out.push('\n');
        }
        out
    }

    pub fn parse(text: &str) -> Result<Snapshot, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, first)) if first.trim_end() == MAGIC => {}
            _ => return Err(format!("line 1 is not `{MAGIC}`")),
        }
        let mut level = Level::Compact;
        let mut settings = Settings::default();
        let mut reason = None;
        let mut items = Vec::new();
        let (mut halves, mut range) = (false, false);
        for (n, line) in lines {
            if let Some(header) = line.strip_prefix("# ") {
                if !items.is_empty() {
                    return Err(format!("line {}: a header line after the items", n + 1));
                }
                let (key, value) = header
                    .split_once(": ")
                    .ok_or_else(|| format!("line {}: a header line is `# key: value`", n + 1))?;
                match key {
                    "level" => {
                        level = Level::parse(value)
                            .ok_or_else(|| format!("line {}: unknown level `{value}`", n + 1))?
                    }
                    "keep" => settings.keep.push(value.to_owned()),
                    "redact" => settings
                        .redact
                        .push(Selector::parse(value).map_err(|e| format!("line {}: {e}", n + 1))?),
                    "reason" => reason = Some(value.to_owned()),
                    "ids" if value == "payloads" => settings.payload_ids = true,
                    "ids" if value == "escaped" => settings.escape_tokens = true,
                    "fold" if value == "runs" => settings.fold_runs = true,
                    "id-pattern" => settings.id_patterns.push(value.to_owned()),
                    "id-key" => settings.id_keys.push(value.to_owned()),
                    "unordered" => settings.unordered.push(value.to_owned()),
                    other => return Err(format!("line {}: unknown header `{other}`", n + 1)),
                }
            } else if !line.trim().is_empty() {
                // Half a UTF-16 pair, written as its escape, is read as a stand-in, as the
                // stream it was made from was read.
                halves |= agui_lens_core::read::halves::holds_lone(line);
                range |= agui_lens_core::read::halves::holds_stand_in_range(line.as_bytes());
                let mut item = agui_lens_core::check::parse::value_keeping_halves(line.as_bytes())
                    .map_err(|e| format!("line {}: not JSON: {e}", n + 1))?;
                // Written before an empty resume list counted as none.
                drop_empty_input_lists(&mut item);
                items.push(item);
            }
        }
        // What a flag would be refused for is refused in a header too (a header edited
        // by hand, or written before the refusal).
        agui_lens_core::compare::normalize::check_unordered(&settings.unordered)
            .and_then(|()| {
                agui_lens_core::compare::normalize::check_id_settings(
                    &settings.id_patterns,
                    &settings.id_keys,
                )
            })
            .map_err(|e| {
                let e = e.replace("--unordered ", "unordered: ");
                format!("its header: {}", e.replace("--id-", "id-"))
            })?;
        Ok(Snapshot {
            level,
            settings,
            reason,
            items,
            halves,
            range,
        })
    }
}

pub fn run(args: &SnapshotArgs) -> Result<Outcome> {
    match &args.action {
        Some(SnapshotAction::Accept { file, reason }) => accept(file, reason.as_deref()),
        Some(SnapshotAction::Review { dir, reason }) => review(dir, reason.as_deref(), args),
        None => check(args),
    }
}

/// Whether this runs in CI, where an expectation changes only with a reason.
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

fn pending(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

/// How to hold a stream to a snapshot file.
#[derive(Clone, Debug, Default)]
pub struct Hold {
    /// Write the snapshot from the stream instead of comparing.
    pub update: bool,
    /// Why it changes; recorded in the header (an update in CI needs one).
    pub reason: Option<String>,
    /// Level for a new snapshot, or for an updated one when given; an existing snapshot is
    /// compared at its own.
    pub level: Option<Level>,
    /// Normalisation for a new snapshot; for an updated one, what it changes of the stored
    /// header (an empty list changes nothing: a flag changes what it names, a redaction is added).
    pub settings: Option<Settings>,
}

/// What holding a stream to a snapshot came to.
#[derive(Debug)]
pub enum Verdict {
    /// The stream means what the snapshot says.
    Matches,
    /// `update` wrote a snapshot that did not exist.
    Written,
    /// `update` rewrote the snapshot.
    Updated,
    /// There is no snapshot: the stream's is in `pending` for review.
    New { pending: PathBuf },
    /// The stream differs: the new result is in `pending` for review.
    Changed {
        pending: PathBuf,
        stored: Vec<Value>,
        current: Vec<Value>,
    },
    /// The stream ends inside a run (no RUN_FINISHED or RUN_ERROR after its last
    /// RUN_STARTED): half a stream, neither compared nor written.
    EndsInsideRun,
}

/// Holds a stream to a snapshot file, the way `agui-lens snapshot` does: a missing or
/// different snapshot leaves `FILE.new` beside it, and is never accepted silently.
pub fn hold(stream: &Path, read: &ReadOptions, file: &Path, request: &Hold) -> Result<Verdict> {
    hold_items(file, request, |level, settings| {
        normalized_reading(stream, read, level, settings)
    })
}

/// Holds items to the snapshot in `file`; `make` gives them normalised at a level and with
/// settings (the stored snapshot's, or the request's for a new one).
pub fn hold_items(
    file: &Path,
    request: &Hold,
    mut make: impl FnMut(Level, &Settings) -> Result<(Vec<Value>, ReadNotes)>,
) -> Result<Verdict> {
    // Compared with, a link that leads nowhere is no snapshot still to be written but an
    // error; updated, it is where the snapshot is made (as for any file written).
    let read = agui_lens_core::read::read_whole_text(file);
    let read = if request.update {
        read
    } else {
        read.map_err(|e| read::plainly(file, e))
    };
    let stored = match read {
        Ok(text) => Some(
            Snapshot::parse(&text)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("reading {}", file.display()))?,
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    if request.update && in_ci() && request.reason.is_none() {
        bail!(
            "refusing to update {} in CI without --reason: say why the expectation changes",
            file.display()
        );
    }
    // The stored header decides how to compare; flags apply to new snapshots and updates.
    let flags_given = request.level.is_some() || request.settings.is_some();
    let (level, settings) = match (&stored, request.update && flags_given) {
        (Some(stored), false) => {
            let other_level = request.level.is_some_and(|level| level != stored.level);
            let other_settings = request
                .settings
                .as_ref()
                .is_some_and(|settings| *settings != stored.settings);
            if other_level || other_settings {
                say!(
                    "note: {} records how it compares (its header: level {}{}), and the flags \
                     that say otherwise are not used here; --update writes them into it",
                    file.display(),
                    stored.level.name(),
                    if other_settings {
                        ", what it keeps, redacts and takes for ids"
                    } else {
                        ""
                    }
                );
            }
            if stored.level == Level::Fold && !stored.settings.fold_runs && !request.update {
                // Written before fold-level snapshots held the runs: a run that now ends in
                // RUN_ERROR, or not at all, matches it. Compared as written, and said.
                say!(
                    "warning: {} was written before fold-level snapshots held how each run \
                     ended (it has no `# fold: runs` line): a run that errors or is left open \
                     is not told from one that finishes; review it and --update it to hold the \
                     runs too",
                    file.display()
                );
            }
            let settings = if request.update {
                written_now(&stored.settings)
            } else {
                stored.settings.clone()
            };
            (stored.level, settings)
        }
        // Updated with flags: each changes what it names, the rest of the header stays.
        (Some(stored), true) => (
            request.level.unwrap_or(stored.level),
            merged(&written_now(&stored.settings), request.settings.as_ref()),
        ),
        _ => (
            request.level.unwrap_or(Level::Compact),
            request.settings.clone().unwrap_or_else(Settings::current),
        ),
    };
    let (
        items,
        ReadNotes {
            halves,
            range,
            ends_inside_run,
        },
    ) = make(level, &settings)?;
    // Half a stream (a body that ended cleanly mid-run, as `serve --truncate` ends one) is no
    // expectation, nor held to one: it was made the expectation, exit 0.
    if ends_inside_run {
        return Ok(Verdict::EndsInsideRun);
    }
    // A half on one side and a character of the range it is read into on the other cannot be
    // told apart: not compared, as `diff` does not compare them.
    if let Some(stored) = &stored {
        if (halves || stored.halves) && (range || stored.range) {
            bail!(
                "{} and the stream: one holds half a UTF-16 pair, read as a character of \
                 U+10F800–U+10FFFF as a client joins halves, the other characters of that range \
                 written as text; they cannot be told apart, so they are not compared",
                file.display()
            );
        }
    }
    // A reason belongs to the change it explains: a changed expectation keeps only the one
    // given now; one whose items stay the same keeps its own unless a new one is given.
    let unchanged = stored
        .as_ref()
        .filter(|stored| compare(&stored.items, &items).equal);
    let current = Snapshot {
        level,
        settings,
        reason: request
            .reason
            .clone()
            .or_else(|| unchanged.and_then(|s| s.reason.clone())),
        items,
        halves,
        range,
    };
    let new_file = pending(file);
    // A result an earlier run left for review is older than the expectation written or
    // matched now: reviewed later, it would put the older result back.
    // Only a result agui-lens left (or a link) is taken away: a file of the user's that
    // happens to have its name is said and left.
    let clear_pending = || -> Result<()> {
        let Ok(meta) = std::fs::symlink_metadata(&new_file) else {
            return Ok(());
        };
        if meta.is_symlink() || (meta.is_file() && holds_snapshot(&new_file)) {
            std::fs::remove_file(&new_file)
                .with_context(|| format!("removing {}", new_file.display()))?;
        } else {
            say!(
                "warning: {} holds no snapshot, so it is no result left for review: left as it is",
                new_file.display()
            );
        }
        Ok(())
    };
    // The result for review goes to `FILE.new`: only over a result an earlier run left there,
    // an empty file or a link, never over a file of the user's that happens to have its name.
    let write_pending = |text: &str| -> Result<()> {
        let meta = std::fs::symlink_metadata(&new_file).ok();
        if meta.as_ref().is_some_and(|m| m.is_symlink()) {
            // A link there is taken away as an older result is, never written through: the
            // file it leads to (a note, outside the folder) is not the pending result's.
            std::fs::remove_file(&new_file)
                .with_context(|| format!("removing {}", new_file.display()))?;
        } else if let Some(meta) = meta
            && meta.is_file()
            && meta.len() > 0
            && !holds_snapshot(&new_file)
        {
            bail!(
                "{} holds no snapshot, so it is no result left for review: left as it is, and \
                 the result not written (move it away to have the result written there)",
                new_file.display()
            );
        }
        write_atomically(&new_file, text)
    };
    match stored {
        None if request.update => {
            write_atomically(file, &current.render())?;
            clear_pending()?;
            Ok(Verdict::Written)
        }
        None => {
            write_pending(&current.render())?;
            Ok(Verdict::New { pending: new_file })
        }
        Some(stored) => {
            let comparison = compare(&stored.items, &current.items);
            if comparison.equal && !(request.update && flags_given) {
                clear_pending()?;
                return Ok(Verdict::Matches);
            }
            if request.update {
                write_atomically(file, &current.render())?;
                clear_pending()?;
                return Ok(Verdict::Updated);
            }
            // For review, what --update would write: a snapshot written in an older way (a
            // fold without the runs) is made again the current way, or accepting it would
            // keep the older way (its warnings were said when it was first made).
            let now = written_now(&current.settings);
            if now == current.settings {
                write_pending(&current.render())?;
            } else {
                let (made, _) =
                    agui_lens_core::check::stream::holding_warnings(|| make(level, &now));
                match made {
                    Ok((items, ReadNotes { halves, range, .. })) => {
                        let pending = Snapshot {
                            level,
                            settings: now,
                            reason: current.reason.clone(),
                            items,
                            halves,
                            range,
                        };
                        write_pending(&pending.render())?;
                    }
                    // Read once only (stdin, a FIFO): the result for review is written the
                    // way the snapshot is (it was an error, exit 2, and none was written).
                    Err(err) => {
                        say!(
                            "note: the stream could not be read a second time to write the \
                             result for review the current way ({err:#}): {} holds it the way \
                             {} is written; hold a file to it to have it written the current way",
                            new_file.display(),
                            file.display()
                        );
                        write_pending(&current.render())?;
                    }
                }
            }
            Ok(Verdict::Changed {
                pending: new_file,
                stored: stored.items,
                current: current.items,
            })
        }
    }
}

/// The settings a snapshot stored with `stored` is written with now: what it keeps, redacts
/// and takes for ids stay, and what this build adds to every snapshot it writes is added
/// (ids in payloads, escaped tokens, the runs at the fold level).
fn written_now(stored: &Settings) -> Settings {
    let current = Settings::current();
    let mut settings = stored.clone();
    settings.payload_ids |= current.payload_ids;
    settings.escape_tokens |= current.escape_tokens;
    settings.fold_runs |= current.fold_runs;
    settings
}

/// The settings of a stored snapshot updated with flags (`given`): a flag given replaces what
/// the header held of it (its kept fields, id patterns, id keys, unordered types); a
/// redaction given is added to the header's, which stay (an update that dropped one wrote into
/// the file what it kept out: removing one takes a snapshot written anew).
fn merged(stored: &Settings, given: Option<&Settings>) -> Settings {
    let Some(given) = given else {
        return stored.clone();
    };
    let pick = |given: &Vec<String>, stored: &Vec<String>| {
        if given.is_empty() {
            stored.clone()
        } else {
            given.clone()
        }
    };
    let mut redact = stored.redact.clone();
    for selector in &given.redact {
        if !redact.contains(selector) {
            redact.push(selector.clone());
        }
    }
    Settings {
        keep: pick(&given.keep, &stored.keep),
        redact,
        id_patterns: pick(&given.id_patterns, &stored.id_patterns),
        id_keys: pick(&given.id_keys, &stored.id_keys),
        unordered: pick(&given.unordered, &stored.unordered),
        ..stored.clone()
    }
}

/// Whether the file at `path` starts as a snapshot file does.
fn holds_snapshot(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 32];
    let read = std::fs::File::open(path).and_then(|mut file| file.read(&mut head));
    read.is_ok_and(|n| head[..n].starts_with(MAGIC.as_bytes()))
}

fn check(args: &SnapshotArgs) -> Result<Outcome> {
    let (Some(stream), Some(file)) = (&args.stream, &args.expect) else {
        bail!("give a stream and --expect FILE (or `snapshot accept FILE`, `snapshot review DIR`)");
    };
    // The snapshot, and its pending file, are written: neither may be the stream.
    let stream_arg = [(stream.as_path(), "STREAM")];
    super::refuse_output_over_input(file, "--expect", &stream_arg)?;
    super::refuse_output_over_input(&pending(file), "--expect's pending file", &stream_arg)?;
    let normalize_given = args.normalize.given();
    let request = Hold {
        update: args.update,
        reason: args.reason.clone(),
        level: args.level,
        settings: if normalize_given {
            Some(normalize_settings(&args.normalize)?)
        } else {
            None
        },
    };
    let read = ReadOptions {
        format: args.input_format,
        max_line: DEFAULT_MAX_LINE,
        entry: None,
    };
    // Half a stream is no expectation, nor held to one (it matched the snapshot made of it,
    // and left its half pending for `snapshot accept` beside a whole one).
    if let Some(cut) = super::cut_when_recorded(stream) {
        bail!(
            "{} was cut when it was recorded ({cut}): half a stream is held to no expectation; \
             nothing was compared or written (record the stream whole)",
            stream.display()
        );
    }
    // Caught from here to the end (the stored snapshot read, the comparison, the writing):
    // a stop outside the stream's reading ended the command with nothing said.
    let _caught = crate::signals::Caught::begin();
    // Stopped while the stream is read, nothing is compared or written.
    let unread = format!("the end of {}", stream.display());
    // Stdin or a FIFO is read once: a second reading (the result for review of a snapshot
    // written the older way) waited on a FIFO for a writer that never came.
    let rereadable = std::fs::metadata(stream).is_ok_and(|m| m.is_file());
    let mut readings = 0;
    let verdict = hold_items(file, &request, |level, settings| {
        readings += 1;
        if readings > 1 && !rereadable {
            anyhow::bail!("{} is read once only", stream.display());
        }
        super::reading(
            &unread,
            || {
                if request.update {
                    super::left_unwritten(file)
                } else {
                    "nothing was compared".into()
                }
            },
            || {
                agui_lens_core::compare::streams::warn_unused(level, settings);
                normalized_reading(stream, &read, level, settings)
            },
        )
    })?;
    let mut err = super::Said;
    match verdict {
        Verdict::Matches => Ok(Outcome::Clean),
        // Nor is one that ends inside a run with nothing that says it was cut (`test` holds
        // such an answer to no snapshot either).
        Verdict::EndsInsideRun => {
            writeln!(
                err,
                "{} ends inside a run (no RUN_FINISHED or RUN_ERROR after its last RUN_STARTED): \
                 half a stream is held to no expectation; nothing was compared or written \
                 (record the stream whole)",
                stream.display()
            )?;
            Ok(Outcome::Findings)
        }
        Verdict::Written => {
            writeln!(err, "wrote {}", file.display())?;
            Ok(Outcome::Clean)
        }
        Verdict::Updated => {
            writeln!(err, "updated {}", file.display())?;
            Ok(Outcome::Clean)
        }
        Verdict::New { pending } => {
            writeln!(
                err,
                "no snapshot at {}: wrote {} — review it and accept it with `agui-lens snapshot accept {}`",
                file.display(),
                pending.display(),
                file.display()
            )?;
            Ok(Outcome::Findings)
        }
        Verdict::Changed {
            pending,
            stored,
            current,
        } => {
            let labels = (
                file.to_string_lossy().into_owned(),
                format!("{} (now)", stream.display()),
            );
            let labels = (labels.0.as_str(), labels.1.as_str());
            // Made whole before any of it is shown (the line diff of a long stream takes a
            // while): stopped meanwhile, nothing is, and the pending snapshot stays.
            let shown = super::reading(
                "the difference was shown",
                || {
                    format!(
                        "nothing was shown; {} holds the stream as it is now",
                        pending.display()
                    )
                },
                || {
                    let color = use_color(args.color);
                    let mut text = summary(&compare(&stored, &current), labels);
                    text.push('\n');
                    text.push_str(&unified_diff(
                        &render(&stored),
                        &render(&current),
                        labels,
                        &crate::render::diff_painter(color),
                        args.max_lines,
                    ));
                    Ok(text)
                },
            )?;
            super::writing_stdout("the difference", |out| Ok(out.write_all(shown.as_bytes())?))?;
            writeln!(
                err,
                "the stream no longer matches {}: wrote {} (accept it with `agui-lens snapshot accept {}`)",
                file.display(),
                pending.display(),
                file.display()
            )?;
            Ok(Outcome::Findings)
        }
    }
}

fn accept(file: &Path, reason: Option<&str>) -> Result<Outcome> {
    let new_file = pending(file);
    if !new_file.exists() {
        bail!("nothing to accept: {} does not exist", new_file.display());
    }
    if in_ci() && reason.is_none() {
        bail!(
            "refusing to accept {} in CI without --reason: say why the expectation changes",
            new_file.display()
        );
    }
    promote(&new_file, file, reason)?;
    say!("accepted {}", file.display());
    Ok(Outcome::Clean)
}

/// Makes a pending snapshot the expectation, its header carrying `reason` (and no other).
fn promote(new_file: &Path, file: &Path, reason: Option<&str>) -> Result<()> {
    let text = agui_lens_core::read::read_whole_text(new_file)
        .with_context(|| format!("reading {}", new_file.display()))?;
    let mut snapshot = Snapshot::parse(&text)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("reading {}", new_file.display()))?;
    // Only a snapshot is replaced, as `--update` writes over no other file.
    match agui_lens_core::read::read_whole(file) {
        Ok(bytes) => {
            if let Err(why) = std::str::from_utf8(&bytes)
                .map_err(|e| e.to_string())
                .and_then(|text| Snapshot::parse(text).map(drop))
            {
                bail!(
                    "{} is no agui-lens snapshot ({why}): left as it was, and {} with it",
                    file.display(),
                    new_file.display()
                );
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    }
    if let Some(reason) = reason {
        snapshot.reason = Some(reason.to_owned());
    }
    write_atomically(file, &snapshot.render())?;
    std::fs::remove_file(new_file).with_context(|| format!("removing {}", new_file.display()))
}

/// Walks the pending `.new` files under a directory, showing each change and asking what to do.
/// What a reviewer answered for one pending snapshot.
enum Choice {
    Accept,
    Reject,
    Skip,
}

fn review(dir: &Path, reason: Option<&str>, args: &SnapshotArgs) -> Result<Outcome> {
    if in_ci() && reason.is_none() {
        bail!(
            "refusing to review snapshots in CI without --reason: say why the expectations change"
        );
    }
    let mut found = Vec::new();
    collect_pending(dir, &mut found)?;
    found.sort();
    let mut out = io::stdout().lock();
    if found.is_empty() {
        writeln!(out, "no pending snapshots under {}", dir.display())?;
        return Ok(Outcome::Clean);
    }
    let color = use_color(args.color);
    let stdin = io::stdin();
    let interactive = stdin.is_terminal();
    let mut answers = stdin.lock().lines();
    let (mut accepted, mut rejected, mut skipped, mut unreadable) = (0, 0, 0, 0);
    for new_file in &found {
        let file = new_file.with_extension("");
        // One that cannot be read is named and left as it is; the others are still offered.
        let read = |path: &Path| -> Result<Snapshot> {
            let text = agui_lens_core::read::read_whole_text(path)
                .map_err(|e| read::plainly(path, e))
                .with_context(|| format!("reading {}", path.display()))?;
            Snapshot::parse(&text)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("reading {}", path.display()))
        };
        let new = match read(new_file) {
            Ok(new) => new,
            Err(err) => {
                say!("agui-lens: {err:#}: left as it is");
                unreadable += 1;
                continue;
            }
        };
        let old = match std::fs::symlink_metadata(&file) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            _ => match read(&file) {
                Ok(old) => old.items,
                Err(err) => {
                    say!("agui-lens: {err:#}: {} left as it is", new_file.display());
                    unreadable += 1;
                    continue;
                }
            },
        };
        writeln!(out, "── {} ──", file.display())?;
        let labels = ("old", "new");
        write!(out, "{}", summary(&compare(&old, &new.items), labels))?;
        write!(
            out,
            "{}",
            unified_diff(
                &render(&old),
                &render(&new.items),
                labels,
                &crate::render::diff_painter(color),
                args.max_lines
            )
        )?;
        // An answer that is none of the three is asked again: a typo never decides.
        let choice = loop {
            write!(out, "accept (a), reject (r), skip (s)? ")?;
            out.flush()?;
            let answer = match answers.next() {
                Some(line) => line?,
                None => {
                    writeln!(out)?;
                    break Choice::Skip;
                }
            };
            if !interactive {
                writeln!(out, "{}", answer.trim())?;
            }
            match answer.trim() {
                "a" | "accept" => break Choice::Accept,
                "r" | "reject" => break Choice::Reject,
                "s" | "skip" => break Choice::Skip,
                other => writeln!(out, "\"{other}\" is not an answer: type a, r or s")?,
            }
        };
        match choice {
            Choice::Accept => {
                promote(new_file, &file, reason)
                    .with_context(|| format!("accepting {}", new_file.display()))?;
                accepted += 1;
            }
            Choice::Reject => {
                std::fs::remove_file(new_file)
                    .with_context(|| format!("rejecting {}", new_file.display()))?;
                rejected += 1;
            }
            Choice::Skip => skipped += 1,
        }
    }
    let unread = if unreadable > 0 {
        format!(", {unreadable} could not be read")
    } else {
        String::new()
    };
    writeln!(
        out,
        "accepted {accepted}, rejected {rejected}, skipped {skipped}{unread}"
    )?;
    Ok(if unreadable > 0 {
        Outcome::Failed
    } else if skipped > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

fn collect_pending(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        // A link to a folder is not followed: it may loop, or lead out of the tree.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_pending(&path, found)?;
        } else if path.extension().is_some_and(|e| e == "new") {
            found.push(path);
        }
    }
    Ok(())
}

/// Writes a file by renaming a finished temp file over it (see [`super::write_file`]).
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = super::directory_of(path);
    super::create_folders(dir).with_context(|| format!("creating {}", dir.display()))?;
    super::write_bytes(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_round_trip() {
        let snapshot = Snapshot {
            level: Level::Fold,
            settings: Settings {
                keep: vec!["timestamp".into()],
                redact: vec![Selector::parse("/**/metadata").unwrap()],
                payload_ids: true,
                id_patterns: vec!["lc_run--*".into()],
                id_keys: vec!["checkpoint_ns".into()],
                unordered: vec!["TOOL_CALL_RESULT".into()],
                fold_runs: true,
                escape_tokens: true,
            },
            reason: Some("new greeting".into()),
            items: vec![
                json!({"role":"user","id":"msg-1","content":"hi"}),
                json!({"state":null}),
            ],
            halves: false,
            range: false,
        };
        let text = snapshot.render();
        assert!(
            text.starts_with("# agui-lens snapshot 1\n# level: fold\n# keep: timestamp\n# redact: /**/metadata\n# ids: payloads\n# ids: escaped\n# fold: runs\n# id-pattern: lc_run--*\n# id-key: checkpoint_ns\n# unordered: TOOL_CALL_RESULT\n# reason: new greeting\n"),
            "{text}"
        );
        let legacy = Snapshot::parse("# agui-lens snapshot 1\n# level: compact\n{}\n").unwrap();
        assert!(
            !legacy.settings.payload_ids,
            "a snapshot written before payload ids compares as it was written"
        );
        assert!(
            !legacy.settings.fold_runs,
            "a snapshot written before runs were folded compares as it was written"
        );
        assert!(
            !legacy.settings.escape_tokens,
            "a snapshot written before tokens were escaped compares as it was written"
        );
        assert!(text.contains("{\"content\":\"hi\",\"id\":\"msg-1\",\"role\":\"user\"}\n"));
        assert_eq!(Snapshot::parse(&text).unwrap(), snapshot);
        assert!(Snapshot::parse("# agui-lens snapshot 1\n# colour: red\n").is_err());
        assert!(Snapshot::parse("{}\n").is_err());
    }
}
