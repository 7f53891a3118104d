//! Following a file that is still being written (`check --follow`): read what is there, then
//! poll for more, until asked to stop or until nothing new has arrived for the idle timeout.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a quiet file is looked at again.
pub const POLL: Duration = Duration::from_millis(200);

/// A reader that treats the end of a file as "not yet": it ends only when `stop` says so or
/// after `idle` without growth.
pub struct Follow {
    path: PathBuf,
    file: File,
    position: u64,
    idle: Option<Duration>,
    last_growth: Instant,
    stop: fn() -> bool,
}

impl Follow {
    pub fn open(path: &Path, idle: Option<Duration>, stop: fn() -> bool) -> io::Result<Follow> {
        let file = File::open(path)?;
        if file.metadata()?.is_dir() {
            return Err(io::Error::other(format!(
                "{} is a directory",
                path.display()
            )));
        }
        Ok(Follow {
            path: path.to_path_buf(),
            file,
            position: 0,
            idle,
            last_growth: Instant::now(),
            stop,
        })
    }
}

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.file.read(buf)?;
            if n > 0 {
                self.position += n as u64;
                self.last_growth = Instant::now();
                return Ok(n);
            }
            if (self.stop)()
                || self
                    .idle
                    .is_some_and(|idle| self.last_growth.elapsed() >= idle)
            {
                return Ok(0);
            }
            std::thread::sleep(POLL);
            let len = std::fs::metadata(&self.path)?.len();
            if len < self.position {
                // Rotated or truncated: what follows is another stream.
                return Err(io::Error::other(format!(
                    "{} shrank from {} to {len} bytes while it was followed",
                    self.path.display(),
                    self.position
                )));
            }
            // Clear a cached end of file on platforms that keep one.
            self.file.seek(SeekFrom::Start(self.position))?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn never() -> bool {
        false
    }

    #[test]
    fn reads_what_is_appended_then_ends_when_idle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("growing.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        let mut follow = Follow::open(&path, Some(Duration::from_millis(900)), never).unwrap();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                file.write_all(b"two\n").unwrap();
            })
        };
        let mut text = String::new();
        follow.read_to_string(&mut text).unwrap();
        writer.join().unwrap();
        assert_eq!(text, "one\ntwo\n");
    }
}
