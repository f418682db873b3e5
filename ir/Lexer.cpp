#include "ir/Lexer.h"

namespace tilescope {

namespace {
bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c);
}
} // namespace

void Lexer::skipBlanks(bool &sawNewline) {
  const char *end = buffer_.end();
  while (cur_ < end) {
    char c = *cur_;
    if (c == '\n') {
      sawNewline = true;
      ++cur_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++cur_;
    } else if (c == '/' && cur_ + 1 < end && cur_[1] == '/') {
      const char *start = cur_;
      while (cur_ < end && *cur_ != '\n')
        ++cur_;
      comments_.push_back({start, llvm::StringRef(start, cur_ - start).rtrim(" \t\r"), sawNewline});
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  bool newline = atStart_;
  atStart_ = false;
  skipBlanks(newline);
  Token t;
  t.firstOnLine = newline;
  const char *end = buffer_.end();
  const char *start = cur_;
  auto finish = [&](Tok kind, const char *stop) {
    cur_ = stop;
    t.kind = kind;
    t.text = llvm::StringRef(start, stop - start);
    return t;
  };
  if (cur_ >= end)
    return finish(Tok::Eof, end);
  char c = *cur_;
  if (isIdentStart(c)) {
    const char *p = cur_ + 1;
    while (p < end && isIdentChar(*p))
      ++p;
    return finish(Tok::Ident, p);
  }
  if (isDigit(c)) {
    const char *p = cur_;
    while (p < end && isDigit(*p))
      ++p;
    bool isFloat = false;
    if (p + 1 < end && *p == '.' && isDigit(p[1])) {
      isFloat = true;
      ++p;
      while (p < end && isDigit(*p))
        ++p;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      const char *q = p + 1;
      if (q < end && (*q == '+' || *q == '-'))
        ++q;
      if (q < end && isDigit(*q)) {
        isFloat = true;
        p = q;
        while (p < end && isDigit(*p))
          ++p;
      }
    }
    if (!isFloat && p < end && *p == 'B' && (p + 1 == end || !isIdentChar(p[1])))
      return finish(Tok::Bytes, p + 1);
    if (p < end && isIdentChar(*p)) { // `12abc`: one bad token, not two good ones
      while (p < end && isIdentChar(*p))
        ++p;
      return finish(Tok::Error, p);
    }
    return finish(isFloat ? Tok::Float : Tok::Int, p);
  }
  if (c == '"') {
    const char *p = cur_ + 1;
    while (p < end && *p != '"' && *p != '\n')
      ++p;
    if (p < end && *p == '"')
      return finish(Tok::String, p + 1);
    return finish(Tok::Error, p);
  }
  auto two = [&](char second) { return cur_ + 1 < end && cur_[1] == second; };
  switch (c) {
  case '(':
    return finish(Tok::LParen, cur_ + 1);
  case ')':
    return finish(Tok::RParen, cur_ + 1);
  case '[':
    return finish(Tok::LBracket, cur_ + 1);
  case ']':
    return finish(Tok::RBracket, cur_ + 1);
  case '{':
    return finish(Tok::LBrace, cur_ + 1);
  case '}':
    return finish(Tok::RBrace, cur_ + 1);
  case ',':
    return finish(Tok::Comma, cur_ + 1);
  case ':':
    return finish(Tok::Colon, cur_ + 1);
  case ';':
    return finish(Tok::Semi, cur_ + 1);
  case '@':
    return finish(Tok::At, cur_ + 1);
  case '+':
    return finish(Tok::Plus, cur_ + 1);
  case '-':
    return finish(Tok::Minus, cur_ + 1);
  case '*':
    return finish(Tok::Star, cur_ + 1);
  case '/':
    return finish(Tok::Slash, cur_ + 1);
  case '%':
    return finish(Tok::Percent, cur_ + 1);
  case '.':
    return two('.') ? finish(Tok::DotDot, cur_ + 2) : finish(Tok::Dot, cur_ + 1);
  case '=':
    return two('=') ? finish(Tok::Eq, cur_ + 2) : finish(Tok::Assign, cur_ + 1);
  case '!':
    return two('=') ? finish(Tok::Ne, cur_ + 2) : finish(Tok::Bang, cur_ + 1);
  case '<':
    return two('=') ? finish(Tok::Le, cur_ + 2) : finish(Tok::Lt, cur_ + 1);
  case '>':
    return two('=') ? finish(Tok::Ge, cur_ + 2) : finish(Tok::Gt, cur_ + 1);
  case '&':
    if (two('&'))
      return finish(Tok::AndAnd, cur_ + 2);
    break;
  case '|':
    if (two('|'))
      return finish(Tok::OrOr, cur_ + 2);
    break;
  default:
    break;
  }
  // One bad character; a UTF-8 sequence counts as one.
  const char *p = cur_ + 1;
  if (static_cast<unsigned char>(c) >= 0xC0)
    while (p < end && (static_cast<unsigned char>(*p) & 0xC0) == 0x80)
      ++p;
  return finish(Tok::Error, p);
}

const char *tokenDescription(Tok k) {
  switch (k) {
  case Tok::Eof:
    return "end of file";
  case Tok::Error:
    return "invalid token";
  case Tok::Ident:
    return "identifier";
  case Tok::Int:
    return "integer";
  case Tok::Float:
    return "float";
  case Tok::String:
    return "string";
  case Tok::Bytes:
    return "byte size";
  case Tok::LParen:
    return "'('";
  case Tok::RParen:
    return "')'";
  case Tok::LBracket:
    return "'['";
  case Tok::RBracket:
    return "']'";
  case Tok::LBrace:
    return "'{'";
  case Tok::RBrace:
    return "'}'";
  case Tok::Comma:
    return "','";
  case Tok::Colon:
    return "':'";
  case Tok::Semi:
    return "';'";
  case Tok::Dot:
    return "'.'";
  case Tok::DotDot:
    return "'..'";
  case Tok::At:
    return "'@'";
  case Tok::Plus:
    return "'+'";
  case Tok::Minus:
    return "'-'";
  case Tok::Star:
    return "'*'";
  case Tok::Slash:
    return "'/'";
  case Tok::Percent:
    return "'%'";
  case Tok::Assign:
    return "'='";
  case Tok::Eq:
    return "'=='";
  case Tok::Ne:
    return "'!='";
  case Tok::Lt:
    return "'<'";
  case Tok::Le:
    return "'<='";
  case Tok::Gt:
    return "'>'";
  case Tok::Ge:
    return "'>='";
  case Tok::AndAnd:
    return "'&&'";
  case Tok::OrOr:
    return "'||'";
  case Tok::Bang:
    return "'!'";
  }
  return "token";
}

} // namespace tilescope
