//! `agui-lens cat`: slicing by type, run and index, and converting between JSONL, SSE and
//! JSON arrays (plain or compressed) without changing the events.

use crate::common::{EARLIER, fifo, fixture_files, root, run};

const FULL: &str = "fixtures/recordings/agui-sdk-full.jsonl";

fn cat(args: &[&str]) -> String {
    let mut all = vec!["cat"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = run(&all);
    assert_eq!(code, 0, "cat {args:?}: {stderr}");
    assert!(stderr.is_empty(), "cat {args:?}: {stderr}");
    stdout
}

#[test]
fn conversions_round_trip_every_recording() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for fixture in fixture_files("fixtures/recordings") {
        let name = fixture.to_string_lossy().into_owned();
        if !name.ends_with(".jsonl") || name.contains("-invalid") {
            continue;
        }
        let sse = dir.path().join("a.sse");
        let json = dir.path().join("b.json.zst");
        let jsonl = dir.path().join("c.jsonl.gz");
        let (sse, json, jsonl) = (
            sse.to_str().unwrap(),
            json.to_str().unwrap(),
            jsonl.to_str().unwrap(),
        );
        cat(&[&name, "-o", sse]);
        cat(&[sse, "-o", json]);
        cat(&[json, "-o", jsonl]);
        let back = cat(&[jsonl]);
        let original = std::fs::read_to_string(root().join(&fixture)).unwrap();
        assert_eq!(
            back.lines().collect::<Vec<_>>(),
            original.lines().collect::<Vec<_>>(),
            "{name}: JSONL → SSE → JSON (zstd) → JSONL (gzip) changed the events"
        );
        // Every intermediate form is a valid stream to `check` too.
        for form in [sse, json] {
            let (code, stdout, _) = run(&["check", "--color", "never", form]);
            let (original_code, _, _) = run(&["check", "--color", "never", &name]);
            assert_eq!(code, original_code, "{name} as {form}:\n{stdout}");
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} recordings");
}

#[test]
fn conversions_as_written() {
    let slice = ["--run", "run-full-1", "--from", "0", "--to", "2", FULL];
    let mut sse = vec!["--output-format", "sse"];
    sse.extend_from_slice(&slice);
    let mut json = vec!["--output-format", "json"];
    json.extend_from_slice(&slice);
    insta::assert_snapshot!(
        "cat_forms",
        format!(
            "--- jsonl\n{}--- sse\n{}--- json\n{}",
            cat(&slice),
            cat(&sse),
            cat(&json)
        )
    );
    // Nothing kept is still a valid JSON array, and fails as a selection that kept nothing.
    let (code, stdout, stderr) = run(&["cat", "--output-format", "json", "--type", "NOPE", FULL]);
    assert_eq!((code, stdout.as_str()), (1, "[]\n"), "{stderr}");
}

#[test]
fn multi_line_frames_become_one_jsonl_line() {
    // The SSE capture splits one event over two data: fields; JSONL needs it on one line.
    // (Its last frames are parted by CR LF, which the official client reads as one: said.)
    let (code, out, stderr) = run(&["cat", "fixtures/recordings/agui-sdk-sse-edge.sse"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("sse-frames-merged"), "{stderr}");
    assert_eq!(out.lines().count(), 5, "{out}");
    for line in out.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    assert!(out.contains(r#""delta":"line one\nline two, with unicode: café ☃""#));
}

#[test]
fn slices() {
    let text = cat(&["--type", "TEXT_*", "--type", "custom", FULL]);
    insta::assert_snapshot!("cat_types", text);
    let range = cat(&["--from", "16", "--to", "18", FULL]);
    let types: Vec<String> = range
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        types,
        [
            r#""TOOL_CALL_CHUNK""#,
            r#""TOOL_CALL_CHUNK""#,
            r#""TOOL_CALL_RESULT""#
        ]
    );
    // A run: its RUN_STARTED through its end, nothing of the other run.
    let dir = tempfile::tempdir().unwrap();
    let both = dir.path().join("two-runs.jsonl");
    let mut text = std::fs::read_to_string(root().join(FULL)).unwrap();
    text.push_str(
        &std::fs::read_to_string(root().join("fixtures/recordings/agui-sdk-multiturn-2.jsonl"))
            .unwrap(),
    );
    std::fs::write(&both, text).unwrap();
    let second = cat(&["--run", "run-full-2", both.to_str().unwrap()]);
    let lines: Vec<&str> = second.lines().collect();
    assert_eq!(lines.len(), 11, "{second}");
    assert!(lines[0].contains("RUN_STARTED") && lines[0].contains("run-full-2"));
    assert!(lines[10].contains("RUN_FINISHED"));
    let first = cat(&["--run", "run-full-1", both.to_str().unwrap()]);
    assert_eq!(first.lines().count(), 33, "{first}");
}

/// A RUN_ERROR after a run's RUN_FINISHED (a late failure, 1.1) ends that run in error, as a
/// client treats it: the run's slice keeps it, and folds to the run's true end.
#[test]
fn a_run_keeps_its_late_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.1"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
            "\n",
            r#"{"type":"RUN_ERROR","message":"late failure"}"#,
            "\n",
            r#"{"type":"RUN_ERROR","message":"one too many"}"#,
            "\n",
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r2","protocolVersion":"1.1"}"#,
            "\n",
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r2"}"#,
            "\n",
            r#"{"type":"RUN_ERROR","message":"r2 failed late"}"#,
            "\n",
        ),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let first = cat(&["--run", "r1", path]);
    assert_eq!(first.lines().count(), 3, "{first}");
    assert!(
        first.lines().last().unwrap().contains("late failure"),
        "{first}"
    );
    let second = cat(&["--run", "r2", path]);
    assert_eq!(second.lines().count(), 3, "{second}");
    assert!(second.contains("r2 failed late"), "{second}");
    // A line that cannot be read between the run's end and its late failure may be the
    // run's: the slice says it may not be whole (it was left out in silence, exit 0).
    let broken = dir.path().join("broken.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, r#"{"type":"TEXT_MESSAGE_CONTENT","#);
    std::fs::write(&broken, lines.join("\n") + "\n").unwrap();
    let (code, stdout, stderr) = run(&["cat", "--run", "r1", broken.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("late failure"), "{stdout}");
    // Its fold says what the whole stream's says of it.
    let out = dir.path().join("r1.jsonl");
    cat(&["--run", "r1", path, "-o", out.to_str().unwrap()]);
    let (_, folded, _) = run(&["fold", out.to_str().unwrap()]);
    let folded: serde_json::Value = serde_json::from_str(&folded).unwrap();
    assert_eq!(folded["runs"][0]["status"], "error", "{folded}");
}

/// `-o` over an existing file replaces it whole, keeping its permissions, and leaves no temp
/// file beside it.
#[test]
fn an_output_replaced_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.sse");
    std::fs::write(&out, EARLIER).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let sse = cat(&[FULL, "-o", out.to_str().unwrap()]);
    assert!(sse.is_empty(), "{sse}");
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    let back = cat(&[out.to_str().unwrap()]);
    assert_eq!(back, std::fs::read_to_string(root().join(FULL)).unwrap());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file left"
    );
}

#[test]
fn refusals() {
    let (code, _, stderr) = run(&["cat", FULL, "-o", FULL]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is the input"), "{stderr}");
    let (code, _, stderr) = run(&["cat", FULL, "-o", "out.txt"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--output-format"), "{stderr}");
    assert!(!root().join("out.txt").exists());
    let (code, _, stderr) = run(&["cat", "--from", "5", "--to", "2", FULL]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--from 5 is after --to 2"), "{stderr}");
    let (code, _, stderr) = run(&["cat", "no/such.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such.jsonl"), "{stderr}");
}

/// A FIFO given as the output is written into and stays a FIFO (renaming a file over it, as
/// over `/dev/null`, would leave a plain file in its place).
#[test]
fn an_output_that_is_a_fifo_is_written_into() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("out.jsonl");
    let reader = fifo(&pipe);
    cat(&[FULL, "-o", pipe.to_str().unwrap()]);
    // Checked first: had the FIFO been replaced, nothing would ever reach the reader.
    let kind = std::fs::symlink_metadata(&pipe).unwrap().file_type();
    assert!(kind.is_fifo(), "{kind:?}");
    assert_eq!(
        String::from_utf8(reader.join().unwrap()).unwrap(),
        cat(&[FULL])
    );

    // A pipe whose name tells no format gets what stdout gets.
    let bare = dir.path().join("pipe");
    let reader = fifo(&bare);
    cat(&[FULL, "-o", bare.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8(reader.join().unwrap()).unwrap(),
        cat(&[FULL])
    );
    cat(&[FULL, "-o", "/dev/null"]);
    // A file is named for its format, or the format is given.
    let named = dir.path().join("out.txt");
    let (code, _, stderr) = run(&["cat", FULL, "-o", named.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot tell the output format"), "{stderr}");
    assert!(!named.exists());
}

/// `--run` naming no run of the input is said, and fails (exit 1): a slice that matched
/// nothing is not a copy. An output file is left as it was.
#[test]
fn a_run_that_is_not_there_is_said_and_fails() {
    let (code, stdout, stderr) = run(&["cat", "--run", "nope", FULL]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("no run \"nope\" in fixtures/recordings/agui-sdk-full.jsonl"),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kept.jsonl");
    std::fs::write(&out, EARLIER).unwrap();
    let (code, _, stderr) = run(&["cat", "--run", "nope", FULL, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("was left as it was"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), EARLIER);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file left"
    );
}

/// A run another run's events cut into (a second RUN_STARTED before the first run's end, or
/// another run's RUN_FINISHED in its place) is not copied whole, and that is said (exit 1):
/// `--run r1` wrote r1's first two events, `--run r2` ran on to r1's RUN_FINISHED, exit 0.
#[test]
fn a_run_cut_into_by_another_is_said_not_whole() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tangled.jsonl");
    let lines = [
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
        r#"{"type":"RUN_STARTED","threadId":"t2","runId":"r2"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m2"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t2","runId":"r2"}"#,
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let input = input.to_str().unwrap();
    for (run_id, said) in [
        ("r1", "run r1 had not ended when run r2 began"),
        ("r2", "run r2 was ended by the RUN_FINISHED of run r1"),
    ] {
        let (code, stdout, stderr) = run(&["cat", "--run", run_id, input]);
        assert_eq!(code, 1, "{run_id}: {stdout}{stderr}");
        assert!(stderr.contains(said), "{run_id}: {stderr}");
        assert!(stderr.contains("not all of run"), "{run_id}: {stderr}");
    }
    // A run with no runId, or the run itself again, before its end.
    for (second, said) in [
        (
            r#"{"type":"RUN_STARTED","threadId":"t1"}"#,
            "run r1 had not ended when a run with no runId began",
        ),
        (
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
            "run r1 began again before its end",
        ),
    ] {
        let lines = [
            lines[0],
            r#"{"type":"STEP_STARTED","stepName":"a"}"#,
            second,
            r#"{"type":"STEP_FINISHED","stepName":"a"}"#,
            lines[5],
            r#"{"type":"STEP_STARTED","stepName":"b"}"#,
            lines[5],
        ];
        let input = dir.path().join("again.jsonl");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let (code, stdout, stderr) = run(&["cat", "--run", "r1", input.to_str().unwrap()]);
        assert_eq!(code, 1, "{second}: {stdout}{stderr}");
        assert!(stderr.contains(said), "{second}: {stderr}");
    }
    // A stream of runs one after the other is copied as before.
    cat(&["--run", "run-full-1", FULL]);
}

/// A selection that keeps no event (`--from` past the end, a `--type` no event has, a run's
/// events of no such type) fails as `--run nope` does: said, exit 1, an output file left as it
/// was. It used to write an empty file and exit 0, which `fold` then calls no stream.
#[test]
fn a_selection_that_keeps_nothing_is_said_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kept.jsonl");
    std::fs::write(&out, EARLIER).unwrap();
    let out = out.to_str().unwrap();
    for selection in [
        vec!["--from", "1000"],
        vec!["--type", "NOPE_*"],
        vec!["--to", "3", "--type", "RUN_FINISHED"],
    ] {
        let mut args = vec!["cat"];
        args.extend(&selection);
        args.push(FULL);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 1, "{selection:?}: {stderr}");
        assert_eq!(stdout, "");
        assert!(
            stderr.contains("kept no event of"),
            "{selection:?}: {stderr}"
        );
        args.extend(["-o", out]);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 1, "{selection:?}: {stderr}");
        assert!(stderr.contains("was left as it was"), "{stderr}");
        assert_eq!(std::fs::read_to_string(out).unwrap(), EARLIER);
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temp files left"
    );
    // A selection that keeps something is a copy.
    let (code, stdout, _) = run(&["cat", "--type", "RUN_*", FULL]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 2);
}

/// A frame that cannot be read as an event (a line cut off, not JSON) is left out of the
/// copy; when it falls in what was asked for, the output is not the whole of it, and the copy
/// fails (exit 1), so `cat in -o out && rm in` loses nothing. One outside the range asked for
/// costs nothing but the warning.
#[test]
fn a_frame_that_could_not_be_read_fails_the_copy_it_falls_in() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mid.jsonl");
    std::fs::write(
        &input,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\
         not json\n\
         {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\
         {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"s\"}\n\
         {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"s\"}\n\
         {\"type\":\"RUN_STA",
    )
    .unwrap();
    let input = input.to_str().unwrap();
    let out = dir.path().join("out.sse");
    let out = out.to_str().unwrap();
    for args in [
        vec![input],
        vec![input, "-o", out],
        vec![input, "--from", "1", "--to", "1"],
        vec![input, "--type", "RUN_STARTED"],
        vec![input, "--run", "r"],
        vec![input, "--from", "3"],
    ] {
        let mut all = vec!["cat"];
        all.extend_from_slice(&args);
        let (code, _, stderr) = run(&all);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.contains("not the whole"), "{args:?}: {stderr}");
    }
    // What could be read is still written.
    assert_eq!(
        std::fs::read_to_string(out)
            .unwrap()
            .matches("data:")
            .count(),
        4
    );
    for args in [
        vec![input, "--run", "s"],
        vec![input, "--from", "2", "--to", "4"],
        vec![input, "--to", "0"],
    ] {
        let mut all = vec!["cat"];
        all.extend_from_slice(&args);
        let (code, _, stderr) = run(&all);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
}

/// An event holding half a UTF-16 pair (`"\ud83d"`, what a JavaScript agent slicing text by
/// UTF-16 units sends) is JSON the official client reads: `cat` copies it as it was, through
/// every text form and back, and a multi-line one written on one line keeps its escape. Only
/// protobuf, whose strings are UTF-8, cannot carry it, and says so. It was left out as a frame
/// that could not be read, and the copy, a message shorter, then checked clean.
#[test]
fn an_event_holding_half_a_utf16_pair_is_copied_as_it_is() {
    let lone = root().join("fixtures/invalid/framing/lone-surrogate.jsonl");
    let original = std::fs::read_to_string(&lone).unwrap();
    assert!(original.contains(r"\ud83d"), "{original}");
    let dir = tempfile::tempdir().unwrap();
    let sse = dir.path().join("a.sse");
    let json = dir.path().join("b.json");
    let (sse, json) = (sse.to_str().unwrap(), json.to_str().unwrap());
    cat(&[lone.to_str().unwrap(), "-o", sse]);
    cat(&[sse, "-o", json]);
    let back = cat(&[json]);
    assert_eq!(
        back.lines().collect::<Vec<_>>(),
        original.lines().collect::<Vec<_>>()
    );
    // A pretty-printed event, made one line.
    let pretty = dir.path().join("pretty.json");
    let events: Vec<String> = original.lines().map(str::to_owned).collect();
    std::fs::write(
        &pretty,
        format!(
            "[\n{}\n]\n",
            events.join(",\n").replace(",\"delta\"", ",\n  \"delta\"")
        ),
    )
    .unwrap();
    let one_line = cat(&[pretty.to_str().unwrap(), "--output-format", "jsonl"]);
    assert!(one_line.contains(r#""delta":"Done \ud83d""#), "{one_line}");
    assert_eq!(one_line.lines().count(), events.len(), "{one_line}");

    let pb = dir.path().join("c.pb");
    let (code, _, stderr) = run(&["cat", lone.to_str().unwrap(), "-o", pb.to_str().unwrap()]);
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("UTF-16"), "{stderr}");
}

/// SSE frames the official client reads as one (parted by CR LF, not two LFs: it ends the
/// stream there) are copied as the events they hold, but the copy, framed with LF, reads
/// whole: `cat` says so and fails (exit 1), as the copy is not what a client reads of the
/// input; `fold` says so too. Both used to say nothing, and `check` of the copy passed.
#[test]
fn a_copy_of_frames_the_client_reads_as_one_says_it_reads_otherwise() {
    let merged = root().join("fixtures/invalid/framing/sse-frames-merged.sse");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.jsonl");
    let (code, _, stderr) = run(&[
        "cat",
        merged.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("sse-frames-merged") && stderr.contains("line 1"),
        "{stderr}"
    );
    // Nothing is lost: the events are all there.
    assert_eq!(std::fs::read_to_string(&copy).unwrap().lines().count(), 5);
    let (code, stdout, stderr) = run(&["fold", merged.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Hello"), "{stdout}");
    assert!(stderr.contains("sse-frames-merged"), "{stderr}");
    // A capture framed as the client frames it: nothing said.
    let (code, _, stderr) = run(&["cat", "fixtures/recordings/agui-sdk-full.sse"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// A `.json` file is read as JSON values one after another, as its name says, also when the
/// first value fits on one line and the next are pretty-printed (it was read as JSON Lines:
/// one false `framing/invalid-json` per line of the second, and `cat` lost it). A `.json` file
/// that is JSON Lines stays JSON Lines, a broken line in it one finding.
#[test]
fn a_json_file_is_read_as_json_values_whatever_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let pretty = dir.path().join("run.json");
    std::fs::write(
        &pretty,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
            "\n{\n  \"type\": \"RUN_FINISHED\",\n  \"threadId\": \"t1\",\n  \"runId\": \"r1\"\n}\n",
        ),
    )
    .unwrap();
    let pretty = pretty.to_str().unwrap();
    let (code, stdout, stderr) = run(&["check", pretty]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("2 events: 0 errors"), "{stdout}");
    let lines = cat(&[pretty, "--output-format", "jsonl"]);
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(lines.contains("RUN_FINISHED"), "{lines}");

    let jsonl = dir.path().join("lines.json");
    std::fs::write(
        &jsonl,
        concat!(
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
            "\n{\"type\":\"TEXT_MESSAGE_START\",\n",
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#,
            "\n",
        ),
    )
    .unwrap();
    let (code, stdout, _) = run(&["check", jsonl.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("2 events: 1 error"), "{stdout}");
}

/// An event over several lines (SSE `data:` lines, a pretty-printed JSON value) is put on one
/// JSONL line with only the whitespace between its tokens taken out: a key given twice and a
/// number as it was spelled stay, so the copy checks as the original does (read and written
/// again, the first key was lost, and with it the `framing/duplicate-key` warning).
#[test]
fn an_event_put_on_one_line_keeps_what_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let sse = dir.path().join("multi.sse");
    std::fs::write(
        &sse,
        concat!(
            "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n",
            "data: {\"type\":\"STATE_SNAPSHOT\",\n",
            "data:  \"snapshot\": {\"dup\": 1, \"dup\": 2, \"n\": 1E2, \"s\": \"a  b\"}}\n\n",
            "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n",
        ),
    )
    .unwrap();
    let out = dir.path().join("copy.jsonl");
    cat(&[sse.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let copy = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        copy.lines().nth(1).unwrap(),
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"dup":1,"dup":2,"n":1E2,"s":"a  b"}}"#
    );
    for path in [&sse, &out] {
        let (code, stdout, _) = run(&["check", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{stdout}");
        assert!(stdout.contains("framing/duplicate-key"), "{stdout}");
    }
}
