"""Checks agui-lens's JSON Schemas against the @ag-ui/core 1.0.0 zod validators.

    python3 reference/check-schemas.py [--strict] [recording.jsonl ...]

1. Loads every schemas/**/*.json into a referencing Registry keyed by its $id
   and checks the set's conventions (ids, relative refs, valid 2020-12 schemas).
2. Validates each fixtures/schema-cases/cases.jsonl event against
   schemas/1.0/events/<type>.json and prints every case whose verdict differs from
   its zod_valid (or, for skip_zod cases, from expected_schema_valid). It also
   re-runs zod-validate.mjs to catch stale zod_valid stamps.
3. Validates every line of the given recordings with both, printing the lines
   zod rejects and any disagreement. --strict adds "additionalProperties": false
   as agui-lens's strict mode does and lists the unknown fields it finds there.
Exits 1 if any disagreement or convention problem is found.
"""
import json, pathlib, re, subprocess, sys
from urllib.parse import urljoin

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
SCHEMAS = REPO / "schemas" / "1.0"  # the 1.0 wire format; 1.1 and 0.x are derived from it
CASES = REPO / "fixtures" / "schema-cases" / "cases.jsonl"
ID_BASE = "https://agui-lens.invalid/schemas/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def ecma_patterns(schema):
    """JSON Schema patterns are ECMA-262, where "$" matches only at the very end;
    Python's "$" also matches before a final newline, so give Python "\\Z"."""
    if isinstance(schema, list):
        return [ecma_patterns(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: ecma_patterns(v) for k, v in schema.items()}
    if isinstance(schema.get("pattern"), str):
        out["pattern"] = re.sub(r"(?<!\\)\$", r"\\Z", schema["pattern"])
    return out


def load_schemas():
    docs, problems = {}, []
    for path in sorted(SCHEMAS.rglob("*.json")):
        rel = path.relative_to(SCHEMAS).as_posix()
        doc = json.loads(path.read_text())
        if doc.get("$schema") != DRAFT or doc.get("$id") != ID_BASE + rel:
            problems.append(f"{rel}: $schema or $id is not as expected")
        if not doc.get("title") or not doc.get("description"):
            problems.append(f"{rel}: missing title or description")
        if path.read_text() != json.dumps(doc, indent=2, ensure_ascii=False) + "\n":
            problems.append(f"{rel}: not pretty-printed with 2-space indent")
        for ref in re.findall(r'"\$ref": "([^"]*)"', path.read_text()):
            target = urljoin(ID_BASE + rel, ref).split("#")[0]
            if ":" in ref or ref.startswith("/") or not (SCHEMAS / target[len(ID_BASE):]).is_file():
                problems.append(f"{rel}: $ref {ref} is not a relative reference to a file in schemas/")
        Draft202012Validator.check_schema(doc)
        docs[doc["$id"]] = doc
    return docs, problems


def strict_variant(schema, in_if=False):
    """Adds additionalProperties: false to every schema with properties, except a
    discriminated union's wrapper (x-discriminator), the if of an if/then, and
    schemas marked x-open (JSON Patch operations, which RFC 6902 keeps open)."""
    if isinstance(schema, list):
        return [strict_variant(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict_variant(v, in_if=(k == "if")) for k, v in schema.items() if k not in ("properties", "$defs")}
    for k in ("properties", "$defs"):
        if k in schema:
            out[k] = {name: strict_variant(s) for name, s in schema[k].items()}
    if "properties" in schema and not in_if and not schema.get("x-discriminator") and not schema.get("x-open"):
        out["additionalProperties"] = False
    return out


def make_validators(docs):
    docs = {uid: ecma_patterns(doc) for uid, doc in docs.items()}
    registry = Registry().with_resources((uid, Resource.from_contents(doc)) for uid, doc in docs.items())
    return {
        uid[len(ID_BASE + "events/"):-len(".json")]: Draft202012Validator(doc, registry=registry)
        for uid, doc in docs.items() if uid.startswith(ID_BASE + "events/")
    }


def schema_errors(by_type, event):
    kind = event.get("type") if isinstance(event, dict) else None
    if not isinstance(kind, str) or kind not in by_type:
        return [f"no schema for type {kind!r}"]
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in by_type[kind].iter_errors(event)]


def zod(lines):
    run = subprocess.run(["node", str(HERE / "zod-validate.mjs")], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True, cwd=HERE)
    return [json.loads(out) for out in run.stdout.splitlines()]


def main(args):
    strict = "--strict" in args
    recordings = [a for a in args if a != "--strict"]
    docs, problems = load_schemas()
    for p in problems:
        print("convention:", p)
    if problems:
        return 1
    by_type = make_validators(docs)
    strict_by_type = make_validators({uid: strict_variant(doc) for uid, doc in docs.items()}) if strict else None

    lines = [l for l in CASES.read_text().splitlines() if l.strip()]
    cases = [json.loads(l) for l in lines]
    fresh = zod(lines)
    bad = 0
    for c, z in zip(cases, fresh):
        if not c.get("skip_zod") and z["valid"] != c["zod_valid"]:
            bad += 1
            print(f"stale: {c['name']}: zod now says {z['valid']}, file says {c['zod_valid']}")
        expected = c["expected_schema_valid"] if c.get("skip_zod") else c["zod_valid"]
        errors = schema_errors(by_type, c["event"])
        if (not errors) != expected:
            bad += 1
            print(f"DISAGREE {c['name']}: expected valid={expected}, schemas say valid={not errors}")
            for e in errors or z["issues"]:
                print("    ", e)
    compared = sum(1 for c in cases if not c.get("skip_zod"))
    print(f"cases: {len(cases)} ({compared} compared with zod, {len(cases) - compared} THINKING_* against expected_schema_valid), disagreements: {bad}")

    for path in recordings:
        rec_lines = [l for l in pathlib.Path(path).read_text().splitlines() if l.strip()]
        for n, (line, z) in enumerate(zip(rec_lines, zod(rec_lines)), 1):
            event = json.loads(line)
            errors = schema_errors(by_type, event)
            where = f"{pathlib.Path(path).name}:{n}"
            if not z["valid"]:
                print(f"zod rejects {where}: {json.dumps(z['issues'])[:200]}")
            if (not errors) != z["valid"]:
                bad += 1
                print(f"DISAGREE {where}: zod valid={z['valid']}, schemas say {errors}")
            if strict and not errors:
                for e in schema_errors(strict_by_type, event):
                    print(f"strict {where}: {e}")
        print(f"recording {path}: {len(rec_lines)} lines checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
