//! How many bytes of files the readers have taken in, counted across the process: what a front
//! end shows progress from. A file is counted as it is stored (compressed bytes for a
//! compressed file), so the count compares with the files' sizes. Reading is never slowed by
//! it: one relaxed atomic add per read call, and reads are blocks of kilobytes.

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};

static READ: AtomicU64 = AtomicU64::new(0);

/// Bytes read from files so far by every reader of the process.
pub fn bytes_read() -> u64 {
    READ.load(Ordering::Relaxed)
}

/// Counts `n` bytes as read without reading them (the share of a file read once for several
/// inputs, as the streams of a browser capture are).
pub fn count(n: u64) {
    READ.fetch_add(n, Ordering::Relaxed);
}

/// A reader whose bytes count in [`bytes_read`].
pub struct Counted<R>(pub R);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        READ.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_counted() {
        let before = bytes_read();
        let mut sink = Vec::new();
        Counted(&b"twelve bytes"[..])
            .read_to_end(&mut sink)
            .unwrap();
        // Other tests read files at the same time: at least these twelve were counted.
        assert!(bytes_read() - before >= 12);
    }
}
