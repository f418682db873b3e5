// Lowering: the CUDA text a kernel becomes (inline PTX for TMA, mbarrier,
// wgmma, setmaxnreg, elect; tensor maps in the launcher; vectorised accesses;
// compile-time register slots). Compiling with nvcc is the lower_nvcc_* tests.
#include "codegen/CudaEmitter.h"
#include "codegen/Toolchain.h"
#include "ir/Parser.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {
llvm::SourceMgr &sources() {
  static llvm::SourceMgr sm;
  return sm;
}
std::string lowerFile(const std::string &name) {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/kernels/" + name);
  std::stringstream s;
  s << in.rdbuf();
  Diagnostics diag(sources(), false);
  Module m = parseModuleText(s.str(), name, diag);
  REQUIRE(!diag.hasErrors());
  auto l = codegen::lowerModule(m, diag);
  for (const auto &d : diag.all())
    MESSAGE(d.line << ":" << d.column << " " << d.message);
  REQUIRE(l);
  return l->source;
}
bool has(const std::string &text, const std::string &what) {
  return text.find(what) != std::string::npos;
}
} // namespace

TEST_CASE("the Hopper GEMM lowers to TMA, mbarrier waits, wgmma and setmaxnreg") {
  std::string cu = lowerFile("gemm_bf16_sm90.tile");
  CHECK(has(cu, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"));
  CHECK(has(cu, "ts_tma_load_2d(("));
  CHECK(has(cu, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
  CHECK(has(cu, "ts_wgmma_m64n256k16_bf16(acc, ts_wgmma_desc("));
  CHECK(has(cu, "setmaxnreg.dec.sync.aligned.u32 40"));
  CHECK(has(cu, "setmaxnreg.inc.sync.aligned.u32 232"));
  CHECK(has(cu, "__launch_bounds__(384, 1)"));
  CHECK(has(cu, "ts_elect_sync()"));
  // Host: one tensor map per TMA-read tensor, 128B swizzle, box 64 x 128.
  CHECK(has(cu, "CUtensorMap tmap_A;"));
  CHECK(has(cu, "CUtensorMap tmap_B;"));
  CHECK(has(cu, "CU_TENSOR_MAP_SWIZZLE_128B"));
  CHECK(has(cu, "cuuint32_t box[2] = {64, 128};"));
  CHECK(has(cu, "cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\""));
  CHECK(has(cu, "cudaFuncAttributeMaxDynamicSharedMemorySize"));
  // The accumulator is a 128-float register array (64x256 over a
  // warpgroup) indexed by constants.
  CHECK(has(cu, "float acc[128];"));
  CHECK(has(cu, "acc[127] = 0.0f;"));
  // The bf16 epilogue stages column pairs as 4-byte vectors in the swizzled
  // shared tile (the swizzle keeps 8-element runs together) and TMA-stores it.
  CHECK(has(cu, "*reinterpret_cast<ts_vec<__nv_bfloat16, 2> *>(&Cs[ts_swizzle<3, 3, 3>("));
  CHECK(has(cu, "ts_tma_store_2d(&tmap_C, "));
  CHECK(has(cu, "cp.async.bulk.wait_group.read 0"));
  CHECK(has(cu, "prefetch.tensormap"));
  // The tile loop re-reads the thread index (no hoisted per-thread addresses).
  CHECK(has(cu, "const int ts_tid = ts_read_tid();"));
}

TEST_CASE("RMSNorm lowers to 16-byte vector loads and stores and a shuffle reduction") {
  std::string cu = lowerFile("rmsnorm.tile");
  CHECK(has(cu, "ts_vec<__nv_bfloat16, 8> v = *reinterpret_cast<const ts_vec<__nv_bfloat16, 8> *>(&X["));
  CHECK(has(cu, "*reinterpret_cast<ts_vec<__nv_bfloat16, 8> *>(&Y["));
  CHECK(has(cu, "__shfl_xor_sync(0xffffffffu, red_part"));
  CHECK(has(cu, "bar.sync"));
  CHECK(!has(cu, "run-time slot"));
}

TEST_CASE("slow-path findings are read from ptxas output") {
  auto f = codegen::slowPathFindings(
      "ptxas info    : Used 168 registers, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas warning : Potential Performance Loss: wgmma.mma_async instructions are serialized "
      "due to ...\n"
      "ptxas info    : 24 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 4340 by compiler to "
      "allow use of registers in GMMA in function 'k'\n");
  REQUIRE(f.size() == 3);
  CHECK(f[0].kind == "wgmma-serialized");
  CHECK(f[1].kind == "spill");
  CHECK(f[2].kind == "wgmma-fence-injected");
}
