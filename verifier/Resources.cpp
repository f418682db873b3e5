#include "verifier/Resources.h"

#include "ir/ConcreteEval.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/SizeLimits.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "verifier/SetmaxnregOrder.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

namespace tilescope {

namespace {

// What an SM holds for all its resident CTAs (CUDA programming guide,
// "Technical Specifications per Compute Capability": 8.0, 9.0, 10.0). The
// per-CTA limits are TargetInfo's (ir/Target.h).
struct SmLimits {
  int64_t registers = 65536;
  int64_t sharedBytes = 228 * 1024;
  int64_t reservedSharedPerCta = 1024; // the system's share of each CTA
  int64_t maxThreads = 2048;
  int64_t maxCtas = 32;
  int64_t maxWarps = 64;
};
SmLimits smLimits(TargetKind t) {
  SmLimits sm;
  if (t == TargetKind::sm_80)
    sm.sharedBytes = 164 * 1024;
  return sm;
}

// The registers per thread ptxas may use under __launch_bounds__(threads,
// ctas) (codegen adds a minimum of one CTA per SM where setmaxnreg is used,
// `ctas` where the launch says ctas_per_sm): the SM's registers over the
// warps of `ctas` CTAs, in the allocation unit of 8 registers per thread, at
// most 255.
int64_t launchRegisters(int64_t threads, const TargetInfo &target, int64_t ctas = 1) {
  int64_t warps = warpsIn(threads);
  if (warps <= 0) // no threads: the checker reports the launch; nothing to divide
    return target.registersPerThread;
  int64_t perThread = 65536 / (warps * 32 * std::max<int64_t>(1, ctas)) / 8 * 8;
  return std::min(perThread, target.registersPerThread);
}
int64_t allocated(int64_t registers) { // per thread, in units of 8
  return (registers + 7) / 8 * 8;
}

std::string bytesText(int64_t bytes) {
  return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes / 1024)
                           : fmt::format("{:.1f} KiB", double(bytes) / 1024);
}

std::string rangeText(const IntRange &r, int64_t clusterSize) {
  if (r.launch == IntRange::ClusterRank)
    return fmt::format("a CTA rank of the cluster, in [0, {}]", clusterSize - 1);
  if (r.launch == IntRange::ClusterMask)
    return fmt::format("a mask of the cluster's {} CTA{}, in [1, {}]", clusterSize,
                       clusterSize == 1 ? "" : "s", (int64_t{1} << clusterSize) - 1);
  std::string what = r.powerOfTwo        ? "a power of two"
                     : r.multipleOf != 1 ? fmt::format("a multiple of {}", r.multipleOf)
                                         : "a value";
  if (r.max == INT64_MAX)
    return fmt::format("{} of at least {}", what, r.min);
  return fmt::format("{} in [{}, {}]", what, r.min, r.max);
}

bool inRange(const IntRange &r, int64_t v, int64_t clusterSize) {
  if (r.launch == IntRange::ClusterRank)
    return v >= 0 && v < clusterSize;
  if (r.launch == IntRange::ClusterMask)
    return v >= 1 && v < (int64_t{1} << clusterSize);
  return v >= r.min && v <= r.max && v % r.multipleOf == 0 &&
         (!r.powerOfTwo || (v > 0 && std::has_single_bit(uint64_t(v))));
}

// A setmaxnreg and the conditions of the ifs around it.
struct RegisterRequest {
  const CallStmt *call;
  bool inc;
  int64_t count;
  std::vector<std::pair<Expr, bool>> path; // condition, taken branch
};

class ResourceWalk {
public:
  explicit ResourceWalk(const Kernel &k)
      : k_(k), target_(targetInfo(k.launch.target)), threads_(k.launch.threads) {
    for (const Expr &c : k.launch.cluster)
      clusterSize_ *= constantValue(c).value_or(1);
  }

  ResourceReport run() {
    block(k_.body, {});
    ResourceReport r;
    r.summary.threads = threads_;
    r.summary.clusterSize = clusterSize_;
    sharedMemory(r);
    registers(r);
    tensorMemory(r);
    occupancy(r.summary);
    // Only a launch that asks for several: one that fits no CTA at all has
    // its own finding (shared memory, registers) already.
    if (k_.launch.ctasPerSm > 1 && k_.launch.ctasPerSm > r.summary.ctasPerSm)
      finding(k_.launch.loc,
              fmt::format("resource limit: ctas_per_sm({}), but an SM holds {} CTA{} of this "
                          "kernel (limited by {})",
                          k_.launch.ctasPerSm, r.summary.ctasPerSm,
                          r.summary.ctasPerSm == 1 ? "" : "s", r.summary.limitedBy));
    for (ResourceFinding &f : checkSetmaxnregOrder(k_))
      findings_.push_back(std::move(f));
    r.findings = std::move(findings_);
    return r;
  }

private:
  using Lets = std::map<std::string, Expr>;

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
      // The body runs only when the loop does: a setmaxnreg in it counts as
      // one that may not run unless the bounds say the loop runs.
      path_.push_back(
          {Binary::make(BinaryOp::Lt, substitute(f.begin, lets), substitute(f.end, lets)), true});
      Lets inner = lets;
      inner.erase(f.var);
      block(f.body, inner);
      path_.pop_back();
      return;
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      Expr cond = substitute(i.cond, lets);
      path_.push_back({cond, true});
      block(i.thenBody, lets);
      path_.back().second = false;
      block(i.elseBody, lets);
      path_.pop_back();
      return;
    }
    case StmtKind::BufferDecl:
      decls_.push_back(s.get());
      return;
    case StmtKind::BarrierDecl:
      decls_.push_back(s.get());
      return;
    case StmtKind::CallStmt:
      call(as<CallStmt>(s), lets);
      return;
    case StmtKind::Store:
      return;
    }
  }

  void call(const CallStmt &c, const Lets &lets) {
    const IntrinsicInfo *info = findIntrinsic(c.callee);
    if (!info)
      return;
    size_t positional = 0;
    for (const CallArg &a : c.args) {
      const ParamSpec *spec = nullptr;
      if (a.keyword.empty()) {
        if (positional < info->positional.size())
          spec = &info->positional[positional];
        ++positional;
      } else {
        for (const ParamSpec &k : info->keywords)
          if (k.name == a.keyword)
            spec = &k;
      }
      if (spec && spec->kind == ArgKind::Int && spec->range.constrained())
        operand(c, a, *spec, lets);
    }
    if (idOf(c) == IntrinsicId::SetmaxnregInc || idOf(c) == IntrinsicId::SetmaxnregDec) {
      const CallArg *n = c.args.empty() ? nullptr : &c.args[0];
      if (auto v = n ? constantValue(substitute(n->value, lets)) : std::nullopt)
        if (inRange(info->positional[0].range, *v, clusterSize_))
          requests_.push_back({&c, idOf(c) == IntrinsicId::SetmaxnregInc, *v, path_});
    }
    if (idOf(c) == IntrinsicId::Tcgen05Alloc || idOf(c) == IntrinsicId::Tcgen05Dealloc)
      tmemCalls_.push_back({&c, lets});
  }

  void operand(const CallStmt &c, const CallArg &a, const ParamSpec &spec, const Lets &lets) {
    auto v = constantValue(substitute(a.value, lets));
    if (!v) {
      if (spec.range.immediate)
        finding(a.value->loc,
                fmt::format("operand range: argument '{}' of '{}' must be a constant (PTX takes "
                            "it as an immediate)",
                            spec.name, c.callee));
      return;
    }
    if (!inRange(spec.range, *v, clusterSize_))
      finding(a.value->loc,
              fmt::format("operand range: argument '{}' of '{}' must be {}, not {}", spec.name,
                          c.callee, rangeText(spec.range, clusterSize_), *v));
  }

  void finding(llvm::SMLoc loc, std::string message,
               std::vector<std::pair<llvm::SMLoc, std::string>> notes = {}) {
    findings_.push_back({loc, std::move(message), std::move(notes)});
  }

  // Shared memory as codegen/CudaEmitter.cpp lays it out.
  void sharedMemory(ResourceReport &r) {
    int64_t bytes = 0;
    std::vector<std::pair<llvm::SMLoc, std::string>> parts;
    const StmtNode *crossing = nullptr;
    int64_t usable = target_.sharedBytesPerCta - 1024; // the base is aligned to 1024 at run time
    for (const StmtNode *s : decls_) {
      int64_t take = 0, align = 1;
      std::string name;
      if (s->kind == StmtKind::BarrierDecl) {
        const auto &b = static_cast<const BarrierDecl &>(*s);
        int64_t n = b.arraySize ? constantValue(b.arraySize).value_or(1) : 1;
        take = n * limits::kMbarrierBytes;
        align = 8;
        name = b.name;
      } else {
        const auto &b = static_cast<const BufferDecl &>(*s);
        name = b.name;
        if (b.scope == MemScope::Tmem) {
          take = 16, align = 16; // the address tcgen05.alloc writes
        } else if (b.scope == MemScope::Shared) {
          std::vector<int64_t> shape;
          for (const Expr &d : b.shape)
            shape.push_back(constantValue(d).value_or(1));
          auto f = bufferFootprint(b.scope, b.dtype, shape, b.layout ? &b.layout->layout : nullptr);
          take = f ? f->sharedBytes : INT64_MAX / 4;
          align = 1024;
        }
      }
      if (take == 0)
        continue;
      bytes = std::min(INT64_MAX / 4, (bytes + align - 1) / align * align + take);
      parts.push_back({s->loc, fmt::format("'{}' takes {} bytes", name, take)});
      if (!crossing && bytes > usable)
        crossing = s;
    }
    r.summary.sharedBytes = bytes == 0 ? 0 : bytes + 1024;
    if (crossing)
      finding(crossing->loc,
              fmt::format("resource limit: shared memory: the CTA needs {} bytes ({} of buffers "
                          "and mbarriers, aligned as lowered, plus 1024 to align the base); {} "
                          "has {} bytes ({}) per CTA",
                          r.summary.sharedBytes, bytes, target_.name, target_.sharedBytesPerCta,
                          bytesText(target_.sharedBytesPerCta)),
              parts);
  }

  // Whether every condition of `path` holds for the threads of warpgroup
  // `wg` (the checker made setmaxnreg's conditions warpgroup-uniform, so its
  // first thread decides): true, false, or nothing when a condition reads
  // something other than thread indices.
  std::optional<bool> runsIn(const std::vector<std::pair<Expr, bool>> &path, int64_t wg) const {
    int64_t tx = wg * 128;
    return pathRunsAtThread(path, tx);
  }

  void registers(ResourceReport &r) {
    ResourceSummary &s = r.summary;
    int64_t warpgroups = warpgroupsIn(threads_);
    int64_t launch = launchRegisters(threads_, target_, k_.launch.ctasPerSm);
    s.setmaxnreg = !requests_.empty();
    if (!s.setmaxnreg) {
      // Without setmaxnreg ptxas chooses; estimate the register tiles plus
      // addresses and indices, within the launch's bound.
      int64_t tiles = 0;
      for (const StmtNode *d : decls_)
        if (d->kind == StmtKind::BufferDecl) {
          const auto &b = static_cast<const BufferDecl &>(*d);
          if (b.scope != MemScope::Reg)
            continue;
          std::vector<int64_t> shape;
          for (const Expr &e : b.shape)
            shape.push_back(constantValue(e).value_or(1));
          if (auto f =
                  bufferFootprint(b.scope, b.dtype, shape, b.layout ? &b.layout->layout : nullptr))
            tiles = std::min<int64_t>(tiles + f->registersPerThread, 1 << 20);
        }
      s.registersPerThread = std::min(launch, allocated(tiles + 32));
      s.registersPerWarpgroup.assign(size_t(warpgroups), s.registersPerThread);
      s.registersPerCta = allocated(s.registersPerThread) * (warpsIn(threads_) * kThreadsPerWarp);
      return;
    }
    // Each warpgroup starts with the launch's count; its setmaxnreg calls in
    // program order set it. One that may or may not run (a condition over
    // sizes or loop variables) counts with the larger of the two.
    struct State {
      int64_t count;
      const CallStmt *setBy = nullptr;
    };
    std::vector<State> wg(size_t(warpgroups), State{launch, nullptr});
    const RegisterRequest *largestInc = nullptr;
    for (const RegisterRequest &q : requests_) {
      if (q.inc && (!largestInc || q.count > largestInc->count))
        largestInc = &q;
      for (int64_t g = 0; g < warpgroups; ++g) {
        auto runs = runsIn(q.path, g);
        State &st = wg[size_t(g)];
        if (runs && !*runs)
          continue;
        if (runs && q.inc && q.count < st.count)
          finding(q.call->loc,
                  fmt::format("resource limit: setmaxnreg.inc({}) in warpgroup {}, which already "
                              "has {} registers per thread: .inc must not lower the count",
                              q.count, g, st.count));
        if (runs && !q.inc && q.count > st.count)
          finding(q.call->loc,
                  fmt::format("resource limit: setmaxnreg.dec({}) in warpgroup {}, which has only "
                              "{} registers per thread: .dec must not raise the count",
                              q.count, g, st.count));
        st.count = runs ? q.count : std::max(st.count, q.count);
        st.setBy = q.call;
      }
    }
    int64_t pool = allocated(launch) * (warpsIn(threads_) * kThreadsPerWarp);
    int64_t demand = 0;
    std::string shares;
    std::vector<std::pair<llvm::SMLoc, std::string>> notes;
    for (int64_t g = 0; g < warpgroups; ++g) {
      int64_t t = std::min<int64_t>(kThreadsPerWarpgroup, threads_ - g * kThreadsPerWarpgroup);
      demand += allocated(wg[size_t(g)].count) * (warpsIn(t) * kThreadsPerWarp);
      s.registersPerWarpgroup.push_back(wg[size_t(g)].count);
      s.registersPerThread = std::max(s.registersPerThread, wg[size_t(g)].count);
      shares += fmt::format("{}{} x {}", g ? " + " : "", wg[size_t(g)].count, t);
      if (wg[size_t(g)].setBy)
        notes.push_back({wg[size_t(g)].setBy->loc,
                         fmt::format("warpgroup {} ends with {} registers per thread here", g,
                                     wg[size_t(g)].count)});
    }
    s.registersPerCta = std::max(pool, demand);
    if (demand > pool && largestInc)
      finding(largestInc->call->loc,
              fmt::format("resource limit: registers: after setmaxnreg the warpgroups hold {} = "
                          "{} registers, but the CTA's pool has {} ({} per thread at launch x {} "
                          "threads; the SM has {}): setmaxnreg.inc blocks until registers are "
                          "free, a hang",
                          shares, demand, pool, launch, threads_,
                          smLimits(k_.launch.target).registers),
              notes);
  }

  void tensorMemory(ResourceReport &r) {
    std::map<std::string, int64_t> live;
    int64_t columns = 0, most = 0;
    bool reported = false;
    for (const auto &[c, lets] : tmemCalls_) {
      std::string buffer = c->args.empty() ? "" : print(c->args[0].value);
      if (idOf(*c) == IntrinsicId::Tcgen05Dealloc) {
        if (auto it = live.find(buffer); it != live.end()) {
          columns -= it->second;
          live.erase(it);
        }
        continue;
      }
      int64_t cols = 0;
      if (const CallArg *a = c->keyword("cols")) {
        cols = constantValue(substitute(a->value, lets)).value_or(0);
        // The allocation must hold the buffer: its layout's columns past the
        // allocation are outside it (the MMA and tcgen05.ld/st would reach
        // columns another allocation may own).
        int64_t need = columnsOf(buffer, false);
        if (cols > 0 && need > cols)
          finding(c->loc, fmt::format("resource limit: tensor memory: tcgen05.alloc of {} columns "
                                      "for '{}', whose layout spans {} columns: its columns {} "
                                      "to {} are outside the allocation",
                                      cols, buffer, need, cols, need - 1));
      } else {
        cols = columnsOf(buffer);
      }
      if (cols <= 0)
        continue;
      live[buffer] += cols;
      columns += cols;
      most = std::max(most, columns);
      if (columns > target_.tmemColumns && !reported) {
        reported = true;
        finding(c->loc, fmt::format("resource limit: tensor memory: this tcgen05.alloc brings the "
                                    "CTA's allocated columns to {}; {} has {}, and tcgen05.alloc "
                                    "blocks until columns are free (a hang)",
                                    columns, target_.name, target_.tmemColumns));
      }
    }
    r.summary.tmemColumns = most;
  }

  // Columns an alloc without `cols` takes: the buffer's, as a power of two of at least 32
  // (or, with `rounded` false, the columns its layout spans).
  int64_t columnsOf(const std::string &buffer, bool rounded = true) const {
    for (const StmtNode *d : decls_)
      if (d->kind == StmtKind::BufferDecl) {
        const auto &b = static_cast<const BufferDecl &>(*d);
        if (b.name != buffer || b.scope != MemScope::Tmem)
          continue;
        std::vector<int64_t> shape;
        for (const Expr &e : b.shape)
          shape.push_back(constantValue(e).value_or(1));
        auto f = bufferFootprint(b.scope, b.dtype, shape, b.layout ? &b.layout->layout : nullptr);
        if (!f)
          return 0;
        if (!rounded)
          return f->tmemColumns;
        return int64_t(std::bit_ceil(uint64_t(std::clamp<int64_t>(f->tmemColumns, 32, 1 << 20))));
      }
    return 0;
  }

  void occupancy(ResourceSummary &s) const {
    SmLimits sm = smLimits(k_.launch.target);
    int64_t warps = warpsIn(threads_);
    std::vector<std::pair<int64_t, std::string>> bounds = {
        {sm.maxCtas, "CTA slots"},
        {sm.maxThreads / std::max<int64_t>(1, warps * 32), "threads"},
        {sm.registers / std::max<int64_t>(1, s.registersPerCta), "registers"},
    };
    if (s.sharedBytes > 0)
      bounds.push_back(
          {sm.sharedBytes / (s.sharedBytes + sm.reservedSharedPerCta), "shared memory"});
    if (s.tmemColumns > 0)
      bounds.push_back({target_.tmemColumns / s.tmemColumns, "tensor memory"});
    auto least = std::min_element(bounds.begin(), bounds.end(),
                                  [](const auto &a, const auto &b) { return a.first < b.first; });
    s.ctasPerSm = std::max<int64_t>(0, least->first);
    s.limitedBy = least->second;
    s.maxWarpsPerSm = sm.maxWarps;
    s.warpsPerSm = s.ctasPerSm * warps;
  }

  const Kernel &k_;
  const TargetInfo &target_;
  int64_t threads_;
  int64_t clusterSize_ = 1;
  std::vector<std::pair<Expr, bool>> path_;
  std::vector<const StmtNode *> decls_;
  std::vector<RegisterRequest> requests_;
  std::vector<std::pair<const CallStmt *, Lets>> tmemCalls_;
  std::vector<ResourceFinding> findings_;
};

} // namespace

std::string ResourceSummary::str() const {
  std::string regs = fmt::format("{} registers/thread", registersPerThread);
  if (setmaxnreg) {
    std::string each;
    for (int64_t r : registersPerWarpgroup)
      each += fmt::format("{}{}", each.empty() ? "" : ", ", r);
    regs += " (setmaxnreg: " + each + ")";
  } else {
    regs += " (estimate)";
  }
  return fmt::format("shared {} ({} bytes), {}, tensor memory {} columns, {} threads, {} CTA{}/SM "
                     "(limited by {}), occupancy {}/{} warps",
                     bytesText(sharedBytes), sharedBytes, regs, tmemColumns, threads, ctasPerSm,
                     ctasPerSm == 1 ? "" : "s", limitedBy, warpsPerSm, maxWarpsPerSm);
}

ResourceReport checkResources(const Kernel &kernel) {
  return ResourceWalk(kernel).run();
}

ResourceSummary resourceSummary(const Kernel &kernel) {
  return checkResources(kernel).summary;
}

unsigned reportResources(const ResourceReport &report, Diagnostics &diag) {
  for (const ResourceFinding &f : report.findings) {
    diag.error(f.loc, f.message);
    for (const auto &[loc, text] : f.notes)
      diag.note(loc, text);
  }
  return unsigned(report.findings.size());
}

unsigned verifyResources(const Kernel &kernel, Diagnostics &diag) {
  return reportResources(checkResources(kernel), diag);
}

int64_t launchRegisterBudget(int64_t threads, const TargetInfo &target, int64_t ctas) {
  return launchRegisters(threads, target, ctas);
}

} // namespace tilescope
