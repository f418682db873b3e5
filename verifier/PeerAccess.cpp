#include "verifier/PeerAccess.h"
#include "verifier/DeviceQueries.h"

#include "ir/DeviceScale.h"
#include "ir/KernelSymbols.h"
#include "ir/Placement.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "proof/ProtoEncoding.h"

#include <fmt/format.h>

#include <optional>

namespace tilescope {

namespace {

using detail::ProtoEncoder;

constexpr unsigned kQueryBudgetMs = 2000;

// One dimension of a region: [begin, begin + extent) of a dimension of
// `shape` elements; a point subscript has extent 1 and is no dimension of
// the tile.
struct Dim {
  z3::expr begin, extent, shape;
  bool point = false;
  bool full = false; // the whole dimension: inside by construction
};

// An access to a global tensor, with what holds where it runs.
struct GlobalAccess {
  llvm::SMLoc loc;
  std::string what; // "'device.get'", "store", "'cta.copy'"
  const Param *tensor = nullptr;
  std::vector<Dim> dims;
  std::optional<z3::expr> peer; // the device addressed; none: the executing device
  bool write = false;
  std::vector<z3::expr> path; // the conditions around it, the loops' ranges
  std::string inexact;        // a condition around it Z3 cannot read (empty: none)
  std::vector<std::pair<std::string, z3::expr>> loops; // loop variables in scope
  std::vector<z3::expr> iters;                         // the loops' iteration unknowns
  const CallStmt *call = nullptr;                      // the call making it, if one does
};

std::string rootName(const Expr &e) {
  Expr b = e;
  while (b && b->kind == ExprKind::Index)
    b = as<Index>(b).base;
  return b && b->kind == ExprKind::Var ? as<Var>(b).name : "";
}

bool isTma(const CallStmt &c) {
  IntrinsicId id = idOf(c);
  return unitOf(id) == IntrinsicUnit::Tma || (id == IntrinsicId::CopyAsync && c.keyword("mbar"));
}

// `e` for the encoder: elect_sync() as a free boolean (some lane of the warp
// is elected, which one does not matter to where the CTA's accesses land).
// Division and remainder the encoder itself makes truncating, as the IR's
// are (proof/TruncatingDivision.h): `(p - 1) % 4` is -1 at p = 0, not 3.
Expr forEncoder(const Expr &e) {
  if (!e)
    return e;
  switch (e->kind) {
  case ExprKind::Call: {
    const Call &c = as<Call>(e);
    if (c.callee == "elect_sync" && c.args.empty())
      return Var::make("elect_sync!", e->loc);
    std::vector<Expr> args;
    for (const Expr &a : c.args)
      args.push_back(forEncoder(a));
    return Call::make(c.callee, std::move(args), e->loc);
  }
  case ExprKind::Unary:
    return Unary::make(as<Unary>(e).op, forEncoder(as<Unary>(e).operand), e->loc);
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    return Binary::make(b.op, forEncoder(b.lhs), forEncoder(b.rhs), e->loc);
  }
  default:
    return e;
  }
}

class Checker : detail::DeviceWalker {
public:
  explicit Checker(const Kernel &k)
      : DeviceWalker(skeletonOf(k), "iter!", true), kernel_(k),
        thread_(ctx_.int_const("thread!")) {
    for (BuiltinKind b : {BuiltinKind::threadIdx_x, BuiltinKind::laneid, BuiltinKind::warpid,
                          BuiltinKind::wgid, BuiltinKind::tid_in_wg, BuiltinKind::wid_in_wg})
      builtins_.emplace(b, detail::threadIndexZ3(*threadIndexMap(b), thread_));
    bound_.emplace("elect_sync!", ctx_.bool_const("elect_sync!"));
    facts_.push_back(thread_ >= 0 && thread_ < ctx_.int_val(k.launch.threads));
    const BuiltinKind blocks[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                  BuiltinKind::blockIdx_z};
    for (size_t d = 0; d < k.launch.grid.size() && d < 3; ++d) {
      auto b = enc_.encode(Builtin::make(blocks[d]), {}),
           g = enc_.encode(forEncoder(k.launch.grid[d]), {});
      if (b && g)
        facts_.push_back(*b >= 0 && *b < *g);
    }
    if (auto n = enc_.encode(Var::make("ndev"), {}))
      ndev_ = *n;
    if (auto d = enc_.encode(Var::make("devid"), {}))
      devid_ = *d;
  }

  PeerAccessReport run() {
    report_.applies = true;
    if (!ndev_ || !devid_) {
      report_.notProved.push_back(
          {kernel_.loc, "the launch's device count is beyond the encoding of the proofs"});
      return std::move(report_);
    }
    block(kernel_.body);
    for (const Peer &p : peers_)
      checkPeer(p);
    for (const GlobalAccess &a : accesses_)
      check(a);
    for (const auto &[src, dst] : moves_)
      checkMove(src, dst);
    checkPuts();
    checkGetsSameCta();
    return std::move(report_);
  }

private:
  static BarrierSkeleton skeletonOf(const Kernel &k) {
    BarrierSkeleton sk;
    std::set<std::string> symbols = kernelSymbols(k);
    for (const Expr &e : k.launch.devices)
      for (const std::string &n : namesUsed(e))
        symbols.insert(n);
    sk.symbols.assign(symbols.begin(), symbols.end());
    sk.constraints = k.constraints;
    return sk;
  }

  std::optional<z3::expr> value(const Expr &e) override {
    return enc_.encode(forEncoder(e), bound_, builtins_);
  }
  const Param *tensor(const std::string &name) const {
    for (const Param &p : kernel_.params)
      if (p.isTensor && p.name == name)
        return &p;
    return nullptr;
  }

  // Stores and calls; lets, loops and conditions are the walker's
  // (DeviceQueries.h), their expressions read through reads().
  bool visit(const Stmt &s) override {
    switch (s->kind) {
    case StmtKind::Store: {
      const Store &st = as<Store>(s);
      if (const Param *t = tensor(rootName(st.target)))
        add(st.target, t, "store", true, std::nullopt, s->loc);
      else
        loads(st.target, s->loc);
      loads(st.value, s->loc);
      return true;
    }
    case StmtKind::CallStmt:
      call(as<CallStmt>(s));
      return true;
    default:
      return false;
    }
  }
  void reads(const Expr &e, llvm::SMLoc at) override { loads(e, at); }
  void enterLoop(const Stmt &s, const z3::expr &iter, const z3::expr &value) override {
    loops_.push_back({as<For>(s).var, value});
    iters_.push_back(iter);
  }
  void leaveLoop() override {
    loops_.pop_back();
    iters_.pop_back();
  }
  std::string loopBeyond(const For &f) const override {
    return fmt::format("the bounds of loop '{}' are beyond Z3's encoding", f.var);
  }
  std::string conditionBeyond(const If &i) const override {
    return fmt::format("the condition '{}' is beyond Z3's encoding", print(i.cond));
  }

  // Element loads of global tensors inside an expression.
  void loads(const Expr &e, llvm::SMLoc at) {
    if (!e)
      return;
    switch (e->kind) {
    case ExprKind::Index: {
      const Index &x = as<Index>(e);
      for (const Subscript &sub : x.subscripts) {
        loads(sub.begin, at);
        loads(sub.end, at);
      }
      if (const Param *t = tensor(rootName(e)))
        add(e, t, "load", false, std::nullopt, at);
      return;
    }
    case ExprKind::Unary:
      loads(as<Unary>(e).operand, at);
      return;
    case ExprKind::Binary:
      loads(as<Binary>(e).lhs, at);
      loads(as<Binary>(e).rhs, at);
      return;
    case ExprKind::Call:
      for (const Expr &a : as<Call>(e).args)
        loads(a, at);
      return;
    default:
      return;
    }
  }

  void call(const CallStmt &c) {
    const IntrinsicId id = idOf(c);
    const IntrinsicInfo *info = id == IntrinsicId::Unknown ? nullptr : &intrinsic(id);
    std::string what = fmt::format("'{}'", c.callee);
    std::optional<z3::expr> peer;
    bool peerEncoded = true;
    if (const CallArg *dev = c.keyword("dev")) {
      loads(dev->value, c.loc);
      if (auto p = value(dev->value))
        peer = *p;
      else
        peerEncoded = false;
    }
    for (const CallArg &a : c.args)
      if (!a.keyword.empty() && a.keyword != "dev")
        loads(a.value, a.loc.isValid() ? a.loc : c.loc);
    if (!peerEncoded) {
      report_.notProved.push_back(
          {c.loc, fmt::format("{}: the device it addresses, '{}', is beyond Z3's encoding", what,
                              print(c.keyword("dev")->value))});
      return;
    }
    if (peer)
      peers_.push_back({c.loc, what, *peer, path_, inexactWhy(), loops_});
    bool tma = isTma(c);
    call_ = &c;
    size_t positional = 0;
    std::optional<GlobalAccess> moveDst, moveSrc;
    for (const CallArg &a : c.args) {
      if (!a.keyword.empty())
        continue;
      size_t index = positional++;
      const Param *t = tensor(rootName(a.value));
      if (!t) {
        loads(a.value, c.loc);
        continue;
      }
      if (a.value->kind == ExprKind::Index)
        for (const Subscript &sub : as<Index>(a.value).subscripts) {
          loads(sub.begin, c.loc);
          loads(sub.end, c.loc);
        }
      if (tma)
        continue; // the tensor map clips the box at the instance's edge
      // The peer side: a put's dst, a get's src, a signal's flag.
      bool remote = (id == IntrinsicId::DevicePut && index == 0) ||
                    (id == IntrinsicId::DeviceGet && index == 1) || id == IntrinsicId::DeviceSignal;
      bool write = index == 0 && id != IntrinsicId::DeviceWait;
      if (info && index < info->positional.size() && !isDeviceCall(id)) {
        tilescope::Access acc = info->positional[index].access;
        write = acc == tilescope::Access::Write || acc == tilescope::Access::ReadWrite;
      }
      auto made = add(a.value, t, what, write, remote ? peer : std::nullopt, c.loc);
      if (made && (id == IntrinsicId::DevicePut || id == IntrinsicId::DeviceGet))
        (index == 0 ? moveDst : moveSrc) = *made;
    }
    call_ = nullptr;
    if (moveDst && moveSrc && moveDst->tensor->placement && moveSrc->tensor->placement)
      moves_.push_back({*moveSrc, *moveDst});
  }

  std::string inexactWhy() const { return inexact_.empty() ? "" : inexact_.back(); }

  // Records the access of `e` (a tensor name or a subscript of one).
  std::optional<GlobalAccess> add(const Expr &e, const Param *t, const std::string &what,
                                  bool write, std::optional<z3::expr> peer, llvm::SMLoc at) {
    GlobalAccess a{at, what, t, {}, peer, write, path_, inexactWhy(), loops_, iters_, call_};
    std::vector<z3::expr> shape;
    for (const Expr &d : t->shape) {
      auto v = value(d);
      if (!v) {
        report_.notProved.push_back(
            {at, fmt::format("{}: the shape of '{}' is beyond Z3's encoding", what, t->name)});
        return std::nullopt;
      }
      shape.push_back(*v);
    }
    std::vector<Subscript> subs;
    if (e->kind == ExprKind::Index) {
      if (as<Index>(e).base->kind != ExprKind::Var) {
        report_.notProved.push_back(
            {at, fmt::format("{}: chained subscripts of the global tensor '{}' are not checked "
                             "against its instance",
                             what, t->name)});
        return std::nullopt;
      }
      subs = as<Index>(e).subscripts;
    }
    for (size_t k = 0; k < shape.size(); ++k) {
      Subscript sub = k < subs.size() ? subs[k] : Subscript{Subscript::Full, nullptr, nullptr};
      if (sub.kind == Subscript::Full) {
        a.dims.push_back({ctx_.int_val(0), shape[k], shape[k], false, true});
        continue;
      }
      auto b = value(sub.begin);
      std::optional<z3::expr> n =
          sub.kind == Subscript::Point ? std::optional(ctx_.int_val(1)) : value(sub.end);
      if (b && n && sub.kind == Subscript::Range)
        n = *n - *b;
      if (!b || !n) {
        report_.notProved.push_back(
            {at, fmt::format("{}: the region of '{}' it {} is beyond Z3's encoding ('{}')", what,
                             t->name, write ? "writes" : "reads", print(e))});
        return std::nullopt;
      }
      a.dims.push_back({*b, *n, shape[k], sub.kind == Subscript::Point, false});
    }
    accesses_.push_back(a);
    return a;
  }

  // --- the queries ---

  using Answer = detail::DeviceAnswer;

  // Whether `violation` can hold under the facts and `a`'s path; a model at
  // the least N, devid, sizes, loop values and `extra` values when it can.
  Answer ask(const std::vector<z3::expr> &path, const z3::expr &violation,
             const std::vector<z3::expr> &extra, const std::string &tag) {
    std::vector<z3::expr> facts = facts_;
    facts.insert(facts.end(), path.begin(), path.end());
    return detail::askDevices(enc_, {*ndev_, *devid_, thread_}, facts, violation, extra,
                              fmt::format("peer!{}!{}", tag, queries_++), kQueryBudgetMs);
  }

  std::string witness(const z3::model &m,
                      const std::vector<std::pair<std::string, z3::expr>> &loops) const {
    return detail::deviceWitness(m, enc_, kernel_, {*ndev_, *devid_, thread_}, loops);
  }

  // An obligation that can be violated: a finding when every condition
  // around the access was encoded, else not proved.
  void violated(const GlobalAccess &a, const std::string &message) {
    if (!a.inexact.empty())
      report_.notProved.push_back(
          {a.loc, fmt::format("{} (not confirmed: {})", message, a.inexact)});
    else
      report_.findings.push_back({a.loc, message});
  }

  std::string coords(const z3::model &m, const std::vector<z3::expr> &c) const {
    std::string out;
    for (size_t k = 0; k < c.size(); ++k)
      out += (k ? ", " : "") + ProtoEncoder::text(m, c[k]);
    return out;
  }

  // "the shard the placement gives device 2" / "the instance of 'F' [2, 1, 8]"
  std::string instanceText(const GlobalAccess &a, const z3::model &m) const {
    std::vector<z3::expr> shape;
    for (const Dim &d : a.dims)
      shape.push_back(d.shape);
    std::string text = fmt::format("the instance of '{}' [{}]", a.tensor->name, coords(m, shape));
    if (!a.tensor->placement)
      return text;
    std::string why;
    llvm::SMLoc at;
    auto reading = readPlacement(kernel_, *a.tensor, &why, &at);
    return reading
               ? fmt::format("{}, which its placement ({}) gives the device", text, reading->str())
               : text;
  }

  void check(const GlobalAccess &a) {
    // Each side of each dimension is a query of its own: Z3 decides the
    // small disjuncts (begin < 0; begin + extent > shape) much faster than
    // their disjunction (tp_gemm_allreduce_bf16_sm90: 5 s for one access's
    // disjunction). The first side that can be left gives the witness; any
    // side Z3 gave up on, with none left, leaves the access not proved.
    std::vector<z3::expr> outside;
    for (const Dim &d : a.dims)
      if (!d.full) {
        outside.push_back(d.begin < 0);
        outside.push_back(d.begin + d.extent > d.shape);
      }
    std::vector<z3::expr> path = a.path;
    if (a.peer)
      path.push_back(*a.peer >= 0 && *a.peer < *ndev_); // a bad peer is its own finding
    if (!outside.empty()) {
      Answer r;
      r.result = z3::unsat;
      for (const z3::expr &side : outside) {
        Answer one = ask(path, side, {}, "bounds");
        if (one.result == z3::sat) {
          r = std::move(one);
          break;
        }
        if (one.result == z3::unknown && r.result == z3::unsat)
          r = std::move(one);
      }
      if (r.result == z3::unknown) {
        report_.notProved.push_back(
            {a.loc, fmt::format("{}: whether it stays inside '{}' for every size: {}", a.what,
                                a.tensor->name, r.why)});
        return;
      }
      if (r.result == z3::sat) {
        const z3::model &m = *r.model;
        // The element: the first dimension's first index outside, the
        // others at the region's start.
        std::vector<z3::expr> at;
        bool placed = false;
        for (const Dim &d : a.dims) {
          z3::expr begin = d.full ? ctx_.int_val(0) : d.begin;
          bool out =
              !placed && !d.full && m.eval(begin < 0 || begin + d.extent > d.shape, true).is_true();
          if (out) {
            placed = true;
            at.push_back(m.eval(z3::ite(begin < 0, begin, z3::max(begin, d.shape)), true));
          } else {
            at.push_back(m.eval(begin, true));
          }
        }
        std::string device =
            a.peer ? ProtoEncoder::text(m, *a.peer) : ProtoEncoder::text(m, *devid_);
        violated(a, fmt::format("{} {} {}[{}] of device {}{}, outside {}: for {}", a.what,
                                a.write ? "writes" : "reads", a.tensor->name, coords(m, at), device,
                                a.peer && device != ProtoEncoder::text(m, *devid_)
                                    ? " (a peer's memory)"
                                    : "",
                                instanceText(a, m), witness(m, a.loops)));
        return;
      }
    }
    ++report_.accesses;
    if (a.peer)
      ++report_.peerAccesses;
  }

  struct Peer {
    llvm::SMLoc loc;
    std::string what;
    z3::expr device;
    std::vector<z3::expr> path;
    std::string inexact;
    std::vector<std::pair<std::string, z3::expr>> loops;
  };

  void checkPeer(const Peer &p) {
    Answer r = ask(p.path, p.device < 0 || p.device >= *ndev_, {}, "peer");
    if (r.result == z3::unknown) {
      report_.notProved.push_back(
          {p.loc, fmt::format("{}: whether the device it addresses is one of the launch's: {}",
                              p.what, r.why)});
      return;
    }
    if (r.result != z3::sat)
      return;
    const z3::model &m = *r.model;
    GlobalAccess a{p.loc,  p.what,    nullptr, {}, std::nullopt, false,
                   p.path, p.inexact, p.loops, {}, nullptr};
    violated(a, fmt::format("{} addresses device {}, but the launch has devices 0 to {}: for {}",
                            p.what, ProtoEncoder::text(m, p.device),
                            ProtoEncoder::text(m, *ndev_ - 1), witness(m, p.loops)));
  }

  // The logical coordinates a placement gives element `c` of the instance
  // on `device`, and the logical tensor's shape.
  std::pair<std::vector<z3::expr>, std::vector<z3::expr>>
  logical(const GlobalAccess &a, const PlacementReading &r, const z3::expr &device,
          const std::vector<z3::expr> &c) const {
    std::vector<z3::expr> at = c, shape;
    for (const Dim &d : a.dims)
      shape.push_back(d.shape);
    if (r.kind == PlacementReading::Kind::Blocked && r.dim < at.size()) {
      at[r.dim] = at[r.dim] + device * shape[r.dim];
      shape[r.dim] = shape[r.dim] * *ndev_;
    }
    return {at, shape};
  }

  void checkMove(const GlobalAccess &src, const GlobalAccess &dst) {
    std::string why;
    llvm::SMLoc at;
    auto rs = readPlacement(kernel_, *src.tensor, &why, &at);
    auto rd = readPlacement(kernel_, *dst.tensor, &why, &at);
    if (!rs || !rd)
      return; // the checker reported the placement
    bool put = src.peer == std::nullopt;
    z3::expr peer = put ? *dst.peer : *src.peer;
    std::vector<z3::expr> path = src.path;
    path.push_back(peer >= 0 && peer < *ndev_);
    for (const GlobalAccess *a : {&src, &dst})
      for (const Dim &d : a->dims)
        if (!d.full)
          path.push_back(d.begin >= 0 && d.begin + d.extent <= d.shape);
    // Element i of each region in row-major order: the tiles' dimensions
    // (the non-point ones) must have the same extents.
    std::vector<const Dim *> ts, td;
    for (const Dim &d : src.dims)
      if (!d.point)
        ts.push_back(&d);
    for (const Dim &d : dst.dims)
      if (!d.point)
        td.push_back(&d);
    auto open = [&](const std::string &reason) {
      report_.notProved.push_back(
          {src.loc, fmt::format("{}: whether it moves each logical element of '{}' onto itself "
                                "in '{}': {}",
                                src.what, src.tensor->name, dst.tensor->name, reason)});
    };
    if (ts.size() != td.size())
      return open("its tiles have different ranks (this check pairs equal tile shapes only)");
    z3::expr_vector differ(ctx_);
    for (size_t k = 0; k < ts.size(); ++k)
      differ.push_back(ts[k]->extent != td[k]->extent);
    if (!differ.empty()) {
      Answer r = ask(path, z3::mk_or(differ), {}, "shape");
      if (r.result != z3::unsat)
        return open(r.result == z3::sat ? "its tiles' shapes differ for some sizes (this check "
                                          "pairs equal tile shapes only)"
                                        : r.why);
    }
    std::vector<z3::expr> offsets, cs, cd;
    for (size_t k = 0; k < ts.size(); ++k) {
      z3::expr o = enc_.fresh("element!");
      path.push_back(o >= 0 && o < ts[k]->extent);
      offsets.push_back(o);
    }
    auto coordsOf = [&](const GlobalAccess &a, std::vector<z3::expr> &out) {
      size_t k = 0;
      for (const Dim &d : a.dims)
        out.push_back(d.point ? d.begin : d.begin + offsets[k++]);
    };
    coordsOf(src, cs);
    coordsOf(dst, cd);
    z3::expr srcDevice = put ? *devid_ : peer, dstDevice = put ? peer : *devid_;
    auto [ls, shapeS] = logical(src, *rs, srcDevice, cs);
    auto [ld, shapeD] = logical(dst, *rd, dstDevice, cd);
    // The logical element as the simulator compares it: its row-major index
    // in the logical tensor; per coordinate when the logical shapes agree.
    z3::expr_vector shapesDiffer(ctx_);
    bool sameRank = shapeS.size() == shapeD.size();
    for (size_t k = 0; sameRank && k < shapeS.size(); ++k)
      shapesDiffer.push_back(shapeS[k] != shapeD[k]);
    bool perCoordinate = sameRank;
    if (sameRank && !shapesDiffer.empty())
      perCoordinate = ask(path, z3::mk_or(shapesDiffer), {}, "logical").result == z3::unsat;
    z3::expr moved = ctx_.bool_val(false);
    if (perCoordinate) {
      z3::expr_vector any(ctx_);
      for (size_t k = 0; k < ls.size(); ++k)
        any.push_back(ls[k] != ld[k]);
      moved = z3::mk_or(any);
    } else {
      auto flat = [&](const std::vector<z3::expr> &c, const std::vector<z3::expr> &shape) {
        z3::expr f = ctx_.int_val(0);
        for (size_t k = 0; k < c.size(); ++k)
          f = f * shape[k] + c[k];
        return f;
      };
      moved = flat(ls, shapeS) != flat(ld, shapeD);
    }
    Answer r = ask(path, moved, offsets, "move");
    if (r.result == z3::unknown)
      return open(r.why);
    if (r.result == z3::unsat) {
      ++report_.placedMoves;
      return;
    }
    const z3::model &m = *r.model;
    violated(src, fmt::format("{} moves logical element [{}] of '{}' (device {}, element [{}]) "
                              "to logical element [{}] of '{}' (device {}, element [{}]): the "
                              "access disagrees with the tensors' declared placements: for {}",
                              src.what, coords(m, ls), src.tensor->name,
                              ProtoEncoder::text(m, srcDevice), coords(m, cs), coords(m, ld),
                              dst.tensor->name, ProtoEncoder::text(m, dstDevice), coords(m, cd),
                              witness(m, src.loops)));
  }

  // Another execution of `b`'s statement: on `device`, by a thread, an
  // elected lane and loop iterations of its own, and in the same CTA, a CTA
  // of another blockIdx (Other) or any CTA (Any; `blockDiffers` says when it
  // is another). `facts` bound the new unknowns.
  enum class Cta { Same, Other, Any };
  struct Renamed {
    z3::expr_vector from, to;
    std::vector<z3::expr> facts;
    z3::expr blockDiffers;
    z3::expr operator()(const z3::expr &e) {
      z3::expr copy = e;
      return copy.substitute(from, to);
    }
  };
  Renamed rename(const GlobalAccess &b, const z3::expr &device, Cta cta) {
    Renamed r{z3::expr_vector(ctx_), z3::expr_vector(ctx_), {}, ctx_.bool_val(false)};
    z3::expr thread = enc_.fresh("thread!");
    r.from.push_back(*devid_);
    r.to.push_back(device);
    r.from.push_back(thread_);
    r.to.push_back(thread);
    r.facts.push_back(thread >= 0 && thread < ctx_.int_val(kernel_.launch.threads));
    r.from.push_back(bound_.at("elect_sync!"));
    r.to.push_back(ctx_.bool_const(fmt::format("elect_sync!{}", renamed_++).c_str()));
    for (const z3::expr &i : b.iters) {
      r.from.push_back(i);
      r.to.push_back(enc_.fresh("iter!"));
    }
    if (cta != Cta::Same) {
      z3::expr_vector differs(ctx_);
      const BuiltinKind blocks[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                    BuiltinKind::blockIdx_z};
      for (size_t d = 0; d < kernel_.launch.grid.size() && d < 3; ++d) {
        auto mine = enc_.encode(Builtin::make(blocks[d]), {});
        auto extent = enc_.encode(forEncoder(kernel_.launch.grid[d]), {});
        if (!mine || !extent)
          continue;
        z3::expr other = enc_.fresh("block!");
        r.from.push_back(*mine);
        r.to.push_back(other);
        r.facts.push_back(other >= 0 && other < *extent);
        differs.push_back(other != *mine);
      }
      r.blockDiffers = differs.empty() ? ctx_.bool_val(false) : z3::mk_or(differs);
      if (cta == Cta::Other)
        r.facts.push_back(r.blockDiffers);
    }
    return r;
  }

  // Whether a's region and b's (renamed) share an element.
  z3::expr overlap(const GlobalAccess &a, const GlobalAccess &b, Renamed &on) {
    z3::expr_vector all(ctx_);
    for (size_t k = 0; k < a.dims.size() && k < b.dims.size(); ++k) {
      const Dim &x = a.dims[k], &y = b.dims[k];
      z3::expr yb = on(y.begin), ye = on(y.extent);
      all.push_back(x.begin < yb + ye && yb < x.begin + x.extent);
    }
    return z3::mk_and(all);
  }

  // Whether the peer-side regions of two puts into one tensor are disjoint
  // whenever two different devices, or CTAs of two blockIdx, address the
  // same peer.
  bool disjoint(const GlobalAccess &a, const GlobalAccess &b) {
    z3::expr other = enc_.fresh("devid!");
    Renamed on = rename(b, other, Cta::Any);
    std::vector<z3::expr> path = a.path;
    for (const z3::expr &c : b.path)
      path.push_back(on(c));
    path.insert(path.end(), on.facts.begin(), on.facts.end());
    path.push_back(other >= 0 && other < *ndev_ && (other != *devid_ || on.blockDiffers));
    path.push_back(*a.peer == on(*b.peer));
    return ask(path, overlap(a, b, on), {}, "disjoint").result == z3::unsat;
  }

  static bool isPut(const GlobalAccess &a) {
    return a.call && idOf(*a.call) == IntrinsicId::DevicePut && a.peer;
  }

  // Another access of x's tensor (a write when `writes`; no put: puts are
  // the disjointness's) by device `dev`, in the same CTA or (Other) a CTA of
  // another blockIdx, that reaches an element x reaches on the device x
  // reaches. Device barriers order none of those by other CTAs.
  struct Touch {
    const GlobalAccess *other = nullptr;
    std::optional<z3::model> model; // none: Z3 gave up
  };
  std::optional<Touch> touched(const GlobalAccess &x, bool writes, Cta cta,
                               std::optional<z3::expr> dev = std::nullopt) {
    z3::expr reach = x.peer ? *x.peer : *devid_;
    for (const GlobalAccess &a : accesses_) {
      if (a.tensor != x.tensor || (writes && !a.write) || isPut(a) || &a == &x)
        continue;
      z3::expr d = dev ? *dev : enc_.fresh("devid!");
      Renamed on = rename(a, d, cta);
      std::vector<z3::expr> path = x.path;
      for (const z3::expr &c : a.path)
        path.push_back(on(c));
      path.insert(path.end(), on.facts.begin(), on.facts.end());
      path.push_back(reach >= 0 && reach < *ndev_ && d >= 0 && d < *ndev_);
      path.push_back((a.peer ? on(*a.peer) : d) == reach);
      if (x.peer && cta == Cta::Same)
        path.push_back(*x.peer != *devid_); // a put into the own memory is program order
      Answer r = ask(path, overlap(x, a, on), {}, "touch");
      if (r.result != z3::unsat)
        return Touch{&a, r.model};
    }
    return std::nullopt;
  }

  // Gets that read, on the peer, nothing a CTA of another blockIdx writes
  // there: device barriers pair the CTAs of one blockIdx only, so only the
  // same CTA's writes are ordered with the read by them.
  // A write there by the same CTA is a race when the protocol finds it
  // between the same barriers (CopyRace).
  void checkGetsSameCta() {
    for (const GlobalAccess &g : accesses_) {
      if (!g.call || idOf(*g.call) != IntrinsicId::DeviceGet || !g.peer)
        continue;
      auto other = touched(g, true, Cta::Other);
      if (!other)
        report_.sameCtaGets.insert(g.call);
      if (!other || !other->model)
        other = touched(g, true, Cta::Same, *g.peer);
      if (other && other->model)
        raced(g, *other, !report_.sameCtaGets.count(g.call));
    }
  }

  void raced(const GlobalAccess &x, const Touch &t, bool otherCta) {
    bool put = idOf(*x.call) == IntrinsicId::DevicePut;
    report_.copyRaces.push_back(
        {x.call, t.other->loc, otherCta, x.inexact.empty() && t.other->inexact.empty(),
         fmt::format("'{}' {} '{}' {} device {} and {} of it there{}, which no device barrier "
                     "orders: for {}",
                     x.what.substr(1, x.what.size() - 2), put ? "into" : "of", x.tensor->name,
                     put ? "of" : "from", ProtoEncoder::text(*t.model, *x.peer),
                     t.other->write ? "a write" : "a read",
                     otherCta ? " by a CTA of another blockIdx" : " between the same device barriers",
                     witness(*t.model, x.loops))});
  }

  // Puts into a tensor that no two devices (or CTAs of two blockIdx) make
  // onto one element of one peer, and whose elements no CTA of another
  // blockIdx accesses there: the device protocol orders them against the
  // tensor's other accesses by the device barriers. A CTA of another
  // blockIdx that does is a race (no barrier pairs them), and so is the
  // owner's access by the same blockIdx if the protocol finds it between the
  // same barriers: both reported with the witness (CopyRace).
  void checkPuts() {
    std::map<const Param *, std::vector<const GlobalAccess *>> into;
    for (const GlobalAccess &a : accesses_)
      if (isPut(a))
        into[a.tensor].push_back(&a);
    for (const auto &[tensor, puts] : into) {
      bool all = true;
      for (size_t i = 0; all && i < puts.size(); ++i)
        for (size_t j = i; all && j < puts.size(); ++j)
          all = disjoint(*puts[i], *puts[j]);
      for (const GlobalAccess *p : puts) {
        if (all)
          report_.disjointPuts.insert(p->call);
        auto other = touched(*p, false, Cta::Other);
        if (!other)
          report_.sameCtaPuts.insert(p->call);
        if (!other || !other->model)
          other = touched(*p, false, Cta::Same, *p->peer);
        if (other && other->model)
          raced(*p, *other, !report_.sameCtaPuts.count(p->call));
      }
    }
  }

  const Kernel &kernel_;
  z3::expr thread_;
  std::optional<z3::expr> ndev_, devid_;
  std::vector<z3::expr> facts_;
  std::vector<std::pair<std::string, z3::expr>> loops_;
  std::vector<z3::expr> iters_;
  const CallStmt *call_ = nullptr;
  std::vector<GlobalAccess> accesses_;
  std::vector<Peer> peers_;
  std::vector<std::pair<GlobalAccess, GlobalAccess>> moves_; // (src, dst) of a put / get
  unsigned queries_ = 0, renamed_ = 0;
  PeerAccessReport report_;
};

} // namespace

std::string PeerAccessReport::summary() const {
  std::string out = fmt::format("{} global access{} inside the instances of the devices they reach",
                                accesses, accesses == 1 ? "" : "es");
  if (peerAccesses)
    out += fmt::format(" ({} to a peer)", peerAccesses);
  if (placedMoves)
    out += fmt::format(", {} peer cop{} moving each logical element onto itself", placedMoves,
                       placedMoves == 1 ? "y" : "ies");
  return out;
}

PeerAccessReport checkPeerAccesses(const Kernel &kernel) {
  if (kernel.launch.devices.empty())
    return {};
  try {
    Checker c(kernel);
    PeerAccessReport r = c.run();
    return r;
  } catch (const z3::exception &e) {
    PeerAccessReport r;
    r.applies = true;
    r.notProved.push_back({kernel.loc, fmt::format("Z3 failed: {}", e.msg())});
    return r;
  }
}

unsigned reportPeerAccesses(const PeerAccessReport &report, Diagnostics &diag) {
  for (const PeerAccessFinding &f : report.findings)
    diag.error(f.loc, f.message);
  for (const auto &[loc, why] : report.notProved)
    diag.warning(loc, "not proved: " + why);
  return unsigned(report.findings.size());
}

} // namespace tilescope
