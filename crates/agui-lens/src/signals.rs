//! Ctrl-C, SIGTERM and a closed terminal (SIGHUP) as a request to stop
//! ([`agui_lens_core::stop`]) instead of the end of the process: a command that is replacing a
//! file removes its temp file and leaves the original as it was, and a live call stops
//! reading, checks what arrived and writes its reports. The exit status then says which signal
//! stopped it (128 + its number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP). A second
//! signal ends the process at once, except in a command that lets work under way finish after
//! the first ([`catch_twice`]): there the second stops that work too, and a third ends it.
//! The same signal again within a tenth of a second is the first one sent twice (`ECHO_NS`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, Once, PoisonError};

/// How many signals ask to stop before the next one ends the process.
static PATIENCE: AtomicU32 = AtomicU32::new(1);

/// The signal counted last, and when (nanoseconds on the monotonic clock).
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);
static LAST_AT: AtomicU64 = AtomicU64::new(0);

/// A signal the same as the one counted last, within this many nanoseconds of it, is that
/// one again: `timeout` sends its signal to the command and then to the command's process
/// group, so the command gets it twice microseconds apart, and the second ended the process
/// at once with nothing written. No one presses Ctrl-C twice within a tenth of a second.
const ECHO_NS: u64 = 100_000_000;

/// Now on the monotonic clock, in nanoseconds (`clock_gettime` is async-signal-safe).
fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into a timespec this function owns.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

extern "C" fn on_signal(signal: libc::c_int) {
    let now = monotonic_ns();
    if LAST_SIGNAL.load(Ordering::SeqCst) == signal
        && now.saturating_sub(LAST_AT.load(Ordering::SeqCst)) < ECHO_NS
    {
        return;
    }
    LAST_SIGNAL.store(signal, Ordering::SeqCst);
    LAST_AT.store(now, Ordering::SeqCst);
    if agui_lens_core::stop::request(signal) > PATIENCE.load(Ordering::SeqCst) {
        // Asked once too often: the process ends now, once the temp files of the outputs
        // under way are removed (by a thread of its own: removing a file list is no work
        // for a signal handler), or at once when there are none.
        let wake = WAKE.load(Ordering::SeqCst);
        let byte = signal as u8;
        // SAFETY: write is async-signal-safe; the byte is a local.
        if wake >= 0 && unsafe { libc::write(wake, (&raw const byte).cast(), 1) } == 1 {
            return;
        }
        end_now(signal);
    }
}

/// Ends the process by `signal`'s default action.
fn end_now(signal: libc::c_int) {
    // SAFETY: signal and raise are async-signal-safe.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// The temp files of outputs being written, which a signal that ends the process at once
/// removes first (a second Ctrl-C, or SIGTERM after SIGINT as a cancelled CI job sends them).
/// Kept until they are no longer there: one persisted or removed since is a name that no
/// longer exists.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The write end of the pipe that wakes the thread removing [`TEMPS`], once it runs.
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// Has `path`, a temp file just made, removed if a signal ends the process before it is put
/// in place or removed.
pub fn remove_if_ended(path: &Path) {
    start_remover();
    let mut temps = TEMPS.lock().unwrap_or_else(PoisonError::into_inner);
    if temps.len() >= 64 {
        temps.retain(|temp| temp.exists());
    }
    temps.push(path.to_owned());
}

/// Starts the thread that, woken by a signal that ends the process, removes [`TEMPS`] and
/// ends the process by that signal.
fn start_remover() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let mut fds = [0; 2];
        // SAFETY: fds is a valid array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        let [read, write] = fds;
        let remover = std::thread::Builder::new()
            .name("temp-remover".into())
            .spawn(move || {
                let mut byte = 0u8;
                loop {
                    // SAFETY: reading one byte into a local from the pipe this thread owns.
                    match unsafe { libc::read(read, (&raw mut byte).cast(), 1) } {
                        1 => break,
                        -1 if std::io::Error::last_os_error().kind()
                            == std::io::ErrorKind::Interrupted => {}
                        _ => return,
                    }
                }
                for temp in TEMPS.lock().unwrap_or_else(PoisonError::into_inner).iter() {
                    let _ = std::fs::remove_file(temp);
                }
                end_now(libc::c_int::from(byte));
            });
        if remover.is_ok() {
            WAKE.store(write, Ordering::SeqCst);
        }
    });
}

/// Writes to stdout: odd while one is under way (each adds one as it begins and one as it
/// ends). See [`to_stdout`].
static STDOUT_WRITES: AtomicU64 = AtomicU64::new(0);

/// Runs `write`, a write to stdout, so that a stop asked for while it waits on a reader that
/// takes no more (a pipe or a terminal no one reads) ends the process once the wait has
/// lasted [`crate::commands::FIFO_GRACE`] after the stop: stdout is shared with the shell, so
/// it cannot be made non-blocking, and a caught signal restarts the write (it held the
/// command through every SIGTERM). The temp files of outputs under way are removed first, and
/// the exit status is the stop's (128 + the signal's number).
pub(crate) fn to_stdout<T>(write: impl FnOnce() -> T) -> T {
    start_stdout_watch();
    STDOUT_WRITES.fetch_add(1, Ordering::SeqCst);
    let done = write();
    STDOUT_WRITES.fetch_add(1, Ordering::SeqCst);
    done
}

/// Starts the thread that ends the process when a stop finds a write to stdout that does not
/// end (see [`to_stdout`]).
fn start_stdout_watch() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let watch = move || {
            let tick = std::time::Duration::from_millis(100);
            // The write under way when the stop was first seen, and since when.
            let mut stuck: Option<(u64, std::time::Instant)> = None;
            loop {
                std::thread::sleep(tick);
                let writes = STDOUT_WRITES.load(Ordering::SeqCst);
                if !agui_lens_core::stop::requested() || writes % 2 == 0 {
                    stuck = None;
                    continue;
                }
                match stuck {
                    Some((at, since)) if at == writes => {
                        if since.elapsed() >= crate::commands::FIFO_GRACE {
                            break;
                        }
                    }
                    _ => stuck = Some((writes, std::time::Instant::now())),
                }
            }
            for temp in TEMPS.lock().unwrap_or_else(PoisonError::into_inner).iter() {
                let _ = std::fs::remove_file(temp);
            }
            let signal = agui_lens_core::stop::signal().unwrap_or(libc::SIGTERM);
            let said = format!(
                "agui-lens: stopped by {} while stdout took no more (its reader stopped \
                 reading): what stdout holds is cut short\n",
                agui_lens_core::stop::signal_name()
            );
            // SAFETY: writing bytes this thread owns to stderr, then ending the process
            // without running exit handlers (one would flush stdout, and wait on it again).
            unsafe {
                libc::write(2, said.as_ptr().cast(), said.len());
                libc::_exit(128 + signal);
            }
        };
        let _ = std::thread::Builder::new()
            .name("stdout-watch".into())
            .spawn(watch);
    });
}

/// The signals that ask to stop.
const CAUGHT: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// From now on, SIGINT, SIGTERM and SIGHUP ask to stop instead of ending the process. Only
/// commands that look at [`agui_lens_core::stop::requested`] while they work install it. A
/// signal the process was started ignoring stays ignored, as with [`Caught`].
pub fn catch() {
    install();
}

/// [`catch`], for a command whose first stop lets work under way finish (`check` reads a file
/// it has begun to its end, so that its findings are whole): a second signal stops that work
/// too ([`agui_lens_core::stop::insisted`]) and the reports are still written; a third ends
/// the process at once. A cancelled CI job sends SIGINT, then SIGTERM a few seconds later.
pub fn catch_twice() {
    PATIENCE.store(2, Ordering::SeqCst);
    install();
}

/// Points the [`CAUGHT`] signals at [`on_signal`], except one the process was started
/// ignoring: a shell without job control starts a background job (`cmd &` in a script) with
/// Ctrl-C ignored, so that Ctrl-C stops only what runs in front, `nohup` starts its command
/// with SIGHUP ignored, and a program leaves such a signal ignored. Returns what each had
/// before.
fn install() -> [(libc::c_int, libc::sighandler_t); 3] {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    CAUGHT.map(|signal| {
        // SAFETY: reading a signal's action into a zeroed struct; the handler only touches an
        // atomic, and signal/raise, which are async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut action);
            let now = action.sa_sigaction;
            if now != libc::SIG_IGN {
                libc::signal(signal, handler);
            }
            (signal, now)
        }
    })
}

/// While it lives, SIGINT, SIGTERM and SIGHUP ask to stop (as after [`catch`]); once dropped,
/// each is handled as it was before. For a command that catches no signal otherwise but must
/// not be ended halfway through one step (writing a file beside the one it replaces).
pub struct Caught {
    before: [(libc::c_int, libc::sighandler_t); 3],
}

impl Caught {
    /// Catches the signals until the value is dropped.
    pub fn begin() -> Caught {
        Caught { before: install() }
    }
}

impl Drop for Caught {
    fn drop(&mut self) {
        for (signal, before) in self.before {
            if before != libc::SIG_IGN {
                // SAFETY: putting back the handler the signal had (a plain function or the
                // default).
                unsafe {
                    libc::signal(signal, before);
                }
            }
        }
    }
}
