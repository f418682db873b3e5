// The copy view's requests, phases and legality: exact wavefronts from the
// one bank model, the verifier's instruction rules on the shared tile.
#include "layoutviz/Copy.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tilescope::viz;
namespace json = llvm::json;

namespace {
json::Object copy(std::string from, std::string to, std::string inst = "", std::string dtype = "",
                  std::string warp = "0", std::string shape = "") {
  CopyRequest r;
  r.shape = std::move(shape);
  r.from = std::move(from);
  r.to = std::move(to);
  r.inst = std::move(inst);
  r.dtype = std::move(dtype);
  r.warp = std::move(warp);
  json::Value v = evaluateCopy(r);
  REQUIRE(v.getAsObject());
  return *v.getAsObject();
}
int64_t integer(const json::Object &o, llvm::StringRef key) {
  return o.getInteger(key).getValueOr(-1);
}
std::vector<std::string> kinds(const json::Object &o, llvm::StringRef key) {
  std::vector<std::string> out;
  if (const json::Array *a = o.getArray(key))
    for (const json::Value &d : *a)
      out.push_back(d.getAsObject()->getString("kind").getValueOr("").str());
  return out;
}
} // namespace

TEST_CASE("wgmma accumulator to shared memory: 8-byte stores, phases of 16 threads") {
  // Row-major f32 rows of 128 bytes: lanes 4g..4g+3 write row g, so the 4
  // rows of a phase land on the same 8 banks: 4-way.
  json::Object plain = copy("wgmma_acc(64, 32)", "S[(64,32):(32,1)]", "tma");
  CHECK(plain.getBoolean("ok") == true);
  CHECK(integer(plain, "vector") == 2);
  CHECK(integer(plain, "bytes") == 8);
  CHECK(plain.getArray("requests")->size() == 8);
  CHECK(integer(plain, "wavefronts") == 64);
  CHECK(integer(plain, "ideal") == 16);
  CHECK(kinds(plain, "legality") == std::vector<std::string>{"banks"});
  // The 128B swizzle halves it, and TMA accepts the tile.
  json::Object swizzled = copy("wgmma_acc(64, 32)", "swizzle(128B, f32, S[(64,32):(32,1)])", "tma");
  CHECK(integer(swizzled, "wavefronts") == 32);
  CHECK(kinds(swizzled, "legality") == std::vector<std::string>{"banks"});
  // Thread 0 moves (0, 0), (0, 1), then the same columns of row 8, ...
  const json::Array *moved = (*swizzled.getArray("moved"))[0].getAsArray();
  REQUIRE(moved->size() >= 4);
  CHECK((*moved)[0].getAsInteger().getValueOr(-1) == 0);
  CHECK((*moved)[1].getAsInteger().getValueOr(-1) == 1);
  CHECK((*moved)[2].getAsInteger().getValueOr(-1) == 8 * 32);
  CHECK((*moved)[3].getAsInteger().getValueOr(-1) == 8 * 32 + 1);
}

TEST_CASE("a tile TMA cannot store is reported by the instruction rules") {
  json::Object wide = copy("wgmma_acc(64, 64)", "smem_swizzle(128, 32, 64, 64)", "tma");
  std::vector<std::string> k = kinds(wide, "legality");
  CHECK(std::count(k.begin(), k.end(), "instruction") == 2);
}

TEST_CASE("ldmatrix.x4 from a 16x16 bf16 tile: the instruction's four phases") {
  json::Object plain = copy("S[(16,16):(16,1)]", "mma_m16n8k16_a()", "ldmatrix.x4", "bf16");
  CHECK(integer(plain, "wavefronts") == 8); // rows 32 bytes apart: 2-way
  CHECK(integer(plain, "ideal") == 4);
  json::Object swizzled =
      copy("swizzle(32B, bf16, S[(16,16):(16,1)])", "mma_m16n8k16_a()", "ldmatrix.x4", "bf16");
  CHECK(integer(swizzled, "wavefronts") == 4);
  CHECK(swizzled.getBoolean("legal") == true);
  CHECK(swizzled.getArray("requests")->size() == 1);
}

TEST_CASE("bad copies are reported, with the column for layout text") {
  json::Object parse = copy("wgmma_acc(64, 3", "S[(64,32):(32,1)]");
  CHECK(parse.getBoolean("ok") == false);
  CHECK(kinds(parse, "diagnostics") == std::vector<std::string>{"from"});
  CHECK(copy("wgmma_acc(64, 32)", "S[(64,32):(32,1)]", "", "", "9").getBoolean("ok") == false);
  CHECK(kinds(copy("S[(64,32):(32,1)]", "S[(64,32):(1,64)]", "", "", "0", "64,32"),
              "diagnostics") == std::vector<std::string>{"copy"});
  CHECK(kinds(copy("wgmma_acc(64, 32)", "S[(64,32):(32,1)]", "ldm"), "diagnostics") ==
        std::vector<std::string>{"inst"});
}

namespace {
json::Object fromGlobal(std::string global, std::string shared = "swizzle(32B, bf16, S[(16,16):(16,1)])") {
  CopyRequest r;
  r.from = std::move(shared);
  r.to = "mma_m16n8k16_a()";
  r.inst = "ldmatrix.x4";
  r.dtype = "bf16";
  r.global = std::move(global);
  json::Value v = evaluateCopy(r);
  REQUIRE(v.getAsObject());
  return *v.getAsObject();
}
std::vector<int64_t> ints(const json::Value *v) {
  std::vector<int64_t> out;
  if (const json::Array *a = v ? v->getAsArray() : nullptr)
    for (const json::Value &x : *a)
      out.push_back(x.getAsInteger().getValueOr(-1));
  return out;
}
} // namespace

TEST_CASE("global -> shared by TMA -> ldmatrix: every element's global offset, sectors, legal") {
  // A 16x16 bf16 tile of a row-major matrix 4096 elements wide: 16 rows of
  // 32 bytes, each in one aligned sector.
  json::Object d = fromGlobal("S[(16,16):(4096,1)]");
  REQUIRE(d.getBoolean("ok") == true);
  const json::Object *g = d.getObject("global");
  REQUIRE(g);
  std::vector<int64_t> slot = ints(g->get("slot"));
  REQUIRE(slot.size() == 256);
  CHECK(slot[0] == 0);
  CHECK(slot[17] == 4097); // element (1, 1)
  CHECK(slot[255] == 15 * 4096 + 15);
  CHECK(ints(g->get("strides")) == std::vector<int64_t>{4096, 1});
  CHECK(integer(*g, "bytes") == 512);
  CHECK(integer(*g, "sectors") == 16);
  CHECK(integer(*g, "idealSectors") == 16);
  CHECK(g->getBoolean("legal") == true);
  CHECK(kinds(*g, "legality").empty());
  // The ldmatrix stage is the same as without the global tile.
  CHECK(integer(d, "wavefronts") == integer(fromGlobal(""), "wavefronts"));
}

TEST_CASE("global -> shared by TMA: a row pitch that is not 16-byte aligned") {
  // Rows 8200 bytes apart: TMA needs global strides in multiples of 16, and
  // rows starting at 8 mod 32 bytes straddle two sectors three times in four.
  json::Object d = fromGlobal("S[(16,16):(4100,1)]");
  const json::Object *g = d.getObject("global");
  REQUIRE(g);
  CHECK(integer(*g, "sectors") == 28);
  CHECK(g->getBoolean("legal") == false);
  REQUIRE(kinds(*g, "legality") == std::vector<std::string>{"tma"});
  std::string message =
      g->getArray("legality")->front().getAsObject()->getString("message").getValueOr("").str();
  CHECK(message.find("global stride 0 of 8200 bytes is not a multiple of 16") != std::string::npos);
}

TEST_CASE("global -> shared by TMA: a transposed tile and a tile that is not a box") {
  json::Object transposed = fromGlobal("S[(16,16):(1,4096)]");
  const json::Object *g = transposed.getObject("global");
  REQUIRE(g);
  CHECK(kinds(*g, "legality") == std::vector<std::string>{"global"});
  CHECK(g->getArray("legality")->front().getAsObject()->getString("message")->startswith(
      "the inner dimension has stride 4096 in global memory"));
  // Not a layout on global elements alone: refused with the reason.
  json::Object bad = fromGlobal("S[(16,16):(1@laneid,1)]");
  CHECK(bad.getBoolean("ok") == false);
  CHECK(kinds(bad, "diagnostics") == std::vector<std::string>{"global"});
}

TEST_CASE("the copy document names registers as PTX does and gives each element's bank") {
  // wgmma accumulator: d0..dN, one element per name.
  json::Object acc = copy("wgmma_acc(64, 32)", "S[(64,32):(32,1)]", "tma");
  const json::Object *naming = acc.getObject("registers");
  REQUIRE(naming);
  CHECK(naming->getString("prefix") == llvm::StringRef("d"));
  CHECK(naming->getInteger("parts").getValueOr(-1) == 1);
  // Element (r, c) of the row-major f32 tile sits at byte 4 (32 r + c): its
  // bank is c (rows of 128 bytes start at bank 0).
  const json::Array *bank = acc.getArray("bank");
  REQUIRE(bank);
  REQUIRE(bank->size() == 64 * 32);
  for (int64_t f : {0, 1, 31, 32, 5 * 32 + 17, 63 * 32 + 31})
    CHECK((*bank)[f].getAsInteger().getValueOr(-1) == f % 32);
  // The mma A fragment filled by ldmatrix: a0..a7. The banks of the
  // 32B-swizzled bf16 tile are those `tilescope layout --at` prints:
  // (1, 0) bank 8, (2, 0) bank 16, (0, 8) bank 4; two bf16 share a bank.
  json::Object a =
      copy("swizzle(32B, bf16, S[(16,16):(16,1)])", "mma_m16n8k16_a()", "ldmatrix.x4", "bf16");
  REQUIRE(a.getObject("registers"));
  CHECK(a.getObject("registers")->getString("prefix") == llvm::StringRef("a"));
  const json::Array *abank = a.getArray("bank");
  REQUIRE(abank);
  auto bankAt = [&](int64_t r, int64_t c) {
    return (*abank)[r * 16 + c].getAsInteger().getValueOr(-1);
  };
  CHECK(bankAt(0, 0) == 0);
  CHECK(bankAt(0, 1) == 0);
  CHECK(bankAt(1, 0) == 8);
  CHECK(bankAt(2, 0) == 16);
  CHECK(bankAt(0, 8) == 4);
}
