#include "model/Machine.h"

#include "model/MachineData.h"

#include <llvm/Support/JSON.h>

#include <algorithm>

namespace tilescope::model {

double Machine::wgmmaEfficiency(int64_t n) const {
  if (n <= 64)
    return wgmmaEfficiencyN64 * (n < 64 ? static_cast<double>(n) / 64 : 1.0);
  if (n <= 128)
    return wgmmaEfficiencyN64 +
           (wgmmaEfficiencyN128 - wgmmaEfficiencyN64) * static_cast<double>(n - 64) / 64;
  if (wgmmaEfficiencyN192 > 0 && n <= 192)
    return wgmmaEfficiencyN128 +
           (wgmmaEfficiencyN192 - wgmmaEfficiencyN128) * static_cast<double>(n - 128) / 64;
  if (wgmmaEfficiencyN192 > 0 && n <= 256)
    return wgmmaEfficiencyN192 +
           (wgmmaEfficiencyN256 - wgmmaEfficiencyN192) * static_cast<double>(n - 192) / 64;
  if (n <= 256)
    return wgmmaEfficiencyN128 +
           (wgmmaEfficiencyN256 - wgmmaEfficiencyN128) * static_cast<double>(n - 128) / 128;
  return wgmmaEfficiencyN256;
}

std::optional<Machine> parseMachine(const std::string &jsonText, std::string *error) {
  auto parsed = llvm::json::parse(jsonText);
  if (!parsed) {
    *error = llvm::toString(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *o = parsed->getAsObject();
  if (!o) {
    *error = "a machine description is a JSON object";
    return std::nullopt;
  }
  Machine m;
  if (auto s = o->getString("name"))
    m.name = s->str();
  if (auto s = o->getString("target"))
    m.target = s->str();
  struct Field {
    const char *key;
    double *value;
    bool optional = false;
  };
  const Field fields[] = {
      {"sms", &m.sms},
      {"clock_ghz", &m.clockGHz},
      {"tensor_flops_per_clk_per_sm", &m.tensorFlopsPerClkPerSm},
      {"peak_tflops", &m.peakTflopsDatasheet},
      {"wgmma_efficiency_n64", &m.wgmmaEfficiencyN64},
      {"wgmma_efficiency_n128", &m.wgmmaEfficiencyN128},
      {"wgmma_efficiency_n256", &m.wgmmaEfficiencyN256},
      {"wgmma_drain_cycles", &m.wgmmaDrainCycles},
      {"smem_bytes_per_clk_per_sm", &m.smemBytesPerClkPerSm},
      {"smem_bytes_per_sm", &m.smemBytesPerSm},
      {"smem_bytes_per_cta", &m.smemBytesPerCta},
      {"threads_per_sm", &m.threadsPerSm},
      {"ctas_per_sm", &m.ctasPerSm},
      {"registers_per_sm", &m.registersPerSm},
      {"l2_to_smem_tb_s", &m.l2ToSmemTBs},
      {"dram_tb_s", &m.dramTBs},
      {"l2_bytes", &m.l2Bytes},
      {"load_latency_cycles", &m.loadLatencyCycles},
      {"epilogue_cycles", &m.epilogueCycles},
      {"launch_us", &m.launchUs},
      {"dram_datasheet_tb_s", &m.dramDatasheetTBs, true},
      {"cublas_roofline_factor", &m.cublasRooflineFactor, true},
      {"cublas_overhead_us", &m.cublasOverheadUs, true},
      {"fp32_peak_tflops", &m.fp32PeakTflops, true},
      {"dsmem_bytes_per_clk_per_sm", &m.dsmemBytesPerClkPerSm},
      {"cluster_barrier_cycles", &m.clusterBarrierCycles},
      {"cluster4_sms_one_cta_per_sm", &m.cluster4SmsOneCta, true},
      {"cluster4_sms_two_ctas_per_sm", &m.cluster4SmsTwoCtas, true},
      {"misaligned_pitch16_factor", &m.misalignedPitch16Factor, true},
      {"misaligned_pitch32_factor", &m.misalignedPitch32Factor, true},
      {"dram_exposed_fraction", &m.dramExposedFraction, true},
      {"wgmma_efficiency_n192", &m.wgmmaEfficiencyN192, true},
      {"l2_to_smem_bytes_per_clk_per_sm_max", &m.l2ToSmemBytesPerClkPerSmMax, true},
      {"l2_kept_fraction", &m.l2KeptFraction, true},
      {"l2_to_smem_first_tb_s", &m.l2ToSmemFirstTBs, true},
      {"l2_to_smem_shared_tb_s", &m.l2ToSmemSharedTBs, true},
      {"smem_clock_ghz", &m.smemClockGHz, true},
  };
  for (const Field &f : fields) {
    const llvm::json::Object *entry = o->getObject(f.key);
    if (!entry && f.optional && !o->get(f.key))
      continue;
    llvm::Optional<double> v;
    if (entry)
      v = entry->getNumber("value");
    if (!v || *v < 0) {
      *error = std::string("field '") + f.key + "' needs {\"value\": a non-negative number, " +
               "\"source\": ...}";
      return std::nullopt;
    }
    *f.value = *v;
    if (auto s = entry->getString("source"))
      m.sources[f.key] = s->str();
  }
  if (m.sms < 1 || m.clockGHz <= 0 || m.tensorFlopsPerClkPerSm <= 0 || m.peakTflopsDatasheet <= 0 ||
      m.l2ToSmemTBs <= 0 || m.dramTBs <= 0 || m.smemBytesPerClkPerSm <= 0 ||
      m.dsmemBytesPerClkPerSm <= 0) {
    *error = "sms, clock_ghz, the tensor rates and the bandwidths must be positive";
    return std::nullopt;
  }
  return m;
}

int64_t Machine::smsFor(int64_t clusterCtas, int64_t ctasPerSm) const {
  double n = sms;
  if (clusterCtas >= 4) {
    double limit = ctasPerSm >= 2 ? cluster4SmsTwoCtas : cluster4SmsOneCta;
    if (limit > 0)
      n = std::min(n, limit);
  }
  return std::max<int64_t>(static_cast<int64_t>(n), 1);
}

std::optional<Machine> bundledMachine(const std::string &target, std::string *error) {
  for (const BundledMachine &b : bundledMachines())
    if (b.target == target)
      return parseMachine(std::string(b.text), error);
  *error = "no machine description for target '" + target + "'";
  return std::nullopt;
}

std::vector<std::string> bundledMachineTargets() {
  std::vector<std::string> out;
  for (const BundledMachine &b : bundledMachines())
    out.emplace_back(b.target);
  return out;
}

} // namespace tilescope::model
