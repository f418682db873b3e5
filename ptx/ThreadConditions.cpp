// Thread conditions and post-dominators (ThreadConditions.h).
#include "ptx/ThreadConditions.h"

#include "ptx/Values.h"
#include "ir/ThreadIndex.h"

#include <algorithm>

namespace tilescope::ptx {

bool isTrue(const Expr &e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::BoolImm)
    return as<BoolImm>(e).value;
  auto v = constantValue(e);
  return v && *v != 0;
}
bool isFalse(const Expr &e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::BoolImm)
    return !as<BoolImm>(e).value;
  auto v = constantValue(e);
  return v && *v == 0;
}

Expr conj(const Expr &a, const Expr &b) {
  if (!a || !b || isFalse(a) || isFalse(b))
    return nullptr;
  if (isTrue(a))
    return b;
  if (isTrue(b))
    return a;
  return Binary::make(BinaryOp::And, a, b);
}
Expr disj(const Expr &a, const Expr &b) {
  if (!a)
    return b;
  if (!b)
    return a;
  if (isTrue(a) || isTrue(b))
    return BoolImm::make(true);
  if (equal(a, b))
    return a;
  return Binary::make(BinaryOp::Or, a, b);
}

// `e` with the thread index bound to `tid`, folded where the thread decides.
Expr bindThread(const Expr &e, int64_t tid, int fuel) {
  if (!e || fuel <= 0)
    return e;
  switch (e->kind) {
  case ExprKind::Builtin:
    switch (as<Builtin>(e).which) {
    case BuiltinKind::threadIdx_x:
      return IntImm::make(tid);
    case BuiltinKind::laneid:
      return IntImm::make(laneOf(tid));
    default:
      return e;
    }
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    Expr x = bindThread(u.operand, tid, fuel - 1);
    if (u.op == UnaryOp::Not && (isTrue(x) || isFalse(x)))
      return BoolImm::make(isFalse(x));
    return Unary::make(u.op, x);
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    Expr x = bindThread(b.lhs, tid, fuel - 1), y = bindThread(b.rhs, tid, fuel - 1);
    if (b.op == BinaryOp::And) {
      if (isFalse(x) || isFalse(y))
        return BoolImm::make(false);
      if (isTrue(x))
        return y;
      if (isTrue(y))
        return x;
    }
    if (b.op == BinaryOp::Or) {
      if (isTrue(x) || isTrue(y))
        return BoolImm::make(true);
      if (isFalse(x))
        return y;
      if (isFalse(y))
        return x;
    }
    auto cx = constantValue(x), cy = constantValue(y);
    if (cx && cy)
      if (auto v = foldIntBinary(b.op, *cx, *cy))
        return IntImm::make(*v);
    return simplify(Binary::make(b.op, x, y));
  }
  default:
    return e;
  }
}

// Post-dominators over the blocks plus a virtual exit (index n).
std::vector<int> postDominators(const Cfg &cfg, const std::vector<std::vector<int>> &succ) {
  size_t n = cfg.blocks.size();
  std::vector<std::vector<int>> rpred(n + 1); // successors in the reversed graph
  for (size_t b = 0; b < n; ++b)
    for (int s : succ[b])
      rpred[size_t(s)].push_back(int(b)); // reversed edge s -> b
  // Order: reverse post-order of the reversed graph from the exit.
  std::vector<int> order, idx(n + 1, -1);
  std::vector<bool> seen(n + 1, false);
  std::vector<std::pair<int, size_t>> stack{{int(n), 0}};
  seen[n] = true;
  while (!stack.empty()) {
    auto &[b, k] = stack.back();
    if (k < rpred[size_t(b)].size()) {
      int s = rpred[size_t(b)][k++];
      if (!seen[size_t(s)]) {
        seen[size_t(s)] = true;
        stack.push_back({s, 0});
      }
    } else {
      order.push_back(b);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    idx[size_t(order[i])] = int(i);
  std::vector<int> ipdom(n + 1, -1);
  ipdom[n] = int(n);
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (idx[size_t(a)] > idx[size_t(b)])
        a = ipdom[size_t(a)];
      while (idx[size_t(b)] > idx[size_t(a)])
        b = ipdom[size_t(b)];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < order.size(); ++i) {
      int b = order[i];
      int nd = -1;
      for (int s : succ[size_t(b)]) // predecessors in the reversed graph
        if (idx[size_t(s)] >= 0 && ipdom[size_t(s)] >= 0)
          nd = nd < 0 ? s : intersect(s, nd);
      if (nd >= 0 && ipdom[size_t(b)] != nd) {
        ipdom[size_t(b)] = nd;
        changed = true;
      }
    }
  }
  return ipdom;
}

std::vector<std::vector<CdEdge>> controlEdges(const Function &f, const Cfg &cfg) {
  std::vector<bool> exitsOn;
  std::vector<int> ipdom;
  std::vector<std::vector<CdEdge>> cd;
  size_t n = cfg.blocks.size();
  std::vector<std::vector<int>> succ(n);
  exitsOn.assign(n, false);
  for (size_t b = 0; b < n; ++b) {
    succ[b] = cfg.blocks[b].succ;
    const BasicBlock &bb = cfg.blocks[b];
    if (bb.last > bb.first) {
      const Instruction &in = f.instructions[bb.last - 1];
      if ((in.opcode == "ret" || in.opcode == "exit" || in.opcode == "trap"))
        succ[b].push_back(int(n)), exitsOn[b] = true;
    }
    if (succ[b].empty())
      succ[b].push_back(int(n));
  }
  ipdom = postDominators(cfg, succ);
  cd.assign(n, {});
  for (size_t x = 0; x < n; ++x) {
    if (succ[x].size() < 2)
      continue;
    const BasicBlock &bb = cfg.blocks[x];
    const Instruction &br = f.instructions[bb.last - 1];
    for (int y : succ[x]) {
      // Which way: the branch target (or the exit of `@p ret`) is taken.
      bool taken = exitsOn[x] ? (y == int(n))
                              : (y != int(x + 1) || (succ[x][0] == y && succ[x].size() == 1));
      if (br.opcode == "bra" && !br.operands.empty()) {
        int target = -1;
        for (size_t k = 0; k < n; ++k)
          if (cfg.blocks[k].label == br.operands[0].name)
            target = int(k);
        taken = y == target;
      }
      for (int r = y; r >= 0 && r != ipdom[x] && r != int(n); r = ipdom[size_t(r)]) {
        cd[size_t(r)].push_back({int(x), taken});
        if (ipdom[size_t(r)] == r)
          break;
      }
    }
  }
  return cd;
}

} // namespace tilescope::ptx
