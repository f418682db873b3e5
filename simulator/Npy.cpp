#include "simulator/Npy.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace tilescope::npy {

char NpyError::ID = 0;

void NpyError::log(llvm::raw_ostream &os) const {
  os << describeAt(at_, message_);
}

std::string describeAt(const Position &at, const std::string &message) {
  if (at.line == 0)
    return message;
  return std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + message + " (byte " +
         std::to_string(at.offset) + ")";
}

Position positionOf(llvm::ArrayRef<uint8_t> bytes, uint64_t offset) {
  Position at;
  at.offset = offset;
  uint64_t lineStart = 0;
  for (uint64_t i = 0; i < offset && i < bytes.size(); ++i)
    if (bytes[i] == '\n') {
      ++at.line;
      lineStart = i + 1;
    }
  at.column = offset - lineStart + 1;
  return at;
}
std::error_code NpyError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

namespace {
constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct TypeInfo {
  ElementType type;
  std::string_view descr;
  int bytes;
};
constexpr TypeInfo kTypes[] = {
    {ElementType::F32, "<f4", 4}, {ElementType::F16, "<f2", 2}, {ElementType::U16, "<u2", 2},
    {ElementType::U8, "|u1", 1},  {ElementType::I32, "<i4", 4}, {ElementType::U32, "<u4", 4},
};

// An error at byte `offset`; parse() adds its line and column.
llvm::Error fail(uint64_t offset, const llvm::Twine &message) {
  Position at;
  at.offset = offset;
  return llvm::make_error<NpyError>(at, message.str());
}

// A reader of the header's Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
public:
  HeaderParser(std::string_view text, uint64_t base) : text_(text), base_(base) {}

  // Reads the dict; descrAt and shapeAt get the byte offsets of those values.
  llvm::Error parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape,
                    uint64_t &descrAt, uint64_t &shapeAt) {
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    if (!eat('{'))
      return error("the header must start with '{'");
    for (;;) {
      skipSpace();
      if (eat('}'))
        break;
      uint64_t keyAt = pos_;
      std::string key;
      if (auto err = string(key))
        return err;
      skipSpace();
      if (!eat(':'))
        return error("expected ':' after the key '" + key + "'");
      skipSpace();
      bool *seen = key == "descr"           ? &seenDescr
                   : key == "fortran_order" ? &seenFortran
                   : key == "shape"         ? &seenShape
                                            : nullptr;
      if (!seen)
        return fail(base_ + keyAt, "unknown header key '" + key + "'");
      if (*seen)
        return fail(base_ + keyAt, "the header key '" + key + "' appears twice");
      *seen = true;
      if (key == "descr")
        descrAt = base_ + pos_;
      else if (key == "shape")
        shapeAt = base_ + pos_;
      llvm::Error err = key == "descr"           ? string(descr)
                        : key == "fortran_order" ? boolean(fortran)
                                                 : tuple(shape);
      if (err)
        return err;
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat('}'))
        break;
      return error("expected ',' or '}' in the header dict");
    }
    skipSpace();
    if (pos_ != text_.size())
      return error("unexpected text after the header dict");
    if (!seenDescr || !seenFortran || !seenShape)
      return error(std::string("the header lacks the key '") +
                   (!seenDescr     ? "descr"
                    : !seenFortran ? "fortran_order"
                                   : "shape") +
                   "'");
    return llvm::Error::success();
  }

private:
  llvm::Error error(const llvm::Twine &message) { return fail(base_ + pos_, message); }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char ch) {
    if (pos_ < text_.size() && text_[pos_] == ch) {
      ++pos_;
      return true;
    }
    return false;
  }
  llvm::Error string(std::string &out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return error("expected a quoted string");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos)
      return error("unterminated string");
    out = std::string(text_.substr(pos_, end - pos_));
    if (out.find('\\') != std::string::npos)
      return error("escapes in header strings are not supported");
    pos_ = end + 1;
    return llvm::Error::success();
  }
  llvm::Error boolean(bool &out) {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      out = true;
    } else if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      out = false;
    } else {
      return error("expected True or False");
    }
    return llvm::Error::success();
  }
  llvm::Error tuple(std::vector<int64_t> &out) {
    if (!eat('('))
      return error("expected '(' to start the shape");
    for (;;) {
      skipSpace();
      if (eat(')'))
        return llvm::Error::success();
      if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
        return error("expected a non-negative integer in the shape");
      int64_t v = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (v > (int64_t(1) << 40))
          return error("shape dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 longs
        ++pos_;
      out.push_back(v);
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat(')'))
        return llvm::Error::success();
      return error("expected ',' or ')' in the shape");
    }
  }

  std::string_view text_;
  uint64_t base_;
  size_t pos_ = 0;
};

uint32_t readLe(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
} // namespace

std::string_view descr(ElementType t) {
  for (const auto &info : kTypes)
    if (info.type == t)
      return info.descr;
  return "?";
}

int elementBytes(ElementType t) {
  for (const auto &info : kTypes)
    if (info.type == t)
      return info.bytes;
  return 0;
}

int64_t Array::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

uint32_t Array::bitsAt(size_t i) const {
  int bytes = elementBytes(type);
  return readLe(data.data() + i * bytes, bytes);
}

Position Array::elementAt(size_t i) const {
  uint64_t k = std::min<uint64_t>(uint64_t(i) * uint64_t(elementBytes(type)), data.size());
  Position at = dataAt;
  at.offset += k;
  uint64_t lineStart = 0;
  bool newLine = false;
  for (uint64_t b = 0; b < k; ++b)
    if (data[b] == '\n') {
      ++at.line;
      lineStart = b + 1;
      newLine = true;
    }
  at.column = newLine ? k - lineStart + 1 : dataAt.column + k;
  return at;
}

namespace {

llvm::Expected<Array> parseBytes(llvm::ArrayRef<uint8_t> bytes) {
  for (size_t i = 0; i < sizeof(kMagic); ++i) {
    if (i >= bytes.size())
      return fail(bytes.size(), "the file ends inside the magic string (not a .npy file)");
    if (bytes[i] != kMagic[i])
      return fail(i, "bad magic string (not a .npy file)");
  }
  if (bytes.size() < 8)
    return fail(bytes.size(), "the file ends before the format version");
  uint8_t major = bytes[6], minor = bytes[7];
  if (major != 1 && major != 2)
    return fail(6, "unsupported .npy format version " + llvm::Twine(unsigned(major)) + "." +
                       llvm::Twine(unsigned(minor)) + " (1.0 and 2.0 are read)");
  if (minor != 0)
    return fail(7, "unsupported .npy format version " + llvm::Twine(unsigned(major)) + "." +
                       llvm::Twine(unsigned(minor)));
  const size_t lengthBytes = major == 1 ? 2 : 4;
  const size_t headerStart = 8 + lengthBytes;
  if (bytes.size() < headerStart)
    return fail(bytes.size(), "the file ends inside the header length");
  uint64_t headerLength = readLe(bytes.data() + 8, int(lengthBytes));
  if (headerStart + headerLength > bytes.size())
    return fail(8, "header length " + llvm::Twine(headerLength) +
                       " runs past the end of the file (" + llvm::Twine(bytes.size()) + " bytes)");
  std::string_view header(reinterpret_cast<const char *>(bytes.data()) + headerStart, headerLength);
  for (size_t i = 0; i < header.size(); ++i)
    if (static_cast<unsigned char>(header[i]) >= 0x80 || header[i] == 0)
      return fail(headerStart + i, "the header is not ASCII text");
  if (header.empty() || header.back() != '\n')
    return fail(headerStart + headerLength - (header.empty() ? 0 : 1),
                "the header does not end with a newline");

  std::string descrText;
  bool fortran = false;
  Array array;
  uint64_t descrAt = headerStart, shapeAt = headerStart;
  if (auto err = HeaderParser(header, headerStart)
                     .parse(descrText, fortran, array.shape, descrAt, shapeAt))
    return err;
  const TypeInfo *type = nullptr;
  std::string_view d = descrText;
  if (d == "<u1")
    d = "|u1";
  for (const auto &info : kTypes)
    if (info.descr == d)
      type = &info;
  if (!type) {
    std::string why = !descrText.empty() && descrText[0] == '>'
                          ? "big-endian data is not supported"
                          : "supported: <f4 <f2 <u2 |u1 <i4 <u4";
    return fail(descrAt, "unsupported dtype '" + descrText + "' (" + why + ")");
  }
  if (fortran)
    return fail(headerStart, "Fortran-ordered arrays are not supported (save in C order)");
  array.type = type->type;

  uint64_t count = 1;
  for (int64_t dim : array.shape) {
    if (dim != 0 && count > (uint64_t(1) << 40) / uint64_t(dim))
      return fail(shapeAt, "the shape has too many elements");
    count *= uint64_t(dim);
  }
  const uint64_t dataStart = headerStart + headerLength;
  const uint64_t want = count * uint64_t(type->bytes);
  const uint64_t have = bytes.size() - dataStart;
  if (have < want)
    return fail(bytes.size(), "the data ends early: " + llvm::Twine(count) + " elements of " +
                                  llvm::Twine(type->bytes) + " bytes need " + llvm::Twine(want) +
                                  " bytes after the header, the file has " + llvm::Twine(have));
  if (have > want)
    return fail(dataStart + want,
                llvm::Twine(have - want) + " bytes after the last element of the array");
  array.data.assign(bytes.begin() + dataStart, bytes.end());
  array.descrAt = positionOf(bytes, descrAt);
  array.shapeAt = positionOf(bytes, shapeAt);
  array.dataAt = positionOf(bytes, dataStart);
  return array;
}

} // namespace

llvm::Expected<Array> parse(llvm::ArrayRef<uint8_t> bytes) {
  llvm::Expected<Array> array = parseBytes(bytes);
  if (array)
    return array;
  // Place the error: its line and column in these bytes.
  Position at;
  std::string message;
  llvm::handleAllErrors(array.takeError(), [&](const NpyError &e) {
    at = positionOf(bytes, e.offset());
    message = e.what();
  });
  return llvm::make_error<NpyError>(at, std::move(message));
}

llvm::Expected<Array> readFile(const std::string &path) {
  auto buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    Position nowhere;
    nowhere.line = 0;
    return llvm::make_error<NpyError>(nowhere,
                                      "cannot read the file: " + buffer.getError().message());
  }
  const auto *start = reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart());
  return parse(llvm::ArrayRef<uint8_t>(start, (*buffer)->getBufferSize()));
}

std::vector<uint8_t> serialize(const Array &array) {
  std::string header =
      "{'descr': '" + std::string(descr(array.type)) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1)
    header += ",";
  header += "), }";
  // Pad with spaces so that magic + version + length + header is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(uint8_t(header.size() & 0xFF));
  out.push_back(uint8_t(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

llvm::Error writeFile(const std::string &path, const Array &array) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot write %s: %s", path.c_str(), ec.message().c_str());
  std::vector<uint8_t> bytes = serialize(array);
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  os.close();
  if (os.has_error())
    return llvm::createStringError(os.error(), "cannot write %s", path.c_str());
  return llvm::Error::success();
}

Array fromBits(ElementType type, std::vector<int64_t> shape, llvm::ArrayRef<uint32_t> bits) {
  Array array;
  array.type = type;
  array.shape = std::move(shape);
  int bytes = elementBytes(type);
  array.data.resize(bits.size() * bytes);
  for (size_t i = 0; i < bits.size(); ++i)
    for (int b = 0; b < bytes; ++b)
      array.data[i * bytes + b] = uint8_t(bits[i] >> (8 * b));
  return array;
}

} // namespace tilescope::npy
