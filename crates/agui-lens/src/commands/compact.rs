//! `agui-lens compact`: rewrite stored streams smaller, proving for each that the result
//! folds to the same messages and state and checks with no new errors before writing it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agui_lens_core::report::human::visible;
use anyhow::{Context, Result, anyhow, bail};
use rayon::prelude::*;

use super::inputs::{self, Input};
use super::{Outcome, WriteBack, persist, same_file};
use crate::cli::CompactArgs;
use crate::config::Config;
use crate::progress::Progress;
use agui_lens_core::check::catalog::{Level as RuleLevel, Levels, RuleId};
use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::engine::{Context as CheckContext, Engine, Fed};
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::check::stream::{for_each_schema_checked, parse_event};
use agui_lens_core::compact::verify::{
    self, Current, ReadBack, Tee, Verifier, count_errors, read_back, verification_levels,
    verification_levels_for,
};
use agui_lens_core::compact::{Compactor, Level};
use agui_lens_core::fold::Folded;

/// What each thread of a stream folds to, in the order threads came.
type Threads = Vec<(Option<String>, Folded)>;
use agui_lens_core::protocol::event::Event;
use agui_lens_core::read::{self, Batch, Compression, InputFormat, InputSpec, ReadOptions};
use agui_lens_core::stop;
use agui_lens_core::text::{human_bytes, plural};
use agui_lens_core::write::EventWriter;
use agui_lens_core::write::Output;

/// Where one input's compacted stream goes.
#[derive(Clone, Debug)]
enum Target {
    Stdout,
    /// Replace this file atomically (the input itself, with --in-place, or an output path).
    File(PathBuf),
    /// Write into this device or FIFO (`/dev/null`, `/dev/stdout`), which cannot be
    /// replaced: like stdout, once the stream is verified.
    Stream(PathBuf),
}

/// What compacting one input did.
struct Report {
    name: Arc<str>,
    events_in: u64,
    events_out: u64,
    /// The input's bytes as read, framing included (decompressed).
    bytes_read: u64,
    bytes_out: u64,
    /// Chunks the official client fails on, left out (only with --drop-unreadable).
    dropped: u64,
    /// STATE_DELTA events kept as they were: no state was known before them.
    kept_deltas: u64,
    /// Frames that could not be read as events, left out (only with --drop-unreadable).
    unreadable: u64,
    /// Why the compacted stream was not written, when it was not.
    refused: Option<String>,
    /// Compacted, the stream would have been larger: its events were kept as they were read,
    /// in this many bytes (`events_out`/`bytes_out` then say what compaction would have made).
    kept: Option<u64>,
    /// Why nothing was written: no AG-UI event (and what the input looks like instead), a
    /// browser capture, or a recording its recorder cut.
    skipped: Option<String>,
    /// What was left alone because it already held the bytes the compaction made: the file
    /// itself, compacted before (in place), or an output of an earlier run.
    unchanged: Option<String>,
    /// What the official client cannot read of a protobuf or SSE output (written whole).
    over_limit: Option<String>,
}

impl Report {
    /// The report of a file left unread, to be said why.
    fn unread(path: &Path) -> Report {
        Report {
            name: Arc::from(path.to_string_lossy().as_ref()),
            events_in: 0,
            events_out: 0,
            bytes_read: 0,
            bytes_out: 0,
            dropped: 0,
            kept_deltas: 0,
            unreadable: 0,
            refused: None,
            kept: None,
            skipped: None,
            unchanged: None,
            over_limit: None,
        }
    }
}

pub fn run(args: &CompactArgs) -> Result<Outcome> {
    if args.mirror
        && (!inputs::names_a_directory(&args.paths)
            || args.output.as_ref().is_none_or(|o| o.as_os_str() == "-"))
    {
        bail!(
            "--mirror copies the folders compacted into -o DIR: name a directory to compact, and DIR"
        );
    }
    let walk = inputs::Walk {
        empty_ok: args.mirror,
        ..inputs::Walk::from_args(&args.walk)
    };
    let inputs = inputs::expand(&args.paths, &walk)?;
    // A folder with nothing to compact, named without --mirror: nothing is written anywhere.
    // (A link to a folder a walk met is no named input: it is left out below.)
    if let Some(why) = inputs
        .iter()
        .filter(|i| i.explicit && i.spec.path().is_some_and(Path::is_dir))
        .find_map(|i| i.unreadable.clone())
    {
        bail!(why);
    }
    // A linked folder is not entered, and a link that leads nowhere has nothing to compact:
    // either is left as it is (a mirror keeps the link), which is no failure of compaction.
    let (linked, inputs): (Vec<Input>, Vec<Input>) =
        inputs.into_iter().partition(inputs::is_link_left_unread);
    for input in linked {
        if let Some(path) = input.spec.path() {
            let name = path.to_string_lossy();
            let name = visible(&name);
            if path.is_dir() {
                say!(
                    "left out {name}: a link to a folder, which a walk does not enter (name it to compact what it holds)"
                );
            } else {
                say!("left out {name}: a link that leads nowhere, left as it is");
            }
        }
    }
    let inputs = outside_output(args, inputs)?;
    let (inputs, targets) = targets(args, inputs)?;
    // Read with the project's line cap, as `check` reads: a line it reads is not lost here.
    let config = Config::load(args.config.as_deref())?;
    let mut read = args.read.options();
    read.max_line = config.max_line(args.read.max_line)?;
    // Held to the project's rules as `check` is (a warning agui-lens.toml makes an error may
    // not be merged away), with the project's schemas.
    let (levels, raised, schemas) = if args.no_verify {
        (verification_levels(), false, None)
    } else {
        let flags: Vec<_> = args
            .deny
            .iter()
            .map(|r| (RuleLevel::Deny, r.clone()))
            .collect();
        let mut project = config.levels(&flags)?;
        if config.deny_warnings(args.deny_warnings) {
            project.deny_warnings();
        }
        let (levels, raised) = verification_levels_for(&project);
        let schemas = SchemaSet::for_process(config.schemas_dir().as_deref())?;
        (levels, raised, Some(schemas))
    };
    let settings = Settings {
        level: args.level,
        read,
        initial_state: args.read.initial_state()?,
        state_limit: args.read.state_limit(),
        schemas,
        levels,
        raised,
        drop_unreadable: args.drop_unreadable,
        writers: if args.in_place {
            let ids = targets.iter().filter_map(|target| match target {
                Target::File(path) => super::file_id(path),
                Target::Stdout | Target::Stream(_) => None,
            });
            open_for_writing(&ids.collect())
        } else {
            HashMap::new()
        },
        into: args
            .output
            .as_ref()
            .filter(|out| !args.in_place && (out.is_dir() || super::names_a_folder(out)))
            .cloned(),
    };
    crate::signals::catch();
    let progress = Progress::start(
        "compacting",
        crate::progress::total_size(inputs.iter().map(|i| &i.spec)),
        inputs.len(),
        true,
    );
    let reports: Vec<(bool, Result<Report>)> = inputs
        .par_iter()
        .zip(targets.par_iter())
        .map(|(input, target)| {
            let report = match &input.unreadable {
                Some(why) => Err(anyhow!("{why}")),
                None => compact_one(&settings, &input.spec, target).map_err(|err| {
                    // What the stop cut short says so; any other failure as it is.
                    let interrupted = err.root_cause().to_string().starts_with("interrupted");
                    match (stopped(target), target) {
                        (Some(said), _) if interrupted => said,
                        // A write that failed (a full disk) names the file written, not only
                        // the input it compacts.
                        (_, Target::File(path) | Target::Stream(path))
                            if err.to_string().starts_with("writing the compacted")
                                && !err.to_string().contains(&*path.to_string_lossy()) =>
                        {
                            err.context(format!("writing {}", path.display()))
                        }
                        _ => err,
                    }
                }),
            };
            (input.explicit, report)
        })
        .collect();
    drop(progress);
    // The outputs that hold a compacted stream (or one kept as it was read).
    let written: HashSet<PathBuf> = targets
        .iter()
        .zip(&reports)
        .filter_map(|(target, (_, report))| match (target, report) {
            (Target::File(path), Ok(report))
                if report.skipped.is_none() && report.refused.is_none() =>
            {
                // With the request written anew beside it (see `carry_request`).
                let request = agui_lens_core::check::recorded::request_file_of(path);
                let request = request.is_file().then(|| request.components().collect());
                Some([Some(path.components().collect()), request])
            }
            _ => None,
        })
        .flatten()
        .flatten()
        .collect();
    // Put out whole (written, or put in place) before a stop came, if one came late: each is
    // said above as done; a stopped run's status alone would say nothing was.
    let put_out = reports
        .iter()
        .filter(|(_, report)| {
            report
                .as_ref()
                .is_ok_and(|r| r.skipped.is_none() && r.refused.is_none() && r.unchanged.is_none())
        })
        .count();
    // The outputs of streams refused: a copy of such a stream goes only where a stream
    // could (a refusal for the user's file there leaves that file as it was, copy or not).
    let refused: HashSet<PathBuf> = targets
        .iter()
        .zip(&reports)
        .filter_map(|(target, (_, report))| match (target, report) {
            (Target::File(path), Ok(report)) if report.refused.is_some() => {
                Some(path.components().collect())
            }
            _ => None,
        })
        .collect();
    let outcome = summarize(reports)?;
    if stop::requested() && put_out > 0 {
        let signal = stop::signal_name();
        let (outputs, were) = match put_out {
            1 => ("the output said above".to_owned(), "was"),
            n => (format!("the {n} outputs said above"), "were"),
        };
        say!(
            "stopped by {signal}: {outputs} {were} written whole before it came; nothing else \
             was written"
        );
    }
    if !args.mirror {
        return Ok(outcome);
    }
    let mirrored = mirror(args, &written, &refused)?;
    // The worse of the two: a file of the user's the mirror left is said with exit 1 too.
    Ok(match (outcome, mirrored) {
        (Outcome::Failed, _) | (_, Outcome::Failed) => Outcome::Failed,
        (Outcome::Findings, _) | (_, Outcome::Findings) => Outcome::Findings,
        _ => Outcome::Clean,
    })
}

/// What identifies a file's content without reading it: which file it is, its length and
/// when it was last written.
#[derive(Debug, PartialEq)]
struct Stamp {
    id: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> Result<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
        Ok(Stamp {
            id: (meta.dev(), meta.ino()),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// Why a file compacted in place may not be replaced now, if it may not: another process
/// holds it open for writing (`writers`, see [`open_for_writing`]), so what it writes after
/// the rename would go to the old file, which no name leads to; or it changed since `before`
/// (a history an agent still appends to), and what was written since would be lost with it.
fn changed(
    path: &Path,
    before: &Stamp,
    writers: &HashMap<(u64, u64), String>,
) -> Result<Option<String>> {
    if let Some(writer) = writers.get(&before.id) {
        return Ok(Some(format!(
            "{writer} has it open for writing: what it writes once the file is replaced \
             would go to the old one, which no name leads to, and be lost; left as it was; \
             compact it once nothing writes it"
        )));
    }
    let now = Stamp::of(path)?;
    if now == *before {
        return Ok(None);
    }
    let what = if now.id != before.id {
        "it was replaced".to_owned()
    } else if now.len > before.len {
        format!("{} were written to it", human_bytes(now.len - before.len))
    } else {
        "it was written to".to_owned()
    };
    Ok(Some(format!(
        "it changed while it was compacted ({what}; another program is writing it?), and what \
         was written since would be lost: left as it was; compact it once nothing writes it"
    )))
}

/// What stopping did to a compaction's target, when a signal stopped it: a stream is only
/// ever put in place whole, so the target was left as it was, or not written at all.
fn stopped(target: &Target) -> Option<anyhow::Error> {
    let signal = agui_lens_core::stop::signal_name();
    agui_lens_core::stop::requested().then(|| match target {
        Target::File(path) => anyhow!("stopped by {signal}: {}", super::left_unwritten(path)),
        Target::Stream(path) => {
            anyhow!(
                "stopped by {signal}: nothing was written to {}",
                path.display()
            )
        }
        Target::Stdout => anyhow!("stopped by {signal}: nothing was written to stdout"),
    })
}

/// The inputs without what a walk found in the output directory, when that lies in a folder
/// compacted: run again, the command would compact its own output into a folder below it.
/// An output directory that is a folder compacted, or holds one, is refused: each stream
/// would be written over itself (which `--in-place` does), or a file below the folder could
/// land on another one of it (`store/s/s/run.jsonl` compacted from `store/s` into `store`
/// goes to `store/s/run.jsonl`, an input, and so would a mirrored file).
fn outside_output(args: &CompactArgs, inputs: Vec<Input>) -> Result<Vec<Input>> {
    let Some(out) = args
        .output
        .as_ref()
        .filter(|out| out.is_dir())
        .and_then(|out| fs::canonicalize(out).ok())
    else {
        return Ok(inputs);
    };
    let folders: Vec<(&PathBuf, PathBuf)> = args
        .paths
        .iter()
        .filter(|path| path.is_dir())
        .filter_map(|path| Some((path, fs::canonicalize(path).ok()?)))
        .collect();
    let shown = args.output.as_deref().unwrap_or(Path::new("")).display();
    if let Some((same, _)) = folders.iter().find(|(_, folder)| *folder == out) {
        bail!(
            "-o {shown} is the folder compacted ({}): each stream would be written over \
             itself; use --in-place to compact the folder where it is",
            same.display()
        );
    }
    if let Some((held, _)) = folders.iter().find(|(_, folder)| folder.starts_with(&out)) {
        bail!(
            "-o {shown} holds the folder compacted ({}): what is written there could land on \
             its own files; compact into a folder outside it, or use --in-place",
            held.display()
        );
    }
    // Only a walk of a folder that holds the output directory finds what was written there.
    if !folders.iter().any(|(_, folder)| out.starts_with(folder)) {
        return Ok(inputs);
    }
    let (inside, outside): (Vec<Input>, Vec<Input>) = inputs.into_iter().partition(|input| {
        !input.explicit && input.spec.path().is_some_and(|path| lies_in(path, &out))
    });
    if !inside.is_empty() {
        say!(
            "left out {} found in {}, the output directory",
            plural(inside.len() as u64, "file"),
            out.display()
        );
    }
    Ok(outside)
}

/// Whether the file at `path` lies under `dir` (a canonical path), its folder's links followed.
fn lies_in(path: &Path, dir: &Path) -> bool {
    path.parent()
        .and_then(|parent| fs::canonicalize(parent).ok())
        .is_some_and(|parent| parent.starts_with(dir))
}

/// `--mirror`: copies each file of the folders compacted (hidden, ignored and excluded ones
/// too: they are not compacted, not lost; a temp file of ours a killed write left is not) and
/// each file named, that no compacted stream was
/// written for, into OUT at its path there, unless OUT holds the same bytes there already. A
/// link that leads to no file (to a folder, or nowhere) is copied as a link with the same
/// target, and folders are made, empty ones too. An entry that cannot be copied (unreadable,
/// or a FIFO) fails the run.
fn mirror(
    args: &CompactArgs,
    written: &HashSet<PathBuf>,
    refused: &HashSet<PathBuf>,
) -> Result<Outcome> {
    use inputs::Entry;
    let Some(output) = &args.output else {
        return Ok(Outcome::Clean);
    };
    let out_dir =
        fs::canonicalize(output).with_context(|| format!("reading {}", output.display()))?;
    let mut entries = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            entries.extend(inputs::every_entry(path));
        } else if let Some(name) = path.file_name().filter(|_| path.is_file()) {
            entries.push(Entry::File(path.clone(), PathBuf::from(name)));
        }
    }
    let (mut copied, mut links, mut there, mut links_there, mut failed) = (0, 0, 0, 0, 0u64);
    // Files of the user's in OUT, left as they were where a copy would have replaced them,
    // and folders not made (a link on the way).
    let (mut kept, mut unmade) = (0u64, 0u64);
    for entry in entries {
        if stop::requested() {
            say!(
                "interrupted: the copy into {} was left unfinished",
                output.display()
            );
            return Ok(Outcome::Failed);
        }
        let (source, done) = match &entry {
            Entry::File(source, _) if super::named_as_a_temp_file_of_ours(source) => {
                say!(
                    "{}",
                    visible(&format!(
                        "note: {}: a temp file of an agui-lens write that has not ended (killed \
                         before its file was put in place, or under way now): not copied",
                        source.display()
                    ))
                );
                continue;
            }
            Entry::File(source, relative) => {
                // OUT inside a folder compacted: what it holds are the copies, not more to copy.
                let target = output.join(relative);
                let key: PathBuf = target.components().collect();
                if lies_in(source, &out_dir) || written.contains(&key) || same_file(source, &target)
                {
                    continue;
                }
                if let Some(why) = link_on_the_way(output, &target)
                    .or_else(|| no_regular_file(&target))
                    .or_else(|| users_file_there(source, &target))
                {
                    // Said with the refusal, when the input was refused for it.
                    if !refused.contains(&key) {
                        say!(
                            "{}",
                            visible(&format!(
                                "left {} as it was: {why}; {} was not copied there",
                                target.display(),
                                source.display()
                            ))
                        );
                    }
                    kept += 1;
                    continue;
                }
                (
                    source,
                    copy_if_changed(source, &target).map(|new| (new, &mut copied)),
                )
            }
            Entry::Link(source, relative, link) => {
                if lies_in(source, &out_dir) {
                    continue;
                }
                let target = output.join(relative);
                // A link goes only where nothing is, or the same link: a file or a link of the
                // user's there is left (it was replaced by the link, exit 0).
                let there = fs::symlink_metadata(&target).is_ok()
                    && !fs::read_link(&target).is_ok_and(|there| there == *link);
                let why = link_on_the_way(output, super::directory_of(&target)).or_else(|| {
                    there.then(|| {
                        format!(
                            "{} is there already, and a copy of a link goes only where nothing \
                             is or the same link (remove it to have the link copied)",
                            target.display()
                        )
                    })
                });
                if let Some(why) = why {
                    say!(
                        "{}",
                        visible(&format!(
                            "left {} as it was: {why}; the link {} was not copied there",
                            target.display(),
                            source.display()
                        ))
                    );
                    kept += 1;
                    continue;
                }
                (
                    source,
                    link_if_changed(link, &target).map(|new| (new, &mut links)),
                )
            }
            Entry::Folder(source, relative) => {
                if fs::canonicalize(source).is_ok_and(|folder| folder.starts_with(&out_dir)) {
                    continue;
                }
                // No folder is made through a link in OUT (outside it).
                if let Some(why) = link_on_the_way(output, &output.join(relative)) {
                    say!(
                        "{}",
                        visible(&format!(
                            "{why}; the folder {} was not made",
                            source.display()
                        ))
                    );
                    unmade += 1;
                    continue;
                }
                (
                    source,
                    super::create_folders(&output.join(relative)).map(|()| (false, &mut copied)),
                )
            }
            Entry::Other(source, why) => (source, Err(io::Error::other(why.clone()))),
        };
        match done {
            Ok((true, count)) => *count += 1,
            Ok((false, _)) => match entry {
                Entry::File(..) => there += 1,
                Entry::Link(..) => links_there += 1,
                _ => {}
            },
            Err(err) => {
                say!(
                    "error: copying {} into {}: {err}",
                    source.display(),
                    output.display()
                );
                failed += 1;
            }
        }
    }
    let mut said = format!(
        "mirrored into {}: {} copied unchanged",
        output.display(),
        plural(copied, "file")
    );
    if links > 0 {
        said.push_str(&format!(", {} copied as links", plural(links, "link")));
    }
    if there > 0 {
        said.push_str(&format!(", {} there already", plural(there, "file")));
    }
    if links_there > 0 {
        said.push_str(&format!(", {} there already", plural(links_there, "link")));
    }
    if failed > 0 {
        let entries = if failed == 1 { "entry" } else { "entries" };
        said.push_str(&format!(", {failed} {entries} could not be copied"));
    }
    if kept > 0 {
        said.push_str(&format!(
            ", {} of the user's left as {} (not copied over)",
            plural(kept, "file"),
            if kept == 1 { "it was" } else { "they were" }
        ));
    }
    if unmade > 0 {
        said.push_str(&format!(
            ", {} not made (a link on the way)",
            plural(unmade, "folder")
        ));
    }
    say!("{said}");
    Ok(if failed > 0 {
        Outcome::Failed
    } else if kept > 0 || unmade > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// Why the file at `target` in the mirror, which is not yet a copy of `source`, must be left
/// as it is: a copy of a stream (a recording skipped, a stream refused) goes only over a
/// stream (or an empty file), a file a recording keeps beside it (its request, its cut) only
/// over one a run wrote. What holds no stream (a sidecar, a note) goes only over an empty
/// file: a file there with other bytes cannot be told from one of the user's (an earlier
/// mirror's copy of an older sidecar is one to remove by hand).
fn users_file_there(source: &Path, target: &Path) -> Option<String> {
    use agui_lens_core::check::recorded::{Beside, CUT_SUFFIX, FINDINGS_SUFFIX, REQUEST_SUFFIX};
    let meta = fs::metadata(target).ok()?;
    if !meta.is_file() || meta.len() == 0 || same_bytes(source, target).unwrap_or(false) {
        return None;
    }
    let name = source.file_name()?.to_string_lossy();
    for (suffix, beside) in [
        (REQUEST_SUFFIX, Beside::Request),
        (FINDINGS_SUFFIX, Beside::Findings),
        (CUT_SUFFIX, Beside::Cut),
    ] {
        if name.ends_with(suffix) {
            return beside.users(target);
        }
    }
    let holds_a_stream = read::open(&InputSpec::File(source.to_path_buf()), &Default::default())
        .is_ok_and(|opened| read::holds_events(opened).is_ok());
    if !holds_a_stream {
        return Some(format!(
            "{} holds other bytes than {}, which holds no stream; a copy goes only where \
             nothing is, an empty file or the same bytes (remove it to have it copied)",
            target.display(),
            source.display()
        ));
    }
    super::refuse_to_replace(target, "its copy", super::Replaces::Stream)
        .err()
        .map(|err| format!("{err:#}"))
}

/// Why nothing is written at `target`: something there that is no regular file and no folder
/// (a FIFO, which a write would wait on for ever, a device, a socket). Asked after
/// [`link_on_the_way`], which a link at `target` stops first.
fn no_regular_file(target: &Path) -> Option<String> {
    super::is_stream(target).then(|| {
        format!(
            "{} is no regular file (a FIFO, a device or a socket), which is not written to",
            target.display()
        )
    })
}

/// Why nothing may be written at `target` in the folder `root` (`-o DIR`): it, or a folder on
/// the way to it, is a link, through which a write would change a file outside the folder (a
/// note of the user's, another tree).
fn link_on_the_way(root: &Path, target: &Path) -> Option<String> {
    let rel = target.strip_prefix(root).ok()?;
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if fs::symlink_metadata(&at).is_ok_and(|meta| meta.is_symlink()) {
            return Some(format!(
                "{} is a link (to {}): nothing is written through a link in {}",
                at.display(),
                fs::read_link(&at).unwrap_or_default().display(),
                root.display()
            ));
        }
    }
    None
}

/// Makes `target` a link to `link` (its target as written), atomically, unless it is one
/// already. Whether it made it.
fn link_if_changed(link: &Path, target: &Path) -> io::Result<bool> {
    if fs::read_link(target).is_ok_and(|there| there == link) {
        return Ok(false);
    }
    let folder = super::directory_of(target);
    super::create_folders(folder)?;
    let temp = tempfile::Builder::new()
        .prefix(".agui-lens-link")
        .make_in(folder, |path| std::os::unix::fs::symlink(link, path))?;
    temp.persist(target).map_err(|err| err.error)?;
    Ok(true)
}

/// Copies `source` to `target` atomically, unless `target` holds the same bytes. Whether it
/// copied.
fn copy_if_changed(source: &Path, target: &Path) -> io::Result<bool> {
    if same_bytes(source, target)? {
        return Ok(false);
    }
    let mut file = File::open(source)?;
    let permissions = file.metadata()?.permissions();
    super::create_folders(super::directory_of(target))?;
    let mut temp = super::temp_beside(target).map_err(io::Error::other)?;
    io::copy(&mut file, temp.as_file_mut())?;
    persist(temp, target)?;
    // The copy's permissions are the file's, as a copy's should be.
    fs::set_permissions(target, permissions)?;
    Ok(true)
}

/// Whether `b` is a file with the bytes of `a`. One that cannot be read is not (replacing it
/// may still be allowed).
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (Ok(meta_a), Ok(meta_b)) = (fs::metadata(a), fs::metadata(b)) else {
        return Ok(false);
    };
    if !meta_b.is_file() || meta_a.len() != meta_b.len() {
        return Ok(false);
    }
    let mut file_a = File::open(a)?;
    let Ok(mut file_b) = File::open(b) else {
        return Ok(false);
    };
    let (mut chunk_a, mut chunk_b) = (vec![0; 1 << 16], vec![0; 1 << 16]);
    let mut left = meta_a.len();
    while left > 0 {
        let n = left.min(chunk_a.len() as u64) as usize;
        file_a.read_exact(&mut chunk_a[..n])?;
        if file_b.read_exact(&mut chunk_b[..n]).is_err() || chunk_a[..n] != chunk_b[..n] {
            return Ok(false);
        }
        left -= n as u64;
    }
    Ok(true)
}

struct Settings<'a> {
    level: Level,
    read: ReadOptions,
    /// The state a client held before each input (`--initial-state`), if given.
    initial_state: Option<serde_json::Value>,
    state_limit: usize,
    schemas: Option<&'a SchemaSet>,
    levels: Levels,
    /// Whether `levels` make errors of rules that are not errors by default (see
    /// [`verify::verification_levels_for`]).
    raised: bool,
    /// Frames that cannot be read as events may be left out (else the file is refused).
    drop_unreadable: bool,
    /// The files to be replaced in place that another process holds open for writing, with
    /// which process (see [`open_for_writing`]).
    writers: HashMap<(u64, u64), String>,
    /// The folder the inputs are compacted into (`-o DIR`): nothing is written through a link
    /// in it.
    into: Option<PathBuf>,
}

/// Which of the files `ids` (device, inode) a process other than this one holds open for
/// writing, each with the first such process (`process 812 (python3)`), as `/proc` tells:
/// a file replaced in place under such a process loses what it writes after the rename, to
/// the old file no name leads to. Only the processes this user may look into are seen; on a
/// system without `/proc`, none.
fn open_for_writing(ids: &HashSet<(u64, u64)>) -> HashMap<(u64, u64), String> {
    use std::os::unix::fs::MetadataExt;
    let mut found = HashMap::new();
    if ids.is_empty() {
        return found;
    }
    let inodes: HashSet<u64> = ids.iter().map(|&(_, ino)| ino).collect();
    let me = std::process::id().to_string();
    let Ok(processes) = fs::read_dir("/proc") else {
        return found;
    };
    for process in processes.flatten() {
        let pid = process.file_name();
        let Some(pid) = pid
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let info = process.path().join("fdinfo").join(fd.file_name());
            let info = fs::read_to_string(info).unwrap_or_default();
            let field = |name: &str| {
                info.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::trim)
            };
            let writes = field("flags:")
                .and_then(|flags| u32::from_str_radix(flags, 8).ok())
                .is_some_and(|flags| flags & 0o3 != 0);
            // Only a descriptor open for writing on a file with one of the inode numbers is
            // followed to its file (a recent kernel's `fdinfo` names the inode): a stat of
            // every descriptor would hang on a network mount gone dead under some other
            // process.
            let inode = field("ino:").and_then(|ino| ino.parse::<u64>().ok());
            if !writes || inode.is_some_and(|ino| !inodes.contains(&ino)) {
                continue;
            }
            let Ok(meta) = fs::metadata(fd.path()) else {
                continue;
            };
            let id = (meta.dev(), meta.ino());
            if ids.contains(&id) && !found.contains_key(&id) {
                let name = fs::read_to_string(process.path().join("comm")).unwrap_or_default();
                found.insert(id, format!("process {pid} ({})", name.trim()));
            }
        }
    }
    found
}

/// Decides where each input goes, before anything is written: with `--in-place` the input
/// itself (a file reached twice, through a link or named twice, is compacted once); to stdout
/// for one input; else under `-o`. Several inputs, or a directory, need `-o` to be a
/// directory, in which each input keeps its path below the directory argument it was found
/// in; two inputs that would be written to one path, or an output that is an input, are
/// refused.
fn targets(args: &CompactArgs, inputs: Vec<Input>) -> Result<(Vec<Input>, Vec<Target>)> {
    if args.in_place {
        let mut seen: std::collections::HashMap<(u64, u64), PathBuf> =
            std::collections::HashMap::new();
        let mut kept = Vec::new();
        let mut targets = Vec::new();
        for input in inputs {
            let path = match &input.spec {
                InputSpec::Stdin => bail!("--in-place needs files, not stdin"),
                InputSpec::File(path) if super::is_stream(path) => {
                    bail!(
                        "{} is not a regular file: it cannot be replaced in place",
                        path.display()
                    )
                }
                InputSpec::File(path) | InputSpec::HarEntry { path, .. } => path.clone(),
            };
            if let Some(id) = super::file_id(&path) {
                if let Some(first) = seen.get(&id) {
                    say!(
                        "{} is the same file as {}: compacted once",
                        path.display(),
                        first.display()
                    );
                    continue;
                }
                seen.insert(id, path.clone());
            }
            targets.push(Target::File(path));
            kept.push(input);
        }
        return Ok((kept, targets));
    }
    let several = inputs.len() > 1 || inputs::names_a_directory(&args.paths);
    let output = match &args.output {
        None if !several => return Ok((inputs, vec![Target::Stdout])),
        None => bail!("several inputs: give an output directory with -o DIR, or use --in-place"),
        Some(out) if out.as_os_str() == "-" && !several => {
            return Ok((inputs, vec![Target::Stdout]));
        }
        Some(out) if out.as_os_str() == "-" => {
            bail!("several inputs cannot all go to stdout: give an output directory with -o DIR")
        }
        Some(out) => out,
    };
    let to = |path: PathBuf| {
        if super::is_stream(&path) {
            Target::Stream(path)
        } else {
            Target::File(path)
        }
    };
    let ends_in_slash = super::names_a_folder(output);
    let targets: Vec<Target> = if !several && !output.is_dir() && !ends_in_slash {
        vec![to(output.clone())]
    } else {
        if output.exists() && !output.is_dir() {
            bail!(
                "{} is not a directory: the compacted inputs go into a directory (-o DIR/)",
                output.display()
            );
        }
        if output.is_symlink() && !output.exists() {
            bail!(
                "{} is a link that leads nowhere ({}): the compacted inputs go into a directory",
                output.display(),
                fs::read_link(output).unwrap_or_default().display()
            );
        }
        if !output.exists() && !ends_in_slash && !inputs::names_a_directory(&args.paths) {
            bail!(
                "several inputs need -o to be a directory: {} does not exist (end it in `/` to \
                 have it made)",
                output.display()
            );
        }
        inputs
            .iter()
            .map(|input| to(output.join(&input.relative)))
            .collect()
    };
    // Two inputs may not meet in one output, nor an output be an input.
    let mut claimed: std::collections::HashMap<PathBuf, &Input> = std::collections::HashMap::new();
    for (input, target) in inputs.iter().zip(&targets) {
        let (Target::File(out) | Target::Stream(out)) = target else {
            continue;
        };
        let key: PathBuf = out.components().collect();
        if let Some(first) = claimed.insert(key, input) {
            bail!(
                "{} and {} would both be written to {}: compact them into separate directories",
                first.spec.display_name(),
                input.spec.display_name(),
                out.display()
            );
        }
        if let (InputSpec::File(input), Target::File(out)) = (&input.spec, target) {
            if same_file(input, out) {
                bail!(
                    "the output {} is the input {}; use --in-place to replace a file",
                    out.display(),
                    input.display()
                );
            }
        }
        if let (false, Target::File(out)) = (several, target) {
            // A file named as the output (a folder of outputs is the command's own).
            super::refuse_to_replace(out, "-o", super::Replaces::Stream)?;
        }
    }
    if several {
        super::create_folders(output).with_context(|| format!("creating {}", output.display()))?;
    }
    Ok((inputs, targets))
}

/// The compression a target is written with: the input's when the input is replaced in place
/// (a file stays what it was, whatever its name says: gzip named `.zst` stays gzip), else what
/// the target's name says; stdout is plain. Whether the target exists already does not
/// matter: a second run into a mirror writes what the first did.
fn target_compression(target: &Target, input: &InputSpec, compression: Compression) -> Compression {
    match target {
        Target::Stdout => Compression::None,
        Target::File(path) if input.path() == Some(path.as_path()) => compression,
        Target::Stream(path) | Target::File(path) => read::detect_compression_ext(path),
    }
}

/// The format a target is written in: the input's when the input is replaced in place, or
/// when the target's name says none (stdout, a name of no known format, a file of a folder
/// compacted, whose name is the input's), else what the name says (`-o run.pb` is protobuf,
/// as `cat -o run.pb` is). Verification reads the target back in that format.
fn target_format(
    target: &Target,
    input: &InputSpec,
    format: InputFormat,
    head: &[u8],
) -> InputFormat {
    match target {
        Target::Stdout => format,
        // A file compacted in place, or a file of a folder compacted into another (under its
        // name), stays what it was (a `.jsonl` that holds SSE stays SSE).
        Target::File(path)
            if input.path() == Some(path.as_path())
                || input.path().and_then(Path::file_name) == path.file_name() =>
        {
            read::rewritten_format(format, path, head)
        }
        Target::Stream(path) | Target::File(path) => {
            read::format_from_extension(path).unwrap_or(format)
        }
    }
}

fn compact_one(settings: &Settings<'_>, input: &InputSpec, target: &Target) -> Result<Report> {
    use agui_lens_core::check::recorded::{Recorded, recorded, rewrite_refusal};
    // A recording cut when it was recorded, or with what only its call found beside it, is
    // not rewritten (see `rewrite_refusal`).
    let mut request = None;
    if let Some(path) = input.path()
        && let Some(Recorded::Events {
            cut,
            findings,
            request: sent,
            refused,
            ..
        }) = recorded(path)
    {
        request = sent;
        if let Some(why) = rewrite_refusal(cut.as_deref(), findings.as_deref(), refused) {
            return Ok(Report {
                skipped: Some(why),
                ..Report::unread(path)
            });
        }
        if path.file_name().is_some_and(|name| name == "response.raw") {
            // The bytes that came, which the exchange's findings name (one whose recorder
            // ended before its events.jsonl was written): a record, not a stream to rewrite.
            return Ok(Report {
                skipped: Some(
                    "it is the body of a recorded exchange, the bytes that came, which its \
                     findings name: compact does not rewrite it"
                        .into(),
                ),
                ..Report::unread(path)
            });
        }
    }
    if let Some(path) = input.path().filter(|path| read::is_har_file(path)) {
        // A browser capture is a record of what a browser saw: never rewritten.
        return Ok(Report {
            skipped: Some(
                "it is a browser capture (HAR), which compact does not rewrite; \
                 `agui-lens cat FILE --entry N -o run.jsonl` extracts a stream from it"
                    .into(),
            ),
            ..Report::unread(path)
        });
    }
    // A file replaced in place must still be what was read when it is replaced: taken before
    // it is opened, so that nothing written to it after escapes the comparison.
    let in_place = match (input, target) {
        (InputSpec::File(i), Target::File(t)) if same_file(i, t) => Some(t.as_path()),
        _ => None,
    };
    // The request of a recording `run` made goes with it (a recorded exchange's is its
    // `request.json`, which stays where it is).
    let carried = request.clone().filter(|_| {
        input
            .path()
            .is_some_and(|p| agui_lens_core::check::recorded::request_file_of(p).is_file())
    });
    // Written beside the compacted file only over a request file a run (or a compaction)
    // wrote: a file of the user's of that name is refused, as `run --record` refuses it.
    if let (Some(_), Target::File(output), Some(input)) = (&carried, target, input.path()) {
        use agui_lens_core::check::recorded::{Beside, request_file_of};
        if let Some(users) = Beside::Request.users(&request_file_of(output)) {
            return Ok(Report {
                refused: Some(format!(
                    "{users}, which the request this recording answers would replace beside \
                     its compacted copy; it was left as it was (move it, or name another output)"
                )),
                ..Report::unread(input)
            });
        }
    }
    // A recording starts from the state its request sent, as its check does.
    let with_state;
    let settings = match agui_lens_core::check::recorded::request_state(request.as_deref()) {
        Some(state) if settings.initial_state.is_none() => {
            with_state = Settings {
                initial_state: Some(state),
                read: settings.read.clone(),
                levels: settings.levels.clone(),
                writers: settings.writers.clone(),
                into: settings.into.clone(),
                ..*settings
            };
            &with_state
        }
        _ => settings,
    };
    let stamp = in_place
        .map(|path| Ok::<_, anyhow::Error>((path, Stamp::of(path)?)))
        .transpose()?;
    let mut opened = read::open(input, &settings.read)?;
    let name = opened.name.clone();
    let head = opened.head.clone();
    let read_as = opened.format;
    let format = target_format(target, input, opened.format, &opened.head);
    let compression = target_compression(target, input, opened.compression);
    let mut temp = temp_file(target)?;
    let check = settings.schemas.map(|schemas| CheckContext {
        schemas,
        levels: &settings.levels,
        max_line: settings.read.max_line,
        protocol: ProtocolOptions {
            state: settings.initial_state.clone(),
            ..ProtocolOptions::default()
        },
    });
    let check = check.as_ref();
    // Compressing and writing happen beside this thread, which follows the stream.
    let written = temp.as_file().try_clone().context("creating a temp file")?;
    let written = WriteBack::new(written, matches!(target, Target::File(_)));
    let mut writer = EventWriter::background(written, format, compression)?;
    // The compacted events are checked and folded as they are written (see `verify`).
    let mut verifier = check.map(Verifier::new);
    let FirstPass {
        folded,
        dropped,
        kept_deltas,
        unreadable,
        halves,
        merged,
        skipped,
        events_in,
        known,
        bytes_read,
        bytes_in,
        errors_before,
        schema_errors,
    } = first_pass(
        settings,
        input,
        &mut opened,
        check,
        &mut writer,
        verifier.as_mut(),
    )?;
    let events_out = writer.events();
    let bytes_out = writer.bytes();
    let losses = writer.take_notes();
    let over_limit = writer
        .over_limit()
        .map(|(first, count)| first.warning(count));
    writer
        .finish()
        .with_context(|| format!("writing the compacted {name}"))?;
    let mut report = Report {
        name: name.clone(),
        events_in,
        events_out,
        bytes_read,
        bytes_out,
        dropped,
        kept_deltas,
        unreadable,
        refused: None,
        kept: None,
        skipped: None,
        unchanged: None,
        over_limit,
    };
    let unkept = agui_lens_core::compact::Unkept {
        unreadable,
        merged,
        skipped,
        failing: dropped,
        halves,
    };
    if let Some(why) = unkept.refusal_always(&name) {
        report.refused = Some(why);
        return Ok(report);
    }
    if known == 0 {
        // Not a stream (an error body, a sidecar, an empty or binary file): whatever it
        // holds, it is left exactly as it is, and nothing is made from it.
        report.skipped = Some(format!(
            "no AG-UI events ({})",
            read::describe_no_events(read_as, &head)
        ));
        return Ok(report);
    }
    // A file already at the output that is no stream is the user's, not a previous run's
    // copy: left as it was, in a folder of outputs as under `-o FILE` (which refuses it
    // before anything is read). Looked at once the input is known to be a stream: a copy
    // `--mirror` made of one that is not is its own, and stays as it is.
    if let (Target::File(output) | Target::Stream(output), None, Some(root)) =
        (target, in_place, &settings.into)
        && let Some(why) = link_on_the_way(root, output).or_else(|| no_regular_file(output))
    {
        report.refused = Some(why);
        return Ok(report);
    }
    if let (Target::File(output), None) = (target, in_place)
        && let Err(err) = super::refuse_to_replace(output, "its output", super::Replaces::Stream)
    {
        report.refused = Some(format!("{err:#}"));
        return Ok(report);
    }
    if !settings.drop_unreadable
        && let Some(why) = unkept.refusal(&name, "--drop-unreadable")
    {
        report.refused = Some(why);
        return Ok(report);
    }
    if let Some(why) = agui_lens_core::write::refusal_for_losses(&losses, format) {
        report.refused = Some(why);
        return Ok(report);
    }

    // Protobuf frames take fewer bytes than the JSON the frames' events read as: the least
    // the events take written back as protobuf is the input's own size.
    let bytes_in = match (read_as, format) {
        (InputFormat::Proto, InputFormat::Proto) => bytes_read,
        _ => bytes_in,
    };
    if bytes_out > bytes_in && matches!(input, InputSpec::File(_)) {
        // Compaction never makes a file larger (chunk streams too short for merging to pay
        // for their expansion can). Written back as they were read, the events take
        // `bytes_in` or more (SSE and JSON arrays add their framing; only frames neither
        // keeps, over the line cap or malformed, count for less), so only then are they
        // written, to a second temp file, and the smaller kept. A file replaced in place is
        // then left alone. (Stdin cannot be read twice: its compacted stream is written
        // whatever its size.)
        let mut as_read_temp = temp_file(target)?;
        let as_read_bytes = as_read(
            settings,
            input,
            as_read_temp.as_file_mut(),
            format,
            compression,
        )
        .with_context(|| format!("writing {name} as it was read"))?;
        // As many bytes either way (an SSE file's last frame, written back, gets the blank
        // line it ended without): the events as read are kept, so a file is not grown.
        if as_read_bytes <= bytes_out {
            report.kept = Some(as_read_bytes);
            if in_place.is_some() {
                // Nothing written: counted as left as it was, not as compacted.
                report.unchanged = Some("already compact".into());
                return Ok(report);
            }
            temp = as_read_temp;
            // What was verified on the way is not what is kept.
            verifier = None;
        }
    }
    if let Some(path) = in_place {
        // Compacted before: the same bytes again. The file is left alone, not replaced by a
        // copy of itself (a new inode and time for every backup and sync to copy again, and
        // a rename's risk for nothing), and there is nothing to verify.
        if same_bytes(temp.path(), path).context("comparing the compacted stream")? {
            report.unchanged = Some("already compact".into());
            return Ok(report);
        }
    }
    let Some(ctx) = check else {
        if let Some((path, stamp)) = &stamp {
            // On the disk first: the file is compared as late as it can be before the rename.
            temp.as_file().sync_all().context("syncing a temp file")?;
            if let Some(why) = changed(path, stamp, &settings.writers)? {
                report.refused = Some(why);
                return Ok(report);
            }
        }
        report.unchanged = commit(temp, input, target, &name)?;
        carry_request(carried.as_deref(), target, &name)?;
        return Ok(report);
    };
    // The temp file's bytes go to the disk while it is verified (`persist` then finds them
    // there): one after the other, the two took about as long each.
    let synced = match target {
        Target::File(_) => Some(temp.as_file().try_clone().context("syncing a temp file")?),
        Target::Stdout | Target::Stream(_) => None,
    };
    // Left out as asked (--drop-unreadable): the errors of what was dropped go with it.
    let dropped = settings.drop_unreadable && unkept.any();
    std::thread::scope(|s| {
        let synced = synced.map(|file| s.spawn(move || file.sync_all()));
        let verified = verify_written(
            ctx,
            settings,
            input,
            format,
            &temp,
            folded,
            verifier,
            (errors_before.as_ref(), &schema_errors, dropped),
        );
        let synced = synced.map(|handle| handle.join().expect("syncing does not panic"));
        let (refused, folds) = verified?;
        // Both folds are long-lived trees of small allocations: they are freed beside the
        // commit, which had to wait ~3 ms for them.
        s.spawn(move || drop(folds));
        if let Some(synced) = synced {
            synced.with_context(|| format!("writing the compacted {name}"))?;
        }
        let refused = match (refused, &stamp) {
            (Some(why), _) => Some(why),
            (None, Some((path, stamp))) => changed(path, stamp, &settings.writers)?,
            (None, None) => None,
        };
        if let Some(why) = refused {
            report.refused = Some(why);
            return Ok(report);
        }
        report.unchanged = commit(temp, input, target, &name)?;
        carry_request(carried.as_deref(), target, &name)?;
        Ok(report)
    })
}

/// Writes the request a recording `run` made answers (see
/// [`agui_lens_core::check::recorded::REQUEST_SUFFIX`]) beside its compacted stream, with the
/// stream's new length: the compacted file is checked as its original was. Written to
/// stdout or a device, the stream goes without it, and that is said.
fn carry_request(request: Option<&serde_json::Value>, target: &Target, name: &str) -> Result<()> {
    match (request, target) {
        (None, _) => Ok(()),
        (Some(request), Target::File(path)) => super::record_request(path, request, None),
        (Some(_), Target::Stdout | Target::Stream(_)) => {
            say!(
                "note: {name}: the request it answers, recorded beside it, does not go with \
                 the compacted stream; check it with --initial-state for the state the request \
                 held"
            );
            Ok(())
        }
    }
}

/// Checks and folds the compacted stream in `temp`, and judges it against the original
/// (see [`judge`]): why it may not replace the original, if it may not, and both folds. What
/// `verifier` found on the way is taken if the file holds exactly what it saw (the file is
/// confirmed and that judged at once, on both threads); else the file is read back.
#[allow(clippy::too_many_arguments)]
fn verify_written(
    ctx: &CheckContext<'_>,
    settings: &Settings<'_>,
    input: &InputSpec,
    format: InputFormat,
    temp: &tempfile::NamedTempFile,
    folded: Threads,
    verifier: Option<Verifier<'_>>,
    (errors_before, schema_errors, dropped): (
        Option<&BTreeMap<RuleId, u64>>,
        &BTreeMap<RuleId, u64>,
        bool,
    ),
) -> Result<(Option<String>, (Threads, ReadBack))> {
    let open = || -> Result<Box<dyn io::Read + Send>> {
        Ok(Box::new(
            File::open(temp.path()).context("reading the compacted stream back")?,
        ))
    };
    let judged = |back: &ReadBack| {
        judge(
            ctx,
            &settings.read,
            input,
            &folded,
            back,
            (settings.level, dropped, settings.raised),
            (errors_before, schema_errors),
        )
    };
    let on_the_way = match verifier.map(Verifier::finish) {
        Some((back, written)) => {
            let (confirmed, judged) = rayon::join(
                || written.confirm(open()?, format, &settings.read),
                || judged(&back),
            );
            confirmed?.then_some((back, judged))
        }
        None => None,
    };
    let (back, refused) = match on_the_way {
        Some((back, judged)) => (back, judged?),
        None => {
            let back = read_back(ctx, &settings.read, format, open()?)?;
            let refused = judged(&back)?;
            (back, refused)
        }
    };
    Ok((refused, (folded, back)))
}

/// What the first pass over an input found.
struct FirstPass {
    /// What each thread of the original folds to.
    folded: Threads,
    /// Chunks the official client fails on, left out (only with --drop-unreadable).
    dropped: u64,
    /// STATE_DELTA events kept as they were: no state was known before them.
    kept_deltas: u64,
    /// Frames that could not be read as events.
    unreadable: u64,
    /// Events holding half of a UTF-16 pair, which compaction does not read (not counted in
    /// `unreadable`).
    halves: u64,
    /// SSE frames the official client reads as one with the frame before, and fails on
    /// (`framing/sse-frames-merged`).
    merged: u64,
    /// Protobuf frames whose fields were passed over in reading them
    /// (`framing/proto-unknown-field`).
    skipped: u64,
    events_in: u64,
    /// Events of a type AG-UI defines.
    known: u64,
    /// The input's bytes as read, framing included (decompressed).
    bytes_read: u64,
    /// Its frames' bytes, with one line end each: the least its events take written as they
    /// were read.
    bytes_in: u64,
    /// The original's errors, when they were counted on the way (stdin, which cannot be read
    /// again).
    errors_before: Option<BTreeMap<RuleId, u64>>,
    /// The original's schema errors, by rule, of the events read whole on the way (every
    /// event that breaks a schema is: the fast path takes only well-formed deltas).
    schema_errors: BTreeMap<RuleId, u64>,
}

/// Compacts an opened input into `writer`, handing every event written to `verifier` too.
fn first_pass(
    settings: &Settings<'_>,
    input: &InputSpec,
    opened: &mut read::Opened,
    check: Option<&CheckContext<'_>>,
    writer: &mut dyn Output,
    mut verifier: Option<&mut Verifier<'_>>,
) -> Result<FirstPass> {
    let name = opened.name.clone();
    let mut compactor = Compactor::new(settings.level, settings.state_limit)
        .with_state(settings.initial_state.clone())
        .with_max_line(settings.read.max_line);
    let mut scratch = Vec::new();
    // Compacts one event; `schema` is what the schemas found wrong with it, if that is known.
    let mut push = |compactor: &mut Compactor,
                    event: &Event,
                    schema: Option<&[Diagnostic]>,
                    raw: &[u8],
                    writer: &mut dyn Output|
     -> io::Result<()> {
        match verifier.as_deref_mut() {
            Some(verifier) => compactor.push(
                event,
                raw,
                &mut Tee {
                    out: writer,
                    verifier,
                    current: Some(Current {
                        event,
                        text: raw,
                        schema,
                    }),
                    scratch: &mut scratch,
                },
            ),
            None => compactor.push(event, raw, writer),
        }
    };
    // The original's errors only matter if the compacted stream has some: they are counted
    // then, by reading the original again. Stdin cannot be read again, so for it they are
    // counted on the way.
    let mut errors_before: Option<BTreeMap<RuleId, u64>> = None;
    let mut schema_errors = BTreeMap::new();
    let mut bytes_in = 0u64;
    let mut events_in = 0u64;
    let mut known = 0u64;
    let mut merged = 0u64;
    let mut skipped = agui_lens_core::compact::SkippedFields::default();
    let unreadable;
    let mut halves = 0;
    match check.filter(|_| matches!(input, InputSpec::Stdin)) {
        Some(ctx) => {
            let mut engine = Engine::new(ctx, name.clone(), std::mem::take(&mut opened.head));
            let mut counts = BTreeMap::new();
            let mut batch = Batch::default();
            let mut found = Vec::new();
            let mut failure: Option<io::Error> = None;
            while opened
                .reader
                .next_batch(&mut batch)
                .with_context(|| format!("reading {name}"))?
            {
                if stop::requested() {
                    bail!("interrupted: {name} was left as it was");
                }
                bytes_in += batch.frames.len() as u64 + batch.data_len() as u64;
                for frame in &batch.frames {
                    merged += u64::from(agui_lens_core::compact::is_merged(frame));
                    skipped.note(frame);
                }
                engine.check_batch_with(&batch, &mut found, |event, raw| {
                    events_in += 1;
                    known += u64::from(event.kind.is_some());
                    // Read with U+FFFD for half a UTF-16 pair: not what the stream holds.
                    halves += u64::from(event.mended);
                    if failure.is_none() {
                        failure = push(&mut compactor, event, None, raw, writer).err();
                    }
                });
                count_errors(&mut counts, found.drain(..));
                if let Some(err) = failure.take() {
                    return Err(err).with_context(|| format!("writing the compacted {name}"));
                }
            }
            let stats = engine.finish(&mut found);
            count_errors(&mut counts, found.drain(..));
            errors_before = Some(counts);
            unreadable = stats.frames.saturating_sub(stats.events);
        }
        None => {
            let max_line = settings.read.max_line;
            // The fast path for deltas stands in for the embedded schemas only: a project's
            // may hold a delta to more (a merged delta would take its error with it).
            let fast = check.is_none_or(|ctx| ctx.schemas.is_stock());
            let stats = for_each_schema_checked(
                opened,
                max_line,
                fast,
                check,
                |fed, batch, frame, schema| {
                    let raw = batch.bytes(frame);
                    merged += u64::from(agui_lens_core::compact::is_merged(frame));
                    skipped.note(frame);
                    let taken = match fed {
                        Fed::Delta {
                            kind,
                            id,
                            delta,
                            owner,
                            ..
                        } => compactor.push_delta(kind, id, delta, owner),
                        Fed::Event(event) => {
                            count_errors(&mut schema_errors, schema.iter().cloned());
                            push(&mut compactor, event, Some(schema), raw, writer)?;
                            true
                        }
                    };
                    if !taken {
                        // A chunk stream is open: the whole event after all.
                        if let Some(event) = parse_event(&name, batch, frame, max_line) {
                            push(&mut compactor, &event, None, raw, writer)?;
                        }
                    }
                    Ok(())
                },
            )
            .map_err(|err| {
                if stop::requested() {
                    anyhow!("interrupted: {name} was left as it was")
                } else {
                    err.context(format!("compacting {name}"))
                }
            })?;
            events_in = stats.events;
            known = stats.known;
            bytes_in = stats.bytes;
            halves = stats.unread_halves;
            unreadable = stats.unreadable - halves;
        }
    }
    let dropped = compactor.dropped();
    let kept_deltas = compactor.kept_deltas();
    let folded = match verifier {
        Some(verifier) => compactor.finish(&mut Tee {
            out: writer,
            verifier,
            current: None,
            scratch: &mut scratch,
        }),
        None => compactor.finish(writer),
    }
    .with_context(|| format!("writing the compacted {name}"))?;
    Ok(FirstPass {
        folded,
        dropped,
        kept_deltas,
        unreadable,
        halves,
        merged,
        skipped: skipped.frames,
        events_in,
        known,
        bytes_read: opened.reader.bytes_read(),
        bytes_in,
        errors_before,
        schema_errors,
    })
}

/// Writes every frame of `input` as it was read, in `format` and `compression`: what
/// compaction writes when compacting would make the stream larger. Frames that were not held
/// (over the line cap, malformed) are left out here as compaction leaves them out. An SSE
/// frame the input ended inside is kept, as compaction keeps its event, and is written
/// whole. Returns the bytes written, before compression.
fn as_read(
    settings: &Settings<'_>,
    input: &InputSpec,
    out: impl Write,
    format: InputFormat,
    compression: Compression,
) -> Result<u64> {
    let mut opened = read::open(input, &settings.read)?;
    let mut writer = EventWriter::new(out, format, compression)?;
    let mut batch = Batch::default();
    while opened.reader.next_batch(&mut batch)? {
        for frame in &batch.frames {
            if let read::FrameKind::Data { .. } = frame.kind {
                writer.raw(batch.bytes(frame))?;
            }
        }
    }
    let bytes = writer.bytes();
    writer.finish()?;
    Ok(bytes)
}

/// A temp file beside the target (so the final rename is atomic, and a new file gets the
/// permissions a new file gets), or in the temp directory for stdout or a device.
fn temp_file(target: &Target) -> Result<tempfile::NamedTempFile> {
    match target {
        Target::File(path) => super::temp_beside(path),
        Target::Stdout | Target::Stream(_) => {
            let temp = tempfile::Builder::new()
                .prefix(".agui-lens.")
                .suffix(".tmp")
                .tempfile()
                .context("creating a temp file")?;
            crate::signals::remove_if_ended(temp.path());
            Ok(temp)
        }
    }
}

/// Puts the verified temp file in place (see [`persist`]), or copies it to stdout or into a
/// device, unless the user has interrupted the run: then the target is left as it was.
/// Says what was left alone instead, if anything: an output that already holds these bytes
/// (an earlier run's) is not replaced by a copy of itself.
fn commit(
    temp: tempfile::NamedTempFile,
    input: &InputSpec,
    target: &Target,
    name: &str,
) -> Result<Option<String>> {
    if stop::requested() {
        bail!("interrupted: {name} was left as it was");
    }
    // (In a closure: an error of any step, a `?` too, says what it was writing, and where;
    // "Is a directory" alone named no file.)
    let write = || -> Result<Option<String>> {
        match target {
            Target::Stdout => copy_out(&temp, super::Stdout).map(|()| None),
            Target::Stream(path) => copy_out(&temp, super::open_stream(path)?).map(|()| None),
            Target::File(path) if same_bytes(temp.path(), path)? => {
                Ok(Some(format!("{} already holds it", path.display())))
            }
            Target::File(path) => {
                if !path.exists() {
                    take_permissions(&temp, input)?;
                }
                let others = other_names(path);
                persist(temp, path)?;
                if others > 0 {
                    let names = if others == 1 {
                        "1 other name (a hard link): it keeps".to_owned()
                    } else {
                        format!("{others} other names (hard links): they keep")
                    };
                    say!(
                        "warning: {} had {names} the stream as it was (the compacted one is a new file)",
                        path.display()
                    );
                }
                Ok(None)
            }
        }
    };
    write().with_context(|| match target {
        Target::File(path) | Target::Stream(path) => {
            format!("writing the compacted {name} to {}", path.display())
        }
        Target::Stdout => format!("writing the compacted {name}"),
    })
}

/// Gives a compacted file that is new in the output its source's permissions, within those a
/// new file gets (as `cp` does): a read-only history stays read-only, as a copied file does.
/// A file replaced keeps its own (see [`persist`]).
fn take_permissions(temp: &tempfile::NamedTempFile, input: &InputSpec) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Some(source) = input.path().and_then(|p| fs::metadata(p).ok()) else {
        return Ok(());
    };
    if !source.is_file() {
        return Ok(());
    }
    let new = temp.as_file().metadata()?.permissions().mode();
    let mode = new & source.permissions().mode() & 0o777;
    temp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
}

/// How many other names (hard links) the file at `path` has; none when there is no file.
fn other_names(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map_or(0, |m| m.nlink().saturating_sub(1))
}

/// Copies a verified temp file into `out`.
fn copy_out(temp: &tempfile::NamedTempFile, mut out: impl Write) -> Result<()> {
    let mut file = File::open(temp.path())?;
    io::copy(&mut file, &mut out)?;
    out.flush()?;
    Ok(())
}

/// [`judge`], counting the original's errors (again) when they were not counted on the way.
fn judge(
    ctx: &CheckContext<'_>,
    read_original: &ReadOptions,
    input: &InputSpec,
    original: &[(Option<String>, Folded)],
    read_back: &ReadBack,
    kept: (Level, bool, bool),
    (errors_before, schema_errors): (Option<&BTreeMap<RuleId, u64>>, &BTreeMap<RuleId, u64>),
) -> Result<Option<String>> {
    let count = || match errors_before {
        Some(counts) => Ok(counts.clone()),
        None => count_original_errors(ctx, read_original, input),
    };
    match verify::judge(original, read_back, kept, count)? {
        Some(why) => Ok(Some(why)),
        None => verify::hidden_schema_errors(read_back, Some(schema_errors), count),
    }
}

/// Says what became of each input, then of all; the outcome is the worst of them. An input
/// that could not be read, and one named on the command line that is no stream, fail the
/// run; a non-stream a walk found is only listed.
fn summarize(reports: Vec<(bool, Result<Report>)>) -> Result<Outcome> {
    let mut outcome = Outcome::Clean;
    let (mut events_in, mut events_out, mut bytes_in, mut bytes_out, mut files) = (0, 0, 0, 0, 0);
    let (mut skipped, mut failed, mut refused) = (0, 0, 0);
    // Written before, the same bytes again: left as they were.
    let mut left_alone = 0u64;
    for (explicit, report) in reports {
        match report {
            Err(err) => {
                say!("error: {}", visible(&format!("{err:#}")));
                outcome = Outcome::Failed;
                failed += 1;
            }
            Ok(Report {
                name,
                skipped: Some(why),
                ..
            }) => {
                say!(
                    "{}",
                    visible(&format!("skipped {name}: {why}; left as it was"))
                );
                skipped += 1;
                if explicit {
                    outcome = Outcome::Failed;
                }
            }
            Ok(report) => {
                if let Some(why) = &report.refused {
                    say!(
                        "{}",
                        visible(&format!(
                            "refused {}: {why}; nothing was written",
                            report.name
                        ))
                    );
                    refused += 1;
                    if outcome == Outcome::Clean {
                        outcome = Outcome::Findings;
                    }
                    continue;
                }
                // What was written: the compacted stream, or the input's events as read.
                left_alone += u64::from(report.unchanged.is_some());
                let unchanged = match &report.unchanged {
                    Some(what) => format!("; {what}: left as it was"),
                    None => String::new(),
                };
                let (events_after, bytes_before, bytes_after) = if let Some(kept) = report.kept {
                    say!(
                        "{}: {} events, {} kept as they were: compacted, they would take {} in {} events{unchanged}",
                        report.name,
                        report.events_in,
                        human_bytes(kept),
                        human_bytes(report.bytes_out),
                        report.events_out
                    );
                    // An unchanged file counts as it was on both sides.
                    (report.events_in, kept, kept)
                } else {
                    let mut dropped = match report.dropped {
                        0 => String::new(),
                        1 => "; 1 chunk event the official client fails on was left out (`check` says why)".to_owned(),
                        n => {
                            format!("; {n} chunk events the official client fails on were left out (`check` says why)")
                        }
                    };
                    if report.unreadable > 0 {
                        let frames = plural(report.unreadable, "frame");
                        dropped.push_str(&format!("; {frames} that could not be read dropped"));
                    }
                    if report.kept_deltas > 0 {
                        let deltas = plural(report.kept_deltas, "STATE_DELTA");
                        dropped.push_str(&format!(
                            "; {deltas} kept as they were (no state is known before them: \
                             --initial-state gives the one the client starts from)"
                        ));
                    }
                    dropped.push_str(&unchanged);
                    say!(
                        "{}: {} → {}, {} → {}{dropped}",
                        report.name,
                        report.events_in,
                        plural(report.events_out, "event"),
                        human_bytes(report.bytes_read),
                        human_bytes(report.bytes_out)
                    );
                    (report.events_out, report.bytes_read, report.bytes_out)
                };
                if let Some(warning) = &report.over_limit {
                    say!(
                        "{}",
                        visible(&format!("warning: {}: {warning}", report.name))
                    );
                }
                files += 1;
                events_in += report.events_in;
                events_out += events_after;
                bytes_in += bytes_before;
                bytes_out += bytes_after;
            }
        }
    }
    if skipped > 0 && files + skipped > 1 {
        // Each is named above with why: no events, or none compact rewrites (a capture).
        say!(
            "left {} (skipped, each for the reason above)",
            match skipped {
                1 => "1 file as it was".to_owned(),
                n => format!("{n} files as they were"),
            }
        );
    }
    if files > 1 && left_alone == files {
        // A second run over what the first made: nothing was compacted.
        say!(
            "{files} files already compact: left as they were ({}, {})",
            plural(events_in, "event"),
            human_bytes(bytes_in)
        );
    } else if files > 1 {
        let saved = if bytes_in > 0 {
            100.0 * (1.0 - bytes_out as f64 / bytes_in as f64)
        } else {
            0.0
        };
        // (The totals count the files left alone as they are on both sides.)
        let done = match left_alone {
            0 => format!("compacted {files} files"),
            n => format!(
                "compacted {} and left {} already compact as {}",
                plural(files - n, "file"),
                plural(n, "file"),
                if n == 1 { "it was" } else { "they were" }
            ),
        };
        say!(
            "{done}: {events_in} → {}, {} → {} ({saved:.0}% smaller)",
            plural(events_out, "event"),
            human_bytes(bytes_in),
            human_bytes(bytes_out)
        );
    }
    if failed + refused > 0 && files + skipped + failed + refused > 1 {
        // Said after the rest, so that the last lines do not read as a run that went well.
        let mut not = Vec::new();
        if failed > 0 {
            not.push(format!("{} could not be compacted", plural(failed, "file")));
        }
        if refused > 0 {
            // Refused for any reason named above: verification, frames or chunks that would be
            // lost, a file that changed meanwhile.
            not.push(format!("{} refused", plural(refused, "file")));
        }
        say!(
            "{} (each named above with why): left as {}",
            not.join(", "),
            if failed + refused == 1 {
                "it was"
            } else {
                "they were"
            }
        );
    }
    Ok(outcome)
}

/// Checks the original (again) and counts its errors by rule.
fn count_original_errors(
    ctx: &CheckContext<'_>,
    read: &ReadOptions,
    input: &InputSpec,
) -> Result<BTreeMap<RuleId, u64>> {
    verify::count_errors_of(ctx, read::open(input, read)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_lens_core::check::catalog::Level as RuleLevel;
    use agui_lens_core::check::rules::protocol::DEFAULT_STATE_LIMIT;
    use agui_lens_core::fold::Folder;
    use agui_lens_core::fold::threads::ByThread;
    use agui_lens_core::read::DEFAULT_MAX_LINE;

    fn fold_of(text: &str) -> Threads {
        let mut threads = ByThread::new(|| Folder::new(DEFAULT_STATE_LIMIT));
        for (i, line) in text.lines().enumerate() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let loc = agui_lens_core::protocol::event::Location {
                path: Arc::from("original"),
                line: i as u64 + 1,
                offset: 0,
                index: i as u64,
            };
            let event = Event::from_value(loc, value);
            threads.thread_of(Some(&event)).1.apply(&event);
        }
        threads.finish()
    }

    fn read_back_of(schemas: &SchemaSet, levels: &Levels, text: &str) -> ReadBack {
        let ctx = context(schemas, levels);
        let read = read_options();
        let written = Box::new(io::Cursor::new(text.as_bytes().to_vec()));
        read_back(&ctx, &read, InputFormat::Jsonl, written).unwrap()
    }

    const ORIGINAL: &str = concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Hel"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"lo"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        "\n",
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
        "\n",
    );

    fn judged(compacted: &str) -> Option<String> {
        judged_against(ORIGINAL, compacted)
    }

    fn judged_against(original: &str, compacted: &str) -> Option<String> {
        let schemas = SchemaSet::embedded().unwrap();
        let levels = Levels::default();
        let back = read_back_of(&schemas, &levels, compacted);
        let ctx = context(&schemas, &levels);
        let read = read_options();
        // The original's errors are given (as for stdin), so nothing is read again.
        let before = BTreeMap::new();
        judge(
            &ctx,
            &read,
            &InputSpec::Stdin,
            &fold_of(original),
            &back,
            (Level::Deltas, false, false),
            (Some(&before), &BTreeMap::new()),
        )
        .unwrap()
    }

    fn context<'a>(schemas: &'a SchemaSet, levels: &'a Levels) -> CheckContext<'a> {
        CheckContext {
            schemas,
            levels,
            max_line: DEFAULT_MAX_LINE,
            protocol: ProtocolOptions::default(),
        }
    }

    fn read_options() -> ReadOptions {
        ReadOptions {
            format: None,
            max_line: DEFAULT_MAX_LINE,
            entry: None,
        }
    }

    /// What `compact` runs with by default, at `level`.
    fn settings(level: Level, schemas: &SchemaSet) -> Settings<'_> {
        Settings {
            level,
            read: read_options(),
            initial_state: None,
            state_limit: DEFAULT_STATE_LIMIT,
            schemas: Some(schemas),
            levels: verification_levels(),
            raised: false,
            drop_unreadable: false,
            writers: HashMap::new(),
            into: None,
        }
    }

    /// Compacts `path` at `level` into memory as `compact` does, verifying on the way.
    /// Returns the bytes written, what verifying on the way found, and its digest.
    fn compacted_in_memory(
        ctx: &CheckContext<'_>,
        settings: &Settings<'_>,
        path: &std::path::Path,
        compression: Compression,
    ) -> Option<(
        InputFormat,
        Vec<u8>,
        ReadBack,
        agui_lens_core::compact::verify::Written,
    )> {
        let input = InputSpec::File(path.to_owned());
        let mut opened = read::open(&input, &settings.read).ok()?;
        let format = opened.format;
        let mut writer = EventWriter::new(Vec::new(), format, compression).unwrap();
        let mut verifier = Verifier::new(ctx);
        first_pass(
            settings,
            &input,
            &mut opened,
            Some(ctx),
            &mut writer,
            Some(&mut verifier),
        )
        .ok()?;
        let bytes = writer.finish().unwrap();
        let (found, written) = verifier.finish();
        Some((format, bytes, found, written))
    }

    /// Verifying compacted events as they are written finds exactly what reading the written
    /// file back finds (the same fold, the same errors of every rule), for every stream among
    /// the fixtures, in every format, at both levels; and the file holds exactly the events
    /// that were verified, while a file with one byte changed or one event left out does not.
    #[test]
    fn verifying_on_the_way_finds_what_reading_back_finds() {
        let schemas = SchemaSet::embedded().unwrap();
        let levels = verification_levels();
        let ctx = context(&schemas, &levels);
        let read = read_options();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut paths = Vec::new();
        let mut dirs = vec![root.join("fixtures")];
        while let Some(dir) = dirs.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path
                    .extension()
                    .is_some_and(|e| e == "jsonl" || e == "sse" || e == "json")
                {
                    paths.push(path);
                }
            }
        }
        paths.sort();
        // The fixtures hold no stream as a JSON array: one is made from a recording.
        let dir = tempfile::tempdir().unwrap();
        let lines = fs::read_to_string(root.join("fixtures/valid/agui-sdk-full.jsonl")).unwrap();
        let array = format!("[\n{}\n]\n", lines.trim_end().replace('\n', ",\n"));
        paths.push(dir.path().join("array.json"));
        fs::write(paths.last().unwrap(), array).unwrap();
        // Nor one written with spaces after `:` and `,` (as Python's `json.dumps` writes),
        // whose events compaction writes without them: each valid fixture, so spaced.
        let valid: Vec<_> = paths
            .iter()
            .filter(|p| p.starts_with(root.join("fixtures/valid")))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .cloned()
            .collect();
        for path in valid {
            let spaced = dir.path().join(format!(
                "spaced-{}",
                path.file_name().unwrap().to_string_lossy()
            ));
            fs::write(&spaced, with_spaces(&fs::read(&path).unwrap())).unwrap();
            paths.push(spaced);
        }
        let (mut compared, mut formats) = (0, std::collections::BTreeSet::new());
        for path in &paths {
            for level in [Level::Deltas, Level::Snapshot] {
                let settings = settings(level, &schemas);
                let Some((format, bytes, found, written)) =
                    compacted_in_memory(&ctx, &settings, path, Compression::None)
                else {
                    continue;
                };
                let file = || Box::new(io::Cursor::new(bytes.clone()));
                let shown = format!("{} at {level:?}", path.display());
                assert!(written.confirm(file(), format, &read).unwrap(), "{shown}");
                let back = read_back(&ctx, &read, format, file()).unwrap();
                assert_eq!(found.folded, back.folded, "{shown}");
                assert_eq!(found.errors, back.errors, "{shown}");
                compared += 1;
                formats.insert(format!("{format:?}"));
                // The file must hold what was verified, byte for byte and event for event.
                if let Some(at) = bytes.iter().position(|&b| b == b'A') {
                    let mut changed = bytes.clone();
                    changed[at] = b'B';
                    let changed = Box::new(io::Cursor::new(changed));
                    assert!(!written.confirm(changed, format, &read).unwrap(), "{shown}");
                }
                if format == InputFormat::Jsonl && bytes.len() > 1 {
                    let cut = bytes[..bytes.len() - 1]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    let shorter = Box::new(io::Cursor::new(bytes[..cut].to_vec()));
                    assert!(!written.confirm(shorter, format, &read).unwrap(), "{shown}");
                }
            }
        }
        assert!(compared > 200, "only {compared} compared");
        assert_eq!(formats.len(), 3, "{formats:?}");
    }

    /// `text` with a space after every `:` and `,` between tokens.
    fn with_spaces(text: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() * 5 / 4);
        let (mut in_string, mut escaped) = (false, false);
        for &b in text {
            out.push(b);
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
            } else if b == b'"' {
                in_string = true;
            } else if b == b':' || b == b',' {
                out.push(b' ');
            }
        }
        out
    }

    /// What is confirmed is the file's decompressed text.
    #[test]
    fn a_compressed_file_is_confirmed_by_its_text() {
        let schemas = SchemaSet::embedded().unwrap();
        let levels = verification_levels();
        let ctx = context(&schemas, &levels);
        let read = read_options();
        let settings = settings(Level::Deltas, &schemas);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/valid/agui-sdk-full.jsonl");
        for compression in [Compression::Gzip, Compression::Zstd] {
            let (format, bytes, found, written) =
                compacted_in_memory(&ctx, &settings, &path, compression).unwrap();
            assert!(!bytes.starts_with(b"{"), "{compression:?} is compressed");
            let file = || Box::new(io::Cursor::new(bytes.clone()));
            assert!(
                written.confirm(file(), format, &read).unwrap(),
                "{compression:?}"
            );
            let back = read_back(&ctx, &read, format, file()).unwrap();
            assert_eq!(found.folded, back.folded);
            assert_eq!(found.errors, back.errors);
        }
    }

    /// Verification leaves out only what cannot fail a stream: every rule that reports an
    /// error is run, no rule that only warns is.
    #[test]
    fn verification_runs_every_rule_that_reports_errors() {
        let levels = verification_levels();
        let defaults = Levels::default();
        let mut left_out = 0;
        for id in RuleId::ALL {
            match defaults.level(*id) {
                RuleLevel::Deny => assert_eq!(levels.level(*id), RuleLevel::Deny, "{id:?}"),
                RuleLevel::Warn | RuleLevel::Note => {
                    assert_eq!(levels.level(*id), RuleLevel::Allow, "{id:?}");
                    left_out += 1;
                }
                RuleLevel::Allow => assert_eq!(levels.level(*id), RuleLevel::Allow, "{id:?}"),
            }
        }
        assert!(left_out > 0 && !levels.enabled(RuleId::FramingDuplicateKey));
    }

    #[test]
    fn a_faithful_compaction_is_accepted() {
        let compacted = ORIGINAL.replace(
            "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"Hel\"}\n{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"lo\"}",
            "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"Hello\"}",
        );
        assert_ne!(compacted, ORIGINAL);
        assert_eq!(judged(&compacted), None);
    }

    /// Not equal as written (`1.0` and `1`), equal in meaning: accepted.
    #[test]
    fn numbers_compare_by_value() {
        let with_state = |n: &str| {
            ORIGINAL.replacen(
                "\n",
                &format!("\n{{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{{\"n\":{n}}}}}\n"),
                1,
            )
        };
        assert_eq!(judged_against(&with_state("1.0"), &with_state("1")), None);
        assert!(judged_against(&with_state("1.5"), &with_state("1")).is_some());
    }

    #[test]
    fn a_compaction_that_folds_differently_is_refused() {
        let compacted = ORIGINAL.replace("\"lo\"", "\"p\"");
        assert_eq!(
            judged(&compacted).as_deref(),
            Some(
                "the compacted stream folds differently at /messages/0/content: \"Hello\" before, \"Help\" after"
            )
        );
    }

    /// A run that leaves a tool call for the client to answer must still leave it: the same
    /// messages and state are not enough.
    #[test]
    fn a_compaction_that_loses_a_pending_call_is_refused() {
        let call = concat!(
            r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"pick","parentMessageId":"m"}"#,
            "\n",
            r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
            "\n",
        );
        let original = ORIGINAL.replace(
            "{\"type\":\"RUN_FINISHED\"",
            &format!("{call}{{\"type\":\"RUN_FINISHED\""),
        );
        let snapshot = concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"assistant","content":"Hello","toolCalls":[{"id":"c1","type":"function","function":{"name":"pick","arguments":""}}]}]}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n",
        );
        assert_eq!(
            judged_against(&original, snapshot).as_deref(),
            Some(
                "the compacted stream ends its runs differently at /runs/0/pendingToolCallIds: [\"c1\"] before, (absent) after"
            )
        );
        assert_eq!(judged_against(&original, &original), None);
    }

    /// Each thread is compared on its own: a message moved into another thread's history
    /// is refused, though all threads folded together would look the same.
    #[test]
    fn a_compaction_that_moves_a_message_between_threads_is_refused() {
        let second = ORIGINAL
            .replace("\"threadId\":\"t\"", "\"threadId\":\"u\"")
            .replace("\"runId\":\"r\"", "\"runId\":\"r2\"")
            .replace("\"m\"", "\"n\"");
        let original = format!("{ORIGINAL}{second}");
        let mixed = concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"assistant","content":"Hello"}]}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
            "\n",
            r#"{"type":"RUN_STARTED","threadId":"u","runId":"r2"}"#,
            "\n",
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"assistant","content":"Hello"},{"id":"n","role":"assistant","content":"Hello"}]}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"u","runId":"r2"}"#,
            "\n",
        );
        let why = judged_against(&original, mixed).expect("refused");
        assert!(
            why.starts_with(
                "in thread \"u\", the compacted stream folds differently at /messages/0"
            ),
            "{why}"
        );
        assert_eq!(judged_against(&original, &original), None);
    }

    #[test]
    fn a_compaction_that_gains_errors_is_refused() {
        // Same fold, but the message is never ended: the run finishes with it open.
        let compacted =
            ORIGINAL.replace("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n", "");
        let why = judged(&compacted).expect("refused");
        assert!(
            why.starts_with(
                "the compacted stream has 1 lifecycle/open-at-finish errors, the original 0"
            ),
            "{why}"
        );
    }
}
