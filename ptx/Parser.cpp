// The PTX reader (Parser.h): a hand-written lexer and a statement-level
// parser that never backtracks.
#include "ptx/Parser.h"

#include <llvm/Support/MemoryBuffer.h>

#include <charconv>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace tilescope::ptx {
namespace {

enum class Tok : uint8_t {
  Ident,     // mnemonic or name, with `.mod` / `::x` continuations: ld.global.v4.u32
  Register,  // %r1, %tid.x
  Directive, // .reg, .shared::cta
  Integer,
  Float,
  String,
  Punct, // one character
  End,
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  unsigned line = 0;
  const char *pos = nullptr;
  char punct() const { return kind == Tok::Punct ? text[0] : '\0'; }
};

bool isWordStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool isWordChar(char c) {
  return isWordStart(c) || (c >= '0' && c <= '9');
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isHex(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class Lexer {
public:
  explicit Lexer(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // Returns Tok::Punct with text "?" on a character outside the grammar and
  // sets error(); the parser reports it.
  Token next() {
    skipSpaceAndComments();
    Token t;
    t.line = line_;
    t.pos = p_;
    if (p_ >= end_) {
      t.kind = Tok::End;
      return t;
    }
    const char *s = p_;
    char c = *p_;
    if (isWordStart(c)) {
      ++p_;
      wordTail();
      t.kind = Tok::Ident;
    } else if (c == '%') {
      ++p_;
      while (p_ < end_ && isWordChar(*p_))
        ++p_;
      // Special registers with a component: %tid.x, %ctaid.y, %nctaid.z.
      if (p_ + 1 < end_ && p_[0] == '.' && (p_[1] == 'x' || p_[1] == 'y' || p_[1] == 'z') &&
          (p_ + 2 >= end_ || !isWordChar(p_[2])))
        p_ += 2;
      t.kind = Tok::Register;
    } else if (c == '.' && p_ + 1 < end_ && isWordStart(p_[1])) {
      ++p_;
      wordTail();
      t.kind = Tok::Directive;
    } else if (isDigit(c) || (c == '.' && p_ + 1 < end_ && isDigit(p_[1]))) {
      t.kind = number();
    } else if (c == '"') {
      ++p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\n')
        ++p_;
      if (p_ < end_ && *p_ == '"')
        ++p_;
      else
        unterminated_ = true;
      t.kind = Tok::String;
    } else {
      ++p_;
      t.kind = Tok::Punct;
    }
    t.text = std::string_view(s, size_t(p_ - s));
    return t;
  }

  bool unterminatedString() const { return unterminated_; }
  bool unterminatedComment() const { return unterminatedComment_; }

private:
  // Letters, digits, and `.x` / `::x` continuations of a word.
  void wordTail() {
    for (;;) {
      while (p_ < end_ && isWordChar(*p_))
        ++p_;
      if (p_ + 1 < end_ && p_[0] == '.' && isWordChar(p_[1])) {
        ++p_;
        continue;
      }
      if (p_ + 2 < end_ && p_[0] == ':' && p_[1] == ':' && isWordChar(p_[2])) {
        p_ += 2;
        continue;
      }
      return;
    }
  }

  Tok number() {
    if (*p_ == '0' && p_ + 1 < end_ &&
        (p_[1] == 'f' || p_[1] == 'F' || p_[1] == 'd' || p_[1] == 'D') && p_ + 2 < end_ &&
        isHex(p_[2])) {
      p_ += 2;
      while (p_ < end_ && isHex(*p_))
        ++p_;
      return Tok::Float;
    }
    if (*p_ == '0' && p_ + 1 < end_ && (p_[1] == 'x' || p_[1] == 'X')) {
      p_ += 2;
      while (p_ < end_ && isHex(*p_))
        ++p_;
      if (p_ < end_ && (*p_ == 'U' || *p_ == 'u'))
        ++p_;
      return Tok::Integer;
    }
    bool isFloat = false;
    while (p_ < end_ && isDigit(*p_))
      ++p_;
    if (p_ < end_ && *p_ == '.') {
      isFloat = true;
      ++p_;
      while (p_ < end_ && isDigit(*p_))
        ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      const char *q = p_ + 1;
      if (q < end_ && (*q == '+' || *q == '-'))
        ++q;
      if (q < end_ && isDigit(*q)) {
        isFloat = true;
        p_ = q;
        while (p_ < end_ && isDigit(*p_))
          ++p_;
      }
    }
    if (!isFloat && p_ < end_ && (*p_ == 'U' || *p_ == 'u'))
      ++p_;
    return isFloat ? Tok::Float : Tok::Integer;
  }

  void skipSpaceAndComments() {
    for (;;) {
      while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n' || *p_ == '\f' ||
                           *p_ == '\v')) {
        if (*p_ == '\n')
          ++line_;
        ++p_;
      }
      if (p_ + 1 < end_ && p_[0] == '/' && p_[1] == '/') {
        const void *nl = std::memchr(p_, '\n', size_t(end_ - p_));
        p_ = nl ? static_cast<const char *>(nl) : end_;
        continue;
      }
      if (p_ + 1 < end_ && p_[0] == '/' && p_[1] == '*') {
        p_ += 2;
        while (p_ + 1 < end_ && !(p_[0] == '*' && p_[1] == '/')) {
          if (*p_ == '\n')
            ++line_;
          ++p_;
        }
        if (p_ + 1 >= end_) {
          unterminatedComment_ = true;
          p_ = end_;
          return;
        }
        p_ += 2;
        continue;
      }
      return;
    }
  }

  const char *p_, *end_;
  unsigned line_ = 1;
  bool unterminated_ = false, unterminatedComment_ = false;
};

std::optional<int64_t> parseInteger(std::string_view s) {
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u'))
    s.remove_suffix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size())
    return std::nullopt;
  return int64_t(v); // hexadecimal masks wrap to their two's complement value
}

class Parser {
public:
  Parser(unsigned bufferId, Diagnostics &diag)
      : diag_(diag), buffer_(diag.sourceMgr().getMemoryBuffer(bufferId)->getBuffer()),
        lexer_(std::string_view(buffer_.data(), buffer_.size())) {
    module_.file = diag.sourceMgr().getMemoryBuffer(bufferId)->getBufferIdentifier().str();
    lineStart_ = buffer_.data();
    advance();
  }

  std::optional<Module> run() {
    while (!failed_ && tok_.kind != Tok::End)
      topLevel();
    if (failed_)
      return std::nullopt;
    return std::move(module_);
  }

private:
  // --- tokens -------------------------------------------------------------
  void advance() {
    tok_ = lexer_.next();
    if (lexer_.unterminatedString())
      fail(tok_, "unterminated string");
    else if (lexer_.unterminatedComment())
      fail(tok_, "unterminated /* comment");
  }
  bool isPunct(char c) const { return tok_.kind == Tok::Punct && tok_.text[0] == c; }
  bool isDirective(std::string_view d) const {
    return tok_.kind == Tok::Directive && tok_.text == d;
  }
  bool accept(char c) {
    if (!isPunct(c))
      return false;
    advance();
    return true;
  }
  void expect(char c, const char *what) {
    if (failed_)
      return;
    if (!accept(c))
      fail(tok_, std::string("expected '") + c + "' " + what + describeFound());
  }
  std::string describeFound() const {
    if (tok_.kind == Tok::End)
      return ", found end of file";
    return ", found '" + std::string(tok_.text) + "'";
  }
  void fail(const Token &at, const std::string &message) {
    if (failed_)
      return;
    failed_ = true;
    diag_.error(llvm::SMLoc::getFromPointer(at.pos), message);
  }
  unsigned columnOf(const Token &t) {
    // Lines are visited in order, so the start of the current line is found
    // by scanning forward from the last one: linear over the whole file.
    while (lineOfStart_ < t.line) {
      const void *nl = std::memchr(lineStart_, '\n', size_t(buffer_.end() - lineStart_));
      lineStart_ = nl ? static_cast<const char *>(nl) + 1 : buffer_.end();
      ++lineOfStart_;
    }
    return unsigned(t.pos - lineStart_) + 1;
  }

  // Skips the rest of a line-oriented directive (.loc, .file).
  void skipLine(unsigned line) {
    while (!failed_ && tok_.kind != Tok::End && tok_.line == line)
      advance();
  }
  // Skips to the `;` that ends a statement, over balanced brackets.
  void skipStatement() {
    int depth = 0;
    Token start = tok_;
    while (!failed_) {
      if (tok_.kind == Tok::End) {
        fail(start, "statement not terminated by ';'");
        return;
      }
      if (isPunct('{') || isPunct('(') || isPunct('['))
        ++depth;
      else if (isPunct('}') || isPunct(')') || isPunct(']'))
        --depth;
      else if (depth <= 0 && isPunct(';')) {
        advance();
        return;
      }
      advance();
    }
  }
  // `.section name { ... }`: debug sections, skipped.
  void skipSection() {
    Token start = tok_;
    advance();
    while (!failed_ && tok_.kind != Tok::End && !isPunct('{'))
      advance();
    int depth = 0;
    while (!failed_) {
      if (tok_.kind == Tok::End) {
        fail(start, "unterminated .section");
        return;
      }
      if (isPunct('{'))
        ++depth;
      else if (isPunct('}') && --depth == 0) {
        advance();
        return;
      }
      advance();
    }
  }

  // --- module level ---------------------------------------------------------
  void topLevel() {
    if (tok_.kind != Tok::Directive) {
      fail(tok_, "expected a directive at module scope" + describeFound());
      return;
    }
    std::string_view d = tok_.text;
    Token at = tok_;
    if (d == ".version" || d == ".target" || d == ".address_size") {
      advance();
      std::string value;
      while (!failed_ && tok_.kind != Tok::End && tok_.line == at.line) {
        if (!value.empty() && value.back() == ',')
          value += ' ';
        value += std::string(tok_.text);
        advance();
      }
      if (value.empty())
        fail(at, "expected a value after " + std::string(d));
      if (d == ".version")
        module_.version = value;
      else if (d == ".target")
        module_.target = value;
      else if (auto v = parseInteger(value); v && (*v == 32 || *v == 64))
        module_.addressSize = int(*v);
      else
        fail(at, ".address_size must be 32 or 64");
      return;
    }
    if (d == ".file" || d == ".loc") {
      advance();
      skipLine(at.line);
      return;
    }
    if (d == ".section") {
      skipSection();
      return;
    }
    bool visible = false, external = false;
    while (tok_.kind == Tok::Directive && (tok_.text == ".visible" || tok_.text == ".extern" ||
                                           tok_.text == ".weak" || tok_.text == ".common")) {
      visible |= tok_.text == ".visible";
      external |= tok_.text == ".extern";
      advance();
    }
    if (isDirective(".entry") || isDirective(".func")) {
      function(visible);
      return;
    }
    if (tok_.kind == Tok::Directive) {
      std::string_view s = tok_.text;
      if (s == ".global" || s == ".shared" || s == ".const" || s == ".local" || s == ".tex" ||
          s == ".surf" || s == ".samplerref" || s == ".texref" || s == ".surfref") {
        declaration(external, module_.globals);
        return;
      }
    }
    // A module directive this reader does not model (.alias, ...): skipped.
    skipStatement();
  }

  // .entry name (params) directives { body } | .func (rets) name (params) ...
  void function(bool visible) {
    Function f;
    f.entry = isDirective(".entry");
    f.visible = visible;
    f.line = tok_.line;
    f.loc = llvm::SMLoc::getFromPointer(tok_.pos);
    advance();
    if (!f.entry && isPunct('('))
      paramList(f.returns);
    if (tok_.kind != Tok::Ident) {
      fail(tok_, "expected a function name" + describeFound());
      return;
    }
    f.name = std::string(tok_.text);
    advance();
    if (isPunct('('))
      paramList(f.params);
    // Performance directives up to the body or the `;` of a prototype.
    while (!failed_ && tok_.kind == Tok::Directive) {
      std::string name(tok_.text.substr(1));
      unsigned line = tok_.line;
      advance();
      std::string value;
      while (!failed_ && (tok_.kind == Tok::Integer || isPunct(',')) && tok_.line == line) {
        value += std::string(tok_.text);
        if (isPunct(','))
          value += ' ';
        advance();
      }
      f.performanceDirectives.emplace_back(std::move(name), std::move(value));
    }
    if (failed_)
      return;
    if (accept(';')) {
      module_.functions.push_back(std::move(f));
      return;
    }
    if (!isPunct('{')) {
      fail(tok_, "expected '{' or ';' after the function header" + describeFound());
      return;
    }
    f.hasBody = true;
    body(f);
    if (!failed_)
      module_.functions.push_back(std::move(f));
  }

  void paramList(std::vector<Param> &out) {
    expect('(', "to open the parameter list");
    if (accept(')'))
      return;
    while (!failed_) {
      Param p;
      p.line = tok_.line;
      while (!failed_ && tok_.kind == Tok::Directive) {
        std::string_view d = tok_.text;
        if (d == ".align") {
          advance();
          if (tok_.kind != Tok::Integer) {
            fail(tok_, "expected an alignment after .align" + describeFound());
            return;
          }
          p.align = parseInteger(tok_.text).value_or(0);
        } else if (d == ".param" || d == ".reg") {
          p.space = std::string(d.substr(1));
        } else if (d == ".ptr" || d.substr(0, 7) == ".global" || d.substr(0, 7) == ".shared" ||
                   d == ".const" || d == ".local") {
          // .ptr .global .align 16: pointer attributes, kept out of the type
        } else {
          p.type = std::string(d.substr(1));
        }
        advance();
      }
      if (tok_.kind != Tok::Ident) {
        fail(tok_, "expected a parameter name" + describeFound());
        return;
      }
      p.name = std::string(tok_.text);
      advance();
      if (accept('[')) {
        if (tok_.kind == Tok::Integer) {
          p.arrayBytes = parseInteger(tok_.text).value_or(0);
          advance();
        }
        expect(']', "to close the parameter's dimension");
      }
      out.push_back(std::move(p));
      if (accept(')'))
        return;
      expect(',', "between parameters");
    }
  }

  // .reg .b32 %r<10>;  .shared .align 16 .b8 smem[1024];  .reg .pred p, q;
  void declaration(bool external, std::vector<Declaration> &out) {
    Declaration proto;
    proto.space = std::string(tok_.text.substr(1));
    proto.external = external;
    proto.line = tok_.line;
    proto.loc = llvm::SMLoc::getFromPointer(tok_.pos);
    advance();
    while (!failed_ && tok_.kind == Tok::Directive) {
      std::string_view d = tok_.text;
      if (d == ".align") {
        advance();
        if (tok_.kind != Tok::Integer) {
          fail(tok_, "expected an alignment after .align" + describeFound());
          return;
        }
        proto.align = parseInteger(tok_.text).value_or(0);
      } else if (d == ".v2" || d == ".v4" || d == ".v8") {
        vectorWidth_ = d[2] - '0';
      } else if (d != ".ptr" && d != ".attribute") {
        proto.type = std::string(d.substr(1));
      }
      advance();
    }
    int64_t vec = vectorWidth_;
    vectorWidth_ = 1;
    for (;;) {
      if (tok_.kind != Tok::Register && tok_.kind != Tok::Ident) {
        fail(tok_, "expected a variable name in the declaration" + describeFound());
        return;
      }
      Declaration d = proto;
      d.name = std::string(tok_.text);
      d.line = tok_.line;
      d.loc = llvm::SMLoc::getFromPointer(tok_.pos);
      advance();
      if (accept('<')) {
        if (tok_.kind != Tok::Integer) {
          fail(tok_, "expected a register count in '<N>'" + describeFound());
          return;
        }
        d.count = parseInteger(tok_.text).value_or(0);
        d.parameterized = true;
        advance();
        expect('>', "to close the register count");
      }
      while (!failed_ && accept('[')) {
        if (isPunct(']')) {
          d.dims.push_back(-1);
        } else if (tok_.kind == Tok::Integer) {
          d.dims.push_back(parseInteger(tok_.text).value_or(0));
          advance();
        } else {
          fail(tok_, "expected an array dimension" + describeFound());
          return;
        }
        expect(']', "to close the array dimension");
      }
      if (vec > 1)
        d.dims.insert(d.dims.begin(), vec);
      if (failed_)
        return;
      if (isPunct('=')) { // an initialiser: skipped up to the `;`
        skipStatement();
        out.push_back(std::move(d));
        return;
      }
      out.push_back(std::move(d));
      if (accept(';'))
        return;
      if (!accept(',')) {
        fail(tok_, "expected ';' or ',' after the declared name" + describeFound());
        return;
      }
    }
  }

  // --- function bodies ------------------------------------------------------
  struct Scope {
    std::vector<std::pair<std::string, std::string>> renamed; // declared -> unique
  };

  void body(Function &f) {
    Token open = tok_;
    advance(); // '{'
    scopes_.clear();
    scopes_.emplace_back();
    while (!failed_) {
      if (tok_.kind == Tok::End) {
        fail(open, "function body not closed by '}'");
        return;
      }
      if (isPunct('{')) {
        if (int(scopes_.size()) >= kMaxScopeDepth) {
          fail(tok_, "scopes nested deeper than " + std::to_string(kMaxScopeDepth));
          return;
        }
        scopes_.emplace_back();
        advance();
        continue;
      }
      if (isPunct('}')) {
        scopes_.pop_back();
        advance();
        if (scopes_.empty())
          return;
        continue;
      }
      if (tok_.kind == Tok::Directive) {
        bodyDirective(f);
        continue;
      }
      if (tok_.kind == Tok::Ident) {
        Token name = tok_;
        advance();
        if (isPunct(':')) {
          advance();
          f.body.push_back({Statement::Label, f.labels.size()});
          f.labels.emplace_back(name.text);
          continue;
        }
        instruction(f, name, nullptr);
        continue;
      }
      if (isPunct('@')) {
        Token at = tok_;
        advance();
        bool negated = accept('!');
        if (tok_.kind != Tok::Register && tok_.kind != Tok::Ident) {
          fail(tok_, "expected a predicate register after '@'" + describeFound());
          return;
        }
        std::string guard = resolve(tok_.text);
        advance();
        if (tok_.kind != Tok::Ident) {
          fail(tok_, "expected an instruction after the guard" + describeFound());
          return;
        }
        Token name = tok_;
        advance();
        instruction(f, name, &at);
        if (!failed_) {
          f.instructions.back().guard = std::move(guard);
          f.instructions.back().guardNegated = negated;
        }
        continue;
      }
      if (accept(';')) // an empty statement
        continue;
      fail(tok_, "expected an instruction, label, declaration or scope" + describeFound());
    }
  }

  void bodyDirective(Function &f) {
    std::string_view d = tok_.text;
    Token at = tok_;
    if (d == ".reg" || d == ".shared" || d == ".local" || d == ".param" || d == ".const" ||
        d == ".global") {
      size_t first = f.decls.size();
      declaration(false, f.decls);
      for (size_t i = first; i < f.decls.size(); ++i) {
        Declaration &decl = f.decls[i];
        if (scopes_.size() > 1 && !decl.parameterized) {
          std::string unique = decl.name + "{" + std::to_string(++scopeNames_) + "}";
          scopes_.back().renamed.emplace_back(decl.name, unique);
          decl.name = unique;
        }
        f.body.push_back({Statement::Decl, i});
      }
      return;
    }
    if (d == ".pragma") {
      advance();
      std::string text;
      while (!failed_ && tok_.kind == Tok::String) {
        text += std::string(tok_.text);
        advance();
      }
      expect(';', "after .pragma");
      f.body.push_back({Statement::Pragma, f.pragmas.size()});
      f.pragmas.push_back(std::move(text));
      return;
    }
    if (d == ".loc" || d == ".file") {
      advance();
      skipLine(at.line);
      return;
    }
    if (d == ".section") {
      skipSection();
      return;
    }
    // Another body directive (.maxnreg inside a body, .callprototype): skipped.
    skipStatement();
  }

  std::string resolve(std::string_view name) const {
    for (size_t i = scopes_.size(); i-- > 1;)
      for (const auto &[declared, unique] : scopes_[i].renamed)
        if (declared == name)
          return unique;
    return std::string(name);
  }

  void instruction(Function &f, const Token &name, const Token *guard) {
    Instruction in;
    const Token &first = guard ? *guard : name;
    in.line = first.line;
    in.column = columnOf(first);
    in.loc = llvm::SMLoc::getFromPointer(first.pos);
    std::string_view full = name.text;
    size_t dot = full.find('.');
    in.opcode = std::string(full.substr(0, dot));
    while (dot != std::string_view::npos) {
      size_t next = full.find('.', dot + 1);
      in.modifiers.emplace_back(full.substr(
          dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1));
      dot = next;
    }
    if (!accept(';')) {
      for (;;) {
        Operand op;
        if (!operand(op, 0))
          return;
        in.operands.push_back(std::move(op));
        if (accept(';'))
          break;
        if (!accept(',')) {
          fail(tok_, "expected ',' or ';' after an operand of '" + std::string(name.text) + "'" +
                         describeFound());
          return;
        }
      }
    }
    f.body.push_back({Statement::Instr, f.instructions.size()});
    f.instructions.push_back(std::move(in));
  }

  // One operand; `depth` counts the enclosing brackets.
  bool operand(Operand &op, int depth) {
    if (depth >= kMaxOperandNesting) {
      fail(tok_, "operand nested deeper than " + std::to_string(kMaxOperandNesting) + " levels");
      return false;
    }
    const char *start = tok_.pos;
    if (isPunct('[')) {
      advance();
      op.kind = Operand::Memory;
      if (!address(op))
        return false;
      while (accept(',')) {
        Operand inner;
        if (!operand(inner, depth + 1))
          return false;
        op.elements.push_back(std::move(inner));
      }
      expect(']', "to close the memory operand");
    } else if (isPunct('{') || isPunct('(')) {
      char close = isPunct('{') ? '}' : ')';
      op.kind = close == '}' ? Operand::Vector : Operand::List;
      advance();
      if (!accept(close)) {
        for (;;) {
          Operand inner;
          if (!operand(inner, depth + 1))
            return false;
          op.elements.push_back(std::move(inner));
          if (accept(close))
            break;
          if (!accept(',')) {
            fail(tok_, std::string("expected ',' or '") + close + "' in the operand list" +
                           describeFound());
            return false;
          }
        }
      }
    } else {
      if (accept('!'))
        op.negated = true;
      bool minus = accept('-');
      if (tok_.kind == Tok::Register || (tok_.kind == Tok::Ident && !minus)) {
        bool reg = tok_.kind == Tok::Register;
        op.kind = reg ? Operand::Register : Operand::Symbol;
        op.name = reg ? resolve(tok_.text) : resolve(tok_.text);
        if (!reg && op.name != tok_.text)
          op.kind = Operand::Register; // a scoped register declared without '%'
        if (!reg && tok_.text == "_")
          op.kind = Operand::Sink;
        advance();
        if (accept('|')) {
          if (tok_.kind != Tok::Register && tok_.kind != Tok::Ident) {
            fail(tok_, "expected a register after '|'" + describeFound());
            return false;
          }
          op.kind = Operand::Pair;
          op.second = resolve(tok_.text);
          advance();
        } else if (op.kind == Operand::Symbol && (isPunct('+') || isPunct('-'))) {
          bool neg = isPunct('-');
          advance();
          if (tok_.kind != Tok::Integer) {
            fail(tok_, "expected an offset" + describeFound());
            return false;
          }
          int64_t v = parseInteger(tok_.text).value_or(0);
          op.value = neg ? -v : v;
          advance();
        }
      } else if (tok_.kind == Tok::Integer) {
        auto v = parseInteger(tok_.text);
        if (!v) {
          fail(tok_, "malformed integer '" + std::string(tok_.text) + "'");
          return false;
        }
        op.kind = Operand::Immediate;
        op.value = minus ? -*v : *v;
        advance();
      } else if (tok_.kind == Tok::Float) {
        op.kind = Operand::FloatImmediate;
        advance();
      } else {
        fail(tok_, "expected an operand" + describeFound());
        return false;
      }
    }
    if (failed_)
      return false;
    op.text = std::string(start, size_t(lastEnd() - start));
    return true;
  }

  // The address of a memory operand: reg | symbol | integer, then +/- offset.
  bool address(Operand &op) {
    if (tok_.kind == Tok::Register || tok_.kind == Tok::Ident) {
      op.name = resolve(tok_.text);
      advance();
    } else if (tok_.kind == Tok::Integer) {
      op.value = parseInteger(tok_.text).value_or(0);
      advance();
      return true;
    } else {
      fail(tok_, "expected an address in the memory operand" + describeFound());
      return false;
    }
    if (isPunct('+') || isPunct('-')) {
      bool neg = isPunct('-');
      advance();
      if (accept('-'))
        neg = !neg;
      if (tok_.kind != Tok::Integer) {
        fail(tok_, "expected an offset in the memory operand" + describeFound());
        return false;
      }
      int64_t v = parseInteger(tok_.text).value_or(0);
      op.value = neg ? -v : v;
      advance();
    }
    return true;
  }

  // The end of the previous token: the start of the current one, less the
  // space between them.
  const char *lastEnd() const {
    const char *e = tok_.pos ? tok_.pos : buffer_.end();
    while (e > buffer_.data() && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
      --e;
    return e;
  }

  Diagnostics &diag_;
  llvm::StringRef buffer_;
  Lexer lexer_;
  Token tok_;
  bool failed_ = false;
  Module module_;
  std::vector<Scope> scopes_;
  unsigned scopeNames_ = 0;
  int64_t vectorWidth_ = 1;
  const char *lineStart_;
  unsigned lineOfStart_ = 1;
};

} // namespace

std::optional<Module> parseModule(unsigned bufferId, Diagnostics &diag) {
  return Parser(bufferId, diag).run();
}

} // namespace tilescope::ptx
