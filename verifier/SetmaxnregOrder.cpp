#include "verifier/SetmaxnregOrder.h"

#include "ir/ConcreteEval.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "ir/WarpShape.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace tilescope {
namespace {

using Lets = std::map<std::string, Expr>;
using Path = std::vector<std::pair<Expr, bool>>; // condition, taken branch

// Per warpgroup: the setmaxnreg it may have executed last with no
// synchronisation of its warps since (nullptr: none).
using State = std::vector<const CallStmt *>;

State join(const State &a, const State &b) {
  State out = a;
  for (size_t g = 0; g < out.size(); ++g)
    if (!out[g])
      out[g] = b[g];
  return out;
}

bool isSetmaxnreg(const CallStmt &c) {
  return idOf(c) == IntrinsicId::SetmaxnregInc || idOf(c) == IntrinsicId::SetmaxnregDec;
}

// A barrier that orders every warp executing it with the others of its CTA
// (or cluster).
bool isCtaBarrier(const CallStmt &c) {
  switch (idOf(c)) {
  case IntrinsicId::Sync:
    return c.scope == ExecScope::Cta || c.scope == ExecScope::Cluster;
  case IntrinsicId::BarrierSync:
  case IntrinsicId::BarrierClusterWait:
    return true;
  default:
    return false;
  }
}

class OrderWalk {
public:
  explicit OrderWalk(const Kernel &k) : threads_(k.launch.threads) {
    state_.assign(size_t(warpgroupsIn(threads_)), nullptr);
  }

  std::vector<ResourceFinding> run(const Block &body) {
    block(body, {});
    // One finding per setmaxnreg, with the warpgroups that reach it
    // unsynchronised.
    std::vector<ResourceFinding> out;
    for (const Unordered &u : unordered_) {
      std::string groups;
      for (size_t g : u.warpgroups)
        groups += fmt::format("{}{}", groups.empty() ? "" : ", ", g);
      std::string what = fmt::format("{}({})", u.call->callee,
                                     u.call->args.empty() ? "" : print(u.call->args[0].value));
      std::string again = u.previous == u.call ? "again on the next iteration of its loop"
                                               : "after an earlier setmaxnreg (the note)";
      out.push_back(
          {u.call->loc,
           fmt::format("resource limit: {} may run in warpgroup{} {} {} with no barrier of all "
                       "the warpgroup's warps in between: PTX requires the warps of a warpgroup "
                       "to synchronise explicitly between two setmaxnreg",
                       what, u.warpgroups.size() == 1 ? "" : "s", groups, again),
           {{u.previous->loc, "the previous setmaxnreg"}}});
    }
    return out;
  }

private:
  // Whether the conditions of the path hold for thread `tx`: true, false, or
  // nothing when one reads something other than thread indices.
  std::optional<bool> runsAt(int64_t tx) const {
    return pathRunsAtThread(path_, tx);
  }

  void block(const Block &b, Lets lets) {
    for (const Stmt &s : b)
      stmt(s, lets);
  }

  void stmt(const Stmt &s, Lets &lets) {
    switch (s->kind) {
    case StmtKind::Let: {
      const auto &l = as<Let>(s);
      lets[l.name] = substitute(l.value, lets);
      return;
    }
    case StmtKind::For: {
      const auto &f = as<For>(s);
      Lets inner = lets;
      inner.erase(f.var);
      State before = state_;
      block(f.body, inner);
      // The back edge: the next iteration starts from what one left (unless
      // the bounds are constants that allow one iteration at most), and the
      // loop may run no iteration at all.
      auto begin = constantValue(substitute(f.begin, lets));
      auto end = constantValue(substitute(f.end, lets));
      auto step = constantValue(substitute(f.step, lets));
      bool once = begin && end && step && *step > 0 && *end - *begin <= *step;
      if (!once) {
        state_ = join(before, state_);
        block(f.body, inner);
      }
      state_ = join(before, state_);
      return;
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      Expr cond = substitute(i.cond, lets);
      State before = state_;
      path_.push_back({cond, true});
      block(i.thenBody, lets);
      State taken = state_;
      state_ = before;
      path_.back().second = false;
      block(i.elseBody, lets);
      path_.pop_back();
      state_ = join(taken, state_);
      return;
    }
    case StmtKind::CallStmt:
      call(as<CallStmt>(s));
      return;
    case StmtKind::BufferDecl:
    case StmtKind::BarrierDecl:
    case StmtKind::Store:
      return;
    }
  }

  void call(const CallStmt &c) {
    if (isCtaBarrier(c)) {
      for (size_t g = 0; g < state_.size(); ++g)
        if (wholeWarpgroupRuns(int64_t(g)))
          state_[g] = nullptr;
      return;
    }
    if (!isSetmaxnreg(c))
      return;
    for (size_t g = 0; g < state_.size(); ++g) {
      // setmaxnreg's conditions are warpgroup-uniform (the type checker):
      // the warpgroup's first thread decides.
      std::optional<bool> runs = runsAt(int64_t(g) * kThreadsPerWarpgroup);
      if (runs && !*runs)
        continue;
      if (const CallStmt *previous = state_[g])
        unordered(c, previous, g);
      state_[g] = &c;
    }
  }

  // Whether every warp of warpgroup `g` surely executes the statement.
  bool wholeWarpgroupRuns(int64_t g) const {
    int64_t first = g * kThreadsPerWarpgroup;
    int64_t last = std::min(threads_, first + kThreadsPerWarpgroup);
    for (int64_t tx = first; tx < last; tx += kThreadsPerWarp) {
      std::optional<bool> runs = runsAt(tx);
      if (!runs || !*runs)
        return false;
    }
    return true;
  }

  // A setmaxnreg that warpgroups may reach while one before it is still
  // unsynchronised.
  struct Unordered {
    const CallStmt *call;
    const CallStmt *previous;
    std::set<size_t> warpgroups;
  };
  void unordered(const CallStmt &c, const CallStmt *previous, size_t g) {
    for (Unordered &u : unordered_)
      if (u.call == &c) {
        u.warpgroups.insert(g);
        return;
      }
    unordered_.push_back({&c, previous, {g}});
  }

  int64_t threads_;
  State state_;
  Path path_;
  std::vector<Unordered> unordered_;
};

} // namespace

std::vector<ResourceFinding> checkSetmaxnregOrder(const Kernel &kernel) {
  return OrderWalk(kernel).run(kernel.body);
}

} // namespace tilescope
