// The lifetime of the CTAs of a cluster around the operations that reach a
// peer CTA: a remote `mbarrier.arrive(bar, cta = r)`, a multicast `tma.load`
// or `tcgen05.commit` (bytes and arrivals land on every masked CTA's barrier)
// and `dsmem.load` / `dsmem.store` (the peer's shared memory). Checked
// structurally on the skeleton (the same for every size), for every such
// operation E of a kernel whose cluster has more than one CTA:
//  - started: E's threads have passed a cluster barrier (`cluster.sync`, or
//    `barrier.cluster.arrive` then `barrier.cluster.wait` by these threads)
//    before E on every run. The CTA's mbarriers are
//    initialised by its first thread before anything else runs, but only a
//    cluster barrier tells a CTA that its peers have started and initialised
//    theirs (CUDA guarantees a cluster's CTAs are co-scheduled, not that they
//    have begun: the lowering's init is followed by __syncthreads, a CTA-wide
//    barrier). Without one, E may arrive on, or copy into, a barrier that
//    its peer has not initialised yet, or reach shared memory the peer does
//    not hold yet: a finding of kind ClusterLifetime ("cluster lifetime:").
//  - alive: a cluster barrier arrival by E's threads follows E on every run
//    (after E's last iteration, under no condition E does not have), with a
//    cluster wait after it, so that no CTA exits, and its shared memory is
//    released, before its peers' operations on it. Another protocol could
//    keep the peer alive (it waits on the barrier E arrives on), which this
//    check does not prove: without such a barrier the obligation is left
//    open (not proved), never passed.
// A barrier counts only under no condition over sizes or loop variables that
// E does not have, and in E's loop or an enclosing one (so it runs on the
// same iterations as E or around them all).
//
// Depends on ir/ and the skeleton; no Z3.
#pragma once

#include "verifier/StructuralChecks.h"

namespace tilescope {

void checkClusterLifetime(const BarrierSkeleton &skeleton, StructuralResult &out);

} // namespace tilescope
