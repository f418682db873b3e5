#include "verifier/NamedBarriers.h"
#include "verifier/NamedOrdering.h"

#include "verifier/StructuralChecks.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace tilescope {

const SyncEvent *NamedGeneration::eventOf(int64_t tx) const {
  for (const SyncEvent *e : events)
    if (e->threads.contains(tx))
      return e;
  return nullptr;
}

namespace {

// One id's uses and every thread's sequence of them (per iteration of the
// loop holding them).
struct IdUses {
  int64_t id = -1;
  int64_t count = 0;
  int loop = -1;
  std::vector<const SyncEvent *> events;
  std::vector<std::vector<const SyncEvent *>> words; // per thread
  std::vector<NamedGeneration> generations;
  bool consistent = false;
};

class NamedAnalysis {
public:
  explicit NamedAnalysis(const BarrierSkeleton &sk) : sk_(sk) {}

  NamedBarrierModel run() {
    std::map<int64_t, std::vector<const SyncEvent *>> byId;
    for (const SyncEvent &e : sk_.events) {
      if (e.kind != SyncKind::NamedSync && e.kind != SyncKind::NamedArrive)
        continue;
      if (e.namedId < 0) {
        out_.notProved.push_back(
            {e.loc, fmt::format("named barriers: the id of {} is not a constant, so its "
                                "generations are not modelled",
                                e.what)});
        continue;
      }
      byId[e.namedId].push_back(&e);
    }
    bool ctaSync = std::any_of(sk_.events.begin(), sk_.events.end(), [](const SyncEvent &e) {
      return e.kind == SyncKind::CtaSync && e.scope == ExecScope::Cta;
    });
    for (auto &[id, events] : byId)
      if (id == 0 && ctaSync)
        // cta.sync is barrier 0 with every thread: its generations and
        // these mix.
        out_.notProved.push_back(
            {events.front()->loc, "named barrier 0 is also the one cta.sync uses; their "
                                  "generations are not modelled together"});
      else if (auto uses = sequences(id, events))
        ids_.push_back(std::move(*uses));
    // Arrivals that might overtake their generation are discharged by CTA
    // barriers or by ids already shown consistent (never by each other).
    std::vector<IdUses *> pending;
    for (IdUses &u : ids_)
      pending.push_back(&u);
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto it = pending.begin(); it != pending.end();)
        if (!overtakingObligation(**it)) {
          (*it)->consistent = true;
          it = pending.erase(it);
          progress = true;
        } else {
          ++it;
        }
    }
    for (IdUses *u : pending) {
      auto [loc, why] = *overtakingObligation(*u);
      out_.notProved.push_back({loc, why});
    }
    for (const IdUses &u : ids_)
      if (u.consistent)
        out_.generations.insert(out_.generations.end(), u.generations.begin(), u.generations.end());
    return std::move(out_);
  }

private:
  // The per-thread sequences of an id and its generations, when the id is
  // modelled and every generation gets exactly `count` threads; a finding or
  // a not-proved obligation otherwise.
  std::optional<IdUses> sequences(int64_t id, const std::vector<const SyncEvent *> &events) {
    IdUses u;
    u.id = id;
    u.events = events;
    u.count = events.front()->namedThreads;
    u.loop = events.front()->loop;
    for (const SyncEvent *e : events)
      if (e->namedThreads != u.count || e->namedThreads <= 0 ||
          e->namedThreads % kThreadsPerWarp != 0 || e->namedThreads > sk_.threads ||
          !(e->threads.widened(kThreadsPerWarp) == e->threads))
        return std::nullopt; // a thread-count or divergence finding of its own
    // Uses under conditions over sizes or loop variables are modelled when
    // every use of the id is under the same ones (the same `if` arms) in the
    // same loop: there all threads take them or none does, and the race
    // check lets such a generation order only accesses that run under those
    // conditions too (RaceChecker::runsWith).
    for (const SyncEvent *e : events)
      if (e->guards != events.front()->guards || e->loop != u.loop) {
        out_.notProved.push_back(
            {e->loc,
             fmt::format("named barrier {}: its uses sit in different loops or under different "
                         "conditions over sizes or loop variables ({} here), so its generations "
                         "are not modelled",
                         id, e->what)});
        unionCheck(id, events);
        return std::nullopt;
      }
    u.words.assign(size_t(sk_.threads), {});
    size_t longest = 0;
    for (int64_t t = 0; t < sk_.threads; ++t) {
      for (const SyncEvent *e : events)
        if (e->threads.contains(t))
          u.words[size_t(t)].push_back(e);
      longest = std::max(longest, u.words[size_t(t)].size());
    }
    for (size_t k = 0; k < longest; ++k) {
      NamedGeneration g;
      g.id = id;
      g.threads = u.count;
      g.loop = u.loop;
      g.index = int(k);
      ThreadSet arriving(sk_.threads);
      for (int64_t t = 0; t < sk_.threads; ++t)
        if (k < u.words[size_t(t)].size()) {
          arriving.add(t);
          const SyncEvent *e = u.words[size_t(t)][k];
          if (std::find(g.events.begin(), g.events.end(), e) == g.events.end())
            g.events.push_back(e);
        }
      std::sort(g.events.begin(), g.events.end(),
                [](const SyncEvent *a, const SyncEvent *b) { return a->order < b->order; });
      if (arriving.count() != u.count) {
        report(u, g, arriving, longest);
        return std::nullopt;
      }
      u.generations.push_back(std::move(g));
    }
    return u;
  }

  // The threads of generation g are not the barrier's count.
  void report(IdUses &u, const NamedGeneration &g, const ThreadSet &arriving, size_t longest) {
    NamedBarrierModel::Finding f;
    const SyncEvent *at = g.events.front();
    f.loc = at->loc;
    std::string iteration = u.loop >= 0 ? " in every iteration of its loop" : "";
    if (longest == 1) {
      f.message = fmt::format("named barrier {} expects {} threads but {} ({}) reach it", u.id,
                              u.count, arriving.count(), arriving.describe());
      out_.findings.push_back(std::move(f));
      return;
    }
    f.deadlock = arriving.count() < u.count;
    // Where the generation before took threads of this one's uses.
    if (g.index > 0)
      for (const SyncEvent *e : u.generations.back().events)
        f.notes.push_back(
            {e->loc, fmt::format("generation {} of barrier {} counts the "
                                 "arrivals here ({}) toward its {} threads",
                                 g.index, u.id, describeUse(u, g.index - 1, *e), u.count)});
    std::string parts;
    for (const SyncEvent *e : g.events) {
      ThreadSet here(sk_.threads);
      for (int64_t t = 0; t < sk_.threads; ++t)
        if (e->threads.contains(t) && size_t(g.index) < u.words[size_t(t)].size() &&
            u.words[size_t(t)][size_t(g.index)] == e)
          here.add(t);
      parts += fmt::format("{}{} ({}) at its use {}", parts.empty() ? "" : " and ", here.count(),
                           here.describe(), e->what);
      f.notes.push_back(
          {e->loc, fmt::format("{} ({} threads) use barrier {} here for the {} time",
                               here.describe(), here.count(), u.id, ordinal(g.index + 1))});
    }
    f.message = fmt::format(
        "named barrier {} counts {} threads, but the threads using it for the {} time{} are "
        "{}: {}; the hardware completes a generation with any {} arrivals, so generations mix "
        "uses and {}",
        u.id, u.count, ordinal(g.index + 1), iteration, arriving.count(), parts, u.count,
        f.deadlock ? fmt::format("generation {} never completes (the threads waiting in it "
                                 "hang)",
                                 g.index + 1)
                   : "a generation completes before all its threads arrived");
    out_.findings.push_back(std::move(f));
  }

  // The threads whose k-th use of u is e.
  std::string describeUse(const IdUses &u, int k, const SyncEvent &e) const {
    ThreadSet here(sk_.threads);
    for (int64_t t = 0; t < sk_.threads; ++t)
      if (size_t(k) < u.words[size_t(t)].size() && u.words[size_t(t)][size_t(k)] == &e)
        here.add(t);
    return fmt::format("{} threads, {}", here.count(), here.describe());
  }

  static std::string ordinal(int n) {
    static const char *names[] = {"first", "second", "third", "fourth", "fifth"};
    return n >= 1 && n <= 5 ? names[n - 1] : fmt::format("{}th", n);
  }

  // For ids out of the model: the threads of all uses must be the count.
  void unionCheck(int64_t id, const std::vector<const SyncEvent *> &events) {
    ThreadSet all(sk_.threads);
    for (const SyncEvent *e : events)
      for (int64_t t = 0; t < sk_.threads; ++t)
        if (e->threads.contains(t))
          all.add(t);
    int64_t expect = events.front()->namedThreads;
    if (all.count() != expect)
      out_.findings.push_back({false,
                               events.front()->loc,
                               fmt::format("named barrier {} expects {} threads but {} ({}) "
                                           "reach it",
                                           id, expect, all.count(), all.describe()),
                               {}});
  }

  const IdUses *usesOf(int64_t id) const {
    for (const IdUses &u : ids_)
      if (u.id == id)
        return &u;
    return nullptr;
  }

  // Whether thread t, between its use U (an arrive, position k) and its next
  // use V, waits for some thread p that synchronised in generation k: at a
  // CTA barrier after p's k-th use, or in a generation of another
  // consistent id whose event of p follows p's k-th use. `wrap`: V is the
  // first use of the next iteration.
  bool waitsForGeneration(const IdUses &u, int64_t t, size_t k, const SyncEvent &U,
                          const SyncEvent &V, bool wrap) const {
    auto placed = [&](const SyncEvent &b, bool &nextIteration) {
      if (!b.guards.empty() || b.loop != u.loop || !b.threads.contains(t))
        return false;
      nextIteration = wrap && b.order < V.order;
      return wrap ? (b.order > U.order || b.order < V.order)
                  : (b.order > U.order && b.order < V.order);
    };
    // p's k-th use is a sync that precedes, in p's program order, p's event
    // at `order` (in the next iteration: always).
    auto syncedBefore = [&](int64_t p, int order, bool nextIteration) {
      if (k >= u.words[size_t(p)].size())
        return false;
      const SyncEvent *mine = u.words[size_t(p)][k];
      return mine->kind == SyncKind::NamedSync && (nextIteration || mine->order < order);
    };
    for (const SyncEvent &b : sk_.events) {
      bool next = false;
      if (!placed(b, next))
        continue;
      if (b.kind == SyncKind::CtaSync && b.scope == ExecScope::Cta &&
          b.threads.count() == sk_.threads)
        for (int64_t p = 0; p < sk_.threads; ++p)
          if (syncedBefore(p, b.order, next))
            return true;
      if (b.kind == SyncKind::NamedSync && b.namedId != u.id) {
        const IdUses *other = usesOf(b.namedId);
        if (!other || !other->consistent || other->loop != u.loop)
          continue;
        for (const NamedGeneration &g : other->generations) {
          if (g.eventOf(t) != &b)
            continue;
          for (int64_t p = 0; p < sk_.threads; ++p)
            if (const SyncEvent *ep = g.eventOf(p); ep && syncedBefore(p, ep->order, next))
              return true;
        }
      }
    }
    return false;
  }

  // The first arrival of u that might count toward a generation before its
  // own (with its location and the reason), or nothing.
  std::optional<std::pair<llvm::SMLoc, std::string>> overtakingObligation(const IdUses &u) const {
    for (int64_t t = 0; t < sk_.threads; ++t) {
      const auto &w = u.words[size_t(t)];
      for (size_t k = 0; k < w.size(); ++k) {
        if (w[k]->kind != SyncKind::NamedArrive)
          continue;
        bool wrap = k + 1 == w.size();
        if (wrap && u.loop < 0)
          continue;
        const SyncEvent &next = *w[wrap ? 0 : k + 1];
        if (waitsForGeneration(u, t, k, *w[k], next, wrap))
          continue;
        return std::make_pair(
            w[k]->loc,
            fmt::format("named barrier {}: thread {} (warp {}) arrives here ({}) and uses the "
                        "barrier again at {}{} without waiting, in between, for a thread that "
                        "synchronised in that generation, so its next arrival may count toward "
                        "the same generation; not proved",
                        u.id, t, warpOf(t), w[k]->what, next.what,
                        wrap ? " in the next iteration" : ""));
      }
    }
    return std::nullopt;
  }

  const BarrierSkeleton &sk_;
  NamedBarrierModel out_;
  std::vector<IdUses> ids_;
};

} // namespace

NamedBarrierModel analyseNamedBarriers(const BarrierSkeleton &sk) {
  return NamedAnalysis(sk).run();
}

const SyncEvent *unmodelledNamedOrdering(const BarrierSkeleton &sk, const NamedBarrierModel &model,
                                         const ThreadSet &a, const ThreadSet &b) {
  // Ids with generations, and ids with a finding of their own (a kernel
  // that is a finding anyway; the accesses such a barrier fails to order
  // stay findings too): neither is outside the model.
  std::set<int64_t> modelled;
  for (const NamedGeneration &g : model.generations)
    modelled.insert(g.id);
  for (const NamedBarrierModel::Finding &f : model.findings)
    for (const SyncEvent &e : sk.events)
      if ((e.kind == SyncKind::NamedSync || e.kind == SyncKind::NamedArrive) && e.namedId >= 0 &&
          e.loc == f.loc)
        modelled.insert(e.namedId);
  std::vector<const SyncEvent *> outside;
  for (const SyncEvent &e : sk.events)
    if ((e.kind == SyncKind::NamedSync || e.kind == SyncKind::NamedArrive) &&
        (e.namedId < 0 || !modelled.count(e.namedId)))
      outside.push_back(&e);
  auto meets = [](const ThreadSet &x, const ThreadSet &y) {
    for (int64_t t = 0; t < x.launchThreads(); ++t)
      if (x.contains(t) && y.contains(t))
        return true;
    return false;
  };
  for (const SyncEvent *s : outside) {
    if (s->kind != SyncKind::NamedSync)
      continue;
    for (const SyncEvent *o : outside) {
      if (s->namedId >= 0 && o->namedId >= 0 && s->namedId != o->namedId)
        continue;
      if ((meets(s->threads, a) && meets(o->threads, b)) ||
          (meets(s->threads, b) && meets(o->threads, a)))
        return s;
    }
  }
  return nullptr;
}

void checkNamedBarriers(const BarrierSkeleton &sk, StructuralResult &out) {
  std::map<int64_t, const SyncEvent *> first;
  for (const SyncEvent &e : sk.events) {
    if (e.kind != SyncKind::NamedSync && e.kind != SyncKind::NamedArrive)
      continue;
    if (e.namedThreads <= 0 || e.namedThreads % kThreadsPerWarp != 0 || e.namedThreads > sk.threads)
      out.findings.push_back(
          {ProtocolViolationKind::NamedBarrierThreads,
           e.loc,
           fmt::format("named barrier {} counts {} threads: it must be a positive multiple of 32 "
                       "and at most the CTA's {}",
                       e.namedId, e.namedThreads, sk.threads),
           {},
           false});
    else if (!(e.threads.widened(32) == e.threads))
      out.findings.push_back({ProtocolViolationKind::Divergence,
                              e.loc,
                              fmt::format("divergent barrier: {} is reached by part of a warp ({})",
                                          e.what, e.threads.describe()),
                              {},
                              false});
    auto [it, inserted] = first.emplace(e.namedId, &e);
    if (!inserted && e.namedThreads != it->second->namedThreads)
      out.findings.push_back({ProtocolViolationKind::NamedBarrierThreads,
                              e.loc,
                              fmt::format("named barrier {} counts {} threads here but {} "
                                          "elsewhere",
                                          e.namedId, e.namedThreads, it->second->namedThreads),
                              {{it->second->loc, "first use"}},
                              false});
  }
  NamedBarrierModel model = analyseNamedBarriers(sk);
  for (auto &f : model.findings)
    out.findings.push_back(
        {f.deadlock ? ProtocolViolationKind::Deadlock : ProtocolViolationKind::NamedBarrierThreads,
         f.loc, std::move(f.message), std::move(f.notes), false});
  for (auto &n : model.notProved)
    out.notProved.push_back(std::move(n));
}

} // namespace tilescope
