// `tilescope ptx check FILE.ptx`: the synchronisation and the shared-memory
// accesses of each kernel lifted into a barrier skeleton (ptx/Lift.h) and
// put through the barrier proofs (with the pipeline stages) and the static
// race check. Verdicts as for the IR: proved (exit 0), finding at a PTX line
// (1), unknown with the reasons (3). The race check covers shared memory
// within a CTA; global memory is not modelled (said in the output).
// --protocol-only scopes the verdict to the barrier protocol (arrivals per
// phase, parity, transaction bytes with --tma-box, deadlock, init order,
// CTA/named barriers, wgmma discipline): accesses are dropped.
#include "ir/Budget.h"
#include "ir/Verdict.h"
#include "ptx/Lift.h"
#include "racecheck/StaticRaces.h"
#include "tools/Command.h"
#include "tools/PtxCommands.h"
#include "verifier/BarrierProofs.h"
#include "proof/ProofContext.h"

#include <fmt/format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

namespace tilescope::tool {

namespace {
std::string lineOf(llvm::SourceMgr &sm, llvm::SMLoc loc) {
  if (!loc.isValid())
    return "";
  auto [line, col] = sm.getLineAndColumn(loc);
  return std::to_string(line);
}

std::string raceStatus(const ptx::Lifted &lifted, const RaceReport &races) {
  if (!races.findings.empty())
    return fmt::format("{} finding(s)", races.findings.size());
  if (!races.notChecked.empty() || !lifted.memoryNotLifted.empty() || !lifted.complete)
    return fmt::format("not proved ({} pairs proved, {} left to the stage proofs; see unknown)",
                       races.pairsProved, races.pairsOrderedByMbarrier);
  return fmt::format("proved for all sizes ({} pairs; {} pipeline-stage pairs left to the "
                     "stage proofs)",
                     races.pairsProved, races.pairsOrderedByMbarrier);
}
} // namespace

int runPtxCheck(PtxInput &in, const std::map<std::string, int64_t> &boxes,
                const std::vector<ptx::LiftOptions::LowerBound> &assumptions, bool protocolOnly,
                bool json, bool printSkeleton) {
  Verdict all = Verdict::Proved;
  llvm::json::Array kernelsJson;
  for (const ptx::Function *f : in.kernels) {
    ptx::LiftOptions opt;
    opt.tmaBoxBytes = boxes;
    opt.assumptions = assumptions;
    ptx::Lifted lifted = ptx::liftSynchronisation(*in.module, *f, opt);
    if (printSkeleton && !json)
      llvm::outs() << lifted.skeleton.print();
    Diagnostics diag(in.sourceMgr, !json);
    // Each kernel's queries in a Z3 context of their own (proof/ProofContext.h).
    ProofContextScope context;
    // The protocol keeps tensor-memory accesses: they tie a tcgen05.ld to
    // the MMA whose commit it must wait for (the tcgen05 discipline).
    if (protocolOnly)
      for (SyncEvent &e : lifted.skeleton.events)
        e.accesses.erase(
            std::remove_if(e.accesses.begin(), e.accesses.end(),
                           [](const MemoryAccess &a) { return a.scope != MemScope::Tmem; }),
            e.accesses.end());
    BarrierReport report = proveBarrierProtocols(lifted.skeleton);
    RaceReport races;
    if (!protocolOnly && lifted.accesses > 0) {
      RaceOptions ro;
      ro.threadPairsListed = 4096;
      ro.sameWarpStoresUndecided = true;
      races = checkStaticRaces(lifted.skeleton, ro);
    }
    std::vector<std::string> unknown;
    unsigned findings = 0;
    if (lifted.complete) {
      findings = reportBarrierProtocols(report, diag);
      for (const RaceFinding &rf : races.findings) {
        diag.error(rf.first, rf.message);
        diag.note(rf.second,
                  rf.kind == RaceKind::DataRace ? "the other access" : "the generic-proxy write");
      }
      findings += unsigned(races.findings.size());
    } else {
      for (const RaceFinding &rf : races.findings)
        unknown.push_back(fmt::format("line {}: possible race not trusted, as synchronisation "
                                      "was left out: {}",
                                      lineOf(in.sourceMgr, rf.first), rf.message));

      // A finding may rest on an operation that was not lifted (an arrival
      // through tcgen05.commit, a barrier at an address not derived).
      for (const ProtocolFinding &pf : report.findings)
        unknown.push_back(fmt::format("line {}: possible {} not trusted, as operations were left "
                                      "out: {}",
                                      lineOf(in.sourceMgr, pf.loc), protocolViolationName(pf.kind),
                                      pf.message));
      report.findings.clear();
    }
    for (const auto &[loc, why] : lifted.notLifted)
      unknown.push_back(fmt::format(
          "{}{}", loc.isValid() && loc != f->loc ? "line " + lineOf(in.sourceMgr, loc) + ": " : "",
          why));
    for (const auto &[loc, why] : report.notProved) {
      bool alreadySaid = false;
      for (const auto &[l2, w2] : lifted.notLifted)
        alreadySaid |= w2 == why;
      if (!alreadySaid)
        unknown.push_back("not proved: " + why);
    }
    if (!protocolOnly) {
      for (const auto &[loc, why] : lifted.memoryNotLifted)
        unknown.push_back(fmt::format(
            "{}shared memory: {}",
            loc.isValid() && loc != f->loc ? "line " + lineOf(in.sourceMgr, loc) + ": " : "", why));
      for (const auto &[loc, why] : races.notChecked)
        unknown.push_back(
            fmt::format("{}races not checked: {}",
                        loc.isValid() ? "line " + lineOf(in.sourceMgr, loc) + ": " : "", why));
    }
    Verdict v = findings ? Verdict::Finding : unknown.empty() ? Verdict::Proved : Verdict::Unknown;
    // What was not decided because a budget ran out is `budget`, not unknown.
    if (v == Verdict::Unknown && activeBudget() && activeBudget()->exceeded() != BudgetKind::None) {
      v = Verdict::Budget;
      unknown.push_back("budget exceeded: " + activeBudget()->message());
    }
    all = combine(all, v);
    const BarrierSkeleton &sk = lifted.skeleton;
    if (json) {
      llvm::json::Array fs, us, rs;
      for (const ProtocolFinding &pf : report.findings)
        fs.push_back(llvm::json::Object{{"kind", std::string(protocolViolationName(pf.kind))},
                                        {"line", lineOf(in.sourceMgr, pf.loc)},
                                        {"message", pf.message}});
      for (const std::string &u : unknown)
        us.push_back(u);
      for (const RaceFinding &rf : races.findings)
        if (lifted.complete)
          fs.push_back(llvm::json::Object{{"kind", "race"},
                                          {"line", lineOf(in.sourceMgr, rf.first)},
                                          {"other_line", lineOf(in.sourceMgr, rf.second)},
                                          {"message", rf.message}});
      for (const ProtocolResult &r : report.results)
        if (!protocolOnly || r.property.find("pipeline stages") == std::string::npos)
          rs.push_back(llvm::json::Object{{"property", r.property}, {"status", r.status}});
      if (!protocolOnly)
        rs.push_back(llvm::json::Object{{"property", "races (shared memory, within a CTA)"},
                                        {"status", raceStatus(lifted, races)}});
      kernelsJson.push_back(llvm::json::Object{{"kernel", f->name},
                                               {"verdict", std::string(verdictName(v))},
                                               {"events", lifted.events},
                                               {"accesses", lifted.accesses},
                                               {"roles", int64_t(sk.roles.size())},
                                               {"loops", int64_t(sk.loops.size())},
                                               {"findings", std::move(fs)},
                                               {"unknown", std::move(us)},
                                               {"results", std::move(rs)}});
      continue;
    }
    llvm::outs() << fmt::format("{}: kernel {}: {}\n", in.module->file, f->name, verdictName(v));
    std::string arrays;
    for (const auto &[name, b] : sk.barriers)
      arrays += fmt::format("{}{}[{}]", arrays.empty() ? "" : ", ", name, b.size);
    llvm::outs() << fmt::format("  lifted: {} synchronisation events, {} roles, {} loops, "
                                "mbarrier arrays {}\n",
                                lifted.events, sk.roles.size(), sk.loops.size(),
                                arrays.empty() ? "none" : arrays);
    if (!sk.symbols.empty())
      llvm::outs() << "  reading: parameters in [0, 2^30], 32-bit index arithmetic without "
                      "wrap-around\n";
    for (const auto &a : assumptions)
      llvm::outs() << fmt::format("  assuming {} >= {} (--assume)\n", a.param, a.min);
    for (size_t r = 0; r < sk.roles.size(); ++r)
      llvm::outs() << fmt::format("  role {}: {} (from line {})\n", r, sk.roles[r].describe(),
                                  lineOf(in.sourceMgr, sk.roles[r].loc));
    for (const ProtocolResult &r : report.results) {
      if (protocolOnly && r.property.find("pipeline stages") != std::string::npos)
        continue; // vacuous without the accesses
      llvm::outs() << "  " << r.property << ": " << r.status << "\n";
    }
    if (!protocolOnly)
      llvm::outs() << fmt::format("  races (shared memory, within a CTA; {} accesses lifted): "
                                  "{}\n  global memory: not modelled (the grid and tensor maps "
                                  "are launch arguments)\n",
                                  lifted.accesses, raceStatus(lifted, races));
    for (const std::string &u : unknown)
      llvm::outs() << "  unknown: " << u << "\n";
  }
  if (json)
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                               {"file", in.module->file},
                                               {"verdict", std::string(verdictName(all))},
                                               {"kernels", std::move(kernelsJson)}}))
                 << "\n";
  return verdictExitCode(all);
}

} // namespace tilescope::tool
