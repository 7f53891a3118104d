//! Writes a realistic, deterministic AG-UI event stream for benchmarks.
//!
//!     cargo run --release --example generate -- --size 100MB [--profile deltas|mixed] \
//!         [--seed 7] [--threads 1] [--sequential] [--format jsonl|sse] [--gzip|--zstd] \
//!         [--stats] -o FILE   (`-o -`: stdout)
//!
//! The output looks like a stored history: many runs of one thread (or of a few: interleaved
//! run by run, or thread after thread with `--sequential`), written until `--size`
//! uncompressed bytes are reached (MB = 10^6 bytes) and always ending at a run boundary.
//! Token-sized TEXT_MESSAGE_CONTENT / REASONING_MESSAGE_CONTENT / TOOL_CALL_ARGS deltas dominate
//! the byte count, as in real captures: 93% in the `deltas` profile (the default, unchanged
//! byte for byte since before profiles existed), 76% in the `mixed` profile, whose other bytes
//! are state patches, conversation snapshots, run inputs, tool results, activities and
//! subagents (see "The mixed profile" below and bench/README.md). `--stats` prints the mix.
//!
//! The stream is meant to be clean: every event matches its 1.0 schema (no unknown fields),
//! every message, reasoning span, tool call and step opened in a run is closed before the run's
//! RUN_FINISHED / RUN_ERROR, ids are unique across the file (a reasoning span and its message
//! share one id, as every recorded producer does), timestamps never decrease, tool arguments
//! concatenate to JSON matching the tool's `parameters`, and every STATE_DELTA / ACTIVITY_DELTA
//! applies to the document the generator tracks. State is per thread: when runs of several
//! threads interleave, a STATE_DELTA applies to the state of its own run's thread. The same seed
//! gives the same bytes.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{self, BufWriter, Write};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use serde_json::{Map, Value, json};

#[derive(Debug, Parser)]
#[command(about = "Write a realistic, deterministic AG-UI event stream for benchmarks")]
pub(crate) struct Args {
    /// Uncompressed size to reach, e.g. 10MB, 100MB, 1GB (MB = 10^6 bytes, MiB = 2^20); the
    /// stream stops at the first run boundary at or past it.
    #[arg(long, value_parser = parse_size)]
    size: u64,
    /// Seed of the pseudo-random generator; the same seed gives the same bytes.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// How many threads the runs belong to. agui-lens reads a file as the history of one
    /// thread: more than one draws lifecycle/thread-changed warnings, and interleaved runs also
    /// state/patch-failed errors (each thread's deltas apply to that thread's own state).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    threads: u64,
    /// Write each thread's runs together (thread 1's, then thread 2's, ...) instead of
    /// interleaving runs of different threads.
    #[arg(long)]
    sequential: bool,
    /// One JSON event per line, or SSE frames (`data: <json>` and a blank line).
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// Compress the output with gzip.
    #[arg(long, conflicts_with = "zstd")]
    gzip: bool,
    /// Compress the output with zstd.
    #[arg(long)]
    zstd: bool,
    /// What the stream is made of: `deltas` (token deltas, 86% of the bytes: what the
    /// benchmarks first measured) or `mixed` (the mixture of stored histories from real agents:
    /// state patches, conversation snapshots, run inputs, tool results, activities, subagents).
    #[arg(long, value_enum, default_value_t = Profile::Deltas)]
    profile: Profile,
    /// Output file, or `-` for stdout.
    #[arg(short = 'o', long = "output")]
    output: String,
    /// After writing, print the mix to stderr: events and share of the bytes per event type,
    /// events and runs per MB.
    #[arg(long)]
    stats: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Profile {
    Deltas,
    Mixed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Jsonl,
    Sse,
}

fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num.parse().map_err(|_| format!("not a size: {text:?}"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        other => return Err(format!("unknown size unit {other:?} in {text:?}")),
    };
    Ok((num * mult) as u64)
}

// ---------------------------------------------------------------------------------------------
// Randomness and ids

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64: small, fast, good enough for synthetic data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }
    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) / ((1u64 << 53) as f64) < p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A bijection on 62-bit integers: distinct counters give distinct outputs, which look random.
fn scramble62(x: u64) -> u64 {
    const M: u64 = (1 << 62) - 1;
    let mut x = x & M;
    x = x.wrapping_mul(0x2545_F491_4F6C_DD1D) & M;
    x ^= x >> 31;
    x = x.wrapping_mul(0x5851_F42D_4C95_7F2D) & M;
    x ^= x >> 29;
    x
}

/// Unique ids: each one embeds a scrambled counter, so no two ids in a file can collide.
struct Ids {
    counter: u64,
    salt: u64,
}

impl Ids {
    fn unique(&mut self) -> u64 {
        self.counter += 1;
        scramble62(self.counter ^ self.salt)
    }
    /// A UUID v4-shaped id whose last 62 bits are unique.
    fn uuid(&mut self, rng: &mut Rng) -> String {
        let hi = (rng.next() & !0xF000) | 0x4000;
        let lo = self.unique() | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    }
    /// An OpenAI-style tool call id: `call_` and 24 base62 characters.
    fn call(&mut self, rng: &mut Rng) -> String {
        const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let mut s = String::from("call_");
        let mut u = self.unique();
        for _ in 0..11 {
            s.push(B62[(u % 62) as usize] as char);
            u /= 62;
        }
        for _ in 0..13 {
            s.push(*rng.pick(B62) as char);
        }
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Output

struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

type Raw = Counting<Box<dyn Write>>;

enum Sink {
    Plain(Raw),
    Gzip(flate2::write::GzEncoder<Raw>),
    Zstd(zstd::Encoder<'static, Raw>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
            Sink::Zstd(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
            Sink::Zstd(w) => w.flush(),
        }
    }
}

impl Sink {
    /// Finishes any compression frame; returns the bytes that reached the file.
    fn finish(self) -> io::Result<u64> {
        let mut raw = match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
            Sink::Zstd(w) => w.finish()?,
        };
        raw.flush()?;
        Ok(raw.bytes)
    }
}

struct Emitter {
    out: BufWriter<Sink>,
    sse: bool,
    buf: Vec<u8>,
    bytes: u64,
    events: u64,
    /// Per event type: (events, bytes).
    by_type: BTreeMap<String, (u64, u64)>,
}

impl Emitter {
    fn emit(&mut self, ty: &str, timestamp: u64, fields: Value) -> io::Result<()> {
        self.buf.clear();
        if self.sse {
            self.buf.extend_from_slice(b"data: ");
        }
        write!(self.buf, "{{\"type\":\"{ty}\",\"timestamp\":{timestamp}")?;
        if let Value::Object(fields) = &fields {
            for (key, value) in ordered(fields) {
                self.buf.push(b',');
                serde_json::to_writer(&mut self.buf, key)?;
                self.buf.push(b':');
                write_json(value, &mut self.buf)?;
            }
        }
        self.buf.push(b'}');
        self.buf
            .extend_from_slice(if self.sse { b"\n\n" } else { b"\n" });
        self.out.write_all(&self.buf)?;
        self.bytes += self.buf.len() as u64;
        self.events += 1;
        match self.by_type.get_mut(ty) {
            Some(counts) => *counts = (counts.0 + 1, counts.1 + self.buf.len() as u64),
            None => {
                self.by_type
                    .insert(ty.to_owned(), (1, self.buf.len() as u64));
            }
        }
        Ok(())
    }
}

/// Keys in the order producers write them (`type` first, ids before payloads); other keys keep
/// the map's order. This keeps the output the same whether or not serde_json's
/// `preserve_order` feature is on.
#[rustfmt::skip]
const KEY_ORDER: &[&str] = &[
    "type", "timestamp", "threadId", "runId", "parentRunId", "protocolVersion", "id", "messageId",
    "toolCallId", "toolCallName", "parentMessageId", "role", "name", "description", "subtype",
    "entityId", "stepName", "activityType", "op", "path", "from", "value", "title", "status",
    "done", "delta", "content", "toolCalls", "function", "arguments", "state", "messages", "tools",
    "parameters", "properties", "required", "additionalProperties", "context", "forwardedProps",
    "snapshot", "patch", "outcome", "usage", "provider", "model", "inputTokens", "outputTokens",
    "totalTokens", "reasoningTokens", "cachedInputTokens",
    // Only in the mixed profile (a key added above would reorder the deltas profile's bytes).
    "subagentRunId", "source", "event", "result",
];

fn ordered(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let rank = |k: &str| {
        KEY_ORDER
            .iter()
            .position(|o| *o == k)
            .unwrap_or(KEY_ORDER.len())
    };
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(k, _)| rank(k)); // stable: unranked keys keep the map's order
    entries
}

/// `v` as compact JSON text, keys in `KEY_ORDER`.
fn compact(v: &Value) -> String {
    let mut out = Vec::new();
    write_json(v, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// Compact JSON with object keys in `KEY_ORDER`.
fn write_json(v: &Value, out: &mut Vec<u8>) -> io::Result<()> {
    match v {
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, value)) in ordered(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key)?;
                out.push(b':');
                write_json(value, out)?;
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(item, out)?;
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar)?,
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Text

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "on", "with", "as", "this",
    "we", "you", "can", "be", "are", "will", "from", "by", "at", "or", "if", "not", "your", "our",
    "have", "has", "was", "which", "when", "then", "so", "but", "also", "more", "each", "first",
    "next", "now", "here", "there", "let", "me", "check", "look", "update", "state", "value",
    "counter", "items", "list", "result", "results", "query", "search", "found", "data", "request",
    "response", "server", "client", "agent", "tool", "call", "message", "thread", "run", "step",
    "plan", "weather", "forecast", "temperature", "city", "today", "tomorrow", "ticket",
    "priority", "issue", "report", "summary", "table", "rows", "columns", "users", "account",
    "order", "invoice", "payment", "schedule", "meeting", "calendar", "document", "section",
    "file", "function", "error", "warning", "config", "setting", "option", "default", "version",
    "release", "deploy", "build", "test", "tests", "passing", "failing", "latency", "throughput",
    "memory", "cache", "database", "index", "field", "schema", "event", "stream", "based", "using",
    "should", "would", "could", "might", "need", "needs", "want", "make", "sure", "quickly",
    "carefully", "probably", "already", "still", "again", "however", "therefore", "because",
    "about", "around", "between", "after", "before", "during", "into", "over", "under", "new",
    "old", "current", "previous", "latest", "same", "different", "simple", "small", "large",
    "important", "useful", "possible", "available", "ready", "done",
];

#[rustfmt::skip]
const FANCY: &[&str] = &[
    "café", "naïve", "façade", "Zürich", "São Paulo", "Kraków", "München", "→", "≈", "—", "21 °C",
    "東京", "日本語", "数据", "Привет", "مرحبا", "🚀", "✅", "😀", "👍🏽", "€42",
];

#[rustfmt::skip]
const CODEISH: &[&str] = &[
    "`state.counter`", "`items[0]`", "`C:\\Users\\dev\\config.toml`", "`\\n`", "`{\"ok\": true}`",
    "`/api/v1/runs`", "`SELECT *`", "`npm ci`", "`cargo test`", "`O(n log n)`",
];

#[rustfmt::skip]
const CITIES: &[&str] = &[
    "Paris", "Berlin", "London", "New York", "São Paulo", "Zürich", "東京", "Kraków", "Lagos",
    "Mumbai", "Sydney", "Montréal", "Reykjavík", "Cape Town", "Seoul",
];

/// Produces LLM-like text, piece by piece.
struct TextState {
    words_left: u64,
    cap_next: bool,
    line_start: bool,
}

impl TextState {
    fn new() -> Self {
        TextState {
            words_left: 0,
            cap_next: true,
            line_start: true,
        }
    }
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn piece(rng: &mut Rng, st: &mut TextState) -> String {
    if st.words_left == 0 && !st.line_start {
        let mut p = rng.pick(&[".", ".", ".", ".", "?", "!", ":"]).to_string();
        let r = rng.below(100);
        if r < 14 {
            p.push_str("\n\n");
            st.line_start = true;
        } else if r < 20 {
            p.push_str("\n- ");
            st.line_start = true;
        }
        st.words_left = rng.range(4, 18);
        st.cap_next = true;
        return p;
    }
    if st.words_left == 0 {
        st.words_left = rng.range(4, 18);
    }
    st.words_left -= 1;
    let sep = if st.line_start { "" } else { " " };
    let r = rng.below(100);
    let mut word = if r < 3 {
        rng.pick(FANCY).to_string()
    } else if r < 5 {
        format!("\"{}\"", rng.pick(WORDS))
    } else if r < 7 {
        rng.pick(CODEISH).to_string()
    } else {
        let w = rng.pick(WORDS);
        if st.cap_next {
            capitalize(w)
        } else {
            w.to_string()
        }
    };
    if (7..13).contains(&r) && st.words_left > 0 {
        word.push(',');
    }
    st.cap_next = false;
    st.line_start = false;
    format!("{sep}{word}")
}

/// A streamed message: `count` token-sized deltas (1-3 words each) and their concatenation.
fn stream_text(rng: &mut Rng, count: u64) -> (Vec<String>, String) {
    stream_words(rng, count, (50, 85))
}

/// `count` deltas of 1-3 words: one word below `cuts.0` of 100, two below `cuts.1`, else
/// three; and their concatenation.
fn stream_words(rng: &mut Rng, count: u64, cuts: (u64, u64)) -> (Vec<String>, String) {
    let mut st = TextState::new();
    let mut deltas = Vec::with_capacity(count as usize);
    let mut full = String::new();
    for _ in 0..count {
        let r = rng.below(100);
        let n = if r < cuts.0 {
            1
        } else if r < cuts.1 {
            2
        } else {
            3
        };
        let mut d = String::new();
        for _ in 0..n {
            d.push_str(&piece(rng, &mut st));
        }
        full.push_str(&d);
        deltas.push(d);
    }
    (deltas, full)
}

fn sentence(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let mut st = TextState::new();
    st.words_left = rng.range(lo, hi);
    let mut s = String::new();
    while st.words_left > 0 {
        s.push_str(&piece(rng, &mut st));
    }
    s
}

/// Splits `text` into chunks of 1-`max` characters (never inside a character).
fn chunks(rng: &mut Rng, text: &str, max: u64) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let n = (rng.range(1, max) as usize).min(chars.len() - i);
        out.push(chars[i..i + n].iter().collect());
        i += n;
    }
    out
}

/// JSON with `", "` and `": "` separators, as Python's json.dumps writes it.
fn spaced_json(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                spaced_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in ordered(map).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(": ");
                spaced_json(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap()),
    }
}

fn base64ish(rng: &mut Rng, len: u64) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s: String = (0..len).map(|_| *rng.pick(B64) as char).collect();
    while s.len() % 4 != 0 {
        s.push('=');
    }
    s
}

fn date(rng: &mut Rng) -> String {
    format!("2026-{:02}-{:02}", rng.range(1, 12), rng.range(1, 28))
}

// ---------------------------------------------------------------------------------------------
// Tools: a JSON Schema for the parameters, arguments that match it, and a plausible result.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tool {
    GetWeather,
    SearchDocs,
    CreateTicket,
    RunSql,
    SetCounter,
    AddTodo,
    ReadFile,
}

const TOOLS: &[Tool] = &[
    Tool::GetWeather,
    Tool::SearchDocs,
    Tool::CreateTicket,
    Tool::RunSql,
    Tool::SetCounter,
    Tool::AddTodo,
    Tool::ReadFile,
];

/// The tools the client offers in a run's input: frontend tools, which the application runs
/// when the agent calls them. The agent's own tools ([`Tool`]), whose results it streams, are
/// no input's: a producer does not answer a frontend tool (from protocol 1.0).
fn frontend_tools() -> Value {
    json!([
        {"name": "confirm_action", "description": "Ask the user to confirm an action before it runs.",
         "parameters": {"type": "object", "properties": {
            "action": {"type": "string", "description": "What will be done"},
            "risk": {"type": "string", "enum": ["low", "medium", "high"]},
            "details": {"type": "array", "items": {"type": "string"}, "maxItems": 10}},
            "required": ["action"], "additionalProperties": false}},
        {"name": "show_chart", "description": "Render a chart in the user's workspace.",
         "parameters": {"type": "object", "properties": {
            "title": {"type": "string", "maxLength": 120},
            "kind": {"type": "string", "enum": ["line", "bar", "pie"]},
            "series": {"type": "array", "items": {"type": "object", "properties": {
                "label": {"type": "string"}, "values": {"type": "array", "items": {"type": "number"}}},
                "required": ["label", "values"]}}},
            "required": ["kind", "series"], "additionalProperties": false}}
    ])
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::GetWeather => "get_weather",
            Tool::SearchDocs => "search_docs",
            Tool::CreateTicket => "create_ticket",
            Tool::RunSql => "run_sql",
            Tool::SetCounter => "set_counter",
            Tool::AddTodo => "add_todo",
            Tool::ReadFile => "read_file",
        }
    }

    fn arguments(self, rng: &mut Rng, counter: i64) -> Value {
        match self {
            Tool::GetWeather => {
                json!({"city": rng.pick(CITIES), "units": rng.pick(&["celsius", "fahrenheit"])})
            }
            Tool::SearchDocs => json!({
                "query": sentence(rng, 3, 8),
                "top_k": rng.range(1, 20),
                "filters": {"lang": rng.pick(&["en", "fr", "de", "ja"]), "since": date(rng)}}),
            Tool::CreateTicket => {
                let labels: Vec<&str> = (0..rng.range(0, 3)).map(|_| *rng.pick(WORDS)).collect();
                let body_len = rng.range(20, 80);
                json!({
                    "title": sentence(rng, 4, 9),
                    "body": stream_text(rng, body_len).1,
                    "priority": rng.pick(&["low", "medium", "high", "urgent"]),
                    "labels": labels})
            }
            Tool::RunSql => json!({
                "query": format!(
                    "SELECT id, name, status, created_at FROM {} WHERE created_at > $1 AND status = $2 ORDER BY created_at DESC LIMIT {}",
                    rng.pick(&["users", "orders", "invoices", "tickets"]), rng.range(5, 100)),
                "params": [date(rng), rng.pick(&["active", "pending", "closed"])]}),
            Tool::SetCounter => json!({"value": counter + rng.range(1, 9) as i64}),
            Tool::AddTodo => json!({"title": sentence(rng, 2, 6), "due": date(rng)}),
            Tool::ReadFile => {
                let start = rng.range(1, 400);
                json!({
                    "path": format!("src/{}/{}.rs", rng.pick(&["source", "rules", "report", "commands"]), rng.pick(WORDS)),
                    "start_line": start, "end_line": start + rng.range(10, 80)})
            }
        }
    }

    fn result(self, rng: &mut Rng, args: &Value) -> String {
        match self {
            Tool::GetWeather => {
                if rng.chance(0.5) {
                    format!(
                        "{}: {}, {} °C, wind {} km/h",
                        args["city"].as_str().unwrap(),
                        rng.pick(&["sunny", "cloudy", "light rain", "snow", "fog"]),
                        rng.range(0, 35),
                        rng.range(0, 60)
                    )
                } else {
                    compact(&json!({"city": args["city"], "temp_c": rng.range(0, 35),
                        "conditions": rng.pick(&["sunny", "cloudy", "rain"]), "humidity": rng.range(20, 95)}))
                }
            }
            Tool::SearchDocs => {
                let hits: Vec<Value> = (0..rng.range(2, 5))
                    .map(|i| {
                        json!({"rank": i + 1, "title": capitalize(&sentence(rng, 3, 7)),
                            "url": format!("https://docs.example.com/{}/{}", rng.pick(WORDS), rng.pick(WORDS)),
                            "snippet": sentence(rng, 15, 40)})
                    })
                    .collect();
                compact(&json!({"hits": hits}))
            }
            Tool::CreateTicket => compact(&json!({"id": format!("TCK-{}", rng.range(1000, 99999)),
                "status": "open", "url": format!("https://support.example.com/t/{}", rng.range(1000, 99999))})),
            Tool::RunSql => {
                let rows: Vec<Value> = (0..rng.range(3, 20))
                    .map(|_| {
                        let id = rng.range(1, 99999);
                        let name = capitalize(rng.pick::<&str>(WORDS));
                        let status = *rng.pick(&["active", "pending", "closed"]);
                        let at = format!(
                            "{}T{:02}:{:02}:00Z",
                            date(rng),
                            rng.range(0, 23),
                            rng.range(0, 59)
                        );
                        json!([id, name, status, at])
                    })
                    .collect();
                compact(&json!({"columns": ["id", "name", "status", "created_at"], "rows": rows}))
            }
            Tool::SetCounter => format!("counter set to {}", args["value"]),
            Tool::AddTodo => format!("added todo \"{}\"", args["title"].as_str().unwrap()),
            Tool::ReadFile => {
                let mut s = String::new();
                for i in 0..rng.range(10, 50) {
                    let indent = "    ".repeat(rng.range(0, 3) as usize);
                    match i % 5 {
                        0 => s.push_str(&format!(
                            "{indent}let {} = \"{}\";\n",
                            rng.pick(WORDS),
                            rng.pick(WORDS)
                        )),
                        1 => s.push_str(&format!("{indent}// {}\n", sentence(rng, 4, 12))),
                        2 => s.push_str(&format!(
                            "{indent}if {}.is_empty() {{ return Err(\"{}\\n\".into()); }}\n",
                            rng.pick(WORDS),
                            rng.pick(WORDS)
                        )),
                        3 => s.push_str(&format!(
                            "{indent}println!(\"{{}}\\t{{}}\", {}, path.display());\n",
                            rng.pick(WORDS)
                        )),
                        _ => s.push_str(&format!("{indent}}}\n")),
                    }
                }
                s
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSON Patch: the generator applies every patch it writes to the document it tracks, so a bad
// patch is a panic here rather than a surprise in a checker.

fn pointer(tokens: &[&str]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

fn apply(doc: &mut Value, op: &Value) {
    let kind = op["op"].as_str().unwrap();
    let path = op["path"].as_str().unwrap();
    let tokens: Vec<String> = path
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (last, parents) = tokens.split_last().expect("patch at the root");
    let mut target = &mut *doc;
    for t in parents {
        target = match target {
            Value::Object(m) => m.get_mut(t.as_str()),
            Value::Array(a) => a.get_mut(t.parse::<usize>().unwrap()),
            _ => None,
        }
        .unwrap_or_else(|| panic!("no parent for {path}"));
    }
    let value = || op["value"].clone();
    match (target, kind) {
        (Value::Object(m), "add") => {
            m.insert(last.clone(), value());
        }
        (Value::Object(m), "replace") => {
            *m.get_mut(last.as_str())
                .unwrap_or_else(|| panic!("replace: no {path}")) = value();
        }
        (Value::Object(m), "remove") => {
            m.remove(last.as_str())
                .unwrap_or_else(|| panic!("remove: no {path}"));
        }
        (Value::Object(m), "test") => {
            assert_eq!(m.get(last.as_str()), Some(&op["value"]), "test {path}")
        }
        (Value::Array(a), "add") if last == "-" => a.push(value()),
        (Value::Array(a), "add") => a.insert(last.parse().unwrap(), value()),
        (Value::Array(a), "replace") => a[last.parse::<usize>().unwrap()] = value(),
        (Value::Array(a), "remove") => {
            a.remove(last.parse().unwrap());
        }
        (Value::Array(a), "test") => assert_eq!(
            a[last.parse::<usize>().unwrap()],
            op["value"],
            "test {path}"
        ),
        (_, kind) => panic!("cannot {kind} {path}"),
    }
}

fn apply_all(doc: &mut Value, ops: &[Value]) {
    for op in ops {
        apply(doc, op);
    }
}

// ---------------------------------------------------------------------------------------------
// The generator

const HISTORY_KEPT: usize = 16;
const SNAPSHOT_MESSAGES: usize = 12;
const INPUT_HISTORY: usize = 4;
const PREF_KEYS: &[&str] = &[
    "theme",
    "density",
    "language",
    "notifications",
    "ui/theme",
    "beta~features",
];

struct Thread {
    id: String,
    last_run: Option<String>,
    state: Value,
    /// The most recent messages (user, assistant with tool calls, tool), capped.
    history: VecDeque<Value>,
    /// How many messages `history` keeps.
    history_kept: usize,
    tools: Vec<Tool>,
}

struct Gen {
    rng: Rng,
    ids: Ids,
    now: u64,
    out: Emitter,
    runs: u64,
    /// Mixed profile: the event count from which the next MESSAGES_SNAPSHOT is due.
    snapshot_due: u64,
}

/// The last `n` messages of a history, not starting with a tool message whose call was cut off.
fn window(history: &VecDeque<Value>, n: usize) -> Vec<Value> {
    let mut start = history.len().saturating_sub(n);
    while start < history.len() && history[start]["role"] == "tool" {
        start += 1;
    }
    history.iter().skip(start).cloned().collect()
}

fn push_history(thread: &mut Thread, message: Value) {
    if thread.history.len() == thread.history_kept {
        thread.history.pop_front();
    }
    thread.history.push_back(message);
}

impl Gen {
    fn tick(&mut self, lo: u64, hi: u64) -> u64 {
        self.now += self.rng.range(lo, hi);
        self.now
    }

    fn emit(&mut self, ty: &str, fields: Value) -> io::Result<()> {
        self.out.emit(ty, self.now, fields)
    }

    fn new_thread(&mut self) -> Thread {
        let rng = &mut self.rng;
        let mut tools: Vec<Tool> = TOOLS.iter().copied().filter(|_| rng.chance(0.7)).collect();
        if tools.is_empty() {
            tools.push(Tool::GetWeather);
        }
        let name = *rng.pick(&[
            "Ada", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken",
        ]);
        let state = json!({
            "counter": 0,
            "items": ["apple"],
            "user": {"name": name, "locale": rng.pick(&["en-US", "fr-FR", "de-DE", "ja-JP"]), "lastActiveAt": 0},
            "prefs": {"theme": "dark"},
            "todos": []
        });
        Thread {
            id: format!("thread_{}", self.ids.uuid(&mut self.rng)),
            last_run: None,
            state,
            history: VecDeque::new(),
            history_kept: HISTORY_KEPT,
            tools,
        }
    }

    /// A patch of 1-4 operations that applies to `state`; applied to it before returning.
    fn state_patch(&mut self, state: &mut Value) -> Vec<Value> {
        let mut ops = Vec::new();
        for _ in 0..self.rng.range(1, 4) {
            let batch: Vec<Value> = match self.rng.below(6) {
                0 => {
                    let counter = state["counter"].as_i64().unwrap();
                    let mut b = Vec::new();
                    if self.rng.chance(0.3) {
                        b.push(json!({"op": "test", "path": "/counter", "value": counter}));
                    }
                    b.push(json!({"op": "replace", "path": "/counter", "value": counter + self.rng.range(1, 5) as i64}));
                    b
                }
                1 => {
                    if state["items"].as_array().unwrap().len() >= 20 {
                        vec![json!({"op": "remove", "path": "/items/0"})]
                    } else {
                        vec![
                            json!({"op": "add", "path": "/items/-", "value": self.rng.pick(WORDS)}),
                        ]
                    }
                }
                2 => {
                    let key = *self.rng.pick(PREF_KEYS);
                    let path = pointer(&["prefs", key]);
                    let present = state["prefs"].get(key).is_some();
                    let value = *self
                        .rng
                        .pick(&["dark", "light", "compact", "on", "off", "fr"]);
                    if !present {
                        vec![json!({"op": "add", "path": path, "value": value})]
                    } else if self.rng.chance(0.5) {
                        vec![json!({"op": "remove", "path": path})]
                    } else {
                        vec![json!({"op": "replace", "path": path, "value": value})]
                    }
                }
                3 => {
                    let todos = state["todos"].as_array().unwrap();
                    if todos.len() >= 12 {
                        vec![json!({"op": "remove", "path": "/todos/0"})]
                    } else if !todos.is_empty() && self.rng.chance(0.4) {
                        let i = self.rng.below(todos.len() as u64);
                        vec![
                            json!({"op": "replace", "path": format!("/todos/{i}/done"), "value": true}),
                        ]
                    } else {
                        let id = self.ids.uuid(&mut self.rng);
                        vec![json!({"op": "add", "path": "/todos/-",
                            "value": {"id": id, "title": sentence(&mut self.rng, 2, 6), "done": false}})]
                    }
                }
                4 => {
                    vec![json!({"op": "replace", "path": "/user/lastActiveAt", "value": self.now})]
                }
                _ => {
                    let mut b = Vec::new();
                    if self.rng.chance(0.5) {
                        b.push(json!({"op": "test", "path": "/user/name", "value": state["user"]["name"]}));
                    }
                    b.push(json!({"op": "add", "path": "/lastTopic", "value": sentence(&mut self.rng, 2, 5)}));
                    b
                }
            };
            apply_all(state, &batch);
            ops.extend(batch);
        }
        ops
    }

    fn reasoning(&mut self) -> io::Result<()> {
        let id = self.ids.uuid(&mut self.rng);
        self.tick(5, 200);
        self.emit("REASONING_START", json!({"messageId": id}))?;
        self.emit(
            "REASONING_MESSAGE_START",
            json!({"messageId": id, "role": "reasoning"}),
        )?;
        let n = self.rng.range(10, 60);
        let (deltas, _) = stream_text(&mut self.rng, n);
        for d in deltas {
            self.tick(0, 40);
            self.emit(
                "REASONING_MESSAGE_CONTENT",
                json!({"messageId": id, "delta": d}),
            )?;
        }
        self.tick(0, 5);
        self.emit("REASONING_MESSAGE_END", json!({"messageId": id}))?;
        if self.rng.chance(0.15) {
            let len = self.rng.range(200, 1200);
            let value = base64ish(&mut self.rng, len);
            self.emit(
                "REASONING_ENCRYPTED_VALUE",
                json!({"subtype": "message", "entityId": id, "encryptedValue": value}),
            )?;
        }
        self.emit("REASONING_END", json!({"messageId": id}))
    }

    /// An assistant text message; returns its id and content.
    fn text(&mut self, count: u64) -> io::Result<(String, String)> {
        let id = self.ids.uuid(&mut self.rng);
        self.tick(5, 300);
        self.emit(
            "TEXT_MESSAGE_START",
            json!({"messageId": id, "role": "assistant"}),
        )?;
        let (deltas, full) = stream_text(&mut self.rng, count);
        for d in deltas {
            self.tick(0, 40);
            self.emit("TEXT_MESSAGE_CONTENT", json!({"messageId": id, "delta": d}))?;
        }
        self.tick(0, 5);
        self.emit("TEXT_MESSAGE_END", json!({"messageId": id}))?;
        Ok((id, full))
    }

    fn activity(&mut self) -> io::Result<()> {
        let id = self.ids.uuid(&mut self.rng);
        let n = self.rng.range(2, 5);
        let steps: Vec<Value> = (0..n)
            .map(|_| json!({"title": sentence(&mut self.rng, 2, 5), "status": "pending"}))
            .collect();
        let mut content =
            json!({"title": capitalize(&sentence(&mut self.rng, 2, 4)), "steps": steps});
        self.tick(1, 50);
        self.emit(
            "ACTIVITY_SNAPSHOT",
            json!({"messageId": id, "activityType": "PLAN", "content": content}),
        )?;
        for i in 0..self.rng.range(1, n) {
            let mut patch = vec![
                json!({"op": "replace", "path": format!("/steps/{i}/status"), "value": "done"}),
            ];
            if self.rng.chance(0.3) {
                patch.push(json!({"op": "add", "path": format!("/steps/{i}/note"), "value": sentence(&mut self.rng, 3, 8)}));
            }
            apply_all(&mut content, &patch);
            self.tick(20, 800);
            self.emit(
                "ACTIVITY_DELTA",
                json!({"messageId": id, "activityType": "PLAN", "patch": patch}),
            )?;
        }
        Ok(())
    }

    fn custom(&mut self) -> io::Result<()> {
        self.tick(0, 20);
        let (name, value) = match self.rng.below(3) {
            0 => (
                "progress",
                json!({"percent": self.rng.range(0, 100), "label": sentence(&mut self.rng, 2, 4)}),
            ),
            1 => (
                "ui.toast",
                json!({"level": self.rng.pick(&["info", "warning"]), "text": sentence(&mut self.rng, 4, 10)}),
            ),
            _ => (
                "langgraph.checkpoint",
                json!({"checkpointId": self.ids.uuid(&mut self.rng), "node": "agent"}),
            ),
        };
        self.emit("CUSTOM", json!({"name": name, "value": value}))
    }

    /// Streams 1-3 tool calls (two may be interleaved), then their results. Returns the calls
    /// (for the assistant message) and the tool messages.
    fn tool_calls(
        &mut self,
        thread: &mut Thread,
        parent: &str,
    ) -> io::Result<(Vec<Value>, Vec<Value>)> {
        let n = match self.rng.below(10) {
            0..6 => 1,
            6..9 => 2,
            _ => 3,
        };
        let mut calls = Vec::new();
        for _ in 0..n {
            let tool = *self.rng.pick(&thread.tools);
            let id = self.ids.call(&mut self.rng);
            let args = tool.arguments(&mut self.rng, thread.state["counter"].as_i64().unwrap());
            let text = if self.rng.chance(0.5) {
                compact(&args)
            } else {
                let mut s = String::new();
                spaced_json(&args, &mut s);
                s
            };
            let pieces = chunks(&mut self.rng, &text, 12);
            calls.push((tool, id, args, text, pieces));
        }
        let start = |g: &mut Gen, tool: Tool, id: &str| {
            g.tick(1, 30);
            g.emit(
                "TOOL_CALL_START",
                json!({"toolCallId": id, "toolCallName": tool.name(), "parentMessageId": parent}),
            )
        };
        if n == 2 && self.rng.chance(0.5) {
            // Interleaved: both open, then their argument deltas alternate at random.
            for (tool, id, ..) in &calls {
                start(self, *tool, id)?;
            }
            let mut next = [0usize, 0usize];
            while next[0] < calls[0].4.len() || next[1] < calls[1].4.len() {
                let k = if next[0] == calls[0].4.len() {
                    1
                } else if next[1] == calls[1].4.len() {
                    0
                } else {
                    self.rng.below(2) as usize
                };
                self.tick(0, 30);
                self.emit(
                    "TOOL_CALL_ARGS",
                    json!({"toolCallId": calls[k].1, "delta": calls[k].4[next[k]]}),
                )?;
                next[k] += 1;
            }
            for (_, id, ..) in &calls {
                self.tick(0, 5);
                self.emit("TOOL_CALL_END", json!({"toolCallId": id}))?;
            }
        } else {
            for (tool, id, _, _, pieces) in &calls {
                start(self, *tool, id)?;
                for p in pieces {
                    self.tick(0, 30);
                    self.emit("TOOL_CALL_ARGS", json!({"toolCallId": id, "delta": p}))?;
                }
                self.tick(0, 5);
                self.emit("TOOL_CALL_END", json!({"toolCallId": id}))?;
            }
        }
        self.emit("STEP_FINISHED", json!({"stepName": "agent"}))?;

        // Execution: results, and the state changes the tools made.
        self.tick(1, 20);
        self.emit("STEP_STARTED", json!({"stepName": "tools"}))?;
        let mut tool_messages = Vec::new();
        let mut state_ops = Vec::new();
        for (tool, id, args, _, _) in &calls {
            let content = tool.result(&mut self.rng, args);
            let message_id = self.ids.uuid(&mut self.rng);
            self.tick(20, 2500);
            self.emit("TOOL_CALL_RESULT", json!({"messageId": message_id, "toolCallId": id, "content": content, "role": "tool"}))?;
            tool_messages.push(
                json!({"id": message_id, "role": "tool", "content": content, "toolCallId": id}),
            );
            match tool {
                Tool::SetCounter => state_ops
                    .push(json!({"op": "replace", "path": "/counter", "value": args["value"]})),
                Tool::AddTodo => {
                    let todo_id = self.ids.uuid(&mut self.rng);
                    state_ops.push(json!({"op": "add", "path": "/todos/-",
                        "value": {"id": todo_id, "title": args["title"], "done": false}}))
                }
                _ => {}
            }
        }
        if !state_ops.is_empty() {
            apply_all(&mut thread.state, &state_ops);
            self.tick(0, 10);
            self.emit("STATE_DELTA", json!({"delta": state_ops}))?;
        }
        if self.rng.chance(0.08) {
            self.activity()?;
        }
        self.tick(0, 10);
        self.emit("STEP_FINISHED", json!({"stepName": "tools"}))?;

        let tool_calls = calls
            .iter()
            .map(|(tool, id, _, text, _)| json!({"id": id, "type": "function", "function": {"name": tool.name(), "arguments": text}}))
            .collect();
        Ok((tool_calls, tool_messages))
    }

    fn run(&mut self, thread: &mut Thread) -> io::Result<()> {
        self.runs += 1;
        let first = thread.last_run.is_none();
        let run_id = format!("run_{}", self.ids.uuid(&mut self.rng));
        self.tick(1_000, 600_000);

        // The user's turn.
        let user_id = self.ids.uuid(&mut self.rng);
        let user =
            json!({"id": user_id, "role": "user", "content": sentence(&mut self.rng, 5, 30)});
        let mut started = json!({"threadId": thread.id, "runId": run_id});
        if let Some(parent) = &thread.last_run {
            started["parentRunId"] = json!(parent);
        }
        started["protocolVersion"] = json!("1.0");
        if self.rng.chance(0.25) {
            let mut messages = window(&thread.history, INPUT_HISTORY);
            messages.push(user.clone());
            let mut input = json!({"threadId": thread.id, "runId": run_id});
            if let Some(parent) = &thread.last_run {
                input["parentRunId"] = json!(parent);
            }
            input["state"] = thread.state.clone();
            input["messages"] = Value::Array(messages);
            input["tools"] = frontend_tools();
            input["context"] = json!([{"description": "user timezone", "value": self.rng.pick(&["Europe/Paris", "America/New_York", "Asia/Tokyo"])}]);
            input["forwardedProps"] = json!({});
            started["input"] = input;
        }
        self.emit("RUN_STARTED", started)?;
        push_history(thread, user);
        thread.last_run = Some(run_id.clone());

        if first {
            self.tick(0, 10);
            self.emit("STATE_SNAPSHOT", json!({"snapshot": thread.state}))?;
        }
        if self.rng.chance(0.05) {
            self.custom()?;
        }

        let turns = match self.rng.below(20) {
            0..6 => 1,
            6..15 => 2,
            _ => 3,
        };
        let error_turn = if self.rng.chance(0.03) {
            Some(self.rng.below(turns))
        } else {
            None
        };
        let mut delta_sent = false;
        for turn in 0..turns {
            let last = turn + 1 == turns;
            self.tick(1, 50);
            self.emit("STEP_STARTED", json!({"stepName": "agent"}))?;
            if self.rng.chance(if turn == 0 { 0.7 } else { 0.3 }) {
                self.reasoning()?;
            }
            if error_turn == Some(turn) {
                // The model fails mid-answer: what was open is closed, then RUN_ERROR.
                let n = self.rng.range(5, 60);
                self.text(n)?;
                self.emit("STEP_FINISHED", json!({"stepName": "agent"}))?;
                self.tick(100, 5_000);
                let (message, code) = *self.rng.pick(&[
                    (
                        "Upstream model error: 529 overloaded_error",
                        "model_overloaded",
                    ),
                    (
                        "Request timed out after 60s waiting for the model",
                        "timeout",
                    ),
                    ("Rate limit exceeded for this organization", "rate_limited"),
                ]);
                return self.emit("RUN_ERROR", json!({"message": message, "code": code}));
            }
            let n = self.rng.range(50, 400);
            let (message_id, content) = self.text(n)?;
            let mut assistant = json!({"id": message_id, "role": "assistant", "content": content});
            if !last {
                let (calls, results) = self.tool_calls(thread, &message_id)?;
                assistant["toolCalls"] = Value::Array(calls);
                push_history(thread, assistant);
                for r in results {
                    push_history(thread, r);
                }
                if !first && self.rng.chance(0.3) {
                    let ops = self.state_patch(&mut thread.state);
                    self.tick(0, 10);
                    self.emit("STATE_DELTA", json!({"delta": ops}))?;
                    delta_sent = true;
                }
            } else {
                self.emit("STEP_FINISHED", json!({"stepName": "agent"}))?;
                push_history(thread, assistant);
            }
            if self.rng.chance(0.04) {
                self.custom()?;
            }
        }
        if !first && (!delta_sent || self.rng.chance(0.2)) && self.rng.chance(0.85) {
            let ops = self.state_patch(&mut thread.state);
            self.tick(0, 20);
            self.emit("STATE_DELTA", json!({"delta": ops}))?;
        }
        if self.rng.chance(0.05) {
            let messages = window(&thread.history, SNAPSHOT_MESSAGES);
            self.tick(0, 10);
            self.emit("MESSAGES_SNAPSHOT", json!({"messages": messages}))?;
        }
        let mut finished = json!({"threadId": thread.id, "runId": run_id});
        if self.rng.chance(0.9) {
            finished["outcome"] = json!({"type": "success"});
        }
        if self.rng.chance(0.2) {
            let input = self.rng.range(200, 60_000);
            let output = self.rng.range(50, 4_000);
            let reasoning = self.rng.range(0, output);
            finished["usage"] = json!([{"provider": "openai", "model": self.rng.pick(&["gpt-4.1", "o4-mini", "gpt-5"]),
                "inputTokens": input, "outputTokens": output, "totalTokens": input + output,
                "reasoningTokens": reasoning, "cachedInputTokens": self.rng.range(0, input)}]);
        }
        self.tick(1, 30);
        self.emit("RUN_FINISHED", finished)
    }
}

// ---------------------------------------------------------------------------------------------
// The mixed profile: the mixture of stored histories from real agents (issue 28). By bytes,
// about 43% TEXT_MESSAGE_CONTENT, 23% REASONING_MESSAGE_CONTENT, 10% TOOL_CALL_ARGS, 8%
// STATE_DELTA, 6% MESSAGES_SNAPSHOT, 2% RUN_STARTED, 1% TOOL_CALL_RESULT; the rest lifecycle,
// steps, reasoning spans, activities, subagents, RAW and CUSTOM; ~6,900 events and ~9 runs per
// MB. Every rule of the deltas profile holds. The knobs below are tuned against `--stats`.

/// Messages a mixed thread keeps for snapshots and run inputs.
const MIXED_HISTORY_KEPT: usize = 48;
/// Share of runs whose RUN_STARTED carries the full RunAgentInput.
const MIXED_INPUT_CHANCE: f64 = 0.19;
/// Events between two MESSAGES_SNAPSHOTs: drawn in this range.
const MIXED_SNAPSHOT_EVERY: (u64, u64) = (1_150, 2_500);
/// Chance of a STATE_DELTA after a streamed delta (beside those at step boundaries).
const MIXED_STATE_IN_STREAM: f64 = 0.05;
/// Caps that keep the mixed state at a few KB.
const MIXED_ITEMS: usize = 30;
const MIXED_TODOS: usize = 12;
const MIXED_DOCUMENTS: usize = 6;
const MIXED_NOTES: usize = 3;
const MIXED_PREF_KEYS: &[&str] = &["theme", "density", "language", "ui/theme", "beta~features"];
const STEP_STATUSES: &[&str] = &["pending", "in_progress", "done", "blocked"];

/// `stream_text` with smaller deltas (1-3 words, mostly 1), as newer models stream them.
fn mixed_stream_text(rng: &mut Rng, count: u64) -> (Vec<String>, String) {
    stream_words(rng, count, (60, 92))
}

impl Gen {
    /// One run of `thread`, as `profile` makes them.
    fn run_profile(&mut self, profile: Profile, thread: &mut Thread) -> io::Result<()> {
        match profile {
            Profile::Deltas => self.run(thread),
            Profile::Mixed => self.run_mixed(thread),
        }
    }

    /// Emits an event, attributed to a subagent when one is given.
    fn emit_by(&mut self, ty: &str, mut fields: Value, subagent: Option<&str>) -> io::Result<()> {
        if let Some(s) = subagent {
            fields["subagentRunId"] = json!(s);
        }
        self.emit(ty, fields)
    }

    /// A thread of the mixed profile: a state of a few KB, a longer history.
    fn new_mixed_thread(&mut self) -> Thread {
        let mut thread = self.new_thread();
        thread.history_kept = MIXED_HISTORY_KEPT;
        // Every tool, so that the share of tool arguments does not hang on which tools the
        // one thread of a file happened to get (their arguments differ 50-fold in size).
        thread.tools = TOOLS.to_vec();
        let rng = &mut self.rng;
        let items: Vec<&str> = (0..8).map(|_| *rng.pick(WORDS)).collect();
        let todos: Vec<Value> = (0..4)
            .map(|_| {
                json!({"id": self.ids.uuid(&mut self.rng), "title": sentence(&mut self.rng, 2, 6), "done": false})
            })
            .collect();
        let steps: Vec<Value> = (0..self.rng.range(4, 7))
            .map(|_| json!({"title": capitalize(&sentence(&mut self.rng, 3, 7)), "status": "pending", "notes": []}))
            .collect();
        let documents: Vec<Value> = (0..3).map(|_| self.document()).collect();
        thread.state["items"] = json!(items);
        thread.state["todos"] = json!(todos);
        thread.state["user"]["profile"] = json!({
            "timezone": self.rng.pick(&["Europe/Paris", "America/New_York", "Asia/Tokyo"]),
            "plan": self.rng.pick(&["free", "pro", "team"]),
            "quota": {"used": 0, "limit": 100_000},
        });
        thread.state["prefs"]["notifications"] = json!({"email": true, "push": false});
        thread.state["plan"] =
            json!({"goal": capitalize(&sentence(&mut self.rng, 6, 14)), "steps": steps});
        thread.state["documents"] = json!(documents);
        thread.state["progress"] = json!({"stage": "idle", "percent": 0});
        thread
    }

    /// A document of the mixed state: a nested object.
    fn document(&mut self) -> Value {
        let tags: Vec<&str> = (0..self.rng.range(1, 4))
            .map(|_| *self.rng.pick(WORDS))
            .collect();
        json!({
            "id": self.ids.uuid(&mut self.rng),
            "title": capitalize(&sentence(&mut self.rng, 3, 8)),
            "tags": tags,
            "meta": {"words": self.rng.range(100, 5_000), "updatedAt": self.now,
                "author": {"name": self.rng.pick(&["Ada", "Grace", "Linus"]), "role": self.rng.pick(&["editor", "owner"])}},
        })
    }

    /// A patch of 1-5 operations on the mixed state (replace, add to arrays, `test` that
    /// holds, nested objects, remove at the caps); applied to it before returning.
    fn mixed_state_patch(&mut self, state: &mut Value) -> Vec<Value> {
        // Mostly one or two operations, up to five.
        let n = match self.rng.below(10) {
            0..4 => 1,
            4..7 => 2,
            7..9 => 3,
            _ => self.rng.range(4, 5) as usize,
        };
        let mut ops: Vec<Value> = Vec::new();
        while ops.len() < n {
            let room = n - ops.len();
            let batch: Vec<Value> = match self.rng.below(9) {
                0 | 1 => {
                    let mut b = vec![
                        json!({"op": "replace", "path": "/progress/percent", "value": self.rng.range(0, 100)}),
                    ];
                    if room > 1 && self.rng.chance(0.4) {
                        b.push(json!({"op": "replace", "path": "/progress/stage",
                            "value": self.rng.pick(&["planning", "searching", "drafting", "reviewing"])}));
                    }
                    b
                }
                2 => {
                    let counter = state["counter"].as_i64().unwrap();
                    let mut b = Vec::new();
                    if room > 1 && self.rng.chance(0.5) {
                        b.push(json!({"op": "test", "path": "/counter", "value": counter}));
                    }
                    b.push(json!({"op": "replace", "path": "/counter", "value": counter + self.rng.range(1, 5) as i64}));
                    b
                }
                3 => {
                    if state["items"].as_array().unwrap().len() >= MIXED_ITEMS {
                        vec![json!({"op": "remove", "path": "/items/0"})]
                    } else {
                        vec![
                            json!({"op": "add", "path": "/items/-", "value": self.rng.pick(WORDS)}),
                        ]
                    }
                }
                4 => {
                    let todos = state["todos"].as_array().unwrap();
                    if todos.len() >= MIXED_TODOS {
                        vec![json!({"op": "remove", "path": "/todos/0"})]
                    } else if !todos.is_empty() && self.rng.chance(0.4) {
                        let i = self.rng.below(todos.len() as u64);
                        vec![
                            json!({"op": "replace", "path": format!("/todos/{i}/done"), "value": true}),
                        ]
                    } else {
                        let id = self.ids.uuid(&mut self.rng);
                        vec![json!({"op": "add", "path": "/todos/-",
                            "value": {"id": id, "title": sentence(&mut self.rng, 2, 6), "done": false}})]
                    }
                }
                5 => {
                    let steps = state["plan"]["steps"].as_array().unwrap();
                    let i = self.rng.below(steps.len() as u64);
                    let notes = steps[i as usize]["notes"].as_array().unwrap().len();
                    let status = steps[i as usize]["status"].clone();
                    let mut b = Vec::new();
                    if self.rng.chance(0.5) {
                        if room > 1 && self.rng.chance(0.5) {
                            b.push(json!({"op": "test", "path": format!("/plan/steps/{i}/status"), "value": status}));
                        }
                        b.push(json!({"op": "replace", "path": format!("/plan/steps/{i}/status"), "value": self.rng.pick(STEP_STATUSES)}));
                    } else if notes >= MIXED_NOTES {
                        b.push(json!({"op": "remove", "path": format!("/plan/steps/{i}/notes/0")}));
                    } else {
                        b.push(json!({"op": "add", "path": format!("/plan/steps/{i}/notes/-"), "value": sentence(&mut self.rng, 4, 12)}));
                    }
                    b
                }
                6 => {
                    let docs = state["documents"].as_array().unwrap().len();
                    if docs >= MIXED_DOCUMENTS {
                        vec![json!({"op": "remove", "path": "/documents/0"})]
                    } else if self.rng.chance(0.5) {
                        let doc = self.document();
                        vec![json!({"op": "add", "path": "/documents/-", "value": doc})]
                    } else {
                        let i = self.rng.below(docs as u64);
                        vec![
                            json!({"op": "replace", "path": format!("/documents/{i}/meta"),
                            "value": {"words": self.rng.range(100, 5_000), "updatedAt": self.now,
                                "author": {"name": self.rng.pick(&["Ada", "Grace", "Linus"]), "role": "editor"},
                                "reviewers": [self.rng.pick(&["Ken", "Dennis", "Barbara"])]}}),
                        ]
                    }
                }
                7 => {
                    let mut b = Vec::new();
                    if room > 1 && self.rng.chance(0.5) {
                        b.push(json!({"op": "test", "path": "/user/name", "value": state["user"]["name"]}));
                    }
                    if self.rng.chance(0.5) {
                        b.push(json!({"op": "replace", "path": "/user/lastActiveAt", "value": self.now}));
                    } else {
                        let used = state["user"]["profile"]["quota"]["used"].as_u64().unwrap();
                        b.push(json!({"op": "replace", "path": "/user/profile/quota/used", "value": used + self.rng.range(100, 3_000)}));
                    }
                    b
                }
                _ => {
                    let key = *self.rng.pick(MIXED_PREF_KEYS);
                    let path = pointer(&["prefs", key]);
                    let present = state["prefs"].get(key).is_some();
                    let value = *self
                        .rng
                        .pick(&["dark", "light", "compact", "on", "off", "fr"]);
                    if !present {
                        vec![json!({"op": "add", "path": path, "value": value})]
                    } else if self.rng.chance(0.5) {
                        vec![json!({"op": "remove", "path": path})]
                    } else {
                        vec![json!({"op": "replace", "path": path, "value": value})]
                    }
                }
            };
            apply_all(state, &batch);
            ops.extend(batch);
        }
        ops
    }

    /// `count` STATE_DELTA events.
    fn state_updates(&mut self, thread: &mut Thread, count: u64) -> io::Result<()> {
        for _ in 0..count {
            let ops = self.mixed_state_patch(&mut thread.state);
            self.tick(0, 20);
            self.emit("STATE_DELTA", json!({"delta": ops}))?;
        }
        Ok(())
    }

    /// A streamed delta, now and then followed by a state update.
    fn delta_in_stream(
        &mut self,
        thread: &mut Thread,
        ty: &str,
        fields: Value,
        subagent: Option<&str>,
    ) -> io::Result<()> {
        self.tick(0, 40);
        self.emit_by(ty, fields, subagent)?;
        if self.rng.chance(MIXED_STATE_IN_STREAM) {
            self.state_updates(thread, 1)?;
        }
        Ok(())
    }

    fn mixed_reasoning(
        &mut self,
        thread: &mut Thread,
        count: u64,
        subagent: Option<&str>,
    ) -> io::Result<()> {
        let id = self.ids.uuid(&mut self.rng);
        self.tick(5, 200);
        self.emit_by("REASONING_START", json!({"messageId": id}), subagent)?;
        self.emit_by(
            "REASONING_MESSAGE_START",
            json!({"messageId": id, "role": "reasoning"}),
            subagent,
        )?;
        let (deltas, _) = mixed_stream_text(&mut self.rng, count);
        for d in deltas {
            self.delta_in_stream(
                thread,
                "REASONING_MESSAGE_CONTENT",
                json!({"messageId": id, "delta": d}),
                subagent,
            )?;
        }
        self.tick(0, 5);
        self.emit_by("REASONING_MESSAGE_END", json!({"messageId": id}), subagent)?;
        if self.rng.chance(0.05) {
            let len = self.rng.range(200, 800);
            let value = base64ish(&mut self.rng, len);
            self.emit_by(
                "REASONING_ENCRYPTED_VALUE",
                json!({"subtype": "message", "entityId": id, "encryptedValue": value}),
                subagent,
            )?;
        }
        self.emit_by("REASONING_END", json!({"messageId": id}), subagent)
    }

    fn mixed_text(
        &mut self,
        thread: &mut Thread,
        count: u64,
        subagent: Option<&str>,
    ) -> io::Result<(String, String)> {
        let id = self.ids.uuid(&mut self.rng);
        self.tick(5, 300);
        self.emit_by(
            "TEXT_MESSAGE_START",
            json!({"messageId": id, "role": "assistant"}),
            subagent,
        )?;
        let (deltas, full) = mixed_stream_text(&mut self.rng, count);
        for d in deltas {
            self.delta_in_stream(
                thread,
                "TEXT_MESSAGE_CONTENT",
                json!({"messageId": id, "delta": d}),
                subagent,
            )?;
        }
        self.tick(0, 5);
        self.emit_by("TEXT_MESSAGE_END", json!({"messageId": id}), subagent)?;
        Ok((id, full))
    }

    /// A subagent invocation inside the tools step: a step of its own, reasoning and a text
    /// message attributed to it, then SUBAGENT_FINISHED (or, now and then, SUBAGENT_ERROR).
    fn subagent(&mut self, thread: &mut Thread) -> io::Result<()> {
        let sub = format!("sub_{}", self.ids.uuid(&mut self.rng));
        let (name, description) = *self.rng.pick(&[
            ("researcher", "Finds and summarises sources"),
            ("coder", "Writes and runs code in a sandbox"),
            ("critic", "Reviews a draft for errors"),
        ]);
        self.tick(1, 50);
        self.emit(
            "SUBAGENT_STARTED",
            json!({"subagentRunId": sub, "name": name, "description": description}),
        )?;
        let sub = Some(sub.as_str());
        self.emit_by("STEP_STARTED", json!({"stepName": name}), sub)?;
        if self.rng.chance(0.5) {
            let n = self.rng.range(10, 40);
            self.mixed_reasoning(thread, n, sub)?;
        }
        let n = self.rng.range(10, 60);
        let (id, content) = self.mixed_text(thread, n, sub)?;
        push_history(
            thread,
            json!({"id": id, "role": "assistant", "content": content}),
        );
        self.tick(1, 20);
        self.emit_by("STEP_FINISHED", json!({"stepName": name}), sub)?;
        self.tick(1, 20);
        if self.rng.chance(0.1) {
            self.emit("SUBAGENT_ERROR", json!({"subagentRunId": sub, "message": "the sandbox timed out", "code": "timeout"}))
        } else {
            let summary = sentence(&mut self.rng, 4, 12);
            self.emit("SUBAGENT_FINISHED", json!({"subagentRunId": sub, "result": {"summary": summary}, "outcome": {"type": "success"}}))
        }
    }

    /// A provider's own event, passed through.
    fn raw(&mut self) -> io::Result<()> {
        self.tick(0, 20);
        let input = self.rng.range(200, 60_000);
        let output = self.rng.range(50, 4_000);
        let event = json!({"type": "response.completed", "response": {
            "id": format!("resp_{:016x}", self.ids.unique()), "status": "completed",
            "model": self.rng.pick(&["gpt-4.1", "o4-mini", "gpt-5"]),
            "usage": {"input_tokens": input, "output_tokens": output, "total_tokens": input + output}}});
        self.emit("RAW", json!({"event": event, "source": "openai"}))
    }

    /// A short tool result (the mixed profile's results are 1% of its bytes).
    fn short_result(&mut self, tool: Tool, args: &Value) -> String {
        let head = match tool {
            Tool::GetWeather => format!(
                "{}: {}, {} °C, wind {} km/h",
                args["city"].as_str().unwrap(),
                self.rng
                    .pick(&["sunny", "cloudy", "light rain", "snow", "fog"]),
                self.rng.range(0, 35),
                self.rng.range(0, 60)
            ),
            Tool::SearchDocs => format!(
                "{} results; best: {}",
                self.rng.range(1, 20),
                capitalize(&sentence(&mut self.rng, 3, 6))
            ),
            Tool::CreateTicket => format!(
                "TCK-{} opened: https://support.example.com/t/{}",
                self.rng.range(1000, 99999),
                self.rng.range(1000, 99999)
            ),
            Tool::RunSql => format!(
                "{} rows in {} ms",
                self.rng.range(0, 500),
                self.rng.range(2, 900)
            ),
            Tool::SetCounter => format!("counter set to {}", args["value"]),
            Tool::AddTodo => format!("added todo \"{}\"", args["title"].as_str().unwrap()),
            Tool::ReadFile => format!(
                "{} lines of {}",
                self.rng.range(10, 80),
                args["path"].as_str().unwrap()
            ),
        };
        // What the tool adds for the model to read: a line of summary.
        format!("{head}. {}", capitalize(&sentence(&mut self.rng, 4, 14)))
    }

    /// One or two tool calls of the assistant message, their results in a "tools" step (with
    /// the state changes the tools made, now and then an activity or a subagent). Closes the
    /// "agent" step; adds the message, with its calls, and the results to the history, in the
    /// order they were streamed.
    fn mixed_tool_calls(&mut self, thread: &mut Thread, mut assistant: Value) -> io::Result<()> {
        let parent = assistant["id"].as_str().unwrap().to_owned();
        let n = if self.rng.chance(0.15) { 2 } else { 1 };
        let mut calls = Vec::new();
        for _ in 0..n {
            let tool = *self.rng.pick(&thread.tools);
            let id = self.ids.call(&mut self.rng);
            let args = tool.arguments(&mut self.rng, thread.state["counter"].as_i64().unwrap());
            let text = if self.rng.chance(0.5) {
                compact(&args)
            } else {
                let mut s = String::new();
                spaced_json(&args, &mut s);
                s
            };
            let pieces = chunks(&mut self.rng, &text, 12);
            self.tick(1, 30);
            self.emit(
                "TOOL_CALL_START",
                json!({"toolCallId": id, "toolCallName": tool.name(), "parentMessageId": parent}),
            )?;
            for p in &pieces {
                self.delta_in_stream(
                    thread,
                    "TOOL_CALL_ARGS",
                    json!({"toolCallId": id, "delta": p}),
                    None,
                )?;
            }
            self.tick(0, 5);
            self.emit("TOOL_CALL_END", json!({"toolCallId": id}))?;
            calls.push((tool, id, args, text));
        }
        self.emit("STEP_FINISHED", json!({"stepName": "agent"}))?;

        self.tick(1, 20);
        self.emit("STEP_STARTED", json!({"stepName": "tools"}))?;
        let mut tool_messages = Vec::new();
        for (tool, id, args, _) in &calls {
            let content = self.short_result(*tool, args);
            let message_id = self.ids.uuid(&mut self.rng);
            self.tick(20, 2500);
            self.emit("TOOL_CALL_RESULT", json!({"messageId": message_id, "toolCallId": id, "content": content, "role": "tool"}))?;
            tool_messages.push(
                json!({"id": message_id, "role": "tool", "content": content, "toolCallId": id}),
            );
            let mut ops = Vec::new();
            match tool {
                Tool::SetCounter => {
                    ops.push(json!({"op": "replace", "path": "/counter", "value": args["value"]}))
                }
                Tool::AddTodo if thread.state["todos"].as_array().unwrap().len() < MIXED_TODOS => {
                    let todo_id = self.ids.uuid(&mut self.rng);
                    ops.push(json!({"op": "add", "path": "/todos/-", "value": {"id": todo_id, "title": args["title"], "done": false}}))
                }
                _ => {}
            }
            if !ops.is_empty() {
                apply_all(&mut thread.state, &ops);
                self.tick(0, 10);
                self.emit("STATE_DELTA", json!({"delta": ops}))?;
            }
            let k = self.rng.range(1, 3);
            self.state_updates(thread, k)?;
        }
        assistant["toolCalls"] = calls
            .iter()
            .map(|(tool, id, _, text)| json!({"id": id, "type": "function", "function": {"name": tool.name(), "arguments": text}}))
            .collect();
        push_history(thread, assistant);
        for m in tool_messages {
            push_history(thread, m);
        }
        if self.rng.chance(0.25) {
            self.activity()?;
        }
        if self.rng.chance(0.12) {
            self.subagent(thread)?;
        }
        self.tick(0, 10);
        self.emit("STEP_FINISHED", json!({"stepName": "tools"}))
    }

    /// A MESSAGES_SNAPSHOT of the last 20-40 messages, when one is due.
    fn maybe_messages_snapshot(&mut self, thread: &Thread) -> io::Result<()> {
        if self.out.events < self.snapshot_due {
            return Ok(());
        }
        let (lo, hi) = MIXED_SNAPSHOT_EVERY;
        self.snapshot_due = self.out.events + self.rng.range(lo, hi);
        let n = self.rng.range(20, 40) as usize;
        let messages = window(&thread.history, n);
        self.tick(0, 10);
        self.emit("MESSAGES_SNAPSHOT", json!({"messages": messages}))
    }

    fn run_mixed(&mut self, thread: &mut Thread) -> io::Result<()> {
        if self.runs == 0 {
            let (lo, hi) = MIXED_SNAPSHOT_EVERY;
            self.snapshot_due = self.rng.range(lo, hi);
        }
        self.runs += 1;
        let first = thread.last_run.is_none();
        let run_id = format!("run_{}", self.ids.uuid(&mut self.rng));
        self.tick(1_000, 600_000);

        let user_id = self.ids.uuid(&mut self.rng);
        let user =
            json!({"id": user_id, "role": "user", "content": sentence(&mut self.rng, 5, 30)});
        let mut started = json!({"threadId": thread.id, "runId": run_id});
        if let Some(parent) = &thread.last_run {
            started["parentRunId"] = json!(parent);
        }
        started["protocolVersion"] = json!("1.0");
        if self.rng.chance(MIXED_INPUT_CHANCE) {
            let n = self.rng.range(4, 10) as usize;
            let mut messages = window(&thread.history, n);
            messages.push(user.clone());
            let mut input = json!({"threadId": thread.id, "runId": run_id});
            if let Some(parent) = &thread.last_run {
                input["parentRunId"] = json!(parent);
            }
            input["state"] = thread.state.clone();
            input["messages"] = Value::Array(messages);
            input["tools"] = frontend_tools();
            input["context"] = json!([
                {"description": "user timezone", "value": thread.state["user"]["profile"]["timezone"]},
                {"description": "current plan", "value": thread.state["plan"]["goal"]},
                {"description": "workspace", "value": format!("/home/{}/projects/{}", thread.state["user"]["name"].as_str().unwrap().to_lowercase(), self.rng.pick(WORDS))},
            ]);
            input["forwardedProps"] = json!({});
            started["input"] = input;
        }
        self.emit("RUN_STARTED", started)?;
        push_history(thread, user);
        thread.last_run = Some(run_id.clone());
        if first {
            self.tick(0, 10);
            self.emit("STATE_SNAPSHOT", json!({"snapshot": thread.state}))?;
        } else {
            self.state_updates(thread, 1)?;
        }
        if self.rng.chance(0.2) {
            self.custom()?;
        }

        let turns = self.rng.range(3, 6);
        let error_turn = if self.rng.chance(0.03) {
            Some(self.rng.below(turns))
        } else {
            None
        };
        for turn in 0..turns {
            let last = turn + 1 == turns;
            self.tick(1, 50);
            self.emit("STEP_STARTED", json!({"stepName": "agent"}))?;
            if self.rng.chance(0.75) {
                let n = self.rng.range(20, 90);
                self.mixed_reasoning(thread, n, None)?;
            }
            if error_turn == Some(turn) {
                let n = self.rng.range(5, 60);
                self.mixed_text(thread, n, None)?;
                self.emit("STEP_FINISHED", json!({"stepName": "agent"}))?;
                self.tick(100, 5_000);
                return self.emit("RUN_ERROR", json!({"message": "Upstream model error: 529 overloaded_error", "code": "model_overloaded"}));
            }
            let n = self.rng.range(28, 118);
            let (message_id, content) = self.mixed_text(thread, n, None)?;
            let assistant = json!({"id": message_id, "role": "assistant", "content": content});
            let k = self.rng.range(0, 2);
            self.state_updates(thread, k)?;
            if !last {
                self.mixed_tool_calls(thread, assistant)?;
            } else {
                self.emit("STEP_FINISHED", json!({"stepName": "agent"}))?;
                push_history(thread, assistant);
            }
            if self.rng.chance(0.15) {
                self.raw()?;
            }
            if self.rng.chance(0.05) {
                self.custom()?;
            }
            self.maybe_messages_snapshot(thread)?;
        }
        let mut finished = json!({"threadId": thread.id, "runId": run_id});
        finished["outcome"] = json!({"type": "success"});
        if self.rng.chance(0.3) {
            let input = self.rng.range(200, 60_000);
            let output = self.rng.range(50, 4_000);
            finished["usage"] = json!([{"provider": "openai", "model": self.rng.pick(&["gpt-4.1", "o4-mini", "gpt-5"]),
                "inputTokens": input, "outputTokens": output, "totalTokens": input + output}]);
        }
        self.tick(1, 30);
        self.emit("RUN_FINISHED", finished)
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let summary = generate(&args)?;
    let compressed = if args.gzip || args.zstd {
        format!(" ({} compressed)", summary.written)
    } else {
        String::new()
    };
    eprintln!(
        "generate: {} bytes{compressed}, {} events, {} runs, {} threads -> {}",
        summary.bytes, summary.events, summary.runs, args.threads, args.output
    );
    if args.stats {
        eprint!("{}", summary.stats());
    }
    Ok(())
}

/// What a stream holds, as `generate` wrote it (uncompressed bytes).
pub(crate) struct Summary {
    pub(crate) bytes: u64,
    pub(crate) events: u64,
    pub(crate) runs: u64,
    /// Bytes written after compression.
    pub(crate) written: u64,
    /// Per event type: (events, bytes), bytes including the line's framing.
    pub(crate) by_type: BTreeMap<String, (u64, u64)>,
}

impl Summary {
    /// Share of the bytes of events of type `ty`, in percent.
    pub(crate) fn percent(&self, ty: &str) -> f64 {
        self.by_type.get(ty).map_or(0, |&(_, b)| b) as f64 * 100.0 / self.bytes as f64
    }

    pub(crate) fn events_per_mb(&self) -> f64 {
        self.events as f64 / (self.bytes as f64 / 1e6)
    }

    pub(crate) fn runs_per_mb(&self) -> f64 {
        self.runs as f64 / (self.bytes as f64 / 1e6)
    }

    /// The mix as a markdown table, largest share of bytes first.
    pub(crate) fn stats(&self) -> String {
        let mut rows: Vec<(&String, &(u64, u64))> = self.by_type.iter().collect();
        rows.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        let mut out = String::from(
            "| type | events | bytes | bytes % | avg bytes |\n|---|---:|---:|---:|---:|\n",
        );
        for (ty, &(events, bytes)) in rows {
            out.push_str(&format!(
                "| {ty} | {events} | {bytes} | {:.2} | {:.0} |\n",
                self.percent(ty),
                bytes as f64 / events as f64
            ));
        }
        out.push_str(&format!(
            "{} bytes, {} events, {} runs: {:.0} events/MB, {:.2} runs/MB (MB = 10^6 bytes)\n",
            self.bytes,
            self.events,
            self.runs,
            self.events_per_mb(),
            self.runs_per_mb()
        ));
        out
    }
}

/// Writes the stream `args` describe.
pub(crate) fn generate(args: &Args) -> Result<Summary> {
    if args.size == 0 {
        bail!("--size must be positive");
    }
    let raw: Box<dyn Write> = if args.output == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(File::create(&args.output).with_context(|| format!("creating {}", args.output))?)
    };
    let raw = Counting {
        inner: raw,
        bytes: 0,
    };
    let sink = if args.gzip {
        Sink::Gzip(flate2::write::GzEncoder::new(
            raw,
            flate2::Compression::default(),
        ))
    } else if args.zstd {
        Sink::Zstd(zstd::Encoder::new(raw, 3)?)
    } else {
        Sink::Plain(raw)
    };
    let out = Emitter {
        out: BufWriter::with_capacity(1 << 20, sink),
        sse: args.format == Format::Sse,
        buf: Vec::with_capacity(1 << 16),
        bytes: 0,
        events: 0,
        by_type: BTreeMap::new(),
    };
    let mut rng = Rng(mix64(args.seed ^ 0xA6_1A_6E_45));
    let start = 1_767_225_600_000 + rng.below(86_400_000); // 2026-01-01, plus up to a day
    let salt = rng.next();
    let mut g = Gen {
        rng,
        ids: Ids { counter: 0, salt },
        now: start,
        out,
        runs: 0,
        snapshot_due: 0,
    };

    let mut threads: Vec<Thread> = (0..args.threads)
        .map(|_| match args.profile {
            Profile::Deltas => g.new_thread(),
            Profile::Mixed => g.new_mixed_thread(),
        })
        .collect();
    if args.sequential {
        let n = threads.len() as u64;
        for (i, thread) in threads.iter_mut().enumerate() {
            while g.out.bytes < args.size / n * (i as u64 + 1)
                || (i as u64 + 1 == n && g.out.bytes < args.size)
            {
                g.run_profile(args.profile, thread)
                    .context("writing the stream")?;
            }
        }
    } else {
        while g.out.bytes < args.size {
            let i = g.rng.below(threads.len() as u64) as usize;
            g.run_profile(args.profile, &mut threads[i])
                .context("writing the stream")?;
        }
    }
    let (bytes, events, runs) = (g.out.bytes, g.out.events, g.runs);
    let by_type = std::mem::take(&mut g.out.by_type);
    let written = g
        .out
        .out
        .into_inner()
        .map_err(|e| e.into_error())?
        .finish()?;
    Ok(Summary {
        bytes,
        events,
        runs,
        written,
        by_type,
    })
}
