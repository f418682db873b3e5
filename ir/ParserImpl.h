// Internal to the parser (ir/Parser.h): the recursive-descent parser's
// state and its parts, one file each: Parser.cpp (kernels, declarations,
// statements), ParserExpressions.cpp (expressions), ParserLayouts.cpp
// (layout expressions).
#pragma once

#include "ir/Parser.h"

#include "ir/LayoutFacts.h"
#include "ir/LayoutPresets.h"
#include "ir/Lexer.h"

#include <llvm/Support/MemoryBuffer.h>

#include <cmath>
#include <fmt/format.h>

namespace tilescope::parse {

inline constexpr int kMaxNesting = 200;

class Parser {
public:
  // Comments around a block, placed once the statement owning it exists.
  struct BlockComments {
    std::string header;             // after the `{` on its line
    std::vector<std::string> close; // own lines before the `}`
  };

  Parser(llvm::StringRef buffer, Diagnostics &diag) : lexer_(buffer), diag_(diag) {
    tok_ = lexer_.next();
  }

  Module parseModule();
  std::optional<LayoutSpec> parseWholeLayout();

private:
  // --- tokens ---
  void advance() {
    if (hasPeek_) {
      tok_ = peek_;
      hasPeek_ = false;
    } else {
      tok_ = lexer_.next();
    }
  }
  const Token &peek() {
    if (!hasPeek_) {
      peek_ = lexer_.next();
      hasPeek_ = true;
    }
    return peek_;
  }
  bool consume(Tok k) {
    if (!tok_.is(k))
      return false;
    advance();
    return true;
  }
  bool consumeIdent(llvm::StringRef s) {
    if (!tok_.isIdent(s))
      return false;
    advance();
    return true;
  }
  std::string found() const {
    if (tok_.is(Tok::Eof))
      return "end of file";
    if (tok_.is(Tok::Error))
      return fmt::format("invalid token '{}'", printable(tok_.text));
    return fmt::format("'{}'", printable(tok_.text));
  }
  static std::string printable(llvm::StringRef s) {
    std::string out;
    for (char c : s.take_front(24)) {
      unsigned char u = static_cast<unsigned char>(c);
      out += (u >= 0x20 && u < 0x7f) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
    }
    return out;
  }
  bool expect(Tok k, llvm::StringRef what) {
    if (consume(k))
      return true;
    error(tok_.loc(), fmt::format("expected {}, found {}", what.str(), found()));
    return false;
  }
  bool expectIdent(llvm::StringRef word) {
    if (consumeIdent(word))
      return true;
    error(tok_.loc(), fmt::format("expected '{}', found {}", word.str(), found()));
    return false;
  }
  void error(llvm::SMLoc loc, const std::string &msg) {
    diag_.error(loc, msg);
    if (diag_.tooManyErrors())
      fatal_ = true;
  }

  // Skips to where a new statement can start: a token first on its line, or
  // the `}` closing the current block, never stopping inside a nested block.
  void syncStatement(const char *startedAt);
  void syncTopLevel();

  // --- grammar ---
  std::optional<Kernel> parseKernel();
  bool parseParam(std::vector<Param> &out);
  bool parseSpaceParam(Space &space);
  bool parseNamedPoint(Space &space);
  Expr parsePointValue();
  bool parseLaunch(Launch &launch);
  bool parseBlock(Block &out, BlockComments *comments = nullptr);
  BlockComments lastKernelBody_;
  void parseStatement(Block &out);
  Stmt parseBufferDecl(MemScope scope, llvm::SMLoc loc);
  bool parseBarrierDecl(Block &out);
  bool parseLet(Block &out);
  Stmt parseFor();
  Stmt parseIf();
  Stmt parseCallOrStore();
  std::optional<Dtype> parseDtype();
  bool parseExprList(std::vector<Expr> &out, Tok close, llvm::StringRef closeText);

  Expr parseExpr() { return parseBinary(1); }
  Expr parseBinary(int minPrec);
  Expr parseUnary();
  Expr parsePrimary();
  Expr parsePostfix(Expr base);
  bool parseSubscript(Subscript &out);
  std::optional<int64_t> parseIntLiteral(bool allowNegative);

  std::optional<LayoutSpec> parseLayout();
  Expr parseLayoutNumber();
  bool parseLayoutSum(LayoutTerms &terms, bool &haveShard);
  bool parseIters(std::vector<LayoutTerms::IterTerms> &iters);
  std::optional<Axis> parseAxisSuffix();

  struct DepthGuard {
    Parser &p;
    bool ok;
    explicit DepthGuard(Parser &parser) : p(parser), ok(++parser.depth_ <= kMaxNesting) {
      if (!ok && !p.fatal_) {
        p.error(p.tok_.loc(), fmt::format("nesting deeper than {} levels", kMaxNesting));
        p.fatal_ = true;
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  // --- comments (kept beside the IR, see Comments in Stmt.h) ---
  // Comments lexed before the current token, not yet placed.
  std::vector<SourceComment> takeComments() {
    std::vector<SourceComment> out;
    const auto &all = lexer_.comments();
    while (nextComment_ < all.size() && all[nextComment_].pos < tok_.text.data())
      out.push_back(all[nextComment_++]);
    return out;
  }
  void placeAfter(const Block &out, size_t index, const SourceComment &c) {
    const StmtNode *prev = out[index].get();
    bool compound = prev->kind == StmtKind::For || prev->kind == StmtKind::If;
    auto &slot = compound ? comments_->afterClose : comments_->endOfLine;
    std::string &text = slot[prev];
    text += (text.empty() ? "" : " ") + c.text.str();
  }

  void attachBlockComments(const Stmt &node, int block, BlockComments &c) {
    if (!c.header.empty())
      (block == 0 ? comments_->endOfLine : comments_->elseLine)[node.get()] = std::move(c.header);
    if (!c.close.empty())
      comments_->beforeClose[{node.get(), block}] = std::move(c.close);
  }

  Lexer lexer_;
  std::shared_ptr<Comments> comments_ = std::make_shared<Comments>();
  size_t nextComment_ = 0;
  Diagnostics &diag_;
  Token tok_, peek_;
  bool hasPeek_ = false;
  bool fatal_ = false;
  int depth_ = 0;
};

inline bool isBinaryOp(Tok k, BinaryOp &op) {
  switch (k) {
  case Tok::Plus:
    op = BinaryOp::Add;
    return true;
  case Tok::Minus:
    op = BinaryOp::Sub;
    return true;
  case Tok::Star:
    op = BinaryOp::Mul;
    return true;
  case Tok::Slash:
    op = BinaryOp::Div;
    return true;
  case Tok::Percent:
    op = BinaryOp::Mod;
    return true;
  case Tok::Lt:
    op = BinaryOp::Lt;
    return true;
  case Tok::Le:
    op = BinaryOp::Le;
    return true;
  case Tok::Gt:
    op = BinaryOp::Gt;
    return true;
  case Tok::Ge:
    op = BinaryOp::Ge;
    return true;
  case Tok::Eq:
    op = BinaryOp::Eq;
    return true;
  case Tok::Ne:
    op = BinaryOp::Ne;
    return true;
  case Tok::AndAnd:
    op = BinaryOp::And;
    return true;
  case Tok::OrOr:
    op = BinaryOp::Or;
    return true;
  default:
    return false;
  }
}

} // namespace tilescope::parse
