//! Progress through long inputs on a terminal: bytes read of the inputs' total, the rate and
//! the time left, drawn on stderr once work has taken half a second (short runs never
//! flicker), and never when stderr is not a terminal or the command's output is for a
//! program. The count comes from the core's readers (`read::progress`), so every command
//! shows the same thing however it reads.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agui_lens_core::read::InputSpec;
use agui_lens_core::read::progress::bytes_read;

/// How long work goes on before progress is shown (`AGUI_LENS_PROGRESS_DELAY_MS` sets it, for
/// tests).
const DELAY: Duration = Duration::from_millis(500);

/// A progress line, drawn by a thread of its own until dropped.
pub struct Progress {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Shows progress through `total` bytes, labelled `label`, when `wanted` (the command's
    /// output is for a person) and stderr is a terminal. `files` counts the inputs, shown
    /// when there are several.
    pub fn start(label: &'static str, total: u64, files: usize, wanted: bool) -> Option<Progress> {
        if !wanted || total == 0 || !std::io::stderr().is_terminal() {
            return None;
        }
        let delay = std::env::var("AGUI_LENS_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(DELAY, Duration::from_millis);
        let start = bytes_read();
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::spawn(move || {
            let began = Instant::now();
            while began.elapsed() < delay {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let bar = indicatif::ProgressBar::new(total);
            let files = if files > 1 {
                format!(" ({files} files)")
            } else {
                String::new()
            };
            let template = format!(
                "{label} {{bar:30}} {{bytes}}/{{total_bytes}}{files} {{bytes_per_sec}}, {{eta}} left"
            );
            bar.set_style(
                indicatif::ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            while !stop.load(Ordering::Relaxed) {
                // Inputs read twice (compact's verification) count once.
                bar.set_position(bytes_read().saturating_sub(start).min(total));
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Some(Progress {
            done,
            thread: Some(thread),
        })
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The bytes the inputs hold as stored; stdin and what is not a regular file count nothing.
pub fn total_size<'a>(inputs: impl IntoIterator<Item = &'a InputSpec>) -> u64 {
    // The streams of a browser capture are inputs of one file, read once.
    let files: std::collections::BTreeSet<&Path> =
        inputs.into_iter().filter_map(InputSpec::path).collect();
    files.into_iter().map(size_of).sum()
}

fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len())
}
