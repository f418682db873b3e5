#include "verifier/DeviceProtocol.h"

#include "ir/DeviceScale.h"
#include "ir/Printer.h"

#include <fmt/format.h>

#include <map>
#include <set>

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

struct Walker {
  DevidDependence dep;
  std::vector<std::pair<const Expr *, llvm::SMLoc>> control; // enclosing conditions / bounds
  DeviceProtocolReport &report;
  std::set<std::string> written, read;                              // tensors the kernel accesses
  std::vector<std::pair<const CallStmt *, std::string>> gets, puts; // peer accesses
  bool flags = false;
  explicit Walker(DeviceProtocolReport &r) : report(r) {}

  void block(const Block &b) {
    for (const Stmt &s : b)
      stmt(s);
  }
  bool controlDepends() const {
    for (auto [e, loc] : control)
      if (dep.depends(*e))
        return true;
    return false;
  }
  void stmt(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::Let: {
      const Let &l = static_cast<const Let &>(*s);
      dep.bind(l.name, l.value);
      return;
    }
    case StmtKind::For: {
      const For &f = static_cast<const For &>(*s);
      control.push_back({&f.begin, f.loc});
      control.push_back({&f.end, f.loc});
      if (f.step)
        control.push_back({&f.step, f.loc});
      block(f.body);
      control.resize(control.size() - (f.step ? 3 : 2));
      return;
    }
    case StmtKind::If: {
      const If &i = static_cast<const If &>(*s);
      control.push_back({&i.cond, i.loc});
      block(i.thenBody);
      block(i.elseBody);
      control.pop_back();
      return;
    }
    case StmtKind::Store:
      written.insert(baseName(static_cast<const Store &>(*s).target));
      return;
    case StmtKind::CallStmt:
      call(static_cast<const CallStmt &>(*s));
      return;
    default:
      return;
    }
  }
  void call(const CallStmt &c) {
    // every call's first operand is written, the others read (copy, cast,
    // gemm, elementwise; the device collectives and device.get too)
    const IntrinsicId id = idOf(c);
    bool device = isDeviceCall(id);
    if (id == IntrinsicId::DevicePut) {
      puts.push_back({&c, baseName(c.args.at(0).value)});
      read.insert(baseName(c.args.at(1).value));
      return;
    }
    if (id == IntrinsicId::DeviceGet) {
      gets.push_back({&c, baseName(c.args.at(1).value)});
      written.insert(baseName(c.args.at(0).value));
      return;
    }
    if (id == IntrinsicId::DeviceSignal || id == IntrinsicId::DeviceWait) {
      if (!flags)
        report.notProved.push_back(
            {c.loc, "device flag protocol (device.signal / device.wait): its epochs and fences "
                    "are checked by `tilescope sim --races` at given device counts, not proved "
                    "for all of them"});
      flags = true;
      return;
    }
    if (id == IntrinsicId::DeviceFence)
      return;
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (!c.args[i].keyword.empty())
        continue;
      std::string name = baseName(c.args[i].value);
      if (!name.empty())
        (i == 0 ? written : read).insert(name);
    }
    if (!device)
      return;
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

DeviceProtocolReport checkDeviceProtocol(const Kernel &kernel, Diagnostics &diag) {
  DeviceProtocolReport report;
  if (kernel.launch.devices.empty())
    return report;
  report.applies = true;
  Walker w(report);
  w.block(kernel.body);
  for (auto [c, tensor] : w.gets) {
    const auto &got = tensor; // a lambda may not capture a structured binding (clang 14)
    if (w.written.count(got) ||
        std::any_of(w.puts.begin(), w.puts.end(), [&](auto &p) { return p.second == got; }))
      report.notProved.push_back(
          {c->loc, fmt::format("device.get of '{}', which the kernel also writes: whether the "
                               "write is ordered before the peer's read is left to `tilescope "
                               "sim --races`",
                               tensor)});
  }
  for (auto [c, tensor] : w.puts)
    report.notProved.push_back(
        {c->loc, fmt::format("device.put into '{}' of a peer: its order against the peer's own "
                             "accesses is left to `tilescope sim --races`",
                             tensor)});
  for (const auto &[loc, why] : report.notProved)
    diag.warning(loc, "not proved: " + why);
  report.method = report.notProved.empty()
                      ? "proved for every device count: collectives agree, peer reads are of "
                        "tensors no device writes"
                      : "not proved";
  return report;
}

} // namespace tilescope
