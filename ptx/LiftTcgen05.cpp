// tcgen05 instructions as skeleton events (LiftTcgen05.h).
#include "ptx/LiftTcgen05.h"

#include "ir/Descriptors.h"
#include "ptx/LiftExprs.h"
#include "ptx/LiftMemory.h"

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
  } else if (what == "fence::before_thread_sync" || what == "fence::after_thread_sync") {
    // The thread-sync fences (verifier/Tcgen05Fences.h).
    f.kind = SyncKind::Tcgen05Fence;
    f.call = what == "fence::before_thread_sync" ? IntrinsicId::Tcgen05FenceBeforeThreadSync
                                                 : IntrinsicId::Tcgen05FenceAfterThreadSync;
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

// tcgen05.mma [d], adesc, bdesc, idesc, enable: the instruction descriptor
// (a constant, ir/Descriptors.h) gives M and N and whether A and B are
// transposed (0 is K-major); the kinds whose descriptor has that layout are
// f16, tf32, f8f6f4 and i8.
LiftedAccess SharedAccesses::tcgen05Operands(size_t i) const {
  const Instruction &in = f_.instructions[i];
  LiftedAccess out;
  auto refuse = [&](std::string why) {
    out.accesses.clear();
    out.why = std::move(why);
    return out;
  };
  bool kindKnown = in.hasModifier("kind::f16") || in.hasModifier("kind::tf32") ||
                   in.hasModifier("kind::f8f6f4") || in.hasModifier("kind::i8");
  if (!kindKnown || !in.hasModifier("cta_group::1") || in.operands.size() < 4)
    return refuse(fmt::format("line {}: the shared-memory operands of '{}' are not lifted (only "
                              "cta_group::1 with kind f16, tf32, f8f6f4 or i8)",
                              in.line, in.fullName()));
  if (in.operands[1].kind != Operand::Register)
    return refuse(
        fmt::format("line {}: a tcgen05.mma whose A is in tensor memory is not lifted", in.line));
  auto idesc = constantValue(values_.operandValue(in.operands[3], i));
  if (!idesc)
    return refuse(fmt::format("line {}: the instruction descriptor {} of tcgen05.mma is not a "
                              "constant",
                              in.line, in.operands[3].text));
  uint64_t d = uint64_t(*idesc);
  constexpr auto kIdesc = DescriptorKind::Tcgen05InstrF16;
  int64_t m = int64_t(unpackDescriptor(kIdesc, d, DescField::M)),
          n = int64_t(unpackDescriptor(kIdesc, d, DescField::N));
  if (unpackDescriptor(kIdesc, d, DescField::TransposeA) != 0 ||
      unpackDescriptor(kIdesc, d, DescField::TransposeB) != 0)
    return refuse(
        fmt::format("line {}: a transposed (MN-major) tcgen05.mma operand is not lifted", in.line));
  if ((m != 64 && m != 128) || n < 8 || n > 256)
    return refuse(fmt::format("line {}: the tcgen05.mma shape M = {}, N = {} of descriptor {} is "
                              "not one of cta_group::1",
                              in.line, m, n, d));
  std::string why;
  auto a = descriptor(i, in.operands[1], m, true, why);
  if (!a)
    return refuse(why);
  auto b = descriptor(i, in.operands[2], n, true, why);
  if (!b)
    return refuse(why);
  out.accesses = {*a, *b};
  return out;
}

} // namespace tilescope::ptx
