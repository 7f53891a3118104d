// The size of what the official compactEvents (@ag-ui/client 1.0.0) makes of each stream, for
// tests/compaction.rs to hold agui-lens's compaction to: no larger, on every recording.
//
//   node reference/compact-sizes.mjs fixtures/recordings/*.jsonl > fixtures/recordings/official-compact-sizes.tsv
//
// Prints `file<TAB>bytes` per input: the compacted events as JSONL, one JSON.stringify per line.
import { readFileSync } from "node:fs";
import { basename } from "node:path";

const { compactEvents } = await import("@ag-ui/client");

console.log("# file\tbytes of compactEvents(events) as JSONL (@ag-ui/client 1.0.0)");
for (const file of process.argv.slice(2)) {
  const events = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
  const bytes = compactEvents(events)
    .map((event) => Buffer.byteLength(JSON.stringify(event)) + 1)
    .reduce((a, b) => a + b, 0);
  console.log(`${basename(file)}\t${bytes}`);
}
