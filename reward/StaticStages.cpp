// The static stages of the reward: types, dispatch, resources, layouts,
// barriers, races, coverage. Each runs the
// same library code as `tilescope check` / `dispatch`, and keeps findings
// (fail) apart from what could not be decided (unknown).
#include "check/KernelProofs.h"
#include "dispatch/Dispatch.h"
#include "ir/Checker.h"
#include "racecheck/StaticRaces.h"
#include "reward/Stages.h"
#include "verifier/BarrierProofs.h"
#include "verifier/KernelLayouts.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <optional>

namespace tilescope::reward_detail {

RewardDiagnostic diagnosticAt(llvm::SourceMgr &sm, llvm::SMLoc loc, const std::string &kernel,
                              const std::string &code, const std::string &message,
                              const std::string &witness, const std::string &severity) {
  RewardDiagnostic d;
  d.severity = severity;
  d.kernel = kernel;
  d.code = code;
  d.message = message;
  d.witness = witness;
  if (loc.isValid())
    if (unsigned buffer = sm.FindBufferContainingLoc(loc)) {
      d.file = sm.getMemoryBuffer(buffer)->getBufferIdentifier().str();
      auto [line, col] = sm.getLineAndColumn(loc, buffer);
      d.line = line;
      d.column = col;
    }
  return d;
}

namespace {

bool has(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

// "parity aliasing" -> "parity-aliasing"
std::string slug(std::string_view name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
  return out;
}

} // namespace

std::string codeOfMessage(const std::string &stage, const std::string &m) {
  if (stage == "parse") {
    if (has(m, "unknown builtin"))
      return "parse.unknown-builtin";
    if (has(m, "unknown layout") || has(m, "unknown axis") || has(m, "swizzle"))
      return "parse.layout";
    if (has(m, "unknown launch item") || has(m, "target"))
      return "parse.launch";
    return "parse.syntax";
  }
  if (stage == "types") {
    if (has(m, "has parameters: score one point") || has(m, "--set gives") ||
        has(m, "is not in the space") || has(m, "does not instantiate"))
      return "types.point";
    if (has(m, "unknown call"))
      return "types.unknown-call";
    if (has(m, "unknown function"))
      return "types.unknown-function";
    if (has(m, "undefined name") || has(m, "is undefined"))
      return "types.undefined-name";
    if (has(m, "already defined"))
      return "types.redefined";
    if (has(m, "dtype mismatch") || has(m, "mixes an integer"))
      return "types.dtype-mismatch";
    if (has(m, "shape mismatch") || has(m, "must be 2-D") || has(m, "subscript"))
      return "types.shape-mismatch";
    if (has(m, "must be executed by a whole"))
      return "types.divergent-scope";
    if (has(m, "needs sm_") || has(m, "limit of"))
      return "types.target";
    if (has(m, "argument"))
      return "types.arguments";
    return "types.ill-formed";
  }
  if (stage == "dispatch")
    return has(m, "no implementation") ? "dispatch.no-implementation" : "dispatch.refused";
  return stage + ".error";
}

std::vector<RewardDiagnostic> convertDiagnostics(const Diagnostics &diag, size_t from,
                                                 const std::string &kernel,
                                                 const std::string &stage) {
  std::vector<RewardDiagnostic> out;
  std::string lastCode = stage + ".error";
  for (size_t i = from; i < diag.all().size(); ++i) {
    const Diagnostic &d = diag.all()[i];
    RewardDiagnostic r;
    r.severity = d.kind == Diagnostic::Error     ? "error"
                 : d.kind == Diagnostic::Warning ? "warning"
                                                 : "note";
    r.file = d.file;
    r.line = d.line;
    r.column = d.column;
    r.kernel = kernel;
    r.message = d.message;
    // A note belongs to the error before it.
    r.code = d.kind == Diagnostic::Note ? lastCode : codeOfMessage(stage, d.message);
    lastCode = r.code;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

StageResult fromDiag(const char *name, const Diagnostics &diag, const std::string &kernel) {
  StageResult r;
  r.name = name;
  r.diagnostics = convertDiagnostics(diag, 0, kernel, name);
  r.status = diag.hasErrors() ? StageStatus::Fail : StageStatus::Pass;
  return r;
}

} // namespace

StageResult typesStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  Diagnostics diag(sm, false);
  Module one;
  one.kernels.push_back(kernel);
  checkModule(one, diag);
  // The later stages read an instance: a kernel with parameters is scored
  // at a point (tilescope instantiate --set ...), not as a family.
  if (!diag.hasErrors() && !kernel.space.empty())
    diag.error(kernel.loc, fmt::format("kernel '{}' has parameters: score one point of it "
                                       "(reward --set NAME=VALUE,..., or \"set\" in the task)",
                                       kernel.name));
  return fromDiag("types", diag, kernel.name);
}

StageResult dispatchStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  Diagnostics diag(sm, false);
  auto result = dispatchKernel(kernel, diag);
  StageResult r = fromDiag("dispatch", diag, kernel.name);
  if (!result && r.status == StageStatus::Pass) // refused without a diagnostic
    r.status = StageStatus::Fail;
  if (result)
    r.reason = fmt::format("{} tile primitive call{} dispatched", result->decisions.size(),
                           result->decisions.size() == 1 ? "" : "s");
  return r;
}

StageResult layoutsStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  StageResult r;
  r.name = "layouts";
  KernelLayoutInput in = collectKernelLayouts(kernel);
  KernelLayoutReport report =
      verifyKernelLayouts(in.buffers, in.uses, targetInfo(in.target), in.launch);
  KernelLayoutReport strides = verifyGlobalStrides(in.globalStrides, in.constraints);
  for (auto &f : strides.findings)
    report.findings.push_back(std::move(f));
  for (auto &u : strides.undecided)
    report.undecided.push_back(std::move(u));
  for (const KernelFinding &f : report.findings) {
    const Witness &w = f.violation.witness;
    std::string witness;
    for (size_t i = 0; i < w.logical.size(); ++i) {
      std::string coords;
      for (int64_t c : w.logical[i])
        coords += fmt::format("{}{}", coords.empty() ? "" : ", ", c);
      witness += fmt::format("{}{}({})", witness.empty() ? "" : " and ",
                             i < w.buffers.size() ? w.buffers[i] : f.buffer, coords);
    }
    if (w.physical.axes)
      witness += " -> " + w.physical.str();
    for (const auto &[name, v] : w.symbols)
      witness += fmt::format("; {} = {}", name, v);
    r.diagnostics.push_back(diagnosticAt(sm, f.loc, kernel.name,
                                         "layouts." + slug(violationKindName(f.violation.kind)),
                                         f.violation.message, witness));
  }
  for (const auto &[loc, why] : report.undecided)
    r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, "layouts.undecided",
                                         "could not prove the layout legal: " + why, "",
                                         "warning"));
  for (const auto &[loc, why] : in.skipped)
    r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, "layouts.skipped",
                                         "layout not checked: " + why, "", "note"));
  r.status = !report.findings.empty()    ? StageStatus::Fail
             : !report.undecided.empty() ? StageStatus::Unknown
                                         : StageStatus::Pass;
  if (r.status == StageStatus::Unknown)
    r.reason = fmt::format("{} layout obligation{} not decided", report.undecided.size(),
                           report.undecided.size() == 1 ? "" : "s");
  return r;
}

StageResult barriersStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  StageResult r;
  r.name = "barriers";
  BarrierReport report = proveBarrierProtocols(kernel, {});
  for (const ProtocolFinding &f : report.findings) {
    std::string_view kind = protocolViolationName(f.kind);
    std::string text = llvm::StringRef(f.message).startswith(kind)
                           ? f.message
                           : fmt::format("{}: {}", kind, f.message);
    std::string code = "barriers." + slug(kind);
    std::string witness;
    for (const auto &[loc, note] : f.notes)
      witness += (witness.empty() ? "" : "; ") + note;
    r.diagnostics.push_back(diagnosticAt(sm, f.loc, kernel.name, code,
                                         text + (f.symbolic     ? " [Z3 witness]"
                                                 : f.exhaustive ? " [exhaustive check]"
                                                                : " [structural]"),
                                         witness));
    for (const auto &[loc, note] : f.notes)
      r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, code, note, "", "note"));
  }
  for (const auto &[loc, text] : report.notProved)
    r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, "barriers.not-proved",
                                         "not proved: " + text, "", "warning"));
  for (const auto &[loc, text] : report.checkedExhaustively)
    r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, "barriers.checked-exhaustively",
                                         fmt::format("{}: {}", report.method, text), "",
                                         "warning"));
  bool notChecked = llvm::StringRef(report.method).startswith("not");
  r.status = !report.findings.empty()                  ? StageStatus::Fail
             : !report.notProved.empty() || notChecked ? StageStatus::Unknown
                                                       : StageStatus::Pass;
  r.reason = report.method;
  return r;
}

StageResult racesStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  StageResult r;
  r.name = "races";
  RaceReport report = checkStaticRaces(kernel);
  for (const RaceFinding &f : report.findings) {
    std::string code = f.kind == RaceKind::DataRace ? "races.data-race" : "races.missing-fence";
    RewardDiagnostic d = diagnosticAt(sm, f.first, kernel.name, code, f.message);
    RewardDiagnostic other = diagnosticAt(
        sm, f.second, kernel.name, code,
        f.kind == RaceKind::DataRace ? "the other access" : "the generic-proxy write", "", "note");
    d.witness = fmt::format("the other access at {}:{}", other.line, other.column);
    r.diagnostics.push_back(std::move(d));
    r.diagnostics.push_back(std::move(other));
  }
  for (const auto &[loc, text] : report.notChecked)
    r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, "races.not-checked",
                                         "not checked: " + text, "", "warning"));
  r.status = !report.findings.empty()     ? StageStatus::Fail
             : !report.notChecked.empty() ? StageStatus::Unknown
                                          : StageStatus::Pass;
  r.reason = fmt::format("{} access pair{} proved race-free, {} left to the barrier proofs",
                         report.pairsProved, report.pairsProved == 1 ? "" : "s",
                         report.pairsOrderedByMbarrier);
  return r;
}

namespace {

// "write coverage: no CTA ... (for K = 8, M = 1, N = 8): ..." -> "write-coverage"
// (the kind every error of the coverage proofs starts with); "error" when
// the message has none.
std::string kindOf(const std::string &message) {
  size_t colon = message.find(": ");
  if (colon == std::string::npos || colon > 40)
    return "error";
  for (size_t i = 0; i < colon; ++i)
    if (!std::isalpha(static_cast<unsigned char>(message[i])) && message[i] != ' ' &&
        message[i] != '-')
      return "error";
  return slug(message.substr(0, colon));
}

// The sizes (and CTA, thread, iteration) a coverage or bounds finding names:
// the parenthesised "(for ...)" of its message.
std::string witnessOf(const std::string &message) {
  size_t open = message.find("(for ");
  if (open == std::string::npos)
    return "";
  int depth = 0;
  for (size_t i = open; i < message.size(); ++i) {
    depth += message[i] == '(' ? 1 : message[i] == ')' ? -1 : 0;
    if (depth == 0)
      return message.substr(open + 1, i - open - 1);
  }
  return "";
}

} // namespace

StageResult coverageStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  StageResult r;
  r.name = "coverage";
  // `check`'s own proofs (check/KernelProofs.h): write coverage with the
  // global bounds, and on devices(N) kernels the device protocol.
  Diagnostics diag(sm, false);
  std::vector<std::string> methods;
  Verdict verdict = Verdict::Proved;
  for (const char *name : {"coverage", "devices"}) {
    std::optional<ProofOutcome> o = runKernelProof(name, kernel, diag);
    if (!o)
      continue;
    verdict = combine(verdict, o->verdict());
    if (!o->method.empty())
      methods.push_back(fmt::format("{}: {}", name, o->method));
  }
  // Each error carries its sizes and the notes after it (the stores that
  // miss the element) as its witness; the notes stay diagnostics too.
  const std::vector<Diagnostic> &all = diag.all();
  std::vector<RewardDiagnostic> converted = convertDiagnostics(diag, 0, kernel.name, "coverage");
  std::string code = "coverage.error";
  size_t error = SIZE_MAX; // the index in r.diagnostics of the error the notes belong to
  for (size_t i = 0; i < all.size(); ++i) {
    RewardDiagnostic &d = converted[i];
    if (all[i].kind == Diagnostic::Error) {
      code = "coverage." + kindOf(all[i].message);
      d.witness = witnessOf(all[i].message);
    } else if (all[i].kind == Diagnostic::Warning) {
      code = llvm::StringRef(all[i].message).startswith("not proved") ? "coverage.not-proved"
                                                                      : "coverage.warning";
    }
    d.code = code;
    r.diagnostics.push_back(std::move(d));
    if (all[i].kind == Diagnostic::Error) {
      error = r.diagnostics.size() - 1;
    } else if (all[i].kind == Diagnostic::Note && error != SIZE_MAX) {
      std::string &w = r.diagnostics[error].witness;
      w += (w.empty() ? "" : "; ") + all[i].message;
    } else {
      error = SIZE_MAX;
    }
  }
  r.status = verdict == Verdict::Finding  ? StageStatus::Fail
             : verdict == Verdict::Budget ? StageStatus::Budget
             : verdict == Verdict::Proved ? StageStatus::Pass
                                          : StageStatus::Unknown;
  r.reason = llvm::join(methods, "; ");
  return r;
}

} // namespace tilescope::reward_detail
