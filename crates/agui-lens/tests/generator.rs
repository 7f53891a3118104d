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

/// `--profile mixed`: clean under `check` (no error, no warning), the same bytes for the same
/// seed, and the mix of issue 28 within a few points.
#[test]
fn the_mixed_profile_is_clean_and_has_the_promised_mix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.jsonl");
    let summary = write_stream(&["--profile", "mixed", "--size", "4MB"], &path);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(summary.bytes, text.len() as u64);
    assert_eq!(summary.events, text.lines().count() as u64);

    let again = dir.path().join("again.jsonl");
    write_stream(&["--profile", "mixed", "--size", "4MB"], &again);
    assert_eq!(sha256(&path), sha256(&again), "not deterministic");

    let out = Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .arg("check")
        .arg("--deny-warnings")
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(" 0 errors, 0 warnings"), "{stdout}");

    let stats = summary.stats();
    for (ty, target, tolerance) in [
        ("TEXT_MESSAGE_CONTENT", 43.0, 2.5),
        ("REASONING_MESSAGE_CONTENT", 23.0, 2.5),
        ("TOOL_CALL_ARGS", 10.0, 2.0),
        ("STATE_DELTA", 8.0, 2.0),
        ("MESSAGES_SNAPSHOT", 6.0, 2.0),
        ("RUN_STARTED", 2.0, 1.0),
        ("TOOL_CALL_RESULT", 1.0, 0.6),
    ] {
        let share = summary.percent(ty);
        assert!(
            (share - target).abs() <= tolerance,
            "{ty}: {share:.2}% of the bytes, not {target}% ± {tolerance}\n{stats}"
        );
    }
    // The rest: each kind of event the profile promises is there.
    for ty in [
        "RUN_FINISHED",
        "STEP_STARTED",
        "REASONING_START",
        "ACTIVITY_SNAPSHOT",
        "ACTIVITY_DELTA",
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
        "RAW",
        "CUSTOM",
    ] {
        assert!(summary.by_type.contains_key(ty), "no {ty}\n{stats}");
    }
    assert!(
        (6_200.0..=7_600.0).contains(&summary.events_per_mb()),
        "{stats}"
    );
    assert!((7.0..=11.0).contains(&summary.runs_per_mb()), "{stats}");
    // STATE_DELTA patches carry `test` operations and add to arrays.
    assert!(text.contains(r#""op":"test""#), "no test op");
    assert!(
        text.contains(r#"/-","value":{"#),
        "no object added to an array"
    );
}
