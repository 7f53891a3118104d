//! A read buffer shared by the frame readers: tracks the byte offset, strips one leading BOM,
//! and lets the format be sniffed from the first bytes without losing them.

use std::io::{self, Read};

/// One read's worth, and so one batch's: the frames whose ends it holds are parsed together on
/// the pool. At 64 KiB (~480 events) the hand-over between batches cost about a tenth of a
/// check's or a compaction's time; at 256 KiB it is a quarter of that.
const BUF_LEN: usize = 256 * 1024;
const BOM: &[u8] = b"\xEF\xBB\xBF";

pub struct Input {
    inner: Box<dyn Read + Send>,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Offset of `buf[pos]` in the input.
    offset: u64,
    bom_checked: bool,
}

impl Input {
    pub fn new(inner: Box<dyn Read + Send>) -> Self {
        Input {
            inner,
            buf: vec![0; BUF_LEN],
            pos: 0,
            end: 0,
            eof: false,
            offset: 0,
            bom_checked: false,
        }
    }

    /// What is left of the input, the bytes already buffered first.
    pub fn into_reader(self) -> impl Read + Send {
        io::Cursor::new(self.buf[self.pos..self.end].to_vec()).chain(self.inner)
    }

    /// The unread bytes in the buffer.
    pub fn available(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    pub fn consume(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.end);
        self.pos += n;
        self.offset += n as u64;
    }

    /// Offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads more bytes once the buffer is used up. `Ok(false)` at the end of the input.
    pub fn fill(&mut self) -> io::Result<bool> {
        if self.pos < self.end {
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        self.pos = 0;
        self.end = 0;
        let n = self.read_more()?;
        self.strip_bom();
        Ok(n > 0 || self.pos < self.end)
    }

    /// Returns the first bytes of the input without consuming them: up to `len` bytes, but no
    /// more than it takes to see the first complete line, so a live input is not held up.
    pub fn peek(&mut self, len: usize) -> io::Result<&[u8]> {
        loop {
            self.strip_bom();
            let have = &self.buf[self.pos..self.end];
            let line_done = have
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .is_some_and(|first| have[first..].contains(&b'\n'));
            if self.eof || have.len() >= len || line_done {
                let end = self.end.min(self.pos + len);
                return Ok(&self.buf[self.pos..end]);
            }
            if self.end == self.buf.len() {
                // Keep what we have at the front so the read has room.
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            self.read_more()?;
        }
    }

    /// Returns the first bytes of the input without consuming them: `len` of them, or all
    /// there are when the input is shorter. For inputs that are whole (a file), as it waits
    /// for that many bytes.
    pub fn peek_whole(&mut self, len: usize) -> io::Result<&[u8]> {
        while !self.eof && self.end - self.pos < len {
            if self.end == self.buf.len() {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            self.read_more()?;
        }
        self.strip_bom();
        let end = self.end.min(self.pos + len);
        Ok(&self.buf[self.pos..end])
    }

    fn read_more(&mut self) -> io::Result<usize> {
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(0);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// One leading byte-order mark is not part of the stream.
    fn strip_bom(&mut self) {
        if self.bom_checked {
            return;
        }
        let have = &self.buf[self.pos..self.end];
        if have.len() >= BOM.len() || self.eof {
            self.bom_checked = true;
            if have.starts_with(BOM) {
                self.consume(BOM.len());
            }
        } else if !BOM.starts_with(have) {
            self.bom_checked = true;
        }
    }
}

/// Accumulates one line or frame up to a cap; past the cap it only counts bytes.
#[derive(Default)]
pub struct Capped {
    pub bytes: Vec<u8>,
    /// Total length seen, including bytes dropped past the cap.
    pub len: u64,
}

impl Capped {
    pub fn push(&mut self, chunk: &[u8], max: usize) {
        self.len += chunk.len() as u64;
        if self.len <= max as u64 {
            self.bytes.extend_from_slice(chunk);
        } else if !self.bytes.is_empty() {
            // Over the cap: release what was held; the frame will be reported, not read.
            self.bytes = Vec::new();
        }
    }

    pub fn over(&self, max: usize) -> bool {
        self.len > max as u64
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.len = 0;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
