//! What wires agui-lens into a system: shell completions parsed by the real shells, man pages
//! rendered by groff, the exit statuses `--help` lists (and that the binary really returns),
//! and the GitHub Action, whose bash steps are run here the way a runner runs them.

use crate::common::{root, run};

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
