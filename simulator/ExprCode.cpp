#include "simulator/ExprCode.h"

#include "ir/Intrinsics.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

namespace tilescope::sim {

namespace {

class Compiler {
public:
  Compiler(const Program &p, KernelCode &code) : p_(p), code_(code) {}

  void block(const Block &b) {
    std::vector<StmtCode> out(b.size());
    for (size_t i = 0; i < b.size(); ++i)
      out[i] = stmt(b[i]);
    code_.blocks[&b] = std::move(out);
  }

private:
  StmtCode stmt(const Stmt &s) {
    StmtCode c;
    switch (s->kind) {
    case StmtKind::BufferDecl:
    case StmtKind::BarrierDecl:
      break;
    case StmtKind::Let:
      c.slot = p_.stmtSlot.at(s.get());
      c.value = expr(as<Let>(s).value);
      setSlotUniform(c.slot, uniform(c.value));
      break;
    case StmtKind::Store: {
      const auto &st = as<Store>(s);
      c.value = expr(st.value);
      if (st.target->kind == ExprKind::Index)
        c.target = expr(st.target);
      c.fused = fuse(c);
      break;
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      c.value = expr(i.cond);
      block(i.thenBody);
      block(i.elseBody);
      c.body = code_.blocks.at(&i.thenBody).data();
      c.elseBody = code_.blocks.at(&i.elseBody).data();
      break;
    }
    case StmtKind::For: {
      const auto &f = as<For>(s);
      c.slot = p_.stmtSlot.at(s.get());
      c.value = expr(f.begin);
      c.end = expr(f.end);
      c.step = expr(f.step);
      // Lanes that enter with the same bounds step together and leave together.
      c.uniformLoop = uniform(c.value) && uniform(c.end) && uniform(c.step);
      setSlotUniform(c.slot, c.uniformLoop);
      block(f.body);
      c.body = code_.blocks.at(&f.body).data();
      c.fusedBody = c.uniformLoop && fusedLoopBody(code_.blocks.at(&f.body), c.slot);
      break;
    }
    case StmtKind::CallStmt:
      for (const CallArg &a : as<CallStmt>(s).args)
        expr(a.value);
      break;
    }
    return c;
  }

  // A slot is written by one let or loop only (bindProgram gives each its
  // own), and read only in that statement's block after it, with a subset of
  // the lanes that wrote it: a uniform value there stays uniform where read.
  void setSlotUniform(int slot, bool u) {
    if (static_cast<size_t>(slot) >= slotUniform_.size())
      slotUniform_.resize(slot + 1, false);
    slotUniform_[slot] = u;
  }

  bool uniform(int op) const { return op >= 0 && code_.ops[op].uniform; }

  bool allUniform(const std::vector<int> &ops) const {
    for (int op : ops)
      if (!uniform(op))
        return false;
    return true;
  }

  static bool uniformBuiltin(BuiltinKind b) {
    return isWarpUniformBuiltin(b);
  }

  // An f32 element of a global tensor or of private registers whose
  // subscripts are 1 to 3 points that cannot fail.
  bool fusableLoad(int op) const {
    if (op < 0 || code_.ops[op].kind != OpKind::Load)
      return false;
    const ExprOp &o = code_.ops[op];
    if (o.buffer < 0 || !o.pointsInfallible || o.args.empty() || o.args.size() > 3)
      return false;
    const BufferPlan &b = p_.buffers[o.buffer];
    // Strides below 2^32 elements: the lane offsets use 32-bit products.
    int64_t strideOfFirst = 1;
    for (size_t d = 1; d < b.shape.size(); ++d)
      strideOfFirst *= b.shape[d];
    return b.dtype == Dtype::f32 && (b.scope == MemScope::Global || b.scope == MemScope::Reg) &&
           strideOfFirst <= int64_t{UINT32_MAX};
  }

  // Whether every slot an operation reads is warp-uniform.
  bool slotsUniform(int op) const {
    const ExprOp &o = code_.ops[op];
    if (o.kind == OpKind::Slot)
      return o.uniform;
    for (int arg : o.args)
      if (arg >= 0 && !slotsUniform(arg))
        return false;
    return true;
  }

  // Every slot an infallible (hence pure) operation reads.
  void slotsOf(int op, FusedAccess &a) const {
    const ExprOp &o = code_.ops[op];
    if (o.kind == OpKind::Slot) {
      for (int i = 0; i < a.slotCount; ++i)
        if (a.slots[i] == o.slot)
          return;
      if (a.slotCount == static_cast<int>(a.slots.size())) {
        a.cacheable = false;
        return;
      }
      a.slots[a.slotCount++] = o.slot;
      return;
    }
    for (int arg : o.args)
      if (arg >= 0)
        slotsOf(arg, a);
  }

  // `inRange` turns false for a constant subscript out of range: such a
  // statement is left to the general path, which reports it.
  FusedAccess access(int op, bool &inRange) {
    const ExprOp &o = code_.ops[op];
    const BufferPlan &b = p_.buffers[o.buffer];
    FusedAccess a;
    a.load = op;
    a.global = b.scope == MemScope::Global;
    a.tensor = b.tensor;
    a.regBase = b.regBase;
    a.dims = static_cast<int>(o.args.size());
    a.owned = b.scope == MemScope::Reg && !b.privateRegs();
    a.buffer = o.buffer;
    a.byValue = a.owned;
    int64_t stride = 1;
    for (int d = a.dims; d-- > 0;) {
      a.subscript[d] = o.args[d];
      // An owned element's register is no linear function of its subscripts.
      a.uniform[d] = !a.owned && uniform(o.args[d]);
      a.byValue &= slotsUniform(o.args[d]);
      const ExprOp &point = code_.ops[o.args[d]];
      if (a.owned) {
        a.extent[d] = b.shape[d];
        a.stride[d] = stride;
        stride *= b.shape[d];
        if (point.kind == OpKind::Constant)
          inRange &= point.constant.lane[0].i >= 0 && point.constant.lane[0].i < b.shape[d];
        slotsOf(o.args[d], a);
        continue;
      }
      a.extent[d] = b.shape[d];
      a.stride[d] = stride;
      stride *= b.shape[d];
      const ExprOp &sub = code_.ops[o.args[d]];
      if (sub.kind == OpKind::Constant) {
        const int64_t i = sub.constant.lane[0].i;
        inRange &= i >= 0 && i < b.shape[d];
        a.constantOffset += i * a.stride[d];
      } else if (a.uniform[d] && sub.kind == OpKind::Slot) {
        a.uniformSlots[a.uniformSlotCount++] = {sub.slot, d};
      } else if (a.uniform[d]) {
        a.uniformEvaluated[a.uniformEvaluatedCount++] = d;
      }
      if (!a.uniform[d])
        slotsOf(o.args[d], a);
    }
    a.cache = code_.fusedAccesses++;
    return a;
  }

  // A loop body the fused loop runs (FusedLoop.cpp): fused stores only, which
  // write no slot, so within the body only the counter changes; every access
  // reads the counter, if at all, as a whole uniform subscript (its address
  // then moves by a fixed stride per step) and never in a varying one (its
  // lane offsets stay valid for the whole loop).
  bool fusedLoopBody(const std::vector<StmtCode> &body, int counter) const {
    if (body.empty() || body.size() > kMaxFusedLoopStores)
      return false;
    for (const StmtCode &s : body) {
      const FusedStore &f = s.fused;
      if (f.shape == FusedStore::Shape::None)
        return false;
      for (int i = 0; i < 4; ++i) {
        if (i < 3 && i < f.operands && f.evaluated[i] >= 0)
          return false;
        if (i < 3 && (i >= f.operands || f.isConstant[i]))
          continue;
        const FusedAccess &a = f.access[i];
        if (a.uniformEvaluatedCount > 0 || !a.cacheable || a.owned)
          return false;
        for (int k = 0; k < a.slotCount; ++k)
          if (a.slots[k] == counter)
            return false;
      }
    }
    return true;
  }

  // An operation that reads registers, slots, builtins and constants only,
  // through arithmetic (no call, no load of any other memory).
  bool registerArithmetic(int op) const {
    if (op < 0)
      return false;
    const ExprOp &o = code_.ops[op];
    switch (o.kind) {
    case OpKind::Constant:
    case OpKind::Slot:
    case OpKind::Builtin:
      return true;
    case OpKind::Load:
      if (o.buffer < 0 || p_.buffers[o.buffer].scope != MemScope::Reg)
        return false;
      break;
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Fma:
      break;
    default:
      return false;
    }
    for (int arg : o.args)
      if (!registerArithmetic(arg))
        return false;
    return true;
  }

  bool fusableEvaluated(int op) const {
    return op >= 0 && code_.ops[op].kind != OpKind::Load && code_.ops[op].kind != OpKind::Constant &&
           registerArithmetic(op);
  }

  // A float literal or an f32 scalar: next to an f32 operand the general path
  // computes with it rounded to f32 (binaryInto, evalFma), as a fused
  // operand does. Integers are left out (they stop the contraction).
  bool fusableConstant(int op) const {
    if (op < 0 || code_.ops[op].kind != OpKind::Constant)
      return false;
    const LaneValues &c = code_.ops[op].constant;
    return c.kind == ValueKind::Literal || (c.kind == ValueKind::Float && c.dtype == Dtype::f32);
  }

  FusedStore fuse(const StmtCode &c) {
    FusedStore f;
    if (!fusableLoad(c.target) || c.value < 0)
      return f;
    const ExprOp &v = code_.ops[c.value];
    // Every operand a fusable load or constant, at least one a load (or the
    // arithmetic would be the literals' double precision).
    auto operandsFusable = [&](size_t n) {
      if (v.args.size() != n)
        return false;
      bool load = false;
      for (int a : v.args) {
        load |= fusableLoad(a);
        if (!fusableLoad(a) && !fusableConstant(a) && !(v.kind == OpKind::Fma && fusableEvaluated(a)))
          return false;
      }
      return load;
    };
    std::vector<int> operands;
    if (fusableLoad(c.value) || fusableConstant(c.value)) {
      f.shape = FusedStore::Shape::Copy;
      operands = {c.value};
    } else if (v.kind == OpKind::Binary && operandsFusable(2) &&
               (v.binary == BinaryOp::Add || v.binary == BinaryOp::Sub ||
                v.binary == BinaryOp::Mul || v.binary == BinaryOp::Div)) {
      f.shape = FusedStore::Shape::Binary;
      f.binary = v.binary;
      operands = v.args;
    } else if (v.kind == OpKind::Fma && operandsFusable(3)) {
      f.shape = FusedStore::Shape::Fma;
      f.fmaVariant = v.binary == BinaryOp::Add ? 0 : v.mulLeft ? 1 : -1;
      operands = v.args;
    } else {
      return f;
    }
    f.operands = static_cast<int>(operands.size());
    bool inRange = true;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (fusableConstant(operands[i])) {
        f.isConstant[i] = true;
        f.constant[i] = static_cast<float>(code_.ops[operands[i]].constant.lane[0].f);
      } else if (!fusableLoad(operands[i])) {
        f.evaluated[i] = operands[i];
      } else {
        f.access[i] = access(operands[i], inRange);
      }
    }
    f.access[3] = access(c.target, inRange);
    return inRange ? f : FusedStore{};
  }

  int add(ExprOp op) {
    code_.ops.push_back(std::move(op));
    return static_cast<int>(code_.ops.size()) - 1;
  }

  static ExprOp constant(const ExprNode *ast, ValueKind kind, Dtype dtype, Scalar value) {
    ExprOp op;
    op.kind = OpKind::Constant;
    op.ast = ast;
    op.infallible = true;
    op.uniform = true;
    op.constant.kind = kind;
    op.constant.dtype = dtype;
    op.constant.lane.fill(value);
    return op;
  }

  static ExprOp error(const ExprNode *ast, llvm::SMLoc loc, std::string message) {
    ExprOp op;
    op.ast = ast;
    op.errorLoc = loc;
    op.error = std::move(message);
    return op;
  }

  bool infallible(int op) const { return op >= 0 && code_.ops[op].infallible; }

  int expr(const Expr &e) {
    if (!e)
      return -1;
    if (auto it = code_.opOf.find(e.get()); it != code_.opOf.end())
      return it->second;
    int op = build(e);
    code_.opOf[e.get()] = op;
    return op;
  }

  int build(const Expr &e) {
    const ExprNode *ast = e.get();
    switch (e->kind) {
    case ExprKind::IntImm:
      return add(constant(ast, ValueKind::Int, Dtype::i64, Scalar{.i = as<IntImm>(e).value}));
    case ExprKind::FloatImm:
      return add(constant(ast, ValueKind::Literal, Dtype::f64, Scalar{.f = as<FloatImm>(e).value}));
    case ExprKind::BoolImm:
      return add(constant(ast, ValueKind::Bool, Dtype::pred, Scalar{.i = as<BoolImm>(e).value}));
    case ExprKind::StringImm:
      return add(error(ast, e->loc, "a string is not a value"));
    case ExprKind::Var: {
      auto it = p_.names.find(ast);
      if (it == p_.names.end())
        return add(error(ast, e->loc, "unresolved name"));
      const NameRef &r = it->second;
      switch (r.kind) {
      case NameRef::Slot: {
        ExprOp op;
        op.kind = OpKind::Slot;
        op.ast = ast;
        op.infallible = true;
        op.slot = r.index;
        op.uniform = static_cast<size_t>(r.index) < slotUniform_.size() && slotUniform_[r.index];
        return add(std::move(op));
      }
      case NameRef::IntConst:
        return add(constant(ast, ValueKind::Int, Dtype::i64, Scalar{.i = r.intValue}));
      case NameRef::FloatConst:
        return add(constant(ast, ValueKind::Float, r.dtype, Scalar{.f = r.floatValue}));
      default:
        return add(error(ast, e->loc,
                         fmt::format("'{}' is a buffer or barrier, not a value", as<Var>(e).name)));
      }
    }
    case ExprKind::Builtin: {
      ExprOp op;
      op.kind = OpKind::Builtin;
      op.ast = ast;
      op.infallible = true;
      op.builtin = as<Builtin>(e).which;
      op.uniform = uniformBuiltin(op.builtin);
      return add(std::move(op));
    }
    case ExprKind::Unary: {
      int operand = expr(as<Unary>(e).operand);
      ExprOp op;
      op.kind = OpKind::Unary;
      op.ast = ast;
      op.unary = as<Unary>(e).op;
      op.args = {operand};
      op.infallible = infallible(operand);
      op.uniform = uniform(operand);
      return add(std::move(op));
    }
    case ExprKind::Binary:
      return binary(e);
    case ExprKind::Call:
      return call(e);
    case ExprKind::Index:
      return load(e);
    }
    return add(error(ast, e->loc, "unknown expression"));
  }

  int binary(const Expr &e) {
    const auto &b = as<Binary>(e);
    ExprOp op;
    op.ast = e.get();
    op.binary = b.op;
    // a * b + c: the contraction is decided per evaluation (f32 operands).
    bool lhsMul = b.lhs->kind == ExprKind::Binary && as<Binary>(b.lhs).op == BinaryOp::Mul;
    bool rhsMul = b.rhs->kind == ExprKind::Binary && as<Binary>(b.rhs).op == BinaryOp::Mul;
    if ((b.op == BinaryOp::Add || b.op == BinaryOp::Sub) && (lhsMul || rhsMul)) {
      const Binary &m = as<Binary>(lhsMul ? b.lhs : b.rhs);
      int x = expr(m.lhs), y = expr(m.rhs), other = expr(lhsMul ? b.rhs : b.lhs);
      // The operands of the fallback (unfused) evaluation, compiled too.
      expr(lhsMul ? b.lhs : b.rhs);
      op.kind = OpKind::Fma;
      op.mulLeft = lhsMul;
      op.args = {x, y, other};
      op.infallible = infallible(x) && infallible(y) && infallible(other);
      op.uniform = allUniform(op.args);
      return add(std::move(op));
    }
    int x = expr(b.lhs), y = expr(b.rhs);
    op.kind = OpKind::Binary;
    op.args = {x, y};
    // Division and remainder fail only for an integer zero divisor; by a
    // positive integer constant they cannot (nor overflow).
    const ExprOp &divisor = code_.ops[y];
    const bool positiveConstant = divisor.kind == OpKind::Constant &&
                                  divisor.constant.kind == ValueKind::Int &&
                                  divisor.constant.lane[0].i > 0;
    op.infallible = infallible(x) && infallible(y) &&
                    ((b.op != BinaryOp::Div && b.op != BinaryOp::Mod) || positiveConstant);
    op.uniform = allUniform(op.args);
    return add(std::move(op));
  }

  int call(const Expr &e) {
    const auto &c = as<Call>(e);
    ExprOp op;
    op.kind = OpKind::Call;
    op.ast = e.get();
    static const std::unordered_map<std::string, CallFn> kFunctions = {
        {"elect_sync", CallFn::ElectSync},
        {"vote_any", CallFn::VoteAny},
        {"vote_all", CallFn::VoteAll},
        {"ballot", CallFn::Ballot},
        {"shfl_xor", CallFn::ShflXor},
        {"shfl_idx", CallFn::ShflIdx},
        {"shfl_up", CallFn::ShflUp},
        {"shfl_down", CallFn::ShflDown},
        {"select", CallFn::Select},
        {"min", CallFn::Min},
        {"max", CallFn::Max},
        {"abs", CallFn::Abs},
        {"exp", CallFn::Exp},
        {"exp2", CallFn::Exp2},
        {"log", CallFn::Log},
        {"sqrt", CallFn::Sqrt},
        {"rsqrt", CallFn::Rsqrt},
        {"fma", CallFn::Fma}};
    if (auto d = dtypeFromName(c.callee)) {
      op.fn = CallFn::Convert;
      op.convertTo = *d;
    } else if (auto it = kFunctions.find(c.callee); it != kFunctions.end()) {
      op.fn = it->second;
    } else if (c.callee.rfind("shfl_", 0) == 0) {
      op.fn = CallFn::ShflDown; // any other shfl_ reads downwards, as the tree walk did
    }
    for (const Expr &a : c.args)
      op.args.push_back(expr(a));
    // Lane-dependent calls (elect_sync, shuffles, votes) are never uniform here.
    op.uniform = op.fn != CallFn::Unknown && op.fn != CallFn::ElectSync &&
                 op.fn != CallFn::VoteAny && op.fn != CallFn::VoteAll && op.fn != CallFn::Ballot &&
                 op.fn != CallFn::ShflXor && op.fn != CallFn::ShflIdx && op.fn != CallFn::ShflUp &&
                 op.fn != CallFn::ShflDown && allUniform(op.args);
    return add(std::move(op));
  }

  int load(const Expr &e) {
    const auto &x = as<Index>(e);
    ExprOp op;
    op.kind = OpKind::Load;
    op.ast = e.get();
    auto it = x.base->kind == ExprKind::Var ? p_.names.find(x.base.get()) : p_.names.end();
    if (x.base->kind != ExprKind::Var) {
      op.errorLoc = x.base->loc;
      op.error = "element access needs a buffer name";
    } else if (it == p_.names.end() || it->second.kind != NameRef::Buffer) {
      op.errorLoc = x.base->loc;
      op.error = "not a buffer";
    } else {
      op.buffer = it->second.index;
      const BufferPlan &b = p_.buffers[op.buffer];
      if (x.subscripts.size() != b.shape.size()) {
        op.buffer = -1;
        op.errorLoc = x.loc;
        op.error = fmt::format("element access to '{}' needs {} indices", b.name, b.shape.size());
      }
    }
    // Region subscripts (tile operands) are compiled too: the engine
    // evaluates them one lane at a time through KernelCode::op.
    bool allInfallible = true;
    for (const Subscript &s : x.subscripts) {
      int begin = expr(s.begin);
      expr(s.end);
      op.args.push_back(s.kind == Subscript::Point ? begin : -1);
      allInfallible &= s.kind == Subscript::Point && infallible(begin);
    }
    if (x.base->kind == ExprKind::Index)
      expr(x.base); // a chain: As[s][0 : +64, :]
    op.pointsInfallible = allInfallible;
    return add(std::move(op));
  }

  const Program &p_;
  KernelCode &code_;
  std::vector<bool> slotUniform_;
};

} // namespace

int KernelCode::op(const Expr &e) const {
  auto it = opOf.find(e.get());
  return it == opOf.end() ? -1 : it->second;
}

const StmtCode *KernelCode::block(const Block &b) const {
  auto it = blocks.find(&b);
  return it == blocks.end() ? nullptr : it->second.data();
}

KernelCode compileKernel(const Program &program) {
  KernelCode code;
  Compiler(program, code).block(program.kernel->body);
  return code;
}

} // namespace tilescope::sim
