#include "verifier/TmemProtocol.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tilescope {

namespace {

// The tensor-memory buffer an alloc or dealloc names.
std::string bufferOf(const SyncEvent &e) {
  for (const MemoryAccess &a : e.accesses)
    if (a.scope == MemScope::Tmem)
      return a.buffer;
  auto open = e.what.find('('), close = e.what.rfind(')');
  return open == std::string::npos || close == std::string::npos || close < open
             ? std::string()
             : e.what.substr(open + 1, close - open - 1);
}

class Lifetime {
public:
  explicit Lifetime(const BarrierSkeleton &sk) : sk_(sk) {}

  std::vector<ProtocolFinding> run() {
    std::map<std::string, std::vector<const SyncEvent *>> allocs, deallocs;
    std::vector<const SyncEvent *> relinquishes;
    for (const SyncEvent &e : sk_.events) {
      if (e.kind == SyncKind::Tcgen05Alloc)
        allocs[bufferOf(e)].push_back(&e);
      else if (e.kind == SyncKind::Tcgen05Dealloc)
        deallocs[bufferOf(e)].push_back(&e);
      else if (e.kind == SyncKind::Tcgen05Relinquish)
        relinquishes.push_back(&e);
    }
    for (const auto &[buffer, list] : allocs) {
      for (const SyncEvent *a : list) {
        oneWarp(*a);
        afterRelinquish(*a, relinquishes);
      }
      if (list.size() > 1)
        finding(list[1]->loc,
                fmt::format("'{}' is allocated a second time (tcgen05.alloc) while the first "
                            "allocation is live: every alloc needs its own dealloc before the "
                            "buffer is allocated again",
                            buffer),
                {{list[0]->loc, "first allocated here"}});
      auto it = deallocs.find(buffer);
      if (it == deallocs.end()) {
        finding(list[0]->loc, fmt::format("{} by {} is never freed (tcgen05.dealloc)",
                                          list[0]->what, list[0]->threads.describe()));
        continue;
      }
      freedOnce(*list[0], it->second);
    }
    for (const auto &[buffer, list] : deallocs)
      if (!allocs.count(buffer))
        finding(list[0]->loc,
                fmt::format("tcgen05.dealloc of '{}', which no tcgen05.alloc allocates", buffer));
    return std::move(findings_);
  }

private:
  void finding(llvm::SMLoc loc, std::string message,
               std::vector<std::pair<llvm::SMLoc, std::string>> notes = {}) {
    for (const ProtocolFinding &f : findings_)
      if (f.loc == loc)
        return; // one report per site
    findings_.push_back({ProtocolViolationKind::Tcgen05Discipline, loc, std::move(message),
                         std::move(notes), false, false});
  }

  void oneWarp(const SyncEvent &a) {
    if (a.threads.groupsTouched(32) > 1)
      finding(a.loc,
              fmt::format("{} is executed by {}: each warp allocates its own columns; one warp "
                          "allocates for the CTA (put it under a warp-uniform condition such as "
                          "`if warpid == 0`)",
                          a.what, a.threads.widened(32).describe()));
  }

  // The loops enclosing an event, as a set.
  std::set<int> loopsOf(const SyncEvent &e) const {
    std::vector<int> chain = sk_.loopChain(e);
    return {chain.begin(), chain.end()};
  }

  void afterRelinquish(const SyncEvent &a, const std::vector<const SyncEvent *> &relinquishes) {
    std::set<int> loops = loopsOf(a);
    for (const SyncEvent *r : relinquishes) {
      bool before = r->order < a.order;
      // A relinquish later in the body of a loop around both precedes the
      // alloc of the next iteration.
      int shared = -1;
      for (int l : sk_.loopChain(*r))
        if (loops.count(l))
          shared = l;
      if (!before && shared < 0)
        continue;
      std::string when =
          before ? "after"
                 : fmt::format("in the iteration of loop {} after", sk_.loops[size_t(shared)].var);
      finding(a.loc,
              fmt::format("{} runs {} tcgen05.relinquish_alloc_permit by {}: once a warp of the "
                          "CTA relinquished the permit, the CTA may not allocate tensor memory",
                          a.what, when, r->threads.describe()),
              {{r->loc, "the permit is relinquished here"}});
      return;
    }
  }

  void freedOnce(const SyncEvent &a, const std::vector<const SyncEvent *> &frees) {
    const SyncEvent &d = *frees.front();
    if (frees.size() > 1) {
      finding(frees[1]->loc,
              fmt::format("'{}' is freed a second time (tcgen05.dealloc): one dealloc per alloc",
                          bufferOf(a)),
              {{d.loc, "first freed here"}, {a.loc, "allocated here"}});
      return;
    }
    if (!(d.threads.widened(32) == a.threads.widened(32))) {
      finding(d.loc,
              fmt::format("tensor memory allocated by {} is freed by {}: dealloc must run in the "
                          "allocating warp",
                          a.threads.widened(32).describe(), d.threads.widened(32).describe()),
              {{a.loc, "allocated here"}});
      return;
    }
    if (d.order < a.order) {
      finding(d.loc,
              fmt::format("tcgen05.dealloc of '{}' comes before its tcgen05.alloc", bufferOf(a)),
              {{a.loc, "allocated here"}});
      return;
    }
    if (a.loop != d.loop) {
      bool allocInLoop = a.loop >= 0 && !loopsOf(d).count(a.loop);
      const SyncEvent &inLoop = allocInLoop ? a : d;
      finding(inLoop.loc,
              fmt::format("{} runs in every iteration of loop {}, but {} {}: every allocation "
                          "needs exactly one dealloc",
                          inLoop.what, sk_.loops[size_t(inLoop.loop)].var,
                          allocInLoop ? "its tcgen05.dealloc" : "its tcgen05.alloc",
                          allocInLoop ? "does not (the columns of earlier iterations are never "
                                        "freed)"
                                      : "does not (the allocation is freed again and again)"),
              {{(allocInLoop ? d : a).loc, allocInLoop ? "freed here" : "allocated here"}});
      return;
    }
    // Size conditions the dealloc needs but the alloc does not: a run where
    // they fail exits with the columns allocated.
    std::set<std::string> allocGuards;
    for (const Expr &g : a.guards)
      allocGuards.insert(print(g));
    for (const Expr &g : d.guards)
      if (!allocGuards.count(print(g))) {
        finding(d.loc,
                fmt::format("'{}' is freed only when {}, but allocated regardless: a run where it "
                            "does not hold exits with the tensor memory allocated",
                            bufferOf(a), print(g)),
                {{a.loc, "allocated here"}});
        return;
      }
  }

  const BarrierSkeleton &sk_;
  std::vector<ProtocolFinding> findings_;
};

} // namespace

std::vector<ProtocolFinding> checkTmemLifetime(const BarrierSkeleton &skeleton) {
  return Lifetime(skeleton).run();
}

} // namespace tilescope
