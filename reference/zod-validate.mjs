// Validates AG-UI events with the published @ag-ui/core 1.0.0 zod schemas
// (EventSchemas from "@ag-ui/core/schemas", safeParse).
//
//   node zod-validate.mjs < events.jsonl
//     one line out per line in: {"valid": bool, "issues": [{code, path, message}]}
//     (a line holding a test case, {"name", "event", ...}, is judged by its event)
//   node zod-validate.mjs --stamp < cases.jsonl > cases.new.jsonl
//     copies each test case line, replacing its "zod_valid" value with zod's
//     verdict; the rest of the line is kept byte for byte (re-serialising
//     would round integers beyond 2^53, which some cases are about)
//
// THINKING_* events are not in the 1.0 union, so zod rejects them; that is expected.
import { createInterface } from "node:readline";
import { EventSchemas } from "@ag-ui/core/schemas";

const stamp = process.argv.includes("--stamp");

function judge(event) {
  const result = EventSchemas.safeParse(event);
  if (result.success) return { valid: true, issues: [] };
  const issues = result.error.issues.map(({ code, path, message }) => ({ code, path, message }));
  return { valid: false, issues };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === "") continue;
  let value;
  try {
    value = JSON.parse(line);
  } catch (error) {
    if (stamp) throw new Error(`not JSON: ${line.slice(0, 80)}`);
    console.log(JSON.stringify({ valid: false, issues: [{ code: "invalid_json", path: [], message: error.message }] }));
    continue;
  }
  const isCase = value !== null && typeof value === "object" && "name" in value && "event" in value;
  const verdict = judge(isCase ? value.event : value);
  if (stamp) {
    if (!isCase) throw new Error(`not a test case: ${line.slice(0, 80)}`);
    // The case's own field is the last one of that name on the line.
    const last = [...line.matchAll(/"zod_valid":\s*(true|false|null)/g)].pop();
    if (!last) throw new Error(`no "zod_valid" field: ${line.slice(0, 80)}`);
    const end = last.index + last[0].length;
    console.log(`${line.slice(0, last.index)}"zod_valid": ${verdict.valid}${line.slice(end)}`);
  } else {
    console.log(JSON.stringify(verdict));
  }
}
