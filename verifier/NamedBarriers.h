// Named barriers (barrier.sync / barrier.arrive with an id and a thread
// count) as sequences of generations.
//
// The hardware counts arrivals on an id: a generation completes when `count`
// threads arrived, whichever program points they came from, and the next
// arrival starts the next generation. So every thread's k-th use of an id
// must land in the id's k-th generation: the k-th uses of all threads must
// number exactly `count` threads, for every k. Two `barrier.sync(1, threads
// = 256)` in sequence, the first under `if wid_in_wg < 2`, violate it: the
// first generation completes with the first use of half the threads and the
// second use of the others, and the second generation never completes.
// A thread whose k-th use is an arrive (no wait) could arrive again before
// generation k completed, its next arrival counting toward generation k; a
// next use is accepted only when a CTA barrier, or another named barrier's
// generation, between the two makes the thread wait for a thread that
// synchronised in generation k.
//
// Modelled: ids with a constant value whose uses sit in one loop body (or
// all outside loops) under no size or loop condition; every thread's uses
// per iteration are its sequence. Other ids are reported not proved.
//
// Depends on ir/ and verifier/ (the skeleton); no Z3.
#pragma once

#include "sync/BarrierSkeleton.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

// The k-th generation of a named barrier: the events whose executions
// complete it (each thread's k-th use, per iteration of `loop`).
struct NamedGeneration {
  int64_t id = -1;
  int64_t threads = 0; // the barrier's thread count
  int loop = -1;       // the loop whose body holds every use (-1: none)
  int index = 0;       // k
  std::vector<const SyncEvent *> events;
  // The event of this generation thread tx executes (nullptr: none).
  const SyncEvent *eventOf(int64_t tx) const;
};

struct NamedBarrierModel {
  // The generations of every id whose uses are modelled and consistent
  // (counts met by the k-th uses, arrivals not overtaking).
  std::vector<NamedGeneration> generations;
  // Findings: (kind is a deadlock when a generation gets too few threads,
  // a thread-count error otherwise) with location, message and notes.
  struct Finding {
    bool deadlock = false;
    llvm::SMLoc loc;
    std::string message;
    std::vector<std::pair<llvm::SMLoc, std::string>> notes;
  };
  std::vector<Finding> findings;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
};

NamedBarrierModel analyseNamedBarriers(const BarrierSkeleton &sk);

} // namespace tilescope
