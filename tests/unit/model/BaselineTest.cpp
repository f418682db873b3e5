// The cuBLAS-calibrated roofline (model/Baseline.h): its arithmetic, and the
// shipped fit against the cuBLAS times it was fitted on.
#include "model/Baseline.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

using namespace tilescope::model;

namespace {

Machine h100() {
  std::string error;
  auto m = bundledMachine("h100", &error);
  REQUIRE_MESSAGE(m, error);
  return *m;
}

// cuBLAS's median time (us) per shape of tests/model/h100_calib.csv, with
// the shape's roofline on `m`.
std::vector<std::pair<double, double>> cublasPoints(const Machine &m) {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/tests/model/h100_calib.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line); // header: name,point,M,N,K,ms,ms_min,cublas_ms,...
  std::map<std::tuple<double, double, double>, std::vector<double>> byShape;
  while (std::getline(in, line)) {
    // The point is quoted and holds commas: split after its closing quote.
    size_t close = line.find("\",");
    REQUIRE(close != std::string::npos);
    std::stringstream rest(line.substr(close + 2));
    std::vector<std::string> cols;
    std::string col;
    while (std::getline(rest, col, ','))
      cols.push_back(col);
    REQUIRE(cols.size() >= 6); // M, N, K, ms, ms_min, cublas_ms
    byShape[{std::stod(cols[0]), std::stod(cols[1]), std::stod(cols[2])}].push_back(
        std::stod(cols[5]) * 1000);
  }
  std::vector<std::pair<double, double>> points;
  for (auto &[shape, times] : byShape) {
    auto [M, N, K] = shape;
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    std::string why;
    auto b = baselineFor(2 * M * N * K, 2 * (M * K + N * K + M * N), m, &why);
    REQUIRE_MESSAGE(b, why);
    points.emplace_back(b->rooflineUs, median);
  }
  return points;
}

double loss(const std::vector<std::pair<double, double>> &points, double factor, double overhead) {
  double sum = 0;
  for (auto [roofline, cublas] : points)
    sum += std::abs(std::log((factor * roofline + overhead) / cublas));
  return sum;
}

} // namespace

TEST_CASE("baseline: the roofline is the longer of compute at peak and bytes at DRAM rate") {
  Machine m = h100();
  std::string why;
  // 4096^3 bf16: 137.4 GFLOP at 989.4 TFLOP/s = 138.9 us; 100.7 MB at 3.35 TB/s = 30.0 us.
  auto b = baselineFor(2.0 * 4096 * 4096 * 4096, 2.0 * 3 * 4096 * 4096, m, &why);
  REQUIRE(b);
  CHECK(b->computeUs == doctest::Approx(138.91).epsilon(0.001));
  CHECK(b->memoryUs == doctest::Approx(30.05).epsilon(0.001));
  CHECK(b->rooflineUs == b->computeUs);
  CHECK(b->cublasUs == doctest::Approx(1.34 * 138.91 + 10.2).epsilon(0.001));
  // A skinny problem is bound by its bytes.
  auto skinny = baselineFor(2.0 * 16384 * 8 * 4096, 2.0 * (16384 * 4096 + 8 * 4096), m, &why);
  REQUIRE(skinny);
  CHECK(skinny->rooflineUs == skinny->memoryUs);
}

TEST_CASE("baseline: a machine without the cuBLAS fit has none") {
  Machine m = h100();
  m.cublasRooflineFactor = 0;
  std::string why;
  CHECK_FALSE(baselineFor(1e9, 1e6, m, &why));
  CHECK(why.find("cublas_roofline_factor") != std::string::npos);
}

TEST_CASE("baseline: the shipped cuBLAS fit is the best on its grid and within 6% at the median") {
  Machine m = h100();
  auto points = cublasPoints(m);
  REQUIRE(points.size() == 22);
  double shipped = loss(points, m.cublasRooflineFactor, m.cublasOverheadUs);
  for (double df : {-0.01, 0.0, 0.01})
    for (double dov : {-0.1, 0.0, 0.1})
      CHECK(loss(points, m.cublasRooflineFactor + df, m.cublasOverheadUs + dov) >= shipped - 1e-9);
  std::vector<double> errors;
  for (auto [roofline, cublas] : points)
    errors.push_back(
        std::abs((m.cublasRooflineFactor * roofline + m.cublasOverheadUs) / cublas - 1));
  std::sort(errors.begin(), errors.end());
  CHECK(errors[errors.size() / 2] < 0.06);
}
