// The placement of a global tensor parameter over the devices of a
// `devices(N)` launch (docs/scales.md, "Device layout notation"):
//
//   kernel allgather(A: global bf16[MD, K] placement(S[(N,MD,K):(1@pid,K,1)]), ...)
//
// The placement is a layout in the S/R/O notation of docs/layouts.md from
// the *logical* tensor (here [N * MD, K], the rows of every device's A one
// after the other) to the device axis `pid` and the element's place `m` in
// that device's instance (the parameter's shape, [MD, K]). Every device
// holds an instance of the same shape (the symmetric allocation of the
// runtime), so a placement is legal when it deals the logical elements out
// to (pid, m) one to one onto [0, N) x [0, elements of the instance), or
// replicates the instance on every device.
//
// The forms this module reads, for every value of the sizes (the extents are
// expressions over the kernel's scalar parameters; equal means equal as
// polynomials in them, so the reading holds for every N the `where` clause
// admits):
//
//   blocked along dimension j   S[(e..., N, e...):(s..., 1@pid, s...)]: the
//                               m iters are the instance's elements row-major
//                               (the last stride 1, each stride the product
//                               of the later extents, the extents' product
//                               the instance's size), and the device iter,
//                               extent N and stride 1, stands where the m
//                               iters before it make up dimensions 0..j-1
//   replicated                  S[m iters as above] + R[N:1@pid]
//
// Anything else (another axis, an offset, a swizzle, a preset, a second
// device iter, a device iter after the last dimension or inside one) is an
// error of the kernel with the reason. What a problem reads of its tensors
// (allreduce's input blocked along dimension 0, its output replicated) is
// the problem's business (simulator/DevicePlacement.h).
//
// Must not depend on anything above ir/.
#pragma once

#include "ir/Stmt.h"

#include <optional>
#include <string>

namespace tilescope {

struct PlacementReading {
  enum class Kind { Replicated, Blocked };
  Kind kind = Kind::Replicated;
  size_t dim = 0; // Blocked: the instance dimension the devices split in blocks

  // "replicated", "blocked along dimension 0 (rows)".
  std::string str() const;
  bool operator==(const PlacementReading &) const = default;
};

// The reading of `param`'s placement in `kernel` (a devices(N) kernel; the
// parameter has a placement). Nothing, with `why` and the place of the fault
// in `at`, when the placement is not one of the forms above.
std::optional<PlacementReading> readPlacement(const Kernel &kernel, const Param &param,
                                              std::string *why, llvm::SMLoc *at);

// The placement's layout at concrete sizes (`value` gives every scalar
// parameter's value, the device count included), or nothing with `why`.
std::optional<Layout> placementLayout(const Param &param, const LayoutNumberValue &value,
                                      std::string *why);

// The logical shape a placement reads of `param`: the instance's shape with
// the blocked dimension multiplied by the device count `devices`.
std::vector<int64_t> logicalShape(const PlacementReading &reading,
                                  const std::vector<int64_t> &instanceShape, int64_t devices);

// One line on a placed parameter for the lowering, which honours it with the
// symmetric allocation (every rank's region holds the instance at the same
// offset): "A: placement S[...], blocked along dimension 1 (columns); each
// rank holds its instance [MD, K]". Empty for a parameter without one.
std::string placementNote(const Kernel &kernel, const Param &param);

// What a device problem reads of one of its tensors' placement
// (simulator/DeviceSimulate.h, problemPlacements): `allreduce(X -> Y)` reads
// X blocked along dimension 0 (the partial sums of the devices, one block
// each) and Y replicated.
struct ProblemPlacement {
  std::string tensor;
  PlacementReading reading;
  std::string problem; // the annotation, for messages
};

// The tensor parameters of `kernel` whose declared placement the problem
// reads otherwise, with the message of each (a finding of the devices
// proof, check/KernelProofs.cpp). Placements the checker rejected are not
// read here.
struct PlacementDisagreement {
  const Param *param = nullptr;
  std::string message;
};
std::vector<PlacementDisagreement>
placementDisagreements(const Kernel &kernel, const std::vector<ProblemPlacement> &problem);

} // namespace tilescope
