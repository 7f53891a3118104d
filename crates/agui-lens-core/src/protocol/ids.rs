//! Sets and maps of ids kept by a 64-bit hash of the id: a stream-long memory of every run,
//! message and tool call id costs a few bytes per id however long the ids are. A collision
//! (about one in 10^11 for a million ids) could only hide a finding, never invent one.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The hash is already well mixed: use it as is.
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Builds [`PassThrough`]s, for sets of hashes.
pub type Build = BuildHasherDefault<PassThrough>;

/// A fast hasher for maps keyed by ids the input chose: multiply-rotate over 8-byte words.
/// Not resistant to collisions crafted on purpose, which costs a slow lookup, never a wrong one.
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        let h = self.0;
        (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
    }
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(n)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// Builds [`FastHasher`]s, for `HashMap<String, _, FastBuild>`.
pub type FastBuild = BuildHasherDefault<FastHasher>;

/// FNV-1a over the bytes, then a final avalanche so nearby ids spread over the table.
pub fn id_hash(id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in id.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[derive(Default)]
pub struct IdSet(HashSet<u64, Build>);

impl IdSet {
    /// Adds an id; `true` if it was not there.
    pub fn insert(&mut self, id: &str) -> bool {
        self.0.insert(id_hash(id))
    }

    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(&id_hash(id))
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// A map from ids to small values (a line number, a count).
pub struct IdMap<V>(HashMap<u64, V, Build>);

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap(HashMap::default())
    }
}

impl<V> IdMap<V> {
    pub fn insert(&mut self, id: &str, value: V) -> Option<V> {
        self.0.insert(id_hash(id), value)
    }

    pub fn get(&self, id: &str) -> Option<&V> {
        self.0.get(&id_hash(id))
    }

    pub fn remove(&mut self, id: &str) -> Option<V> {
        self.0.remove(&id_hash(id))
    }
}

/// The ids of the tool calls a message declares, given its `toolCalls` field (an assistant
/// message's list of calls): what a tool message's `toolCallId` may answer.
pub fn declared_call_ids(tool_calls: Option<&serde_json::Value>) -> impl Iterator<Item = &str> {
    tool_calls
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|call| call.get("id").and_then(serde_json::Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_maps() {
        let mut set = IdSet::default();
        assert!(set.insert("run-1"));
        assert!(!set.insert("run-1"));
        assert!(set.contains("run-1"));
        assert!(!set.contains("run-2"));
        let mut map = IdMap::default();
        map.insert("m1", 3u64);
        assert_eq!(map.get("m1"), Some(&3));
        assert_eq!(map.remove("m1"), Some(3));
        assert_eq!(map.get("m1"), None);
        assert_ne!(id_hash("a"), id_hash("b"));
    }
}
