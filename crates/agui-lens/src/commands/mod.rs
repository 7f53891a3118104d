//! Commands: the only code that wires sources, rules and reporters together.

pub mod baseline;
pub mod cat;
pub mod check;
pub mod compact;
pub mod completions;
pub mod diff;
pub mod fold;
pub mod inputs;
pub mod inspect;
pub mod man;
pub mod proxy;
pub mod rules;
pub mod run;
pub mod schema;
pub mod serve;
pub mod snapshot;
pub mod test;

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::ArgMatches;

use crate::cli::{Cli, Command};
use agui_lens_core::report::Summary;

/// How a command ended, before it becomes an exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to report (exit 0).
    Clean,
    /// Findings that fail the run (exit 1).
    Findings,
    /// The tool could not do its job for some input (exit 2).
    Failed,
}

impl Outcome {
    pub fn from_summary(run: &check::RunSummary, deny_warnings: bool) -> Outcome {
        let Summary {
            errors, warnings, ..
        } = run.summary;
        if run.failed_inputs > 0 {
            Outcome::Failed
        } else if errors > 0 || (deny_warnings && warnings > 0) {
            Outcome::Findings
        } else {
            Outcome::Clean
        }
    }

    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Findings => ExitCode::from(1),
            Outcome::Failed => ExitCode::from(2),
        }
    }
}

/// Whether `path` names something that is written into rather than replaced: a device such
/// as `/dev/null` or a terminal, a FIFO, a socket (through any symbolic links). Renaming a
/// file over one of those would put a plain file in its place, so output goes straight into
/// it instead. So does a name of one of this process's descriptors (`/dev/stdout`,
/// `/dev/fd/N`, `/proc/self/fd/N`), whatever it leads to: renamed over, the file the shell
/// redirected to was replaced (`>>` lost what it held).
pub(crate) fn is_stream(path: &Path) -> bool {
    descriptor_named(path).is_some()
        || std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir())
}

/// The descriptor of this process that `path` names, as written: `/dev/stdout` (1),
/// `/dev/stderr` (2), `/dev/fd/N`, `/proc/self/fd/N`.
fn descriptor_named(path: &Path) -> Option<libc::c_int> {
    let path = path.to_str()?;
    match path {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = path
        .strip_prefix("/dev/fd/")
        .or_else(|| path.strip_prefix("/proc/self/fd/"))?;
    n.parse().ok()
}

/// How long a command that writes as it stops waits for a reader of a FIFO.
pub(crate) const FIFO_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether a wait for a FIFO's reader, begun `since`, is given up: at a stop (Ctrl-C,
/// SIGTERM), or, for a command that was stopping already (writing as it stops), past
/// [`FIFO_GRACE`].
fn fifo_wait_given_up(stopping_already: bool, since: std::time::Instant) -> bool {
    if stopping_already {
        since.elapsed() > FIFO_GRACE
    } else {
        agui_lens_core::stop::requested()
    }
}

/// Opens a [`is_stream`] path for writing, as it is. A FIFO is opened once a reader has it
/// open; waiting for one, a stop (Ctrl-C, SIGTERM) ends the wait, or, for a command writing
/// as it stops (a server's report), [`FIFO_GRACE`] after the call (a blocking open went on
/// waiting through every signal: `serve --report FIFO` with no reader needed SIGKILL). So
/// does a write that waits for room in the FIFO (see [`StreamOut`]).
pub(crate) fn open_stream(path: &Path) -> Result<StreamOut> {
    use anyhow::Context;
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let opening = || format!("opening {}", path.display());
    let fifo = std::fs::metadata(path).is_ok_and(|meta| meta.file_type().is_fifo());
    let stopping_already = agui_lens_core::stop::requested();
    if let Some(fd) = descriptor_named(path).filter(|_| !fifo) {
        // Written through the descriptor itself, where it is (its offset, its append), not
        // through a file opened anew at its start.
        use std::os::fd::BorrowedFd;
        // SAFETY: the descriptor is borrowed only to be duplicated; a closed one fails.
        let file = unsafe { BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .with_context(opening)?;
        return Ok(StreamOut {
            file: std::fs::File::from(file),
            stopping_already,
        });
    }
    if !fifo {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(opening)?;
        return Ok(StreamOut {
            file,
            stopping_already,
        });
    }
    let called = std::time::Instant::now();
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(file) => {
                return Ok(StreamOut {
                    file,
                    stopping_already,
                });
            }
            // No reader yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if fifo_wait_given_up(stopping_already, called) {
                    anyhow::bail!(
                        "{}: stopped by {} while no reader had it open",
                        opening(),
                        agui_lens_core::stop::signal_name()
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(anyhow::Error::new(e).context(opening())),
        }
    }
}

/// A FIFO or a device written into ([`open_stream`]). A FIFO's writes do not block: one
/// that finds it full waits for room, and a stop (Ctrl-C, SIGTERM) ends the wait, unless it
/// was asked for before the output was opened (a server writing its report as it stops),
/// which waits [`FIFO_GRACE`] at most for the reader to take more. (A blocking write into a
/// FIFO whose reader had stopped reading went on waiting through every signal.)
pub(crate) struct StreamOut {
    file: std::fs::File,
    stopping_already: bool,
}

impl io::Write for StreamOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use std::os::fd::AsRawFd as _;
        let mut waiting_since: Option<std::time::Instant> = None;
        loop {
            match self.file.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                done => return done,
            }
            let since = *waiting_since.get_or_insert_with(std::time::Instant::now);
            if fifo_wait_given_up(self.stopping_already, since) {
                return Err(io::Error::other(format!(
                    "stopped by {} while the reader took no more",
                    agui_lens_core::stop::signal_name()
                )));
            }
            let mut ready = libc::pollfd {
                fd: self.file.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: poll of one descriptor this value owns, open, for 50 ms at most.
            unsafe { libc::poll(&mut ready, 1, 50) };
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The file replacing `path` replaces: the file a symbolic link leads to, also one that does
/// not exist yet (so the link stays a link, as a shell's `>` keeps it), else `path` itself.
/// A link is followed one step at a time, each relative target from the link's directory; a
/// chain longer than the system would follow (a loop) leaves `path` as it is.
fn replaced(path: &Path) -> PathBuf {
    /// Linux's limit on the links followed while resolving one path.
    const MAX_HOPS: usize = 40;
    let mut at = path.to_path_buf();
    for _ in 0..MAX_HOPS {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(&at) {
                // `join` keeps an absolute target as it is.
                Ok(target) => at = at.parent().unwrap_or(Path::new("")).join(target),
                Err(_) => return path.to_path_buf(),
            },
            _ => return at,
        }
    }
    path.to_path_buf()
}

/// Why a file cannot be written at `path`, when `path` is a link that loops, or whose target's
/// folder is not there and lies outside the link's own folder (a stale link, a volume not
/// mounted): written through, the folders of a target anywhere on the system were made
/// (`/nonexistent/`). A target below the link's folder has its folders made, as an output's
/// are (`base.toml` → `shared/base.toml`).
pub(crate) fn link_into_nothing(path: &Path) -> Option<io::Error> {
    let path: PathBuf = path.components().collect();
    if !path.is_symlink() || path.exists() {
        return None;
    }
    let target = replaced(&path);
    // Compared as written, absolute: `x/f`, `./x/f` and the absolute spelling of the same
    // place are one place.
    let below = match (plain_path(&target), plain_path(directory_of(&path))) {
        (Some(target), Some(folder)) => target.starts_with(folder),
        _ => false,
    };
    if target != path && (below || directory_of(&target).is_dir()) {
        return None;
    }
    Some(io::Error::other(format!(
        "{} is a link that leads nowhere ({}): nothing is written through it",
        path.display(),
        std::fs::read_link(&path).unwrap_or_default().display()
    )))
}

/// `path` made absolute, with `.` and `..` taken out as written (no link is followed); none
/// when it cannot be made absolute (an empty path).
pub(crate) fn plain_path(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let whole = std::path::absolute(path).ok()?;
    let mut plain = PathBuf::new();
    for part in whole.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                plain.pop();
            }
            other => plain.push(other),
        }
    }
    Some(plain)
}

/// Whether an output path ends in `/`: it names a folder, there or not.
pub(crate) fn names_a_folder(path: &Path) -> bool {
    path.as_os_str().as_encoded_bytes().ends_with(b"/")
}

/// What an output may replace of a file already at its path: what the command writes there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replaces {
    /// An AG-UI stream (a compacted or copied stream, a recording).
    Stream,
    /// A page `inspect --html` wrote.
    Page,
    /// A report agui-lens wrote (`proxy --report`, `serve --report`), in any of its formats.
    Report,
}

/// Refuses an output at `path` (named by `flag`) when a file is there that the command did
/// not make, as far as its bytes tell: one that holds no AG-UI event (notes, a config, a
/// browser capture) for a stream; anything but an `inspect` page for a page; anything but a
/// report of agui-lens's for a report. An empty file,
/// a new path, a device or a FIFO are written. A stored file is only ever replaced when it
/// held what replaces it: a slip of the name never costs a recording or a file of the user's.
pub(crate) fn refuse_to_replace(path: &Path, flag: &str, what: Replaces) -> Result<()> {
    // Written into, not replaced.
    if is_stream(path) {
        return Ok(());
    }
    let target = replaced(path);
    let Ok(meta) = std::fs::metadata(&target) else {
        return Ok(());
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(());
    }
    let held = match what {
        Replaces::Stream => holds_a_stream(&target),
        Replaces::Page => is_inspect_page(&target),
        Replaces::Report => is_report(&target),
    };
    match held {
        Ok(()) => Ok(()),
        Err(holds) => {
            let writes = match what {
                Replaces::Stream => "AG-UI events",
                Replaces::Page => "an `inspect --html` page",
                Replaces::Report => "a report",
            };
            anyhow::bail!(
                "{flag} {}: the file there holds {holds}, and this would replace it with \
                 {writes}; it was left as it was (remove it, or name another file)",
                path.display()
            )
        }
    }
}

/// Whether the file at `path` holds AG-UI events (one is enough, among its first frames), or
/// else what it holds instead.
fn holds_a_stream(path: &Path) -> std::result::Result<(), String> {
    use agui_lens_core::read::{self, InputSpec, ReadOptions};
    if read::is_har_file(path) {
        return Err("a browser capture (HAR)".into());
    }
    let spec = InputSpec::File(path.to_path_buf());
    match read::open(&spec, &ReadOptions::default()) {
        Ok(opened) => read::holds_events(opened),
        Err(err) => Err(format!("what cannot be read as a stream ({err:#})")),
    }
}

/// Whether the file at `path` is a page `inspect --html` wrote, or else what it is.
fn is_inspect_page(path: &Path) -> std::result::Result<(), String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    if read.is_err() {
        return Err("what cannot be read".into());
    }
    let text = String::from_utf8_lossy(&head);
    if text.starts_with(crate::inspect::html::PAGE_START) {
        return Ok(());
    }
    Err(what_it_holds(path, &head))
}

/// Whether the file at `path` is a report agui-lens wrote (see [`holds_report`]), or else what
/// it holds: the findings `run` recorded beside a stream are JSON Lines of findings too, and no
/// report (replaced, the stream would check otherwise).
fn is_report(path: &Path) -> std::result::Result<(), String> {
    use std::io::Read as _;
    /// The largest file read whole to tell: a report of ours past it is not told from
    /// another file, and left as it is.
    const READ: u64 = 256 << 20;
    use agui_lens_core::check::recorded::{Recorded, recorded};
    match recorded(path) {
        Some(Recorded::RunFindings { .. }) => {
            return Err(
                "what `agui-lens run` found of the recording beside it, which its check reads"
                    .into(),
            );
        }
        Some(Recorded::RunRequest { .. }) => {
            return Err(
                "the request `agui-lens run` sent for the recording beside it, which its check \
                 reads"
                    .into(),
            );
        }
        _ => {}
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(READ + 1).read_to_end(&mut bytes));
    if read.is_err() {
        return Err("what cannot be read".into());
    }
    if bytes.len() as u64 <= READ && holds_report(&bytes) {
        return Ok(());
    }
    Err(what_it_holds(path, &bytes[..bytes.len().min(4096)]))
}

/// What the file at `path`, starting with `head`, holds, said for a refusal to replace it:
/// AG-UI events, a browser capture, or what its first bytes look like.
fn what_it_holds(path: &Path, head: &[u8]) -> String {
    match holds_a_stream(path) {
        Ok(()) => "AG-UI events".to_owned(),
        Err(har) if agui_lens_core::read::is_har_file(path) => har,
        Err(_) => format!(
            "something else ({})",
            agui_lens_core::read::describe_non_stream(head)
        ),
    }
}

/// Writes a file the user named with what `write` writes: a regular file (new, or existing,
/// also through a link) is replaced atomically ([`temp_beside`], [`persist`]); a device or a
/// FIFO ([`is_stream`]) is written into. Ctrl-C or SIGTERM while the temp file exists stops
/// the writing and removes it (the command then fails, and its exit status names the
/// signal); a stop asked for before the call (a server writing its capture as it stops)
/// does not stop it. Every error names the file.
pub(crate) fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn io::Write) -> Result<()>,
) -> Result<()> {
    use anyhow::Context;
    let writing = || format!("writing {}", path.display());
    if is_stream(path) {
        // A stop ends a wait for the reader of a FIFO (see `StreamOut`).
        let _caught = crate::signals::Caught::begin();
        let mut out = io::BufWriter::new(open_stream(path)?);
        write(&mut out).with_context(writing)?;
        return out.flush().with_context(writing);
    }
    // Dropped after `temp`: the signals are caught until the temp file is gone or in place.
    let _caught = crate::signals::Caught::begin();
    let stopping_already = agui_lens_core::stop::requested();
    let mut temp = temp_beside(path)?;
    {
        let mut out = io::BufWriter::new(Stoppable::new(temp.as_file_mut()));
        write(&mut out).with_context(writing)?;
        out.flush().with_context(writing)?;
    }
    // A stop that came while the last bytes went out (one large write) leaves the file as
    // it was too: the temp file is removed as it is dropped.
    if !stopping_already && agui_lens_core::stop::requested() {
        anyhow::bail!(
            "{}: stopped by {}",
            writing(),
            agui_lens_core::stop::signal_name()
        );
    }
    persist(temp, path).with_context(writing)
}

/// Writes beside the stream file `recording` the request it answers (see
/// [`agui_lens_core::check::recorded::REQUEST_SUFFIX`]), with the stream's length now: a check
/// of the stream reads it as the live check had it. `run --record` writes it; `compact`
/// writes it anew beside what it rewrote. `refused`: the status with which the agent refused
/// the input, sent invalid on purpose.
pub(crate) fn record_request(
    recording: &Path,
    request: &serde_json::Value,
    refused: Option<u16>,
) -> Result<()> {
    use agui_lens_core::check::recorded::{recording_digest, request_file_of, request_record};
    let size = std::fs::metadata(recording)
        .map(|m| m.len())
        .unwrap_or_default();
    let refused = match refused {
        Some(status) => Some((
            status,
            recording_digest(&agui_lens_core::read::read_whole(recording)?),
        )),
        None => None,
    };
    let mut text = request_record(request, size, refused).to_string();
    text.push('\n');
    write_bytes(&request_file_of(recording), text.as_bytes())
}

/// [`write_file`] of bytes held whole.
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, |out| Ok(out.write_all(bytes)?))
}

/// Writes the cut file `cut` saying the recording beside it is not finished
/// ([`agui_lens_core::check::recorded::UNFINISHED`]), whole or not at all: what every recorder
/// (`run --record`, `proxy --record`, `test --artifacts`) leaves until its recording's end.
pub(crate) fn say_unfinished(cut: &Path) -> Result<()> {
    let words = format!("{}\n", agui_lens_core::check::recorded::UNFINISHED);
    write_bytes(cut, words.as_bytes())
}

/// A writer that refuses more bytes once a stop is asked for (Ctrl-C, SIGTERM), unless one
/// had been asked for before it was made.
struct Stoppable<W> {
    inner: W,
    stopping_already: bool,
}

impl<W> Stoppable<W> {
    fn new(inner: W) -> Stoppable<W> {
        Stoppable {
            inner,
            stopping_already: agui_lens_core::stop::requested(),
        }
    }
}

impl<W: io::Write> io::Write for Stoppable<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.stopping_already && agui_lens_core::stop::requested() {
            return Err(io::Error::other(format!(
                "stopped by {}",
                agui_lens_core::stop::signal_name()
            )));
        }
        // A MiB at a time, so that a stop is heard while a large buffer goes out.
        self.inner.write(&buf[..buf.len().min(1 << 20)])
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A temp file beside the file `path` names (see [`replaced`]), to be persisted over it once
/// complete, so a failed write never leaves half a file. Created with the permissions a new
/// file gets (0666 less the umask). When the file's folders do not exist yet, the temp file
/// is made in the nearest one that does, and [`persist`] makes the rest: nothing is made for
/// a file that is never persisted.
pub(crate) fn temp_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    use anyhow::Context;
    use std::os::unix::fs::PermissionsExt;
    if let Some(nowhere) = link_into_nothing(path) {
        return Err(nowhere.into());
    }
    if names_a_folder(path) {
        anyhow::bail!(
            "{} names a directory: name the file to write",
            path.display()
        );
    }
    let path = replaced(path);
    refuse_up_out_of_nothing(&path)?;
    let mut dir = directory_of(&path);
    while !dir.is_dir() {
        match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => dir = parent,
            _ => {
                dir = Path::new(".");
                break;
            }
        }
    }
    // The name with 12 bytes more (`.NAME.XXXXXX.tmp`) must still be a name the file system
    // takes (255 bytes at most): a long one is cut to fit.
    let prefix = path
        .file_name()
        .map(|n| format!(".{}.", cut_to(&n.to_string_lossy(), TEMP_NAME_PART)))
        .unwrap_or_else(|| ".agui-lens.".into());
    let temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    crate::signals::remove_if_ended(temp.path());
    Ok(temp)
}

/// Whether `path` is named as [`temp_beside`] names its temp files, `.NAME.XXXXXX.tmp` (or as
/// the Python package's mirror names its own, `.NAME.agui-lens-HEX.tmp`, 32 hex digits): one a
/// write left that ended before its file was put in place (killed), or one being written now.
pub(crate) fn named_as_a_temp_file_of_ours(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return false;
    };
    let Some(rest) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    rest.rsplit_once('.').is_some_and(|(stem, random)| {
        let ours = match random.strip_prefix("agui-lens-") {
            Some(hex) => {
                hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            }
            None => random.len() == 6 && random.bytes().all(|b| b.is_ascii_alphanumeric()),
        };
        !stem.is_empty() && ours
    })
}

/// The most of a file's name a temp file beside it carries.
const TEMP_NAME_PART: usize = 200;

/// The longest start of `text` of at most `max` bytes that ends between characters.
fn cut_to(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Puts a finished temp file from [`temp_beside`] in place of the file `path` names (through
/// a symbolic link, the file it leads to), durably: its bytes reach the disk, it takes the
/// permissions that file has (when it exists), it is renamed over it, and the directory's new
/// entry reaches the disk. Until the rename the file is untouched; on failure the temp file
/// is removed. So after a crash it holds either its old bytes or all of the new ones.
pub(crate) fn persist(temp: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    if let Some(nowhere) = link_into_nothing(path) {
        return Err(nowhere);
    }
    let path = replaced(path);
    if let Ok(meta) = std::fs::metadata(&path) {
        // The owner first: giving a file away may clear its set-id bits.
        keep_owner(temp.as_file(), &meta, &path)?;
        temp.as_file().set_permissions(meta.permissions())?;
    }
    temp.as_file().sync_all()?;
    create_folders(directory_of(&path))?;
    temp.persist(&path).map_err(|e| e.error)?;
    std::fs::File::open(directory_of(&path))?.sync_all()
}

/// Gives `file` the owner and group of the file it is to replace (`meta`, at `path`): a
/// history an agent's user writes, compacted by a job that runs as root, stays the agent's.
/// Nothing to do when they are the same already (the usual case). When they cannot be given
/// (only root gives a file away), the file is still replaced, and a warning says whose it
/// now is.
fn keep_owner(file: &std::fs::File, meta: &std::fs::Metadata, path: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let made = file.metadata()?;
    if (made.uid(), made.gid()) == (meta.uid(), meta.gid()) {
        return Ok(());
    }
    if let Err(err) = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())) {
        say!(
            "warning: {} belonged to user {} and group {}; replaced, it belongs to user {} and \
             group {} ({err})",
            path.display(),
            meta.uid(),
            meta.gid(),
            made.uid(),
            made.gid()
        );
    }
    Ok(())
}

/// Runs `read`, which reads a command's inputs through, with Ctrl-C, SIGTERM and SIGHUP asking
/// it to stop. Stopped, what it read is not the whole input, so nothing of it may be shown or
/// kept: the command fails with "stopped by SIGNAL before UNREAD: LEFT" (`left` says what
/// became of its output) and exits with the signal's status.
pub(crate) fn reading<T>(
    unread: &str,
    left: impl FnOnce() -> String,
    read: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let caught = crate::signals::Caught::begin();
    let result = read();
    drop(caught);
    if agui_lens_core::stop::requested() {
        let signal = agui_lens_core::stop::signal_name();
        anyhow::bail!("stopped by {signal} before {unread}: {}", left());
    }
    result
}

/// Writes what a command shows on stdout once it has read its input (`what`: "the view"),
/// through a buffer: a stop meanwhile (Ctrl-C, SIGTERM) ends the writing at the next write and
/// says that what stdout holds of it is cut short (a `> out.json` is no whole document).
/// Uncaught there, the signal ended the process with nothing said.
pub(crate) fn writing_stdout(
    what: &str,
    write: impl FnOnce(&mut dyn io::Write) -> Result<()>,
) -> Result<()> {
    let caught = crate::signals::Caught::begin();
    // (A reader that went away gets no more, and the command ends with its own status.)
    let mut out = io::BufWriter::new(UntilStopped(ReportOut::default()));
    let written = write(&mut out).and_then(|()| Ok(out.flush()?));
    drop(out);
    drop(caught);
    if agui_lens_core::stop::requested() {
        anyhow::bail!(
            "stopped by {} while writing {what}: what stdout holds of it is cut short",
            agui_lens_core::stop::signal_name()
        );
    }
    written
}

/// Standard output, each write of it watched (see [`crate::signals::to_stdout`]): a stop while
/// a write waits on a reader that takes no more ends the command.
pub(crate) struct Stdout;

impl io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        crate::signals::to_stdout(|| io::stdout().lock().write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        crate::signals::to_stdout(|| io::stdout().lock().flush())
    }
}

/// A writer that refuses to write once a stop was asked for. (Its error is no `Interrupted`,
/// which `write_all` would try again.)
struct UntilStopped<W>(W);

impl<W: io::Write> io::Write for UntilStopped<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if agui_lens_core::stop::requested() {
            return Err(io::Error::other("stopped"));
        }
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        if agui_lens_core::stop::requested() {
            return Err(io::Error::other("stopped"));
        }
        self.0.flush()
    }
}

/// Standard output of a command whose exit status is its verdict (check, run, test, diff,
/// snapshot, inspect, and the servers' live reports; fold's view too): a reader that stops
/// reading (`agui-lens test … | head -1`) is given no more, and the command runs on to its
/// end, writes its other reports (`--junit`, `--report`) and exits with its verdict. Ended at
/// the first write that found the pipe closed, such a command exited 0 whatever it had found,
/// before its `--junit` was written: a failing gate passed under `set -o pipefail`. Any other
/// failure to write (a full device) is kept for [`report_lost`].
#[derive(Default)]
pub(crate) struct ReportOut {
    /// The reader went away: what is written is dropped.
    gone: bool,
}

/// Why the report on stdout could not be written, when it could not for another reason than
/// a reader that went away (a full device): the command runs to its end all the same (its
/// `--junit` written), and then fails (see [`report_lost`]).
static REPORT_LOST: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Why the report on stdout was lost (not for a reader that went away), if it was: the
/// command's verdict is then no pass, whatever it found.
pub fn report_lost() -> Option<String> {
    REPORT_LOST
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

impl ReportOut {
    fn kept(&mut self, done: io::Result<usize>, len: usize) -> io::Result<usize> {
        match done {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.gone = true;
                if e.kind() != io::ErrorKind::BrokenPipe {
                    REPORT_LOST
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert_with(|| e.to_string());
                }
                Ok(len)
            }
            done => done,
        }
    }
}

impl io::Write for ReportOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        let done = Stdout.write(buf);
        self.kept(done, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.gone {
            return Ok(());
        }
        let done = Stdout.flush().map(|()| 0);
        self.kept(done, 0).map(drop)
    }
}

/// Why the recording at `path` holds part of its stream, when it does (see
/// [`agui_lens_core::check::recorded::part_recorded`]).
pub(crate) fn cut_when_recorded(path: &Path) -> Option<String> {
    agui_lens_core::check::recorded::part_recorded(path)
}

/// Standard error for what a verdict command says beside its report ("wrote FILE", the
/// input's problems): a closed or full stderr loses the words, never the verdict (an error
/// writing them ended `snapshot` with exit 0 where a snapshot had changed).
pub(crate) struct Said;

impl io::Write for Said {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = io::stderr().flush();
        Ok(())
    }
}

/// Removes the file at `path`; nothing there is no error (it is gone either way).
pub(crate) fn remove_if_there(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What a command stopped before writing `path` left of it: the file as it was, or none.
pub(crate) fn left_unwritten(path: &Path) -> String {
    if path.exists() {
        format!("{} was left as it was", path.display())
    } else {
        format!("{} was not written", path.display())
    }
}

/// Refuses a path that goes up (`..`) out of a folder that is not there (`nd/../FILE`, no
/// `nd`): every check of an output (is it an input, a file of the user's, a report) found
/// nothing at such a path, and once its folders were made the write replaced `FILE`. Said
/// before anything is made.
pub(crate) fn refuse_up_out_of_nothing(path: &Path) -> io::Result<()> {
    use std::path::Component;
    let mut at = PathBuf::new();
    for part in path.components() {
        if part == Component::ParentDir
            && !at.as_os_str().is_empty()
            && std::fs::symlink_metadata(&at).is_err()
        {
            return Err(io::Error::other(format!(
                "{} goes up out of the folder {}, which is not there: made, it would lead \
                 elsewhere than what was checked; name the path without `..`",
                path.display(),
                at.display()
            )));
        }
        at.push(part);
    }
    Ok(())
}

/// Makes the folder `dir` and those above it, as needed. Where a file stands in the way, or a
/// link that leads nowhere (its target moved, a volume not mounted), the error names it
/// ("File exists" named nothing); a path up out of a folder not there is refused
/// ([`refuse_up_out_of_nothing`]).
pub(crate) fn create_folders(dir: &Path) -> io::Result<()> {
    refuse_up_out_of_nothing(dir)?;
    // `out/` names the link `out` too: its trailing slash would have it followed.
    let dir: &Path = &dir.components().collect::<PathBuf>();
    std::fs::create_dir_all(dir).map_err(|err| {
        let named = |a: &&Path| !a.as_os_str().is_empty();
        let in_the_way = dir
            .ancestors()
            .filter(named)
            .find(|a| a.exists() && !a.is_dir());
        let nowhere = || {
            dir.ancestors()
                .filter(named)
                .find(|a| a.is_symlink() && !a.exists())
        };
        match (in_the_way, nowhere()) {
            (Some(file), _) => io::Error::other(format!(
                "{} is a file, not a folder (making {})",
                file.display(),
                dir.display()
            )),
            (None, Some(link)) => io::Error::other(format!(
                "{} is a link that leads nowhere ({})",
                link.display(),
                std::fs::read_link(link).unwrap_or_default().display()
            )),
            (None, None) => err,
        }
    })
}

/// The directory a file's entry is in (`.` for a bare name).
pub(crate) fn directory_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A temp file being written that [`persist`] will sync: each time another few MiB have been
/// written, the system is asked to start writing them to the disk, without waiting for it.
/// The sync before the rename then finds most of the file already there, instead of waiting
/// for all of it (at 100 MB in, 15 MB out, that wait was ~8 ms of a ~150 ms `compact`).
pub(crate) struct WriteBack {
    file: std::fs::File,
    /// Whether the file is to be persisted at all (a temp file copied to stdout is not).
    early: bool,
    written: u64,
    /// Where the part not yet handed to the disk begins.
    pending: u64,
}

impl WriteBack {
    /// Hands the disk this much at a time.
    const STEP: u64 = 1 << 20;

    pub(crate) fn new(file: std::fs::File, early: bool) -> Self {
        WriteBack {
            file,
            early,
            written: 0,
            pending: 0,
        }
    }
}

impl io::Write for WriteBack {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.early && self.written - self.pending >= Self::STEP {
            #[cfg(target_os = "linux")]
            {
                use std::os::fd::AsRawFd;
                // Only advice: whatever goes wrong here, the sync in `persist` reports.
                // SAFETY: a plain system call on a descriptor this value owns.
                unsafe {
                    libc::sync_file_range(
                        self.file.as_raw_fd(),
                        self.pending as libc::off64_t,
                        (self.written - self.pending) as libc::off64_t,
                        libc::SYNC_FILE_RANGE_WRITE,
                    );
                }
            }
            self.pending = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Whether two paths name the same file (an output that would overwrite its own input).
pub(crate) fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    matches!((file_id(a), file_id(b)), (Some(a), Some(b)) if a == b)
}

/// Whether two paths name one place, whether a file is there or not (a baseline about to be
/// recorded): the same name in the same folder, links followed (a link to a file yet to be
/// written too: writing through it writes that file).
pub(crate) fn same_place(a: &std::path::Path, b: &std::path::Path) -> bool {
    if a.as_os_str() == "-" || b.as_os_str() == "-" {
        return false;
    }
    let place = |path: &std::path::Path| {
        let mut path = path.to_path_buf();
        // (A bound on links to links: a loop of them names no place.)
        for _ in 0..40 {
            let folder = match path.parent() {
                Some(folder) if !folder.as_os_str().is_empty() => folder,
                _ => std::path::Path::new("."),
            };
            let at = std::fs::canonicalize(folder).ok()?.join(path.file_name()?);
            match std::fs::read_link(&at) {
                Ok(to) => path = at.parent()?.join(to),
                Err(_) => return Some(at),
            }
        }
        None
    };
    matches!((place(a), place(b)), (Some(a), Some(b)) if a == b)
}

/// Refuses an output that names one of the command's inputs (through links too): writing it
/// would destroy what the command reads, before or while it is read. `inputs` are each a path
/// and the flag or argument that names it.
pub(crate) fn refuse_output_over_input(
    output: &std::path::Path,
    flag: &str,
    inputs: &[(&std::path::Path, &str)],
) -> Result<()> {
    for (input, named_by) in inputs {
        if same_file(output, input) || same_place(output, input) {
            anyhow::bail!(
                "{flag} {} is an input (named by {named_by}): writing it would destroy what is \
                 read; name another file",
                output.display()
            );
        }
    }
    Ok(())
}

/// Refuses a `--junit` path that holds something else than a JUnit report (a `pom.xml`, a
/// page, any file that is not one), or is a folder: only a report, or nothing, is replaced.
pub(crate) fn refuse_junit_over_other(path: &std::path::Path) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!("--junit {} is a directory: name a file", path.display());
    }
    // A FIFO or a device (`/dev/stdout`) holds no file to keep, and reading one to see what
    // it holds waited for ever: the report is written into it.
    if is_stream(path) {
        return Ok(());
    }
    let bytes = match agui_lens_core::read::read_whole(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return junit_can_be_written(path),
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context(format!("reading --junit {}", path.display()))
            );
        }
    };
    if !holds_junit_report(&bytes) {
        anyhow::bail!(
            "--junit {} holds something else than a JUnit report, so it was left as it is: \
             name another file",
            path.display()
        );
    }
    junit_can_be_written(path)
}

/// A `--junit` file that cannot be made is said before the run: after it, the report on
/// stdout had already called the run successful.
fn junit_can_be_written(path: &Path) -> Result<()> {
    can_be_written(path, "--junit")
}

/// Whether a file can be made where `path` is to be written (by a temp file beside it, taken
/// away at once), said as the flag that names it.
fn can_be_written(path: &Path, flag: &str) -> Result<()> {
    use anyhow::Context;
    temp_beside(path)
        .map(drop)
        .with_context(|| format!("{flag} {} cannot be written", path.display()))
}

/// Refuses a `--report` path (`proxy`, `serve`) that holds something else than a report
/// agui-lens writes, in any of its formats (the format may change from one run to the next),
/// or is a folder: a capture, a config or notes named by a slip are left as they were.
pub(crate) fn refuse_report_over_other(path: &Path) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!("--report {} is a directory: name a file", path.display());
    }
    if let Some(err) = link_into_nothing(path) {
        anyhow::bail!("--report {err}");
    }
    refuse_to_replace(path, "--report", Replaces::Report)?;
    // A long session is not run to find out at its end that its report cannot be kept.
    can_be_written(path, "--report")
}

/// Whether `bytes` are empty or a report agui-lens wrote, in one of its formats, as far as
/// what each holds of agui-lens's own tells: the JSON report (its three members, and the
/// summary's counts), a SARIF log of the agui-lens tool, a JUnit report of the `agui-lens`
/// suites, JSON Lines each a finding or a file's line as agui-lens writes them, GitHub
/// annotations closed by agui-lens's line, the human report (findings, then what it checked).
fn holds_report(bytes: &[u8]) -> bool {
    use serde_json::Value;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return true;
    }
    if text.starts_with('<') {
        return holds_junit_report(bytes) && text.contains("<testsuites name=\"agui-lens\"");
    }
    if let Ok(Value::Object(report)) = serde_json::from_str::<Value>(text) {
        let ours =
            |run: &Value| run.pointer("/tool/driver/name") == Some(&Value::from("agui-lens"));
        if let Some(Value::Array(runs)) = report.get("runs") {
            return !runs.is_empty() && runs.iter().all(ours);
        }
        let members = ["diagnostics", "files", "summary"];
        if report.len() == members.len()
            && members.iter().all(|key| report.contains_key(*key))
            && ["unreadable", "interrupted", "skipped"]
                .iter()
                .all(|count| report["summary"].get(*count).is_some_and(Value::is_u64))
        {
            return true;
        }
        // Else perhaps one line of JSON Lines.
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    // A finding as `--format jsonl` writes it has every member, null or not; a file's line
    // names its path and what happened to it.
    const FINDING: &[&str] = &[
        "rule",
        "severity",
        "path",
        "line",
        "offset",
        "event_index",
        "event_type",
        "message",
        "help",
        "pointer",
        "keyword",
    ];
    let jsonl_line = |line: &&str| match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(record)) => {
            let finding = FINDING.iter().all(|key| record.contains_key(*key));
            let file = record.contains_key("path")
                && record.keys().all(|key| {
                    // (`notes`: as reports of earlier versions name the remarks.)
                    matches!(
                        key.as_str(),
                        "path" | "failure" | "skipped" | "remarks" | "notes"
                    )
                });
            let stop = record.len() == 1 && record.contains_key("stopped_by");
            let repeats = record.contains_key("repeats") && record.contains_key("more");
            finding || file || stop || repeats
        }
        _ => false,
    };
    if lines.iter().all(jsonl_line) {
        return true;
    }
    let last = lines.last().copied().unwrap_or_default();
    if last.starts_with("agui-lens: ") {
        return lines
            .iter()
            .all(|line| line.starts_with("::") || line.starts_with("agui-lens: "));
    }
    // The human report: findings (a label and rule, then indented lines), a verdict per file,
    // and last what it checked.
    let ours = |line: &&str| {
        line.starts_with(char::is_whitespace)
            || [
                "error",
                "warning",
                "note",
                "checked ",
                "stopped ",
                "agui-lens",
            ]
            .iter()
            .any(|start| line.starts_with(start))
    };
    last.starts_with("checked ") && lines.iter().all(ours)
}

/// Whether `bytes` are empty, or a JUnit report: after an XML declaration and comments, a
/// `<testsuites>` or `<testsuite>` element.
pub(crate) fn holds_junit_report(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    if rest.is_empty() {
        return true;
    }
    loop {
        let skipped = if rest.starts_with("<?") {
            rest.find("?>").map(|end| end + 2)
        } else if rest.starts_with("<!--") {
            rest.find("-->").map(|end| end + 3)
        } else {
            break;
        };
        let Some(end) = skipped else {
            return false;
        };
        rest = rest[end..].trim_start();
    }
    ["<testsuites", "<testsuite"].iter().any(|root| {
        rest.strip_prefix(root).is_some_and(|after| {
            after.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/')
        })
    })
}

/// The files the rule settings are read from: the config file (named by `--config`, or the
/// `agui-lens.toml` found from the current directory up) and a `--capabilities` declaration
/// that is a file; each with what names it, for [`refuse_output_over_input`].
pub(crate) fn settings_files(
    rules: &crate::cli::RuleArgs,
) -> Vec<(std::path::PathBuf, &'static str)> {
    let named_by = match rules.config {
        Some(_) => "--config",
        None => "the agui-lens.toml in use",
    };
    let config = crate::config::Config::locate(rules.config.as_deref());
    let capabilities = rules.scope.capabilities.as_deref();
    let capabilities = capabilities.filter(|source| !crate::declaration::is_url(source));
    config
        .map(|path| (path, named_by))
        .into_iter()
        .chain(capabilities.map(|source| (source.into(), "--capabilities")))
        .collect()
}

/// What tells a file apart from every other, through links: its device and inode.
pub(crate) fn file_id(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Runs the command the user asked for.
pub fn run(cli: &Cli, matches: &ArgMatches) -> Result<Outcome> {
    // A recording whose recorder holds it now is said to be under way, not killed.
    agui_lens_core::check::recorded::tell_recording_now_by(run::held_by_a_recorder);
    let sub = matches.subcommand().map(|(_, m)| m).unwrap_or(matches);
    match &cli.command {
        Command::Check(args) => check::run(args, sub),
        Command::Run(args) => run::run(args, sub),
        Command::Test(args) => test::run(args),
        Command::Rules(args) => rules::list(args),
        Command::Explain { rule } => rules::explain(rule),
        Command::Schema(command) => schema::run(command),
        Command::Fold(args) => fold::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Cat(args) => cat::run(args),
        Command::Inspect(args) => inspect::run(args, sub),
        Command::Serve(args) => serve::run(args, sub),
        Command::Proxy(args) => proxy::run(args, sub),
        Command::Completions { shell } => completions::run(*shell),
        Command::Man { dir } => man::run(dir.as_deref()),
    }
}

/// A report in `format` of a run named `name` that could not begin, `err` as an input
/// that failed: what [`report_not_begun`] writes.
pub(crate) fn not_begun_report(
    format: agui_lens_core::report::Format,
    name: &str,
    err: &anyhow::Error,
) -> Result<Vec<u8>> {
    let buffer = serve::Buffer::default();
    let mut file = agui_lens_core::report::FileSummary::checked(
        std::sync::Arc::from(name),
        Default::default(),
        Some(format!("{err:#}")),
    );
    // A stop before the job began (Ctrl-C while `test --wait-for` waited) is said as one, not
    // as an input that could not be read.
    file.interrupted = agui_lens_core::stop::requested();
    let mut summary = Summary::default();
    summary.add(&file);
    summary.stopped_by = agui_lens_core::stop::requested().then(agui_lens_core::stop::signal_name);
    buffer.say_failure(format, &file);
    let mut reporter = crate::render::reporter(format, Box::new(buffer.clone()), false, false);
    reporter.start_run(1)?;
    reporter.start_file(&file.path)?;
    reporter.end_file(&file)?;
    reporter.finish(&summary)?;
    reporter.flush()?;
    drop(reporter);
    let bytes = std::mem::take(&mut *buffer.0.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(bytes)
}

/// Puts at `path`, before a run begins, a report saying the run is under way and has not
/// ended, as an error: killed where it can do nothing (SIGKILL, the OOM killer, a CI job's
/// hard timeout), the run leaves that, not the last run's green report, which a CI step
/// published as a pass. The run's own report replaces it at its end. Only a file, or a path
/// with nothing there, is written: a FIFO's reader takes one report, the run's.
pub(crate) fn report_under_way(
    path: &Path,
    format: agui_lens_core::report::Format,
    name: &str,
) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Ok(()),
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Ok(()),
        _ => {}
    }
    // Nor a descriptor (`/dev/stdout` redirected to a file is a file): what is written there
    // stays, and the run's report came after the word that it had not ended.
    if reaches_a_descriptor(path) {
        return Ok(());
    }
    let why = anyhow::anyhow!(
        "{}: a report that still says so was left by a run stopped before its end (killed), \
         which wrote nothing of what it found",
        under_way_words()
    );
    let bytes = not_begun_report(format, name, &why)?;
    write_bytes(path, &bytes)
}

/// What [`report_under_way`] says of this run, and [`still_under_way`] looks for.
fn under_way_words() -> String {
    format!("this run (process {}) has not ended", std::process::id())
}

/// Whether the report at `path` still holds the word [`report_under_way`] put there.
pub(crate) fn still_under_way(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|bytes| {
        let mark = under_way_words();
        bytes
            .windows(mark.len())
            .any(|window| window == mark.as_bytes())
    })
}

/// Whether `path`, or a link on the way from it, names a device or a process's descriptor
/// (`/dev/stdout`, `/proc/self/fd/1`): written into, not replaced.
fn reaches_a_descriptor(path: &Path) -> bool {
    let mut path = path.to_path_buf();
    // (A bound on links to links.)
    for _ in 0..40 {
        // (`/dev/shm` holds files as any folder does.)
        if (path.starts_with("/dev") && !path.starts_with("/dev/shm")) || path.starts_with("/proc")
        {
            return true;
        }
        match std::fs::read_link(&path) {
            Ok(to) => {
                let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
                path = folder.join(to);
            }
            Err(_) => return false,
        }
    }
    false
}

/// The `--report` of a `serve` or `proxy` that could not do its job at all (no port to listen
/// on, a script it cannot serve): the reason, as an input that failed, in the format asked
/// for. A CI step that uploads the report finds one, and it is no pass. The error is
/// returned, for the exit status and stderr.
pub(crate) fn report_not_begun(
    report: Option<&Path>,
    format: agui_lens_core::report::Format,
    name: &str,
    err: anyhow::Error,
) -> anyhow::Error {
    let Some(path) = report else {
        return err;
    };
    let written = not_begun_report(format, name, &err).and_then(|bytes| write_bytes(path, &bytes));
    match written {
        Ok(()) => err,
        Err(report_err) => err.context(format!(
            "and the report could not be written: {report_err:#}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Handing parts of the file to the disk early changes nothing in it, across many steps
    /// and writes of every size.
    #[test]
    fn writing_back_early_writes_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut out = WriteBack::new(std::fs::File::create(&path).unwrap(), true);
        let mut expected = Vec::new();
        let mut size = 1;
        while expected.len() < 3 * WriteBack::STEP as usize + 12345 {
            let chunk: Vec<u8> = (0..size).map(|i| (i * 7 + expected.len()) as u8).collect();
            out.write_all(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
            size = size * 3 % 100_003 + 1;
        }
        out.flush().unwrap();
        assert!(out.pending > 0 && out.pending <= out.written);
        assert_eq!(out.written, expected.len() as u64);
        drop(out);
        assert!(std::fs::read(&path).unwrap() == expected);
    }
}
