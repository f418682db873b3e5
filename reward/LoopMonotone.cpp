#include "reward/LoopMonotone.h"

#include "ir/ConcreteEval.h"
#include "ir/Visitor.h"

namespace tilescope::reward_detail {
namespace {

bool isCta(BuiltinKind b) {
  return b == BuiltinKind::blockIdx_x || b == BuiltinKind::blockIdx_y ||
         b == BuiltinKind::blockIdx_z;
}

// How `e` moves as loop variable `v` grows, the others held.
Direction flip(Direction d) {
  return d == Direction::Up ? Direction::Down : d == Direction::Down ? Direction::Up : d;
}
Direction join(Direction a, Direction b) {
  if (a == Direction::Constant)
    return b;
  if (b == Direction::Constant || a == b)
    return a;
  return Direction::Unknown;
}

} // namespace

Direction direction(const Expr &e, const std::string &v, const std::set<std::string> &symbols) {
  if (!namesUsed(e).count(v))
    return Direction::Constant;
  switch (e->kind) {
  case ExprKind::Var:
    return Direction::Up; // v itself: it reads v
  case ExprKind::Unary:
    return as<Unary>(e).op == UnaryOp::Neg ? flip(direction(as<Unary>(e).operand, v, symbols))
                                           : Direction::Unknown;
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    Direction l = direction(b.lhs, v, symbols), r = direction(b.rhs, v, symbols);
    std::optional<int64_t> cl = constantValue(b.lhs), cr = constantValue(b.rhs);
    auto scaled = [](Direction d, int64_t c) {
      return c > 0 ? d : c < 0 ? flip(d) : Direction::Constant;
    };
    switch (b.op) {
    case BinaryOp::Add:
      return join(l, r);
    case BinaryOp::Sub:
      return join(l, flip(r));
    case BinaryOp::Mul:
      // By a constant, or by a factor that reads no `v` and is never
      // negative (`k * blockIdx.x`): the factor's sign decides.
      return cr                                             ? scaled(l, *cr)
             : cl                                           ? scaled(r, *cl)
             : r == Direction::Constant && nonNegativeByForm(b.rhs, symbols) ? l
             : l == Direction::Constant && nonNegativeByForm(b.lhs, symbols) ? r
                                                            : Direction::Unknown;
    case BinaryOp::Div: // floor or truncation by a constant: monotone
      // ... and by a divisor that reads no `v` and is never negative
      // (`t / (8 * tn)`, a grouped GEMM's group of tile t).
      return cr && *cr != 0                                 ? scaled(l, *cr)
             : r == Direction::Constant && nonNegativeByForm(b.rhs, symbols) ? l
                                                            : Direction::Unknown;
    default:
      return Direction::Unknown;
    }
  }
  case ExprKind::Call: {
    const Call &c = as<Call>(e);
    if ((c.callee != "min" && c.callee != "max") || c.args.size() != 2)
      return Direction::Unknown;
    return join(direction(c.args[0], v, symbols), direction(c.args[1], v, symbols));
  }
  default:
    return Direction::Unknown;
  }
}

// Whether `e` is never negative by its form: literals at least 0,
// blockIdx, shape symbols (at least 1), and sums, products and quotients
// of such terms.
bool nonNegativeByForm(const Expr &e, const std::set<std::string> &symbols) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(e).value >= 0;
  case ExprKind::Builtin:
    return isCta(as<Builtin>(e).which);
  case ExprKind::Var:
    return symbols.count(as<Var>(e).name) != 0;
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    if (b.op == BinaryOp::Add || b.op == BinaryOp::Mul || b.op == BinaryOp::Div)
      return nonNegativeByForm(b.lhs, symbols) && nonNegativeByForm(b.rhs, symbols);
    return false;
  }
  default:
    return false;
  }
}

// A comparison `a < b` moves as `a - b` does.
Direction comparedDirection(const Expr &e, const std::string &v,
                            const std::set<std::string> &symbols) {
  if (e->kind != ExprKind::Binary)
    return direction(e, v, symbols);
  const Binary &b = as<Binary>(e);
  switch (b.op) {
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return join(direction(b.lhs, v, symbols), flip(direction(b.rhs, v, symbols)));
  default:
    return direction(e, v, symbols);
  }
}

Direction truthDirection(const Expr &e, const std::string &v,
                         const std::set<std::string> &symbols) {
  if (!namesUsed(e).count(v))
    return Direction::Constant;
  if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Not)
    return flip(truthDirection(as<Unary>(e).operand, v, symbols));
  if (e->kind != ExprKind::Binary)
    return Direction::Unknown;
  const Binary &b = as<Binary>(e);
  switch (b.op) {
  case BinaryOp::And:
  case BinaryOp::Or:
    return join(truthDirection(b.lhs, v, symbols), truthDirection(b.rhs, v, symbols));
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return comparedDirection(e, v, symbols);
  case BinaryOp::Lt:
  case BinaryOp::Le:
    return flip(comparedDirection(e, v, symbols));
  default:
    return Direction::Unknown;
  }
}

} // namespace tilescope::reward_detail
