#!/usr/bin/env python3
"""Validates JSON documents against docs/reward.schema.json with the subset of
JSON Schema 2020-12 the schema uses (Python's standard library has no
validator): type, enum, const, pattern, minimum, maximum, minLength,
minItems, maxItems, properties, required, additionalProperties: false,
unevaluatedProperties: false, items, anyOf, $ref to #/$defs/... . A keyword
outside that subset is an error, so the schema cannot drift past the checker.

usage: check_schema.py SCHEMA [--def NAME] [--lines] FILE|-
  --def NAME   validate against $defs/NAME instead of the root
  --lines      the input is JSON lines (batch output); each line is checked
Exit 0 when every document is valid; 1 with one message per violation.
"""
import json
import re
import sys

KNOWN = {"$schema", "$id", "title", "description", "$defs", "$ref", "type", "enum", "const",
         "pattern", "minimum", "maximum", "minLength", "minItems", "maxItems", "properties",
         "required", "additionalProperties", "unevaluatedProperties", "items", "anyOf"}

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class Validator:
    def __init__(self, root):
        self.root = root

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref}")
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def check(self, schema, value, path, errors):
        """Appends violations to `errors`; returns the property names evaluated."""
        unknown = set(schema) - KNOWN
        if unknown:
            raise ValueError(f"schema keyword(s) outside the checked subset: {sorted(unknown)}")
        evaluated = set()
        if "$ref" in schema:
            evaluated |= self.check(self.resolve(schema["$ref"]), value, path, errors)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(TYPES[t](value) for t in types):
                errors.append(f"{path}: expected {' or '.join(types)}, got {json.dumps(value)[:60]}")
                return evaluated
        if "enum" in schema and value not in schema["enum"]:
            errors.append(f"{path}: {json.dumps(value)[:60]} is not one of {schema['enum']}")
        if "const" in schema and value != schema["const"]:
            errors.append(f"{path}: expected {schema['const']}")
        if isinstance(value, str):
            if "pattern" in schema and not re.search(schema["pattern"], value):
                errors.append(f"{path}: '{value[:60]}' does not match {schema['pattern']}")
            if len(value) < schema.get("minLength", 0):
                errors.append(f"{path}: shorter than {schema['minLength']}")
        if TYPES["number"](value):
            if "minimum" in schema and value < schema["minimum"]:
                errors.append(f"{path}: {value} < {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                errors.append(f"{path}: {value} > {schema['maximum']}")
        if isinstance(value, list):
            if len(value) < schema.get("minItems", 0):
                errors.append(f"{path}: fewer than {schema['minItems']} items")
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                errors.append(f"{path}: more than {schema['maxItems']} items")
            if "items" in schema:
                for i, item in enumerate(value):
                    self.check(schema["items"], item, f"{path}[{i}]", errors)
        if isinstance(value, dict):
            for key in schema.get("required", []):
                if key not in value:
                    errors.append(f"{path}: missing '{key}'")
            props = schema.get("properties", {})
            for key, sub in props.items():
                if key in value:
                    self.check(sub, value[key], f"{path}.{key}", errors)
            evaluated |= set(props) & set(value)
            if schema.get("additionalProperties") is False:
                for key in set(value) - set(props):
                    errors.append(f"{path}: unexpected property '{key}'")
        if "anyOf" in schema:
            best = None
            for sub in schema["anyOf"]:
                sub_errors = []
                names = self.check(sub, value, path, sub_errors)
                if not sub_errors:
                    evaluated |= names
                    best = []
                    break
                if best is None or len(sub_errors) < len(best):
                    best = sub_errors
            if best:
                errors.append(f"{path}: matches no alternative of anyOf; closest: {best[0]}")
        if schema.get("unevaluatedProperties") is False and isinstance(value, dict):
            for key in set(value) - evaluated:
                errors.append(f"{path}: unexpected property '{key}'")
        return evaluated


def main():
    args = sys.argv[1:]
    schema = json.load(open(args.pop(0)))
    target = schema
    if "--def" in args:
        i = args.index("--def")
        target = schema["$defs"][args[i + 1]]
        del args[i:i + 2]
    lines = "--lines" in args
    if lines:
        args.remove("--lines")
    text = sys.stdin.read() if args[0] == "-" else open(args[0]).read()
    docs = [json.loads(l) for l in text.splitlines() if l.strip()] if lines else [json.loads(text)]
    v = Validator(schema)
    errors = []
    for n, doc in enumerate(docs):
        v.check(target, doc, f"doc{n}" if lines else "$", errors)
    for e in errors:
        print("schema violation:", e)
    if not docs:
        print("no documents")
        return 1
    print(f"{len(docs)} document(s), {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
