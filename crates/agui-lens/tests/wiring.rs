//! What wires agui-lens into a system: shell completions parsed by the real shells, man pages
//! rendered by groff, the exit statuses `--help` lists (and that the binary really returns),
//! and the GitHub Action, whose bash steps are run here the way a runner runs them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;
use serde_json::Value;

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
    // And a subcommand's options and an option's values: `agui-lens cat --output-f`,
    // `agui-lens check --format s`, `agui-lens schema s`. (clap_complete's bash script spelt
    // a hyphenated name's subcommands two ways, and none of these completed.)
    for (words, want) in [
        ("agui-lens cat --output-f", "--output-format"),
        ("agui-lens check --format s", "sarif"),
        ("agui-lens schema s", "show"),
        ("agui-lens inspect --h", "--html"),
        ("agui-lens schema export --protocol 1", "1.0"),
        ("agui-lens check --protocol 0", "0.x"),
    ] {
        let out = Command::new("bash")
            .args(["--norc", "--noprofile", "-c"])
            .arg(
                r#"source "$1"
                complete=$(complete -p agui-lens) || exit 1
                function=${complete#*-F }; function=${function%% *}
                read -r -a COMP_WORDS <<< "$2"; COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
                "$function" agui-lens "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\n' "${COMPREPLY[@]}""#,
            )
            .arg("bash")
            .arg(dir.path().join("agui-lens.bash"))
            .arg(words)
            .output()
            .unwrap();
        let offered = String::from_utf8_lossy(&out.stdout);
        assert!(
            offered.lines().any(|l| l == want),
            "`{words}<TAB>` offers {offered:?}, not {want}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
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
    // Recording a baseline passes, and the findings it holds fail nothing; one that is not
    // there is no baseline.
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let baseline = baseline.to_str().unwrap();
    let invalid = "fixtures/invalid/lifecycle/first-event.jsonl";
    for (args, expected) in [
        (
            vec![
                "check",
                invalid,
                "--baseline",
                baseline,
                "--update-baseline",
            ],
            0,
        ),
        (vec!["check", invalid, "--baseline", baseline], 0),
        (
            vec!["check", invalid, "--baseline", "no-such-baseline.json"],
            2,
        ),
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, expected, "{args:?}: {stdout}{stderr}");
    }
    let growing = dir.path().join("growing.jsonl");
    std::fs::write(&growing, "").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agui-lens"))
        .args(["check", "--follow", "--format", "jsonl"])
        .arg(&growing)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Should the check never report, it is killed and the test fails instead of waiting.
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let pid = child.id() as libc::pid_t;
    let watchdog = std::thread::spawn(move || {
        if watch
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err()
        {
            // SAFETY: a signal to the child this test started, which has not been waited for.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    // A finding on stdout says the file is being followed, so the signal is caught by now.
    let first_event = std::fs::read_to_string(root().join("fixtures/valid/agui-sdk-full.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    std::fs::write(&growing, format!("{first_event}\nnot json\n")).unwrap();
    // Kept open until the end: what the check writes when stopped must not meet a closed pipe.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.contains("framing/invalid-json"), "{first}");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    drop(stdout);
    assert_eq!(status.code(), Some(143));
    seen.insert("143".into());
    assert!(seen.is_subset(&listed), "{seen:?} not all in {listed:?}");
}

// ---------------------------------------------------------------------------------------------
// The GitHub Action.

/// A YAML document as JSON (keys as strings), which the checks below walk more easily.
fn yaml(path: &Path) -> Value {
    use yaml_rust2::{Yaml, YamlLoader};
    fn json(yaml: &Yaml) -> Value {
        match yaml {
            Yaml::String(s) | Yaml::Real(s) => Value::String(s.clone()),
            Yaml::Integer(i) => Value::from(*i),
            Yaml::Boolean(b) => Value::Bool(*b),
            Yaml::Array(items) => Value::Array(items.iter().map(json).collect()),
            Yaml::Hash(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let key = match k {
                            Yaml::String(s) => s.clone(),
                            other => panic!("a key that is no string: {other:?}"),
                        };
                        (key, json(v))
                    })
                    .collect(),
            ),
            Yaml::Null => Value::Null,
            other => panic!("unexpected YAML: {other:?}"),
        }
    }
    let text = std::fs::read_to_string(path).unwrap();
    let docs =
        YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(docs.len(), 1, "{}", path.display());
    json(&docs[0])
}

/// Every `${{ … }}` expression in a text, trimmed.
fn expressions(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let end = rest[start..].find("}}").expect("an unclosed ${{") + start;
        out.push(rest[start + 3..end].trim());
        rest = &rest[end + 2..];
    }
    out
}

/// Every string in a YAML value, with where it is.
fn strings<'a>(value: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(s) => out.push((at, s)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, format!("{at}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                strings(v, format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// action.yml is a composite action whose inputs are all declared, described and used, whose
/// outputs come from its steps, and whose scripts never hold an input's text (an input in a
/// script is code an attacker can write: it goes through `env:`).
#[test]
fn action_is_well_formed() {
    let action = yaml(&root().join("action.yml"));
    assert_eq!(action["runs"]["using"], "composite");
    let inputs = action["inputs"].as_object().expect("inputs");
    for name in [
        "suite",
        "paths",
        "args",
        "sarif-file",
        "junit-file",
        "upload-sarif",
        "working-directory",
    ] {
        let input = &inputs[name];
        assert!(
            input["description"].as_str().is_some_and(|d| d.len() > 10),
            "{name}: no description"
        );
        assert!(input["default"].is_string(), "{name}: no default");
    }
    for name in ["exit-code", "sarif-file", "junit-file"] {
        let value = action["outputs"][name]["value"]
            .as_str()
            .unwrap_or_default();
        assert!(
            value.starts_with("${{ steps.") && action["outputs"][name]["description"].is_string(),
            "output {name}: {value}"
        );
    }
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let mut found = Vec::new();
    strings(&action["runs"], "runs".into(), &mut found);
    let mut used = BTreeSet::new();
    for (at, text) in &found {
        // A step's `if:` is an expression whole, with or without `${{ }}`.
        let whole = at.ends_with(".if").then_some(*text);
        for expression in expressions(text).into_iter().chain(whole) {
            let names = expression
                .split(|c: char| c.is_whitespace() || "()=!&|,".contains(c))
                .filter_map(|w| w.strip_prefix("inputs."));
            for input in names {
                assert!(inputs.contains_key(input), "{at}: no input `{input}`");
                used.insert(input.to_owned());
            }
        }
    }
    let declared: BTreeSet<String> = inputs.keys().cloned().collect();
    assert_eq!(used, declared, "inputs declared but never used");
    for (i, step) in steps.iter().enumerate() {
        if let Some(script) = step["run"].as_str() {
            assert_eq!(step["shell"], "bash", "step {i}");
            assert!(
                expressions(script).is_empty(),
                "step {i} puts an expression in its script: {script}"
            );
            assert!(
                script.trim_start().starts_with("set -euo pipefail"),
                "step {i}: {script}"
            );
        } else {
            assert!(step["uses"].is_string(), "step {i} neither runs nor uses");
        }
    }
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert!(
        uses.iter()
            .any(|u| u.starts_with("github/codeql-action/upload-sarif@")),
        "{uses:?}"
    );
    assert!(
        uses.iter()
            .any(|u| u.starts_with("actions/upload-artifact@")),
        "{uses:?}"
    );
    for step in steps.iter().filter(|s| s["uses"].is_string()) {
        let condition = step["if"].as_str().unwrap_or_default();
        assert!(condition.contains("always()"), "{step}");
    }
}

/// What one run of the Action's steps left: each run step's status (`None` when skipped),
/// the outputs it set, and the workspace.
struct ActionRun {
    statuses: Vec<Option<i32>>,
    outputs: BTreeMap<String, String>,
    log: String,
}

/// Runs the bash steps of action.yml in order, as a runner runs a composite action's steps:
/// `bash --noprofile --norc -eo pipefail SCRIPT`, in the step's working directory, with the
/// step's `env:` (its `${{ inputs.X }}` given `inputs`, or the input's default),
/// GITHUB_ACTION_PATH at the repository root and the GITHUB_OUTPUT, GITHUB_ENV and GITHUB_PATH
/// files. `uses:` steps are left out (they are GitHub's); after a failing step, only steps
/// whose `if:` says `always()` would run, and none of those is a run step.
fn run_action(workspace: &Path, path: &str, inputs: &[(&str, &str)]) -> ActionRun {
    let action = yaml(&root().join("action.yml"));
    let declared = action["inputs"].as_object().unwrap();
    let input = |name: &str| -> String {
        inputs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
            .or_else(|| declared[name]["default"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no input {name}"))
    };
    let substitute = |text: &str| -> String {
        let mut out = text.to_owned();
        for expression in expressions(text) {
            let name = expression
                .strip_prefix("inputs.")
                .unwrap_or_else(|| panic!("the test runs only inputs: `{expression}`"));
            out = out.replace(&format!("${{{{ {expression} }}}}"), &input(name));
        }
        assert!(!out.contains("${{"), "{text}");
        out
    };
    let runner = tempfile::tempdir().unwrap();
    let files: BTreeMap<&str, PathBuf> = ["GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH"]
        .into_iter()
        .map(|name| {
            let file = runner.path().join(name);
            std::fs::write(&file, "").unwrap();
            (name, file)
        })
        .collect();
    let mut statuses = Vec::new();
    let mut log = String::new();
    let mut failed = false;
    for (i, step) in action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        assert!(
            step["if"].is_null(),
            "the test runs no conditional run step"
        );
        if failed {
            statuses.push(None);
            continue;
        }
        let file = runner.path().join(format!("step-{i}.sh"));
        std::fs::write(&file, script).unwrap();
        let dir = match step["working-directory"].as_str() {
            Some(dir) => workspace.join(substitute(dir)),
            None => workspace.to_path_buf(),
        };
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("HOME", runner.path())
            .env("GITHUB_ACTION_PATH", root())
            .env("GITHUB_WORKSPACE", workspace);
        for (name, file) in &files {
            cmd.env(name, file);
        }
        if let Some(env) = step["env"].as_object() {
            for (name, value) in env {
                cmd.env(name, substitute(value.as_str().unwrap()));
            }
        }
        let out = cmd.output().unwrap();
        log.push_str(&format!(
            "step {i} ({}): {}\n{}{}",
            step["name"],
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
        statuses.push(out.status.code());
        failed = !out.status.success();
    }
    let outputs = std::fs::read_to_string(&files["GITHUB_OUTPUT"])
        .unwrap()
        .lines()
        .map(|line| {
            let (k, v) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("not name=value: {line}"));
            (k.to_owned(), v.to_owned())
        })
        .collect();
    ActionRun {
        statuses,
        outputs,
        log,
    }
}

/// A PATH whose agui-lens is the one just built, and whose `cargo` fails: the install step
/// must find the binary there and not build another.
fn path_with_built_binary(dir: &Path) -> String {
    let fake = dir.join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let cargo = fake.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\necho \"cargo must not run: $*\" >&2\nexit 97\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let built = Path::new(env!("CARGO_BIN_EXE_agui-lens")).parent().unwrap();
    format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        built.display(),
        fake.display()
    )
}

/// Checking a clean capture: the install is skipped, agui-lens exits 0, the SARIF and JUnit
/// files are written where the inputs say (relative to the working directory), and the
/// outputs name them.
#[test]
fn action_checks_a_clean_capture() {
    let workspace = tempfile::tempdir().unwrap();
    let work = workspace.path().join("work");
    std::fs::create_dir_all(work.join("captures")).unwrap();
    std::fs::copy(
        root().join("fixtures/valid/agui-sdk-full.jsonl"),
        work.join("captures/full run.jsonl"),
    )
    .unwrap();
    let path = path_with_built_binary(workspace.path());
    let run = run_action(
        workspace.path(),
        &path,
        &[
            ("paths", "captures/full run.jsonl\n"),
            ("working-directory", "work"),
            ("sarif-file", "reports/agui-lens.sarif"),
            ("junit-file", "reports/junit.xml"),
        ],
    );
    let log = &run.log;
    assert_eq!(run.statuses, [Some(0), Some(0)], "{log}");
    assert!(log.contains("already installed"), "{log}");
    assert_eq!(run.outputs["exit-code"], "0", "{log}");
    let sarif = work.join("reports/agui-lens.sarif");
    let junit = work.join("reports/junit.xml");
    assert_eq!(Path::new(&run.outputs["sarif-file"]), sarif);
    assert_eq!(Path::new(&run.outputs["junit-file"]), junit);
    let sarif: Value = serde_json::from_slice(&std::fs::read(sarif).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["results"], Value::Array(vec![]));
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    let junit = std::fs::read_to_string(junit).unwrap();
    assert!(junit.starts_with("<?xml"), "{junit}");
    assert!(
        junit.contains("full run.jsonl") && junit.contains("failures=\"0\""),
        "{junit}"
    );
}

/// Checking a capture with an error: the step fails with agui-lens's status, 1, and the SARIF
/// still holds the error; extra arguments reach agui-lens, unglobbed.
#[test]
fn action_fails_with_the_status_of_a_failing_check() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/invalid/lifecycle/first-event.jsonl"),
        workspace.path().join("bad.jsonl"),
    )
    .unwrap();
    // A file a glob in the arguments would match, were it expanded (and `--allow order/x`
    // names no rule: exit 2).
    std::fs::create_dir(workspace.path().join("order")).unwrap();
    std::fs::write(workspace.path().join("order/x"), "").unwrap();
    let path = path_with_built_binary(workspace.path());
    let run = run_action(
        workspace.path(),
        &path,
        &[
            ("paths", "bad.jsonl"),
            ("args", "--allow order/* --no-group"),
        ],
    );
    let log = &run.log;
    assert_eq!(run.statuses, [Some(0), Some(1)], "{log}");
    assert_eq!(run.outputs["exit-code"], "1", "{log}");
    let sarif_file = workspace.path().join("agui-lens.sarif");
    assert_eq!(Path::new(&run.outputs["sarif-file"]), sarif_file);
    let sarif: Value = serde_json::from_slice(&std::fs::read(sarif_file).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "lifecycle/first-event" && r["level"] == "error"),
        "{sarif}"
    );
    let junit = std::fs::read_to_string(workspace.path().join("agui-lens-junit.xml")).unwrap();
    assert!(junit.contains("lifecycle/first-event"), "{junit}");
    // The arguments reach both checks: allowed, the rule fails nothing.
    let run = run_action(
        workspace.path(),
        &path,
        &[
            ("paths", "bad.jsonl"),
            ("args", "--allow lifecycle/first-event"),
        ],
    );
    assert_eq!(run.statuses, [Some(0), Some(0)], "{}", run.log);
    let junit = std::fs::read_to_string(workspace.path().join("agui-lens-junit.xml")).unwrap();
    assert!(!junit.contains("lifecycle/first-event"), "{junit}");
}

/// The Action checks once for both reports: a baseline asked for in `args` is recorded once
/// (it was recorded twice, by a second check for JUnit), and the reports agree.
#[test]
fn action_checks_once_for_both_reports() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/invalid/lifecycle/first-event.jsonl"),
        workspace.path().join("bad.jsonl"),
    )
    .unwrap();
    let path = path_with_built_binary(workspace.path());
    let run = run_action(
        workspace.path(),
        &path,
        &[
            ("paths", "bad.jsonl"),
            ("args", "--baseline known.json --update-baseline"),
        ],
    );
    let log = &run.log;
    assert_eq!(run.statuses, [Some(0), Some(0)], "{log}");
    assert_eq!(log.matches("wrote known.json").count(), 1, "{log}");
    let junit = std::fs::read_to_string(workspace.path().join("agui-lens-junit.xml")).unwrap();
    assert!(junit.contains("lifecycle/first-event"), "{junit}");
}

/// Run from a folder below the repository's root (`working-directory`), the SARIF names each
/// input absolutely, which code scanning reads relative to the workspace; a relative path
/// would be read from the repository's root, and name no file. From the root, paths stay
/// relative.
#[test]
fn action_places_findings_from_a_working_directory() {
    let workspace = tempfile::tempdir().unwrap();
    let work = workspace.path().join("agents/web");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::copy(
        root().join("fixtures/invalid/lifecycle/first-event.jsonl"),
        work.join("bad.jsonl"),
    )
    .unwrap();
    let path = path_with_built_binary(workspace.path());
    let uris = |run: &ActionRun| -> Vec<String> {
        let sarif: Value =
            serde_json::from_slice(&std::fs::read(&run.outputs["sarif-file"]).unwrap()).unwrap();
        sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let run = run_action(
        workspace.path(),
        &path,
        &[("paths", "bad.jsonl"), ("working-directory", "agents/web")],
    );
    assert_eq!(run.statuses, [Some(0), Some(1)], "{}", run.log);
    let expected = format!("file://{}", work.join("bad.jsonl").display());
    let found = uris(&run);
    assert!(
        !found.is_empty() && found.iter().all(|u| *u == expected),
        "{found:?}"
    );

    // A path that climbs out of the working directory is named without its `..`.
    std::fs::create_dir_all(workspace.path().join("agents/other")).unwrap();
    std::fs::copy(
        work.join("bad.jsonl"),
        workspace.path().join("agents/other/bad.jsonl"),
    )
    .unwrap();
    let run = run_action(
        workspace.path(),
        &path,
        &[
            ("paths", "../other/bad.jsonl"),
            ("working-directory", "agents/web"),
        ],
    );
    assert_eq!(run.statuses, [Some(0), Some(1)], "{}", run.log);
    let expected = format!(
        "file://{}",
        workspace.path().join("agents/other/bad.jsonl").display()
    );
    let found = uris(&run);
    assert!(
        !found.is_empty() && found.iter().all(|u| *u == expected),
        "{found:?}"
    );

    let run = run_action(
        workspace.path(),
        &path,
        &[("paths", "agents/web/bad.jsonl")],
    );
    assert_eq!(run.statuses, [Some(0), Some(1)], "{}", run.log);
    let found = uris(&run);
    assert!(
        !found.is_empty() && found.iter().all(|u| u == "agents/web/bad.jsonl"),
        "{found:?}"
    );
}

/// A suite: `agui-lens test` writes the JUnit report itself and SARIF on stdout; a case whose
/// agent cannot be reached fails it (1). Neither a suite nor paths is a usage error: 2, as
/// agui-lens gives for one.
#[test]
fn action_runs_a_suite() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("suite.toml"),
        "[[case]]\nname = \"down\"\nurl = \"http://127.0.0.1:1/agent\"\nmessage = \"Hello\"\n",
    )
    .unwrap();
    let path = path_with_built_binary(workspace.path());
    let run = run_action(workspace.path(), &path, &[("suite", "suite.toml")]);
    let log = &run.log;
    assert_eq!(run.statuses, [Some(0), Some(1)], "{log}");
    assert_eq!(run.outputs["exit-code"], "1", "{log}");
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(workspace.path().join("agui-lens.sarif")).unwrap())
            .unwrap();
    // One result: the case that could not be asked (not also a status mismatch saying it).
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif}");
    assert_eq!(results[0]["ruleId"], "agui-lens/input-not-read", "{sarif}");
    let junit = std::fs::read_to_string(workspace.path().join("agui-lens-junit.xml")).unwrap();
    assert!(
        junit.contains("<testcase") && junit.contains("down"),
        "{junit}"
    );

    let run = run_action(workspace.path(), &path, &[]);
    assert_eq!(run.statuses, [Some(0), Some(2)], "{}", run.log);
    assert_eq!(run.outputs.get("exit-code").map(String::as_str), Some("2"));
}

/// Without agui-lens on PATH, the install step runs `cargo install --locked --path` on the
/// Action's own crate.
#[test]
fn action_installs_agui_lens_when_it_is_missing() {
    let workspace = tempfile::tempdir().unwrap();
    let fake = workspace.path().join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let called = workspace.path().join("cargo-args");
    std::fs::write(
        fake.join("cargo"),
        format!("#!/bin/sh\necho \"$@\" > '{}'\n", called.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("cargo"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", fake.display());
    let run = run_action(workspace.path(), &path, &[("paths", "x.jsonl")]);
    // The check then fails: agui-lens is still not on PATH (the fake cargo built nothing).
    assert_eq!(run.statuses[0], Some(0), "{}", run.log);
    let args = std::fs::read_to_string(called).unwrap();
    assert_eq!(
        args.trim(),
        format!(
            "install --locked --path {}/crates/agui-lens",
            root().display()
        )
    );
}

/// The CI workflow runs .ci/run and uses the Action from this repository on fixtures that
/// exist, one of them expected to fail with 1.
#[test]
fn workflow_uses_the_action_on_fixtures() {
    let workflow = yaml(&root().join(".github/workflows/ci.yml"));
    let mut runs_ci = false;
    let mut checked = Vec::new();
    let mut expects_failure = false;
    for (job, spec) in workflow["jobs"].as_object().unwrap() {
        let steps = spec["steps"].as_array().unwrap();
        for step in steps {
            if step["run"].as_str().is_some_and(|r| r.contains(".ci/run")) {
                runs_ci = true;
            }
            if step["uses"] != "./" {
                continue;
            }
            let paths = step["with"]["paths"].as_str().unwrap_or_default();
            for path in paths.lines().map(str::trim).filter(|p| !p.is_empty()) {
                assert!(root().join(path).exists(), "{job}: {path} does not exist");
                checked.push(path.to_owned());
            }
            if step["continue-on-error"] == true {
                let id = step["id"].as_str().expect("an id to look at its outcome");
                let later = steps
                    .iter()
                    .filter_map(|s| s["env"].as_object())
                    .flat_map(|env| env.values())
                    .filter_map(Value::as_str)
                    .any(|v| v.contains(&format!("steps.{id}.outputs.exit-code")));
                assert!(later, "{job}: nothing looks at {id}'s exit code");
                expects_failure = true;
            }
        }
    }
    assert!(runs_ci, ".ci/run is not run");
    assert!(
        checked
            .iter()
            .any(|p| p == "fixtures/valid/agui-sdk-full.jsonl"),
        "{checked:?}"
    );
    assert!(expects_failure, "no check that is expected to fail");
}
