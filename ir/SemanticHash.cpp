#include "ir/SemanticHash.h"

#include "ir/Printer.h"
#include "ir/Visitor.h"

#include <llvm/Support/xxhash.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tilescope {
namespace {

bool commutative(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Mul:
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::And:
  case BinaryOp::Or:
    return true;
  default:
    return false;
  }
}

std::string shortHash(const std::string &text) {
  return fmt::format("{:012x}", llvm::xxHash64(text) & 0xFFFFFFFFFFFFull);
}

class Normaliser {
public:
  Kernel kernel(const Kernel &k) {
    Kernel out = k;
    out.name = "_";
    scopes_.assign(1, {});
    for (Param &p : out.params)
      for (Expr &e : p.shape)
        e = expr(e);
    for (Expr &c : out.constraints)
      c = expr(c);
    std::sort(out.constraints.begin(), out.constraints.end(),
              [](const Expr &a, const Expr &b) { return print(a) < print(b); });
    for (Expr &e : out.launch.grid)
      e = expr(e);
    for (Expr &e : out.launch.cluster)
      e = expr(e);
    for (Expr &e : out.launch.devices)
      e = expr(e);
    out.body = block(k.body);
    return out;
  }

private:
  Expr expr(const Expr &e) {
    if (!e)
      return e;
    switch (e->kind) {
    case ExprKind::Var:
      return Var::make(rename(as<Var>(e).name), e->loc);
    case ExprKind::Unary: {
      const auto &u = as<Unary>(e);
      return Unary::make(u.op, expr(u.operand), e->loc);
    }
    case ExprKind::Binary: {
      const auto &b = as<Binary>(e);
      Expr l = expr(b.lhs), r = expr(b.rhs);
      BinaryOp op = b.op;
      if (op == BinaryOp::Gt || op == BinaryOp::Ge) {
        std::swap(l, r);
        op = op == BinaryOp::Gt ? BinaryOp::Lt : BinaryOp::Le;
      } else if (commutative(op) && print(r) < print(l)) {
        std::swap(l, r);
      }
      return Binary::make(op, l, r, e->loc);
    }
    case ExprKind::Call: {
      const auto &c = as<Call>(e);
      std::vector<Expr> args;
      for (const Expr &a : c.args)
        args.push_back(expr(a));
      return Call::make(c.callee, std::move(args), e->loc);
    }
    case ExprKind::Index: {
      const auto &x = as<Index>(e);
      std::vector<Subscript> subs = x.subscripts;
      for (Subscript &s : subs) {
        s.begin = expr(s.begin);
        s.end = expr(s.end);
      }
      return Index::make(expr(x.base), std::move(subs), e->loc);
    }
    default:
      return e;
    }
  }

  // A normalised statement of a block, with what a run sort needs.
  struct Item {
    Stmt stmt;
    std::string defines; // canonical name; empty for statements that define none
    std::set<std::string> uses;
    std::string text;
    bool movable = false; // a let or a declaration
  };

  Block block(const Block &b) {
    scopes_.emplace_back();
    std::vector<Item> items;
    for (const Stmt &s : b)
      items.push_back(stmt(s));
    scopes_.pop_back();
    Block out;
    for (size_t i = 0; i < items.size();) {
      size_t j = i;
      while (j < items.size() && items[j].movable)
        ++j;
      if (j == i) {
        out.push_back(items[i++].stmt);
        continue;
      }
      sortRun(items, i, j, out);
      i = j;
    }
    return out;
  }

  // Appends items[i, j) to `out` in dependency order, the smallest printed
  // text first among those whose names are all defined.
  static void sortRun(std::vector<Item> &items, size_t i, size_t j, Block &out) {
    std::vector<bool> placed(j - i, false);
    for (size_t n = i; n < j; ++n) {
      size_t best = j;
      for (size_t c = i; c < j; ++c) {
        if (placed[c - i])
          continue;
        bool ready = true;
        for (size_t d = i; d < j && ready; ++d)
          if (d != c && !placed[d - i] && items[c].uses.count(items[d].defines))
            ready = false;
        if (ready && (best == j || items[c].text < items[best].text))
          best = c;
      }
      if (best == j) // a cycle cannot happen (names are defined before use); keep the order
        for (size_t c = i; c < j; ++c)
          if (!placed[c - i]) {
            best = c;
            break;
          }
      placed[best - i] = true;
      out.push_back(items[best].stmt);
    }
  }

  static std::set<std::string> namesIn(std::initializer_list<Expr> exprs) {
    std::set<std::string> out;
    for (const Expr &e : exprs)
      if (e)
        for (const std::string &n : namesUsed(e))
          out.insert(n);
    return out;
  }

  Item stmt(const Stmt &s) {
    Item item;
    switch (s->kind) {
    case StmtKind::Let: {
      const auto &l = as<Let>(s);
      Expr v = expr(l.value);
      std::string name = "v" + shortHash(print(v));
      define(l.name, name);
      item.stmt = Let::make(name, v, s->loc);
      item.defines = name;
      item.uses = namesIn({v});
      item.text = "let " + name + " = " + print(v);
      item.movable = true;
      break;
    }
    case StmtKind::BufferDecl: {
      const auto &b = as<BufferDecl>(s);
      std::vector<Expr> shape;
      std::string key = fmt::format("{} {}", memScopeName(b.scope), dtypeName(b.dtype));
      for (const Expr &e : b.shape) {
        shape.push_back(expr(e));
        key += " " + print(shape.back());
      }
      if (b.layout)
        key += " " + b.layout->str();
      std::string name = fmt::format("b{}_{}", shortHash(key), rank_[key]++);
      define(b.name, name);
      item.stmt = BufferDecl::make(b.scope, name, b.dtype, shape, b.layout, s->loc);
      item.defines = name;
      for (const Expr &e : shape)
        item.uses.merge(namesIn({e}));
      item.text = "buffer " + key + " " + name;
      item.movable = true;
      break;
    }
    case StmtKind::BarrierDecl: {
      const auto &b = as<BarrierDecl>(s);
      Expr size = expr(b.arraySize), count = expr(b.count);
      std::string key =
          fmt::format("mbarrier {} {}", size ? print(size) : "-", count ? print(count) : "-");
      std::string name = fmt::format("m{}_{}", shortHash(key), rank_[key]++);
      define(b.name, name);
      item.stmt = BarrierDecl::make(name, size, count, s->loc);
      item.defines = name;
      item.uses = namesIn({size, count});
      item.text = key + " " + name;
      item.movable = true;
      break;
    }
    case StmtKind::For: {
      const auto &f = as<For>(s);
      Expr begin = expr(f.begin), end = expr(f.end), step = expr(f.step);
      scopes_.emplace_back();
      std::string var = fmt::format("i{}", depth_++);
      define(f.var, var);
      Block body = block(f.body);
      --depth_;
      scopes_.pop_back();
      item.stmt =
          For::make(var, begin, end, step, f.unroll, f.pipelineStages, std::move(body), s->loc);
      break;
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      Expr cond = expr(i.cond);
      Block thenBody = block(i.thenBody);
      Block elseBody = block(i.elseBody);
      item.stmt = If::make(cond, std::move(thenBody), std::move(elseBody), s->loc);
      break;
    }
    case StmtKind::Store: {
      const auto &st = as<Store>(s);
      item.stmt = Store::make(expr(st.target), expr(st.value), s->loc);
      break;
    }
    case StmtKind::CallStmt: {
      const auto &c = as<CallStmt>(s);
      std::vector<CallArg> args = c.args;
      for (CallArg &a : args)
        a.value = expr(a.value);
      item.stmt = CallStmt::make(c.scope, c.callee, std::move(args), s->loc);
      break;
    }
    }
    return item;
  }

  void define(const std::string &name, const std::string &canonical) {
    scopes_.back()[name] = canonical;
  }
  std::string rename(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end())
        return found->second;
    return name; // a parameter, a shape symbol or a scalar
  }

  std::vector<std::map<std::string, std::string>> scopes_;
  std::map<std::string, int> rank_;
  int depth_ = 0;
};

} // namespace

Kernel semanticNormalForm(const Kernel &kernel) {
  return Normaliser().kernel(kernel);
}

uint64_t semanticHash(const Kernel &kernel) {
  return llvm::xxHash64(print(semanticNormalForm(kernel)));
}

} // namespace tilescope
