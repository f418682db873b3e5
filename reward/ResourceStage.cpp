// The resources stage: verifier/Resources.h's check of what one CTA takes
// from an SM — shared memory as the lowering lays it out, registers under
// setmaxnreg, tensor-memory columns, instruction operand ranges — against
// the target's limits. The reason carries the resource summary (shared
// bytes, registers per thread, CTAs per SM, occupancy).
#include "ir/Intrinsics.h"
#include "reward/Stages.h"
#include "verifier/Resources.h"

#include <llvm/ADT/StringRef.h>

namespace tilescope::reward_detail {
namespace {

std::string codeOf(llvm::StringRef message) {
  if (message.startswith("operand range"))
    return "resources.operand-range";
  if (message.contains("shared memory"))
    return "resources.shared-memory";
  if (message.contains("tensor memory") ||
      message.contains(intrinsicName(IntrinsicId::Tcgen05Alloc)))
    return "resources.tensor-memory";
  if (message.contains("register") || message.contains("setmaxnreg"))
    return "resources.registers";
  return "resources.limit";
}

} // namespace

StageResult resourcesStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  StageResult r;
  r.name = "resources";
  ResourceReport report = checkResources(kernel);
  for (const ResourceFinding &f : report.findings) {
    std::string code = codeOf(f.message);
    std::string witness;
    for (const auto &[loc, note] : f.notes)
      witness += (witness.empty() ? "" : "; ") + note;
    r.diagnostics.push_back(diagnosticAt(sm, f.loc, kernel.name, code, f.message, witness));
    for (const auto &[loc, note] : f.notes)
      r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, code, note, "", "note"));
  }
  r.status = report.findings.empty() ? StageStatus::Pass : StageStatus::Fail;
  r.reason = report.summary.str();
  return r;
}

} // namespace tilescope::reward_detail
