#!/usr/bin/env python3
"""Derives the schemas of the other protocol versions from schemas/1.0, which holds the 1.0
wire format exactly as @ag-ui/core@1.0.0 has it:

- schemas/1.1: 1.0 plus what the 1.1 changelog adds, the optional `encryptedValueType`
  wherever an `encryptedValue` can appear (REASONING_ENCRYPTED_VALUE, every message but the
  activity message, tool calls), never without the value (docs/spec/1.1/events/reasoning).
- schemas/0.x: what the pre-1.0 releases that real servers still run accepted (@ag-ui/core
  0.0.48 to 0.0.59, the Python ag-ui-protocol 0.1.x): null in optional fields (but event and
  message metadata, and parentRunId), fractional timestamps, a null rawEvent, RUN_FINISHED's
  `result`, the `binary` content part; the THINKING_* events are in every set already.

    scripts/derive-schemas.py          writes schemas/1.1 and schemas/0.x anew
"""
import copy
import json
import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent / "schemas"
BASE = ROOT / "1.0"

ENCRYPTED_TYPE = {
    "type": "string",
    "description": "What kind of encrypted value this is, named by the producer (vendor-prefixed, e.g. anthropic.redacted_thinking); stored and returned with the value.",
    "x-help": "1.1 added encryptedValueType beside encryptedValue; it is never sent without the value.",
}
HAS_ENCRYPTED_TYPE = [
    "events/REASONING_ENCRYPTED_VALUE.json",
    "defs/DeveloperMessage.json",
    "defs/SystemMessage.json",
    "defs/AssistantMessage.json",
    "defs/UserMessage.json",
    "defs/ToolMessage.json",
    "defs/ReasoningMessage.json",
    "defs/ToolCall.json",
]
# Optional fields that were never null before 1.0 either.
NEVER_NULL = {"metadata", "parentRunId", "type"}
BINARY_PART = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://agui-lens.invalid/schemas/defs/BinaryPart.json",
    "title": "Binary part",
    "description": "A pre-1.0 user message part holding data, a URL or a file id, with its MIME type.",
    "type": "object",
    "required": ["type", "mimeType"],
    "properties": {
        "type": {"const": "binary"},
        "mimeType": {"type": "string"},
        "id": {"type": "string"},
        "url": {"type": "string"},
        "data": {"type": "string"},
        "filename": {"type": "string"},
    },
}


def load(rel):
    return json.loads((BASE / rel).read_text())


def save(version, rel, doc):
    path = ROOT / version / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def every_file():
    return sorted(str(p.relative_to(BASE)) for p in BASE.rglob("*.json"))


def derive_1_1():
    for rel in every_file():
        doc = load(rel)
        if rel in HAS_ENCRYPTED_TYPE:
            assert "encryptedValue" in doc["properties"], rel
            doc["properties"]["encryptedValueType"] = copy.deepcopy(ENCRYPTED_TYPE)
            doc.setdefault("dependentRequired", {})["encryptedValueType"] = ["encryptedValue"]
        save("1.1", rel, doc)


def nullable(schema):
    return {"anyOf": [schema, {"type": "null"}]}


def relax(node):
    """Every optional property of every object schema in `node` may be null."""
    if isinstance(node, list):
        for item in node:
            relax(item)
        return
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        required = set(node.get("required", []))
        for name, schema in list(properties.items()):
            relax(schema)
            if name == "timestamp":
                properties[name] = {
                    "type": "number",
                    "description": "When the event was created; before 1.0 any number.",
                }
            elif name == "rawEvent":
                properties[name] = {"description": "The provider-native event, any value (null too, before 1.0)."}
            elif name not in required and name not in NEVER_NULL:
                properties[name] = nullable(schema)
    for key, value in node.items():
        if key != "properties":
            relax(value)


def derive_0_x():
    for rel in every_file():
        doc = load(rel)
        relax(doc)
        if rel == "events/RUN_FINISHED.json":
            doc["properties"]["result"] = {"description": "What the run produced (before 1.0)."}
        if rel == "defs/ContentPart.json":
            doc["properties"]["type"]["enum"].append("binary")
            doc["allOf"].append(
                {
                    "if": {
                        "type": "object",
                        "properties": {"type": {"const": "binary"}},
                        "required": ["type"],
                    },
                    "then": {"$ref": "BinaryPart.json"},
                }
            )
        save("0.x", rel, doc)
    save("0.x", "defs/BinaryPart.json", BINARY_PART)


if __name__ == "__main__":
    for version in ["1.1", "0.x"]:
        shutil.rmtree(ROOT / version, ignore_errors=True)
    derive_1_1()
    derive_0_x()
    print("wrote", ROOT / "1.1", "and", ROOT / "0.x")
