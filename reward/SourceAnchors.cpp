#include "reward/SourceAnchors.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

namespace tilescope::reward_detail {
namespace {

class AnchorWalk {
public:
  AnchorWalk(llvm::SourceMgr &sm, SourceAnchors &out) : sm_(sm), out_(out) {}

  void kernel(const Kernel &k) {
    at(k.loc);
    for (const Param &p : k.params) {
      at(p.loc);
      for (const Expr &e : p.shape)
        expr(e);
    }
    for (const Expr &c : k.constraints)
      expr(c);
    for (const Expr &e : k.launch.grid)
      expr(e);
    for (const Expr &e : k.launch.cluster)
      expr(e);
    block(k.body);
  }

private:
  void at(llvm::SMLoc loc) {
    std::pair<unsigned, unsigned> lc{0, 0};
    if (loc.isValid())
      if (unsigned buffer = sm_.FindBufferContainingLoc(loc))
        lc = sm_.getLineAndColumn(loc, buffer);
    out_.push_back(lc);
  }

  void expr(const Expr &e) {
    if (!e)
      return;
    at(e->loc);
    switch (e->kind) {
    case ExprKind::Unary:
      expr(as<Unary>(e).operand);
      break;
    case ExprKind::Binary:
      expr(as<Binary>(e).lhs);
      expr(as<Binary>(e).rhs);
      break;
    case ExprKind::Call:
      for (const Expr &a : as<Call>(e).args)
        expr(a);
      break;
    case ExprKind::Index: {
      const auto &x = as<Index>(e);
      expr(x.base);
      for (const Subscript &s : x.subscripts) {
        expr(s.begin);
        expr(s.end);
      }
      break;
    }
    default:
      break;
    }
  }

  void block(const Block &b) {
    for (const Stmt &s : b)
      stmt(s);
  }

  void stmt(const Stmt &s) {
    at(s->loc);
    switch (s->kind) {
    case StmtKind::BufferDecl:
      for (const Expr &e : as<BufferDecl>(s).shape)
        expr(e);
      break;
    case StmtKind::BarrierDecl:
      expr(as<BarrierDecl>(s).arraySize);
      expr(as<BarrierDecl>(s).count);
      break;
    case StmtKind::Let:
      expr(as<Let>(s).value);
      break;
    case StmtKind::For: {
      const auto &f = as<For>(s);
      expr(f.begin);
      expr(f.end);
      expr(f.step);
      block(f.body);
      break;
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      expr(i.cond);
      block(i.thenBody);
      block(i.elseBody);
      break;
    }
    case StmtKind::Store:
      expr(as<Store>(s).target);
      expr(as<Store>(s).value);
      break;
    case StmtKind::CallStmt:
      for (const CallArg &a : as<CallStmt>(s).args)
        expr(a.value);
      break;
    }
  }

  llvm::SourceMgr &sm_;
  SourceAnchors &out_;
};

// The first index of each location in `anchors`.
std::map<std::pair<unsigned, unsigned>, size_t> firstIndex(const SourceAnchors &anchors) {
  std::map<std::pair<unsigned, unsigned>, size_t> out;
  for (size_t i = 0; i < anchors.size(); ++i)
    out.emplace(anchors[i], i);
  return out;
}

// `text` with every "LINE:COL" that is a location of `index` replaced by the
// location of the same node in `to`.
std::string moveLocations(const std::string &text,
                          const std::map<std::pair<unsigned, unsigned>, size_t> &index,
                          const SourceAnchors &to) {
  std::string out;
  size_t i = 0;
  auto digits = [&](size_t p) {
    size_t e = p;
    while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e])))
      ++e;
    return e;
  };
  while (i < text.size()) {
    bool boundary = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
    size_t lineEnd = boundary ? digits(i) : i;
    if (lineEnd > i && lineEnd - i < 10 && lineEnd < text.size() && text[lineEnd] == ':') {
      size_t colEnd = digits(lineEnd + 1);
      if (colEnd > lineEnd + 1 && colEnd - lineEnd < 11 &&
          (colEnd == text.size() || !std::isalnum(static_cast<unsigned char>(text[colEnd])))) {
        unsigned line = unsigned(std::stoul(text.substr(i, lineEnd - i)));
        unsigned col = unsigned(std::stoul(text.substr(lineEnd + 1, colEnd - lineEnd - 1)));
        if (auto it = index.find({line, col}); it != index.end()) {
          out += fmt::format("{}:{}", to[it->second].first, to[it->second].second);
          i = colEnd;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

} // namespace

SourceAnchors sourceAnchors(const Kernel &normalForm, llvm::SourceMgr &sm) {
  SourceAnchors out;
  AnchorWalk(sm, out).kernel(normalForm);
  return out;
}

bool moveToCandidate(std::vector<StageResult> &stages, const SourceAnchors &from,
                     const SourceAnchors &to, const std::string &file, const std::string &kernel) {
  if (from.size() != to.size())
    return false;
  auto index = firstIndex(from);
  std::vector<StageResult> moved = stages;
  for (StageResult &s : moved) {
    s.reason = moveLocations(s.reason, index, to);
    for (RewardDiagnostic &d : s.diagnostics) {
      if (d.line != 0) {
        auto it = index.find({d.line, d.column});
        if (it == index.end())
          return false;
        d.line = to[it->second].first;
        d.column = to[it->second].second;
        d.file = file;
      }
      if (!d.kernel.empty())
        d.kernel = kernel;
      d.message = moveLocations(d.message, index, to);
      d.witness = moveLocations(d.witness, index, to);
    }
  }
  stages = std::move(moved);
  return true;
}

} // namespace tilescope::reward_detail
