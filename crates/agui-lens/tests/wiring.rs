//! What wires agui-lens into a system: shell completions parsed by the real shells, man pages
//! rendered by groff, the exit statuses `--help` lists (and that the binary really returns),
//! and the GitHub Action, whose bash steps are run here the way a runner runs them.

use std::collections::{BTreeMap, BTreeSet};

use clap::CommandFactory;

use crate::common::{root, run};

/// Every command below the top, as its path of names (`["schema", "list"]`), without clap's
/// own `help`.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            let mut path = prefix.to_vec();
            path.push(sub.get_name().to_owned());
            out.push(path.clone());
            walk(sub, &path, out);
        }
    }
    let mut out = Vec::new();
    walk(&agui_lens::cli::Cli::command(), &[], &mut out);
    out
}

/// `cat --input-format` is an option, as for every other command (it had become a second
/// positional argument, which completions and man pages would have taught).
#[test]
fn cat_takes_input_format_as_an_option() {
    let (code, stdout, stderr) = run(&[
        "cat",
        "--input-format",
        "jsonl",
        "fixtures/valid/agui-sdk-full.jsonl",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        std::fs::read_to_string(root().join("fixtures/valid/agui-sdk-full.jsonl")).unwrap()
    );
    let (_, help, _) = run(&["cat", "--help"]);
    assert!(
        help.contains("Usage: agui-lens cat [OPTIONS] <PATH>\n"),
        "{help}"
    );
    assert!(
        help.contains("--entry <N>\n          Read this entry"),
        "{help}"
    );
}

/// The statuses a `--help` lists in its closing "Exit status:" section: status → meaning. A
/// status starts a line indented by two spaces; its meaning goes on over lines indented
/// further; nothing else follows the section.
fn exit_statuses(help: &str) -> BTreeMap<String, String> {
    let (_, section) = help
        .split_once("\nExit status:\n")
        .unwrap_or_else(|| panic!("no exit status section:\n{help}"));
    let mut statuses = BTreeMap::new();
    let mut last: Option<String> = None;
    for line in section.lines() {
        assert!(line.len() <= 100, "a line over 100 columns: {line}");
        let status = line
            .strip_prefix("  ")
            .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
        if let Some(rest) = status {
            let (status, meaning) = rest.split_once(' ').unwrap_or((rest, ""));
            statuses.insert(status.to_owned(), meaning.trim().to_owned());
            last = Some(status.to_owned());
        } else {
            assert!(line.starts_with("   "), "not part of the section: {line:?}");
            let last = last.as_ref().expect("a meaning before its status");
            let meaning = statuses.get_mut(last).unwrap();
            meaning.push(' ');
            meaning.push_str(line.trim());
        }
    }
    statuses
}

/// The top command and every subcommand end their help (`-h` and `--help`) with the exit
/// statuses they can return.
#[test]
fn help_ends_with_the_exit_statuses() {
    let mut paths = vec![vec![]];
    paths.extend(command_paths());
    for path in paths {
        for flag in ["-h", "--help"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let (code, help, stderr) = run(&args);
            assert_eq!(code, 0, "{args:?}: {stderr}");
            let statuses = exit_statuses(&help);
            for status in ["0", "2", "130", "143"] {
                assert!(
                    statuses.get(status).is_some_and(|m| !m.is_empty()),
                    "{args:?}: no status {status}:\n{help}"
                );
            }
        }
    }
    let (_, help, _) = run(&["check", "--help"]);
    let statuses = exit_statuses(&help);
    assert!(statuses["1"].contains("errors found"), "{help}");
    assert!(statuses["2"].contains("could not be read"), "{help}");
    let (_, help, _) = run(&["fold", "--help"]);
    assert!(
        !exit_statuses(&help).contains_key("1"),
        "fold never exits 1:\n{help}"
    );
}

/// The statuses `check --help` lists are the ones it returns: 0 for a clean capture, 1 for
/// one with errors, 2 for a bad flag and for an input that cannot be read, 143 for SIGTERM
/// while following a file.
#[test]
fn check_returns_the_statuses_its_help_lists() {
    let (_, help, _) = run(&["check", "--help"]);
    let listed: BTreeSet<String> = exit_statuses(&help).into_keys().collect();
    let mut seen = BTreeSet::new();
    for (args, expected) in [
        (vec!["check", "fixtures/valid/agui-sdk-full.jsonl"], 0),
        (
            vec!["check", "fixtures/invalid/lifecycle/first-event.jsonl"],
            1,
        ),
        (
            vec![
                "check",
                "--deny-warnings",
                "fixtures/invalid/lifecycle/thread-changed.jsonl",
            ],
            1,
        ),
        (vec!["check", "--no-such-flag", "x.jsonl"], 2),
        (vec!["check", "fixtures/no-such-file.jsonl"], 2),
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, expected, "{args:?}: {stdout}{stderr}");
        seen.insert(code.to_string());
    }
    // Without --deny-warnings the same warnings pass.
    let (code, ..) = run(&["check", "fixtures/invalid/lifecycle/thread-changed.jsonl"]);
    assert_eq!(code, 0);
    let dir = tempfile::tempdir().unwrap();
    let growing = dir.path().join("growing.jsonl");
    std::fs::write(&growing, "").unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .args(["check", "--follow", growing.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    seen.insert("143".into());
    assert!(seen.is_subset(&listed), "{seen:?} not all in {listed:?}");
}
