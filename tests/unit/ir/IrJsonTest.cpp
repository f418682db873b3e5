// The IR as a JSON tree (ir/IrJson.h): exact round trips of every bundled
// kernel and of comments in every place the printer keeps them, mutations
// that come out in the text, and one exact error (path and message) per kind
// of malformed tree.
#include "ir/IrJson.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope;
namespace json = llvm::json;

namespace {

Module parseText(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(text, "t.tile", diag);
  REQUIRE(!diag.hasErrors());
  return m;
}

// The tree through its JSON text and back, as a Python caller hands it over.
json::Value throughText(const json::Value &tree) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << tree;
  auto back = json::parse(os.str());
  REQUIRE(bool(back));
  return std::move(*back);
}

std::string roundTrip(const std::string &text) {
  Module m = parseText(text);
  IrJsonError error;
  auto back = moduleFromJson(throughText(moduleToJson(m)), &error);
  INFO(error.str());
  REQUIRE(back);
  return print(*back);
}

const char *kSmall = R"(// problem: gemm(A, B -> C)
kernel k(A: global f32[M, K], B: global f32[K, N], C: global f32[M, N], eps: f32)
  where M % 16 == 0, N % 16 == 0, K > 0
  launch grid(N / 16, M / 16) threads(256) target(sm_80)
{
  reg acc: f32[1]
  let i = blockIdx.y * 16 + threadIdx.x / 16
  acc[0] = 0.0
  for k in 0 .. K {
    acc[0] = acc[0] + A[i, k] * B[k, 0]
  }
  C[i, 0] = acc[0]
}
)";

// The tree of kSmall with `edit` applied to it, read back.
std::optional<Module> edited(const std::function<void(json::Object &)> &edit, IrJsonError *error) {
  json::Value tree = moduleToJson(parseText(kSmall));
  edit(*tree.getAsObject());
  return moduleFromJson(tree, error);
}

json::Object &kernel0(json::Object &root) {
  return *(*root.getArray("kernels"))[0].getAsObject();
}
json::Array &body0(json::Object &root) {
  return *kernel0(root).getArray("body");
}

IrJsonError errorOf(const std::function<void(json::Object &)> &edit) {
  IrJsonError error;
  auto m = edited(edit, &error);
  CHECK_FALSE(m);
  return error;
}

} // namespace

TEST_CASE("every bundled kernel file prints identically after to_json and from_json") {
  for (const BundledKernelFile &f : bundledKernelFiles()) {
    INFO(f.name);
    std::string text(f.text);
    CHECK(roundTrip(text) == print(parseText(text)));
  }
}

TEST_CASE("comments survive the tree in every place the printer keeps them") {
  const char *text = R"(// before the kernel
// problem: softmax(X -> Y)
kernel k(X: global f32[N], Y: global f32[N])
  launch grid(1) threads(32) target(sm_80)
{  // open
  // before let
  let a = 1  // end of let
  for i in 0 .. 4 step 2 unroll pipelined(2) {  // loop header
    Y[i] = X[i]
    // before the loop's close
  }  // after the loop
  if laneid == 0 {  // then header
    Y[0] = 1.5e-07
  } else if laneid == 1 {
    Y[1] = -2.0
  } else {  // else header
    Y[2] = X[2]
    // before the else close
  }  // after the if
  // end of the body
}

// end of the file
)";
  CHECK(roundTrip(text) == print(parseText(text)));
  CHECK(roundTrip(text).find("// before the else close") != std::string::npos);
}

TEST_CASE("a mutated literal comes out in the text") {
  IrJsonError error;
  auto m = edited(
      [](json::Object &root) {
        // let i = blockIdx.y * 16 + ... : the 16 of the product.
        json::Object &let = *body0(root)[1].getAsObject();
        json::Object &sum = *let.getObject("value");
        (*sum.getObject("lhs")->getObject("rhs"))["int"] = 32;
      },
      &error);
  REQUIRE(m);
  CHECK(print(*m).find("let i = blockIdx.y * 32 + threadIdx.x / 16") != std::string::npos);
}

TEST_CASE("a layout written as a preset or literally reads back") {
  std::string text = R"(kernel k(A: global bf16[M, N])
  launch grid(1) threads(128) target(sm_90a)
{
  reg acc: f32[64, 128] layout(wgmma_acc(64, 128))
  shared As: bf16[4, 128, 64] layout(swizzle(128B, bf16, S[(4, 128, 64):(8192, 64, 1)]))
  shared Bs: bf16[8, 8] layout(swizzle(1, 1, 3, S[(8, 8):(8, 1)] + R[2:64@m] + 3@m))
}
)";
  CHECK(roundTrip(text) == print(parseText(text)));
}

TEST_CASE("malformed trees name the path of the value at fault") {
  IrJsonError e = errorOf([](json::Object &root) { root["kernels"] = json::Array{}; });
  CHECK(e.str() == "$.kernels: a module has at least one kernel");

  e = errorOf([](json::Object &root) { (*kernel0(root).getObject("launch"))["threads"] = "256"; });
  CHECK(e.str() == "$.kernels[0].launch.threads: expected an integer, found a string");

  e = errorOf([](json::Object &root) { kernel0(root)["wheer"] = json::Array{}; });
  CHECK(e.path == "$.kernels[0]");
  CHECK(e.message.find("unknown key 'wheer'") == 0);

  e = errorOf([](json::Object &root) { (*body0(root)[2].getAsObject())["stmt"] = "assign"; });
  CHECK(e.str() == "$.kernels[0].body[2].stmt: unknown statement kind 'assign' (buffer, mbarrier, "
                   "let, for, if, store, call)");

  e = errorOf([](json::Object &root) {
    (*body0(root)[1].getAsObject())["value"] = json::Object{{"int", -3}};
  });
  CHECK(e.path == "$.kernels[0].body[1].value.int");
  CHECK(e.message.find("integer literals are not negative") == 0);

  e = errorOf([](json::Object &root) {
    (*body0(root)[1].getAsObject())["value"] = json::Object{{"var", "for"}};
  });
  CHECK(e.str() == "$.kernels[0].body[1].value.var: 'for' is a reserved word or builtin, not a "
                   "variable name");

  e = errorOf([](json::Object &root) {
    (*body0(root)[1].getAsObject())["value"] = json::Object{{"int", 1}, {"var", "x"}};
  });
  CHECK(e.path == "$.kernels[0].body[1].value");

  e = errorOf([](json::Object &root) {
    (*body0(root)[0].getAsObject())["layout"] =
        json::Object{{"preset", "wgmma_acc"}, {"args", json::Array{64}}};
  });
  CHECK(e.path == "$.kernels[0].body[0].layout.args");
  CHECK(e.message.find("preset wgmma_acc takes 2 argument(s)") == 0);

  e = errorOf([](json::Object &root) {
    (*body0(root)[0].getAsObject())["layout"] = json::Object{
        {"shard", json::Array{json::Object{{"extent", 0}, {"stride", 1}, {"axis", "m"}}}}};
  });
  CHECK(e.path == "$.kernels[0].body[0].layout");

  e = errorOf([](json::Object &root) {
    (*body0(root)[0].getAsObject())["layout"] = json::Object{
        {"shard", json::Array{json::Object{{"extent", 1}, {"stride", 1}, {"axis", "lane"}}}}};
  });
  CHECK(e.str() == "$.kernels[0].body[0].layout.shard[0].axis: unknown axis 'lane'");

  e = errorOf([](json::Object &root) {
    json::Object &loop = *body0(root)[3].getAsObject();
    (*loop.getArray("body"))[0] = json::Array{};
  });
  CHECK(e.str() == "$.kernels[0].body[3].body[0]: expected a statement object, found an array");
}

TEST_CASE("a tree the text form cannot express is refused") {
  // A thread-scope call whose callee starts with a scope's name prints as
  // that scope's call.
  IrJsonError e = errorOf([](json::Object &root) {
    body0(root).push_back(json::Object{
        {"stmt", "call"}, {"scope", ""}, {"callee", "wg.fill"}, {"args", json::Array{}}});
  });
  CHECK(e.path == "$.kernels[0].body[5]");
  CHECK(e.message.find("parses back to a different IR") != std::string::npos);

  e = errorOf([](json::Object &root) {
    json::Value deep = json::Object{{"int", 1}};
    for (int i = 0; i < 500; ++i)
      deep = json::Object{{"unary", "-"}, {"operand", std::move(deep)}};
    (*body0(root)[1].getAsObject())["value"] = std::move(deep);
  });
  CHECK(e.message.find("nest deeper than") != std::string::npos);

  e = errorOf([](json::Object &root) {
    kernel0(root)["comments"] = json::Object{{"before", json::Array{"# not a comment"}}};
  });
  CHECK(e.str() == "$.kernels[0].comments.before[0]: a comment is one line starting with '//'");
}
