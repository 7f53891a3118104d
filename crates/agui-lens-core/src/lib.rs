//! The library behind agui-lens: read AG-UI event streams, check them against the protocol,
//! fold them into what a client ends with, compact stored histories without changing that,
//! compare streams by meaning, and report what was found.
//!
//! The stages, in the order data moves:
//!
//! - [`read`]: bytes to located frames. JSONL, JSON arrays and Server-Sent Events, plain, gzip
//!   or zstd, told apart by content; read ahead on the pool while the stream is followed in
//!   order.
//! - [`check`]: frames to events ([`protocol::Event`]), each held to the JSON Schema of its
//!   type and to the protocol's rules in stream order; every finding a
//!   [`check::diagnostic::Diagnostic`] of a rule in the [`check::catalog`]. Each rule has a
//!   tier (MUST, SHOULD, capability, advice); [`check::capabilities`] reads what an agent
//!   declares, which decides whether its capability rules apply.
//! - [`report`]: diagnostics to the human format (plain, or painted by a front end) and the
//!   machine formats (JSON, JSONL, GitHub, JUnit, SARIF).
//!
//! Beside checking, reading the same events: [`fold`] (the messages and state a client ends
//! with), [`compact`] (a stored history rewritten smaller, verified to fold the same),
//! [`compare`] (two streams by meaning), [`write`](mod@write) (events written back out). [`protocol`]
//! is the model they all share: events, chunk expansion, JSON Patch. [`text`] shortens what
//! people read; [`stop`] is how a front end asks a long read to end.
//!
//! # Examples
//!
//! Check a capture and count its errors:
//!
//! ```
//! use agui_lens_core::check::engine::{Context, Engine};
//! use agui_lens_core::check::schema::SchemaSet;
//! use agui_lens_core::check::{catalog::Levels, diagnostic::Severity};
//! use agui_lens_core::read::{self, InputSpec, ReadOptions};
//!
//! let schemas = SchemaSet::embedded()?;
//! let levels = Levels::default();
//! let ctx = Context::new(&schemas, &levels);
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/valid/agui-sdk-full.jsonl");
//! let mut opened = read::open(&InputSpec::File(path.into()), &ReadOptions::default())?;
//! let mut engine = Engine::new(&ctx, opened.name.clone(), std::mem::take(&mut opened.head));
//! let mut found = Vec::new();
//! let failure = engine.check_reader(opened.reader.as_mut(), false, &mut found, &mut |_| Ok(()))?;
//! assert!(failure.is_none());
//! let stats = engine.finish(&mut found);
//! assert_eq!(stats.events, 33);
//! assert!(found.iter().all(|d| d.severity != Severity::Error));
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod check;
pub mod compact;
pub mod compare;
pub mod fold;
pub mod protocol;
pub mod read;
pub mod report;
pub mod stop;
pub mod text;
pub mod write;
