//! Trust, tested from the outside: folders of mixed files, files that are not what their names
//! say, missing ones, the same names in different folders. Nothing a user stores is lost, and
//! nothing that is not a clean stream is called one, in any output format.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::common::{EARLIER, gzip, make_fifo, root, run};

fn recording(name: &str) -> PathBuf {
    root().join("fixtures/recordings").join(name)
}

/// Copies a recording to `to`, making its folders.
fn place(name: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(recording(name), to).unwrap();
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What compaction promises to keep: the messages and the state a stream folds to.
fn fold(path: &Path) -> Value {
    let (code, stdout, stderr) = run(&["fold", "--compact", s(path)]);
    assert_eq!(code, 0, "fold {}: {stderr}", path.display());
    let mut folded: Value = serde_json::from_str(&stdout).unwrap();
    folded
        .as_object_mut()
        .unwrap()
        .retain(|k, _| k == "messages" || k == "state");
    folded
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(at) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                dirs.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// A file's bytes and modification time, to show it was left alone.
fn untouched(path: &Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

/// A folder of what users keep beside their captures: streams, an HTTP error body saved as
/// `.sse`, a timing sidecar, an empty file, binary bytes named `.jsonl`.
struct Mixed {
    dir: tempfile::TempDir,
}

impl Mixed {
    const STREAMS: &[&str] = &["ok.sse", "deep/ok.jsonl"];
    const NON_STREAMS: &[&str] = &[
        "error-422.sse",
        "timing.json",
        "empty.jsonl",
        "binary.jsonl",
        "copilot-error.jsonl",
    ];

    fn new() -> Mixed {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join("in").join(name);
        place("pydantic-ai-full.sse", &at("ok.sse"));
        place("agui-sdk-full.jsonl", &at("deep/ok.jsonl"));
        place("pydantic-ai-invalid.sse", &at("error-422.sse"));
        place("copilotkit-invalid.sse", &at("copilot-error.jsonl"));
        write(
            &at("timing.json"),
            b"{\n  \"elapsed_ms\": 532,\n  \"server\": \"pydantic-ai\"\n}\n",
        );
        write(&at("empty.jsonl"), b"");
        let binary: Vec<u8> = (0..4096u32).map(|i| (i * 37 % 256) as u8).collect();
        write(&at("binary.jsonl"), &binary);
        Mixed { dir }
    }

    fn input(&self) -> PathBuf {
        self.dir.path().join("in")
    }
}

/// Item 1: the tree under `-o` mirrors the inputs' relative paths, so two files of one name
/// in different folders both survive, and a deep file keeps its folders.
#[test]
fn compact_mirrors_the_input_tree_under_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let col = dir.path().join("col");
    place("pydantic-ai-full.jsonl", &col.join("a/x.jsonl"));
    place("copilotkit-full.jsonl", &col.join("b/x.jsonl"));
    place("agui-sdk-full.sse", &col.join("2024/01/t1.sse"));
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&["compact", s(&col), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        files_under(&out),
        ["2024/01/t1.sse", "a/x.jsonl", "b/x.jsonl"]
            .map(PathBuf::from)
            .to_vec()
    );
    for name in ["a/x.jsonl", "b/x.jsonl", "2024/01/t1.sse"] {
        assert_eq!(fold(&col.join(name)), fold(&out.join(name)), "{name}");
    }
    // Both same-named inputs are named in the summary by their own paths.
    assert!(
        stderr.contains("a/x.jsonl") && stderr.contains("b/x.jsonl"),
        "{stderr}"
    );
}

/// Item 1: two inputs that would be written to one output path are a usage error, found
/// before anything is written.
#[test]
fn compact_refuses_inputs_that_would_write_one_output() {
    let dir = tempfile::tempdir().unwrap();
    place("pydantic-ai-full.jsonl", &dir.path().join("d1/x.jsonl"));
    place("copilotkit-full.jsonl", &dir.path().join("d2/x.jsonl"));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let d1 = dir.path().join("d1");
    let d2 = dir.path().join("d2");
    for args in [
        vec![s(&d1), s(&d2)],
        vec![s(&d1.join("x.jsonl")), s(&d2.join("x.jsonl"))],
    ] {
        let mut full = vec!["compact"];
        full.extend(args);
        full.extend(["-o", s(&out)]);
        let (code, _, stderr) = run(&full);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("d1/x.jsonl") && stderr.contains("d2/x.jsonl"),
            "{stderr}"
        );
        assert!(files_under(&out).is_empty(), "{:?}", files_under(&out));
    }
}

/// A file of the user's already in the output folder, where a compacted input would go, is
/// left as it was and said to be, with several inputs as with one (it was replaced, exit 0,
/// when a folder or several files were compacted), and under `--mirror` too (whose copy of
/// the refused stream then went over it); a stream there (a previous run's) is replaced.
#[test]
fn compact_into_a_folder_replaces_no_file_of_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let col = dir.path().join("col");
    place("agui-sdk-full.jsonl", &col.join("a/x.jsonl"));
    place("copilotkit-full.jsonl", &col.join("a/y.jsonl"));
    let notes = b"my notes, not a stream\n";
    for (args, out) in [
        (vec![s(&col)], dir.path().join("out1")),
        (vec![s(&col), "--mirror"], dir.path().join("out3")),
        (
            vec![s(&col.join("a/x.jsonl")), s(&col.join("a/y.jsonl"))],
            dir.path().join("out2/a"),
        ),
    ] {
        let kept = if out.ends_with("a") {
            out.join("x.jsonl")
        } else {
            out.join("a/x.jsonl")
        };
        write(&kept, notes);
        let mut full = vec!["compact"];
        full.extend(args.iter().copied());
        full.extend(["-o", s(&out)]);
        let (code, stdout, stderr) = run(&full);
        assert_ne!(code, 0, "{stdout}{stderr}");
        assert_eq!(std::fs::read(&kept).unwrap(), notes, "{stderr}");
        assert!(
            stderr.contains("x.jsonl") && stderr.contains("holds no AG-UI events"),
            "{stderr}"
        );
        // The other input is compacted all the same.
        let other = kept.with_file_name("y.jsonl");
        assert_eq!(fold(&col.join("a/y.jsonl")), fold(&other));
        // Once the note is moved away, the folder fills, and a second run replaces its own.
        std::fs::remove_file(&kept).unwrap();
        for _ in 0..2 {
            let (code, _, stderr) = run(&full);
            assert_eq!(code, 0, "{stderr}");
            assert_eq!(fold(&col.join("a/x.jsonl")), fold(&kept));
        }
    }
}

/// A mirror copies what is not compacted, but a copy of a stream (a recording cut when it
/// was recorded, which is not rewritten) only over a stream, and a file a recording keeps
/// beside it (its request, its cut) only over one a run wrote: a note of the user's at
/// either place was replaced ("2 files copied unchanged"), after the refusal had said it was
/// left as it was.
#[test]
fn a_mirror_copies_no_stream_or_recording_file_over_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let col = dir.path().join("col");
    place("agui-sdk-full.jsonl", &col.join("cut.jsonl"));
    write(
        &col.join("cut.jsonl.cut.txt"),
        b"stopped by SIGINT after 12 events\n",
    );
    place("pydantic-ai-full.jsonl", &col.join("r.jsonl"));
    let size = std::fs::metadata(col.join("r.jsonl")).unwrap().len();
    let request = serde_json::json!({"recording_size": size, "request": {"threadId": "t",
        "runId": "r", "messages": [], "tools": [], "context": [], "state": {},
        "forwardedProps": {}}});
    write(
        &col.join("r.jsonl.request.txt"),
        request.to_string().as_bytes(),
    );
    let out = dir.path().join("out");
    let notes = b"my notes, not a stream\n";
    let kept = [out.join("cut.jsonl"), out.join("r.jsonl.request.txt")];
    for file in &kept {
        write(file, notes);
    }
    let (code, stdout, stderr) = run(&["compact", s(&col), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    for file in &kept {
        assert_eq!(
            std::fs::read(file).unwrap(),
            notes,
            "{}: {stderr}",
            file.display()
        );
    }
    assert!(stderr.contains("of the user's left as"), "{stderr}");
    // The notes gone, the mirror is whole, twice.
    for file in &kept {
        std::fs::remove_file(file).unwrap();
    }
    for _ in 0..2 {
        let (code, _, stderr) = run(&["compact", s(&col), "-o", s(&out), "--mirror"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            std::fs::read(out.join("cut.jsonl")).unwrap(),
            std::fs::read(col.join("cut.jsonl")).unwrap()
        );
        assert!(out.join("r.jsonl.request.txt").is_file());
    }
    // A note where only the skipped recording's copy goes: left, and the run fails (it
    // said 0, the compaction itself having nothing to refuse).
    write(&kept[0], notes);
    let (code, _, stderr) = run(&["compact", s(&col), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), notes, "{stderr}");
    std::fs::remove_file(&kept[0]).unwrap();
    // A file of the user's where a sidecar (no stream), or an empty file, of the tree goes:
    // left as it was, the run fails. A copy with the same bytes is left alone, and a
    // place that is empty is filled.
    write(&col.join("meta.json"), b"{\"model\": \"x\"}\n");
    write(&col.join("empty.txt"), b"");
    let sidecars = [out.join("meta.json"), out.join("empty.txt")];
    for file in &sidecars {
        write(file, notes);
    }
    let (code, _, stderr) = run(&["compact", s(&col), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 1, "{stderr}");
    for file in &sidecars {
        assert_eq!(
            std::fs::read(file).unwrap(),
            notes,
            "{}: {stderr}",
            file.display()
        );
    }
    for file in &sidecars {
        std::fs::remove_file(file).unwrap();
    }
    for _ in 0..2 {
        let (code, _, stderr) = run(&["compact", s(&col), "-o", s(&out), "--mirror"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(std::fs::read(&sidecars[1]).unwrap(), b"");
    }
}

/// Item 3: several inputs need `-o` to be a directory that exists (or a name ending in `/`,
/// which is made); a plain new name is a usage error that writes nothing.
#[test]
fn compact_of_several_inputs_needs_an_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sse");
    let b = dir.path().join("b.sse");
    place("pydantic-ai-full.sse", &a);
    place("agui-sdk-full.sse", &b);
    let one = dir.path().join("one.jsonl");
    let (code, _, stderr) = run(&["compact", s(&a), s(&b), "-o", s(&one)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("directory"), "{stderr}");
    assert!(!one.exists(), "nothing may be made at {}", one.display());

    let made = format!("{}/", dir.path().join("made").display());
    let (code, _, stderr) = run(&["compact", s(&a), s(&b), "-o", &made]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        files_under(&dir.path().join("made")),
        ["a.sse", "b.sse"].map(PathBuf::from).to_vec()
    );

    // A file already at the output path is not a directory either.
    std::fs::write(&one, b"keep me").unwrap();
    let (code, _, stderr) = run(&["compact", s(&a), s(&b), "-o", s(&one)]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(std::fs::read(&one).unwrap(), b"keep me");
}

/// Item 2: a file with no AG-UI events is never written or replaced, in place or to `-o`;
/// it is listed as skipped with the reason. Found by a walk it does not fail the run; named
/// on the command line it makes the exit status 2.
#[test]
fn compact_never_writes_a_file_that_holds_no_events() {
    let mixed = Mixed::new();
    let input = mixed.input();
    let before: Vec<_> = Mixed::NON_STREAMS
        .iter()
        .map(|name| untouched(&input.join(name)))
        .collect();
    let streams_before: Vec<Value> = Mixed::STREAMS
        .iter()
        .map(|name| fold(&input.join(name)))
        .collect();

    // To another directory: only the streams are written.
    let out = mixed.dir.path().join("out");
    let (code, _, stderr) = run(&["compact", s(&input), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        files_under(&out),
        {
            let mut streams: Vec<PathBuf> = Mixed::STREAMS.iter().map(PathBuf::from).collect();
            streams.sort();
            streams
        },
        "{stderr}"
    );
    for name in Mixed::NON_STREAMS {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains("skipped") && l.contains(name)),
            "{name} is not listed as skipped:\n{stderr}"
        );
    }

    // In place: the non-streams keep their bytes and their modification times.
    let (code, _, stderr) = run(&["compact", s(&input), "--in-place"]);
    assert_eq!(code, 0, "{stderr}");
    for (name, before) in Mixed::NON_STREAMS.iter().zip(&before) {
        assert_eq!(&untouched(&input.join(name)), before, "{name} was touched");
    }
    for (name, folded) in Mixed::STREAMS.iter().zip(&streams_before) {
        assert_eq!(&fold(&input.join(name)), folded, "{name}");
    }
    let mut expected: Vec<PathBuf> = Mixed::STREAMS
        .iter()
        .chain(Mixed::NON_STREAMS)
        .map(PathBuf::from)
        .collect();
    expected.sort();
    assert_eq!(files_under(&input), expected, "no temp file is left behind");

    // Named on the command line, each is skipped with exit status 2, in every mode.
    for name in Mixed::NON_STREAMS {
        let path = input.join(name);
        let target = mixed.dir.path().join("single.jsonl");
        for args in [
            vec!["compact", s(&path), "--in-place"],
            vec!["compact", s(&path), "-o", s(&target)],
            vec!["compact", s(&path)],
        ] {
            let (code, stdout, stderr) = run(&args);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(stdout.is_empty(), "{args:?} wrote {stdout:?}");
            assert!(stderr.contains("skipped"), "{args:?}: {stderr}");
            assert!(!target.exists(), "{args:?} made {}", target.display());
        }
    }
    for (name, before) in Mixed::NON_STREAMS.iter().zip(&before) {
        assert_eq!(&untouched(&input.join(name)), before, "{name} was touched");
    }
}

/// Item 5: no command calls an input with no AG-UI events clean or equal: each reports it as
/// an error naming the file and what it looks like, with exit status 2.
#[test]
fn no_command_calls_a_non_stream_clean_or_equal() {
    let mixed = Mixed::new();
    let input = mixed.input();
    let e1 = input.join("error-422.sse");
    let e2 = input.join("copilot-error.jsonl");
    let sidecar = input.join("timing.json");
    let html = mixed.dir.path().join("login.sse");
    write(
        &html,
        b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in</body></html>\n",
    );
    let good = recording("pydantic-ai-full.sse");
    let binary = input.join("binary.jsonl");
    let empty = input.join("empty.jsonl");
    let cases: Vec<(Vec<&str>, &Path, &str)> = vec![
        (vec!["diff", s(&e1), s(&e2)], &e1, "error body"),
        (vec!["diff", s(&good), s(&e2)], &e2, "error body"),
        (vec!["fold", s(&sidecar)], &sidecar, "JSON"),
        (vec!["inspect", s(&sidecar)], &sidecar, "JSON"),
        (vec!["inspect", "--stats", s(&e1)], &e1, "error body"),
        (vec!["cat", s(&sidecar)], &sidecar, "JSON"),
        (vec!["cat", s(&html)], &html, "HTML"),
        (vec!["fold", s(&binary)], &binary, "binary"),
        (vec!["fold", s(&empty)], &empty, "empty"),
    ];
    for (args, named, looks) in cases {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}\n{stdout}\n{stderr}");
        assert!(
            stderr.contains(s(named)) && stderr.contains("no AG-UI events"),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains(looks),
            "{args:?} should say {looks}: {stderr}"
        );
        assert!(!stdout.contains("mean the same"), "{args:?}: {stdout}");
    }

    // A snapshot of an error body cannot be accepted, and a login page cannot match it.
    let snap = mixed.dir.path().join("snaps/e.snap");
    let (code, _, stderr) = run(&["snapshot", s(&e1), "--expect", s(&snap)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!snap.exists() && !snap.with_extension("snap.new").exists());
    let (code, _, stderr) = run(&["snapshot", s(&good), "--expect", s(&snap), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["snapshot", s(&html), "--expect", s(&snap)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("HTML"), "{stderr}");
}

/// The summary and report lines that say an input could not be read, per format.
fn check_with_missing(format: &str) -> (i32, String, String) {
    let good = recording("pydantic-ai-full.sse");
    run(&[
        "check",
        "--format",
        format,
        "nosuch-capture.jsonl",
        s(&good),
    ])
}

/// Item 6: an input that cannot be read shows in every output format, not only on stderr.
#[test]
fn an_unreadable_input_shows_in_every_format() {
    let (code, stdout, _) = check_with_missing("human");
    assert_eq!(code, 2);
    let summary = stdout.lines().last().unwrap();
    assert!(
        summary.contains("1 file could not be read"),
        "summary: {summary}"
    );

    let (code, stdout, _) = check_with_missing("sarif");
    assert_eq!(code, 2);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{invocation}");
    assert_eq!(notes[0]["level"], "error");
    assert!(
        notes[0].to_string().contains("nosuch-capture.jsonl"),
        "{}",
        notes[0]
    );

    let (code, stdout, _) = check_with_missing("github");
    assert_eq!(code, 2);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::error") && l.contains("nosuch-capture.jsonl")),
        "{stdout}"
    );

    let (code, stdout, _) = check_with_missing("junit");
    assert_eq!(code, 2);
    let suites = stdout
        .lines()
        .find(|l| l.starts_with("<testsuites"))
        .unwrap();
    assert!(suites.contains("errors=\"1\""), "{suites}");
    assert!(suites.contains("failures=\"0\""), "{suites}");
    let suite = stdout
        .lines()
        .find(|l| l.contains("<testsuite ") && l.contains("nosuch-capture"))
        .unwrap();
    assert!(
        suite.contains("errors=\"1\"") && suite.contains("failures=\"0\""),
        "{suite}"
    );

    let (code, stdout, _) = check_with_missing("json");
    assert_eq!(code, 2);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["summary"]["unreadable"], 1, "{}", json["summary"]);

    let (code, stdout, _) = check_with_missing("jsonl");
    assert_eq!(code, 2);
    assert!(
        stdout.lines().any(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["path"] == "nosuch-capture.jsonl" && v["failure"].is_string()
        }),
        "{stdout}"
    );
}

/// A walk does not enter a link to a folder (a loop, or a way out of the tree). One that leads
/// out of the folder checked holds streams no one checked: the run names it and cannot pass,
/// in every format, until it is named itself or left out with --exclude. One that leads to a
/// folder the walk enters anyway costs nothing. `compact` leaves it as it is and says so.
#[test]
fn a_linked_folder_outside_the_walk_is_never_passed_over_in_silence() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    let other = dir.path().join("team-b");
    std::fs::create_dir_all(root.join("inside")).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    place("pydantic-ai-full.jsonl", &root.join("inside/a.jsonl"));
    write(
        &other.join("broken.jsonl"),
        b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\nnot json\n",
    );
    std::os::unix::fs::symlink("../team-b", root.join("team-b")).unwrap();
    std::os::unix::fs::symlink("inside", root.join("latest")).unwrap();
    for format in ["human", "json", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) = run(&["check", s(&root), "--format", format]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(stdout.contains("team-b"), "{format}: {stdout}");
        let latest = root.join("latest");
        assert!(!stdout.contains(s(&latest)), "{format}: {stdout}");
    }
    let (_, stdout, _) = run(&["check", s(&root)]);
    assert!(stdout.contains("a link to a folder"), "{stdout}");
    let (code, stdout, _) = run(&["check", s(&root), "--exclude", "team-b"]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = run(&["check", s(&root), s(&root.join("team-b"))]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stdout.contains("invalid JSON") || stdout.contains("framing/invalid-json"),
        "{stdout}"
    );
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&["compact", s(&root), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("team-b"), "{stderr}");
    assert_eq!(std::fs::read(other.join("broken.jsonl")).unwrap().len(), 59);
}

/// A link named like a capture that leads nowhere (its target moved, a volume not mounted, a
/// loop) names a stream no one can read: a walk that meets it reports it as an input it could
/// not read, in every format, until it is left out with --exclude. `compact` leaves it as it
/// is and says so; a mirror keeps it as a link.
#[test]
fn a_capture_link_that_leads_nowhere_is_never_passed_over_in_silence() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    std::fs::create_dir_all(&root).unwrap();
    place("pydantic-ai-full.jsonl", &root.join("a.jsonl"));
    std::os::unix::fs::symlink("../archive/old.jsonl", root.join("old.jsonl")).unwrap();
    std::os::unix::fs::symlink("loop.sse", root.join("loop.sse")).unwrap();
    // A link to nothing that is named like no capture is none of check's business.
    std::os::unix::fs::symlink("nowhere", root.join("notes.txt")).unwrap();
    for format in ["human", "json", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) = run(&["check", s(&root), "--format", format]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(stdout.contains("old.jsonl"), "{format}: {stdout}");
        assert!(stdout.contains("loop.sse"), "{format}: {stdout}");
        assert!(!stdout.contains("notes.txt"), "{format}: {stdout}");
    }
    let (_, stdout, _) = run(&["check", s(&root)]);
    assert!(stdout.contains("leads nowhere"), "{stdout}");
    let (code, stdout, _) = run(&[
        "check",
        s(&root),
        "--exclude",
        "old.jsonl",
        "--exclude",
        "loop.sse",
    ]);
    assert_eq!(code, 0, "{stdout}");
    let before = std::fs::read(root.join("a.jsonl")).unwrap();
    let (code, _, stderr) = run(&["compact", s(&root), "--in-place"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("old.jsonl"), "{stderr}");
    assert!(root.join("old.jsonl").is_symlink());
    assert!(std::fs::read(root.join("a.jsonl")).unwrap().len() <= before.len());
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&["compact", s(&root), "-o", s(&out), "--mirror"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_link(out.join("old.jsonl")).unwrap(),
        Path::new("../archive/old.jsonl")
    );
}

/// A history still being written (an agent appending to it) is never replaced by what was
/// read of it: events appended while `compact --in-place` worked would be lost with the old
/// file. The compaction is refused, the file kept whole with everything appended, and a run
/// once nothing writes it any more compacts it.
#[test]
fn a_file_written_while_compacted_in_place_loses_nothing() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let mut history = String::new();
    for run in 0..4000 {
        history.push_str(&format!(
            "{{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r{run}\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m{run}\",\"role\":\"assistant\"}}\n"
        ));
        for chunk in 0..20 {
            history.push_str(&format!(
                "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m{run}\",\"delta\":\"part {chunk} \"}}\n"
            ));
        }
        history.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m{run}\"}}\n\
             {{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r{run}\"}}\n"
        ));
    }
    write(&path, history.as_bytes());
    let child = Child::spawn(&["compact", "--in-place", s(&path)], None);
    until(|| child.has_open(&path));
    let appended = "{\"type\":\"CUSTOM\",\"name\":\"appended\",\"value\":1}\n";
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(appended.as_bytes()).unwrap();
    drop(file);
    let (code, stdout, stderr) = child.wait(std::time::Duration::from_secs(120));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("changed while it was compacted"),
        "{stderr}"
    );
    let now = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        now,
        history.clone() + appended,
        "the file is not what was written to it"
    );
    // Nothing writes it now: compacted, with what was appended.
    let (code, _, stderr) = run(&["compact", "--in-place", s(&path)]);
    assert_eq!(code, 0, "{stderr}");
    let compacted = std::fs::read_to_string(&path).unwrap();
    assert!(compacted.len() < now.len());
    assert!(
        compacted.ends_with(appended),
        "{}",
        &compacted[compacted.len() - 200..]
    );
}

/// A program (`sleep`) that holds `path` open for appending, once it does.
fn holding_open(path: &Path) -> std::process::Child {
    let writer = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec 3>>\"$0\"; exec sleep 60")
        .arg(path)
        .spawn()
        .unwrap();
    let fds = format!("/proc/{}/fd", writer.id());
    until(|| {
        std::fs::read_dir(&fds).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| std::fs::read_link(e.path()).is_ok_and(|t| t == path))
        })
    });
    writer
}

/// A history a running program holds open for writing (an agent appending to it) is not
/// replaced: what it writes after the rename would go to the old file, which no name leads to
/// any more, and be lost. Refused, and left as it is; compacted once the program is done.
#[test]
fn a_file_held_open_for_writing_is_not_compacted_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.jsonl");
    place("pydantic-ai-full.jsonl", &history);
    let before = std::fs::read(&history).unwrap();
    // A program that opened the history to append to it, and is not done.
    let mut writer = holding_open(&history);
    let (code, stdout, stderr) = run(&["compact", "--in-place", s(&history)]);
    let _ = writer.kill();
    let _ = writer.wait();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "process {} (sleep) has it open for writing",
            writer.id()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&history).unwrap(), before);
    // Read-only readers are no writers, and once the writer is gone the file is compacted.
    let _reader = std::fs::File::open(&history).unwrap();
    let (code, _, stderr) = run(&["compact", "--in-place", s(&history)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read(&history).unwrap().len() < before.len());
    // A file beside it that holds no stream is skipped as ever, written to or not.
    let sidecar = dir.path().join("history.meta.json");
    write(&sidecar, b"{\"recorded\": \"today\"}\n");
    let mut writer = holding_open(&sidecar);
    let (code, _, stderr) = run(&["compact", "--in-place", s(dir.path())]);
    let _ = writer.kill();
    let _ = writer.wait();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("skipped") && !stderr.contains("refused"),
        "{stderr}"
    );
}

/// A file replaced whole keeps its owner and group, as it keeps its permissions: a history
/// an agent's user writes, compacted by a job that runs as root, stays the agent's (it became
/// root's, and the agent could no longer read it, let alone append to it). Needs root to
/// give a file to another user.
#[test]
fn a_file_replaced_whole_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("a_file_replaced_whole_keeps_its_owner: not root, so no file can be given away");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.jsonl");
    let copy = dir.path().join("copy.jsonl");
    place("pydantic-ai-full.jsonl", &history);
    place("pydantic-ai-full.jsonl", &copy);
    let nobody = 65534;
    for path in [&history, &copy] {
        std::os::unix::fs::chown(path, Some(nobody), Some(nobody)).unwrap();
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o640))
            .unwrap();
    }
    let before = std::fs::metadata(&history).unwrap().len();
    let (code, _, stderr) = run(&["compact", "--in-place", s(&history)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::metadata(&history).unwrap().len() < before);
    let (code, _, stderr) = run(&["cat", s(&history), "-o", s(&copy)]);
    assert_eq!(code, 0, "{stderr}");
    for path in [&history, &copy] {
        let meta = std::fs::metadata(path).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o777),
            (nobody, nobody, 0o640),
            "{}",
            path.display()
        );
    }
    // A user who may replace a file but not give one away (only root may) still replaces
    // it, and is told whose it now is.
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let root_owned = dir.path().join("root-owned.jsonl");
    place("pydantic-ai-full.jsonl", &root_owned);
    std::fs::set_permissions(&root_owned, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&history, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .args(["cat", s(&history), "-o", s(&root_owned)])
        .uid(nobody)
        .gid(nobody)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("belonged to user 0 and group 0; replaced, it belongs to user 65534"),
        "{stderr}"
    );
    assert_eq!(std::fs::metadata(&root_owned).unwrap().uid(), nobody);
}

/// A link named on the command line that leads nowhere is said to be one, with what it names,
/// by every command that reads a stream, and for every file read beside one: "No such file"
/// of a file the user sees in `ls` says nothing of why.
#[test]
fn a_named_link_that_leads_nowhere_is_said_to_be_one() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("run.jsonl");
    std::os::unix::fs::symlink("../archive/run.jsonl", &link).unwrap();
    let link = s(&link);
    let expect = dir.path().join("run.snap");
    let commands: [&[&str]; 7] = [
        &["check", link],
        &["fold", link],
        &["inspect", link],
        &["cat", link],
        &["compact", link],
        &["diff", link, link],
        &["snapshot", link, "--expect", s(&expect)],
    ];
    for args in commands {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("run.jsonl is a link that leads nowhere (../archive/run.jsonl:"),
            "{args:?}: {stderr}"
        );
    }
    let (code, _, stderr) = run(&["serve", link]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("leads nowhere"), "{stderr}");

    // So is a link named for what a command reads beside the stream: a suite, a config, an
    // initial state, a RunAgentInput, a baseline, a serve script; and a stored snapshot,
    // which is not missing (a new one to write) when its link leads nowhere.
    let stream = dir.path().join("real.jsonl");
    place("pydantic-ai-full.jsonl", &stream);
    let stream = s(&stream);
    let aux = |name: &str| {
        let path = dir.path().join(name);
        std::os::unix::fs::symlink(format!("../archive/{name}"), &path).unwrap();
        path
    };
    let (suite, config, state, input, baseline, script, snapshot) = (
        aux("suite.toml"),
        aux("agui-lens.toml"),
        aux("state.json"),
        aux("input.json"),
        aux("baseline.toml"),
        aux("script.toml"),
        aux("stored.snap"),
    );
    let url = "http://127.0.0.1:1/";
    let commands: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["test", s(&suite)], &suite),
        (vec!["check", stream, "--config", s(&config)], &config),
        (vec!["check", stream, "--initial-state", s(&state)], &state),
        (vec!["run", url, "--input", s(&input)], &input),
        (vec!["check", stream, "--baseline", s(&baseline)], &baseline),
        (vec!["serve", s(&script)], &script),
        (
            vec!["snapshot", stream, "--expect", s(&snapshot)],
            &snapshot,
        ),
    ];
    for (args, named) in commands {
        let (code, stdout, stderr) = run(&args);
        assert_ne!(code, 0, "{args:?}: {stdout}{stderr}");
        let name = named.file_name().unwrap().to_str().unwrap();
        assert!(
            stderr.contains(&format!("a link that leads nowhere (../archive/{name}:")),
            "{args:?}: {stderr}"
        );
        assert!(named.is_symlink(), "{args:?} replaced the link");
    }
    // Written, such a link is where the file is made (as for any output): a first baseline
    // or snapshot into a linked folder.
    for (flag, name) in [
        ("--update-baseline", "base.toml"),
        ("--update", "made.snap"),
    ] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(format!("shared/{name}"), &link).unwrap();
        let args = if flag == "--update" {
            vec!["snapshot", stream, "--expect", s(&link), flag]
        } else {
            vec!["check", stream, "--baseline", s(&link), flag]
        };
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(link.is_symlink(), "{args:?} replaced the link");
        assert!(dir.path().join("shared").join(name).is_file(), "{args:?}");
    }
}

/// The `agui-lens.toml` found from the working directory up is an error when it is a link
/// that leads nowhere: going on without it (or with one further up) checks by other rules
/// than the project's, maybe laxer ones, and passes what the project's would fail.
#[test]
fn a_found_config_that_leads_nowhere_is_not_gone_without() {
    let dir = tempfile::tempdir().unwrap();
    place("pydantic-ai-full.jsonl", &dir.path().join("run.jsonl"));
    std::os::unix::fs::symlink(
        "../shared/agui-lens.toml",
        dir.path().join("agui-lens.toml"),
    )
    .unwrap();
    let out = crate::common::agui_lens()
        .current_dir(dir.path())
        .args(["check", "run.jsonl"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr
            .contains("agui-lens.toml: it is a link that leads nowhere (../shared/agui-lens.toml:"),
        "{stderr}"
    );
}

/// So is an `agui-lens.toml` that is a folder (it was passed over in silence).
#[test]
fn a_found_config_that_is_a_folder_is_not_gone_without() {
    let dir = tempfile::tempdir().unwrap();
    place("pydantic-ai-full.jsonl", &dir.path().join("run.jsonl"));
    std::fs::create_dir(dir.path().join("agui-lens.toml")).unwrap();
    let out = crate::common::agui_lens()
        .current_dir(dir.path())
        .args(["check", "run.jsonl"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("agui-lens.toml"), "{stderr}");
}

/// An output named as one of the command's own inputs would destroy what it reads: `inspect
/// --html` over the stream, `run --record` over the RunAgentInput it is about to send, `serve
/// --report` over the recording it serves, `test --junit` over the suite. Each is refused
/// before anything is read, sent or written, and the input is left as it was.
#[test]
fn an_output_that_is_one_of_the_inputs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("run.jsonl");
    place("pydantic-ai-full.jsonl", &stream);
    let input = dir.path().join("input.json");
    write(
        &input,
        br#"{"threadId":"t","runId":"r","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#,
    );
    let suite = dir.path().join("suite.toml");
    write(
        &suite,
        b"[[case]]\nname = \"a\"\nurl = \"http://127.0.0.1:1/\"\nmessage = \"hi\"\n",
    );
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&stream, &link).unwrap();
    let url = "http://127.0.0.1:1/";
    let cases: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["inspect", "--html", s(&stream), s(&stream)], &stream),
        (vec!["inspect", "--html", s(&link), s(&stream)], &stream),
        (
            vec!["run", url, "--input", s(&input), "--record", s(&input)],
            &input,
        ),
        (
            vec!["run", url, "--input", s(&input), "--record-raw", s(&input)],
            &input,
        ),
        (
            vec!["serve", s(&stream), "--once", "--report", s(&stream)],
            &stream,
        ),
        (vec!["test", s(&suite), "--junit", s(&suite)], &suite),
    ];
    for (args, kept) in cases {
        let before = std::fs::read(kept).unwrap();
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("is an input"), "{args:?}: {stderr}");
        assert_eq!(std::fs::read(kept).unwrap(), before, "{args:?}");
    }
    let record = dir.path().join("rec.jsonl");
    let (code, _, stderr) = run(&[
        "run",
        url,
        "--input",
        s(&input),
        "--record",
        s(&record),
        "--record-raw",
        s(&record),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--record-raw"), "{stderr}");
}

/// `--update-baseline` replaces the --baseline FILE; a FILE that holds something else (the
/// stream being checked, a config) is refused and left as it was: only a baseline, or
/// nothing, is replaced.
#[test]
fn update_baseline_replaces_only_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("run.jsonl");
    place("pydantic-ai-full.jsonl", &stream);
    let config = dir.path().join("agui-lens.toml");
    write(&config, b"[rules]\n\"state/*\" = \"deny\"\n");
    for kept in [&stream, &config] {
        let before = std::fs::read(kept).unwrap();
        let (code, _, stderr) = run(&[
            "check",
            s(&stream),
            "--baseline",
            s(kept),
            "--update-baseline",
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("is no baseline"), "{stderr}");
        assert_eq!(std::fs::read(kept).unwrap(), before);
    }
    // A new one, and then the same again over it, are written.
    let baseline = dir.path().join("baseline.json");
    for _ in 0..2 {
        let (code, _, stderr) = run(&[
            "check",
            s(&stream),
            "--baseline",
            s(&baseline),
            "--update-baseline",
        ]);
        assert_eq!(code, 0, "{stderr}");
    }
    let (code, _, stderr) = run(&["check", s(&stream), "--baseline", s(&baseline)]);
    assert_eq!(code, 0, "{stderr}");
}

/// A folder whose files are all skipped as no capture (a sidecar the capture step wrote
/// while the stream itself was lost) holds no stream, as an empty folder does: the run
/// checked nothing and cannot pass, in every format. Beside a stream, a sidecar is only
/// counted.
#[test]
fn a_folder_of_nothing_but_sidecars_is_no_pass() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    std::fs::create_dir_all(&root).unwrap();
    write(
        &root.join("run.meta.json"),
        b"{\"model\":\"x\",\"took_ms\":12}\n",
    );
    write(&root.join("usage.json"), b"{\"tokens\":40}\n");
    for format in ["human", "json", "jsonl", "github", "junit", "sarif"] {
        let (code, stdout, stderr) = run(&["check", s(&root), "--format", format]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(stdout.contains("run.meta.json"), "{format}: {stdout}");
    }
    let (_, stdout, _) = run(&["check", s(&root), "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    place("pydantic-ai-full.jsonl", &root.join("run.jsonl"));
    let (code, stdout, _) = run(&["check", s(&root)]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("2 skipped"), "{stdout}");
}

/// Item 7: in CI, accepting a snapshot needs a reason as updating does; the accepted file's
/// header carries the reason for this change, never the one of the change before.
#[test]
fn accepting_a_snapshot_in_ci_needs_a_reason_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("run.snap");
    let pending = dir.path().join("run.snap.new");
    let first = recording("pydantic-ai-full.jsonl");
    let second = recording("pydantic-ai-text.jsonl");
    let (code, _, stderr) = run(&[
        "snapshot",
        s(&first),
        "--expect",
        s(&snap),
        "--update",
        "--reason",
        "first greeting",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, _) = run(&["snapshot", s(&second), "--expect", s(&snap)]);
    assert_eq!(code, 1);
    assert!(pending.exists());
    let pending_text = std::fs::read_to_string(&pending).unwrap();
    assert!(
        !pending_text.contains("first greeting"),
        "a changed snapshot must not carry the old reason:\n{pending_text}"
    );

    let output = crate::common::agui_lens()
        .args(["snapshot", "accept", s(&snap)])
        .env("CI", "true")
        .output()
        .unwrap();
    let (code, _, stderr) = crate::common::split(output);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--reason"), "{stderr}");
    assert!(pending.exists(), "a refused accept keeps the pending file");

    let output = crate::common::agui_lens()
        .args([
            "snapshot",
            "accept",
            s(&snap),
            "--reason",
            "the text scenario now",
        ])
        .env("CI", "true")
        .output()
        .unwrap();
    let (code, _, stderr) = crate::common::split(output);
    assert_eq!(code, 0, "{stderr}");
    let accepted = std::fs::read_to_string(&snap).unwrap();
    assert!(
        accepted.contains("# reason: the text scenario now\n"),
        "{accepted}"
    );
    assert!(!accepted.contains("first greeting"), "{accepted}");
    let (code, _, stderr) = run(&["snapshot", s(&second), "--expect", s(&snap)]);
    assert_eq!(code, 0, "{stderr}");
}

/// Item 10: whether an input is binary is decided once, from its first bytes, whatever its
/// size: one finding, not one per "line" of an executable.
#[test]
fn a_large_binary_file_gets_one_finding() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("program.jsonl");
    // An executable's shape: a header, then code and data with newlines here and there.
    let mut bytes = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".to_vec();
    let mut x: u32 = 12345;
    while bytes.len() < 8 << 20 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        bytes.push((x >> 16) as u8);
    }
    write(&path, &bytes);
    let (code, stdout, stderr) = run(&["check", "--format", "json", s(&path)]);
    assert_eq!(code, 1, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{stdout:.2000}");
    assert_eq!(diagnostics[0]["rule"], "framing/no-events");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("binary"),
        "{}",
        diagnostics[0]
    );
    let (_, human, _) = run(&["check", s(&path)]);
    assert!(human.len() < 2000, "{} bytes of output", human.len());
}

/// Item 11: repeated findings of one cause (a tool the input does not declare, called over
/// and over) are one finding with "and N more"; `--no-group` shows each, and the machine
/// formats list the other places.
#[test]
fn repeated_findings_of_one_cause_are_grouped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calls.jsonl");
    let mut lines = vec![
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1","input":{"threadId":"t","runId":"r","messages":[],"tools":[{"name":"declared","description":"d","parameters":{"type":"object"}}],"context":[],"state":{},"forwardedProps":{}}}"#.to_owned(),
    ];
    for i in 0..40 {
        let tool = if i % 10 == 9 { "fetch" } else { "search" };
        lines.push(format!(
            r#"{{"type":"TOOL_CALL_START","toolCallId":"c{i}","toolCallName":"{tool}"}}"#
        ));
        lines.push(format!(
            r#"{{"type":"TOOL_CALL_ARGS","toolCallId":"c{i}","delta":"{{}}"}}"#
        ));
        lines.push(format!(r#"{{"type":"TOOL_CALL_END","toolCallId":"c{i}"}}"#));
    }
    lines.push(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#.to_owned());
    write(&path, (lines.join("\n") + "\n").as_bytes());

    let (code, stdout, _) = run(&["check", s(&path)]);
    assert_eq!(code, 0, "{stdout}");
    let shown = stdout.matches("warning[tool-args/undeclared-tool]").count();
    assert_eq!(shown, 2, "one per tool:\n{stdout}");
    assert!(stdout.contains("and 35 more"), "{stdout}");
    assert!(stdout.contains("and 3 more"), "{stdout}");
    assert!(
        stdout.contains("40 warnings"),
        "every finding still counts:\n{stdout}"
    );

    let (_, stdout, _) = run(&["check", "--no-group", s(&path)]);
    assert_eq!(
        stdout.matches("warning[tool-args/undeclared-tool]").count(),
        40
    );

    let (_, stdout, _) = run(&["check", "--format", "json", s(&path)]);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 2, "{stdout}");
    let search = diagnostics
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("search"))
        .unwrap();
    let more = search["more"].as_array().unwrap();
    assert_eq!(more.len(), 35);
    assert!(more.iter().all(|m| m["line"].is_u64()), "{search}");

    let (_, stdout, _) = run(&["check", "--format", "jsonl", s(&path)]);
    let records: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Each finding is a line, and a group's repeats one line more that counts them.
    let total: u64 = records
        .iter()
        .map(|r| r["repeats"].as_u64().unwrap_or(1))
        .sum();
    assert_eq!(total, 40, "{stdout}");
    let repeats = records.iter().find(|r| r["repeats"] == 35).unwrap();
    assert_eq!(repeats["more"].as_array().unwrap().len(), 35);
}

/// Item 12: a directory walk skips hidden files and folders, what ignore files and
/// `--exclude` leave out, and files that are plainly no capture (JSON that is no event),
/// counting them; each file's verdict is listed. Named explicitly, a sidecar is an error.
#[test]
fn directory_walks_skip_what_is_not_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    place("pydantic-ai-full.sse", &rec.join("run1.sse"));
    place("agui-sdk-full.jsonl", &rec.join("run2.jsonl"));
    // Broken: a capture with an error in it still fails the run.
    std::fs::copy(
        root().join("fixtures/invalid/lifecycle/unterminated-run.jsonl"),
        rec.join("run3.jsonl"),
    )
    .unwrap();
    write(
        &rec.join("run1.meta.json"),
        b"{\"elapsed_ms\": 532, \"model\": \"scripted\"}\n",
    );
    write(&rec.join(".hidden/bad.jsonl"), b"not json\n");
    write(&rec.join(".bad.jsonl"), b"not json\n");
    write(&rec.join("ignored/bad.jsonl"), b"not json\n");
    write(&rec.join("old.bak.jsonl"), b"not json\n");
    write(&rec.join(".gitignore"), b"ignored/\n");

    let (code, stdout, stderr) = run(&["check", s(&rec), "--exclude", "*.bak.jsonl"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(!stdout.contains("bad.jsonl"), "{stdout}");
    assert!(!stdout.contains("framing/no-events"), "{stdout}");
    let summary = stdout.lines().last().unwrap();
    assert!(summary.contains("checked 3 files"), "{summary}");
    assert!(summary.contains("1 skipped"), "{summary}");
    // Each file's verdict.
    for (name, verdict) in [
        ("run1.sse", "ok"),
        ("run2.jsonl", "ok"),
        ("run3.jsonl", "error"),
        ("run1.meta.json", "skipped"),
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains(name) && l.contains(verdict) && !l.contains("-->")),
            "{name} {verdict}:\n{stdout}"
        );
    }
    // The walk's errors are those of run3 alone.
    let (_, json, _) = run(&[
        "check",
        "--format",
        "json",
        s(&rec),
        "--exclude",
        "*.bak.jsonl",
    ]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert!(
        json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["path"].as_str().unwrap().ends_with("run3.jsonl")),
        "{json}"
    );
    assert_eq!(json["summary"]["skipped"], 1);

    // Named on the command line, the sidecar is reported.
    let (code, stdout, _) = run(&["check", s(&rec.join("run1.meta.json"))]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("framing/no-events"), "{stdout}");
}

/// A child run of the binary, with its output collected on other threads, that a test can
/// signal; killed if the test ends first.
struct Child {
    child: std::process::Child,
    stdout: Option<std::thread::JoinHandle<String>>,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// The command's stdout held open and never read (see [`Child::spawn_unread_stdout`]).
    unread: Option<std::process::ChildStdout>,
}

impl Child {
    fn spawn(args: &[&str], tmp: Option<&Path>) -> Child {
        Child::start(args, tmp, None, true)
    }

    /// As [`Child::spawn`], its stdout a pipe no one reads: once full, the command waits on it.
    fn spawn_unread_stdout(args: &[&str]) -> Child {
        Child::start(args, None, None, false)
    }

    /// As [`Child::spawn`], started with `signal` ignored, as a shell without job control
    /// starts a background job with SIGINT ignored.
    fn spawn_ignoring(args: &[&str], signal: libc::c_int) -> Child {
        Child::start(args, None, Some(signal), true)
    }

    fn start(
        args: &[&str],
        tmp: Option<&Path>,
        ignored: Option<libc::c_int>,
        read_stdout: bool,
    ) -> Child {
        use std::io::Read;
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        crate::common::with_default_signals(&mut command, ignored);
        command
            .args(args)
            .current_dir(root())
            .env_remove("CI")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for proxy in crate::common::PROXY_VARIABLES {
            command.env_remove(proxy);
        }
        if let Some(tmp) = tmp {
            command.env("TMPDIR", tmp);
        }
        let mut child = command.spawn().unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let (stdout, unread) = match read_stdout {
            true => (
                std::thread::spawn(move || {
                    let mut s = String::new();
                    let _ = out.read_to_string(&mut s);
                    s
                }),
                None,
            ),
            false => (std::thread::spawn(String::new), Some(out)),
        };
        Child {
            child,
            stdout: Some(stdout),
            unread,
            stderr: Some(std::thread::spawn(move || {
                let mut s = String::new();
                let _ = err.read_to_string(&mut s);
                s
            })),
        }
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill on the pid of a child this value owns and has not waited for.
        assert_eq!(
            unsafe { libc::kill(self.child.id() as libc::pid_t, signal) },
            0
        );
    }

    /// Stops the command (SIGSTOP) and waits (up to 10 s) until every thread of it is
    /// stopped: a signal sent after is held until SIGCONT. (SIGSTOP takes effect only when a
    /// thread next enters the kernel, and a pending signal of a lower number is taken first:
    /// a SIGINT sent right after it could be acted on before the freeze.)
    fn freeze(&self) {
        self.signal(libc::SIGSTOP);
        let stopped = |task: std::fs::DirEntry| {
            std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
                // The state follows the command name, which is in parentheses.
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with(['T', 't', 'Z', 'X']))
            })
        };
        let started = std::time::Instant::now();
        loop {
            let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id()));
            let Ok(tasks) = tasks else { return };
            if tasks.flatten().all(stopped) {
                return;
            }
            assert!(started.elapsed().as_secs() < 10, "the command did not stop");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Waits (up to 60 s) until the stdout no one reads holds as much as a pipe does: the
    /// command then waits on its next write (see [`Child::spawn_unread_stdout`]).
    fn wait_until_stdout_full(&self) {
        use std::os::fd::AsRawFd as _;
        let out = self.unread.as_ref().expect("a stdout no one reads");
        let started = std::time::Instant::now();
        loop {
            let mut held: libc::c_int = 0;
            // SAFETY: FIONREAD into a local, on a descriptor this value owns, open.
            unsafe { libc::ioctl(out.as_raw_fd(), libc::FIONREAD, &mut held) };
            // (A write of up to 4 KiB waits for room for all of it.)
            if held > 65536 - 4096 {
                return;
            }
            assert!(
                started.elapsed().as_secs() < 60,
                "stdout never filled: it holds {held} bytes"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Whether a signal sent to the command is still pending, for the process or any of its
    /// threads (`/proc`): not yet delivered.
    fn has_pending_signals(&self) -> bool {
        let pending = |status: String| {
            status
                .lines()
                .filter(|l| l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
                .any(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .is_some_and(|m| !m.trim_start_matches('0').is_empty())
                })
        };
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id()))
            .into_iter()
            .flatten();
        tasks
            .flatten()
            .any(|task| std::fs::read_to_string(task.path().join("status")).is_ok_and(pending))
    }

    /// Waits (up to 20 s) until the command has the file `path` open.
    fn wait_until_open(&self, path: &Path) {
        let started = std::time::Instant::now();
        while !self.has_open(path) {
            assert!(
                started.elapsed().as_secs() < 20,
                "the file was never opened"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Whether the command has the file `path` open (read from `/proc`).
    fn has_open(&self, path: &Path) -> bool {
        let fds = format!("/proc/{}/fd", self.child.id());
        let Ok(entries) = std::fs::read_dir(fds) else {
            return false;
        };
        let path = path.canonicalize().unwrap();
        entries
            .flatten()
            .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|target| target == path))
    }

    /// Waits up to `limit` for the exit; returns (code, stdout, stderr).
    fn wait(mut self, limit: std::time::Duration) -> (i32, String, String) {
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(started.elapsed() < limit, "the command did not stop");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let stdout = self.stdout.take().unwrap().join().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status.code().unwrap_or(-1), stdout, stderr)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `ready` holds, for up to thirty seconds (a debug build starting beside a
/// loaded machine's other work can take several).
fn until(mut ready: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "timed out"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A server that sends the start of a run and then stays silent, as an agent that thinks for
/// a long time does.
/// `run --record RECORD` against `server` (a [`hanging_agent`]), once `written` (the file the
/// recording goes into) holds the start of its answer: the recorder waits there, holding it.
fn recording_under_way(
    server: &crate::common::server::Server,
    record: &Path,
    written: &Path,
) -> Child {
    let child = Child::spawn(
        &[
            "run",
            &server.url("/"),
            "--message",
            "hi",
            "--record",
            s(record),
        ],
        None,
    );
    until(|| std::fs::read(written).is_ok_and(|b| b.windows(11).any(|w| w == b"RUN_STARTED")));
    child
}

fn hanging_agent() -> crate::common::server::Server {
    use crate::common::server::{Script, Server, Step, frame};
    let head = [
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Thinking"}"#,
    ]
    .iter()
    .flat_map(|e| frame(e))
    .collect();
    Server::start(Script::sse(vec![Step::Send(head), Step::Hang]))
}

/// Item 8: Ctrl-C or SIGTERM halfway through `run` stops the call, checks what arrived, writes
/// the whole report, and exits 130 or 143.
#[test]
fn an_interrupted_run_still_writes_its_report() {
    let server = hanging_agent();
    for (signal, code, format) in [
        (libc::SIGINT, 130, "json"),
        (libc::SIGTERM, 143, "sarif"),
        (libc::SIGTERM, 143, "junit"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("run.jsonl");
        let child = Child::spawn(
            &[
                "run",
                &server.url("/"),
                "--message",
                "hi",
                "--format",
                format,
                "--record",
                s(&record),
            ],
            None,
        );
        until(|| std::fs::read_to_string(&record).is_ok_and(|text| text.lines().count() == 3));
        child.signal(signal);
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, code, "{format}: {stdout}\n{stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        assert!(stderr.contains("3 events"), "{stderr}");
        match format {
            "json" => {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(doc["summary"]["events"], 3, "{doc}");
                // Said as `check` says it: a JSON reader of `errors: 0` is told.
                assert_eq!(doc["summary"]["stopped_by"], "SIGINT", "{doc}");
                // The run was cut by the user, not left open by the agent.
                assert!(!stdout.contains("lifecycle/unterminated-run"), "{stdout}");
            }
            "sarif" => {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                let invocation = &doc["runs"][0]["invocations"][0];
                assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
            }
            _ => assert!(stdout.trim_end().ends_with("</testsuites>"), "{stdout}"),
        }
        // The recording says the stop cut it (beside it), and a later check of it charges
        // the agent with nothing the stop did (it found the run left open, exit 1); nor is
        // it passed whole.
        let cut = dir.path().join("run.jsonl.cut.txt");
        let said = std::fs::read_to_string(&cut).unwrap_or_default();
        assert!(said.contains("stopped by"), "{said:?}");
        let (checked, stdout, stderr) = run(&["check", s(&record)]);
        assert_eq!(checked, 2, "{stdout}{stderr}");
        assert!(!stdout.contains("unterminated-run"), "{stdout}");
        assert!(
            format!("{stdout}{stderr}").contains("cut when it was recorded"),
            "{stdout}{stderr}"
        );
    }
    // A whole run recorded over it takes the word of the cut away with it.
    let agent = crate::common::server::Server::start(crate::common::server::Script::sse(vec![
        crate::common::server::Step::Send(crate::common::server::clean_run()),
    ]));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("run.jsonl");
    write(
        &dir.path().join("run.jsonl.cut.txt"),
        b"stopped by SIGINT after 3 events\n",
    );
    let (code, stdout, stderr) = run(&[
        "run",
        &agent.url("/"),
        "--message",
        "hi",
        "--record",
        s(&record),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!dir.path().join("run.jsonl.cut.txt").exists());
    let (code, stdout, stderr) = run(&["check", s(&record)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // A word of a cut left beside a capture put in the recording's place later (another
    // length than it gives) is stale: the capture is checked as it is, and that is said.
    write(
        &dir.path().join("run.jsonl.cut.txt"),
        b"stopped by SIGINT after 8 events: the stream was recorded in part\nsize: 5\n",
    );
    let (code, stdout, stderr) = run(&["check", s(&record)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("stale"), "{stderr}");
}

/// Item 8: a cancelled CI job (SIGTERM) during `test` writes every report it was asked for,
/// with the unfinished case as a JUnit error and the ones never started as skipped, and
/// leaves no temp file behind.
#[test]
fn an_interrupted_suite_writes_every_report_and_leaves_no_temp_files() {
    let server = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let suite = dir.path().join("suite.toml");
    write(
        &suite,
        format!(
            "[[case]]\nname = \"slow\"\nurl = \"{0}\"\nmessage = \"hi\"\nsnapshot = \"snaps/slow.snap\"\n\n\
             [[case]]\nname = \"later\"\nurl = \"{0}\"\nmessage = \"hi\"\n",
            server.url("/")
        )
        .as_bytes(),
    );
    let junit = dir.path().join("junit.xml");
    let child = Child::spawn(
        &["test", s(&suite), "--junit", s(&junit), "--format", "json"],
        Some(&tmp),
    );
    until(|| !server.requests().is_empty());
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(junit.contains("<testcase name=\"slow\""), "{junit}");
    assert!(junit.contains("<error message=\"interrupted"), "{junit}");
    assert!(junit.contains("<skipped"), "{junit}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["cases"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["summary"]["stopped_by"], "SIGTERM", "{doc}");
    // What came before the stop is said as for any case: three events, the first in time.
    let slow = &doc["cases"][0];
    assert_eq!(slow["events"], 3, "{slow}");
    assert!(slow["first_event_ms"].is_u64(), "{slow}");
    assert_eq!(files_under(&tmp), Vec::<PathBuf>::new(), "temp files left");
    // Half a stream is no expectation: no pending snapshot is written for it.
    assert!(!dir.path().join("snaps/slow.snap.new").exists());
    assert_eq!(server.requests().len(), 1, "the second case never ran");
    // The formats a code-scanning dashboard reads say so too: SARIF's run did not succeed,
    // GitHub gets an error for the interrupted case, one for the case never run and one for
    // the stop; JSON Lines ends with the stop, as `check`'s does.
    for format in ["sarif", "github", "jsonl"] {
        // Counted before the spawn: the call may come before the line after it runs.
        let asked = server.requests().len();
        let child = Child::spawn(&["test", s(&suite), "--format", format], Some(&tmp));
        until(|| server.requests().len() > asked);
        std::thread::sleep(std::time::Duration::from_millis(300));
        child.signal(libc::SIGTERM);
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, 143, "{format}: {stdout}\n{stderr}");
        if format == "sarif" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            let invocation = &doc["runs"][0]["invocations"][0];
            assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
            let said = invocation["toolExecutionNotifications"].to_string();
            assert!(said.contains("case \\\"slow\\\""), "{said}");
            assert!(said.contains("case \\\"later\\\""), "{said}");
            assert!(said.contains("stopped by SIGTERM"), "{said}");
        } else if format == "jsonl" {
            let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
            assert_eq!(
                last,
                serde_json::json!({"stopped_by": "SIGTERM"}),
                "{stdout}"
            );
        } else {
            let errors: Vec<&str> = stdout
                .lines()
                .filter(|l| l.starts_with("::error"))
                .collect();
            assert_eq!(errors.len(), 3, "{stdout}");
            assert!(errors[0].contains("case \"slow\""), "{stdout}");
            assert!(errors[1].contains("case \"later\""), "{stdout}");
            assert!(errors[2].contains("stopped by SIGTERM"), "{stdout}");
        }
    }
}

/// Item 8: `check --follow` stops at Ctrl-C with its summary, and says by its exit status
/// that it was stopped.
#[test]
fn an_interrupted_follow_reports_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("growing.jsonl");
    write(
        &path,
        b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    );
    let child = Child::spawn(&["check", "--follow", s(&path)], None);
    // The signal is caught from before the file is opened; under load, a fixed wait could end
    // before that.
    until(|| child.has_open(&path));
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.signal(libc::SIGINT);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 130, "{stdout}\n{stderr}");
    assert!(stdout.contains("checked 1 file, 1 event"), "{stdout}");
}

/// Opens a FIFO for writing once a reader has it open. A blocking open would wait for ever
/// for a command that exited before reading (a bad flag, a refused baseline): this one gives
/// up after 10 s.
fn fifo_writer(fifo: &Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo)
        {
            Ok(file) => {
                // Writes block again, as a writer's do.
                // SAFETY: fcntl on a descriptor this function owns.
                unsafe {
                    let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
                }
                return file;
            }
            // ENXIO: no reader yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "nothing opened {} to read it",
                    fifo.display()
                );
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => panic!("opening {} to write: {e}", fifo.display()),
        }
    }
}

/// Writes `stream` into the FIFO `fifo` in two halves, with `between` run after the first
/// (the signal sent halfway) and a pause for it to land; then closes the FIFO.
fn feed_in_halves(fifo: &Path, stream: &[u8], between: impl FnOnce()) {
    use std::io::Write;
    let mut writer = fifo_writer(fifo);
    let half = stream.len() / 2;
    writer.write_all(&stream[..half]).unwrap();
    writer.flush().unwrap();
    between();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The command may have stopped reading already.
    let _ = writer.write_all(&stream[half..]);
}

/// Ctrl-C or SIGTERM during `check` of a stream still being written (a pipe, a FIFO) stops
/// it, checks what arrived (without the end-of-stream rules: the stream did not end), names
/// the inputs not begun, writes the whole report in every format and exits 130 or 143. It was
/// killed with no report at all before.
#[test]
fn an_interrupted_check_still_writes_its_report() {
    let head = concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Thinking"}"#,
        "\n"
    );
    for (signal, code, format) in [
        (libc::SIGINT, 130, "json"),
        (libc::SIGTERM, 143, "sarif"),
        (libc::SIGTERM, 143, "human"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("live.jsonl");
        make_fifo(&fifo);
        let later = dir.path().join("later.jsonl");
        place("pydantic-ai-full.jsonl", &later);
        let child = Child::spawn(&["check", s(&fifo), s(&later), "--format", format], None);
        {
            use std::io::Write;
            let mut writer = fifo_writer(&fifo);
            writer.write_all(head.as_bytes()).unwrap();
            writer.flush().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(500));
            child.signal(signal);
            let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
            assert_eq!(exit, code, "{format}: {stdout}\n{stderr}");
            // (SARIF lists every rule in its catalogue.)
            if format != "sarif" {
                assert!(!stdout.contains("unterminated-run"), "{stdout}");
            }
            match format {
                "json" => {
                    let doc: Value = serde_json::from_str(&stdout).unwrap();
                    let live = &doc["files"][0];
                    assert_eq!(live["events"], 3, "{doc}");
                    assert_eq!(live["interrupted"], true, "{doc}");
                    // The other input was read whole beside it, or not begun: never half.
                    let later = &doc["files"][1];
                    assert!(
                        later["events"] == 42 && later["failure"].is_null()
                            || later["events"] == 0 && later["interrupted"] == true,
                        "{doc}"
                    );
                }
                "sarif" => {
                    let doc: Value = serde_json::from_str(&stdout).unwrap();
                    let invocation = &doc["runs"][0]["invocations"][0];
                    assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
                }
                _ => assert!(stdout.contains("interrupted before its end"), "{stdout}"),
            }
        }
    }
}

/// A stop while a pipe keeps delivering (a producer that goes on writing) ends the reading at
/// once, as it does while the pipe is idle. The stop was looked at only while the reader
/// waited for bytes: a busy pipe was read on, to its end (then called "interrupted" with
/// every event read) or for as long as its writer went on, and only a second signal ended it.
#[test]
fn a_stop_ends_the_reading_of_a_busy_pipe() {
    use std::io::Write;
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("live.jsonl");
        make_fifo(&fifo);
        let child = Child::spawn(&["check", s(&fifo), "--format", "json"], None);
        let mut writer = fifo_writer(&fifo);
        let feeding = std::thread::spawn(move || {
            let head = concat!(
                r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
                "\n",
                r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
                "\n",
            );
            let line =
                "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"more\"}\n"
                    .repeat(1000);
            let mut sent = 0u64;
            if writer.write_all(head.as_bytes()).is_ok() {
                // Until the reader is gone.
                while writer.write_all(line.as_bytes()).is_ok() {
                    sent += 1000;
                }
            }
            sent
        });
        std::thread::sleep(std::time::Duration::from_millis(700));
        child.signal(signal);
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        let sent = feeding.join().unwrap();
        assert_eq!(exit, code, "{stdout}\n{stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let file = &doc["files"][0];
        assert_eq!(file["interrupted"], true, "{doc}");
        assert!(file["events"].as_u64().unwrap() <= sent + 2, "{doc}");
        assert_eq!(doc["summary"]["stopped_by"], signal_name(signal), "{doc}");
    }
}

/// `timeout -s INT` sends its signal to the command and then to the command's process group:
/// the same signal twice, microseconds apart. The second was taken for a second Ctrl-C and
/// ended the process at once: no report, a recording cut with no word of the cut beside it.
/// It is the same stop.
#[test]
fn the_same_signal_sent_twice_at_once_is_one_stop() {
    let server = hanging_agent();
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("run.jsonl");
        let args = [
            "run",
            &server.url("/"),
            "--message",
            "hi",
            "--format",
            "json",
            "--record",
            s(&record),
        ];
        let child = Child::spawn(&args, None);
        until(|| std::fs::read_to_string(&record).is_ok_and(|text| text.lines().count() == 3));
        // The second once the first is delivered (two pending at once are one to the
        // kernel), as soon as it is.
        child.signal(signal);
        let sent = std::time::Instant::now();
        while child.has_pending_signals() && sent.elapsed().as_secs() < 1 {}
        child.signal(signal);
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, code, "{stdout}\n{stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["summary"]["stopped_by"], signal_name(signal), "{doc}");
        let cut = std::fs::read_to_string(dir.path().join("run.jsonl.cut.txt"));
        assert!(
            cut.is_ok_and(|said| said.contains("stopped by")),
            "{stderr}"
        );
    }
}

/// A stop while the agent keeps streaming (a frame every 50 ms, never idle for the tenth of a
/// second the reader waits) ends the call at once, as it does while the agent is silent: the
/// body was read to its end after the stop, the run reported whole.
#[test]
fn a_stop_ends_a_call_whose_agent_keeps_streaming() {
    let agent = crate::serving::Served::start(&[
        "fixtures/recordings/pydantic-ai-full.jsonl",
        "--drip",
        "0.05",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("run.jsonl");
    let args = [
        "run",
        agent.url.as_str(),
        "--message",
        "hi",
        "--format",
        "json",
        "--record",
        s(&record),
    ];
    let child = Child::spawn(&args, None);
    until(|| std::fs::read_to_string(&record).is_ok_and(|text| text.lines().count() >= 3));
    child.signal(libc::SIGINT);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 130, "{stdout}\n{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["summary"]["stopped_by"], "SIGINT", "{doc}");
    // 42 events in 2 s: the stop came with most of them still to come.
    let events = doc["summary"]["events"].as_u64().unwrap();
    assert!(events < 35, "{events} of 42 read after the stop: {stderr}");
}

fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => unreachable!(),
    }
}

/// Ctrl-C in a terminal stops the whole pipeline (`producer | agui-lens check -`): the
/// producer dies with it, and the input ends right after the signal. That end is the stop's,
/// not the stream's: the input is interrupted, and no end-of-stream rule blames the agent.
#[test]
fn a_pipe_whose_writer_the_same_ctrl_c_stops_is_interrupted() {
    let head = concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        "\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let child = Child::spawn(&["check", s(&fifo), "--format", "json"], None);
    use std::io::Write;
    let mut writer = fifo_writer(&fifo);
    writer.write_all(head.as_bytes()).unwrap();
    writer.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.signal(libc::SIGINT);
    drop(writer);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 130, "{stdout}\n{stderr}");
    assert!(!stdout.contains("unterminated"), "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["files"][0]["interrupted"], true, "{doc}");
    assert_eq!(doc["files"][0]["events"], 2, "{doc}");
}

/// A cancelled CI job sends SIGINT, then SIGTERM a few seconds later. The first signal lets
/// the file under way be checked to its end; the second stops it too, and the report is
/// still written whole, the file marked interrupted. The second signal used to end the
/// process at once, leaving an empty report.
#[test]
fn a_second_signal_stops_the_file_under_way_and_still_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (big, total) = long_history(dir.path());
    // The second signal; then a single one, which lets the file be read whole: the run was
    // still cut short, and JUnit, which has no run-level flag, says so as an error.
    for (format, signals, code) in [
        ("json", &[libc::SIGINT, libc::SIGTERM][..], 143),
        ("junit", &[libc::SIGTERM, libc::SIGTERM][..], 143),
        ("junit", &[libc::SIGINT][..], 130),
    ] {
        let child = Child::spawn(&["check", s(&big), "--format", format], None);
        child.wait_until_open(&big);
        for &signal in signals {
            std::thread::sleep(std::time::Duration::from_millis(150));
            child.signal(signal);
        }
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(120));
        assert_eq!(exit, code, "{format} {signals:?}: {stderr}");
        if format == "json" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            let file = &doc["files"][0];
            assert_eq!(file["interrupted"], true, "{}", doc["summary"]);
            let events = file["events"].as_u64().unwrap();
            assert!(events < total as u64, "{events} of {total}");
            assert_eq!(
                doc["summary"]["stopped_by"], "SIGTERM",
                "{}",
                doc["summary"]
            );
            assert!(stderr.contains("interrupted"), "{stderr}");
        } else {
            assert!(stdout.trim_end().ends_with("</testsuites>"), "{stdout}");
            assert!(stdout.contains("<error"), "{format} {signals:?}: {stdout}");
        }
    }
}

/// A check stopped halfway does not record a baseline: what it did not read has findings it
/// would leave out, and the next run would call them new. The baseline is left as it was (or
/// not written), and stderr says so; the report is still written.
#[test]
fn an_interrupted_check_records_no_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let later = dir.path().join("later.jsonl");
    place("copilotkit-tool-error.jsonl", &later);
    let baseline = dir.path().join("baseline.toml");
    for earlier in [false, true] {
        if earlier {
            // A baseline of the file read whole, as an earlier run recorded it.
            let (code, _, stderr) = run(&[
                "check",
                s(&later),
                "--baseline",
                s(&baseline),
                "--update-baseline",
            ]);
            assert_eq!(code, 0, "{stderr}");
        }
        let before = std::fs::read_to_string(&baseline).ok();
        let child = Child::spawn(
            &[
                "check",
                s(&fifo),
                s(&later),
                "--baseline",
                s(&baseline),
                "--update-baseline",
            ],
            None,
        );
        feed_in_halves(
            &fifo,
            &std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap(),
            || {
                std::thread::sleep(std::time::Duration::from_millis(500));
                child.signal(libc::SIGTERM);
            },
        );
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, 143, "{stdout}\n{stderr}");
        assert!(stdout.contains("interrupted before its end"), "{stdout}");
        let left = if before.is_some() {
            "was left as it was"
        } else {
            "was not written"
        };
        let said = format!("stopped by SIGTERM: the baseline {} {left}", s(&baseline));
        assert!(stderr.contains(&said), "{stderr}");
        assert_eq!(
            std::fs::read_to_string(&baseline).ok(),
            before,
            "the baseline was written from half a run"
        );
    }
}

/// Item 8: Ctrl-C during `compact` leaves nothing half-written: no output, no temp file. What
/// it says names the output it did not write (or left as it was), and the signal.
#[test]
fn an_interrupted_compaction_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let target = out.join("compacted.jsonl");
    let stream = std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap();
    let interrupted = |signal: i32| {
        let child = Child::spawn(&["compact", s(&fifo), "-o", s(&target)], None);
        feed_in_halves(&fifo, &stream, || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            child.signal(signal);
        });
        child.wait(std::time::Duration::from_secs(10))
    };
    let (exit, stdout, stderr) = interrupted(libc::SIGINT);
    assert_eq!(exit, 130, "{stdout}\n{stderr}");
    let said = format!("stopped by SIGINT: {} was not written", target.display());
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(files_under(&out), Vec::<PathBuf>::new());
    // An output that was there before is left as it was.
    write(&target, EARLIER.as_bytes());
    let (exit, stdout, stderr) = interrupted(libc::SIGTERM);
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    let said = format!(
        "stopped by SIGTERM: {} was left as it was",
        target.display()
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(std::fs::read(&target).unwrap(), EARLIER.as_bytes());
    assert_eq!(files_under(&out), vec![PathBuf::from("compacted.jsonl")]);
}

/// Ctrl-C or SIGTERM while `inspect` reads a stream still being written stops it and says so:
/// the page it was asked for is left as it was (or not written), nothing half-made is shown,
/// and the exit status names the signal. It was killed without a word before.
#[test]
fn an_inspection_stopped_while_reading_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let page = dir.path().join("page.html");
    let stream = std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap();
    for (signal, code, name) in [
        (libc::SIGTERM, 143, "SIGTERM"),
        (libc::SIGINT, 130, "SIGINT"),
    ] {
        let before = page.exists().then(|| std::fs::read(&page).unwrap());
        let child = Child::spawn(&["inspect", s(&fifo), "--html", s(&page)], None);
        feed_in_halves(&fifo, &stream, || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            child.signal(signal);
        });
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, code, "{stdout}\n{stderr}");
        let left = if before.is_some() {
            "was left as it was"
        } else {
            "was not written"
        };
        let said = format!(
            "stopped by {name} before the end of {}: {} {left}",
            s(&fifo),
            s(&page)
        );
        assert!(stderr.contains(&said), "{stderr}");
        assert_eq!(page.exists().then(|| std::fs::read(&page).unwrap()), before);
        // The second time, a page is there from before.
        write(&page, EARLIER_PAGE.as_bytes());
    }
    let child = Child::spawn(&["inspect", s(&fifo)], None);
    feed_in_halves(&fifo, &stream, || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        child.signal(libc::SIGTERM);
    });
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    assert_eq!(stdout, "", "half an inspection was shown");
    assert!(
        stderr.contains(&format!(
            "stopped by SIGTERM before the end of {}: nothing was shown",
            s(&fifo)
        )),
        "{stderr}"
    );
}

/// The start of a page an earlier `inspect --html` wrote, as every page starts.
const EARLIER_PAGE: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
     <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
     <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
     <title>agui-lens inspect: earlier.jsonl</title>\n";

/// `fold`, `diff` and `snapshot` stopped by a signal while they read say so, show nothing of
/// what they read (it is not the stream), write no snapshot, and exit with the signal's
/// status. They were ended without a word before.
#[test]
fn a_fold_diff_or_snapshot_stopped_while_reading_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let whole = recording("pydantic-ai-full.jsonl");
    let snap = dir.path().join("kept.snap");
    let stream = std::fs::read(&whole).unwrap();
    // A snapshot of the whole stream, held to and updated below.
    let (code, _, stderr) = run(&["snapshot", s(&whole), "--expect", s(&snap), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let earlier = std::fs::read(&snap).unwrap();
    let end = format!("the end of {}", s(&fifo));
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["fold", s(&fifo)], format!("{end}: nothing was shown")),
        (
            vec!["diff", s(&whole), s(&fifo)],
            format!(
                "{} and {} were read to the end: nothing was shown",
                s(&whole),
                s(&fifo)
            ),
        ),
        (
            vec!["snapshot", s(&fifo), "--expect", s(&snap)],
            format!("{end}: nothing was compared"),
        ),
        (
            vec!["snapshot", s(&fifo), "--expect", s(&snap), "--update"],
            format!("{end}: {} was left as it was", s(&snap)),
        ),
    ];
    for (args, unread) in cases {
        let child = Child::spawn(&args, None);
        feed_in_halves(&fifo, &stream, || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            child.signal(libc::SIGTERM);
        });
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, 143, "{args:?}: {stdout}\n{stderr}");
        assert_eq!(stdout, "", "{args:?}: half a result was shown");
        let said = format!("stopped by SIGTERM before {unread}");
        assert!(stderr.contains(&said), "{args:?}: {stderr}");
        assert_eq!(std::fs::read(&snap).unwrap(), earlier, "{args:?}");
        assert!(!dir.path().join("kept.snap.new").exists(), "{args:?}");
    }
}

/// `schema export` over an earlier export replaces each schema as every file agui-lens writes
/// whole is replaced: a reader that has the old file open goes on reading it whole (it was
/// truncated and rewritten in place, so a reader saw the new text, or half of it), and no temp
/// file is left.
#[test]
fn an_export_replaces_each_schema_whole() {
    use std::io::{Read, Seek};
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&["schema", "export", s(dir.path())]);
    assert_eq!(code, 0, "{stderr}");
    let exported = files_under(dir.path());
    // The one event schema 1.1 changed: 1.0's export of it, with its keys in another order.
    let schema = dir.path().join("events/REASONING_ENCRYPTED_VALUE.json");
    let earlier: Value = serde_json::from_slice(
        &std::fs::read(root().join("schemas/1.0/events/REASONING_ENCRYPTED_VALUE.json")).unwrap(),
    )
    .unwrap();
    let old = serde_json::to_string(&earlier).unwrap().into_bytes();
    write(&schema, &old);
    let mut reader = std::fs::File::open(&schema).unwrap();
    let (code, _, stderr) = run(&["schema", "export", s(dir.path())]);
    assert_eq!(code, 0, "{stderr}");
    let mut seen = Vec::new();
    reader.rewind().unwrap();
    reader.read_to_end(&mut seen).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&seen),
        String::from_utf8_lossy(&old),
        "the open file changed under its reader"
    );
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&schema).unwrap()).unwrap();
    assert_ne!(now, earlier);
    assert_eq!(
        now["properties"]["type"]["const"],
        "REASONING_ENCRYPTED_VALUE"
    );
    assert_eq!(files_under(dir.path()), exported, "temp files left");
}

/// The README's overlay: export, edit, check with `--schemas DIR`. Exporting into that folder
/// again (after an upgrade, to compare) replaced every edited schema, exit 0. A file there is
/// replaced only when it is a schema agui-lens exports to that place (of any version); an
/// edited one, or a file of the user's, is left, named, and the export fails.
#[test]
fn an_export_leaves_an_edited_schema_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&["schema", "export", s(dir.path())]);
    assert_eq!(code, 0, "{stderr}");
    let edited = dir.path().join("events/RUN_STARTED.json");
    let mut schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&edited).unwrap()).unwrap();
    schema["description"] = Value::from("MY CUSTOM EDIT");
    let edit = serde_json::to_vec_pretty(&schema).unwrap();
    write(&edited, &edit);
    let note = dir.path().join("defs/Message.json");
    write(&note, b"my notes\n");
    let (code, _, stderr) = run(&["schema", "export", s(dir.path())]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(std::fs::read(&edited).unwrap(), edit);
    assert_eq!(std::fs::read(&note).unwrap(), b"my notes\n");
    for name in ["events/RUN_STARTED.json", "defs/Message.json"] {
        assert!(
            stderr.contains(&format!(
                "left {} as it was",
                dir.path().join(name).display()
            )),
            "{stderr}"
        );
    }
    // The rest of the export is there, and the overlay still checks with the edit.
    assert!(dir.path().join("events/RUN_FINISHED.json").is_file());
    // Exported again with that folder as the overlay (the note, no schema, taken out of
    // it): what it writes is there already.
    std::fs::remove_file(&note).unwrap();
    let (code, _, stderr) = run(&[
        "schema",
        "export",
        s(dir.path()),
        "--schemas",
        s(dir.path()),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(&edited).unwrap(), edit);
    // A link in a schema's place is not written through, to a file or into nothing.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("mine.json");
    let stock = std::fs::read(dir.path().join("events/RUN_FINISHED.json")).unwrap();
    write(&target, &stock);
    for (name, to) in [
        ("events/RUN_FINISHED.json", target.clone()),
        (
            "events/STEP_STARTED.json",
            elsewhere.path().join("nothing.json"),
        ),
    ] {
        let link = dir.path().join(name);
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&to, &link).unwrap();
    }
    let (code, _, stderr) = run(&["schema", "export", s(dir.path())]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("it is a link"), "{stderr}");
    assert_eq!(std::fs::read(&target).unwrap(), stock);
    assert!(!elsewhere.path().join("nothing.json").exists());
    // 1.0's schemas over 1.1's, and back: each is an export agui-lens knows, so replaced.
    for version in ["1.0", "1.1", "0.x"] {
        let other = tempfile::tempdir().unwrap();
        let (code, _, stderr) = run(&["schema", "export", s(other.path())]);
        assert_eq!(code, 0, "{stderr}");
        let (code, _, stderr) = run(&["schema", "export", s(other.path()), "--protocol", version]);
        assert_eq!(code, 0, "{version}: {stderr}");
        let (code, _, stderr) = run(&["schema", "export", s(other.path())]);
        assert_eq!(code, 0, "{version}: {stderr}");
    }
}

/// A command started with Ctrl-C ignored (a background job of a script, which a shell starts
/// so) is not stopped by it: it finishes its work, as every program leaves an ignored signal
/// ignored. SIGTERM, which it does not ignore, still stops it as it stops any command.
#[test]
fn a_signal_the_command_was_started_ignoring_stays_ignored() {
    let stream = std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let target = dir.path().join("compacted.jsonl");
    let child = Child::spawn_ignoring(&["compact", s(&fifo), "-o", s(&target)], libc::SIGINT);
    feed_in_halves(&fifo, &stream, || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        child.signal(libc::SIGINT);
    });
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 0, "{stdout}\n{stderr}");
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("RUN_FINISHED"),
        "{stderr}"
    );

    let path = dir.path().join("growing.jsonl");
    write(
        &path,
        b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    );
    let mut child = Child::spawn_ignoring(&["check", "--follow", s(&path)], libc::SIGINT);
    until(|| child.has_open(&path));
    child.signal(libc::SIGINT);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.child.try_wait().unwrap().is_none(),
        "Ctrl-C, ignored, stopped the command"
    );
    child.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    assert!(stdout.contains("checked 1 file, 1 event"), "{stdout}");
}

/// Ctrl-C, SIGTERM or a closed terminal (SIGHUP) during `cat -o` leaves neither the output nor
/// its temp file (the temp file was left behind, with whatever had been copied), and the exit
/// status says so.
#[test]
fn an_interrupted_copy_leaves_nothing_behind() {
    let stream = std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap();
    for (signal, code) in [
        (libc::SIGTERM, 143),
        (libc::SIGINT, 130),
        (libc::SIGHUP, 129),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("live.jsonl");
        make_fifo(&fifo);
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let target = out.join("copy.sse");
        let child = Child::spawn(&["cat", s(&fifo), "-o", s(&target)], None);
        feed_in_halves(&fifo, &stream, || {
            until(|| !files_under(&out).is_empty());
            child.signal(signal);
        });
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
        assert_eq!(exit, code, "{stdout}\n{stderr}");
        // There was no output before: it "was not written" (it said "is left as it was").
        assert!(stderr.contains("copy.sse was not written"), "{stderr}");
        assert_eq!(files_under(&out), Vec::<PathBuf>::new(), "{stderr}");
    }
}

/// A second signal ends the process at once (a cancelled CI job sends SIGINT, then SIGTERM):
/// the temp file of the output being written goes with it. The command is frozen while both
/// signals are sent, so that the second lands before the first is acted on.
#[test]
fn a_second_signal_that_ends_a_copy_at_once_leaves_no_temp_file() {
    let stream = std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let target = out.join("copy.sse");
    let child = Child::spawn(&["cat", s(&fifo), "-o", s(&target)], None);
    feed_in_halves(&fifo, &stream, || {
        until(|| !files_under(&out).is_empty());
        child.freeze();
        child.signal(libc::SIGINT);
        child.signal(libc::SIGTERM);
        child.signal(libc::SIGCONT);
    });
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    // Ended by the signal itself, as a second one ends it.
    assert_eq!(exit, -1, "{stdout}\n{stderr}");
    assert_eq!(files_under(&out), Vec::<PathBuf>::new(), "{stderr}");
}

/// Ctrl-C or SIGTERM while `inspect --html` writes its page leaves neither the page nor its
/// temp file, and the exit status says the command was stopped. (A signal while the stream is
/// read ends the process before any file exists.)
///
/// The command is frozen (SIGSTOP) as soon as its temp file is seen, so the signal is known to
/// land while the page is being made; when the freeze came too late (after the page's last
/// byte, as it was synced and renamed, or once it was in place), the whole page must be
/// there, and the attempt is made again.
#[test]
fn a_page_interrupted_while_written_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long.jsonl");
    let mut text = String::from("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    text.push_str("{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"log\":[]}}\n");
    for i in 0..4_000 {
        text.push_str(&format!(
            "{{\"type\":\"STATE_DELTA\",\"delta\":[{{\"op\":\"add\",\"path\":\"/log/-\",\"value\":\"entry {i} {}\"}}]}}\n\
             {{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m{i}\",\"role\":\"assistant\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m{i}\",\"delta\":\"{}\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m{i}\"}}\n",
            "x".repeat(100),
            "word ".repeat(100)
        ));
    }
    text.push_str("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    write(&input, text.as_bytes());
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let mut caught_mid_write = false;
        for attempt in 0..20 {
            let out = dir.path().join(format!("out-{signal}-{attempt}"));
            std::fs::create_dir(&out).unwrap();
            let page = out.join("page.html");
            let child = Child::spawn(&["inspect", s(&input), "--html", s(&page)], None);
            // The temp file beside the page exists only while the page is made and written.
            let started = std::time::Instant::now();
            while files_under(&out).is_empty() {
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(60),
                    "no page was begun"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            child.signal(libc::SIGSTOP);
            let frozen_mid_write = !page.exists() && !files_under(&out).is_empty();
            child.signal(signal);
            child.signal(libc::SIGCONT);
            let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(30));
            let left = files_under(&out);
            if frozen_mid_write {
                assert_eq!(exit, code, "{stdout}\n{stderr}");
                if left.is_empty() {
                    assert!(stderr.contains("stopped by"), "{stderr}");
                    caught_mid_write = true;
                    break;
                }
                // Frozen after the last byte (while the page was synced and renamed): the
                // whole page is put in place, and the exit status still names the signal.
            }
            // Too late: whatever is left is the whole page, never a temp file.
            assert_eq!(left, vec![PathBuf::from("page.html")], "{stderr}");
            let written = std::fs::read_to_string(&page).unwrap();
            assert!(written.trim_end().ends_with("</html>"), "{stderr}");
        }
        assert!(
            caught_mid_write,
            "no attempt was stopped while the page was made"
        );
    }
}

/// Item 9: one large event does not take twenty times its size. A STATE_DELTA of about 1.3
/// million `replace` operations, just under the default 64 MiB line cap, goes through every
/// command that reads a stream in under 512 MiB, and is not refused.
#[test]
fn one_large_patch_stays_under_512_mib_in_every_command() {
    use crate::hostile::run_measured;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large-patch.jsonl");
    let mut text = String::from(
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\
         {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"items\":[",
    );
    text.push_str(
        &(0..100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    text.push_str("]}}\n{\"type\":\"STATE_DELTA\",\"delta\":[");
    let ops = 1_270_000u64;
    for i in 0..ops {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            "{{\"op\":\"replace\",\"path\":\"/items/{}\",\"value\":{i}}}",
            i % 100
        ));
    }
    text.push_str("]}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    let line = text.lines().nth(2).unwrap().len();
    assert!(line < 64 << 20 && line > 60 << 20, "{line} bytes");
    write(&path, text.as_bytes());
    drop(text);
    let out = |name: &str| dir.path().join(name);
    let commands: Vec<Vec<String>> = vec![
        vec!["check".into(), s(&path).into()],
        vec!["fold".into(), s(&path).into()],
        vec![
            "compact".into(),
            s(&path).into(),
            "-o".into(),
            s(&out("compacted.jsonl")).into(),
        ],
        vec!["inspect".into(), s(&path).into()],
        vec!["inspect".into(), "--stats".into(), s(&path).into()],
        vec![
            "inspect".into(),
            s(&path).into(),
            "--html".into(),
            s(&out("report.html")).into(),
        ],
        vec![
            "cat".into(),
            s(&path).into(),
            "-o".into(),
            s(&out("copy.sse")).into(),
        ],
        vec!["diff".into(), s(&path).into(), s(&path).into()],
        vec![
            "snapshot".into(),
            s(&path).into(),
            "--expect".into(),
            s(&out("large.snap")).into(),
        ],
    ];
    // Each command alone is measured; three run at a time.
    let ran: Vec<_> = commands
        .chunks(3)
        .flat_map(|group| {
            let handles: Vec<_> = group
                .iter()
                .map(|args| {
                    let args = args.clone();
                    std::thread::spawn(move || {
                        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                        let ran = run_measured(&refs, Duration::from_secs(300));
                        (args, ran)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    for (args, ran) in &ran {
        eprintln!("{args:?}: {:.0} MiB", ran.peak_rss_mib);
    }
    for (args, ran) in ran {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(
            ran.code == 0 || (args[0] == "snapshot" && ran.code == 1),
            "{args:?}: {}\n{}",
            ran.stdout,
            ran.stderr
        );
        assert!(
            ran.peak_mib() < 512.0,
            "{args:?}: {:.0} MiB",
            ran.peak_rss_mib
        );
        if args[0] == "fold" {
            // The last replace of each item is the state's value there.
            let folded: Value = serde_json::from_str(&ran.stdout).unwrap();
            let items = folded["state"]["items"].as_array().unwrap();
            assert_eq!(items.len(), 100);
            assert_eq!(items[7], ops - 100 + 7);
        }
    }
}

/// Item 9: reading a patch's operations as text (as a large one is read) changes no verdict,
/// no fold and no compaction: every fixture that holds a patch gives the same output both
/// ways (`AGUI_LENS_LARGE_PATCH=1` reads every patch as text).
#[test]
fn patches_read_as_text_give_the_same_results() {
    let mut compared = 0;
    for dir in [
        "fixtures/valid",
        "fixtures/invalid",
        "fixtures/recordings",
        "fixtures/inspect",
    ] {
        for fixture in crate::common::fixture_files(dir) {
            let path = root().join(&fixture);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if !text.contains("STATE_DELTA") && !text.contains("ACTIVITY_DELTA") {
                continue;
            }
            let extra = crate::common::fixture_args(&fixture);
            for command in [
                vec!["check", "--format", "json"],
                vec!["fold", "--compact"],
                vec!["compact"],
                vec!["inspect", "--format", "json"],
            ] {
                let mut args: Vec<&str> = command.clone();
                args.extend(extra.iter().map(String::as_str));
                args.push(s(&path));
                let normal =
                    crate::common::split(crate::common::agui_lens().args(&args).output().unwrap());
                let as_text = crate::common::split(
                    crate::common::agui_lens()
                        .args(&args)
                        .env("AGUI_LENS_LARGE_PATCH", "1")
                        .output()
                        .unwrap(),
                );
                assert_eq!(normal, as_text, "{args:?}");
                compared += 1;
            }
        }
    }
    assert!(compared > 40, "only {compared} compared");
}

/// Item 5: in `test`, a case that expects a stream and gets a 2xx body with no AG-UI events
/// fails, whatever the rule levels say about the stream's own findings.
#[test]
fn a_suite_case_that_gets_no_stream_fails() {
    use crate::common::server::{Script, Server};
    let server = Server::routes(vec![
        (
            "/error",
            Script::fixed(
                "200 OK",
                "text/event-stream",
                "{\"error\":\"the model is overloaded\"}",
            ),
        ),
        ("/empty", Script::fixed("200 OK", "text/event-stream", "")),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    write(
        &suite,
        format!(
            "[[case]]\nname = \"error body\"\nurl = \"{}\"\nmessage = \"hi\"\nallow = [\"framing/*\", \"transport/*\", \"lifecycle/*\"]\n\n\
             [[case]]\nname = \"empty\"\nurl = \"{}\"\nmessage = \"hi\"\nallow = [\"framing/*\"]\n",
            server.url("/error"),
            server.url("/empty")
        )
        .as_bytes(),
    );
    let (code, stdout, stderr) = run(&["test", s(&suite), "--format", "json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    for case in doc["cases"].as_array().unwrap() {
        assert_eq!(case["passed"], false, "{case}");
        assert!(
            case["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["rule"] == "suite/no-stream"),
            "{case}"
        );
    }
}

/// A file that is not what its name says is read by what it holds: a JSON array named `.sse`,
/// an SSE capture named `.jsonl`, JSONL named `.sse` fold and check as they do under their
/// own names.
#[test]
fn a_stream_under_another_format_s_name_is_read_by_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = std::fs::read_to_string(recording("agui-sdk-full.jsonl")).unwrap();
    let lines: Vec<&str> = jsonl.lines().collect();
    let sse: String = lines.iter().map(|l| format!("data: {l}\n\n")).collect();
    let array = format!("[\n{}\n]\n", lines.join(",\n"));
    let one_line = format!("[{}]\n", lines.join(","));
    let reference = dir.path().join("reference.jsonl");
    write(&reference, jsonl.as_bytes());
    for (name, content) in [
        ("array.sse", array.as_str()),
        ("capture.jsonl", sse.as_str()),
        ("lines.sse", jsonl.as_str()),
        ("array.jsonl", array.as_str()),
        ("one-line.jsonl", one_line.as_str()),
    ] {
        let path = dir.path().join(name);
        write(&path, content.as_bytes());
        assert_eq!(fold(&path), fold(&reference), "{name}");
        let (code, stdout, _) = run(&["check", s(&path)]);
        assert_eq!(code, 0, "{name}: {stdout}");
    }
}

/// A file of no events is judged the same whatever its length: one `framing/no-events` when
/// named, skipped on a walk when it is plainly no capture (our own `--format jsonl` report
/// kept beside the captures). Past the first 32 frames, such findings were once let out one
/// by one, so a long report in a checked folder failed it with an error per line. A stream
/// that opens with more junk than that still has every junk line reported, in every format.
#[test]
fn a_long_file_of_no_events_is_judged_as_a_short_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("captures");
    place("pydantic-ai-full.jsonl", &root.join("run.jsonl"));
    let finding = |n: usize| {
        format!(
            "{{\"rule\":\"lifecycle/unterminated-run\",\"severity\":\"error\",\"path\":\"x.jsonl\",\"line\":{n},\"message\":\"m\"}}\n"
        )
    };
    let report: String = (1..=40).map(finding).collect();
    write(&root.join("report.jsonl"), report.as_bytes());
    let log: String = (1..=40).map(|n| format!("step {n} done\n")).collect();
    write(&root.join("log.jsonl"), log.as_bytes());
    let mut late = log.clone().into_bytes();
    late.extend(std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap());
    write(&root.join("late.jsonl"), &late);

    let (code, stdout, stderr) = run(&["check", s(&root), "--format", "json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let report_json: Value = serde_json::from_str(&stdout).unwrap();
    let files = report_json["files"].as_array().unwrap();
    let file = |name: &str| {
        files
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {stdout}"))
    };
    assert!(file("report.jsonl")["skipped"].is_string(), "{stdout}");
    assert_eq!(file("log.jsonl")["errors"], 1, "{stdout}");
    assert_eq!(file("late.jsonl")["errors"], 40, "{stdout}");
    assert_eq!(file("run.jsonl")["errors"], 0, "{stdout}");
    let rules = |name: &str| -> Vec<String> {
        report_json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["path"].as_str().unwrap().ends_with(name))
            .map(|d| d["rule"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(rules("report.jsonl"), Vec::<String>::new());
    assert_eq!(rules("log.jsonl"), ["framing/no-events"]);
    assert_eq!(rules("late.jsonl"), vec!["framing/invalid-json"; 40]);

    // Every format says the same: 41 errors, none of them in the report.
    for format in ["human", "jsonl", "github", "junit"] {
        let (code, stdout, stderr) = run(&["check", s(&root), "--format", format]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        assert!(
            !stdout.contains("schema/missing-type"),
            "{format}: {stdout}"
        );
        assert!(stdout.contains("framing/no-events"), "{format}: {stdout}");
    }
    let (_, stdout, _) = run(&["check", s(&root), "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 41, "{stdout}");
    assert!(
        results.iter().any(|r| r["ruleId"] == "framing/no-events")
            && results.iter().all(|r| r["ruleId"] != "schema/missing-type"),
        "{stdout}"
    );

    // Named, the report is no stream, said once; the count covers every line.
    let (code, stdout, stderr) = run(&["check", s(&root.join("report.jsonl"))]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout.matches("error[").count(), 1, "{stdout}");
    assert!(
        stdout.contains("(40 frames could not be read as events)"),
        "{stdout}"
    );
    let (code, stdout, stderr) = run(&["check", s(&root.join("log.jsonl"))]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout.matches("error[").count(), 1, "{stdout}");
    assert!(
        stdout.contains("(40 frames could not be read as events)"),
        "{stdout}"
    );
}

/// Stopped by SIGTERM, `check` begins no input after the stop, a recording's findings and
/// failures included: those used to be read and reported whole after the stop, as if the
/// run had reached them. The inputs after the stream being read sit in the run's next group
/// of parallel work, so none of them began before the signal.
#[test]
fn a_stopped_check_reads_no_recording_after_the_stop() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.jsonl");
    make_fifo(&fifo);
    // The same width of parallel work as `check`'s: twice the pool's threads.
    let width = 2 * std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut args = vec!["check".to_owned(), "--format".into(), "json".into()];
    args.push(s(&fifo).to_owned());
    for n in 1..width {
        let small = dir.path().join(format!("small-{n}.jsonl"));
        place("pydantic-ai-text.jsonl", &small);
        args.push(s(&small).to_owned());
    }
    let exchange = dir.path().join("rec/001");
    write(
        &exchange.join("request.json"),
        br#"{"threadId":"t","runId":"r","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#,
    );
    write(&exchange.join("response.raw"), b"HTTP/1.1 422\r\n\r\nno\n");
    write(
        &exchange.join("findings.jsonl"),
        b"{\"rule\":\"transport/http-status\",\"severity\":\"error\",\"path\":\"rec/001/response.raw\",\"message\":\"the agent answered 422\"}\n",
    );
    write(
        &dir.path().join("rec/002/failure.txt"),
        b"could not connect\n",
    );
    write(&dir.path().join("rec/002/request.json"), b"{}\n");
    let findings = exchange.join("findings.jsonl");
    let failure = dir.path().join("rec/002/failure.txt");
    args.push(s(&findings).to_owned());
    args.push(s(&failure).to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = Child::spawn(&args, None);
    let stream = std::fs::read(recording("pydantic-ai-full.jsonl")).unwrap();
    feed_in_halves(&fifo, &stream, || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        child.signal(libc::SIGTERM);
    });
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    for recorded in [&findings, &failure] {
        let file = report["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == s(recorded))
            .unwrap_or_else(|| panic!("{} in {stdout}", recorded.display()));
        assert_eq!(file["interrupted"], true, "{stdout}");
        assert_eq!(file["errors"], 0, "{stdout}");
    }
    let rules: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(!rules.contains(&"transport/http-status"), "{stdout}");
}

/// `snapshot accept` replaces only a snapshot: a file of anything else keeps its bytes and
/// the pending one stays, as `--update` refuses to write over such a file. It used to put the
/// pending snapshot in place of the user's notes.
#[test]
fn accepting_never_writes_over_a_file_that_is_no_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made.snap");
    let stream = recording("pydantic-ai-full.jsonl");
    let (code, _, stderr) = run(&["snapshot", s(&stream), "--expect", s(&made), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let notes = dir.path().join("notes.txt");
    write(&notes, b"my notes\n");
    let pending = dir.path().join("notes.txt.new");
    std::fs::copy(&made, &pending).unwrap();
    let (code, _, stderr) = run(&["snapshot", s(&stream), "--expect", s(&notes), "--update"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = run(&["snapshot", "accept", s(&notes)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is no agui-lens snapshot"), "{stderr}");
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes\n");
    assert!(pending.exists());
    // A snapshot, or no file at all, is replaced as before.
    std::fs::remove_file(&notes).unwrap();
    let (code, _, stderr) = run(&["snapshot", "accept", s(&notes)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(&notes).unwrap(),
        std::fs::read(&made).unwrap()
    );
}

/// No output is written over a file the command reads: the stream `snapshot` holds (by
/// `--expect`, or its pending `FILE.new`, through a link too), the settings `inspect` reads
/// (`--config`, the `agui-lens.toml` it found, a `--capabilities` file). Each is refused,
/// exit 2, the file unchanged.
#[test]
fn no_output_replaces_what_the_command_reads() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let stream = dir.join("rec.jsonl");
    place("agui-sdk-full.jsonl", &stream);
    let refused = |args: &[&str], file: &Path| {
        let before = std::fs::read(file).unwrap();
        let output = crate::common::agui_lens()
            .current_dir(dir)
            .args(args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let (code, stdout, stderr) = crate::common::split(output);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("is an input"), "{args:?}: {stderr}");
        assert!(
            std::fs::read(file).unwrap() == before,
            "{args:?} wrote over it"
        );
    };

    std::fs::create_dir(dir.join("snaps")).unwrap();
    std::os::unix::fs::symlink("../rec.jsonl", dir.join("snaps/x.snap.new")).unwrap();
    refused(
        &["snapshot", "rec.jsonl", "--expect", "snaps/x.snap"],
        &stream,
    );
    let pending = dir.join("e.snap.new");
    std::fs::copy(&stream, &pending).unwrap();
    refused(&["snapshot", "e.snap.new", "--expect", "e.snap"], &pending);
    refused(
        &["snapshot", "rec.jsonl", "--expect", "rec.jsonl", "--update"],
        &stream,
    );

    let config = dir.join("agui-lens.toml");
    write(&config, b"[rules]\n\"order/*\" = \"allow\"\n");
    refused(
        &["inspect", "rec.jsonl", "--html", "agui-lens.toml"],
        &config,
    );
    let named = dir.join("cfg.toml");
    write(&named, b"[rules]\n");
    refused(
        &[
            "inspect",
            "rec.jsonl",
            "--config",
            "cfg.toml",
            "--html",
            "cfg.toml",
        ],
        &named,
    );
    let caps = dir.join("caps.json");
    write(&caps, br#"{"capabilities":{}}"#);
    refused(
        &[
            "inspect",
            "rec.jsonl",
            "--capabilities",
            "caps.json",
            "--html",
            "caps.json",
        ],
        &caps,
    );
    // The servers' reports, written when they stop: refused before they start.
    refused(
        &["serve", "rec.jsonl", "--once", "--report", "agui-lens.toml"],
        &config,
    );
    refused(
        &[
            "proxy",
            "--upstream",
            "http://127.0.0.1:9/",
            "--once",
            "--report",
            "cfg.toml",
            "--config",
            "cfg.toml",
        ],
        &named,
    );
}

/// A folder that holds a stream and a link to it (in the same folder) holds one stream:
/// `check` reads it once, as it reads a path named twice once; its findings are not counted
/// twice.
#[test]
fn a_link_to_a_file_of_the_walk_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("runs");
    place("agui-sdk-full.jsonl", &folder.join("a.jsonl"));
    std::os::unix::fs::symlink("a.jsonl", folder.join("b.jsonl")).unwrap();
    let (code, stdout, stderr) = run(&["check", s(&folder), "--format", "json"]);
    assert!(code == 0 || code == 1, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["files"].as_array().unwrap().len(), 1, "{stdout}");
    // Named twice, once by its link: read once too.
    let (_, stdout, _) = run(&[
        "check",
        s(&folder.join("a.jsonl")),
        s(&folder.join("b.jsonl")),
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["files"].as_array().unwrap().len(), 1, "{stdout}");
}

/// Under `--deny-warnings` a warning fails the run, so every report says it failed: it is an
/// error in JUnit (a `<failure>`), SARIF (level `error`), JSON and GitHub, not a warning
/// beside exit status 1 (the JUnit report was all green).
#[test]
fn denied_warnings_fail_in_every_format() {
    let fixture = root().join("fixtures/invalid/tool-args/undeclared-tool.jsonl");
    let fixture = s(&fixture);
    let (code, _, _) = run(&["check", fixture, "--format", "json"]);
    assert_eq!(code, 0, "a warning alone passes");
    for format in ["human", "json", "sarif", "github", "junit"] {
        let (code, stdout, stderr) =
            run(&["check", "--deny-warnings", fixture, "--format", format]);
        assert_eq!(code, 1, "{format}: {stderr}");
        let failed = match format {
            "junit" => stdout.contains("<failure"),
            "sarif" => stdout.contains("\"level\": \"error\""),
            "json" => {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                doc["summary"]["errors"].as_u64() > Some(0)
            }
            "github" => stdout.contains("::error"),
            _ => stdout.contains("error[tool-args/undeclared-tool]"),
        };
        assert!(failed, "{format}: {stdout}");
    }
}

/// A FIFO that no writer has opened yet blocks its reader in `open`: Ctrl-C there used to be
/// held until a writer came (the process never ended). It now ends the run as any stop does,
/// the input marked interrupted.
#[test]
fn a_stop_is_seen_while_a_fifo_waits_for_its_writer() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("pipe.jsonl");
    crate::common::make_fifo(&pipe);
    let mut child = Child::spawn(&["check", s(&pipe), "--format", "json"], None);
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.signal(libc::SIGINT);
    let started = std::time::Instant::now();
    while child.child.try_wait().unwrap().is_none() {
        if started.elapsed().as_secs() >= 10 {
            // Let the stuck reader go (a writer comes and leaves) before failing.
            drop(std::fs::OpenOptions::new().write(true).open(&pipe));
            let _ = child.child.kill();
            panic!("Ctrl-C did not stop a check waiting for a FIFO's writer");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(5));
    assert_eq!(exit, 130, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["files"][0]["interrupted"], true, "{doc}");
}

/// On a folder walk, a file passed over as "no capture" must plainly be none (a sidecar, a
/// report). A stream none of whose lines could be read (each over `--max-line`), or whose
/// events carry their type under another key, is a broken capture: reported, in every
/// format, not skipped into a green run. A sidecar beside them is still passed over.
#[test]
fn a_walk_skips_no_broken_stream_as_a_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir_all(&caps).unwrap();
    let events: Vec<Value> =
        std::fs::read_to_string(root().join("fixtures/valid/agui-sdk-full.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    // Few lines: held while no event has been read, then let go as findings of no stream.
    let padded: String = events[..3]
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e["rawEvent"] = "x".repeat(300).into();
            format!("{e}\n")
        })
        .collect();
    write(&caps.join("big.jsonl"), padded.as_bytes());
    let renamed: String = events
        .iter()
        .map(|e| {
            let mut e = e.as_object().unwrap().clone();
            let ty = e.remove("type").unwrap();
            e.insert("eventType".into(), ty);
            format!("{}\n", Value::Object(e))
        })
        .collect();
    write(&caps.join("renamed.jsonl"), renamed.as_bytes());
    write(
        &caps.join("run.meta.json"),
        br#"{"threadId":"thread-1","runId":"run-full-1","recordedBy":"ci"}"#,
    );
    // An agent that answered with a bare JSON body, saved under a stream's name: no sidecar
    // is named so, so it is a capture that holds no stream.
    let bare = [
        ("ok.jsonl", &br#"{"status":"ok"}"#[..]),
        ("list.ndjson", b"[]\n"),
        ("null.sse", b"null\n"),
        ("empty.jsonl.gz", &gzip(b"{}\n")),
    ];
    for (name, bytes) in bare {
        write(&caps.join(name), bytes);
    }
    for format in ["human", "json", "sarif", "junit", "github"] {
        let (code, stdout, stderr) =
            run(&["check", s(&caps), "--max-line", "300", "--format", format]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        for name in ["big.jsonl", "renamed.jsonl"] {
            assert!(stdout.contains(name), "{format}: {name}: {stdout}");
        }
        for (name, _) in bare {
            assert!(stdout.contains(name), "{format}: {name}: {stdout}");
        }
    }
    let (_, json, _) = run(&["check", s(&caps), "--max-line", "300", "--format", "json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    // The sidecar alone is skipped.
    assert_eq!(json["summary"]["skipped"], 1, "{json}");
    for (name, _) in bare {
        assert!(
            json["diagnostics"].as_array().unwrap().iter().any(|d| {
                d["rule"] == "framing/no-events" && d["path"].as_str().unwrap().ends_with(name)
            }),
            "{name}: {json}"
        );
    }
    let (_, stdout, _) = run(&["check", s(&caps), "--max-line", "300"]);
    assert!(stdout.contains("framing/line-too-long"), "{stdout}");
    assert!(stdout.contains("`eventType`"), "{stdout}");
}

/// One Ctrl-C lets the files under way finish; when that reads every input to its end, the
/// run was still stopped, and every format says so, not only the exit status (JSON, SARIF and
/// JUnit did; the terminal's summary, GitHub's annotations and JSON Lines did not).
#[test]
fn a_run_stopped_after_its_inputs_were_read_says_so_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (big, _) = long_history(dir.path());
    for (format, said) in [
        ("human", "stopped by SIGINT"),
        ("github", "::error title=agui-lens::stopped by SIGINT"),
        ("jsonl", r#"{"stopped_by":"SIGINT"}"#),
    ] {
        let child = Child::spawn(&["check", s(&big), "--format", format], None);
        child.wait_until_open(&big);
        std::thread::sleep(std::time::Duration::from_millis(100));
        child.signal(libc::SIGINT);
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(120));
        assert_eq!(exit, 130, "{format}: {stderr}");
        assert!(stdout.contains(said), "{format}: {stdout}");
    }
}

/// A walk reads what ignore files, `--exclude` and hiding leave in, as ripgrep does; what they
/// leave out of a folder (even a `.gitignore` above it) is counted, not passed over in
/// silence: a gate over `captures/` can see that it checked less than the folder holds.
#[test]
fn a_walk_says_how_many_stream_files_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir_all(caps.join("sub")).unwrap();
    std::fs::create_dir_all(caps.join(".hidden")).unwrap();
    let stream = std::fs::read(root().join("fixtures/valid/agui-sdk-full.jsonl")).unwrap();
    for name in [
        "good.jsonl",
        "sub/bad.jsonl",
        ".hidden/h.jsonl",
        "notes.txt",
    ] {
        write(&caps.join(name), &stream);
    }
    write(&dir.path().join(".gitignore"), b"bad.jsonl\n");
    let (code, stdout, stderr) = run(&["check", s(&caps)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("2 stream files were left out"), "{stderr}");
    let (code, _, stderr) = run(&["check", s(&caps), "--hidden", "--no-ignore"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("left out"), "{stderr}");
}

/// Allowing `framing/no-events` (or the whole `framing/*` family, to quiet another framing
/// rule) does not make an input with no events a checked stream: a saved error page is
/// passed over as no capture, said so, never "ok"; when every input is such, nothing was
/// checked, and the run fails.
#[test]
fn an_allowed_no_events_never_makes_an_error_page_ok() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("error.sse");
    write(
        &page,
        b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>\n",
    );
    let good = root().join("fixtures/valid/agui-sdk-full.jsonl");
    for allow in ["framing/no-events", "framing/*"] {
        let (code, stdout, stderr) = run(&["check", s(&page), "--allow", allow]);
        assert_eq!(code, 2, "{allow}: {stdout}{stderr}");
        let (code, stdout, stderr) = run(&["check", s(&page), s(&good), "--allow", allow]);
        assert_eq!(code, 0, "{allow}: {stdout}{stderr}");
        assert!(stdout.contains("1 skipped"), "{allow}: {stdout}");
        let (_, stdout, _) = run(&[
            "check",
            s(&page),
            s(&good),
            "--allow",
            allow,
            "--format",
            "junit",
        ]);
        assert!(stdout.contains("<skipped"), "{allow}: {stdout}");
    }
}

/// `framing/no-events` made a warning or a note (`--warn`, a config) says what an input with
/// no event holds, but such an input was not checked either: when no input of the run held
/// an event, the run fails in every format, as when the rule is allowed. Beside a stream
/// that was checked, it is a warning, as asked.
#[test]
fn a_demoted_no_events_never_makes_an_empty_run_pass() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    write(&empty, b"");
    let page = dir.path().join("error.sse");
    write(&page, b"<html><body>502 Bad Gateway</body></html>\n");
    let config = dir.path().join("agui-lens.toml");
    write(&config, b"[rules]\n\"framing/no-events\" = \"note\"\n");
    let good = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let demoted: [&[&str]; 2] = [&["--warn", "framing/no-events"], &["--config", s(&config)]];
    for how in demoted {
        for inputs in [vec![s(&empty)], vec![s(&empty), s(&page)]] {
            for format in ["human", "json", "sarif", "github", "junit"] {
                let mut args = vec!["check", "--format", format];
                args.extend(&inputs);
                args.extend(how);
                let (code, stdout, stderr) = run(&args);
                assert_eq!(code, 2, "{how:?} {inputs:?} {format}: {stdout}{stderr}");
                assert!(stderr.contains("nothing was checked"), "{stderr}");
                if format == "sarif" {
                    let sarif: Value = serde_json::from_str(&stdout).unwrap();
                    let invocation = &sarif["runs"][0]["invocations"][0];
                    assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
                }
            }
        }
        let mut args = vec!["check", s(&empty), s(&good)];
        args.extend(how);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{how:?}: {stdout}{stderr}");
        assert!(stdout.contains("framing/no-events"), "{stdout}");
    }
}

/// An input that could not be read (a missing file, a capture's failed call) is a result in
/// SARIF, not only a notification: a code-scanning dashboard shows results alone, so there
/// it vanished, where every other format names it.
#[test]
fn an_input_not_read_is_a_sarif_result() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let good = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let (code, stdout, _) = run(&["check", s(&missing), s(&good), "--format", "sarif"]);
    assert_eq!(code, 2);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let run = &sarif["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{stdout}");
    let result = &results[0];
    assert_eq!(result["ruleId"], "agui-lens/input-not-read", "{result}");
    assert_eq!(result["level"], "error");
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(
        run["tool"]["driver"]["rules"][index]["id"],
        "agui-lens/input-not-read"
    );
    assert!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("missing.jsonl"),
        "{result}"
    );
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
}

/// A history that takes a check a while: 10,000 copies of a recording, run ids renamed. Its
/// path, and how many events it holds.
fn long_history(dir: &Path) -> (PathBuf, usize) {
    let big = dir.join("big.jsonl");
    let one = std::fs::read_to_string(root().join("fixtures/valid/agui-sdk-full.jsonl")).unwrap();
    let runs = 10_000;
    let mut text = String::new();
    for run in 0..runs {
        text.push_str(&one.replace("run-full-1", &format!("run-{run}")));
    }
    write(&big, text.as_bytes());
    (big, one.lines().count() * runs)
}

/// An output named over a file the command did not make is refused, and the file is left as
/// it was: a note, a config, a browser capture under `compact -o` or `cat -o`, a recording
/// under `inspect --html`. A file of what the command writes (a stream for a stream, a page
/// for a page), an empty one, or a new name is written.
#[test]
fn an_output_never_replaces_a_file_the_command_did_not_make() {
    let dir = tempfile::tempdir().unwrap();
    let stream = recording("agui-sdk-full.jsonl");
    let notes = dir.path().join("notes.txt");
    write(&notes, b"my precious notes\n");
    let config = dir.path().join("cfg.json");
    write(&config, b"{\"deploy\": true}\n");
    let kept = dir.path().join("kept.jsonl");
    place("agui-sdk-interrupt.jsonl", &kept);
    let page = dir.path().join("report.html");
    let (code, _, stderr) = run(&["inspect", s(&stream), "--html", s(&page)]);
    assert_eq!(code, 0, "{stderr}");
    // A page of the user's whose title starts as ours does is not ours.
    let blog = dir.path().join("blog.html");
    write(
        &blog,
        b"<!doctype html>\n<html><head><title>agui-lens inspect: my write-up</title></head>\
          <body>Weeks of notes</body></html>\n",
    );
    let refused: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["inspect", s(&stream), "--html", s(&blog)], &blog),
        (vec!["compact", s(&stream), "-o", s(&notes)], &notes),
        (vec!["compact", s(&stream), "-o", s(&config)], &config),
        (
            vec![
                "cat",
                s(&stream),
                "--output-format",
                "jsonl",
                "-o",
                s(&notes),
            ],
            &notes,
        ),
        (vec!["cat", s(&stream), "-o", s(&config)], &config),
        (vec!["inspect", s(&stream), "--html", s(&kept)], &kept),
        (vec!["inspect", s(&stream), "--html", s(&notes)], &notes),
    ];
    for (args, target) in refused {
        let before = untouched(target);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("it was left as it was") && stderr.contains(s(target)),
            "{args:?}: {stderr}"
        );
        assert_eq!(untouched(target), before, "{args:?}");
    }
    // What the command made, an empty file, a new name: written.
    let empty = dir.path().join("empty.jsonl");
    write(&empty, b"");
    let new = dir.path().join("new.jsonl");
    for args in [
        vec!["compact", s(&stream), "-o", s(&kept)],
        vec!["cat", s(&stream), "-o", s(&kept)],
        vec!["compact", s(&stream), "-o", s(&empty)],
        vec!["cat", s(&stream), "-o", s(&new)],
        vec!["inspect", s(&stream), "--html", s(&page)],
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
    assert!(std::fs::metadata(&empty).unwrap().len() > 0);
}

/// A folder named on the command line that holds no stream file stopped the run before any
/// report: every format wrote nothing (a 0-byte SARIF for the upload step), and the files
/// named beside it were in no report. It is now an input that could not be read, reported
/// with the others in every format, and the run fails.
#[test]
fn an_empty_folder_is_reported_with_the_rest_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let stream = dir.path().join("run.jsonl");
    place("agui-sdk-full.jsonl", &stream);
    for format in ["human", "json", "jsonl", "sarif", "github", "junit"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, s(&empty), s(&stream)]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        // The formats that list every file name the stream read beside it (SARIF, JSON Lines
        // and GitHub annotations carry findings only).
        if matches!(format, "json" | "junit") {
            assert!(stdout.contains("run.jsonl"), "{format}: {stdout}");
        }
        assert!(
            stdout.contains("empty") || format == "human",
            "{format}: {stdout}"
        );
        if format == "sarif" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            let results = doc["runs"][0]["results"].as_array().unwrap();
            assert!(
                results
                    .iter()
                    .any(|r| r["ruleId"] == "agui-lens/input-not-read"
                        && r.to_string().contains("holds no stream files")),
                "{stdout}"
            );
            assert_eq!(
                doc["runs"][0]["invocations"][0]["executionSuccessful"],
                false
            );
        }
    }
    let (code, stdout, stderr) = run(&["check", s(&empty)]);
    assert_eq!(code, 2);
    assert!(stdout.contains("could not be read"), "{stdout}");
    assert!(stderr.contains("holds no stream files"), "{stderr}");
}

/// A case `test` was stopped in the middle of keeps its artifacts, which a later `check DIR`
/// reads: they say that the stream was cut by the stop (`cut.txt`, as the proxy writes), so
/// the run left open is not charged to the agent (`check` called it
/// `lifecycle/unterminated-run`, an error of the agent's, where `test` had not).
#[test]
fn the_artifacts_of_a_stopped_case_say_the_stop_was_not_the_agents() {
    let server = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    one_case_suite(&suite, &server.url("/"));
    let artifacts = dir.path().join("art");
    let child = Child::spawn(&["test", s(&suite), "--artifacts", s(&artifacts)], None);
    until(|| !server.requests().is_empty());
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    let turn = files_under(&artifacts);
    assert!(turn.iter().any(|p| p.ends_with("cut.txt")), "{turn:?}");
    let (code, stdout, stderr) = run(&["check", s(&artifacts)]);
    assert!(!stdout.contains("unterminated-run"), "{stdout}{stderr}");
    // Nor is the half stream passed: it was not read to its end.
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.contains("cut when it was recorded"), "{stdout}");
}

/// Writes a suite of one case, `slow`, that says "hi" to `url`.
fn one_case_suite(path: &Path, url: &str) {
    write(
        path,
        format!("[[case]]\nname = \"slow\"\nurl = \"{url}\"\nmessage = \"hi\"\n").as_bytes(),
    );
}

/// Two `test` runs into one artifacts folder at once mixed their files: a case's stream from
/// one run beside the verdict of the other, another case's files lost, both exit 0. The
/// folder is locked as `run --record`'s file is: the second run is refused before it sends
/// anything, and the first run's artifacts are its own.
#[test]
fn two_suites_at_once_do_not_share_an_artifacts_folder() {
    let server = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    one_case_suite(&suite, &server.url("/"));
    let artifacts = dir.path().join("art");
    let first = Child::spawn(&["test", s(&suite), "--artifacts", s(&artifacts)], None);
    until(|| !server.requests().is_empty());
    let (code, stdout, stderr) = run(&["test", s(&suite), "--artifacts", s(&artifacts)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("another agui-lens is writing into"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 1, "the second run sent its case");
    first.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = first.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    // Free again once the first has ended (the lock goes with the process).
    use crate::common::server::{Script, Server, Step, clean_run};
    let answering = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    one_case_suite(&suite, &answering.url("/"));
    let (code, stdout, stderr) = run(&["test", s(&suite), "--artifacts", s(&artifacts)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// A signal while `snapshot --update` writes leaves the old snapshot, and the command says
/// it updated the file exactly when it did (it wrote 22 MB in one write, heard the stop only
/// after it, and replaced the file all the same). Signalled as soon as the temp file beside
/// the snapshot is there, and later, whichever part of the writing it lands on.
#[test]
fn a_snapshot_stopped_while_it_is_written_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let mut text = String::from(
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n",
    );
    for i in 0..300_000 {
        text.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"word {i} \"}}\n"
        ));
    }
    text.push_str("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    std::fs::write(&big, text).unwrap();
    let snap = dir.path().join("target.snap");
    let old = "# agui-lens snapshot 1\n# level: events\n# ids: payloads\n# fold: runs\n{\"runId\":\"run-1\",\"threadId\":\"thread-1\",\"type\":\"RUN_STARTED\"}\n";
    let temp_there = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
    };
    let mut kept = 0;
    for delay_ms in [0u64, 0, 0, 5, 40] {
        std::fs::write(&snap, old).unwrap();
        let child = Child::spawn(
            &[
                "snapshot",
                s(&big),
                "--expect",
                s(&snap),
                "--update",
                "--level",
                "events",
            ],
            None,
        );
        let started = std::time::Instant::now();
        while !temp_there() && std::fs::read_to_string(&snap).is_ok_and(|t| t == old) {
            assert!(started.elapsed().as_secs() < 20, "never written");
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.signal(libc::SIGINT);
        let (exit, _, stderr) = child.wait(std::time::Duration::from_secs(20));
        let replaced = std::fs::read_to_string(&snap).unwrap() != old;
        // -1: ended by the signal itself, which only happens outside the writing (the file
        // was not yet begun, or already in place, whole).
        assert!(matches!(exit, 0 | 130 | -1), "exit {exit}: {stderr}");
        if exit != -1 {
            assert_eq!(
                replaced,
                stderr.contains("updated"),
                "exit {exit}: {stderr}"
            );
        }
        if exit == 130 && !replaced {
            kept += 1;
        }
        assert!(
            files_under(dir.path())
                .iter()
                .all(|p| !p.to_string_lossy().ends_with(".tmp")),
            "a temp file was left"
        );
    }
    assert!(
        kept > 0,
        "no stop while the snapshot was written left it as it was"
    );
}

/// A recorded exchange the recorder cut (`cut.txt` beside it) is cut whichever of its files
/// is named, and by `inspect` as by `check`: `check response.raw`, `inspect events.jsonl`,
/// and `check events.jsonl` beside a request that is no JSON, charged the agent with the run
/// left open (`lifecycle/unterminated-run`, exit 1) and said nothing of the cut.
#[test]
fn a_cut_recording_is_cut_whichever_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let started = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
    for (folder, request) in [
        (
            "001",
            r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#,
        ),
        ("002", "hello, not json"),
    ] {
        let exchange = dir.path().join(folder);
        std::fs::create_dir(&exchange).unwrap();
        write(&exchange.join("request.json"), request.as_bytes());
        write(
            &exchange.join("response.raw"),
            format!("data: {started}\n\n").as_bytes(),
        );
        write(
            &exchange.join("events.jsonl"),
            format!("{started}\n").as_bytes(),
        );
        write(
            &exchange.join("cut.txt"),
            b"the client went away after 1 event\n",
        );
        for file in ["response.raw", "events.jsonl"] {
            let path = exchange.join(file);
            let (code, stdout, stderr) = run(&["check", s(&path)]);
            assert_eq!(code, 2, "{folder}/{file}: {stdout}{stderr}");
            assert!(
                !stdout.contains("unterminated-run"),
                "{folder}/{file}: {stdout}"
            );
            assert!(
                format!("{stdout}{stderr}").contains("cut when it was recorded"),
                "{folder}/{file}: {stdout}{stderr}"
            );
            let (code, _, stderr) = run(&["fold", s(&path)]);
            assert_eq!(code, 0, "{stderr}");
            assert!(
                stderr.contains("cut when it was recorded"),
                "fold {folder}/{file}: {stderr}"
            );
            // Rewritten, it would no longer be what the word of its cut is about.
            let before = std::fs::read(&path).unwrap();
            let (_, _, stderr) = run(&["compact", s(&path), "--in-place"]);
            assert_eq!(
                std::fs::read(&path).unwrap(),
                before,
                "{folder}/{file}: {stderr}"
            );
            assert!(
                stderr.contains("cut when it was recorded"),
                "compact {folder}/{file}: {stderr}"
            );
            for format in ["human", "json"] {
                let (code, stdout, stderr) = run(&["inspect", s(&path), "--format", format]);
                assert_eq!(
                    code, 2,
                    "inspect {folder}/{file} {format}: {stdout}{stderr}"
                );
                assert!(
                    !stdout.contains("unterminated-run"),
                    "{folder}/{file}: {stdout}"
                );
                assert!(
                    format!("{stdout}{stderr}").contains("cut when it was recorded"),
                    "inspect {folder}/{file} {format}: {stdout}{stderr}"
                );
            }
        }
    }
}

/// A stop while `inspect` writes its view on stdout, or `fold` the folded stream (a reader
/// slower than they write: a pipe, a terminal) ends the writing and says on stderr that what stdout holds is cut short, exit
/// 130: uncaught there, the signal ended the process with nothing said, and a `> view.json`
/// was left a document cut in the middle that nothing called so.
#[test]
fn a_stop_while_inspect_writes_its_view_says_the_view_is_cut() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long.jsonl");
    let mut text = String::from(concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        "\n"
    ));
    let words = "word ".repeat(200);
    for _ in 0..2000 {
        text.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"{words}\\n\"}}\n"
        ));
    }
    write(&input, text.as_bytes());
    let inspect = |format| {
        vec![
            "inspect",
            s(&input),
            "--full",
            "--color",
            "never",
            "--format",
            format,
        ]
    };
    for (format, args, what) in [
        ("human", inspect("human"), "the view"),
        ("json", inspect("json"), "the view"),
        ("fold", vec!["fold", s(&input)], "the folded stream"),
    ] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        crate::common::with_default_signals(&mut command, None);
        let mut child = command
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read, and blocked writing a view larger than the pipe holds, which is not read.
        std::thread::sleep(std::time::Duration::from_secs(3));
        // SAFETY: a signal to the child this test started.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let mut stdout = Vec::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut stdout)
            .unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{format}: {status:?} {stderr}");
        assert!(
            stderr.contains(&format!("stopped by SIGINT while writing {what}"))
                && stderr.contains("cut short"),
            "{format}: {stderr}"
        );
        assert!(
            stdout.len() < text.len(),
            "{format}: the view was written whole"
        );
    }
}

/// A walk of recorded exchanges passes over each one's `request.json`, which the proxy (or
/// `test`) held to the request rules when it was sent: one that is no JSON (a client that
/// posted text) was read as a capture and failed as one (`framing/no-events`), findings the
/// proxy never made.
#[test]
fn a_walk_of_recordings_does_not_read_their_requests_as_captures() {
    let dir = tempfile::tempdir().unwrap();
    let exchange = dir.path().join("rec/001");
    std::fs::create_dir_all(&exchange).unwrap();
    write(&exchange.join("request.json"), b"hello, not json");
    let events = concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}"#,
        "\n",
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
        "\n"
    );
    write(&exchange.join("events.jsonl"), events.as_bytes());
    let raw: String = events.lines().map(|e| format!("data: {e}\n\n")).collect();
    write(&exchange.join("response.raw"), raw.as_bytes());
    for format in ["human", "sarif"] {
        let (code, stdout, stderr) =
            run(&["check", s(&dir.path().join("rec")), "--format", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        let found = match format {
            // (SARIF lists every rule: its results are what was found.)
            "sarif" => {
                serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["runs"][0]["results"]
                    .to_string()
            }
            _ => stdout,
        };
        assert!(!found.contains("no-events"), "{format}: {found}");
    }
    // Why it was passed over points at the findings only where there are some.
    let skipped = |dir: &Path| {
        let (_, stdout, _) = run(&["check", s(dir), "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with("request.json"))
            .unwrap()["skipped"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let said = skipped(&dir.path().join("rec"));
    assert!(said.contains("nothing was found"), "{said}");
    write(
        &exchange.join("findings.jsonl"),
        br#"{"rule":"request/input-schema","severity":"error","message":"m"}"#,
    );
    let said = skipped(&dir.path().join("rec"));
    assert!(
        said.contains("what was found is in its findings.jsonl"),
        "{said}"
    );
}

/// What a case stopped in the middle already settled is kept: its first event came after
/// `max_first_event_ms` (a failure known from then on), and it stays in every report beside
/// the stop. It was dropped with the rest of the verdict, in JSON, JUnit and findings.jsonl.
#[test]
fn a_stopped_case_keeps_the_failure_it_had_already_met() {
    use crate::common::server::{Script, Server, Step, frame};
    let head: Vec<u8> =
        frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#);
    let server = Server::start(Script::sse(vec![
        Step::Pause(std::time::Duration::from_millis(400)),
        Step::Send(head),
        Step::Hang,
    ]));
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    write(
        &suite,
        format!(
            "[[case]]\nname = \"slow start\"\nurl = \"{}\"\nmessage = \"hi\"\nmax_first_event_ms = 100\n",
            server.url("/")
        )
        .as_bytes(),
    );
    let junit = dir.path().join("ci.xml");
    let child = Child::spawn(
        &["test", s(&suite), "--format", "json", "--junit", s(&junit)],
        None,
    );
    until(|| !server.requests().is_empty());
    std::thread::sleep(std::time::Duration::from_millis(1200));
    child.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    assert!(stdout.contains("suite/first-event-slow"), "{stdout}");
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(junit.contains("suite/first-event-slow"), "{junit}");
}

/// An exchange whose recorder ended before it did (the proxy killed in the middle of a
/// stream: the body so far, no `events.jsonl`, no `cut.txt`) is read from its body by a walk:
/// it was passed over, and the folder passed beside a whole exchange.
#[test]
fn a_walk_reads_the_body_of_an_exchange_its_recorder_left_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("rec/001");
    let unfinished = dir.path().join("rec/002");
    let request = br#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#;
    let started = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}"#;
    let finished = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
    for folder in [&whole, &unfinished] {
        std::fs::create_dir_all(folder).unwrap();
        write(&folder.join("request.json"), request);
    }
    write(
        &whole.join("events.jsonl"),
        format!("{started}\n{finished}\n").as_bytes(),
    );
    write(
        &whole.join("response.raw"),
        format!("data: {started}\n\ndata: {finished}\n\n").as_bytes(),
    );
    write(
        &unfinished.join("response.raw"),
        format!("data: {started}\n\n").as_bytes(),
    );
    for format in ["human", "json", "sarif"] {
        let (code, stdout, stderr) =
            run(&["check", s(&dir.path().join("rec")), "--format", format]);
        assert_ne!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains("002/response.raw"), "{format}: {stdout}");
        assert!(stdout.contains("unterminated-run"), "{format}: {stdout}");
    }
}

/// Every exchange of a recording folder gets a verdict when its recorder ended before the
/// exchange did (the proxy killed or stopped): an error's body, an answer with nothing in it,
/// no answer at all. Beside a whole exchange they vanished from `check DIR` (exit 0), each
/// failing alone.
#[test]
fn an_exchange_its_recorder_left_without_an_end_is_never_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let request = br#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#;
    let started = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.1"}"#;
    let finished = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
    let whole = rec.join("001");
    std::fs::create_dir_all(&whole).unwrap();
    write(&whole.join("request.json"), request);
    write(
        &whole.join("events.jsonl"),
        format!("{started}\n{finished}\n").as_bytes(),
    );
    write(
        &whole.join("response.raw"),
        format!("data: {started}\n\ndata: {finished}\n\n").as_bytes(),
    );
    let cases: [(&str, Option<&[u8]>); 3] = [
        ("error body", Some(b"Internal Server Error")),
        ("nothing yet", Some(b"")),
        ("no answer", None),
    ];
    for (what, body) in cases {
        let other = rec.join("002");
        let _ = std::fs::remove_dir_all(&other);
        std::fs::create_dir_all(&other).unwrap();
        write(&other.join("request.json"), request);
        if let Some(body) = body {
            write(&other.join("response.raw"), body);
        }
        for format in ["human", "json", "sarif", "junit"] {
            let (code, stdout, stderr) = run(&["check", s(&rec), "--format", format]);
            assert_ne!(code, 0, "{what} {format}: {stdout}{stderr}");
            assert!(stdout.contains("002"), "{what} {format}: {stdout}");
        }
    }
    // A `test` turn that ended with the status its case expects, no events and no findings,
    // is whole: its verdict is beside it.
    let turn = rec.join("002");
    write(&turn.join("response.raw"), b"refused, as expected");
    write(&turn.join("outcome.json"), br#"{"passed":true}"#);
    let (code, stdout, stderr) = run(&["check", s(&rec)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// A walk reads files by their names (`*.jsonl`, `*.sse` …); one it passes over that holds
/// AG-UI events under another name (`response.raw`, `capture.log`) is named on stderr, by
/// `check` and `compact`: "checked 1 file … ok" over a folder whose failing stream was
/// saved as `.raw` said nothing of it.
#[test]
fn a_walk_names_the_streams_it_does_not_read_by_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir_all(caps.join("sub")).unwrap();
    let good = std::fs::read(root().join("fixtures/valid/agui-sdk-full.jsonl")).unwrap();
    let bad =
        std::fs::read(root().join("fixtures/invalid/lifecycle/open-at-finish.jsonl")).unwrap();
    write(&caps.join("good.jsonl"), &good);
    write(&caps.join("sub/a.raw"), &bad);
    let sse: Vec<u8> = String::from_utf8(good.clone())
        .unwrap()
        .lines()
        .map(|l| format!("data: {l}\n\n"))
        .collect::<String>()
        .into_bytes();
    write(&caps.join("capture.log"), &sse);
    write(
        &caps.join("README.md"),
        b"# captures\nThe \"type\" of each is told below.\n",
    );
    write(&caps.join("empty.txt"), b"");
    // Beside a stream of its stem, a `.raw` is its recording's body; a `.log` is not.
    write(&caps.join("good.raw"), &good);
    write(&caps.join("good.log"), &bad);
    let out = dir.path().join("out");
    for command in [&["check"][..], &["compact", "-o", s(&out)]] {
        let (code, stdout, stderr) = run(&[command, &[s(&caps)]].concat());
        let command = command[0];
        assert_eq!(code, 0, "{command}: {stdout}{stderr}");
        assert!(
            stderr.contains("3 files hold AG-UI events"),
            "{command}: {stderr}"
        );
        assert!(
            stderr.contains("a.raw") && stderr.contains("capture.log"),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("README"), "{command}: {stderr}");
        assert!(
            stderr.contains("good.log") && !stderr.contains("good.raw"),
            "{command}: {stderr}"
        );
    }
    // Named, each is read.
    let (code, stdout, stderr) = run(&["check", s(&caps.join("sub/a.raw"))]);
    assert_eq!(code, 1, "{stdout}{stderr}");
}

/// A stop while `inspect` waits for its input's first bytes (a FIFO no writer has opened, or
/// one whose writer has written nothing yet, as stdin from a slow producer) says so, exit
/// 130: the signal ended the process with nothing said, as the input was looked at before
/// signals were caught.
#[test]
fn a_stop_while_inspect_waits_for_its_input_is_said() {
    for writer in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("in.jsonl");
        crate::common::make_fifo(&fifo);
        let held = writer.then(|| {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let file = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                std::thread::sleep(std::time::Duration::from_secs(3));
                drop(file);
            })
        });
        let child = Child::spawn(&["inspect", s(&fifo)], None);
        std::thread::sleep(std::time::Duration::from_millis(400));
        child.signal(libc::SIGINT);
        let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(20));
        assert_eq!(exit, 130, "writer {writer}: {stdout}{stderr}");
        assert!(
            stderr.contains("stopped by SIGINT"),
            "writer {writer}: {stderr}"
        );
        if let Some(held) = held {
            held.join().unwrap();
        }
    }
}

/// A folder to write into that is a link leading nowhere (its target moved, a volume not
/// mounted) is said to be one: "creating rec: File exists" named nothing that `ls` shows
/// wrong.
#[test]
fn a_folder_to_write_into_that_leads_nowhere_is_said_to() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("rec");
    std::os::unix::fs::symlink(dir.path().join("moved"), &link).unwrap();
    let stream = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let other = root().join("fixtures/valid/pydantic-ai-full.jsonl");
    for args in [
        vec![
            "proxy",
            "--upstream",
            "http://127.0.0.1:9/",
            "--record",
            s(&link),
        ],
        vec!["compact", s(&stream), s(&other), "-o", s(&link)],
        vec![
            "compact",
            s(&stream),
            "-o",
            &format!("{}/sub/out.jsonl", s(&link)),
        ],
        vec![
            "run",
            "http://127.0.0.1:9/",
            "--message",
            "hi",
            "--record",
            &format!("{}/sub/run.jsonl", s(&link)),
        ],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_ne!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("is a link that leads nowhere"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("moved"), "{args:?}: {stderr}");
    }
}

/// An output file named by a link whose target's folder is not there, outside the link's own
/// folder (a stale link), or by a loop, is not written through: the target's folders were
/// made wherever the link pointed (`/nonexistent/` at the root, once), exit 0. A link to a
/// file not there yet, in a folder that is, is written through as a shell's `>` writes it,
/// the link kept.
#[test]
fn an_output_named_by_a_link_into_nothing_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("links");
    std::fs::create_dir(&links).unwrap();
    let stream = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let ghost = dir.path().join("ghost/deep/out.jsonl");
    let link = links.join("out.jsonl");
    std::os::unix::fs::symlink(&ghost, &link).unwrap();
    let junit = links.join("report.xml");
    std::os::unix::fs::symlink("../ghost/report.xml", &junit).unwrap();
    let loop_a = links.join("a.jsonl");
    std::os::unix::fs::symlink(links.join("b.jsonl"), &loop_a).unwrap();
    std::os::unix::fs::symlink(&loop_a, links.join("b.jsonl")).unwrap();
    for args in [
        vec!["compact", s(&stream), "-o", s(&link)],
        vec!["cat", s(&stream), "-o", s(&link)],
        vec!["check", s(&stream), "--junit", s(&junit)],
        vec!["cat", s(&stream), "-o", s(&loop_a)],
        vec![
            "compact",
            s(&stream),
            s(&root().join("fixtures/valid/pydantic-ai-full.jsonl")),
            "-o",
            &format!("{}/", s(&loop_a)),
        ],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_ne!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("is a link that leads nowhere"),
            "{args:?}: {stderr}"
        );
    }
    assert!(
        !dir.path().join("ghost").exists(),
        "folders were made through the link"
    );
    // Below the link's own folder, however the target is spelt, its folders are made.
    for (name, target) in [
        ("dot.jsonl", "./made/a.jsonl".to_owned()),
        ("whole.jsonl", s(&links.join("made/c.jsonl")).to_owned()),
    ] {
        let link = links.join(name);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let (code, stdout, stderr) = run(&["cat", s(&stream), "-o", s(&link)]);
        assert_eq!(code, 0, "{target}: {stdout}{stderr}");
        assert!(link.is_symlink(), "{target}");
    }
    // Except up out of a folder not there: what is at the path once it is made (a file of
    // the user's) was never checked (see `an_output_up_out_of_a_folder_not_there_…`).
    let up = links.join("up.jsonl");
    std::os::unix::fs::symlink("sub/../made/b.jsonl", &up).unwrap();
    let (code, stdout, stderr) = run(&["cat", s(&stream), "-o", s(&up)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("is not there"), "{stderr}");
    assert!(!links.join("sub").exists());
    // A path ending in `/` names a folder, not the file to write.
    let folder = format!("{}/", s(&dir.path().join("new")));
    for args in [
        vec!["cat", s(&stream), "-o", &folder, "--output-format", "jsonl"],
        vec!["check", s(&stream), "--junit", &folder],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("names a directory"), "{args:?}: {stderr}");
    }
    assert!(!dir.path().join("new").exists());
    // Into a folder that is there, the link is written through and stays a link.
    let there = dir.path().join("there.jsonl");
    let to_there = dir.path().join("to-there.jsonl");
    std::os::unix::fs::symlink(&there, &to_there).unwrap();
    let (code, stdout, stderr) = run(&["cat", s(&stream), "-o", s(&to_there)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(to_there.is_symlink() && there.is_file());
}

/// A stop while `cat` copies to stdout from an input that waits (a FIFO whose writer sent two
/// events and stalls) writes what it had copied, says the copy is cut short, exit 130: the
/// signal ended it with nothing said and nothing written.
#[test]
fn a_stop_while_cat_copies_to_stdout_says_the_copy_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.jsonl");
    crate::common::make_fifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let _ = file.write_all(
                concat!(
                    r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
                    "\n",
                    r#"{"type":"STEP_STARTED","stepName":"s"}"#,
                    "\n"
                )
                .as_bytes(),
            );
            std::thread::sleep(std::time::Duration::from_secs(3));
        })
    };
    let child = Child::spawn(&["cat", s(&fifo)], None);
    std::thread::sleep(std::time::Duration::from_millis(600));
    child.signal(libc::SIGINT);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(20));
    assert_eq!(exit, 130, "{stdout}{stderr}");
    assert!(stderr.contains("cut short"), "{stderr}");
    assert!(stdout.contains("STEP_STARTED"), "{stdout}");
    writer.join().unwrap();
}

/// `run --record DIR/` (or `--record-raw`) for a folder not there yet, or a link into
/// nothing, is refused before the call: the agent was called, and its answer lost when the
/// recording could not be made (exit 2, an empty report). So is a FIFO or a device
/// (`/dev/null`): the call was made, the recording failed with no reason given ("creating
/// /dev/null"), and files were left beside it (`/dev/null.cut.txt`).
#[test]
fn a_recording_that_cannot_be_made_is_refused_before_the_call() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("elsewhere.jsonl");
    std::os::unix::fs::symlink("/nonexistent-agui-lens/x.jsonl", &link).unwrap();
    let fifo = dir.path().join("fifo");
    make_fifo(&fifo);
    let fifo_link = dir.path().join("fifo.jsonl");
    std::os::unix::fs::symlink(&fifo, &fifo_link).unwrap();
    for (flag, path) in [
        ("--record", format!("{}/", s(&dir.path().join("new")))),
        ("--record-raw", format!("{}/", s(&dir.path().join("new")))),
        ("--record", s(&link).to_owned()),
        ("--record", s(&fifo).to_owned()),
        ("--record-raw", s(&fifo_link).to_owned()),
    ] {
        let (code, stdout, stderr) = run(&["run", &url, "--message", "hi", flag, &path]);
        assert_eq!(code, 2, "{flag} {path}: {stdout}{stderr}");
        assert!(
            stderr.contains("nothing was sent"),
            "{flag} {path}: {stderr}"
        );
    }
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "the agent was called");
    assert!(!dir.path().join("new").exists());
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(beside.len(), 3, "{beside:?}");
}

/// `runs` whole runs of one message each (in two deltas), as JSONL: a stream larger than a
/// pipe holds, compacted or not, for 2000 of them.
fn many_runs(runs: usize) -> String {
    let mut stream = String::new();
    for run in 0..runs {
        stream.push_str(&format!(
            "{{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"run-{run:05}\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m-{run:05}\",\"role\":\"assistant\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m-{run:05}\",\"delta\":\"one\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m-{run:05}\",\"delta\":\" two\"}}\n\
             {{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m-{run:05}\"}}\n\
             {{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"run-{run:05}\"}}\n"
        ));
    }
    stream
}

/// A stop while stdout is a pipe its reader stopped reading ends the command once the write
/// has waited a few seconds more (the FIFO's grace), says so, and exits with the stop's status:
/// the caught signal restarted the blocked write, and SIGTERM (twice) never ended `cat` or
/// `check`.
#[test]
fn a_stop_while_stdout_takes_no_more_ends_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("many.jsonl");
    write(&input, many_runs(4_000).as_bytes());
    // A report larger than a pipe holds: a finding for each of many events.
    let orphans = dir.path().join("orphans.jsonl");
    let mut text = String::from("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m{i}\",\"delta\":\"x\"}}\n"
        ));
    }
    write(&orphans, text.as_bytes());
    // Two streams that differ in every delta: a diff larger than a pipe holds (`diff`, and
    // `snapshot` showing how a stream differs from its expectation, died by the signal with
    // nothing said).
    let differing = |name: &str, word: &str| {
        let mut text =
            String::from("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
        for i in 0..3_000 {
            text.push_str(&format!(
                "{{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m{i}\",\"role\":\"assistant\"}}\n\
                 {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m{i}\",\"delta\":\"{word}{i}\"}}\n\
                 {{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m{i}\"}}\n"
            ));
        }
        text.push_str("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
        let path = dir.path().join(name);
        write(&path, text.as_bytes());
        path
    };
    let (a, b) = (differing("a.jsonl", "one"), differing("b.jsonl", "two"));
    let snap = dir.path().join("a.snap");
    let (code, _, stderr) = run(&["snapshot", s(&a), "--expect", s(&snap), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let lines = ["--max-lines", "1000000"];
    let diff = [&["diff", s(&a), s(&b), "--level", "events"][..], &lines].concat();
    let differs = [&["snapshot", s(&b), "--expect", s(&snap)][..], &lines].concat();
    for command in [
        &["cat", s(&input)][..],
        &["check", s(&orphans), "--format", "json"],
        &["inspect", s(&input), "--format", "json"],
        &diff,
        &differs,
    ] {
        // stdout a pipe no one reads: it fills, and the command waits on it.
        let child = Child::spawn_unread_stdout(command);
        child.wait_until_stdout_full();
        child.signal(libc::SIGTERM);
        let (code, _, said) = child.wait(std::time::Duration::from_secs(30));
        assert_eq!(code, 143, "{command:?}: {said}");
        assert!(said.contains("stdout took no more"), "{command:?}: {said}");
    }
}

/// A stop while a compacted stream goes out to a FIFO whose reader has stopped reading ends
/// the command at once, and says the output was stopped, not written: the write waited for
/// room through every signal (SIGTERM did nothing; only SIGKILL ended it, or a reader that
/// came back got the rest, and the command said it was "written whole before" the stop).
#[test]
fn a_stop_while_a_fifo_takes_no_more_ends_the_command() {
    let dir = tempfile::tempdir().unwrap();
    // Runs enough that the compacted stream is more than a pipe holds (64 KiB).
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, many_runs(2000)).unwrap();
    let fifo = dir.path().join("out.jsonl");
    make_fifo(&fifo);
    let child = Child::spawn(&["compact", s(&input), "-o", s(&fifo)], None);
    // The reader: it has the FIFO open at once, says when the pipe is full, and reads what
    // is in it once told to.
    let (full, is_full) = std::sync::mpsc::channel::<()>();
    let (go, read_now) = std::sync::mpsc::channel::<()>();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::os::fd::AsRawFd as _;
            let mut file = std::fs::File::open(fifo).unwrap();
            loop {
                let mut held: libc::c_int = 0;
                // SAFETY: FIONREAD into a local, on a descriptor this thread owns, open.
                unsafe { libc::ioctl(file.as_raw_fd(), libc::FIONREAD, &mut held) };
                if held >= 65536 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            full.send(()).unwrap();
            read_now.recv().unwrap();
            let mut written = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut written).unwrap();
            written
        })
    };
    is_full.recv().unwrap();
    child.signal(libc::SIGTERM);
    // It ends before the reader takes anything more.
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(20));
    go.send(()).unwrap();
    let written = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    let runs = written.matches("RUN_FINISHED").count();
    assert!(runs < 2000, "{runs}: {stderr}");
    assert!(
        stderr.contains("stopped by SIGTERM") && !stderr.contains("written whole"),
        "{stderr}"
    );
}

/// A line break in a file's name is written as `\n` in the terminal's report, as an escape
/// sequence in one is: the name printed raw was split over two lines of the table (one of
/// them reading `line.jsonl (7 events)  2 errors`) and of its `-->` lines.
#[test]
fn a_line_break_in_a_name_does_not_split_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir_all(&caps).unwrap();
    std::fs::copy(
        root().join("fixtures/invalid/lifecycle/unterminated-run.jsonl"),
        caps.join("new\nline.jsonl"),
    )
    .unwrap();
    place("agui-sdk-full.jsonl", &caps.join("ok.jsonl"));
    let (code, stdout, stderr) = run(&["check", s(&caps)]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("line.jsonl"))
        .collect();
    assert!(lines.len() >= 2, "{stdout}");
    for line in lines {
        assert!(line.contains("new\\nline.jsonl"), "{line:?}\n{stdout}");
    }
}

/// GitHub annotations place a finding with `file=` only where that names the file: a name
/// a log viewer would act on (an escape sequence, a bidi override) was given escaped
/// (`\u{202e}`), which names no file, and the annotation was lost. Such a name goes in the
/// message, as a non-file's does; other names keep their `file=`.
#[test]
fn github_places_no_annotation_on_an_escaped_name() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir_all(&caps).unwrap();
    let bad = root().join("fixtures/invalid/lifecycle/unterminated-run.jsonl");
    for name in [
        "bidi\u{202e}lmth.jsonl",
        "esc\u{1b}[31mred.jsonl",
        "plain.jsonl",
    ] {
        std::fs::copy(&bad, caps.join(name)).unwrap();
    }
    let (code, stdout, stderr) = run(&["check", s(&caps), "--format", "github"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let errors: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert!(errors.len() >= 3, "{stdout}");
    for line in &errors {
        let properties = line.split("::").nth(1).unwrap();
        assert!(
            !properties.contains("\\u{") && !properties.contains("\\x1b"),
            "{line}"
        );
    }
    assert!(
        errors
            .iter()
            .any(|l| l.contains("file=") && l.contains("plain.jsonl")),
        "{stdout}"
    );
    for shown in ["bidi\\u{202e}lmth.jsonl", "esc\\x1b[31mred.jsonl"] {
        assert!(
            errors
                .iter()
                .any(|l| !l.contains("file=") && l.contains(shown)),
            "{shown}: {stdout}"
        );
    }
}

/// A report agui-lens wrote, pretty-printed (`check --format json > report.jsonl`), is
/// skipped by a walk as the same report on one line is: a file's first bytes as the first
/// read brought them (`{`) said it was "a long JSON document", no sidecar, and failed a
/// clean folder.
#[test]
fn a_pretty_printed_report_in_a_walk_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    place("agui-sdk-full.jsonl", &caps.join("run.jsonl"));
    let (code, report, stderr) = run(&["check", s(&caps.join("run.jsonl")), "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.starts_with("{\n"), "{report}");
    write(&caps.join("report.jsonl"), report.as_bytes());
    let (code, stdout, stderr) = run(&["check", s(&caps)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("1 skipped"), "{stdout}");
}

/// A stored stream whose run ended in RUN_ERROR breaks no rule (it is how the protocol says a
/// run failed), but a check that says nothing of it calls a failed agent's capture clean in
/// silence. Every format says it, as `run` does of a live call; a clean stream beside it says
/// nothing of the kind.
#[test]
fn a_stored_run_that_ended_in_an_error_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let failed = dir.path().join("failed.jsonl");
    write(
        &failed,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r1"}"#,
            "\n",
            r#"{"type":"RUN_ERROR","message":"the model timed out","code":"TIMEOUT"}"#,
            "\n",
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r2"}"#,
            "\n",
            r#"{"type":"RUN_ERROR","message":"out of quota"}"#,
            "\n",
        )
        .as_bytes(),
    );
    let clean = dir.path().join("clean.jsonl");
    write(
        &clean,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r1"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}"#,
            "\n",
        )
        .as_bytes(),
    );
    let said = "2 runs ended, the last in RUN_ERROR: out of quota";
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let (code, stdout, stderr) = run(&["check", "--format", format, s(dir.path())]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert_eq!(stdout.matches(said).count(), 1, "{format}: {stdout}");
        assert!(!stdout.contains("TIMEOUT"), "{format}: {stdout}");
        if format == "json" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            let files = doc["files"].as_array().unwrap();
            let remarks = |name: &str| {
                files
                    .iter()
                    .find(|f| f["path"].as_str().unwrap().ends_with(name))
                    .unwrap()
                    .get("remarks")
                    .cloned()
            };
            assert_eq!(remarks("failed.jsonl"), Some(serde_json::json!([said])));
            assert_eq!(remarks("clean.jsonl"), None, "{stdout}");
        }
    }
    let (code, stdout, stderr) = run(&["check", s(&clean)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("RUN_ERROR"), "{stdout}");
    let (_, stdout, _) = run(&["check", s(&failed), "--format", "json"]);
    let one: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(one["files"][0]["remarks"], serde_json::json!([said]));
}

/// `snapshot` leaves its result for review in `FILE.new`: a file of the user's there (no
/// snapshot, not empty) was replaced whatever it held, though `--expect` itself refuses a file
/// that is no snapshot. It is left, named, and the run fails (exit 2), whether the
/// expectation is new or differs; a snapshot left there by an earlier run, or an empty file, is
/// replaced as before.
#[test]
fn a_users_file_at_the_pending_snapshots_place_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let stream = recording("pydantic-ai-full.jsonl");
    let other = recording("agui-sdk-full.jsonl");
    let snap = dir.path().join("x.snap");
    let pending = dir.path().join("x.snap.new");
    let mine = std::fs::read(&other).unwrap();
    // No expectation yet: the result would go to x.snap.new.
    write(&pending, &mine);
    let (code, stdout, stderr) = run(&["snapshot", s(&stream), "--expect", s(&snap)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains(s(&pending)), "{stderr}");
    assert!(stderr.contains("holds no snapshot"), "{stderr}");
    assert_eq!(std::fs::read(&pending).unwrap(), mine);
    assert!(!snap.exists());
    // An expectation the stream differs from: the same.
    let (code, _, stderr) = run(&["snapshot", s(&other), "--expect", s(&snap), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["snapshot", s(&stream), "--expect", s(&snap)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(std::fs::read(&pending).unwrap(), mine);
    // An empty file, and then the snapshot that run left, are replaced.
    write(&pending, b"");
    let (code, _, stderr) = run(&["snapshot", s(&stream), "--expect", s(&snap)]);
    assert_eq!(code, 1, "{stderr}");
    let left = std::fs::read_to_string(&pending).unwrap();
    assert!(left.starts_with("# agui-lens snapshot"), "{left}");
    let (code, _, stderr) = run(&["snapshot", s(&stream), "--expect", s(&snap)]);
    assert_eq!(code, 1, "{stderr}");
    // A link there is taken away, not written through: to a note, or into nothing.
    let notes = dir.path().join("notes.txt");
    write(&notes, b"my notes\n");
    for to in [notes.clone(), dir.path().join("nothing.txt")] {
        std::fs::remove_file(&pending).unwrap();
        std::os::unix::fs::symlink(&to, &pending).unwrap();
        let (code, _, stderr) = run(&["snapshot", s(&stream), "--expect", s(&snap)]);
        assert_eq!(code, 1, "{stderr}");
        assert!(!std::fs::symlink_metadata(&pending).unwrap().is_symlink());
        assert_eq!(std::fs::read(&notes).unwrap(), b"my notes\n");
        assert!(!dir.path().join("nothing.txt").exists());
    }
}

/// A suite stopped before it reached a case left that case's artifacts from an earlier run in
/// the folder (`outcome.json` saying it passed), beside this run's JUnit saying it was not run:
/// an archived folder showed a pass no run of it made. The case's folder now holds this run's
/// verdict alone (not run), as a turn not run does. A case `--case` leaves out keeps an
/// earlier run's artifacts, and the run says so.
#[test]
fn a_case_a_stopped_suite_did_not_reach_keeps_no_earlier_verdict() {
    use crate::common::server::{Script, Server, Step, clean_run};
    let answering = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let hanging = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    let two = |first: &str, second: &str| {
        write(
            &suite,
            format!(
                "[[case]]\nname = \"first\"\nurl = \"{first}\"\nmessage = \"hi\"\n\n\
                 [[case]]\nname = \"second\"\nurl = \"{second}\"\nmessage = \"hi\"\n"
            )
            .as_bytes(),
        );
    };
    two(&answering.url("/"), &answering.url("/"));
    let artifacts = dir.path().join("art");
    let args = [
        "test",
        s(&suite),
        "--artifacts",
        s(&artifacts),
        "--jobs",
        "1",
    ];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let second = artifacts.join("02-second/turn-1");
    let outcome = |dir: &Path| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join("outcome.json")).unwrap()).unwrap()
    };
    assert_eq!(outcome(&second)["passed"], true);
    assert!(second.join("events.jsonl").is_file());

    two(&hanging.url("/"), &answering.url("/"));
    let child = Child::spawn(&args, None);
    until(|| !hanging.requests().is_empty());
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(10));
    assert_eq!(exit, 143, "{stdout}\n{stderr}");
    let now = outcome(&second);
    assert_ne!(now["passed"], true, "{now}");
    assert!(
        now.to_string().contains("not run: interrupted by SIGTERM"),
        "{now}"
    );
    assert!(!second.join("events.jsonl").exists());

    // `--case first`: the second case's folder is an earlier run's, said to be.
    two(&answering.url("/"), &answering.url("/"));
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    let mut only = args.to_vec();
    only.extend(["--case", "first"]);
    let (code, stdout, stderr) = run(&only);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("02-second"), "{stderr}");
    assert!(stderr.contains("--case"), "{stderr}");
    assert_eq!(outcome(&second)["passed"], true);
}

/// `--junit FILE` in a place no file can be made: the run checked, printed a SARIF report
/// that called it successful, and only then failed (exit 2) naming the hidden temp file. It is
/// refused before the run, named as given, for `check` and `test` alike.
#[test]
fn a_junit_file_that_cannot_be_written_is_refused_before_the_run() {
    let junit = "/proc/agui-lens-junit.xml";
    let stream = recording("pydantic-ai-full.jsonl");
    let (code, stdout, stderr) = run(&["check", s(&stream), "--junit", junit, "--format", "sarif"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        !stdout.contains("\"executionSuccessful\": true"),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!("--junit {junit} cannot be written")),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    one_case_suite(&suite, "http://127.0.0.1:9/");
    let (code, stdout, stderr) = run(&["test", s(&suite), "--junit", junit, "--format", "sarif"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        !stdout.contains("\"executionSuccessful\": true"),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!("--junit {junit} cannot be written")),
        "{stderr}"
    );
    assert_eq!(stderr.matches("cannot be written").count(), 1, "{stderr}");
    // `--report` of the long-running commands: refused before they listen, not found out at
    // the session's end.
    let report = "/proc/agui-lens-report.json";
    let stream = stream.to_string_lossy();
    for args in [
        vec![
            "proxy",
            "--upstream",
            "http://127.0.0.1:9/",
            "--report",
            report,
        ],
        vec!["serve", &stream, "--report", report],
    ] {
        let output = crate::common::agui_lens()
            .args(&args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let (code, stdout, stderr) = crate::common::split(output);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("--report {report} cannot be written")),
            "{args:?}: {stderr}"
        );
    }
}

/// Every command that writes a file names it when the write fails part way (a full disk):
/// `cat -o` said only "No space left on device". Nothing is left behind.
#[test]
fn a_write_that_fails_part_way_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let mut text = String::from("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    text.push_str("{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"word {i} \"}}\n"
        ));
    }
    text.push_str("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n");
    text.push_str("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    write(&big, text.as_bytes());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for (name, args) in [
        ("copy.sse", vec!["cat", s(&big), "-o"]),
        ("copy.jsonl", vec!["compact", s(&big), "--no-verify", "-o"]),
        ("page.html", vec!["inspect", s(&big), "--html"]),
    ] {
        let target = out.join(name);
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        command.args(&args).arg(&target);
        crate::common::with_file_size_limit(&mut command, 4096);
        let (code, stdout, stderr) = crate::common::split(command.output().unwrap());
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("writing {}", target.display())),
            "{args:?}: {stderr}"
        );
        assert_eq!(files_under(&out), Vec::<PathBuf>::new(), "{args:?}");
    }
}

/// With the framing rules allowed (`"framing/*" = "allow"` in agui-lens.toml), a line that is
/// no JSON left no trace in the human or SARIF report: "0 errors", exit 0, as if the stream
/// were whole. The rule stays allowed (no finding, exit 0), but every format remarks how many
/// frames were not read as events.
#[test]
fn frames_left_unread_under_an_allowed_rule_are_said() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("agui-lens.toml"),
        b"[rules]\n\"framing/*\" = \"allow\"\n",
    );
    let stream = dir.path().join("trunc.jsonl");
    write(
        &stream,
        b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{\"type\":\"TEXT_MESS\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
    );
    let said = "1 frame was not read as an event";
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let output = crate::common::agui_lens()
            .current_dir(dir.path())
            .args(["check", "trunc.jsonl", "--format", format])
            .output()
            .unwrap();
        let (code, stdout, stderr) = crate::common::split(output);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(said), "{format}: {stdout}");
    }
    // With the rule on, the finding says it, and no remark repeats it.
    let (code, stdout, _) = run(&["check", s(&stream)]);
    assert_eq!(code, 1, "{stdout}");
    assert!(!stdout.contains(said), "{stdout}");
    // A live call says it too (`run`, and `test`'s case).
    use crate::common::server::{Script, Server, Step, frame};
    let mut body = frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#);
    body.extend(b"data: {\"type\":\"TEXT_MESS\n\n");
    body.extend(frame(
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ));
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        let server = Server::start(Script::sse(vec![Step::Send(body.clone())]));
        let url = server.url("/");
        let (code, stdout, stderr) = run(&[
            "run",
            &url,
            "--message",
            "hi",
            "--allow",
            "framing/invalid-json",
            "--format",
            format,
        ]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(said), "{format}: {stdout}");
    }
    let server = Server::start(Script::sse(vec![Step::Send(body)]));
    let suite = dir.path().join("suite.toml");
    write(
        &suite,
        format!(
            "[[case]]\nname = \"c\"\nurl = \"{}\"\nmessage = \"hi\"\nallow = [\"framing/*\"]\n",
            server.url("/")
        )
        .as_bytes(),
    );
    let (code, stdout, stderr) = run(&["test", s(&suite), "--format", "json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(said), "{stdout}");
}

/// `test --artifacts` onto a disk that fills up: the case passed (exit 0) with a cut
/// `response.raw`, an empty `events.jsonl` and a 0-byte `outcome.json`, or failed as the
/// agent's `suite/no-stream` when the disk cut the body at its start. The turn is agui-lens's
/// failure (exit 2), said in every format, and no verdict is passed on the agent.
#[test]
fn artifacts_the_disk_cannot_hold_fail_the_turn_not_the_agent() {
    use crate::common::server::{Script, Server, Step, long_answer};
    let body = long_answer(20_000);
    for limit in [4096, 512 << 10] {
        for format in ["json", "junit", "sarif"] {
            let server = Server::start(Script::sse(vec![Step::Send(body.clone())]));
            let dir = tempfile::tempdir().unwrap();
            let suite = dir.path().join("suite.toml");
            one_case_suite(&suite, &server.url("/"));
            let artifacts = dir.path().join("art");
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
            command.args([
                "test",
                s(&suite),
                "--artifacts",
                s(&artifacts),
                "--format",
                format,
            ]);
            crate::common::with_file_size_limit(&mut command, limit);
            let (code, stdout, stderr) = crate::common::split(command.output().unwrap());
            let what = format!("{limit} {format}: {stdout}{stderr}");
            assert_eq!(code, 2, "{what}");
            // (SARIF lists every rule it knows, that one too: no result of it.)
            assert!(
                !stdout.contains("\"ruleId\": \"suite/no-stream\""),
                "{what}"
            );
            assert!(!stdout.contains("FAILED: suite/no-stream"), "{what}");
            if format != "sarif" {
                assert!(!stdout.contains("no-stream"), "{what}");
            }
            assert!(stdout.contains("writing"), "{what}");
        }
    }
}

/// A link in the folder compacted into (`-o DIR`, `--mirror`) was written through: a stream's
/// output or a sidecar's copy at a link's place replaced the file it leads to, outside DIR,
/// and a linked folder took the outputs of a folder of the tree. Nothing is written through
/// a link in DIR: each such place is left, named, and the run fails.
#[test]
fn nothing_is_written_through_a_link_in_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let col = dir.path().join("col");
    place("agui-sdk-full.jsonl", &col.join("a.jsonl"));
    place("pydantic-ai-full.jsonl", &col.join("sub/b.jsonl"));
    write(&col.join("meta.json"), b"{\"model\": \"x\"}\n");
    let elsewhere = dir.path().join("elsewhere");
    let stream = elsewhere.join("mine.jsonl");
    place("pydantic-ai-full.jsonl", &stream);
    let note = elsewhere.join("note.json");
    write(&note, b"{\"mine\": true}\n");
    std::fs::create_dir_all(elsewhere.join("folder")).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&stream, out.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink(&note, out.join("meta.json")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("folder"), out.join("sub")).unwrap();
    let before = files_under(&elsewhere);
    let bytes = |p: &Path| std::fs::read(p).unwrap();
    let (stream_bytes, note_bytes) = (bytes(&stream), bytes(&note));
    for args in [
        vec!["compact", s(&col), "-o", s(&out)],
        vec!["compact", s(&col), "-o", s(&out), "--mirror"],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 1, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("is a link"), "{args:?}: {stderr}");
        assert_eq!(bytes(&stream), stream_bytes, "{args:?}");
        assert_eq!(bytes(&note), note_bytes, "{args:?}");
        assert_eq!(files_under(&elsewhere), before, "{args:?}");
    }
}

/// A turn taken out of a case left its folder's earlier verdict (`"passed": true`) beside
/// this run's artifacts, unsaid, where removed cases and `--case` were named: it is named too,
/// and left as it is.
#[test]
fn the_artifacts_of_a_turn_a_case_no_longer_has_are_named() {
    use crate::common::server::{Script, Server, Step, clean_run};
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    one_case_suite(&suite, &server.url("/"));
    let artifacts = dir.path().join("art");
    let gone = artifacts.join("01-slow/turn-2");
    write(&gone.join("outcome.json"), b"{\"passed\": true}\n");
    let (code, stdout, stderr) = run(&["test", s(&suite), "--artifacts", s(&artifacts)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("turns their case no longer has") && stderr.contains("turn-2"),
        "{stderr}"
    );
    assert!(gone.join("outcome.json").is_file());
    assert!(!stderr.contains("turn-1"), "{stderr}");
}

/// What `--mirror` copies besides files: a link of the tree (to a folder, or to nothing) was
/// put in place of a file of the user's in DIR, exit 0; the folders of the tree were made
/// through a link in DIR, outside it; and a FIFO at a file's place hung the run, deaf to
/// SIGTERM. Each such place is left, named, and the run fails.
#[test]
fn a_mirror_puts_no_link_or_folder_over_the_users_and_waits_on_no_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let col = dir.path().join("col");
    place("agui-sdk-full.jsonl", &col.join("x.jsonl"));
    std::fs::create_dir_all(col.join("real")).unwrap();
    std::os::unix::fs::symlink("real", col.join("folder-link")).unwrap();
    std::os::unix::fs::symlink("/nowhere/at/all", col.join("dangling.jsonl")).unwrap();
    std::fs::create_dir_all(col.join("a/b/c")).unwrap();
    let out = dir.path().join("out");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    write(&out.join("folder-link"), b"mine\n");
    write(&out.join("dangling.jsonl"), b"mine too\n");
    std::os::unix::fs::symlink(&elsewhere, out.join("a")).unwrap();
    make_fifo(&out.join("x.jsonl"));
    let output = crate::common::agui_lens()
        .args(["compact", s(&col), "-o", s(&out), "--mirror"])
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let (code, stdout, stderr) = crate::common::split(output);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(std::fs::read(out.join("folder-link")).unwrap(), b"mine\n");
    assert_eq!(
        std::fs::read(out.join("dangling.jsonl")).unwrap(),
        b"mine too\n"
    );
    assert_eq!(files_under(&elsewhere), Vec::<PathBuf>::new(), "{stderr}");
    assert!(
        std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
        "{stderr}"
    );
    assert!(stderr.contains("no regular file"), "{stderr}");
    assert!(
        stderr.contains("3 folders not made (a link on the way)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("3 files of the user's left as they were"),
        "{stderr}"
    );
}

/// A recording whose recorder was killed (SIGKILL, a crash, the machine going down) or could
/// not write a word more (a full disk) has nothing beside it that its end would have written:
/// before this, a later `check` judged the part it holds as the agent's whole answer (the run
/// left open charged to the agent, or, cut between two events after the run's end, passed
/// clean). The recorder says it is recording before the first byte, and takes that back
/// only when the recording is whole.
#[test]
fn a_recording_whose_recorder_was_killed_is_no_whole_stream() {
    let server = hanging_agent();
    for flag in ["--record", "--record-raw", "--artifacts"] {
        let dir = tempfile::tempdir().unwrap();
        let (child, stream) = if flag == "--artifacts" {
            let suite = dir.path().join("suite.toml");
            one_case_suite(&suite, &server.url("/"));
            let artifacts = dir.path().join("art");
            let child = Child::spawn(&["test", s(&suite), "--artifacts", s(&artifacts)], None);
            (child, artifacts)
        } else {
            let rec = dir.path().join("rec.jsonl");
            let child = Child::spawn(
                &["run", &server.url("/"), "--message", "hi", flag, s(&rec)],
                None,
            );
            (child, rec)
        };
        // Killed once the start of the answer is recorded.
        until(|| {
            files_under(dir.path()).iter().any(|p| {
                p.extension().is_some_and(|e| e == "jsonl" || e == "raw")
                    && std::fs::read(dir.path().join(p))
                        .is_ok_and(|b| b.windows(11).any(|w| w == b"RUN_STARTED"))
            })
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        child.signal(libc::SIGKILL);
        let _ = child.wait(std::time::Duration::from_secs(10));
        let (code, stdout, stderr) = run(&["check", s(&stream)]);
        let what = format!("{flag}: {stdout}{stderr}");
        // Not the agent's open run, nor a whole stream.
        assert!(!stdout.contains("unterminated-run"), "{what}");
        assert_eq!(code, 2, "{what}");
        assert!(
            what.contains("cut when it was recorded: not finished"),
            "{what}"
        );
        // Every format carries it.
        for format in ["json", "sarif", "junit", "github", "jsonl"] {
            let (code, stdout, stderr) = run(&["check", s(&stream), "--format", format]);
            assert_eq!(code, 2, "{flag} {format}: {stdout}{stderr}");
            assert!(
                stdout.contains("not finished"),
                "{flag} {format}: {stdout}{stderr}"
            );
        }
    }
}

/// The run this file's later tests hold streams to: its start alone, which leaves it open
/// (`lifecycle/unterminated-run`), and it whole.
const OPEN_RUN: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;

/// A stream that leaves its run open and one of the same run whole, written in `dir` as
/// `open.jsonl` and `whole.jsonl`.
fn open_and_whole(dir: &Path) -> (PathBuf, PathBuf) {
    let open = dir.join("open.jsonl");
    write(&open, format!("{OPEN_RUN}\n").as_bytes());
    let whole = dir.join("whole.jsonl");
    write(
        &whole,
        format!(
            "{OPEN_RUN}\n{}\n",
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#
        )
        .as_bytes(),
    );
    (open, whole)
}

/// A recording `run` cut at a stop, written as `name` in `dir`: the start of a run, and beside
/// it the word of the stop with the recording's length.
fn cut_recording(dir: &Path, name: &str) -> PathBuf {
    let rec = dir.join(name);
    write(&rec, format!("{OPEN_RUN}\n").as_bytes());
    write(
        &dir.join(format!("{name}.cut.txt")),
        format!(
            "stopped by SIGINT after 1 event: the stream was recorded in part\nsize: {}\n",
            OPEN_RUN.len() + 1
        )
        .as_bytes(),
    );
    rec
}

/// A reader that stops reading a gate's report (`agui-lens test … | head -1`) made the command
/// exit 0 at the first write that found the pipe closed, whatever it had found, and before
/// its `--junit` was written (an earlier run's green file stayed): a failing gate passed under
/// `set -o pipefail`. The command runs to its end, writes its other reports, and exits with
/// its verdict.
#[test]
fn a_reader_that_stops_reading_passes_no_gate() {
    use crate::common::server::{Script, Server, Step, frame};
    let dir = tempfile::tempdir().unwrap();
    let (bad, good) = open_and_whole(dir.path());
    let server = Server::start(Script::sse(vec![Step::Send(frame(OPEN_RUN))]));
    let suite = dir.path().join("suite.toml");
    one_case_suite(&suite, &server.url("/"));
    let junit = dir.path().join("report.xml");
    let green = r#"<testsuites tests="1" failures="0" errors="0"></testsuites>"#;
    // (The command, whether it writes `--junit`.)
    let gates: [(&[&str], bool); 4] = [
        (&["check", s(&bad)], true),
        (&["run", &server.url("/"), "--message", "hi"], false),
        (&["test", s(&suite)], true),
        (&["diff", s(&bad), s(&good)], false),
    ];
    for (args, has_junit) in gates {
        for format in ["human", "json", "sarif"] {
            write(&junit, green.as_bytes());
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
            command.args(args).env_remove("CI");
            if args[0] != "diff" {
                command.args(["--format", format]);
            }
            if has_junit {
                command.args(["--junit", s(&junit)]);
            }
            for proxy in crate::common::PROXY_VARIABLES {
                command.env_remove(proxy);
            }
            let mut child = command
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The reader is gone before the first word is written.
            drop(child.stdout.take());
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let what = format!("{args:?} {format}: {stderr}");
            assert_eq!(output.status.code(), Some(1), "{what}");
            if has_junit {
                let report = std::fs::read_to_string(&junit).unwrap();
                assert!(report.contains("unterminated-run"), "{what}: {report}");
            }
        }
    }
}

/// A recording its recorder cut (`run --record` stopped: `FILE.cut.txt` beside it) became an
/// expectation under `snapshot --update`, exit 0, and matched it ever after; held to a whole
/// stream's snapshot, it left its half pending for `snapshot accept`. Half a stream is held
/// to no expectation (exit 2, nothing written); `diff` says it compares one.
#[test]
fn a_cut_recording_is_held_to_no_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let rec = cut_recording(dir.path(), "rec.jsonl");
    let (_, whole) = open_and_whole(dir.path());
    let expect = dir.path().join("exp.snap");
    let (code, stdout, stderr) = run(&["snapshot", s(&rec), "--expect", s(&expect), "--update"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("cut when it was recorded"), "{stderr}");
    assert!(!expect.exists());
    let (code, stdout, stderr) = run(&["snapshot", s(&whole), "--expect", s(&expect), "--update"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let held = std::fs::read(&expect).unwrap();
    let (code, stdout, stderr) = run(&["snapshot", s(&rec), "--expect", s(&expect)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("cut when it was recorded"), "{stderr}");
    assert!(!dir.path().join("exp.snap.new").exists());
    assert_eq!(std::fs::read(&expect).unwrap(), held);
    let (code, stdout, stderr) = run(&["diff", s(&rec), s(&whole)]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("cut when it was recorded"), "{stderr}");
}

/// An exchange folder the proxy left on a disk too full for its body: the request, the word
/// that the recording was cut, and empty files where the rest did not fit. `check DIR` read
/// the empty `events.jsonl` as the agent's answer (`framing/no-events`, exit 1): an exchange is
/// one by its request and its body or its cut, and this one checks as cut (exit 2).
#[test]
fn an_exchange_the_disk_could_not_hold_checks_as_cut() {
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().join("rec/001");
    std::fs::create_dir_all(&at).unwrap();
    write(
        &at.join("request.json"),
        br#"{"threadId":"t","runId":"r","messages":[],"protocolVersion":"1.1"}"#,
    );
    write(
        &at.join("cut.txt"),
        b"recording into rec/001: No space left on device (os error 28): the body was recorded in part (it was forwarded and checked whole)\n",
    );
    write(&at.join("events.jsonl"), b"");
    write(&at.join("findings.jsonl"), b"");
    for format in ["human", "json", "sarif", "junit", "github", "jsonl"] {
        let (code, stdout, stderr) =
            run(&["check", s(&dir.path().join("rec")), "--format", format]);
        let what = format!("{format}: {stdout}{stderr}");
        assert_eq!(code, 2, "{what}");
        assert!(what.contains("No space left on device"), "{what}");
        let found = crate::common::findings_said(format, &stdout);
        assert!(!found.contains("no-events"), "{what}");
    }
}

/// `run --record FILE` killed before the answer's first byte left FILE empty with nothing
/// beside it, which `check` then charged to the agent (`framing/no-events`, exit 1): a file
/// made for the call says from its making that it is no answer yet. One that was there before
/// (an earlier run's whole recording) is left as it was, with what is beside it, when this run
/// cannot begin to write (the disk is full): it was said cut by an empty file beside it.
#[test]
fn a_recording_killed_before_the_answer_or_never_begun_is_no_answer() {
    use crate::common::server::{Script, Server, Step};
    let silent = Server::start(Script::sse(vec![Step::Hang]));
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.jsonl");
    let child = Child::spawn(
        &[
            "run",
            &silent.url("/"),
            "--message",
            "hi",
            "--record",
            s(&rec),
        ],
        None,
    );
    until(|| !silent.requests().is_empty());
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.signal(libc::SIGKILL);
    let _ = child.wait(std::time::Duration::from_secs(10));
    let (code, stdout, stderr) = run(&["check", s(&rec)]);
    let what = format!("{stdout}{stderr}");
    assert_eq!(code, 2, "{what}");
    assert!(!stdout.contains("no-events"), "{what}");
    assert!(what.contains("not finished"), "{what}");

    // A whole recording, then a run that cannot write a byte beside or into it.
    let whole = Server::start(Script::sse(vec![Step::Send(
        crate::common::server::long_answer(3),
    )]));
    let (code, stdout, stderr) = run(&[
        "run",
        &whole.url("/"),
        "--message",
        "hi",
        "--record",
        s(&rec),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cut = dir.path().join("rec.jsonl.cut.txt");
    assert!(!cut.exists());
    let kept = std::fs::read(&rec).unwrap();
    let again = Server::start(Script::sse(vec![Step::Send(
        crate::common::server::long_answer(3),
    )]));
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
    command.args([
        "run",
        &again.url("/"),
        "--message",
        "hi",
        "--record",
        s(&rec),
    ]);
    for proxy in crate::common::PROXY_VARIABLES {
        command.env_remove(proxy);
    }
    crate::common::with_file_size_limit(&mut command, 16);
    let output = command.output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert_eq!(std::fs::read(&rec).unwrap(), kept, "{said}");
    assert!(!cut.exists(), "{said}");
    let (code, stdout, stderr) = run(&["check", s(&rec)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// A closed stdout or stderr loses words, never a verdict: `snapshot` of a changed stream
/// exited 0 when its "no longer matches" line found stderr closed, `inspect` exited 0 when its
/// view found stdout closed, and `diff` of a cut recording panicked (exit 101) on its warning.
#[test]
fn a_closed_output_loses_words_not_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let (bad, good) = open_and_whole(dir.path());
    // A recording its recorder cut, which `diff` warns of.
    let cut = cut_recording(dir.path(), "cut.jsonl");
    let expect = dir.path().join("exp.snap");
    let (code, _, stderr) = run(&["snapshot", s(&good), "--expect", s(&expect), "--update"]);
    assert_eq!(code, 0, "{stderr}");
    let closed = |args: &[&str], stdout: bool, stderr: bool| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
            .args(args)
            .env_remove("CI")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if stdout {
            drop(child.stdout.take());
        }
        if stderr {
            drop(child.stderr.take());
        }
        child.wait_with_output().unwrap().status.code()
    };
    for (out, err) in [(true, false), (false, true), (true, true)] {
        let how = format!("stdout closed {out}, stderr closed {err}");
        assert_eq!(
            closed(&["snapshot", s(&bad), "--expect", s(&expect)], out, err),
            Some(1),
            "snapshot, {how}"
        );
        assert_eq!(
            closed(&["inspect", s(&bad)], out, err),
            Some(1),
            "inspect, {how}"
        );
        assert_eq!(
            closed(&["diff", s(&cut), s(&cut)], out, err),
            Some(0),
            "diff, {how}"
        );
        assert_eq!(closed(&["fold", s(&cut)], out, err), Some(0), "fold, {how}");
    }
}

/// A link to a recording its recorder cut was judged as a whole stream: the word of the cut
/// was looked for beside the link, not beside the recording. `check` of the link charged the
/// agent with the open run, and `snapshot --update` made the half stream the expectation.
#[test]
fn a_link_to_a_cut_recording_is_cut_too() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let rec = cut_recording(&runs, "rec.jsonl");
    let link = dir.path().join("latest.jsonl");
    std::os::unix::fs::symlink(&rec, &link).unwrap();
    let (code, stdout, stderr) = run(&["check", s(&link)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(!stdout.contains("unterminated-run"), "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("cut when it was recorded"),
        "{stdout}{stderr}"
    );
    let expect = dir.path().join("exp.snap");
    let (code, stdout, stderr) = run(&["snapshot", s(&link), "--expect", s(&expect), "--update"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(!expect.exists());
}

/// `check --protocol 0.x` of an exchange the proxy recorded replayed the recorded
/// `request/protocol-version` for a request that declared no version (found under the
/// newest version when it was recorded): judged by the rules before 1.0, a client had none to
/// declare, as a live check under `--protocol 0.x` says.
#[test]
fn a_recorded_request_is_asked_for_a_version_only_from_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().join("rec/001");
    std::fs::create_dir_all(&at).unwrap();
    write(
        &at.join("request.json"),
        br#"{"threadId":"t","runId":"r","messages":[]}"#,
    );
    let events = concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        "\n",
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
        "\n"
    );
    write(&at.join("events.jsonl"), events.as_bytes());
    let raw: String = events.lines().map(|e| format!("data: {e}\n\n")).collect();
    write(&at.join("response.raw"), raw.as_bytes());
    let finding = serde_json::json!({
        "rule": "request/protocol-version", "severity": "warning",
        "path": "rec/001/request.json", "line": null, "offset": null, "event_index": null,
        "event_type": null, "message": "the request's RunAgentInput declares no protocolVersion",
        "help": null, "pointer": null, "keyword": null
    });
    write(
        &at.join("findings.jsonl"),
        format!("{finding}\n").as_bytes(),
    );
    let rec = dir.path().join("rec");
    let (_, stdout, stderr) = run(&["check", s(&rec)]);
    assert!(
        stdout.contains("request/protocol-version"),
        "{stdout}{stderr}"
    );
    let (code, stdout, stderr) = run(&["check", s(&rec), "--protocol", "0.x"]);
    assert!(
        !stdout.contains("request/protocol-version"),
        "{stdout}{stderr}"
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// `--junit` naming a FIFO (or `/dev/stdout`) hung before anything was checked: the path was
/// read to see whether it held a report, which waits on a FIFO for ever. The report is written
/// into it, and the exit status is the verdict.
#[test]
fn a_junit_fifo_gets_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let (bad, _) = open_and_whole(dir.path());
    let fifo = dir.path().join("junit.fifo");
    let reader = crate::common::fifo(&fifo);
    let child = Child::spawn(&["check", s(&bad), "--junit", s(&fifo)], None);
    let (code, stdout, stderr) = child.wait(std::time::Duration::from_secs(30));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let got = String::from_utf8(reader.join().unwrap()).unwrap();
    assert!(got.contains("unterminated-run"), "{got}");
}

/// Three ways a cut or a lost report went unsaid: `run --record LINK` wrote its word of the
/// cut beside the link's name, where a check of the file it leads to does not look; `cat` of a
/// cut recording made a copy that says nothing of the cut, exit 0; a report on a full device
/// (`>/dev/full`) failed `test` before its `--junit` was written, and left `check` of a clean
/// stream at exit 0.
#[test]
fn a_cut_or_a_lost_report_is_said() {
    let server = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let target = runs.join("rec.jsonl");
    write(&target, b"");
    let link = dir.path().join("latest.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let child = recording_under_way(&server, &link, &target);
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.signal(libc::SIGKILL);
    let _ = child.wait(std::time::Duration::from_secs(10));
    let (code, stdout, stderr) = run(&["check", s(&target)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("cut when it was recorded"),
        "{stdout}{stderr}"
    );

    let copy = dir.path().join("copy.jsonl");
    let (code, stdout, stderr) = run(&["cat", s(&target), "-o", s(&copy)]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("cut when it was recorded"), "{stderr}");

    let (_, good) = open_and_whole(dir.path());
    let junit = dir.path().join("report.xml");
    for (stream, has) in [
        (&good, "failures=\"0\""),
        (&target, "cut when it was recorded"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
            .args(["check", s(stream), "--junit", s(&junit)])
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{said}");
        assert!(said.contains("writing the report on stdout"), "{said}");
        let report = std::fs::read_to_string(&junit).unwrap();
        assert!(report.contains(has), "{report}");
    }
}

/// `serve --report FIFO` with no reader on the FIFO did not stop on SIGTERM: the report's
/// open waited for a reader through every signal. It waits a few seconds for one, then gives
/// up and says so.
#[test]
fn a_report_fifo_no_one_reads_does_not_hold_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let (_, whole) = open_and_whole(dir.path());
    let fifo = dir.path().join("report.fifo");
    crate::common::make_fifo(&fifo);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let child = Child::spawn(
        &[
            "serve",
            s(&whole),
            "--listen",
            &listen,
            "--report",
            s(&fifo),
        ],
        None,
    );
    until(|| std::net::TcpStream::connect(&listen).is_ok());
    child.signal(libc::SIGTERM);
    let (code, stdout, stderr) = child.wait(std::time::Duration::from_secs(30));
    assert_eq!(code, 143, "{stdout}{stderr}");
    assert!(stderr.contains("no reader"), "{stderr}");
}

/// An output named through a folder that is not there and then `..` (`nd/../FILE`), or
/// through a link that leads there, named the file every check of the output looked for and
/// found nothing at (`nd` is not there, so neither is `nd/../FILE`), and once the folders of
/// the output were made, the write replaced `FILE`: the input itself (`--junit`, `snapshot
/// --expect`, `compact -o`), or a file of the user's (`--record`, `--baseline`). Such a path
/// is refused, and every file is left as it was.
#[test]
fn an_output_up_out_of_a_folder_not_there_replaces_nothing() {
    use crate::common::server::{Script, Server, Step, clean_run};
    let server = Server::start(Script::sse(vec![Step::Send(clean_run())]));
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    place("agui-sdk-full.jsonl", &at("stream.jsonl"));
    write(&at("notes.txt"), b"precious notes\n");
    std::fs::create_dir_all(at("dd")).unwrap();
    place("agui-sdk-full.jsonl", &at("dd/a.jsonl"));
    std::os::unix::fs::symlink("nd/../notes.txt", at("link.xml")).unwrap();
    let stream = s(&at("stream.jsonl")).to_owned();
    let up = |name: &str| s(&at("nd")).to_owned() + "/../" + name;
    let url = server.url("/");
    let cases: Vec<Vec<String>> = vec![
        vec![
            "check".into(),
            stream.clone(),
            "--junit".into(),
            up("stream.jsonl"),
        ],
        vec![
            "check".into(),
            stream.clone(),
            "--junit".into(),
            up("notes.txt"),
        ],
        vec![
            "check".into(),
            stream.clone(),
            "--junit".into(),
            s(&at("link.xml")).into(),
        ],
        vec![
            "check".into(),
            stream.clone(),
            "--baseline".into(),
            up("notes.txt"),
            "--update-baseline".into(),
        ],
        vec![
            "snapshot".into(),
            stream.clone(),
            "--expect".into(),
            up("stream.jsonl"),
            "--update".into(),
        ],
        vec![
            "compact".into(),
            stream.clone(),
            "--level".into(),
            "snapshot".into(),
            "-o".into(),
            up("stream.jsonl"),
        ],
        vec![
            "compact".into(),
            s(&at("dd")).into(),
            "-o".into(),
            up("dd/"),
        ],
        vec![
            "run".into(),
            "--message".into(),
            "hi".into(),
            url.clone(),
            "--record".into(),
            up("notes.txt"),
        ],
        vec![
            "run".into(),
            "--message".into(),
            "hi".into(),
            url,
            "--record-raw".into(),
            up("notes.txt"),
        ],
    ];
    let kept = |name: &str| std::fs::read(at(name)).unwrap();
    let before = [kept("stream.jsonl"), kept("notes.txt"), kept("dd/a.jsonl")];
    for case in cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run(&args);
        let what = format!("{args:?}: {stdout}{stderr}");
        assert_eq!(code, 2, "{what}");
        assert!(stderr.contains("is not there"), "{what}");
        let after = [kept("stream.jsonl"), kept("notes.txt"), kept("dd/a.jsonl")];
        assert!(before == after, "{what}");
        let _ = std::fs::remove_dir_all(at("nd"));
    }
}

/// A file read whole beside the streams (`snapshot --expect`, `--baseline`, `run --input`)
/// that is a device with no end was read until the machine's memory ran out (`--expect
/// /dev/full` took 24 GB, and the kernel killed the command). Past what such a file holds,
/// the read stops, and says so.
#[test]
fn a_device_named_for_a_file_read_whole_is_refused() {
    let stream = recording("agui-sdk-full.jsonl");
    let stream = s(&stream);
    let dir = tempfile::tempdir().unwrap();
    let zero = |name: &str| {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        link.to_str().unwrap().to_owned()
    };
    let (suite, script) = (zero("suite.toml"), zero("script.toml"));
    for args in [
        vec!["snapshot", stream, "--expect", "/dev/zero"],
        vec!["snapshot", stream, "--expect", "/dev/zero", "--update"],
        vec!["check", stream, "--baseline", "/dev/zero"],
        vec!["check", stream, "--config", "/dev/zero"],
        vec!["run", "http://127.0.0.1:9/", "--input", "/dev/zero"],
        vec!["test", &suite],
        vec!["serve", &script, "--listen", "127.0.0.1:0"],
    ] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        command.args(&args);
        // (A build that reads on is stopped by the limit, not by the machine.)
        crate::common::with_memory_limit(&mut command, 2 << 30);
        let (code, stdout, stderr) = crate::common::split(command.output().unwrap());
        let what = format!("{args:?}: {stdout}{stderr}");
        assert_eq!(code, 2, "{what}");
        assert!(stderr.contains("more than 256 MiB"), "{what}");
    }
}

/// A file beside a recording that is a FIFO or a device (`run.jsonl.request.txt`) is no
/// file a recorder wrote: `check` of the recording opened the FIFO and waited for a writer
/// through every signal, and read `/dev/zero` until the machine's memory ran out.
#[test]
fn a_fifo_beside_a_recording_holds_no_check() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("rec.jsonl");
    place("agui-sdk-full.jsonl", &stream);
    make_fifo(&dir.path().join("rec.jsonl.request.txt"));
    make_fifo(&dir.path().join("rec.jsonl.cut.txt"));
    let other = dir.path().join("other.jsonl");
    place("agui-sdk-full.jsonl", &other);
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("other.jsonl.request.txt")).unwrap();
    for input in [&stream, &other] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
        command.args(["check", s(input)]);
        crate::common::with_memory_limit(&mut command, 2 << 30);
        let mut child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let began = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if began.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "{}: hung, or failed",
            input.display()
        );
    }
}

/// `cat -o FIFO` whose reader took the first kilobyte and went away exited 0, silent: the
/// output named holds part of the stream, which its status says (as `compact` says it). A
/// reader of stdout that goes away (`| head`) still ends `cat` quietly.
#[test]
fn a_named_output_whose_reader_left_early_is_no_whole_copy() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, many_runs(2000)).unwrap();
    let fifo = dir.path().join("out.jsonl");
    make_fifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut first = [0u8; 1000];
            let mut file = std::fs::File::open(fifo).unwrap();
            std::io::Read::read_exact(&mut file, &mut first).unwrap();
        })
    };
    let (code, stdout, stderr) = run(&["cat", s(&input), "-o", s(&fifo)]);
    reader.join().unwrap();
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("Broken pipe"), "{stderr}");
}

/// `-o /dev/stdout` where the shell sent stdout to a file (`>> app.jsonl`) renamed a new file
/// over it: what the file held before was lost, and what the shell wrote after went to a file
/// no longer there. Such a name is written through the descriptor, where it is.
#[test]
fn an_output_named_by_a_descriptor_is_written_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let stream = recording("agui-sdk-full.jsonl");
    let app = dir.path().join("app.jsonl");
    std::fs::write(&app, "kept\n").unwrap();
    let script = format!(
        "{{ '{lens}' cat '{stream}' --type RUN_FINISHED -o /dev/stdout --output-format jsonl; \
         echo after; }} >> '{app}'",
        lens = env!("CARGO_BIN_EXE_agui-lens"),
        stream = s(&stream),
        app = s(&app),
    );
    let status = std::process::Command::new("sh")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(status.success());
    let held = std::fs::read_to_string(&app).unwrap();
    let lines: Vec<&str> = held.lines().collect();
    assert_eq!(lines.len(), 3, "{held}");
    assert_eq!(lines[0], "kept", "{held}");
    assert!(lines[1].contains("RUN_FINISHED"), "{held}");
    assert_eq!(lines[2], "after", "{held}");
}

/// A copy into a FIFO says first what is wrong with its input: an input that is not there
/// waited for the FIFO's reader (forever, with none) before it was said.
#[test]
fn a_copy_into_a_fifo_says_a_missing_input_without_waiting_for_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.jsonl");
    make_fifo(&fifo);
    let missing = dir.path().join("missing.jsonl");
    for (input, said) in [
        (missing.as_path(), "No such file"),
        (dir.path(), "is a directory"),
    ] {
        let child = Child::spawn(&["cat", s(input), "-o", s(&fifo)], None);
        let (code, stdout, stderr) = child.wait(std::time::Duration::from_secs(20));
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(
            stderr.contains(s(input)) && stderr.contains(said),
            "{stderr}"
        );
    }
}

/// `cat -o FIFO` caught no signal: a stop while it waited for a reader, or for room in the
/// FIFO, killed it with nothing said. It ends with the signal's status, and says so.
#[test]
fn a_stop_ends_a_copy_into_a_fifo_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, many_runs(2000)).unwrap();
    let fifo = dir.path().join("out.jsonl");
    make_fifo(&fifo);
    let child = Child::spawn(&["cat", s(&input), "-o", s(&fifo)], None);
    // A reader that has it open and reads nothing.
    let reader = std::fs::File::open(&fifo).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.signal(libc::SIGTERM);
    let (exit, stdout, stderr) = child.wait(std::time::Duration::from_secs(20));
    drop(reader);
    assert_eq!(exit, 143, "{stdout}{stderr}");
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
}

/// A run killed hard (SIGKILL: the OOM killer, a CI job's hard timeout) had no word in its
/// reports: the last run's green `--junit` (or a server's `--report`) stood, and a CI step
/// that publishes it after the kill showed a pass. While a run is under way its report files
/// say it has not ended, as an error; the run's own report replaces that at its end.
#[test]
fn a_run_killed_hard_leaves_no_earlier_green_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.xml");
    let good = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let (code, _, stderr) = run(&["check", s(&good), "--junit", s(&report)]);
    assert_eq!(code, 0, "{stderr}");
    let green = std::fs::read_to_string(&report).unwrap();
    assert!(
        green.contains("errors=\"0\"") && green.contains("failures=\"0\""),
        "{green}"
    );
    let under_way = |path: &Path| {
        std::fs::read_to_string(path).is_ok_and(|text| text.contains("has not ended"))
    };
    // An input no one writes into: the run waits there until it is killed.
    let fifo = dir.path().join("stream.fifo");
    make_fifo(&fifo);
    let child = Child::spawn(&["check", s(&fifo), "--junit", s(&report)], None);
    until(|| under_way(&report));
    child.signal(libc::SIGKILL);
    let (code, _, _) = child.wait(std::time::Duration::from_secs(30));
    assert_ne!(code, 0);
    let left = std::fs::read_to_string(&report).unwrap();
    assert!(
        left.contains("<error") && !left.contains("errors=\"0\""),
        "{left}"
    );
    // A server's report, the same.
    let served = dir.path().join("served.json");
    let child = Child::spawn(
        &[
            "serve",
            s(&good),
            "--listen",
            "127.0.0.1:0",
            "--report",
            s(&served),
            "--format",
            "json",
        ],
        None,
    );
    until(|| under_way(&served));
    child.signal(libc::SIGKILL);
    child.wait(std::time::Duration::from_secs(30));
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&served).unwrap()).unwrap();
    assert_eq!(left["summary"]["unreadable"], 1, "{left}");
    assert!(
        left["files"][0]["failure"]
            .as_str()
            .unwrap()
            .contains("has not ended")
    );
    // A run that ends writes its own report over it.
    let (code, _, stderr) = run(&["check", s(&good), "--junit", s(&report)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), green);
}

/// A recording `run --record` is still writing (it holds the file's lock) was said to be cut
/// because "its recorder was killed", which invites taking away the word beside it. It is said
/// to be under way; like any part of a stream it is still no whole answer.
#[test]
fn a_recording_under_way_is_said_to_be() {
    let server = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("rec.jsonl");
    let child = recording_under_way(&server, &target, &target);
    for command in ["check", "compact"] {
        let mut args = vec![command, s(&target)];
        if command == "compact" {
            args.push("--in-place");
        }
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{command}: {stdout}{stderr}");
        let said = format!("{stdout}{stderr}");
        assert!(
            said.contains("is recording into it now"),
            "{command}: {said}"
        );
        assert!(!said.contains("killed"), "{command}: {said}");
    }
    child.signal(libc::SIGINT);
    child.wait(std::time::Duration::from_secs(30));
    // Ended, the recorder's word beside it says why it was cut.
    let (code, stdout, stderr) = run(&["check", s(&target)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(!format!("{stdout}{stderr}").contains("recording into it now"));
}

/// The word that a run is under way goes only where the report replaces it: not into
/// `/dev/stdout` redirected to a file (the run's report came after it, two documents, the first
/// an error), and a walk does not read the `--junit` file it writes (a fresh tree with its
/// report inside failed on the word).
#[test]
fn the_word_that_a_run_is_under_way_stays_out_of_its_way() {
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("fixtures/valid/agui-sdk-full.jsonl");
    let out = dir.path().join("out.txt");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .args([
            "check",
            s(&good),
            "--format",
            "json",
            "--junit",
            "/dev/stdout",
        ])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("<testsuites").count(), 1, "{text}");
    assert!(!text.contains("has not ended"), "{text}");
    let caps = dir.path().join("caps");
    place("agui-sdk-full.jsonl", &caps.join("a.jsonl"));
    for name in ["report.json", "report.jsonl", "report.sse"] {
        let report = caps.join(name);
        for _ in 0..2 {
            let (code, stdout, stderr) = run(&["check", s(&caps), "--junit", s(&report)]);
            assert_eq!(code, 0, "{name}: {stdout}{stderr}");
            assert!(!stdout.contains(name), "{name}: {stdout}");
        }
        std::fs::remove_file(&report).unwrap();
    }
}

/// Followed while `run --record` writes it, a recording is read as the recorder leaves it:
/// stopped, the recorder says so beside it at its end, and the follow that ends after it says
/// the stream was cut there (it charged the agent with a run left open).
#[test]
fn a_recording_followed_while_it_is_written_is_read_as_its_recorder_leaves_it() {
    let server = hanging_agent();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("rec.jsonl");
    let recorder = recording_under_way(&server, &target, &target);
    let follower = Child::spawn(
        &[
            "check",
            "--follow",
            "--idle-timeout",
            "3",
            "--format",
            "json",
            s(&target),
        ],
        None,
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    recorder.signal(libc::SIGINT);
    let (code, _, stderr) = recorder.wait(std::time::Duration::from_secs(30));
    assert_eq!(code, 130, "{stderr}");
    let (code, stdout, stderr) = follower.wait(std::time::Duration::from_secs(60));
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    assert_eq!(code, 2, "{doc}");
    let failure = doc["files"][0]["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("cut when it was recorded"), "{doc}");
    assert!(!doc.to_string().contains("unterminated-run"), "{doc}");
}
