// The CUDA emitter's statements (KernelEmitter.h): blocks, loops (and their
// vectorisation), conditions, DSMEM copies, and the calls of native IR.
#include "codegen/KernelEmitter.h"

#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope::codegen::detail {

// ------------------------------------------------------------------ statements

void KernelEmitter::block(const Block &b) {
  size_t lets = lets_.size(), regs = regsInScope_.size();
  for (const Stmt &s : b)
    stmt(s);
  lets_.resize(lets);
  regsInScope_.resize(regs);
}

// Whether a block holds a loop that stays a loop in the CUDA (not unrolled
// by the emitter or by `unroll`).
static bool holdsRuntimeLoop(const Block &b) {
  for (const Stmt &s : b) {
    if (s->kind == StmtKind::For) {
      const auto &f = as<For>(s);
      if (f.unroll != -1 || holdsRuntimeLoop(f.body))
        return true;
    } else if (s->kind == StmtKind::If) {
      const auto &i = as<If>(s);
      if (holdsRuntimeLoop(i.thenBody) || holdsRuntimeLoop(i.elseBody))
        return true;
    }
  }
  return false;
}

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
    std::string flat;
    for (size_t d = 0; d < r.begin.size(); ++d) {
      std::string at = fmt::format("({}) + {}", ex(r.begin[d]), offset[d]);
      flat = d == 0 ? "(" + at + ")" : fmt::format("({}) * {} + ({})", flat, b.constShape[d], at);
    }
    return fmt::format("(ts_smem_addr({}) + (uint32_t)({}) * {})", r.buffer, sharedElement(b, flat),
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

bool KernelEmitter::tryVectorize(const For &f, int64_t begin, int64_t trips) {
  if (f.body.size() != 1 || f.body[0]->kind != StmtKind::Store || trips < 2)
    return false;
  const auto &st = as<Store>(f.body[0]);
  if (st.target->kind != ExprKind::Index || st.value->kind != ExprKind::Index)
    return false;
  auto bufferOf = [&](const Expr &e) -> std::string {
    Expr b = e;
    while (b->kind == ExprKind::Index)
      b = as<Index>(b).base;
    return b->kind == ExprKind::Var ? as<Var>(b).name : "";
  };
  std::string tn = bufferOf(st.target), vn = bufferOf(st.value);
  if (!bufs_.count(tn) || !bufs_.count(vn))
    return false;
  const BufferInfo &tb = bufs_.at(tn), &vb = bufs_.at(vn);
  auto memory = [](MemScope m) { return m == MemScope::Global || m == MemScope::Shared; };
  bool load = tb.scope == MemScope::Reg && memory(vb.scope);
  bool store = memory(tb.scope) && vb.scope == MemScope::Reg;
  if ((!load && !store) || tb.dtype != vb.dtype)
    return false;
  const Expr &regE = load ? st.target : st.value;
  const Expr &memE = load ? st.value : st.target;
  const BufferInfo &rb = load ? tb : vb;
  std::string memName = load ? vn : tn, regName = load ? tn : vn;
  auto points = [](const Expr &e) {
    std::vector<Expr> idx;
    std::vector<const Index *> chain;
    Expr b = e;
    while (b->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(b));
      b = as<Index>(b).base;
    }
    for (const Index *c : chain)
      for (const Subscript &s : c->subscripts)
        idx.push_back(s.begin);
    return idx;
  };
  std::vector<Expr> regIdx = points(regE), memIdx = points(memE);
  const BufferInfo &mb = bufs_.at(memName);
  if (memIdx.size() != mb.shape.size())
    return false;
  bool shared = mb.scope == MemScope::Shared;
  int64_t maxWidth = shared ? sharedRunWidth(mb) : 16;
  std::vector<int64_t> slots;
  std::vector<Poly> flats;
  for (int64_t i = 0; i < trips; ++i) {
    env_[f.var] = begin + i;
    auto s = slotOf(regName, rb, regIdx);
    if (!s) {
      env_.erase(f.var);
      return false;
    }
    slots.push_back(*s);
    Poly flat;
    for (size_t d = 0; d < memIdx.size(); ++d) {
      Poly extent = shared ? Poly{{{}, mb.constShape[d]}} : poly(mb.shape[d]);
      flat = d == 0 ? poly(memIdx[d]) : polyAdd(polyMul(flat, extent), poly(memIdx[d]));
    }
    flats.push_back(flat);
  }
  int bytes = dtypeBits(tb.dtype) / 8;
  int64_t i = 0;
  bool vectorized = false;
  while (i < trips) {
    int64_t width = 1;
    for (int64_t w = 16 / bytes; w >= 2; w /= 2) {
      if (i + w > trips || w > maxWidth)
        continue;
      bool ok = true;
      for (int64_t u = 1; u < w && ok; ++u) {
        Poly diff = polyAdd(flats[i + u], flats[i], -1);
        ok = slots[i + u] == slots[i] + u && diff.size() == 1 && diff.count({}) && diff[{}] == u;
      }
      for (auto &[m, c] : flats[i])
        if (ok && (c * divisibility(m)) % w != 0)
          ok = false;
      if (ok) {
        width = w;
        break;
      }
    }
    env_[f.var] = begin + i;
    if (width == 1) {
      stmt(f.body[0]);
    } else {
      vectorized = true;
      std::string addr = shared ? "&" + index(as<Index>(memE), memE)
                                : fmt::format("&{}[{}]", memName, globalFlat(memName, memIdx));
      std::string vt = fmt::format("ts_vec<{}, {}>", cType(tb.dtype), width);
      if (load) {
        line(fmt::format("{{ {} v = *reinterpret_cast<const {} *>({});", vt, vt, addr));
        for (int64_t u = 0; u < width; ++u)
          line(fmt::format("  {}[{}] = v.e[{}];", regName, slots[i] + u, u));
        line("}");
      } else {
        std::string vals;
        for (int64_t u = 0; u < width; ++u)
          vals += (u ? ", " : "") + fmt::format("{}[{}]", regName, slots[i] + u);
        line(fmt::format("*reinterpret_cast<{} *>({}) = {}{{{{{}}}}};", vt, addr, vt, vals));
      }
    }
    i += width;
  }
  env_.erase(f.var);
  return vectorized || true;
}

void KernelEmitter::stmt(const Stmt &s) {
  switch (s->kind) {
  case StmtKind::BufferDecl: {
    const auto &b = as<BufferDecl>(s);
    const BufferInfo &info = bufs_.at(b.name);
    if (b.scope == MemScope::Reg) {
      line(fmt::format("{}{} {}[{}];", regAOperands_.count(b.name) ? "alignas(16) " : "",
                       cType(b.dtype), b.name, info.slots));
      regsInScope_.push_back(b.name);
    }
    return; // shared buffers are bound at kernel entry
  }
  case StmtKind::BarrierDecl:
    return;
  case StmtKind::Let: {
    const auto &l = as<Let>(s);
    Dtype t = typeOf(l.value);
    letTypes_[l.name] = t;
    line(fmt::format("const {} {} = {};",
                     isFloat(t) ? "float" : (t == Dtype::pred ? "bool" : "int"), l.name,
                     ex(l.value)));
    lets_.push_back({l.name, l.value});
    return;
  }
  case StmtKind::For: {
    const auto &f = as<For>(s);
    auto b = constantValue(f.begin), e = constantValue(f.end), st = constantValue(f.step);
    if (f.unroll == -1 && b && e && st && *st == 1 && *e - *b <= 256) {
      if (tryVectorize(f, *b, *e - *b))
        return;
      bool scoped = false;
      for (const Stmt &x : f.body)
        scoped |= x->kind == StmtKind::Let || x->kind == StmtKind::BufferDecl;
      for (int64_t i = *b; i < *e; ++i) {
        env_[f.var] = i;
        if (scoped)
          line("{");
        indent_ += scoped;
        block(f.body);
        indent_ -= scoped;
        if (scoped)
          line("}");
      }
      env_.erase(f.var);
      return;
    }
    if (f.unroll > 0)
      line(fmt::format("#pragma unroll {}", f.unroll));
    else if (f.unroll == -1)
      line("#pragma unroll");
    line(fmt::format("for (int {} = {}; {} < {}; {} += {}) {{", f.var, ex(f.begin), f.var,
                     ex(f.end), f.var, ex(f.step)));
    ++indent_;
    // An outer loop (a persistent kernel's tile loop) re-reads the thread
    // index each iteration: otherwise ptxas hoists per-thread address
    // arithmetic that does not depend on the loop (the epilogue's 64 swizzled
    // shared-memory addresses) out of it and keeps it live across the inner
    // loop beside 128 accumulators, which spills.
    if (holdsRuntimeLoop(f.body))
      line("const int ts_tid = ts_read_tid();");
    block(f.body);
    --indent_;
    line("}");
    return;
  }
  case StmtKind::If: {
    const auto &i = as<If>(s);
    if (i.cond->kind == ExprKind::BoolImm && as<BoolImm>(i.cond).value) {
      line("{");
      ++indent_;
      block(i.thenBody);
      --indent_;
      line("}");
      return;
    }
    line(fmt::format("if ({}) {{", ex(i.cond)));
    ++indent_;
    block(i.thenBody);
    --indent_;
    if (!i.elseBody.empty()) {
      line("} else {");
      ++indent_;
      block(i.elseBody);
      --indent_;
    }
    line("}");
    return;
  }
  case StmtKind::Store: {
    const auto &st = as<Store>(s);
    Dtype t = typeOf(st.target), v = typeOf(st.value);
    std::string value = ex(st.value);
    if (t != v) {
      if (t == Dtype::bf16)
        value = fmt::format("__float2bfloat16_rn(ts_to_f32({}))", value);
      else if (t == Dtype::f16)
        value = fmt::format("__float2half_rn(ts_to_f32({}))", value);
      else if (t == Dtype::f32)
        value = fmt::format("ts_to_f32({})", value);
    }
    line(fmt::format("{} = {};", ex(st.target), value));
    return;
  }
  case StmtKind::CallStmt:
    callStmt(as<CallStmt>(s));
    return;
  }
}

// Whether an integer expression is a multiple of m for every value the
// `where` clause admits (its polynomial's terms are).
bool KernelEmitter::multipleOf(const Expr &e, int64_t m) {
  for (auto &[mono, coef] : poly(e))
    if ((coef * divisibility(mono)) % m != 0)
      return false;
  return true;
}

// device.warp_allreduce(dst, src, impl =) of one warp: the runtime's
// warpAllreduceTile on the tiles' first elements in this rank's region
// (the same offsets reach every peer's), paired through the warp's flags.
void KernelEmitter::deviceCall(const CallStmt &c) {
  if (idOf(c) == IntrinsicId::DeviceGet) {
    peerGet(c);
    return;
  }
  if (idOf(c) != IntrinsicId::DeviceWarpAllreduce) {
    error(c.loc, fmt::format("'{}' in a kernel with other statements is not lowered: such "
                             "kernels lower device.warp_allreduce (kernels of lets and "
                             "device collectives lower on the collectives' path)",
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
  if (!dst || !src || !dev)
    return;
  peerReads_ = true;
  line(fmt::format("ts_dev::ctaGetTile(ts_args, (int)({}), {}, {}, (long long)({}), (long "
                   "long)({}), (long long)({}), (long long)({}));",
                   ex(dev->value), dst->ptr, src->ptr, src->rows, src->cols, dst->ld, src->ld));
}

void KernelEmitter::callStmt(const CallStmt &c) {
  const std::string &f = c.callee;
  auto arg = [&](size_t i) -> const Expr & { return c.args.at(i).value; };
  auto kwv = [&](std::string_view n) -> Expr {
    const CallArg *a = c.keyword(n);
    return a ? a->value : nullptr;
  };
  const IntrinsicId id = idOf(c);
  const IntrinsicInfo *info = findIntrinsic(f);
  // A native whose PTX is its table spelling alone, with no operands.
  auto plainPtx = [&] { line(fmt::format("asm volatile(\"{};\" ::: \"memory\");", info->ptx)); };
  if (std::find(info_.natives.begin(), info_.natives.end(), f) == info_.natives.end())
    info_.natives.push_back(f);
  if (isDeviceCall(id)) {
    deviceCall(c);
    return;
  }
  if (info && info->cls == CallClass::TilePrimitive) {
    if (id == IntrinsicId::Sync && c.scope == ExecScope::Cluster) {
      line("asm volatile(\"barrier.cluster.arrive.release.aligned;\" ::: \"memory\");");
      line("asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");");
      return;
    }
    if (id == IntrinsicId::Sync) {
      line("__syncthreads();");
      return;
    }
    error(c.loc, fmt::format("tile primitive '{}' reached lowering undispatched", f));
    return;
  }
  if (id == IntrinsicId::MbarrierInit) {
    line(fmt::format("ts_mbar_init({}, {});", barrierAddr(arg(0)), ex(kwv("count"))));
  } else if (id == IntrinsicId::MbarrierArrive) {
    if (Expr cta = kwv("cta"))
      line(fmt::format("ts_mbar_arrive_remote({}, {});", barrierAddr(arg(0)), ex(cta)));
    else
      line(fmt::format("ts_mbar_arrive({});", barrierAddr(arg(0))));
  } else if (id == IntrinsicId::DsmemLoad || id == IntrinsicId::DsmemStore) {
    dsmemCopy(c, id == IntrinsicId::DsmemLoad);
  } else if (id == IntrinsicId::BarrierClusterArrive) {
    line("asm volatile(\"barrier.cluster.arrive.release.aligned;\" ::: \"memory\");");
  } else if (id == IntrinsicId::BarrierClusterWait) {
    line("asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");");
  } else if (id == IntrinsicId::MbarrierArriveExpectTx) {
    line(fmt::format("ts_mbar_arrive_expect_tx({}, {});", barrierAddr(arg(0)), ex(kwv("bytes"))));
  } else if (id == IntrinsicId::MbarrierExpectTx) {
    line(fmt::format("ts_mbar_expect_tx({}, {});", barrierAddr(arg(0)), ex(kwv("bytes"))));
  } else if (id == IntrinsicId::MbarrierWait) {
    line(fmt::format("ts_mbar_wait({}, {});", barrierAddr(arg(0)), ex(kwv("parity"))));
  } else if (id == IntrinsicId::MbarrierInval) {
    line(fmt::format("ts_mbar_inval({});", barrierAddr(arg(0))));
  } else if (id == IntrinsicId::TmaLoad || id == IntrinsicId::TmaStore) {
    bool load = id == IntrinsicId::TmaLoad;
    const Expr &sh = arg(load ? 0 : 1), &gl = arg(load ? 1 : 0);
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
    auto it = tma_.find(param);
    if (it == tma_.end()) {
      TmaMap m{param, gb.dtype, box, swz, static_cast<int>(tma_.size())};
      it = tma_.emplace(param, m).first;
    } else if (it->second.box != box || it->second.swizzleBytes != swz) {
      error(c.loc, fmt::format("TMA copies of '{}' use two different boxes or swizzles; one tensor "
                               "map per tensor is supported",
                               param));
    }
    std::string coords;
    for (size_t d = gb.shape.size(); d-- > 0;)
      coords += fmt::format("{}(int)({})", coords.empty() ? "" : ", ", ex(begin[d]));
    Expr mask = load ? kwv("multicast") : nullptr;
    if (mask && gb.shape.size() != 2)
      error(c.loc, "multicast TMA loads are lowered for 2-D tensors only");
    if (mask)
      line(fmt::format("ts_tma_load_2d_mc({}, &tmap_{}, {}, (uint16_t)({}), {});", saddr, param,
                       barrierAddr(kwv("mbar")), ex(mask), coords));
    else if (load)
      line(fmt::format("ts_tma_load_{}d({}, &tmap_{}, {}, {});", gb.shape.size(), saddr, param,
                       barrierAddr(kwv("mbar")), coords));
    else
      line(fmt::format("ts_tma_store_{}d(&tmap_{}, {}, {});", gb.shape.size(), param, saddr,
                       coords));
  } else if (id == IntrinsicId::TmaStoreCommit) {
    plainPtx();
  } else if (id == IntrinsicId::TmaStoreWait) {
    const CallArg *read = c.keyword("read");
    bool onlyRead =
        read && read->value->kind == ExprKind::BoolImm && as<BoolImm>(read->value).value;
    line(fmt::format("asm volatile(\"cp.async.bulk.wait_group{} {};\" ::: \"memory\");",
                     onlyRead ? ".read" : "", ex(arg(0))));
  } else if (id == IntrinsicId::CpAsync) {
    std::string sbuf;
    std::string saddr = regionByteAddress(arg(0), &sbuf);
    // The source: the address of its first element.
    std::vector<const Index *> chain;
    Expr base = arg(1);
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
    plainPtx();
  } else if (id == IntrinsicId::CpAsyncWaitAll) {
    plainPtx();
  } else if (id == IntrinsicId::CpAsyncWait) {
    line(fmt::format("asm volatile(\"{} {};\" ::: \"memory\");", info->ptx, ex(arg(0))));
  } else if (id == IntrinsicId::WgmmaFence) {
    plainPtx();
  } else if (id == IntrinsicId::WgmmaCommitGroup) {
    plainPtx();
  } else if (id == IntrinsicId::WgmmaWaitGroup) {
    line(fmt::format("asm volatile(\"{} {};\" ::: \"memory\");", info->ptx, ex(arg(0))));
    // Pin the accumulators after the wait (CUTLASS's warpgroup_fence_operand)
    // so the compiler reads them only once the wgmmas that write them retired.
    for (const std::string &r : regsInScope_)
      if (wgmmaAccs_.count(r))
        line(fmt::format("ts_fence_operands({});", r));
  } else if (id == IntrinsicId::WgmmaMmaAsync) {
    std::string accName = as<Var>(arg(0)).name;
    const BufferInfo &acc = bufs_.at(accName);
    int n = static_cast<int>(acc.constShape.at(1));
    if (bufs_.at(regionStart(arg(1)).buffer).scope == MemScope::Reg) {
      wgmmaRegisterA(c, accName, n);
      return;
    }
    std::string abuf, bbuf;
    regionByteAddress(arg(1), &abuf);
    regionByteAddress(arg(2), &bbuf);
    auto desc = [&](const std::string &addr, const BufferInfo &b) {
      int span = 16, mode = 0;
      if (const auto &sw = b.layout->swizzle()) {
        span = 16 << sw->bitsXored;
        mode = sw->bitsXored == 3 ? 1 : sw->bitsXored == 2 ? 2 : 3;
      }
      return fmt::format("ts_wgmma_desc({}, {}, {})", addr, mode, 8 * span);
    };
    wgmmaAccs_.insert(accName);
    Dtype operandType = bufs_.at(abuf).dtype;
    // The instruction: the MMA table's row for these dtypes (ir/MmaShapes.h).
    const MmaShape *row =
        findMmaShape(k_.launch.target, *info->mma, acc.dtype, operandType, bufs_.at(bbuf).dtype);
    if (!row || row->d != Dtype::f32) {
      error(c.loc, fmt::format("no lowering for wgmma.mma_async on {} operands yet",
                               dtypeName(operandType)));
      return;
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
    Expr accum = kwv("accumulate");
    std::string scaleD = !accum ? "1"
                         : accum->kind == ExprKind::BoolImm
                             ? (as<BoolImm>(accum).value ? "1" : "0")
                             : fmt::format("({}) ? 1 : 0", ex(accum));
    // One instruction per 16 of K (the checker admits K a multiple of 16);
    // the first takes `accumulate`, the rest add to what it wrote.
    auto isSet = [&](const char *kw) {
      Expr e = kwv(kw);
      return e && e->kind == ExprKind::BoolImm && as<BoolImm>(e).value;
    };
    bool ta = isSet("transpose_a"), tb = isSet("transpose_b");
    int64_t kExtent = regionExtents(arg(1)).at(ta ? 0 : 1);
    for (int64_t k = 0; k < kExtent; k += row->k) {
      Expr a = kSlice(arg(1), ta ? 0 : 1, k, row->k), b = kSlice(arg(2), tb ? 1 : 0, k, row->k);
      std::string aaddr = regionByteAddress(a, &abuf), baddr = regionByteAddress(b, &bbuf);
      line(fmt::format("ts_wgmma_m64n{}k{}_{}({}, {}, {}, {});", n, row->k, ab, accName,
                       desc(aaddr, bufs_.at(abuf)), desc(baddr, bufs_.at(bbuf)),
                       k == 0 ? scaleD : "1"));
    }
  } else if (id == IntrinsicId::SetmaxnregInc || id == IntrinsicId::SetmaxnregDec) {
    line(fmt::format("asm volatile(\"{} {};\");", info->ptx, ex(arg(0))));
  } else if (id == IntrinsicId::FenceProxyAsync) {
    // space = "shared" (the default) or "global": the table's spelling
    // orders shared memory; the global form orders the async proxy's global
    // writes (a completed TMA store) before generic reads.
    std::string space = "shared";
    if (Expr sp = kwv("space"); sp && sp->kind == ExprKind::StringImm)
      space = as<StringImm>(sp).value;
    if (space == "global")
      line("asm volatile(\"fence.proxy.async.global;\" ::: \"memory\");");
    else if (space == "shared")
      plainPtx();
    else
      error(c.loc, fmt::format("fence.proxy.async space is 'shared' or 'global', not '{}'", space));
  } else if (id == IntrinsicId::FenceMbarrierInit) {
    plainPtx();
  } else if (id == IntrinsicId::BarrierSync || id == IntrinsicId::BarrierArrive) {
    line(fmt::format("asm volatile(\"{} %0, %1;\" :: \"r\"((int)({})), \"r\"((int)({})) : "
                     "\"memory\");",
                     info->ptx, ex(arg(0)), ex(kwv("threads"))));
  } else if (id == IntrinsicId::Tcgen05Alloc || id == IntrinsicId::Tcgen05Dealloc) {
    std::string buf = as<Var>(arg(0)).name;
    const BufferInfo &b = bufs_.at(buf);
    int64_t cols = b.constShape.size() > 1 ? b.constShape[1] : 32;
    if (Expr c = kwv("cols"))
      cols = constantValue(c).value_or(cols);
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
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05Mma) {
    std::string d = as<Var>(arg(0)).name;
    std::string abuf, bbuf;
    std::string aaddr = regionByteAddress(arg(1), &abuf), baddr = regionByteAddress(arg(2), &bbuf);
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
    auto ae = extents(arg(1)), be = extents(arg(2));
    // B is K-major ([N, K], the default) or, with transpose_b = false,
    // MN-major ([K, N]: rows along K, as wgmma's MN-major B).
    const CallArg *tbArg = c.keyword("transpose_b");
    bool mnMajor =
        tbArg && tbArg->value->kind == ExprKind::BoolImm && !as<BoolImm>(tbArg->value).value;
    if (ae.size() != 2 || be.size() != 2 || ae[1] % 16 != 0 || (mnMajor && be[0] != ae[1])) {
      error(c.loc, "tcgen05.mma operands must be [M, K] and [N, K] tiles (or [K, N] with "
                   "transpose_b = false) with K a multiple of 16");
      return;
    }
    int64_t m = ae[0], n = mnMajor ? be[1] : be[0], k = ae[1];
    Dtype ab = bufs_.at(abuf).dtype;
    uint32_t idesc = (1u << 4) | ((ab == Dtype::bf16 ? 1u : 0u) << 7) |
                     ((ab == Dtype::bf16 ? 1u : 0u) << 10) | ((mnMajor ? 1u : 0u) << 16) |
                     (static_cast<uint32_t>(n >> 3) << 17) | (static_cast<uint32_t>(m >> 4) << 24);
    auto swizzleOf = [&](const BufferInfo &b) {
      int mode = 0, span = 16;
      if (const auto &sw = b.layout->swizzle()) {
        span = 16 << sw->bitsXored;
        mode = sw->bitsXored == 3 ? 2 : sw->bitsXored == 2 ? 4 : 6;
      }
      return std::pair<int, int>{mode, 8 * span};
    };
    auto [amode, asbo] = swizzleOf(bufs_.at(abuf));
    auto [bmode, bsbo] = swizzleOf(bufs_.at(bbuf));
    Expr accum = kwv("accumulate");
    std::string acc = accum ? ex(accum) : "true";
    if (mnMajor) {
      // The MN-major B descriptor (as wgmmaRegisterA's): stride byte offset
      // between 8-row groups along K, leading byte offset between the
      // swizzle-span column blocks along N, both from B's unswizzled layout;
      // one instruction per 16 of K, each at its own rows of B.
      const BufferInfo &bb = bufs_.at(bbuf);
      Layout plain = *bb.layout;
      if (plain.swizzle()) {
        std::string why;
        plain = *Layout::make(plain.shard(), plain.replica(), plain.offset(), std::nullopt, &why);
      }
      int64_t inner = bb.constShape.back(), bytes = dtypeBits(bb.dtype) / 8;
      auto at = [&](int64_t flat) { return plain.base(flat).get(Axis::m) * bytes; };
      int64_t sbo = at(8 * inner) - at(0), perAtom = bsbo / 8 / bytes;
      int64_t lbo = inner > perAtom ? at(perAtom) - at(0) : 16;
      line("{");
      line(fmt::format("  const uint32_t a0 = {};", aaddr));
      line(fmt::format("  const bool acc0 = {};", acc));
      for (int64_t kk = 0; kk < k / 16; ++kk) {
        std::string b0;
        std::string bk = regionByteAddress(kSlice(arg(2), 0, kk * 16), &b0);
        line(fmt::format("  ts_umma_f16({}, ts_umma_desc(a0 + {}, {}, {}), "
                         "ts_umma_desc_lbo({}, {}, {}, {}), {}u, {});",
                         tmemAddr(d), kk * 32, amode, asbo, bk, bmode, sbo, lbo, idesc,
                         kk == 0 ? "acc0" : "true"));
      }
      line("}");
      return;
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
                     barrierAddr(arg(0))));
  } else if (id == IntrinsicId::Tcgen05Ld) {
    // dst: a region of a tcgen05_32x32b register tile (one row per thread);
    // src: a region of tensor memory, rows = lanes, columns.
    std::vector<const Index *> chain;
    Expr base = arg(1);
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
    Expr shape = kwv("shape");
    if (!shape || shape->kind != ExprKind::StringImm || as<StringImm>(shape).value != "32x32b") {
      error(c.loc, "only tcgen05.ld shape \"32x32b\" is lowered");
      return;
    }
    Expr dbase = arg(0);
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
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05WaitSt) {
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05FenceBeforeThreadSync) {
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05FenceAfterThreadSync) {
    plainPtx();
  } else {
    error(c.loc, fmt::format("no lowering for '{}' yet", f));
  }
}

} // namespace tilescope::codegen::detail
