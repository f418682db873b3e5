#!/usr/bin/env python3
"""Writes a copy of LLVM 14's llvm/Support/JSON.h that clang can compile as C++20.

Why: `json::Array` holds a `std::vector<Value>` while `Value` is still
incomplete, and its inline member functions call the vector's members. Under
C++20 libstdc++ 12 makes those members constexpr, and clang (14 and 16 alike)
instantiates a constexpr function as soon as it is referenced, so every
translation unit that includes JSON.h fails ("arithmetic on a pointer to an
incomplete type 'llvm::json::Value'"). GCC defers the instantiation and
accepts the header, which is why only the clang builds (the `asan` and `fuzz`
presets) need this. LLVM issue 55780 describes it.

The copy declares the Array members in the class and defines them, unchanged,
right after the definition of `Value`, where `Value` is complete. Nothing else
of the header changes; the layout of Array is the same, so the copy is
compatible with libLLVM-14.

usage: llvm_json_compat.py SYSTEM_JSON_H OUTPUT
"""
import re
import sys


def match_brace(text, open_at):
    """Index just past the brace that closes the one at open_at."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced braces")


def split_members(body):
    """The class body as a list of (text, is_function_definition) pieces."""
    pieces, i, start = [], 0, 0
    while i < len(body):
        c = body[i]
        if c == ";":
            pieces.append((body[start : i + 1], False))
            start = i + 1
        elif c == "{":
            end = match_brace(body, i)
            pieces.append((body[start:end], True))
            i, start = end, end
            continue
        i += 1
    pieces.append((body[start:], False))
    return pieces


def out_of_line(piece):
    """(declaration in the class, definition after Value) of one member, or None
    when the member stays as it is (templates, constructors with no body use)."""
    lead = re.match(r"\s*(?://[^\n]*\n\s*)*", piece).group(0)
    member = piece[len(lead) :]
    if member.startswith("template"):
        return None  # dependent: instantiated only where used, Value complete
    head, body = member[: member.index("{")], member[member.index("{") :]
    head = head.rstrip()
    if head.startswith("friend "):
        decl = head[len("friend ") :]
        return lead + head + ";", "inline " + decl + " " + body
    m = re.match(r"(.*?)\b(operator\[\]|\w+)\s*(\(.*)$", head, re.S)
    if not m:
        raise ValueError("unrecognised member: " + member)
    ret, name, rest = m.group(1).strip(), m.group(2), m.group(3)
    if name == "Array":
        return None  # the Collection constructor is a template, handled above
    ret = re.sub(r"^(const_iterator|iterator)\b", r"Array::\1", ret)
    return lead + head + ";", "inline " + ret + " Array::" + name + rest + " " + body


def main():
    source_path, output_path = sys.argv[1], sys.argv[2]
    text = open(source_path).read()
    array_at = text.index("class Array {")
    array_open = text.index("{", array_at)
    array_close = match_brace(text, array_open)
    body = text[array_open + 1 : array_close - 1]
    new_body, definitions = [], []
    for piece, is_function in split_members(body):
        moved = out_of_line(piece) if is_function else None
        if moved is None:
            new_body.append(piece)
        else:
            new_body.append(moved[0])
            definitions.append(moved[1])
    if not definitions:
        raise ValueError("no Array member moved: the header is not LLVM 14's")
    value_at = text.index("class Value {", array_close)
    value_close = match_brace(text, text.index("{", value_at))
    value_end = text.index(";", value_close) + 1
    out = (
        text[: array_open + 1]
        + "".join(new_body)
        + text[array_close - 1 : value_end]
        + "\n\n// Array's members, defined where Value is complete "
        + "(scripts/llvm_json_compat.py).\n"
        + "\n".join(definitions)
        + "\n"
        + text[value_end:]
    )
    with open(output_path, "w") as f:
        f.write(out)


if __name__ == "__main__":
    main()
