// The Z3 context of one kernel's proofs (proof/ProofContext.h): a scope
// gives the thread a context of its own, which no earlier proof has built
// terms in, and restores the one before when it ends.
#include "proof/ProofContext.h"
#include "proof/SharedContext.h"

#include <doctest/doctest.h>

#include <vector>

using tilescope::ProofContextScope;
using tilescope::detail::sharedContext;

namespace {

// The AST ids of the terms one "proof" builds: Z3 numbers terms in the order
// a context creates them, and its rewriters order sums by those numbers.
std::vector<unsigned> proofTermIds(z3::context &ctx) {
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y");
  std::vector<unsigned> ids;
  for (const z3::expr &e : {x, y, x * 3, x * 3 + y, (x * 3 + y) % 8})
    ids.push_back(e.id());
  return ids;
}

} // namespace

TEST_CASE("a proof context scope gives a fresh context and restores the one before") {
  z3::context &outer = sharedContext();
  {
    ProofContextScope scope;
    z3::context &inner = sharedContext();
    CHECK(&inner != &outer);
    CHECK(&sharedContext() == &inner);
    {
      ProofContextScope nested;
      CHECK(&sharedContext() != &inner);
    }
    CHECK(&sharedContext() == &inner);
  }
  CHECK(&sharedContext() == &outer);
}

TEST_CASE("a kernel's terms are numbered as in a new context, whatever was proved before") {
  std::vector<unsigned> reference;
  {
    z3::context alone;
    reference = proofTermIds(alone);
  }
  {
    // An earlier kernel's proof builds some of the same terms and others.
    ProofContextScope earlier;
    z3::context &ctx = sharedContext();
    z3::expr z = ctx.int_const("z"), y = ctx.int_const("y");
    z3::expr built = z * 5 + y * 2;
    CHECK(built.id() != 0);
  }
  ProofContextScope next;
  CHECK(proofTermIds(sharedContext()) == reference);
}
