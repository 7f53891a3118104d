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

/// The default profile writes, byte for byte, the streams it wrote before (hashes taken at
/// c7929a9, before there were profiles, and again when its runs' inputs stopped declaring the
/// tools the agent answers itself, which 1.0 forbids), so the benchmarks' numbers stay
/// comparable.
#[test]
fn the_default_profile_writes_the_same_bytes_as_before() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [
        (
            &["--size", "2MB", "--seed", "7"][..],
            "182da88f7e747211f72b557fb174c00321a3f5a6428fc7baf6d27f67a69382c5",
        ),
        (
            &["--size", "1MB", "--seed", "3", "--threads", "3"][..],
            "bea141c421625aa01e8f813b05c1635e202f003a87a954d97dd5633b92c67ddf",
        ),
        (
            &["--size", "1MB", "--format", "sse"][..],
            "09c63a3b09705eff85258cd993b8898e3d5cbae8d2644717e09b3a9a0cf4f5fd",
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
