//! Command-line types. No logic beyond reading the order of rule flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, ArgMatches, Args, CommandFactory, Parser, Subcommand, ValueEnum};

use agui_lens_core::check::catalog::{Level, Tier};
use agui_lens_core::check::rules::protocol::DEFAULT_STATE_LIMIT;
use agui_lens_core::compact::Level as CompactLevel;
use agui_lens_core::compare::Level as DiffLevel;
use agui_lens_core::read::{DEFAULT_MAX_LINE, InputFormat, ReadOptions};
use agui_lens_core::report::Format;

use crate::live::http::Transport;

#[derive(Debug, Parser)]
#[command(
    name = "agui-lens",
    version,
    about = "Validate, fold, compact and diff AG-UI event streams",
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The command line: the clap definitions, with each command's help (and man page) ending
/// in the exit statuses it returns.
pub fn command() -> clap::Command {
    fn add(mut cmd: clap::Command, path: &mut Vec<String>) -> clap::Command {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|sub| sub.get_name().to_owned())
            .collect();
        for name in names {
            path.push(name.clone());
            cmd = cmd.mut_subcommand(&name, |sub| add(sub, path));
            path.pop();
        }
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let statuses = exit_statuses(&path)
            .unwrap_or_else(|| panic!("no exit statuses for `{}`", path.join(" ")));
        cmd.after_help(exit_status_help(statuses))
    }
    add(Cli::command(), &mut Vec::new())
}

/// An exit status and what it means.
pub type ExitStatus = (u8, &'static str);

/// A closed terminal, Ctrl-C and SIGTERM for a command that does not catch them: the signal
/// ends the process, which a shell reports as 128 + its number.
const STOPPED: [ExitStatus; 3] = [
    (129, "stopped by SIGHUP (the terminal closed)"),
    (130, "stopped by Ctrl-C (SIGINT)"),
    (143, "stopped by SIGTERM"),
];

/// What each command's exit statuses mean (`path` is the command's names below the top:
/// `[]`, `["check"]`, `["schema", "list"]`). Statuses 0, 1 and 2 come from
/// [`crate::commands::Outcome`] (and clap, which exits 2 on bad flags); 129, 130 and 143 from
/// `main`, for the commands that catch the signals (see [`crate::signals`]), and from the
/// signal itself for the others.
pub fn exit_statuses(path: &[&str]) -> Option<Vec<ExitStatus>> {
    let mut statuses: Vec<ExitStatus> = match path {
        [] => vec![
            (
                0,
                "success: no errors (warnings allowed, unless --deny-warnings), streams that \
                 mean the same, a snapshot that matches",
            ),
            (
                1,
                "errors found, or warnings under --deny-warnings; for `test`, a failing case; \
                 for `diff` and `snapshot`, a difference; for `compact`, a result its \
                 verification refused; for `cat`, an output that is not the whole input",
            ),
            (
                2,
                "the tool could not run: bad flags, an unreadable input, a broken schema \
                 overlay, no AG-UI events where a stream was needed, an invalid suite, no HTTP \
                 exchange at all",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT), whatever was found (`run`, `test`, `check`, \
                 `compact`, `serve` and `proxy` stop cleanly and report what they have: a \
                 cancelled job is never a pass)",
            ),
            (143, "stopped by SIGTERM (a cancelled CI job), as by Ctrl-C"),
        ],
        ["check"] => vec![
            (
                0,
                "no errors (warnings allowed, unless --deny-warnings); with --update-baseline, \
                 whatever was found (it is recorded), unless no input held an event",
            ),
            (
                1,
                "errors found (an input with no AG-UI events is one; with --baseline, only \
                 findings it does not hold count), or warnings under --deny-warnings",
            ),
            (
                2,
                "the tool could not run: bad flags, a broken config, schema overlay or \
                 baseline, a capabilities declaration that cannot be had, an input that could \
                 not be read (the others are still checked and reported)",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT): the inputs under way are read to their end, those \
                 not begun are marked interrupted, and what was read is reported, in every \
                 format; a second signal (SIGINT or SIGTERM) stops the inputs under way too, \
                 marked interrupted",
            ),
            (143, "stopped by SIGTERM, as by Ctrl-C"),
        ],
        ["run"] => vec![
            (
                0,
                "no errors in the exchange or the stream (warnings allowed, unless \
                 --deny-warnings)",
            ),
            (
                1,
                "errors found, transport ones included (an error status, a body that is no \
                 stream, a lost connection, a timeout), or warnings under --deny-warnings",
            ),
            (
                2,
                "the tool could not run: bad flags, an unset ${VAR}, a capabilities declaration \
                 that cannot be had, an input that breaks the RunAgentInput schema (sent only \
                 with --send-invalid), no HTTP exchange at all (a refused connection, an \
                 unknown host, a bad URL, a failed TLS handshake)",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT): what arrived is checked and reported, whatever it \
                 was",
            ),
            (143, "stopped by SIGTERM, as by Ctrl-C"),
        ],
        ["test"] => vec![
            (
                0,
                "every case passed; with --update-baseline, whatever findings it recorded \
                 (what a case expects and did not get, a snapshot or a status, still fails; \
                 so does an agent that could not be reached or answered with no stream)",
            ),
            (
                1,
                "a case failed (an agent that cannot be reached fails its case; with \
                 --baseline, only findings it does not hold count)",
            ),
            (
                2,
                "the tool could not run: bad flags, an invalid suite (unknown keys, an unset \
                 url_env or ${VAR}, an unreadable input, an unknown rule or event type), a \
                 --case that matches no case, a --wait-for URL that never answered, a broken \
                 baseline, a capabilities declaration that cannot be had, snapshots to update \
                 in CI without --reason, a case it could not carry out (a snapshot it could not \
                 read or write)",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT): the case under way is reported as an error and \
                 the rest as not run, whatever was found",
            ),
            (143, "stopped by SIGTERM, as by Ctrl-C"),
        ],
        ["rules"] => vec![(0, "the rules were listed"), (2, "bad flags")],
        ["explain"] => vec![
            (0, "the rule was explained"),
            (2, "no rule of that name (close names are suggested)"),
        ],
        ["schema"] => vec![
            (0, "the schemas were listed, shown or written"),
            (
                2,
                "the tool could not run: bad flags, no schema of that name, a broken schema \
                 overlay, a file that could not be written or that an export leaves (one of \
                 yours in a schema's place)",
            ),
        ],
        ["schema", "list"] => vec![(0, "the schemas were listed"), (2, "bad flags")],
        ["schema", "show"] => vec![
            (0, "the schema was printed"),
            (
                2,
                "bad flags, no schema of that name (see `schema list`), a broken schema overlay",
            ),
        ],
        ["schema", "export"] => vec![
            (
                0,
                "every schema was written (or was there already as written)",
            ),
            (
                2,
                "bad flags, a broken schema overlay, a file that could not be written, a file \
                 of yours in a schema's place (an edited schema: left as it was)",
            ),
        ],
        ["fold"] => vec![
            (
                0,
                "the result was printed (findings in the stream do not change the status: \
                 `check` reports them)",
            ),
            (
                2,
                "the tool could not run: bad flags, an unreadable input, no AG-UI events, no \
                 thread of the --thread given, an --initial-state that is neither JSON nor a \
                 JSON file",
            ),
        ],
        ["compact"] => vec![
            (
                0,
                "every input was compacted, or kept as it was where compacting would not make \
                 it smaller (a file a walk found that holds no events is skipped)",
            ),
            (
                1,
                "a result the verification refused (nothing was written for that input)",
            ),
            (
                2,
                "the tool could not run: bad flags, an input that could not be read, one named \
                 on the command line that holds no AG-UI events, outputs that would clash or \
                 overwrite an input",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT): the file being replaced is left as it was",
            ),
            (143, "stopped by SIGTERM, as by Ctrl-C"),
        ],
        ["diff"] => vec![
            (0, "the streams mean the same, at the level compared"),
            (1, "they differ"),
            (
                2,
                "the tool could not run: bad flags, an unreadable input, an input with no \
                 AG-UI events",
            ),
        ],
        ["snapshot"] => vec![
            (
                0,
                "the stream matches its expectation, or --update wrote it; `accept` and \
                 `review` say theirs in their own help",
            ),
            (
                1,
                "no expectation yet, or the stream no longer matches it: FILE.new is written \
                 beside it for review",
            ),
            (
                2,
                "the tool could not run: bad flags, an unreadable stream or one with no AG-UI \
                 events, --update in CI without --reason",
            ),
        ],
        ["snapshot", "accept"] => vec![
            (0, "FILE.new was promoted to FILE"),
            (
                2,
                "the tool could not run: bad flags, no FILE.new to accept, in CI without \
                 --reason",
            ),
        ],
        ["snapshot", "review"] => vec![
            (
                0,
                "every pending snapshot was accepted or rejected, or none was pending",
            ),
            (1, "a pending snapshot was skipped: it is still pending"),
            (
                2,
                "the tool could not run: bad flags, a directory that cannot be read, in CI \
                 without --reason",
            ),
        ],
        ["cat"] => vec![
            (0, "the events kept were written, whole"),
            (
                1,
                "the output is not all that was asked for: frames that could not be read \
                 fell in the selection, or the output format could not carry everything (said \
                 on stderr, event by event); or --run names no run of the input (-o's file is \
                 left as it was)",
            ),
            (
                2,
                "the tool could not run: bad flags, an unreadable input or one with no AG-UI \
                 events, --from after --to, an output that is the input",
            ),
        ],
        ["inspect"] => vec![
            (0, "no errors (warnings allowed, unless --deny-warnings)"),
            (
                1,
                "errors found, as `check` finds them (--stats says so on stderr), or warnings \
                 under --deny-warnings",
            ),
            (
                2,
                "the tool could not run: bad flags, a capabilities declaration that cannot be \
                 had, an unreadable input or one that fails while it is read, no AG-UI events",
            ),
        ],
        ["serve"] => vec![
            (
                0,
                "with --once, the script was served and every request passed the request/* \
                 rules (warnings allowed, unless --deny-warnings)",
            ),
            (
                1,
                "with --once, a request broke a request/* rule (an error, or a warning under \
                 --deny-warnings), or the client went away before the last turn's end",
            ),
            (
                2,
                "the tool could not run: bad flags, a SCRIPT that cannot be read or holds no \
                 AG-UI events, an invalid TOML script, an address that cannot be listened on, a \
                 --report that cannot be written",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT): the way to stop it without --once; what was found \
                 is reported first",
            ),
            (143, "stopped by SIGTERM, as by Ctrl-C"),
        ],
        ["proxy"] => vec![
            (
                0,
                "with --once, the exchange passed the request/* rules and every check rule \
                 (warnings allowed, unless --deny-warnings); of a stream the client cut (its \
                 user pressed stop), what came, without the rules only its end could tell",
            ),
            (
                1,
                "with --once, the request or the agent's answer broke a rule (a failed status, \
                 a page for a stream, a cut, an error in the stream; or a warning under \
                 --deny-warnings)",
            ),
            (
                2,
                "the tool could not run: bad flags, an --upstream that is no http(s) URL, an \
                 address that cannot be listened on, a --record directory or --report that \
                 cannot be written, or an agent that could not be reached",
            ),
            (
                130,
                "stopped by Ctrl-C (SIGINT): the way to stop it without --once; what was found \
                 is reported first",
            ),
            (143, "stopped by SIGTERM, as by Ctrl-C"),
        ],
        ["completions"] => vec![
            (0, "the script was printed"),
            (2, "bad flags: a shell there is no script for"),
        ],
        ["man"] => vec![
            (0, "the page was printed, or the pages written"),
            (
                2,
                "the tool could not run: bad flags, a directory that could not be made or \
                 written into",
            ),
        ],
        _ => return None,
    };
    match statuses.iter().position(|(code, _)| *code == 130) {
        // A command that catches Ctrl-C catches a closed terminal alike.
        Some(at) => statuses.insert(
            at,
            (129, "stopped by SIGHUP (the terminal closed), as by Ctrl-C"),
        ),
        None => statuses.extend(STOPPED),
    }
    Some(statuses)
}

/// The "Exit status:" section that ends a command's help: a status, then its meaning wrapped
/// to the 100 columns the help is wrapped to.
fn exit_status_help(statuses: Vec<ExitStatus>) -> String {
    const WIDTH: usize = 100;
    const INDENT: usize = 7;
    let mut text = String::from("Exit status:");
    for (code, meaning) in statuses {
        text.push_str(&format!("\n  {code:<5}"));
        let mut column = INDENT;
        for (i, word) in meaning.split_whitespace().enumerate() {
            if i > 0 && column + 1 + word.len() > WIDTH {
                text.push('\n');
                text.push_str(&" ".repeat(INDENT));
                column = INDENT;
            } else if i > 0 {
                text.push(' ');
                column += 1;
            }
            text.push_str(word);
            column += word.len();
        }
    }
    text
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check captured streams: framing, JSON Schemas, and the protocol's rules.
    Check(CheckArgs),
    /// Call a live agent once and check its stream as it arrives.
    Run(RunArgs),
    /// Run a conformance suite of live calls: a CI gate with a JUnit report.
    Test(TestArgs),
    /// List every rule with its default level, its tier and the spec page it rests on.
    Rules(RulesArgs),
    /// Explain a rule: what it checks, why it matters, its tier and spec page, an example
    /// that trips it.
    Explain {
        /// A rule name, e.g. schema/unknown-field.
        rule: String,
    },
    /// List, show or export the JSON Schemas events are checked against.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Print what a client ends with after applying a stream: messages, state, runs.
    Fold(FoldArgs),
    /// Rewrite stored streams smaller without changing what they fold to.
    Compact(CompactArgs),
    /// Compare two streams by meaning: exit 0 when they mean the same, 1 when they differ.
    Diff(DiffArgs),
    /// Hold a stream to an expectation file; review and accept changes.
    Snapshot(SnapshotArgs),
    /// Slice a stream by type, run or index, and convert it between JSONL, SSE, JSON and
    /// protobuf.
    Cat(CatArgs),
    /// See what happened in a stream: runs, messages, tool calls, state changes, timing and
    /// problems; in the terminal, as JSON or statistics, or as an HTML report.
    Inspect(InspectArgs),
    /// Serve a recorded stream, or a script of turns, to a client under test, with the faults
    /// it must survive; check every request it sends.
    Serve(ServeArgs),
    /// Sit between a frontend and an agent: forward each request and its stream as they
    /// come, check both live, record the exchanges.
    Proxy(ProxyArgs),
    /// Print a shell's completion script: `agui-lens completions bash > FILE`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a directory.
    Man {
        /// Write agui-lens.1 and a page per command (agui-lens-check.1, …) into DIR, made
        /// when missing.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// How `serve` frames a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServeTransport {
    /// Server-sent events.
    Sse,
    /// Length-prefixed protobuf frames.
    Proto,
    /// Protobuf when the request's Accept asks for application/vnd.ag-ui.event+proto, else SSE.
    Auto,
}

/// Line ends of the SSE framing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LineEnd {
    Lf,
    Crlf,
    Cr,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("split").args(["split_bytes", "split_random"])))]
pub struct ServeArgs {
    /// A recorded stream (any format agui-lens reads) served to every request, a browser
    /// capture (HAR) whose AG-UI streams are the turns (one that came with an error status
    /// is served with it, as the client met it), or a TOML script of turns (`[[turn]]
    /// stream = "a.jsonl"`): a thread's first request gets the first turn, its next request the
    /// second, and so on (past the last, the last again).
    pub script: PathBuf,

    /// Where to listen; port 0 picks a free one. The address is printed on startup.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: String,

    /// How streams are framed.
    #[arg(long, value_enum, default_value_t = ServeTransport::Auto)]
    pub transport: ServeTransport,

    /// Stop once the script's last turn has been served, with status 0 (clean) or 1
    /// (findings, or a client that went away before the last turn's end): for CI.
    #[arg(long)]
    pub once: bool,

    /// Also write the findings to FILE, in --format, when the server stops.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// The --report's format (findings print as they happen in the human format).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,

    /// When to colour the findings printed as they happen.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Fault: write the body one byte at a time, each its own chunk.
    #[arg(long, help_heading = "Faults")]
    pub split_bytes: bool,

    /// Fault: split the body into chunks at random points, from this seed.
    #[arg(long, value_name = "SEED", help_heading = "Faults")]
    pub split_random: Option<u64>,

    /// Fault: end SSE lines with CRLF or CR instead of LF.
    #[arg(long, value_enum, default_value_t = LineEnd::Lf, help_heading = "Faults")]
    pub line_ends: LineEnd,

    /// Fault: begin the SSE body with a UTF-8 byte order mark.
    #[arg(long, help_heading = "Faults")]
    pub bom: bool,

    /// Fault: a comment line before every SSE frame and a keep-alive comment between frames.
    #[arg(long, help_heading = "Faults")]
    pub comments: bool,

    /// Fault: `event:`, `id:` and `retry:` fields in every SSE frame.
    #[arg(long, help_heading = "Faults")]
    pub fields: bool,

    /// Fault: wait this many seconds between writes (a slow drip), e.g. 0.02.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, help_heading = "Faults")]
    pub drip: Option<Duration>,

    /// Fault: halfway through the stream, send nothing for this many seconds (longer than a
    /// client's timeout, e.g. 40).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, help_heading = "Faults")]
    pub pause: Option<Duration>,

    /// Fault (fatal): close the connection inside the middle frame, without ending the body.
    #[arg(long, help_heading = "Faults")]
    pub cut: bool,

    /// Fault (fatal): end the body cleanly halfway through the stream, without the run's
    /// terminal event (a truncated run).
    #[arg(long, help_heading = "Faults")]
    pub truncate: bool,

    /// Fault (fatal): reset the connection (TCP RST) halfway through the stream.
    #[arg(long, help_heading = "Faults")]
    pub reset: bool,

    /// Fault (fatal): answer with this error status and an HTML body instead of a stream.
    #[arg(long, value_name = "CODE", value_parser = clap::value_parser!(u16).range(400..600), help_heading = "Faults")]
    pub status: Option<u16>,

    /// Fault (fatal): send the stream with this Content-Type (e.g. text/html).
    #[arg(long, value_name = "TYPE", help_heading = "Faults")]
    pub content_type: Option<String>,

    #[command(flatten)]
    pub rules: RuleArgs,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The agent's endpoint: every request is forwarded to this URL.
    #[arg(long, value_name = "URL")]
    pub upstream: String,

    /// Where to listen; port 0 picks a free one. The address is printed on startup.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: String,

    /// Record each exchange under DIR/NNN/: request.json, response.raw, events.jsonl (none
    /// for a refusal that holds no event), and findings.jsonl when anything was found (no
    /// headers: they may carry credentials). `agui-lens check DIR` checks it as found.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Stop after one exchange, with status 0 (clean) or 1 (findings).
    #[arg(long)]
    pub once: bool,

    /// Also write the findings to FILE, in --format, when the proxy stops.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// The --report's format (findings print as they happen in the human format).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,

    /// When to colour the findings printed as they happen.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    #[command(flatten)]
    pub rules: RuleArgs,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The stream to inspect (`-` for stdin).
    pub path: PathBuf,

    /// Output format of the terminal view and of --stats.
    #[arg(long, value_enum, default_value_t = ViewFormat::Human)]
    pub format: ViewFormat,

    /// When to colour human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Show long text, arguments and state values whole instead of folded, and every run item
    /// by item (a long stream otherwise shows its first 8 and last 8 runs, and 32 more with
    /// findings, in detail, and summarises the others with their findings).
    #[arg(long)]
    pub full: bool,

    /// Show statistics instead: events and bytes per type, deltas per message, the largest
    /// events, runs.
    #[arg(long)]
    pub stats: bool,

    /// Write a self-contained HTML report to this file instead (timeline, conversation, state
    /// at any event, event table).
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["stats", "format"])]
    pub html: Option<PathBuf>,

    #[command(flatten)]
    pub rules: RuleArgs,

    #[command(flatten)]
    pub read: ReadArgs,
}

#[derive(Debug, Args)]
pub struct CatArgs {
    /// The stream to read (`-` for stdin).
    pub path: PathBuf,

    /// Keep events whose type matches a glob (`TEXT_*`, `*_END`). Repeatable: any may match.
    #[arg(long = "type", value_name = "GLOB")]
    pub types: Vec<String>,

    /// Keep the events of this run: its RUN_STARTED through its RUN_FINISHED or RUN_ERROR (and a
    /// RUN_ERROR right after its RUN_FINISHED: a late failure, which ends it in error).
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,

    /// First event kept: a 0-based event index, as `check` reports it.
    #[arg(long, value_name = "N")]
    pub from: Option<u64>,

    /// Last event kept (inclusive).
    #[arg(long, value_name = "M")]
    pub to: Option<u64>,

    /// Where to write (default stdout). The extension picks the format (.jsonl, .ndjson,
    /// .sse, .json, .pb) and compression (.gz, .zst).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// The output format, whatever the extension says (stdout, or a device or FIFO whose name
    /// does not tell: jsonl unless given).
    #[arg(long, value_name = "FORMAT")]
    pub output_format: Option<InputFormat>,

    /// How the input is laid out; detected from the extension, then the content.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,

    /// Read this entry of a browser capture (HAR) that holds several AG-UI streams.
    #[arg(long, value_name = "N")]
    pub entry: Option<usize>,

    /// Largest line or SSE frame read.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_line: Option<usize>,
}

/// How streams are normalised before they are compared.
#[derive(Debug, Args)]
pub struct NormalizeArgs {
    /// Keep a volatile field that is dropped by default (timestamp, rawEvent). Repeatable.
    #[arg(long, value_name = "FIELD", value_parser = ["timestamp", "rawEvent"])]
    pub keep: Vec<String>,

    /// Remove what a JSON Pointer pattern matches (`*` one segment, `**` any), e.g.
    /// /**/metadata. Repeatable.
    #[arg(long, value_name = "SELECTOR")]
    pub redact: Vec<String>,

    /// String values matching GLOB (`*`, `?`) are ids, compared as tokens (e.g. 'lc_run--*').
    /// Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub id_pattern: Vec<String>,

    /// Every string value under KEY is an id, compared as a token (e.g. checkpoint_ns).
    /// Repeatable.
    #[arg(long, value_name = "KEY")]
    pub id_key: Vec<String>,

    /// Neighbouring events of TYPE compare in any order (parallel tool results:
    /// TOOL_CALL_RESULT). Repeatable.
    #[arg(long, value_name = "TYPE")]
    pub unordered: Vec<String>,
}

impl NormalizeArgs {
    /// Whether any normalisation flag was given.
    pub fn given(&self) -> bool {
        !(self.keep.is_empty()
            && self.redact.is_empty()
            && self.id_pattern.is_empty()
            && self.id_key.is_empty()
            && self.unordered.is_empty())
    }
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The stream taken as the reference (`-` for stdin).
    pub a: PathBuf,
    /// The stream compared with it.
    pub b: PathBuf,

    /// What to compare: events one by one, the compacted streams, or the folded result.
    #[arg(long, value_enum, default_value_t = DiffLevel::Compact)]
    pub level: DiffLevel,

    #[command(flatten)]
    pub normalize: NormalizeArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ViewFormat::Human)]
    pub format: ViewFormat,

    /// When to colour human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Longest diff shown, in lines.
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub max_lines: usize,

    /// How the inputs are laid out; detected from the extension, then the content.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    pub action: Option<SnapshotAction>,

    /// The stream to hold to the expectation.
    pub stream: Option<PathBuf>,

    /// The expectation file (written as FILE.new when missing or different).
    #[arg(long, value_name = "FILE")]
    pub expect: Option<PathBuf>,

    /// Level for a new snapshot (an existing one keeps its own, unless updated).
    #[arg(long, value_enum)]
    pub level: Option<DiffLevel>,

    #[command(flatten)]
    pub normalize: NormalizeArgs,

    /// Write the expectation from this stream (in CI, only with --reason).
    #[arg(long)]
    pub update: bool,

    /// Why the expectation changes; recorded in the file's header.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// When to colour the diff.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    /// Longest diff shown, in lines.
    #[arg(long, value_name = "N", default_value_t = 400, global = true)]
    pub max_lines: usize,

    /// How the stream is laid out; detected from the extension, then the content.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,
}

#[derive(Debug, Subcommand)]
pub enum SnapshotAction {
    /// Promote FILE.new to FILE (in CI, only with --reason).
    Accept {
        /// The snapshot file whose pending FILE.new is accepted.
        file: PathBuf,
        /// Why the expectation changes; recorded in the file's header.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Walk the pending .new files under DIR: show each diff, then accept, reject or skip
    /// (in CI, only with --reason).
    Review {
        /// The directory searched for pending FILE.new snapshots.
        dir: PathBuf,
        /// Why the accepted expectations change; recorded in their headers.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Streams or directories to compact.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,

    /// Where to write: a file for one input (`-` for stdout); for several inputs or a
    /// directory, a directory (one that exists, or a name ending in `/`) in which each input
    /// keeps its path below the directory it was found in.
    #[arg(short, long, value_name = "OUT", conflicts_with = "in_place")]
    pub output: Option<PathBuf>,

    /// Replace each input with its compacted form, atomically; one already compact (the same
    /// bytes again) is left alone.
    #[arg(long)]
    pub in_place: bool,

    /// How far to compact.
    #[arg(long, value_enum, default_value_t = CompactLevel::Deltas)]
    pub level: CompactLevel,

    /// Write without folding and checking the result first.
    #[arg(long)]
    pub no_verify: bool,

    /// Drop frames that cannot be read as events (a line that is not JSON, a protobuf frame
    /// of an unknown kind), and chunk events the official client fails on (a first chunk
    /// with no id, one that contradicts its stream, and the rest of such a stream). Without
    /// it, a file holding any is refused and left as it was.
    #[arg(long)]
    pub drop_unreadable: bool,

    /// With a directory and -o DIR: make DIR a whole copy of it, which can stand in for it.
    /// Every file in it that is not compacted (a JSON sidecar, an error body, a browser
    /// capture, an empty file, a refused stream, a file of any other name, a hidden, ignored
    /// or excluded one) is copied to DIR unchanged; one DIR holds already with the same bytes
    /// is left alone.
    #[arg(long, requires = "output")]
    pub mirror: bool,

    /// Hold the compacted stream to this rule as an error too (as `check --deny` does), on top
    /// of the nearest agui-lens.toml: a stream that fails `check` so is never compacted into one
    /// that passes. Repeatable.
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,

    /// Hold the compacted stream to every warning as an error too, as `check --deny-warnings`
    /// fails on them.
    #[arg(long)]
    pub deny_warnings: bool,

    /// Read rule levels, schemas and the line cap from this file instead of the nearest
    /// agui-lens.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    pub read: ReadArgs,

    #[command(flatten)]
    pub walk: WalkArgs,
}

#[derive(Debug, Args)]
pub struct FoldArgs {
    /// The stream to fold (`-` for stdin).
    pub path: PathBuf,

    /// Fold this thread when the input holds several (default: the thread of the last run).
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,

    #[command(flatten)]
    pub read: ReadArgs,

    /// One line of JSON instead of indented output.
    #[arg(long)]
    pub compact: bool,
}

/// How a recorded stream is read, for the commands that read one.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// How the input is laid out; detected from the extension, then the content.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,

    /// Largest line or SSE frame read (e.g. 64MiB, 200MB, 1048576); larger ones are reported
    /// and skipped.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_line: Option<usize>,

    /// Largest shared state (estimated in memory) a patch may grow to; larger is refused.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_state: Option<usize>,

    /// The state a client held before the stream, which a recording does not carry (it
    /// starts mid-thread): a JSON value, or a file holding one. Without it, a delta before
    /// any snapshot applies to the `{}` a client starts with.
    #[arg(long, value_name = "FILE|JSON")]
    pub initial_state: Option<String>,

    /// Read this entry of a browser capture (HAR) that holds several AG-UI streams (its
    /// index in log.entries, as diagnostics name it: `capture.har#3`).
    #[arg(long, value_name = "N")]
    pub entry: Option<usize>,
}

impl ReadArgs {
    /// The state `--initial-state` gives: its JSON, or the JSON of the file it names.
    pub fn initial_state(&self) -> anyhow::Result<Option<serde_json::Value>> {
        use anyhow::Context;
        let Some(given) = &self.initial_state else {
            return Ok(None);
        };
        if let Ok(value) = serde_json::from_str(given) {
            return Ok(Some(value));
        }
        let text = agui_lens_core::read::read_whole_text(std::path::Path::new(given))
            .map_err(|e| agui_lens_core::read::plainly(std::path::Path::new(given), e))
            .with_context(|| {
                format!("--initial-state {given}: neither JSON nor a file that can be read")
            })?;
        let value = serde_json::from_str(&text)
            .with_context(|| format!("--initial-state {given}: the file is not JSON"))?;
        Ok(Some(value))
    }

    /// The reading options these flags ask for.
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            format: self.input_format,
            max_line: self.max_line.unwrap_or(DEFAULT_MAX_LINE),
            entry: self.entry,
        }
    }

    /// The largest state a patch may grow to.
    pub fn state_limit(&self) -> usize {
        self.max_state.unwrap_or(DEFAULT_STATE_LIMIT)
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check; `-` (or nothing) reads stdin.
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub read: ReadArgs,

    #[command(flatten)]
    pub walk: WalkArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    /// Also write the run's JUnit XML report to FILE (what --format junit prints), beside
    /// the format on stdout: SARIF and JUnit from one run. Replaced atomically; a FILE that
    /// holds something else than a report is left as it is.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    #[command(flatten)]
    pub rules: RuleArgs,

    /// A directory of schemas laid over the built-in ones (same relative paths replace
    /// ours; custom/NAME.json checks the value of CUSTOM events named NAME).
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,

    /// The capture begins mid-run: no first-event error, and ids first seen before the
    /// first RUN_STARTED are adopted instead of reported.
    #[arg(long)]
    pub attach: bool,

    /// Follow one file as it grows (a capture still being written), checking events as they
    /// are appended; stops at Ctrl-C, or after --idle-timeout without growth. Not with
    /// --baseline: a followed file has no end to record or hold findings to.
    #[arg(long, conflicts_with = "baseline")]
    pub follow: bool,

    /// With --follow: stop after this many seconds without growth.
    #[arg(long, value_name = "SECS", requires = "follow", value_parser = parse_seconds)]
    pub idle_timeout: Option<Duration>,
}

#[derive(Clone, Debug, Args)]
#[command(group(ArgGroup::new("body").required(true).args(["input", "message"])))]
pub struct RunArgs {
    /// The agent's endpoint, http:// or https://.
    pub url: String,

    /// The RunAgentInput to POST (`-` for stdin), sent as it is.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// POST a minimal RunAgentInput: this one user message, fresh threadId and runId.
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Send the input even when it breaks the RunAgentInput schema (to test how an agent
    /// answers a bad request); without it, such an input is refused before anything is sent.
    #[arg(long)]
    pub send_invalid: bool,

    /// An extra request header, `Name: value`. `${VAR}` in the value is read from the
    /// environment. Repeatable. Values are never printed or recorded.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Write the events to FILE as JSONL as they arrive.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Write the response body to FILE byte for byte as it arrives.
    #[arg(long, value_name = "FILE")]
    pub record_raw: Option<PathBuf>,

    /// The transport to ask for (the Accept header): SSE, or protobuf frames.
    #[arg(long, value_enum, default_value_t = Transport::Sse)]
    pub accept: Transport,

    /// Give up when no bytes arrive for this many seconds.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_seconds)]
    pub idle_timeout: Duration,

    /// Give up when the whole call takes longer than this many seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,

    /// Also print one line per event, on stderr.
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub rules: RuleArgs,

    /// A directory of schemas laid over the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,

    /// Largest SSE frame read; larger ones are reported and skipped.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_line: Option<usize>,

    /// Largest shared state (estimated in memory) a patch may grow to.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_state: Option<usize>,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The suite file: `[[case]]` tables, paths relative to it.
    pub suite: PathBuf,

    /// Also write a JUnit XML report to FILE: one testcase per case.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write the cases' snapshots from their streams (in CI, only with --reason).
    #[arg(long)]
    pub update_snapshots: bool,

    /// Why the snapshots change; recorded in their headers.
    #[arg(long, value_name = "TEXT", requires = "update_snapshots")]
    pub reason: Option<String>,

    /// Run this many cases at a time (output stays in suite order). Cases with fixed ids on
    /// one thread never run at the same time.
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,

    /// Run only the cases whose name matches GLOB (`*`, `?`); may be repeated.
    #[arg(long = "case", value_name = "GLOB")]
    pub cases: Vec<String>,

    /// Before the first case, wait until URL answers HTTP (any status), e.g. an agent that
    /// is still starting.
    #[arg(long, value_name = "URL")]
    pub wait_for: Option<String>,

    /// How long --wait-for waits, in seconds.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60.0,
        requires = "wait_for"
    )]
    pub wait_timeout: f64,

    /// Keep what each case and turn sent and received in DIR: request.json, response.raw
    /// (the body as it arrived), events.jsonl (not for a refusal the case expects),
    /// findings.jsonl (when anything was found) and outcome.json.
    #[arg(long, value_name = "DIR")]
    pub artifacts: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub scope: ScopeArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    /// Read rule settings from this file instead of the nearest agui-lens.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// A directory of schemas laid over the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
}

/// Adopting agui-lens on findings that are already there.
#[derive(Debug, Args)]
pub struct BaselineArgs {
    /// Hold back the findings recorded in FILE and fail only on new ones. Findings are known
    /// by rule, input and a fingerprint of what they say, not by line.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Record today's findings in the --baseline FILE (replaced atomically); the run then
    /// passes whatever it finds.
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
}

#[derive(Clone, Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// When to colour human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Show every finding: by default, repeats of one rule with the same subject in an input
    /// (a tool the input does not declare, called again and again) are shown once, with the
    /// count and places of the others.
    #[arg(long)]
    pub no_group: bool,
}

/// How directories given as inputs are walked.
#[derive(Debug, Args)]
pub struct WalkArgs {
    /// Leave out paths matching this glob when walking a directory (gitignore syntax:
    /// `*.bak.jsonl`, `archive/`). Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Also walk hidden files and folders (left out by default).
    #[arg(long)]
    pub hidden: bool,

    /// Walk what .gitignore and .ignore files leave out, too.
    #[arg(long)]
    pub no_ignore: bool,
}

#[derive(Clone, Debug, Args)]
pub struct RuleArgs {
    /// Report a rule or family (`state/*`) as an error. Repeatable; later flags win.
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,

    /// Report a rule or family as a warning.
    #[arg(long, value_name = "RULE")]
    pub warn: Vec<String>,

    /// Do not report a rule or family.
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,

    /// Exit with status 1 when there are warnings, too.
    #[arg(long)]
    pub deny_warnings: bool,

    #[command(flatten)]
    pub scope: ScopeArgs,

    /// The protocol version runs are held to when their RUN_STARTED declares none: 1.1, 1.0,
    /// or 0.x for the releases before 1.0 (0.0.48, 0.1.22 …). Default: the newest, 1.1. A
    /// declared version is always the one used.
    #[arg(long, value_name = "VERSION", value_parser = VersionParser)]
    pub protocol: Option<agui_lens_core::protocol::version::Version>,

    /// Read settings from this file instead of the nearest agui-lens.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Which rules apply at all: a tier, and the agent's capabilities declaration. Shared by every
/// command that checks streams under the configured levels.
#[derive(Clone, Debug, Default, Args)]
pub struct ScopeArgs {
    /// Check only the rules up to this tier; the tiers nest: must (the spec's MUSTs) ⊂ should
    /// (and its SHOULDs) ⊂ capability (and what the agent's declared capabilities ask) ⊂
    /// advice (and agui-lens's own advice: every rule, the default). Rules outside it are off
    /// whatever --deny, --warn or the config file say. Also `tier = "must"` in agui-lens.toml.
    #[arg(long, value_enum, value_name = "TIER")]
    pub tier: Option<Tier>,

    /// The agent's capabilities declaration (an AgentCapabilities JSON object, as the 1.1 spec
    /// shapes it), a file or an http(s) URL read once: a rule of the capability tier then
    /// applies only where it declares that rule's capability. Without it, capability rules
    /// apply as every other rule does.
    #[arg(long, value_name = "FILE|URL")]
    pub capabilities: Option<String>,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = RulesFormat::Human)]
    pub format: RulesFormat,

    /// List only the rules up to this tier (must ⊂ should ⊂ capability ⊂ advice), as
    /// `check --tier` keeps them.
    #[arg(long, value_enum, value_name = "TIER")]
    pub tier: Option<Tier>,
}

/// How the list of rules is written: the two formats that mean something for a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    /// A table for a person.
    Human,
    /// One JSON array of the rules, for tools.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// List the schemas: one per event type, and the shared definitions.
    List {
        /// The protocol version whose schemas to list: 1.1 (the newest, the default), 1.0
        /// or 0.x.
        #[arg(long, value_name = "VERSION", value_parser = VersionParser)]
        protocol: Option<agui_lens_core::protocol::version::Version>,
    },
    /// Print one schema: an event type (RUN_STARTED) or a definition (Message).
    Show {
        /// The event type (RUN_STARTED) or shared definition (Message) to print.
        name: String,
        /// A directory of schemas laid over the built-in ones.
        #[arg(long, value_name = "DIR")]
        schemas: Option<PathBuf>,
        /// The protocol version whose schema to print: 1.1 (the newest, the default), 1.0
        /// or 0.x.
        #[arg(long, value_name = "VERSION", value_parser = VersionParser)]
        protocol: Option<agui_lens_core::protocol::version::Version>,
    },
    /// Write every schema into a directory, as files a JSON Schema tool can use.
    Export {
        /// The directory the schemas are written into (created when missing).
        dir: PathBuf,
        /// A directory of schemas laid over the built-in ones.
        #[arg(long, value_name = "DIR")]
        schemas: Option<PathBuf>,
        /// The protocol version whose schemas to write: 1.1 (the newest, the default), 1.0
        /// or 0.x.
        #[arg(long, value_name = "VERSION", value_parser = VersionParser)]
        protocol: Option<agui_lens_core::protocol::version::Version>,
    },
}

/// How the terminal view and the statistics are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ViewFormat {
    /// Text for a person, coloured on a terminal.
    Human,
    /// One JSON document with the same content.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// The rule flags in the order they were given, so `--allow x --deny x` ends in deny.
pub fn rule_flags_in_order(matches: &ArgMatches, args: &RuleArgs) -> Vec<(Level, String)> {
    let mut flags = Vec::new();
    for (id, level, values) in [
        ("deny", Level::Deny, &args.deny),
        ("warn", Level::Warn, &args.warn),
        ("allow", Level::Allow, &args.allow),
    ] {
        let indices = matches.indices_of(id).map(Iterator::collect::<Vec<_>>);
        for (i, value) in values.iter().enumerate() {
            let position = indices
                .as_ref()
                .and_then(|ix| ix.get(i).copied())
                .unwrap_or(0);
            flags.push((position, level, value.clone()));
        }
    }
    flags.sort_by_key(|(position, ..)| *position);
    flags
        .into_iter()
        .map(|(_, level, value)| (level, value))
        .collect()
}

/// Parses a number of seconds: `60`, `1.5`.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds (e.g. 60, 1.5)"))?;
    if !(secs > 0.0 && secs < 1e9) {
        return Err(format!("`{text}` seconds is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses `64MiB`, `200MB`, `1g`, `1048576`.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 64MiB, 200MB, 1048576)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown size unit `{other}` (use KiB, MiB, GiB, KB, MB, GB)"
            ));
        }
    };
    let bytes = number * scale;
    if !(1.0..=(usize::MAX as f64)).contains(&bytes) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        // Also: every command has its exit statuses.
        command().debug_assert();
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("soon").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64MiB"), Ok(64 * 1024 * 1024));
        assert_eq!(parse_size("200MB"), Ok(200_000_000));
        assert_eq!(parse_size("1048576"), Ok(1_048_576));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("5 parsecs").is_err());
    }

    #[test]
    fn rule_flags_keep_command_line_order() {
        let matches = Cli::command().get_matches_from([
            "agui-lens",
            "check",
            "--allow",
            "a/*",
            "--deny",
            "b",
            "--warn",
            "c",
            "--allow",
            "d",
        ]);
        let (_, sub) = matches.subcommand().unwrap();
        let Command::Check(args) = Cli::try_parse_from([
            "agui-lens",
            "check",
            "--allow",
            "a/*",
            "--deny",
            "b",
            "--warn",
            "c",
            "--allow",
            "d",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        let got = rule_flags_in_order(sub, &args.rules);
        assert_eq!(
            got,
            vec![
                (Level::Allow, "a/*".to_string()),
                (Level::Deny, "b".to_string()),
                (Level::Warn, "c".to_string()),
                (Level::Allow, "d".to_string()),
            ]
        );
    }
}

/// Reads `--protocol` as [`agui_lens_core::protocol::version::Version`] does (`1.1`, `1.0`,
/// `0.x`, any pre-1.0 release such as `0.1.22`), and offers the three versions to shell
/// completion and help.
#[derive(Clone)]
pub struct VersionParser;

impl clap::builder::TypedValueParser for VersionParser {
    type Value = agui_lens_core::protocol::version::Version;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let text = value.to_string_lossy();
        text.parse().map_err(|why: String| {
            let mut err = clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd);
            if let Some(arg) = arg {
                err.insert(
                    clap::error::ContextKind::InvalidArg,
                    clap::error::ContextValue::String(arg.to_string()),
                );
            }
            err.insert(
                clap::error::ContextKind::InvalidValue,
                clap::error::ContextValue::String(text.into_owned()),
            );
            err.insert(
                clap::error::ContextKind::Suggested,
                clap::error::ContextValue::StyledStrs(vec![why.into()]),
            );
            err
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            agui_lens_core::protocol::version::Version::ALL
                .iter()
                .rev()
                .map(|v| clap::builder::PossibleValue::new(v.name())),
        ))
    }
}
