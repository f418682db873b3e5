#include "reward/SimSizes.h"
#include "reward/SizeRelations.h"

#include "ir/ConcreteEval.h"
#include "ir/Visitor.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/FallbackSizes.h"

#include <llvm/ADT/StringRef.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <set>

namespace tilescope::reward_detail {

std::vector<std::string> shapeSymbols(const Kernel &kernel) {
  std::set<std::string> names;
  for (const Param &p : kernel.params) {
    if (p.isTensor) {
      for (const Expr &e : p.shape)
        for (const std::string &n : namesUsed(e))
          names.insert(n);
    } else if (isInteger(p.dtype)) {
      names.insert(p.name);
    }
  }
  return {names.begin(), names.end()};
}

std::string describe(const std::map<std::string, int64_t> &values) {
  return describeSizes(values);
}

namespace {

int trailingZeros(int64_t v) {
  int n = 0;
  while (v > 0 && (v & 1) == 0 && n < 62) {
    v >>= 1;
    ++n;
  }
  return n;
}

// Keeps only the shape symbols (float scalars have no integer size).
SizeAssignment onlySymbols(const SizeAssignment &all, const std::vector<std::string> &symbols) {
  SizeAssignment out;
  for (const std::string &s : symbols)
    if (auto it = all.find(s); it != all.end())
      out[s] = it->second;
  return out;
}

LeafValue leafAt(const SizeAssignment &sizes);

bool isCtaIndex(BuiltinKind b) {
  return b == BuiltinKind::blockIdx_x || b == BuiltinKind::blockIdx_y ||
         b == BuiltinKind::blockIdx_z;
}

// The trip count CTA `cta` (CTA 0 by default) gives the first loop that
// starts at a blockIdx (a persistent tile loop), or nothing when there is
// none.
std::optional<int64_t> persistentTrip(const BarrierSkeleton &sk, const SizeAssignment &sizes,
                                      std::array<int64_t, 3> cta = {0, 0, 0}) {
  for (const SkeletonLoop &loop : sk.loops) {
    bool startsAtCta = false;
    struct FindCta : IRVisitor {
      bool found = false;
      void visitBuiltin(const Builtin &b) override { found |= isCtaIndex(b.which); }
    } find;
    find.visit(loop.begin);
    startsAtCta = find.found;
    if (!startsAtCta || loop.parent >= 0)
      continue;
    LeafValue at = leafAt(sizes);
    LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
      if (e->kind == ExprKind::Builtin && isCtaIndex(as<Builtin>(e).which))
        return cta[size_t(int(as<Builtin>(e).which) - int(BuiltinKind::blockIdx_x))];
      return at(e);
    };
    if (auto trip = evalConcrete(loop.trip(), leaf))
      return trip;
  }
  return std::nullopt;
}

LeafValue leafAt(const SizeAssignment &sizes) {
  return [&sizes](const Expr &e) -> std::optional<int64_t> {
    if (e->kind == ExprKind::Builtin)
      return 0; // CTA 0, thread 0
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = sizes.find(as<Var>(e).name);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
}

// The largest ring an event of a loop moves through: its barrier array
// (ringOf), or a buffer whose leading subscript varies. A constant leading
// subscript (`sc[2] = SB[...]` into a `reg sc: f32[5]`) names one element at
// every iteration: no ring, however long the array (it made
// gemm_fp8_blockscaled_sm90_bn192's small K 1280 for a ring of 4 stages).
int64_t movingRingOf(const BarrierSkeleton &sk, const SyncEvent &e) {
  SyncEvent moving = e;
  moving.accesses.clear();
  for (const MemoryAccess &a : e.accesses)
    if (!a.stage || !constantValue(a.stage))
      moving.accesses.push_back(a);
  return ringOf(sk, moving);
}

// A loop over a ring of S that CTA 0 runs fewer than 2·S (flattened)
// iterations at `sizes`, or -1.
int shortRingLoop(const BarrierSkeleton &sk, const SizeAssignment &sizes) {
  std::map<int, int64_t> rings;
  for (const SyncEvent &e : sk.events)
    if (e.loop >= 0)
      rings[e.loop] = std::max(rings[e.loop], movingRingOf(sk, e));
  LeafValue leaf = leafAt(sizes);
  for (const auto &[loop, ring] : rings) {
    if (ring < 2)
      continue;
    int64_t trip = 1;
    bool known = true;
    for (int l = loop; l >= 0 && known; l = sk.loops[size_t(l)].parent) {
      auto t = evalConcrete(sk.loops[size_t(l)].trip(), leaf);
      if (!t)
        known = false;
      else
        trip *= std::max<int64_t>(*t, 0);
    }
    if (known && trip < 2 * ring)
      return loop;
  }
  return -1;
}

// Raises the symbols of short ring loops' own trip counts (smallest admitted
// value that suffices, found by doubling then scanning) until every ring
// wraps twice for CTA 0, or nothing more helps.
SizeAssignment wrapRings(const BarrierSkeleton &sk, const SizeRelations &rel,
                         SizeAssignment sizes) {
  for (int round = 0; round < 8; ++round) {
    int loop = shortRingLoop(sk, sizes);
    if (loop < 0)
      return sizes;
    bool raised = false;
    // A symbol the where clause defines (`kt` reads KB, KB == K / 128) is
    // raised through the free symbols of its definition.
    for (const std::string &name : rel.freeBehind(namesUsed(sk.loops[size_t(loop)].trip()))) {
      auto it = sizes.find(name);
      if (it == sizes.end())
        continue;
      int64_t v = it->second, hi = 0;
      for (int shift = 1; shift <= 20 && !hi; ++shift) {
        SizeAssignment trial = sizes;
        trial[name] = v << shift;
        if (rel.admits(trial, name) && shortRingLoop(sk, trial) != loop)
          hi = v << shift;
      }
      if (!hi)
        continue;
      for (int64_t c = std::max(v + 1, hi / 2); c <= hi; ++c) {
        SizeAssignment trial = sizes;
        trial[name] = c;
        if (rel.admits(trial, name) && shortRingLoop(sk, trial) != loop) {
          sizes = trial;
          raised = true;
          break;
        }
      }
      if (raised)
        break;
    }
    if (!raised)
      return sizes;
  }
  return sizes;
}

} // namespace

double tensorElements(const Kernel &kernel, const SizeAssignment &sizes) {
  double total = 0;
  LeafValue leaf = leafAt(sizes);
  for (const Param &p : kernel.params) {
    if (!p.isTensor)
      continue;
    double elements = 1;
    for (const Expr &e : p.shape)
      elements *= double(evalConcrete(e, leaf).value_or(1));
    total += elements;
  }
  return total;
}

namespace {

// The solver minimises the sum of the sizes, which can trade a small K for a
// huge M (more tiles per CTA also wrap a ring). Each symbol is reset to its
// smallest admitted value and the rings re-wrapped; a change is kept when it
// makes the tensors smaller, until none does. `keep` is what a change must
// preserve besides the ring wraps (the persistent size's second tile).
// Only free symbols are reset: a defined one follows its definition
// (SizeRelations.h), so lowering K lowers KB with it.
SizeAssignment shrink(const BarrierSkeleton &sk, const SizeRelations &rel, const Kernel &kernel,
                      SizeAssignment sizes,
                      const std::function<bool(const SizeAssignment &)> &keep = nullptr) {
  for (bool improved = true; improved;) {
    improved = false;
    for (auto &[name, value] : SizeAssignment(sizes)) {
      if (rel.defined(name))
        continue;
      for (int64_t c = 1; c < value && c <= 4096; ++c) {
        SizeAssignment trial = sizes;
        trial[name] = c;
        if (!rel.admits(trial, name))
          continue;
        trial = wrapRings(sk, rel, trial);
        std::string ignored;
        if (admittedSizes(sk, trial, ignored) && shortRingLoop(sk, trial) < 0 &&
            (!keep || keep(trial)) &&
            tensorElements(kernel, trial) < tensorElements(kernel, sizes)) {
          sizes = trial;
          improved = true;
        }
        break; // the smallest admitted value only
      }
    }
  }
  return sizes;
}

// The grid extent of dimension d at `sizes`; nothing where it does not
// evaluate.
std::optional<int64_t> gridExtent(const BarrierSkeleton &sk, size_t d,
                                  const SizeAssignment &sizes) {
  if (d >= sk.grid.size())
    return 1;
  return evalConcrete(sk.grid[d], leafAt(sizes));
}

// A CTA index compared with a constant (`blockIdx.y == 2`), a third row of
// tiles or a tail CTA after two full ones: each grid dimension that depends
// on the sizes is raised to at least kGridSpread CTAs (issue 14: a kernel
// that zeroes its output in CTA row 2 passed at sizes of two rows). Each
// symbol of the dimension's extent in turn is raised to the least admitted
// value that suffices, then, within the edge's window above it, to the one
// with the fewest trailing zero bits (the last CTA stays ragged).
constexpr int64_t kGridSpread = 3;

// The edge size's raises keep the tensors within 2^22 elements (16 MiB of
// f32) where they can: larger tensors cost more simulation than the
// raggedness they buy.
constexpr double kEdgeElements = double(int64_t{1} << 22);

// Raises one of `symbols` (free ones, in turn) to the least admitted value
// at which `enough` holds, then within 1024 above it to the one with the
// fewest trailing zero bits; `sizes` unchanged when none does it.
SizeAssignment raiseUntil(const SizeRelations &rel, SizeAssignment sizes,
                          const std::set<std::string> &symbols,
                          const std::function<bool(const SizeAssignment &)> &enough) {
  for (const std::string &name : rel.freeBehind(symbols)) {
    auto it = sizes.find(name);
    if (it == sizes.end())
      continue;
    int64_t v = it->second, hi = 0;
    auto at = [&](int64_t c) {
      SizeAssignment trial = sizes;
      trial[name] = c;
      return rel.admits(trial, name) && enough(trial) ? std::optional<SizeAssignment>(trial)
                                                       : std::nullopt;
    };
    for (int shift = 1; shift <= 20 && !hi; ++shift)
      if (at(v << shift))
        hi = v << shift;
    if (!hi)
      continue;
    int64_t least = hi;
    for (int64_t c = std::max(v + 1, hi / 2); c <= hi; ++c)
      if (at(c)) {
        least = c;
        break;
      }
    std::optional<int64_t> best;
    for (int64_t c = least; c <= least + 1024; ++c) {
      if (!at(c))
        continue;
      if (!best || trailingZeros(c) < trailingZeros(*best))
        best = c;
      if (trailingZeros(c) == 0)
        break;
    }
    return *at(best.value_or(least));
  }
  return sizes;
}

SizeAssignment spreadGrid(const BarrierSkeleton &sk, const SizeRelations &rel,
                          SizeAssignment sizes) {
  for (size_t d = 0; d < sk.grid.size(); ++d) {
    auto now = gridExtent(sk, d, sizes);
    if (!now || *now >= kGridSpread)
      continue;
    sizes = raiseUntil(rel, sizes, namesUsed(sk.grid[d]), [&](const SizeAssignment &trial) {
      auto g = gridExtent(sk, d, trial);
      return g && *g >= kGridSpread;
    });
  }
  return sizes;
}

// The same for a constant grid with a persistent tile loop: the CTA whose
// indices are min(kGridSpread - 1, extent - 1) must run a tile, so that a
// CTA other than 0 computes something at a size where every CTA runs (the
// small and edge sizes gave gemm_bf16_sm90 one tile, the persistent size
// runs CTA 0 alone: a kernel wrong in every other CTA passed, hack
// `cta-1-wrong`). The symbols of the loop's trip count are raised.
SizeAssignment spreadTiles(const BarrierSkeleton &sk, const SizeRelations &rel,
                           SizeAssignment sizes) {
  std::array<int64_t, 3> cta{0, 0, 0};
  for (size_t d = 0; d < sk.grid.size() && d < 3; ++d) {
    auto g = gridExtent(sk, d, sizes);
    if (!g || *g < 1)
      return sizes;
    cta[d] = std::min(kGridSpread - 1, *g - 1);
  }
  auto runs = [&](const SizeAssignment &trial) {
    auto t = persistentTrip(sk, trial, cta);
    return t && *t >= 1;
  };
  if (!persistentTrip(sk, sizes, cta) || runs(sizes))
    return sizes;
  std::set<std::string> symbols;
  for (const SkeletonLoop &loop : sk.loops)
    if (loop.parent < 0)
      for (const std::string &n : namesUsed(loop.trip()))
        symbols.insert(n);
  return raiseUntil(rel, sizes, symbols, runs);
}

bool constantGrid(const Kernel &kernel) {
  for (const Expr &e : kernel.launch.grid)
    if (!constantValue(e))
      return false;
  return true;
}

// An edge raise from v to c that cannot make a tile ragged: v and c both
// multiples of 256, the largest extent of a TMA box or a wgmma tile, so every
// power-of-two tile of either is as full at c as at v (M % 1024 == 0: 1024
// -> 2048). What such a raise adds is tiles further along (a grouped tile
// order's group 1): the persistent size takes it over, where CTA 0's second
// tile lies beyond 132 tiles, instead of an edge run of every CTA (the
// edge's M = 2048 was 61-72 % of the grouped GEMMs' simulation).
constexpr int kFullTileBits = 8;
bool fullTileRaise(int64_t v, int64_t c) {
  return trailingZeros(v) >= kFullTileBits && trailingZeros(c) >= kFullTileBits;
}

// The CTA of linear index `i` of `grid` (x fastest).
std::array<int64_t, 3> ctaOfIndex(const std::array<int64_t, 3> &grid, int64_t i) {
  return {i % grid[0], i / grid[0] % grid[1], i / (grid[0] * grid[1])};
}

// The grid's extents at `sizes`; nothing where one does not evaluate.
std::optional<std::array<int64_t, 3>> gridAt(const BarrierSkeleton &sk,
                                             const SizeAssignment &sizes) {
  std::array<int64_t, 3> grid{1, 1, 1};
  for (size_t d = 0; d < 3; ++d) {
    auto g = gridExtent(sk, d, sizes);
    if (!g || *g < 1)
      return std::nullopt;
    grid[d] = *g;
  }
  return grid;
}

// The persistent size (SimSizes.h 3.) from `small` with the edge's `carried`
// raises applied and kept: the one free symbol, raised least, that makes
// CTA 0 run its tile loop twice — and, with `twoCtas`, CTA 1 as well (more
// tiles than CTAs plus one) — cheapest in tensor elements, then the other
// symbols shrunk as far as the rings still wrap twice and those CTAs still
// run two tiles. Nothing when no symbol does it.
std::optional<SizeAssignment> choosePersistent(const BarrierSkeleton &sk,
                                               const SizeRelations &rel, const Kernel &kernel,
                                               const SizeAssignment &small,
                                               const SizeAssignment &carried, bool twoCtas) {
  SizeAssignment base = small;
  for (const auto &[s, c] : carried) {
    SizeAssignment trial = base;
    trial[s] = c;
    if (rel.admits(trial, s))
      base = trial;
  }
  auto cost = [&](const SizeAssignment &sizes) { return tensorElements(kernel, sizes); };
  // `sizes` completed, admitted, CTA 0 (and CTA 1) runs two tiles, and no
  // carried raise undone.
  auto persistent = [&](SizeAssignment &sizes, const std::string &varied) {
    if (!rel.admits(sizes, varied))
      return false;
    for (const auto &[s, c] : carried)
      if (sizes.count(s) && sizes[s] < base[s])
        return false;
    auto t = persistentTrip(sk, sizes);
    if (!t || *t < 2)
      return false;
    if (!twoCtas)
      return true;
    auto grid = gridAt(sk, sizes);
    if (!grid || (*grid)[0] * (*grid)[1] * (*grid)[2] < 2)
      return false;
    auto u = persistentTrip(sk, sizes, ctaOfIndex(*grid, 1));
    return u && *u >= 2;
  };
  std::optional<SizeAssignment> bestSizes;
  double bestCost = 0;
  for (const std::string &s : rel.free()) {
    auto at = [&](int64_t c) -> std::optional<SizeAssignment> {
      SizeAssignment trial = base;
      trial[s] = c;
      return persistent(trial, s) ? std::optional<SizeAssignment>(trial) : std::nullopt;
    };
    int64_t hi = 0;
    for (int shift = 1; shift <= 18 && !hi; ++shift)
      if (at(base[s] << shift))
        hi = base[s] << shift;
    if (!hi)
      continue;
    // The smallest value that suffices, above the last that did not.
    std::optional<SizeAssignment> trial;
    for (int64_t c = std::max(base[s] + 1, hi / 2); c <= hi && !trial; ++c)
      trial = at(c);
    if (!bestSizes || cost(*trial) < bestCost) {
      bestSizes = trial;
      bestCost = cost(*trial);
    }
  }
  if (!bestSizes)
    return std::nullopt;
  // The other symbols shrunk again: with two tiles CTA 0's ring loop runs
  // twice as often, so half the small size's K already wraps its rings
  // twice (gemm_bf16_sm90: K = 136 instead of 328, 2.4 times fewer
  // elements of A to fill and multiply).
  SizeAssignment sizes = wrapRings(sk, rel, *bestSizes);
  if (shortRingLoop(sk, sizes) < 0)
    sizes = shrink(sk, rel, kernel, sizes, [&](const SizeAssignment &trial) {
      SizeAssignment completed = trial;
      return persistent(completed, "");
    });
  return sizes;
}

// The CTAs the persistent size runs: CTA 0, and the last CTA (linear index)
// that runs two tiles, when one other than CTA 0 does — its second tile is
// the last tile, often the ragged corner (the grouped GEMMs' M = 2048,
// N = 2056: CTA 11, tiles 11 and 143, the 8 columns past 2048), which costs
// less to simulate than CTA 1's two full tiles.
std::vector<std::array<int64_t, 3>> persistentCtas(const BarrierSkeleton &sk,
                                                   const SizeAssignment &sizes) {
  std::vector<std::array<int64_t, 3>> ctas{{0, 0, 0}};
  auto grid = gridAt(sk, sizes);
  if (!grid)
    return ctas;
  for (int64_t i = (*grid)[0] * (*grid)[1] * (*grid)[2] - 1; i > 0; --i) {
    auto t = persistentTrip(sk, sizes, ctaOfIndex(*grid, i));
    if (t && *t >= 2) {
      ctas.push_back(ctaOfIndex(*grid, i));
      break;
    }
  }
  return ctas;
}

} // namespace

std::vector<std::array<int64_t, 3>> ctasWithTiles(const Kernel &kernel,
                                                  const BarrierSkeleton &sk,
                                                  const SizeAssignment &sizes) {
  std::vector<std::array<int64_t, 3>> out;
  auto grid = gridAt(sk, sizes);
  if (!constantGrid(kernel) || !grid || !persistentTrip(sk, sizes))
    return out;
  int64_t total = (*grid)[0] * (*grid)[1] * (*grid)[2];
  for (int64_t i = 0; i < total; ++i) {
    auto t = persistentTrip(sk, sizes, ctaOfIndex(*grid, i));
    if (!t)
      return {};
    if (*t >= 1)
      out.push_back(ctaOfIndex(*grid, i));
  }
  if (int64_t(out.size()) == total || out.empty())
    out.clear();
  return out;
}

std::optional<std::vector<SimSize>> chooseSimSizes(const Kernel &kernel, std::string &why) {
  BarrierSkeleton sk = extractBarrierSkeleton(kernel);
  std::vector<std::string> symbols = shapeSymbols(kernel);
  std::vector<SimSize> out;
  if (symbols.empty()) {
    out.push_back({{}, 0, "small", {}});
    return out;
  }
  SizeRelations rel(kernel, sk, symbols);
  auto smallest = smallestTwoRoundSizes(sk, why);
  if (!smallest)
    return std::nullopt;
  SizeAssignment small = wrapRings(sk, rel, onlySymbols(*smallest, symbols));
  if (shortRingLoop(sk, small) < 0)
    small = shrink(sk, rel, kernel, small);
  out.push_back({small, 0, "small", {}});

  // Edge: every free symbol raised, ragged where the where clause admits it
  // (a defined symbol follows its definition). A raise that cannot be
  // ragged (fullTileRaise) is carried to the persistent size instead, where
  // there is one.
  auto trip0 = constantGrid(kernel) ? persistentTrip(sk, small) : std::nullopt;
  bool persistentToCome = trip0 && *trip0 < 2;
  SizeAssignment edge = small, carried;
  for (const std::string &s : rel.free()) {
    int64_t v = small.count(s) ? small[s] : 1;
    std::optional<int64_t> best;
    std::optional<SizeAssignment> bestSizes;
    // The admitted value in [lo, lo + 1024] with the fewest trailing zero
    // bits, within the edge's element budget.
    auto search = [&](int64_t lo) {
      for (int64_t c = lo; c <= lo + 1024; ++c) {
        SizeAssignment trial = edge;
        trial[s] = c;
        if (!rel.admits(trial, s) || tensorElements(kernel, trial) > kEdgeElements)
          continue;
        if (!best || trailingZeros(c) < trailingZeros(*best)) {
          best = c;
          bestSizes = trial;
        }
        if (trailingZeros(c) == 0)
          break;
      }
    };
    search(v + 65);
    // A raise of 65 past the budget (attention's B and H, each to 67: 2.1
    // billion elements, so the edge size always ended as memory-budget)
    // becomes the least one that fits, from v + 1.
    if (!bestSizes)
      search(v + 1);
    if (bestSizes && persistentToCome && fullTileRaise(v, *best))
      carried[s] = *best;
    else if (bestSizes)
      edge = *bestSizes;
  }
  edge = spreadGrid(sk, rel, edge);
  if (constantGrid(kernel))
    edge = spreadTiles(sk, rel, edge);

  // Persistent: more tiles than CTAs, from the small size with the edge's
  // carried raises.
  // Two CTAs run two tiles each, CTA 0 and another (a second tile of a CTA
  // other than 0: `t >= 132 && blockIdx.x > 0` zeroing it passed while CTA 0
  // ran alone, hack `second-tile-cta-1`); CTA 0 alone where no size gives
  // another CTA two tiles.
  std::optional<SizeAssignment> persistentSizes;
  if (persistentToCome) {
    persistentSizes = choosePersistent(sk, rel, kernel, small, carried, true);
    if (!persistentSizes)
      persistentSizes = choosePersistent(sk, rel, kernel, small, carried, false);
  }
  if (!persistentSizes) {
    // No persistent size: the carried raises go back into the edge.
    for (const auto &[s, c] : carried) {
      SizeAssignment trial = edge;
      trial[s] = c;
      if (rel.admits(trial, s))
        edge = trial;
    }
  }
  if (edge != small && rel.admits(edge))
    out.push_back({edge, 0, "edge", {}});
  if (persistentSizes) {
    std::vector<std::array<int64_t, 3>> ctas = persistentCtas(sk, *persistentSizes);
    out.push_back({*persistentSizes, int64_t(ctas.size()), "persistent", ctas});
  }
  return out;
}

std::optional<std::vector<SimSize>> parseSimSizes(const std::string &text, std::string &why) {
  std::vector<SimSize> out;
  llvm::SmallVector<llvm::StringRef, 4> sets;
  llvm::StringRef(text).split(sets, ';', -1, false);
  for (llvm::StringRef set : sets) {
    SimSize size;
    size.role = "given";
    llvm::SmallVector<llvm::StringRef, 8> items;
    set.split(items, ',', -1, false);
    for (llvm::StringRef item : items) {
      auto [name, value] = item.trim().split('=');
      int64_t v = 0;
      if (name.trim().empty() || value.trim().getAsInteger(10, v) || v <= 0) {
        why = fmt::format("--sizes takes NAME=POSITIVE,... sets separated by ';', not '{}'",
                          item.trim().str());
        return std::nullopt;
      }
      size.values[name.trim().str()] = v;
    }
    if (!size.values.empty())
      out.push_back(std::move(size));
  }
  if (out.empty()) {
    why = "--sizes gives no sizes";
    return std::nullopt;
  }
  return out;
}

} // namespace tilescope::reward_detail
