// The descriptors tensor-core instructions read, as data: each descriptor is a
// 64- or 32-bit word of fields, and each field is stated once here, in
// Descriptors.cpp — its name (as the PTX ISA names it), its bits [offset,
// offset + width), and how a value is encoded into them: divided by
// 2^unitLog2 (a byte offset in 16-byte units: unitLog2 = 4; N in 8s: 3) and
// masked to the width, or a constant the word must always hold (`fixed`).
//
//   wgmma shared-memory matrix descriptor (sm_90), 64 bits:
//     start address >> 4 [0, 14), leading dimension byte offset >> 4 [16, 30),
//     stride dimension byte offset >> 4 [32, 46), base offset [49, 52),
//     swizzle mode [62, 64) (0 none, 1 128B, 2 64B, 3 32B)
//
// Every packing of a descriptor is generated from these records:
//   - on the host, packDescriptor / unpackDescriptor (the emitter's constant
//     tcgen05 instruction descriptor, the PTX reader's decoding of the
//     descriptors nvcc builds);
//   - on the device, descriptorHelperCuda: the text of a CUDA function that
//     packs the fields a kernel computes at run time, which
//     codegen/GenPrelude.cpp writes into the preludes at build time
//     (ts_wgmma_desc, ts_umma_desc, ...).
// The value codes of a field (the swizzle modes, the tcgen05 kinds' dtypes)
// are in its record too (`codes`).
//
// Depends on the standard library only (the prelude generator compiles it on
// its own).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace tilescope {

// The fields of every descriptor; a descriptor has some of them.
enum class DescField : uint8_t {
  StartAddress,      // shared-memory byte address
  LeadingByteOffset, // bytes
  StrideByteOffset,  // bytes
  Version,           // tcgen05's fixed 0b001
  BaseOffset,
  LboMode, // tcgen05: leading byte offset relative (0) or absolute (1)
  FixedZero,
  Swizzle, // the swizzle mode's code (codes: by swizzle span in bytes)
  SparsitySelector,
  Sparse,
  Saturate,
  DFormat, // the accumulator's dtype (codes: by dtype name)
  AFormat,
  BFormat,
  NegateA,
  NegateB,
  TransposeA, // 1: MN-major
  TransposeB,
  N, // the MMA's N
  M, // the MMA's M
  MaxShift,
};

enum class DescriptorKind : uint8_t {
  WgmmaSmem,       // wgmma's shared-memory matrix descriptor (sm_90)
  Tcgen05Smem,     // tcgen05.mma's shared-memory matrix descriptor (sm_100)
  Tcgen05InstrF16, // tcgen05.mma's instruction descriptor, kinds f16, tf32, f8f6f4, i8
};

// One value a field may hold, by name ("bf16", "128B") and by a number where
// one says it (the swizzle span in bytes; 0 otherwise).
struct FieldCode {
  const char *name;
  int64_t key;
  uint64_t code;
};

struct DescriptorField {
  DescField field;
  const char *name;
  int offset;
  int width;
  int unitLog2 = 0;
  std::optional<uint64_t> fixed = std::nullopt; // the code the word always holds
  std::span<const FieldCode> codes = {};
};

struct DescriptorFormat {
  DescriptorKind kind;
  const char *name;
  int bits; // 64 or 32
  std::span<const DescriptorField> fields;
};

// Every descriptor format, in DescriptorKind order.
std::span<const DescriptorFormat> descriptorFormats();
const DescriptorFormat &descriptorFormat(DescriptorKind kind);
// The field of a format; null when the format has none such.
const DescriptorField *findField(const DescriptorFormat &format, DescField field);

// Why a format is malformed (a field of width 0 or outside the word, two
// fields sharing a bit, a field twice, a code or fixed value wider than its
// field), or "" when it is well formed.
std::string checkFormat(const DescriptorFormat &format);

// The bits of `value` in `f`'s place: (value >> unitLog2) masked to the
// width, shifted to the offset; a fixed field gives its code whatever the
// value.
uint64_t encodeField(const DescriptorField &f, uint64_t value);
// The value `word` holds in `f`: its bits, times 2^unitLog2.
uint64_t decodeField(const DescriptorField &f, uint64_t word);
// The values that survive encoding: a multiple of 2^unitLog2 below
// 2^(width + unitLog2).
bool fieldHolds(const DescriptorField &f, uint64_t value);

// A descriptor of `kind` with the given fields (values, not codes; the
// fixed fields hold their codes; the others are 0). Asking for a field the
// format has not is a programming error (it aborts).
uint64_t packDescriptor(DescriptorKind kind,
                        std::initializer_list<std::pair<DescField, uint64_t>> values);
// The value of one field of a descriptor word (a field the format has not
// aborts, as above).
uint64_t unpackDescriptor(DescriptorKind kind, uint64_t word, DescField field);

// The code of a field's value by name or by key; nothing when the field has
// no such code.
std::optional<uint64_t> fieldCode(DescriptorKind kind, DescField field, std::string_view name);
std::optional<uint64_t> fieldCodeByKey(DescriptorKind kind, DescField field, int64_t key);
// The key of a code (the swizzle span of a mode); nothing for an unknown code.
std::optional<int64_t> fieldKeyOfCode(DescriptorKind kind, DescField field, uint64_t code);

// One parameter of a device packing helper: the field it fills, its C type
// and name.
struct HelperParam {
  DescField field;
  const char *type;
  const char *name;
};
// A device packing helper: `name`(params...) returns the descriptor with the
// parameters' fields, the constants' fields (values), the fixed fields.
struct DescriptorHelper {
  DescriptorKind kind;
  const char *name;
  std::span<const HelperParam> params;
  std::span<const std::pair<DescField, uint64_t>> constants;
};
// The CUDA text of a helper (a __device__ __forceinline__ function; its
// comment is the prelude's), one `d |= ...;` line per field in the order of
// its bits, each `encodeField` written in C: ((p >> unitLog2) & mask) <<
// offset, or for an unsigned p ((p & (2^(width + unitLog2) - 1)) >>
// unitLog2) << offset, and no mask for a field at the top of the word. The
// text is that of the functions the preludes had before the table, byte for
// byte, so the lowered output did not change.
std::string descriptorHelperCuda(const DescriptorHelper &helper);

} // namespace tilescope
