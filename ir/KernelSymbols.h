// The scalar names of a kernel: its scalar parameters and the names its
// tensors' shapes read. The proofs range over them (the barrier skeleton,
// sync/BarrierSkeleton.cpp; the peer-access proofs, verifier/PeerAccess.cpp,
// which add the launch's device count), and --args may bind them
// (tools/NameValues.cpp). One definition, so that they agree.
//
// Depends on ir/ only.
#pragma once

#include "ir/Stmt.h"

#include <set>
#include <string>

namespace tilescope {

// Sorted; `devid` and `ndev` (implicit scalar parameters) included when the
// kernel declares them.
std::set<std::string> kernelSymbols(const Kernel &kernel);

} // namespace tilescope
