#include "verifier/BarrierExplorer.h"

#include "ir/Budget.h"
#include "sync/Mbarrier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_set>

namespace tilescope {

namespace {

enum Mode : int32_t { Ready = 0, InAccess = 1, AtBarrier = 2 };

struct State {
  std::vector<int32_t> pc, mode, waitGen;            // per process
  std::vector<int32_t> clusterArrived;               // per process: the split cluster
                                                     // barrier's phase it arrived in
  std::vector<MbarrierPhase> bar;                    // per barrier element
  std::vector<int64_t> count; // per barrier element: arrivals per phase, -1 uninitialised
  std::vector<int64_t> syncCount, syncGen;           // per CTA / named barrier
  std::vector<std::pair<int32_t, int32_t>> inflight; // TMA copies issued, not delivered
  std::vector<std::vector<int32_t>> open;            // per process: MMAs of the open group
  std::vector<std::vector<std::vector<int32_t>>> committed; // per process: groups in flight

  std::string key() const {
    std::string out;
    auto put = [&](const auto &v) {
      size_t n = v.size();
      out.append(reinterpret_cast<const char *>(&n), sizeof n);
      if (n)
        out.append(reinterpret_cast<const char *>(v.data()), n * sizeof v[0]);
    };
    put(pc), put(mode), put(waitGen), put(clusterArrived), put(bar), put(count), put(syncCount),
        put(syncGen), put(inflight);
    for (const auto &o : open)
      put(o);
    for (const auto &groups : committed) {
      put(std::vector<int32_t>{int32_t(groups.size())});
      for (const auto &g : groups)
        put(g);
    }
    return out;
  }
};

int64_t mod2(int64_t v) {
  return ((v % 2) + 2) % 2;
}

class Explorer {
public:
  Explorer(const ConcreteSkeleton &sk, size_t cap) : sk_(sk), cap_(cap) {
    for (const ConcreteProcess &p : sk_.processes)
      for (const ConcreteStep &s : p.steps)
        if (isSync(s.event->kind))
          syncIndex(s);
  }

  ExplorationResult run() {
    checkWaitIntent();
    State init;
    size_t P = sk_.processes.size(), E = sk_.elements.size();
    init.pc.assign(P, 0);
    init.mode.assign(P, Ready);
    init.waitGen.assign(P, 0);
    init.clusterArrived.assign(P, -1);
    init.open.assign(P, {});
    init.committed.assign(P, {});
    init.bar.reserve(E);
    for (const ConcreteElement &e : sk_.elements) {
      init.bar.push_back(MbarrierPhase::initial(e.count));
      init.count.push_back(e.declared ? e.count : -1);
    }
    init.syncCount.assign(syncIds_.size(), 0);
    init.syncGen.assign(syncIds_.size(), 0);
    std::unordered_set<std::string> seen;
    // Breadth first: the first violation found on a path is one of the
    // earliest (the witness names the smallest iterations).
    std::deque<State> queue{init};
    seen.insert(init.key());
    while (!queue.empty()) {
      State s = std::move(queue.front());
      queue.pop_front();
      bool moved = false;
      for (size_t p = 0; p < P; ++p) {
        State next = s;
        Outcome o = stepProcess(next, p);
        if (o == Blocked)
          continue;
        moved = true;
        if (o == Violation)
          continue;
        if (!push(seen, queue, std::move(next)))
          return finish(seen.size(), false);
      }
      for (size_t k = 0; k < s.inflight.size(); ++k) {
        State next = s;
        deliver(next, k);
        moved = true;
        if (!push(seen, queue, std::move(next)))
          return finish(seen.size(), false);
      }
      if (!moved)
        stuck(s);
    }
    return finish(seen.size(), true);
  }

private:
  enum Outcome { Blocked, Moved, Violation };

  static bool isSync(SyncKind k) {
    return k == SyncKind::CtaSync || k == SyncKind::NamedSync || k == SyncKind::NamedArrive ||
           k == SyncKind::ClusterArrive || k == SyncKind::ClusterWait;
  }

  // cta.sync and named barriers are per CTA; cluster.sync and the split
  // cluster barrier (arrive, then wait) join every thread of every CTA of
  // the cluster.
  static bool clusterWide(const ConcreteStep &s) {
    return (s.event->kind == SyncKind::CtaSync && s.event->scope == ExecScope::Cluster) ||
           splitCluster(s);
  }
  static bool splitCluster(const ConcreteStep &s) {
    return s.event->kind == SyncKind::ClusterArrive || s.event->kind == SyncKind::ClusterWait;
  }
  static std::pair<int64_t, int> syncKey(const ConcreteStep &s) {
    if (splitCluster(s))
      return {-3, -1};
    if (clusterWide(s))
      return {-2, -1};
    return {s.event->kind == SyncKind::CtaSync ? -1 : s.event->namedId, s.cta};
  }

  size_t syncIndex(const ConcreteStep &s) {
    auto key = syncKey(s);
    auto it = std::find(syncIds_.begin(), syncIds_.end(), key);
    if (it != syncIds_.end())
      return size_t(it - syncIds_.begin());
    syncIds_.push_back(key);
    int64_t need = s.event->kind == SyncKind::CtaSync || splitCluster(s)
                       ? s.event->threads.launchThreads()
                       : s.event->namedThreads;
    if (clusterWide(s))
      need *= sk_.clusterCtas;
    syncNeed_.push_back(need);
    return syncIds_.size() - 1;
  }

  bool push(std::unordered_set<std::string> &seen, std::deque<State> &queue, State next) {
    if (!seen.insert(next.key()).second)
      return true;
    if (seen.size() > cap_)
      return false;
    // The command's wall-time budget (ir/Budget.h), every 1024 states.
    if (seen.size() % 1024 == 0)
      if (Budget *budget = activeBudget(); budget && budget->expired()) {
        outOfTime_ = true;
        return false;
      }
    queue.push_back(std::move(next));
    return true;
  }
  bool outOfTime_ = false;

  ExplorationResult finish(size_t states, bool complete) {
    ExplorationResult r;
    r.findings = std::move(findings_);
    r.states = states;
    r.complete = complete;
    if (!complete)
      r.limit = outOfTime_ ? fmt::format("the wall-time budget ran out after {} states", states)
                           : fmt::format("state space above {} states", cap_);
    return r;
  }

  void finding(ProtocolViolationKind kind, llvm::SMLoc loc, std::string message,
               std::vector<std::pair<llvm::SMLoc, std::string>> notes = {}) {
    for (const ProtocolFinding &f : findings_)
      if (f.kind == kind && f.loc == loc)
        return;
    ProtocolFinding f{kind, loc, std::move(message), std::move(notes), false};
    f.exhaustive = true;
    findings_.push_back(std::move(f));
  }

  std::string elementName(int e) const { return sk_.elementName(e); }
  // The threads issuing a step, with their CTA in a cluster.
  std::string by(const ConcreteStep &st) const {
    std::string out = st.event->threads.describe();
    return sk_.clusterCtas > 1 ? fmt::format("{} of CTA {}", out, st.cta) : out;
  }
  std::string phaseState(const State &s, int e) const {
    const MbarrierPhase &b = s.bar[size_t(e)];
    int64_t count = s.count[size_t(e)];
    return fmt::format("{} has completed {} phase{}; phase {} has {} of {} arrivals and {} "
                       "transaction bytes outstanding",
                       elementName(e), b.phase, b.phase == 1 ? "" : "s", b.phase, count - b.pending,
                       count, b.tx);
  }

  static int64_t countOf(const State &s, int e) { return s.count[size_t(e)]; }

  // A step on an element no mbarrier.init has reached yet in this
  // interleaving (PTX: undefined behaviour).
  bool uninitialised(const State &s, size_t p, const ConcreteStep &st) {
    if (st.element < 0 || s.count[size_t(st.element)] >= 0)
      return false;
    bool initSomewhere = false;
    for (const ConcreteProcess &q : sk_.processes)
      for (const ConcreteStep &other : q.steps)
        initSomewhere = initSomewhere ||
                        (other.event->kind == SyncKind::MbarInit && other.element == st.element);
    finding(ProtocolViolationKind::InitOrder, st.event->loc,
            fmt::format("mbarrier init: {} by {} at {} uses {} before any mbarrier.init of it{}",
                        st.event->what, sk_.processName(p), st.iteration, elementName(st.element),
                        initSomewhere ? " (an init of it comes later in this interleaving: nothing "
                                        "orders the init before this use)"
                                      : " (no init of the run reaches this element)"));
    return true;
  }

  void deliver(State &s, size_t k) {
    auto [p, idx] = s.inflight[k];
    const ConcreteStep &st = sk_.processes[size_t(p)].steps[size_t(idx)];
    s.inflight.erase(s.inflight.begin() + long(k));
    s.bar[size_t(st.element)].addTx(-st.amount, countOf(s, st.element));
  }

  // Intervals of other processes open in `s`: (process, step).
  std::vector<std::pair<size_t, int32_t>> openIntervals(const State &s, size_t self) const {
    std::vector<std::pair<size_t, int32_t>> out;
    for (size_t q = 0; q < sk_.processes.size(); ++q) {
      if (q == self)
        continue;
      if (s.mode[q] == InAccess)
        out.push_back({q, s.pc[q]});
      for (int32_t m : s.open[q])
        out.push_back({q, m});
      for (const auto &g : s.committed[q])
        for (int32_t m : g)
          out.push_back({q, m});
    }
    for (auto [q, idx] : s.inflight)
      if (size_t(q) != self)
        out.push_back({size_t(q), idx});
    return out;
  }

  // Checks the accesses of step `idx` of process p starting now.
  bool conflicts(const State &s, size_t p, int32_t idx) {
    const ConcreteStep &x = sk_.processes[p].steps[size_t(idx)];
    for (const ConcreteAccess &a : x.accesses)
      for (auto [q, j] : openIntervals(s, p)) {
        const ConcreteStep &y = sk_.processes[q].steps[size_t(j)];
        for (const ConcreteAccess &b : y.accesses) {
          bool sameStage = a.stage == b.stage || a.stage == kAnyStage || b.stage == kAnyStage;
          if (a.buffer != b.buffer || a.cta != b.cta || !sameStage || (!a.write && !b.write) ||
              !a.overlaps(b))
            continue;
          bool asyncRead = y.event->kind == SyncKind::WgmmaMma;
          int64_t stage = a.stage == kAnyStage ? b.stage : a.stage;
          std::string at = stage == kAnyStage ? "" : fmt::format(" stage {}", stage);
          if (!a.write)
            finding(ProtocolViolationKind::ReadBeforeFilled, x.event->loc,
                    fmt::format("read before filled: {} by {} reads {}{} at {} while {} "
                                "by {} (at {}) is still writing it: nothing orders the read "
                                "after that write completes",
                                x.event->what, by(x), a.buffer, at, x.iteration, y.event->what,
                                by(y), y.iteration),
                    {{y.event->loc, fmt::format("{} writes {} here", y.event->what, b.buffer)}});
          else
            finding(ProtocolViolationKind::OverwriteWhileRead, x.event->loc,
                    fmt::format("overwrite while read: {} by {} refills {}{} at {} while {} "
                                "by {} (from {}) may still {} it{}: nothing orders the refill "
                                "after that {} completes",
                                x.event->what, by(x), a.buffer, at, x.iteration, y.event->what,
                                by(y), y.iteration, b.write ? "write" : "read",
                                asyncRead ? " (its wgmma group is not retired by a "
                                            "wgmma.wait_group yet: released before the read "
                                            "completed)"
                                          : "",
                                b.write ? "write" : "read"),
                    {{y.event->loc, fmt::format("{} {} {} here", y.event->what,
                                                b.write ? "writes" : "reads", b.buffer)}});
          return true;
        }
      }
    return false;
  }

  Outcome stepProcess(State &s, size_t p) {
    const ConcreteProcess &proc = sk_.processes[p];
    int32_t &pc = s.pc[p];
    if (size_t(pc) >= proc.steps.size())
      return Blocked;
    const ConcreteStep &st = proc.steps[size_t(pc)];
    if (s.mode[p] == InAccess) {
      s.mode[p] = Ready;
      ++pc;
      return Moved;
    }
    if (s.mode[p] == AtBarrier) {
      size_t b = syncOf(st);
      if (s.syncGen[b] <= s.waitGen[p])
        return Blocked;
      s.mode[p] = Ready;
      s.waitGen[p] = 0;
      ++pc;
      return Moved;
    }
    int e = st.element;
    if (st.event->kind != SyncKind::MbarInit && uninitialised(s, p, st))
      return Violation;
    switch (st.event->kind) {
    case SyncKind::MbarInit:
      s.bar[size_t(e)] = MbarrierPhase::initial(st.amount);
      s.count[size_t(e)] = st.amount;
      break;
    case SyncKind::MbarWait: {
      if (!s.bar[size_t(e)].waitSatisfied(st.parity))
        return Blocked;
      int64_t intended = intendedPhase(st);
      int64_t observed = s.bar[size_t(e)].phase - 1;
      if (observed != intended) {
        finding(ProtocolViolationKind::ParityAliasing, st.event->loc,
                fmt::format("parity aliasing: at {} this wait on {} (parity {}) by {} is its "
                            "wait number {} on {} and means {}, but it passes on phase {} ({}), "
                            "a phase two {}",
                            st.iteration, elementName(e), mod2(st.parity), sk_.processName(p),
                            st.round, elementName(e),
                            intended < 0 ? std::string("the phase before the first")
                                         : fmt::format("phase {}", intended),
                            observed, phaseState(s, e), observed < intended ? "behind" : "ahead"));
        return Violation;
      }
      break;
    }
    case SyncKind::MbarArrive:
    case SyncKind::Tcgen05Commit:
      if (!s.bar[size_t(e)].arrive(st.amount, countOf(s, e), st.expectBytes)) {
        finding(ProtocolViolationKind::OverArrival, st.event->loc,
                fmt::format("over-arrival: {} by {} at {} brings {} arrival{} to {}, which "
                            "expects only {} more in this phase ({})",
                            st.event->what, by(st), st.iteration, st.amount,
                            st.amount == 1 ? "" : "s", elementName(e), s.bar[size_t(e)].pending,
                            phaseState(s, e)));
        return Violation;
      }
      break;
    case SyncKind::MbarExpectTx:
      s.bar[size_t(e)].addTx(st.amount, countOf(s, e));
      break;
    case SyncKind::MbarCompleteTx:
      s.bar[size_t(e)].addTx(-st.amount, countOf(s, e));
      break;
    case SyncKind::TxDelivery:
      if (conflicts(s, p, pc))
        return Violation;
      s.inflight.push_back({int32_t(p), pc});
      std::sort(s.inflight.begin(), s.inflight.end());
      break;
    case SyncKind::CtaSync:
    case SyncKind::NamedSync:
    case SyncKind::NamedArrive: {
      size_t b = syncOf(st);
      int64_t gen = s.syncGen[b];
      s.syncCount[b] += st.syncThreads;
      if (syncNeed_[b] > 0 && s.syncCount[b] >= syncNeed_[b]) {
        s.syncCount[b] -= syncNeed_[b];
        ++s.syncGen[b];
      }
      if (st.event->kind != SyncKind::NamedArrive) {
        s.mode[p] = AtBarrier;
        s.waitGen[p] = int32_t(gen);
        return Moved;
      }
      break;
    }
    case SyncKind::ClusterArrive: {
      size_t b = syncOf(st);
      s.clusterArrived[p] = int32_t(s.syncGen[b]);
      s.syncCount[b] += st.syncThreads;
      if (s.syncCount[b] >= syncNeed_[b]) {
        s.syncCount[b] -= syncNeed_[b];
        ++s.syncGen[b];
      }
      break;
    }
    case SyncKind::ClusterWait:
      // Until the phase this process arrived in completed (a wait with no
      // arrive before it passes: nothing to wait for).
      if (s.syncGen[syncOf(st)] <= s.clusterArrived[p])
        return Blocked;
      break;
    case SyncKind::WgmmaMma:
      if (conflicts(s, p, pc))
        return Violation;
      if (!st.accesses.empty())
        s.open[p].push_back(pc);
      break;
    case SyncKind::WgmmaCommit:
      // Every commit is a group, with or without tracked reads, so that
      // wait_group(n) counts groups as the hardware does.
      s.committed[p].push_back(std::move(s.open[p]));
      s.open[p].clear();
      break;
    case SyncKind::WgmmaWait:
      while (int64_t(s.committed[p].size()) > st.amount)
        s.committed[p].erase(s.committed[p].begin());
      break;
    case SyncKind::Access:
      if (conflicts(s, p, pc))
        return Violation;
      s.mode[p] = InAccess;
      return Moved;
    default:
      break;
    }
    ++pc;
    return Moved;
  }

  size_t syncOf(const ConcreteStep &st) const {
    return size_t(std::find(syncIds_.begin(), syncIds_.end(), syncKey(st)) - syncIds_.begin());
  }

  static int64_t intendedPhase(const ConcreteStep &st) {
    return tilescope::intendedPhase(st.parity, st.round);
  }

  // A wait statement whose parity means "this round's phase" in one
  // execution and "the previous round's" in another does not follow the
  // phases: one of the two is satisfied by a phase two behind (the symbolic
  // proofs' aliasing criterion, here on the unrolled executions).
  void checkWaitIntent() {
    for (size_t p = 0; p < sk_.processes.size(); ++p) {
      std::map<const SyncEvent *, const ConcreteStep *> first;
      for (const ConcreteStep &st : sk_.processes[p].steps) {
        if (st.event->kind != SyncKind::MbarWait)
          continue;
        auto [it, fresh] = first.emplace(st.event, &st);
        const ConcreteStep &a = *it->second;
        if (fresh || intendedPhase(a) - a.round == intendedPhase(st) - st.round)
          continue;
        finding(ProtocolViolationKind::ParityAliasing, st.event->loc,
                fmt::format("parity aliasing: the parity of this wait does not follow the phases "
                            "of {}: at {} (its wait number {} on {}) it waits for phase {}, but at "
                            "{} (wait number {} on {}) for phase {}, so one of them is satisfied "
                            "by a phase two behind",
                            sk_.elements[size_t(st.element)].array, a.iteration, a.round,
                            elementName(a.element), intendedPhase(a), st.iteration, st.round,
                            elementName(st.element), intendedPhase(st)));
        break;
      }
    }
  }

  // No process can move and nothing is in flight.
  void stuck(const State &s) {
    bool finished = true;
    for (size_t p = 0; p < sk_.processes.size(); ++p)
      finished = finished && size_t(s.pc[p]) >= sk_.processes[p].steps.size();
    if (finished) {
      for (size_t e = 0; e < sk_.elements.size(); ++e) {
        if (s.count[e] < 0 || s.bar[e].idle(s.count[e]))
          continue;
        const ConcreteStep *last = lastTouching(int(e));
        if (!last)
          continue;
        bool bytes = s.bar[e].pending == 0;
        finding(bytes ? ProtocolViolationKind::TxBytesMismatch
                      : ProtocolViolationKind::PhaseNeverCompletes,
                last->event->loc,
                fmt::format("{}: every process has finished, but {}",
                            bytes ? "expect_tx bytes mismatch" : "phase never completes",
                            phaseState(s, int(e))));
      }
      return;
    }
    // Report at the first blocked wait; the other processes are notes.
    std::vector<std::pair<llvm::SMLoc, std::string>> notes;
    const ConcreteStep *blocked = nullptr;
    size_t who = 0;
    // The wait whose phase has all its arrivals but bytes outstanding is the
    // cause when there is one; else the first blocked process.
    auto bytesShort = [&](const ConcreteStep &st) {
      return st.event->kind == SyncKind::MbarWait && s.bar[size_t(st.element)].pending == 0 &&
             s.bar[size_t(st.element)].tx != 0;
    };
    for (size_t p = 0; p < sk_.processes.size(); ++p) {
      if (size_t(s.pc[p]) >= sk_.processes[p].steps.size())
        continue;
      const ConcreteStep &st = sk_.processes[p].steps[size_t(s.pc[p])];
      if (!blocked || (bytesShort(st) && !bytesShort(*blocked))) {
        blocked = &st;
        who = p;
      }
    }
    for (size_t p = 0; p < sk_.processes.size(); ++p) {
      if (p == who || size_t(s.pc[p]) >= sk_.processes[p].steps.size())
        continue;
      const ConcreteStep &st = sk_.processes[p].steps[size_t(s.pc[p])];
      notes.push_back(
          {st.event->loc, fmt::format("{} is blocked here: {}", sk_.processName(p), sk_.describe(st))});
    }
    if (!blocked)
      return;
    if (blocked->event->kind == SyncKind::MbarWait) {
      int e = blocked->element;
      int64_t intended = intendedPhase(*blocked);
      bool bytes = bytesShort(*blocked);
      finding(
          bytes ? ProtocolViolationKind::TxBytesMismatch : ProtocolViolationKind::Deadlock,
          blocked->event->loc,
          fmt::format("{}: {} waits at {} for phase {}, which {}: {}{}",
                      bytes ? "expect_tx bytes mismatch" : "deadlock", sk_.processName(who),
                      sk_.describe(*blocked), intended,
                      intended < s.bar[size_t(e)].phase
                          ? "completed before it came (the parity now waits for a later "
                            "phase, which never completes)"
                          : "never completes",
                      phaseState(s, e),
                      notes.empty() ? std::string(", and every other process has finished") : ""),
          notes);
    } else {
      finding(ProtocolViolationKind::Deadlock, blocked->event->loc,
              fmt::format("deadlock: {} is blocked at {} and no process can move",
                          sk_.processName(who), sk_.describe(*blocked)),
              notes);
    }
  }

  const ConcreteStep *lastTouching(int e) const {
    const ConcreteStep *out = nullptr;
    for (const ConcreteProcess &p : sk_.processes)
      for (const ConcreteStep &st : p.steps)
        if (st.element == e && st.event->kind != SyncKind::MbarWait &&
            st.event->kind != SyncKind::MbarInit)
          out = &st;
    return out;
  }

  const ConcreteSkeleton &sk_;
  size_t cap_;
  std::vector<std::pair<int64_t, int>> syncIds_; // (id, CTA rank); see syncKey
  std::vector<int64_t> syncNeed_;
  std::vector<ProtocolFinding> findings_;
};

} // namespace

ExplorationResult exploreSkeleton(const ConcreteSkeleton &skeleton, size_t stateCap) {
  return Explorer(skeleton, stateCap).run();
}

} // namespace tilescope
