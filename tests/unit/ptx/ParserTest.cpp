// The PTX reader: each construct of the grammar read into the exact
// representation, and errors at the exact line and column.
#include "PtxTestSupport.h"

#include <doctest/doctest.h>

using namespace tilescope;
using namespace tilescope::ptx;
using test::parse;

namespace {
const char *kHeader = ".version 8.7\n.target sm_90a\n.address_size 64\n";

const Function &only(const test::Parsed &p) {
  REQUIRE(p.module);
  REQUIRE(p.module->functions.size() == 1);
  return p.module->functions[0];
}
} // namespace

TEST_CASE("module directives, params and performance directives") {
  auto p =
      parse(std::string(kHeader) + ".extern .shared .align 1024 .b8 smem[];\n"
                                   ".shared .align 16 .b8 buf[4][256];\n"
                                   ".visible .entry k(\n .param .u64 k_param_0,\n"
                                   " .param .align 128 .b8 k_param_1[128]\n)\n.maxntid 384, 1, 1\n"
                                   ".minnctapersm 1\n{\n ret;\n}\n");
  const Function &f = only(*p);
  CHECK(p->module->version == "8.7");
  CHECK(p->module->target == "sm_90a");
  CHECK(p->module->addressSize == 64);
  CHECK(f.entry);
  CHECK(f.visible);
  REQUIRE(f.params.size() == 2);
  CHECK(f.params[0].type == "u64");
  CHECK(f.params[1].align == 128);
  CHECK(f.params[1].arrayBytes == 128);
  REQUIRE(f.performanceDirectives.size() == 2);
  CHECK(f.performanceDirectives[0].first == "maxntid");
  CHECK(f.performanceDirectives[0].second == "384, 1, 1");
  REQUIRE(p->module->globals.size() == 2);
  CHECK(p->module->globals[0].external);
  CHECK(p->module->globals[0].align == 1024);
  CHECK(!p->module->globals[0].bytes());
  CHECK(p->module->globals[1].bytes() == 1024);
}

TEST_CASE("an instruction is mnemonic, modifiers, guard and operands") {
  auto p = parse(std::string(kHeader) +
                 ".entry k()\n{\n .reg .pred %p<3>;\n .reg .b32 %r<9>;\n"
                 " @!%p1 mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1+-16], %r2;\n"
                 " cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                 "bytes [%r3], [%rd1, {%r4, %r5}], [%r6];\n"
                 " shfl.sync.bfly.b32 %r7|%p0, %r1, 16, 31, -1;\n"
                 " mov.b32 %r8, 0f3F800000;\n"
                 " mov.u32 %r8, %tid.x;\n"
                 "}\n");
  const Function &f = only(*p);
  REQUIRE(f.instructions.size() == 5);
  const Instruction &w = f.instructions[0];
  CHECK(w.opcode == "mbarrier");
  CHECK(w.modifiers == std::vector<std::string>{"try_wait", "parity", "shared::cta", "b64"});
  CHECK(w.guard == "%p1");
  CHECK(w.guardNegated);
  CHECK(w.line == 8);
  CHECK(w.column == 2);
  REQUIRE(w.operands.size() == 3);
  CHECK(w.operands[1].kind == Operand::Memory);
  CHECK(w.operands[1].name == "%r1");
  CHECK(w.operands[1].value == -16);
  const Instruction &tma = f.instructions[1];
  REQUIRE(tma.operands.size() == 3);
  CHECK(tma.operands[1].kind == Operand::Memory);
  REQUIRE(tma.operands[1].elements.size() == 1);
  CHECK(tma.operands[1].elements[0].kind == Operand::Vector);
  CHECK(tma.operands[1].elements[0].elements.size() == 2);
  const Instruction &sh = f.instructions[2];
  CHECK(sh.operands[0].kind == Operand::Pair);
  CHECK(sh.operands[0].second == "%p0");
  CHECK(sh.operands[4].value == -1);
  CHECK(f.instructions[3].operands[1].kind == Operand::FloatImmediate);
  CHECK(f.instructions[4].operands[1].name == "%tid.x");
}

TEST_CASE("registers declared in inline scopes get unique names") {
  auto p = parse(std::string(kHeader) +
                 ".entry k()\n{\n .reg .b32 %r<3>;\n"
                 " { .reg .pred p; setp.ne.b32 p, %r1, 0; selp.u32 %r2, 1, 0, p; }\n"
                 " { .reg .pred p; setp.eq.b32 p, %r1, 0; }\n}\n");
  const Function &f = only(*p);
  REQUIRE(f.instructions.size() == 3);
  std::string first = f.instructions[0].operands[0].name;
  CHECK(first != "p");
  CHECK(f.instructions[1].operands[3].name == first);
  CHECK(f.instructions[2].operands[0].name != first);
}

TEST_CASE("labels, pragmas, debug sections and comments") {
  auto p = parse(std::string(kHeader) +
                 "// a comment\n.entry k()\n{\n$L__BB0_1: /* block */\n .pragma \"nounroll\";\n"
                 " .loc 1 2 3\n bra.uni $L__BB0_1;\n}\n"
                 ".section .debug_abbrev\n{\n.b8 17\n.b8 1\n}\n");
  const Function &f = only(*p);
  REQUIRE(f.labels.size() == 1);
  CHECK(f.labels[0] == "$L__BB0_1");
  REQUIRE(f.pragmas.size() == 1);
  CHECK(f.pragmas[0] == "\"nounroll\"");
  REQUIRE(f.instructions.size() == 1);
  CHECK(f.instructions[0].operands[0].kind == Operand::Symbol);
}

TEST_CASE("syntax errors name the line and column; nesting is bounded") {
  auto p = parse(std::string(kHeader) + ".entry k()\n{\n add.s32 %r1, %r2 %r3;\n}\n");
  CHECK(!p->module);
  REQUIRE(p->diag.all().size() == 1);
  CHECK(p->diag.all()[0].line == 6);
  CHECK(p->diag.all()[0].column == 19);

  std::string deep = std::string(kHeader) + ".entry k()\n";
  for (int i = 0; i < kMaxScopeDepth + 2; ++i)
    deep += "{";
  auto q = parse(deep);
  CHECK(!q->module);
  REQUIRE(!q->diag.all().empty());
  CHECK(q->diag.all()[0].message.find("nested deeper") != std::string::npos);

  auto r = parse(std::string(kHeader) + ".entry k()\n{\n foo {{{{%r1}}}};\n}\n");
  CHECK(!r->module);
  CHECK(r->diag.all()[0].message.find("nested deeper") != std::string::npos);
}
