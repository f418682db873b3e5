#include "verifier/KernelLayouts.h"

#include "ir/Intrinsics.h"
#include "proof/ProofContext.h"
#include "verifier/SymbolicLayout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace tilescope {

namespace {
bool comparable(const KernelBuffer &a, const KernelBuffer &b) {
  if (a.scope != b.scope)
    return false;
  if (std::find(a.aliases.begin(), a.aliases.end(), b.name) != a.aliases.end() ||
      std::find(b.aliases.begin(), b.aliases.end(), a.name) != b.aliases.end())
    return false;
  switch (a.scope) {
  case MemScope::Tmem:
    return !(a.allocated && b.allocated);
  case MemScope::Shared:
  case MemScope::Global:
    return a.baseByte.has_value() && b.baseByte.has_value();
  case MemScope::Reg:
    return false;
  }
  return false;
}

BufferInfo infoOf(const KernelBuffer &b) {
  BufferInfo info;
  info.name = b.name;
  info.scope = b.scope;
  info.dtype = b.dtype;
  info.baseByte = b.baseByte.value_or(0);
  info.mayAlias = b.mayAlias;
  return info;
}
} // namespace

KernelLayoutReport verifyKernelLayouts(const std::vector<KernelBuffer> &buffers,
                                       const std::vector<OperandUse> &uses,
                                       const TargetInfo &target, const LaunchShape &launch,
                                       const VerifyOptions &options) {
  KernelLayoutReport report;
  auto absorb = [&](const KernelBuffer &b, LayoutReport r, llvm::SMLoc loc) {
    for (auto &v : r.violations)
      report.findings.push_back({b.name, loc, std::move(v)});
    for (auto &u : r.undecided)
      report.undecided.push_back({loc, fmt::format("layout of {}: {}", b.name, u)});
  };
  // The per-CTA total of shared memory is the resource check's
  // (verifier/Resources.h), laid out as the lowering lays it out.
  for (const KernelBuffer &b : buffers)
    absorb(b, verifyLayout(b.layout, b.shape, infoOf(b), target, launch, options), b.loc);
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const KernelBuffer &a = buffers[i], &b = buffers[j];
      if (!comparable(a, b))
        continue;
      BufferView va{&a.layout, a.shape, infoOf(a)}, vb{&b.layout, b.shape, infoOf(b)};
      absorb(b, verifyNoOverlap(va, vb, options), b.loc);
    }
  std::map<std::string, const KernelBuffer *> byName;
  for (const KernelBuffer &b : buffers)
    byName[b.name] = &b;
  for (const OperandUse &u : uses) {
    auto it = byName.find(u.buffer);
    const InstructionRule *rule = findInstructionRule(u.instruction);
    if (it == byName.end() || !rule) {
      report.undecided.push_back(
          {u.loc, fmt::format("no layout rule for operand {} of {}", u.buffer, u.instruction)});
      continue;
    }
    const KernelBuffer &b = *it->second;
    for (auto &v : checkInstruction(*rule, b.layout, b.shape, infoOf(b), target, u.use)) {
      v.message += fmt::format(" (operand {})", b.name);
      report.findings.push_back({b.name, u.loc.isValid() ? u.loc : b.loc, std::move(v)});
    }
  }
  return report;
}

unsigned reportKernelLayouts(const KernelLayoutReport &report, Diagnostics &diag) {
  unsigned n = 0;
  for (const KernelFinding &f : report.findings) {
    diag.error(f.loc, f.violation.message);
    ++n;
  }
  // Undecided is not a finding: the verdict becomes unknown, never proved.
  for (const auto &[loc, why] : report.undecided)
    diag.warning(loc, fmt::format("not proved: could not prove the layout legal: {}", why));
  return n;
}

namespace {
// The buffer an operand expression names, and how many point subscripts lead
// it (As[s] -> As, 1).
std::optional<std::pair<std::string, size_t>> operandBuffer(const Expr &e) {
  if (!e)
    return std::nullopt;
  if (e->kind == ExprKind::Var)
    return std::pair{as<Var>(e).name, size_t{0}};
  if (e->kind != ExprKind::Index)
    return std::nullopt;
  // Walk to the innermost Index, whose subscripts apply to the buffer itself.
  const Index *inner = &as<Index>(e);
  while (inner->base && inner->base->kind == ExprKind::Index)
    inner = &as<Index>(inner->base);
  if (!inner->base || inner->base->kind != ExprKind::Var)
    return std::nullopt;
  size_t points = 0;
  while (points < inner->subscripts.size() && inner->subscripts[points].kind == Subscript::Point)
    ++points;
  return std::pair{as<Var>(inner->base).name, points};
}

struct Collector {
  KernelLayoutInput &in;
  const Kernel &kernel;
  std::map<std::string, MemScope> scopes;
  std::set<std::string> allocated; // tmem buffers named by a tcgen05.alloc

  // The row strides (in bytes) of a global tensor parameter named by `arg`.
  void globalStrides(const Expr &arg, llvm::SMLoc loc, bool apart = false) {
    auto named = operandBuffer(arg);
    if (!named)
      return;
    for (const Param &p : kernel.params) {
      if (!p.isTensor || p.name != named->first || p.shape.size() < 2)
        continue;
      int64_t bits = dtypeBits(p.dtype);
      if (bits % 8 != 0)
        return;
      Expr stride = IntImm::make(bits / 8);
      for (size_t d = p.shape.size() - 1; d-- > 0;) {
        stride = Binary::make(BinaryOp::Mul, p.shape[d + 1], stride);
        in.globalStrides.push_back({p.name, d, stride, loc, apart});
      }
      return;
    }
  }

  void block(const Block &b) {
    for (const Stmt &s : b)
      stmt(s);
  }
  void stmt(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::BufferDecl:
      buffer(as<BufferDecl>(s));
      break;
    case StmtKind::For:
      block(as<For>(s).body);
      break;
    case StmtKind::If:
      block(as<If>(s).thenBody);
      block(as<If>(s).elseBody);
      break;
    case StmtKind::CallStmt:
      call(as<CallStmt>(s));
      break;
    default:
      break;
    }
  }
  void buffer(const BufferDecl &d) {
    KernelBuffer b;
    b.name = d.name;
    b.scope = d.scope;
    b.dtype = d.dtype;
    for (const Expr &e : d.shape) {
      auto v = constantValue(e);
      if (!v || *v < 1) {
        in.skipped.push_back({d.loc, fmt::format("{} has a shape that is not constant", d.name)});
        return;
      }
      b.shape.push_back(*v);
    }
    b.layout = d.layout ? d.layout->layout : Layout::rowMajor(b.shape);
    b.loc = d.layout && d.layout->loc.isValid() ? d.layout->loc : d.loc;
    scopes[b.name] = b.scope;
    in.buffers.push_back(std::move(b));
  }
  void use(const Expr &arg, const char *instruction, llvm::SMLoc loc, bool stages) {
    auto named = operandBuffer(arg);
    if (!named)
      return;
    auto it = scopes.find(named->first);
    if (it == scopes.end() || it->second != MemScope::Shared)
      return;
    OperandUse u{named->first, instruction, {}, loc};
    if (stages)
      u.use.batchDims = named->second;
    in.uses.push_back(std::move(u));
  }
  void call(const CallStmt &c) {
    if (idOf(c) == IntrinsicId::Tcgen05Alloc && !c.args.empty() && c.args[0].keyword.empty())
      if (auto named = operandBuffer(c.args[0].value))
        allocated.insert(named->first);
    bool hopper = in.target == TargetKind::sm_90a, blackwell = in.target == TargetKind::sm_100a;
    if (idOf(c) == IntrinsicId::CopyAsync && !c.args.empty() && (hopper || blackwell)) {
      use(c.args[0].value, "tma", c.loc, true);
      for (size_t i = 0; i < c.args.size() && i < 2; ++i)
        if (c.args[i].keyword.empty())
          globalStrides(c.args[i].value, c.loc);
    }
    // A TMA store's (and an explicit TMA load's) global tensor needs the
    // same 16-byte strides as copy_async's.
    bool tma = idOf(c) == IntrinsicId::TmaStore || idOf(c) == IntrinsicId::TmaLoad;
    if (tma && (hopper || blackwell))
      for (size_t i = 0; i < c.args.size() && i < 2; ++i)
        if (c.args[i].keyword.empty())
          globalStrides(c.args[i].value, c.loc, true);
    bool gemm = idOf(c) == IntrinsicId::Gemm || idOf(c) == IntrinsicId::GemmAsync;
    if (gemm && hopper && c.scope == ExecScope::Warpgroup)
      for (size_t i = 1; i < c.args.size() && i < 3; ++i)
        if (c.args[i].keyword.empty())
          use(c.args[i].value, "wgmma.smem", c.loc, false);
    if (gemm && blackwell)
      for (size_t i = 1; i < c.args.size() && i < 3; ++i)
        if (c.args[i].keyword.empty())
          use(c.args[i].value, "tcgen05.smem", c.loc, false);
  }
};
} // namespace

KernelLayoutInput collectKernelLayouts(const Kernel &kernel) {
  KernelLayoutInput in;
  in.target = kernel.launch.target;
  in.launch.threads = kernel.launch.threads > 0 ? kernel.launch.threads : 128;
  for (size_t d = 0; d < kernel.launch.cluster.size() && d < 3; ++d)
    if (auto v = constantValue(kernel.launch.cluster[d]))
      in.launch.cluster[d] = *v;
  for (size_t d = 0; d < kernel.launch.grid.size() && d < 3; ++d)
    if (auto v = constantValue(kernel.launch.grid[d]))
      in.launch.grid[d] = *v;
  in.constraints = kernel.constraints;
  Collector collector{in, kernel, {}, {}};
  collector.block(kernel.body);
  for (KernelBuffer &b : in.buffers)
    b.allocated = b.scope == MemScope::Tmem && collector.allocated.count(b.name) > 0;
  return in;
}

namespace {
// The divisors the `where` clause gives its symbols: `K % 8 == 0` (also
// inside `&&`) says 8 divides K.
void divisorFacts(const Expr &c, std::map<std::string, int64_t> &divisor) {
  if (c->kind != ExprKind::Binary)
    return;
  const Binary &b = as<Binary>(c);
  if (b.op == BinaryOp::And) {
    divisorFacts(b.lhs, divisor);
    divisorFacts(b.rhs, divisor);
    return;
  }
  if (b.op != BinaryOp::Eq || constantValue(b.rhs) != 0 || b.lhs->kind != ExprKind::Binary)
    return;
  const Binary &m = as<Binary>(b.lhs);
  auto k = constantValue(m.rhs);
  if (m.op != BinaryOp::Mod || m.lhs->kind != ExprKind::Var || !k || *k < 1 || *k > (1 << 20))
    return;
  int64_t &d = divisor[as<Var>(m.lhs).name];
  d = std::lcm(std::max<int64_t>(d, 1), *k);
}

// The largest power of two (up to 2^20) that divides every value of a
// product `e` of constants and symbols, by the facts; 0 when `e` is not
// such a product.
int64_t powerOfTwoDividing(const Expr &e, const std::map<std::string, int64_t> &divisor) {
  auto twos = [](int64_t v) {
    int64_t p = 1;
    while (v > 0 && v % (p * 2) == 0 && p < (1 << 20))
      p *= 2;
    return p;
  };
  if (auto v = constantValue(e))
    return *v == 0 ? (1 << 20) : twos(*v < 0 ? -*v : *v);
  if (e->kind == ExprKind::Var) {
    auto it = divisor.find(as<Var>(e).name);
    return it == divisor.end() ? 1 : twos(it->second);
  }
  if (e->kind == ExprKind::Binary && as<Binary>(e).op == BinaryOp::Mul) {
    int64_t l = powerOfTwoDividing(as<Binary>(e).lhs, divisor),
            r = powerOfTwoDividing(as<Binary>(e).rhs, divisor);
    if (!l || !r)
      return 0;
    return std::min<int64_t>(l * r, 1 << 20);
  }
  return 0;
}
} // namespace

// Whether `modulus` (a power of two) divides `bytes` for every size, by the
// `where` clause's divisibility facts alone; false when they do not tell.
bool dividesByFacts(const Expr &bytes, const std::vector<Expr> &constraints, int64_t modulus) {
  std::map<std::string, int64_t> divisor;
  for (const Expr &c : constraints)
    divisorFacts(c, divisor);
  int64_t p = powerOfTwoDividing(bytes, divisor);
  return p > 0 && p % modulus == 0;
}

KernelLayoutReport verifyGlobalStrides(const std::vector<GlobalStride> &strides,
                                       const std::vector<Expr> &constraints,
                                       const VerifyOptions &options) {
  KernelLayoutReport report;
  std::set<std::pair<std::string, size_t>> seen;
  for (const GlobalStride &g : strides) {
    if (!seen.insert({g.tensor, g.dim}).second)
      continue;
    Expr claim = Binary::make(BinaryOp::Eq, Binary::make(BinaryOp::Mod, g.bytes, IntImm::make(16)),
                              IntImm::make(0));
    std::string undecided;
    if (g.apart && dividesByFacts(g.bytes, constraints, 16))
      continue;
    std::optional<std::map<std::string, int64_t>> counter;
    if (g.apart) {
      ProofContextScope own;
      counter = findCounterexample(claim, constraints, &undecided, options.timeoutMs);
    } else {
      counter = findCounterexample(claim, constraints, &undecided, options.timeoutMs);
    }
    if (!counter)
      continue;
    if (counter->empty()) {
      report.undecided.push_back(
          {g.loc, fmt::format("global stride {} of {}: {}", g.dim, g.tensor, undecided)});
      continue;
    }
    LayoutViolation v{ViolationKind::Instruction, {}, {}};
    for (const auto &[n, x] : *counter)
      v.witness.symbols.push_back({n, x});
    v.message =
        fmt::format("tma: global stride {} of {} is {} bytes for {}, not a multiple of 16", g.dim,
                    g.tensor, evaluate(g.bytes, *counter).value_or(0), formatSymbols(*counter));
    report.findings.push_back({g.tensor, g.loc, std::move(v)});
  }
  return report;
}

KernelLayoutReport proveKernelLayouts(const Kernel &kernel, const VerifyOptions &options) {
  KernelLayoutInput in = collectKernelLayouts(kernel);
  KernelLayoutReport report =
      verifyKernelLayouts(in.buffers, in.uses, targetInfo(in.target), in.launch, options);
  KernelLayoutReport strides = verifyGlobalStrides(in.globalStrides, in.constraints, options);
  for (auto &f : strides.findings)
    report.findings.push_back(std::move(f));
  for (auto &u : strides.undecided)
    report.undecided.push_back(std::move(u));
  return report;
}

unsigned checkKernelLayouts(const Kernel &kernel, Diagnostics &diag, const VerifyOptions &options) {
  return reportKernelLayouts(proveKernelLayouts(kernel, options), diag);
}

} // namespace tilescope
