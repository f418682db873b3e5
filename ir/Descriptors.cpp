// The descriptor formats (PTX ISA: "Matrix Descriptor Format" of wgmma,
// "Shared Memory Descriptor" and "Instruction descriptor" of tcgen05) and
// their host and CUDA-text packing. See Descriptors.h.
#include "ir/Descriptors.h"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace tilescope {
namespace {

// The swizzle modes, keyed by the swizzle span in bytes (16: none).
constexpr FieldCode kWgmmaSwizzle[] = {
    {"none", 16, 0}, {"128B", 128, 1}, {"64B", 64, 2}, {"32B", 32, 3}};
constexpr FieldCode kTcgen05Swizzle[] = {
    {"none", 16, 0}, {"128B", 128, 2}, {"64B", 64, 4}, {"32B", 32, 6}};
// kind::f16's dtypes: the accumulator's and the operands'.
constexpr FieldCode kF16KindD[] = {{"f16", 0, 0}, {"f32", 0, 1}};
constexpr FieldCode kF16KindAB[] = {{"f16", 0, 0}, {"bf16", 0, 1}};

constexpr DescriptorField kWgmmaSmem[] = {
    {DescField::StartAddress, "start address", 0, 14, 4},
    {DescField::LeadingByteOffset, "leading dimension byte offset", 16, 14, 4},
    {DescField::StrideByteOffset, "stride dimension byte offset", 32, 14, 4},
    {DescField::BaseOffset, "matrix base offset", 49, 3},
    {DescField::Swizzle, "swizzle mode", 62, 2, 0, std::nullopt, kWgmmaSwizzle},
};

constexpr DescriptorField kTcgen05Smem[] = {
    {DescField::StartAddress, "start address", 0, 14, 4},
    {DescField::LeadingByteOffset, "leading dimension byte offset", 16, 14, 4},
    {DescField::StrideByteOffset, "stride dimension byte offset", 32, 14, 4},
    {DescField::Version, "fixed constant 0b001", 46, 3, 0, 1},
    {DescField::BaseOffset, "matrix base offset", 49, 3},
    {DescField::LboMode, "leading dimension stride mode", 52, 1},
    {DescField::FixedZero, "fixed constant 0", 53, 8, 0, 0},
    {DescField::Swizzle, "swizzling mode", 61, 3, 0, std::nullopt, kTcgen05Swizzle},
};

constexpr DescriptorField kTcgen05InstrF16[] = {
    {DescField::SparsitySelector, "sparsity selector", 0, 2},
    {DescField::Sparse, "sparsity", 2, 1},
    {DescField::Saturate, "saturate", 3, 1},
    {DescField::DFormat, "D type", 4, 2, 0, std::nullopt, kF16KindD},
    {DescField::AFormat, "A type", 7, 3, 0, std::nullopt, kF16KindAB},
    {DescField::BFormat, "B type", 10, 3, 0, std::nullopt, kF16KindAB},
    {DescField::NegateA, "negate A", 13, 1},
    {DescField::NegateB, "negate B", 14, 1},
    {DescField::TransposeA, "transpose A", 15, 1},
    {DescField::TransposeB, "transpose B", 16, 1},
    {DescField::N, "N >> 3", 17, 6, 3},
    {DescField::M, "M >> 4", 24, 5, 4},
    {DescField::MaxShift, "maximum shift", 30, 2},
};

constexpr DescriptorFormat kFormats[] = {
    {DescriptorKind::WgmmaSmem, "wgmma shared-memory matrix descriptor", 64, kWgmmaSmem},
    {DescriptorKind::Tcgen05Smem, "tcgen05 shared-memory matrix descriptor", 64, kTcgen05Smem},
    {DescriptorKind::Tcgen05InstrF16, "tcgen05 instruction descriptor (kind::f16)", 32,
     kTcgen05InstrF16},
};

uint64_t maskOf(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

const DescriptorField &fieldOrAbort(const DescriptorFormat &format, DescField field) {
  if (const DescriptorField *f = findField(format, field))
    return *f;
  std::fprintf(stderr, "tilescope: the %s has no field %d\n", format.name, int(field));
  std::abort();
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

std::span<const DescriptorFormat> descriptorFormats() {
  return kFormats;
}

const DescriptorFormat &descriptorFormat(DescriptorKind kind) {
  return kFormats[static_cast<size_t>(kind)];
}

const DescriptorField *findField(const DescriptorFormat &format, DescField field) {
  for (const DescriptorField &f : format.fields)
    if (f.field == field)
      return &f;
  return nullptr;
}

std::string checkFormat(const DescriptorFormat &format) {
  std::string name = format.name;
  if (format.bits != 32 && format.bits != 64)
    return name + ": a descriptor of " + std::to_string(format.bits) + " bits";
  uint64_t used = 0;
  for (size_t i = 0; i < format.fields.size(); ++i) {
    const DescriptorField &f = format.fields[i];
    std::string where = name + ", " + f.name + ": ";
    if (f.width <= 0 || f.offset < 0 || f.offset + f.width > format.bits)
      return where + "bits [" + std::to_string(f.offset) + ", " +
             std::to_string(f.offset + f.width) + ") outside the " + std::to_string(format.bits) +
             "-bit word";
    if (f.unitLog2 < 0 || f.width + f.unitLog2 > 64)
      return where + "a unit of 2^" + std::to_string(f.unitLog2);
    for (size_t j = 0; j < i; ++j)
      if (format.fields[j].field == f.field)
        return where + "a field twice";
    uint64_t bits = maskOf(f.width) << f.offset;
    if (used & bits)
      return where + "bits [" + std::to_string(f.offset) + ", " +
             std::to_string(f.offset + f.width) + ") overlap another field's";
    used |= bits;
    if (f.fixed && (*f.fixed & ~maskOf(f.width)))
      return where + "the fixed code " + std::to_string(*f.fixed) + " is wider than the field";
    for (const FieldCode &c : f.codes)
      if (c.code & ~maskOf(f.width))
        return where + "the code of " + c.name + " is wider than the field";
  }
  return "";
}

uint64_t encodeField(const DescriptorField &f, uint64_t value) {
  uint64_t code = f.fixed ? *f.fixed : (value >> f.unitLog2) & maskOf(f.width);
  return code << f.offset;
}

uint64_t decodeField(const DescriptorField &f, uint64_t word) {
  return ((word >> f.offset) & maskOf(f.width)) << f.unitLog2;
}

bool fieldHolds(const DescriptorField &f, uint64_t value) {
  if (f.fixed)
    return value == *f.fixed;
  return (value & maskOf(f.unitLog2)) == 0 && (value >> f.unitLog2) <= maskOf(f.width);
}

uint64_t packDescriptor(DescriptorKind kind,
                        std::initializer_list<std::pair<DescField, uint64_t>> values) {
  const DescriptorFormat &format = descriptorFormat(kind);
  uint64_t word = 0;
  for (const DescriptorField &f : format.fields)
    if (f.fixed)
      word |= encodeField(f, 0);
  for (auto [field, value] : values)
    word |= encodeField(fieldOrAbort(format, field), value);
  return word;
}

uint64_t unpackDescriptor(DescriptorKind kind, uint64_t word, DescField field) {
  return decodeField(fieldOrAbort(descriptorFormat(kind), field), word);
}

std::optional<uint64_t> fieldCode(DescriptorKind kind, DescField field, std::string_view name) {
  if (const DescriptorField *f = findField(descriptorFormat(kind), field))
    for (const FieldCode &c : f->codes)
      if (name == c.name)
        return c.code;
  return std::nullopt;
}

std::optional<uint64_t> fieldCodeByKey(DescriptorKind kind, DescField field, int64_t key) {
  if (const DescriptorField *f = findField(descriptorFormat(kind), field))
    for (const FieldCode &c : f->codes)
      if (c.key == key)
        return c.code;
  return std::nullopt;
}

std::optional<int64_t> fieldKeyOfCode(DescriptorKind kind, DescField field, uint64_t code) {
  if (const DescriptorField *f = findField(descriptorFormat(kind), field))
    for (const FieldCode &c : f->codes)
      if (c.code == code)
        return c.key;
  return std::nullopt;
}

std::string descriptorHelperCuda(const DescriptorHelper &helper) {
  const DescriptorFormat &format = descriptorFormat(helper.kind);
  std::string word = format.bits == 64 ? "uint64_t" : "uint32_t";
  std::string out = "__device__ __forceinline__ " + word + " " + helper.name + "(";
  for (size_t i = 0; i < helper.params.size(); ++i)
    out += std::string(i ? ", " : "") + helper.params[i].type + " " + helper.params[i].name;
  out += ") {\n  " + word + " d = 0;\n";
  for (const DescriptorField &f : format.fields) {
    const HelperParam *param = nullptr;
    for (const HelperParam &p : helper.params)
      if (p.field == f.field)
        param = &p;
    std::optional<uint64_t> constant;
    for (const auto &[field, value] : helper.constants)
      if (field == f.field)
        constant = value;
    std::string value;
    if (param) {
      // encodeField in C: the value's code in the field's bits. A field at
      // the top of the word needs no mask (the shift to it drops the bits
      // above); an unsigned value is cut below 2^(width + unitLog2) and then
      // divided, a signed one divided (an arithmetic shift) and then cut.
      std::string p = param->name, unit = std::to_string(f.unitLog2);
      bool top = f.offset + f.width == format.bits;
      bool isUnsigned = std::string_view(param->type).rfind("uint", 0) == 0;
      if (top)
        value = f.unitLog2 ? "(" + p + " >> " + unit + ")" : p;
      else if (f.unitLog2 == 0)
        value = "(" + p + " & " + hex(maskOf(f.width)) + ")";
      else if (isUnsigned)
        value = "((" + p + " & " + hex(maskOf(f.width + f.unitLog2)) + ") >> " + unit + ")";
      else
        value = "((" + p + " >> " + unit + ") & " + hex(maskOf(f.width)) + ")";
    } else if (f.fixed || constant) {
      uint64_t code = encodeField(f, constant.value_or(0)) >> f.offset;
      if (code == 0)
        continue;
      value = std::to_string(code);
    } else {
      continue;
    }
    out += "  d |= (" + word + ")" + value + (f.offset ? " << " + std::to_string(f.offset) : "") +
           ";\n";
  }
  out += "  return d;\n}\n";
  return out;
}

} // namespace tilescope
