// The CUDA emitter's tcgen05 family (KernelEmitter.h): tensor-memory
// allocation, tcgen05.mma with its descriptors, commit, tcgen05.ld and the
// waits and fences.
#include "codegen/KernelEmitter.h"

#include "ir/Descriptors.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope::codegen::detail {

bool KernelEmitter::tcgen05Call(const CallStmt &c, IntrinsicId id) {
  if (id == IntrinsicId::Tcgen05Alloc || id == IntrinsicId::Tcgen05Dealloc) {
    std::string buf = as<Var>(callArg(c, 0)).name;
    const BufferInfo &b = bufs_.at(buf);
    int64_t cols = b.constShape.size() > 1 ? b.constShape[1] : 32;
    if (Expr given = callKeyword(c, "cols"))
      cols = constantValue(given).value_or(cols);
    if (id == IntrinsicId::Tcgen05Alloc) {
      tmemColumns_[buf] = cols;
      line(fmt::format("asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 "
                       "[%0], {};\" :: \"r\"(ts_smem_addr(ts_smem + {})) : \"memory\");",
                       cols, b.smemOffset));
    } else {
      if (tmemColumns_.count(buf))
        cols = tmemColumns_[buf];
      line(fmt::format("asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, {};\" "
                       ":: \"r\"({}) : \"memory\");",
                       cols, tmemAddr(buf)));
    }
  } else if (id == IntrinsicId::Tcgen05RelinquishAllocPermit) {
    plainPtx(id);
  } else if (id == IntrinsicId::Tcgen05Mma) {
    std::string d = as<Var>(callArg(c, 0)).name;
    std::string abuf, bbuf;
    std::string aaddr = regionByteAddress(callArg(c, 1), &abuf),
                baddr = regionByteAddress(callArg(c, 2), &bbuf);
    auto extents = [&](const Expr &region) {
      // Kept extents of a region of a shared buffer: [rows, K].
      std::vector<const Index *> chain;
      Expr base = region;
      while (base->kind == ExprKind::Index) {
        chain.insert(chain.begin(), &as<Index>(base));
        base = as<Index>(base).base;
      }
      const BufferInfo &b = bufs_.at(as<Var>(base).name);
      std::vector<int64_t> ext = b.constShape;
      std::vector<bool> kept(ext.size(), true);
      for (const Index *x : chain) {
        size_t i = 0;
        for (size_t dd = 0; dd < kept.size() && i < x->subscripts.size(); ++dd) {
          if (!kept[dd])
            continue;
          const Subscript &sub = x->subscripts[i++];
          if (sub.kind == Subscript::Point)
            kept[dd] = false;
          else if (sub.kind == Subscript::Extent)
            ext[dd] = constantValue(sub.end).value_or(ext[dd]);
        }
      }
      std::vector<int64_t> out;
      for (size_t dd = 0; dd < ext.size(); ++dd)
        if (kept[dd])
          out.push_back(ext[dd]);
      return out;
    };
    auto ae = extents(callArg(c, 1)), be = extents(callArg(c, 2));
    // B is K-major ([N, K], the default) or, with transpose_b = false,
    // MN-major ([K, N]: rows along K, as wgmma's MN-major B).
    const CallArg *tbArg = c.keyword("transpose_b");
    bool mnMajor =
        tbArg && tbArg->value->kind == ExprKind::BoolImm && !as<BoolImm>(tbArg->value).value;
    if (ae.size() != 2 || be.size() != 2 || ae[1] % 16 != 0 || (mnMajor && be[0] != ae[1])) {
      error(c.loc, "tcgen05.mma operands must be [M, K] and [N, K] tiles (or [K, N] with "
                   "transpose_b = false) with K a multiple of 16");
      return true;
    }
    int64_t m = ae[0], n = mnMajor ? be[1] : be[0], k = ae[1];
    Dtype ab = bufs_.at(abuf).dtype;
    // The instruction descriptor (kind::f16): f32 accumulators, A and B's
    // dtype, whether B is MN-major, N and M.
    constexpr auto kIdesc = DescriptorKind::Tcgen05InstrF16;
    auto abCode = fieldCode(kIdesc, DescField::AFormat, dtypeName(ab));
    if (!abCode) {
      error(c.loc, fmt::format("no lowering for tcgen05.mma on {} operands yet", dtypeName(ab)));
      return true;
    }
    uint64_t idesc =
        packDescriptor(kIdesc, {{DescField::DFormat, *fieldCode(kIdesc, DescField::DFormat, "f32")},
                                {DescField::AFormat, *abCode},
                                {DescField::BFormat, *abCode},
                                {DescField::TransposeB, mnMajor ? 1u : 0u},
                                {DescField::N, uint64_t(n)},
                                {DescField::M, uint64_t(m)}});
    auto swizzleOf = [&](const BufferInfo &b) {
      int64_t span = swizzleSpan(b);
      uint64_t mode = *fieldCodeByKey(DescriptorKind::Tcgen05Smem, DescField::Swizzle, span);
      return std::pair<uint64_t, int64_t>{mode, 8 * span};
    };
    auto [amode, asbo] = swizzleOf(bufs_.at(abuf));
    auto [bmode, bsbo] = swizzleOf(bufs_.at(bbuf));
    Expr accum = callKeyword(c, "accumulate");
    std::string acc = accum ? ex(accum) : "true";
    if (mnMajor) {
      // The MN-major B descriptor (as wgmmaRegisterA's): stride byte offset
      // between 8-row groups along K, leading byte offset between the
      // swizzle-span column blocks along N, both from B's unswizzled layout;
      // one instruction per 16 of K, each at its own rows of B.
      auto [sbo, lbo] = mnMajorOffsets(bufs_.at(bbuf), bsbo / 8);
      line("{");
      line(fmt::format("  const uint32_t a0 = {};", aaddr));
      line(fmt::format("  const bool acc0 = {};", acc));
      for (int64_t kk = 0; kk < k / 16; ++kk) {
        std::string b0;
        std::string bk = regionByteAddress(kSlice(callArg(c, 2), 0, kk * 16), &b0);
        line(fmt::format("  ts_umma_f16({}, ts_umma_desc(a0 + {}, {}, {}), "
                         "ts_umma_desc_lbo({}, {}, {}, {}), {}u, {});",
                         tmemAddr(d), kk * 32, amode, asbo, bk, bmode, sbo, lbo, idesc,
                         kk == 0 ? "acc0" : "true"));
      }
      line("}");
      return true;
    }
    line("{");
    line(fmt::format("  const uint32_t a0 = {}, b0 = {};", aaddr, baddr));
    line(fmt::format("  const bool acc0 = {};", acc));
    line("#pragma unroll");
    line(fmt::format("  for (int kk = 0; kk < {}; ++kk)", k / 16));
    line(fmt::format("    ts_umma_f16({}, ts_umma_desc(a0 + kk * 32, {}, {}), "
                     "ts_umma_desc(b0 + kk * 32, {}, {}), {}u, acc0 || kk > 0);",
                     tmemAddr(d), amode, asbo, bmode, bsbo, idesc));
    line("}");
  } else if (id == IntrinsicId::Tcgen05Commit) {
    line(fmt::format("asm volatile(\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::"
                     "cluster.b64 [%0];\" :: \"r\"({}) : \"memory\");",
                     barrierAddr(callArg(c, 0))));
  } else if (id == IntrinsicId::Tcgen05Ld) {
    // dst: a region of a tcgen05_32x32b register tile (one row per thread);
    // src: a region of tensor memory, rows = lanes, columns.
    std::vector<const Index *> chain;
    Expr base = callArg(c, 1);
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    std::string tm = as<Var>(base).name;
    Expr row = IntImm::make(0), col = IntImm::make(0);
    int64_t cols = bufs_.at(tm).constShape.at(1);
    if (!chain.empty() && chain[0]->subscripts.size() == 2) {
      const auto &sr = chain[0]->subscripts[0], &sc = chain[0]->subscripts[1];
      if (sr.begin)
        row = sr.begin;
      if (sc.begin)
        col = sc.begin;
      if (sc.kind == Subscript::Extent)
        cols = constantValue(sc.end).value_or(cols);
    }
    Expr shape = callKeyword(c, "shape");
    if (!shape || shape->kind != ExprKind::StringImm || as<StringImm>(shape).value != "32x32b") {
      error(c.loc, "only tcgen05.ld shape \"32x32b\" is lowered");
      return true;
    }
    Expr dbase = callArg(c, 0);
    while (dbase->kind == ExprKind::Index)
      dbase = as<Index>(dbase).base;
    std::string dst = as<Var>(dbase).name;
    std::string ops, cons;
    for (int64_t j = 0; j < cols; ++j) {
      ops += fmt::format("{}%{}", j ? ", " : "", j);
      cons += fmt::format("{}\"=f\"({}[{}])", j ? ", " : "", dst, j);
    }
    line(fmt::format("asm volatile(\"tcgen05.ld.sync.aligned.32x32b.x{}.b32 {{{}}}, [%{}];\" : {} "
                     ": \"r\"({} + ((uint32_t)({}) << 16) + (uint32_t)({})) : \"memory\");",
                     cols, ops, cols, cons, tmemAddr(tm), ex(row), ex(col)));
  } else if (id == IntrinsicId::Tcgen05WaitLd) {
    plainPtx(id);
  } else if (id == IntrinsicId::Tcgen05WaitSt) {
    plainPtx(id);
  } else if (id == IntrinsicId::Tcgen05FenceBeforeThreadSync) {
    plainPtx(id);
  } else if (id == IntrinsicId::Tcgen05FenceAfterThreadSync) {
    plainPtx(id);
  } else {
    return false;
  }
  return true;
}

} // namespace tilescope::codegen::detail
