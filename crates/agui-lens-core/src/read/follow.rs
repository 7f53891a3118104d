//! Following a file that is still being written (`check --follow`): read what is there, then
//! poll for more, until asked to stop or until nothing new has arrived for the idle timeout.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a quiet file is looked at again.
pub const POLL: Duration = Duration::from_millis(200);

/// How many of the last bytes read are kept, to tell a file rewritten in place.
const TAIL: usize = 64;

/// A reader that treats the end of a file as "not yet": it ends only when `stop` says so or
/// after `idle` without growth. The path must keep naming the file first opened, and what was
/// read must stay as it was: a file renamed away and replaced (rotated), removed, shrunk, or
/// rewritten in place is another stream, and an error.
pub struct Follow {
    path: PathBuf,
    file: File,
    /// What tells the file first opened from another at its path: device and inode.
    id: Option<(u64, u64)>,
    position: u64,
    /// The last bytes read (up to [`TAIL`]), ending at `position`.
    tail: Vec<u8>,
    idle: Option<Duration>,
    last_growth: Instant,
    stop: fn() -> bool,
}

/// Device and inode, where the platform has them.
fn id_of(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

impl Follow {
    pub fn open(path: &Path, idle: Option<Duration>, stop: fn() -> bool) -> io::Result<Follow> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::other(format!(
                "{} is a directory",
                path.display()
            )));
        }
        Ok(Follow {
            path: path.to_path_buf(),
            file,
            id: id_of(&meta),
            position: 0,
            tail: Vec::with_capacity(2 * TAIL),
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
                self.tail.extend_from_slice(&buf[n.saturating_sub(TAIL)..n]);
                if self.tail.len() > TAIL {
                    self.tail.drain(..self.tail.len() - TAIL);
                }
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
            self.still_the_file_read()?;
            // Clear a cached end of file on platforms that keep one.
            self.file.seek(SeekFrom::Start(self.position))?;
        }
    }
}

impl Follow {
    /// Whether the path still names the file first opened, and that file still holds what
    /// was read of it: otherwise what follows is another stream, and the error says how.
    fn still_the_file_read(&mut self) -> io::Result<()> {
        let named = self.path.display();
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(io::Error::other(format!(
                    "{named} was removed while it was followed, after {} bytes",
                    self.position
                )));
            }
            Err(err) => return Err(err),
        };
        if self.id.is_some() && id_of(&meta) != self.id {
            return Err(io::Error::other(format!(
                "{named} was replaced while it was followed (renamed away and another file put \
                 in its place, as a log is rotated): the checks are of the first {} bytes of the \
                 file first opened; check the new one on its own",
                self.position
            )));
        }
        let len = meta.len();
        if len < self.position {
            // Truncated: what follows is another stream.
            return Err(io::Error::other(format!(
                "{named} shrank from {} to {len} bytes while it was followed",
                self.position
            )));
        }
        // Rewritten in place, past its old size within one look: the bytes before the
        // position are no longer those read.
        if !self.tail.is_empty() {
            let mut now = vec![0; self.tail.len()];
            self.file
                .seek(SeekFrom::Start(self.position - self.tail.len() as u64))?;
            self.file.read_exact(&mut now)?;
            if now != self.tail {
                return Err(io::Error::other(format!(
                    "{named} was rewritten while it was followed: its first {} bytes are no \
                     longer those read",
                    self.position
                )));
            }
        }
        Ok(())
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

    /// Reads `path` followed while `change` is made to it 300 ms in; returns the error.
    fn followed_while(path: &Path, change: impl FnOnce() + Send + 'static) -> String {
        let mut follow = Follow::open(path, Some(Duration::from_secs(3)), never).unwrap();
        let changer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            change();
        });
        let mut text = String::new();
        let err = follow.read_to_string(&mut text).unwrap_err();
        changer.join().unwrap();
        err.to_string()
    }

    /// A file renamed away and another put at its path (a log rotated), or the file rewritten
    /// in place past its old size within one poll, is another stream: an error, never a
    /// clean end of the first (the new one was not read) nor its bytes read from the middle.
    #[test]
    fn a_file_replaced_or_rewritten_while_followed_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rotated.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        let err = followed_while(&path, {
            let (path, old) = (path.clone(), dir.path().join("rotated.jsonl.1"));
            move || {
                std::fs::rename(&path, old).unwrap();
                std::fs::write(&path, b"another, longer stream\n").unwrap();
            }
        });
        assert!(err.contains("was replaced"), "{err}");

        let path = dir.path().join("rewritten.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        let err = followed_while(&path, {
            let path = path.clone();
            move || std::fs::write(&path, b"XYZ\nsomething longer\n").unwrap()
        });
        assert!(err.contains("was rewritten"), "{err}");

        let path = dir.path().join("removed.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        let err = followed_while(&path, {
            let path = path.clone();
            move || std::fs::remove_file(&path).unwrap()
        });
        assert!(err.contains("was removed"), "{err}");
    }
}
