// The facts of the condensed form (Condense.h); printing is in
// CondensePrint.cpp.
#include "ptx/Condense.h"

#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ptx/Cfg.h"
#include "ptx/Values.h"
#include "sync/BarrierSkeleton.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

namespace tilescope::ptx {
namespace {

std::string show(const Expr &e) {
  return e ? print(e) : std::string("?");
}

// Threads per CTA from .reqntid / .maxntid (x only, y = z = 1); 0 when absent.
int64_t launchThreads(const Function &f) {
  for (const auto &[name, value] : f.performanceDirectives)
    if (name == "reqntid" || name == "maxntid") {
      int64_t x = 1, y = 1, z = 1;
      std::sscanf(value.c_str(), "%ld, %ld, %ld", &x, &y, &z);
      return x * y * z;
    }
  return 0;
}

// Evaluates `e` with the given variable values; nothing when another leaf.
std::optional<int64_t> evalWith(const Expr &e, const std::map<std::string, int64_t> &vars,
                                std::optional<int64_t> tid = std::nullopt) {
  if (!e)
    return std::nullopt;
  return evalConcrete(e, [&](const Expr &leaf) -> std::optional<int64_t> {
    if (leaf->kind == ExprKind::Var) {
      auto it = vars.find(as<Var>(leaf).name);
      if (it != vars.end())
        return it->second;
      return std::nullopt;
    }
    if (leaf->kind == ExprKind::Builtin && tid) {
      switch (as<Builtin>(leaf).which) {
      case BuiltinKind::threadIdx_x:
        return *tid;
      case BuiltinKind::laneid:
        return laneOf(*tid);
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  });
}

bool mentionsThread(const Expr &e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::Builtin) {
    BuiltinKind b = as<Builtin>(e).which;
    return b == BuiltinKind::threadIdx_x || b == BuiltinKind::laneid;
  }
  if (e->kind == ExprKind::Unary)
    return mentionsThread(as<Unary>(e).operand);
  if (e->kind == ExprKind::Binary)
    return mentionsThread(as<Binary>(e).lhs) || mentionsThread(as<Binary>(e).rhs);
  return false;
}

std::optional<PtxasFigures> parsePtxas(const std::string &log, const std::string &kernel) {
  if (log.empty())
    return std::nullopt;
  std::istringstream in(log);
  std::string line;
  bool inKernel = false;
  PtxasFigures p;
  bool any = false;
  std::smatch m;
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex bars(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex stack(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry)) {
      inKernel = m[1] == kernel;
      continue;
    }
    if (!inKernel)
      continue;
    if (std::regex_search(line, m, stack)) {
      p.stackFrame = std::stoll(m[1]);
      p.spillStores = std::stoll(m[2]);
      p.spillLoads = std::stoll(m[3]);
      any = true;
    }
    if (std::regex_search(line, m, used)) {
      p.registers = std::stoll(m[1]);
      any = true;
      if (std::regex_search(line, m, bars))
        p.barriers = std::stoll(m[1]);
      if (std::regex_search(line, m, smem))
        p.sharedBytes = std::stoll(m[1]);
    }
  }
  if (!any)
    return std::nullopt;
  return p;
}

struct Analysis {
  const Module &module;
  const Function &f;
  Cfg cfg;
  RegisterValues values;
  KernelSummary s;
  std::vector<int> summaryOf; // cfg loop -> index in s.loops (-1: spin wait)
  int64_t threads = 0;

  Analysis(const Module &m, const Function &fn)
      : module(m), f(fn), cfg(buildCfg(fn)), values(fn, cfg) {}

  int summaryLoop(size_t instr) const {
    int l = cfg.realLoopOf(instr);
    return l < 0 ? -1 : summaryOf[size_t(l)];
  }

  void declarations() {
    s.name = f.name;
    s.line = f.line;
    s.params = f.params;
    s.directives = f.performanceDirectives;
    auto shared = [&](const Declaration &d) {
      if (d.space != "shared")
        return;
      std::optional<int64_t> bytes = d.bytes();
      std::string what = d.name + ": ";
      if (d.external || (!d.dims.empty() && d.dims.back() < 0)) {
        s.dynamicShared = true;
        what += "extern, size set at launch (dynamic)";
      } else if (bytes) {
        s.staticShared += *bytes;
        what += std::to_string(*bytes) + " bytes";
      } else {
        what += "size unknown";
      }
      if (d.align)
        what += ", align " + std::to_string(d.align);
      s.sharedVariables.push_back(what);
    };
    // A module's shared variable belongs to the kernels that name it (one
    // `.extern .shared` of a module serves its tile kernel, not the device
    // runtime's kernels beside it).
    std::function<bool(const Operand &, const std::string &)> names =
        [&](const Operand &o, const std::string &v) {
          if ((o.kind == Operand::Symbol || o.kind == Operand::Memory) && o.name == v)
            return true;
          for (const Operand &e : o.elements)
            if (names(e, v))
              return true;
          return false;
        };
    for (const Declaration &d : module.globals) {
      bool used = d.space != "shared";
      for (size_t i = 0; i < f.instructions.size() && !used; ++i)
        for (const Operand &o : f.instructions[i].operands)
          used = used || names(o, d.name);
      if (used)
        shared(d);
    }
    for (const Declaration &d : f.decls) {
      shared(d);
      if (d.space == "reg") {
        s.registersByType[d.type] += d.count;
        s.registersDeclared += d.count;
      }
    }
  }

  void loops() {
    summaryOf.assign(cfg.loops.size(), -1);
    for (size_t l = 0; l < cfg.loops.size(); ++l) {
      const Loop &L = cfg.loops[l];
      if (L.spinWait)
        continue;
      LoopSummary ls;
      ls.id = int(s.loops.size());
      int p = L.parent;
      while (p >= 0 && cfg.loops[size_t(p)].spinWait)
        p = cfg.loops[size_t(p)].parent;
      ls.parent = p < 0 ? -1 : summaryOf[size_t(p)];
      ls.depth = ls.parent < 0 ? 1 : s.loops[size_t(ls.parent)].depth + 1;
      ls.firstLine = L.firstLine;
      ls.lastLine = L.lastLine;
      ls.headerLine = cfg.blocks[size_t(L.header)].line;
      summaryOf[l] = ls.id;
      tripCount(int(l), ls);
      s.loops.push_back(std::move(ls));
    }
    s.blocks = int64_t(cfg.blocks.size());
    s.instructions = int64_t(f.instructions.size());
    for (size_t i = 0; i < f.instructions.size(); ++i) {
      int l = summaryLoop(i);
      LoopSummary &ls = l < 0 ? s.outside : s.loops[size_t(l)];
      Classification c = classify(f.instructions[i]);
      ++ls.histogram[c.cls][c.key];
      ++ls.instructions;
      int inner = cfg.loopOf(i);
      if (inner >= 0 && cfg.loops[size_t(inner)].spinWait && c.cls == InstrClass::Mbarrier &&
          (f.instructions[i].hasModifier("try_wait") || f.instructions[i].hasModifier("test_wait")))
        ++ls.spinWaits;
    }
    for (const std::string &n : cfg.notes)
      s.notes.push_back(n);
  }

  // Why a latch's counter is no induction variable, where the reason is a
  // step by a register (a grid-stride loop's `add %rd150, %rd150, %rd117`
  // with %rd117 = %ntid.x): the count depends on a launch value.
  void steppedByRegister(const Loop &L, LoopSummary &ls) {
    for (int latch : L.latches) {
      const BasicBlock &bb = cfg.blocks[size_t(latch)];
      if (bb.last - bb.first < 2)
        continue;
      const Instruction &br = f.instructions[bb.last - 1], &cmp = f.instructions[bb.last - 2];
      if (br.opcode != "bra" || cmp.opcode != "setp" || cmp.operands.size() < 3 ||
          cmp.operands[0].name != br.guard)
        continue;
      for (size_t k = 1; k < 3; ++k) {
        const std::string &r = cmp.operands[k].name;
        if (cmp.operands[k].kind != Operand::Register)
          continue;
        for (size_t d : values.definitions(r)) {
          const Instruction &in = f.instructions[d];
          if (L.contains(cfg.blockOf[d]) && in.opcode == "add" && in.operands.size() == 3 &&
              in.operands[1].name == r && in.operands[2].kind == Operand::Register) {
            ls.inductionVar = r;
            Expr by = values.registerValue(in.operands[2].name, d);
            ls.trip = "unknown: counter " + r + " steps by " + in.operands[2].name +
                      (by ? " = " + show(by) : "") + ", not a constant";
            return;
          }
        }
      }
    }
  }

  // A loop rotated by the compiler: the latch ends in `@%p bra header` with
  // %p comparing the induction variable, after its step, with a bound.
  void tripCount(int l, LoopSummary &ls) {
    const Loop &L = cfg.loops[size_t(l)];
    ls.trip = "unknown: no induction variable with a visible bound";
    const Induction *iv = nullptr;
    for (const Induction &ind : values.inductions())
      if (ind.loop == l)
        iv = &ind;
    if (!iv) {
      steppedByRegister(L, ls);
      return;
    }
    ls.inductionVar = iv->reg;
    // Tested at its header: the count of the body, which may be zero.
    if (Expr n = values.tripCount(l); n && values.topTested(l)) {
      ls.trip = show(n) + " (tested at the header)";
      if (auto k = evalWith(n, {}))
        ls.tripConstant = *k;
      return;
    }
    // A count from the test (RegisterValues::tripCount), entered do-while
    // style; a `!=` test holds where the loop is entered with its bound
    // ahead of the counter (ptx check proves it; this only says it).
    auto counted = [&](const Expr &n) {
      ls.trip = "max(1, " + show(n) + ")";
      if (Expr need = values.entryCondition(l); need && !constantValue(n))
        ls.trip += " if " + show(need) + " on entry";
      if (auto k = constantValue(n))
        ls.tripConstant = std::max<int64_t>(1, *k);
    };
    for (int latch : L.latches) {
      const BasicBlock &bb = cfg.blocks[size_t(latch)];
      if (bb.last == bb.first)
        continue;
      // A latch that only jumps back: the test is in the block before it.
      if (bb.last - bb.first == 1 && f.instructions[bb.first].guard.empty()) {
        if (Expr n = values.tripCount(l)) {
          counted(n);
          return;
        }
        continue;
      }
      size_t bi = bb.last - 1;
      const Instruction &br = f.instructions[bi];
      if (br.opcode != "bra" || br.guard.empty())
        continue;
      Expr cond = values.registerValue(br.guard, bi);
      if (!cond)
        continue;
      if (br.guardNegated)
        cond = Unary::make(UnaryOp::Not, cond);
      std::string it = RegisterValues::iterationVar(l);
      std::vector<std::string> vars;
      freeVars(cond, vars);
      bool onlyIt = vars.size() == 1 && vars[0] == it;
      if (std::find(vars.begin(), vars.end(), it) == vars.end())
        continue;
      if (onlyIt) {
        for (int64_t k = 0; k < (int64_t(1) << 20); ++k) {
          auto v = evalWith(cond, {{it, k}});
          if (!v)
            break;
          if (*v == 0) {
            ls.tripConstant = k + 1;
            ls.trip = std::to_string(k + 1);
            return;
          }
        }
      }
      if (Expr n = values.tripCount(l)) {
        counted(n);
        return;
      }
      ls.trip = "while " + show(cond) + " after iteration " + it + " (from 0)";
      return;
    }
  }

  void pipeline() {
    Pipeline &p = s.pipeline;
    threads = launchThreads(f);
    std::optional<int64_t> prevOffset;
    std::string prevBase;
    std::set<std::string> namedSeen;
    for (size_t i = 0; i < f.instructions.size(); ++i) {
      const Instruction &in = f.instructions[i];
      Classification c = classify(in);
      if (c.cls == InstrClass::Mbarrier && in.hasModifier("init") && in.operands.size() >= 2) {
        ++p.mbarrierCount;
        Expr addr = values.addressValue(in.operands[0], i);
        Expr count = values.operandValue(in.operands[1], i);
        std::string countText = count ? show(count) : in.operands[1].text;
        // Split the address into a base and a constant offset.
        std::string base = show(addr);
        std::optional<int64_t> offset;
        if (addr && addr->kind == ExprKind::Binary && as<Binary>(addr).op == BinaryOp::Add) {
          if (auto k = constantValue(as<Binary>(addr).rhs)) {
            offset = *k;
            base = show(as<Binary>(addr).lhs);
          }
        }
        if (!p.mbarriers.empty() && offset && prevOffset && base == prevBase &&
            *offset == *prevOffset + 8 && p.mbarriers.back().count == countText) {
          ++p.mbarriers.back().size;
        } else {
          MbarrierGroup g;
          g.base = show(addr);
          g.size = 1;
          g.count = countText;
          g.line = in.line;
          p.mbarriers.push_back(g);
        }
        prevOffset = offset;
        prevBase = base;
        continue;
      }
      if (c.cls == InstrClass::Mbarrier &&
          (in.hasModifier("try_wait") || in.hasModifier("test_wait")) && in.operands.size() >= 2) {
        WaitSite w;
        w.line = in.line;
        w.loop = summaryLoop(i);
        Expr addr = values.addressValue(in.operands[1], i);
        w.barrier = show(addr);
        if (in.hasModifier("parity") && in.operands.size() >= 3)
          w.parity = show(values.operandValue(in.operands[2], i));
        else
          w.parity = "phase state";
        int real = cfg.realLoopOf(i);
        if (real >= 0 && addr) {
          std::string it = RegisterValues::iterationVar(real);
          std::set<int64_t> seen;
          for (int64_t k = 0; k < 256; ++k)
            if (auto v = evalWith(addr, {{it, k}}, std::nullopt); v)
              seen.insert(*v);
          // Addresses are relative to symbols: substitute 0 for them.
          if (seen.empty()) {
            std::vector<std::string> vars;
            freeVars(addr, vars);
            std::map<std::string, int64_t> env;
            bool ok = true;
            for (const std::string &v : vars) {
              if (v == it)
                continue;
              if (v.rfind("&", 0) == 0)
                env[v] = 0;
              else
                ok = false;
            }
            for (int64_t k = 0; ok && k < 256; ++k) {
              env[it] = k;
              if (auto v = evalWith(addr, env))
                seen.insert(*v);
            }
          }
          w.distinctBarriers = int64_t(seen.size());
          if (w.distinctBarriers > 1 && (!p.stages || w.distinctBarriers > *p.stages)) {
            p.stages = w.distinctBarriers;
            p.stagesHow = fmt::format("the wait at line {} cycles through {} mbarriers", in.line,
                                      w.distinctBarriers);
          }
        }
        p.waits.push_back(w);
        continue;
      }
      if (c.cls == InstrClass::Mbarrier && in.hasModifier("expect_tx") && !in.operands.empty()) {
        ExpectTx e;
        e.line = in.line;
        e.loop = summaryLoop(i);
        e.bytes = show(values.operandValue(in.operands.back(), i));
        p.expectTx.push_back(e);
        continue;
      }
      if (c.cls == InstrClass::TensorCoreSync && in.opcode == "wgmma") {
        if (in.hasModifier("commit_group"))
          ++p.wgmmaCommits;
        if (in.hasModifier("wait_group") && !in.operands.empty() &&
            in.operands[0].kind == Operand::Immediate &&
            std::find(p.wgmmaWaitDepths.begin(), p.wgmmaWaitDepths.end(), in.operands[0].value) ==
                p.wgmmaWaitDepths.end())
          p.wgmmaWaitDepths.push_back(in.operands[0].value);
        continue;
      }
      if (c.cls == InstrClass::Setmaxnreg) {
        std::string v = in.operands.empty() ? "?" : in.operands[0].text;
        p.setmaxnreg.push_back(
            fmt::format("{} {} (line {})", in.hasModifier("inc") ? "inc" : "dec", v, in.line));
        continue;
      }
      if (c.cls == InstrClass::CtaBarrier) {
        std::string what = in.opcode + "." + (in.modifiers.empty() ? "" : in.modifiers[0]);
        if (in.hasModifier("warp")) { // bar.warp.sync: the lanes of the mask, not the CTA
          bool imm = !in.operands.empty() && in.operands[0].kind == Operand::Immediate;
          what = imm ? fmt::format("bar.warp.sync {:#x}", uint32_t(in.operands[0].value))
                     : "bar.warp.sync " + (in.operands.empty() ? "?" : in.operands[0].text);
          if (namedSeen.insert(what).second)
            p.namedBarriers.push_back(what + fmt::format(" (line {}, a warp's lanes)", in.line));
          continue;
        }
        for (size_t k = 0; k < in.operands.size(); ++k) {
          Expr v = values.operandValue(in.operands[k], i);
          what += (k ? ", " : " ") + (v ? show(v) : in.operands[k].text);
        }
        if (namedSeen.insert(what).second)
          p.namedBarriers.push_back(what + fmt::format(" (line {})", in.line));
        continue;
      }
      if (in.opcode == "bra" && !in.guard.empty() && threads > 0)
        roleBranch(i);
    }
    if (!p.stages && !p.mbarriers.empty()) {
      // The ring index is not derivable (a counter carried across loops):
      // the deepest group of mbarriers initialised alike, if it repeats.
      const MbarrierGroup *best = nullptr;
      for (const MbarrierGroup &g : p.mbarriers)
        if (g.size > 1 && (!best || g.size > best->size))
          best = &g;
      if (best) {
        p.stages = best->size;
        p.stagesHow = fmt::format("not derived from a wait: the largest group of consecutive "
                                  "mbarriers initialised alike (line {})",
                                  best->line);
      }
    }
    epilogue();
  }

  void roleBranch(size_t i) {
    const Instruction &br = f.instructions[i];
    Expr cond = values.registerValue(br.guard, i);
    if (!mentionsThread(cond))
      return;
    ThreadSet taken(threads);
    for (int64_t t = 0; t < threads; ++t) {
      auto v = evalWith(cond, {}, t);
      if (!v)
        return; // depends on more than the thread index
      if ((*v != 0) != br.guardNegated)
        taken.add(t);
    }
    int64_t n = taken.count();
    if (n == 0 || n == threads)
      return;
    RoleBranch r;
    r.line = br.line;
    r.condition = (br.guardNegated ? "!(" + show(cond) + ")" : show(cond));
    r.taken = taken.describe();
    if (taken.widened(128) == taken)
      r.granularity = "warpgroup";
    else if (taken.widened(32) == taken)
      r.granularity = "warp";
    else
      r.granularity = "thread";
    s.pipeline.roles.push_back(r);
  }

  void epilogue() {
    int64_t tmaStores = 0, sharedStores = 0, stmatrix = 0, atomics = 0;
    std::map<std::string, int64_t> globalStores;
    auto tmaStore = [](const Instruction &in, const Classification &c) {
      return c.cls == InstrClass::Tma && in.hasModifier("tensor") && in.modifiers.size() > 4 &&
             std::find(in.modifiers.begin(), in.modifiers.end(), "global") <
                 std::find_if(in.modifiers.begin(), in.modifiers.end(),
                              [](const std::string &m) { return m.rfind("shared", 0) == 0; });
    };
    // The staging is the shared stores of the code that issues the TMA
    // stores (outside loops, or the same loop's own body): the attention's
    // P written to shared memory for the next MMA is no epilogue.
    std::set<int> storing;
    for (size_t i = 0; i < f.instructions.size(); ++i)
      if (tmaStore(f.instructions[i], classify(f.instructions[i])))
        storing.insert(cfg.realLoopOf(i));
    for (size_t i = 0; i < f.instructions.size(); ++i) {
      const Instruction &in = f.instructions[i];
      Classification c = classify(in);
      bool staging = storing.count(cfg.realLoopOf(i)) > 0;
      if (tmaStore(in, c))
        ++tmaStores;
      else if (c.cls == InstrClass::GlobalStore || c.cls == InstrClass::GenericStore)
        ++globalStores[c.key];
      else if (c.cls == InstrClass::SharedStore)
        sharedStores += staging;
      else if (c.cls == InstrClass::Stmatrix)
        stmatrix += staging;
      else if (c.cls == InstrClass::Atomic)
        ++atomics;
    }
    std::string e;
    if (tmaStores)
      e = fmt::format("TMA store: {} cp.async.bulk.tensor stores from shared memory, staged by {} "
                      "st.shared and {} stmatrix",
                      tmaStores, sharedStores, stmatrix);
    for (const auto &[key, n] : globalStores)
      e += (e.empty() ? "" : "; ") + fmt::format("{} st.{}", n, key);
    if (atomics)
      e += (e.empty() ? "" : "; ") + fmt::format("{} atomics", atomics);
    s.pipeline.epilogue = e.empty() ? "no global writes visible" : e;
  }
};

} // namespace

KernelSummary condense(const Module &m, const Function &kernel, const std::string &ptxasLog) {
  Analysis a(m, kernel);
  a.declarations();
  a.loops();
  a.pipeline();
  a.s.ptxas = parsePtxas(ptxasLog, kernel.name);
  if (!ptxasLog.empty() && !a.s.ptxas)
    a.s.notes.push_back("the ptxas log has no figures for this kernel");
  if (a.threads == 0)
    a.s.notes.push_back("no .maxntid/.reqntid: threads per CTA unknown, role branches not "
                        "evaluated");
  return std::move(a.s);
}

} // namespace tilescope::ptx
