// The checker's calls (CheckerImpl.h): a call against its record in the
// intrinsic table, the shapes of tile primitives, the wgmma shape rule.
#include "ir/CheckerImpl.h"

#include "ir/DeviceScale.h"
#include "ir/Suggest.h"
#include <fmt/format.h>

namespace tilescope::check {

void Checker::callStmt(const CallStmt &c) {
  const IntrinsicInfo *info = findIntrinsic(c.callee);
  std::string shown = c.scope == ExecScope::Thread
                          ? c.callee
                          : std::string(execScopePrefix(c.scope)) + "." + c.callee;
  if (!info) {
    // The suggestion as the call would be written: a tile primitive keeps
    // the call's scope (`cta.reduce_summ` -> `cta.reduce_sum`), a native
    // intrinsic takes none.
    std::string hint;
    if (auto name = closestName(c.callee, intrinsicNames())) {
      const IntrinsicInfo *near = findIntrinsic(*name);
      bool scoped = c.scope != ExecScope::Thread && near && near->cls == CallClass::TilePrimitive;
      hint = fmt::format("; did you mean '{}{}'?",
                         scoped ? std::string(execScopePrefix(c.scope)) + "." : "", *name);
    }
    error(c.loc, fmt::format("unknown call '{}'{}", shown, hint));
    return;
  }
  if (info->cls == CallClass::Native && c.scope != ExecScope::Thread) {
    error(c.loc, fmt::format("'{}' is a native intrinsic and takes no scope prefix", c.callee));
    return;
  }
  if (info->id == IntrinsicId::Sync && c.scope == ExecScope::Thread) {
    error(c.loc, "'sync' needs a scope: warp.sync(), cta.sync() or cluster.sync()");
    return;
  }
  if (isDeviceCall(info->id) && kernel_->launch.devices.empty()) {
    error(c.loc, fmt::format("'{}' reaches other devices; the kernel needs `launch devices(N)`",
                             c.callee));
    return;
  }
  if (!targetHas(kernel_->launch.target, info->feature)) {
    error(c.loc,
          fmt::format("'{}' needs {}; the kernel targets {}", shown,
                      featureDescription(info->feature), targetInfo(kernel_->launch.target).name));
  }
  // Arguments: positional first, then keywords, each of the kind the table says.
  size_t positional = 0;
  std::vector<Type> types;
  std::map<std::string, bool> seen;
  auto checkKind = [&](const CallArg &arg, const ParamSpec &spec, const Type &t) {
    bool ok = false;
    switch (spec.kind) {
    case ArgKind::Buffer:
      // a device flag is one element of a global integer tensor
      ok = t.kind == Type::Region || (isDeviceCall(info->id) && spec.name == "flag" &&
                                      arg.value->kind == ExprKind::Index && t.kind == Type::Int);
      break;
    case ArgKind::Barrier:
      ok = t.kind == Type::BarrierRef;
      break;
    case ArgKind::Int:
      ok = t.kind == Type::Int;
      break;
    case ArgKind::Bool:
      ok = t.kind == Type::Bool;
      break;
    case ArgKind::Number:
      ok = t.kind == Type::Int || t.kind == Type::Float;
      break;
    case ArgKind::String:
      ok = t.kind == Type::String;
      break;
    case ArgKind::Operand:
      ok = t.kind == Type::Region || t.kind == Type::Int || t.kind == Type::Float;
      break;
    }
    static const char *kindNames[] = {
        "a buffer or region", "an mbarrier", "an integer",          "a bool",
        "a number",           "a string",    "a region or a scalar"};
    if (!ok && t.kind != Type::Invalid)
      error(arg.value->loc,
            fmt::format("argument '{}' of '{}' must be {}, not {}", spec.name, shown,
                        kindNames[static_cast<int>(spec.kind)], typeName(t)));
    // A string with enumerated values (the table's `allowed`): one of them.
    if (ok && !spec.allowed.empty() && arg.value->kind == ExprKind::StringImm &&
        std::find(spec.allowed.begin(), spec.allowed.end(), as<StringImm>(arg.value).value) ==
            spec.allowed.end()) {
      std::string values;
      for (std::string_view v : spec.allowed)
        values += fmt::format("{}'{}'", values.empty() ? "" : ", ", v);
      error(arg.value->loc, fmt::format("argument '{}' of '{}' is one of {}, not '{}'", spec.name,
                                        shown, values, as<StringImm>(arg.value).value));
      return false;
    }
    return ok;
  };
  bool argsOk = true;
  for (const CallArg &arg : c.args) {
    Type t = expr(arg.value);
    if (arg.keyword.empty()) {
      if (!seen.empty()) {
        error(arg.loc, "positional arguments come before keyword arguments");
        argsOk = false;
      } else if (positional >= info->positional.size()) {
        error(arg.loc,
              fmt::format("'{}' takes {} positional argument{}", shown, info->positional.size(),
                          info->positional.size() == 1 ? "" : "s"));
        argsOk = false;
      } else {
        argsOk &= checkKind(arg, info->positional[positional], t);
        types.push_back(t);
      }
      ++positional;
      continue;
    }
    const ParamSpec *spec = nullptr;
    for (const ParamSpec &k : info->keywords)
      if (k.name == arg.keyword)
        spec = &k;
    if (!spec) {
      std::string known;
      for (const ParamSpec &k : info->keywords)
        known += (known.empty() ? "" : ", ") + std::string(k.name);
      error(arg.loc, fmt::format("'{}' has no argument '{}'{}", shown, arg.keyword,
                                 known.empty() ? "" : " (it takes " + known + ")"));
      argsOk = false;
      continue;
    }
    if (seen[arg.keyword]) {
      error(arg.loc, fmt::format("argument '{}' given twice", arg.keyword));
      argsOk = false;
    }
    seen[arg.keyword] = true;
    argsOk &= checkKind(arg, *spec, t);
  }
  for (size_t i = positional; i < info->positional.size(); ++i)
    if (info->positional[i].required) {
      error(c.loc, fmt::format("'{}' is missing argument '{}'", shown, info->positional[i].name));
      argsOk = false;
    }
  for (const ParamSpec &k : info->keywords)
    if (k.required && !seen[std::string(k.name)]) {
      error(c.loc, fmt::format("'{}' is missing argument '{} = ...'", shown, k.name));
      argsOk = false;
    }

  // Convergence: every thread of the scope must reach the call together.
  Convergence need = std::max(convergenceOf(c.scope), info->convergence);
  for (const Control &ctl : control_) {
    if (ctl.uniform < need) {
      error(c.loc, fmt::format("'{}' must be executed by a whole {}, but it is under a condition "
                               "that can differ between threads of one {}",
                               shown, convergenceName(need), convergenceName(need)));
      int64_t group = need == Convergence::Warp        ? 32
                      : need == Convergence::Warpgroup ? 128
                                                       : kernel_->launch.threads;
      auto witness =
          ctl.cond ? divergenceWitness(ctl.cond, kernel_->launch.threads, group) : std::nullopt;
      diag_.note(ctl.loc, witness ? "the divergent condition is here: " + *witness
                                  : std::string("the divergent condition is here"));
      break;
    }
  }
  if (argsOk && info->cls == CallClass::TilePrimitive)
    primitiveShapes(c, shown, *info, types);
  if (argsOk && info->id == IntrinsicId::WgmmaMmaAsync)
    wgmmaShape(c, types);
}

// transpose_a / transpose_b of a gemm-like call (absent or not literally true: false).
std::pair<bool, bool> transposes(const CallStmt &c) {
  auto flag = [&](const char *kw) {
    const CallArg *a = c.keyword(kw);
    return a && a->value->kind == ExprKind::BoolImm && as<BoolImm>(a->value).value;
  };
  return {flag("transpose_a"), flag("transpose_b")};
}

// M, N and K of C = A x B as each operand states them (2-D regions).
struct GemmDims {
  Affine m, n, am, ak, bk, bn;
  bool agree() const { return am == m && bn == n && ak == bk; }
};
GemmDims gemmDims(const std::vector<Type> &args, bool ta, bool tb) {
  return {args[0].shape[0],          args[0].shape[1],          args[1].shape[ta ? 1 : 0],
          args[1].shape[ta ? 0 : 1], args[2].shape[tb ? 1 : 0], args[2].shape[tb ? 0 : 1]};
}

// A native wgmma.mma_async is one instruction of the MMA table
// (ir/MmaShapes.h) per step of K: for the accumulator and operand dtypes, M
// is the row's (64), N in the row's range (multiples of 8 up to 256), K a
// multiple of the row's (16 for f16/bf16, 32 for fp8); the lowering issues
// one instruction per step.
void Checker::wgmmaShape(const CallStmt &c, const std::vector<Type> &args) {
  for (size_t i = 0; i < 3; ++i)
    if (args[i].kind != Type::Region || args[i].shape.size() != 2)
      return error(c.args[i].value->loc,
                   fmt::format("'{}' operand {} must be a 2-D region", c.callee, i));
  auto [ta, tb] = transposes(c);
  GemmDims d = gemmDims(args, ta, tb);
  const Affine &m = d.m, &n = d.n, &ak = d.ak;
  if (!m.isConstant() || !n.isConstant() || !ak.isConstant() || !d.agree())
    return error(c.loc, fmt::format("shape mismatch in '{}': acc {} = A {}{} x B "
                                    "{}{} needs constant M, N and K that agree",
                                    c.callee, shapeText(args[0].shape), shapeText(args[1].shape),
                                    ta ? "^T" : "", shapeText(args[2].shape), tb ? "^T" : ""));
  const MmaShape *row =
      findMmaShape(kernel_->launch.target, *intrinsic(IntrinsicId::WgmmaMmaAsync).mma,
                   args[0].dtype, args[1].dtype, args[2].dtype);
  if (!row)
    return error(c.loc,
                 fmt::format("'{}' has no {} instruction computing {} += {} x {}", c.callee,
                             targetInfo(kernel_->launch.target).name, dtypeName(args[0].dtype),
                             dtypeName(args[1].dtype), dtypeName(args[2].dtype)));
  int64_t k = row->k, nv = n.constant;
  if (m.constant != row->m || nv < row->nMin || nv > row->nMax ||
      (nv - row->nMin) % row->nStep != 0 || ak.constant < k || ak.constant % k != 0)
    error(c.loc,
          fmt::format("'{}' issues m{}nNk{} instructions (N a multiple of {} "
                      "up to {}, K a multiple of {}), not m{}n{}k{}; use the tile "
                      "primitive 'wg.gemm' for other shapes",
                      c.callee, row->m, k, row->nStep, row->nMax, k, m.constant, nv, ak.constant));
}

void Checker::primitiveShapes(const CallStmt &c, const std::string &name, const IntrinsicInfo &info,
                              const std::vector<Type> &args) {
  const std::string &op = c.callee;
  auto loc = [&](size_t i) { return c.args[i].value->loc; };
  auto needShapes = [&](size_t i, size_t j, const char *what) {
    if (args[i].kind == Type::Region && args[j].kind == Type::Region &&
        !sameShape(args[i].shape, args[j].shape))
      error(loc(j), fmt::format("shape mismatch in '{}': {} is {} but {} is {}", name,
                                info.positional[i].name, shapeText(args[i].shape),
                                info.positional[j].name, shapeText(args[j].shape)));
    (void)what;
  };
  auto needDtype = [&](size_t i, size_t j) {
    if (args[i].kind == Type::Region && args[j].kind == Type::Region &&
        args[i].dtype != args[j].dtype)
      error(loc(j), fmt::format("dtype mismatch in '{}': {} is {} but {} is {}{}", name,
                                info.positional[i].name, dtypeName(args[i].dtype),
                                info.positional[j].name, dtypeName(args[j].dtype),
                                info.id == IntrinsicId::Copy || info.id == IntrinsicId::CopyAsync
                                    ? " (use cast)"
                                    : ""));
  };
  if (info.id == IntrinsicId::Copy || info.id == IntrinsicId::CopyAsync) {
    needShapes(0, 1, "");
    needDtype(0, 1);
    if (info.id == IntrinsicId::CopyAsync && args[0].buffer && args[1].buffer) {
      MemScope d = args[0].buffer->scope, s = args[1].buffer->scope;
      if (!((d == MemScope::Shared && s == MemScope::Global) ||
            (d == MemScope::Global && s == MemScope::Shared)))
        error(c.loc, fmt::format("copy_async moves between global and shared memory, not {} to {}",
                                 memScopeName(s), memScopeName(d)));
    }
  } else if (info.id == IntrinsicId::Cast) {
    needShapes(0, 1, "");
  } else if (info.id == IntrinsicId::Fill) {
    if (args[1].kind == Type::Float && !args[1].literal && args[1].dtype != args[0].dtype)
      error(loc(1), fmt::format("dtype mismatch in 'fill': {} value for a {} buffer",
                                dtypeName(args[1].dtype), dtypeName(args[0].dtype)));
  } else if (info.id == IntrinsicId::Gemm || info.id == IntrinsicId::GemmAsync) {
    for (size_t i = 0; i < 3; ++i)
      if (args[i].shape.size() != 2) {
        error(loc(i), fmt::format("'{}' operand {} must be 2-D, not {}", name,
                                  info.positional[i].name, shapeText(args[i].shape)));
        return;
      }
    auto [ta, tb] = transposes(c);
    if (!gemmDims(args, ta, tb).agree())
      error(c.loc, fmt::format("shape mismatch in '{}': C {} = A {}{} x B {}{} needs M, N and K "
                               "to agree",
                               name, shapeText(args[0].shape), shapeText(args[1].shape),
                               ta ? "^T" : "", shapeText(args[2].shape), tb ? "^T" : ""));
    needDtype(1, 2);
    if (args[0].dtype != Dtype::f32 && args[0].dtype != Dtype::f16)
      error(loc(0),
            fmt::format("'{}' accumulates in f32 or f16, not {}", name, dtypeName(args[0].dtype)));
  } else if (op.rfind("reduce_", 0) == 0) {
    const CallArg *axisArg = c.keyword("axis");
    if (axisArg) {
      auto axis = constantValue(axisArg->value);
      if (!axis || *axis < 0 || *axis >= static_cast<int64_t>(args[1].shape.size())) {
        error(axisArg->value->loc,
              fmt::format("reduction axis must be a constant in [0, {})", args[1].shape.size()));
        return;
      }
      std::vector<Affine> expect = args[1].shape;
      expect.erase(expect.begin() + *axis);
      if (!sameShape(expect, args[0].shape))
        error(loc(0), fmt::format("shape mismatch in '{}': reducing {} over axis {} gives {}, "
                                  "not {}",
                                  name, shapeText(args[1].shape), *axis, shapeText(expect),
                                  shapeText(args[0].shape)));
    } else if (!sameShape(args[0].shape, {})) {
      error(loc(0), fmt::format("'{}' over every axis writes one element, not {}", name,
                                shapeText(args[0].shape)));
    }
    needDtype(0, 1);
  } else if (info.positional.size() >= 2 && info.positional[1].kind == ArgKind::Operand) {
    // Elementwise: regions match the destination; scalars adapt.
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].kind == Type::Region) {
        needShapes(0, i, "");
        needDtype(0, i);
      } else if (args[i].kind == Type::Float && !args[i].literal &&
                 args[i].dtype != args[0].dtype) {
        error(loc(i), fmt::format("dtype mismatch in '{}': {} scalar for a {} destination", name,
                                  dtypeName(args[i].dtype), dtypeName(args[0].dtype)));
      }
    }
  }
}

} // namespace tilescope::check
