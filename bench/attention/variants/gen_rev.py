#!/usr/bin/env python3
"""helper attn3 (session 16): the causal kernel with the key blocks in
FlashAttention-3's order, the diagonal block first. gen_rev.py IN OUT NAME, IN
the output of gen_dh.py: K0s gets the diagonal K block (q0), iteration i loads
K block nk - 2 - i and V block nk - 1 - i, the last V block (Os) is block 0;
the peeled block is the diagonal one (always masked, split by consumer), and
the loop has only the unmasked arm (no branch)."""
import re
import sys

src, dst, name = sys.argv[1:4]
t = open(src).read()
t = re.sub(r"kernel attention_fwd_\w+\(", "kernel %s(" % name, t, count=1)


def sub(a, b, n):
    global t
    assert t.count(a) == n, (a, t.count(a))
    t = t.replace(a, b)


sub("K[b, h, 0 : +128,", "K[b, h, q0 : +128,", 2)
sub("K[b, h, (i + 1) * 128 : +128", "K[b, h, (nk - 2 - i) * 128 : +128", 2)
sub("V[b, h, i * 128 : +128", "V[b, h, (nk - 1 - i) * 128 : +128", 2)
sub("V[b, h, (nk - 1) * 128 : +128", "V[b, h, 0 : +128", 2)
sub("select(col <= q0 + r0 + row", "select(col <= r0 + row", 4)
sub("      let kv0 = (i + 1) * 128\n", "", 1)


def block_end(lines, k):
    """index of the line closing the brace opened on line k."""
    d = 0
    for j in range(k, len(lines)):
        d += lines[j].count("{") - lines[j].count("}")
        if d == 0 or (j > k and d <= 0):
            return j
    raise ValueError(k)


def keep_arm(t, head, keep_then):
    """replace `if COND { A } else { B }` starting at the line head with A or B, dedented."""
    lines = t.split("\n")
    k = next(i for i, ln in enumerate(lines) if ln.strip() == head)
    ind = lines[k][:len(lines[k]) - len(lines[k].lstrip())]
    e = next(i for i in range(k + 1, len(lines)) if lines[i] == ind + "} else {")
    f = next(i for i in range(e + 1, len(lines)) if lines[i] == ind + "}")
    body = lines[k + 1:e] if keep_then else lines[e + 1:f]
    body = [ln[2:] if ln.startswith(ind + "  ") else ln for ln in body]
    return "\n".join(lines[:k] + body + lines[f + 1:])


t = keep_arm(t, "if nk > 1 {", False)
t = keep_arm(t, "if i + 2 < nk {", True)
open(dst, "w").write(t)
