#include "codegen/DeviceEmitter.h"

#include "ir/DeviceScale.h"
#include "ir/Dtype.h"
#include "ir/Placement.h"
#include "ir/Printer.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace tilescope::codegen {

namespace {

struct Refusal {
  llvm::SMLoc loc;
  std::string why;
};

class DeviceKernelEmitter {
public:
  DeviceKernelEmitter(const Kernel &k) : k_(k) {
    for (const Param &p : k.params) {
      if (p.isTensor) {
        tensors_[p.name] = &p;
        for (const Expr &d : p.shape)
          if (d->kind == ExprKind::Var && !symbolSet_.count(as<Var>(d).name)) {
            symbolSet_.insert(as<Var>(d).name);
            symbols_.push_back(as<Var>(d).name);
          }
      }
    }
    const Expr &n = k.launch.devices.front();
    if (n->kind == ExprKind::Var)
      deviceCount_ = as<Var>(n).name;
    for (const Param &p : k.params)
      if (!p.isTensor && !p.implicit && !symbolSet_.count(p.name)) {
        symbolSet_.insert(p.name);
        symbols_.push_back(p.name);
      }
  }

  std::optional<Refusal> refusal;

  // An integer expression as C++ (long long), in the kernel (`device`) or the
  // host launcher.
  std::string expr(const Expr &e, bool device) {
    switch (e->kind) {
    case ExprKind::IntImm:
      return fmt::format("{}LL", as<IntImm>(e).value);
    case ExprKind::BoolImm:
      return as<BoolImm>(e).value ? "true" : "false";
    case ExprKind::Var: {
      const std::string &n = as<Var>(e).name;
      if (n == "devid")
        return device ? "(long long)ts_args.rank" : "(long long)comm->rank";
      if (n == "ndev" || n == deviceCount_)
        return device ? "(long long)ts_args.ndev" : "(long long)comm->ndev";
      if (lets_.count(n) || symbolSet_.count(n))
        return n;
      refuse(e->loc, fmt::format("'{}' is not a shape symbol, scalar or let", n));
      return "0";
    }
    case ExprKind::Builtin:
      if (device && as<Builtin>(e).which == BuiltinKind::blockIdx_x)
        return "ts_bx";
      refuse(e->loc, fmt::format("the device lowering reads only blockIdx.x of the builtins, not "
                                 "'{}'",
                                 builtinName(as<Builtin>(e).which)));
      return "0";
    case ExprKind::Unary: {
      const Unary &u = as<Unary>(e);
      return fmt::format("({}{})", u.op == UnaryOp::Neg ? "-" : "!", expr(u.operand, device));
    }
    case ExprKind::Binary: {
      const Binary &b = as<Binary>(e);
      static const std::map<BinaryOp, const char *> ops = {
          {BinaryOp::Add, "+"}, {BinaryOp::Sub, "-"}, {BinaryOp::Mul, "*"}, {BinaryOp::Div, "/"},
          {BinaryOp::Mod, "%"}, {BinaryOp::Lt, "<"},  {BinaryOp::Le, "<="}, {BinaryOp::Gt, ">"},
          {BinaryOp::Ge, ">="}, {BinaryOp::Eq, "=="}, {BinaryOp::Ne, "!="}, {BinaryOp::And, "&&"},
          {BinaryOp::Or, "||"}};
      return fmt::format("({} {} {})", expr(b.lhs, device), ops.at(b.op), expr(b.rhs, device));
    }
    default:
      refuse(e->loc, "the device lowering takes integer arithmetic only here");
      return "0";
    }
  }

  // A region operand: the tensor, its first element and its element count.
  struct Tile {
    const Param *tensor = nullptr;
    std::string first, count; // C++ (device)
  };
  std::optional<Tile> tile(const Expr &e) {
    Tile t;
    Expr base = e;
    std::vector<Subscript> subs;
    if (e->kind == ExprKind::Index) {
      base = as<Index>(e).base;
      subs = as<Index>(e).subscripts;
    }
    if (base->kind != ExprKind::Var || !tensors_.count(as<Var>(base).name)) {
      refuse(e->loc, "a device collective's operands are regions of tensor parameters");
      return std::nullopt;
    }
    t.tensor = tensors_.at(as<Var>(base).name);
    const std::vector<Expr> &shape = t.tensor->shape;
    std::string whole = "1LL";
    for (const Expr &d : shape)
      whole = fmt::format("({} * {})", whole, expr(d, true));
    if (subs.empty() || std::all_of(subs.begin(), subs.end(),
                                    [](const Subscript &s) { return s.kind == Subscript::Full; })) {
      t.first = "0LL";
      t.count = whole;
      return t;
    }
    if (shape.size() != 1 || subs.size() != 1) {
      refuse(e->loc, "the device lowering takes whole tensors or ranges of 1-D tensors");
      return std::nullopt;
    }
    const Subscript &s = subs[0];
    if (s.kind == Subscript::Extent) {
      t.first = expr(s.begin, true);
      t.count = expr(s.end, true);
    } else if (s.kind == Subscript::Range) {
      t.first = expr(s.begin, true);
      t.count = fmt::format("({} - {})", expr(s.end, true), t.first);
    } else {
      refuse(e->loc, "a device collective moves a range, not one element");
      return std::nullopt;
    }
    return t;
  }

  void refuse(llvm::SMLoc loc, std::string why) {
    if (!refusal)
      refusal = Refusal{loc, std::move(why)};
  }

  std::optional<std::string> emit(LoweredDeviceKernel &out) {
    out.name = k_.name;
    if (k_.launch.grid.size() != 1 && !allOnes(k_.launch.grid)) {
      refuse(k_.launch.loc, "the device lowering takes a one-dimensional grid");
      return std::nullopt;
    }
    std::string body;
    for (const Stmt &s : k_.body) {
      if (s->kind == StmtKind::Let) {
        const Let &l = as<Let>(s);
        body += fmt::format("    const long long {} = {};\n", l.name, expr(l.value, true));
        lets_.insert(l.name);
        continue;
      }
      if (s->kind != StmtKind::CallStmt || collectiveOf(idOf(as<CallStmt>(s))).empty()) {
        refuse(s->loc, "the device lowering takes kernels of lets and device collectives "
                       "(allreduce, all_gather, reduce_scatter); this statement is not one yet");
        return std::nullopt;
      }
      const CallStmt &c = as<CallStmt>(s);
      auto dst = tile(c.args.at(0).value);
      auto src = tile(c.args.at(1).value);
      if (!dst || !src)
        return std::nullopt;
      if (dst->tensor->dtype != Dtype::bf16 || src->tensor->dtype != Dtype::bf16) {
        refuse(c.loc, "the runtime's collectives move bf16 tensors");
        return std::nullopt;
      }
      std::string collective(collectiveOf(idOf(c)));
      std::string impl;
      if (const CallArg *a = c.keyword("impl"); a && a->value->kind == ExprKind::StringImm)
        impl = as<StringImm>(a->value).value;
      // The tile's size when constant decides the dispatch here; the launcher
      // checks the rest (the device count is known at run time only).
      std::optional<int64_t> elements;
      if (const Expr &e = c.args.at(1).value; e->kind == ExprKind::Index) {
        const Subscript &s0 = as<Index>(e).subscripts.front();
        if (s0.kind == Subscript::Extent)
          elements = constantValue(s0.end);
      }
      std::string why;
      // An allreduce without `impl =` whose tile both implementations take:
      // the launcher picks one by the device count and the call's size
      // (allreduceChoice, ir/DeviceScale.h), which only the run knows.
      if (impl.empty() && collective == "allreduce" &&
          collectiveRefusal(collective, "one_shot", elements.value_or(8), 2, 0).empty() &&
          collectiveRefusal(collective, "two_shot", elements.value_or(8), 2, 0).empty()) {
        out.dispatchChoices.push_back(fmt::format(
            "{}: one_shot or two_shot, by the device count and the call's bytes per device",
            c.callee));
        body += fmt::format("    // {}, one_shot or two_shot (ts_impl)\n",
                            print(c.args.at(0).value) + " <- " + c.callee + "(" +
                                print(c.args.at(1).value) + ")");
        std::string operands =
            fmt::format("ts_args, {}_off + (size_t)({}) * 2, {}_off + (size_t)({}) * 2, "
                        "(size_t)({}) / 8, ts_part, ts_split",
                        dst->tensor->name, dst->first, src->tensor->name, src->first, src->count);
        body += fmt::format("    if (ts_impl == 0)\n      ts_dev::allreduceOneShotTile({});\n"
                            "    else\n      ts_dev::allreduceTwoShotTile({});\n",
                            operands, operands);
        autoTiles_.push_back(src->count);
        checks_.push_back(fmt::format("({}) % 8 == 0", src->count));
        continue;
      }
      if (impl.empty()) {
        for (const CollectiveImpl &ci : collectiveImpls()) {
          if (ci.collective != collective)
            continue;
          why = collectiveRefusal(collective, ci.name, elements.value_or(8), 2, 0);
          if (why.empty()) {
            impl = ci.name;
            break;
          }
        }
      } else {
        why = collectiveRefusal(collective, impl, elements.value_or(8), 2, 0);
        if (!why.empty()) {
          refuse(c.loc, fmt::format("{} implementation '{}' refuses: {}", c.callee, impl, why));
          return std::nullopt;
        }
      }
      if (impl.empty()) {
        refuse(c.loc, fmt::format("no implementation of {} accepts this call: {}", c.callee, why));
        return std::nullopt;
      }
      static const std::map<std::string, const char *> fns = {
          {"allreduce.one_shot", "allreduceOneShotTile"},
          {"allreduce.two_shot", "allreduceTwoShotTile"},
          {"reduce_scatter.one_shot", "reduceScatterTile"},
          {"all_gather.push", "allGatherTile"}};
      std::string key = collective + "." + impl;
      out.dispatchChoices.push_back(fmt::format("{}: {}", c.callee, impl));
      body += fmt::format("    // {}\n", print(c.args.at(0).value) + " <- " + c.callee + "(" +
                                             print(c.args.at(1).value) + "), " + impl);
      body += fmt::format(
          "    ts_dev::{}(ts_args, {}_off + (size_t)({}) * 2, {}_off + (size_t)({}) "
          "* 2, (size_t)({}) / 8, ts_part, ts_split);\n",
          fns.at(key), dst->tensor->name, dst->first, src->tensor->name, src->first, src->count);
      std::string check = fmt::format(
          "({}) % (8 * {}) == 0", src->count,
          impl == "two_shot" || collective == "reduce_scatter" ? "(long long)ts_args.ndev" : "1LL");
      checks_.push_back(check);
    }
    if (refusal)
      return std::nullopt;
    std::string params, args, hostParams, hostArgs;
    for (const Param &p : k_.params)
      if (p.isTensor) {
        params += fmt::format(", size_t {}_off", p.name);
        hostParams += fmt::format(", size_t {}", p.name);
        hostArgs += fmt::format(", ts_dev::kDataOffset + {}", p.name);
        out.launcher.push_back({p.name, LauncherParam::Kind::Offset, "size_t"});
      }
    for (const std::string &s : symbols_) {
      params += fmt::format(", long long {}", s);
      hostParams += fmt::format(", long long {}", s);
      hostArgs += ", " + s;
      out.launcher.push_back({s, LauncherParam::Kind::Int, "long long"});
    }
    std::string tiles = expr(k_.launch.grid.front(), false);
    std::string where = "true";
    for (const Expr &c : k_.constraints)
      where += " && " + expr(c, false);
    std::string tileChecks;
    for (const std::string &c : checks_)
      tileChecks += fmt::format("    if (!({})) {{\n      ts_ok = false;\n    }}\n", c);
    if (refusal)
      return std::nullopt;
    std::string text;
    text += fmt::format("// kernel {}: {} threads, the IR grid's {} tiles run persistently\n",
                        k_.name, k_.launch.threads, print(k_.launch.grid.front()));
    text += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}(ts_dev::CallArgs "
                        "ts_args, long long ts_tiles, int ts_split, int ts_impl{}) {{\n",
                        k_.launch.threads, k_.name, params);
    text += "  int ts_part = blockIdx.x % ts_split;\n";
    text += "  ts_dev::blockBarrier(ts_args, 0);\n";
    text += "  for (long long ts_bx = blockIdx.x / ts_split; ts_bx < ts_tiles;\n"
            "       ts_bx += gridDim.x / ts_split) {\n";
    text += body;
    text += "  }\n  ts_dev::blockBarrier(ts_args, 1);\n}\n\n";
    text += fmt::format("// Returns 0 when launched, 2 when the arguments break the kernel's "
                        "`where` clause\n// or a tile's chunking, 1 on a CUDA error.\n");
    for (const Param &p : k_.params)
      if (p.placement)
        text += "// " + placementNote(k_, p) + "\n";
    text += fmt::format("extern \"C\" int tilescope_launch_{}(ts_dev::Communicator *comm{}, "
                        "cudaStream_t stream) {{\n",
                        k_.name, hostParams);
    text += fmt::format("  if (!({})) {{\n    std::fprintf(stderr, \"{}: the arguments break its "
                        "where clause\\n\");\n    return 2;\n  }}\n",
                        where, k_.name);
    text += fmt::format("  long long ts_tiles = {};\n", tiles);
    // The chunking checks read tile 0's extents (constant across tiles).
    text += "  {\n    ts_dev::CallArgs ts_args;\n    ts_args.ndev = comm->ndev;\n"
            "    bool ts_ok = true;\n";
    text += tileChecks;
    text +=
        fmt::format("    if (!ts_ok) {{\n      std::fprintf(stderr, \"{}: a tile does not split "
                    "into 16-byte vectors per device\\n\");\n      return 2;\n    }}\n  }}\n",
                    k_.name);
    text += "  int ts_split = 1, ts_grid = ts_dev::persistentGrid(*comm, ts_tiles, ts_split);\n";
    text += autoChoice();
    text += fmt::format("  {}<<<ts_grid, {}, 0, stream>>>(ts_dev::nextCall(*comm), ts_tiles, "
                        "ts_split, ts_impl{});\n",
                        k_.name, k_.launch.threads, hostArgs);
    text += "  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n}\n\n";
    return text;
  }

private:
  // The launcher's choice for the allreduces without `impl =` (ts_impl: 0
  // one_shot, 1 two_shot): allreduceChoice's table by the device count, on
  // the call's bytes per device; two_shot only where every tile splits into
  // ndev chunks of 16-byte vectors, one_shot only on tiles of 1 MiB at most
  // (the refusals of collectiveRefusal).
  std::string autoChoice() const {
    if (autoTiles_.empty())
      return "  int ts_impl = 0;\n";
    std::string out = "  int ts_impl = 0;\n";
    std::string table;
    for (int64_t n = 0; n <= kMaxDevices; ++n)
      table += fmt::format("{}{}LL", n ? ", " : "", oneShotMaxBytes(n));
    std::string bytes = "0LL", chunked = "true", small = "true";
    for (const std::string &t : autoTiles_) {
      bytes += fmt::format(" + ts_tiles * ({}) * 2", t);
      chunked += fmt::format(" && ({}) % (8 * (long long)comm->ndev) == 0", t);
      small += fmt::format(" && ({}) * 2 <= {}LL", t, int64_t{1} << 20);
    }
    out += "  // allreduce without impl: one_shot up to these bytes per device, by the\n"
           "  // device count (ir/DeviceScale.h, allreduceChoice)\n";
    out += fmt::format("  static const long long ts_one_shot_max[{}] = {{{}}};\n", kMaxDevices + 1,
                       table);
    out += "  {\n    ts_dev::CallArgs ts_args;\n    ts_args.ndev = comm->ndev;\n";
    out += fmt::format("    long long ts_bytes = {};\n    bool ts_chunked = {}, ts_small = {};\n",
                       bytes, chunked, small);
    out += "    ts_impl = ts_bytes <= ts_one_shot_max[comm->ndev] ? 0 : 1;\n"
           "    if (ts_impl == 1 && !ts_chunked)\n      ts_impl = 0;\n"
           "    if (ts_impl == 0 && !ts_small)\n      ts_impl = 1;\n"
           "    if (ts_impl == 1 && !ts_chunked) {\n";
    out += fmt::format("      std::fprintf(stderr, \"{}: no allreduce takes these tiles on %d "
                       "devices\\n\", comm->ndev);\n      return 2;\n    }}\n  }}\n",
                       k_.name);
    out += "  comm->lastImpl = ts_impl ? \"two_shot\" : \"one_shot\";\n";
    return out;
  }

  static bool allOnes(const std::vector<Expr> &grid) {
    for (size_t i = 1; i < grid.size(); ++i)
      if (constantValue(grid[i]) != 1)
        return false;
    return true;
  }

  const Kernel &k_;
  std::map<std::string, const Param *> tensors_;
  std::vector<std::string> symbols_;
  std::set<std::string> symbolSet_, lets_;
  std::string deviceCount_;
  std::vector<std::string> checks_;
  std::vector<std::string> autoTiles_; // element counts of the allreduces without impl
};

} // namespace

bool collectivesOnly(const Kernel &kernel) {
  for (const Stmt &s : kernel.body) {
    if (s->kind == StmtKind::Let)
      continue;
    if (s->kind != StmtKind::CallStmt)
      return false;
    if (collectiveOf(idOf(as<CallStmt>(s))).empty())
      return false;
  }
  return true;
}

std::optional<LoweredDevices> lowerDeviceKernels(const Module &module, Diagnostics &diag,
                                                 const std::string &kernelName) {
  LoweredDevices out;
  out.source = "// Lowered by tilescope: devices(N) kernels on the device-scale runtime\n"
               "// (codegen/runtime/ts_devices.cuh; compile with -I to it). One process per\n"
               "// GPU; tensors live in the symmetric regions of a ts_dev::Communicator.\n"
               "#include \"ts_devices.cuh\"\n\n#include <cstdio>\n\n";
  bool ok = true;
  for (const Kernel &k : module.kernels) {
    if ((!kernelName.empty() && k.name != kernelName) || k.launch.devices.empty())
      continue;
    DeviceKernelEmitter e(k);
    LoweredDeviceKernel lk;
    auto text = e.emit(lk);
    if (!text) {
      diag.error(e.refusal ? e.refusal->loc : k.loc,
                 fmt::format("cannot lower '{}' for devices: {}", k.name,
                             e.refusal ? e.refusal->why : "unsupported"));
      ok = false;
      continue;
    }
    out.source += *text;
    out.kernels.push_back(std::move(lk));
  }
  if (!ok)
    return std::nullopt;
  return out;
}

} // namespace tilescope::codegen
