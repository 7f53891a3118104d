//! The schema registry: the JSON Schemas in `schemas/<version>/` (embedded in the binary), a
//! user's overlay directory, and validators compiled once per event type. A set holds one
//! protocol version's schemas and reaches the others' ([`SchemaSet::for_version`]). No schema
//! can fetch anything: every `$ref` must resolve inside its set.

mod findings;
mod ops;
mod walk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, anyhow, bail};
use jsonschema::{Draft, Resource, Validator};
use rayon::prelude::*;
use serde_json::Value;

pub use findings::SchemaFinding;

use crate::protocol::event::EventType;
use crate::protocol::version::Version;

include!(concat!(env!("OUT_DIR"), "/embedded_schemas.rs"));

/// The base every schema's `$id` hangs from. `.invalid` can never resolve, by RFC 2606.
pub const BASE_URL: &str = "https://agui-lens.invalid/schemas/";

/// The two validators of one schema: strict (unknown fields rejected), which every event
/// passes through, and as published (unknown fields allowed), which tells unknown fields
/// apart from real violations once an event fails the strict one. Most streams never fail
/// it, so the published one is compiled on first use: compiling it took half of the ~12 ms
/// every command that validates spent on its schemas before reading a byte.
struct Compiled {
    root: String,
    strict: Validator,
    lax: OnceLock<Validator>,
}

/// All schemas, by path relative to the schema directory (`events/RUN_STARTED.json`).
pub struct SchemaSet {
    docs: BTreeMap<String, Value>,
    strict_docs: BTreeMap<String, Value>,
    /// The registry the strict schemas resolve in.
    strict_registry: jsonschema::Registry<'static>,
    /// The registry the published schemas resolve in, built with their first validator.
    lax_registry: OnceLock<jsonschema::Registry<'static>>,
    /// Each event type's validators (none without a schema), by [`EventType::index`]. The
    /// embedded ones are compiled on first use: a stream meets only some of the types, and
    /// compiling them all held up every command that validates by ~8 ms before it read a
    /// byte. A user's are compiled at load, so that one that does not compile is reported
    /// before any stream is read.
    events: Vec<OnceLock<Option<Compiled>>>,
    /// Schemas for CUSTOM events' `value`, by event `name` (`custom/<name>.json`).
    custom: BTreeMap<String, Compiled>,
    /// The validators of one JSON Patch operation, for the operations of a large patch,
    /// which are checked one at a time (see [`crate::protocol::event::Event::patch`]).
    patch_op: OnceLock<Option<Compiled>>,
    /// The variants of the events that carry a patch, checked in parts (see [`ops`]), by
    /// [`EventType::index`], compiled on first use; none for a user's schemas.
    parts: Vec<OnceLock<Option<Validator>>>,
    /// Only the embedded schemas, with no user directory laid over them.
    stock: bool,
    /// The version these are the schemas of.
    version: Version,
    /// The user's directory laid over every version's schemas, if any.
    overlay: Option<PathBuf>,
    /// Whether the overlay holds a folder of each version's own schemas, by
    /// [`Version::index`] (see [`SchemaSet::overlays_version`]).
    own_folders: Vec<bool>,
    /// The other versions' sets, by [`Version::index`]: loaded on first use from the embedded
    /// schemas, at load with a user's overlay (so that one that does not compile is reported
    /// before any stream is read).
    others: Vec<OnceLock<Box<SchemaSet>>>,
}

impl SchemaSet {
    /// The embedded schemas only.
    pub fn embedded() -> Result<SchemaSet> {
        SchemaSet::load(None)
    }

    /// The schemas a command validates with for the rest of the process: the embedded ones
    /// (one set, loaded on first use), or those with a user's directory laid over them. They
    /// are never freed: a set is thousands of small allocations, and freeing them one by one
    /// as the process ends took ~5 ms of every `check` and `compact` (the system frees them
    /// at once). Call it once per command, not per file.
    pub fn for_process(overlay: Option<&Path>) -> Result<&'static SchemaSet> {
        static STOCK: OnceLock<SchemaSet> = OnceLock::new();
        match overlay {
            Some(dir) => Ok(Box::leak(Box::new(SchemaSet::load(Some(dir))?))),
            None => match STOCK.get() {
                Some(set) => Ok(set),
                None => {
                    let set = SchemaSet::embedded()?;
                    Ok(STOCK.get_or_init(|| set))
                }
            },
        }
    }

    /// The embedded schemas of the newest version with a user's directory laid over them: a
    /// file at the same relative path replaces ours, other files are added
    /// (`custom/<name>.json` validates the `value` of CUSTOM events with that `name`). The
    /// directory is laid over every version's schemas alike, except its folders named after
    /// a version (`1.0/events/…`), each laid over that version's alone. A file that replaces
    /// no schema, is no `custom/` one and that no schema refers to is refused: a misspelt
    /// name would otherwise change nothing in silence.
    pub fn load(overlay: Option<&Path>) -> Result<SchemaSet> {
        if let Some(dir) = overlay {
            refuse_unused(dir)?;
        }
        let set = SchemaSet::load_version(Version::NEWEST, overlay)?;
        if overlay.is_some() {
            for &version in Version::ALL.iter().filter(|&&v| v != Version::NEWEST) {
                let other = SchemaSet::load_version(version, overlay)
                    .with_context(|| format!("the schemas of protocol {version}"))?;
                let _ = set.others[version.index()].set(Box::new(other));
            }
        }
        Ok(set)
    }

    /// The schemas of one protocol version, with a user's directory laid over them.
    pub fn load_version(version: Version, overlay: Option<&Path>) -> Result<SchemaSet> {
        // Compiling a schema first checks it against the draft 2020-12 meta-schema, whose
        // validator `jsonschema` builds on first use (~3 ms): started now on the pool, it is
        // ready when the first schema is compiled, instead of holding up the first batch.
        rayon::spawn(|| drop(jsonschema::draft202012::meta::validator()));
        let mut docs = BTreeMap::new();
        let prefix = format!("{}/", version.name());
        for (rel, text) in EMBEDDED {
            let Some(rel) = rel.strip_prefix(&prefix) else {
                continue;
            };
            let value: Value = serde_json::from_str(text)
                .with_context(|| format!("embedded schema {prefix}{rel} is not valid JSON"))?;
            docs.insert(rel.to_owned(), value);
        }
        if let Some(dir) = overlay {
            load_overlay(dir, dir, &mut docs)?;
            let own = dir.join(version.name());
            if own.is_dir() {
                load_overlay(&own, &own, &mut docs)?;
            }
        }
        for (rel, doc) in docs.iter_mut() {
            if let Value::Object(map) = doc {
                map.insert("$id".into(), Value::String(url_of(rel)));
            } else {
                bail!("schema {rel} is not a JSON object");
            }
        }
        let mut strict_docs: BTreeMap<String, Value> = docs
            .iter()
            .map(|(rel, doc)| {
                let mut strict = doc.clone();
                walk::make_strict(&mut strict);
                (rel.clone(), strict)
            })
            .collect();
        if overlay.is_none() {
            ops::derive(&mut strict_docs, url_of);
        }
        let strict_registry = registry(&strict_docs)?;
        let mut set = SchemaSet {
            docs,
            strict_docs,
            strict_registry,
            lax_registry: OnceLock::new(),
            events: EventType::ALL.iter().map(|_| OnceLock::new()).collect(),
            custom: BTreeMap::new(),
            patch_op: OnceLock::new(),
            parts: EventType::ALL.iter().map(|_| OnceLock::new()).collect(),
            stock: overlay.is_none(),
            version,
            overlay: overlay.map(Path::to_path_buf),
            own_folders: Version::ALL
                .iter()
                .map(|v| overlay.is_some_and(|dir| dir.join(v.name()).is_dir()))
                .collect(),
            others: Version::ALL.iter().map(|_| OnceLock::new()).collect(),
        };
        set.compile()?;
        Ok(set)
    }

    /// Compiles the schemas for CUSTOM events' values, and a user's schemas (an overlay) in
    /// full, strict and published, on the pool, so that one that does not compile is reported
    /// before any stream is read; the embedded ones all compile (a test holds them to it).
    fn compile(&mut self) -> Result<()> {
        let mut custom = BTreeMap::new();
        for rel in self.docs.keys() {
            if let Some(name) = rel
                .strip_prefix("custom/")
                .and_then(|r| r.strip_suffix(".json"))
            {
                custom.insert(name.to_owned(), self.build(rel)?);
            }
        }
        self.custom = custom;
        if !self.stock {
            let events = EventType::ALL
                .par_iter()
                .map(|ty| self.build_event(*ty))
                .collect::<Result<Vec<_>>>()?;
            for (slot, compiled) in self.events.iter().zip(events) {
                let _ = slot.set(compiled);
            }
            for compiled in self.events.iter().flat_map(|c| c.get()).flatten() {
                self.try_lax(compiled)?;
            }
            for compiled in self.custom.values() {
                self.try_lax(compiled)?;
            }
        }
        Ok(())
    }

    /// The strict validator of one schema.
    fn build(&self, rel: &str) -> Result<Compiled> {
        let strict = build_validator(&self.strict_registry, &self.strict_docs[rel])
            .with_context(|| format!("compiling schema {rel} (strict)"))?;
        Ok(Compiled {
            root: rel.to_owned(),
            strict,
            lax: OnceLock::new(),
        })
    }

    fn build_event(&self, ty: EventType) -> Result<Option<Compiled>> {
        let rel = event_schema_path(ty);
        self.docs
            .contains_key(&rel)
            .then(|| self.build(&rel))
            .transpose()
    }

    /// An event type's validators, compiled on first use.
    fn event(&self, ty: EventType) -> Option<&Compiled> {
        self.events[ty.index()]
            .get_or_init(|| {
                // A user's schemas were all compiled at load, so this is an embedded one.
                self.build_event(ty)
                    .expect("the embedded schemas compile (a test holds them to it)")
            })
            .as_ref()
    }

    /// The published validator of a schema, compiled on first use.
    fn try_lax<'a>(&self, compiled: &'a Compiled) -> Result<&'a Validator> {
        if let Some(validator) = compiled.lax.get() {
            return Ok(validator);
        }
        let registry = match self.lax_registry.get() {
            Some(registry) => registry,
            None => {
                let built = registry(&self.docs)?;
                self.lax_registry.get_or_init(|| built)
            }
        };
        let validator = build_validator(registry, &self.docs[&compiled.root])
            .with_context(|| format!("compiling schema {}", compiled.root))?;
        Ok(compiled.lax.get_or_init(|| validator))
    }

    /// The protocol version these are the schemas of.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The schemas of another protocol version (this set, for its own).
    pub fn for_version(&self, version: Version) -> &SchemaSet {
        if version == self.version {
            return self;
        }
        self.others[version.index()].get_or_init(|| {
            // An overlay's sets were all loaded with this one; these are the embedded ones.
            Box::new(
                SchemaSet::load_version(version, self.overlay.as_deref()).expect(
                    "the embedded schemas of every version compile (a test holds them to it)",
                ),
            )
        })
    }

    /// Whether these are the embedded schemas alone, whose verdict on the plainest events is
    /// known without running them.
    pub fn is_stock(&self) -> bool {
        self.stock
    }

    /// Whether the overlay holds a folder of `version`'s own schemas (`1.0/`): then an event
    /// of a run of that version that these schemas pass may still fail that version's, which
    /// the embedded schemas of an older version never make stricter.
    pub fn overlays_version(&self, version: Version) -> bool {
        self.own_folders[version.index()]
    }

    /// Every schema file, by relative path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.docs.iter().map(|(rel, doc)| (rel.as_str(), doc))
    }

    /// A schema by event type name (`RUN_STARTED`), definition name (`Message`), CUSTOM name
    /// (`custom/progress`) or relative path.
    pub fn find(&self, name: &str) -> Option<(&str, &Value)> {
        let candidates = [
            name.to_owned(),
            format!("{name}.json"),
            format!("events/{name}.json"),
            format!("defs/{name}.json"),
            format!("events/{}.json", name.to_ascii_uppercase()),
        ];
        candidates
            .iter()
            .find_map(|rel| self.docs.get_key_value(rel.as_str()))
            .map(|(rel, doc)| (rel.as_str(), doc))
    }

    /// Validates an event of a known type. Empty when it conforms.
    pub fn validate_event(&self, ty: EventType, event: &Value) -> Vec<SchemaFinding> {
        let Some(compiled) = self.event(ty) else {
            return Vec::new();
        };
        if self.conforms_in_parts(ty, event) == Some(true) {
            return Vec::new();
        }
        self.validate(compiled, event, "")
    }

    /// Whether an event that carries a patch conforms, its operations checked by shape (see
    /// [`ops`]); None for the other events, and with a user's schemas.
    fn conforms_in_parts(&self, ty: EventType, event: &Value) -> Option<bool> {
        let (rel, field) = ops::variant_of(ty)?;
        if !self.by_shape() {
            return None;
        }
        let variant = self.parts[ty.index()]
            .get_or_init(|| {
                self.strict_docs.get(rel).map(|doc| {
                    build_validator(&self.strict_registry, doc)
                        .expect("the embedded schemas compile (a test holds them to it)")
                })
            })
            .as_ref()?;
        let op = &self.patch_op()?.strict;
        let version = self.version.index();
        Some(
            variant.is_valid(event)
                && match event.get(field) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .all(|item| ops::op_conforms(version, item, |shape| op.is_valid(shape))),
                    _ => true,
                },
        )
    }

    /// Whether the operations of a patch are checked by shape: with the embedded schemas,
    /// which hold no operation's value to anything (see [`ops`]).
    fn by_shape(&self) -> bool {
        self.stock && self.strict_docs.contains_key(ops::PATCH_PARTS)
    }

    /// The validators of one JSON Patch operation.
    fn patch_op(&self) -> Option<&Compiled> {
        self.patch_op
            .get_or_init(|| {
                self.docs.contains_key(ops::OPERATION).then(|| {
                    self.build(ops::OPERATION)
                        .expect("the patch operation schema compiles (a test holds them to it)")
                })
            })
            .as_ref()
    }

    /// Validates one operation of a JSON Patch, found at `pointer` in its event.
    pub fn validate_patch_op(&self, op: &Value, pointer: &str) -> Vec<SchemaFinding> {
        let Some(compiled) = self.patch_op() else {
            return Vec::new();
        };
        let version = self.version.index();
        if self.by_shape() && ops::op_conforms(version, op, |shape| compiled.strict.is_valid(shape))
        {
            return Vec::new();
        }
        self.validate(compiled, op, pointer)
    }

    /// Validates a CUSTOM event's `value` against the user's schema for its `name`, if any.
    pub fn validate_custom(&self, name: &str, value: &Value) -> Option<Vec<SchemaFinding>> {
        let compiled = self.custom.get(name)?;
        Some(self.validate(compiled, value, "/value"))
    }

    /// Validates a RunAgentInput, the body a client POSTs (`defs/RunAgentInput.json`). Empty
    /// when it conforms, or when no such schema is loaded.
    pub fn validate_input(&self, input: &Value) -> Result<Vec<SchemaFinding>> {
        if !self.docs.contains_key(RUN_AGENT_INPUT) {
            return Ok(Vec::new());
        }
        let compiled = self.build(RUN_AGENT_INPUT)?;
        Ok(self.validate(&compiled, input, ""))
    }

    /// Whether a user schema exists for CUSTOM events of this name.
    pub fn has_custom(&self, name: &str) -> bool {
        self.custom.contains_key(name)
    }

    fn validate(&self, compiled: &Compiled, instance: &Value, prefix: &str) -> Vec<SchemaFinding> {
        if compiled.strict.is_valid(instance) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let lax = self
            .try_lax(compiled)
            .expect("the embedded schemas all compile (tested); a user's were compiled at load");
        for error in lax.iter_errors(instance) {
            out.push(findings::classify(
                self,
                &compiled.root,
                instance,
                &error,
                prefix,
            ));
        }
        for error in compiled.strict.iter_errors(instance) {
            findings::unknown_fields(self, &compiled.root, &error, prefix, &mut out);
        }
        out.sort();
        out.dedup();
        out
    }

    pub(crate) fn doc(&self, rel: &str) -> Option<&Value> {
        self.docs.get(rel)
    }
}

/// The schema of the body a client POSTs.
const RUN_AGENT_INPUT: &str = "defs/RunAgentInput.json";

/// `events/RUN_STARTED.json` for RUN_STARTED.
pub fn event_schema_path(ty: EventType) -> String {
    format!("events/{}.json", ty.as_str())
}

pub fn url_of(rel: &str) -> String {
    format!("{BASE_URL}{rel}")
}

/// Whether `path`, a folder of an overlay at `root`, holds one version's schemas (`1.0/`).
fn is_version_folder(root: &Path, path: &Path) -> bool {
    path.parent() == Some(root)
        && path
            .file_name()
            .is_some_and(|name| Version::ALL.iter().any(|v| name == v.name()))
}

/// Lays the schemas under `dir` over `docs`, named by their path from `root`; the folders of
/// a version directly under `root` are left to [`SchemaSet::load_version`].
fn load_overlay(root: &Path, dir: &Path, docs: &mut BTreeMap<String, Value>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading {}", dir.display()))?;
    paths.sort();
    for path in paths {
        if path.is_dir() {
            if !is_version_folder(root, &path) {
                load_overlay(root, &path, docs)?;
            }
        } else if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let value: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not valid JSON", path.display()))?;
            let rel = path
                .strip_prefix(root)
                .map_err(|_| anyhow!("{} is outside {}", path.display(), root.display()))?
                .to_string_lossy()
                .replace('\\', "/");
            docs.insert(rel, value);
        }
    }
    Ok(())
}

/// Refuses an overlay that holds a schema file that would change nothing: one at a path no
/// version's schemas have, not under `custom/`, and that no schema (ours or the overlay's)
/// refers to with a `$ref`. In a version's folder, the paths of that version count.
fn refuse_unused(dir: &Path) -> Result<()> {
    // (version folder or none, path in it, the schema) of every file of the overlay.
    let mut files: Vec<(Option<Version>, String, Value)> = Vec::new();
    let mut docs = BTreeMap::new();
    load_overlay(dir, dir, &mut docs)?;
    files.extend(docs.into_iter().map(|(rel, doc)| (None, rel, doc)));
    for &version in Version::ALL {
        let own = dir.join(version.name());
        if own.is_dir() {
            let mut docs = BTreeMap::new();
            load_overlay(&own, &own, &mut docs)?;
            files.extend(docs.into_iter().map(|(rel, doc)| (Some(version), rel, doc)));
        }
    }
    let embedded = |version: Option<Version>, rel: &str| {
        EMBEDDED.iter().any(|(path, _)| {
            path.split_once('/')
                .is_some_and(|(of, path)| path == rel && version.is_none_or(|v| v.name() == of))
        })
    };
    // Every `$ref` of every schema, resolved against the schema's own path.
    let mut referred: Vec<String> = Vec::new();
    let embedded_docs = EMBEDDED.iter().filter_map(|(path, text)| {
        let (_, rel) = path.split_once('/')?;
        Some((rel.to_owned(), serde_json::from_str::<Value>(text).ok()?))
    });
    let overlay_docs = files.iter().map(|(_, rel, doc)| (rel.clone(), doc.clone()));
    for (rel, doc) in embedded_docs.chain(overlay_docs) {
        walk::for_each_ref(&doc, &mut |target| {
            let file = target.split('#').next().unwrap_or_default();
            if !file.is_empty() {
                referred.push(walk::join(&rel, file));
            }
        });
    }
    let unused: Vec<String> = files
        .iter()
        .filter(|(version, rel, _)| {
            !rel.starts_with("custom/") && !embedded(*version, rel) && !referred.contains(rel)
        })
        .map(|(version, rel, _)| match version {
            Some(version) => format!("{}/{rel}", version.name()),
            None => rel.clone(),
        })
        .collect();
    if !unused.is_empty() {
        bail!(
            "the schema overlay {} holds {} that no schema has and none refers to, so {} \
             nothing: {} (an event's schema is events/TYPE.json, a shared part's \
             defs/NAME.json, a CUSTOM event's value custom/NAME.json; a folder named after a \
             version, such as 1.0/, holds that version's alone; `agui-lens schema list` names \
             them)",
            dir.display(),
            match unused.len() {
                1 => "a file",
                _ => "files",
            },
            match unused.len() {
                1 => "it would change",
                _ => "they would change",
            },
            unused.join(", ")
        );
    }
    Ok(())
}

fn registry(docs: &BTreeMap<String, Value>) -> Result<jsonschema::Registry<'static>> {
    let resources = docs
        .iter()
        .map(|(rel, doc)| (url_of(rel), Resource::from_contents(doc.clone())));
    jsonschema::Registry::new()
        .draft(Draft::Draft202012)
        .extend(resources)
        .and_then(|builder| builder.prepare())
        .map_err(|e| anyhow!("the schema set does not resolve: {e}"))
}

fn build_validator(registry: &jsonschema::Registry<'static>, doc: &Value) -> Result<Validator> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .with_registry(registry)
        .build(doc)
        .map_err(|e| anyhow!("{e}"))
}

/// Compiles a schema that arrived in the data (a tool's `parameters`), with the same
/// no-network rule: a `$ref` that points outside the schema itself fails to compile.
pub fn compile_inline(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .offline()
        .build(schema)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_type_has_a_schema_and_all_compile() {
        let set = SchemaSet::embedded().expect("embedded schemas compile");
        // The embedded ones are compiled on first use.
        assert!(set.events.iter().all(|c| c.get().is_none()));
        for ty in EventType::ALL {
            let compiled = set.event(*ty);
            let compiled = compiled.unwrap_or_else(|| panic!("no schema for {}", ty.as_str()));
            // The published form is compiled on first use; it must compile too.
            assert!(compiled.lax.get().is_none());
            set.try_lax(compiled)
                .unwrap_or_else(|e| panic!("{}: {e:#}", ty.as_str()));
        }
    }

    /// Events that carry a patch, with operations of every kind and values of every kind, and
    /// each spoilt one way: in an operation, around the operations, or where they are.
    fn patch_cases() -> Vec<(EventType, Value)> {
        use serde_json::json;
        let ops = json!([
            {"op": "add", "path": "/items/-", "value": {"id": 1, "tags": ["a"]}},
            {"op": "replace", "path": "/count", "value": 3},
            {"op": "test", "path": "/name", "value": "x"},
            {"op": "test", "path": "/gone", "value": null},
            {"op": "remove", "path": "/old"},
            {"op": "move", "from": "/a", "path": "/b"},
            {"op": "copy", "from": "/b", "path": "/c~1d"},
            {"op": "add", "path": "", "value": [1, "two", {"three": 3}]},
            {"op": "replace", "path": "/x", "value": false, "note": "extra members are ignored"}
        ]);
        let state = json!({"type": "STATE_DELTA", "delta": ops});
        let activity = json!({"type": "ACTIVITY_DELTA", "messageId": "m1",
                              "activityType": "PLAN", "patch": ops});
        let mut cases = vec![
            (EventType::StateDelta, state.clone()),
            (EventType::ActivityDelta, activity.clone()),
            (
                EventType::StateDelta,
                json!({"type": "STATE_DELTA", "delta": []}),
            ),
        ];
        let spoil_op: [fn(&mut Value); 9] = [
            |o| o["op"] = json!("append"),
            |o| drop(o.as_object_mut().unwrap().remove("op")),
            |o| drop(o.as_object_mut().unwrap().remove("path")),
            |o| o["path"] = json!("items/0"),
            |o| o["path"] = json!("/a~2b"),
            |o| o["path"] = json!(3),
            |o| drop(o.as_object_mut().unwrap().remove("value")),
            |o| drop(o.as_object_mut().unwrap().remove("from")),
            |o| *o = json!("replace /count 3"),
        ];
        for spoil in spoil_op {
            for at in [0, 1, 2, 4, 5, 8] {
                for (ty, event, field) in [
                    (EventType::StateDelta, &state, "delta"),
                    (EventType::ActivityDelta, &activity, "patch"),
                ] {
                    let mut event = event.clone();
                    spoil(&mut event[field][at]);
                    cases.push((ty, event));
                }
            }
        }
        let spoil_event: [fn(&mut Value, &str); 6] = [
            |e, _| e["colour"] = json!("red"),
            |e, _| e["timestamp"] = json!(1.5),
            |e, f| e[f] = json!({"op": "add", "path": "/a", "value": 1}),
            |e, f| e[f] = json!([["add", "/a", 1]]),
            |e, f| drop(e.as_object_mut().unwrap().remove(f)),
            |e, f| e[f] = Value::Null,
        ];
        for spoil in spoil_event {
            let mut event = state.clone();
            spoil(&mut event, "delta");
            cases.push((EventType::StateDelta, event));
            let mut event = activity.clone();
            spoil(&mut event, "patch");
            cases.push((EventType::ActivityDelta, event));
        }
        cases
    }

    #[test]
    fn patches_checked_by_shape_get_the_verdict_of_the_whole_schema() {
        for &version in Version::ALL {
            let set = SchemaSet::load_version(version, None).unwrap();
            if version != Version::Pre1 {
                assert!(set.by_shape(), "{version}: operations are checked by shape");
            }
            let (mut valid, mut invalid, mut in_parts) = (0, 0, 0);
            // Twice: the second time the conforming shapes are remembered.
            for _ in 0..2 {
                for (ty, event) in patch_cases() {
                    let compiled = set.event(ty).unwrap();
                    let whole = compiled.strict.is_valid(&event);
                    if let Some(parts) = set.conforms_in_parts(ty, &event) {
                        assert_eq!(parts, whole, "{version} {ty}: {event}");
                        in_parts += 1;
                    }
                    if whole {
                        valid += 1
                    } else {
                        invalid += 1
                    }
                    // What is reported is the whole schema's findings, as before.
                    assert_eq!(
                        set.validate_event(ty, &event),
                        set.validate(compiled, &event, ""),
                        "{version} {ty}: {event}"
                    );
                    // The operations of a large patch, checked one at a time, alike.
                    let field = if ty == EventType::StateDelta {
                        "delta"
                    } else {
                        "patch"
                    };
                    let op = set.patch_op().unwrap();
                    for item in event[field].as_array().into_iter().flatten() {
                        assert_eq!(
                            set.validate_patch_op(item, "/x/0"),
                            set.validate(op, item, "/x/0"),
                            "{version}: {item}"
                        );
                    }
                }
            }
            if set.by_shape() {
                assert_eq!(in_parts, valid + invalid, "{version}");
            }
            assert!(
                valid >= 6 && invalid >= 100,
                "{version}: {valid} valid, {invalid} not"
            );
        }
        // A user's schemas are checked whole.
        let dir = tempfile::tempdir().unwrap();
        let set = SchemaSet::load(Some(dir.path())).unwrap();
        assert!(!set.by_shape());
        let (ty, event) = patch_cases().remove(0);
        assert_eq!(set.conforms_in_parts(ty, &event), None);
    }

    #[test]
    fn a_user_schema_that_does_not_compile_is_refused_at_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("custom")).unwrap();
        std::fs::write(
            dir.path().join("custom/bad.json"),
            r#"{"type": "nonsense"}"#,
        )
        .unwrap();
        let err = SchemaSet::load(Some(dir.path())).err().expect("refused");
        assert!(format!("{err:#}").contains("custom/bad.json"), "{err:#}");
        // With the overlay's schemas compiling, every published validator exists at once.
        std::fs::write(dir.path().join("custom/bad.json"), r#"{"type": "object"}"#).unwrap();
        let set = SchemaSet::load(Some(dir.path())).unwrap();
        // ... and every strict one, compiled at load rather than on first use.
        assert!(
            set.events.iter().all(|c| c.get().is_some()),
            "compiled at load"
        );
        let compiled: Vec<&Compiled> = set
            .events
            .iter()
            .filter_map(|c| c.get()?.as_ref())
            .collect();
        assert!(!compiled.is_empty());
        assert!(compiled.iter().all(|c| c.lax.get().is_some()));
        assert!(set.custom["bad"].lax.get().is_some());
    }

    #[test]
    fn a_process_loads_the_embedded_set_once_and_each_overlay_anew() {
        let stock = SchemaSet::for_process(None).unwrap();
        assert!(stock.is_stock());
        assert!(std::ptr::eq(stock, SchemaSet::for_process(None).unwrap()));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("custom")).unwrap();
        std::fs::write(dir.path().join("custom/x.json"), r#"{"type": "string"}"#).unwrap();
        let overlaid = SchemaSet::for_process(Some(dir.path())).unwrap();
        assert!(!overlaid.is_stock());
        assert!(overlaid.custom.contains_key("x"));
        assert!(!std::ptr::eq(overlaid, stock));
    }

    #[test]
    fn refs_never_leave_the_set() {
        let set = SchemaSet::embedded().unwrap();
        for (rel, doc) in set.files() {
            walk::for_each_ref(doc, &mut |r| {
                assert!(
                    !r.contains("://"),
                    "{rel}: $ref {r} is absolute; refs must be relative within schemas/"
                );
            });
        }
    }

    #[test]
    fn inline_schemas_cannot_fetch() {
        let err = compile_inline(&serde_json::json!({"$ref": "https://example.com/x.json"}));
        assert!(err.is_err());
        let err = compile_inline(&serde_json::json!({"$ref": "file:///etc/passwd"}));
        assert!(err.is_err());
    }
}
