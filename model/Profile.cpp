#include "model/Profile.h"

#include "ir/Intrinsics.h"

#include <fmt/format.h>

#include <algorithm>

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
  std::string name;
  std::vector<int64_t> shape;
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
// per warpgroup, counting the work of the calls it reaches.
class Tracer {
public:
  Tracer(const Kernel &kernel, const std::map<std::string, int64_t> &sizes,
         const std::vector<std::string> &ringBarriers)
      : kernel_(kernel), ring_(ringBarriers) {
    for (const auto &[name, v] : sizes)
      globals_[name] = v;
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
      buffers_[p.name] = std::move(b);
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

  std::optional<int64_t> eval(const Expr &e) {
    switch (e->kind) {
    case ExprKind::IntImm:
      return as<IntImm>(e).value;
    case ExprKind::BoolImm:
      return as<BoolImm>(e).value ? 1 : 0;
    case ExprKind::Var: {
      auto it = env_.find(as<Var>(e).name);
      if (it == env_.end()) {
        auto g = globals_.find(as<Var>(e).name);
        if (g == globals_.end())
          return std::nullopt;
        return g->second;
      }
      return it->second;
    }
    case ExprKind::Builtin:
      return builtin(as<Builtin>(e).which);
    case ExprKind::Unary: {
      auto v = eval(as<Unary>(e).operand);
      if (!v)
        return std::nullopt;
      return as<Unary>(e).op == UnaryOp::Neg ? -*v : (*v == 0 ? 1 : 0);
    }
    case ExprKind::Binary: {
      const Binary &b = as<Binary>(e);
      auto x = eval(b.lhs);
      if (!x)
        return std::nullopt;
      if (b.op == BinaryOp::And && *x == 0)
        return 0;
      if (b.op == BinaryOp::Or && *x != 0)
        return 1;
      auto y = eval(b.rhs);
      if (!y)
        return std::nullopt;
      if (b.op == BinaryOp::And || b.op == BinaryOp::Or)
        return *y != 0 ? 1 : 0;
      return foldIntBinary(b.op, *x, *y);
    }
    case ExprKind::Call: {
      const Call &c = as<Call>(e);
      if (c.callee == "elect_sync")
        return 1;
      std::vector<int64_t> args;
      for (const Expr &a : c.args) {
        auto v = eval(a);
        if (!v)
          return std::nullopt;
        args.push_back(*v);
      }
      if (c.callee == "select" && args.size() == 3)
        return args[0] ? args[1] : args[2];
      if (c.callee == "min" && args.size() == 2)
        return std::min(args[0], args[1]);
      if (c.callee == "max" && args.size() == 2)
        return std::max(args[0], args[1]);
      return std::nullopt;
    }
    default:
      return std::nullopt;
    }
  }

private:
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
    Expr base = e;
    std::vector<const Index *> chain;
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    if (base->kind != ExprKind::Var)
      return std::nullopt;
    r.name = as<Var>(base).name;
    auto it = buffers_.find(r.name);
    if (it == buffers_.end())
      return std::nullopt;
    r.buffer = &it->second;
    r.shape = r.buffer->shape;
    bool firstDim = true;
    for (const Index *x : chain) {
      std::vector<int64_t> next;
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
      r.shape = std::move(next);
      firstDim = false;
    }
    return r;
  }

  bool isRingWait(const CallStmt &c) {
    if (c.args.empty())
      return false;
    Expr b = c.args[0].value;
    while (b->kind == ExprKind::Index)
      b = as<Index>(b).base;
    return b->kind == ExprKind::Var &&
           std::find(ring_.begin(), ring_.end(), as<Var>(b).name) != ring_.end();
  }

  void call(const CallStmt &c) {
    using I = IntrinsicId;
    const I f = idOf(c);
    auto arg = [&](size_t i) -> Expr { return i < c.args.size() ? c.args[i].value : nullptr; };
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
        work_.blocks.push_back({work_.stageFills - 1, src->name, src->rowStart, src->bytes(),
                                builtin(BuiltinKind::clusterCtaIdx_x)});
      }
      return;
    }
    if (f == I::MbarrierArriveExpectTx) {
      ++work_.stageFills;
      return;
    }
    if (f == I::MbarrierWait) {
      if (isRingWait(c))
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
      if (auto n = arg(0) ? eval(arg(0)) : std::nullopt; n && *n == 0)
        ++drainsHere_;
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
        buffers_[d.name] = std::move(info);
        break;
      }
      case StmtKind::Let: {
        const Let &l = as<Let>(s);
        if (auto v = eval(l.value))
          env_[l.name] = *v;
        else
          env_.erase(l.name);
        break;
      }
      case StmtKind::For: {
        const For &f = as<For>(s);
        auto begin = eval(f.begin), end = eval(f.end), step = eval(f.step);
        if (!begin || !end || !step || *step <= 0) {
          failure = "a loop bound does not evaluate at these sizes";
          return;
        }
        for (int64_t i = *begin; i < *end && !failure; i += *step) {
          env_[f.var] = i;
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
  std::unordered_map<std::string, int64_t> globals_, env_;
  std::unordered_map<std::string, BufferInfo> buffers_;
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
