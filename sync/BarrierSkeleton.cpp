#include "sync/BarrierSkeleton.h"

#include "ir/ConcreteEval.h"
#include "ir/DeviceScale.h"
#include "ir/KernelSymbols.h"
#include "ir/Printer.h"
#include "ir/ThreadUniformity.h"
#include "ir/Visitor.h"
#include "ir/WhereFacts.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

namespace tilescope {

// --- ThreadSet ---

namespace {

// --- what an expression depends on ---

struct Dependence {
  bool thread = false;  // reads a thread index or a per-thread collective
  bool uniform = false; // reads a loop variable, a shape symbol, blockIdx, a scalar
};

class DependenceScan : public IRVisitor {
public:
  Dependence dep;

protected:
  void visitVar(const Var &) override { dep.uniform = true; }
  void visitBuiltin(const Builtin &b) override {
    if (isThreadBuiltin(b.which)) {
      dep.thread = true;
    } else {
      dep.uniform = true;
    }
  }
  void visitCall(const Call &c) override {
    if (c.callee == "elect_sync" || c.callee.rfind("shfl", 0) == 0) {
      dep.thread = true;
    }
    IRVisitor::visitCall(c);
  }
  void visitIndex(const Index &x) override {
    dep.uniform = true; // a load: data-dependent, treated as uniform-unknown
    IRVisitor::visitIndex(x);
  }
};

Dependence dependenceOf(const Expr &e) {
  DependenceScan scan;
  scan.visit(e);
  return scan.dep;
}

// --- evaluating thread conditions on every thread ---

std::optional<int64_t> valueAt(const Expr &e, int64_t tx) {
  return evalConcrete(e, [tx](const Expr &leaf) -> std::optional<int64_t> {
    if (leaf->kind != ExprKind::Builtin)
      return std::nullopt;
    return threadBuiltinValue(as<Builtin>(leaf).which, tx);
  });
}

// The threads of `active` for which `cond` holds; elect_sync() picks the
// lowest active lane of each warp (one thread per warp, as the hardware does).
std::optional<ThreadSet> threadsWhere(const Expr &cond, const ThreadSet &active) {
  if (cond->kind == ExprKind::Binary) {
    const Binary &b = as<Binary>(cond);
    if (b.op == BinaryOp::And) {
      auto l = threadsWhere(b.lhs, active);
      if (!l)
        return std::nullopt;
      return threadsWhere(b.rhs, *l);
    }
    if (b.op == BinaryOp::Or) {
      auto l = threadsWhere(b.lhs, active), r = threadsWhere(b.rhs, active);
      if (!l || !r)
        return std::nullopt;
      ThreadSet out(active.launchThreads());
      for (int64_t t = 0; t < active.launchThreads(); ++t)
        if (l->contains(t) || r->contains(t))
          out.add(t);
      return out;
    }
  }
  if (cond->kind == ExprKind::Unary && as<Unary>(cond).op == UnaryOp::Not) {
    auto inner = threadsWhere(as<Unary>(cond).operand, active);
    if (!inner)
      return std::nullopt;
    ThreadSet out(active.launchThreads());
    for (int64_t t = 0; t < active.launchThreads(); ++t)
      if (active.contains(t) && !inner->contains(t))
        out.add(t);
    return out;
  }
  ThreadSet out(active.launchThreads());
  if (cond->kind == ExprKind::Call && as<Call>(cond).callee == "elect_sync") {
    for (int64_t w = 0; w * 32 < active.launchThreads(); ++w)
      for (int64_t t = w * 32; t < std::min(active.launchThreads(), w * 32 + 32); ++t)
        if (active.contains(t)) {
          out.add(t);
          break;
        }
    return out;
  }
  for (int64_t t = 0; t < active.launchThreads(); ++t) {
    if (!active.contains(t))
      continue;
    auto v = valueAt(cond, t);
    if (!v)
      return std::nullopt;
    if (*v)
      out.add(t);
  }
  return out;
}

ThreadSet minus(const ThreadSet &a, const ThreadSet &b) {
  ThreadSet out(a.launchThreads());
  for (int64_t t = 0; t < a.launchThreads(); ++t)
    if (a.contains(t) && !b.contains(t))
      out.add(t);
  return out;
}

// --- the walk ---

class Extractor {
public:
  explicit Extractor(const Kernel &k) : kernel_(k) {
    sk_.kernel = k.name;
    sk_.threads = k.launch.threads;
    sk_.target = k.launch.target;
    sk_.grid = k.launch.grid;
    sk_.cluster = k.launch.cluster;
    sk_.constraints = k.constraints;
    for (const Param &p : k.params)
      if (p.isTensor)
        sk_.buffers[p.name] = {p.name, MemScope::Global, p.dtype, p.shape, p.loc};
    std::set<std::string> symbols = kernelSymbols(k);
    sk_.symbols.assign(symbols.begin(), symbols.end());
  }

  BarrierSkeleton run() {
    Context top;
    top.active = ThreadSet(sk_.threads, true);
    top.roleActive = top.active;
    walk(kernel_.body, top);
    return std::move(sk_);
  }

private:
  struct Context {
    ThreadSet active;     // threads that reach this point
    ThreadSet roleActive; // narrowed by warp-uniform conditions only
    std::vector<Expr> guards;
    std::vector<Expr> threadGuards; // SyncEvent::threadGuards
    std::map<std::string, Expr> env; // let bindings, substituted
    int loop = -1;
    int role = -1; // fixed at the outermost loop's entry
  };

  Expr subst(const Expr &e, const Context &c) const {
    return e ? foldConstants(substitute(e, c.env)) : e;
  }

  // Whether every warp's lanes agree on a thread condition, from its values
  // (`tid_in_wg < 64` selects whole warps): such conditions delimit roles.
  bool warpUniform(const Expr &cond) const {
    auto u = threadUniformity(cond, sk_.threads);
    return u && *u >= Convergence::Warp;
  }

  int roleFor(const ThreadSet &threads, llvm::SMLoc loc) {
    for (size_t i = 0; i < sk_.roles.size(); ++i)
      if (sk_.roles[i].threads == threads)
        return int(i);
    sk_.roles.push_back({threads, loc});
    return int(sk_.roles.size() - 1);
  }

  void walk(const Block &block, Context c) {
    for (const Stmt &s : block)
      walkStmt(s, c);
  }

  void walkStmt(const Stmt &s, Context &c) {
    switch (s->kind) {
    case StmtKind::BufferDecl: {
      const BufferDecl &b = as<BufferDecl>(s);
      std::vector<Expr> shape;
      for (const Expr &d : b.shape)
        shape.push_back(subst(d, c));
      sk_.buffers[b.name] = {b.name, b.scope, b.dtype, shape, b.loc};
      return;
    }
    case StmtKind::BarrierDecl: {
      const BarrierDecl &b = as<BarrierDecl>(s);
      BarrierArray arr;
      arr.name = b.name;
      arr.loc = b.loc;
      if (b.arraySize) {
        auto n = constantValue(subst(b.arraySize, c));
        if (!n) {
          sk_.unsupported.push_back(
              {b.loc, fmt::format("barrier array {} has no constant size", b.name)});
          return;
        }
        arr.size = *n;
      }
      if (b.count)
        arr.count = constantValue(subst(b.count, c));
      sk_.barriers[b.name] = arr;
      return;
    }
    case StmtKind::Let: {
      const Let &l = as<Let>(s);
      Expr v = subst(l.value, c);
      recordLoads(v, s->loc, c);
      c.env[l.name] = v;
      return;
    }
    case StmtKind::For: {
      const For &f = as<For>(s);
      SkeletonLoop loop;
      loop.var = f.var;
      loop.begin = subst(f.begin, c);
      loop.end = subst(f.end, c);
      loop.step = f.step ? subst(f.step, c) : IntImm::make(1);
      loop.parent = c.loop;
      loop.loc = f.loc;
      if (dependenceOf(loop.begin).thread || dependenceOf(loop.end).thread)
        sk_.unsupported.push_back({f.loc, "loop bounds depend on the thread"});
      sk_.loops.push_back(loop);
      Context inner = c;
      inner.loop = int(sk_.loops.size() - 1);
      inner.env.erase(f.var);
      if (inner.role < 0)
        inner.role = roleFor(c.roleActive, f.loc);
      walk(f.body, inner);
      return;
    }
    case StmtKind::If: {
      const If &i = as<If>(s);
      Expr cond = subst(i.cond, c);
      recordLoads(cond, s->loc, c);
      // A branch of device flag operations only (the device protocol's,
      // verifier/DeviceProtocol.h) holds nothing this skeleton models.
      if (deviceFlagsOnly(i.thenBody) && deviceFlagsOnly(i.elseBody))
        return;
      Context thenC = c, elseC = c;
      std::vector<Expr> conj;
      splitConjuncts(cond, conj);
      std::vector<Expr> threadPart, uniformPart;
      bool mixed = false;
      for (const Expr &e : conj) {
        Dependence d = dependenceOf(e);
        if (d.thread && d.uniform)
          mixed = true;
        (d.thread ? threadPart : uniformPart).push_back(e);
      }
      // A mixed condition (a bounds guard `i < N` of a thread's index i)
      // over plain accesses only is kept as a thread guard of its events.
      bool plain = mixed && plainBody(i.thenBody) && plainBody(i.elseBody);
      if (mixed && !plain) {
        sk_.unsupported.push_back(
            {i.loc, fmt::format("condition '{}' mixes thread indices with sizes or loop variables",
                                print(cond))});
      }
      // then: every conjunct holds
      for (const Expr &e : uniformPart)
        thenC.guards.push_back(e);
      for (const Expr &e : threadPart) {
        if (plain && dependenceOf(e).uniform)
          thenC.threadGuards.push_back(e);
        if (auto t = threadsWhere(e, thenC.active))
          thenC.active = *t;
        if (warpUniform(e))
          if (auto t = threadsWhere(e, thenC.roleActive))
            thenC.roleActive = *t;
      }
      // else: the negation, exact when the condition is all thread or all uniform
      if (threadPart.empty()) {
        elseC.guards.push_back(Unary::make(UnaryOp::Not, cond));
      } else if (plain) {
        elseC.threadGuards.push_back(Unary::make(UnaryOp::Not, cond));
      } else if (uniformPart.empty()) {
        if (auto t = threadsWhere(cond, c.active))
          elseC.active = minus(c.active, *t);
        if (warpUniform(cond))
          if (auto t = threadsWhere(cond, c.roleActive))
            elseC.roleActive = minus(c.roleActive, *t);
      } else if (!i.elseBody.empty()) {
        sk_.unsupported.push_back(
            {i.loc, "else branch of a condition mixing thread indices and sizes"});
      }
      walk(i.thenBody, thenC);
      walk(i.elseBody, elseC);
      return;
    }
    case StmtKind::Store: {
      const Store &st = as<Store>(s);
      Expr target = subst(st.target, c);
      Expr value = subst(st.value, c);
      SyncEvent e = base(SyncKind::Access, s->loc, "store", ExecScope::Thread, c);
      recordLoadsInto(value, e);
      if (auto a = accessOf(target, true, false, true))
        e.accesses.push_back(*a);
      if (!e.accesses.empty())
        push(std::move(e));
      return;
    }
    case StmtKind::CallStmt:
      walkCall(as<CallStmt>(s), c);
      return;
    }
  }

  SyncEvent base(SyncKind kind, llvm::SMLoc loc, std::string what, ExecScope scope,
                 const Context &c) {
    SyncEvent e;
    e.kind = kind;
    e.loc = loc;
    e.what = std::move(what);
    e.order = order_++;
    e.loop = c.loop;
    e.scope = scope;
    e.threads = c.active;
    e.guards = c.guards;
    e.threadGuards = c.threadGuards;
    e.role = c.role >= 0 ? c.role : roleFor(c.roleActive, loc);
    return e;
  }

  void push(SyncEvent e) {
    if (!e.threads.empty())
      sk_.events.push_back(std::move(e));
  }

  // --- regions ---

  struct DimState {
    Expr begin, extent;
    bool point = false;
  };

  std::optional<MemoryAccess> accessOf(const Expr &e, bool write, bool async, bool perThread) {
    std::string name;
    std::vector<DimState> dims;
    Expr stage;
    int64_t stages = 1;
    if (!resolve(e, name, dims, stage, stages, true))
      return std::nullopt;
    auto it = sk_.buffers.find(name);
    // Register tiles are kept too (scope Reg): the wgmma and tcgen05 checks
    // need to know which statement reads the registers an asynchronous
    // operation writes. Race and stage checks skip them.
    if (it == sk_.buffers.end())
      return std::nullopt;
    MemoryAccess a;
    a.buffer = name;
    a.scope = it->second.scope;
    a.dtype = it->second.dtype;
    a.write = write;
    a.asyncProxy = async;
    a.perThread = perThread;
    for (const DimState &d : dims)
      a.region.push_back({d.begin, d.point ? IntImm::make(1) : d.extent});
    a.stage = stage ? stage : IntImm::make(0);
    a.stages = stage ? stages : 1;
    return a;
  }

  bool resolve(const Expr &e, std::string &name, std::vector<DimState> &dims, Expr &stage,
               int64_t &stages, bool outermost) {
    if (e->kind == ExprKind::Var) {
      name = as<Var>(e).name;
      auto it = sk_.buffers.find(name);
      if (it == sk_.buffers.end())
        return false;
      for (const Expr &d : it->second.shape)
        dims.push_back({IntImm::make(0), d, false});
      return true;
    }
    if (e->kind != ExprKind::Index)
      return false;
    const Index &x = as<Index>(e);
    if (!resolve(x.base, name, dims, stage, stages, false))
      return false;
    (void)outermost;
    size_t next = 0;
    bool first = true;
    for (const Subscript &sub : x.subscripts) {
      while (next < dims.size() && dims[next].point)
        ++next;
      if (next >= dims.size())
        return false;
      DimState &d = dims[next];
      switch (sub.kind) {
      case Subscript::Point:
        if (first && next == 0 && !stage) {
          auto extent = constantValue(d.extent);
          if (extent && *extent >= 1) {
            stage = sub.begin;
            stages = *extent;
          }
        }
        d.begin = foldConstants(Binary::make(BinaryOp::Add, d.begin, sub.begin));
        d.point = true;
        break;
      case Subscript::Range:
        d.begin = foldConstants(Binary::make(BinaryOp::Add, d.begin, sub.begin));
        d.extent = foldConstants(Binary::make(BinaryOp::Sub, sub.end, sub.begin));
        break;
      case Subscript::Extent:
        d.begin = foldConstants(Binary::make(BinaryOp::Add, d.begin, sub.begin));
        d.extent = sub.end;
        break;
      case Subscript::Full:
        break;
      }
      first = false;
      ++next;
    }
    return true;
  }

  void recordLoadsInto(const Expr &e, SyncEvent &ev) {
    std::function<void(const Expr &)> scan = [&](const Expr &x) {
      if (!x)
        return;
      switch (x->kind) {
      case ExprKind::Index:
        if (auto a = accessOf(x, false, false, true))
          ev.accesses.push_back(*a);
        for (const Subscript &s : as<Index>(x).subscripts) {
          scan(s.begin);
          scan(s.end);
        }
        return;
      case ExprKind::Unary:
        scan(as<Unary>(x).operand);
        return;
      case ExprKind::Binary:
        scan(as<Binary>(x).lhs);
        scan(as<Binary>(x).rhs);
        return;
      case ExprKind::Call:
        for (const Expr &a : as<Call>(x).args)
          scan(a);
        return;
      default:
        return;
      }
    };
    scan(e);
  }

  void recordLoads(const Expr &e, llvm::SMLoc loc, const Context &c) {
    SyncEvent ev = base(SyncKind::Access, loc, "load", ExecScope::Thread, c);
    recordLoadsInto(e, ev);
    if (!ev.accesses.empty())
      push(std::move(ev));
  }

  BarrierRef barrierOf(const Expr &e) {
    BarrierRef r;
    if (!e)
      return r;
    if (e->kind == ExprKind::Var) {
      r.array = as<Var>(e).name;
      r.index = IntImm::make(0);
    } else if (e->kind == ExprKind::Index) {
      const Index &x = as<Index>(e);
      if (x.base->kind == ExprKind::Var && x.subscripts.size() == 1 &&
          x.subscripts[0].kind == Subscript::Point) {
        r.array = as<Var>(x.base).name;
        r.index = x.subscripts[0].begin;
      }
    }
    return r;
  }

  static bool deviceFlagsOnly(const Block &b) {
    for (const Stmt &st : b) {
      if (st->kind != StmtKind::CallStmt)
        return false;
      IntrinsicId n = idOf(as<CallStmt>(st));
      if (n != IntrinsicId::DeviceSignal && n != IntrinsicId::DeviceWait &&
          n != IntrinsicId::DeviceFence)
        return false;
    }
    return true;
  }

  // Declarations of registers, lets, stores and loops and branches of them:
  // no synchronisation, call or async operation.
  static bool plainBody(const Block &b) {
    for (const Stmt &st : b) {
      if (st->kind == StmtKind::If && plainBody(as<If>(st).thenBody) &&
          plainBody(as<If>(st).elseBody))
        continue;
      if (st->kind == StmtKind::For && plainBody(as<For>(st).body))
        continue;
      if (st->kind != StmtKind::Let && st->kind != StmtKind::Store &&
          !(st->kind == StmtKind::BufferDecl && as<BufferDecl>(st).scope == MemScope::Reg))
        return false;
    }
    return true;
  }

  static const Expr *positional(const CallStmt &call, size_t i) {
    size_t seen = 0;
    for (const CallArg &a : call.args)
      if (a.keyword.empty() && seen++ == i)
        return &a.value;
    return nullptr;
  }
  static Expr keywordArg(const CallStmt &call, std::string_view name) {
    const CallArg *a = call.keyword(name);
    return a ? a->value : nullptr;
  }

  void walkCall(const CallStmt &call, Context &c) {
    // Substitute lets in every argument first.
    std::vector<CallArg> args;
    for (const CallArg &a : call.args)
      args.push_back({a.keyword, subst(a.value, c), a.loc});
    CallStmt s(call.scope, call.callee, args, call.loc);
    // Loads written inside the arguments (`cta.mul(x, x, rsqrt(t[H / 1024 -
    // 1]))`, a subscript `As[idx[0]]`): element reads of the executing
    // threads, before the call. Found in the arguments as written, so that
    // a `let` holding a load (recorded at the `let`) is not read again at
    // each use; a buffer operand itself is the call's access (below).
    SyncEvent loads = base(SyncKind::Access, call.loc, "load", ExecScope::Thread, c);
    std::function<void(const Expr &, bool)> written = [&](const Expr &x, bool operand) {
      if (!x)
        return;
      if (x->kind == ExprKind::Index) {
        if (!operand)
          if (auto a = accessOf(subst(x, c), false, false, true))
            loads.accesses.push_back(*a);
        for (const Subscript &sub : as<Index>(x).subscripts) {
          written(sub.begin, false);
          written(sub.end, false);
        }
        written(as<Index>(x).base, true); // part of this access
      } else if (x->kind == ExprKind::Unary) {
        written(as<Unary>(x).operand, false);
      } else if (x->kind == ExprKind::Binary) {
        written(as<Binary>(x).lhs, false);
        written(as<Binary>(x).rhs, false);
      } else if (x->kind == ExprKind::Call) {
        for (const Expr &arg : as<Call>(x).args)
          written(arg, false);
      }
    };
    for (const CallArg &a : call.args)
      written(a.value, a.value->kind == ExprKind::Var || a.value->kind == ExprKind::Index);
    if (!loads.accesses.empty())
      push(std::move(loads));
    const std::string &name = s.callee;
    const IntrinsicId id = idOf(s);
    std::string shown = call.scope == ExecScope::Thread
                            ? name
                            : fmt::format("{}.{}", execScopePrefix(call.scope), name);
    const Expr *p0 = positional(s, 0);
    const Expr *p1 = positional(s, 1);
    const Expr *p2 = positional(s, 2);
    auto make = [&](SyncKind kind) {
      SyncEvent e = base(kind, s.loc, shown, s.scope, c);
      e.call = id;
      return e;
    };

    if (unitOf(id) == IntrinsicUnit::Mbarrier) {
      SyncEvent e = make(SyncKind::MbarArrive);
      e.barrier = barrierOf(p0 ? *p0 : nullptr);
      if (e.barrier.array.empty()) {
        sk_.unsupported.push_back(
            {s.loc, "barrier operand is not an mbarrier or an element of an array"});
        return;
      }
      if (id == IntrinsicId::MbarrierInit) {
        e.kind = SyncKind::MbarInit;
        e.amount = keywordArg(s, "count");
      } else if (id == IntrinsicId::MbarrierArrive) {
        Expr n = keywordArg(s, "count");
        e.amount = n ? n : IntImm::make(1);
        e.remoteCta = keywordArg(s, "cta");
      } else if (id == IntrinsicId::MbarrierArriveExpectTx) {
        SyncEvent tx = e;
        e.amount = IntImm::make(1);
        push(std::move(e));
        tx.kind = SyncKind::MbarExpectTx;
        tx.order = order_++;
        tx.amount = keywordArg(s, "bytes");
        push(std::move(tx));
        return;
      } else if (id == IntrinsicId::MbarrierExpectTx) {
        e.kind = SyncKind::MbarExpectTx;
        e.amount = keywordArg(s, "bytes");
      } else if (id == IntrinsicId::MbarrierCompleteTx) {
        e.kind = SyncKind::MbarCompleteTx;
        e.amount = keywordArg(s, "bytes");
      } else if (id == IntrinsicId::MbarrierWait) {
        e.kind = SyncKind::MbarWait;
        e.parity = keywordArg(s, "parity");
      } else if (id == IntrinsicId::MbarrierInval) {
        e.kind = SyncKind::MbarInval;
      } else {
        return;
      }
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::CopyAsync || id == IntrinsicId::TmaLoad) {
      Expr mbar = keywordArg(s, "mbar");
      SyncEvent e = make(mbar ? SyncKind::TxDelivery : SyncKind::Access);
      std::optional<MemoryAccess> dst =
          p0 ? accessOf(*p0, true, mbar != nullptr, false) : std::nullopt;
      if (p1)
        if (auto src = accessOf(*p1, false, false, false))
          e.accesses.push_back(*src);
      if (dst)
        e.accesses.push_back(*dst);
      if (mbar) {
        e.barrier = barrierOf(mbar);
        e.multicast = keywordArg(s, "multicast");
        e.amount = dst ? regionBytes(dst->region, dst->dtype) : nullptr;
        if (!e.amount)
          sk_.unsupported.push_back({s.loc, "cannot tell how many bytes this copy delivers"});
      }
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::TmaStore) {
      SyncEvent e = make(SyncKind::Access);
      if (p1)
        if (auto a = accessOf(*p1, false, true, false))
          e.accesses.push_back(*a);
      if (p0)
        if (auto a = accessOf(*p0, true, true, false))
          e.accesses.push_back(*a);
      push(std::move(e));
      return;
    }
    bool gemmLike = id == IntrinsicId::Gemm || id == IntrinsicId::GemmAsync ||
                    id == IntrinsicId::WgmmaMmaAsync || id == IntrinsicId::Tcgen05Mma;
    if (gemmLike) {
      // wgmma.mma_async and tcgen05.mma complete asynchronously (the table's
      // completion); a tile-primitive gemm where dispatch will pick them.
      bool async = intrinsic(id).async() ||
                   (targetHas(sk_.target, TargetFeature::Wgmma) && s.scope == ExecScope::Warpgroup) ||
                   targetHas(sk_.target, TargetFeature::Tcgen05);
      SyncKind kind = id == IntrinsicId::WgmmaMmaAsync ? SyncKind::WgmmaMma : SyncKind::Access;
      SyncEvent e = make(kind);
      for (const Expr *op : {p1, p2})
        if (op)
          if (auto a = accessOf(*op, false, async, false))
            e.accesses.push_back(*a);
      // A block-scaled tcgen05.mma reads its scale factors (tensor memory)
      // like its operands, until its commit.
      if (id == IntrinsicId::Tcgen05Mma)
        for (std::string_view scale : {"scale_a", "scale_b"})
          if (Expr sf = keywordArg(s, scale))
            if (auto a = accessOf(sf, false, true, false))
              e.accesses.push_back(*a);
      if (p0)
        if (auto a = accessOf(*p0, true, id == IntrinsicId::Tcgen05Mma, false))
          e.accesses.push_back(*a);
      if (Expr mbar = keywordArg(s, "mbar")) {
        SyncEvent arrival = make(SyncKind::Tcgen05Commit);
        arrival.barrier = barrierOf(mbar);
        arrival.amount = IntImm::make(1);
        push(std::move(e));
        push(std::move(arrival));
        return;
      }
      push(std::move(e));
      return;
    }
    if (isDeviceCall(id)) {
      // The device scale (ir/DeviceScale.h). Flags are the device protocol's
      // business (verifier/DeviceProtocol.h); inside one device the CTA-level
      // calls are a CTA barrier (device.barrier, the collectives: no thread
      // of the CTA goes on before all arrived) and the local side of a copy
      // to or from a peer, made by the whole CTA.
      if (id == IntrinsicId::DeviceSignal || id == IntrinsicId::DeviceWait ||
          id == IntrinsicId::DeviceFence)
        return;
      // device.warp_allreduce is made by one warp: it orders that warp's
      // lanes only, and its accesses are the warp's.
      bool warp = id == IntrinsicId::DeviceWarpAllreduce;
      auto cta = [&](SyncKind kind) {
        if (warp && kind == SyncKind::CtaSync)
          kind = SyncKind::WarpSync;
        SyncEvent e = base(kind, s.loc, shown, warp ? ExecScope::Warp : ExecScope::Cta, c);
        e.call = id;
        return e;
      };
      bool peerCopy = id == IntrinsicId::DevicePut || id == IntrinsicId::DeviceGet;
      if (!peerCopy)
        push(cta(SyncKind::CtaSync));
      if (id != IntrinsicId::DeviceBarrier) {
        SyncEvent e = cta(SyncKind::Access);
        bool put = id == IntrinsicId::DevicePut;
        if (p0 && !put)
          if (auto a = accessOf(*p0, true, false, false))
            e.accesses.push_back(*a);
        if (p1 && id != IntrinsicId::DeviceGet)
          if (auto a = accessOf(*p1, false, false, false))
            e.accesses.push_back(*a);
        push(std::move(e));
      }
      if (!peerCopy)
        push(cta(SyncKind::CtaSync));
      return;
    }
    static const std::map<IntrinsicId, SyncKind> simple = {
        {IntrinsicId::FenceProxyAsync, SyncKind::FenceProxyAsync},
        {IntrinsicId::FenceMbarrierInit, SyncKind::FenceMbarrierInit},
        {IntrinsicId::WgmmaFence, SyncKind::WgmmaFence},
        {IntrinsicId::WgmmaCommitGroup, SyncKind::WgmmaCommit},
        {IntrinsicId::Tcgen05WaitLd, SyncKind::Tcgen05WaitLd},
        {IntrinsicId::Tcgen05FenceBeforeThreadSync, SyncKind::Tcgen05Fence},
        {IntrinsicId::Tcgen05FenceAfterThreadSync, SyncKind::Tcgen05Fence},
        {IntrinsicId::Tcgen05RelinquishAllocPermit, SyncKind::Tcgen05Relinquish},
    };
    if (auto it = simple.find(id); it != simple.end()) {
      SyncEvent e = make(it->second);
      if (const CallArg *sp = s.keyword("space");
          sp && sp->value->kind == ExprKind::StringImm && as<StringImm>(sp->value).value == "global")
        e.globalProxy = true;
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::WgmmaWaitGroup) {
      SyncEvent e = make(SyncKind::WgmmaWait);
      e.amount = p0 ? *p0 : IntImm::make(0);
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::Sync) {
      if (s.scope == ExecScope::Cta || s.scope == ExecScope::Cluster)
        push(make(SyncKind::CtaSync));
      else if (s.scope == ExecScope::Warp)
        push(make(SyncKind::WarpSync));
      return;
    }
    if (id == IntrinsicId::BarrierSync || id == IntrinsicId::BarrierArrive) {
      SyncEvent e =
          make(id == IntrinsicId::BarrierSync ? SyncKind::NamedSync : SyncKind::NamedArrive);
      if (p0)
        e.namedId = constantValue(*p0).value_or(-1);
      if (Expr t = keywordArg(s, "threads"))
        e.namedThreads = constantValue(t).value_or(-1);
      push(std::move(e));
      return;
    }
    // cp.async groups: the copies' writes complete at a wait of the issuing
    // thread (the copy itself is an access, below).
    if (id == IntrinsicId::CpAsyncCommit || id == IntrinsicId::CpAsyncWaitAll) {
      push(make(SyncKind::CpAsyncCommit));
      if (id == IntrinsicId::CpAsyncCommit)
        return;
    }
    if (id == IntrinsicId::CpAsyncWait || id == IntrinsicId::CpAsyncWaitAll) {
      SyncEvent e = make(SyncKind::CpAsyncWait);
      e.amount = id == IntrinsicId::CpAsyncWait && p0 ? *p0 : IntImm::make(0);
      push(std::move(e));
      return;
    }
    // Bulk groups of TMA stores: a store reads its shared source until a
    // tma.store_wait of the issuing thread retires its group.
    if (id == IntrinsicId::TmaStoreCommit) {
      push(make(SyncKind::TmaStoreCommit));
      return;
    }
    if (id == IntrinsicId::TmaStoreWait) {
      SyncEvent e = make(SyncKind::TmaStoreWait);
      e.amount = p0 ? *p0 : IntImm::make(0);
      Expr read = keywordArg(s, "read");
      // Unless it is plainly `false`, taken as read = true (which retires less).
      e.readOnly = read && !(read->kind == ExprKind::BoolImm && !as<BoolImm>(read).value);
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::BarrierClusterArrive || id == IntrinsicId::BarrierClusterWait) {
      push(make(id == IntrinsicId::BarrierClusterArrive ? SyncKind::ClusterArrive
                                                        : SyncKind::ClusterWait));
      return;
    }
    if (id == IntrinsicId::DsmemLoad || id == IntrinsicId::DsmemStore) {
      // dst, src: the remote side is src for a load, dst for a store.
      SyncEvent e = make(SyncKind::Access);
      Expr cta = keywordArg(s, "cta");
      bool load = id == IntrinsicId::DsmemLoad;
      for (size_t i = 0; i < 2; ++i)
        if (const Expr *op = positional(s, i))
          if (auto a = accessOf(*op, i == 0, false, false)) {
            if ((i == 1) == load)
              a->remoteCta = cta;
            e.accesses.push_back(*a);
          }
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::Tcgen05Commit) {
      SyncEvent e = make(SyncKind::Tcgen05Commit);
      e.barrier = barrierOf(p0 ? *p0 : nullptr);
      e.amount = IntImm::make(1);
      e.multicast = keywordArg(s, "multicast");
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::Tcgen05Alloc || id == IntrinsicId::Tcgen05Dealloc) {
      SyncEvent e =
          make(id == IntrinsicId::Tcgen05Alloc ? SyncKind::Tcgen05Alloc : SyncKind::Tcgen05Dealloc);
      if (p0 && (*p0)->kind == ExprKind::Var)
        e.what = fmt::format("{}({})", shown, as<Var>(*p0).name);
      e.amount = keywordArg(s, "cols");
      // The allocation begins and ends the contents' lifetime: a write of
      // all of it by the allocating warp (whole-warp, like tcgen05.ld).
      e.warpCollective = true;
      if (p0)
        if (auto a = accessOf(*p0, true, false, false))
          e.accesses.push_back(*a);
      push(std::move(e));
      return;
    }
    if (id == IntrinsicId::Tcgen05Ld) {
      SyncEvent e = make(SyncKind::Tcgen05Ld);
      e.warpCollective = true;
      if (p0)
        if (auto a = accessOf(*p0, true, false, false))
          e.accesses.push_back(*a);
      if (p1)
        if (auto a = accessOf(*p1, false, false, false))
          e.accesses.push_back(*a);
      push(std::move(e));
      return;
    }
    // Any other call: each buffer operand is read or written as the table's
    // record says (dst, c, acc written; the others read).
    SyncEvent e = make(SyncKind::Access);
    e.warpCollective = id == IntrinsicId::Tcgen05St;
    const IntrinsicInfo *info = id == IntrinsicId::Unknown ? nullptr : &intrinsic(id);
    size_t index = 0;
    for (const CallArg &a : s.args) {
      if (!a.keyword.empty())
        continue;
      bool write = info && index < info->positional.size()
                       ? info->positional[index].access == Access::Write ||
                             info->positional[index].access == Access::ReadWrite
                       : index == 0;
      if (a.value->kind == ExprKind::Var || a.value->kind == ExprKind::Index)
        if (auto acc = accessOf(a.value, write, false, false))
          e.accesses.push_back(*acc);
      ++index;
    }
    if (!e.accesses.empty())
      push(std::move(e));
  }

  const Kernel &kernel_;
  BarrierSkeleton sk_;
  int order_ = 0;
};

} // namespace

BarrierSkeleton extractBarrierSkeleton(const Kernel &kernel) {
  return Extractor(kernel).run();
}

} // namespace tilescope
