// The CUDA emitter's asynchronous copies (KernelEmitter.h): TMA loads and
// stores through tensor maps, their bulk groups, and cp.async with its
// groups.
#include "codegen/KernelEmitter.h"

#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope::codegen::detail {

bool KernelEmitter::asyncCopyCall(const CallStmt &c, IntrinsicId id) {
  if (id == IntrinsicId::TmaLoad || id == IntrinsicId::TmaStore) {
    bool load = id == IntrinsicId::TmaLoad;
    const Expr &sh = callArg(c, load ? 0 : 1), &gl = callArg(c, load ? 1 : 0);
    std::string sbuf;
    std::string saddr = regionByteAddress(sh, &sbuf);
    // The global region: its begin per dimension and its box.
    std::vector<const Index *> chain;
    Expr base = gl;
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    std::string param = as<Var>(base).name;
    const BufferInfo &gb = bufs_.at(param);
    std::vector<Expr> begin(gb.shape.size(), IntImm::make(0));
    std::vector<int64_t> box(gb.shape.size(), 1);
    for (const Index *x : chain)
      for (size_t d = 0; d < x->subscripts.size() && d < box.size(); ++d) {
        const Subscript &s = x->subscripts[d];
        begin[d] = s.begin ? s.begin : IntImm::make(0);
        if (s.kind == Subscript::Extent)
          box[d] = constantValue(s.end).value_or(1);
        else if (s.kind == Subscript::Range)
          box[d] =
              constantValue(foldConstants(Binary::make(BinaryOp::Sub, s.end, s.begin))).value_or(1);
        else if (s.kind == Subscript::Full)
          box[d] = constantValue(gb.shape[d]).value_or(1);
      }
    const BufferInfo &sb = bufs_.at(sbuf);
    int swz = 0;
    if (const auto &sw = sb.layout->swizzle())
      swz = 16 << sw->bitsXored;
    // One tensor map per (tensor, box, swizzle): the first box of a tensor
    // is tmap_P, a later different one tmap_P_box1, tmap_P_box2, ... (a C stored
    // in 64-column boxes and a narrower last one).
    std::string mapName;
    int sameTensor = 0;
    for (const auto &[name, m] : tma_)
      if (m.param == param) {
        if (m.box == box && m.swizzleBytes == swz)
          mapName = name;
        ++sameTensor;
      }
    if (mapName.empty()) {
      mapName = sameTensor == 0 ? param : fmt::format("{}_box{}", param, sameTensor);
      tma_.emplace(mapName, TmaMap{param, gb.dtype, box, swz, static_cast<int>(tma_.size())});
    }
    std::string coords;
    for (size_t d = gb.shape.size(); d-- > 0;)
      coords += fmt::format("{}(int)({})", coords.empty() ? "" : ", ", ex(begin[d]));
    Expr mask = load ? callKeyword(c, "multicast") : nullptr;
    if (mask && gb.shape.size() != 2)
      error(c.loc, "multicast TMA loads are lowered for 2-D tensors only");
    if (mask)
      line(fmt::format("ts_tma_load_2d_mc({}, &tmap_{}, {}, (uint16_t)({}), {});", saddr, mapName,
                       barrierAddr(callKeyword(c, "mbar")), ex(mask), coords));
    else if (load)
      line(fmt::format("ts_tma_load_{}d({}, &tmap_{}, {}, {});", gb.shape.size(), saddr, mapName,
                       barrierAddr(callKeyword(c, "mbar")), coords));
    else
      line(fmt::format("ts_tma_store_{}d(&tmap_{}, {}, {});", gb.shape.size(), mapName, saddr,
                       coords));
  } else if (id == IntrinsicId::TmaStoreCommit) {
    plainPtx(id);
  } else if (id == IntrinsicId::TmaStoreWait) {
    const CallArg *read = c.keyword("read");
    bool onlyRead =
        read && read->value->kind == ExprKind::BoolImm && as<BoolImm>(read->value).value;
    line(fmt::format("asm volatile(\"cp.async.bulk.wait_group{} {};\" ::: \"memory\");",
                     onlyRead ? ".read" : "", ex(callArg(c, 0))));
  } else if (id == IntrinsicId::CpAsync) {
    std::string sbuf;
    std::string saddr = regionByteAddress(callArg(c, 0), &sbuf);
    // The source: the address of its first element.
    std::vector<const Index *> chain;
    Expr base = callArg(c, 1);
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    std::string param = as<Var>(base).name;
    std::vector<Expr> begin;
    for (const Index *x : chain)
      for (const Subscript &s : x->subscripts)
        begin.push_back(s.begin ? s.begin : IntImm::make(0));
    line(fmt::format("ts_cp_async16({}, &{}[{}]);", saddr, param, globalFlat(param, begin)));
  } else if (id == IntrinsicId::CpAsyncCommit) {
    plainPtx(id);
  } else if (id == IntrinsicId::CpAsyncWaitAll) {
    plainPtx(id);
  } else if (id == IntrinsicId::CpAsyncWait) {
    line(fmt::format("asm volatile(\"{} {};\" ::: \"memory\");", intrinsic(id).ptx,
                     ex(callArg(c, 0))));
  } else {
    return false;
  }
  return true;
}

} // namespace tilescope::codegen::detail
