// Control flow, natural loops and symbolic register values on small PTX.
#include "PtxTestSupport.h"
#include "ir/Printer.h"
#include "ptx/Cfg.h"
#include "ptx/LiftExprs.h"
#include "ptx/Values.h"

#include <doctest/doctest.h>

using namespace tilescope;
using namespace tilescope::ptx;
using test::parse;

namespace {
// The module header of every test's PTX.
#define PTX_HEADER ".version 8.7\n.target sm_90a\n.address_size 64\n"

// The first function of PTX text, its control flow and its register values.
struct Analysed {
  explicit Analysed(const std::string &text)
      : parsed(parse(text)), f(function(*parsed)), cfg(buildCfg(f)), values(f, cfg) {}
  static const Function &function(const test::Parsed &p) {
    REQUIRE(p.module);
    return p.module->functions[0];
  }
  Analysed(const Analysed &) = delete;
  Analysed &operator=(const Analysed &) = delete;
  std::unique_ptr<test::Parsed> parsed;
  const Function &f;
  Cfg cfg;
  RegisterValues values;
};

// A rotated counted loop with a spin wait inside, as nvcc emits it.
const char *kLoop = PTX_HEADER R"(.extern .shared .align 1024 .b8 smem[];
.entry k(.param .u32 k_param_0)
.maxntid 256, 1, 1
{
 .reg .pred %p<4>;
 .reg .b32 %r<20>;
 .reg .b64 %rd<4>;
 ld.param.u32 %r1, [k_param_0];
 mov.u32 %r2, 0;
$L__BB0_1:
 mul.wide.u32 %rd1, %r2, -1431655765;
 shr.u64 %rd2, %rd1, 34;
 cvt.u32.u64 %r3, %rd2;
 mul.lo.s32 %r4, %r3, 6;
 sub.s32 %r5, %r2, %r4;
 shl.b32 %r6, %r5, 3;
 mov.u32 %r7, smem;
 add.s32 %r8, %r7, %r6;
 and.b32 %r9, %r3, 1;
$L__BB0_2:
 mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r8], %r9;
 @!%p1 bra $L__BB0_2;
 add.s32 %r2, %r2, 1;
 setp.lt.s32 %p2, %r2, %r1;
 @%p2 bra $L__BB0_1;
 ret;
}
)";
} // namespace

TEST_CASE("natural loops, nesting and spin waits") {
  Analysed a(kLoop);
  const Cfg &cfg = a.cfg;
  REQUIRE(cfg.loops.size() == 2);
  CHECK(!cfg.loops[0].spinWait);
  CHECK(cfg.loops[1].spinWait);
  CHECK(cfg.loops[1].parent == 0);
  CHECK(cfg.loops[1].depth == 2);
}

TEST_CASE("register values: induction variable, magic division, bit tricks") {
  Analysed a(kLoop);
  const Function &f = a.f;
  RegisterValues &values = a.values;
  REQUIRE(values.inductions().size() == 1);
  CHECK(values.inductions()[0].reg == "%r2");
  size_t wait = 11; // the try_wait
  REQUIRE(f.instructions[wait].opcode == "mbarrier");
  CHECK(print(values.addressValue(f.instructions[wait].operands[1], wait)) ==
        "&smem + it0 % 6 * 8");
  CHECK(print(values.operandValue(f.instructions[wait].operands[2], wait)) == "it0 / 6 % 2");
  // After the step the counter reads one iteration ahead.
  size_t setp = 14;
  CHECK(print(values.registerValue("%p2", setp)) == "it0 + 1 < param_0");
  // A wrong magic constant is not read as a division.
  std::string wrong = kLoop;
  wrong.replace(wrong.find("-1431655765"), 11, "-1431655764");
  Analysed b(wrong);
  CHECK(!b.values.operandValue(b.f.instructions[wait].operands[2], wait));
}

TEST_CASE("a counter stepped only on some iterations is not an induction variable") {
  // The step sits in a block a branch may skip: `init + c * it` would be wrong.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<8>;
 ld.param.u32 %r1, [k_param_0];
 mov.u32 %r2, 0;
 mov.u32 %r3, 0;
$L__BB0_1:
 setp.eq.s32 %p1, %r1, 7;
 @%p1 bra $L__BB0_2;
 add.s32 %r2, %r2, 1;
$L__BB0_2:
 add.s32 %r3, %r3, 1;
 setp.lt.s32 %p2, %r3, %r1;
 @%p2 bra $L__BB0_1;
 ret;
}
)";
  Analysed a(text);
  const Cfg &cfg = a.cfg;
  RegisterValues &values = a.values;
  REQUIRE(values.inductions().size() == 1);
  CHECK(values.inductions()[0].reg == "%r3");
  // The trip count of the loop is derived from %r3 alone.
  REQUIRE(cfg.loops.size() == 1);
  Expr n = values.tripCount(0);
  REQUIRE(n);
  CHECK(print(n) == "param_0");
}

TEST_CASE("`!=` latches, symbolic starts and reads before the loop") {
  // nvcc's k loop (`setp.ne` against the bound) and a tile loop starting at
  // blockIdx.x with step 132, each behind a test that skips it.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0, .param .u32 k_param_1)
{
 .reg .pred %p<8>;
 .reg .b32 %r<12>;
 ld.param.u32 %r1, [k_param_0];
 ld.param.u32 %r2, [k_param_1];
 mov.u32 %r3, %ctaid.x;
 setp.ge.s32 %p1, %r3, %r2;
 @%p1 bra $L__BB0_3;
$L__BB0_1:
 mov.u32 %r4, 0;
$L__BB0_2:
 add.s32 %r4, %r4, 1;
 setp.ne.s32 %p2, %r1, %r4;
 @%p2 bra $L__BB0_2;
 add.s32 %r3, %r3, 132;
 setp.lt.s32 %p3, %r3, %r2;
 @%p3 bra $L__BB0_1;
$L__BB0_3:
 ret;
}
)";
  Analysed a(text);
  const Cfg &cfg = a.cfg;
  RegisterValues &values = a.values;
  REQUIRE(cfg.loops.size() == 2);
  int tile = cfg.loops[0].parent < 0 ? 0 : 1, k = 1 - tile;
  // The tile loop: from blockIdx.x while below param_1, step 132.
  Expr n = values.tripCount(tile);
  REQUIRE(n);
  CHECK(print(n) == "(param_1 - blockIdx.x + 131) / 132");
  CHECK(!values.entryCondition(tile)); // a `<` latch needs nothing
  // The k loop: `param_0 != counter` ends it only if the bound is ahead.
  Expr m = values.tripCount(k);
  REQUIRE(m);
  CHECK(print(m) == "param_0");
  Expr need = values.entryCondition(k);
  REQUIRE(need);
  CHECK(print(need) == "param_0 >= 1");
  // The read of the tile counter before its loop (the skip test) is its
  // initial value.
  Expr skip = values.registerValue("%p1", 4);
  REQUIRE(skip);
  CHECK(print(skip) == "blockIdx.x >= param_1");
}

TEST_CASE("Triton's carried ring index and phase") {
  // The ring index enters at -1 and wraps at 8; the phase toggles when it
  // wraps; the loop counter starts from a copy of the phase's 0.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0)
{
 .reg .pred %p<8>;
 .reg .b32 %r<20>;
 ld.param.u32 %r1, [k_param_0];
 mov.b32 %r3, 0;
 mov.b32 %r4, -1;
 mov.b32 %r5, %r3;
$L__BB0_1:
 add.s32 %r6, %r4, 1;
 setp.gt.s32 %p1, %r6, 7;
 selp.b32 %r4, 0, %r6, %p1;
 selp.b32 %r7, 1, 0, %p1;
 xor.b32 %r3, %r3, %r7;
 shl.b32 %r8, %r4, 3;
 add.s32 %r5, %r5, 1;
 setp.ne.b32 %p2, %r1, %r5;
 @%p2 bra $L__BB0_1;
 ret;
}
)";
  Analysed a(text);
  const Cfg &cfg = a.cfg;
  RegisterValues &values = a.values;
  REQUIRE(cfg.loops.size() == 1);
  // After their updates (instruction 10 reads both).
  Expr ring = values.registerValue("%r4", 9);
  REQUIRE(ring);
  CHECK(print(ring) == "it0 % 8");
  Expr phase = values.registerValue("%r3", 9);
  REQUIRE(phase);
  CHECK(print(phase) == "it0 / 8 % 2");
  // Before its update the ring index of iteration 0 is -1: not derived.
  CHECK(!values.registerValue("%r4", 4));
  // The counter's start is the phase's 0, read before the loop.
  Expr n = values.tripCount(0);
  REQUIRE(n);
  CHECK(print(n) == "param_0");
}

TEST_CASE("nvcc's rotated latch, a loop tested at its header, and max") {
  // Loop A: the counter copied at the header and compared before its step
  // (`c < param_0` continues: param_0 + 1 iterations). Loop B: entered by a
  // jump to its test at the header, the counter stepped in the latch that
  // falls into it (`c > n` leaves, n = max(param_1, 1)): max(0, n + 1) runs
  // of the body, and the counter after it is that count.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0, .param .u32 k_param_1)
{
 .reg .pred %p<8>;
 .reg .b32 %r<12>;
 ld.param.u32 %r1, [k_param_0];
 ld.param.u32 %r2, [k_param_1];
 mov.u32 %r3, 0;
$L__BB0_1:
 mov.u32 %r4, %r3;
 add.s32 %r3, %r4, 1;
 setp.lt.s32 %p1, %r4, %r1;
 @%p1 bra $L__BB0_1;
 max.s32 %r5, %r2, 1;
 mov.u32 %r6, 0;
 bra.uni $L__BB0_3;
$L__BB0_2:
 add.s32 %r6, %r6, 1;
$L__BB0_3:
 setp.gt.s32 %p2, %r6, %r5;
 @%p2 bra $L__BB0_4;
 bra.uni $L__BB0_2;
$L__BB0_4:
 add.s32 %r7, %r6, 0;
 ret;
}
)";
  Analysed a(text);
  RegisterValues &values = a.values;
  REQUIRE(a.cfg.loops.size() == 2);
  int first = a.cfg.loops[0].firstLine < a.cfg.loops[1].firstLine ? 0 : 1, second = 1 - first;
  Expr n = values.tripCount(first);
  REQUIRE(n);
  CHECK(print(n) == "param_0 + 1");
  CHECK(!values.topTested(first));
  Expr m = values.tripCount(second);
  REQUIRE(m);
  CHECK(values.topTested(second));
  CHECK(print(m) == "max(0, max(param_1, 1) + 1)");
}

TEST_CASE("residues of offsets modulo a power of two") {
  Expr t = Builtin::make(BuiltinKind::threadIdx_x);
  Expr it = Var::make("it0");
  auto c = [](int64_t v) { return IntImm::make(v); };
  // (it % 3) * 16384 + (tid / 128) * 8192 - 8160: 32 modulo 128, unknown
  // modulo 2^14 (the warpgroup's 8192).
  Expr x = Binary::make(
      BinaryOp::Add,
      Binary::make(BinaryOp::Add,
                   Binary::make(BinaryOp::Mul, Binary::make(BinaryOp::Mod, it, c(3)), c(16384)),
                   Binary::make(BinaryOp::Mul, Binary::make(BinaryOp::Div, t, c(128)), c(8192))),
      c(-8160));
  CHECK(residueModulo(x, 128) == 32);
  CHECK(!residueModulo(x, 16384));
  // x % 128 keeps the residue modulo 128; (x / 128) * 128 is 0 modulo 128;
  // 2 * (x / 2) needs x modulo 256 / 2 ... known: 2 * 16 = 32 modulo 64.
  CHECK(residueModulo(Binary::make(BinaryOp::Mod, x, c(128)), 64) == 32);
  CHECK(residueModulo(Binary::make(BinaryOp::Mul, Binary::make(BinaryOp::Div, x, c(128)), c(128)),
                      128) == 0);
  CHECK(residueModulo(Binary::make(BinaryOp::Mul, Binary::make(BinaryOp::Div, x, c(2)), c(2)),
                      64) == 32);
  // A bare thread index has no fixed residue.
  CHECK(!residueModulo(t, 16));
}

TEST_CASE("a counter set to a constant at the latch runs at most twice") {
  // nvcc's two-row loop: the counter enters at 0 and is set to 1 (through a
  // register holding 1) instead of being stepped; the latch tests the value
  // before the set plus one against 2.
  std::string text = PTX_HEADER R"(.entry k(.param .u32 k_param_0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<8>;
 mov.u32 %r2, 0;
$L__BB0_1:
 mov.u32 %r4, 1;
 add.s32 %r3, %r2, 1;
 setp.lt.u32 %p1, %r3, 2;
 mov.u32 %r2, %r4;
 @%p1 bra $L__BB0_1;
 ret;
}
)";
  Analysed a(text);
  REQUIRE(a.values.inductions().size() == 1);
  CHECK(a.values.inductions()[0].twoValued);
  Expr n = a.values.tripCount(0);
  REQUIRE(n);
  CHECK(print(n) == "2");
  CHECK(print(a.values.registerValue("%r3", 4)) == "it0 + 1");
  // After the set the value is not derived: the formula would say it + 1.
  CHECK(!a.values.registerValue("%r2", 5));
  // A bound of 3 never ends the loop (the counter stays 1): no induction.
  std::string three = text;
  three.replace(three.find("%r3, 2;"), 7, "%r3, 3;");
  Analysed b(three);
  CHECK(b.values.inductions().empty());
  CHECK(!b.values.tripCount(0));
}

TEST_CASE("a multiply by a constant keeps the trailing zero bits of both factors") {
  // s * 24576 (a 24 KiB stage, s < 4) has bits 0-12 clear, so `or` with 32
  // is an addition.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0)
{
 .reg .b32 %r<8>;
 mov.u32 %r1, %tid.x;
 and.b32 %r2, %r1, 3;
 mul.lo.s32 %r3, %r2, 24576;
 or.b32 %r4, %r3, 32;
 ret;
}
)";
  Analysed a(text);
  CHECK(a.values.operandBits(a.f.instructions[2].operands[0], 3) == 0x1e000);
  CHECK(print(a.values.registerValue("%r4", 4)) == "threadIdx.x % 4 * 24576 + 32");
}

TEST_CASE("session 19's loop forms: a test before a jump-only latch, a trap exit, a "
          "counter stepped down, an initial value read from another counter") {
  // nvcc's unrolled loop and its remainder (gemm_naive): %r9 = K - K % 4
  // counted down by 4 against `!=`, read from %r8 = K & 3 before the
  // remainder loop counts %r8 down; then a loop whose test ends the block
  // before a latch that only jumps back, with a flag wait that traps.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0)
{
 .reg .pred %p<8>;
 .reg .b32 %r<20>;
 ld.param.u32 %r1, [k_param_0];
 and.b32 %r8, %r1, 3;
 add.s32 %r2, %r1, -1;
 setp.lt.u32 %p1, %r2, 3;
 @%p1 bra $L__BB0_3;
 sub.s32 %r9, %r1, %r8;
$L__BB0_2:
 add.s32 %r9, %r9, -4;
 setp.ne.s32 %p2, %r9, 0;
 @%p2 bra $L__BB0_2;
$L__BB0_3:
 setp.eq.s32 %p3, %r8, 0;
 @%p3 bra $L__BB0_5;
$L__BB0_4:
 add.s32 %r8, %r8, -1;
 setp.ne.s32 %p4, %r8, 0;
 @%p4 bra $L__BB0_4;
$L__BB0_5:
 mov.u32 %r10, 0;
$L__BB0_6:
 ld.param.u32 %r11, [k_param_0];
 setp.lt.s32 %p5, %r11, 0;
 @%p5 bra $L__BB0_7;
 trap;
$L__BB0_7:
 add.s32 %r10, %r10, 1;
 setp.eq.s32 %p6, %r10, %r1;
 @%p6 bra $L__BB0_8;
 bra.uni $L__BB0_6;
$L__BB0_8:
 ret;
}
)";
  Analysed a(text);
  REQUIRE(a.cfg.loops.size() == 3);
  auto loopAt = [&](unsigned line) {
    for (size_t l = 0; l < a.cfg.loops.size(); ++l)
      if (a.cfg.loops[l].firstLine <= line && line <= a.cfg.loops[l].lastLine)
        return int(l);
    return -1;
  };
  int unrolled = loopAt(16), rest = loopAt(24), jumped = loopAt(33);
  REQUIRE(unrolled >= 0);
  REQUIRE(rest >= 0);
  REQUIRE(jumped >= 0);
  Expr n = a.values.tripCount(unrolled);
  REQUIRE(n);
  CHECK(print(n) == "(param_0 - param_0 % 4) / 4");
  Expr need = a.values.entryCondition(unrolled);
  REQUIRE(need);
  CHECK(print(need) == "param_0 - param_0 % 4 >= 4 && (param_0 - param_0 % 4) % 4 == 0");
  Expr m = a.values.tripCount(rest);
  REQUIRE(m);
  CHECK(print(m) == "param_0 % 4");
  // Goes on while the counter is not param_0; the trap is no way out.
  Expr j = a.values.tripCount(jumped);
  REQUIRE(j);
  CHECK(print(j) == "param_0");
  REQUIRE(a.values.entryCondition(jumped));
  CHECK(print(a.values.entryCondition(jumped)) == "param_0 >= 1");
}

TEST_CASE("a counter stepped by nvcc's strength-reduced mad is an induction variable") {
  // attention_fwd_sm100's softmax loop: %r9 = (%r3 << 7) | 1 is the key
  // offset n * 128 + 1, and `mad.lo %r3, %r3, -127, %r9` is n + 1.
  const char *text = PTX_HEADER R"(.entry k(.param .u32 k_param_0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<12>;
 ld.param.u32 %r1, [k_param_0];
 max.s32 %r2, %r1, 1;
 mov.u32 %r3, 0;
$L__BB0_1:
 and.b32 %r4, %r3, 1;
 shl.b32 %r8, %r3, 7;
 or.b32 %r9, %r8, 1;
 mad.lo.s32 %r3, %r3, -127, %r9;
 setp.ne.s32 %p1, %r3, %r2;
 @%p1 bra $L__BB0_1;
 ret;
}
)";
  Analysed a(text);
  REQUIRE(a.cfg.loops.size() == 1);
  Expr n = a.values.tripCount(0);
  REQUIRE(n);
  CHECK(print(n) == "max(param_0, 1)");
  Expr parity = a.values.registerValue("%r4", 4);
  REQUIRE(parity);
  CHECK(print(parity) == "it0 % 2");
  // -126 instead of -127: not the counter plus a constant, no count.
  std::string wrong = text;
  wrong.replace(wrong.find("-127"), 4, "-126");
  Analysed b(wrong);
  CHECK(!b.values.tripCount(0));
}
