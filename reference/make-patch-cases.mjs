// Builds fixtures/patch-cases/cases.jsonl: JSON Patch cases whose verdicts come from
// fast-json-patch 3.1.1 (`applyPatch(doc, patch, true, false)`, via reference/patch.mjs).
//   node reference/make-patch-cases.mjs            (from the repository root)
// Each line: {"name", "doc", "patch", "expected": {"ok": true, "doc": ...} | {"ok": false}}.
// Patches fast-json-patch accepts but whose result is not JSON (undefined, a function, a cycle)
// cannot be held by agui-lens; they go to unrepresentable.jsonl with the reason, untested.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyReference } from "./patch.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "fixtures", "patch-cases");

// Deterministic PRNG (mulberry32).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(0x5eed_0001);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

// Documents are written as JSON text so that numbers like 1.0 and key orders reach both sides
// exactly as written.
const MAIN = `{"a":1,"b":{"c":[1,2,{"d":null}]},"arr":[10,20,30],"s":"str","n":null,"e":{},"ea":[],"":"empty","01":"lead","0":"zero","-1":"neg","~/":"esc","t":true,"f":1.5,"o":{"y":2,"x":1}}`;

const PATHS = [
  "", "/", "//", "/a", "/a/x", "/b", "/b/c", "/b/c/0", "/b/c/1", "/b/c/2", "/b/c/3", "/b/c/4",
  "/b/c/-", "/b/c/01", "/b/c/00", "/b/c/", "/b/c/-1", "/b/c/+1", "/b/c/1e0", "/b/c/ 1",
  "/b/c/99999999999", "/b/c/4294967296", "/b/c/4294967295", "/b/c/4294967297", "/b/c/2147483648",
  "/b/c/2147483647", "/b/c/18446744073709551617", "/b/c/12345678901234567890123",
  "/b/c/" + "9".repeat(400), "/b/c/length", "/b/c/push", "/b/c/2/d", "/b/c/2/d/x", "/b/c/0/x",
  "/arr/1", "/arr/-/x", "/s/0", "/s/length", "/n/x", "/t/x", "/missing", "/missing/x", "/0", "/01",
  "/1", "/-1", "/-", "/~0~1", "/~1", "/~01", "/~10", "/~2", "/~", "/__proto__", "/__proto__/x",
  "/b/__proto__", "/constructor", "/constructor/prototype", "/constructor/name", "/prototype",
  "/b/constructor/prototype", "/toString", "/hasOwnProperty", "/valueOf", "/__defineGetter__",
  "/isPrototypeOf", "/e/toString", "/e/constructor", "/ea/0", "/ea/-", "/ea/", "/o/x", "/f",
  "a", "a/b", "#/a",
];

const VALUES = [
  "1", "1.0", "2", "-0", "1e2", "null", "true", "\"v\"", "\"\"", "{}", "[]", "{\"x\":1}",
  "{\"b\":2,\"a\":1}", "[1,[2]]", "{\"__proto__\":{\"p\":1}}", "{\"constructor\":1}",
];

const cases = [];
const add = (name, doc, patch) => cases.push({ name, docText: doc, patchText: patch });

// 1. Every single operation at every path on the main document.
for (const path of PATHS) {
  const p = JSON.stringify(path);
  for (const op of ["add", "replace", "test"]) {
    add(`${op} ${path}`, MAIN, `[{"op":"${op}","path":${p},"value":${pick(VALUES)}}]`);
  }
  add(`remove ${path}`, MAIN, `[{"op":"remove","path":${p}}]`);
  add(`_get ${path}`, MAIN, `[{"op":"_get","path":${p}}]`);
  add(`move /a -> ${path}`, MAIN, `[{"op":"move","from":"/a","path":${p}}]`);
  add(`copy /b -> ${path}`, MAIN, `[{"op":"copy","from":"/b","path":${p}}]`);
  add(`move ${path} -> /z`, MAIN, `[{"op":"move","from":${p},"path":"/z"}]`);
  add(`copy ${path} -> /b/c/1`, MAIN, `[{"op":"copy","from":${p},"path":"/b/c/1"}]`);
  add(`copy ${path} -> root`, MAIN, `[{"op":"copy","from":${p},"path":""}]`);
}

// 2. Test: values equal by JSON meaning but not by text.
const TESTS = [
  ["/a", "1.0"], ["/a", "1e0"], ["/a", "10e-1"], ["/f", "1.50"], ["/f", "15e-1"], ["/a", "\"1\""],
  ["/a", "true"], ["/n", "null"], ["/n", "0"], ["/n", "false"], ["/o", "{\"x\":1,\"y\":2}"],
  ["/o", "{\"x\":1.0,\"y\":2.00}"], ["/o", "{\"x\":1}"], ["/o", "{\"x\":1,\"y\":2,\"z\":3}"],
  ["/o", "{\"x\":1,\"z\":2}"], ["/b/c", "[1,2,{\"d\":null}]"], ["/b/c", "[1,2,{\"d\":null,\"e\":1}]"],
  ["/b/c", "[1,2,{}]"], ["/b/c", "[2,1,{\"d\":null}]"], ["/e", "{}"], ["/e", "[]"], ["/ea", "{}"],
  ["/ea", "[]"], ["/s", "\"str\""], ["/s", "\"STR\""], ["", MAIN], ["/b/c/01", "2"], ["/b/c/", "1"],
  ["/b/c/4294967296", "1"], ["/b/c/4294967297", "2"], ["/b/c/-", "null"], ["/b/c/3", "null"],
  ["/0", "\"zero\""], ["/01", "\"lead\""], ["/-1", "\"neg\""], ["/", "\"empty\""], ["/~0~1", "\"esc\""],
  ["/toString", "{}"], ["/missing", "null"], ["/b/c/2", "{\"d\":null}"], ["/b/c/2/d", "null"],
  ["/a", "100000000000000000001"], ["/f", "1.5000000000000001"],
];
for (const [path, value] of TESTS) {
  add(`test ${path} == ${value}`, MAIN, `[{"op":"test","path":${JSON.stringify(path)},"value":${value}}]`);
}
add("test hasOwnProperty key vs same object", `{"a":{"hasOwnProperty":1}}`,
  `[{"op":"test","path":"/a","value":{"hasOwnProperty":1}}]`);
add("test object whose value has hasOwnProperty key", `{"a":{"k":1}}`,
  `[{"op":"test","path":"/a","value":{"hasOwnProperty":1}}]`);
add("test big ints equal as doubles", `{"a":12345678901234567890}`,
  `[{"op":"test","path":"/a","value":12345678901234567891}]`);
add("test -0 and 0", `{"a":-0}`, `[{"op":"test","path":"/a","value":0}]`);
add("test nested key order", `{"a":{"p":{"x":[1,{"m":1,"n":2}],"y":1}}}`,
  `[{"op":"test","path":"/a","value":{"p":{"y":1.0,"x":[1,{"n":2,"m":1}]}}}]`);

// 3. Malformed operations and patches.
const MALFORMED = [
  `{}`, `[]`, `null`, `"add"`, `{"op":"add","path":"/a"}`, `{"op":"replace","path":"/a"}`,
  `{"op":"test","path":"/a"}`, `{"op":"add","value":1}`, `{"op":"add","path":1,"value":1}`,
  `{"op":"add","path":null,"value":1}`, `{"op":"move","path":"/z"}`, `{"op":"copy","path":"/z"}`,
  `{"op":"move","path":"/z","from":1}`, `{"op":"copy","path":"/z","from":null}`,
  `{"op":"remove"}`, `{"op":"bogus","path":"/a"}`, `{"op":"bogus","path":""}`, `{"path":"/a"}`,
  `{"op":null,"path":"/a"}`, `{"op":"ADD","path":"/a","value":1}`, `{"op":"add","path":"a","value":1}`,
  `{"op":"remove","path":"a"}`, `{"op":"toString","path":""}`, `{"op":"__proto__","path":"/a"}`,
  `{"op":"__lookupGetter__","path":"/a"}`, `{"op":"__defineGetter__","path":"/a"}`,
  `{"op":["add"],"path":""}`, `{"op":["remove"],"path":"/a"}`, `{"op":["add"],"path":"/b/c/9","value":3}`,
  `{"op":["add"],"path":"/z","value":3}`, `{"op":["test"],"path":"/a","value":2}`,
  `{"op":"add","path":"/a","value":1,"from":7}`, `{"op":"remove","path":"/a","value":1}`,
  `{"op":"test","path":"","value":null}`, `{"op":"add","path":"","value":null}`,
];
for (const m of MALFORMED) add(`malformed ${m}`, MAIN, `[${m}]`);
for (const p of [`{}`, `null`, `"x"`, `1`, `{"op":"add","path":"/a","value":1}`, `[[]]`, `[null]`]) {
  add(`patch is ${p}`, MAIN, p);
}
add("empty patch", MAIN, "[]");

// 4. Root documents of every kind.
const ROOTS = [`null`, `0`, `5`, `1.0`, `""`, `"abc"`, `true`, `false`, `[]`, `[1,2,3]`, `{}`, `[[1,2],[3]]`];
const ROOT_OPS = [
  `{"op":"add","path":"","value":{"k":1}}`, `{"op":"replace","path":"","value":[1]}`,
  `{"op":"remove","path":""}`, `{"op":"test","path":"","value":null}`, `{"op":"test","path":"","value":5}`,
  `{"op":"add","path":"/a","value":1}`, `{"op":"add","path":"/0","value":1}`, `{"op":"add","path":"/-","value":1}`,
  `{"op":"replace","path":"/0","value":9}`, `{"op":"remove","path":"/0"}`, `{"op":"test","path":"/0","value":1}`,
  `{"op":"test","path":"/0","value":"a"}`, `{"op":"test","path":"/length","value":3}`,
  `{"op":"test","path":"/1/0","value":3}`, `{"op":"replace","path":"/a","value":1}`,
  `{"op":"copy","from":"","path":"/0"}`, `{"op":"copy","from":"","path":"/-"}`,
  `{"op":"move","from":"/0","path":"/-"}`, `{"op":"move","from":"/0","path":""}`,
  `{"op":"copy","from":"/0/1","path":""}`, `{"op":"move","from":"","path":""}`,
  `{"op":"copy","from":"","path":""}`, `{"op":"_get","path":"/0"}`, `{"op":"add","path":"/0/0","value":1}`,
];
for (const r of ROOTS) for (const o of ROOT_OPS) add(`root ${r}: ${o}`, r, `[${o}]`);

// 5. Move/copy corner cases.
const MOVES = [
  ["/b", "/b/x"], ["/b", "/b/c/0"], ["/b/c", "/b/c/-"], ["/b", "/b"], ["/a", "/a"], ["/b/c/0", "/b/c/2"],
  ["/b/c/0", "/b/c/3"], ["/b/c/0", "/b/c/5"], ["/b/c/2", "/b/c/0"], ["/arr/0", "/arr/-"],
  ["/arr", "/b/c/1"], ["/b/c/2", "/b/c/2/d"], ["/b/c/2/d", "/b/c/2"], ["/e", "/e/x"], ["/a", "/e/x"],
  ["/a", "/ea/0"], ["/a", "/ea/1"], ["/a", "/ea/-"], ["/a", "/ea/01"], ["/a", "/missing/x"],
  ["/a", "/arr/4294967296"], ["/a", "/arr/4294967295"], ["/a", "/arr/99999999999"], ["/a", "/arr/"],
  ["/a", "/s/0"], ["/a", "/n/x"], ["/b/c/length", "/z"], ["/arr/length", "/z"], ["/s/length", "/z"],
  ["/b/c/01", "/z"], ["/b/c/-", "/z"], ["/toString", "/z"], ["/constructor", "/z"], ["", "/z"],
  ["/b/c/1", ""], ["/missing", ""], ["/missing/x", ""], ["/s/0", ""], ["/arr/length", ""],
  ["/arr/01", ""], ["/arr/-", ""], ["/0", "/1"], ["/", "/~1"], ["/~0~1", "/~1"],
];
for (const [from, path] of MOVES) {
  for (const op of ["move", "copy"]) {
    add(`${op} ${from} -> ${path}`, MAIN, `[{"op":"${op}","from":${JSON.stringify(from)},"path":${JSON.stringify(path)}}]`);
  }
}

// 6. Multi-operation patches: atomicity, order, re-reading what earlier operations wrote.
const MULTI = [
  `[{"op":"add","path":"/z","value":1},{"op":"replace","path":"/missing","value":1}]`,
  `[{"op":"remove","path":"/a"},{"op":"remove","path":"/a"}]`,
  `[{"op":"add","path":"/b/c/-","value":4},{"op":"test","path":"/b/c/3","value":4}]`,
  `[{"op":"add","path":"/b/c/-","value":4},{"op":"test","path":"/b/c/3","value":5}]`,
  `[{"op":"remove","path":"/b/c/0"},{"op":"remove","path":"/b/c/0"},{"op":"remove","path":"/b/c/0"},{"op":"remove","path":"/b/c/0"}]`,
  `[{"op":"replace","path":"","value":{"x":1}},{"op":"add","path":"/y","value":2}]`,
  `[{"op":"replace","path":"","value":{"x":1}},{"op":"add","path":"/y/z","value":2}]`,
  `[{"op":"remove","path":""},{"op":"add","path":"","value":[1]}]`,
  `[{"op":"remove","path":""},{"op":"add","path":"/a","value":1}]`,
  `[{"op":"move","from":"/b/c","path":"/cc"},{"op":"add","path":"/cc/0","value":0},{"op":"test","path":"/b","value":{}}]`,
  `[{"op":"copy","from":"/b","path":"/b2"},{"op":"add","path":"/b2/c/0","value":"new"},{"op":"test","path":"/b/c/0","value":1}]`,
  `[{"op":"add","path":"/arr/1","value":15},{"op":"remove","path":"/arr/3"},{"op":"move","from":"/arr/0","path":"/arr/2"}]`,
  `[{"op":"add","path":"/toString","value":1},{"op":"test","path":"/toString","value":1}]`,
  `[{"op":"replace","path":"/toString","value":1},{"op":"remove","path":"/toString"},{"op":"test","path":"/toString","value":1}]`,
  `[{"op":"remove","path":"/toString"},{"op":"add","path":"/q","value":1}]`,
  `[{"op":"add","path":"/a","value":2},{"op":"add","path":"/a","value":3},{"op":"bogus","path":"/a"}]`,
  `[{"op":"add","path":"/o/z","value":0},{"op":"remove","path":"/o/x"},{"op":"add","path":"/o/x","value":1},{"op":"test","path":"/o","value":{"x":1,"y":2,"z":0}}]`,
  `[{"op":"remove","path":"/o/y"},{"op":"remove","path":"/nope"}]`,
  `[{"op":"copy","from":"","path":"/self"},{"op":"test","path":"/self/a","value":1}]`,
  `[{"op":"copy","from":"","path":"/self"},{"op":"copy","from":"","path":"/self2"},{"op":"test","path":"/self2/self/a","value":1}]`,
];
for (const [i, m] of MULTI.entries()) add(`multi ${i}: ${m}`, MAIN, m);

// 7. Random patches on random small documents.
function randomDoc(depth = 0) {
  const r = rand();
  if (depth > 2 || r < 0.3) return pick([0, 1, 2.5, "x", "", true, null]);
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => randomDoc(depth + 1));
  const o = {};
  for (let i = 0, n = Math.floor(rand() * 4); i < n; i++) o[pick(["a", "b", "c", "0", "1", ""])] = randomDoc(depth + 1);
  return o;
}
function pathsOf(doc, prefix = "") {
  const out = [prefix];
  if (doc && typeof doc === "object") {
    for (const k of Object.keys(doc)) out.push(...pathsOf(doc[k], `${prefix}/${k}`));
    if (Array.isArray(doc)) out.push(`${prefix}/-`, `${prefix}/${doc.length}`, `${prefix}/${doc.length + 1}`);
    else out.push(`${prefix}/new`);
  }
  return out;
}
for (let i = 0; i < 250; i++) {
  const doc = { root: randomDoc() };
  const patch = [];
  for (let j = 0, n = 1 + Math.floor(rand() * 4); j < n; j++) {
    const paths = pathsOf(doc);
    const op = pick(["add", "add", "remove", "replace", "move", "copy", "test"]);
    const o = { op, path: pick(paths) };
    if (op === "move" || op === "copy") o.from = pick(paths);
    if (op === "add" || op === "replace") o.value = randomDoc(1);
    if (op === "test") o.value = rand() < 0.5 ? randomDoc(2) : (() => {
      try { return jsonpatch_get(doc, o.path); } catch { return null; }
    })();
    patch.push(o);
  }
  add(`random ${i}`, JSON.stringify(doc), JSON.stringify(patch));
}
function jsonpatch_get(doc, path) {
  let v = doc;
  for (const k of path.split("/").slice(1)) v = v[k];
  return v === undefined ? null : v;
}

// Run the reference on every case and write the corpus.
const seen = new Set();
const lines = [];
const unrepresentable = [];
for (const c of cases) {
  const key = c.docText + "\u0000" + c.patchText;
  if (seen.has(key)) continue;
  seen.add(key);
  const expected = applyReference(JSON.parse(c.docText), JSON.parse(c.patchText));
  const head = `{"name":${JSON.stringify(c.name)},"doc":${c.docText},"patch":${c.patchText}`;
  if (expected.skip) {
    unrepresentable.push(`${head},"reference":${JSON.stringify(expected.skip)}}`);
    continue;
  }
  const exp = expected.ok ? { ok: true, doc: expected.doc } : { ok: false };
  const why = expected.ok ? "" : `,"reference_error":${JSON.stringify(expected.error)}`;
  lines.push(`${head},"expected":${JSON.stringify(exp)}${why}}`);
}
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "cases.jsonl"), lines.join("\n") + "\n");
writeFileSync(join(outDir, "unrepresentable.jsonl"), unrepresentable.join("\n") + "\n");
const accepted = lines.filter((l) => l.includes(`"expected":{"ok":true`)).length;
console.error(
  `patch cases: ${lines.length} (${accepted} accepted, ${lines.length - accepted} rejected); ` +
    `${unrepresentable.length} accepted with a non-JSON result (unrepresentable.jsonl)`,
);
