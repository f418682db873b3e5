#include "verifier/LayoutVerifier.h"

#include "verifier/LayoutChecks.h"

#include <fmt/format.h>

namespace tilescope {

int64_t boundOf(Axis a, const BufferInfo &buffer, const std::vector<int64_t> &shape,
                const TargetInfo &target, const LaunchShape &launch) {
  if (a == Axis::m) {
    if (buffer.memoryElements > 0)
      return buffer.memoryElements;
    if (buffer.scope == BufferScope::Reg) {
      int bits = std::max(dtypeBits(buffer.dtype), 1);
      return target.registersPerThread * 32 / bits;
    }
    int64_t count = 1;
    for (int64_t e : shape)
      count *= e;
    return count;
  }
  if (a == Axis::TCol && buffer.tmemColumns > 0)
    return buffer.tmemColumns;
  return axisExtent(a, target, launch, 0);
}

namespace detail {

PhysCoord ownerAt(const Layout &layout, int64_t flat, int64_t replica) {
  PhysCoord c;
  int64_t radix = layout.size();
  for (const Iter &it : layout.shard()) {
    radix /= it.extent;
    c.add(it.axis, ((flat / radix) % it.extent) * it.stride);
  }
  for (const AxisOffset &o : layout.offset())
    c.add(o.axis, o.value);
  int64_t rradix = layout.replicas();
  for (const Iter &it : layout.replica()) {
    rradix /= it.extent;
    c.add(it.axis, ((replica / rradix) % it.extent) * it.stride);
  }
  if (layout.swizzle())
    c.set(Axis::m, layout.swizzle()->apply(c.get(Axis::m)));
  return c;
}

namespace {
std::string ownerName(const LayoutQuestion &q, int64_t flat, int64_t replica) {
  std::string s = formatLogical(unflattenIndex(q.shape, flat));
  if (replica != 0)
    s = fmt::format("replica {} of {}", replica, s);
  return s;
}
} // namespace

std::optional<LayoutViolation> boundsViolation(const LayoutQuestion &q, Axis axis, int64_t flat,
                                               int64_t replica) {
  PhysCoord c = ownerAt(q.layout, flat, replica);
  int64_t bound = q.bound[static_cast<size_t>(axis)];
  if (bound <= 0 || c.get(axis) < bound)
    return std::nullopt;
  LayoutViolation v{ViolationKind::Bounds, {}, {}};
  v.witness.logical = {unflattenIndex(q.shape, flat)};
  v.witness.replica = {replica};
  v.witness.physical = c;
  v.witness.axis = axis;
  v.witness.extent = bound;
  v.message = fmt::format("layout maps {} to {}, but {} must stay below {}",
                          ownerName(q, flat, replica), c.str(), axisName(axis), bound);
  return v;
}

std::optional<LayoutViolation> aliasViolation(const LayoutQuestion &q, int64_t flatA,
                                              int64_t flatB) {
  if (flatA == flatB)
    return std::nullopt;
  if (flatA > flatB)
    std::swap(flatA, flatB);
  PhysCoord a = ownerAt(q.layout, flatA, 0), b = ownerAt(q.layout, flatB, 0);
  if (!(a == b))
    return std::nullopt;
  LayoutViolation v{ViolationKind::Alias, {}, {}};
  v.witness.logical = {unflattenIndex(q.shape, flatA), unflattenIndex(q.shape, flatB)};
  v.witness.replica = {0, 0};
  v.witness.physical = a;
  v.message =
      fmt::format("layout maps {} and {} to the same owner {}", formatLogical(v.witness.logical[0]),
                  formatLogical(v.witness.logical[1]), a.str());
  return v;
}

std::optional<LayoutViolation> replicaViolation(const LayoutQuestion &q, int64_t flatA,
                                                int64_t replicaA, int64_t flatB, int64_t replicaB) {
  if (flatA == flatB || (replicaA == 0 && replicaB == 0))
    return std::nullopt;
  if (flatA > flatB) {
    std::swap(flatA, flatB);
    std::swap(replicaA, replicaB);
  }
  PhysCoord a = ownerAt(q.layout, flatA, replicaA), b = ownerAt(q.layout, flatB, replicaB);
  if (!(a == b))
    return std::nullopt;
  LayoutViolation v{ViolationKind::Replica, {}, {}};
  v.witness.logical = {unflattenIndex(q.shape, flatA), unflattenIndex(q.shape, flatB)};
  v.witness.replica = {replicaA, replicaB};
  v.witness.physical = a;
  v.message = fmt::format("replicas collide: {} and {} land on the same owner {}",
                          ownerName(q, flatA, replicaA), ownerName(q, flatB, replicaB), a.str());
  return v;
}

namespace {
int64_t bitsOf(const BufferView &v) {
  return std::max(dtypeBits(v.info.dtype), 1);
}
} // namespace

bool ownersOverlap(const OverlapQuestion &q, const PhysCoord &a, const PhysCoord &b) {
  for (size_t i = 0; i < kNumAxes; ++i) {
    Axis axis = static_cast<Axis>(i);
    if (axis == Axis::m)
      continue;
    if ((a.has(axis) ? a.get(axis) : 0) != (b.has(axis) ? b.get(axis) : 0))
      return false;
  }
  int64_t startA = q.a.info.baseByte * 8 + a.get(Axis::m) * bitsOf(q.a);
  int64_t startB = q.b.info.baseByte * 8 + b.get(Axis::m) * bitsOf(q.b);
  return startA < startB + bitsOf(q.b) && startB < startA + bitsOf(q.a);
}

std::optional<LayoutViolation> overlapViolation(const OverlapQuestion &q, int64_t flatA,
                                                int64_t replicaA, int64_t flatB, int64_t replicaB) {
  PhysCoord a = ownerAt(*q.a.layout, flatA, replicaA);
  PhysCoord b = ownerAt(*q.b.layout, flatB, replicaB);
  if (!ownersOverlap(q, a, b))
    return std::nullopt;
  LayoutViolation v{ViolationKind::Overlap, {}, {}};
  v.witness.logical = {unflattenIndex(q.a.shape, flatA), unflattenIndex(q.b.shape, flatB)};
  v.witness.replica = {replicaA, replicaB};
  v.witness.buffers = {q.a.info.name, q.b.info.name};
  v.witness.physical = a;
  auto where = [](const BufferView &view, const PhysCoord &c) {
    if (view.info.scope == BufferScope::Shared || view.info.scope == BufferScope::Global) {
      int64_t bits = std::max(dtypeBits(view.info.dtype), 1);
      return fmt::format("{} (byte {})", c.str(), view.info.baseByte + c.get(Axis::m) * bits / 8);
    }
    return c.str();
  };
  v.message =
      fmt::format("buffers {} and {} overlap: {}{} at {} and {}{} at {}", q.a.info.name,
                  q.b.info.name, q.a.info.name, formatLogical(v.witness.logical[0]), where(q.a, a),
                  q.b.info.name, formatLogical(v.witness.logical[1]), where(q.b, b));
  return v;
}

} // namespace detail

namespace {
using detail::LayoutQuestion;

// Axes a layout may not use in this scope, with a witness element reaching
// each: an iter's digit 1 (or the offset alone) lands off the scope's axes.
void checkScope(const LayoutQuestion &q, const TargetInfo &target, LayoutReport &report) {
  if (q.buffer.scope == BufferScope::Tmem && !target.hasTensorMemory) {
    LayoutViolation v{ViolationKind::Scope, {}, {}};
    v.message = fmt::format("{} has no tensor memory for a tmem buffer", target.name);
    report.violations.push_back(std::move(v));
    return;
  }
  uint32_t reported = 0;
  auto report1 = [&](Axis axis, bool replica, int64_t flat, int64_t replicaIndex,
                     std::string what) {
    if (reported & (1u << static_cast<unsigned>(axis)))
      return;
    reported |= 1u << static_cast<unsigned>(axis);
    LayoutViolation v{replica ? ViolationKind::Replica : ViolationKind::Scope, {}, {}};
    v.witness.logical = {unflattenIndex(q.shape, flat)};
    v.witness.replica = {replicaIndex};
    v.witness.physical = detail::ownerAt(q.layout, flat, replicaIndex);
    v.witness.axis = axis;
    v.message = fmt::format("{} puts {} on {}, but a {} buffer cannot hold {}", what,
                            formatLogical(v.witness.logical[0]), v.witness.physical.str(),
                            scopeName(q.buffer.scope), axisName(axis));
    if (replica)
      v.message =
          fmt::format("{} on {}: a {} buffer cannot replicate over {} (replica {} of {} "
                      "is at {})",
                      what, axisName(axis), scopeName(q.buffer.scope), axisName(axis), replicaIndex,
                      formatLogical(v.witness.logical[0]), v.witness.physical.str());
    report.violations.push_back(std::move(v));
  };
  int64_t radix = q.layout.size();
  for (size_t k = 0; k < q.layout.shard().size(); ++k) {
    const Iter &it = q.layout.shard()[k];
    radix /= it.extent;
    if (!scopeHoldsAxis(q.buffer.scope, it.axis) && it.extent > 1 && it.stride != 0)
      report1(it.axis, false, radix, 0, fmt::format("shard iter {}", k));
  }
  for (const AxisOffset &o : q.layout.offset())
    if (!scopeHoldsAxis(q.buffer.scope, o.axis))
      report1(o.axis, false, 0, 0, fmt::format("offset {}@{}", o.value, axisName(o.axis)));
  int64_t rradix = q.layout.replicas();
  for (size_t t = 0; t < q.layout.replica().size(); ++t) {
    const Iter &it = q.layout.replica()[t];
    rradix /= it.extent;
    if (!scopeReplicatesOver(q.buffer.scope, it.axis) && it.extent > 1 && it.stride != 0)
      report1(it.axis, true, 0, rradix, fmt::format("replica iter {}", t));
  }
}

bool useEnumeration(ProofEngine engine, int64_t owners) {
  return engine == ProofEngine::Enumerate ||
         (engine == ProofEngine::Auto && owners <= kAutoEnumerationLimit);
}
} // namespace

LayoutReport verifyLayout(const Layout &layout, const std::vector<int64_t> &shape,
                          const BufferInfo &buffer, const TargetInfo &target,
                          const LaunchShape &launch, const VerifyOptions &options) {
  LayoutReport report;
  if (!layout.admits(shape)) {
    report.undecided.push_back(
        fmt::format("layout {} does not admit shape {}", layout.str(), formatLogical(shape)));
    return report;
  }
  LayoutQuestion q{layout, shape, buffer};
  for (size_t i = 0; i < kNumAxes; ++i)
    if (layout.axesUsed() >> i & 1)
      q.bound[i] = boundOf(static_cast<Axis>(i), buffer, shape, target, launch);
  q.checkAlias = !buffer.mayAlias;
  checkScope(q, target, report);
  int64_t owners = layout.size() * layout.replicas();
  if (useEnumeration(options.engine, owners)) {
    if (owners > kEnumerationLimit) {
      report.undecided.push_back(
          fmt::format("{} owners are too many to enumerate; use the Z3 engine", owners));
      return report;
    }
    detail::enumerateLayout(q, report);
  } else {
    detail::proveLayout(q, options.timeoutMs, report);
  }
  return report;
}

LayoutReport verifyNoOverlap(const BufferView &a, const BufferView &b,
                             const VerifyOptions &options) {
  LayoutReport report;
  if (a.info.scope != b.info.scope || !a.layout || !b.layout)
    return report;
  if (!a.layout->admits(a.shape) || !b.layout->admits(b.shape)) {
    report.undecided.push_back("a buffer's layout does not admit its shape");
    return report;
  }
  detail::OverlapQuestion q{a, b};
  int64_t owners =
      a.layout->size() * a.layout->replicas() + b.layout->size() * b.layout->replicas();
  if (useEnumeration(options.engine, owners)) {
    if (owners > kEnumerationLimit) {
      report.undecided.push_back(
          fmt::format("{} owners are too many to enumerate; use the Z3 engine", owners));
      return report;
    }
    detail::enumerateOverlap(q, report);
  } else {
    detail::proveOverlap(q, options.timeoutMs, report);
  }
  return report;
}

} // namespace tilescope
