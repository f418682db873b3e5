// The CUDA emitter's wgmma family (KernelEmitter.h): the fence, commit and
// wait of wgmma groups, and wgmma.mma_async from the MMA row of its dtypes
// (ir/MmaShapes.h).
#include "codegen/KernelEmitter.h"

#include "ir/Descriptors.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope::codegen::detail {

bool KernelEmitter::wgmmaCall(const CallStmt &c, IntrinsicId id) {
  if (id == IntrinsicId::WgmmaFence) {
    plainPtx(id);
  } else if (id == IntrinsicId::WgmmaCommitGroup) {
    plainPtx(id);
  } else if (id == IntrinsicId::WgmmaWaitGroup) {
    line(fmt::format("asm volatile(\"{} {};\" ::: \"memory\");", intrinsic(id).ptx,
                     ex(callArg(c, 0))));
    // Pin the accumulators after the wait (CUTLASS's warpgroup_fence_operand)
    // so the compiler reads them only once the wgmmas that write them retired.
    for (const std::string &r : regsInScope_)
      if (wgmmaAccs_.count(r))
        line(fmt::format("ts_fence_operands({});", r));
  } else if (id == IntrinsicId::WgmmaMmaAsync) {
    std::string accName = as<Var>(callArg(c, 0)).name;
    const BufferInfo &acc = bufs_.at(accName);
    int n = static_cast<int>(acc.constShape.at(1));
    if (bufs_.at(regionStart(callArg(c, 1)).buffer).scope == MemScope::Reg) {
      wgmmaRegisterA(c, accName, n);
      return true;
    }
    std::string abuf, bbuf;
    regionByteAddress(callArg(c, 1), &abuf);
    regionByteAddress(callArg(c, 2), &bbuf);
    auto desc = [&](const std::string &addr, const BufferInfo &b) {
      int64_t span = swizzleSpan(b);
      uint64_t mode = *fieldCodeByKey(DescriptorKind::WgmmaSmem, DescField::Swizzle, span);
      return fmt::format("ts_wgmma_desc({}, {}, {})", addr, mode, 8 * span);
    };
    wgmmaAccs_.insert(accName);
    Dtype operandType = bufs_.at(abuf).dtype;
    // The instruction: the MMA table's row for these dtypes (ir/MmaShapes.h).
    const MmaShape *row = findMmaShape(k_.launch.target, *intrinsic(id).mma, acc.dtype, operandType,
                                       bufs_.at(bbuf).dtype);
    if (!row || row->d != Dtype::f32) {
      error(c.loc, fmt::format("no lowering for wgmma.mma_async on {} operands yet",
                               dtypeName(operandType)));
      return true;
    }
    bool half = row->k == 16; // f16 / bf16: the helpers of every 16-bit kind
    if (half)
      wgmmaShapes_.insert(n);
    else
      wgmmaOtherShapes_.insert({n, row});
    std::string ab = half ? std::string(ptxTypeName(row->a)) : wgmmaHelperSuffix(*row);
    // `accumulate` may be a run-time predicate (`accumulate = k > 0`: the
    // first k-step overwrites, so no fill defines the accumulators while
    // wgmmas are in flight, which would make ptxas serialize them).
    Expr accum = callKeyword(c, "accumulate");
    std::string scaleD = !accum ? "1"
                         : accum->kind == ExprKind::BoolImm
                             ? (as<BoolImm>(accum).value ? "1" : "0")
                             : fmt::format("({}) ? 1 : 0", ex(accum));
    // One instruction per 16 of K (the checker admits K a multiple of 16);
    // the first takes `accumulate`, the rest add to what it wrote.
    auto isSet = [&](const char *kw) {
      Expr e = callKeyword(c, kw);
      return e && e->kind == ExprKind::BoolImm && as<BoolImm>(e).value;
    };
    bool ta = isSet("transpose_a"), tb = isSet("transpose_b");
    int64_t kExtent = regionExtents(callArg(c, 1)).at(ta ? 0 : 1);
    for (int64_t k = 0; k < kExtent; k += row->k) {
      Expr a = kSlice(callArg(c, 1), ta ? 0 : 1, k, row->k),
           b = kSlice(callArg(c, 2), tb ? 1 : 0, k, row->k);
      std::string aaddr = regionByteAddress(a, &abuf), baddr = regionByteAddress(b, &bbuf);
      line(fmt::format("ts_wgmma_m64n{}k{}_{}({}, {}, {}, {});", n, row->k, ab, accName,
                       desc(aaddr, bufs_.at(abuf)), desc(baddr, bufs_.at(bbuf)),
                       k == 0 ? scaleD : "1"));
    }
  } else {
    return false;
  }
  return true;
}

int64_t KernelEmitter::swizzleSpan(const BufferInfo &b) {
  const auto &sw = b.layout->swizzle();
  return sw ? int64_t{16} << sw->bitsXored : 16;
}

std::pair<int64_t, int64_t> KernelEmitter::mnMajorOffsets(const BufferInfo &b, int64_t spanBytes) {
  Layout plain = *b.layout;
  if (plain.swizzle()) {
    std::string why;
    plain = *Layout::make(plain.shard(), plain.replica(), plain.offset(), std::nullopt, &why);
  }
  int64_t inner = b.constShape.back(), bytes = dtypeBits(b.dtype) / 8;
  auto at = [&](int64_t flat) { return plain.base(flat).get(Axis::m) * bytes; };
  int64_t perAtom = spanBytes / bytes;
  return {at(8 * inner) - at(0), inner > perAtom ? at(perAtom) - at(0) : 16};
}

} // namespace tilescope::codegen::detail
