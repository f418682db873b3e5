// Dispatch: which implementation each library kernel's primitives get, what
// the refusals say, forced dispatch, the owner map of register layouts, and
// that dispatched kernels are well-formed IR again (print, re-parse, check).
#include "dispatch/Dispatch.h"
#include "dispatch/DispatchSupport.h"
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/LayoutPresets.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {
llvm::SourceMgr &sources() {
  static llvm::SourceMgr sm; // buffers must outlive the nodes' locations
  return sm;
}

std::string readKernelFile(const std::string &name) {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/kernels/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Module parse(const std::string &text, Diagnostics &diag) {
  return parseModuleText(text, "t.tile", diag);
}

std::vector<std::string> choices(const DispatchResult &r) {
  std::vector<std::string> out;
  for (const auto &d : r.decisions)
    out.push_back(d.primitive + "->" + d.chosen);
  return out;
}

const char *kSmallCopy = R"(
kernel k(X: global bf16[R, H], Y: global bf16[R, H])
  where H % 256 == 0
  launch grid(R) threads(128) target(sm_90a)
{
  reg x: bf16[256] layout(S[(128, 2):(1@tx, 1)])
  cta.copy(x, X[blockIdx.x, 0 : +256]DISPATCH)
  cta.copy(Y[blockIdx.x, 0 : +256], x)
}
)";

std::string withDispatch(const std::string &d) {
  std::string t = kSmallCopy;
  t.replace(t.find("DISPATCH"), 8, d);
  return t;
}
} // namespace

TEST_CASE("the Hopper GEMM dispatches to TMA, wgmma and owner loops") {
  Diagnostics diag(sources(), false);
  Module m = parse(readKernelFile("gemm_bf16_sm90.tile"), diag);
  REQUIRE(!diag.hasErrors());
  auto r = dispatchKernel(m.kernels[0], diag);
  REQUIRE(r);
  CHECK(choices(*r) == std::vector<std::string>{"copy_async->tma", "copy_async->tma",
                                                "fill->reg.fill", "gemm->wgmma", "cast->reg.cast",
                                                "copy->st.shared"});
  std::string text = print(r->kernel);
  CHECK(text.find("tma.load(As[s], A[m0 : +128, k * 64 : +64], mbar = full[s])") !=
        std::string::npos);
  CHECK(text.find("wgmma.mma_async(acc,") != std::string::npos);
  CHECK(text.find("wgmma.wait_group(0)") != std::string::npos);
  // wgmma refused nothing; the GEMM's other candidates are listed as not tried.
  const DispatchDecision &g = r->decisions[3];
  CHECK(g.refused.empty());
}

TEST_CASE("dispatched library kernels are well-formed IR: print, re-parse, check") {
  for (const auto &f : bundledKernelFiles()) {
    CAPTURE(f.name);
    Diagnostics diag(sources(), false);
    Module m = parse(std::string(f.text), diag);
    REQUIRE(!diag.hasErrors());
    Module out;
    for (const Kernel &family : m.kernels) {
      // A kernel with parameters is dispatched at each of its named points.
      std::vector<Kernel> instances;
      if (family.space.empty())
        instances.push_back(family);
      for (const NamedPoint &p : family.space.points) {
        Instance inst = instantiate(family, p.values);
        REQUIRE_MESSAGE(inst.kernel, inst.reason);
        inst.kernel->name = family.name + "_" + p.name; // one module, distinct names
        instances.push_back(*inst.kernel);
      }
      for (const Kernel &k : instances) {
        auto r = dispatchKernel(k, diag);
        REQUIRE(r);
        out.kernels.push_back(r->kernel);
      }
    }
    std::string text = print(out);
    Diagnostics diag2(sources(), false);
    Module again = parseModuleText(text, "dispatched.tile", diag2);
    REQUIRE(!diag2.hasErrors());
    CHECK(equal(again, out));
    unsigned errors = checkModule(again, diag2);
    for (const auto &d : diag2.all())
      MESSAGE(d.line << ":" << d.column << " " << d.message);
    CHECK(errors == 0);
  }
}

TEST_CASE("RMSNorm: vectorised loads, owner-loop arithmetic, shuffle reduction") {
  Diagnostics diag(sources(), false);
  Module m = parse(readKernelFile("rmsnorm.tile"), diag);
  REQUIRE(!diag.hasErrors());
  auto r = dispatchKernel(m.kernels[0], diag);
  REQUIRE(r);
  auto c = choices(*r);
  CHECK(c[0] == "fill->reg.fill");
  CHECK(c[1] == "copy->ld.global.vec");
  CHECK(c[4] == "add->reg.elementwise");
  CHECK(c[5] == "reduce_sum->shuffle.smem");
  std::string text = print(r->kernel);
  CHECK(text.find("shfl_xor(red_part") != std::string::npos);
  CHECK(text.find("shared red_smem") != std::string::npos);
}

TEST_CASE("no implementation accepts: every candidate is listed with its reason") {
  Diagnostics diag(sources(), false);
  Module m = parse(R"(
kernel k(A: global bf16[M, K], B: global bf16[N, K])
  launch grid(1) threads(128) target(sm_80)
{
  reg As: bf16[64, 64]
  reg acc: f32[64, 128] layout(wgmma_acc(64, 128))
  reg Bs: bf16[128, 64]
  wg.gemm(acc, As, Bs, transpose_b = true)
}
)",
                   diag);
  REQUIRE(!diag.hasErrors());
  auto r = dispatchKernel(m.kernels[0], diag);
  CHECK(!r);
  // One error and a note per candidate, in priority order.
  REQUIRE(diag.all().size() == 6);
  CHECK(diag.all()[0].message ==
        "dispatch: no implementation of 'wg.gemm' accepts this call on sm_80");
  CHECK(diag.all()[1].message == "wgmma: wgmma needs sm_90a");
  CHECK(diag.all()[2].message == "tcgen05.mma: tcgen05.mma needs sm_100a");
  CHECK(diag.all()[3].message == "wgmma.reg_a: wgmma needs sm_90a");
  CHECK(diag.all()[4].message == "mma.sync: mma.sync is a warp instruction (warp.gemm)");
  CHECK(diag.all()[5].message == "fma: A and B must be in shared or global memory");
}

TEST_CASE("dispatch = forces an implementation, and says when it refuses or is unknown") {
  {
    Diagnostics diag(sources(), false);
    Module m = parse(withDispatch(""), diag);
    REQUIRE(!diag.hasErrors());
    auto r = dispatchKernel(m.kernels[0], diag);
    REQUIRE(r);
    CHECK(r->decisions[0].chosen == "ld.global.vec");
  }
  {
    Diagnostics diag(sources(), false);
    Module m = parse(withDispatch(", dispatch = \"ldst.vec\""), diag);
    auto r = dispatchKernel(m.kernels[0], diag);
    CHECK(!r);
    REQUIRE(diag.all().size() >= 2);
    CHECK(diag.all()[0].message ==
          "dispatch: no implementation of 'cta.copy' accepts this call on sm_90a");
    bool sawForced = false;
    for (const auto &d : diag.all())
      sawForced |= d.message == "ldst.vec: both operands must be in global or shared memory";
    CHECK(sawForced);
  }
  {
    Diagnostics diag(sources(), false);
    Module m = parse(withDispatch(", dispatch = \"teleport\""), diag);
    auto r = dispatchKernel(m.kernels[0], diag);
    CHECK(!r);
    REQUIRE(!diag.all().empty());
    CHECK(diag.all()[0].message.find("has no implementation named \"teleport\"") !=
          std::string::npos);
  }
}

TEST_CASE("owner map of the wgmma accumulator: slot digits on m, thread digits on lanes") {
  const LayoutPreset *p = findLayoutPreset("wgmma_acc");
  REQUIRE(p);
  auto l = p->build({64, 128}, nullptr);
  REQUIRE(l);
  std::string why;
  auto map = dispatch::ownerMap(*l, {64, 128}, &why);
  REQUIRE(map);
  CHECK(map->slots == 64);
  CHECK(map->threadDigits.size() == 3);
  CHECK(map->slotDigits.size() == 3);
  // Element (row 9, col 17): lane 4*1 + 0 ... checked against the layout itself.
  for (int64_t flat : {0, 1, 137, 8191}) {
    PhysCoord c = l->base(flat);
    int64_t back = 0;
    for (const auto &d : map->threadDigits)
      back += (c.get(d.axis) / d.stride) % d.extent * d.radix;
    for (const auto &d : map->slotDigits)
      back += (c.get(Axis::m) / d.stride) % d.extent * d.radix;
    CHECK(back == flat);
  }
}

TEST_CASE("owner map refuses layouts whose digits overlap on an axis") {
  std::string err;
  auto l = Layout::make({{4, 1, Axis::laneid}, {4, 2, Axis::laneid}}, {}, {}, std::nullopt, &err);
  REQUIRE(l);
  std::string why;
  CHECK(!dispatch::ownerMap(*l, {16}, &why));
  CHECK(why == "iters on 'laneid' overlap, so a digit cannot be read back from the axis");
}

TEST_CASE("wgmma with A from registers: the attention kernels' P V, and its refusals") {
  Diagnostics diag(sources(), false);
  Module m = parse(readKernelFile("attention_fwd_sm90.tile"), diag);
  REQUIRE(!diag.hasErrors());
  REQUIRE(m.kernels.size() == 4);
  auto r = dispatchKernel(m.kernels[0], diag);
  REQUIRE(r);
  auto c = choices(*r);
  CHECK(std::count(c.begin(), c.end(), "gemm->wgmma") == 1);
  CHECK(std::count(c.begin(), c.end(), "gemm->wgmma.reg_a") == 1);
  std::string text = print(r->kernel);
  // S = Q K^T overwrites on its first K step; O += P V reads V MN-major.
  CHECK(text.find("transpose_b = true, accumulate = kk") != std::string::npos);
  CHECK(text.find("P[0 : +64, kk") != std::string::npos);
  CHECK(text.find("transpose_b = false, accumulate = true") != std::string::npos);

  // A register A in another layout, or an f32 one, is refused with the reason.
  // A pair, not a structured binding: clang 14 cannot capture a binding in
  // doctest's CHECK_MESSAGE lambda (the `asan` preset builds with clang).
  for (auto declWhy :
       {std::pair<const char *, const char *>{
            "reg P: bf16[64, 64]", "wgmma.reg_a: A is not a register tile in the wgmma_acc layout"},
        {"reg P: f32[64, 64] layout(wgmma_acc(64, 64))",
         "wgmma.reg_a: A from registers is dispatched for 16-bit operands (bf16, f16)"}}) {
    const char *decl = declWhy.first, *why = declWhy.second;
    std::string text = std::string(R"(
kernel k(X: global bf16[N])
  launch grid(1) threads(128) target(sm_90a)
{
  shared Vs: bf16[64, 64] layout(swizzle(128B, bf16, S[(64, 64):(64, 1)]))
  reg acc: f32[64, 64] layout(wgmma_acc(64, 64))
  )") + decl + R"(
  wg.fill(acc, 0.0)
  wg.gemm(acc, P, Vs)
}
)";
    Diagnostics d2(sources(), false);
    Module bad = parse(text, d2);
    REQUIRE(!d2.hasErrors());
    CHECK(!dispatchKernel(bad.kernels[0], d2));
    bool found = false;
    for (const auto &d : d2.all())
      found |= d.message == why;
    CHECK_MESSAGE(found, why);
  }
}
