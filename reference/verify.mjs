// Judges whole AG-UI event streams the way the published @ag-ui/client 1.0.0 does. Event by
// event, in stream order (the client's pipeline is per event, so an early protocol error
// wins over a later malformed event):
//
//   1. the event through the zod `EventSchemas.safeParse` (from "@ag-ui/core/schemas"); if it
//      fails: {ok: false, stage: "schema", index, message}. (The client's own enforceEvents
//      would DROP an event of an unknown type with a warning; zod, and agui-lens, reject it.)
//   2. else the event is pushed into an rxjs Subject piped through `enforceEvents()`,
//      `transformChunks()` and `verifyEvents()`, the order agent.ts runs them in
//      (enforceEvents strips properties an event's schema does not describe, so e.g. a
//      `subagentRunId: null` on RUN_STARTED never reaches verifyEvents); if one throws:
//      {ok: false, stage: "enforce" | "chunks" | "verify", index, message}, where `index` is
//      the INPUT event being pushed when it threw (transformChunks synthesises END events
//      when a lane closes, so an error can surface while a later event is pushed);
//   3. else {ok: true}. A stream that ends mid-run is fine (verifyEvents accepts it).
//
//   node verify.mjs FILE.jsonl...
//     one line out per file: {"file": ..., "verdict": {...}}
//   node verify.mjs < cases.jsonl
//     each input line is a case {"name", "events": [...], ...}; it is written back with its
//     "verdict" set (the other fields kept, re-serialised with JSON.stringify)
//
// `judge(events)` is exported for the corpus generator (make-verify-cases.mjs).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { Subject, throwError } from "rxjs";
import { catchError } from "rxjs/operators";
import { EventSchemas } from "@ag-ui/core/schemas";
import { enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";

// enforceEvents and transformChunks warn on the console about what they strip or carry along.
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true";

const STAGE = Symbol("the pipeline stage that threw");

function schemaMessage(error) {
  const issue = error.issues[0];
  if (!issue) return String(error.message);
  const path = issue.path.length ? ` at ${issue.path.join(".")}` : "";
  return `${issue.message}${path}`;
}

/** The verdict for one stream (an array of parsed JSON values). */
export function judge(events) {
  const subject = new Subject();
  let failure;
  let current = -1;
  const tagStage = (stage) =>
    catchError((error) => {
      // Tag what this stage threw; the later stages pass errors through untouched.
      const tagged = error instanceof Error ? error : new Error(String(error));
      if (tagged[STAGE] === undefined) tagged[STAGE] = stage;
      return throwError(() => tagged);
    });
  subject
    .pipe(
      enforceEvents(),
      tagStage("enforce"),
      transformChunks(),
      tagStage("chunks"),
      verifyEvents(),
      tagStage("verify"),
    )
    .subscribe({
      next: () => {},
      error: (error) => {
        failure = {
          ok: false,
          stage: error[STAGE] ?? "verify",
          index: current,
          message: error instanceof Error ? error.message : String(error),
        };
      },
    });
  for (let index = 0; index < events.length && failure === undefined; index++) {
    current = index;
    const result = EventSchemas.safeParse(events[index]);
    if (!result.success) {
      failure = { ok: false, stage: "schema", index, message: schemaMessage(result.error) };
      break;
    }
    subject.next(events[index]);
  }
  if (failure === undefined) subject.complete();
  return failure ?? { ok: true };
}

function parseJsonl(text) {
  const events = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    events.push(JSON.parse(line));
  }
  return events;
}

async function main() {
  const files = process.argv.slice(2);
  if (files.length > 0) {
    for (const file of files) {
      let verdict;
      try {
        verdict = judge(parseJsonl(readFileSync(file, "utf8")));
      } catch (error) {
        verdict = { ok: false, stage: "json", message: error.message };
      }
      console.log(JSON.stringify({ file, verdict }));
    }
    return;
  }
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === "") continue;
    const value = JSON.parse(line);
    if (!value || !Array.isArray(value.events)) throw new Error(`not a case: ${line.slice(0, 80)}`);
    value.verdict = judge(value.events);
    console.log(JSON.stringify(value));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
