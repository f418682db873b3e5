// Lifting PTX synchronisation into a barrier skeleton (Lift.h).
#include "ptx/Lift.h"

#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ptx/Cfg.h"
#include "ptx/Classify.h"
#include "ptx/LiftExprs.h"
#include "ptx/LiftMemory.h"
#include "ptx/LiftSolve.h"
#include "ptx/LiftTcgen05.h"
#include "ptx/ThreadConditions.h"
#include "ptx/Values.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tilescope::ptx {
namespace {

int64_t launchThreads(const Function &f) {
  for (const auto &[name, value] : f.performanceDirectives)
    if (name == "reqntid" || name == "maxntid") {
      int64_t x = 1, y = 1, z = 1;
      std::sscanf(value.c_str(), "%ld, %ld, %ld", &x, &y, &z);
      return (y == 1 && z == 1) ? x : 0;
    }
  return 0;
}

class Lifter {
public:
  Lifter(const Module &m, const Function &f, const LiftOptions &opt)
      : m_(m), f_(f), opt_(opt), cfg_(buildCfg(f)), values_(f, cfg_),
        memory_(m, f, values_, launchThreads(f)) {
    std::map<std::string, int64_t> align;
    for (const Declaration &d : f.decls)
      align[d.name] = d.align;
    for (const Declaration &d : m.globals)
      align[d.name] = d.align;
    values_.setSymbolAlignment(std::move(align));
  }

  Lifted run() {
    BarrierSkeleton &sk = out_.skeleton;
    sk.kernel = f_.name;
    threads_ = launchThreads(f_);
    sk.threads = threads_;
    if (m_.target.find("sm_100") != std::string::npos)
      sk.target = TargetKind::sm_100a;
    else if (m_.target.find("sm_90") != std::string::npos)
      sk.target = TargetKind::sm_90a;
    else
      sk.target = TargetKind::sm_80;
    if (threads_ <= 0 || threads_ > 1024) {
      notLifted(f_.loc, "no one-dimensional .reqntid/.maxntid: the threads per CTA are unknown, "
                        "so which threads run each barrier operation is not known");
      return std::move(out_);
    }
    for (size_t l = 0; l < cfg_.loops.size(); ++l)
      values_.tripCount(int(l)); // reads after a loop see its last value
    for (const LiftOptions::LowerBound &a : opt_.assumptions) {
      sk.constraints.push_back(Binary::make(BinaryOp::Ge, Var::make(a.param), IntImm::make(a.min)));
      symbol(a.param);
    }
    controlDependence();
    executingThreads();
    loops();
    arrays();
    events();
    foldEntryGuards();
    groupSharedBuffers(out_.skeleton, out_.memoryNotLifted);
    for (const std::string &n : cfg_.notes)
      notLifted(f_.loc, n);
    // The reading every value rests on (Values.h): 32-bit index arithmetic
    // without wrap-around, so parameters are taken in [0, 2^30].
    for (const std::string &p : sk.symbols) {
      sk.constraints.push_back(Binary::make(BinaryOp::Ge, Var::make(p), IntImm::make(0)));
      sk.constraints.push_back(
          Binary::make(BinaryOp::Le, Var::make(p), IntImm::make(int64_t(1) << 30)));
    }
    return std::move(out_);
  }

private:
  void notLifted(llvm::SMLoc loc, std::string why) {
    out_.skeleton.unsupported.push_back({loc, why});
    out_.notLifted.push_back({loc, std::move(why)});
    out_.complete = false;
  }

  void controlDependence() { cd_ = controlEdges(f_, cfg_); }

  // Whether block `src`'s branch controls the loop that holds `b` (its
  // latch or an exit): then it repeats `b`, it does not guard it.
  bool loopControl(int src, int b) const {
    for (int l = cfg_.blocks[size_t(b)].loop; l >= 0; l = cfg_.loops[size_t(l)].parent) {
      const Loop &L = cfg_.loops[size_t(l)];
      if (!L.contains(src))
        continue;
      for (int s : cfg_.blocks[size_t(src)].succ)
        if (s == L.header || !L.contains(s))
          return true;
    }
    return false;
  }

  Expr branchCondition(int block, bool taken) {
    const BasicBlock &bb = cfg_.blocks[size_t(block)];
    const Instruction &br = f_.instructions[bb.last - 1];
    if (br.guard.empty())
      return nullptr;
    Expr c = values_.registerValue(br.guard, bb.last - 1);
    if (!c)
      return nullptr;
    bool holds = taken != br.guardNegated;
    return holds ? c : Unary::make(UnaryOp::Not, c);
  }

  void executingThreads() {
    size_t n = cfg_.blocks.size();
    exec_.assign(n, std::vector<Expr>(size_t(threads_)));
    roleExec_.assign(n, ThreadSet(threads_));
    blockLifted_.assign(n, true);
    for (int64_t t = 0; t < threads_; ++t)
      exec_[0][size_t(t)] = BoolImm::make(true);
    roleExec_[0] = ThreadSet(threads_, true);
    // Blocks in reverse post-order (forward edges only), so that a block's
    // controlling branches and dominator come before it.
    std::vector<size_t> order;
    {
      std::vector<bool> seen(n, false);
      std::vector<std::pair<size_t, size_t>> stack{{0, 0}};
      seen[0] = true;
      while (!stack.empty()) {
        auto &[blk, k] = stack.back();
        const std::vector<int> &succ = cfg_.blocks[blk].succ;
        if (k < succ.size()) {
          size_t s = size_t(succ[k++]);
          if (!seen[s]) {
            seen[s] = true;
            stack.push_back({s, 0});
          }
        } else {
          order.push_back(blk);
          stack.pop_back();
        }
      }
      std::reverse(order.begin(), order.end());
    }
    std::vector<bool> done(n, false);
    done[0] = true;
    for (size_t b = 1; b < n; ++b)
      if (std::find(order.begin(), order.end(), b) == order.end())
        blockLifted_[b] = false; // unreachable
    for (size_t b : order) {
      if (b == 0)
        continue;
      done[b] = true;
      std::vector<CdEdge> kept;
      for (const CdEdge &e : cd_[b])
        if (!loopControl(e.source, int(b)))
          kept.push_back(e);
      if (kept.empty()) {
        int d = cfg_.idom[b];
        if (d < 0 || d == int(b)) {
          blockLifted_[b] = false; // unreachable
          continue;
        }
        exec_[b] = exec_[size_t(d)];
        roleExec_[b] = roleExec_[size_t(d)];
        blockLifted_[b] = blockLifted_[size_t(d)];
        continue;
      }
      std::vector<Expr> g(static_cast<size_t>(threads_));
      ThreadSet roles(threads_);
      for (const CdEdge &e : kept) {
        if (!done[size_t(e.source)] || size_t(e.source) == b || !blockLifted_[size_t(e.source)]) {
          blockLifted_[b] = false;
          reasons_[b] = fmt::format("control flow into line {} not lifted (a branch after it "
                                    "decides whether it runs)",
                                    cfg_.blocks[b].line);
          break;
        }
        Expr c = branchCondition(e.source, e.taken);
        if (!c) {
          blockLifted_[b] = false;
          reasons_[b] = fmt::format("the branch at line {} depends on a value not derived",
                                    f_.instructions[cfg_.blocks[size_t(e.source)].last - 1].line);
          break;
        }
        // Roles split on conditions whose may-take set (the threads for
        // which the condition is not false: true, or still open over sizes
        // and loop counters) is warp-uniform.
        std::vector<Expr> bound(static_cast<size_t>(threads_));
        for (int64_t t = 0; t < threads_; ++t)
          bound[size_t(t)] = bindThread(c, t);
        auto mayTake = [&](int64_t t) { return !isFalse(bound[size_t(t)]); };
        bool uniform = true;
        for (int64_t w = 0; w < threads_ && uniform; w += 32)
          for (int64_t t = w; t < std::min(threads_, w + 32); ++t)
            if (mayTake(t) != mayTake(w))
              uniform = false;
        for (int64_t t = 0; t < threads_; ++t) {
          g[size_t(t)] =
              disj(g[size_t(t)], conj(exec_[size_t(e.source)][size_t(t)], bound[size_t(t)]));
          if (roleExec_[size_t(e.source)].contains(t) && (!uniform || mayTake(t)))
            roles.add(t);
        }
      }
      if (!blockLifted_[b])
        continue;
      exec_[b] = std::move(g);
      roleExec_[b] = roles;
    }
  }

  void loops() {
    BarrierSkeleton &sk = out_.skeleton;
    skLoop_.assign(cfg_.loops.size(), -1);
    for (size_t l = 0; l < cfg_.loops.size(); ++l) {
      const Loop &L = cfg_.loops[l];
      if (L.spinWait)
        continue;
      Expr n = values_.tripCount(int(l));
      if (!n) {
        loopReason_[int(l)] = fmt::format("the loop at lines {}-{} has no derivable trip count",
                                          L.firstLine, L.lastLine);
        continue;
      }
      if (Expr need = values_.entryCondition(int(l)); need && !entered(L, need, int(l)))
        continue;
      SkeletonLoop s;
      s.var = RegisterValues::iterationVar(int(l));
      s.begin = IntImm::make(0);
      // Entered do-while style, or tested at its header (n is then
      // already max(0, ..): the body may not run).
      s.end = values_.topTested(int(l)) ? n : Call::make("max", {IntImm::make(1), n});
      s.step = IntImm::make(1);
      int p = L.parent;
      while (p >= 0 && cfg_.loops[size_t(p)].spinWait)
        p = cfg_.loops[size_t(p)].parent;
      s.parent = p >= 0 ? skLoop_[size_t(p)] : -1;
      if (p >= 0 && skLoop_[size_t(p)] < 0)
        continue; // its parent is not lifted: neither is it
      s.loc = f_.instructions[cfg_.blocks[size_t(L.header)].first].loc;
      skTrip_.push_back(n);
      skLoop_[l] = int(sk.loops.size());
      sk.loops.push_back(s);
      std::vector<std::string> vars;
      freeVars(n, vars);
      for (const std::string &v : vars)
        symbol(v);
    }
  }

  // Whether `need` holds wherever loop l is entered (LiftSolve.h); else
  // the loop is left out with the reason.
  bool entered(const Loop &L, const Expr &need, int l) {
    std::string why;
    if (blockLifted_[size_t(L.header)] &&
        holdsWhereRun(exec_[size_t(L.header)], assumptionFacts(), need, why))
      return true;
    loopReason_[l] = fmt::format("the loop at lines {}-{} ends at a `!=` test, and that its "
                                 "bound is ahead of the counter where it is entered ({}) is not "
                                 "proved: {}",
                                 L.firstLine, L.lastLine, print(need),
                                 why.empty() ? "which threads enter it is not derived" : why);
    return false;
  }

  void foldEntryGuards() {
    foldLoopEntryGuards(out_.skeleton, skTrip_, assumptionFacts());
    relateLoopBounds(out_.skeleton, assumptionFacts());
  }

  std::vector<Expr> assumptionFacts() const {
    std::vector<Expr> base;
    for (const LiftOptions::LowerBound &a : opt_.assumptions)
      base.push_back(Binary::make(BinaryOp::Ge, Var::make(a.param), IntImm::make(a.min)));
    return base;
  }

  void symbol(const std::string &v) {
    if (v.rfind("it", 0) == 0 || v.rfind("&", 0) == 0)
      return;
    auto &syms = out_.skeleton.symbols;
    if (std::find(syms.begin(), syms.end(), v) == syms.end())
      syms.push_back(v);
  }

  struct Array {
    std::string name, symbol;
    int64_t start = 0, size = 0;
    llvm::SMLoc loc;
  };

  // mbarrier arrays: runs of inits 8 bytes apart, split where a ring starts.
  void arrays() {
    std::set<std::pair<std::string, int64_t>> ringStarts;
    struct Init {
      std::string symbol;
      int64_t offset;
      std::string count;
      llvm::SMLoc loc;
    };
    std::vector<Init> inits;
    for (size_t i = 0; i < f_.instructions.size(); ++i) {
      const Instruction &in = f_.instructions[i];
      if (in.opcode != "mbarrier" || in.operands.empty())
        continue;
      const Operand *addr = addressOperand(in);
      if (!addr)
        continue;
      AddressParts a = splitAddress(values_.addressValue(*addr, i));
      if (!a.ok || a.symbol.empty())
        continue;
      if (in.hasModifier("init") && !a.rest) {
        Expr c = in.operands.size() > 1 ? values_.operandValue(in.operands[1], i) : nullptr;
        inits.push_back({a.symbol, a.constant, c ? print(c) : "?", in.loc});
      } else if (a.rest) {
        // A ring starts an array, and the barrier after its last one starts
        // another (`full[2]`, `empty[2]`, `done`).
        if (auto lo = minOver(a.rest))
          ringStarts.insert({a.symbol, a.constant + *lo});
        if (auto hi = maxOver(a.rest))
          ringStarts.insert({a.symbol, a.constant + *hi + 8});
      }
    }
    std::sort(inits.begin(), inits.end(), [](const Init &x, const Init &y) {
      return std::tie(x.symbol, x.offset) < std::tie(y.symbol, y.offset);
    });
    for (size_t i = 0; i < inits.size(); ++i) {
      const Init &in = inits[i];
      bool extend = !arrays_.empty() && arrays_.back().symbol == in.symbol &&
                    arrays_.back().start + 8 * arrays_.back().size == in.offset &&
                    inits[i - 1].count == in.count && !ringStarts.count({in.symbol, in.offset});
      if (i > 0 && inits[i - 1].symbol == in.symbol && inits[i - 1].offset == in.offset)
        continue; // the same barrier initialised twice: the init checks say so
      if (extend) {
        ++arrays_.back().size;
        continue;
      }
      Array a;
      a.symbol = in.symbol;
      a.start = in.offset;
      a.size = 1;
      a.name = fmt::format("mbar{}", in.offset);
      a.loc = in.loc;
      arrays_.push_back(a);
    }
    for (const Array &a : arrays_)
      out_.skeleton.barriers[a.name] = BarrierArray{a.name, a.size, std::nullopt, a.loc};
  }

  std::optional<BarrierRef> barrierRef(const Operand &op, size_t at) {
    AddressParts a = splitAddress(values_.addressValue(op, at));
    if (!a.ok || a.symbol.empty())
      return std::nullopt;
    int64_t low = a.constant;
    if (a.rest) {
      auto lo = minOver(a.rest);
      if (!lo)
        lo = 0; // a size-dependent index: its range is the proofs' to check
      low += *lo;
    }
    for (const Array &arr : arrays_) {
      if (arr.symbol != a.symbol || low < arr.start || low >= arr.start + 8 * arr.size)
        continue;
      if ((a.constant - arr.start) % 8 != 0)
        return std::nullopt;
      Expr idx = divide8(a.rest);
      if (!idx)
        return std::nullopt;
      BarrierRef r;
      r.array = arr.name;
      r.index = simplify(add(idx, IntImm::make((a.constant - arr.start) / 8)));
      return r;
    }
    return std::nullopt;
  }

  // The threads, guards, role and loop of an event at instruction i.
  bool place(SyncEvent &e, size_t i) {
    int b = cfg_.blockOf[i];
    const Instruction &in = f_.instructions[i];
    if (!blockLifted_[size_t(b)]) {
      auto r = reasons_.find(size_t(b));
      notLifted(in.loc, r != reasons_.end() ? r->second : "which threads run this is not derived");
      return false;
    }
    e.loc = in.loc;
    e.order = int(i);
    e.scope = ExecScope::Thread;
    e.threads = ThreadSet(threads_);
    // A guarded instruction (`@%p mbarrier.init ...`) runs where its
    // predicate holds as well.
    Expr predicate;
    if (!in.guard.empty()) {
      predicate = values_.registerValue(in.guard, i);
      if (!predicate) {
        notLifted(in.loc, fmt::format("the guard {} of line {} is not derived", in.guard, in.line));
        return false;
      }
      if (in.guardNegated)
        predicate = Unary::make(UnaryOp::Not, predicate);
    }
    Expr guard;
    bool first = true;
    for (int64_t t = 0; t < threads_; ++t) {
      Expr g = exec_[size_t(b)][size_t(t)];
      if (predicate)
        g = conj(g, bindThread(predicate, t));
      if (!g)
        continue;
      e.threads.add(t);
      if (first)
        guard = g, first = false;
      else if (!equal(g, guard)) {
        notLifted(in.loc, fmt::format("the threads that run line {} are chosen by a condition "
                                      "that mixes the thread index with sizes or loop counters "
                                      "in a way not lifted",
                                      in.line));
        return false;
      }
    }
    if (e.threads.empty())
      return false; // no thread runs it
    if (guard && !isTrue(guard)) {
      for (const Expr &g : conjuncts(guard)) {
        if (implied(g))
          continue;
        e.guards.push_back(g);
        std::vector<std::string> vars;
        freeVars(g, vars);
        for (const std::string &v : vars)
          symbol(v);
      }
    }
    // The loop: the innermost real loop; every enclosing one must be lifted.
    int real = cfg_.realLoopOf(i);
    e.loop = real >= 0 ? skLoop_[size_t(real)] : -1;
    if (real >= 0 && e.loop < 0) {
      auto r = loopReason_.find(real);
      notLifted(in.loc, r != loopReason_.end()
                            ? r->second
                            : fmt::format("the loop around line {} is not lifted", in.line));
      return false;
    }
    // The role: warp-uniform selection where the outermost loop starts.
    int outer = real;
    while (outer >= 0 && cfg_.loops[size_t(outer)].parent >= 0)
      outer = cfg_.loops[size_t(outer)].parent;
    int roleBlock = outer >= 0 ? cfg_.loops[size_t(outer)].header : b;
    ThreadSet roleThreads = roleExec_[size_t(roleBlock)];
    BarrierSkeleton &sk = out_.skeleton;
    e.role = -1;
    for (size_t r = 0; r < sk.roles.size(); ++r)
      if (sk.roles[r].threads == roleThreads)
        e.role = int(r);
    if (e.role < 0) {
      llvm::SMLoc loc = f_.instructions[cfg_.blocks[size_t(roleBlock)].first].loc;
      sk.roles.push_back({roleThreads, loc});
      e.role = int(sk.roles.size() - 1);
    }
    return true;
  }

  // `p > c` or `p >= c` with an assumption p >= m that implies it.
  bool implied(const Expr &g) const {
    if (g->kind != ExprKind::Binary)
      return false;
    const auto &b = as<Binary>(g);
    auto c = constantValue(b.rhs);
    if (!c || b.lhs->kind != ExprKind::Var || (b.op != BinaryOp::Gt && b.op != BinaryOp::Ge))
      return false;
    int64_t need = b.op == BinaryOp::Gt ? *c + 1 : *c;
    for (const LiftOptions::LowerBound &a : opt_.assumptions)
      if (a.param == as<Var>(b.lhs).name && a.min >= need)
        return true;
    return false;
  }

  void push(SyncEvent e) {
    if (e.kind != SyncKind::Access) // synchronisation, not a plain access
      ++out_.events;
    out_.skeleton.events.push_back(std::move(e));
  }

  bool needBarrier(SyncEvent &e, const Operand *op, size_t i) {
    auto ref = op ? barrierRef(*op, i) : std::nullopt;
    if (!ref) {
      notLifted(f_.instructions[i].loc,
                fmt::format("the mbarrier address at line {} is not a derivable element of an "
                            "initialised mbarrier array",
                            f_.instructions[i].line));
      return false;
    }
    e.barrier = *ref;
    return true;
  }

  Expr value(const Operand &op, size_t i, const char *what) {
    Expr v = values_.operandValue(op, i);
    if (!v)
      notLifted(f_.instructions[i].loc,
                fmt::format("the {} at line {} is not derivable", what, f_.instructions[i].line));
    else {
      std::vector<std::string> vars;
      freeVars(v, vars);
      for (const std::string &x : vars)
        symbol(x);
    }
    return v;
  }

  // Attaches lifted accesses to e (or says why not); false when not lifted.
  bool attach(SyncEvent &e, const LiftedAccess &a) {
    if (!a.why.empty()) {
      out_.memoryNotLifted.push_back({e.loc, a.why});
      return false;
    }
    for (const MemoryAccess &m : a.accesses)
      e.accesses.push_back(m);
    out_.accesses += int64_t(a.accesses.size());
    return true;
  }

  void events() {
    for (size_t i = 0; i < f_.instructions.size(); ++i) {
      const Instruction &in = f_.instructions[i];
      Classification c = classify(in);
      SyncEvent e;
      e.what = in.fullName();
      auto start = [&](SyncKind k) {
        e.kind = k;
        return place(e, i);
      };
      if (LiftedAccess a = memory_.threadAccess(i); a.touches()) {
        e.loc = in.loc;
        if (!a.what.empty()) { // cp.async: the race check knows it by its intrinsic
          e.what = a.what;
          e.call = IntrinsicId::CpAsync;
        }
        if (a.why.empty() && !start(SyncKind::Access))
          continue;
        if (!attach(e, a))
          continue;
        if (a.lanes < kThreadsPerWarp) { // ldmatrix / stmatrix: the lanes that give addresses
          ThreadSet lanes(threads_);
          for (int64_t t = 0; t < threads_; ++t)
            if (e.threads.contains(t) && laneOf(t) < a.lanes)
              lanes.add(t);
          e.threads = lanes;
        }
        push(e);
        continue;
      }
      if (in.opcode == "mbarrier") {
        if (in.hasModifier("init") && in.operands.size() == 2) {
          if (!start(SyncKind::MbarInit) || !needBarrier(e, addressOperand(in), i))
            continue;
          if (!(e.amount = value(in.operands[1], i, "mbarrier init count")))
            continue;
          push(e);
        } else if (in.hasModifier("inval") && in.operands.size() == 1) {
          if (start(SyncKind::MbarInval) && needBarrier(e, addressOperand(in), i))
            push(e);
        } else if ((in.hasModifier("try_wait") || in.hasModifier("test_wait")) &&
                   in.hasModifier("parity") && in.operands.size() == 3) {
          int inner = cfg_.loopOf(i);
          if (inner < 0 || !cfg_.loops[size_t(inner)].spinWait) {
            notLifted(in.loc, fmt::format("the mbarrier poll at line {} is not a spin loop that "
                                          "waits until the phase completes",
                                          in.line));
            continue;
          }
          if (!start(SyncKind::MbarWait) || !needBarrier(e, addressOperand(in), i))
            continue;
          if (!(e.parity = value(in.operands[2], i, "wait parity")))
            continue;
          push(e);
        } else if (in.hasModifier("arrive") && !in.hasModifier("expect_tx") &&
                   in.operands.size() >= 2 && in.operands[1].kind == Operand::Memory &&
                   !in.hasModifier("shared::cluster")) {
          if (!start(SyncKind::MbarArrive) || !needBarrier(e, addressOperand(in), i))
            continue;
          e.amount =
              in.operands.size() > 2 ? value(in.operands[2], i, "arrival count") : IntImm::make(1);
          if (e.amount)
            push(e);
        } else if (in.hasModifier("expect_tx") && in.operands.size() >= 2) {
          bool arrive = in.hasModifier("arrive");
          size_t addr = arrive ? 1 : 0;
          if (addr >= in.operands.size() || in.operands[addr].kind != Operand::Memory ||
              in.hasModifier("shared::cluster")) {
            notLifted(in.loc, fmt::format("expect_tx at line {} not lifted", in.line));
            continue;
          }
          if (!start(SyncKind::MbarArrive) || !needBarrier(e, addressOperand(in), i))
            continue;
          SyncEvent tx = e;
          e.amount = IntImm::make(1);
          if (arrive)
            push(e);
          if (!boxesKnown())
            continue;
          tx.kind = SyncKind::MbarExpectTx;
          if (!(tx.amount = value(in.operands.back(), i, "expect_tx byte count")))
            continue;
          push(tx);
        } else {
          notLifted(in.loc, fmt::format("'{}' at line {} is not lifted", in.fullName(), in.line));
        }
        continue;
      }
      if (c.cls == InstrClass::Tma && in.hasModifier("tensor") && in.modifiers.size() > 4 &&
          in.modifiers[4].rfind("shared", 0) == 0) {
        // A TMA load: [dst], [tensor map, {coords}], [mbar]
        if (in.hasModifier("multicast::cluster") || in.operands.size() < 3) {
          notLifted(in.loc,
                    fmt::format("the TMA load at line {} (multicast) is not lifted", in.line));
          continue;
        }
        if (!boxesKnown()) {
          out_.memoryNotLifted.push_back(
              {in.loc, fmt::format("the TMA load at line {} writes a box of shared memory whose "
                                   "size is in its tensor map (give --tma-box)",
                                   in.line)});
          continue;
        }
        if (!start(SyncKind::TxDelivery) || !needBarrier(e, &in.operands[2], i))
          continue;
        std::string param = tensorMapParam(in.operands[1], i);
        auto box = opt_.tmaBoxBytes.find(param);
        if (box == opt_.tmaBoxBytes.end()) {
          notLifted(in.loc, fmt::format("the TMA load at line {} reads tensor map '{}', whose box "
                                        "--tma-box does not give",
                                        in.line, param.empty() ? "?" : param));
          out_.memoryNotLifted.push_back(
              {in.loc,
               fmt::format("the TMA load at line {} writes shared memory not lifted", in.line)});
          continue;
        }
        e.amount = IntImm::make(box->second);
        attach(e, memory_.region(i, in.operands[0], box->second, true));
        push(e);
        continue;
      }
      if (c.cls == InstrClass::Tma && in.hasModifier("tensor") && in.modifiers.size() > 4 &&
          in.modifiers[4] == "global" && in.operands.size() == 2) {
        // A TMA store: [tensor map, {coords}], [src]
        e.loc = in.loc;
        std::string param = tensorMapParam(in.operands[0], i);
        auto box = opt_.tmaBoxBytes.find(param);
        if (box == opt_.tmaBoxBytes.end()) {
          out_.memoryNotLifted.push_back(
              {in.loc, fmt::format("the TMA store at line {} reads shared memory through tensor "
                                   "map '{}', whose box --tma-box does not give",
                                   in.line, param.empty() ? "?" : param)});
          continue;
        }
        e.what = "tma.store";
        e.call = IntrinsicId::TmaStore; // its source is read until its bulk group is waited
        if (start(SyncKind::Access) &&
            attach(e, memory_.region(i, in.operands[1], box->second, false)))
          push(e);
        continue;
      }
      SyncKind k;
      bool simple = true;
      if (in.opcode == "wgmma" && in.hasModifier("fence"))
        k = SyncKind::WgmmaFence;
      else if (in.opcode == "wgmma" && in.hasModifier("mma_async"))
        k = SyncKind::WgmmaMma;
      else if (in.opcode == "wgmma" && in.hasModifier("commit_group"))
        k = SyncKind::WgmmaCommit;
      else if (in.opcode == "fence" && in.hasModifier("proxy") && in.hasModifier("async"))
        k = SyncKind::FenceProxyAsync;
      else if (in.opcode == "fence" && in.hasModifier("mbarrier_init"))
        k = SyncKind::FenceMbarrierInit;
      else if (c.cls == InstrClass::BulkGroup && in.hasModifier("commit_group"))
        k = SyncKind::TmaStoreCommit;
      else if (c.cls == InstrClass::CpAsync && in.hasModifier("commit_group"))
        k = SyncKind::CpAsyncCommit;
      else
        simple = false;
      if (simple) {
        if (!start(k))
          continue;
        if (k == SyncKind::WgmmaMma)
          attach(e, memory_.wgmmaOperands(i));
        // fence.proxy.async without a state space covers all of them.
        if (k == SyncKind::FenceProxyAsync)
          e.globalProxy = in.hasModifier("global") || !in.modifierStartingWith("shared");
        push(e);
        continue;
      }
      if ((in.opcode == "wgmma" || c.cls == InstrClass::BulkGroup ||
           c.cls == InstrClass::CpAsync) &&
          in.hasModifier("wait_group") && in.operands.size() == 1) {
        k = in.opcode == "wgmma"             ? SyncKind::WgmmaWait
            : c.cls == InstrClass::BulkGroup ? SyncKind::TmaStoreWait
                                             : SyncKind::CpAsyncWait;
        if (!start(k))
          continue;
        e.readOnly = in.hasModifier("read");
        if ((e.amount = value(in.operands[0], i, "wait_group depth")))
          push(e);
        continue;
      }
      if (c.cls == InstrClass::CtaBarrier) {
        if (in.hasModifier("warp")) { // bar.warp.sync: the lanes of its warps
          if (start(SyncKind::WarpSync))
            push(e);
          continue;
        }
        bool cluster = in.hasModifier("cluster");
        bool arrive = in.hasModifier("arrive");
        if (cluster || in.hasModifier("red")) {
          notLifted(in.loc, fmt::format("'{}' at line {} is not lifted", in.fullName(), in.line));
          continue;
        }
        if (in.operands.empty() || in.operands.size() > 2) {
          notLifted(in.loc, fmt::format("barrier at line {} not lifted", in.line));
          continue;
        }
        Expr id = value(in.operands[0], i, "barrier id");
        Expr count =
            in.operands.size() == 2 ? value(in.operands[1], i, "barrier thread count") : nullptr;
        int64_t idValue = 0, countValue = threads_;
        bool idKnown = false, countKnown = in.operands.size() == 1;
        if (id)
          if (auto v = constantValue(id))
            idValue = *v, idKnown = true;
        if (count)
          if (auto v = constantValue(count))
            countValue = *v, countKnown = true;
        if (!idKnown || !countKnown) {
          notLifted(in.loc,
                    fmt::format("the barrier id or count at line {} is not a constant", in.line));
          continue;
        }
        if (idValue == 0 && in.operands.size() == 1 && !arrive)
          k = SyncKind::CtaSync;
        else
          k = arrive ? SyncKind::NamedArrive : SyncKind::NamedSync;
        if (!start(k))
          continue;
        e.namedId = idValue;
        e.namedThreads = countValue;
        push(e);
        continue;
      }
      if (c.cls == InstrClass::Tma && in.hasModifier("mbarrier::complete_tx::bytes")) {
        notLifted(in.loc, fmt::format("the bulk copy at line {} signals an mbarrier and is not "
                                      "lifted",
                                      in.line));
        continue;
      }
      if (in.opcode == "tcgen05") {
        liftTcgen05(e, i);
        continue;
      }
      bool signalsMbarrier = false;
      for (const std::string &mod : in.modifiers)
        signalsMbarrier |= mod.find("mbarrier") != std::string::npos;
      if (signalsMbarrier || in.opcode == "tcgen05" ||
          (in.opcode == "cp" && c.cls == InstrClass::CpAsync && in.hasModifier("mbarrier"))) {
        notLifted(in.loc, fmt::format("'{}' at line {} is not lifted", in.fullName(), in.line));
        continue;
      }
      if (in.opcode == "call") {
        notLifted(in.loc, fmt::format("the call at line {} is not followed", in.line));
        continue;
      }
      // Anything else naming shared memory that is an access (a bulk copy
      // without an mbarrier, a reduction): not lifted, said.
      static const std::set<std::string> notAccesses = {
          "fence", "cvta", "mapa", "isspacep", "prefetch", "prefetchu", "membar", "bar", "barrier"};
      bool shared = false;
      for (const std::string &mod : in.modifiers)
        shared |= mod.rfind("shared", 0) == 0;
      if (shared && !notAccesses.count(in.opcode) &&
          !(in.opcode == "cp" && in.hasModifier("tensor")))
        out_.memoryNotLifted.push_back(
            {in.loc, fmt::format("line {}: '{}' touches shared memory and is not lifted", in.line,
                                 in.fullName())});
    }
  }

  // A tcgen05 instruction (LiftTcgen05.h).
  void liftTcgen05(SyncEvent &e, size_t i) {
    const Instruction &in = f_.instructions[i];
    Tcgen05Form form = tcgen05Form(in);
    int allocs = 0;
    for (const Instruction &x : f_.instructions)
      allocs += x.opcode == "tcgen05" && !x.modifiers.empty() && x.modifiers[0] == "alloc";
    if (form.why.empty() && allocs > 1)
      form.why = fmt::format("'{}' at line {}: the kernel allocates tensor memory more than once, "
                             "which is not lifted",
                             in.fullName(), in.line);
    if (!form.why.empty()) {
      notLifted(in.loc, form.why);
      return;
    }
    e.kind = form.kind;
    e.call = form.call;
    e.what = form.kind == SyncKind::Tcgen05Alloc || form.kind == SyncKind::Tcgen05Dealloc
                 ? fmt::format("tcgen05.{}(tmem)", in.modifiers[0])
                 : "tcgen05." + in.modifiers[0];
    e.warpCollective = form.warpCollective;
    if (!place(e, i))
      return;
    if (form.barrier && !needBarrier(e, form.barrier, i))
      return;
    if (form.kind == SyncKind::Tcgen05Commit)
      e.amount = IntImm::make(1);
    if (form.columns && !(e.amount = value(*form.columns, i, "tensor-memory column count")))
      return;
    if (form.tmemWrite || form.tmemRead)
      e.accesses.push_back(tensorMemoryAccess(form));
    if (form.slot) { // the alloc writes the allocation's address to shared memory
      LiftedAccess slot = memory_.region(i, *form.slot, 4, true);
      for (MemoryAccess &a : slot.accesses)
        a.asyncProxy = false;
      attach(e, slot);
    }
    if (form.call == IntrinsicId::Tcgen05Mma) // its operands in shared memory
      attach(e, memory_.tcgen05Operands(i));
    push(e);
  }

  std::string tensorMapParam(const Operand &op, size_t i) {
    Expr map = values_.addressValue(op, i);
    if (map && map->kind == ExprKind::Var && as<Var>(map).name.rfind("&", 0) == 0)
      return values_.paramName(as<Var>(map).name.substr(1));
    return "";
  }

  bool boxesKnown() {
    if (!opt_.tmaBoxBytes.empty())
      return true;
    if (out_.txBytesKnown) {
      out_.txBytesKnown = false;
      out_.notLifted.push_back(
          {f_.loc, "transaction bytes: a TMA load's box is in its tensor map (a kernel "
                   "parameter), not in the PTX; expect_tx is not checked against the bytes "
                   "delivered (give --tma-box PARAM=BYTES)"});
    }
    return false;
  }

  const Module &m_;
  const Function &f_;
  LiftOptions opt_;
  Cfg cfg_;
  RegisterValues values_;
  SharedAccesses memory_;
  Lifted out_;
  int64_t threads_ = 0;
  std::vector<std::vector<CdEdge>> cd_;
  std::vector<std::vector<Expr>> exec_;
  std::vector<ThreadSet> roleExec_;
  std::vector<bool> blockLifted_;
  std::map<size_t, std::string> reasons_;
  std::vector<int> skLoop_;
  std::vector<Expr> skTrip_; // per skeleton loop: n of `for it in 0 .. max(1, n)`
  std::map<int, std::string> loopReason_;
  std::vector<Array> arrays_;
};

} // namespace

Lifted liftSynchronisation(const Module &m, const Function &kernel, const LiftOptions &options) {
  return Lifter(m, kernel, options).run();
}

} // namespace tilescope::ptx
