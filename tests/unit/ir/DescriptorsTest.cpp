// The descriptor formats (ir/Descriptors.h): every format well formed (no two
// fields share a bit, every field inside its word), every field where the
// PTX ISA puts it, every value that fits a field read back as written, and
// the malformed formats the check must refuse.
#include "ir/Descriptors.h"

#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

using namespace tilescope;

namespace {

// A random value the field holds: a multiple of its unit below its range.
uint64_t drawValue(std::mt19937_64 &rng, const DescriptorField &f) {
  if (f.fixed)
    return *f.fixed;
  uint64_t code = rng() & ((uint64_t{1} << f.width) - 1);
  return code << f.unitLog2;
}

struct Expected {
  DescField field;
  int offset, width, unitLog2;
};

void checkPlaces(DescriptorKind kind, std::initializer_list<Expected> places) {
  const DescriptorFormat &format = descriptorFormat(kind);
  CHECK(format.fields.size() == places.size());
  for (const Expected &e : places) {
    const DescriptorField *f = findField(format, e.field);
    REQUIRE(f != nullptr);
    INFO(format.name << ", " << f->name);
    CHECK(f->offset == e.offset);
    CHECK(f->width == e.width);
    CHECK(f->unitLog2 == e.unitLog2);
  }
}

} // namespace

TEST_CASE("descriptor formats: one per kind, in kind order, each well formed") {
  auto formats = descriptorFormats();
  REQUIRE(formats.size() == 3);
  for (size_t i = 0; i < formats.size(); ++i) {
    const DescriptorFormat &format = formats[i];
    INFO(format.name);
    CHECK(static_cast<size_t>(format.kind) == i);
    CHECK(&descriptorFormat(format.kind) == &format);
    CHECK(checkFormat(format) == "");
    // No two fields share a bit, and every field is inside the word,
    // counted bit by bit (independently of checkFormat).
    std::vector<int> owner(format.bits, -1);
    std::set<DescField> seen;
    for (size_t j = 0; j < format.fields.size(); ++j) {
      const DescriptorField &f = format.fields[j];
      INFO(f.name);
      CHECK(seen.insert(f.field).second);
      CHECK(f.width > 0);
      CHECK(f.offset >= 0);
      CHECK(f.offset + f.width <= format.bits);
      for (int b = f.offset; b < f.offset + f.width && b < format.bits; ++b) {
        CHECK(owner[b] == -1);
        owner[b] = int(j);
      }
    }
  }
}

TEST_CASE("descriptor fields sit where the PTX ISA puts them") {
  checkPlaces(DescriptorKind::WgmmaSmem, {{DescField::StartAddress, 0, 14, 4},
                                          {DescField::LeadingByteOffset, 16, 14, 4},
                                          {DescField::StrideByteOffset, 32, 14, 4},
                                          {DescField::BaseOffset, 49, 3, 0},
                                          {DescField::Swizzle, 62, 2, 0}});
  checkPlaces(DescriptorKind::Tcgen05Smem, {{DescField::StartAddress, 0, 14, 4},
                                            {DescField::LeadingByteOffset, 16, 14, 4},
                                            {DescField::StrideByteOffset, 32, 14, 4},
                                            {DescField::Version, 46, 3, 0},
                                            {DescField::BaseOffset, 49, 3, 0},
                                            {DescField::LboMode, 52, 1, 0},
                                            {DescField::FixedZero, 53, 8, 0},
                                            {DescField::Swizzle, 61, 3, 0}});
  checkPlaces(DescriptorKind::Tcgen05InstrF16, {{DescField::SparsitySelector, 0, 2, 0},
                                                {DescField::Sparse, 2, 1, 0},
                                                {DescField::Saturate, 3, 1, 0},
                                                {DescField::DFormat, 4, 2, 0},
                                                {DescField::AFormat, 7, 3, 0},
                                                {DescField::BFormat, 10, 3, 0},
                                                {DescField::NegateA, 13, 1, 0},
                                                {DescField::NegateB, 14, 1, 0},
                                                {DescField::TransposeA, 15, 1, 0},
                                                {DescField::TransposeB, 16, 1, 0},
                                                {DescField::N, 17, 6, 3},
                                                {DescField::M, 24, 5, 4},
                                                {DescField::MaxShift, 30, 2, 0}});
  CHECK(descriptorFormat(DescriptorKind::WgmmaSmem).bits == 64);
  CHECK(descriptorFormat(DescriptorKind::Tcgen05Smem).bits == 64);
  CHECK(descriptorFormat(DescriptorKind::Tcgen05InstrF16).bits == 32);
  // The fixed fields: tcgen05's version 0b001 and its zero bits 53-60.
  CHECK(packDescriptor(DescriptorKind::Tcgen05Smem, {}) == uint64_t{1} << 46);
  CHECK(packDescriptor(DescriptorKind::WgmmaSmem, {}) == 0);
  // The value codes.
  CHECK(fieldCodeByKey(DescriptorKind::WgmmaSmem, DescField::Swizzle, 128) == 1u);
  CHECK(fieldCodeByKey(DescriptorKind::WgmmaSmem, DescField::Swizzle, 32) == 3u);
  CHECK(fieldCodeByKey(DescriptorKind::Tcgen05Smem, DescField::Swizzle, 64) == 4u);
  CHECK(fieldCodeByKey(DescriptorKind::Tcgen05Smem, DescField::Swizzle, 16) == 0u);
  CHECK(!fieldCodeByKey(DescriptorKind::Tcgen05Smem, DescField::Swizzle, 256));
  CHECK(fieldKeyOfCode(DescriptorKind::Tcgen05Smem, DescField::Swizzle, 6) == 32);
  CHECK(!fieldKeyOfCode(DescriptorKind::Tcgen05Smem, DescField::Swizzle, 1));
  CHECK(fieldCode(DescriptorKind::Tcgen05InstrF16, DescField::AFormat, "bf16") == 1u);
  CHECK(fieldCode(DescriptorKind::Tcgen05InstrF16, DescField::DFormat, "f32") == 1u);
  CHECK(!fieldCode(DescriptorKind::Tcgen05InstrF16, DescField::AFormat, "e4m3"));
  // A whole word, bit by bit: 128B swizzle, SBO 1024, LBO 16, address 0x400.
  CHECK(packDescriptor(DescriptorKind::WgmmaSmem, {{DescField::StartAddress, 0x400},
                                                   {DescField::LeadingByteOffset, 16},
                                                   {DescField::StrideByteOffset, 1024},
                                                   {DescField::Swizzle, 1}}) ==
        0x4000004000010040ull);
  // M = 128, N = 256, bf16 operands, f32 accumulators, K-major.
  CHECK(packDescriptor(DescriptorKind::Tcgen05InstrF16, {{DescField::DFormat, 1},
                                                         {DescField::AFormat, 1},
                                                         {DescField::BFormat, 1},
                                                         {DescField::N, 256},
                                                         {DescField::M, 128}}) == 0x08400490u);
}

TEST_CASE("every descriptor field round-trips every value it holds") {
  std::mt19937_64 rng(17);
  for (const DescriptorFormat &format : descriptorFormats()) {
    for (const DescriptorField &f : format.fields) {
      INFO(format.name << ", " << f.name);
      for (int trial = 0; trial < 2000; ++trial) {
        uint64_t v = drawValue(rng, f);
        REQUIRE(fieldHolds(f, v));
        uint64_t word = encodeField(f, v);
        // Only the field's bits, and inside the word.
        CHECK((word >> f.offset >> f.width) == 0);
        CHECK((format.bits == 64 || (word >> format.bits) == 0));
        CHECK(decodeField(f, word) == v);
        // Alone in a packed descriptor: every other field reads 0 or its
        // fixed code.
        uint64_t packed = packDescriptor(format.kind, {{f.field, v}});
        CHECK(unpackDescriptor(format.kind, packed, f.field) == v);
        for (const DescriptorField &g : format.fields)
          if (&g != &f)
            CHECK(decodeField(g, packed) == g.fixed.value_or(0) << g.unitLog2);
      }
      // Values the field does not hold: a fraction of the unit, past the range.
      if (!f.fixed) {
        if (f.unitLog2)
          CHECK(!fieldHolds(f, uint64_t{1} << (f.unitLog2 - 1)));
        CHECK(!fieldHolds(f, uint64_t{1} << (f.width + f.unitLog2)));
      }
    }
    // All fields at once, each read back.
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<std::pair<DescField, uint64_t>> values;
      uint64_t word = 0;
      for (const DescriptorField &f : format.fields) {
        values.push_back({f.field, drawValue(rng, f)});
        word |= encodeField(f, values.back().second);
      }
      for (auto [field, v] : values)
        CHECK(unpackDescriptor(format.kind, word, field) == v);
    }
  }
}

TEST_CASE("the format check refuses overlapping, outside and too wide fields") {
  const DescriptorFormat good = descriptorFormat(DescriptorKind::WgmmaSmem);
  const DescriptorField overlap[] = {{DescField::StartAddress, "a", 0, 14, 4},
                                     {DescField::LeadingByteOffset, "b", 13, 4, 4}};
  CHECK(checkFormat({good.kind, "t", 64, overlap}).find("overlap") != std::string::npos);
  const DescriptorField outside[] = {{DescField::Swizzle, "s", 62, 3}};
  CHECK(checkFormat({good.kind, "t", 64, outside}).find("outside") != std::string::npos);
  const DescriptorField outside32[] = {{DescField::M, "m", 30, 3, 4}};
  CHECK(checkFormat({good.kind, "t", 32, outside32}).find("outside") != std::string::npos);
  const DescriptorField twice[] = {{DescField::M, "m", 0, 3}, {DescField::M, "m", 4, 3}};
  CHECK(checkFormat({good.kind, "t", 32, twice}).find("twice") != std::string::npos);
  const DescriptorField wideFixed[] = {{DescField::Version, "v", 46, 3, 0, 9}};
  CHECK(checkFormat({good.kind, "t", 64, wideFixed}).find("wider") != std::string::npos);
  const FieldCode wideCodes[] = {{"x", 0, 4}};
  const DescriptorField wideCode[] = {{DescField::Swizzle, "s", 62, 2, 0, std::nullopt, wideCodes}};
  CHECK(checkFormat({good.kind, "t", 64, wideCode}).find("wider") != std::string::npos);
  const DescriptorField empty[] = {{DescField::M, "m", 3, 0}};
  CHECK(checkFormat({good.kind, "t", 32, empty}) != "");
}
