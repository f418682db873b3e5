#include "verifier/ConcreteSkeleton.h"

#include "ir/ConcreteEval.h"
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

// Issuers of `e` among `threads`: SyncEvent::issuers() on the restriction.
int64_t issuersWithin(const SyncEvent &e, const ThreadSet &threads) {
  SyncEvent restricted;
  restricted.scope = e.scope;
  restricted.threads = intersect(e.threads, threads);
  return restricted.issuers();
}

bool emitted(SyncKind k) {
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
  case SyncKind::WgmmaMma:
  case SyncKind::WgmmaCommit:
  case SyncKind::WgmmaWait:
  case SyncKind::Access:
    return true;
  default:
    return false;
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
    for (int64_t r = 0; r < ranks_; ++r)
      for (const auto &[name, arr] : sk_.barriers) {
        std::optional<int64_t> count = arr.count;
        for (const SyncEvent &e : sk_.events)
          if (!count && e.kind == SyncKind::MbarInit && e.barrier.array == name && e.amount)
            count = constantValue(e.amount);
        base_[{int(r), name}] = int(out_.elements.size());
        for (int64_t i = 0; i < arr.size; ++i)
          out_.elements.push_back({name, i, count.value_or(0), int(r)});
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

  void formProcesses() {
    std::vector<int> loopRoles;
    for (const SyncEvent &e : sk_.events)
      if (e.loop >= 0 && e.role >= 0 &&
          std::find(loopRoles.begin(), loopRoles.end(), e.role) == loopRoles.end())
        loopRoles.push_back(e.role);
    // Union of overlapping loop roles.
    std::vector<int> parent(loopRoles.size());
    std::iota(parent.begin(), parent.end(), 0);
    std::function<int(int)> find = [&](int x) { return parent[size_t(x)] == x ? x : parent[size_t(x)] = find(parent[size_t(x)]); };
    for (size_t a = 0; a < loopRoles.size(); ++a)
      for (size_t b = a + 1; b < loopRoles.size(); ++b)
        if (overlaps(sk_.roles[size_t(loopRoles[a])].threads, sk_.roles[size_t(loopRoles[b])].threads))
          parent[size_t(find(int(a)))] = find(int(b));
    std::map<int, size_t> component;
    ThreadSet covered(sk_.threads);
    for (size_t a = 0; a < loopRoles.size(); ++a) {
      int c = find(int(a));
      if (!component.count(c)) {
        component[c] = members_.size();
        members_.push_back(ThreadSet(sk_.threads));
        out_.processes.emplace_back();
      }
      size_t p = component[c];
      roleProcess_[loopRoles[a]] = p;
      for (int64_t t = 0; t < sk_.threads; ++t)
        if (sk_.roles[size_t(loopRoles[a])].threads.contains(t)) {
          members_[p].add(t);
          covered.add(t);
        }
    }
    ThreadSet rest(sk_.threads);
    for (int64_t t = 0; t < sk_.threads; ++t)
      if (!covered.contains(t))
        rest.add(t);
    if (!rest.empty()) {
      members_.push_back(rest);
      out_.processes.emplace_back();
    }
    for (size_t p = 0; p < members_.size(); ++p)
      out_.processes[p].threads = members_[p];
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

  bool belongs(const SyncEvent &e, size_t p) const {
    if (e.loop >= 0) {
      auto it = roleProcess_.find(e.role);
      return it != roleProcess_.end() && it->second == p;
    }
    return overlaps(e.threads, members_[p]);
  }

  // Buffers two processes touch in loops: the ones whose stages are tracked.
  void trackBuffers() {
    std::map<std::string, std::set<size_t>> users;
    for (const SyncEvent &e : sk_.events) {
      if (e.loop < 0)
        continue;
      auto it = roleProcess_.find(e.role);
      if (it == roleProcess_.end())
        continue;
      for (const MemoryAccess &a : e.accesses)
        if (a.scope == MemScope::Shared || a.scope == MemScope::Tmem)
          users[a.buffer].insert(it->second);
    }
    for (const auto &[name, procs] : users)
      if (procs.size() >= 2)
        tracked_.insert(name);
  }

  // --- evaluation ---

  std::optional<int64_t> eval(const Expr &e, const std::map<std::string, int64_t> &env) {
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
      for (int64_t v = *b; v < *en && out_.error.empty(); v += *st) {
        env[loop.var] = v;
        size_t inner = pos;
        unroll(evs, inner, depth + 1, env);
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
    ConcreteStep s;
    s.event = &e;
    s.iteration = iterationText(chain, env);
    int64_t issuers = issuersWithin(e, members_[proc_]);
    if (!e.barrier.array.empty()) {
      auto idx = need(e.barrier.index, env, e.loc, "barrier index");
      if (!idx)
        return;
      const BarrierArray *arr = sk_.barrier(e.barrier.array);
      if (!arr || *idx < 0 || *idx >= arr->size) {
        out_.outOfRange = true;
        fail(e.loc, fmt::format("barrier index out of range: {} by {} uses {}[{}] at {}, but {} "
                                "has {} element{}",
                                e.what, e.threads.describe(), e.barrier.array, *idx, s.iteration,
                                e.barrier.array, arr ? arr->size : 0,
                                arr && arr->size == 1 ? "" : "s"));
        return;
      }
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
        }
        int cta = rank_;
        if (a.remoteCta) {
          auto r = need(a.remoteCta, env, e.loc, "remote CTA rank");
          if (!r)
            return;
          cta = int(*r);
        }
        s.accesses.push_back({a.buffer, cta, stage, a.write, boxOf(a, env)});
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
      if (++steps_ > cap_) {
        fail(e.loc, fmt::format("more than {} steps in the unrolled run", cap_));
        return;
      }
      current().steps.push_back(std::move(copy));
    }
  }

  // The region of a, or nothing when it differs between threads or does
  // not evaluate (then it is taken as the whole stage).
  std::vector<std::pair<int64_t, int64_t>> boxOf(const MemoryAccess &a,
                                                 const std::map<std::string, int64_t> &env) {
    std::vector<std::pair<int64_t, int64_t>> box;
    for (const RegionDim &d : a.region) {
      if (threadDependent(d.begin) || threadDependent(d.extent))
        return {};
      auto begin = eval(d.begin, env), extent = eval(d.extent, env);
      if (!begin || !extent)
        return {};
      box.push_back({*begin, *begin + *extent});
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
  ConcreteSkeleton out_;
  std::vector<ThreadSet> members_;
  std::map<int, size_t> roleProcess_;
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

ConcreteSkeleton unrollSkeleton(const BarrierSkeleton &skeleton,
                                const std::map<std::string, int64_t> &sizes,
                                const std::array<int64_t, 3> &cta, size_t stepCap,
                                int64_t clusterCtas) {
  return Unroller(skeleton, sizes, cta, stepCap, clusterCtas).run();
}

} // namespace tilescope
