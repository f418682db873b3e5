#include "simulator/Reference.h"

#include "simulator/Numerics.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace tilescope::sim {

namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> splitList(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos)
      comma = s.size();
    out.push_back(trim(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

const std::map<std::string, std::string, std::less<>> &bundledProblems() {
  static const std::map<std::string, std::string, std::less<>> table = {
      {"gemm_bf16_sm90", "gemm(A, B^T -> C)"},
      {"gemm_naive", "gemm(A, B -> C)"},
      {"rmsnorm_bf16", "rmsnorm(X, W, eps -> Y)"},
  };
  return table;
}

double unitRoundoff(Dtype d) {
  if (d == Dtype::f64)
    return std::ldexp(1.0, -53);
  if (const auto *f = numerics::floatFormat(d))
    return std::ldexp(1.0, -(f->manBits + 1));
  return 0.5; // integers: exact up to rounding of the conversion
}

} // namespace

std::optional<ProblemSpec> parseProblem(std::string_view text, std::string *error) {
  ProblemSpec p;
  p.text = trim(text);
  size_t open = p.text.find('('), close = p.text.rfind(')'), arrow = p.text.find("->");
  if (open == std::string::npos || close == std::string::npos || arrow == std::string::npos ||
      !(open < arrow && arrow < close)) {
    *error = fmt::format("a problem is written kind(inputs -> outputs), not '{}'", p.text);
    return std::nullopt;
  }
  p.kind = trim(std::string_view(p.text).substr(0, open));
  for (std::string in : splitList(std::string_view(p.text).substr(open + 1, arrow - open - 1))) {
    bool t = in.size() > 2 && in.substr(in.size() - 2) == "^T";
    if (t)
      in = trim(in.substr(0, in.size() - 2));
    p.inputs.push_back(in);
    p.transposed.push_back(t);
  }
  p.outputs = splitList(std::string_view(p.text).substr(arrow + 2, close - arrow - 2));
  for (const auto &names : {p.inputs, p.outputs})
    for (const std::string &n : names)
      if (n.empty()) {
        *error = fmt::format("empty operand name in problem '{}'", p.text);
        return std::nullopt;
      }
  size_t wantIn = p.kind == "gemm" ? 2 : p.kind == "rmsnorm" ? 3 : 0;
  if (wantIn == 0) {
    *error = fmt::format("unknown problem '{}' (known: gemm, rmsnorm)", p.kind);
    return std::nullopt;
  }
  if (p.inputs.size() != wantIn || p.outputs.size() != 1) {
    *error = fmt::format("problem {} takes {} inputs and one output", p.kind, wantIn);
    return std::nullopt;
  }
  return p;
}

std::optional<ProblemSpec> problemOf(std::string_view source, std::string_view kernelName,
                                     std::string *error, size_t *errorOffset) {
  std::string pending;
  size_t pos = 0, pendingAt = 0;
  while (pos < source.size()) {
    size_t lineStart = pos;
    size_t end = source.find('\n', pos);
    if (end == std::string_view::npos)
      end = source.size();
    std::string line = trim(source.substr(pos, end - pos));
    pos = end + 1;
    constexpr std::string_view tag = "// problem:";
    if (line.rfind(tag, 0) == 0) {
      pending = trim(std::string_view(line).substr(tag.size()));
      pendingAt = lineStart + (source.substr(lineStart).find('/'));
      continue;
    }
    if (line.rfind("kernel ", 0) == 0) {
      std::string name = trim(std::string_view(line).substr(7));
      name = name.substr(0, name.find_first_of("( \t"));
      if (name == kernelName && !pending.empty()) {
        if (errorOffset)
          *errorOffset = pendingAt;
        return parseProblem(pending, error);
      }
      pending.clear();
    }
  }
  auto it = bundledProblems().find(kernelName);
  if (it != bundledProblems().end())
    return parseProblem(it->second, error);
  return std::nullopt;
}

std::optional<std::vector<OutputReport>>
compareWithReference(const ProblemSpec &problem, const Program &program,
                     const std::vector<HostTensor> &tensors, bool allCtas, std::string *error) {
  auto tensor = [&](const std::string &name) -> const HostTensor * {
    for (const HostTensor &t : tensors)
      if (t.name == name)
        return &t;
    return nullptr;
  };
  auto values = [](const HostTensor &t) {
    std::vector<double> v(t.elements());
    for (int64_t i = 0; i < t.elements(); ++i)
      v[i] = decodeFloat(t.dtype, t.bitsAt(i));
    return v;
  };
  std::vector<std::string> tensorNames = problem.outputs;
  size_t tensorInputs = problem.kind == "rmsnorm" ? 2 : problem.inputs.size();
  for (size_t i = 0; i < tensorInputs; ++i)
    tensorNames.push_back(problem.inputs[i]);
  for (const std::string &n : tensorNames)
    if (!tensor(n)) {
      *error = fmt::format("problem '{}' names '{}', which is not a tensor parameter of the "
                           "kernel",
                           problem.text, n);
      return std::nullopt;
    }
  const HostTensor &out = *tensor(problem.outputs[0]);
  std::vector<double> ref(out.elements()), bound(out.elements());
  // Only elements that will be compared need a reference (CTA sampling
  // leaves most of a large output unwritten).
  auto needed = [&](int64_t i) { return allCtas || out.written[i]; };
  if (problem.kind == "gemm") {
    const HostTensor &a = *tensor(problem.inputs[0]), &b = *tensor(problem.inputs[1]);
    if (a.shape.size() != 2 || b.shape.size() != 2 || out.shape.size() != 2) {
      *error = "gemm operands must be 2-D";
      return std::nullopt;
    }
    bool ta = problem.transposed[0], tb = problem.transposed[1];
    int64_t M = out.shape[0], N = out.shape[1], K = ta ? a.shape[0] : a.shape[1];
    if ((ta ? a.shape[1] : a.shape[0]) != M || (tb ? b.shape[1] : b.shape[0]) != K ||
        (tb ? b.shape[0] : b.shape[1]) != N) {
      *error = fmt::format("problem '{}' does not fit the tensor shapes", problem.text);
      return std::nullopt;
    }
    std::vector<double> av = values(a), bv = values(b);
    // Accumulation error: fp32 sums truncated per k chunk (tensor cores) or
    // rounded per fma, bounded by a few units of 2^-24 per term.
    double accUnit = 4.0 * static_cast<double>(K + 2) * std::ldexp(1.0, -24);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        if (!needed(i * N + j))
          continue;
        double s = 0, abs = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = av[ta ? k * M + i : i * K + k], y = bv[tb ? j * K + k : k * N + j];
          s += x * y;
          abs += std::fabs(x * y);
        }
        ref[i * N + j] = s;
        bound[i * N + j] = accUnit * abs;
      }
  } else if (problem.kind == "rmsnorm") {
    const HostTensor &x = *tensor(problem.inputs[0]), &w = *tensor(problem.inputs[1]);
    auto eps = program.scalars.find(problem.inputs[2]);
    if (eps == program.scalars.end()) {
      *error = fmt::format("problem '{}' names '{}', which is not a float scalar of the kernel",
                           problem.text, problem.inputs[2]);
      return std::nullopt;
    }
    if (x.shape.size() != 2 || w.shape.size() != 1 || out.shape != x.shape ||
        w.shape[0] != x.shape[1]) {
      *error = fmt::format("problem '{}' does not fit the tensor shapes", problem.text);
      return std::nullopt;
    }
    int64_t R = x.shape[0], H = x.shape[1];
    std::vector<double> xv = values(x), wv = values(w);
    double epsValue = static_cast<double>(static_cast<float>(eps->second));
    for (int64_t r = 0; r < R; ++r) {
      double ss = 0;
      for (int64_t h = 0; h < H; ++h)
        ss += xv[r * H + h] * xv[r * H + h];
      double scale = 1.0 / std::sqrt(ss / static_cast<double>(H) + epsValue);
      for (int64_t h = 0; h < H; ++h) {
        double y = xv[r * H + h] * scale * wv[h];
        ref[r * H + h] = y;
        // fp32 sum of squares over H terms and a few fp32 roundings after it.
        bound[r * H + h] = std::fabs(y) * static_cast<double>(H + 16) * std::ldexp(1.0, -24);
      }
    }
  }
  OutputReport rep;
  rep.name = out.name;
  rep.elements = out.elements();
  double u = unitRoundoff(out.dtype);
  for (int64_t i = 0; i < out.elements(); ++i) {
    if (!out.written[i]) {
      ++rep.unwritten;
      if (!allCtas)
        continue;
    }
    ++rep.compared;
    double got = decodeFloat(out.dtype, out.bitsAt(i));
    double err = std::fabs(got - ref[i]);
    double allowed = 1.01 * (u * (std::fabs(ref[i]) + bound[i]) + bound[i]) + 1e-300;
    bool bad = !out.written[i] || !(err <= allowed);
    if (out.written[i] && std::isfinite(err)) {
      rep.maxAbsError = std::max(rep.maxAbsError, err);
      if (ref[i] != 0)
        rep.maxRelError = std::max(rep.maxRelError, err / std::fabs(ref[i]));
    }
    if (bad) {
      ++rep.mismatches;
      if (rep.first.size() < 8)
        rep.first.push_back({i, out.written[i] ? got : std::nan(""), ref[i]});
    }
  }
  return std::vector<OutputReport>{rep};
}

} // namespace tilescope::sim
