//! Item 4 of the trust issue: `compact` over random trees of what users store (streams in
//! every format, compressed ones, error bodies, sidecars, empty and binary files under stream
//! names, hidden files, the same names in different folders, symbolic links), to another
//! directory and in place, keeps every stream's fold, leaves every other file as it was (bytes
//! and modification time), loses nothing and writes nothing anywhere else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

use crate::common::trees::{Tree, check_in_place, check_mirror, check_output, survey};
use crate::common::{root, split};

/// The streams trees are made of.
fn pool() -> Vec<Vec<u8>> {
    [
        "agui-sdk-full.jsonl",
        "pydantic-ai-full.jsonl",
        "agui-sdk-interrupt.jsonl",
    ]
    .iter()
    .map(|name| std::fs::read(root().join("fixtures/valid").join(name)).unwrap())
    .collect()
}

/// What a stream folds to, every thread of it.
fn fold(path: &Path) -> Value {
    use agui_lens::commands::fold::fold_threads;
    use agui_lens_core::read::{InputSpec, ReadOptions};
    let threads = fold_threads(
        &InputSpec::File(path.to_path_buf()),
        &ReadOptions::default(),
        1 << 28,
        None,
        None,
    )
    .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    Value::Array(
        threads
            .threads
            .iter()
            .map(|(_, folded)| folded.meaning())
            .collect(),
    )
}

fn compact(args: &[&str]) -> i32 {
    let (code, _, stderr) = split(crate::common::agui_lens().args(args).output().unwrap());
    assert!(!stderr.contains("panicked"), "{stderr}");
    code
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Builds the tree of `bytes`, compacts it to a directory and then in place, and holds each
/// to its promises.
fn holds(bytes: &[u8], pool: &[Vec<u8>]) -> Result<(), String> {
    let tree = Tree::from_bytes(bytes, pool.len());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    tree.write(&root, pool);
    let before = survey(&root);
    let out = dir.path().join("out");
    let code = compact(&["compact", s(&root), "-o", s(&out)]);
    check_output(&tree, &root, &out, &before, code, &fold).map_err(|e| format!("-o: {e}"))?;
    // A mirror holds everything, and a second run into it leaves what it copied alone.
    let mirror = dir.path().join("mirror");
    let code = compact(&["compact", s(&root), "-o", s(&mirror), "--mirror"]);
    check_mirror(&tree, &root, &mirror, &before, code, &fold, None)
        .map_err(|e| format!("--mirror: {e}"))?;
    let first = survey(&mirror);
    let code = compact(&["compact", s(&root), "-o", s(&mirror), "--mirror"]);
    check_mirror(&tree, &root, &mirror, &before, code, &fold, Some(&first))
        .map_err(|e| format!("--mirror, again: {e}"))?;
    // Nothing beside the tree but the output directory.
    let beside: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into())
        .collect();
    if beside.iter().any(|name| {
        !["tree", "out", "mirror"]
            .iter()
            .any(|n| name == Path::new(n))
    }) {
        return Err(format!("written beside the tree: {beside:?}"));
    }
    let folds: BTreeMap<PathBuf, Value> = tree
        .visible()
        .filter(|rel| tree.is_stream(rel))
        .map(|rel| {
            let file = std::fs::canonicalize(root.join(rel)).unwrap();
            let rel = file
                .strip_prefix(std::fs::canonicalize(&root).unwrap())
                .unwrap()
                .to_path_buf();
            let folded = fold(&root.join(&rel));
            (rel, folded)
        })
        .collect();
    let code = compact(&["compact", s(&root), "--in-place"]);
    check_in_place(&tree, &root, &before, &folds, code, &fold)
        .map_err(|e| format!("--in-place: {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn compacting_any_tree_keeps_every_stream_and_touches_nothing_else(
        bytes in proptest::collection::vec(any::<u8>(), 0..72)
    ) {
        let pool = pool();
        if let Err(why) = holds(&bytes, &pool) {
            let tree = Tree::from_bytes(&bytes, pool.len());
            prop_assert!(false, "{why}\n{tree:#?}");
        }
    }
}

/// A tree with one of everything, so the property test's promises are known to be checked
/// on each kind of entry at least once.
#[test]
fn a_tree_with_one_of_everything() {
    let pool = pool();
    // Choices, per entry: dir, name, kind, format, compression, source.
    let bytes: Vec<u8> = vec![
        8, // nine entries
        1, 0, 0, 0, 0, 0, // a/x.jsonl: a stream
        2, 0, 1, 1, 1, 1, // b/x.sse.gz: a stream, same name
        3, 2, 2, 2, 2, 2, // a/deep/run.json.zst: a stream
        0, 0, 4, 1, 0, 0, // x.sse: an error body
        0, 1, 5, 2, 0, 0, // y.json: a sidecar
        0, 2, 6, 0, 0, 0, // run.jsonl: empty
        1, 1, 7, 0, 0, 0, // a/y.jsonl: binary
        0, 3, 0, 0, 0, 0, // .hidden.jsonl: a hidden stream
        2, 2, 8, 0, 0, 1, // b/run.jsonl: a link
    ];
    let tree = Tree::from_bytes(&bytes, pool.len());
    assert_eq!(tree.entries.len(), 9, "{tree:#?}");
    holds(&bytes, &pool).unwrap();
}

/// `--mirror` with what the random trees do not hold: files of other names, a refused stream,
/// a browser capture, files the walk leaves out, and the output directory inside the folder,
/// run twice (the second run
/// found the first's output in the walk and compacted it into a folder below it).
#[test]
fn a_mirror_holds_every_file_and_never_itself() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let stream = std::fs::read(crate::common::root().join("fixtures/valid/agui-sdk-full.jsonl"));
    std::fs::write(root.join("run.jsonl"), stream.unwrap()).unwrap();
    std::fs::write(root.join("notes.txt"), "what these runs were\n").unwrap();
    std::fs::write(root.join("sub/screen.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    std::fs::write(root.join("sub/other.har"), r#"{"log": {"entries": []}}"#).unwrap();
    let refused = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\nnot json\n";
    std::fs::write(root.join("sub/half.jsonl"), refused).unwrap();
    // Left out of the walk, so not compacted: copied all the same.
    std::fs::write(root.join(".keep"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "scratch.jsonl\n").unwrap();
    std::fs::write(
        root.join("sub/scratch.jsonl"),
        "{\"type\":\"RUN_STARTED\"}\n",
    )
    .unwrap();
    std::fs::set_permissions(
        root.join("notes.txt"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    let out = root.join("compacted");
    let others = [
        "notes.txt",
        "sub/screen.png",
        "sub/other.har",
        "sub/half.jsonl",
        ".keep",
        ".gitignore",
        "sub/scratch.jsonl",
    ];
    for run in 0..2 {
        let (code, _, stderr) =
            crate::common::run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
        // The refused stream makes the run fail (exit 1), as without --mirror.
        assert_eq!(code, 1, "run {run}: {stderr}");
        assert!(stderr.contains("refused"), "{stderr}");
        let mut held: Vec<String> = survey(&out)
            .keys()
            .map(|p| p.display().to_string())
            .collect();
        held.sort();
        assert_eq!(
            held,
            [
                ".gitignore",
                ".keep",
                "notes.txt",
                "run.jsonl",
                "sub/half.jsonl",
                "sub/other.har",
                "sub/scratch.jsonl",
                "sub/screen.png"
            ],
            "run {run}: {stderr}"
        );
        for other in others {
            assert_eq!(
                std::fs::read(out.join(other)).unwrap(),
                std::fs::read(root.join(other)).unwrap(),
                "{other}"
            );
        }
        let mode = std::fs::metadata(out.join("notes.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
        assert_eq!(fold(&out.join("run.jsonl")), fold(&root.join("run.jsonl")));
        if run == 1 {
            assert!(stderr.contains("the output directory"), "{stderr}");
            assert!(stderr.contains("7 files there already"), "{stderr}");
        }
    }
    // Without a folder to copy, or without -o, --mirror is refused.
    for args in [
        vec!["compact", "--mirror", "-o"],
        vec!["compact", "--mirror"],
    ] {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        let last_is_o = args.last().is_some_and(|a| a == "-o");
        let file = root.join("run.jsonl");
        if last_is_o {
            args.insert(1, s(&file).to_owned());
            args.push(s(&dir.path().join("elsewhere")).to_owned());
        } else {
            args.push(s(&root).to_owned());
        }
        let (code, _, stderr) = split(crate::common::agui_lens().args(&args).output().unwrap());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!dir.path().join("elsewhere").exists());
    }
}

/// `--mirror` keeps what is no file too: a link to a folder (which walks do not enter) and a
/// link that leads nowhere are copied as links with the same target, an empty folder is made;
/// an entry it cannot copy (a FIFO) is named and fails the run, and nothing of it is called
/// mirrored. Run twice, the links are there already.
#[test]
fn a_mirror_keeps_links_and_empty_folders_and_names_what_it_cannot_copy() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(root.join("empty")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let stream = std::fs::read(crate::common::root().join("fixtures/valid/agui-sdk-full.jsonl"));
    std::fs::write(root.join("run.jsonl"), stream.unwrap()).unwrap();
    std::fs::write(elsewhere.join("notes.txt"), "kept elsewhere\n").unwrap();
    std::os::unix::fs::symlink("../elsewhere", root.join("linked")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/agui-lens", root.join("dangling")).unwrap();
    let out = dir.path().join("out");
    for run in 0..2 {
        let (code, _, stderr) =
            crate::common::run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
        assert_eq!(code, 0, "run {run}: {stderr}");
        for link in ["linked", "dangling"] {
            assert_eq!(
                std::fs::read_link(out.join(link)).unwrap(),
                std::fs::read_link(root.join(link)).unwrap(),
                "run {run}: {link}: {stderr}"
            );
        }
        assert!(out.join("empty").is_dir(), "run {run}: {stderr}");
        let said = if run == 0 {
            "2 links copied as links"
        } else {
            "2 links there already"
        };
        assert!(stderr.contains(said), "run {run}: {stderr}");
    }
    // A FIFO is no file to copy: named, and the run fails.
    let fifo = root.join("pipe");
    crate::common::make_fifo(&fifo);
    let (code, _, stderr) = crate::common::run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("copying {}", fifo.display())),
        "{stderr}"
    );
    assert!(stderr.contains("1 entry could not be copied"), "{stderr}");
    assert!(!out.join("pipe").exists());
}

/// A folder with no stream in it is still mirrored whole (nothing to compact is said so);
/// without `--mirror` it stays an error, as for `check`.
#[test]
fn a_folder_without_streams_is_mirrored_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    std::fs::create_dir_all(root.join("later")).unwrap();
    std::fs::write(root.join("notes.txt"), "no runs today\n").unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = crate::common::run(&["compact", s(&root), "-o", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("holds no stream files"), "{stderr}");
    assert!(!out.exists());
    let (code, _, stderr) = crate::common::run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("nothing to compact"), "{stderr}");
    assert_eq!(
        std::fs::read(out.join("notes.txt")).unwrap(),
        b"no runs today\n"
    );
    assert!(out.join("later").is_dir(), "{stderr}");
}

/// `-o` naming the folder compacted (or a folder holding it) left out every input as "found
/// in the output directory" and exited 0 with nothing compacted. Both are refused, with
/// nothing written: into a folder that holds the one compacted, `store/s/s/run.jsonl` would
/// go to `store/s/run.jsonl`, an input of the same run.
#[test]
fn an_output_folder_that_is_or_holds_the_input_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let inner = store.join("s");
    std::fs::create_dir_all(inner.join("s")).unwrap();
    let stream =
        std::fs::read(crate::common::root().join("fixtures/recordings/copilotkit-full.jsonl"))
            .unwrap();
    let other =
        std::fs::read(crate::common::root().join("fixtures/recordings/pydantic-ai-full.jsonl"))
            .unwrap();
    std::fs::write(inner.join("run.jsonl"), &stream).unwrap();
    std::fs::write(inner.join("s/run.jsonl"), &other).unwrap();
    std::fs::write(store.join("b.jsonl"), &stream).unwrap();
    for (input, out) in [(&store, &store), (&inner, &inner), (&inner, &store)] {
        for mirror in [&[][..], &["--mirror"]] {
            let mut args = vec!["compact", s(input), "-o", s(out)];
            args.extend_from_slice(mirror);
            let (code, _, stderr) = crate::common::run(&args);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(stderr.contains("--in-place"), "{stderr}");
            assert_eq!(std::fs::read(inner.join("run.jsonl")).unwrap(), stream);
            assert_eq!(std::fs::read(inner.join("s/run.jsonl")).unwrap(), other);
            assert!(!store.join("run.jsonl").exists(), "{stderr}");
        }
    }
}

/// A name of 244 to 255 bytes is a name like any other: the temp file beside it had the name
/// and 12 bytes more, too long for the file system, so such a stream could never be compacted.
#[test]
fn a_long_name_is_compacted_and_mirrored() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let stream =
        std::fs::read(crate::common::root().join("fixtures/recordings/copilotkit-full.jsonl"))
            .unwrap();
    // 249 + ".jsonl" = 255 bytes, the longest name; and one of two-byte characters.
    let long = store.join(format!("{}.jsonl", "n".repeat(249)));
    let wide = store.join(format!("{}.jsonl", "é".repeat(124)));
    let note = store.join(format!("{}.txt", "t".repeat(251)));
    for path in [&long, &wide] {
        std::fs::write(path, &stream).unwrap();
    }
    std::fs::write(&note, b"kept\n").unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = crate::common::run(&["compact", s(&store), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(out.join(note.file_name().unwrap())).unwrap(),
        b"kept\n"
    );
    for path in [&long, &wide] {
        let written = out.join(path.file_name().unwrap());
        assert!(
            std::fs::metadata(&written).unwrap().len() < stream.len() as u64,
            "{stderr}"
        );
    }
    let (code, _, stderr) = crate::common::run(&["compact", s(&store), "--in-place"]);
    assert_eq!(code, 0, "{stderr}");
    for path in [&long, &wide] {
        assert!(
            std::fs::metadata(path).unwrap().len() < stream.len() as u64,
            "{stderr}"
        );
    }
    let names: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "no temp file is left: {names:?}");
}

/// The summary of a folder counts what could not be compacted, last: it ended with
/// "compacted N files … smaller" after a truncated gzip had failed.
#[test]
fn the_summary_counts_what_could_not_be_compacted() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let stream =
        std::fs::read(crate::common::root().join("fixtures/recordings/copilotkit-full.jsonl"))
            .unwrap();
    std::fs::write(store.join("a.jsonl"), &stream).unwrap();
    std::fs::write(store.join("b.jsonl"), &stream).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&stream).unwrap();
    let gz = gz.finish().unwrap();
    std::fs::write(store.join("c.jsonl.gz"), &gz[..gz.len() / 2]).unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = crate::common::run(&["compact", s(&store), "-o", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("1 file could not be compacted"),
        "{stderr}"
    );
}

/// A compacted file new in the output takes its source's permissions (within what a new file
/// gets), as a copied one does: a read-only history stays read-only in the mirror.
#[test]
fn a_compacted_copy_keeps_its_sources_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    std::fs::create_dir_all(&root).unwrap();
    let stream = std::fs::read(crate::common::root().join("fixtures/valid/agui-sdk-full.jsonl"));
    std::fs::write(root.join("run.jsonl"), stream.unwrap()).unwrap();
    std::fs::write(root.join("notes.txt"), "not a stream\n").unwrap();
    for name in ["run.jsonl", "notes.txt"] {
        std::fs::set_permissions(root.join(name), std::fs::Permissions::from_mode(0o440)).unwrap();
    }
    let out = dir.path().join("out");
    let (code, _, stderr) = crate::common::run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("33 → 30 events"), "{stderr}");
    let single = dir.path().join("single.jsonl");
    let (code, _, stderr) =
        crate::common::run(&["compact", s(&root.join("run.jsonl")), "-o", s(&single)]);
    assert_eq!(code, 0, "{stderr}");
    for copy in [out.join("run.jsonl"), out.join("notes.txt"), single] {
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o440, "{}: {mode:o}", copy.display());
    }
}

/// A place in the output that cannot be written (a folder where a compacted file goes) is
/// said with the file and the place: "error: Is a directory (os error 21)" named neither,
/// under a summary that says each failure is named above.
#[test]
fn a_place_that_cannot_be_written_is_named_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::create_dir_all(dir.join("o/a.jsonl")).unwrap();
    let stream = std::fs::read(root().join("fixtures/valid/agui-sdk-full.jsonl")).unwrap();
    std::fs::write(dir.join("t/a.jsonl"), &stream).unwrap();
    std::fs::write(dir.join("t/c.jsonl"), &stream).unwrap();
    let (code, _, stderr) = split(
        crate::common::agui_lens()
            .current_dir(dir)
            .args(["compact", "t", "-o", "o/"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("error: writing the compacted t/a.jsonl to o/a.jsonl: "),
        "{stderr}"
    );
    assert!(dir.join("o/c.jsonl").is_file());
    assert_eq!(std::fs::read(dir.join("t/a.jsonl")).unwrap(), stream);
}

/// A write killed before its end (SIGKILL, the machine gone) leaves its temp file beside the
/// file it was to replace, `.NAME.XXXXXX.tmp`, half written. `--mirror` copied it into the
/// copy as if it were the user's: it is said and left out; a file of the user's named like
/// it in another way is copied as any other.
#[test]
fn a_mirror_leaves_out_a_temp_file_a_killed_write_left() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    std::fs::create_dir_all(&root).unwrap();
    let stream = std::fs::read(crate::common::root().join("fixtures/valid/agui-sdk-full.jsonl"));
    let stream = stream.unwrap();
    std::fs::write(root.join("run.jsonl"), &stream).unwrap();
    std::fs::write(
        root.join(".run.jsonl.aB3xY9.tmp"),
        &stream[..stream.len() / 2],
    )
    .unwrap();
    let users = [".run.jsonl.tmp", ".notes.tmp", "run.jsonl.aB3xY9.tmp"];
    for name in users {
        std::fs::write(root.join(name), "the user's\n").unwrap();
    }
    let out = dir.path().join("out");
    for run in 0..2 {
        let (code, _, stderr) =
            crate::common::run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
        assert_eq!(code, 0, "run {run}: {stderr}");
        assert!(!out.join(".run.jsonl.aB3xY9.tmp").exists(), "{stderr}");
        assert!(
            stderr.contains(".run.jsonl.aB3xY9.tmp") && stderr.contains("not copied"),
            "{stderr}"
        );
        for name in users {
            assert_eq!(std::fs::read(out.join(name)).unwrap(), b"the user's\n");
        }
        assert_eq!(fold(&out.join("run.jsonl")), fold(&root.join("run.jsonl")));
    }
}
