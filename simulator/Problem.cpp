#include "simulator/Problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace tilescope::sim {

namespace {

struct Token {
  enum Kind { Word, Open, Close, Comma, Arrow, Equals, Transpose, End, Bad } kind;
  std::string text;
  size_t offset;
};

// Words are names and numbers alike (`sm_scale`, `32`, `0.125`, `1e-5`,
// `-2.5`): what they mean depends on the kind's option.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto isWordChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    size_t at = i;
    auto single = [&](Token::Kind k, size_t len) {
      out.push_back({k, std::string(s.substr(at, len)), at});
      i += len;
    };
    if (c == '(')
      single(Token::Open, 1);
    else if (c == ')')
      single(Token::Close, 1);
    else if (c == ',')
      single(Token::Comma, 1);
    else if (c == '=')
      single(Token::Equals, 1);
    else if (s.substr(i, 2) == "->")
      single(Token::Arrow, 2);
    else if (s.substr(i, 2) == "^T")
      single(Token::Transpose, 2);
    else if (isWordChar(c) || c == '-' || c == '+') {
      ++i;
      // An exponent's sign belongs to the number (`1e-5`).
      while (i < s.size() &&
             (isWordChar(s[i]) ||
              ((s[i] == '-' || s[i] == '+') && (s[i - 1] == 'e' || s[i - 1] == 'E') &&
               std::isdigit(static_cast<unsigned char>(s[at])))))
        ++i;
      out.push_back({Token::Word, std::string(s.substr(at, i - at)), at});
    } else {
      single(Token::Bad, 1);
    }
  }
  out.push_back({Token::End, "", s.size()});
  return out;
}

bool isName(const std::string &w) {
  return !w.empty() && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_') &&
         w.find('.') == std::string::npos;
}

} // namespace

std::optional<ProblemSpec> parseProblem(std::string_view text, ProblemSyntaxError *error) {
  size_t b = text.find_first_not_of(" \t\r"), e = text.find_last_not_of(" \t\r");
  ProblemSpec p;
  p.text = b == std::string_view::npos ? "" : std::string(text.substr(b, e - b + 1));
  std::vector<Token> toks = tokenize(p.text);
  size_t k = 0;
  auto fail = [&](const Token &t, std::string message) {
    *error = {std::move(message), t.offset};
    return std::nullopt;
  };
  auto describe = [](const Token &t) {
    return t.kind == Token::End ? std::string("the end") : fmt::format("'{}'", t.text);
  };
  if (toks[k].kind != Token::Word || !isName(toks[k].text))
    return fail(toks[k], "a problem is written KIND(INPUTS -> OUTPUTS, OPTIONS), e.g. "
                         "gemm(A, B^T -> C)");
  p.kind = toks[k].text;
  p.kindOffset = toks[k].offset;
  if (toks[++k].kind != Token::Open)
    return fail(toks[k],
                fmt::format("expected '(' after '{}', found {}", p.kind, describe(toks[k])));
  ++k;
  // Inputs up to the arrow; options may come among them too
  // (`sum(X, axis = 1 -> Y)`).
  while (true) {
    const Token &t = toks[k];
    if (t.kind != Token::Word || !isName(t.text))
      return fail(t, fmt::format("expected an input name, found {}", describe(t)));
    if (!p.inputs.empty() && toks[k + 1].kind == Token::Equals) {
      const Token &value = toks[k + 2];
      if (value.kind != Token::Word)
        return fail(value,
                    fmt::format("option '{}' needs a value, found {}", t.text, describe(value)));
      for (const ProblemOption &o : p.options)
        if (o.key == t.text)
          return fail(t, fmt::format("option '{}' given twice", t.text));
      p.options.push_back({t.text, value.text, t.offset, value.offset});
      k += 3;
      if (toks[k].kind == Token::Comma) {
        ++k;
        continue;
      }
      if (toks[k].kind == Token::Arrow)
        break;
      return fail(toks[k], fmt::format("expected ',' or '->' after option '{}', found {}", t.text,
                                       describe(toks[k])));
    }
    ProblemOperand op{t.text, false, t.offset};
    if (toks[++k].kind == Token::Transpose) {
      op.transposed = true;
      ++k;
    }
    p.inputs.push_back(op);
    if (toks[k].kind == Token::Comma) {
      ++k;
      continue;
    }
    if (toks[k].kind == Token::Arrow)
      break;
    return fail(toks[k], fmt::format("expected ',' or '->' after input '{}', found {}", op.name,
                                     describe(toks[k])));
  }
  ++k;
  const size_t optionsBeforeArrow = p.options.size();
  // Outputs, then options (a name followed by '=').
  while (true) {
    const Token &t = toks[k];
    if (t.kind != Token::Word || !isName(t.text))
      return fail(t, fmt::format("expected an output name or an option, found {}", describe(t)));
    if (toks[k + 1].kind == Token::Equals) {
      const Token &value = toks[k + 2];
      if (value.kind != Token::Word)
        return fail(value,
                    fmt::format("option '{}' needs a value, found {}", t.text, describe(value)));
      for (const ProblemOption &o : p.options)
        if (o.key == t.text)
          return fail(t, fmt::format("option '{}' given twice", t.text));
      p.options.push_back({t.text, value.text, t.offset, value.offset});
      k += 3;
    } else {
      if (p.options.size() > optionsBeforeArrow)
        return fail(t, fmt::format("output '{}' after options; outputs come first", t.text));
      if (toks[k + 1].kind == Token::Transpose)
        return fail(toks[k + 1], "an output cannot be transposed");
      p.outputs.push_back({t.text, false, t.offset});
      ++k;
    }
    if (toks[k].kind == Token::Comma) {
      ++k;
      continue;
    }
    if (toks[k].kind == Token::Close)
      break;
    return fail(toks[k], fmt::format("expected ',' or ')', found {}", describe(toks[k])));
  }
  if (p.outputs.empty())
    return fail(toks[k], "a problem needs at least one output after '->'");
  if (toks[k + 1].kind != Token::End)
    return fail(toks[k + 1], fmt::format("unexpected {} after the problem", describe(toks[k + 1])));
  return p;
}

std::optional<std::vector<ProblemSize>> problemSizes(const ProblemSpec &spec,
                                                     const std::vector<std::string> &symbols,
                                                     ProblemSyntaxError *error) {
  std::vector<ProblemSize> out;
  for (const ProblemOption &o : spec.options) {
    if (std::find(symbols.begin(), symbols.end(), o.key) == symbols.end())
      continue;
    char *end = nullptr;
    long long v = std::strtoll(o.value.c_str(), &end, 10);
    if (o.value.empty() || end != o.value.c_str() + o.value.size() || v < 1) {
      *error = {fmt::format("problem size {} takes a positive integer, not '{}'", o.key, o.value),
                o.valueOffset};
      return std::nullopt;
    }
    out.push_back({o.key, v, o.offset});
  }
  return out;
}

namespace {

// `line` (a whole source line) as a problem annotation: `//`, spaces,
// `problem` in any case, spaces, `:`. Returns the offset of the text after the
// colon (and its spaces) within the line; nothing when the line is not one.
// `nearMiss` is set for a comment that starts with the word `problem` but is
// not written that way (`// problem gemm(...)`, `// problems: ...`).
std::optional<size_t> annotationText(std::string_view line, bool *nearMiss) {
  *nearMiss = false;
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line.substr(i, 2) != "//")
    return std::nullopt;
  i = line.find_first_not_of(" \t/", i);
  if (i == std::string_view::npos)
    return std::nullopt;
  constexpr std::string_view word = "problem";
  if (line.size() - i < word.size())
    return std::nullopt;
  for (size_t k = 0; k < word.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(line[i + k])) != word[k])
      return std::nullopt;
  size_t j = line.find_first_not_of(" \t", i + word.size());
  if (j == std::string_view::npos || line[j] != ':') {
    // `// problem statement of ...` is prose; a call after the word is not.
    *nearMiss = j != std::string_view::npos &&
                (line.find('(', j) != std::string_view::npos || line[j] == 's' || line[j] == 'S');
    return std::nullopt;
  }
  size_t text = line.find_first_not_of(" \t", j + 1);
  return text == std::string_view::npos ? line.size() : text;
}

} // namespace

std::optional<ProblemAnnotation> findProblemAnnotation(std::string_view source,
                                                       std::string_view kernelName,
                                                       std::vector<size_t> *nearMisses) {
  std::optional<ProblemAnnotation> pending;
  std::vector<size_t> pendingMisses;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    if (end == std::string_view::npos)
      end = source.size();
    std::string_view line = source.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    size_t first = line.find_first_not_of(" \t");
    std::string_view body = first == std::string_view::npos ? "" : line.substr(first);
    bool nearMiss = false;
    if (auto text = annotationText(line, &nearMiss)) {
      std::string_view t = line.substr(*text);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t'))
        t.remove_suffix(1);
      pending = ProblemAnnotation{std::string(t), pos + *text};
    } else if (nearMiss) {
      pendingMisses.push_back(pos + first);
    } else if (body.substr(0, 7) == "kernel ") {
      std::string_view name = body.substr(7);
      name = name.substr(name.find_first_not_of(" \t") == std::string_view::npos
                             ? name.size()
                             : name.find_first_not_of(" \t"));
      name = name.substr(0, name.find_first_of("( \t"));
      if (name == kernelName) {
        if (nearMisses)
          *nearMisses = pendingMisses;
        return pending;
      }
      pending.reset();
      pendingMisses.clear();
    }
    pos = end + 1;
  }
  return std::nullopt;
}

} // namespace tilescope::sim
