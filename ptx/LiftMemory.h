// The shared-memory accesses of a PTX kernel, lifted for the race check and
// the pipeline-stage proofs (Lift.h; racecheck/StaticRaces.h and
// verifier/BarrierProofs.h take them).
//
// An access is a byte range of a shared variable: [offset, offset + bytes),
// with the offset a tile-IR expression over the thread index, loop counters
// and parameters (Values.h). What is read:
//  - ld / st / atom / red in the shared state space (per thread, the vector
//    width times the type's bytes);
//  - ldmatrix / stmatrix (.m8n8 .b16: 16 bytes a row; the lanes that supply
//    row addresses, 8 per matrix);
//  - cp.async to shared memory (its byte count, written until the thread's
//    cp.async.wait_group retires it);
//  - the shared side of TMA loads and stores (the box's bytes from
//    --tma-box, contiguous from the shared address);
//  - wgmma.mma_async operands given by matrix descriptors built the way
//    nvcc builds them (`(addr & mask) >> 4`, then `or` with the constant
//    fields), K-major with a 32/64/128-byte swizzle: the rows of the operand
//    (64 for A, N for B) from the row that holds the start address;
//  - tcgen05.mma operands in shared memory, through sm_100 descriptors
//    (`(addr >> 4) & mask`, the layout in bits 61-63), K-major, swizzled:
//    M rows of A and N rows of B, from the instruction descriptor
//    (LiftTcgen05.cpp), read through the async proxy until a later
//    tcgen05.commit's phase.
// Generic-address (`ld` without a state space) and DSMEM accesses, bulk copies
// other than tensor copies, descriptors not of that form and addresses not
// derived are not lifted; each is said, and keeps the verdict unknown.
//
// After lifting, accesses are grouped into buffers: the byte ranges each
// access can reach (over every thread, iteration and size), merged where they
// overlap, per variable; `ts_smem_raw+49152` names the buffer that starts
// 49152 bytes into ts_smem_raw. An access whose offset cycles through a ring
// `((it + c) % S) * stride` in its loop is at stage `(it + c) % S` of S, as
// the IR's `As[s]` is.
//
// Depends on Ptx.h, Values.h and sync/BarrierSkeleton.h.
#pragma once

#include "ptx/Ptx.h"
#include "ptx/Values.h"
#include "sync/BarrierSkeleton.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::ptx {

struct LiftedAccess {
  // Empty with `why` empty: the instruction touches no shared memory.
  std::vector<MemoryAccess> accesses;
  std::string why;  // not lifted, and why
  std::string what; // the race check's name for the event ("cp_async"), else empty
  int lanes = 32;   // ldmatrix / stmatrix: the lanes that supply addresses
  bool touches() const { return !accesses.empty() || !why.empty(); }
};

class SharedAccesses {
public:
  SharedAccesses(const Module &m, const Function &f, const RegisterValues &values, int64_t threads);

  // A thread-level access (ld / st / atom / red / ldmatrix / stmatrix /
  // cp.async) at instruction i.
  LiftedAccess threadAccess(size_t i) const;
  // `bytes` of shared memory from the address operand `mem` of instruction i
  // (a TMA box), read or written through the async proxy.
  LiftedAccess region(size_t i, const Operand &mem, int64_t bytes, bool write) const;
  // The operands a wgmma.mma_async at instruction i reads from shared memory.
  LiftedAccess wgmmaOperands(size_t i) const;
  // The operands a tcgen05.mma (cta_group::1, kind f16 / tf32 / f8f6f4 /
  // i8, A and B in shared memory) at instruction i reads from shared memory
  // (defined in LiftTcgen05.cpp).
  LiftedAccess tcgen05Operands(size_t i) const;

private:
  std::optional<MemoryAccess> range(size_t i, const Operand &mem, int64_t bytes, bool write,
                                    std::string &why) const;
  // The operand's rows from a matrix descriptor; `rowBytes` and `lbo` (the
  // leading byte offset field) receive what the descriptor says, if given.
  std::optional<MemoryAccess> descriptor(size_t i, const Operand &desc, int64_t rows, bool tcgen05,
                                         std::string &why, int64_t *rowBytesOut = nullptr,
                                         int64_t *lboOut = nullptr) const;

  const Function &f_;
  const RegisterValues &values_;
  std::map<std::string, int64_t> align_;
  int64_t threads_ = 1024;
};

// Groups the skeleton's shared accesses into buffers and sets their stages
// (see above); what cannot be placed is appended to `notLifted`.
void groupSharedBuffers(BarrierSkeleton &sk,
                        std::vector<std::pair<llvm::SMLoc, std::string>> &notLifted);

} // namespace tilescope::ptx
