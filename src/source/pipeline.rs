//! Reading and preparing (parsing, schema checks) on the pool while the previous batch is
//! consumed in order on this thread, so both cores stay busy.

use std::io;

use super::{Batch, FrameReader};

/// Reads every batch of `reader`, prepares it with `prepare` (which may fan out on rayon's
/// pool) and hands it to `consume` in stream order. While `consume` works on batch N, batch
/// N+1 is read and prepared, and what `consume` left of batch N-1 is dropped on the pool.
/// A `live` input (a pipe, a socket) goes batch by batch instead, so that nothing waits for
/// data that has not arrived.
///
/// An error from `consume` is returned as `Err`; a read error ends the input once what was
/// read is consumed, and is returned as `Ok(Some(error))`.
pub fn pipelined<T: Send>(
    reader: &mut dyn FrameReader,
    live: bool,
    prepare: impl Fn(&Batch) -> Vec<T> + Sync,
    mut consume: impl FnMut(&Batch, &mut Vec<T>) -> io::Result<()>,
) -> io::Result<Option<io::Error>> {
    let mut current = Batch::default();
    match next_checked(reader, &mut current) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(err) => return Ok(Some(err)),
    }
    let mut prepared = prepare(&current);
    let mut next = Batch::default();
    let mut consumed: Vec<T> = Vec::new();
    loop {
        if live {
            consume(&current, &mut prepared)?;
            match next_checked(reader, &mut current) {
                Ok(true) => prepared = prepare(&current),
                Ok(false) => return Ok(None),
                Err(err) => return Ok(Some(err)),
            }
            continue;
        }
        let mut read = Ok(false);
        let mut next_prepared = Vec::new();
        let old = std::mem::take(&mut consumed);
        let mut result = Ok(());
        rayon::in_place_scope(|scope| {
            scope.spawn(|_| {
                read = next_checked(reader, &mut next);
                if matches!(read, Ok(true)) {
                    next_prepared = prepare(&next);
                }
            });
            scope.spawn(move |_| drop(old));
            result = consume(&current, &mut prepared);
        });
        result?;
        match read {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(err) => return Ok(Some(err)),
        }
        std::mem::swap(&mut current, &mut next);
        consumed = std::mem::replace(&mut prepared, next_prepared);
    }
}

/// Reads the next batch and checks its bytes for UTF-8 once, for [`Batch::text`].
fn next_checked(reader: &mut dyn FrameReader, batch: &mut Batch) -> io::Result<bool> {
    let read = reader.next_batch(batch)?;
    if read {
        batch.check_utf8();
    }
    Ok(read)
}
