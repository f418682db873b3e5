// The parser's expressions (ParserImpl.h): literals, operators by
// precedence, primaries, postfix subscripts.
#include "ir/ParserImpl.h"

#include <fmt/format.h>

namespace tilescope::parse {

std::optional<int64_t> Parser::parseIntLiteral(bool allowNegative) {
  llvm::SMLoc at = tok_.loc();
  bool negative = allowNegative && consume(Tok::Minus);
  if (!tok_.is(Tok::Int)) {
    error(tok_.loc(), fmt::format("expected an integer, found {}", found()));
    return std::nullopt;
  }
  int64_t v = 0;
  if (tok_.text.getAsInteger(10, v)) {
    error(at, "integer literal does not fit in 64 bits");
    return std::nullopt;
  }
  advance();
  return negative ? -v : v;
}

Expr Parser::parseBinary(int minPrec) {
  Expr lhs = parseUnary();
  while (lhs) {
    BinaryOp op;
    if (!isBinaryOp(tok_.kind, op) || binaryOpPrecedence(op) < minPrec)
      break;
    llvm::SMLoc at = tok_.loc();
    advance();
    Expr rhs = parseBinary(binaryOpPrecedence(op) + 1);
    if (!rhs)
      return nullptr;
    lhs = Binary::make(op, std::move(lhs), std::move(rhs), at);
  }
  return lhs;
}

Expr Parser::parseUnary() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  llvm::SMLoc at = tok_.loc();
  if (consume(Tok::Minus)) {
    Expr e = parseUnary();
    return e ? Unary::make(UnaryOp::Neg, std::move(e), at) : nullptr;
  }
  if (consume(Tok::Bang)) {
    Expr e = parseUnary();
    return e ? Unary::make(UnaryOp::Not, std::move(e), at) : nullptr;
  }
  Expr e = parsePrimary();
  return e ? parsePostfix(std::move(e)) : nullptr;
}

Expr Parser::parsePrimary() {
  llvm::SMLoc at = tok_.loc();
  switch (tok_.kind) {
  case Tok::Int: {
    auto v = parseIntLiteral(false);
    return v ? IntImm::make(*v, at) : nullptr;
  }
  case Tok::Float: {
    double v = std::strtod(tok_.text.str().c_str(), nullptr);
    if (!std::isfinite(v)) {
      error(at, "float literal is out of range");
      return nullptr;
    }
    advance();
    return FloatImm::make(v, at);
  }
  case Tok::String: {
    std::string s = tok_.text.drop_front().drop_back().str();
    advance();
    return StringImm::make(std::move(s), at);
  }
  case Tok::LParen: {
    advance();
    Expr e = parseExpr();
    if (!e || !expect(Tok::RParen, "')'"))
      return nullptr;
    return e;
  }
  case Tok::Ident: {
    if (isReservedWord(tok_.text)) {
      error(at, fmt::format("expected an expression, found {}", found()));
      return nullptr;
    }
    std::string name = tok_.text.str();
    advance();
    if (name == "true" || name == "false")
      return BoolImm::make(name == "true", at);
    // threadIdx.x, blockIdx.y, clusterCtaIdx.z
    if ((name == "threadIdx" || name == "blockIdx" || name == "clusterCtaIdx") &&
        tok_.is(Tok::Dot)) {
      advance();
      if (tok_.is(Tok::Ident))
        name += "." + tok_.text.str();
      auto b = builtinFromName(name);
      if (!b) {
        error(tok_.loc(), fmt::format("unknown builtin '{}'", name));
        return nullptr;
      }
      advance();
      return Builtin::make(*b, at);
    }
    if (auto b = builtinFromName(name))
      return Builtin::make(*b, at);
    if (tok_.is(Tok::LParen)) {
      advance();
      std::vector<Expr> args;
      if (!parseExprList(args, Tok::RParen, "')' closing the call"))
        return nullptr;
      return Call::make(std::move(name), std::move(args), at);
    }
    return Var::make(std::move(name), at);
  }
  default:
    error(at, fmt::format("expected an expression, found {}", found()));
    return nullptr;
  }
}

Expr Parser::parsePostfix(Expr base) {
  while (tok_.is(Tok::LBracket)) {
    llvm::SMLoc at = tok_.loc();
    advance();
    std::vector<Subscript> subs;
    do {
      Subscript s;
      if (!parseSubscript(s))
        return nullptr;
      subs.push_back(std::move(s));
    } while (consume(Tok::Comma));
    if (!expect(Tok::RBracket, "']' closing the subscripts"))
      return nullptr;
    (void)at;
    llvm::SMLoc start = base->loc;
    base = Index::make(std::move(base), std::move(subs), start);
  }
  return base;
}

bool Parser::parseSubscript(Subscript &out) {
  if (tok_.is(Tok::Colon) && (peek().is(Tok::Comma) || peek().is(Tok::RBracket))) {
    advance();
    out.kind = Subscript::Full;
    return true;
  }
  out.begin = parseExpr();
  if (!out.begin)
    return false;
  if (!consume(Tok::Colon)) {
    out.kind = Subscript::Point;
    return true;
  }
  out.kind = consume(Tok::Plus) ? Subscript::Extent : Subscript::Range;
  out.end = parseExpr();
  return bool(out.end);
}

} // namespace tilescope::parse
