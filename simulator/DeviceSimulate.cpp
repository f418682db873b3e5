#include "simulator/DeviceSimulate.h"

#include "ir/ConcreteEval.h"

#include "simulator/Numerics.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tilescope::sim {

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Inputs: k / 128 for k in [-128, 128) (exact in bf16 and wider), different
// on every device, tensor and element.
void fillInput(HostTensor &t, uint64_t seed, int device, int tensor) {
  for (int64_t i = 0; i < t.elements(); ++i) {
    uint64_t h = mix(seed ^ (uint64_t(device) << 56) ^ (uint64_t(tensor) << 48) ^ uint64_t(i));
    double v = double(int64_t(h % 256) - 128) / 128.0;
    t.setBits(i, isFloat(t.dtype) ? encodeFloat(t.dtype, v) : encodeInt(t.dtype, int64_t(h % 7)));
    t.written[i] = 1;
  }
}

void poison(HostTensor &t) {
  for (int64_t i = 0; i < t.elements(); ++i) {
    t.setBits(i, isFloat(t.dtype) ? encodeFloat(t.dtype, std::numeric_limits<double>::quiet_NaN())
                                  : encodeInt(t.dtype, -1));
    t.written[i] = 0;
  }
}

// A matrix of device p: rows x cols, element (i, j), as the operand is
// written (transposed operands are stored [cols, rows]).
struct Matrix {
  const HostTensor *t = nullptr;
  bool transposed = false;
  int64_t rows = 0, cols = 0;
  double at(int64_t i, int64_t j) const {
    int64_t flat = transposed ? j * rows + i : i * cols + j;
    return decodeFloat(t->dtype, t->bitsAt(flat));
  }
};

struct Expected {
  double value = 0;
  double tolerance = 0;
};

} // namespace

bool isDeviceProblem(std::string_view kind) {
  return kind == "allreduce" || kind == "all_gather" || kind == "reduce_scatter" ||
         kind == "tp_gemm_allreduce" || kind == "allgather_gemm" || kind == "gemm_reduce_scatter";
}

std::vector<ProblemPlacement> problemPlacements(const ProblemSpec &problem) {
  using Kind = PlacementReading::Kind;
  const PlacementReading replicated{Kind::Replicated, 0};
  auto blocked = [](size_t dim) { return PlacementReading{Kind::Blocked, dim}; };
  std::vector<ProblemPlacement> out;
  auto add = [&](const ProblemOperand &o, PlacementReading r) {
    out.push_back({o.name, r, problem.text});
  };
  const std::string &kind = problem.kind;
  if (problem.outputs.size() != 1)
    return out;
  const ProblemOperand &result = problem.outputs[0];
  if (kind == "allreduce" || kind == "all_gather" || kind == "reduce_scatter") {
    if (problem.inputs.size() != 1)
      return out;
    add(problem.inputs[0], blocked(0));
    add(result, kind == "reduce_scatter" ? blocked(0) : replicated);
    return out;
  }
  if (problem.inputs.size() != 2)
    return out;
  // A is M x K, stored [M, K] (or [K, M] written A^T); B^T is stored [N, K]
  // (B, not transposed, [K, N]).
  const ProblemOperand &a = problem.inputs[0], &b = problem.inputs[1];
  size_t aK = a.transposed ? 0 : 1, aM = 1 - aK;
  size_t bK = b.transposed ? 1 : 0, bN = 1 - bK;
  if (kind == "tp_gemm_allreduce" || kind == "gemm_reduce_scatter") {
    add(a, blocked(aK));
    add(b, blocked(bK));
    add(result, kind == "tp_gemm_allreduce" ? replicated : blocked(0));
  } else if (kind == "allgather_gemm") {
    add(a, blocked(aM));
    add(b, blocked(bN));
    add(result, blocked(1));
  }
  return out;
}

int DeviceSimulation::exitCode() const {
  if (run.run.stoppedByBudget())
    return 4;
  if (!run.run.ok() || !run.run.races.empty() || !run.unmatchedSignals.empty() || mismatches ||
      unwritten || !placementFindings.empty())
    return 1;
  return checked ? 0 : 3;
}

std::string DeviceSimulation::verdict() const {
  switch (exitCode()) {
  case 0:
    return "proved";
  case 1:
    return "finding";
  case 4:
    return "budget";
  default:
    return "unknown";
  }
}

std::optional<DeviceSimulation> simulateDevices(const Kernel &kernel, const ArgValues &args,
                                                const ProblemSpec *problem,
                                                const DeviceSimOptions &options,
                                                Diagnostics &diag) {
  const Expr &count = kernel.launch.devices.front();
  int64_t n = 0;
  if (count->kind == ExprKind::IntImm) {
    n = as<IntImm>(count).value;
  } else if (count->kind == ExprKind::Var) {
    auto it = args.ints.find(as<Var>(count).name);
    if (it == args.ints.end()) {
      diag.error(count->loc,
                 fmt::format("no device count: give --args {}=...", as<Var>(count).name));
      return std::nullopt;
    }
    n = it->second;
  } else {
    diag.error(count->loc, "the simulator takes devices(N) with N a name or a constant");
    return std::nullopt;
  }
  if (n < 1 || n > 8) {
    diag.error(count->loc, fmt::format("the device count must be in [1, 8], not {}", n));
    return std::nullopt;
  }
  DeviceSimulation sim;
  sim.devices = static_cast<int>(n);
  std::vector<Program> programs;
  for (int d = 0; d < n; ++d) {
    ArgValues a = args;
    a.ints["devid"] = d;
    a.ints["ndev"] = n;
    if (count->kind == ExprKind::Var)
      a.ints[as<Var>(count).name] = n;
    auto p = bindProgram(kernel, a, diag);
    if (!p)
      return std::nullopt;
    programs.push_back(std::move(*p));
  }
  std::vector<std::vector<HostTensor>> &memory = sim.memory;
  for (int d = 0; d < n; ++d)
    memory.push_back(allocateTensors(programs[d]));
  auto index = [&](const std::string &name) {
    for (size_t i = 0; i < memory[0].size(); ++i)
      if (memory[0][i].name == name)
        return static_cast<int>(i);
    return -1;
  };
  std::vector<int> inputs, outputs;
  if (problem) {
    if (!isDeviceProblem(problem->kind)) {
      diag.error(kernel.loc, fmt::format("'{}' is not a device problem (allreduce, all_gather, "
                                         "reduce_scatter, tp_gemm_allreduce, allgather_gemm, "
                                         "gemm_reduce_scatter)",
                                         problem->kind));
      return std::nullopt;
    }
    // The three device problems with a GEMM in front of or behind the collective.
    bool gemm = problem->kind == "tp_gemm_allreduce" || problem->kind == "allgather_gemm" ||
                problem->kind == "gemm_reduce_scatter";
    size_t wantInputs = gemm ? 2 : 1;
    if (problem->inputs.size() != wantInputs || problem->outputs.size() != 1) {
      diag.error(kernel.loc, fmt::format("{} takes {} input{} and one output", problem->kind,
                                         wantInputs, wantInputs == 1 ? "" : "s"));
      return std::nullopt;
    }
    for (const ProblemOperand &o : problem->inputs)
      inputs.push_back(index(o.name));
    outputs.push_back(index(problem->outputs[0].name));
    for (size_t k = 0; k < inputs.size() + 1; ++k) {
      int i = k < inputs.size() ? inputs[k] : outputs[0];
      const std::string &name =
          k < inputs.size() ? problem->inputs[k].name : problem->outputs[0].name;
      if (i < 0) {
        diag.error(kernel.loc,
                   fmt::format("the problem names '{}', which is no tensor parameter", name));
        return std::nullopt;
      }
      if (!isFloat(memory[0][i].dtype) || (gemm && memory[0][i].shape.size() != 2)) {
        diag.error(kernel.loc, fmt::format("the problem's '{}' must be a floating-point {}", name,
                                           gemm ? "matrix" : "tensor"));
        return std::nullopt;
      }
    }
  }
  // Each tensor's declared placement at these sizes (ir/Placement.h): the
  // run checks peer puts and gets against them, and a replicated input holds
  // the same values on every device.
  std::vector<std::optional<Layout>> placements(memory[0].size());
  std::vector<bool> replicated(memory[0].size(), false);
  LayoutNumberValue size = [&](const Expr &e) {
    return evalConcrete(e, [&](const Expr &leaf) -> std::optional<int64_t> {
      if (leaf->kind != ExprKind::Var)
        return std::nullopt;
      auto it = programs[0].symbols.find(as<Var>(leaf).name);
      return it == programs[0].symbols.end() ? std::nullopt : std::optional<int64_t>(it->second);
    });
  };
  for (const Param &param : kernel.params) {
    int i = param.placement ? index(param.name) : -1;
    if (i < 0)
      continue;
    std::string why;
    llvm::SMLoc at;
    auto reading = readPlacement(kernel, param, &why, &at);
    placements[i] = placementLayout(param, size, &why);
    replicated[i] = reading && reading->kind == PlacementReading::Kind::Replicated;
  }
  for (int d = 0; d < n; ++d)
    for (size_t i = 0; i < memory[d].size(); ++i) {
      HostTensor &t = memory[d][i];
      if (std::find(inputs.begin(), inputs.end(), int(i)) != inputs.end())
        fillInput(t, options.seed, replicated[i] ? 0 : d, int(i));
      else if (std::find(outputs.begin(), outputs.end(), int(i)) != outputs.end())
        poison(t);
      else // flags and scratch start at zero, as the runtime allocates them
        for (int64_t e = 0; e < t.elements(); ++e)
          t.setBits(e, 0);
    }
  std::vector<std::vector<HostTensor>> before;
  if (problem)
    before = memory; // the reference reads the inputs as they were
  if (problem)
    for (const PlacementDisagreement &d :
         placementDisagreements(kernel, problemPlacements(*problem)))
      sim.placementFindings.push_back(d.message);
  if (!sim.placementFindings.empty())
    return sim;

  EngineOptions engine;
  engine.seed = options.seed;
  engine.detectRaces = options.detectRaces;
  engine.maxSteps = options.maxSteps;
  engine.where = options.where;
  sim.run = runDevices(programs, memory, engine, placements);
  if (!problem || !sim.run.run.ok())
    return sim;

  // The reference, in float64, on every device's output.
  sim.checked = true;
  const std::string &kind = problem->kind;
  int out = outputs[0];
  auto check = [&](int d, int64_t flat, const Expected &e) {
    const HostTensor &t = memory[d][out];
    ++sim.compared;
    if (!t.written[flat]) {
      if (sim.unwritten++ == 0 && sim.firstMismatch.empty())
        sim.firstMismatch = fmt::format("device {}: {}[{}] was never written", d, t.name, flat);
      return;
    }
    double got = decodeFloat(t.dtype, t.bitsAt(flat));
    if (!(std::fabs(got - e.value) <= e.tolerance)) {
      if (sim.mismatches++ == 0)
        sim.firstMismatch = fmt::format("device {}: {} element {} = {}, reference {} (tolerance "
                                        "{:.3g})",
                                        d, t.name, flat, got, e.value, e.tolerance);
    }
  };
  // rounding of one value to the output's dtype, relative
  const numerics::FloatFormat *outFormat = numerics::floatFormat(memory[0][out].dtype);
  double unit = std::ldexp(1.0, -(outFormat ? outFormat->manBits : 23));
  if (kind == "allreduce" || kind == "all_gather" || kind == "reduce_scatter") {
    const std::vector<int64_t> &xs = memory[0][inputs[0]].shape;
    int64_t elems = memory[0][inputs[0]].elements();
    int64_t rows = xs.empty() ? 1 : xs[0];
    int64_t rowElems = rows ? elems / rows : 0;
    auto x = [&](int p, int64_t i) {
      const HostTensor &t = before[p][inputs[0]];
      return decodeFloat(t.dtype, t.bitsAt(i));
    };
    int64_t want = kind == "all_gather" ? elems * n : kind == "reduce_scatter" ? elems / n : elems;
    if (memory[0][out].elements() != want || (kind == "reduce_scatter" && rows % n != 0)) {
      diag.error(kernel.loc, fmt::format("{}: the output needs {} elements on {} devices, it has "
                                         "{}",
                                         kind, want, n, memory[0][out].elements()));
      return std::nullopt;
    }
    for (int d = 0; d < n; ++d)
      for (int64_t i = 0; i < want; ++i) {
        Expected e;
        if (kind == "all_gather") {
          e.value = x(int(i / elems), i % elems);
        } else {
          int64_t src = kind == "reduce_scatter" ? d * (rows / n) * rowElems + i : i;
          double mag = 0;
          for (int p = 0; p < n; ++p) {
            e.value += x(p, src);
            mag += std::fabs(x(p, src));
          }
          e.tolerance = unit * (std::fabs(e.value) + mag * std::ldexp(1.0, -16));
        }
        check(d, i, e);
      }
    return sim;
  }
  // the GEMM problems
  bool bT = problem->inputs[1].transposed, aT = problem->inputs[0].transposed;
  auto matrix = [&](int p, int which) {
    const HostTensor &t = before[p][inputs[which]];
    bool tr = which == 0 ? aT : bT; // B^T is stored [N, K]: B is K x N
    Matrix m{&t, tr, tr ? t.shape[1] : t.shape[0], tr ? t.shape[0] : t.shape[1]};
    return m;
  };
  Matrix a0 = matrix(0, 0), b0 = matrix(0, 1);
  int64_t M = a0.rows, K = a0.cols, N = b0.cols;
  if (b0.rows != K) {
    diag.error(kernel.loc, fmt::format("{}: A has {} columns, B {} rows", kind, K, b0.rows));
    return std::nullopt;
  }
  const HostTensor &c0 = memory[0][out];
  int64_t cRows = kind == "allgather_gemm"        ? M * n
                  : kind == "gemm_reduce_scatter" ? (M % n ? -1 : M / n)
                                                  : M;
  if (c0.shape[0] != cRows || c0.shape[1] != N) {
    diag.error(kernel.loc, fmt::format("{} on {} devices: C must be [{}, {}], not [{}, {}]", kind,
                                       n, cRows, N, c0.shape[0], c0.shape[1]));
    return std::nullopt;
  }
  // Every device's operands as float64 matrices, once: A[p] M x K, B[p] K x N.
  std::vector<std::vector<double>> as(n), bs(n);
  for (int p = 0; p < n; ++p) {
    Matrix a = matrix(p, 0), b = matrix(p, 1);
    as[p].resize(M * K);
    bs[p].resize(K * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k)
        as[p][i * K + k] = a.at(i, k);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        bs[p][k * N + j] = b.at(k, j);
  }
  // Row i of A[p] B[q]: its values and the sums of the products' magnitudes.
  std::vector<double> row(N), rowMag(N);
  auto product = [&](int p, int q, int64_t i) {
    std::fill(row.begin(), row.end(), 0.0);
    std::fill(rowMag.begin(), rowMag.end(), 0.0);
    for (int64_t k = 0; k < K; ++k) {
      double a = as[p][i * K + k];
      const double *b = &bs[q][k * N];
      for (int64_t j = 0; j < N; ++j) {
        row[j] += a * b[j];
        rowMag[j] += std::fabs(a * b[j]);
      }
    }
  };
  std::vector<Expected> rowWant(N);
  std::vector<double> parts(N), mags(N);
  auto finish = [&](int d, int64_t i) {
    for (int64_t j = 0; j < N; ++j) {
      // partial products rounded to the output dtype, their sum rounded
      // again, and the fp32 sums of the tensor cores
      rowWant[j].tolerance =
          2 * unit * (parts[j] + std::fabs(rowWant[j].value)) + std::ldexp(mags[j], -18);
      check(d, i * N + j, rowWant[j]);
    }
  };
  auto sumOverDevices = [&](int64_t r) { // the reduced row r, into rowWant
    for (int64_t j = 0; j < N; ++j) {
      rowWant[j].value = 0;
      parts[j] = mags[j] = 0;
    }
    for (int p = 0; p < n; ++p) {
      product(p, p, r);
      for (int64_t j = 0; j < N; ++j) {
        rowWant[j].value += row[j];
        parts[j] += std::fabs(row[j]);
        mags[j] += rowMag[j];
      }
    }
  };
  if (kind == "tp_gemm_allreduce") {
    for (int64_t i = 0; i < M; ++i) {
      sumOverDevices(i); // the same on every device
      for (int d = 0; d < n; ++d)
        finish(d, i);
    }
  } else if (kind == "gemm_reduce_scatter") {
    for (int d = 0; d < n; ++d)
      for (int64_t i = 0; i < cRows; ++i) {
        sumOverDevices(d * cRows + i);
        finish(d, i);
      }
  } else { // allgather_gemm: row i of the gathered A is row i % M of device i / M
    for (int d = 0; d < n; ++d)
      for (int64_t i = 0; i < cRows; ++i) {
        product(int(i / M), d, i % M);
        for (int64_t j = 0; j < N; ++j) {
          rowWant[j].value = row[j];
          parts[j] = std::fabs(row[j]);
          mags[j] = rowMag[j];
        }
        finish(d, i);
      }
  }
  return sim;
}

} // namespace tilescope::sim
