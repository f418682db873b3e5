#include "verifier/TmemLanes.h"

#include "ir/InstructionRules.h"
#include "ir/ThreadIndex.h"
#include "proof/LeastWitness.h"
#include "proof/ProtoEncoding.h"
#include "proof/QueryDeadline.h"
#include "proof/SharedContext.h"
#include "proof/SolverBudget.h"

#include <fmt/format.h>

#include <map>
#include <optional>

namespace tilescope {
namespace {

using detail::ProtoEncoder;

// The TMEM lane of an element as an affine function of its indices but the
// last (the columns): lane = base + sum of coeff[d] * x[d].
struct LaneMap {
  int64_t base = 0;
  std::vector<int64_t> coeff;
};

// The lane map of a buffer's layout over its shape, checked on every
// element; nothing (with why) when the lane is not such a function.
std::optional<LaneMap> laneMapOf(const Layout &layout, const std::vector<int64_t> &shape,
                                 std::string &why) {
  if (shape.size() < 2) {
    why = "it is not a tile of rank 2 or more (lanes x columns)";
    return std::nullopt;
  }
  int64_t elements = 1;
  for (int64_t e : shape)
    elements *= e;
  if (elements != layout.size() || elements > (int64_t{1} << 24)) {
    why = "its layout does not cover its shape";
    return std::nullopt;
  }
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size() - 1; d-- > 0;)
    stride[d] = stride[d + 1] * shape[d + 1];
  auto laneAt = [&](int64_t flat) { return layout.base(flat).get(Axis::TLane); };
  LaneMap m;
  m.base = laneAt(0);
  m.coeff.assign(shape.size() - 1, 0);
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] > 1)
      m.coeff[d] = laneAt(stride[d]) - m.base;
  for (int64_t flat = 0; flat < elements; ++flat) {
    int64_t want = m.base;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      want += m.coeff[d] * (flat / stride[d] % shape[d]);
    if (laneAt(flat) != want) {
      why = fmt::format("its layout puts element {} on lane {}, not on an affine function of "
                        "the element's row indices",
                        flat, laneAt(flat));
      return std::nullopt;
    }
  }
  return m;
}

struct TmemBuffer {
  std::optional<Layout> layout;
  std::vector<int64_t> shape; // empty when not constant
};

void collectTmemBuffers(const Block &b, std::map<std::string, TmemBuffer> &out) {
  for (const Stmt &s : b) {
    switch (s->kind) {
    case StmtKind::BufferDecl: {
      const BufferDecl &d = as<BufferDecl>(s);
      if (d.scope != MemScope::Tmem)
        break;
      TmemBuffer t;
      if (d.layout)
        t.layout = d.layout->layout;
      for (const Expr &e : d.shape) {
        auto v = constantValue(e);
        if (!v || *v < 1) {
          t.shape.clear();
          break;
        }
        t.shape.push_back(*v);
      }
      out[d.name] = std::move(t);
      break;
    }
    case StmtKind::For:
      collectTmemBuffers(as<For>(s).body, out);
      break;
    case StmtKind::If:
      collectTmemBuffers(as<If>(s).thenBody, out);
      collectTmemBuffers(as<If>(s).elseBody, out);
      break;
    default:
      break;
    }
  }
}

const BuiltinKind kBlock[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                              BuiltinKind::blockIdx_z};

class LaneWindows {
public:
  LaneWindows(const BarrierSkeleton &sk, unsigned timeoutMs, BarrierReport &report)
      : sk_(sk), timeoutMs_(timeoutMs), report_(report), ctx_(detail::sharedContext()),
        enc_(ctx_, sk) {}

  void check(const SyncEvent &e, const MemoryAccess &a, const TmemBuffer &buffer) {
    std::string why;
    std::optional<LaneMap> lanes;
    if (!buffer.layout)
      why = "it has no declared layout";
    else if (buffer.shape.empty())
      why = "its shape is not constant";
    else
      lanes = laneMapOf(*buffer.layout, buffer.shape, why);
    if (lanes && a.region.size() != buffer.shape.size()) {
      lanes.reset();
      why = "the region's rank is not the buffer's";
    }
    if (!lanes) {
      open(e, a, fmt::format("the lanes of {} are not modelled: {}", a.buffer, why));
      return;
    }
    z3::solver s(ctx_);
    z3::params p(ctx_);
    setSolverBudget(p, timeoutMs_);
    s.set(p);
    s.add(enc_.assumptions());
    z3::expr t = enc_.fresh("t");
    auto member = detail::threadSetZ3(e.threads, t);
    if (!member)
      return; // no thread executes it
    s.add(*member);
    std::map<BuiltinKind, z3::expr> builtins;
    for (BuiltinKind b : kThreadBuiltins)
      builtins.emplace(b, detail::threadBuiltinZ3(b, t));
    for (size_t d = 0; d < sk_.grid.size() && d < 3; ++d) {
      auto g = enc_.encode(sk_.grid[d], {});
      if (!g || !g->is_int()) {
        open(e, a, "the grid is not an integer expression of the sizes");
        return;
      }
      z3::expr b = enc_.fresh(std::string(builtinName(kBlock[d])));
      s.add(b >= 0 && b < *g);
      builtins.emplace(kBlock[d], b);
    }
    std::map<std::string, z3::expr> bound;
    std::vector<std::pair<std::string, z3::expr>> loops;
    for (int l : sk_.loopChain(e)) {
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      auto begin = enc_.encode(loop.begin, bound, builtins),
           end = enc_.encode(loop.end, bound, builtins),
           step = enc_.encode(loop.step, bound, builtins);
      if (!begin || !end || !step || !begin->is_int() || !end->is_int() || !step->is_int()) {
        open(e, a, fmt::format("the range of loop {} is not modelled", loop.var));
        return;
      }
      z3::expr v = enc_.fresh(loop.var);
      s.add(*step >= 1 && v >= *begin && v < *end && z3::mod(v - *begin, *step) == 0);
      bound.insert_or_assign(loop.var, v);
      loops.push_back({loop.var, v});
    }
    // A guard Z3 cannot express is left out: more executors than run, so a
    // proof holds, and a witness is not a finding.
    bool allGuards = true;
    for (const Expr &g : e.guards) {
      auto c = enc_.encode(g, bound, builtins);
      if (c && c->is_bool())
        s.add(*c);
      else
        allGuards = false;
    }
    z3::expr lane = ctx_.int_val(lanes->base);
    z3::expr row = ctx_.int_val(0);
    for (size_t d = 0; d + 1 < a.region.size(); ++d) {
      auto lo = enc_.encode(a.region[d].begin, bound, builtins),
           n = enc_.encode(a.region[d].extent, bound, builtins);
      if (!lo || !n || !lo->is_int() || !n->is_int()) {
        open(e, a, fmt::format("dimension {} of its region is not modelled", d));
        return;
      }
      z3::expr x = enc_.fresh("x");
      s.add(x >= *lo && x < *lo + *n);
      lane = lane + ctx_.int_val(lanes->coeff[d]) * x;
      if (d + 2 == a.region.size())
        row = x;
    }
    z3::expr first = ctx_.int_val(kTmemLanesPerSubpartition) *
                     z3::mod(detail::warpOfZ3(t), ctx_.int_val(kTmemSubpartitions));
    s.add(lane < first || lane >= first + ctx_.int_val(kTmemLanesPerSubpartition));
    z3::check_result r = checkWithinBudget(s);
    if (r == z3::unsat) {
      ++proved_;
      return;
    }
    if (r == z3::unknown) {
      open(e, a, fmt::format("Z3 gave up ({})", reasonUnknown(s)));
      return;
    }
    // The least witness: sizes first, then the loops, the thread.
    std::vector<z3::expr> order;
    for (const auto &[name, v] : enc_.symbols())
      order.push_back(v);
    for (const auto &[name, v] : loops)
      order.push_back(v);
    order.push_back(t);
    z3::expr_vector lits(ctx_);
    z3::model m = detail::minimizeWitness(s, lits, order, fmt::format("lanes!{}", witnesses_++));
    int64_t thread = ProtoEncoder::value(m, t), warp = warpOf(thread);
    TmemLaneWindow window = tmemLaneWindowOfWarp(warp);
    std::string at = enc_.describeSymbols(m);
    for (const auto &[name, v] : loops)
      at += fmt::format("{}{} = {}", at.empty() ? "" : ", ", name, ProtoEncoder::text(m, v));
    std::string text = fmt::format(
        "{} by warp {} (thread {}) reaches TMEM lane {} of {} (row {}), but warp {} may access "
        "only lanes {} to {} (its warp index modulo {} picks the quarter){}",
        e.what, warp, thread, ProtoEncoder::text(m, lane), a.buffer, ProtoEncoder::text(m, row),
        warp, window.first, window.first + window.count - 1, kTmemSubpartitions,
        at.empty() ? "" : fmt::format(" (at {})", at));
    if (!allGuards) {
      open(e, a, "a guard the proof cannot express may exclude Z3's witness: " + text);
      return;
    }
    ProtocolFinding f{ProtocolViolationKind::Tcgen05Discipline, e.loc, std::move(text), {}, true};
    report_.findings.push_back(std::move(f));
    ++violated_;
  }

  void summarise() {
    if (proved_ + violated_ + open_ == 0)
      return;
    std::string status = violated_ ? fmt::format("violated ({} access(es))", violated_)
                         : open_   ? "not proved"
                                   : "proved for all sizes";
    report_.results.push_back({"tcgen05.ld / tcgen05.st: TMEM lanes of the warp's subpartition",
                               status, violated_ == 0 && open_ == 0});
  }

private:
  void open(const SyncEvent &e, const MemoryAccess &a, const std::string &why) {
    ++open_;
    report_.notProved.push_back(
        {e.loc, fmt::format("the TMEM lanes {} reaches in {}: {}", e.what, a.buffer, why)});
  }

  const BarrierSkeleton &sk_;
  unsigned timeoutMs_;
  BarrierReport &report_;
  z3::context &ctx_;
  ProtoEncoder enc_;
  int proved_ = 0, violated_ = 0, open_ = 0, witnesses_ = 0;
};

} // namespace

void proveTmemLaneWindows(const Kernel &kernel, const BarrierSkeleton &skeleton, unsigned timeoutMs,
                          BarrierReport &report) {
  std::map<std::string, TmemBuffer> buffers;
  bool any = false;
  for (const SyncEvent &e : skeleton.events)
    any = any || instructionFamilyOf(e.call) == InstructionFamily::TmemAccess;
  if (!any)
    return;
  requireSolverContext();
  collectTmemBuffers(kernel.body, buffers);
  LaneWindows windows(skeleton, timeoutMs, report);
  for (const SyncEvent &e : skeleton.events) {
    if (instructionFamilyOf(e.call) != InstructionFamily::TmemAccess)
      continue;
    for (const MemoryAccess &a : e.accesses) {
      if (a.scope != MemScope::Tmem)
        continue;
      auto it = buffers.find(a.buffer);
      try {
        windows.check(e, a, it == buffers.end() ? TmemBuffer{} : it->second);
      } catch (const z3::exception &x) {
        report.notProved.push_back(
            {e.loc, fmt::format("the TMEM lanes {} reaches in {}: Z3 failed: {}", e.what, a.buffer,
                                x.msg())});
      }
    }
  }
  windows.summarise();
}

} // namespace tilescope
