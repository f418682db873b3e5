// Block-scaled tcgen05.mma: `tcgen05.mma(d, a, b, scale_a = SFA, scale_b =
// SFB, accumulate = ...)`, as PTX's tcgen05.mma.kind::mxf4nvf4 /
// kind::mxf8f6f4 with .block_scale: A (M x K) and B (N x K, K-major) come from
// shared memory (sub-byte formats packed, simulator/Packed.h), the scale
// factors from tensor memory, SFA M x K/block and SFB N x K/block, one factor
// per element of the tmem buffers' layouts (PTX packs four 8-bit factors into
// each 32-bit column; the simulator's layouts address whole cells, so the
// byte position inside a column is not modelled).
//
// The numerics are the MMA table's (simulator/Mma.h): the row of the
// operands' dtypes, the scales' dtype and the block; one fused sum per K
// chunk of the instruction, in k order. Where the table has no row, or a row
// whose model is unknown, the run stops and says so.
#include "simulator/CtaExecutor.h"
#include "simulator/Mma.h"

#include <fmt/format.h>

namespace tilescope::sim {

namespace {

const mma::MmaInstructionRow *blockScaledRow(TargetKind target, Dtype d, Dtype a, Dtype b,
                                             Dtype scale, int64_t block) {
  for (const mma::MmaInstructionRow &row : mma::instructionTable())
    if (row.target == target && row.family == mma::MmaFamily::Tcgen05BlockScale && row.d == d &&
        row.a == a && row.b == b && row.scale == scale && row.scaleBlock == block)
      return &row;
  return nullptr;
}

} // namespace

bool CtaExecutor::readScales(const Region &r, int64_t rows, int64_t blocks, llvm::SMLoc loc,
                             std::vector<uint32_t> &out) {
  const BufferPlan &b = plan(r.buffer);
  if (b.scope != MemScope::Tmem)
    return fail(loc, fmt::format("block scales come from tensor memory; '{}' is {}", b.name,
                                 memScopeName(b.scope)));
  if (r.elements() != rows * blocks)
    return fail(loc, fmt::format("the scales '{}' have {} elements; {} rows x {} blocks need {}",
                                 b.name, r.elements(), rows, blocks, rows * blocks));
  out.resize(static_cast<size_t>(rows * blocks));
  ThreadRange all{0, p_.threads};
  for (int64_t i = 0; i < rows * blocks; ++i) {
    if (!inBounds(r, i))
      return fail(loc, fmt::format("'tcgen05.mma' reads outside '{}'", b.name));
    auto bits = readBits(r.buffer, bufferFlat(r, i), all, loc);
    if (!bits)
      return false;
    out[i] = static_cast<uint32_t>(*bits);
  }
  return true;
}

bool CtaExecutor::blockScaledMma(const PrimitiveCall &call, const ScaledOperands &o,
                                 std::vector<uint32_t> &C) {
  llvm::SMLoc loc = call.call->loc;
  auto sa = call.keywords.find("scale_a"), sb = call.keywords.find("scale_b");
  if (sa == call.keywords.end() || sb == call.keywords.end() || !sa->second.isRegion ||
      !sb->second.isRegion)
    return fail(loc, "a block-scaled tcgen05.mma needs both scale_a = and scale_b = (tensor "
                     "memory regions)");
  const Region &ra = sa->second.region, &rb = sb->second.region;
  Dtype scale = plan(ra.buffer).dtype;
  if (plan(rb.buffer).dtype != scale)
    return fail(loc, fmt::format("the scales of A are {} but those of B {}", dtypeName(scale),
                                 dtypeName(plan(rb.buffer).dtype)));
  int64_t blocks = ra.extent.empty() ? 1 : ra.extent.back();
  if (blocks <= 0 || o.K % blocks != 0)
    return fail(
        loc, fmt::format("K = {} is not a whole number of scale blocks ({} per row)", o.K, blocks));
  int64_t block = o.K / blocks;
  const mma::MmaInstructionRow *row = blockScaledRow(p_.target, o.d, o.a, o.b, scale, block);
  if (!row)
    return fail(loc, fmt::format("no block-scaled tcgen05.mma of {} computes {} += {} x {} with "
                                 "{} scales per {} elements",
                                 targetInfo(p_.target).name, dtypeName(o.d), dtypeName(o.a),
                                 dtypeName(o.b), dtypeName(scale), block));
  if (row->status == mma::ModelStatus::Unknown)
    return fail(loc,
                fmt::format("the numerics of {} on {} are unknown ({}); the simulator "
                            "does not guess",
                            mma::instructionPattern(*row), targetInfo(p_.target).name, row->note));
  if (o.K % row->k != 0)
    return fail(loc,
                fmt::format("K = {} is not a multiple of the instruction's K = {}", o.K, row->k));
  std::vector<uint32_t> scaleA, scaleB;
  if (!readScales(ra, o.M, blocks, loc, scaleA) || !readScales(rb, o.N, blocks, loc, scaleB))
    return false;
  // One instruction-K chunk at a time, in k order: A chunk M x k, B chunk
  // k x N, scales M x k/block and k/block x N.
  const int64_t k = row->k, per = k / block;
  std::vector<uint32_t> a(o.M * k), b(k * o.N), fa(o.M * per), fb(per * o.N);
  for (int64_t k0 = 0; k0 < o.K; k0 += k) {
    for (int64_t i = 0; i < o.M; ++i)
      for (int64_t kk = 0; kk < k; ++kk)
        a[i * k + kk] = o.A[i * o.K + k0 + kk];
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < o.N; ++j)
        b[kk * o.N + j] = o.Bt[j * o.K + k0 + kk];
    for (int64_t q = 0; q < per; ++q) {
      for (int64_t i = 0; i < o.M; ++i)
        fa[i * per + q] = scaleA[i * blocks + k0 / block + q];
      for (int64_t j = 0; j < o.N; ++j)
        fb[q * o.N + j] = scaleB[j * blocks + k0 / block + q];
    }
    mma::MmaInstruction inst{row, static_cast<int>(o.M), static_cast<int>(o.N),
                             static_cast<int>(k)};
    mma::MmaResult r = mma::evaluate(inst, {a, b, C, fa, fb});
    if (!r.ok)
      return fail(loc, r.error);
    C = std::move(r.d);
    stats_.mmaSums += o.M * o.N;
  }
  stats_.mmaInstructions += instructionsCovering(*row, o.M, o.N, o.K);
  return true;
}

} // namespace tilescope::sim
