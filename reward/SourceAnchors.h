// Where the nodes of a kernel's semantic normal form (ir/SemanticHash.h) sit
// in the candidate's text, so that stage results cached for one candidate can
// be handed to another with the same semantic hash at the other's lines and
// columns. Two kernels with the same hash print the same normal form, so
// the i-th node of one's normal form (in a fixed walk) is the i-th of the
// other's; a diagnostic is moved from the location of the first node at its
// old place to the location of the node with the same index in the new
// candidate. Internal to reward/.
#pragma once

#include "ir/Stmt.h"
#include "reward/Reward.h"

#include <llvm/Support/SourceMgr.h>

#include <utility>
#include <vector>

namespace tilescope::reward_detail {

// (line, column) of every node of `normalForm`, in a fixed walk: the kernel,
// its parameters, shape expressions, constraints, launch, then the body.
using SourceAnchors = std::vector<std::pair<unsigned, unsigned>>;
SourceAnchors sourceAnchors(const Kernel &normalForm, llvm::SourceMgr &sm);

// Moves the diagnostics of `stages` (and every "LINE:COL" in their
// messages, witnesses and reasons that is an anchor) from the candidate of
// `from` to that of `to`, naming `file` and `kernel`. False (nothing
// changed) when a diagnostic's location is no anchor of `from` or the two
// tables differ in size: the caller then decides the stages afresh.
bool moveToCandidate(std::vector<StageResult> &stages, const SourceAnchors &from,
                     const SourceAnchors &to, const std::string &file, const std::string &kernel);

} // namespace tilescope::reward_detail
