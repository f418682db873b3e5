"""Triton kernels whose PTX is tilescope's foreign-PTX corpus (tests/ptx/).

Four kernels, written for this corpus:
  matmul_tma      pipelined Hopper matmul, C = A @ B^T in bf16 with fp32
                  accumulation, operands through TMA tensor descriptors, wgmma,
                  num_stages = 4; compiled twice: with warp specialisation
                  (`tl.range(..., warp_specialize=True)`) where this Triton
                  has it, and without;
  matmul_cpasync  the same product through pointer loads (cp.async ring);
  rmsnorm         one row of 1024 per program;
  attention_fwd   flash-attention forward, head dim 64, online softmax.
Each kernel is launched once on the GPU (so that Triton compiles it for the
device) and its PTX is written from the compiled kernel's `asm["ptx"]`.
Run by dump_triton_ptx.py.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_tma_ws_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    off_m = (pid // num_pid_n) * BLOCK_M
    off_n = (pid % num_pid_n) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


@triton.jit
def matmul_tma_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    off_m = (pid // num_pid_n) * BLOCK_M
    off_n = (pid % num_pid_n) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


@triton.jit
def matmul_tma_device_desc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Fallback for a Triton without host-side TensorDescriptor: descriptors
    # built on the device.
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    off_m = (pid // num_pid_n) * BLOCK_M
    off_n = (pid % num_pid_n) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


@triton.jit
def matmul_cpasync_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_pid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid % num_pid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[None, :] * K + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16))


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / N
    inv = tl.math.rsqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * inv * w
    tl.store(y_ptr + row * stride + cols, y.to(tl.bfloat16), mask=mask)


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr):
    # q, k, v, o: [batch * heads, seq_len, HEAD_DIM], contiguous.
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * seq_len * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in tl.range(0, seq_len, BLOCK_N, num_stages=3):
        kt = tl.load(k_ptr + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, kt) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.bfloat16), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.bfloat16))
