#include "model/Calibration.h"

#include "model/Predict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace tilescope::model {

namespace {

// Ranks 1..n, ties at their mean rank.
std::vector<double> ranks(const std::vector<double> &v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
      ++j;
    double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k)
      r[order[k]] = mean;
    i = j + 1;
  }
  return r;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

double spearman(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size() || a.size() < 2)
    return 0;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

Accuracy accuracy(const std::vector<const Sample *> &samples, const Machine &machine) {
  Accuracy out;
  out.samples = samples.size();
  // Per shape, per point: its prediction and its measured rows (a point
  // timed in several runs has several; it counts as one point, at the median
  // of its rows).
  struct PointRows {
    Prediction prediction;
    std::vector<double> measured;
  };
  std::map<std::string, std::map<std::string, PointRows>> byShape;
  std::map<std::string, std::vector<SamplePrediction>> predictions;
  std::vector<double> errors;
  for (const Sample *s : samples) {
    Prediction p = predict(s->profile, machine, s->cache ? &*s->cache : nullptr);
    predictions[s->shape].push_back({s->point, p.us, s->measuredUs, p.boundBy});
    errors.push_back(std::fabs(p.us - s->measuredUs) / s->measuredUs);
    PointRows &rows = byShape[s->shape][s->point];
    rows.prediction = std::move(p);
    rows.measured.push_back(s->measuredUs);
  }
  out.medianAbsError = median(errors);
  double rhoSum = 0, within = 0;
  size_t ranked = 0;
  for (const auto &[shape, points] : byShape) {
    ShapeAccuracy a;
    a.shape = shape;
    a.points = points.size();
    std::vector<double> predicted, measured;
    const std::string *pBest = nullptr, *mBest = nullptr;
    double pBestUs = 0, mBestUs = 0;
    for (const auto &[point, rows] : points) {
      double us = median(rows.measured);
      predicted.push_back(rows.prediction.us);
      measured.push_back(us);
      // The predicted best is the point `tune` would rank first.
      if (!pBest || rankKey(rows.prediction) < rankKey(points.at(*pBest).prediction))
        pBest = &point, pBestUs = us;
      if (!mBest || us < mBestUs)
        mBest = &point, mBestUs = us;
    }
    a.spearman = spearman(predicted, measured);
    a.predictedBest = *pBest;
    a.measuredBest = *mBest;
    a.bestRatio = pBestUs / mBestUs;
    a.samples = std::move(predictions[shape]);
    if (points.size() >= 3) {
      rhoSum += a.spearman;
      ++ranked;
    }
    within += a.bestRatio <= 1.05 ? 1 : 0;
    out.perShape.push_back(std::move(a));
  }
  out.shapes = byShape.size();
  out.meanSpearman = ranked ? rhoSum / static_cast<double>(ranked) : 0;
  out.bestWithin5 = out.shapes ? within / static_cast<double>(out.shapes) : 0;
  return out;
}

double *machineField(Machine &m, const std::string &key) {
  const std::pair<const char *, double *> fields[] = {
      {"clock_ghz", &m.clockGHz},
      {"wgmma_efficiency_n64", &m.wgmmaEfficiencyN64},
      {"wgmma_efficiency_n128", &m.wgmmaEfficiencyN128},
      {"wgmma_efficiency_n256", &m.wgmmaEfficiencyN256},
      {"wgmma_efficiency_n192", &m.wgmmaEfficiencyN192},
      {"wgmma_drain_cycles", &m.wgmmaDrainCycles},
      {"smem_bytes_per_clk_per_sm", &m.smemBytesPerClkPerSm},
      {"l2_to_smem_tb_s", &m.l2ToSmemTBs},
      {"dram_tb_s", &m.dramTBs},
      {"load_latency_cycles", &m.loadLatencyCycles},
      {"epilogue_cycles", &m.epilogueCycles},
      {"launch_us", &m.launchUs},
      {"dsmem_bytes_per_clk_per_sm", &m.dsmemBytesPerClkPerSm},
      {"cluster_barrier_cycles", &m.clusterBarrierCycles},
      {"misaligned_pitch16_factor", &m.misalignedPitch16Factor},
      {"misaligned_pitch32_factor", &m.misalignedPitch32Factor},
      {"dram_exposed_fraction", &m.dramExposedFraction},
      {"l2_to_smem_bytes_per_clk_per_sm_max", &m.l2ToSmemBytesPerClkPerSmMax},
      {"l2_kept_fraction", &m.l2KeptFraction},
      {"l2_to_smem_first_tb_s", &m.l2ToSmemFirstTBs},
      {"l2_to_smem_shared_tb_s", &m.l2ToSmemSharedTBs},
      {"smem_clock_ghz", &m.smemClockGHz},
  };
  for (const auto &[name, field] : fields)
    if (key == name)
      return field;
  return nullptr;
}

double fitLoss(const std::vector<const Sample *> &samples, const Machine &machine) {
  double loss = 0;
  for (const Sample *s : samples)
    loss += std::fabs(
        std::log(predict(s->profile, machine, s->cache ? &*s->cache : nullptr).us / s->measuredUs));
  return loss;
}

Machine fit(const std::vector<const Sample *> &samples, const Machine &start,
            const std::vector<FreeNumber> &free, int rounds) {
  Machine best = start;
  double bestLoss = fitLoss(samples, best);
  const double factors[] = {2.0, 1.4, 1.15, 1.05, 1.02};
  for (int round = 0; round < rounds; ++round) {
    bool improved = false;
    for (double f : factors)
      for (const FreeNumber &n : free)
        for (double step : {f, 1 / f}) {
          for (;;) {
            Machine trial = best;
            double *v = machineField(trial, n.key);
            if (!v)
              break;
            double next = std::clamp(*v * step, n.lowest, n.highest);
            if (next == *v)
              break;
            *v = next;
            double loss = fitLoss(samples, trial);
            if (!(loss < bestLoss - 1e-9))
              break;
            best = trial;
            bestLoss = loss;
            improved = true;
          }
        }
    if (!improved)
      break;
  }
  return best;
}

} // namespace tilescope::model
