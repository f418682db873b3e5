// Proofs over every problem size: layouts on symbolic shapes [M, K] under
// `where` constraints, with the counterexample's sizes in the witness.
#include "verifier/SymbolicLayout.h"
#include "TestLayouts.h"

using namespace tilescope;
using namespace tilescope::test;

namespace {
Expr V(const char *n) {
  return Var::make(n);
}
Expr I(int64_t v) {
  return IntImm::make(v);
}
Expr bin(BinaryOp op, Expr a, Expr b) {
  return Binary::make(op, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  return bin(BinaryOp::Sub, std::move(a), std::move(b));
}
Expr mul(Expr a, Expr b) {
  return bin(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr multipleOf(const char *n, int64_t k) {
  return bin(BinaryOp::Eq, bin(BinaryOp::Mod, V(n), I(k)), I(0));
}

const TargetInfo &sm90 = targetInfo(TargetKind::sm_90a);

BufferInfo global(Dtype d = Dtype::bf16) {
  BufferInfo b;
  b.scope = MemScope::Global;
  b.dtype = d;
  return b;
}
BufferInfo reg() {
  BufferInfo b;
  b.scope = MemScope::Reg;
  return b;
}

// Re-checks a symbolic finding on the concrete layout its sizes give.
void recheck(const SymbolicLayout &sl, const std::vector<Expr> &shape, const LayoutViolation &v) {
  std::map<std::string, int64_t> values(v.witness.symbols.begin(), v.witness.symbols.end());
  REQUIRE(!values.empty());
  auto l = sl.concretize(values, nullptr);
  REQUIRE(l.has_value());
  std::vector<int64_t> concrete;
  for (const Expr &e : shape)
    concrete.push_back(*evaluate(e, values));
  checkWitness(*l, concrete, v);
}

SymbolicLayout rowMajor(Expr rowStride) {
  SymbolicLayout l;
  l.shard = {{V("M"), std::move(rowStride), Axis::m}, {V("K"), I(1), Axis::m}};
  return l;
}
} // namespace

TEST_CASE("symbolic: a row-major [M, K] tensor is legal for every M, K") {
  std::vector<Expr> shape = {V("M"), V("K")};
  LayoutReport r = verifySymbolicLayout(
      rowMajor(V("K")), shape, {multipleOf("M", 128), multipleOf("K", 64)}, global(), sm90, {});
  CHECK(r.violations.empty());
  CHECK(r.undecided.empty());
}

TEST_CASE("symbolic alias: a row stride of K - 1 folds rows onto each other") {
  std::vector<Expr> shape = {V("M"), V("K")};
  SymbolicLayout l = rowMajor(sub(V("K"), I(1)));
  LayoutReport r = verifySymbolicLayout(l, shape, {multipleOf("M", 128), multipleOf("K", 64)},
                                        global(), sm90, {});
  REQUIRE(r.undecided.empty());
  REQUIRE(r.violations.size() == 1);
  const LayoutViolation &v = r.violations[0];
  CHECK(v.kind == ViolationKind::Alias);
  CHECK(v.message.rfind("for K = ", 0) == 0);
  recheck(l, shape, v);
}

TEST_CASE("symbolic bounds: an offset pushes the last element of [M, K] past M * K") {
  std::vector<Expr> shape = {V("M"), V("K")};
  SymbolicLayout l = rowMajor(V("K"));
  l.offset = {{Axis::m, I(1)}};
  LayoutReport r = verifySymbolicLayout(l, shape, {multipleOf("K", 64)}, global(), sm90, {});
  REQUIRE(r.undecided.empty());
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].kind == ViolationKind::Bounds);
  recheck(l, shape, r.violations[0]);
  // With an allocation of M * K + 1 slots it fits.
  LayoutReport roomy = verifySymbolicLayout(l, shape, {multipleOf("K", 64)}, global(), sm90, {},
                                            bin(BinaryOp::Add, mul(V("M"), V("K")), I(1)));
  CHECK(roomy.legal());
}

TEST_CASE("symbolic replica: a broadcast copy M - 1 lanes up collides once M >= 2") {
  std::vector<Expr> shape = {V("M")};
  SymbolicLayout l;
  l.shard = {{V("M"), I(1), Axis::laneid}};
  l.replica = {{I(2), sub(V("M"), I(1)), Axis::laneid}};
  Expr small = bin(BinaryOp::Le, V("M"), I(16));
  LayoutReport r = verifySymbolicLayout(l, shape, {small}, reg(), sm90, {});
  REQUIRE(r.undecided.empty());
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].kind == ViolationKind::Replica);
  recheck(l, shape, r.violations[0]);
  SymbolicLayout twin = l;
  twin.replica = {{I(2), V("M"), Axis::laneid}};
  CHECK(verifySymbolicLayout(twin, shape, {small}, reg(), sm90, {}).legal());
  // Without the bound on M the lanes run out: a bounds finding instead.
  LayoutReport unbounded = verifySymbolicLayout(twin, shape, {}, reg(), sm90, {});
  REQUIRE(unbounded.violations.size() == 1);
  CHECK(unbounded.violations[0].kind == ViolationKind::Bounds);
  recheck(twin, shape, unbounded.violations[0]);
}

TEST_CASE("symbolic admission: a layout over [M, K] does not admit [M, K + 1]") {
  std::vector<Expr> shape = {V("M"), bin(BinaryOp::Add, V("K"), I(1))};
  LayoutReport r = verifySymbolicLayout(rowMajor(V("K")), shape, {}, global(), sm90, {});
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].message.find("elements but the shape") != std::string::npos);
}

TEST_CASE("symbolic overlap: a second [M, K] buffer placed at M * K - 1 touches the first") {
  std::vector<Expr> shape = {V("M"), V("K")};
  auto at = [&](Expr offset) {
    SymbolicBufferView v{rowMajor(V("K")), shape, global(Dtype::f32)};
    v.layout.offset = {{Axis::m, std::move(offset)}};
    return v;
  };
  SymbolicBufferView first{rowMajor(V("K")), shape, global(Dtype::f32)};
  first.info.name = "A";
  SymbolicBufferView second = at(mul(V("M"), V("K")));
  second.info.name = "B";
  std::vector<Expr> where = {multipleOf("K", 64)};
  LayoutReport ok = verifySymbolicNoOverlap(first, second, where);
  CHECK(ok.legal());
  SymbolicBufferView early = at(sub(mul(V("M"), V("K")), I(1)));
  early.info.name = "B";
  LayoutReport bad = verifySymbolicNoOverlap(first, early, where);
  REQUIRE(bad.undecided.empty());
  REQUIRE(bad.violations.size() == 1);
  const LayoutViolation &v = bad.violations[0];
  CHECK(v.kind == ViolationKind::Overlap);
  CHECK(v.message.find("buffers A and B overlap") != std::string::npos);
  // The last element of A meets the first of B.
  std::map<std::string, int64_t> values(v.witness.symbols.begin(), v.witness.symbols.end());
  CHECK(v.witness.logical[0] == std::vector<int64_t>{values["M"] - 1, values["K"] - 1});
  CHECK(v.witness.logical[1] == std::vector<int64_t>{0, 0});
}
