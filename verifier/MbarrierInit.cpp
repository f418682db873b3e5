// mbarrier initialisation, element by element (StructuralChecks.h).
//
// `mbarrier.init(full[0])` then `mbarrier.init(full[1])` initialise two
// barriers, not one barrier twice: every rule is asked per element of the
// array. The elements an init touches are evaluated for each thread that
// issues it and each iteration of the loops around it (constant bounds), so
// `for s in 0 .. 4 { mbarrier.init(full[s], ...) }` and
// `if threadIdx.x < 4 { mbarrier.init(full[threadIdx.x], ...) }` are one
// init per element, while a loop or a thread set that reaches one element
// twice is a re-init. An index that cannot be evaluated (a size, a load)
// leaves the barrier not proved.
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/ThreadUniformity.h"
#include "verifier/StructuralChecks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tilescope {

namespace {

// One execution of an event: the element it touches, by which thread, at
// which values of its loop variables (outermost first).
struct Execution {
  int64_t element = 0;
  int64_t thread = 0;
  std::vector<int64_t> iteration;
};

// Every execution of e, or the reason they cannot be enumerated.
struct Executions {
  std::vector<Execution> all;
  std::string unknown; // empty when `all` is exact
};

constexpr int64_t kMaxExecutions = 1 << 16;

Executions executionsOf(const BarrierSkeleton &sk, const SyncEvent &e) {
  Executions out;
  std::vector<int> chain = sk.loopChain(e);
  // Issuing threads: each thread, or the first of each group of a scoped call.
  int64_t group = e.scope == ExecScope::Thread      ? 1
                  : e.scope == ExecScope::Warp      ? 32
                  : e.scope == ExecScope::Warpgroup ? 128
                                                    : sk.threads;
  std::vector<int64_t> issuers;
  for (int64_t t = 0; t < sk.threads; ++t)
    if (e.threads.contains(t) && (group == 1 || t % group == 0 || !e.threads.contains(t - 1)))
      issuers.push_back(t);
  std::map<std::string, int64_t> vars;
  std::vector<int64_t> iteration;
  int64_t thread = 0;
  auto leaf = [&](const Expr &x) -> std::optional<int64_t> {
    if (x->kind == ExprKind::Var) {
      auto it = vars.find(as<Var>(x).name);
      return it == vars.end() ? std::nullopt : std::optional<int64_t>(it->second);
    }
    if (x->kind == ExprKind::Builtin && isThreadBuiltin(as<Builtin>(x).which))
      return threadBuiltinValue(as<Builtin>(x).which, thread);
    return std::nullopt;
  };
  auto fail = [&](std::string why) {
    if (out.unknown.empty())
      out.unknown = std::move(why);
  };
  // Depth-first over the loop nest, then the issuing threads.
  std::function<void(size_t)> level = [&](size_t depth) {
    if (!out.unknown.empty())
      return;
    if (depth == chain.size()) {
      for (int64_t t : issuers) {
        thread = t;
        bool runs = true;
        for (const Expr &g : e.guards) {
          auto v = evalConcrete(g, leaf);
          if (!v)
            return fail(fmt::format("its condition '{}' is not a constant of the thread and the "
                                    "loop iteration",
                                    print(g)));
          runs = runs && *v != 0;
        }
        if (!runs)
          continue;
        auto index = evalConcrete(e.barrier.index, leaf);
        if (!index)
          return fail(fmt::format("its index '{}' is not a constant of the thread and the loop "
                                  "iteration",
                                  print(e.barrier.index)));
        if (int64_t(out.all.size()) >= kMaxExecutions)
          return fail(fmt::format("it runs more than {} times", kMaxExecutions));
        out.all.push_back({*index, t, iteration});
      }
      return;
    }
    const SkeletonLoop &loop = sk.loops[size_t(chain[depth])];
    thread = issuers.empty() ? 0 : issuers.front();
    auto begin = evalConcrete(loop.begin, leaf), end = evalConcrete(loop.end, leaf),
         step = evalConcrete(loop.step, leaf);
    if (!begin || !end || !step || *step <= 0)
      return fail(fmt::format("the bounds of its loop over {} are not constants", loop.var));
    // end - begin and v + step may not fit in 64 bits (huge bounds or
    // steps): counted without overflow, and a step past the end ends the loop.
    int64_t span = 0;
    if (*end > *begin &&
        (__builtin_sub_overflow(*end, *begin, &span) || span / *step > kMaxExecutions))
      return fail(
          fmt::format("its loop over {} runs more than {} times", loop.var, kMaxExecutions));
    for (int64_t v = *begin; v < *end && out.unknown.empty();) {
      vars[loop.var] = v;
      iteration.push_back(v);
      level(depth + 1);
      iteration.pop_back();
      if (__builtin_add_overflow(v, *step, &v))
        break;
    }
    vars.erase(loop.var);
  };
  level(0);
  return out;
}

std::string elementName(const BarrierArray &arr, int64_t element) {
  return arr.size == 1 ? arr.name : fmt::format("{}[{}]", arr.name, element);
}

std::string iterationText(const BarrierSkeleton &sk, const SyncEvent &e,
                          const std::vector<int64_t> &iteration) {
  std::vector<int> chain = sk.loopChain(e);
  std::string out;
  for (size_t m = 0; m < chain.size() && m < iteration.size(); ++m)
    out += fmt::format("{}{} = {}", m ? ", " : "", sk.loops[size_t(chain[m])].var, iteration[m]);
  return out;
}

class InitChecker {
public:
  InitChecker(const BarrierSkeleton &sk, StructuralResult &out) : sk_(sk), out_(out) {}

  void run() {
    for (const auto &[name, arr] : sk_.barriers)
      checkArray(arr);
  }

private:
  void finding(ProtocolViolationKind kind, llvm::SMLoc loc, std::string message,
               std::vector<std::pair<llvm::SMLoc, std::string>> notes = {}) {
    for (const ProtocolFinding &f : out_.findings)
      if (f.kind == kind && f.loc == loc)
        return;
    out_.findings.push_back({kind, loc, std::move(message), std::move(notes), false});
  }

  void checkArray(const BarrierArray &arr) {
    const std::string &name = arr.name;
    std::vector<const SyncEvent *> inits, invals, uses;
    for (const SyncEvent &e : sk_.events)
      if (e.barrier.array == name)
        (e.kind == SyncKind::MbarInit    ? inits
         : e.kind == SyncKind::MbarInval ? invals
                                         : uses)
            .push_back(&e);
    if (arr.count) {
      for (const SyncEvent *i : inits)
        finding(ProtocolViolationKind::InitOrder, i->loc,
                fmt::format("re-init of a live barrier: {} is initialised with count {} by its "
                            "declaration, and initialised again here",
                            name, *arr.count),
                {{arr.loc, "declared here"}});
      return;
    }
    if (inits.empty()) {
      if (!uses.empty())
        finding(ProtocolViolationKind::InitOrder, uses.front()->loc,
                fmt::format("{} is used but never initialised (declare it with a count or call "
                            "mbarrier.init)",
                            name),
                {{arr.loc, "declared here"}});
      return;
    }
    // Which element each init and inval touches, per execution.
    std::map<const SyncEvent *, Executions> runs;
    for (const SyncEvent *e : inits) {
      runs[e] = executionsOf(sk_, *e);
      if (!runs[e].unknown.empty()) {
        out_.notProved.push_back(
            {e->loc, fmt::format("mbarrier init of {}: which element {} initialises is not "
                                 "known: {}",
                                 name, e->what, runs[e].unknown)});
        return;
      }
    }
    for (const SyncEvent *e : invals) {
      runs[e] = executionsOf(sk_, *e);
      if (!runs[e].unknown.empty()) {
        out_.notProved.push_back(
            {e->loc, fmt::format("mbarrier init of {}: which element {} invalidates is not "
                                 "known: {}",
                                 name, e->what, runs[e].unknown)});
        return;
      }
    }
    // Per element, its inits in program order (an event's executions in
    // iteration order).
    std::map<int64_t, std::vector<std::pair<const SyncEvent *, const Execution *>>> byElement;
    for (const SyncEvent *e : inits)
      for (const Execution &x : runs[e].all) {
        if (x.element < 0 || x.element >= arr.size) {
          finding(ProtocolViolationKind::IndexOutOfRange, e->loc,
                  fmt::format("barrier index out of range: {} initialises {}[{}] (thread {}{}), "
                              "but {} has {} element{}",
                              e->what, name, x.element, x.thread,
                              x.iteration.empty() ? "" : ", " + iterationText(sk_, *e, x.iteration),
                              name, arr.size, arr.size == 1 ? "" : "s"));
          return;
        }
        byElement[x.element].push_back({e, &x});
      }
    for (auto &[element, list] : byElement)
      checkReinit(arr, element, list, runs);
    checkUncovered(arr, byElement, uses);
    checkVisibility(arr, byElement, uses);
  }

  void checkReinit(const BarrierArray &arr, int64_t element,
                   const std::vector<std::pair<const SyncEvent *, const Execution *>> &list,
                   std::map<const SyncEvent *, Executions> &runs) {
    std::string what = elementName(arr, element);
    for (size_t k = 1; k < list.size(); ++k) {
      const auto &[prevEvent, prev] = list[k - 1];
      const auto &[event, x] = list[k];
      if (event == prevEvent && x->iteration == prev->iteration) {
        int64_t threads = 0;
        for (const auto &[e, y] : list)
          threads += e == event && y->iteration == x->iteration;
        finding(ProtocolViolationKind::InitOrder, event->loc,
                fmt::format("{} is initialised by {} threads ({}); one thread must initialise it",
                            what, threads, event->threads.describe()));
        return;
      }
      if (event == prevEvent) {
        finding(ProtocolViolationKind::InitOrder, event->loc,
                fmt::format("mbarrier.init of {} inside a loop re-initialises a live barrier: "
                            "{} is initialised at {} and again at {}",
                            arr.name, what, iterationText(sk_, *event, prev->iteration),
                            iterationText(sk_, *event, x->iteration)));
        return;
      }
      bool invalidated = false;
      for (const auto &[e, r] : runs)
        if (e->kind == SyncKind::MbarInval && e->order > prevEvent->order &&
            e->order < event->order)
          for (const Execution &y : r.all)
            invalidated = invalidated || y.element == element;
      if (!invalidated) {
        finding(ProtocolViolationKind::InitOrder, event->loc,
                fmt::format("re-init of a live barrier: {} was initialised before and not "
                            "invalidated",
                            what),
                {{prevEvent->loc, "first initialised here"}});
        return;
      }
    }
  }

  // Elements no init reaches.
  void checkUncovered(
      const BarrierArray &arr,
      const std::map<int64_t, std::vector<std::pair<const SyncEvent *, const Execution *>>> &by,
      const std::vector<const SyncEvent *> &uses) {
    for (int64_t element = 0; element < arr.size; ++element) {
      if (by.count(element))
        continue;
      for (const SyncEvent *u : uses) {
        auto c = constantValue(u->barrier.index);
        if (c && *c == element) {
          finding(ProtocolViolationKind::InitOrder, u->loc,
                  fmt::format("{} is used but never initialised (no mbarrier.init reaches it)",
                              elementName(arr, element)));
          return;
        }
        if (!c) {
          out_.notProved.push_back(
              {u->loc,
               fmt::format("mbarrier init of {}: no mbarrier.init reaches {}, and {} "
                           "(index '{}') may use it",
                           arr.name, elementName(arr, element), u->what, print(u->barrier.index))});
          return;
        }
      }
    }
  }

  // Each element's first init: made visible to the other threads before
  // they use the element, and not preceded by a use.
  void checkVisibility(
      const BarrierArray &arr,
      const std::map<int64_t, std::vector<std::pair<const SyncEvent *, const Execution *>>> &by,
      const std::vector<const SyncEvent *> &uses) {
    std::map<const SyncEvent *, std::vector<int64_t>> firstInits;
    for (const auto &[element, list] : by)
      firstInits[list.front().first].push_back(element);
    for (const auto &[init, elements] : firstInits) {
      const SyncEvent *fence = nullptr, *sync = nullptr;
      for (const SyncEvent &e : sk_.events) {
        if (!fence && e.order > init->order &&
            (e.kind == SyncKind::FenceMbarrierInit || e.kind == SyncKind::FenceProxyAsync) &&
            init->threads.subsetOf(coverOf(e)))
          fence = &e;
        if (fence && !sync && e.order > fence->order && e.kind == SyncKind::CtaSync)
          sync = &e;
      }
      std::string what =
          elements.size() == size_t(arr.size) ? arr.name : elementName(arr, elements.front());
      for (const SyncEvent *u : uses) {
        auto c = constantValue(u->barrier.index);
        bool touches = !c || std::count(elements.begin(), elements.end(), *c);
        if (!touches)
          continue;
        std::string usedName = c ? elementName(arr, *c) : what;
        bool before = u->order < init->order;
        bool invisible = !u->threads.subsetOf(init->threads) && (!sync || u->order < sync->order);
        if ((before || invisible) && !c) {
          out_.notProved.push_back(
              {u->loc, fmt::format("mbarrier init of {}: {} (index '{}') may use {} before its "
                                   "init is made visible",
                                   arr.name, u->what, print(u->barrier.index), what)});
          break;
        }
        if (before) {
          finding(ProtocolViolationKind::InitOrder, u->loc,
                  fmt::format("{} is used before its mbarrier.init", usedName),
                  {{init->loc, "initialised here"}});
          break;
        }
        if (invisible) {
          finding(ProtocolViolationKind::InitOrder, u->loc,
                  fmt::format("the init of {} is not made visible before {} ({}) uses it: it "
                              "needs fence.mbarrier_init by the initialising thread{} and then "
                              "cta.sync",
                              usedName, u->threads.describe(), u->what,
                              init->threads.count() > 1 ? "s" : ""),
                  {{init->loc, "initialised here"}});
          break;
        }
      }
    }
  }

  const BarrierSkeleton &sk_;
  StructuralResult &out_;
};

} // namespace

void checkMbarrierInits(const BarrierSkeleton &sk, StructuralResult &out) {
  InitChecker(sk, out).run();
}

} // namespace tilescope
