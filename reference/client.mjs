// The official @ag-ui/client HttpAgent as a client under test: runs an agent at URL and prints
// one line of JSON, what the client ends with ({"ok":true,"messages":[…],"state":…}) or how it
// failed ({"ok":false,"error":"…","messages":[…],"state":…}).
//
//   node client.mjs URL [OPTIONS_JSON]
//   node client.mjs - < RUNS_JSON        (an array of [URL, OPTIONS_JSON] pairs, a line each)
//
// OPTIONS_JSON (all optional): {"threadId": "t1", "proto": true (ask for protobuf framing),
// "turns": 2 (after each run, answer the frontend tool calls it left pending with a tool
// message and run again), "tools": [Tool…] (advertised), "messages": [Message…] (initial),
// "state": {…} (initial), "timeoutMs": 10000 (abort a run that takes longer)}.
import { HttpAgent } from "@ag-ui/client";

// Several runs in one process: `node client.mjs -` reads a JSON array of [URL, OPTIONS] pairs
// on stdin and prints one line per run, in order.
const [first, optionsText = "{}"] = process.argv.slice(2);

// Tool calls no tool message answers, in order.
function pending(messages) {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  return messages
    .flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []))
    .filter((call) => !answered.has(call.id));
}

async function runClient(url, options) {
  const agent = new HttpAgent({
    url,
    threadId: options.threadId,
    initialMessages: options.messages ?? [{ id: "user-1", role: "user", content: "hello" }],
    initialState: options.state ?? {},
    // Protobuf is asked for by the Accept header, which HttpAgent sets itself.
    fetch: options.proto
      ? (input, init) =>
          fetch(input, {
            ...init,
            headers: { ...init.headers, Accept: "application/vnd.ag-ui.event+proto" },
          })
      : undefined,
  });
  const turns = options.turns ?? 1;
  const out = { ok: true };
  try {
    for (let turn = 0; turn < turns; turn++) {
      if (turn > 0) {
        for (const call of pending(agent.messages)) {
          agent.messages.push({
            id: `result-${call.id}`,
            role: "tool",
            toolCallId: call.id,
            content: `ran ${call.function.name}`,
          });
        }
      }
      const abortController = new AbortController();
      const timer = setTimeout(() => abortController.abort(), options.timeoutMs ?? 20000);
      try {
        await agent.runAgent({ tools: options.tools ?? [], abortController });
      } finally {
        clearTimeout(timer);
      }
      if (abortController.signal.aborted) {
        throw new Error(`the run took longer than ${options.timeoutMs ?? 20000} ms`);
      }
    }
  } catch (err) {
    out.ok = false;
    out.error = String(err?.message ?? err);
  }
  out.messages = agent.messages;
  out.state = agent.state;
  return out;
}

const runs =
  first === "-"
    ? JSON.parse(await new Response(process.stdin).text())
    : [[first, JSON.parse(optionsText)]];
for (const [url, options] of runs) {
  process.stdout.write(`${JSON.stringify(await runClient(url, options))}\n`);
}
// Sockets the runtime keeps open are not waited for.
process.exit(0);
