// The table of dispatch implementations: per primitive, each implementation's
// priority, the predicate that accepts or refuses a call (with a reason), and
// the native IR it expands to. Instruction constraints come from
// ir/InstructionRules.h.
#include "dispatch/Dispatch.h"
#include "dispatch/DispatchSupport.h"
#include "ir/InstructionRules.h"
#include "ir/Intrinsics.h"
#include "ir/LayoutPresets.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope {
namespace {
using namespace dispatch;

// ------------------------------------------------------------ predicates

const Layout &layoutOf(const Operand &op, Layout &storage) {
  if (op.layout)
    return op.layout->layout;
  std::vector<int64_t> shape;
  for (const Expr &d : op.bufferShape)
    shape.push_back(constantValue(d).value_or(1));
  storage = Layout::rowMajor(shape);
  return storage;
}

std::vector<int64_t> constShape(const Operand &op) {
  std::vector<int64_t> s;
  for (const Expr &d : op.bufferShape)
    s.push_back(constantValue(d).value_or(-1));
  return s;
}

// The violations of an instruction rule by an operand, joined, or "".
std::string ruleRefusal(std::string_view ruleName, const Operand &op, TargetKind target,
                        const InstructionUse &use = {}) {
  const InstructionRule *rule = findInstructionRule(ruleName);
  if (!rule)
    return fmt::format("no instruction rule '{}'", ruleName);
  Layout storage;
  const Layout &l = layoutOf(op, storage);
  BufferInfo info;
  info.name = op.buffer;
  info.scope = op.scope;
  info.dtype = op.dtype;
  auto violations = checkInstruction(*rule, l, constShape(op), info, targetInfo(target), use);
  if (violations.empty())
    return "";
  std::string why = fmt::format("{} rejects the layout of '{}': ", ruleName, op.buffer);
  std::string prefix = std::string(ruleName) + ": ";
  for (size_t i = 0; i < violations.size() && i < 2; ++i) {
    std::string m = violations[i].message;
    if (m.rfind(prefix, 0) == 0)
      m = m.substr(prefix.size());
    why += (i ? "; " : "") + m;
  }
  return why;
}

std::string scopes(const CallSite &s, MemScope dst, MemScope src) {
  if (s.operands.size() < 2)
    return "needs two buffer operands";
  if (s.operands[0].isScalar || s.operands[1].isScalar)
    return "operands must be buffers";
  if (s.operands[0].scope != dst || s.operands[1].scope != src)
    return fmt::format("moves {} -> {}, not {} -> {}", memScopeName(src), memScopeName(dst),
                       memScopeName(s.operands[1].scope), memScopeName(s.operands[0].scope));
  return "";
}

std::string sameTile(const Operand &a, const Operand &b) {
  if (a.dtype != b.dtype)
    return fmt::format("dtypes differ ({} and {}): a copy does not convert", dtypeName(a.dtype),
                       dtypeName(b.dtype));
  if (a.elements() != b.elements())
    return fmt::format("regions hold {} and {} elements", a.elements(), b.elements());
  return "";
}

// The owner map of a register operand, or a refusal.
std::string ownerRefusal(const Operand &reg, std::optional<OwnerMap> *out) {
  for (bool k : reg.kept)
    if (!k)
      return fmt::format("register tile '{}' is indexed by a point; use a region of it",
                         reg.buffer);
  Layout storage;
  const Layout &l = layoutOf(reg, storage);
  std::string why;
  *out = ownerMap(l, constShape(reg), &why);
  return out->has_value() ? "" : fmt::format("'{}': {}", reg.buffer, why);
}

bool presetIs(const Operand &op, std::string_view preset) {
  return op.layout && op.layout->preset == preset;
}

// ------------------------------------------------------------ expansions

Stmt call(IntrinsicId id, std::vector<CallArg> args, ExecScope scope = ExecScope::Thread) {
  return CallStmt::make(scope, std::string(intrinsicName(id)), std::move(args));
}
CallArg pos(Expr e) {
  return {"", std::move(e), {}};
}
CallArg kw(std::string k, Expr e) {
  return {std::move(k), std::move(e), {}};
}

// A barrier over the scope after shared memory was written by its threads.
Block scopeBarrier(const CallSite &s) {
  if (s.scope == ExecScope::Cta)
    return {call(IntrinsicId::BarrierSync,
                 {pos(lit(0)), kw("threads", lit(s.kernel->launch.threads))})};
  return {};
}

// Per-element work through the owner loop of register tile `reg`. The loop
// runs over the whole tile; `perElement` gets coordinates relative to the
// region `reg` names, and elements outside that region are skipped.
Block elementwiseOverOwner(const CallSite &s, DispatchState &st, const Operand &reg,
                           const std::function<Stmt(const std::vector<Expr> &)> &perElement) {
  std::optional<OwnerMap> map;
  ownerRefusal(reg, &map);
  auto full = constShape(reg);
  return ownerLoop(
      *map, st,
      [&](const std::vector<Expr> &c) {
        std::vector<Expr> rel;
        Expr guard;
        for (size_t d = 0; d < c.size(); ++d) {
          rel.push_back(sub(c[d], reg.begin[d]));
          if (reg.extent[d] == full[d])
            continue;
          Expr in = Binary::make(BinaryOp::And, Binary::make(BinaryOp::Ge, c[d], reg.begin[d]),
                                 lt(c[d], add(reg.begin[d], lit(reg.extent[d]))));
          guard = guard ? Binary::make(BinaryOp::And, guard, in) : in;
        }
        Stmt body = perElement(rel);
        if (guard)
          return Block{If::make(guard, {body}, {})};
        return Block{body};
      },
      s.scopeThreads(), s.scope);
}

// The `accumulate` of step `kk` of a gemm issued as one MMA per step of K:
// the first step takes the gemm's own (true when absent; `accumulate =
// false` overwrites C), every later step adds to what the first wrote.
Expr stepAccumulates(const CallSite &s, Expr kk) {
  const CallArg *a = s.keyword("accumulate");
  if (!a || (a->value->kind == ExprKind::BoolImm && as<BoolImm>(a->value).value))
    return BoolImm::make(true);
  Expr later = Binary::make(BinaryOp::Gt, std::move(kk), lit(0));
  if (a->value->kind == ExprKind::BoolImm)
    return later;
  return Binary::make(BinaryOp::Or, std::move(later), a->value);
}

Expr convert(Expr v, Dtype from, Dtype to) {
  if (from == to)
    return v;
  return Call::make(std::string(dtypeName(to)), {std::move(v)});
}

// ------------------------------------------------------------ the table

// What every wgmma implementation of gemm refuses first: a target without
// wgmma, a call not issued by a warpgroup, operands other than C, A and B.
std::string wgmmaIssueRefusal(const CallSite &s) {
  if (!targetHas(s.target, intrinsic(IntrinsicId::WgmmaMmaAsync).feature))
    return "wgmma needs sm_90a";
  if (s.scope != ExecScope::Warpgroup)
    return "wgmma is issued by a warpgroup (wg.gemm)";
  if (s.operands.size() != 3)
    return "needs C, A and B";
  return "";
}

std::vector<DispatchImpl> buildTable() {
  std::vector<DispatchImpl> t;

  // ---- copy_async global -> shared
  t.push_back({intrinsicName(IntrinsicId::CopyAsync), "tma", 100,
               "cp.async.bulk.tensor box copy completing on an mbarrier",
               [](const CallSite &s) -> std::string {
                 if (auto w = scopes(s, MemScope::Shared, MemScope::Global); !w.empty())
                   return w;
                 if (!targetHas(s.target, intrinsic(IntrinsicId::TmaLoad).feature))
                   return "the target has no TMA";
                 if (!s.keyword("mbar"))
                   return "TMA completes on an mbarrier: give `mbar =`";
                 if (s.scope != ExecScope::Thread)
                   return "one thread issues a TMA copy (call it without a scope prefix)";
                 if (auto w = sameTile(s.operands[0], s.operands[1]); !w.empty())
                   return w;
                 const Operand &dst = s.operands[0];
                 // The destination is whole trailing dimensions after point indices
                 // (a pipeline stage As[s]); each stage is one box.
                 size_t batch = 0;
                 while (batch < dst.kept.size() && !dst.kept[batch])
                   ++batch;
                 for (size_t d = batch; d < dst.kept.size(); ++d)
                   if (!dst.kept[d] || constantValue(dst.begin[d]).value_or(1) != 0 ||
                       dst.extent[d] != constantValue(dst.bufferShape[d]).value_or(-1))
                     return "the shared destination must be whole trailing dimensions";
                 if (s.operands[1].regionShape() != dst.regionShape())
                   return "the global box and the shared tile differ in shape";
                 InstructionUse use;
                 use.batchDims = batch;
                 return ruleRefusal("tma", dst, s.target, use);
               },
               [](const CallSite &s, DispatchState &) -> Block {
                 return {
                     call(IntrinsicId::TmaLoad, {pos(s.operands[0].expr), pos(s.operands[1].expr),
                                                 kw("mbar", s.keyword("mbar")->value)})};
               }});
  t.push_back(
      {intrinsicName(IntrinsicId::CopyAsync), intrinsicName(IntrinsicId::CpAsync), 50,
       "cp.async of 16-byte chunks, completing on a group",
       [](const CallSite &s) -> std::string {
         if (auto w = scopes(s, MemScope::Shared, MemScope::Global); !w.empty())
           return w;
         if (s.keyword("mbar"))
           return "cp.async completes through commit groups, not an mbarrier";
         if (auto w = sameTile(s.operands[0], s.operands[1]); !w.empty())
           return w;
         auto shape = s.operands[0].regionShape();
         if (shape.empty() || shape.back() * dtypeBits(s.operands[0].dtype) % 128 != 0)
           return "the inner dimension is not a whole number of 16-byte chunks";
         if (s.operands[0].layout && s.operands[0].layout->layout.swizzle())
           return "a swizzled destination needs the TMA's swizzle modes";
         return "";
       },
       [](const CallSite &s, DispatchState &st) -> Block {
         const Operand &dst = s.operands[0], &src = s.operands[1];
         auto shape = dst.regionShape();
         int64_t perChunk = 128 / dtypeBits(dst.dtype);
         auto chunkShape = shape;
         chunkShape.back() /= perChunk;
         int64_t chunks = dst.elements() / perChunk;
         Block b = spreadLoop(
             chunks, chunkShape, s.scope, s.scopeThreads(), st, [&](const std::vector<Expr> &c) {
               auto cc = c;
               cc.back() = mul(cc.back(), lit(perChunk));
               std::vector<int64_t> ext(shape.size(), 0);
               ext.back() = perChunk;
               return Block{call(IntrinsicId::CpAsync,
                                 {pos(regionAt(dst, cc, ext)), pos(regionAt(src, cc, ext))})};
             });
         b.push_back(call(IntrinsicId::CpAsyncCommit, {}));
         return b;
       }});

  // ---- copy: every pair of scopes
  // ldmatrix.x4 loads shared -> registers, stmatrix.x4 stores registers ->
  // shared: a warp's four 8x8 b16 matrices in the ldmatrix_x4 fragment.
  for (bool load : {true, false}) {
    IntrinsicId id = load ? IntrinsicId::Ldmatrix : IntrinsicId::Stmatrix;
    t.push_back(
        {intrinsicName(IntrinsicId::Copy), intrinsicName(id), 90,
         load ? "ldmatrix.x4: four 8x8 b16 matrices shared -> registers"
              : "stmatrix.x4: registers -> shared, four 8x8 b16 matrices",
         [load](const CallSite &s) -> std::string {
           if (auto w = load ? scopes(s, MemScope::Reg, MemScope::Shared)
                             : scopes(s, MemScope::Shared, MemScope::Reg);
               !w.empty())
             return w;
           if (s.scope != ExecScope::Warp)
             return load ? "ldmatrix is a warp instruction (warp.copy)"
                         : "stmatrix is a warp instruction (warp.copy)";
           if (!presetIs(s.operands[load ? 0 : 1], "ldmatrix_x4"))
             return "the register tile is not in the ldmatrix_x4 fragment layout";
           return ruleRefusal(load ? "ldmatrix.x4" : "stmatrix.x4", s.operands[load ? 1 : 0],
                              s.target);
         },
         [id](const CallSite &s, DispatchState &) -> Block {
           return {call(id, {pos(s.operands[0].expr), pos(s.operands[1].expr), kw("num", lit(4))})};
         }});
  }
  for (bool load : {true, false}) {
    std::string_view name = intrinsicName(load ? IntrinsicId::Tcgen05Ld : IntrinsicId::Tcgen05St);
    t.push_back(
        {intrinsicName(IntrinsicId::Copy), name, 90,
         load ? "tensor memory -> registers, 32x32b shape" : "registers -> tensor memory",
         [load](const CallSite &s) -> std::string {
           if (auto w = load ? scopes(s, MemScope::Reg, MemScope::Tmem)
                             : scopes(s, MemScope::Tmem, MemScope::Reg);
               !w.empty())
             return w;
           if (!targetInfo(s.target).hasTensorMemory)
             return "the target has no tensor memory";
           const Operand &reg = s.operands[load ? 0 : 1], &tm = s.operands[load ? 1 : 0];
           if (!reg.layout || reg.layout->preset != "tcgen05_32x32b")
             return "the register tile is not in a tcgen05_32x32b fragment layout";
           return ruleRefusal(load ? "tcgen05.ld.32x32b" : "tcgen05.st.32x32b", tm, s.target);
         },
         [load](const CallSite &s, DispatchState &) -> Block {
           Block b = {call(load ? IntrinsicId::Tcgen05Ld : IntrinsicId::Tcgen05St,
                           {pos(s.operands[0].expr), pos(s.operands[1].expr),
                            kw("shape", StringImm::make("32x32b"))},
                           ExecScope::Thread)};
           b.push_back(call(load ? IntrinsicId::Tcgen05WaitLd : IntrinsicId::Tcgen05WaitSt, {}));
           return b;
         }});
  }
  // Register <-> memory through the owner loop: codegen turns runs of
  // consecutive elements into 32/64/128-bit accesses.
  for (MemScope mem : {MemScope::Global, MemScope::Shared}) {
    for (bool load : {true, false}) {
      std::string_view name = mem == MemScope::Global ? (load ? "ld.global.vec" : "st.global.vec")
                                                      : (load ? "ld.shared" : "st.shared");
      t.push_back({intrinsicName(IntrinsicId::Copy), name, 20,
                   "each thread moves the elements its layout owns",
                   [mem, load](const CallSite &s) -> std::string {
                     if (auto w =
                             load ? scopes(s, MemScope::Reg, mem) : scopes(s, mem, MemScope::Reg);
                         !w.empty())
                       return w;
                     const Operand &reg = s.operands[load ? 0 : 1];
                     if (auto w = sameTile(s.operands[0], s.operands[1]); !w.empty())
                       return w;
                     if (reg.regionShape() != s.operands[load ? 1 : 0].regionShape())
                       return "the register tile and the memory region differ in shape";
                     std::optional<OwnerMap> map;
                     return ownerRefusal(reg, &map);
                   },
                   [load](const CallSite &s, DispatchState &st) -> Block {
                     const Operand &dst = s.operands[0], &src = s.operands[1];
                     const Operand &reg = load ? dst : src;
                     Block b = elementwiseOverOwner(s, st, reg, [&](const std::vector<Expr> &c) {
                       return Store::make(elementAt(dst, c), elementAt(src, c));
                     });
                     // A replicated tile is stored by the first replica only:
                     // the same bytes once, not by every thread that holds them.
                     if (std::optional<OwnerMap> map; !load && ownerRefusal(reg, &map).empty())
                       if (Expr first = firstReplica(*map, s.scope, s.scopeThreads()))
                         b = {If::make(first, std::move(b), {})};
                     if (!load && dst.scope == MemScope::Shared) {
                       Block bar = scopeBarrier(s);
                       b.insert(b.end(), bar.begin(), bar.end());
                     }
                     return b;
                   }});
    }
  }
  t.push_back({intrinsicName(IntrinsicId::Copy), "ldst.vec", 10,
               "memory -> memory, elements spread over the scope's threads",
               [](const CallSite &s) -> std::string {
                 if (s.operands.size() < 2 || s.operands[0].isScalar || s.operands[1].isScalar)
                   return "needs two buffer operands";
                 for (const Operand &o : s.operands)
                   if (o.scope == MemScope::Reg || o.scope == MemScope::Tmem)
                     return "both operands must be in global or shared memory";
                 if (auto w = sameTile(s.operands[0], s.operands[1]); !w.empty())
                   return w;
                 if (s.operands[0].regionShape() != s.operands[1].regionShape())
                   return "the regions differ in shape";
                 return "";
               },
               [](const CallSite &s, DispatchState &st) -> Block {
                 const Operand &dst = s.operands[0], &src = s.operands[1];
                 Block b =
                     spreadLoop(dst.elements(), dst.regionShape(), s.scope, s.scopeThreads(), st,
                                [&](const std::vector<Expr> &c) {
                                  return Block{Store::make(elementAt(dst, c), elementAt(src, c))};
                                });
                 Block bar = scopeBarrier(s);
                 b.insert(b.end(), bar.begin(), bar.end());
                 return b;
               }});

  // ---- gemm
  t.push_back(
      {intrinsicName(IntrinsicId::Gemm), "wgmma", 100,
       "wgmma.mma_async m64nNk16, A and B from shared-memory descriptors",
       [](const CallSite &s) -> std::string {
         if (auto w = wgmmaIssueRefusal(s); !w.empty())
           return w;
         const Operand &c = s.operands[0], &a = s.operands[1], &b = s.operands[2];
         if (c.scope != MemScope::Reg || !presetIs(c, "wgmma_acc"))
           return "the accumulator is not a register tile in the wgmma_acc layout";
         if (c.dtype != Dtype::f32)
           return "only f32 accumulators are dispatched";
         if (a.scope != MemScope::Shared || b.scope != MemScope::Shared)
           return "A and B must be in shared memory";
         // The instruction for these dtypes: a row of the MMA table.
         const MmaShape *row = findMmaShape(s.target, MmaFamily::Wgmma, c.dtype, a.dtype, b.dtype);
         if (!row)
           return fmt::format("no wgmma computes {} += {} x {} (A and B both bf16, both f16, "
                              "or e4m3 / e5m2)",
                              dtypeName(c.dtype), dtypeName(a.dtype), dtypeName(b.dtype));
         if (s.flag("transpose_a"))
           return "A must be K-major (no transpose_a)";
         if (!s.flag("transpose_b"))
           return "B must be K-major: write gemm(C, A, B, transpose_b = true) with B as [N, K]";
         auto as = a.regionShape(), bs = b.regionShape(), cs = c.regionShape();
         if (as.size() != 2 || bs.size() != 2 || cs.size() != 2)
           return "operands must be rank-2 tiles";
         if (as[0] != 64 || cs[0] != 64 || bs[0] != cs[1] || as[1] != bs[1])
           return fmt::format("shapes [{}x{}] x [{}x{}]^T -> [{}x{}] do not fit m64nNk16", as[0],
                              as[1], bs[0], bs[1], cs[0], cs[1]);
         if (as[1] % row->k != 0)
           return fmt::format("K must be a multiple of {}", row->k);
         if (auto w = ruleRefusal("wgmma.smem", a, s.target); !w.empty())
           return w;
         return ruleRefusal("wgmma.smem", b, s.target);
       },
       [](const CallSite &s, DispatchState &st) -> Block {
         const Operand &c = s.operands[0], &a = s.operands[1], &b = s.operands[2];
         int64_t k = a.regionShape()[1], n = b.regionShape()[0];
         int64_t step = findMmaShape(s.target, MmaFamily::Wgmma, c.dtype, a.dtype, b.dtype)->k;
         std::string kk = st.fresh("kk");
         Expr k0 = mul(name(kk), lit(step));
         Block body = {call(IntrinsicId::WgmmaMmaAsync,
                            {pos(s.operands[0].expr), pos(regionAt(a, {lit(0), k0}, {64, step})),
                             pos(regionAt(b, {lit(0), k0}, {n, step})),
                             kw("transpose_b", BoolImm::make(true)),
                             kw("accumulate", stepAccumulates(s, name(kk)))})};
         return {call(IntrinsicId::WgmmaFence, {}),
                 For::make(kk, lit(0), lit(k / step), lit(1), -1, 0, std::move(body)),
                 call(IntrinsicId::WgmmaCommitGroup, {}),
                 call(IntrinsicId::WgmmaWaitGroup, {pos(lit(0))})};
       }});
  // A from registers: the 16-bit A fragment of wgmma m64nNk16 is, slice by
  // slice of 16 columns, the accumulator fragment of an m64n16 tile packed in
  // pairs, so a bf16 / f16 tile in the wgmma_acc layout (the softmax's P,
  // rounded in place from the f32 scores) feeds the instruction directly.
  // B is K-major ([N, K], transpose_b = true) or MN-major ([K, N], the
  // default: FlashAttention's V, keys x head dim); either way its 8-row core
  // matrices run along its first dimension and its bytes along the second,
  // which is what the wgmma.smem rule checks.
  t.push_back(
      {intrinsicName(IntrinsicId::Gemm), "wgmma.reg_a", 95,
       "wgmma.mma_async m64nNk16, A from registers (wgmma_acc fragment), B from shared memory",
       [](const CallSite &s) -> std::string {
         if (auto w = wgmmaIssueRefusal(s); !w.empty())
           return w;
         const Operand &c = s.operands[0], &a = s.operands[1], &b = s.operands[2];
         if (c.scope != MemScope::Reg || !presetIs(c, "wgmma_acc") || c.dtype != Dtype::f32)
           return "the accumulator is not an f32 register tile in the wgmma_acc layout";
         if (a.scope != MemScope::Reg || !presetIs(a, "wgmma_acc"))
           return "A is not a register tile in the wgmma_acc layout";
         if (b.scope != MemScope::Shared)
           return "B must be in shared memory";
         if (dtypeBits(a.dtype) != 16)
           return "A from registers is dispatched for 16-bit operands (bf16, f16)";
         if (!findMmaShape(s.target, MmaFamily::Wgmma, c.dtype, a.dtype, b.dtype))
           return fmt::format("no wgmma computes {} += {} x {}", dtypeName(c.dtype),
                              dtypeName(a.dtype), dtypeName(b.dtype));
         if (s.flag("transpose_a"))
           return "A from registers is M x K (no transpose_a)";
         for (const Operand *o : {&c, &a})
           for (size_t d = 0; d < o->kept.size(); ++d)
             if (!o->kept[d] || constantValue(o->begin[d]).value_or(-1) != 0 ||
                 o->extent[d] != constantValue(o->bufferShape[d]).value_or(-1))
               return fmt::format("register tile '{}' must be used whole", o->buffer);
         bool tb = s.flag("transpose_b");
         auto as = a.regionShape(), bs = b.regionShape(), cs = c.regionShape();
         if (as.size() != 2 || bs.size() != 2 || cs.size() != 2)
           return "operands must be rank-2 tiles";
         int64_t bk = tb ? bs[1] : bs[0], bn = tb ? bs[0] : bs[1];
         if (as[0] != 64 || cs[0] != 64 || bn != cs[1] || bk != as[1])
           return fmt::format("shapes [{}x{}] x [{}x{}]{} -> [{}x{}] do not fit m64nNk16", as[0],
                              as[1], bs[0], bs[1], tb ? "^T" : "", cs[0], cs[1]);
         if (as[1] % 16 != 0)
           return "K must be a multiple of 16";
         return ruleRefusal("wgmma.smem", b, s.target);
       },
       [](const CallSite &s, DispatchState &st) -> Block {
         const Operand &a = s.operands[1], &b = s.operands[2];
         bool tb = s.flag("transpose_b");
         int64_t k = a.regionShape()[1];
         int64_t n = tb ? b.regionShape()[0] : b.regionShape()[1];
         std::string kk = st.fresh("kk");
         Expr k0 = mul(name(kk), lit(16));
         Expr bSlice = tb ? regionAt(b, {lit(0), k0}, {n, 16}) : regionAt(b, {k0, lit(0)}, {16, n});
         Block body = {call(IntrinsicId::WgmmaMmaAsync,
                            {pos(s.operands[0].expr), pos(regionAt(a, {lit(0), k0}, {64, 16})),
                             pos(bSlice), kw("transpose_b", BoolImm::make(tb)),
                             kw("accumulate", stepAccumulates(s, name(kk)))})};
         return {call(IntrinsicId::WgmmaFence, {}),
                 For::make(kk, lit(0), lit(k / 16), lit(1), -1, 0, std::move(body)),
                 call(IntrinsicId::WgmmaCommitGroup, {}),
                 call(IntrinsicId::WgmmaWaitGroup, {pos(lit(0))})};
       }});
  t.push_back({intrinsicName(IntrinsicId::Gemm), intrinsicName(IntrinsicId::Tcgen05Mma), 100,
               "tcgen05.mma kind::f16, accumulator in tensor memory",
               [](const CallSite &s) -> std::string {
                 if (!targetInfo(s.target).hasTensorMemory)
                   return "tcgen05.mma needs sm_100a";
                 if (s.scope != ExecScope::Thread)
                   return "tcgen05.mma is issued by one thread (call gemm without a prefix)";
                 if (s.operands.size() != 3 || s.operands[0].scope != MemScope::Tmem)
                   return "the accumulator must be in tensor memory";
                 const Operand &a = s.operands[1], &b = s.operands[2];
                 if (a.scope != MemScope::Shared || b.scope != MemScope::Shared)
                   return "A and B must be in shared memory";
                 if (!s.flag("transpose_b"))
                   return "B must be K-major (transpose_b = true)";
                 auto as = a.regionShape();
                 if (as.size() != 2 || as[1] % 16 != 0)
                   return "A must be [M, K] with K a multiple of 16";
                 if (auto w = ruleRefusal("tcgen05.smem", a, s.target); !w.empty())
                   return w;
                 return ruleRefusal("tcgen05.smem", b, s.target);
               },
               [](const CallSite &s, DispatchState &st) -> Block {
                 const Operand &a = s.operands[1], &b = s.operands[2];
                 auto as = a.regionShape(), bs = b.regionShape();
                 std::string kk = st.fresh("kk");
                 Expr k0 = mul(name(kk), lit(16));
                 Block step = {
                     call(IntrinsicId::Tcgen05Mma,
                          {pos(s.operands[0].expr), pos(regionAt(a, {lit(0), k0}, {as[0], 16})),
                           pos(regionAt(b, {lit(0), k0}, {bs[0], 16})),
                           kw("accumulate", stepAccumulates(s, name(kk)))})};
                 return {For::make(kk, lit(0), lit(as[1] / 16), lit(1), -1, 0, std::move(step))};
               }});
  t.push_back({intrinsicName(IntrinsicId::Gemm), "mma.sync", 80,
               "mma.sync.m16n8k16 on register fragments (sm_80+)",
               [](const CallSite &s) -> std::string {
                 if (s.scope != ExecScope::Warp)
                   return "mma.sync is a warp instruction (warp.gemm)";
                 return "ir/Intrinsics.h has no `mma.sync` native intrinsic to expand to";
               },
               [](const CallSite &, DispatchState &) -> Block { return {}; }});
  t.push_back(
      {intrinsicName(IntrinsicId::Gemm), "fma", 0,
       "scalar fused multiply-add per owned accumulator element",
       [](const CallSite &s) -> std::string {
         if (s.operands.size() != 3)
           return "needs C, A and B";
         const Operand &c = s.operands[0], &a = s.operands[1], &b = s.operands[2];
         if (c.scope != MemScope::Reg)
           return "the accumulator must be a register tile";
         if (a.scope == MemScope::Tmem || b.scope == MemScope::Tmem || a.scope == MemScope::Reg ||
             b.scope == MemScope::Reg)
           return "A and B must be in shared or global memory";
         std::optional<OwnerMap> map;
         return ownerRefusal(c, &map);
       },
       [](const CallSite &s, DispatchState &st) -> Block {
         const Operand &c = s.operands[0], &a = s.operands[1], &b = s.operands[2];
         bool ta = s.flag("transpose_a"), tb = s.flag("transpose_b");
         int64_t k = ta ? a.regionShape()[0] : a.regionShape()[1];
         std::string kv = st.fresh("k");
         Block b0 = elementwiseOverOwner(s, st, c, [&](const std::vector<Expr> &ij) {
           Expr kx = name(kv);
           Expr av = elementAt(a, ta ? std::vector<Expr>{kx, ij[0]} : std::vector<Expr>{ij[0], kx});
           Expr bv = elementAt(b, tb ? std::vector<Expr>{ij[1], kx} : std::vector<Expr>{kx, ij[1]});
           Expr prod = Binary::make(BinaryOp::Mul, convert(av, a.dtype, c.dtype),
                                    convert(bv, b.dtype, c.dtype));
           Expr cv = elementAt(c, ij);
           Block inner = {Store::make(cv, Binary::make(BinaryOp::Add, cv, prod))};
           return For::make(kv, lit(0), lit(k), lit(1), 0, 0, std::move(inner));
         });
         return b0;
       }});

  // ---- fill, cast, elementwise
  t.push_back({intrinsicName(IntrinsicId::Fill), "reg.fill", 10,
               "each thread writes the elements it owns",
               [](const CallSite &s) -> std::string {
                 if (s.operands.empty() || s.operands[0].scope != MemScope::Reg)
                   return "the destination is not a register tile";
                 std::optional<OwnerMap> map;
                 return ownerRefusal(s.operands[0], &map);
               },
               [](const CallSite &s, DispatchState &st) -> Block {
                 const Operand &d = s.operands[0];
                 Expr v = convert(s.call->args[1].value, Dtype::f32, d.dtype);
                 if (isFloat(d.dtype) && d.dtype == Dtype::f32)
                   v = s.call->args[1].value;
                 return elementwiseOverOwner(s, st, d, [&](const std::vector<Expr> &c) {
                   return Store::make(elementAt(d, c), v);
                 });
               }});
  t.push_back({intrinsicName(IntrinsicId::Fill), "mem.fill", 5,
               "memory tile, elements spread over the scope's threads",
               [](const CallSite &s) -> std::string {
                 if (s.operands.empty() || (s.operands[0].scope != MemScope::Shared &&
                                            s.operands[0].scope != MemScope::Global))
                   return "the destination is not in shared or global memory";
                 return "";
               },
               [](const CallSite &s, DispatchState &st) -> Block {
                 const Operand &d = s.operands[0];
                 Block b =
                     spreadLoop(d.elements(), d.regionShape(), s.scope, s.scopeThreads(), st,
                                [&](const std::vector<Expr> &c) {
                                  return Block{Store::make(elementAt(d, c), s.call->args[1].value)};
                                });
                 Block bar = scopeBarrier(s);
                 b.insert(b.end(), bar.begin(), bar.end());
                 return b;
               }});
  auto sameLayoutRegs = [](const CallSite &s) -> std::string {
    const Operand &d = s.operands[0];
    if (d.scope != MemScope::Reg)
      return "the destination is not a register tile";
    std::optional<OwnerMap> map;
    if (auto w = ownerRefusal(d, &map); !w.empty())
      return w;
    Layout s1, s2;
    for (size_t i = 1; i < s.operands.size(); ++i) {
      const Operand &o = s.operands[i];
      if (o.isScalar)
        continue;
      if (o.scope != MemScope::Reg)
        return fmt::format("operand '{}' is not a register tile", o.buffer);
      if (!(layoutOf(o, s1) == layoutOf(d, s2)) || o.regionShape() != d.regionShape())
        return fmt::format("'{}' and '{}' differ in layout or shape", o.buffer, d.buffer);
    }
    return "";
  };
  t.push_back({intrinsicName(IntrinsicId::Cast), "reg.cast", 10,
               "per-element conversion, round to nearest even", sameLayoutRegs,
               [](const CallSite &s, DispatchState &st) -> Block {
                 const Operand &d = s.operands[0], &x = s.operands[1];
                 return elementwiseOverOwner(s, st, d, [&](const std::vector<Expr> &c) {
                   return Store::make(elementAt(d, c), convert(elementAt(x, c), x.dtype, d.dtype));
                 });
               }});
  t.push_back({"elementwise", "reg.elementwise", 10, "per-element arithmetic on owned elements",
               sameLayoutRegs, [](const CallSite &s, DispatchState &st) -> Block {
                 const Operand &d = s.operands[0];
                 std::string op(s.call->callee);
                 const IntrinsicId id = idOf(*s.call);
                 return elementwiseOverOwner(s, st, d, [&](const std::vector<Expr> &c) {
                   std::vector<Expr> v;
                   for (size_t i = 1; i < s.operands.size(); ++i)
                     v.push_back(s.operands[i].isScalar ? s.operands[i].expr
                                                        : elementAt(s.operands[i], c));
                   Expr r;
                   if (id == IntrinsicId::Add)
                     r = Binary::make(BinaryOp::Add, v[0], v[1]);
                   else if (id == IntrinsicId::Sub)
                     r = Binary::make(BinaryOp::Sub, v[0], v[1]);
                   else if (id == IntrinsicId::Mul)
                     r = Binary::make(BinaryOp::Mul, v[0], v[1]);
                   else if (id == IntrinsicId::Div)
                     r = Binary::make(BinaryOp::Div, v[0], v[1]);
                   else if (id == IntrinsicId::Neg)
                     r = Unary::make(UnaryOp::Neg, v[0]);
                   else
                     r = Call::make(op, v);
                   return Store::make(elementAt(d, c), r);
                 });
               }});

  // ---- sync
  t.push_back(
      {intrinsicName(IntrinsicId::Sync), "bar.sync", 10,
       "named barrier 0 (CTA) or 1 + wgid (warpgroup)",
       [](const CallSite &s) -> std::string {
         if (s.scope == ExecScope::Cta || s.scope == ExecScope::Warpgroup)
           return "";
         return fmt::format("no native barrier for {} scope in ir/Intrinsics.h",
                            execScopePrefix(s.scope));
       },
       [](const CallSite &s, DispatchState &) -> Block {
         Expr id = s.scope == ExecScope::Cta ? lit(0) : add(lit(1), builtin(BuiltinKind::wgid));
         return {call(IntrinsicId::BarrierSync, {pos(id), kw("threads", lit(s.scopeThreads()))})};
       }});
  // warp.sync has no native record of its own: the call stays the tile
  // primitive, which the emitter writes as __syncwarp() (bar.warp.sync with
  // every lane) and the checkers read as SyncKind::WarpSync.
  t.push_back({intrinsicName(IntrinsicId::Sync), "bar.warp.sync", 10,
               "bar.warp.sync over all 32 lanes (__syncwarp)",
               [](const CallSite &s) -> std::string {
                 if (s.scope == ExecScope::Warp)
                   return "";
                 return "bar.warp.sync synchronises the lanes of one warp";
               },
               [](const CallSite &s, DispatchState &) -> Block {
                 return {CallStmt::make(ExecScope::Warp, std::string(s.call->callee), {})};
               }});
  t.push_back({intrinsicName(IntrinsicId::Sync), "barrier.cluster", 10,
               "barrier.cluster.arrive (release) then barrier.cluster.wait (acquire)",
               [](const CallSite &s) -> std::string {
                 if (s.scope == ExecScope::Cluster)
                   return "";
                 return "barrier.cluster synchronises a whole cluster";
               },
               [](const CallSite &, DispatchState &) -> Block {
                 return {call(IntrinsicId::BarrierClusterArrive, {}),
                         call(IntrinsicId::BarrierClusterWait, {})};
               }});

  // ---- reductions to a value every thread of the scope holds
  t.push_back(
      {"reduce", "shuffle.smem", 10,
       "per-thread partial, butterfly shuffles in each warp, warp partials through shared memory",
       [](const CallSite &s) -> std::string {
         if (s.operands.size() != 2)
           return "needs dst and src";
         const Operand &d = s.operands[0], &x = s.operands[1];
         if (s.keyword("axis"))
           return "reductions along one axis are not dispatched yet (only over everything)";
         if (d.scope != MemScope::Reg || d.elements() != 1)
           return "the destination must be a one-element register tile";
         if (x.scope != MemScope::Reg)
           return "the source must be a register tile";
         if (s.scope == ExecScope::Thread || s.scope == ExecScope::Cluster)
           return "cross-thread reductions run at warp, warpgroup or CTA scope";
         std::optional<OwnerMap> map;
         if (auto w = ownerRefusal(x, &map); !w.empty())
           return w;
         Layout storage;
         const Layout &dl = layoutOf(d, storage);
         // Every thread of the scope must receive the result.
         if (dl.replicas() < s.scopeThreads())
           return fmt::format("the destination's layout has {} owner(s) but {} threads must hold "
                              "the result (replicate it, e.g. R[{}:1@tx])",
                              dl.replicas(), s.scopeThreads(), s.scopeThreads());
         return "";
       },
       [](const CallSite &s, DispatchState &st) -> Block {
         const Operand &d = s.operands[0], &x = s.operands[1];
         const IntrinsicId id = idOf(*s.call);
         auto combine = [&](Expr a, Expr b) -> Expr {
           if (id == IntrinsicId::ReduceSum)
             return Binary::make(BinaryOp::Add, a, b);
           return Call::make(id == IntrinsicId::ReduceMax ? "max" : "min", {a, b});
         };
         std::string part = st.fresh("red_part");
         st.hoisted.push_back(BufferDecl::make(MemScope::Reg, part, d.dtype, {lit(1)}, {}));
         Expr p = Index::make(name(part), {{Subscript::Point, lit(0), nullptr}});
         std::optional<OwnerMap> map;
         ownerRefusal(x, &map);
         // Each thread combines its elements in increasing register order
         // (the order reduce_sum's semantics define, docs/simulator.md): the
         // slot digits, most significant first, by decreasing register stride.
         std::stable_sort(map->slotDigits.begin(), map->slotDigits.end(),
                          [](const OwnerMap::Digit &a, const OwnerMap::Digit &b) {
                            return a.stride > b.stride;
                          });
         Block b;
         Block loop = ownerLoop(
             *map, st,
             [&](const std::vector<Expr> &c) {
               Expr v = convert(elementAt(x, c), x.dtype, d.dtype);
               return Block{Store::make(p, combine(p, v))};
             },
             s.scopeThreads(), s.scope);
         // Identity start value.
         Expr identity = id == IntrinsicId::ReduceSum   ? FloatImm::make(0.0)
                         : id == IntrinsicId::ReduceMax ? FloatImm::make(-3.4028234663852886e38)
                                                        : FloatImm::make(3.4028234663852886e38);
         b.push_back(Store::make(p, identity));
         b.insert(b.end(), loop.begin(), loop.end());
         for (int off = 16; off >= 1; off /= 2)
           b.push_back(Store::make(p, combine(p, Call::make("shfl_xor", {p, lit(off)}))));
         int64_t warps = s.scopeThreads() / 32;
         Expr total = p;
         if (warps > 1) {
           // One slot per warp of the scope; at warpgroup scope every
           // warpgroup of the CTA reduces at once, each in slots of its own.
           int64_t groups = s.scope == ExecScope::Warpgroup && s.kernel
                                ? std::max<int64_t>(1, s.kernel->launch.threads / 128)
                                : 1;
           Expr first = groups > 1 ? mul(builtin(BuiltinKind::wgid), lit(warps)) : lit(0);
           std::string smem = st.fresh("red_smem");
           st.hoisted.push_back(
               BufferDecl::make(MemScope::Shared, smem, d.dtype, {lit(warps * groups)}, {}));
           Expr w = s.scope == ExecScope::Warpgroup ? builtin(BuiltinKind::wid_in_wg)
                                                    : builtin(BuiltinKind::warpid);
           int64_t barrierId = s.scope == ExecScope::Warpgroup ? 1 : 0;
           Expr bid = s.scope == ExecScope::Warpgroup ? add(lit(1), builtin(BuiltinKind::wgid))
                                                      : lit(barrierId);
           auto sync = [&] {
             return call(IntrinsicId::BarrierSync,
                         {pos(bid), kw("threads", lit(s.scopeThreads()))});
           };
           auto slot = [&](Expr i) {
             Expr at = groups > 1 ? add(first, i) : i;
             return Index::make(name(smem), {{Subscript::Point, at, nullptr}});
           };
           b.push_back(If::make(Binary::make(BinaryOp::Eq, builtin(BuiltinKind::laneid), lit(0)),
                                {Store::make(slot(w), p)}, {}));
           b.push_back(sync());
           b.push_back(Store::make(p, slot(lit(0))));
           for (int64_t i = 1; i < warps; ++i)
             b.push_back(Store::make(p, combine(p, slot(lit(i)))));
           // The scratch is reused by the next reduction only after everyone read it.
           b.push_back(sync());
         }
         Expr dv = elementAt(d, std::vector<Expr>(d.regionShape().size(), lit(0)));
         Expr result = s.flag("accumulate") ? combine(dv, total) : total;
         b.push_back(Store::make(dv, result));
         return b;
       }});
  return t;
}

} // namespace

const std::vector<DispatchImpl> &dispatchTable() {
  static const std::vector<DispatchImpl> table = buildTable();
  return table;
}

} // namespace tilescope
