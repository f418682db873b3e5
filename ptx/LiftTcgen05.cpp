// tcgen05 instructions as skeleton events (LiftTcgen05.h).
#include "ptx/LiftTcgen05.h"

#include "ptx/LiftExprs.h"

#include <fmt/format.h>

namespace tilescope::ptx {

Tcgen05Form tcgen05Form(const Instruction &in) {
  Tcgen05Form f;
  const std::string what = in.modifiers.empty() ? "" : in.modifiers[0];
  auto refuse = [&](std::string why) {
    f.why = std::move(why);
    return f;
  };
  if (in.hasModifier("cta_group::2"))
    return refuse(fmt::format("'{}' at line {} (cta_group::2, a CTA pair) is not lifted",
                              in.fullName(), in.line));
  if (what == "alloc" && in.operands.size() == 2) {
    f.kind = SyncKind::Tcgen05Alloc;
    f.call = IntrinsicId::Tcgen05Alloc;
    f.warpCollective = f.tmemWrite = true;
    f.columns = &in.operands[1];
    f.slot = addressOperand(in);
    if (!f.slot)
      return refuse(fmt::format("the tcgen05.alloc at line {} has no shared slot", in.line));
  } else if (what == "dealloc" && in.operands.size() == 2) {
    f.kind = SyncKind::Tcgen05Dealloc;
    f.call = IntrinsicId::Tcgen05Dealloc;
    f.warpCollective = f.tmemWrite = true;
    f.columns = &in.operands[1];
  } else if (what == "relinquish_alloc_permit") {
    f.kind = SyncKind::Tcgen05Relinquish;
    f.call = IntrinsicId::Tcgen05RelinquishAllocPermit;
  } else if (what == "mma" && in.operands.size() >= 4 && in.operands[0].kind == Operand::Memory &&
             !in.hasModifier("ws")) {
    f.kind = SyncKind::Access;
    f.call = IntrinsicId::Tcgen05Mma;
    f.tmemWrite = f.asyncProxy = true;
    f.operandsWhy = fmt::format("line {}: the shared-memory operands of tcgen05.mma (its matrix "
                                "descriptors) are not lifted",
                                in.line);
  } else if (what == "commit" && in.hasModifier("mbarrier::arrive::one") &&
             !in.hasModifier("multicast::cluster") && in.operands.size() == 1) {
    f.kind = SyncKind::Tcgen05Commit;
    f.call = IntrinsicId::Tcgen05Commit;
    f.barrier = addressOperand(in);
    if (!f.barrier)
      return refuse(fmt::format("the tcgen05.commit at line {} has no mbarrier", in.line));
  } else if (what == "ld" && in.operands.size() >= 2) {
    f.kind = SyncKind::Tcgen05Ld;
    f.call = IntrinsicId::Tcgen05Ld;
    f.warpCollective = f.tmemRead = true;
  } else if (what == "st" && in.operands.size() >= 2) {
    f.kind = SyncKind::Access;
    f.call = IntrinsicId::Tcgen05St;
    f.warpCollective = f.tmemWrite = true;
  } else if (what == "wait::ld") {
    f.kind = SyncKind::Tcgen05WaitLd;
    f.call = IntrinsicId::Tcgen05WaitLd;
  } else {
    return refuse(fmt::format("'{}' at line {} is not lifted", in.fullName(), in.line));
  }
  return f;
}

MemoryAccess tensorMemoryAccess(const Tcgen05Form &form) {
  MemoryAccess a;
  a.buffer = "tmem";
  a.scope = MemScope::Tmem;
  a.dtype = Dtype::u8;
  a.write = form.tmemWrite;
  a.asyncProxy = form.asyncProxy;
  // The whole allocation: 128 lanes of at most 512 four-byte columns.
  a.region.push_back({IntImm::make(0), IntImm::make(128 * 512 * 4)});
  a.stage = IntImm::make(0);
  return a;
}

} // namespace tilescope::ptx
