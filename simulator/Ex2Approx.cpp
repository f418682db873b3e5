#include "simulator/Ex2Approx.h"
#include "simulator/Numerics.h"

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// simulator/data/ex2_approx_ftz_sm90.bin.gz, embedded by EmbedBinary.cmake.
extern const unsigned char tilescopeEx2TableGz[];
extern const unsigned long tilescopeEx2TableGzSize;

namespace tilescope::sim {
using numerics::bitsOf;
using numerics::floatOf;

namespace {

// The table file (after gunzip): "EX2T", the entry count n = 2^23 (u32), then
// two sides, (-1, 0] by magnitude (entry i: x = -i 2^-23) and [0, 1) (entry i:
// x = i 2^-23); each side is the first result's bits (u32) and the n - 1
// differences of consecutive results' bits (i8, all of one sign per side and
// at most 3 in magnitude). Here each side is kept as 2-bit magnitudes with a
// checkpoint (the full bits) every 32 entries: 2 MiB + 1 MiB a side.
constexpr uint32_t kEntries = 1u << 23;
constexpr uint32_t kStride = 32;

struct Side {
  std::vector<uint8_t> packed;       // 4 magnitudes a byte
  std::vector<uint32_t> checkpoints; // bits of entry k * kStride
  int sign = 1;

  uint32_t at(uint32_t i) const {
    uint32_t k = i / kStride, base = k * kStride;
    uint32_t v = checkpoints[k];
    int32_t sum = 0;
    for (uint32_t j = base + 1; j <= i; ++j)
      sum += (packed[j / 4] >> (2 * (j % 4))) & 3;
    return v + static_cast<uint32_t>(sign * sum);
  }
};

struct Table {
  Side neg, pos;
};

[[noreturn]] void corrupt(const char *why) {
  std::fprintf(stderr, "tilescope: the embedded ex2.approx table is unusable: %s\n", why);
  std::abort();
}

std::vector<unsigned char> gunzip() {
  std::vector<unsigned char> out(8 + 2 * (4 + kEntries - 1));
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    corrupt("zlib init");
  z.next_in = const_cast<unsigned char *>(tilescopeEx2TableGz);
  z.avail_in = static_cast<uInt>(tilescopeEx2TableGzSize);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  bool whole = rc == Z_STREAM_END && z.avail_out == 0;
  inflateEnd(&z);
  if (!whole)
    corrupt("not the expected size");
  return out;
}

Table load() {
  std::vector<unsigned char> raw = gunzip();
  uint32_t n = 0;
  std::memcpy(&n, raw.data() + 4, 4);
  if (std::memcmp(raw.data(), "EX2T", 4) != 0 || n != kEntries)
    corrupt("bad header");
  Table t;
  size_t off = 8;
  for (Side *s : {&t.neg, &t.pos}) {
    uint32_t v = 0;
    std::memcpy(&v, raw.data() + off, 4);
    off += 4;
    s->sign = s == &t.neg ? -1 : 1;
    s->packed.assign(kEntries / 4, 0);
    s->checkpoints.assign(kEntries / kStride, 0);
    s->checkpoints[0] = v;
    for (uint32_t i = 1; i < kEntries; ++i) {
      int d = static_cast<int8_t>(raw[off + i - 1]);
      int mag = s->sign * d;
      if (mag < 0 || mag > 3)
        corrupt("a difference out of range");
      v += static_cast<uint32_t>(d);
      s->packed[i / 4] |= static_cast<uint8_t>(mag << (2 * (i % 4)));
      if (i % kStride == 0)
        s->checkpoints[i / kStride] = v;
    }
    off += kEntries - 1;
  }
  return t;
}

const Table &table() {
  static const Table t = load();
  return t;
}

} // namespace

float ex2ApproxFtz(float x) {
  uint32_t b = bitsOf(x);
  if ((b & 0x7F800000u) == 0)
    return 1.0f; // zero or subnormal: flushed to zero, 2^0
  if (std::isnan(x))
    return floatOf(0x7FFFFFFFu);
  if (x >= 128.0f)
    return INFINITY;
  if (x < -126.0f)
    return 0.0f; // below 2^-126: flushed (and -inf)
  bool negative = x < 0;
  float a = std::fabs(x);
  float k = std::floor(a);
  float frac = a - k; // exact: a has at most 23 fraction bits once a >= 1
  // the fraction truncated to 23 bits (frac < 1, so the product is exact)
  uint32_t i = static_cast<uint32_t>(std::ldexp(static_cast<double>(frac), 23));
  const Table &t = table();
  uint32_t v = negative ? t.neg.at(i) : t.pos.at(i);
  int e =
      static_cast<int>((v >> 23) & 0xFF) + (negative ? -static_cast<int>(k) : static_cast<int>(k));
  if (e <= 0)
    return 0.0f; // a result below 2^-126 is flushed
  return floatOf((v & 0x807FFFFFu) | (static_cast<uint32_t>(e) << 23));
}

} // namespace tilescope::sim
