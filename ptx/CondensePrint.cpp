// The condensed form as text (one screen) and as JSON (Condense.h).
//
// Sample text (kernels/gemm_bf16_sm90_small.tile through nvcc):
//   kernel gemm_bf16_sm90_64x64 (line 15): 1338 instructions, 71 blocks, 3 loops
//     params: u64 param_0, ..., .b8[128] param_6 (align 128), ...
//     shared: static 0 bytes; ts_smem_raw: extern, size set at launch (dynamic)
//     loop L0 (lines 132-318, depth 1, trip ...): 142 instructions
//       tensor core: 4 wgmma.m64n64k16.f32.bf16.bf16
//       ...
#include "ptx/Condense.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope::ptx {

std::vector<std::string> histogramLines(const Histogram &h) {
  std::vector<std::string> out;
  for (const auto &[cls, keys] : h) {
    if (cls == InstrClass::Move || cls == InstrClass::IntegerMath || cls == InstrClass::Branch ||
        cls == InstrClass::FloatMath || cls == InstrClass::ParamLoad)
      continue; // summarised in the "alu" line below
    std::vector<std::pair<int64_t, std::string>> sorted;
    int64_t total = 0;
    for (const auto &[k, n] : keys) {
      sorted.push_back({-n, k});
      total += n;
    }
    std::sort(sorted.begin(), sorted.end());
    std::string line = fmt::format("{}: {}", className(cls), total);
    size_t shown = 0;
    for (const auto &[negN, key] : sorted) {
      if (shown == 4) {
        line += fmt::format(", +{} more", sorted.size() - shown);
        break;
      }
      line += fmt::format("{} {}x {}", shown ? "," : " =", -negN, key);
      ++shown;
    }
    out.push_back(line);
  }
  int64_t alu = 0, fp = 0, moves = 0, branches = 0;
  auto sum = [&](InstrClass c) {
    int64_t n = 0;
    if (auto it = h.find(c); it != h.end())
      for (const auto &[k, v] : it->second)
        n += v;
    return n;
  };
  alu = sum(InstrClass::IntegerMath);
  fp = sum(InstrClass::FloatMath);
  moves = sum(InstrClass::Move) + sum(InstrClass::ParamLoad);
  branches = sum(InstrClass::Branch);
  if (alu + fp + moves + branches)
    out.push_back(fmt::format("alu: {} float, {} integer, {} mov/setp/selp, {} branch", fp, alu,
                              moves, branches));
  return out;
}

namespace {

std::string paramText(const Param &p, const std::string &kernel) {
  std::string name = p.name;
  if (name.rfind(kernel + "_", 0) == 0)
    name = name.substr(kernel.size() + 1);
  if (p.arrayBytes)
    return fmt::format("{}[{}]{}", name, p.arrayBytes,
                       p.align ? fmt::format(" align {}", p.align) : "");
  return fmt::format("{} {}", p.type, name);
}

} // namespace

std::string printSummary(const KernelSummary &s) {
  std::string o;
  o += fmt::format("kernel {} (line {}): {} instructions, {} blocks, {} loops\n", s.name, s.line,
                   s.instructions, s.blocks, s.loops.size());
  std::string params;
  for (size_t i = 0; i < s.params.size(); ++i)
    params += (i ? ", " : "") + paramText(s.params[i], s.name);
  o += fmt::format("  params ({}): {}\n", s.params.size(), params);
  for (const auto &[name, value] : s.directives)
    o += fmt::format("  .{} {}\n", name, value);
  o += fmt::format("  shared: static {} bytes{}", s.staticShared,
                   s.dynamicShared ? " + dynamic (its size is a launch argument, not in PTX)" : "");
  for (const std::string &v : s.sharedVariables)
    o += "; " + v;
  o += "\n";
  std::string regs;
  for (const auto &[type, n] : s.registersByType)
    regs += fmt::format("{}{} .{}", regs.empty() ? "" : ", ", n, type);
  o += fmt::format("  registers declared: {} ({}); virtual, before allocation\n",
                   s.registersDeclared, regs);
  if (s.ptxas) {
    auto v = [](const std::optional<int64_t> &x) { return x ? std::to_string(*x) : "?"; };
    o += fmt::format("  ptxas{}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes "
                     "stack, {} bytes static smem, {} barriers\n",
                     s.ptxas->source.empty() ? "" : " (" + s.ptxas->source + ")",
                     v(s.ptxas->registers), v(s.ptxas->spillStores), v(s.ptxas->spillLoads),
                     v(s.ptxas->stackFrame), v(s.ptxas->sharedBytes), v(s.ptxas->barriers));
  }
  auto section = [&](const LoopSummary &l, const std::string &title) {
    o += title;
    for (const std::string &line : histogramLines(l.histogram))
      o += "      " + line + "\n";
  };
  section(s.outside, fmt::format("  outside loops: {} instructions{}\n", s.outside.instructions,
                                 s.outside.spinWaits
                                     ? fmt::format(", {} mbarrier spin waits", s.outside.spinWaits)
                                     : ""));
  for (const LoopSummary &l : s.loops) {
    std::string indent(size_t(2 * l.depth), ' ');
    section(l,
            fmt::format("  {}loop L{} (lines {}-{}, depth {}{}, trip {}): {} instructions{}{}\n",
                        indent.substr(2), l.id, l.firstLine, l.lastLine, l.depth,
                        l.parent >= 0 ? fmt::format(", in L{}", l.parent) : "", l.trip,
                        l.instructions, l.inductionVar.empty() ? "" : ", counter " + l.inductionVar,
                        l.spinWaits ? fmt::format(", {} mbarrier spin waits", l.spinWaits) : ""));
  }
  const Pipeline &p = s.pipeline;
  o += "  pipeline:\n";
  o += fmt::format("    stages: {}\n", p.stages ? fmt::format("{} ({})", *p.stages, p.stagesHow)
                                                : std::string("no mbarrier ring cycled by a loop"));
  if (p.mbarrierCount) {
    std::string groups;
    for (const MbarrierGroup &g : p.mbarriers)
      groups += fmt::format("{}{}x count {} at {} (line {})", groups.empty() ? "" : "; ", g.size,
                            g.count, g.base, g.line);
    o += fmt::format("    mbarriers: {} initialised: {}\n", p.mbarrierCount, groups);
  }
  // Every wait of the corpus's kernels fits (attention_fwd_sm100 has 12);
  // past that the JSON form has them all.
  constexpr size_t kWaitsShown = 12;
  size_t shownWaits = 0;
  for (const WaitSite &w : p.waits) {
    if (shownWaits++ == kWaitsShown) {
      o += fmt::format("    ... {} more waits\n", p.waits.size() - kWaitsShown);
      break;
    }
    o += fmt::format(
        "    wait line {}{}: mbarrier {} parity {}{}\n", w.line,
        w.loop >= 0 ? fmt::format(" (L{})", w.loop) : "", w.barrier, w.parity,
        w.distinctBarriers > 1 ? fmt::format(", cycles {} barriers", w.distinctBarriers) : "");
  }
  for (const ExpectTx &e : p.expectTx)
    o += fmt::format("    expect_tx line {}{}: {} bytes\n", e.line,
                     e.loop >= 0 ? fmt::format(" (L{})", e.loop) : "", e.bytes);
  size_t threadBranches = 0;
  for (const RoleBranch &r : p.roles) {
    if (r.granularity == "thread") {
      ++threadBranches;
      continue;
    }
    o += fmt::format("    role branch line {} ({}-uniform): taken by {} [{}]\n", r.line,
                     r.granularity, r.taken, r.condition);
  }
  if (threadBranches)
    o += fmt::format("    {} branches select single threads or lanes\n", threadBranches);
  if (p.wgmmaCommits || !p.wgmmaWaitDepths.empty()) {
    std::string depths;
    for (int64_t d : p.wgmmaWaitDepths)
      depths += (depths.empty() ? "" : ", ") + std::to_string(d);
    o += fmt::format("    wgmma: {} commit_group, wait_group depths {{{}}}\n", p.wgmmaCommits,
                     depths);
  }
  for (const std::string &r : p.setmaxnreg)
    o += "    setmaxnreg " + r + "\n";
  if (!p.namedBarriers.empty()) {
    std::string bars;
    for (size_t i = 0; i < p.namedBarriers.size() && i < 6; ++i)
      bars += (i ? "; " : "") + p.namedBarriers[i];
    if (p.namedBarriers.size() > 6)
      bars += fmt::format("; +{} more", p.namedBarriers.size() - 6);
    o += "    CTA barriers: " + bars + "\n";
  }
  o += "    epilogue: " + p.epilogue + "\n";
  for (const std::string &n : s.notes)
    o += "  note: " + n + "\n";
  return o;
}

llvm::json::Value summaryToJson(const KernelSummary &s) {
  using llvm::json::Array;
  using llvm::json::Object;
  auto histogram = [](const Histogram &h) {
    Object o;
    for (const auto &[cls, keys] : h) {
      Object k;
      for (const auto &[key, n] : keys)
        k[key] = n;
      o[std::string(className(cls))] = std::move(k);
    }
    return o;
  };
  Array params;
  for (const Param &p : s.params)
    params.push_back(Object{
        {"name", p.name}, {"type", p.type}, {"align", p.align}, {"array_bytes", p.arrayBytes}});
  Array loops;
  for (const LoopSummary &l : s.loops) {
    Object o{{"id", l.id},
             {"parent", l.parent},
             {"depth", l.depth},
             {"first_line", l.firstLine},
             {"last_line", l.lastLine},
             {"trip", l.trip},
             {"instructions", l.instructions},
             {"spin_waits", l.spinWaits},
             {"counter", l.inductionVar},
             {"histogram", histogram(l.histogram)}};
    if (l.tripConstant)
      o["trip_count"] = *l.tripConstant;
    loops.push_back(std::move(o));
  }
  const Pipeline &p = s.pipeline;
  Array mbarriers, waits, expect, roles;
  for (const MbarrierGroup &g : p.mbarriers)
    mbarriers.push_back(
        Object{{"base", g.base}, {"size", g.size}, {"count", g.count}, {"line", g.line}});
  for (const WaitSite &w : p.waits)
    waits.push_back(Object{{"line", w.line},
                           {"loop", w.loop},
                           {"barrier", w.barrier},
                           {"parity", w.parity},
                           {"distinct_barriers", w.distinctBarriers}});
  for (const ExpectTx &e : p.expectTx)
    expect.push_back(Object{{"line", e.line}, {"loop", e.loop}, {"bytes", e.bytes}});
  for (const RoleBranch &r : p.roles)
    roles.push_back(Object{{"line", r.line},
                           {"condition", r.condition},
                           {"granularity", r.granularity},
                           {"taken_by", r.taken}});
  Array depths, setmax, named;
  for (int64_t d : p.wgmmaWaitDepths)
    depths.push_back(d);
  for (const std::string &x : p.setmaxnreg)
    setmax.push_back(x);
  for (const std::string &x : p.namedBarriers)
    named.push_back(x);
  Object pipeline{{"mbarrier_count", p.mbarrierCount},
                  {"mbarriers", std::move(mbarriers)},
                  {"waits", std::move(waits)},
                  {"expect_tx", std::move(expect)},
                  {"roles", std::move(roles)},
                  {"wgmma_commits", p.wgmmaCommits},
                  {"wgmma_wait_depths", std::move(depths)},
                  {"setmaxnreg", std::move(setmax)},
                  {"cta_barriers", std::move(named)},
                  {"epilogue", p.epilogue}};
  if (p.stages) {
    pipeline["stages"] = *p.stages;
    pipeline["stages_how"] = p.stagesHow;
  } else {
    pipeline["stages"] = nullptr;
  }
  Object regs;
  for (const auto &[t, n] : s.registersByType)
    regs[t] = n;
  Object o{{"kernel", s.name},
           {"line", s.line},
           {"params", std::move(params)},
           {"shared_static_bytes", s.staticShared},
           {"shared_dynamic", s.dynamicShared},
           {"registers_declared", s.registersDeclared},
           {"registers_by_type", std::move(regs)},
           {"instructions", s.instructions},
           {"blocks", s.blocks},
           {"outside_loops", Object{{"instructions", s.outside.instructions},
                                    {"histogram", histogram(s.outside.histogram)}}},
           {"loops", std::move(loops)},
           {"pipeline", std::move(pipeline)}};
  if (s.ptxas) {
    Object px;
    auto put = [&](const char *k, const std::optional<int64_t> &v) {
      if (v)
        px[k] = *v;
    };
    put("registers", s.ptxas->registers);
    put("spill_stores", s.ptxas->spillStores);
    put("spill_loads", s.ptxas->spillLoads);
    put("stack_frame", s.ptxas->stackFrame);
    put("shared_bytes", s.ptxas->sharedBytes);
    put("barriers", s.ptxas->barriers);
    px["source"] = s.ptxas->source.empty() ? std::string("ptxas -v") : s.ptxas->source;
    o["ptxas"] = std::move(px);
  }
  Array notes;
  for (const std::string &n : s.notes)
    notes.push_back(n);
  o["notes"] = std::move(notes);
  return o;
}

} // namespace tilescope::ptx
