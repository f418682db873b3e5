// The CUDA emitter's statements that reach memory outside the CTA
// (KernelEmitter.h): DSMEM copies to and from another CTA of the cluster,
// and the device scale's calls (device.put / get / signal / wait / fence /
// barrier / warp_allreduce) over the runtime (codegen/runtime/ts_devices.cuh).
#include "codegen/KernelEmitter.h"

#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope::codegen::detail {

// dsmem.load | store (dst, src, cta = r): each thread moves the elements of
// its region between CTA r's shared memory (the same buffer there, which
// `mapa` reaches) and a region of its own CTA's shared memory or of a global
// tensor, in chunks of up to 16 bytes where both layouts keep a run
// contiguous and the runs provably start aligned (one element at a time on
// the global side).
void KernelEmitter::dsmemCopy(const CallStmt &c, bool load) {
  const CallArg *rank = c.keyword("cta");
  RegionStart dst = regionStart(c.args.at(0).value), src = regionStart(c.args.at(1).value);
  const BufferInfo &db = bufs_.at(dst.buffer), &sb = bufs_.at(src.buffer);
  const BufferInfo &remote = load ? sb : db, &local = load ? db : sb;
  if (remote.scope != MemScope::Shared ||
      (local.scope != MemScope::Shared && local.scope != MemScope::Global)) {
    error(c.loc, fmt::format("'{}' is lowered between a peer's shared buffer and a shared buffer "
                             "or global tensor of this CTA only",
                             c.callee));
    return;
  }
  if (db.dtype != sb.dtype) {
    error(c.loc, fmt::format("'{}' is lowered between buffers of one dtype only", c.callee));
    return;
  }
  auto elements = [](const RegionStart &r) {
    int64_t n = 1;
    for (int64_t e : r.extent)
      n *= e;
    return r.constantSize ? n : -1;
  };
  int64_t n = elements(dst);
  if (n < 0 || elements(src) != n || n > 1024) {
    error(c.loc, fmt::format("'{}' is lowered for regions of the same constant size up to 1024 "
                             "elements",
                             c.callee));
    return;
  }
  int bytes = std::max(1, dtypeBits(db.dtype) / 8);
  // The widest chunk: both runs contiguous, the innermost extents multiples
  // of it, and both starts multiples of it for every value of their terms.
  auto startsAligned = [&](const RegionStart &r, int64_t w) {
    if (!r.kept.back())
      return false;
    for (auto &[m, coef] : poly(r.begin.back()))
      if ((coef * divisibility(m)) % w != 0)
        return false;
    return r.extent.back() % w == 0;
  };
  bool global = local.scope == MemScope::Global;
  int64_t width =
      global ? 1 : std::min<int64_t>({16 / bytes, sharedRunWidth(db), sharedRunWidth(sb)});
  while (width > 1 && !(startsAligned(dst, width) && startsAligned(src, width)))
    width /= 2;
  // Element i of a region: its shared address, or for a global tensor the
  // address of the element (a generic pointer).
  auto address = [&](const RegionStart &r, const BufferInfo &b, int64_t i) {
    std::vector<int64_t> offset(r.kept.size(), 0);
    for (size_t d = r.kept.size(); d-- > 0;)
      if (r.kept[d]) {
        offset[d] = i % r.extent[d];
        i /= r.extent[d];
      }
    if (b.scope == MemScope::Global) {
      std::vector<Expr> at;
      for (size_t d = 0; d < r.begin.size(); ++d)
        at.push_back(
            foldConstants(Binary::make(BinaryOp::Add, r.begin[d], IntImm::make(offset[d]))));
      return fmt::format("&{}[{}]", r.buffer, globalFlat(r.buffer, at));
    }
    std::vector<std::string> at;
    for (size_t d = 0; d < r.begin.size(); ++d)
      at.push_back(fmt::format("({}) + {}", ex(r.begin[d]), offset[d]));
    return fmt::format("(ts_smem_addr({}) + (uint32_t)({}) * {})", r.buffer, sharedElement(b, at),
                       bytes);
  };
  line(fmt::format("{{ const int ts_rank = {};", ex(rank->value)));
  int chunk = static_cast<int>(width) * bytes;
  for (int64_t i = 0; i < n; i += width) {
    std::string s = address(src, sb, i);
    std::string value = sb.scope == MemScope::Global
                            ? fmt::format("ts_chunk_ld<{}>({})", chunk, s)
                            : fmt::format("ts_dsmem_ld<{}>({}, {})", chunk,
                                          load ? fmt::format("ts_mapa({}, ts_rank)", s) : s, load);
    line(fmt::format("  const ts_chunk<{}> ts_c{} = {};", chunk, i / width, value));
  }
  for (int64_t i = 0; i < n; i += width) {
    std::string d = address(dst, db, i);
    if (db.scope == MemScope::Global)
      line(fmt::format("  ts_chunk_st<{}>({}, ts_c{});", chunk, d, i / width));
    else
      line(fmt::format("  ts_dsmem_st<{}>({}, {}, ts_c{});", chunk,
                       load ? d : fmt::format("ts_mapa({}, ts_rank)", d), !load, i / width));
  }
  line("}");
}

// device.warp_allreduce(dst, src, impl =) of one warp: the runtime's
// warpAllreduceTile on the tiles' first elements in this rank's region
// (the same offsets reach every peer's), paired through the warp's flags.
void KernelEmitter::deviceCall(const CallStmt &c) {
  switch (idOf(c)) {
  case IntrinsicId::DeviceGet:
  case IntrinsicId::DevicePut:
    peerCopy(c);
    return;
  case IntrinsicId::DeviceSignal:
  case IntrinsicId::DeviceWait:
    flagCall(c);
    return;
  case IntrinsicId::DeviceFence: // the release half of a signal (docs/scales.md)
    line("asm volatile(\"fence.acq_rel.sys;\" ::: \"memory\");");
    return;
  case IntrinsicId::DeviceBarrier: // block b of every device, on the kernel's own slots
    line("ts_dev::kernelBarrier(ts_args, ts_bseq);");
    return;
  case IntrinsicId::DeviceWarpAllreduce:
    break;
  default:
    error(c.loc, fmt::format("'{}' in a kernel with other statements is not lowered: a "
                             "collective lowers in kernels of lets and device collectives (the "
                             "collectives' path), or as device.warp_allreduce",
                             c.callee));
    return;
  }
  struct Side {
    std::string ptr, ld;
    int64_t rows = 1, cols = 1;
  };
  // A tile `T[b0 : +r, b1 : +c]` (or `T[b0 : +c]`) of a bf16 global tensor,
  // its extents constants.
  auto side = [&](const Expr &region) -> std::optional<Side> {
    const Index *x = region->kind == ExprKind::Index ? &as<Index>(region) : nullptr;
    const BufferInfo *b = nullptr;
    std::string name;
    if (x && x->base->kind == ExprKind::Var && bufs_.count(as<Var>(x->base).name)) {
      name = as<Var>(x->base).name;
      b = &bufs_.at(name);
    }
    std::vector<Expr> begin;
    std::vector<int64_t> extent;
    bool ok = b && b->scope == MemScope::Global && b->dtype == Dtype::bf16 &&
              (b->shape.size() == 1 || b->shape.size() == 2) &&
              x->subscripts.size() == b->shape.size();
    for (size_t d = 0; ok && d < x->subscripts.size(); ++d) {
      const Subscript &sub = x->subscripts[d];
      std::optional<int64_t> n;
      if (sub.kind == Subscript::Extent)
        n = constantValue(sub.end);
      else if (sub.kind == Subscript::Range)
        n = constantValue(foldConstants(Binary::make(BinaryOp::Sub, sub.end, sub.begin)));
      ok = n && *n > 0;
      if (ok) {
        begin.push_back(sub.begin);
        extent.push_back(*n);
      }
    }
    if (!ok) {
      error(c.loc, fmt::format("device.warp_allreduce moves tiles T[b : +n, ...] of constant "
                               "extents of 1-D or 2-D bf16 global tensors ('{}' is not one)",
                               print(region)));
      return std::nullopt;
    }
    Side out;
    out.cols = extent.back();
    out.rows = extent.size() == 2 ? extent[0] : 1;
    out.ld = extent.size() == 2 ? ex(b->shape[1]) : std::to_string(out.cols);
    // 16-byte vectors: every row of the tile starts 16-byte aligned.
    bool aligned = out.cols % 8 == 0 && multipleOf(begin.back(), 8) &&
                   (extent.size() == 1 || multipleOf(b->shape[1], 8));
    if (!aligned) {
      error(c.loc, fmt::format("device.warp_allreduce moves 16-byte vectors: the rows of the "
                               "tile of '{}' are not 16-byte aligned for every size the `where` "
                               "clause admits",
                               name));
      return std::nullopt;
    }
    out.ptr = fmt::format("({} + (size_t)({}))", name, globalFlat(name, begin));
    return out;
  };
  auto dst = side(c.args.at(0).value);
  auto src = dst ? side(c.args.at(1).value) : std::nullopt;
  if (!dst || !src)
    return;
  if (dst->rows != src->rows || dst->cols != src->cols) {
    error(c.loc, "device.warp_allreduce: dst and src tiles differ in shape");
    return;
  }
  std::string impl;
  if (const CallArg *a = c.keyword("impl"); a && a->value->kind == ExprKind::StringImm)
    impl = as<StringImm>(a->value).value;
  std::string why;
  for (const CollectiveImpl &ci : collectiveImpls())
    if (ci.collective == "warp_allreduce" && (impl.empty() || impl == ci.name)) {
      why = collectiveRefusal("warp_allreduce", ci.name, dst->rows * dst->cols, 2, 0);
      if (why.empty()) {
        impl = ci.name;
        break;
      }
    }
  if (!why.empty() || impl.empty()) {
    error(c.loc, fmt::format("no implementation of device.warp_allreduce accepts this call{}",
                             why.empty() ? "" : ": " + why));
    return;
  }
  info_.dispatchChoices.push_back("device.warp_allreduce -> " + impl);
  line(fmt::format("ts_dev::warpAllreduceTile<{}, {}, {}>(ts_args, ts_dseq, {}, {}, {}, {});",
                   impl == "two_shot" ? "true" : "false", dst->rows, dst->cols, dst->ptr, src->ptr,
                   dst->ld, src->ld));
}

// device.put(dst, src, dev = p) / device.get(dst, src, dev = p) of a whole
// CTA: 2-D bf16 tiles of global tensors whose rows are 16-byte vectors on
// the runtime's vector copies (peerGet); other tiles element by element
// (peerElements). A kernel with either is bracketed by a device barrier of
// CTA blockIdx of every device before its body (a peer's previous kernels
// are done with what the copies touch) and after it (the copies are complete
// and released before any device goes on).
void KernelEmitter::peerCopy(const CallStmt &c) {
  bool put = idOf(c) == IntrinsicId::DevicePut;
  auto vectors = [&](const Expr &region) {
    const Index *x = region->kind == ExprKind::Index ? &as<Index>(region) : nullptr;
    std::string name = x && x->base->kind == ExprKind::Var ? as<Var>(x->base).name : "";
    const BufferInfo *b = bufs_.count(name) ? &bufs_.at(name) : nullptr;
    return b && b->scope == MemScope::Global && b->dtype == Dtype::bf16 && b->shape.size() == 2 &&
           x->subscripts.size() == 2;
  };
  if (!put && vectors(c.args.at(0).value) && vectors(c.args.at(1).value))
    peerGet(c);
  else
    peerElements(c, put);
}

// A put or get element by element: thread i of the CTA moves elements i,
// i + blockDim.x, ... of the tile (row-major), the peer's side through the
// peer table at the tensor's offset in this rank's region (the regions are
// symmetric), read through L2 (ld.global.cg) as the memory model asks.
void KernelEmitter::peerElements(const CallStmt &c, bool put) {
  const CallArg *dev = c.keyword("dev");
  RegionStart dst = regionStart(c.args.at(0).value), src = regionStart(c.args.at(1).value);
  const RegionStart &peer = put ? dst : src;
  const BufferInfo &db = bufs_.at(dst.buffer), &sb = bufs_.at(src.buffer),
                   &pb = bufs_.at(peer.buffer);
  auto count = [](const RegionStart &r) {
    int64_t n = 1;
    for (int64_t e : r.extent)
      n *= e;
    return n;
  };
  auto localOk = [](const BufferInfo &b) {
    return b.scope == MemScope::Global || b.scope == MemScope::Shared;
  };
  const Dtype t = db.dtype;
  bool ldcg = t == Dtype::bf16 || t == Dtype::f16 || t == Dtype::f32 || t == Dtype::i32 ||
              t == Dtype::u32;
  std::string why = !dev                         ? "it names no device (`dev =`)"
                    : pb.scope != MemScope::Global ? "its peer side is not a global tensor"
                    : !localOk(put ? sb : db)     ? "its local side is neither global nor shared"
                    : db.dtype != sb.dtype        ? "its two sides have different dtypes"
                    : !ldcg ? fmt::format("elements of {} have no L2 load (bf16, f16, f32, i32 "
                                          "and u32 do)",
                                          dtypeName(t))
                    : !dst.constantSize || !src.constantSize
                        ? "its tiles' extents are not constants"
                    : count(dst) != count(src) ? "its tiles hold different numbers of elements"
                                               : "";
  if (!why.empty()) {
    error(c.loc, fmt::format("'{}' is not lowered: {}", c.callee, why));
    return;
  }
  // Element ts_e of a region (row-major over its kept dimensions).
  auto element = [&](const RegionStart &r, const BufferInfo &b, const std::string &ptr) {
    std::vector<Expr> at(r.begin.size());
    int64_t stride = 1;
    for (size_t d = r.begin.size(); d-- > 0;) {
      Expr i = IntImm::make(0);
      if (r.kept[d]) {
        i = Binary::make(BinaryOp::Mod,
                         Binary::make(BinaryOp::Div, Var::make("ts_e"), IntImm::make(stride)),
                         IntImm::make(r.extent[d]));
        stride *= r.extent[d];
      }
      at[d] = foldConstants(Binary::make(BinaryOp::Add, r.begin[d], i));
    }
    if (b.scope == MemScope::Global)
      return fmt::format("{}[{}]", ptr, globalFlat(r.buffer, at));
    std::vector<Subscript> subs;
    for (const Expr &e : at)
      subs.push_back(Subscript{Subscript::Point, e, nullptr});
    return ex(Index::make(Var::make(r.buffer), subs));
  };
  peerCopies_ = true;
  line(fmt::format("{{ {} *const ts_peer = ts_dev::peerPtr(ts_args, (int)({}), {});",
                   cType(pb.dtype), ex(dev->value), peer.buffer));
  line(fmt::format("  for (int ts_e = (int)threadIdx.x; ts_e < {}; ts_e += (int)blockDim.x)",
                   count(dst)));
  std::string from = element(src, sb, put ? src.buffer : "ts_peer");
  line(fmt::format("    {} = {};", element(dst, db, put ? "ts_peer" : dst.buffer),
                   put ? from : "__ldcg(&" + from + ")"));
  line("}");
}

// device.signal(F[i...], dev = p, value = v): st.relaxed.sys of v into
// element F[i...] of device p (the release is the device.fence before it);
// device.wait(F[i...], value = v): spin on ld.acquire.sys of the own
// element until it has reached v (wrap-aware). F: a u32 or i32 global tensor.
void KernelEmitter::flagCall(const CallStmt &c) {
  bool signal = idOf(c) == IntrinsicId::DeviceSignal;
  const Expr &flag = c.args.at(0).value;
  const CallArg *value = c.keyword("value"), *dev = c.keyword("dev");
  const Index *x = flag->kind == ExprKind::Index ? &as<Index>(flag) : nullptr;
  std::string name = x && x->base->kind == ExprKind::Var ? as<Var>(x->base).name : "";
  const BufferInfo *b = bufs_.count(name) ? &bufs_.at(name) : nullptr;
  bool element = b && x->subscripts.size() == b->shape.size() &&
                 std::all_of(x->subscripts.begin(), x->subscripts.end(),
                             [](const Subscript &s) { return s.kind == Subscript::Point; });
  if (!element || b->scope != MemScope::Global ||
      (b->dtype != Dtype::u32 && b->dtype != Dtype::i32) || !value || (signal && !dev)) {
    error(c.loc, fmt::format("'{}' is not lowered: its flag is an element of a u32 or i32 "
                             "global tensor, with `value =`{}",
                             c.callee, signal ? " and `dev =`" : ""));
    return;
  }
  std::vector<Expr> at;
  for (const Subscript &s : x->subscripts)
    at.push_back(s.begin);
  std::string addr = fmt::format("reinterpret_cast<uint32_t *>(&{}[{}])", name, globalFlat(name, at));
  if (signal)
    line(fmt::format("ts_dev::storeRelaxedSys(ts_dev::peerPtr(ts_args, (int)({}), {}), "
                     "(uint32_t)({}));",
                     ex(dev->value), addr, ex(value->value)));
  else
    line(fmt::format("ts_dev::waitSys({}, (uint32_t)({}));", addr, ex(value->value)));
}

// device.get(dst, src, dev = p) of a whole CTA, dst and src 2-D tiles of bf16
// global tensors (rows of whole 16-byte vectors): the runtime's ctaGetTile
// from device p's region at src's byte offset in this rank's. A kernel with a
// device.get is bracketed by a device barrier of CTA blockIdx of every device
// before its body (a peer's input is complete) and after it (no device
// writes its next input while a peer still reads it).
void KernelEmitter::peerGet(const CallStmt &c) {
  struct Tile {
    std::string ptr, rows, cols, ld;
  };
  auto tile = [&](const Expr &region) -> std::optional<Tile> {
    const Index *x = region->kind == ExprKind::Index ? &as<Index>(region) : nullptr;
    std::string name = x && x->base->kind == ExprKind::Var ? as<Var>(x->base).name : "";
    const BufferInfo *b = bufs_.count(name) ? &bufs_.at(name) : nullptr;
    bool ok = b && b->scope == MemScope::Global && b->dtype == Dtype::bf16 &&
              b->shape.size() == 2 && x->subscripts.size() == 2;
    std::vector<Expr> begin;
    std::vector<std::string> extent;
    for (size_t d = 0; ok && d < 2; ++d) {
      const Subscript &sub = x->subscripts[d];
      if (sub.kind == Subscript::Full) {
        begin.push_back(IntImm::make(0));
        extent.push_back(ex(b->shape[d]));
      } else if (sub.kind == Subscript::Extent) {
        begin.push_back(sub.begin);
        extent.push_back(ex(sub.end));
      } else {
        ok = false;
      }
    }
    // 16-byte vectors: every row of the tile starts 16-byte aligned and is
    // whole vectors long, for every size the `where` clause admits.
    const Subscript *col = ok ? &x->subscripts[1] : nullptr;
    ok = ok && multipleOf(begin[1], 8) && multipleOf(b->shape[1], 8) &&
         multipleOf(col->kind == Subscript::Full ? b->shape[1] : col->end, 8);
    if (!ok) {
      error(c.loc, fmt::format("device.get lowers tiles T[r : +n, c : +m] (or whole dimensions) "
                               "of 2-D bf16 global tensors whose rows are 16-byte vectors for "
                               "every size the `where` clause admits ('{}' is not one)",
                               print(region)));
      return std::nullopt;
    }
    return Tile{fmt::format("({} + (size_t)({}))", name, globalFlat(name, begin)), extent[0],
                extent[1], ex(b->shape[1])};
  };
  auto dst = tile(c.args.at(0).value);
  auto src = dst ? tile(c.args.at(1).value) : std::nullopt;
  const CallArg *dev = c.keyword("dev");
  if (!dst || !src || !dev) {
    if (!dev)
      error(c.loc, "device.get is not lowered: it names no device (`dev =`)");
    return;
  }
  peerCopies_ = true;
  line(fmt::format("ts_dev::ctaGetTile(ts_args, (int)({}), {}, {}, (long long)({}), (long "
                   "long)({}), (long long)({}), (long long)({}));",
                   ex(dev->value), dst->ptr, src->ptr, src->rows, src->cols, dst->ld, src->ld));
}

} // namespace tilescope::codegen::detail
