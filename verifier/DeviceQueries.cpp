#include "verifier/DeviceQueries.h"

#include "proof/LeastWitness.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"

#include <fmt/format.h>

namespace tilescope::detail {

DeviceAnswer askDevices(ProtoEncoder &enc, const DeviceUnknowns &u,
                        const std::vector<z3::expr> &facts, const z3::expr &violation,
                        const std::vector<z3::expr> &extra, const std::string &name,
                        unsigned budgetMs) {
  z3::context &ctx = enc.ctx();
  z3::solver s(ctx);
  z3::params p(ctx);
  setSolverBudget(p, budgetMs);
  s.set(p);
  s.add(enc.assumptions());
  for (const z3::expr &f : facts)
    s.add(f);
  s.add(violation);
  DeviceAnswer out;
  out.result = checkWithinBudget(s);
  if (out.result == z3::unknown)
    out.why = fmt::format("Z3 gave up ({})", s.reason_unknown());
  if (out.result != z3::sat)
    return out;
  std::vector<z3::expr> small = {u.ndev, u.devid};
  for (const auto &[symbol, v] : enc.symbols())
    small.push_back(v);
  small.push_back(u.thread);
  small.insert(small.end(), extra.begin(), extra.end());
  z3::expr_vector lits(ctx);
  out.model = minimizeWitness(s, lits, small, name);
  return out;
}

std::string deviceWitness(const z3::model &m, const ProtoEncoder &enc, const Kernel &kernel,
                          const DeviceUnknowns &u,
                          const std::vector<std::pair<std::string, z3::expr>> &loops) {
  std::string out = fmt::format("N = {} devices, devid = {}", ProtoEncoder::text(m, u.ndev),
                                ProtoEncoder::text(m, u.devid));
  const Expr &count = kernel.launch.devices.front();
  for (const auto &[name, v] : enc.symbols())
    if (name != "ndev" && name != "devid" &&
        !(count->kind == ExprKind::Var && as<Var>(count).name == name))
      out += fmt::format(", {} = {}", name, ProtoEncoder::text(m, v));
  for (const auto &[name, v] : loops)
    out += fmt::format(", {} = {}", name, ProtoEncoder::text(m, v));
  return out;
}

} // namespace tilescope::detail
