// Batches of candidates: `tilescope reward --batch in.jsonl -o out.jsonl`.
// Each input line is {"id": ..., "source": "<tile text>"} or {"id": ...,
// "path": "file.tile"}, optionally with "problem", "kernel", "sizes" and
// "seed" overriding the batch's options. Each candidate gives one output line
// (the reward's JSON on one line, plus "id" and "index", its 0-based input
// line), written in input order.
//
// Isolation: candidates run in worker processes (fork), `jobs` at a time, each
// under a memory limit: an address-space limit (setrlimit; not in builds with
// AddressSanitizer, whose shadow is reserved address space) and, in every
// build, the coordinator's watch of the worker's resident memory
// (/proc/PID/statm, every 20 ms). A worker that crashes, runs out of memory
// or passes the wall-time limit of one candidate is killed and replaced, and only that candidate gets an error result ("verdict": "error"
// or "budget"). A malformed input line gets an error result too; the batch
// goes on.
//
// Sharding: `shard I/N` keeps the lines whose index is I modulo N, so N
// machines can split one file deterministically; mergeShards() joins their
// outputs back in input order. `resume` skips ids already in the output file
// and appends the rest.
//
// POSIX only (fork, pipes, poll, setrlimit); the resident memory watch needs
// Linux's /proc (elsewhere only the address-space limit applies).
#pragma once

#include "reward/Reward.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope {

struct BatchOptions {
  std::string input, output;
  unsigned jobs = 0; // 0: every core
  unsigned shardIndex = 0, shardCount = 1;
  bool resume = false;
  RewardOptions reward;           // defaults of every candidate (cache is set per worker)
  std::string cacheDir;           // on-disk cache shared by the workers; empty: memory only
  double candidateTimeoutMs = 0;  // wall time of one candidate; 0: 4 x timeoutMs + 30 s
  uint64_t workerMemoryMb = 4096; // address-space and resident memory limit of a worker
};

struct BatchSummary {
  size_t lines = 0, inShard = 0, skipped = 0, done = 0;
  size_t crashed = 0, timedOut = 0; // candidates whose worker died or was killed
  double peakWorkerMb = 0;          // largest resident set of a worker (getrusage of wait4)
  double seconds = 0;
  // CPU time (user + system) of the coordinating process itself — reading
  // lines, handing them out, writing results in order: the serial part —
  // and of its workers (every one, reaped), for the serial fraction.
  double coordinatorCpuSeconds = 0, workersCpuSeconds = 0;
};

// Runs the batch; false with `error` when the input or output cannot be opened.
bool runBatch(const BatchOptions &options, BatchSummary &summary, std::string &error);

// Joins shard outputs into `output`, in input order (by "index"), each id once.
bool mergeShards(const std::string &output, const std::vector<std::string> &inputs, size_t &lines,
                 std::string &error);

} // namespace tilescope
