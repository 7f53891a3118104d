//! `--baseline FILE` for `check` and `test`: known findings are held back, new ones fail;
//! `--update-baseline` records today's findings instead. See `agui_lens_core::report::baseline`
//! for what makes two findings the same.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::BaselineArgs;
use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::Stats;
use agui_lens_core::report::baseline::{Baseline, Carried, Recorder};

/// What a run does with its findings and a baseline.
pub struct Gate {
    path: PathBuf,
    mode: Mode,
    /// Findings held back since the last [`Gate::take_held`], by severity.
    held: Stats,
    held_total: u64,
    /// Errors seen while recording that no baseline may hold.
    unadopted_errors: u64,
    /// Why the findings recorded are not all there would be, when they are not (a case
    /// that could not ask its agent): such a record is not written.
    incomplete: Option<String>,
    /// The inputs checked in this run, when the command says which (`check`): a baseline's
    /// findings of other inputs were not looked for, and recording keeps them. None: every
    /// finding it holds is of this run.
    checked: Option<Checked>,
    /// The files a held baseline names, by identity, once a finding was not held by its
    /// input's name (see [`admitted_as_the_same_file`]).
    named_files: Option<HashMap<(u64, u64), Vec<String>>>,
}

enum Mode {
    Hold(Baseline),
    /// Recording (what the baseline holds is read when it is written: see [`Gate::finish`]).
    Record(Recorder),
}

impl Gate {
    /// None without `--baseline`. A baseline that is missing is an error unless it is being
    /// written: a misspelt path must not hold nothing back silently.
    pub fn load(args: &BaselineArgs) -> Result<Option<Gate>> {
        let Some(path) = &args.baseline else {
            return Ok(None);
        };
        let mode = if args.update_baseline {
            // Only a baseline, or nothing, is replaced: a path naming a stream or a config by
            // mistake keeps what it holds (refused now, before anything is checked).
            baseline_there(path)?;
            Mode::Record(Recorder::default())
        } else {
            let text = agui_lens_core::read::read_whole_text(path)
                .map_err(|e| agui_lens_core::read::plainly(path, e))
                .with_context(|| {
                    format!(
                        "reading the baseline {} (write one with --update-baseline)",
                        path.display()
                    )
                })?;
            let baseline = Baseline::parse_at(&text, Some(path))
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("in {}", path.display()))?;
            if baseline.version() == 1 {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "agui-lens: {} is a version 1 baseline, whose fingerprints take every digit \
                     out of a finding, names too: a finding on /x2 or message \"m2\" is held \
                     back by one recorded on /x1 or \"m1\". It is read as written; rewrite it \
                     with --update-baseline (version {})",
                    path.display(),
                    agui_lens_core::report::baseline::VERSION
                );
            }
            if baseline.keys_streams_by_entry() {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "agui-lens: {} keys the streams of browser captures by their entries' \
                     indexes (version {}): a capture made again with another entry in front \
                     shifts them, and one call's findings are held by another's record. It is \
                     read as written; rewrite it with --update-baseline to key them by their \
                     calls (version {})",
                    path.display(),
                    baseline.version(),
                    agui_lens_core::report::baseline::VERSION
                );
            }
            Mode::Hold(baseline)
        };
        Ok(Some(Gate {
            path: path.clone(),
            mode,
            held: Stats::default(),
            held_total: 0,
            unadopted_errors: 0,
            incomplete: None,
            checked: None,
            named_files: None,
        }))
    }

    /// Says that the input named `name` (a file, or a capture's stream by its name, as
    /// `x.har#2`) is checked in this run: the baseline's findings of it are looked for, and
    /// replaced when recording; those of inputs never named so are neither.
    pub fn checked(&mut self, name: &str) {
        let checked = self.checked.get_or_insert_with(Checked::default);
        checked
            .keys
            .push(agui_lens_core::report::baseline::input_key(name));
        if let Some(file) = file_id(Path::new(name)) {
            checked.files.push(file);
        }
    }

    /// Says which cases of a suite this run runs, by their turns' names (as their findings
    /// are keyed): the baseline's findings of other cases (left out by `--case`, of another
    /// suite recording into the same file, gone from the suite) were not looked for, and
    /// recording keeps them. Cases are named exactly: `two` is not `two (slow)`.
    ///
    /// From version 5 a case's findings are keyed by the suite (`suite`, its path as given)
    /// and the case. What a file holds keyed by a case's name alone (recorded before version 5,
    /// and kept since by runs that did not record that case) still holds that case's findings
    /// back, of any suite, until the case is recorded again: then it is keyed by both.
    pub fn running_cases(&mut self, suite: &str, names: impl IntoIterator<Item = String>) {
        use agui_lens_core::report::baseline::{case_call, case_key, input_key};
        let mut cases = Cases::default();
        for name in names {
            self.name_call(&name, suite, &case_call(&name));
            cases.keys.push(case_key(suite, &name));
            cases.names.push(input_key(&name));
        }
        if let Mode::Hold(baseline) = &self.mode
            && baseline.version() < 5
        {
            let _ = writeln!(
                std::io::stderr().lock(),
                "agui-lens: {} keys a suite's cases by their names alone (version {}): a case \
                 of the same name in another suite is held back by its record. It is read as \
                 written; rewrite it with --update-baseline to key them by the suite too \
                 (version {})",
                self.path.display(),
                baseline.version(),
                agui_lens_core::report::baseline::VERSION
            );
        }
        self.checked.get_or_insert_with(Checked::default).cases = Some(cases);
    }

    /// As [`Gate::checked`], for a capture's stream named by its call.
    pub fn checked_call(&mut self, file: &str, call: &str) {
        let checked = self.checked.get_or_insert_with(Checked::default);
        checked
            .keys
            .push(agui_lens_core::report::baseline::call_key(file, call));
        // Named another way (`tools/../cap.har`, a link), the capture's streams are the same.
        if let Some(id) = file_id(Path::new(file)) {
            checked.calls.push((id, call.to_owned()));
        }
    }

    /// Names a stream of a browser capture by its call, which keys its findings (see
    /// [`Baseline::name_call`]).
    pub fn name_call(&mut self, stream: &str, file: &str, call: &str) {
        match &mut self.mode {
            Mode::Hold(baseline) => baseline.name_call(stream, file, call),
            Mode::Record(recorder) => recorder.name_call(stream, file, call),
        }
    }

    /// Whether the finding is shown and counted: not when the baseline holds it. Recording,
    /// every finding is shown and recorded.
    pub fn keep(&mut self, d: &Diagnostic) -> bool {
        match &mut self.mode {
            Mode::Record(recorder) => {
                if !recorder.record(d) && d.severity == Severity::Error {
                    self.unadopted_errors += 1;
                }
                true
            }
            Mode::Hold(baseline) => {
                // A suite's case, by the suite and the case, else by its name alone (as
                // files before version 5 keyed it: see [`Gate::running_cases`]).
                let by_name = || agui_lens_core::report::baseline::input_key(&d.path);
                let suite = self.checked.as_ref().is_some_and(|c| c.cases.is_some());
                if baseline.admits(d)
                    || (suite && baseline.admits_as(d, by_name()))
                    || admitted_as_the_same_file(baseline, &mut self.named_files, d)
                {
                    self.held.count(d);
                    self.held_total += 1;
                    false
                } else {
                    true
                }
            }
        }
    }

    /// The baseline file, as given.
    pub fn path(&self) -> String {
        self.path.display().to_string()
    }

    /// Whether findings are being recorded and every error found was recorded: the run then
    /// passes, as what it found is what the baseline now holds. An input with no events is
    /// never recorded, and still fails.
    pub fn recorded_all(&self) -> bool {
        matches!(self.mode, Mode::Record(..)) && self.unadopted_errors == 0
    }

    /// Says that the run could not find all it would have (`why`): a baseline being recorded
    /// is then left as it was, as for a run stopped by a signal.
    pub fn incomplete(&mut self, why: String) {
        self.incomplete.get_or_insert(why);
    }

    /// The findings held back since the last call, to take off an input's counts.
    pub fn take_held(&mut self) -> Stats {
        std::mem::take(&mut self.held)
    }

    /// Writes the baseline (recording), or says on stderr what it held back and what it no
    /// longer met. A run stopped by a signal records nothing: the findings of what it did not
    /// read would be left out, and called new by the next run.
    pub fn finish(self) -> Result<()> {
        let mut err = std::io::stderr().lock();
        let stopped = agui_lens_core::stop::requested();
        match self.mode {
            Mode::Record(..) if stopped => {
                let _ = writeln!(
                    err,
                    "stopped by {}: the baseline {} (the findings of what was not read would be missing from it)",
                    agui_lens_core::stop::signal_name(),
                    super::left_unwritten(&self.path)
                );
            }
            Mode::Record(..) if self.incomplete.is_some() => {
                let _ = writeln!(
                    err,
                    "{}: the baseline {} (what was not found would be missing from it, and \
                     called new at the next run)",
                    self.incomplete.as_deref().unwrap_or_default(),
                    super::left_unwritten(&self.path)
                );
            }
            Mode::Record(mut recorder) => {
                // What it holds of inputs not checked here is kept: read now, under its lock,
                // for a run that recorded into it meanwhile wrote what it found there.
                let _locked = lock_baseline(&self.path)?;
                let old = baseline_there(&self.path)?;
                let carried = match (&old, &self.checked) {
                    (Some(old), Some(checked)) => {
                        recorder.carry_over((old, &self.path), |p| checked.holds(p), input_there)
                    }
                    _ => Carried::default(),
                };
                write_atomically(&self.path, recorder.render(&self.path).as_bytes())?;
                let plural = agui_lens_core::report::plural;
                let _ = write!(
                    err,
                    "wrote {}: {} recorded",
                    self.path.display(),
                    plural(recorder.findings(), "finding")
                );
                let suite = self.checked.as_ref().is_some_and(|c| c.cases.is_some());
                if carried.kept > 0 && suite {
                    // (What it keeps may be a check's too: inputs and cases share a file.)
                    let _ = write!(
                        err,
                        " ({} of cases not run here, or of other inputs, kept as they were; to \
                         drop those that are gone, record every case into a new file)",
                        carried.kept
                    );
                } else if carried.kept > 0 {
                    let _ = write!(
                        err,
                        " ({} of inputs not checked in this run kept as they were; to drop \
                         those of inputs that are gone, record from every input into a new file)",
                        carried.kept
                    );
                }
                let _ = writeln!(err);
                if carried.unfound > 0 {
                    // A file of an earlier version named inputs from the folder it was
                    // recorded from: from another, what they name cannot be told, and nothing
                    // is dropped.
                    let _ = writeln!(
                        err,
                        "warning: {} kept name inputs not found from this folder: the \
                         baseline was written by an earlier version, whose paths are relative \
                         to the folder it was recorded from; record it from there (or from \
                         every input into a new file), or a finding fixed here may stay held",
                        plural(carried.unfound, "finding")
                    );
                }
                if carried.older > 0 {
                    let _ = writeln!(
                        err,
                        "{} recorded of inputs not checked in this run left out: the file was \
                         written by an earlier version, whose fingerprints this one does not \
                         make (check every input to record them again)",
                        plural(carried.older, "finding")
                    );
                }
            }
            Mode::Hold(baseline) => {
                // Only what was looked for can be missed.
                let unmet = match &self.checked {
                    Some(checked) => baseline.unmet_where(|p| checked.holds(p)),
                    None => baseline.unmet(),
                };
                if self.held_total > 0 || unmet > 0 {
                    let _ = write!(
                        err,
                        "baseline {}: {} held back",
                        self.path.display(),
                        agui_lens_core::report::plural(self.held_total, "known finding")
                    );
                    // Unmet in a stopped run may only be unread.
                    if unmet > 0 && !stopped {
                        let _ = write!(
                            err,
                            "; {unmet} recorded no longer found (--update-baseline drops them)"
                        );
                    }
                    let _ = writeln!(err);
                }
            }
        }
        Ok(())
    }
}

/// Holds the baseline at `path` against another run that records into it (`flock` on the
/// file), from before it is read until it is replaced: runs recording at once each keep what
/// the others wrote. The file a link leads to is held; a new one is made empty to be held
/// (read as none), its folders as needed (its inputs are named from there). One replaced
/// meanwhile is held anew. Waiting, a stop ends the run with the baseline left as it was.
fn lock_baseline(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::MetadataExt as _;
    let path = super::replaced(path);
    super::create_folders(super::directory_of(&path))?;
    let mut said = false;
    let waited = std::time::Instant::now();
    loop {
        // Read-only when it is there: a baseline the user may not write is still replaced
        // (in a folder they may write), as any file written is.
        let file = match std::fs::File::open(&path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path),
            opened => opened,
        }
        .with_context(|| format!("opening {} to record into it", path.display()))?;
        if super::run::try_lock(&file).with_context(|| format!("locking {}", path.display()))? {
            let held = file.metadata()?;
            let there = std::fs::metadata(&path);
            if there.is_ok_and(|there| there.dev() == held.dev() && there.ino() == held.ino()) {
                return Ok(file);
            }
            continue;
        }
        if agui_lens_core::stop::requested() {
            bail!(
                "stopped by {} while another agui-lens recorded into {}: the baseline {}",
                agui_lens_core::stop::signal_name(),
                path.display(),
                super::left_unwritten(&path)
            );
        }
        if !said && waited.elapsed() > std::time::Duration::from_secs(1) {
            let _ = writeln!(
                std::io::stderr().lock(),
                "agui-lens: waiting for another agui-lens recording into {}",
                path.display()
            );
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The text of the baseline at `path`, or none (no file, an empty one, a link that leads
/// nowhere: a baseline yet to be made); an error for a file that holds something else, which
/// `--update-baseline` does not replace.
fn baseline_there(path: &Path) -> Result<Option<String>> {
    match agui_lens_core::read::read_whole(path) {
        Ok(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(why) = Baseline::parse(&text) {
                bail!(
                    "--baseline {} is no baseline ({why}): --update-baseline replaces only a \
                     baseline; name another file",
                    path.display()
                );
            }
            Ok(Some(text.into_owned()))
        }
        _ => Ok(None),
    }
}

/// Whether the baseline holds the finding by another name of its input's file: recorded as
/// `captures/a.jsonl` and checked through a link to the folder, a link to the file or a hard
/// link (or the other way round), it was said to be the recorded input and failed the run.
/// `named` caches the files the baseline names, by identity.
fn admitted_as_the_same_file(
    baseline: &mut Baseline,
    named: &mut Option<HashMap<(u64, u64), Vec<String>>>,
    d: &Diagnostic,
) -> bool {
    use agui_lens_core::report::baseline::key_file;
    let key = baseline.key_of(d);
    let (file, rest) = key_file(&key);
    let Some(id) = file_id(Path::new(file)) else {
        return false;
    };
    let named = named.get_or_insert_with(|| {
        let mut named: HashMap<(u64, u64), Vec<String>> = HashMap::new();
        for file in baseline.input_files() {
            if let Some(id) = file_id(Path::new(file)) {
                named.entry(id).or_default().push(file.to_owned());
            }
        }
        named
    });
    let Some(names) = named.get(&id) else {
        return false;
    };
    names
        .iter()
        .filter(|name| name.as_str() != file)
        .any(|name| baseline.admits_as(d, format!("{name}{rest}")))
}

/// Whether the input a baseline's finding is keyed by is found from here: its file, or the
/// file of a capture's stream (`x.har (POST …, call 1)`, `x.har#2`); what is no file (a URL)
/// is taken as found.
fn input_there(path: &str) -> bool {
    path.contains("://")
        || std::iter::once(path)
            .chain(path.match_indices(" (").map(|(i, _)| &path[..i]))
            .chain(path.find('#').map(|i| &path[..i]))
            .any(|file| Path::new(file).exists())
}

/// The inputs a run checked: their keys (a file's, a capture's stream's by its call) and the
/// files themselves (however they were named: a folder reached through a link, `a/../b`, a
/// hard link).
#[derive(Default)]
struct Checked {
    keys: Vec<String>,
    files: Vec<(u64, u64)>,
    /// Captures' streams: the capture file and the call.
    calls: Vec<((u64, u64), String)>,
    /// A suite's: the cases run.
    cases: Option<Cases>,
}

/// The cases of a suite a run runs, as their findings are keyed: by the suite and the case
/// (version 5), or by the case's name alone (earlier versions).
#[derive(Default)]
struct Cases {
    keys: Vec<String>,
    names: Vec<String>,
}

/// Whether two keys name one input: as written, or the same file (a suite reached through a
/// link) with the same stream or case of it.
fn same_input(one: &str, other: &str) -> bool {
    use agui_lens_core::report::baseline::key_file;
    let ((one, one_rest), (other, other_rest)) = (key_file(one), key_file(other));
    (one, one_rest) == (other, other_rest)
        || (one_rest == other_rest
            && file_id(Path::new(one)).is_some_and(|id| file_id(Path::new(other)) == Some(id)))
}

/// A file's identity: its device and inode.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

impl Checked {
    /// Whether a baseline's finding keyed `path` is of an input checked here. A key that is a
    /// file's name is that file, compared as the file system names it (`streams/a.jsonl`
    /// checked as `tools/../streams/a.jsonl`; not `a.jsonl (copy)`, a file of its own, when
    /// `a.jsonl` is checked); any other (a capture's stream, a file not found from here) is
    /// compared as written.
    fn holds(&self, path: &str) -> bool {
        if let Some(cases) = &self.cases {
            // (A key of an earlier version that names a file is that file's.)
            return cases.keys.iter().any(|case| same_input(case, path))
                || (cases.names.iter().any(|case| case == path)
                    && std::fs::symlink_metadata(path).is_err());
        }
        if let Some(file) = file_id(Path::new(path)) {
            return self.files.contains(&file);
        }
        // A capture's stream: `FILE (CALL)`, FILE a capture checked here, CALL one checked.
        for (at, _) in path.match_indices(" (") {
            let (file, call) = (&path[..at], &path[at + 2..]);
            if let (Some(id), Some(call)) = (file_id(Path::new(file)), call.strip_suffix(')')) {
                return self.calls.iter().any(|(i, c)| *i == id && c == call);
            }
        }
        self.keys
            .iter()
            .any(|input| agui_lens_core::report::baseline::of_input(path, input))
    }
}

/// Takes held findings off a count.
pub fn subtract(stats: &mut Stats, held: Stats) {
    stats.errors = stats.errors.saturating_sub(held.errors);
    stats.warnings = stats.warnings.saturating_sub(held.warnings);
    stats.notes = stats.notes.saturating_sub(held.notes);
}

/// Written as every file the tool writes ([`super::write_file`]): a temp file beside it,
/// renamed over it, so a reader never sees half a baseline; a new one with a new file's
/// permissions (a replaced one keeps its own), folders made as needed, and nothing left
/// behind when stopped.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    super::write_bytes(path, bytes)
}
