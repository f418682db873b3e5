// Size-independent checks of the barrier protocol that the proofs
// (BarrierProofs.h) run on the skeleton: mbarrier initialisation element by
// element (MbarrierInit.cpp) and named barriers as generations
// (NamedBarriers.h). Each adds findings (with the source location and a
// witness) or, where the skeleton is out of the check's reach, an obligation
// `notProved` with the reason; never a silent pass.
//
// Depends on ir/ and verifier/ (the skeleton); no Z3.
#pragma once

#include "verifier/BarrierProofs.h"
#include "sync/BarrierSkeleton.h"

#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct StructuralResult {
  std::vector<ProtocolFinding> findings;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
};

// mbarrier.init per element of each barrier array: no re-init of a live
// element (a declared count, a second init without mbarrier.inval, two
// threads or two loop iterations initialising one element), no use before
// the element's init, and every init made visible (fence.mbarrier_init by
// the initialising threads, then cta.sync) before other threads use it.
// Which elements an init touches is evaluated for every executing thread and
// iteration of constant loops; an index it cannot evaluate is not proved.
void checkMbarrierInits(const BarrierSkeleton &sk, StructuralResult &out);

// Named barriers (barrier.sync / barrier.arrive): thread counts, partial
// warps, and the generations of each id (NamedBarriers.h).
void checkNamedBarriers(const BarrierSkeleton &sk, StructuralResult &out);

} // namespace tilescope
