#include "simulator/Simulate.h"

#include "simulator/Coverage.h"
#include "simulator/Packed.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <random>

namespace tilescope::sim {

std::string_view simVerdictName(SimVerdict v) {
  switch (v) {
  case SimVerdict::Proved:
    return "proved";
  case SimVerdict::Finding:
    return "finding";
  case SimVerdict::Unknown:
    return "unknown";
  case SimVerdict::Budget:
    return "budget";
  }
  return "unknown";
}

int simVerdictExitCode(SimVerdict v) {
  switch (v) {
  case SimVerdict::Proved:
    return 0;
  case SimVerdict::Finding:
    return 1;
  case SimVerdict::Unknown:
    return 3;
  case SimVerdict::Budget:
    return 4;
  }
  return 3;
}

uint64_t freshSeed() {
  std::random_device device;
  // Two 32-bit draws; a seed that fits in 53 bits stays exact in JSON.
  uint64_t s = (uint64_t{device()} << 32) | device();
  return s & ((uint64_t{1} << 53) - 1);
}

std::vector<std::string> sampleScalars(const Kernel &kernel, ArgValues &args, uint64_t seed,
                                       ScalarStratum stratum,
                                       const std::set<std::string> &signedNames) {
  // The part of [0, 1] that u is drawn from.
  const double from = stratum == ScalarStratum::Top ? 0.8 : 0.0;
  const double to = stratum == ScalarStratum::Bottom ? 0.2 : 1.0;
  std::vector<std::string> notes;
  for (const Param &p : kernel.params) {
    if (p.isTensor || !isFloat(p.dtype) || args.floats.count(p.name) || args.ints.count(p.name))
      continue;
    std::mt19937_64 rng(seed ^ std::hash<std::string>()("scalar " + p.name));
    std::uniform_real_distribution<double> unit(from, to);
    std::string lower = p.name;
    for (char &c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double v = lower.find("eps") != std::string::npos ? std::pow(10.0, -6.0 + 5.0 * unit(rng))
                                                      : std::exp2(-3.0 + 4.0 * unit(rng));
    if (signedNames.count(p.name) && lower.find("eps") == std::string::npos &&
        (stratum == ScalarStratum::Bottom || (stratum == ScalarStratum::Whole && rng() % 2)))
      v = -v;
    args.floats[p.name] = v;
    notes.push_back(fmt::format("scalar '{}' sampled: {:.6g}", p.name, v));
  }
  return notes;
}

bool isProblemOutput(const BoundProblem *problem, int index) {
  return problem && std::find(problem->outputs.begin(), problem->outputs.end(), index) !=
                        problem->outputs.end();
}

namespace {

// Every element of `t` set to `word` (as setBits sets one): byte-sized
// elements by doubling the filled prefix, packed ones one at a time.
void fillElements(HostTensor &t, uint64_t word) {
  const int64_t n = t.elements();
  if (isPacked(t.dtype) || n == 0) {
    for (int64_t i = 0; i < n; ++i)
      t.setBits(i, word);
    return;
  }
  t.setBits(0, word);
  const size_t total = static_cast<size_t>(n * dtypeBytes(t.dtype));
  for (size_t filled = static_cast<size_t>(dtypeBytes(t.dtype)); filled < total; filled *= 2)
    std::memcpy(t.bytes.data() + filled, t.bytes.data(), std::min(filled, total - filled));
}

} // namespace

void poisonTensor(HostTensor &t) {
  fillElements(t, isFloat(t.dtype) ? encodeFloat(t.dtype, std::nan("")) : encodeInt(t.dtype, -1));
  std::fill(t.written.begin(), t.written.end(), 0);
}

void poisonTensor(HostTensor &t, PoisonPattern pattern, std::mt19937_64 &rng) {
  if (pattern == PoisonPattern::Nan)
    return poisonTensor(t);
  int bytes = std::max(1, dtypeBits(t.dtype) / 8);
  uint64_t word = poisonWord(pattern, bytes, rng);
  if (pattern == PoisonPattern::Random)
    for (int64_t i = 0; i < t.elements(); ++i)
      t.setBits(i, poisonWord(pattern, bytes, rng));
  else
    fillElements(t, word);
  std::fill(t.written.begin(), t.written.end(), 0);
}

void prepareTensors(std::vector<HostTensor> &tensors, const BoundProblem *problem, uint64_t seed,
                    PoisonPattern outputPoison, bool wide, const WideTargets &targets) {
  std::mt19937_64 poisonRng(seed ^ 0x6F7574707574ull); // "output"
  for (size_t i = 0; i < tensors.size(); ++i) {
    int index = static_cast<int>(i);
    if (isProblemOutput(problem, index)) {
      poisonTensor(tensors[i], outputPoison, poisonRng);
      continue;
    }
    bool scale = problem && std::find(problem->scales.begin(), problem->scales.end(), index) !=
                                problem->scales.end();
    fillRandomInput(tensors[i], seed, scale);
    if (wide && !scale)
      widenInput(tensors[i], seed, targets);
    else if (wide)
      widenScales(tensors[i], seed, targets);
  }
}

namespace {

std::string elementText(const HostTensor &t, int64_t flat) {
  std::string s;
  for (int64_t x : unflattenIndex(t.shape, flat))
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return t.name + "[" + s + "]";
}

std::string valueText(const HostTensor &t, uint64_t bits) {
  double v =
      isFloat(t.dtype) ? decodeFloat(t.dtype, bits) : static_cast<double>(decodeInt(t.dtype, bits));
  return std::isnan(v) ? std::string("nan") : fmt::format("{:.9g}", v);
}

void addOutputFindings(const OutputReport &o, const HostTensor &t, bool allCtas,
                       std::vector<SimFinding> &findings) {
  if (allCtas && o.unwritten > 0)
    findings.push_back(
        {"unwritten output",
         fmt::format("unwritten output {}: {} of {} elements nobody wrote",
                     elementText(t, o.firstUnwritten.front()), o.unwritten, o.elements),
         ""});
  if (!allCtas && o.regionUnwritten > 0) {
    std::string tile;
    for (int64_t x : o.sampledTile)
      tile += (tile.empty() ? "" : " x ") + std::to_string(x);
    findings.push_back({"unwritten output",
                        fmt::format("unwritten output {}: {} of the {} elements in the tiles of "
                                    "the sampled CTAs (tile {} inferred from their stores) "
                                    "nobody wrote",
                                    elementText(t, o.firstRegionUnwritten.front()),
                                    o.regionUnwritten, o.regionElements, tile),
                        ""});
  }
  // Mismatches of written elements (unwritten ones are reported above).
  for (const Mismatch &m : o.first)
    if (m.written) {
      findings.push_back(
          {"mismatch",
           fmt::format("mismatch at {}: got {}, expected {:.9g} ({} mismatches)",
                       elementText(t, m.index),
                       std::isnan(m.got) ? std::string("nan") : fmt::format("{:.9g}", m.got),
                       m.expected, o.mismatches),
           ""});
      break;
    }
}

} // namespace

SimulationResult simulateChecked(const Program &program, const BoundProblem *problem,
                                 std::vector<HostTensor> &tensors, const SimulateOptions &options) {
  SimulationResult out;
  out.allCtas = options.ctas.empty();
  if (!out.allCtas) {
    int64_t total = program.grid[0] * program.grid[1] * program.grid[2];
    out.allCtas = static_cast<int64_t>(options.ctas.size()) >= total;
  }
  // The copy the reference reads and the inputs are checked against. The
  // problem's outputs are copied without their elements (poison, and nothing
  // written): no reference reads them, only their names, dtypes and shapes.
  std::vector<HostTensor> before;
  before.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor &t = tensors[i];
    if (isProblemOutput(problem, static_cast<int>(i)))
      before.push_back(HostTensor{t.name, t.dtype, t.shape, {}, {}});
    else
      before.push_back(t);
  }
  std::vector<int> outputs = problem ? problem->outputs : std::vector<int>{};
  WriteAttribution attribution(tensors, outputs);

  EngineOptions engine;
  engine.seed = options.seed;
  engine.ctas = options.ctas;
  engine.maxSteps = options.maxSteps;
  engine.memoryCapBytes = options.memoryCapBytes;
  engine.deadline = options.deadline;
  engine.where = options.where;
  engine.poison = options.poison;
  engine.checkUninitialized = options.checkUninitialized;
  if (!out.allCtas && problem)
    engine.afterUnit = [&](const std::array<int64_t, 3> &) { attribution.unitDone(); };
  out.run = runProgram(program, tensors, engine);

  for (const UninitializedRead &r : out.run.stats.uninitializedReads)
    out.findings.push_back(
        {"uninitialized read",
         fmt::format("uninitialized read: {} reads {} memory '{}' element {} in CTA ({}, {}, {}) "
                     "before anything wrote it ({} such read{} at this statement)",
                     r.agent, r.space == "tmem" ? "tensor" : "shared", r.buffer, r.element,
                     r.cta[0], r.cta[1], r.cta[2], r.count, r.count == 1 ? "" : "s"),
         r.location});

  if (out.run.ok() && problem) {
    // Inputs first: a kernel that writes its inputs gets that named as its
    // first finding, before the mismatches it causes.
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (isProblemOutput(problem, static_cast<int>(i)))
        continue;
      const HostTensor &now = tensors[i], &was = before[i];
      InputChange c;
      c.written = std::count(now.written.begin(), now.written.end(), 1);
      if (now.bytes != was.bytes) // else no element changed (one comparison, not one per element)
        for (int64_t e = 0; e < now.elements(); ++e)
          if (now.bitsAt(e) != was.bitsAt(e) && c.changed++ == 0)
            c.first = e;
      if (!c.changed && !c.written)
        continue;
      if (!c.changed)
        c.first = std::find(now.written.begin(), now.written.end(), 1) - now.written.begin();
      c.before = isFloat(was.dtype) ? decodeFloat(was.dtype, was.bitsAt(c.first)) : 0;
      c.after = isFloat(now.dtype) ? decodeFloat(now.dtype, now.bitsAt(c.first)) : 0;
      c.name = now.name;
      out.findings.push_back(
          {"input modified",
           c.changed ? fmt::format("input modified: {} was {}, is {} after the run ({} of {} "
                                   "elements changed); only the problem's outputs may be written",
                                   elementText(now, c.first), valueText(was, was.bitsAt(c.first)),
                                   valueText(now, now.bitsAt(c.first)), c.changed, now.elements())
                     : fmt::format("input modified: the kernel stored to {} ({} of {} elements "
                                   "written, every value left or put back as it was); only the "
                                   "problem's outputs may be written",
                                   elementText(now, c.first), c.written, now.elements()),
           ""});
      out.inputChanges.push_back(std::move(c));
    }
    out.outputs = compareWithReference(*problem, tensors, before, out.allCtas, &options.tolerances);
    for (size_t k = 0; k < out.outputs.size(); ++k) {
      OutputReport &o = out.outputs[k];
      int index = problem->outputs[k];
      if (!out.allCtas) {
        WriteAttribution::Region r = attribution.region(index);
        o.sampledTile = r.tile;
        o.regionElements = r.elements;
        o.regionUnwritten = r.unwritten;
        o.firstRegionUnwritten = r.firstUnwritten;
      }
      addOutputFindings(o, tensors[index], out.allCtas, out.findings);
    }
  }

  if (!out.run.ok()) {
    bool budget = out.run.stoppedByBudget();
    out.result = std::string(outcomeName(out.run.outcome));
    if (budget) {
      out.verdict = out.findings.empty() ? SimVerdict::Budget : SimVerdict::Finding;
      out.reason = out.run.message;
    } else {
      out.verdict = SimVerdict::Finding;
      out.findings.insert(out.findings.begin(), {out.result, out.run.message, ""});
    }
    if (!out.findings.empty())
      out.result = out.findings.front().kind;
    return out;
  }
  if (!out.findings.empty()) {
    out.verdict = SimVerdict::Finding;
    out.result = out.findings.front().kind;
    return out;
  }
  bool mismatch = false;
  for (const OutputReport &o : out.outputs)
    mismatch |= o.mismatches > 0;
  if (mismatch) {
    out.verdict = SimVerdict::Finding;
    out.result = "mismatch";
    return out;
  }
  if (!problem) {
    out.verdict = SimVerdict::Unknown;
    out.result = "no reference";
    out.reason = "no reference: the kernel names no problem (a `// problem:` line before it, or "
                 "--problem); its outputs were not checked";
    return out;
  }
  out.verdict = SimVerdict::Proved;
  out.result = "match";
  return out;
}

} // namespace tilescope::sim
