// The official reducer on a JSONL stream: transformChunks, then defaultApplyEvents, from the
// input of the RUN_STARTED that opens the stream (as the client that sent that input would
// start). Without a state in that input the agent holds `{}`, as the official client's agent
// does from its construction (`initialState ?? {}`): a delta before any snapshot patches it.
// Prints {"messages": [...], "state": ...} — what agui-lens fold must equal; the state is null
// when the stream never set one.
//   node reference/fold.mjs FILE.jsonl          one file
//   node reference/fold.mjs --cases < X.jsonl   one {"events": [...]} object per line
import { readFileSync } from "node:fs";
import { from, lastValueFrom, toArray } from "rxjs";
import { transformChunks, defaultApplyEvents } from "@ag-ui/client";

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true";
console.warn = () => {};

async function fold(events) {
  const firstRun = events[0] && events[0].type === "RUN_STARTED" ? events[0] : undefined;
  const input = {
    threadId: firstRun?.threadId ?? "thread",
    runId: firstRun?.runId ?? "run",
    messages: [],
    tools: [],
    context: [],
    ...(firstRun?.input ?? {}),
  };
  if (firstRun?.input?.state === null) delete input.state;
  // The state a stream set or was given; the agent itself starts from `{}` and sends it.
  let state = input.state;
  input.state = input.state ?? {};
  const agent = { messages: [], state: input.state, pendingInterrupts: [] };
  let messages = [];
  try {
    const mutations = await lastValueFrom(
      defaultApplyEvents(input, from(events).pipe(transformChunks()), agent, []).pipe(toArray()),
    );
    for (const m of mutations) {
      if (m.messages !== undefined) messages = m.messages;
      if (m.state !== undefined) state = m.state;
    }
    return { messages, state: state === undefined ? null : state };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}

const args = process.argv.slice(2);
if (args[0] === "--cases") {
  const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim());
  for (const line of lines) {
    const c = JSON.parse(line);
    process.stdout.write(JSON.stringify(await fold(c.events)) + "\n");
  }
} else {
  const events = readFileSync(args[0], "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  process.stdout.write(JSON.stringify(await fold(events)) + "\n");
}
