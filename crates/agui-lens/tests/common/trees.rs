//! Random trees of stored files, as users keep them, for compaction to work through: streams
//! in every format, plain and compressed; error bodies, sidecars, empty and binary files
//! under stream names; the same names in different folders; hidden files; symbolic links.
//! The property test (tests/compaction_trees.rs) and the fuzz target `trees` build them from
//! bytes and hold a compaction of them to the same promises.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

const DIRS: &[&str] = &["", "a", "b", "a/deep"];
const NAMES: &[&str] = &["x", "y", "run", ".hidden"];
const FORMATS: &[&str] = &["jsonl", "sse", "json"];
const COMPRESSIONS: &[&str] = &["", ".gz", ".zst"];

/// What one file holds.
#[derive(Clone, Debug)]
pub enum Content {
    /// A stream: the `source`th of the pool, written in a format.
    Stream {
        source: usize,
        format: usize,
    },
    /// An HTTP error body saved under a stream's name.
    ErrorBody,
    /// A JSON sidecar (timings) beside the captures.
    Sidecar,
    Empty,
    Binary,
}

/// One entry of the tree.
#[derive(Clone, Debug)]
pub enum Entry {
    File {
        content: Content,
        compression: usize,
    },
    /// A symbolic link to another entry's file.
    Link { to: PathBuf },
}

/// A tree: entries by path relative to its root.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    pub entries: BTreeMap<PathBuf, Entry>,
}

/// Reads choices from bytes, 0 once they run out.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn next(&mut self, n: usize) -> usize {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b as usize % n
            }
            None => 0,
        }
    }
}

impl Tree {
    /// A tree chosen by `bytes`, its streams taken from `pool` (JSONL streams).
    pub fn from_bytes(bytes: &[u8], pool: usize) -> Tree {
        let mut choices = Choices(bytes);
        let mut tree = Tree::default();
        let count = 1 + choices.next(9);
        for _ in 0..count {
            let dir = DIRS[choices.next(DIRS.len())];
            let name = NAMES[choices.next(NAMES.len())];
            let kind = choices.next(9);
            let format = choices.next(FORMATS.len());
            let compression = choices.next(COMPRESSIONS.len());
            let source = choices.next(pool.max(1));
            // The name says a stream whatever the file holds: a file need not be what its
            // name says.
            let ext = FORMATS[format];
            let rel = Path::new(dir).join(format!("{name}.{ext}{}", COMPRESSIONS[compression]));
            if tree.entries.contains_key(&rel) {
                continue;
            }
            let files: Vec<PathBuf> = tree
                .entries
                .iter()
                .filter(|(_, e)| matches!(e, Entry::File { .. }))
                .map(|(p, _)| p.clone())
                .collect();
            let entry = match kind {
                0..=3 => Entry::File {
                    content: Content::Stream { source, format },
                    compression,
                },
                4 => Entry::File {
                    content: Content::ErrorBody,
                    compression,
                },
                5 => Entry::File {
                    content: Content::Sidecar,
                    compression,
                },
                6 => Entry::File {
                    content: Content::Empty,
                    compression: 0,
                },
                7 => Entry::File {
                    content: Content::Binary,
                    compression: 0,
                },
                _ if !files.is_empty() => Entry::Link {
                    to: files[source % files.len()].clone(),
                },
                _ => Entry::File {
                    content: Content::Empty,
                    compression: 0,
                },
            };
            tree.entries.insert(rel, entry);
        }
        tree
    }

    /// Writes the tree under `root`.
    pub fn write(&self, root: &Path, pool: &[Vec<u8>]) {
        for (rel, entry) in &self.entries {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match entry {
                Entry::File {
                    content,
                    compression,
                } => {
                    let bytes = render(content, pool);
                    std::fs::write(&path, compress(&bytes, *compression)).unwrap();
                }
                Entry::Link { to } => {
                    let target = relative_link(rel, to);
                    std::os::unix::fs::symlink(target, &path).unwrap();
                }
            }
        }
    }

    /// The file an entry's bytes live in (a link's target), relative to the root.
    fn file_of<'a>(&'a self, rel: &'a Path) -> &'a Path {
        match &self.entries[rel] {
            Entry::Link { to } => to,
            Entry::File { .. } => rel,
        }
    }

    /// Whether an entry's bytes are a stream.
    pub fn is_stream(&self, rel: &Path) -> bool {
        matches!(
            &self.entries[self.file_of(rel)],
            Entry::File {
                content: Content::Stream { .. },
                ..
            }
        )
    }

    /// Whether a walk of the root meets the entry: no hidden component.
    pub fn is_visible(rel: &Path) -> bool {
        rel.components()
            .all(|c| !c.as_os_str().to_string_lossy().starts_with('.'))
    }

    /// The entries a walk meets.
    pub fn visible(&self) -> impl Iterator<Item = &PathBuf> {
        self.entries.keys().filter(|rel| Tree::is_visible(rel))
    }
}

fn render(content: &Content, pool: &[Vec<u8>]) -> Vec<u8> {
    match content {
        Content::Stream { source, format } => {
            let text = String::from_utf8_lossy(&pool[*source % pool.len()]).into_owned();
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            match FORMATS[*format] {
                "jsonl" => (lines.join("\n") + "\n").into_bytes(),
                "sse" => lines
                    .iter()
                    .map(|l| format!("data: {l}\n\n"))
                    .collect::<String>()
                    .into_bytes(),
                _ => format!("[\n{}\n]\n", lines.join(",\n")).into_bytes(),
            }
        }
        Content::ErrorBody => {
            br#"[{"type":"missing","loc":["threadId"],"msg":"Field required","input":{}}]"#.to_vec()
        }
        Content::Sidecar => b"{\n  \"elapsed_ms\": 532,\n  \"model\": \"scripted\"\n}\n".to_vec(),
        Content::Empty => Vec::new(),
        Content::Binary => (0..2048u32).map(|i| (i * 131 % 256) as u8).collect(),
    }
}

fn compress(bytes: &[u8], compression: usize) -> Vec<u8> {
    match COMPRESSIONS[compression] {
        ".gz" => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(bytes).unwrap();
            gz.finish().unwrap()
        }
        ".zst" => zstd::encode_all(bytes, 1).unwrap(),
        _ => bytes.to_vec(),
    }
}

/// The target of a link at `from` to `to` (both relative to the root), relative to the
/// link's folder.
fn relative_link(from: &Path, to: &Path) -> PathBuf {
    let depth = from.parent().map_or(0, |p| p.components().count());
    let mut target = PathBuf::new();
    for _ in 0..depth {
        target.push("..");
    }
    target.join(to)
}

/// What a path under a root is: its bytes and modification time, or a link's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    File(Vec<u8>, SystemTime),
    Link(PathBuf),
}

/// Everything under `root`, by relative path, without following links.
pub fn survey(root: &Path) -> BTreeMap<PathBuf, Seen> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if meta.file_type().is_symlink() {
                out.insert(rel, Seen::Link(std::fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                dirs.push(path);
            } else {
                out.insert(
                    rel,
                    Seen::File(std::fs::read(&path).unwrap(), meta.modified().unwrap()),
                );
            }
        }
    }
    out
}

/// Whether `compact` exited as it should on the tree: 2 when a walk meets nothing, else 0.
fn exited_as_expected(tree: &Tree, code: i32) -> Result<(), String> {
    let expected_code = if tree.visible().next().is_none() {
        2
    } else {
        0
    };
    if code != expected_code {
        return Err(format!("exit {code}, expected {expected_code}"));
    }
    Ok(())
}

/// Holds `compact ROOT -o OUT` to its promises: every stream a walk meets folds in OUT, at
/// its own path, to what it folded to; no non-stream and nothing else is written there; the
/// tree itself is exactly as it was. `fold` gives a stream's messages and state.
pub fn check_output(
    tree: &Tree,
    root: &Path,
    out: &Path,
    before: &BTreeMap<PathBuf, Seen>,
    code: i32,
    fold: &dyn Fn(&Path) -> Value,
) -> Result<(), String> {
    exited_as_expected(tree, code)?;
    let visible: Vec<&PathBuf> = tree.visible().collect();
    if survey(root) != *before {
        return Err("the input tree changed".into());
    }
    let written = survey(out);
    let expected: Vec<&PathBuf> = visible
        .iter()
        .copied()
        .filter(|rel| tree.is_stream(rel))
        .collect();
    let listed: Vec<&PathBuf> = written.keys().collect();
    if listed != expected {
        return Err(format!("OUT holds {listed:?}, expected {expected:?}"));
    }
    for rel in expected {
        if !matches!(written[rel], Seen::File(..)) {
            return Err(format!("{} is not a file in OUT", rel.display()));
        }
        let (a, b) = (fold(&root.join(rel)), fold(&out.join(rel)));
        if a != b {
            return Err(format!("{} folds differently: {a} then {b}", rel.display()));
        }
    }
    Ok(())
}

/// Holds `compact ROOT -o OUT --mirror` to its promises: OUT holds every file of the root,
/// hidden ones too, at its path (a link as the file it leads to): each stream a walk meets
/// folds as it did, each other file (a hidden stream among them) has its bytes; the input tree
/// is as it was. `first`: what OUT held after a first run, when this is a second: every file
/// that is not a stream must still be the one the first run wrote (bytes and time).
pub fn check_mirror(
    tree: &Tree,
    root: &Path,
    out: &Path,
    before: &BTreeMap<PathBuf, Seen>,
    code: i32,
    fold: &dyn Fn(&Path) -> Value,
    first: Option<&BTreeMap<PathBuf, Seen>>,
) -> Result<(), String> {
    // A tree whose walk meets no stream is mirrored all the same.
    if code != 0 {
        return Err(format!("exit {code}, expected 0"));
    }
    if survey(root) != *before {
        return Err("the input tree changed".into());
    }
    let written = survey(out);
    let listed: Vec<&PathBuf> = written.keys().collect();
    let all: Vec<&PathBuf> = tree.entries.keys().collect();
    if listed != all {
        return Err(format!("OUT holds {listed:?}, expected {all:?}"));
    }
    for rel in all {
        let Seen::File(bytes, time) = &written[rel] else {
            return Err(format!("{} is not a file in OUT", rel.display()));
        };
        if tree.is_stream(rel) && Tree::is_visible(rel) {
            let (a, b) = (fold(&root.join(rel)), fold(&out.join(rel)));
            if a != b {
                return Err(format!("{} folds differently: {a} then {b}", rel.display()));
            }
        } else {
            if *bytes != std::fs::read(root.join(rel)).unwrap() {
                return Err(format!("{} was not copied as it was", rel.display()));
            }
            if let Some(Seen::File(_, then)) = first.and_then(|first| first.get(rel)) {
                if then != time {
                    return Err(format!("{} was written again", rel.display()));
                }
            }
        }
    }
    Ok(())
}

/// Holds `compact ROOT --in-place` to its promises: every stream a walk meets (through a
/// link, the file it leads to) folds to what it folded to; every other file keeps its bytes
/// and modification time; links stay links; nothing is added or missing.
pub fn check_in_place(
    tree: &Tree,
    root: &Path,
    before: &BTreeMap<PathBuf, Seen>,
    folds: &BTreeMap<PathBuf, Value>,
    code: i32,
    fold: &dyn Fn(&Path) -> Value,
) -> Result<(), String> {
    exited_as_expected(tree, code)?;
    let visible: Vec<&PathBuf> = tree.visible().collect();
    let after = survey(root);
    if after.keys().collect::<Vec<_>>() != before.keys().collect::<Vec<_>>() {
        return Err(format!(
            "the tree's paths changed: {:?} then {:?}",
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>()
        ));
    }
    // The files compaction may replace: streams a walk meets, through links too.
    let replaced: Vec<&Path> = visible
        .iter()
        .filter(|rel| tree.is_stream(rel))
        .map(|rel| tree.file_of(rel))
        .collect();
    for (rel, seen) in before {
        match seen {
            Seen::Link(_) => {
                if after[rel] != *seen {
                    return Err(format!("the link {} changed", rel.display()));
                }
            }
            Seen::File(..) if replaced.contains(&rel.as_path()) => {
                let now = fold(&root.join(rel));
                if folds.get(rel) != Some(&now) {
                    return Err(format!("{} folds differently after", rel.display()));
                }
            }
            Seen::File(..) => {
                if after[rel] != *seen {
                    return Err(format!("{} was touched", rel.display()));
                }
            }
        }
    }
    Ok(())
}
