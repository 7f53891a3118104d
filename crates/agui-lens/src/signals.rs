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

/// While it lives, SIGINT and SIGTERM ask to stop (as after [`catch`]); once dropped, each is
/// handled as it was before. A signal the process ignores (Ctrl-C for a job started in the
/// background) stays ignored. For a command that catches no signal otherwise but must not be
/// ended halfway through one step (writing a file beside the one it replaces).
pub struct Caught {
    before: [(libc::c_int, libc::sighandler_t); 2],
}

impl Caught {
    /// Catches the two signals until the value is dropped.
    pub fn begin() -> Caught {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        let before = [libc::SIGINT, libc::SIGTERM].map(|signal| {
            // SAFETY: reading a signal's action into a zeroed struct, and setting the handler
            // as `catch` does.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signal, std::ptr::null(), &mut action);
                let now = action.sa_sigaction;
                if now != libc::SIG_IGN {
                    libc::signal(signal, handler);
                }
                (signal, now)
            }
        });
        Caught { before }
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
