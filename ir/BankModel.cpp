#include "ir/BankModel.h"

#include <algorithm>

namespace tilescope {

int64_t threadsPerPhase(int64_t bytes) {
  if (bytes <= 4)
    return 32;
  return bytes <= 8 ? 16 : 8;
}

BankPhase costPhase(const std::vector<ThreadAccess> &phase, const Layout &layout, int bits,
                    int64_t baseByte) {
  BankPhase out;
  std::array<std::vector<int64_t>, 32> seen; // distinct words per bank
  int64_t width = std::max<int64_t>(bits / 8, 1);
  for (const ThreadAccess &a : phase) {
    out.threads.push_back(a.thread);
    for (int64_t flat : a.flats) {
      int64_t byte = baseByte + layout.base(flat).get(Axis::m) * bits / 8;
      // An element wider than a word touches consecutive words.
      for (int64_t w = byte / 4; w <= (byte + width - 1) / 4; ++w) {
        auto &words = seen[w % 32];
        if (std::find(words.begin(), words.end(), w) != words.end())
          continue;
        words.push_back(w);
        out.hits[w % 32].push_back({a.thread, flat, byte, w});
      }
    }
  }
  for (size_t b = 0; b < 32; ++b) {
    out.words[b] = static_cast<int64_t>(seen[b].size());
    out.wavefronts = std::max(out.wavefronts, out.words[b]);
  }
  return out;
}

std::vector<BankPhase> costRequest(const std::vector<ThreadAccess> &threads, int64_t bytes,
                                   const Layout &layout, int bits, int64_t baseByte) {
  std::vector<BankPhase> phases;
  size_t per = static_cast<size_t>(threadsPerPhase(bytes));
  for (size_t start = 0; start < threads.size(); start += per) {
    std::vector<ThreadAccess> phase(threads.begin() + start,
                                    threads.begin() + std::min(threads.size(), start + per));
    phases.push_back(costPhase(phase, layout, bits, baseByte));
  }
  return phases;
}

} // namespace tilescope
