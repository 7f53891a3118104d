//! What wires agui-lens into a system: shell completions parsed by the real shells, man pages
//! rendered by groff, the exit statuses `--help` lists (and that the binary really returns),
//! and the GitHub Action, whose bash steps are run here the way a runner runs them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use clap::CommandFactory;

use crate::common::{program, root, run};

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

/// The words of a text: runs of letters, digits, `-` and `_`.
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The completion scripts for bash, zsh and fish parse in the real shells, and offer every
/// command.
#[test]
fn completions_parse_in_their_shells_and_name_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let commands = command_paths();
    for (shell, parse_only) in [("bash", "-n"), ("zsh", "-n"), ("fish", "--no-execute")] {
        let binary = program(shell, shell);
        let (code, script, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        let file = dir.path().join(format!("agui-lens.{shell}"));
        std::fs::write(&file, &script).unwrap();
        let out = Command::new(&binary)
            .arg(parse_only)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{shell} {parse_only} rejects the script: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let offered = words(&script);
        for path in &commands {
            let name = path.last().unwrap().as_str();
            assert!(offered.contains(name), "{shell}: no `{}`", path.join(" "));
        }
        // Options of a subcommand (fish names them without their dashes), and the values
        // of an enum flag.
        for option in ["deny-warnings", "input-format"] {
            let long = format!("--{option}");
            assert!(
                offered.contains(long.as_str()) || offered.contains(option),
                "{shell}: no `{long}`"
            );
        }
        for value in ["sarif", "junit"] {
            assert!(offered.contains(value), "{shell}: no `{value}`");
        }
    }
    // Loaded into bash, the script completes `agui-lens c` to the commands starting with c.
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c"])
        .arg(
            r#"source "$1"
            complete=$(complete -p agui-lens) || exit 1
            function=${complete#*-F }; function=${function%% *}
            COMP_WORDS=(agui-lens c); COMP_CWORD=1
            "$function" agui-lens c agui-lens
            printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(dir.path().join("agui-lens.bash"))
        .output()
        .unwrap();
    let offered: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let expected: BTreeSet<String> = commands
        .iter()
        .filter(|p| p.len() == 1 && p[0].starts_with('c'))
        .map(|p| p[0].clone())
        .collect();
    assert_eq!(
        offered,
        expected,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shell in ["elvish", "powershell"] {
        let (code, script, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(script.contains("agui-lens") && script.contains("check"));
    }
    let (code, _, stderr) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("possible values"), "{stderr}");
}

/// groff's complaints about a man page (all of its warnings), or nothing.
fn groff_warnings(page: &Path) -> String {
    let groff = program("groff", "groff-base");
    let out = Command::new(groff)
        // -k: through preconv, as man(1) reads a page (UTF-8 in, not Latin-1).
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
        .arg(page)
        .output()
        .unwrap();
    assert!(out.status.success(), "groff failed on {}", page.display());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A man page as a reader sees it, rendered by groff.
fn rendered(page: &Path) -> String {
    let out = Command::new(program("groff", "groff-base"))
        .args(["-k", "-man", "-Tutf8", "-P-c", "-P-b", "-P-u"])
        .arg(page)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `man` prints the top command's page: a `.TH` header, every command, the exit statuses, and
/// nothing groff warns about.
#[test]
fn man_page_renders_without_warnings_and_names_every_command() {
    let (code, page, stderr) = run(&["man"]);
    assert_eq!(code, 0, "{stderr}");
    let header = page
        .lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap_or_default();
    assert!(header.starts_with(".TH agui-lens 1 "), "{header}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agui-lens.1");
    std::fs::write(&file, &page).unwrap();
    let warnings = groff_warnings(&file);
    assert!(warnings.is_empty(), "{warnings}");
    let text = rendered(&file);
    let shown = words(&text);
    for path in command_paths().iter().filter(|p| p.len() == 1) {
        let page_name = format!("agui-lens-{}", path[0]);
        assert!(
            shown.contains(page_name.as_str()),
            "no {page_name}:\n{text}"
        );
    }
    assert!(text.contains("EXIT STATUS"), "{text}");
    for status in ["0", "1", "2", "130", "143"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{status} "))),
            "no exit status {status}:\n{text}"
        );
    }
}

/// `man --dir DIR` writes one page per command, nested ones included, each rendering cleanly
/// with its own exit statuses.
#[test]
fn man_dir_writes_a_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man/man1");
    let (code, _, stderr) = run(&["man", "--dir", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let mut expected: BTreeSet<String> = command_paths()
        .iter()
        .map(|p| format!("agui-lens-{}.1", p.join("-")))
        .collect();
    expected.insert("agui-lens.1".into());
    let written: BTreeSet<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, expected);
    for name in &written {
        let file = out.join(name);
        let warnings = groff_warnings(&file);
        assert!(warnings.is_empty(), "{name}: {warnings}");
        let text = rendered(&file);
        let title = name.trim_end_matches(".1");
        assert!(text.contains(title), "{name}:\n{text}");
        assert!(text.contains("EXIT STATUS"), "{name}:\n{text}");
    }
    let check = rendered(&out.join("agui-lens-check.1"));
    assert!(check.contains("--deny-warnings"), "{check}");
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
