// The parser's layout expressions (ParserImpl.h): axes, iterators, shard
// and replica sums, whole layouts.
#include "ir/ParserImpl.h"

#include "ir/LayoutPresets.h"
#include <fmt/format.h>

namespace tilescope::parse {

// --- layouts ---

std::optional<Axis> Parser::parseAxisSuffix() {
  if (!consume(Tok::At))
    return Axis::m;
  if (tok_.is(Tok::Ident))
    if (auto a = axisFromName(tok_.text.str())) {
      advance();
      return a;
    }
  error(tok_.loc(),
        fmt::format("unknown axis {}; axes are laneid, warpid, wgid, tid_in_wg, wid_in_wg, tx, "
                    "cbx, cby, cbz, bx, by, bz, pid, m, TLane, TCol, P, F, Bank",
                    found()));
  return std::nullopt;
}

Expr Parser::parseLayoutNumber() {
  // A literal, or an expression over kernel parameters that binds tighter
  // than `+` (which joins the parts of a layout): `BM * 64`, `(BM + 1)`.
  return parseBinary(binaryOpPrecedence(BinaryOp::Mul));
}

bool Parser::parseIters(std::vector<LayoutTerms::IterTerms> &iters) {
  // Either `(e0,e1,...):(s0@a0,...)` or a single `e:s@a`.
  if (consume(Tok::LParen)) {
    std::vector<Expr> extents;
    llvm::SMLoc extentsAt = tok_.loc();
    do {
      Expr e = parseLayoutNumber();
      if (!e)
        return false;
      extents.push_back(std::move(e));
    } while (consume(Tok::Comma));
    if (!expect(Tok::RParen, "')' closing the extents") || !expect(Tok::Colon, "':'") ||
        !expect(Tok::LParen, "'(' opening the strides"))
      return false;
    size_t i = 0;
    do {
      Expr s = parseLayoutNumber();
      if (!s)
        return false;
      auto a = parseAxisSuffix();
      if (!a)
        return false;
      iters.push_back({i < extents.size() ? extents[i] : IntImm::make(1), std::move(s), *a});
      ++i;
    } while (consume(Tok::Comma));
    if (!expect(Tok::RParen, "')' closing the strides"))
      return false;
    if (i != extents.size()) {
      error(extentsAt, fmt::format("{} extents but {} strides", extents.size(), i));
      return false;
    }
    return true;
  }
  Expr e = parseLayoutNumber();
  if (!e || !expect(Tok::Colon, "':' between extent and stride"))
    return false;
  Expr s = parseLayoutNumber();
  if (!s)
    return false;
  auto a = parseAxisSuffix();
  if (!a)
    return false;
  iters.push_back({std::move(e), std::move(s), *a});
  return true;
}

bool Parser::parseLayoutSum(LayoutTerms &terms, bool &haveShard) {
  bool haveReplica = false;
  do {
    llvm::SMLoc at = tok_.loc();
    if (tok_.isIdent("S") || tok_.isIdent("R")) {
      bool isShard = tok_.text == "S";
      if (isShard ? haveShard : haveReplica) {
        error(at, fmt::format("a layout has at most one {} part", isShard ? "S" : "R"));
        return false;
      }
      if (!isShard && !haveShard) {
        error(at, "the S part comes first in a layout");
        return false;
      }
      advance();
      if (!expect(Tok::LBracket, "'['"))
        return false;
      if (!parseIters(isShard ? terms.shard : terms.replica) || !expect(Tok::RBracket, "']'"))
        return false;
      (isShard ? haveShard : haveReplica) = true;
    } else if (tok_.is(Tok::Int) || tok_.is(Tok::Minus) || tok_.is(Tok::Ident) ||
               tok_.is(Tok::LParen)) {
      if (!haveShard) {
        error(at, "the S part comes first in a layout");
        return false;
      }
      Expr v = parseLayoutNumber();
      if (!v)
        return false;
      auto a = parseAxisSuffix();
      if (!a)
        return false;
      terms.offset.push_back({*a, std::move(v)});
    } else {
      error(at, fmt::format("expected S[...], R[...] or an offset k@axis, found {}", found()));
      return false;
    }
  } while (consume(Tok::Plus));
  return true;
}

// Every number of `terms` as a constant, or nothing when one names a name.
static std::optional<std::vector<int64_t>> constantNumbers(const std::vector<Expr> &exprs) {
  std::vector<int64_t> out;
  for (const Expr &e : exprs) {
    auto v = constantValue(e);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<LayoutSpec> Parser::parseLayout() {
  LayoutSpec spec;
  spec.loc = tok_.loc();
  LayoutTerms terms;
  bool haveShard = false;
  std::string why;

  if (tok_.is(Tok::Ident) && !tok_.isIdent("S") && !tok_.isIdent("R") && !tok_.isIdent("swizzle")) {
    const LayoutPreset *preset = findLayoutPreset(tok_.text.str());
    if (!preset) {
      error(tok_.loc(), fmt::format("unknown layout '{}': expected S[...], swizzle(...) or a "
                                    "preset such as wgmma_acc(64, 128)",
                                    tok_.text.str()));
      return std::nullopt;
    }
    advance();
    if (!expect(Tok::LParen, "'(' after the preset name"))
      return std::nullopt;
    std::vector<llvm::SMLoc> argLocs; // where each argument starts
    if (!tok_.is(Tok::RParen)) {
      do {
        argLocs.push_back(tok_.loc());
        Expr v = parseExpr();
        if (!v)
          return std::nullopt;
        terms.presetArgs.push_back(std::move(v));
      } while (consume(Tok::Comma));
    }
    llvm::SMLoc close = tok_.loc();
    if (!expect(Tok::RParen, "')'"))
      return std::nullopt;
    if (terms.presetArgs.size() != preset->arity) {
      // Point at the first extra argument, or at ')' when some are missing.
      error(terms.presetArgs.size() > preset->arity ? argLocs[preset->arity] : close,
            fmt::format("preset {} takes {} argument{} ({}), not {}", preset->name, preset->arity,
                        preset->arity == 1 ? "" : "s", preset->params, terms.presetArgs.size()));
      return std::nullopt;
    }
    spec.preset = std::string(preset->name);
    auto args = constantNumbers(terms.presetArgs);
    if (!args) {
      spec.terms = std::make_shared<const LayoutTerms>(std::move(terms));
      return spec;
    }
    spec.presetArgs = *args;
    auto l = preset->build(spec.presetArgs, &why);
    if (!l) {
      // The argument at fault: the first whose example value makes the
      // call build (the table's messages each name one argument).
      llvm::SMLoc at = argLocs.empty() ? spec.loc : argLocs.front();
      for (size_t i = 0; i < spec.presetArgs.size() && i < preset->exampleArgs.size(); ++i) {
        std::vector<int64_t> trial = spec.presetArgs;
        trial[i] = preset->exampleArgs[i];
        std::string ignored;
        if (preset->build(trial, &ignored)) {
          at = argLocs[i];
          break;
        }
      }
      error(at, fmt::format("{}: {}", preset->name, why));
      return std::nullopt;
    }
    spec.layout = std::move(*l);
    return spec;
  }

  bool swizzled = consumeIdent("swizzle");
  if (swizzled) {
    if (!expect(Tok::LParen, "'(' after 'swizzle'"))
      return std::nullopt;
    llvm::SMLoc at = tok_.loc();
    if (tok_.is(Tok::Bytes)) {
      int64_t bytes = 0;
      if (tok_.text.drop_back().getAsInteger(10, bytes))
        bytes = 0;
      advance();
      if (!expect(Tok::Comma, "',' after the swizzle mode"))
        return std::nullopt;
      auto dtype = parseDtype();
      if (!dtype)
        return std::nullopt;
      terms.swizzle = Swizzle::fromMode(static_cast<int>(bytes), *dtype, &why);
      if (!terms.swizzle) {
        error(at, why);
        return std::nullopt;
      }
    } else {
      int params[3];
      for (int i = 0; i < 3; ++i) {
        auto v = parseIntLiteral(true);
        if (!v)
          return std::nullopt;
        if (*v < 0 || *v > 20) {
          error(at, fmt::format("swizzle parameters are in [0, 20], not {}", *v));
          return std::nullopt;
        }
        params[i] = static_cast<int>(*v);
        if (i < 2 && !expect(Tok::Comma, "','"))
          return std::nullopt;
      }
      terms.swizzle = Swizzle{params[0], params[1], params[2]};
    }
    if (!expect(Tok::Comma, "',' before the swizzled layout"))
      return std::nullopt;
  }
  if (!parseLayoutSum(terms, haveShard))
    return std::nullopt;
  if (!haveShard) {
    error(spec.loc, "a layout needs an S[...] part");
    return std::nullopt;
  }
  if (swizzled && !expect(Tok::RParen, "')' closing swizzle"))
    return std::nullopt;
  std::vector<Expr> numbers;
  for (const auto *part : {&terms.shard, &terms.replica})
    for (const auto &it : *part) {
      numbers.push_back(it.extent);
      numbers.push_back(it.stride);
    }
  for (const auto &o : terms.offset)
    numbers.push_back(o.second);
  if (!constantNumbers(numbers)) {
    spec.terms = std::make_shared<const LayoutTerms>(std::move(terms));
    return spec;
  }
  auto l = buildLayout(
      terms, [](const Expr &e) { return constantValue(e); }, &why);
  if (!l) {
    error(spec.loc, why);
    return std::nullopt;
  }
  spec.layout = std::move(*l);
  return spec;
}

std::optional<LayoutSpec> Parser::parseWholeLayout() {
  auto spec = parseLayout();
  if (spec && !tok_.is(Tok::Eof)) {
    error(tok_.loc(), fmt::format("unexpected {} after the layout", found()));
    return std::nullopt;
  }
  return spec;
}

} // namespace tilescope::parse
