// NumPy .npy files (format versions 1.0 and 2.0): the arrays that `tilescope
// mma` and `tilescope sim` read and write. Little-endian, C order, and only
// the element types tilescope exchanges: '<f4', '<f2', '<u2' (bf16 bits),
// '|u1' (fp8/fp6/fp4 codes), '<i4' and '<u4' (f32 bits).
//
// Reading validates everything (magic, version, header length, the header
// dict, shape, data length) and reports the byte offset of the first problem;
// it never throws or aborts on bad input. Depends on LLVM Support only.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::npy {

enum class ElementType : uint8_t { F32, F16, U16, U8, I32, U32 };

std::string_view descr(ElementType t); // "<f4", ...
int elementBytes(ElementType t);

struct Array {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data; // little-endian elements, C order

  int64_t elementCount() const;
  // Element i widened to 32 bits (raw bits for F32/F16/U16/U8/U32; I32 as
  // two's complement).
  uint32_t bitsAt(size_t i) const;
};

// The problem with a file's bytes: what is wrong and where (byte offset).
class NpyError : public llvm::ErrorInfo<NpyError> {
public:
  static char ID;
  NpyError(uint64_t offset, std::string message) : offset_(offset), message_(std::move(message)) {}
  uint64_t offset() const { return offset_; }
  const std::string &what() const { return message_; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  uint64_t offset_;
  std::string message_;
};

llvm::Expected<Array> parse(llvm::ArrayRef<uint8_t> bytes);
// Reads and parses a file; a file that cannot be read gives an NpyError at offset 0.
llvm::Expected<Array> readFile(const std::string &path);

// The bytes of a version 1.0 file (header padded to a multiple of 64 bytes).
std::vector<uint8_t> serialize(const Array &array);
llvm::Error writeFile(const std::string &path, const Array &array);

// An array of the given type and shape from 32-bit values (narrowed to the
// element width).
Array fromBits(ElementType type, std::vector<int64_t> shape, llvm::ArrayRef<uint32_t> bits);

} // namespace tilescope::npy
