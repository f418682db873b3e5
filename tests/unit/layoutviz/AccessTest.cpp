// The bank panel's warp request, costed by the one bank model
// (ir/BankModel.h) that `tilescope layout --banks` uses: phases of 32, 16 or
// 8 threads by access width, and every malformed field reported with the
// CLI's message, never dropped.
#include "ir/LayoutText.h"
#include "layoutviz/Evaluation.h"
#include "verifier/BankConflicts.h"

#include <doctest/doctest.h>
#include <llvm/Support/SourceMgr.h>

using namespace tilescope;
using namespace tilescope::viz;
namespace json = llvm::json;

namespace {
json::Object run(VizRequest r) {
  json::Value v = evaluate(r);
  REQUIRE(v.getAsObject());
  return *v.getAsObject();
}
VizRequest tile(std::string layout, std::string vector = "1", std::string mode = "column") {
  VizRequest r;
  r.layout = std::move(layout);
  r.shape = "32,64";
  r.dtype = "bf16";
  r.access.mode = std::move(mode);
  r.access.vector = std::move(vector);
  return r;
}
int64_t wavefronts(const json::Object &doc) {
  const json::Object *b = doc.getObject("bankAccess");
  REQUIRE(b);
  return b->getInteger("wavefronts").getValueOr(-1);
}
std::string firstMessage(const json::Object &doc, std::string_view kind,
                         int64_t *column = nullptr) {
  for (const json::Value &d : *doc.getArray("diagnostics")) {
    const json::Object *o = d.getAsObject();
    if (o->getString("kind") == llvm::StringRef(kind)) {
      if (column)
        *column = o->getInteger("column").getValueOr(0);
      return o->getString("message").getValueOr("").str();
    }
  }
  return "";
}
} // namespace

TEST_CASE("16-byte column reads are split into phases of 8 threads, as the CLI does") {
  // Row-major: every row's first chunk is banks 0..3, 8 rows per phase: 8 x 4.
  json::Object plain = run(tile("S[(32,64):(64,1)]", "8"));
  CHECK(wavefronts(plain) == 32);
  CHECK(plain.getObject("bankAccess")->getInteger("ideal").getValueOr(-1) == 4);
  CHECK(plain.getObject("bankAccess")->getArray("phases")->size() == 4);
  CHECK(plain.getObject("bankAccess")->getInteger("threadsPerPhase").getValueOr(-1) == 8);
  // The 128B swizzle puts 8 rows' chunks in 8 distinct bank groups: ideal.
  CHECK(wavefronts(run(tile("smem_swizzle(128, 16, 32, 64)", "8"))) == 4);
  // One bf16 per thread: one phase of 32 threads.
  CHECK(wavefronts(run(tile("S[(32,64):(64,1)]"))) == 32);
  CHECK(wavefronts(run(tile("swizzle(128B, bf16, S[(32,64):(64,1)])"))) == 4);
  CHECK(wavefronts(run(tile("S[(32,64):(64,1)]", "1", "row"))) == 1);
}

TEST_CASE("the page's model and `layout --banks lds.128` agree on the same request") {
  // lds.128 reads the tile row-major, 8 bf16 per thread: thread t of request
  // 0 reads row t / 8, chunk t % 8. The same request through the page.
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  auto spec = parseLayoutText("swizzle(128B, bf16, S[(32,64):(64,1)])", "<layout>", diag);
  REQUIRE(spec);
  BufferInfo buffer;
  buffer.dtype = Dtype::bf16;
  BankReport cli =
      analyzeBankConflicts(*findInstructionRule("lds.128"), spec->layout, {32, 64}, buffer);
  VizRequest r = tile("swizzle(128B, bf16, S[(32,64):(64,1)])", "8", "custom");
  std::string custom;
  for (int t = 0; t < 32; ++t)
    custom += std::to_string(t / 8) + "," + std::to_string(8 * (t % 8)) + "; ";
  r.access.custom = custom;
  CHECK(wavefronts(run(r)) == cli.wavefrontsPerRequest);
  r.layout = "S[(32,64):(64,1)]";
  spec = parseLayoutText(r.layout, "<layout>", diag);
  cli = analyzeBankConflicts(*findInstructionRule("lds.128"), spec->layout, {32, 64}, buffer);
  CHECK(wavefronts(run(r)) == cli.wavefrontsPerRequest);
}

TEST_CASE("bad custom accesses are reported with their column, not dropped") {
  VizRequest r = tile("S[(32,64):(64,1)]", "1", "custom");
  int64_t column = 0;
  r.access.custom = "0,0; 1,x; 2,0";
  json::Object doc = run(r);
  CHECK(firstMessage(doc, "access", &column) == "expected an integer, not 'x'");
  CHECK(column == 8);
  CHECK(!doc.getObject("bankAccess"));
  r.access.custom = "0,0; 40,0";
  CHECK(firstMessage(run(r), "access", &column) == "thread 1: (40,0) is outside the tile");
  CHECK(column == 6);
  r.access.custom = "0,0,0";
  CHECK(firstMessage(run(r), "access") == "thread 0: 3 indices, but the tile has rank 2");
  r.access.custom = "";
  CHECK(firstMessage(run(r), "access") == "give one coordinate per thread, e.g. 0,0; 1,0; 2,0");
  // A vector access past the row, misaligned, or wider than 16 bytes.
  r.access.custom = "0,60";
  r.access.vector = "8";
  CHECK(firstMessage(run(r), "access") == "thread 0 would read past the end of row 0");
  r.access.custom = "0,4";
  CHECK(firstMessage(run(r), "access") ==
        "thread 0: a 16-byte access must be 16-byte aligned, but (0, 4) starts at byte 8");
  CHECK(firstMessage(run(tile("S[(32,64):(64,1)]", "16")), "access") ==
        "one shared-memory access moves 1, 2, 4, 8 or 16 bytes per thread; 16 x bf16 is 32 "
        "bytes");
  CHECK(firstMessage(run(tile("S[(32,64):(64,1)]", "-5")), "access") ==
        "elements per thread: elements per thread must be in [1, 16], not -5");
}

TEST_CASE("integer fields typed as text get the CLI's messages") {
  for (auto [text, message] : {std::pair{"-5", "threads per CTA must be in [1, 1024], not -5"},
                               {"", "expected an integer, not ''"},
                               {"abc", "expected an integer, not 'abc'"}}) {
    VizRequest r;
    r.layout = "S[(4,8):(1@warpid,1@laneid)]";
    r.shape = "4,8";
    r.threadsText = text;
    json::Object doc = run(r);
    CHECK(doc.getBoolean("ok") == false);
    CHECK(firstMessage(doc, "threads") == message);
  }
}

TEST_CASE("a preset's argument error is an argument error at the argument's column") {
  VizRequest r;
  r.layout = "wgmma_acc(64, 7)";
  int64_t column = 0;
  json::Object doc = run(r);
  CHECK(firstMessage(doc, "arguments", &column) ==
        "wgmma_acc: wgmma N must be a multiple of 8 in [8, 256], not 7");
  CHECK(column == 15);
  CHECK(firstMessage(doc, "parse").empty());
}
