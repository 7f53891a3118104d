//! Reading and preparing (parsing, schema checks) on the pool while the previous batch is
//! consumed in order on this thread, so both cores stay busy.

use std::collections::VecDeque;
use std::io;
use std::mem::take;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{Batch, FrameReader};

/// Reads every batch of `reader`, prepares it with `prepare` (which may fan out on rayon's
/// pool) and hands it to `consume` in stream order. `consume` may swap the batch and its
/// prepared items for others (emptied ones, or any it is done with): what it leaves is
/// reused or dropped here. While `consume` works on a batch, the next few are read and
/// prepared on the pool, where what `consume` left of the earlier ones is dropped too (see
/// `ahead`). A `live` input (a pipe, a socket) goes batch by batch instead, so that nothing
/// waits for data that has not arrived.
///
/// An error from `consume` is returned as `Err`; a read error ends the input once what was
/// read is consumed, and is returned as `Ok(Some(error))`.
pub fn pipelined<T: Send>(
    reader: &mut dyn FrameReader,
    live: bool,
    prepare: impl Fn(&Batch) -> Vec<T> + Sync,
    consume: impl FnMut(&mut Batch, &mut Vec<T>) -> io::Result<()>,
) -> io::Result<Option<io::Error>> {
    if live {
        return stepwise(reader, prepare, consume);
    }
    ahead(reader, prepare, consume)
}

/// One batch after the other: read, prepare, consume.
fn stepwise<T: Send>(
    reader: &mut dyn FrameReader,
    prepare: impl Fn(&Batch) -> Vec<T> + Sync,
    mut consume: impl FnMut(&mut Batch, &mut Vec<T>) -> io::Result<()>,
) -> io::Result<Option<io::Error>> {
    let mut batch = Batch::default();
    loop {
        match next_checked(reader, &mut batch) {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(err) => return Ok(Some(err)),
        }
        let mut prepared = prepare(&batch);
        consume(&mut batch, &mut prepared)?;
    }
}

/// How many prepared batches may wait for `consume`.
const AHEAD: usize = 3;

/// What the reading job and the consuming thread share (see `ahead`).
struct Shared<T> {
    /// Prepared batches in stream order; a read error ends them.
    ready: VecDeque<io::Result<(Batch, Vec<T>)>>,
    /// Whether a job is reading (at most one is: batches are read in order).
    reading: bool,
    /// The input is used up, failed, or is no longer wanted.
    done: bool,
    /// A reading job panicked (the scope raises the panic again once it ends).
    panicked: bool,
    /// Batches consumed, for the next reads.
    spare: Vec<Batch>,
    /// What `consume` left of its batches, dropped by the next reading job.
    consumed: Vec<Vec<T>>,
}

/// Reads and prepares up to [`AHEAD`] batches in front of the consumer, as one job on the
/// pool that goes on for as long as it is ahead, so the two sides meet only at a queue:
/// batch by batch in lockstep, about a tenth of the time was lost waiting at each step's
/// join. While nothing is ready, the consuming thread helps with the pool's work (a batch
/// being prepared fans out there), and it reads a batch itself when no job is reading.
fn ahead<T: Send>(
    reader: &mut dyn FrameReader,
    prepare: impl Fn(&Batch) -> Vec<T> + Sync,
    mut consume: impl FnMut(&mut Batch, &mut Vec<T>) -> io::Result<()>,
) -> io::Result<Option<io::Error>> {
    let shared = Mutex::new(Shared {
        ready: VecDeque::new(),
        reading: false,
        done: false,
        panicked: false,
        spare: Vec::new(),
        consumed: Vec::new(),
    });
    let reader = Mutex::new(reader);
    let consumer = rayon::current_thread_index();
    let shared = &shared;
    let reader = &reader;
    let prepare = &prepare;
    // Reads batches until `AHEAD` are ready, or, on the consuming thread, until one is.
    let read = move || {
        let _reading = Reading(shared);
        loop {
            let (mut batch, consumed) = {
                let mut state = lock(shared);
                (
                    state.spare.pop().unwrap_or_default(),
                    take(&mut state.consumed),
                )
            };
            drop(consumed);
            let read = next_checked(&mut **lock(reader), &mut batch);
            let entry = match read {
                Ok(true) => Ok(prepare(&batch)),
                Ok(false) => Err(None),
                Err(err) => Err(Some(err)),
            };
            let mut state = lock(shared);
            match entry {
                Ok(prepared) => state.ready.push_back(Ok((batch, prepared))),
                Err(err) => {
                    state.ready.extend(err.map(Err));
                    state.done = true;
                }
            }
            let here = rayon::current_thread_index() == consumer;
            if state.done || state.ready.len() >= AHEAD || here {
                return;
            }
        }
    };
    rayon::in_place_scope(|scope| {
        let result = (|| loop {
            let next = {
                let mut state = lock(shared);
                let next = state.ready.pop_front();
                let more = !state.done && !state.reading && !state.panicked;
                if more && state.ready.len() < AHEAD {
                    state.reading = true;
                    if next.is_some() {
                        scope.spawn(move |_| read());
                    }
                }
                match next {
                    Some(next) => Some(next),
                    None if more => {
                        drop(state);
                        read();
                        continue;
                    }
                    None if state.reading => None,
                    None => return Ok(None),
                }
            };
            let Some(next) = next else {
                // A job is reading: help it, or let it have the core.
                if !matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                    std::thread::yield_now();
                }
                continue;
            };
            let (mut batch, mut prepared) = match next {
                Ok(next) => next,
                Err(err) => return Ok(Some(err)),
            };
            let consumed = consume(&mut batch, &mut prepared);
            let mut state = lock(shared);
            state.spare.push(batch);
            state.consumed.push(prepared);
            consumed?;
        })();
        lock(shared).done = true;
        result
    })
}

/// Marks the end of a reading job, also when it panics.
struct Reading<'a, T>(&'a Mutex<Shared<T>>);

impl<T> Drop for Reading<'_, T> {
    fn drop(&mut self) {
        let mut state = lock(self.0);
        state.reading = false;
        if std::thread::panicking() {
            state.panicked = true;
        }
    }
}

/// Locks `mutex`; a panic elsewhere while it was held does not matter here (the scope
/// raises it again).
fn lock<M>(mutex: &Mutex<M>) -> MutexGuard<'_, M> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads the next batch and checks its bytes for UTF-8 once, for [`Batch::text`].
fn next_checked(reader: &mut dyn FrameReader, batch: &mut Batch) -> io::Result<bool> {
    let read = reader.next_batch(batch)?;
    if read {
        batch.check_utf8();
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches of one frame each, holding the batch's number; fails with `fail` after
    /// `batches` of them if asked to.
    struct Counting {
        next: u64,
        batches: u64,
        fail: bool,
    }

    impl FrameReader for Counting {
        fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
            batch.clear();
            if self.next == self.batches {
                return if self.fail {
                    Err(io::Error::other("the disk went away"))
                } else {
                    Ok(false)
                };
            }
            batch.push_frame(self.next.to_string().as_bytes(), self.next);
            self.next += 1;
            Ok(true)
        }

        fn bytes_read(&self) -> u64 {
            0
        }
    }

    fn counting(batches: u64, fail: bool) -> Counting {
        Counting {
            next: 0,
            batches,
            fail,
        }
    }

    /// The numbers `consume` was handed, in its order, and what `pipelined` returned.
    fn run(
        reader: &mut Counting,
        live: bool,
        stop_at: Option<u64>,
    ) -> (Vec<u64>, io::Result<Option<io::Error>>) {
        let mut seen = Vec::new();
        let result = pipelined(
            reader,
            live,
            |batch| {
                let frame = &batch.frames[0];
                let number: u64 = std::str::from_utf8(batch.bytes(frame))
                    .unwrap()
                    .parse()
                    .unwrap();
                vec![number]
            },
            |_, prepared| {
                let number = prepared[0];
                if Some(number) == stop_at {
                    return Err(io::Error::other("consumer gave up"));
                }
                seen.push(number);
                Ok(())
            },
        );
        (seen, result)
    }

    fn in_pool<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(work)
    }

    #[test]
    fn every_batch_is_consumed_once_in_order_wherever_the_consumer_runs() {
        let all: Vec<u64> = (0..500).collect();
        for live in [false, true] {
            let (seen, result) = run(&mut counting(500, false), live, None);
            assert_eq!(seen, all, "outside the pool, live {live}");
            assert!(result.unwrap().is_none());
            for threads in [1, 2, 4] {
                let (seen, result) =
                    in_pool(threads, || run(&mut counting(500, false), live, None));
                assert_eq!(seen, all, "{threads} threads, live {live}");
                assert!(result.unwrap().is_none());
            }
        }
        let (seen, result) = in_pool(2, || run(&mut counting(0, false), false, None));
        assert!(seen.is_empty());
        assert!(result.unwrap().is_none());
    }

    #[test]
    fn a_read_error_comes_after_every_batch_read_before_it() {
        for threads in [1, 2] {
            let (seen, result) = in_pool(threads, || run(&mut counting(40, true), false, None));
            assert_eq!(seen, (0..40).collect::<Vec<_>>());
            let err = result.unwrap().expect("the read error is returned");
            assert_eq!(err.to_string(), "the disk went away");
        }
    }

    #[test]
    fn an_error_from_the_consumer_stops_the_reading() {
        for threads in [1, 2] {
            let mut reader = counting(10_000, false);
            let (seen, result) = in_pool(threads, || run(&mut reader, false, Some(7)));
            assert_eq!(seen, (0..7).collect::<Vec<_>>());
            assert_eq!(result.unwrap_err().to_string(), "consumer gave up");
            // Reading stopped a few batches ahead of the consumer, not at the end.
            assert!(reader.next < 7 + 2 * AHEAD as u64, "read {}", reader.next);
        }
    }

    #[test]
    fn a_panic_while_preparing_reaches_the_caller_instead_of_hanging() {
        for threads in [1, 2] {
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                in_pool(threads, || {
                    pipelined(
                        &mut counting(100, false),
                        false,
                        |batch| {
                            assert!(batch.frames[0].index != 30, "prepare broke");
                            vec![()]
                        },
                        |_, _| Ok(()),
                    )
                })
            }));
            assert!(panicked.is_err(), "{threads} threads");
        }
    }
}
