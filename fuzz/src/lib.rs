//! What the fuzz targets share: reading bytes the way `agui-lens` does, in pieces of any size,
//! and running the checker on either of its paths.

use std::io::{self, Cursor, Read};
use std::sync::{Arc, OnceLock};

use agui_lens_core::check::diagnostic::Diagnostic;
use agui_lens_core::check::catalog::Levels;
use agui_lens_core::check::engine::{Context, Engine};
use agui_lens_core::check::rules::protocol::ProtocolOptions;
use agui_lens_core::check::schema::SchemaSet;
use agui_lens_core::read::{self, Batch, FrameKind, InputFormat, ReadOptions};

pub fn schemas() -> &'static SchemaSet {
    static SCHEMAS: OnceLock<SchemaSet> = OnceLock::new();
    SCHEMAS.get_or_init(|| SchemaSet::embedded().expect("the embedded schemas compile"))
}

/// The format a fuzz input's first byte picks.
pub fn format_of(selector: u8) -> Option<InputFormat> {
    match selector % 5 {
        0 => Some(InputFormat::Jsonl),
        1 => Some(InputFormat::Sse),
        2 => Some(InputFormat::Json),
        3 => Some(InputFormat::Proto),
        _ => None,
    }
}

/// Hands out its bytes in pieces whose sizes cycle through `sizes`.
pub struct Pieces {
    data: Cursor<Vec<u8>>,
    sizes: Vec<usize>,
    next: usize,
}

impl Pieces {
    pub fn new(data: &[u8], sizes: &[u8]) -> Self {
        let sizes = sizes
            .iter()
            .map(|&s| usize::from(s) + 1)
            .collect::<Vec<_>>();
        Pieces {
            data: Cursor::new(data.to_vec()),
            sizes: if sizes.is_empty() {
                vec![usize::MAX]
            } else {
                sizes
            },
            next: 0,
        }
    }
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let len = buf.len().min(size);
        self.data.read(&mut buf[..len])
    }
}

/// A frame as read, with its bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct ReadFrame {
    pub kind: String,
    pub bytes: Vec<u8>,
    pub line: u64,
    pub offset: u64,
    pub index: u64,
}

/// Every frame a reader yields, and the error that ended it, if one did.
pub fn frames(
    raw: Box<dyn Read + Send>,
    format: Option<InputFormat>,
) -> (Vec<ReadFrame>, Option<String>) {
    let options = ReadOptions {
        format,
        max_line: 1 << 16,
        entry: None,
    };
    let mut opened = match read::open_reader(Arc::from("fuzz"), raw, format, &options) {
        Ok(opened) => opened,
        Err(err) => return (Vec::new(), Some(format!("{err:#}"))),
    };
    let mut out = Vec::new();
    let mut batch = Batch::default();
    loop {
        match opened.reader.next_batch(&mut batch) {
            Ok(true) => {}
            Ok(false) => return (out, None),
            Err(err) => return (out, Some(err.to_string())),
        }
        for frame in &batch.frames {
            let kind = match &frame.kind {
                FrameKind::Data { caveat, .. } => format!("data {caveat:?}"),
                FrameKind::TooLong { len } => format!("too long {len}"),
                FrameKind::Malformed { message } => format!("malformed {message}"),
                FrameKind::Proto { problem, message } => format!("proto {problem:?} {message}"),
            };
            out.push(ReadFrame {
                kind,
                bytes: batch.bytes(frame).to_vec(),
                line: frame.line,
                offset: frame.offset,
                index: frame.index,
            });
        }
    }
}

/// Checks `bytes` as `agui-lens check` does (`fast`: with the plain-delta fast path and the
/// pipelined reader) or batch by batch with every event built in full.
pub fn check(bytes: &[u8], format: Option<InputFormat>, fast: bool) -> Vec<Diagnostic> {
    let levels = Levels::default();
    let ctx = Context {
        schemas: schemas(),
        levels: &levels,
        max_line: 1 << 16,
        protocol: ProtocolOptions::default(),
    };
    let name: Arc<str> = Arc::from("fuzz");
    let options = ReadOptions {
        format,
        max_line: 1 << 16,
        entry: None,
    };
    let Ok(mut opened) = read::open_reader(
        name.clone(),
        Box::new(Cursor::new(bytes.to_vec())),
        format,
        &options,
    ) else {
        return Vec::new();
    };
    let mut engine = Engine::new(&ctx, name, opened.head.clone());
    let mut found = Vec::new();
    if fast {
        let _ = engine.check_reader(opened.reader.as_mut(), false, &mut found, &mut |_| Ok(()));
    } else {
        engine = engine.without_fast_path();
        let mut batch = Batch::default();
        while let Ok(true) = opened.reader.next_batch(&mut batch) {
            engine.check_batch(&batch, &mut found);
        }
    }
    engine.finish(&mut found);
    found
}
