// Instruction legality from the one table of instruction constraints, and the
// bank-conflict analysis of shared-memory access patterns: exact findings.
#include "TestLayouts.h"
#include "verifier/BankConflicts.h"

using namespace tilescope;
using namespace tilescope::test;

namespace {
const TargetInfo &sm80 = targetInfo(TargetKind::sm_80);
const TargetInfo &sm90 = targetInfo(TargetKind::sm_90a);
const TargetInfo &sm100 = targetInfo(TargetKind::sm_100a);

BufferInfo shared(Dtype d) {
  BufferInfo b;
  b.scope = MemScope::Shared;
  b.dtype = d;
  return b;
}
std::vector<std::string> check(std::string_view inst, const Layout &l,
                               const std::vector<int64_t> &shape, const BufferInfo &b,
                               const TargetInfo &t, InstructionUse use = {}) {
  const InstructionRule *rule = findInstructionRule(inst);
  REQUIRE(rule != nullptr);
  std::vector<std::string> out;
  for (const auto &v : checkInstruction(*rule, l, shape, b, t, use)) {
    CHECK(v.kind == ViolationKind::Instruction);
    out.push_back(v.message);
  }
  return out;
}
using Msgs = std::vector<std::string>;
std::optional<Swizzle> mode(int bytes, Dtype d) {
  return Swizzle::fromMode(bytes, d, nullptr);
}
} // namespace

TEST_CASE("every instruction in the table has a unique name and a summary") {
  for (const auto &r : instructionRules()) {
    CHECK(findInstructionRule(r.name) == &r);
    CHECK(!r.summary.empty());
  }
  CHECK(findInstructionRule("ldmatrix.x3") == nullptr);
}

TEST_CASE("tma: the Hopper GEMM's 4-stage 128B-swizzled ring is a legal box") {
  Layout l = make({{4, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {},
                  mode(128, Dtype::bf16));
  CHECK(check("tma", l, {4, 128, 64}, shared(Dtype::bf16), sm90).empty());
  CHECK(check("tma", l, {4, 128, 64}, shared(Dtype::bf16), sm80) ==
        Msgs{"tma: tma does not exist on sm_80"});
}

TEST_CASE("tma: box extents, inner bytes, global strides and swizzle span") {
  Layout wide = make({{2, 512, Axis::m}, {512, 1, Axis::m}});
  CHECK(check("tma", wide, {2, 512}, shared(Dtype::bf16), sm90) ==
        Msgs{"tma: box extent 512 of dimension 1 exceeds 256"});
  Layout narrow = make({{8, 4, Axis::m}, {4, 1, Axis::m}});
  CHECK(check("tma", narrow, {8, 4}, shared(Dtype::bf16), sm90) ==
        Msgs{"tma: the inner box dimension is 8 bytes, not a multiple of 16"});
  Layout l = make({{8, 64, Axis::m}, {64, 1, Axis::m}});
  InstructionUse use;
  use.globalStridesBytes = {200};
  CHECK(check("tma", l, {8, 64}, shared(Dtype::bf16), sm90, use) ==
        Msgs{"tma: global stride 0 of 200 bytes is not a multiple of 16"});
  Layout span = make({{8, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, mode(64, Dtype::bf16));
  CHECK(check("tma", span, {8, 64}, shared(Dtype::bf16), sm90) ==
        Msgs{"tma: the inner box dimension is 128 bytes, wider than the 64B swizzle span"});
}

TEST_CASE("tma: padded rows are not what a box copy writes") {
  Layout padded = make({{8, 72, Axis::m}, {64, 1, Axis::m}});
  auto v =
      checkInstruction(*findInstructionRule("tma"), padded, {8, 64}, shared(Dtype::bf16), sm90);
  REQUIRE(v.size() == 1);
  CHECK(v[0].message == "tma: TMA writes the box dense and row-major, but (1, 0) is at m 72 "
                        "before the swizzle, not 64");
  CHECK(v[0].witness.logical == std::vector<std::vector<int64_t>>{{1, 0}});
  CHECK(v[0].witness.physical.get(Axis::m) == 72);
}

TEST_CASE("tma: a swizzled box must start on the pattern's 1024-byte repeat") {
  Layout l =
      make({{8, 64, Axis::m}, {64, 1, Axis::m}}, {}, {{Axis::m, 64}}, mode(128, Dtype::bf16));
  CHECK(check("tma", l, {8, 64}, shared(Dtype::bf16), sm90) ==
        Msgs{"tma: the box at (0, 0) starts at byte 128, not aligned to 1024 bytes"});
}

TEST_CASE("tma: with stage dimensions each stage is its own box") {
  // Stages 8192 elements apart but only 8 x 64 = 512 elements used each: as
  // one box it is not dense, as 4 boxes of [8, 64] it is.
  Layout l = make({{4, 8192, Axis::m}, {8, 64, Axis::m}, {64, 1, Axis::m}}, {}, {},
                  mode(128, Dtype::bf16));
  BufferInfo b = shared(Dtype::bf16);
  b.memoryElements = 4 * 8192;
  CHECK(check("tma", l, {4, 8, 64}, b, sm90) ==
        Msgs{"tma: TMA writes the box dense and row-major, but (1, 0, 0) is at m 8192 before "
             "the swizzle, not 512"});
  InstructionUse stages;
  stages.batchDims = 1;
  CHECK(check("tma", l, {4, 8, 64}, b, sm90, stages).empty());
  // A stage that starts off the 1024-byte repeat.
  Layout odd = make({{4, 8256, Axis::m}, {8, 64, Axis::m}, {64, 1, Axis::m}}, {}, {},
                    mode(128, Dtype::bf16));
  b.memoryElements = 4 * 8256;
  CHECK(check("tma", odd, {4, 8, 64}, b, sm90, stages) ==
        Msgs{"tma: the box at (1, 0, 0) starts at byte 16512, not aligned to 1024 bytes"});
}

TEST_CASE("ldmatrix: 16-byte rows, 16-byte aligned, 16-bit elements") {
  Layout dense = make({{16, 16, Axis::m}, {16, 1, Axis::m}});
  CHECK(check("ldmatrix.x4", dense, {16, 16}, shared(Dtype::bf16), sm80).empty());
  Layout padded = make({{16, 20, Axis::m}, {16, 1, Axis::m}});
  CHECK(check("ldmatrix.x4", padded, {16, 16}, shared(Dtype::bf16), sm80) ==
        Msgs{"ldmatrix.x4: the row starting at (1, 0) is at byte 40, not 16-byte aligned"});
  Layout colMajor = make({{16, 1, Axis::m}, {16, 16, Axis::m}});
  CHECK(check("ldmatrix.x4", colMajor, {16, 16}, shared(Dtype::bf16), sm80) ==
        Msgs{"ldmatrix.x4: a matrix row is 16 contiguous bytes, but (0, 1) is at byte 32, not 2"});
  CHECK(check("ldmatrix.x4", dense, {16, 16}, shared(Dtype::f32), sm80) ==
        Msgs{"ldmatrix.x4: elements are 16 bits wide, not 32 (f32)"});
  CHECK(check("stmatrix.x4", dense, {16, 16}, shared(Dtype::bf16), sm80) ==
        Msgs{"stmatrix.x4: stmatrix.x4 does not exist on sm_80"});
}

TEST_CASE("wgmma descriptors: 128B-swizzled K-major tiles and core-matrix tiles") {
  Layout ring = make({{4, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {},
                     mode(128, Dtype::bf16));
  CHECK(check("wgmma.smem", ring, {4, 128, 64}, shared(Dtype::bf16), sm90).empty());
  // Without swizzle: 8x16-byte core matrices, SBO 256 bytes, LBO 128 bytes.
  Layout cores = make({{8, 128, Axis::m}, {8, 8, Axis::m}, {2, 64, Axis::m}, {8, 1, Axis::m}});
  CHECK(check("wgmma.smem", cores, {64, 16}, shared(Dtype::bf16), sm90).empty());
  Layout rowMajor = make({{64, 16, Axis::m}, {16, 1, Axis::m}});
  CHECK(check("wgmma.smem", rowMajor, {64, 16}, shared(Dtype::bf16), sm90) ==
        Msgs{"wgmma.smem: a K-major descriptor with 16-byte atoms reads (1, 0) at byte 16 "
             "(before the swizzle), but the layout puts it at byte 32"});
  CHECK(check("tcgen05.smem", ring, {4, 128, 64}, shared(Dtype::bf16), sm90) ==
        Msgs{"tcgen05.smem: tcgen05.smem does not exist on sm_90a"});
}

TEST_CASE("wgmma descriptors: MN-major operands read the other way") {
  // [K=16, N=64] stored N-contiguous: element (n, k) at k*64 + n of a [64, 16] view.
  Layout nMajor = make({{64, 1, Axis::m}, {16, 64, Axis::m}}, {}, {}, mode(128, Dtype::bf16));
  InstructionUse use;
  use.mnMajor = true;
  CHECK(check("wgmma.smem", nMajor, {64, 16}, shared(Dtype::bf16), sm90, use).empty());
  CHECK(!check("wgmma.smem", nMajor, {64, 16}, shared(Dtype::bf16), sm90).empty());
}

TEST_CASE("tcgen05.ld: rows on consecutive lanes of the warp's quarter") {
  BufferInfo t;
  t.scope = MemScope::Tmem;
  t.dtype = Dtype::f32;
  Layout l = make({{128, 1, Axis::TLane}, {32, 1, Axis::TCol}});
  CHECK(check("tcgen05.ld.32x32b", l, {128, 32}, t, sm100).empty());
  CHECK(check("tcgen05.ld.16x256b", l, {128, 32}, t, sm100).empty());
  Layout shifted = make({{128, 1, Axis::TLane}, {32, 1, Axis::TCol}}, {}, {{Axis::TLane, 8}});
  CHECK(check("tcgen05.ld.32x32b", shifted, {128, 32}, t, sm100) ==
        Msgs{"tcgen05.ld.32x32b: the tile starts at TMEM lane 8, not a multiple of 32"});
  Layout swapped = make({{32, 1, Axis::TCol}, {128, 1, Axis::TLane}});
  CHECK(check("tcgen05.ld.32x32b", swapped, {32, 128}, t, sm100) ==
        Msgs{"tcgen05.ld.32x32b: row i of the tile is TMEM lane 0 + i with consecutive columns, "
             "so (0, 1) belongs at {TLane: 0, TCol: 1}, not {TLane: 1, TCol: 0}"});
  Layout narrow = make({{128, 1, Axis::TLane}, {3, 1, Axis::TCol}});
  CHECK(check("tcgen05.ld.16x64b", narrow, {128, 3}, t, sm100) ==
        Msgs{"tcgen05.ld.16x64b: a row of 3 x 32 bits is not a whole number of 64-bit "
             "repetitions"});
  CHECK(check("tcgen05.ld.32x32b", l, {128, 32}, t, sm90) ==
        Msgs{"tcgen05.ld.32x32b: tcgen05.ld.32x32b does not exist on sm_90a"});
}

TEST_CASE("banks: ldmatrix.x4 on a 16x16 row-major tile has a 2-way conflict") {
  Layout l = make({{16, 16, Axis::m}, {16, 1, Axis::m}});
  BankReport r =
      analyzeBankConflicts(*findInstructionRule("ldmatrix.x4"), l, {16, 16}, shared(Dtype::bf16));
  CHECK(r.error.empty());
  CHECK(r.requests == 1);
  CHECK(r.wavefrontsPerRequest == 8);
  CHECK(r.idealWavefronts == 4);
  CHECK(r.degree() == 2);
  CHECK(describe(r) == "ldmatrix.x4: 1 requests, 8 wavefronts per request (ideal 4); 2-way bank "
                       "conflict in request 0, bank 0: thread 0 reads (0, 0) at byte 0, thread 4 "
                       "reads (4, 0) at byte 128");
  auto v = bankViolation(r);
  REQUIRE(v.has_value());
  CHECK(v->kind == ViolationKind::Banks);
}

TEST_CASE("banks: the 128B swizzle makes ldmatrix.x4 conflict-free") {
  Layout l = make({{64, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, mode(128, Dtype::bf16));
  BankReport r =
      analyzeBankConflicts(*findInstructionRule("ldmatrix.x4"), l, {64, 64}, shared(Dtype::bf16));
  CHECK(r.requests == 16);
  CHECK(r.wavefrontsPerRequest == 4);
  CHECK(r.conflictFree());
  CHECK(!bankViolation(r));
  Layout plain = make({{64, 64, Axis::m}, {64, 1, Axis::m}});
  BankReport p = analyzeBankConflicts(*findInstructionRule("ldmatrix.x4"), plain, {64, 64},
                                      shared(Dtype::bf16));
  CHECK(p.wavefrontsPerRequest == 32); // all 8 rows of a matrix in one bank group
  CHECK(p.degree() == 8);
}

TEST_CASE("banks: a column-major f32 tile read a row per warp is a 32-way conflict; padding "
          "fixes it") {
  const InstructionRule &lds = *findInstructionRule("lds.32");
  Layout colMajor = make({{32, 1, Axis::m}, {32, 32, Axis::m}});
  BankReport r = analyzeBankConflicts(lds, colMajor, {32, 32}, shared(Dtype::f32));
  CHECK(r.requests == 32);
  CHECK(r.wavefrontsPerRequest == 32);
  CHECK(r.idealWavefronts == 1);
  CHECK(r.conflicts.size() == 32);
  Layout padded = make({{32, 1, Axis::m}, {32, 33, Axis::m}});
  CHECK(analyzeBankConflicts(lds, padded, {32, 32}, shared(Dtype::f32)).conflictFree());
  BankReport v4 = analyzeBankConflicts(*findInstructionRule("lds.128"),
                                       make({{32, 32, Axis::m}, {32, 1, Axis::m}}), {32, 32},
                                       shared(Dtype::f32));
  CHECK(v4.requests == 8);
  CHECK(v4.wavefrontsPerRequest == 4);
  CHECK(v4.idealWavefronts == 4);
  CHECK(v4.conflictFree());
}

TEST_CASE("checkInstruction answers only the question it was asked: the thread's memo") {
  // The memo remembers answers per thread; every argument that differs gets
  // its own answer, in any order, and the same arguments the first answer.
  Layout l = make({{8, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, mode(128, Dtype::bf16));
  BufferInfo aligned = shared(Dtype::bf16), off = aligned;
  off.baseByte = 128;
  const Msgs misaligned{"tma: the box at (0, 0) starts at byte 128, not aligned to 1024 bytes"};
  InstructionUse strided;
  strided.globalStridesBytes = {200};
  const Msgs badStride{"tma: global stride 0 of 200 bytes is not a multiple of 16"};
  for (int round = 0; round < 3; ++round) {
    CHECK(check("tma", l, {8, 64}, aligned, sm90).empty());
    CHECK(check("tma", l, {8, 64}, off, sm90) == misaligned);
    CHECK(check("tma", l, {8, 64}, aligned, sm90, strided) == badStride);
    CHECK(check("tma", l, {8, 64}, aligned, sm80) == Msgs{"tma: tma does not exist on sm_80"});
    // Another layout, equal but for its swizzle; another rule; another dtype.
    Layout plain = make({{8, 64, Axis::m}, {64, 1, Axis::m}});
    CHECK(check("tma", plain, {8, 64}, off, sm90).empty());
    CHECK(check("ldmatrix.x4", l, {8, 64}, aligned, sm90).empty());
    CHECK(!check("tma", l, {8, 64}, shared(Dtype::f32), sm90).empty()); // bf16's span
    // A target that is not the constant table's entry is checked, not remembered.
    TargetInfo copy = sm90;
    CHECK(check("tma", l, {8, 64}, off, copy) == misaligned);
  }
  // More questions than the memo holds, then the first again.
  for (int64_t base = 0; base < 200 * 1024; base += 1024) {
    BufferInfo b = aligned;
    b.baseByte = base;
    CHECK(check("tma", l, {8, 64}, b, sm90).empty());
  }
  CHECK(check("tma", l, {8, 64}, off, sm90) == misaligned);
}
