// The static check of where a devices(N) kernel's accesses to global memory
// land (docs/scales.md, "Peer accesses against placements"), for every
// device count and size the `where` clause admits:
//
// - peer index: the device a device.put / device.get / device.signal
//   addresses (`dev =`) is one of the launch's, 0 <= dev < ndev;
// - inside the instance: every access to a global tensor, the device's own
//   (element loads and stores, tile primitives, the local side of a peer
//   copy, the collectives' tiles, a wait's flag) and a peer's (the peer side
//   of a put / get, a signal's flag), stays inside the tensor's instance on
//   the device it reaches. With the symmetric allocation that instance is
//   exactly what the tensor's placement gives that device (its shard when
//   blocked, the whole tensor when replicated), so an access inside it is
//   an access to the region the placement gives the device it addresses.
//   TMA copies (tma.load, tma.store, copy_async with `mbar =`) are not
//   obligations: the tensor map clips them at the instance's edge;
// - the shard moved: a put or get between two tensors that both declare a
//   placement moves every logical element onto itself: element i of the
//   source region on its device is the same logical element of the source
//   tensor as element i of the destination region on its device is of the
//   destination tensor (what `tilescope sim` checks element by element at
//   the sizes it runs). So what a device reads from a peer's shard is the
//   part of the logical tensor that the placement says the peer owns, and
//   it lands where the destination's placement says that part lives.
//
// For the device protocol's order of peer copies (verifier/DeviceProtocol.h)
// it also proves, where it can, that no two devices (or CTAs of two
// blockIdx) put onto one element of one peer, and that a get reads, or a put
// writes, on the peer nothing a CTA of another blockIdx accesses there
// (device barriers pair the CTAs of one blockIdx only); it finds the put
// and the other access that race where one does (with the witness).
//
// Each obligation is a Z3 query over the sizes, N, devid, blockIdx, the
// thread index, the loop iterations and the element's place in its tile,
// under the `where` clause, the launch's device facts and the conditions
// around the access. An obligation Z3 refutes is a finding with the witness
// (N, devid, the sizes, the loop values, the element) when every condition
// around the access was encoded; otherwise, and when Z3 gives up or an
// index is beyond its encoding, the obligation is not proved, with why.
//
// Depends on ir/ and proof/ (Z3 inside the .cpp).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct PeerAccessFinding {
  llvm::SMLoc loc;
  std::string message;
};

struct CopyRace {
  const CallStmt *copy = nullptr; // a put, or a get
  llvm::SMLoc other;    // the other access
  bool otherCta = false;
  bool exact = false;   // every condition around both was encoded
  std::string message;  // "'device.put' into 'W' of device 1 and a read of it there ..."
};

struct PeerAccessReport {
  bool applies = false; // a devices(N) kernel
  std::vector<PeerAccessFinding> findings;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
  unsigned accesses = 0;     // global accesses proved inside their instance
  unsigned peerAccesses = 0; // of them, to a peer's memory
  unsigned placedMoves = 0;  // puts / gets proved to move each element onto itself
  // The puts into a tensor of which no two devices (or CTAs of two
  // blockIdx) write one element of one peer, for the device protocol's order
  // of puts (verifier/DeviceProtocol.h).
  std::set<const CallStmt *> disjointPuts;
  // The gets that read on the peer nothing a CTA of another blockIdx writes
  // there (device barriers order only the CTAs of one blockIdx), and the
  // puts whose elements on the peer no CTA of another blockIdx accesses.
  std::set<const CallStmt *> sameCtaGets, sameCtaPuts;
  // A put (or a get) and another access (a write) of its elements on the
  // peer that no device
  // barrier orders if they are between the same barriers (`otherCta`:
  // always, the access is by a CTA of another blockIdx); the device
  // protocol (verifier/DeviceProtocol.h) reports the race when nothing else
  // orders them.
  std::vector<CopyRace> copyRaces;
  // "14 global accesses (2 to peers) inside the instances their placements
  // give, 1 peer copy moving every logical element onto itself"
  std::string summary() const;
};

// `kernel` carries the launch's device facts (ir/DeviceScale.h,
// appendDeviceFacts); nothing to check on a kernel without devices(N).
PeerAccessReport checkPeerAccesses(const Kernel &kernel);

// Findings as errors, open obligations as `not proved:` warnings; returns
// the number of findings.
unsigned reportPeerAccesses(const PeerAccessReport &report, Diagnostics &diag);

} // namespace tilescope
