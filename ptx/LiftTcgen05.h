// tcgen05 (Blackwell tensor memory and MMA) instructions as skeleton events
// for the lifting (Lift.h), the same events the IR's tcgen05 calls give
// (sync/BarrierSkeleton.h):
//  - tcgen05.alloc [slot], cols: Tcgen05Alloc of the tensor memory, by a
//    warp (warp-collective), writing the whole allocation and the 4-byte
//    slot in shared memory that receives its address;
//  - tcgen05.dealloc taddr, cols: Tcgen05Dealloc of it;
//  - tcgen05.relinquish_alloc_permit: Tcgen05Relinquish;
//  - tcgen05.mma [d], adesc, bdesc, idesc, p: an access of the call
//    tcgen05.mma writing the accumulator in tensor memory through the async
//    proxy until a later tcgen05.commit's mbarrier phase completes, and
//    reading its operands in shared memory as long (their descriptors,
//    SharedAccesses::tcgen05Operands in LiftMemory.h);
//  - tcgen05.commit .mbarrier::arrive::one [bar] (not multicast): an
//    arrival on the barrier when the thread's earlier tcgen05 operations
//    complete;
//  - tcgen05.ld / tcgen05.st (warp-collective) and wait::ld.
// The kernel has one allocation ("tmem"); each access covers all of it (a
// tensor-memory address is read from the shared slot at run time, so the
// columns an access reaches are not derived): the checks see more overlap
// than there is, never less. What is not lifted, and why: more than one
// tcgen05.alloc, cta_group::2, multicast commits, tcgen05.cp / shift /
// fences, wait::st; tcgen05.mma operands whose descriptors are not of the form
// LiftMemory.h reads are said and keep the verdict unknown.
//
// Depends on Ptx.h and sync/BarrierSkeleton.h.
#pragma once

#include "ptx/Ptx.h"
#include "sync/BarrierSkeleton.h"

#include <string>

namespace tilescope::ptx {

struct Tcgen05Form {
  SyncKind kind = SyncKind::Access;
  IntrinsicId call = IntrinsicId::Unknown;
  bool warpCollective = false;
  bool tmemWrite = false, tmemRead = false, asyncProxy = false;
  const Operand *columns = nullptr; // alloc / dealloc: the column count
  const Operand *barrier = nullptr; // commit: the mbarrier
  const Operand *slot = nullptr;    // alloc: the shared slot of the address
  std::string why;                  // not lifted, and why; empty when lifted
};

// The form of a tcgen05 instruction.
Tcgen05Form tcgen05Form(const Instruction &in);

// The tensor-memory access of a form (the whole allocation).
MemoryAccess tensorMemoryAccess(const Tcgen05Form &form);

} // namespace tilescope::ptx
