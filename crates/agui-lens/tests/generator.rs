//! The bench's stream generator (examples/generate.rs): the default profile's bytes stay what
//! they were, and the mixed profile is clean and has the mix bench/README.md promises.

use std::path::Path;
use std::process::Command;

use clap::Parser;

#[allow(dead_code)]
#[path = "../examples/generate.rs"]
mod generate;

/// Writes a stream with `args` (as on the command line, without `-o`) to `path`.
fn write_stream(args: &[&str], path: &Path) -> generate::Summary {
    let mut argv = vec!["generate"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["-o", path.to_str().unwrap()]);
    generate::generate(&generate::Args::try_parse_from(argv).unwrap()).unwrap()
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success(), "sha256sum {}", path.display());
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// The default profile writes, byte for byte, the streams it wrote before there were
/// profiles (hashes taken at c7929a9), so the benchmarks' numbers stay comparable.
#[test]
fn the_default_profile_writes_the_same_bytes_as_before() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [
        (
            &["--size", "2MB", "--seed", "7"][..],
            "41f10b94f57dd44d9fa4eb49057f1b448cff2b3f1790fd9beeadb81a4152b6b9",
        ),
        (
            &["--size", "1MB", "--seed", "3", "--threads", "3"][..],
            "daf2ddf7f498a8d4e435878fd4abf71c33b82ebbcfd290789d9d98b9f8fc6c63",
        ),
        (
            &["--size", "1MB", "--format", "sse"][..],
            "321e415eb353628f508703cba885a7d98eee832a2070a2f84b335f02cd770b5f",
        ),
    ] {
        let path = dir.path().join("stream");
        write_stream(args, &path);
        assert_eq!(sha256(&path), expected, "generate {args:?}");
    }
}
