// The accuracy metrics and the fit of model/Calibration.h, and the lookup of
// model/TuningTable.h, on small hand-made cases whose answers are known.
#include "model/Calibration.h"
#include "model/Predict.h"
#include "model/TuningTable.h"

#include <doctest/doctest.h>

using namespace tilescope::model;

namespace {

Machine h100() {
  std::string error;
  auto m = bundledMachine("h100", &error);
  REQUIRE_MESSAGE(m, error);
  return *m;
}

// A profile of `ctas` CTAs with `n64` m64n64k16 instructions each, one
// tile, nothing loaded: tensor-core work only.
KernelProfile tensorOnly(int64_t ctas, int64_t n64) {
  KernelProfile p;
  p.grid = ctas;
  p.threads = 256;
  p.stages = 4;
  for (int64_t i = 0; i < ctas; ++i) {
    CtaWork w;
    w.wgmmaByN[64] = n64;
    w.consumerWarpgroups = 1;
    w.steps = n64 / 4;
    w.tiles = 1;
    p.ctas.push_back(w);
  }
  p.traced = ctas;
  return p;
}

} // namespace

TEST_CASE("Spearman's rho: perfect, reversed, ties") {
  CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1));
  CHECK(spearman({1, 2, 3, 4}, {40, 30, 20, 10}) == doctest::Approx(-1));
  // Ranks {1.5, 1.5, 3} against {1, 2, 3}: rho = 0.866.
  CHECK(spearman({5, 5, 7}, {1, 2, 3}) == doctest::Approx(0.8660254));
  CHECK(spearman({1}, {1}) == 0);
  CHECK(spearman({2, 2, 2}, {1, 2, 3}) == 0);
}

TEST_CASE("accuracy: rank correlation per shape, median error, predicted best") {
  Machine m = h100();
  // Three points of one shape whose predicted times grow with the work;
  // measured at exactly the predictions except the last, 2x slower.
  std::vector<Sample> samples;
  for (int64_t n : {64, 128, 256}) {
    KernelProfile p = tensorOnly(132, n);
    double us = predict(p, m).us;
    samples.push_back(
        {"n=" + std::to_string(n), "s", us * (n == 256 ? 2.0 : 1.0), p, std::nullopt});
  }
  std::vector<const Sample *> all;
  for (const Sample &s : samples)
    all.push_back(&s);
  Accuracy a = accuracy(all, m);
  CHECK(a.shapes == 1);
  CHECK(a.meanSpearman == doctest::Approx(1));
  CHECK(a.medianAbsError == doctest::Approx(0).epsilon(1e-9));
  CHECK(a.bestWithin5 == 1);
  CHECK(a.perShape[0].predictedBest == "n=64");
  // Measured the other way round: the ranking is reversed, the predicted
  // best is the slowest.
  samples[0].measuredUs = 10 * samples[2].measuredUs;
  a = accuracy(all, m);
  CHECK(a.meanSpearman < 0);
  CHECK(a.bestWithin5 == 0);
  CHECK(a.perShape[0].bestRatio > 1.05);
}

TEST_CASE("accuracy: a point timed in several runs counts once, at its median") {
  Machine m = h100();
  KernelProfile small = tensorOnly(132, 64), big = tensorOnly(132, 128);
  double us = predict(small, m).us;
  // The point the model ranks first was timed three times, once in a fast
  // run; the other point once. Row by row the fast run's row would win;
  // point by point the first point's median is 10% slower than the other.
  std::vector<Sample> samples{{"small", "s", us * 1.1, small, std::nullopt},
                              {"small", "s", us * 0.9, small, std::nullopt},
                              {"small", "s", us * 1.12, small, std::nullopt},
                              {"big", "s", us, big, std::nullopt}};
  std::vector<const Sample *> all;
  for (const Sample &s : samples)
    all.push_back(&s);
  Accuracy a = accuracy(all, m);
  CHECK(a.samples == 4);
  CHECK(a.perShape[0].points == 2);
  CHECK(a.perShape[0].predictedBest == "small");
  CHECK(a.perShape[0].measuredBest == "big");
  CHECK(a.perShape[0].bestRatio == doctest::Approx(1.1));
  CHECK(a.bestWithin5 == 0);
  // Every row is an error sample: |1.1 - 1|, |0.9 - 1|, |1.12 - 1| and the
  // big point's, whose prediction is about twice its time.
  CHECK(a.medianAbsError == doctest::Approx(0.11).epsilon(0.01));
}

TEST_CASE("rankKey: within 0.5% the deeper ring, then the fewer DRAM bytes") {
  Prediction a, b;
  a.us = 100;
  b.us = 100.05; // the same bucket (buckets are rounded logarithms)
  a.stages = 3;
  b.stages = 4;
  CHECK(rankKey(b) < rankKey(a));
  b.stages = 3;
  a.dramBytes = 2e6;
  b.dramBytes = 1e6;
  CHECK(rankKey(b) < rankKey(a));
  b.us = 101; // more than a bucket slower
  CHECK(rankKey(a) < rankKey(b));
}

TEST_CASE("the fit recovers a clock the times were made with") {
  Machine truth = h100();
  truth.clockGHz = 1.3;
  std::vector<Sample> samples;
  for (int64_t ctas : {132, 264, 1000})
    for (int64_t n : {16, 64, 256}) {
      KernelProfile p = tensorOnly(ctas, n);
      samples.push_back({"p", std::to_string(ctas), predict(p, truth).us, p, std::nullopt});
    }
  std::vector<const Sample *> all;
  for (const Sample &s : samples)
    all.push_back(&s);
  Machine start = h100();
  CHECK(fitLoss(all, start) > 0.1);
  Machine fitted = fit(all, start, {{"clock_ghz", 0.5, 3.0}});
  CHECK(fitted.clockGHz == doctest::Approx(1.3).epsilon(0.03));
  CHECK(fitLoss(all, fitted) < fitLoss(all, start) / 5);
  CHECK(machineField(fitted, "not_a_field") == nullptr);
}

TEST_CASE("a tuning table round-trips and picks the nearest bucket") {
  TuningTable t;
  t.kernel = "k";
  t.target = "h100";
  t.entries.push_back(
      {{{"M", 4096}, {"N", 4096}, {"K", 4096}}, "A=1", "h1", 10, 9.5, "proved", ""});
  t.entries.push_back({{{"M", 512}, {"N", 512}, {"K", 8192}}, "A=2", "h2", 5, 0, "proved", ""});
  t.entries.push_back({{{"M", 600}, {"N", 600}, {"K", 8000}}, "", "", 0, 0, "", "none proved"});
  t.entries[0].evictFirst = {"A"}; // lower --evict-first A with this entry's point
  std::string error;
  auto back = parseTuningTable(tuningTableJson(t), &error);
  REQUIRE_MESSAGE(back, error);
  CHECK(back->entries.size() == 3);
  CHECK(back->entries[0].evictFirst == std::vector<std::string>{"A"});
  CHECK(back->entries[1].evictFirst.empty());
  CHECK(back->entries[2].point.empty());
  CHECK(back->entries[2].reason == "none proved");
  CHECK(back->entries[0].measuredUs == doctest::Approx(9.5)); // tune --measured
  CHECK(back->entries[1].measuredUs == 0);
  auto near = nearestEntries(*back, {{"M", 3000}, {"N", 5000}, {"K", 2000}});
  REQUIRE(near.size() == 2); // the entry without a point is never picked
  CHECK(near[0]->point == "A=1");
  near = nearestEntries(*back, {{"M", 600}, {"N", 600}, {"K", 8000}});
  CHECK(near[0]->point == "A=2");
  CHECK_FALSE(parseTuningTable("{\"kernel\": \"k\"}", &error));
  CHECK_FALSE(parseTuningTable(
      "{\"kernel\": \"k\", \"entries\": [{\"shape\": {\"M\": -1}, \"point\": \"A=1\"}]}", &error));
  CHECK(error.find("positive") != std::string::npos);
  CHECK_FALSE(parseTuningTable("{\"kernel\": \"k\", \"entries\": [{\"shape\": {\"M\": 1}, "
                               "\"point\": \"A=1\", \"evict_first\": [1]}]}",
                               &error));
  CHECK(error.find("evict_first") != std::string::npos);
}
