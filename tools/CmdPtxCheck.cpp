// `tilescope ptx check FILE.ptx`: the synchronisation of each kernel lifted
// into a barrier skeleton (ptx/Lift.h) and put through the barrier proofs.
// Verdicts as for the IR: proved (exit 0), finding at a PTX line (1),
// unknown with the reasons (3). Memory accesses are not lifted, so without
// --protocol-only a clean kernel is unknown: its pipeline stages and races
// are not checked. --protocol-only scopes the verdict to the barrier
// protocol (arrivals per phase, parity, transaction bytes with --tma-box,
// deadlock, init order, CTA/named barriers, wgmma discipline).
#include "ir/Verdict.h"
#include "ptx/Lift.h"
#include "tools/Command.h"
#include "tools/PtxCommands.h"
#include "verifier/BarrierProofs.h"

#include <fmt/format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {

namespace {
std::string lineOf(llvm::SourceMgr &sm, llvm::SMLoc loc) {
  if (!loc.isValid())
    return "";
  auto [line, col] = sm.getLineAndColumn(loc);
  return std::to_string(line);
}
} // namespace

int runPtxCheck(PtxInput &in, const std::map<std::string, int64_t> &boxes,
                const std::vector<ptx::LiftOptions::LowerBound> &assumptions, bool protocolOnly,
                bool json) {
  Verdict all = Verdict::Proved;
  llvm::json::Array kernelsJson;
  for (const ptx::Function *f : in.kernels) {
    ptx::LiftOptions opt;
    opt.tmaBoxBytes = boxes;
    opt.assumptions = assumptions;
    ptx::Lifted lifted = ptx::liftSynchronisation(*in.module, *f, opt);
    Diagnostics diag(in.sourceMgr, !json);
    BarrierReport report = proveBarrierProtocols(lifted.skeleton);
    std::vector<std::string> unknown;
    unsigned findings = 0;
    if (lifted.complete) {
      findings = reportBarrierProtocols(report, diag);
    } else {
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
    if (!protocolOnly)
      unknown.push_back("shared- and global-memory accesses are not lifted from PTX: pipeline "
                        "stages (read after fill, refill after release) and data races are not "
                        "checked (--protocol-only scopes the verdict to the barrier protocol)");
    Verdict v = findings ? Verdict::Finding : unknown.empty() ? Verdict::Proved : Verdict::Unknown;
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
      for (const ProtocolResult &r : report.results)
        if (r.property.find("pipeline stages") == std::string::npos)
          rs.push_back(llvm::json::Object{{"property", r.property}, {"status", r.status}});
      kernelsJson.push_back(llvm::json::Object{{"kernel", f->name},
                                               {"verdict", std::string(verdictName(v))},
                                               {"events", lifted.events},
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
      if (r.property.find("pipeline stages") != std::string::npos)
        continue; // vacuous without the lifted accesses
      llvm::outs() << "  " << r.property << ": " << r.status << "\n";
    }
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
