//! `--baseline FILE` for `check` and `test`: known findings are held back, new ones fail;
//! `--update-baseline` records today's findings instead. See `agui_lens_core::report::baseline`
//! for what makes two findings the same.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::BaselineArgs;
use agui_lens_core::check::diagnostic::{Diagnostic, Severity};
use agui_lens_core::check::engine::Stats;
use agui_lens_core::report::baseline::{Baseline, Recorder};

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
}

enum Mode {
    Hold(Baseline),
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
            // mistake keeps what it holds.
            // (A link that leads nowhere is a baseline yet to be made where it leads.)
            match super::read_whole(path) {
                Ok(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => {
                    let text = String::from_utf8_lossy(&bytes);
                    if let Err(why) = Baseline::parse(&text) {
                        bail!(
                            "--baseline {} is no baseline ({why}): --update-baseline replaces \
                             only a baseline; name another file",
                            path.display()
                        );
                    }
                }
                _ => {}
            }
            Mode::Record(Recorder::default())
        } else {
            let text = super::read_whole_text(path)
                .map_err(|e| agui_lens_core::read::plainly(path, e))
                .with_context(|| {
                    format!(
                        "reading the baseline {} (write one with --update-baseline)",
                        path.display()
                    )
                })?;
            let baseline = Baseline::parse(&text)
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
        }))
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
                if baseline.admits(d) {
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
        matches!(self.mode, Mode::Record(_)) && self.unadopted_errors == 0
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
            Mode::Record(_) if stopped => {
                let _ = writeln!(
                    err,
                    "stopped by {}: the baseline {} (the findings of what was not read would be missing from it)",
                    agui_lens_core::stop::signal_name(),
                    super::left_unwritten(&self.path)
                );
            }
            Mode::Record(_) if self.incomplete.is_some() => {
                let _ = writeln!(
                    err,
                    "{}: the baseline {} (what was not found would be missing from it, and \
                     called new at the next run)",
                    self.incomplete.as_deref().unwrap_or_default(),
                    super::left_unwritten(&self.path)
                );
            }
            Mode::Record(recorder) => {
                write_atomically(&self.path, recorder.render().as_bytes())?;
                let _ = writeln!(
                    err,
                    "wrote {}: {} recorded",
                    self.path.display(),
                    agui_lens_core::report::plural(recorder.findings(), "finding")
                );
            }
            Mode::Hold(baseline) => {
                let unmet = baseline.unmet();
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
