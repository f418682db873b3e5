// Exact answers of the visualizer's evaluation document: owners in reading
// order, banks, the preset's own shape, and every kind of diagnostic with its
// location or witness.
#include "layoutviz/Evaluation.h"

#include <doctest/doctest.h>

using namespace tilescope::viz;
namespace json = llvm::json;

namespace {
json::Object run(std::string layout, std::string shape, std::string dtype = "f32",
                 std::string target = "sm_90a") {
  VizRequest r;
  r.layout = std::move(layout);
  r.shape = std::move(shape);
  r.dtype = std::move(dtype);
  r.target = std::move(target);
  json::Value v = evaluate(r);
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
std::vector<std::string> strings(const json::Value *v) {
  std::vector<std::string> out;
  if (const json::Array *a = v ? v->getAsArray() : nullptr)
    for (const json::Value &x : *a)
      out.push_back(x.getAsString().getValueOr("?").str());
  return out;
}
// Diagnostics of one kind and severity.
std::vector<const json::Object *> diags(const json::Object &doc, std::string_view kind,
                                        std::string_view severity = "error") {
  std::vector<const json::Object *> out;
  for (const json::Value &d : *doc.getArray("diagnostics")) {
    const json::Object *o = d.getAsObject();
    if (o->getString("kind") == llvm::StringRef(kind) &&
        o->getString("severity") == llvm::StringRef(severity))
      out.push_back(o);
  }
  return out;
}
// The owners of element f (a slice of the flat array), or its [line, bank].
std::vector<int64_t> ownersOf(const json::Object &doc, int64_t f) {
  int64_t stride = doc.getInteger("ownerStride").getValueOr(0);
  std::vector<int64_t> all = ints(doc.get("owners"));
  return std::vector<int64_t>(all.begin() + f * stride, all.begin() + (f + 1) * stride);
}
std::vector<int64_t> bankOf(const json::Object &doc, int64_t f) {
  std::vector<int64_t> all = ints(doc.get("banks"));
  return {all[2 * f], all[2 * f + 1]};
}
size_t errorCount(const json::Object &doc) {
  size_t n = 0;
  for (const json::Value &d : *doc.getArray("diagnostics"))
    n += d.getAsObject()->getString("severity") == llvm::StringRef("error");
  return n;
}
} // namespace

TEST_CASE("rows on warps, columns on lanes: owners listed warp first") {
  json::Object doc = run("S[(4,8):(1@warpid,1@laneid)]", "4,8");
  CHECK(doc.getBoolean("ok") == true);
  CHECK(strings(doc.get("axes")) == std::vector<std::string>{"warpid", "laneid"});
  CHECK(doc.getString("view") == llvm::StringRef("register"));
  CHECK(doc.getString("scope") == llvm::StringRef("reg"));
  REQUIRE(doc.getArray("owners")->size() == 32 * 2);
  CHECK(ownersOf(doc, 13) == std::vector<int64_t>{1, 5}); // element (1, 5)
  CHECK(errorCount(doc) == 0);
}

TEST_CASE("replicas: every owner of an element, replica digits last") {
  json::Object doc = run("S[4:1@m] + R[2:16@laneid]", "4");
  CHECK(doc.getInteger("replicas") == int64_t{2});
  CHECK(strings(doc.get("axes")) == std::vector<std::string>{"laneid", "m"});
  CHECK(ownersOf(doc, 3) == std::vector<int64_t>{0, 3, 16, 3});
}

TEST_CASE("a parse error keeps its line and column") {
  json::Object doc = run("S[(4,8):(1@warpid,1@lane)]", "4,8");
  CHECK(doc.getBoolean("ok") == false);
  auto parse = diags(doc, "parse");
  REQUIRE(!parse.empty());
  CHECK(parse[0]->getInteger("line") == int64_t{1});
  CHECK(parse[0]->getInteger("column").getValueOr(0) > 1);
}

TEST_CASE("a malformed shape points at the offending character") {
  json::Object doc = run("S[(4,8):(1@warpid,1@laneid)]", "4,,8");
  CHECK(doc.getBoolean("ok") == false);
  auto shape = diags(doc, "shape");
  REQUIRE(shape.size() == 1);
  CHECK(shape[0]->getInteger("column") == int64_t{3});
}

TEST_CASE("a shape with the wrong element count is not admitted") {
  json::Object doc = run("S[(4,8):(1@warpid,1@laneid)]", "4,9");
  CHECK(doc.getBoolean("ok") == false);
  auto shape = diags(doc, "shape");
  REQUIRE(shape.size() == 1);
  CHECK(shape[0]->getString("message")->contains("36 elements"));
  CHECK(shape[0]->getString("message")->contains("places 32"));
}

TEST_CASE("unknown dtype and target are reported, not guessed") {
  json::Object doc = run("S[4:1]", "4", "f33", "sm_70");
  CHECK(doc.getBoolean("ok") == false);
  CHECK(diags(doc, "dtype").size() == 1);
  CHECK(diags(doc, "target").size() == 1);
}

TEST_CASE("two elements on one slot: an alias violation with both as witness") {
  json::Object doc = run("S[(4,8):(1@warpid,0@laneid)]", "4,8");
  CHECK(doc.getBoolean("ok") == true); // evaluated, and drawn, but illegal
  auto alias = diags(doc, "alias");
  REQUIRE(alias.size() == 1);
  const json::Object *witness = alias[0]->getObject("witness");
  REQUIRE(witness);
  std::vector<int64_t> elements = ints(witness->get("elements"));
  REQUIRE(elements.size() == 2);
  // Both witnesses really share their owner.
  CHECK(ownersOf(doc, elements[0]) == ownersOf(doc, elements[1]));
}

TEST_CASE("a lane past 31 is a bounds violation on laneid") {
  json::Object doc = run("S[(2,64):(1@warpid,1@laneid)]", "2,64");
  auto bounds = diags(doc, "bounds");
  REQUIRE(bounds.size() == 1);
  CHECK(bounds[0]->getObject("witness")->getString("axis") == llvm::StringRef("laneid"));
}

TEST_CASE("128B swizzle moves column 0 of rows 0..7 onto banks 0, 4, ..., 28") {
  json::Object doc = run("swizzle(128B, bf16, S[(8,64):(64,1)])", "8,64", "bf16");
  CHECK(doc.getString("view") == llvm::StringRef("shared"));
  REQUIRE(doc.getArray("banks"));
  for (int64_t row = 0; row < 8; ++row)
    CHECK(bankOf(doc, row * 64) == std::vector<int64_t>{row, 4 * row});
  // Unswizzled, the same column is bank 0 on every line.
  json::Object plain = run("S[(8,64):(64,1)]", "8,64", "bf16");
  for (int64_t row = 0; row < 8; ++row)
    CHECK(bankOf(plain, row * 64) == std::vector<int64_t>{row, 0});
}

TEST_CASE("a preset without a shape takes the preset's own") {
  json::Object doc = run("wgmma_acc(64, 128)", "");
  CHECK(doc.getBoolean("ok") == true);
  CHECK(ints(doc.get("shape")) == std::vector<int64_t>{64, 128});
  CHECK(doc.getArray("owners")->size() == 64 * 128 * 3);
  CHECK(doc.getString("preset") == llvm::StringRef("wgmma_acc"));
  CHECK(errorCount(doc) == 0);
}

TEST_CASE("tensor memory on a target without it is a scope error") {
  json::Object doc = run("S[(128,16):(1@TLane,1@TCol)]", "128,16", "f32", "sm_90a");
  CHECK(doc.getString("view") == llvm::StringRef("tmem"));
  CHECK(errorCount(doc) >= 1);
  json::Object ok = run("S[(128,16):(1@TLane,1@TCol)]", "128,16", "f32", "sm_100a");
  CHECK(errorCount(ok) == 0);
}

TEST_CASE("every entry of the preset menu evaluates and is legal") {
  json::Value menu = presetMenu();
  REQUIRE(menu.getAsArray());
  CHECK(menu.getAsArray()->size() >= 8);
  for (const json::Value &item : *menu.getAsArray()) {
    VizRequest r = requestFromJson(*item.getAsObject());
    CAPTURE(r.layout);
    json::Value v = evaluate(r);
    const json::Object &doc = *v.getAsObject();
    CHECK(doc.getBoolean("ok") == true);
    CHECK(errorCount(doc) == 0);
  }
}

TEST_CASE("too many owners to draw is refused with a diagnostic") {
  json::Object doc = run("S[(1024,1024):(1024,1)]", "1024,1024");
  CHECK(doc.getBoolean("ok") == false);
  CHECK(diags(doc, "size").size() == 1);
}

TEST_CASE("without a dtype: the swizzle's element type, else the preset's, else f32") {
  CHECK(run("smem_swizzle(64, 8, 16, 64)", "", "").getString("dtype") == llvm::StringRef("u8"));
  CHECK(run("swizzle(32B, f32, S[(8,8):(8,1)])", "8,8", "").getString("dtype") ==
        llvm::StringRef("f32"));
  CHECK(run("mma_m16n8k16_a()", "", "").getString("dtype") == llvm::StringRef("bf16"));
  CHECK(run("S[(4,8):(1@warpid,1@laneid)]", "4,8", "").getString("dtype") ==
        llvm::StringRef("f32"));
}

TEST_CASE("bytes that are not UTF-8 come back as a parse error, not a crash") {
  json::Object doc = run(std::string("S[\xff\xfe]"), "4");
  CHECK(doc.getBoolean("ok") == false);
  CHECK(!diags(doc, "parse").empty());
}

TEST_CASE("the packed form carries exactly the owners and banks of the JSON document") {
  VizRequest r;
  r.layout = "swizzle(128B, bf16, S[(8,64):(64,1)])";
  r.shape = "8,64";
  r.dtype = "bf16";
  r.scope = "shared";
  json::Object plain = *evaluate(r).getAsObject();
  PackedArrays packed;
  json::Value doc = evaluate(r, packed);
  REQUIRE(packed.used);
  const json::Object &o = *doc.getAsObject();
  CHECK(o.get("owners") == nullptr);
  CHECK(o.get("banks") == nullptr);
  CHECK(o.getInteger("ownersCount") == static_cast<int64_t>(packed.owners.size()));
  CHECK(o.getInteger("banksCount") == static_cast<int64_t>(packed.banks.size()));
  CHECK(std::vector<int64_t>(packed.owners.begin(), packed.owners.end()) ==
        ints(plain.get("owners")));
  CHECK(std::vector<int64_t>(packed.banks.begin(), packed.banks.end()) ==
        ints(plain.get("banks")));
  // Wire form: length, the document, padding to 4 bytes, then int32 LE.
  std::string bytes = packEvaluation(doc, packed);
  auto word = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
  };
  uint32_t length = word(0);
  auto parsed = json::parse(bytes.substr(4, length));
  REQUIRE(bool(parsed));
  CHECK(parsed->getAsObject()->getInteger("ownersCount") == o.getInteger("ownersCount"));
  size_t at = (4 + length + 3) / 4 * 4;
  REQUIRE(bytes.size() == at + 4 * (packed.owners.size() + packed.banks.size()));
  CHECK(static_cast<int32_t>(word(at + 4 * 67)) == packed.owners[67]);
  CHECK(static_cast<int32_t>(word(at + 4 * packed.owners.size() + 4 * 9)) == packed.banks[9]);
}

TEST_CASE("owners beyond 32 bits stay in the JSON document") {
  VizRequest r;
  r.layout = "S[(2,2):(4294967296,1)]";
  r.shape = "2,2";
  r.scope = "global";
  PackedArrays packed;
  json::Value doc = evaluate(r, packed);
  CHECK_FALSE(packed.used);
  CHECK(ints(doc.getAsObject()->get("owners")) == std::vector<int64_t>{0, 1, 4294967296, 4294967297});
}

TEST_CASE("the packed form of a layout without banks has no bank words") {
  // A global layout has no banks: packEvaluation copied the empty array from
  // a null data() (undefined behaviour, UBSan in the browser tests).
  VizRequest r;
  r.layout = "S[(2,2):(2,1)]";
  r.shape = "2,2";
  r.scope = "global";
  PackedArrays packed;
  json::Value doc = evaluate(r, packed);
  REQUIRE(packed.used);
  CHECK(packed.banks.empty());
  std::string bytes = packEvaluation(doc, packed);
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i)
    length |= uint32_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  CHECK(bytes.size() == (4 + length + 3) / 4 * 4 + 4 * packed.owners.size());
  CHECK(packEvaluation(json::Object{}, PackedArrays{}).size() == 8); // "{}" and its padding
}
