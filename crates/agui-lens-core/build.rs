//! Embeds every file under `schemas/` in the binary, so the schemas travel with it, and
//! compiles the protobuf definitions of the binary transport (`proto/`) into the descriptor
//! set frames are decoded by.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use prost::Message as _;

fn main() {
    embed_schemas();
    compile_protos();
}

fn compile_protos() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../proto");
    println!("cargo:rerun-if-changed={}", dir.display());
    let files = ["events.proto", "patch.proto", "types.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={}", dir.join(file).display());
    }
    let set = protox::compile(files, [&dir])
        .unwrap_or_else(|err| panic!("compiling the .proto files in {}: {err}", dir.display()));
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("ag_ui.binpb");
    std::fs::write(dest, set.encode_to_vec()).unwrap();
}

fn embed_schemas() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .join("../../schemas")
        .canonicalize()
        .expect("the schemas folder at the root of the repository");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut out = String::from("/// Every schema file: (path relative to `schemas/`, contents).\n");
    out.push_str("pub static EMBEDDED: &[(&str, &str)] = &[\n");
    for (rel, abs) in &files {
        println!("cargo:rerun-if-changed={}", abs.display());
        writeln!(
            out,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded_schemas.rs");
    std::fs::write(dest, out).unwrap();
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
}
