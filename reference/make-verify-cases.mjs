// Derives fixtures/verify-cases/cases.jsonl: AG-UI event streams, each with the verdict of the
// official @ag-ui/client 1.0.0 pipeline (zod schemas, enforceEvents, transformChunks,
// verifyEvents) as given by verify.mjs's `judge`. Deterministic: the same inputs and seed give
// the same file.
//
//   node make-verify-cases.mjs [--seed N] [--recordings DIR] [--out FILE] [--scale K]
//
// Starting points are valid streams: the recordings (DIR/*.jsonl, not *-invalid.jsonl) and
// the small hand-made streams below, which cover every event family. Each is kept as is and
// mutated: events dropped, duplicated, swapped, moved; ids and subagentRunId tags changed,
// added or removed; stray continuations inserted; RUN_STARTED mid-run; events after the run
// ended; first chunks without their id; chunk fields contradicting their opener; schema
// breakers (a required field removed, a wrong type, null for an optional field). Then edge
// streams (EDGE: chunk lanes, "" ids and owners, replayed owners), judged as they are and
// mutated a little, and short random walks over tiny id pools. Streams are deduplicated;
// verdicts are never written by hand.
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { judge } from "./verify.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const SEED = Number(option("--seed", "20250101"));
const RECORDINGS = resolve(option("--recordings", join(here, "../../shared/recordings")));
// Exploration: --scale 20 draws twenty times as many mutants and walks (into --out elsewhere).
const SCALE = Number(option("--scale", "1"));
const OUT = resolve(option("--out", join(here, "../fixtures/verify-cases/cases.jsonl")));

// ---------------------------------------------------------------- deterministic randomness
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];
const clone = (x) => JSON.parse(JSON.stringify(x));

// ---------------------------------------------------------------- hand-made valid streams
const RS = (runId = "r1", extra = {}) => ({ type: "RUN_STARTED", threadId: "t1", runId, ...extra });
const RF = (runId = "r1", extra = {}) => ({ type: "RUN_FINISHED", threadId: "t1", runId, ...extra });
const RE = (extra = {}) => ({ type: "RUN_ERROR", message: "boom", ...extra });
const tag = (s) => (s === undefined ? {} : { subagentRunId: s });
const TMS = (id, s, extra = {}) => ({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant", ...tag(s), ...extra });
const TMC = (id, delta, s) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta, ...tag(s) });
const TME = (id, s) => ({ type: "TEXT_MESSAGE_END", messageId: id, ...tag(s) });
const TCS = (id, name, parent, s) => ({
  type: "TOOL_CALL_START", toolCallId: id, toolCallName: name,
  ...(parent === undefined ? {} : { parentMessageId: parent }), ...tag(s),
});
const TCA = (id, delta, s) => ({ type: "TOOL_CALL_ARGS", toolCallId: id, delta, ...tag(s) });
const TCE = (id, s) => ({ type: "TOOL_CALL_END", toolCallId: id, ...tag(s) });
const TCR = (msg, call, s) => ({ type: "TOOL_CALL_RESULT", messageId: msg, toolCallId: call, content: "ok", role: "tool", ...tag(s) });
const TCH = (fields) => ({ type: "TEXT_MESSAGE_CHUNK", ...fields });
const TLCH = (fields) => ({ type: "TOOL_CALL_CHUNK", ...fields });
const RCH = (fields) => ({ type: "REASONING_MESSAGE_CHUNK", ...fields });
const RSTART = (id, s) => ({ type: "REASONING_START", messageId: id, ...tag(s) });
const REND = (id, s) => ({ type: "REASONING_END", messageId: id, ...tag(s) });
const RMS = (id, s) => ({ type: "REASONING_MESSAGE_START", messageId: id, role: "reasoning", ...tag(s) });
const RMC = (id, delta, s) => ({ type: "REASONING_MESSAGE_CONTENT", messageId: id, delta, ...tag(s) });
const RME = (id, s) => ({ type: "REASONING_MESSAGE_END", messageId: id, ...tag(s) });
const REV = (subtype, entityId, s) => ({ type: "REASONING_ENCRYPTED_VALUE", subtype, entityId, encryptedValue: "enc", ...tag(s) });
const SS = (name, s) => ({ type: "STEP_STARTED", stepName: name, ...tag(s) });
const SF = (name, s) => ({ type: "STEP_FINISHED", stepName: name, ...tag(s) });
const SAS = (id, extra = {}) => ({ type: "SUBAGENT_STARTED", subagentRunId: id, name: `agent-${id}`, ...extra });
const SAF = (id, extra = {}) => ({ type: "SUBAGENT_FINISHED", subagentRunId: id, ...extra });
const SAE = (id) => ({ type: "SUBAGENT_ERROR", subagentRunId: id, message: "sub failed" });
const AS = (id, s, extra = {}) => ({ type: "ACTIVITY_SNAPSHOT", messageId: id, activityType: "PLAN", content: { steps: [] }, ...tag(s), ...extra });
const AD = (id, s) => ({ type: "ACTIVITY_DELTA", messageId: id, activityType: "PLAN", patch: [{ op: "add", path: "/steps/-", value: "a" }], ...tag(s) });
const SSN = (s) => ({ type: "STATE_SNAPSHOT", snapshot: { n: 0, items: [] }, ...tag(s) });
const SD = (s) => ({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/n", value: 1 }], ...tag(s) });
const CU = (s) => ({ type: "CUSTOM", name: "progress", value: { p: 1 }, ...tag(s) });
const RAW = (s) => ({ type: "RAW", event: { x: 1 }, source: "p", ...tag(s) });
const MS = (messages) => ({ type: "MESSAGES_SNAPSHOT", messages });
const userMsg = (id) => ({ id, role: "user", content: "hi" });
const asstMsg = (id, s, calls = []) => ({
  id, role: "assistant", content: "hello", ...tag(s),
  ...(calls.length ? { toolCalls: calls.map((c) => ({ id: c, type: "function", function: { name: "f", arguments: "{}" } })) } : {}),
});

const HAND = {
  text: [RS(), TMS("m1"), TMC("m1", "Hel"), TMC("m1", "lo"), TME("m1"), RF()],
  "text-two": [RS(), TMS("m1"), TMC("m1", "a"), TMS("m2", undefined, { role: "user" }), TMC("m2", "b"), TME("m1"), TMC("m2", "c"), TME("m2"), RF()],
  tools: [RS(), TMS("m1"), TMC("m1", "calling"), TME("m1"), TCS("c1", "search", "m1"), TCA("c1", '{"q":'), TCA("c1", '"x"}'), TCE("c1"), TCR("t1", "c1"), TCS("c2", "f"), TCA("c2", "{}"), TCE("c2"), RF()],
  "tools-parallel": [RS(), TCS("c1", "a"), TCS("c2", "b"), TCA("c1", "{}"), TCA("c2", "{}"), TCE("c2"), TCE("c1"), TCR("t1", "c1"), TCR("t2", "c2"), RF()],
  "text-chunks": [RS(), TCH({ messageId: "m1", role: "assistant", delta: "Hel" }), TCH({ delta: "lo" }), TCH({ messageId: "m1", delta: "!" }), TCH({ messageId: "m2", delta: "next" }), TCH({ delta: "more" }), RF()],
  "tool-chunks": [RS(), TLCH({ toolCallId: "c1", toolCallName: "search", parentMessageId: "m1", delta: '{"q":' }), TLCH({ delta: '"x"}' }), TLCH({ toolCallId: "c2", toolCallName: "f", delta: "{}" }), TCR("t1", "c1"), RF()],
  "reasoning-chunks": [RS(), RSTART("r1"), RCH({ messageId: "r1", delta: "think" }), RCH({ delta: "ing" }), REND("r1"), TCH({ messageId: "m1", delta: "answer" }), RF()],
  "chunks-mixed": [RS(), TCH({ messageId: "m1", delta: "a" }), TLCH({ toolCallId: "c1", toolCallName: "f", parentMessageId: "m1", delta: "{" }), TLCH({ delta: "}" }), RCH({ messageId: "r1", delta: "hm" }), TCH({ messageId: "m2", delta: "b" }), RF()],
  "chunks-interleaved": [RS(), TCH({ messageId: "m1", delta: "a" }), RAW(), TCH({ delta: "b" }), AS("a1"), TCH({ delta: "c" }), REV("message", "m1"), TCH({ messageId: "m1", delta: "d" }), SSN(), TCH({ messageId: "m2", delta: "e" }), CU(), SS("plan"), TLCH({ toolCallId: "c1", toolCallName: "f", delta: "{}" }), SF("plan"), RF()],
  "chunks-explicit-mix": [RS(), TCH({ messageId: "m1", delta: "a" }), TMS("m2"), TMC("m2", "x"), TME("m2"), TCH({ messageId: "m3", delta: "b" }), TCS("c1", "f"), TCE("c1"), RF()],
  "chunk-metadata": [RS(), TCH({ messageId: "m1", delta: "a", metadata: { k: 1 } }), TCH({ metadata: { usage: 3 } }), TCH({ rawEvent: { p: 1 } }), TCH({ messageId: "m1" }), RF()],
  reasoning: [RS(), RSTART("r1"), RMS("r1"), RMC("r1", "a"), RMC("r1", "b"), RME("r1"), RMS("r2"), RMC("r2", "c"), RME("r2"), REND("r1"), REV("message", "r1"), TMS("m1"), TMC("m1", "x"), TME("m1"), RF()],
  "reasoning-encrypted": [RS(), TCS("c1", "f"), TCE("c1"), REV("tool-call", "c1"), RMS("r1"), REV("message", "r1"), RME("r1"), RF()],
  steps: [RS(), SS("plan"), SS("act"), SF("act"), SF("plan"), SS("plan"), TMS("m1"), TME("m1"), SF("plan"), RF()],
  subagents: [RS(), SS("tools"), SAS("s1", { parentMessageId: "m0" }), SS("tools", "s1"), TMS("m1", "s1"), TMC("m1", "x", "s1"), TMC("m1", "y"), TME("m1", "s1"), TCS("c1", "f", "m1"), TCA("c1", "{}", "s1"), TCE("c1"), SAS("s2", { parentSubagentRunId: "s1" }), RSTART("r1", "s2"), RMS("r1", "s2"), RMC("r1", "z"), RME("r1", "s2"), REND("r1"), SAF("s2", { outcome: { type: "success" } }), SF("tools", "s1"), SAF("s1"), SF("tools"), RF()],
  "subagent-error": [RS(), SAS("s1"), TMS("m1", "s1"), TME("m1", "s1"), SAE("s1"), SAS("s2"), SAF("s2", { outcome: { type: "suspended", interruptIds: ["i1"] } }), RF()],
  "subagent-chunks": [RS(), SAS("s1"), SAS("s2"), TCH({ messageId: "m1", subagentRunId: "s1", delta: "a" }), TCH({ messageId: "m2", subagentRunId: "s2", delta: "b" }), TCH({ subagentRunId: "s1", delta: "c" }), TCH({ messageId: "m2", delta: "d" }), TLCH({ toolCallId: "c1", toolCallName: "f", subagentRunId: "s2", delta: "{}" }), TCH({ delta: "e", subagentRunId: "s1" }), SAF("s1"), TCH({ messageId: "m3", delta: "parent" }), TCH({ delta: "more" }), SAF("s2"), RF()],
  "subagent-chunk-lanes": [RS(), SAS("s1"), TCH({ messageId: "m1", subagentRunId: "s1", delta: "a" }), TCH({ delta: "b" }), RCH({ messageId: "r1", delta: "p" }), RCH({ delta: "q" }), TCH({ delta: "c" }), SAF("s1"), RF()],
  "attribution-only": [RS(), TMS("m1", "s9"), TMC("m1", "x", "s9"), TME("m1"), SS("w", "s9"), SF("w", "s9"), SD("s9"), CU("s9"), RF()],
  activities: [RS(), AS("a1"), AD("a1"), AS("a2", "s1"), AD("a2", "s1"), AD("a2"), AS("a2", "s2", { replace: false }), AD("a2", "s1"), AS("a2", "s2"), AD("a2", "s2"), RF()],
  state: [RS(), SSN(), SD(), SD(), MS([userMsg("u1"), asstMsg("m1", undefined, ["c1"]), { id: "t1", role: "tool", content: "ok", toolCallId: "c1" }]), SD(), RF()],
  "snapshot-owners": [RS(), MS([userMsg("u1"), asstMsg("m1", "s1", ["c1"]), { id: "r1", role: "reasoning", content: "x", subagentRunId: "s1" }, { id: "a1", role: "activity", activityType: "PLAN", content: {} }]), TMS("m1", "s1"), TME("m1"), REV("tool-call", "c1", "s1"), RMS("r1"), RME("r1", "s1"), AD("a1"), RF()],
  "input-owners": [RS("r1", { input: { threadId: "t1", runId: "r1", messages: [userMsg("u1"), asstMsg("m1", "s1", ["c1"])], tools: [], context: [], state: {}, forwardedProps: {} } }), TMS("m1"), TMC("m1", "x", "s1"), TME("m1"), TCS("c2", "f", "m1"), TCE("c2", "s1"), RF()],
  "multi-run": [RS("r1"), TMS("m1"), TMC("m1", "a"), TME("m1"), RF("r1"), RS("r2", { parentRunId: "r1" }), TMS("m2"), TMC("m2", "b"), TME("m2"), SS("s"), SF("s"), RF("r2")],
  "run-after-error": [RS("r1"), TMS("m1"), TMC("m1", "a"), SS("plan"), RE(), RS("r2"), TMS("m1"), TMC("m1", "b"), TME("m1"), SS("plan"), SF("plan"), RF("r2")],
  "error-first": [RE({ code: "E1" }), RS("r1"), TMS("m1"), TME("m1"), RF("r1")],
  "error-only": [RE()],
  "error-after-finish": [RS(), TMS("m1"), TME("m1"), RF(), RE(), RS("r2"), RF("r2")],
  "error-mid-stream": [RS(), TCH({ messageId: "m1", delta: "a" }), TCS("c1", "f"), RE()],
  "tool-result-owner": [RS(), TCR("t1", "c0", "s1"), TMS("t1", "s1"), TME("t1"), TCS("c1", "f", "t1"), TCE("c1"), RF()],
  interrupt: [RS(), TMS("m1"), TME("m1"), RF("r1", { outcome: { type: "interrupt", interrupts: [{ id: "i1", reason: "approval_required" }] } })],
  "ends-mid-run": [RS(), TMS("m1"), TMC("m1", "a"), TCH({ messageId: "m2", delta: "b" })],
  "same-id-kinds": [RS(), RSTART("x"), RMS("x"), TMS("x"), TCS("x", "f"), TCE("x"), TME("x"), RME("x"), REND("x"), RF()],
  "ambiguous-lanes": [RS(), SAS("s1"), SAS("s2"), TCH({ messageId: "m1", subagentRunId: "s1", delta: "a" }), TCH({ messageId: "m2", subagentRunId: "s2", delta: "b" }), TCH({ messageId: "m2", delta: "c" }), TCH({ subagentRunId: "s2", delta: "d" }), SAF("s1"), SAF("s2"), RF()],
  "parent-lane-preferred": [RS(), SAS("s1"), TLCH({ toolCallId: "c1", toolCallName: "f", subagentRunId: "s1", delta: "{" }), TLCH({ toolCallId: "c2", toolCallName: "g", delta: "{" }), TLCH({ delta: "}" }), TLCH({ toolCallId: "c1", delta: "}" }), SAF("s1"), RF()],
  "nested-subagents": [RS(), SAS("s1"), SAS("s2", { parentSubagentRunId: "s1" }), SAF("s2"), SAS("s3", { parentSubagentRunId: "s2" }), SAE("s3"), SAF("s1"), RF()],
  "tool-parent-owner": [RS(), TMS("m1", "s1"), TME("m1", "s1"), TCS("c1", "f", "m1"), TCA("c1", "{}", "s1"), TCE("c1"), TCS("c2", "f", "m1", "s1"), TCE("c2", "s1"), REV("tool-call", "c1", "s1"), RF()],
  "tool-reopen": [RS(), TMS("m1", "s1"), TME("m1"), TMS("m2"), TME("m2"), TCS("c1", "f", "m2"), TCE("c1"), TCS("c1", "f", "m2"), TCE("c1"), RF()],
  "encrypted-owners": [RS(), TMS("m1", "s1"), TME("m1"), RMS("r1", "s2"), RME("r1"), TCS("c1", "f", undefined, "s3"), TCE("c1"), REV("message", "m1", "s1"), REV("message", "r1", "s2"), REV("tool-call", "c1", "s3"), REV("message", "zz", "s4"), RF()],
  "steps-owners": [RS(), SAS("s1"), SS("tools"), SS("tools", "s1"), SF("tools", "s1"), SS("x", "s1"), SF("tools"), SF("x", "s1"), SAF("s1"), RF()],
  "messages-snapshot-reown": [RS(), TMS("m1", "s1"), TME("m1"), MS([asstMsg("m1", "s2", ["c1"])]), TMS("m1", "s2"), TMC("m1", "x"), TME("m1", "s2"), TCS("c1", "f"), TCA("c1", "{}", "s2"), TCE("c1"), RF()],
  "chunk-closes-explicit-lane": [RS(), TCH({ messageId: "m1", delta: "a" }), TMS("m2", "s1"), TCH({ delta: "b" }), TME("m2", "s1"), TCH({ delta: "c" }), TCH({ messageId: "m1", delta: "again" }), RF()],
  "run-boundary-closes-chunks": [RS("r1"), TCH({ messageId: "m1", delta: "a" }), RF("r1"), RS("r2"), TCH({ messageId: "m1", delta: "b" }), RE(), RS("r3"), RCH({ messageId: "m1", delta: "c" }), MS([]), RCH({ messageId: "m1", delta: "d" }), RF("r3")],
  "reopen-ids": [RS(), TMS("m1"), TME("m1"), TMS("m1"), TME("m1"), TCS("c1", "f"), TCE("c1"), TCS("c1", "f"), TCE("c1"), RMS("r1"), RME("r1"), RMS("r1"), RME("r1"), RF()],
};

// Edge cases, valid or not (whatever the reference says), each judged as is and mutated a
// little: chunk lanes, "" as an id and as an owner, owners replayed and re-minted.
const EDGE = {
  "ambiguous-text": [RS(), TCH({ messageId: "m1", subagentRunId: "s1", delta: "a" }), TCH({ messageId: "m2", subagentRunId: "s2", delta: "b" }), TCH({ delta: "?" }), RF()],
  "ambiguous-reasoning": [RS(), RCH({ messageId: "r1", subagentRunId: "s1", delta: "a" }), RCH({ messageId: "r2", subagentRunId: "s2", delta: "b" }), RCH({ delta: "?" }), RF()],
  "reasoning-wrong-owner": [RS(), RCH({ messageId: "r1", subagentRunId: "s1", delta: "a" }), RCH({ messageId: "r1", subagentRunId: "s2", delta: "b" }), RF()],
  "parent-lane-first": [RS(), TCH({ messageId: "m1", subagentRunId: "s1", delta: "a" }), TCH({ messageId: "m2", delta: "b" }), TCH({ delta: "c" }), TMC("m2", "x"), RF()],
  "sole-lane-fallback": [RS(), TLCH({ toolCallId: "c1", toolCallName: "f", delta: "{" }), TCH({ messageId: "m1", subagentRunId: "s1", delta: "a" }), TCH({ delta: "b" }), TLCH({ delta: "}" }), RF()],
  "empty-ids": [RS(), TCH({ messageId: "", delta: "a" }), TCH({ delta: "b" }), TMS("m1", ""), TMC("m1", "x", ""), TME("m1"), SS("", ""), SS(""), SF(""), SF("", ""), SAS(""), SAF(""), RF()],
  "empty-owner-vs-parent": [RS(), TMS("m1"), TMC("m1", "x", ""), TME("m1"), RF()],
  "empty-owner-lane": [RS(), TCH({ messageId: "m1", subagentRunId: "", delta: "a" }), TCH({ messageId: "m2", delta: "b" }), TCH({ subagentRunId: "", delta: "c" }), TCH({ delta: "d" }), RF()],
  "step-owner-cross": [RS(), SAS("s1"), SS("tools"), SS("tools", "s1"), SF("tools"), SF("tools", "s1"), SAF("s1"), RF()],
  "chunk-name-repeat": [RS(), TLCH({ toolCallId: "c1", toolCallName: "f", delta: "{" }), TLCH({ toolCallName: "f", delta: "}" }), TLCH({ toolCallId: "c1", toolCallName: "g" }), RF()],
  "chunk-role-default": [RS(), TCH({ messageId: "m1", delta: "a" }), TCH({ role: "assistant", delta: "b" }), TCH({ role: "user", delta: "c" }), RF()],
  "chunk-parent-added": [RS(), TLCH({ toolCallId: "c1", toolCallName: "f", delta: "{" }), TLCH({ parentMessageId: "m1", delta: "}" }), RF()],
  "subagent-reuse": [RS(), SAS("s1"), SAF("s1"), SAS("s2", { parentSubagentRunId: "s1" }), SAF("s2"), SAS("s1"), SAF("s1"), RF()],
  "subagent-reuse-next-run": [RS("r1"), SAS("s1"), SAF("s1"), RF("r1"), RS("r2"), SAS("s1"), SAF("s1"), RF("r2")],
  "activity-no-reown": [RS(), AS("a1", "s1"), AS("a1", "s2", { replace: false }), AD("a1", "s2"), RF()],
  "activity-seeded-no-reown": [RS(), MS([{ id: "a1", role: "activity", activityType: "PLAN", content: {}, subagentRunId: "s1" }]), AS("a1", "s2", { replace: false }), AD("a1", "s2"), RF()],
  "encrypted-after-end": [RS(), TCS("c1", "f", undefined, "s1"), TCE("c1"), REV("tool-call", "c1", "s2"), RF()],
  "reopen-keeps-owner": [RS(), TMS("m1", "s1"), TME("m1"), TMS("m1"), TMC("m1", "x", "s2"), TME("m1"), RF()],
  "tool-reopen-other-parent": [RS(), TMS("m1", "s1"), TME("m1"), TMS("m2"), TME("m2"), TCS("c1", "f", "m1"), TCE("c1"), TCS("c1", "f", "m2"), TCE("c1"), RF()],
  "interrupt-null-owner": [RS(), RF("r1", { outcome: { type: "interrupt", interrupts: [{ id: "i1", reason: "r", subagentRunId: null }] } })],
  "snapshot-null-owner": [RS(), MS([{ id: "m1", role: "assistant", content: "x", subagentRunId: null }]), RF()],
  "input-null-owner": [RS("r1", { input: { threadId: "t1", runId: "r1", messages: [{ id: "m1", role: "user", content: "x", subagentRunId: null }], tools: [], context: [], state: {}, forwardedProps: {} } }), RF()],
  "chunk-null-owner": [RS(), TCH({ messageId: "m1", delta: "a" }), TCH({ subagentRunId: null, delta: "b" }), RF()],
  "tool-result-reowns": [RS(), TMS("m1", "s1"), TME("m1"), TCR("m1", "c0"), TMS("m1"), TMC("m1", "x", "s1"), TME("m1"), RF()],
  "run-finished-then-error": [RS(), RF(), RE(), RE()],
  "error-first-then-error": [RE(), RE()],
  "started-after-error-first": [RE(), RS(), SS("a"), RF()],
};

// ---------------------------------------------------------------- reading the recordings
function recordings() {
  let names = [];
  try {
    names = readdirSync(RECORDINGS).filter((n) => n.endsWith(".jsonl") && !n.endsWith("-invalid.jsonl")).sort();
  } catch {
    console.error(`no recordings at ${RECORDINGS}; using the hand-made streams only`);
  }
  return names.map((n) => [
    `rec:${n.replace(/\.jsonl$/, "")}`,
    readFileSync(join(RECORDINGS, n), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l)),
  ]);
}

// ---------------------------------------------------------------- mutations
const ID_FIELDS = ["messageId", "toolCallId", "stepName", "subagentRunId", "parentMessageId", "entityId", "parentSubagentRunId"];
const TERMINALS = new Set(["RUN_FINISHED", "RUN_ERROR"]);

function idsOf(events) {
  const ids = new Set();
  for (const e of events) for (const f of ID_FIELDS) if (typeof e[f] === "string") ids.add(e[f]);
  return [...ids];
}
function tagsOf(events) {
  const tags = new Set(["s1", "s9", ""]);
  for (const e of events) if (typeof e.subagentRunId === "string") tags.add(e.subagentRunId);
  return [...tags];
}
const indexes = (events, pred) => events.map((e, i) => (pred(e, i) ? i : -1)).filter((i) => i >= 0);
const firstTerminal = (events) => events.findIndex((e) => TERMINALS.has(e.type));

// Each mutation returns [label, events] or null when it does not apply.
const MUTATIONS = {
  drop(ev) {
    if (ev.length < 2) return null;
    const i = int(ev.length);
    return [`drop@${i}`, ev.filter((_, j) => j !== i)];
  },
  duplicate(ev) {
    const i = int(ev.length);
    const out = clone(ev);
    out.splice(i + 1, 0, clone(ev[i]));
    return [`dup@${i}`, out];
  },
  swap(ev) {
    if (ev.length < 2) return null;
    const i = int(ev.length - 1);
    const out = clone(ev);
    [out[i], out[i + 1]] = [out[i + 1], out[i]];
    return [`swap@${i}`, out];
  },
  move(ev) {
    if (ev.length < 3) return null;
    const i = int(ev.length);
    let j = int(ev.length);
    if (j === i) j = (i + 2) % ev.length;
    const out = clone(ev);
    const [e] = out.splice(i, 1);
    out.splice(j, 0, e);
    return [`move@${i}->${j}`, out];
  },
  changeId(ev) {
    const cands = [];
    ev.forEach((e, i) => ID_FIELDS.forEach((f) => typeof e[f] === "string" && cands.push([i, f])));
    if (!cands.length) return null;
    const [i, f] = pick(cands);
    const pool = idsOf(ev).filter((x) => x !== ev[i][f]);
    const to = rand() < 0.6 && pool.length ? pick(pool) : rand() < 0.15 ? "" : `${ev[i][f]}-x`;
    const out = clone(ev);
    out[i][f] = to;
    return [`id@${i}.${f}=${to}`, out];
  },
  addTag(ev) {
    const cands = indexes(ev, (e) => typeof e.subagentRunId !== "string" && !TERMINALS.has(e.type) && e.type !== "RUN_STARTED" && e.type !== "MESSAGES_SNAPSHOT");
    if (!cands.length) return null;
    const i = pick(cands);
    const t = pick(tagsOf(ev));
    const out = clone(ev);
    out[i].subagentRunId = t;
    return [`tag+@${i}=${t}`, out];
  },
  removeTag(ev) {
    const cands = indexes(ev, (e) => typeof e.subagentRunId === "string");
    if (!cands.length) return null;
    const i = pick(cands);
    const out = clone(ev);
    delete out[i].subagentRunId;
    return [`tag-@${i}`, out];
  },
  changeTag(ev) {
    const cands = indexes(ev, (e) => typeof e.subagentRunId === "string");
    if (!cands.length) return null;
    const i = pick(cands);
    const t = pick(tagsOf(ev).filter((x) => x !== ev[i].subagentRunId));
    const out = clone(ev);
    out[i].subagentRunId = t;
    return [`tag@${i}=${t}`, out];
  },
  stray(ev) {
    const ids = idsOf(ev);
    const id = rand() < 0.5 || !ids.length ? "zz" : pick(ids);
    const t = rand() < 0.3 ? pick(tagsOf(ev)) : undefined;
    const kinds = [
      () => TMC(id, "stray", t), () => TME(id, t), () => TCA(id, "{}", t), () => TCE(id, t),
      () => RMC(id, "stray", t), () => RME(id, t), () => REND(id, t), () => SF(id, t),
      () => SAF(id), () => SAE(id), () => AD(id, t), () => REV(pick(["message", "tool-call"]), id, t),
      () => TMS(id, t), () => TCS(id, "f", pick([undefined, ...ids]), t), () => RMS(id, t), () => RSTART(id, t),
      () => SS(id, t), () => SAS(id, pick([{}, { parentSubagentRunId: pick(tagsOf(ev)) }])),
      () => TCR(`${id}-r`, id, t), () => AS(id, t),
    ];
    const k = int(kinds.length);
    const i = 1 + int(ev.length);
    const out = clone(ev);
    out.splice(Math.min(i, out.length), 0, kinds[k]());
    return [`stray${k}:${id}@${i}`, out];
  },
  runStartedMidRun(ev) {
    const i = 1 + int(Math.max(1, ev.length - 1));
    const out = clone(ev);
    out.splice(i, 0, RS(`r-mid`));
    return [`run-started@${i}`, out];
  },
  terminalEarly(ev) {
    const i = 1 + int(Math.max(1, ev.length - 1));
    const out = clone(ev);
    const t = rand() < 0.6 ? RF("r1") : RE();
    out.splice(i, 0, t);
    return [`${t.type}@${i}`, out];
  },
  appendAfterEnd(ev) {
    const out = clone(ev);
    if (!TERMINALS.has(out[out.length - 1]?.type)) out.push(rand() < 0.5 ? RF("r1") : RE());
    const extra = pick([
      () => clone(pick(ev)), () => RF("r1"), () => RE(), () => TMS("late"), () => TCH({ messageId: "late", delta: "x" }),
      () => TCH({ delta: "x" }), () => RAW(), () => SS("late"), () => AS("late"), () => RS("r-next"),
      () => CU(), () => MS([userMsg("u9")]),
    ])();
    out.push(extra);
    return [`after-end:${extra.type}`, out];
  },
  dropFirstChunkId(ev) {
    const seen = new Set();
    const cands = [];
    ev.forEach((e, i) => {
      const f = e.type === "TOOL_CALL_CHUNK" ? "toolCallId" : e.type.endsWith("_CHUNK") ? "messageId" : null;
      if (!f || typeof e[f] !== "string") return;
      const key = `${e.type}:${e[f]}`;
      if (!seen.has(key)) cands.push([i, f]);
      seen.add(key);
    });
    if (!cands.length) return null;
    const [i, f] = pick(cands);
    const out = clone(ev);
    delete out[i][f];
    if (f === "toolCallId" && rand() < 0.3) delete out[i].toolCallName;
    return [`chunk-noid@${i}`, out];
  },
  chunkConflict(ev) {
    const cands = indexes(ev, (e, i) => i > 0 && e.type.endsWith("_CHUNK"));
    if (!cands.length) return null;
    const i = pick(cands);
    const out = clone(ev);
    const e = out[i];
    const field = e.type === "TOOL_CALL_CHUNK" ? pick(["toolCallName", "parentMessageId", "toolCallId"]) : pick(["role", "name", "messageId"]);
    e[field] = field === "role" ? pick(["user", "assistant", "system"]) : pick([...idsOf(ev), "other"]);
    return [`chunk-field@${i}.${field}`, out];
  },
  chunkify(ev) {
    // START/CONTENT/END of one entity replaced by chunks (a valid spelling, mostly).
    const starts = indexes(ev, (e) => ["TEXT_MESSAGE_START", "TOOL_CALL_START", "REASONING_MESSAGE_START"].includes(e.type));
    if (!starts.length) return null;
    const i = pick(starts);
    const s = ev[i];
    const [idf, cont, end, chunk] =
      s.type === "TEXT_MESSAGE_START" ? ["messageId", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK"]
        : s.type === "TOOL_CALL_START" ? ["toolCallId", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK"]
          : ["messageId", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_MESSAGE_CHUNK"];
    const id = s[idf];
    const out = [];
    let first = true;
    ev.forEach((e, j) => {
      if (j === i) {
        const c = { type: chunk, [idf]: id, ...tag(s.subagentRunId) };
        if (s.type === "TOOL_CALL_START") {
          c.toolCallName = s.toolCallName;
          if (s.parentMessageId !== undefined) c.parentMessageId = s.parentMessageId;
        }
        if (s.type === "TEXT_MESSAGE_START" && s.role !== undefined) c.role = s.role;
        out.push(c);
      } else if (j > i && e.type === cont && e[idf] === id) {
        const c = { type: chunk, delta: e.delta, ...tag(e.subagentRunId) };
        if (first || rand() < 0.3) c[idf] = id;
        first = false;
        out.push(c);
      } else if (j > i && e.type === end && e[idf] === id && rand() < 0.7) {
        // dropped: the next event closes the lane
      } else out.push(clone(e));
    });
    return [`chunkify@${i}`, out];
  },
  truncate(ev) {
    if (ev.length < 3) return null;
    const n = 1 + int(ev.length - 1);
    return [`truncate@${n}`, clone(ev.slice(0, n))];
  },
  runTag(ev) {
    // RUN_* and MESSAGES_SNAPSHOT describe no subagentRunId: the client strips it unseen.
    const cands = indexes(ev, (e) => TERMINALS.has(e.type) || e.type === "RUN_STARTED" || e.type === "MESSAGES_SNAPSHOT");
    if (!cands.length) return null;
    const i = pick(cands);
    const out = clone(ev);
    out[i].subagentRunId = pick(["s1", null, 5]);
    return [`run-tag@${i}=${out[i].subagentRunId}`, out];
  },
  nestedOwner(ev) {
    // The owners replayed history records: MESSAGES_SNAPSHOT and RUN_STARTED.input messages.
    const out = clone(ev);
    const lists = [];
    out.forEach((e, i) => {
      if (e.type === "MESSAGES_SNAPSHOT" && Array.isArray(e.messages)) lists.push([i, e.messages]);
      if (e.type === "RUN_STARTED" && e.input && Array.isArray(e.input.messages)) lists.push([i, e.input.messages]);
    });
    if (!lists.length) {
      // Add a snapshot naming ids the stream uses, under some owner.
      const ids = idsOf(ev);
      if (!ids.length) return null;
      const at = 1 + int(Math.max(1, ev.length - 1));
      const msgs = [0, 1].map(() => {
        const role = pick(["assistant", "assistant", "reasoning", "activity", "tool"]);
        const id = pick(ids);
        const t = pick([undefined, ...tagsOf(ev)]);
        if (role === "assistant") return asstMsg(id, t, rand() < 0.5 ? [pick(ids)] : []);
        if (role === "reasoning") return { id, role, content: "r", ...tag(t) };
        if (role === "activity") return { id, role, activityType: "PLAN", content: {}, ...tag(t) };
        return { id, role, content: "ok", toolCallId: pick(ids), ...tag(t) };
      });
      out.splice(Math.min(at, out.length), 0, MS(msgs));
      return [`snapshot+@${at}`, out];
    }
    const [i, msgs] = pick(lists);
    if (!msgs.length) return null;
    const m = pick(msgs);
    const how = int(4);
    if (how === 0) m.subagentRunId = pick([...tagsOf(ev), null]);
    else if (how === 1) delete m.subagentRunId;
    else if (how === 2) m.id = pick([...idsOf(ev), "zz"]);
    else if (m.role === "assistant") m.toolCalls = [{ id: pick([...idsOf(ev), "zz"]), type: "function", function: { name: "f", arguments: "{}" } }];
    else m.subagentRunId = pick(tagsOf(ev));
    return [`nested${how}@${i}`, out];
  },
  schemaBreak(ev) {
    const i = int(ev.length);
    const out = clone(ev);
    const e = out[i];
    const keys = Object.keys(e).filter((k) => k !== "type");
    const how = int(7);
    if (how === 0 && keys.length) {
      const k = pick(keys);
      delete e[k];
      return [`schema-del@${i}.${k}`, out];
    }
    if (how === 1 && keys.length) {
      const k = pick(keys);
      e[k] = pick([42, true, ["x"], { x: 1 }]);
      return [`schema-type@${i}.${k}`, out];
    }
    if (how === 2) {
      const k = pick(["subagentRunId", "timestamp", "rawEvent", "metadata", "parentMessageId", "name", "role", "code", "outcome"]);
      e[k] = null;
      return [`schema-null@${i}.${k}`, out];
    }
    if (how === 3) {
      e.type = pick(["TEXT_MESSAGE_DELTA", "THINKING_START", "text_message_start", "UNKNOWN"]);
      return [`schema-badtype@${i}`, out];
    }
    if (how === 4) {
      e.timestamp = pick([1.5, -1, "now", 1700000000000]);
      return [`schema-ts@${i}`, out];
    }
    if (how === 5) {
      e.extraField = "x";
      e.message_id = "m";
      return [`schema-extra@${i}`, out];
    }
    if (e.type === "MESSAGES_SNAPSHOT" && Array.isArray(e.messages) && e.messages.length) {
      const m = pick(e.messages);
      m.subagentRunId = pick([null, "s1", 5]);
      return [`snapshot-tag@${i}`, out];
    }
    if (e.type === "RUN_FINISHED") {
      e.outcome = pick([{ type: "interrupt", interrupts: [{ id: "i", reason: "r", subagentRunId: null }] }, { type: "weird" }, "success", { type: "success" }, { type: "cancelled" }]);
      return [`outcome@${i}`, out];
    }
    if (e.type === "SUBAGENT_FINISHED") {
      e.outcome = pick([{ type: "suspended", interruptIds: [1] }, { type: "suspended", interruptIds: null }, { type: "bad" }, "success"]);
      return [`sub-outcome@${i}`, out];
    }
    if (e.type === "TEXT_MESSAGE_START" || e.type === "TEXT_MESSAGE_CHUNK") {
      e.role = pick(["tool", "reasoning", "robot", "user"]);
      return [`role@${i}`, out];
    }
    e.delta = pick(["", 7, null]);
    return [`delta@${i}`, out];
  },
};

// How often each mutation is drawn (recordings get fewer draws than hand-made streams).
const WEIGHTS = {
  drop: 3, duplicate: 3, swap: 3, move: 3, changeId: 4, addTag: 3, removeTag: 2, changeTag: 2,
  stray: 4, runStartedMidRun: 1, terminalEarly: 2, appendAfterEnd: 2, dropFirstChunkId: 2,
  chunkConflict: 2, chunkify: 3, truncate: 1, schemaBreak: 5, runTag: 1, nestedOwner: 2,
};
const BAG = Object.entries(WEIGHTS).flatMap(([k, w]) => Array(w).fill(k));

function mutate(events, depth) {
  let label = [];
  let ev = events;
  for (let d = 0; d < depth; d++) {
    for (let tries = 0; tries < 10; tries++) {
      const m = MUTATIONS[pick(BAG)](ev);
      if (m) {
        label.push(m[0]);
        ev = m[1];
        break;
      }
    }
  }
  return [label.join("+"), ev];
}

// ---------------------------------------------------------------- random walks
// Short streams over tiny id pools, mostly well-formed moves and now and then a random one,
// so that collisions, cross-kind ids, owner changes and chunk lanes meet in every order.
function walk() {
  // "" is a legal opaque id and owner, distinct from an absent one.
  const ids = rand() < 0.2 ? ["a", ""] : ["a", "b"];
  const tags = rand() < 0.2 ? [undefined, undefined, "s1", ""] : [undefined, undefined, "s1", "s2"];
  const st = { text: new Map(), tool: new Map(), span: new Map(), rmsg: new Map(), steps: new Set(), subs: new Set(), closedSubs: new Set() };
  const ev = rand() < 0.1 ? [RE()] : [];
  ev.push(RS());
  const anyTag = () => pick(tags);
  const subIds = [...new Set(tags.filter((t) => t !== undefined))];
  const randomEvent = () => pick([
    () => TMS(pick(ids), anyTag()), () => TMC(pick(ids), "x", anyTag()), () => TME(pick(ids), anyTag()),
    () => TCS(pick(ids), "f", pick([undefined, ...ids]), anyTag()), () => TCA(pick(ids), "{}", anyTag()), () => TCE(pick(ids), anyTag()),
    () => RSTART(pick(ids), anyTag()), () => REND(pick(ids), anyTag()), () => RMS(pick(ids), anyTag()), () => RMC(pick(ids), "x", anyTag()), () => RME(pick(ids), anyTag()),
    () => REV(pick(["message", "tool-call"]), pick(ids), anyTag()), () => SS(pick(["p", "q"]), anyTag()), () => SF(pick(["p", "q"]), anyTag()),
    () => SAS(pick(subIds), rand() < 0.3 ? { parentSubagentRunId: pick(subIds) } : {}), () => SAF(pick(subIds)), () => SAE(pick(subIds)),
    () => AS(pick(ids), anyTag(), rand() < 0.3 ? { replace: false } : {}), () => AD(pick(ids), anyTag()), () => TCR(pick(ids), pick(ids), anyTag()),
    () => MS([asstMsg(pick(ids), anyTag(), rand() < 0.5 ? [pick(ids)] : [])]), () => CU(anyTag()), () => RAW(anyTag()), () => SD(anyTag()),
    () => TCH({ ...(rand() < 0.6 ? { messageId: pick(ids) } : {}), ...tag(anyTag()), delta: "t" }),
    () => TLCH({ ...(rand() < 0.6 ? { toolCallId: pick(ids), toolCallName: "f" } : {}), ...tag(anyTag()), delta: "{}" }),
    () => RCH({ ...(rand() < 0.6 ? { messageId: pick(ids) } : {}), ...tag(anyTag()), delta: "r" }),
    () => RS("r2"), () => RF(), () => RE(),
  ])();
  const plausible = () => {
    const moves = [];
    const closed = (m) => ids.filter((i) => !m.has(i));
    const cont = (m, mk) => { for (const [id, t] of m) moves.push(() => mk(id, rand() < 0.5 ? t : undefined)); };
    if (closed(st.text).length) moves.push(() => { const id = pick(closed(st.text)); const t = anyTag(); st.text.set(id, t); return TMS(id, t); });
    cont(st.text, (id, t) => TMC(id, "x", t));
    for (const [id, t] of st.text) moves.push(() => { st.text.delete(id); return TME(id, rand() < 0.5 ? t : undefined); });
    if (closed(st.tool).length) moves.push(() => { const id = pick(closed(st.tool)); const t = anyTag(); st.tool.set(id, t); return TCS(id, "f", rand() < 0.3 ? pick(ids) : undefined, t); });
    cont(st.tool, (id, t) => TCA(id, "{}", t));
    for (const [id, t] of st.tool) moves.push(() => { st.tool.delete(id); return TCE(id, rand() < 0.5 ? t : undefined); });
    if (closed(st.span).length) moves.push(() => { const id = pick(closed(st.span)); const t = anyTag(); st.span.set(id, t); return RSTART(id, t); });
    for (const [id, t] of st.span) moves.push(() => { st.span.delete(id); return REND(id, rand() < 0.5 ? t : undefined); });
    if (closed(st.rmsg).length) moves.push(() => { const id = pick(closed(st.rmsg)); const t = anyTag(); st.rmsg.set(id, t); return RMS(id, t); });
    cont(st.rmsg, (id, t) => RMC(id, "x", t));
    for (const [id, t] of st.rmsg) moves.push(() => { st.rmsg.delete(id); return RME(id, rand() < 0.5 ? t : undefined); });
    moves.push(() => { const k = `${pick(["p", "q"])}|${anyTag() ?? ""}`; if (st.steps.has(k)) { st.steps.delete(k); } else st.steps.add(k); const [n, t] = k.split("|"); return (st.steps.has(k) ? SS : SF)(n, t || undefined); });
    const freeSubs = subIds.filter((x) => !st.subs.has(x) && !st.closedSubs.has(x));
    if (freeSubs.length) moves.push(() => { const id = pick(freeSubs); const parent = [...st.subs][0]; st.subs.add(id); return SAS(id, parent && rand() < 0.5 ? { parentSubagentRunId: parent } : {}); });
    for (const id of st.subs) moves.push(() => { st.subs.delete(id); st.closedSubs.add(id); return rand() < 0.7 ? SAF(id) : SAE(id); });
    moves.push(() => TCH({ ...(rand() < 0.7 ? { messageId: pick(ids) } : {}), ...tag(anyTag()), delta: "t" }));
    moves.push(() => TLCH({ ...(rand() < 0.7 ? { toolCallId: pick(ids), toolCallName: "f" } : {}), ...tag(anyTag()), delta: "{}" }));
    moves.push(() => RCH({ ...(rand() < 0.7 ? { messageId: pick(ids) } : {}), ...tag(anyTag()), delta: "r" }));
    moves.push(() => AS(pick(ids), anyTag()), () => AD(pick(ids), anyTag()), () => REV(pick(["message", "tool-call"]), pick(ids), anyTag()));
    return pick(moves)();
  };
  const runs = rand() < 0.2 ? 2 : 1;
  for (let run = 0; run < runs; run++) {
    if (run > 0) {
      // A later run: per-run state starts afresh, ids may be reused.
      for (const m of [st.text, st.tool, st.span, st.rmsg]) m.clear();
      st.steps.clear();
      st.subs.clear();
      st.closedSubs.clear();
      ev.push(RS(`r${run + 1}`));
    }
    const len = 2 + int(12);
    for (let k = 0; k < len; k++) ev.push(rand() < 0.85 ? plausible() : randomEvent());
    if (rand() < 0.8) {
      // Close what the walk believes is open, then end the run.
      for (const [id, t] of st.rmsg) ev.push(RME(id, t));
      for (const [id, t] of st.span) ev.push(REND(id, t));
      for (const [id, t] of st.text) ev.push(TME(id, t));
      for (const [id, t] of st.tool) ev.push(TCE(id, t));
      for (const k of st.steps) {
        const [n, t] = k.split("|");
        ev.push(SF(n, t || undefined));
      }
      for (const id of st.subs) ev.push(SAF(id));
      ev.push(rand() < 0.85 ? RF() : RE());
    }
  }
  return ev;
}

// ---------------------------------------------------------------- building the corpus
const bases = [
  ...Object.entries(HAND).map(([n, ev]) => [`hand:${n}`, ev]),
  ...Object.entries(EDGE).map(([n, ev]) => [`edge:${n}`, ev]),
  ...recordings(),
];
const cases = [];
const seen = new Set();
function add(name, events) {
  const key = JSON.stringify(events);
  if (seen.has(key)) return;
  seen.add(key);
  cases.push({ name, events, verdict: judge(clone(events)) });
}
for (const [name, events] of bases) {
  add(name, events);
  const isRec = name.startsWith("rec:");
  const n = (isRec ? 8 : name.startsWith("edge:") ? 8 : 40) * SCALE;
  for (let k = 0; k < n; k++) {
    const depth = rand() < 0.75 ? 1 : 2;
    const [label, ev] = mutate(events, depth);
    if (ev.length === 0) continue;
    add(`${name}/${label}`, ev);
  }
}

const WALKS = 600 * SCALE;
for (let k = 0; k < WALKS; k++) add(`walk:${k}`, walk());

// Every stream named; the names are unique because streams are.
const names = new Set();
for (const c of cases) {
  let name = c.name;
  for (let k = 2; names.has(name); k++) name = `${c.name}#${k}`;
  names.add(name);
  c.name = name;
}

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, cases.map((c) => JSON.stringify(c)).join("\n") + "\n");
const stats = {};
for (const c of cases) {
  const s = c.verdict.ok ? "ok" : c.verdict.stage;
  stats[s] = (stats[s] ?? 0) + 1;
}
const bytes = cases.reduce((n, c) => n + JSON.stringify(c).length + 1, 0);
console.error(`${cases.length} cases, ${bytes} bytes -> ${OUT}`);
console.error(JSON.stringify(stats));
