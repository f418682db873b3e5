#include "ir/InstructionRules.h"

#include <fmt/format.h>

namespace tilescope {

namespace {
using F = InstructionFamily;
using S = MemScope;

using T = TargetFeature;

InstructionRule baseRule(std::string_view name, InstructionFamily family, MemScope scope,
                         TargetFeature feature) {
  InstructionRule r;
  r.name = name;
  r.family = family;
  r.scope = scope;
  r.feature = feature;
  return r;
}
InstructionRule tmemRule(std::string_view name, int lanes, int bits, std::string_view summary) {
  InstructionRule r = baseRule(name, F::TmemAccess, S::Tmem, T::Tcgen05);
  r.lanes = lanes;
  r.bitsPerLane = bits;
  r.summary = summary;
  return r;
}
InstructionRule matrixRule(std::string_view name, TargetFeature feature, int matrices,
                           std::string_view summary) {
  InstructionRule r = baseRule(name, F::Matrix, S::Shared, feature);
  r.elementBits = 16;
  r.matrices = matrices;
  r.summary = summary;
  return r;
}
InstructionRule sharedRule(std::string_view name, int bits, std::string_view summary) {
  InstructionRule r = baseRule(name, F::SharedAccess, S::Shared, T::None);
  r.accessBits = bits;
  r.summary = summary;
  return r;
}

} // namespace

std::optional<InstructionFamily> instructionFamilyOf(IntrinsicId call) {
  switch (call) {
  case IntrinsicId::Tcgen05Ld:
  case IntrinsicId::Tcgen05St:
    return InstructionFamily::TmemAccess;
  default:
    return std::nullopt;
  }
}

namespace {
std::vector<InstructionRule> buildRules() {
  std::vector<InstructionRule> rules;
  InstructionRule tma = baseRule("tma", F::Tma, S::Shared, T::Sm90Plus);
  tma.maxRank = 5;
  tma.maxBoxExtent = 256;
  tma.innerBytesMultiple = 16;
  tma.summary = "cp.async.bulk.tensor box copy between global and shared memory";
  rules.push_back(tma);
  rules.push_back(matrixRule("ldmatrix.x1", T::None, 1, "ldmatrix.sync.aligned.m8n8.x1.b16"));
  rules.push_back(matrixRule("ldmatrix.x2", T::None, 2, "ldmatrix.sync.aligned.m8n8.x2.b16"));
  rules.push_back(matrixRule("ldmatrix.x4", T::None, 4, "ldmatrix.sync.aligned.m8n8.x4.b16"));
  rules.push_back(matrixRule("stmatrix.x1", T::Sm90Plus, 1, "stmatrix.sync.aligned.m8n8.x1.b16"));
  rules.push_back(matrixRule("stmatrix.x2", T::Sm90Plus, 2, "stmatrix.sync.aligned.m8n8.x2.b16"));
  rules.push_back(matrixRule("stmatrix.x4", T::Sm90Plus, 4, "stmatrix.sync.aligned.m8n8.x4.b16"));
  InstructionRule wgmma = baseRule("wgmma.smem", F::SmemOperand, S::Shared, T::Wgmma);
  wgmma.summary = "wgmma.mma_async operand read through a shared-memory descriptor";
  rules.push_back(wgmma);
  InstructionRule umma = baseRule("tcgen05.smem", F::SmemOperand, S::Shared, T::Tcgen05);
  umma.summary = "tcgen05.mma operand read through a shared-memory descriptor";
  rules.push_back(umma);
  for (const char *op : {"ld", "st"}) {
    bool ld = op[0] == 'l';
    rules.push_back(tmemRule(ld ? "tcgen05.ld.32x32b" : "tcgen05.st.32x32b", 32, 32,
                             "32 TMEM lanes x 32 bits per repetition"));
    rules.push_back(tmemRule(ld ? "tcgen05.ld.16x64b" : "tcgen05.st.16x64b", 16, 64,
                             "16 TMEM lanes x 64 bits per repetition"));
    rules.push_back(tmemRule(ld ? "tcgen05.ld.16x128b" : "tcgen05.st.16x128b", 16, 128,
                             "16 TMEM lanes x 128 bits per repetition"));
    rules.push_back(tmemRule(ld ? "tcgen05.ld.16x256b" : "tcgen05.st.16x256b", 16, 256,
                             "16 TMEM lanes x 256 bits per repetition"));
    rules.push_back(tmemRule(ld ? "tcgen05.ld.16x32bx2" : "tcgen05.st.16x32bx2", 16, 64,
                             "two 16-lane x 32-bit accesses per repetition"));
  }
  rules.push_back(sharedRule("lds.32", 32, "ld.shared.b32: 4 bytes per thread"));
  rules.push_back(sharedRule("lds.64", 64, "ld.shared.v2.b32: 8 bytes per thread"));
  rules.push_back(sharedRule("lds.128", 128, "ld.shared.v4.b32: 16 bytes per thread"));
  rules.push_back(sharedRule("sts.32", 32, "st.shared.b32: 4 bytes per thread"));
  rules.push_back(sharedRule("sts.64", 64, "st.shared.v2.b32: 8 bytes per thread"));
  rules.push_back(sharedRule("sts.128", 128, "st.shared.v4.b32: 16 bytes per thread"));
  return rules;
}

// One finding of `rule` at logical element `flat` (or none: -1).
struct Findings {
  const InstructionRule &rule;
  const Layout &layout;
  const std::vector<int64_t> &shape;
  std::vector<LayoutViolation> out;

  void add(int64_t flat, std::string message) {
    LayoutViolation v{ViolationKind::Instruction, {}, {}};
    if (flat >= 0) {
      v.witness.logical = {unflattenIndex(shape, flat)};
      v.witness.replica = {0};
      v.witness.physical = layout.base(flat);
    }
    v.message = fmt::format("{}: {}", rule.name, std::move(message));
    out.push_back(std::move(v));
  }
  std::string at(int64_t flat) const { return formatLogical(unflattenIndex(shape, flat)); }
};

int64_t bitsOf(const BufferInfo &b) {
  return std::max(dtypeBits(b.dtype), 1);
}

// The layout with its swizzle removed: addresses before the swizzle.
Layout unswizzled(const Layout &l) {
  return *Layout::make(l.shard(), l.replica(), l.offset(), std::nullopt, nullptr);
}

// The m coordinate of an element's base owner, as Layout::base gives it,
// without building the whole owner: the exhaustive rules below ask it of
// every element of every operand (40 % of the dispatch stage's time on the
// persistent GEMM went to whole owners).
class MemoryCoordinate {
public:
  explicit MemoryCoordinate(const Layout &l) : swizzle_(l.swizzle()) {
    int64_t radix = 1;
    for (size_t k = l.shard().size(); k-- > 0;) {
      const Iter &it = l.shard()[k];
      if (it.axis == Axis::m)
        digits_.push_back({radix, it.extent, it.stride});
      radix *= it.extent;
    }
    for (const AxisOffset &o : l.offset())
      if (o.axis == Axis::m)
        offset_ += o.value;
  }
  int64_t operator()(int64_t flat) const {
    int64_t m = offset_;
    for (const Digit &d : digits_)
      m += (flat / d.radix) % d.extent * d.stride;
    return swizzle_ ? swizzle_->apply(m) : m;
  }

private:
  struct Digit {
    int64_t radix, extent, stride;
  };
  std::vector<Digit> digits_;
  int64_t offset_ = 0;
  std::optional<Swizzle> swizzle_;
};

// Byte address of an element's memory owner (swizzled or not).
int64_t byteOf(const MemoryCoordinate &m, const BufferInfo &b, int64_t flat) {
  return b.baseByte + m(flat) * bitsOf(b) / 8;
}

// The hardware swizzle modes act on 16-byte chunks: S = 3, B in 1..3, and
// 2^M elements make 16 bytes. Returns the span (32/64/128) or 0 with a reason.
int swizzleSpan(const Swizzle &s, const BufferInfo &b, std::string *why) {
  if (s.shift == 3 && s.bitsXored >= 1 && s.bitsXored <= 3 &&
      (int64_t{1} << s.bitsKept) * bitsOf(b) == 128)
    return 16 << s.bitsXored;
  *why = fmt::format("swizzle({}, {}, {}) is not a hardware swizzle mode for {}", s.bitsKept,
                     s.bitsXored, s.shift, dtypeName(b.dtype));
  return 0;
}

bool onlyMemory(const Layout &l) {
  return l.axesUsed() == (1u << static_cast<unsigned>(Axis::m)) && l.replicas() == 1;
}

void checkTma(Findings &f, const BufferInfo &b, const InstructionUse &use) {
  size_t batch = std::min(use.batchDims, f.shape.size());
  std::vector<int64_t> box(f.shape.begin() + static_cast<std::ptrdiff_t>(batch), f.shape.end());
  if (box.empty() || static_cast<int>(box.size()) > f.rule.maxRank)
    f.add(-1, fmt::format("a box has rank 1 to {}, not {}", f.rule.maxRank, box.size()));
  for (size_t d = 0; d < box.size(); ++d)
    if (box[d] > f.rule.maxBoxExtent)
      f.add(-1, fmt::format("box extent {} of dimension {} exceeds {}", box[d], d + batch,
                            f.rule.maxBoxExtent));
  int64_t innerBytes = box.empty() ? 0 : box.back() * bitsOf(b) / 8;
  if (innerBytes % f.rule.innerBytesMultiple != 0)
    f.add(-1, fmt::format("the inner box dimension is {} bytes, not a multiple of {}", innerBytes,
                          f.rule.innerBytesMultiple));
  for (size_t d = 0; d < use.globalStridesBytes.size(); ++d)
    if (use.globalStridesBytes[d] % 16 != 0)
      f.add(-1, fmt::format("global stride {} of {} bytes is not a multiple of 16", d,
                            use.globalStridesBytes[d]));
  if (!onlyMemory(f.layout)) {
    f.add(-1, "the destination must be a plain shared-memory layout (axis m only, no replicas)");
    return;
  }
  int64_t alignment = 128;
  if (const auto &sw = f.layout.swizzle()) {
    std::string why;
    int span = swizzleSpan(*sw, b, &why);
    if (!span) {
      f.add(-1, why);
      return;
    }
    if (innerBytes > span)
      f.add(-1, fmt::format("the inner box dimension is {} bytes, wider than the {}B swizzle span",
                            innerBytes, span));
    alignment = 8 * span; // the swizzle pattern repeats every 8 rows of the span
  }
  // Each box lands dense and row-major after the swizzle.
  MemoryCoordinate plain(unswizzled(f.layout));
  int64_t boxSize = 1;
  for (int64_t e : box)
    boxSize *= e;
  for (int64_t first = 0; first < f.layout.size(); first += boxSize) {
    int64_t start = plain(first);
    int64_t startByte = b.baseByte + start * bitsOf(b) / 8;
    if (startByte % alignment != 0) {
      f.add(first, fmt::format("the box at {} starts at byte {}, not aligned to {} bytes",
                               f.at(first), startByte, alignment));
      return;
    }
    for (int64_t i = 0; i < boxSize; ++i)
      if (plain(first + i) != start + i) {
        f.add(first + i, fmt::format("TMA writes the box dense and row-major, but {} is at m {} "
                                     "before the swizzle, not {}",
                                     f.at(first + i), plain(first + i), start + i));
        return;
      }
  }
}

void checkMatrix(Findings &f, const BufferInfo &b) {
  const auto &shape = f.shape;
  if (shape.size() < 2) {
    f.add(-1, "needs a tile of rank 2 or more (rows x columns)");
    return;
  }
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  if (rows % 8 != 0 || cols % 8 != 0) {
    f.add(-1, fmt::format("8x8 matrices do not tile {} x {}", rows, cols));
    return;
  }
  if ((rows / 8) * (cols / 8) % f.rule.matrices != 0)
    f.add(-1, fmt::format("{} matrices per instruction do not tile {} x {}", f.rule.matrices, rows,
                          cols));
  if (!onlyMemory(f.layout)) {
    f.add(-1, "the operand must be a plain shared-memory layout (axis m only, no replicas)");
    return;
  }
  // Every 8-element row segment is one 16-byte row address.
  MemoryCoordinate m(f.layout);
  for (int64_t seg = 0; seg < f.layout.size(); seg += 8) {
    int64_t first = byteOf(m, b, seg);
    if (first % 16 != 0) {
      f.add(seg, fmt::format("the row starting at {} is at byte {}, not 16-byte aligned", f.at(seg),
                             first));
      return;
    }
    for (int64_t j = 1; j < 8; ++j)
      if (byteOf(m, b, seg + j) != first + 2 * j) {
        f.add(seg + j, fmt::format("a matrix row is 16 contiguous bytes, but {} is at byte {}, "
                                   "not {}",
                                   f.at(seg + j), byteOf(m, b, seg + j), first + 2 * j));
        return;
      }
  }
}

void checkSmemOperand(Findings &f, const BufferInfo &b, const InstructionUse &use) {
  const auto &shape = f.shape;
  int64_t bits = bitsOf(b);
  if (bits != 8 && bits != 16 && bits != 32)
    f.add(-1,
          fmt::format("operands are 8, 16 or 32 bits wide, not {} ({})", bits, dtypeName(b.dtype)));
  if (shape.size() < 2) {
    f.add(-1, "needs a tile of rank 2 or more ([M or N, K])");
    return;
  }
  if (!onlyMemory(f.layout)) {
    f.add(-1, "the operand must be a plain shared-memory layout (axis m only, no replicas)");
    return;
  }
  int64_t mn = shape[shape.size() - 2], k = shape.back();
  if (k * bits / 8 % 32 != 0)
    f.add(-1, fmt::format("K = {} is {} bytes, not a whole number of 32-byte instruction steps", k,
                          k * bits / 8));
  int64_t span = 16; // no swizzle: 8 x 16-byte core matrices
  if (const auto &sw = f.layout.swizzle()) {
    std::string why;
    span = swizzleSpan(*sw, b, &why);
    if (!span) {
      f.add(-1, why);
      return;
    }
  }
  // Atom rows run along the strided dimension, bytes along the contiguous one.
  int64_t rowsExtent = use.mnMajor ? k : mn, contigExtent = use.mnMajor ? mn : k;
  if (rowsExtent % 8 != 0) {
    f.add(-1, fmt::format("{} = {} is not a multiple of the 8-row core matrix",
                          use.mnMajor ? "K" : "M/N", rowsExtent));
    return;
  }
  int64_t perRow = span * 8 / bits;
  MemoryCoordinate plain(unswizzled(f.layout));
  auto addr = [&](int64_t lead, int64_t row, int64_t contig) {
    int64_t r = use.mnMajor ? contig : row, c = use.mnMajor ? row : contig;
    return b.baseByte + plain(lead * mn * k + r * k + c) * bits / 8;
  };
  int64_t tiles = f.layout.size() / (mn * k);
  for (int64_t lead = 0; lead < tiles; ++lead) {
    int64_t a0 = addr(lead, 0, 0);
    int64_t sbo = rowsExtent > 8 ? addr(lead, 8, 0) - a0 : 0;
    int64_t lbo = contigExtent > perRow ? addr(lead, 0, perRow) - a0 : 0;
    int64_t atomAlign = f.layout.swizzle() ? 8 * span : 16;
    for (auto [what, v] : {std::pair{"start address", a0},
                           {"stride byte offset", sbo},
                           {"leading byte offset", lbo}})
      if (v < 0 || v % atomAlign != 0 || v >= (int64_t{1} << 18)) {
        f.add(lead * mn * k,
              fmt::format("the descriptor's {} would be {} bytes, which is not a multiple of {} "
                          "below 2^18",
                          what, v, atomAlign));
        return;
      }
    for (int64_t row = 0; row < rowsExtent; ++row)
      for (int64_t c = 0; c < contigExtent; ++c) {
        int64_t want =
            a0 + row / 8 * sbo + c / perRow * lbo + row % 8 * span + c % perRow * bits / 8;
        int64_t got = addr(lead, row, c);
        if (got != want) {
          int64_t r = use.mnMajor ? c : row, cc = use.mnMajor ? row : c;
          int64_t flat = lead * mn * k + r * k + cc;
          f.add(flat, fmt::format("a {}-major descriptor with {}-byte atoms reads {} at byte {} "
                                  "(before the swizzle), but the layout puts it at byte {}",
                                  use.mnMajor ? "MN" : "K", span, f.at(flat), want, got));
          return;
        }
      }
  }
}

void checkTmemAccess(Findings &f, const BufferInfo &b) {
  const auto &shape = f.shape;
  if (shape.size() < 2) {
    f.add(-1, "needs a tile of rank 2 or more (lanes x columns)");
    return;
  }
  int64_t rows = shape[shape.size() - 2], cols = shape.back(), bits = bitsOf(b);
  if (rows % f.rule.lanes != 0)
    f.add(-1,
          fmt::format("{} rows are not a whole number of {}-lane accesses", rows, f.rule.lanes));
  if (cols * bits % f.rule.bitsPerLane != 0)
    f.add(-1, fmt::format("a row of {} x {} bits is not a whole number of {}-bit repetitions", cols,
                          bits, f.rule.bitsPerLane));
  uint32_t want =
      (1u << static_cast<unsigned>(Axis::TLane)) | (1u << static_cast<unsigned>(Axis::TCol));
  if ((f.layout.axesUsed() & ~want) != 0 || f.layout.replicas() != 1) {
    f.add(-1, "the operand must sit on TLane and TCol only, without replicas");
    return;
  }
  int64_t perColumn = bits >= 32 ? bits / 32 : 1; // narrow types unpacked, one per column
  PhysCoord first = f.layout.base(0);
  int64_t lane0 = first.get(Axis::TLane), col0 = first.get(Axis::TCol);
  // A warp reaches only the 32 lanes of its quarter; a 16-lane shape starts
  // at either half of it.
  if (lane0 % f.rule.lanes != 0)
    f.add(0, fmt::format("the tile starts at TMEM lane {}, not a multiple of {}", lane0,
                         f.rule.lanes));
  int64_t tiles = f.layout.size() / (rows * cols);
  for (int64_t lead = 0; lead < tiles; ++lead) {
    PhysCoord c0 = f.layout.base(lead * rows * cols);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t flat = (lead * rows + r) * cols + c;
        PhysCoord p = f.layout.base(flat);
        int64_t lane = c0.get(Axis::TLane) + r, col = c0.get(Axis::TCol) + c * perColumn;
        if (p.get(Axis::TLane) != lane || p.get(Axis::TCol) != col) {
          f.add(flat, fmt::format("row i of the tile is TMEM lane {} + i with consecutive "
                                  "columns, so {} belongs at {{TLane: {}, TCol: {}}}, not {}",
                                  c0.get(Axis::TLane), f.at(flat), lane, col, p.str()));
          return;
        }
      }
  }
  (void)col0;
}

void checkSharedAccess(Findings &f, const BufferInfo &b) {
  int64_t bits = bitsOf(b);
  if (bits > f.rule.accessBits || f.rule.accessBits % bits != 0) {
    f.add(-1, fmt::format("{}-bit accesses cannot carry whole {}-bit elements", f.rule.accessBits,
                          bits));
    return;
  }
  int64_t perThread = f.rule.accessBits / bits, bytes = f.rule.accessBits / 8;
  if (f.layout.size() % perThread != 0) {
    f.add(-1, fmt::format("{} elements are not a whole number of {}-element accesses",
                          f.layout.size(), perThread));
    return;
  }
  if (!onlyMemory(f.layout)) {
    f.add(-1, "the operand must be a plain shared-memory layout (axis m only, no replicas)");
    return;
  }
  MemoryCoordinate m(f.layout);
  for (int64_t flat = 0; flat < f.layout.size(); flat += perThread) {
    int64_t first = byteOf(m, b, flat);
    if (first % bytes != 0) {
      f.add(flat, fmt::format("the access starting at {} is at byte {}, not {}-byte aligned",
                              f.at(flat), first, bytes));
      return;
    }
    for (int64_t j = 1; j < perThread; ++j)
      if (byteOf(m, b, flat + j) != first + j * bits / 8) {
        f.add(flat + j,
              fmt::format("one access is {} contiguous bytes, but {} is at byte {}, "
                          "not {}",
                          bytes, f.at(flat + j), byteOf(m, b, flat + j), first + j * bits / 8));
        return;
      }
  }
}
} // namespace

const std::vector<InstructionRule> &instructionRules() {
  static const std::vector<InstructionRule> rules = buildRules();
  return rules;
}

const InstructionRule *findInstructionRule(std::string_view name) {
  for (const InstructionRule &r : instructionRules())
    if (r.name == name)
      return &r;
  return nullptr;
}

std::string instructionRuleNames() {
  std::string out;
  for (const InstructionRule &r : instructionRules())
    out += fmt::format("{}{}", out.empty() ? "" : ", ", r.name);
  return out;
}

namespace {

std::vector<LayoutViolation> check(const InstructionRule &rule, const Layout &layout,
                                   const std::vector<int64_t> &shape, const BufferInfo &buffer,
                                   const TargetInfo &target, const InstructionUse &use);

// The last questions checkInstruction answered on this thread and its
// answers. The element-by-element rules (a TMA box, every 8x8 matrix row)
// cost a tenth of a static reward, and the dispatch and layout stages ask the
// same questions of one candidate, as an agent's next candidate mostly does.
// The answer is a function of the arguments alone, and an entry answers only
// the same arguments: the same rule and target (entries of their constant
// tables), an equal layout (shard, replica, offset and swizzle, so its text
// too), shape, buffer and use, every field compared.
struct Question {
  const InstructionRule *rule;
  const TargetInfo *target;
  Layout layout;
  std::vector<int64_t> shape;
  BufferInfo buffer;
  InstructionUse use;
};
// Every field compared: the structured bindings stop compiling when
// BufferInfo or InstructionUse gains one, until it joins the comparison.
bool sameBuffer(const BufferInfo &a, const BufferInfo &b) {
  const auto &[name, scope, dtype, memoryElements, tmemColumns, baseByte, mayAlias] = a;
  return name == b.name && scope == b.scope && dtype == b.dtype &&
         memoryElements == b.memoryElements && tmemColumns == b.tmemColumns &&
         baseByte == b.baseByte && mayAlias == b.mayAlias;
}

bool sameUse(const InstructionUse &a, const InstructionUse &b) {
  const auto &[globalStridesBytes, batchDims, mnMajor] = a;
  return globalStridesBytes == b.globalStridesBytes && batchDims == b.batchDims &&
         mnMajor == b.mnMajor;
}

bool inTable(const InstructionRule &rule) {
  const std::vector<InstructionRule> &rules = instructionRules();
  return &rule >= rules.data() && &rule < rules.data() + rules.size();
}

} // namespace

std::vector<LayoutViolation> checkInstruction(const InstructionRule &rule, const Layout &layout,
                                              const std::vector<int64_t> &shape,
                                              const BufferInfo &buffer, const TargetInfo &target,
                                              const InstructionUse &use) {
  // Only the constant tables' entries are known by their address.
  if (!inTable(rule) || &target != &targetInfo(target.kind))
    return check(rule, layout, shape, buffer, target, use);
  constexpr size_t kRemembered = 64;
  thread_local std::vector<std::pair<Question, std::vector<LayoutViolation>>> memo;
  thread_local size_t next = 0;
  for (const auto &[q, answer] : memo)
    if (q.rule == &rule && q.target == &target && q.shape == shape && q.layout == layout &&
        sameBuffer(q.buffer, buffer) && sameUse(q.use, use))
      return answer;
  std::vector<LayoutViolation> answer = check(rule, layout, shape, buffer, target, use);
  std::pair<Question, std::vector<LayoutViolation>> entry{
      Question{&rule, &target, layout, shape, buffer, use}, answer};
  if (memo.size() < kRemembered)
    memo.push_back(std::move(entry));
  else
    memo[next++ % kRemembered] = std::move(entry);
  return answer;
}

namespace {

std::vector<LayoutViolation> check(const InstructionRule &rule, const Layout &layout,
                                   const std::vector<int64_t> &shape, const BufferInfo &buffer,
                                   const TargetInfo &target, const InstructionUse &use) {
  Findings f{rule, layout, shape, {}};
  if (!layout.admits(shape)) {
    f.add(-1, fmt::format("layout {} does not admit shape {}", layout.str(), formatLogical(shape)));
    return f.out;
  }
  if (!targetHas(target.kind, rule.feature)) {
    f.add(-1, fmt::format("{} does not exist on {}", rule.name, target.name));
    return f.out;
  }
  if (buffer.scope != rule.scope) {
    f.add(-1, fmt::format("the operand is a {} buffer, but {} works on {} memory",
                          memScopeName(buffer.scope), rule.name, memScopeName(rule.scope)));
    return f.out;
  }
  if (rule.elementBits && dtypeBits(buffer.dtype) != rule.elementBits) {
    f.add(-1, fmt::format("elements are {} bits wide, not {} ({})", rule.elementBits,
                          dtypeBits(buffer.dtype), dtypeName(buffer.dtype)));
    return f.out;
  }
  // Every operand lives in shared or tensor memory, far below this; refusing
  // larger ones keeps the element-by-element rules from running for hours.
  constexpr int64_t kLargestOperand = int64_t{1} << 22;
  if (layout.size() > kLargestOperand) {
    f.add(-1, fmt::format("an operand of {} elements does not fit in {} memory", layout.size(),
                          memScopeName(rule.scope)));
    return f.out;
  }
  switch (rule.family) {
  case F::Tma:
    checkTma(f, buffer, use);
    break;
  case F::Matrix:
    checkMatrix(f, buffer);
    break;
  case F::SmemOperand:
    checkSmemOperand(f, buffer, use);
    break;
  case F::TmemAccess:
    checkTmemAccess(f, buffer);
    break;
  case F::SharedAccess:
    checkSharedAccess(f, buffer);
    break;
  }
  return f.out;
}

} // namespace

} // namespace tilescope
