//! A request to stop, as a process receives one (Ctrl-C, SIGTERM, a closed terminal): the
//! stages that read long inputs look at it between batches and end early, so a command can
//! still write what it found and remove what it had half made. A front end sets it
//! ([`request`]); the library only reads it.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The signal that asked to stop last, or 0.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How many times a stop was asked for.
static ASKED: AtomicU32 = AtomicU32::new(0);

/// Asks every reader to stop, for the given signal number (anything but 0). Returns how many
/// times a stop has been asked for, this one included. Only touches atomics, so it may be
/// called from a signal handler.
pub fn request(signal: i32) -> u32 {
    SIGNAL.store(signal, Ordering::SeqCst);
    ASKED.fetch_add(1, Ordering::SeqCst).saturating_add(1)
}

/// Asks every reader to stop, work that a first request lets finish too (see [`insisted`]):
/// for a front end that throws away what stopped work returns (the Python package).
pub fn insist(signal: i32) {
    SIGNAL.store(signal, Ordering::SeqCst);
    ASKED.fetch_max(2, Ordering::SeqCst);
}

/// Whether a stop was asked for again: a second Ctrl-C, or SIGTERM after SIGINT (as a
/// cancelled CI job sends them). Work that the first request lets finish so that its result
/// is whole (`check`'s files under way) ends too, and what it found is reported as cut short.
pub fn insisted() -> bool {
    ASKED.load(Ordering::SeqCst) >= 2
}

/// Forgets a stop: for a front end that lives on once the stopped work has ended (the Python
/// package, after Ctrl-C raised KeyboardInterrupt in the interpreter).
pub fn clear() {
    SIGNAL.store(0, Ordering::SeqCst);
    ASKED.store(0, Ordering::SeqCst);
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// Whether a stop is requested within `limit` from now (at once, if it was already): for a
/// reader that met the end of a pipe inside a run and must tell an end the stop caused
/// (Ctrl-C stops the process writing into the pipe too, and its end can be read before the
/// signal is handled) from the stream's own.
pub fn requested_within(limit: std::time::Duration) -> bool {
    let since = std::time::Instant::now();
    loop {
        if requested() {
            return true;
        }
        if since.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// The signal that asked to stop, if one did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The signal's name, for messages: `SIGINT`, `SIGTERM`, `SIGHUP`.
pub fn signal_name() -> &'static str {
    match signal() {
        Some(1) => "SIGHUP",
        Some(2) => "SIGINT",
        Some(15) => "SIGTERM",
        _ => "a signal",
    }
}

/// What a reader returns when the side reading an input stops before the input's end of its
/// own accord, no signal asked (the proxy, once its client went away): what came is checked,
/// but not as a whole stream (a run it left open is not the producer's error).
#[derive(Debug)]
pub struct ReadingStopped(pub &'static str);

impl std::fmt::Display for ReadingStopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for ReadingStopped {}

/// The error a reader returns to stop reading, saying why (see [`ReadingStopped`]).
pub fn reading_stopped(why: &'static str) -> std::io::Error {
    std::io::Error::other(ReadingStopped(why))
}

/// Whether a reader stopped reading (see [`ReadingStopped`]).
pub fn is_reading_stopped(err: &std::io::Error) -> bool {
    err.get_ref().is_some_and(|e| e.is::<ReadingStopped>())
}
