// .npy reading and writing: round trips, both format versions, and a
// diagnostic with the right place (byte offset, line and column) for each
// kind of bad file.
#include "simulator/Npy.h"

#include <doctest/doctest.h>

#include <string>
#include <tuple>

using namespace tilescope::npy;

namespace {
std::vector<uint8_t> file(uint8_t major, std::string header, std::vector<uint8_t> data = {}) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  size_t len = header.size();
  out.push_back(uint8_t(len));
  out.push_back(uint8_t(len >> 8));
  if (major == 2) {
    out.push_back(0);
    out.push_back(0);
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The error's offset and message, or (-1, "") when parsing succeeds.
std::pair<int64_t, std::string> problem(const std::vector<uint8_t> &bytes) {
  auto parsed = parse(bytes);
  if (parsed)
    return {-1, ""};
  std::pair<int64_t, std::string> result{-2, ""};
  llvm::handleAllErrors(parsed.takeError(), [&](const NpyError &e) {
    result = {int64_t(e.offset()), e.what()};
  });
  return result;
}
} // namespace

TEST_CASE("an array survives serialize and parse") {
  Array a = fromBits(ElementType::U16, {2, 3}, {1, 2, 3, 0x8000, 0xFFFF, 7});
  std::vector<uint8_t> bytes = serialize(a);
  CHECK((bytes.size() - 6 * 2) % 64 == 0);
  auto back = parse(bytes);
  REQUIRE(bool(back));
  CHECK(back->type == ElementType::U16);
  CHECK(back->shape == std::vector<int64_t>{2, 3});
  CHECK(back->bitsAt(3) == 0x8000);
  CHECK(back->bitsAt(4) == 0xFFFF);
}

TEST_CASE("one-dimensional and scalar shapes are written as Python tuples") {
  std::vector<uint8_t> bytes = serialize(fromBits(ElementType::U8, {3}, {1, 2, 3}));
  std::string text(bytes.begin() + 10, bytes.end());
  CHECK(text.find("'shape': (3,)") != std::string::npos);
  bytes = serialize(fromBits(ElementType::F32, {}, {0x3F800000u}));
  text.assign(bytes.begin() + 10, bytes.end());
  CHECK(text.find("'shape': ()") != std::string::npos);
  auto back = parse(bytes);
  REQUIRE(bool(back));
  CHECK(back->elementCount() == 1);
  CHECK(back->bitsAt(0) == 0x3F800000u);
}

TEST_CASE("format version 2.0 and the spellings numpy writes are read") {
  auto v2 = parse(file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }\n",
                       {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40}));
  REQUIRE(bool(v2));
  CHECK(v2->bitsAt(0) == 0x3F800000u);
  CHECK(v2->bitsAt(1) == 0x40000000u);
  auto u1 = parse(
      file(1, "{\"shape\": (2,), \"descr\": \"<u1\", \"fortran_order\": False}   \n", {5, 6}));
  REQUIRE(bool(u1));
  CHECK(u1->type == ElementType::U8);
}

TEST_CASE("bad files are reported at the byte where they go wrong") {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  std::vector<uint8_t> data(8, 0);
  CHECK(problem(file(1, good, data)).first == -1);

  CHECK(problem({0x93, 'N', 'U', 'X'}).first == 3);
  CHECK(problem({0x93, 'N'}).first == 2);
  CHECK(problem(file(3, good, data)) ==
        std::pair<int64_t, std::string>{
            6, "unsupported .npy format version 3.0 (1.0 and 2.0 are read)"});
  auto truncated = file(1, good, data);
  truncated.resize(40);
  CHECK(problem(truncated).first == 8); // header length runs past the end
  CHECK(
      problem(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data)).second ==
      "the header does not end with a newline");
  CHECK(problem(file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", data))
            .second == "unsupported dtype '>f4' (big-endian data is not supported)");
  CHECK(problem(file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", data))
            .second == "unsupported dtype '<f8' (supported: <f4 <f2 <u2 |u1 <i4 <u4)");
  CHECK(
      problem(file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", data)).second ==
      "Fortran-ordered arrays are not supported (save in C order)");
  CHECK(problem(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n",
                     data)) == std::pair<int64_t, std::string>{10 + 56, "unknown header key 'x'"});
  CHECK(problem(file(1, "{'descr': '<f4', 'descr': '<f4', 'shape': (2,), }\n", data)).second ==
        "the header key 'descr' appears twice");
  CHECK(problem(file(1, "{'descr': '<f4', 'shape': (2,), }\n", data)).second ==
        "the header lacks the key 'fortran_order'");
  CHECK(problem(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", data)) ==
        std::pair<int64_t, std::string>{10 + 51, "expected a non-negative integer in the shape"});
  CHECK(
      problem(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, }\n", data)).second ==
      "expected a non-negative integer in the shape");
  CHECK(problem(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999,), }\n",
                     data))
            .second == "shape dimension too large");
  auto shortData = problem(file(1, good, {0, 0, 0}));
  CHECK(shortData.second ==
        "the data ends early: 2 elements of 4 bytes need 8 bytes after the header, the file has 3");
  auto longData = problem(file(1, good, std::vector<uint8_t>(9, 0)));
  CHECK(longData == std::pair<int64_t, std::string>{10 + int64_t(good.size()) + 8,
                                                    "1 bytes after the last element of the array"});
  CHECK(
      problem(file(1, "{'descr': '<f4', 'fortran_order': Fals, 'shape': (2,), }\n", data)).second ==
      "expected True or False");
  CHECK(problem(file(1, std::string("{'descr': '<f4\xff'}\n"), data)).second ==
        "the header is not ASCII text");
}

TEST_CASE("a missing file is an error, not a crash") {
  auto r = readFile("/nonexistent/dir/x.npy");
  CHECK_FALSE(bool(r));
  llvm::consumeError(r.takeError());
}

TEST_CASE("errors name a line and column: the header is line 1, the data follows its newline") {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  auto at = [](const std::vector<uint8_t> &bytes) {
    auto parsed = parse(bytes);
    Position p;
    p.line = 0;
    if (!parsed)
      llvm::handleAllErrors(parsed.takeError(), [&](const NpyError &e) { p = e.position(); });
    return std::tuple{p.line, p.column, p.offset};
  };
  // Byte 5 of the magic string: line 1, column 6.
  std::vector<uint8_t> magic = file(1, good, std::vector<uint8_t>(8, 0));
  magic[5] = 'X';
  CHECK(at(magic) == std::tuple{uint64_t(1), uint64_t(6), uint64_t(5)});
  // A bad shape value inside the header (byte 61): line 1, column 62.
  CHECK(at(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n",
                std::vector<uint8_t>(8, 0))) ==
        std::tuple{uint64_t(1), uint64_t(62), uint64_t(61)});
  // One byte too many after the data: line 2 (after the header's newline),
  // unless the data holds newline bytes of its own.
  uint64_t end = 10 + good.size() + 8;
  CHECK(at(file(1, good, std::vector<uint8_t>(9, 0))) == std::tuple{uint64_t(2), uint64_t(9), end});
  CHECK(at(file(1, good, {0, '\n', 0, 0, 0, 0, '\n', 0, 0})) ==
        std::tuple{uint64_t(4), uint64_t(2), end});
  // The message carries the place: "LINE:COL: what (byte N)".
  auto parsed = parse(magic);
  REQUIRE_FALSE(bool(parsed));
  CHECK(llvm::toString(parsed.takeError()) == "1:6: bad magic string (not a .npy file) (byte 5)");
}

TEST_CASE("an array knows where its descr, shape and elements are in the file") {
  std::vector<uint8_t> bytes =
      file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n",
           {1, 2, 3, 4, '\n', 6, 7, 8, 9, 10, 11, 12});
  auto array = parse(bytes);
  REQUIRE(bool(array));
  CHECK(array->descrAt.offset == 20);
  CHECK(array->descrAt.column == 21);
  CHECK(array->shapeAt.offset == 60);
  CHECK(array->dataAt.line == 2);
  CHECK(array->dataAt.column == 1);
  CHECK(array->elementAt(0).offset == array->dataAt.offset);
  // Element 1's first byte is a newline: element 1 starts on line 2, the
  // element after it on line 3.
  CHECK(array->elementAt(1).line == 2);
  CHECK(array->elementAt(1).column == 5);
  CHECK(array->elementAt(2).line == 3);
  CHECK(array->elementAt(2).column == 4);
}

TEST_CASE("a file that cannot be read has no place") {
  auto r = readFile("/nonexistent/dir/x.npy");
  REQUIRE_FALSE(bool(r));
  llvm::handleAllErrors(r.takeError(), [](const NpyError &e) { CHECK(e.position().line == 0); });
}
