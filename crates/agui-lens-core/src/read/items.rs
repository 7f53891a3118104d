//! Events handed over one by one (a list of a library's caller): each item is one frame,
//! whatever it holds. An empty item, or one holding two events, is one frame that is no
//! event, as a checker fed that item finds; read as lines, the first would vanish as a
//! blank line and the second count as two events.

use std::io;

use super::{Batch, Caveat, FrameKind, FrameReader};

/// Most bytes handed over in one batch (an item larger than this is a batch of its own).
const BATCH_BYTES: usize = 1 << 20;

pub struct ItemsReader {
    items: std::vec::IntoIter<Vec<u8>>,
    index: u64,
    /// Bytes handed over so far, with one line end after each item (the offset of an item
    /// in the items written as lines).
    offset: u64,
    max: usize,
}

impl ItemsReader {
    /// Items longer than `max` are frames too long to read, as lines would be.
    pub fn new(items: Vec<Vec<u8>>, max: usize) -> Self {
        ItemsReader {
            items: items.into_iter(),
            index: 0,
            offset: 0,
            max,
        }
    }
}

impl FrameReader for ItemsReader {
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
        batch.clear();
        while batch.data_len() < BATCH_BYTES {
            let Some(item) = self.items.next() else {
                break;
            };
            let (line, offset, index) = (self.index + 1, self.offset, self.index);
            if item.len() > self.max {
                batch.push_note(
                    FrameKind::TooLong {
                        len: item.len() as u64,
                    },
                    line,
                    offset,
                    index,
                );
            } else {
                batch.push_data(&item, line, offset, index, Caveat::None);
            }
            self.index += 1;
            self.offset += item.len() as u64 + 1;
        }
        Ok(!batch.frames.is_empty())
    }

    fn bytes_read(&self) -> u64 {
        self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_item_is_one_frame_whatever_it_holds() {
        let items: Vec<Vec<u8>> = vec![
            b"{\"a\":1}".to_vec(),
            Vec::new(),
            b"  ".to_vec(),
            b"{\"b\":1}\n{\"c\":1}".to_vec(),
            vec![b'x'; 25],
        ];
        let mut reader = ItemsReader::new(items, 20);
        let mut batch = Batch::default();
        let mut seen = Vec::new();
        while reader.next_batch(&mut batch).unwrap() {
            for frame in &batch.frames {
                seen.push((
                    frame.index,
                    frame.line,
                    frame.offset,
                    batch.bytes(frame).to_vec(),
                ));
                if let FrameKind::TooLong { len } = frame.kind {
                    assert_eq!(len, 25);
                }
            }
        }
        let texts: Vec<&[u8]> = seen.iter().map(|s| s.3.as_slice()).collect();
        assert_eq!(
            texts,
            [&b"{\"a\":1}"[..], b"", b"  ", b"{\"b\":1}\n{\"c\":1}", b""]
        );
        let places: Vec<(u64, u64, u64)> = seen.iter().map(|s| (s.0, s.1, s.2)).collect();
        assert_eq!(
            places,
            [(0, 1, 0), (1, 2, 8), (2, 3, 9), (3, 4, 12), (4, 5, 28)]
        );
        assert_eq!(reader.bytes_read(), 54);
    }
}
