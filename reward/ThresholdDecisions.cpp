#include "reward/ThresholdDecisions.h"
#include "reward/LoopMonotone.h"

#include "ir/ConcreteEval.h"
#include "ir/Dtype.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace tilescope::reward_detail {

bool isCta(BuiltinKind b) {
  return b == BuiltinKind::blockIdx_x || b == BuiltinKind::blockIdx_y ||
         b == BuiltinKind::blockIdx_z;
}

namespace {

// What a term reads: a shape symbol (or another name), any builtin,
// blockIdx, a thread builtin.
struct Reads {
  bool symbol = false, builtin = false, cta = false, thread = false;
};

// Whether `e` reads only shape symbols, blockIdx, literals (ints, bools)
// and, with `threads`, the thread builtins, through operators ConcreteEval
// and ProtoEncoder both know; `r` says what it read on the way.
bool termOnly(const Expr &e, const std::set<std::string> &symbols, bool threads, Reads &r) {
  switch (e->kind) {
  case ExprKind::IntImm:
  case ExprKind::BoolImm:
    return true;
  case ExprKind::Var:
    r.symbol = true;
    return symbols.count(as<Var>(e).name) != 0;
  case ExprKind::Builtin: {
    BuiltinKind b = as<Builtin>(e).which;
    r.builtin = true;
    r.cta |= isCta(b);
    r.thread |= isThreadBuiltin(b);
    return isCta(b) || (threads && isThreadBuiltin(b));
  }
  case ExprKind::Unary:
    return termOnly(as<Unary>(e).operand, symbols, threads, r);
  case ExprKind::Binary:
    return termOnly(as<Binary>(e).lhs, symbols, threads, r) &&
           termOnly(as<Binary>(e).rhs, symbols, threads, r);
  case ExprKind::Call: {
    const Call &c = as<Call>(e);
    if (!((c.callee == "min" || c.callee == "max") && c.args.size() == 2) &&
        !(c.callee == "select" && c.args.size() == 3))
      return false;
    for (const Expr &a : c.args)
      if (!termOnly(a, symbols, threads, r))
        return false;
    return true;
  }
  default:
    return false;
  }
}

// Whether `e` reads only shape symbols, blockIdx and literals; `reads` is
// set when it reads a symbol or a builtin at all, `cta` when a builtin.
bool sizeOnly(const Expr &e, const std::set<std::string> &symbols, bool &reads, bool &cta) {
  Reads r;
  bool only = termOnly(e, symbols, false, r);
  reads |= r.symbol || r.builtin;
  cta |= r.builtin;
  return only;
}

// Whether `e` reads only blockIdx, the thread builtins, shape symbols and
// literals: a thread's global index (`blockIdx.y * 16 + threadIdx.x / 16`,
// `blockIdx.x * N + threadIdx.x`). `cta` and `thread` are set when it
// reads blockIdx and a thread builtin.
bool indexOnly(const Expr &e, const std::set<std::string> &symbols, bool &cta, bool &thread) {
  Reads r;
  bool only = termOnly(e, symbols, true, r);
  cta |= r.cta;
  thread |= r.thread;
  return only;
}

Expr cmp(BinaryOp op, const Expr &a, const Expr &b, llvm::SMLoc loc) {
  return Binary::make(op, a, b, loc);
}


// Collects the decisions of a kernel body, lets substituted.
class Collector {
public:
  Collector(std::set<std::string> symbols, std::set<std::string> floatScalars,
            std::set<std::string> signedScalars)
      : symbols_(std::move(symbols)), floatScalars_(std::move(floatScalars)),
        signedScalars_(std::move(signedScalars)) {}
  std::vector<Decision> decisions;
  std::vector<FloatDecision> floatDecisions;

  void block(const Block &b, const Expr &path, std::map<std::string, Expr> env) {
    for (const Stmt &s : b)
      stmt(s, path, env);
  }

private:
  std::set<std::string> symbols_, floatScalars_, signedScalars_;
  std::set<std::string> seen_;
  bool inParity_ = false; // collecting a barrier wait's `parity =` argument
  Expr threadPath_;        // the enclosing ifs' conditions on thread indices

  // A literal (or its negation): its value.
  static std::optional<double> literalValue(const Expr &e) {
    if (e->kind == ExprKind::FloatImm)
      return as<FloatImm>(e).value;
    if (e->kind == ExprKind::IntImm)
      return double(as<IntImm>(e).value);
    if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Neg)
      if (std::optional<double> v = literalValue(as<Unary>(e).operand))
        return -*v;
    return std::nullopt;
  }
  // `e` as a * s + b for one float scalar s and literals a != 0, b: a
  // scalar, its negation, and sums, differences, products and quotients of
  // such a term with literals (`eps - 0.1`, `2 * scale + 1`).
  // Since session 25 the scalar may be multiplied or divided by a size
  // converted to float (`eps * f32(H)`, with nothing added before: the
  // factor then scales the scalar's coefficient alone).
  struct Affine {
    std::string scalar;
    double a = 1, b = 0;
    Expr factor;
    int power = 0;
  };
  // `f32(E)` (or another float conversion) of a size-only integer term
  // reading a shape symbol and no CTA index: E.
  Expr sizeFactor(const Expr &e) const {
    if (e->kind != ExprKind::Call)
      return nullptr;
    const Call &c = as<Call>(e);
    std::optional<Dtype> to = dtypeFromName(c.callee);
    if (c.args.size() != 1 || !to || !isFloat(*to))
      return nullptr;
    bool reads = false, cta = false;
    if (!sizeOnly(c.args[0], symbols_, reads, cta) || !reads || cta)
      return nullptr;
    return c.args[0];
  }
  std::optional<Affine> scaledBySize(const std::optional<Affine> &f, const Expr &size,
                                     int power) const {
    if (!f || f->power != 0 || f->b != 0 || !size)
      return std::nullopt;
    return Affine{f->scalar, f->a, 0, size, power};
  }
  std::optional<Affine> affine(const Expr &e) const {
    if (e->kind == ExprKind::Var && floatScalars_.count(as<Var>(e).name))
      return Affine{as<Var>(e).name, 1, 0, nullptr, 0};
    if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Neg) {
      std::optional<Affine> f = affine(as<Unary>(e).operand);
      if (f)
        f->a = -f->a, f->b = -f->b;
      return f;
    }
    if (e->kind != ExprKind::Binary)
      return std::nullopt;
    const Binary &b = as<Binary>(e);
    std::optional<Affine> l = affine(b.lhs), r = affine(b.rhs);
    std::optional<double> lc = literalValue(b.lhs), rc = literalValue(b.rhs);
    switch (b.op) {
    case BinaryOp::Add:
      if (l && rc)
        return Affine{l->scalar, l->a, l->b + *rc, l->factor, l->power};
      if (r && lc)
        return Affine{r->scalar, r->a, r->b + *lc, r->factor, r->power};
      return std::nullopt;
    case BinaryOp::Sub:
      if (l && rc)
        return Affine{l->scalar, l->a, l->b - *rc, l->factor, l->power};
      if (r && lc)
        return Affine{r->scalar, -r->a, *lc - r->b, r->factor, r->power};
      return std::nullopt;
    case BinaryOp::Mul:
      if (l && rc && *rc != 0)
        return Affine{l->scalar, l->a * *rc, l->b * *rc, l->factor, l->power};
      if (r && lc && *lc != 0)
        return Affine{r->scalar, r->a * *lc, r->b * *lc, r->factor, r->power};
      if (auto f = scaledBySize(l, sizeFactor(b.rhs), 1))
        return f;
      return scaledBySize(r, sizeFactor(b.lhs), 1);
    case BinaryOp::Div:
      if (l && rc && *rc != 0)
        return Affine{l->scalar, l->a / *rc, l->b / *rc, l->factor, l->power};
      return scaledBySize(l, sizeFactor(b.rhs), -1);
    default:
      return std::nullopt;
    }
  }

  // A float scalar against a literal: a comparison, or (since session 22) a
  // min/max (`min(scale, 1.5)` passed for every seed whose draws fell below
  // 1.5, half of them). The threshold (the scalar's value where the two
  // sides meet) must be positive, or negative for a scalar the task takes
  // with either sign (a gemm's alpha): the pins are the threshold halved
  // and doubled, of its sign. Since session 24 the scalar's side may be an
  // affine term of it (`max(eps - 0.1, 0.0)`: eps pinned at 0.05 and 0.2;
  // it passed every seed, no draw of eps reaching 0.1).
  void floatNode(const Expr &lhs, const Expr &rhs, const Expr &self, llvm::SMLoc loc) {
    for (const auto &[term, literal] : {std::pair(lhs, rhs), std::pair(rhs, lhs)}) {
      std::optional<Affine> f = affine(term);
      std::optional<double> value = literalValue(literal);
      if (!f || !value || f->a == 0)
        continue;
      double c = (*value - f->b) / f->a;
      bool admitted = (c > 0 && std::isfinite(c)) || (c < 0 && std::isfinite(c) && signedScalars_.count(f->scalar));
      if (admitted && seen_.insert("float\n" + print(self)).second)
        floatDecisions.push_back({f->scalar, print(self), c, loc, f->factor, f->power});
    }
  }
  // The first and last value of each enclosing loop variable whose bounds
  // are size-only with a constant positive step, and its loop's non-empty
  // condition.
  struct Ends {
    Expr first, last, nonEmpty;
    Decision::Loop loop;
  };
  std::map<std::string, Ends> loops_;

  std::optional<Ends> endsOf(const For &f, const std::map<std::string, Expr> &env) {
    Expr b = substitute(f.begin, env), e = substitute(f.end, env);
    int64_t step = f.step ? constantValue(f.step).value_or(0) : 1;
    bool reads = false, cta = false;
    if (step <= 0 || !sizeOnly(b, symbols_, reads, cta) || !sizeOnly(e, symbols_, reads, cta))
      return std::nullopt;
    llvm::SMLoc at = f.loc;
    Expr lastStep = Binary::make(BinaryOp::Sub, e, IntImm::make(1, at), at);
    if (step != 1) // begin + (end - 1 - begin) / step * step
      lastStep = Binary::make(
          BinaryOp::Add, b,
          Binary::make(BinaryOp::Mul,
                       Binary::make(BinaryOp::Div, Binary::make(BinaryOp::Sub, lastStep, b, at),
                                    IntImm::make(step, at), at),
                       IntImm::make(step, at), at),
          at);
    return Ends{b, lastStep, Binary::make(BinaryOp::Lt, b, e, at), {f.var, b, e, step}};
  }

  // An equality of one loop variable's term with a constant (`t == 300` in
  // a persistent tile loop: one tile zeroed, hack `tile-300`; since session
  // 25): not monotone, so not decided at the loop's ends; its outcomes are
  // "true in some iteration" and "false in some iteration", evaluated over
  // the iterations and sought by Z3 with the iteration as one more unknown.
  // The rest of the term reads sizes, blockIdx and literals only. At the
  // threshold, run on CTA 0 and a CTA that takes it where it reads blockIdx.
  // Over the corners of `vars`' loops (each variable at its first or last
  // value): `path` with every loop nonempty, `self` true at some corner, and
  // `self` false at some corner. Monotone in each variable, `self` takes an
  // outcome in some iteration exactly when it takes it at a corner.
  struct Corners {
    Expr under, yes, no;
  };
  Corners corners(const Expr &self, const std::vector<std::string> &vars, const Expr &path,
                  llvm::SMLoc loc) const {
    Corners out{path, nullptr, nullptr};
    for (const std::string &v : vars)
      out.under = out.under ? Binary::make(BinaryOp::And, out.under, loops_.at(v).nonEmpty, loc)
                            : loops_.at(v).nonEmpty;
    for (unsigned corner = 0; corner < (1u << vars.size()); ++corner) {
      std::map<std::string, Expr> at;
      for (size_t v = 0; v < vars.size(); ++v) {
        const Ends &ends = loops_.at(vars[v]);
        at[vars[v]] = corner >> v & 1 ? ends.last : ends.first;
      }
      Expr c = substitute(self, at), notC = Unary::make(UnaryOp::Not, c, loc);
      out.yes = out.yes ? Binary::make(BinaryOp::Or, out.yes, c, loc) : c;
      out.no = out.no ? Binary::make(BinaryOp::Or, out.no, notC, loc) : notC;
    }
    return out;
  }

  void loopEquality(const Expr &self, const Binary &b, const Expr &path) {
    if (!constantValue(b.lhs) && !constantValue(b.rhs))
      return;
    std::vector<std::string> vars;
    for (const std::string &n : namesUsed(self))
      if (loops_.count(n))
        vars.push_back(n);
    if (vars.size() != 1)
      return;
    std::set<std::string> known = symbols_;
    known.insert(vars[0]);
    bool reads = false, cta = false;
    if (!sizeOnly(self, known, reads, cta))
      return;
    const Ends &ends = loops_.at(vars[0]);
    bool loopCta = false, loopReads = false;
    sizeOnly(ends.loop.begin, symbols_, loopReads, loopCta);
    sizeOnly(ends.loop.end, symbols_, loopReads, loopCta);
    std::string key = "loop\n" + print(self) + "\n" + (path ? print(path) : "");
    if (!seen_.insert(key).second)
      return;
    Decision d;
    d.outcome[0] = self;
    d.outcome[1] = Unary::make(UnaryOp::Not, self, b.loc);
    std::string text = print(self);
    d.name[0] = fmt::format("`{}` true in some iteration", text);
    d.name[1] = fmt::format("`{}` false in some iteration", text);
    d.path = path; // the loop's non-empty condition among them
    d.loc = b.loc;
    d.outcomeReadsCta = cta || loopCta;
    bool pathReads = false, pathCta = false;
    if (path)
      sizeOnly(path, symbols_, pathReads, pathCta);
    d.readsCta = d.outcomeReadsCta || pathCta;
    d.farSide = false;
    d.sampled = d.readsCta;
    d.loop = ends.loop;
    decisions.push_back(std::move(d));
  }

  // A comparison of a loop variable (not under `/` or `%`) with sizes
  // (`if k < 4096` in `for k in 0 .. K`): monotone in the variable, so the
  // outcomes over the loop are those at its first and last values; each
  // corner (up to two variables) is a decision over sizes, under the loops
  // being non-empty. `min`/`max` of such terms and a quotient or remainder
  // by a positive constant come here as the comparison that decides them
  // (`min(k, 300)`: `k < 300`, `k > 300`; `k % 300`, `k / 300`: `k < 300`,
  // whether the dividend reaches the divisor), so that an index that stops
  // moving or wraps past a constant is run on both sides (hacks
  // `loop-min`, `loop-mod`, `loop-div`).
  void loopEnds(const Expr &self, llvm::SMLoc loc, const Expr &path, bool clamp = false) {
    std::vector<std::string> vars;
    for (const std::string &n : namesUsed(self))
      if (loops_.count(n))
        vars.push_back(n);
    // Only a loop variable against constants: a comparison that reads a
    // size or blockIdx itself (`kv * 128 + 128 <= S`) is a tail, the edge
    // size's job (it made four more sizes of the attention kernels).
    bool readsSize = false;
    for (const std::string &n : namesUsed(self))
      readsSize |= symbols_.count(n) != 0;
    struct FindBuiltin : IRVisitor {
      bool found = false;
      void visitBuiltin(const Builtin &) override { found = true; }
    } builtin;
    builtin.visit(self);
    // A min/max of the variable (`clamp`) may read sizes beside it where it
    // is monotone in the variable: `min(t / (8 * tn), 1)`, a grouped GEMM's
    // group clamped at 1, wrong from group 2 on, which no size reached
    // (hack `group-2-clamp`; since session 22). An explicit comparison
    // with sizes (`kv * 128 + 128 <= S`) stays a tail.
    // So may a comparison of such a term with a literal (`t / (8 * tn) > 1`
    // in a select is the same clamp, hack `group-2-select`): only a
    // comparison whose both sides read sizes or variables is a tail.
    bool literalSide = self->kind == ExprKind::Binary &&
                       (constantValue(as<Binary>(self).lhs) || constantValue(as<Binary>(self).rhs));
    // A conjunction or disjunction of such comparisons (`t >= 132 &&
    // blockIdx.x > 1`: a second tile of the CTAs past the persistent size's
    // two, hack `second-tile-cta-2`; since session 22) is one decision where
    // its truth moves one way with the variable; its parts decide the rest.
    bool logical = self->kind == ExprKind::Binary && (as<Binary>(self).op == BinaryOp::And ||
                                                      as<Binary>(self).op == BinaryOp::Or);
    auto monotone = [&](const std::string &v) {
      return (logical ? truthDirection(self, v, symbols_) : comparedDirection(self, v, symbols_)) !=
             Direction::Unknown;
    };
    if (logical)
      for (const std::string &v : vars)
        if (!monotone(v))
          return;
    if (readsSize && !clamp && !literalSide) {
      mixedEnds(self, loc, path, vars);
      return;
    }
    if (vars.size() > 2) {
      fixedEnds(self, loc, path, vars);
      return;
    }
    if (vars.empty())
      return;
    if (readsSize)
      for (const std::string &v : vars)
        if (!monotone(v))
          return;
    // blockIdx beside the variable (`(t - blockIdx.x) / 132 >= 2`: a CTA's
    // third tile) is a constant of the CTA, evaluated in each: let in where
    // the comparison is monotone in the variable (since session 22; before,
    // a candidate that zeroed every CTA's third tile by that test passed,
    // hack `third-tile`, since no size runs three tiles on a CTA).
    if (builtin.found)
      for (const std::string &v : vars)
        if (!monotone(v))
          return;
    // A variable under `/` or `%` is let in where the comparison is still
    // monotone in it (the corners argument below needs that): terms moving
    // the same way, scaled by constants, under `/` by a constant and
    // min/max (`(k / 2) % 300`: `k / 2 < 300`, since session 22; before,
    // any `/` or `%` around the variable left it out, hack `loop-div-mod`).
    // Without `/` or `%` the comparison is taken as before, monotone or not:
    // its corners are still where a threshold search looks (a band
    // `(k - 300) * (k - 400) >= 0` gets K = 302). A barrier's parity
    // (`parity = n / 2 % 2`) keeps the old rule: the barrier proof covers it
    // for all sizes, and as a decision it gave the attention kernels a
    // threshold size each (S = 1040 to 1296).
    if (underDivision(self, vars)) {
      if (inParity_)
        return;
      for (const std::string &v : vars)
        if (!monotone(v))
          return;
    }
    // Monotone in each variable, the comparison is true in some iteration
    // exactly when it is at some corner, and false likewise: one decision
    // whose outcomes are "true at a corner" and "false at a corner" (a
    // decision per corner also asked for a CTA whose *first* tile is past
    // the constant, `t % 8` in a persistent loop: a threshold size of 24
    // full tiles for the grouped GEMMs, whose CTA 0 reaches t = 132 anyway).
    auto [under, yes, no] = corners(self, vars, path, loc);
    // With blockIdx (beside the variable, or in a persistent loop's ends),
    // the outcome is one CTA's: its size runs that CTA (and CTA 0) alone,
    // not the grid, at the threshold (a CTA's third tile needs 265 tiles of
    // gemm_bf16_sm90: 8-10 s of simulation for every CTA, 0.1-0.2 s for one).
    struct FindCta : IRVisitor {
      bool found = false;
      void visitBuiltin(const Builtin &b) override { found |= isCta(b.which); }
    } cta;
    cta.visit(yes);
    add(yes, yes, no, "true in some iteration", "false in some iteration", under, loc,
        {true, true}, !cta.found, cta.found);
  }

  // A comparison of one loop variable's term with a term of sizes, both
  // sides reading sizes or the variable (`c * 4096 < H + 4096` in `for c in
  // 0 .. H / 1024`: rmsnorm dropping the chunks from the third on where H
  // reaches 3072, no sampled H passing 2048; hack `mixed-chunk-skip`, which
  // passed with score 1; since session 26). A tail (`kv * 128 + 128 <= S`,
  // `n * 128 < S`) differs from the rest of the loop at the last iteration
  // only, which the edge size's ragged extents show; so the corners here are
  // the first and the *second-to-last* values of the variable, under the
  // loop running twice: a tail is the same at both (no size: Z3 rules the
  // other outcome out), a threshold inside the loop is not. Monotone in the
  // variable, the comparison is then true (false) at some iteration before
  // the last exactly when it is at one of those corners. Only sizes,
  // blockIdx and literals beside the variable (a thread index is left out).
  void mixedEnds(const Expr &self, llvm::SMLoc loc, const Expr &path,
                 const std::vector<std::string> &vars) {
    if (vars.size() != 1 || self->kind != ExprKind::Binary ||
        comparedDirection(self, vars[0], symbols_) == Direction::Unknown)
      return;
    const Ends &ends = loops_.at(vars[0]);
    const int64_t step = ends.loop.step;
    Expr stepExpr = IntImm::make(step, loc);
    Expr penultimate = Binary::make(BinaryOp::Sub, ends.last, stepExpr, loc);
    Expr twice = Binary::make(BinaryOp::Lt, Binary::make(BinaryOp::Add, ends.first, stepExpr, loc),
                              ends.loop.end, loc);
    Expr first = substitute(self, {{vars[0], ends.first}});
    Expr before = substitute(self, {{vars[0], penultimate}});
    bool reads = false, cta = false;
    if (!sizeOnly(first, symbols_, reads, cta))
      return;
    Expr yes = Binary::make(BinaryOp::Or, first, before, loc);
    Expr no = Binary::make(BinaryOp::Or, Unary::make(UnaryOp::Not, first, loc),
                           Unary::make(UnaryOp::Not, before, loc), loc);
    Expr under = path ? Binary::make(BinaryOp::And, path, twice, loc) : twice;
    add(yes, yes, no, "true in some iteration before the last",
        "false in some iteration before the last", under, loc, {true, true}, !cta, cta);
  }

  // A comparison of more than two loop variables where the loops past two
  // have constant bounds (a fragment's unrolled column and row loops beside
  // the key-block loop: `kv0 + col < q0 + r0 + row + 2048` in attention, a
  // 2048-key sliding window that passed with score 1, hack
  // `key-window-2048`; since session 26), reading thread indices or
  // blockIdx, sizes and literals beside them: the loops of sized bounds (one
  // or two, monotone) are taken at their corners, the constant loops' values
  // and the thread are enumerated and unknowns of Z3, like a thread's
  // global index; its size runs CTA 0 and a CTA that takes the outcome.
  void fixedEnds(const Expr &self, llvm::SMLoc loc, const Expr &path,
                 const std::vector<std::string> &vars) {
    if (self->kind != ExprKind::Binary)
      return;
    std::vector<std::string> sized;
    std::vector<Decision::Loop> fixed;
    std::set<std::string> known = symbols_;
    for (const std::string &v : vars) {
      const Ends &ends = loops_.at(v);
      std::optional<int64_t> b = constantValue(ends.loop.begin), e = constantValue(ends.loop.end);
      if (b && e) {
        if (*e - *b > 1024)
          return;
        fixed.push_back(ends.loop);
        known.insert(v);
      } else {
        sized.push_back(v);
      }
    }
    if (sized.empty() || sized.size() > 2 || fixed.empty())
      return;
    for (const std::string &v : sized)
      if (comparedDirection(self, v, symbols_) == Direction::Unknown)
        return;
    auto [under, yes, no] = corners(self, sized, path, loc);
    Reads r;
    if (!termOnly(yes, known, true, r) || !(r.cta || r.thread))
      return;
    if (threadPath_) {
      yes = Binary::make(BinaryOp::And, threadPath_, yes, loc);
      no = Binary::make(BinaryOp::And, threadPath_, no, loc);
    }
    std::string key = "fixed\n" + print(yes) + "\n" + (under ? print(under) : "");
    if (!seen_.insert(key).second)
      return;
    std::string text = print(self);
    Decision d;
    d.outcome[0] = yes;
    d.outcome[1] = no;
    d.name[0] = fmt::format("`{}` true in some iteration", text);
    d.name[1] = fmt::format("`{}` false in some iteration", text);
    d.path = under;
    d.loc = loc;
    bool pathReads = false, pathCta = false;
    sizeOnly(under, symbols_, pathReads, pathCta);
    d.outcomeReadsCta = r.cta;
    d.readsCta = r.cta || pathCta;
    d.readsThread = r.thread;
    d.farSide = true; // half the keys past the window, not 8 of 2056
    d.sampled = d.readsCta;
    d.fixedLoops = std::move(fixed);
    decisions.push_back(std::move(d));
  }

  static bool underDivision(const Expr &e, const std::vector<std::string> &vars) {
    struct Find : IRVisitor {
      const std::vector<std::string> *vars;
      bool found = false;
      void visitBinary(const Binary &b) override {
        if (b.op == BinaryOp::Div || b.op == BinaryOp::Mod)
          for (const std::string &n : namesUsed(Binary::make(b.op, b.lhs, b.rhs)))
            found |= std::find(vars->begin(), vars->end(), n) != vars->end();
        IRVisitor::visitBinary(b);
      }
    } find;
    find.vars = &vars;
    find.visit(e);
    return find.found;
  }

  void stmt(const Stmt &s, const Expr &path, std::map<std::string, Expr> &env) {
    switch (s->kind) {
    case StmtKind::Let: {
      const Let &l = as<Let>(s);
      Expr v = substitute(l.value, env);
      expr(v, path);
      env[l.name] = v;
      break;
    }
    case StmtKind::For: {
      const For &f = as<For>(s);
      for (const Expr &e : {f.begin, f.end, f.step})
        if (e)
          expr(substitute(e, env), path);
      std::map<std::string, Expr> inner = env;
      inner.erase(f.var); // the loop variable reads no size only
      std::optional<Ends> outer;
      if (auto it = loops_.find(f.var); it != loops_.end())
        outer = it->second;
      loops_.erase(f.var);
      // The body's decisions are taken only where the loop runs: its
      // non-empty condition joins their path (a `blockIdx.x > 0` inside a
      // persistent tile loop counted as seen in CTAs that run no tile; hack
      // `cta-1-zero`).
      Expr bodyPath = path;
      if (auto ends = endsOf(f, env)) {
        loops_[f.var] = *ends;
        bodyPath = path ? Binary::make(BinaryOp::And, path, ends->nonEmpty, f.loc) : ends->nonEmpty;
      }
      block(f.body, bodyPath, inner);
      loops_.erase(f.var);
      if (outer)
        loops_[f.var] = *outer;
      break;
    }
    case StmtKind::If: {
      const If &i = as<If>(s);
      Expr c = substitute(i.cond, env);
      expr(c, path);
      bool reads = false, cta = false;
      bool guard = sizeOnly(c, symbols_, reads, cta);
      auto under = [&](const Expr &cond) {
        if (!guard)
          return path;
        return path ? Binary::make(BinaryOp::And, path, cond, i.loc) : cond;
      };
      // A condition on thread indices (`if wgid == 0`: the producer's
      // branch) joins the thread path of the constant-loop decisions
      // (fixedEnds): without it, Z3 took the outcome in a thread that never
      // runs the comparison.
      bool threadCta = false, thread = false;
      bool threadGuard = !guard && indexOnly(c, symbols_, threadCta, thread) && thread;
      Expr outerThreads = threadPath_;
      auto threads = [&](const Expr &cond) {
        if (threadGuard)
          threadPath_ = outerThreads ? Binary::make(BinaryOp::And, outerThreads, cond, i.loc) : cond;
      };
      threads(c);
      block(i.thenBody, under(c), env);
      threads(Unary::make(UnaryOp::Not, c, i.loc));
      block(i.elseBody, under(Unary::make(UnaryOp::Not, c, i.loc)), env);
      threadPath_ = outerThreads;
      break;
    }
    default: {
      // Stores, calls, declarations: every expression they hold.
      struct Exprs : IRVisitor {
        std::vector<std::pair<Expr, bool>> top; // and whether a barrier's parity
        bool inside = false;
        void visitStore(const Store &st) override {
          top.push_back({st.target, false});
          top.push_back({st.value, false});
        }
        void visitCallStmt(const CallStmt &c) override {
          for (const CallArg &a : c.args)
            top.push_back({a.value, a.keyword == "parity"});
        }
      } exprs;
      exprs.visit(s);
      for (const auto &[e, parity] : exprs.top)
        if (e) {
          inParity_ = parity;
          expr(substitute(e, env), path);
          inParity_ = false;
        }
    }
    }
  }

  // Every decision node of `e`.
  void expr(const Expr &e, const Expr &path) {
    struct Walk : IRVisitor {
      Collector *self;
      const Expr *path;
      void visitBinary(const Binary &b) override {
        self->node(b, *path);
        IRVisitor::visitBinary(b);
      }
      void visitCall(const Call &c) override {
        self->node(c, *path);
        IRVisitor::visitCall(c);
      }
    } walk;
    walk.self = this;
    walk.path = &path;
    walk.visit(e);
  }

  void node(const Binary &b, const Expr &path) {
    Expr self = Binary::make(b.op, b.lhs, b.rhs, b.loc);
    switch (b.op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      loopEnds(self, b.loc, path);
      floatNode(b.lhs, b.rhs, self, b.loc);
      [[fallthrough]];
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      if (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne)
        loopEquality(self, b, path);
      add(self, self, Unary::make(UnaryOp::Not, self, b.loc), "true", "false", path, b.loc);
      break;
    case BinaryOp::And:
    case BinaryOp::Or:
      loopEnds(self, b.loc, path);
      add(self, self, Unary::make(UnaryOp::Not, self, b.loc), "true", "false", path, b.loc);
      break;
    case BinaryOp::Mod:
    case BinaryOp::Div: {
      Expr zero = IntImm::make(0, b.loc);
      bool mod = b.op == BinaryOp::Mod;
      if (constantValue(b.rhs).value_or(0) > 0) {
        // Whether the dividend reaches a constant divisor: where it never
        // does, `blockIdx.x % 128` is blockIdx.x and `K / 4096` is 0 at every
        // sampled size (hack `row-mod`: rmsnorm reading row blockIdx.x % 128
        // passed at R = 67).
        Expr below = cmp(BinaryOp::Lt, b.lhs, b.rhs, b.loc);
        loopEnds(below, b.loc, path);
        add(below, below, Unary::make(UnaryOp::Not, below, b.loc), "true", "false", path, b.loc);
        // A quotient of sizes by a constant is often a tile count, `(N +
        // 255) / 256`, which is never 0: whether it is 1 or more decides
        // whether a second tile along that dimension exists. No sampled size
        // of gemm_bf16_sm90 had N > 256, so a kernel that read B's first 256
        // rows for every column tile passed with the honest score (hack
        // `column-tile-1-sm90`); since session 22, `a < 2 * c` is a decision too.
        // Only its false side is asked for: a single tile (`K + 63 < 128`
        // true) gave eleven library kernels a size each, for no cheat that
        // a decision of their own would not name. And at the threshold
        // itself (N = 264: a second tile, 8 columns wide), not doubled
        // past it: what is missing is a second tile, not half the work.
        if (!mod) {
          Expr once = cmp(BinaryOp::Lt, b.lhs,
                          IntImm::make(2 * *constantValue(b.rhs), b.loc), b.loc);
          add(once, once, Unary::make(UnaryOp::Not, once, b.loc), "true", "false", path,
              b.loc, {false, true}, false);
        }
      } else if (!constantValue(b.rhs)) {
        // A divisor of sizes (`% H`): whether the dividend reaches it too
        // (since session 26). A head index that is right at the sampled
        // heads only, `(h * (h - 1) * (h - 2) + h) % H` (h at H <= 3, head 1
        // read for head 3 at H = 4), passed with score 1: the remainder
        // zero and not zero were both taken at the edge's H = 3 (hack
        // `head-poly-mod`).
        Expr below = cmp(BinaryOp::Lt, b.lhs, b.rhs, b.loc);
        add(below, below, Unary::make(UnaryOp::Not, below, b.loc), "true", "false", path, b.loc);
      }
      add(self, cmp(BinaryOp::Eq, self, zero, b.loc), cmp(BinaryOp::Ne, self, zero, b.loc),
          mod ? "remainder zero" : "quotient zero", mod ? "remainder not zero" : "quotient not zero",
          path, b.loc);
      break;
    }
    default:
      break;
    }
  }

  void node(const Call &c, const Expr &path) {
    if ((c.callee != "min" && c.callee != "max") || c.args.size() != 2)
      return;
    Expr self = Call::make(c.callee, c.args, c.loc);
    floatNode(c.args[0], c.args[1], self, c.loc);
    loopEnds(cmp(BinaryOp::Lt, c.args[0], c.args[1], c.loc), c.loc, path, true);
    loopEnds(cmp(BinaryOp::Gt, c.args[0], c.args[1], c.loc), c.loc, path, true);
    add(self, cmp(BinaryOp::Lt, c.args[0], c.args[1], c.loc),
        cmp(BinaryOp::Gt, c.args[0], c.args[1], c.loc), "first argument smaller",
        "first argument larger", path, c.loc);
  }

  void add(const Expr &self, const Expr &yes, const Expr &no, const char *yesName,
           const char *noName, const Expr &path, llvm::SMLoc loc,
           std::array<bool, 2> needed = {true, true}, bool far = true, bool sampled = false) {
    bool reads = false, cta = false, thread = false;
    if (!sizeOnly(self, symbols_, reads, cta)) {
      // A thread's global index against constants or sizes (`i == 200 &&
      // j == 200` with i = blockIdx.y * 16 + threadIdx.x / 16: C[200, 200]
      // zeroed, hack `far-element`; `i < N`: rows past N zeroed, right
      // while M = N as at every sampled size, hack `rows-past-n`; since
      // session 25): its outcomes are sought like a CTA index's, the size
      // found running CTA 0 and a CTA in which some thread takes the
      // outcome. Not past the threshold (an index equal to a constant is
      // reached by one element, not by half the work), and not a tile count
      // asked on one side only. A tail (`row < M`) is one too: the edge
      // size takes both of its outcomes, or the where clause rules one out.
      reads = cta = false;
      if (!needed[0] || !indexOnly(self, symbols_, cta, thread) || !cta || !thread)
        return;
      reads = true;
      far = false;
      sampled = true;
    }
    if (!reads)
      return;
    std::string key = print(self) + "\n" + (path ? print(path) : "") +
                      (needed[0] ? "" : "\nfalse side only");
    if (!seen_.insert(key).second)
      return;
    std::string text = print(self);
    Decision d;
    d.outcome[0] = yes;
    d.outcome[1] = no;
    d.name[0] = fmt::format("`{}` {}", text, yesName);
    d.name[1] = fmt::format("`{}` {}", text, noName);
    d.path = path;
    d.loc = loc;
    d.needed = needed;
    d.farSide = far;
    d.sampled = sampled;
    bool pathReads = false, pathCta = false;
    if (path)
      sizeOnly(path, symbols_, pathReads, pathCta);
    d.outcomeReadsCta = cta;
    d.readsCta = cta || pathCta;
    d.readsThread = thread;
    decisions.push_back(std::move(d));
  }
};

} // namespace

KernelDecisions collectDecisions(const Kernel &kernel, const std::set<std::string> &symbols,
                                 const std::set<std::string> &floatScalars,
                                 const std::set<std::string> &signedScalars) {
  Collector collect(symbols, floatScalars, signedScalars);
  collect.block(kernel.body, nullptr, {});
  return {std::move(collect.decisions), std::move(collect.floatDecisions)};
}

} // namespace tilescope::reward_detail
