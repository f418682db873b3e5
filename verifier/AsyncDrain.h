// Asynchronous copies that touch shared memory must be retired before the
// CTA exits: its shared memory is released when the last thread finishes,
// while a `tma.store` may still read its shared source (until a
// `tma.store_wait` of the issuing thread retires the store's bulk group) and
// a `cp_async` may still write its shared destination (until a
// `cp_async.wait` retires its group). Checked structurally, per copy: some
// wait of n = 0 by (at least) the issuing threads must come after it in
// program order, after a commit that closes its group, at a loop depth that
// runs after the copy's last iteration (the copy's loop or an enclosing one),
// under no condition over sizes or loop variables that the copy does not
// have. Otherwise the last group can be in flight at exit: a finding of kind
// OverwriteWhileRead.
//
// Depends on ir/ and the skeleton; no Z3.
#pragma once

#include "verifier/BarrierProofs.h"
#include "sync/BarrierSkeleton.h"

#include <set>
#include <string>
#include <vector>

namespace tilescope {

// The conditions over sizes and loop variables of an event, as printed.
std::set<std::string> guardTexts(const SyncEvent &e);

// Whether `outer` runs after every iteration of `inner`'s loops (or with
// each): its loop chain is a prefix of inner's.
bool runsAfterLastIteration(const BarrierSkeleton &sk, const SyncEvent &outer,
                            const SyncEvent &inner);

std::vector<ProtocolFinding> checkAsyncDrainedAtExit(const BarrierSkeleton &skeleton);

} // namespace tilescope
