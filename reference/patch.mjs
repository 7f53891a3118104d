// fast-json-patch 3.1.1 as the official client calls it for STATE_DELTA and ACTIVITY_DELTA:
// `applyPatch(doc, patch, true, false)` — validate, don't mutate; any throw rejects the patch.
// Imported exactly as @ag-ui/client's dist imports it (`import l from "fast-json-patch"`).
//   node reference/patch.mjs --cases < X.jsonl   one {"doc": ..., "patch": ...} object per line
// prints one line per input line:
//   {"ok": true, "doc": ...}   the patched document
//   {"ok": false, "error": "..."}   the patch was rejected (the document is unchanged)
//   {"skip": "..."}            accepted, but the result is not JSON agui-lens could hold
//                              (undefined, a function somewhere, a cycle)
import { readFileSync } from "node:fs";
import jsonpatch from "fast-json-patch";

/** Why a value is not plain JSON (what JSON.stringify would silently change), if it is not. */
function notJson(value, seen = new Set()) {
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
  if (typeof value === "number" && !Number.isFinite(value)) return "a non-finite number";
  if (value === null || typeof value !== "object") return undefined;
  if (seen.has(value)) return "a cycle";
  seen.add(value);
  const children = Array.isArray(value) ? value : Object.values(value);
  if (!Array.isArray(value)) {
    for (const key of Object.keys(value)) {
      const why = notJson(value[key], seen);
      if (why) return `${why} at key ${JSON.stringify(key)}`;
    }
  } else {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return "a hole in an array";
      const why = notJson(value[i], seen);
      if (why) return `${why} at index ${i}`;
    }
  }
  seen.delete(value);
  void children;
  return undefined;
}

export function applyReference(doc, patch) {
  let result;
  try {
    result = jsonpatch.applyPatch(doc, patch, true, false).newDocument;
  } catch (error) {
    return { ok: false, error: String(error?.name ?? "") + ": " + String(error?.message ?? error).split("\n")[0] };
  }
  const why = notJson(result);
  if (why) return { skip: `accepted, result holds ${why}` };
  return { ok: true, doc: result };
}

if (process.argv[2] === "--cases") {
  const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim());
  for (const line of lines) {
    const c = JSON.parse(line);
    process.stdout.write(JSON.stringify(applyReference(c.doc, c.patch)) + "\n");
  }
}
