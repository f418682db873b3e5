// Loops of RegisterValues (Values.h): reachability inside an iteration,
// induction variables read outside their loop, and trip counts.
#include "ptx/Values.h"

#include <algorithm>

namespace tilescope::ptx {

// Whether `to` can run after `from` in the same iteration of L (a path in
// the loop that does not pass its header).
bool RegisterValues::reachableWithin(const Loop &L, int from, int to) const {
  std::vector<int> work{from};
  std::vector<bool> seen(cfg_.blocks.size(), false);
  while (!work.empty()) {
    int b = work.back();
    work.pop_back();
    for (int s : cfg_.blocks[size_t(b)].succ) {
      if (s == L.header || !L.contains(s) || seen[size_t(s)])
        continue;
      if (s == to)
        return true;
      seen[size_t(s)] = true;
      work.push_back(s);
    }
  }
  return false;
}

// Whether a read at `at`, outside the induction variable's loop, sees its
// initial definition: after it in its block, or in a block the definition's
// block dominates that the loop's header cannot reach.
bool RegisterValues::readsInit(const std::string &reg, int loop, size_t update, size_t at) const {
  const std::vector<size_t> &ds = definitions(reg);
  size_t initDef = ds[0] == update ? ds[1] : ds[0];
  int readBlock = cfg_.blockOf[at], initBlock = cfg_.blockOf[initDef];
  if (readBlock == initBlock)
    return at > initDef;
  if (!cfg_.dominates(initBlock, readBlock))
    return false;
  const Loop &L = cfg_.loops[size_t(loop)];
  std::vector<int> work{L.header};
  std::vector<bool> seen(cfg_.blocks.size(), false);
  seen[size_t(L.header)] = true;
  while (!work.empty()) {
    int b = work.back();
    work.pop_back();
    for (int s : cfg_.blocks[size_t(b)].succ) {
      if (s == readBlock)
        return false;
      if (!seen[size_t(s)]) {
        seen[size_t(s)] = true;
        work.push_back(s);
      }
    }
  }
  return true;
}

const Induction *RegisterValues::inductionOf(int loop) const {
  for (const Induction &ind : inductions_)
    if (ind.loop == loop)
      return &ind;
  return nullptr;
}

Expr RegisterValues::tripCount(int loop) {
  if (auto it = trips_.find(loop); it != trips_.end())
    return it->second;
  Expr result;
  const Loop &L = cfg_.loops[size_t(loop)];
  // The test is the latch's `@%p bra header`, or, where the latch only
  // jumps back (`bra.uni header`) and its one predecessor in the loop ends
  // in `@%p bra exit`, that branch: it leaves on %p and goes on otherwise
  // (nvcc's `setp.eq %p, c, n; @%p bra exit; bra.uni header`).
  int test = L.latches.size() == 1 ? L.latches.front() : -1;
  bool leavesOnGuard = false;
  if (test >= 0) {
    const BasicBlock &lb = cfg_.blocks[size_t(test)];
    const Instruction *jump = lb.last - lb.first == 1 ? &f_.instructions[lb.first] : nullptr;
    if (jump && jump->opcode == "bra" && jump->guard.empty() && lb.pred.size() == 1 &&
        L.contains(lb.pred[0])) {
      const BasicBlock &pb = cfg_.blocks[size_t(lb.pred[0])];
      bool exits = false;
      for (int succ : pb.succ)
        exits |= !L.contains(succ);
      // The branch leaves; it falls through into the latch.
      if (exits && pb.last > pb.first && pb.last == lb.first &&
          f_.instructions[pb.last - 1].opcode == "bra")
        test = lb.pred[0], leavesOnGuard = true;
    }
  }
  // The test must be the loop's only way out: an exit elsewhere (a break)
  // would end it early and n would only bound it. A block that only traps
  // (a timed-out flag wait, `@%p bra L; trap;`) ends the kernel, not the
  // loop: the count is that of every run that does not abort.
  auto traps = [&](int b) {
    const BasicBlock &bb = cfg_.blocks[size_t(b)];
    return bb.succ.empty() && bb.last > bb.first && f_.instructions[bb.last - 1].opcode == "trap";
  };
  bool onlyExit = test >= 0;
  for (int b : L.blocks)
    for (int succ : cfg_.blocks[size_t(b)].succ)
      if (!L.contains(succ) && b != test && !traps(succ))
        onlyExit = false;
  if (test >= 0 && onlyExit) {
    const BasicBlock &bb = cfg_.blocks[size_t(test)];
    size_t bi = bb.last - 1;
    const Instruction &br = f_.instructions[bi];
    Expr cond = br.opcode == "bra" && !br.guard.empty() && bb.last > bb.first
                    ? registerValue(br.guard, bi)
                    : nullptr;
    // The condition under which the loop goes on.
    if (cond && cond->kind == ExprKind::Binary && br.guardNegated != leavesOnGuard) {
      const auto &c = as<Binary>(cond);
      static const std::pair<BinaryOp, BinaryOp> kNot[] = {
          {BinaryOp::Lt, BinaryOp::Ge}, {BinaryOp::Le, BinaryOp::Gt}, {BinaryOp::Gt, BinaryOp::Le},
          {BinaryOp::Ge, BinaryOp::Lt}, {BinaryOp::Eq, BinaryOp::Ne}, {BinaryOp::Ne, BinaryOp::Eq}};
      Expr flipped;
      for (const auto &[op, opposite] : kNot)
        if (c.op == op)
          flipped = Binary::make(opposite, c.lhs, c.rhs);
      cond = flipped;
    }
    tripFromTest(loop, cond);
  }
  if (auto found = trips_.find(loop); found != trips_.end())
    result = found->second;
  if (!result && onlyExit == false)
    result = headerTripCount(loop);
  trips_[loop] = result;
  return result;
}

// The count of loop `loop` whose iterations go on while `cond` holds, read
// at the test after the counter's step; stored in trips_ when derived.
void RegisterValues::tripFromTest(int loop, Expr cond) {
  std::string it = iterationVar(loop);
  do {
    if (!cond || cond->kind != ExprKind::Binary)
      break;
    const auto &b = as<Binary>(cond);
    // The counter after its step (one of the loop's induction variables),
    // on either side: `c < bound`, `bound > c`, `c != bound`, `bound != c`.
    const Induction *iv = nullptr;
    Expr bound;
    bool ne = b.op == BinaryOp::Ne;
    for (const Induction &ind : inductions_) {
      // A counter stepped down is read only against `!=` (nvcc's unrolled
      // `add %r29, %r29, -4; setp.ne %p3, %r29, 0`).
      if (ind.loop != loop || !ind.init || ind.step == 0 || (ind.step < 0 && !ne))
        continue;
      Expr expected =
          add(ind.init, mul(IntImm::make(ind.step), add(Var::make(it), IntImm::make(1))));
      if (!expected)
        continue;
      // `c <= B` is `c < B + 1`.
      Expr one = IntImm::make(1);
      if ((b.op == BinaryOp::Lt || ne) && equal(expected, b.lhs))
        bound = b.rhs, iv = &ind;
      else if ((b.op == BinaryOp::Gt || ne) && equal(expected, b.rhs))
        bound = b.lhs, iv = &ind;
      else if (b.op == BinaryOp::Le && equal(expected, b.lhs))
        bound = add(b.rhs, one), iv = &ind;
      else if (b.op == BinaryOp::Ge && equal(expected, b.rhs))
        bound = add(b.lhs, one), iv = &ind;
      if (iv)
        break;
      // The counter before its step (nvcc's rotated latch: `add %r1502,
      // %r10, 1; setp.lt %p, %r10, n`): `init + step * it < n` continues
      // exactly when `init + step * (it + 1) < n + step` does.
      Expr before = add(ind.init, mul(IntImm::make(ind.step), Var::make(it)));
      if (!before)
        continue;
      if ((b.op == BinaryOp::Lt || ne) && equal(before, b.lhs))
        bound = add(b.rhs, IntImm::make(ind.step)), iv = &ind;
      else if ((b.op == BinaryOp::Gt || ne) && equal(before, b.rhs))
        bound = add(b.lhs, IntImm::make(ind.step)), iv = &ind;
      else if (b.op == BinaryOp::Le && equal(before, b.lhs))
        bound = add(b.rhs, IntImm::make(ind.step + 1)), iv = &ind;
      else if (b.op == BinaryOp::Ge && equal(before, b.rhs))
        bound = add(b.lhs, IntImm::make(ind.step + 1)), iv = &ind;
      if (iv)
        break;
    }
    if (!bound)
      break;
    std::vector<std::string> vars;
    freeVars(bound, vars);
    freeVars(iv->init, vars);
    if (std::find(vars.begin(), vars.end(), it) != vars.end())
      break;
    // The distance the counter covers, in the direction of its step.
    int64_t size = iv->step > 0 ? iv->step : -iv->step;
    Expr gap = iv->step > 0 ? sub(bound, iv->init) : sub(iv->init, bound);
    Expr n = gap;
    if (size != 1) {
      if (ne)
        n = div(n, IntImm::make(size));
      else
        n = div(add(n, IntImm::make(size - 1)), IntImm::make(size));
    }
    if (ne) {
      // `!=` ends the loop only when the counter meets the bound exactly:
      // the bound must be ahead of the counter by a positive multiple of the
      // step when the loop is entered, else the counter runs past it (and
      // wraps). The lifting proves this before it uses n (entryCondition).
      // (Comparisons built unfolded: a constant gap stays a condition.)
      Expr ahead = Binary::make(BinaryOp::Ge, gap, IntImm::make(size));
      if (size != 1)
        ahead = Binary::make(BinaryOp::And, ahead,
                             Binary::make(BinaryOp::Eq, mod(gap, IntImm::make(size)),
                                          IntImm::make(0)));
      entryConditions_[loop] = ahead;
    }
    trips_[loop] = n;
  } while (false);
}

// A loop tested at its header (nvcc enters some loops by a jump to the
// test: `bra.uni L6` ... `L6: setp.gt.s32 %p4, %r1534, %r4; @%p4 bra
// exit`, the counter stepped in the latch that falls into the header): the
// header holds only the test and the branch, which is the loop's only way
// out; the body runs while the counter, read at the header (this
// iteration's value), satisfies the test: n = max(0, (B - init + step - 1)
// / step) times for `c < B`, and may run no time at all (topTested).
Expr RegisterValues::headerTripCount(int loop) {
  const Loop &L = cfg_.loops[size_t(loop)];
  const BasicBlock &hb = cfg_.blocks[size_t(L.header)];
  if (hb.last <= hb.first || hb.succ.size() != 2)
    return nullptr;
  for (int b : L.blocks)
    for (int succ : cfg_.blocks[size_t(b)].succ)
      if (!L.contains(succ) && b != L.header)
        return nullptr;
  // Only the test and the values it reads (no event: the header runs once
  // more than the body).
  for (size_t k = hb.first; k + 1 < hb.last; ++k) {
    static const char *pure[] = {"setp", "add", "sub", "mov", "mul", "mad", "shl", "shr",
                                 "and", "or",   "max", "min", "selp", "cvt"};
    const Instruction &in = f_.instructions[k];
    if (std::none_of(std::begin(pure), std::end(pure),
                     [&](const char *p) { return in.opcode == p; }) ||
        in.operands.empty() || in.operands[0].kind != Operand::Register)
      return nullptr;
  }
  size_t bi = hb.last - 1;
  const Instruction &br = f_.instructions[bi];
  if (br.opcode != "bra" || br.guard.empty())
    return nullptr;
  bool targetOut = !L.contains(hb.succ[0]), fallOut = !L.contains(hb.succ[1]);
  if (targetOut == fallOut)
    return nullptr;
  Expr cond = registerValue(br.guard, bi);
  if (!cond || cond->kind != ExprKind::Binary)
    return nullptr;
  // The branch leaves when its guard holds (target outside) or fails
  // (fall-through outside), after `!`.
  bool exitWhenTrue = targetOut != br.guardNegated;
  const auto &b = as<Binary>(cond);
  std::string it = iterationVar(loop);
  for (const Induction &ind : inductions_) {
    if (ind.loop != loop || !ind.init || ind.step <= 0)
      continue;
    Expr c = add(ind.init, mul(IntImm::make(ind.step), Var::make(it)));
    if (!c)
      continue;
    // The condition to go on as `c < B`.
    Expr bound;
    bool cLeft = equal(c, b.lhs), cRight = equal(c, b.rhs);
    if (!cLeft && !cRight)
      continue;
    Expr other = cLeft ? b.rhs : b.lhs;
    BinaryOp op = b.op;
    if (cRight) { // b < c is c > b
      static const std::pair<BinaryOp, BinaryOp> flip[] = {{BinaryOp::Lt, BinaryOp::Gt},
                                                           {BinaryOp::Gt, BinaryOp::Lt},
                                                           {BinaryOp::Le, BinaryOp::Ge},
                                                           {BinaryOp::Ge, BinaryOp::Le}};
      bool found = false;
      for (const auto &[from, to] : flip)
        if (op == from && !found)
          op = to, found = true;
      if (!found)
        continue;
    }
    // Going on is the condition's negation when the branch leaves on it.
    if (exitWhenTrue) {
      static const std::pair<BinaryOp, BinaryOp> negate[] = {{BinaryOp::Lt, BinaryOp::Ge},
                                                             {BinaryOp::Ge, BinaryOp::Lt},
                                                             {BinaryOp::Gt, BinaryOp::Le},
                                                             {BinaryOp::Le, BinaryOp::Gt}};
      bool found = false;
      for (const auto &[from, to] : negate)
        if (op == from && !found)
          op = to, found = true;
      if (!found)
        continue;
    }
    if (op == BinaryOp::Lt)
      bound = other;
    else if (op == BinaryOp::Le)
      bound = add(other, IntImm::make(1));
    else
      continue; // c > B or c >= B with a positive step: not a count
    std::vector<std::string> vars;
    freeVars(bound, vars);
    freeVars(ind.init, vars);
    if (std::find(vars.begin(), vars.end(), it) != vars.end())
      continue;
    Expr n = sub(bound, ind.init);
    if (ind.step != 1)
      n = div(add(n, IntImm::make(ind.step - 1)), IntImm::make(ind.step));
    topTested_.insert(loop);
    return Call::make("max", {IntImm::make(0), n});
  }
  return nullptr;
}

} // namespace tilescope::ptx
