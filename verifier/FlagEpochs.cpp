#include "verifier/FlagEpochs.h"
#include "verifier/DeviceQueries.h"

#include "ir/KernelSymbols.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "proof/ProtoEncoding.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

namespace tilescope {

namespace {

using detail::ProtoEncoder;

constexpr unsigned kQueryBudgetMs = 2000;

// One loop around a use: its node, its variable and its iteration unknown.
struct Loop {
  const StmtNode *node;
  std::string var;
  z3::expr iter, value;
};

// One flag barrier as encoded where it stands.
struct Use {
  const FlagBarrierSite *site;
  size_t order; // textual position among the uses
  z3::expr slot, value;
  std::vector<z3::expr> path; // conditions around it and its loops' ranges
  std::vector<Loop> loops;    // outermost first
  std::string inexact;        // a condition around it Z3 cannot read (empty: none)
};

BarrierSkeleton skeletonOf(const Kernel &k) {
  std::set<std::string> names = kernelSymbols(k);
  for (const Expr &e : k.launch.devices)
    for (const std::string &n : namesUsed(e))
      names.insert(n);
  BarrierSkeleton sk;
  sk.symbols.assign(names.begin(), names.end());
  sk.constraints = k.constraints;
  return sk;
}

class Epochs : detail::DeviceWalker {
public:
  Epochs(const Kernel &k, const std::vector<FlagBarrierSite> &sites)
      : DeviceWalker(skeletonOf(k), "flagiter!", false), kernel_(k),
        thread_(ctx_.int_const("flagthread!")) {
    for (const FlagBarrierSite &s : sites)
      sites_[s.site] = &s;
    for (BuiltinKind b : {BuiltinKind::threadIdx_x, BuiltinKind::laneid, BuiltinKind::warpid,
                          BuiltinKind::wgid, BuiltinKind::tid_in_wg, BuiltinKind::wid_in_wg})
      builtins_.emplace(b, detail::threadIndexZ3(*threadIndexMap(b), thread_));
    facts_.push_back(thread_ >= 0 && thread_ < ctx_.int_val(k.launch.threads));
    const BuiltinKind blocks[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                  BuiltinKind::blockIdx_z};
    for (size_t d = 0; d < k.launch.grid.size() && d < 3; ++d) {
      auto b = enc_.encode(Builtin::make(blocks[d]), {}), g = enc_.encode(k.launch.grid[d], {});
      if (b && g)
        facts_.push_back(*b >= 0 && *b < *g);
    }
    ndev_ = enc_.encode(Var::make("ndev"), {});
    devid_ = enc_.encode(Var::make("devid"), {});
    for (const auto &[name, v] : enc_.symbols())
      if (name == "epoch")
        epoch_ = v;
  }

  FlagEpochReport run() {
    if (!ndev_ || !devid_) {
      report_.notProved.push_back(
          {kernel_.loc, "the launch's device count is beyond the encoding of the proofs"});
      return std::move(report_);
    }
    block(kernel_.body);
    if (report_.notProved.empty()) {
      for (const Use &u : uses_)
        agree(u);
      // One finding per later use: the first earlier use it passes on,
      // within the call before across calls.
      for (const Use &b : uses_) {
        auto allOrdered = [&] {
          for (bool acrossCalls : {false, true})
            for (const Use &a : uses_)
              if (a.site->flags == b.site->flags && (!acrossCalls || epoch_) &&
                  !ordered(a, b, acrossCalls))
                return false;
          return true;
        };
        allOrdered();
      }
      if (!epoch_ && !uses_.empty())
        report_.notProved.push_back(
            {uses_.front().site->loc,
             "the flag barriers' values across calls: the kernel has no `epoch` parameter (the "
             "runtime's call counter, one more per call), so nothing makes a call's flag values "
             "greater than the previous call's"});
    }
    return std::move(report_);
  }

private:
  std::optional<z3::expr> value(const Expr &e) override {
    return enc_.encode(e, bound_, builtins_);
  }

  // A flag barrier's site (the `if` it lowers to) is a use, not walked.
  bool visit(const Stmt &s) override {
    if (s->kind != StmtKind::If)
      return false;
    auto it = sites_.find(s.get());
    if (it == sites_.end())
      return false;
    use(*it->second);
    return true;
  }
  void enterLoop(const Stmt &s, const z3::expr &iter, const z3::expr &value) override {
    loops_.push_back({s.get(), as<For>(s).var, iter, value});
  }
  void leaveLoop() override { loops_.pop_back(); }
  std::string loopBeyond(const For &f) const override {
    return fmt::format("loop '{}' (its bounds or step are beyond Z3's encoding, or the step is "
                       "not a positive constant)",
                       f.var);
  }
  std::string conditionBeyond(const If &i) const override {
    return fmt::format("the condition '{}'", print(i.cond));
  }

  void use(const FlagBarrierSite &site) {
    auto slot = value(site.slot), v = value(site.value);
    if (!slot || !v || !slot->is_int() || !v->is_int()) {
      report_.notProved.push_back(
          {site.loc, fmt::format("the flag barrier's slot '{}' or value '{}' is beyond Z3's "
                                 "encoding, so its epochs are not proved",
                                 print(site.slot), print(site.value))});
      return;
    }
    uses_.push_back({&site, uses_.size(), *slot, *v, path_, loops_,
                     inexact_.empty() ? "" : inexact_.back()});
  }

  // Another execution of `u`: its loops' iterations renamed; with `other`,
  // on another device and thread (the same iterations); with `next`, in the
  // kernel's next call (epoch + 1).
  struct Renamed {
    z3::expr_vector from, to;
    std::vector<z3::expr> facts, iters;
    z3::expr operator()(const z3::expr &e) {
      z3::expr copy = e;
      return copy.substitute(from, to);
    }
  };
  Renamed rename(const Use &u, bool other, bool next, bool keepIters = false) {
    Renamed r{z3::expr_vector(ctx_), z3::expr_vector(ctx_), {}, {}};
    for (const Loop &l : u.loops) {
      z3::expr i = keepIters ? l.iter : enc_.fresh("flagiter!");
      r.from.push_back(l.iter);
      r.to.push_back(i);
      r.iters.push_back(i);
    }
    if (other) {
      z3::expr d = enc_.fresh("flagdev!"), t = enc_.fresh("flagthread!");
      r.from.push_back(*devid_);
      r.to.push_back(d);
      r.from.push_back(thread_);
      r.to.push_back(t);
      r.facts.push_back(d >= 0 && d < *ndev_ && t >= 0 &&
                        t < ctx_.int_val(kernel_.launch.threads));
    }
    if (next) {
      r.from.push_back(*epoch_);
      r.to.push_back(*epoch_ + 1);
    }
    for (const z3::expr &c : u.path)
      r.facts.push_back(r(c));
    return r;
  }

  using Answer = detail::DeviceAnswer;
  Answer ask(const std::vector<z3::expr> &facts, const z3::expr &violation,
             const std::vector<z3::expr> &small) {
    std::vector<z3::expr> all = facts_;
    all.insert(all.end(), facts.begin(), facts.end());
    return detail::askDevices(enc_, {*ndev_, *devid_, thread_}, all, violation, small,
                              fmt::format("flag!{}", queries_++), kQueryBudgetMs);
  }
  std::string witness(const z3::model &m) const {
    return detail::deviceWitness(m, enc_, kernel_, {*ndev_, *devid_, thread_});
  }
  std::string iterations(const z3::model &m, const Use &u, Renamed &r) const {
    std::string out;
    for (size_t k = 0; k < u.loops.size(); ++k) {
      z3::expr v = u.loops[k].value;
      out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", u.loops[k].var,
                         ProtoEncoder::text(m, m.eval(r(v), true)));
    }
    return out.empty() ? "" : " (" + out + ")";
  }

  // The signalling thread (device t, thread d) and the waiting one (device
  // d, thread t) compute the same slot and value.
  void agree(const Use &u) {
    Renamed other = rename(u, true, false, true);
    std::vector<z3::expr> facts = u.path;
    facts.insert(facts.end(), other.facts.begin(), other.facts.end());
    Answer r = ask(facts, u.slot != other(u.slot) || u.value != other(u.value), {});
    if (r.result == z3::unsat) {
      ++report_.obligations;
      return;
    }
    report_.notProved.push_back(
        {u.site->loc,
         r.result == z3::unknown
             ? "whether the flag barrier's slot and value are the same on every device and "
               "thread: " + r.why
             : fmt::format("the flag barrier's slot '{}' or value '{}' differs between devices or "
                           "threads, so a wait may expect another value than its signaller "
                           "stores: for {}",
                           print(u.site->slot), print(u.site->value), witness(*r.model))});
  }

  // Every use a before b (within a call; or a in one call and b in the next
  // when `acrossCalls`) of one slot: 1 <= V_b - V_a < 2^31. False when a
  // finding or an open obligation was reported. With one device the flag
  // barrier waits for no peer: no finding there.
  bool ordered(const Use &a, const Use &b, bool acrossCalls) {
    Renamed ra = rename(a, false, false), rb = rename(b, false, acrossCalls);
    std::vector<z3::expr> facts = ra.facts;
    facts.insert(facts.end(), rb.facts.begin(), rb.facts.end());
    facts.push_back(*ndev_ >= 2);
    if (!acrossCalls) {
      // Program order: the common loops' iterations lexicographically, then
      // the text.
      size_t common = 0;
      while (common < a.loops.size() && common < b.loops.size() &&
             a.loops[common].node == b.loops[common].node)
        ++common;
      z3::expr_vector before(ctx_);
      z3::expr same = ctx_.bool_val(true);
      for (size_t k = 0; k < common; ++k) {
        before.push_back(same && ra.iters[k] < rb.iters[k]);
        same = same && ra.iters[k] == rb.iters[k];
      }
      if (a.order < b.order)
        before.push_back(same);
      if (before.empty())
        return true; // b never follows a in a call
      facts.push_back(z3::mk_or(before));
    }
    z3::expr va = ra(a.value), vb = rb(b.value), d = vb - va;
    z3::expr violation = ra(a.slot) == rb(b.slot) && (d < 1 || d >= ctx_.int_val(int64_t(1) << 31));
    std::vector<z3::expr> small = ra.iters;
    small.insert(small.end(), rb.iters.begin(), rb.iters.end());
    Answer r = ask(facts, violation, small);
    if (r.result == z3::unsat) {
      ++report_.obligations;
      return true;
    }
    if (r.result == z3::unknown) {
      report_.notProved.push_back(
          {b.site->loc, "whether the flag barrier's values increase from each use of a slot to "
                        "the next: " + r.why});
      return false;
    }
    const z3::model &m = *r.model;
    std::string message = fmt::format(
        "flag reused without an epoch: this flag barrier{} waits on slot {} of '{}' for {}, but "
        "the flag already holds {} from an earlier use of the slot{}{}, which the wait "
        "accepts (values must grow by 1 to 2^31 - 1 from one use of a slot to the next), so it "
        "passes before the peers reach it: for {}",
        iterations(m, b, rb), ProtoEncoder::text(m, m.eval(rb(b.slot), true)), b.site->flags,
        ProtoEncoder::text(m, m.eval(vb, true)), ProtoEncoder::text(m, m.eval(va, true)),
        iterations(m, a, ra),
        acrossCalls ? " in the kernel's previous call (epoch - 1)" : "", witness(m));
    std::string inexact = !a.inexact.empty() ? a.inexact : b.inexact;
    if (!inexact.empty())
      report_.notProved.push_back(
          {b.site->loc, fmt::format("{} (not confirmed: {} is beyond Z3's encoding)", message,
                                    inexact)});
    else
      report_.findings.push_back({b.site->loc, message, a.site->loc});
    return false;
  }

  const Kernel &kernel_;
  z3::expr thread_;
  std::optional<z3::expr> ndev_, devid_, epoch_;
  std::map<const StmtNode *, const FlagBarrierSite *> sites_;
  std::vector<z3::expr> facts_;
  std::vector<Loop> loops_;
  std::vector<Use> uses_;
  unsigned queries_ = 0;
  FlagEpochReport report_;
};

} // namespace

FlagEpochReport checkFlagEpochs(const Kernel &kernel, const std::vector<FlagBarrierSite> &sites) {
  if (sites.empty())
    return {};
  try {
    return Epochs(kernel, sites).run();
  } catch (const z3::exception &e) {
    FlagEpochReport r;
    r.notProved.push_back({kernel.loc, fmt::format("Z3 failed: {}", e.msg())});
    return r;
  }
}

} // namespace tilescope
