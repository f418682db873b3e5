#include "codegen/CudaEmitter.h"

#include "ir/DeviceScale.h"
#include "ir/Dispatch.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <map>
#include <numeric>
#include <set>
#include <sstream>

namespace tilescope::codegen {

std::string gencodeFor(TargetKind target) {
  switch (target) {
  case TargetKind::sm_80: return "-gencode=arch=compute_80,code=sm_80";
  case TargetKind::sm_90a: return "-gencode=arch=compute_90a,code=sm_90a";
  case TargetKind::sm_100a: return "-gencode=arch=compute_100a,code=sm_100a";
  }
  return "";
}

namespace {

std::string wgmmaHelperSuffix(const MmaShape &row);

std::string cType(Dtype d) {
  switch (d) {
  case Dtype::f64: return "double";
  case Dtype::f32: return "float";
  case Dtype::f16: return "__half";
  case Dtype::bf16: return "__nv_bfloat16";
  case Dtype::i8: return "int8_t";
  case Dtype::u8: return "uint8_t";
  case Dtype::f8e4m3: return "uint8_t"; // fp8: bytes (TMA moves them, wgmma reads them)
  case Dtype::f8e5m2: return "uint8_t";
  case Dtype::i16: return "int16_t";
  case Dtype::i32: return "int32_t";
  case Dtype::u32: return "uint32_t";
  case Dtype::i64: return "int64_t";
  case Dtype::pred: return "bool";
  default: return "";
  }
}

std::string tmaType(Dtype d) {
  switch (d) {
  case Dtype::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  case Dtype::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  case Dtype::f32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  case Dtype::u8:
  case Dtype::i8:
  case Dtype::f8e4m3: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
  case Dtype::f8e5m2: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
  default: return "";
  }
}

// A polynomial over opaque atoms (the C++ text of non-affine pieces), used to
// prove that consecutive loop iterations touch consecutive, aligned elements.
using Monomial = std::vector<std::string>;
using Poly = std::map<Monomial, int64_t>;

Poly polyConst(int64_t v) { return v ? Poly{{{}, v}} : Poly{}; }
Poly polyAdd(const Poly &a, const Poly &b, int64_t sign = 1) {
  Poly r = a;
  for (auto &[m, c] : b)
    if ((r[m] += sign * c) == 0)
      r.erase(m);
  return r;
}
Poly polyMul(const Poly &a, const Poly &b) {
  Poly r;
  for (auto &[ma, ca] : a)
    for (auto &[mb, cb] : b) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      if ((r[m] += ca * cb) == 0)
        r.erase(m);
    }
  return r;
}

struct BufferInfo {
  MemScope scope;
  Dtype dtype;
  std::vector<Expr> shape;
  std::vector<int64_t> constShape;
  std::optional<Layout> layout;
  int64_t slots = 0;     // reg: per-thread array length
  int64_t smemOffset = 0; // shared: byte offset in the dynamic allocation
  int64_t bytes = 0;
};

struct TmaMap {
  std::string param;
  Dtype dtype;
  std::vector<int64_t> box; // per dimension of the tensor, outermost first
  int swizzleBytes = 0;
  int index = 0;
};

// sm_100a only: emitted once per module, before the first kernel that uses
// tensor memory (ptxas for sm_90a rejects these instructions).
const char *kTcgen05Helpers = R"(// tcgen05 shared-memory matrix descriptor (sm_100): start address, leading
// byte offset 16 (unused for swizzled K-major), stride byte offset, version 1,
// layout type (2: 128B swizzle, 4: 64B, 6: 32B, 0: none).
__device__ __forceinline__ uint64_t ts_umma_desc(uint32_t addr, int layout, int sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)1 << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)1 << 46;
  d |= (uint64_t)layout << 61;
  return d;
}
__device__ __forceinline__ void ts_umma_f16(uint32_t tmem, uint64_t da, uint64_t db, uint32_t idesc, bool accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"((int)accumulate) : "memory");
}

)";

class KernelEmitter {
public:
  KernelEmitter(const Kernel &k, Diagnostics &diag, LoweredKernel &info, bool &tcgenHelpers)
      : k_(k), diag_(diag), info_(info), target_(targetInfo(k.launch.target)),
        tcgenHelpers_(tcgenHelpers) {}

  bool run(std::string &device, std::string &host);

private:
  // ---- setup
  void collect();
  void error(llvm::SMLoc loc, const std::string &msg) {
    diag_.error(loc, "lower: " + msg);
    failed_ = true;
  }

  // ---- expressions
  std::string ex(const Expr &e);
  std::string index(const Index &x, const Expr &self);
  std::string globalFlat(const std::string &buf, const std::vector<Expr> &idx);
  std::string sharedElement(const BufferInfo &b, const std::string &flat);
  int64_t sharedRunWidth(const BufferInfo &b);
  struct RegionStart {
    std::string buffer;
    std::vector<Expr> begin;     // per dimension of the buffer
    std::vector<bool> kept;      // false where a point subscript dropped it
    std::vector<int64_t> extent; // per dimension (1 where dropped)
    bool constantSize = true;    // false: some extent is not a constant (extent keeps the
                                 // enclosing view's there)
  };
  RegionStart regionStart(const Expr &region);
  std::string regionByteAddress(const Expr &region, std::string *buffer);
  std::optional<int64_t> slotOf(const std::string &buf, const BufferInfo &b,
                                const std::vector<Expr> &idx);
  std::optional<int64_t> eval(const Expr &e, int64_t tid);
  Dtype typeOf(const Expr &e);
  Poly poly(const Expr &e);
  int64_t divisibility(const Monomial &m);
  std::string barrierAddr(const Expr &e);

  // ---- statements
  std::vector<int64_t> regionExtents(const Expr &region);
  Expr kSlice(const Expr &region, size_t dim, int64_t k, int64_t width = 16);
  void block(const Block &b);
  void stmt(const Stmt &s);
  void callStmt(const CallStmt &c);
  bool tryVectorize(const For &f, int64_t begin, int64_t trips);
  void dsmemCopy(const CallStmt &c, bool load);
  void deviceCall(const CallStmt &c); // device.* in a devices(N) kernel
  bool multipleOf(const Expr &e, int64_t m);
  void line(const std::string &s) { out_ << std::string(indent_ * 2, ' ') << s << "\n"; }

  const Kernel &k_;
  Diagnostics &diag_;
  LoweredKernel &info_;
  const TargetInfo &target_;
  bool &tcgenHelpers_;
  bool failed_ = false;
  std::map<std::string, BufferInfo> bufs_;
  std::map<std::string, std::pair<int64_t, bool>> barriers_; // name -> (offset, has count)
  std::vector<std::string> symbols_;                          // shape symbols, in order
  std::map<std::string, int64_t> symbolMultiple_;             // from `where S % c == 0`
  std::map<std::string, int64_t> fixedSymbols_;               // from `where S == c`
  bool deviceSide_ = false;                                   // emitting the kernel body
  std::map<std::string, int64_t> env_;                        // unrolled loop variables
  std::vector<std::pair<std::string, Expr>> lets_;             // visible lets, innermost last
  std::map<std::string, Dtype> letTypes_;
  std::map<std::string, TmaMap> tma_;
  std::set<int> wgmmaShapes_;
  // Other wgmma kinds used (fp8: N and the MMA table's row), one helper each.
  std::set<std::pair<int, const MmaShape *>> wgmmaOtherShapes_;
  std::set<std::string> wgmmaAccs_;        // register tiles some wgmma accumulates into
  // wgmmas with A from registers: (N, A/B dtype, B MN-major), one helper each.
  std::set<std::tuple<int, Dtype, bool>> wgmmaRegA_;
  // Register tiles some wgmma reads as A: declared 16-byte aligned, so that
  // their 16-bit pairs are read as the 32-bit registers they already are.
  std::set<std::string> regAOperands_;
  void wgmmaRegisterA(const CallStmt &c, const std::string &accName, int n);
  std::vector<std::string> regsInScope_;  // register tiles declared, innermost last
  bool usesTcgen05_ = false;
  bool devices_ = false; // a devices(N) kernel (docs/scales.md): on the runtime ts_devices.cuh
  std::map<std::string, int64_t> tmemColumns_;
  std::string tmemAddr(const std::string &buf) {
    return fmt::format("(*reinterpret_cast<volatile uint32_t *>(ts_smem + {}))",
                       bufs_.at(buf).smemOffset);
  }
  int64_t smemBytes_ = 0;
  std::ostringstream out_;
  int indent_ = 1;
  friend std::string helperSource(const std::set<int> &);
};

// ------------------------------------------------------------------ setup

void KernelEmitter::collect() {
  std::set<std::string> seen;
  for (const Param &p : k_.params) {
    if (!p.isTensor)
      continue;
    BufferInfo b{MemScope::Global, p.dtype, p.shape, {}, std::nullopt};
    bufs_[p.name] = b;
    for (const Expr &d : p.shape)
      for (const std::string &n : namesUsed(d))
        if (seen.insert(n).second)
          symbols_.push_back(n);
  }
  for (const Expr &c : k_.constraints) {
    // `S % c == 0`, or `S == c` (a multiple of c itself)
    if (c->kind != ExprKind::Binary || as<Binary>(c).op != BinaryOp::Eq)
      continue;
    const auto &eq = as<Binary>(c);
    if (eq.lhs->kind == ExprKind::Var)
      if (auto v = constantValue(eq.rhs); v && *v > 0) {
        int64_t &known = symbolMultiple_[as<Var>(eq.lhs).name];
        known = std::max(known, *v);
        fixedSymbols_[as<Var>(eq.lhs).name] = *v;
        continue;
      }
    if (constantValue(eq.rhs).value_or(1) != 0 || eq.lhs->kind != ExprKind::Binary)
      continue;
    const auto &m = as<Binary>(eq.lhs);
    if (m.op == BinaryOp::Mod && m.lhs->kind == ExprKind::Var)
      if (auto v = constantValue(m.rhs))
        symbolMultiple_[as<Var>(m.lhs).name] =
            std::max(symbolMultiple_[as<Var>(m.lhs).name], *v);
  }
  struct Walk : IRVisitor {
    KernelEmitter &e;
    explicit Walk(KernelEmitter &em) : e(em) {}
    void visitBufferDecl(const BufferDecl &b) override {
      BufferInfo info{b.scope, b.dtype, b.shape, {}, std::nullopt};
      int64_t count = 1;
      for (const Expr &d : b.shape) {
        info.constShape.push_back(constantValue(d).value_or(1));
        count *= info.constShape.back();
      }
      info.layout = b.layout ? b.layout->layout : Layout::rowMajor(info.constShape);
      if (b.scope == MemScope::Reg) {
        int64_t maxM = 0;
        for (int64_t f = 0; f < count; ++f)
          maxM = std::max(maxM, info.layout->base(f).get(Axis::m));
        info.slots = maxM + 1;
      } else if (b.scope == MemScope::Shared) {
        int64_t maxM = 0;
        for (int64_t f = 0; f < count; f += std::max<int64_t>(1, count / 4096))
          maxM = std::max(maxM, info.layout->base(f).get(Axis::m));
        maxM = std::max(maxM, info.layout->base(count - 1).get(Axis::m));
        int64_t span = std::max(count, maxM + 1);
        info.bytes = span * dtypeBits(b.dtype) / 8;
        e.smemBytes_ = (e.smemBytes_ + 1023) / 1024 * 1024;
        info.smemOffset = e.smemBytes_;
        e.smemBytes_ += info.bytes;
      } else if (b.scope == MemScope::Tmem) {
        // Tensor memory: tcgen05.alloc writes the allocation's address into
        // a shared-memory word that every thread reads after a CTA barrier.
        e.smemBytes_ = (e.smemBytes_ + 15) / 16 * 16;
        info.smemOffset = e.smemBytes_;
        e.smemBytes_ += 16;
        e.usesTcgen05_ = true;
      }
      e.bufs_[b.name] = info;
    }
    void visitCallStmt(const CallStmt &c) override {
      if (idOf(c) == IntrinsicId::WgmmaMmaAsync && c.args.size() > 1) {
        Expr base = c.args[1].value;
        while (base->kind == ExprKind::Index)
          base = as<Index>(base).base;
        if (base->kind == ExprKind::Var)
          e.regAOperands_.insert(as<Var>(base).name);
      }
      IRVisitor::visitCallStmt(c);
    }
    void visitBarrierDecl(const BarrierDecl &b) override {
      int64_t n = b.arraySize ? constantValue(b.arraySize).value_or(1) : 1;
      e.smemBytes_ = (e.smemBytes_ + 7) / 8 * 8;
      e.barriers_[b.name] = {e.smemBytes_, b.count != nullptr};
      e.smemBytes_ += 8 * n;
    }
  } walk(*this);
  walk.visit(k_.body);
}

// ------------------------------------------------------------------ expressions

std::optional<int64_t> KernelEmitter::eval(const Expr &e, int64_t t) {
  switch (e->kind) {
  case ExprKind::IntImm: return as<IntImm>(e).value;
  case ExprKind::Var: {
    auto it = env_.find(as<Var>(e).name);
    if (it != env_.end())
      return it->second;
    // A visible let (innermost first): immutable, so its value stands in.
    for (auto l = lets_.rbegin(); l != lets_.rend(); ++l)
      if (l->first == as<Var>(e).name)
        return eval(l->second, t);
    return std::nullopt;
  }
  case ExprKind::Builtin:
    if (t < 0)
      return std::nullopt; // asked for a value no thread position decides
    if (auto m = threadIndexMap(as<Builtin>(e).which))
      return threadIndexValue(*m, t);
    return std::nullopt;
  case ExprKind::Unary:
    if (as<Unary>(e).op == UnaryOp::Neg)
      if (auto v = eval(as<Unary>(e).operand, t))
        return -*v;
    return std::nullopt;
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    auto l = eval(b.lhs, t), r = eval(b.rhs, t);
    if (!l || !r)
      return std::nullopt;
    if (binaryOpPrecedence(b.op) < 5) // arithmetic only
      return std::nullopt;
    return foldIntBinary(b.op, *l, *r);
  }
  default: return std::nullopt;
  }
}

std::optional<int64_t> KernelEmitter::slotOf(const std::string &, const BufferInfo &b,
                                             const std::vector<Expr> &idx) {
  std::optional<int64_t> slot;
  bool any = false;
  for (int64_t t = 0; t < k_.launch.threads; ++t) {
    int64_t flat = 0;
    bool inRange = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto v = eval(idx[d], t);
      if (!v)
        return std::nullopt;
      if (*v < 0 || *v >= b.constShape[d])
        inRange = false;
      flat = flat * b.constShape[d] + *v;
    }
    if (!inRange)
      continue;
    int64_t m = b.layout->base(flat).get(Axis::m);
    if (any && m != *slot)
      return std::nullopt;
    slot = m;
    any = true;
  }
  return slot;
}

Dtype KernelEmitter::typeOf(const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm: return Dtype::i32;
  case ExprKind::FloatImm: return Dtype::f32;
  case ExprKind::BoolImm: return Dtype::pred;
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = letTypes_.find(n); it != letTypes_.end())
      return it->second;
    for (const Param &p : k_.params)
      if (p.name == n && !p.isTensor)
        return p.dtype;
    return Dtype::i32;
  }
  case ExprKind::Index: {
    Expr base = e;
    while (base->kind == ExprKind::Index)
      base = as<Index>(base).base;
    if (base->kind == ExprKind::Var)
      if (auto it = bufs_.find(as<Var>(base).name); it != bufs_.end())
        return it->second.dtype;
    return Dtype::f32;
  }
  case ExprKind::Call: {
    const auto &c = as<Call>(e);
    if (auto d = dtypeFromName(c.callee))
      return *d;
    if (c.callee == "elect_sync" || c.callee == "vote_any" || c.callee == "vote_all")
      return Dtype::pred;
    if (c.callee == "ballot")
      return Dtype::u32;
    if (!c.args.empty())
      return typeOf(c.args.back());
    return Dtype::f32;
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (b.op >= BinaryOp::Lt)
      return Dtype::pred;
    Dtype l = typeOf(b.lhs), r = typeOf(b.rhs);
    if (isFloat(l) || isFloat(r))
      return Dtype::f32;
    return Dtype::i32;
  }
  case ExprKind::Unary: return typeOf(as<Unary>(e).operand);
  default: return Dtype::i32;
  }
}

std::string KernelEmitter::globalFlat(const std::string &buf, const std::vector<Expr> &idx) {
  const BufferInfo &b = bufs_.at(buf);
  std::string flat;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (d == 0)
      flat = "(int64_t)(" + ex(idx[d]) + ")";
    else
      flat = "(" + flat + ") * (" + ex(b.shape[d]) + ") + (" + ex(idx[d]) + ")";
  }
  return flat;
}

// The widest run (elements, a power of two up to 16 bytes) of logical
// elements, aligned to its width, that a shared buffer's layout keeps
// contiguous and aligned in memory: the innermost iter is on m with stride 1
// and a multiple of the width, every other m stride and offset is one, and
// the swizzle leaves the run's low bits alone.
int64_t KernelEmitter::sharedRunWidth(const BufferInfo &b) {
  const Layout &l = *b.layout;
  const auto &shard = l.shard();
  if (shard.empty() || !l.replica().empty() || shard.back().axis != Axis::m ||
      shard.back().stride != 1)
    return 1;
  int64_t w = 16 / std::max(1, dtypeBits(b.dtype) / 8);
  auto fits = [&](int64_t v) { return v % w == 0; };
  while (w > 1) {
    bool ok = fits(shard.back().extent);
    for (size_t k = 0; k + 1 < shard.size() && ok; ++k)
      if (shard[k].axis == Axis::m && shard[k].extent > 1)
        ok = fits(shard[k].stride);
    for (const AxisOffset &o : l.offset())
      ok = ok && (o.axis != Axis::m || fits(o.value));
    if (const auto &sw = l.swizzle())
      ok = ok && fits(int64_t(1) << sw->bitsKept);
    if (ok)
      return w;
    w /= 2;
  }
  return 1;
}

// The physical element of a shared buffer at a flat logical index: the
// layout's m coordinate, digit by digit, then the swizzle.
std::string KernelEmitter::sharedElement(const BufferInfo &b, const std::string &flat) {
  const Layout &l = *b.layout;
  const auto &shard = l.shard();
  std::vector<int64_t> radix(shard.size(), 1);
  for (size_t k = shard.size(); k-- > 1;)
    radix[k - 1] = radix[k] * shard[k].extent;
  std::string m;
  for (size_t k = 0; k < shard.size(); ++k) {
    if (shard[k].axis != Axis::m || shard[k].stride == 0 || shard[k].extent == 1)
      continue;
    std::string digit = fmt::format("((({}) / {}) % {})", flat, radix[k], shard[k].extent);
    if (k == 0)
      digit = fmt::format("(({}) / {})", flat, radix[k]);
    m += (m.empty() ? "" : " + ") + fmt::format("{} * {}", digit, shard[k].stride);
  }
  for (const AxisOffset &o : l.offset())
    if (o.axis == Axis::m && o.value)
      m += fmt::format(" + {}", o.value);
  if (m.empty())
    m = "0";
  if (const auto &sw = l.swizzle())
    m = fmt::format("ts_swizzle<{}, {}, {}>({})", sw->bitsKept, sw->bitsXored, sw->shift, m);
  return m;
}

std::string KernelEmitter::index(const Index &x, const Expr &self) {
  // Flatten a chain into one point index per dimension.
  std::vector<const Index *> chain;
  Expr base = self;
  while (base->kind == ExprKind::Index) {
    chain.insert(chain.begin(), &as<Index>(base));
    base = as<Index>(base).base;
  }
  (void)x;
  std::string name = as<Var>(base).name;
  if (barriers_.count(name))
    return barrierAddr(self);
  auto it = bufs_.find(name);
  if (it == bufs_.end()) {
    error(self->loc, fmt::format("'{}' is not a buffer", name));
    return "0";
  }
  const BufferInfo &b = it->second;
  std::vector<Expr> idx;
  for (const Index *c : chain)
    for (const Subscript &s : c->subscripts) {
      if (s.kind != Subscript::Point) {
        error(self->loc, "a region is used where an element is expected");
        return "0";
      }
      idx.push_back(s.begin);
    }
  if (idx.size() != b.shape.size()) {
    error(self->loc, "element access with the wrong number of indices");
    return "0";
  }
  switch (b.scope) {
  case MemScope::Global: return fmt::format("{}[{}]", name, globalFlat(name, idx));
  case MemScope::Shared: {
    std::string flat;
    for (size_t d = 0; d < idx.size(); ++d)
      flat = d == 0 ? "(" + ex(idx[d]) + ")"
                    : fmt::format("({}) * {} + ({})", flat, b.constShape[d], ex(idx[d]));
    return fmt::format("{}[{}]", name, sharedElement(b, flat));
  }
  case MemScope::Reg: {
    if (auto slot = slotOf(name, b, idx))
      return fmt::format("{}[{}]", name, *slot);
    // Run-time slot: correct, but the array leaves registers.
    std::string flat;
    for (size_t d = 0; d < idx.size(); ++d)
      flat = d == 0 ? "(" + ex(idx[d]) + ")"
                    : fmt::format("({}) * {} + ({})", flat, b.constShape[d], ex(idx[d]));
    std::string note = fmt::format("register tile '{}' is indexed by a run-time slot at {} "
                                   "(it may live in local memory)",
                                   name, print(self));
    if (std::find(info_.notes.begin(), info_.notes.end(), note) == info_.notes.end())
      info_.notes.push_back(note);
    BufferInfo asMemory = b;
    const auto &shard = b.layout->shard();
    std::string m;
    std::vector<int64_t> radix(shard.size(), 1);
    for (size_t k = shard.size(); k-- > 1;)
      radix[k - 1] = radix[k] * shard[k].extent;
    for (size_t k = 0; k < shard.size(); ++k)
      if (shard[k].axis == Axis::m && shard[k].extent > 1)
        m += (m.empty() ? "" : " + ") + fmt::format("((({}) / {}) % {}) * {}", flat, radix[k],
                                                    shard[k].extent, shard[k].stride);
    return fmt::format("{}[{}]", name, m.empty() ? "0" : m);
  }
  case MemScope::Tmem: error(self->loc, "tensor memory is not lowered yet"); return "0";
  }
  return "0";
}

std::string KernelEmitter::barrierAddr(const Expr &e) {
  std::string name;
  std::string i = "0";
  if (e->kind == ExprKind::Var) {
    name = as<Var>(e).name;
  } else if (e->kind == ExprKind::Index && as<Index>(e).base->kind == ExprKind::Var) {
    name = as<Var>(as<Index>(e).base).name;
    i = ex(as<Index>(e).subscripts.at(0).begin);
  }
  if (!barriers_.count(name)) {
    error(e->loc, "expected an mbarrier");
    return "0";
  }
  return fmt::format("ts_smem_addr(&{}[{}])", name, i);
}

std::string floatLiteral(double v) {
  std::string s = fmt::format("{:.9g}", v);
  if (s.find_first_of(".eE") == std::string::npos && s.find("inf") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string KernelEmitter::ex(const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm: {
    int64_t v = as<IntImm>(e).value;
    if (v > INT32_MAX || v < INT32_MIN)
      return std::to_string(v) + "LL";
    return std::to_string(v);
  }
  case ExprKind::FloatImm: return floatLiteral(as<FloatImm>(e).value);
  case ExprKind::BoolImm: return as<BoolImm>(e).value ? "true" : "false";
  case ExprKind::StringImm: return "\"" + as<StringImm>(e).value + "\"";
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = env_.find(n); it != env_.end())
      return std::to_string(it->second);
    // In device code a size the `where` clause fixes is a constant (a
    // division by it becomes a multiplication, an index product a shift);
    // the host launcher still checks the clause on the value passed.
    if (auto it = fixedSymbols_.find(n); deviceSide_ && it != fixedSymbols_.end())
      return std::to_string(it->second);
    return n;
  }
  case ExprKind::Builtin:
    // Thread indices derive from ts_tid, which outer loops re-read (stmt, For).
    // Plain arithmetic, not a broadcast shuffle: these are read under divergent
    // conditions too (a shuffle there would wait for lanes that never come).
    if (auto m = threadIndexMap(as<Builtin>(e).which))
      return threadIndexCuda(*m, "ts_tid");
    switch (as<Builtin>(e).which) {
    case BuiltinKind::blockIdx_x: return "(int)blockIdx.x";
    case BuiltinKind::blockIdx_y: return "(int)blockIdx.y";
    case BuiltinKind::blockIdx_z: return "(int)blockIdx.z";
    case BuiltinKind::clusterCtaIdx_x: return "ts_cluster_ctaid(0)";
    case BuiltinKind::clusterCtaIdx_y: return "ts_cluster_ctaid(1)";
    case BuiltinKind::clusterCtaIdx_z: return "ts_cluster_ctaid(2)";
    default: return "0";
    }
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    return fmt::format("({}({}))", u.op == UnaryOp::Neg ? "-" : "!", ex(u.operand));
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (auto v = constantValue(e); v && env_.empty())
      return std::to_string(*v);
    if (auto v = eval(e, -1))
      return std::to_string(*v);
    return fmt::format("({} {} {})", ex(b.lhs), binaryOpSpelling(b.op), ex(b.rhs));
  }
  case ExprKind::Call: {
    const auto &c = as<Call>(e);
    std::vector<std::string> a;
    for (const Expr &x : c.args)
      a.push_back(ex(x));
    if (auto d = dtypeFromName(c.callee)) {
      switch (*d) {
      case Dtype::f32: return fmt::format("ts_to_f32({})", a[0]);
      case Dtype::bf16: return fmt::format("__float2bfloat16_rn(ts_to_f32({}))", a[0]);
      case Dtype::f16: return fmt::format("__float2half_rn(ts_to_f32({}))", a[0]);
      default: return fmt::format("(({})({}))", cType(*d), a[0]);
      }
    }
    const std::string &f = c.callee;
    if (f == "elect_sync") return "ts_elect_sync()";
    if (f == "shfl_xor") return fmt::format("__shfl_xor_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "shfl_idx") return fmt::format("__shfl_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "shfl_up") return fmt::format("__shfl_up_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "shfl_down") return fmt::format("__shfl_down_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "vote_any") return fmt::format("__any_sync(0xffffffffu, {})", a[0]);
    if (f == "vote_all") return fmt::format("__all_sync(0xffffffffu, {})", a[0]);
    if (f == "ballot") return fmt::format("__ballot_sync(0xffffffffu, {})", a[0]);
    if (f == "select") return fmt::format("(({}) ? ({}) : ({}))", a[0], a[1], a[2]);
    if (f == "rsqrt") return fmt::format("rsqrtf({})", a[0]);
    if (f == "fma")
      return fmt::format("__fmaf_rn({}, {}, {})", a[0], a[1], a[2]);
    if (f == "sqrt") return fmt::format("sqrtf({})", a[0]);
    if (f == "exp") return fmt::format("__expf({})", a[0]);
    if (f == "exp2") return fmt::format("ts_ex2({})", a[0]);
    if (f == "log") return fmt::format("__logf({})", a[0]);
    if (f == "abs") return fmt::format("fabsf({})", a[0]);
    if (f == "min") return fmt::format("min({}, {})", a[0], a[1]);
    if (f == "max") return fmt::format("max({}, {})", a[0], a[1]);
    error(e->loc, fmt::format("no lowering for function '{}'", f));
    return "0";
  }
  case ExprKind::Index: return index(as<Index>(e), e);
  }
  return "0";
}

Poly KernelEmitter::poly(const Expr &e) {
  if (auto v = eval(e, -1))
    return polyConst(*v);
  switch (e->kind) {
  case ExprKind::IntImm: return polyConst(as<IntImm>(e).value);
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = env_.find(n); it != env_.end())
      return polyConst(it->second);
    for (auto l = lets_.rbegin(); l != lets_.rend(); ++l)
      if (l->first == n)
        return poly(l->second);
    return Poly{{{n}, 1}};
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (b.op == BinaryOp::Add) return polyAdd(poly(b.lhs), poly(b.rhs));
    if (b.op == BinaryOp::Sub) return polyAdd(poly(b.lhs), poly(b.rhs), -1);
    if (b.op == BinaryOp::Mul) return polyMul(poly(b.lhs), poly(b.rhs));
    break;
  }
  default: break;
  }
  return Poly{{{ex(e)}, 1}};
}

int64_t KernelEmitter::divisibility(const Monomial &m) {
  int64_t d = 1;
  for (const std::string &a : m)
    if (auto it = symbolMultiple_.find(a); it != symbolMultiple_.end())
      d *= it->second;
  return d;
}

// Where a region of a buffer starts, per dimension of the buffer, and which
// dimensions it keeps (points drop theirs) with their extents.
KernelEmitter::RegionStart KernelEmitter::regionStart(const Expr &region) {
  std::vector<const Index *> chain;
  Expr base = region;
  while (base->kind == ExprKind::Index) {
    chain.insert(chain.begin(), &as<Index>(base));
    base = as<Index>(base).base;
  }
  RegionStart r;
  r.buffer = as<Var>(base).name;
  const BufferInfo &b = bufs_.at(r.buffer);
  r.begin.assign(b.shape.size(), IntImm::make(0));
  r.kept.assign(b.shape.size(), true);
  // Extents from the declared shape: global tensors have no constShape, and
  // their extents may be sizes (then the region's size is not a constant).
  r.extent.assign(b.shape.size(), 0);
  std::vector<bool> known(b.shape.size());
  for (size_t d = 0; d < b.shape.size(); ++d) {
    std::optional<int64_t> e = constantValue(b.shape[d]);
    known[d] = e.has_value();
    r.extent[d] = e.value_or(0);
  }
  for (const Index *c : chain) {
    size_t i = 0;
    for (size_t d = 0; d < r.kept.size() && i < c->subscripts.size(); ++d) {
      if (!r.kept[d])
        continue;
      const Subscript &s = c->subscripts[i++];
      if (s.kind == Subscript::Full)
        continue;
      r.begin[d] = foldConstants(Binary::make(BinaryOp::Add, r.begin[d], s.begin));
      if (s.kind == Subscript::Point) {
        r.kept[d] = false;
        r.extent[d] = 1;
        known[d] = true;
      } else {
        auto e = s.kind == Subscript::Extent
                     ? constantValue(s.end)
                     : constantValue(foldConstants(Binary::make(BinaryOp::Sub, s.end, s.begin)));
        // A slice of unknown length keeps the enclosing view's extent.
        known[d] = e.has_value();
        r.extent[d] = e.value_or(r.extent[d]);
      }
    }
  }
  r.constantSize = std::all_of(known.begin(), known.end(), [](bool k) { return k; });
  return r;
}

// The byte address (shared state space) of the start of a shared region.
std::string KernelEmitter::regionByteAddress(const Expr &region, std::string *buffer) {
  RegionStart start = regionStart(region);
  *buffer = start.buffer;
  const BufferInfo &b = bufs_.at(start.buffer);
  const std::vector<Expr> &begin = start.begin;
  const std::string &name = start.buffer;
  std::string flat;
  for (size_t d = 0; d < begin.size(); ++d)
    flat = d == 0 ? "(" + ex(begin[d]) + ")"
                  : fmt::format("({}) * {} + ({})", flat, b.constShape[d], ex(begin[d]));
  // The unswizzled element offset: descriptors and TMA apply the swizzle.
  BufferInfo plain = b;
  if (plain.layout && plain.layout->swizzle()) {
    std::string why;
    plain.layout = Layout::make(plain.layout->shard(), plain.layout->replica(),
                                plain.layout->offset(), std::nullopt, &why);
  }
  return fmt::format("(ts_smem_addr({}) + (uint32_t)({}) * {})", name, sharedElement(plain, flat),
                     dtypeBits(b.dtype) / 8);
}

// The extents of a region's dimensions that remain (points drop theirs).
std::vector<int64_t> KernelEmitter::regionExtents(const Expr &region) {
  RegionStart r = regionStart(region);
  std::vector<int64_t> extent;
  for (size_t d = 0; d < r.kept.size(); ++d)
    if (r.kept[d])
      extent.push_back(r.extent[d]);
  return extent;
}

// A 2-D region narrowed to the `width` elements of dimension `dim` from `k`.
Expr KernelEmitter::kSlice(const Expr &region, size_t dim, int64_t k, int64_t width) {
  std::vector<Subscript> subs(2, Subscript{Subscript::Full, nullptr, nullptr});
  subs[dim] = {Subscript::Extent, IntImm::make(k), IntImm::make(width)};
  return Index::make(region, std::move(subs));
}

// ------------------------------------------------------------------ statements

void KernelEmitter::block(const Block &b) {
  size_t lets = lets_.size(), regs = regsInScope_.size();
  for (const Stmt &s : b)
    stmt(s);
  lets_.resize(lets);
  regsInScope_.resize(regs);
}

// Whether a block holds a loop that stays a loop in the CUDA (not unrolled
// by the emitter or by `unroll`).
static bool holdsRuntimeLoop(const Block &b) {
  for (const Stmt &s : b) {
    if (s->kind == StmtKind::For) {
      const auto &f = as<For>(s);
      if (f.unroll != -1 || holdsRuntimeLoop(f.body))
        return true;
    } else if (s->kind == StmtKind::If) {
      const auto &i = as<If>(s);
      if (holdsRuntimeLoop(i.thenBody) || holdsRuntimeLoop(i.elseBody))
        return true;
    }
  }
  return false;
}

// dsmem.load | store (dst, src, cta = r): each thread moves the elements of
// its region between CTA r's shared memory (the same buffer there, which
// `mapa` reaches) and a region of its own CTA's shared memory or of a global
// tensor, in chunks of up to 16 bytes where both layouts keep a run
// contiguous and the runs provably start aligned (one element at a time on
// the global side).
void KernelEmitter::dsmemCopy(const CallStmt &c, bool load) {
  const CallArg *rank = c.keyword("cta");
  RegionStart dst = regionStart(c.args.at(0).value), src = regionStart(c.args.at(1).value);
  const BufferInfo &db = bufs_.at(dst.buffer), &sb = bufs_.at(src.buffer);
  const BufferInfo &remote = load ? sb : db, &local = load ? db : sb;
  if (remote.scope != MemScope::Shared ||
      (local.scope != MemScope::Shared && local.scope != MemScope::Global)) {
    error(c.loc, fmt::format("'{}' is lowered between a peer's shared buffer and a shared buffer "
                             "or global tensor of this CTA only",
                             c.callee));
    return;
  }
  if (db.dtype != sb.dtype) {
    error(c.loc, fmt::format("'{}' is lowered between buffers of one dtype only", c.callee));
    return;
  }
  auto elements = [](const RegionStart &r) {
    int64_t n = 1;
    for (int64_t e : r.extent)
      n *= e;
    return r.constantSize ? n : -1;
  };
  int64_t n = elements(dst);
  if (n < 0 || elements(src) != n || n > 1024) {
    error(c.loc, fmt::format("'{}' is lowered for regions of the same constant size up to 1024 "
                             "elements",
                             c.callee));
    return;
  }
  int bytes = std::max(1, dtypeBits(db.dtype) / 8);
  // The widest chunk: both runs contiguous, the innermost extents multiples
  // of it, and both starts multiples of it for every value of their terms.
  auto startsAligned = [&](const RegionStart &r, int64_t w) {
    if (!r.kept.back())
      return false;
    for (auto &[m, coef] : poly(r.begin.back()))
      if ((coef * divisibility(m)) % w != 0)
        return false;
    return r.extent.back() % w == 0;
  };
  bool global = local.scope == MemScope::Global;
  int64_t width =
      global ? 1 : std::min<int64_t>({16 / bytes, sharedRunWidth(db), sharedRunWidth(sb)});
  while (width > 1 && !(startsAligned(dst, width) && startsAligned(src, width)))
    width /= 2;
  // Element i of a region: its shared address, or for a global tensor the
  // address of the element (a generic pointer).
  auto address = [&](const RegionStart &r, const BufferInfo &b, int64_t i) {
    std::vector<int64_t> offset(r.kept.size(), 0);
    for (size_t d = r.kept.size(); d-- > 0;)
      if (r.kept[d]) {
        offset[d] = i % r.extent[d];
        i /= r.extent[d];
      }
    if (b.scope == MemScope::Global) {
      std::vector<Expr> at;
      for (size_t d = 0; d < r.begin.size(); ++d)
        at.push_back(
            foldConstants(Binary::make(BinaryOp::Add, r.begin[d], IntImm::make(offset[d]))));
      return fmt::format("&{}[{}]", r.buffer, globalFlat(r.buffer, at));
    }
    std::string flat;
    for (size_t d = 0; d < r.begin.size(); ++d) {
      std::string at = fmt::format("({}) + {}", ex(r.begin[d]), offset[d]);
      flat = d == 0 ? "(" + at + ")" : fmt::format("({}) * {} + ({})", flat, b.constShape[d], at);
    }
    return fmt::format("(ts_smem_addr({}) + (uint32_t)({}) * {})", r.buffer, sharedElement(b, flat),
                       bytes);
  };
  line(fmt::format("{{ const int ts_rank = {};", ex(rank->value)));
  int chunk = static_cast<int>(width) * bytes;
  for (int64_t i = 0; i < n; i += width) {
    std::string s = address(src, sb, i);
    std::string value = sb.scope == MemScope::Global
                            ? fmt::format("ts_chunk_ld<{}>({})", chunk, s)
                            : fmt::format("ts_dsmem_ld<{}>({}, {})", chunk,
                                          load ? fmt::format("ts_mapa({}, ts_rank)", s) : s, load);
    line(fmt::format("  const ts_chunk<{}> ts_c{} = {};", chunk, i / width, value));
  }
  for (int64_t i = 0; i < n; i += width) {
    std::string d = address(dst, db, i);
    if (db.scope == MemScope::Global)
      line(fmt::format("  ts_chunk_st<{}>({}, ts_c{});", chunk, d, i / width));
    else
      line(fmt::format("  ts_dsmem_st<{}>({}, {}, ts_c{});", chunk,
                       load ? d : fmt::format("ts_mapa({}, ts_rank)", d), !load, i / width));
  }
  line("}");
}

bool KernelEmitter::tryVectorize(const For &f, int64_t begin, int64_t trips) {
  if (f.body.size() != 1 || f.body[0]->kind != StmtKind::Store || trips < 2)
    return false;
  const auto &st = as<Store>(f.body[0]);
  if (st.target->kind != ExprKind::Index || st.value->kind != ExprKind::Index)
    return false;
  auto bufferOf = [&](const Expr &e) -> std::string {
    Expr b = e;
    while (b->kind == ExprKind::Index)
      b = as<Index>(b).base;
    return b->kind == ExprKind::Var ? as<Var>(b).name : "";
  };
  std::string tn = bufferOf(st.target), vn = bufferOf(st.value);
  if (!bufs_.count(tn) || !bufs_.count(vn))
    return false;
  const BufferInfo &tb = bufs_.at(tn), &vb = bufs_.at(vn);
  auto memory = [](MemScope m) { return m == MemScope::Global || m == MemScope::Shared; };
  bool load = tb.scope == MemScope::Reg && memory(vb.scope);
  bool store = memory(tb.scope) && vb.scope == MemScope::Reg;
  if ((!load && !store) || tb.dtype != vb.dtype)
    return false;
  const Expr &regE = load ? st.target : st.value;
  const Expr &memE = load ? st.value : st.target;
  const BufferInfo &rb = load ? tb : vb;
  std::string memName = load ? vn : tn, regName = load ? tn : vn;
  auto points = [](const Expr &e) {
    std::vector<Expr> idx;
    std::vector<const Index *> chain;
    Expr b = e;
    while (b->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(b));
      b = as<Index>(b).base;
    }
    for (const Index *c : chain)
      for (const Subscript &s : c->subscripts)
        idx.push_back(s.begin);
    return idx;
  };
  std::vector<Expr> regIdx = points(regE), memIdx = points(memE);
  const BufferInfo &mb = bufs_.at(memName);
  if (memIdx.size() != mb.shape.size())
    return false;
  bool shared = mb.scope == MemScope::Shared;
  int64_t maxWidth = shared ? sharedRunWidth(mb) : 16;
  std::vector<int64_t> slots;
  std::vector<Poly> flats;
  for (int64_t i = 0; i < trips; ++i) {
    env_[f.var] = begin + i;
    auto s = slotOf(regName, rb, regIdx);
    if (!s) {
      env_.erase(f.var);
      return false;
    }
    slots.push_back(*s);
    Poly flat;
    for (size_t d = 0; d < memIdx.size(); ++d) {
      Poly extent = shared ? Poly{{{}, mb.constShape[d]}} : poly(mb.shape[d]);
      flat = d == 0 ? poly(memIdx[d]) : polyAdd(polyMul(flat, extent), poly(memIdx[d]));
    }
    flats.push_back(flat);
  }
  int bytes = dtypeBits(tb.dtype) / 8;
  int64_t i = 0;
  bool vectorized = false;
  while (i < trips) {
    int64_t width = 1;
    for (int64_t w = 16 / bytes; w >= 2; w /= 2) {
      if (i + w > trips || w > maxWidth)
        continue;
      bool ok = true;
      for (int64_t u = 1; u < w && ok; ++u) {
        Poly diff = polyAdd(flats[i + u], flats[i], -1);
        ok = slots[i + u] == slots[i] + u && diff.size() == 1 && diff.count({}) && diff[{}] == u;
      }
      for (auto &[m, c] : flats[i])
        if (ok && (c * divisibility(m)) % w != 0)
          ok = false;
      if (ok) {
        width = w;
        break;
      }
    }
    env_[f.var] = begin + i;
    if (width == 1) {
      stmt(f.body[0]);
    } else {
      vectorized = true;
      std::string addr = shared ? "&" + index(as<Index>(memE), memE)
                                : fmt::format("&{}[{}]", memName, globalFlat(memName, memIdx));
      std::string vt = fmt::format("ts_vec<{}, {}>", cType(tb.dtype), width);
      if (load) {
        line(fmt::format("{{ {} v = *reinterpret_cast<const {} *>({});", vt, vt, addr));
        for (int64_t u = 0; u < width; ++u)
          line(fmt::format("  {}[{}] = v.e[{}];", regName, slots[i] + u, u));
        line("}");
      } else {
        std::string vals;
        for (int64_t u = 0; u < width; ++u)
          vals += (u ? ", " : "") + fmt::format("{}[{}]", regName, slots[i] + u);
        line(fmt::format("*reinterpret_cast<{} *>({}) = {}{{{{{}}}}};", vt, addr, vt, vals));
      }
    }
    i += width;
  }
  env_.erase(f.var);
  return vectorized || true;
}

void KernelEmitter::stmt(const Stmt &s) {
  switch (s->kind) {
  case StmtKind::BufferDecl: {
    const auto &b = as<BufferDecl>(s);
    const BufferInfo &info = bufs_.at(b.name);
    if (b.scope == MemScope::Reg) {
      line(fmt::format("{}{} {}[{}];", regAOperands_.count(b.name) ? "alignas(16) " : "",
                       cType(b.dtype), b.name, info.slots));
      regsInScope_.push_back(b.name);
    }
    return; // shared buffers are bound at kernel entry
  }
  case StmtKind::BarrierDecl: return;
  case StmtKind::Let: {
    const auto &l = as<Let>(s);
    Dtype t = typeOf(l.value);
    letTypes_[l.name] = t;
    line(fmt::format("const {} {} = {};", isFloat(t) ? "float" : (t == Dtype::pred ? "bool" : "int"),
                     l.name, ex(l.value)));
    lets_.push_back({l.name, l.value});
    return;
  }
  case StmtKind::For: {
    const auto &f = as<For>(s);
    auto b = constantValue(f.begin), e = constantValue(f.end), st = constantValue(f.step);
    if (f.unroll == -1 && b && e && st && *st == 1 && *e - *b <= 256) {
      if (tryVectorize(f, *b, *e - *b))
        return;
      bool scoped = false;
      for (const Stmt &x : f.body)
        scoped |= x->kind == StmtKind::Let || x->kind == StmtKind::BufferDecl;
      for (int64_t i = *b; i < *e; ++i) {
        env_[f.var] = i;
        if (scoped)
          line("{");
        indent_ += scoped;
        block(f.body);
        indent_ -= scoped;
        if (scoped)
          line("}");
      }
      env_.erase(f.var);
      return;
    }
    if (f.unroll > 0)
      line(fmt::format("#pragma unroll {}", f.unroll));
    else if (f.unroll == -1)
      line("#pragma unroll");
    line(fmt::format("for (int {} = {}; {} < {}; {} += {}) {{", f.var, ex(f.begin), f.var,
                     ex(f.end), f.var, ex(f.step)));
    ++indent_;
    // An outer loop (a persistent kernel's tile loop) re-reads the thread
    // index each iteration: otherwise ptxas hoists per-thread address
    // arithmetic that does not depend on the loop (the epilogue's 64 swizzled
    // shared-memory addresses) out of it and keeps it live across the inner
    // loop beside 128 accumulators, which spills.
    if (holdsRuntimeLoop(f.body))
      line("const int ts_tid = ts_read_tid();");
    block(f.body);
    --indent_;
    line("}");
    return;
  }
  case StmtKind::If: {
    const auto &i = as<If>(s);
    if (i.cond->kind == ExprKind::BoolImm && as<BoolImm>(i.cond).value) {
      line("{");
      ++indent_;
      block(i.thenBody);
      --indent_;
      line("}");
      return;
    }
    line(fmt::format("if ({}) {{", ex(i.cond)));
    ++indent_;
    block(i.thenBody);
    --indent_;
    if (!i.elseBody.empty()) {
      line("} else {");
      ++indent_;
      block(i.elseBody);
      --indent_;
    }
    line("}");
    return;
  }
  case StmtKind::Store: {
    const auto &st = as<Store>(s);
    Dtype t = typeOf(st.target), v = typeOf(st.value);
    std::string value = ex(st.value);
    if (t != v) {
      if (t == Dtype::bf16)
        value = fmt::format("__float2bfloat16_rn(ts_to_f32({}))", value);
      else if (t == Dtype::f16)
        value = fmt::format("__float2half_rn(ts_to_f32({}))", value);
      else if (t == Dtype::f32)
        value = fmt::format("ts_to_f32({})", value);
    }
    line(fmt::format("{} = {};", ex(st.target), value));
    return;
  }
  case StmtKind::CallStmt: callStmt(as<CallStmt>(s)); return;
  }
}

// Whether an integer expression is a multiple of m for every value the
// `where` clause admits (its polynomial's terms are).
bool KernelEmitter::multipleOf(const Expr &e, int64_t m) {
  for (auto &[mono, coef] : poly(e))
    if ((coef * divisibility(mono)) % m != 0)
      return false;
  return true;
}

// device.warp_allreduce(dst, src, impl =) of one warp: the runtime's
// warpAllreduceTile on the tiles' first elements in this rank's region
// (the same offsets reach every peer's), paired through the warp's flags.
void KernelEmitter::deviceCall(const CallStmt &c) {
  if (idOf(c) != IntrinsicId::DeviceWarpAllreduce) {
    error(c.loc, fmt::format("'{}' in a kernel with other statements is not lowered: such "
                             "kernels lower device.warp_allreduce (kernels of lets and "
                             "device collectives lower on the collectives' path)",
                             c.callee));
    return;
  }
  struct Side {
    std::string ptr, ld;
    int64_t rows = 1, cols = 1;
  };
  // A tile `T[b0 : +r, b1 : +c]` (or `T[b0 : +c]`) of a bf16 global tensor,
  // its extents constants.
  auto side = [&](const Expr &region) -> std::optional<Side> {
    const Index *x = region->kind == ExprKind::Index ? &as<Index>(region) : nullptr;
    const BufferInfo *b = nullptr;
    std::string name;
    if (x && x->base->kind == ExprKind::Var && bufs_.count(as<Var>(x->base).name)) {
      name = as<Var>(x->base).name;
      b = &bufs_.at(name);
    }
    std::vector<Expr> begin;
    std::vector<int64_t> extent;
    bool ok = b && b->scope == MemScope::Global && b->dtype == Dtype::bf16 &&
              (b->shape.size() == 1 || b->shape.size() == 2) &&
              x->subscripts.size() == b->shape.size();
    for (size_t d = 0; ok && d < x->subscripts.size(); ++d) {
      const Subscript &sub = x->subscripts[d];
      std::optional<int64_t> n;
      if (sub.kind == Subscript::Extent)
        n = constantValue(sub.end);
      else if (sub.kind == Subscript::Range)
        n = constantValue(foldConstants(Binary::make(BinaryOp::Sub, sub.end, sub.begin)));
      ok = n && *n > 0;
      if (ok) {
        begin.push_back(sub.begin);
        extent.push_back(*n);
      }
    }
    if (!ok) {
      error(c.loc, fmt::format("device.warp_allreduce moves tiles T[b : +n, ...] of constant "
                               "extents of 1-D or 2-D bf16 global tensors ('{}' is not one)",
                               print(region)));
      return std::nullopt;
    }
    Side out;
    out.cols = extent.back();
    out.rows = extent.size() == 2 ? extent[0] : 1;
    out.ld = extent.size() == 2 ? ex(b->shape[1]) : std::to_string(out.cols);
    // 16-byte vectors: every row of the tile starts 16-byte aligned.
    bool aligned = out.cols % 8 == 0 && multipleOf(begin.back(), 8) &&
                   (extent.size() == 1 || multipleOf(b->shape[1], 8));
    if (!aligned) {
      error(c.loc, fmt::format("device.warp_allreduce moves 16-byte vectors: the rows of the "
                               "tile of '{}' are not 16-byte aligned for every size the `where` "
                               "clause admits",
                               name));
      return std::nullopt;
    }
    out.ptr = fmt::format("({} + (size_t)({}))", name, globalFlat(name, begin));
    return out;
  };
  auto dst = side(c.args.at(0).value);
  auto src = dst ? side(c.args.at(1).value) : std::nullopt;
  if (!dst || !src)
    return;
  if (dst->rows != src->rows || dst->cols != src->cols) {
    error(c.loc, "device.warp_allreduce: dst and src tiles differ in shape");
    return;
  }
  std::string impl;
  if (const CallArg *a = c.keyword("impl"); a && a->value->kind == ExprKind::StringImm)
    impl = as<StringImm>(a->value).value;
  std::string why;
  for (const CollectiveImpl &ci : collectiveImpls())
    if (ci.collective == "warp_allreduce" && (impl.empty() || impl == ci.name)) {
      why = collectiveRefusal("warp_allreduce", ci.name, dst->rows * dst->cols, 2, 0);
      if (why.empty()) {
        impl = ci.name;
        break;
      }
    }
  if (!why.empty() || impl.empty()) {
    error(c.loc, fmt::format("no implementation of device.warp_allreduce accepts this call{}",
                             why.empty() ? "" : ": " + why));
    return;
  }
  info_.dispatchChoices.push_back("device.warp_allreduce -> " + impl);
  line(fmt::format("ts_dev::warpAllreduceTile<{}, {}, {}>(ts_args, ts_dseq, {}, {}, {}, {});",
                   impl == "two_shot" ? "true" : "false", dst->rows, dst->cols, dst->ptr, src->ptr,
                   dst->ld, src->ld));
}

void KernelEmitter::callStmt(const CallStmt &c) {
  const std::string &f = c.callee;
  auto arg = [&](size_t i) -> const Expr & { return c.args.at(i).value; };
  auto kwv = [&](std::string_view n) -> Expr {
    const CallArg *a = c.keyword(n);
    return a ? a->value : nullptr;
  };
  const IntrinsicId id = idOf(c);
  const IntrinsicInfo *info = findIntrinsic(f);
  // A native whose PTX is its table spelling alone, with no operands.
  auto plainPtx = [&] { line(fmt::format("asm volatile(\"{};\" ::: \"memory\");", info->ptx)); };
  if (std::find(info_.natives.begin(), info_.natives.end(), f) == info_.natives.end())
    info_.natives.push_back(f);
  if (isDeviceCall(id)) {
    deviceCall(c);
    return;
  }
  if (info && info->cls == CallClass::TilePrimitive) {
    if (id == IntrinsicId::Sync && c.scope == ExecScope::Cluster) {
      line("asm volatile(\"barrier.cluster.arrive.release.aligned;\" ::: \"memory\");");
      line("asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");");
      return;
    }
    if (id == IntrinsicId::Sync) {
      line("__syncthreads();");
      return;
    }
    error(c.loc, fmt::format("tile primitive '{}' reached lowering undispatched", f));
    return;
  }
  if (id == IntrinsicId::MbarrierInit) {
    line(fmt::format("ts_mbar_init({}, {});", barrierAddr(arg(0)), ex(kwv("count"))));
  } else if (id == IntrinsicId::MbarrierArrive) {
    if (Expr cta = kwv("cta"))
      line(fmt::format("ts_mbar_arrive_remote({}, {});", barrierAddr(arg(0)), ex(cta)));
    else
      line(fmt::format("ts_mbar_arrive({});", barrierAddr(arg(0))));
  } else if (id == IntrinsicId::DsmemLoad || id == IntrinsicId::DsmemStore) {
    dsmemCopy(c, id == IntrinsicId::DsmemLoad);
  } else if (id == IntrinsicId::BarrierClusterArrive) {
    line("asm volatile(\"barrier.cluster.arrive.release.aligned;\" ::: \"memory\");");
  } else if (id == IntrinsicId::BarrierClusterWait) {
    line("asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");");
  } else if (id == IntrinsicId::MbarrierArriveExpectTx) {
    line(fmt::format("ts_mbar_arrive_expect_tx({}, {});", barrierAddr(arg(0)), ex(kwv("bytes"))));
  } else if (id == IntrinsicId::MbarrierExpectTx) {
    line(fmt::format("ts_mbar_expect_tx({}, {});", barrierAddr(arg(0)), ex(kwv("bytes"))));
  } else if (id == IntrinsicId::MbarrierWait) {
    line(fmt::format("ts_mbar_wait({}, {});", barrierAddr(arg(0)), ex(kwv("parity"))));
  } else if (id == IntrinsicId::MbarrierInval) {
    line(fmt::format("ts_mbar_inval({});", barrierAddr(arg(0))));
  } else if (id == IntrinsicId::TmaLoad || id == IntrinsicId::TmaStore) {
    bool load = id == IntrinsicId::TmaLoad;
    const Expr &sh = arg(load ? 0 : 1), &gl = arg(load ? 1 : 0);
    std::string sbuf;
    std::string saddr = regionByteAddress(sh, &sbuf);
    // The global region: its begin per dimension and its box.
    std::vector<const Index *> chain;
    Expr base = gl;
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    std::string param = as<Var>(base).name;
    const BufferInfo &gb = bufs_.at(param);
    std::vector<Expr> begin(gb.shape.size(), IntImm::make(0));
    std::vector<int64_t> box(gb.shape.size(), 1);
    for (const Index *x : chain)
      for (size_t d = 0; d < x->subscripts.size() && d < box.size(); ++d) {
        const Subscript &s = x->subscripts[d];
        begin[d] = s.begin ? s.begin : IntImm::make(0);
        if (s.kind == Subscript::Extent)
          box[d] = constantValue(s.end).value_or(1);
        else if (s.kind == Subscript::Range)
          box[d] = constantValue(foldConstants(Binary::make(BinaryOp::Sub, s.end, s.begin)))
                       .value_or(1);
        else if (s.kind == Subscript::Full)
          box[d] = constantValue(gb.shape[d]).value_or(1);
      }
    const BufferInfo &sb = bufs_.at(sbuf);
    int swz = 0;
    if (const auto &sw = sb.layout->swizzle())
      swz = 16 << sw->bitsXored;
    auto it = tma_.find(param);
    if (it == tma_.end()) {
      TmaMap m{param, gb.dtype, box, swz, static_cast<int>(tma_.size())};
      it = tma_.emplace(param, m).first;
    } else if (it->second.box != box || it->second.swizzleBytes != swz) {
      error(c.loc, fmt::format("TMA copies of '{}' use two different boxes or swizzles; one tensor "
                               "map per tensor is supported",
                               param));
    }
    std::string coords;
    for (size_t d = gb.shape.size(); d-- > 0;)
      coords += fmt::format("{}(int)({})", coords.empty() ? "" : ", ", ex(begin[d]));
    Expr mask = load ? kwv("multicast") : nullptr;
    if (mask && gb.shape.size() != 2)
      error(c.loc, "multicast TMA loads are lowered for 2-D tensors only");
    if (mask)
      line(fmt::format("ts_tma_load_2d_mc({}, &tmap_{}, {}, (uint16_t)({}), {});", saddr, param,
                       barrierAddr(kwv("mbar")), ex(mask), coords));
    else if (load)
      line(fmt::format("ts_tma_load_{}d({}, &tmap_{}, {}, {});", gb.shape.size(), saddr, param,
                       barrierAddr(kwv("mbar")), coords));
    else
      line(fmt::format("ts_tma_store_{}d(&tmap_{}, {}, {});", gb.shape.size(), param, saddr,
                       coords));
  } else if (id == IntrinsicId::TmaStoreCommit) {
    plainPtx();
  } else if (id == IntrinsicId::TmaStoreWait) {
    const CallArg *read = c.keyword("read");
    bool onlyRead =
        read && read->value->kind == ExprKind::BoolImm && as<BoolImm>(read->value).value;
    line(fmt::format("asm volatile(\"cp.async.bulk.wait_group{} {};\" ::: \"memory\");",
                     onlyRead ? ".read" : "", ex(arg(0))));
  } else if (id == IntrinsicId::CpAsync) {
    std::string sbuf;
    std::string saddr = regionByteAddress(arg(0), &sbuf);
    // The source: the address of its first element.
    std::vector<const Index *> chain;
    Expr base = arg(1);
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    std::string param = as<Var>(base).name;
    std::vector<Expr> begin;
    for (const Index *x : chain)
      for (const Subscript &s : x->subscripts)
        begin.push_back(s.begin ? s.begin : IntImm::make(0));
    line(fmt::format("ts_cp_async16({}, &{}[{}]);", saddr, param, globalFlat(param, begin)));
  } else if (id == IntrinsicId::CpAsyncCommit) {
    plainPtx();
  } else if (id == IntrinsicId::CpAsyncWaitAll) {
    plainPtx();
  } else if (id == IntrinsicId::CpAsyncWait) {
    line(fmt::format("asm volatile(\"{} {};\" ::: \"memory\");", info->ptx, ex(arg(0))));
  } else if (id == IntrinsicId::WgmmaFence) {
    plainPtx();
  } else if (id == IntrinsicId::WgmmaCommitGroup) {
    plainPtx();
  } else if (id == IntrinsicId::WgmmaWaitGroup) {
    line(fmt::format("asm volatile(\"{} {};\" ::: \"memory\");", info->ptx, ex(arg(0))));
    // Pin the accumulators after the wait (CUTLASS's warpgroup_fence_operand)
    // so the compiler reads them only once the wgmmas that write them retired.
    for (const std::string &r : regsInScope_)
      if (wgmmaAccs_.count(r))
        line(fmt::format("ts_fence_operands({});", r));
  } else if (id == IntrinsicId::WgmmaMmaAsync) {
    std::string accName = as<Var>(arg(0)).name;
    const BufferInfo &acc = bufs_.at(accName);
    int n = static_cast<int>(acc.constShape.at(1));
    if (bufs_.at(regionStart(arg(1)).buffer).scope == MemScope::Reg) {
      wgmmaRegisterA(c, accName, n);
      return;
    }
    std::string abuf, bbuf;
    regionByteAddress(arg(1), &abuf);
    regionByteAddress(arg(2), &bbuf);
    auto desc = [&](const std::string &addr, const BufferInfo &b) {
      int span = 16, mode = 0;
      if (const auto &sw = b.layout->swizzle()) {
        span = 16 << sw->bitsXored;
        mode = sw->bitsXored == 3 ? 1 : sw->bitsXored == 2 ? 2 : 3;
      }
      return fmt::format("ts_wgmma_desc({}, {}, {})", addr, mode, 8 * span);
    };
    wgmmaAccs_.insert(accName);
    Dtype operandType = bufs_.at(abuf).dtype;
    // The instruction: the MMA table's row for these dtypes (ir/MmaShapes.h).
    const MmaShape *row =
        findMmaShape(k_.launch.target, *info->mma, acc.dtype, operandType, bufs_.at(bbuf).dtype);
    if (!row || row->d != Dtype::f32) {
      error(c.loc, fmt::format("no lowering for wgmma.mma_async on {} operands yet",
                               dtypeName(operandType)));
      return;
    }
    bool half = row->k == 16; // f16 / bf16: the helpers of every 16-bit kind
    if (half)
      wgmmaShapes_.insert(n);
    else
      wgmmaOtherShapes_.insert({n, row});
    std::string ab = half ? std::string(ptxTypeName(row->a)) : wgmmaHelperSuffix(*row);
    // `accumulate` may be a run-time predicate (`accumulate = k > 0`: the
    // first k-step overwrites, so no fill defines the accumulators while
    // wgmmas are in flight, which would make ptxas serialize them).
    Expr accum = kwv("accumulate");
    std::string scaleD = !accum ? "1"
                         : accum->kind == ExprKind::BoolImm
                             ? (as<BoolImm>(accum).value ? "1" : "0")
                             : fmt::format("({}) ? 1 : 0", ex(accum));
    // One instruction per 16 of K (the checker admits K a multiple of 16);
    // the first takes `accumulate`, the rest add to what it wrote.
    auto isSet = [&](const char *kw) {
      Expr e = kwv(kw);
      return e && e->kind == ExprKind::BoolImm && as<BoolImm>(e).value;
    };
    bool ta = isSet("transpose_a"), tb = isSet("transpose_b");
    int64_t kExtent = regionExtents(arg(1)).at(ta ? 0 : 1);
    for (int64_t k = 0; k < kExtent; k += row->k) {
      Expr a = kSlice(arg(1), ta ? 0 : 1, k, row->k), b = kSlice(arg(2), tb ? 1 : 0, k, row->k);
      std::string aaddr = regionByteAddress(a, &abuf), baddr = regionByteAddress(b, &bbuf);
      line(fmt::format("ts_wgmma_m64n{}k{}_{}({}, {}, {}, {});", n, row->k, ab, accName,
                       desc(aaddr, bufs_.at(abuf)), desc(baddr, bufs_.at(bbuf)),
                       k == 0 ? scaleD : "1"));
    }
  } else if (id == IntrinsicId::SetmaxnregInc || id == IntrinsicId::SetmaxnregDec) {
    line(fmt::format("asm volatile(\"{} {};\");", info->ptx, ex(arg(0))));
  } else if (id == IntrinsicId::FenceProxyAsync) {
    // space = "shared" (the default) or "global": the table's spelling
    // orders shared memory; the global form orders the async proxy's global
    // writes (a completed TMA store) before generic reads.
    std::string space = "shared";
    if (Expr sp = kwv("space"); sp && sp->kind == ExprKind::StringImm)
      space = as<StringImm>(sp).value;
    if (space == "global")
      line("asm volatile(\"fence.proxy.async.global;\" ::: \"memory\");");
    else if (space == "shared")
      plainPtx();
    else
      error(c.loc, fmt::format("fence.proxy.async space is 'shared' or 'global', not '{}'", space));
  } else if (id == IntrinsicId::FenceMbarrierInit) {
    plainPtx();
  } else if (id == IntrinsicId::BarrierSync || id == IntrinsicId::BarrierArrive) {
    line(fmt::format("asm volatile(\"{} %0, %1;\" :: \"r\"((int)({})), \"r\"((int)({})) : "
                     "\"memory\");",
                     info->ptx, ex(arg(0)), ex(kwv("threads"))));
  } else if (id == IntrinsicId::Tcgen05Alloc || id == IntrinsicId::Tcgen05Dealloc) {
    std::string buf = as<Var>(arg(0)).name;
    const BufferInfo &b = bufs_.at(buf);
    int64_t cols = b.constShape.size() > 1 ? b.constShape[1] : 32;
    if (Expr c = kwv("cols"))
      cols = constantValue(c).value_or(cols);
    if (id == IntrinsicId::Tcgen05Alloc) {
      tmemColumns_[buf] = cols;
      line(fmt::format("asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 "
                       "[%0], {};\" :: \"r\"(ts_smem_addr(ts_smem + {})) : \"memory\");",
                       cols, b.smemOffset));
    } else {
      if (tmemColumns_.count(buf))
        cols = tmemColumns_[buf];
      line(fmt::format("asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, {};\" "
                       ":: \"r\"({}) : \"memory\");",
                       cols, tmemAddr(buf)));
    }
  } else if (id == IntrinsicId::Tcgen05RelinquishAllocPermit) {
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05Mma) {
    std::string d = as<Var>(arg(0)).name;
    std::string abuf, bbuf;
    std::string aaddr = regionByteAddress(arg(1), &abuf), baddr = regionByteAddress(arg(2), &bbuf);
    auto extents = [&](const Expr &region) {
      // Kept extents of a region of a shared buffer: [rows, K].
      std::vector<const Index *> chain;
      Expr base = region;
      while (base->kind == ExprKind::Index) {
        chain.insert(chain.begin(), &as<Index>(base));
        base = as<Index>(base).base;
      }
      const BufferInfo &b = bufs_.at(as<Var>(base).name);
      std::vector<int64_t> ext = b.constShape;
      std::vector<bool> kept(ext.size(), true);
      for (const Index *x : chain) {
        size_t i = 0;
        for (size_t dd = 0; dd < kept.size() && i < x->subscripts.size(); ++dd) {
          if (!kept[dd])
            continue;
          const Subscript &sub = x->subscripts[i++];
          if (sub.kind == Subscript::Point)
            kept[dd] = false;
          else if (sub.kind == Subscript::Extent)
            ext[dd] = constantValue(sub.end).value_or(ext[dd]);
        }
      }
      std::vector<int64_t> out;
      for (size_t dd = 0; dd < ext.size(); ++dd)
        if (kept[dd])
          out.push_back(ext[dd]);
      return out;
    };
    auto ae = extents(arg(1)), be = extents(arg(2));
    if (ae.size() != 2 || be.size() != 2 || ae[1] % 16 != 0) {
      error(c.loc, "tcgen05.mma operands must be [M, K] and [N, K] tiles with K a multiple of 16");
      return;
    }
    int64_t m = ae[0], n = be[0], k = ae[1];
    Dtype ab = bufs_.at(abuf).dtype;
    uint32_t idesc = (1u << 4) | ((ab == Dtype::bf16 ? 1u : 0u) << 7) |
                     ((ab == Dtype::bf16 ? 1u : 0u) << 10) | (static_cast<uint32_t>(n >> 3) << 17) |
                     (static_cast<uint32_t>(m >> 4) << 24);
    auto swizzleOf = [&](const BufferInfo &b) {
      int mode = 0, span = 16;
      if (const auto &sw = b.layout->swizzle()) {
        span = 16 << sw->bitsXored;
        mode = sw->bitsXored == 3 ? 2 : sw->bitsXored == 2 ? 4 : 6;
      }
      return std::pair<int, int>{mode, 8 * span};
    };
    auto [amode, asbo] = swizzleOf(bufs_.at(abuf));
    auto [bmode, bsbo] = swizzleOf(bufs_.at(bbuf));
    Expr accum = kwv("accumulate");
    std::string acc = accum ? ex(accum) : "true";
    line("{");
    line(fmt::format("  const uint32_t a0 = {}, b0 = {};", aaddr, baddr));
    line(fmt::format("  const bool acc0 = {};", acc));
    line("#pragma unroll");
    line(fmt::format("  for (int kk = 0; kk < {}; ++kk)", k / 16));
    line(fmt::format("    ts_umma_f16({}, ts_umma_desc(a0 + kk * 32, {}, {}), "
                     "ts_umma_desc(b0 + kk * 32, {}, {}), {}u, acc0 || kk > 0);",
                     tmemAddr(d), amode, asbo, bmode, bsbo, idesc));
    line("}");
  } else if (id == IntrinsicId::Tcgen05Commit) {
    line(fmt::format("asm volatile(\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::"
                     "cluster.b64 [%0];\" :: \"r\"({}) : \"memory\");",
                     barrierAddr(arg(0))));
  } else if (id == IntrinsicId::Tcgen05Ld) {
    // dst: a region of a tcgen05_32x32b register tile (one row per thread);
    // src: a region of tensor memory, rows = lanes, columns.
    std::vector<const Index *> chain;
    Expr base = arg(1);
    while (base->kind == ExprKind::Index) {
      chain.insert(chain.begin(), &as<Index>(base));
      base = as<Index>(base).base;
    }
    std::string tm = as<Var>(base).name;
    Expr row = IntImm::make(0), col = IntImm::make(0);
    int64_t cols = bufs_.at(tm).constShape.at(1);
    if (!chain.empty() && chain[0]->subscripts.size() == 2) {
      const auto &sr = chain[0]->subscripts[0], &sc = chain[0]->subscripts[1];
      if (sr.begin)
        row = sr.begin;
      if (sc.begin)
        col = sc.begin;
      if (sc.kind == Subscript::Extent)
        cols = constantValue(sc.end).value_or(cols);
    }
    Expr shape = kwv("shape");
    if (!shape || shape->kind != ExprKind::StringImm || as<StringImm>(shape).value != "32x32b") {
      error(c.loc, "only tcgen05.ld shape \"32x32b\" is lowered");
      return;
    }
    Expr dbase = arg(0);
    while (dbase->kind == ExprKind::Index)
      dbase = as<Index>(dbase).base;
    std::string dst = as<Var>(dbase).name;
    std::string ops, cons;
    for (int64_t j = 0; j < cols; ++j) {
      ops += fmt::format("{}%{}", j ? ", " : "", j);
      cons += fmt::format("{}\"=f\"({}[{}])", j ? ", " : "", dst, j);
    }
    line(fmt::format("asm volatile(\"tcgen05.ld.sync.aligned.32x32b.x{}.b32 {{{}}}, [%{}];\" : {} "
                     ": \"r\"({} + ((uint32_t)({}) << 16) + (uint32_t)({})) : \"memory\");",
                     cols, ops, cols, cons, tmemAddr(tm), ex(row), ex(col)));
  } else if (id == IntrinsicId::Tcgen05WaitLd) {
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05WaitSt) {
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05FenceBeforeThreadSync) {
    plainPtx();
  } else if (id == IntrinsicId::Tcgen05FenceAfterThreadSync) {
    plainPtx();
  } else {
    error(c.loc, fmt::format("no lowering for '{}' yet", f));
  }
}

// A wgmma with A from registers (a 16-bit tile in the wgmma_acc layout, one
// m64n16 slice per instruction) and B from shared memory, K-major
// (transpose_b) or MN-major. The A fragment's four 32-bit registers hold, per
// thread, rows r and r + 8 (r = 16 * warp + lane / 4) at columns 2 (lane % 4)
// + {0, 1} and 8 more: the accumulator fragment's slots of those elements,
// packed in pairs. The MN-major descriptor's leading byte offset is the
// distance between 64-element column blocks of B, its stride byte offset
// the distance between 8-row groups (as the wgmma.smem rule checked them).
void KernelEmitter::wgmmaRegisterA(const CallStmt &c, const std::string &accName, int n) {
  auto arg = [&](size_t i) -> const Expr & { return c.args.at(i).value; };
  RegionStart a = regionStart(arg(1));
  const BufferInfo &ab = bufs_.at(a.buffer);
  std::string bbuf;
  regionByteAddress(arg(2), &bbuf);
  const BufferInfo &bb = bufs_.at(bbuf);
  const MmaShape *row =
      findMmaShape(k_.launch.target, MmaFamily::Wgmma, bufs_.at(accName).dtype, ab.dtype, bb.dtype);
  std::vector<int64_t> aExt = regionExtents(arg(1));
  if (!row || row->k != 16 || aExt.size() != 2 || aExt[0] != 64 || aExt[1] % 16 != 0 ||
      ab.constShape.size() != 2) {
    error(c.loc, "no lowering for this wgmma with A from registers (a 16-bit [64, K] register "
                 "tile, K a multiple of 16, is lowered)");
    return;
  }
  const CallArg *tbArg = c.keyword("transpose_b");
  bool mnMajor =
      !(tbArg && tbArg->value->kind == ExprKind::BoolImm && as<BoolImm>(tbArg->value).value);
  // The A fragment: slots of (row, column) for the calling thread, constant
  // over the threads (slotOf proves it).
  Expr lane = Builtin::make(BuiltinKind::laneid), warp = Builtin::make(BuiltinKind::wid_in_wg);
  auto fragment = [&](int64_t k) -> std::optional<std::vector<std::string>> {
    std::vector<std::string> regs;
    for (int i = 0; i < 4; ++i) {
      std::string half[2];
      int64_t slots[2] = {0, 0};
      for (int h = 0; h < 2; ++h) {
        Expr r = foldConstants(Binary::make(
            BinaryOp::Add, a.begin[0],
            Binary::make(BinaryOp::Add,
                         Binary::make(BinaryOp::Add,
                                      Binary::make(BinaryOp::Mul, warp, IntImm::make(16)),
                                      Binary::make(BinaryOp::Div, lane, IntImm::make(4))),
                         IntImm::make(8 * (i % 2)))));
        Expr col = foldConstants(Binary::make(
            BinaryOp::Add, a.begin[1],
            Binary::make(BinaryOp::Add,
                         Binary::make(BinaryOp::Mul,
                                      Binary::make(BinaryOp::Mod, lane, IntImm::make(4)),
                                      IntImm::make(2)),
                         IntImm::make(k + 8 * (i / 2) + h))));
        auto slot = slotOf(a.buffer, ab, {r, col});
        if (!slot) {
          error(c.loc, fmt::format("register tile '{}' is not in the wgmma A fragment layout "
                                   "(wgmma_acc): its slots differ between threads",
                                   a.buffer));
          return std::nullopt;
        }
        half[h] = fmt::format("{}[{}]", a.buffer, *slot);
        slots[h] = *slot;
      }
      // A pair in consecutive slots, the first even, is one 32-bit register of
      // the (aligned) tile: read it as such, so no packing instruction sits
      // between the wgmmas (ptxas would fence each one after it).
      if (slots[0] % 2 == 0 && slots[1] == slots[0] + 1)
        regs.push_back(
            fmt::format("reinterpret_cast<const uint32_t *>({})[{}]", a.buffer, slots[0] / 2));
      else
        regs.push_back(fmt::format("ts_pack2({}, {})", half[0], half[1]));
    }
    return regs;
  };
  std::string span = "16", mode = "0";
  int spanBytes = 16;
  if (const auto &sw = bb.layout->swizzle()) {
    spanBytes = 16 << sw->bitsXored;
    mode = sw->bitsXored == 3 ? "1" : sw->bitsXored == 2 ? "2" : "3";
  }
  // Byte distances in B's unswizzled layout: 8 rows down, one atom across.
  Layout plain = *bb.layout;
  if (plain.swizzle()) {
    std::string why;
    plain = *Layout::make(plain.shard(), plain.replica(), plain.offset(), std::nullopt, &why);
  }
  int64_t inner = bb.constShape.back(), bytes = dtypeBits(bb.dtype) / 8;
  auto at = [&](int64_t flat) { return plain.base(flat).get(Axis::m) * bytes; };
  int64_t sbo = at(8 * inner) - at(0);
  int64_t perAtom = spanBytes / bytes;
  int64_t lbo = mnMajor && inner > perAtom ? at(perAtom) - at(0) : 16;
  if (!mnMajor)
    sbo = 8 * spanBytes;
  wgmmaRegA_.insert({n, ab.dtype, mnMajor});
  wgmmaAccs_.insert(accName);
  Expr accum = c.keyword("accumulate") ? c.keyword("accumulate")->value : nullptr;
  std::string scaleD = !accum                             ? "1"
                       : accum->kind == ExprKind::BoolImm ? (as<BoolImm>(accum).value ? "1" : "0")
                                                          : fmt::format("({}) ? 1 : 0", ex(accum));
  // One instruction per 16 of K: the first takes `accumulate`.
  for (int64_t k = 0; k < aExt[1]; k += 16) {
    auto regs = fragment(k);
    if (!regs)
      return;
    std::string b0;
    std::string baddr = regionByteAddress(kSlice(arg(2), mnMajor ? 0 : 1, k), &b0);
    line(fmt::format("ts_wgmma_m64n{}k16_{}_rs{}({}, {}, {}, {}, {}, ts_wgmma_desc_lbo({}, {}, {}, "
                     "{}), {});",
                     n, ptxTypeName(ab.dtype), mnMajor ? "_mn" : "", accName, (*regs)[0],
                     (*regs)[1], (*regs)[2], (*regs)[3], baddr, mode, sbo, lbo,
                     k == 0 ? scaleD : "1"));
  }
}

// One m64nNk16 wgmma with A from four 32-bit registers and B from a
// shared-memory descriptor; tnspB 1: B is MN-major.
std::string wgmmaRegisterAHelper(int n, Dtype ab, bool mnMajor) {
  std::string t(ptxTypeName(ab));
  int regs = n / 2;
  std::string operands, constraints;
  for (int i = 0; i < regs; ++i) {
    operands += fmt::format("{}%{}", i ? ", " : "", i);
    constraints += fmt::format("{}\"+f\"(d[{}])", i ? ", " : "", i);
  }
  std::ostringstream o;
  std::string guard = fmt::format("TS_HELPER_WGMMA_M64N{}K16_{}_RS{}", n, t, mnMajor ? "_MN" : "");
  o << "#ifndef " << guard << "\n#define " << guard << "\n";
  o << "__device__ __forceinline__ void ts_wgmma_m64n" << n << "k16_" << t << "_rs"
    << (mnMajor ? "_mn" : "") << "(float (&d)[" << regs
    << "], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint64_t db, int scale_d) {\n"
    << "#pragma unroll\n  for (int i = 0; i < " << regs
    << "; ++i) asm volatile(\"\" : \"+f\"(d[i]) :: \"memory\");\n"
    << "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << regs + 5 << ", 0;\\n"
    << intrinsic(IntrinsicId::WgmmaMmaAsync).ptx << ".m64n" << n << "k16.f32." << t << "." << t
    << " {" << operands << "}, {%" << regs << ", %" << regs + 1 << ", %" << regs + 2 << ", %"
    << regs + 3 << "}, %" << regs + 4 << ", p, 1, 1, " << (mnMajor ? 1 : 0) << ";\\n}\\n\"\n"
    << "    : " << constraints
    << "\n    : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(db), \"r\"(scale_d));\n"
    << "#pragma unroll\n  for (int i = 0; i < " << regs
    << "; ++i) asm volatile(\"\" : \"+f\"(d[i]) :: \"memory\");\n"
    << "}\n#endif\n";
  return o.str();
}

// ------------------------------------------------------------------ whole kernel

// The helper-name suffix of a non-16-bit wgmma kind: "e4m3", or "e4m3_e5m2"
// when A and B differ.
std::string wgmmaHelperSuffix(const MmaShape &row) {
  std::string s(ptxTypeName(row.a));
  if (row.b != row.a)
    s += "_" + std::string(ptxTypeName(row.b));
  return s;
}

// One m64nNkK wgmma with both operands from shared-memory descriptors. The
// 16-bit kinds take the transpose immediates (0: K-major); the 8-bit kinds
// have none (PTX ISA: their operands are always K-major).
std::string wgmmaHelper(int n, const MmaShape &row) {
  bool half = row.k == 16;
  std::string suffix = half ? std::string(ptxTypeName(row.a)) : wgmmaHelperSuffix(row);
  std::string types =
      fmt::format("{}.{}.{}", ptxTypeName(row.d), ptxTypeName(row.a), ptxTypeName(row.b));
  int regs = n / 2;
  std::string operands, constraints;
  for (int i = 0; i < regs; ++i) {
    operands += fmt::format("{}%{}", i ? ", " : "", i);
    constraints += fmt::format("{}\"+f\"(d[{}])", i ? ", " : "", i);
  }
  std::ostringstream o;
  // A guard per helper: the kernels of one file may share it.
  std::string guard = fmt::format("TS_HELPER_WGMMA_M64N{}K{}_{}", n, row.k, suffix);
  o << "#ifndef " << guard << "\n#define " << guard << "\n";
  // The empty asm statements around the instruction pin the accumulators
  // (as CUTLASS's warpgroup_fence_operand does), so the compiler does not
  // move their definitions across wgmmas in flight.
  o << "__device__ __forceinline__ void ts_wgmma_m64n" << n << "k" << row.k << "_" << suffix
    << "(float (&d)[" << regs << "], uint64_t da, uint64_t db, int scale_d) {\n"
    << "#pragma unroll\n  for (int i = 0; i < " << regs
    << "; ++i) asm volatile(\"\" : \"+f\"(d[i]) :: \"memory\");\n"
    << "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << regs + 2 << ", 0;\\n"
    << intrinsic(IntrinsicId::WgmmaMmaAsync).ptx << ".m64n" << n << "k" << row.k << "." << types
    << " {" << operands << "}, %" << regs << ", %" << regs + 1 << ", p, 1, 1"
    << (half ? ", 0, 0" : "") << ";\\n}\\n\"\n"
    << "    : " << constraints << "\n    : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n"
    << "#pragma unroll\n  for (int i = 0; i < " << regs
    << "; ++i) asm volatile(\"\" : \"+f\"(d[i]) :: \"memory\");\n"
    << "}\n#endif\n";
  return o.str();
}

bool KernelEmitter::run(std::string &device, std::string &host) {
  devices_ = !k_.launch.devices.empty();
  collect();
  if (failed_)
    return false;
  // Body first: it discovers the TMA maps and wgmma shapes the signature needs.
  out_.str("");
  // Shared buffers and barriers bound to the dynamic allocation.
  for (auto &[n, b] : bufs_)
    if (b.scope == MemScope::Shared)
      line(fmt::format("{} *{} = reinterpret_cast<{} *>(ts_smem + {});", cType(b.dtype), n,
                       cType(b.dtype), b.smemOffset));
  for (auto &[n, b] : barriers_)
    line(fmt::format("uint64_t *{} = reinterpret_cast<uint64_t *>(ts_smem + {});", n, b.first));
  bool inits = false;
  struct InitWalk : IRVisitor {
    std::vector<const BarrierDecl *> decls;
    void visitBarrierDecl(const BarrierDecl &b) override { decls.push_back(&b); }
  } iw;
  iw.visit(k_.body);
  for (const BarrierDecl *b : iw.decls)
    if (b->count) {
      if (!inits)
        line("if (threadIdx.x == 0) {");
      inits = true;
      int64_t n = b->arraySize ? constantValue(b->arraySize).value_or(1) : 1;
      line(fmt::format("  for (int i = 0; i < {}; ++i) ts_mbar_init(ts_smem_addr(&{}[i]), {});", n,
                       b->name, ex(b->count)));
    }
  if (inits) {
    line("  asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
    line("}");
    line("__syncthreads();");
  }
  // A devices(N) kernel reads its rank and the device count from the peer
  // table; ts_dseq counts its warp collectives (ts_devices.cuh).
  std::string implicitLocals;
  if (devices_) {
    for (const Param &p : k_.params)
      if (p.implicit)
        implicitLocals += fmt::format("  [[maybe_unused]] const int {} = ts_args.{};\n", p.name,
                                      p.name == "devid" ? "rank" : "ndev");
    line("[[maybe_unused]] uint32_t ts_dseq = 0;");
  }
  deviceSide_ = true;
  block(k_.body);
  deviceSide_ = false;
  std::string body = implicitLocals + out_.str();
  if (failed_)
    return false;
  // Fetch the tensor maps' descriptors while the barriers are set up, so the
  // first TMA copy does not wait for them (they live in kernel parameter space).
  std::string prefetch;
  for (auto &[n, m] : tma_)
    prefetch += fmt::format("    asm volatile(\"prefetch.tensormap [%0];\" :: "
                            "\"l\"(reinterpret_cast<uint64_t>(&tmap_{})) : \"memory\");\n",
                            n);
  if (!prefetch.empty())
    body = "  if (threadIdx.x == 0) {\n" + prefetch + "  }\n" + body;

  // Signature.
  std::vector<std::string> params;
  if (devices_)
    params.push_back("const ts_dev::CallArgs ts_args");
  for (const Param &p : k_.params) {
    if (p.implicit)
      continue;
    if (p.isTensor)
      params.push_back(fmt::format("{} *__restrict__ {}", cType(p.dtype), p.name));
    else
      params.push_back(fmt::format("{} {}", cType(p.dtype), p.name));
  }
  for (const std::string &s : symbols_)
    params.push_back("int " + s);
  for (auto &[n, m] : tma_)
    params.push_back("const __grid_constant__ CUtensorMap tmap_" + n);
  std::string sig;
  for (size_t i = 0; i < params.size(); ++i)
    sig += (i ? ", " : "") + params[i];
  std::ostringstream d;
  if (usesTcgen05_ && !tcgenHelpers_) {
    tcgenHelpers_ = true;
    d << kTcgen05Helpers;
  }
  for (int n : wgmmaShapes_)
    for (Dtype ab : {Dtype::bf16, Dtype::f16})
      d << wgmmaHelper(n, *findMmaShape(k_.launch.target, MmaFamily::Wgmma, Dtype::f32, ab, ab));
  for (auto [n, row] : wgmmaOtherShapes_)
    d << wgmmaHelper(n, *row);
  for (auto [n, ab, mn] : wgmmaRegA_)
    d << wgmmaRegisterAHelper(n, ab, mn);
  bool usesSetmaxnreg = body.find("setmaxnreg") != std::string::npos;
  // A cluster shape is a compile-time attribute: the <<<>>> launch then
  // groups the CTAs (the grid must be a multiple of it, as the `launch` says).
  std::string clusterDims;
  if (!k_.launch.cluster.empty()) {
    for (size_t i = 0; i < 3; ++i)
      clusterDims += fmt::format("{}{}", i ? ", " : "",
                                 i < k_.launch.cluster.size() ? ex(k_.launch.cluster[i]) : "1");
    clusterDims = " __cluster_dims__(" + clusterDims + ")";
  }
  d << "extern \"C\" __global__ void __launch_bounds__(" << k_.launch.threads
    << (usesSetmaxnreg ? ", 1" : "") << ")" << clusterDims << " " << k_.name << "(" << sig
    << ") {\n"
    << "  extern __shared__ __align__(1024) uint8_t ts_smem_raw[];\n"
    // Aligned by pointer arithmetic on the shared array itself, so the
    // compiler keeps it in the shared address space (ld/st.shared, not
    // generic accesses as after a round trip through an integer).
    << "  uint8_t *ts_smem = ts_smem_raw + ((1024u - (ts_smem_addr(ts_smem_raw) & 1023u)) & 1023u);\n"
    << "  const int ts_tid = (int)threadIdx.x;\n"
    << body << "}\n\n";
  device = d.str();

  // Host launcher.
  std::ostringstream h;
  int64_t dynSmem = smemBytes_ + 1024;
  std::string abi = fmt::format("{{\"kernel\": \"{}\", \"target\": \"{}\", \"tensors\": [",
                                k_.name, target_.name);
  int ti = 0;
  for (const Param &p : k_.params)
    if (p.isTensor) {
      std::string shape;
      for (const Expr &e : p.shape)
        shape += (shape.empty() ? "\"" : ", \"") + print(e) + "\"";
      abi += fmt::format("{}{{\"name\": \"{}\", \"dtype\": \"{}\", \"shape\": [{}]}}",
                         ti++ ? ", " : "", p.name, dtypeName(p.dtype), shape);
    }
  abi += "], \"symbols\": [";
  for (size_t i = 0; i < symbols_.size(); ++i)
    abi += (i ? ", \"" : "\"") + symbols_[i] + "\"";
  abi += "], \"scalars\": [";
  int si = 0;
  for (const Param &p : k_.params)
    if (!p.isTensor && !p.implicit)
      abi += fmt::format("{}{{\"name\": \"{}\", \"dtype\": \"{}\"}}", si++ ? ", " : "",
                         p.name, dtypeName(p.dtype));
  abi += fmt::format("], \"threads\": {}, \"dynamic_smem\": {}}}", k_.launch.threads, dynSmem);
  std::string escaped;
  for (char ch : abi)
    escaped += ch == '"' ? std::string("\\\"") : std::string(1, ch);
  h << "extern \"C\" const char *tilescope_abi_" << k_.name << "() { return \"" << escaped
    << "\"; }\n\n";
  // The launcher's codes: a cudaError_t; a devices kernel's, the device
  // runtime's (0 launched, 2 arguments break the `where` clause, 1 a CUDA
  // error), as the collectives' launchers (codegen/DeviceEmitter.h).
  std::string badArgs = devices_ ? "2" : "(int)cudaErrorInvalidValue";
  std::string badMap = devices_ ? "1" : "(int)cudaErrorInvalidValue";
  if (devices_) {
    // Tensors are byte offsets in the data area of the communicator's
    // symmetric region (ts_dev::localData), shape symbols and scalars values.
    h << "extern \"C\" int tilescope_launch_" << k_.name << "(ts_dev::Communicator *comm";
    for (const Param &p : k_.params)
      if (p.isTensor)
        h << ", size_t " << p.name << "_off";
    for (const std::string &sym : symbols_)
      h << ", long long " << sym << "_arg";
    for (const Param &p : k_.params)
      if (!p.isTensor && !p.implicit)
        h << ", " << cType(p.dtype) << " " << p.name;
    h << ", cudaStream_t stream) {\n";
    for (const Param &p : k_.params)
      if (p.isTensor)
        h << "  " << cType(p.dtype) << " *" << p.name << " = reinterpret_cast<" << cType(p.dtype)
          << " *>(ts_dev::localData(*comm) + " << p.name << "_off);\n";
    for (const std::string &sym : symbols_)
      h << "  if (" << sym << "_arg < 0 || " << sym << "_arg > 2147483647LL) return 2;\n"
        << "  const int " << sym << " = (int)" << sym << "_arg;\n";
    for (const Param &p : k_.params)
      if (p.implicit)
        h << "  [[maybe_unused]] const int " << p.name << " = comm->"
          << (p.name == "devid" ? "rank" : "ndev") << ";\n";
  } else {
    h << "extern \"C\" int tilescope_launch_" << k_.name
      << "(void *const *tensors, const int64_t *symbols, const double *scalars, cudaStream_t "
         "stream) {\n";
    h << "  (void)tensors; (void)symbols; (void)scalars;\n";
    ti = 0;
    for (const Param &p : k_.params)
      if (p.isTensor)
        h << "  " << cType(p.dtype) << " *" << p.name << " = static_cast<" << cType(p.dtype)
          << " *>(tensors[" << ti++ << "]);\n";
    for (size_t i = 0; i < symbols_.size(); ++i)
      h << "  const int " << symbols_[i] << " = (int)symbols[" << i << "];\n";
    si = 0;
    for (const Param &p : k_.params)
      if (!p.isTensor)
        h << "  const " << cType(p.dtype) << " " << p.name << " = (" << cType(p.dtype)
          << ")scalars[" << si++ << "];\n";
  }
  for (const Expr &c : k_.constraints) {
    std::string text = ex(c);
    h << "  if (!(" << text << ")) return " << badArgs << "; // where " << print(c) << "\n";
  }
  for (auto &[n, m] : tma_) {
    const BufferInfo &gb = bufs_.at(n);
    size_t rank = gb.shape.size();
    h << "  CUtensorMap tmap_" << n << ";\n  {\n";
    h << "    cuuint64_t dims[" << rank << "] = {";
    for (size_t dd = rank; dd-- > 0;)
      h << "(cuuint64_t)(" << ex(gb.shape[dd]) << ")" << (dd ? ", " : "");
    h << "};\n    cuuint64_t strides[" << std::max<size_t>(rank - 1, 1) << "] = {";
    std::string stride = std::to_string(dtypeBits(gb.dtype) / 8);
    for (size_t dd = rank; dd-- > 1;) {
      stride = "(" + stride + ") * (cuuint64_t)(" + ex(gb.shape[dd]) + ")";
      h << stride << (dd > 1 ? ", " : "");
    }
    if (rank == 1)
      h << "0";
    h << "};\n    cuuint32_t box[" << rank << "] = {";
    for (size_t dd = rank; dd-- > 0;)
      h << m.box[dd] << (dd ? ", " : "");
    h << "};\n    cuuint32_t estr[" << rank << "] = {";
    for (size_t dd = 0; dd < rank; ++dd)
      h << "1" << (dd + 1 < rank ? ", " : "");
    std::string sw = m.swizzleBytes == 128  ? "CU_TENSOR_MAP_SWIZZLE_128B"
                     : m.swizzleBytes == 64 ? "CU_TENSOR_MAP_SWIZZLE_64B"
                     : m.swizzleBytes == 32 ? "CU_TENSOR_MAP_SWIZZLE_32B"
                                            : "CU_TENSOR_MAP_SWIZZLE_NONE";
    h << "};\n    CUresult r = ts_encode_tiled()(&tmap_" << n << ", " << tmaType(gb.dtype) << ", "
      << rank << ", " << n << ", dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, " << sw
      << ", CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n"
      << "    if (r != CUDA_SUCCESS) return " << badMap << ";\n  }\n";
  }
  std::string grid;
  for (size_t g = 0; g < 3; ++g)
    grid += (g ? ", " : "") +
            (g < k_.launch.grid.size() ? "(unsigned)(" + ex(k_.launch.grid[g]) + ")" : "1u");
  if (devices_) // the warp collectives' flags: a slot per CTA (ts_devices.cuh)
    h << "  {\n    dim3 ts_grid(" << grid << ");\n"
      << "    if ((long long)ts_grid.x * ts_grid.y * ts_grid.z > ts_dev::kMaxBlocks) return 2;\n"
      << "  }\n";
  h << "  cudaError_t e = cudaFuncSetAttribute(" << k_.name
    << ", cudaFuncAttributeMaxDynamicSharedMemorySize, " << dynSmem << ");\n"
    << "  if (e != cudaSuccess) return " << (devices_ ? "1" : "(int)e") << ";\n";
  std::string args = devices_ ? "ts_dev::nextCall(*comm)" : "";
  for (const Param &p : k_.params)
    if (!p.implicit)
      args += (args.empty() ? "" : ", ") + p.name;
  for (const std::string &s : symbols_)
    args += ", " + s;
  for (auto &[n, m] : tma_)
    args += ", tmap_" + n;
  h << "  " << k_.name << "<<<dim3(" << grid << "), dim3(" << k_.launch.threads << "), "
    << dynSmem << ", stream>>>(" << args << ");\n"
    << (devices_ ? "  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n}\n\n"
                 : "  return (int)cudaGetLastError();\n}\n\n");
  host = h.str();
  return true;
}

const char *kPrelude = R"(// Generated by `tilescope lower`. Do not edit: change the .tile source.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cstdint>

template <class T, int N> struct alignas(sizeof(T) * N) ts_vec { T e[N]; };

__device__ __forceinline__ float ts_to_f32(float x) { return x; }
__device__ __forceinline__ float ts_to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float ts_to_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float ts_to_f32(int x) { return (float)x; }
__device__ __forceinline__ float ts_to_f32(double x) { return (float)x; }

__device__ __forceinline__ int ts_laneid() { return (int)threadIdx.x & 31; }
// The thread index as an opaque value: arithmetic on it cannot be hoisted
// above the point where it is read.
__device__ __forceinline__ int ts_read_tid() {
  int t;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
  return t;
}

template <int M, int B, int S> __device__ __forceinline__ int ts_swizzle(int m) {
  int x = m >> M;
  x ^= (x & (((1 << B) - 1) << S)) >> S;
  return (x << M) | (m & ((1 << M) - 1));
}

__device__ __forceinline__ uint32_t ts_smem_addr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// An empty asm that claims to rewrite every register of a tile: code reading
// the tile after it cannot be scheduled before it.
template <int N> __device__ __forceinline__ void ts_fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}

__device__ __forceinline__ bool ts_elect_sync() {
#if __CUDA_ARCH__ >= 900
  uint32_t elected;
  asm volatile("{\n.reg .pred P;\n.reg .b32 r;\nelect.sync r|P, 0xffffffff;\nselp.u32 %0, 1, 0, P;\n}\n"
               : "=r"(elected));
  return elected != 0;
#else
  return ts_laneid() == __ffs(__activemask()) - 1;
#endif
}

__device__ __forceinline__ void ts_mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void ts_mbar_inval(uint32_t bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void ts_mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
// `mapa`: the shared::cluster address of the same shared::cta offset in
// cluster CTA `rank`.
__device__ __forceinline__ uint32_t ts_mapa(uint32_t addr, int rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}
// An arrival on the barrier at the same offset in cluster CTA `rank`, with
// the default (release, CTA) semantics as CUTLASS's ClusterBarrier uses it:
// an explicit .release.cluster made a cluster GEMM's consumer releases so slow
// that it ran at half the speed (session 4 in the history of docs/perf.md).
__device__ __forceinline__ void ts_mbar_arrive_remote(uint32_t bar, int rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" :: "r"(ts_mapa(bar, rank)) : "memory");
}
// A chunk of a DSMEM copy, loaded from this CTA's shared memory or a peer's
// (`remote`: an address from mapa) and stored likewise. A call loads every
// chunk before it stores the first, so the remote round trips overlap.
template <int BYTES> struct ts_chunk;
template <> struct ts_chunk<16> { uint32_t v[4]; };
template <> struct ts_chunk<8> { uint64_t v; };
template <> struct ts_chunk<4> { uint32_t v; };
template <> struct ts_chunk<2> { uint16_t v; };
template <> struct ts_chunk<1> { uint16_t v; };
#define TS_SPACE(remote, op, ...) if (remote) asm volatile(op ".shared::cluster" __VA_ARGS__); else asm volatile(op ".shared::cta" __VA_ARGS__)
template <int BYTES> __device__ __forceinline__ ts_chunk<BYTES> ts_dsmem_ld(uint32_t src, bool remote) {
  ts_chunk<BYTES> c;
  if constexpr (BYTES == 16)
    TS_SPACE(remote, "ld", ".v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(c.v[0]), "=r"(c.v[1]), "=r"(c.v[2]), "=r"(c.v[3]) : "r"(src) : "memory");
  else if constexpr (BYTES == 8)
    TS_SPACE(remote, "ld", ".b64 %0, [%1];" : "=l"(c.v) : "r"(src) : "memory");
  else if constexpr (BYTES == 4)
    TS_SPACE(remote, "ld", ".b32 %0, [%1];" : "=r"(c.v) : "r"(src) : "memory");
  else if constexpr (BYTES == 2)
    TS_SPACE(remote, "ld", ".b16 %0, [%1];" : "=h"(c.v) : "r"(src) : "memory");
  else
    TS_SPACE(remote, "ld", ".u8 %0, [%1];" : "=h"(c.v) : "r"(src) : "memory");
  return c;
}
template <int BYTES> __device__ __forceinline__ void ts_dsmem_st(uint32_t dst, bool remote, const ts_chunk<BYTES> &c) {
  if constexpr (BYTES == 16)
    TS_SPACE(remote, "st", ".v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(dst), "r"(c.v[0]), "r"(c.v[1]), "r"(c.v[2]), "r"(c.v[3]) : "memory");
  else if constexpr (BYTES == 8)
    TS_SPACE(remote, "st", ".b64 [%0], %1;" :: "r"(dst), "l"(c.v) : "memory");
  else if constexpr (BYTES == 4)
    TS_SPACE(remote, "st", ".b32 [%0], %1;" :: "r"(dst), "r"(c.v) : "memory");
  else if constexpr (BYTES == 2)
    TS_SPACE(remote, "st", ".b16 [%0], %1;" :: "r"(dst), "h"(c.v) : "memory");
  else
    TS_SPACE(remote, "st", ".u8 [%0], %1;" :: "r"(dst), "h"(c.v) : "memory");
}
#undef TS_SPACE
// A chunk read from or written to a generic address (the global side of a
// DSMEM copy); a 1-byte chunk keeps its byte in the low half of its 16 bits.
template <int BYTES> __device__ __forceinline__ ts_chunk<BYTES> ts_chunk_ld(const void *p) {
  ts_chunk<BYTES> c{};
  memcpy(&c, p, BYTES);
  return c;
}
template <int BYTES> __device__ __forceinline__ void ts_chunk_st(void *p, const ts_chunk<BYTES> &c) {
  memcpy(p, &c, BYTES);
}
__device__ __forceinline__ int ts_cluster_ctaid(int axis) {
  uint32_t v;
  if (axis == 0)
    asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v));
  else if (axis == 1)
    asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v));
  else
    asm("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(v));
  return (int)v;
}
__device__ __forceinline__ void ts_mbar_arrive_expect_tx(uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void ts_mbar_expect_tx(uint32_t bar, int bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void ts_mbar_wait(uint32_t bar, int parity) {
  uint32_t done;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
}

__device__ __forceinline__ void ts_tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
               :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
// Multicast: the box lands at `dst` in every CTA of the cluster named by
// `mask` (bit i: rank i) and completes bytes on the barrier at `bar` in each.
__device__ __forceinline__ void ts_tma_load_2d_mc(uint32_t dst, const CUtensorMap *map, uint32_t bar, uint16_t mask, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;"
               :: "r"(dst), "l"(map), "r"(bar), "h"(mask), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void ts_tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
               :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
__device__ __forceinline__ void ts_tma_store_2d(const CUtensorMap *map, uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
// Tensors of rank 1, 4 and 5 (attention's [B, H, S, D]), and stores of rank 1, 3-5.
__device__ __forceinline__ void ts_tma_load_1d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];"
               :: "r"(dst), "l"(map), "r"(bar), "r"(c0) : "memory");
}
__device__ __forceinline__ void ts_tma_load_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];"
               :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}
__device__ __forceinline__ void ts_tma_load_5d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2, int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
               :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4) : "memory");
}
__device__ __forceinline__ void ts_tma_store_1d(const CUtensorMap *map, uint32_t src, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%2}], [%1];"
               :: "l"(map), "r"(src), "r"(c0) : "memory");
}
__device__ __forceinline__ void ts_tma_store_3d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
               :: "l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
__device__ __forceinline__ void ts_tma_store_4d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
               :: "l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}
__device__ __forceinline__ void ts_tma_store_5d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2, int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];"
               :: "l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4) : "memory");
}
__device__ __forceinline__ void ts_cp_async16(uint32_t dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
}

// wgmma shared-memory matrix descriptor: start address, leading byte offset
// (unused by swizzled K-major operands), stride byte offset between 8-row
// core-matrix groups, swizzle mode (1: 128B, 2: 64B, 3: 32B).
__device__ __forceinline__ uint64_t ts_wgmma_desc(uint32_t addr, int mode, int sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)1 << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)mode << 62;
  return d;
}
// exp2: ex2.approx.ftz.f32, one MUFU.EX2 (exp2f is the non-ftz ex2.approx.f32,
// which ptxas wraps in a scaling of inputs below -126: three more
// instructions, a fifth slower attention). Results below 2^-126 are 0; the
// simulator's exp2 is this instruction's measured model (simulator/Ex2Approx.h).
__device__ __forceinline__ float ts_ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// The same with a leading byte offset: for an MN-major operand, the distance
// between its column blocks of one swizzle span.
__device__ __forceinline__ uint64_t ts_wgmma_desc_lbo(uint32_t addr, int mode, int sbo, int lbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)mode << 62;
  return d;
}
// Two 16-bit values in one 32-bit register, the first in the low half (a
// wgmma A fragment register).
__device__ __forceinline__ uint32_t ts_pack2(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return (uint32_t)__bfloat16_as_ushort(lo) | ((uint32_t)__bfloat16_as_ushort(hi) << 16);
}
__device__ __forceinline__ uint32_t ts_pack2(__half lo, __half hi) {
  return (uint32_t)__half_as_ushort(lo) | ((uint32_t)__half_as_ushort(hi) << 16);
}

)";

const char *kHostPrelude = R"(// ---- host side
typedef CUresult (*ts_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                       CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
[[maybe_unused]] static ts_encode_tiled_fn ts_encode_tiled() {
  static ts_encode_tiled_fn fn = nullptr;
  if (!fn) {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<ts_encode_tiled_fn>(p);
  }
  return fn;
}

)";

} // namespace

std::optional<LoweredModule> lowerModule(const Module &module, Diagnostics &diag,
                                         const std::string &kernelName) {
  LoweredModule out;
  std::string device, host;
  bool tcgenHelpers = false;
  for (const Kernel &k : module.kernels) {
    if (!kernelName.empty() && k.name != kernelName)
      continue;
    auto d = dispatchKernel(k, diag);
    if (!d)
      return std::nullopt;
    LoweredKernel info;
    info.name = k.name;
    info.target = k.launch.target;
    for (const DispatchDecision &dd : d->decisions)
      info.dispatchChoices.push_back(dd.primitive + " -> " + dd.chosen);
    KernelEmitter e(d->kernel, diag, info, tcgenHelpers);
    std::string dev, hst;
    if (!e.run(dev, hst))
      return std::nullopt;
    device += dev;
    host += hst;
    out.kernels.push_back(std::move(info));
  }
  bool devices = false;
  for (const Kernel &k : module.kernels)
    devices |= (kernelName.empty() || k.name == kernelName) && !k.launch.devices.empty();
  // devices(N) kernels run on the device-scale runtime (compile with -I to
  // codegen/runtime, docs/scales.md).
  out.source = std::string(kPrelude) + (devices ? "#include \"ts_devices.cuh\"\n\n" : "") +
               device + kHostPrelude + host;
  return out;
}

} // namespace tilescope::codegen
