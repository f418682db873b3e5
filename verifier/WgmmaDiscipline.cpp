// The wgmma discipline of the barrier proofs (BarrierProver.h): per role, in
// program order, which wgmma.mma_async groups may still run, and who touches
// their registers before a wgmma.wait_group retired them.
//
// PTX: until the wait_group that retires its group, the registers of a
// wgmma.mma_async's accumulator and of its A operand (when A is in registers)
// must not be accessed. Another wgmma of the same shape may chain on the
// accumulator (the hardware orders those), and several wgmmas may read the
// same A fragment; a wgmma may not overwrite an in-flight A nor read an
// in-flight accumulator as its A.
//
// Loops: the body is walked again until the state at its head repeats (at
// most kMaxLoopWalks times), so a register rewritten at the top of iteration
// n + 1 while iteration n's group is still in flight (wait_group(1) at the
// end of the body) is found; the state after the loop is the state at the
// end of the last walk (a loop is taken to run at least once).
#include "verifier/BarrierProver.h"

#include "ir/ConcreteEval.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::detail {

namespace {

constexpr int kMaxLoopWalks = 8;

// The registers of the wgmma groups that may still run: the open group
// (issued, not committed), then the committed ones oldest first.
struct WgmmaState {
  bool fenced = false;
  int uncommitted = 0;
  bool pending = false; // committed groups not yet drained by wait_group(0)
  std::set<std::string> open, openA;
  std::vector<std::set<std::string>> inFlight, inFlightA;
  bool operator==(const WgmmaState &) const = default;

  std::set<std::string> accumulators() const { return all(open, inFlight); }
  std::set<std::string> operandsA() const { return all(openA, inFlightA); }

private:
  static std::set<std::string> all(const std::set<std::string> &o,
                                   const std::vector<std::set<std::string>> &groups) {
    std::set<std::string> r = o;
    for (const auto &g : groups)
      r.insert(g.begin(), g.end());
    return r;
  }
};

} // namespace

bool BarrierProver::touchesAny(const SyncEvent &e, const std::set<std::string> &registers) {
  return std::any_of(e.accesses.begin(), e.accesses.end(), [&](const MemoryAccess &a) {
    return a.scope == MemScope::Reg && registers.count(a.buffer);
  });
}

bool BarrierProver::writesAny(const SyncEvent &e, const std::set<std::string> &registers) {
  return std::any_of(e.accesses.begin(), e.accesses.end(), [&](const MemoryAccess &a) {
    return a.write && a.scope == MemScope::Reg && registers.count(a.buffer);
  });
}

void BarrierProver::checkWgmma() {
  for (size_t r = 0; r < sk_.roles.size(); ++r) {
    auto seq = roleSequence(int(r));
    WgmmaState st;
    const SyncEvent *lastMma = nullptr, *lastAMma = nullptr, *lastCommit = nullptr;

    auto step = [&](const SyncEvent *e) {
      std::set<std::string> busy = st.accumulators(), busyA = st.operandsA();
      if (e->kind != SyncKind::WgmmaMma) {
        if (touchesAny(*e, busy))
          finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                  fmt::format("wgmma result read before wait_group: {} by {} touches the "
                              "accumulator of a wgmma.mma_async that may still run (its group "
                              "is not retired by a wgmma.wait_group before this)",
                              e->what, e->threads.describe()),
                  {{lastMma ? lastMma->loc : e->loc, "the wgmma.mma_async writing it"}}, false);
        else if (touchesAny(*e, busyA))
          finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                  fmt::format("wgmma operand touched before wait_group: {} by {} {} the "
                              "registers of the A operand of a wgmma.mma_async that may still "
                              "read them (its group is not retired by a wgmma.wait_group "
                              "before this)",
                              e->what, e->threads.describe(),
                              writesAny(*e, busyA) ? "overwrites" : "reads"),
                  {{lastAMma ? lastAMma->loc : e->loc, "the wgmma.mma_async reading them"}}, false);
      } else {
        for (const MemoryAccess &a : e->accesses) {
          if (a.scope != MemScope::Reg)
            continue;
          if (a.write && busyA.count(a.buffer))
            finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                    fmt::format("wgmma operand touched before wait_group: {} by {} overwrites "
                                "{}, the A operand of a wgmma.mma_async that may still read it",
                                e->what, e->threads.describe(), a.buffer),
                    {{lastAMma ? lastAMma->loc : e->loc, "the wgmma.mma_async reading it"}}, false);
          else if (!a.write && busy.count(a.buffer))
            finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                    fmt::format("wgmma result read before wait_group: {} by {} reads {} as its "
                                "A operand while a wgmma.mma_async that may still run writes it",
                                e->what, e->threads.describe(), a.buffer),
                    {{lastMma ? lastMma->loc : e->loc, "the wgmma.mma_async writing it"}}, false);
        }
      }
      switch (e->kind) {
      case SyncKind::WgmmaFence:
        st.fenced = true;
        break;
      case SyncKind::WgmmaMma:
        if (!st.fenced)
          finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                  fmt::format("wgmma.mma_async by {} without a wgmma.fence before it: the "
                              "accumulator registers may still be written by other instructions",
                              e->threads.describe()),
                  {}, false);
        ++st.uncommitted;
        lastMma = e;
        for (const MemoryAccess &a : e->accesses)
          if (a.scope == MemScope::Reg) {
            (a.write ? st.open : st.openA).insert(a.buffer);
            if (!a.write)
              lastAMma = e;
          }
        break;
      case SyncKind::WgmmaCommit:
        if (st.uncommitted)
          st.pending = true;
        st.uncommitted = 0;
        lastCommit = e;
        st.inFlight.push_back(std::move(st.open));
        st.open.clear();
        st.inFlightA.push_back(std::move(st.openA));
        st.openA.clear();
        break;
      case SyncKind::WgmmaWait: {
        int64_t keep = std::max<int64_t>(constantValue(e->amount).value_or(1), 0);
        while (int64_t(st.inFlight.size()) > keep)
          st.inFlight.erase(st.inFlight.begin());
        while (int64_t(st.inFlightA.size()) > keep)
          st.inFlightA.erase(st.inFlightA.begin());
        if (keep == 0)
          st.pending = false;
        st.fenced = false; // accumulators touched again need a new fence
        break;
      }
      default:
        break;
      }
    };

    // Events [lo, hi) of the role, all inside the loops chain[0 .. depth).
    std::function<void(size_t, size_t, size_t)> walk = [&](size_t lo, size_t hi, size_t depth) {
      for (size_t i = lo; i < hi;) {
        std::vector<int> chain = sk_.loopChain(*seq[i]);
        if (chain.size() <= depth) {
          step(seq[i++]);
          continue;
        }
        int loop = chain[depth];
        size_t end = i;
        while (end < hi) {
          std::vector<int> c = sk_.loopChain(*seq[end]);
          if (c.size() <= depth || c[depth] != loop)
            break;
          ++end;
        }
        std::vector<WgmmaState> heads;
        for (int walks = 0; walks < kMaxLoopWalks; ++walks) {
          if (std::find(heads.begin(), heads.end(), st) != heads.end())
            break;
          heads.push_back(st);
          walk(i, end, depth + 1);
        }
        i = end;
      }
    };
    walk(0, seq.size(), 0);

    if (st.uncommitted && lastMma)
      finding(ProtocolViolationKind::WgmmaDiscipline, lastMma->loc,
              "wgmma.mma_async is never committed (wgmma.commit_group) before its warpgroup ends",
              {}, false);
    else if (st.pending && lastCommit)
      finding(ProtocolViolationKind::WgmmaDiscipline, lastCommit->loc,
              "committed wgmma groups are never waited for (wgmma.wait_group(0)) before the "
              "results are "
              "used at the end of the role",
              {}, false);
  }
}

} // namespace tilescope::detail
