#!/usr/bin/env python3
"""Writes proto/ag_ui/*.proto from the published @ag-ui/proto package.

The npm package ships no .proto files, only the code protoc-gen-ts_proto generated from
them (kept whole in its source map). Every field of the wire format is in that code: the
encode function of each message writes each field with its tag and wire type, in field
order, and the interfaces and enums give the types. This script reads them back into
.proto files, so the Rust side decodes and encodes with the same field numbers the
published package uses.

    npm pack @ag-ui/proto@1.0.0 && tar xzf ag-ui-proto-1.0.0.tgz
    python3 scripts/proto-from-sdk.py package/dist/index.mjs.map proto/ag_ui
"""

import json
import re
import sys
from pathlib import Path

# Messages whose fields are alternatives: at most one is set. The generated code does not
# say so (ts-proto writes oneof members as plain optional fields); these are the
# envelope and the content-part unions, whose arms the SDK's converters treat as exclusive.
ONEOFS = {"Event": "event", "InputContent": "part", "InputContentSource": "source"}

GOOGLE = {"Value": "google.protobuf.Value", "Struct": "google.protobuf.Struct",
          "ListValue": "google.protobuf.ListValue"}


def snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def enums(source):
    out = {}
    for name, body in re.findall(r"export enum (\w+) \{(.*?)\n\}", source, re.S):
        values = re.findall(r"^\s+(\w+) = (-?\d+),", body, re.M)
        out[name] = [(k, int(v)) for k, v in values if k != "UNRECOGNIZED"]
    return out


def interface_types(source):
    """message -> field -> TS type text, to tell enums from plain int32."""
    out = {}
    for name, body in re.findall(r"export interface (\w+) \{(.*?)\n\}", source, re.S):
        fields = {}
        for field, ty in re.findall(r"^  (\w+)\??:\s*\n?\s*\|?\s*([\w\[\]{}:\s,]+?)[;|]",
                                    body, re.M):
            fields[field] = ty.strip()
        out[name] = fields
    return out


def messages(source):
    out = {}
    pattern = r"export const (\w+): MessageFns<\w+> = \{\n  encode\(message: \w+, writer[^\n]*\n(.*?)\n    return writer;"
    for name, body in re.findall(pattern, source, re.S):
        fields = []
        for line in body.split("\n"):
            m = re.search(r"writer\.uint32\((\d+)\)", line)
            if not m:
                continue
            tag = int(m.group(1))
            number, wire = tag >> 3, tag & 7
            repeated = "for (const v of message." in body_context(body, line)
            field = field_name(body, line)
            if ".fork()" in line:
                kind = re.search(r"(\w+)\.encode\(", line).group(1)
                kind = GOOGLE.get(kind, kind)
            else:
                kind = re.search(r"\)\.(\w+)\(", line).group(1)
            # A message field has presence anyway; `optional` marks the scalars that do.
            optional = (f"message.{field} !== undefined" in body and not repeated
                        and ".fork()" not in line)
            fields.append((number, wire, field, kind, repeated, optional))
        out[name] = fields
    return out


def body_context(body, line):
    lines = body.split("\n")
    i = lines.index(line)
    return lines[i - 1] if i else ""


def field_name(body, line):
    m = re.search(r"message\.(\w+)", line)
    if m:
        return m.group(1)
    prev = body_context(body, line)
    return re.search(r"message\.(\w+)", prev).group(1)


def render(file, package_msgs, all_enums, types, imports, only_enums):
    lines = [
        "// Reconstructed by scripts/proto-from-sdk.py from the code protoc-gen-ts_proto",
        "// generated for the published npm package @ag-ui/proto 1.0.0 (protocol 1.0), which",
        "// ships no .proto files of its own. Field names, numbers and types are the package's.",
        "",
        'syntax = "proto3";',
        "",
        "package ag_ui;",
        "",
    ]
    for imp in imports:
        lines.append(f'import "{imp}";')
    if imports:
        lines.append("")
    for name in only_enums:
        lines.append(f"enum {name} {{")
        for key, value in all_enums[name]:
            lines.append(f"  {key} = {value};")
        lines += ["}", ""]
    for name, fields in package_msgs:
        lines.append(f"message {name} {{")
        oneof = ONEOFS.get(name)
        if oneof:
            lines.append(f"  oneof {oneof} {{")
        for number, wire, field, kind, repeated, optional in fields:
            ty = kind
            if kind == "int32":
                ts = types.get(name, {}).get(field, "")
                if ts in all_enums:
                    ty = ts
            label = "repeated " if repeated else ("optional " if optional and not oneof else "")
            indent = "    " if oneof else "  "
            lines.append(f"{indent}{label}{ty} {snake(field)} = {number};")
        if oneof:
            lines.append("  }")
        lines += ["}", ""]
    Path(file).write_text("\n".join(lines).rstrip() + "\n")


def main():
    sourcemap, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    smap = json.loads(Path(sourcemap).read_text())
    sources = {Path(s).name: c for s, c in zip(smap["sources"], smap["sourcesContent"])}
    all_enums, types = {}, {}
    for name in ["patch.ts", "types.ts", "events.ts"]:
        all_enums.update(enums(sources[name]))
        types.update(interface_types(sources[name]))
    render(out / "patch.proto", list(messages(sources["patch.ts"]).items()), all_enums, types,
           ["google/protobuf/struct.proto"], list(enums(sources["patch.ts"])))
    render(out / "types.proto", list(messages(sources["types.ts"]).items()), all_enums, types,
           ["google/protobuf/struct.proto"], list(enums(sources["types.ts"])))
    render(out / "events.proto", list(messages(sources["events.ts"]).items()), all_enums, types,
           ["google/protobuf/struct.proto", "patch.proto", "types.proto"],
           list(enums(sources["events.ts"])))


if __name__ == "__main__":
    main()
