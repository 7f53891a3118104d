//! `--baseline`: a team adopts agui-lens on captures (or an agent) with known findings, and
//! fails only on new ones.

use std::path::Path;

use serde_json::Value;

use crate::common::{agui_lens, split};

const KNOWN: &str = concat!(
    r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}"#,
    "\n",
    r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
    "\n",
    r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant","mood":"calm"}"#,
    "\n",
    r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
    "\n",
    r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    "\n",
);

fn check(dir: &Path, args: &[&str]) -> (i32, String, String) {
    split(
        agui_lens()
            .current_dir(dir)
            .args(["check", "captures", "--color", "never"])
            .args(args)
            .output()
            .unwrap(),
    )
}

fn rules_in(json: &str) -> Vec<String> {
    let doc: Value = serde_json::from_str(json).unwrap();
    doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d["rule"].as_str().unwrap(), d["line"]))
        .collect()
}

#[test]
fn a_baseline_holds_back_known_findings_and_fails_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    std::fs::write(dir.join("captures/a.jsonl"), KNOWN).unwrap();

    // Today: an error and a warning.
    let (code, stdout, _) = check(dir, &["--format", "json"]);
    assert_eq!(code, 1);
    assert_eq!(
        rules_in(&stdout),
        ["pairing/tool-call 2", "schema/unknown-field 3"]
    );

    // A baseline that is not there is an error, not an empty baseline.
    let (code, _, stderr) = check(dir, &["--baseline", "known.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("write one with --update-baseline"),
        "{stderr}"
    );

    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("wrote known.json: 2 findings recorded"),
        "{stderr}"
    );
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(dir.join("known.json")).unwrap()).unwrap();
    assert_eq!(recorded["findings"].as_array().unwrap().len(), 2);
    assert!(
        !std::fs::read_to_string(dir.join("known.json"))
            .unwrap()
            .contains("\"line\""),
        "findings are recorded without their lines"
    );

    // Held back: clean, in every format.
    for format in ["human", "json", "sarif", "junit", "github"] {
        let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        let shown = match format {
            "json" => rules_in(&stdout).len(),
            "sarif" => {
                // Held findings stay in SARIF, marked as suppressed by the baseline.
                let sarif: Value = serde_json::from_str(&stdout).unwrap();
                let results = sarif["runs"][0]["results"].as_array().unwrap();
                let held: Vec<&Value> = results
                    .iter()
                    .filter(|r| r["suppressions"][0]["kind"] == "external")
                    .collect();
                assert_eq!(held.len(), 2, "{stdout}");
                assert!(
                    held.iter()
                        .all(|r| r["partialFingerprints"]["agui-lens/v2"].is_string())
                );
                results.len() - held.len()
            }
            "junit" => stdout.matches("<failure").count(),
            "github" => stdout.matches("::error").count() + stdout.matches("::warning").count(),
            _ => {
                stdout.matches("pairing/tool-call").count()
                    + stdout.matches("schema/unknown-field").count()
            }
        };
        assert_eq!(shown, 0, "{format}: {stdout}");
        assert!(stderr.contains("2 known findings held back"), "{stderr}");
    }

    // The findings move down three lines: still the recorded ones.
    std::fs::write(dir.join("captures/a.jsonl"), format!("\n\n\n{KNOWN}")).unwrap();
    let (code, stdout, _) = check(dir, &["--format", "json"]);
    assert_eq!(code, 1);
    assert_eq!(
        rules_in(&stdout),
        ["pairing/tool-call 5", "schema/unknown-field 6"]
    );
    let (code, stdout, stderr) = check(dir, &["--baseline", "known.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");

    // A new finding of a recorded rule fails, and only it is shown, in every format.
    let new = KNOWN.replace(
        "{\"type\":\"RUN_FINISHED\"",
        "{\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"c2\"}\n{\"type\":\"RUN_FINISHED\"",
    );
    std::fs::write(dir.join("captures/a.jsonl"), new).unwrap();
    let (code, stdout, _) = check(dir, &["--baseline", "known.json", "--format", "json"]);
    assert_eq!(code, 1);
    assert_eq!(rules_in(&stdout), ["pairing/tool-call 5"]);
    assert!(stdout.contains("c2"), "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["summary"]["errors"], 1, "held findings are not counted");
    assert_eq!(doc["summary"]["warnings"], 0);
    let (code, stdout, _) = check(dir, &["--baseline", "known.json", "--format", "sarif"]);
    assert_eq!(code, 1);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let unsuppressed: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("suppressions").is_none())
        .collect();
    assert_eq!(unsuppressed.len(), 1);
    assert!(
        unsuppressed[0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("c2")
    );
    let (code, stdout, _) = check(dir, &["--baseline", "known.json", "--format", "junit"]);
    assert_eq!(code, 1);
    assert_eq!(stdout.matches("<failure").count(), 1, "{stdout}");

    // Fixed findings are said, and dropped when the baseline is rewritten.
    std::fs::write(
        dir.join("captures/a.jsonl"),
        KNOWN.replace(",\"mood\":\"calm\"", ""),
    )
    .unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json"]);
    assert_eq!(code, 0);
    assert!(stderr.contains("1 recorded no longer found"), "{stderr}");
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0);
    assert!(stderr.contains("1 finding recorded"), "{stderr}");

    // An input with no events is never adopted: recording fails on it, and it still fails.
    std::fs::write(dir.join("captures/empty.jsonl"), "").unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 1, "{stderr}");
    let (code, stdout, _) = check(dir, &["--baseline", "known.json", "--format", "json"]);
    assert_eq!(code, 1);
    assert_eq!(rules_in(&stdout), ["framing/no-events 1"]);
    std::fs::remove_file(dir.join("captures/empty.jsonl")).unwrap();

    // A baseline that is not one is an error.
    std::fs::write(dir.join("bad.json"), "[1, 2]").unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "bad.json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not an agui-lens baseline"), "{stderr}");
    // Said in the baseline's own words, not the parser's type names.
    assert!(
        stderr.contains("a JSON object with \"version\" and \"findings\"")
            && !stderr.contains("struct"),
        "{stderr}"
    );
}

/// An agent whose every run holds one unknown field (a warning, an error where a case denies
/// `schema/unknown-field`).
fn agent_with_an_unknown_field() -> crate::common::server::Server {
    use crate::common::server::{Script, Server, Step, clean_run};
    let odd = String::from_utf8(clean_run()).unwrap().replacen(
        "\"role\":\"assistant\"",
        "\"role\":\"assistant\",\"mood\":\"calm\"",
        1,
    );
    Server::start(Script::sse(vec![Step::Send(odd.into_bytes())]))
}

#[test]
fn a_suite_adopts_a_baseline_too() {
    let server = agent_with_an_unknown_field();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            "[[case]]\nname = \"strict\"\nurl = \"{}\"\nmessage = \"hi\"\ndeny = [\"schema/unknown-field\"]\n",
            server.url("/")
        ),
    )
    .unwrap();
    let test = |args: &[&str]| {
        split(
            agui_lens()
                .current_dir(dir)
                .args(["test", "suite.toml", "--color", "never"])
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let (code, stdout, _) = test(&[]);
    assert_eq!(code, 1, "{stdout}");
    let (code, stdout, stderr) = test(&["--baseline", "suite-known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The report goes into a folder made for it, as CI jobs name one.
    let (code, stdout, stderr) =
        test(&["--baseline", "suite-known.json", "--junit", "reports/j.xml"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("case strict ... ok"), "{stdout}");
    let junit = std::fs::read_to_string(dir.join("reports/j.xml")).unwrap();
    assert!(!junit.contains("<failure"), "{junit}");
    // SARIF still carries the held finding, suppressed, at the case's line.
    let (code, stdout, _) = test(&["--baseline", "suite-known.json", "--format", "sarif"]);
    assert_eq!(code, 0);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{stdout}");
    assert_eq!(results[0]["ruleId"], "schema/unknown-field");
    assert_eq!(results[0]["suppressions"][0]["kind"], "external");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
}

/// A suite recorded in part (`--case`), or a second suite recorded into the same baseline,
/// keeps what the baseline held of the cases it did not run: it replaced the whole file, and
/// the next full run failed on findings known and recorded.
#[test]
fn a_suite_recorded_in_part_keeps_the_other_cases_findings() {
    let server = agent_with_an_unknown_field();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let case = |name: &str| {
        format!(
            "[[case]]\nname = \"{name}\"\nurl = \"{}\"\nmessage = \"hi\"\ndeny = [\"schema/unknown-field\"]\n",
            server.url("/")
        )
    };
    std::fs::write(
        dir.join("suite.toml"),
        case("one") + &case("two") + &case("two (slow)"),
    )
    .unwrap();
    std::fs::write(dir.join("other.toml"), case("one")).unwrap();
    let test = |args: &[&str]| {
        split(
            agui_lens()
                .current_dir(dir)
                .args(["test", "--color", "never"])
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let known = ["--baseline", "ci/known.json"];
    let record = |args: &[&str]| {
        let mut all = vec![args[0]];
        all.extend(known);
        all.push("--update-baseline");
        all.extend(&args[1..]);
        let (code, stdout, stderr) = test(&all);
        assert_eq!(code, 0, "{stdout}{stderr}");
        stderr
    };
    let held = |suite: &str| {
        let (code, stdout, stderr) = test(&[suite, known[0], known[1]]);
        (code, format!("{stdout}{stderr}"))
    };
    let stderr = record(&["suite.toml"]);
    assert!(stderr.contains("3 findings recorded"), "{stderr}");
    assert_eq!(held("suite.toml").0, 0);
    // Keyed by the suite and the case, named from the baseline's folder.
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ci/known.json")).unwrap()).unwrap();
    let keys: Vec<&str> = written["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            r#"../suite.toml (case "one")"#,
            r#"../suite.toml (case "two (slow)")"#,
            r#"../suite.toml (case "two")"#
        ]
    );
    // Another suite's case of the same name is not this one: never recorded, it fails.
    let (code, out) = held("other.toml");
    assert_eq!(code, 1, "{out}");
    // One case recorded again: the other two are kept, and said to be.
    let stderr = record(&["suite.toml", "--case", "one"]);
    assert!(
        stderr.contains("3 findings recorded (2 of cases not run here, or of other inputs, kept"),
        "{stderr}"
    );
    let (code, out) = held("suite.toml");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("3 known findings held back"), "{out}");
    // A case whose name begins as another's is not that case.
    let stderr = record(&["suite.toml", "--case", "two"]);
    assert!(stderr.contains("(2 of cases not run here"), "{stderr}");
    let (code, out) = held("suite.toml");
    assert_eq!(code, 0, "{out}");
    // Recorded into the same file, it keeps this one's.
    let stderr = record(&["other.toml"]);
    assert!(stderr.contains("(3 of cases not run here"), "{stderr}");
    let (code, out) = held("suite.toml");
    assert_eq!(code, 0, "{out}");
    let (code, out) = held("other.toml");
    assert_eq!(code, 0, "{out}");
    // Held or not, a run speaks only of its own cases' findings as no longer found.
    assert!(!out.contains("no longer found"), "{out}");

    // A baseline of version 4 keyed a case by its name alone: it is read so, and said to be;
    // recorded again, its entries are replaced by the suite's keys.
    let legacy: Vec<Value> = keys
        .iter()
        .zip(written["findings"].as_array().unwrap())
        .map(|(key, entry)| {
            let name = key
                .strip_prefix(r#"../suite.toml (case ""#)
                .and_then(|k| k.strip_suffix("\")"))
                .unwrap();
            let mut entry = entry.clone();
            entry["path"] = Value::from(format!("../{name}"));
            entry
        })
        .collect();
    let legacy = serde_json::json!({"version": 4, "findings": legacy});
    std::fs::write(dir.join("ci/known.json"), legacy.to_string()).unwrap();
    let (code, out) = held("suite.toml");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("keys a suite's cases by their names alone (version 4)"),
        "{out}"
    );
    // Recorded in part, it is written as version 5 with the cases not run kept by name: they
    // still hold those cases' findings back (they failed the next full run).
    record(&["suite.toml", "--case", "one"]);
    let (code, out) = held("suite.toml");
    assert_eq!(code, 0, "{out}");
    let stderr = record(&["suite.toml"]);
    assert!(
        stderr.contains("wrote ci/known.json: 3 findings recorded\n"),
        "{stderr}"
    );
    let (code, out) = held("suite.toml");
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("names alone"), "{out}");
    let rewritten = std::fs::read_to_string(dir.join("ci/known.json")).unwrap();
    assert!(!rewritten.contains(r#""path": "../two""#), "{rewritten}");
}

/// A baseline is written as every file agui-lens writes: readable by whoever may read a new
/// file (0666 less the umask, not a temp file's 0600), into folders made as needed, and
/// nothing but the baseline is left beside it.
#[test]
fn a_baseline_is_written_like_any_other_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    std::fs::write(dir.join("captures/a.jsonl"), KNOWN).unwrap();
    let (code, _, stderr) = check(
        dir,
        &["--baseline", "ci/known/base.json", "--update-baseline"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("wrote ci/known/base.json: 2 findings recorded"),
        "{stderr}"
    );
    let written = dir.join("ci/known/base.json");
    // A file made with `File::create` here has the mode a new file gets under this umask.
    let probe = dir.join("probe");
    std::fs::File::create(&probe).unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&written), mode(&probe));
    let beside: Vec<_> = std::fs::read_dir(dir.join("ci/known"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["base.json"]);
    // And the run holds the findings back with it.
    let (code, _, stderr) = check(dir, &["--baseline", "ci/known/base.json"]);
    assert_eq!(code, 0, "{stderr}");
}

/// A followed file has no end: a baseline recorded from it held none of its findings (an
/// empty file, passed), and one given was not applied. The two are refused together.
#[test]
fn a_followed_file_takes_no_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("run.jsonl");
    std::fs::copy(
        crate::common::root().join("fixtures/recordings/copilotkit-tool-error.jsonl"),
        &stream,
    )
    .unwrap();
    for update in [true, false] {
        let mut args = vec![
            "check",
            "--follow",
            "run.jsonl",
            "--idle-timeout",
            "1",
            "--baseline",
            "base.toml",
        ];
        if update {
            args.push("--update-baseline");
        }
        let (code, _, stderr) = split(
            agui_lens()
                .current_dir(dir.path())
                .args(&args)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("cannot be used with"), "{stderr}");
        assert!(!dir.path().join("base.toml").exists());
    }
}

/// `--update-baseline` with an input that cannot be read (gone, unreadable) leaves the
/// baseline as it was: written, it lost that input's findings, which the next run called
/// new.
#[test]
fn an_unreadable_input_records_no_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    let fixture = |name: &str| crate::common::root().join("fixtures/invalid").join(name);
    std::fs::copy(fixture("lifecycle/open-at-finish.jsonl"), &a).unwrap();
    std::fs::copy(fixture("schema/violation.jsonl"), &b).unwrap();
    let baseline = dir.path().join("base.json");
    let args = |extra: &[&str]| {
        let mut all = vec![
            "check",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
        ];
        all.extend_from_slice(extra);
        crate::common::run(&all)
    };
    let (code, _, stderr) = args(&["--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    let recorded = std::fs::read(&baseline).unwrap();
    std::fs::rename(&b, dir.path().join("away.jsonl")).unwrap();
    let (code, _, stderr) = args(&["--update-baseline"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("1 input could not be read"), "{stderr}");
    assert!(
        std::fs::read(&baseline).unwrap() == recorded,
        "the baseline was written"
    );
    std::fs::rename(dir.path().join("away.jsonl"), &b).unwrap();
    let (code, _, stderr) = args(&[]);
    assert_eq!(code, 0, "every finding is still known: {stderr}");
}

/// A baseline recorded with `check captures` holds the same findings when the folder is
/// named `./captures/`, `captures//` or by its absolute path: they were all new, since the
/// paths were compared as written.
#[test]
fn a_baseline_holds_however_the_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    std::fs::write(dir.join("captures/a.jsonl"), KNOWN).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    let absolute = dir.join("captures");
    for named in ["./captures/", "captures//", absolute.to_str().unwrap()] {
        let (code, stdout, stderr) = split(
            agui_lens()
                .current_dir(dir)
                .args([
                    "check",
                    named,
                    "--baseline",
                    "known.json",
                    "--format",
                    "json",
                ])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{named}: {stdout}{stderr}");
        assert!(rules_in(&stdout).is_empty(), "{named}: {stdout}");
    }
    // Reached through a link to its folder, a link to it or a hard link, the file is the one
    // recorded, and held back: it was said to be the recorded input ("no longer found") and
    // its findings failed the run.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("captures", dir.join("linked")).unwrap();
        std::fs::create_dir(dir.join("other")).unwrap();
        std::os::unix::fs::symlink("../captures/a.jsonl", dir.join("other/b.jsonl")).unwrap();
        std::fs::hard_link(dir.join("captures/a.jsonl"), dir.join("other/c.jsonl")).unwrap();
        let held = |named: &str, baseline: &str| {
            let (code, stdout, stderr) =
                check_in(dir, &[named, "--baseline", baseline, "--format", "json"]);
            assert_eq!(code, 0, "{named}: {stdout}{stderr}");
            assert!(rules_in(&stdout).is_empty(), "{named}: {stdout}");
            assert!(!stderr.contains("no longer found"), "{named}: {stderr}");
        };
        for named in ["linked/a.jsonl", "linked", "other/b.jsonl", "other/c.jsonl"] {
            held(named, "known.json");
        }
        // Recorded through the link, it holds the file by its own name too.
        let (code, _, stderr) = check_in(
            dir,
            &[
                "linked/a.jsonl",
                "--baseline",
                "through.json",
                "--update-baseline",
            ],
        );
        assert_eq!(code, 0, "{stderr}");
        held("captures/a.jsonl", "through.json");
    }
}

/// A suite's baseline holds a finding of the case it was found in: the same finding in
/// another case (one fixed, another broken the same way) is new, and fails. It used to be
/// held back, as a suite's finding was keyed by the suite file and message alone.
#[test]
fn a_suite_baseline_holds_a_finding_to_its_case() {
    use crate::common::server::{Script, Server, Step, clean_run};
    // A stream that ends inside its run (`lifecycle/unterminated-run`): the clean run without
    // its last frame, RUN_FINISHED.
    let whole = String::from_utf8(clean_run()).unwrap();
    let open = whole.as_bytes()[..whole.rfind("data: ").unwrap()].to_vec();
    let server = Server::routes(vec![
        ("/open", Script::sse(vec![Step::Send(open)])),
        ("/ok", Script::sse(vec![Step::Send(clean_run())])),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let suite = |failing: &str| {
        let case = |name: &str| {
            let route = if name == failing { "/open" } else { "/ok" };
            format!(
                "[[case]]\nname = \"{name}\"\nurl = \"{}\"\nmessage = \"hi\"\n\n",
                server.url(route)
            )
        };
        std::fs::write(dir.join("suite.toml"), case("first") + &case("second")).unwrap();
    };
    let test = |args: &[&str]| {
        split(
            agui_lens()
                .current_dir(dir)
                .args(["test", "suite.toml", "--color", "never"])
                .args(args)
                .output()
                .unwrap(),
        )
    };
    suite("first");
    let (code, stdout, stderr) = test(&["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = test(&["--baseline", "known.json"]);
    assert_eq!(
        code, 0,
        "the recorded finding is held back: {stdout}{stderr}"
    );
    suite("second");
    let (code, stdout, stderr) = test(&["--baseline", "known.json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("lifecycle/unterminated-run"), "{stdout}");
}

/// An agent that answers 500, or a redirect, sent no stream: a client reads no events from
/// such an answer. `transport/http-status` is never recorded in a baseline, so
/// `--update-baseline` fails and a later run with the baseline still fails, in every format
/// (it passed: the finding was held back, JUnit showed no failure, SARIF a success).
#[test]
fn an_answer_that_is_no_success_is_never_held_back() {
    use crate::common::server::{Script, Server};
    for (status, body) in [
        ("500 Internal Server Error", "{\"error\":\"boom\"}"),
        ("307 Temporary Redirect", ""),
    ] {
        let server = Server::start(Script::fixed(status, "application/json", body));
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::write(
            dir.join("suite.toml"),
            format!(
                "[[case]]\nname = \"c\"\nurl = \"{}\"\nmessage = \"hi\"\n",
                server.url("/")
            ),
        )
        .unwrap();
        let test = |args: &[&str]| {
            split(
                agui_lens()
                    .current_dir(dir)
                    .args(["test", "suite.toml", "--color", "never"])
                    .args(args)
                    .output()
                    .unwrap(),
            )
        };
        let (code, stdout, stderr) = test(&["--baseline", "known.json", "--update-baseline"]);
        assert_eq!(code, 1, "{status}: {stdout}{stderr}");
        for format in ["human", "junit", "sarif", "json"] {
            let (code, stdout, stderr) = test(&["--baseline", "known.json", "--format", format]);
            assert_eq!(code, 1, "{status}, {format}: {stdout}{stderr}");
            match format {
                "junit" => assert!(stdout.contains("<failure"), "{stdout}"),
                "sarif" => {
                    let sarif: Value = serde_json::from_str(&stdout).unwrap();
                    let results = sarif["runs"][0]["results"].as_array().unwrap();
                    assert!(
                        results
                            .iter()
                            .any(|r| r["ruleId"] == "transport/http-status"
                                && r.get("suppressions").is_none()),
                        "{stdout}"
                    );
                }
                _ => assert!(stdout.contains("transport/http-status"), "{stdout}"),
            }
        }
    }
}

/// A number in a name is part of the name: a patch that fails on `/x2`, or a message `msg-2`
/// never started, is another finding than the one recorded on `/x1` or `msg-1`, and fails. The
/// first baselines took every digit out of the message, and held either back by the other.
/// Positions (a line, an event's index) are still taken out: a finding that moved is known.
#[test]
fn a_number_inside_a_name_tells_findings_apart() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    let stream = |failing: &[&str]| {
        let mut text = String::from(concat!(
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}"#,
            "\n",
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}"#,
            "\n",
        ));
        for what in failing {
            text.push_str(&format!(
                "{{\"type\":\"STATE_DELTA\",\"delta\":[{{\"op\":\"replace\",\"path\":\"/{what}\",\"value\":1}}]}}\n\
                 {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m-{what}\",\"delta\":\"hi\"}}\n"
            ));
        }
        text.push_str(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#);
        text.push('\n');
        text
    };
    std::fs::write(dir.join("captures/a.jsonl"), stream(&["x1"])).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    let recorded = std::fs::read_to_string(dir.join("known.json")).unwrap();
    assert!(recorded.contains("\"version\": 5"), "{recorded}");

    // The same findings, moved down: held back.
    std::fs::write(
        dir.join("captures/a.jsonl"),
        stream(&["x1"]).replacen(
            "\n",
            "\n{\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}\n{\"type\":\"STEP_FINISHED\",\"stepName\":\"s\"}\n",
            1,
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", "json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(rules_in(&stdout).is_empty(), "{stdout}");

    // /x1 fixed, /x2 broken the same way (and message m-x2 never started): new.
    std::fs::write(dir.join("captures/a.jsonl"), stream(&["x2"])).unwrap();
    let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", "json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(
        rules_in(&stdout),
        ["state/patch-failed 3", "pairing/text-message 4"],
        "{stdout}"
    );
    assert!(stderr.contains("2 recorded no longer found"), "{stderr}");
}

/// A baseline written by an earlier agui-lens (version 1) still holds what it held, and says
/// once per run how to rewrite it: its fingerprints cannot tell `/x1` from `/x2`.
#[test]
fn a_version_1_baseline_still_holds_and_says_how_to_rewrite_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    std::fs::write(dir.join("captures/a.jsonl"), KNOWN).unwrap();
    std::fs::write(dir.join("old.json"), r#"{"version":1,"findings":[]}"#).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "old.json"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("old.json is a version 1 baseline") && stderr.contains("--update-baseline"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A browser capture holding the calls to an agent in the order a page made them, each an
/// entry of the capture among other traffic.
fn capture(entries: &[(&str, &str)]) -> String {
    let entries: Vec<Value> = entries
        .iter()
        .map(|(method, body)| {
            let mut request = serde_json::json!({"method": method, "url": "https://app.example/agent", "headers": []});
            let mime = if *method == "POST" {
                request["postData"] = serde_json::json!({"mimeType": "application/json",
                    "text": r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#});
                "text/event-stream"
            } else {
                "application/json"
            };
            serde_json::json!({"startedDateTime": "2026-11-29T06:00:00.000Z", "time": 1,
                "request": request,
                "response": {"status": 200, "statusText": "OK", "headers": [],
                             "content": {"size": body.len(), "mimeType": mime, "text": body}}})
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "entries": entries}}).to_string()
}

/// The stream of one call: an orphan TOOL_CALL_END in it when `broken`.
fn call(broken: bool) -> String {
    let mut events = vec![r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#];
    if broken {
        events.push(r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#);
    }
    events.push(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#);
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// A browser capture's streams are held to their calls, not to the index of their entry: a
/// capture made again with another request in front (a health check) keeps its known
/// findings, and one without it does not lend the first call's findings to the second. Keyed
/// by the entry's index, every held finding came back as new in the first case, and in the
/// second a fault the second call gained was held back by the one the first call had lost.
#[test]
fn a_browser_capture_is_held_to_its_calls_not_its_entries_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    let har = dir.join("captures/session.har");
    let (broken, clean) = (call(true), call(false));
    let health = r#"{"ok":true}"#;

    // The first call is known to be broken.
    std::fs::write(&har, capture(&[("POST", &broken), ("POST", &clean)])).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    // Captured again, with a health check in front: the same finding of the same call.
    std::fs::write(
        &har,
        capture(&[("GET", health), ("POST", &broken), ("POST", &clean)]),
    )
    .unwrap();
    let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", "json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(rules_in(&stdout).is_empty(), "{stdout}");
    // The same call named by its entry, and by the capture's absolute path.
    let entry = format!("{}#1", har.display());
    let (code, stdout, stderr) = split(
        agui_lens()
            .current_dir(dir)
            .args([
                "check",
                &entry,
                "--baseline",
                "known.json",
                "--format",
                "json",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");

    // Recorded with the health check in front; captured again without it, the first call
    // fixed and the second broken the same way: a new finding.
    std::fs::write(
        &har,
        capture(&[("GET", health), ("POST", &broken), ("POST", &clean)]),
    )
    .unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    std::fs::write(&har, capture(&[("POST", &clean), ("POST", &broken)])).unwrap();
    for format in ["json", "sarif"] {
        let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", format]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        assert!(stdout.contains("pairing/tool-call"), "{format}: {stdout}");
    }
    let recorded = std::fs::read_to_string(dir.join("known.json")).unwrap();
    assert!(recorded.contains("\"version\": 5"), "{recorded}");
    // A call that failed (a 500) and was made again takes no number: the calls after it keep
    // theirs, and their known findings.
    std::fs::write(&har, capture(&[("POST", &clean), ("POST", &broken)])).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    let mut failed: Value = serde_json::from_str(&capture(&[
        ("POST", &clean),
        ("POST", &clean),
        ("POST", &broken),
    ]))
    .unwrap();
    failed["log"]["entries"][1]["response"] = serde_json::json!({"status": 500, "statusText": "Oops", "headers": [],
                           "content": {"mimeType": "text/plain", "text": "try again"}});
    std::fs::write(&har, failed.to_string()).unwrap();
    let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", "json"]);
    assert!(rules_in(&stdout).is_empty(), "{stdout}{stderr}");
    assert_eq!(code, 2, "the failed call fails the run: {stderr}");
    std::fs::write(&har, capture(&[("POST", &clean), ("POST", &broken)])).unwrap();
    let recorded = std::fs::read_to_string(dir.join("known.json")).unwrap();

    // A version 2 file keyed the calls by their entries: read so, and said.
    let by_entry = recorded
        .replace("\"version\": 5", "\"version\": 2")
        .replace(
            "session.har (POST https://app.example/agent, call 1)",
            "session.har#1 (POST https://app.example/agent)",
        );
    std::fs::write(dir.join("old.json"), by_entry).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "old.json"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("old.json keys the streams of browser captures by their entries' indexes"),
        "{stderr}"
    );
}

/// Inputs that hold no event, whose only findings a baseline holds (protobuf files cut inside
/// their first length), checked nothing: the run fails as one such input alone does. Among
/// several, the held findings were taken off after the run asked whether anything was
/// checked, and it passed ("checked 2 files, 0 events", exit 0).
#[test]
fn inputs_with_no_event_fail_whatever_a_baseline_holds_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    std::fs::write(dir.join("captures/a.pb"), [0u8, 0]).unwrap();
    std::fs::write(dir.join("captures/b.pb"), [0u8, 1]).unwrap();
    // Recorded, they do not pass the run either (`--help`: "unless no input held an event").
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 1, "{stderr}");
    for format in ["human", "json", "sarif", "junit"] {
        let (code, stdout, stderr) = check(dir, &["--baseline", "known.json", "--format", format]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(stderr.contains("nothing was checked"), "{format}: {stderr}");
    }
    // Beside a stream that was checked, they pass as any file with no event and no error.
    std::fs::write(dir.join("captures/c.jsonl"), KNOWN).unwrap();
    let (code, _, stderr) = check(dir, &["--baseline", "known.json", "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = check(dir, &["--baseline", "known.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// `--update-baseline` over a recording its recorder cut (a `.cut.txt` beside it) fails, and
/// leaves the baseline as it was: written, it held the findings of part of a stream, and the
/// run said "exit 2" while doing it.
#[test]
fn a_recording_cut_when_it_was_made_records_no_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    let whole = dir.path().join("whole.jsonl");
    let part = concat!(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant","mood":"calm"}"#,
        "\n",
    );
    std::fs::write(&cut, part).unwrap();
    std::fs::write(
        dir.path().join("cut.jsonl.cut.txt"),
        format!("stopped by SIGINT after 2 events\nsize: {}\n", part.len()),
    )
    .unwrap();
    std::fs::write(&whole, KNOWN).unwrap();
    let baseline = dir.path().join("base.json");
    let run = |extra: &[&str]| {
        let mut all = vec![
            "check",
            cut.to_str().unwrap(),
            whole.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
        ];
        all.extend_from_slice(extra);
        crate::common::run(&all)
    };
    let (code, stdout, stderr) = run(&["--update-baseline"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("cut"), "{stderr}");
    assert!(!baseline.exists(), "the baseline was written: {stderr}");
    // Alone, the whole stream records, and the cut one still fails beside it.
    let (code, stdout, stderr) = crate::common::run(&[
        "check",
        whole.to_str().unwrap(),
        "--baseline",
        baseline.to_str().unwrap(),
        "--update-baseline",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let recorded = std::fs::read(&baseline).unwrap();
    let (code, stdout, stderr) = run(&["--update-baseline"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(std::fs::read(&baseline).unwrap(), recorded, "{stderr}");
}

/// `check` in `dir`, the inputs as given.
fn check_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    split(
        agui_lens()
            .current_dir(dir)
            .args(["check", "--color", "never"])
            .args(args)
            .output()
            .unwrap(),
    )
}

/// A run of thread t1 holding `events` (JSONL lines, each with its line end) between its
/// start (protocol 1.0) and its end.
fn run_holding(events: &str) -> String {
    format!(
        "{}\n{events}{}\n",
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#
    )
}

/// A run with one error: a tool call ended that never started.
fn run_with_an_error() -> String {
    run_holding("{\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"c1\"}\n")
}

/// A baseline names its inputs from its own folder, so that it means the same from any
/// folder: recorded from a subfolder, `a.jsonl` there was taken for the `a.jsonl` recorded
/// from above, whose findings were replaced (the next run called them new), and a check from
/// the subfolder held nothing back.
#[test]
fn a_baseline_names_its_inputs_from_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_holding;
    let orphan = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m9","delta":"orphan"}"#;
    std::fs::write(dir.path().join("a.jsonl"), run(&format!("{orphan}\n"))).unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.jsonl"), run("")).unwrap();
    let record = ["--baseline", "known.json", "--update-baseline"];
    let (code, _, stderr) = check_in(dir.path(), &[&["a.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");
    let written = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(written.contains("\"version\": 5"), "{written}");

    // From the subfolder: its own a.jsonl is checked, the one above kept.
    let (code, _, stderr) = check_in(
        &sub,
        &[
            "a.jsonl",
            "--baseline",
            "../known.json",
            "--update-baseline",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("kept as they were"), "{stderr}");
    assert!(!stderr.contains("not found from this folder"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("known.json")).unwrap(),
        written
    );
    let (code, stdout, stderr) = check_in(dir.path(), &["a.jsonl", "--baseline", "known.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Held back from the subfolder as from above, and the baseline's own a.jsonl is still
    // the one above when the subfolder's is checked.
    let (code, stdout, stderr) = check_in(&sub, &["../a.jsonl", "--baseline", "../known.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("1 known finding held back"), "{stderr}");
    let (code, stdout, stderr) = check_in(&sub, &["a.jsonl", "--baseline", "../known.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stderr.contains("no longer found"), "{stderr}");

    // Recorded from the subfolder whole, the keys are still named from the baseline's folder.
    let (code, _, stderr) = check_in(
        &sub,
        &[
            "../a.jsonl",
            "a.jsonl",
            "--baseline",
            "../known.json",
            "--update-baseline",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("known.json")).unwrap(),
        written
    );

    // A name that begins with `#` or ` (` is a name, not what a capture's stream adds to its
    // file's (`sub/#x.jsonl` was kept as `sub#x.jsonl`, and a file of that name held back).
    let odd = "#x (1).jsonl";
    std::fs::write(sub.join(odd), run(&format!("{orphan}\n"))).unwrap();
    let (code, _, stderr) = check_in(
        &sub,
        &[odd, "--baseline", "../known.json", "--update-baseline"],
    );
    assert_eq!(code, 0, "{stderr}");
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(held.contains("\"sub/#x (1).jsonl\""), "{held}");
    let (code, stdout, stderr) = check_in(&sub, &[odd, "--baseline", "../known.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::write(
        dir.path().join("sub#x (1).jsonl"),
        run(&format!("{orphan}\n")),
    )
    .unwrap();
    let (code, stdout, stderr) =
        check_in(dir.path(), &["sub#x (1).jsonl", "--baseline", "known.json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");

    // Through a link to the baseline, its inputs are named from the folder of the file it
    // leads to.
    std::os::unix::fs::symlink(dir.path().join("known.json"), sub.join("link.json")).unwrap();
    let (code, stdout, stderr) = check_in(&sub, &["../a.jsonl", "--baseline", "link.json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("1 known finding held back"), "{stderr}");
}

/// A baseline in another folder than the one its inputs are checked from holds back what it
/// recorded, checked the same way again, and nothing else: a file named `..#1` was taken for
/// the folder `..` and what a capture adds (`#1`), and held back a file never recorded; an
/// input in a folder reached through a link was written by the folder the link leads to, and
/// its findings were new at every run.
#[test]
fn a_baseline_in_another_folder_holds_what_it_recorded_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let bad = run_with_an_error();
    for folder in ["sub", "other", "real"] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
    }
    std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
    for file in ["sub/..#1", "real/a.jsonl"] {
        std::fs::write(dir.path().join(file), &bad).unwrap();
    }
    for input in ["sub/..#1", "link/a.jsonl"] {
        let args = [input, "--baseline", "other/base.json"];
        let (code, _, stderr) = check_in(dir.path(), &[&args[..], &["--update-baseline"]].concat());
        assert_eq!(code, 0, "{input}: {stderr}");
        let (code, stdout, stderr) = check_in(dir.path(), &args);
        assert_eq!(code, 0, "{input}: {stdout}{stderr}");
    }
    // Named with a `..`, after a folder or after a link: the same command holds it back (its
    // key took the `..` back, the finding's did not), and the key names where the file is.
    std::fs::create_dir_all(dir.path().join("deep/in")).unwrap();
    std::os::unix::fs::symlink("deep/in", dir.path().join("lnk")).unwrap();
    std::fs::write(dir.path().join("deep/y.jsonl"), &bad).unwrap();
    for input in ["sub/../real/a.jsonl", "lnk/../y.jsonl"] {
        for baseline in ["other/dots.json", "dots.json"] {
            let args = [input, "--baseline", baseline];
            let (code, _, stderr) =
                check_in(dir.path(), &[&args[..], &["--update-baseline"]].concat());
            assert_eq!(code, 0, "{input} {baseline}: {stderr}");
            let (code, stdout, stderr) = check_in(dir.path(), &args);
            assert_eq!(code, 0, "{input} {baseline}: {stdout}{stderr}");
        }
    }
    let held = std::fs::read_to_string(dir.path().join("dots.json")).unwrap();
    assert!(held.contains("\"deep/y.jsonl\""), "{held}");
    // The link gone, another recording keeps the key where the file is, and a new file where
    // the `..` as written would lead is no recorded one.
    std::fs::remove_file(dir.path().join("lnk")).unwrap();
    std::fs::write(dir.path().join("sub/y.jsonl"), &bad).unwrap();
    let (code, _, stderr) = check_in(
        &dir.path().join("sub"),
        &["..#1", "--baseline", "../dots.json", "--update-baseline"],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = check_in(dir.path(), &["sub/y.jsonl", "--baseline", "dots.json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");

    // A file of the same name in the baseline's folder was never recorded.
    std::fs::write(dir.path().join("other/..#1"), &bad).unwrap();
    let (code, stdout, stderr) = check_in(
        &dir.path().join("other"),
        &["..#1", "--baseline", "base.json"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
}

/// Two runs recording into one baseline at once keep each other's findings: each kept what
/// the file held when it began, and the last to end wrote over what the other recorded.
#[test]
fn runs_recording_at_once_keep_each_others_findings() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let stream = |id: &str| {
        run_holding(&format!(
            "{{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"{id}\",\"delta\":\"x\"}}\n"
        ))
    };
    std::fs::write(dir.path().join("b.jsonl"), stream("m8")).unwrap();
    let record = ["--baseline", "known.json", "--update-baseline"];
    // The first reads its stream from stdin, which stays open while the second runs whole.
    let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .current_dir(dir.path())
        .args([&["check", "-", "--color", "never"][..], &record].concat())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = first.stdin.take().unwrap();
    input.write_all(stream("m9").as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (code, _, stderr) = check_in(dir.path(), &[&["b.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");
    drop(input);
    let out = first.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(
        held.contains("\"b.jsonl\"") && held.contains("\"-\""),
        "{held}"
    );
}

/// A run that waits for another recording into its baseline says so, and a stop meanwhile
/// ends it with the baseline as it was (it waited in silence through SIGTERM, then wrote).
/// A baseline the user may not write is replaced all the same, as any file written is.
#[test]
fn a_run_waiting_for_the_baseline_is_said_and_stopped() {
    use std::os::fd::AsRawFd as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.jsonl"), run_with_an_error()).unwrap();
    let record = ["a.jsonl", "--baseline", "known.json", "--update-baseline"];
    let (code, _, stderr) = check_in(dir.path(), &record);
    assert_eq!(code, 0, "{stderr}");
    let known = dir.path().join("known.json");
    let mut readonly = std::fs::metadata(&known).unwrap().permissions();
    readonly.set_readonly(true);
    std::fs::set_permissions(&known, readonly).unwrap();
    let before = std::fs::read(&known).unwrap();
    let held = std::fs::File::open(&known).unwrap();
    // SAFETY: flock on a descriptor this test owns, open until the end of the test.
    assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
    let waiting = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .current_dir(dir.path())
        .args(["check", "--color", "never"])
        .args(record)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(waiting.id() as libc::pid_t, libc::SIGTERM) };
    let out = waiting.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{said}");
    assert!(
        said.contains("waiting for another agui-lens recording into")
            && said.contains("left as it was"),
        "{said}"
    );
    assert_eq!(std::fs::read(&known).unwrap(), before);
    drop(held);
    let (code, _, stderr) = check_in(dir.path(), &record);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("wrote known.json"), "{stderr}");
}

/// Recording a baseline from some of the inputs replaces what it held of those, not of the
/// others: `--update-baseline` on one file erased the findings recorded of every other (the
/// next full run called them new), and a check of one file counted the others' findings as
/// "no longer found", which invites that update. An input is the same file however it is
/// named; a run from another folder, whose keys name no file from there, loses nothing.
#[test]
fn recording_part_of_the_inputs_keeps_what_the_others_hold() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |id: &str| {
        format!(
            "{}\n{}\n{}\n",
            r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"}"#,
            format_args!(
                r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"{id}","delta":"orphan"}}"#
            ),
            r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}"#
        )
    };
    std::fs::write(dir.path().join("a.jsonl"), stream("m9")).unwrap();
    std::fs::write(dir.path().join("b.jsonl"), stream("m8")).unwrap();
    let record = ["--baseline", "known.json", "--update-baseline"];
    let (code, _, stderr) = check_in(dir.path(), &[&["a.jsonl", "b.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = check_in(dir.path(), &["a.jsonl", "--baseline", "known.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("no longer found"), "{stderr}");
    let (code, _, stderr) = check_in(dir.path(), &[&["a.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("1 of inputs not checked in this run kept"),
        "{stderr}"
    );
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(held.contains("\"b.jsonl\""), "{held}");
    let (code, stdout, stderr) = check_in(
        dir.path(),
        &["a.jsonl", "b.jsonl", "--baseline", "known.json"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");

    // Fixed in a, checked alone: a's finding is no longer found, b's is not looked for.
    let fixed: Vec<String> = stream("m9")
        .lines()
        .filter(|line| !line.contains("orphan"))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(dir.path().join("a.jsonl"), fixed.concat()).unwrap();
    let (code, _, stderr) = check_in(dir.path(), &["a.jsonl", "--baseline", "known.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("; 1 recorded no longer found"), "{stderr}");

    // The same file named another way is the same input: its fixed finding is replaced,
    // and the finding that comes back is new.
    std::fs::create_dir(dir.path().join("tools")).unwrap();
    let (code, _, stderr) = check_in(dir.path(), &[&["tools/../a.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(!held.contains("\"a.jsonl\""), "{held}");
    assert!(held.contains("\"b.jsonl\""), "{held}");
    std::fs::write(dir.path().join("a.jsonl"), stream("m9")).unwrap();
    let (code, stdout, stderr) = check_in(
        dir.path(),
        &["a.jsonl", "b.jsonl", "--baseline", "known.json"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");

    // A hard link to b is b: recorded through it, b's finding is replaced, not kept twice.
    std::fs::hard_link(dir.path().join("b.jsonl"), dir.path().join("b-link.jsonl")).unwrap();
    let (code, _, stderr) = check_in(dir.path(), &[&["b-link.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(!held.contains("\"b.jsonl\""), "{held}");
    let (code, _, stderr) = check_in(dir.path(), &[&["a.jsonl", "b.jsonl"][..], &record].concat());
    assert_eq!(code, 0, "{stderr}");

    // Recorded from another folder, a file of a version that named inputs from the folder it
    // was recorded from (which it does not say): an input found from the file's folder is
    // named from there; one found from neither is kept, and that it could not be told is said.
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    let mut older: Value = serde_json::from_str(&held).unwrap();
    older["version"] = 3.into();
    let mut gone = older["findings"][0].clone();
    gone["path"] = "gone.jsonl".into();
    older["findings"].as_array_mut().unwrap().push(gone);
    std::fs::write(dir.path().join("known.json"), older.to_string()).unwrap();
    let (code, _, stderr) = check_in(
        &dir.path().join("tools"),
        &[
            "../a.jsonl",
            "--baseline",
            "../known.json",
            "--update-baseline",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: 1 finding kept name inputs not found from this folder"),
        "{stderr}"
    );
    let held = std::fs::read_to_string(dir.path().join("known.json")).unwrap();
    assert!(
        held.contains("\"b.jsonl\"") && held.contains("gone.jsonl"),
        "{held}"
    );
}

/// `--junit F` and `--baseline F --update-baseline` name one file, not there yet: the run
/// went ahead, the baseline was not recorded (the report was there first, and is no
/// baseline), and the report left in its place was green. Refused before anything is read.
#[test]
fn a_report_and_a_baseline_written_to_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("captures")).unwrap();
    std::fs::write(dir.join("captures/a.jsonl"), KNOWN).unwrap();
    std::fs::write(
        dir.join("suite.toml"),
        "[[case]]\nname = \"a\"\nurl = \"http://127.0.0.1:9/\"\nmessage = \"hi\"\n",
    )
    .unwrap();
    let record = ["--baseline", "out.json", "--update-baseline"];
    // A link to the file neither is there yet: writing through it writes that file.
    std::os::unix::fs::symlink("out.json", dir.join("link.json")).unwrap();
    for (command, junit) in [
        (&["check", "captures"][..], "out.json"),
        (&["check", "captures"][..], "./sub/../out.json"),
        (&["check", "captures"][..], "link.json"),
        (&["test", "suite.toml"][..], "out.json"),
        (&["test", "suite.toml"][..], "link.json"),
    ] {
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let (code, stdout, stderr) = split(
            agui_lens()
                .current_dir(dir)
                .args(command)
                .args(record)
                .args(["--junit", junit])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{command:?} {junit}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!(
                "--junit {junit} is an input (named by --baseline)"
            )),
            "{command:?}: {stderr}"
        );
        assert!(!dir.join("out.json").exists(), "{command:?} {junit}");
    }
}
