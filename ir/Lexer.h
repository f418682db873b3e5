// Tokens of the tile IR's text form. The lexer never fails: a byte it cannot
// place becomes an Error token and the parser reports it.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <vector>

namespace tilescope {

enum class Tok : uint8_t {
  Eof,
  Error,
  Ident,
  Int,
  Float,
  String,
  Bytes, // Bytes: `128B` (a swizzle mode)
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semi,
  Dot,
  DotDot,
  At,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Assign,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  AndAnd,
  OrOr,
  Bang,
};

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text;
  bool firstOnLine = false; // nothing but blanks and comments before it on its line
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  bool is(Tok k) const { return kind == k; }
  bool isIdent(llvm::StringRef s) const { return kind == Tok::Ident && text == s; }
};

// A `//` comment: not a token, but kept so the printer can put it back.
struct SourceComment {
  const char *pos;
  llvm::StringRef text; // from `//`, trailing blanks removed
  bool ownLine;         // nothing but blanks before it on its line
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer) : buffer_(buffer), cur_(buffer.begin()) {}
  Token next();
  const char *position() const { return cur_; }
  // Every comment lexed so far, in source order.
  const std::vector<SourceComment> &comments() const { return comments_; }

private:
  void skipBlanks(bool &sawNewline);
  llvm::StringRef buffer_;
  const char *cur_;
  bool atStart_ = true;
  std::vector<SourceComment> comments_;
};

const char *tokenDescription(Tok k);

} // namespace tilescope
