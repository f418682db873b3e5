#include "ir/Printer.h"

#include <llvm/Support/xxhash.h>

#include <fmt/format.h>

namespace tilescope {

namespace {

// Floats print as the shortest text that reads back to the same double, with
// a '.' or exponent so they stay floats.
std::string printFloat(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

// `outer` is the precedence of the context; parenthesise when weaker.
std::string printExpr(const Expr &e, int outer);

std::string printSubscript(const Subscript &s) {
  switch (s.kind) {
  case Subscript::Point:
    return printExpr(s.begin, 0);
  case Subscript::Range:
    return printExpr(s.begin, 0) + " : " + printExpr(s.end, 0);
  case Subscript::Extent:
    return printExpr(s.begin, 0) + " : +" + printExpr(s.end, 0);
  case Subscript::Full:
    return ":";
  }
  return "?";
}

std::string joinExprs(const std::vector<Expr> &list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i)
    out += (i ? ", " : "") + printExpr(list[i], 0);
  return out;
}

std::string printExpr(const Expr &e, int outer) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return std::to_string(as<IntImm>(e).value);
  case ExprKind::FloatImm:
    return printFloat(as<FloatImm>(e).value);
  case ExprKind::BoolImm:
    return as<BoolImm>(e).value ? "true" : "false";
  case ExprKind::StringImm:
    return "\"" + as<StringImm>(e).value + "\"";
  case ExprKind::Var:
    return as<Var>(e).name;
  case ExprKind::Builtin:
    return std::string(builtinName(as<Builtin>(e).which));
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    std::string inner = printExpr(u.operand, 7);
    // `- -x` must not print as `--x`; keep a space between two minus signs.
    const char *op = u.op == UnaryOp::Neg ? "-" : "!";
    return std::string(op) + (inner[0] == op[0] ? " " : "") + inner;
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    int p = binaryOpPrecedence(b.op);
    // Left-associative: the right operand needs parentheses at equal strength.
    std::string s = printExpr(b.lhs, p) + " " + std::string(binaryOpSpelling(b.op)) + " " +
                    printExpr(b.rhs, p + 1);
    return p < outer ? "(" + s + ")" : s;
  }
  case ExprKind::Call: {
    const auto &c = as<Call>(e);
    return c.callee + "(" + joinExprs(c.args) + ")";
  }
  case ExprKind::Index: {
    const auto &x = as<Index>(e);
    std::string out = printExpr(x.base, 8) + "[";
    for (size_t i = 0; i < x.subscripts.size(); ++i)
      out += (i ? ", " : "") + printSubscript(x.subscripts[i]);
    return out + "]";
  }
  }
  return "?";
}

class KernelPrinter {
public:
  std::string out;
  const Comments *comments = nullptr; // null: print the IR alone (hashing)
  size_t kernelIndex = 0;

  template <typename Map, typename Key>
  const typename Map::mapped_type *find(const Map &m, const Key &k) {
    if (!comments)
      return nullptr;
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  }
  void commentLines(int depth, const std::vector<std::string> *lines) {
    if (lines)
      for (const std::string &l : *lines)
        line(depth, l);
  }
  static std::string withComment(std::string text, const std::string *comment) {
    return comment ? text + "  " + *comment : text;
  }
  const std::vector<std::string> *perKernel(const std::vector<std::vector<std::string>> &v) {
    return comments && kernelIndex < v.size() ? &v[kernelIndex] : nullptr;
  }

  void kernel(const Kernel &k) {
    if (comments)
      commentLines(0, perKernel(comments->kernelBefore));
    out += "kernel " + k.name + "(";
    bool first = true;
    for (const Param &p : k.params) {
      if (p.implicit)
        continue;
      out += (first ? "" : ", ") + p.name + ": ";
      first = false;
      if (p.isTensor) {
        out += fmt::format("global {}[{}]", dtypeName(p.dtype), joinExprs(p.shape));
        if (p.placement)
          out += " placement(" + p.placement->str() + ")";
      } else
        out += std::string(dtypeName(p.dtype));
    }
    out += ")\n";
    for (const SpaceParam &p : k.space.params)
      out += "  param " + p.name + " in " + p.domainText() +
             (p.defaultValue ? " = " + printExpr(p.defaultValue, 0) : "") + "\n";
    for (const NamedPoint &pt : k.space.points) {
      out += "  point " + pt.name + "(";
      for (size_t i = 0; i < pt.values.size(); ++i)
        out += (i ? ", " : "") + pt.values[i].name + " = " + printExpr(pt.values[i].value, 0);
      out += ")\n";
    }
    if (!k.constraints.empty())
      out += "  where " + joinExprs(k.constraints) + "\n";
    out += "  launch ";
    if (!k.launch.devices.empty())
      out += "devices(" + joinExprs(k.launch.devices) + ") ";
    out += "grid(" + joinExprs(k.launch.grid) + ")";
    if (!k.launch.cluster.empty())
      out += " cluster(" + joinExprs(k.launch.cluster) + ")";
    out += fmt::format(" threads({})",
                       k.launch.threadsExpr ? printExpr(k.launch.threadsExpr, 0)
                                            : std::to_string(k.launch.threads));
    if (k.launch.ctasPerSmExpr)
      out += fmt::format(" ctas_per_sm({})", printExpr(k.launch.ctasPerSmExpr, 0));
    else if (k.launch.ctasPerSm != 1)
      out += fmt::format(" ctas_per_sm({})", k.launch.ctasPerSm);
    out += fmt::format(" target({})\n", targetInfo(k.launch.target).name);
    const std::string *open = comments && kernelIndex < comments->kernelOpen.size() &&
                                      !comments->kernelOpen[kernelIndex].empty()
                                  ? &comments->kernelOpen[kernelIndex]
                                  : nullptr;
    line(0, withComment("{", open));
    block(k.body, 1);
    if (comments)
      commentLines(1, perKernel(comments->kernelBodyEnd));
    out += "}\n";
  }

  void block(const Block &b, int depth) {
    for (const Stmt &s : b)
      stmt(s, depth);
  }

  void line(int depth, const std::string &text) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += text;
    out += '\n';
  }

  void stmt(const Stmt &s, int depth) {
    if (comments)
      commentLines(depth, find(comments->before, s.get()));
    const std::string *eol = comments ? find(comments->endOfLine, s.get()) : nullptr;
    switch (s->kind) {
    case StmtKind::BufferDecl: {
      const auto &b = as<BufferDecl>(s);
      std::string text = fmt::format("{} {}: {}[{}]", memScopeName(b.scope), b.name,
                                     dtypeName(b.dtype), joinExprs(b.shape));
      if (b.layout)
        text += " layout(" + b.layout->str() + ")";
      line(depth, withComment(text, eol));
      return;
    }
    case StmtKind::BarrierDecl: {
      const auto &b = as<BarrierDecl>(s);
      std::string text = "mbarrier " + b.name;
      if (b.arraySize)
        text += "[" + printExpr(b.arraySize, 0) + "]";
      if (b.count)
        text += "(count = " + printExpr(b.count, 0) + ")";
      line(depth, withComment(text, eol));
      return;
    }
    case StmtKind::Let: {
      const auto &l = as<Let>(s);
      line(depth, withComment("let " + l.name + " = " + printExpr(l.value, 0), eol));
      return;
    }
    case StmtKind::For: {
      const auto &f = as<For>(s);
      std::string text =
          "for " + f.var + " in " + printExpr(f.begin, 0) + " .. " + printExpr(f.end, 0);
      if (!(f.step->kind == ExprKind::IntImm && as<IntImm>(f.step).value == 1))
        text += " step " + printExpr(f.step, 0);
      if (f.unroll == -1)
        text += " unroll";
      else if (f.unroll > 0)
        text += fmt::format(" unroll({})", f.unroll);
      if (f.pipelineStages > 0)
        text += fmt::format(" pipelined({})", f.pipelineStages);
      line(depth, withComment(text + " {", eol));
      block(f.body, depth + 1);
      if (comments)
        commentLines(depth + 1, find(comments->beforeClose, std::make_pair(s.get(), 0)));
      line(depth, withComment("}", find(comments ? comments->afterClose : empty_, s.get())));
      return;
    }
    case StmtKind::If: {
      ifChain(s, depth, "if ");
      line(depth, withComment("}", find(comments ? comments->afterClose : empty_, s.get())));
      return;
    }
    case StmtKind::Store: {
      const auto &st = as<Store>(s);
      line(depth, withComment(printExpr(st.target, 0) + " = " + printExpr(st.value, 0), eol));
      return;
    }
    case StmtKind::CallStmt: {
      const auto &c = as<CallStmt>(s);
      std::string text(execScopePrefix(c.scope));
      if (!text.empty())
        text += ".";
      text += c.callee + "(";
      for (size_t i = 0; i < c.args.size(); ++i) {
        text += i ? ", " : "";
        if (!c.args[i].keyword.empty())
          text += c.args[i].keyword + " = ";
        text += printExpr(c.args[i].value, 0);
      }
      line(depth, withComment(text + ")", eol));
      return;
    }
    }
  }

  // Prints `if c {`, the branches and `} else ...`, but not the final `}`.
  void ifChain(const Stmt &node, int depth, const std::string &lead) {
    const If &i = as<If>(node);
    line(depth, withComment(lead + printExpr(i.cond, 0) + " {",
                            find(comments ? comments->endOfLine : empty_, node.get())));
    block(i.thenBody, depth + 1);
    if (comments)
      commentLines(depth + 1, find(comments->beforeClose, std::make_pair(node.get(), 0)));
    if (i.elseBody.empty())
      return;
    if (i.elseBody.size() == 1 && i.elseBody[0]->kind == StmtKind::If) {
      // `else if` stays flat; the block it came from is the same IR.
      ifChain(i.elseBody[0], depth, "} else if ");
      return;
    }
    line(depth, withComment("} else {", find(comments ? comments->elseLine : empty_, node.get())));
    block(i.elseBody, depth + 1);
    if (comments)
      commentLines(depth + 1, find(comments->beforeClose, std::make_pair(node.get(), 1)));
  }

  static inline const std::map<const StmtNode *, std::string> empty_{};
};

} // namespace

std::string print(const Expr &e) {
  return printExpr(e, 0);
}

std::string print(const Kernel &k) {
  KernelPrinter p;
  p.kernel(k);
  return p.out;
}

std::string print(const Module &m) {
  std::string out;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    KernelPrinter p;
    p.comments = m.comments.get();
    p.kernelIndex = i;
    p.kernel(m.kernels[i]);
    out += (i ? "\n" : "") + p.out;
  }
  if (m.comments && !m.comments->fileEnd.empty()) {
    out += "\n";
    for (const std::string &c : m.comments->fileEnd)
      out += c + "\n";
  }
  return out;
}

uint64_t structuralHash(const Kernel &k) {
  return llvm::xxHash64(print(k));
}

} // namespace tilescope
