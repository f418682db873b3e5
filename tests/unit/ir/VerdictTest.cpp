#include "ir/Verdict.h"

#include <doctest/doctest.h>

using namespace tilescope;

TEST_CASE("an open obligation makes a proof unknown, never proved") {
  ProofOutcome o;
  CHECK(o.verdict() == Verdict::Proved);
  o.unknown.push_back({llvm::SMLoc(), "race on C: Z3 gave up"});
  CHECK(o.verdict() == Verdict::Unknown);
  CHECK(verdictExitCode(o.verdict()) == 3);
  CHECK(verdictName(o.verdict()) == "unknown");
  o.budgetExceeded = true;
  CHECK(o.verdict() == Verdict::Budget);
  o.findings = 1;
  CHECK(o.verdict() == Verdict::Finding);
  CHECK(verdictExitCode(Verdict::Finding) == 1);
}

TEST_CASE("verdicts combine to the weightiest") {
  CHECK(combine(Verdict::Proved, Verdict::Unknown) == Verdict::Unknown);
  CHECK(combine(Verdict::Unknown, Verdict::Proved) == Verdict::Unknown);
  CHECK(combine(Verdict::Unknown, Verdict::Budget) == Verdict::Budget);
  CHECK(combine(Verdict::Finding, Verdict::Budget) == Verdict::Finding);
  CHECK(combine(Verdict::Proved, Verdict::Proved) == Verdict::Proved);
  CHECK(verdictExitCode(Verdict::Proved) == 0);
  CHECK(verdictExitCode(Verdict::Budget) == 4);
}
