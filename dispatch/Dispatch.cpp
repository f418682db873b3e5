// The dispatch pass: operand resolution, the walk over the kernel, and the
// choice among the implementations of DispatchTable.cpp.
#include "dispatch/Dispatch.h"

#include "dispatch/DispatchSupport.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ir/WhereFacts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tilescope {

std::vector<int64_t> Operand::regionShape() const {
  std::vector<int64_t> s;
  for (size_t d = 0; d < extent.size(); ++d)
    if (kept[d])
      s.push_back(extent[d]);
  return s;
}

int64_t Operand::elements() const {
  int64_t n = 1;
  for (int64_t e : regionShape())
    n *= e;
  return n;
}

int64_t CallSite::scopeThreads() const {
  switch (scope) {
  case ExecScope::Thread:
    return 1;
  case ExecScope::Warp:
    return 32;
  case ExecScope::Warpgroup:
    return 128;
  case ExecScope::Cta:
  case ExecScope::Cluster:
    return kernel->launch.threads;
  }
  return 1;
}

bool CallSite::flag(std::string_view n) const {
  const CallArg *a = keyword(n);
  return a && a->value->kind == ExprKind::BoolImm && as<BoolImm>(a->value).value;
}

std::string_view primitiveFamily(std::string_view callee) {
  IntrinsicId id = intrinsicIdOf(callee);
  if (isElementwise(id))
    return "elementwise";
  if (isReduction(id))
    return "reduce";
  return callee;
}

namespace {

struct BufferEntry {
  MemScope scope;
  Dtype dtype;
  std::vector<Expr> shape;
  const LayoutSpec *layout;
};

// Every buffer a kernel declares (buffer names are unique per kernel: the
// checker rejects redefinition) and its global parameters.
struct Symbols : IRVisitor {
  std::map<std::string, BufferEntry> buffers;
  // The where clause's facts, as the type checker reads them
  // (ir/WhereFacts.h): a `[C]` dimension is constant under `where C == 1024`
  // (or `C * C == 1048576`), and `X[C / 1024 * 1024 - 1024 : C]` is 1024
  // long under `where C % 1024 == 0`.
  WhereFacts facts;
  explicit Symbols(const Kernel &k) : facts(whereFacts(k)) {
    for (const Param &p : k.params)
      if (p.isTensor)
        buffers[p.name] = {MemScope::Global, p.dtype, p.shape, nullptr};
    visit(k.body);
  }
  void visitBufferDecl(const BufferDecl &b) override {
    buffers[b.name] = {b.scope, b.dtype, b.shape, b.layout ? &*b.layout : nullptr};
  }
};

std::optional<int64_t> constantOf(const Affine &a) {
  return a.isConstant() ? std::optional<int64_t>(a.constant) : std::nullopt;
}

std::optional<Operand> resolve(const Expr &e, const Symbols &syms, std::string *why) {
  Operand op;
  op.expr = e;
  // Peel the subscript chain down to the buffer name.
  std::vector<const Index *> chain;
  Expr base = e;
  while (base->kind == ExprKind::Index) {
    chain.insert(chain.begin(), &as<Index>(base));
    base = as<Index>(base).base;
  }
  if (base->kind != ExprKind::Var || !syms.buffers.count(as<Var>(base).name)) {
    if (chain.empty()) {
      op.isScalar = true;
      return op;
    }
    *why = "the operand is not a buffer";
    return std::nullopt;
  }
  op.buffer = as<Var>(base).name;
  const BufferEntry &b = syms.buffers.at(op.buffer);
  op.scope = b.scope;
  op.dtype = b.dtype;
  op.bufferShape = b.shape;
  op.layout = b.layout;
  for (const Expr &d : b.shape) {
    op.begin.push_back(dispatch::lit(0));
    Affine c = syms.facts.affine(d);
    op.extent.push_back(c.isConstant() ? c.constant : -1);
    op.kept.push_back(true);
  }
  op.whole = chain.empty();
  for (const Index *x : chain) {
    std::vector<size_t> keptDims;
    for (size_t d = 0; d < op.kept.size(); ++d)
      if (op.kept[d])
        keptDims.push_back(d);
    if (x->subscripts.size() > keptDims.size()) {
      *why = "too many subscripts";
      return std::nullopt;
    }
    for (size_t i = 0; i < x->subscripts.size(); ++i) {
      const Subscript &s = x->subscripts[i];
      size_t d = keptDims[i];
      switch (s.kind) {
      case Subscript::Point:
        op.begin[d] = dispatch::add(op.begin[d], s.begin);
        op.extent[d] = 1;
        op.kept[d] = false;
        break;
      case Subscript::Extent: {
        std::optional<int64_t> n = constantOf(syms.facts.affine(s.end));
        if (!n) {
          *why = "a region extent must be a constant";
          return std::nullopt;
        }
        op.begin[d] = dispatch::add(op.begin[d], s.begin);
        op.extent[d] = *n;
        break;
      }
      case Subscript::Range: {
        std::optional<int64_t> n =
            constantOf(syms.facts.affine(Binary::make(BinaryOp::Sub, s.end, s.begin)));
        if (!n) {
          *why = "write the range as `begin : +extent`: its length must be a constant";
          return std::nullopt;
        }
        op.begin[d] = dispatch::add(op.begin[d], s.begin);
        op.extent[d] = *n;
        break;
      }
      case Subscript::Full:
        break;
      }
    }
  }
  for (size_t d = 0; d < op.extent.size(); ++d)
    if (op.kept[d] && op.extent[d] < 0) {
      *why = fmt::format("dimension {} of '{}' is symbolic; give the region a constant extent", d,
                         op.buffer);
      return std::nullopt;
    }
  return op;
}

class DispatchPass : public IRMutator {
public:
  DispatchPass(const Kernel &k, Diagnostics &diag) : kernel_(k), syms_(k), diag_(diag) {}
  DispatchState state;
  std::vector<DispatchDecision> decisions;
  bool failed = false;

protected:
  Stmt mutateCallStmt(const CallStmt &c, const Stmt &self) override {
    const IntrinsicInfo *info = findIntrinsic(c.callee);
    if (!info || info->cls != CallClass::TilePrimitive)
      return self;
    Block out = dispatchCall(c);
    if (out.size() == 1)
      return out[0];
    // A block of several statements replaces one: wrap it in `if true`, which
    // codegen and the simulator take as a plain block.
    return If::make(BoolImm::make(true, c.loc), std::move(out), {}, c.loc);
  }

private:
  Block dispatchCall(const CallStmt &c) {
    CallSite site;
    site.call = &c;
    site.kernel = &kernel_;
    site.target = kernel_.launch.target;
    site.scope = c.scope;
    std::string_view family = primitiveFamily(c.callee);
    for (const CallArg &a : c.args) {
      if (!a.keyword.empty())
        continue;
      std::string why;
      auto op = resolve(a.value, syms_, &why);
      if (!op) {
        diag_.error(a.loc, fmt::format("dispatch: cannot resolve operand `{}` of '{}': {}",
                                       print(a.value), c.callee, why));
        failed = true;
        return {};
      }
      // An element of a buffer (a point in every dimension: `mx[0]`) is a
      // value, as the type checker and the simulator read it: a scalar
      // operand of fill and the element-wise primitives, not a region.
      if (!site.operands.empty() && !op->isScalar && !op->whole &&
          (isElementwise(intrinsicIdOf(c.callee)) ||
           intrinsicIdOf(c.callee) == IntrinsicId::Fill) &&
          std::none_of(op->kept.begin(), op->kept.end(), [](bool k) { return k; }))
        op->isScalar = true;
      site.operands.push_back(std::move(*op));
    }
    std::string forced;
    if (const CallArg *f = c.keyword("dispatch")) {
      if (f->value->kind != ExprKind::StringImm) {
        diag_.error(f->loc, "dispatch: `dispatch = ` takes an implementation name in quotes");
        failed = true;
        return {};
      }
      forced = as<StringImm>(f->value).value;
    }
    DispatchDecision decision;
    decision.loc = c.loc;
    decision.primitive = std::string(c.callee);
    std::vector<const DispatchImpl *> candidates;
    for (const DispatchImpl &impl : dispatchTable())
      if (impl.primitive == family)
        candidates.push_back(&impl);
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const DispatchImpl *a, const DispatchImpl *b) { return a->priority > b->priority; });
    bool forcedKnown = forced.empty();
    for (const DispatchImpl *impl : candidates) {
      if (!forced.empty() && impl->name != forced) {
        decision.refused.push_back({std::string(impl->name), "not the forced implementation"});
        continue;
      }
      forcedKnown = true;
      std::string why = impl->refuse(site);
      if (!why.empty()) {
        decision.refused.push_back({std::string(impl->name), why});
        continue;
      }
      decision.chosen = std::string(impl->name);
      decisions.push_back(decision);
      return impl->expand(site, state);
    }
    failed = true;
    if (!forcedKnown) {
      std::string names;
      for (const DispatchImpl *impl : candidates)
        names += (names.empty() ? "" : ", ") + std::string(impl->name);
      diag_.error(c.loc,
                  fmt::format("dispatch: '{}' has no implementation named \"{}\" (it has: {})",
                              c.callee, forced, names));
      return {};
    }
    diag_.error(c.loc,
                fmt::format("dispatch: no implementation of '{}{}{}' accepts this call on {}",
                            execScopePrefix(c.scope), c.scope == ExecScope::Thread ? "" : ".",
                            c.callee, targetInfo(site.target).name));
    for (const auto &[n, why] : decision.refused)
      diag_.note(c.loc, fmt::format("{}: {}", n, why));
    return {};
  }

  const Kernel &kernel_;
  Symbols syms_;
  Diagnostics &diag_;
};

} // namespace

std::optional<DispatchResult> dispatchKernel(const Kernel &kernel, Diagnostics &diag) {
  DispatchPass pass(kernel, diag);
  Kernel out = pass.mutate(kernel);
  if (pass.failed)
    return std::nullopt;
  if (!pass.state.hoisted.empty()) {
    Block body = pass.state.hoisted;
    body.insert(body.end(), out.body.begin(), out.body.end());
    out.body = std::move(body);
  }
  return DispatchResult{std::move(out), std::move(pass.decisions)};
}

} // namespace tilescope
