#include "simulator/Reference.h"

#include "ir/Suggest.h"
#include "simulator/Mt64.h"
#include "simulator/Numerics.h"
#include "simulator/Packed.h"
#include "simulator/ReferenceRules.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

namespace tilescope::sim {

namespace {

const std::vector<const ProblemRule *> &rules() {
  static const std::vector<const ProblemRule *> all = [] {
    std::vector<const ProblemRule *> v = {&gemmRule(), &rmsnormRule(), &softmaxRule(),
                                          &attentionRule(), &layernormRule()};
    for (const auto *list : {&elementwiseRules(), &reduceRules()})
      v.insert(v.end(), list->begin(), list->end());
    return v;
  }();
  return all;
}

std::string knownKinds() {
  std::string s;
  std::vector<std::string_view> seen;
  for (const ProblemRule *r : rules()) {
    if (std::find(seen.begin(), seen.end(), r->kind) != seen.end())
      continue;
    seen.push_back(r->kind);
    s += (s.empty() ? "" : ", ") + std::string(r->kind);
  }
  return s;
}

} // namespace

std::string unknownProblemKind(std::string_view kind) {
  std::vector<std::string_view> kinds;
  for (const ProblemRule *r : rules())
    if (std::find(kinds.begin(), kinds.end(), r->kind) == kinds.end())
      kinds.push_back(r->kind);
  if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end())
    return "";
  return fmt::format("unknown problem '{}' (known: {}){}", kind, knownKinds(),
                     didYouMean(kind, kinds));
}

namespace {

int tensorIndex(const std::vector<HostTensor> &tensors, std::string_view name) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name)
      return static_cast<int>(i);
  return -1;
}

// The value of a scalar parameter as the kernel sees it (f32 scalars are
// rounded to single precision when bound).
std::optional<double> scalarValue(const Program &program, std::string_view name) {
  auto it = program.scalars.find(std::string(name));
  if (it == program.scalars.end())
    return std::nullopt;
  for (const Param &p : program.kernel->params)
    if (p.name == name && !p.isTensor && isFloat(p.dtype))
      return roundTo(p.dtype, it->second);
  return it->second;
}

// Half the spacing of the smallest values of a format: the absolute error of
// rounding a tiny value into it, which no relative bound covers.
double halfSmallestStep(Dtype d) {
  if (const auto *f = numerics::floatFormat(d))
    return std::ldexp(1.0, f->minExponent() - f->manBits - 1);
  return 0;
}

std::optional<ProblemError> bindOption(BoundProblem &p, const ProblemOption &o,
                                       const ProblemRule &rule, const Program &program,
                                       const std::vector<HostTensor> &tensors) {
  const OptionRule *r = nullptr;
  for (const OptionRule &c : rule.options)
    if (c.key == o.key)
      r = &c;
  if (!r) {
    std::string keys;
    for (const OptionRule &c : rule.options)
      keys += (keys.empty() ? "" : ", ") + std::string(c.key);
    return ProblemError{fmt::format("problem {} has no option '{}'{}", rule.kind, o.key,
                                    keys.empty() ? "" : fmt::format(" (options: {})", keys)),
                        o.offset};
  }
  auto at = [&](std::string message) { return ProblemError{std::move(message), o.valueOffset}; };
  if (o.transposed && r->kind != OptionKind::ScaleTensor)
    return at(
        fmt::format("only a scale tensor can be stored transposed, not {} = {}^T", o.key, o.value));
  switch (r->kind) {
  case OptionKind::ScaleTensor:
  case OptionKind::InputTensor:
  case OptionKind::OutputTensor: {
    int t = tensorIndex(tensors, o.value);
    if (t < 0)
      return at(
          fmt::format("'{}' ({} = ...) is not a tensor parameter of the kernel", o.value, o.key));
    if (!isFloat(tensors[t].dtype))
      return at(
          fmt::format("'{}' holds {}, not a float format", o.value, dtypeName(tensors[t].dtype)));
    p.tensors[o.key] = t;
    if (r->kind == OptionKind::ScaleTensor)
      p.scales.push_back(t);
    else if (r->kind == OptionKind::OutputTensor)
      p.outputs.push_back(t);
    return std::nullopt;
  }
  case OptionKind::Name: {
    if (std::find(r->names.begin(), r->names.end(), o.value) == r->names.end()) {
      std::string list;
      for (std::string_view n : r->names)
        list += (list.empty() ? "" : ", ") + std::string(n);
      return at(fmt::format("{} takes one of {}, not '{}'", o.key, list, o.value));
    }
    p.names[o.key] = o.value;
    return std::nullopt;
  }
  case OptionKind::Index: {
    char *end = nullptr;
    long long v = std::strtoll(o.value.c_str(), &end, 10);
    if (o.value.empty() || end != o.value.c_str() + o.value.size() || v < 0)
      return at(fmt::format("{} takes a non-negative integer, not '{}'", o.key, o.value));
    p.numbers[o.key] = static_cast<double>(v);
    return std::nullopt;
  }
  case OptionKind::Number: {
    if (auto v = scalarValue(program, o.value)) {
      p.numbers[o.key] = *v;
      return std::nullopt;
    }
    char *end = nullptr;
    double v = std::strtod(o.value.c_str(), &end);
    if (end != o.value.c_str() + o.value.size() || !std::isfinite(v))
      return at(fmt::format("'{}' ({} = ...) is neither a number nor a scalar parameter of the "
                            "kernel",
                            o.value, o.key));
    p.numbers[o.key] = v;
    return std::nullopt;
  }
  case OptionKind::Integer: {
    char *end = nullptr;
    long long v = std::strtoll(o.value.c_str(), &end, 10);
    if (end != o.value.c_str() + o.value.size() || v < 1)
      return at(fmt::format("{} takes a positive integer, not '{}'", o.key, o.value));
    p.numbers[o.key] = static_cast<double>(v);
    return std::nullopt;
  }
  case OptionKind::Bool:
    if (o.value != "true" && o.value != "false")
      return at(fmt::format("{} takes true or false, not '{}'", o.key, o.value));
    p.numbers[o.key] = o.value == "true" ? 1 : 0;
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

std::vector<double> decodedValues(const HostTensor &t) {
  std::vector<double> v(t.elements());
  if (!isPacked(t.dtype) && t.bytes.size() >= v.size() * size_t(dtypeBytes(t.dtype))) {
    decodeFloats(t.dtype, t.bytes.data(), t.elements(), v.data());
    return v;
  }
  for (int64_t i = 0; i < t.elements(); ++i)
    v[i] = decodeFloat(t.dtype, t.bitsAt(i));
  return v;
}

double unitRoundoff(Dtype d) {
  if (d == Dtype::f64)
    return std::ldexp(1.0, -53);
  if (const auto *f = numerics::floatFormat(d))
    return std::ldexp(1.0, -(f->manBits + 1));
  return 0.5; // integers: exact up to rounding of the conversion
}

ProblemError errorAt(const BoundProblem &p, std::string_view name, std::string message) {
  for (const auto *list : {&p.spec.inputs, &p.spec.outputs})
    for (const ProblemOperand &o : *list)
      if (o.name == name)
        return {std::move(message), o.offset};
  for (const ProblemOption &o : p.spec.options)
    if (o.value == name || o.key == name)
      return {std::move(message), o.value == name ? o.valueOffset : o.offset};
  return {std::move(message), p.spec.kindOffset};
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "[" + s + "]";
}

std::optional<ProblemError> sameShape(const BoundProblem &p, const HostTensor &y,
                                      const HostTensor &x) {
  if (y.shape == x.shape)
    return std::nullopt;
  return errorAt(p, y.name,
                 fmt::format("output '{}' is {}, not the shape of '{}' {}", y.name,
                             shapeText(y.shape), x.name, shapeText(x.shape)));
}

std::set<std::string> signedScalars(const ProblemSpec &spec) {
  std::set<std::string> out;
  for (const ProblemRule *r : rules()) {
    if (r->kind != spec.kind)
      continue;
    for (const ProblemOption &o : spec.options)
      for (const OptionRule &rule : r->options)
        if (rule.eitherSign && rule.key == o.key)
          out.insert(o.value);
    if (r->signedScalarInputs)
      for (size_t i = r->tensorInputs; i < r->tensorInputs + r->scalarInputs; ++i)
        if (i < spec.inputs.size())
          out.insert(spec.inputs[i].name);
  }
  return out;
}

std::optional<BoundProblem> bindProblem(const ProblemSpec &spec, const Program &program,
                                        const std::vector<HostTensor> &tensors,
                                        ProblemError *error) {
  // A kind may have rules of different arities (max of two tensors, max
  // over an axis): the one whose input count matches, else the first.
  const ProblemRule *rule = nullptr;
  for (const ProblemRule *r : rules()) {
    if (r->kind != spec.kind)
      continue;
    bool fits = r->tensorInputs + r->scalarInputs == spec.inputs.size();
    if (!rule || (fits && rule->tensorInputs + rule->scalarInputs != spec.inputs.size()))
      rule = r;
  }
  auto fail = [&](ProblemError e) {
    *error = std::move(e);
    return std::nullopt;
  };
  if (!rule)
    return fail({unknownProblemKind(spec.kind), spec.kindOffset});
  BoundProblem p;
  p.spec = spec;
  p.rule = rule;
  size_t wantIn = rule->tensorInputs + rule->scalarInputs;
  if (spec.inputs.size() != wantIn || spec.outputs.size() != rule->outputs)
    return fail({fmt::format("problem {} takes {} input{} and {} output{}: {}", rule->kind, wantIn,
                             wantIn == 1 ? "" : "s", rule->outputs, rule->outputs == 1 ? "" : "s",
                             rule->signature),
                 spec.kindOffset});
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const ProblemOperand &in = spec.inputs[i];
    if (in.transposed && !rule->transposable)
      return fail({fmt::format("operands of {} cannot be transposed", rule->kind), in.offset});
    if (i >= rule->tensorInputs) {
      auto v = scalarValue(program, in.name);
      if (!v)
        return fail(
            {fmt::format("'{}' is not a scalar parameter of the kernel", in.name), in.offset});
      p.inputs.push_back(-1);
      p.numbers[in.name] = *v;
      continue;
    }
    int t = tensorIndex(tensors, in.name);
    if (t < 0)
      return fail(
          {fmt::format("'{}' is not a tensor parameter of the kernel", in.name), in.offset});
    if (!isFloat(tensors[t].dtype))
      return fail({fmt::format("'{}' holds {}; the references take float formats", in.name,
                               dtypeName(tensors[t].dtype)),
                   in.offset});
    p.inputs.push_back(t);
  }
  for (const ProblemOperand &out : spec.outputs) {
    int t = tensorIndex(tensors, out.name);
    if (t < 0)
      return fail(
          {fmt::format("'{}' is not a tensor parameter of the kernel", out.name), out.offset});
    if (!isFloat(tensors[t].dtype))
      return fail({fmt::format("'{}' holds {}; the references produce float formats", out.name,
                               dtypeName(tensors[t].dtype)),
                   out.offset});
    for (int in : p.inputs)
      if (in == t)
        return fail({fmt::format("'{}' is both an input and an output", out.name), out.offset});
    p.outputs.push_back(t);
  }
  // Problem sizes (`M = 4096`) are for tools that need concrete sizes; the
  // reference reads the sizes of the tensors it is given.
  std::vector<std::string> symbols = shapeSymbols(*program.kernel);
  ProblemSyntaxError badSize;
  if (!problemSizes(spec, symbols, &badSize))
    return fail({badSize.message, badSize.offset});
  for (const ProblemOption &o : spec.options) {
    if (std::find(symbols.begin(), symbols.end(), o.key) != symbols.end())
      continue;
    if (auto e = bindOption(p, o, *rule, program, tensors))
      return fail(*e);
  }
  if (auto e = rule->check(p, tensors))
    return fail(*e);
  return p;
}

namespace {

// The loops over a block of draws have a clone for x86-64-v4 and v3
// processors chosen at load time; conversions and exactly rounded
// operations only, so every clone gives the same codes.
#if defined(__GNUC__) && defined(__x86_64__)
#define TILESCOPE_DRAW_CLONES                                                                     \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TILESCOPE_DRAW_CLONES
#endif

// Each draw's bf16 bits where encodeFloat rounds a normal float to nearest
// even, else 0x10000 (encodeFloat decides).
TILESCOPE_DRAW_CLONES
void bf16OfDraws(const double *__restrict d, uint32_t *__restrict out, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    const uint32_t u = std::bit_cast<uint32_t>(static_cast<float>(d[k])),
                   magnitude = u & 0x7FFFFFFFu;
    out[k] = magnitude >= 0x00800000u && magnitude <= 0x7F7F0000u
                 ? (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16
                 : 0x10000u;
  }
}

// Each draw's e4m3 bits by e4m3OfUnitFloat, else 0x100 (encodeFloat decides).
TILESCOPE_DRAW_CLONES
void e4m3OfDraws(const double *__restrict d, uint32_t *__restrict out, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    uint32_t bits = 0;
    out[k] = e4m3OfUnitFloat(static_cast<float>(d[k]), bits) ? bits : 0x100u;
  }
}

// Element after element, each the first of the next draws that `take(i,
// draw, code)` accepts (the general loop's retries), the draws read a block
// at a time and their codes computed a block at a time: the same draws in
// the same order (the engine is this fill's own, so the draws left over in
// the last block are never read).
template <typename Codes, typename Take>
void drawCodes(Mt64Block &rng, int64_t n, Codes codes, Take take) {
  constexpr size_t kBlock = 312;
  double draws[kBlock];
  uint32_t code[kBlock];
  for (int64_t i = 0; i < n;) {
    rng.signedUnits(draws, kBlock);
    codes(draws, code, kBlock);
    for (size_t k = 0; k < kBlock && i < n; ++k)
      i += take(i, draws[k], code[k]) ? 1 : 0;
  }
}

} // namespace

void widenInput(HostTensor &t, uint64_t seed, const WideTargets &targets) {
  const numerics::FloatFormat *format = numerics::floatFormat(t.dtype);
  if (!format || t.elements() == 0)
    return;
  // The largest E with 2^(2E + 6) below the format's largest value, at most 6.
  const int top = static_cast<int>(std::floor(std::log2(double(format->maxFinite()))));
  const int reach = std::clamp((top - 6) / 2, 0, 6);
  // The rows past the usual reach (f32 and bf16 only: a product of two such
  // rows, times 2^16 terms, stays normal and finite): the targets of the
  // kernel's literals up to 2^55, and 1 row in 16 at 2^-24, where a sum of
  // products with it lies below 2^-10 (an output flushed below some
  // magnitude fails there: hack `tiny-output-flush`).
  const bool deep = format->minExponent() <= -120 && top >= 120;
  std::vector<int> beyond;
  if (deep)
    for (int e : targets.exponents)
      if (e >= -56 && e <= 55)
        beyond.push_back(e);
  const int64_t n = t.elements();
  const int64_t row = t.shape.empty() ? n : std::max<int64_t>(1, t.shape.back());
  // A word a row (its scale), and a word per 16 elements (4 bits each: zero
  // where they are 0), a block of words at a time: at the persistent size
  // (gemm_bf16_sm90's A of 17025 x 136) a word per element and
  // std::mt19937_64 cost about 35 ms (session 25).
  Mt64Block rng(seed ^ std::hash<std::string>()("wide " + t.name));
  // Its own engine (the rows past the reach).
  std::mt19937_64 rows(seed ^ std::hash<std::string>()("wide rows " + t.name));
  const uint64_t zeroCode = encodeFloat(t.dtype, 0.0);
  // bf16 (the GEMMs' and attention's inputs, millions of elements at
  // attention's edge): a normal value stays normal under the shift, which
  // then moves the exponent field alone — the bits encodeFloat gives.
  const bool bf16 = t.dtype == Dtype::bf16 && t.bytes.size() >= size_t(n) * 2;
  // fp8 and narrower (the fp8 GEMMs' inputs: about a million elements at
  // the grouped GEMMs' persistent size, where decoding and encoding each
  // cost about 50 ms): a table of the scaled codes per shift.
  std::optional<std::map<int, std::vector<uint32_t>>> table;
  if (format->codeBits() <= 8)
    table.emplace();
  uint64_t zeros = 0;
  int left = 0;
  for (int64_t r0 = 0; r0 < n; r0 += row) {
    const int64_t end = std::min(n, r0 + row);
    int shift = static_cast<int>(rng() % uint64_t(2 * reach + 1)) - reach;
    const uint64_t r = rows();
    // No row is all zeros: a row of C = A B would then be exactly zero, and
    // a kernel that zeroed a tile of a single row (the persistent size's
    // second tile of CTA 1 is row 17024 of gemm_bf16_sm90's C) passed at 1
    // seed in 32 (tried in session 25, hack `second-tile-cta-1`).
    if (deep) {
      if (r % 16 == 0 && targets.edgeRows)
        shift = -24;
      else if (!beyond.empty() && (r >> 8) % 2 == 0)
        shift = beyond[(r >> 16) % beyond.size()];
    }
    const double factor = std::ldexp(1.0, shift);
    for (int64_t i = r0; i < end; ++i) {
      if (left == 0) {
        zeros = rng();
        left = 16;
      }
      const bool zero = (zeros & 15u) == 0 && targets.edgeRows;
      zeros >>= 4;
      --left;
      if (zero) {
        if (bf16)
          std::memset(t.bytes.data() + 2 * i, 0, 2);
        else
          t.setBits(i, zeroCode);
        continue;
      }
      if (shift == 0)
        continue;
      if (bf16) {
        uint16_t bits;
        std::memcpy(&bits, t.bytes.data() + 2 * i, 2);
        const int exponent = (bits >> 7) & 0xFF;
        if (exponent > 0 && exponent + shift > 0 && exponent + shift < 0xFF) {
          bits = static_cast<uint16_t>((bits & 0x807Fu) | uint32_t(exponent + shift) << 7);
          std::memcpy(t.bytes.data() + 2 * i, &bits, 2);
          continue;
        }
      }
      if (table) { // a narrow format: every code's scaled code, once per shift
        std::vector<uint32_t> &codes = (*table)[shift];
        if (codes.empty())
          for (uint32_t c = 0; c < (1u << format->codeBits()); ++c)
            codes.push_back(static_cast<uint32_t>(
                encodeFloat(t.dtype, decodeFloat(t.dtype, uint64_t(c) << format->storageShift) *
                                         factor)));
        t.setBits(i, codes[t.bitsAt(i) >> format->storageShift]);
        continue;
      }
      t.setBits(i, encodeFloat(t.dtype, decodeFloat(t.dtype, t.bitsAt(i)) * factor));
    }
  }
}

void widenScales(HostTensor &t, uint64_t seed, const WideTargets &targets) {
  const numerics::FloatFormat *format = numerics::floatFormat(t.dtype);
  if (!format || t.elements() == 0)
    return;
  // The drawn scales lie in [2^-3, 2^3]: a shift keeps them within the
  // format's normal range (e4m3: [2^-6, 448], so [-3, 5]), at most 10 each way.
  const int top = static_cast<int>(std::floor(std::log2(double(format->maxFinite()))));
  const int up = std::clamp(top - 3, 0, 10), down = std::clamp(-(format->minExponent() + 3), 0, 10);
  std::vector<int> beyond;
  for (int e : targets.exponents)
    if (e >= -down && e <= up)
      beyond.push_back(e);
  std::mt19937_64 rng(seed ^ std::hash<std::string>()("wide scales " + t.name));
  for (int64_t i = 0; i < t.elements(); ++i) {
    const uint64_t r = rng();
    int shift = static_cast<int>(r % uint64_t(up + down + 1)) - down;
    if (!beyond.empty() && (r >> 32) % 2 == 0)
      shift = beyond[(r >> 40) % beyond.size()];
    if (shift != 0)
      t.setBits(i, encodeFloat(t.dtype, std::ldexp(decodeFloat(t.dtype, t.bitsAt(i)), shift)));
  }
}

void fillRandomInput(HostTensor &t, uint64_t seed, bool isScale) {
  // std::mt19937_64's words, a block at a time (Mt64.h).
  Mt64Block rng(seed ^ std::hash<std::string>()(t.name));
  const int64_t n = t.elements();
  if (!isFloat(t.dtype)) {
    for (int64_t i = 0; i < n; ++i)
      t.setBits(i, encodeInt(t.dtype, 1 + static_cast<int64_t>(rng() % 7)));
    return;
  }
  if (t.dtype == Dtype::bf16 && !isScale && t.bytes.size() >= size_t(n) * 2) {
    // The GEMMs' inputs, millions of elements at the persistent size: the
    // same draws and bits as the general loop below, with encodeFloat's
    // rounding of a normal float and the bf16 zero and finiteness tests
    // written out (bf16 is the upper half of an f32), a block of draws at a
    // time (drawCodes).
    uint8_t *out = t.bytes.data();
    drawCodes(rng, n, bf16OfDraws, [&](int64_t i, double d, uint32_t code) {
      const uint16_t bits = code <= 0xFFFFu ? static_cast<uint16_t>(code)
                                            : static_cast<uint16_t>(encodeFloat(Dtype::bf16, d));
      const bool zero = (bits & 0x7FFFu) == 0, finite = (bits & 0x7F80u) != 0x7F80u;
      if (zero || !finite)
        return false;
      std::memcpy(out + 2 * i, &bits, 2);
      return true;
    });
    return;
  }
  if (t.dtype == Dtype::f8e4m3 && !isScale && t.bytes.size() >= size_t(n)) {
    // The fp8 GEMMs' inputs (B of the block-scaled GEMM's persistent size:
    // 10.8 million elements): the general loop's draws and bits, with
    // encodeFloat's e4m3 rounding inline and e4m3's zeros (0x00, 0x80) and
    // NaNs (0x7F, 0xFF; it has no infinities) recognised on the bits.
    uint8_t *out = t.bytes.data();
    drawCodes(rng, n, e4m3OfDraws, [&](int64_t i, double d, uint32_t code) {
      const uint32_t bits =
          code <= 0xFFu ? code : static_cast<uint32_t>(encodeFloat(Dtype::f8e4m3, d));
      if ((bits & 0x7Fu) == 0 || (bits & 0x7Fu) == 0x7Fu)
        return false;
      out[i] = static_cast<uint8_t>(bits);
      return true;
    });
    return;
  }
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    double value = 0;
    do {
      bits = encodeFloat(t.dtype, isScale ? std::exp2(3.0 * dist(rng)) : dist(rng));
      value = decodeFloat(t.dtype, bits); // decoded once: this loop fills every input element
    } while (value == 0.0 || !std::isfinite(value));
    t.setBits(i, bits);
  }
}

std::vector<OutputReport> compareWithReference(const BoundProblem &problem,
                                               const std::vector<HostTensor> &tensors,
                                               bool allCtas) {
  return compareWithReference(problem, tensors, tensors, allCtas);
}

const Tolerance *toleranceOf(const Tolerances &tolerances, const std::string &output) {
  if (auto it = tolerances.find(output); it != tolerances.end())
    return &it->second;
  if (auto it = tolerances.find("*"); it != tolerances.end())
    return &it->second;
  return nullptr;
}

std::vector<OutputReport> compareWithReference(const BoundProblem &problem,
                                               const std::vector<HostTensor> &tensors,
                                               const std::vector<HostTensor> &before, bool allCtas,
                                               const Tolerances *tolerances) {
  // Only elements that will be compared need a reference (CTA sampling
  // leaves most of a large output unwritten).
  std::vector<const uint8_t *> written;
  for (size_t o = 0; o < problem.outputs.size() && !allCtas; ++o)
    written.push_back(tensors[problem.outputs[o]].written.data());
  const NeededFn needed(std::move(written));
  std::vector<Expected> expected = problem.rule->reference(problem, before, needed);
  std::vector<OutputReport> reports;
  for (size_t o = 0; o < problem.outputs.size(); ++o) {
    const HostTensor &out = tensors[problem.outputs[o]];
    const Expected &e = expected[o];
    OutputReport rep;
    rep.name = out.name;
    rep.elements = out.elements();
    double u = unitRoundoff(out.dtype), tiny = halfSmallestStep(out.dtype);
    const Tolerance *task = tolerances ? toleranceOf(*tolerances, out.name) : nullptr;
    // With every CTA run every element is compared: decoded a block at a
    // time (decodeFloats: decodeFloat's values) where the bytes allow it.
    const int64_t n = out.elements();
    const bool bulk = allCtas && !isPacked(out.dtype) &&
                      out.bytes.size() >= static_cast<size_t>(n * dtypeBytes(out.dtype));
    constexpr int64_t kBlock = 2048;
    double block[kBlock];
    for (int64_t i = 0; i < n; ++i) {
      if (bulk && i % kBlock == 0)
        decodeFloats(out.dtype, out.bytes.data() + i * dtypeBytes(out.dtype),
                     std::min(kBlock, n - i), block);
      if (!out.written[i]) {
        ++rep.unwritten;
        if (rep.firstUnwritten.size() < 8)
          rep.firstUnwritten.push_back(i);
        if (!allCtas)
          continue;
      }
      ++rep.compared;
      double got = bulk ? block[i % kBlock] : decodeFloat(out.dtype, out.bitsAt(i)),
             ref = e.value[i];
      bool bad = !out.written[i];
      if (std::isinf(ref)) {
        bad |= got != ref; // -inf log-sum-exp of a fully masked row
      } else {
        double err = std::fabs(got - ref);
        double allowed = task ? task->atol + task->rtol * std::fabs(ref)
                              : 1.01 * (u * (std::fabs(ref) + e.bound[i]) + e.bound[i]) + tiny;
        bad |= !(err <= allowed);
        if (out.written[i] && std::isfinite(err)) {
          rep.maxAbsError = std::max(rep.maxAbsError, err);
          if (ref != 0)
            rep.maxRelError = std::max(rep.maxRelError, err / std::fabs(ref));
        }
      }
      if (bad) {
        ++rep.mismatches;
        if (rep.first.size() < 8)
          rep.first.push_back({i, got, ref, out.written[i] != 0});
      }
    }
    reports.push_back(std::move(rep));
  }
  return reports;
}

} // namespace tilescope::sim
