// Shared-memory accesses of PTX instructions (LiftMemory.h).
#include "ptx/LiftMemory.h"

#include "ir/ConcreteEval.h"
#include "ir/Descriptors.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ptx/Classify.h"
#include "ptx/LiftExprs.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope::ptx {
namespace {

constexpr int64_t kInf = int64_t(1) << 50;

// Bytes of one element of the instruction's type modifier times its vector
// width; nullopt without a type.
std::optional<int64_t> accessBytes(const Instruction &in) {
  int64_t vec = 1;
  std::optional<int64_t> width;
  for (const std::string &m : in.modifiers) {
    if (m == "v2")
      vec = 2;
    else if (m == "v4")
      vec = 4;
    else if (m == "v8")
      vec = 8;
    else if (m == "b8" || m == "u8" || m == "s8")
      width = 1;
    else if (m == "b16" || m == "u16" || m == "s16" || m == "f16" || m == "bf16")
      width = 2;
    else if (m == "b32" || m == "u32" || m == "s32" || m == "f32" || m == "f16x2" || m == "bf16x2")
      width = 4;
    else if (m == "b64" || m == "u64" || m == "s64" || m == "f64")
      width = 8;
    else if (m == "b128")
      width = 16;
  }
  if (!width)
    return std::nullopt;
  return *width * vec;
}

enum class Space { None, Shared, Cluster, Other };
Space spaceOf(const Instruction &in) {
  for (const std::string &m : in.modifiers) {
    if (m == "shared" || m == "shared::cta")
      return Space::Shared;
    if (m == "shared::cluster")
      return Space::Cluster;
    if (m == "global" || m == "local" || m == "param" || m == "const")
      return Space::Other;
  }
  return Space::None;
}

// Whether e is a multiple of m for every value of its variables.
bool multipleOf(const Expr &e, int64_t m) {
  if (!e)
    return true;
  if (auto k = constantValue(e))
    return *k % m == 0;
  if (e->kind != ExprKind::Binary)
    return false;
  const auto &b = as<Binary>(e);
  switch (b.op) {
  case BinaryOp::Sub:
    // x % a - x % c with m | c and c | a: the bits [log c, log a) of x.
    if (b.lhs->kind == ExprKind::Binary && b.rhs->kind == ExprKind::Binary &&
        as<Binary>(b.lhs).op == BinaryOp::Mod && as<Binary>(b.rhs).op == BinaryOp::Mod &&
        equal(as<Binary>(b.lhs).lhs, as<Binary>(b.rhs).lhs)) {
      auto a = constantValue(as<Binary>(b.lhs).rhs), c = constantValue(as<Binary>(b.rhs).rhs);
      if (a && c && *c > 0 && *c % m == 0 && *a % *c == 0)
        return true;
    }
    [[fallthrough]];
  case BinaryOp::Add:
    return multipleOf(b.lhs, m) && multipleOf(b.rhs, m);
  case BinaryOp::Mul:
    return multipleOf(b.lhs, m) || multipleOf(b.rhs, m);
  case BinaryOp::Mod: { // (x % c) with m | x and m | c
    auto c = constantValue(b.rhs);
    return c && *c % m == 0 && multipleOf(b.lhs, m);
  }
  default:
    return false;
  }
}

struct Range {
  int64_t lo = 0, hi = 0; // inclusive; hi >= kInf: unbounded
};

struct Env {
  int64_t threads = 1;                    // threadIdx.x below this
  std::map<std::string, int64_t> iterMax; // it<L>: its largest value
  int64_t firstThread = 0;                // threadIdx.x from this (an event's threads)
};

std::optional<Range> rangeOf(const Expr &e, const Env &env) {
  if (!e)
    return std::nullopt;
  if (auto k = constantValue(e))
    return Range{*k, *k};
  switch (e->kind) {
  case ExprKind::Builtin:
    switch (as<Builtin>(e).which) {
    case BuiltinKind::threadIdx_x:
      return Range{env.firstThread, env.threads - 1};
    case BuiltinKind::laneid:
      return Range{0, kThreadsPerWarp - 1};
    default:
      return Range{0, kInf};
    }
  case ExprKind::Var: {
    auto it = env.iterMax.find(as<Var>(e).name);
    if (it != env.iterMax.end())
      return Range{0, it->second};
    return Range{0, int64_t(1) << 30}; // a parameter
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    auto x = rangeOf(b.lhs, env), y = rangeOf(b.rhs, env);
    if (!x || !y)
      return std::nullopt;
    auto clamp = [](int64_t v) { return std::max(-kInf, std::min(kInf, v)); };
    switch (b.op) {
    case BinaryOp::Add:
      return Range{clamp(x->lo + y->lo), clamp(x->hi + y->hi)};
    case BinaryOp::Sub: {
      // x % a - x % b with b | a (a mask of bits [log b, log a)): [0, a - b].
      if (b.lhs->kind == ExprKind::Binary && b.rhs->kind == ExprKind::Binary &&
          as<Binary>(b.lhs).op == BinaryOp::Mod && as<Binary>(b.rhs).op == BinaryOp::Mod &&
          equal(as<Binary>(b.lhs).lhs, as<Binary>(b.rhs).lhs)) {
        auto a = constantValue(as<Binary>(b.lhs).rhs), c = constantValue(as<Binary>(b.rhs).rhs);
        if (a && c && *c > 0 && *a % *c == 0 && x->lo >= 0)
          return Range{0, *a - *c};
      }
      return Range{clamp(x->lo - y->hi), clamp(x->hi - y->lo)};
    }
    case BinaryOp::Mul: {
      if (std::max({std::abs(x->lo), std::abs(x->hi), std::abs(y->lo), std::abs(y->hi)}) >=
          (int64_t(1) << 25))
        return x->lo >= 0 && y->lo >= 0 ? std::optional(Range{x->lo * y->lo, kInf}) : std::nullopt;
      int64_t p[] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo, x->hi * y->hi};
      return Range{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case BinaryOp::Div:
      if (y->lo != y->hi || y->lo <= 0 || x->lo < 0)
        return std::nullopt;
      return Range{x->lo / y->lo, x->hi >= kInf ? kInf : x->hi / y->lo};
    case BinaryOp::Mod:
      if (y->lo != y->hi || y->lo <= 0 || x->lo < 0)
        return std::nullopt;
      if (x->hi < y->lo)
        return x;
      return Range{0, y->lo - 1};
    default:
      return std::nullopt;
    }
  }
  default:
    return std::nullopt;
  }
}

// Offsets in a normal form: a linear combination of atoms (products,
// divisions, remainders, variables) plus a constant, like terms merged, and
// remainders `x % m` simplified where the value decides (x in [0, m): x;
// terms of x with coefficients divisible by m dropped, when the rest stays
// non-negative). Exact under the reading of Values.h (non-negative values).
struct Linear {
  std::map<std::string, std::pair<Expr, int64_t>> terms; // printed atom -> (atom, coefficient)
  int64_t constant = 0;
};

Expr rebuild(const Linear &l) {
  Expr e;
  for (const auto &[key, t] : l.terms) {
    if (t.second == 0)
      continue;
    Expr term =
        t.second == 1 ? t.first : Binary::make(BinaryOp::Mul, t.first, IntImm::make(t.second));
    e = e ? Binary::make(BinaryOp::Add, e, term) : term;
  }
  if (!e)
    return IntImm::make(l.constant);
  return l.constant ? Binary::make(BinaryOp::Add, e, IntImm::make(l.constant)) : e;
}

Linear linear(const Expr &e, const Env &env);

void addInto(Linear &to, const Linear &from, int64_t scale) {
  for (const auto &[key, t] : from.terms) {
    auto &slot = to.terms[key];
    if (!slot.first)
      slot.first = t.first;
    slot.second += t.second * scale;
  }
  to.constant += from.constant * scale;
}

Linear atom(const Expr &e) {
  Linear l;
  l.terms[print(e)] = {e, 1};
  return l;
}

// Whether x is at least 0 for every value in the environment.
bool nonNegative(const Linear &x, const Env &env) {
  auto r = rangeOf(rebuild(x), env);
  return r && r->lo >= 0;
}

Linear linear(const Expr &e, const Env &env) {
  Linear l;
  if (auto k = constantValue(e)) {
    l.constant = *k;
    return l;
  }
  if (e->kind != ExprKind::Binary)
    return atom(e);
  const auto &b = as<Binary>(e);
  auto c = constantValue(b.rhs);
  switch (b.op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
    addInto(l, linear(b.lhs, env), 1);
    addInto(l, linear(b.rhs, env), b.op == BinaryOp::Add ? 1 : -1);
    return l;
  case BinaryOp::Mul:
    if (c) {
      addInto(l, linear(b.lhs, env), *c);
      return l;
    }
    if (auto d = constantValue(b.lhs)) {
      addInto(l, linear(b.rhs, env), *d);
      return l;
    }
    // A product of two terms: each factor in the normal form.
    return atom(
        Binary::make(BinaryOp::Mul, rebuild(linear(b.lhs, env)), rebuild(linear(b.rhs, env))));
  case BinaryOp::Mod: {
    if (!c || *c <= 0)
      return atom(e);
    Linear x = linear(b.lhs, env);
    Linear kept;
    kept.constant = x.constant;
    for (const auto &[key, t] : x.terms)
      if (t.second % *c != 0)
        kept.terms[key] = t;
    auto r = rangeOf(rebuild(kept), env);
    // A rest that may be negative, of a non-negative x: raised by a multiple
    // of m, which leaves x % m as it is (both sides non-negative, congruent).
    if (r && r->lo < 0 && r->hi < kInf && nonNegative(x, env)) {
      int64_t raise = (-r->lo + *c - 1) / *c * *c;
      kept.constant += raise;
      r = Range{r->lo + raise, r->hi + raise};
    }
    if (!r || r->lo < 0) // dropping the multiples of m needs a non-negative rest
      return atom(Binary::make(BinaryOp::Mod, rebuild(x), b.rhs));
    if (r->hi < kInf && r->lo / *c == r->hi / *c) {
      // The rest stays in one [k m, (k + 1) m): it is x % m plus k m.
      kept.constant -= r->lo / *c * *c;
      return kept;
    }
    return atom(Binary::make(BinaryOp::Mod, rebuild(kept), b.rhs));
  }
  case BinaryOp::Div: {
    if (!c || *c <= 0)
      return atom(e);
    // x / m of a non-negative x = q + r, m dividing every term of q: q / m
    // plus r / m, r first raised to non-negative by a multiple of m taken
    // from q (floor and truncation agree on non-negative values).
    Linear x = linear(b.lhs, env), q, r;
    r.constant = x.constant;
    for (const auto &[key, t] : x.terms)
      if (t.second % *c == 0)
        q.terms[key] = {t.first, t.second / *c};
      else
        r.terms[key] = t;
    auto rr = rangeOf(rebuild(r), env);
    if (q.terms.empty() || !rr || rr->hi >= kInf || !nonNegative(x, env))
      return atom(Binary::make(BinaryOp::Div, rebuild(x), b.rhs));
    int64_t raise = rr->lo < 0 ? (-rr->lo + *c - 1) / *c * *c : 0;
    r.constant += raise;
    q.constant -= raise / *c;
    if (rr->hi + raise < *c)
      return q;
    addInto(q, atom(Binary::make(BinaryOp::Div, rebuild(r), b.rhs)), 1);
    return q;
  }
  default:
    return atom(e);
  }
}

Expr normalise(const Expr &e, const Env &env) {
  return e ? rebuild(linear(e, env)) : e;
}

} // namespace

SharedAccesses::SharedAccesses(const Module &m, const Function &f, const RegisterValues &values,
                               int64_t threads)
    : f_(f), values_(values), threads_(threads > 0 ? threads : 1024) {
  for (const std::vector<Declaration> *decls : {&m.globals, &f.decls})
    for (const Declaration &d : *decls)
      if (d.space == "shared")
        align_[d.name] = std::max<int64_t>(d.align, 1);
}

std::optional<MemoryAccess> SharedAccesses::range(size_t i, const Operand &mem, int64_t bytes,
                                                  bool write, std::string &why) const {
  const Instruction &in = f_.instructions[i];
  AddressParts a = splitAddress(values_.addressValue(mem, i));
  a.rest = normalise(a.rest, Env{threads_, {}});
  if (!a.ok || a.symbol.empty()) {
    why = fmt::format("the shared-memory address of line {} is not derived as a shared variable "
                      "plus an offset",
                      in.line);
    return std::nullopt;
  }
  MemoryAccess m;
  m.buffer = a.symbol;
  m.scope = MemScope::Shared;
  m.dtype = Dtype::u8;
  m.write = write;
  m.region.push_back({a.rest ? add(a.rest, IntImm::make(a.constant)) : IntImm::make(a.constant),
                      IntImm::make(bytes)});
  m.stage = IntImm::make(0);
  m.stages = 1;
  return m;
}

LiftedAccess SharedAccesses::threadAccess(size_t i) const {
  const Instruction &in = f_.instructions[i];
  LiftedAccess out;
  const std::string &op = in.opcode;
  bool plain = op == "ld" || op == "st" || op == "atom" || op == "red";
  bool matrix = op == "ldmatrix" || op == "stmatrix";
  bool cpAsync = op == "cp" && !in.modifiers.empty() && in.modifiers[0] == "async" &&
                 !in.hasModifier("bulk") && !in.hasModifier("mbarrier") && in.operands.size() >= 3;
  if (!plain && !matrix && !cpAsync)
    return out;
  Space space = spaceOf(in);
  const Operand *addr = addressOperand(in);
  if (plain && space == Space::None) {
    // A generic address: shared memory only when it derives from a shared
    // variable (cvta of its address).
    if (addr) {
      AddressParts a = splitAddress(values_.addressValue(*addr, i));
      if (a.ok && align_.count(a.symbol))
        out.why = fmt::format("line {}: a generic-address access to shared memory is not lifted",
                              in.line);
    }
    return out;
  }
  if (space == Space::Cluster) {
    out.why = fmt::format("line {}: a DSMEM access (shared::cluster) is not lifted", in.line);
    return out;
  }
  if (space != Space::Shared)
    return out;
  std::string why;
  std::optional<MemoryAccess> m;
  if (plain) {
    auto bytes = accessBytes(in);
    if (!addr || !bytes) {
      out.why = fmt::format("line {}: the shared-memory access is not read", in.line);
      return out;
    }
    m = range(i, *addr, *bytes, op != "ld", why);
  } else if (matrix) {
    int n = in.hasModifier("x4") ? 4 : in.hasModifier("x2") ? 2 : in.hasModifier("x1") ? 1 : 0;
    if (!in.hasModifier("m8n8") || !in.hasModifier("b16") || n == 0 || !addr) {
      out.why =
          fmt::format("line {}: '{}' is not lifted (only .m8n8 .b16)", in.line, in.fullName());
      return out;
    }
    out.lanes = 8 * n;
    m = range(i, *addr, 16, op == "stmatrix", why);
  } else {
    auto bytes = in.operands[2].kind == Operand::Immediate
                     ? std::optional<int64_t>(in.operands[2].value)
                     : std::nullopt;
    if (!bytes || !addr) {
      out.why = fmt::format("line {}: the cp.async size is not a constant", in.line);
      return out;
    }
    out.what = "cp_async";
    m = range(i, *addr, *bytes, true, why);
  }
  if (!m) {
    out.why = std::move(why);
    return out;
  }
  m->perThread = true;
  out.accesses.push_back(*m);
  return out;
}

LiftedAccess SharedAccesses::region(size_t i, const Operand &mem, int64_t bytes, bool write) const {
  LiftedAccess out;
  std::string why;
  auto m = range(i, mem, bytes, write, why);
  if (!m) {
    out.why = std::move(why);
    return out;
  }
  m->asyncProxy = true;
  out.accesses.push_back(*m);
  return out;
}

// nvcc's descriptor: or.b64 d, x, C; cvt.u64.u32 x, y; then the start
// address field from the shared address, `(addr & MASK) >> 4` (wgmma) or
// `(addr >> 4) & MASK` (tcgen05), the mask optional. C holds the fields
// but the start address (ir/Descriptors.h reads them): the swizzle mode, the
// stride and leading byte offsets, a zero base offset, and for tcgen05
// (sm_100) the version 1 and the LBO mode 0.
std::optional<MemoryAccess> SharedAccesses::descriptor(size_t i, const Operand &desc, int64_t rows,
                                                       bool tcgen05, std::string &why,
                                                       int64_t *rowBytesOut,
                                                       int64_t *lboOut) const {
  const Instruction &wg = f_.instructions[i];
  const char *op = tcgen05 ? "tcgen05.mma" : "wgmma";
  why = fmt::format("line {}: the {} descriptor {} is not one built as nvcc builds it", wg.line, op,
                    desc.text);
  auto single = [&](const std::string &reg) -> const Instruction * {
    const std::vector<size_t> &d = values_.definitions(reg);
    if (d.size() != 1 || !f_.instructions[d[0]].guard.empty())
      return nullptr;
    return &f_.instructions[d[0]];
  };
  if (desc.kind != Operand::Register)
    return std::nullopt;
  const Instruction *orIn = single(desc.name);
  if (!orIn || (orIn->opcode != "or" && orIn->opcode != "add") || orIn->operands.size() != 3)
    return std::nullopt;
  const Operand *x = nullptr;
  std::optional<uint64_t> c;
  for (size_t k : {size_t(1), size_t(2)}) {
    const Operand &o = orIn->operands[k];
    if (o.kind == Operand::Immediate)
      c = uint64_t(o.value);
    else if (o.kind == Operand::Register)
      x = &o;
  }
  if (!x || !c)
    return std::nullopt;
  const DescriptorKind kind = tcgen05 ? DescriptorKind::Tcgen05Smem : DescriptorKind::WgmmaSmem;
  auto field = [&](DescField f) { return unpackDescriptor(kind, *c, f); };
  if (field(DescField::StartAddress) != 0 || field(DescField::BaseOffset) != 0)
    return std::nullopt;
  if (tcgen05 && (field(DescField::Version) != 1 || field(DescField::LboMode) != 0))
    return std::nullopt;
  int mode = int(field(DescField::Swizzle));
  int64_t sbo = int64_t(field(DescField::StrideByteOffset));
  if (lboOut)
    *lboOut = int64_t(field(DescField::LeadingByteOffset));
  // The row of the swizzle pattern (128, 64, 32 bytes): the swizzle span of
  // the mode (none: no row).
  std::optional<int64_t> span = fieldKeyOfCode(kind, DescField::Swizzle, uint64_t(mode));
  int64_t rowBytes = span && *span > 16 ? *span : 0;
  if (rowBytesOut)
    *rowBytesOut = rowBytes;
  if (rowBytes == 0 || sbo != 8 * rowBytes) {
    why = fmt::format("line {}: a {} operand without a 32/64/128-byte swizzle of 8-row groups "
                      "(mode {}, stride {} bytes) is not lifted",
                      wg.line, op, mode, sbo);
    return std::nullopt;
  }
  const Instruction *cvt = single(x->name);
  if (!cvt || cvt->opcode != "cvt" || cvt->operands.size() != 2 ||
      cvt->operands[1].kind != Operand::Register)
    return std::nullopt;
  // Peel `and` and `shr 4` (in either order) down to the address; the mask
  // in address bits. The start address field keeps the address's bits
  // [4, 18): kUnit = 4, kAddressBits = 0x3FFFF.
  const DescriptorField &start = *findField(descriptorFormat(kind), DescField::StartAddress);
  const int kUnit = start.unitLog2;
  const uint64_t kAddressBits = (uint64_t{1} << (start.width + kUnit)) - 1,
                 kFieldBits = kAddressBits & ~((uint64_t{1} << kUnit) - 1);
  const Operand *addr = &cvt->operands[1];
  size_t at = size_t(cvt - f_.instructions.data());
  uint64_t mask = kAddressBits;
  bool shifted = false, masked = false; // peeled from the descriptor up
  for (int step = 0; step < 2; ++step) {
    const Instruction *d = single(addr->name);
    if (!d || d->operands.size() != 3 || d->operands[1].kind != Operand::Register ||
        d->operands[2].kind != Operand::Immediate)
      break;
    if (d->opcode == "shr" && !shifted && d->operands[2].value == kUnit) {
      shifted = true;
    } else if (d->opcode == "and" && !masked) {
      masked = true;
      uint64_t m = uint64_t(d->operands[2].value) & 0xffffffffu;
      // Peeled after the shift, the mask applies before it (address bits);
      // peeled first, it applies to the address over 16.
      mask = shifted ? m : m << kUnit;
    } else {
      break;
    }
    at = size_t(d - f_.instructions.data());
    addr = &d->operands[1];
  }
  if (!shifted)
    return std::nullopt;
  // The mask keeps every bit the address may have in [4, 18), and the
  // address is 16-byte aligned: the field is the address over 16 (shared
  // addresses are below 2^18).
  uint64_t bits = values_.operandBits(*addr, at);
  AddressParts a = splitAddress(values_.operandValue(*addr, at));
  a.rest = normalise(a.rest, Env{threads_, {}});
  bool keeps = (bits & kAddressBits & ~mask) == 0 && (bits & ~kFieldBits & kAddressBits) == 0;
  // Where the bits are not known one by one (a K step inside a swizzled
  // row: twice a sum of terms), by the address's value: a shared variable
  // aligned to 16 plus a constant and terms that are multiples of 16 is
  // 16-byte aligned, and below 2^18 (the reading), so a mask keeping all of
  // bits [4, 18) keeps the address.
  if (!keeps && (mask & kFieldBits) == kFieldBits && a.ok && !a.symbol.empty() &&
      align_.count(a.symbol) && align_.at(a.symbol) % 16 == 0 && a.constant % 16 == 0 &&
      (!a.rest || multipleOf(a.rest, 16)))
    keeps = true;
  // Else by the address's low bits: the variable aligned to M (a power of
  // two), the constant plus the rest a fixed residue modulo M (nvcc's K step
  // of 32 bytes into a 128-byte row, masked with 0x3FFA0: bits 4 and 6,
  // which the residue 32 has clear, dropped): those bits are the residue's,
  // and the mask must keep its bits in [4, log2 M) and every bit in
  // [log2 M, 18).
  for (int64_t M = int64_t(kAddressBits) + 1;
       !keeps && M >= (int64_t{1} << kUnit) && a.ok && !a.symbol.empty() && align_.count(a.symbol);
       M /= 2) {
    if (align_.at(a.symbol) % M != 0)
      continue;
    auto r =
        residueModulo(a.rest ? add(a.rest, IntImm::make(a.constant)) : IntImm::make(a.constant), M);
    if (!r)
      continue;
    uint64_t high = kAddressBits & ~uint64_t(M - 1);
    keeps = *r % 16 == 0 && (uint64_t(*r) & kFieldBits & ~mask) == 0 && (high & ~mask) == 0;
    break;
  }
  if (!keeps) {
    why = fmt::format("line {}: the {} descriptor {} masks address bits the address may have",
                      wg.line, op, desc.text);
    return std::nullopt;
  }
  if (!a.ok || a.symbol.empty() || !align_.count(a.symbol) || align_.at(a.symbol) % rowBytes != 0) {
    why = fmt::format("line {}: the address in {} descriptor {} is not derived as a shared "
                      "variable plus an offset{}",
                      wg.line, op, desc.text,
                      a.ok && a.rest ? fmt::format(" whose terms are multiples of the {}-byte row "
                                                   "(offset {} + {})",
                                                   rowBytes, a.constant, print(a.rest))
                                     : "");
    return std::nullopt;
  }
  // The rows from the one holding the start address (a K step starts
  // inside it): start - start % rowBytes, which groupSharedBuffers
  // simplifies for the threads that run the wgmma (a start is a shared
  // address, not negative).
  Expr begin;
  if (a.constant >= 0 && multipleOf(a.rest, rowBytes)) {
    int64_t first = a.constant - a.constant % rowBytes;
    begin = a.rest ? add(a.rest, IntImm::make(first)) : IntImm::make(first);
  } else {
    Expr start = a.rest ? add(a.rest, IntImm::make(a.constant)) : IntImm::make(a.constant);
    begin = Binary::make(BinaryOp::Sub, start,
                         Binary::make(BinaryOp::Mod, start, IntImm::make(rowBytes)));
  }
  MemoryAccess m;
  m.buffer = a.symbol;
  m.scope = MemScope::Shared;
  m.dtype = Dtype::u8;
  m.asyncProxy = true;
  m.region.push_back({begin, IntImm::make(rows * rowBytes)});
  m.stage = IntImm::make(0);
  why.clear();
  return m;
}

LiftedAccess SharedAccesses::wgmmaOperands(size_t i) const {
  const Instruction &in = f_.instructions[i];
  LiftedAccess out;
  auto shape = in.modifierStartingWith("m64n");
  int64_t n = 0;
  if (shape)
    std::sscanf(shape->c_str(), "m64n%ldk", &n);
  if (n <= 0 || in.operands.size() < 3) {
    out.why = fmt::format("line {}: the wgmma shape is not read", in.line);
    return out;
  }
  // bf16 / f16 operands carry transpose flags last: imm-trans-a (only with
  // A from shared memory: 8 operands) and imm-trans-b; 0 is K-major. With A
  // from registers (7 operands) the one before imm-trans-b is imm-scale-b.
  bool half = in.hasModifier("bf16") || in.hasModifier("f16");
  bool registerA = in.operands[1].kind == Operand::Vector;
  bool mnMajorB = false;
  if (half && in.operands.size() == (registerA ? 7u : 8u)) {
    const Operand &tb = in.operands.back();
    const Operand *ta = registerA ? nullptr : &in.operands[in.operands.size() - 2];
    if ((ta && (ta->kind != Operand::Immediate || ta->value != 0)) ||
        tb.kind != Operand::Immediate || (tb.value != 0 && tb.value != 1)) {
      out.why =
          fmt::format("line {}: a transposed (MN-major) A operand of wgmma is not lifted", in.line);
      return out;
    }
    mnMajorB = tb.value == 1;
  } else if (half) {
    out.why = fmt::format("line {}: the wgmma's operands are not read", in.line);
    return out;
  }
  std::string why;
  if (mnMajorB) {
    // B MN-major: the descriptor's rows run along K (one row of the swizzle
    // span holds span / 2 consecutive N elements of one k, 16-bit types),
    // 8-row groups SBO apart (8 rows: the K rows are consecutive), and the
    // N elements in column blocks of span / 2, LBO apart (the lowering's
    // layout, docs/codegen.md). An instruction reads k rows of each block.
    auto kk = shape->find('k');
    int64_t k = kk == std::string::npos ? 0 : std::atoll(shape->c_str() + kk + 1);
    int64_t rowBytes = 0, lbo = 0;
    auto b = descriptor(i, in.operands[2], k, false, why, &rowBytes, &lbo);
    if (!b) {
      out.why = why;
      return out;
    }
    if (k <= 0 || rowBytes <= 0 || (n * 2) % rowBytes != 0 ||
        (n * 2 > rowBytes && lbo < k * rowBytes)) {
      out.why = fmt::format("line {}: the MN-major B operand of wgmma (k {}, {} bytes a row, "
                            "column blocks {} bytes apart) is not lifted",
                            in.line, k, rowBytes, lbo);
      return out;
    }
    for (int64_t j = 0; j < n * 2 / rowBytes; ++j) {
      MemoryAccess block = *b;
      block.region[0].begin = add(b->region[0].begin, IntImm::make(j * lbo));
      out.accesses.push_back(block);
    }
    return out;
  }
  if (!registerA) { // A from shared memory
    auto a = descriptor(i, in.operands[1], 64, false, why);
    if (!a) {
      out.why = why;
      return out;
    }
    out.accesses.push_back(*a);
  }
  auto b = descriptor(i, in.operands[2], n, false, why);
  if (!b) {
    out.accesses.clear();
    out.why = why;
    return out;
  }
  out.accesses.push_back(*b);
  return out;
}

// --- buffers and stages ---

namespace {

// The exact range of an offset that reads only the thread index, by
// evaluating it for every thread (interval arithmetic loses the
// correlations of swizzle terms); else rangeOf.
std::optional<Range> reachOf(const Expr &e, const Env &env) {
  std::vector<std::string> vars;
  freeVars(e, vars);
  if (!vars.empty()) {
    if (auto r = rangeOf(e, env))
      return r;
    // The terms over the thread index alone, listed for every thread, plus
    // the range of the rest (a ring index over loop counters and
    // parameters beside a lane's swizzled slot): the sum's range holds the
    // offset's.
    Linear l = linear(e, env), threadPart, rest;
    rest.constant = l.constant;
    for (const auto &[key, t] : l.terms) {
      std::vector<std::string> tv;
      freeVars(t.first, tv);
      (tv.empty() ? threadPart : rest).terms[key] = t;
    }
    if (threadPart.terms.empty() || rest.terms.empty())
      return std::nullopt;
    auto a = reachOf(rebuild(threadPart), env);
    auto b = rangeOf(rebuild(rest), env);
    if (!a || !b || a->hi >= kInf || b->hi >= kInf || a->lo <= -kInf || b->lo <= -kInf)
      return std::nullopt;
    return Range{a->lo + b->lo, a->hi + b->hi};
  }
  std::optional<Range> r;
  for (int64_t t = env.firstThread; t < env.threads; ++t) {
    auto v = evalConcrete(e, [&](const Expr &x) -> std::optional<int64_t> {
      if (x->kind != ExprKind::Builtin)
        return std::nullopt;
      if (as<Builtin>(x).which == BuiltinKind::threadIdx_x)
        return t;
      if (as<Builtin>(x).which == BuiltinKind::laneid)
        return laneOf(t);
      return std::nullopt;
    });
    if (!v)
      return rangeOf(e, env);
    r = r ? Range{std::min(r->lo, *v), std::max(r->hi, *v)} : Range{*v, *v};
  }
  return r;
}

// A term ((it + c) % S) * stride of an offset (in the normal form), and the
// offset without it.
struct Ring {
  Expr stage;
  int64_t stages = 0, stride = 0;
  Expr inner;
};
std::optional<Ring> ringOf(const Expr &offset, const Env &env) {
  Linear l = linear(offset, env);
  std::optional<Ring> found;
  std::string key;
  for (const auto &[k, t] : l.terms) {
    const Expr &x = t.first;
    if (x->kind != ExprKind::Binary || as<Binary>(x).op != BinaryOp::Mod || t.second <= 0)
      continue;
    auto s = constantValue(as<Binary>(x).rhs);
    std::vector<std::string> vars;
    freeVars(as<Binary>(x).lhs, vars);
    // Over loop counters (one, or a nest flattened: `(it0 * kt + it2) % S`
    // of a persistent kernel, whose stage pattern the proofs derive over
    // the nest) and parameters, which do not change between iterations.
    bool counters = std::any_of(vars.begin(), vars.end(),
                                [](const std::string &v) { return v.rfind("it", 0) == 0; });
    for (const std::string &v : vars)
      counters &= v.rfind("it", 0) == 0 || v.rfind("param_", 0) == 0;
    if (!s || *s < 2 || !counters)
      continue;
    if (found)
      return std::nullopt; // two rings in one offset
    found = Ring{x, *s, t.second, nullptr};
    key = k;
  }
  if (found) {
    l.terms.erase(key);
    found->inner = rebuild(l);
  }
  return found;
}

} // namespace

void groupSharedBuffers(BarrierSkeleton &sk,
                        std::vector<std::pair<llvm::SMLoc, std::string>> &notLifted) {
  Env env;
  env.threads = std::max<int64_t>(sk.threads, 1);
  for (const SkeletonLoop &l : sk.loops) {
    auto r = rangeOf(l.trip(), env);
    env.iterMax[l.var] = r && r->hi < kInf ? std::max<int64_t>(r->hi - 1, 0) : kInf;
  }
  struct Item {
    SyncEvent *event;
    MemoryAccess *access;
    Range reach;
  };
  std::map<std::string, std::vector<Item>> bySymbol;
  // Each event's offsets over its own threads (the first to the last that
  // run it): a term that is negative only for threads that never run the
  // access (a producer's warpgroup index in a consumer's address) then
  // simplifies.
  auto envOf = [&](const SyncEvent &e) {
    Env own = env;
    for (int64_t t = 0; t < env.threads && !e.threads.contains(t); ++t)
      own.firstThread = t + 1;
    if (own.firstThread >= own.threads)
      return env; // no thread runs it
    while (own.threads > own.firstThread + 1 && !e.threads.contains(own.threads - 1))
      --own.threads;
    return own;
  };
  for (SyncEvent &e : sk.events) {
    std::vector<MemoryAccess> kept;
    Env own = envOf(e);
    for (MemoryAccess &a : e.accesses) {
      if (a.scope != MemScope::Shared || a.region.size() != 1) {
        kept.push_back(a);
        continue;
      }
      a.region[0].begin = normalise(a.region[0].begin, own);
      auto r = reachOf(a.region[0].begin, own);
      auto bytes = constantValue(a.region[0].extent);
      if (!r || !bytes || r->lo < 0 || r->hi >= kInf) {
        notLifted.push_back({e.loc, fmt::format("the offset in {} of this access has no bounded "
                                                "range ({})",
                                                a.buffer, print(a.region[0].begin))});
        continue;
      }
      kept.push_back(a);
    }
    e.accesses = std::move(kept);
  }
  for (SyncEvent &e : sk.events)
    for (MemoryAccess &a : e.accesses)
      if (a.scope == MemScope::Shared && a.region.size() == 1) {
        Range r = *reachOf(a.region[0].begin, envOf(e));
        r.hi += *constantValue(a.region[0].extent); // exclusive end
        bySymbol[a.buffer].push_back({&e, &a, r});
      }
  for (auto &[symbol, items] : bySymbol) {
    std::sort(items.begin(), items.end(),
              [](const Item &x, const Item &y) { return x.reach.lo < y.reach.lo; });
    size_t start = 0;
    int64_t end = items.empty() ? 0 : items[0].reach.hi;
    for (size_t k = 0; k <= items.size(); ++k) {
      if (k < items.size() && (k == start || items[k].reach.lo < end)) {
        end = std::max(end, items[k].reach.hi);
        continue;
      }
      // items[start, k) overlap: one buffer.
      std::string name = fmt::format("{}+{}", symbol, items[start].reach.lo);
      sk.buffers[name] = SkeletonBuffer{name,
                                        MemScope::Shared,
                                        Dtype::u8,
                                        {IntImm::make(end - items[start].reach.lo)},
                                        items[start].event->loc};
      // The stage proofs compare stage indices, not bytes: every ring access
      // must stay inside its stage's slot [base + s * stride, + stride),
      // with one stage count and stride for the buffer.
      int64_t stages = 0, stride = 0, base = items[start].reach.lo;
      for (size_t j = start; j < k; ++j) {
        MemoryAccess &a = *items[j].access;
        a.buffer = name;
        Env own = envOf(*items[j].event);
        auto ring = ringOf(a.region[0].begin, own);
        if (!ring)
          continue;
        auto inner = reachOf(ring->inner, own);
        int64_t bytes = *constantValue(a.region[0].extent);
        if ((stages != 0 && (stages != ring->stages || stride != ring->stride)) || !inner ||
            inner->lo < base || inner->hi + bytes > base + ring->stride) {
          notLifted.push_back(
              {items[j].event->loc,
               fmt::format("the stages of {} are not disjoint slots of one ring (a ring of {} "
                           "stages {} bytes apart here)",
                           name, ring->stages, ring->stride)});
          a.region.clear(); // dropped below
          continue;
        }
        stages = ring->stages;
        stride = ring->stride;
        a.stage = ring->stage;
        a.stages = ring->stages;
      }
      // An access of a ringed buffer outside its ring: its stage is not known.
      for (size_t j = start; j < k && stages != 0; ++j)
        if (items[j].access->stages == 1 && !items[j].access->region.empty()) {
          items[j].access->region.clear(); // dropped below
          notLifted.push_back(
              {items[j].event->loc, fmt::format("an access of {}, a ring of {} stages, outside the "
                                                "ring: its stage is not derived",
                                                name, stages)});
        }
      if (k < items.size()) {
        start = k;
        end = items[k].reach.hi;
      }
    }
  }
  for (SyncEvent &e : sk.events)
    e.accesses.erase(std::remove_if(e.accesses.begin(), e.accesses.end(),
                                    [](const MemoryAccess &a) { return a.region.empty(); }),
                     e.accesses.end());
}

} // namespace tilescope::ptx
