// A machine description for the performance model: the numbers of one GPU
// (SM count, clock, tensor-core rate per SM, shared-memory, L2 and DRAM
// bandwidths, latencies), each with the public source it comes from, read
// from a JSON data file (model/machines/*.json, compiled into the library).
// Depends on nothing but LLVM's JSON reader.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::model {

struct Machine {
  std::string name;   // "NVIDIA H100 SXM5 80GB"
  std::string target; // "h100"
  double sms = 0, clockGHz = 0, tensorFlopsPerClkPerSm = 0;
  double peakTflopsDatasheet = 0; // dense BF16, as the datasheet states it
  double wgmmaEfficiencyN64 = 0, wgmmaEfficiencyN128 = 0, wgmmaEfficiencyN256 = 0;
  double wgmmaEfficiencyN192 = 0; // optional: 0 interpolates between 128 and 256
  double wgmmaDrainCycles = 0, smemBytesPerClkPerSm = 0, smemBytesPerSm = 0, smemBytesPerCta = 0;
  double threadsPerSm = 0, ctasPerSm = 0, registersPerSm = 0;
  double l2ToSmemTBs = 0, dramTBs = 0, l2Bytes = 0, loadLatencyCycles = 0, epilogueCycles = 0;
  double launchUs = 0;
  // The cuBLAS-calibrated roofline of model/Baseline.h: the datasheet's DRAM
  // rate, and cuBLAS's measured time as factor * roofline + overhead. 0 when
  // the description has none (optional fields).
  double dramDatasheetTBs = 0, cublasRooflineFactor = 0, cublasOverheadUs = 0;
  // Dense FP32 on the CUDA cores (no tensor cores), as the datasheet states
  // it: the reward's bound for GEMM kernels that issue no tensor-core
  // instruction. 0 when the description has none (optional).
  double fp32PeakTflops = 0;
  double dsmemBytesPerClkPerSm = 0, clusterBarrierCycles = 0; // split K over a cluster
  // The SMs that clusters of 4 CTAs fill at once (a cluster's CTAs share a
  // GPC: cudaOccupancyMaxActiveClusters x 4 / CTAs an SM), with one CTA an
  // SM and with two or more; 0: all `sms` (optional fields).
  double cluster4SmsOneCta = 0, cluster4SmsTwoCtas = 0;
  // What a byte loaded by TMA from rows whose pitch is a multiple of 16 but
  // not 32 bytes (of 32 but not 128) costs on the L2 -> shared memory path,
  // against an aligned row's byte; 1 when the description has none.
  double misalignedPitch16Factor = 1, misalignedPitch32Factor = 1;
  // The share of the shorter of compute and DRAM time that the longer does
  // not hide (0: perfect overlap, the time is the longer); 0 when absent.
  double dramExposedFraction = 0;
  // The most an SM's TMA pulls from L2 a cycle, whatever the others do: an
  // SM of a grid that leaves SMs idle gets more than its 1/sms share of
  // l2_to_smem_tb_s, up to this; 0 when absent (every SM gets its share).
  double l2ToSmemBytesPerClkPerSmMax = 0;
  // The part of l2_bytes that keeps a wave's row blocks for the next waves
  // (model/Predict.h, DRAM); 0 when absent: no reuse across waves.
  double l2KeptFraction = 0;
  // A grid that runs as one wave of CTAs of one tile each starts its CTAs
  // together, so the SMs that share a row block read its lines at about the
  // same time: the L2 then serves l2_to_smem_first_tb_s of distinct lines
  // (every SM reading its own lines) and up to l2_to_smem_shared_tb_s in all
  // (model/Predict.h); l2_to_smem_tb_s is the floor. 0 when absent: every
  // byte at l2_to_smem_tb_s. With a first rate and no shared rate, every
  // wave's distinct lines at the first rate and its other reads at
  // l2_to_smem_tb_s (harmonic mix; docs/model.md "The three misses again").
  double l2ToSmemFirstTBs = 0, l2ToSmemSharedTBs = 0;
  // The SM clock under load as measured (wgmma on every SM): shared memory's
  // smem_bytes_per_clk_per_sm are a cycle of it, while the model counts
  // cycles of clock_ghz (fitted, lower: it carries the tensor cores' issue
  // losses); 0 when absent: the same clock.
  double smemClockGHz = 0;
  // Shared memory's bytes per cycle of clock_ghz.
  double smemBytesPerModelClk() const {
    return smemClockGHz > 0 ? smemBytesPerClkPerSm * smemClockGHz / clockGHz
                            : smemBytesPerClkPerSm;
  }
  // The SMs a grid of clusters of `clusterCtas` CTAs, `ctasPerSm` an SM, fills.
  int64_t smsFor(int64_t clusterCtas, int64_t ctasPerSm) const;
  std::map<std::string, std::string> sources; // field name in the file -> its source

  // Issue efficiency of wgmma m64nNk16 (interpolated between 64, 128, 256,
  // and 192 when the description has it: wgmmaEfficiencyN192 > 0).
  double wgmmaEfficiency(int64_t n) const;
  // The tensor peak at `clockGHz` (the model's clock under load).
  double peakTflopsAtClock() const { return sms * clockGHz * tensorFlopsPerClkPerSm * 1e-3; }
};

// Reads a description; nothing, with `error`, when a field is missing or
// not a number.
std::optional<Machine> parseMachine(const std::string &jsonText, std::string *error);

// The bundled machines by target name ("h100", "h200").
std::optional<Machine> bundledMachine(const std::string &target, std::string *error);
std::vector<std::string> bundledMachineTargets();

} // namespace tilescope::model
