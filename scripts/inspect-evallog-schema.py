#!/usr/bin/env python3
"""Extracts inspect_ai's EvalLog schema (and every schema it references, and the EvalSet of an
eval set's `eval-set.json`) from its published
OpenAPI file into test/export/fixtures/inspect-evallog-schema.json, a JSON Schema 2020-12 document
the inspect export's test validates every exported log against.

    git -C INSPECT_AI_CLONE show COMMIT:src/inspect_ai/_view/inspect-openapi.json > /tmp/openapi.json
    python3 scripts/inspect-evallog-schema.py /tmp/openapi.json COMMIT COMMIT_DATE

OpenAPI's `#/components/schemas/X` references become `#/$defs/X`; nothing else is changed.
"""
import json
import sys

openapi_path, commit, date = sys.argv[1], sys.argv[2], sys.argv[3]
with open(openapi_path, encoding="utf-8") as f:
    schemas = json.load(f)["components"]["schemas"]

PREFIX = "#/components/schemas/"


def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def rewrite(node):
    if isinstance(node, dict):
        return {k: (v.replace(PREFIX, "#/$defs/") if k == "$ref" else rewrite(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [rewrite(v) for v in node]
    if isinstance(node, str) and node.startswith(PREFIX):
        return node.replace(PREFIX, "#/$defs/")  # a discriminator's mapping
    return node


needed, stack = set(), ["EvalLog", "EvalSet"]
while stack:
    name = stack.pop()
    if name in needed:
        continue
    needed.add(name)
    stack.extend(r[len(PREFIX):] for r in refs(schemas[name]))

out = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$comment": (
        f"inspect_ai's EvalLog (log format version 2) from src/inspect_ai/_view/inspect-openapi.json at "
        f"commit {commit} ({date}) of github.com/UKGovernmentBEIS/inspect_ai; made by scripts/inspect-evallog-schema.py"
    ),
    "x-source": {
        "repository": "https://github.com/UKGovernmentBEIS/inspect_ai",
        "path": "src/inspect_ai/_view/inspect-openapi.json",
        "commit": commit,
        "date": date,
    },
    "$ref": "#/$defs/EvalLog",
    "$defs": {name: rewrite(schemas[name]) for name in sorted(needed)},
}
with open("test/export/fixtures/inspect-evallog-schema.json", "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1, sort_keys=False)
    f.write("\n")
print(f"{len(needed)} schemas")
