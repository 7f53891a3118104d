//! Ctrl-C and SIGTERM as a request to stop: a command that is replacing a file removes its
//! temp file and leaves the original as it was, and a live call stops reading, checks what
//! arrived and writes its reports, instead of dying mid-write. The exit status then says
//! which signal stopped it (128 + its number: 130 for SIGINT, 143 for SIGTERM). A second
//! signal ends the process at once.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked to stop, or 0.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
        // Asked twice: the default action, now.
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
}

/// From now on, SIGINT and SIGTERM set a flag instead of ending the process. Only commands
/// that look at [`requested`] while they work install it.
pub fn catch() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches an atomic, and signal/raise, which are
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that asked to stop, if one did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The signal's name, for messages: `SIGINT`, `SIGTERM`.
pub fn signal_name() -> &'static str {
    match signal() {
        Some(libc::SIGINT) => "SIGINT",
        Some(libc::SIGTERM) => "SIGTERM",
        _ => "a signal",
    }
}
