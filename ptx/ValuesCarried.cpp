// Registers carried across loop iterations in Triton's pipeline forms
// (Values.h, Carried): a ring index that wraps and a phase toggled when it
// wraps.
//
//   add.s32   x, c, 1          c: the ring index, entering the loop at init
//   setp.gt.s32 p, x, S - 1    (or setp.ge x, S / setp.eq x, S)
//   selp.b32  c, 0, x, p       c = c + 1 > S - 1 ? 0 : c + 1
//   selp.b32  w, 1, 0, p
//   xor.b32   ph, ph, w        ph: the phase, entering at 0 or 1
//
// Updated once on every iteration it (from 0), c is (init + 1 + it) % S after
// its update (for init in [-1, S - 1]) and (init + it) % S before it (for
// init in [0, S - 1]); it wrapped (init + 1 + it) / S times by the end of
// iteration it, so ph is (ph0 + (init + 1 + it) / S) % 2 after its update and
// (ph0 + (init + it) / S) % 2 before it. A read before the loop sees the
// constant it enters with. Anything else is not derived.
#include "ptx/Values.h"

#include <algorithm>

namespace tilescope::ptx {
namespace {

const Instruction *single(const Function &f, const std::vector<size_t> &defs) {
  if (defs.size() != 1 || !f.instructions[defs[0]].guard.empty())
    return nullptr;
  return &f.instructions[defs[0]];
}

bool isReg(const Operand &o, const std::string &name) {
  return o.kind == Operand::Register && (name.empty() || o.name == name);
}
bool isImm(const Operand &o, int64_t v) {
  return o.kind == Operand::Immediate && o.value == v;
}

} // namespace

int RegisterValues::updatedWhenRead(int loop, size_t update, size_t at) const {
  const Loop &L = cfg_.loops[size_t(loop)];
  int readBlock = cfg_.blockOf[at], stepBlock = cfg_.blockOf[update];
  if (!L.contains(readBlock) || !L.contains(stepBlock))
    return -1;
  bool after = readBlock == stepBlock ? at > update : cfg_.dominates(stepBlock, readBlock);
  bool before = readBlock == stepBlock ? at <= update : !reachableWithin(L, stepBlock, readBlock);
  if (after == before)
    return -1;
  return after ? 1 : 0;
}

void RegisterValues::findCarried() {
  // The update (inside a real loop, unguarded, on every iteration) and the
  // constant the register enters with (a `mov` outside the loop that
  // dominates its header).
  auto shape = [&](const std::string &reg, size_t &update, int &loop, int64_t &init) {
    const std::vector<size_t> &ds = definitions(reg);
    if (ds.size() != 2)
      return false;
    for (int k = 0; k < 2; ++k) {
      size_t u = ds[size_t(k)], i = ds[size_t(1 - k)];
      int l = cfg_.realLoopOf(u);
      if (l < 0 || !f_.instructions[u].guard.empty())
        continue;
      const Loop &L = cfg_.loops[size_t(l)];
      const Instruction &in = f_.instructions[i];
      if (L.contains(cfg_.blockOf[i]) || !cfg_.dominates(cfg_.blockOf[i], L.header) ||
          in.opcode != "mov" || !in.guard.empty() || in.operands.size() != 2 ||
          in.operands[1].kind != Operand::Immediate || L.latches.empty())
        continue;
      bool every = true;
      for (int latch : L.latches)
        every &= cfg_.dominates(cfg_.blockOf[u], latch);
      if (!every)
        continue;
      update = u, loop = l, init = in.operands[1].value;
      return true;
    }
    return false;
  };
  // Wrap counters first: the toggles name them.
  std::map<std::string, std::string> wrapPredicate; // counter -> its p
  for (const auto &[reg, ds] : defs_) {
    Carried c;
    c.reg = reg;
    if (!shape(reg, c.update, c.loop, c.init))
      continue;
    const Instruction &sel = f_.instructions[c.update];
    if (sel.opcode != "selp" || sel.operands.size() != 4 || !isImm(sel.operands[1], 0) ||
        !isReg(sel.operands[2], "") || !isReg(sel.operands[3], ""))
      continue;
    const Instruction *x = single(f_, definitions(sel.operands[2].name));
    const Instruction *p = single(f_, definitions(sel.operands[3].name));
    if (!x || !p || x->opcode != "add" || x->operands.size() != 3 || !isReg(x->operands[1], reg) ||
        !isImm(x->operands[2], 1) || p->opcode != "setp" || p->operands.size() != 3 ||
        !isReg(p->operands[1], sel.operands[2].name) || p->operands[2].kind != Operand::Immediate ||
        p->modifiers.empty())
      continue;
    // x and p of this iteration: defined in the loop, before the update.
    size_t xAt = definitions(sel.operands[2].name)[0], pAt = definitions(sel.operands[3].name)[0];
    if (updatedWhenRead(c.loop, xAt, c.update) != 1 || updatedWhenRead(c.loop, pAt, c.update) != 1)
      continue;
    int64_t k = p->operands[2].value;
    const std::string &cmp = p->modifiers[0];
    c.stages = cmp == "gt" ? k + 1 : (cmp == "ge" || cmp == "eq") ? k : 0;
    if (c.stages < 1 || c.stages > (int64_t(1) << 20) || c.init < -1 || c.init > c.stages - 1)
      continue;
    wrapPredicate[reg] = sel.operands[3].name;
    carriedOf_[reg] = carried_.size();
    carried_.push_back(c);
  }
  size_t counters = carried_.size();
  for (const auto &[reg, ds] : defs_) {
    Carried t;
    t.reg = reg;
    if (carriedOf_.count(reg) || !shape(reg, t.update, t.loop, t.init) ||
        (t.init != 0 && t.init != 1))
      continue;
    const Instruction &x = f_.instructions[t.update];
    if (x.opcode != "xor" || x.operands.size() != 3 || x.hasModifier("pred"))
      continue;
    const Operand *w = isReg(x.operands[1], reg)   ? &x.operands[2]
                       : isReg(x.operands[2], reg) ? &x.operands[1]
                                                   : nullptr;
    if (!w || !isReg(*w, ""))
      continue;
    const Instruction *sel = single(f_, definitions(w->name));
    if (!sel || sel->opcode != "selp" || sel->operands.size() != 4 || !isImm(sel->operands[1], 1) ||
        !isImm(sel->operands[2], 0) || !isReg(sel->operands[3], ""))
      continue;
    // The predicate of a wrap counter of this loop, computed in this
    // iteration before the toggle reads it.
    size_t wAt = definitions(w->name)[0];
    if (updatedWhenRead(t.loop, wAt, t.update) != 1)
      continue;
    const std::string &pred = sel->operands[3].name;
    const std::vector<size_t> &pd = definitions(pred);
    for (size_t k = 0; k < counters; ++k) {
      const Carried &c = carried_[k];
      if (c.loop != t.loop || wrapPredicate[c.reg] != pred || pd.size() != 1 ||
          updatedWhenRead(t.loop, pd[0], t.update) != 1)
        continue;
      t.counter = c.reg;
      t.stages = c.stages;
      carriedOf_[reg] = carried_.size();
      carried_.push_back(t);
      break;
    }
  }
}

Expr RegisterValues::carriedValue(const Carried &c, size_t at, int fuel) const {
  if (fuel <= 0)
    return nullptr;
  const Loop &L = cfg_.loops[size_t(c.loop)];
  if (!L.contains(cfg_.blockOf[at]))
    return readsInit(c.reg, c.loop, c.update, at) ? IntImm::make(c.init) : nullptr;
  int updated = updatedWhenRead(c.loop, c.update, at);
  const Carried *counter = c.counter.empty() ? &c : &carried_[carriedOf_.at(c.counter)];
  if (updated < 0 || (updated == 0 && counter->init < 0))
    return nullptr;
  // Updates so far, counted from the ring's position before the loop.
  Expr n = simplify(Binary::make(BinaryOp::Add, Var::make(iterationVar(c.loop)),
                                 IntImm::make(counter->init + updated)));
  Expr s = IntImm::make(c.stages);
  if (c.counter.empty())
    return simplify(Binary::make(BinaryOp::Mod, n, s));
  Expr wraps = simplify(Binary::make(BinaryOp::Div, n, s));
  return simplify(Binary::make(BinaryOp::Mod,
                               simplify(Binary::make(BinaryOp::Add, wraps, IntImm::make(c.init))),
                               IntImm::make(2)));
}

} // namespace tilescope::ptx
