// Builds fixtures/fold-cases/cases.jsonl: small AG-UI streams that stress the official reducer,
// each with what the official client ends with, from reference/fold.mjs (transformChunks, then
// defaultApplyEvents of @ag-ui/client 1.0.0).
//   node reference/make-fold-cases.mjs      (from anywhere; run make-patch-cases.mjs first)
// Each line: {"name", "events": [...], "expected": {"messages": [...], "state": ...}}.
// Streams the reference rejects ({"error": ...}: a chunk it cannot expand, a malformed message
// it trips over) are left out and counted. Deterministic: a seeded PRNG, no clock.
//
// Names say what a case stresses: `scenario/…` hand-built streams, `soup/…` random mixes over
// small id pools (so ids collide across kinds), `chunks/…`, `snapshot/…`, `state-patch/…` and
// `activity-patch/…` (the patch corpus replayed through STATE_DELTA / ACTIVITY_DELTA),
// `odd/…` (events outside the schema: non-string deltas, non-object metadata, missing ids …),
// `recording/…` (the real streams in /work/shared/recordings).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const outDir = join(root, "fixtures", "fold-cases");
const recordings = "/work/shared/recordings";

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.
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
let rand = mulberry32(0xf01d);
const chance = (p) => rand() < p;
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (n) => Math.floor(rand() * n);
/** Drops keys whose value is undefined (JSON.stringify would too; this keeps events tidy). */
const clean = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

// ---------------------------------------------------------------------------------------------
// Cases. An event is an object or a string of JSON text (kept verbatim, e.g. for `1.0`).
const cases = [];
function add(name, events) {
  cases.push({ name, events });
}
const ev = (type, fields = {}) => clean({ type, ...fields });

// Shorthands for the hand-built scenarios.
const RS = (runId = "r1", input) => ev("RUN_STARTED", { threadId: "t", runId, input });
const RF = (runId = "r1", extra = {}) => ev("RUN_FINISHED", { threadId: "t", runId, ...extra });
const RE = (message = "boom") => ev("RUN_ERROR", { message });
const TS = (messageId, extra = {}) => ev("TEXT_MESSAGE_START", { messageId, role: "assistant", ...extra });
const TC = (messageId, delta, extra = {}) => ev("TEXT_MESSAGE_CONTENT", { messageId, delta, ...extra });
const TE = (messageId, extra = {}) => ev("TEXT_MESSAGE_END", { messageId, ...extra });
const TK = (fields) => ev("TEXT_MESSAGE_CHUNK", fields);
const RMS = (messageId, extra = {}) => ev("REASONING_MESSAGE_START", { messageId, role: "reasoning", ...extra });
const RMC = (messageId, delta, extra = {}) => ev("REASONING_MESSAGE_CONTENT", { messageId, delta, ...extra });
const RME = (messageId, extra = {}) => ev("REASONING_MESSAGE_END", { messageId, ...extra });
const RK = (fields) => ev("REASONING_MESSAGE_CHUNK", fields);
const RST = (messageId = "rs") => ev("REASONING_START", { messageId });
const REN = (messageId = "rs") => ev("REASONING_END", { messageId });
const REV = (subtype, entityId, encryptedValue = "enc", extra = {}) =>
  ev("REASONING_ENCRYPTED_VALUE", { subtype, entityId, encryptedValue, ...extra });
const CS = (toolCallId, toolCallName = "f", extra = {}) => ev("TOOL_CALL_START", { toolCallId, toolCallName, ...extra });
const CA = (toolCallId, delta, extra = {}) => ev("TOOL_CALL_ARGS", { toolCallId, delta, ...extra });
const CE = (toolCallId, extra = {}) => ev("TOOL_CALL_END", { toolCallId, ...extra });
const CK = (fields) => ev("TOOL_CALL_CHUNK", fields);
const CR = (messageId, toolCallId, content = "ok", extra = {}) =>
  ev("TOOL_CALL_RESULT", { messageId, toolCallId, content, ...extra });
const SS = (snapshot) => ev("STATE_SNAPSHOT", { snapshot });
const SD = (delta) => ev("STATE_DELTA", { delta });
const MS = (messages, extra = {}) => ev("MESSAGES_SNAPSHOT", { messages, ...extra });
const AS = (messageId, activityType, content, extra = {}) =>
  ev("ACTIVITY_SNAPSHOT", { messageId, activityType, content, ...extra });
const AD = (messageId, activityType, patch, extra = {}) => ev("ACTIVITY_DELTA", { messageId, activityType, patch, ...extra });
const SGS = (subagentRunId) => ev("SUBAGENT_STARTED", { subagentRunId, name: "sub" });
const SGF = (subagentRunId) => ev("SUBAGENT_FINISHED", { subagentRunId });
const SGE = (subagentRunId) => ev("SUBAGENT_ERROR", { subagentRunId, message: "x" });
const STP = (stepName = "s") => ev("STEP_STARTED", { stepName });
const STF = (stepName = "s") => ev("STEP_FINISHED", { stepName });
const CU = () => ev("CUSTOM", { name: "c", value: 1 });
const RAW = () => ev("RAW", { event: { x: 1 } });

const user = (id, content = "hi", extra = {}) => ({ id, role: "user", content, ...extra });
const asst = (id, content, toolCalls, extra = {}) => clean({ id, role: "assistant", content, toolCalls, ...extra });
const call = (id, name = "f", args = "{}", extra = {}) => ({ id, type: "function", function: { name, arguments: args }, ...extra });
const toolMsg = (id, toolCallId, content = "res", extra = {}) => ({ id, role: "tool", toolCallId, content, ...extra });
const reason = (id, content = "think", extra = {}) => ({ id, role: "reasoning", content, ...extra });
const act = (id, activityType, content = {}, extra = {}) => ({ id, role: "activity", activityType, content, ...extra });
const sys = (id, content = "sys") => ({ id, role: "system", content });
const CLIENT = "@ag-ui/client";
const auth = (value) => ({ metadata: { [CLIENT]: value } });

// ---------------------------------------------------------------------------------------------
// 1. Hand-built scenarios.
function scenarios() {
  const S = (name, events) => add(`scenario/${name}`, events);

  // Text messages.
  S("text/basic", [RS(), TS("m1"), TC("m1", "Hel"), TC("m1", "lo"), TE("m1"), RF()]);
  S("text/content-unknown-id", [RS(), TC("nope", "x"), TE("nope"), TS("m1"), TC("m1", "a"), RF()]);
  S("text/content-before-start", [RS(), TC("m1", "early"), TS("m1"), TC("m1", "late"), TE("m1"), RF()]);
  S("text/reopened-id", [RS(), TS("m1"), TC("m1", "a"), TE("m1"), TS("m1"), TC("m1", "b"), TE("m1"), RF()]);
  S("text/reopened-other-role", [RS(), TS("m1"), TC("m1", "a"), TE("m1"), TS("m1", { role: "user" }), TC("m1", "b"), RF()]);
  S("text/roles", [RS(), TS("u", { role: "user" }), TS("s", { role: "system" }), TS("d", { role: "developer" }),
    TS("x", { role: undefined }), ev("TEXT_MESSAGE_START", { messageId: "y" }), TC("u", "1"), TC("x", "2"), RF()]);
  S("text/name", [RS(), TS("m1", { name: "bot" }), TS("m2", { name: "" }), TC("m1", "a"), RF()]);
  S("text/subagent", [RS(), TS("m1", { subagentRunId: "s1" }), TS("m2", { subagentRunId: null }), TC("m1", "a"), RF()]);
  S("text/interleaved", [RS(), TS("m1"), TS("m2"), TC("m2", "b"), TC("m1", "a"), TE("m1"), TC("m2", "c"), TE("m2"), RF()]);
  S("text/into-user-from-input", [RS("r1", { messages: [user("u1", "q")] }), TC("u1", "+more"), RF()]);
  S("text/into-reasoning", [RS(), RMS("r1"), RMC("r1", "th"), TC("r1", "+text"), TE("r1"), RF()]);
  S("text/into-tool-message", [RS(), CS("c1"), CR("t1", "c1", "res"), TC("t1", "+x"), TS("t1"), RF()]);
  S("text/into-array-content", [RS("r1", { messages: [user("u1", [{ type: "text", text: "x" }])] }), TC("u1", "y"), RF()]);
  S("text/into-activity", [RS(), AS("a1", "PLAN", { s: 1 }), TS("a1"), TC("a1", "x"), TE("a1", { metadata: { k: 1 } }), RF()]);
  S("text/empty-deltas", [RS(), TS("m1"), TC("m1", ""), TC("m1", ""), RF()]);
  S("text/unicode", [RS(), TS("m1"), TC("m1", "héllo 🎉"), TC("m1", "\u0000\n\"q\""), RF()]);
  S("text/no-run", [TS("m1"), TC("m1", "x"), TE("m1")]);
  S("text/id-collides-with-tool-call", [RS(), CS("c1"), TS("c1"), TC("c1", "text"), CA("c1", "{}"), RF()]);

  // Reasoning.
  S("reasoning/basic", [RS(), RST(), RMS("r1"), RMC("r1", "a"), RMC("r1", "b"), RME("r1"), REN(), RF()]);
  S("reasoning/unknown", [RS(), RMC("zz", "a"), RME("zz"), RF()]);
  S("reasoning/reopen-as-text", [RS(), RMS("r1"), RMC("r1", "a"), TS("r1"), TC("r1", "b"), RF()]);
  S("reasoning/start-existing-text", [RS(), TS("m1"), TC("m1", "a"), RMS("m1"), RMC("m1", "b"), RME("m1", { metadata: { x: 1 } }), RF()]);
  S("reasoning/subagent", [RS(), RMS("r1", { subagentRunId: "s1" }), RMC("r1", "a", { subagentRunId: "s1" }), RF()]);
  S("reasoning/into-activity", [RS(), AS("a1", "PLAN", {}), RMS("a1"), RMC("a1", "x"), RME("a1"), RF()]);
  S("reasoning/role-field", [RS(), ev("REASONING_MESSAGE_START", { messageId: "r1", role: "assistant" }), RMC("r1", "x"), RF()]);

  // Encrypted values.
  S("encrypted/message", [RS(), TS("m1"), REV("message", "m1", "E1"), REV("message", "m1", "E2"), RF()]);
  S("encrypted/reasoning", [RS(), RMS("r1"), RMC("r1", "x"), RME("r1"), REV("message", "r1", "E"), RF()]);
  S("encrypted/tool-call", [RS(), CS("c1"), CS("c2", "g", { parentMessageId: "c1" }), REV("tool-call", "c2", "E"), RF()]);
  S("encrypted/unknown", [RS(), TS("m1"), REV("message", "zz"), REV("tool-call", "zz"), REV("tool-call", "m1"), RF()]);
  S("encrypted/activity", [RS(), AS("a1", "PLAN", {}), REV("message", "a1", "E"), RF()]);
  S("encrypted/other-subtype", [RS(), TS("m1"), REV("whatever", "m1", "E"), RF()]);
  S("encrypted/tool-call-on-non-assistant", [RS(), MS([user("u1", "q", { toolCalls: [call("c9")] }), asst("a1", "", [call("c9")])]),
    REV("tool-call", "c9", "E"), RF()]);
  S("encrypted/metadata-not-merged", [RS(), TS("m1"), REV("message", "m1", "E", { metadata: { k: 1 } }), RF()]);
  S("encrypted/message-id-of-tool-call", [RS(), CS("c1"), REV("message", "c1", "E"), RF()]);
  S("encrypted/tool-result-message", [RS(), CS("c1"), CR("t1", "c1"), REV("message", "t1", "E"), RF()]);

  // Tool calls.
  S("tool/no-parent", [RS(), CS("c1"), CA("c1", "{\"a\":"), CA("c1", "1}"), CE("c1"), RF()]);
  S("tool/parent-missing", [RS(), CS("c1", "f", { parentMessageId: "p1" }), CS("c2", "g", { parentMessageId: "p1" }), RF()]);
  S("tool/parent-existing-assistant", [RS(), TS("m1"), TC("m1", "x"), TE("m1"), CS("c1", "f", { parentMessageId: "m1" }), CS("c2", "g", { parentMessageId: "m1" }), RF()]);
  S("tool/parent-is-user", [RS("r1", { messages: [user("u1")] }), CS("c1", "f", { parentMessageId: "u1" }), CA("c1", "x"), RF()]);
  S("tool/parent-is-user-and-id-taken", [RS("r1", { messages: [user("u1"), user("c1")] }), CS("c1", "f", { parentMessageId: "u1", subagentRunId: "s1" }), CA("c1", "x"), RF()]);
  S("tool/parent-is-activity", [RS(), AS("a1", "PLAN", {}), CS("c1", "f", { parentMessageId: "a1" }), RF()]);
  S("tool/parent-is-reasoning", [RS(), RMS("r1"), CS("c1", "f", { parentMessageId: "r1" }), RF()]);
  S("tool/parent-empty-string", [RS(), CS("c1", "f", { parentMessageId: "" }), RF()]);
  S("tool/parent-is-tool-call-id", [RS(), CS("c1"), CS("c2", "g", { parentMessageId: "c1" }), CS("c3", "h", { parentMessageId: "c2" }), RF()]);
  S("tool/parent-then-text-same-id", [RS(), CS("c1", "f", { parentMessageId: "m1" }), TS("m1"), TC("m1", "after"), RF()]);
  S("tool/renamed", [RS(), CS("c1", "f"), CA("c1", "{}"), CS("c1", "g"), CS("c1", "g", { metadata: { k: 1 } }), RF()]);
  S("tool/restart-other-parent", [RS(), CS("c1", "f", { parentMessageId: "m1" }), CS("c1", "f", { parentMessageId: "m2" }), RF()]);
  S("tool/args-unknown", [RS(), CA("zz", "x"), CE("zz", { metadata: { a: 1 } }), RF()]);
  S("tool/args-non-assistant-owner", [RS(), MS([user("u1", "q", { toolCalls: [call("c9", "f", "A")] })]), CA("c9", "B"), CE("c9", { metadata: { e: 1 } }), RF()]);
  S("tool/args-second-owner", [RS(), MS([asst("a1", "", [call("c9", "f", "A")]), asst("a2", "", [call("c9", "f", "Z")])]), CA("c9", "B"), RF()]);
  S("tool/subagent-created", [RS(), CS("c1", "f", { subagentRunId: "s1" }), CS("c2", "g", { parentMessageId: "c1", subagentRunId: "s2" }), CS("c3", "h", { parentMessageId: "p", subagentRunId: null }), RF()]);
  S("tool/metadata-on-call", [RS(), CS("c1", "f", { metadata: { a: 1 } }), CA("c1", "x", { metadata: { b: 2 } }), CE("c1", { metadata: { a: 3 } }), RF()]);
  S("tool/existing-assistant-toolcalls-null", [RS("r1", { messages: [asst("m1", "x", undefined, { toolCalls: null })] }), CS("c1", "f", { parentMessageId: "m1" }), RF()]);
  S("tool/start-twice-across-runs", [RS("r1"), CS("c1"), CA("c1", "{}"), CE("c1"), RF("r1"), RS("r2"), CS("c1"), CA("c1", "x"), RF("r2")]);

  // Tool results.
  S("result/after-owner", [RS(), CS("c1"), CE("c1"), TS("m1"), TC("m1", "text"), TE("m1"), CR("t1", "c1"), RF()]);
  S("result/after-consecutive-tools", [RS(), CS("c1"), CS("c2", "g", { parentMessageId: "c1" }), TS("m1"), CR("t1", "c1"), CR("t2", "c2"), CR("t3", "c1"), RF()]);
  S("result/unknown-call", [RS(), TS("m1"), CR("t1", "zz"), RF()]);
  S("result/owner-not-assistant", [RS(), MS([user("u1", "q", { toolCalls: [call("c9")] }), user("u2")]), CR("t1", "c9"), RF()]);
  S("result/owner-second-assistant", [RS(), MS([user("u1", "q", { toolCalls: [call("c9")] }), user("u2"), asst("a1", "", [call("c9")]), user("u3")]), CR("t1", "c9"), RF()]);
  S("result/role-variants", [RS(), CS("c1"), CR("t1", "c1", "a", { role: "" }), CR("t2", "c1", "b", { role: null }), CR("t3", "c1", "c", { role: "tool" }), CR("t4", "c1", "d", { role: "user" }), RF()]);
  S("result/same-message-id", [RS(), CS("c1"), CR("t1", "c1", "a"), CR("t1", "c1", "b"), TC("t1", "+"), RF()]);
  S("result/message-id-collides", [RS(), TS("m1"), CS("c1", "f", { parentMessageId: "m1" }), CR("m1", "c1"), TC("m1", "x"), RF()]);
  // A result inserted before two messages sharing an id: later content still lands on the first.
  S("result/inserted-before-a-shared-id", [RS(), CS("c1"), CE("c1"), TS("m1"), CR("m1", "zz"), CR("t1", "c1"), TC("m1", "x"), RF()]);
  S("result/subagent-and-metadata", [RS(), CS("c1"), CR("t1", "c1", "x", { subagentRunId: "s1", metadata: { k: 1 } }), CR("t2", "c1", "y", { subagentRunId: null }), RF()]);
  S("result/content-missing", [RS(), CS("c1"), ev("TOOL_CALL_RESULT", { messageId: "t1", toolCallId: "c1" }), RF()]);
  S("result/between-tools-then-assistant", [RS(), CS("c1"), CR("t1", "c1"), CS("c2"), CR("t2", "c2"), CR("t3", "c1"), RF()]);
  S("result/into-snapshot-history", [RS(), MS([asst("a1", "", [call("c1"), call("c2")]), toolMsg("t1", "c1"), user("u1")]), CR("t2", "c2"), RF()]);
  S("result/many", [RS(), CS("c1"), CS("c2", "g", { parentMessageId: "c1" }), CS("c3", "h", { parentMessageId: "c1" }), CR("t3", "c3"), CR("t1", "c1"), CR("t2", "c2"), TS("m9"), CR("t4", "c2"), RF()]);

  // Messages snapshots.
  const hist = [RS(), TS("m1"), TC("m1", "a"), TE("m1"), RMS("r1"), RMC("r1", "th"), RME("r1"), AS("a1", "PLAN", { s: 1 }), AS("a2", "SEARCH", { q: 1 }), TS("m2"), TC("m2", "b")];
  S("snapshot/replace-remove-append", [...hist, MS([user("u0"), asst("m2", "B")]), RF()]);
  S("snapshot/empty", [...hist, MS([]), RF()]);
  S("snapshot/with-activity", [...hist, MS([act("a9", "PLAN", {})]), RF()]);
  S("snapshot/with-reasoning", [...hist, MS([reason("r9")]), RF()]);
  S("snapshot/update-activity-by-id", [...hist, MS([act("a1", "OTHER", { n: 2 })]), RF()]);
  S("snapshot/activity-id-as-text", [...hist, MS([asst("a1", "now text")]), RF()]);
  for (const [label, meta] of [
    ["absent-key", {}], ["null", null], ["list-plan", ["PLAN"]], ["list-empty", []], ["list-other", ["OTHER"]],
    ["list-non-string", ["PLAN", 1]], ["string", "PLAN"], ["number", 5], ["object", { PLAN: true }],
  ]) {
    const m = label === "absent-key" ? auth({}) : auth({ authoritativeActivityTypes: meta });
    S(`snapshot/authority-${label}`, [...hist, MS([user("u0")], m), RF()]);
    S(`snapshot/authority-${label}-with-activity`, [...hist, MS([user("u0"), act("a3", "SEARCH", {})], m), RF()]);
  }
  for (const [label, value] of [["null", null], ["string", "x"], ["array", []], ["number", 1], ["true", true], ["false", false], ["empty-string", ""]]) {
    S(`snapshot/authority-value-${label}`, [...hist, MS([user("u0")], auth(value)), RF()]);
  }
  for (const [label, metadata] of [["null", null], ["string", "x"], ["array", [CLIENT]], ["other-key", { other: 1 }], ["empty", {}]]) {
    S(`snapshot/metadata-${label}`, [...hist, MS([user("u0")], { metadata }), RF()]);
  }
  S("snapshot/duplicate-ids-in-snapshot", [...hist, MS([user("d1", "first"), user("d1", "second"), asst("m1", "X"), asst("m1", "Y")]), RF()]);
  S("snapshot/duplicate-ids-then-append", [RS(), MS([user("d1", "first"), user("d1", "second")]), TC("d1", "+"), RF()]);
  S("snapshot/duplicate-history-aliasing", [RS(), MS([user("d1", "first"), user("d1", "second")]), MS([user("d1", "one")]), TC("d1", "+x"), RF()]);
  S("snapshot/duplicate-history-aliasing-metadata", [RS(), MS([asst("d1", "a"), asst("d1", "b")]), MS([asst("d1", "c")]), TE("d1", { metadata: { k: 1 } }), REV("message", "d1", "E"), RF()]);
  S("snapshot/duplicate-history-aliasing-tool-calls", [RS(), MS([asst("d1", "", [call("c1")]), asst("d1", "", [call("c2")])]), MS([asst("d1", "", [call("c1")])]), CA("c1", "X"), CS("c1", "renamed"), RF()]);
  S("snapshot/subagent-null", [RS(), MS([user("u1", "q", { subagentRunId: null }), user("u2", "q", { subagentRunId: "s1" })]), RF()]);
  S("snapshot/then-stream", [RS(), MS([asst("m1", "x", [call("c1")])]), CA("c1", "more"), TC("m1", "+y"), CR("t1", "c1"), RF()]);
  S("snapshot/replaces-streamed-tool-call", [RS(), CS("c1"), CA("c1", "{}"), MS([asst("c1", "replaced")]), CA("c1", "x"), CR("t1", "c1"), RF()]);
  S("snapshot/keeps-order", [RS("r1", { messages: [user("u1"), user("u2"), user("u3")] }), MS([user("u3", "3"), user("u1", "1"), user("u4")]), RF()]);
  S("snapshot/activity-reasoning-kept-order", [...hist, MS([user("u0"), asst("m1", "A")]), AS("a4", "PLAN", {}), MS([asst("m1", "A2")]), RF()]);
  S("snapshot/twice-authority-narrowing", [...hist, MS([act("a3", "PLAN", {})], auth({ authoritativeActivityTypes: ["PLAN"] })), MS([], auth({ authoritativeActivityTypes: ["SEARCH"] })), RF()]);
  S("snapshot/activity-without-type", [RS(), AS("a1", undefined, {}), MS([], auth({ authoritativeActivityTypes: ["PLAN"] })), RF()]);

  // Activities.
  S("activity/replace-absent", [RS(), AS("a1", "PLAN", { a: 1 }), AS("a1", "PLAN2", { b: 2 }), RF()]);
  S("activity/replace-true", [RS(), AS("a1", "PLAN", { a: 1 }), AS("a1", "PLAN", { b: 2 }, { replace: true }), RF()]);
  S("activity/replace-false", [RS(), AS("a1", "PLAN", { a: 1 }), AS("a1", "PLAN2", { b: 2 }, { replace: false, metadata: { k: 1 } }), RF()]);
  S("activity/replace-null", [RS(), AS("a1", "PLAN", { a: 1 }), AS("a1", "PLAN", { b: 2 }, { replace: null }), RF()]);
  S("activity/replace-falsy-values", [RS(), AS("a1", "P", { a: 1 }), AS("a1", "P", { b: 0 }, { replace: 0 }), AS("a1", "P", { c: 0 }, { replace: "" }), AS("a1", "P", { d: 0 }, { replace: "no" }), RF()]);
  S("activity/replace-false-new", [RS(), AS("a1", "PLAN", { a: 1 }, { replace: false }), RF()]);
  S("activity/over-text-replace", [RS(), TS("m1"), TC("m1", "x"), AS("m1", "PLAN", { a: 1 }), RF()]);
  S("activity/over-text-no-replace", [RS(), TS("m1"), TC("m1", "x"), AS("m1", "PLAN", { a: 1 }, { replace: false, metadata: { k: 1 } }), RF()]);
  S("activity/over-tool-call-owner", [RS(), CS("c1"), AS("c1", "PLAN", {}), CA("c1", "x"), CR("t1", "c1"), CS("c1"), RF()]);
  S("activity/subagent-transfer", [RS(), AS("a1", "P", {}, { subagentRunId: "s1", metadata: { a: 1 } }), AS("a1", "P", { x: 1 }, { metadata: { b: 2 } }), AS("a1", "P", {}, { subagentRunId: "s2", replace: false }), RF()]);
  S("activity/subagent-reclaim", [RS(), AS("a1", "P", {}), AS("a1", "P", { y: 1 }, { subagentRunId: "s1" }), AS("a1", "P", {}, { subagentRunId: null }), RF()]);
  S("activity/content-missing", [RS(), AS("a1", "P", undefined), AD("a1", "P", [{ op: "add", path: "/x", value: 1 }]), RF()]);
  S("activity/content-null", [RS(), AS("a1", "P", null), AD("a1", "Q", [{ op: "add", path: "/x", value: 1 }]), RF()]);
  S("activity/content-array", [RS(), AS("a1", "P", [1, 2]), AD("a1", "P", [{ op: "add", path: "/-", value: 3 }]), RF()]);
  S("activity/delta-applies", [RS(), AS("a1", "P", { steps: [{ done: false }] }), AD("a1", "P2", [{ op: "replace", path: "/steps/0/done", value: true }, { op: "add", path: "/steps/-", value: { done: false } }]), RF()]);
  S("activity/delta-fails", [RS(), AS("a1", "P", { steps: [] }), AD("a1", "P2", [{ op: "add", path: "/steps/-", value: 1 }, { op: "replace", path: "/nope", value: 1 }], { metadata: { kept: 1 } }), RF()]);
  S("activity/delta-unknown", [RS(), AD("a9", "P", [{ op: "add", path: "/x", value: 1 }]), RF()]);
  S("activity/delta-on-text", [RS(), TS("m1"), AD("m1", "P", [{ op: "add", path: "/x", value: 1 }], { metadata: { k: 1 } }), RF()]);
  S("activity/delta-patch-missing", [RS(), AS("a1", "P", { a: 1 }), ev("ACTIVITY_DELTA", { messageId: "a1", activityType: "NEW" }), RF()]);
  S("activity/delta-patch-null", [RS(), AS("a1", "P", { a: 1 }), ev("ACTIVITY_DELTA", { messageId: "a1", activityType: "NEW", patch: null }), RF()]);
  S("activity/delta-patch-object", [RS(), AS("a1", "P", { a: 1 }), ev("ACTIVITY_DELTA", { messageId: "a1", activityType: "NEW", patch: {} }), RF()]);
  S("activity/delta-type-missing", [RS(), AS("a1", "P", { a: 1 }), ev("ACTIVITY_DELTA", { messageId: "a1", patch: [] }), RF()]);
  S("activity/delta-root", [RS(), AS("a1", "P", { a: 1 }), AD("a1", "P", [{ op: "replace", path: "", value: [1] }]), AD("a1", "P", [{ op: "remove", path: "" }]), AD("a1", "P", [{ op: "add", path: "/z", value: 1 }]), RF()]);
  S("activity/delta-metadata-then-fail", [RS(), AS("a1", "P", {}, { metadata: { a: 1 } }), AD("a1", "P", [{ op: "remove", path: "/x" }], { metadata: { b: 1 } }), RF()]);
  S("activity/subagent-on-create", [RS(), AS("a1", "P", {}, { subagentRunId: "s1" }), AS("a2", "P", {}, { subagentRunId: null }), RF()]);
  S("activity/in-input", [RS("r1", { messages: [act("a1", "PLAN", { a: 1 })] }), AD("a1", "PLAN", [{ op: "add", path: "/b", value: 2 }]), RF()]);

  // Metadata merging on every kind.
  const M = (k, v = 1) => ({ metadata: { [k]: v } });
  S("metadata/text", [RS(), TS("m1", M("a")), TC("m1", "x", M("b")), TC("m1", "y", M("a", 2)), TE("m1", M("c", { deep: [1] })), TE("m1", { metadata: {} }), RF()]);
  S("metadata/reasoning", [RS(), RMS("r1", M("a")), RMC("r1", "x", M("b")), RME("r1", M("a", null)), RF()]);
  S("metadata/start-existing", [RS(), TS("m1"), TS("m1", M("a")), RMS("m1", M("b")), RF()]);
  S("metadata/tool", [RS(), CS("c1", "f", M("a")), CA("c1", "x", M("b")), CE("c1", M("c")), CS("c1", "f", M("d")), RF()]);
  S("metadata/tool-parent-not-touched", [RS(), TS("m1", M("p")), CS("c1", "f", { parentMessageId: "m1", ...M("c") }), RF()]);
  S("metadata/result", [RS(), CS("c1"), CR("t1", "c1", "x", M("r")), RF()]);
  S("metadata/activity", [RS(), AS("a1", "P", {}, M("a")), AS("a1", "P", { x: 1 }, M("b")), AD("a1", "P", [], M("c")), RF()]);
  S("metadata/run-level-ignored", [RS("r1"), ev("STEP_STARTED", { stepName: "s", metadata: { k: 1 } }), SS({ a: 1 }), ev("STATE_DELTA", { delta: [], metadata: { x: 1 } }), TS("m1"), RF("r1", M("z"))]);
  S("metadata/existing-from-snapshot", [RS(), MS([asst("m1", "x", undefined, M("old")), user("u1", "q", { metadata: { keep: 1 } })]), TC("m1", "y", M("new")), TE("u1", M("k2")), RF()]);
  S("metadata/existing-null", [RS(), MS([asst("m1", "x", undefined, { metadata: null })]), TC("m1", "y", M("new")), RF()]);
  S("metadata/proto-keys", [RS(), TS("m1", { metadata: { __proto__x: 1, constructor: 2, toString: 3 } }), TC("m1", "x", { metadata: { constructor: 4 } }), RF()]);
  S("metadata/numeric-keys", [RS(), TS("m1", { metadata: { b: 1, 2: "two", 1: "one", a: 0 } }), TC("m1", "x", { metadata: { 0: "z" } }), RF()]);
  S("metadata/chunks", [RS(), TK({ messageId: "m1", delta: "a", metadata: { a: 1 } }), TK({ delta: "b", metadata: { b: 1 } }), TK({ metadata: { c: 1 } }), TK({ messageId: "m2", delta: "x", metadata: { d: 1 } }), RF()]);
  S("metadata/tool-chunks", [RS(), CK({ toolCallId: "c1", toolCallName: "f", delta: "a", metadata: { a: 1 } }), CK({ metadata: { b: 1 } }), CK({ delta: "b" }), RF()]);
  S("metadata/reasoning-chunks", [RS(), RK({ messageId: "r1", metadata: { a: 1 } }), RK({ delta: "x", metadata: { b: 1 } }), RK({ rawEvent: { p: 1 } }), RF()]);

  // RUN_STARTED input.
  S("input/basic", [RS("r1", { threadId: "t", runId: "r1", messages: [user("u1"), asst("a1", "x")], state: { s: 1 } }), TS("m1"), RF()]);
  S("input/duplicates-with-history", [RS("r1", { messages: [user("u1")] }), TS("m1"), TC("m1", "x"), RF("r1"),
    RS("r2", { messages: [user("u1", "changed"), asst("m1", "server copy"), user("u2")] }), RF("r2")]);
  S("input/duplicates-within", [RS("r1", { messages: [user("u1", "a"), user("u1", "b"), user("u2")] }), RF()]);
  S("input/subagent-null", [RS("r1", { messages: [user("u1", "a", { subagentRunId: null }), user("u2", "b", { subagentRunId: "s" })] }), RF()]);
  S("input/state-only-first-run", [RS("r1", { state: { a: 1 } }), RF("r1"), RS("r2", { state: { b: 2 } }), RF("r2")]);
  S("input/state-null", [RS("r1", { state: null }), SD([{ op: "add", path: "/a", value: 1 }]), RF()]);
  S("input/state-null-root-add", [RS("r1", { state: null }), SD([{ op: "add", path: "", value: { a: 1 } }]), RF()]);
  S("input/no-input", [RS("r1"), SD([{ op: "add", path: "/a", value: 1 }]), RF()]);
  S("input/state-primitive", [RS("r1", { state: 5 }), RF()]);
  S("input/messages-empty", [RS("r1", { messages: [] }), RF()]);
  S("input/events-before-first-run", [SS({ pre: 1 }), TS("m0"), RS("r1", { state: { s: 1 }, messages: [user("u1")] }), RF()]);
  S("input/delta-before-first-run", [SD([{ op: "add", path: "/pre", value: 1 }]), RS("r1", { state: { s: 1 } }), RF()]);
  S("input/second-run-input-after-snapshot", [RS("r1"), MS([user("u1"), user("u2")]), RF("r1"), RS("r2", { messages: [user("u2", "x"), user("u3")] }), RF("r2")]);
  S("input/activity-and-reasoning", [RS("r1", { messages: [act("a1", "P", {}), reason("r0")] }), MS([user("u1")]), RF()]);

  // State.
  S("state/snapshot-null", [RS(), SS({ a: 1 }), SS(null), RF()]);
  S("state/snapshot-null-then-delta", [RS(), SS(null), SD([{ op: "add", path: "/a", value: 1 }]), RF()]);
  S("state/snapshot-null-then-root-delta", [RS(), SS(null), SD([{ op: "replace", path: "", value: { a: 1 } }]), RF()]);
  S("state/delta-before-any-state", [RS(), SD([{ op: "add", path: "/a", value: 1 }]), RF()]);
  S("state/delta-root-before-any-state", [RS(), SD([{ op: "add", path: "", value: { a: 1 } }]), SD([{ op: "add", path: "/b", value: 2 }]), RF()]);
  S("state/delta-test-root-null", [RS(), SD([{ op: "test", path: "", value: null }, { op: "add", path: "", value: 1 }]), RF()]);
  S("state/delta-remove-root", [RS(), SS({ a: 1 }), SD([{ op: "remove", path: "" }]), RF()]);
  S("state/delta-remove-root-then-add", [RS(), SS({ a: 1 }), SD([{ op: "remove", path: "" }]), SD([{ op: "add", path: "/b", value: 1 }]), RF()]);
  S("state/delta-applies", [RS(), SS({ n: 1, items: [] }), SD([{ op: "add", path: "/items/-", value: "a" }, { op: "replace", path: "/n", value: 2 }]), RF()]);
  S("state/delta-fails-atomically", [RS(), SS({ n: 1, items: [] }), SD([{ op: "add", path: "/items/-", value: "a" }, { op: "replace", path: "/missing", value: 1 }]), RF()]);
  S("state/delta-not-array", [RS(), SS({ n: 1 }), ev("STATE_DELTA", { delta: { op: "add", path: "/x", value: 1 } }), RF()]);
  S("state/delta-missing", [RS(), SS({ n: 1 }), ev("STATE_DELTA", {}), RF()]);
  S("state/delta-null", [RS(), SS({ n: 1 }), ev("STATE_DELTA", { delta: null }), RF()]);
  S("state/delta-empty", [RS(), SS({ n: 1 }), SD([]), RF()]);
  S("state/many-runs", [RS("r1", { state: { a: 1 } }), SD([{ op: "add", path: "/b", value: 1 }]), RF("r1"), RS("r2", { state: { z: 9 } }), SD([{ op: "add", path: "/c", value: 1 }]), RF("r2")]);
  S("state/primitive-root-deltas", [RS(), SS("abc"), SD([{ op: "test", path: "/0", value: "a" }]), SD([{ op: "add", path: "/x", value: 1 }]), RF()]);
  S("state/number-root-deltas", [RS(), SS(0), SD([{ op: "replace", path: "/x", value: 1 }]), SD([{ op: "add", path: "", value: { ok: 1 } }]), RF()]);
  S("state/snapshot-array", [RS(), SS([1, 2]), SD([{ op: "add", path: "/-", value: 3 }, { op: "move", from: "/0", path: "/-" }]), RF()]);
  S("state/op-tostring-then-delta", [RS(), SS({ a: 1 }), SD([{ op: "toString", path: "/a" }]), SD([{ op: "add", path: "/b", value: 1 }]), RF()]);
  S("state/op-tostring-last", [RS(), SS({ a: 1 }), SD([{ op: "toString", path: "/a" }]), RF()]);
  S("state/copy-missing-to-root-then-delta", [RS(), SS({ a: 1 }), SD([{ op: "copy", from: "/zz", path: "" }]), SD([{ op: "add", path: "/b", value: 1 }]), RF()]);
  S("state/snapshot-missing-field", [RS(), SS({ a: 1 }), ev("STATE_SNAPSHOT", {}), RF()]);
  S("state/snapshot-missing-field-then-delta", [RS(), SS({ a: 1 }), ev("STATE_SNAPSHOT", {}), SD([{ op: "add", path: "", value: 7 }]), RF()]);
  add("scenario/state/numbers-as-written", [
    `{"type":"RUN_STARTED","threadId":"t","runId":"r1","input":{"state":{"n":1.0,"f":2.50,"e":1e2}}}`,
    `{"type":"STATE_DELTA","delta":[{"op":"test","path":"/n","value":1},{"op":"test","path":"/e","value":100.0},{"op":"replace","path":"/f","value":-0.0}]}`,
    `{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"P","content":{"x":1.10}}`,
    `{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"P","patch":[{"op":"test","path":"/x","value":1.1}]}`,
    `{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}`,
  ]);

  // Several runs, errors, steps, subagents, unknown events.
  S("runs/three", [RS("r1"), TS("m1"), TC("m1", "a"), TE("m1"), RF("r1"), RS("r2"), CS("c1"), RF("r2"), RS("r3"), CR("t1", "c1"), RE()]);
  S("runs/error-mid-message", [RS("r1"), TK({ messageId: "m1", delta: "a" }), RE(), TK({ messageId: "m1", delta: "b" }), RF()]);
  S("runs/outcomes", [RS("r1"), CS("c1"), RF("r1", { outcome: { type: "interrupt", interrupts: [{ id: "i1", reason: "x" }] } }), RS("r2"), RF("r2", { outcome: { type: "success", pendingToolCallIds: ["c1"] } })]);
  S("runs/steps-custom-raw", [RS(), STP(), CU(), RAW(), TS("m1"), STF(), RF()]);
  S("runs/thinking-legacy", [RS(), ev("THINKING_START", {}), ev("THINKING_TEXT_MESSAGE_START", {}), ev("THINKING_TEXT_MESSAGE_CONTENT", { delta: "x" }), ev("THINKING_TEXT_MESSAGE_END", {}), ev("THINKING_END", {}), TS("m1"), RF()]);
  S("runs/unknown-type", [RS(), ev("SOMETHING_NEW", { messageId: "m1" }), TS("m1"), ev("text_message_start", { messageId: "m2" }), RF()]);
  S("runs/subagents", [RS(), SGS("s1"), TS("m1", { subagentRunId: "s1" }), TC("m1", "a", { subagentRunId: "s1" }), SGF("s1"), SGS("s2"), CS("c1", "f", { subagentRunId: "s2" }), SGE("s2"), RF()]);
}

// ---------------------------------------------------------------------------------------------
// 2. Chunk scenarios: all three kinds, interleaved with other events and across lanes.
function chunkScenarios() {
  const S = (name, events) => add(`chunks/${name}`, events);
  S("text/basic", [RS(), TK({ messageId: "m1", delta: "a" }), TK({ delta: "b" }), TK({ messageId: "m1", delta: "c" }), RF()]);
  S("text/new-id-closes", [RS(), TK({ messageId: "m1", delta: "a" }), TK({ messageId: "m2", delta: "b" }), TK({ delta: "c" }), RF()]);
  S("text/role-name", [RS(), TK({ messageId: "m1", role: "user", name: "n", delta: "a" }), TK({ role: "user", name: "n", delta: "b" }), RF()]);
  S("text/no-delta-opener", [RS(), TK({ messageId: "m1" }), TK({ delta: "x" }), RF()]);
  S("text/raw-event-only", [RS(), TK({ messageId: "m1", rawEvent: { p: 1 } }), TK({ rawEvent: { q: 1 } }), RF()]);
  S("text/empty-id", [RS(), TK({ messageId: "m1", delta: "a" }), TK({ messageId: "", delta: "b" }), TK({ delta: "c" }), RF()]);
  S("text/closed-by-explicit-start", [RS(), TK({ messageId: "m1", delta: "a" }), TS("m2"), TK({ messageId: "m1", delta: "b" }), RF()]);
  S("text/existing-message", [RS(), TS("m1"), TC("m1", "x"), TE("m1"), TK({ messageId: "m1", delta: "y" }), TK({ delta: "z" }), RF()]);
  S("text/over-activity", [RS(), AS("a1", "P", {}), TK({ messageId: "a1", delta: "y" }), RF()]);
  S("text/not-closed-by-activity", [RS(), TK({ messageId: "m1", delta: "a" }), AS("a1", "P", {}), TK({ delta: "b" }), REV("message", "m1", "E"), TK({ delta: "c" }), RF()]);
  S("text/closed-by-snapshot", [RS(), TK({ messageId: "m1", delta: "a" }), MS([user("u1")]), TK({ messageId: "m1", delta: "b" }), RF()]);
  S("text/closed-by-state", [RS(), TK({ messageId: "m1", delta: "a" }), SS({}), TK({ messageId: "m2", delta: "b" }), TK({ delta: "c" }), RF()]);
  S("text/other-lane-explicit", [RS(), TK({ messageId: "m1", delta: "a" }), TS("m2", { subagentRunId: "s1" }), TK({ delta: "b" }), RF()]);
  S("text/delta-null", [RS(), TK({ messageId: "m1", delta: null }), RF()]);
  S("text/role-null", [RS(), TK({ messageId: "m1", role: null, delta: "a" }), RF()]);
  S("text/remainder", [RS(), TK({ messageId: "m1", delta: "a", toolCallId: "x", extra: 1 }), TK({ extra: 2 }), RF()]);
  S("tool/basic", [RS(), CK({ toolCallId: "c1", toolCallName: "f", delta: "{" }), CK({ delta: "}" }), CK({ toolCallId: "c1", delta: "!" }), RF()]);
  S("tool/parent", [RS(), TK({ messageId: "m1", delta: "a" }), CK({ toolCallId: "c1", toolCallName: "f", parentMessageId: "m1", delta: "x" }), CK({ toolCallId: "c2", toolCallName: "g", parentMessageId: "m1" }), RF()]);
  S("tool/parent-missing", [RS(), CK({ toolCallId: "c1", toolCallName: "f", parentMessageId: "p1", delta: "x" }), RF()]);
  S("tool/second-call-closes-first", [RS(), CK({ toolCallId: "c1", toolCallName: "f", delta: "a" }), CK({ toolCallId: "c2", toolCallName: "g", delta: "b" }), CK({ delta: "c" }), RF()]);
  S("tool/restart-existing", [RS(), CS("c1", "f"), CA("c1", "x"), CE("c1"), CK({ toolCallId: "c1", toolCallName: "h", delta: "y" }), RF()]);
  S("tool/result-between", [RS(), CK({ toolCallId: "c1", toolCallName: "f", delta: "a" }), CR("t1", "c1"), CK({ toolCallId: "c1", toolCallName: "f", delta: "b" }), RF()]);
  S("tool/text-and-tool-same-lane", [RS(), TK({ messageId: "m1", delta: "a" }), CK({ toolCallId: "c1", toolCallName: "f", delta: "x" }), TK({ messageId: "m1", delta: "b" }), RF()]);
  S("reasoning/basic", [RS(), RK({ messageId: "r1", delta: "a" }), RK({ delta: "b" }), REN("r1"), RK({ messageId: "r2", delta: "c" }), RF()]);
  S("reasoning/with-text", [RS(), RK({ messageId: "r1", delta: "a" }), TK({ messageId: "m1", delta: "b" }), RK({ messageId: "r1", delta: "c" }), RF()]);
  S("reasoning/role-remainder", [RS(), RK({ messageId: "r1", role: "assistant", delta: "a" }), RF()]);
  S("lanes/two-subagents", [RS(), TK({ messageId: "m1", delta: "a", subagentRunId: "s1" }), TK({ messageId: "m2", delta: "b", subagentRunId: "s2" }),
    TK({ delta: "c", subagentRunId: "s1" }), TK({ delta: "d", subagentRunId: "s2" }), SGF("s1"), TK({ delta: "e", subagentRunId: "s2" }), RF()]);
  S("lanes/parent-and-subagent", [RS(), TK({ messageId: "m1", delta: "a" }), TK({ messageId: "m2", delta: "b", subagentRunId: "s1" }), TK({ delta: "c" }), TK({ delta: "d", subagentRunId: "s1" }), RF()]);
  S("lanes/sole-open-fallback", [RS(), TK({ messageId: "m1", delta: "a", subagentRunId: "s1" }), TK({ delta: "b" }), RF()]);
  S("lanes/named-id-other-lane", [RS(), TK({ messageId: "m1", delta: "a", subagentRunId: "s1" }), TK({ messageId: "m1", delta: "b" }), RF()]);
  S("lanes/tool-in-subagent", [RS(), CK({ toolCallId: "c1", toolCallName: "f", delta: "a", subagentRunId: "s1" }), CK({ toolCallId: "c2", toolCallName: "g", delta: "b" }), CK({ delta: "c", subagentRunId: "s1" }), CK({ delta: "d" }), RF()]);
  S("lanes/subagent-error-closes", [RS(), RK({ messageId: "r1", delta: "a", subagentRunId: "s1" }), SGE("s1"), RK({ messageId: "r2", delta: "b", subagentRunId: "s1" }), RF()]);
  S("lanes/subagent-finished-no-id", [RS(), TK({ messageId: "m1", delta: "a" }), ev("SUBAGENT_FINISHED", {}), TK({ delta: "b" }), RF()]);
  S("lanes/explicit-event-null-owner", [RS(), TK({ messageId: "m1", delta: "a", subagentRunId: "s1" }), TS("m2", { subagentRunId: null }), TK({ delta: "b", subagentRunId: "s1" }), RF()]);
  S("lanes/metadata-only-continuation-subagent", [RS(), TK({ messageId: "m1", delta: "a", subagentRunId: "s1" }), TK({ metadata: { u: 1 } }), RF()]);
  S("lanes/run-boundary", [RS("r1"), TK({ messageId: "m1", delta: "a", subagentRunId: "s1" }), RF("r1"), RS("r2"), TK({ messageId: "m1", delta: "b", subagentRunId: "s2" }), RF("r2")]);
  S("no-run", [TK({ messageId: "m1", delta: "a" }), TK({ delta: "b" }), CK({ toolCallId: "c1", toolCallName: "f" })]);
}

// ---------------------------------------------------------------------------------------------
// 3. Random streams over small id pools.
const MSG = ["m1", "m2", "m3", "c1", "t1", "a1"];
const TOOL = ["c1", "c2", "c3"];
const RESULT = ["t1", "t2", "t3", "m1"];
const ACT = ["a1", "a2", "m2"];
const SUB = [undefined, undefined, undefined, "s1", "s2"];
const DELTAS = ["a", "b", "xy", "", " ", "{\"k\":", "1}"];
const randMeta = () => (chance(0.75) ? undefined : pick([{ k: int(3) }, { u: { t: int(9) } }, {}, { k: null }, { "ag-ui": { x: 1 } }]));

function randState(depth = 0) {
  const r = rand();
  if (depth === 0) {
    if (r < 0.05) return null;
    if (r < 0.1) return pick([0, "s", [1, 2]]);
    return { n: int(5), items: Array.from({ length: int(3) }, () => randState(2)), o: { x: int(3) } };
  }
  if (depth > 2 || r < 0.5) return pick([0, 1, 2.5, "x", true, null]);
  if (r < 0.75) return [randState(depth + 1)];
  return { x: randState(depth + 1) };
}
const STATE_PATHS = ["", "/n", "/items", "/items/-", "/items/0", "/items/1", "/items/5", "/o", "/o/x", "/o/y", "/missing", "/missing/x", "/0", "/-"];
function randPatch(paths = STATE_PATHS) {
  const ops = [];
  for (let i = 0, n = 1 + int(3); i < n; i++) {
    const op = pick(["add", "add", "replace", "remove", "test", "move", "copy"]);
    const o = { op, path: pick(paths) };
    if (op === "move" || op === "copy") o.from = pick(paths);
    // Moving the root into itself makes a cycle, which fold.mjs cannot print.
    if (op === "move" && o.from === "" && o.path !== "") o.from = paths[1];
    if (op === "add" || op === "replace" || op === "test") o.value = randState(1 + int(2));
    ops.push(o);
  }
  return ops;
}
function randMessage() {
  const id = pick([...MSG, "u1", "u2", "r1", "a2"]);
  const extra = chance(0.15) ? { metadata: { m: int(3) } } : chance(0.1) ? { subagentRunId: pick([null, "s1"]) } : {};
  switch (pick(["user", "user", "assistant", "assistant", "tool", "system", "reasoning", "activity"])) {
    case "user": return user(id, pick(["q", "w"]), extra);
    case "assistant": return asst(id, chance(0.7) ? "ans" : undefined,
      chance(0.5) ? Array.from({ length: 1 + int(2) }, () => call(pick(TOOL), pick(["f", "g"]), pick(["{}", ""]))) : undefined, extra);
    case "tool": return toolMsg(id, pick(TOOL), "res", extra);
    case "system": return sys(id);
    case "reasoning": return reason(id, "th", extra);
    default: return act(pick(ACT), pick(["PLAN", "SEARCH"]), { v: int(3) }, extra);
  }
}
const randMessages = () => Array.from({ length: int(5) }, randMessage);
function randAuthority() {
  const r = rand();
  if (r < 0.4) return {};
  if (r < 0.5) return { metadata: { other: 1 } };
  if (r < 0.6) return auth({});
  const types = pick([null, ["PLAN"], ["SEARCH"], [], ["PLAN", "SEARCH"], "PLAN", [1], { PLAN: 1 }]);
  return auth({ authoritativeActivityTypes: types });
}

const GENERATORS = {
  RUN_STARTED: () => RS(`r${int(3)}`, chance(0.5) ? clean({ threadId: "t", runId: "r", messages: chance(0.6) ? randMessages() : undefined, state: chance(0.4) ? randState() : undefined }) : undefined),
  RUN_FINISHED: () => RF("r"),
  RUN_ERROR: () => RE(),
  TEXT_MESSAGE_START: () => TS(pick(MSG), clean({ role: chance(0.8) ? "assistant" : pick(["user", "system", "developer"]), name: chance(0.1) ? "nm" : undefined, subagentRunId: pick(SUB), metadata: randMeta() })),
  TEXT_MESSAGE_CONTENT: () => TC(pick(MSG), pick(DELTAS), clean({ metadata: randMeta() })),
  TEXT_MESSAGE_END: () => TE(pick(MSG), clean({ metadata: randMeta() })),
  TEXT_MESSAGE_CHUNK: () => TK(clean({ messageId: chance(0.6) ? pick(MSG) : undefined, delta: chance(0.85) ? pick(DELTAS) : undefined, subagentRunId: pick(SUB), metadata: randMeta() })),
  REASONING_START: () => RST(pick(MSG)),
  REASONING_END: () => REN(pick(MSG)),
  REASONING_MESSAGE_START: () => RMS(pick(MSG), clean({ subagentRunId: pick(SUB), metadata: randMeta() })),
  REASONING_MESSAGE_CONTENT: () => RMC(pick(MSG), pick(DELTAS), clean({ metadata: randMeta() })),
  REASONING_MESSAGE_END: () => RME(pick(MSG), clean({ metadata: randMeta() })),
  REASONING_MESSAGE_CHUNK: () => RK(clean({ messageId: chance(0.6) ? pick(MSG) : undefined, delta: chance(0.85) ? pick(DELTAS) : undefined, subagentRunId: pick(SUB), metadata: randMeta() })),
  REASONING_ENCRYPTED_VALUE: () => REV(pick(["message", "tool-call"]), pick([...MSG, ...TOOL]), `E${int(9)}`),
  TOOL_CALL_START: () => CS(pick(TOOL), pick(["f", "g"]), clean({ parentMessageId: chance(0.5) ? pick([...MSG, "p1", ""]) : undefined, subagentRunId: pick(SUB), metadata: randMeta() })),
  TOOL_CALL_ARGS: () => CA(pick(TOOL), pick(DELTAS), clean({ metadata: randMeta() })),
  TOOL_CALL_END: () => CE(pick(TOOL), clean({ metadata: randMeta() })),
  TOOL_CALL_CHUNK: () => CK(clean({ toolCallId: chance(0.6) ? pick(TOOL) : undefined, toolCallName: chance(0.5) ? "f" : undefined, parentMessageId: chance(0.3) ? pick(MSG) : undefined, delta: chance(0.8) ? pick(DELTAS) : undefined, subagentRunId: pick(SUB), metadata: randMeta() })),
  TOOL_CALL_RESULT: () => CR(pick(RESULT), pick(TOOL), "res", clean({ role: chance(0.1) ? "tool" : undefined, subagentRunId: chance(0.1) ? "s1" : undefined, metadata: randMeta() })),
  STATE_SNAPSHOT: () => SS(randState()),
  STATE_DELTA: () => SD(randPatch()),
  MESSAGES_SNAPSHOT: () => MS(randMessages(), randAuthority()),
  ACTIVITY_SNAPSHOT: () => AS(pick(ACT), pick(["PLAN", "SEARCH"]), chance(0.9) ? { v: int(3), list: [] } : null, clean({ replace: pick([undefined, undefined, true, false, null]), subagentRunId: pick(SUB), metadata: randMeta() })),
  ACTIVITY_DELTA: () => AD(pick(ACT), pick(["PLAN", "SEARCH"]), randPatch(["", "/v", "/list/-", "/list/0", "/w", "/missing/x"]), clean({ metadata: randMeta() })),
  STEP_STARTED: () => STP(),
  STEP_FINISHED: () => STF(),
  CUSTOM: () => CU(),
  RAW: () => RAW(),
  SUBAGENT_STARTED: () => SGS(pick(["s1", "s2"])),
  SUBAGENT_FINISHED: () => SGF(pick(["s1", "s2"])),
  SUBAGENT_ERROR: () => SGE(pick(["s1", "s2"])),
  THINKING_START: () => ev("THINKING_START", {}),
};
const WEIGHTS = {
  TEXT_MESSAGE_START: 6, TEXT_MESSAGE_CONTENT: 7, TEXT_MESSAGE_END: 3, TEXT_MESSAGE_CHUNK: 5,
  REASONING_MESSAGE_START: 3, REASONING_MESSAGE_CONTENT: 3, REASONING_MESSAGE_END: 1, REASONING_MESSAGE_CHUNK: 3,
  REASONING_START: 1, REASONING_END: 1, REASONING_ENCRYPTED_VALUE: 3,
  TOOL_CALL_START: 6, TOOL_CALL_ARGS: 5, TOOL_CALL_END: 2, TOOL_CALL_CHUNK: 4, TOOL_CALL_RESULT: 6,
  STATE_SNAPSHOT: 2, STATE_DELTA: 4, MESSAGES_SNAPSHOT: 4, ACTIVITY_SNAPSHOT: 4, ACTIVITY_DELTA: 3,
  RUN_STARTED: 2, RUN_FINISHED: 2, RUN_ERROR: 1, STEP_STARTED: 1, STEP_FINISHED: 1, CUSTOM: 1, RAW: 1,
  SUBAGENT_STARTED: 1, SUBAGENT_FINISHED: 1, SUBAGENT_ERROR: 1, THINKING_START: 0.3,
};
function weighted(weights) {
  const entries = Object.entries(weights);
  const total = entries.reduce((s, [, w]) => s + w, 0);
  return () => {
    let r = rand() * total;
    for (const [k, w] of entries) {
      if ((r -= w) < 0) return k;
    }
    return entries[entries.length - 1][0];
  };
}
// Most chunks that would open a stream without an id (which the reference rejects, so the case
// would be lost) get one. A rough model of the lanes, on purpose: some still slip through.
const CHUNK_ID = { TEXT_MESSAGE_CHUNK: "messageId", REASONING_MESSAGE_CHUNK: "messageId", TOOL_CALL_CHUNK: "toolCallId" };
const CLOSES_ALL = new Set(["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"]);
const PASSES = new Set(["RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR", "THINKING_START"]);
function openersNamed(events) {
  const open = new Set();
  for (const e of events) {
    const idField = CHUNK_ID[e.type];
    if (idField) {
      if (e[idField] === undefined && !open.has(e.type)) {
        e[idField] = pick(e.type === "TOOL_CALL_CHUNK" ? TOOL : MSG);
      }
      if (e.type === "TOOL_CALL_CHUNK" && !open.has(e.type) && e.toolCallName === undefined) e.toolCallName = "f";
      open.clear();
      open.add(e.type);
    } else if (CLOSES_ALL.has(e.type) || !PASSES.has(e.type)) {
      open.clear();
    }
  }
  return events;
}
function soup(prefix, count, weights, minLen, maxLen) {
  const next = weighted(weights);
  for (let i = 0; i < count; i++) {
    const events = [];
    if (chance(0.85)) events.push(GENERATORS.RUN_STARTED());
    for (let j = 0, n = minLen + int(maxLen - minLen + 1); j < n; j++) events.push(GENERATORS[next()]());
    if (chance(0.6)) events.push(RF("r"));
    add(`${prefix}/${i}`, openersNamed(events));
  }
}

// ---------------------------------------------------------------------------------------------
// 4. The patch corpus, replayed through the reducer's two patch sites.
function patchReplays() {
  const dir = join(root, "fixtures", "patch-cases");
  const load = (file) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)) : []);
  const all = [...load("cases.jsonl"), ...load("unrepresentable.jsonl").filter((c) => !String(c.reference).includes("cycle"))];
  if (all.length === 0) throw new Error("run reference/make-patch-cases.mjs first");
  // JSON text of the doc and patch, as the patch corpus writes them (numbers as written).
  const text = (v) => JSON.stringify(v);
  const probe = `{"type":"STATE_DELTA","delta":[{"op":"add","path":"/probe","value":1}]}`;
  all.forEach((c, i) => {
    const keep = i % 4 === 0 || c.reference || (i % 2 === 0 && /^(root|malformed|random)|toString|length/.test(c.name));
    if (!keep) return;
    add(`state-patch/${c.name}`, [
      `{"type":"STATE_SNAPSHOT","snapshot":${text(c.doc)}}`,
      `{"type":"STATE_DELTA","delta":${text(c.patch)}}`,
      ...(c.reference || i % 4 === 0 ? [probe] : []),
    ]);
    if (i % 7 === 0 || c.reference) {
      add(`activity-patch/${c.name}`, [
        `{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"P","content":${text(c.doc)}}`,
        `{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"Q","patch":${text(c.patch)}}`,
      ]);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// 5. Events outside the schema (the reducer still folds them; so must agui-lens).
function oddScenarios() {
  const S = (name, events) => add(`odd/${name}`, events);
  for (const [label, delta] of [["number", 1], ["float", 1.5], ["big", 1e21], ["small", 1e-7], ["negative-zero", -0], ["null", null], ["true", true],
    ["array", [1, [2, 3], null, "x"]], ["object", { a: 1 }], ["missing", undefined]]) {
    S(`delta-${label}/text`, [RS(), TS("m1"), TC("m1", delta), RF()]);
    S(`delta-${label}/reasoning`, [RS(), RMS("r1"), RMC("r1", delta), RF()]);
    S(`delta-${label}/tool-args`, [RS(), CS("c1"), CA("c1", delta), RF()]);
    S(`delta-${label}/text-chunk`, [RS(), TK({ messageId: "m1", delta }), RF()]);
    S(`delta-${label}/tool-chunk`, [RS(), CK({ toolCallId: "c1", toolCallName: "f", delta }), RF()]);
  }
  add("odd/delta-as-written/text", [`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
    `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":1.0}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":1e2}`,
    `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":0.10}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":12345678901234567890}`]);
  S("tool-args-non-string-arguments", [RS(), MS([asst("a1", "", [call("c1", "f", null), call("c2", "f", 5), call("c3", "f", { x: 1 })])]),
    CA("c1", "x"), CA("c2", "y"), CA("c3", "z"), RF()]);
  S("tool-args-number-plus-number", [RS(), MS([asst("a1", "", [call("c2", "f", 5)])]), CA("c2", 3), RF()]);
  S("tool-args-missing-arguments", [RS(), MS([asst("a1", "", [{ id: "c1", type: "function", function: { name: "f" } }])]), CA("c1", "x"), RF()]);
  S("tool-start-missing-name-restart", [RS(), CS("c1", "f"), ev("TOOL_CALL_START", { toolCallId: "c1" }), RF()]);
  S("tool-start-missing-name-new", [RS(), ev("TOOL_CALL_START", { toolCallId: "c1" }), RF()]);
  S("tool-start-null-name-restart", [RS(), CS("c1", "f"), CS("c1", null), RF()]);
  S("tool-start-numeric-parent", [RS(), CS("c1", "f", { parentMessageId: 7 }), RF()]);
  S("tool-start-missing-id", [RS(), ev("TOOL_CALL_START", { toolCallName: "f" }), CA(undefined, "x"), RF()]);
  S("text-start-missing-id", [RS(), ev("TEXT_MESSAGE_START", { role: "assistant" }), ev("TEXT_MESSAGE_CONTENT", { delta: "x" }), ev("TEXT_MESSAGE_START", { role: "user" }), RF()]);
  S("text-content-missing-id-with-idless-history", [RS("r1", { messages: [{ role: "user", content: "no id" }] }), ev("TEXT_MESSAGE_CONTENT", { delta: "x" }), RF()]);
  S("numeric-ids", [RS(), TS(1), TC(1, "x"), TS("1"), TC("1", "y"), RF()]);
  S("numeric-tool-ids", [RS(), CS(1), CA(1, "x"), CR("t1", 1), RF()]);
  S("numeric-entity-id", [RS(), TS(1), REV("message", 1, "E"), RF()]);
  S("snapshot-idless-messages", [RS(), MS([{ role: "user", content: "a" }, { role: "user", content: "b" }]), MS([{ role: "user", content: "c" }]), RF()]);
  S("snapshot-numeric-ids", [RS(), MS([user(1), user("1")]), MS([user(1, "x")]), RF()]);
  S("input-idless-messages", [RS("r1", { messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }] }), RF()]);
  S("input-non-object-message", [RS("r1", { messages: ["x", 5, user("u1")] }), RF()]);
  S("input-messages-not-array", [RS("r1", { messages: { a: 1 } }), RF()]);
  for (const [label, metadata] of [["string", "ab"], ["array", [1, 2]], ["number", 5], ["null", null], ["true", true], ["empty-string", ""]]) {
    S(`metadata-${label}/text-start`, [RS(), TS("m1", { metadata }), RF()]);
    S(`metadata-${label}/text-content-over-object`, [RS(), TS("m1", { metadata: { k: 1 } }), TC("m1", "x", { metadata }), RF()]);
    S(`metadata-${label}/existing-on-message`, [RS(), MS([asst("m1", "x", undefined, { metadata })]), TC("m1", "y", { metadata: { k: 1 } }), RF()]);
    S(`metadata-${label}/tool-call`, [RS(), CS("c1", "f", { metadata }), RF()]);
    S(`metadata-${label}/activity`, [RS(), AS("a1", "P", {}, { metadata }), RF()]);
    S(`metadata-${label}/result`, [RS(), CS("c1"), CR("t1", "c1", "x", { metadata }), RF()]);
  }
  S("state-snapshot-missing", [RS(), SS({ a: 1 }), ev("STATE_SNAPSHOT", {}), RF()]);
  S("encrypted-value-missing", [RS(), TS("m1"), REV("message", "m1", "E"), ev("REASONING_ENCRYPTED_VALUE", { subtype: "message", entityId: "m1" }), RF()]);
  S("encrypted-value-missing-tool", [RS(), CS("c1"), ev("REASONING_ENCRYPTED_VALUE", { subtype: "tool-call", entityId: "c1" }), RF()]);
  S("encrypted-value-null", [RS(), TS("m1"), REV("message", "m1", null), RF()]);
  S("activity-replace-string-false", [RS(), AS("a1", "P", { a: 1 }), AS("a1", "P", { b: 1 }, { replace: "false" }), RF()]);
  S("activity-missing-id", [RS(), ev("ACTIVITY_SNAPSHOT", { activityType: "P", content: {} }), ev("ACTIVITY_SNAPSHOT", { activityType: "Q", content: { x: 1 } }), RF()]);
  S("activity-subagent-number", [RS(), AS("a1", "P", {}, { subagentRunId: 5 }), RF()]);
  S("text-start-subagent-number", [RS(), TS("m1", { subagentRunId: 5 }), TK({ messageId: "m2", delta: "a", subagentRunId: 7 }), TK({ delta: "b" }), RF()]);
  S("result-toolcallid-missing", [RS(), CS("c1"), ev("TOOL_CALL_RESULT", { messageId: "t1", content: "x" }), RF()]);
  S("result-messageid-missing", [RS(), CS("c1"), ev("TOOL_CALL_RESULT", { toolCallId: "c1", content: "x" }), TC(undefined, "y"), RF()]);
  S("role-as-number", [RS(), TS("m1", { role: 5 }), CR("t1", "c1", "x", { role: 0 }), RF()]);
  S("activity-delta-patch-with-toString-op", [RS(), AS("a1", "P", { a: 1 }), AD("a1", "Q", [{ op: "toString", path: "/a" }]), RF()]);
  S("state-delta-op-array-add", [RS(), SS({ a: [1] }), SD([{ op: ["add"], path: "/a/5", value: 2 }]), RF()]);
  S("state-root-string-index", [RS(), SS("abc"), SD([{ op: "copy", from: "/1", path: "" }]), RF()]);
  S("state-copy-length", [RS(), SS({ a: [1, 2, 3] }), SD([{ op: "copy", from: "/a/length", path: "/n" }]), RF()]);
  S("state-move-length", [RS(), SS({ a: [1, 2, 3] }), SD([{ op: "move", from: "/a/length", path: "/n" }]), RF()]);
  S("state-test-leading-zero", [RS(), SS({ a: [1, 2, 3] }), SD([{ op: "test", path: "/a/01", value: 2 }, { op: "add", path: "/ok", value: true }]), RF()]);
  S("snapshot-toolcalls-not-array", [RS(), MS([asst("a1", "", undefined, { toolCalls: { c1: 1 } })]), TS("m1"), RF()]);
  S("snapshot-message-null-subagent-and-metadata", [RS(), MS([user("u1", "q", { subagentRunId: null, metadata: null })]), TE("u1", { metadata: { k: 1 } }), RF()]);
}

// ---------------------------------------------------------------------------------------------
// 6. The real recordings.
function recordingCases() {
  if (!existsSync(recordings)) return;
  for (const file of readdirSync(recordings).sort()) {
    if (!file.endsWith(".jsonl") || file.includes("-invalid")) continue;
    const lines = readFileSync(join(recordings, file), "utf8").split("\n").filter((l) => l.trim());
    add(`recording/${file}`, lines);
  }
}

// ---------------------------------------------------------------------------------------------
// `--fuzz SEED SCALE FILE`: only the random families, SCALE times as many, from another seed,
// written to FILE — for hunting disagreements beyond the committed corpus (replay it with
// AGUI_FOLD_CASES=FILE cargo test --test main fold_agreement).
const fuzz = process.argv[2] === "--fuzz" ? { seed: Number(process.argv[3]), scale: Number(process.argv[4]), file: process.argv[5] } : undefined;
const scale = fuzz?.scale ?? 1;
if (!fuzz) {
  scenarios();
  chunkScenarios();
}
rand = mulberry32(fuzz?.seed ?? 0x50a9);
soup("soup/mixed", 450 * scale, WEIGHTS, 3, 12);
soup("soup/long", 70 * scale, WEIGHTS, 15, 30);
soup("soup/messages", 150 * scale, { ...WEIGHTS, STATE_SNAPSHOT: 0, STATE_DELTA: 0, MESSAGES_SNAPSHOT: 8, TOOL_CALL_RESULT: 10, ACTIVITY_SNAPSHOT: 6 }, 4, 10);
soup("soup/chunks", 150 * scale, { TEXT_MESSAGE_CHUNK: 8, TOOL_CALL_CHUNK: 6, REASONING_MESSAGE_CHUNK: 5, TEXT_MESSAGE_START: 1, TEXT_MESSAGE_CONTENT: 1, TOOL_CALL_RESULT: 1,
  ACTIVITY_SNAPSHOT: 1, REASONING_ENCRYPTED_VALUE: 1, STATE_SNAPSHOT: 1, SUBAGENT_FINISHED: 1, SUBAGENT_ERROR: 1, RUN_FINISHED: 0.5, RUN_STARTED: 0.5, MESSAGES_SNAPSHOT: 0.5, STEP_STARTED: 0.5 }, 3, 12);
soup("soup/state", 100 * scale, { STATE_SNAPSHOT: 2, STATE_DELTA: 8, ACTIVITY_SNAPSHOT: 2, ACTIVITY_DELTA: 6, RUN_STARTED: 1 }, 2, 8);
if (!fuzz) {
  patchReplays();
  oddScenarios();
  recordingCases();
}

// Run the reference over every case, in one process.
const lineOf = (e) => (typeof e === "string" ? e : JSON.stringify(e));
const input = cases.map((c) => `{"events":[${c.events.map(lineOf).join(",")}]}`).join("\n") + "\n";
const run = spawnSync(process.execPath, [join(here, "fold.mjs"), "--cases"], { input, maxBuffer: 1 << 30, cwd: here });
if (run.status !== 0) {
  process.stderr.write(run.stderr);
  throw new Error(`reference/fold.mjs exited with ${run.status}`);
}
const results = run.stdout.toString().split("\n").filter((l) => l.trim());
if (results.length !== cases.length) throw new Error(`expected ${cases.length} results, got ${results.length}`);

const out = [];
const errors = new Map();
const seen = new Set();
let duplicates = 0;
cases.forEach((c, i) => {
  const events = `[${c.events.map(lineOf).join(",")}]`;
  if (seen.has(events)) {
    duplicates++;
    return;
  }
  seen.add(events);
  const result = JSON.parse(results[i]);
  if (result.error !== undefined) {
    const family = c.name.split("/")[0];
    const key = `${family}: ${result.error.split(/[.:]/)[0]}`;
    errors.set(key, (errors.get(key) ?? 0) + 1);
    return;
  }
  out.push(`{"name":${JSON.stringify(c.name)},"events":${events},"expected":${results[i]}}`);
});
mkdirSync(outDir, { recursive: true });
writeFileSync(fuzz ? fuzz.file : join(outDir, "cases.jsonl"), out.join("\n") + "\n");
const skipped = [...errors.values()].reduce((a, b) => a + b, 0);
console.error(`fold cases: ${out.length} written, ${skipped} skipped (the reference errors), ${duplicates} duplicates dropped`);
for (const [k, n] of [...errors.entries()].sort((a, b) => b[1] - a[1])) console.error(`  ${n}\t${k}`);
