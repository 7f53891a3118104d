//! Item 4 of the trust issue: `compact` over random trees of what users store (streams in
//! every format, compressed ones, error bodies, sidecars, empty and binary files under stream
//! names, hidden files, the same names in different folders, symbolic links), to another
//! directory and in place, keeps every stream's fold, leaves every other file as it was (bytes
//! and modification time), loses nothing and writes nothing anywhere else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

use crate::common::trees::{Tree, check_in_place, check_output, survey};
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
    Value::Array(threads.iter().map(|(_, folded)| folded.meaning()).collect())
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
    // Nothing beside the tree but the output directory.
    let beside: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into())
        .collect();
    if beside
        .iter()
        .any(|name| name != Path::new("tree") && name != Path::new("out"))
    {
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
