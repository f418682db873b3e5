// NumPy .npy files (format versions 1.0 and 2.0): the arrays that `tilescope
// mma` and `tilescope sim` read and write. Little-endian, C order, and only
// the element types tilescope exchanges: '<f4', '<f2', '<u2' (bf16 bits),
// '|u1' (fp8/fp6/fp4 codes), '<i4' and '<u4' (f32 bits).
//
// Reading validates everything (magic, version, header length, the header
// dict, shape, data length) and reports where the first problem is; it never
// throws or aborts on bad input. A place in the file is given as a line and
// column, as for every other input of tilescope (`file:line:col: error:`):
// lines are counted at newline bytes, so the header (one line of ASCII text
// after the 10 or 12 bytes of magic, version and length) is line 1 in every
// well-formed file, and the byte offset is kept for binary places (the data).
// Depends on LLVM Support only.
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

// A place in a file: its byte offset and, counted at newline bytes, its line
// and column (both from 1). Line 0: no place (the file could not be read).
struct Position {
  uint64_t offset = 0;
  uint64_t line = 1;
  uint64_t column = 1;
};

// Where byte `offset` of `bytes` is (an offset at or past the end is placed
// after the last byte).
Position positionOf(llvm::ArrayRef<uint8_t> bytes, uint64_t offset);

struct Array {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data; // little-endian elements, C order
  // Where the header's 'descr' and 'shape' values and the data start in the
  // file the array was read from (serialize() ignores them).
  Position descrAt, shapeAt, dataAt;

  int64_t elementCount() const;
  // Element i widened to 32 bits (raw bits for F32/F16/U16/U8/U32; I32 as
  // two's complement).
  uint32_t bitsAt(size_t i) const;
  // Where element i starts in the file (from dataAt and the data's bytes).
  Position elementAt(size_t i) const;
};

// The problem with a file's bytes: what is wrong and where. Its message()
// is "LINE:COL: what (byte N)", or "what" for a file that cannot be read.
class NpyError : public llvm::ErrorInfo<NpyError> {
public:
  static char ID;
  NpyError(Position at, std::string message) : at_(at), message_(std::move(message)) {}
  uint64_t offset() const { return at_.offset; }
  const Position &position() const { return at_; }
  const std::string &what() const { return message_; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  Position at_;
  std::string message_;
};

// "LINE:COL: message (byte N)", the tail of a `file:line:col: error:` line
// (`message` alone where `at` is no place).
std::string describeAt(const Position &at, const std::string &message);

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
