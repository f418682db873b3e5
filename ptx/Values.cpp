// Symbolic register values (Values.h).
#include "ptx/Values.h"

#include "ptx/Classify.h"

#include <algorithm>

namespace tilescope::ptx {

namespace {

constexpr int kFuel = 48; // definition chains followed at most this deep

std::optional<int64_t> constOf(const Expr &e) {
  return e ? constantValue(e) : std::nullopt;
}

Expr bin(BinaryOp op, Expr a, Expr b) {
  if (!a || !b)
    return nullptr;
  return simplify(Binary::make(op, std::move(a), std::move(b)));
}

bool isPowerOfTwo(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}
int log2Of(int64_t v) {
  int k = 0;
  while ((int64_t(1) << k) < v)
    ++k;
  return k;
}

} // namespace

Expr simplify(const Expr &e) {
  if (!e || e->kind != ExprKind::Binary)
    return e;
  const auto &b = as<Binary>(e);
  auto x = constOf(b.lhs), y = constOf(b.rhs);
  if (x && y)
    if (auto v = foldIntBinary(b.op, *x, *y))
      return IntImm::make(*v);
  if (b.op == BinaryOp::Add) {
    if (x && *x == 0)
      return b.rhs;
    if (y && *y == 0)
      return b.lhs;
    // (e + c1) + c2 -> e + (c1 + c2)
    if (y && b.lhs->kind == ExprKind::Binary) {
      const auto &l = as<Binary>(b.lhs);
      if (l.op == BinaryOp::Add)
        if (auto c1 = constOf(l.rhs))
          return simplify(Binary::make(BinaryOp::Add, l.lhs, IntImm::make(*c1 + *y)));
    }
    if (x) // constants to the right
      return simplify(Binary::make(BinaryOp::Add, b.rhs, b.lhs));
  }
  if (b.op == BinaryOp::Sub && y)
    return simplify(Binary::make(BinaryOp::Add, b.lhs, IntImm::make(-*y)));
  // x - x / d * d = x % d (x non-negative)
  if (b.op == BinaryOp::Sub && b.rhs->kind == ExprKind::Binary) {
    const auto &m = as<Binary>(b.rhs);
    if (m.op == BinaryOp::Mul && m.lhs->kind == ExprKind::Binary) {
      const auto &d = as<Binary>(m.lhs);
      auto k = constOf(m.rhs);
      if (d.op == BinaryOp::Div && k && constOf(d.rhs) == k && equal(d.lhs, b.lhs))
        return Binary::make(BinaryOp::Mod, b.lhs, m.rhs);
    }
  }
  if (b.op == BinaryOp::Mul) {
    if ((x && *x == 0) || (y && *y == 0))
      return IntImm::make(0);
    if (x && *x == 1)
      return b.rhs;
    if (y && *y == 1)
      return b.lhs;
    if (x)
      return Binary::make(BinaryOp::Mul, b.rhs, b.lhs);
  }
  if (b.op == BinaryOp::Div && y && *y == 1)
    return b.lhs;
  if (b.op == BinaryOp::Mod && y && *y == 1)
    return IntImm::make(0);
  // (x % a) % b: x % a when a <= b, x % b when b divides a.
  if (b.op == BinaryOp::Mod && y && *y > 0 && b.lhs->kind == ExprKind::Binary &&
      as<Binary>(b.lhs).op == BinaryOp::Mod)
    if (auto a = constOf(as<Binary>(b.lhs).rhs); a && *a > 0) {
      if (*a <= *y)
        return b.lhs;
      if (*a % *y == 0)
        return simplify(Binary::make(BinaryOp::Mod, as<Binary>(b.lhs).lhs, b.rhs));
    }
  // (v * c + k) % m = ((v + k / c) % (m / c)) * c when c divides m and k.
  if (b.op == BinaryOp::Mod && y && *y > 0 && b.lhs->kind == ExprKind::Binary &&
      as<Binary>(b.lhs).op == BinaryOp::Add) {
    const auto &s = as<Binary>(b.lhs);
    auto k = constOf(s.rhs);
    if (k && *k >= 0 && s.lhs->kind == ExprKind::Binary && as<Binary>(s.lhs).op == BinaryOp::Mul) {
      const auto &m = as<Binary>(s.lhs);
      auto c = constOf(m.rhs);
      if (c && *c > 0 && *y % *c == 0 && *k % *c == 0)
        return simplify(Binary::make(
            BinaryOp::Mul,
            simplify(Binary::make(
                BinaryOp::Mod, simplify(Binary::make(BinaryOp::Add, m.lhs, IntImm::make(*k / *c))),
                IntImm::make(*y / *c))),
            m.rhs));
    }
  }
  // (v * c) % m: (v % (m / c)) * c when c divides m; 0 when m divides c.
  if (b.op == BinaryOp::Mod && y && *y > 0 && b.lhs->kind == ExprKind::Binary) {
    const auto &l = as<Binary>(b.lhs);
    auto c = constOf(l.rhs);
    if (l.op == BinaryOp::Mul && c && *c > 0) {
      if (*c % *y == 0)
        return IntImm::make(0);
      if (*y % *c == 0)
        return simplify(Binary::make(
            BinaryOp::Mul, simplify(Binary::make(BinaryOp::Mod, l.lhs, IntImm::make(*y / *c))),
            l.rhs));
    }
  }
  return e;
}

Expr add(Expr a, Expr b) {
  return bin(BinaryOp::Add, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  return bin(BinaryOp::Sub, std::move(a), std::move(b));
}
Expr mul(Expr a, Expr b) {
  return bin(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr div(Expr a, Expr b) {
  return bin(BinaryOp::Div, std::move(a), std::move(b));
}
Expr mod(Expr a, Expr b) {
  return bin(BinaryOp::Mod, std::move(a), std::move(b));
}

void freeVars(const Expr &e, std::vector<std::string> &out) {
  if (!e)
    return;
  switch (e->kind) {
  case ExprKind::Var:
    if (std::find(out.begin(), out.end(), as<Var>(e).name) == out.end())
      out.push_back(as<Var>(e).name);
    return;
  case ExprKind::Unary:
    freeVars(as<Unary>(e).operand, out);
    return;
  case ExprKind::Binary:
    freeVars(as<Binary>(e).lhs, out);
    freeVars(as<Binary>(e).rhs, out);
    return;
  default:
    return;
  }
}

bool RegisterValues::writesFirstOperand(const Instruction &in) {
  if (in.operands.empty())
    return false;
  const std::string &op = in.opcode;
  if (op == "st" || op == "bar" || op == "barrier" || op == "bra" || op == "ret" || op == "exit" ||
      op == "fence" || op == "membar" || op == "red" || op == "prefetch" || op == "prefetchu" ||
      op == "setmaxnreg" || op == "cp" || op == "trap" || op == "call" || op == "stmatrix" ||
      op == "griddepcontrol" || op == "discard" || op == "applypriority" || op == "pmevent" ||
      op == "brx")
    return false;
  if (op == "wgmma")
    return !in.modifiers.empty() && in.modifiers[0] == "mma_async";
  if (op == "tcgen05")
    return !in.modifiers.empty() && in.modifiers[0] == "ld";
  if (op == "mbarrier")
    return in.hasModifier("arrive") || in.hasModifier("try_wait") || in.hasModifier("test_wait") ||
           in.hasModifier("arrive_drop") || in.hasModifier("pending_count");
  const Operand &d = in.operands[0];
  return d.kind == Operand::Register || d.kind == Operand::Vector || d.kind == Operand::Pair ||
         d.kind == Operand::Sink;
}

// Whether `copy` is `mov copy, reg` (its one definition, unguarded) in the
// header of L before every other write of `reg` in L, and `step` (the one
// in-loop write of `reg`) comes after it: nvcc's rotated latch
// `mov %r10, %r1502` at the header, `add.s32 %r1502, %r10, 1` at the latch,
// where %r10 is the counter of this iteration.
bool RegisterValues::headerCopyOf(const std::string &copy, const std::string &reg, const Loop &L,
                                  size_t step) const {
  auto d = defs_.find(copy);
  if (d == defs_.end() || d->second.size() != 1)
    return false;
  size_t at = d->second[0];
  const Instruction &mv = f_.instructions[at];
  if (mv.opcode != "mov" || !mv.guard.empty() || mv.operands.size() != 2 ||
      mv.operands[1].kind != Operand::Register || mv.operands[1].name != reg ||
      cfg_.blockOf[at] != L.header)
    return false;
  return cfg_.blockOf[step] != L.header || step > at;
}

std::optional<int64_t> RegisterValues::strengthReducedStep(const std::string &reg, const Loop &L,
                                                          size_t step) const {
  const Instruction &mad = f_.instructions[step];
  if (mad.opcode != "mad" || !mad.hasModifier("lo") || mad.operands.size() != 4 ||
      mad.operands[1].kind != Operand::Register || mad.operands[1].name != reg ||
      mad.operands[2].kind != Operand::Immediate || mad.operands[3].kind != Operand::Register)
    return std::nullopt;
  // The one definition of `name`, unguarded, in L and run before the step in
  // the same iteration.
  auto before = [&](const std::string &name) -> const Instruction * {
    auto d = defs_.find(name);
    if (d == defs_.end() || d->second.size() != 1)
      return nullptr;
    size_t at = d->second[0];
    int block = cfg_.blockOf[at], stepBlock = cfg_.blockOf[step];
    const Instruction &in = f_.instructions[at];
    bool first = block == stepBlock ? at < step : cfg_.dominates(block, stepBlock);
    return L.contains(block) && first && in.guard.empty() && in.operands.size() == 3 ? &in
                                                                                       : nullptr;
  };
  const Instruction *t = before(mad.operands[3].name);
  if (!t || (t->opcode != "or" && t->opcode != "add") ||
      t->operands[1].kind != Operand::Register || t->operands[2].kind != Operand::Immediate)
    return std::nullopt;
  int64_t c = t->operands[2].value;
  const Instruction *u = before(t->operands[1].name);
  if (!u || u->operands[1].kind != Operand::Register || u->operands[1].name != reg ||
      u->operands[2].kind != Operand::Immediate)
    return std::nullopt;
  int64_t m = 0;
  if (u->opcode == "shl" && u->operands[2].value >= 0 && u->operands[2].value < 31)
    m = int64_t(1) << u->operands[2].value;
  else if (u->opcode == "mul" && u->hasModifier("lo"))
    m = u->operands[2].value;
  // `or` adds only where c is below the shift's zero bits.
  if (m <= 0 || (t->opcode == "or" && (u->opcode != "shl" || c < 0 || c >= m)))
    return std::nullopt;
  if (mad.operands[2].value + m != 1 || c == 0)
    return std::nullopt;
  return c;
}

RegisterValues::RegisterValues(const Function &f, const Cfg &cfg) : f_(f), cfg_(cfg) {
  for (size_t i = 0; i < f.instructions.size(); ++i) {
    const Instruction &in = f.instructions[i];
    if (!writesFirstOperand(in))
      continue;
    const Operand &d = in.operands[0];
    if (d.kind == Operand::Register)
      defs_[d.name].push_back(i);
    else if (d.kind == Operand::Pair) {
      defs_[d.name].push_back(i);
      defs_[d.second].push_back(i);
    } else if (d.kind == Operand::Vector)
      for (const Operand &e : d.elements)
        if (e.kind == Operand::Register)
          defs_[e.name].push_back(i);
  }
  // Induction variables: one definition outside loop L, one `add r, r, c`
  // (unguarded) inside it.
  for (const auto &[reg, ds] : defs_) {
    if (ds.size() != 2)
      continue;
    for (int k = 0; k < 2; ++k) {
      size_t initDef = ds[size_t(k)], stepDef = ds[size_t(1 - k)];
      const Instruction &s = f.instructions[stepDef];
      int loop = cfg.realLoopOf(stepDef);
      bool set = s.opcode == "mov" && s.operands.size() == 2;
      bool mad = s.opcode == "mad" && s.operands.size() == 4;
      if (loop < 0 || !s.guard.empty() ||
          (!set && !mad && ((s.opcode != "add" && s.opcode != "sub") || s.operands.size() != 3)))
        continue;
      const Loop &L = cfg.loops[size_t(loop)];
      if (L.contains(cfg.blockOf[initDef]) || !cfg.dominates(cfg.blockOf[initDef], L.header))
        continue;
      std::optional<int64_t> reduced = mad ? strengthReducedStep(reg, L, stepDef) : std::nullopt;
      if (mad && !reduced)
        continue;
      const Operand &a = s.operands[1], &b = s.operands[set ? 1 : 2];
      if (!set && !mad && !(a.kind == Operand::Register && b.kind == Operand::Immediate))
        continue;
      if (!set && !mad && a.name != reg && !headerCopyOf(a.name, reg, L, stepDef))
        continue;
      // The step must run on every iteration: its block dominates each latch.
      bool everyIteration = !L.latches.empty();
      for (int latch : L.latches)
        everyIteration &= cfg.dominates(cfg.blockOf[stepDef], latch);
      if (!everyIteration)
        continue;
      Induction ind;
      ind.reg = reg;
      ind.loop = loop;
      ind.step = mad ? *reduced : s.opcode == "add" ? b.value : -b.value;
      ind.twoValued = set; // its step is known once init is
      ind.update = stepDef;
      inductionOf_[reg] = inductions_.size();
      inductions_.push_back(ind);
      break;
    }
  }
  findCarried();
  // One counter's initial value may read another's (gemm_naive's `sub %r29,
  // %r11, %r31` before the loop that counts %r31 down): passes until no
  // initial value is newly derived, the cache cleared between them.
  for (bool more = true; more;) {
    more = false;
    memo_.clear();
    for (Induction &ind : inductions_) {
      if (ind.init)
        continue;
      const std::vector<size_t> &ds = defs_[ind.reg];
      size_t initDef = ds[0] == ind.update ? ds[1] : ds[0];
      ind.init = evalDefinition(initDef, kFuel);
      more |= bool(ind.init);
    }
  }
  memo_.clear();
  confirmTwoValued();
}

// A counter set to a constant K in its loop (Induction::twoValued) enters
// at a constant c0 and is `c0 + (K - c0) * it` for it in {0, 1}: kept only
// when the loop's latch then gives a constant count of at most two, each
// iteration's exit decided on a value read before the set (evalRegister
// refuses the others). Otherwise it is no induction, and every value
// derived while it was one is forgotten.
void RegisterValues::confirmTwoValued() {
  auto isConstant = [](const Expr &e) { return e && e->kind == ExprKind::IntImm; };
  bool any = false;
  for (Induction &ind : inductions_) {
    if (!ind.twoValued)
      continue;
    any = true;
    Expr target = evalDefinition(ind.update, kFuel);
    if (isConstant(ind.init) && isConstant(target))
      ind.step = as<IntImm>(target).value - as<IntImm>(ind.init).value;
    else
      ind.init = nullptr; // no value from it
  }
  if (!any)
    return;
  // Values cached while the steps were not known are recomputed.
  memo_.clear();
  for (Induction &ind : inductions_) {
    if (!ind.twoValued || !ind.init)
      continue;
    Expr n = ind.step > 0 ? tripCount(ind.loop) : nullptr;
    if (!isConstant(n) || as<IntImm>(n).value > 2 || topTested(ind.loop))
      ind.init = nullptr;
  }
  std::vector<Induction> kept;
  for (const Induction &ind : inductions_)
    if (!ind.twoValued || ind.init)
      kept.push_back(ind);
  inductions_ = std::move(kept);
  inductionOf_.clear();
  for (size_t k = 0; k < inductions_.size(); ++k)
    inductionOf_[inductions_[k].reg] = k;
  memo_.clear();
  trips_.clear();
  entryConditions_.clear();
  topTested_.clear();
}

const std::vector<size_t> &RegisterValues::definitions(const std::string &reg) const {
  static const std::vector<size_t> none;
  auto it = defs_.find(reg);
  return it == defs_.end() ? none : it->second;
}

std::string RegisterValues::paramName(const std::string &symbol) const {
  if (symbol.size() > f_.name.size() + 1 && symbol.compare(0, f_.name.size(), f_.name) == 0 &&
      symbol[f_.name.size()] == '_')
    return symbol.substr(f_.name.size() + 1);
  return symbol;
}


Expr RegisterValues::entryCondition(int loop) const {
  auto it = entryConditions_.find(loop);
  return it == entryConditions_.end() ? nullptr : it->second;
}

Expr RegisterValues::registerValue(const std::string &reg, size_t at) const {
  return evalRegister(reg, at, kFuel);
}

Expr RegisterValues::operandValue(const Operand &op, size_t at) const {
  return eval(op, at, kFuel);
}

Expr RegisterValues::addressValue(const Operand &mem, size_t at) const {
  if (mem.kind != Operand::Memory)
    return nullptr;
  Expr base;
  if (mem.name.empty())
    base = IntImm::make(0);
  else if (mem.baseIsRegister() || !definitions(mem.name).empty())
    base = evalRegister(mem.name, at, kFuel);
  else
    base = Var::make("&" + mem.name);
  return add(base, IntImm::make(mem.value));
}

Expr RegisterValues::eval(const Operand &op, size_t at, int fuel) const {
  switch (op.kind) {
  case Operand::Immediate:
    return IntImm::make(op.value);
  case Operand::Register:
    return evalRegister(op.name, at, fuel);
  case Operand::Symbol:
    return add(Var::make("&" + op.name), IntImm::make(op.value));
  default:
    return nullptr;
  }
}

Expr RegisterValues::evalRegister(const std::string &reg, size_t at, int fuel) const {
  if (fuel <= 0)
    return nullptr;
  if (reg == "%tid.x")
    return Builtin::make(BuiltinKind::threadIdx_x);
  if (reg == "%ctaid.x")
    return Builtin::make(BuiltinKind::blockIdx_x);
  if (reg == "%ctaid.y")
    return Builtin::make(BuiltinKind::blockIdx_y);
  if (reg == "%ctaid.z")
    return Builtin::make(BuiltinKind::blockIdx_z);
  if (reg == "%laneid")
    return Builtin::make(BuiltinKind::laneid);
  if (reg == "%tid.y" || reg == "%tid.z")
    return IntImm::make(0); // a one-dimensional block is checked by the caller
  auto ind = inductionOf_.find(reg);
  if (ind != inductionOf_.end()) {
    const Induction &iv = inductions_[ind->second];
    const Loop &L = cfg_.loops[size_t(iv.loop)];
    if (!iv.init)
      return nullptr;
    if (!L.contains(cfg_.blockOf[at]) && readsInit(iv.reg, iv.loop, iv.update, at))
      return iv.init; // before the loop: the value it enters with
    if (!L.contains(cfg_.blockOf[at])) {
      if (iv.twoValued)
        return nullptr; // the set is not `init + step * n`
      // After the loop (its header dominates the read): the last value.
      auto trip = trips_.find(iv.loop);
      if (trip == trips_.end() || !trip->second || !cfg_.dominates(L.header, cfg_.blockOf[at]))
        return nullptr;
      // Its header's value after the last iteration: max(1, n) steps for a
      // loop tested at its latch, n (already max(0, ..)) for one tested at
      // its header.
      Expr n = topTested_.count(iv.loop) ? trip->second
                                         : Call::make("max", {IntImm::make(1), trip->second});
      return add(iv.init, mul(IntImm::make(iv.step), n));
    }
    Expr it = Var::make(iterationVar(iv.loop));
    // Read where the step has not run yet in this iteration (the read's
    // block dominates the step's, the read first in a shared block): this
    // iteration's value; where it has (the step's block dominates the
    // read's): the next one; otherwise not derived.
    int readBlock = cfg_.blockOf[at], stepBlock = cfg_.blockOf[iv.update];
    bool after = readBlock == stepBlock ? at > iv.update : cfg_.dominates(stepBlock, readBlock);
    bool before =
        readBlock == stepBlock ? at <= iv.update : !reachableWithin(L, stepBlock, readBlock);
    if ((!before && !after) || (after && iv.twoValued))
      return nullptr;
    if (after)
      it = add(it, IntImm::make(1));
    return add(iv.init, mul(IntImm::make(iv.step), it));
  }
  if (auto c = carriedOf_.find(reg); c != carriedOf_.end())
    return carriedValue(carried_[c->second], at, fuel);
  auto it = defs_.find(reg);
  if (it == defs_.end())
    return nullptr;
  size_t def = it->second[0];
  if (it->second.size() == 1) {
    // elect.sync r|P, 0xffffffff in a converged warp: P holds on lane 0.
    const Instruction &in = f_.instructions[def];
    if (in.opcode == "elect" && in.guard.empty() && in.operands.size() == 2 &&
        in.operands[0].kind == Operand::Pair && in.operands[0].second == reg &&
        in.operands[1].kind == Operand::Immediate && uint32_t(in.operands[1].value) == 0xffffffffu)
      return Binary::make(BinaryOp::Eq, Builtin::make(BuiltinKind::laneid), IntImm::make(0));
  }
  if (it->second.size() != 1) {
    // A register written more than once: the definition before `at` in the
    // same block, if there is one.
    int block = cfg_.blockOf[at];
    std::optional<size_t> local;
    for (size_t d : it->second)
      if (d < at && cfg_.blockOf[d] == block && (!local || d > *local))
        local = d;
    if (!local || !f_.instructions[*local].guard.empty())
      return nullptr;
    return evalDefinition(*local, fuel - 1);
  }
  Expr v = evalDefinition(def, fuel - 1);
  if (!v)
    return nullptr;
  // A definition inside a loop read outside it: the last iteration's value.
  int defLoop = cfg_.realLoopOf(def);
  if (defLoop >= 0 && !cfg_.loops[size_t(defLoop)].contains(cfg_.blockOf[at])) {
    std::vector<std::string> vars;
    freeVars(v, vars);
    for (const std::string &name : vars)
      if (name.rfind("it", 0) == 0)
        return nullptr;
  }
  return v;
}

// mul.hi x, m then a shift: (x * m) >> s, read as x / d when m = ceil(2^s / d)
// is exact for every x below 2^31 (the error m * d - 2^s at most 2^(s - 31)).
Expr RegisterValues::magicDivision(const Instruction &m, size_t at, int s, int fuel) const {
  if (!m.guard.empty() || m.operands.size() != 3 || m.operands[2].kind != Operand::Immediate ||
      s < 32 || s > 62)
    return nullptr;
  uint64_t magic = uint64_t(uint32_t(m.operands[2].value));
  if (magic < 2)
    return nullptr;
  uint64_t two = uint64_t(1) << s;
  uint64_t d = (two + magic / 2) / magic;
  if (d < 2 || (two + d - 1) / d != magic || magic * d - two > (uint64_t(1) << (s - 31)))
    return nullptr;
  return bin(BinaryOp::Div, eval(m.operands[1], at, fuel), IntImm::make(int64_t(d)));
}

namespace {

constexpr uint64_t kAll32 = 0xffffffffu;

// The smallest all-ones mask at or above v.
uint64_t smear(uint64_t v) {
  uint64_t m = 0;
  while (m < v)
    m = (m << 1) | 1;
  return m;
}

// The bits a 32-bit sum may have, of operands that may have bits a and b
// (ca, cb: an operand's value where it is an immediate).
uint64_t sumBits(uint64_t a, uint64_t b, std::optional<int64_t> ca, std::optional<int64_t> cb) {
  // Disjoint: an or. Else below the larger sum, and the trailing zero
  // bits both have stay clear.
  uint64_t low = std::min(a & (~a + 1), b & (~b + 1));
  uint64_t r = (a & b) == 0 ? (a | b) : smear(a + b) & ~(low - 1);
  // A constant's bits below the other operand's trailing zeros pass
  // through unchanged: (sym + 65536 * s) + 65568 keeps bit 5 alone.
  for (int k = 1; k <= 2 && (a & b) != 0; ++k) {
    std::optional<int64_t> c = k == 1 ? ca : cb;
    uint64_t other = k == 1 ? b : a;
    if (!c || *c < 0 || other == 0)
      continue;
    uint64_t below = (other & (~other + 1)) - 1, v = uint64_t(*c);
    r = (smear(other + (v & ~below)) & ~below) | (v & below);
  }
  // A negative constant (x - 16384 after x << 8): the trailing zero bits
  // both have stay clear in 32-bit arithmetic; any bit above may be set.
  for (int k = 1; k <= 2; ++k) {
    std::optional<int64_t> c = k == 1 ? ca : cb;
    uint64_t other = k == 1 ? b : a;
    if (!c || *c >= 0 || other == 0)
      continue;
    uint64_t v = uint64_t(*c) & kAll32;
    uint64_t low2 = std::min(other & (~other + 1), v & (~v + 1));
    r = kAll32 & ~(low2 - 1);
  }
  return r;
}

// The bits a 32-bit product of an operand that may have bits a and the
// constant c may have: below the product of the bounds, and a multiple of
// both factors' lowest possible bits, so those trailing zeros stay clear
// (s * 24576, a stage of 24 KiB, has bits 0-12 clear).
uint64_t productBits(uint64_t a, uint64_t c) {
  uint64_t low = (a & (~a + 1)) * (c & (~c + 1));
  return a == 0 || c == 0 ? 0 : smear(a * c) & ~(low - 1);
}

} // namespace

uint64_t RegisterValues::possibleBits(const Operand &op, size_t at, int fuel) const {
  constexpr uint64_t all = kAll32;
  if (op.kind == Operand::Immediate)
    return op.value >= 0 && op.value <= int64_t(all) ? uint64_t(op.value) : all;
  if (op.kind == Operand::Symbol) {
    auto a = align_.find(op.name);
    uint64_t align = a != align_.end() && a->second > 0 ? uint64_t(a->second) : 1;
    if (op.value != 0 || (align & (align - 1)) != 0)
      return all;
    return all & ~(align - 1);
  }
  if (op.kind != Operand::Register || fuel <= 0)
    return all;
  if (op.name == "%tid.x" || op.name == "%ntid.x")
    return 1023;
  if (op.name == "%laneid")
    return 31;
  if (op.name.rfind("%tid.", 0) == 0)
    return 1023;
  const std::vector<size_t> &defs = definitions(op.name);
  if (defs.size() != 1 || inductionOf_.count(op.name))
    return all;
  const Instruction &in = f_.instructions[defs[0]];
  if (!in.guard.empty() || hasFloatType(in) || in.operands.empty() || in.hasModifier("b64") ||
      in.hasModifier("u64") || in.hasModifier("s64"))
    return all; // the analysis is of 32-bit values
  auto bits = [&](size_t k) {
    return k < in.operands.size() ? possibleBits(in.operands[k], defs[0], fuel - 1) : all;
  };
  auto imm = [&](size_t k) -> std::optional<int64_t> {
    if (k < in.operands.size() && in.operands[k].kind == Operand::Immediate)
      return in.operands[k].value;
    return std::nullopt;
  };
  const std::string &o = in.opcode;
  uint64_t r = all;
  if ((o == "mov" || o == "cvt" || o == "cvta") && in.operands.size() == 2)
    r = bits(1);
  else if (o == "and" && in.operands.size() == 3 && !in.hasModifier("pred"))
    r = bits(1) & bits(2);
  else if ((o == "or" || o == "xor") && in.operands.size() == 3 && !in.hasModifier("pred"))
    r = bits(1) | bits(2);
  else if (o == "shl" && imm(2) && *imm(2) >= 0 && *imm(2) < 32)
    r = (bits(1) << *imm(2)) & all;
  else if (o == "shr" && imm(2) && *imm(2) >= 0 && *imm(2) < 32 && !in.hasModifier("s32"))
    r = bits(1) >> *imm(2);
  else if (o == "add" && in.operands.size() == 3)
    r = sumBits(bits(1), bits(2), imm(1), imm(2));
  else if (o == "mul" && in.hasModifier("lo") && imm(2) && *imm(2) >= 0)
    r = productBits(bits(1), uint64_t(*imm(2)));
  else if (o == "mad" && in.hasModifier("lo") && in.operands.size() == 4 && imm(2) &&
           *imm(2) >= 0)
    // A product by a constant plus an addend, as mul.lo then add (the
    // block-scaled GEMM's row offset `mad.lo.s32 %r, %r, 192, -12288`).
    r = sumBits(productBits(bits(1), uint64_t(*imm(2))), bits(3), std::nullopt, imm(3));
  return r & all; // 32-bit results: what passes bit 31 wraps away
}

uint64_t RegisterValues::operandBits(const Operand &op, size_t at) const {
  return possibleBits(op, at, kFuel);
}

Expr RegisterValues::evalDefinition(size_t def, int fuel) const {
  if (auto m = memo_.find(def); m != memo_.end())
    return m->second;
  const Instruction &in = f_.instructions[def];
  Expr result;
  auto operand = [&](size_t k) -> Expr {
    return k < in.operands.size() ? eval(in.operands[k], def, fuel) : nullptr;
  };
  auto immediate = [&](size_t k) -> std::optional<int64_t> {
    if (k < in.operands.size() && in.operands[k].kind == Operand::Immediate)
      return in.operands[k].value;
    return std::nullopt;
  };
  const std::string &op = in.opcode;
  bool is32 = in.hasModifier("u32") || in.hasModifier("s32") || in.hasModifier("b32");
  if (!in.guard.empty() || in.operands.empty() || in.operands[0].kind != Operand::Register) {
    result = nullptr;
  } else if (op == "mov" || op == "cvta" || op == "cvt") {
    if (in.operands.size() == 2 && !(op == "cvt" && hasFloatType(in)))
      result = operand(1);
  } else if (op == "selp" && in.operands.size() == 4 && !hasFloatType(in)) {
    // selp 1, 0, p = p; selp 0, 1, p = !p (a predicate read as 0 / 1)
    auto a = immediate(1), b = immediate(2);
    Expr p = operand(3);
    if (p && a == 1 && b == 0)
      result = p;
    else if (p && a == 0 && b == 1)
      result = Unary::make(UnaryOp::Not, p);
  } else if (op == "ld" && in.hasModifier("param") && in.operands.size() == 2 &&
             in.operands[1].kind == Operand::Memory && in.operands[1].value == 0 &&
             in.operands[1].elements.empty()) {
    result = Var::make(paramName(in.operands[1].name));
  } else if (op == "add" && !hasFloatType(in) && in.operands.size() == 3) {
    result = add(operand(1), operand(2));
  } else if (op == "sub" && !hasFloatType(in) && in.operands.size() == 3) {
    result = sub(operand(1), operand(2));
  } else if (op == "mul" && !hasFloatType(in) && in.operands.size() == 3 &&
             (in.hasModifier("lo") || in.hasModifier("wide"))) {
    result = mul(operand(1), operand(2));
  } else if (op == "mul" && in.hasModifier("hi") && !hasFloatType(in) && in.operands.size() == 3) {
    result = magicDivision(in, def, 32, fuel);
  } else if (op == "mad" && !hasFloatType(in) && in.operands.size() == 4 &&
             (in.hasModifier("lo") || in.hasModifier("wide"))) {
    result = add(mul(operand(1), operand(2)), operand(3));
  } else if (op == "shl" && in.operands.size() == 3) {
    if (auto k = immediate(2); k && *k >= 0 && *k < 31)
      result = mul(operand(1), IntImm::make(int64_t(1) << *k));
  } else if (op == "shr" && in.operands.size() == 3) {
    auto k = immediate(2);
    // A multiply-high by a magic constant then a shift: a division.
    const Operand &src = in.operands[1];
    if (k && src.kind == Operand::Register) {
      const std::vector<size_t> &sd = definitions(src.name);
      if (sd.size() == 1) {
        const Instruction &m = f_.instructions[sd[0]];
        if (m.opcode == "mul" && m.hasModifier("wide") && m.hasModifier("u32") &&
            m.operands.size() == 3 && m.operands[2].kind == Operand::Immediate && m.guard.empty()) {
          uint64_t magic = uint64_t(uint32_t(m.operands[2].value));
          int s = int(*k);
          if (s >= 32 && s < 64 && magic > 1) {
            uint64_t two = uint64_t(1) << s;
            uint64_t d = (two + magic / 2) / magic;
            // Exact for every 32-bit x when magic = ceil(2^s / d) and the
            // error magic * d - 2^s is at most 2^(s - 32).
            if (d > 1 && (two + d - 1) / d == magic && magic * d - two <= (uint64_t(1) << (s - 32)))
              result =
                  bin(BinaryOp::Div, eval(m.operands[1], sd[0], fuel), IntImm::make(int64_t(d)));
            memo_[def] = result;
            return result;
          }
        }
      }
    }
    const std::vector<size_t> &hd =
        src.kind == Operand::Register ? definitions(src.name) : std::vector<size_t>{};
    if (k && *k == 31 && (in.hasModifier("s32") || in.hasModifier("u32") || in.hasModifier("b32")))
      result = IntImm::make(0); // bit 31 of a value below 2^31
    else if (k && *k >= 0 && *k < 31 && hd.size() == 1 && f_.instructions[hd[0]].opcode == "mul" &&
             f_.instructions[hd[0]].hasModifier("hi"))
      result = magicDivision(f_.instructions[hd[0]], hd[0], 32 + int(*k), fuel);
    else if (k && *k >= 0 && *k < 31)
      result = bin(BinaryOp::Div, operand(1), IntImm::make(int64_t(1) << *k));
  } else if (op == "and" && in.operands.size() == 3 && !in.hasModifier("pred")) {
    auto mask = immediate(2);
    if (mask && is32)
      mask = int64_t(int32_t(*mask));
    // x & mask with mask < 2^a depends on x mod 2^a only: a negative constant
    // term of x (`(8 * it - 8) & 56`) is raised by a multiple of 2^a, so that
    // the reading as % below holds for the non-negative rest.
    auto nonNegative = [&](Expr x, int64_t modulus) -> Expr {
      if (!x || modulus <= 0 || x->kind != ExprKind::Binary || as<Binary>(x).op != BinaryOp::Add)
        return x;
      auto c = constOf(as<Binary>(x).rhs);
      if (!c || *c >= 0)
        return x;
      int64_t lift = ((-*c + modulus - 1) / modulus) * modulus;
      return add(as<Binary>(x).lhs, IntImm::make(*c + lift));
    };
    const Operand &src = in.operands[1];
    const std::vector<size_t> *sd =
        src.kind == Operand::Register ? &definitions(src.name) : nullptr;
    if (mask && *mask == 1 && sd && sd->size() == 1 && f_.instructions[(*sd)[0]].opcode == "not" &&
        f_.instructions[(*sd)[0]].guard.empty() && f_.instructions[(*sd)[0]].operands.size() == 2) {
      // (~x) & 1 = (x + 1) % 2
      result =
          bin(BinaryOp::Mod,
              add(eval(f_.instructions[(*sd)[0]].operands[1], (*sd)[0], fuel), IntImm::make(1)),
              IntImm::make(2));
    } else if (int64_t low = mask ? (*mask & -*mask) : 0;
               mask && *mask > 0 && low > 1 && isPowerOfTwo(*mask + low)) {
      // Contiguous bits [log2 low, log2 (mask + low)): x % (mask + low) - x % low.
      Expr x = nonNegative(operand(1), *mask + low);
      result = sub(bin(BinaryOp::Mod, x, IntImm::make(*mask + low)),
                   bin(BinaryOp::Mod, x, IntImm::make(low)));
    } else if (mask && isPowerOfTwo(*mask + 1))
      result = bin(BinaryOp::Mod, nonNegative(operand(1), *mask + 1), IntImm::make(*mask + 1));
    else if (mask && *mask < 0 && isPowerOfTwo(-*mask)) {
      Expr x = operand(1);
      result = mul(bin(BinaryOp::Div, x, IntImm::make(-*mask)), IntImm::make(-*mask));
    } else if (mask && *mask > 0 && *mask < (int64_t(1) << 31)) {
      // Runs of set bits [lo, hi), at most four: the sum of x % 2^hi - x % 2^lo.
      Expr x = operand(1);
      Expr sum = IntImm::make(0);
      int runs = 0;
      for (int bit = 0; bit < 31 && x;) {
        if (!((*mask >> bit) & 1)) {
          ++bit;
          continue;
        }
        int hi = bit;
        while (hi < 31 && ((*mask >> hi) & 1))
          ++hi;
        Expr high = bin(BinaryOp::Mod, x, IntImm::make(int64_t(1) << hi));
        sum =
            add(sum, bit == 0 ? high
                              : sub(high, bin(BinaryOp::Mod, x, IntImm::make(int64_t(1) << bit))));
        ++runs;
        bit = hi;
      }
      if (x && runs <= 4)
        result = sum;
    }
  } else if ((op == "or" || op == "xor") && in.operands.size() == 3 && !in.hasModifier("pred") &&
             (possibleBits(in.operands[1], def, fuel) & possibleBits(in.operands[2], def, fuel)) ==
                 0) {
    // No bit set in both: or and xor add (a swizzle whose bits are clear).
    result = add(operand(1), operand(2));
  } else if (op == "xor" && in.operands.size() == 3 && !in.hasModifier("pred")) {
    // x ^ 1 on a parity bit (e % 2): (e + 1) % 2.
    Expr x = operand(1);
    uint64_t both =
        possibleBits(in.operands[1], def, fuel) & possibleBits(in.operands[2], def, fuel);
    if (immediate(2) == 1 && x && x->kind == ExprKind::Binary &&
        as<Binary>(x).op == BinaryOp::Mod && constOf(as<Binary>(x).rhs) == 2) {
      result = bin(BinaryOp::Mod, add(as<Binary>(x).lhs, IntImm::make(1)), IntImm::make(2));
    } else if (Expr y = operand(2); x && y && __builtin_popcountll(both) <= 3) {
      // A swizzle: on the bits k both may have, (x_k + y_k) % 2 in place of
      // x_k + y_k, with x_k = x / 2^k % 2; elsewhere an addition.
      result = add(x, y);
      for (int k = 0; k < 32; ++k) {
        if (!((both >> k) & 1))
          continue;
        Expr p = IntImm::make(int64_t(1) << k);
        Expr xk = bin(BinaryOp::Mod, bin(BinaryOp::Div, x, p), IntImm::make(2));
        Expr yk = bin(BinaryOp::Mod, bin(BinaryOp::Div, y, p), IntImm::make(2));
        result = add(sub(result, mul(add(xk, yk), p)),
                     mul(bin(BinaryOp::Mod, add(xk, yk), IntImm::make(2)), p));
      }
    }
  } else if ((op == "max" || op == "min") && !hasFloatType(in) && in.operands.size() == 3 &&
             !in.hasModifier("relu")) {
    // Integer max / min (nvcc's `max.s32 n, x, 1` before a loop that runs
    // at least once): the same call the trip counts use.
    Expr a = operand(1), b = operand(2);
    if (a && b)
      result = Call::make(op, {a, b});
  } else if (op == "div" && !hasFloatType(in) && in.operands.size() == 3) {
    result = bin(BinaryOp::Div, operand(1), operand(2));
  } else if (op == "rem" && !hasFloatType(in) && in.operands.size() == 3) {
    result = bin(BinaryOp::Mod, operand(1), operand(2));
  } else if (op == "setp" && in.operands.size() == 3 && !hasFloatType(in) &&
             in.modifiers.size() == 2) {
    static const std::pair<const char *, BinaryOp> cmps[] = {
        {"eq", BinaryOp::Eq}, {"ne", BinaryOp::Ne}, {"lt", BinaryOp::Lt}, {"le", BinaryOp::Le},
        {"gt", BinaryOp::Gt}, {"ge", BinaryOp::Ge}, {"lo", BinaryOp::Lt}, {"ls", BinaryOp::Le},
        {"hi", BinaryOp::Gt}, {"hs", BinaryOp::Ge}};
    for (const auto &[name, cmp] : cmps)
      if (in.modifiers[0] == name)
        result = bin(cmp, operand(1), operand(2));
  } else if ((op == "and" || op == "or") && in.hasModifier("pred") && in.operands.size() == 3) {
    result = bin(op == "and" ? BinaryOp::And : BinaryOp::Or, operand(1), operand(2));
  } else if (op == "not" && in.hasModifier("pred") && in.operands.size() == 2) {
    Expr x = operand(1);
    result = x ? Unary::make(UnaryOp::Not, x) : nullptr;
  }
  (void)log2Of;
  memo_[def] = result;
  return result;
}

} // namespace tilescope::ptx
