#include "model/Profile.h"

#include "ir/Intrinsics.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

namespace tilescope::model {

namespace {

struct BufferInfo {
  std::vector<int64_t> shape;
  Dtype dtype = Dtype::f32;
  MemScope scope = MemScope::Global;
};

// A region of a buffer: its dimensions left after the subscripts and the
// start of each subscript of the first (row) dimension.
struct Region {
  const BufferInfo *buffer = nullptr;
  const std::string *name = nullptr;
  llvm::SmallVector<int64_t, 4> shape;
  int64_t rowStart = 0;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  double bytes() const { return static_cast<double>(elements()) * dtypeBits(buffer->dtype) / 8.0; }
};

// The trace of one CTA: runs the control flow of one representative thread
// per warpgroup, counting the work of the calls it reaches. Names are
// numbered once (slots), and what a node names or calls is remembered by
// the node, so the statements of a loop's iterations cost no string hashing
// or intrinsic look-up (the trace of 16 CTAs of the persistent GEMM at
// 4096^3 walks about 10^5 statements per static reward).
class Tracer {
public:
  Tracer(const Kernel &kernel, const std::map<std::string, int64_t> &sizes,
         const std::vector<std::string> &ringBarriers)
      : kernel_(kernel), ring_(ringBarriers) {
    for (const auto &[name, v] : sizes) {
      int slot = slotOf(name);
      globals_.value[size_t(slot)] = v;
      globals_.has[size_t(slot)] = 1;
    }
  }

  std::optional<std::string> failure;
  static constexpr int64_t kMaxStatements = int64_t{1} << 26;

  bool globalBuffers() {
    for (const Param &p : kernel_.params) {
      if (!p.isTensor)
        continue;
      BufferInfo b{{}, p.dtype, MemScope::Global};
      for (const Expr &d : p.shape) {
        auto v = eval(d);
        if (!v) {
          failure = fmt::format("the shape of '{}' needs a size for every symbol", p.name);
          return false;
        }
        b.shape.push_back(*v);
      }
      setBuffer(slotOf(p.name), std::move(b));
    }
    return true;
  }

  std::vector<int64_t> gridDims{1, 1, 1};
  std::vector<int64_t> clusterDims{1, 1, 1};

  CtaWork cta(int64_t block, int64_t warpgroups) {
    work_ = CtaWork();
    for (int64_t wg = 0; wg < warpgroups && !failure; ++wg) {
      env_ = globals_;
      block_ = block;
      wg_ = wg;
      mmaSeen_ = false;
      stepsHere_ = 0;
      drainsHere_ = 0;
      run(kernel_.body);
      if (mmaSeen_) {
        ++work_.consumerWarpgroups;
        if (work_.consumerWarpgroups == 1) {
          work_.steps = stepsHere_;
          work_.drainingSteps = drainsHere_;
        }
      }
    }
    return work_;
  }

  std::optional<int64_t> eval(const Expr &e) { return eval(e.get()); }

  std::optional<int64_t> eval(const ExprNode *e) {
    switch (e->kind) {
    case ExprKind::IntImm:
      return static_cast<const IntImm &>(*e).value;
    case ExprKind::BoolImm:
      return static_cast<const BoolImm &>(*e).value ? 1 : 0;
    case ExprKind::Var: {
      size_t slot = size_t(nodeCode(e));
      if (env_.has[slot])
        return env_.value[slot];
      if (globals_.has[slot])
        return globals_.value[slot];
      return std::nullopt;
    }
    case ExprKind::Builtin:
      return builtin(static_cast<const Builtin &>(*e).which);
    case ExprKind::Unary: {
      const Unary &u = static_cast<const Unary &>(*e);
      auto v = eval(u.operand.get());
      if (!v)
        return std::nullopt;
      return u.op == UnaryOp::Neg ? -*v : (*v == 0 ? 1 : 0);
    }
    case ExprKind::Binary: {
      const Binary &b = static_cast<const Binary &>(*e);
      auto x = eval(b.lhs.get());
      if (!x)
        return std::nullopt;
      if (b.op == BinaryOp::And && *x == 0)
        return 0;
      if (b.op == BinaryOp::Or && *x != 0)
        return 1;
      auto y = eval(b.rhs.get());
      if (!y)
        return std::nullopt;
      if (b.op == BinaryOp::And || b.op == BinaryOp::Or)
        return *y != 0 ? 1 : 0;
      return foldIntBinary(b.op, *x, *y);
    }
    case ExprKind::Call: {
      const Call &c = static_cast<const Call &>(*e);
      // Evaluation has no side effects: a callee the trace does not know is
      // unknown whatever its arguments give.
      int fn = nodeCode(e);
      if (fn == kElectSync)
        return 1;
      if (fn == kOtherCall || c.args.size() != (fn == kSelect ? 3u : 2u))
        return std::nullopt;
      int64_t args[3] = {0, 0, 0};
      for (size_t i = 0; i < c.args.size(); ++i) {
        auto v = eval(c.args[i].get());
        if (!v)
          return std::nullopt;
        args[i] = *v;
      }
      if (fn == kSelect)
        return args[0] ? args[1] : args[2];
      if (fn == kMin)
        return std::min(args[0], args[1]);
      return std::max(args[0], args[1]);
    }
    default:
      return std::nullopt;
    }
  }

private:
  // Values by slot, and whether the slot holds one.
  struct Values {
    std::vector<int64_t> value;
    std::vector<uint8_t> has;
  };

  enum CallCode { kElectSync, kSelect, kMin, kMax, kOtherCall };

  int slotOf(const std::string &name) {
    auto [it, fresh] = slots_.try_emplace(name, int(slots_.size()));
    if (fresh) {
      for (Values *v : {&globals_, &env_}) {
        v->value.push_back(0);
        v->has.push_back(0);
      }
      buffers_.emplace_back();
    }
    return it->second;
  }

  // A Var's slot, or a Call's CallCode, decided at the node's first visit.
  int nodeCode(const ExprNode *e) {
    auto [it, fresh] = nodeCodes_.try_emplace(e, 0);
    if (fresh) {
      if (e->kind == ExprKind::Var) {
        it->second = slotOf(static_cast<const Var &>(*e).name);
      } else {
        const std::string &callee = static_cast<const Call &>(*e).callee;
        it->second = callee == "elect_sync" ? kElectSync
                     : callee == "select"   ? kSelect
                     : callee == "min"      ? kMin
                     : callee == "max"      ? kMax
                                            : kOtherCall;
      }
    }
    return it->second;
  }

  void setBuffer(int slot, BufferInfo info) {
    auto &b = buffers_[size_t(slot)];
    if (b)
      *b = std::move(info);
    else
      b = std::make_unique<BufferInfo>(std::move(info));
  }

  int64_t builtin(BuiltinKind b) const {
    switch (b) {
    case BuiltinKind::laneid:
    case BuiltinKind::tid_in_wg:
    case BuiltinKind::wid_in_wg:
    case BuiltinKind::clusterCtaIdx_y:
    case BuiltinKind::clusterCtaIdx_z:
      return 0;
    case BuiltinKind::clusterCtaIdx_x:
      return block_ % gridDims[0] % clusterDims[0];
    case BuiltinKind::warpid:
      return wg_ * 4;
    case BuiltinKind::wgid:
      return wg_;
    case BuiltinKind::threadIdx_x:
      return wg_ * 128;
    case BuiltinKind::blockIdx_x:
      return block_ % gridDims[0];
    case BuiltinKind::blockIdx_y:
      return block_ / gridDims[0] % gridDims[1];
    case BuiltinKind::blockIdx_z:
      return block_ / (gridDims[0] * gridDims[1]);
    }
    return 0;
  }

  std::optional<Region> region(const Expr &e) {
    Region r;
    const ExprNode *base = e.get();
    llvm::SmallVector<const Index *, 4> chain; // innermost first
    while (base->kind == ExprKind::Index) {
      chain.push_back(&static_cast<const Index &>(*base));
      base = static_cast<const Index &>(*base).base.get();
    }
    if (base->kind != ExprKind::Var)
      return std::nullopt;
    r.name = &static_cast<const Var &>(*base).name;
    const std::unique_ptr<BufferInfo> &buffer = buffers_[size_t(nodeCode(base))];
    if (!buffer)
      return std::nullopt;
    r.buffer = buffer.get();
    r.shape.assign(r.buffer->shape.begin(), r.buffer->shape.end());
    bool firstDim = true;
    llvm::SmallVector<int64_t, 4> next;
    for (size_t c = chain.size(); c-- > 0;) {
      const Index *x = chain[c];
      next.clear();
      size_t d = 0;
      for (const Subscript &s : x->subscripts) {
        if (d >= r.shape.size())
          return std::nullopt;
        std::optional<int64_t> start = s.begin ? eval(s.begin) : std::optional<int64_t>(0);
        if (firstDim && start && d == 0)
          r.rowStart = *start;
        switch (s.kind) {
        case Subscript::Point:
          break;
        case Subscript::Range: {
          auto b = eval(s.begin), en = eval(s.end);
          if (!b || !en)
            return std::nullopt;
          next.push_back(*en - *b);
          break;
        }
        case Subscript::Extent: {
          auto n = eval(s.end);
          if (!n)
            return std::nullopt;
          next.push_back(*n);
          break;
        }
        case Subscript::Full:
          next.push_back(r.shape[d]);
          break;
        }
        ++d;
      }
      for (; d < r.shape.size(); ++d)
        next.push_back(r.shape[d]);
      std::swap(r.shape, next);
      firstDim = false;
    }
    return r;
  }

  bool isRingWait(const CallStmt &c) {
    if (c.args.empty())
      return false;
    const ExprNode *b = c.args[0].value.get();
    while (b->kind == ExprKind::Index)
      b = static_cast<const Index &>(*b).base.get();
    return b->kind == ExprKind::Var &&
           std::find(ring_.begin(), ring_.end(), static_cast<const Var &>(*b).name) != ring_.end();
  }

  // What a call statement is, decided at its first visit.
  struct CallInfo {
    IntrinsicId id = IntrinsicId::Unknown;
    bool ringWait = false;
  };
  const CallInfo &callInfo(const CallStmt &c) {
    auto [it, fresh] = callInfos_.try_emplace(&c);
    if (fresh) {
      it->second.id = idOf(c);
      it->second.ringWait = it->second.id == IntrinsicId::MbarrierWait && isRingWait(c);
    }
    return it->second;
  }

  void call(const CallStmt &c) {
    using I = IntrinsicId;
    const CallInfo &info = callInfo(c);
    const I f = info.id;
    static const Expr kNone;
    auto arg = [&](size_t i) -> const Expr & {
      return i < c.args.size() ? c.args[i].value : kNone;
    };
    if ((f == I::CopyAsync || f == I::TmaLoad) && c.args.size() >= 2) {
      auto src = region(arg(1));
      if (src && src->buffer->scope == MemScope::Global) {
        work_.loadBytes += src->bytes();
        if (!src->buffer->shape.empty()) {
          int64_t pitchBits = src->buffer->shape.back() * dtypeBits(src->buffer->dtype);
          if (pitchBits % (32 * 8) != 0)
            work_.loadBytesPitch16 += src->bytes();
          else if (pitchBits % (128 * 8) != 0)
            work_.loadBytesPitch32 += src->bytes();
        }
        work_.blocks.push_back({work_.stageFills - 1, *src->name, src->rowStart, src->bytes(),
                                builtin(BuiltinKind::clusterCtaIdx_x)});
      }
      return;
    }
    if (f == I::MbarrierArriveExpectTx) {
      ++work_.stageFills;
      return;
    }
    if (f == I::MbarrierWait) {
      if (info.ringWait)
        ++stepsHere_;
      return;
    }
    if ((f == I::Gemm || f == I::WgmmaMmaAsync) && c.args.size() >= 3) {
      auto acc = region(arg(0)), a = region(arg(1));
      if (!acc || !a || acc->shape.size() != 2 || a->shape.size() != 2)
        return;
      int64_t m = acc->shape[0], n = acc->shape[1], k = a->shape[1];
      work_.flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
      work_.wgmmaByN[n] += (m / 64 > 0 ? m / 64 : 1) * (k / 16 > 0 ? k / 16 : 1);
      mmaSeen_ = true;
      if (f == I::Gemm) // the tile primitive dispatches to wgmma + wait_group(0)
        ++drainsHere_;
      return;
    }
    if (f == I::WgmmaWaitGroup) {
      auto n = arg(0) ? eval(arg(0)) : std::nullopt;
      if (n && *n == 0)
        ++drainsHere_;
      else if (n)
        work_.groupsInFlight = std::max(work_.groupsInFlight, *n);
      return;
    }
    if ((f == I::DsmemLoad || f == I::DsmemStore) && c.args.size() >= 2) {
      // Executed by every thread that reaches it: the representative
      // thread's region times the warpgroup (thread-scope calls only).
      if (auto dst = region(arg(0)))
        work_.clusterBytes += dst->bytes() * (c.scope == ExecScope::Thread ? 128 : 1);
      return;
    }
    if (f == I::BarrierClusterWait) {
      if (wg_ == 0) // every warpgroup waits at once: count the CTA's once
        ++work_.clusterBarriers;
      return;
    }
    if (f == I::TmaStore && c.args.size() >= 2) {
      if (auto src = region(arg(1)))
        work_.storeBytes += src->bytes();
      return;
    }
    if (f == I::TmaStoreCommit) {
      ++work_.tiles;
      return;
    }
    if (f == I::Copy && c.args.size() >= 2) { // a store of registers to global memory
      auto dst = region(arg(0));
      if (dst && dst->buffer->scope == MemScope::Global) {
        work_.storeBytes += dst->bytes();
        ++work_.tiles;
      }
    }
  }

  // The slot of the name a Let or For statement binds.
  int boundSlot(const StmtNode *s, const std::string &name) {
    auto [it, fresh] = boundSlots_.try_emplace(s, 0);
    if (fresh)
      it->second = slotOf(name);
    return it->second;
  }

  void run(const Block &b) {
    for (const Stmt &s : b) {
      if (failure)
        return;
      if (++statements_ > kMaxStatements) {
        failure = "the trace ran past its statement budget";
        return;
      }
      switch (s->kind) {
      case StmtKind::BufferDecl: {
        const BufferDecl &d = as<BufferDecl>(s);
        BufferInfo info{{}, d.dtype, d.scope};
        for (const Expr &x : d.shape)
          info.shape.push_back(eval(x).value_or(1));
        setBuffer(boundSlot(s.get(), d.name), std::move(info));
        break;
      }
      case StmtKind::Let: {
        const Let &l = as<Let>(s);
        size_t slot = size_t(boundSlot(s.get(), l.name));
        if (auto v = eval(l.value)) {
          env_.value[slot] = *v;
          env_.has[slot] = 1;
        } else {
          env_.has[slot] = 0;
        }
        break;
      }
      case StmtKind::For: {
        const For &f = as<For>(s);
        auto begin = eval(f.begin), end = eval(f.end), step = eval(f.step);
        if (!begin || !end || !step || *step <= 0) {
          failure = "a loop bound does not evaluate at these sizes";
          return;
        }
        size_t slot = size_t(boundSlot(s.get(), f.var));
        for (int64_t i = *begin; i < *end && !failure; i += *step) {
          env_.value[slot] = i;
          env_.has[slot] = 1;
          run(f.body);
        }
        break;
      }
      case StmtKind::If: {
        const If &i = as<If>(s);
        auto c = eval(i.cond);
        run(c.value_or(1) ? i.thenBody : i.elseBody);
        break;
      }
      case StmtKind::CallStmt:
        call(as<CallStmt>(s));
        break;
      default:
        break;
      }
    }
  }

  const Kernel &kernel_;
  std::vector<std::string> ring_;
  std::unordered_map<std::string, int> slots_;
  Values globals_, env_;
  // By slot: the buffer the name declares (each in its own allocation, so
  // a Region's pointer outlives later declarations of other names).
  std::vector<std::unique_ptr<BufferInfo>> buffers_;
  llvm::DenseMap<const ExprNode *, int> nodeCodes_;
  llvm::DenseMap<const StmtNode *, int> boundSlots_;
  llvm::DenseMap<const CallStmt *, CallInfo> callInfos_;
  CtaWork work_;
  int64_t block_ = 0, wg_ = 0, stepsHere_ = 0, drainsHere_ = 0, statements_ = 0;
  bool mmaSeen_ = false;
};

// The barriers TMA loads signal (`mbar = full[s]`), and the depth of the
// ring they form; the shared bytes and register estimate of the kernel.
void scanDeclarations(const Block &b, KernelProfile &p, std::vector<std::string> &ring,
                      std::map<std::string, int64_t> &barrierArrays, Tracer &t) {
  for (const Stmt &s : b) {
    switch (s->kind) {
    case StmtKind::BufferDecl: {
      const BufferDecl &d = as<BufferDecl>(s);
      double n = 1;
      for (const Expr &x : d.shape)
        n *= static_cast<double>(t.eval(x).value_or(1));
      if (d.scope == MemScope::Shared)
        p.sharedBytes += n * dtypeBits(d.dtype) / 8.0;
      else if (d.scope == MemScope::Reg)
        p.registersPerThread += static_cast<int64_t>(n * dtypeBits(d.dtype) / 32.0 / 128.0);
      break;
    }
    case StmtKind::BarrierDecl: {
      const BarrierDecl &d = as<BarrierDecl>(s);
      int64_t n = d.arraySize ? t.eval(d.arraySize).value_or(1) : 1;
      barrierArrays[d.name] = n;
      p.sharedBytes += 8.0 * static_cast<double>(n);
      break;
    }
    case StmtKind::For:
      scanDeclarations(as<For>(s).body, p, ring, barrierArrays, t);
      break;
    case StmtKind::If:
      scanDeclarations(as<If>(s).thenBody, p, ring, barrierArrays, t);
      scanDeclarations(as<If>(s).elseBody, p, ring, barrierArrays, t);
      break;
    case StmtKind::CallStmt: {
      const CallStmt &c = as<CallStmt>(s);
      if (idOf(c) == IntrinsicId::SetmaxnregInc || idOf(c) == IntrinsicId::SetmaxnregDec)
        p.setsMaxRegisters = true;
      if (idOf(c) == IntrinsicId::CopyAsync || idOf(c) == IntrinsicId::TmaLoad)
        if (const CallArg *m = c.keyword("mbar")) {
          Expr base = m->value;
          while (base->kind == ExprKind::Index)
            base = as<Index>(base).base;
          if (base->kind == ExprKind::Var &&
              std::find(ring.begin(), ring.end(), as<Var>(base).name) == ring.end())
            ring.push_back(as<Var>(base).name);
        }
      break;
    }
    default:
      break;
    }
  }
}

} // namespace

std::optional<int64_t> evaluate(const Kernel &kernel, const Expr &e,
                                const std::map<std::string, int64_t> &sizes) {
  Tracer t(kernel, sizes, {});
  return t.eval(e);
}

std::optional<KernelProfile> profileKernel(const Kernel &kernel,
                                           const std::map<std::string, int64_t> &sizes,
                                           int64_t maxCtas, std::string *error) {
  KernelProfile p;
  std::vector<std::string> ring;
  std::map<std::string, int64_t> barrierArrays;
  Tracer scan(kernel, sizes, {});
  scanDeclarations(kernel.body, p, ring, barrierArrays, scan);
  for (const std::string &r : ring)
    p.stages = std::max(p.stages, barrierArrays[r]);
  p.threads = kernel.launch.threads;
  p.grid = 1;
  Tracer tracer(kernel, sizes, ring);
  for (size_t i = 0; i < kernel.launch.grid.size() && i < 3; ++i) {
    auto v = scan.eval(kernel.launch.grid[i]);
    if (!v || *v < 1) {
      *error = "a grid extent does not evaluate to a positive number at these sizes";
      return std::nullopt;
    }
    p.grid *= *v;
    tracer.gridDims[i] = *v;
  }
  for (size_t i = 0; i < kernel.launch.cluster.size() && i < 3; ++i) {
    auto v = scan.eval(kernel.launch.cluster[i]);
    if (!v || *v < 1) {
      *error = "a cluster extent does not evaluate to a positive number";
      return std::nullopt;
    }
    tracer.clusterDims[i] = *v;
    p.clusterCtas *= *v;
  }
  if (!tracer.globalBuffers()) {
    *error = *tracer.failure;
    return std::nullopt;
  }
  int64_t warpgroups = std::max<int64_t>(1, (p.threads + 127) / 128);
  p.traced = std::min(p.grid, maxCtas);
  for (int64_t b = 0; b < p.traced; ++b) {
    p.ctas.push_back(tracer.cta(b, warpgroups));
    if (tracer.failure) {
      *error = *tracer.failure;
      return std::nullopt;
    }
  }
  return p;
}

} // namespace tilescope::model
