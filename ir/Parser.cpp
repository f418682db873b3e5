#include "ir/Parser.h"
#include "ir/ParserImpl.h"

#include "ir/LayoutFacts.h"
#include "ir/LayoutPresets.h"
#include "ir/Lexer.h"
#include "ir/Printer.h"

#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tilescope {

// Words that start statements or clauses; never names in expressions, so an
// unfinished expression stops at the next statement instead of eating it.
bool isReservedWord(llvm::StringRef w) {
  for (const char *k : {"let", "for", "if", "else", "kernel", "launch", "where", "in", "step",
                        "unroll", "pipelined", "shared", "reg", "tmem", "global", "mbarrier"})
    if (w == k)
      return true;
  return false;
}

namespace parse {

// The spellings come from the printer's tables (Stmt.h), read backwards.
std::optional<ExecScope> scopeFromName(llvm::StringRef s) {
  for (ExecScope e : {ExecScope::Warp, ExecScope::Warpgroup, ExecScope::Cta, ExecScope::Cluster})
    if (std::string_view(s) == execScopePrefix(e))
      return e;
  return std::nullopt;
}

void Parser::syncStatement(const char *startedAt) {
  int depth = 0;
  bool moved = tok_.text.data() != startedAt;
  while (!tok_.is(Tok::Eof) && !fatal_) {
    if (depth == 0 && moved && tok_.firstOnLine)
      return;
    if (tok_.is(Tok::LBrace)) {
      ++depth;
    } else if (tok_.is(Tok::RBrace)) {
      if (depth == 0)
        return;
      --depth;
    }
    advance();
    moved = true;
  }
}

void Parser::syncTopLevel() {
  while (!tok_.is(Tok::Eof) && !fatal_) {
    advance();
    if (tok_.firstOnLine && tok_.isIdent("kernel"))
      return;
  }
}

Module Parser::parseModule() {
  Module module;
  while (!tok_.is(Tok::Eof) && !fatal_) {
    if (!tok_.isIdent("kernel")) {
      error(tok_.loc(), fmt::format("expected 'kernel', found {}", found()));
      syncTopLevel();
      continue;
    }
    std::vector<std::string> leading;
    for (const SourceComment &c : takeComments())
      leading.push_back(c.text.str());
    if (auto k = parseKernel()) {
      module.kernels.push_back(std::move(*k));
      comments_->kernelBefore.push_back(std::move(leading));
      comments_->kernelOpen.push_back(std::move(lastKernelBody_.header));
      comments_->kernelBodyEnd.push_back(std::move(lastKernelBody_.close));
    }
  }
  if (module.kernels.empty() && !diag_.hasErrors())
    error(tok_.loc(), "expected at least one kernel");
  if (!fatal_)
    for (const SourceComment &c : takeComments())
      comments_->fileEnd.push_back(c.text.str());
  module.comments = comments_;
  return module;
}

std::optional<Kernel> Parser::parseKernel() {
  Kernel k;
  k.loc = tok_.loc();
  advance(); // 'kernel'
  if (!tok_.is(Tok::Ident)) {
    error(tok_.loc(), fmt::format("expected kernel name, found {}", found()));
    syncTopLevel();
    return std::nullopt;
  }
  k.name = tok_.text.str();
  advance();
  bool ok = expect(Tok::LParen, "'(' after the kernel name");
  if (ok && !tok_.is(Tok::RParen)) {
    do {
      ok = parseParam(k.params);
    } while (ok && consume(Tok::Comma));
  }
  ok = ok && expect(Tok::RParen, "')' closing the parameter list");
  while (ok && tok_.isIdent("param"))
    ok = parseSpaceParam(k.space);
  while (ok && tok_.isIdent("point"))
    ok = parseNamedPoint(k.space);
  if (ok && consumeIdent("where")) {
    do {
      Expr c = parseExpr();
      if (!c) {
        ok = false;
        break;
      }
      k.constraints.push_back(c);
    } while (consume(Tok::Comma));
  }
  ok = ok && parseLaunch(k.launch);
  if (ok)
    addDeviceParams(k);
  if (!ok) {
    // Resume at the body if there is one, so its errors are reported too.
    while (!tok_.is(Tok::Eof) && !tok_.is(Tok::LBrace) && !fatal_ &&
           !(tok_.firstOnLine && tok_.isIdent("kernel")))
      advance();
    if (!tok_.is(Tok::LBrace))
      return std::nullopt;
  }
  lastKernelBody_ = {};
  if (!parseBlock(k.body, &lastKernelBody_))
    return std::nullopt;
  return ok ? std::optional<Kernel>(std::move(k)) : std::nullopt;
}

std::optional<Dtype> Parser::parseDtype() {
  if (tok_.is(Tok::Ident))
    if (auto d = dtypeFromName(tok_.text.str())) {
      advance();
      return d;
    }
  error(tok_.loc(),
        fmt::format("expected a dtype (f32, bf16, f8e4m3, i32, ...), found {}", found()));
  return std::nullopt;
}

bool Parser::parseExprList(std::vector<Expr> &out, Tok close, llvm::StringRef closeText) {
  if (!tok_.is(close)) {
    do {
      Expr e = parseExpr();
      if (!e)
        return false;
      out.push_back(std::move(e));
    } while (consume(Tok::Comma));
  }
  return expect(close, closeText);
}

bool Parser::parseParam(std::vector<Param> &out) {
  Param p;
  p.loc = tok_.loc();
  if (!tok_.is(Tok::Ident)) {
    error(tok_.loc(), fmt::format("expected a parameter name, found {}", found()));
    return false;
  }
  p.name = tok_.text.str();
  advance();
  if (!expect(Tok::Colon, "':' after the parameter name"))
    return false;
  if (consumeIdent("global")) {
    p.isTensor = true;
    auto d = parseDtype();
    if (!d)
      return false;
    p.dtype = *d;
    if (!expect(Tok::LBracket, "'[' starting the tensor shape"))
      return false;
    if (!parseExprList(p.shape, Tok::RBracket, "']' closing the shape"))
      return false;
    if (p.shape.empty()) {
      error(p.loc, "a tensor parameter needs at least one dimension");
      return false;
    }
    if (consumeIdent("placement")) {
      if (!expect(Tok::LParen, "'(' after 'placement'"))
        return false;
      p.placement = parseLayout();
      if (!p.placement || !expect(Tok::RParen, "')' closing the placement"))
        return false;
    }
  } else {
    auto d = parseDtype();
    if (!d)
      return false;
    p.dtype = *d;
  }
  out.push_back(std::move(p));
  return true;
}

// `param NAME in {v, ...}` (integers, enumeration names or booleans) or
// `param NAME in B .. E [step S]` (integers, half-open like `for`).
bool Parser::parseSpaceParam(Space &space) {
  advance(); // 'param'
  SpaceParam p;
  p.loc = tok_.loc();
  if (!tok_.is(Tok::Ident) || isReservedWord(tok_.text)) {
    error(tok_.loc(), fmt::format("expected a parameter name after 'param', found {}", found()));
    return false;
  }
  p.name = tok_.text.str();
  advance();
  if (!expectIdent("in"))
    return false;
  if (consume(Tok::LBrace)) {
    do {
      llvm::SMLoc at = tok_.loc();
      Expr v = parsePointValue();
      if (!v)
        return false;
      SpaceParam::Kind kind = v->kind == ExprKind::IntImm    ? SpaceParam::Kind::IntSet
                              : v->kind == ExprKind::BoolImm ? SpaceParam::Kind::Bool
                                                             : SpaceParam::Kind::Enum;
      if (!p.values.empty() && kind != p.kind) {
        error(at,
              fmt::format("the values of parameter '{}' mix integers, booleans and names", p.name));
        return false;
      }
      p.kind = kind;
      for (const Expr &seen : p.values)
        if (equal(seen, v)) {
          error(at, fmt::format("value {} is listed twice", print(v)));
          return false;
        }
      p.values.push_back(std::move(v));
    } while (consume(Tok::Comma));
    if (!expect(Tok::RBrace, "'}' closing the parameter's values"))
      return false;
  } else {
    p.kind = SpaceParam::Kind::IntRange;
    llvm::SMLoc at = tok_.loc();
    auto b = parseIntLiteral(true);
    if (!b || !expect(Tok::DotDot, "'..' between the range bounds or '{' starting a set"))
      return false;
    auto e = parseIntLiteral(true);
    if (!e)
      return false;
    p.begin = *b;
    p.end = *e;
    if (consumeIdent("step")) {
      auto st = parseIntLiteral(false);
      if (!st)
        return false;
      p.step = *st;
    }
    if (p.step < 1 || p.end <= p.begin) {
      error(at, fmt::format("the range {} of parameter '{}' is empty (ranges are half-open, "
                            "like a loop's: 2 .. 9 is 2 to 8)",
                            p.domainText(), p.name));
      return false;
    }
  }
  // `= v`: the default, which a point may leave out.
  if (tok_.is(Tok::Assign)) {
    advance();
    Expr v = parsePointValue();
    if (!v)
      return false;
    if (!p.contains(v)) {
      error(v->loc, fmt::format("the default {} is not a value of parameter '{}' (its values: {})",
                                print(v), p.name, p.domainText()));
      return false;
    }
    p.defaultValue = std::move(v);
  }
  if (space.find(p.name)) {
    error(p.loc, fmt::format("parameter '{}' is declared twice", p.name));
    return false;
  }
  space.params.push_back(std::move(p));
  return true;
}

// A value as a point or a domain writes it: an integer (maybe negative),
// `true` / `false`, or an enumeration name.
Expr Parser::parsePointValue() {
  llvm::SMLoc at = tok_.loc();
  if (tok_.is(Tok::Int) || tok_.is(Tok::Minus)) {
    auto v = parseIntLiteral(true);
    return v ? IntImm::make(*v, at) : nullptr;
  }
  if (tok_.is(Tok::Ident) && !isReservedWord(tok_.text)) {
    std::string name = tok_.text.str();
    advance();
    if (name == "true" || name == "false")
      return BoolImm::make(name == "true", at);
    return Var::make(std::move(name), at);
  }
  error(at, fmt::format("expected an integer, true, false or a name, found {}", found()));
  return nullptr;
}

// `point NAME(P = v, ...)`, every parameter given once; kept in the order
// the parameters are declared.
bool Parser::parseNamedPoint(Space &space) {
  advance(); // 'point'
  NamedPoint point;
  point.loc = tok_.loc();
  if (!tok_.is(Tok::Ident)) {
    error(tok_.loc(), fmt::format("expected a point name after 'point', found {}", found()));
    return false;
  }
  point.name = tok_.text.str();
  advance();
  if (!expect(Tok::LParen, "'(' after the point name"))
    return false;
  Point given;
  do {
    llvm::SMLoc at = tok_.loc();
    if (!tok_.is(Tok::Ident)) {
      error(at, fmt::format("expected a parameter name, found {}", found()));
      return false;
    }
    std::string name = tok_.text.str();
    advance();
    if (!expect(Tok::Assign, "'=' after the parameter name"))
      return false;
    Expr v = parsePointValue();
    if (!v)
      return false;
    const SpaceParam *p = space.find(name);
    if (!p) {
      error(at, fmt::format("point '{}' sets '{}', which is not a parameter", point.name, name));
      return false;
    }
    for (const PointValue &g : given)
      if (g.name == name) {
        error(at, fmt::format("point '{}' sets '{}' twice", point.name, name));
        return false;
      }
    if (!p->contains(v)) {
      error(v->loc, fmt::format("{} is not a value of parameter '{}' (its values: {})", print(v),
                                name, p->domainText()));
      return false;
    }
    given.push_back({std::move(name), std::move(v)});
  } while (consume(Tok::Comma));
  if (!expect(Tok::RParen, "')' closing the point"))
    return false;
  for (const SpaceParam &p : space.params) {
    auto it = std::find_if(given.begin(), given.end(),
                           [&](const PointValue &g) { return g.name == p.name; });
    if (it == given.end() && !p.defaultValue) {
      error(point.loc,
            fmt::format("point '{}' gives no value for parameter '{}'", point.name, p.name));
      return false;
    }
    point.values.push_back(space.valueOf(p, it == given.end() ? p.defaultValue : it->value));
  }
  if (space.findPoint(point.name)) {
    error(point.loc, fmt::format("point '{}' is declared twice", point.name));
    return false;
  }
  space.points.push_back(std::move(point));
  return true;
}

bool Parser::parseLaunch(Launch &launch) {
  launch.loc = tok_.loc();
  if (!expectIdent("launch"))
    return false;
  bool sawThreads = false, sawTarget = false, sawGrid = false;
  // `word(expr)` after the item's word: the expression, with where it starts.
  auto parenthesized = [&](llvm::SMLoc &at) -> Expr {
    advance();
    if (!expect(Tok::LParen, "'('"))
      return nullptr;
    at = tok_.loc();
    Expr e = parseExpr();
    if (!e || !expect(Tok::RParen, "')'"))
      return nullptr;
    return e;
  };
  while (tok_.is(Tok::Ident)) {
    llvm::SMLoc at = tok_.loc();
    llvm::StringRef word = tok_.text;
    if (word == "grid" || word == "cluster") {
      advance();
      auto &dims = word == "grid" ? launch.grid : launch.cluster;
      if (!expect(Tok::LParen, "'('") || !parseExprList(dims, Tok::RParen, "')'"))
        return false;
      if (dims.empty() || dims.size() > 3) {
        error(at, fmt::format("{} takes 1 to 3 extents, not {}", word.str(), dims.size()));
        return false;
      }
      sawGrid |= word == "grid";
    } else if (word == "devices") {
      advance();
      if (!expect(Tok::LParen, "'('") || !parseExprList(launch.devices, Tok::RParen, "')'"))
        return false;
      if (launch.devices.size() != 1) {
        error(at, fmt::format("devices takes one device count, not {}", launch.devices.size()));
        return false;
      }
    } else if (word == "threads") {
      llvm::SMLoc numAt;
      Expr count = parenthesized(numAt);
      if (!count)
        return false;
      auto n = constantValue(count);
      if (!n) { // names kernel parameters: folded when a point is instantiated
        launch.threadsExpr = std::move(count);
        sawThreads = true;
        continue;
      }
      if (*n < 1 || *n > 1024) {
        error(numAt, fmt::format("threads per CTA must be in [1, 1024], not {}", *n));
        return false;
      }
      launch.threads = *n;
      sawThreads = true;
    } else if (word == "ctas_per_sm") {
      llvm::SMLoc numAt;
      Expr count = parenthesized(numAt);
      if (!count)
        return false;
      auto n = constantValue(count);
      if (!n) { // names kernel parameters: folded when a point is instantiated
        launch.ctasPerSmExpr = std::move(count);
        continue;
      }
      if (*n < 1 || *n > 32) {
        error(numAt, "ctas_per_sm takes a constant in [1, 32]");
        return false;
      }
      launch.ctasPerSm = *n;
    } else if (word == "target") {
      advance();
      if (!expect(Tok::LParen, "'('"))
        return false;
      auto t = tok_.is(Tok::Ident) ? targetFromName(tok_.text.str()) : std::nullopt;
      if (!t) {
        error(tok_.loc(),
              fmt::format("expected a target (sm_80, sm_90a, sm_100a), found {}", found()));
        return false;
      }
      advance();
      if (!expect(Tok::RParen, "')'"))
        return false;
      launch.target = *t;
      sawTarget = true;
    } else {
      error(at,
            fmt::format("unknown launch item '{}' (devices, grid, cluster, threads, ctas_per_sm, target)",
                        word.str()));
      return false;
    }
  }
  if (!sawGrid || !sawThreads || !sawTarget) {
    error(launch.loc, fmt::format("launch needs {}", !sawGrid      ? "grid(...)"
                                                     : !sawThreads ? "threads(...)"
                                                                   : "target(...)"));
    return false;
  }
  return true;
}

bool Parser::parseBlock(Block &out, BlockComments *comments) {
  DepthGuard guard(*this);
  if (!guard.ok)
    return false;
  llvm::SMLoc open = tok_.loc();
  if (!expect(Tok::LBrace, "'{'"))
    return false;
  // A comment on the line of the `{` belongs to the header that opened it.
  const auto &all = lexer_.comments();
  if (comments && nextComment_ < all.size() && all[nextComment_].pos < tok_.text.data() &&
      !all[nextComment_].ownLine)
    comments->header = all[nextComment_++].text.str();
  while (!tok_.is(Tok::RBrace) && !tok_.is(Tok::Eof) && !fatal_)
    parseStatement(out);
  if (tok_.is(Tok::RBrace))
    for (const SourceComment &c : takeComments()) {
      if (!c.ownLine && !out.empty())
        placeAfter(out, out.size() - 1, c);
      else if (comments)
        comments->close.push_back(c.text.str());
    }
  if (fatal_)
    return false;
  if (!tok_.is(Tok::RBrace)) {
    error(tok_.loc(), "expected '}' before end of file");
    diag_.note(open, "the block opened here");
    return false;
  }
  advance();
  return true;
}

void Parser::parseStatement(Block &out) {
  const char *start = tok_.text.data();
  std::vector<SourceComment> pending = takeComments();
  size_t first = out.size();
  std::vector<std::string> leading;
  for (const SourceComment &c : pending) {
    if (!c.ownLine && first > 0)
      placeAfter(out, first - 1, c);
    else
      leading.push_back(c.text.str());
  }
  if (consume(Tok::Semi))
    return;
  Stmt s;
  bool ok = true;
  if (tok_.is(Tok::Ident)) {
    llvm::StringRef w = tok_.text;
    if (auto scope = memScopeFromName(std::string_view(w)); scope && peek().is(Tok::Ident)) {
      llvm::SMLoc declLoc = tok_.loc();
      advance();
      s = parseBufferDecl(*scope, declLoc);
      ok = bool(s);
    } else if (w == "mbarrier" && peek().is(Tok::Ident)) {
      ok = parseBarrierDecl(out);
    } else if (w == "let") {
      ok = parseLet(out);
    } else if (w == "for") {
      s = parseFor();
      ok = bool(s);
    } else if (w == "if") {
      s = parseIf();
      ok = bool(s);
    } else {
      s = parseCallOrStore();
      ok = bool(s);
    }
  } else {
    error(tok_.loc(), fmt::format("expected a statement, found {}", found()));
    ok = false;
  }
  if (s)
    out.push_back(std::move(s));
  if (out.size() > first && !leading.empty())
    comments_->before[out[first].get()] = std::move(leading);
  if (!ok)
    syncStatement(start);
}

Stmt Parser::parseBufferDecl(MemScope scope, llvm::SMLoc loc) {
  std::string name = tok_.text.str();
  advance();
  if (!expect(Tok::Colon, "':' after the buffer name"))
    return nullptr;
  auto dtype = parseDtype();
  if (!dtype || !expect(Tok::LBracket, "'[' starting the buffer shape"))
    return nullptr;
  std::vector<Expr> shape;
  if (!parseExprList(shape, Tok::RBracket, "']' closing the shape"))
    return nullptr;
  if (shape.empty()) {
    error(loc, "a buffer needs at least one dimension");
    return nullptr;
  }
  std::optional<LayoutSpec> layout;
  if (consumeIdent("layout")) {
    if (!expect(Tok::LParen, "'(' after 'layout'"))
      return nullptr;
    layout = parseLayout();
    if (!layout || !expect(Tok::RParen, "')' closing the layout"))
      return nullptr;
  }
  return BufferDecl::make(scope, std::move(name), *dtype, std::move(shape), std::move(layout), loc);
}

bool Parser::parseBarrierDecl(Block &out) {
  advance(); // 'mbarrier'
  do {
    llvm::SMLoc loc = tok_.loc();
    if (!tok_.is(Tok::Ident)) {
      error(tok_.loc(), fmt::format("expected a barrier name, found {}", found()));
      return false;
    }
    std::string name = tok_.text.str();
    advance();
    Expr arraySize, count;
    if (consume(Tok::LBracket)) {
      arraySize = parseExpr();
      if (!arraySize || !expect(Tok::RBracket, "']'"))
        return false;
    }
    if (consume(Tok::LParen)) {
      if (!expectIdent("count") || !expect(Tok::Assign, "'='"))
        return false;
      count = parseExpr();
      if (!count || !expect(Tok::RParen, "')'"))
        return false;
    }
    out.push_back(BarrierDecl::make(std::move(name), arraySize, count, loc));
  } while (consume(Tok::Comma));
  return true;
}

bool Parser::parseLet(Block &out) {
  advance(); // 'let'
  do {
    llvm::SMLoc loc = tok_.loc();
    if (!tok_.is(Tok::Ident)) {
      error(tok_.loc(), fmt::format("expected a name after 'let', found {}", found()));
      return false;
    }
    std::string name = tok_.text.str();
    advance();
    if (!expect(Tok::Assign, "'=' in 'let'"))
      return false;
    Expr value = parseExpr();
    if (!value)
      return false;
    out.push_back(Let::make(std::move(name), std::move(value), loc));
  } while (consume(Tok::Comma));
  return true;
}

Stmt Parser::parseFor() {
  llvm::SMLoc loc = tok_.loc();
  advance(); // 'for'
  if (!tok_.is(Tok::Ident)) {
    error(tok_.loc(), fmt::format("expected a loop variable, found {}", found()));
    return nullptr;
  }
  std::string var = tok_.text.str();
  advance();
  if (!expectIdent("in"))
    return nullptr;
  Expr begin = parseExpr();
  if (!begin || !expect(Tok::DotDot, "'..' between the loop bounds"))
    return nullptr;
  Expr end = parseExpr();
  if (!end)
    return nullptr;
  Expr step;
  int64_t unroll = 0, stages = 0;
  while (tok_.is(Tok::Ident)) {
    llvm::SMLoc at = tok_.loc();
    if (consumeIdent("step")) {
      step = parseExpr();
      if (!step)
        return nullptr;
    } else if (consumeIdent("unroll")) {
      unroll = -1;
      if (consume(Tok::LParen)) {
        auto n = parseIntLiteral(false);
        if (!n || !expect(Tok::RParen, "')'"))
          return nullptr;
        if (*n < 1) {
          error(at, "unroll factor must be at least 1");
          return nullptr;
        }
        unroll = *n;
      }
    } else if (consumeIdent("pipelined")) {
      if (!expect(Tok::LParen, "'(' after 'pipelined'"))
        return nullptr;
      auto n = parseIntLiteral(false);
      if (!n || !expect(Tok::RParen, "')'"))
        return nullptr;
      if (*n < 1) {
        error(at, "pipeline stages must be at least 1");
        return nullptr;
      }
      stages = *n;
    } else {
      error(at, fmt::format("expected 'step', 'unroll', 'pipelined' or '{{', found {}", found()));
      return nullptr;
    }
  }
  if (!step)
    step = IntImm::make(1, loc);
  Block body;
  BlockComments bodyComments;
  if (!parseBlock(body, &bodyComments))
    return nullptr;
  Stmt node = For::make(std::move(var), std::move(begin), std::move(end), std::move(step), unroll,
                        stages, std::move(body), loc);
  attachBlockComments(node, 0, bodyComments);
  return node;
}

Stmt Parser::parseIf() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  llvm::SMLoc loc = tok_.loc();
  advance(); // 'if'
  Expr cond = parseExpr();
  if (!cond)
    return nullptr;
  Block thenBody, elseBody;
  BlockComments thenComments, elseComments;
  if (!parseBlock(thenBody, &thenComments))
    return nullptr;
  if (consumeIdent("else")) {
    if (tok_.isIdent("if")) {
      Stmt nested = parseIf();
      if (!nested)
        return nullptr;
      elseBody.push_back(std::move(nested));
    } else if (!parseBlock(elseBody, &elseComments)) {
      return nullptr;
    }
  }
  Stmt node = If::make(std::move(cond), std::move(thenBody), std::move(elseBody), loc);
  attachBlockComments(node, 0, thenComments);
  attachBlockComments(node, 1, elseComments);
  return node;
}

Stmt Parser::parseCallOrStore() {
  llvm::SMLoc loc = tok_.loc();
  if (peek().is(Tok::LBracket)) {
    Expr base = Var::make(tok_.text.str(), loc);
    advance();
    Expr target = parsePostfix(std::move(base));
    if (!target)
      return nullptr;
    if (!expect(Tok::Assign, "'=' in a store"))
      return nullptr;
    Expr value = parseExpr();
    if (!value)
      return nullptr;
    return Store::make(std::move(target), std::move(value), loc);
  }
  std::vector<std::string> parts{tok_.text.str()};
  advance();
  while (consume(Tok::Dot)) {
    if (!tok_.is(Tok::Ident)) {
      error(tok_.loc(), fmt::format("expected a name after '.', found {}", found()));
      return nullptr;
    }
    parts.push_back(tok_.text.str());
    advance();
  }
  ExecScope scope = ExecScope::Thread;
  if (parts.size() > 1)
    if (auto s = scopeFromName(parts[0])) {
      scope = *s;
      parts.erase(parts.begin());
    }
  std::string callee;
  for (const std::string &p : parts)
    callee += (callee.empty() ? "" : ".") + p;
  if (!tok_.is(Tok::LParen)) {
    error(tok_.loc(), fmt::format("expected '(' to call '{}' or '[' to store into it, found {}",
                                  callee, found()));
    return nullptr;
  }
  advance();
  std::vector<CallArg> args;
  if (!tok_.is(Tok::RParen)) {
    do {
      CallArg arg;
      arg.loc = tok_.loc();
      if (tok_.is(Tok::Ident) && peek().is(Tok::Assign)) {
        arg.keyword = tok_.text.str();
        advance();
        advance();
      }
      arg.value = parseExpr();
      if (!arg.value)
        return nullptr;
      args.push_back(std::move(arg));
    } while (consume(Tok::Comma));
  }
  if (!expect(Tok::RParen, "')' closing the call"))
    return nullptr;
  return CallStmt::make(scope, std::move(callee), std::move(args), loc);
}

} // namespace parse

Module parseModule(unsigned bufferId, Diagnostics &diag) {
  parse::Parser parser(diag.sourceMgr().getMemoryBuffer(bufferId)->getBuffer(), diag);
  return parser.parseModule();
}

Module parseModuleText(llvm::StringRef text, llvm::StringRef name, Diagnostics &diag) {
  unsigned id = diag.sourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  return parseModule(id, diag);
}

std::optional<LayoutSpec> parseLayoutText(llvm::StringRef text, llvm::StringRef bufferName,
                                          Diagnostics &diag) {
  unsigned id = diag.sourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  parse::Parser parser(diag.sourceMgr().getMemoryBuffer(id)->getBuffer(), diag);
  return parser.parseWholeLayout();
}

std::string LayoutSpec::str() const {
  if (terms)
    return terms->str(preset);
  if (preset.empty())
    return layout.str();
  std::string out = preset + "(";
  for (size_t i = 0; i < presetArgs.size(); ++i)
    out += (i ? ", " : "") + std::to_string(presetArgs[i]);
  return out + ")";
}

} // namespace tilescope
