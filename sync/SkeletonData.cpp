// The barrier skeleton's data (BarrierSkeleton.h): thread sets, sync kinds,
// events and loops, region sizes, the printed skeleton, cluster shapes; the
// extraction from a kernel is BarrierSkeleton.cpp.
#include "sync/BarrierSkeleton.h"

#include "ir/ConcreteEval.h"
#include "ir/DeviceScale.h"
#include "ir/Printer.h"
#include "ir/ThreadUniformity.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

namespace tilescope {

int64_t ThreadSet::count() const {
  return std::count(member_.begin(), member_.end(), true);
}

bool ThreadSet::subsetOf(const ThreadSet &o) const {
  for (size_t i = 0; i < member_.size(); ++i)
    if (member_[i] && !(i < o.member_.size() && o.member_[i]))
      return false;
  return true;
}

ThreadSet ThreadSet::widened(int64_t groupSize) const {
  // Group by group: each thread is read once and written once (visiting each
  // member's whole group cost 384 x 128 steps for a full warpgroup-scoped set).
  ThreadSet out(launchThreads());
  for (int64_t first = 0; first < launchThreads(); first += groupSize) {
    int64_t end = std::min(launchThreads(), first + groupSize);
    bool any = false;
    for (int64_t t = first; t < end && !any; ++t)
      any = contains(t);
    if (any)
      for (int64_t u = first; u < end; ++u)
        out.add(u);
  }
  return out;
}

int64_t ThreadSet::groupsTouched(int64_t groupSize) const {
  std::set<int64_t> groups;
  for (int64_t t = 0; t < launchThreads(); ++t)
    if (contains(t))
      groups.insert(t / groupSize);
  return int64_t(groups.size());
}

namespace {
std::string ranges(const std::vector<int64_t> &values) {
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
      ++j;
    if (!out.empty())
      out += ", ";
    out += j == i ? fmt::format("{}", values[i]) : fmt::format("{}-{}", values[i], values[j]);
    i = j + 1;
  }
  return out;
}
} // namespace

std::string ThreadSet::describe() const {
  std::vector<int64_t> all;
  for (int64_t t = 0; t < launchThreads(); ++t)
    if (contains(t))
      all.push_back(t);
  if (all.empty())
    return "no thread";
  if (int64_t(all.size()) == launchThreads())
    return fmt::format("all {} threads", all.size());
  for (int64_t group : {int64_t{128}, int64_t{32}}) {
    const char *unit = group == 128 ? "warpgroup" : "warp";
    // Whole groups.
    if (widened(group) == *this) {
      std::vector<int64_t> g;
      for (int64_t t : all)
        if (t % group == 0)
          g.push_back(t / group);
      return fmt::format("{}{} {}", unit, g.size() > 1 ? "s" : "", ranges(g));
    }
    // The same thread of several groups.
    int64_t offset = all.front() % group;
    bool sameOffset =
        std::all_of(all.begin(), all.end(), [&](int64_t t) { return t % group == offset; });
    if (sameOffset && all.size() > 1) {
      std::vector<int64_t> g;
      for (int64_t t : all)
        g.push_back(t / group);
      return fmt::format("thread {} of {}s {}", offset, unit, ranges(g));
    }
  }
  return fmt::format("thread{} {}", all.size() > 1 ? "s" : "", ranges(all));
}

std::string_view syncKindName(SyncKind k) {
  switch (k) {
  case SyncKind::MbarInit:
    return intrinsicName(IntrinsicId::MbarrierInit);
  case SyncKind::MbarArrive:
    return "arrive";
  case SyncKind::MbarExpectTx:
    return "expect_tx";
  case SyncKind::MbarCompleteTx:
    return "complete_tx";
  case SyncKind::MbarWait:
    return "wait";
  case SyncKind::MbarInval:
    return intrinsicName(IntrinsicId::MbarrierInval);
  case SyncKind::TxDelivery:
    return "tma";
  case SyncKind::Tcgen05Commit:
    return intrinsicName(IntrinsicId::Tcgen05Commit);
  case SyncKind::CtaSync:
    return "cta.sync";
  case SyncKind::WarpSync:
    return "warp.sync";
  case SyncKind::NamedSync:
    return intrinsicName(IntrinsicId::BarrierSync);
  case SyncKind::NamedArrive:
    return intrinsicName(IntrinsicId::BarrierArrive);
  case SyncKind::FenceProxyAsync:
    return intrinsicName(IntrinsicId::FenceProxyAsync);
  case SyncKind::FenceMbarrierInit:
    return intrinsicName(IntrinsicId::FenceMbarrierInit);
  case SyncKind::WgmmaFence:
    return intrinsicName(IntrinsicId::WgmmaFence);
  case SyncKind::WgmmaMma:
    return intrinsicName(IntrinsicId::WgmmaMmaAsync);
  case SyncKind::WgmmaCommit:
    return intrinsicName(IntrinsicId::WgmmaCommitGroup);
  case SyncKind::WgmmaWait:
    return intrinsicName(IntrinsicId::WgmmaWaitGroup);
  case SyncKind::Tcgen05Alloc:
    return intrinsicName(IntrinsicId::Tcgen05Alloc);
  case SyncKind::Tcgen05Dealloc:
    return intrinsicName(IntrinsicId::Tcgen05Dealloc);
  case SyncKind::Tcgen05Relinquish:
    return intrinsicName(IntrinsicId::Tcgen05RelinquishAllocPermit);
  case SyncKind::Tcgen05Ld:
    return intrinsicName(IntrinsicId::Tcgen05Ld);
  case SyncKind::Tcgen05WaitLd:
    return intrinsicName(IntrinsicId::Tcgen05WaitLd);
  case SyncKind::Tcgen05Fence:
    return "tcgen05.fence";
  case SyncKind::ClusterArrive:
    return intrinsicName(IntrinsicId::BarrierClusterArrive);
  case SyncKind::ClusterWait:
    return intrinsicName(IntrinsicId::BarrierClusterWait);
  case SyncKind::CpAsyncCommit:
    return intrinsicName(IntrinsicId::CpAsyncCommit);
  case SyncKind::CpAsyncWait:
    return intrinsicName(IntrinsicId::CpAsyncWait);
  case SyncKind::TmaStoreCommit:
    return intrinsicName(IntrinsicId::TmaStoreCommit);
  case SyncKind::TmaStoreWait:
    return intrinsicName(IntrinsicId::TmaStoreWait);
  case SyncKind::Access:
    return "access";
  }
  return "?";
}

int64_t SyncEvent::issuers() const {
  switch (scope) {
  case ExecScope::Thread:
    return threads.count();
  case ExecScope::Warp:
    return threads.groupsTouched(32);
  case ExecScope::Warpgroup:
    return threads.groupsTouched(128);
  case ExecScope::Cta:
  case ExecScope::Cluster:
    return threads.empty() ? 0 : 1;
  }
  return threads.count();
}

Expr SkeletonLoop::trip() const {
  Expr one = IntImm::make(1);
  Expr span = Binary::make(BinaryOp::Sub, end, begin);
  Expr stepped =
      Binary::make(BinaryOp::Div,
                   Binary::make(BinaryOp::Add, span, Binary::make(BinaryOp::Sub, step, one)), step);
  return foldConstants(Call::make("max", {IntImm::make(0), stepped}));
}

std::vector<int> BarrierSkeleton::loopChain(const SyncEvent &e) const {
  std::vector<int> chain;
  for (int l = e.loop; l >= 0; l = loops[size_t(l)].parent)
    chain.insert(chain.begin(), l);
  return chain;
}

const BarrierArray *BarrierSkeleton::barrier(const std::string &name) const {
  auto it = barriers.find(name);
  return it == barriers.end() ? nullptr : &it->second;
}

Expr regionBytes(const std::vector<RegionDim> &region, Dtype dtype) {
  Expr elements = IntImm::make(1);
  for (const RegionDim &d : region) {
    if (!d.extent)
      return nullptr;
    elements = Binary::make(BinaryOp::Mul, elements, d.extent);
  }
  int bits = std::max(dtypeBits(dtype), 1);
  Expr bitsTotal = Binary::make(BinaryOp::Mul, elements, IntImm::make(bits));
  return foldConstants(Binary::make(BinaryOp::Div, bitsTotal, IntImm::make(8)));
}

std::string BarrierSkeleton::print() const {
  std::string out = fmt::format("kernel {} ({} threads)\n", kernel, threads);
  for (size_t r = 0; r < roles.size(); ++r) {
    bool any = std::any_of(events.begin(), events.end(), [&](const SyncEvent &e) {
      return e.role == int(r) && e.kind != SyncKind::Access;
    });
    if (!any)
      continue;
    out += fmt::format("role {}: {}\n", r, roles[r].describe());
    for (const SyncEvent &e : events) {
      if (e.role != int(r) || e.kind == SyncKind::Access)
        continue;
      std::string loops;
      for (int l = e.loop; l >= 0; l = this->loops[size_t(l)].parent)
        loops = fmt::format("for {} in {} .. {}{}", this->loops[size_t(l)].var,
                            tilescope::print(this->loops[size_t(l)].begin),
                            tilescope::print(this->loops[size_t(l)].end),
                            loops.empty() ? "" : ", " + loops);
      out += fmt::format("  {}", syncKindName(e.kind));
      if (!e.barrier.array.empty())
        out += fmt::format(" {}[{}]", e.barrier.array, tilescope::print(e.barrier.index));
      if (e.parity)
        out += fmt::format(" parity {}", tilescope::print(e.parity));
      if (e.amount)
        out += fmt::format(" {} {}", e.kind == SyncKind::MbarArrive ? "count" : "amount",
                           tilescope::print(e.amount));
      if (e.remoteCta)
        out += fmt::format(" on cta {}", tilescope::print(e.remoteCta));
      if (e.multicast)
        out += fmt::format(" multicast {}", tilescope::print(e.multicast));
      out += fmt::format(" by {} ({} issuing)", e.threads.describe(), e.issuers());
      if (!loops.empty())
        out += " in " + loops;
      out += "\n";
    }
  }
  return out;
}

std::optional<ClusterShape> clusterShapeOf(const BarrierSkeleton &sk) {
  ClusterShape shape;
  for (size_t d = 0; d < sk.cluster.size(); ++d) {
    auto c = constantValue(sk.cluster[d]);
    if (!c || *c < 1 || d >= 3 || (*c > 1 && shape.extent > 1))
      return std::nullopt;
    if (*c > 1)
      shape = {int(d), *c};
  }
  return shape;
}

ThreadSet coverOf(const SyncEvent &e) {
  switch (e.scope) {
  case ExecScope::Warp:
    return e.threads.widened(32);
  case ExecScope::Warpgroup:
    return e.threads.widened(128);
  case ExecScope::Cta:
  case ExecScope::Cluster:
    return ThreadSet(e.threads.launchThreads(), true);
  case ExecScope::Thread:
    return e.threads;
  }
  return e.threads;
}

} // namespace tilescope
