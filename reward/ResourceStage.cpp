// The resources stage: what a CTA asks of the target — threads, cluster size
// and shared memory (every shared buffer and mbarrier the kernel declares,
// at every size the where clause admits) — against the target's limits.
// Shared memory that depends on a size is evaluated at admitted sizes up to
// 2^16 times the smallest: a size over the limit fails with that size as the
// witness; none found is `unknown` (not proved for every size).
// Registers and tensor-memory columns are left to verifier/Resources (the
// stage says so in its reason).
#include "reward/Stages.h"
#include "verifier/BarrierSkeleton.h"
#include "ir/ConcreteEval.h"
#include "verifier/FallbackSizes.h"

#include <fmt/format.h>

#include <functional>

namespace tilescope::reward_detail {
namespace {

struct SharedUse {
  std::string name;
  llvm::SMLoc loc;
  std::vector<Expr> extents;    // elements = product
  int64_t bytesPerElement8 = 0; // bits per element
};

void collectShared(const Block &block, std::vector<SharedUse> &out) {
  for (const Stmt &s : block) {
    switch (s->kind) {
    case StmtKind::BufferDecl: {
      const auto &b = as<BufferDecl>(s);
      if (b.scope == MemScope::Shared)
        out.push_back({b.name, s->loc, b.shape, dtypeBits(b.dtype)});
      break;
    }
    case StmtKind::BarrierDecl: {
      const auto &b = as<BarrierDecl>(s);
      std::vector<Expr> extents;
      if (b.arraySize)
        extents.push_back(b.arraySize);
      out.push_back({b.name, s->loc, extents, 64});
      break;
    }
    case StmtKind::For:
      collectShared(as<For>(s).body, out);
      break;
    case StmtKind::If:
      collectShared(as<If>(s).thenBody, out);
      collectShared(as<If>(s).elseBody, out);
      break;
    default:
      break;
    }
  }
}

// Shared bytes at `sizes`; nothing when an extent does not evaluate.
std::optional<int64_t> sharedBytes(const std::vector<SharedUse> &uses, const SizeAssignment &sizes,
                                   std::string *culprit) {
  LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = sizes.find(as<Var>(e).name);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  int64_t total = 0;
  for (const SharedUse &u : uses) {
    __int128 bits = u.bytesPerElement8;
    for (const Expr &e : u.extents) {
      auto v = evalConcrete(e, leaf);
      if (!v) {
        if (culprit)
          *culprit = u.name;
        return std::nullopt;
      }
      bits *= *v;
    }
    if (bits > (__int128{1} << 60))
      bits = __int128{1} << 60;
    total += static_cast<int64_t>((bits + 7) / 8);
    if (total > (int64_t{1} << 60))
      total = int64_t{1} << 60;
  }
  return total;
}

bool dependsOnSizes(const std::vector<SharedUse> &uses) {
  for (const SharedUse &u : uses)
    for (const Expr &e : u.extents)
      if (!constantValue(e))
        return true;
  return false;
}

} // namespace

StageResult resourcesStage(const Kernel &kernel, llvm::SourceMgr &sm) {
  StageResult r;
  r.name = "resources";
  const TargetInfo &target = targetInfo(kernel.launch.target);
  auto fail = [&](llvm::SMLoc loc, const std::string &code, const std::string &message,
                  const std::string &witness = "") {
    r.diagnostics.push_back(diagnosticAt(sm, loc, kernel.name, code, message, witness));
    r.status = StageStatus::Fail;
  };
  r.status = StageStatus::Pass;
  if (kernel.launch.threads > target.maxThreadsPerCta)
    fail(kernel.launch.loc, "resources.threads",
         fmt::format("{} threads per CTA exceed {}'s limit of {}", kernel.launch.threads,
                     target.name, target.maxThreadsPerCta));

  std::vector<SharedUse> uses;
  collectShared(kernel.body, uses);
  std::string why;
  if (!dependsOnSizes(uses)) {
    int64_t bytes = sharedBytes(uses, {}, nullptr).value_or(0);
    if (bytes > target.sharedBytesPerCta)
      fail(uses.empty() ? kernel.loc : uses.front().loc, "resources.shared-memory",
           fmt::format("the kernel's shared buffers and mbarriers take {} bytes, over {}'s {} "
                       "bytes per CTA",
                       bytes, target.name, target.sharedBytesPerCta));
    r.reason = fmt::format("{} bytes of shared memory of {}; registers and tensor memory not "
                           "modelled yet",
                           bytes, target.sharedBytesPerCta);
    return r;
  }
  // Sizes matter: look for an admitted size over the limit.
  BarrierSkeleton sk = extractBarrierSkeleton(kernel);
  auto smallest = smallestTwoRoundSizes(sk, why);
  if (!smallest) {
    r.status = r.status == StageStatus::Fail ? r.status : StageStatus::Unknown;
    r.reason = "shared memory depends on the sizes and no admitted size was found: " + why;
    return r;
  }
  int64_t most = 0;
  SizeAssignment mostAt;
  for (int shift = 0; shift <= 16; ++shift)
    for (const auto &[name, value] : *smallest) {
      SizeAssignment sizes = *smallest;
      sizes[name] = value << shift;
      std::string notAdmitted;
      if (!admittedSizes(sk, sizes, notAdmitted))
        continue;
      std::string culprit;
      auto bytes = sharedBytes(uses, sizes, &culprit);
      if (!bytes)
        continue;
      if (*bytes > most) {
        most = *bytes;
        mostAt = sizes;
      }
    }
  if (most > target.sharedBytesPerCta) {
    fail(uses.front().loc, "resources.shared-memory",
         fmt::format("at {} the kernel's shared buffers and mbarriers take {} bytes, over {}'s {} "
                     "bytes per CTA",
                     describeSizes(mostAt), most, target.name, target.sharedBytesPerCta),
         describeSizes(mostAt));
    return r;
  }
  if (r.status == StageStatus::Pass) {
    r.status = StageStatus::Unknown;
    r.reason = fmt::format("shared memory depends on the sizes; at most {} bytes at the admitted "
                           "sizes tried ({}), not proved for every size",
                           most, describeSizes(mostAt));
  }
  return r;
}

} // namespace tilescope::reward_detail
