#include "codegen/CudaEmitter.h"
#include "codegen/KernelEmitter.h"
#include "codegen/RuntimeHeader.h"

#include "dispatch/Dispatch.h"
#include "ir/Descriptors.h"
#include "ir/Intrinsics.h"
#include "ir/Placement.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
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

namespace detail {

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
  int64_t spanBytes = swizzleSpan(bb);
  uint64_t mode = *fieldCodeByKey(DescriptorKind::WgmmaSmem, DescField::Swizzle, spanBytes);
  // Byte distances in B's unswizzled layout: 8 rows down, one atom across.
  auto [sbo, lbo] = mnMajorOffsets(bb, spanBytes);
  if (!mnMajor) {
    sbo = 8 * spanBytes;
    lbo = 16;
  }
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
  // table, and a scalar parameter `epoch` is the call's epoch (one more per
  // call: what the flag proofs assume, verifier/FlagEpochs.h); ts_dseq
  // counts its warp collectives, ts_bseq its device.barrier calls
  // (ts_devices.cuh).
  std::string implicitLocals;
  if (devices_) {
    for (const Param &p : k_.params)
      if (p.implicit)
        implicitLocals += fmt::format("  [[maybe_unused]] const int {} = ts_args.{};\n", p.name,
                                      p.name == "devid" ? "rank" : "ndev");
      else if (callEpoch(p)) // unsigned: its products wrap, as the proofs' differences do
        implicitLocals += "  [[maybe_unused]] const uint32_t epoch = ts_args.epoch;\n";
    line("[[maybe_unused]] uint32_t ts_dseq = 0, ts_bseq = 0;");
  }
  deviceSide_ = true;
  block(k_.body);
  deviceSide_ = false;
  std::string body = implicitLocals + out_.str();
  if (peerCopies_) // puts and gets: the call's device barriers, CTA blockIdx of every device
    body = "  ts_dev::blockBarrier(ts_args, 0);\n" + body + "  ts_dev::blockBarrier(ts_args, 1);\n";
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
    if (p.implicit || callEpoch(p))
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
    d << tcgen05Prelude();
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
  // ctas_per_sm(N) asks ptxas for N resident CTAs (the registers of N
  // CTAs within the SM's); setmaxnreg wants the count fixed at launch, so
  // a minimum of one CTA where the launch says nothing.
  int64_t minCtas = k_.launch.ctasPerSm > 1 ? k_.launch.ctasPerSm : usesSetmaxnreg ? 1 : 0;
  d << "extern \"C\" __global__ void __launch_bounds__(" << k_.launch.threads
    << (minCtas ? fmt::format(", {}", minCtas) : "") << ")" << clusterDims << " " << k_.name << "(" << sig
    << ") {\n"
    << "  extern __shared__ __align__(1024) uint8_t ts_smem_raw[];\n"
    // Aligned by pointer arithmetic on the shared array itself, so the
    // compiler keeps it in the shared address space (ld/st.shared, not
    // generic accesses as after a round trip through an integer).
    << "  uint8_t *ts_smem = ts_smem_raw + ((1024u - (ts_smem_addr(ts_smem_raw) & 1023u)) & 1023u);\n"
    << "  const int ts_tid = (int)threadIdx.x;\n"
    << (pdl_ ? "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
               "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
             : "")
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
    if (!p.isTensor && !p.implicit && !callEpoch(p))
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
    for (const Param &p : k_.params)
      if (p.placement)
        h << "// " << placementNote(k_, p) << "\n";
    h << "extern \"C\" int tilescope_launch_" << k_.name << "(ts_dev::Communicator *comm";
    for (const Param &p : k_.params)
      if (p.isTensor) {
        h << ", size_t " << p.name << "_off";
        info_.launcher.push_back({p.name, LauncherParam::Kind::Offset, "size_t"});
      }
    for (const std::string &sym : symbols_) {
      h << ", long long " << sym << "_arg";
      info_.launcher.push_back({sym, LauncherParam::Kind::Int, "long long"});
    }
    for (const Param &p : k_.params)
      if (!p.isTensor && !p.implicit && !callEpoch(p)) {
        h << ", " << cType(p.dtype) << " " << p.name;
        info_.launcher.push_back(
            {p.name, isFloat(p.dtype) ? LauncherParam::Kind::Real : LauncherParam::Kind::Int,
             cType(p.dtype)});
      }
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
    const BufferInfo &gb = bufs_.at(m.param);
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
    // L2 promotion: 256-byte fetches, except for rows whose pitch is 16 but
    // not 32 bytes aligned, where 128-byte fetches ran the GEMM family
    // 1.08-1.21x faster on an H100 (docs/perf.md, "L2 promotion").
    h << "};\n    CUresult r = ts_encode_tiled()(&tmap_" << n << ", " << tmaType(gb.dtype) << ", "
      << rank << ", " << m.param << ", dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, " << sw
      << ", strides[0] % 32 == 16 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : "
         "CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n"
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
  if (k_.launch.ctasPerSm > 1) // the driver's carveout must leave room for every resident CTA
    h << "  e = cudaFuncSetAttribute(" << k_.name
      << ", cudaFuncAttributePreferredSharedMemoryCarveout, 100);\n"
      << "  if (e != cudaSuccess) return " << (devices_ ? "1" : "(int)e") << ";\n";
  std::string args = devices_ ? "ts_dev::nextCall(*comm)" : "";
  for (const Param &p : k_.params)
    if (!p.implicit && !callEpoch(p))
      args += (args.empty() ? "" : ", ") + p.name;
  for (const std::string &s : symbols_)
    args += ", " + s;
  for (auto &[n, m] : tma_)
    args += ", tmap_" + n;
  if (pdl_) {
    h << "  cudaLaunchConfig_t ts_cfg = {};\n"
      << "  ts_cfg.gridDim = dim3(" << grid << ");\n"
      << "  ts_cfg.blockDim = dim3(" << k_.launch.threads << ");\n"
      << "  ts_cfg.dynamicSmemBytes = " << dynSmem << ";\n"
      << "  ts_cfg.stream = stream;\n"
      << "  cudaLaunchAttribute ts_attr[1];\n"
      << "  ts_attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
      << "  ts_attr[0].val.programmaticStreamSerializationAllowed = 1;\n"
      << "  ts_cfg.attrs = ts_attr;\n"
      << "  ts_cfg.numAttrs = 1;\n"
      << "  return (int)cudaLaunchKernelEx(&ts_cfg, " << k_.name << ", " << args << ");\n}\n\n";
    host = h.str();
    return true;
  }
  h << "  " << k_.name << "<<<dim3(" << grid << "), dim3(" << k_.launch.threads << "), "
    << dynSmem << ", stream>>>(" << args << ");\n"
    << (devices_ ? "  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n}\n\n"
                 : "  return (int)cudaGetLastError();\n}\n\n");
  host = h.str();
  return true;
}

} // namespace detail

namespace {

// `lower --evict-first`'s accesses: a 4-, 8- or 16-byte global load (.nc:
// the tensor is read through the non-coherent path as the plain lowering's
// const __restrict__ loads are) or store with an L2 evict_first policy.
constexpr const char *kEvictFirstHelpers = R"(// lower --evict-first: L2 evict_first policy on these global accesses.
__device__ __forceinline__ uint64_t ts_evict_first_policy() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
template <class V> __device__ __forceinline__ V ts_ld_ef(const V *p) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16, "4, 8 or 16 bytes");
  uint32_t r[4];
  const uint64_t pol = ts_evict_first_policy();
  if constexpr (sizeof(V) == 16)
    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(p), "l"(pol));
  else if constexpr (sizeof(V) == 8)
    asm volatile("ld.global.nc.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
                 : "=r"(r[0]), "=r"(r[1]) : "l"(p), "l"(pol));
  else
    asm volatile("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r[0]) : "l"(p), "l"(pol));
  V v;
  memcpy(&v, r, sizeof(V));
  return v;
}
template <class V> __device__ __forceinline__ void ts_st_ef(V *p, V v) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16, "4, 8 or 16 bytes");
  uint32_t r[4];
  memcpy(r, &v, sizeof(V));
  const uint64_t pol = ts_evict_first_policy();
  if constexpr (sizeof(V) == 16)
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
                 :: "l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "l"(pol) : "memory");
  else if constexpr (sizeof(V) == 8)
    asm volatile("st.global.L2::cache_hint.v2.u32 [%0], {%1, %2}, %3;"
                 :: "l"(p), "r"(r[0]), "r"(r[1]), "l"(pol) : "memory");
  else
    asm volatile("st.global.L2::cache_hint.u32 [%0], %1, %2;" :: "l"(p), "r"(r[0]), "l"(pol)
                 : "memory");
}

)";

// The error for a name of `evictFirst` that is no global tensor parameter of
// `k` (every target has L2::cache_hint: sm_80 and later); empty when all are.
std::string evictFirstRefusal(const Kernel &k, const std::vector<std::string> &evictFirst) {
  for (const std::string &n : evictFirst) {
    auto p = std::find_if(k.params.begin(), k.params.end(),
                          [&](const Param &q) { return q.name == n && q.isTensor; });
    if (p == k.params.end())
      return fmt::format("lower: --evict-first: '{}' is no global tensor parameter of kernel '{}'",
                         n, k.name);
  }
  return "";
}

} // namespace

std::optional<LoweredModule> lowerModule(const Module &module, Diagnostics &diag,
                                         const std::string &kernelName, bool pdl,
                                         const std::vector<std::string> &evictFirst) {
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
    if (pdl && (!k.launch.devices.empty() || k.launch.target < TargetKind::sm_90a)) {
      diag.error(k.loc, "lower: --pdl needs sm_90a or later and a kernel without devices(N)");
      return std::nullopt;
    }
    if (std::string w = evictFirstRefusal(k, evictFirst); !w.empty()) {
      diag.error(k.loc, w);
      return std::nullopt;
    }
    detail::KernelEmitter e(d->kernel, diag, info, tcgenHelpers, pdl,
                            std::set<std::string>(evictFirst.begin(), evictFirst.end()));
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
  // The preludes are codegen/prelude/*.cuh, embedded at build time.
  out.source = std::string("// Generated by `tilescope lower`. Do not edit: change the .tile "
                           "source.\n") +
               devicePrelude() + (devices ? "#include \"ts_devices.cuh\"\n\n" : "") +
               (evictFirst.empty() ? "" : kEvictFirstHelpers) + device +
               hostPrelude() + host;
  return out;
}

} // namespace tilescope::codegen
