// Internal to the device-scale proofs (verifier/PeerAccess.cpp,
// verifier/FlagEpochs.cpp): one Z3 query of a devices(N) kernel and the
// witness text of its model. Exposes z3++.h: include it only from .cpp files.
#pragma once

#include "ir/Stmt.h"
#include "proof/ProtoEncoding.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::detail {

// The unknowns every device query shares: the device count, this device's
// rank and the thread.
struct DeviceUnknowns {
  z3::expr ndev, devid, thread;
};

struct DeviceAnswer {
  z3::check_result result = z3::unknown;
  std::optional<z3::model> model;
  std::string why; // when Z3 gave up
};

// Whether `violation` can hold under the encoder's assumptions (the `where`
// clause, the symbols' ranges) and `facts`, within `budgetMs`; when it can,
// a model at the least N, devid, sizes, thread and then `extra` values
// (proof/LeastWitness.h), its literals named after `name` (unique per call).
DeviceAnswer askDevices(ProtoEncoder &enc, const DeviceUnknowns &u,
                        const std::vector<z3::expr> &facts, const z3::expr &violation,
                        const std::vector<z3::expr> &extra, const std::string &name,
                        unsigned budgetMs);

// "N = 2 devices, devid = 0, E = 256, G = 1" (the sizes but the device
// count's own name), then ", s = 1" for each of `loops`.
std::string deviceWitness(const z3::model &m, const ProtoEncoder &enc, const Kernel &kernel,
                          const DeviceUnknowns &u,
                          const std::vector<std::pair<std::string, z3::expr>> &loops = {});

// The walk over a devices(N) kernel's statements that both proofs make: it
// keeps what holds at each statement, the encodings of the lets and loop
// variables in scope (bound_), the conditions around it and its loops'
// ranges (path_), and the conditions and loops Z3 cannot read (inexact_).
// A loop from `begin` in steps of `step` binds its variable to begin + i *
// step over a fresh iteration unknown i >= 0 (named iterPrefix + the
// variable); a step that is not a positive constant makes the loop inexact
// (anyStep: bound all the same, and noted). A walker adds its own statements
// through visit(), the expressions a statement evaluates through reads(),
// and keeps its loops through enterLoop() / leaveLoop().
class DeviceWalker {
public:
  virtual ~DeviceWalker() = default;

protected:
  DeviceWalker(const BarrierSkeleton &sk, std::string iterPrefix, bool anyStep);

  void block(const Block &b);
  void stmt(const Stmt &s);

  virtual std::optional<z3::expr> value(const Expr &e) = 0;
  // A statement of the walker's own: true when it handled it (no further
  // walk).
  virtual bool visit(const Stmt &) { return false; }
  // An expression a let, a loop's bounds or a condition evaluates.
  virtual void reads(const Expr &, llvm::SMLoc) {}
  virtual void enterLoop(const Stmt &, const z3::expr & /*iter*/, const z3::expr & /*value*/) {}
  virtual void leaveLoop() {}
  // Why a loop or a condition is inexact.
  virtual std::string loopBeyond(const For &f) const = 0;
  virtual std::string conditionBeyond(const If &i) const = 0;

  z3::context &ctx_;
  ProtoEncoder enc_;
  std::map<BuiltinKind, z3::expr> builtins_;
  std::map<std::string, z3::expr> bound_;
  std::vector<z3::expr> path_;
  std::vector<std::string> inexact_;

private:
  std::string iterPrefix_;
  bool anyStep_;
};

} // namespace tilescope::detail
