#include "model/Predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace tilescope::model {

namespace {

// The cost of one CTA in SM cycles, alone and as shares of the SM.
struct CtaCost {
  double alone = 0;    // start to end with the SM to itself
  double tensor = 0;   // tensor-core busy time (shared with co-resident CTAs)
  double transfer = 0; // L2 -> shared memory time at the SM's share
  double chain = 0;    // one warpgroup's MMAs plus its drains
  double latency = 0;  // steps x load latency / ring depth
  double epilogue = 0; // its epilogues
  double reduction = 0; // split K: peers' partials through DSMEM, cluster barriers
};

// The L2's aggregate rate into shared memory (TB/s). A grid of one wave of
// one-tile CTAs (`lockstep`) starts them together, and the SMs that share a
// row block read its lines at about the same time: of its loads,
// `firstFraction` are distinct lines, served at l2_to_smem_first_tb_s (the
// rate of every SM reading its own lines), so all of them at that over the
// fraction, up to l2_to_smem_shared_tb_s (measured, scripts/model/microbench
// l2share: 7.9 TB/s distinct, 13.5-20.6 with 2-33 SMs a line). Later waves
// start as earlier CTAs end, out of step: l2_to_smem_tb_s. Without a shared
// rate (the first form, docs/model.md "The three misses again"): every wave's
// distinct lines at the first rate, its other reads at l2_to_smem_tb_s.
double l2TBs(const Machine &m, double firstFraction, bool lockstep) {
  double f = std::clamp(firstFraction, 1e-6, 1.0);
  if (m.l2ToSmemFirstTBs > 0 && m.l2ToSmemSharedTBs <= 0)
    return 1 / (f / m.l2ToSmemFirstTBs + (1 - f) / m.l2ToSmemTBs);
  if (!lockstep || m.l2ToSmemFirstTBs <= 0 || m.l2ToSmemSharedTBs <= 0)
    return m.l2ToSmemTBs;
  return std::max(m.l2ToSmemTBs, std::min(m.l2ToSmemFirstTBs / f, m.l2ToSmemSharedTBs));
}

// The L2 -> shared memory bytes a cycle of one SM when `busySms` SMs load at
// once: their share of the aggregate rate, up to the SM's own limit.
double l2BytesPerClk(const Machine &m, double busySms, double l2Rate) {
  double limit = m.l2ToSmemBytesPerClkPerSmMax; // 0: no limit known, every SM gets 1/sms
  double sharing = limit > 0 ? std::max(busySms, 1.0) : m.sms;
  double share = l2Rate * 1e12 / (sharing * m.clockGHz * 1e9);
  return limit > 0 ? std::min(share, limit) : share;
}

CtaCost ctaCost(const CtaWork &w, const KernelProfile &p, const Machine &m, double busySms,
                double l2Rate) {
  CtaCost c;
  double perSmL2 = l2BytesPerClk(m, busySms, l2Rate);
  // The MMAs take the longer of their tensor time and the SM's shared memory
  // time: their operand reads plus the TMA writes of the loads that feed them
  // (the same banks serve both).
  double compute = 0, smemBytes = w.loadBytes;
  for (const auto &[n, count] : w.wgmmaByN) {
    compute += static_cast<double>(count) * 2.0 * 64 * static_cast<double>(n) * 16 /
               m.tensorFlopsPerClkPerSm / m.wgmmaEfficiency(n);
    smemBytes += static_cast<double>(count) * (64.0 * 16 * 2 + static_cast<double>(n) * 16 * 2);
  }
  c.tensor = w.wgmmaByN.empty() ? 0 : std::max(compute, smemBytes / m.smemBytesPerModelClk());
  double steps = static_cast<double>(std::max<int64_t>(w.steps, 1));
  int64_t consumers = std::max<int64_t>(w.consumerWarpgroups, 1);
  double drains = static_cast<double>(w.drainingSteps) * m.wgmmaDrainCycles;
  c.chain = c.tensor / static_cast<double>(consumers) + drains;
  // Rows not aligned to 128 bytes: a box row touches one more L2 line.
  c.transfer = (w.loadBytes + (m.misalignedPitch16Factor - 1) * w.loadBytesPitch16 +
                (m.misalignedPitch32Factor - 1) * w.loadBytesPitch32) /
               perSmL2;
  int64_t depth = std::max<int64_t>(p.stages, 1);
  // Little's law on the ring: a stage is refilled only once its consumers
  // released it, so each of the depth stages is busy for a load latency plus
  // the step's own MMAs (and drain) per use; a consumer that keeps g wgmma
  // groups in flight (wait_group(g)) releases stage k only after it issued
  // step k + g, i.e. after that stage's data arrived, so at most depth - g
  // loads overlap one latency. (Before: latency / (depth - 1) a step for
  // both, blind to the MMAs a stage is held through and to the groups in
  // flight.)
  double perStep = std::max(c.chain, c.tensor) / steps;
  double d = static_cast<double>(depth);
  double g = static_cast<double>(w.groupsInFlight);
  c.latency = w.steps > 0 ? steps * std::max((m.loadLatencyCycles + perStep) / d,
                                             m.loadLatencyCycles / std::max(d - g, 1.0))
                          : 0;
  // The tile is written to shared memory and read back by the TMA store;
  // its way to DRAM overlaps the next tile and counts in the DRAM bound.
  c.epilogue =
      static_cast<double>(w.tiles) * m.epilogueCycles + 2 * w.storeBytes / m.smemBytesPerModelClk();
  // Split K over a cluster: the partials cross the SM-to-SM network, land in
  // shared memory and are read back (twice through the SM's shared memory),
  // between cluster barriers; none of it overlaps the mainloop.
  c.reduction = w.clusterBytes / m.dsmemBytesPerClkPerSm +
                2 * w.clusterBytes / m.smemBytesPerModelClk() +
                static_cast<double>(w.clusterBarriers) * m.clusterBarrierCycles;
  double mainloop = std::max({c.tensor, c.chain, c.transfer, c.latency});
  c.alone = m.loadLatencyCycles + mainloop + c.reduction + c.epilogue;
  return c;
}

// CTAs per SM: shared memory, threads, registers (setmaxnreg pins one).
int64_t occupancy(const KernelProfile &p, const Machine &m, std::string *limit) {
  double shared = p.sharedBytes + 1024; // the runtime reserves 1 KiB per CTA
  int64_t bySmem = p.sharedBytes > 0 ? static_cast<int64_t>(m.smemBytesPerSm / shared)
                                     : static_cast<int64_t>(m.ctasPerSm);
  int64_t byThreads = static_cast<int64_t>(m.threadsPerSm) / std::max<int64_t>(p.threads, 1);
  int64_t regs = (p.registersPerThread + 16 + 7) / 8 * 8;
  int64_t byRegs = static_cast<int64_t>(m.registersPerSm) /
                   std::max<int64_t>(regs * std::max<int64_t>(p.threads, 1), 1);
  int64_t n = std::min({bySmem, byThreads, byRegs, static_cast<int64_t>(m.ctasPerSm)});
  *limit = n == bySmem      ? fmt::format("shared memory ({:.0f} B a CTA)", p.sharedBytes)
           : n == byThreads ? fmt::format("threads ({} a CTA)", p.threads)
           : n == byRegs    ? fmt::format("registers (about {} a thread)", regs)
                            : "CTAs per SM";
  if (p.setsMaxRegisters && n > 1) {
    n = 1;
    *limit = "setmaxnreg (the register split pins one CTA per SM)";
  }
  return std::max<int64_t>(n, 1);
}

double cyclesToUs(double cycles, const Machine &m) {
  return cycles / (m.clockGHz * 1e3);
}

} // namespace

PredictCache predictCache(const KernelProfile &p, const Machine &m) {
  PredictCache out;
  out.ctasPerSm = occupancy(p, m, &out.occupancyLimit);
  double scale = p.traced > 0 ? static_cast<double>(p.grid) / static_cast<double>(p.traced) : 1;
  double storeBytes = 0;
  for (const CtaWork &w : p.ctas)
    storeBytes += w.storeBytes;
  // DRAM: per wave of CTAs running together, the distinct row blocks they
  // load (each once into L2), plus the output.
  // A row block of a tensor (and the K slice of a split-K rank).
  using BlockKey = std::tuple<std::string, int64_t, int64_t>;
  std::map<int64_t, std::map<BlockKey, double>> perWave;
  double requested = 0, distinct = 0; // bytes the waves' CTAs load, and their distinct blocks'
  int64_t resident = m.smsFor(p.clusterCtas, out.ctasPerSm) * out.ctasPerSm;
  for (size_t i = 0; i < p.ctas.size(); ++i) {
    const CtaWork &w = p.ctas[i];
    int64_t stagesPerTile = w.tiles > 0 ? std::max<int64_t>(w.stageFills / w.tiles, 1)
                                        : std::max<int64_t>(w.stageFills, 1);
    std::map<std::pair<int64_t, BlockKey>, double> mine;
    for (const BlockLoad &b : w.blocks) {
      int64_t wave =
          static_cast<int64_t>(i) / resident + std::max<int64_t>(b.stage, 0) / stagesPerTile;
      mine[{wave, BlockKey{b.tensor, b.rowStart, b.rank}}] += b.bytes;
    }
    for (const auto &[key, bytes] : mine) {
      double &slot = perWave[key.first][key.second];
      slot = std::max(slot, bytes);
      requested += bytes;
    }
  }
  // Across waves, L2 keeps what the last waves loaded while it fits: a wave
  // loads from DRAM only the bytes of its blocks that the kept waves did not.
  // A wave whose blocks do not fit leaves nothing the next wave starts with
  // (the next wave starts at the first K slice, the oldest in the cache).
  double capacity = m.l2Bytes * m.l2KeptFraction;
  std::vector<const std::map<BlockKey, double> *> kept; // most recent first
  for (const auto &[wave, blocks] : perWave) {
    double footprint = 0;
    for (const auto &[block, bytes] : blocks) {
      footprint += bytes;
      distinct += bytes;
      double there = 0;
      for (const auto *earlier : kept)
        if (auto it = earlier->find(block); it != earlier->end())
          there = std::max(there, it->second);
      out.dramBytes += std::max(bytes - there, 0.0);
    }
    if (footprint > capacity) {
      kept.clear();
      continue;
    }
    kept.insert(kept.begin(), &blocks);
    double held = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      for (const auto &[block, bytes] : *kept[i])
        held += bytes;
      if (held > capacity) {
        kept.resize(i);
        break;
      }
    }
  }
  out.dramBytes = out.dramBytes * scale + storeBytes * scale;
  out.l2FirstFraction = requested > 0 ? distinct / requested : 1;
  return out;
}

Prediction predict(const KernelProfile &p, const Machine &m, const PredictCache *cache) {
  Prediction out;
  out.grid = p.grid;
  out.stages = p.stages;
  out.sharedBytes = p.sharedBytes;
  PredictCache made;
  if (!cache) {
    made = predictCache(p, m);
    cache = &made;
  }
  out.ctasPerSm = cache->ctasPerSm;
  out.occupancyLimit = cache->occupancyLimit;
  // Clusters of 4 leave SMs of some GPCs idle (Machine::smsFor).
  const int64_t sms = m.smsFor(p.clusterCtas, out.ctasPerSm);

  // The SMs that load at once, per wave of CTAs (CTAs go round the SMs, as
  // below): a last wave that leaves SMs idle, or CTAs with nothing to load (a
  // persistent CTA without a tile), leave the L2's rate to fewer SMs.
  const int64_t perWave = sms * std::max<int64_t>(out.ctasPerSm, 1);
  auto loadingIn = [&](int64_t wave) {
    int64_t first = wave * perWave, last = std::min(first + perWave, p.grid), n = 0;
    for (int64_t i = first; i < last; ++i)
      n += i >= static_cast<int64_t>(p.ctas.size()) || p.ctas[static_cast<size_t>(i)].loadBytes > 0;
    return static_cast<double>(std::min(n, sms));
  };
  // One wave of one-tile CTAs starts together (l2TBs). Not a split-K grid
  // (its ranks reduce through DSMEM): measured, the ranks' loads do not reach
  // the in-step rate (128x128 SPLIT=2 at 1024x1024x16384 pulled 537 MB in 70
  // us, 7.7 TB/s, where one-tile 64x128 in the same wave pulled 805 MB at 12.8;
  // docs/model.md "Split K out of step").
  bool lockstep = p.grid <= perWave;
  for (const CtaWork &w : p.ctas)
    lockstep = lockstep && w.tiles <= 1 && w.clusterBytes == 0;
  const double l2Rate = l2TBs(m, cache->l2FirstFraction, lockstep);
  // Costs of the traced CTAs; the rest cost their average.
  std::vector<CtaCost> costs;
  double clusterBytes = 0;
  double busySms = 0;
  for (size_t i = 0; i < p.ctas.size(); ++i) {
    const CtaWork &w = p.ctas[i];
    if (i % static_cast<size_t>(perWave) == 0)
      busySms = loadingIn(static_cast<int64_t>(i) / perWave);
    costs.push_back(ctaCost(w, p, m, busySms, l2Rate));
    out.flops += w.flops;
    out.loadBytes += w.loadBytes;
    out.storeBytes += w.storeBytes;
    clusterBytes += w.clusterBytes;
    out.steps += w.steps;
    out.tiles += w.tiles;
    for (const auto &[n, c] : w.wgmmaByN)
      out.wgmmaByN[n] += c;
  }
  CtaCost average;
  if (!costs.empty()) {
    for (const CtaCost &c : costs) {
      average.alone += c.alone;
      average.tensor += c.tensor;
      average.transfer += c.transfer;
      average.chain += c.chain;
      average.latency += c.latency;
      average.epilogue += c.epilogue;
      average.reduction += c.reduction;
    }
    double n = static_cast<double>(costs.size());
    for (double *f : {&average.alone, &average.tensor, &average.transfer, &average.chain,
                      &average.latency, &average.epilogue, &average.reduction})
      *f /= n;
  }
  double scale = p.traced > 0 ? static_cast<double>(p.grid) / static_cast<double>(p.traced) : 1;
  out.flops *= scale;
  out.loadBytes *= scale;
  out.storeBytes *= scale;
  clusterBytes *= scale;
  out.tiles = static_cast<int64_t>(std::llround(static_cast<double>(out.tiles) * scale));
  for (auto &[n, c] : out.wgmmaByN)
    c = static_cast<int64_t>(std::llround(static_cast<double>(c) * scale));

  // Each SM runs CTAs sm, sm + S, ... in waves of ctasPerSm resident CTAs.
  auto costOf = [&](int64_t i) -> const CtaCost & {
    return i < static_cast<int64_t>(costs.size()) ? costs[static_cast<size_t>(i)] : average;
  };
  double slowest = 0, total = 0;
  double tensorMax = 0, transferMax = 0, chainMax = 0, latencyMax = 0, epilogueMax = 0,
         reductionMax = 0;
  for (int64_t sm = 0; sm < sms && sm < p.grid; ++sm) {
    double time = 0, tensor = 0, transfer = 0, chain = 0, latency = 0, epilogue = 0, reduction = 0;
    std::vector<int64_t> mine;
    for (int64_t i = sm; i < p.grid; i += sms)
      mine.push_back(i);
    for (size_t w = 0; w < mine.size(); w += static_cast<size_t>(out.ctasPerSm)) {
      double alone = 0, waveTensor = 0, waveTransfer = 0, waveChain = 0, waveLatency = 0,
             waveEpilogue = 0, waveReduction = 0;
      for (size_t j = w; j < mine.size() && j < w + static_cast<size_t>(out.ctasPerSm); ++j) {
        const CtaCost &c = costOf(mine[j]);
        alone = std::max(alone, c.alone);
        waveTensor += c.tensor;
        waveTransfer += c.transfer;
        waveChain = std::max(waveChain, c.chain);
        waveLatency = std::max(waveLatency, c.latency);
        waveEpilogue = std::max(waveEpilogue, c.epilogue);
        waveReduction = std::max(waveReduction, c.reduction);
      }
      time += std::max({alone, waveTensor, waveTransfer});
      tensor += waveTensor;
      transfer += waveTransfer;
      chain += waveChain;
      latency += waveLatency;
      epilogue += waveEpilogue;
      reduction += waveReduction;
    }
    slowest = std::max(slowest, time);
    total += time;
    tensorMax = std::max(tensorMax, tensor);
    transferMax = std::max(transferMax, transfer);
    chainMax = std::max(chainMax, chain);
    latencyMax = std::max(latencyMax, latency);
    epilogueMax = std::max(epilogueMax, epilogue);
    reductionMax = std::max(reductionMax, reduction);
  }
  out.waves = static_cast<double>(p.grid) / static_cast<double>(sms * out.ctasPerSm);
  out.waveEfficiency = slowest > 0 ? total / static_cast<double>(sms) / slowest : 1;

  out.dramBytes = cache->dramBytes;
  double dramUs = out.dramBytes / (m.dramTBs * 1e6);

  double computeUs = cyclesToUs(slowest, m);
  // The longer of compute and DRAM, plus the part of the shorter it does
  // not hide (measured, a compute-bound tile order that reads less from DRAM
  // still runs faster: grouped against row order at 8192^3, 1.26x).
  out.us = std::max(computeUs, dramUs) + m.dramExposedFraction * std::min(computeUs, dramUs) +
           m.launchUs;
  out.tflops = out.us > 0 ? out.flops / (out.us * 1e6) : 0;
  out.peakFraction = out.tflops / m.peakTflopsDatasheet;

  std::string shapes;
  for (const auto &[n, c] : out.wgmmaByN)
    shapes += fmt::format("{}m64n{}k16 x {} (issue efficiency {:.2f})", shapes.empty() ? "" : ", ",
                          n, c, m.wgmmaEfficiency(n));
  out.bounds = {
      {"tensor cores", cyclesToUs(tensorMax, m),
       shapes.empty() ? "no wgmma"
                     : shapes + ", shared-memory operand reads and TMA writes included"},
      {"warpgroup chain", cyclesToUs(chainMax, m),
       "one warpgroup's MMAs plus a pipe drain per wgmma.wait_group(0)"},
      {"L2 -> shared memory", cyclesToUs(transferMax, m),
       l2Rate != m.l2ToSmemTBs
           ? fmt::format("{:.1f} MB by TMA at {:.1f} TB/s ({:.0f}% distinct lines, at {:.1f})",
                         out.loadBytes * 1e-6, l2Rate, cache->l2FirstFraction * 100,
                         m.l2ToSmemFirstTBs)
           : fmt::format("{:.1f} MB by TMA at {:.1f} TB/s", out.loadBytes * 1e-6, l2Rate)},
      {"load latency", cyclesToUs(latencyMax, m),
       fmt::format("{:.0f} cycles a load over a {}-stage ring", m.loadLatencyCycles, p.stages)},
      {"epilogue", cyclesToUs(epilogueMax, m), fmt::format("{} output tiles", out.tiles)},
      {"DRAM", dramUs,
       fmt::format(
           "{:.1f} MB (L2 reuse by tile order, in a wave and across waves that fit) at {:.1f} TB/s",
           out.dramBytes * 1e-6, m.dramTBs)},
      {"waves", computeUs * (1 - out.waveEfficiency),
       fmt::format("{} CTAs, {} per SM on {} SMs: {:.2f} waves, busiest SM against the average "
                   "{:.0f}%",
                   p.grid, out.ctasPerSm, sms, out.waves, out.waveEfficiency * 100)},
      {"launch", m.launchUs, "launch and teardown"},
  };
  if (reductionMax > 0)
    out.bounds.insert(
        out.bounds.begin() + 5,
        {"split-K reduction", cyclesToUs(reductionMax, m),
         fmt::format("{:.1f} MB through distributed shared memory at {:.0f} B/cycle an SM, "
                     "cluster barriers of {:.0f} cycles",
                     clusterBytes * 1e-6, m.dsmemBytesPerClkPerSm, m.clusterBarrierCycles)});
  // What bounds it: the longest of the mainloop's resources or DRAM, unless
  // most SMs idle while the busiest finishes.
  const Bound *longest = &out.bounds[0];
  for (const Bound &b : out.bounds)
    if (b.resource != "waves" && b.resource != "launch" && b.us > longest->us)
      longest = &b;
  out.boundBy = longest->resource;
  if (out.waveEfficiency < 0.6 && dramUs < computeUs)
    out.boundBy = "waves";
  if (m.launchUs > out.us - m.launchUs)
    out.boundBy = "launch";
  return out;
}

std::tuple<int64_t, int64_t, double> rankKey(const Prediction &p) {
  return {std::llround(std::log(p.us) / std::log(1.005)), -p.stages, p.dramBytes};
}

} // namespace tilescope::model
