//! What the user named on the command line: files, `-` for stdin, and directories walked for
//! captures the way ripgrep walks a tree (hidden entries and what ignore files name are left
//! out), each input remembering where it sits under the argument it was found through.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Result;

use agui_lens_core::read::har::FailedCall;
use agui_lens_core::read::{self, InputSpec, is_stream_file};
use agui_lens_core::text::plural;

/// How directories are walked.
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// Globs of paths to leave out (gitignore syntax, relative to each directory walked).
    pub exclude: Vec<String>,
    /// Also walk hidden files and folders.
    pub hidden: bool,
    /// Do not read `.gitignore`, `.ignore` and git's exclude file.
    pub no_ignore: bool,
    /// A folder without a stream file is said so, not refused (`compact --mirror` copies it
    /// all the same).
    pub empty_ok: bool,
    /// Also take the `failure.txt` of an exchange `proxy --record` recorded without a
    /// response (`check` reports it; no other command has anything to do with it).
    pub recorded_failures: bool,
}

/// One input to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub spec: InputSpec,
    /// Where the input sits under what named it: a file's own name when it was named itself,
    /// its path below the directory when a walk found it (`stdin.jsonl` for stdin).
    pub relative: PathBuf,
    /// Named on the command line (or stdin), as opposed to found by a walk.
    pub explicit: bool,
    /// Why a walk could not list or open this entry (an unreadable folder, say).
    pub unreadable: Option<String>,
    /// Why this entry a walk found is no capture, known before it is read (a browser capture
    /// of other traffic): it is listed and counted as skipped, not read.
    pub skipped: Option<String>,
    /// For a stream of a browser capture, the call it answered: the request's method and URL
    /// and which call to that URL it is in the capture (`POST https://app.example/agent, call
    /// 2`), the same whatever other traffic the capture holds around it.
    pub call: Option<String>,
}

impl Walk {
    /// The walk the flags ask for.
    pub fn from_args(args: &crate::cli::WalkArgs) -> Walk {
        Walk {
            exclude: args.exclude.clone(),
            hidden: args.hidden,
            no_ignore: args.no_ignore,
            empty_ok: false,
            recorded_failures: false,
        }
    }
}

impl Input {
    fn named(spec: InputSpec, relative: PathBuf) -> Input {
        Input {
            spec,
            relative,
            explicit: true,
            unreadable: None,
            skipped: None,
            call: None,
        }
    }
}

/// Expands the command line's paths: `-` is stdin, a directory is walked for capture files
/// (`*.jsonl`, `*.ndjson`, `*.sse`, `*.json`, and their `.gz`/`.zst` forms), in sorted order
/// so output is stable; anything else is a file, kept even when it cannot be read (opening it
/// reports that, for that input alone). A path named twice is read once. A directory holding
/// no capture files is an input that could not be read (unless `walk.empty_ok`).
pub fn expand(paths: &[PathBuf], walk: &Walk) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |inputs: &mut Vec<Input>, input: Input| {
        let key = match &input.spec {
            InputSpec::Stdin => None,
            InputSpec::File(path) => Some((clean(path), None)),
            InputSpec::HarEntry { path, entry } => Some((clean(path), Some(*entry))),
        };
        if key.is_none() || seen.insert(key) {
            inputs.push(input);
        }
    };
    for path in paths {
        if path.as_os_str() == "-" {
            push(
                &mut inputs,
                Input::named(InputSpec::Stdin, PathBuf::from("stdin.jsonl")),
            );
            continue;
        }
        if path.is_dir() {
            let found = walk_dir(path, walk)?;
            if found.is_empty() {
                let why = format!(
                    "{} holds no stream files (*.jsonl, *.ndjson, *.sse, *.json, *.pb, *.har, \
                     or their .gz/.zst forms) outside hidden folders and what ignore files and \
                     --exclude leave out",
                    path.display()
                );
                if !walk.empty_ok {
                    // An input that could not be read, reported as such in every format
                    // beside the others (it stopped the run before any report was written).
                    push(
                        &mut inputs,
                        Input {
                            unreadable: Some(why),
                            ..Input::named(InputSpec::File(path.clone()), PathBuf::new())
                        },
                    );
                    continue;
                }
                say!("{why}: nothing to compact there");
            }
            for input in found {
                push(&mut inputs, input);
            }
        } else {
            let relative = path
                .file_name()
                .map(PathBuf::from)
                .unwrap_or_else(|| path.clone());
            push(&mut inputs, Input::named(InputSpec::named(path), relative));
        }
    }
    Ok(inputs)
}

/// The inputs with each file once: a file reached through a link too (a link beside its
/// target in a walked folder, or named by both) is read once, under its own name where that
/// is one of those given (`a/link.jsonl` → `a/run.jsonl` is read as `a/run.jsonl`), else
/// under the first. For the commands that read, not those that write beside each input
/// (`compact` mirrors a link as a file of its own).
pub fn each_file_once(inputs: Vec<Input>) -> Vec<Input> {
    let is_link =
        |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    // For each file, the input it is read as: the first that names it without a link, or
    // the first.
    let mut chosen: std::collections::HashMap<(u64, u64), (usize, bool)> =
        std::collections::HashMap::new();
    let ids: Vec<Option<(u64, u64)>> = inputs
        .iter()
        .map(|input| match &input.spec {
            InputSpec::File(path) => super::file_id(path),
            _ => None,
        })
        .collect();
    for (i, (input, id)) in inputs.iter().zip(&ids).enumerate() {
        let (Some(id), InputSpec::File(path)) = (id, &input.spec) else {
            continue;
        };
        let linked = is_link(path);
        chosen
            .entry(*id)
            .and_modify(|(at, at_link)| {
                if *at_link && !linked {
                    (*at, *at_link) = (i, false);
                }
            })
            .or_insert((i, linked));
    }
    inputs
        .into_iter()
        .zip(ids)
        .enumerate()
        .filter(|(i, (_, id))| id.is_none_or(|id| chosen.get(&id).is_some_and(|(at, _)| at == i)))
        .map(|(_, (input, _))| input)
        .collect()
}

/// The inputs with the findings `run --record` wrote beside a recording passed over when the
/// recording is an input too (`check run.jsonl*` names both): they are read with it, and
/// read again on their own they were counted twice.
pub fn findings_with_their_streams(mut inputs: Vec<Input>) -> Vec<Input> {
    use agui_lens_core::check::recorded::{Recorded, recorded};
    let streams: HashSet<(u64, u64)> = inputs
        .iter()
        .filter_map(|input| super::file_id(input.spec.path()?))
        .collect();
    for input in &mut inputs {
        // (By name first: a stream's own look at what is beside it says what it finds stale,
        // which its check says again.)
        let Some(path) = input.spec.path().filter(|p| {
            p.to_str()
                .is_some_and(|p| p.ends_with(agui_lens_core::check::recorded::FINDINGS_SUFFIX))
        }) else {
            continue;
        };
        if let Some(Recorded::RunFindings { stream }) = recorded(path)
            && super::file_id(&stream).is_some_and(|id| streams.contains(&id))
        {
            input.skipped = Some(format!(
                "it is read with its stream, {}, which is checked too",
                stream.display()
            ));
        }
    }
    inputs
}

/// Opens browser captures (files that hold one, whatever their names) into one input per
/// AG-UI stream they hold, or the one `entry` names; says on stderr
/// how many entries were something else. A capture with no AG-UI stream stays one input that
/// fails, saying so.
pub fn open_captures(inputs: Vec<Input>, entry: Option<usize>) -> Vec<Input> {
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let path = match &input.spec {
            InputSpec::File(path) if input.unreadable.is_none() => path.clone(),
            // A stream named by its entry (`session.har#2`) answered a call as well.
            InputSpec::HarEntry { path, entry } if input.unreadable.is_none() => {
                let call = read::har_streams(path)
                    .ok()
                    .and_then(|capture| capture.calls().remove(entry));
                out.push(Input { call, ..input });
                continue;
            }
            _ => {
                out.push(input);
                continue;
            }
        };
        // Whatever its name: a walk meets captures saved as `.json` too, and reading one as a
        // single stream would name its findings after no file.
        if !read::is_har_file(&path) {
            out.push(input);
            continue;
        }
        let capture = match read::har_streams(&path) {
            Ok(capture) => capture,
            Err(err) => {
                out.push(Input {
                    unreadable: Some(format!("{err:#}")),
                    ..input
                });
                continue;
            }
        };
        let streams: Vec<usize> = capture
            .streams
            .iter()
            .map(|s| s.entry)
            .filter(|e| entry.is_none_or(|wanted| wanted == *e))
            .collect();
        // Calls to an agent that brought no stream: each fails as an input of its own.
        let failed: Vec<&FailedCall> = capture
            .failed
            .iter()
            .filter(|f| entry.is_none_or(|wanted| wanted == f.entry))
            .collect();
        let others = capture.others + capture.streams.len() - streams.len() + capture.failed.len()
            - failed.len();
        if streams.is_empty() && failed.is_empty() && !input.explicit && entry.is_none() {
            // Found by a walk, a capture of other traffic is no stream, as a sidecar is not.
            out.push(Input {
                skipped: Some(format!(
                    "a browser capture (HAR) with no AG-UI stream among its {} entries",
                    capture.others
                )),
                ..input
            });
            continue;
        }
        if streams.is_empty() && failed.is_empty() {
            let entries = capture.others + capture.streams.len() + capture.failed.len();
            let why = match entry {
                Some(wanted) if wanted >= entries => format!(
                    "{}: this browser capture (HAR) has no entry {wanted}: {}",
                    path.display(),
                    match entries {
                        0 => "it has no entries".to_owned(),
                        1 => "its one entry is entry 0".to_owned(),
                        n => format!("its {n} entries are numbered 0 to {}", n - 1),
                    }
                ),
                Some(wanted) => format!(
                    "{}: entry {wanted} of this browser capture (HAR) is no AG-UI stream",
                    path.display()
                ),
                None => capture.holds_no_stream(&path.display().to_string()),
            };
            out.push(Input {
                unreadable: Some(why),
                ..input
            });
            continue;
        }
        if others > 0 {
            say!(
                "{}: a browser capture (HAR): {} read{}, {} skipped (no AG-UI stream{})",
                path.display(),
                plural(streams.len() as u64, "AG-UI stream"),
                if failed.is_empty() {
                    String::new()
                } else {
                    match failed.len() {
                        1 => ", 1 call to an agent that brought none".to_owned(),
                        n => format!(", {n} calls to an agent that brought none"),
                    }
                },
                if others == 1 {
                    "1 other entry".to_owned()
                } else {
                    format!("{others} other entries")
                },
                if entry.is_some() {
                    ", or not the --entry asked for"
                } else {
                    ""
                }
            );
        }
        // In the order of the capture's entries.
        let mut entries: Vec<(usize, Option<String>)> = streams
            .into_iter()
            .map(|index| (index, None))
            .chain(failed.iter().map(|f| {
                let why = format!("{}: {}", f.name(&path.to_string_lossy()), f.why);
                (f.entry, Some(why))
            }))
            .collect();
        entries.sort_by_key(|(index, _)| *index);
        let mut calls = capture.calls();
        for (index, unreadable) in entries {
            out.push(Input {
                spec: InputSpec::HarEntry {
                    path: path.clone(),
                    entry: index,
                },
                relative: input.relative.join(index.to_string()),
                explicit: input.explicit,
                unreadable,
                skipped: None,
                call: calls.remove(&index),
            });
        }
    }
    out
}

/// Whether any of the paths names a directory (so an output is a tree, not a file).
pub fn names_a_directory(paths: &[PathBuf]) -> bool {
    paths.iter().any(|p| p.as_os_str() != "-" && p.is_dir())
}

/// A path without `.` segments or doubled separators, for telling repeats apart.
fn clean(path: &Path) -> PathBuf {
    path.components().collect()
}

/// A walk of `dir` as the flags ask for it, in path order.
fn walker(dir: &Path, walk: &Walk) -> Result<ignore::Walk> {
    let mut overrides = ignore::overrides::OverrideBuilder::new(dir);
    for glob in &walk.exclude {
        overrides.add(&format!("!{glob}")).map_err(|e| {
            // The glob as the user wrote it, not as the override negates it.
            let said = e
                .to_string()
                .replace(&format!("'!{glob}'"), &format!("'{glob}'"));
            anyhow::anyhow!("--exclude {glob}: {said}")
        })?;
    }
    let overrides = overrides
        .build()
        .map_err(|e| anyhow::anyhow!("--exclude: {e}"))?;
    let respect = !walk.no_ignore;
    Ok(ignore::WalkBuilder::new(dir)
        .hidden(!walk.hidden)
        .ignore(respect)
        .git_ignore(respect)
        .git_exclude(respect)
        .git_global(false)
        .parents(respect)
        // A captures folder need not be a git repository for its .gitignore to count.
        .require_git(false)
        // Linked folders are not entered (a link can lead out of the tree, or around in a
        // loop); linked files are read like the others.
        .follow_links(false)
        .overrides(overrides)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build())
}

/// Why a walk's entry is a link to a folder the walk does not enter otherwise (one outside
/// `root`, the folder walked): its streams are read by no one unless it is named.
fn linked_folder_outside(entry: &ignore::DirEntry, root: Option<&Path>) -> Option<String> {
    if !entry.path_is_symlink() || entry.depth() == 0 {
        return None;
    }
    let target = std::fs::canonicalize(entry.path()).ok()?;
    if !target.is_dir() || root.is_some_and(|root| target.starts_with(root)) {
        return None;
    }
    Some(format!(
        "{} is a link to a folder ({}), which a walk does not enter: name it to read the \
         streams it holds, or leave it out with --exclude",
        entry.path().display(),
        target.display()
    ))
}

/// Why a walk's entry, a link named like a capture, leads to no file a walk can read: its
/// target is missing or cannot be reached (a loop, a volume not mounted). Its stream is read by
/// no one, so it is not passed over in silence.
fn capture_link_to_nothing(entry: &ignore::DirEntry) -> Option<String> {
    if !entry.path_is_symlink() || !is_stream_file(entry.path()) {
        return None;
    }
    let err = std::fs::metadata(entry.path()).err()?;
    let target = std::fs::read_link(entry.path())
        .map(|t| t.display().to_string())
        .unwrap_or_else(|_| "?".into());
    Some(format!(
        "{} is a link that leads nowhere ({target}: {err}): put back what it names, or leave it \
         out with --exclude",
        entry.path().display()
    ))
}

/// Whether `input` is a link the walk found and did not read: to a folder outside the folder
/// walked, or to nothing.
pub fn is_link_left_unread(input: &Input) -> bool {
    !input.explicit
        && input.unreadable.is_some()
        && input
            .spec
            .path()
            .is_some_and(|p| p.is_symlink() && (p.is_dir() || !p.exists()))
}

/// Whether a walk's entry is a file, or a link to one.
fn is_file(entry: &ignore::DirEntry) -> bool {
    match entry.file_type() {
        Some(t) if t.is_symlink() => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()),
        Some(t) => t.is_file(),
        None => false,
    }
}

/// One entry of a folder, as [`every_entry`] finds it; each with its path below the folder.
pub enum Entry {
    /// A file, or a link to one (read as the file).
    File(PathBuf, PathBuf),
    /// A link that leads to no file (to a folder, which walks do not enter, or nowhere), with
    /// its target as written.
    Link(PathBuf, PathBuf, PathBuf),
    /// A folder (an empty one is part of the tree too).
    Folder(PathBuf, PathBuf),
    /// An entry that could not be read, or that is neither a file, a folder nor a link (a
    /// FIFO, a socket): why.
    Other(PathBuf, String),
}

/// Every entry under `dir`, whatever its name, hidden, ignored or excluded from the walk of
/// [`expand`]; linked folders are not entered.
pub fn every_entry(dir: &Path) -> Vec<Entry> {
    let walk = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .follow_links(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    let mut found = Vec::new();
    for entry in walk {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let path = error_path(&err).unwrap_or_else(|| dir.to_path_buf());
                found.push(Entry::Other(path, err.to_string()));
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let path = entry.path().to_path_buf();
        let relative = relative_to(dir, &path);
        found.push(match entry.file_type() {
            _ if is_file(&entry) => Entry::File(path, relative),
            Some(t) if t.is_dir() => Entry::Folder(path, relative),
            Some(t) if t.is_symlink() => match std::fs::read_link(&path) {
                Ok(target) => Entry::Link(path, relative, target),
                Err(err) => Entry::Other(path, err.to_string()),
            },
            _ => Entry::Other(path, "neither a file, a folder nor a link".into()),
        });
    }
    found
}

fn walk_dir(dir: &Path, walk: &Walk) -> Result<Vec<Input>> {
    let walker = walker(dir, walk)?;
    let mut found = Vec::new();
    let mut named_otherwise = Vec::new();
    let root = std::fs::canonicalize(dir).ok();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                // An entry the walk could not read still shows, as an input that fails.
                let path = error_path(&err).unwrap_or_else(|| dir.to_path_buf());
                found.push(Input {
                    relative: relative_to(dir, &path),
                    spec: InputSpec::File(path),
                    explicit: false,
                    unreadable: Some(format!("{err}")),
                    skipped: None,
                    call: None,
                });
                continue;
            }
        };
        let path = entry.path();
        let unread = linked_folder_outside(&entry, root.as_deref())
            .or_else(|| capture_link_to_nothing(&entry));
        if let Some(why) = unread {
            // Not entered, and not passed over in silence: what it holds was not read.
            found.push(Input {
                spec: InputSpec::File(path.to_path_buf()),
                relative: relative_to(dir, path),
                explicit: false,
                unreadable: Some(why),
                skipped: None,
                call: None,
            });
            continue;
        }
        let failure = || {
            walk.recorded_failures
                && matches!(
                    agui_lens_core::check::recorded::recorded(path),
                    Some(agui_lens_core::check::recorded::Recorded::Failure)
                )
        };
        let unfinished = || agui_lens_core::check::recorded::is_unfinished_body(path);
        if is_file(&entry) && (is_stream_file(path) || failure() || unfinished()) {
            let request = agui_lens_core::check::recorded::is_recorded_request(path);
            found.push(Input {
                spec: InputSpec::File(path.to_path_buf()),
                relative: relative_to(dir, path),
                explicit: false,
                unreadable: agui_lens_core::check::recorded::unanswered(path),
                skipped: request.then(|| agui_lens_core::check::recorded::request_skipped(path)),
                call: None,
            });
        } else if is_file(&entry) && holds_events(path) {
            named_otherwise.push(path.to_path_buf());
        }
    }
    say_left_out(dir, walk, &found);
    say_named_otherwise(dir, &named_otherwise, &found);
    Ok(found)
}

/// Whether a file a walk does not read by its name holds AG-UI events in text, as its first
/// 8 KiB tell (compressed or binary files are not looked into).
fn holds_events(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(8192);
    std::fs::File::open(path)
        .and_then(|file| file.take(8192).read_to_end(&mut head))
        .is_ok()
        && agui_lens_core::read::names_an_event(&head)
}

/// Says (on stderr) which files a walk of `dir` passed over by their names though they hold
/// AG-UI events (`capture.log`, a body saved as `.raw`): a folder whose failing stream was
/// saved under another name was "ok". A `.raw` beside a stream of the same stem (`run.raw` by
/// `run.jsonl`, as `run --record-raw` is used) or the body of a recorded exchange whose events
/// were read is that stream's companion, and not named.
fn say_named_otherwise(dir: &Path, files: &[PathBuf], found: &[Input]) {
    let stem = |path: &Path| path.with_extension("");
    let walked: HashSet<PathBuf> = found
        .iter()
        .filter_map(|i| i.spec.path())
        .map(|p| stem(&agui_lens_core::read::strip_compression_ext(p).0))
        .collect();
    let companion = |path: &Path| {
        (path.extension().is_some_and(|e| e == "raw") && walked.contains(&stem(path)))
            || (path.file_name().is_some_and(|n| n == "response.raw")
                && path
                    .parent()
                    .is_some_and(|f| f.join("request.json").is_file()))
    };
    let files: Vec<&PathBuf> = files.iter().filter(|p| !companion(p)).collect();
    if files.is_empty() {
        return;
    }
    const SHOWN: usize = 5;
    let mut names: Vec<String> = files
        .iter()
        .take(SHOWN)
        .map(|p| {
            agui_lens_core::report::human::visible(&relative_to(dir, p).display().to_string())
                .into_owned()
        })
        .collect();
    if files.len() > SHOWN {
        names.push(format!("{} more", files.len() - SHOWN));
    }
    let (hold, it) = if files.len() == 1 {
        ("holds", "it")
    } else {
        ("hold", "them")
    };
    say!(
        "note: {}: {} {hold} AG-UI events under a name a walk does not read ({}): name {it} to \
         read {it} (a walk reads *.jsonl, *.ndjson, *.sse, *.json, *.pb and *.har)",
        agui_lens_core::report::human::visible(&dir.display().to_string()),
        plural(files.len() as u64, "file"),
        names.join(", ")
    );
}

/// Says (on stderr) how many stream files under `dir` the walk left out: hidden, named by an
/// ignore file (one above `dir` too), or by `--exclude`. Reading less than a folder holds is
/// the user's choice, but not one made in silence.
fn say_left_out(dir: &Path, walk: &Walk, found: &[Input]) {
    if walk.hidden && walk.no_ignore && walk.exclude.is_empty() {
        return;
    }
    let walked: HashSet<&Path> = found.iter().filter_map(|i| i.spec.path()).collect();
    let left_out = every_entry(dir)
        .iter()
        .filter(|e| matches!(e, Entry::File(path, _) if is_stream_file(path) && !walked.contains(path.as_path())))
        .count();
    if left_out > 0 {
        let files = agui_lens_core::text::plural(left_out as u64, "stream file");
        let were = if left_out == 1 { "was" } else { "were" };
        say!(
            "note: {}: {files} {were} left out (hidden, named by an ignore file, or by \
             --exclude); --hidden and --no-ignore read them",
            dir.display()
        );
    }
}

fn relative_to(dir: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(dir)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"{}\n").unwrap();
    }

    fn relatives(inputs: &[Input]) -> Vec<String> {
        inputs
            .iter()
            .map(|i| i.relative.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn walks_keep_relative_paths_and_leave_out_hidden_ignored_and_excluded_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in [
            "a/x.jsonl",
            "b/x.jsonl",
            "2024/01/t1.sse.gz",
            "notes.txt",
            ".hidden.jsonl",
            ".cache/y.jsonl",
            "ignored/z.jsonl",
            "old.bak.jsonl",
        ] {
            touch(&root.join(name));
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        let walk = Walk {
            exclude: vec!["*.bak.jsonl".into()],
            ..Walk::default()
        };
        let inputs = expand(&[root.to_path_buf()], &walk).unwrap();
        assert_eq!(
            relatives(&inputs),
            ["2024/01/t1.sse.gz", "a/x.jsonl", "b/x.jsonl"]
        );
        assert!(inputs.iter().all(|i| !i.explicit));

        let everything = Walk {
            hidden: true,
            no_ignore: true,
            ..Walk::default()
        };
        let inputs = expand(&[root.to_path_buf()], &everything).unwrap();
        assert_eq!(inputs.len(), 7, "{:?}", relatives(&inputs));
    }

    #[test]
    fn a_path_named_twice_is_read_once_and_named_files_keep_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("d/run.jsonl");
        touch(&file);
        let dotted = dir.path().join("d/./run.jsonl");
        let inputs = expand(
            &[file.clone(), dotted, dir.path().join("d")],
            &Walk::default(),
        )
        .unwrap();
        assert_eq!(inputs.len(), 1);
        assert!(inputs[0].explicit);
        assert_eq!(inputs[0].relative, PathBuf::from("run.jsonl"));
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        // A folder with nothing to read is an input that could not be read, reported with
        // the rest.
        let inputs = expand(&[empty], &Walk::default()).unwrap();
        assert_eq!(inputs.len(), 1);
        assert!(
            inputs[0]
                .unreadable
                .as_deref()
                .is_some_and(|why| why.contains("holds no stream files"))
        );
    }

    #[test]
    fn linked_files_are_read_and_linked_folders_are_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        touch(&root.join("a.jsonl"));
        touch(&dir.path().join("outside/b.jsonl"));
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("link.jsonl")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("loop")).unwrap();
        let inputs = expand(std::slice::from_ref(&root), &Walk::default()).unwrap();
        // The link out of the tree is not entered, and stands as an input that was not read;
        // the loop back into it is nothing more to read.
        assert_eq!(relatives(&inputs), ["a.jsonl", "link.jsonl", "out"]);
        // Read once, under its own name, wherever the link sorts.
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("0-first.jsonl")).unwrap();
        let once = each_file_once(expand(std::slice::from_ref(&root), &Walk::default()).unwrap());
        assert_eq!(relatives(&once), ["a.jsonl", "out"]);
        assert!(inputs[..2].iter().all(|i| i.unreadable.is_none()));
        let why = inputs[2].unreadable.as_deref().unwrap_or_default();
        assert!(why.contains("a link to a folder"), "{why}");
        assert!(is_link_left_unread(&inputs[2]));
    }
}
