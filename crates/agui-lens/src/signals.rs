//! Ctrl-C and SIGTERM as a request to stop ([`agui_lens_core::stop`]) instead of the end of the
//! process: a command that is replacing a file removes its temp file and leaves the original
//! as it was, and a live call stops reading, checks what arrived and writes its reports. The
//! exit status then says which signal stopped it (128 + its number: 130 for SIGINT, 143 for
//! SIGTERM). A second signal ends the process at once.

extern "C" fn on_signal(signal: libc::c_int) {
    if agui_lens_core::stop::request(signal) {
        // Asked twice: the default action, now.
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
}

/// From now on, SIGINT and SIGTERM ask to stop instead of ending the process. Only commands
/// that look at [`agui_lens_core::stop::requested`] while they work install it.
pub fn catch() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches an atomic, and signal/raise, which are
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
