//! The floors a JSONL checker is measured against.
//!
//!     cargo run --release --example floor -- --mode lines|value FILE
//!
//! `lines`: reads the file line by line through a BufReader, counting lines and bytes; no
//! parsing, no UTF-8 check. `value`: also parses each non-blank line with
//! `serde_json::from_str::<serde_json::Value>` (this crate's serde_json, so with the features
//! Cargo.toml turns on, `arbitrary_precision` today, exactly as agui-lens parses).
//! Prints one JSON line: {"mode", "bytes", "lines", "seconds", "mb_per_s"}, MB = 10^6 bytes.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use serde_json::Value;

#[derive(Debug, Parser)]
#[command(about = "Read or parse a JSONL file as fast as a plain loop can, for comparison")]
struct Args {
    /// `lines`: read and count lines; `value`: also parse each into a serde_json::Value.
    #[arg(long, value_enum)]
    mode: Mode,
    /// A JSONL file.
    file: PathBuf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    Lines,
    Value,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let file =
        File::open(&args.file).with_context(|| format!("opening {}", args.file.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let start = Instant::now();
    let (mut bytes, mut lines) = (0u64, 0u64);
    match args.mode {
        Mode::Lines => {
            let mut buf = Vec::with_capacity(1 << 16);
            loop {
                buf.clear();
                let n = reader.read_until(b'\n', &mut buf)?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
                lines += 1;
            }
        }
        Mode::Value => {
            let mut line = String::with_capacity(1 << 16);
            loop {
                line.clear();
                let n = reader.read_line(&mut line)?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
                lines += 1;
                if line.trim().is_empty() {
                    continue;
                }
                let value: Value = serde_json::from_str(&line)
                    .with_context(|| format!("line {lines} is not JSON"))?;
                std::hint::black_box(&value);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    if seconds <= 0.0 {
        bail!("the clock did not move");
    }
    let mode = match args.mode {
        Mode::Lines => "lines",
        Mode::Value => "value",
    };
    // Written by hand so the keys keep this order whatever serde_json's features are.
    println!(
        "{{\"mode\":\"{mode}\",\"bytes\":{bytes},\"lines\":{lines},\"seconds\":{seconds:.6},\"mb_per_s\":{:.2}}}",
        bytes as f64 / 1e6 / seconds
    );
    Ok(())
}
