"""Counts string literals that spell an intrinsic's name outside the intrinsic
table (ir/Intrinsics.cpp): passes ask the table by IntrinsicId instead of
comparing names (docs/architecture.md). Usage: count-intrinsic-names.py ROOT
[FILE...]; without FILEs it scans the C++ sources of ROOT's libraries and
tools. Prints every literal found with its place; exits 1 when there is one.

Names that are also expression functions (exp, max, ...: the table's
kExprFunctions) are not counted: a literal "max" may be either."""
import os
import re
import sys

root = sys.argv[1]
table_path = os.path.join(root, "ir", "Intrinsics.cpp")
table = open(table_path).read()
names = set(re.findall(r'\{I::\w+,\s*"([a-z_0-9.]+)"', table))
names |= set(re.findall(r'\{(?:std::pair\{)?I::\w+, "([a-z_0-9.]+)"\}', table))
expr_functions = set(re.findall(r'\{"([a-z_0-9]+)", \d+, Convergence::', table))
counted = names - expr_functions
if len(names) < 60:
    sys.exit("found only %d names in %s: the table's form changed" % (len(names), table_path))

# ptx/ is not scanned: its literals are PTX mnemonics (add, mul, ldmatrix), not IR calls.
libraries = ["ir", "sync", "dispatch", "proof", "verifier", "simulator", "racecheck", "check", "codegen", "reward",
             "layoutviz", "tools", "python", "kernels", "bench", "model"]
files = sys.argv[2:]
if not files:
    for lib in libraries:
        for dirpath, _, filenames in os.walk(os.path.join(root, lib)):
            for f in filenames:
                if f.endswith((".cpp", ".h", ".cuh")):
                    files.append(os.path.join(dirpath, f))
# The table itself; the `// problem:` language of the references, whose
# operations (copy, add, gemm, ...) are not calls of the IR, and the reward's
# performance stage, which asks whether a task's problem is a gemm; the
# visualizer's "copy" view (a diagnostic category of its page); the hard
# deadline's reading of the solver's SMT-LIB text ("div", "mod": SMT-LIB's
# operators, not the IR's).
exempt = {os.path.normpath(os.path.join(root, f)) for f in [
    "ir/Intrinsics.cpp", "ir/MmaShapes.cpp", "simulator/ReferenceElementwise.cpp",
    "simulator/ReferenceGemm.cpp", "reward/PerformanceStage.cpp", "layoutviz/Copy.cpp",
    "proof/QueryDeadline.cpp"]}

def literal_end(text, i):
    """The index just past the string or character literal opening at i."""
    quote, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != quote:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def strip_comments(text):
    # Comments go, string literals stay (a // inside a literal is kept).
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = literal_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, n if j < 0 else j))
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)

found = []
for path in sorted(files):
    if os.path.normpath(path) in exempt:
        continue
    text = strip_comments(open(path, errors="replace").read())
    for m in re.finditer(r'"([a-z_0-9.]+)"', text):
        if m.group(1) in counted:
            line = text.count("\n", 0, m.start()) + 1
            found.append("%s:%d: \"%s\"" % (os.path.relpath(path, root), line, m.group(1)))
for f in found:
    print(f)
print("%d intrinsic-name literals outside the table (%d names)" % (len(found), len(counted)))
sys.exit(1 if found else 0)
