// The static check of a devices(N) kernel's cross-device protocol
// (docs/scales.md), for every device count the `where` clause admits:
//
// - agreement: every device reaches the same sequence of device.barrier and
//   collective calls on the same tiles. Proved when neither a call's operands
//   nor a condition or loop bound around it depends on `devid` (through
//   lets): then every device evaluates them alike, for every N;
// - flag barriers: the device.signal / device.wait idiom of docs/scales.md
//   (`if threadIdx.x < ndev { fence; signal F[c, b, devid] on device
//   threadIdx.x; wait F[c, b, threadIdx.x] }` between CTA barriers, F used by
//   nothing else) is a device barrier of CTA b of every device, for every N
//   (the proof is parametric in N), given that each use of a slot stores a
//   value its flag cannot already hold: the caller proves that with
//   verifier/FlagEpochs.h on `flagBarriers` (in loops too); other flag
//   protocols are left to `tilescope sim --races`;
// - peer races: a device.get of a tensor that no statement writes, or that
//   is written only between other device barriers (phases) than the read's
//   with a barrier after the read (so the next call's writes are ordered),
//   and by no CTA of another blockIdx where the read reaches (device
//   barriers pair the CTAs of one blockIdx), is race-free; so is a put that
//   no two devices or CTAs make onto one element of one peer, whose elements
//   there no CTA of another blockIdx accesses, into a tensor accessed
//   otherwise only in other phases, each access followed by a barrier. A
//   put and an access of its elements by a CTA of another blockIdx, or by
//   the owner's same CTA between the same barriers, race when the kernel has
//   no other flag protocol: a finding. Other gets and puts are left to the
//   dynamic check.
//
// What is not proved is reported as "not proved" with its reason (the
// verdict is then unknown), never as a pass. Depends on ir/ only.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "verifier/FlagEpochs.h"
#include "verifier/PeerAccess.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct DeviceProtocolReport {
  bool applies = false; // a devices(N) kernel
  unsigned findings = 0;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
  std::string method;
  // The flag barriers recognized, for their epochs (verifier/FlagEpochs.h).
  std::vector<FlagBarrierSite> flagBarriers;
};

// What verifier/PeerAccess.h proved of the peer copies: the puts of which
// no two devices (or CTAs) write one element of one peer, the gets that read
// and the puts that write on the peer nothing a CTA of another blockIdx
// accesses there, and the puts that race with another access unless a
// device barrier lies between them (a finding when none does and no other
// flag protocol could order them).
struct PeerCopyFacts {
  std::set<const CallStmt *> disjointPuts, sameCtaGets, sameCtaPuts;
  std::vector<CopyRace> copyRaces;
};
DeviceProtocolReport checkDeviceProtocol(const Kernel &kernel, Diagnostics &diag,
                                         const PeerCopyFacts &copies = {});

} // namespace tilescope
