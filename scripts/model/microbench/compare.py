#!/usr/bin/env python3
"""Compares what microbench.cu measured (its JSON, as run_dev.sh writes it)
with a machine description (model/machines/*.json): one markdown row a
number, the measured value beside the description's and the description's
kind of source (datasheet, fitted, carried over). Usage:
  compare.py microbench.json model/machines/h100_sxm.json"""
import json
import sys


def main():
    got = json.load(open(sys.argv[1]))
    machine = json.load(open(sys.argv[2]))

    def desc(key):
        entry = machine.get(key)
        return "-" if entry is None else "%.4g" % entry["value"]

    def kind(key):
        entry = machine.get(key)
        if entry is None:
            return "absent"
        s = entry["source"].lower()
        if s.startswith("not measured") or "h100 sxm value" in s or "h100's" in s:
            return "H100 carry-over"
        if "fitted" in s or "fit " in s:
            return "fitted"
        if "datasheet" in s or "whitepaper" in s or "programming guide" in s:
            return "datasheet"
        if "measured" in s:
            return "measured"
        return "other"

    ghz = got.get("wgmma_n256_wg2_sm_ghz") or got.get("spin_sm_ghz")
    rows = [
        ("SMs", "%d" % got["sms"], "sms"),
        ("L2 bytes", "%d" % got["l2_bytes"], "l2_bytes"),
        ("shared memory a SM / a CTA (opt-in)", "%d / %d" % (got["smem_bytes_per_sm"],
                                                          got["smem_bytes_per_cta_optin"]),
         "smem_bytes_per_sm"),
        ("SM clock, spin kernel (GHz)", "%.3f" % got["spin_sm_ghz"], "clock_ghz"),
        ("SM clock during wgmma n256, 2 warpgroups (GHz)", "%.3f" % ghz, "clock_ghz"),
        ("DRAM copy (TB/s)", "%.3f" % got["dram_copy_tb_s"], "dram_tb_s"),
        ("DRAM read / write (TB/s)", "%.3f / %.3f" % (got["dram_read_tb_s"], got["dram_write_tb_s"]),
         "dram_datasheet_tb_s"),
        ("L2 read, 8 MB, every SM, ld.global.cg (TB/s)", "%.2f" % got["l2_read_8mb_tb_s"],
         "l2_to_smem_tb_s"),
    ]
    for stages in (4, 8):
        rows.append(("TMA 16 KB loads from L2, every SM, %d stages (TB/s)" % stages,
                     "%.2f" % got["tma_l2_all_sms_stages%d_tb_s" % stages], "l2_to_smem_tb_s"))
        rows.append(("TMA 16 KB loads from L2, one SM alone, %d stages (B/cycle)" % stages,
                     "%.1f" % got["tma_l2_one_sm_stages%d_bytes_per_clk_per_sm" % stages],
                     "l2_to_smem_bytes_per_clk_per_sm_max"))
    rows.append(("TMA 16 KB loads from DRAM, every SM, 8 stages (TB/s)",
                 "%.2f" % got["tma_dram_all_sms_stages8_tb_s"], "dram_tb_s"))
    for what in ("l2_1kb", "l2_16kb", "dram_16kb"):
        key = "tma_latency_%s_cycles" % what
        if key in got:
            rows.append(("TMA latency, one load alone, %s (cycles)" % what.replace("_", " "),
                         "%.0f" % got[key], "load_latency_cycles"))
    ref = got["wgmma_n256_wg2_efficiency"]
    for n in (64, 128, 192, 256):
        for wg in (1, 2):
            e = got["wgmma_n%d_wg%d_efficiency" % (n, wg)]
            rows.append(("wgmma m64n%dk16, %d warpgroup%s: cycles a wgmma an SM; efficiency; "
                         "against n256 with 2" % (n, wg, "s" if wg > 1 else ""),
                         "%.1f; %.3f; %.3f" % (got["wgmma_n%d_wg%d_cycles" % (n, wg)], e, e / ref),
                         "wgmma_efficiency_n%d" % n))
    for n, wg in ((64, 2), (128, 2), (256, 2), (64, 1)):
        key = "wgmma_n%d_wg%d_tma" % (n, wg)
        if key + "_cycles" in got:
            rows.append(("wgmma m64n%dk16, %d warpgroup%s, TMA streaming 16 KB loads into the same "
                         "shared memory: cycles a wgmma; TMA B/cycle" % (n, wg, "s" if wg > 1 else ""),
                         "%.1f; %.1f" % (got[key + "_cycles"], got[key + "_tma_bytes_per_clk"]),
                         "smem_bytes_per_clk_per_sm"))
    print("card: %s (nvidia-smi: %s, driver %s, max SM clock %s)" %
          (got.get("name"), got.get("smi_name"), got.get("driver"), got.get("smi_max_sm_clock")))
    print("| what | measured | %s | its source |" % machine["name"])
    print("|---|---|---|---|")
    for what, value, key in rows:
        print("| %s | %s | %s (`%s`) | %s |" % (what, value, desc(key), key, kind(key)))


if __name__ == "__main__":
    main()
