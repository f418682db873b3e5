"""Mutation operators of the differential soundness sweep (scripts/sweep/sweep.py).

Each operator reads the lines of one plain kernel (a family's point already instantiated) and
yields mutants (op, line number, description, new text) that change its synchronisation:
parities, ring moduli, waits / arrives / fences / commits dropped, arrive counts, expect_tx byte
counts, barriers moved under a condition, named-barrier ids and thread counts, loop bounds and
store offsets. Operators are textual on purpose: the sweep should not share the parser's view
of the kernel it tests."""
import re

# Statements whose removal weakens the synchronisation (one line each, no block).
DROPPABLE = re.compile(r'^\s*(mbarrier\.(wait|arrive|arrive_expect_tx|try_wait)|barrier\.(sync|arrive)|'
                       r'cta\.sync|fence\.|wgmma\.(fence|commit_group|wait_group)|'
                       r'tma\.(store_commit|store_wait)|tcgen05\.(commit|wait_ld|wait_st|fence\w*)|'
                       r'cp\.async\.\w+|copy_async_(commit|wait)\w*|cluster\.\w+|flag\.\w+)\b')
# Barrier statements that can be moved under a (warp-uniform) condition.
MOVABLE = re.compile(r'^\s*(mbarrier\.(wait|arrive)|barrier\.(sync|arrive)|cta\.sync|fence\.)')
NAMED = re.compile(r'barrier\.(sync|arrive)\((\d+), threads = (\d+)\)')
STORE = re.compile(r'^(\s*)(tma\.store|wg\.copy|warp\.copy|cta\.copy|copy)\((\w+)\[')


def _arg(text, start):
    """End index (exclusive) of the expression that begins at start: up to the ',' or ')' that
    closes at depth 0."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in '([':
            depth += 1
        elif c in ')]':
            if depth == 0:
                return i
            depth -= 1
        elif c == ',' and depth == 0:
            return i
    return len(text)


def _body(lines):
    """Index of the first line of the kernel body (after the `{` that follows `launch`)."""
    for i, l in enumerate(lines):
        if l.strip() == '{':
            return i + 1
    return 0


def _globals(lines):
    """Names of the kernel's global tensors (the parameters)."""
    head = ' '.join(l for l in lines[:_body(lines)])
    return set(re.findall(r'(\w+): global', head))


def _sub(line, start, end, new):
    return line[:start] + new + line[end:]


def operators(lines):
    """Every mutant of the kernel: (op, line index, description, new line text or None to drop,
    extra: lines to insert after it)."""
    body = _body(lines)
    glob = _globals(lines)
    named_ids = sorted({int(m.group(2)) for l in lines for m in NAMED.finditer(l)})
    for i in range(body, len(lines)):
        l = lines[i]
        s = l.strip()
        if not s or s.startswith('//'):
            continue
        # parity flip and the parity's stage divisor
        for m in re.finditer(r'parity = ', l):
            a = m.end()
            e = _arg(l, a)
            expr = l[a:e]
            yield 'parity-flip', i, f'parity {expr} -> ({expr} + 1) % 2', _sub(l, a, e, f'({expr} + 1) % 2')
            d = re.search(r'/ (\d+)', expr)
            if d:
                n = int(d.group(1))
                yield ('parity-divisor', i, f'parity {expr}: / {n} -> / {n + 1}',
                       _sub(l, a + d.start(1), a + d.end(1), str(n + 1)))
        # ring index modulus (a `let` bound to `... % N`)
        m = re.match(r'(\s*let \w+ = (\w+|\(.*\)) % )(\d+)\s*$', l)
        if m:
            n = int(m.group(3))
            for k in sorted({1, n - 1, n + 1} - {0, n}):
                yield 'ring-modulus', i, f'% {n} -> % {k}', m.group(1) + str(k)
        # dropped synchronisation
        if DROPPABLE.match(l) and not s.endswith('{'):
            yield 'drop', i, f'drop `{s}`', None
        # arrive counts of mbarrier declarations
        if s.startswith('mbarrier ') and '(count' in s:
            for m in re.finditer(r'(\w+)(\[\d+\])?\(count = (\d+)\)', l):
                c = int(m.group(3))
                for k in sorted({c + 1, c * 2, c - 1} - {0, c}):
                    yield ('arrive-count', i, f'{m.group(1)} count {c} -> {k}',
                           _sub(l, m.start(3), m.end(3), str(k)))
        # arrive counts of arrives (count = n argument)
        if re.match(r'\s*mbarrier\.arrive\(', l) and 'count' not in l:
            yield 'arrive-count', i, f'`{s}` with count = 2', l.rstrip()[:-1] + ', count = 2)'
        # expect_tx bytes
        for m in re.finditer(r'bytes = (\d+)', l):
            b = int(m.group(1))
            for k in (b // 2, b * 2, b + 16):
                yield 'expect-tx', i, f'bytes {b} -> {k}', _sub(l, m.start(1), m.end(1), str(k))
        # moved under a warp-uniform condition (half the warps of a warpgroup)
        if MOVABLE.match(l) and not s.endswith('{'):
            ind = l[:len(l) - len(l.lstrip())]
            yield ('under-if', i, f'`{s}` under `if wid_in_wg % 2 == 1`',
                   f'{ind}if wid_in_wg % 2 == 1 {{\n{ind}  {s}\n{ind}}}')
        # named barrier ids and thread counts
        for m in NAMED.finditer(l):
            bid, thr = int(m.group(2)), int(m.group(3))
            for k in [x for x in named_ids if x != bid] + [max(named_ids) + 1]:
                yield 'named-id', i, f'barrier {bid} -> {k}', _sub(l, m.start(2), m.end(2), str(k))
            for k in sorted({thr // 2, thr + 128} - {0, thr}):
                if k % 32 == 0 and k <= 1024:
                    yield 'named-threads', i, f'threads {thr} -> {k}', _sub(l, m.start(3), m.end(3), str(k))
        # loop bounds (not unrolled register loops: those only move values)
        m = re.match(r'(\s*for \w+ in )(.+?) \.\. (.+?)( step \S+)?( unroll)? \{\s*$', l)
        if m and not m.group(5):
            yield ('loop-bound', i, f'for .. {m.group(3)} -> .. {m.group(3)} - 1',
                   _sub(l, m.start(3), m.end(3), f'({m.group(3)}) - 1'))
        # a store's offset (the first index of the destination)
        m = STORE.match(l)
        if m and (m.group(3) in glob or m.group(2) != 'tma.store'):
            a = m.end()
            e = _arg(l, a)
            idx = l[a:e]
            colon = idx.find(' : ')
            head = idx if colon < 0 else idx[:colon]
            if head.strip() and head.strip() != ':':
                yield ('store-offset', i, f'store {m.group(3)}[{head} -> {head} + 1',
                       _sub(l, a, a + len(head), f'{head} + 1'))


def _indent(l):
    return len(l) - len(l.lstrip())


def _block_end(lines, i):
    """Index of the line after the statement that starts at i (a block: after its closing `}`)."""
    if not lines[i].rstrip().endswith('{'):
        return i + 1
    ind = _indent(lines[i])
    j = i + 1
    while j < len(lines) and not (lines[j].strip().startswith('}') and _indent(lines[j]) == ind and
                                  not lines[j].strip().startswith('} else')):
        j += 1
    return j + 1


def _neighbour_moves(lines, i, body, prefix):
    """Statement i moved past the next statement at its depth (a whole block if that opens one;
    `PREFIX-down`) and before the previous simple one (`PREFIX-up`)."""
    l, s = lines[i], lines[i].strip()
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or lines[j].strip().startswith('//')):
        j += 1
    if j < len(lines) and _indent(lines[j]) == _indent(l) and not lines[j].strip().startswith('}'):
        e = _block_end(lines, j)
        if not lines[j].strip().startswith('let '):
            yield (f'{prefix}-down', i, f'`{s}` after `{lines[j].strip()[:40]}`',
                   lines[:i] + lines[i + 1:e] + [l] + lines[e:])
    k = i - 1
    while k > body and (not lines[k].strip() or lines[k].strip().startswith('//')):
        k -= 1
    if (k >= body and _indent(lines[k]) == _indent(l) and not lines[k].rstrip().endswith('{') and
            not lines[k].strip().startswith(('}', 'let ', 'reg ', 'shared ', 'mbarrier '))):
        yield (f'{prefix}-up', i, f'`{s}` before `{lines[k].strip()[:40]}`',
               lines[:k] + [l, lines[k]] + lines[i + 1:])


def reorders(lines):
    """Second-pass operators: a synchronisation statement moved past its neighbour statement
    (either way), wait_group / store_wait depths, one-thread conditions widened, elect_sync
    removed. Each is (op, line index, description, list of new lines for the whole kernel)."""
    body = _body(lines)
    for i in range(body, len(lines)):
        l, s = lines[i], lines[i].strip()
        if not s or s.startswith('//'):
            continue
        if (DROPPABLE.match(l) or MOVABLE.match(l)) and not s.endswith('{'):
            yield from _neighbour_moves(lines, i, body, 'move')
        if MOVABLE.match(l) and not s.endswith('{'):
            # under a condition on the enclosing loop's variable: skipped on some iterations
            ind = _indent(l)
            for k in range(i - 1, body - 1, -1):
                f = re.match(r'\s*for (\w+) in ', lines[k])
                if f and _indent(lines[k]) < ind:
                    v, pad = f.group(1), l[:ind]
                    for c in (f'{v} > 0', f'{v} % 2 == 0'):
                        yield ('under-if-iter', i, f'`{s}` under `if {c}`',
                               lines[:i] + [f'{pad}if {c} {{', f'{pad}  {s}', f'{pad}}}'] + lines[i + 1:])
                    break
        m = re.search(r'(wait_group|store_wait|wait_ld)\((\d+)', l)
        if m:
            n = int(m.group(2))
            yield ('wait-depth', i, f'{m.group(1)}({n}) -> ({n + 1})',
                   lines[:i] + [_sub(l, m.start(2), m.end(2), str(n + 1))] + lines[i + 1:])
        m = re.match(r'(\s*if (tid_in_wg|threadIdx\.x|laneid|tx|warpid|wid_in_wg) )== (\d+)( \{)\s*$', l)
        if m:
            n = int(m.group(3))
            yield ('widen-cond', i, f'`{s}` -> `< {n + 2}`',
                   lines[:i] + [f'{m.group(1)}< {n + 2}{m.group(4)}'] + lines[i + 1:])
        if s == 'if elect_sync() {':
            e = _block_end(lines, i)
            inner = [x[2:] if x.startswith('  ') else x for x in lines[i + 1:e - 1]]
            yield 'no-elect', i, 'elect_sync() removed (every lane)', lines[:i] + inner + lines[e:]


def fences(lines):
    """Third-pass operators, on the tcgen05 thread-sync fences (session 20): each
    `tcgen05.fence_before_thread_sync()` / `fence_after_thread_sync()` dropped, moved past the
    next statement (a whole block if it opens one) and before the previous simple statement (so
    a wait or barrier beside it changes sides)."""
    body = _body(lines)
    for i in range(body, len(lines)):
        l, s = lines[i], lines[i].strip()
        if not s.startswith('tcgen05.fence_'):
            continue
        yield ('fence-drop', i, f'drop `{s}`', lines[:i] + lines[i + 1:])
        yield from _neighbour_moves(lines, i, body, 'fence')


def apply(lines, mutant):
    if isinstance(mutant[3], list):
        return mutant[3]
    _, i, _, new = mutant
    out = list(lines)
    if new is None:
        del out[i]
    else:
        out[i] = new
    return out
