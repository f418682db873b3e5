#include "verifier/BankConflicts.h"

#include "ir/BankModel.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope {

namespace {
using Phase = std::vector<ThreadAccess>;
using Request = std::vector<Phase>;

// ldmatrix/stmatrix: per request `matrices` 8x8 matrices, covering 8 rows x
// 8*matrices columns... in the order x4 uses: (rows 0-7, cols 0-7),
// (rows 8-15, cols 0-7), (rows 0-7, cols 8-15), (rows 8-15, cols 8-15).
// Thread t supplies row t % 8 of matrix t / 8.
std::vector<Request> matrixRequests(const InstructionRule &rule, const std::vector<int64_t> &shape,
                                    std::string *error) {
  std::vector<Request> requests;
  if (shape.size() < 2) {
    *error = "needs a tile of rank 2 or more";
    return requests;
  }
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  int64_t blockRows = rule.matrices >= 2 ? 16 : 8, blockCols = rule.matrices == 4 ? 16 : 8;
  if (rows % blockRows != 0 || cols % blockCols != 0) {
    *error = fmt::format("{} covers {}x{} blocks, which do not tile {} x {}", rule.name, blockRows,
                         blockCols, rows, cols);
    return requests;
  }
  int64_t tiles = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    tiles *= shape[d];
  for (int64_t lead = 0; lead < tiles; ++lead)
    for (int64_t br = 0; br < rows; br += blockRows)
      for (int64_t bc = 0; bc < cols; bc += blockCols) {
        Request req;
        for (int64_t mat = 0; mat < rule.matrices; ++mat) {
          int64_t r0 = br + (mat % 2) * 8 * (blockRows / 16), c0 = bc + (mat / 2) * 8;
          if (rule.matrices == 2)
            r0 = br + mat * 8, c0 = bc;
          Phase phase;
          for (int64_t row = 0; row < 8; ++row) {
            ThreadAccess a{mat * 8 + row, {}};
            for (int64_t j = 0; j < 8; ++j)
              a.flats.push_back((lead * rows + r0 + row) * cols + c0 + j);
            phase.push_back(std::move(a));
          }
          req.push_back(std::move(phase));
        }
        requests.push_back(std::move(req));
      }
  return requests;
}

// ld/st.shared: a warp's 32 threads take consecutive row-major chunks of
// accessBits; 128 bytes per phase.
std::vector<Request> sharedRequests(const InstructionRule &rule, int64_t size, int bits,
                                    std::string *error) {
  std::vector<Request> requests;
  int64_t perThread = rule.accessBits / std::max(bits, 1);
  if (perThread < 1 || size % perThread != 0) {
    *error = fmt::format("{}-bit accesses do not tile {} elements of {} bits", rule.accessBits,
                         size, bits);
    return requests;
  }
  int64_t perPhase = threadsPerPhase(rule.accessBits / 8);
  int64_t perRequest = 32 * perThread;
  for (int64_t start = 0; start < size; start += perRequest) {
    Request req;
    for (int64_t t = 0; t < 32 && start + t * perThread < size; ++t) {
      if (t % perPhase == 0)
        req.emplace_back();
      ThreadAccess a{t, {}};
      for (int64_t j = 0; j < perThread; ++j)
        a.flats.push_back(start + t * perThread + j);
      req.back().push_back(std::move(a));
    }
    requests.push_back(std::move(req));
  }
  return requests;
}
} // namespace

std::vector<BankRequest> instructionRequests(const InstructionRule &rule,
                                             const std::vector<int64_t> &shape, int64_t size,
                                             int bits, std::string *error) {
  if (rule.family == InstructionFamily::Matrix)
    return matrixRequests(rule, shape, error);
  if (rule.family == InstructionFamily::SharedAccess)
    return sharedRequests(rule, size, bits, error);
  *error =
      fmt::format("{} has no shared-memory bank pattern (try ldmatrix.x4 or lds.128)", rule.name);
  return {};
}

BankReport analyzeBankConflicts(const InstructionRule &rule, const Layout &layout,
                                const std::vector<int64_t> &shape, const BufferInfo &buffer) {
  BankReport report;
  report.instruction = std::string(rule.name);
  if (!layout.admits(shape)) {
    report.error =
        fmt::format("layout {} does not admit shape {}", layout.str(), formatLogical(shape));
    return report;
  }
  if (layout.size() > (int64_t{1} << 22)) {
    report.error =
        fmt::format("a tile of {} elements does not fit in shared memory", layout.size());
    return report;
  }
  int bits = std::max(dtypeBits(buffer.dtype), 1);
  std::vector<Request> requests =
      instructionRequests(rule, shape, layout.size(), bits, &report.error);
  if (!report.error.empty())
    return report;
  report.requests = static_cast<int64_t>(requests.size());
  int64_t worst = -1;
  for (size_t q = 0; q < requests.size(); ++q) {
    int64_t wavefronts = 0;
    std::vector<BankAccess> worstBank;
    int64_t worstBankWords = 0;
    for (const Phase &phase : requests[q]) {
      // The one bank model (ir/BankModel.h), also behind the visualizer.
      BankPhase cost = costPhase(phase, layout, bits, buffer.baseByte);
      for (size_t bank = 0; bank < 32; ++bank) {
        if (cost.words[bank] <= worstBankWords)
          continue;
        worstBankWords = cost.words[bank];
        worstBank.clear();
        for (const WordAccess &a : cost.hits[bank])
          worstBank.push_back(
              {a.thread, unflattenIndex(shape, a.flat), a.byte, static_cast<int64_t>(bank)});
      }
      wavefronts += cost.wavefronts;
    }
    report.totalWavefronts += wavefronts;
    if (wavefronts > worst) {
      worst = wavefronts;
      report.worstRequest = static_cast<int64_t>(q);
      report.idealWavefronts = static_cast<int64_t>(requests[q].size());
      report.conflicts = worstBankWords > 1 ? worstBank : std::vector<BankAccess>{};
    }
  }
  report.wavefrontsPerRequest = std::max<int64_t>(worst, 0);
  return report;
}

std::string describe(const BankReport &r) {
  if (!r.error.empty())
    return fmt::format("{}: {}", r.instruction, r.error);
  std::string out =
      fmt::format("{}: {} requests, {} wavefronts per request (ideal {})", r.instruction,
                  r.requests, r.wavefrontsPerRequest, r.idealWavefronts);
  if (r.conflicts.empty())
    return out + ", conflict-free";
  out += fmt::format("; {}-way bank conflict in request {}, bank {}:", r.degree(), r.worstRequest,
                     r.conflicts.front().bank);
  for (size_t i = 0; i < r.conflicts.size(); ++i)
    out += fmt::format("{} thread {} reads {} at byte {}", i ? "," : "", r.conflicts[i].thread,
                       formatLogical(r.conflicts[i].logical), r.conflicts[i].byte);
  return out;
}

std::optional<LayoutViolation> bankViolation(const BankReport &r) {
  if (r.conflicts.empty() || !r.error.empty())
    return std::nullopt;
  LayoutViolation v{ViolationKind::Banks, {}, {}};
  for (const BankAccess &a : r.conflicts)
    v.witness.logical.push_back(a.logical);
  v.witness.physical.set(Axis::Bank, r.conflicts.front().bank);
  v.message = describe(r);
  return v;
}

} // namespace tilescope
