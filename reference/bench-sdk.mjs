// Times the official TypeScript SDK (@ag-ui/core 1.0.0, @ag-ui/client 1.0.0) on a JSONL stream,
// for bench/run.sh to set beside agui-lens.
//
//   node reference/bench-sdk.mjs verify FILE
//     JSON.parse each line, EventSchemas.parse it (the zod validators from @ag-ui/core/schemas),
//     then run every event through the client's verifyEvents (an rxjs Observable over the array,
//     piped through verifyEvents(false)).
//   node reference/bench-sdk.mjs compact FILE [--out OUT]
//     JSON.parse each line, then compactEvents(events) from @ag-ui/client. With --out, the
//     compacted events are then written to OUT as JSONL (JSON.stringify per event, written in
//     8 MiB pieces, no fsync): the whole job `agui-lens compact FILE -o OUT` does.
//
// Prints one JSON line: {"mode", "bytes", "events", "seconds", "mb_per_s"} (MB = 10^6 bytes;
// seconds from the first byte read to the verdict, or to the output written with --out; module
// loading excluded). A schema or
// protocol error names the event on stderr and exits 1: the streams benchmarked are meant to be
// clean. The whole file is held in memory as objects, as the SDK's array APIs need; large files
// need a larger heap (node --max-old-space-size=8192 ...).
import { closeSync, existsSync, fstatSync, openSync, readSync, writeSync } from "node:fs";

if (!existsSync(new URL("./node_modules/@ag-ui/client/package.json", import.meta.url))) {
  console.error("bench-sdk: reference/node_modules is missing; run `npm ci` in reference/ first.");
  process.exit(2);
}

const [mode, file, ...rest] = process.argv.slice(2);
const out = rest[0] === "--out" && mode === "compact" ? rest[1] : undefined;
if (!["verify", "compact"].includes(mode) || !file || (rest.length > 0 && !out) || rest.length > 2) {
  console.error("usage: node reference/bench-sdk.mjs verify FILE.jsonl | compact FILE.jsonl [--out OUT]");
  process.exit(2);
}

const { EventSchemas } = await import("@ag-ui/core/schemas");
const { verifyEvents, compactEvents } = await import("@ag-ui/client");
const { from } = await import("rxjs");

/** The file's non-blank lines, as strings, read in large chunks (works past V8's string limit). */
function* lines(path) {
  const fd = openSync(path, "r");
  const chunk = Buffer.allocUnsafe(16 << 20);
  let carry = null;
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      let start = 0;
      let nl;
      while ((nl = chunk.indexOf(10, start)) !== -1 && nl < n) {
        let line = carry
          ? Buffer.concat([carry, chunk.subarray(start, nl)]).toString("utf8")
          : chunk.toString("utf8", start, nl);
        carry = null;
        start = nl + 1;
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line.trim() !== "") yield line;
      }
      if (start < n) {
        const rest = Buffer.from(chunk.subarray(start, n)); // copied: the chunk is reused
        carry = carry ? Buffer.concat([carry, rest]) : rest;
      }
    }
    if (carry && carry.toString("utf8").trim() !== "") yield carry.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Writes events as JSON lines, joined into pieces of about 8 MiB (one string per piece stays
 * far below V8's string limit at any input size). */
function writeJsonl(path, events) {
  const fd = openSync(path, "w");
  try {
    let piece = [];
    let length = 0;
    const flush = () => {
      writeSync(fd, piece.join(""));
      piece = [];
      length = 0;
    };
    for (const event of events) {
      const line = JSON.stringify(event) + "\n";
      piece.push(line);
      length += line.length;
      if (length >= 8 << 20) flush();
    }
    if (piece.length > 0) flush();
  } finally {
    closeSync(fd);
  }
}

function fail(index, event, message) {
  const type = event && typeof event === "object" ? event.type : undefined;
  console.error(`bench-sdk ${mode}: event #${index + 1} (line ${index + 1} if the file has no blank lines), ${type}: ${message}`);
  console.error(`  ${JSON.stringify(event).slice(0, 400)}`);
  process.exit(1);
}

const fd = openSync(file, "r");
const bytes = fstatSync(fd).size;
closeSync(fd);

const t0 = performance.now();
const events = [];
for (const line of lines(file)) {
  let value;
  try {
    value = JSON.parse(line);
  } catch (error) {
    fail(events.length, line.slice(0, 200), `not JSON: ${error.message}`);
  }
  if (mode === "verify") {
    const parsed = EventSchemas.safeParse(value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      fail(events.length, value, `EventSchemas.parse: ${issues}`);
    }
    value = parsed.data;
  }
  events.push(value);
}

if (mode === "verify") {
  let accepted = 0;
  await new Promise((resolve) => {
    from(events)
      .pipe(verifyEvents(false))
      .subscribe({
        next: () => accepted++,
        error: (error) => fail(accepted, events[accepted], `verifyEvents: ${error.message}`),
        complete: resolve,
      });
  });
  if (accepted !== events.length) fail(accepted, events[accepted], "verifyEvents stopped early");
} else {
  const compacted = compactEvents(events);
  console.error(`bench-sdk compact: ${events.length} events -> ${compacted.length}`);
  if (out) writeJsonl(out, compacted);
}
const seconds = (performance.now() - t0) / 1000;

console.log(
  JSON.stringify({
    mode,
    bytes,
    events: events.length,
    seconds: Number(seconds.toFixed(3)),
    mb_per_s: Number((bytes / 1e6 / seconds).toFixed(2)),
  }),
);
