//! Trees of stored files: `compact DIR -o OUT` and `compact DIR --in-place`, run in process on
//! a tree the input's bytes choose (streams in every format and compression, error bodies,
//! sidecars, empty and binary files under stream names, hidden files, same names in different
//! folders, symbolic links), keep every stream's fold, leave every other file as it was, lose
//! nothing and write nothing elsewhere. The promises are the property test's
//! (crates/agui-lens/tests/compaction_trees.rs), in crates/agui-lens/tests/common/trees.rs.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use agui_lens::cli::Cli;
use agui_lens::commands::{self, Outcome};
use clap::{CommandFactory, FromArgMatches};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[path = "../../crates/agui-lens/tests/common/trees.rs"]
mod trees;

fn pool() -> &'static [Vec<u8>] {
    static POOL: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/valid");
        ["agui-sdk-full.jsonl", "pydantic-ai-full.jsonl", "agui-sdk-interrupt.jsonl"]
            .iter()
            .map(|name| std::fs::read(dir.join(name)).unwrap())
            .collect()
    })
}

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

/// Runs the command line in process, as the binary would; returns its exit status.
fn run(args: &[&str]) -> i32 {
    let matches = Cli::command()
        .try_get_matches_from(std::iter::once("agui-lens").chain(args.iter().copied()))
        .expect("a valid command line");
    let cli = Cli::from_arg_matches(&matches).unwrap();
    match commands::run(&cli, &matches) {
        Ok(Outcome::Clean) => 0,
        Ok(Outcome::Findings) => 1,
        Ok(Outcome::Failed) | Err(_) => 2,
    }
}

fuzz_target!(|input: &[u8]| {
    let pool = pool();
    let tree = trees::Tree::from_bytes(input, pool.len());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    tree.write(&root, pool);
    let before = trees::survey(&root);
    let out = dir.path().join("out");
    let code = run(&["compact", root.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    if let Err(why) = trees::check_output(&tree, &root, &out, &before, code, &fold) {
        panic!("-o: {why}\n{tree:#?}");
    }
    let folds = tree
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
    let code = run(&["compact", root.to_str().unwrap(), "--in-place"]);
    if let Err(why) = trees::check_in_place(&tree, &root, &before, &folds, code, &fold) {
        panic!("--in-place: {why}\n{tree:#?}");
    }
});
