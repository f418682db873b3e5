// The lifting's Z3 questions (ptx/LiftSolve.h): loops whose ends are proved
// equal get one spelling, and only those.
#include "ir/Printer.h"
#include "ptx/LiftSolve.h"

#include <doctest/doctest.h>

using namespace tilescope;
using namespace tilescope::ptx;

namespace {
Expr var(const char *n) { return Var::make(n); }
Expr lit(int64_t v) { return IntImm::make(v); }
Expr add(Expr a, Expr b) { return Binary::make(BinaryOp::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return Binary::make(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return Binary::make(BinaryOp::Div, std::move(a), std::move(b)); }
Expr max0(Expr a) { return Call::make("max", {lit(0), std::move(a)}); }

// nk = (param_8 + 127) / 128, the overlap attention's block count.
Expr blocks() { return div(add(var("param_8"), lit(127)), lit(128)); }

// Two outermost loops from 0 in steps of 1 with the given ends, one event in
// each (or none in the second).
BarrierSkeleton twoLoops(Expr a, Expr b, bool eventInSecond = true) {
  BarrierSkeleton sk;
  for (Expr end : {a, b}) {
    SkeletonLoop l;
    l.var = "it" + std::to_string(sk.loops.size());
    l.begin = lit(0);
    l.end = std::move(end);
    l.step = lit(1);
    sk.loops.push_back(l);
  }
  for (int l = 0; l < (eventInSecond ? 2 : 1); ++l) {
    SyncEvent e;
    e.kind = SyncKind::MbarWait;
    e.loop = l;
    sk.events.push_back(e);
  }
  return sk;
}
} // namespace

TEST_CASE("a header-tested loop's max(0, n) and a do-while loop's n get one spelling") {
  BarrierSkeleton sk = twoLoops(add(blocks(), lit(1)), max0(add(blocks(), lit(1))));
  relateLoopBounds(sk, {});
  CHECK(print(sk.loops[1].end) == print(sk.loops[0].end));
  CHECK(print(sk.loops[1].end) == "(param_8 + 127) / 128 + 1");
}

TEST_CASE("ends that differ for some size keep their own spelling") {
  // One apart for every size (a header test `>=` for `>`).
  BarrierSkeleton apart = twoLoops(add(blocks(), lit(1)), max0(blocks()));
  relateLoopBounds(apart, {});
  CHECK(print(apart.loops[1].end) == "max(0, (param_8 + 127) / 128)");
  // Equal except at param_8 = 0, where max(0, -1) is 0.
  BarrierSkeleton once = twoLoops(sub(var("param_8"), lit(1)), max0(sub(var("param_8"), lit(1))));
  relateLoopBounds(once, {});
  CHECK(print(once.loops[1].end) == "max(0, param_8 - 1)");
  // ... which an assumption the launch gives (param_8 >= 1) makes equal.
  relateLoopBounds(once, {Binary::make(BinaryOp::Ge, var("param_8"), lit(1))});
  CHECK(print(once.loops[1].end) == "param_8 - 1");
}

TEST_CASE("nested loops and loops without events are left as they are") {
  BarrierSkeleton empty = twoLoops(add(blocks(), lit(1)), max0(add(blocks(), lit(1))), false);
  relateLoopBounds(empty, {});
  CHECK(print(empty.loops[1].end) == "max(0, (param_8 + 127) / 128 + 1)");
  BarrierSkeleton nested = twoLoops(add(blocks(), lit(1)), max0(add(blocks(), lit(1))));
  nested.loops[1].parent = 0;
  relateLoopBounds(nested, {});
  CHECK(print(nested.loops[1].end) == "max(0, (param_8 + 127) / 128 + 1)");
}
