#include "ir/Stmt.h"

#include "ir/Invariant.h"

namespace tilescope {

std::string_view memScopeName(MemScope s) {
  switch (s) {
  case MemScope::Global:
    return "global";
  case MemScope::Shared:
    return "shared";
  case MemScope::Reg:
    return "reg";
  case MemScope::Tmem:
    return "tmem";
  }
  return "?";
}

std::string_view execScopePrefix(ExecScope s) {
  switch (s) {
  case ExecScope::Thread:
    return "";
  case ExecScope::Warp:
    return "warp";
  case ExecScope::Warpgroup:
    return "wg";
  case ExecScope::Cta:
    return "cta";
  case ExecScope::Cluster:
    return "cluster";
  }
  return "?";
}

Stmt BufferDecl::make(MemScope scope, std::string name, Dtype dtype, std::vector<Expr> shape,
                      std::optional<LayoutSpec> layout, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!name.empty() && !shape.empty(), "a buffer has a name and a shape");
  return std::make_shared<BufferDecl>(scope, std::move(name), dtype, std::move(shape),
                                      std::move(layout), loc);
}

Stmt BarrierDecl::make(std::string name, Expr arraySize, Expr count, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!name.empty(), "a declaration has a name");
  return std::make_shared<BarrierDecl>(std::move(name), std::move(arraySize), std::move(count),
                                       loc);
}

Stmt Let::make(std::string name, Expr value, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!name.empty() && value, "a let binds a name to a value");
  return std::make_shared<Let>(std::move(name), std::move(value), loc);
}

Stmt For::make(std::string var, Expr begin, Expr end, Expr step, int64_t unroll,
               int64_t pipelineStages, Block body, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!var.empty() && begin && end && step,
                      "a loop has a variable, bounds and a step");
  TILESCOPE_INVARIANT(unroll >= -1 && pipelineStages >= 0,
                      "unroll is -1 (full), 0 or a factor; stages are not negative");
  return std::make_shared<For>(std::move(var), std::move(begin), std::move(end), std::move(step),
                               unroll, pipelineStages, std::move(body), loc);
}

Stmt If::make(Expr cond, Block thenBody, Block elseBody, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(cond, "a branch has a condition");
  return std::make_shared<If>(std::move(cond), std::move(thenBody), std::move(elseBody), loc);
}

Stmt Store::make(Expr target, Expr value, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(target && target->kind == ExprKind::Index && value,
                      "a store writes a subscripted element");
  return std::make_shared<Store>(std::move(target), std::move(value), loc);
}

Stmt CallStmt::make(ExecScope scope, std::string callee, std::vector<CallArg> args,
                    llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!callee.empty(), "a call names its callee");
  return std::make_shared<CallStmt>(scope, std::move(callee), std::move(args), loc);
}

const CallArg *CallStmt::keyword(std::string_view name) const {
  for (const CallArg &a : args)
    if (a.keyword == name)
      return &a;
  return nullptr;
}

const Kernel *Module::find(std::string_view name) const {
  for (const Kernel &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

bool equal(const Block &a, const Block &b) {
  return equalLists(a, b);
}

bool equal(const Stmt &a, const Stmt &b) {
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case StmtKind::BufferDecl: {
    const auto &x = as<BufferDecl>(a), &y = as<BufferDecl>(b);
    return x.scope == y.scope && x.name == y.name && x.dtype == y.dtype &&
           equal(x.shape, y.shape) && x.layout == y.layout;
  }
  case StmtKind::BarrierDecl: {
    const auto &x = as<BarrierDecl>(a), &y = as<BarrierDecl>(b);
    return x.name == y.name && equal(x.arraySize, y.arraySize) && equal(x.count, y.count);
  }
  case StmtKind::Let:
    return as<Let>(a).name == as<Let>(b).name && equal(as<Let>(a).value, as<Let>(b).value);
  case StmtKind::For: {
    const auto &x = as<For>(a), &y = as<For>(b);
    return x.var == y.var && equal(x.begin, y.begin) && equal(x.end, y.end) &&
           equal(x.step, y.step) && x.unroll == y.unroll && x.pipelineStages == y.pipelineStages &&
           equal(x.body, y.body);
  }
  case StmtKind::If: {
    const auto &x = as<If>(a), &y = as<If>(b);
    return equal(x.cond, y.cond) && equal(x.thenBody, y.thenBody) && equal(x.elseBody, y.elseBody);
  }
  case StmtKind::Store:
    return equal(as<Store>(a).target, as<Store>(b).target) &&
           equal(as<Store>(a).value, as<Store>(b).value);
  case StmtKind::CallStmt: {
    const auto &x = as<CallStmt>(a), &y = as<CallStmt>(b);
    if (x.scope != y.scope || x.callee != y.callee || x.args.size() != y.args.size())
      return false;
    for (size_t i = 0; i < x.args.size(); ++i)
      if (x.args[i].keyword != y.args[i].keyword || !equal(x.args[i].value, y.args[i].value))
        return false;
    return true;
  }
  }
  return false;
}

void addDeviceParams(Kernel &k) {
  if (k.launch.devices.empty())
    return;
  auto declared = [&](const std::string &n) {
    for (const Param &p : k.params) {
      if (p.name == n)
        return true;
      for (const Expr &d : p.shape)
        if (d && d->kind == ExprKind::Var && as<Var>(d).name == n)
          return true;
    }
    return false;
  };
  auto add = [&](std::string name) {
    if (declared(name))
      return;
    Param p;
    p.name = std::move(name);
    p.dtype = Dtype::i32;
    p.loc = k.launch.loc;
    p.implicit = true;
    k.params.push_back(std::move(p));
  };
  const Expr &n = k.launch.devices.front();
  if (n && n->kind == ExprKind::Var)
    add(as<Var>(n).name);
  add("ndev");
  add("devid");
}

bool equal(const Kernel &a, const Kernel &b) {
  if (a.name != b.name || a.params.size() != b.params.size())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    const Param &p = a.params[i], &q = b.params[i];
    if (p.name != q.name || p.isTensor != q.isTensor || p.dtype != q.dtype ||
        !equal(p.shape, q.shape) || p.placement != q.placement)
      return false;
  }
  if (!equal(a.space, b.space) || bool(a.launch.threadsExpr) != bool(b.launch.threadsExpr) ||
      (a.launch.threadsExpr && !equal(a.launch.threadsExpr, b.launch.threadsExpr)) ||
      bool(a.launch.ctasPerSmExpr) != bool(b.launch.ctasPerSmExpr) ||
      (a.launch.ctasPerSmExpr && !equal(a.launch.ctasPerSmExpr, b.launch.ctasPerSmExpr)))
    return false;
  return equal(a.constraints, b.constraints) && equal(a.launch.grid, b.launch.grid) &&
         equal(a.launch.cluster, b.launch.cluster) && equal(a.launch.devices, b.launch.devices) &&
         a.launch.ctasPerSm == b.launch.ctasPerSm &&
         a.launch.threads == b.launch.threads &&
         a.launch.target == b.launch.target && equal(a.body, b.body);
}

bool equal(const Module &a, const Module &b) {
  if (a.kernels.size() != b.kernels.size())
    return false;
  for (size_t i = 0; i < a.kernels.size(); ++i)
    if (!equal(a.kernels[i], b.kernels[i]))
      return false;
  return true;
}

} // namespace tilescope
