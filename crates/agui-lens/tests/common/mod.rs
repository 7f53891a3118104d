//! Helpers shared by the integration tests.

pub mod server;
pub mod trees;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

/// The `i`th event (0-based, on line `i + 1`) of a stream read from `path`, as a reader
/// would hand it over.
pub fn event_at(
    path: &Arc<str>,
    i: usize,
    value: serde_json::Value,
) -> agui_lens_core::protocol::event::Event {
    use agui_lens_core::protocol::event::{Event, Location};
    let loc = Location {
        path: path.clone(),
        line: i as u64 + 1,
        offset: 0,
        index: i as u64,
    };
    Event::from_value(loc, value)
}

/// The repository root (the workspace's, where fixtures/ and schemas/ are).
/// What an earlier run left at an output's path: a stream of one event (an output replaces
/// only a file of what it writes).
pub const EARLIER: &str = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"earlier\"}\n";

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The npm packages of `reference/` (the official SDK packages, Playwright), installed with
/// `npm ci` on first use.
pub fn reference_packages() -> PathBuf {
    use std::process::{Command, Stdio};
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let reference = root().join("reference");
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    let wanted = ["@ag-ui/encoder", "@ag-ui/proto", "playwright-core"];
    if !*installed
        && !wanted
            .iter()
            .all(|p| reference.join("node_modules").join(p).exists())
    {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&reference)
            .stdout(Stdio::null())
            .status()
            .expect("running npm ci in reference/ (is node installed?)");
        assert!(status.success(), "npm ci in reference/ failed");
    }
    *installed = true;
    reference
}

/// A program the tests need, found on PATH. When it is missing, Debian's `package` is installed
/// with apt-get, once (this needs root, as CI has on a fresh machine); elsewhere the test
/// fails saying what to install. Installs are made one at a time, so tests that need
/// different programs do not fight over apt's lock.
pub fn program(name: &str, package: &str) -> PathBuf {
    use std::process::Command;
    static APT: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    if let Some(path) = on_path(name) {
        return path;
    }
    let mut updated = APT.lock().unwrap_or_else(|e| e.into_inner());
    // Another test may have installed it while this one waited.
    if let Some(path) = on_path(name) {
        return path;
    }
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    assert!(
        root_user && on_path("apt-get").is_some(),
        "this test needs `{name}`: install it (Debian: `apt-get install {package}`); as root on \
         Debian the tests install it themselves"
    );
    eprintln!("installing Debian's {package} package for `{name}` (once)");
    let started = std::time::Instant::now();
    let update: &[&str] = &["update", "-qq"];
    let install: &[&str] = &["install", "-y", "-qq", package];
    for args in [update, install] {
        if args == update && *updated {
            continue;
        }
        let out = Command::new("apt-get")
            // Wait for another apt (another test run on this machine) instead of failing.
            .args(["-o", "DPkg::Lock::Timeout=300"])
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .expect("running apt-get");
        assert!(
            out.status.success(),
            "apt-get {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    *updated = true;
    eprintln!("{package} installed in {:.0?}", started.elapsed());
    on_path(name)
        .unwrap_or_else(|| panic!("apt-get installed {package}, but `{name}` is not on PATH"))
}

/// Where `name` is on PATH, if it is.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The real binary, run from the repository root.
pub fn agui_lens() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_agui-lens"));
    cmd.current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("CI");
    for proxy in PROXY_VARIABLES {
        cmd.env_remove(proxy);
    }
    cmd
}

/// Starts `command` with Ctrl-C, SIGTERM and SIGHUP at their defaults, as a command typed at
/// a terminal has them, and then `ignored` ignored, if given. However this test process was
/// started: a script's background job (`cargo test &`) inherits SIGINT ignored, passes that on
/// to every child, and agui-lens keeps a signal it was started ignoring ignored, so a test
/// that sends Ctrl-C would see a command that goes on.
pub fn with_default_signals(command: &mut std::process::Command, ignored: Option<libc::c_int>) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, runs.
    unsafe {
        command.pre_exec(move || {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            if let Some(signal) = ignored {
                libc::signal(signal, libc::SIG_IGN);
            }
            Ok(())
        });
    }
}

/// Limits the address space of `command`'s process to `bytes`.
pub fn with_memory_limit(command: &mut std::process::Command, bytes: u64) {
    with_limit(command, libc::RLIMIT_AS, bytes);
}

/// Starts `command` able to write files of at most `bytes` (SIGXFSZ ignored, so a write past
/// it fails as one onto a full disk does, rather than killing the process).
pub fn with_file_size_limit(command: &mut std::process::Command, bytes: u64) {
    with_limit(command, libc::RLIMIT_FSIZE, bytes);
}

fn with_limit(
    command: &mut std::process::Command,
    resource: libc::__rlimit_resource_t,
    bytes: u64,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only `setrlimit` and `signal` run, both
    // async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            libc::setrlimit(resource, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
}

/// Live tests talk to 127.0.0.1 only, never through a proxy the environment names.
pub const PROXY_VARIABLES: &[&str] = &[
    "ALL_PROXY",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "all_proxy",
    "https_proxy",
    "http_proxy",
];

/// What a report in `format` says of its findings: a SARIF report's results (its list of
/// rules names every rule it knows, found or not), else the whole report.
pub fn findings_said(format: &str, stdout: &str) -> String {
    if format != "sarif" {
        return stdout.to_string();
    }
    let doc: serde_json::Value = serde_json::from_str(stdout).unwrap();
    doc["runs"][0]["results"].to_string()
}

/// Runs the binary with arguments; returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let output = agui_lens().args(args).output().unwrap();
    split(output)
}

pub fn split(output: Output) -> (i32, String, String) {
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every file under a fixture directory, sorted, as paths relative to the root.
pub fn fixture_files(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(&root(), &root().join(dir), &mut out);
    out.sort();
    out
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_none_or(|e| e != "args" && e != "md") {
            out.push(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

/// Extra flags a fixture needs, from `<fixture>.args` beside it.
pub fn fixture_args(fixture: &Path) -> Vec<String> {
    let args = root().join(fixture).with_extension("args");
    std::fs::read_to_string(args)
        .map(|text| text.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Cases where agui-lens knowingly differs from the reference, with why: `name<TAB>reason`
/// per line, `#` comments. A listed case that starts to agree is an error too, so the list
/// cannot go stale.
pub fn known_differences(file: &str) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join(file)).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, reason) = l.split_once('\t').unwrap_or((l, ""));
            (name.to_owned(), reason.to_owned())
        })
        .collect()
}

/// Sorts case outcomes against a known-differences list: returns the failures to report
/// (unlisted differences, and listed cases that now agree).
pub fn against_known(file: &str, outcomes: &[(String, Option<String>)]) -> (Vec<String>, usize) {
    let known = known_differences(file);
    let mut failures = Vec::new();
    let mut known_hits = 0;
    let mut seen = std::collections::BTreeSet::new();
    for (name, difference) in outcomes {
        seen.insert(name.clone());
        match (difference, known.get(name)) {
            (Some(_), Some(_)) => known_hits += 1,
            (Some(difference), None) => failures.push(difference.clone()),
            (None, Some(reason)) => failures.push(format!(
                "{name} is listed in {file} ({reason}) but now agrees: remove it from the list"
            )),
            (None, None) => {}
        }
    }
    for name in known.keys().filter(|n| !seen.contains(*n)) {
        failures.push(format!(
            "{name} is listed in {file} but is no longer in the corpus"
        ));
    }
    (failures, known_hits)
}

/// Makes a FIFO at `path` (readable and writable by the test's user alone).
/// `bytes` compressed with gzip, as a `.gz` capture holds them.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

pub fn make_fifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a plain mkfifo call on a NUL-terminated path the test owns.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

/// Makes a FIFO at `path`, and reads everything written into it on another thread.
pub fn fifo(path: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    make_fifo(path);
    let path = path.to_path_buf();
    std::thread::spawn(move || std::fs::read(path).unwrap())
}
