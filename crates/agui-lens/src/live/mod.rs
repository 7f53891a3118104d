//! Live agents: the RunAgentInput sent, the one POST, and the response checked as it arrives.

pub mod call;
pub mod http;
pub mod request;

/// The longest a request waits for its thread's previous turn to end (a client that submits
/// twice), in `serve` and `proxy`.
const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Locks `threads` once `busy` says no turn of the request's thread is under way (waiting up
/// to 10 s, or until a stop), and takes the request's turn with `take`.
pub fn after_previous_turn<T, R>(
    threads: &std::sync::Mutex<T>,
    busy: impl Fn(&T) -> bool,
    take: impl FnOnce(&mut T) -> R,
) -> R {
    let started = std::time::Instant::now();
    loop {
        let mut guard = threads.lock().unwrap_or_else(|e| e.into_inner());
        if busy(&guard) && started.elapsed() < TURN_WAIT && !agui_lens_core::stop::requested() {
            drop(guard);
            std::thread::sleep(std::time::Duration::from_millis(5));
            continue;
        }
        return take(&mut guard);
    }
}
