// The CUDA emitter's statements (KernelEmitter.h): blocks, loops (and their
// vectorisation), conditions, and the calls of native IR. The statements that
// reach another CTA's or device's memory are in EmitRemote.cpp.
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
      // `lower --evict-first`: 4- to 16-byte accesses with the L2 policy.
      bool ef = !shared && evictFirst_.count(memName) && width * bytes >= 4;
      if (load) {
        std::string src = fmt::format("reinterpret_cast<const {} *>({})", vt, addr);
        line(fmt::format("{{ {} v = {};", vt, ef ? "ts_ld_ef(" + src + ")" : "*" + src));
        for (int64_t u = 0; u < width; ++u)
          line(fmt::format("  {}[{}] = v.e[{}];", regName, slots[i] + u, u));
        line("}");
      } else {
        std::string vals;
        for (int64_t u = 0; u < width; ++u)
          vals += (u ? ", " : "") + fmt::format("{}[{}]", regName, slots[i] + u);
        std::string dst = fmt::format("reinterpret_cast<{} *>({})", vt, addr);
        std::string v = fmt::format("{}{{{{{}}}}}", vt, vals);
        line(ef ? fmt::format("ts_st_ef({}, {});", dst, v) : fmt::format("*{} = {};", dst, v));
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

// A native whose PTX is its table spelling alone, with no operands.
void KernelEmitter::plainPtx(IntrinsicId id) {
  line(fmt::format("asm volatile(\"{};\" ::: \"memory\");", intrinsic(id).ptx));
}

void KernelEmitter::callStmt(const CallStmt &c) {
  const std::string &f = c.callee;
  const IntrinsicId id = idOf(c);
  const IntrinsicInfo *info = findIntrinsic(f);
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
    if (id == IntrinsicId::Sync && c.scope == ExecScope::Warp) {
      line("__syncwarp();");
      return;
    }
    if (id == IntrinsicId::Sync) {
      line("__syncthreads();");
      return;
    }
    error(c.loc, fmt::format("tile primitive '{}' reached lowering undispatched", f));
    return;
  }
  if (asyncCopyCall(c, id) || wgmmaCall(c, id) || tcgen05Call(c, id))
    return;
  if (id == IntrinsicId::MbarrierInit) {
    line(fmt::format("ts_mbar_init({}, {});", barrierAddr(callArg(c, 0)),
                     ex(callKeyword(c, "count"))));
  } else if (id == IntrinsicId::MbarrierArrive) {
    if (Expr cta = callKeyword(c, "cta"))
      line(fmt::format("ts_mbar_arrive_remote({}, {});", barrierAddr(callArg(c, 0)), ex(cta)));
    else
      line(fmt::format("ts_mbar_arrive({});", barrierAddr(callArg(c, 0))));
  } else if (id == IntrinsicId::DsmemLoad || id == IntrinsicId::DsmemStore) {
    dsmemCopy(c, id == IntrinsicId::DsmemLoad);
  } else if (id == IntrinsicId::BarrierClusterArrive) {
    line("asm volatile(\"barrier.cluster.arrive.release.aligned;\" ::: \"memory\");");
  } else if (id == IntrinsicId::BarrierClusterWait) {
    line("asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");");
  } else if (id == IntrinsicId::MbarrierArriveExpectTx) {
    line(fmt::format("ts_mbar_arrive_expect_tx({}, {});", barrierAddr(callArg(c, 0)),
                     ex(callKeyword(c, "bytes"))));
  } else if (id == IntrinsicId::MbarrierExpectTx) {
    line(fmt::format("ts_mbar_expect_tx({}, {});", barrierAddr(callArg(c, 0)),
                     ex(callKeyword(c, "bytes"))));
  } else if (id == IntrinsicId::MbarrierWait) {
    line(fmt::format("ts_mbar_wait({}, {});", barrierAddr(callArg(c, 0)),
                     ex(callKeyword(c, "parity"))));
  } else if (id == IntrinsicId::MbarrierInval) {
    line(fmt::format("ts_mbar_inval({});", barrierAddr(callArg(c, 0))));
  } else if (id == IntrinsicId::SetmaxnregInc || id == IntrinsicId::SetmaxnregDec) {
    line(fmt::format("asm volatile(\"{} {};\");", info->ptx, ex(callArg(c, 0))));
  } else if (id == IntrinsicId::FenceProxyAsync) {
    // space = "shared" (the default) or "global": the table's spelling
    // orders shared memory; the global form orders the async proxy's global
    // writes (a completed TMA store) before generic reads.
    std::string space = "shared";
    if (Expr sp = callKeyword(c, "space"); sp && sp->kind == ExprKind::StringImm)
      space = as<StringImm>(sp).value;
    if (space == "global")
      line("asm volatile(\"fence.proxy.async.global;\" ::: \"memory\");");
    else if (space == "shared")
      plainPtx(id);
    else
      error(c.loc, fmt::format("fence.proxy.async space is 'shared' or 'global', not '{}'", space));
  } else if (id == IntrinsicId::FenceMbarrierInit) {
    plainPtx(id);
  } else if (id == IntrinsicId::BarrierSync || id == IntrinsicId::BarrierArrive) {
    line(fmt::format("asm volatile(\"{} %0, %1;\" :: \"r\"((int)({})), \"r\"((int)({})) : "
                     "\"memory\");",
                     info->ptx, ex(callArg(c, 0)), ex(callKeyword(c, "threads"))));
  } else {
    error(c.loc, fmt::format("no lowering for '{}' yet", f));
  }
}

} // namespace tilescope::codegen::detail
