#include "verifier/DeviceProtocol.h"

#include "ir/DeviceScale.h"
#include "ir/Printer.h"
#include "ir/Stmt.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tilescope {

namespace {

// Which names depend on devid: devid itself and every let bound from one.
class DevidDependence {
public:
  bool depends(const Expr &e) const {
    if (!e)
      return false;
    switch (e->kind) {
    case ExprKind::Var:
      return tainted_.count(as<Var>(e).name) > 0;
    case ExprKind::Unary:
      return depends(as<Unary>(e).operand);
    case ExprKind::Binary:
      return depends(as<Binary>(e).lhs) || depends(as<Binary>(e).rhs);
    case ExprKind::Call:
      for (const Expr &a : as<Call>(e).args)
        if (depends(a))
          return true;
      return false;
    case ExprKind::Index: {
      const Index &x = as<Index>(e);
      if (depends(x.base))
        return true;
      for (const Subscript &s : x.subscripts)
        if (depends(s.begin) || depends(s.end))
          return true;
      return false;
    }
    default:
      return false;
    }
  }
  void bind(const std::string &name, const Expr &value) {
    if (depends(value))
      tainted_.insert(name);
  }

private:
  std::set<std::string> tainted_ = {"devid"};
};

std::string baseName(const Expr &e) {
  Expr b = e;
  while (b && b->kind == ExprKind::Index)
    b = as<Index>(b).base;
  return b && b->kind == ExprKind::Var ? as<Var>(b).name : "";
}

bool isVar(const Expr &e, std::string_view name) {
  return e && e->kind == ExprKind::Var && as<Var>(e).name == name;
}

bool isBuiltin(const Expr &e, BuiltinKind which) {
  return e && e->kind == ExprKind::Builtin && as<Builtin>(e).which == which;
}

bool isCall(const Stmt &s, IntrinsicId id) {
  return s && s->kind == StmtKind::CallStmt && idOf(as<CallStmt>(s)) == id;
}

// A flag barrier: the device.signal / device.wait idiom that is a
// device.barrier of CTA blockIdx.x of every device,
//
//   cta.sync()                          (or the kernel's first statement)
//   if threadIdx.x < ndev {
//     device.fence()
//     device.signal(F[c, blockIdx.x, devid], dev = threadIdx.x, value = V)
//     device.wait(F[c, blockIdx.x, threadIdx.x], value = V)
//   }
//   cta.sync()                          (or the kernel's end)
//
// with c the barrier's slot (an expression: a constant, or one of the loop
// variables such as `s % 2`), F a u32 tensor whose last extent holds every
// device, V the value (verifier/FlagEpochs.h proves that c and V are the
// same on every device and thread, and that every use of a slot stores a
// value the flag cannot already hold: epochs across loop iterations, flag
// barriers and calls). Thread t of
// device d stores V into flag [c, b, d] of device t, after a system-scope
// fence that the CTA barrier before it makes cumulative over the CTA's
// accesses, and waits until its own flag [c, b, t] holds V: the store of
// thread d of device t. So the CTA leaves the second cta.sync only once
// every device's CTA b passed its first, for every N (threads t < ndev cover
// every device when the CTA has at least kMaxDevices threads).
std::optional<FlagBarrierSite> flagBarrier(const Kernel &k, const If &i,
                                           const std::string &deviceCount, std::string &why) {
  const Expr &c = i.cond;
  if (c->kind != ExprKind::Binary || as<Binary>(c).op != BinaryOp::Lt ||
      !isBuiltin(as<Binary>(c).lhs, BuiltinKind::threadIdx_x) ||
      !(isVar(as<Binary>(c).rhs, "ndev") || isVar(as<Binary>(c).rhs, deviceCount)))
    return std::nullopt;
  why = "its flag protocol is not the flag barrier of docs/scales.md";
  // The idiom, or the idiom without its fence or without its wait: such a
  // flag barrier orders nothing (`broken` says why).
  const Block &b = i.thenBody;
  size_t n = 0;
  bool fence = !b.empty() && isCall(b[0], IntrinsicId::DeviceFence);
  n += fence;
  if (!i.elseBody.empty() || b.size() <= n || !isCall(b[n], IntrinsicId::DeviceSignal))
    return std::nullopt;
  const CallStmt &sig = as<CallStmt>(b[n++]);
  const CallStmt *waits =
      b.size() > n && isCall(b[n], IntrinsicId::DeviceWait) ? &as<CallStmt>(b[n++]) : nullptr;
  if (n != b.size() || (!fence && !waits))
    return std::nullopt;
  const CallStmt &wait = waits ? *waits : sig; // without a wait, its checks are the signal's
  std::string broken =
      !fence ? "this flag barrier has no device.fence before its signal: st.relaxed.sys "
               "releases nothing, so it orders no access before it with the peers' after theirs"
      : !waits ? "this flag barrier has no device.wait: the CTA goes on before its peers "
                 "arrived, so it orders nothing"
               : "";
  const Expr &sf = sig.args.at(0).value, &wf = wait.args.at(0).value;
  const CallArg *dev = sig.keyword("dev"), *sv = sig.keyword("value"), *wv = wait.keyword("value");
  if (sf->kind != ExprKind::Index || wf->kind != ExprKind::Index || !dev || !sv || !wv ||
      !isBuiltin(dev->value, BuiltinKind::threadIdx_x) || !equal(sv->value, wv->value))
    return std::nullopt;
  const Index &si = as<Index>(sf), &wi = as<Index>(wf);
  if (!equal(si.base, wi.base) || si.base->kind != ExprKind::Var || si.subscripts.size() != 3 ||
      wi.subscripts.size() != 3)
    return std::nullopt;
  for (const Subscript &sub : si.subscripts)
    if (sub.kind != Subscript::Point)
      return std::nullopt;
  for (const Subscript &sub : wi.subscripts)
    if (sub.kind != Subscript::Point)
      return std::nullopt;
  if (!equal(si.subscripts[0].begin, wi.subscripts[0].begin) ||
      !isBuiltin(si.subscripts[1].begin, BuiltinKind::blockIdx_x) ||
      !isBuiltin(wi.subscripts[1].begin, BuiltinKind::blockIdx_x) ||
      !isVar(si.subscripts[2].begin, "devid") ||
      (waits && !isBuiltin(wi.subscripts[2].begin, BuiltinKind::threadIdx_x))) {
    why = "its flags are not F[c, blockIdx.x, devid] signalled and F[c, blockIdx.x, threadIdx.x] "
          "waited for (one slot c)";
    return std::nullopt;
  }
  // The flag tensor: u32[slots, grid, devices] with a slot for every CTA of a
  // one-dimensional grid and every device.
  const std::string &name = as<Var>(si.base).name;
  const Param *f = nullptr;
  for (const Param &p : k.params)
    if (p.isTensor && p.name == name)
      f = &p;
  if (!f || f->dtype != Dtype::u32 || f->shape.size() != 3 || k.launch.grid.size() != 1 || !equal(f->shape[1], k.launch.grid[0]) ||
      constantValue(f->shape[2]).value_or(0) < kMaxDevices || k.launch.threads < kMaxDevices) {
    why = "its flag tensor is not u32[slots, grid, 8] over a one-dimensional grid in a CTA of at "
          "least 8 threads";
    return std::nullopt;
  }
  why.clear();
  return FlagBarrierSite{&i, name, si.subscripts[0].begin, sv->value, i.loc, broken};
}

struct Walker {
  DevidDependence dep;
  std::vector<std::pair<const Expr *, llvm::SMLoc>> control; // enclosing conditions / bounds
  DeviceProtocolReport &report;
  const Kernel &kernel;
  std::string deviceCount;
  std::set<std::string> written, read;                              // tensors the kernel accesses
  std::vector<std::pair<const CallStmt *, std::string>> gets, puts; // peer accesses
  bool flags = false;
  // Phases: classes of the stretches between device barriers (device.barrier,
  // a collective, a flag barrier) in program order; every device runs the
  // same sequence (agreement), so an access of one class on one device is
  // ordered with every access of another class on any device. A loop whose
  // body holds k >= 1 barriers, none in a branch or an inner loop, has k
  // classes: the stretch before its first barrier, the one after its last
  // (the next iteration's first stretch), the code before the loop and
  // after it share one, and each stretch between two of its barriers is one
  // of its own in every iteration.
  // `phasesKnown` is false once a barrier sits elsewhere in a loop or in a
  // branch (its phase is not static).
  int phase = 0, phases = 0;
  bool phasesKnown = true;
  int loops = 0, branches = 0;
  struct LoopPhases {
    int start = 0, barriers = 0, seen = 0;
    bool known = false;
  };
  std::vector<LoopPhases> frames; // the loops around, outermost first
  // Whether a device barrier follows each access noted (in program order,
  // for the next call's accesses), and the accesses not yet followed.
  std::vector<bool> followed;
  std::vector<size_t> pending;
  std::map<std::string, std::vector<size_t>> accessNotes; // tensor -> its accesses' notes
  // The phase of each statement that accesses a tensor (by its location),
  // and whether it is one dynamic phase (outside loops with barriers).
  llvm::SMLoc here;
  std::map<const char *, std::pair<int, bool>> phaseAt;
  std::map<std::string, std::set<int>> writePhases;        // tensor -> phases writing it
  // tensor -> phases of its accesses other than puts into it (local reads
  // and writes, gets from it), and of the puts into it
  std::map<std::string, std::set<int>> otherPhases;
  std::vector<std::tuple<const CallStmt *, std::string, int>> putsAt;
  std::vector<std::tuple<const CallStmt *, std::string, int, size_t>> getPhases;
  std::vector<FlagBarrierSite> barriers;                   // recognized flag barriers
  std::set<std::string> flagTensors;                       // their F
  std::set<const StmtNode *> barrierIfs;
  Walker(DeviceProtocolReport &r, const Kernel &k) : report(r), kernel(k) {
    const Expr &n = k.launch.devices.front();
    if (n->kind == ExprKind::Var)
      deviceCount = as<Var>(n).name;
  }

  void barrier() {
    for (size_t p : pending)
      followed[p] = true;
    pending.clear();
    if (branches || loops > 1 || (loops == 1 && !frames.front().known)) {
      phasesKnown = false;
      phase = ++phases;
      return;
    }
    if (loops == 1 && ++frames.front().seen == frames.front().barriers) {
      phase = frames.front().start; // the next iteration's first stretch
      return;
    }
    phase = ++phases;
  }
  size_t note(const std::string &t) {
    phaseAt[here.getPointer()] = {phase, frames.empty() || frames.front().barriers == 0};
    followed.push_back(false);
    pending.push_back(followed.size() - 1);
    accessNotes[t].push_back(followed.size() - 1);
    return followed.size() - 1;
  }
  void wrote(const std::string &t) {
    written.insert(t);
    writePhases[t].insert(phase);
    otherPhases[t].insert(phase);
    note(t);
  }
  void readFrom(const std::string &t) {
    read.insert(t);
    otherPhases[t].insert(phase);
    note(t);
  }
  // A device barrier at b[k] of a block: a flag barrier, device.barrier or
  // a CTA-scope collective.
  bool barrierAt(const Block &b, size_t k) {
    if (b[k]->kind == StmtKind::If) {
      std::string why;
      auto fb = flagBarrier(kernel, as<If>(b[k]), deviceCount, why);
      return fb && fb->broken.empty() && fenced(b, k);
    }
    if (b[k]->kind != StmtKind::CallStmt)
      return false;
    IntrinsicId id = idOf(as<CallStmt>(b[k]));
    return isDeviceCall(id) && id != IntrinsicId::DevicePut && id != IntrinsicId::DeviceGet &&
           id != IntrinsicId::DeviceSignal && id != IntrinsicId::DeviceWait &&
           id != IntrinsicId::DeviceFence && id != IntrinsicId::DeviceWarpAllreduce;
  }
  // A CTA barrier (or the kernel's start) before the flag barrier at b[k]
  // and one (or the kernel's end) after it.
  bool fenced(const Block &b, size_t k) {
    bool before = &b == &kernel.body;
    for (size_t q = 0; before && q < k; ++q)
      before = b[q]->kind == StmtKind::Let || b[q]->kind == StmtKind::BufferDecl ||
               b[q]->kind == StmtKind::BarrierDecl;
    if (k > 0 && isCall(b[k - 1], IntrinsicId::Sync) && as<CallStmt>(b[k - 1]).scope == ExecScope::Cta)
      before = true;
    bool after = (k + 1 < b.size() && isCall(b[k + 1], IntrinsicId::Sync) &&
                  as<CallStmt>(b[k + 1]).scope == ExecScope::Cta) ||
                 (&b == &kernel.body && k + 1 == b.size());
    return before && after;
  }
  // Element loads inside an expression (a let's value, a condition, an index).
  void loads(const Expr &e) {
    if (!e)
      return;
    switch (e->kind) {
    case ExprKind::Index: {
      const Index &x = as<Index>(e);
      if (std::string name = baseName(e); !name.empty())
        readFrom(name);
      loads(x.base);
      for (const Subscript &sub : x.subscripts) {
        loads(sub.begin);
        loads(sub.end);
      }
      return;
    }
    case ExprKind::Unary:
      loads(as<Unary>(e).operand);
      return;
    case ExprKind::Binary:
      loads(as<Binary>(e).lhs);
      loads(as<Binary>(e).rhs);
      return;
    case ExprKind::Call:
      for (const Expr &a : as<Call>(e).args)
        loads(a);
      return;
    default:
      return;
    }
  }

  void block(const Block &b) {
    for (size_t k = 0; k < b.size(); ++k) {
      const Stmt &s = b[k];
      if (s->kind == StmtKind::If) {
        // Before it: a CTA barrier, or nothing but declarations and lets
        // since the kernel's start (no access the fence must order); after
        // it: a CTA barrier, or the kernel's end.
        std::string why;
        auto fb = flagBarrier(kernel, as<If>(s), deviceCount, why);
        if (fb && fenced(b, k) && !fb->broken.empty()) {
          // No barrier, and no other flag protocol either: the accesses
          // around it stay in one phase, where a race is a finding.
          report.notProved.push_back({s->loc, fb->broken});
          flagTensors.insert(fb->flags);
          continue;
        }
        if (fb && fenced(b, k)) {
          barriers.push_back(*fb);
          flagTensors.insert(fb->flags);
          barrierIfs.insert(s.get());
          if (controlDepends() || dep.depends(fb->slot) || dep.depends(fb->value))
            report.notProved.push_back(
                {s->loc, "the flag barrier is under a condition or loop bound, or has a slot or "
                         "value, that depends on devid, so some device may not reach it or "
                         "wait for another value"});
          barrier();
          continue;
        }
      }
      stmt(s);
    }
  }
  bool controlDepends() const {
    for (auto [e, loc] : control)
      if (dep.depends(*e))
        return true;
    return false;
  }
  void stmt(const Stmt &s) {
    here = s->loc;
    switch (s->kind) {
    case StmtKind::Let: {
      const Let &l = static_cast<const Let &>(*s);
      dep.bind(l.name, l.value);
      loads(l.value);
      return;
    }
    case StmtKind::For: {
      const For &f = static_cast<const For &>(*s);
      loads(f.begin);
      loads(f.end);
      control.push_back({&f.begin, f.loc});
      control.push_back({&f.end, f.loc});
      if (f.step)
        control.push_back({&f.step, f.loc});
      LoopPhases frame;
      frame.start = phase;
      frame.known = !loops;
      for (size_t k = 0; frame.known && k < f.body.size(); ++k)
        frame.barriers += barrierAt(f.body, k) ? 1 : 0;
      // Unless the loop surely runs, its barriers follow none of the
      // accesses before it.
      auto b = constantValue(f.begin), e = constantValue(f.end);
      auto st = f.step ? constantValue(f.step) : std::optional<int64_t>(1);
      std::vector<size_t> before;
      if (!(b && e && st && *st > 0 && *e > *b))
        before.swap(pending);
      frames.push_back(frame);
      ++loops;
      block(f.body);
      --loops;
      frames.pop_back();
      pending.insert(pending.end(), before.begin(), before.end());
      control.resize(control.size() - (f.step ? 3 : 2));
      return;
    }
    case StmtKind::If: {
      const If &i = static_cast<const If &>(*s);
      loads(i.cond);
      control.push_back({&i.cond, i.loc});
      ++branches;
      block(i.thenBody);
      block(i.elseBody);
      --branches;
      control.pop_back();
      return;
    }
    case StmtKind::Store: {
      const Store &st = static_cast<const Store &>(*s);
      wrote(baseName(st.target));
      if (st.target->kind == ExprKind::Index)
        for (const Subscript &sub : as<Index>(st.target).subscripts) {
          loads(sub.begin);
          loads(sub.end);
        }
      loads(st.value);
      return;
    }
    case StmtKind::CallStmt:
      call(static_cast<const CallStmt &>(*s));
      return;
    default:
      return;
    }
  }
  void call(const CallStmt &c) {
    here = c.loc;
    // every call's first operand is written, the others read (copy, cast,
    // gemm, elementwise; the device collectives and device.get too)
    const IntrinsicId id = idOf(c);
    bool device = isDeviceCall(id);
    for (const CallArg &a : c.args) {
      if (!a.keyword.empty())
        loads(a.value);
      else if (a.value->kind == ExprKind::Index)
        for (const Subscript &sub : as<Index>(a.value).subscripts) {
          loads(sub.begin);
          loads(sub.end);
        }
    }
    if (id == IntrinsicId::DevicePut) {
      std::string into = baseName(c.args.at(0).value);
      puts.push_back({&c, into});
      putsAt.push_back({&c, into, phase});
      note(into);
      readFrom(baseName(c.args.at(1).value));
      return;
    }
    if (id == IntrinsicId::DeviceGet) {
      gets.push_back({&c, baseName(c.args.at(1).value)});
      getPhases.push_back({&c, baseName(c.args.at(1).value), phase,
                           note(baseName(c.args.at(1).value))});
      otherPhases[baseName(c.args.at(1).value)].insert(phase);
      wrote(baseName(c.args.at(0).value));
      return;
    }
    if (id == IntrinsicId::DeviceSignal || id == IntrinsicId::DeviceWait) {
      if (!flags)
        report.notProved.push_back(
            {c.loc, "device flag protocol (device.signal / device.wait) other than the flag "
                    "barrier of docs/scales.md: its epochs and fences are checked by `tilescope "
                    "sim --races` at given device counts, not proved for all of them"});
      flags = true;
      return;
    }
    if (id == IntrinsicId::DeviceFence)
      return;
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (!c.args[i].keyword.empty())
        continue;
      std::string name = baseName(c.args[i].value);
      if (name.empty())
        continue;
      if (i == 0)
        wrote(name);
      else
        readFrom(name);
    }
    if (!device)
      return;
    // device.barrier and the collectives order every device's accesses
    // before them before every device's accesses after them; a warp
    // collective orders its warp only, so phases are not known past it.
    if (idOf(c) == IntrinsicId::DeviceWarpAllreduce)
      phasesKnown = false;
    else if (idOf(c) != IntrinsicId::DevicePut)
      barrier();
    // device.barrier and the collectives: every device must reach them alike
    bool operands = false;
    for (const CallArg &a : c.args)
      operands |= dep.depends(a.value);
    if (operands)
      report.notProved.push_back(
          {c.loc, fmt::format("'{}': its operands depend on devid, so the devices may disagree "
                              "on the tile (the simulator decides it at given sizes)",
                              c.callee)});
    else if (controlDepends())
      report.notProved.push_back(
          {c.loc, fmt::format("'{}' is under a condition or loop bound that depends on devid, so "
                              "some device may not reach it",
                              c.callee)});
  }
};

} // namespace

DeviceProtocolReport checkDeviceProtocol(const Kernel &kernel, Diagnostics &diag,
                                         const PeerCopyFacts &copies) {
  const std::set<const CallStmt *> &disjointPuts = copies.disjointPuts;
  DeviceProtocolReport report;
  if (kernel.launch.devices.empty())
    return report;
  report.applies = true;
  Walker w(report, kernel);
  w.block(kernel.body);
  // A flag tensor is the flag barriers' alone: any other access of it (a
  // store, a copy, a signal or wait elsewhere) voids their reasoning.
  for (const std::string &f : w.flagTensors)
    if (w.written.count(f) || w.read.count(f) ||
        std::any_of(w.gets.begin(), w.gets.end(), [&](auto &g) { return g.second == f; }))
      report.notProved.push_back(
          {kernel.loc, fmt::format("the flag tensor '{}' of a flag barrier is accessed elsewhere "
                                   "too",
                                   f)});
  report.flagBarriers = w.barriers;
  // Puts and gets that race with another access of their elements on the
  // peer: by a CTA of another blockIdx, or by the same CTA in the same
  // dynamic phase, when no other flag protocol could order them.
  std::set<const CallStmt *> racy;
  for (const CopyRace &r : copies.copyRaces) {
    auto a = w.phaseAt.find(r.copy->loc.getPointer()), b = w.phaseAt.find(r.other.getPointer());
    bool samePhase = w.phasesKnown && a != w.phaseAt.end() && b != w.phaseAt.end() &&
                     a->second.second && b->second.second && a->second.first == b->second.first;
    if (!r.exact || w.flags || racy.count(r.copy) || !(r.otherCta || samePhase))
      continue;
    diag.error(r.copy->loc, "device race: " + r.message);
    diag.note(r.other, "the other access");
    ++report.findings;
    racy.insert(r.copy);
  }
  for (auto [c, tensor, phase, noted] : w.getPhases) {
    const auto &got = tensor; // a lambda may not capture a structured binding (clang 14)
    bool put = std::any_of(w.puts.begin(), w.puts.end(), [&](auto &p) { return p.second == got; });
    // A peer's writes of the tensor in other phases are ordered with this
    // read by the barriers between them, and the next call's writes by a
    // barrier after the read (the peer leaves its last barrier only once
    // this device reached it).
    bool samePhase = w.writePhases.count(got) && w.writePhases.at(got).count(phase);
    bool barrierAfter = w.followed[noted];
    // Device barriers pair CTA b of every device: a write by a CTA of
    // another blockIdx where the read reaches is ordered by none of them.
    bool otherCta = !copies.sameCtaGets.count(c);
    if (!racy.count(c) && (put || (w.written.count(got) && (!w.phasesKnown || samePhase ||
                                                             !barrierAfter || otherCta))))
      report.notProved.push_back(
          {c->loc, fmt::format("device.get of '{}', which the kernel also writes{}: whether the "
                               "write is ordered before the peer's read is left to `tilescope "
                               "sim --races`",
                               tensor,
                               !w.phasesKnown ? " (its device barriers are in loops or branches)"
                               : samePhase    ? " between the same device barriers"
                               : !barrierAfter
                                   ? " and no device barrier follows the read"
                                   : " where a CTA of another blockIdx may write what it reads "
                                     "(device barriers pair the CTAs of one blockIdx)")});
  }
  // A put into T is ordered with every other access of T when no two
  // devices or CTAs put onto one element of one peer (disjointPuts), no CTA
  // of another blockIdx touches its elements there (sameCtaPuts),
  // no other access of T shares its phase, and a device barrier follows
  // every access of T (so the next call's puts wait for this call's reads).
  for (auto [c, tensor, phase] : w.putsAt) {
    const auto &into = tensor; // a lambda may not capture a structured binding (clang 14)
    auto phasesOf = [&](const std::map<std::string, std::set<int>> &m) {
      auto it = m.find(into);
      return it == m.end() ? std::set<int>{} : it->second;
    };
    std::set<int> others = phasesOf(w.otherPhases);
    bool allFollowed = true;
    for (size_t n : w.accessNotes[into])
      allFollowed = allFollowed && w.followed[n];
    bool ordered = disjointPuts.count(c) && copies.sameCtaPuts.count(c) && w.phasesKnown &&
                   !others.count(phase) && allFollowed;
    if (!ordered && !racy.count(c))
      report.notProved.push_back(
          {c->loc, fmt::format("device.put into '{}' of a peer: its order against the peer's own "
                               "accesses is left to `tilescope sim --races`{}",
                               tensor,
                               !disjointPuts.count(c)
                                   ? " (two devices or CTAs may put onto one element of a peer)"
                               : !copies.sameCtaPuts.count(c)
                                   ? " (a CTA of another blockIdx may access what it writes on "
                                     "the peer; device barriers pair the CTAs of one blockIdx)"
                               : !w.phasesKnown ? " (its device barriers are in loops or branches)"
                               : others.count(phase)
                                   ? " (the tensor is accessed otherwise between the same device "
                                     "barriers)"
                                   : " (no device barrier follows an access of the tensor)")});
  }
  for (const auto &[loc, why] : report.notProved)
    diag.warning(loc, "not proved: " + why);
  report.method =
      !report.notProved.empty() ? "not proved"
      : w.barriers.empty()
          ? "proved for every device count: collectives agree, peer reads are of tensors no "
            "device writes"
          : fmt::format("proved for every device count: collectives and {} flag barrier{} agree "
                        "(fenced signals; each use of a slot stores a value its flag cannot "
                        "already hold, across iterations and calls with epoch + 1), peer reads "
                        "are of tensors no device writes between the same barriers",
                        w.barriers.size(), w.barriers.size() == 1 ? "" : "s");
  return report;
}

} // namespace tilescope
