#include "verifier/ConcreteSkeleton.h"

#include "ir/Budget.h"
#include "ir/ConcreteEval.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

namespace tilescope {

namespace {

ThreadSet intersect(const ThreadSet &a, const ThreadSet &b) {
  ThreadSet out(a.launchThreads());
  for (int64_t t = 0; t < a.launchThreads(); ++t)
    if (a.contains(t) && b.contains(t))
      out.add(t);
  return out;
}

bool overlaps(const ThreadSet &a, const ThreadSet &b) {
  return !intersect(a, b).empty();
}

// Finds a builtin other than blockIdx and clusterCtaIdx (the same for every
// thread of a CTA); loads (indexing) are not looked into.
struct ThreadBuiltinFinder : IRVisitor {
  bool found = false;
  void visitBuiltin(const Builtin &b) override {
    switch (b.which) {
    case BuiltinKind::blockIdx_x:
    case BuiltinKind::blockIdx_y:
    case BuiltinKind::blockIdx_z:
    case BuiltinKind::clusterCtaIdx_x:
    case BuiltinKind::clusterCtaIdx_y:
    case BuiltinKind::clusterCtaIdx_z:
      return;
    default:
      found = true;
    }
  }
  void visitIndex(const Index &) override {}
};

bool threadDependent(const Expr &e) {
  if (!e)
    return false;
  ThreadBuiltinFinder finder;
  finder.visit(e);
  return finder.found;
}

// Issuers of `e` among `threads`. A scoped call is issued once per warp /
// warpgroup / CTA: by the group's first executing thread, so that a group
// split between two processes is counted once, by the process holding that
// thread.
int64_t issuersWithin(const SyncEvent &e, const ThreadSet &threads) {
  int64_t group = e.scope == ExecScope::Thread      ? 1
                  : e.scope == ExecScope::Warp      ? kThreadsPerWarp
                  : e.scope == ExecScope::Warpgroup ? kThreadsPerWarpgroup
                                                    : e.threads.launchThreads();
  int64_t n = 0;
  for (int64_t t = 0; t < e.threads.launchThreads(); ++t) {
    if (!e.threads.contains(t))
      continue;
    bool first = group == 1 || t % group == 0 || !e.threads.contains(t - 1);
    if (first) {
      if (threads.contains(t))
        ++n;
      // The rest of this group's threads are not issuers.
      if (group > 1)
        t = std::min(e.threads.launchThreads(), (t / group + 1) * group) - 1;
    }
  }
  return n;
}

// Whether `threads` is a union of whole units ([first, last) thread ranges).
bool wholeUnits(const ThreadSet &threads, const std::vector<std::pair<int64_t, int64_t>> &units) {
  if (threads.empty())
    return false;
  for (const auto &[first, last] : units) {
    bool in = threads.contains(first);
    for (int64_t t = first + 1; t < last; ++t)
      if (threads.contains(t) != in)
        return false;
  }
  return true;
}

// Steps that block their process or feed a phase: units of one process
// must agree on every one of them, thread sets that cover part of a unit
// included (an arrival by `threadIdx.x == 128` alone, a wait by one
// warpgroup's first thread). Units that do not are split: a warpgroup that
// releases a stage alone lets its sibling lag behind in its reads, which the
// lockstep of one process never showed (docs/barriers.md, Limits).
bool blocksOrFeeds(SyncKind k) {
  switch (k) {
  case SyncKind::MbarArrive:
  case SyncKind::MbarExpectTx:
  case SyncKind::MbarCompleteTx:
  case SyncKind::MbarWait:
  case SyncKind::TxDelivery:
  case SyncKind::Tcgen05Commit:
  case SyncKind::CtaSync:
  case SyncKind::NamedSync:
  case SyncKind::NamedArrive:
  case SyncKind::ClusterArrive:
  case SyncKind::ClusterWait:
  case SyncKind::WgmmaWait:
    return true;
  default:
    return false;
  }
}

// The steps a process runs: those that block or feed, and the ones that
// only record (an init, a wgmma and its commit, a memory access).
bool emitted(SyncKind k) {
  switch (k) {
  case SyncKind::MbarInit:
  case SyncKind::WgmmaMma:
  case SyncKind::WgmmaCommit:
  case SyncKind::Access:
    return true;
  default:
    return blocksOrFeeds(k);
  }
}

class Unroller {
public:
  Unroller(const BarrierSkeleton &sk, const std::map<std::string, int64_t> &sizes,
           const std::array<int64_t, 3> &cta, size_t cap, int64_t clusterCtas)
      : sk_(sk), sizes_(sizes), cta_(cta), cap_(cap), ranks_(std::max<int64_t>(clusterCtas, 1)) {}

  ConcreteSkeleton run() {
    formProcesses();
    trackBuffers();
    out_.clusterCtas = ranks_;
    replicateProcesses();
    // An element the declaration initialises (`mbarrier full[3](count = 1)`)
    // starts initialised; any other is initialised by its mbarrier.init
    // steps, in the run.
    for (int64_t r = 0; r < ranks_; ++r)
      for (const auto &[name, arr] : sk_.barriers) {
        base_[{int(r), name}] = int(out_.elements.size());
        for (int64_t i = 0; i < arr.size; ++i)
          out_.elements.push_back({name, i, arr.count.value_or(0), int(r), arr.count.has_value()});
      }
    for (int64_t r = 0; r < ranks_ && out_.error.empty(); ++r)
      for (size_t p = 0; p < members_.size() && out_.error.empty(); ++p) {
        rank_ = int(r);
        proc_ = p;
        rounds_.clear();
        std::vector<const SyncEvent *> evs;
        for (const SyncEvent &e : sk_.events)
          if (belongs(e, p) && emitted(e.kind))
            evs.push_back(&e);
        size_t pos = 0;
        std::map<std::string, int64_t> env;
        unroll(evs, pos, 0, env);
      }
    return std::move(out_);
  }

private:
  // --- processes ---

  // The processes: skeletonProcesses (ConcreteSkeleton.h).
  void formProcesses() {
    members_ = skeletonProcesses(sk_);
    out_.processes.resize(members_.size());
    for (size_t p = 0; p < members_.size(); ++p)
      out_.processes[p].threads = members_[p];
    belongs_.assign(sk_.events.size(), std::vector<bool>(members_.size(), false));
    for (size_t i = 0; i < sk_.events.size(); ++i)
      for (size_t p = 0; p < members_.size(); ++p)
        belongs_[i][p] = overlaps(sk_.events[i].threads, members_[p]);
  }

  // The processes of CTA rank r are r * P .. r * P + P - 1 (P per CTA).
  void replicateProcesses() {
    size_t perCta = out_.processes.size();
    for (int64_t r = 1; r < ranks_; ++r)
      for (size_t p = 0; p < perCta; ++p) {
        ConcreteProcess copy;
        copy.threads = out_.processes[p].threads;
        copy.cta = int(r);
        out_.processes.push_back(std::move(copy));
      }
  }

  ConcreteProcess &current() { return out_.processes[size_t(rank_) * members_.size() + proc_]; }

  // An event runs in every process holding some of its threads.
  bool belongs(const SyncEvent &e, size_t p) const {
    return belongs_[size_t(&e - sk_.events.data())][p];
  }

  // Buffers two processes touch in loops: the ones whose stages are tracked.
  void trackBuffers() {
    std::map<std::string, std::set<size_t>> users;
    for (const SyncEvent &e : sk_.events) {
      if (e.loop < 0)
        continue;
      for (const MemoryAccess &a : e.accesses)
        if (a.scope == MemScope::Shared || a.scope == MemScope::Tmem)
          for (size_t p = 0; p < members_.size(); ++p)
            if (belongs(e, p))
              users[a.buffer].insert(p);
    }
    for (const auto &[name, procs] : users)
      if (procs.size() >= 2)
        tracked_.insert(name);
  }

  // --- evaluation ---

  // `thread` >= 0 binds the thread builtins to that thread's values.
  std::optional<int64_t> eval(const Expr &e, const std::map<std::string, int64_t> &env,
                              int64_t thread = -1) {
    return evalConcrete(e, [&](const Expr &leaf) -> std::optional<int64_t> {
      if (leaf->kind == ExprKind::Var) {
        const std::string &n = as<Var>(leaf).name;
        if (auto it = env.find(n); it != env.end())
          return it->second;
        if (auto it = sizes_.find(n); it != sizes_.end())
          return it->second;
        return std::nullopt;
      }
      switch (as<Builtin>(leaf).which) {
      case BuiltinKind::blockIdx_x:
      case BuiltinKind::blockIdx_y:
      case BuiltinKind::blockIdx_z: {
        out_.usesBlockIdx = true;
        int d = int(as<Builtin>(leaf).which) - int(BuiltinKind::blockIdx_x);
        return cta_[size_t(d)] + (d == axis_ ? rank_ : 0);
      }
      case BuiltinKind::clusterCtaIdx_x:
      case BuiltinKind::clusterCtaIdx_y:
      case BuiltinKind::clusterCtaIdx_z: {
        int d = int(as<Builtin>(leaf).which) - int(BuiltinKind::clusterCtaIdx_x);
        return d == axis_ ? rank_ : 0;
      }
      default:
        if (thread >= 0 && isThreadBuiltin(as<Builtin>(leaf).which))
          return threadBuiltinValue(as<Builtin>(leaf).which, thread);
        return std::nullopt;
      }
    });
  }

  bool fail(llvm::SMLoc loc, std::string why) {
    if (out_.error.empty()) {
      out_.error = std::move(why);
      out_.errorLoc = loc;
    }
    return false;
  }

  std::optional<int64_t> need(const Expr &e, const std::map<std::string, int64_t> &env,
                              llvm::SMLoc loc, const char *what) {
    auto v = eval(e, env);
    if (!v)
      fail(loc, fmt::format("cannot evaluate the {} at concrete sizes", what));
    return v;
  }

  std::vector<int> chainOf(const SyncEvent &e) const { return sk_.loopChain(e); }

  std::string iterationText(const std::vector<int> &chain,
                            const std::map<std::string, int64_t> &env) const {
    if (chain.empty())
      return "its one execution (outside loops)";
    std::string out;
    for (int l : chain)
      out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", sk_.loops[size_t(l)].var,
                         env.at(sk_.loops[size_t(l)].var));
    return out;
  }

  // Emits evs[pos..] whose loop chain extends the current one at `depth`.
  void unroll(const std::vector<const SyncEvent *> &evs, size_t &pos, size_t depth,
              std::map<std::string, int64_t> &env) {
    std::vector<int> prefix = depth ? chainOf(*evs[pos]) : std::vector<int>{};
    prefix.resize(depth);
    while (pos < evs.size() && out_.error.empty()) {
      std::vector<int> chain = chainOf(*evs[pos]);
      if (chain.size() < depth || !std::equal(prefix.begin(), prefix.end(), chain.begin()))
        return;
      if (chain.size() == depth) {
        step(evs, pos, chain, env);
        continue;
      }
      int l = chain[depth];
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      size_t end = pos;
      while (end < evs.size()) {
        std::vector<int> c = chainOf(*evs[end]);
        if (c.size() <= depth || c[depth] != l || !std::equal(prefix.begin(), prefix.end(), c.begin()))
          break;
        ++end;
      }
      auto b = need(loop.begin, env, loop.loc, "loop start");
      auto en = need(loop.end, env, loop.loc, "loop end");
      auto st = need(loop.step, env, loop.loc, "loop step");
      if (!b || !en || !st)
        return;
      if (*st <= 0) {
        fail(loop.loc, "loop step is not positive at these sizes");
        return;
      }
      // A step past INT64_MAX leaves the loop: the next value would exceed
      // any end (a step of 2^63 - 1 used to wrap around to negative values
      // and run iterations the kernel never runs).
      for (int64_t v = *b; v < *en && out_.error.empty();) {
        if (!withinBudget(loop.loc))
          break;
        env[loop.var] = v;
        size_t inner = pos;
        unroll(evs, inner, depth + 1, env);
        if (__builtin_add_overflow(v, *st, &v))
          break;
      }
      env.erase(loop.var);
      pos = end;
    }
  }

  void step(const std::vector<const SyncEvent *> &evs, size_t &pos,
            const std::vector<int> &chain, const std::map<std::string, int64_t> &env) {
    const SyncEvent &e = *evs[pos++];
    for (const Expr &g : e.guards) {
      auto v = need(g, env, e.loc, "condition");
      if (!v || !*v)
        return;
    }
    if (e.kind == SyncKind::MbarInit) {
      initSteps(e, chain, env);
      return;
    }
    ConcreteStep s;
    s.event = &e;
    s.iteration = iterationText(chain, env);
    int64_t issuers = issuersWithin(e, members_[proc_]);
    if (!e.barrier.array.empty()) {
      auto idx = need(e.barrier.index, env, e.loc, "barrier index");
      if (!idx)
        return;
      if (outOfRange(e, *idx, s.iteration))
        return;
      s.element = base_.at({rank_, e.barrier.array}) + int(*idx);
    }
    s.cta = rank_;
    switch (e.kind) {
    case SyncKind::MbarWait: {
      auto p = need(e.parity, env, e.loc, "wait parity");
      if (!p)
        return;
      s.parity = *p;
      s.round = rounds_[s.element]++;
      break;
    }
    case SyncKind::MbarArrive:
    case SyncKind::Tcgen05Commit: {
      auto a = e.amount ? need(e.amount, env, e.loc, "arrival count") : std::optional<int64_t>(1);
      if (!a)
        return;
      s.amount = *a * issuers;
      // arrive_expect_tx: the expect_tx half comes next, from the same call;
      // the hardware raises the byte count before the arrival.
      if (pos < evs.size() && evs[pos]->kind == SyncKind::MbarExpectTx &&
          evs[pos]->loc == e.loc && evs[pos]->order == e.order + 1) {
        const SyncEvent &tx = *evs[pos++];
        auto bytes = need(tx.amount, env, tx.loc, "expect_tx bytes");
        if (!bytes)
          return;
        s.expectBytes = *bytes * issuersWithin(tx, members_[proc_]);
      }
      break;
    }
    case SyncKind::MbarExpectTx:
    case SyncKind::MbarCompleteTx: {
      auto bytes = need(e.amount, env, e.loc, "byte count");
      if (!bytes)
        return;
      s.amount = *bytes * issuers;
      break;
    }
    case SyncKind::TxDelivery: {
      auto bytes = need(e.amount, env, e.loc, "bytes a copy delivers");
      if (!bytes)
        return;
      s.amount = *bytes;
      break;
    }
    case SyncKind::CtaSync:
    case SyncKind::NamedSync:
    case SyncKind::NamedArrive:
    case SyncKind::ClusterArrive:
      s.syncThreads = intersect(e.threads, members_[proc_]).count();
      break;
    case SyncKind::WgmmaWait: {
      auto n = need(e.amount, env, e.loc, "wait_group count");
      if (!n)
        return;
      s.amount = *n;
      break;
    }
    default:
      break;
    }
    std::vector<int> targets{rank_};
    if (e.crossCta() && !e.barrier.array.empty() && !barrierTargets(e, env, targets))
      return;
    if (!chain.empty())
      for (const MemoryAccess &a : e.accesses) {
        if (!tracked_.count(a.buffer) || (a.scope != MemScope::Shared && a.scope != MemScope::Tmem))
          continue;
        // A whole buffer, or a stage that differs between the threads of
        // the process (S[warpid * 8 + i, ...]), may be any stage.
        int64_t stage = kAnyStage;
        if (a.stages > 1 && !threadDependent(a.stage)) {
          auto v = need(a.stage, env, e.loc, "pipeline stage");
          if (!v)
            return;
          stage = *v;
        } else if (a.stages > 1) {
          stage = sameForThreads(a.stage, e, env).value_or(kAnyStage);
        }
        int cta = rank_;
        if (a.remoteCta) {
          auto r = need(a.remoteCta, env, e.loc, "remote CTA rank");
          if (!r)
            return;
          cta = int(*r);
        }
        s.accesses.push_back({a.buffer, cta, stage, a.write, boxOf(a, e, env)});
      }
    if (e.kind == SyncKind::Access && s.accesses.empty())
      return;
    // A remote arrival lands on its target's element; a multicast is one
    // step per CTA of its mask, delivering to and writing that CTA's copy.
    int64_t idx = s.element >= 0 ? out_.elements[size_t(s.element)].index : 0;
    for (int target : targets) {
      ConcreteStep copy = s;
      if (copy.element >= 0)
        copy.element = base_.at({target, e.barrier.array}) + int(idx);
      if (e.multicast)
        for (ConcreteAccess &a : copy.accesses)
          if (a.cta == rank_)
            a.cta = target;
      if (!pushStep(e, std::move(copy)))
        return;
    }
  }

  bool outOfRange(const SyncEvent &e, int64_t idx, const std::string &iteration) {
    const BarrierArray *arr = sk_.barrier(e.barrier.array);
    if (arr && idx >= 0 && idx < arr->size)
      return false;
    out_.outOfRange = true;
    fail(e.loc,
         fmt::format("barrier index out of range: {} by {} uses {}[{}] at {}, but {} "
                     "has {} element{}",
                     e.what, e.threads.describe(), e.barrier.array, idx, iteration, e.barrier.array,
                     arr ? arr->size : 0, arr && arr->size == 1 ? "" : "s"));
    return true;
  }

  // The command's budget (ir/Budget.h), polled every 4096 iterations and
  // steps: an unroll of a long loop nest at large fallback sizes (a persistent
  // family point, every CTA of a grid) ran for minutes past a wall budget of
  // 120 s. Past the budget the run stops with an error (not checked); the
  // budget records its exceedance, so the command's verdict is `budget`.
  bool withinBudget(llvm::SMLoc loc) {
    if (++polls_ % 4096 != 0)
      return true;
    Budget *budget = activeBudget();
    if (!budget || !budget->expired())
      return true;
    out_.budgetExceeded = true;
    return fail(loc, "the budget ran out while unrolling the run");
  }

  bool pushStep(const SyncEvent &e, ConcreteStep s) {
    if (!withinBudget(e.loc))
      return false;
    if (++steps_ > cap_)
      return fail(e.loc, fmt::format("more than {} steps in the unrolled run", cap_));
    current().steps.push_back(std::move(s));
    return true;
  }

  // mbarrier.init: one step per element it initialises in this process
  // (an index over the thread, `full[threadIdx.x]`, reaches one element
  // per thread), which sets the element's count and starts its phase 0.
  void initSteps(const SyncEvent &e, const std::vector<int> &chain,
                 const std::map<std::string, int64_t> &env) {
    auto count = need(e.amount, env, e.loc, "init count");
    if (!count)
      return;
    std::set<int64_t> indices;
    if (threadDependent(e.barrier.index)) {
      for (int64_t t : executing(e)) {
        auto v = eval(e.barrier.index, env, t);
        if (!v) {
          fail(e.loc, "cannot evaluate the barrier index at concrete sizes");
          return;
        }
        indices.insert(*v);
      }
    } else {
      auto v = need(e.barrier.index, env, e.loc, "barrier index");
      if (!v)
        return;
      indices.insert(*v);
    }
    std::string iteration = iterationText(chain, env);
    for (int64_t idx : indices) {
      if (outOfRange(e, idx, iteration))
        return;
      ConcreteStep s;
      s.event = &e;
      s.iteration = iteration;
      s.cta = rank_;
      s.element = base_.at({rank_, e.barrier.array}) + int(idx);
      s.amount = *count;
      if (!pushStep(e, std::move(s)))
        return;
    }
  }

  // The threads of the current process that execute e.
  std::vector<int64_t> executing(const SyncEvent &e) const {
    std::vector<int64_t> out;
    for (int64_t t = 0; t < sk_.threads; ++t)
      if (e.threads.contains(t) && members_[proc_].contains(t))
        out.push_back(t);
    return out;
  }

  // The value of x for every thread of the process executing e, when they
  // all agree and it evaluates.
  std::optional<int64_t> sameForThreads(const Expr &x, const SyncEvent &e,
                                        const std::map<std::string, int64_t> &env) {
    std::optional<int64_t> out;
    for (int64_t t : executing(e)) {
      auto v = eval(x, env, t);
      if (!v || (out && *out != *v))
        return std::nullopt;
      out = v;
    }
    return out;
  }

  // The region of a: per dimension, the smallest interval holding it for
  // every thread of the process that executes it (the halves of Cs two
  // warpgroups copy into, `Cs[(wgid - 1) * 64 : +64, :]`, are disjoint
  // when the warpgroups are two processes); nothing, taken as the whole
  // stage, when it does not evaluate.
  std::vector<std::pair<int64_t, int64_t>> boxOf(const MemoryAccess &a, const SyncEvent &e,
                                                 const std::map<std::string, int64_t> &env) {
    std::vector<std::pair<int64_t, int64_t>> box;
    for (const RegionDim &d : a.region) {
      bool perThread = threadDependent(d.begin) || threadDependent(d.extent);
      std::vector<int64_t> threads = perThread ? executing(e) : std::vector<int64_t>{-1};
      std::optional<std::pair<int64_t, int64_t>> hull;
      for (int64_t t : threads) {
        auto begin = eval(d.begin, env, t), extent = eval(d.extent, env, t);
        if (!begin || !extent)
          return {};
        std::pair<int64_t, int64_t> iv{*begin, *begin + std::max<int64_t>(*extent, 0)};
        hull = hull ? std::pair<int64_t, int64_t>{std::min(hull->first, iv.first),
                                                  std::max(hull->second, iv.second)}
                    : iv;
      }
      if (!hull)
        return {};
      box.push_back(*hull);
    }
    return box;
  }

  // The ranks whose barrier a remote arrival or a multicast reaches.
  bool barrierTargets(const SyncEvent &e, const std::map<std::string, int64_t> &env,
                      std::vector<int> &targets) {
    targets.clear();
    if (e.remoteCta) {
      auto r = need(e.remoteCta, env, e.loc, "remote CTA rank");
      if (!r)
        return false;
      if (*r < 0 || *r >= ranks_)
        return fail(e.loc, fmt::format("{} arrives on CTA {} at these sizes, outside the "
                                       "cluster of {}",
                                       e.what, *r, ranks_));
      targets.push_back(int(*r));
      return true;
    }
    auto mask = need(e.multicast, env, e.loc, "multicast mask");
    if (!mask)
      return false;
    if (*mask <= 0 || *mask >= (int64_t(1) << ranks_))
      return fail(e.loc, fmt::format("{} multicasts to mask {} at these sizes, which names CTAs "
                                     "outside the cluster of {} (or none)",
                                     e.what, *mask, ranks_));
    for (int64_t r = 0; r < ranks_; ++r)
      if ((*mask >> r) & 1)
        targets.push_back(int(r));
    return true;
  }

  const BarrierSkeleton &sk_;
  const std::map<std::string, int64_t> &sizes_;
  std::array<int64_t, 3> cta_;
  size_t cap_;
  size_t steps_ = 0;
  uint64_t polls_ = 0;
  ConcreteSkeleton out_;
  std::vector<ThreadSet> members_;
  std::vector<std::vector<bool>> belongs_; // [event][process]
  std::set<std::string> tracked_;
  int64_t ranks_ = 1;
  int axis_ = clusterShapeOf(sk_).value_or(ClusterShape{}).axis; // the cluster's axis
  std::map<std::pair<int, std::string>, int> base_;              // (rank, array): first element
  std::map<int, int64_t> rounds_;
  size_t proc_ = 0; // the process within its CTA
  int rank_ = 0;    // the CTA's rank in the cluster
};

} // namespace

std::string ConcreteSkeleton::describe(const ConcreteStep &s) const {
  std::string out = s.event->what;
  if (s.element >= 0)
    out += " " + elementName(s.element);
  if (s.event->kind == SyncKind::MbarWait)
    out += fmt::format(" (parity {})", s.parity % 2);
  return out + " at " + s.iteration;
}

bool ConcreteAccess::overlaps(const ConcreteAccess &o) const {
  if (box.empty() || o.box.empty() || box.size() != o.box.size())
    return true;
  for (size_t d = 0; d < box.size(); ++d)
    if (box[d].second <= o.box[d].first || o.box[d].second <= box[d].first)
      return false;
  return true;
}

std::string ConcreteSkeleton::processName(size_t p) const {
  std::string out = processes[p].threads.describe();
  return clusterCtas > 1 ? fmt::format("{} of CTA {}", out, processes[p].cta) : out;
}

std::string ConcreteSkeleton::elementName(int e) const {
  const ConcreteElement &el = elements[size_t(e)];
  std::string out = fmt::format("{}[{}]", el.array, el.index);
  return clusterCtas > 1 ? fmt::format("{} of CTA {}", out, el.cta) : out;
}

std::vector<ThreadSet> skeletonProcesses(const BarrierSkeleton &sk) {
  int64_t n = sk.threads;
  std::vector<bool> wideGroup(size_t((n + kThreadsPerWarpgroup - 1) / kThreadsPerWarpgroup));
  // wgmma.fence / mma_async / commit_group / wait_group are `.sync.aligned`
  // across the warpgroup, whatever namespace they are written in: one
  // operation of its four warps too.
  auto warpgroupWide = [](const SyncEvent &e) {
    return e.scope == ExecScope::Warpgroup || e.kind == SyncKind::WgmmaFence ||
           e.kind == SyncKind::WgmmaMma || e.kind == SyncKind::WgmmaCommit ||
           e.kind == SyncKind::WgmmaWait;
  };
  for (const SyncEvent &e : sk.events)
    if (warpgroupWide(e))
      for (int64_t t = 0; t < n; ++t)
        if (e.threads.contains(t))
          wideGroup[size_t(t / kThreadsPerWarpgroup)] = true;
  // units[u] = [first, last) threads
  std::vector<std::pair<int64_t, int64_t>> units;
  for (int64_t t = 0; t < n;) {
    int64_t size =
        wideGroup[size_t(t / kThreadsPerWarpgroup)] ? kThreadsPerWarpgroup : kThreadsPerWarp;
    units.push_back({t, std::min(n, t + size)});
    t += size;
  }
  std::vector<const ThreadSet *> splits;
  ThreadSet inLoops(n);
  for (const SyncEvent &e : sk.events) {
    if (e.loop >= 0 && e.role >= 0) {
      splits.push_back(&sk.roles[size_t(e.role)].threads);
      for (int64_t t = 0; t < n; ++t)
        if (sk.roles[size_t(e.role)].threads.contains(t))
          inLoops.add(t);
    }
    if (emitted(e.kind) && (wholeUnits(e.threads, units) || blocksOrFeeds(e.kind)))
      splits.push_back(&e.threads);
  }
  // The units of loop roles first (the producer, then the consumers),
  // then the others, each in thread order.
  std::stable_partition(units.begin(), units.end(),
                        [&](const auto &u) { return inLoops.contains(u.first); });
  std::vector<ThreadSet> members;
  std::map<std::vector<bool>, size_t> classOf;
  for (const auto &[first, last] : units) {
    std::vector<bool> signature;
    signature.reserve(splits.size());
    for (const ThreadSet *s : splits) {
      bool meets = false;
      for (int64_t t = first; t < last && !meets; ++t)
        meets = s->contains(t);
      signature.push_back(meets);
    }
    auto [it, fresh] = classOf.emplace(std::move(signature), members.size());
    if (fresh)
      members.push_back(ThreadSet(n));
    for (int64_t t = first; t < last; ++t)
      members[it->second].add(t);
  }
  return members;
}

ConcreteSkeleton unrollSkeleton(const BarrierSkeleton &skeleton,
                                const std::map<std::string, int64_t> &sizes,
                                const std::array<int64_t, 3> &cta, size_t stepCap,
                                int64_t clusterCtas) {
  return Unroller(skeleton, sizes, cta, stepCap, clusterCtas).run();
}

} // namespace tilescope
