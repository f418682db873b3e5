#include "simulator/Program.h"

#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "simulator/ExprCode.h"
#include "simulator/Packed.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace tilescope::sim {

namespace {
// What a buffer's layout gives per element, kept for the next program that
// declares an equal layout over the same shape: a reward binds its kernel at
// two or three sizes, and an agent's candidates share their layouts, while
// the shapes of shared and register buffers rarely depend on the sizes.
// Building these tables (the layout's owners of every element) was 5 % of a
// full reward of the 64x128 GEMM (perf, 2026-11-26). Per thread, the last
// kMemoEntries tables of at most kMemoElements elements.
struct LayoutTables {
  Layout layout;
  std::vector<int64_t> shape;
  MemScope scope;
  Dtype dtype;
  int64_t threads;
  int64_t maxM = -1;
  std::vector<int64_t> mOf;                        // shared: the m of each element's base
  std::vector<int32_t> ownerStart;                 // registers: BufferPlan's owner table
  std::vector<std::pair<int32_t, int32_t>> owners; // ...
};
constexpr size_t kMemoEntries = 32;
constexpr int64_t kMemoElements = int64_t{1} << 20;

std::deque<LayoutTables> &layoutMemo() {
  thread_local std::deque<LayoutTables> memo;
  return memo;
}

const LayoutTables *findTables(const BufferPlan &plan, int64_t threads) {
  for (const LayoutTables &t : layoutMemo())
    if (t.scope == plan.scope && t.dtype == plan.dtype && t.threads == threads &&
        t.shape == plan.shape && t.layout == *plan.layout)
      return &t;
  return nullptr;
}

void keepTables(LayoutTables tables) {
  if (static_cast<int64_t>(tables.ownerStart.size() + tables.mOf.size()) > 2 * kMemoElements)
    return;
  std::deque<LayoutTables> &memo = layoutMemo();
  if (memo.size() >= kMemoEntries)
    memo.pop_front();
  memo.push_back(std::move(tables));
}
} // namespace

int64_t BufferPlan::sharedBit(int64_t flat) const {
  // Whole-byte elements: the table of sharedByte, which every shared access
  // asks (building the owner through the layout was 4 % of a GEMM reward).
  if (flat >= 0 && flat < static_cast<int64_t>(byteOf.size()) && dtypeBits(dtype) % 8 == 0)
    return byteOf[static_cast<size_t>(flat)] * 8;
  int64_t m = layout ? layout->base(flat).get(Axis::m) : flat;
  return sharedOffset * 8 + m * dtypeBits(dtype);
}

int64_t BufferPlan::sharedByteFromLayout(int64_t flat) const {
  return sharedBit(flat) / 8;
}

int64_t BufferPlan::regOf(int64_t flat, int64_t thread) const {
  if (!layout)
    return regBase + flat;
  for (int32_t k = ownerStart[flat]; k < ownerStart[flat + 1]; ++k)
    if (owners[k].first == thread)
      return regBase + owners[k].second;
  return -1;
}

int64_t Program::hostBytes() const {
  int64_t bytes = 0;
  for (const BufferPlan &b : buffers)
    bytes += static_cast<int64_t>(b.ownerStart.size() * 4 + b.owners.size() * 8 +
                                  b.byteOf.size() * 8 + b.tmemCellOf.size() * 8);
  return bytes;
}

namespace {

void collectSymbols(const Expr &e, const std::set<std::string> &scalars,
                    std::vector<std::string> &out) {
  if (!e)
    return;
  switch (e->kind) {
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (!scalars.count(n) && std::find(out.begin(), out.end(), n) == out.end())
      out.push_back(n);
    return;
  }
  case ExprKind::Unary:
    collectSymbols(as<Unary>(e).operand, scalars, out);
    return;
  case ExprKind::Binary:
    collectSymbols(as<Binary>(e).lhs, scalars, out);
    collectSymbols(as<Binary>(e).rhs, scalars, out);
    return;
  case ExprKind::Call:
    for (const Expr &a : as<Call>(e).args)
      collectSymbols(a, scalars, out);
    return;
  default:
    return;
  }
}

// Evaluates an integer expression over shape symbols and integer scalars.
class ConstEval {
public:
  ConstEval(const std::map<std::string, int64_t> &values, Diagnostics &diag)
      : values_(values), diag_(diag) {}

  std::optional<int64_t> eval(const Expr &e) {
    switch (e->kind) {
    case ExprKind::IntImm:
      return as<IntImm>(e).value;
    case ExprKind::BoolImm:
      return as<BoolImm>(e).value ? 1 : 0;
    case ExprKind::Var: {
      auto it = values_.find(as<Var>(e).name);
      if (it == values_.end()) {
        diag_.error(e->loc, fmt::format("'{}' has no value here", as<Var>(e).name));
        return std::nullopt;
      }
      return it->second;
    }
    case ExprKind::Unary: {
      auto v = eval(as<Unary>(e).operand);
      if (!v)
        return v;
      return as<Unary>(e).op == UnaryOp::Neg ? -*v : !*v;
    }
    case ExprKind::Binary: {
      const auto &b = as<Binary>(e);
      auto x = eval(b.lhs), y = eval(b.rhs);
      if (!x || !y)
        return std::nullopt;
      switch (b.op) {
      case BinaryOp::Add:
        return *x + *y;
      case BinaryOp::Sub:
        return *x - *y;
      case BinaryOp::Mul:
        return *x * *y;
      case BinaryOp::Div:
      case BinaryOp::Mod:
        if (*y == 0) {
          diag_.error(e->loc, "division by zero");
          return std::nullopt;
        }
        return b.op == BinaryOp::Div ? *x / *y : *x % *y;
      case BinaryOp::Lt:
        return *x < *y;
      case BinaryOp::Le:
        return *x <= *y;
      case BinaryOp::Gt:
        return *x > *y;
      case BinaryOp::Ge:
        return *x >= *y;
      case BinaryOp::Eq:
        return *x == *y;
      case BinaryOp::Ne:
        return *x != *y;
      case BinaryOp::And:
        return *x && *y;
      case BinaryOp::Or:
        return *x || *y;
      }
      return std::nullopt;
    }
    case ExprKind::Call: {
      const auto &c = as<Call>(e);
      if ((c.callee == "min" || c.callee == "max") && c.args.size() == 2) {
        auto x = eval(c.args[0]), y = eval(c.args[1]);
        if (!x || !y)
          return std::nullopt;
        return c.callee == "min" ? std::min(*x, *y) : std::max(*x, *y);
      }
      break;
    }
    default:
      break;
    }
    diag_.error(e->loc, "expected an integer expression of shape symbols and constants");
    return std::nullopt;
  }

private:
  const std::map<std::string, int64_t> &values_;
  Diagnostics &diag_;
};

std::array<int64_t, 6> threadCoords(int64_t t) {
  // laneid, warpid, wgid, tid_in_wg, wid_in_wg, tx (the Axis enum's order).
  std::array<int64_t, 6> c{};
  for (size_t a = 0; a < c.size(); ++a)
    c[a] = threadIndexValue(*threadIndexMap(static_cast<Axis>(a)), t);
  return c;
}

class Binder {
public:
  Binder(const Kernel &k, Program &p, Diagnostics &diag) : k_(k), p_(p), diag_(diag) {}

  bool bodyNames() {
    scopes_.emplace_back();
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param &param = k_.params[i];
      NameRef r;
      if (param.isTensor) {
        r.kind = NameRef::Buffer;
        r.index = p_.tensorParams[i];
      } else if (isFloat(param.dtype)) {
        r.kind = NameRef::FloatConst;
        r.dtype = param.dtype;
        r.floatValue = roundTo(param.dtype, p_.scalars.at(param.name));
      } else {
        r.kind = NameRef::IntConst;
        r.intValue = p_.symbols.at(param.name);
      }
      scopes_.back()[param.name] = r;
    }
    for (const auto &[name, value] : p_.symbols)
      if (!scopes_.back().count(name))
        scopes_.back()[name] = NameRef{NameRef::IntConst, 0, value};
    block(k_.body);
    return !diag_.hasErrors();
  }

private:
  void define(const std::string &name, NameRef r) { scopes_.back()[name] = r; }

  void expr(const Expr &e) {
    if (!e)
      return;
    switch (e->kind) {
    case ExprKind::Var: {
      const std::string &n = as<Var>(e).name;
      for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
        if (auto f = it->find(n); f != it->end()) {
          p_.names[e.get()] = f->second;
          return;
        }
      diag_.error(e->loc, fmt::format("'{}' is undefined", n));
      return;
    }
    case ExprKind::Unary:
      expr(as<Unary>(e).operand);
      return;
    case ExprKind::Binary:
      expr(as<Binary>(e).lhs);
      expr(as<Binary>(e).rhs);
      return;
    case ExprKind::Call:
      for (const Expr &a : as<Call>(e).args)
        expr(a);
      return;
    case ExprKind::Index:
      expr(as<Index>(e).base);
      for (const Subscript &s : as<Index>(e).subscripts) {
        expr(s.begin);
        expr(s.end);
      }
      return;
    default:
      return;
    }
  }

  void block(const Block &b) {
    scopes_.emplace_back();
    for (const Stmt &s : b)
      stmt(s);
    scopes_.pop_back();
  }

  void stmt(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::BufferDecl:
      bufferDecl(as<BufferDecl>(s), s.get());
      return;
    case StmtKind::BarrierDecl: {
      const auto &b = as<BarrierDecl>(s);
      BarrierPlan plan;
      plan.name = b.name;
      plan.loc = s->loc;
      plan.first = static_cast<int>(p_.barrierCount);
      ConstEval ce(p_.symbols, diag_);
      if (b.arraySize) {
        plan.array = true;
        plan.size = ce.eval(b.arraySize).value_or(1);
      }
      if (b.count)
        plan.count = ce.eval(b.count).value_or(1);
      if (plan.size < 1 || plan.size > 4096) {
        diag_.error(s->loc, "an mbarrier array must have 1 to 4096 elements");
        return;
      }
      p_.barrierCount += plan.size;
      define(b.name, NameRef{NameRef::Barrier, static_cast<int>(p_.barriers.size())});
      p_.barriers.push_back(std::move(plan));
      return;
    }
    case StmtKind::Let: {
      const auto &l = as<Let>(s);
      expr(l.value);
      int slot = p_.slots++;
      p_.stmtSlot[s.get()] = slot;
      define(l.name, NameRef{NameRef::Slot, slot});
      return;
    }
    case StmtKind::For: {
      const auto &f = as<For>(s);
      expr(f.begin);
      expr(f.end);
      expr(f.step);
      int slot = p_.slots++;
      p_.stmtSlot[s.get()] = slot;
      scopes_.emplace_back();
      define(f.var, NameRef{NameRef::Slot, slot});
      block(f.body);
      scopes_.pop_back();
      return;
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      expr(i.cond);
      block(i.thenBody);
      block(i.elseBody);
      return;
    }
    case StmtKind::Store:
      expr(as<Store>(s).target);
      expr(as<Store>(s).value);
      return;
    case StmtKind::CallStmt:
      for (const CallArg &a : as<CallStmt>(s).args)
        expr(a.value);
      return;
    }
  }

  void bufferDecl(const BufferDecl &b, const StmtNode *node) {
    BufferPlan plan;
    plan.name = b.name;
    plan.scope = b.scope;
    plan.dtype = b.dtype;
    plan.loc = b.loc;
    ConstEval ce(p_.symbols, diag_);
    plan.elements = 1;
    plan.elementBytes = dtypeBytes(b.dtype);
    for (const Expr &d : b.shape) {
      auto v = ce.eval(d);
      if (!v || *v < 1 || *v > (int64_t{1} << 24)) {
        diag_.error(d->loc, "a buffer dimension must be a constant in [1, 2^24]");
        return;
      }
      plan.shape.push_back(*v);
      plan.elements *= *v;
    }
    if (plan.elements > (int64_t{1} << 24)) {
      diag_.error(b.loc, fmt::format("buffer '{}' has {} elements; the simulator takes at most "
                                     "2^24 per buffer",
                                     b.name, plan.elements));
      return;
    }
    if (b.layout) {
      plan.layout = b.layout->layout;
      if (!plan.layout->admits(plan.shape)) {
        diag_.error(b.layout->loc, fmt::format("layout of '{}' does not admit its shape", b.name));
        return;
      }
    }
    if (dtypeBits(b.dtype) < 8 && b.scope == MemScope::Tmem) {
      diag_.error(b.loc, fmt::format("sub-byte element type {} in {} memory is not simulated yet",
                                     dtypeName(b.dtype), memScopeName(b.scope)));
      return;
    }
    switch (b.scope) {
    case MemScope::Shared: {
      int64_t maxM = plan.elements - 1;
      const LayoutTables *tables = plan.layout ? sharedTables(plan) : nullptr;
      if (tables)
        maxM = tables->maxM;
      // 1024-byte alignment: every swizzle mode's pattern repeats within it.
      p_.sharedBytes = (p_.sharedBytes + 1023) / 1024 * 1024;
      plan.sharedOffset = p_.sharedBytes;
      p_.sharedBytes += storageBytes(b.dtype, maxM + 1);
      if (tables && !isPacked(b.dtype)) {
        // sharedByte of each element: its base's m, past the offset.
        std::vector<int64_t> byteOf(plan.elements);
        const int64_t bits = dtypeBits(b.dtype);
        for (int64_t i = 0; i < plan.elements; ++i)
          byteOf[i] = (plan.sharedOffset * 8 + tables->mOf[i] * bits) / 8;
        plan.byteOf = std::move(byteOf);
      }
      break;
    }
    case MemScope::Reg:
      regTable(plan);
      break;
    case MemScope::Global:
      diag_.error(b.loc, "global buffers are kernel parameters; a body cannot declare one");
      return;
    case MemScope::Tmem: // allocated by tcgen05.alloc at run time
      if (plan.layout) {
        std::vector<std::pair<int32_t, int32_t>> cells(plan.elements);
        bool fits = true;
        for (int64_t i = 0; i < plan.elements && fits; ++i) {
          PhysCoord c = plan.layout->base(i);
          int64_t lane = c.get(Axis::TLane), col = c.get(Axis::TCol);
          fits = lane >= 0 && lane < 128 && col >= 0 && col < (int64_t{1} << 30);
          cells[i] = {static_cast<int32_t>(lane), static_cast<int32_t>(col)};
        }
        if (fits) // else tmemIndex computes (and reports) each element
          plan.tmemCellOf = std::move(cells);
      }
      break;
    }
    p_.stmtBuffer[node] = static_cast<int>(p_.buffers.size());
    define(b.name, NameRef{NameRef::Buffer, static_cast<int>(p_.buffers.size())});
    p_.buffers.push_back(std::move(plan));
  }

  // The largest m of any owner of any element, and the m of each element's
  // base (sharedBit without a table): from the memo, or computed and kept.
  const LayoutTables *sharedTables(const BufferPlan &plan) {
    if (const LayoutTables *t = findTables(plan, 0))
      return t;
    tables_ = LayoutTables{*plan.layout, plan.shape, plan.scope, plan.dtype, 0, -1, {}, {}, {}};
    int64_t maxM = 0;
    for (int64_t i = 0; i < plan.elements; ++i)
      plan.layout->forEachOwner(
          i, [&](const PhysCoord &c) { maxM = std::max(maxM, c.get(Axis::m)); });
    tables_.maxM = maxM;
    tables_.mOf.resize(plan.elements);
    for (int64_t i = 0; i < plan.elements; ++i)
      tables_.mOf[i] = plan.layout->base(i).get(Axis::m);
    if (plan.elements <= kMemoElements) {
      keepTables(tables_);
      return findTables(plan, 0);
    }
    return &tables_;
  }

  void regTable(BufferPlan &plan) {
    plan.regBase = p_.regsPerThread;
    if (!plan.layout) {
      plan.regCount = plan.elements;
      p_.regsPerThread += plan.regCount;
      return;
    }
    // Matching every owner against every thread must stay affordable.
    if (plan.elements * plan.layout->replicas() * p_.threads > (int64_t{1} << 30)) {
      diag_.error(plan.loc,
                  fmt::format("register tile '{}' ({} elements x {} replicas x {} "
                              "threads) is too large to simulate",
                              plan.name, plan.elements, plan.layout->replicas(), p_.threads));
      return;
    }
    if (const LayoutTables *t = findTables(plan, p_.threads)) {
      plan.ownerStart = t->ownerStart;
      plan.owners = t->owners;
      plan.regCount = t->maxM + 1;
      p_.regsPerThread += plan.regCount;
      return;
    }
    std::vector<std::array<int64_t, 6>> coords(p_.threads);
    for (int64_t t = 0; t < p_.threads; ++t)
      coords[t] = threadCoords(t);
    // The threads an owner names: those whose coordinates equal the owner's
    // on the thread axes it has. Indexed by those coordinates, one index per
    // set of axes, built when an owner first names that set.
    using Key = std::array<int64_t, 6>;
    std::map<uint32_t, std::map<Key, std::vector<int32_t>>> byAxes;
    auto threadsOf = [&](const PhysCoord &c) -> const std::vector<int32_t> * {
      uint32_t axes = c.axes & 0x3Fu;
      auto [index, fresh] = byAxes.try_emplace(axes);
      auto project = [&](const auto &value) {
        Key k{};
        for (int a = 0; a < 6; ++a)
          if (axes & (1u << a))
            k[a] = value[a];
        return k;
      };
      if (fresh)
        for (int64_t t = 0; t < p_.threads; ++t)
          index->second[project(coords[t])].push_back(static_cast<int32_t>(t));
      auto it = index->second.find(project(c.value));
      return it == index->second.end() ? nullptr : &it->second;
    };
    int64_t maxM = -1;
    plan.ownerStart.assign(plan.elements + 1, 0);
    std::vector<std::pair<int32_t, int32_t>> one;
    for (int64_t i = 0; i < plan.elements; ++i) {
      one.clear();
      plan.layout->forEachOwner(i, [&](const PhysCoord &c) {
        int64_t m = c.has(Axis::m) ? c.get(Axis::m) : 0;
        maxM = std::max(maxM, m);
        if (const std::vector<int32_t> *threads = threadsOf(c))
          for (int32_t t : *threads)
            one.emplace_back(t, static_cast<int32_t>(m));
      });
      std::sort(one.begin(), one.end());
      one.erase(std::unique(one.begin(), one.end()), one.end());
      plan.owners.insert(plan.owners.end(), one.begin(), one.end());
      plan.ownerStart[i + 1] = static_cast<int32_t>(plan.owners.size());
      if (plan.owners.size() > (size_t{1} << 27)) {
        diag_.error(plan.loc, "register layout has too many owners to simulate");
        return;
      }
    }
    plan.regCount = maxM + 1;
    p_.regsPerThread += plan.regCount;
    if (plan.elements <= kMemoElements)
      keepTables(LayoutTables{*plan.layout, plan.shape, plan.scope, plan.dtype, p_.threads, maxM,
                              {}, plan.ownerStart, plan.owners});
  }

  const Kernel &k_;
  Program &p_;
  Diagnostics &diag_;
  LayoutTables tables_; // a shared buffer's tables too large to keep
  std::vector<std::map<std::string, NameRef>> scopes_;
};

} // namespace

std::vector<std::string> shapeSymbols(const Kernel &kernel) {
  std::set<std::string> scalars;
  for (const Param &p : kernel.params)
    if (!p.isTensor)
      scalars.insert(p.name);
  std::vector<std::string> out;
  for (const Param &p : kernel.params)
    for (const Expr &d : p.shape)
      collectSymbols(d, scalars, out);
  return out;
}

std::optional<Program> bindProgram(const Kernel &kernel, const ArgValues &args, Diagnostics &diag) {
  unsigned before = diag.errorCount();
  Program p;
  p.kernel = &kernel;
  p.target = kernel.launch.target;
  for (const std::string &s : shapeSymbols(kernel)) {
    auto it = args.ints.find(s);
    if (it == args.ints.end()) {
      diag.error(kernel.loc, fmt::format("no value for shape symbol '{}' of kernel '{}' (give "
                                         "--args {}=...)",
                                         s, kernel.name, s));
      continue;
    }
    p.symbols[s] = it->second;
  }
  for (const Param &param : kernel.params) {
    if (param.isTensor)
      continue;
    if (isFloat(param.dtype)) {
      auto it = args.floats.find(param.name);
      auto iit = args.ints.find(param.name);
      if (it != args.floats.end())
        p.scalars[param.name] = it->second;
      else if (iit != args.ints.end())
        p.scalars[param.name] = static_cast<double>(iit->second);
      else
        diag.error(param.loc, fmt::format("no value for scalar '{}' (give --args {}=...)",
                                          param.name, param.name));
    } else {
      auto it = args.ints.find(param.name);
      if (it == args.ints.end())
        diag.error(param.loc, fmt::format("no value for scalar '{}' (give --args {}=...)",
                                          param.name, param.name));
      else
        p.symbols[param.name] = it->second;
    }
  }
  if (diag.errorCount() != before)
    return std::nullopt;
  ConstEval ce(p.symbols, diag);
  for (const Expr &c : kernel.constraints) {
    auto v = ce.eval(c);
    if (v && !*v) {
      std::string values;
      for (const auto &[name, value] : p.symbols)
        values += fmt::format("{}{}={}", values.empty() ? "" : ", ", name, value);
      diag.error(c->loc, fmt::format("constraint '{}' does not hold for {}", print(c), values));
    }
  }
  for (size_t i = 0; i < kernel.launch.grid.size() && i < 3; ++i) {
    auto v = ce.eval(kernel.launch.grid[i]);
    if (v && (*v < 1 || *v > (int64_t{1} << 31)))
      diag.error(kernel.launch.grid[i]->loc,
                 fmt::format("grid extent must be in [1, 2^31], not {}", *v));
    else if (v)
      p.grid[i] = *v;
  }
  // The cluster shape: constants (the checker says so); the grid must be a
  // whole number of clusters, as cudaLaunchKernelEx demands.
  for (size_t i = 0; i < kernel.launch.cluster.size() && i < 3; ++i) {
    auto v = ce.eval(kernel.launch.cluster[i]);
    if (!v)
      continue;
    if (*v < 1 || *v > 16)
      diag.error(kernel.launch.cluster[i]->loc,
                 fmt::format("cluster extent must be in [1, 16], not {}", *v));
    else if (p.grid[i] % *v != 0)
      diag.error(
          kernel.launch.cluster[i]->loc,
          fmt::format("grid extent {} is not a multiple of the cluster extent {}", p.grid[i], *v));
    else
      p.cluster[i] = *v;
  }
  p.threads = kernel.launch.threads;
  if (p.threads < 1 || p.threads > 1024)
    diag.error(kernel.launch.loc, fmt::format("threads must be in [1, 1024], not {}", p.threads));
  p.warps = warpsIn(p.threads);
  for (const Param &param : kernel.params) {
    if (!param.isTensor) {
      p.tensorParams.push_back(-1);
      continue;
    }
    BufferPlan plan;
    plan.name = param.name;
    plan.scope = MemScope::Global;
    plan.dtype = param.dtype;
    plan.loc = param.loc;
    plan.tensor = static_cast<int>(p.buffers.size());
    plan.elements = 1;
    plan.elementBytes = dtypeBytes(param.dtype);
    for (const Expr &d : param.shape) {
      auto v = ce.eval(d);
      if (!v)
        continue;
      if (*v < 1 || *v > (int64_t{1} << 30)) {
        diag.error(d->loc,
                   fmt::format("dimension of '{}' must be in [1, 2^30], not {}", param.name, *v));
        continue;
      }
      plan.shape.push_back(*v);
      plan.elements *= *v;
      if (plan.elements > (int64_t{1} << 36)) {
        diag.error(param.loc, fmt::format("tensor '{}' has more than 2^36 elements; the simulator "
                                          "holds every tensor in memory",
                                          param.name));
        break;
      }
    }
    p.tensorParams.push_back(static_cast<int>(p.buffers.size()));
    p.buffers.push_back(std::move(plan));
  }
  if (diag.errorCount() != before)
    return std::nullopt;
  Binder binder(kernel, p, diag);
  binder.bodyNames();
  if (diag.errorCount() != before)
    return std::nullopt;
  p.code = std::make_shared<const KernelCode>(compileKernel(p));
  return p;
}

} // namespace tilescope::sim
