#!/usr/bin/env python3
"""helper attn3 (session 16): the causal kernel's diagonal softmax split by
consumer. gen_dh.py IN OUT NAME: the causal kernel of IN (a file holding only it)
with each masked arm (the diagonal block) rewritten: on the diagonal block the
keys kv0 + 64 .. + 127 are past every row of consumer 0 (rows q0 .. q0 + 63),
and the keys kv0 .. kv0 + 63 are before every row of consumer 1, so consumer 0
masks columns 0 .. 63 and writes p = 0 for the others without an exp2, and
consumer 1 masks only columns 64 .. 127. The same values as the masked arm
(max with -3e38 changes nothing, l + 0 = l, p = +0)."""
import re
import sys

src, dst, name = sys.argv[1:4]
text = open(src).read()
text = re.sub(r"kernel attention_fwd_\w+\(", "kernel %s(" % name, text, count=1)


def arm(ind, lhs):
    """the two consumers' diagonal softmax, at indentation ind, mask lhs <= q0 + r0 + row."""
    i1, i2, i3 = ind + "  ", ind + "    ", ind + "      "
    col = "let col = j / 2 * 8 + laneid % 4 * 2 + j % 2"
    vis = "%s <= q0 + r0 + row" % lhs
    out = []

    def head():
        out.extend([i1 + "for h2 in 0 .. 2 unroll {",
                    i2 + "let row = wid_in_wg * 16 + h2 * 8 + laneid / 4",
                    i2 + "mn[h2] = m[h2]"])

    def mid():
        out.extend([i2 + "mn[h2] = max(mn[h2], shfl_xor(mn[h2], 1))",
                    i2 + "mn[h2] = max(mn[h2], shfl_xor(mn[h2], 2))",
                    i2 + "alpha[h2] = exp2((m[h2] - mn[h2]) * sl2)",
                    i2 + "l[h2] = l[h2] * alpha[h2]",
                    i2 + "let ms = mn[h2] * sl2"])

    def loop(lo, hi, body):
        out.extend([i2 + "for j in %d .. %d unroll {" % (lo, hi), i3 + col]
                   + [i3 + b for b in body] + [i2 + "}"])

    maxm = ["mn[h2] = max(mn[h2], select(%s, Sacc[row, col], -3.0e38))" % vis]
    maxu = ["mn[h2] = max(mn[h2], Sacc[row, col])"]
    expm = ["let p = select(%s, exp2(fma(Sacc[row, col], sl2, -ms)), 0.0)" % vis,
            "l[h2] = l[h2] + p", "Sacc[row, col] = p"]
    expu = ["let p = exp2(fma(Sacc[row, col], sl2, -ms))",
            "l[h2] = l[h2] + p", "Sacc[row, col] = p"]
    out.append(ind + "if w == 0 {")
    out.append(i1 + "// Consumer 0: keys kv0 + 64 .. are past all its rows.")
    head(); loop(0, 16, maxm); mid(); loop(0, 16, expm)
    loop(16, 32, ["Sacc[row, col] = 0.0"])
    out.extend([i2 + "m[h2] = mn[h2]", i1 + "}"])
    out.append(ind + "} else {")
    out.append(i1 + "// Consumer 1: keys kv0 .. kv0 + 63 are before all its rows.")
    head(); loop(0, 16, maxu); loop(16, 32, maxm); mid(); loop(0, 16, expu); loop(16, 32, expm)
    out.extend([i2 + "m[h2] = mn[h2]", i1 + "}"])
    out.append(ind + "}")
    return "\n".join(out) + "\n"


lines = text.split("\n")
res, k = [], 0
while k < len(lines):
    ln = lines[k]
    m = re.match(r"^(\s*)\} else \{$", ln)
    nxt = lines[k + 1] if k + 1 < len(lines) else ""
    if m and nxt.strip().startswith("for h2 in 0 .. 2 unroll {") and \
            "select(" in "\n".join(lines[k + 2:k + 8]) and "<= q0 + r0 + row" in "\n".join(lines[k + 2:k + 8]):
        ind = m.group(1)
        mm = re.search(r"select\((.*?) <= q0 \+ r0 \+ row", "\n".join(lines[k + 2:k + 8]))
        lhs = mm.group(1)
        # skip the for h2 block: up to the closing brace at indentation ind + "  "
        j = k + 2
        while lines[j] != ind + "  }":
            j += 1
        res.append(ln)
        res.extend(arm(ind + "  ", lhs).rstrip("\n").split("\n"))
        k = j + 1
        continue
    res.append(ln)
    k += 1
open(dst, "w").write("\n".join(res))
