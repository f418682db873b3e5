// The shared-memory bank model, once: how many wavefronts a warp's request
// costs. Read by `tilescope layout --banks` (verifier/BankConflicts.cpp), the
// layout visualizer's bank panel and its copy view (layoutviz/), so the CLI
// and the page cannot disagree.
//
// Model: 32 banks of 4 bytes. A request is served in phases: 32 threads per
// phase for accesses of at most 4 bytes per thread, 16 for 8-byte and 8 for
// 16-byte accesses (one 8x8 matrix per phase for ldmatrix/stmatrix, which the
// caller groups itself). A phase costs as many wavefronts as the largest
// number of distinct 4-byte words any one bank delivers in it (the same word
// to many threads is a broadcast); a phase that touches anything costs at
// least one, so the ideal is one wavefront per phase.
//
// Depends on ir/Layout.h only.
#pragma once

#include "ir/Layout.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tilescope {

// One thread's part of a request: the logical elements it reads or writes.
struct ThreadAccess {
  int64_t thread = 0;
  std::vector<int64_t> flats;
};

// One access of a bank in a phase: a distinct word, who asked for it first.
struct WordAccess {
  int64_t thread;
  int64_t flat;
  int64_t byte; // the element's first byte
  int64_t word; // byte / 4 of the word this access adds
};

struct BankPhase {
  std::vector<int64_t> threads;                 // threads served in this phase
  std::array<int64_t, 32> words{};              // distinct words per bank
  std::array<std::vector<WordAccess>, 32> hits; // those words, per bank
  int64_t wavefronts = 0;                       // max over banks (>= 1 when anything is touched)
};

// Threads per phase for an access of `bytes` bytes per thread: 32, 16 or 8.
int64_t threadsPerPhase(int64_t bytes);

// The cost of one phase: the elements each thread touches, placed by the
// layout's base owner on `m` (plus `baseByte`), `bits` wide each.
BankPhase costPhase(const std::vector<ThreadAccess> &phase, const Layout &layout, int bits,
                    int64_t baseByte = 0);

// A warp's request of plain loads or stores, split into phases by the access
// width `bytes` per thread (threads in the order given).
std::vector<BankPhase> costRequest(const std::vector<ThreadAccess> &threads, int64_t bytes,
                                   const Layout &layout, int bits, int64_t baseByte = 0);

} // namespace tilescope
