# Per-CTA timeline of one launch (globaltimer ns), after an L2 flush, as bench.py times it.
import ctypes, sys, torch, numpy as np
lib = ctypes.CDLL(sys.argv[1]); k = sys.argv[2]; n = int(sys.argv[3]); ctas = int(sys.argv[4])
launch = getattr(lib, "tilescope_launch_" + k); launch.restype = ctypes.c_int
A = torch.randn(n, n, device="cuda").bfloat16(); B = torch.randn(n, n, device="cuda").bfloat16()
C = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
ptrs = (ctypes.c_void_p * 3)(A.data_ptr(), B.data_ptr(), C.data_ptr())
syms = (ctypes.c_int64 * 3)(n, n, n); sc = (ctypes.c_double * 1)(0.0)
F = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
buf = np.zeros(1024 * 16, dtype=np.uint64)
rows = []
for rep in range(12):
    F.zero_()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); rc = launch(ptrs, syms, sc, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)); e.record(); e.synchronize()
    assert rc == 0
    lib.ts_trace_get(buf.ctypes.data_as(ctypes.c_void_p))
    g = buf.reshape(1024, 8, 2)[:ctas, :, 0].astype(np.int64)
    t0 = g[:, 0].min()
    sm = (buf.reshape(1024, 8, 2)[:ctas, 0, 1] >> 48).astype(np.int64)
    rows.append((s.elapsed_time(e) * 1000, g - t0, sm))
err = ((C.double() - A.double() @ B.double().t()).norm() / (A.double() @ B.double().t()).norm()).item()
print(k, "rel_err %.2e" % err)
for ev, g, sm in rows[4:8]:
    med = np.median(g, axis=0); mx = g.max(axis=0); mn = g.min(axis=0)
    last = max(m for m in range(8) if mx[m] > 0)
    per = np.bincount(sm, minlength=140)[sm]
    for c in sorted(set(per.tolist())):
        sel = g[per == c, last]
        print("  CTAs sharing an SM with %d: %d CTAs, last mark min/median/max %d %d %d" % (c, len(sel), sel.min(), np.median(sel), sel.max()))
    print("event %.2f us | per mark: min/median/max ns" % ev)
    for m in range(8):
        if mx[m] > 0 or m == 0: print("  mark %d: %6d %6d %6d" % (m, mn[m], med[m], mx[m]))
