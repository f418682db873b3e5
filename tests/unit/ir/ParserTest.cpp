// The parser, printer and checker: canonical text, round trips, recovery,
// and one exact diagnostic per kind of mistake.
#include "ir/Parser.h"
#include "ir/Checker.h"
#include "ir/Printer.h"

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace std {
// Lets doctest show the diagnostics when a comparison fails.
inline ostream &operator<<(ostream &os, const vector<string> &v) {
  for (const string &s : v)
    os << "\n    " << s;
  return os;
}
} // namespace std

#include <doctest/doctest.h>

#include <sstream>

using namespace tilescope;

namespace {
struct Parsed {
  llvm::SourceMgr sm;
  Diagnostics diag{sm, false};
  Module module;
};

std::unique_ptr<Parsed> parse(const std::string &text, bool check = false) {
  auto p = std::make_unique<Parsed>();
  p->module = parseModuleText(text, "t.tile", p->diag);
  if (check && !p->diag.hasErrors())
    checkModule(p->module, p->diag);
  return p;
}

// "line:col: message" of every error, in order.
std::vector<std::string> errors(const Parsed &p) {
  std::vector<std::string> out;
  for (const Diagnostic &d : p.diag.all())
    if (d.kind == Diagnostic::Error)
      out.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message);
  return out;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string wrap(const std::string &body, const std::string &params = "A: global f32[M, N]",
                 const std::string &target = "sm_90a", int threads = 256) {
  return "kernel k(" + params + ")\n  launch grid(1) threads(" + std::to_string(threads) +
         ") target(" + target + ")\n{\n" + body + "}\n";
}
} // namespace

TEST_CASE("the bundled kernels parse, check, and print canonically (fmt is idempotent)") {
  for (const char *name :
       {"gemm_naive.tile", "rmsnorm.tile", "gemm_bf16_sm90.tile", "gemm_bf16_sm100.tile"}) {
    INFO(name);
    auto p = parse(readFile(std::string(TILESCOPE_SOURCE_DIR) + "/kernels/" + name), true);
    REQUIRE(errors(*p) == std::vector<std::string>{});
    std::string once = print(p->module);
    auto q = parse(once);
    REQUIRE(errors(*q).empty());
    CHECK(equal(p->module, q->module)); // parse(print(ir)) == ir
    CHECK(print(q->module) == once);    // print is a fixed point
    CHECK(structuralHash(p->module.kernels[0]) == structuralHash(q->module.kernels[0]));
  }
}

TEST_CASE("canonical text normalises spacing, parentheses, aliases and let lists") {
  auto p = parse("kernel   k ( A : global f32 [ M,N ] )  launch  threads(32) grid( 1 ) "
                 "target(sm_80) { let a = ((1 + 2)) * (3), b = tx ; A[0,  0:+4] = 1.0 }");
  REQUIRE(errors(*p).empty());
  CHECK(print(p->module) == "kernel k(A: global f32[M, N])\n"
                            "  launch grid(1) threads(32) target(sm_80)\n"
                            "{\n"
                            "  let a = (1 + 2) * 3\n"
                            "  let b = threadIdx.x\n"
                            "  A[0, 0 : +4] = 1.0\n"
                            "}\n");
}

TEST_CASE("operators print with the fewest parentheses that keep their meaning") {
  auto p = parse(wrap("  let a = 1 - (2 - 3)\n  let b = (1 - 2) - 3\n  let c = -(1 + 2) * 4\n"
                      "  let d = - -5\n  let e = 1 < 2 && !(3 == 4) || false\n"));
  REQUIRE(errors(*p).empty());
  std::string text = print(p->module);
  CHECK(text.find("let a = 1 - (2 - 3)\n") != std::string::npos);
  CHECK(text.find("let b = 1 - 2 - 3\n") != std::string::npos);
  CHECK(text.find("let c = -(1 + 2) * 4\n") != std::string::npos);
  CHECK(text.find("let d = - -5\n") != std::string::npos);
  CHECK(text.find("let e = 1 < 2 && !(3 == 4) || false\n") != std::string::npos);
  auto q = parse(text);
  CHECK(equal(p->module, q->module));
}

TEST_CASE("structural hash differs when the kernel differs and ignores formatting") {
  auto a = parse(wrap("  let x = 1\n"));
  auto b = parse(wrap("  let   x=1 // same\n"));
  auto c = parse(wrap("  let x = 2\n"));
  CHECK(structuralHash(a->module.kernels[0]) == structuralHash(b->module.kernels[0]));
  CHECK(structuralHash(a->module.kernels[0]) != structuralHash(c->module.kernels[0]));
}

TEST_CASE("one run reports several syntax errors, each at its line and column") {
  auto p = parse(wrap("  let = 3\n  let y = (1 +\n  let z = 2\n  foo bar\n  let ok = 1\n"));
  CHECK(errors(*p) == std::vector<std::string>{
                          "4:7: expected a name after 'let', found '='",
                          "6:3: expected an expression, found 'let'",
                          "7:7: expected '(' to call 'foo' or '[' to store into it, found 'bar'",
                      });
}

TEST_CASE("syntax errors: truncation, garbage, deep nesting, huge literals") {
  CHECK(errors(*parse("kernel k(A: global f32[M]) launch grid(1) threads(32) target(sm_80) {\n"
                      "  let x = 1\n")) ==
        std::vector<std::string>{"3:1: expected '}' before end of file"});
  CHECK(errors(*parse("")) == std::vector<std::string>{"1:1: expected at least one kernel"});
  CHECK(errors(*parse("\x01\xff garbage")) ==
        std::vector<std::string>{"1:1: expected 'kernel', found invalid token '\\x01'"});
  std::string deep =
      wrap("  let x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n");
  CHECK(errors(*parse(deep)) == std::vector<std::string>{"4:210: nesting deeper than 200 levels"});
  CHECK(errors(*parse(wrap("  let x = 99999999999999999999\n"))) ==
        std::vector<std::string>{"4:11: integer literal does not fit in 64 bits"});
  CHECK(errors(*parse("kernel k() launch grid(1) threads(2000) target(sm_80) {}")) ==
        std::vector<std::string>{"1:35: threads per CTA must be in [1, 1024], not 2000"});
  CHECK(
      errors(*parse("kernel k() launch grid(1) threads(32) target(sm_75) {}")) ==
      std::vector<std::string>{"1:46: expected a target (sm_80, sm_90a, sm_100a), found 'sm_75'"});
}

TEST_CASE("a flood of errors stops at the limit") {
  std::string body;
  for (int i = 0; i < 100; ++i)
    body += "  ?\n";
  auto p = parse(wrap(body));
  CHECK(p->diag.errorCount() == Diagnostics::kMaxErrors);
  CHECK(errors(*p).size() == Diagnostics::kMaxErrors);
  CHECK(p->diag.tooManyErrors());
}

TEST_CASE("layout syntax errors") {
  auto layoutError = [](const std::string &layout) {
    auto p = parse(wrap("  shared s: f32[4, 8] layout(" + layout + ")\n"));
    auto e = errors(*p);
    return e.empty() ? std::string() : e[0];
  };
  CHECK(layoutError("S[(4,8):(8@lane,1)]") ==
        "4:41: unknown axis 'lane'; axes are laneid, warpid, wgid, tid_in_wg, wid_in_wg, tx, "
        "cbx, cby, cbz, bx, by, bz, pid, m, TLane, TCol, P, F, Bank");
  CHECK(layoutError("S[(4,8):(8)]") == "4:33: 2 extents but 1 strides");
  CHECK(layoutError("R[4:1] + S[8:1]") == "4:30: the S part comes first in a layout");
  CHECK(layoutError("swizzle(48B, f32, S[32:1])") ==
        "4:38: swizzle mode must be 32B, 64B or 128B, not 48B");
  CHECK(layoutError("S[(4,8):(-1,1)]") == "4:30: shard stride must not be negative, not -1");
  // The argument at fault carries the location, not the preset's name.
  CHECK(layoutError("wgmma_acc(32, 8)") ==
        "4:40: wgmma_acc: wgmma accumulators have M = 64, not 32");
  CHECK(layoutError("nope(1)") ==
        "4:30: unknown layout 'nope': expected S[...], swizzle(...) or a preset such as "
        "wgmma_acc(64, 128)");
}

TEST_CASE("checker: undefined names, redefinitions and dtype mismatches") {
  auto check = [](const std::string &body, const std::string &params = "A: global f32[M, N]",
                  const std::string &target = "sm_90a") {
    return errors(*parse(wrap(body, params, target), true));
  };
  CHECK(check("  let x = y + 1\n") == std::vector<std::string>{"4:11: use of undefined name 'y'"});
  CHECK(check("  let x = 1\n  let x = 2\n") ==
        std::vector<std::string>{"5:7: 'x' is already defined"});
  CHECK(
      check("  A[0, 0] = B[0]\n", "A: global f32[M, N], B: global bf16[N]") ==
      std::vector<std::string>{"4:13: dtype mismatch: cannot store bf16 into f32 element of 'A'"});
  CHECK(check("  let x = A[0, 0] + B[0]\n", "A: global f32[M, N], B: global bf16[N]") ==
        std::vector<std::string>{"4:19: dtype mismatch: '+' between f32 and bf16"});
  CHECK(check("  let x = A[0, 0] * M\n") ==
        std::vector<std::string>{"4:19: '*' mixes an integer with f32; convert with f32(...)"});
  CHECK(check("  if 1 {\n  }\n") ==
        std::vector<std::string>{"4:6: an 'if' condition must be a bool, not integer"});
  CHECK(check("  A[0] = 1.0\n").empty() == false);
}

TEST_CASE("checker: scope misuse of warpgroup and warp calls under divergent branches") {
  std::string params = "A: global bf16[M, N]";
  auto check = [&](const std::string &body) { return errors(*parse(wrap(body, params), true)); };
  std::string decl = "  reg acc: f32[64, 64] layout(wgmma_acc(64, 64))\n";
  CHECK(check(decl + "  if wgid == 0 {\n    wg.fill(acc, 0.0)\n  }\n").empty());
  CHECK(check(decl + "  if tid_in_wg == 0 {\n    wg.fill(acc, 0.0)\n  }\n") ==
        std::vector<std::string>{
            "6:5: 'wg.fill' must be executed by a whole warpgroup, but it is under a condition "
            "that can differ between threads of one warpgroup"});
  CHECK(check(decl + "  if warpid == 1 {\n    wg.fill(acc, 0.0)\n  }\n").size() == 1);
  CHECK(check(decl + "  if warpid == 1 {\n    warp.fill(acc, 0.0)\n  }\n").empty());
  CHECK(check(decl + "  if elect_sync() {\n    setmaxnreg.dec(40)\n  }\n").size() == 1);
}

TEST_CASE("checker: shape mismatches of tile-primitive operands") {
  std::string params = "A: global bf16[M, K], C: global f32[M, N]";
  auto check = [&](const std::string &body) { return errors(*parse(wrap(body, params), true)); };
  std::string decls = "  shared As: bf16[64, 32]\n  shared Bs: bf16[32, 64]\n"
                      "  reg acc: f32[64, 64] layout(wgmma_acc(64, 64))\n";
  CHECK(check(decls + "  cta.copy(As, A[0 : +64, 0 : +32])\n").empty());
  CHECK(check(decls + "  cta.copy(As, A[0 : +64, 0 : +16])\n") ==
        std::vector<std::string>{
            "7:16: shape mismatch in 'cta.copy': dst is [64, 32] but src is [64, 16]"});
  CHECK(check(decls + "  let m0 = 64\n  cta.copy(As, A[m0 : m0 + 64, 0 : +32])\n").empty());
  CHECK(check(decls + "  wg.gemm(acc, As, Bs)\n").empty());
  CHECK(check(decls + "  wg.gemm(acc, As, Bs, transpose_b = true)\n") ==
        std::vector<std::string>{"7:3: shape mismatch in 'wg.gemm': C [64, 64] = A [64, 32] x B "
                                 "[32, 64]^T needs M, N and K to agree"});
  CHECK(check(decls + "  cta.copy(C[0 : +64, 0 : +64], As)\n").size() == 2);
  CHECK(check(decls + "  cta.copy(As, A[0, 0 : +32, 1])\n") ==
        std::vector<std::string>{"7:16: too many subscripts for 'A': 3 given, 2 dimensions left"});
}

TEST_CASE("checker: layouts must admit the buffer shape and sit on axes the scope holds") {
  auto check = [](const std::string &body, const std::string &target = "sm_90a") {
    return errors(*parse(wrap(body, "A: global f32[M]", target), true));
  };
  CHECK(check("  shared s: f32[4, 8] layout(S[(4,4):(4,1)])\n") ==
        std::vector<std::string>{
            "4:30: layout holds 16 elements but buffer 's' of shape [4, 8] has 32"});
  CHECK(check("  shared s: f32[4, 8] layout(S[(4,8):(1@warpid,1@laneid)])\n") ==
        std::vector<std::string>{"4:30: a shared buffer cannot place data on axis laneid",
                                 "4:30: a shared buffer cannot place data on axis warpid"});
  CHECK(check("  reg r: f32[4, 8] layout(S[(4,8):(1@warpid,1@laneid)])\n").empty());
  CHECK(check("  tmem t: f32[128, 32]\n") ==
        std::vector<std::string>{"4:3: tensor memory needs sm_100a; the kernel targets sm_90a"});
}

TEST_CASE("checker: the intrinsic table drives arity, keywords and targets") {
  auto check = [](const std::string &body, const std::string &target = "sm_90a") {
    return errors(*parse(wrap(body, "A: global f32[M]", target), true));
  };
  CHECK(check("  mbarrier b(count = 1)\n  mbarrier.wait(b)\n") ==
        std::vector<std::string>{"5:3: 'mbarrier.wait' is missing argument 'parity = ...'"});
  CHECK(
      check("  mbarrier b(count = 1)\n  mbarrier.wait(b, parity = 0, phase = 1)\n") ==
      std::vector<std::string>{"5:32: 'mbarrier.wait' has no argument 'phase' (it takes parity)"});
  CHECK(check("  mbarrier b[2](count = 1)\n  mbarrier.arrive(b)\n") ==
        std::vector<std::string>{"5:19: 'b' is an array of mbarriers; pick one with b[i]"});
  CHECK(check("  mbarrier b(count = 0)\n") ==
        std::vector<std::string>{"4:22: mbarrier arrival count must be in [1, 2^20 - 1], not 0"});
  CHECK(check("  wgmma.fence()\n", "sm_100a") ==
        std::vector<std::string>{"4:3: 'wgmma.fence' needs sm_90a; the kernel targets sm_100a"});
  CHECK(check("  frobnicate(1)\n") == std::vector<std::string>{"4:3: unknown call 'frobnicate'"});
  CHECK(check("  cta.mbarrier.wait(1)\n").size() == 1);
  CHECK(check("  sync()\n") ==
        std::vector<std::string>{"4:3: 'sync' needs a scope: warp.sync(), cta.sync() or "
                                 "cluster.sync()"});
}
