//! Reading an input that may block for as long as its writer likes (stdin, a pipe, a FIFO) in
//! such a way that a stop ([`crate::stop`]) is heard: the blocking reads happen on a thread of
//! their own, and the reader waits for their bytes a tenth of a second at a time.

use std::io::{self, Read};
use std::sync::mpsc;
use std::time::Duration;

/// How long a read waits for bytes before it looks at the stop request again.
const POLL: Duration = Duration::from_millis(100);

/// The bytes read at a time on the reading thread.
const CHUNK: usize = 64 << 10;

/// A reader over another one, read on a thread of its own, that ends with an error when a
/// stop is requested while it waits. The thread is left to its blocked read then.
pub struct Stoppable {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    held: Vec<u8>,
    at: usize,
    done: bool,
}

impl Stoppable {
    pub fn new(mut inner: Box<dyn Read + Send>) -> Self {
        let (send, chunks) = mpsc::sync_channel(2);
        std::thread::spawn(move || {
            let mut buf = vec![0; CHUNK];
            loop {
                let chunk = match inner.read(&mut buf) {
                    Ok(n) => Ok(buf[..n].to_vec()),
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => Err(err),
                };
                // An empty chunk is the end; a reader no longer there ends the thread too.
                let last = !matches!(&chunk, Ok(bytes) if !bytes.is_empty());
                if send.send(chunk).is_err() || last {
                    return;
                }
            }
        });
        Stoppable {
            chunks,
            held: Vec::new(),
            at: 0,
            done: false,
        }
    }
}

impl Read for Stoppable {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.at < self.held.len() || out.is_empty() {
                let n = out.len().min(self.held.len() - self.at);
                out[..n].copy_from_slice(&self.held[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.done {
                return Ok(0);
            }
            // Heard between chunks too: a pipe that keeps delivering was read on after a stop
            // (to its end, or for as long as its writer went on).
            if crate::stop::requested() {
                return Err(stopped());
            }
            match self.chunks.recv_timeout(POLL) {
                Ok(Ok(chunk)) => {
                    self.done = chunk.is_empty();
                    self.held = chunk;
                    self.at = 0;
                }
                Ok(Err(err)) => {
                    self.done = true;
                    return Err(err);
                }
                // The stop is looked at again at the top of the loop.
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => self.done = true,
            }
        }
    }
}

/// The error a stopped read ends with (not `Interrupted`: readers retry those).
fn stopped() -> io::Error {
    io::Error::other("stopped before the input ended")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, as a pipe does.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(3).min(self.0.len() - self.1);
            out[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn every_byte_comes_through_in_order() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut read = Vec::new();
        Stoppable::new(Box::new(Trickle(bytes.clone(), 0)))
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, bytes);
        let mut empty = Vec::new();
        Stoppable::new(Box::new(io::empty()))
            .read_to_end(&mut empty)
            .unwrap();
        assert!(empty.is_empty());
    }
}
