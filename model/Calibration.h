// The performance model against measured times (docs/model.md): the
// accuracy metrics of issue 15 and the fit of a machine description's few
// free numbers.
//
// A sample is one (point, shape) pair with its measured time and the
// kernel's profile there (model/Profile.h), traced once: fitting re-runs
// only model/Predict.h. Metrics, over the shapes given:
//  - Spearman's rank correlation between predicted and measured time among
//    the points of one shape (ties ranked by their mean rank), averaged over
//    the shapes with at least 3 points; a point timed in several runs (several
//    samples) counts once, at the median of its samples;
//  - the median of |predicted - measured| / measured over the samples;
//  - the fraction of shapes where the point the model ranks first
//    (model::rankKey, as `tune`) runs within 5% of the fastest measured
//    point, both at their medians.
// The fit is a coordinate descent on the sum over samples of
// |log(predicted / measured)|, each free number multiplied by factors from
// 2 down to 1.02 while that lowers the sum, kept inside [lowest, highest].
#pragma once

#include "model/Machine.h"
#include "model/Predict.h"
#include "model/Profile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::model {

struct Sample {
  std::string point, shape; // "BM=..", "4096x4096x4096"
  double measuredUs = 0;
  KernelProfile profile;
  // What predicting the profile computes once (model/Predict.h); the fitted
  // numbers do not change it.
  std::optional<PredictCache> cache;
};

struct SamplePrediction {
  std::string point;
  double predictedUs = 0, measuredUs = 0;
  std::string boundBy;
};

struct ShapeAccuracy {
  std::string shape;
  size_t points = 0;
  double spearman = 0;
  std::string predictedBest, measuredBest;
  double bestRatio = 1; // measured time of the predicted best / measured best
  std::vector<SamplePrediction> samples;
};

struct Accuracy {
  size_t samples = 0, shapes = 0;
  double meanSpearman = 0;   // over shapes with >= 3 points
  double medianAbsError = 0; // relative
  double bestWithin5 = 0;    // fraction of shapes
  std::vector<ShapeAccuracy> perShape;
};

// Spearman's rho of two equally long series (0 when shorter than 2 or constant).
double spearman(const std::vector<double> &a, const std::vector<double> &b);

// The metrics over `samples` (their predictions on `machine`).
Accuracy accuracy(const std::vector<const Sample *> &samples, const Machine &machine);

// A free number of the machine description: its key in the JSON file.
struct FreeNumber {
  std::string key;
  double lowest = 0, highest = 0;
};

// The machine's field of a JSON key ("clock_ghz"), or null.
double *machineField(Machine &machine, const std::string &key);

// The machine fitted on `samples`, starting from `start`.
Machine fit(const std::vector<const Sample *> &samples, const Machine &start,
            const std::vector<FreeNumber> &free, int rounds = 6);

// The objective of the fit (sum of |log(predicted / measured)|).
double fitLoss(const std::vector<const Sample *> &samples, const Machine &machine);

} // namespace tilescope::model
