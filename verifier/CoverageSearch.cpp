#include "verifier/CoverageSearch.h"

#include "ir/ConcreteEval.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <array>
#include <functional>
#include <set>

namespace tilescope {

std::optional<bool> forEachWrite(const BarrierSkeleton &sk, const std::vector<StoreRef> &writers,
                                 const std::map<std::string, int64_t> &sizes, size_t rank,
                                 size_t cap, const WriteVisit &visit) {
  size_t steps = 0;
  std::vector<std::pair<int64_t, int64_t>> box(rank);
  auto sizeLeaf = [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = sizes.find(as<Var>(e).name);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  std::array<int64_t, 3> grid{1, 1, 1};
  for (size_t d = 0; d < sk.grid.size() && d < 3; ++d) {
    auto g = evalConcrete(sk.grid[d], sizeLeaf);
    if (!g)
      return std::nullopt;
    grid[d] = *g;
  }
  int64_t cluster = 1;
  int axis = 0;
  if (!sk.cluster.empty()) {
    auto shape = clusterShapeOf(sk);
    if (!shape)
      return std::nullopt;
    cluster = shape->extent;
    axis = shape->axis;
  }
  for (const StoreRef &w : writers) {
    const SyncEvent &ev = *w.event;
    std::vector<int> chain = sk.loopChain(ev);
    std::vector<Expr> guards = ev.allGuards();
    std::vector<int64_t> members;
    for (int64_t t = 0; t < ev.threads.launchThreads(); ++t)
      if (ev.threads.contains(t))
        members.push_back(t);
    std::array<int64_t, 3> cta{0, 0, 0};
    int64_t thread = 0;
    std::map<std::string, int64_t> env;
    bool failed = false;
    LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
      if (e->kind == ExprKind::Var) {
        if (auto it = env.find(as<Var>(e).name); it != env.end())
          return it->second;
        return sizeLeaf(e);
      }
      if (auto m = threadIndexMap(as<Builtin>(e).which))
        return threadIndexValue(*m, thread);
      switch (as<Builtin>(e).which) {
      case BuiltinKind::blockIdx_x:
        return cta[0];
      case BuiltinKind::blockIdx_y:
        return cta[1];
      case BuiltinKind::blockIdx_z:
        return cta[2];
      case BuiltinKind::clusterCtaIdx_x:
      case BuiltinKind::clusterCtaIdx_y:
      case BuiltinKind::clusterCtaIdx_z: {
        int d = int(as<Builtin>(e).which) - int(BuiltinKind::clusterCtaIdx_x);
        return d == axis ? cta[size_t(d)] % cluster : 0;
      }
      default:
        return std::nullopt;
      }
    };
    // Visits every iteration of the loops from `level` on; true when one
    // writes the element.
    std::function<bool(size_t)> loops = [&](size_t level) -> bool {
      if (failed)
        return false;
      if (level == chain.size()) {
        if (++steps > cap) {
          failed = true;
          return false;
        }
        for (const Expr &g : guards) {
          auto v = evalConcrete(g, leaf);
          if (!v) {
            failed = true;
            return false;
          }
          if (!*v)
            return false;
        }
        for (size_t d = 0; d < rank; ++d) {
          auto lo = evalConcrete(w.access->region[d].begin, leaf),
               n = evalConcrete(w.access->region[d].extent, leaf);
          if (!lo || !n) {
            failed = true;
            return false;
          }
          int64_t hi = 0;
          if (__builtin_add_overflow(*lo, *n, &hi)) {
            failed = true;
            return false;
          }
          box[d] = {*lo, hi};
        }
        return visit(box);
      }
      const SkeletonLoop &loop = sk.loops[size_t(chain[level])];
      auto b = evalConcrete(loop.begin, leaf), e = evalConcrete(loop.end, leaf),
           s = evalConcrete(loop.step, leaf);
      if (!b || !e || !s || *s < 1) {
        failed = true;
        return false;
      }
      // A step past the loop's end from v ends the loop (v + step may not
      // fit in 64 bits: `step 9223372036854775807` once wrapped around and
      // ran the loop until the search's cap).
      for (int64_t v = *b; v < *e;) {
        env[loop.var] = v;
        if (loops(level + 1))
          return true;
        if (failed)
          return false;
        if (__builtin_add_overflow(v, *s, &v))
          break;
      }
      env.erase(loop.var);
      return false;
    };
    // Threads matter only where the store reads a thread index.
    bool threadDependent = false;
    auto readsThread = [&](const Expr &e) {
      struct Finder : IRVisitor {
        bool found = false;
        void visitBuiltin(const Builtin &b) override {
          found =
              found || (b.which != BuiltinKind::blockIdx_x && b.which != BuiltinKind::blockIdx_y &&
                        b.which != BuiltinKind::blockIdx_z);
        }
      } f;
      f.visit(e);
      return f.found;
    };
    for (const RegionDim &r : w.access->region)
      threadDependent = threadDependent || readsThread(r.begin) || readsThread(r.extent);
    for (const Expr &g : guards)
      threadDependent = threadDependent || readsThread(g);
    if (!threadDependent && !members.empty())
      members.resize(1);
    for (cta[2] = 0; cta[2] < grid[2]; ++cta[2])
      for (cta[1] = 0; cta[1] < grid[1]; ++cta[1])
        for (cta[0] = 0; cta[0] < grid[0]; ++cta[0])
          for (int64_t t : members) {
            thread = t;
            if (loops(0))
              return true;
            if (failed)
              return std::nullopt;
          }
  }
  return false;
}

} // namespace tilescope
