// Comparison of condensed kernels (Diff.h).
#include "ptx/Diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tilescope::ptx {
namespace {

int64_t classTotal(const Histogram &h, InstrClass c) {
  int64_t n = 0;
  if (auto it = h.find(c); it != h.end())
    for (const auto &[k, v] : it->second)
      n += v;
  return n;
}

// Loops ordered hottest first.
std::vector<const LoopSummary *> byHeat(const KernelSummary &s) {
  std::vector<const LoopSummary *> out;
  for (const LoopSummary &l : s.loops)
    out.push_back(&l);
  std::stable_sort(out.begin(), out.end(), [](const LoopSummary *x, const LoopSummary *y) {
    int64_t tx = classTotal(x->histogram, InstrClass::TensorCore);
    int64_t ty = classTotal(y->histogram, InstrClass::TensorCore);
    if (tx != ty)
      return tx > ty;
    return x->instructions > y->instructions;
  });
  return out;
}

std::string keysOf(const Histogram &h, InstrClass c) {
  auto it = h.find(c);
  if (it == h.end())
    return "-";
  std::string s;
  for (const auto &[k, n] : it->second)
    s += fmt::format("{}{}x {}", s.empty() ? "" : ", ", n, k);
  return s;
}

std::string opt(const std::optional<int64_t> &v) {
  return v ? std::to_string(*v) : "-";
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : "; ") + x;
  return s.empty() ? "-" : s;
}

// Drops the "(line N)" suffixes: positions differ between any two files.
std::string withoutLines(std::string s) {
  for (size_t p; (p = s.find(" (line ")) != std::string::npos;) {
    size_t e = s.find(')', p);
    s.erase(p, e == std::string::npos ? std::string::npos : e - p + 1);
  }
  return s;
}

} // namespace

std::vector<DiffRow> diffSummaries(const KernelSummary &a, const KernelSummary &b) {
  std::vector<DiffRow> rows;
  auto row = [&](std::string fact, std::string x, std::string y) {
    rows.push_back({std::move(fact), std::move(x), std::move(y)});
  };
  row("params", std::to_string(a.params.size()), std::to_string(b.params.size()));
  row("static shared bytes", std::to_string(a.staticShared), std::to_string(b.staticShared));
  row("dynamic shared", a.dynamicShared ? "yes" : "no", b.dynamicShared ? "yes" : "no");
  row("registers declared", std::to_string(a.registersDeclared),
      std::to_string(b.registersDeclared));
  if (a.ptxas || b.ptxas) {
    PtxasFigures none;
    const PtxasFigures &pa = a.ptxas ? *a.ptxas : none, &pb = b.ptxas ? *b.ptxas : none;
    row("ptxas registers", opt(pa.registers), opt(pb.registers));
    row("ptxas spill stores", opt(pa.spillStores), opt(pb.spillStores));
  }
  row("instructions", std::to_string(a.instructions), std::to_string(b.instructions));
  row("loops", std::to_string(a.loops.size()), std::to_string(b.loops.size()));
  auto la = byHeat(a), lb = byHeat(b);
  std::set<InstrClass> classes;
  for (size_t i = 0; i < std::max(la.size(), lb.size()) && i < 3; ++i) {
    const LoopSummary *x = i < la.size() ? la[i] : nullptr;
    const LoopSummary *y = i < lb.size() ? lb[i] : nullptr;
    std::string name = i == 0 ? "hottest loop" : fmt::format("loop #{} by heat", i + 1);
    row(name, x ? fmt::format("L{} lines {}-{}", x->id, x->firstLine, x->lastLine) : "-",
        y ? fmt::format("L{} lines {}-{}", y->id, y->firstLine, y->lastLine) : "-");
    row(name + ": trip", x ? x->trip : "-", y ? y->trip : "-");
    row(name + ": instructions", x ? std::to_string(x->instructions) : "-",
        y ? std::to_string(y->instructions) : "-");
    std::set<InstrClass> cs;
    if (x)
      for (const auto &[c, k] : x->histogram)
        cs.insert(c);
    if (y)
      for (const auto &[c, k] : y->histogram)
        cs.insert(c);
    for (InstrClass c : cs) {
      Histogram empty;
      const Histogram &hx = x ? x->histogram : empty, &hy = y ? y->histogram : empty;
      bool detailed = c != InstrClass::Move && c != InstrClass::IntegerMath &&
                      c != InstrClass::FloatMath && c != InstrClass::Branch &&
                      c != InstrClass::ParamLoad;
      if (detailed)
        row(fmt::format("{}: {}", name, className(c)), keysOf(hx, c), keysOf(hy, c));
      else
        row(fmt::format("{}: {}", name, className(c)), std::to_string(classTotal(hx, c)),
            std::to_string(classTotal(hy, c)));
    }
  }
  const Pipeline &p = a.pipeline, &q = b.pipeline;
  row("pipeline stages", opt(p.stages), opt(q.stages));
  row("mbarriers", std::to_string(p.mbarrierCount), std::to_string(q.mbarrierCount));
  auto counts = [](const Pipeline &x) {
    std::vector<std::string> v;
    for (const MbarrierGroup &g : x.mbarriers)
      v.push_back(fmt::format("{}x count {}", g.size, g.count));
    return join(v);
  };
  row("mbarrier arrival counts", counts(p), counts(q));
  row("mbarrier waits", std::to_string(p.waits.size()), std::to_string(q.waits.size()));
  auto tx = [](const Pipeline &x) {
    std::vector<std::string> v;
    for (const ExpectTx &e : x.expectTx)
      v.push_back(e.bytes);
    return join(v);
  };
  row("expect_tx bytes", tx(p), tx(q));
  auto roles = [](const Pipeline &x) {
    std::vector<std::string> v;
    for (const RoleBranch &r : x.roles)
      if (r.granularity != "thread")
        v.push_back(r.granularity + ": " + r.taken);
    return join(v);
  };
  row("role branches", roles(p), roles(q));
  row("wgmma commit_group", std::to_string(p.wgmmaCommits), std::to_string(q.wgmmaCommits));
  auto depths = [](const Pipeline &x) {
    std::vector<std::string> v;
    for (int64_t d : x.wgmmaWaitDepths)
      v.push_back(std::to_string(d));
    return join(v);
  };
  row("wgmma wait_group depths", depths(p), depths(q));
  auto noLines = [](const std::vector<std::string> &v) {
    std::vector<std::string> out;
    for (const std::string &s : v)
      out.push_back(withoutLines(s));
    return join(out);
  };
  row("setmaxnreg", noLines(p.setmaxnreg), noLines(q.setmaxnreg));
  row("CTA barriers", noLines(p.namedBarriers), noLines(q.namedBarriers));
  row("epilogue", p.epilogue, q.epilogue);
  // Global accesses over the whole kernel: vector widths and cache hints.
  auto whole = [](const KernelSummary &s, InstrClass c) {
    Histogram h = s.outside.histogram;
    for (const LoopSummary &l : s.loops)
      for (const auto &[cls, keys] : l.histogram)
        for (const auto &[k, n] : keys)
          h[cls][k] += n;
    return keysOf(h, c);
  };
  for (InstrClass c : {InstrClass::GlobalLoad, InstrClass::GlobalStore, InstrClass::Tma,
                       InstrClass::CpAsync, InstrClass::SpecialFunction, InstrClass::Shuffle})
    row(fmt::format("whole kernel: {}", className(c)), whole(a, c), whole(b, c));
  return rows;
}

std::string printDiff(const KernelSummary &a, const KernelSummary &b,
                      const std::vector<DiffRow> &rows) {
  size_t wf = 4, wa = a.name.size();
  for (const DiffRow &r : rows)
    if (r.differs()) {
      wf = std::max(wf, r.fact.size());
      wa = std::max(wa, std::min<size_t>(r.a.size(), 60));
    }
  std::string o = fmt::format("{:<{}} | {:<{}} | {}\n", "fact", wf, a.name, wa, b.name);
  o += std::string(wf, '-') + "-+-" + std::string(wa, '-') + "-+-" + std::string(20, '-') + "\n";
  size_t same = 0;
  for (const DiffRow &r : rows) {
    if (!r.differs()) {
      ++same;
      continue;
    }
    o += fmt::format("{:<{}} | {:<{}} | {}\n", r.fact, wf, r.a, wa, r.b);
  }
  o += fmt::format("({} facts differ, {} agree)\n", rows.size() - same, same);
  return o;
}

llvm::json::Value diffToJson(const KernelSummary &a, const KernelSummary &b,
                             const std::vector<DiffRow> &rows) {
  llvm::json::Array differ, agree;
  for (const DiffRow &r : rows) {
    if (r.differs())
      differ.push_back(llvm::json::Object{{"fact", r.fact}, {"a", r.a}, {"b", r.b}});
    else
      agree.push_back(llvm::json::Object{{"fact", r.fact}, {"value", r.a}});
  }
  return llvm::json::Object{
      {"a", a.name}, {"b", b.name}, {"differ", std::move(differ)}, {"agree", std::move(agree)}};
}

} // namespace tilescope::ptx
