//! Protobuf frames (`application/vnd.ag-ui.event+proto`): a 4-byte big-endian length, then
//! one `Event` message. Each message is decoded here and handed on as the JSON event it
//! stands for, so every later stage reads it exactly as it reads a JSON event. A frame's
//! `line` is its 1-based number (a binary body has no lines) and its `offset` the byte where
//! its length prefix starts.

use std::io;

use super::lines::Input;
use super::{Batch, CLIENT_FRAME_LIMIT, Caveat, FrameKind, FrameReader, ProtoProblem};
use rayon::prelude::*;

use crate::protocol::proto::{self, Decoded, PREFIX_LEN};
use crate::text::plural;

pub struct ProtoReader {
    input: Input,
    max: usize,
    /// The prefix or the message being read when it spans reads.
    held: Vec<u8>,
    /// The length of the message being read, once its prefix is whole.
    len: Option<usize>,
    /// Bytes of an over-long message still to skip.
    skip: u64,
    /// Where the frame being read starts.
    frame_offset: u64,
    index: u64,
    /// The body ended inside a frame: reported once.
    ended: bool,
    /// Frames read, not yet decoded and handed over.
    pending: Vec<Item>,
}

/// A frame read: a whole message, or what is wrong with it.
struct Item {
    offset: u64,
    index: u64,
    what: Pending,
}

enum Pending {
    Message(Vec<u8>),
    Problem(ProtoProblem, String),
}

/// An event's JSON text with its `type` first, as producers write it (and as the fast path
/// for deltas reads it), then the other members.
fn event_json(event: &serde_json::Map<String, serde_json::Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.push(b'{');
    let members = event
        .get_key_value("type")
        .into_iter()
        .chain(event.iter().filter(|(key, _)| *key != "type"));
    for (i, (key, value)) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, key).expect("JSON to memory");
        out.push(b':');
        serde_json::to_writer(&mut out, value).expect("JSON to memory");
    }
    out.push(b'}');
    out
}

/// What a client may trip on in a frame holding `message`, or what its reading passed over:
/// its size, the fields it carried that were skipped.
fn caveat(message: &[u8], skips: proto::Skips) -> Caveat {
    let len = (PREFIX_LEN + message.len()) as u64;
    if skips.count > 0 {
        Caveat::ProtoSkipped { len, skips }
    } else if len > CLIENT_FRAME_LIMIT {
        Caveat::OverClientLimit { len }
    } else {
        Caveat::None
    }
}

/// One message as the JSON text of its event with what its reading passed over, or why it
/// yields none.
fn decode(message: &[u8]) -> Result<(Vec<u8>, Caveat), (ProtoProblem, String)> {
    let len = plural(message.len() as u64, "byte");
    match proto::decode_event(message) {
        Ok(Decoded::Event(event, skips)) => Ok((event_json(&event), caveat(message, skips))),
        Ok(Decoded::UnknownArm(numbers)) => {
            let fields = numbers
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            Err((
                ProtoProblem::UnknownArm,
                format!(
                    "a frame of {len} holds an event this build has no message for (envelope \
                     field {fields}); it is skipped"
                ),
            ))
        }
        Err(why) => Err((
            ProtoProblem::Undecodable,
            format!("a frame of {len} does not decode: {why}"),
        )),
    }
}

impl ProtoReader {
    pub fn new(input: Input, max: usize) -> Self {
        let frame_offset = input.offset();
        ProtoReader {
            input,
            max,
            held: Vec::new(),
            len: None,
            skip: 0,
            frame_offset,
            index: 0,
            ended: false,
            pending: Vec::new(),
        }
    }

    fn note(&mut self, problem: ProtoProblem, message: String) {
        self.push(Pending::Problem(problem, message));
    }

    fn push(&mut self, what: Pending) {
        self.pending.push(Item {
            offset: self.frame_offset,
            index: self.index,
            what,
        });
        self.index += 1;
    }

    /// Decodes the messages read (on the pool: decoding is most of the work) and hands them
    /// and the problems met over to the batch, in order.
    fn flush(&mut self, batch: &mut Batch) {
        let decoded: Vec<_> = self
            .pending
            .par_iter()
            .with_min_len(16)
            .map(|item| match &item.what {
                Pending::Message(bytes) => decode(bytes),
                Pending::Problem(problem, message) => Err((*problem, message.clone())),
            })
            .collect();
        for (item, result) in self.pending.drain(..).zip(decoded) {
            let line = item.index + 1;
            match result {
                Ok((json, caveat)) => {
                    batch.push_data(&json, line, item.offset, item.index, caveat);
                }
                Err((problem, message)) => {
                    let kind = FrameKind::Proto { problem, message };
                    batch.push_note(kind, line, item.offset, item.index);
                }
            }
        }
    }

    fn next_frame_starts(&mut self) {
        self.frame_offset = self.input.offset();
        self.len = None;
        self.held.clear();
    }
}

impl FrameReader for ProtoReader {
    fn next_batch(&mut self, batch: &mut Batch) -> io::Result<bool> {
        batch.clear();
        loop {
            if self.input.available().is_empty() {
                if !self.pending.is_empty() {
                    self.flush(batch);
                    return Ok(true);
                }
                if !self.input.fill()? {
                    if (!self.held.is_empty() || self.len.is_some()) && !self.ended {
                        self.ended = true;
                        let message = match self.len {
                            Some(len) => format!(
                                "the body ends inside a frame: {} of its {len} bytes arrived",
                                self.held.len()
                            ),
                            None => format!(
                                "the body ends inside a frame's 4-byte length ({} bytes)",
                                self.held.len()
                            ),
                        };
                        self.note(ProtoProblem::Truncated, message);
                    }
                    self.flush(batch);
                    return Ok(!batch.frames.is_empty());
                }
            }
            if self.skip > 0 {
                let n = (self.input.available().len() as u64).min(self.skip) as usize;
                self.input.consume(n);
                self.skip -= n as u64;
                if self.skip == 0 {
                    self.next_frame_starts();
                }
                continue;
            }
            let avail = self.input.available();
            match self.len {
                None => {
                    let want = PREFIX_LEN - self.held.len();
                    let n = want.min(avail.len());
                    self.held.extend_from_slice(&avail[..n]);
                    self.input.consume(n);
                    if self.held.len() == PREFIX_LEN {
                        let prefix: [u8; 4] = self.held[..].try_into().expect("four bytes");
                        let len = u32::from_be_bytes(prefix) as usize;
                        self.held.clear();
                        if len > self.max {
                            let message = format!(
                                "a frame says it holds {} bytes, over the {}-byte cap; it is \
                                 skipped",
                                len, self.max
                            );
                            self.note(ProtoProblem::TooLong, message);
                            self.skip = len as u64;
                        } else if len == 0 {
                            // Whole as it is (the body may end here): an empty message.
                            self.push(Pending::Message(Vec::new()));
                            self.next_frame_starts();
                        } else {
                            self.len = Some(len);
                        }
                    }
                }
                Some(len) => {
                    let want = len - self.held.len();
                    if self.held.is_empty() && avail.len() >= len {
                        let message = avail[..len].to_vec();
                        self.input.consume(len);
                        self.push(Pending::Message(message));
                        self.next_frame_starts();
                        continue;
                    }
                    let n = want.min(avail.len());
                    self.held.extend_from_slice(&avail[..n]);
                    self.input.consume(n);
                    if self.held.len() == len {
                        let message = std::mem::take(&mut self.held);
                        self.push(Pending::Message(message));
                        self.next_frame_starts();
                    }
                }
            }
        }
    }

    fn bytes_read(&self) -> u64 {
        self.input.offset()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::protocol::proto::PREFIX_LEN;
    use crate::protocol::proto::{encode_event, push_frame};
    use crate::read::testing::frames;
    use crate::read::{CLIENT_FRAME_LIMIT, Caveat, FrameKind, InputFormat, ProtoProblem};

    fn body(events: &[serde_json::Value]) -> Vec<u8> {
        let mut out = Vec::new();
        for event in events {
            push_frame(&encode_event(event).unwrap().bytes, &mut out);
        }
        out
    }

    #[test]
    fn frames_become_json_events_whatever_the_read_size() {
        let events = [
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x".repeat(300)}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ];
        let input = body(&events);
        for chunk in [1, 3, 5, 64, 1 << 20] {
            let got = frames(InputFormat::Proto, &input, chunk, 1 << 20);
            assert_eq!(got.len(), 3, "chunk {chunk}");
            let mut offset = 0;
            for (i, ((frame, text), event)) in got.iter().zip(&events).enumerate() {
                let back: serde_json::Value = serde_json::from_str(text).unwrap();
                assert_eq!(&back, event);
                assert_eq!(
                    (frame.index, frame.line, frame.offset),
                    (i as u64, i as u64 + 1, offset)
                );
                offset += 4 + encode_event(event).unwrap().bytes.len() as u64;
            }
        }
    }

    /// A body whose first frame's length holds a 0x0a byte (266 bytes: `00 00 01 0a`) is taken
    /// for protobuf when its format is sniffed, however its bytes arrive. The peek at the head
    /// stopped at that "line end" when the first read held only the length (a file's always
    /// does: the compression sniff reads four bytes), before the key that tells protobuf from
    /// text, and the body was called binary data.
    #[test]
    fn a_length_holding_a_line_end_is_still_sniffed_as_protobuf() {
        let run = |pad: usize| json!({"type":"RUN_STARTED","threadId":"t".repeat(pad),"runId":"r"});
        let pad = (1..400)
            .find(|&pad| encode_event(&run(pad)).unwrap().bytes.len() == 266)
            .unwrap();
        let events = [
            run(pad),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
        ];
        let input = body(&events);
        assert_eq!(input[..4], [0, 0, 1, 0x0a]);
        for chunk in [1, 2, 3, 4, 5, 64, 1 << 20] {
            let got = frames(None, &input, chunk, 1 << 20);
            let back: Vec<serde_json::Value> = got
                .iter()
                .map(|(_, text)| serde_json::from_str(text).unwrap())
                .collect();
            assert_eq!(back, events, "chunk {chunk}");
        }
    }

    /// A key is a varint of at most five bytes: a longer one after the first length is no
    /// protobuf, read whole or byte by byte (it was protobuf when its sixth byte came in the
    /// head, and binary data when the head held only the nine bytes waited for).
    #[test]
    fn a_first_key_longer_than_five_bytes_decides_alike_however_the_bytes_arrive() {
        let input = [
            0x00, 0x01, 0x00, 0x0a, 0xc2, 0xef, 0xff, 0xff, 0xff, 0xff, 0x23,
        ];
        let whole = frames(None, &input, 1 << 20, 1 << 16);
        for chunk in [1, 2, 3, 4, 5, 9] {
            let got = frames(None, &input, chunk, 1 << 16);
            assert_eq!(
                got.iter().map(|(f, _)| &f.kind).collect::<Vec<_>>(),
                whole.iter().map(|(f, _)| &f.kind).collect::<Vec<_>>(),
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn problems_are_frames_of_their_own_and_reading_goes_on() {
        let good = json!({"type":"STEP_STARTED","stepName":"s"});
        let mut input = body(std::slice::from_ref(&good));
        // Too long for a cap of 40 bytes: skipped.
        input.extend(body(&[
            json!({"type":"CUSTOM","name":"n","value":"v".repeat(60)}),
        ]));
        // Undecodable: a group wire type.
        input.extend([0, 0, 0, 1, 0x0b]);
        // An arm of a later version.
        input.extend([0, 0, 0, 3, 0x9a, 0x06, 0x00]);
        input.extend(body(std::slice::from_ref(&good)));
        // Cut inside the last frame.
        input.extend([0, 0, 0, 9, 0x0a]);
        for chunk in [1, 2, 7, 1 << 20] {
            let got = frames(InputFormat::Proto, &input, chunk, 40);
            let kinds: Vec<_> = got
                .iter()
                .map(|(f, _)| match &f.kind {
                    FrameKind::Data { .. } => None,
                    FrameKind::Proto { problem, .. } => Some(*problem),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(
                kinds,
                [
                    None,
                    Some(ProtoProblem::TooLong),
                    Some(ProtoProblem::Undecodable),
                    Some(ProtoProblem::UnknownArm),
                    None,
                    Some(ProtoProblem::Truncated),
                ],
                "chunk {chunk}"
            );
            let indexes: Vec<u64> = got.iter().map(|(f, _)| f.index).collect();
            assert_eq!(indexes, [0, 1, 2, 3, 4, 5]);
        }
    }

    /// A frame of no bytes is whole wherever it stands: an empty message, which does not
    /// decode. Last in the body it was said to be cut ("0 of its 0 bytes arrived").
    #[test]
    fn an_empty_frame_is_whole_at_the_end_too() {
        let good = json!({"type":"STEP_STARTED","stepName":"s"});
        let mut input = body(std::slice::from_ref(&good));
        input.extend([0, 0, 0, 0]);
        for only in [false, true] {
            let input = if only {
                &input[input.len() - 4..]
            } else {
                &input[..]
            };
            for chunk in [1, 3, 1 << 20] {
                let got = frames(InputFormat::Proto, input, chunk, 1 << 20);
                let last = got.last().map(|(f, _)| &f.kind);
                assert!(
                    matches!(
                        last,
                        Some(FrameKind::Proto {
                            problem: ProtoProblem::Undecodable,
                            ..
                        })
                    ),
                    "only {only}, chunk {chunk}: {last:?}"
                );
                assert_eq!(got.len(), if only { 1 } else { 2 });
            }
        }
        // Said so of a body that holds nothing else, by every command that needs events; a
        // body cut inside its first length or message is still cut.
        for empty in [&[0u8; 4][..], &[0; 8]] {
            let said = crate::read::describe_no_events(InputFormat::Proto, empty);
            assert!(said.contains("proto-undecodable"), "{said}");
        }
        for cut in [&[0, 0][..], &[0, 0, 0, 5]] {
            let said = crate::read::describe_no_events(InputFormat::Proto, cut);
            assert!(said.contains("proto-truncated"), "{said}");
        }
    }

    /// `@ag-ui/client` reads a frame of 10 MiB, its length included, and ends the stream at
    /// one byte more. The frame is read either way; only the larger one carries the caveat.
    #[test]
    fn a_frame_over_the_clients_limit_is_read_and_marked() {
        let content = |size: usize| json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x".repeat(size)});
        let framed = |size: usize| PREFIX_LEN + encode_event(&content(size)).unwrap().bytes.len();
        let limit = CLIENT_FRAME_LIMIT as usize;
        let size = limit - framed(0);
        let size = size - (framed(size) - limit);
        assert_eq!(framed(size), limit);
        for (size, caveat) in [
            (size, Caveat::None),
            (
                size + 1,
                Caveat::OverClientLimit {
                    len: limit as u64 + 1,
                },
            ),
        ] {
            let got = frames(
                InputFormat::Proto,
                &body(&[content(size)]),
                1 << 16,
                64 << 20,
            );
            assert_eq!(got.len(), 1);
            match &got[0].0.kind {
                FrameKind::Data { caveat: got, .. } => assert_eq!(*got, caveat, "delta of {size}"),
                other => panic!("{other:?}"),
            }
            let back: serde_json::Value = serde_json::from_str(&got[0].1).unwrap();
            assert_eq!(back, content(size));
        }
    }
}
